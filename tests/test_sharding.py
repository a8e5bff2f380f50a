"""ShardedScheduler (issue 4; Section 5.2 of Busa-Fekete et al. (2025)): k schedulers at R/k, merged by
(tick time, shard)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import freshcore
from freshcore import sharding
from freshcore.pages import PageModel
from freshcore.policy_simulation import simulate
from freshcore.schedule import Scheduler
from freshcore.sharding import ShardedScheduler

from _reference import KINDS, SHARDED_OP, MergedReference, kind_args, plain_pages


def snapshot(s):
    return (s.time, s.bandwidth, s.last_crawl.tobytes(), s.signal_counts.tobytes(), s.tick_times(7).tobytes())


# -- k = 1 and the per-shard equivalence ----------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_one_shard_is_the_scheduler(kind):
    rng = np.random.default_rng(1)
    pages = plain_pages(rng, 40)
    a = Scheduler(pages, 6.0, signal_delay=0.05, **kind_args(kind))
    b = ShardedScheduler(pages, 6.0, 1, signal_delay=0.05, **kind_args(kind))
    for step in range(40):
        n = int(rng.integers(0, 12))
        np.testing.assert_array_equal(a.run(n), b.run(n))
        assert a.time == b.time and b.tick_times(1)[0] > b.time
        if step % 7 == 3:
            r = float(rng.uniform(2, 12))
            a.set_bandwidth(r)
            b.set_bandwidth(r)
        for p in rng.integers(0, 40, 3).tolist():
            t = a.time + float(rng.uniform(0, 0.2))
            assert a.signal(p, t) == b.signal(p, t)
        assert a.next() == b.next()
        np.testing.assert_array_equal(a.last_crawl, b.last_crawl)
        np.testing.assert_array_equal(a.signal_counts, b.signal_counts)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [2, 3, 5])
def test_each_shard_is_an_independent_scheduler(kind, k):
    rng = np.random.default_rng(k)
    m = 60
    pages = plain_pages(rng, m)
    s = ShardedScheduler(pages, 9.0, k, **kind_args(kind))
    out = s.run(40 * k)
    for sh in range(k):
        ids = s.shard_pages(sh)
        np.testing.assert_array_equal(ids, np.arange(sh, m, k))
        ref = Scheduler(pages[ids], 9.0 / k, **kind_args(kind))
        # shard sh's decisions are every k-th merged decision, from position sh
        np.testing.assert_array_equal(out[sh::k], ids[ref.run(40)])
        assert s.schedulers[sh].time == ref.time == s.time


@pytest.mark.parametrize("kind", ["greedy", "exact"])
def test_staggered_start_is_each_shards(kind):
    # last_crawl goes to each page's shard: the merged stream is that of Schedulers given their pages' times
    rng = np.random.default_rng(12)
    m, k = 90, 3
    pages = PageModel(rng.uniform(0.05, 1.0, m), rng.uniform(0.1, 1.0, m), recall=rng.uniform(0.0, 1.0, m),
                      false_rate=rng.uniform(0.0, 0.5, m))
    last = -rng.uniform(0.0, 30.0, m)
    assign = rng.permutation(np.arange(m) % k)
    s = ShardedScheduler(pages, 6.0, k, value=kind, assign=assign, last_crawl=last)
    ref = MergedReference(pages, 6.0, k, assign, value=kind)
    for sh, ids in enumerate(ref.ids):
        ref.scheds[sh] = Scheduler(pages[ids], 6.0 / k, value=kind, last_crawl=last[ids])
    np.testing.assert_array_equal(s.last_crawl, last)
    np.testing.assert_array_equal(s.run(400), [ref.next() for _ in range(400)])
    one = ShardedScheduler(pages, 6.0, 1, value=kind, last_crawl=last)
    np.testing.assert_array_equal(one.run(200), Scheduler(pages, 6.0, value=kind, last_crawl=last).run(200))


def test_merged_order_times_and_clock():
    pages = PageModel([1.0, 0.5, 0.25, 2.0, 0.1, 0.7], np.ones(6))
    s = ShardedScheduler(pages, 3.0, 3, value="greedy")
    times = s.tick_times(9)
    np.testing.assert_array_equal(times, np.repeat([1.0, 2.0, 3.0], 3))
    seen = []
    for i in range(9):
        page = s.next()
        seen.append(page)
        assert s.shard_of(page) == i % 3  # shard 0, 1, 2 within every round
        assert s.time == times[i]
    assert s.last_crawl[seen[-3:]].tolist() == [3.0, 3.0, 3.0]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(1, 5),
    kind=st.sampled_from(KINDS),
    ops=st.lists(SHARDED_OP, max_size=30),
)
def test_against_the_merged_reference(seed, k, kind, ops):
    """Any interleaving of run/next/set_bandwidth (also mid-round)/signals equals the (time, shard) merge."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(k, 3 * k + 8))
    pages = plain_pages(rng, m)
    assign = rng.permutation(np.arange(m) % k)
    s = ShardedScheduler(pages, 5.0, k, assign=assign, signal_delay=0.02, **kind_args(kind))
    ref = MergedReference(pages, 5.0, k, assign, signal_delay=0.02, **kind_args(kind))
    for op, arg in ops:
        if op == "run":
            expect_t = s.tick_times(arg)
            got = s.run(arg)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, [ref.next() for _ in range(arg)])
            if arg:
                assert s.time == expect_t[-1] == ref.time
        elif op == "next":
            t = s.tick_times(1)[0]
            assert s.next() == ref.next()
            assert s.time == t == ref.time
        elif op == "rate":
            s.set_bandwidth(arg / 2)
            ref.set_bandwidth(arg / 2)
            assert s.bandwidth == arg / 2
        else:
            page = arg % m
            t = max(s.time, float(s.last_crawl[page])) + (arg % 7) * 0.01
            assert s.signal(page, t) == ref.signal(page, t)
        assert s.time == ref.time
        assert all(x.time <= s.time for x in s.schedulers)
    # the shards keep their own order and times
    for sh in range(k):
        assert s.schedulers[sh].time == ref.scheds[sh].time
        np.testing.assert_array_equal(s.schedulers[sh].last_crawl, ref.scheds[sh].last_crawl)


