"""Scheduler (issue 4, first slice): every decision equals a brute-force argmax over all pages."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from freshcore.pages import PageModel
from freshcore.schedule import Scheduler

from _reference import KINDS, Reference, kind_args, random_pages

# ---------------------------------------------------------------------------
# state machine against the brute-force reference


class SchedulerMachine(RuleBasedStateMachine):
    @initialize(
        seed=st.integers(0, 2**32 - 1),
        m=st.integers(1, 80),
        kind=st.sampled_from(KINDS),
        rate=st.floats(0.5, 20.0),
        delay=st.sampled_from([0.0, 0.0, 0.05, 0.5]),
    )
    def setup(self, seed, m, kind, rate, delay):
        self.rng = np.random.default_rng(seed)
        pages = random_pages(self.rng, m)
        args = kind_args(kind)
        self.sched = Scheduler(pages, rate, signal_delay=delay, **args)
        self.ref = Reference(pages, rate, signal_delay=delay, **args)
        self.m = m

    @rule(n=st.integers(1, 6))
    def ticks(self, n):
        if n == 1:
            assert self.sched.next() == self.ref.next()
        else:
            got = self.sched.run(n)
            want = [self.ref.next() for _ in range(n)]
            assert got.dtype == np.int64
            assert got.tolist() == want

    @rule(page=st.integers(0, 1000), frac=st.floats(0.0, 1.0))
    def valid_signal(self, page, frac):
        page %= self.m
        last = self.ref.last[page]
        t = last + frac * (self.ref.time - last + 1.0)  # between the last crawl and a little after now
        assert self.sched.signal(page, t) == self.ref.signal(page, t)

    @rule(page=st.integers(0, 1000), frac=st.floats(0.0, 0.99))
    def early_signal(self, page, frac):
        # within signal_delay of the page's last crawl: discarded (counted when the delay is 0)
        page %= self.m
        t = self.ref.last[page] + frac * self.ref.delay
        assert self.sched.signal(page, t) == self.ref.signal(page, t)

    @rule(data=st.data())
    def bad_signal(self, data):
        before = self.snapshot()
        last = self.ref.last
        choice = data.draw(st.sampled_from(["unknown", "negative", "nan", "inf", "past"]))
        page = data.draw(st.integers(0, self.m - 1))
        if choice == "past" and last[page] == 0.0:
            choice = "nan"
        args = {
            "unknown": (self.m + data.draw(st.integers(0, 5)), self.ref.time),
            "negative": (-1 - data.draw(st.integers(0, 5)), self.ref.time),
            "nan": (page, math.nan),
            "inf": (page, math.inf),
            "past": (page, last[page] - data.draw(st.floats(1e-9, 10.0))),
        }[choice]
        with pytest.raises(ValueError):
            self.sched.signal(*args)
        assert self.snapshot() == before

    @rule(rate=st.floats(0.5, 20.0))
    def set_bandwidth(self, rate):
        assert self.sched.set_bandwidth(rate) is self.sched
        self.ref.set_bandwidth(rate)

    @rule(rate=st.sampled_from([0.0, -1.0, math.nan, math.inf, -math.inf]))
    def bad_rate(self, rate):
        before = self.snapshot()
        with pytest.raises(ValueError):
            self.sched.set_bandwidth(rate)
        assert self.snapshot() == before

    def snapshot(self):
        s = self.sched
        return (s.time, s.bandwidth, s.last_crawl.tolist(), s.signal_counts.tolist())

    @invariant()
    def same_state(self):
        if not hasattr(self, "sched"):
            return
        assert self.sched.time == self.ref.time
        assert self.sched.bandwidth == self.ref.bandwidth
        np.testing.assert_array_equal(self.sched.last_crawl, self.ref.last)
        np.testing.assert_array_equal(self.sched.signal_counts, self.ref.n)


TestSchedulerMachine = SchedulerMachine.TestCase
TestSchedulerMachine.settings = settings(
    max_examples=150, stateful_step_count=50, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


# ---------------------------------------------------------------------------
# longer runs, ties, sub-linear work


def drive(kind, m, ticks, seed, signal_prob=0.5, delay=0.0, rates=()):
    """Compare every decision of a long run with the reference, signals and rate steps interleaved."""
    rng = np.random.default_rng(seed)
    pages = random_pages(rng, m)
    args = kind_args(kind)
    s = Scheduler(pages, 1.0 * m / 10, signal_delay=delay, **args)
    ref = Reference(pages, 1.0 * m / 10, signal_delay=delay, **args)
    steps = dict(rates)
    for j in range(ticks):
        if j in steps:
            s.set_bandwidth(steps[j])
            ref.set_bandwidth(steps[j])
        if rng.random() < signal_prob:
            p = int(rng.integers(m))
            t = ref.last[p] + rng.uniform(0.0, 1.0) * (ref.time - ref.last[p] + 0.1)
            assert s.signal(p, t) == ref.signal(p, t)
        assert s.next() == ref.next(), f"tick {j}"
    return s


@pytest.mark.parametrize("kind", KINDS)
def test_long_run_matches_brute_force(kind):
    # 400 pages over many buckets, rate changes both ways: every decision against the brute force
    s = drive(kind, 400, 1500, seed=11, rates={500: 80.0, 1000: 20.0}, delay=0.02)
    assert s.time > 0


def test_identical_pages_tie_to_lowest_index():
    pages = PageModel(np.full(6, 0.5), np.ones(6), recall=0.3, false_rate=0.2)
    for kind in KINDS:
        s = Scheduler(pages, 3.0, **kind_args(kind))
        # all values equal at every tick: round robin in index order
        assert s.run(12).tolist() == list(range(6)) * 2


def test_all_zero_values_choose_page_zero():
    pages = PageModel([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    s = Scheduler(pages, 1.0)
    assert s.run(4).tolist() == [0, 0, 0, 0]


def test_signal_makes_cis_page_win():
    # Greedy-CIS takes a signal as proof of a change: the page jumps to mu/Delta
    pages = PageModel([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], recall=0.9, false_rate=0.1)
    s = Scheduler(pages, 10.0, value="cis")
    assert s.run(3).tolist() == [0, 1, 2]
    assert s.signal(2, 0.3) is True
    assert s.next() == 2
    assert s.signal_counts.tolist() == [0, 0, 0]


def test_signal_delay_discards():
    pages = PageModel([1.0, 1.0], [1.0, 1.0], recall=0.5, false_rate=0.1)
    s = Scheduler(pages, 1.0, signal_delay=0.5)
    assert s.next() == 0  # page 0 crawled at t = 1
    assert s.signal(0, 1.2) is False
    assert s.signal(0, 1.5) is True
    assert s.signal(1, 0.2) is False  # page 1 "crawled" at 0
    assert s.signal_counts.tolist() == [1, 0]


def test_work_per_tick_is_sublinear():
    rng = np.random.default_rng(5)
    m = 20_000
    pages = random_pages(rng, m, duplicates=False)
    s = Scheduler(pages, m / 20.0, value="greedy")
    s.run(4 * m)  # burn in: every page crawled several times
    state = s._state
    e0 = state.n_evaluations
    s.run(m)
    per_tick = (state.n_evaluations - e0) / m
    assert per_tick < 20, per_tick  # brute force: 20000; measured 10.6


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(KINDS), m=st.integers(33, 120))
def test_random_instances_with_rate_changes(seed, kind, m):
    drive(kind, m, 150, seed=seed, delay=0.01, rates={50: 3.0 * m, 100: 0.05 * m})


# ---------------------------------------------------------------------------
# bad input


def test_constructor_errors():
    pages = PageModel([1.0, 2.0], [1.0, 1.0])
    with pytest.raises(TypeError, match="'pages' parameter of Scheduler must be a PageModel"):
        Scheduler([1.0, 2.0], 1.0)
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="'bandwidth' parameter of Scheduler"):
            Scheduler(pages, bad)
    with pytest.raises(TypeError, match="'bandwidth' parameter"):
        Scheduler(pages, "1")
    with pytest.raises(ValueError, match="'value' parameter of Scheduler must be one of"):
        Scheduler(pages, 1.0, value="ncis")
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="'signal_delay' parameter"):
            Scheduler(pages, 1.0, signal_delay=bad)
    with pytest.raises(ValueError, match="'terms' parameter of Scheduler is required"):
        Scheduler(pages, 1.0, value="approx")
    with pytest.raises(ValueError, match="'terms' parameter of Scheduler must be an integer >= 1"):
        Scheduler(pages, 1.0, value="approx", terms=0)
    with pytest.raises(ValueError, match="only used with value='approx'"):
        Scheduler(pages, 1.0, value="exact", terms=2)


def test_method_errors_leave_state_unchanged():
    pages = PageModel([1.0, 2.0, 0.5], [1.0, 1.0, 2.0], recall=0.5, false_rate=0.2)
    s = Scheduler(pages, 2.0)
    s.run(5)
    s.signal(1, s.time)
    before = (s.time, s.bandwidth, s.last_crawl.tolist(), s.signal_counts.tolist())
    crawled = int(np.argmax(s.last_crawl))
    cases = [
        (ValueError, "'page' parameter of Scheduler.signal", (3, s.time)),
        (ValueError, "'page' parameter of Scheduler.signal", (-1, s.time)),
        (TypeError, "'page' parameter of Scheduler.signal", (1.0, s.time)),
        (ValueError, "'t' parameter of Scheduler.signal", (0, math.nan)),
        (ValueError, "'t' parameter of Scheduler.signal", (0, math.inf)),
        (ValueError, "must not precede the last crawl of page", (crawled, s.last_crawl[crawled] - 1e-9)),
    ]
    for exc, msg, args in cases:
        with pytest.raises(exc, match=msg):
            s.signal(*args)
    for bad in (0.0, -2.0, math.nan):
        with pytest.raises(ValueError, match=r"'bandwidth' parameter of Scheduler.set_bandwidth"):
            s.set_bandwidth(bad)
    for bad in (-1, 1.5):
        with pytest.raises((ValueError, TypeError), match=r"'n' parameter of Scheduler.run"):
            s.run(bad)
    assert (s.time, s.bandwidth, s.last_crawl.tolist(), s.signal_counts.tolist()) == before
    ref_next = Scheduler(pages, 2.0)
    ref_next.run(5)
    ref_next.signal(1, ref_next.time)
    assert s.run(10).tolist() == ref_next.run(10).tolist()


def test_properties():
    pages = PageModel([1.0, 2.0], [1.0, 1.0])
    s = Scheduler(pages, 4.0, value="greedy")
    assert (s.n_pages, s.bandwidth, s.time, s.value, s.pages) == (2, 4.0, 0.0, "greedy", pages)
    s.run(3)
    assert s.time == 0.75
    s.set_bandwidth(2.0)
    s.next()
    assert s.time == 1.25 and s.bandwidth == 2.0
    assert "n_pages=2" in repr(s)
    assert s.run(0).shape == (0,)


@pytest.mark.parametrize("kind", KINDS)
def test_slopes_beyond_the_bucket_range_stay_exact(kind):
    # importance 1e18 gives slopes above the largest bucket (2**50: the unbounded bucket, popped every tick);
    # 1e-35 gives slopes below the smallest (2**-100: rounded up to it); 1e-320 is subnormal
    rng = np.random.default_rng(3)
    m = 40
    mu = rng.choice([1e18, 1e-35, 1e-320, 1.0, 3e5], m)
    pages = PageModel(10 ** rng.uniform(-3, 2, m), mu, rng.choice([0.0, 0.5, 1.0], m), rng.choice([0.0, 0.3], m))
    s = Scheduler(pages, 4.0, **kind_args(kind))
    ref = Reference(pages, 4.0, **kind_args(kind))
    from freshcore import _schedule

    unbounded = 0  # most pages ever in the unbounded bucket (Greedy parks pages far below the level)
    for j in range(300):
        if rng.random() < 0.3:
            p = int(rng.integers(m))
            t = ref.last[p] + rng.uniform(0.0, 1.0) * (ref.time - ref.last[p] + 0.1)
            assert s.signal(p, t) == ref.signal(p, t)
        assert s.next() == ref.next(), f"tick {j}"
        unbounded = max(unbounded, s._state.bucket_sizes()[_schedule.UNBOUNDED_CODE])
    assert unbounded > 0  # the unbounded bucket was used


# ---------------------------------------------------------------------------
# Greedy's park: pages far below the winning value wait in one heap keyed by the time they reach the park level


def staggered(pages, rate, rng):
    from freshcore.rates import optimal_rates

    f = optimal_rates(pages.change_rate, pages.importance, rate, model="periodic")
    interval = np.where(f > 0, 1.0 / np.where(f > 0, f, 1.0), len(pages) / rate)
    return -rng.uniform(0.0, 1.0, len(pages)) * interval


def greedy_pair(seed, m, rate):
    """A Greedy scheduler over SPEC's check pages started at staggered phases, and its brute-force reference."""
    rng = np.random.default_rng(seed)
    pages = PageModel(rng.uniform(0, 1, m), rng.uniform(0, 1, m))
    last = staggered(pages, rate, rng)
    ref = Reference(pages, rate, value="greedy")
    ref.last = last.copy()
    return Scheduler(pages, rate, value="greedy", last_crawl=last), ref


