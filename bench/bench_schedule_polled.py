"""Benchmarks of the polled-signal Scheduler (value "polled", issue 19) beside the exact one, with polls.

The web: ``bench_schedule.pages_instance`` (SPEC section 3's check distribution, seed 0: Delta, mu ~ U[0, 1],
lambda ~ Beta(0.25, 0.25), nu ~ U(0.1, 0.6)), R = m/10, last crawls staggered as ``scale_schedule.py``'s exact
runs (``scale_schedule.staggered``).  Polls: the pages split at random into 100 groups of 1% (a sitemap shard
each), group g polled at ``g w/100 + k w`` (every page every ``w``): a batch ``poll(pages, t, moved)`` every
``w R/100`` decisions, each flag drawn at the model's rate (a signal, true or false, in the window:
``1 - exp(-gamma w)``, ``gamma = lambda Delta + nu``).  The exact Scheduler is fed the same moves as signals
at the poll times (``signal_many``; what a caller of the exact value with the same sitemap does).

Group ``schedule polled m=... w=...``: each call is one batch of polls and the ``w R/100`` decisions to the
next (the same for all three: the ratios are per decision), from a state after a burn-in of ``m/5`` decisions
(not timed):

* baseline: the numpy brute force a user of the public API writes -- the effective starts moved by each
  batch (``polled_signals.window_staleness``, vectorised), then per tick ``polled_signals.polled_value`` of
  every page at ``s = Delta (t - ell)`` and ``np.argmax`` (the compiled value: a generous baseline);
* freshcore: the polled Scheduler (``poll`` then ``run``);
* freshcore: the exact Scheduler fed the same moves as signals (``signal_many`` then ``run``): the issue's
  yardstick (polled within 2x of its cost per decision at 10^6 pages).

* freshcore: the polled Scheduler fed by group polls (``poll_group(g, t, moved)``, the groups given as
  ``poll_group=`` labels): only the moved pages listed, the unmoved windows applied lazily, O(moved) a batch as
  the exact Scheduler's ``signal_many``.

``extra_info`` records the decisions per call and the evaluations and polls (signals) per decision.

As a script, the issue's measurement at 10^6 pages (one thread; both schedulers in the same run, after the
same burn-in): microseconds per decision, process CPU per decision, evaluations per decision, and the ratio
polled/exact per decision, for each ``w``::

    PYTHONPATH=src:bench FRESHCORE_NUM_THREADS=1 python bench/bench_schedule_polled.py --sizes 1000000 --w 1 0.3

``--poll group`` feeds the polled Scheduler by ``poll_group`` (default ``each``: ``poll(ids, t, moved)`` of every
page of the batch), and ``--per-tick F`` is the issue's line read literally: one group of a fraction ``F`` of the
pages polled at every tick (``1/F`` groups, every page every ``1/F`` ticks: ``w = 1/(F R)``, ``--w`` ignored).
The table splits each kind's time per decision into its poll path (``poll``/``poll_group``; ``signal_many`` for
the exact kind) and its decisions (``run``); ``build s`` is the Scheduler's construction and first tick,
``burn-in s`` its calls in the burn-in (the start from the staggered crawls, not in the per-decision figures).
Only the Scheduler's calls are timed: the feed's random draws (a flag per polled page, ~45 us a tick at 10^6 with
``--per-tick 0.01``, and the moved ids picked out of the batch, ~1.3 us) are the simulator's work, not a
crawler's, whose sitemap diff gives the moved ids.  The benchmark group draws each batch in ``pedantic``'s setup,
so it is not timed there either.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pytest

from freshcore.polled_signals import polled_value, window_staleness
from freshcore.schedule import Scheduler

from benchutil import SMOKE, role, sizes

GROUPS = 100
ROUNDS = 2 if SMOKE else 30  # batches timed per benchmark (each drawn before its call: the draws not timed)


class PollFeed:
    """The batches of polls of a run: group g of the ``groups`` (100: 1% each) polled at ``origin + g w/groups +
    k w``."""

    def __init__(self, pages, w, origin, seed=3, groups=GROUPS):
        m = len(pages)
        self.rng = np.random.default_rng(seed)
        perm = self.rng.permutation(m)
        self.n_groups = groups
        self.groups = [np.sort(perm[g::groups]).astype(np.intp) for g in range(groups)]
        self.p_moved = -np.expm1(-pages.gamma * w)
        self.w, self.origin, self.k = w, origin, 0

    def labels(self, m):
        """Each page's group (int64 labels)."""
        out = np.empty(m, dtype=np.int64)
        for g, ids in enumerate(self.groups):
            out[ids] = g
        return out

    def next_batch(self):
        """(ids, time, moved) of the next batch, and its group."""
        g = self.k % self.n_groups
        t = self.origin + self.k * self.w / self.n_groups
        self.k += 1
        ids = self.groups[g]
        return ids, t, self.rng.random(len(ids)) < self.p_moved[ids], g