# -- threads --------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 4])
def test_threaded_run_equals_sequential(monkeypatch, k):
    rng = np.random.default_rng(7)
    pages = plain_pages(rng, 300)
    old = freshcore.set_num_threads(2)
    try:
        monkeypatch.setattr(sharding, "MIN_PARALLEL_TICKS", 4)
        pools = []
        get_pool = sharding._parallel._get_pool
        monkeypatch.setattr(sharding._parallel, "_get_pool", lambda w: pools.append(w) or get_pool(w))
        a = ShardedScheduler(pages, 30.0, k, value="exact")
        b = ShardedScheduler(pages, 30.0, k, value="exact")
        ra = [a.run(1)]
        rb = [b.next()]
        a.set_bandwidth(45.0)  # mid-round: the pending rate is applied on the threads too
        b.set_bandwidth(45.0)
        ra.append(a.run(50 * k + 1))
        assert pools == [1]  # the long run went to the pool, the one-decision run did not
        freshcore.set_num_threads(1)
        rb.extend(b.next() for _ in range(50 * k + 1))
        assert b.time == a.time
        np.testing.assert_array_equal(np.concatenate(ra), rb)
        np.testing.assert_array_equal(a.last_crawl, b.last_crawl)
    finally:
        freshcore.set_num_threads(old)


def test_threaded_polled_run_with_short_poll_intervals_equals_sequential(monkeypatch):
    """Polled shards polled every 0.002-0.01: their popped pages are bounded first and wait (the tick's
    Popped.wait and prio, per scheduler state), on two threads as one by one."""
    rng = np.random.default_rng(8)
    pages = plain_pages(rng, 300)
    w = rng.choice([0.002, 0.005, 0.01], 300)
    old = freshcore.set_num_threads(2)
    try:
        monkeypatch.setattr(sharding, "MIN_PARALLEL_TICKS", 4)
        a = ShardedScheduler(pages, 30.0, 3, value="polled", poll_interval=w)
        b = ShardedScheduler(pages, 30.0, 3, value="polled", poll_interval=w)
        ra, rb = [a.run(1)], [b.next()]
        ids = rng.integers(0, 300, 40)
        moved = rng.random(40) < 0.3
        a.poll(ids, a.time + 0.05, moved)
        b.poll(ids, b.time + 0.05, moved)
        ra.append(a.run(301))
        freshcore.set_num_threads(1)
        rb.extend(b.next() for _ in range(301))
        np.testing.assert_array_equal(np.concatenate(ra), rb)
        assert [x._state.n_evaluations for x in a.schedulers] == [x._state.n_evaluations for x in b.schedulers]
    finally:
        freshcore.set_num_threads(old)


