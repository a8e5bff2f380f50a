"""``run(n, signals=(pages, times))``: the signals recorded on the way, each just before the first tick at or after
its time (those after the last tick after it), equal to a loop of ``signal_many`` and ``next``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore.pages import PageModel
from freshcore.schedule import Scheduler
from freshcore.sharding import ShardedScheduler

from _state_files import first_memory_error, state_equal


def pages(rng, m):
    return PageModel(rng.uniform(0.01, 1.0, m), rng.uniform(0.0, 1.0, m), rng.beta(0.25, 0.25, m),
                     rng.uniform(0.0, 0.6, m))


def make(kind, model, rate, value, shards):
    if kind == "single":
        return Scheduler(model, rate, value=value, signal_delay=0.01)
    return ShardedScheduler(model, rate, shards, value=value)


def loop(s, n, p, t):
    """The reference: signal_many of the signals up to each tick's time, then next; the rest after."""
    ticks = s.tick_times(n) if isinstance(s, ShardedScheduler) else s.time + np.arange(1, n + 1) / s.bandwidth
    cut = np.searchsorted(t, ticks, side="right")
    out, i = [], 0
    for k in range(n):
        if cut[k] > i:
            s.signal_many(p[i:cut[k]], t[i:cut[k]])
            i = cut[k]
        out.append(s.next())
    if i < len(p):
        s.signal_many(p[i:], t[i:])
    return np.array(out, dtype=np.int64)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), value=st.sampled_from(["exact", "greedy", "cis", "approx"]),
       kind=st.sampled_from(["single", "sharded"]), n_signals=st.integers(0, 400), before=st.integers(0, 50))
def test_run_with_signals_is_the_loop(seed, value, kind, n_signals, before):
    rng = np.random.default_rng(seed)
    m, rate, n = 200, 20.0, 300
    model = pages(rng, m)
    if value == "approx":
        a, b = Scheduler(model, rate, value="approx", terms=2), Scheduler(model, rate, value="approx", terms=2)
        if kind == "sharded":
            a = ShardedScheduler(model, rate, 2, value="approx", terms=2)
            b = ShardedScheduler(model, rate, 2, value="approx", terms=2)
    else:
        a, b = make(kind, model, rate, value, 2), make(kind, model, rate, value, 2)
    a.run(before)
    b.run(before)
    p = rng.integers(0, m, n_signals).astype(np.intp)
    t = a.time + rng.uniform(0.0, (n + 20) / rate, n_signals)
    if n_signals > 2:
        t[0] = t[1]  # (equal times; and one exactly at a tick, before or after the others at that time)
        t[2] = a.time + 5 / rate
    t = np.sort(t)
    got = a.run(n, signals=(p, t))
    want = loop(b, n, p, t)
    assert got.tolist() == want.tolist()
    assert state_equal(a, b)


def test_run_with_signals_takes_lists_and_records_all_with_no_tick():
    rng = np.random.default_rng(1)
    a = Scheduler(pages(rng, 50), 5.0, value="exact")
    b = Scheduler.from_dict(a.to_dict())
    assert a.run(0, signals=([3, 4, 3], [0.0, 0.5, 1.0])).tolist() == []
    b.signal_many([3, 4, 3], [0.0, 0.5, 1.0])
    assert state_equal(a, b)
    assert a.run(7, signals=([], [])).tolist() == b.run(7).tolist()


@pytest.mark.parametrize("kind", ["single", "sharded"])
def test_run_with_bad_signals_names_the_first_bad_index_and_does_nothing(kind):
    rng = np.random.default_rng(2)
    s = make(kind, pages(rng, 30), 3.0, "exact", 2)
    s.run(10)
    before = s.to_dict()
    name = type(s).__name__
    last = s.last_crawl
    j = int(np.argmax(last))
    cases = [
        (([1, 2, 3], [5.0, 4.0, 6.0]), ValueError, r"must not decrease; times\[1\] = 4\.0 < times\[0\] = 5\.0"),
        (([1, 99], [5.0, 6.0]), ValueError, r"pages\[1\]"),
        (([1, 2], [5.0, np.nan]), ValueError, r"times\[1\]"),
        (([1, 2], [5.0]), ValueError, "same length|lengths"),
        (([0, j], [last[j] - 1.0, last[j] - 1.0]), ValueError, rf"times\[1\] = .* last crawl of page {j}"),
        (([1.5], [5.0]), TypeError, "pages"),
        ([1, 2], TypeError, r"\(pages, times\) pair"),
    ]
    for signals, err, match in cases:
        with pytest.raises(err, match=match) as e:
            s.run(5, signals=signals)
        assert f"{name}.run" in str(e.value)
    assert state_equal(s, type(s).from_dict(before))


def test_run_with_signals_out_of_memory_keeps_what_was_done():
    from freshcore import _schedule

    rng = np.random.default_rng(3)
    model = pages(rng, 300)
    p = rng.integers(0, 300, 500).astype(np.intp)
    t = np.sort(rng.uniform(0.0, 30.0, 500))
    twin = Scheduler(model, 20.0, value="cis")
    n0 = _schedule._allocation_count()
    twin.run(500, signals=(p, t))
    n = _schedule._allocation_count() - n0
    s, message = first_memory_error(lambda: Scheduler(model, 20.0, value="cis"),
                                    lambda s: s.run(500, signals=(p, t)), range(n // 2, n + 1))
    ticks = int(message.split("the first ")[1].split(" ticks")[0])
    recorded = int(message.split("and the first ")[1].split(" signals")[0])
    ref = Scheduler(model, 20.0, value="cis")
    loop(ref, ticks, p[:recorded], t[:recorded]) if recorded else ref.run(ticks)
    assert state_equal(s, ref)
