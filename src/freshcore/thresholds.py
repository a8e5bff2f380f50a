"""Optimal thresholds with change signals: ``V_i(iota_i) = Lambda`` under a bandwidth.

The optimal continuous crawl policy crawls page i when its effective elapsed time reaches a threshold
``iota_i`` at which its crawl value ``V_i`` (:func:`freshcore.value.crawl_value`) equals a common
multiplier ``Lambda``, chosen so that the crawl frequencies ``f_i(iota_i)`` sum to the bandwidth.
:func:`optimal_thresholds` solves it: per page in compiled code (``freshcore._thresholds``, one pass
over the pages per multiplier), the multiplier by an outer iteration in Python.  The policy is that of
Theorem 2 and Appendix A of Busa-Fekete, Zimmert, György et al. (2025).

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from freshcore import _rates, _thresholds
from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._parallel import parallel_chunks
from freshcore._validation import check_scalar
from freshcore.pages import PageModel, check_pages
from freshcore.value import MAX_TERMS, fresh_time

__all__ = ["ThresholdsResult", "optimal_thresholds"]

# optimal_thresholds: on 10 * _SUBSAMPLE pages or more, start from the solution of a strided subsample.
_SUBSAMPLE = 20_000


@dataclass(frozen=True)
class ThresholdsResult:
    """Solution of :func:`optimal_thresholds`.

    Attributes
    ----------
    thresholds : ndarray of shape (n_pages,)
        ``iota_i``: crawl page i when its ``tau_eff`` reaches it (``inf``:
        never crawl).
    frequencies : ndarray of shape (n_pages,)
        Crawl frequencies ``f(iota_i)``; they sum to the bandwidth, unless the pages cannot use it all
        (only pages with ``recall = 1``, each crawled at most once per signal: then every one is crawled at
        each signal and the multiplier is 0).
    multiplier : float
        ``Lambda``, the common crawl value at the thresholds (in units of
        ``mu``, see the module notes: ``Lambda / sum(mu)`` on the paper's scale).
        When the policy time-shares, ``1/u^2`` at the same mix of the bracket
        ``u = Lambda^-1/2`` (the frequencies of the pages that do not jump vary
        smoothly with u, so they are those at that multiplier).
    accuracy : float
        ``sum_i mu_i F_i / sum_i mu_i`` with ``F_i = w(iota_i) f(iota_i)``
        the long-run fraction of time page i is fresh (pages that never change
        count as fresh): the fraction of requests served fresh.
    signal_counts : ndarray of int of shape (n_pages,)
        For pages with ``recall = 1`` (every change signalled, ``alpha = 0``,
        ``beta = inf``): crawl at the K-th signal after a crawl (0: never);
        their threshold is ``inf``.  0 for every other page.  (A time-shared
        page of this kind alternates between two counts; the one with the
        larger share is reported, its frequency is the mix.)
    """

    thresholds: np.ndarray
    frequencies: np.ndarray
    multiplier: float
    accuracy: float
    signal_counts: np.ndarray


@cites(BUSA_FEKETE_2025)
def optimal_thresholds(pages: PageModel, bandwidth: float) -> ThresholdsResult:
    """Optimal continuous crawl policy with change signals (Theorem 2 of Busa-Fekete et al. (2025), SPEC section 3).

    Finds thresholds ``iota_i`` with ``V_i(iota_i) = Lambda`` (``iota_i = inf``
    where ``V_i(inf) = mu_i/Delta_i <= Lambda``) and ``sum_i f_i(iota_i) =
    bandwidth``.

    Parameters
    ----------
    pages : PageModel
        The pages.
    bandwidth : float
        Crawl budget ``R > 0`` (crawls per unit time).

    Returns
    -------
    ThresholdsResult
        thresholds, frequencies, multiplier ``Lambda`` and accuracy.

    Raises
    ------
    ValueError
        If ``bandwidth`` is not a finite number > 0.
    TypeError
        If ``pages`` is not a :class:`PageModel`.

    Notes
    -----
    Inner problem, per page: pages whose signals carry no information
    (``lambda Delta = 0``, ``V`` = Greedy value) have the closed form of the
    periodic model, ``f = Delta/x`` with ``x = -1 - W_-1(-(1 - c)/e)``,
    ``c = Lambda Delta/mu``, ``1 - c`` computed as ``(u - b)(u + b)/u^2``,
    ``u = Lambda^-1/2``, ``b = sqrt(Delta/mu)`` (the kernel of
    :func:`freshcore.rates.optimal_rates`); the others solve ``V(iota) =
    Lambda`` in compiled code by Halley's method with the slope
    ``V'(iota) = mu alpha e^{-alpha iota} psi(iota)`` (term by term,
    ``w' = e^{-alpha iota} psi'``) and the curvature ``V''/V' = psi'/psi -
    alpha`` (``psi'`` from the same series as ``psi``), safeguarded by the
    bracket that the solutions at the outer iteration's other multipliers
    give (``iota`` is non-decreasing in ``Lambda``) and started from the
    prediction ``iota + h - (V''/V') h^2/2 + (3 (V''/V')^2 - V^(3)/V') h^3/6``,
    ``h = (Lambda - Lambda_0)/V'(iota)``, of the nearest one (taken as
    exact within ``kappa |h| <= 5e-5``; from the
    signal-blind periodic threshold, or ``(K - 1/2) beta`` with ``K`` the
    recall-1 signal count where that is larger, when there is none); where
    the interpolant between two bracketing solutions is exact, ``psi`` comes
    from their cubic Hermite interpolant too and no series is summed.  Pages
    run on threads (:func:`freshcore.set_num_threads`, results independent
    of the split).  Outer problem: the total
    frequency ``S(u)`` increases with ``u``; from 2 10^5 pages on, it starts
    at the multiplier of a strided subsample and steps along the
    subsample's ``d log S/d log u``; a bracket ``[u_a, u_b]`` with
    ``S_a <= R < S_b`` is narrowed by inverse quadratic or secant steps on
    ``log S`` against ``log u`` (Newton steps with the exact ``dS/du``, a
    sum of ``-f psi'/(psi V')``, within 1e-6 of ``u``: farther out, pages
    entering the crawl make ``S`` too rough for it), safeguarded by
    bisection (in ``log(mu/Delta - Lambda)`` when a page enters the crawl
    inside the bracket, where ``S`` is steep), until ``|S - R| <= 1e-14 R``
    or ``(Lambda_a - Lambda_b)(S_b - S_a) <= 1e-15 Lambda_a R`` (the latter
    only after two more steps when no page's frequency jumps in the
    bracket).  In the latter
    case ``S`` jumps across ``R`` (in floating point a page's frequency jumps
    from 0 to ``~Delta/37`` at its entry point, as in ``optimal_rates``, and
    pages with ``alpha ~ 0`` have an almost-step ``V``, SPEC section 3), and
    the policy time-shares: ``f = f_a + theta (f_b - f_a)`` with ``sum f = R``;
    a page whose frequency is mixed gets the threshold with that frequency
    (``psi(iota) = 1/f``) and the accuracy is that of the time-shared policy.

    With ``lambda = 0`` everywhere this is the periodic optimum of
    ``optimal_rates(model="periodic")`` (tests: equal to 1e-12).

    ``recall = 1`` (``alpha = 0``, SPEC: "handle the limit explicitly"): the
    page is fresh with probability ``rho^k`` after ``k`` signals
    (``rho = nu/(Delta + nu)``) whatever the elapsed time, so the threshold
    policies become "crawl at the K-th signal": frequency ``gamma/K``, fresh
    fraction ``gamma (1 - rho^K)/(K Delta)``; ``K`` maximises the Lagrangian
    ``mu F - Lambda f`` (unimodal in K) and is returned in ``signal_counts``.

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.thresholds import optimal_thresholds
    >>> pages = PageModel([0.5, 1.0, 2.0], [1.0, 1.0, 0.5], recall=[0.0, 0.6, 0.9], false_rate=0.2)
    >>> res = optimal_thresholds(pages, 1.0)
    >>> round(float(res.frequencies.sum()), 12), bool(0.0 < res.accuracy < 1.0)
    (1.0, True)
    """
    caller = "optimal_thresholds"
    pages = check_pages(pages, caller)
    R = check_scalar(bandwidth, "bandwidth", caller, low=0.0, low_inclusive=False)
    return _solve(pages, R)[0]


# ---------------------------------------------------------------------------
# The solver: page groups, the solution at one multiplier, the outer iteration


class _BlindPages(NamedTuple):
    """Pages whose signals carry no information (``beta = 0``): the periodic closed form, ``f = Delta/x``."""

    idx: np.ndarray  # their positions in the model
    b: np.ndarray  # sqrt(Delta/mu): u = b is where the page enters the crawl
    delta: np.ndarray
    lo: np.ndarray  # the periodic kernel's bracket (open: 0, inf)
    hi: np.ndarray
    entry: np.ndarray  # mu/Delta, the multiplier below which the page is crawled

    @classmethod
    def of(cls, pages: PageModel, idx: np.ndarray) -> _BlindPages:
        dl, mu = pages.change_rate[idx], pages.importance[idx]
        return cls(idx, np.sqrt(dl / mu), np.ascontiguousarray(dl), np.zeros(len(idx)), np.full(len(idx), np.inf),
                   mu / dl)


class _SignalPages(NamedTuple):
    """Pages with informative signals (``beta > 0``, ``alpha > 0``): ``V(iota) = Lambda`` solved per page."""

    idx: np.ndarray
    delta: np.ndarray  # delta .. mu: the threshold kernel's parameters, in its order
    alpha: np.ndarray
    gamma: np.ndarray
    nu: np.ndarray
    beta: np.ndarray
    mu: np.ndarray
    entry: np.ndarray  # mu/Delta = V(inf): the page is crawled at multipliers below it
    kappa: np.ndarray  # alpha + gamma (+ 1/iota: a bound on |V''/V'|, see _threshold_hints)
    blind_b: np.ndarray  # sqrt(Delta/mu), for the signal-blind start of a cold solve

    @classmethod
    def of(cls, pages: PageModel, idx: np.ndarray) -> _SignalPages:
        par = [np.ascontiguousarray(a[idx]) for a in (pages.change_rate, pages.alpha, pages.gamma,
                                                       pages.false_rate, pages.beta, pages.importance)]
        dl, alpha, gamma, nu, beta, mu = par
        return cls(idx, dl, alpha, gamma, nu, beta, mu, mu / dl, alpha + gamma, np.sqrt(dl / mu))

    def reordered(self, order: np.ndarray) -> _SignalPages:
        return _SignalPages._make(np.ascontiguousarray(x[order]) for x in self)

    def kernel_args(self, m: int) -> list[np.ndarray]:
        """The threshold kernel's page parameters (delta, alpha, gamma, nu, beta, mu) of the first m pages."""
        return [x[:m] for x in (self.delta, self.alpha, self.gamma, self.nu, self.beta, self.mu)]


