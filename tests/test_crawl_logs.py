"""Ragged crawl logs in (freshcore.crawl_logs): intervals per page, estimates with confidence intervals."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore.crawl_logs import LogError, LogRates, SingleCrawlWarning, estimate_log_rates, log_intervals
from freshcore.mle import mle_rates, moment_rates
from freshcore.synthetic_logs import simulate_crawls


def long_log(changed, intervals, rng, start=None):
    """A rectangular (pages x crawls) log as long-format rows in random order: page keys 'p<i>', times the
    cumulative sums of the intervals after a first crawl at ``start`` (0 by default)."""
    n, k = changed.shape
    t0 = np.zeros(n) if start is None else start
    times = np.c_[t0, t0[:, None] + np.cumsum(intervals, axis=1)]
    flags = np.c_[rng.integers(0, 2, n), changed]  # (the first crawl's flag is not used)
    pages = np.repeat(np.array([f"p{i:03d}" for i in range(n)]), k + 1)
    order = rng.permutation(n * (k + 1))
    return pages[order], times.ravel()[order], flags.ravel()[order]


def test_rectangular_log_gives_mle_rates_bit_for_bit():
    """Integer times: the derived intervals are the given ones exactly, so the estimates are mle_rates'."""
    rng = np.random.default_rng(1)
    changed, tau = simulate_crawls(rng.uniform(0.001, 0.05, 40), 0.02, 60, rng=rng)
    tau = np.maximum(np.round(tau), 1.0)  # whole seconds
    pages, times, flags = long_log(changed, tau, rng)
    r = estimate_log_rates(pages=pages, times=times, changed=flags)
    want, clipped = mle_rates(changed, tau, return_clipped=True)
    assert r.page.tolist() == [f"p{i:03d}" for i in range(40)]
    np.testing.assert_array_equal(r.change_rate, want)
    np.testing.assert_array_equal(r.clipped, clipped)
    np.testing.assert_array_equal(r.n_intervals, 60)
    np.testing.assert_array_equal(r.n_changes, changed.sum(axis=1))
    mm = estimate_log_rates(pages=pages, times=times, changed=flags, method="mm")
    np.testing.assert_array_equal(mm.change_rate, moment_rates(changed, tau))
    assert np.isnan(mm.ci_low).all() and np.isnan(mm.ci_high).all()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_ragged_pages_each_get_their_own_mle(seed):
    """Pages with 1 to 30 crawls at irregular times, rows shuffled: each page's estimate is mle_rates of its
    own intervals (in time order, the same bits), its counts those of its intervals."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    rows = []
    for p in range(n):
        m = int(rng.integers(1, 31))
        t = np.sort(rng.choice(10_000, size=m, replace=False)).astype(float)
        rows += [(p * 7, ti, int(rng.integers(0, 2))) for ti in t]
    order = rng.permutation(len(rows))
    pages, times, flags = (np.array(col) for col in zip(*[rows[i] for i in order]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingleCrawlWarning)
        r = estimate_log_rates(pages=pages, times=times, changed=flags)
    for k, key in enumerate(r.page):
        mine = sorted((t, f) for p, t, f in rows if p == key)
        tau = np.diff([t for t, _ in mine])
        c = np.array([f for _, f in mine][1:], dtype=np.uint8)
        assert r.n_intervals[k] == len(tau) and r.n_changes[k] == c.sum()
        if len(tau) == 0:
            assert np.isnan(r.change_rate[k])
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want, clipped = mle_rates(c, tau, return_clipped=True)
            if clipped:  # the cap 1000/mean(tau): its last bit depends on the order of the sum
                assert r.clipped[k] and r.change_rate[k] == pytest.approx(want, rel=1e-14)
            else:
                assert r.change_rate[k] == want


def test_dataframe_in_dataframe_out():
    df = pd.DataFrame({"url": ["b", "a", "a", "b", "a"], "time": [0.0, 0.0, 1.0, 2.0, 2.0],
                       "changed": [False, False, True, True, False], "extra": 1})
    out = estimate_log_rates(df)
    assert isinstance(out, pd.DataFrame)
    assert out.index.name == "url" and out.index.tolist() == ["a", "b"]
    assert list(out.columns) == ["change_rate", "ci_low", "ci_high", "n_intervals", "n_changes", "clipped"]
    assert out.loc["a", "change_rate"] == pytest.approx(np.log(2.0), rel=1e-15)
    assert out.loc["b", "clipped"] and out.loc["b", "ci_high"] == np.inf
    renamed = df.rename(columns={"url": "page_id", "time": "ts", "changed": "modified"})
    again = estimate_log_rates(renamed, page_column="page_id", time_column="ts", changed_column="modified")
    assert again.index.name == "page_id"
    np.testing.assert_array_equal(again.to_numpy(), out.to_numpy())
    with pytest.raises(ValueError, match=r"^estimate_log_rates: the log has no time column 'time' \(its columns: "
                                         r"'page_id', 'ts', 'modified', 'extra'\); name it with time_column=\.$"):
        estimate_log_rates(renamed, page_column="page_id")


@pytest.mark.parametrize("form", ["datetime64", "iso", "pandas", "timedelta"])
def test_timestamps_give_rates_per_unit(form):
    """Three crawls a day apart: rates per day by default, per hour with unit="hour" (24 times smaller)."""
    base = np.array(["2026-01-01T00:00", "2026-01-02T00:00", "2026-01-03T00:00"], dtype="datetime64[ns]")
    times = {"datetime64": base, "iso": base.astype(str).tolist(), "pandas": pd.Series(pd.to_datetime(base)),
             "timedelta": base - base[0]}[form]
    day = estimate_log_rates(pages=[9, 9, 9], times=times, changed=[0, 1, 0])
    hour = estimate_log_rates(pages=[9, 9, 9], times=times, changed=[0, 1, 0], unit="hour")
    td = estimate_log_rates(pages=[9, 9, 9], times=times, changed=[0, 1, 0], unit=np.timedelta64(1, "h"))
    assert day.change_rate[0] == pytest.approx(np.log(2.0), rel=1e-15)
    assert hour.change_rate[0] == pytest.approx(np.log(2.0) / 24, rel=1e-15)
    assert td.change_rate[0] == hour.change_rate[0]


def test_confidence_intervals_cover_the_true_rate():
    """2000 pages at Delta = 0.3, 100 irregular crawls each: the 95% intervals cover 0.3 about 95% of the time
    (binomial standard error 0.5%), and the 80% ones about 80%."""
    rng = np.random.default_rng(11)
    changed, tau = simulate_crawls(np.full(2000, 0.3), 1.0, 100, schedule="jittered", jitter=0.9, rng=rng)
    pages, times, flags = long_log(changed, tau, rng)
    for level, lo, hi in ((0.95, 0.935, 0.965), (0.8, 0.78, 0.82)):
        r = estimate_log_rates(pages=pages, times=times, changed=flags, confidence=level)
        covered = np.mean((r.ci_low <= 0.3) & (0.3 <= r.ci_high))
        assert lo <= covered <= hi, covered


def test_intervals_at_the_boundaries():
    """No change seen: [0, z^2/(2 S0)] (likelihood ratio); a change every time: [lower, inf] with
    l(lower) = -z^2/2; a page crawled once: NaN, with a warning."""
    with pytest.warns(SingleCrawlWarning, match=r"^estimate_log_rates: 1 page\(s\) \(first: 'once'\) were crawled "
                                                r"once: no interval, so no estimate \(NaN\)\.$"):
        r = estimate_log_rates(pages=["none"] * 3 + ["every"] * 3 + ["once"], times=[0, 1, 3, 0, 1, 3, 5],
                               changed=[0, 0, 0, 0, 1, 1, 1])
    z2 = 1.959963984540054**2
    k = {p: i for i, p in enumerate(r.page)}
    assert r.change_rate[k["none"]] == 0.0 and r.ci_low[k["none"]] == 0.0
    assert r.ci_high[k["none"]] == pytest.approx(z2 / (2 * 3.0), rel=1e-12)
    lower = r.ci_low[k["every"]]
    assert np.log(-np.expm1(-lower * np.array([1.0, 2.0]))).sum() == pytest.approx(-z2 / 2, rel=1e-9)
    assert r.clipped[k["every"]] and r.ci_high[k["every"]] == np.inf
    assert np.isnan([r.change_rate[k["once"]], r.ci_low[k["once"]], r.ci_high[k["once"]]]).all()
    assert r.n_intervals[k["once"]] == 0


def test_log_intervals_layout():
    page, starts, tau, c = log_intervals(["x", "y", "x", "x"], [5.0, 1.0, 1.0, 2.0], [1, 1, 0, 1])
    assert page.tolist() == ["x", "y"]
    assert starts.tolist() == [0, 2, 2]
    assert tau.tolist() == [1.0, 3.0] and c.tolist() == [1, 1]


@pytest.mark.parametrize(
    ("kwargs", "exc", "message"),
    [
        (dict(pages=["a", "a"], times=[1.0, 1.0], changed=[0, 1]), ValueError,
         r"^estimate_log_rates: page 'a' has two crawls at time 1\.0 \(rows 0 and 1\); drop or merge them\.$"),
        (dict(pages=["a", "a"], times=[1.0, np.nan], changed=[0, 1]), ValueError,
         r"^The 'times' of estimate_log_rates must be finite; row 1 is nan\.$"),
        (dict(pages=["a", "a"], times=["2026-01-01", "yesterday"], changed=[0, 1]), ValueError,
         r"^The 'times' of estimate_log_rates must be numbers or timestamps; row 1 is 'yesterday', which is "
         r"neither\.$"),
        (dict(pages=["a", "a"], times=np.array(["2026-01-01", "NaT"], dtype="datetime64[s]"), changed=[0, 1]),
         ValueError, r"^The 'times' of estimate_log_rates must not be missing; row 1 is NaT\.$"),
        (dict(pages=["a", None], times=[0.0, 1.0], changed=[0, 1]), ValueError,
         r"^The 'pages' of estimate_log_rates must not be missing; row 1 is None\.$"),
        (dict(pages=["a", "a"], times=[0.0, 1.0], changed=[0, 2]), LogError,
         r"^The 'changed' of estimate_log_rates must be 0/1 \(or False/True\); row 1 is 2\.$"),
        (dict(pages=["a", "a"], times=[0.0, 1.0], changed=[0, "yes"]), LogError,
         r"^The 'changed' of estimate_log_rates must be 0/1 \(or False/True\); row 1 is 'yes'\.$"),
        (dict(pages=["a", "a"], times=[0.0, 1.0, 2.0], changed=[0, 1]), ValueError,
         r"^The columns of estimate_log_rates must have the same length: pages has 2, times 3, changed 2\.$"),
        (dict(pages=[], times=[], changed=[]), ValueError, r"^estimate_log_rates: the log is empty\.$"),
        (dict(pages=["a", "a"], times=[0.0, 1.0], changed=[0, 1], unit="day"), ValueError,
         r"'unit' parameter of estimate_log_rates applies to timestamps"),
        (dict(pages=["a", "a"], times=np.array([0, 1], dtype="datetime64[D]"), changed=[0, 1], unit="week"),
         ValueError, r"'unit' parameter of estimate_log_rates must be one of 'day', 'hour', 'minute', 'second'"),
        (dict(pages=["a", "a"], times=[0.0, 1.0], changed=[0, 1], confidence=1.0), ValueError, "confidence"),
        (dict(pages=["a", "a"], times=[0.0, 1.0], changed=[0, 1], method="lln"), ValueError,
         r"'method' parameter of estimate_log_rates must be one of 'mle', 'mm'"),
        (dict(pages=["a", "a"], times=[0.0, 1.0]), ValueError,
         r"^estimate_log_rates needs a DataFrame or all of pages=, times= and changed= \(missing: changed\)\.$"),
    ],
)
def test_bad_logs_are_refused_by_name(kwargs, exc, message):
    with pytest.raises(exc, match=message) as info:
        estimate_log_rates(**kwargs)
    if "row" in message:  # a LogError says where: the row, and the field (for a file's line and column)
        assert isinstance(info.value, LogError) and info.value.row == 1
        assert info.value.field in message.replace("pages", "page").replace("times", "time") or \
            (info.value.field == "time" and "two crawls" in message)


def test_log_must_be_a_frame_and_not_both():
    with pytest.raises(TypeError, match=r"'log' parameter of estimate_log_rates must be a pandas DataFrame"):
        estimate_log_rates([["a", 0.0, 1]])
    df = pd.DataFrame({"url": ["a", "a"], "time": [0.0, 1.0], "changed": [0, 1]})
    with pytest.raises(ValueError, match="either a DataFrame or pages="):
        estimate_log_rates(df, pages=["a"])


def test_log_rates_to_frame_round_trip():
    r = estimate_log_rates(pages=[3, 3, 3, 1, 1], times=[0.0, 1.0, 2.0, 0.0, 1.0], changed=[0, 1, 0, 0, 0])
    assert isinstance(r, LogRates) and len(r) == 2
    f = r.to_frame("id")
    assert f.index.tolist() == [1, 3] and f.index.name == "id"
    np.testing.assert_array_equal(f["change_rate"].to_numpy(), r.change_rate)


def test_chunks_give_the_same_estimates(tmp_path):
    """A log read in chunks (pandas.read_csv(chunksize=...)) gives what the whole log gives, to the bit; only
    one chunk of the log is in memory at a time."""
    rng = np.random.default_rng(4)
    changed, tau = simulate_crawls(rng.uniform(0.1, 3.0, 30), 1.0, 40, rng=rng)
    pages, times, flags = long_log(changed, tau, rng, start=rng.uniform(0, 5, 30))
    df = pd.DataFrame({"url": pages, "time": times, "changed": flags})
    path = tmp_path / "log.csv"
    df.to_csv(path, index=False)
    whole = estimate_log_rates(pd.read_csv(path))
    for size in (1, 7, 100, 5000):
        chunked = estimate_log_rates(pd.read_csv(path, chunksize=size))
        pd.testing.assert_frame_equal(chunked, whole)
    stamps = df.assign(time=pd.to_datetime(df["time"], unit="D"))
    mixed = [stamps.iloc[:10], df.iloc[10:]]
    with pytest.raises(ValueError, match=r"^estimate_log_rates: the times from row 10 on are numbers, those before "
                                         r"dates\.$"):
        estimate_log_rates(mixed)
    with pytest.raises(TypeError, match=r"its chunk 1 is a list\.$"):
        estimate_log_rates([df, [1, 2]])
    with pytest.raises(ValueError, match=r"^estimate_log_rates: the log is empty\.$"):
        estimate_log_rates(iter([]))
    with pytest.raises(ValueError, match=r"'times' of estimate_log_rates must be finite; row 12 is nan\.$"):
        estimate_log_rates([df.iloc[:10], df.iloc[10:].assign(time=np.where(np.arange(len(df) - 10) == 2, np.nan,
                                                                            df["time"].iloc[10:]))])


def test_signal_counts_give_recall_and_false_rate(tmp_path):
    """A log with the signals received before each crawl: each page's recall and false-signal rate are those
    fit_signal_model finds on its intervals given its estimated change rate; near the truth on average."""
    from freshcore import fit_signal_model
    from freshcore.signals import simulate_signal_log

    log = simulate_signal_log(np.full(300, 0.2), 0.6, 0.1, 0.4, 150, rng=3)
    rng = np.random.default_rng(5)
    n, k = log.elapsed.shape
    times = np.c_[np.zeros(n), np.cumsum(log.elapsed, axis=1)]
    sig = np.c_[np.zeros(n, dtype=np.int64), log.n_signals].ravel()
    flags = np.c_[np.zeros(n, dtype=np.uint8), log.changed].ravel()
    pages = np.repeat(np.arange(n), k + 1)
    order = rng.permutation(pages.size)
    r = estimate_log_rates(pages=pages[order], times=times.ravel()[order], changed=flags[order],
                           signals=sig[order])
    tau = np.diff(times, axis=1)
    ok = ~r.clipped & (r.change_rate > 0)
    want = fit_signal_model(tau[ok], log.n_signals[ok], log.changed[ok], change_rate=r.change_rate[ok])
    np.testing.assert_allclose(r.recall[ok], want.recall, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.false_rate[ok], want.false_rate, rtol=1e-9, atol=1e-12)
    assert abs(np.nanmean(r.recall) - 0.6) < 0.05 and abs(np.nanmean(r.false_rate) - 0.1) < 0.02
    df = pd.DataFrame({"url": pages[order], "time": times.ravel()[order], "changed": flags[order],
                       "pings": sig[order]})
    framed = estimate_log_rates(df, signal_column="pings")
    assert list(framed.columns)[-2:] == ["recall", "false_rate"]
    np.testing.assert_array_equal(framed["recall"].to_numpy(), r.recall)
    with pytest.raises(LogError, match=r"^The 'signals' of estimate_log_rates must be whole numbers >= 0; "
                                       r"row 2 is -1\.$"):
        estimate_log_rates(pages=[1, 1, 1], times=[0.0, 1.0, 2.0], changed=[0, 1, 0], signals=[0, 2, -1])
