"""Discrete-event simulation that judges crawl policies (SPEC section 4).

:func:`simulate` draws Poisson changes, requests and change-indicating
signals for a set of pages, lets a crawl policy pick one page per tick, and
measures the *accuracy*: the fraction of requests that find a fresh copy, as
in the experiments of Section 6 of Busa-Fekete, Zimmert, György et al. (2025).

The policy
----------
Any :class:`~freshcore.policies.CrawlPolicy`: :class:`freshcore.schedule.Scheduler`,
:class:`freshcore.sharding.ShardedScheduler`, the baselines of
:mod:`freshcore.policies`, or an object of your own with the same members.
A policy handed to :func:`simulate` must be new (``time == 0``): every page
counts as crawled, hence fresh, at time 0.  Its optional members
(``signal_many``, ``tick_times``, ``observe``) are used when present, as
:class:`~freshcore.policies.CrawlPolicy` describes.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._validation import check_array, check_int, check_rng, check_same_length, check_scalar
from freshcore.pages import PageModel, check_pages
from freshcore.policies import CrawlPolicy

__all__ = ["SimulationResult", "simulate"]



@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Outcome of :func:`simulate`.

    Attributes
    ----------
    accuracy : float
        Fraction of the requests at times ``>= burn_in * horizon`` that found
        a fresh copy (NaN if there were none).
    accuracy_se : float
        Its standard error by batch means: the evaluation window is cut into
        ``n_blocks`` equal time blocks, ``se = std(block accuracies)/sqrt(n_blocks)``.
    n_requests : int
        Requests in the evaluation window.
    crawl_counts : ndarray of int64 of shape (n_pages,)
        Crawls of each page in the evaluation window.
    empirical_rates : ndarray of shape (n_pages,)
        ``crawl_counts / (horizon - burn_in * horizon)``.
    change_counts, request_counts : ndarray of int64 of shape (n_pages,)
        Changes and requests of each page over the whole horizon.
    n_signals : int
        Signals (true and false) that arrived before the horizon and were
        delivered to the policy.
    n_signals_counted : int
        Those the policy reported as counted (``signal`` returned True).
    crawl_pages, crawl_times : ndarray of shape (n_ticks,)
        Every decision (int64) and its tick time, in order.
    request_times : ndarray of shape (n_all_requests,)
        Time of every request over the whole horizon (grouped by page).
    request_fresh : ndarray of bool of shape (n_all_requests,)
        Whether that request found a fresh copy.
    window : tuple of float
        The evaluation window ``(burn_in * horizon, horizon)``.
    """

    accuracy: float
    accuracy_se: float
    n_requests: int
    crawl_counts: np.ndarray
    empirical_rates: np.ndarray
    change_counts: np.ndarray
    request_counts: np.ndarray
    n_signals: int
    n_signals_counted: int
    crawl_pages: np.ndarray
    crawl_times: np.ndarray
    request_times: np.ndarray
    request_fresh: np.ndarray
    window: tuple

    def accuracy_between(self, start: float, end: float, n_blocks: int = 20) -> tuple[float, float]:
        """Accuracy and its batch-means standard error over requests in ``[start, end)``.

        Parameters
        ----------
        start, end : float
            The time window, ``start < end``.
        n_blocks : int, default=20
            Equal time blocks for the standard error (``>= 2``).

        Returns
        -------
        accuracy, se : float
            NaN when the window holds no request (se NaN also when a block is empty).
        """
        caller = "SimulationResult.accuracy_between"
        a = check_scalar(start, "start", caller)
        b = check_scalar(end, "end", caller, low=a, low_inclusive=False)
        nb = check_int(n_blocks, "n_blocks", caller, low=2)
        return _window_accuracy(self.request_times, self.request_fresh, a, b, nb)