# -- signals, rates, read-only views ---------------------------------------------


def test_signals_are_routed_to_the_shard():
    pages = PageModel(np.linspace(0.2, 1.0, 10), np.ones(10), recall=0.5, false_rate=0.2)
    assign = np.array([2, 0, 1, 2, 0, 1, 2, 0, 1, 0])
    s = ShardedScheduler(pages, 3.0, 3, assign=assign, signal_delay=0.5)
    assert [s.shard_of(g) for g in range(10)] == assign.tolist()
    assert s.local_index(9) == 3 and s.shard_pages(0).tolist() == [1, 4, 7, 9]
    assert s.signal(9, 0.25) is False  # within the discard window of the crawl at 0
    assert s.signal(9, 0.75) is True
    assert s.schedulers[0].signal_counts.tolist() == [0, 0, 0, 1]
    assert s.signal_counts.tolist() == [0] * 9 + [1]
    s.run(30)
    last = s.last_crawl
    for sh in range(3):
        np.testing.assert_array_equal(last[s.shard_pages(sh)], s.schedulers[sh].last_crawl)


def test_set_rate_gives_each_shard_its_share():
    pages = PageModel(np.linspace(0.1, 1.0, 8), np.ones(8))
    s = ShardedScheduler(pages, 4.0, 4, value="greedy")
    assert [x.bandwidth for x in s.schedulers] == [1.0] * 4
    assert s.set_bandwidth(8.0) is s
    assert s.bandwidth == 8.0 and [x.bandwidth for x in s.schedulers] == [2.0] * 4
    np.testing.assert_array_equal(s.tick_times(5), [0.5] * 4 + [1.0])
    s.run(2)  # mid-round: shards 2 and 3 still tick at 0.5, then take the new rate
    s.set_bandwidth(16.0)
    assert [x.bandwidth for x in s.schedulers] == [4.0, 4.0, 2.0, 2.0]
    np.testing.assert_array_equal(s.tick_times(6), [0.5, 0.5, 0.75, 0.75, 0.75, 0.75])
    s.run(2)
    assert [x.bandwidth for x in s.schedulers] == [4.0] * 4 and s.time == 0.5


def test_views_are_read_only():
    s = ShardedScheduler(PageModel(np.ones(6), np.ones(6)), 2.0, 2)
    assert isinstance(s.schedulers, tuple) and len(s.schedulers) == s.shards == 2
    with pytest.raises(ValueError):
        s.shard_pages(0)[0] = 5
    with pytest.raises(AttributeError):
        s.schedulers = ()
    s.last_crawl[:] = 9.0  # copies
    assert (s.last_crawl == 0).all() and s.n_pages == 6 and s.pages == PageModel(np.ones(6), np.ones(6))
    assert "shards=2" in repr(s)


# -- bad input --------------------------------------------------------------------