class Driver:
    """A scheduler ("polled": poll; "polled_group": poll_group of the moves; "exact": signal_many of the moves)
    and its feed of batches (``per_tick``: a group of that fraction of the pages polled every tick, ``w`` then
    ``1/(per_tick R)``)."""

    def __init__(self, m, value, w, seed=3, per_tick=None):
        from scale_schedule import staggered

        pages, rate, last = staggered(m)
        groups = GROUPS
        if per_tick is not None:
            groups = max(1, round(1.0 / per_tick))
            w = groups / rate
        feed = PollFeed(pages, w, 0.0, seed, groups)
        kw: dict = {}
        if value != "exact":
            kw["poll_interval"] = np.full(m, w)
        if value == "polled_group":
            kw["poll_group"] = feed.labels(m)
        self.s = Scheduler(pages, rate, value="exact" if value == "exact" else "polled", last_crawl=last, **kw)
        self.s.run(1)
        feed.origin = self.s.time
        self.value, self.rate, self.feed = value, rate, feed
        self.per_batch = max(1, round(w * rate / groups))
        self.polls = 0
        # the Scheduler's calls only (the feed's draws, ~45 us a tick at 10^6 with --per-tick 0.01, are the
        # simulator's, not the Scheduler's): the poll path (poll, poll_group or signal_many) and run
        self.poll_wall = self.run_wall = self.cpu = 0.0

    def draw(self):
        """The next batch as a crawler has it: (group, time, its page ids, the moved flags, the moved ids) -- the
        simulator's work (random flags, the moved ids picked out), not timed."""
        ids, t, moved, g = self.feed.next_batch()
        return g, t, ids, moved, ids[moved]

    def batch(self, drawn=None):
        """One batch of polls (``drawn``, else the next), then the decisions to the next."""
        g, t, ids, moved, moved_ids = self.draw() if drawn is None else drawn
        t = max(t, self.s.time)
        c0 = time.process_time()
        t0 = time.perf_counter()
        if self.value == "polled":
            self.s.poll(ids, t, moved)
            self.polls += len(ids)
        elif self.value == "polled_group":
            self.s.poll_group(g, t, moved_ids)
            self.polls += len(ids)
        else:
            self.s.signal_many(moved_ids, np.full(len(moved_ids), t))
            self.polls += len(moved_ids)
        t1 = time.perf_counter()
        self.poll_wall += t1 - t0
        self.s.run(self.per_batch)
        self.run_wall += time.perf_counter() - t1
        self.cpu += time.process_time() - c0

    def run(self, decisions):
        for _ in range(max(1, decisions // self.per_batch)):
            self.batch()


class BruteForce:
    """Per tick, polled_value of every page and argmax; polls move the effective starts (window_staleness)."""

    def __init__(self, d):
        s = d.s
        self.pages, self.w = s.pages, d.feed.w
        st = s._state
        self.ell = np.array(st.polled_view(0), copy=True)
        self.c = np.array(st.last_crawl_view(), copy=True)
        self.p = np.array(st.polled_view(1), copy=True)
        self.t, self.dt = s.time, 1.0 / s.bandwidth
        self.feed = PollFeed(self.pages, d.feed.w, d.feed.origin)
        self.feed.k = d.feed.k
        self.per_batch = d.per_batch

    def draw(self):
        """The next batch (not timed: the simulator's work)."""
        return self.feed.next_batch()

    def poll(self, drawn=None):
        ids, t, moved, _ = self.feed.next_batch() if drawn is None else drawn
        t = max(t, self.t)
        c, p0 = self.c[ids], self.p[ids]
        after = np.maximum(t - np.maximum(c, p0), 0.0)
        before = np.maximum(c - p0, 0.0)
        dl = self.pages.change_rate[ids]
        s_now = dl * (t - self.ell[ids])
        rise = window_staleness(after, moved, self.pages[ids], before) - dl * after
        with np.errstate(divide="ignore", invalid="ignore"):
            new = np.where(dl > 0, t - (s_now + rise) / np.where(dl > 0, dl, 1.0), self.ell[ids])
        ok = t > c
        self.ell[ids[ok]] = new[ok]
        self.p[ids] = t

    def ticks(self, n):
        dl = self.pages.change_rate
        for _ in range(n):
            self.t += self.dt
            v = polled_value(dl * (self.t - self.ell), self.w, self.pages)
            best = int(np.argmax(v))
            self.ell[best] = self.c[best] = self.t


_WARM: dict = {}


def warmed(m, value, w):
    key = (m, value, w)
    if key not in _WARM:
        d = Driver(m, value, w)
        d.run(m // 5 if not SMOKE else 20)
        _WARM[key] = d
    return _WARM[key]


@pytest.mark.parametrize("m", sizes(20_000, smoke=1000))
@pytest.mark.parametrize("w", [1.0, 0.3])
def test_brute_force(benchmark, m, w):
    benchmark.group = f"schedule polled m={m} w={w}"
    d = warmed(m, "polled", w)
    bf = BruteForce(d)
    role(benchmark, "baseline", m=m, decisions_per_call=d.per_batch)

    def call(drawn):
        bf.poll(drawn)
        bf.ticks(d.per_batch)

    benchmark.pedantic(call, setup=lambda: ((bf.draw(),), {}), rounds=ROUNDS)


@pytest.mark.parametrize("m", sizes(20_000, smoke=1000))
@pytest.mark.parametrize("w", [1.0, 0.3])
@pytest.mark.parametrize("value", ["polled", "polled_group", "exact"])
def test_scheduler(benchmark, m, w, value):
    benchmark.group = f"schedule polled m={m} w={w}"
    d = warmed(m, value, w)
    role(benchmark, "freshcore", m=m, value=value, decisions_per_call=d.per_batch)
    state = d.s._state
    e0, p0, t0 = state.n_evaluations, d.polls, d.s.time
    benchmark.pedantic(d.batch, setup=lambda: ((d.draw(),), {}), rounds=ROUNDS)
    decisions = max(1, round((d.s.time - t0) * d.s.bandwidth))
    benchmark.extra_info["evaluations_per_decision"] = (state.n_evaluations - e0) / decisions
    benchmark.extra_info["polls_per_decision"] = (d.polls - p0) / decisions


def measure(m, w, decisions, burn_in, poll="each", per_tick=None):
    """Per decision: seconds and CPU seconds (and the poll path's seconds), evaluations and polls (signals), of
    the polled and exact drivers (built and burnt in one after the other, timed in alternating chunks so that the
    load hits both alike).  Only the Scheduler's calls are timed, not the feed's draws."""
    out = {}
    drivers = {}
    for value in ("polled" if poll == "each" else "polled_group", "exact"):
        t0 = time.perf_counter()
        d = Driver(m, value, w, per_tick=per_tick)
        build = time.perf_counter() - t0
        d.run(burn_in)
        drivers[value] = d
        # the burn-in's Scheduler calls: the start from the staggered crawls, where the first ticks settle
        out[value] = dict(build=build, burn=d.poll_wall + d.run_wall, wall=0.0, cpu=0.0, poll=0.0, evals=0, polls=0,
                          decisions=0)
    chunk = max(next(iter(drivers.values())).per_batch, decisions // 10)
    for _ in range(max(1, decisions // chunk)):
        for value, d in drivers.items():
            r = out[value]
            e0, p0, n0 = d.s._state.n_evaluations, d.polls, d.s.time
            q0, w0, c0 = d.poll_wall, d.run_wall, d.cpu
            d.run(chunk)
            r["wall"] += (d.poll_wall - q0) + (d.run_wall - w0)
            r["poll"] += d.poll_wall - q0
            r["cpu"] += d.cpu - c0
            r["evals"] += d.s._state.n_evaluations - e0
            r["polls"] += d.polls - p0
            r["decisions"] += round((d.s.time - n0) * d.s.bandwidth)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--w", type=float, nargs="+", default=[1.0, 0.3])
    ap.add_argument("--decisions", type=int, default=200_000)
    ap.add_argument("--burn-in", type=int, default=200_000)
    ap.add_argument("--poll", choices=("each", "group"), default="each",
                    help="feed the polled Scheduler by poll(ids, t, moved) (each) or poll_group (group)")
    ap.add_argument("--per-tick", type=float, default=None,
                    help="a group of this fraction of the pages polled every tick (w = 1/(F R); --w ignored)")
    a = ap.parse_args(argv)
    print(f"{'m':>9} {'w':>7} {'value':>12} {'build s':>8} {'burn-in s':>9} {'us/dec':>8} {'poll us':>8} {'run us':>8} "
          f"{'CPU us':>8} {'evals/dec':>9} {'polls/dec':>9} {'ratio':>6} {'run ratio':>9}")
    for m in a.sizes:
        for w in ([None] if a.per_tick is not None else a.w):
            out = measure(m, w, a.decisions, a.burn_in, a.poll, a.per_tick)
            ex = out["exact"]
            nx = max(ex["decisions"], 1)
            ww = w if w is not None else max(1, round(1.0 / a.per_tick)) / (m / 10.0)
            for value, r in out.items():
                n = max(r["decisions"], 1)
                ratio = (r["wall"] / n) / (ex["wall"] / nx)
                run_ratio = ((r["wall"] - r["poll"]) / n) / ((ex["wall"] - ex["poll"]) / nx)
                print(f"{m:>9} {ww:>7.3g} {value:>12} {r['build']:8.2f} {r['burn']:9.2f} {r['wall'] / n * 1e6:8.2f} "
                      f"{r['poll'] / n * 1e6:8.2f} {(r['wall'] - r['poll']) / n * 1e6:8.2f} "
                      f"{r['cpu'] / n * 1e6:8.2f} {r['evals'] / n:9.2f} {r['polls'] / n:9.2f} {ratio:6.2f} "
                      f"{run_ratio:9.2f}", flush=True)


if __name__ == "__main__":
    main()
