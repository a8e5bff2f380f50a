"""Crawl value for polled, lossy change signals: the posterior per poll window and the value of crawling.

A crawler rarely hears of a change when it happens.  It *polls* a signal source (a sitemap's ``lastmod``, a
feed) and sees, per page and per window between two polls, only whether the page's signal *moved*; several
changes and false moves in one window collapse into one observation (SPEC section 3b, issue 19).  This
module gives the exact posterior of that observation model, the state a crawler keeps per page, and the
crawl value ``V`` of the threshold policies on that state, which reduces to the value of Busa-Fekete,
Zimmert, György et al. (2025) (:func:`freshcore.value.crawl_value`) as polls become continuous and to
the Greedy value when the signals carry no information.

* :func:`moved_weight` -- ``b(w)``, what one moved window of length ``w`` adds to the log-staleness;
* :func:`window_staleness` -- the posterior of one window (SPEC section 3b's two formulas), also for the
  window cut by a crawl;
* :func:`polled_staleness` -- a page's log of ``(poll time, moved)`` observations turned into its state;
* :func:`regular_staleness` -- the same for polls every ``w`` after each crawl, from ``(elapsed, moved
  windows)`` (the state a scheduler keeps, like ``(tau_elap, n_cis)`` for continuous signals);
* :func:`polled_interval`, :func:`polled_fresh_time`, :func:`polled_value` -- ``psi``, ``w`` and ``V``
  of the threshold policy, by exact lattice sums (a reference implementation in numpy).

Model and posterior
-------------------
Per page: changes are Poisson(``Delta``), each signalled with probability ``lambda`` (recall), false moves
are Poisson(``nu``), all independent; ``gamma = lambda Delta + nu`` is the rate of signal moves and
``alpha = (1 - lambda) Delta`` the rate of unsignalled changes (Section 3 of Busa-Fekete et al. (2025)).
A poll at ``p1`` reports whether the signal moved in ``(p0, p1]``, ``p0`` the previous poll.  Let the
last crawl be at ``c`` and split the window into ``a = max(0, c - p0)`` before the crawl and
``l = p1 - max(c, p0)`` after it.  The three Poisson processes are independent and so are disjoint
intervals, hence

* not moved: no signal at all in the window, so only unsignalled changes can have happened after the
  crawl: ``P(no change in l | not moved) = exp(-alpha l)``;
* moved: ``P(no change in l, moved) = exp(-Delta l) (1 - exp(-nu l - gamma a))`` (without a change in
  ``l`` only false moves there and any move in ``a`` remain), and ``P(moved) = 1 - exp(-gamma (a + l))``:
  ``P(no change in l | moved) = exp(-Delta l) (1 - exp(-nu l - gamma a)) / (1 - exp(-gamma (a + l)))``.

With ``a = 0`` these are SPEC section 3b's formulas; both are checked by Monte Carlo in
``tests/test_polled_signals.py``.  The windows are independent, so the *log-staleness*
``s = -log P(unchanged since the last crawl | polls)`` is the sum of the windows' ``-log`` factors plus
``Delta u`` for the open window (``u`` since the last poll: no observation yet, the prior).  ``s`` plays
the part of ``alpha tau_eff`` of the continuous model, where ``P(fresh) = exp(-alpha tau_eff)``.

Regular polls.  With polls every ``w`` starting at the crawl, a moved window weighs
``alpha w + b`` and an unmoved one ``alpha w``, where

``b(w) = lambda Delta w - log((1 - exp(-nu w)) / (1 - exp(-gamma w))) >= lambda Delta w``,

so after ``n`` polls with ``j`` moved windows ``s = x(n, j) = alpha w n + b j``, and ``u`` into the next
window ``s = x(n, j) + Delta u``.  Each window moves with probability ``q = 1 - exp(-gamma w)`` whatever
happened before (the signal process is Poisson), so ``j`` is Binomial(``n``, ``q``): the state at polls
is that of the continuous model with ``alpha beta`` replaced by ``b(w)`` and a moved window (probability
``q``) in place of a Poisson signal.  Between polls ``s`` grows at rate ``Delta``; at a poll it falls by
``lambda Delta w`` (not moved: the window's drift ``Delta w`` becomes ``alpha w``) or rises by
``b - lambda Delta w >= 0`` (moved).  The state is therefore not monotone in time.  Limits: as ``w -> 0``,
``b(w) -> log(gamma/nu) = alpha beta`` and moved windows become signals, so ``s -> alpha tau_eff``; when
``lambda Delta = 0``, ``b = 0`` and ``s = Delta tau_elap`` (Greedy); as ``nu -> inf``, ``q -> 1`` and
``b - lambda Delta w -> 0``, so again ``s -> Delta tau_elap``.

Delayed signals.  If each true signal reaches the source a random delay ``D`` after its change (i.i.d.,
known law ``F``; false moves are not delayed), the posterior keeps its form.  By the marking theorem the
pairs (change, arrival) are a Poisson process in the plane, so given "no change in ``(c, t]``" (the crawl at
``c``) the moves in disjoint windows stay independent, and unconditionally too; hence
``P(unchanged | polls) = e^{-Delta (t - c)} prod_k P(obs_k | unchanged)/P(obs_k)``.  For a window
``(p0, p1]`` the expected true moves it receives from changes after the crawl are
``H = lambda Delta [Phi(p1 - c) - Phi(p0 - c)]``, ``Phi(x) = E[(x - D)^+]`` (0 for ``x <= 0``), and all its
moves have mean ``gamma (p1 - p0)``; with ``G = gamma (p1 - p0) - H`` the window's factor is ``e^{H}`` if it
did not move and ``(1 - e^{-G})/(1 - e^{-G - H})`` if it did.  Without delay ``Phi(x) = x^+``, ``H =
lambda Delta l`` and these are the formulas above.  :func:`window_staleness` and :func:`polled_staleness`
take exponential delays (``signal_delay``, their mean, as :func:`freshcore.policy_simulation.simulate`
draws them: ``Phi(x) = x - theta (1 - e^{-x/theta})``); checked by Monte Carlo in
``tests/test_polled_signals.py``.  The value below is derived without delay: with delays a scheduler ranks
pages by it at the exact delayed posterior, a policy in the family, not the optimum among them.

Threshold policies, ``psi``, ``w`` and the value
-----------------------------------------------
The policy ``pi(iota)`` crawls a page the first time ``s >= iota``.  **Assumption: each crawl starts a
poll cycle** -- the page's polls fall at ``c + w, c + 2w, ...`` after its crawl at ``c`` (the crawler
reads the page's signal source when it crawls it).  Then crawl intervals are i.i.d. cycles that all start
at ``s = 0`` at a poll.  (With polls on a fixed grid instead, e.g. one sitemap read for all pages, the
first window after a crawl is cut; :func:`window_staleness` gives its posterior exactly, but ``psi`` and
``w`` below ignore the cut: ``V`` is then the value of the nearest policy with restarted polls.)

Let the window that starts after ``n`` polls with ``j`` moves start at ``x = x(n, j)``.  It lasts
``d/Delta`` with ``d = min(Delta w, iota - x)`` (a crawl in the drift when ``x + Delta w >= iota``).  A
cycle is still running at that point iff no earlier pre-poll value ``x(m, j_m) + Delta w`` and no earlier
post-poll value reached ``iota``; both sequences are non-decreasing along a path, so only the last step
matters: after a moved last window ``x < iota`` suffices (``b >= lambda Delta w``), after an unmoved one
``x + lambda Delta w < iota`` is needed (the pre-poll value).  Hence, with ``qb = 1 - q``,

``psi(iota) = sum_{n, j} P(n, j) d/Delta``,
``w(iota) = sum_{n, j} P(n, j) exp(-x) (1 - exp(-d))/Delta``,

``P(n, j) = C(n-1, j-1) q^j qb^(n-j) [x < iota] + C(n-1, j) q^j qb^(n-j) [x + lambda Delta w < iota]``
(``P(0, 0) = 1``), where ``w`` uses ``P(fresh | polls) = exp(-s)`` inside each window (the crawl time is a
stopping time of the observations, so the expected fresh time is the expected integral of the posterior).

Value.  As in the proof of Theorem 2 of Busa-Fekete et al. (2025), with a price ``Lambda`` per crawl a page
earns ``G(iota) = (mu w(iota) - Lambda)/psi(iota)`` per unit time.  Raising the threshold postpones only
crawls that happen in the drift between polls, where ``P(fresh) = exp(-iota)`` (a crossing by a jump at a
poll lands on a lattice point and does not move), so ``w' = exp(-iota) psi'`` wherever both are
differentiable, ``G' = psi' (Lambda - V(iota))/psi^2``, and ``G`` is stationary where ``Lambda`` equals

``V(s) = mu (w(s) - exp(-s) psi(s)) = (mu/Delta) sum_{n, j} P(n, j) [exp(-x) R^1(d) + d exp(-s) (exp(s - x - d) - 1)]``

(``R^1(d) = 1 - exp(-d)(1 + d)``), the crawl value of a page at log-staleness ``s``: Theorem 2's formula
with the polled ``psi`` and ``w``.  It is a sum of non-negative terms (``x + d <= s``), which is how it is
evaluated: the literal difference cancels at small ``s``.

Properties (proved above, checked in the tests):

* ``V`` is non-decreasing: ``dV/ds = mu exp(-s) psi(s) > 0`` between breakpoints; at the breakpoints
  ``s = x(n, j) + lambda Delta w`` of the unmoved paths ``psi`` and ``w`` jump (the poll now happens and
  the page goes on for ``lambda w`` more) and ``V`` jumps *up* by ``(mu/Delta) P exp(-x) R^1(lambda Delta w)``,
  ``P = C(n-1, j) q^j qb^(n-j)``; at ``s = x(n, j)`` everything is continuous.  ``V`` is left-continuous
  (crawl at ``s >= iota``), ``V(0) = 0`` and ``V(inf) = mu/Delta``.
* Bounds for parking: ``s_t >= alpha t`` along every path, so ``psi(s) <= s/alpha`` and
  ``V(s) <= mu min(1/Delta, R^1(s)/alpha) <= mu s^2/(2 alpha)``.
* In time, ``V(s_t)`` increases between polls (``s_t`` grows at ``Delta``) and jumps at a poll: down when
  the signal did not move, up when it did.  A scheduler must re-rank a page at each of its polls.
* Limits: ``lambda Delta = 0`` gives ``b = 0``, ``s = Delta tau`` and exactly the Greedy value
  ``(mu/Delta) R^1(Delta tau)`` (every ``w``); ``nu -> inf`` gives it up to ``O(exp(-nu w))``; ``w -> 0`` gives
  the value of Busa-Fekete et al. (2025) at ``tau_eff = s/alpha`` with an error ``O(w)`` (measured
  ``|V_w - V_0|/V_0 ~ 0.1 to 0.3 w``).

Theorem 2's structure carries over only in part, for two reasons.

1. The exchange argument of their Lemma 1 needs the posterior freshness to be non-increasing between crawls,
   and here it rises at every unmoved poll: the optimal policy can depend on the time to the next poll as
   well as on ``s`` (waiting for an imminent poll has an option value), so the thresholds on ``s`` are a
   restricted family.  It contains the optimum in both limits (``w -> 0``: theirs; ``lambda Delta = 0``:
   Greedy).
2. Within that family ``G`` is not unimodal: at an unmoved breakpoint ``theta = x + lambda Delta w``, ``psi``
   and ``w`` jump by a segment whose average freshness exceeds ``exp(-theta)``, so the best threshold for the
   price ``V(iota)`` can lie past the next breakpoint (``tests/test_polled_signals.py`` shows one, 0.25% more
   gain).  ``V`` is the *stationary* price of each threshold, not always the price at which it is optimal.
   The exact index of the family is the "ironed" ``V*``: ``mu`` times the slope of the concave hull of the
   fresh fraction ``w/psi`` against the frequency ``1/psi``; it equals ``V`` on the hull and is flat, below
   ``V``, on intervals just below the breakpoints (measured on 0.1 <= s <= 5.5: mean shortfall 0.1% to 7%,
   largest 13% to 54%, for ``(Delta, lambda, nu, w)`` from (0.5, 0.2, 0.4, 1) to (1, 0.9, 0.3, 1)).  Those
   intervals are where the cycle that starts at a poll is just before its next poll, an artefact of the
   restarted poll clock: in simulation with polls on a fixed grid, ranking by ``V*`` was no better than by
   ``V`` and worse at ``w = 0.1`` (``bench/repro_polled.py``).

We use ``V``: exact, non-decreasing, with the right limits; its stationarity is Theorem 2's condition.

Computation
-----------
Compiled (``freshcore._polled``, whose module docstring has the details; ``tests/_polled_reference.py`` keeps
the numpy row sum it replaced as the reference).  The lattice is summed by *columns*: ``j`` moved windows
fixed, ``k`` unmoved ones running, ``x = alpha w (k + j) + b j``.  Split by the last window, a column's weights
are negative binomial pmfs in ``k`` -- ``P`` is the NB(``j``, ``q``) pmf (moved last) or ``qb/q`` times the
NB(``j + 1``, ``q``) pmf at ``k - 1`` (unmoved last) -- and the tilted weights ``W = P exp(-x)`` are
``rho1^j`` times the same pmfs with ``qb`` replaced by ``r0 = exp(-(Delta + nu) w)``.  A column is alive up
to ``x < s`` (moved last) or ``x + lambda Delta w < s`` (unmoved last).  With ``c = s - Delta w`` an
*interior* point (``x <= c``) adds ``(1 - exp(-Delta w)) W - Delta w exp(-s) P`` to ``V Delta/mu``, and a
*band* point (``c < x < s``, ``y = s - x``) adds ``W R^1(y) = W - exp(-s) P (1 + y)``: everything is linear in
column sums of ``P``, ``W`` and ``k P``, only the differences cancel.  So:

* **CDF sums** (the path taken).  A column's interior and band sums are negative binomial CDFs,
  ``P(NB(r, p) <= K) = P(Binomial(K + r, p) >= r)``: the binomial tail on the far side of its mean is summed
  from its first term (Loader's saddle-point form, a few ulps) by the ratios of consecutive terms, which fall
  geometrically there, until the rest is below a quarter ulp -- ``O(sqrt(r))`` terms, not the column's
  points -- and the other tail is one minus it; ``k P`` sums are NB(``r + 1``) CDFs.  A band of at most 24
  points is added point by point in its exact form.  Every sum carries an absolute error bound (``6 |log pmf|
  + 256`` ulps for the first term, 3 ulps a ratio, the subtraction of two tails, the final differences), and
  the result is kept only where the bound is below ``4e-13`` of each of ``V``, ``w`` (and ``psi``).  It fails
  where ``V`` is small against the sums it is the difference of: small ``s`` (``V ~ s^2/2`` against
  ``Delta w exp(-s) psi``), or a wide band holding most of the mass.
* **The walk** (the fallback).  The far interior (``c - x >= 0.7``) is summed as a whole in the difference form
  (each point's difference is at least half its first part: at most one bit lost); near-interior and band
  points are added one by one in their non-negative forms, from the pmf's mode (Loader's log-pmf) by the
  ratio of consecutive terms, until a geometric bound of the rest of the column is below ``1e-17`` of the
  partial sums of ``psi``, ``w`` and ``V``.
* On both paths a column whose mass lies below ``c`` but for ``1e-17`` (Chernoff bounds of both measures) adds
  its closed-form totals (1 or ``qb/q`` for ``P``, ``rho1^j`` or ``rho1^j r0/(1 - r0)`` for ``W``), and the
  columns stop once the rest is bounded below ``1e-17`` of the partial sums (column masses decrease with
  ``j``; ``W`` at least by ``rho1`` a column).  Where ``lambda = 1`` every column sits at one level and sums
  in closed form; where ``exp(-s) (1 + Delta s/alpha)`` is below half an ulp, ``V = mu/Delta``.

Accuracy: ``<= 3e-14`` against the numpy reference and ``<= 1e-12`` (measured below ``1e-14``) against a
50-digit evaluation of the recursion, on both paths (``tests/test_polled_kernel.py``).  Cost: the CDF sums
are ``O(columns x sqrt(r))`` -- a few to a few hundred columns (``s/(alpha w + b)``), ~10 to 100 terms a
tail -- whatever the number of lattice points; the walk is ``O(points)`` (up to ~10^7 for slow pages at
small ``w``), and a page whose walk would pass :data:`MAX_STEPS` points is refused with a ValueError.
:func:`polled_threshold` (the inverse) is a safeguarded Newton iteration on ``dV/ds = mu exp(-s) psi(s)``.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from freshcore import _polled
from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._validation import check_array, check_binary, check_scalar
from freshcore.pages import PageModel, check_pages

__all__ = [
    "MAX_POINTS",
    "MAX_STEPS",
    "PolledState",
    "moved_weight",
    "polled_fresh_time",
    "polled_interval",
    "polled_staleness",
    "polled_threshold",
    "polled_value",
    "regular_staleness",
    "window_staleness",
]

#: A page whose lattice sum would visit more points than this is refused with a ValueError (the numpy blocks).
MAX_POINTS = 1 << 25
#: A page whose compiled lattice walk would visit more points than this is refused with a ValueError.
MAX_STEPS = 1 << 24
_TAIL = 1e-17  # relative size of the bounded tails
_LOG_TAIL = math.log(_TAIL)
_ROW_POINTS = 1 << 17  # lattice points per vectorised block
_LOG_2PI = math.log(2.0 * math.pi)
# Loader's stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n) for n <= 15, from lgamma (absolute error
# below 4e-15, which is what enters the log of a pmf)
_STIRLERR = np.array([0.0] + [math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - 0.5 * _LOG_2PI
                              for n in range(1, 16)])


# ---------------------------------------------------------------------------------------------------------
# Binomial pmf in Loader's saddle-point form


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """``log(n!) - log(sqrt(2 pi n) (n/e)^n)`` for integers ``n >= 0`` (float array)."""
    out = np.empty(n.shape)
    small = n <= 15
    out[small] = _STIRLERR[n[small].astype(np.intp)]
    big = n[~small]
    nn = big * big
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    out[~small] = np.where(
        big > 500, (s0 - s1 / nn) / big,
        np.where(big > 80, (s0 - (s1 - s2 / nn) / nn) / big,
                 np.where(big > 35, (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / big,
                          (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / big)))
    return out


def _bd0(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Deviance ``x log(x/m) + m - x`` for ``x, m > 0`` without cancellation (Loader)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = x * np.log(x / m) + m - x
        near = np.abs(x - m) < 0.1 * (x + m)
        v = (x - m) / (x + m)
        s = (x - m) * v
        ej = 2.0 * x * v
        v2 = v * v
        for k in range(1, 12):  # |v| < 0.1: the k-th term is below 1e-2k of the first
            ej = ej * v2
            s = s + ej / (2 * k + 1)
    return np.where(near, s, direct)


def _log_binom_pmf(k: np.ndarray, m: np.ndarray, q: float, qb: float, log_q: float, log_qb: float) -> np.ndarray:
    """``log(C(m, k) q^k qb^(m-k))`` for integer arrays ``0 <= k <= m`` (``qb = 1 - q``, both > 0)."""
    k = k.astype(np.float64)
    m = m.astype(np.float64)
    out = np.empty(k.shape)
    lo = k == 0
    hi = (k == m) & ~lo
    mid = ~(lo | hi)
    out[lo] = m[lo] * log_qb
    out[hi] = m[hi] * log_q
    km, mm = k[mid], m[mid]
    lc = (_stirlerr(mm) - _stirlerr(km) - _stirlerr(mm - km)
          - _bd0(km, mm * q) - _bd0(mm - km, mm * qb))
    out[mid] = lc - 0.5 * (_LOG_2PI + np.log(km) + np.log1p(-km / mm))
    return out


# ---------------------------------------------------------------------------------------------------------
# Posterior per window


def _moved_weight(w: float, dl: float, lam: float, nu: float) -> float:
    """``b(w)`` for one page (``inf`` when ``nu = 0 < lambda Delta``, 0 when ``lambda Delta = 0``)."""
    ld = lam * dl
    if ld == 0.0:
        return 0.0
    if nu == 0.0:
        return math.inf
    if w == math.inf:
        return math.inf if nu == 0.0 else 0.0
    # b - lambda Delta w = -log((1 - e^{-nu w})/(1 - e^{-gamma w}))
    #                    = log1p(e^{-nu w} (1 - e^{-lambda Delta w}) / (1 - e^{-nu w}))
    return ld * w + math.log1p(math.exp(-nu * w) * -math.expm1(-ld * w) / -math.expm1(-nu * w))


def _window_log(after: np.ndarray, before: np.ndarray, moved: np.ndarray, dl: np.ndarray, lam: np.ndarray,
                nu: np.ndarray) -> np.ndarray:
    """``-log P(no change in the part after the crawl | moved)`` (arrays of one length)."""
    ld = lam * dl
    gamma = ld + nu
    alpha = dl - ld
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = nu * after + gamma * before  # rate x time of the moves that are not changes after the crawl
        # -log((1 - e^{-e})/(1 - e^{-e - lambda Delta after})) = log1p(e^{-e} (1 - e^{-ld after})/(1 - e^{-e}))
        extra = np.log1p(np.exp(-e) * -np.expm1(-ld * after) / -np.expm1(-e))
        extra = np.where(ld * after == 0.0, 0.0, np.where(e == 0.0, np.inf, extra))
    return np.where(moved.astype(bool), dl * after + extra, alpha * after)


def _delay_mass(x: np.ndarray, theta: float) -> np.ndarray:
    """``Phi(x) = E[(x - D)^+]`` for exponential delays of mean ``theta > 0``: ``theta (y - 1 + e^{-y})``,
    ``y = x/theta`` (0 for ``x <= 0``); the series below ``y = 1/2`` (alternating, terms falling by 1/6 and
    faster), ``y + expm1(-y)`` above (loses at most 2.3 bits there)."""
    y = np.maximum(x, 0.0) / theta
    small = y < 0.5
    ys = np.where(small, y, 0.0)
    term = ys * ys / 2.0
    acc = term.copy()
    for k in range(3, 20):  # (1/2)^19/19! ~ 1e-23 of the first term
        term = term * -ys / k
        acc += term
    with np.errstate(over="ignore"):
        big = y + np.expm1(-y)
    return theta * np.where(small, acc, big)


def _window_log_delayed(start: np.ndarray, end: np.ndarray, moved: np.ndarray, dl: np.ndarray, lam: np.ndarray,
                        nu: np.ndarray, theta: float) -> np.ndarray:
    """``-log`` of a window's factor with exponential signal delays of mean ``theta > 0`` (module notes);
    ``start``/``end`` are the window's ends measured from the crawl (``end > 0``, ``start`` may be negative)."""
    ld = lam * dl
    gamma = ld + nu
    after = end - np.maximum(start, 0.0)
    h = ld * (_delay_mass(end, theta) - _delay_mass(start, theta))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = gamma * (end - start) - h  # the window's expected moves not from changes after the crawl
        g = np.maximum(g, nu * (end - start))  # rounding: g >= the false moves' share
        extra = np.log1p(np.exp(-g) * -np.expm1(-h) / -np.expm1(-g))
        extra = np.where(h == 0.0, 0.0, np.where(g == 0.0, np.inf, extra))
    return np.where(moved.astype(bool), dl * after + extra, dl * after - h)


