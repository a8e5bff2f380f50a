import io
import subprocess
import sys

import numpy as np
import pytest

from freshcore.cli import main, synthetic_web


def _table(text):
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[0].isdigit():
            rows.append([float(x) for x in parts])
    return np.array(rows)


@pytest.mark.parametrize("method", ["mle", "lln", "sa", "sam"])
def test_demo_learns_towards_the_optimum(method):
    buf = io.StringIO()
    assert main(["demo", "--pages", "2000", "--epochs", "10", "-q", "--method", method], out=buf) == 0
    rows = _table(buf.getvalue())
    assert len(rows) >= 4
    epoch, uniform, adaptive, optimum, err = rows.T
    # the adaptive rates beat uniform crawling, never beat the optimum, and the estimation error falls
    assert np.all(adaptive > uniform)
    assert np.all(adaptive <= optimum + 1e-12)
    assert adaptive[-1] > adaptive[0]
    assert err[-1] < err[0]
    assert optimum[-1] - adaptive[-1] < 0.02


def test_demo_is_reproducible_and_seeded():
    a, b, c = io.StringIO(), io.StringIO(), io.StringIO()
    main(["demo", "--pages", "300", "--epochs", "3", "-q", "--seed", "4"], out=a)
    main(["demo", "--pages", "300", "--epochs", "3", "-q", "--seed", "4"], out=b)
    main(["demo", "--pages", "300", "--epochs", "3", "-q", "--seed", "5"], out=c)
    strip = lambda s: "\n".join(line for line in s.splitlines() if "done in" not in line)  # noqa: E731
    assert strip(a.getvalue()) == strip(b.getvalue())
    assert strip(a.getvalue()) != strip(c.getvalue())


@pytest.mark.parametrize(
    "argv",
    [["demo", "--pages", "0"], ["demo", "--pages", "x"], ["demo", "--bandwidth", "-1"], ["demo", "--method", "nope"],
     ["demo", "--bandwidth", "nan"]],
)
def test_demo_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_synthetic_web_documented_ranges():
    delta, w = synthetic_web(20000, seed=3)
    assert delta.min() >= 0.02 and delta.max() <= 5.0
    assert w.min() > 0 and abs(w.sum() - 1) < 1e-12


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "freshcore", "demo", "--pages", "200", "--epochs", "2", "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "weighted freshness" in proc.stdout
