"""Package-level contracts: public names, docstring examples, and the typed stubs of the compiled modules."""

import doctest
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import freshcore

PUBLIC_MODULES = sorted(
    m.name
    for m in pkgutil.iter_modules(freshcore.__path__, "freshcore.")
    if not m.name.rsplit(".", 1)[1].startswith("_")
)
COMPILED_MODULES = sorted(
    m.name for m in pkgutil.iter_modules(freshcore.__path__, "freshcore.") if m.name.rsplit(".", 1)[1].startswith("_")
    and Path(importlib.util.find_spec(m.name).origin).suffix in (".so", ".pyd")
)


def test_public_names_exist():
    for name in freshcore.__all__:
        assert hasattr(freshcore, name), name
    assert freshcore.__version__


@pytest.mark.parametrize("module", PUBLIC_MODULES + COMPILED_MODULES + ["freshcore"])
def test_doctests(module):
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {module}"


def _public_docstrings():
    """(name, docstring, is_module) of the public modules, their public classes and functions, and the classes'
    public members."""
    for module in [*PUBLIC_MODULES, "freshcore"]:
        mod = importlib.import_module(module)
        yield module, mod.__doc__ or "", True
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"{module}.{name}", inspect.getdoc(obj) or "", False
            if inspect.isclass(obj):
                for member in dir(obj):
                    if not member.startswith("_"):
                        yield f"{module}.{name}.{member}", inspect.getdoc(getattr(obj, member)) or "", False


def test_papers_cited_by_author_with_references():
    """Papers are cited by author and year, never by the file numbers of the project's copies (000..004); a
    public class or function that cites one names it in full in a numpydoc References section."""
    if freshcore.__doc__ is None:
        pytest.skip("docstrings stripped (python -OO)")
    file_number = re.compile(
        r"\b(?:paper|seed|of) 00[0-4]\b|\b00[0-4](?:'s| (?:eq|Section|Appendix|Fig|Theorem|Lemma|Algorithm))", re.I
    )
    author = re.compile(r"\b(?:Avrachenkov|Busa-Fekete|Loguinov)\b")
    references = re.compile(r"^References\n-{10}\n", re.M)
    for name, doc, is_module in _public_docstrings():
        assert not file_number.search(doc), (name, file_number.search(doc))
        if not is_module and author.search(doc):
            assert references.search(doc), f"{name} cites a paper without a References section"


def test_compiled_modules_present():
    assert COMPILED_MODULES, "no compiled extension found in the installed package"


@pytest.mark.developer
def test_stubs_match_runtime(tmp_path):
    """Every compiled module's ``.pyi`` stub matches the module (one ``mypy.stubtest`` call for all of them)."""
    pytest.importorskip("mypy")
    for module in COMPILED_MODULES:
        stub = Path(importlib.util.find_spec(module).origin).parent / (module.rsplit(".", 1)[1] + ".pyi")
        assert stub.exists(), f"{stub.name} is missing"
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", *COMPILED_MODULES, "--ignore-disjoint-bases",
         "--mypy-config-file", "/dev/null"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
