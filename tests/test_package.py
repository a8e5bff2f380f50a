"""Package-level contracts: public names, docstring examples, and the typed stubs of the compiled modules."""

import doctest
import importlib
import pkgutil
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
