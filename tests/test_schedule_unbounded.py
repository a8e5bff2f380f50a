"""Pages whose value cannot be computed in bounded time: a clear error from the schedulers, the state unchanged.

``crawl_value`` refuses a page whose series would run past ``MAX_TERMS`` terms where no closed form applies
(recall 1 - 1e-9 with 10^8 false signals per unit time: beta = 10, and the series has one term per beta of
tau_eff, so the cap is at tau_eff = (MAX_TERMS + 1) beta, about 1.05e7).  A scheduler that meets such a page
(at its first tick, at a later tick where the page is popped, or when a page is added, updated or signalled)
raises PageValueError (a ValueError) naming the page, its parameters and tau_eff, and is as before the call:
the same ``to_dict``, and with the page removed it continues as a twin restored from before the call.
Each evaluation of the page near the cap costs ~0.1 s (a million terms).
"""

from __future__ import annotations

import numpy as np
import pytest

from freshcore.pages import PageModel
from freshcore.schedule import Scheduler
from freshcore.sharding import ShardedScheduler
from freshcore.value import MAX_TERMS, PageValueError, crawl_value

from _state_files import same, state_equal

RECALL, FALSE_RATE = 1 - 1e-9, 1e8
BAD = PageModel([1.0], [1.0], [RECALL], [FALSE_RATE])
CAP = (MAX_TERMS + 1) * float(BAD.beta[0])  # the tau_eff past which BAD's value is refused
M = 20  # benign pages 0 .. M-1; the bad page is page M
MESSAGE = (rf"The crawl scheduler cannot evaluate page {{}} \(change_rate=1\.0, recall=0\.999999999, "
           rf"false_rate=100000000\.0\) at tau_eff=[0-9.e+]+ in bounded time: its series would run past {MAX_TERMS} "
           rf"terms")


def test_the_cap_is_where_the_tests_take_it():
    crawl_value(CAP - 1.0, BAD)
    with pytest.raises(PageValueError):
        crawl_value(CAP + 1.0, BAD)


def pages(bad_importance=1.0):
    """M benign pages and the bad one (last)."""
    rng = np.random.default_rng(1)
    return PageModel(np.r_[rng.uniform(0.5, 2.0, M), 1.0], np.r_[rng.uniform(0.5, 2.0, M), bad_importance],
                     np.r_[rng.uniform(0.0, 0.5, M), RECALL], np.r_[rng.uniform(0.1, 1.0, M), FALSE_RATE])


def scheduler(bad_last, value="exact", bad_importance=1.0, **kwargs):
    """The bad page crawled last at ``bad_last``; bandwidth 1 (ticks at 1, 2, ...)."""
    last = np.r_[-np.random.default_rng(2).uniform(0.0, 5.0, M), bad_last]
    terms = 2 * MAX_TERMS if value == "approx" else None  # (approx-j with more terms than the cap)
    return Scheduler(pages(bad_importance), 1.0, value=value, terms=terms, last_crawl=last, **kwargs)


def check_continues_as_twin(s, before, bad=M, n=300):
    """``s`` is as ``before`` (a to_dict): with the bad page removed, it continues as a twin restored from it."""
    assert same(s.to_dict(), before)
    twin = Scheduler.from_dict(before)
    s.remove_pages([bad])
    twin.remove_pages([bad])
    assert s.run(n).tolist() == twin.run(n).tolist()
    assert state_equal(s, twin)


def popped_soon(value="exact", groups=None, t=1.0):
    """An importance for the bad page, crawled last at -(CAP - 1.5): evaluable until t = 1 (tau_eff = CAP - 0.5),
    not after, and of value just below the best benign one of each group of pages (each shard's) at time t: not
    the first winner, but popped (the best) soon after."""
    terms = 2 * MAX_TERMS if value == "approx" else None
    last = np.random.default_rng(2).uniform(0.0, 5.0, M)  # (the benign pages' last crawls in scheduler, negated)
    benign = PageModel(*(getattr(pages(), k)[:M] for k in ("change_rate", "importance", "recall", "false_rate")))
    v = crawl_value(t + last, benign, value, terms)
    groups = (np.arange(M),) if groups is None else groups
    best = min(float(np.max(v[g[g < M]])) for g in groups)
    return 0.99 * best / float(crawl_value(CAP - 1.5 + t, BAD, value, terms)[0])


@pytest.mark.parametrize("value", ["exact", "approx"])
def test_a_tick_that_pops_the_page_past_the_cap_is_refused_and_changes_nothing(value):
    s = scheduler(-(CAP - 1.5), value, bad_importance=popped_soon(value))
    for tick in range(1, 30):
        before = s.to_dict()
        try:
            s.next()
        except PageValueError as e:
            assert isinstance(e, ValueError) and e.page == M and e.at > CAP
            assert tick > 1  # (the page was popped at a later tick: its line reaches the winning value)
            with pytest.raises(ValueError, match=MESSAGE.format(M) + r".* The tick is not taken"):
                s.next()  # (the same again: nothing moved)
            check_continues_as_twin(s, before)
            return
    pytest.fail("the page past the cap was never popped")


def test_the_first_tick_refuses_a_page_past_the_cap():
    s = scheduler(-2.0 * CAP)
    before = s.to_dict()
    with pytest.raises(PageValueError, match=MESSAGE.format(M)):
        s.next()
    assert not s.to_dict()["built"]
    check_continues_as_twin(s, before)


