"""simulate(..., polls=...): polled, lossy signal sources (issue 19, SPEC section 3b).

The reference for what each poll sees is a brute-force recount, page by page and poll by poll in plain Python,
over the signals of the same draws (``_events`` with the same seed, the code simulate draws them with).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from freshcore import PageModel, Scheduler, ShardedScheduler
from freshcore.policies import NutchAdaptive, RoundRobin
from freshcore.policy_simulation import PollSchedule, _events, simulate

M = 12
H = 40.0


def web(m=M, seed=3, recall=None, false_rate=None):
    rng = np.random.default_rng(seed)
    lam = rng.uniform(0.2, 1.0, m) if recall is None else recall
    nu = rng.uniform(0.1, 0.8, m) if false_rate is None else false_rate
    return PageModel(rng.uniform(0.1, 1.5, m), rng.uniform(0.1, 1.0, m), lam, nu)


class Recorder:
    """A round-robin policy that logs everything it is given: ("poll", t, pages, moved, lastmod), ("signal", t,
    page), ("tick", t, page)."""

    def __init__(self, m, bandwidth, lastmod=False):
        self.inner = RoundRobin(m, bandwidth)
        self.log = []
        self._lastmod = lastmod

    bandwidth = property(lambda self: self.inner.bandwidth)
    time = property(lambda self: self.inner.time)
    n_pages = property(lambda self: self.inner.n_pages)

    def next(self):
        p = self.inner.next()
        self.log.append(("tick", self.inner.time, p))
        return p

    def run(self, n):
        return np.array([self.next() for _ in range(n)], dtype=np.int64)

    def set_bandwidth(self, bandwidth):
        self.inner.set_bandwidth(bandwidth)
        return self

    def signal(self, page, t):
        self.log.append(("signal", t, page))
        return True

    def poll(self, pages, t, moved, **kw):
        assert pages.dtype == np.int64 and moved.dtype == bool and pages.shape == moved.shape
        assert set(kw) == ({"lastmod"} if self._lastmod else set())
        self.log.append(("poll", t, pages.copy(), moved.copy(), kw.get("lastmod")))

    def polls(self):
        """Per page: its poll times, moved flags and latest-move times, in order."""
        out = {i: ([], [], []) for i in range(self.n_pages)}
        for e in self.log:
            if e[0] == "poll":
                _, t, pages, moved, last = e
                for k, (p, mv) in enumerate(zip(pages.tolist(), moved.tolist())):
                    out[p][0].append(t)
                    out[p][1].append(mv)
                    out[p][2].append(math.nan if last is None else float(last[k]))
        return out


class SignalRecorder(Recorder):
    """No ``poll``: given the moved polls as signals."""

    poll = None  # type: ignore[assignment]

    def signal_many(self, pages, times):
        for p, t in zip(pages.tolist(), times.tolist()):
            self.log.append(("signal", t, p))
        return np.ones(len(pages), dtype=bool)


class Bare:
    """Neither ``poll`` nor ``signal``: round robin, told nothing."""

    def __init__(self, m, bandwidth):
        self.inner = RoundRobin(m, bandwidth)

    bandwidth = property(lambda self: self.inner.bandwidth)
    time = property(lambda self: self.inner.time)
    n_pages = property(lambda self: self.inner.n_pages)

    def next(self):
        return self.inner.next()

    def run(self, n):
        return self.inner.run(n)

    def set_bandwidth(self, bandwidth):
        self.inner.set_bandwidth(bandwidth)
        return self


def signals_of(pages, horizon, seed, signal_delay=None):
    """The signal arrivals of simulate's draws with this seed: a sorted list of times per page."""
    *_, sig_t, sig_p = _events(pages, horizon, np.random.default_rng(seed), signal_delay, "test")
    out = {i: [] for i in range(len(pages))}
    for t, p in zip(sig_t.tolist(), sig_p.tolist()):
        out[p].append(t)
    return out


def brute_force(arrivals, poll_times):
    """What each poll of one page sees, counted one arrival at a time: moved, latest move, moves hidden."""
    moved, latest, hidden = [], [], 0
    prev = -math.inf
    for t in poll_times:
        inside = [a for a in arrivals if prev < a <= t]
        moved.append(bool(inside))
        latest.append(max(inside) if inside else math.nan)
        hidden += max(0, len(inside) - 1)
        prev = t
    return moved, latest, hidden


