"""Reference models the tests compare with (brute force, step by step) and the registry of the estimators.

Imported by the test modules (``tests`` is on pytest's ``pythonpath``).  Each
model is the plainest code that states the contract: the brute-force argmax of
:func:`freshcore.value.crawl_value` over every page at every tick, and the
merge rule of :class:`freshcore.ShardedScheduler` over independent schedulers.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from freshcore import _polled, _schedule
from freshcore.estimation import (
    LLNBatch,
    LLNEstimator,
    NaiveBatch,
    NaiveEstimator,
    SABatch,
    SAEstimator,
    SAMBatch,
    SAMEstimator,
)
from freshcore.pages import PageModel
from freshcore.schedule import Scheduler
from freshcore.value import crawl_value

#: The online estimators: method of ``estimate_rates`` -> (batched class, streaming class).
ESTIMATORS = {
    "naive": (NaiveBatch, NaiveEstimator),
    "lln": (LLNBatch, LLNEstimator),
    "sa": (SABatch, SAEstimator),
    "sam": (SAMBatch, SAMEstimator),
}
STREAMS = [stream for _, stream in ESTIMATORS.values()]
BATCHES = [batch for batch, _ in ESTIMATORS.values()]

KINDS = ("exact", "approx", "greedy", "cis")


def signal_time(pages, value):
    """Time-equivalent of one signal in tau_eff for each page under the value kind (SPEC section 4)."""
    if value == "greedy":
        return np.zeros(len(pages))
    if value == "cis":
        return np.where(pages.recall * pages.change_rate > 0, np.inf, 0.0)
    return pages.beta.copy()


class Reference:
    """Brute force: evaluate crawl_value for every page at every tick, argmax (lowest index on ties)."""

    def __init__(self, pages, rate, value="exact", signal_delay=0.0, terms=None):
        self.pages, self.value, self.terms, self.delay = pages, value, terms, signal_delay
        m = len(pages)
        self.beff = signal_time(pages, value)
        self.last = np.zeros(m)
        self.n = np.zeros(m, dtype=np.int64)
        self.origin, self.k, self.bandwidth, self.time = 0.0, 0, float(rate), 0.0

    def values(self, t):
        with np.errstate(invalid="ignore"):
            tau = (t - self.last) + np.where(self.n > 0, self.beff * self.n, 0.0)
        return crawl_value(tau, self.pages, self.value, self.terms)

    def next(self):
        self.k += 1
        t = self.origin + self.k / self.bandwidth
        self.time = t
        best = int(np.argmax(self.values(t)))
        self.last[best] = t
        self.n[best] = 0
        return best

    def signal(self, page, t):
        if t - self.last[page] < self.delay:
            return False
        self.n[page] += 1
        return True

    def set_bandwidth(self, rate):
        self.origin, self.k, self.bandwidth = self.time, 0, float(rate)


class DynamicReference(Reference):
    """Brute force over the live pages: crawl_value of each at every tick, argmax (lowest id on ties)."""

    def __init__(self, pages, rate, value, signal_delay, terms, last=None):
        super().__init__(pages, rate, value, signal_delay, terms)
        m = len(pages)
        self.params = [np.array(a, copy=True) for a in
                       (pages.change_rate, pages.importance, pages.recall, pages.false_rate)]
        self.alive = np.ones(m, dtype=bool)
        if last is not None:
            self.last = np.array(last, dtype=float)

    @property
    def ids(self):
        return np.flatnonzero(self.alive)

    def live_pages(self):
        return PageModel(*(a[self.alive] for a in self.params))

    def next(self):
        self.k += 1
        t = self.origin + self.k / self.bandwidth
        self.time = t
        pages, live = self.live_pages(), self.alive
        beff = signal_time(pages, self.value)
        with np.errstate(invalid="ignore"):
            tau = (t - self.last[live]) + np.where(self.n[live] > 0, beff * self.n[live], 0.0)
        best = int(self.ids[np.argmax(crawl_value(tau, pages, self.value, self.terms))])
        self.last[best] = t
        self.n[best] = 0
        return best

    def add(self, pages, last):
        first = len(self.alive)
        self.params = [np.concatenate([a, b]) for a, b in zip(
            self.params, (pages.change_rate, pages.importance, pages.recall, pages.false_rate))]
        self.alive = np.concatenate([self.alive, np.ones(len(pages), dtype=bool)])
        self.last = np.concatenate([self.last, last])
        self.n = np.concatenate([self.n, np.zeros(len(pages), dtype=np.int64)])
        return list(range(first, first + len(pages)))

    def remove(self, ids):
        self.alive[ids] = False

    def update(self, ids, pages):
        for a, b in zip(self.params, (pages.change_rate, pages.importance, pages.recall, pages.false_rate)):
            a[ids] = b


class PolledReference:
    """Brute force for ``value="polled"``: every live page's ``polled_value`` at ``s = Delta (t - ell)`` at every
    tick, argmax (lowest id on ties); the crawl sets ``ell = c = t``; a poll moves ``ell`` by the scheduler's
    compiled shift kernel (``_schedule._poll_shift``: the same floating-point operations), an update keeps ``s``
    at the current time (``_schedule._rescaled_start``)."""

    def __init__(self, pages, rate, poll_interval, last=None):
        m = len(pages)
        self.params = [np.array(a, dtype=float, copy=True) for a in
                       (pages.change_rate, pages.importance, pages.recall, pages.false_rate)]
        self.w = np.array(np.broadcast_to(np.asarray(poll_interval, dtype=float), (m,)), copy=True)
        self.c = np.zeros(m) if last is None else np.array(last, dtype=float)
        self.ell = self.c.copy()
        self.p = self.c.copy()
        self.alive = np.ones(m, dtype=bool)
        self.origin, self.k, self.bandwidth, self.time = 0.0, 0, float(rate), 0.0

    @property
    def ids(self):
        return np.flatnonzero(self.alive)

    def values(self, t, ids=None):
        ids = self.ids if ids is None else np.asarray(ids)
        dl, mu, lam, nu = (np.ascontiguousarray(a[ids]) for a in self.params)
        s = np.ascontiguousarray(dl * (t - self.ell[ids]))
        out = np.empty(len(ids))
        bad = _polled.sums_kernel(s, dl, lam, nu, np.ascontiguousarray(self.w[ids]), mu, 2, out)
        assert bad < 0, f"page {ids[bad]} refused"
        return out

    def next(self):
        self.k += 1
        t = self.origin + self.k / self.bandwidth
        self.time = t
        ids = self.ids
        best = int(ids[np.argmax(self.values(t, ids))])
        self.ell[best] = self.c[best] = t
        return best

    def poll(self, pages, t, moved):
        dl, _, lam, nu = self.params
        for j, mv in zip(np.atleast_1d(pages).tolist(), np.atleast_1d(moved).tolist()):
            c, p0 = self.c[j], self.p[j]
            self.p[j] = t
            if t > c:
                self.ell[j] = _schedule._poll_shift(self.ell[j], c, p0, t, bool(mv), dl[j], lam[j], nu[j])

    def set_bandwidth(self, rate):
        self.origin, self.k, self.bandwidth = self.time, 0, float(rate)

    def add(self, pages, last, w):
        first = len(self.alive)
        self.params = [np.concatenate([a, b]) for a, b in zip(
            self.params, (pages.change_rate, pages.importance, pages.recall, pages.false_rate))]
        n = len(pages)
        self.alive = np.concatenate([self.alive, np.ones(n, dtype=bool)])
        last = np.broadcast_to(np.asarray(last, dtype=float), (n,))
        for name in ("c", "ell", "p"):
            setattr(self, name, np.concatenate([getattr(self, name), last]))
        self.w = np.concatenate([self.w, np.broadcast_to(np.asarray(w, dtype=float), (n,))])
        return list(range(first, first + n))

    def remove(self, ids):
        self.alive[ids] = False

    def update(self, ids, pages, w=None):
        for j, d in zip(np.atleast_1d(ids).tolist(), pages.change_rate.tolist()):
            self.ell[j] = _schedule._rescaled_start(self.ell[j], self.time, self.params[0][j], d)
        for a, b in zip(self.params, (pages.change_rate, pages.importance, pages.recall, pages.false_rate)):
            a[ids] = b
        if w is not None:
            self.w[ids] = w


def random_pages(rng, m, degenerate=True, duplicates=True):
    dl = rng.uniform(0.0, 1.0, m)
    mu = rng.uniform(0.0, 1.0, m)
    lam = rng.beta(0.25, 0.25, m)
    nu = rng.uniform(0.1, 0.6, m)
    if degenerate and m >= 8:
        idx = rng.choice(m, size=5, replace=False)
        dl[idx[0]] = 0.0  # never changes: value 0
        mu[idx[1]] = 0.0  # never requested: value 0
        lam[idx[2]] = 0.0  # uninformative signals: Greedy value
        lam[idx[3]] = 1.0  # every change signalled: V = 0 until a signal
        nu[idx[4]] = 0.0  # a signal proves a change: beta = inf
    if duplicates and m >= 4:
        src = rng.choice(m, size=m // 4)
        dst = rng.choice(m, size=m // 4)
        for a in (dl, mu, lam, nu):
            a[dst] = a[src]  # identical pages: exact ties
    return PageModel(dl, mu, lam, nu)


def plain_pages(rng, m):
    """Random pages without the degenerate ones or duplicates of :func:`random_pages` (the same first draws)."""
    return random_pages(rng, m, degenerate=False, duplicates=False)


def kind_args(kind):
    return {"value": kind, "terms": 2 if kind == "approx" else None}


class MergedReference:
    """Independent schedulers over each shard's pages at R/k, merged by (next tick time, shard number).

    Each reference shard keeps its own clock ``origin + j/rate`` (the compiled
    scheduler's formula).  A rate change applies at once to the shards that
    are not due at the current time and, to the shards still due at it, right
    after their tick there (the documented rule, stated here in terms of
    times rather than of the merge position).
    """

    def __init__(self, pages, rate, k, assign, **kw):
        self.ids = [np.flatnonzero(assign == s) for s in range(k)]
        self.scheds = [Scheduler(pages[ids], rate / k, **kw) for ids in self.ids]
        self.clock = [[0.0, 0, rate / k] for _ in range(k)]  # origin, ticks since, rate
        self.pending: list = [None] * k
        self.time = 0.0

    def due(self, s):
        o, j, r = self.clock[s]
        return o + (j + 1) / r

    def next(self):
        s = min(range(len(self.scheds)), key=lambda s: (self.due(s), s))
        t = self.due(s)
        page = int(self.ids[s][self.scheds[s].next()])
        assert self.scheds[s].time == t
        self.clock[s][1] += 1
        self.time = t
        if self.pending[s] is not None:
            self.scheds[s].set_bandwidth(self.pending[s])
            self.clock[s] = [t, 0, self.pending[s]]
            self.pending[s] = None
        return page

    def set_bandwidth(self, rate):
        k = len(self.scheds)
        for s in range(k):
            if self.due(s) <= self.time:
                self.pending[s] = rate / k
            else:
                self.scheds[s].set_bandwidth(rate / k)
                self.clock[s] = [self.scheds[s].time, 0, rate / k]

    def signal(self, page, t):
        s = next(s for s in range(len(self.ids)) if page in self.ids[s])
        return self.scheds[s].signal(int(np.searchsorted(self.ids[s], page)), t)


class DynamicMergedReference(MergedReference):
    """The merged reference, plus pages added one by one (plain loops) and removed/updated by id."""

    def __init__(self, pages, rate, k, assign, **kw):
        super().__init__(pages, rate, k, assign, **kw)
        self.ids = [ids.tolist() for ids in self.ids]  # shard s's page ids, by local id (removed ones kept)
        self.n = len(assign)

    def where(self, g):
        s = next(s for s in range(len(self.ids)) if g in self.ids[s])
        return s, self.ids[s].index(g)

    def signal(self, page, t):
        s, j = self.where(page)
        return self.scheds[s].signal(j, t)

    def add(self, pages, last=None):
        new = []
        for i in range(len(pages)):
            s = min(range(len(self.scheds)), key=lambda s: (self.scheds[s].n_pages, s))
            t = self.scheds[s].time if last is None else float(last[i])
            assert int(self.scheds[s].add_pages(pages[[i]], last_crawl=t)[0]) == len(self.ids[s])
            self.ids[s].append(self.n)
            new.append(self.n)
            self.n += 1
        return new

    def remove(self, g):
        s, j = self.where(g)
        self.scheds[s].remove_pages([j])

    def update(self, g, page):
        s, j = self.where(g)
        self.scheds[s].update_pages([j], page)

    def live(self):
        return sorted(self.ids[s][j] for s in range(len(self.ids)) for j in self.scheds[s].page_ids.tolist())

    def per_page(self, attr):
        out = {}
        for s, sched in enumerate(self.scheds):
            for j, v in zip(sched.page_ids.tolist(), getattr(sched, attr).tolist()):
                out[self.ids[s][j]] = v
        return [out[g] for g in self.live()]


#: One operation of the merged stream (drawn by the sharding tests).
SHARDED_OP = st.one_of(
    st.tuples(st.just("run"), st.integers(0, 13)),
    st.tuples(st.just("next"), st.just(0)),
    st.tuples(st.just("rate"), st.integers(1, 30)),
    st.tuples(st.just("signal"), st.integers(0, 10**6)),
)