class _CountPages(NamedTuple):
    """Pages with ``recall = 1`` (``alpha = 0``): crawled at the K-th signal."""

    idx: np.ndarray
    mu: np.ndarray
    delta: np.ndarray
    nu: np.ndarray

    @classmethod
    def of(cls, pages: PageModel, idx: np.ndarray) -> _CountPages:
        mu, dl, nu = (np.ascontiguousarray(a[idx]) for a in (pages.importance, pages.change_rate, pages.false_rate))
        return cls(idx, mu, dl, nu)


@dataclass
class _Solution:
    """Every page's solution at one multiplier ``Lambda = 1/u^2``: thresholds, frequencies and the total.

    ``threshold`` .. ``curv3`` are per signal page (``curv2``/``curv3``, ``V''/V'`` and ``V'''/V'`` at the
    threshold, may be None: then the hints built on this solution are of lower order).
    """

    u: float
    total: float  # S(u), the sum of the frequencies
    dtotal_du: float  # dS/du, exact (for Newton steps close to the root)
    blind_freq: np.ndarray
    threshold: np.ndarray
    signal_freq: np.ndarray
    slope: np.ndarray  # V'(threshold)
    curv2: np.ndarray | None
    curv3: np.ndarray | None
    counts: np.ndarray  # K of the recall-1 pages (0: not crawled)
    count_freq: np.ndarray

    @property
    def multiplier(self) -> float:
        return 1.0 / self.u ** 2

    def head(self, m: int) -> _Solution:
        """The solution restricted to the first m signal pages (the others untouched)."""
        return _Solution(self.u, self.total, self.dtotal_du, self.blind_freq, self.threshold[:m],
                         self.signal_freq[:m], self.slope[:m], None if self.curv2 is None else self.curv2[:m],
                         None if self.curv3 is None else self.curv3[:m], self.counts, self.count_freq)