PAGES = PageModel(np.linspace(0.1, 1.0, 6), np.ones(6))


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"shards": 0}, ValueError, "'shards' parameter of ShardedScheduler must be an integer >= 1 and <= 6"),
        ({"shards": 7}, ValueError, "'shards'.*Got 7"),
        ({"shards": 2.0}, TypeError, "'shards'"),
        ({"shards": True}, TypeError, "'shards'"),
        ({"bandwidth": 0.0}, ValueError, "'bandwidth'"),
        ({"bandwidth": math.nan}, ValueError, "'bandwidth'"),
        ({"value": "nope"}, ValueError, "'value'"),
        ({"value": "approx"}, ValueError, "'terms'"),
        ({"signal_delay": -1.0}, ValueError, "'signal_delay'"),
        ({"assign": [0, 1, 0, 1, 0, 2]}, ValueError, r"'assign'.*\[0, 2\); assign\[5\] = 2"),
        ({"assign": [0, 1, 0, 1, 0, -1]}, ValueError, r"assign\[5\] = -1"),
        ({"assign": [0, 1, 0, 1, 0]}, ValueError, r"shape \(6,\)"),
        ({"assign": [[0, 1, 0, 1, 0, 1]]}, ValueError, r"shape \(6,\)"),
        ({"assign": [0.0, 1, 0, 1, 0, 1]}, TypeError, "integer shard numbers"),
        ({"assign": "010101"}, TypeError, "'assign'"),
        ({"assign": [0, 0, 0, 0, 0, 0]}, ValueError, "leaves shard 1 without pages"),
        ({"pages": [1.0, 2.0]}, TypeError, "'pages'.*PageModel"),
        ({"last_crawl": [0.0, -1.0, 0.5, 0.0, 0.0, 0.0]}, ValueError,
         r"'last_crawl' parameter of ShardedScheduler.*last_crawl\[2\] = 0.5"),
        ({"last_crawl": [0.0, -1.0, 0.0, math.nan, 0.0, 0.0]}, ValueError, r"'last_crawl'.*last_crawl\[3\]"),
        ({"last_crawl": [0.0, -1.0]}, ValueError, r"'last_crawl' parameter of ShardedScheduler must have one entry "
                                                   r"per page \(6\)"),
        ({"last_crawl": "early"}, TypeError, "'last_crawl'"),
    ],
)
def test_bad_construction(kwargs, exc, match):
    args = {"pages": PAGES, "bandwidth": 2.0, "shards": 2, **kwargs}
    with pytest.raises(exc, match=match):
        ShardedScheduler(args.pop("pages"), args.pop("bandwidth"), args.pop("shards"), **args)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda s: s.signal(6, 5.0), ValueError,
         r"'page' parameter of ShardedScheduler.signal must be a live page id. Got 6 \(ids so far are 0 .. 5\)"),
        (lambda s: s.signal(-1, 5.0), ValueError, "'page'"),
        (lambda s: s.signal(1.0, 5.0), TypeError, "'page'"),
        (lambda s: s.signal(3, math.nan), ValueError, "'t' parameter of ShardedScheduler.signal"),
        (lambda s: s.signal(3, math.inf), ValueError, "'t'"),
        (lambda s: s.signal(3, "x"), TypeError, "'t'"),
        (lambda s: s.signal(5, 0.5), ValueError, r"must not precede the last crawl of page 5 \(at 1.0\)"),
        (lambda s: s.shard_of(6), ValueError, "'page' parameter of ShardedScheduler.shard_of"),
        (lambda s: s.local_index(-1), ValueError, "'page' parameter of ShardedScheduler.local_index"),
        (lambda s: s.shard_pages(2), ValueError, "'shard'"),
        (lambda s: s.set_bandwidth(-1.0), ValueError, "'bandwidth' parameter of ShardedScheduler.set_bandwidth"),
        (lambda s: s.set_bandwidth(math.inf), ValueError, "'bandwidth'"),
        (lambda s: s.run(-1), ValueError, "'n' parameter of ShardedScheduler.run"),
        (lambda s: s.run(1.5), TypeError, "'n'"),
        (lambda s: s.tick_times(-1), ValueError, "'n' parameter of ShardedScheduler.tick_times"),
    ],
)
def test_bad_calls_leave_the_state_unchanged(call, exc, match):
    def make():
        s = ShardedScheduler(PAGES, 2.0, 2, value="greedy")
        s.run(5)  # mid-round at t = 3; page 5 was last crawled at t = 1
        s.signal(2, s.time)
        return s

    s, twin = make(), make()
    before = snapshot(s)
    with pytest.raises(exc, match=match):
        call(s)
    assert snapshot(s) == before
    np.testing.assert_array_equal(s.run(11), twin.run(11))


# -- the simulator ------------------------------------------------------------------


