"""Polled, lossy change signals (issue 19): does the polled-signal crawl value beat ignoring the signals?

Pages change as Poisson(Delta) processes, each change moves the page's signal with probability lambda (its
recall) and the signal also moves falsely at rate nu (the model of Busa-Fekete et al. (2025)).  The
crawler does not see the moves as they happen: it polls the signal source every ``w`` and sees, per page,
only whether the signal moved since the previous poll (a sitemap's ``lastmod``).  One crawl per tick at
``R = m/5``; each policy crawls the page of highest value at every tick (the argmax, ties to the lowest
index).  The runs are :func:`freshcore.policy_simulation.simulate` with
``polls=PollSchedule(w, phase=...)``, so every policy is judged on the same events (changes, requests,
signals and what each poll sees):

* ``greedy``: the value without signals, ``(mu/Delta) R^1(Delta tau)``, true Delta
  (``Scheduler(value="greedy")``);
* ``ncis-fed``: the exact value of Busa-Fekete et al. (2025) (``Scheduler(value="exact")``, which has no
  ``poll``, so simulate feeds it one signal at the poll time per moved window);
* ``polled``: :func:`freshcore.polled_signals.polled_value` at the exact posterior log-staleness of the
  polls (:func:`freshcore.polled_signals.window_staleness`, the window cut by a crawl included), read
  from a table of 4096 exact values per page on a uniform grid up to the largest staleness the page can
  reach, linearly interpolated (relative error against the exact value on 1200 random points: median 5e-9,
  99th percentile 1e-4; but within a grid step of a jump of V it can be many times the value: on the demo
  web's seed 10 with ``--event-seed 3`` its heaviest page (7.7% of the importance, lambda = 1 - 6.3e-7) has a
  jump at ``s = Delta w`` (V x15 within 7e-6) that the table spreads over its whole cell, so the page is
  valued up to 13x too high and crawled 640 times instead of ~124, costing 0.0085 of accuracy);
  :class:`PolledValuePolicy`, a policy with ``poll()``/``next()``/``run()`` taking the brute-force argmax
  over the tables at every tick;
* ``polled-sched``: the Scheduler's polled value kind (``Scheduler(value="polled", poll_interval=w)``, fed
  ``poll``): the same value, exact at every tick (no table), every decision the brute-force argmax;
* ``polled+`` (``--policies``): ``min(V(s), V(iota_D))``, V lowered where waiting for the next poll pays --
  one step of policy improvement on the threshold policy, with the next poll's outcome and time known;
* ``ironed`` (``--policies``): the ironed value ``V*`` of the module notes (concave hull of ``w/psi``
  against ``1/psi``, on the table's grid);
* ``polled-delay`` (``--policies``, with ``--signal-delay theta``): ``polled`` at the posterior that knows the
  true signals reach the source after Exp(theta) delays (``window_staleness(..., signal_delay=theta)``);
* ``ncis``: the exact value with the signals seen when they happen (simulate without polls), for reference.

Accuracy is the mu-weighted fraction of time the pages are fresh (the fraction of requests served fresh),
from the true change times of simulate's events (its requests are too few on the demo web, whose importance
sums to ~1: ~50 requests in the window), after a 20% burn-in; every page counts as crawled at time 0 (short
horizons flatter every policy a little, which is why ``ncis`` can pass its continuous optimum).  ``opt001`` is the
continuous optimum with continuous signals (:func:`freshcore.thresholds.optimal_thresholds`, Theorem 2),
``opt-polled`` that of the polled threshold policies for the poll interval (``V_i(s_i) = Lambda`` with
``sum 1/psi_i(s_i) = R``, on the same tables; larger tables change it by < 2e-6); the tables reach the
largest staleness a page can reach on the seed's polls, which a first simulate pass with a policy that
only records the polls (:class:`PollLog`) gives.  Each seed draws a new web and new events; the tables
give the mean over seeds ± its standard error, and the paired differences with their standard errors.

Webs: ``spec`` -- SPEC section 3's check, ``Delta, mu ~ U[0, 1]``; ``demo`` -- the demo's synthetic web
(:func:`freshcore.cli.demo.synthetic_web`: Delta log-uniform on [0.02, 5], Pareto importance); both with
``lambda ~ Beta(0.25, 0.25)``, ``nu ~ U(0.1, 0.6)``.  Polls: ``grid`` -- every page at ``k w`` (one
sitemap read; simulate's default), or ``phase`` -- each page at ``phi_i + k w`` with ``phi_i ~ U[0, w)``
drawn with the web (``PollSchedule(w, phase=phi)``, so the policy knows its pages' poll clocks).

Run: ``PYTHONPATH=src python bench/repro_polled.py [--pages 1000] [--horizon 60] [--seeds 6] [--web demo]
[--polls grid] [--policies ncis-fed polled polled+ ironed]``; ``--quick`` is the small run of the tests.

Reading: the polled value beats Greedy at every poll interval (by 11 to 38 standard errors of the paired
difference) and beats the value of Busa-Fekete et al. fed the same polls at ``w = 1`` and ``0.3`` by 1.6 to
2.8 standard errors (demo grid 2.2 and 2.8, demo phase 2.1 and 1.6, spec 2.3 and 2.4); at ``w = 0.1`` the
two are level, both near the continuous-signal value.  The one-step lookahead (``polled+``) adds nothing
significant; ironing loses at ``w = 0.1``.  The polled value's accuracy is within 0.004 of the continuous
optimum of the polled thresholds (``opt-polled``).

On simulate (2026-11-26, load ~3): on the same events this script's policies make exactly the decisions of
the numpy event simulation it was (every crawl of greedy, ncis, ncis-fed, polled and polled+ identical on
both webs, grid and phase polls, ``w = 1`` and ``0.1``, m = 200, horizon 20; and m = 1000, horizon 20), so
only the event draws changed.  The demo grid row again (m = 1000, horizon 60, 6 seeds, 257 s)::

    continuous signals: ncis 0.6819±0.0109, optimum (Theorem 2) 0.6821±0.0113; greedy 0.6425±0.0113
        w          greedy        ncis-fed          polled      opt-polled
        1   0.6425±0.0113   0.6482±0.0122   0.6559±0.0111   0.6580±0.0110
      0.3   0.6425±0.0113   0.6659±0.0111   0.6685±0.0116   0.6702±0.0112
      0.1   0.6425±0.0113   0.6756±0.0108   0.6767±0.0107   0.6772±0.0114
    paired differences
        w     polled-greedy   polled-ncis-fed
        1     0.0134±0.0009     0.0077±0.0018
      0.3     0.0260±0.0008     0.0026±0.0010
      0.1     0.0341±0.0012     0.0011±0.0004

Delayed signals (``--signal-delay theta``: every true signal reaches the source Exp(theta) after its change;
demo grid, m = 1000, horizon 60, 6 seeds, ``--intervals 1 0.3 --policies ncis-fed polled polled-delay``, 2026-11-26,
load ~2): with theta = 2 the posterior that ignores the delay falls *below* Greedy at w = 0.3 (paired
-0.0044±0.0011; +0.0002±0.0012 at w = 1) while the one that knows it stays above (+0.0025±0.0013 and
+0.0037±0.0006); with theta = 0.5 the two are level (+0.0107±0.0008 and +0.0115±0.0009 over Greedy at w = 0.3).
Both stay above 001's value fed the polls (by 0.0050 to 0.0160).

and ``--intervals 0.1 --event-seed 2`` (another draw of the events on the same webs): greedy 0.6432±0.0115,
ncis-fed 0.6752±0.0117, polled 0.6762±0.0119; polled-greedy 0.0330±0.0008, polled-ncis-fed 0.0010±0.0006.
The spec grid row (``--web spec``, 6 seeds, 351 s at load 3 to 5)::

    continuous signals: ncis 0.5450±0.0042, optimum (Theorem 2) 0.5444±0.0031; greedy 0.5069±0.0035
        w          greedy        ncis-fed          polled      opt-polled
        1   0.5069±0.0035   0.5248±0.0032   0.5284±0.0033   0.5321±0.0029
      0.3   0.5069±0.0035   0.5377±0.0037   0.5410±0.0039   0.5398±0.0032
      0.1   0.5069±0.0035   0.5428±0.0037   0.5438±0.0036   0.5423±0.0032
    paired differences
        w     polled-greedy   polled-ncis-fed
        1     0.0215±0.0011     0.0037±0.0005
      0.3     0.0341±0.0013     0.0032±0.0010
      0.1     0.0369±0.0014     0.0009±0.0002

Output of the numpy event simulation this script was before it ran on simulate (its own event draws; 2
shared cores, load 2 to 5, 2026-11-26; m = 1000, horizon 60, 6 seeds)::

    polled signals: web demo, polls grid, m = 1000, R = m/5, horizon 60 (burn-in 20%), 6 seeds
    continuous signals: ncis 0.6829±0.0117, optimum (Theorem 2) 0.6821±0.0113; greedy 0.6441±0.0115
        w          greedy        ncis-fed          polled         polled+          ironed      opt-polled
        1   0.6441±0.0115   0.6500±0.0133   0.6564±0.0114   0.6564±0.0115   0.6565±0.0117   0.6580±0.0110
      0.3   0.6441±0.0115   0.6671±0.0124   0.6696±0.0122   0.6695±0.0122   0.6673±0.0118   0.6704±0.0112
      0.1   0.6441±0.0115   0.6766±0.0121   0.6762±0.0119   0.6768±0.0121   0.6727±0.0111   0.6772±0.0114
    paired differences
        w     polled-greedy    polled+-greedy     ironed-greedy   polled-ncis-fed  polled+-ncis-fed   ironed-ncis-fed
        1     0.0123±0.0010     0.0123±0.0012     0.0124±0.0011     0.0065±0.0029     0.0064±0.0023     0.0065±0.0022
      0.3     0.0255±0.0019     0.0253±0.0014     0.0232±0.0021     0.0025±0.0009     0.0023±0.0010     0.0002±0.0009
      0.1     0.0321±0.0022     0.0327±0.0020     0.0286±0.0023    -0.0004±0.0004     0.0002±0.0003    -0.0040±0.0020

    polled signals: web demo, polls phase, m = 1000, R = m/5, horizon 60 (burn-in 20%), 6 seeds
        w          greedy        ncis-fed          polled      opt-polled
        1   0.6441±0.0115   0.6520±0.0131   0.6581±0.0116   0.6580±0.0110
      0.3   0.6441±0.0115   0.6689±0.0125   0.6705±0.0122   0.6704±0.0112
      0.1   0.6441±0.0115   0.6772±0.0122   0.6767±0.0122   0.6772±0.0114
    paired differences
        w     polled-greedy   polled-ncis-fed
        1     0.0140±0.0012     0.0061±0.0029
      0.3     0.0264±0.0023     0.0016±0.0010
      0.1     0.0326±0.0023    -0.0005±0.0006

    polled signals: web spec, polls grid, m = 1000, R = m/5, horizon 60 (burn-in 20%), 6 seeds
    continuous signals: ncis 0.5447±0.0034, optimum (Theorem 2) 0.5444±0.0031; greedy 0.5054±0.0030
        w          greedy        ncis-fed          polled         polled+      opt-polled
        1   0.5054±0.0030   0.5244±0.0031   0.5278±0.0030   0.5281±0.0027   0.5319±0.0030
      0.3   0.5054±0.0030   0.5380±0.0034   0.5397±0.0034   0.5401±0.0037   0.5398±0.0032
      0.1   0.5054±0.0030   0.5424±0.0027   0.5427±0.0035   0.5435±0.0031   0.5423±0.0032
    paired differences
        w     polled-greedy    polled+-greedy   polled-ncis-fed  polled+-ncis-fed
        1     0.0224±0.0010     0.0227±0.0008     0.0034±0.0015     0.0037±0.0011
      0.3     0.0343±0.0009     0.0346±0.0010     0.0017±0.0007     0.0021±0.0004
      0.1     0.0373±0.0013     0.0380±0.0009     0.0003±0.0010     0.0010±0.0006
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from freshcore import PageModel, Scheduler
from freshcore.cli.demo import synthetic_web
from freshcore.policy_simulation import PollSchedule, _events, simulate
from freshcore.polled_signals import _blocks, _moved_weight, window_staleness
from freshcore.special import residual_exp
from freshcore.thresholds import optimal_thresholds

POLICIES = ("ncis-fed", "polled", "polled-sched", "ironed", "polled+", "polled-delay")  # those that see the polls
GRID = 4096
CAP = 36.0  # V(s) = mu/Delta (1 - O(s e^{-s})): above this staleness the value is flat to ~1e-14


# ---------------------------------------------------------------------------------------------------------
# the web and its events


def make_web(m: int, rng: np.random.Generator, web: str) -> PageModel:
    if web == "spec":
        dl, mu = rng.uniform(0.0, 1.0, m), rng.uniform(0.0, 1.0, m)
    else:
        dl, mu = synthetic_web(m, rng)
    lam = rng.beta(0.25, 0.25, m)
    nu = rng.uniform(0.1, 0.6, m)
    return PageModel(dl, mu, lam, nu)


class PollLog:
    """A policy that never crawls within the horizon and records every poll :func:`simulate` gives it (all
    of them: the polls after the last tick are delivered after it)."""

    def __init__(self, m: int, horizon: float) -> None:
        self._m, self._rate = m, 0.5 / horizon
        self.log: list = []

    bandwidth = property(lambda self: self._rate)
    time = property(lambda self: 0.0)
    n_pages = property(lambda self: self._m)

    def next(self) -> int:  # pragma: no cover - the first tick is past the horizon
        raise AssertionError

    run = next
    set_bandwidth = next

    def poll(self, pages: np.ndarray, t: float, moved: np.ndarray) -> None:
        self.log.append((t, pages.copy(), moved.copy()))


def poll_log(pages: PageModel, horizon: float, seed, schedule: PollSchedule, w: float, delay: float | None = None):
    """All polls of the events of ``seed``, in time order: (time, page, moved, previous poll time of the page)."""
    log = PollLog(len(pages), horizon)
    simulate(log, pages, horizon, rng=np.random.default_rng(seed), polls=schedule, signal_delay=delay)
    t = np.concatenate([np.full(len(p), t) for t, p, _ in log.log])
    pg = np.concatenate([p for _, p, _ in log.log])
    mv = np.concatenate([mv for _, _, mv in log.log])
    return t, pg, mv, t - w  # regular polls: the previous one w earlier (before time 0 for the first)


# ---------------------------------------------------------------------------------------------------------
# exact V, psi, w of the polled threshold policy on a grid, from prefix sums over the lattice


def page_table(dl: float, lam: float, nu: float, w: float, cap: float, grid: np.ndarray):
    """``(V/mu, psi, fresh)`` of one page at the staleness values ``grid`` (all ``<= cap``)."""
    if dl == 0.0:
        return np.zeros(len(grid)), np.full(len(grid), np.inf), np.full(len(grid), np.inf)
    if lam * dl == 0.0:
        return residual_exp(1, grid) / dl, grid / dl, -np.expm1(-grid) / dl
    xs, ths, ps = [], [], []
    for blk in _blocks(cap, dl, lam, nu, w):
        keep = blk.weight > 1e-22  # a dropped point moves psi by < 1e-22 w
        xs.append(blk.x[keep])
        ths.append(blk.theta[keep])
        ps.append(blk.weight[keep])
        if blk.rest + blk.cut < 1e-20:
            break
    x, th, p = np.concatenate(xs), np.concatenate(ths), np.concatenate(ps)
    dw = dl * w
    oa = np.argsort(th, kind="stable")
    of = np.argsort(x, kind="stable")

    def prefix(order):
        z = np.zeros(1)
        return (np.concatenate((z, np.cumsum(p[order]))), np.concatenate((z, np.cumsum(p[order] * x[order]))),
                np.concatenate((z, np.cumsum(p[order] * np.exp(-x[order])))))

    a1, ax, ae = prefix(oa)
    f1, fx, fe = prefix(of)
    ia = np.searchsorted(th[oa], grid, side="left")  # theta < s: alive
    jf = np.searchsorted(x[of] + dw, grid, side="right")  # x + Delta w <= s: a full window
    p1, px, pe = a1[ia] - f1[jf], ax[ia] - fx[jf], ae[ia] - fe[jf]
    es = np.exp(-grid)
    psi = (dw * f1[jf] + grid * p1 - px) / dl
    fresh = (-math.expm1(-dw) * fe[jf] + pe - es * p1) / dl
    return np.maximum(fresh - es * psi, 0.0), psi, fresh


def reach(pages: PageModel, w: float, polls, horizon: float, delayed: bool = False) -> np.ndarray:
    """A bound on the staleness each page can reach: its trajectory without crawls, plus one moved window.

    ``delayed``: for the posterior with signal delays, whose unmoved windows weigh up to ``Delta l`` and whose
    moved windows add at most the undelayed ``b - lambda Delta w`` to that (``G`` grows and ``H`` shrinks
    with the delay at a fixed ``G + H``): ``Delta T`` plus that per moved poll."""
    t, pg, mv, prev = polls
    dl, lam, nu = pages.change_rate, pages.recall, pages.false_rate
    if delayed:
        b = np.array([_moved_weight(w, *v) for v in zip(dl, lam, nu)])
        extra = np.where(np.isfinite(b), b - lam * dl * w, 0.0)
        n_moved = np.bincount(pg[mv.astype(bool)], minlength=len(dl))
        return (dl * (horizon + w) + (n_moved + 1) * extra) * (1 + 1e-9) + 1e-12
    after = np.minimum(t, t - prev)
    before = np.maximum(0.0, -prev)
    inc = window_staleness(np.maximum(after, 0.0), mv, PageModel(dl[pg], 1.0, lam[pg], nu[pg]), before)
    s = np.zeros(len(dl))
    np.add.at(s, pg, inc)
    last = np.zeros(len(dl))
    np.maximum.at(last, pg, t)
    s += dl * (horizon - last)
    b = np.array([_moved_weight(w, *v) for v in zip(dl, lam, nu)])
    # after a crawl at c, s(t) <= s0(t) - s0(c) + (the cut window's weight <= that of a whole moved window)
    return (s + pages.alpha * w + np.where(np.isfinite(b), b, 0.0) + dl * w) * (1 + 1e-9) + 1e-12


def tables(pages: PageModel, w: float, caps: np.ndarray):
    m = len(pages)
    val = np.empty((m, GRID))
    psi = np.empty((m, GRID))
    fresh = np.empty((m, GRID))
    for i in range(m):
        g = np.linspace(0.0, caps[i], GRID)
        v, p, f = page_table(float(pages.change_rate[i]), float(pages.recall[i]), float(pages.false_rate[i]), w,
                             float(caps[i]), g)
        val[i], psi[i], fresh[i] = v * pages.importance[i], p, f
    return val, psi, fresh


def ironed(val, psi, fresh, mu):
    """The ironed value on the grids: ``mu`` times the slope of the concave hull of the fresh fraction
    ``F = w/psi`` against the crawl frequency ``f = 1/psi``, at each threshold (the price at which the best
    threshold passes it)."""
    out = np.empty_like(val)
    for i in range(val.shape[0]):
        p = psi[i]
        if not np.isfinite(p[-1]) or p[-1] <= 0:
            out[i] = val[i]
            continue
        ok = np.flatnonzero(p > 0)
        inv = 1.0 / p[ok]
        ok = ok[np.concatenate(([True], inv[1:] < np.minimum.accumulate(inv)[:-1]))]  # strictly falling f
        f = 1.0 / p[ok][::-1]  # increasing
        F = fresh[i][ok][::-1] / p[ok][::-1]
        hull = [0]
        for k in range(1, len(f)):
            while len(hull) >= 2:
                a, b = hull[-2], hull[-1]
                if (F[b] - F[a]) * (f[k] - f[b]) <= (F[k] - F[b]) * (f[b] - f[a]):
                    hull.pop()
                else:
                    break
            hull.append(k)
        h = np.array(hull)
        slope = np.diff(F[h]) / np.diff(f[h])
        # a threshold (index k in increasing f) lies in the hull segment [h[s], h[s+1]); its price is the slope
        # of the segment towards larger thresholds (smaller f): the one ending at or after it
        seg = np.searchsorted(h, np.arange(len(f)), side="left") - 1
        seg = np.clip(seg, 0, len(slope) - 1)
        v = mu[i] * slope[seg][::-1]  # back to increasing thresholds
        full = np.searchsorted(ok, np.arange(len(p)), side="right") - 1  # thresholds sharing one psi
        out[i] = np.where(full >= 0, v[np.maximum(full, 0)], 0.0)
    return out


def polled_optimum(pages: PageModel, bandwidth: float, val, psi, fresh) -> float:
    """Accuracy of the continuous optimum of the polled threshold policies (thresholds on the grids)."""
    m = len(pages)
    last = val[:, -1]

    def at(lam):
        k = np.array([np.searchsorted(val[i], lam, side="left") for i in range(m)])
        ok = k < GRID
        kk = np.minimum(k, GRID - 1)
        f = np.where(ok, 1.0 / psi[np.arange(m), kk], 0.0)
        fr = np.where(ok, fresh[np.arange(m), kk] * f, 0.0)
        return f, fr

    lo, hi = 0.0, float(last.max())
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        f, _fr = at(mid)
        if f.sum() > bandwidth:
            lo = mid
        else:
            hi = mid
    f, fr = at(hi)
    mu = pages.importance
    fr = np.where(pages.change_rate == 0.0, 1.0, fr)
    return float(np.sum(mu * fr) / mu.sum())


# ---------------------------------------------------------------------------------------------------------
# the simulation


def accuracy(pages: PageModel, changes, crawl_page: np.ndarray, crawl_time: np.ndarray, t0: float,
             horizon: float) -> float:
    mu = pages.importance
    fresh = np.zeros(len(pages))
    order = np.argsort(crawl_page, kind="stable")
    cp, ct = crawl_page[order], crawl_time[order]
    bounds = np.searchsorted(cp, np.arange(len(pages) + 1))
    for i in range(len(pages)):
        c = np.concatenate(([0.0], ct[bounds[i]:bounds[i + 1]]))
        nxt = np.concatenate((c[1:], [horizon]))
        ch = np.concatenate((changes[i], [np.inf]))
        first = ch[np.searchsorted(ch, c, side="right")]  # the first change after each crawl
        end = np.minimum(nxt, first)
        fresh[i] = np.sum(np.maximum(0.0, end - np.maximum(c, t0)))
    return float(np.sum(mu * fresh) / (mu.sum() * (horizon - t0)))


def _lookahead(idx, s, t, last, lastpoll, s_at, w, dl, mu, alpha, gamma, pages, table, gstep):
    """``min(V(s), V(iota_D))`` of the pages ``idx``: the value lowered where waiting for the next poll is worth
    more than crawling now (one step of policy improvement on the threshold policy)."""
    s, last, lastpoll, s_at = s[idx], last[idx], lastpoll[idx], s_at[idx]
    dl, mu, alpha, gamma, step = dl[idx], mu[idx], alpha[idx], gamma[idx], gstep[idx]
    p_next = lastpoll + w
    ell = p_next - t
    after = p_next - np.maximum(last, lastpoll)
    before = np.maximum(0.0, last - lastpoll)
    y0 = s_at + alpha * after
    y1 = s_at + window_staleness(after, True, pages[idx], before)
    y1 = np.where(np.isfinite(y1), y1, 1e300)
    qm = -np.expm1(-gamma * (p_next - lastpoll))
    now = mu * np.exp(-s) * -np.expm1(-dl * ell) / np.where(dl > 0, dl, 1.0)

    def d(iota):
        return (now - mu * np.exp(-iota) * ell + (1 - qm) * np.exp(-y0) * _lookup(table, step, idx, iota - y0)
                + qm * np.exp(-np.minimum(y1, 700.0)) * _lookup(table, step, idx, iota - y1))

    v = _lookup(table, step, idx, s)
    wait = (dl > 0) & (s > y0) & (d(s) > 0.0)
    if not wait.any():
        return v
    lo, hi = y0.copy(), s.copy()
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        up = d(mid) > 0.0
        hi = np.where(up, mid, hi)
        lo = np.where(up, lo, mid)
    return np.where(wait, np.minimum(v, _lookup(table, step, idx, hi)), v)


def _lookup(table, gstep, rows, s):
    """Linear interpolation of each page's table at ``s`` (0 below 0, the last entry above the cap)."""
    pos = np.clip(s / gstep, 0.0, GRID - 1.0)
    k = np.minimum(pos.astype(np.int64), GRID - 2)
    fr = pos - k
    return np.where(s > 0.0, table[rows, k] * (1.0 - fr) + table[rows, k + 1] * fr, 0.0)


