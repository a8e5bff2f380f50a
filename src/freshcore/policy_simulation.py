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
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._validation import check_array, check_int, check_rng, check_same_length, check_scalar
from freshcore.pages import PageModel, check_pages
from freshcore.policies import CrawlPolicy
from freshcore.poll_schedule import PollSchedule, _poll_observations, _Polls

__all__ = ["PollSchedule", "SimulationResult", "simulate"]


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
        Signals (true and false, after their delays) that arrived by the
        horizon: delivered to the policy as they arrive without ``polls``;
        with ``polls`` seen only through them (``n_polls_moved +
        n_moves_hidden`` plus those after a page's last poll).
    n_signals_counted : int
        Those the policy reported as counted (``signal`` returned True); with
        ``polls``, the moved polls fed to a policy without ``poll`` as signals
        that it counted.
    crawl_pages, crawl_times : ndarray of shape (n_ticks,)
        Every decision (int64) and its tick time, in order.
    request_times : ndarray of shape (n_all_requests,)
        Time of every request over the whole horizon (grouped by page).
    request_fresh : ndarray of bool of shape (n_all_requests,)
        Whether that request found a fresh copy.
    window : tuple of float
        The evaluation window ``(burn_in * horizon, horizon)``.
    n_polls : int
        Page polls (one page read at one poll time) up to the horizon; 0 without ``polls``.
    n_polls_moved : int
        Those that saw the page's signal moved since its previous poll.
    n_moves_hidden : int
        Signal moves that a poll did not see as such because another move
        fell in the same window (moves seen by polls minus ``n_polls_moved``).
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
    n_polls: int = 0
    n_polls_moved: int = 0
    n_moves_hidden: int = 0

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


_REQUIRED = ("bandwidth", "time", "n_pages", "next", "run", "set_bandwidth")


def _check_policy(policy: Any, n_pages: int, caller: str) -> None:
    # a CrawlPolicy, or the same without ``signal`` (such a policy is given no signals)
    if not all(hasattr(policy, a) for a in _REQUIRED):
        members = [a for a in ("bandwidth", "time", "n_pages", "next", "run", "signal", "set_bandwidth")
                   if not hasattr(policy, a)]
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


def _events(pages: PageModel, H: float, rng: np.random.Generator, signal_delay: Any, caller: str) -> tuple:
    """The events of one run, all drawn from ``rng`` (the same whatever the policy and the polls).

    Returns ``(kc, tc, change_counts, kr, tr, request_counts, sig_t, sig_p)``: the changes and the requests
    as :func:`_page_major` gives them, and the signals arriving by ``H`` (after their delays) in time
    order (times, pages).
    """
    m = len(pages)
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
    return kc, tc, change_counts, kr, tr, request_counts, sig_t[order], sig_p[order]


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
    polls: PollSchedule | float | None = None,
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
    polls : PollSchedule or float > 0, optional
        Polled signal sources: the policy learns of the signals only by
        polling them (a float ``w`` is ``PollSchedule(w)``, every page on the
        shared grid ``w, 2w, ...``).  None (the default): each signal is
        delivered when it arrives.  See Notes.
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
        ``burn_in`` outside ``[0, 1)``, negative delays, a bad bandwidth schedule,
        ``polls`` that do not fit the pages (see :class:`PollSchedule`).

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
    The ``j``-th tick after the last bandwidth change at ``t_0`` is taken
    to be at ``t_0 + j/R`` (:class:`~freshcore.policies.CrawlPolicy`'s
    clock), so that a signal or poll at exactly a tick time is delivered
    before that tick.  A policy without ``signal``/``signal_many`` is given
    no signals.

    With ``polls`` the signals are not delivered as they arrive: at each
    poll time ``t`` the simulator computes, for each page polled then,
    ``moved`` -- whether any of its signals (true or false, after its delay)
    arrived in ``(previous poll of the page, t]`` (since time 0 for its first
    poll) -- and the time of the latest one, and delivers, in time order
    with the ticks (a poll at exactly a tick time before it):

    - to a policy with ``poll``: every poll, ``poll(pages, t, moved)`` (one
      call per distinct poll time; ``pages`` int64, the pages polled at
      ``t``, each once; ``moved`` bool of the same length; pages that did not
      move included), with ``lastmod=`` the latest move times when the
      schedule's ``lastmod`` is True;
    - to a policy without ``poll`` but with ``signal_many`` or ``signal``:
      one signal at the poll time for each moved page (the value of
      Busa-Fekete et al. (2025) "fed the polls"), through one
      ``signal_many`` call per tick with a poll;
    - to a policy with neither: nothing.

    Poll times are passed as ``max(poll time, time of the last tick)``; polls
    after the last tick (at times up to the horizon) are delivered after it.
    Every policy is judged on the same events: the changes, requests and
    signals are drawn as without ``polls``, and a ``"random"`` phase after
    them.

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
    if polls is not None:
        if not isinstance(polls, PollSchedule):
            if isinstance(polls, (bool, np.bool_)) or not isinstance(polls, numbers.Real):
                raise TypeError(f"The 'polls' parameter of {caller} must be a PollSchedule or a poll interval > 0. "
                                f"Got {type(polls).__name__}.")
            polls = PollSchedule(check_scalar(polls, "polls", caller, low=0.0, low_inclusive=False))
        polls._check_fit(m, H, caller)
    rng = check_rng(rng, caller)

    kc, _, change_counts, kr, tr, request_counts, sig_t, sig_p = _events(pages, H, rng, signal_delay, caller)

    poll_q = None
    if polls is not None:
        poll_q = _poll_observations(polls, m, H, sig_t, sig_p, rng)
    poll_fn = getattr(policy, "poll", None)
    has_signal = callable(getattr(policy, "signal", None)) or callable(getattr(policy, "signal_many", None))
    feed: Any
    if poll_q is None:
        feed = _SignalFeed(policy, sig_t, sig_p) if has_signal else _NoFeed()
    elif callable(poll_fn):
        feed = _PollFeed(policy, poll_q)
    elif has_signal:
        cnt = np.diff(poll_q.starts)
        fed_t = np.repeat(poll_q.times, cnt)[poll_q.moved]
        feed = _SignalFeed(policy, fed_t, poll_q.pages[poll_q.moved])
    else:
        feed = _NoFeed()

    bar = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=H, desc="simulate", unit=" time", file=sys.stderr, leave=False,
                   bar_format="{l_bar}{bar}| {n:.4g}/{total:.4g} [{elapsed}<{remaining}]")
    try:
        crawls_p, crawls_t, counted = _run_loop(policy, H, feed, rs_t, rs_r, kc, m, bar)
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
        n_polls=0 if poll_q is None else len(poll_q.pages),
        n_polls_moved=0 if poll_q is None else poll_q.n_moved,
        n_moves_hidden=0 if poll_q is None else poll_q.n_hidden,
    )


