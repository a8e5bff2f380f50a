"""The example scripts run and print their tables (their figures are quoted in their docstrings)."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py")) if EXAMPLES.exists() else []


@pytest.mark.skipif(not SCRIPTS, reason="examples/ is not beside the tests (installed-wheel run)")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_example_runs(script):
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) >= 3