class PolledValuePolicy:
    """Crawl the page of highest polled value at every tick (brute-force argmax, ties to the lowest index), as
    a :class:`freshcore.CrawlPolicy` with ``poll`` that :func:`freshcore.policy_simulation.simulate` drives.

    ``table``: each page's value on its grid ``[0, caps_i]`` (``polled``: V; ``ironed``: the ironed value);
    ``lookahead``: ``polled+``.  At a poll of page ``i`` at ``t`` its staleness gains the window's
    :func:`~freshcore.polled_signals.window_staleness` (the window cut by a crawl included); between polls it
    grows at ``Delta_i``; a crawl resets it.  Slow (numpy over all pages per tick) until the compiled kernel
    and the Scheduler's polled value kind land.
    """

    def __init__(self, pages: PageModel, bandwidth: float, w: float, phases: np.ndarray, table: np.ndarray,
                 caps: np.ndarray, lookahead: bool = False, delay: float | None = None) -> None:
        m = len(pages)
        self._delay = delay  # the posterior with exponential signal delays of this mean (polled-delay)
        self._pages, self._rate, self._w = pages, bandwidth, w
        self._table, self._caps, self._gstep = table, caps, caps / (GRID - 1)
        self._lookahead = lookahead
        self._origin, self._k, self._time = 0.0, 0, 0.0
        self.last = np.zeros(m)  # time of the last crawl
        self.s_at = np.zeros(m)  # staleness at `since` (the last poll after the crawl, or the crawl)
        self.since = np.zeros(m)
        # the last poll (before or after the crawl); at time 0 that of phase 0 (the grid point 0, which sees
        # nothing: simulate's polls are the times > 0)
        self.lastpoll = np.where(phases > 0.0, phases - w, 0.0)
        self._rows = np.arange(m)
        self.clock = 0.0  # seconds spent choosing

    bandwidth = property(lambda self: self._rate)
    time = property(lambda self: self._time)
    n_pages = property(lambda self: len(self._pages))

    def set_bandwidth(self, bandwidth: float) -> PolledValuePolicy:
        self._origin, self._k, self._rate = self._time, 0, float(bandwidth)
        return self

    def poll(self, pages: np.ndarray, t: float, moved: np.ndarray) -> None:
        i = pages
        c, prev = self.last[i], self.lastpoll[i]
        base = np.where(c > prev, 0.0, self.s_at[i])  # a window cut by the crawl starts from 0
        inc = window_staleness(t - np.maximum(c, prev), moved, self._pages[i], np.maximum(0.0, c - prev),
                               since_crawl=np.maximum(0.0, prev - c), signal_delay=self._delay)
        self.s_at[i] = base + inc
        self.since[i] = t
        self.lastpoll[i] = t

    def next(self) -> int:
        self._k += 1
        t = self._time = self._origin + self._k / self._rate
        t_start = time.perf_counter()
        pages = self._pages
        dl = pages.change_rate
        s = self.s_at + dl * (t - self.since)
        caps = self._caps
        if ((s > caps) & (caps < CAP)).any():  # reach() bounds s (above CAP the value is flat)
            raise RuntimeError(f"staleness {s.max()} beyond its table")
        v = _lookup(self._table, self._gstep, self._rows, s)
        if self._lookahead:  # the lookahead value is <= V(s): evaluate it for the top pages only
            m, k = len(v), 16
            while True:
                top = np.argpartition(-v, min(k, m - 1))[:min(k, m)]
                look = _lookahead(top, s, t, self.last, self.lastpoll, self.s_at, self._w, dl, pages.importance,
                                  pages.alpha, pages.gamma, pages, self._table, self._gstep)
                bound = np.partition(v, m - k - 1)[m - k - 1] if k < m else -np.inf
                if look.max() > bound or k >= m:
                    break
                k *= 4
            v = np.full(m, -np.inf)
            v[top] = look
        i = int(np.argmax(v))
        self.clock += time.perf_counter() - t_start
        self.last[i] = t
        self.s_at[i] = 0.0
        self.since[i] = t
        return i

    def run(self, n: int) -> np.ndarray:
        return np.array([self.next() for _ in range(n)], dtype=np.int64)


