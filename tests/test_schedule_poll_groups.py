"""Poll groups of the polled Scheduler (issue 19, acceptance 3): ``poll_group(group, t, moved)`` polls every
live page of a group (a sitemap) at once, the unmoved windows applied lazily; ``last_poll=``; polls before the
scheduler's time (review finding 5).  Every decision equals the brute force of :class:`GroupReference`, which
polls every page of a group one by one."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from freshcore import _schedule
from freshcore.pages import PageModel
from freshcore.schedule import MAX_POLL_GROUPS, Scheduler
from freshcore.sharding import ShardedScheduler

from _reference import PolledReference, random_pages
from _state_files import HOWS, as_format_12, restore, state_equal, state_equal_but_lines

W_CHOICES = (0.3, 1.0, 3.0, math.inf)


class GroupReference(PolledReference):
    """Brute force with poll groups: every live page's value at every tick (PolledReference), a group poll a loop
    over every live page of the group.  A moved page's poll is a per-page poll; an unmoved one leaves the page
    pending to the poll's time: its effective start is then one unmoved window from its start at its last own
    event (its crawl, a poll of it alone or moved, an update or a change of group) to its group's last poll, by
    the compiled shift kernel -- the arithmetic the scheduler applies (the windows' lowerings add up; one window
    rounds differently from the sum of its pieces: ``test_lazy_windows_round_within_ulps``)."""

    def __init__(self, pages, rate, poll_interval, last=None, last_poll=None, groups=None):
        super().__init__(pages, rate, poll_interval, last)
        m = len(pages)
        if last_poll is not None:
            self.p = np.array(np.broadcast_to(np.asarray(last_poll, dtype=float), (m,)), copy=True)
        self.group = np.full(m, -1) if groups is None else np.array(np.broadcast_to(groups, (m,)), copy=True)
        self.pend = np.full(m, np.nan)  # the time of the group's last poll the page is pending to (NaN: none)
        self.anchor = self.ell  # (the effective start at the last own event; ``ell`` gives the effective one)

    # the effective starts, derived at every read
    @property
    def ell(self):
        return self._effective()

    @ell.setter
    def ell(self, value):
        self.anchor = value

    def _effective(self):
        out = np.array(self.anchor, copy=True)
        dl, _, lam, nu = self.params
        for j in np.flatnonzero(~np.isnan(self.pend)).tolist():
            if self.pend[j] > self.c[j]:
                out[j] = _schedule._poll_shift(self.anchor[j], self.c[j], self.p[j], self.pend[j], False, dl[j],
                                               lam[j], nu[j])
        return out

    @property
    def p_eff(self):
        return np.where(np.isnan(self.pend), self.p, np.fmax(self.p, self.pend))

    def own(self, j):
        if not np.isnan(self.pend[j]):
            self.anchor[j] = self._effective()[j]
            self.p[j] = max(self.p[j], self.pend[j])
            self.pend[j] = np.nan

    def next(self):
        self.k += 1
        t = self.origin + self.k / self.bandwidth
        self.time = t
        ids = self.ids
        best = int(ids[np.argmax(self.values(t, ids))])
        self.own(best)
        self.anchor[best] = self.c[best] = t
        return best

    def poll(self, pages, t, moved):
        dl, _, lam, nu = self.params
        for j, mv in zip(np.atleast_1d(pages).tolist(), np.atleast_1d(moved).tolist()):
            self.own(j)
            c, p0 = self.c[j], self.p[j]
            self.p[j] = t
            if t > c:
                self.anchor[j] = _schedule._poll_shift(self.anchor[j], c, p0, t, bool(mv), dl[j], lam[j], nu[j])

    def poll_group(self, g, t, moved):
        moved = set(np.atleast_1d(moved).tolist())
        for j in np.flatnonzero(self.alive & (self.group == g)).tolist():  # one by one
            if j in moved:
                self.poll([j], t, [True])
            elif np.isnan(self.pend[j]) and self.anchor[j] > max(self.c[j], self.p[j]):
                # a start after its window's (after an update or a poll before it): its unmoved window may be
                # capped, which one window from an earlier start would not see: polled now
                self.poll([j], t, [False])
            else:
                self.pend[j] = t  # one unmoved window more: pending to t

    def add(self, pages, last, w, last_poll=None, groups=None):
        anchor = self.anchor
        new = super().add(pages, last, w)
        n = len(pages)
        self.anchor = np.concatenate([anchor, np.broadcast_to(np.asarray(last, dtype=float), (n,))])
        if last_poll is not None:
            self.p[new] = last_poll
        self.group = np.concatenate([self.group, np.broadcast_to(-1 if groups is None else groups, (n,))])
        self.pend = np.concatenate([self.pend, np.full(n, np.nan)])
        return new

    def update(self, ids, pages, w=None):
        for j, d in zip(np.atleast_1d(ids).tolist(), pages.change_rate.tolist()):
            self.own(j)
            self.anchor[j] = _schedule._rescaled_start(self.anchor[j], self.time, self.params[0][j], d)
        for a, b in zip(self.params, (pages.change_rate, pages.importance, pages.recall, pages.false_rate)):
            a[ids] = b
        if w is not None:
            self.w[ids] = w

    def set_group(self, ids, labels):
        for j, g in zip(np.atleast_1d(ids).tolist(), np.broadcast_to(labels, (len(np.atleast_1d(ids)),)).tolist()):
            self.own(j)
            self.group[j] = g


def same_as_reference(s, ref):
    """The live pages' effective starts, crawls and last polls, bit for bit (a removed page's are not state)."""
    st, live = s._state, ref.alive
    np.testing.assert_array_equal(st.alive_mask(), live)
    np.testing.assert_array_equal(st.polled_view(0)[live], ref.ell[live])
    np.testing.assert_array_equal(st.last_crawl_view()[live], ref.c[live])
    np.testing.assert_array_equal(st.polled_view(1)[live], ref.p_eff[live])
    assert s.time == ref.time


def new_web(seed, m, n_groups=4):
    rng = np.random.default_rng(seed)
    pages = random_pages(rng, m)
    w = rng.choice(W_CHOICES, m)
    last = -rng.uniform(0.0, 3.0, m)
    last_poll = last - rng.uniform(0.0, 1.0, m) * (rng.random(m) < 0.5)
    groups = rng.integers(-1, n_groups, m)
    return pages, w, last, last_poll, groups


def script(seed, m, n_ops, n_groups=4):
    """A seeded list of operations: runs, group polls, per-page polls, set_bandwidth, add, remove, update,
    set_poll_group."""
    rng = np.random.default_rng(seed)
    ops = []
    for _ in range(n_ops):
        u = rng.random()
        if u < 0.3:
            ops.append(("run", int(rng.integers(1, m))))
        elif u < 0.6:
            ops.append(("group", int(rng.integers(0, n_groups)), int(rng.integers(2**32))))
        elif u < 0.7:
            ops.append(("poll", int(rng.integers(2**32))))
        elif u < 0.75:
            ops.append(("rate", float(rng.uniform(0.05, 2.0) * m)))
        elif u < 0.82:
            ops.append(("add", int(rng.integers(2**32)), int(rng.integers(1, 4)), n_groups))
        elif u < 0.87:
            ops.append(("remove", float(rng.random())))
        elif u < 0.94:
            ops.append(("update", float(rng.random()), int(rng.integers(2**32))))
        else:
            ops.append(("regroup", float(rng.random()), int(rng.integers(-1, n_groups))))
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
    elif op[0] == "group":
        g, rng = op[1], np.random.default_rng(op[2])
        labels = s.poll_groups
        members = ids[labels == g]
        polls = s._state.polled_view(1)
        floor = max([float(polls[members].max())] if len(members) else [-np.inf])
        gv = s._state.group_view(2)
        if gv is not None and g < len(gv):
            floor = max(floor, float(gv[g]))
        # before the scheduler's time where the pages allow it (review finding 5), else a little after
        t = floor + float(rng.uniform(0.0, 0.3)) if np.isfinite(floor) else s.time - float(rng.uniform(0, 1))
        moved = members[rng.random(len(members)) < 0.3]
        if len(moved) > 1 and rng.random() < 0.2:
            moved = np.concatenate([moved, moved[:1]])  # a repeat: an empty window
        rng.shuffle(moved)
        s.poll_group(g, t, moved)
        out.append(("g", g))
        if ref is not None:
            ref.poll_group(g, t, moved)
    elif op[0] == "poll":
        if len(ids):
            rng = np.random.default_rng(op[1])
            k = int(rng.integers(1, len(ids) + 1))
            pages = rng.choice(ids, k)
            t = float(s._state.polled_view(1)[pages].max()) + float(rng.uniform(0.0, 0.3))
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
        n = op[2]
        pages = random_pages(rng, n, degenerate=False, duplicates=False)
        last = s.time - rng.uniform(0, 2, n)
        last_poll = last - rng.uniform(0, 1, n)
        w = rng.choice(W_CHOICES, n)
        groups = rng.integers(-1, op[3], n)
        new = s.add_pages(pages, last_crawl=last, poll_interval=w, last_poll=last_poll, poll_group=groups).tolist()
        out.append(new)
        if ref is not None:
            assert ref.add(pages, last, w, last_poll, groups) == new
    elif op[0] == "remove":
        if len(ids) > 1:
            j = int(ids[int(op[1] * len(ids))])
            s.remove_pages([j])
            if ref is not None:
                ref.remove([j])
    elif op[0] == "regroup":
        if len(ids):
            j = int(ids[int(op[1] * len(ids))])
            s.set_poll_group([j], op[2])
            if ref is not None:
                ref.set_group([j], op[2])
    elif len(ids):
        j = int(ids[int(op[1] * len(ids))])
        rng = np.random.default_rng(op[2])
        page = random_pages(rng, 1, degenerate=False, duplicates=False)
        w = float(rng.choice(W_CHOICES))
        s.update_pages([j], page, poll_interval=w)
        if ref is not None:
            ref.update([j], page, w)


def build(seed, m, n_groups=4):
    pages, w, last, last_poll, groups = new_web(seed, m, n_groups)
    s = Scheduler(pages, m / 5.0, value="polled", poll_interval=w, last_crawl=last, last_poll=last_poll,
                  poll_group=groups)
    ref = GroupReference(pages, m / 5.0, w, last, last_poll, groups)
    return s, ref


# ---------------------------------------------------------------------------
# exactness: every decision the brute force's


@pytest.mark.parametrize("seed", range(6))
def test_group_polls_match_brute_force(seed):
    m = 30
    s, ref = build(seed, m)
    out: list = []
    prone = 0
    for op in script(seed, m, 300):
        apply(s, op, out, ref)
        prone = max(prone, s._state.n_prone)
    same_as_reference(s, ref)
    assert sum(isinstance(x, int) for x in out) > 1000
    assert prone > 0  # (pages polled one by one: their start after their window's)


def test_long_run_with_many_groups_matches_brute_force():
    # thousands of ticks: 1% groups polled in turn (the bench's shape), per-page polls and crawls mixed in
    m = 200
    s, ref = build(7, m, n_groups=20)
    rng = np.random.default_rng(8)
    decisions = 0
    for k in range(400):
        g = k % 20
        members = s.page_ids[s.poll_groups == g]
        t = max(s.time - 0.05, float(s._state.polled_view(1)[members].max()) if len(members) else -np.inf,
                float(s._state.group_view(2)[g]))
        moved = members[rng.random(len(members)) < 0.2]
        s.poll_group(g, t, moved)
        ref.poll_group(g, t, moved)
        if k % 37 == 0:
            j = s.page_ids[rng.integers(len(s.page_ids))]
            tp = float(s._state.polled_view(1)[j]) + 0.01
            s.poll([j], tp, [k % 2 == 0])
            ref.poll([j], tp, [k % 2 == 0])
        got = s.run(10).tolist()
        assert got == [ref.next() for _ in got]
        decisions += len(got)
    same_as_reference(s, ref)
    assert decisions == 4000


def test_group_poll_equals_per_page_polls_of_its_members():
    # poll_group(g, t, moved) and poll(members, t, flags): the same decisions (pages without duplicates: no tie
    # the few ulps of the lazy windows could flip) and effective starts within a few ulps
    rng = np.random.default_rng(11)
    m = 120
    pages = random_pages(rng, m, degenerate=False, duplicates=False)
    w = rng.choice((0.3, 1.0, 3.0), m)
    groups = rng.integers(0, 6, m)
    a = Scheduler(pages, 12.0, value="polled", poll_interval=w, poll_group=groups)
    b = Scheduler(pages, 12.0, value="polled", poll_interval=w)
    prone = 0
    for k in range(300):
        g = k % 6
        members = np.flatnonzero(groups == g)
        t = max(a.time, float(a._state.group_view(2)[g]))
        flags = rng.random(len(members)) < 0.15
        a.poll_group(g, t, members[flags])
        b.poll(members, t, flags)
        assert a.run(4).tolist() == b.run(4).tolist()
        if k % 25 == 7:  # new rates: some starts move after their window's (the prone pages, polled one by one)
            j = rng.choice(m, 5, replace=False)
            new = PageModel(pages.change_rate[j] * rng.uniform(0.5, 4.0, 5), pages.importance[j], pages.recall[j],
                            pages.false_rate[j])
            a.update_pages(j, new)
            b.update_pages(j, new)
            prone = max(prone, a._state.n_prone)
    ea, eb = a._state.polled_view(0), b._state.polled_view(0)
    assert (np.abs(ea - eb) <= 64 * np.spacing(np.abs(eb) + a.time)).all()
    assert (ea != eb).any()  # (the lazy windows do round differently)
    assert prone > 0
    np.testing.assert_array_equal(a._state.polled_view(1), b._state.polled_view(1))


def test_lazy_windows_round_within_ulps():
    # one unmoved window lambda (T - p) against the sum of its pieces: a few ulps of ell (the claim of the
    # reference's docstring)
    rng = np.random.default_rng(12)
    for _ in range(200):
        lam, ell, c = rng.random(), -rng.uniform(0, 5), 0.0
        times = np.cumsum(rng.uniform(0.0, 1.0, int(rng.integers(2, 60))))
        piece, p = ell, c
        for t in times:
            piece = _schedule._poll_shift(piece, c, p, t, False, 1.0, lam, 0.1)
            p = t
        whole = _schedule._poll_shift(ell, c, c, times[-1], False, 1.0, lam, 0.1)
        assert abs(whole - piece) <= 4 * len(times) * np.spacing(abs(times[-1]) + abs(ell))


def test_lazy_sync_is_path_independent():
    # a page popped (synced) after every group poll and one never popped until the end: the same bits
    pages = PageModel([0.5, 0.5, 2.0], [1.0, 1.0, 50.0], recall=[0.7, 0.7, 0.5], false_rate=0.2)
    s = Scheduler(pages, 1.0, value="polled", poll_interval=1.0, poll_group=[0, 0, -1], last_crawl=np.full(3, -5.0))
    for k in range(1, 40):
        s.poll_group(0, s.time + 0.1, [])
        if k % 3 == 0:
            s._state.polled_view(0)  # (a sync of every page: a read)
        s.run(1)
    ref = GroupReference(pages, 1.0, 1.0, np.full(3, -5.0), None, np.array([0, 0, -1]))
    for _ in range(1, 40):
        ref.poll_group(0, ref.time + 0.1, [])
        ref.next()
    same_as_reference(s, ref)


def test_polls_before_the_schedulers_time():
    # review finding 5: a poll needs only t >= each page's last poll
    pages = PageModel([1.0, 1.0, 0.5], [1.0, 1.0, 1.0], recall=0.8, false_rate=0.1)
    s = Scheduler(pages, 2.0, value="polled", poll_interval=0.5, last_poll=-1.0)
    ref = GroupReference(pages, 2.0, 0.5, None, -1.0)
    assert s.run(4).tolist() == [ref.next() for _ in range(4)]
    s.poll([0, 1, 2], 0.25, [False, True, False])  # before the time (2.0); page 0 crawled at 0.5 after it
    ref.poll([0, 1, 2], 0.25, [False, True, False])
    same_as_reference(s, ref)
    assert s.run(6).tolist() == [ref.next() for _ in range(6)]
    with pytest.raises(ValueError, match=r"must not precede the last poll of each page.*page 1 \(pages\[0\]\)"):
        s.poll([1], 0.2, [True])


def test_last_poll_starts_the_first_window():
    # a window (p, t] that straddles the crawl: its part before the crawl counts when it moves
    pages = PageModel([1.0, 1.0], [1.0, 1.0], recall=0.8, false_rate=0.1)
    a = Scheduler(pages, 1.0, value="polled", poll_interval=0.5, last_crawl=[0.0, 0.0], last_poll=[-0.5, 0.0])
    a.poll([0, 1], 0.5, [True, True])
    ell = a._state.polled_view(0)
    assert ell[0] > ell[1]  # the longer window (a part before the crawl) is weaker evidence of a change after it
    np.testing.assert_array_equal(a._state.polled_view(1), [0.5, 0.5])
    b = Scheduler(pages, 1.0, value="polled", poll_interval=0.5, last_crawl=[0.0, 0.0])
    np.testing.assert_array_equal(b._state.polled_view(1), [0.0, 0.0])  # default: the last crawl
    c = Scheduler(pages, 1.0, value="polled", poll_interval=0.5, last_crawl=[-1.0, 0.0], last_poll=-2.0)
    np.testing.assert_array_equal(c._state.polled_view(1), [-2.0, -2.0])  # a scalar: all
    ids = c.add_pages(pages, last_crawl=0.0, poll_interval=0.5, last_poll=[-1.0, -3.0])
    np.testing.assert_array_equal(c._state.polled_view(1)[ids], [-1.0, -3.0])


# ---------------------------------------------------------------------------
# state: save and restore


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("seed", [1, 2])
def test_restore_continues_the_uninterrupted_run(tmp_path, how, seed):
    m = 25
    first, second = script(seed, m, 40), script(seed + 100, m, 40)
    whole, ref = build(seed, m)
    want: list = []
    for op in first + second:
        apply(whole, op, want, ref)
    part, _ = build(seed, m)
    got: list = []
    for op in first:
        apply(part, op, got)
    restored = restore(part, how, tmp_path)
    assert state_equal(restored, part)
    for op in second:
        apply(restored, op, got)
    assert got == want
    assert restored._state.n_evaluations == whole._state.n_evaluations
    assert state_equal(restored, whole)


def test_to_dict_contents_and_format_10():
    pages = PageModel([1.0, 2.0, 0.5], [1.0, 3.0, 1.0], recall=[0.25, 0.5, 0.5], false_rate=[0.5, 0.1, 0.1])
    s = Scheduler(pages, 2.0, value="polled", poll_interval=0.5, poll_group=[1, 1, -1])
    s.run(2)
    s.poll_group(1, 1.25, [1])
    s.poll_group(1, 1.5, [])
    d = s.to_dict()
    assert d["format_version"] == 13
    np.testing.assert_array_equal(d["poll_group"], [1, 1, -1])
    np.testing.assert_array_equal(d["group_polls"], [0, 2])
    np.testing.assert_array_equal(d["group_time"], [-np.inf, 1.5])
    np.testing.assert_array_equal(d["group_seen"], [0, 1, 0])  # page 0: pending to both polls; page 1 to one
    np.testing.assert_array_equal(d["last"], s._state.polled_view(0))
    np.testing.assert_array_equal(s._state.polled_view(1), [1.5, 1.5, 0.0])
    # a format-10 dict (no groups) still loads, as no page in a group
    e = Scheduler(pages, 2.0, value="polled", poll_interval=0.5)
    e.run(3)
    old = {k: v for k, v in as_format_12(e.to_dict()).items() if "group" not in k}
    old["format_version"] = 10
    f = Scheduler.from_dict(old)
    assert state_equal_but_lines(f, e)
    assert f.run(5).tolist() == e.run(5).tolist()
    assert (f.poll_groups == -1).all()
    # other kinds: no groups
    x = Scheduler(pages, 2.0)
    dx = x.to_dict()
    assert (dx["poll_group"] == -1).all() and len(dx["group_polls"]) == 0 and x.poll_groups is None


def test_from_dict_rejects_inconsistent_groups():
    pages = PageModel([1.0, 2.0, 0.5], [1.0, 3.0, 1.0], recall=0.5, false_rate=0.1)
    s = Scheduler(pages, 2.0, value="polled", poll_interval=0.5, poll_group=[0, 1, -1])
    s.run(2)
    s.poll_group(0, 1.25, [])
    d = s.to_dict()

    def with_(**kw):
        e = dict(d)
        e.update(kw)
        return e

    cases = [
        (with_(poll_group=np.array([0, 2, -1])), "'poll_group'.*labels below the number of groups"),
        (with_(poll_group=np.array([0, -2, -1])), "'poll_group'"),
        (with_(group_seen=np.array([2, 0, 0])), "'group_seen'.*must not pass"),
        (with_(group_time=np.array([1.0])), r"'group_time'.*shape \(2,\)"),
        (with_(group_polls=np.array([-1, 0])), "'group_polls'"),
        (with_(group_anchor=np.array([0.0, np.nan, 0.0])), "'group_anchor'"),
        (with_(group_time=np.array([np.nan, 0.0])), "'group_time'"),
    ]
    for e, msg in cases:
        with pytest.raises(ValueError, match=msg):
            Scheduler.from_dict(e)
    x = Scheduler(pages, 2.0).to_dict()
    x["poll_group"] = np.array([0, -1, -1])
    with pytest.raises(ValueError, match=r"'poll_group'.*-1 in every slot"):
        Scheduler.from_dict(x)


def test_pickled_state_keeps_the_lazy_windows():
    s, ref = build(3, 20)
    for op in script(3, 20, 60):
        apply(s, op, [], ref)
    t = pickle.loads(pickle.dumps(s))
    a, b = s.run(40).tolist(), t.run(40).tolist()
    assert a == b == [ref.next() for _ in range(40)]


# ---------------------------------------------------------------------------
# bad input


def test_bad_group_polls_leave_state_unchanged():
    rng = np.random.default_rng(2)
    pages = random_pages(rng, 10)
    s = Scheduler(pages, 5.0, value="polled", poll_interval=1.0, poll_group=[0, 0, 0, 1, 1, 1, -1, -1, 0, 0])
    s.run(7)
    s.poll([3], s.time + 0.5, [True])  # page 3 (group 1): its last poll ahead of the time
    s.poll_group(0, s.time + 0.2, [0])
    s.remove_pages([9])
    t = s.time
    before = s.to_dict()
    cases = [
        ((-1, t + 0.3, []), ValueError, r"'group' parameter of Scheduler.poll_group"),
        ((MAX_POLL_GROUPS, t + 0.3, []), ValueError, r"'group' parameter"),
        ((0.5, t + 0.3, []), TypeError, r"'group' parameter"),
        ((0, math.nan, []), ValueError, r"'t' parameter of Scheduler.poll_group"),
        ((0, math.inf, []), ValueError, r"'t' parameter"),
        ((0, "x", []), TypeError, r"'t' parameter"),
        ((0, t + 0.1, []), ValueError, r"must not precede the last poll of the group.*of group 0; no poll"),
        ((1, t + 0.3, []), ValueError, r"t = .* < .*, the last poll of its page 3; no poll is recorded"),
        ((0, t + 0.3, [0, 3]), ValueError, r"'moved' parameter.*group 0; moved\[1\] = 3 is in group 1"),
        ((0, t + 0.3, [6]), ValueError, r"moved\[0\] = 6 is in no group"),
        ((0, t + 0.3, [8, 9]), ValueError, r"live page ids; moved\[1\] = 9 \(removed\)"),
        ((0, t + 0.3, [10]), ValueError, r"moved\[0\] = 10"),
        ((0, t + 0.3, [0.5]), (TypeError, ValueError), r"'moved'"),
        ((0, t + 0.3, np.array([0, 3], dtype=np.intp)), ValueError, r"moved\[1\] = 3 is in group 1"),
    ]
    for args, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            s.poll_group(*args)
        assert state_equal(Scheduler.from_dict(s.to_dict()), Scheduler.from_dict(before))
    # the fast path (intp ids, a float time) checks as much
    with pytest.raises(ValueError, match="last poll of its page 3"):
        s.poll_group(1, t + 0.3, np.array([4], dtype=np.intp))
    s.poll_group(1, t + 0.5, np.array([4], dtype=np.intp))
    s.poll_group(7, t, [])  # a group no page has: recorded, nothing polled
    assert s._state.group_view(2)[7] == t


def test_bad_last_poll_and_labels():
    pages = PageModel([1.0, 2.0], [1.0, 1.0], recall=0.5, false_rate=0.1)
    kw = dict(value="polled", poll_interval=1.0, last_crawl=[-1.0, 0.0])
    for bad, msg in [(math.nan, r"'last_poll' parameter of Scheduler.*last_poll\[0\] = nan"),
                     ([-2.0, math.inf], r"last_poll\[1\] = inf"),
                     ([-2.0, 0.5], r"not be after each page's last crawl.*last_poll\[1\] = 0.5 > 0.0"),
                     (-0.5, r"last_poll\[0\] = -0.5 > -1.0"),
                     ([0.0], r"length 2"),
                     ("x", r"'last_poll'")]:
        with pytest.raises((ValueError, TypeError), match=msg):
            Scheduler(pages, 1.0, last_poll=bad, **kw)
    for bad, msg in [([0, -2], r"'poll_group' parameter of Scheduler.*poll_group\[1\] = -2"),
                     ([0, MAX_POLL_GROUPS], r"poll_group\[1\]"),
                     ([0.0, 1.0], r"integer group labels"),
                     ([0], r"length 2")]:
        with pytest.raises((ValueError, TypeError), match=msg):
            Scheduler(pages, 1.0, poll_group=bad, **kw)
    with pytest.raises(ValueError, match="'last_poll' parameter of Scheduler is only used with value='polled'"):
        Scheduler(pages, 1.0, last_poll=0.0)
    with pytest.raises(ValueError, match="'poll_group' parameter of Scheduler is only used"):
        Scheduler(pages, 1.0, poll_group=0)
    s = Scheduler(pages, 1.0, **kw)
    s.run(2)
    with pytest.raises(ValueError, match=r"Scheduler.add_pages.*last_poll\[0\] = 2.5 > 2.0"):
        s.add_pages(pages, last_crawl=2.0, poll_interval=1.0, last_poll=[2.5, 1.0])
    with pytest.raises(ValueError, match=r"'poll_group' parameter of Scheduler.add_pages"):
        s.add_pages(pages, poll_interval=1.0, poll_group=[0, -3])
    assert s.n_pages == 2
    with pytest.raises(ValueError, match=r"'labels' parameter of Scheduler.set_poll_group.*labels\[0\] = -2"):
        s.set_poll_group([0], [-2])
    with pytest.raises(ValueError, match=r"distinct page ids"):
        s.set_poll_group([0, 0], 1)
    with pytest.raises(ValueError, match="exist only for value='polled'"):
        Scheduler(pages, 1.0).set_poll_group([0], 0)
    with pytest.raises(AttributeError, match="poll_group exists only for value='polled'"):
        Scheduler(pages, 1.0).poll_group(0, 1.0, [])
    assert not hasattr(Scheduler(pages, 1.0), "poll_group")


def test_regrouped_page_takes_the_new_groups_count():
    pages = PageModel([1.0, 1.0], [1.0, 1.0], recall=0.9, false_rate=0.1)
    s = Scheduler(pages, 1.0, value="polled", poll_interval=1.0, poll_group=[0, -1], last_crawl=np.full(2, -3.0))
    ref = GroupReference(pages, 1.0, 1.0, np.full(2, -3.0), None, np.array([0, -1]))
    for g, t in ((0, -2.0), (0, -1.5)):
        s.poll_group(g, t, [])
        ref.poll_group(g, t, [])
    s.set_poll_group([0, 1], [1, 0])  # page 0 keeps group 0's polls; page 1 joins group 0 after them
    ref.set_group([0, 1], [1, 0])
    s.poll_group(0, -1.0, [])
    ref.poll_group(0, -1.0, [])
    same_as_reference(s, ref)
    assert s.run(6).tolist() == [ref.next() for _ in range(6)]
    np.testing.assert_array_equal(s.poll_groups, [1, 0])


# ---------------------------------------------------------------------------
# the sharded scheduler


def test_sharded_group_polls_match_per_page_polls():
    rng = np.random.default_rng(21)
    m = 60
    pages = random_pages(rng, m, degenerate=False, duplicates=False)
    groups = rng.integers(0, 3, m)
    a = ShardedScheduler(pages, 6.0, 3, value="polled", poll_interval=1.0, poll_group=groups, last_poll=-0.5)
    b = ShardedScheduler(pages, 6.0, 3, value="polled", poll_interval=1.0, last_poll=-0.5)
    np.testing.assert_array_equal(a.poll_groups, groups)
    for k in range(60):
        g = k % 3
        members = np.flatnonzero(groups == g)
        t = a.time + 0.01
        flags = rng.random(len(members)) < 0.2
        a.poll_group(g, t, members[flags])
        b.poll(members, t, flags)
        assert a.run(3).tolist() == b.run(3).tolist()
    ids = a.add_pages(pages[:3], poll_interval=1.0, poll_group=[2, 2, 2])
    np.testing.assert_array_equal(a.poll_groups[-3:], [2, 2, 2])
    a.set_poll_group(ids[:1], 0)
    assert a.poll_groups[-3] == 0
    c = ShardedScheduler.from_dict(a.to_dict())
    a.poll_group(2, a.time + 0.1, ids[1:])
    c.poll_group(2, c.time + 0.1, ids[1:])
    assert a.run(12).tolist() == c.run(12).tolist()
    j = int(np.flatnonzero(groups == 1)[0])
    a.poll([j], a.time + 5.0, [False])
    with pytest.raises(ValueError, match=rf"the last poll of its page {j}"):
        a.poll_group(1, a.time + 1.0, [])
    with pytest.raises(ValueError, match=r"moved\[0\] = .* is in group"):
        a.poll_group(0, a.time + 6.0, [int(np.flatnonzero(groups == 1)[0])])


def test_moved_polls_leave_constant_bounds_alone():
    # a polled page whose cap mu/Delta is below the winning value sits in CONSTANT keyed by its cap, a bound at
    # every s: a moved poll (a group's or its own) re-evaluates nothing, and the decisions stay the brute force's
    rng = np.random.default_rng(31)
    m = 40
    pages = random_pages(rng, m, degenerate=False, duplicates=False)
    mu = pages.importance.copy()
    mu[:10] *= 1e-3  # caps far below the others' values
    pages = PageModel(pages.change_rate, mu, pages.recall, pages.false_rate)
    s = Scheduler(pages, 8.0, value="polled", poll_interval=1.0, poll_group=np.arange(m) % 2)
    ref = GroupReference(pages, 8.0, 1.0, None, None, np.arange(m) % 2)
    assert s.run(200).tolist() == [ref.next() for _ in range(200)]
    code = s._state._buckets()
    low = np.flatnonzero(code[:10] == 0)
    assert len(low) >= 3
    e0 = s._state.n_evaluations
    g = int(low[0]) % 2
    moved = low[low % 2 == g]
    s.poll_group(g, s.time, moved)
    ref.poll_group(g, ref.time, moved)
    s.poll(low, s.time, np.ones(len(low), dtype=bool))
    ref.poll(low, ref.time, np.ones(len(low), dtype=bool))
    assert s._state.n_evaluations == e0
    assert (s._state._buckets()[low] == 0).all()
    assert s.run(200).tolist() == [ref.next() for _ in range(200)]


def test_a_refused_value_in_a_moved_group_poll():
    # (tests/test_schedule_polled.py's page: the walk alone refuses its value past s ~ 1, which a moved poll
    # reaches) the group's poll is recorded but for the moved pages from the refused one on, whose windows stay
    # open from the group's previous poll; the message says so
    from freshcore import _polled
    from freshcore.value import PageValueError

    pages = PageModel([1.0, 1.0, 1.0], [1e300, 1e302, 1e300], recall=0.5, false_rate=0.3)
    s = Scheduler(pages, 20.0, value="polled", poll_interval=[3e-8, 1.0, 1.0], poll_group=0)
    old = _polled._set_mode(2)  # the walk only
    try:
        assert s.next() == 1
        t0 = s.time
        s.poll_group(0, t0, [])
        ell0 = np.array(s._state.polled_view(0))
        with pytest.raises(PageValueError, match=r"page 0 .*At the moved poll 2 of 3 of the group poll: the group's "
                                                 r"poll is recorded but for the moved pages from that one on"):
            s.poll_group(0, 0.07, [1, 0, 2])
        polls, ell = s._state.polled_view(1), s._state.polled_view(0)
        assert polls[1] == 0.07 and ell[1] < ell0[1]  # the moved poll before: recorded
        assert polls[0] == polls[2] == t0 and ell[0] == ell0[0] and ell[2] == ell0[2]  # not polled: still open
        assert s._state.group_view(2)[0] == 0.07 and s._state.group_view(1)[0] == 2
        s.poll([2], 0.07, [True])  # polled again, alone
        assert s._state.polled_view(1)[2] == 0.07 and s._state.polled_view(0)[2] < ell0[2]
    finally:
        _polled._set_mode(old)
