"""Crawl value, crawl interval, crawl frequency and fresh time of the threshold policies.

Between crawls, the state of a page is summarised by its *effective elapsed time*
``tau_eff = tau_elap + beta * n_cis`` (``n_cis`` signals since the last crawl), and the optimal policies
crawl a page when ``tau_eff`` reaches a threshold ``iota`` (:class:`freshcore.pages.PageModel` holds the
per-page parameters and ``beta``).  This module gives, for every page of a model:

* :func:`crawl_interval` -- ``psi(iota)``, the expected time between crawls of the threshold policy,
  and :func:`crawl_frequency` ``f = 1/psi``;
* :func:`fresh_time` -- ``w(iota)``, the expected time per crawl interval during which the copy is fresh;
* :func:`crawl_value` -- ``V(iota) = mu (w - e^{-alpha iota} psi)``, the value of crawling a page whose
  effective elapsed time is ``iota``, exactly (a sum of non-negative terms, see ``freshcore._value``),
  in the approx-j truncation, or in the Greedy (no signals) and Greedy-CIS (no false signals) special
  cases.

:func:`freshcore.thresholds.optimal_thresholds` solves ``V_i(iota_i) = Lambda`` under a bandwidth.

**Importance.** The paper writes ``V`` with ``mu~ = mu / sum(mu)``; we use ``mu`` itself, so that a
sub-model (``pages[idx]``) keeps the values of its pages.  Every page is scaled alike, so no argmax and
no threshold depends on the choice; multiply by ``1 / pages.importance.sum()`` (or use
``pages.normalized_importance``) for the paper's scale, where ``V(inf) = mu~/Delta``.

**Work per page.** Each function sums a series over the ``floor(iota/beta)`` signals that fit in
``iota``; where that series is long (many expected signals, or ``Delta << nu``), the sum comes from the
residues of its Laplace transform instead, in closed form with a proven error bound (see
``freshcore._value``), so the work per page is bounded whatever the parameters.

The computations are compiled (``freshcore._value``); this module validates, allocates and delegates.

The formulas are those of Theorem 2, Lemma 4 and Appendix A.1 of Busa-Fekete, Zimmert, György et al. (2025).

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from freshcore import _value
from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._parallel import parallel_chunks
from freshcore._validation import check_array, check_choice, check_int, check_out
from freshcore.pages import PageModel, check_pages

__all__ = ["PageValueError", "crawl_frequency", "crawl_interval", "crawl_value", "fresh_time"]

#: The crawl-value kinds, in the order of the compiled kernels' codes.
VALUES = ("exact", "approx", "greedy", "cis")
#: Every series stops at this many terms (``freshcore._value.MAX_TERMS``): a page that would need more, where no
#: closed form applies, is refused with a ValueError.
MAX_TERMS = 1048576


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


class PageValueError(ValueError):
    """A ValueError naming a page whose value cannot be computed in bounded time.

    Its series would run past ``MAX_TERMS`` terms and no closed form applies (a recall very close to 1 with
    very many false signals per threshold), or, for the polled-signal value (the schedulers' ``value="polled"``),
    its lattice sum would run past ``freshcore.polled_signals.MAX_STEPS`` points.  The functions of this module
    raise it, naming the page by its index in the model, and so do the schedulers for a page they evaluate,
    naming it by its id; ``page`` holds that index or id and ``at`` the ``tau_eff``, threshold or (polled)
    log-staleness ``staleness`` asked for.
    """

    def __init__(self, who: str, page: int, change_rate: float, recall: float, false_rate: float, name: str,
                 at: float, then: str = "") -> None:
        self.who, self.page, self.params, self.name, self.at, self.then = (
            who, page, (change_rate, recall, false_rate), name, at, then)
        why = (  # (the polled-signal value, freshcore.polled_signals, is named at its log-staleness)
            "its polled-signal lattice sum would run past its step cap (a poll interval very short against the "
            "page's change rate)" if name == "staleness" else
            f"its series would run past {MAX_TERMS} terms and no closed form applies (a recall this close to 1 "
            f"with so many signals per threshold)")
        super().__init__(
            f"{who} cannot evaluate page {page} (change_rate={change_rate!r}, recall={recall!r}, "
            f"false_rate={false_rate!r}) at {name}={at!r} in bounded time: {why}.{then}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.who, self.page, *self.params, self.name, self.at, self.then)

    def for_page(self, page: int, then: str, who: str | None = None) -> PageValueError:
        """The same error naming the page ``page`` (e.g. by a sharded scheduler's id), ending with ``then``."""
        return PageValueError(self.who if who is None else who, page, *self.params, self.name, self.at, then)


def _check_bounded(res: np.ndarray, tau: np.ndarray, pages: PageModel, caller: str, name: str) -> np.ndarray:
    """``res`` itself, or PageValueError naming the first page whose series ran past its work bound (NaN)."""
    bad = np.isnan(res)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise PageValueError(caller, k, float(pages.change_rate[k]), float(pages.recall[k]),
                             float(pages.false_rate[k]), name, float(tau[k]))
    return res


@cites(BUSA_FEKETE_2025)
def crawl_value(
    tau_eff: Any, pages: PageModel, value: str = "exact", terms: int | None = None, *, out: np.ndarray | None = None
) -> np.ndarray:
    """Value ``V(tau_eff)`` of crawling each page now (Busa-Fekete et al. (2025), SPEC section 3).

    Parameters
    ----------
    tau_eff : float or array_like of shape (n_pages,)
        Effective elapsed time ``tau_elap + beta n_cis`` of each page
        (``>= 0``; ``inf`` allowed).
    pages : PageModel
        The pages.
    value : {"exact", "approx", "greedy", "cis"}, default="exact"
        ``"exact"``: ``V = mu sum_{n <= floor(iota/beta)} D_n`` summed until
        the remaining terms are provably below 1e-16 of the sum (tighter
        than SPEC's 1e-15 mu/Delta); ``"approx"``: the first ``terms``
        terms only (approx-j, Appendix A.1 of Busa-Fekete et al. (2025));
        ``"greedy"``: ignore signals, ``mu R^1(Delta iota)/Delta``;
        ``"cis"``: assume no false signals (``nu = 0``, Greedy-CIS),
        ``mu (R^0(Delta iota)/Delta - R^0(lambda Delta iota)/(lambda Delta e^{alpha iota}))``.
    terms : int, optional
        Number of terms ``j >= 1`` for ``value="approx"`` (required there,
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
    ``V(iota) = mu (w(iota) - e^{-alpha iota} psi(iota))`` (SPEC section 3;
    Theorem 2 and eqs. (6)-(8) of Busa-Fekete et al. (2025)).  The literal
    difference loses every digit at small ``iota``; each series term is
    instead evaluated as a non-negative quantity (``freshcore._value``), so
    the result is accurate to ~1e-14 relative against a 50-digit mpmath
    evaluation (tests/test_value.py).
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
    >>> from freshcore import PageModel
    >>> from freshcore.value import crawl_value
    >>> pages = PageModel([1.0, 1.0], [1.0, 1.0], recall=[0.0, 0.8], false_rate=[0.0, 0.2])
    >>> crawl_value(1.0, pages).round(6).tolist()
    [0.264241, 0.064802]
    >>> crawl_value(np.inf, pages).tolist()
    [1.0, 1.0]
    """
    caller = "crawl_value"
    pages = check_pages(pages, caller)
    check_choice(value, "value", caller, VALUES)
    if value == "approx":
        if terms is None:
            raise ValueError(f"The 'terms' parameter of {caller} is required with value='approx'.")
        j = check_int(terms, "terms", caller, low=1)
    else:
        if terms is not None:
            raise ValueError(f"The 'terms' parameter of {caller} is only used with value='approx'. Got {terms!r}.")
        j = -1
    n = len(pages)
    tau = _times(tau_eff, "tau_eff", n, caller)
    res = _output(out, n, caller)
    k = VALUES.index(value)
    par = (tau, pages.change_rate, pages.recall, pages.false_rate, pages.importance, pages.alpha, pages.gamma,
           pages.beta)
    # pages are independent: threads over contiguous chunks give the same bits as one pass
    parallel_chunks(n, lambda p, q: _value.value_kernel(*(x[p:q] for x in par), k, j, res[p:q]), heavy=k < 2)  # type: ignore[call-arg, arg-type, unused-ignore]
    return _check_bounded(res, tau, pages, caller, "tau_eff")


@cites(BUSA_FEKETE_2025)
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
    (Lemma 4 of Busa-Fekete et al. (2025), SPEC section 3); ``psi = iota``
    when signals carry no information (``beta = 0``) and
    ``R^0(gamma iota)/gamma`` when ``beta = inf`` (crawl at ``iota`` or at the
    first signal).

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.value import crawl_interval
    >>> pages = PageModel([1.0, 1.0], [1.0, 1.0], recall=[0.0, 1.0])
    >>> crawl_interval(2.0, pages).round(6).tolist()  # [2, 1 - e^{-2}]
    [2.0, 0.864665]
    """
    caller = "crawl_interval"
    pages = check_pages(pages, caller)
    n = len(pages)
    tau = _times(threshold, "threshold", n, caller)
    res = _output(out, n, caller)
    _value.interval_kernel(tau, pages.change_rate, pages.false_rate, pages.gamma, pages.beta, res)
    return _check_bounded(res, tau, pages, caller, "threshold")


@cites(BUSA_FEKETE_2025)
def crawl_frequency(threshold: Any, pages: PageModel, *, out: np.ndarray | None = None) -> np.ndarray:
    """Crawl frequency ``f(iota) = 1/psi(iota)`` of the threshold policy (eq. (7) of Busa-Fekete et al. (2025)).

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
    >>> from freshcore import PageModel
    >>> from freshcore.value import crawl_frequency
    >>> crawl_frequency([0.5, np.inf], PageModel([1.0, 1.0], 1.0)).tolist()
    [2.0, 0.0]
    """
    caller = "crawl_frequency"
    pages = check_pages(pages, caller)
    n = len(pages)
    tau = _times(threshold, "threshold", n, caller)
    res = _output(out, n, caller)
    _value.interval_kernel(tau, pages.change_rate, pages.false_rate, pages.gamma, pages.beta, res)
    _check_bounded(res, tau, pages, caller, "threshold")
    with np.errstate(divide="ignore", over="ignore"):
        np.divide(1.0, res, out=res)
    return res


@cites(BUSA_FEKETE_2025)
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
    R^i((Delta+nu)(iota - i beta))`` (Lemma 4 of Busa-Fekete et al. (2025), SPEC
    section 3).

    Examples
    --------
    >>> from freshcore import PageModel
    >>> from freshcore.value import fresh_time
    >>> fresh_time(1.0, PageModel(1.0, 1.0)).round(6).tolist()  # 1 - e^{-1}
    [0.632121]
    """
    caller = "fresh_time"
    pages = check_pages(pages, caller)
    n = len(pages)
    tau = _times(threshold, "threshold", n, caller)
    res = _output(out, n, caller)
    par = (tau, pages.change_rate, pages.alpha, pages.false_rate, pages.gamma, pages.beta)
    # on threads like crawl_value (optimal_thresholds' accuracy takes it over every page)
    parallel_chunks(n, lambda p, q: _value.fresh_kernel(*(x[p:q] for x in par), res[p:q]), heavy=True)  # type: ignore[call-arg, arg-type, unused-ignore]
    return _check_bounded(res, tau, pages, caller, "threshold")