class _Interpolated(NamedTuple):
    """Signal pages whose threshold is the (exact) Hermite interpolant between two solutions: psi there."""

    idx: np.ndarray
    psi: np.ndarray
    curv2: np.ndarray
    curv3: np.ndarray


class _Hints(NamedTuple):
    """Per signal page: the kernel's first iterate, its bracket and ``base`` (see :func:`_threshold_hints`)."""

    start: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    base: np.ndarray
    interpolated: _Interpolated | None = None


class _Problem:
    """The pages of :func:`optimal_thresholds` in their groups, and the solution at any multiplier.

    The signal pages are ordered (:meth:`order_by_entry`) so that none past ``n_live`` enters the crawl
    above ``lam_cut``: at multipliers above it only the first ``n_live`` are solved.
    """

    def __init__(self, pages: PageModel) -> None:
        dl, mu, beta = pages.change_rate, pages.importance, pages.beta
        self.active = (dl > 0) & (mu > 0)
        step = self.active & (pages.alpha == 0) & (beta > 0)
        self.blind = _BlindPages.of(pages, np.flatnonzero(self.active & (beta == 0)))
        self.signal = _SignalPages.of(pages, np.flatnonzero(self.active & (beta > 0) & ~step))
        self.count = _CountPages.of(pages, np.flatnonzero(step))
        self.n_live, self.lam_cut = len(self.signal.idx), math.inf
        # Lambda = max mu/Delta (u0 = min sqrt(Delta/mu)): nothing is crawled
        self.u0 = float(np.min(np.sqrt(dl[self.active] / mu[self.active]))) if self.active.any() else math.nan

    @property
    def empty(self) -> bool:
        return len(self.blind.idx) + len(self.signal.idx) + len(self.count.idx) == 0

    def order_by_entry(self, lam_cut: float) -> None:
        """Put the signal pages entering the crawl above ``lam_cut`` first (each part in its own order:
        threads get even shares); at a multiplier above ``lam_cut`` only they can be crawled, and the
        solves, hints and sums skip the rest (half of SPEC's check pages at ``0.9`` of the final multiplier)."""
        first = self.signal.entry > lam_cut
        order = np.concatenate([np.flatnonzero(first), np.flatnonzero(~first)])
        self.lam_cut = lam_cut
        self.n_live = int(first.sum())
        self.signal = self.signal.reordered(order)

    def nothing_crawled(self) -> _Solution:
        """The solution at ``u0`` (``Lambda = max mu/Delta``): no page is crawled."""
        ns, nk = len(self.signal.idx), len(self.count.idx)
        return _Solution(self.u0, 0.0, 0.0, np.zeros(len(self.blind.idx)), np.full(ns, np.inf), np.zeros(ns),
                         np.zeros(ns), np.zeros(ns), np.zeros(ns), np.zeros(nk, dtype=np.int_), np.zeros(nk))

    def evaluate(self, u: float, bracket: list[_Solution]) -> _Solution:
        """Every page's solution at ``Lambda = 1/u^2``, the signal pages' solves hinted by ``bracket``."""
        lam = 1.0 / (u * u)
        blind, sig, cnt = self.blind, self.signal, self.count
        fg = np.empty(len(blind.idx))
        total, dsdu = (_rates.periodic_eval(blind.b, blind.delta, blind.lo, blind.hi, u, fg) if len(blind.idx)
                       else (0.0, 0.0))
        ns = len(sig.idx)
        it, fs, slope = np.full(ns, np.inf), np.zeros(ns), np.zeros(ns)
        curv, curv3 = np.zeros(ns), np.zeros(ns)
        m = self.n_live if lam >= self.lam_cut else ns
        if m:
            par = sig.kernel_args(m)
            hints = _threshold_hints(lam, [x.head(m) for x in bracket], sig.kappa[:m], sig.alpha[:m], sig.beta[:m])
            start, lo, hi, base, exact = hints
            cold = ~np.isfinite(start)
            if cold.any():
                start[cold] = self._cold_starts(np.flatnonzero(cold), u, lam)
            if exact is not None and len(exact.idx):
                # thresholds interpolated exactly between the bracket's solutions: psi there too (no series);
                # the kernel skips those pages (mu = 0 there: it returns at once) and the rest is solved
                par[5] = par[5].copy()
                par[5][exact.idx] = 0.0
            im, fm, sm, cm, c3m = it[:m], fs[:m], slope[:m], curv[:m], curv3[:m]
            parallel_chunks(m, lambda p, q: _thresholds.threshold_kernel(  # type: ignore[call-arg, arg-type, unused-ignore]
                lam, *(x[p:q] for x in par), start[p:q], lo[p:q], hi[p:q], base[p:q], im[p:q], fm[p:q],
                sm[p:q], cm[p:q], c3m[p:q]),
                heavy=True)
            if exact is not None and len(exact.idx):
                ex, x = exact.idx, start[exact.idx]
                it[ex], fs[ex], curv[ex], curv3[ex] = x, 1.0 / exact.psi, exact.curv2, exact.curv3
                slope[ex] = sig.mu[ex] * sig.alpha[ex] * np.exp(-sig.alpha[ex] * x) * exact.psi
            total += float(fm.sum())
            # dS/du of these pages: df/dLambda = -(psi'/psi) f / V', psi'/psi = V''/V' + alpha, dLambda/du = -2/u^3
            on = (fm > 0) & (sm > 0)
            dsdu += 2.0 / u ** 3 * float(np.sum(fm[on] * (cm[on] + sig.alpha[:m][on]) / sm[on]))
        kc = np.empty(len(cnt.idx), dtype=np.int_)
        fk = np.empty(len(cnt.idx))
        if len(cnt.idx):
            total += _thresholds.signal_count_kernel(lam, cnt.mu, cnt.delta, cnt.nu, kc, fk)
        if math.isnan(total):
            self._unbounded(np.isnan(fs) | np.isnan(it), lam)
        return _Solution(u, total, dsdu, fg, it, fs, slope, curv, curv3, kc, fk)

    def _unbounded(self, bad: np.ndarray, lam: float) -> None:
        """ValueError naming the first signal page whose series ran past its work bound (NaN) at ``lam``."""
        sig = self.signal
        k = int(np.flatnonzero(bad)[0]) if bad.any() else 0
        page = int(sig.idx[k])
        raise ValueError(
            f"optimal_thresholds cannot solve page {page} (change_rate={float(sig.delta[k])!r}, "
            f"recall={float(1.0 - sig.alpha[k] / sig.delta[k])!r}, false_rate={float(sig.nu[k])!r}) at the "
            f"multiplier {lam!r} in bounded time: its crawl value's series would run past {MAX_TERMS} terms and no "
            f"closed form applies."
        )

    def _cold_starts(self, ci: np.ndarray, u: float, lam: float) -> np.ndarray:
        """First iterates where no solution is nearby: the signal-blind (periodic) threshold at this multiplier,
        or (K - 1/2) beta where that is larger, K the signal count at which the page would be crawled were
        every change signalled (recall 1): with a large beta (recall near 1) the threshold lies near K beta,
        far above the periodic one (4.0 -> 3.1 V evaluations a page)."""
        sig = self.signal
        fgs, kc, fk = np.empty(len(ci)), np.empty(len(ci), dtype=np.int_), np.empty(len(ci))
        _rates.periodic_eval(*(np.ascontiguousarray(x[ci]) for x in (sig.blind_b, sig.delta)),  # type: ignore[call-arg, arg-type, unused-ignore]
                             np.zeros(len(ci)), np.full(len(ci), np.inf), u, fgs)
        _thresholds.signal_count_kernel(lam, *(np.ascontiguousarray(x[ci]) for x in (sig.mu, sig.delta, sig.nu)),  # type: ignore[call-arg, arg-type, unused-ignore]
                                        kc, fk)
        with np.errstate(divide="ignore", invalid="ignore"):
            by_count = np.where((kc > 0) & np.isfinite(sig.beta[ci]), (kc - 0.5) * sig.beta[ci], 0.0)
            return np.maximum(1.0 / fgs, by_count)

    def per_page(self, sol: _Solution, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Frequencies, thresholds and signal counts of all n pages of the model at a solution."""
        gi, si, ki = self.blind.idx, self.signal.idx, self.count.idx
        f, io, kc = np.zeros(n), np.full(n, np.inf), np.zeros(n, dtype=np.int_)
        f[gi], f[si], f[ki] = sol.blind_freq, sol.signal_freq, sol.count_freq
        with np.errstate(divide="ignore"):
            io[gi] = 1.0 / sol.blind_freq
        io[si] = sol.threshold
        kc[ki] = sol.counts
        return f, io, kc


class _Bracket:
    """The outer iteration's state: solutions ``a`` (``S <= R``) and ``b`` (``S > R``, None until found),
    a solution meeting the budget (``final``, else None) and every solution evaluated (``hist``)."""

    def __init__(self, problem: _Problem, R: float, elasticity: float) -> None:
        self.problem, self.R, self.elasticity = problem, R, elasticity
        self.a: _Solution = problem.nothing_crawled()
        self.b: _Solution | None = None
        self.final: _Solution | None = None
        self.hist: list[_Solution] = []

    def trial(self, u: float) -> _Solution:
        sol = self.problem.evaluate(u, [x for x in (self.a, self.b) if x is not None])
        self.hist.append(sol)
        return sol

    def search(self, guess: float, first_step: float) -> None:
        """Find a bracket ``S_a <= R < S_b`` from the multiplier ``guess`` (or a solution with ``S = R``)."""
        R, u0 = self.R, self.problem.u0
        factor = 2.0
        if guess > 0 and 1.0 / math.sqrt(guess) > u0:
            trial = self.trial(1.0 / math.sqrt(guess))
            if abs(trial.total - R) <= 1e-14 * R:
                self.final = trial
            elif trial.total > R:
                self.b = trial
                factor = first_step
                while True:  # step down to a solution under the budget
                    u = _past(self.b, R, _slope(self.hist, self.elasticity))
                    if not u0 < u < self.b.u:
                        u = self.b.u / factor
                        factor *= factor
                    if u <= u0:
                        break
                    trial = self.trial(u)
                    if trial.total > R:
                        self.b = trial
                    else:
                        self.a = trial
                        break
            else:
                self.a = trial
                factor = first_step
        while self.b is None and self.final is None:  # step up to a solution over the budget
            a = self.a
            u = _past(a, R, _slope(self.hist, self.elasticity)) if a.total > 0 else math.nan
            if not a.u < u < 2.0 * a.u:
                u = a.u * factor
                factor = factor * factor if factor < 2.0 else 2.0
            trial = self.trial(u)
            if trial.total > R:
                self.b = trial
            else:
                self.a = trial

    def narrow(self) -> None:
        """Narrow the bracket until ``|S - R| <= 1e-14 R`` (``final``) or it is down to a jump of ``S``.

        Inverse quadratic or secant steps on ``log S`` against ``log u``, Newton steps with the exact slope
        within 1e-6 of ``u``, safeguarded by bisection (in ``log(mu/Delta - Lambda)`` beside the entry point
        of a page entering the crawl in the bracket, where ``S`` is steep).
        """
        R = self.R
        widths: list[float] = []
        extra = 0
        for _ in range(400):
            if self.final is not None:
                break
            a, b = self.a, self.b
            assert b is not None
            lam_a, lam_b = 1.0 / a.u ** 2, 1.0 / b.u ** 2
            if (lam_a - lam_b) * (b.total - a.total) <= 1e-15 * lam_a * R:
                # time-share, unless no page's frequency jumps in the bracket (the same pages crawled, the same
                # signal counts): S is continuous there, and a step or two more usually meets |S - R| <= 1e-14 R,
                # which gives every page V(iota) = Lambda (a shared page's threshold is only near it), for about
                # the cost of the time-sharing (psi^{-1} of the mixed pages and a second accuracy)
                if extra >= 2 or _jumps(a, b):
                    break
                extra += 1
            widths.append(b.u - a.u)
            u = self._next_u(a, b)
            if not a.u < u < b.u or (len(widths) >= 4 and widths[-1] > 0.5 * widths[-4]):
                # stalled: S is steep at a page's entry (frequency ~ 1/log(1/(1 - Lambda Delta/mu)), a jump
                # in floating point); try just beside the entry point of a page entering in the bracket
                u = _entry_split(a, b, u if a.u < u < b.u else math.sqrt(a.u * b.u), self.problem.blind.entry,
                                 self.problem.signal.entry)
                if not a.u < u < b.u:
                    u = math.sqrt(a.u * b.u)
                if not a.u < u < b.u:
                    u = 0.5 * (a.u + b.u)
                    if not a.u < u < b.u:
                        break
                widths.clear()
            trial = self.trial(u)
            if abs(trial.total - R) <= 1e-14 * R:
                self.final = trial
            elif trial.total > R:
                self.b = trial
            else:
                self.a = trial

    def _next_u(self, a: _Solution, b: _Solution) -> float:
        """The next trial: inverse quadratic interpolation of log u against log S through the last three
        solutions, a Newton step with the exact dS/du close to the root, else the secant through the last two
        (possibly outside the bracket: the caller then bisects)."""
        R, hist = self.R, self.hist
        u = _inverse_quadratic(hist[-3:], R)
        # close to the root, a Newton step with the exact slope dS/du (a sum over the pages' df/du; only
        # within ~1e-6 of u is S smooth enough for it, farther out pages entering the crawl dominate)
        last = hist[-1]
        if last.dtotal_du > 0:
            un = last.u + (R - last.total) / last.dtotal_du
            if a.u < un < b.u and abs(un - last.u) <= 1e-6 * last.u:
                u = un
        pts = [h for h in hist[-2:] if h.total > 0.0]
        if not a.u < u < b.u and len(pts) == 2:
            (s0, u0), (s1, u1) = ((math.log(h.total), math.log(h.u)) for h in pts)
            if s0 != s1 and u0 != u1:  # (distinct logs: distinct values can round to one log)
                u = _exp(u1 + (math.log(R) - s1) / (s1 - s0) * (u1 - u0))
        return u


def _solve(pages: PageModel, R: float) -> tuple[ThresholdsResult, list[tuple[float, float]]]:
    """:func:`optimal_thresholds` on validated input; also the outer iteration's ``(u, S(u))`` pairs."""
    n = len(pages)
    problem = _Problem(pages)
    if problem.empty:
        thresholds, frequencies, counts = np.full(n, np.inf), np.zeros(n), np.zeros(n, dtype=np.int_)
        acc = _accuracy(pages, thresholds, frequencies, counts)
        return ThresholdsResult(thresholds, frequencies, 0.0, acc, counts), []
    if len(problem.blind.idx) + len(problem.signal.idx) == 0:
        # only pages crawled at their K-th signal (recall 1): each at most gamma = Delta + nu per unit time
        # (K = 1, every signal); a bandwidth that covers that much is not binding (multiplier 0)
        cnt = problem.count
        if R >= float(np.sum(cnt.delta + cnt.nu)):
            counts = np.ones(len(cnt.idx), dtype=np.int_)
            sol = _Solution(math.inf, 0.0, 0.0, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0),
                            np.zeros(0), counts, cnt.delta + cnt.nu)
            frequencies, thresholds, counts_all = problem.per_page(sol, n)
            acc = _accuracy(pages, thresholds, frequencies, counts_all)
            return ThresholdsResult(thresholds, frequencies, 0.0, acc, counts_all), []
    guess, first_step, elasticity = _first_guess(pages, problem, R)
    if guess > 0 and len(problem.signal.idx):
        problem.order_by_entry(0.9 * guess)
    bracket = _Bracket(problem, R, elasticity)
    bracket.search(guess, first_step)
    bracket.narrow()
    trace = [(h.u, h.total) for h in bracket.hist]
    if bracket.final is not None:
        frequencies, thresholds, counts = problem.per_page(bracket.final, n)
        acc = _accuracy(pages, thresholds, frequencies, counts)
        return ThresholdsResult(thresholds, frequencies, 1.0 / bracket.final.u ** 2, acc, counts), trace
    assert bracket.b is not None
    return _time_share(pages, problem, bracket.a, bracket.b, R), trace