def _params(pages: PageModel, caller: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    pages = check_pages(pages, caller)
    return pages.change_rate, pages.recall, pages.false_rate, pages.importance


def _per_page(x: Any, name: str, n: int, caller: str, *, low: float, low_inclusive: bool = True,
              allow_inf: bool = True) -> np.ndarray:
    arr = check_array(x, name, caller, ndim=(0, 1), low=low, low_inclusive=low_inclusive, allow_inf=allow_inf)
    if np.ndim(x) == 0:
        return np.full(n, float(arr[0]))
    if len(arr) != n:
        raise ValueError(f"The {name!r} parameter of {caller} must be a number or an array of length {n} "
                         f"(the number of pages). Got length {len(arr)} instead.")
    return arr


@cites(BUSA_FEKETE_2025)
def moved_weight(poll_interval: Any, pages: PageModel) -> np.ndarray:
    """``b(w)``: how much one moved poll window of length ``w`` adds to a page's log-staleness beyond ``alpha w``.

    Parameters
    ----------
    poll_interval : float or array_like of shape (n_pages,)
        Window length ``w > 0`` (``inf``: never polled).
    pages : PageModel

    Returns
    -------
    b : ndarray of shape (n_pages,)
        ``lambda Delta w - log((1 - e^{-nu w})/(1 - e^{-gamma w}))``, ``>= lambda Delta w``; 0 where
        ``lambda Delta = 0``; ``inf`` where ``nu = 0 < lambda Delta`` (a move proves a change).

    Notes
    -----
    A window that did not move weighs ``alpha w``, one that moved ``alpha w + b``; as ``w -> 0``,
    ``b -> log(gamma/nu) = alpha beta``, the weight of one signal in Busa-Fekete et al. (2025)
    (``alpha`` times their ``beta``).

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.polled_signals import moved_weight
    >>> pages = PageModel(1.0, 1.0, recall=0.5, false_rate=0.25)
    >>> round(float(moved_weight(1e-9, pages)[0]), 6), round(float(np.log(3.0)), 6)
    (1.098612, 1.098612)
    >>> moved_weight(1.0, pages).round(6).tolist()
    [1.369338]
    """
    caller = "moved_weight"
    dl, lam, nu, _ = _params(pages, caller)
    w = _per_page(poll_interval, "poll_interval", len(dl), caller, low=0.0, low_inclusive=False)
    return np.array([_moved_weight(float(w[i]), float(dl[i]), float(lam[i]), float(nu[i]))
                     for i in range(len(dl))])


@cites(BUSA_FEKETE_2025)
def window_staleness(after_crawl: Any, moved: Any, pages: PageModel, before_crawl: Any = 0.0, *,
                     since_crawl: Any = 0.0, signal_delay: float | None = None) -> np.ndarray:
    """``-log P(no change since the crawl within one poll window | moved or not)`` (SPEC section 3b).

    Parameters
    ----------
    after_crawl : float or array_like of shape (n_pages,)
        ``l >= 0``: the part of the window after the page's last crawl.
    moved : bool or array_like of bool of shape (n_pages,)
        Whether the poll closing the window saw the signal move (0/1 flags accepted).
    pages : PageModel
    before_crawl : float or array_like of shape (n_pages,), default=0.0
        ``a >= 0``: the part of the window before the crawl (a window cut by a crawl); 0 for a window
        that starts after it.
    since_crawl : float or array_like of shape (n_pages,), default=0.0
        For a window that starts after the crawl (``a = 0``), the time from the crawl to its start;
        it matters only with ``signal_delay`` (a signal of a change just after the crawl may arrive in a
        later window).  Must be 0 where ``a > 0``.
    signal_delay : float or None, default=None
        Mean ``theta >= 0`` of exponential delays between a change and its signal reaching the source
        (as :func:`freshcore.policy_simulation.simulate`'s ``signal_delay``); None or 0 for none.

    Returns
    -------
    staleness : ndarray of shape (n_pages,)
        ``alpha l`` if not moved; ``Delta l - log((1 - e^{-nu l - gamma a})/(1 - e^{-gamma (a + l)}))`` if
        moved (``inf`` when a move proves a change: ``nu = 0 = a`` and ``lambda Delta l > 0``); with
        delays, ``Delta l - H`` and ``Delta l - log((1 - e^{-G})/(1 - e^{-G - H}))`` (module notes).

    Notes
    -----
    Derived in the module notes; with ``a = 0`` the probabilities are SPEC section 3b's
    ``e^{-(1 - lambda) Delta w}`` and ``e^{-Delta w}(1 - e^{-nu w})/(1 - e^{-gamma w})``.  The model is that
    of Section 3 of Busa-Fekete et al. (2025) observed through polls.

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.polled_signals import window_staleness
    >>> pages = PageModel([1.0, 1.0], 1.0, recall=0.5, false_rate=0.25)
    >>> window_staleness(1.0, [False, True], pages).round(6).tolist()
    [0.5, 1.869338]
    """
    caller = "window_staleness"
    dl, lam, nu, _ = _params(pages, caller)
    n = len(dl)
    after = _per_page(after_crawl, "after_crawl", n, caller, low=0.0, allow_inf=False)
    before = _per_page(before_crawl, "before_crawl", n, caller, low=0.0, allow_inf=False)
    flags = check_binary(moved, "moved", caller, ndim=(0, 1))
    flags = np.full(n, flags[0]) if np.ndim(moved) == 0 else flags
    if len(flags) != n:
        raise ValueError(f"The 'moved' parameter of {caller} must be a flag or an array of length {n} "
                         f"(the number of pages). Got length {len(flags)} instead.")
    since = _per_page(since_crawl, "since_crawl", n, caller, low=0.0, allow_inf=False)
    theta = _delay_mean(signal_delay, caller)
    both = np.flatnonzero((since > 0.0) & (before > 0.0))
    if len(both):
        i = int(both[0])
        raise ValueError(f"The 'since_crawl' parameter of {caller} must be 0 for a window cut by the crawl "
                         f"(before_crawl > 0); page {i} has since_crawl = {since[i]!r} and before_crawl = "
                         f"{before[i]!r}.")
    if theta == 0.0:
        return _window_log(after, before, flags, dl, lam, nu)
    start = np.where(before > 0.0, -before, since)
    return _window_log_delayed(start, start + before + after, flags, dl, lam, nu, theta)


def _delay_mean(signal_delay: Any, caller: str) -> float:
    if signal_delay is None:
        return 0.0
    return check_scalar(signal_delay, "signal_delay", caller, low=0.0, allow_inf=False)


class PolledState(NamedTuple):
    """A page's state under polled signals (:func:`polled_staleness`).

    Attributes
    ----------
    staleness : float
        ``s = -log P(unchanged since the last crawl | polls)`` at ``now``.
    at_poll : float
        ``s`` at the last poll after the crawl (0 if none): ``staleness = at_poll + Delta (now - since)``.
    since : float
        The time ``at_poll`` refers to: the last poll after the crawl, or the crawl.
    moved_windows : int
        Number of windows since the crawl (the cut one included) whose poll saw a move.
    windows : int
        Number of polls since the crawl.
    """

    staleness: float
    at_poll: float
    since: float
    moved_windows: int
    windows: int


@cites(BUSA_FEKETE_2025)
def polled_staleness(now: float, last_crawl: float, poll_times: Any, moved: Any, change_rate: float,
                     recall: float, false_rate: float, *, signal_delay: float | None = None) -> PolledState:
    """Turn one page's log of ``(poll time, moved)`` observations into its state at ``now``.

    Parameters
    ----------
    now : float
        The time of the state, ``>= last_crawl`` and ``>=`` every poll time.
    last_crawl : float
        Time of the page's last crawl.
    poll_times : array_like of shape (n_polls,)
        The page's poll times, non-decreasing.  The poll at ``poll_times[k]`` reports whether the signal
        moved in ``(poll_times[k-1], poll_times[k]]``; the first poll of the log only opens it (it has no
        previous poll to compare with, so its flag is not used).  Polls up to the crawl matter only as the
        start of the window the crawl cuts.
    moved : array_like of shape (n_polls,)
        The flags (bool, or 0/1).
    change_rate, recall, false_rate : float
        ``Delta >= 0``, ``lambda`` in ``[0, 1]``, ``nu >= 0``.
    signal_delay : float or None, default=None
        Mean of exponential delays between a change and its signal reaching the source (module notes,
        "Delayed signals"); None or 0 for none.  With delays ``at_poll`` and ``since`` keep their meaning,
        and a window's weight depends on where it lies after the crawl, not only on its length.

    Returns
    -------
    PolledState
        The log-staleness now and its parts (see :class:`PolledState`).

    Raises
    ------
    ValueError, TypeError
        NaN or infinite times, poll times going backwards (naming the first), a poll after ``now``, a crawl
        after ``now``, a flag that is not boolean, or parameters out of range.

    Notes
    -----
    The windows are independent given the parameters, so ``s`` is the sum of their
    :func:`window_staleness` (a window cut by the crawl with its part before it as ``before_crawl``)
    plus ``Delta`` times the time since the last poll (or since the crawl, if the first poll after the
    crawl has no previous poll in the log).  The model is that of Section 3 of Busa-Fekete et al. (2025)
    observed through polls.

    Examples
    --------
    >>> from freshcore.polled_signals import polled_staleness
    >>> st = polled_staleness(2.5, 0.0, [0.0, 1.0, 2.0], [False, True, False], 1.0, 0.5, 0.25)
    >>> round(st.staleness, 6), st.moved_windows, st.windows
    (2.869338, 1, 2)
    """
    caller = "polled_staleness"
    t = check_scalar(now, "now", caller)
    c = check_scalar(last_crawl, "last_crawl", caller, high=t)
    dl = check_scalar(change_rate, "change_rate", caller, low=0.0)
    lam = check_scalar(recall, "recall", caller, low=0.0, high=1.0)
    nu = check_scalar(false_rate, "false_rate", caller, low=0.0)
    theta = _delay_mean(signal_delay, caller)
    times = check_array(poll_times, "poll_times", caller, allow_empty=True, high=t)
    flags = check_binary(moved, "moved", caller, allow_empty=True)
    if len(flags) != len(times):
        raise ValueError(f"The 'poll_times' and 'moved' parameters of {caller} must have one length. "
                         f"Got {len(times)} and {len(flags)}.")
    back = np.flatnonzero(np.diff(times) < 0)
    if len(back):
        k = int(back[0]) + 1
        raise ValueError(f"The 'poll_times' parameter of {caller} must be non-decreasing; poll_times[{k}] = "
                         f"{float(times[k])!r} < poll_times[{k - 1}] = {float(times[k - 1])!r}.")
    first = int(np.searchsorted(times, c, side="right"))  # first poll after the crawl
    if first == len(times):
        return PolledState(dl * (t - c), 0.0, c, 0, 0)
    if first == 0:  # no poll before the crawl in the log: the first poll after it only opens the log
        start, s, k0, nwin = times[0], dl * (times[0] - c), 1, 0
    else:
        start, s, k0, nwin = c, 0.0, first, 0
    ends = times[k0:]
    if len(ends):
        starts = np.concatenate(([times[k0 - 1]], ends[:-1]))
        after = ends - np.maximum(starts, start)
        before = np.maximum(0.0, start - starts)
        one = np.ones(len(ends))
        if theta == 0.0:
            s += float(np.sum(_window_log(after, before, flags[k0:], dl * one, lam * one, nu * one)))
        else:  # the gap (c, first poll] with no window is in s already, as Delta times its length
            s += float(np.sum(_window_log_delayed(starts - c, ends - c, flags[k0:], dl * one, lam * one, nu * one,
                                                  theta)))
        nwin = len(ends)
        since = float(ends[-1])
    else:
        since = float(start)
    return PolledState(s + dl * (t - since), s, since, int(flags[k0:].sum()), nwin)


@cites(BUSA_FEKETE_2025)
def regular_staleness(elapsed: Any, moved_windows: Any, poll_interval: Any, pages: PageModel) -> np.ndarray:
    """Log-staleness of pages polled every ``w`` since their crawl: ``alpha w n + b j + Delta (tau - n w)``.

    Parameters
    ----------
    elapsed : float or array_like of shape (n_pages,)
        ``tau >= 0``, the time since each page's crawl.
    moved_windows : int or array_like of int of shape (n_pages,)
        ``j``: how many of the ``n = floor(tau/w)`` windows since the crawl moved (``0 <= j <= n``).
    poll_interval : float or array_like of shape (n_pages,)
        ``w > 0``.
    pages : PageModel

    Returns
    -------
    staleness : ndarray of shape (n_pages,)
        The state :func:`polled_value` takes (``inf`` where a move proves a change).

    Notes
    -----
    ``(tau, j)`` is the state of the continuous model of Busa-Fekete et al. (2025), ``(tau_elap, n_cis)``,
    with windows in place of signals.  A poll exactly at ``tau = n w`` counts as done.

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.polled_signals import regular_staleness
    >>> regular_staleness(2.5, 1, 1.0, PageModel(1.0, 1.0, 0.5, 0.25)).round(6).tolist()
    [2.869338]
    """
    caller = "regular_staleness"
    dl, lam, nu, _ = _params(pages, caller)
    n_pages = len(dl)
    tau = _per_page(elapsed, "elapsed", n_pages, caller, low=0.0, allow_inf=False)
    w = _per_page(poll_interval, "poll_interval", n_pages, caller, low=0.0, low_inclusive=False, allow_inf=False)
    j = check_array(moved_windows, "moved_windows", caller, ndim=(0, 1), low=0.0)
    j = np.full(n_pages, float(j[0])) if np.ndim(moved_windows) == 0 else j
    if len(j) != n_pages:
        raise ValueError(f"The 'moved_windows' parameter of {caller} must be a number or an array of length "
                         f"{n_pages} (the number of pages). Got length {len(j)} instead.")
    n = np.floor(tau / w)
    bad = np.flatnonzero((j != np.floor(j)) | (j > n))
    if len(bad):
        k = int(bad[0])
        raise ValueError(f"The 'moved_windows' parameter of {caller} must hold integers 0 <= j <= "
                         f"floor(elapsed/poll_interval); moved_windows[{k}] = {float(j[k])!r} with "
                         f"{int(n[k])} windows.")
    b = np.array([_moved_weight(float(w[i]), float(dl[i]), float(lam[i]), float(nu[i])) for i in range(n_pages)])
    alpha = dl - lam * dl
    with np.errstate(invalid="ignore"):
        moved_part = np.where(j > 0, b * j, 0.0)
    return alpha * w * n + moved_part + dl * (tau - n * w)


# ---------------------------------------------------------------------------------------------------------
# psi, w and V of the threshold policy: lattice sums


def _log_tail_rows(n0: int, big_j: int, q: float, qb: float, log_q: float, log_qb: float) -> float:
    """log of a bound on ``sum_{n >= n0} P(Binomial(n, q) <= big_j)``, or ``inf`` if the bound does not apply
    yet (``n0`` not past the mode)."""
    if (n0 + 1) * q <= big_j + 1:
        return math.inf
    rho = big_j * qb / ((n0 - big_j + 1) * q)  # pmf(j-1)/pmf(j) for j <= big_j, decreasing in n
    sigma = (n0 + 1) * qb / (n0 + 1 - big_j)  # pmf_{n+1}(J)/pmf_n(J), decreasing in n
    if rho >= 1.0 or sigma >= 1.0:
        return math.inf
    lp = float(_log_binom_pmf(np.array([big_j]), np.array([n0]), q, qb, log_q, log_qb)[0])
    return lp - math.log1p(-rho) - math.log1p(-sigma)


class _Block(NamedTuple):
    x: np.ndarray  # level at the start of the window that follows the point
    theta: np.ndarray  # the point is alive when iota > theta
    weight: np.ndarray  # its path probability
    cut: float  # bound on the weight of this block's rows left out (far from the binomial mean)
    rest: float  # bound on the weight of every alive point in the rows after this block (0: no rows left)
    level: float  # every point in the rows after this block has x >= level


def _blocks(iota: float, dl: float, lam: float, nu: float, w: float) -> Iterator[_Block]:
    """The lattice points with ``theta < iota`` in blocks of rows (``0 < iota < inf``, ``Delta > 0``,
    ``lambda Delta > 0``, ``w`` finite); the consumer stops when ``rest`` is small enough."""
    ld = lam * dl
    gamma = ld + nu
    aw = (dl - ld) * w
    lw = ld * w
    b = _moved_weight(w, dl, lam, nu)
    q, qb = -math.expm1(-gamma * w), math.exp(-gamma * w)
    log_q, log_qb = math.log(q), -gamma * w
    big_j = 0 if b == math.inf else int(min(math.floor(iota / b), 2**62))
    n_end = math.inf if aw == 0.0 else math.floor(iota / aw) + 1  # rows n < n_end can hold alive points
    yield _Block(np.zeros(1), np.zeros(1), np.ones(1), 0.0, math.inf, 0.0)  # (0, 0)
    n0 = 1
    points = 1
    while n0 < n_end:
        width = min(min(big_j, n0) + 1, int(40.0 * math.sqrt(n0 * q * qb) + 82.0))
        rows = max(1, min(_ROW_POINTS // width, 1 << 16))
        n1 = int(min(n_end, n0 + rows))
        n = np.arange(n0, n1, dtype=np.int64)
        m = n - 1  # windows before the last one; k moved among them
        kmax = np.minimum(m, big_j)
        h = 20.0 * np.sqrt(m * q * qb) + 40.0
        k_hi = np.minimum(kmax, np.ceil(m * q + h)).astype(np.int64)
        k_lo = np.minimum(np.maximum(0.0, np.floor(m * q - h)), k_hi).astype(np.int64)
        cut = _cut_mass(m, k_lo, k_hi, k_lo > 0, k_hi < kmax, q, qb, log_q, log_qb)
        cnt = k_hi - k_lo + 1
        points += 2 * int(cnt.sum())
        if points > MAX_POINTS:
            raise ValueError(f"its lattice sum would visit more than MAX_POINTS = {MAX_POINTS} points")
        row = np.repeat(n, cnt)
        k = np.arange(len(row)) - np.repeat(np.cumsum(cnt) - cnt - k_lo, cnt)
        lp = _log_binom_pmf(k, row - 1, q, qb, log_q, log_qb)
        base = aw * row
        # last window not moved: j = k, weight qb pmf(k; n-1), alive when x + lambda Delta w < iota
        xn = base + (b * k if b != math.inf else 0.0)  # b = inf: big_j = 0, so k = 0
        thn = xn + lw
        # last window moved: j = k + 1, weight q pmf(k; n-1), alive when x < iota
        xa = base + b * (k + 1)
        keep_n, keep_a = thn < iota, xa < iota
        n0 = n1
        if n0 < n_end:
            lt = _log_tail_rows(n0, big_j, q, qb, log_q, log_qb)
            rest = min(math.exp(lt) if lt < 0.0 else math.inf, n_end - n0)  # a row weighs at most 1
        else:
            rest = 0.0
        yield _Block(np.concatenate((xn[keep_n], xa[keep_a])), np.concatenate((thn[keep_n], xa[keep_a])),
                     np.concatenate((np.exp(lp[keep_n] + log_qb), np.exp(lp[keep_a] + log_q))), cut, rest,
                     aw * n0)


def _cut_mass(m: np.ndarray, k_lo: np.ndarray, k_hi: np.ndarray, lo_cut: np.ndarray, hi_cut: np.ndarray,
              q: float, qb: float, log_q: float, log_qb: float) -> float:
    """Bound on the mass of ``Binomial(m, q)`` below ``k_lo`` (where ``lo_cut``) and above ``k_hi`` (where
    ``hi_cut``): geometric, from the first term left out and the ratio of consecutive terms.  The mass of a
    pmf term is the weight of its two lattice points (``q pmf + qb pmf``)."""
    total = 0.0
    if hi_cut.any():
        mm, kk = m[hi_cut], k_hi[hi_cut] + 1
        r = (mm - kk) * q / ((kk + 1) * qb)  # pmf(k+1)/pmf(k) at the first k left out, decreasing in k
        if (r >= 1.0).any():  # pragma: no cover - the cut is 20 sd + 40 above the mean
            raise RuntimeError("the upper cut of a lattice row is below its mode")
        total += float(np.sum(np.exp(_log_binom_pmf(kk, mm, q, qb, log_q, log_qb)) / (1.0 - r)))
    if lo_cut.any():
        mm, kk = m[lo_cut], k_lo[lo_cut] - 1
        r = kk * qb / ((mm - kk + 1) * q)  # pmf(k-1)/pmf(k), decreasing as k falls
        if (r >= 1.0).any():  # pragma: no cover
            raise RuntimeError("the lower cut of a lattice row is above its mode")
        total += float(np.sum(np.exp(_log_binom_pmf(kk, mm, q, qb, log_q, log_qb)) / (1.0 - r)))
    return total


def _evaluate(staleness: Any, poll_interval: Any, pages: PageModel, caller: str, what: int) -> np.ndarray:
    dl, lam, nu, mu = _params(pages, caller)
    n = len(dl)
    s = _per_page(staleness, "staleness", n, caller, low=0.0)
    w = _per_page(poll_interval, "poll_interval", n, caller, low=0.0, low_inclusive=False)
    out = np.empty(n)
    cs, cdl, clam, cnu, cw, cmu = _contiguous(s, dl, lam, nu, w, mu)
    bad = _polled.sums_kernel(cs, cdl, clam, cnu, cw, cmu, what, out)
    if bad >= 0:
        _refuse(caller, bad, dl, lam, nu, w, f"staleness={float(s[bad])!r}")
    return out


def _contiguous(*arrays: np.ndarray) -> list[np.ndarray]:
    return [np.ascontiguousarray(a, dtype=np.float64) for a in arrays]


def _refuse(caller: str, i: int, dl: np.ndarray, lam: np.ndarray, nu: np.ndarray, w: np.ndarray, at: str) -> None:
    raise ValueError(f"{caller} cannot evaluate page {i} (change_rate={float(dl[i])!r}, recall={float(lam[i])!r}, "
                     f"false_rate={float(nu[i])!r}, poll_interval={float(w[i])!r}) at {at}: its lattice walk would "
                     f"pass MAX_STEPS = {MAX_STEPS} points.")


@cites(BUSA_FEKETE_2025)
def polled_interval(threshold: Any, poll_interval: Any, pages: PageModel) -> np.ndarray:
    """``psi(iota)``: expected time between crawls when a page is crawled once its log-staleness reaches ``iota``.

    Parameters
    ----------
    threshold : float or array_like of shape (n_pages,)
        ``iota >= 0`` in log-staleness units (``s``, see the module notes; ``alpha tau_eff`` of the
        continuous model); ``inf``: never crawl.
    poll_interval : float or array_like of shape (n_pages,)
        ``w > 0``: each page is polled every ``w`` after its crawl (``inf``: never polled, Greedy).
    pages : PageModel

    Returns
    -------
    psi : ndarray of shape (n_pages,)
        ``inf`` for ``iota = inf`` and for pages that never change (``Delta = 0``, ``s`` stays 0).

    Notes
    -----
    ``psi = sum_{n, j} P(n, j) min(Delta w, iota - x(n, j))/Delta`` (module notes), the analogue of Lemma 4
    of Busa-Fekete et al. (2025); ``iota/Delta`` when ``lambda Delta = 0``.

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.polled_signals import polled_interval
    >>> polled_interval([2.0, 2.0], 0.1, PageModel(1.0, 1.0, [0.0, 0.5], 0.3)).round(6).tolist()
    [2.0, 1.807914]
    """
    return _evaluate(threshold, poll_interval, pages, "polled_interval", 0)


@cites(BUSA_FEKETE_2025)
def polled_fresh_time(threshold: Any, poll_interval: Any, pages: PageModel) -> np.ndarray:
    """``w(iota)``: expected fresh time per crawl interval of the threshold policy at ``iota``.

    Parameters
    ----------
    threshold : float or array_like of shape (n_pages,)
        ``iota >= 0`` in log-staleness units; ``inf``: never crawl (``w = 1/Delta``).
    poll_interval : float or array_like of shape (n_pages,)
        ``w > 0`` (``inf``: never polled).
    pages : PageModel

    Returns
    -------
    fresh : ndarray of shape (n_pages,)

    Notes
    -----
    ``sum_{n, j} P(n, j) e^{-x(n, j)} (1 - e^{-d})/Delta`` (module notes), the analogue of Lemma 4 of
    Busa-Fekete et al. (2025).

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.polled_signals import polled_fresh_time
    >>> polled_fresh_time(2.0, 0.1, PageModel(1.0, 1.0, 0.5, 0.3)).round(6).tolist()
    [0.894102]
    """
    return _evaluate(threshold, poll_interval, pages, "polled_fresh_time", 1)


@cites(BUSA_FEKETE_2025)
def polled_value(staleness: Any, poll_interval: Any, pages: PageModel) -> np.ndarray:
    """Crawl value ``V(s)`` of each page at log-staleness ``s`` under polls every ``w`` (module notes).

    Parameters
    ----------
    staleness : float or array_like of shape (n_pages,)
        ``s = -log P(unchanged since the last crawl | polls) >= 0`` (:func:`polled_staleness`,
        :func:`regular_staleness`); ``inf`` allowed.
    poll_interval : float or array_like of shape (n_pages,)
        ``w > 0`` (``inf``: never polled, the Greedy value).
    pages : PageModel

    Returns
    -------
    value : ndarray of shape (n_pages,)
        Non-decreasing in ``s``, ``V(0) = 0``, ``V(inf) = mu/Delta`` (``mu`` not normalised, as in
        :func:`freshcore.value.crawl_value`); 0 for pages with ``Delta = 0``.

    Raises
    ------
    ValueError
        Bad input, or a page whose lattice walk would pass :data:`MAX_STEPS` points (named by index).

    Notes
    -----
    ``V = mu (w(s) - e^{-s} psi(s))``, summed as non-negative terms; the Lagrangian value of the threshold
    policies on the posterior (module notes; Theorem 2 of Busa-Fekete et al. (2025) for continuous
    signals, which it approaches as ``w -> 0`` at ``s = alpha tau_eff``).  Exactly the Greedy value
    ``(mu/Delta) R^1(s)`` when ``lambda Delta = 0``.

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.polled_signals import polled_value
    >>> pages = PageModel([1.0, 1.0], 1.0, recall=[0.0, 0.5], false_rate=0.3)
    >>> polled_value(2.0, 0.1, pages).round(6).tolist()
    [0.593994, 0.649427]
    """
    return _evaluate(staleness, poll_interval, pages, "polled_value", 2)


@cites(BUSA_FEKETE_2025)
def polled_threshold(level: Any, poll_interval: Any, pages: PageModel) -> np.ndarray:
    """The inverse of :func:`polled_value`: the staleness at which each page's value first reaches ``level``.

    Parameters
    ----------
    level : float or array_like of shape (n_pages,)
        ``L >= 0`` (``inf`` allowed): a crawl value, e.g. a scheduler's winning value.
    poll_interval : float or array_like of shape (n_pages,)
        ``w > 0`` (``inf``: never polled, the Greedy value).
    pages : PageModel

    Returns
    -------
    threshold : ndarray of shape (n_pages,)
        ``s_L``: the smallest staleness (to one ulp) with ``V(s_L) >= L (1 - 1e-12)`` as computed; 0 where
        ``L = 0``, ``inf`` where ``L >= mu/Delta = V(inf)`` (never reached) and for pages that never change.

    Raises
    ------
    ValueError
        Bad input (named argument and first bad index), or a page whose lattice walk would pass
        :data:`MAX_STEPS` points.

    Notes
    -----
    ``V`` is non-decreasing and left-continuous, with upward jumps at the unmoved breakpoints (module notes),
    so ``{s : V(s) >= L}`` is ``[s*, inf)`` or ``(s*, inf)``.  The computed ``V`` is within ``1e-12`` of the
    true one, so every ``s`` with ``V(s) >= L`` has a computed value ``>= L (1 - 1e-12)``: ``s_L`` is a **lower
    bound** of the crossing ``s*`` (up to one ulp), what a scheduler needs to park a page until its staleness
    can reach ``L`` -- it never wakes a page late.  Safeguarded regula falsi (Illinois) on a bracket, then
    bisection to one ulp; ``V <= mu s^2/(2 alpha)`` starts the bracket.  The value is that of Busa-Fekete et
    al. (2025) observed through polls.

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.polled_signals import polled_threshold, polled_value
    >>> pages = PageModel(1.0, 1.0, recall=0.5, false_rate=0.3)
    >>> s = polled_threshold(0.4, 0.1, pages)
    >>> bool(polled_value(s, 0.1, pages)[0] >= 0.4 * (1 - 1e-12))
    True
    >>> bool(polled_value(np.nextafter(s, 0.0), 0.1, pages)[0] < 0.4 * (1 - 1e-12))
    True
    """
    caller = "polled_threshold"
    dl, lam, nu, mu = _params(pages, caller)
    n = len(dl)
    lev = _per_page(level, "level", n, caller, low=0.0)
    w = _per_page(poll_interval, "poll_interval", n, caller, low=0.0, low_inclusive=False)
    out = np.empty(n)
    cl, cdl, clam, cnu, cw, cmu = _contiguous(lev, dl, lam, nu, w, mu)
    bad = _polled.level_kernel(cl, cdl, clam, cnu, cw, cmu, out)
    if bad >= 0:
        _refuse(caller, bad, dl, lam, nu, w, f"level={float(lev[bad])!r}")
    return out