def test_greedy_parks_most_pages_and_stays_exact():
    from freshcore import _schedule

    m = 3000
    s, ref = greedy_pair(11, m, 300.0)
    parked, falls = [], []
    for j in range(6 * m):
        assert s.next() == ref.next(), f"tick {j}"
        if j % 500 == 0:
            sizes = s._state.bucket_sizes()
            parked.append(sizes[_schedule.PARK_CODE] + sizes[_schedule.FAR_CODE])
            falls.append(s._state.n_unparks)
    # in steady state nearly every page is parked; the slope buckets hold the rest
    assert min(parked[2:]) > 0.9 * m, parked
    # the winning value moves more at small m: the margin doubles at each fall, then the falls stop
    assert falls[-1] <= 8 and falls[-1] == falls[len(falls) // 2], falls


@pytest.mark.parametrize("value", ["exact", "cis", "approx"])
def test_every_kind_parks_and_stays_exact_with_signals(value):
    # pages of every kind park (keyed by the time their bounds reach the level); a signal moves a parked page's
    # key earlier by b_j (into the calendar when due by the horizon) or, for Greedy-CIS, re-places it; every
    # decision is the brute-force argmax, signals to parked pages included
    from freshcore import _schedule

    rng = np.random.default_rng(21)
    m, rate = 800, 80.0
    pages = PageModel(rng.uniform(0, 1, m), rng.uniform(0, 1, m), rng.beta(0.25, 0.25, m), rng.uniform(0.1, 0.6, m))
    last = staggered(pages, rate, rng)
    terms = 2 if value == "approx" else None
    s = Scheduler(pages, rate, value=value, last_crawl=last, terms=terms)
    ref = Reference(pages, rate, value=value, terms=terms)
    ref.last = last.copy()
    gamma = pages.gamma
    parked, hits = [], {_schedule.PARK_CODE: 0, _schedule.FAR_CODE: 0}
    for j in range(5 * m):
        if j > 0:
            who = np.flatnonzero(rng.uniform(size=m) < gamma / rate)  # (the signals of one tick)
            codes = s._state._buckets()
            for c in hits:
                hits[c] += int(np.sum(codes[who] == c))
            t = s.time
            s.signal_many(who, np.full(len(who), t))
            for p in who:
                ref.signal(int(p), t)
        assert s.next() == ref.next(), f"tick {j}"
        if j % 500 == 0:
            sizes = s._state.bucket_sizes()
            parked.append(sizes[_schedule.PARK_CODE] + sizes[_schedule.FAR_CODE])
    assert max(parked) > 0.1 * m, parked  # (Greedy-CIS: a signalled page's value is constant, not parked)
    assert hits[_schedule.PARK_CODE] > 0 and hits[_schedule.FAR_CODE] > 0, hits


@pytest.mark.parametrize("factor", [3.0, 30.0, 0.3])
def test_greedy_level_moves_stay_exact(factor):
    # a higher rate drops the winning value: towards the park level, which a lowering moves down ahead of it
    # (every parked page re-keyed, a share per tick) or, when it drops faster (x30), below it: every parked page
    # is evaluated (n_unparks) and the level lowered; a lower rate raises it (free)
    m, rate = 800, 80.0
    s, ref = greedy_pair(12, m, rate)
    lowerings = 0
    for j in range(6 * m):
        if j == 2 * m:
            s.set_bandwidth(rate * factor)
            ref.set_bandwidth(rate * factor)
            level, falls = s.to_dict()["park_level"], s._state.n_unparks
        assert s.next() == ref.next(), f"tick {j}"
        if j >= 2 * m:
            lowerings += s.to_dict()["park_lower"] > 0
    assert (s.to_dict()["park_level"] < level) == (factor > 1)
    if factor == 3.0:
        assert lowerings > 0
    if factor == 30.0:
        assert s._state.n_unparks > falls


def test_schedulers_do_not_keep_the_callers_page_model():
    """The compiled state holds what a scheduler needs: the caller's PageModel is not kept alive (56 bytes a page
    of arrays at 10^7 pages), and ``pages`` rebuilds an equal model, bit for bit."""
    import sys

    from freshcore.sharding import ShardedScheduler

    rng = np.random.default_rng(8)
    pages = PageModel(rng.uniform(0.1, 2, 50), rng.uniform(0.1, 1, 50), rng.beta(0.25, 0.25, 50),
                      rng.uniform(0.1, 0.6, 50))
    before = sys.getrefcount(pages)
    for sched in (Scheduler(pages, 5.0), ShardedScheduler(pages, 5.0, 2)):
        assert sys.getrefcount(pages) == before
        rebuilt = sched.pages
        for name in ("change_rate", "importance", "recall", "false_rate", "alpha", "gamma", "beta"):
            np.testing.assert_array_equal(getattr(rebuilt, name), getattr(pages, name))


def test_signal_many_fast_path_records_what_the_checked_path_records():
    """int arrays of intp and float64 that are all valid skip the Python checks (one compiled pass decides): the
    same counted flags and decisions as lists going through the checks; a bad entry still gets the checked
    path's error, naming its index, and changes nothing."""
    rng = np.random.default_rng(12)
    pages = PageModel(rng.uniform(0.1, 2, 200), rng.uniform(0.1, 1, 200), rng.beta(0.25, 0.25, 200),
                      rng.uniform(0.1, 0.6, 200))
    fast, checked = Scheduler(pages, 20.0), Scheduler(pages, 20.0)
    for _ in range(50):
        fast.run(7)
        checked.run(7)
        ids = rng.integers(0, 200, 5).astype(np.intp)
        times = np.full(5, fast.time)
        a = fast.signal_many(ids, times)
        b = checked.signal_many(ids.tolist(), times.tolist())
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fast.run(300), checked.run(300))
    before = fast.to_dict()
    with pytest.raises(ValueError, match=r"times\[1\] = 1e-09 < .*, the last crawl of page"):
        fast.signal_many(np.array([3, 4], dtype=np.intp), np.array([fast.time, 1e-9]))
    fast.remove_pages([5])
    with pytest.raises(ValueError, match=r"pages\[0\] = 5 \(removed\)"):
        fast.signal_many(np.array([5], dtype=np.intp), np.array([fast.time]))
    assert fast.to_dict()["time"] == before["time"]


@pytest.mark.parametrize("value", ["greedy", "exact"])
def test_clustered_keys_horizon_moves_stay_exact(value):
    # from the all-equal start the parked pages come due in clumps: a move of the horizon by m/32 ticks would
    # put more than 2m/32 + 256 of them in the calendar at once, so it comes nearer (halved) first (at m = 2000
    # Greedy halves it 14 times over these ticks); the decisions stay the brute force's
    rng = np.random.default_rng(5)
    m = 2000
    pages = PageModel(rng.uniform(0, 1, m), rng.uniform(0, 1, m))
    s = Scheduler(pages, m / 10.0, value=value)
    ref = Reference(pages, m / 10.0, value=value)
    for j in range(6 * m):
        assert s.next() == ref.next(), f"tick {j}"
    from freshcore import _schedule

    sizes = s._state.bucket_sizes()
    assert sizes[_schedule.PARK_CODE] + sizes[_schedule.FAR_CODE] > m // 2
