"""Baseline policies (issue 4): each rule of LDS, round robin, uniform random and Nutch's adaptive schedule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore.policies import LowDiscrepancy, NutchAdaptive, RoundRobin, UniformRandom

DAY = 86400.0


# ---- tick clock (shared) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: RoundRobin(3, 2.0),
    lambda: UniformRandom(3, 2.0, rng=0),
    lambda: LowDiscrepancy([1.0, 0.5, 0.5], 2.0),
    lambda: NutchAdaptive(3, 2.0),
])
def test_ticks_and_rate_changes(make):
    p = make()
    assert p.time == 0.0 and p.bandwidth == 2.0 and p.n_pages == 3
    p.next()
    assert p.time == 0.5
    p.run(3)
    assert p.time == 2.0
    assert p.set_bandwidth(4.0) is p
    p.next()
    assert p.time == 2.25
    p.run(4)
    assert p.time == 3.25
    assert p.signal(1, 3.3) is False
    assert p.signal_many(np.array([0, 2]), [3.3, 3.4]).tolist() == [False, False]
    with pytest.raises(ValueError, match=r"pages\[1\]"):
        p.signal_many([0, 3], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"times\[0\]"):
        p.signal_many([0], [math.inf])
    with pytest.raises(ValueError, match="same length"):
        p.signal_many([0, 1], [1.0])
    with pytest.raises(ValueError, match=r"'bandwidth' parameter of .*set_bandwidth"):
        p.set_bandwidth(0.0)
    assert p.bandwidth == 4.0
    with pytest.raises(ValueError, match="'page'"):
        p.signal(3, 1.0)
    with pytest.raises(ValueError, match="'t'"):
        p.signal(0, math.nan)
    with pytest.raises(ValueError, match="'n'"):
        p.run(-1)
    assert p.run(0).shape == (0,)


@pytest.mark.parametrize("make", [
    lambda: RoundRobin(5, 1.0),
    lambda: UniformRandom(5, 1.0, rng=3),
    lambda: LowDiscrepancy([0.3, 0.1, 0.4, 0.0, 0.2], 1.0),
    lambda: NutchAdaptive(5, 1.0),
])
def test_run_equals_next(make):
    a, b = make(), make()
    assert a.run(37).tolist() == [b.next() for _ in range(37)]
    assert a.time == b.time


# ---- round robin and uniform random ----------------------------------------------------------------------


def test_round_robin_order():
    p = RoundRobin(4, 1.0)
    assert p.run(6).tolist() == [0, 1, 2, 3, 0, 1]
    assert p.next() == 2


def test_uniform_random_is_uniform_and_seeded():
    a = UniformRandom(10, 1.0, rng=1).run(20000)
    counts = np.bincount(a, minlength=10)
    assert np.abs(counts - 2000).max() < 4 * math.sqrt(2000 * 0.9) + 1
    assert np.array_equal(a, UniformRandom(10, 1.0, rng=np.random.default_rng(1)).run(20000))
    assert not np.array_equal(a, UniformRandom(10, 1.0, rng=2).run(20000))


@pytest.mark.parametrize("cls", [RoundRobin, UniformRandom])
def test_round_robin_random_bad_input(cls):
    with pytest.raises(ValueError, match="'n_pages'"):
        cls(0, 1.0)
    with pytest.raises(TypeError, match="'n_pages'"):
        cls(2.5, 1.0)
    with pytest.raises(ValueError, match="'bandwidth'"):
        cls(2, -1.0)
    with pytest.raises(ValueError, match="'bandwidth'"):
        cls(2, math.inf)


def test_uniform_random_bad_rng():
    with pytest.raises(ValueError, match="'rng'"):
        UniformRandom(2, 1.0, rng=-3)
    with pytest.raises(TypeError, match="'rng'"):
        UniformRandom(2, 1.0, rng="a")


# ---- low discrepancy ----------------------------------------------------------------------------------------


def lds_reference(xi, rate, n):
    """Brute force: due times in a plain array, argmin with ties to the lowest index."""
    xi = np.asarray(xi, float)
    due = np.where(xi > 0, 1.0 / np.where(xi > 0, xi, 1.0), np.inf)
    out = []
    for _ in range(n):
        i = int(np.argmin(due))
        out.append(i)
        due[i] += 1.0 / xi[i]
    return out


@settings(max_examples=60, deadline=None)
@given(
    xi=st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 0.3, 1.7]), min_size=1, max_size=12).filter(
        lambda v: any(x > 0 for x in v)),
    n=st.integers(0, 80),
)
def test_low_discrepancy_equals_brute_force(xi, n):
    assert LowDiscrepancy(xi, 3.0).run(n).tolist() == lds_reference(xi, 3.0, n)


def test_low_discrepancy_rules():
    # earliest due first, ties to the lowest index, rate 0 never crawled
    p = LowDiscrepancy([1.0, 0.0, 2.0, 1.0], 4.0)
    assert p.run(8).tolist() == [2, 0, 2, 3, 2, 0, 2, 3]
    assert p.crawl_rate.tolist() == [1.0, 0.0, 2.0, 1.0]
    with pytest.raises(ValueError):
        p.crawl_rate[0] = 5.0


def test_low_discrepancy_empirical_rates_follow_targets():
    rng = np.random.default_rng(0)
    xi = rng.uniform(0, 1, 200)
    xi *= 50.0 / xi.sum()
    pages = LowDiscrepancy(xi, 50.0).run(50 * 400)
    counts = np.bincount(pages, minlength=200)
    assert np.abs(counts - 400 * xi).max() <= 2.0  # each page within a crawl or two of its quota


def test_low_discrepancy_shares_when_rates_do_not_sum_to_the_bandwidth():
    for rate in (2.0, 10.0):  # sum(xi) = 4: behind, then ahead of the due times
        counts = np.bincount(LowDiscrepancy([1.0, 2.0, 1.0], rate).run(400), minlength=3)
        assert np.abs(counts - np.array([100, 200, 100])).max() <= 1


def test_low_discrepancy_bad_input():
    with pytest.raises(ValueError, match="at least one entry > 0"):
        LowDiscrepancy([0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match=r"crawl_rate\[1\]"):
        LowDiscrepancy([1.0, -1.0], 1.0)
    with pytest.raises(ValueError, match=r"crawl_rate\[0\]"):
        LowDiscrepancy([math.nan, 1.0], 1.0)
    with pytest.raises(ValueError, match="'bandwidth'"):
        LowDiscrepancy([1.0], 0.0)
    with pytest.raises(TypeError, match="'crawl_rate'"):
        LowDiscrepancy(["a"], 1.0)


# ---- Nutch adaptive fetch schedule ---------------------------------------------------------------------------


def crawl(p, changed):
    page = p.next()
    if changed is not None:
        p.observe(page, changed)
    return page


def test_nutch_scaling_and_first_round():
    p = NutchAdaptive(4, 2.0)
    assert p.scale == pytest.approx(2.0 / (30 * DAY))
    assert p.intervals.tolist() == [2.0] * 4 and p.due_times.tolist() == [2.0] * 4
    assert [crawl(p, False) for _ in range(4)] == [0, 1, 2, 3]  # all due at m/R: index order


def test_nutch_changed_page_shrinks_without_sync_shift():
    p = NutchAdaptive(2, 1.0)  # I0 = 2, times t = 1, 2, ...
    crawl(p, True)  # t = 1
    assert p.intervals[0] == pytest.approx(1.6)  # I (1 - 0.2); delta = 0
    assert p.due_times[0] == pytest.approx(2.6)


def test_nutch_unchanged_page_grows_and_syncs_with_last_change():
    p = NutchAdaptive(2, 1.0)
    crawl(p, False)  # page 0 at t = 1, M = 0: I = 2.8, delta = 1, F = 1 - 0.3 + 2.8
    assert p.intervals[0] == pytest.approx(2.8)
    assert p.due_times[0] == pytest.approx(3.5)


def test_nutch_sync_delta_raises_interval_to_delta():
    p = NutchAdaptive(1, 1.0, initial_interval=30 * DAY, inc_rate=0.0)  # I0 = 1, no growth
    for _ in range(3):
        crawl(p, False)  # t = 1, 2, 3; delta = t > I -> I = delta
    assert p.intervals[0] == pytest.approx(3.0)
    assert p.due_times[0] == pytest.approx(3 - 0.9 + 3.0)


def test_nutch_no_sync_delta():
    p = NutchAdaptive(2, 1.0, sync_delta=False)
    crawl(p, False)
    assert p.intervals[0] == pytest.approx(2.8) and p.due_times[0] == pytest.approx(3.8)


def test_nutch_clamps_to_min_and_max():
    p = NutchAdaptive(1, 1.0, min_interval=25 * DAY, db_max_interval=None)  # I0 = 1: min = 25/30
    crawl(p, True)
    assert p.intervals[0] == pytest.approx(25 / 30)
    q = NutchAdaptive(1, 1.0, max_interval=33 * DAY, db_max_interval=None)  # max 1.1
    crawl(q, False)
    assert q.intervals[0] == pytest.approx(1.1)
    assert q.due_times[0] == pytest.approx(1 - 0.3 + 1.1)


def test_nutch_db_max_interval_requeues():
    # I0 = 1 (30 d); db max 36 d = 1.2; an unchanged crawl gives I = 1.4 > 1.2, F - t = 1.4 - 0.3 > 1.2
    p = NutchAdaptive(2, 2.0, db_max_interval=36 * DAY, requeue_now=True)
    crawl(p, False)  # page 0 at t = 0.5: delta = 0.5, I = 1.4, F - t = 1.4 - 0.15 = 1.25 > 1.2
    assert p.intervals[0] == pytest.approx(0.9 * 1.2)
    assert p.due_times[0] == pytest.approx(0.5)  # due now: most overdue next
    assert crawl(p, None) == 0
    # SPEC's form: I > db max -> I = 0.9 db max, due I after now
    s = NutchAdaptive(2, 2.0, db_max_interval=36 * DAY)
    crawl(s, False)
    assert s.intervals[0] == pytest.approx(0.9 * 1.2)
    assert s.due_times[0] == pytest.approx(0.5 + 0.9 * 1.2)
    assert crawl(s, None) == 1
    # within the limit nothing happens
    for flag in (False, True):
        q = NutchAdaptive(2, 2.0, db_max_interval=43 * DAY, requeue_now=flag)
        crawl(q, False)
        assert q.intervals[0] == pytest.approx(1.4) and q.due_times[0] == pytest.approx(1.25 + 0.5)


def test_nutch_unknown_status_keeps_interval():
    p = NutchAdaptive(2, 1.0, sync_delta=False)
    crawl(p, None)  # page 0 at t = 1, never observed
    crawl(p, None)  # page 1 at t = 2; page 0 is updated as STATUS_UNKNOWN first
    assert p.intervals[0] == pytest.approx(2.0) and p.due_times[0] == pytest.approx(3.0)


def test_nutch_crawls_the_most_overdue_page():
    p = NutchAdaptive(3, 1.0, sync_delta=False)  # I0 = 3, due 3, 3, 3
    assert crawl(p, True) == 0  # t = 1: I = 2.4, due 3.4
    assert crawl(p, False) == 1  # t = 2: I = 4.2, due 6.2
    assert crawl(p, True) == 2  # t = 3: due 5.4
    assert crawl(p, True) == 0  # t = 4: due 3.4 is the most overdue
    assert crawl(p, True) == 2  # t = 5: due 5.4 < 6.2


def test_nutch_observe_errors():
    p = NutchAdaptive(3, 1.0)
    page = p.next()
    with pytest.raises(ValueError, match="page crawled at the last tick"):
        p.observe(page + 1, True)
    with pytest.raises(TypeError, match="'changed'"):
        p.observe(page, 1)
    p.observe(page, True)
    with pytest.raises(ValueError, match="already observed"):
        p.observe(page, True)
    with pytest.raises(ValueError, match="'page'"):
        p.observe(7, True)


@pytest.mark.parametrize("kwargs, exc, name", [
    ({"n_pages": 0}, ValueError, "n_pages"),
    ({"bandwidth": 0.0}, ValueError, "bandwidth"),
    ({"inc_rate": 1.0}, ValueError, "inc_rate"),
    ({"dec_rate": -0.1}, ValueError, "dec_rate"),
    ({"min_interval": 0.0}, ValueError, "min_interval"),
    ({"max_interval": 10.0}, ValueError, "max_interval"),
    ({"initial_interval": -1.0}, ValueError, "initial_interval"),
    ({"sync_delta": 1}, TypeError, "sync_delta"),
    ({"requeue_now": "yes"}, TypeError, "requeue_now"),
    ({"sync_delta_rate": 1.5}, ValueError, "sync_delta_rate"),
    ({"db_max_interval": 0.0}, ValueError, "db_max_interval"),
])
def test_nutch_bad_input(kwargs, exc, name):
    args = {"n_pages": 3, "bandwidth": 1.0}
    args.update(kwargs)
    with pytest.raises(exc, match=f"'{name}' parameter of NutchAdaptive"):
        NutchAdaptive(args.pop("n_pages"), args.pop("bandwidth"), **args)


def test_every_policy_is_a_crawl_policy():
    """Scheduler, ShardedScheduler and the baselines satisfy the CrawlPolicy protocol; other objects do not."""
    from freshcore import CrawlPolicy, PageModel, Scheduler, ShardedScheduler

    pages = PageModel([1.0, 2.0, 0.5], [1.0, 1.0, 1.0])
    policies = [Scheduler(pages, 2.0), ShardedScheduler(pages, 2.0, 2), RoundRobin(3, 2.0), UniformRandom(3, 2.0),
                LowDiscrepancy([1.0, 0.5, 0.5], 2.0), NutchAdaptive(3, 2.0)]
    for p in policies:
        assert isinstance(p, CrawlPolicy), type(p).__name__
    assert not isinstance(object(), CrawlPolicy)
    assert not isinstance(pages, CrawlPolicy)