def run_seed(seed: int, m: int, horizon: float, intervals, web: str, polls_kind: str, policies=POLICIES,
             burn: float = 0.2, event_seed: int = 1, delay: float | None = None):
    """Accuracies of every policy, and the two optima, for each poll interval, on one seed's web; every
    policy on the same events (one seed of :func:`freshcore.policy_simulation.simulate`)."""
    rng = np.random.default_rng([19, seed])
    pages = make_web(m, rng, web)
    phases_u = rng.random(m)
    events = [19, seed, event_seed]  # simulate's seed: the same changes, requests and signals for every policy
    bandwidth = m / 5.0

    # the change times of those events (simulate draws them first, with _events), for the accuracy
    _, tc, counts, *_ = _events(pages, horizon, np.random.default_rng(events), delay, "repro_polled")
    changes = np.split(tc, np.cumsum(counts)[:-1])

    def run(policy, polls=None) -> float:
        res = simulate(policy, pages, horizon, rng=np.random.default_rng(events), polls=polls, burn_in=burn,
                       signal_delay=delay)
        assert np.array_equal(res.change_counts, counts)
        return accuracy(pages, changes, res.crawl_pages, res.crawl_times, burn * horizon, horizon)

    out = {"opt001": optimal_thresholds(pages, bandwidth).accuracy,
           "greedy": run(Scheduler(pages, bandwidth, value="greedy")),
           "ncis": run(Scheduler(pages, bandwidth, value="exact"))}
    for w in intervals:
        phases = np.zeros(m) if polls_kind == "grid" else phases_u * w
        schedule = PollSchedule(w, phase=phases)  # phase 0 everywhere: one shared grid
        polls = poll_log(pages, horizon, events, schedule, w, delay)
        caps = np.minimum(CAP, np.maximum(reach(pages, w, polls, horizon, bool(delay)), 1e-3))
        val, psi, fresh = tables(pages, w, caps)
        out[("opt-polled", w)] = polled_optimum(pages, bandwidth, val, psi, fresh)
        tabs = {"polled": val, "polled+": val, "ironed": ironed(val, psi, fresh, pages.importance)}
        for policy in policies:
            if policy == "ncis-fed":  # no poll(): simulate feeds it a signal at the poll time per moved page
                pol = Scheduler(pages, bandwidth, value="exact")
            elif policy == "polled-sched":
                pol = Scheduler(pages, bandwidth, value="polled", poll_interval=w)
            else:
                pol = PolledValuePolicy(pages, bandwidth, w, phases, tabs.get(policy, val), caps, policy == "polled+",
                                        delay if policy == "polled-delay" else None)
            out[(policy, w)] = run(pol, schedule)
    return out


