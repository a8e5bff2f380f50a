"""Allocation failure in the compiled scheduler: a clear MemoryError, never a crash, and the state as before the call.

``freshcore._schedule._fail_allocation(k)`` makes the k-th allocation of the scheduler's compiled code fail
(once); every allocation of a scripted run is made to fail in turn.  The call that hit it must raise
MemoryError and leave the scheduler as it found it: retried, it gives the decisions and the state (``to_dict``,
what ``save`` writes: keys, buckets, evaluation counts) of a run that never failed.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from freshcore import _schedule
from freshcore.schedule import Scheduler
from freshcore.value import PageModel

from _state_files import first_memory_error

MESSAGE = "out of memory in the crawl scheduler"


@pytest.fixture(autouse=True)
def _no_injected_failure():
    _schedule._fail_allocation(0)
    yield
    _schedule._fail_allocation(0)


def pages(rng, m, signals=True):
    return PageModel(rng.lognormal(0.0, 1.0, m), rng.lognormal(0.0, 1.0, m),
                     recall=rng.uniform(0.0, 1.0, m) if signals else np.zeros(m),
                     false_rate=rng.uniform(0.0, 0.5, m) if signals else np.zeros(m))


def script(seed=3, m=300):
    """A seeded run touching every allocation site: build, ticks (heaps, scan, calendar, popped pages),
    added, updated and removed pages, signals, rate changes (the park's falls), a restore."""
    rng = np.random.default_rng(seed)
    ops = [("new", pages(rng, m), float(m) / 10.0, -rng.uniform(0.0, 10.0, m))]
    ops += [("next",)] * 400
    ops += [("add", pages(rng, 60)), ("next",)] * 3 + [("next",)] * 200
    ops += [("signal", int(j)) for j in rng.choice(m, 40, replace=False)] + [("next",)] * 100
    # (updated to the most important pages: above the park level, so they go to the slope buckets, which grow)
    new = pages(rng, 80)
    new = PageModel(new.change_rate, 100.0 * new.importance, new.recall, new.false_rate)
    ops += [("update", np.sort(rng.choice(m + 100, 80, replace=False)), new)] + [("next",)] * 200
    ops += [("rate", 3.0 * m / 10.0)] + [("next",)] * 300 + [("rate", m / 40.0)] + [("next",)] * 200
    ops += [("remove", np.arange(0, m, 3))] + [("next",)] * 300 + [("restore",)] + [("next",)] * 200
    return ops


def play(ops, value, fail_at=0, firsts=None):
    """Run ``ops``, the ``fail_at``-th allocation failing; every call that raises MemoryError is retried.

    Returns the decisions, the final state's dict and the names of the calls that raised; ``firsts`` (a dict,
    if given) receives for each kind of call the allocation count before the first of its calls that allocates.
    """
    raised = []

    def call(name, f, *args, **kwargs):
        try:
            return f(*args, **kwargs)
        except MemoryError as e:
            assert MESSAGE in str(e), str(e)
            raised.append(name)
            return f(*args, **kwargs)  # (the failure is once: the retry finds memory)

    _schedule._fail_allocation(fail_at)
    decisions = []
    s = None
    for op in ops:
        name = op[0]
        before = _schedule._allocation_count()
        if name == "new":
            s = call(name, Scheduler, op[1], op[2], value=value, last_crawl=op[3],
                     poll_interval=1.0 if value == "polled" else None)
        elif name == "next":
            decisions.append(call(name, s.next))
        elif name == "add":
            call(name, s.add_pages, op[1], poll_interval=0.5 if value == "polled" else None)
        elif name == "signal" and value == "polled":
            call(name, s.poll, [op[1]], s.time + 0.01, [True])  # (after the crawl: a rise, the page re-placed)
        elif name == "signal":
            call(name, s.signal, op[1], s.time)
        elif name == "update":
            ids = s.page_ids[op[1][op[1] < s.n_pages]]
            call(name, s.update_pages, ids, op[2][: len(ids)])
        elif name == "rate":
            call(name, s.set_bandwidth, op[1])
        elif name == "remove":
            call(name, s.remove_pages, op[1])
        elif name == "restore":
            s = call(name, Scheduler.from_dict, s.to_dict())
        if firsts is not None and name not in firsts and _schedule._allocation_count() > before:
            firsts[name] = before  # (the first call of this kind that allocates: its first allocation is next)
    _schedule._fail_allocation(0)
    return decisions, s.to_dict(), raised


def same_state(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
        else:
            assert a[k] == b[k], k


def check_failures(value, every):
    ops = script()  # (under "polled" a "signal" is a moved poll)
    n0 = _schedule._allocation_count()
    firsts = {}
    want, want_state, raised = play(ops, value, firsts=firsts)
    n = _schedule._allocation_count() - n0
    assert raised == [] and n > 100
    sites = set()
    # every allocation of the first 150 (construction, build, first ticks), then a sample of the others, and
    # the first allocation of each kind of call (which the sample may miss)
    ks = set(range(1, 151)) | set(range(151, n + 1, 1 if every else max(1, (n - 150) // 150 + 1)))
    ks |= {c - n0 + 1 for c in firsts.values() if c - n0 < n}
    for k in sorted(ks):
        got, got_state, raised = play(ops, value, fail_at=k)
        assert len(raised) <= 1  # (0: the k-th allocation was a shrink, which may fail: the array stays larger)
        sites.update(raised)
        assert got == want, (k, raised)
        same_state(got_state, want_state)
    # every kind of call met a failure somewhere
    assert {"new", "next", "add", "update", "restore"} <= sites, sites
    if value == "cis":
        assert "signal" in sites, sites  # (a signal re-places its page; a moved poll of a polled page moves its key,
        # or re-places it in the bucket it left: no allocation)


@pytest.mark.parametrize("value", ["greedy", "cis", "exact", "polled"])
def test_allocation_failures_are_memory_errors_that_change_nothing(value):
    check_failures(value, every=False)


@pytest.mark.slow
@pytest.mark.parametrize("value", ["greedy", "cis", "exact", "polled"])
def test_every_allocation_failure_is_a_memory_error_that_changes_nothing(value):
    check_failures(value, every=True)


def test_set_bandwidth_without_memory_keeps_the_bandwidth():
    # the calendar's pages go back to FAR, which grows when they do not fit: a staggered start, run until the
    # winning value has settled and most pages are parked, then the pages of FAR removed (it shrinks) but for
    # ten, and those of the calendar (due within m/32 ticks) do not fit in its slack
    rng = np.random.default_rng(4)
    m = 20_000
    s = Scheduler(pages(rng, m, signals=False), m / 10.0, value="greedy", last_crawl=-rng.uniform(0.0, 10.0, m))
    s.run(3500)
    far = np.flatnonzero(s._state._buckets() == _schedule.FAR_CODE)
    s.remove_pages(far[10:])
    sizes = s._state.bucket_sizes()
    assert sizes[_schedule.PARK_CODE] > 100 and sizes[_schedule.FAR_CODE] == 10
    before = s.to_dict()
    _schedule._fail_allocation(1)
    with pytest.raises(MemoryError, match=r"changing the rate \(the rate is unchanged\)"):
        s.set_bandwidth(2 * m / 10.0)
    _schedule._fail_allocation(0)
    same_state(s.to_dict(), before)
    twin = Scheduler.from_dict(before)
    np.testing.assert_array_equal(s.set_bandwidth(2 * m / 10.0).run(2000), twin.set_bandwidth(2 * m / 10.0).run(2000))


def test_run_keeps_the_ticks_before_the_failure():
    rng = np.random.default_rng(5)
    model = pages(rng, 200)
    want = Scheduler(model, 20.0, value="greedy").run(3000)
    twin = Scheduler(model, 20.0, value="greedy")
    twin.run(1)
    n0 = _schedule._allocation_count()
    twin.run(2999)
    n = _schedule._allocation_count() - n0
    assert n > 2
    # an allocation of the twin's run from its middle on (the same here) that a tick needs
    def started():
        s = Scheduler(model, 20.0, value="greedy")
        s.run(1)
        return s

    s, message = first_memory_error(started, lambda s: s.run(2999), range(n // 2, n + 1))
    assert re.search(r"tick \d+ of 2999 \(the first \d+ were taken", message), message
    done = int(message.split("tick ")[1].split(" of")[0]) - 1
    assert 0 < done < 2999 and s.time == (1 + done) / 20.0
    np.testing.assert_array_equal(np.concatenate([want[:1 + done], s.run(3000 - 1 - done)]), want)


def test_signal_many_keeps_the_signals_before_the_failure():
    rng = np.random.default_rng(6)
    model = pages(rng, 100)
    a = Scheduler(model, 10.0, value="cis")
    a.run(300)
    b = Scheduler.from_dict(a.to_dict())
    p = rng.integers(0, 100, 50)
    t = np.full(50, a.time)
    _schedule._fail_allocation(1)
    try:
        a.signal_many(p, t)
        done = 50  # (no signal of this batch needed memory)
    except MemoryError as e:
        assert "were recorded, the others not" in str(e)
        done = int(str(e).split("signal ")[1].split(" of")[0]) - 1
    _schedule._fail_allocation(0)
    a.signal_many(p[done:], t[done:])
    b.signal_many(p, t)
    same_state(a.to_dict(), b.to_dict())
    np.testing.assert_array_equal(a.run(500), b.run(500))


def test_a_state_that_failed_to_load_refuses_every_call():
    rng = np.random.default_rng(7)
    s = Scheduler(pages(rng, 50), 5.0, value="greedy")
    s.run(200)
    d = s._state.export_state()
    params = (d["change_rate"], d["importance"], d["false_rate"], d["recall"])
    state = _schedule.SchedulerState(*params, 2, -1, d["rate"], d["signal_delay"])
    _schedule._fail_allocation(1)  # the first heap the import fills
    with pytest.raises(MemoryError, match="loading a state"):
        state.import_state(d)
    for call in (state.step, lambda: state.set_rate(1.0), state.export_state, lambda: state.signal(0, 1e9)):
        with pytest.raises(RuntimeError, match="incomplete"):
            call()