class _NoFeed:
    """Nothing to deliver (a policy without ``signal``/``signal_many`` or ``poll``)."""

    next_time = math.inf

    def deliver(self, t_next: float, t_now: float) -> int:  # pragma: no cover - never due
        return 0


class _SignalFeed:
    """Signals (or moved polls fed as signals) in time order, through ``signal_many`` or ``signal``."""

    def __init__(self, policy: Any, times: np.ndarray, pages: np.ndarray) -> None:
        many = getattr(policy, "signal_many", None)
        self._many = many if callable(many) else None
        self._one = getattr(policy, "signal", None)
        self._t, self._p = times, pages
        self._i = 0
        self.next_time = float(times[0]) if len(times) else math.inf

    def deliver(self, t_next: float, t_now: float) -> int:
        """The signals up to ``t_next`` (at ``max(arrival, t_now)``); how many the policy counted."""
        i = self._i
        j = int(np.searchsorted(self._t, t_next, side="right"))
        ts = np.maximum(self._t[i:j], t_now)
        ps = self._p[i:j]
        counted = 0
        if self._many is not None:
            res = np.asarray(self._many(ps, ts))
            counted = int(res) if res.ndim == 0 else int(np.count_nonzero(res))
        elif self._one is not None:
            for p, t in zip(ps.tolist(), ts.tolist()):
                counted += bool(self._one(p, t))
        self._i = j
        self.next_time = float(self._t[j]) if j < len(self._t) else math.inf
        return counted