def _first_guess(pages: PageModel, problem: _Problem, R: float) -> tuple[float, float, float]:
    """The outer iteration's first multiplier, its first step factor and ``d log S / d log u`` (or NaN).

    From 10 ``_SUBSAMPLE`` pages on, the multiplier of an evenly strided subsample (budget scaled to it), whose
    multiplier is within ~0.2% of the full one on SPEC's check pages (10^6), and its elasticity, which the
    full set shares (``S_full ~ S_sub n/m``); otherwise the signal-blind periodic optimum.
    """
    n = len(pages)
    if n >= 10 * _SUBSAMPLE:
        part = pages[slice(None, None, n // _SUBSAMPLE)]
        r_sub = R * len(part) / n
        res_sub, trace_sub = _solve(part, r_sub)
        guess = res_sub.multiplier
        return guess, 1.001, _elasticity(trace_sub, guess ** -0.5, r_sub)
    active = problem.active
    return _rates_multiplier(pages.change_rate[active], pages.importance[active], R), 1.02, math.nan


def _time_share(pages: PageModel, problem: _Problem, a: _Solution, b: _Solution, R: float) -> ThresholdsResult:
    """The policy mixing the bracketing solutions a (``S_a <= R``) and b (``S_b > R``) to spend exactly ``R``.

    ``f = f_a + theta (f_b - f_a)``; a page whose frequency is mixed gets the threshold with that frequency
    (``psi(iota) = 1/f``), and the accuracy is that of the time-shared policy.
    """
    n = len(pages)
    gi = problem.blind.idx
    si = problem.signal.idx
    theta = (R - a.total) / (b.total - a.total)
    fa, ia, ka = problem.per_page(a, n)
    fb, ib, kb = problem.per_page(b, n)
    frequencies = fa + theta * (fb - fa)
    thresholds = ia.copy()
    mixed = fa != fb
    with np.errstate(divide="ignore"):
        thresholds[gi] = 1.0 / frequencies[gi]
    ms = si[mixed[si] & (frequencies[si] > 0)]
    if len(ms):
        # psi^{-1}(1/f) by linear interpolation between the two solutions where the bracket is so narrow that
        # its error, at most kappa (iota_b - iota_a)^2 / 8 (kappa = 1/iota + alpha + gamma bounding |psi''/psi'|
        # as for V in _threshold_hints), is below 1e-16 of iota (the kernel's regula falsi stops at 4e-16);
        # the psi values there are the solutions' 1/f, so no psi is evaluated
        lo_i, hi_i = np.minimum(ia[ms], ib[ms]), np.maximum(ia[ms], ib[ms])
        with np.errstate(divide="ignore", invalid="ignore"):
            psi_lo, psi_hi = 1.0 / np.maximum(fa[ms], fb[ms]), 1.0 / np.minimum(fa[ms], fb[ms])
            kap = 1.0 / lo_i + pages.alpha[ms] + pages.gamma[ms]
            lin = lo_i + (1.0 / frequencies[ms] - psi_lo) / (psi_hi - psi_lo) * (hi_i - lo_i)
            near = (kap * (hi_i - lo_i) ** 2 <= 8e-16 * lo_i) & (psi_hi > psi_lo) & (lin >= lo_i) & (lin <= hi_i)
        thresholds[ms[near]] = lin[near]
        ms = ms[~near]
    if len(ms):
        inv = np.empty(len(ms))
        # psi^{-1}(1/f) lies between the two solutions' thresholds (psi increasing, f between fa and fb)
        par = (1.0 / frequencies[ms],
               *(np.ascontiguousarray(x[ms]) for x in (pages.change_rate, pages.gamma, pages.false_rate, pages.beta)),
               np.minimum(ia[ms], ib[ms]), np.maximum(ia[ms], ib[ms]))
        parallel_chunks(len(ms), lambda p, q: _thresholds.interval_inverse_kernel(*(x[p:q] for x in par), inv[p:q]),  # type: ignore[call-arg, arg-type, unused-ignore]
                        heavy=True)
        thresholds[ms] = inv
    counts = np.where(theta < 0.5, ka, kb)
    acc = (1.0 - theta) * _accuracy(pages, ia, fa, ka) + theta * _accuracy(pages, ib, fb, kb)
    # the frequencies of pages that do not jump are (to second order in the bracket) those at u_theta
    multiplier = 1.0 / (a.u + theta * (b.u - a.u)) ** 2
    return ThresholdsResult(thresholds, frequencies, multiplier, acc, counts)


def _threshold_hints(
    lam: float, known: list[_Solution], kappa: np.ndarray, alpha: np.ndarray | None = None,
    beta: np.ndarray | None = None,
) -> _Hints:
    """Newton start, safeguarding bracket and the start's base solution per page, from other multipliers.

    ``iota(Lambda)`` is non-decreasing (``V`` is), so a solution at a larger
    multiplier bounds the thresholds from above and one at a smaller multiplier
    from below; the start is the prediction ``iota + h - (V''/V') h^2/2``,
    ``h = (lam - Lambda)/V'(iota)``, from the solution with the nearest
    multiplier (NaN, i.e. the kernel's default, where that page was not
    crawled), and ``base`` that solution (second order: the kernel takes the
    start as exact when ``kappa |h| <= 1e-6``; without the solution's
    curvature ``curv2`` the prediction is first order and ``base`` is NaN).
    With ``V^(3)/V'`` (``curv3``) and the pages' ``alpha`` and ``beta`` the
    prediction is third order, and exact (``base = start``) where ``kappa
    |h| <= 5e-5`` and no multiple of ``beta`` (a kink of ``psi''`` or a
    higher derivative) lies between the two thresholds.

    Between two solutions ``(Lambda_b, iota_b)``, ``(Lambda_a,
    iota_a)`` with their slopes ``1/V'``, the cubic Hermite interpolant of
    ``iota(Lambda)`` errs by at most ``~(kappa |iota_a - iota_b|)^3 |iota_a -
    iota_b| / 384`` (``kappa = 1/iota + alpha + gamma`` bounds ``|V''/V'|``
    and the higher derivatives' scale); where ``kappa |iota_a - iota_b| <=
    1e-4`` (and, given ``beta``, no multiple of ``beta`` lies between them)
    that is below 1e-18 of ``iota``, the interpolant is the solution, and
    ``base = start`` tells the kernel so; elsewhere it is the Newton start,
    unless the third-order prediction is exact there.

    Given ``alpha`` and ``beta``, ``interpolated`` holds for those pages
    (``idx``) ``psi`` at the interpolated threshold, by the cubic Hermite
    interpolant in ``iota`` through both solutions' ``psi`` and ``psi' =
    (V''/V' + alpha) psi`` (error ``~(kappa |iota_a - iota_b|)^4 psi / 384 <=
    3e-19 psi``, no series evaluated), and ``V''/V'`` there (``curv2``, and
    ``V^(3)/V'`` as ``curv3``, linear in ``iota``: off by ``~1e-4`` of
    themselves at most, as the kernel's predictions allow).
    """
    interpolated = None
    n = len(kappa)
    lo, hi, start, base = np.zeros(n), np.full(n, np.inf), np.full(n, np.nan), np.full(n, np.nan)
    nearest = above = below = None
    for sol in known:
        lam_s = 1.0 / sol.u ** 2
        if lam_s >= lam:
            hi = np.minimum(hi, sol.threshold)
            above = sol
        else:
            lo = np.maximum(lo, sol.threshold)
            below = sol
        if nearest is None or abs(math.log(lam_s / lam)) < abs(math.log(1.0 / (nearest.u ** 2 * lam))):
            nearest = sol
    if nearest is None:
        return _Hints(start, lo, hi, base)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        h = (lam - 1.0 / nearest.u ** 2) / nearest.slope
        if nearest.curv3 is not None and nearest.curv2 is not None and alpha is not None and beta is not None:
            # third order (the third derivative of iota(Lambda) is (3 V''^2 - V' V^(3))/V'^5): its error,
            # ~2 (kappa h)^3 h, is below 2e-17 of iota where kappa |h| <= 5e-5 and no multiple of beta (a kink
            # of psi'' or a higher derivative) lies in between: there start is the solution (base = start);
            # elsewhere the kernel's second-order test applies
            c2, c3 = nearest.curv2, nearest.curv3
            start = nearest.threshold + h * (1.0 - 0.5 * c2 * h + (3.0 * c2 * c2 - c3) * h * h / 6.0)
            base = nearest.threshold.copy()
            third = ((kappa + 1.0 / nearest.threshold) * np.abs(h) <= 5e-5) \
                & (np.floor(nearest.threshold / beta) == np.floor(start / beta))
            base[third] = start[third]
        elif nearest.curv2 is not None:
            # second order (iota'' = -V''/V'^3): exact when kappa |h| <= 1e-6 (the kernel's HALLEY_EXACT)
            start = nearest.threshold + h * (1.0 - 0.5 * nearest.curv2 * h)
            base = nearest.threshold.copy()
            third = np.zeros(n, dtype=bool)
        else:
            start = nearest.threshold + h  # first order only: never taken as exact
            base = np.full(n, np.nan)
            third = np.zeros(n, dtype=bool)
        if above is not None and below is not None:
            lam_a, lam_b = 1.0 / above.u ** 2, 1.0 / below.u ** 2
            ya, yb = above.threshold, below.threshold
            both = (above.slope > 0) & (below.slope > 0) & np.isfinite(ya)
            if both.any():
                width, t = lam_a - lam_b, (lam - lam_b) / (lam_a - lam_b)
                ya, yb = ya[both], yb[both]
                ma, mb = width / above.slope[both], width / below.slope[both]
                herm = ((2 * t - 3) * t * t + 1) * yb + ((t - 2) * t + 1) * t * mb + (3 - 2 * t) * t * t * ya \
                    + (t - 1) * t * t * ma
                exact = (kappa[both] + 1.0 / yb) * (ya - yb) <= 1e-4
                if beta is not None:
                    # no kink of psi'' (a multiple of beta) between the two: the error bound needs 4 derivatives
                    bb = beta[both]
                    exact &= np.floor(ya / bb) == np.floor(yb / bb)
                # an exact interpolant first (no series for psi then), else an exact third-order prediction, else
                # the interpolant as the start (better than either one-sided prediction)
                bidx = np.flatnonzero(both)
                upd = exact | ~third[bidx]
                start[bidx[upd]] = herm[upd]
                base[bidx[upd]] = np.where(exact[upd], herm[upd], np.nan)
                c2a, c2b = above.curv2, below.curv2
                if alpha is not None and beta is not None and c2a is not None and c2b is not None:
                    idx = np.flatnonzero(both)[exact]
                    ya, yb, x = ya[exact], yb[exact], herm[exact]
                    al = alpha[idx]
                    pa, pb = 1.0 / above.signal_freq[idx], 1.0 / below.signal_freq[idx]
                    ca, cb = c2a[idx], c2b[idx]
                    w = ya - yb
                    s = np.where(w > 0, (x - yb) / np.where(w > 0, w, 1.0), 0.0)
                    psi = (((1 + 2 * s) * (1 - s) ** 2) * pb + (s * (1 - s) ** 2 * w) * ((cb + al) * pb)
                           + (s * s * (3 - 2 * s)) * pa + (s * s * (s - 1) * w) * ((ca + al) * pa))
                    c3a = above.curv3[idx] if above.curv3 is not None else np.zeros(len(idx))
                    c3b = below.curv3[idx] if below.curv3 is not None else np.zeros(len(idx))
                    interpolated = _Interpolated(idx, psi, (1 - s) * cb + s * ca, (1 - s) * c3b + s * c3a)
    return _Hints(start, lo, hi, base, interpolated)


def _entry_split(a: _Solution, b: _Solution, u: float, g_ent: np.ndarray, s_ent: np.ndarray) -> float:
    """Bisection in ``log(c - Lambda)`` around the entry multiplier ``c = mu/Delta`` of a page.

    A page's frequency falls to 0 like ``1/log(1/(1 - Lambda/c))`` as ``Lambda``
    rises to its entry ``c``, so near ``c`` the total frequency is steep in
    ``Lambda`` but smooth in ``log(c - Lambda)``.  Among at most 16 pages
    crawled at b but not at a whose entry lies in the bracket, the one nearest
    to ``u`` is taken and the geometric mean of the bracket's distances to
    ``c`` (the one at a floored at ``1e-15 c``) is returned as a ``u``; NaN
    when there is no such page.
    """
    lam_a, lam_b = 1.0 / a.u ** 2, 1.0 / b.u ** 2
    ent = np.concatenate([g_ent[(a.blind_freq == 0) & (b.blind_freq > 0)],
                          s_ent[(a.signal_freq == 0) & (b.signal_freq > 0)]])
    ent = ent[(ent > lam_b) & (ent < lam_a)]
    if not 1 <= len(ent) <= 16:
        return math.nan
    c = float(ent[np.argmin(np.abs(ent - 1.0 / (u * u)))])
    eps_b, eps_a = c - lam_b, max(c - lam_a, 1e-15 * c)
    if not 0.0 < eps_a < eps_b:
        return math.nan
    return 1.0 / math.sqrt(c - math.sqrt(eps_a * eps_b))


def _jumps(a: _Solution, b: _Solution) -> bool:
    """Whether some page's frequency jumps between two solutions (crawled at one only, or another signal count)."""
    return bool(np.any((a.signal_freq > 0) != (b.signal_freq > 0)) or np.any((a.blind_freq > 0) != (b.blind_freq > 0))
                or np.any(a.counts != b.counts))


def _exp(y: float) -> float:
    """``e^y``, ``inf`` past the largest double: the steps extrapolate, and a step out of the bracket is refused."""
    return math.exp(y) if y < 709.0 else (math.inf if y == y else math.nan)


def _inverse_quadratic(pts: list[_Solution], R: float) -> float:
    """``u`` where the quadratic through ``(log S, log u)`` of three solutions takes ``log R`` (NaN if degenerate)."""
    if len(pts) < 3 or not all(p.total > 0 for p in pts):
        return math.nan
    (x0, y0), (x1, y1), (x2, y2) = ((math.log(p.total), math.log(p.u)) for p in pts)
    if x0 == x1 or x1 == x2 or x0 == x2:
        return math.nan
    x = math.log(R)
    y = (y0 * (x - x1) * (x - x2) / ((x0 - x1) * (x0 - x2)) + y1 * (x - x0) * (x - x2) / ((x1 - x0) * (x1 - x2))
         + y2 * (x - x0) * (x - x1) / ((x2 - x0) * (x2 - x1)))
    return _exp(y)


def _slope(hist: list[_Solution], elasticity: float) -> float:
    """``d log S / d log u`` for the next bracketing step: the secant through the last two solutions, else
    the subsample's elasticity (NaN if neither)."""
    pts = [h for h in hist[-2:] if h.total > 0]
    if len(pts) == 2:
        (s0, u0), (s1, u1) = ((math.log(h.total), math.log(h.u)) for h in pts)
        if u0 != u1 and s0 != s1:  # (distinct logs: distinct values can round to one log)
            e = (s1 - s0) / (u1 - u0)
            if e > 0:
                return e
    return elasticity


def _past(sol: _Solution, R: float, e: float) -> float:
    """The ``u`` where ``log S`` with slope ``e`` against ``log u`` passes ``R`` by 5% of the way (to bracket
    ``R`` in one step when ``e`` is a few percent off); NaN without a usable slope."""
    if not (e > 0 and sol.total > 0):
        return math.nan
    return sol.u * _exp(1.05 * (math.log(R) - math.log(sol.total)) / e)


def _elasticity(trace: list[tuple[float, float]], u_star: float, R: float) -> float:
    """``d log S / d log u`` near a solved ``u_star`` (``S(u_star) = R``), from the outer iteration's pairs.

    The secant through the pairs nearest to ``u_star`` on either side of it, each at least 2e-4 away
    in ``log u`` (closer in, ``S`` is rough where pages enter the crawl); through ``(u_star, R)`` and
    the nearest pair when one side has none; NaN without such a pair.
    """
    pts = [(math.log(u) - math.log(u_star), math.log(S)) for u, S in trace
           if S > 0 and abs(math.log(u) - math.log(u_star)) >= 2e-4]
    left = [p for p in pts if p[0] < 0]
    right = [p for p in pts if p[0] > 0]
    p0 = max(left) if left else (0.0, math.log(R))
    p1 = min(right) if right else (0.0, math.log(R))
    if p0[0] == p1[0]:
        return math.nan
    return (p1[1] - p0[1]) / (p1[0] - p0[0])


def _rates_multiplier(dl: np.ndarray, mu: np.ndarray, R: float) -> float:
    from freshcore.rates import optimal_rates

    return float(optimal_rates(dl, mu, R, model="periodic", return_details=True).multiplier)


def _accuracy(pages: PageModel, thresholds: np.ndarray, frequencies: np.ndarray, counts: np.ndarray) -> float:
    """sum mu F / sum mu with F = w(iota) f(iota) (0 when not crawled, 1 when Delta = 0).

    Pages crawled at their K-th signal (``counts > 0``) have F = f (1 - rho^K)/Delta.  F is a fraction of time:
    where rounding puts it above 1 (F = 1 exactly for a page crawled at every signal, f = gamma, K = 1) it is 1.
    """
    mu = pages.importance
    total = mu.sum()
    if total == 0:
        return 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        fresh = fresh_time(thresholds, pages) * frequencies
        k = counts > 0
        dl, nu = pages.change_rate[k], pages.false_rate[k]
        fresh[k] = frequencies[k] * -np.expm1(counts[k] * np.log(nu / (dl + nu))) / dl
    np.minimum(fresh, 1.0, out=fresh)
    fresh[frequencies == 0] = 0.0
    fresh[pages.change_rate == 0] = 1.0
    return float(np.dot(mu, fresh) / total)