def test_simulate_uses_the_shards_tick_times():
    rng = np.random.default_rng(3)
    pages = plain_pages(rng, 30)
    res = simulate(ShardedScheduler(pages, 12.0, 3, value="exact"), pages, 20.0, rng=5)
    assert len(res.crawl_pages) == 240
    np.testing.assert_allclose(res.crawl_times, np.repeat(np.arange(1, 81) / 4.0, 3), rtol=0, atol=1e-12)
    # one shard: the same decisions as one Scheduler; its times are the compiled clock's ``origin + j/R``,
    # the simulator's own for a Scheduler ``time + i/R`` (equal up to rounding)
    one = simulate(ShardedScheduler(pages, 12.0, 1, value="exact"), pages, 20.0, rng=5)
    ref = simulate(Scheduler(pages, 12.0, value="exact"), pages, 20.0, rng=5)
    np.testing.assert_array_equal(one.crawl_pages, ref.crawl_pages)
    np.testing.assert_allclose(one.crawl_times, ref.crawl_times, rtol=0, atol=1e-12)
    assert one.accuracy == ref.accuracy


def test_simulate_bandwidth_schedule_with_shards():
    pages = PageModel(np.linspace(0.1, 1.0, 12), np.ones(12))
    res = simulate(ShardedScheduler(pages, 4.0, 2, value="greedy"), pages, 10.0, rng=0,
                   bandwidth_schedule=([5.0], [8.0]))
    t = res.crawl_times
    assert (np.diff(t) >= 0).all() and t[-1] <= 10.0
    np.testing.assert_allclose(np.unique(t[t <= 5.0]), np.arange(1, 11) / 2.0)
    np.testing.assert_allclose(np.unique(t[t > 5.0]), 5.0 + np.arange(1, 21) / 4.0)
    assert len(t) == 20 + 40


def test_simulate_sharded_accuracy_close_to_one_scheduler():
    """Measured (m = 200, R = 100, horizon 100, NCIS exact, seed 1): k = 1/2/4/8 -> 0.778/0.775/0.772/0.762."""
    rng = np.random.default_rng(0)
    pages = plain_pages(rng, 200)
    acc = {k: simulate(ShardedScheduler(pages, 100.0, k), pages, 100.0, rng=1).accuracy for k in (1, 2, 4)}
    assert acc[1] == simulate(Scheduler(pages, 100.0), pages, 100.0, rng=1).accuracy
    assert acc[1] - 0.008 <= acc[2] <= acc[1] + 0.002
    assert acc[1] - 0.012 <= acc[4] <= acc[1] + 0.002