def regular_times(w, phase, horizon):
    out, k = [], 0
    while phase + k * w <= horizon:
        if phase + k * w > 0:
            out.append(phase + k * w)
        k += 1
    return out


def check_against_brute_force(rec, res, pages, seed, times_of, signal_delay=None):
    arr = signals_of(pages, H, seed, signal_delay)
    seen = rec.polls()
    n_polls = n_moved = n_hidden = 0
    for i in range(len(pages)):
        want_t = times_of(i)
        got_t, got_m, got_l = seen[i]
        assert got_t == want_t, i
        moved, latest, hidden = brute_force(arr[i], want_t)
        assert got_m == moved, i
        if rec._lastmod:
            np.testing.assert_array_equal(np.array(got_l), np.array(latest))
        n_polls += len(want_t)
        n_moved += sum(moved)
        n_hidden += hidden
    assert (res.n_polls, res.n_polls_moved, res.n_moves_hidden) == (n_polls, n_moved, n_hidden)
    assert n_moved > 0 and n_hidden > 0  # the cases exercise collapsing


@pytest.mark.parametrize("delay", [None, 0.7, lambda rng, n: rng.uniform(0.0, 3.0, n)])
def test_moved_flags_shared_grid_match_brute_force(delay):
    pages = web()
    rec = Recorder(M, 3.0, lastmod=True)
    res = simulate(rec, pages, H, rng=5, polls=PollSchedule(1.5, lastmod=True), signal_delay=delay)
    check_against_brute_force(rec, res, pages, 5, lambda i: regular_times(1.5, 0.0, H), delay)


def test_moved_flags_per_page_intervals_and_phases():
    pages = web()
    w = np.linspace(0.3, 2.5, M)
    ph = w * np.linspace(0.0, 0.9, M)
    rec = Recorder(M, 2.0, lastmod=True)
    res = simulate(rec, pages, H, rng=8, polls=PollSchedule(w, phase=ph, lastmod=True), signal_delay=0.4)
    check_against_brute_force(rec, res, pages, 8, lambda i: regular_times(w[i], ph[i], H), 0.4)


def test_random_phases_are_regular_and_after_the_events():
    pages = web()
    rec = Recorder(M, 2.0)
    res = simulate(rec, pages, H, rng=9, polls=PollSchedule(0.8, phase="random", lastmod=False))
    seen = rec.polls()
    phases = []
    for i in range(M):
        t = np.array(seen[i][0])
        phases.append(t[0] % 0.8)
        np.testing.assert_allclose(np.diff(t), 0.8, rtol=0, atol=1e-12)
        assert 0 < t[0] <= 0.8 and t[-1] + 0.8 > H
    assert len(set(np.round(phases, 9))) == M  # one phase per page
    check_against_brute_force(rec, res, pages, 9, lambda i: seen[i][0])
    # the events are those of the run without polls
    plain = simulate(RoundRobin(M, 2.0), pages, H, rng=9)
    np.testing.assert_array_equal(res.change_counts, plain.change_counts)
    np.testing.assert_array_equal(res.request_times, plain.request_times)
    assert res.n_signals == plain.n_signals


def test_groups_are_polled_together():
    pages = web()
    groups = np.arange(M) % 3
    w = np.array([1.0, 0.5, 2.0])
    ph = np.array([0.25, 0.0, 1.0])
    rec = Recorder(M, 4.0, lastmod=True)
    res = simulate(rec, pages, H, rng=2, polls=PollSchedule(w, groups=groups, phase=ph, lastmod=True))
    check_against_brute_force(rec, res, pages, 2, lambda i: regular_times(w[groups[i]], ph[groups[i]], H))
    for e in rec.log:
        if e[0] == "poll":  # each call holds whole groups, each page once
            pages_t = e[2]
            assert len(set(pages_t.tolist())) == len(pages_t)
            for g in set(groups[pages_t].tolist()):
                assert set(pages_t[groups[pages_t] == g].tolist()) == set(np.flatnonzero(groups == g).tolist())
    # a shared interval and phase: one grid for every group (one call per poll time with all pages)
    rec = Recorder(M, 4.0)
    simulate(rec, pages, H, rng=2, polls=PollSchedule(1.0, groups=groups))
    calls = [e for e in rec.log if e[0] == "poll"]
    assert len(calls) == 40 and all(e[2].tolist() == list(range(M)) for e in calls)


