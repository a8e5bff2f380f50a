"""The README stays true: its tour runs, and its two set-up commands are the ones CI runs."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.fixture(scope="module")
def readme():
    if not README.exists():
        pytest.skip("README.md is not beside the tests (installed-wheel run)")
    return README.read_text()


def test_readme_tour_runs(readme, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the tour saves a scheduler to the current directory
    code = re.search(r"## A tour\n\n```python\n(.*?)```", readme, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})


def test_readme_opens_with_the_two_commands(readme):
    head = readme[: readme.index("## A tour")]
    assert "freshcore demo" in re.search(r"<!-- ci:demo -->(.*?)<!-- /ci:demo -->", head, re.S).group(1)
    assert "pytest" in re.search(r"<!-- ci:test -->(.*?)<!-- /ci:test -->", head, re.S).group(1)