class LoggingShards(ShardedScheduler):
    """Logs ("signal", page, t, time) and ("tick", page, t, t) in call order (simulate uses signal_many)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.log = []

    def signal(self, page, t):
        self.log.append(("signal", page, t, self.time))
        return super().signal(page, t)

    def signal_many(self, pages, times):
        pairs = zip(np.asarray(pages).tolist(), np.asarray(times).tolist())
        self.log.extend(("signal", p, t, self.time) for p, t in pairs)
        return super().signal_many(pages, times)

    def run(self, n):
        times = self.tick_times(n)
        out = super().run(n)
        self.log.extend(("tick", p, t, t) for p, t in zip(out.tolist(), times.tolist()))
        return out


def test_simulate_delivers_signals_between_rounds():
    """Signals come before the first round timed at or after them, never in the middle of a round."""
    rng = np.random.default_rng(11)
    m = 12
    pages = PageModel(rng.uniform(0.5, 1, m), np.ones(m), recall=1.0, false_rate=0.3)
    pol = LoggingShards(pages, 6.0, 3, value="exact")
    res = simulate(pol, pages, 30.0, rng=4)
    assert res.n_signals > 50 and len(res.crawl_pages) == 180
    ticks = 0
    for i, (kind, _, t, now) in enumerate(pol.log):
        if kind == "signal":
            assert ticks % 3 == 0 and t >= now  # between rounds, not before the last tick
            nxt = next(e for e in [*pol.log[i:], ("tick", -1, math.inf, math.inf)] if e[0] == "tick")
            assert t <= nxt[2]  # not held past a round timed at or after its arrival
        else:
            ticks += 1
    assert sum(1 for e in pol.log if e[0] == "signal") == res.n_signals  # every one delivered once


@pytest.mark.parametrize("k", [1, 3])
def test_signal_many_equals_a_loop_of_signal(k):
    rng = np.random.default_rng(21)
    m = 40
    pages = plain_pages(rng, m)
    a = ShardedScheduler(pages, 8.0, k, signal_delay=0.1)
    b = ShardedScheduler(pages, 8.0, k, signal_delay=0.1)
    for step in range(25):
        n = int(rng.integers(0, 9))
        np.testing.assert_array_equal(a.run(n), b.run(n))
        ps = rng.integers(0, m, int(rng.integers(0, 12 if step % 3 else 80)))  # small and grouped batches
        last = a.last_crawl[ps]
        ts = np.maximum(last + rng.uniform(0, 0.3, len(ps)), last)  # some before 'time', none before a last crawl
        got = a.signal_many(ps, ts)
        assert got.dtype == np.bool_ and got.shape == ps.shape
        np.testing.assert_array_equal(got, [b.signal(p, t) for p, t in zip(ps.tolist(), ts.tolist())])
        np.testing.assert_array_equal(a.signal_counts, b.signal_counts)
    assert a.signal_many([], []).shape == (0,)


@pytest.mark.parametrize(
    "pages, times, exc, match",
    [
        ([0, 6], [5.0, 5.0], ValueError, r"'pages' parameter of ShardedScheduler.signal_many.*pages\[1\] = 6"),
        ([0, 1.0], [5.0, 5.0], TypeError, "'pages'"),
        ([0, 1], [5.0, math.nan], ValueError, r"'times'.*times\[1\] = nan"),
        ([0, 1], [5.0], ValueError, "same length|length"),
        ([2, 4, 5], [3.0, 3.0, 0.5], ValueError, r"times\[2\] = 0.5 < 1.0, the last crawl of page 5"),
    ],
)
def test_signal_many_bad_input_records_nothing(pages, times, exc, match):
    s = ShardedScheduler(PAGES, 2.0, 2, value="greedy")
    s.run(5)  # t = 3; page 5 last crawled at t = 1
    before = snapshot(s)
    with pytest.raises(exc, match=match):
        s.signal_many(pages, times)
    assert snapshot(s) == before


# -- value "polled": polls routed to the shards -----------------------------------


def polled_args(rng, m):
    return {"value": "polled", "poll_interval": rng.choice([0.3, 1.0, 3.0, math.inf], m)}


def test_one_polled_shard_is_the_scheduler():
    rng = np.random.default_rng(4)
    pages = plain_pages(rng, 30)
    args = polled_args(rng, 30)
    a = Scheduler(pages, 6.0, **args)
    b = ShardedScheduler(pages, 6.0, 1, **args)
    for step in range(30):
        n = int(rng.integers(0, 8))
        np.testing.assert_array_equal(a.run(n), b.run(n))
        if step % 7 == 3:
            r = float(rng.uniform(2, 12))
            a.set_bandwidth(r)
            b.set_bandwidth(r)
        ids = rng.integers(0, 30, 5)
        moved = rng.random(5) < 0.4
        t = a.time + float(rng.uniform(0, 0.2)) + 0.3 * step
        a.poll(ids, t, moved)
        b.poll(ids, t, moved)
        if step % 9 == 4:
            new = plain_pages(rng, 2)
            w = [0.5, 2.0]
            assert a.add_pages(new, poll_interval=w).tolist() == b.add_pages(new, poll_interval=w).tolist()
            upd = plain_pages(rng, 1)
            a.update_pages([3], upd, poll_interval=0.7)
            b.update_pages([3], upd, poll_interval=0.7)
        assert a.next() == b.next()
        np.testing.assert_array_equal(a.last_crawl, b.last_crawl)
    assert a.to_dict()["last"].tolist() == b.schedulers[0].to_dict()["last"].tolist()


def test_polls_are_routed_to_the_shard():
    rng = np.random.default_rng(5)
    pages = PageModel(np.linspace(0.2, 1.0, 10), np.ones(10), recall=0.5, false_rate=0.2)
    assign = np.array([2, 0, 1, 2, 0, 1, 2, 0, 1, 0])
    s = ShardedScheduler(pages, 3.0, 3, assign=assign, value="polled", poll_interval=np.linspace(0.5, 1.4, 10))
    alone = [Scheduler(pages[s.shard_pages(sh)], 1.0, value="polled",
                       poll_interval=np.linspace(0.5, 1.4, 10)[s.shard_pages(sh)]) for sh in range(3)]
    assert s.schedulers[0]._state.polled_view(2).tolist() == alone[0]._state.polled_view(2).tolist()
    for _ in range(10):
        ids = rng.integers(0, 10, 6)
        moved = rng.random(6) < 0.5
        t = s.time + 0.1
        s.poll(ids, t, moved)
        for sh in range(3):
            mine = assign[ids] == sh
            alone[sh].poll(np.searchsorted(s.shard_pages(sh), ids[mine]), t, moved[mine])
        s.run(3)
        for sh in range(3):
            alone[sh].next()
            assert alone[sh].to_dict()["last"].tolist() == s.schedulers[sh].to_dict()["last"].tolist()
    # bad polls: nothing recorded, the first bad index named by its global id
    s.poll([9], s.time + 1.0, [False])
    before = snapshot(s), [x.to_dict()["poll"].tolist() for x in s.schedulers]
    with pytest.raises(ValueError, match=r"pages\[1\] = 10"):
        s.poll([0, 10], s.time, [True, True])
    with pytest.raises(ValueError, match=r"last poll of page 9 \(pages\[1\]\)"):
        s.poll([0, 9], s.time + 0.5, [True, True])
    assert (snapshot(s), [x.to_dict()["poll"].tolist() for x in s.schedulers]) == before
    # signals are refused; the other kinds have no poll
    with pytest.raises(ValueError, match="takes polls, not signals"):
        s.signal(0, s.time)
    assert getattr(ShardedScheduler(pages, 3.0, 2), "poll", None) is None
    with pytest.raises(ValueError, match="'poll_interval' parameter of ShardedScheduler is required"):
        ShardedScheduler(pages, 3.0, 2, value="polled")
    with pytest.raises(ValueError, match="'poll_interval' parameter of ShardedScheduler is only used"):
        ShardedScheduler(pages, 3.0, 2, poll_interval=1.0)


def test_a_polled_sharded_state_round_trips():
    rng = np.random.default_rng(6)
    pages = plain_pages(rng, 24)
    s = ShardedScheduler(pages, 6.0, 3, **polled_args(rng, 24))
    s.run(7)  # mid-round
    s.poll(np.arange(24), s.time + 0.05, rng.random(24) < 0.5)
    t = ShardedScheduler.from_dict(s.to_dict())
    for _ in range(5):
        ids = rng.integers(0, 24, 4)
        moved = rng.random(4) < 0.5
        tt = s.time + 0.1
        s.poll(ids, tt, moved)
        t.poll(ids, tt, moved)
        np.testing.assert_array_equal(s.run(5), t.run(5))


def test_polled_pages_whose_value_is_refused_are_refused_before_any_shard_moves():
    from freshcore import _polled
    from freshcore.value import PageValueError

    # page 4 (mu = 0) is never crawled: its s = Delta t = 2 at time 2
    pages = PageModel([0.5, 0.6, 0.7, 0.8, 1.0, 0.9], [1.0, 1.0, 1.0, 1.0, 0.0, 1.0], 0.5, 0.3)
    s = ShardedScheduler(pages, 6.0, 2, value="polled", poll_interval=1.0)
    s.run(12)
    sh, j = s.shard_of(4), s.local_index(4)
    ell = s.schedulers[sh]._state.polled_view(0)[j]
    assert s.schedulers[sh].pages.change_rate[j] * (s.schedulers[sh].time - ell) > 1.5
    bad = PageModel([1.0, 1.0], [1.0, 1.0], 0.5, 0.3)  # w = 3e-8: the walk alone refuses past s ~ 1
    before = s.to_dict()
    old = _polled._set_mode(2)
    try:
        with pytest.raises(PageValueError, match=r"page 1 .*at staleness=.*lattice sum"
                                                   r".*It is pages\[1\] of those added; none was added"):
            s.add_pages(bad, last_crawl=[s.time, s.time - 2.0], poll_interval=3e-8)
        with pytest.raises(PageValueError, match=r"page 4 .*at staleness=.*lattice sum.*None was updated"):
            s.update_pages([2, 4], bad, poll_interval=[1.0, 3e-8])
    finally:
        _polled._set_mode(old)
    after = s.to_dict()
    for a, b in zip(after["schedulers"], before["schedulers"]):
        for key in a:
            np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]), err_msg=key)