def test_irregular_poll_times_per_page_and_per_group():
    pages = web()
    rng = np.random.default_rng(0)
    times = [np.sort(rng.uniform(0, H + 5, rng.integers(0, 30))) for _ in range(M)]
    times[0] = np.array([0.0, 1.0, 2.0, 41.0])  # a poll at time 0 and one after the horizon
    times[1] = np.empty(0)  # never polled
    rec = Recorder(M, 2.5, lastmod=True)
    res = simulate(rec, pages, H, rng=4, polls=PollSchedule(poll_times=times, lastmod=True), signal_delay=1.0)
    check_against_brute_force(rec, res, pages, 4, lambda i: [t for t in times[i].tolist() if t <= H], 1.0)
    assert rec.polls()[0][1][0] is False  # nothing moves by time 0
    groups = np.arange(M) % 2
    gt = [np.array([0.5, 3.0, 3.5, 20.0, 39.0]), np.arange(1.0, 41.0, 1.7)]
    rec = Recorder(M, 2.5)
    res = simulate(rec, pages, H, rng=4, polls=PollSchedule(poll_times=gt, groups=groups))
    check_against_brute_force(rec, res, pages, 4, lambda i: [t for t in gt[groups[i]].tolist() if t <= H])


def test_time_order_and_polls_before_ticks():
    pages = web()
    bandwidth = 4.0  # ticks at j/4, polls at k/2: every poll at a tick time
    rec = Recorder(M, bandwidth)
    res = simulate(rec, pages, H, rng=1, polls=0.5)
    times = [e[1] for e in rec.log]
    assert times == sorted(times)
    kinds = [e[0] for e in rec.log]
    for k, e in enumerate(rec.log):
        if e[0] == "poll":
            assert kinds[k + 1] == "tick" and rec.log[k + 1][1] == e[1]  # the tick at the same time comes after
    assert kinds.count("tick") == len(res.crawl_pages) == 160
    assert kinds.count("poll") == 80
    # every page at every one of its times, and the crawl log is the policy's
    seen = rec.polls()
    assert all(seen[i][0] == [k / 2 for k in range(1, 81)] for i in range(M))
    np.testing.assert_array_equal(res.crawl_pages, [e[2] for e in rec.log if e[0] == "tick"])
    np.testing.assert_array_equal(res.crawl_times, [e[1] for e in rec.log if e[0] == "tick"])


def test_run_batches_between_polls():
    """Stretches without polls go through one run(k) call: the calls follow the polls."""
    pages = web()
    calls = []

    class Counting(RoundRobin):
        def run(self, n):
            calls.append(n)
            return super().run(n)

        def poll(self, pages, t, moved):
            calls.append("poll")

    simulate(Counting(M, 10.0), pages, 20.0, rng=0, polls=2.0)
    # ticks at j/10, polls at 2, 4, ..., 20 (each before the tick at its time)
    assert calls == [19] + ["poll", 20] * 9 + ["poll", 1]


def test_fed_polls_are_signals_at_the_poll_times():
    pages = web()
    rec = Recorder(M, 3.0)
    res_p = simulate(rec, pages, H, rng=6, polls=1.25, signal_delay=0.3)
    sig = SignalRecorder(M, 3.0)
    res_s = simulate(sig, pages, H, rng=6, polls=1.25, signal_delay=0.3)
    want = sorted((t, int(p)) for e in rec.log if e[0] == "poll" and e[1] <= sig.time
                  for p, t in zip(e[2][e[3]], [e[1]] * int(e[3].sum())))
    got = sorted((t, p) for kind, t, p in sig.log if kind == "signal")
    assert got == want
    assert res_s.n_signals_counted == len(got) <= res_p.n_polls_moved
    assert (res_s.n_polls, res_s.n_polls_moved, res_s.n_moves_hidden) == (
        res_p.n_polls, res_p.n_polls_moved, res_p.n_moves_hidden)
    # the signals come before the tick at their time, in time order
    times = [e[1] for e in sig.log]
    assert times == sorted(times)
    # a policy with neither poll nor signal runs on the same events and is told nothing
    res_b = simulate(Bare(M, 3.0), pages, H, rng=6, polls=1.25, signal_delay=0.3)
    np.testing.assert_array_equal(res_b.crawl_pages, res_p.crawl_pages)
    assert res_b.n_signals_counted == 0 and res_b.n_polls == res_p.n_polls


