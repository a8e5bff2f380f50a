"""Scheduler value kind "polled" (issue 19): state format 10 (crawl, poll and poll interval entries), its checks,
and the restored run, which continues as the uninterrupted one."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

from freshcore.pages import PageModel
from freshcore.schedule import Scheduler

from _reference import KINDS, PolledReference, kind_args, random_pages
from _state_files import HOWS, as_format_12, restore, state_equal, state_equal_but_lines

W_CHOICES = (0.3, 1.0, 3.0, math.inf)


def script(seed, m, n_ops):
    """A seeded list of operations: run, polls, set_bandwidth, add, remove and update pages."""
    rng = np.random.default_rng(seed)
    ops = []
    for _ in range(n_ops):
        u = rng.random()
        if u < 0.35:
            ops.append(("run", int(rng.integers(1, 2 * m))))
        elif u < 0.65:
            ops.append(("poll", int(rng.integers(2**32))))
        elif u < 0.75:
            ops.append(("rate", float(rng.uniform(0.05, 2.0) * m)))
        elif u < 0.85:
            ops.append(("add", int(rng.integers(2**32)), int(rng.integers(1, 4))))
        elif u < 0.92:
            ops.append(("remove", float(rng.random())))
        else:
            ops.append(("update", float(rng.random()), int(rng.integers(2**32))))
    return ops


def apply(s, op, out, ref=None):
    """Apply op to scheduler s (and to the reference, if given); decisions to out."""
    ids = s.page_ids
    if op[0] == "run":
        if len(ids):
            got = s.run(op[1]).tolist()
            out.extend(got)
            if ref is not None:
                assert got == [ref.next() for _ in got]
    elif op[0] == "poll":
        if len(ids):
            rng = np.random.default_rng(op[1])
            k = int(rng.integers(1, 2 * len(ids) + 1))
            pages = rng.choice(ids, k)
            t = max(s.time, float(s._state.polled_view(1)[pages].max())) + float(rng.uniform(0.0, 0.3))
            moved = rng.random(k) < 0.4
            s.poll(pages, t, moved)
            if ref is not None:
                ref.poll(pages, t, moved)
    elif op[0] == "rate":
        s.set_bandwidth(op[1])
        if ref is not None:
            ref.set_bandwidth(op[1])
    elif op[0] == "add":
        rng = np.random.default_rng(op[1])
        pages = random_pages(rng, op[2], degenerate=False, duplicates=False)
        last = s.time - rng.uniform(0, 2, op[2])
        w = rng.choice(W_CHOICES, op[2])
        new = s.add_pages(pages, last_crawl=last, poll_interval=w).tolist()
        out.append(new)
        if ref is not None:
            assert ref.add(pages, last, w) == new
    elif op[0] == "remove":
        if len(ids) > 1:
            j = int(ids[int(op[1] * len(ids))])
            s.remove_pages([j])
            if ref is not None:
                ref.remove([j])
    elif len(ids):
        j = int(ids[int(op[1] * len(ids))])
        rng = np.random.default_rng(op[2])
        page = random_pages(rng, 1, degenerate=False, duplicates=False)
        w = float(rng.choice(W_CHOICES))
        s.update_pages([j], page, poll_interval=w)
        if ref is not None:
            ref.update([j], page, w)


def new(seed, m, w_choices=W_CHOICES):
    rng = np.random.default_rng(seed)
    pages = random_pages(rng, m)
    w = rng.choice(w_choices, m)
    last = -rng.uniform(0.0, 3.0, m)
    return pages, w, last


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_restore_continues_the_uninterrupted_run(tmp_path, how, seed):
    """Seed 3 polls every 0.01-0.1: its popped pages are bounded first, and lose or wait (``_evaluate``), which
    must not depend on the order in which tied lines leave a heap (a restored state does not keep it)."""
    m = 25
    pages, w, last = new(seed, m, (0.01, 0.03, 0.1, math.inf) if seed == 3 else W_CHOICES)
    first, second = script(seed, m, 10), script(seed + 100, m, 10)
    whole = Scheduler(pages, m / 5.0, value="polled", poll_interval=w, last_crawl=last)
    ref = PolledReference(pages, m / 5.0, w, last)
    want: list = []
    for op in first + second:
        apply(whole, op, want, ref)
    part = Scheduler(pages, m / 5.0, value="polled", poll_interval=w, last_crawl=last)
    got: list = []
    for op in first:
        apply(part, op, got)
    restored = restore(part, how, tmp_path)
    assert state_equal(restored, part)
    for op in second:
        apply(restored, op, got)
    assert got == want
    # bit-identical structures: the same evaluations and final state
    assert restored._state.n_evaluations == whole._state.n_evaluations
    assert state_equal(restored, whole)


@pytest.mark.parametrize("how", ["dict", "save"])
@pytest.mark.parametrize("seed", [9, 21, 38])
def test_restore_continues_the_run_of_bounded_pages(tmp_path, how, seed):
    """Polls every 0.002-0.01 (pages popped past 32 windows are bounded first, and lose or wait), last crawls
    in ties (pages crawled together share lines), 50 operations with rate steps (falls of the park level).
    A fall evaluates every parked page in the calendar's order, which a restored state does not keep: taking the
    bounds that reach the best value at once (not after the fall, in the order of the bounds) made a loser keep
    its value or its bound as that order fell, 1-2 evaluations apart at these seeds (of 40 tried: 4)."""
    m = 40
    pages, w, last = new(seed, m, (0.002, 0.005, 0.01))
    last = np.round(last)
    first, second = script(seed, m, 25), script(seed + 100, m, 25)
    whole = Scheduler(pages, m / 5.0, value="polled", poll_interval=w, last_crawl=last)
    want: list = []
    for op in first + second:
        apply(whole, op, want)
    part = Scheduler(pages, m / 5.0, value="polled", poll_interval=w, last_crawl=last)
    got: list = []
    for op in first:
        apply(part, op, got)
    restored = restore(part, how, tmp_path)
    for op in second:
        apply(restored, op, got)
    assert got == want
    assert restored._state.n_evaluations == whole._state.n_evaluations
    assert state_equal(restored, whole)


def test_restored_scheduler_matches_brute_force():
    m = 40
    pages, w, last = new(5, m)
    s = Scheduler(pages, 8.0, value="polled", poll_interval=w, last_crawl=last)
    ref = PolledReference(pages, 8.0, w, last)
    out: list = []
    for block in range(4):
        for op in script(50 + block, m, 6):
            if op[0] in ("run", "poll", "rate"):
                apply(s, op, out, ref)
        s = pickle.loads(pickle.dumps(s)) if block % 2 else Scheduler.from_dict(s.to_dict())
    assert len(out) > 0


def test_copies_are_independent():
    pages = PageModel([1.0, 0.5, 0.25], [1.0, 1.0, 1.0], recall=0.5, false_rate=0.1)
    s = Scheduler(pages, 1.0, value="polled", poll_interval=0.5)
    s.run(4)
    for c in (copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
        assert c is not s and c._state is not s._state
        c.run(3)
        c.poll([0], c.time, [True])
        assert s.time == 4.0 and c.time == 7.0
        assert s._state.polled_view(1)[0] == 0.0


def test_compiled_state_pickles():
    pages, w, last = new(8, 30)
    s = Scheduler(pages, 6.0, value="polled", poll_interval=w, last_crawl=last)
    s.run(40)
    s.poll(np.arange(30), s.time, np.arange(30) % 3 == 0)
    st2 = pickle.loads(pickle.dumps(s._state))
    out1, out2 = np.empty(50, dtype=np.intp), np.empty(50, dtype=np.intp)
    s._state.run(50, out1)
    st2.run(50, out2)
    assert out1.tolist() == out2.tolist()
    assert st2.n_evaluations == s._state.n_evaluations


def test_to_dict_contents():
    pages = PageModel([1.0, 2.0], [1.0, 3.0], recall=[0.25, 0.5], false_rate=[0.5, 0.0])
    s = Scheduler(pages, 2.0, value="polled", poll_interval=[0.5, math.inf], last_crawl=[-1.0, 0.0])
    s.run(2)
    s.poll([0, 1], 1.25, [False, True])
    d = s.to_dict()
    assert d["format_version"] == Scheduler.FORMAT_VERSION == 13
    assert (d["value"], d["terms"], d["signal_delay"]) == ("polled", None, 0.0)
    np.testing.assert_array_equal(d["crawl"], s.last_crawl)
    np.testing.assert_array_equal(d["poll"], [1.25, 1.25])
    np.testing.assert_array_equal(d["poll_interval"], [0.5, math.inf])
    np.testing.assert_array_equal(d["last"], s._state.polled_view(0))
    assert (d["ncis"] == 0).all()
    # the other kinds write last, last and inf
    for kind in KINDS:
        e = Scheduler(pages, 2.0, last_crawl=[-1.0, 0.0], **kind_args(kind))
        e.run(3)
        d = e.to_dict()
        np.testing.assert_array_equal(d["crawl"], d["last"])
        np.testing.assert_array_equal(d["poll"], d["last"])
        np.testing.assert_array_equal(d["poll_interval"], [math.inf, math.inf])


@pytest.mark.parametrize("value", KINDS)
def test_format_9_states_still_load(value):
    # format 9 had no crawl, poll or poll interval entries: a state of every other kind loads and continues as the
    # scheduler it was saved from
    rng = np.random.default_rng(9)
    m = 200
    s = Scheduler(random_pages(rng, m), m / 10.0, last_crawl=-rng.uniform(0.0, 10.0, m), **kind_args(value))
    s.run(2 * m)
    d = as_format_12(s.to_dict())
    old = {k: v for k, v in d.items() if k not in ("crawl", "poll", "poll_interval")}
    old["format_version"] = 9
    loaded = Scheduler.from_dict(old)
    assert state_equal_but_lines(loaded, s)
    assert loaded.run(m).tolist() == s.run(m).tolist()


def test_a_proven_change_round_trips():
    # nu = 0: a move after the crawl sets the effective start to -inf (s = inf), which the state holds
    pages = PageModel([1.0, 1.0], [1.0, 1.0], recall=0.9, false_rate=0.0)
    s = Scheduler(pages, 10.0, value="polled", poll_interval=1.0)
    s.poll([0], 0.05, [True])
    d = s.to_dict()
    assert d["last"][0] == -math.inf
    loaded = Scheduler.from_dict(d)
    assert state_equal(loaded, s)
    got = loaded.run(4).tolist()
    assert got == s.run(4).tolist() and got[0] == 0


def test_from_dict_rejects_inconsistent_polled_state():
    rng = np.random.default_rng(3)
    pages, w, last = new(3, 20)
    s = Scheduler(pages, 4.0, value="polled", poll_interval=w, last_crawl=last)
    s.run(30)
    s.poll(np.arange(20), s.time + 1.0, rng.random(20) < 0.5)
    good = s.to_dict()
    Scheduler.from_dict(good)

    def with_(**kw):
        return {**good, **kw}

    def at(name, i, v):
        a = np.array(good[name], copy=True)
        a[i] = v
        return a

    cases = [
        (with_(poll_interval=at("poll_interval", 2, 0.0)), r"'poll_interval' entry.*> 0.0; poll_interval\[2\]"),
        (with_(poll_interval=at("poll_interval", 2, math.nan)), r"poll_interval.*NaN"),
        (with_(poll_interval=good["poll_interval"][:-1]), "'poll_interval' entry.*must have shape"),
        (with_(crawl=at("crawl", 4, good["time"] + 1.0)), r"'crawl' entry.*must not be after 'time'.*page 4"),
        (with_(crawl=at("crawl", 4, math.inf)), r"'crawl' entry.*finite"),
        (with_(poll=at("poll", 4, math.nan)), r"'poll' entry.*finite"),
        (with_(last=at("last", 5, math.nan)), r"'last' entry.*NaN"),
        (with_(last=at("last", 5, good["poll"][5] + 1.0)), r"'last' entry.*later of 'time' and 'poll'.*page 5"),
        (with_(ncis=at("ncis", 6, 2)), r"'ncis' entry.*must be 0 with value 'polled'.*page 6 has 2"),
        (with_(signal_delay=0.5), r"'signal_delay' entry.*must be 0 with value 'polled'"),
    ]
    for d, msg in cases:
        with pytest.raises(ValueError, match=msg):
            Scheduler.from_dict(d)
    # -inf is an effective start only under "polled"
    exact = Scheduler(pages, 4.0).to_dict()
    minus_inf = np.array(exact["last"], copy=True)
    minus_inf[1] = -math.inf
    with pytest.raises(ValueError, match=r"'last' entry.*must be finite; last\[1\] = -inf"):
        Scheduler.from_dict({**exact, "last": minus_inf})
    Scheduler.from_dict({**good, "last": at("last", 1, -math.inf)})
