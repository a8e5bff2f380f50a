"""Independent references for the Whittle index tests (tests/test_whittle*.py): no code shared with freshcore.

The Whittle index is computed from its definition: the subsidy ``lambda`` for passivity at which the active and
passive actions are equally good at a state, in the source's own average-reward problem (eq. (10) of Avrachenkov
and Borkar (2018)), whose bias function comes from relative value iteration on the states reachable from that
state.  No closed form of the paper is used.
"""

from __future__ import annotations

import numpy as np


def _chains(x, ustar, alpha, k):
    """The states reachable from x (chain A: x never crawled) and after a crawl (chain B: u, alpha u + u, ...),
    each by iterating the dynamics of eq. (2) ``k`` times; the last state of each chain is its own passive
    successor (it is within alpha^k u* of the limit u*)."""
    u = ustar * (1.0 - alpha)
    a = np.empty((len(x), k))
    b = np.empty((len(x), k))
    a[:, 0], b[:, 0] = x, u
    for j in range(1, k):
        a[:, j] = alpha * a[:, j - 1] + u
        b[:, j] = alpha * b[:, j - 1] + u
    return np.concatenate([a, b], axis=1)


def relative_value_iteration(states, nxt, k, subsidy, cost, h=None, tau=0.5, tol=1e-13):
    """The bias h of the per-source problem with passive subsidy ``cost * subsidy`` (rows: independent problems).

    ``states[:, s]`` is the reward of crawling at state s (its value), ``nxt[s]`` its passive successor, and a
    crawl moves to state ``k`` (u).  Relative value iteration with the aperiodicity transform
    ``h <- tau T h + (1 - tau) h`` (the dynamics are periodic), normalised to h(u) = 0, until the span of the
    change is below ``tol`` times the largest state.  Returns (h, gain) with gain = (T h)(u) - h(u)."""
    if h is None:
        h = np.zeros_like(states)
    scale = np.max(states)
    while True:
        th = np.maximum(cost[:, None] * subsidy[:, None] + h[:, nxt], states + h[:, k:k + 1])
        hn = tau * th + (1.0 - tau) * h
        hn -= hn[:, k:k + 1]
        d = hn - h
        h = hn
        if np.max(np.ptp(d, axis=1)) < tol * scale:
            th = np.maximum(cost[:, None] * subsidy[:, None] + h[:, nxt], states + h[:, k:k + 1])
            return h, th[:, k] - h[:, k]


def rvi_index(x, ustar, alpha, cost, iterations=64):
    """Whittle index at each (x, u*, alpha, C) by bisection on the subsidy, each subsidy's bias from
    :func:`relative_value_iteration` (warm-started from the previous one).  Arrays of equal length."""
    x, ustar, alpha, cost = (np.asarray(v, dtype=np.float64) for v in (x, ustar, alpha, cost))
    k = int(np.ceil(40.0 / np.min(-np.log(alpha)))) + 2
    states = _chains(x, ustar, alpha, k)
    nxt = np.concatenate([np.minimum(np.arange(1, k + 1), k - 1), k + np.minimum(np.arange(1, k + 1), k - 1)])
    lo = np.zeros(len(x))
    hi = 1.5 * np.maximum(x, ustar) / cost + 1.0
    h = None
    for _ in range(iterations):
        lam = 0.5 * (lo + hi)
        h, _gain = relative_value_iteration(states, nxt, k, lam, cost, h)
        passive_better = cost * lam + h[:, 1] - (x + h[:, k]) > 0
        hi = np.where(passive_better, lam, hi)
        lo = np.where(passive_better, lo, lam)
    return 0.5 * (lo + hi)