class _PollFeed:
    """Poll batches in time order, one ``poll(pages, t, moved)`` call per poll time."""

    def __init__(self, policy: Any, polls: _Polls) -> None:
        self._poll = policy.poll
        self._q = polls
        self._b = 0
        self.next_time = float(polls.times[0]) if len(polls.times) else math.inf

    def deliver(self, t_next: float, t_now: float) -> int:
        """The poll batches up to ``t_next`` (each at ``max(poll time, t_now)``)."""
        q, b = self._q, self._b
        n = len(q.times)
        while b < n and q.times[b] <= t_next:
            s, e = int(q.starts[b]), int(q.starts[b + 1])
            t = max(float(q.times[b]), t_now)
            if q.lastmod is None:
                self._poll(q.pages[s:e], t, q.moved[s:e])
            else:
                self._poll(q.pages[s:e], t, q.moved[s:e], lastmod=q.lastmod[s:e])
            b += 1
        self._b = b
        self.next_time = float(q.times[b]) if b < n else math.inf
        return 0


def _last_tick(origin: float, r: float, t: float, strict: bool) -> int:
    """The largest ``j >= 0`` with ``origin + j/r <= t`` (``< t`` when ``strict``; 0 if none), in the
    floating point of the tick clock ``origin + j/r``."""
    if t == math.inf:
        return 1 << 62
    j = max(0, math.floor((t - origin) * r))
    if strict:
        while j > 0 and origin + j / r >= t:
            j -= 1
        while origin + (j + 1) / r < t:
            j += 1
    else:
        while j > 0 and origin + j / r > t:
            j -= 1
        while origin + (j + 1) / r <= t:
            j += 1
    return j


def _run_loop(
    policy: CrawlPolicy, H: float, feed: Any, rs_t: np.ndarray, rs_r: np.ndarray, kc: np.ndarray, m: int,
    bar: Any = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Deliver signals or polls (``feed``) and bandwidth changes, collect the decisions (pages, times) and
    the counted signals (``bar``: a tqdm bar over the simulated time, or None).

    The ``j``-th tick after the last bandwidth change (at ``origin``) is at ``origin + j/r``, the clock of
    :class:`~freshcore.policies.CrawlPolicy`, so an event at exactly a tick time is delivered before it."""
    observe = getattr(policy, "observe", None)
    observe = observe if callable(observe) else None
    ticks = getattr(policy, "tick_times", None)
    ticks = ticks if callable(ticks) else None
    n_rs = len(rs_t)
    last = np.zeros(m)
    scale = 1.0 / (2.0 * H)
    out_p: list = []
    out_t: list = []
    ri = 0
    counted = 0
    origin, j = float(policy.time), 0
    r = policy.bandwidth
    while True:
        t_now = policy.time
        if bar is not None:
            bar.update(min(t_now, H) - bar.n)
        t_next = origin + (j + 1) / r if ticks is None else float(ticks(1)[0])
        while ri < n_rs and rs_t[ri] < t_next:
            policy.set_bandwidth(float(rs_r[ri]))
            ri += 1
            r, origin, j = policy.bandwidth, float(policy.time), 0
            t_next = origin + 1.0 / r if ticks is None else float(ticks(1)[0])
        if t_next > H:
            break
        if feed.next_time <= t_next:
            counted += feed.deliver(t_next, t_now)
        if observe is not None:
            page = int(policy.next())
            j += 1
            t = policy.time
            lo = np.searchsorted(kc, page + last[page] * scale, side="right")
            hi = np.searchsorted(kc, page + t * scale, side="right")
            observe(page, bool(hi > lo))
            last[page] = t
            out_p.append(np.array([page], dtype=np.int64))
            out_t.append(np.array([t]))
            continue
        # ticks up to the horizon and the next rate change, strictly before the next signal or poll
        limit = min(H, float(rs_t[ri]) if ri < n_rs else H)
        if ticks is not None:
            k, ts = _ticks_before(ticks, t_now, r, limit, feed.next_time)
            out_p.append(np.asarray(policy.run(k), dtype=np.int64))
            out_t.append(ts)
            continue
        k = max(1, min(_last_tick(origin, r, limit, False), _last_tick(origin, r, feed.next_time, True)) - j)
        ps = np.asarray(policy.run(k), dtype=np.int64)
        ts = origin + np.arange(j + 1, j + k + 1) / r
        ts[-1] = policy.time
        j += k
        out_p.append(ps)
        out_t.append(ts)
    if isinstance(feed, _PollFeed) and feed.next_time <= H:  # every page polled at all its times
        feed.deliver(H, policy.time)
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
