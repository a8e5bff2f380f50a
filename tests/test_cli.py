import io
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, seed
from hypothesis import strategies as st
from scipy import stats

from freshcore.cli import build_parser, main, synthetic_signals, synthetic_web

_NAMES = ("ncis", "greedy", "lds", "round-robin", "nutch")
_ROW = re.compile(r"^  (\S.*?)\s{2,}(\d\.\d{4})(?:\s+(\d\.\d{4})\s+(\d+)\s+([\d,]+))?$")


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
    assert main(["demo", "--pages", "2000", "--epochs", "10", "-q", "--no-schedule", "--method", method], out=buf) == 0
    rows = _table(buf.getvalue())
    assert len(rows) >= 4
    _, uniform, adaptive, optimum, err = rows.T
    # the adaptive rates beat uniform crawling, never beat the optimum, and the estimation error falls
    assert np.all(adaptive > uniform)
    assert np.all(adaptive <= optimum + 1e-12)
    assert adaptive[-1] > adaptive[0]
    assert err[-1] < err[0]
    assert optimum[-1] - adaptive[-1] < 0.02


def _schedule_table(text):
    """Rows of the scheduling table: label -> (accuracy, se, crawls, decisions/s); analytic rows -> (accuracy,)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["policy", "accuracy", "±"])
    rows = {}
    for line in lines[start + 1:]:
        m = _ROW.match(line)
        if m is None:
            break
        label, acc, se, crawls, speed = m.groups()
        full = (float(acc), float(se), int(crawls), float(speed.replace(",", ""))) if se is not None else None
        rows[label] = (float(acc),) if full is None else full
    return rows


def _without_timings(text):
    """The output without its wall-clock figures (total time, decisions per second)."""
    keep = [line for line in text.splitlines() if "done in" not in line]
    return "\n".join(line.rsplit(None, 1)[0] if _ROW.match(line) and _ROW.match(line).group(5) else line
                     for line in keep)


def test_demo_is_reproducible_and_seeded():
    a, b, c = io.StringIO(), io.StringIO(), io.StringIO()
    main(["demo", "--pages", "300", "--epochs", "3", "-q", "--seed", "4"], out=a)
    main(["demo", "--pages", "300", "--epochs", "3", "-q", "--seed", "4"], out=b)
    main(["demo", "--pages", "300", "--epochs", "3", "-q", "--seed", "5"], out=c)
    assert "scheduling:" in a.getvalue()
    assert _without_timings(a.getvalue()) == _without_timings(b.getvalue())
    assert _without_timings(a.getvalue()) != _without_timings(c.getvalue())
    # the scheduling table alone differs too: the signals and the simulated events follow the seed
    assert _schedule_table(a.getvalue()) != _schedule_table(c.getvalue())


def test_scheduling_table_shows_every_policy_beside_the_optimum():
    buf = io.StringIO()
    assert main(["demo", "--pages", "500", "--epochs", "5", "-q"], out=buf) == 0
    rows = _schedule_table(buf.getvalue())
    labels = ["GREEDY-NCIS (Scheduler)", "GREEDY (no signals)", "LDS (optimum's rates)", "round robin",
              "Nutch adaptive"]
    assert list(rows) == ["optimum with signals (analytic)", "optimum, no signals (analytic)", *labels]
    (optimum,), (blind,) = rows["optimum with signals (analytic)"], rows["optimum, no signals (analytic)"]
    assert 0 < blind < optimum < 1  # the signals are worth something on this web
    # bandwidth 100 crawls/day for 40 days: every policy spends the whole budget, at a measured speed
    assert all(rows[k][2] == 4000 and rows[k][3] > 0 for k in labels)
    ncis, rr = rows["GREEDY-NCIS (Scheduler)"], rows["round robin"]
    # NCIS beats round robin by a clear margin, many standard errors wide
    assert ncis[0] - rr[0] > 0.1
    assert ncis[0] - rr[0] > 5 * np.hypot(ncis[1], rr[1])
    # and no policy beats the continuous optimum with signals (an upper bound for any policy at this budget)
    assert all(rows[k][0] < optimum + 3 * rows[k][1] for k in labels)


def test_policies_option_picks_the_rows_in_order():
    buf = io.StringIO()
    assert main(["demo", "--pages", "200", "--epochs", "2", "-q", "--policies", "nutch, NCIS"], out=buf) == 0
    rows = _schedule_table(buf.getvalue())
    assert list(rows)[2:] == ["Nutch adaptive", "GREEDY-NCIS (Scheduler)"]


@seed(20261122)
@given(st.lists(st.sampled_from(_NAMES), min_size=1, unique=True))
def test_policies_option_parses_any_list(names):
    args = build_parser().parse_args(["demo", "--policies", ",".join(names)])
    assert args.policies == tuple(names)


def test_no_schedule_skips_the_stage():
    buf = io.StringIO()
    assert main(["demo", "--pages", "200", "--epochs", "2", "-q", "--no-schedule"], out=buf) == 0
    text = buf.getvalue()
    assert "weighted freshness" in text and "periodic crawling" in text
    assert "scheduling" not in text and "GREEDY" not in text
    assert build_parser().parse_args(["demo"]).no_schedule is False


def test_horizon_defaults_and_scales_the_crawls():
    assert build_parser().parse_args(["demo"]).horizon == 40.0
    buf = io.StringIO()
    main(["demo", "--pages", "200", "--epochs", "2", "-q", "--policies", "round-robin", "--horizon", "2.5"], out=buf)
    assert _schedule_table(buf.getvalue())["round robin"][2] == 100  # 40 crawls/day for 2.5 days


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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--horizon", "0"], "argument --horizon: expected a finite number > 0"),
        (["demo", "--horizon", "-3"], "argument --horizon: expected a finite number > 0"),
        (["demo", "--horizon", "inf"], "argument --horizon: expected a finite number > 0"),
        (["demo", "--horizon", "nan"], "argument --horizon: expected a finite number > 0"),
        (["demo", "--horizon", "x"], "argument --horizon: expected a number, got 'x'"),
        (["demo", "--policies", "ncis,foo"], "argument --policies: unknown policy 'foo'"),
        (["demo", "--policies", ""], "argument --policies: unknown policy ''"),
        (["demo", "--policies", "ncis,"], "argument --policies: unknown policy ''"),
        (["demo", "--policies", "lds,LDS"], "argument --policies: a policy is listed twice"),
        (["demo", "--no-schedule=yes"], "argument --no-schedule: ignored explicit argument 'yes'"),
    ],
)
def test_scheduling_options_bad_values(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_synthetic_signals_documented_laws():
    recall, false_rate = synthetic_signals(20000, rng=3)
    assert recall.shape == false_rate.shape == (20000,)
    assert stats.kstest(recall, stats.beta(0.25, 0.25).cdf).pvalue > 1e-3
    assert stats.kstest(false_rate, stats.uniform(0.1, 0.5).cdf).pvalue > 1e-3
    again = synthetic_signals(20000, rng=3)
    assert np.array_equal(recall, again[0]) and np.array_equal(false_rate, again[1])
    assert not np.array_equal(recall, synthetic_signals(20000, rng=4)[0])
    # the demo's streams are independent: its signals are not the uniforms behind its change rates
    recall = synthetic_signals(20000, np.random.default_rng([3, 1]))[0]
    delta, _ = synthetic_web(20000, np.random.default_rng(3))
    assert abs(stats.spearmanr(recall, delta).statistic) < 0.05


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"n_pages": -1}, ValueError, "The 'n_pages' parameter of synthetic_signals must be an integer >= 0"),
        ({"n_pages": 2.5}, TypeError, "The 'n_pages' parameter of synthetic_signals"),
        ({"n_pages": 3, "rng": -1}, ValueError,
         "The 'rng' parameter of synthetic_signals must be None, an int seed >= 0"),
        ({"n_pages": 3, "rng": "0"}, TypeError, "The 'rng' parameter of synthetic_signals"),
    ],
)
def test_synthetic_signals_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        synthetic_signals(**kwargs)


def test_synthetic_web_documented_ranges():
    delta, w = synthetic_web(20000, rng=3)
    assert delta.min() >= 0.02 and delta.max() <= 5.0
    assert w.min() > 0 and abs(w.sum() - 1) < 1e-12


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "freshcore", "demo", "--pages", "200", "--epochs", "2", "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "weighted freshness" in proc.stdout
    assert "GREEDY-NCIS (Scheduler)" in proc.stdout