def test_run_keeps_the_ticks_before_the_refused_one():
    s = scheduler(-(CAP - 1.5), bad_importance=popped_soon())
    twin = Scheduler.from_dict(s.to_dict())
    taken = []
    with pytest.raises(PageValueError):
        while True:
            taken.append(twin.next())
    with pytest.raises(PageValueError, match=rf"At tick {len(taken) + 1} of 30: the first {len(taken)} were taken"):
        s.run(30)
    assert state_equal(s, twin)


def test_add_pages_refuses_a_page_past_the_cap_and_adds_none():
    s = scheduler(-5.0)  # (the bad page evaluable while it is not crawled: tau_eff stays below the cap)
    s.run(10)
    before = s.to_dict()
    new = PageModel([0.5, 1.0, 2.0], [1.0, 1.0, 1.0], [0.1, RECALL, 0.2], [0.5, FALSE_RATE, 0.3])
    with pytest.raises(PageValueError, match=MESSAGE.format(1) + r".* It is pages\[1\] of those added; none was"):
        s.add_pages(new, last_crawl=[s.time, -2.0 * CAP, s.time])
    check_continues_as_twin(s, before)


def test_update_pages_refuses_a_page_past_the_cap_and_updates_none():
    s = scheduler(-2.0 * CAP, bad_importance=0.0)  # of value 0 (never crawled) until it is updated
    s.run(10)
    before = s.to_dict()
    with pytest.raises(PageValueError, match=MESSAGE.format(M) + r".* None was updated"):
        s.update_pages([3, M], PageModel([1.0, 1.0], [1.0, 1.0], [0.5, RECALL], [0.5, FALSE_RATE]))
    check_continues_as_twin(s, before)


def test_a_signal_that_re_evaluates_a_page_past_the_cap_is_not_counted():
    # importance 5e-324: a slope that underflows, so a constant line (bucket 0), never popped, which a signal
    # re-evaluates; its tau_eff passes the cap after the first tick
    s = scheduler(-(CAP - 1.5), bad_importance=5e-324)
    s.run(3)
    assert s._state._buckets()[M] == 0
    before = s.to_dict()
    with pytest.raises(PageValueError, match=MESSAGE.format(M) + r".* The signal is not counted"):
        s.signal(M, s.time)
    assert same(s.to_dict(), before)
    with pytest.raises(PageValueError, match=r"At signal 2 of 2: the first 1 were recorded"):
        s.signal_many([4, M], [s.time, s.time])
    twin = Scheduler.from_dict(before)
    twin.signal(4, twin.time)
    check_continues_as_twin(s, twin.to_dict())


def test_sharded_scheduler_names_the_page_by_its_id():
    last = np.r_[-np.random.default_rng(2).uniform(0.0, 5.0, M), -(CAP - 1.5)]
    s = ShardedScheduler(pages(), 2.0, 2, last_crawl=last)  # (page M = 20 is page 10 of shard 0)
    assert s.local_index(M) != M
    groups = tuple(s.shard_pages(k) for k in range(2))
    first = float(min(s.tick_times(2)))
    bad = pages(popped_soon(groups=groups, t=first))
    s = ShardedScheduler(bad, 2.0, 2, last_crawl=last)
    for _ in range(60):
        before = s.to_dict()
        try:
            s.next()
        except PageValueError as e:
            assert e.page == M
            with pytest.raises(ValueError, match=MESSAGE.format(M) + r".* The tick is not taken"):
                s.next()
            assert same(s.to_dict(), before)
            twin = ShardedScheduler.from_dict(before)
            s.remove_pages([M])
            twin.remove_pages([M])
            assert s.run(200).tolist() == twin.run(200).tolist()
            assert state_equal(s, twin)
            break
    else:
        pytest.fail("the page past the cap was never popped")
    # a run of several decisions reports the page by its id too; the shards may then be out of step (one ticked,
    # another not), so the scheduler refuses to go on until it is restored from a state saved before the call
    s = ShardedScheduler(bad, 2.0, 2, last_crawl=last)
    saved = s.to_dict()
    with pytest.raises(PageValueError, match=MESSAGE.format(M) + ".*no longer in step"):
        s.run(60)
    for call in (s.next, lambda: s.run(3), lambda: s.signal(0, s.time), lambda: s.set_bandwidth(3.0), s.to_dict,
                 lambda: s.tick_times(2), lambda: s.remove_pages([1]), lambda: s.add_pages(PageModel([1.0], [1.0]))):
        with pytest.raises(RuntimeError, match=r"no longer in step .*a run of 60 decisions failed part-way"):
            call()
    s = ShardedScheduler.from_dict(saved).remove_pages([M])
    assert len(s.run(60)) == 60
    # added and updated pages are refused before any shard moves
    s = ShardedScheduler(pages(), 2.0, 2)
    s.run(4)
    before = s.to_dict()
    new = PageModel([0.5, 1.0, 2.0], [1.0, 1.0, 1.0], [0.1, RECALL, 0.2], [0.5, FALSE_RATE, 0.3])
    with pytest.raises(PageValueError, match=MESSAGE.format(1) + r".* It is pages\[1\] of those added"):
        s.add_pages(new, last_crawl=[0.0, -2.0 * CAP, 0.0])
    assert same(s.to_dict(), before)
    s = ShardedScheduler(pages(bad_importance=0.0), 2.0, 2, last_crawl=np.r_[np.zeros(M), -2.0 * CAP])
    s.run(4)
    before = s.to_dict()
    with pytest.raises(PageValueError, match=MESSAGE.format(M) + r".* None was updated"):
        s.update_pages([3, M], PageModel([1.0, 1.0], [1.0, 1.0], [0.5, RECALL], [0.5, FALSE_RATE]))
    assert same(s.to_dict(), before)
