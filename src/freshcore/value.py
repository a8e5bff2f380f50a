"""Crawl value with noisy change-indicating signals (001 sections 3-5, Appendix A; SPEC section 3).

A page changes at rate ``Delta`` and is requested at rate ``mu``; each change
is signalled (e.g. by a sitemap ping) with probability ``lambda`` (the
recall) and false signals arrive at rate ``nu``.  Between crawls, the state of
the page is summarised by its *effective elapsed time*
``tau_eff = tau_elap + beta * n_cis`` (``n_cis`` signals since the last
crawl), and the optimal policies crawl a page when ``tau_eff`` reaches a
threshold ``iota`` (Lemma 1 of 001).  This module gives, for every page of a
:class:`PageModel`:

* :func:`residual_exp` -- the exponential residual ``R^i(x) = P(Poisson(x) > i)``;
* :func:`crawl_interval` -- ``psi(iota)``, the expected time between crawls of
  the threshold policy, and :func:`crawl_frequency` ``f = 1/psi``;
* :func:`fresh_time` -- ``w(iota)``, the expected time per crawl interval
  during which the copy is fresh;
* :func:`crawl_value` -- ``V(iota) = mu (w - e^{-alpha iota} psi)``, the value of
  crawling a page whose effective elapsed time is ``iota``, exactly (a sum of
  non-negative terms, see ``freshcore._value``), in the paper's approx-j
  truncation, or in the Greedy (no signals) and Greedy-CIS (no false signals)
  special cases.

**Importance.** The paper writes ``V`` with ``mu~ = mu / sum(mu)``; we use ``mu``
itself, so that a sub-model (``pages[idx]``) keeps the values of its pages.
Every page is scaled alike, so no argmax and no threshold depends on the
choice; multiply by ``1 / pages.importance.sum()`` (or use
``pages.normalized_importance``) for the paper's scale, where ``V(inf) = mu~/Delta``.

The computations are compiled (``freshcore._core``, ``freshcore._value``);
this module validates, allocates and delegates.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from freshcore import _rates, _value
from freshcore._core import residual_exp_kernel
from freshcore._parallel import parallel_chunks
from freshcore._validation import check_array, check_choice, check_int, check_out, check_scalar

__all__ = [
    "PageModel",
    "residual_exp",
    "crawl_value",
    "crawl_frequency",
    "crawl_interval",
    "fresh_time",
    "ThresholdsResult",
    "optimal_thresholds",
]

_KINDS = ("exact", "approx", "greedy", "cis")
# optimal_thresholds: on 10 * _SUBSAMPLE pages or more, start from the solution of a strided subsample.
_SUBSAMPLE = 20_000


def residual_exp(i: Any, x: Any) -> Any:
    """Exponential residual ``R^i(x) = 1 - e^{-x} sum_{j<=i} x^j/j!``.

    ``R^i(x) = P(Poisson(x) > i) = scipy.special.gammainc(i + 1, x)``: the
    normalised residual of the i-th Taylor polynomial of ``e^x`` (eq. (8)
    of 001, SPEC section 3).

    Parameters
    ----------
    i : int or array_like of int
        Order(s), ``i >= 0``.  Integral floats are accepted.
    x : float or array_like of float
        Arguments, ``0 <= x <= inf``.  ``i`` and ``x`` broadcast together.

    Returns
    -------
    r : float or ndarray of float64
        A Python float when both inputs are scalars, otherwise an array of
        the broadcast shape.

    Raises
    ------
    ValueError
        If an order is negative or not an integer, or an argument is
        negative or NaN (the message names the first bad index).

    Notes
    -----
    Computed without the cancellation of the literal formula (which has
    relative error 1.2 at ``i = 1, x = 1e-8``): the series
    ``e^{-x} sum_{j>i} x^j/j!`` for ``x < i + 1`` and the complement
    otherwise, with the Poisson probability formed by Loader's saddle-point
    method.  Relative error against mpmath over ``x`` in ``[1e-300, 1e4]``
    (tests/test_residual.py): below 1e-13 for ``i <= 30`` and 2e-12 for
    ``i <= 1000`` (measured: under 2e-15 on the test grids).

    Examples
    --------
    >>> from freshcore.value import residual_exp
    >>> round(residual_exp(0, 1.0), 12)  # 1 - e^{-1}
    0.632120558829
    >>> residual_exp(1, 1e-8)  # x^2/2 - x^3/3 + ...; the literal formula is off by 120%
    4.9999999666666676e-17
    """
    caller = "residual_exp"
    scalar = np.ndim(i) == 0 and np.ndim(x) == 0
    ia = check_array(i, "i", caller, ndim=None, low=0, allow_empty=True, dtype=np.float64)
    frac = ia != np.floor(ia)
    if frac.any():
        k = int(np.flatnonzero(frac.ravel())[0])
        bad = float(ia.ravel()[k])
        if np.ndim(i) == 0:
            raise ValueError(f"The 'i' parameter of {caller} must be an integer >= 0. Got {bad!r} instead.")
        pos = k if np.ndim(i) == 1 else ", ".join(str(int(v)) for v in np.unravel_index(k, np.shape(i)))
        raise ValueError(f"The 'i' parameter of {caller} must contain integers >= 0; i[{pos}] = {bad!r}.")
    xa = check_array(x, "x", caller, ndim=None, low=0.0, allow_inf=True, allow_empty=True)
    try:
        ib, xb = np.broadcast_arrays(ia.astype(np.int_), xa)
    except ValueError:
        raise ValueError(
            f"The 'i' and 'x' parameters of {caller} must broadcast together. "
            f"Got shapes {ia.shape} and {xa.shape}."
        ) from None
    ib = np.ascontiguousarray(ib).ravel()
    xb = np.ascontiguousarray(xb).ravel()
    out = np.empty(xb.shape, dtype=np.float64)
    residual_exp_kernel(ib, xb, out)
    if scalar:
        return float(out[0])
    return out.reshape(np.broadcast_shapes(ia.shape, xa.shape))


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True, order="C")
    a.flags.writeable = False
    return a


class PageModel:
    """Per-page parameters of the signal model, validated once (SPEC section 3).

    Parameters
    ----------
    change_rate : float or array_like of shape (n_pages,)
        ``Delta >= 0``, Poisson rate of content changes.
    importance : float or array_like of shape (n_pages,)
        ``mu >= 0``, request rate (importance) of each page.
    recall : float or array_like of shape (n_pages,), default=0.0
        ``lambda`` in ``[0, 1]``: probability that a change is signalled.
    false_rate : float or array_like of shape (n_pages,), default=0.0
        ``nu >= 0``: rate of false signals.

    Scalars broadcast against the arrays.  All attributes are read-only
    float64 arrays of shape ``(n_pages,)``.

    Attributes
    ----------
    change_rate, importance, recall, false_rate : ndarray
        The parameters.
    alpha : ndarray
        ``(1 - lambda) Delta``, the rate of unsignalled changes.
    gamma : ndarray
        ``lambda Delta + nu``, the rate of signals.
    beta : ndarray
        ``-log(nu/gamma)/alpha = log1p(lambda Delta/nu)/alpha``, the
        time-equivalent of one signal (``tau_eff = tau_elap + beta n_cis``).
        Degenerate values: ``beta = 0`` when ``lambda Delta = 0`` (signals
        carry no information: the value is the Greedy one); otherwise
        ``beta = inf`` when ``nu = 0`` (a signal proves a change) or
        ``alpha = 0`` (``lambda = 1``: every change is signalled, so the page
        is fresh for sure until a signal arrives; ``V = 0`` at finite ``iota``).
    normalized_importance : ndarray
        ``mu / sum(mu)`` (the paper's ``mu~``; zeros if every ``mu`` is 0).

    Notes
    -----
    ``len(pages)`` is the number of pages; ``pages[idx]`` (an integer, slice,
    boolean mask or index array) is the sub-model of the selected pages;
    models compare equal when all their parameters do, and pickle.

    Examples
    --------
    >>> from freshcore.value import PageModel
    >>> pages = PageModel([1.0, 0.5], [2.0, 1.0], recall=0.5, false_rate=[0.1, 0.0])
    >>> len(pages), pages.gamma.tolist(), float(pages.beta[1])
    (2, [0.6, 0.25], inf)
    >>> pages[1].change_rate.tolist()
    [0.5]
    """

    __slots__ = ("_change_rate", "_importance", "_recall", "_false_rate", "_alpha", "_gamma", "_beta")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, change_rate: Any, importance: Any, recall: Any = 0.0, false_rate: Any = 0.0) -> None:
        caller = "PageModel"
        dl = check_array(change_rate, "change_rate", caller, ndim=(0, 1), low=0.0)
        mu = check_array(importance, "importance", caller, ndim=(0, 1), low=0.0)
        lam = check_array(recall, "recall", caller, ndim=(0, 1), low=0.0, high=1.0)
        nu = check_array(false_rate, "false_rate", caller, ndim=(0, 1), low=0.0)
        raw = (change_rate, importance, recall, false_rate)
        lengths = {len(a) for a, r in zip((dl, mu, lam, nu), raw) if np.ndim(r) == 1}
        if len(lengths) > 1:
            raise ValueError(
                f"The array parameters of {caller} must have one length (the number of pages). "
                f"Got lengths change_rate={np.shape(dl)}, importance={np.shape(mu)}, "
                f"recall={np.shape(lam)}, false_rate={np.shape(nu)}."
            )
        n = lengths.pop() if lengths else 1
        dl, mu, lam, nu = (np.broadcast_to(a.reshape(-1)[:1] if np.ndim(r) == 0 else a, (n,))
                           for a, r in zip((dl, mu, lam, nu), raw))
        self._change_rate = _frozen(dl)
        self._importance = _frozen(mu)
        self._recall = _frozen(lam)
        self._false_rate = _frozen(nu)
        self._derive()

    def _derive(self) -> None:
        dl, lam, nu = self._change_rate, self._recall, self._false_rate
        alpha = (1.0 - lam) * dl
        lam_dl = lam * dl
        gamma = lam_dl + nu
        # beta = log1p(lambda Delta / nu) / alpha with its degenerate limits, in compiled code
        # shared with the scheduler (which recomputes it rather than store it): the same bits
        beta = np.empty(len(dl))
        _value.beta_kernel(*(np.ascontiguousarray(a, dtype=np.float64) for a in (dl, lam, nu)), beta)
        self._alpha = _frozen(alpha)
        self._gamma = _frozen(gamma)
        self._beta = _frozen(beta)

    @classmethod
    def _from_valid(cls, dl, mu, lam, nu) -> PageModel:
        self = cls.__new__(cls)
        self._change_rate, self._importance = _frozen(dl), _frozen(mu)
        self._recall, self._false_rate = _frozen(lam), _frozen(nu)
        self._derive()
        return self

    change_rate = property(lambda self: self._change_rate, doc="Delta, change rates.")
    importance = property(lambda self: self._importance, doc="mu, request rates.")
    recall = property(lambda self: self._recall, doc="lambda, signal recall.")
    false_rate = property(lambda self: self._false_rate, doc="nu, false-signal rates.")
    alpha = property(lambda self: self._alpha, doc="(1 - lambda) Delta.")
    gamma = property(lambda self: self._gamma, doc="lambda Delta + nu.")
    beta = property(lambda self: self._beta, doc="Time-equivalent of one signal.")

    @property
    def normalized_importance(self) -> np.ndarray:
        """``mu / sum(mu)`` (zeros when every ``mu`` is 0)."""
        total = self._importance.sum()
        out = self._importance / total if total > 0 else np.zeros_like(self._importance)
        out.flags.writeable = False
        return out

    def __len__(self) -> int:
        return len(self._change_rate)

    def __getitem__(self, idx: Any) -> PageModel:
        if isinstance(idx, (numbers.Integral, np.integer)) and not isinstance(idx, (bool, np.bool_)):
            idx = [operator_index(idx, len(self))]
        arrays = [np.atleast_1d(a[idx]) for a in (self._change_rate, self._importance, self._recall, self._false_rate)]
        return PageModel._from_valid(*arrays)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PageModel):
            return NotImplemented
        return all(
            np.array_equal(a, b)
            for a, b in zip(
                (self._change_rate, self._importance, self._recall, self._false_rate),
                (other._change_rate, other._importance, other._recall, other._false_rate),
            )
        )

    def __reduce__(self):
        return (PageModel, (self._change_rate, self._importance, self._recall, self._false_rate))

    def __repr__(self) -> str:
        return f"PageModel(n_pages={len(self)})"


def operator_index(i: Any, n: int) -> int:
    """Normalise an integer page index (negative counts from the end); IndexError when out of range."""
    k = int(i)
    if not -n <= k < n:
        raise IndexError(f"page index {k} is out of range for {n} pages")
    return k % n


def _check_pages(pages: Any, caller: str) -> PageModel:
    if not isinstance(pages, PageModel):
        raise TypeError(f"The 'pages' parameter of {caller} must be a PageModel. Got {type(pages).__name__} instead.")
    return pages


def _times(x: Any, name: str, n: int, caller: str) -> np.ndarray:
    arr = check_array(x, name, caller, ndim=(0, 1), low=0.0, allow_inf=True)
    if np.ndim(x) == 0:
        return np.full(n, float(arr.reshape(-1)[0]))
    if len(arr) != n:
        raise ValueError(
            f"The {name!r} parameter of {caller} must be a number or an array of length {n} "
            f"(the number of pages). Got length {len(arr)} instead."
        )
    return arr


def _output(out: Any, n: int, caller: str) -> np.ndarray:
    return np.empty(n, dtype=np.float64) if out is None else check_out(out, (n,), caller)


def crawl_value(
    tau_eff: Any, pages: PageModel, kind: str = "exact", terms: int | None = None, *, out: np.ndarray | None = None
) -> np.ndarray:
    """Value ``V(tau_eff)`` of crawling each page now (001 Theorem 2 and A.1, SPEC section 3).

    Parameters
    ----------
    tau_eff : float or array_like of shape (n_pages,)
        Effective elapsed time ``tau_elap + beta n_cis`` of each page
        (``>= 0``; ``inf`` allowed).
    pages : PageModel
        The pages.
    kind : {"exact", "approx", "greedy", "cis"}, default="exact"
        ``"exact"``: ``V = mu sum_{n <= floor(iota/beta)} D_n`` summed until
        the remaining terms are provably below 1e-16 of the sum (tighter
        than SPEC's 1e-15 mu/Delta); ``"approx"``: the first ``terms``
        terms only (001 A.1, approx-j); ``"greedy"``: ignore signals,
        ``mu R^1(Delta iota)/Delta``; ``"cis"``: assume no false signals
        (``nu = 0``, Greedy-CIS), ``mu (R^0(Delta iota)/Delta -
        R^0(lambda Delta iota)/(lambda Delta e^{alpha iota}))``.
    terms : int, optional
        Number of terms ``j >= 1`` for ``kind="approx"`` (required there,
        not allowed otherwise).
    out : ndarray of shape (n_pages,), optional
        Receives the result.

    Returns
    -------
    value : ndarray of shape (n_pages,)
        Non-negative, non-decreasing in ``tau_eff``; ``V(inf) = mu/Delta``
        (``mu (1 - rho^j)/Delta`` for approx-j, ``rho = nu/(Delta + nu)``).
        Pages with ``Delta = 0`` have value 0.  ``mu`` is not normalised
        (see the module notes).

    Notes
    -----
    ``V(iota) = mu (w(iota) - e^{-alpha iota} psi(iota))`` (SPEC section 3,
    001 eq. (6)-(8)).  The literal difference loses every digit at small
    ``iota``; each series term is instead evaluated as a non-negative
    quantity (``freshcore._value``), so the result is accurate to ~1e-14
    relative against a 50-digit mpmath evaluation (tests/test_value.py).
    Where ``tau_eff >= 4 beta`` the same V usually comes in closed form
    from the residues of its Laplace transform, ``alpha / (s (s + alpha)
    (s + Delta + nu - nu e^{-s beta}))``: the two real poles give
    ``C + (R^1(alpha iota)/alpha + kappa (1 - e^{-alpha iota}))/(1 + gamma beta)``
    and the others sum to at most ``0.06785 alpha beta^2 (nu beta/R)^{iota/beta}``
    (``R >= pi``, see ``freshcore._value``), which must be below 1e-16 of V
    for that form to be used.

    Pages with ``recall = 1`` (``alpha = 0``, ``beta = inf``) are fresh for
    certain until a signal arrives: their value is 0 at every finite
    ``tau_eff`` and jumps to ``V(inf) = mu/Delta`` only through the
    ``beta n_cis`` term, at the first counted signal (``tau_eff = inf``).
    A threshold policy for them counts signals instead of time:
    :func:`optimal_thresholds` returns the number of signals to wait for as
    ``signal_counts``, and :class:`freshcore.schedule.Scheduler` crawls such
    a page only once it has a counted signal.

    Examples
    --------
    >>> from freshcore.value import PageModel, crawl_value
    >>> pages = PageModel([1.0, 1.0], [1.0, 1.0], recall=[0.0, 0.8], false_rate=[0.0, 0.2])
    >>> crawl_value(1.0, pages).round(6).tolist()
    [0.264241, 0.064802]
    >>> crawl_value(np.inf, pages).tolist()
    [1.0, 1.0]
    """
    caller = "crawl_value"
    pages = _check_pages(pages, caller)
    check_choice(kind, "kind", caller, _KINDS)
    if kind == "approx":
        if terms is None:
            raise ValueError(f"The 'terms' parameter of {caller} is required with kind='approx'.")
        j = check_int(terms, "terms", caller, low=1)
    else:
        if terms is not None:
            raise ValueError(f"The 'terms' parameter of {caller} is only used with kind='approx'. Got {terms!r}.")
        j = -1
    n = len(pages)
    tau = _times(tau_eff, "tau_eff", n, caller)
    res = _output(out, n, caller)
    k = _KINDS.index(kind)
    par = (tau, pages.change_rate, pages.recall, pages.false_rate, pages.importance, pages.alpha, pages.gamma,
           pages.beta)
    # pages are independent: threads over contiguous chunks give the same bits as one pass
    parallel_chunks(n, lambda p, q: _value.value_kernel(*(x[p:q] for x in par), k, j, res[p:q]), heavy=k < 2)
    return res


def crawl_interval(threshold: Any, pages: PageModel, *, out: np.ndarray | None = None) -> np.ndarray:
    """Expected time ``psi(iota)`` between crawls when each page is crawled once ``tau_eff >= iota``.

    Parameters
    ----------
    threshold : float or array_like of shape (n_pages,)
        Thresholds ``iota >= 0`` (``inf``: never crawl, ``psi = inf``).
    pages : PageModel
    out : ndarray of shape (n_pages,), optional

    Returns
    -------
    psi : ndarray of shape (n_pages,)

    Notes
    -----
    ``psi(iota) = sum_{i=0}^{floor(iota/beta)} R^i(gamma (iota - i beta))/gamma``
    (001 Lemma 4, SPEC section 3); ``psi = iota`` when signals carry no
    information (``beta = 0``) and ``R^0(gamma iota)/gamma`` when
    ``beta = inf`` (crawl at ``iota`` or at the first signal).

    Examples
    --------
    >>> from freshcore.value import PageModel, crawl_interval
    >>> pages = PageModel([1.0, 1.0], [1.0, 1.0], recall=[0.0, 1.0])
    >>> crawl_interval(2.0, pages).round(6).tolist()  # [2, 1 - e^{-2}]
    [2.0, 0.864665]
    """
    caller = "crawl_interval"
    pages = _check_pages(pages, caller)
    n = len(pages)
    tau = _times(threshold, "threshold", n, caller)
    res = _output(out, n, caller)
    _value.interval_kernel(tau, pages.change_rate, pages.false_rate, pages.gamma, pages.beta, res)
    return res


def crawl_frequency(threshold: Any, pages: PageModel, *, out: np.ndarray | None = None) -> np.ndarray:
    """Crawl frequency ``f(iota) = 1/psi(iota)`` of the threshold policy (001 eq. (7)).

    Parameters
    ----------
    threshold : float or array_like of shape (n_pages,)
        Thresholds ``iota >= 0``; ``inf`` gives 0, ``0`` gives ``inf``.
    pages : PageModel
    out : ndarray of shape (n_pages,), optional

    Returns
    -------
    f : ndarray of shape (n_pages,)
        Non-increasing in ``iota``.

    Examples
    --------
    >>> from freshcore.value import PageModel, crawl_frequency
    >>> crawl_frequency([0.5, np.inf], PageModel([1.0, 1.0], 1.0)).tolist()
    [2.0, 0.0]
    """
    caller = "crawl_frequency"
    pages = _check_pages(pages, caller)
    n = len(pages)
    tau = _times(threshold, "threshold", n, caller)
    res = _output(out, n, caller)
    _value.interval_kernel(tau, pages.change_rate, pages.false_rate, pages.gamma, pages.beta, res)
    with np.errstate(divide="ignore", over="ignore"):
        np.divide(1.0, res, out=res)
    return res


def fresh_time(threshold: Any, pages: PageModel, *, out: np.ndarray | None = None) -> np.ndarray:
    """Expected fresh time ``w(iota)`` per crawl interval of the threshold policy.

    Parameters
    ----------
    threshold : float or array_like of shape (n_pages,)
        Thresholds ``iota >= 0`` (``inf``: ``w = 1/Delta``, the expected time
        to the first change).
    pages : PageModel
    out : ndarray of shape (n_pages,), optional

    Returns
    -------
    w : ndarray of shape (n_pages,)

    Notes
    -----
    ``w(iota) = sum_{i=0}^{floor(iota/beta)} nu^i/(Delta+nu)^{i+1}
    R^i((Delta+nu)(iota - i beta))`` (001 Lemma 4, SPEC section 3).

    Examples
    --------
    >>> from freshcore.value import PageModel, fresh_time
    >>> fresh_time(1.0, PageModel(1.0, 1.0)).round(6).tolist()  # 1 - e^{-1}
    [0.632121]
    """
    caller = "fresh_time"
    pages = _check_pages(pages, caller)
    n = len(pages)
    tau = _times(threshold, "threshold", n, caller)
    res = _output(out, n, caller)
    par = (tau, pages.change_rate, pages.false_rate, pages.gamma, pages.beta)
    # on threads like crawl_value (optimal_thresholds' accuracy takes it over every page)
    parallel_chunks(n, lambda p, q: _value.fresh_kernel(*(x[p:q] for x in par), res[p:q]), heavy=True)
    return res


@dataclass(frozen=True)
class ThresholdsResult:
    """Solution of :func:`optimal_thresholds`.

    Attributes
    ----------
    thresholds : ndarray of shape (n_pages,)
        ``iota_i``: crawl page i when its ``tau_eff`` reaches it (``inf``:
        never crawl).
    frequencies : ndarray of shape (n_pages,)
        Crawl frequencies ``f(iota_i)``; they sum to the bandwidth.
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


def optimal_thresholds(pages: PageModel, bandwidth: float) -> ThresholdsResult:
    """Optimal continuous crawl policy with change signals (Theorem 2 of 001, SPEC section 3).

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
    >>> from freshcore.value import PageModel, optimal_thresholds
    >>> pages = PageModel([0.5, 1.0, 2.0], [1.0, 1.0, 0.5], recall=[0.0, 0.6, 0.9], false_rate=0.2)
    >>> res = optimal_thresholds(pages, 1.0)
    >>> round(float(res.frequencies.sum()), 12), bool(0.0 < res.accuracy < 1.0)
    (1.0, True)
    """
    caller = "optimal_thresholds"
    pages = _check_pages(pages, caller)
    R = check_scalar(bandwidth, "bandwidth", caller, low=0.0, low_inclusive=False)
    return _thresholds(pages, R)[0]


def _thresholds(pages: PageModel, R: float) -> tuple[ThresholdsResult, list[tuple[float, float]]]:
    """:func:`optimal_thresholds` on validated input; also the outer iteration's ``(u, S(u))`` pairs."""
    n = len(pages)
    dl, mu, beta = pages.change_rate, pages.importance, pages.beta
    active = (dl > 0) & (mu > 0)
    gi = np.flatnonzero(active & (beta == 0))
    step = active & (pages.alpha == 0) & (beta > 0)
    si = np.flatnonzero(active & (beta > 0) & ~step)
    ki = np.flatnonzero(step)
    k_par = [np.ascontiguousarray(a[ki]) for a in (mu, dl, pages.false_rate)]
    g_b = np.sqrt(dl[gi] / mu[gi])
    g_dl = np.ascontiguousarray(dl[gi])
    g_lo, g_hi = np.zeros(len(gi)), np.full(len(gi), np.inf)
    s_par = [np.ascontiguousarray(a[si]) for a in (dl, pages.alpha, pages.gamma, pages.false_rate, beta, mu)]
    g_ent, s_ent = mu[gi] / dl[gi], s_par[5] / s_par[0]  # multipliers at which the pages enter
    s_kappa = s_par[1] + s_par[2]  # alpha + gamma; + 1/iota below (a bound on |V''/V'|, see _threshold_hints)
    s_gb, s_glo, s_ghi = np.sqrt(s_par[0] / s_par[5]), np.zeros(len(si)), np.full(len(si), np.inf)

    thresholds = np.full(n, np.inf)
    frequencies = np.zeros(n)
    counts = np.zeros(n, dtype=np.int_)
    if len(gi) + len(si) + len(ki) == 0:
        acc = _accuracy(pages, thresholds, frequencies, counts)
        return ThresholdsResult(thresholds, frequencies, 0.0, acc, counts), []

    def evaluate(u):
        lam = 1.0 / (u * u)
        fg = np.empty(len(gi))
        total, dsdu = _rates.periodic_eval(g_b, g_dl, g_lo, g_hi, u, fg) if len(gi) else (0.0, 0.0)
        it, fs, slope = np.full(len(si), np.inf), np.zeros(len(si)), np.zeros(len(si))
        curv, curv3 = np.zeros(len(si)), np.zeros(len(si))
        # pages ordered so that none past n_live enters above lam_cut (see below): only [:m] can be crawled
        m = n_live if lam >= lam_cut else len(si)
        if m:
            P = [x[:m] for x in s_par]
            known = [{k: (v[:m] if k in ("it", "d", "fs", "c2", "c3") else v) for k, v in x.items()}
                     for x in (a, b) if x is not None]
            interp = {"alpha": P[1], "beta": P[4]}
            start, lo, hi, base = _threshold_hints(lam, known, s_kappa[:m], interp)
            cold = ~np.isfinite(start)
            if cold.any():
                # no solution nearby: start from the signal-blind (periodic) threshold at this multiplier, or
                # from (K - 1/2) beta where that is larger, K the signal count at which the page would be
                # crawled were every change signalled (recall 1): with a large beta (recall near 1) the
                # threshold lies near K beta, far above the periodic one (4.0 -> 3.1 V evaluations a page)
                ci = np.flatnonzero(cold)
                fgs, kc, fk = np.empty(len(ci)), np.empty(len(ci), dtype=np.int_), np.empty(len(ci))
                _rates.periodic_eval(*(np.ascontiguousarray(x[ci]) for x in (s_gb, s_par[0], s_glo, s_ghi)), u, fgs)
                _value.signal_count_kernel(lam, *(np.ascontiguousarray(x[ci]) for x in (s_par[5], s_par[0], s_par[3])),
                                           kc, fk)
                with np.errstate(divide="ignore", invalid="ignore"):
                    by_count = np.where((kc > 0) & np.isfinite(s_par[4][ci]), (kc - 0.5) * s_par[4][ci], 0.0)
                    start[ci] = np.maximum(1.0 / fgs, by_count)
            ex = interp.get("idx")
            if ex is not None and len(ex):
                # thresholds interpolated exactly between the bracket's solutions: psi there too (no series);
                # the kernel skips those pages (mu = 0 there: it returns at once) and the rest is solved
                P[5] = P[5].copy()
                P[5][ex] = 0.0
            im, fm, sm, cm, c3m = it[:m], fs[:m], slope[:m], curv[:m], curv3[:m]
            parallel_chunks(m, lambda p, q: _value.threshold_kernel(
                lam, *(x[p:q] for x in P), start[p:q], lo[p:q], hi[p:q], base[p:q], im[p:q], fm[p:q],
                sm[p:q], cm[p:q], c3m[p:q]),
                heavy=True)
            if ex is not None and len(ex):
                x = start[ex]
                it[ex], fs[ex], curv[ex], curv3[ex] = x, 1.0 / interp["psi"], interp["c2"], interp["c3"]
                slope[ex] = s_par[5][ex] * s_par[1][ex] * np.exp(-s_par[1][ex] * x) * interp["psi"]
            total += float(fm.sum())
            # dS/du of these pages: df/dLambda = -(psi'/psi) f / V', psi'/psi = V''/V' + alpha, dLambda/du = -2/u^3
            on = (fm > 0) & (sm > 0)
            dsdu += 2.0 / u ** 3 * float(np.sum(fm[on] * (cm[on] + s_par[1][:m][on]) / sm[on]))
        kc = np.empty(len(ki), dtype=np.int_)
        fk = np.empty(len(ki))
        if len(ki):
            total += _value.signal_count_kernel(lam, *k_par, kc, fk)
        return {"u": u, "S": total, "dSdu": dsdu, "fg": fg, "it": it, "fs": fs, "d": slope, "c2": curv, "c3": curv3,
                "kc": kc, "fk": fk}

    n_live, lam_cut = len(si), math.inf  # see the ordering below
    u0 = float(np.min(np.sqrt(dl[active] / mu[active])))  # Lambda = max mu/Delta: nothing is crawled
    infs = np.full(len(si), np.inf)
    a = {"u": u0, "S": 0.0, "dSdu": 0.0, "fg": np.zeros(len(gi)), "it": infs.copy(), "fs": np.zeros(len(si)),
         "d": np.zeros(len(si)), "c2": np.zeros(len(si)), "c3": np.zeros(len(si)),
         "kc": np.zeros(len(ki), dtype=np.int_),
         "fk": np.zeros(len(ki))}
    b = None
    final = None
    hist = []
    factor = 2.0
    if n >= 10 * _SUBSAMPLE:
        # start from the multiplier of an evenly strided subsample (budget scaled to it)
        sub = slice(None, None, n // _SUBSAMPLE)
        part = pages[sub]
        r_sub = R * len(part) / n
        res_sub, trace_sub = _thresholds(part, r_sub)
        guess = res_sub.multiplier
        first_step = 1.001  # the subsample's multiplier is within ~0.2% of the full one (10^6 check pages)
        # d log S / d log u of the subsample near its solution, which the full set shares (S_full ~ S_sub n/m)
        elasticity = _elasticity(trace_sub, guess ** -0.5, r_sub)
    else:
        # start from the signal-blind periodic optimum (a closed form per page, compiled)
        guess = _rates_multiplier(dl[active], mu[active], R)
        first_step = 1.02
        elasticity = math.nan
    if guess > 0 and len(si):
        # Order the signal pages so that those entering the crawl above lam_cut = 0.9 guess come first (in their
        # own order: threads get even shares): at a multiplier above lam_cut only they can be crawled, and the
        # solves, hints and sums skip the rest (half of SPEC's check pages)
        lam_cut = 0.9 * guess
        first = s_ent > lam_cut
        order = np.concatenate([np.flatnonzero(first), np.flatnonzero(~first)])
        n_live = int(first.sum())
        si = si[order]
        s_par = [np.ascontiguousarray(x[order]) for x in s_par]
        s_ent, s_kappa, s_gb = s_ent[order], s_kappa[order], s_gb[order]
    if guess > 0 and 1.0 / math.sqrt(guess) > u0:
        trial = evaluate(1.0 / math.sqrt(guess))
        hist.append(trial)
        if abs(trial["S"] - R) <= 1e-14 * R:
            final = trial
        elif trial["S"] > R:
            b = trial
            factor = first_step
            while True:  # step down to a solution under the budget
                u = _past(b, R, _slope(hist, elasticity))
                if not u0 < u < b["u"]:
                    u = b["u"] / factor
                    factor *= factor
                if u <= u0:
                    break
                trial = evaluate(u)
                hist.append(trial)
                if trial["S"] > R:
                    b = trial
                else:
                    a = trial
                    break
        else:
            a = trial
            factor = first_step
    while b is None and final is None:
        u = _past(a, R, _slope(hist, elasticity)) if a["S"] > 0 else math.nan
        if not a["u"] < u < 2.0 * a["u"]:
            u = a["u"] * factor
            factor = factor * factor if factor < 2.0 else 2.0
        trial = evaluate(u)
        hist.append(trial)
        if trial["S"] > R:
            b = trial
        else:
            a = trial
    widths = []
    extra = 0
    for step in range(400):
        if final is not None:
            break
        lam_a, lam_b = 1.0 / a["u"] ** 2, 1.0 / b["u"] ** 2
        if (lam_a - lam_b) * (b["S"] - a["S"]) <= 1e-15 * lam_a * R:
            # time-share, unless no page's frequency jumps in the bracket (the same pages crawled, the same
            # signal counts): S is continuous there, and a step or two more usually meets |S - R| <= 1e-14 R,
            # which gives every page V(iota) = Lambda (a shared page's threshold is only near it), for about
            # the cost of the time-sharing (psi^{-1} of the mixed pages and a second accuracy)
            if extra >= 2 or _jumps(a, b):
                break
            extra += 1
        widths.append(b["u"] - a["u"])
        # inverse quadratic interpolation of log u against log S through the last three solutions, else the
        # secant through the last two
        u = _inverse_quadratic(hist[-3:], R)
        # close to the root, a Newton step with the exact slope dS/du (a sum over the pages' df/du; only
        # within ~1e-6 of u is S smooth enough for it, farther out pages entering the crawl dominate)
        last = hist[-1]
        if last["dSdu"] > 0:
            un = last["u"] + (R - last["S"]) / last["dSdu"]
            if a["u"] < un < b["u"] and abs(un - last["u"]) <= 1e-6 * last["u"]:
                u = un
        pts = [h for h in hist[-2:] if h["S"] > 0.0]
        if not a["u"] < u < b["u"] and len(pts) == 2 and pts[0]["S"] != pts[1]["S"] and pts[0]["u"] != pts[1]["u"]:
            p0, p1 = pts
            t = (math.log(R) - math.log(p1["S"])) / (math.log(p1["S"]) - math.log(p0["S"]))
            u = math.exp(math.log(p1["u"]) + t * (math.log(p1["u"]) - math.log(p0["u"])))
        if not a["u"] < u < b["u"] or (len(widths) >= 4 and widths[-1] > 0.5 * widths[-4]):
            # stalled: S is steep at a page's entry (frequency ~ 1/log(1/(1 - Lambda Delta/mu)), a jump
            # in floating point); try just beside the entry point of a page entering in the bracket
            u = _entry_split(a, b, u if a["u"] < u < b["u"] else math.sqrt(a["u"] * b["u"]), g_ent, s_ent)
            if not a["u"] < u < b["u"]:
                u = math.sqrt(a["u"] * b["u"])
            if not a["u"] < u < b["u"]:
                u = 0.5 * (a["u"] + b["u"])
                if not a["u"] < u < b["u"]:
                    break
            widths.clear()
        trial = evaluate(u)
        hist.append(trial)
        if abs(trial["S"] - R) <= 1e-14 * R:
            final = trial
        elif trial["S"] > R:
            b = trial
        else:
            a = trial

    trace = [(h["u"], h["S"]) for h in hist]

    def unpack(sol):
        f, io, kc = np.zeros(n), np.full(n, np.inf), np.zeros(n, dtype=np.int_)
        f[gi], f[si], f[ki] = sol["fg"], sol["fs"], sol["fk"]
        with np.errstate(divide="ignore"):
            io[gi] = 1.0 / sol["fg"]
        io[si] = sol["it"]
        kc[ki] = sol["kc"]
        return f, io, kc

    if final is not None:
        frequencies, thresholds, counts = unpack(final)
        multiplier = 1.0 / final["u"] ** 2
        acc = _accuracy(pages, thresholds, frequencies, counts)
        return ThresholdsResult(thresholds, frequencies, multiplier, acc, counts), trace

    # time-share between the bracketing solutions a (S_a <= R) and b (S_b > R)
    theta = (R - a["S"]) / (b["S"] - a["S"])
    fa, ia, ka = unpack(a)
    fb, ib, kb = unpack(b)
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
        par = (1.0 / frequencies[ms], *(np.ascontiguousarray(x[ms]) for x in (dl, pages.gamma, pages.false_rate, beta)),
               np.minimum(ia[ms], ib[ms]), np.maximum(ia[ms], ib[ms]))
        parallel_chunks(len(ms), lambda p, q: _value.interval_inverse_kernel(*(x[p:q] for x in par), inv[p:q]),
                        heavy=True)
        thresholds[ms] = inv
    counts = np.where(theta < 0.5, ka, kb)
    acc = (1.0 - theta) * _accuracy(pages, ia, fa, ka) + theta * _accuracy(pages, ib, fb, kb)
    # the frequencies of pages that do not jump are (to second order in the bracket) those at u_theta
    multiplier = 1.0 / (a["u"] + theta * (b["u"] - a["u"])) ** 2
    return ThresholdsResult(thresholds, frequencies, multiplier, acc, counts), trace


def _threshold_hints(
    lam: float, known: list, kappa: np.ndarray, interp: dict | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Newton start, safeguarding bracket and the start's base solution per page, from other multipliers.

    ``iota(Lambda)`` is non-decreasing (``V`` is), so a solution at a larger
    multiplier bounds the thresholds from above and one at a smaller multiplier
    from below; the start is the prediction ``iota + h - (V''/V') h^2/2``,
    ``h = (lam - Lambda)/V'(iota)``, from the solution with the nearest
    multiplier (NaN, i.e. the kernel's default, where that page was not
    crawled), and ``base`` that solution (second order: the kernel takes the
    start as exact when ``kappa |h| <= 1e-6``; without the solution's
    curvature ``"c2"`` the prediction is first order and ``base`` is NaN).
    With ``V^(3)/V'`` (``"c3"``) and ``interp`` (holding ``"beta"``) the
    prediction is third order, and exact (``base = start``) where ``kappa
    |h| <= 5e-5`` and no multiple of ``beta`` (a kink of ``psi''`` or a
    higher derivative) lies between the two thresholds.

    Between two solutions ``(Lambda_b, iota_b)``, ``(Lambda_a,
    iota_a)`` with their slopes ``1/V'``, the cubic Hermite interpolant of
    ``iota(Lambda)`` errs by at most ``~(kappa |iota_a - iota_b|)^3 |iota_a -
    iota_b| / 384`` (``kappa = 1/iota + alpha + gamma`` bounds ``|V''/V'|``
    and the higher derivatives' scale); where ``kappa |iota_a - iota_b| <=
    1e-4`` (and, with ``interp``, no multiple of ``beta`` lies between them)
    that is below 1e-18 of ``iota``, the interpolant is the solution, and
    ``base = start`` tells the kernel so; elsewhere it is the Newton start,
    unless the third-order prediction is exact there.

    ``interp`` (a dict holding the pages' ``"alpha"`` and ``"beta"``), if given, receives
    for those pages (``"idx"``) ``psi`` at the interpolated threshold, by
    the cubic Hermite interpolant in ``iota`` through both solutions' ``psi``
    and ``psi' = (V''/V' + alpha) psi`` (error ``~(kappa |iota_a -
    iota_b|)^4 psi / 384 <= 3e-19 psi``, no series evaluated), and ``V''/V'``
    there (``"c2"``, and ``V^(3)/V'`` as ``"c3"``, linear in ``iota``: off by
    ``~1e-4`` of themselves at most, as the kernel's predictions allow).
    """
    n = len(kappa)
    lo, hi, start, base = np.zeros(n), np.full(n, np.inf), np.full(n, np.nan), np.full(n, np.nan)
    nearest = above = below = None
    for sol in known:
        lam_s = 1.0 / sol["u"] ** 2
        if lam_s >= lam:
            hi = np.minimum(hi, sol["it"])
            above = sol
        else:
            lo = np.maximum(lo, sol["it"])
            below = sol
        if nearest is None or abs(math.log(lam_s / lam)) < abs(math.log(1.0 / (nearest["u"] ** 2 * lam))):
            nearest = sol
    if nearest is None:
        return start, lo, hi, base
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        h = (lam - 1.0 / nearest["u"] ** 2) / nearest["d"]
        if nearest.get("c3") is not None and interp is not None:
            # third order (the third derivative of iota(Lambda) is (3 V''^2 - V' V^(3))/V'^5): its error,
            # ~2 (kappa h)^3 h, is below 2e-17 of iota where kappa |h| <= 5e-5 and no multiple of beta (a kink
            # of psi'' or a higher derivative) lies in between: there start is the solution (base = start);
            # elsewhere the kernel's second-order test applies
            c2, c3 = nearest["c2"], nearest["c3"]
            start = nearest["it"] + h * (1.0 - 0.5 * c2 * h + (3.0 * c2 * c2 - c3) * h * h / 6.0)
            base = nearest["it"].copy()
            third = ((kappa + 1.0 / nearest["it"]) * np.abs(h) <= 5e-5) \
                & (np.floor(nearest["it"] / interp["beta"]) == np.floor(start / interp["beta"]))
            base[third] = start[third]
        elif nearest.get("c2") is not None:
            # second order (iota'' = -V''/V'^3): exact when kappa |h| <= 1e-6 (the kernel's HALLEY_EXACT)
            start = nearest["it"] + h * (1.0 - 0.5 * nearest["c2"] * h)
            base = nearest["it"].copy()
            third = np.zeros(n, dtype=bool)
        else:
            start = nearest["it"] + h  # first order only: never taken as exact
            base = np.full(n, np.nan)
            third = np.zeros(n, dtype=bool)
        if above is not None and below is not None:
            lam_a, lam_b = 1.0 / above["u"] ** 2, 1.0 / below["u"] ** 2
            ya, yb = above["it"], below["it"]
            both = (above["d"] > 0) & (below["d"] > 0) & np.isfinite(ya)
            if both.any():
                width, t = lam_a - lam_b, (lam - lam_b) / (lam_a - lam_b)
                ya, yb = ya[both], yb[both]
                ma, mb = width / above["d"][both], width / below["d"][both]
                herm = ((2 * t - 3) * t * t + 1) * yb + ((t - 2) * t + 1) * t * mb + (3 - 2 * t) * t * t * ya \
                    + (t - 1) * t * t * ma
                exact = (kappa[both] + 1.0 / yb) * (ya - yb) <= 1e-4
                if interp is not None:
                    # no kink of psi'' (a multiple of beta) between the two: the error bound needs 4 derivatives
                    bb = interp.get("beta", np.full(n, np.inf))[both]
                    exact &= np.floor(ya / bb) == np.floor(yb / bb)
                # an exact interpolant first (no series for psi then), else an exact third-order prediction, else
                # the interpolant as the start (better than either one-sided prediction)
                bidx = np.flatnonzero(both)
                upd = exact | ~third[bidx]
                start[bidx[upd]] = herm[upd]
                base[bidx[upd]] = np.where(exact[upd], herm[upd], np.nan)
                if interp is not None:
                    idx = np.flatnonzero(both)[exact]
                    ya, yb, x = ya[exact], yb[exact], herm[exact]
                    al = interp["alpha"][idx]
                    pa, pb = 1.0 / above["fs"][idx], 1.0 / below["fs"][idx]
                    ca, cb = above["c2"][idx], below["c2"][idx]
                    w = ya - yb
                    s = np.where(w > 0, (x - yb) / np.where(w > 0, w, 1.0), 0.0)
                    psi = (((1 + 2 * s) * (1 - s) ** 2) * pb + (s * (1 - s) ** 2 * w) * ((cb + al) * pb)
                           + (s * s * (3 - 2 * s)) * pa + (s * s * (s - 1) * w) * ((ca + al) * pa))
                    c3a = above["c3"][idx] if above.get("c3") is not None else np.zeros(len(idx))
                    c3b = below["c3"][idx] if below.get("c3") is not None else np.zeros(len(idx))
                    interp.update(idx=idx, psi=psi, c2=(1 - s) * cb + s * ca, c3=(1 - s) * c3b + s * c3a)
    return start, lo, hi, base


def _entry_split(a: dict, b: dict, u: float, g_ent: np.ndarray, s_ent: np.ndarray) -> float:
    """Bisection in ``log(c - Lambda)`` around the entry multiplier ``c = mu/Delta`` of a page.

    A page's frequency falls to 0 like ``1/log(1/(1 - Lambda/c))`` as ``Lambda``
    rises to its entry ``c``, so near ``c`` the total frequency is steep in
    ``Lambda`` but smooth in ``log(c - Lambda)``.  Among at most 16 pages
    crawled at b but not at a whose entry lies in the bracket, the one nearest
    to ``u`` is taken and the geometric mean of the bracket's distances to
    ``c`` (the one at a floored at ``1e-15 c``) is returned as a ``u``; NaN
    when there is no such page.
    """
    lam_a, lam_b = 1.0 / a["u"] ** 2, 1.0 / b["u"] ** 2
    ent = np.concatenate([g_ent[(a["fg"] == 0) & (b["fg"] > 0)], s_ent[(a["fs"] == 0) & (b["fs"] > 0)]])
    ent = ent[(ent > lam_b) & (ent < lam_a)]
    if not 1 <= len(ent) <= 16:
        return math.nan
    c = float(ent[np.argmin(np.abs(ent - 1.0 / (u * u)))])
    eps_b, eps_a = c - lam_b, max(c - lam_a, 1e-15 * c)
    if not 0.0 < eps_a < eps_b:
        return math.nan
    return 1.0 / math.sqrt(c - math.sqrt(eps_a * eps_b))


def _jumps(a: dict, b: dict) -> bool:
    """Whether some page's frequency jumps between two solutions (crawled at one only, or another signal count)."""
    return bool(np.any((a["fs"] > 0) != (b["fs"] > 0)) or np.any((a["fg"] > 0) != (b["fg"] > 0))
                or np.any(a["kc"] != b["kc"]))


def _inverse_quadratic(pts: list, R: float) -> float:
    """``u`` where the quadratic through ``(log S, log u)`` of three solutions takes ``log R`` (NaN if degenerate)."""
    if len(pts) < 3 or not all(p["S"] > 0 for p in pts):
        return math.nan
    (x0, y0), (x1, y1), (x2, y2) = ((math.log(p["S"]), math.log(p["u"])) for p in pts)
    if x0 == x1 or x1 == x2 or x0 == x2:
        return math.nan
    x = math.log(R)
    y = (y0 * (x - x1) * (x - x2) / ((x0 - x1) * (x0 - x2)) + y1 * (x - x0) * (x - x2) / ((x1 - x0) * (x1 - x2))
         + y2 * (x - x0) * (x - x1) / ((x2 - x0) * (x2 - x1)))
    return math.exp(y)


def _slope(hist: list, elasticity: float) -> float:
    """``d log S / d log u`` for the next bracketing step: the secant through the last two solutions, else
    the subsample's elasticity (NaN if neither)."""
    pts = [h for h in hist[-2:] if h["S"] > 0]
    if len(pts) == 2 and pts[0]["u"] != pts[1]["u"] and pts[0]["S"] != pts[1]["S"]:
        e = (math.log(pts[1]["S"]) - math.log(pts[0]["S"])) / (math.log(pts[1]["u"]) - math.log(pts[0]["u"]))
        if e > 0:
            return e
    return elasticity


def _past(sol: dict, R: float, e: float) -> float:
    """The ``u`` where ``log S`` with slope ``e`` against ``log u`` passes ``R`` by 5% of the way (to bracket
    ``R`` in one step when ``e`` is a few percent off); NaN without a usable slope."""
    if not (e > 0 and sol["S"] > 0):
        return math.nan
    return sol["u"] * math.exp(1.05 * (math.log(R) - math.log(sol["S"])) / e)


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

    return optimal_rates(dl, mu, R, model="periodic", return_details=True).multiplier


def _accuracy(pages: PageModel, thresholds: np.ndarray, frequencies: np.ndarray, counts: np.ndarray) -> float:
    """sum mu F / sum mu with F = w(iota) f(iota) (0 when not crawled, 1 when Delta = 0).

    Pages crawled at their K-th signal (``counts > 0``) have F = f (1 - rho^K)/Delta.
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
    fresh[frequencies == 0] = 0.0
    fresh[pages.change_rate == 0] = 1.0
    return float(np.dot(mu, fresh) / total)