def test_fed_polls_through_signal_alone_or_signal_many_alone():
    pages = web()

    class OnlySignal(Recorder):
        poll = None  # type: ignore[assignment]

    class OnlyMany(SignalRecorder):
        signal = None  # type: ignore[assignment]

    logs = []
    for cls in (SignalRecorder, OnlySignal, OnlyMany):
        rec = cls(M, 3.0)
        res = simulate(rec, pages, H, rng=12, polls=PollSchedule(0.9, phase="random"), signal_delay=0.2)
        logs.append(rec.log)
        assert res.n_signals_counted == sum(e[0] == "signal" for e in rec.log) > 0
    assert logs[0] == logs[1] == logs[2]


def test_same_events_for_every_policy():
    pages = web(40)
    polls = PollSchedule(0.7, phase="random")
    results = [
        simulate(make(), pages, 30.0, rng=11, polls=polls, signal_delay=0.5)
        for make in (lambda: Recorder(40, 8.0), lambda: SignalRecorder(40, 8.0), lambda: Bare(40, 8.0),
                     lambda: RoundRobin(40, 8.0), lambda: Scheduler(pages, 8.0, value="greedy"),
                     lambda: Scheduler(pages, 8.0, value="exact"), lambda: NutchAdaptive(40, 8.0),
                     lambda: ShardedScheduler(pages, 8.0, 2))
    ]
    plain = simulate(RoundRobin(40, 8.0), pages, 30.0, rng=11, signal_delay=0.5)
    for r in results:
        np.testing.assert_array_equal(r.change_counts, plain.change_counts)
        np.testing.assert_array_equal(r.request_counts, plain.request_counts)
        np.testing.assert_array_equal(r.request_times, plain.request_times)
        assert r.n_signals == plain.n_signals
        assert (r.n_polls, r.n_polls_moved, r.n_moves_hidden) == (
            results[0].n_polls, results[0].n_polls_moved, results[0].n_moves_hidden)
    assert 42 * 40 <= results[0].n_polls <= 43 * 40  # phi + 0.7 k in (0, 30]: 42 or 43 polls a page
    # the exact Scheduler counts the fed polls; the baselines and greedy do not
    assert results[5].n_signals_counted == results[1].n_signals_counted > 0
    assert results[3].n_signals_counted == 0


def test_tiny_poll_interval_approaches_continuous_signals():
    """Polls at every tick and finer (exact binary fractions, so polls fall on ticks): when no two moves of a
    page share a window, the exact value fed the polls makes the decisions it makes with the signals as
    they arrive; and the accuracy approaches the continuous one as w shrinks."""
    pages = web(30, seed=4)
    R = 8.0
    cont = simulate(Scheduler(pages, R, value="exact"), pages, 20.0, rng=3)
    fed = simulate(Scheduler(pages, R, value="exact"), pages, 20.0, rng=3, polls=1.0 / 1024)
    assert fed.n_moves_hidden == 0 and fed.n_polls_moved == fed.n_signals == cont.n_signals
    np.testing.assert_array_equal(fed.crawl_pages, cont.crawl_pages)
    assert fed.accuracy == cont.accuracy
    # statistically, on a larger web (6 seeds, paired): the gap closes as w -> 0
    pages = web(300, seed=5)
    gaps = {2.0: [], 0.25: [], 1.0 / 64: []}
    for seed in range(6):
        cont = simulate(Scheduler(pages, 60.0, value="exact"), pages, 60.0, rng=seed)
        for w, g in gaps.items():
            g.append(cont.accuracy - simulate(Scheduler(pages, 60.0, value="exact"), pages, 60.0, rng=seed,
                                              polls=w).accuracy)
    mean = {w: np.mean(g) for w, g in gaps.items()}
    se = {w: np.std(g, ddof=1) / math.sqrt(len(g)) for w, g in gaps.items()}
    assert mean[2.0] > 4 * se[2.0]  # coarse polls lose
    assert mean[2.0] > mean[0.25] > mean[1.0 / 64]
    assert abs(mean[1.0 / 64]) < 2.5 * se[1.0 / 64] + 1e-3