def _ms(x: np.ndarray) -> str:
    return f"{x.mean():.4f}±{x.std(ddof=1) / math.sqrt(len(x)):.4f}" if len(x) > 1 else f"{x.mean():.4f}"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--horizon", type=float, default=60.0)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1 (to extend a run)")
    ap.add_argument("--web", choices=("spec", "demo"), default="spec")
    ap.add_argument("--polls", choices=("grid", "phase"), default="grid")
    ap.add_argument("--intervals", type=float, nargs="+", default=[1.0, 0.3, 0.1])
    ap.add_argument("--policies", nargs="+", choices=POLICIES, default=["ncis-fed", "polled"])
    ap.add_argument("--event-seed", type=int, default=1, help="another draw of the events on the same webs")
    ap.add_argument("--signal-delay", type=float, default=None,
                    help="mean of exponential delays of the true signals (polled-delay: the posterior knows it)")
    ap.add_argument("--quick", action="store_true", help="150 pages, horizon 15, 2 seeds, polls every 0.5 (tests)")
    a = ap.parse_args(argv)
    if a.quick:
        a.pages, a.horizon, a.seeds, a.intervals = 150, 15.0, 2, [0.5]
    t_start = time.perf_counter()
    runs = []
    for s in range(a.first_seed, a.first_seed + a.seeds):
        runs.append(run_seed(s, a.pages, a.horizon, a.intervals, a.web, a.polls, a.policies, event_seed=a.event_seed,
                             delay=a.signal_delay))
        print(f"seed {s}: " + ", ".join(f"{k}: {v:.4f}" for k, v in runs[-1].items()), file=sys.stderr, flush=True)
    col = lambda key: np.array([r[key] for r in runs])  # noqa: E731
    print(f"polled signals: web {a.web}, polls {a.polls}, m = {a.pages}, R = m/5, horizon {a.horizon:g} "
          f"(burn-in 20%), {a.seeds} seeds; mean ± standard error over seeds")
    print(f"continuous signals: ncis {_ms(col('ncis'))}, optimum (Theorem 2) {_ms(col('opt001'))}; "
          f"greedy {_ms(col('greedy'))}")
    names = a.policies
    print(f"{'w':>5} {'greedy':>15} " + " ".join(f"{n:>15}" for n in names) + f" {'opt-polled':>15}")
    for w in a.intervals:
        print(f"{w:>5g} {_ms(col('greedy')):>15} " + " ".join(f"{_ms(col((n, w))):>15}" for n in names)
              + f" {_ms(col(('opt-polled', w))):>15}")
    print("paired differences")
    pairs = [(n, "greedy") for n in names[1:]] + [(n, "ncis-fed") for n in names[1:]]
    print(f"{'w':>5} " + " ".join(f"{a_ + '-' + b_:>17}" for a_, b_ in pairs))
    for w in a.intervals:
        c = {n: col(n) if n == "greedy" else col((n, w)) for n in ("greedy", *names)}
        print(f"{w:>5g} " + " ".join(f"{_ms(c[a_] - c[b_]):>17}" for a_, b_ in pairs))
    print(f"({time.perf_counter() - t_start:.0f} s)")
    return {"runs": runs, "args": a}


if __name__ == "__main__":
    main(sys.argv[1:])