def _window_accuracy(times: np.ndarray, fresh: np.ndarray, a: float, b: float, nb: int) -> tuple[float, float]:
    sel = (times >= a) & (times < b)
    n = int(sel.sum())
    if n == 0:
        return math.nan, math.nan
    f = fresh[sel]
    block = np.minimum(((times[sel] - a) * (nb / (b - a))).astype(np.int64), nb - 1)
    req = np.bincount(block, minlength=nb)
    hits = np.bincount(block, weights=f, minlength=nb)
    acc = float(f.mean())
    if (req == 0).any():
        return acc, math.nan
    per = hits / req
    return acc, float(per.std(ddof=1) / math.sqrt(nb))


def _page_major(
    rng: np.random.Generator, rates: np.ndarray, horizon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Poisson processes of the given rates on [0, horizon], grouped by page, sorted within a page.

    Returns ``(keys, pages, times, counts)``: ``keys = page + t/(2 horizon)``
    (one sorted float64 array that orders events by page, then time),
    ``pages`` (intp), ``times`` and the per-page counts.
    """
    counts = rng.poisson(rates * horizon)
    pages = np.repeat(np.arange(len(rates), dtype=np.intp), counts)
    keys = np.sort(pages + 0.5 * rng.random(len(pages)))
    times = (keys - pages) * (2.0 * horizon)
    return keys, pages, times, counts.astype(np.int64)


def _check_policy(policy: Any, n_pages: int, caller: str) -> None:
    if not isinstance(policy, CrawlPolicy):
        members = [m for m in ("bandwidth", "time", "n_pages", "next", "run", "signal", "set_bandwidth")
                   if not hasattr(policy, m)]
        raise TypeError(
            f"The 'policy' parameter of {caller} must be a crawl policy (freshcore.CrawlPolicy); "
            f"{type(policy).__name__} lacks {', '.join(members)}."
        )
    if policy.n_pages != n_pages:
        raise ValueError(f"The 'policy' parameter of {caller} has {policy.n_pages} pages but 'pages' has {n_pages}.")
    if policy.time != 0.0:
        raise ValueError(
            f"The 'policy' parameter of {caller} must be a new policy (time 0). Got time {policy.time!r} instead."
        )


def _delays(signal_delay: Any, rng: np.random.Generator, n: int, caller: str) -> np.ndarray | None:
    if signal_delay is None:
        return None
    if callable(signal_delay):
        d = check_array(signal_delay(rng, n), "signal_delay(rng, n)", caller, low=0.0, allow_empty=True)
        if d.shape != (n,):
            raise ValueError(
                f"The 'signal_delay' parameter of {caller} must return an array of shape ({n},). "
                f"Got shape {d.shape} instead."
            )
        return d
    mean = check_scalar(signal_delay, "signal_delay", caller, low=0.0)
    return rng.exponential(mean, n) if mean > 0 else None


@cites(BUSA_FEKETE_2025)
def simulate(
    policy: CrawlPolicy,
    pages: PageModel,
    horizon: float,
    *,
    rng: Any = None,
    burn_in: float = 0.2,
    signal_delay: float | Callable[[np.random.Generator, int], Any] | None = None,
    bandwidth_schedule: Any = None,
    n_blocks: int = 20,
    progress: bool = False,
) -> SimulationResult:
    """Run a crawl policy against simulated page changes, requests and signals.

    Parameters
    ----------
    policy : CrawlPolicy
        A new policy over the same pages (e.g. :class:`freshcore.schedule.Scheduler`,
        :class:`freshcore.policies.LowDiscrepancy`; see :class:`freshcore.policies.CrawlPolicy`).
    pages : PageModel
        Change rates ``Delta_i``, request rates ``mu_i``, signal recall
        ``lambda_i`` and false-signal rates ``nu_i`` of the world (the policy
        may or may not know them).
    horizon : float
        Simulated time ``T > 0``; ticks run while ``time + 1/bandwidth <= T``.
    rng : None, int or numpy.random.Generator
        Source of the events (a seed or a Generator); the same seed gives the
        same events whatever the policy (so policies can be compared on the
        same events).
    burn_in : float in [0, 1), default=0.2
        Requests before ``burn_in * T`` are not counted.
    signal_delay : None, float >= 0 or callable, default=None
        Delay between a change and its (true) signal: None or 0 for none, a
        float for exponential delays of that mean, or ``f(rng, n)`` returning
        ``n`` delays ``>= 0``.  False signals are Poisson whatever the delay.
    bandwidth_schedule : (times, rates), optional
        Bandwidth changes (Appendix D of Busa-Fekete et al. (2025)): at each
        ``times[k]`` (increasing, in ``[0, T]``) the policy's
        ``set_bandwidth(rates[k])`` is called before the first tick after
        ``times[k]``, which is then at the last tick at or before ``times[k]``
        plus ``1/rates[k]``.
    n_blocks : int, default=20
        Number of time blocks for the batch-means standard error (``>= 2``).
    progress : bool, default=False
        Show a progress bar of the simulated time on standard error (tqdm); the result is the same.

    Returns
    -------
    SimulationResult

    Raises
    ------
    TypeError
        If ``policy`` is not a :class:`~freshcore.policies.CrawlPolicy` or ``pages`` is not a PageModel.
    ValueError
        For a used policy, mismatched page counts, ``horizon <= 0``,
        ``burn_in`` outside ``[0, 1)``, negative delays, a bad bandwidth schedule.

    Notes
    -----
    Events (vectorised, drawn from ``rng``): per page, Poisson
    changes of rate ``Delta_i`` and requests of rate ``mu_i`` on ``[0, T]``;
    each change is signalled with probability ``lambda_i`` (after its delay);
    false signals are Poisson of rate ``nu_i``.  Signals arriving after ``T``
    are dropped.  The loop delivers, before each tick, the signals that
    arrived up to it in time order (through ``signal``, at
    ``max(arrival, time of the last tick)``), and asks the policy for the
    tick's page (signals arriving exactly at a tick come before it); runs of
    ticks without a signal or rate change go through one ``run(k)`` call.  Every page counts as crawled at time 0.

    A request of page ``i`` at time ``q`` is fresh iff no change of page
    ``i`` falls in ``(c, q]``, ``c`` its last crawl at or before ``q``
    (SPEC section 4: "accuracy = fraction of requests that find a fresh
    copy"); computed after the loop with ``searchsorted`` over keys
    ``page + t/(2T)``, which orders events of a page by time up to the float
    resolution of the key (about ``4 T m 2**-53``: events of one page closer
    than ~1e-8 time units at ``T m = 10**7`` count as simultaneous, changes
    then counting as seen by the crawl).  For periodic crawling at rate
    ``xi`` the expected accuracy is ``sum_i mu_i F_i / sum_i mu_i`` with
    ``F_i = (xi_i/Delta_i)(1 - exp(-Delta_i/xi_i))`` (eq. (5) of
    Busa-Fekete et al. (2025); :func:`freshcore.rates.freshness`).

    Examples
    --------
    >>> from freshcore.pages import PageModel
    >>> from freshcore.policies import RoundRobin
    >>> from freshcore.policy_simulation import simulate
    >>> from freshcore.rates import freshness
    >>> pages = PageModel([0.5, 1.0, 2.0, 0.2], [1.0, 1.0, 1.0, 1.0])
    >>> res = simulate(RoundRobin(4, bandwidth=4.0), pages, 2000.0, rng=1)
    >>> len(res.crawl_pages), float(res.crawl_times[-1]), res.empirical_rates.round(2).tolist()
    (8000, 2000.0, [1.0, 1.0, 1.0, 1.0])
    >>> expected = freshness([1.0] * 4, pages.change_rate, pages.importance, model="periodic")
    >>> bool(abs(res.accuracy - expected) < 4 * res.accuracy_se)
    True
    """
    caller = "simulate"
    check_pages(pages, caller)
    m = len(pages)
    _check_policy(policy, m, caller)
    H = check_scalar(horizon, "horizon", caller, low=0.0, low_inclusive=False)
    burn = check_scalar(burn_in, "burn_in", caller, low=0.0, high=1.0, high_inclusive=False)
    nb = check_int(n_blocks, "n_blocks", caller, low=2)
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"The 'progress' parameter of {caller} must be True or False. Got {progress!r}.")
    if bandwidth_schedule is None:
        rs_t, rs_r = np.empty(0), np.empty(0)
    else:
        try:
            times_in, rates_in = bandwidth_schedule
        except (TypeError, ValueError):
            raise TypeError(
                f"The 'bandwidth_schedule' parameter of {caller} must be a pair (times, rates). "
                f"Got {bandwidth_schedule!r}."
            ) from None
        rs_t = check_array(times_in, "bandwidth_schedule times", caller, low=0.0, high=H)
        rs_r = check_array(rates_in, "bandwidth_schedule rates", caller, low=0.0, low_inclusive=False)
        check_same_length(caller, bandwidth_schedule_times=rs_t, bandwidth_schedule_rates=rs_r)
        bad = np.flatnonzero(np.diff(rs_t) <= 0)
        if bad.size:
            i = int(bad[0]) + 1
            raise ValueError(
                f"The 'bandwidth_schedule times' parameter of {caller} must be strictly increasing; "
                f"times[{i}] = {rs_t[i]!r} <= times[{i - 1}] = {rs_t[i - 1]!r}."
            )
    rng = check_rng(rng, caller)

    dl, mu, lam, nu = pages.change_rate, pages.importance, pages.recall, pages.false_rate
    kc, pc, tc, change_counts = _page_major(rng, dl, H)
    kr, _, tr, request_counts = _page_major(rng, mu, H)
    # signals: true ones thin the changes (then delay), false ones are Poisson
    if lam.any():
        true = rng.random(len(pc)) < lam[pc]
        sp, st = pc[true], tc[true]
    else:  # recall 0 everywhere: no true signals, no draws
        sp, st = pc[:0], tc[:0]
    d = _delays(signal_delay, rng, len(st), caller)
    if d is not None:
        st = st + d
    fcount = rng.poisson(nu * H)
    fp = np.repeat(np.arange(m, dtype=np.intp), fcount)
    ft = H * rng.random(len(fp))
    sig_t = np.concatenate([st, ft])
    sig_p = np.concatenate([sp, fp])
    keep = sig_t <= H
    sig_t, sig_p = sig_t[keep], sig_p[keep]
    order = np.argsort(sig_t, kind="stable")
    sig_t, sig_p = sig_t[order], sig_p[order]

    bar = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=H, desc="simulate", unit=" time", file=sys.stderr, leave=False,
                   bar_format="{l_bar}{bar}| {n:.4g}/{total:.4g} [{elapsed}<{remaining}]")
    try:
        crawls_p, crawls_t, counted = _run_loop(policy, H, sig_t, sig_p, rs_t, rs_r, kc, m, bar)
    finally:
        if bar is not None:
            bar.close()

    # freshness of every request: last crawl key at or before the request, changes in between
    ck = np.sort(np.concatenate([np.arange(m, dtype=np.float64), crawls_p + crawls_t / (2.0 * H)]))
    seen = np.searchsorted(kc, ck, side="right")  # changes up to each crawl (few queries)
    last = np.searchsorted(ck, kr, side="right") - 1
    fresh = np.searchsorted(kc, kr, side="right") == seen[last]

    t0 = burn * H
    acc, se = _window_accuracy(tr, fresh, t0, H + 1e-12 * H, nb) if len(tr) else (math.nan, math.nan)
    in_win = crawls_t >= t0
    counts = np.bincount(crawls_p[in_win], minlength=m).astype(np.int64)
    n_req = int(np.count_nonzero(tr >= t0))
    return SimulationResult(
        accuracy=acc,
        accuracy_se=se,
        n_requests=n_req,
        crawl_counts=counts,
        empirical_rates=counts / (H - t0),
        change_counts=change_counts,
        request_counts=request_counts,
        n_signals=len(sig_t),
        n_signals_counted=counted,
        crawl_pages=crawls_p,
        crawl_times=crawls_t,
        request_times=tr,
        request_fresh=fresh,
        window=(t0, H),
    )


def _run_loop(
    policy: CrawlPolicy, H: float, sig_t: np.ndarray, sig_p: np.ndarray, rs_t: np.ndarray, rs_r: np.ndarray,
    kc: np.ndarray, m: int, bar: Any = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Deliver signals and bandwidth changes, collect the decisions (pages, times) and the counted signals
    (``bar``: a tqdm bar over the simulated time, or None)."""
    observe = getattr(policy, "observe", None)
    observe = observe if callable(observe) else None
    many = getattr(policy, "signal_many", None)
    many = many if callable(many) else None
    ticks = getattr(policy, "tick_times", None)
    ticks = ticks if callable(ticks) else None
    n_sig, n_rs = len(sig_t), len(rs_t)
    last = np.zeros(m)
    scale = 1.0 / (2.0 * H)
    out_p: list = []
    out_t: list = []
    si = ri = 0
    counted = 0
    while True:
        t_now = policy.time
        if bar is not None:
            bar.update(min(t_now, H) - bar.n)
        r = policy.bandwidth
        t_next = t_now + 1.0 / r if ticks is None else float(ticks(1)[0])
        while ri < n_rs and rs_t[ri] < t_next:
            policy.set_bandwidth(float(rs_r[ri]))
            ri += 1
            r = policy.bandwidth
            t_next = t_now + 1.0 / r if ticks is None else float(ticks(1)[0])
        if t_next > H:
            break
        if si < n_sig and sig_t[si] <= t_next:
            j = int(np.searchsorted(sig_t, t_next, side="right"))
            ts = np.maximum(sig_t[si:j], t_now)
            ps = sig_p[si:j]
            if many is not None:
                res = np.asarray(many(ps, ts))
                counted += int(res) if res.ndim == 0 else int(np.count_nonzero(res))
            else:
                for p, t in zip(ps.tolist(), ts.tolist()):
                    counted += bool(policy.signal(p, t))
            si = j
        if observe is not None:
            page = int(policy.next())
            t = policy.time
            lo = np.searchsorted(kc, page + last[page] * scale, side="right")
            hi = np.searchsorted(kc, page + t * scale, side="right")
            observe(page, bool(hi > lo))
            last[page] = t
            out_p.append(np.array([page], dtype=np.int64))
            out_t.append(np.array([t]))
            continue
        # ticks up to the horizon and the next rate change, strictly before the next signal
        limit = min(H, float(rs_t[ri]) if ri < n_rs else H)
        if ticks is not None:
            k, ts = _ticks_before(ticks, t_now, r, limit, float(sig_t[si]) if si < n_sig else math.inf)
            out_p.append(np.asarray(policy.run(k), dtype=np.int64))
            out_t.append(ts)
            continue
        k = math.floor((limit - t_now) * r)
        if si < n_sig:
            k = min(k, math.ceil((float(sig_t[si]) - t_now) * r) - 1)
        k = max(1, k)
        ps = np.asarray(policy.run(k), dtype=np.int64)
        ts = t_now + np.arange(1, k + 1) / r
        ts[-1] = policy.time
        out_p.append(ps)
        out_t.append(ts)
    if out_p:
        return np.concatenate(out_p), np.concatenate(out_t), counted
    return np.empty(0, dtype=np.int64), np.empty(0), counted


def _ticks_before(
    ticks: Callable[[int], Any], t_now: float, r: float, limit: float, t_sig: float
) -> tuple[int, np.ndarray]:
    """The decisions of a ``tick_times`` policy timed at or before ``limit`` and before ``t_sig`` (at least one).

    Returns their number and times; asks for ``tick_times`` of a first guess
    (``1/r`` spacing) and doubles it until a time falls beyond the bounds.
    """
    want = max(1, math.floor((limit - t_now) * r) + 1)
    while True:
        ts = np.asarray(ticks(want), dtype=np.float64)
        k = min(int(np.searchsorted(ts, limit, side="right")), int(np.searchsorted(ts, t_sig, side="left")))
        if k < want:
            k = max(1, k)
            return k, ts[:k].copy()
        want *= 2