def test_polls_with_bandwidth_schedule_tick_times_and_observe():
    pages = web()
    rec = Recorder(M, 2.0)
    res = simulate(rec, pages, H, rng=3, polls=1.0, bandwidth_schedule=([10.0, 25.0], [5.0, 1.0]))
    times = [e[1] for e in rec.log]
    assert times == sorted(times) and res.n_polls == 40 * M
    sharded = simulate(ShardedScheduler(pages, 6.0, 3, value="exact"), pages, H, rng=3, polls=1.0)
    assert sharded.n_signals_counted > 0 and np.all(np.diff(sharded.crawl_times) >= 0)
    nutch = simulate(NutchAdaptive(M, 2.0), pages, H, rng=3, polls=1.0)
    assert len(nutch.crawl_pages) == 80 and nutch.n_signals_counted == 0


def test_no_polls_counts_zero_and_float_shorthand():
    pages = web()
    res = simulate(RoundRobin(M, 2.0), pages, H, rng=0)
    assert (res.n_polls, res.n_polls_moved, res.n_moves_hidden) == (0, 0, 0)
    a = simulate(Recorder(M, 2.0), pages, H, rng=0, polls=2.0)
    b = simulate(Recorder(M, 2.0), pages, H, rng=0, polls=PollSchedule(2.0))
    assert (a.n_polls, a.n_polls_moved, a.n_moves_hidden) == (b.n_polls, b.n_polls_moved, b.n_moves_hidden)
    assert a.n_polls == 20 * M


def test_schedule_properties_and_repr():
    s = PollSchedule([1.0, 0.5], groups=[0, 1, 1], phase=[0.5, 0.0], lastmod=True)
    assert s.n_groups == 2 and s.lastmod and s.poll_times is None
    assert s.groups.tolist() == [0, 1, 1] and s.poll_interval.tolist() == [1.0, 0.5]
    assert not s.poll_interval.flags.writeable
    assert "array of 2" in repr(s)
    t = PollSchedule(poll_times=[[1.0, 2.0]])
    assert t.phase is None and t.poll_interval is None and t.n_groups == 1 and "1 arrays" in repr(t)
    assert PollSchedule(1.0, phase="random").phase == "random"
    assert PollSchedule(2.0, groups=[0, 3]).n_groups == 4


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({}, ValueError, "exactly one of 'poll_interval'"),
        ({"poll_interval": 1.0, "poll_times": [[1.0]]}, ValueError, "exactly one"),
        ({"poll_interval": 0.0}, ValueError, r"'poll_interval'.*> 0.0; poll_interval\[0\] = 0.0"),
        ({"poll_interval": -1.0}, ValueError, "'poll_interval'"),
        ({"poll_interval": math.nan}, ValueError, "'poll_interval'"),
        ({"poll_interval": math.inf}, ValueError, "'poll_interval'"),
        ({"poll_interval": [1.0, 0.5, 0.0]}, ValueError, r"poll_interval\[2\] = 0.0"),
        ({"poll_interval": [1.0, math.nan]}, ValueError, r"poll_interval\[1\] = nan"),
        ({"poll_interval": "1"}, TypeError, "'poll_interval'"),
        ({"poll_interval": [[1.0]]}, ValueError, "'poll_interval'.*1-D"),
        ({"poll_interval": 1.0, "phase": 1.0}, ValueError, r"\[0, poll_interval\); phase = 1.0 >= poll_interval"),
        ({"poll_interval": 1.0, "phase": -0.1}, ValueError, "'phase'"),
        ({"poll_interval": 1.0, "phase": math.nan}, ValueError, "'phase'"),
        ({"poll_interval": [1.0, 0.5], "phase": [0.2, 0.5]}, ValueError, r"phase\[1\] = 0.5 >= poll_interval = 0.5"),
        ({"poll_interval": 1.0, "phase": "uniform"}, ValueError, "'phase'.*'random'"),
        ({"poll_interval": [1.0, 2.0], "phase": [0.0, 0.0, 0.0]}, ValueError, "same length"),
        ({"poll_interval": 1.0, "groups": [0, -1]}, ValueError, r"groups\[1\] = -1"),
        ({"poll_interval": 1.0, "groups": [0.0, 1.0]}, TypeError, "'groups'.*integer"),
        ({"poll_interval": 1.0, "groups": "ab"}, TypeError, "'groups'"),
        ({"poll_interval": 1.0, "groups": [[0]]}, ValueError, "'groups'.*1-D"),
        ({"poll_interval": [1.0, 2.0], "groups": [0, 1, 2]}, ValueError, r"groups in \[0, 2\).*groups\[2\] = 2"),
        ({"poll_times": [[1.0, 2.0], [3.0, 2.0]]}, ValueError, r"poll_times\[1\]\[1\] = 2.0 <= poll_times\[1\]\[0\]"),
        ({"poll_times": [[1.0, 1.0]]}, ValueError, r"strictly increasing; poll_times\[0\]\[1\]"),
        ({"poll_times": [[1.0, math.nan]]}, ValueError, r"poll_times\[0\]\[1\] = nan"),
        ({"poll_times": [[-1.0]]}, ValueError, r"poll_times\[0\]\[0\] = -1.0"),
        ({"poll_times": np.ones((2, 2))}, TypeError, "'poll_times'.*sequence"),
        ({"poll_times": "12"}, TypeError, "'poll_times'"),
        ({"poll_times": [[1.0]], "phase": 0.5}, ValueError, "'phase'.*regular polls"),
        ({"poll_times": [[1.0]], "groups": [0, 1]}, ValueError, r"groups\[1\] = 1"),
        ({"poll_interval": 1.0, "lastmod": 1}, TypeError, "'lastmod'"),
    ],
)
def test_bad_schedules(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        PollSchedule(**kwargs)


@pytest.mark.parametrize(
    "polls, exc, match",
    [
        (0.0, ValueError, "'polls' parameter of simulate must be a finite number > 0.0"),
        (-2.0, ValueError, "'polls'"),
        (math.nan, ValueError, "'polls'"),
        (True, TypeError, "'polls'.*PollSchedule"),
        ("1.0", TypeError, "'polls'.*PollSchedule"),
        (PollSchedule([1.0, 2.0]), ValueError, "per-page arrays of length 2 .*has 12 pages"),
        (PollSchedule(1.0, groups=[0, 1]), ValueError, r"groups of shape \(2,\) but 'pages' has 12"),
        (PollSchedule(poll_times=[[1.0]] * 3), ValueError, "length 3"),
        (PollSchedule(1e-9), ValueError, "page polls up to the horizon"),
    ],
)
def test_bad_polls_leave_policy_and_rng_untouched(polls, exc, match):
    pages = web()
    policy = Scheduler(pages, 2.0, value="exact")
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    with pytest.raises(exc, match=match):
        simulate(policy, pages, H, rng=rng, polls=polls)
    assert policy.time == 0.0 and rng.bit_generator.state == state
    # the policy is still new: a good run works and equals a fresh policy's
    a = simulate(policy, pages, H, rng=1, polls=1.0)
    b = simulate(Scheduler(pages, 2.0, value="exact"), pages, H, rng=1, polls=1.0)
    np.testing.assert_array_equal(a.crawl_pages, b.crawl_pages)


def test_object_without_signal_is_still_a_policy_for_simulate():
    res = simulate(Bare(M, 2.0), web(), H, rng=0)
    assert len(res.crawl_pages) == 80 and res.n_signals_counted == 0
    with pytest.raises(TypeError, match="lacks bandwidth, time, n_pages, next, run, signal, set_bandwidth"):
        simulate(object(), web(), H, polls=1.0)


def test_poll_schedule_pickled_under_policy_simulation_still_loads():
    """PollSchedule moved to freshcore.poll_schedule: a pickle made before names it
    freshcore.policy_simulation.PollSchedule (GLOBAL opcode, protocols 0-3), which must still load and poll alike."""
    import pickle

    s = PollSchedule([1.0, 2.5], groups=np.arange(M) % 2, phase="random", lastmod=True)
    new = pickle.dumps(s, protocol=2)
    here = b"cfreshcore.poll_schedule\nPollSchedule\n"
    assert here in new
    twin = pickle.loads(new.replace(here, b"cfreshcore.policy_simulation\nPollSchedule\n"))
    assert type(twin) is PollSchedule and repr(twin) == repr(s)
    pages = web()
    a = simulate(RoundRobin(M, 2.0), pages, H, rng=3, polls=s)
    b = simulate(RoundRobin(M, 2.0), pages, H, rng=3, polls=twin)
    assert a.n_polls > 0
    assert (a.accuracy, a.n_polls, a.n_polls_moved) == (b.accuracy, b.n_polls, b.n_polls_moved)
