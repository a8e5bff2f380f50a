"""Change-rate estimation: the online (streaming and batched) estimators of Avrachenkov, Patil and Thoppe (2022).

A page changes as a Poisson process of unknown rate Δ and is crawled as a
Poisson process of known rate p.  Crawl k reports ``I_k = 1`` if the page
changed since crawl k - 1.  The estimators here only use the flags and p:

* Naive      q_k = Σ_j p_j I_j / k                  (tends to pΔ/(Δ + p), biased)
* LLN        x_k = p Î_k / (α_k + k - Î_k)          (eq. (1))
* SA         y_{k+1} = y_k + η_k [I_{k+1}(y_k + p) - y_k]   (eq. (2))
* SAM        z_{k+1} = z_k + η_k [I_{k+1}(z_k + p) - z_k] + ζ_k (z_k - z_{k-1})
             (eqs. (3) and (10))

Three shapes of the same arithmetic, bit-identical to each other:

* streaming objects (``SAEstimator`` ...): one page, one observation per
  ``update`` call, River-style (``update`` returns ``self``);
* batched state over many pages (``SABatch`` ..., in :mod:`freshcore.estimation_batch`
  and re-exported here): one call updates any subset of pages;
* ``estimate_rates``: a whole (n_pages, k) log at once.

The compiled classes and kernels live in ``freshcore._estimation``; this module
validates, chooses defaults, allocates and delegates.

References
----------
.. [1] K. Avrachenkov, K. Patil, G. Thoppe, "Online algorithms for estimating change rates of web
   pages", Performance Evaluation 153, 2022.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _estimation as _est
from ._papers import AVRACHENKOV_2022, cites
from ._validation import (
    check_array,
    check_binary,
    check_choice,
    check_scalar,
)
from .estimation_batch import LLNBatch, NaiveBatch, SABatch, SAMBatch

__all__ = [
    "LLNBatch",
    "LLNEstimator",
    "NaiveBatch",
    "NaiveEstimator",
    "SABatch",
    "SAEstimator",
    "SAMBatch",
    "SAMEstimator",
    "estimate_rates",
]

# The first parameters of every streaming estimator.
_STREAM_PARAMETERS = """
    Parameters
    ----------
    crawl_rate : float, optional
        Default crawl rate p > 0 (else every update must pass ``crawl_rate``)."""

_UPDATE_DOC = """
    Methods
    -------
    update(changed, interval=None, crawl_rate=None)
        Consume one crawl outcome and return ``self``.  ``changed`` is 0/1 or
        False/True.  ``crawl_rate`` (> 0) is the rate p_k of the Poisson crawl
        process that generated this interval; it overrides the constructor's
        rate for this update only.  ``interval`` (> 0), when given, is the
        time since the previous crawl: these estimators assume Poisson
        crawling at the known rate p and do not use it in the estimate; it is
        validated and added to ``elapsed`` (when every update passes one,
        ``n_updates / elapsed`` is the empirical crawl rate, a check of the
        assumed p).
    update_many(changed, intervals=None, crawl_rate=None)
        The same as a loop of ``update`` (bit-identical); everything is
        validated before any state changes.  ``intervals`` and ``crawl_rate``
        may be scalars.
    to_dict() / from_dict(d)
        Exact round trip of parameters and state (also used by ``pickle`` and
        ``copy.deepcopy``).

    A rejected update (``ValueError``/``TypeError`` naming the argument)
    leaves the state unchanged.
"""


@cites(AVRACHENKOV_2022)
class NaiveEstimator(_est._NaiveEstimator):
    __slots__ = ()

    def __init__(self, *, crawl_rate: float | None = None) -> None:
        super().__init__(crawl_rate=crawl_rate)

    __doc__ = """Naive change-rate estimator: the fraction of crawls that saw a change, times p.
""" + _STREAM_PARAMETERS + """

    Attributes
    ----------
    rate : float
        q_k (0.0 before the first update).
    n_updates : int
        k.
    n_changes : int
        Î_k.
    elapsed : float
        Sum of the intervals passed to ``update``.
""" + _UPDATE_DOC + """
    Notes
    -----
    q_k = p Î_k / k, Î_k = Σ_{j≤k} I_j (the Naive estimator of Section 3 of
    Avrachenkov et al. (2022)).  It is biased: q_k → pΔ/(Δ + p) a.s.  When the crawl rate changes,
    freshcore uses q_k = Σ_j p_j I_j / k (identical while p is constant).

    Examples
    --------
    >>> from freshcore.estimation import NaiveEstimator
    >>> est = NaiveEstimator(crawl_rate=2.0)
    >>> est.update(1).update(0).update(1).update(1).rate
    1.5
"""


@cites(AVRACHENKOV_2022)
class LLNEstimator(_est._LLNEstimator):
    __slots__ = ()

    def __init__(
        self,
        *,
        crawl_rate: float | None = None,
        alpha: str | float | Callable[[int], float] | Sequence[float] | np.ndarray = "one",
        consistent: bool | None = None,
    ) -> None:
        super().__init__(crawl_rate=crawl_rate, alpha=alpha, consistent=consistent)

    __doc__ = """Law-of-large-numbers change-rate estimator (eq. (1) of Avrachenkov et al. (2022)).
""" + _STREAM_PARAMETERS + """
    alpha : {"one", "log", "sqrt"}, float, callable or sequence, default "one"
        α_k: "one" → 1, "log" → log(k + 1), "sqrt" → √k, a number > 0, a
        callable ``k -> α_k`` (called with the int k ≥ 1, must return > 0),
        or a 1-D sequence ``alpha[k - 1] = α_k`` (an update beyond its end is
        rejected).
    consistent : bool or None, default None
        How the rate enters when p varies between updates.  False: eq. (1)
        literally, x_k = p_k Î_k / (α_k + k - Î_k) with p_k the rate of the
        latest update (inconsistent when p changes).  True: the consistent
        form of SPEC §1, x_k = Σ_j p_j I_j / (α_k + Σ_j (1 - I_j)).  None
        (automatic): eq. (1) while p has been constant, the consistent form as
        soon as p varies.  The consistent sum is kept as ``past + p·Î_seg``
        (changes seen since the last change of p, times p), so while p is
        constant it is exactly p·Î_k: True and None give bit-identical
        numbers to eq. (1) until p first changes, and identical numbers to
        each other always.

    Attributes
    ----------
    rate : float
        x_k (0.0 before the first update).
    n_updates, n_changes, elapsed
        k, Î_k and the sum of the intervals passed to ``update``.
""" + _UPDATE_DOC + """
    Notes
    -----
    x_k = p Î_k / (k + α_k - Î_k), eq. (1) of Avrachenkov et al. (2022);
    x_k → Δ a.s. when α_k is positive and o(k) (their Theorem 1).  The denominator is evaluated as
    α_k + (k - Î_k) with the integer k - Î_k exact.

    Examples
    --------
    >>> from freshcore.estimation import LLNEstimator
    >>> est = LLNEstimator(crawl_rate=3.0)
    >>> est.update(1).update(1).update(0).rate   # 3 * 2 / (1 + 1)
    3.0
"""


@cites(AVRACHENKOV_2022)
class SAEstimator(_est._SAEstimator):
    __slots__ = ()

    def __init__(self, *, crawl_rate: float | None = None, eta: float = 0.75, initial: float = 0.0) -> None:
        super().__init__(crawl_rate=crawl_rate, eta=eta, initial=initial)

    __doc__ = """Stochastic-approximation change-rate estimator (eq. (2) of Avrachenkov et al. (2022)).
""" + _STREAM_PARAMETERS + """
    eta : float, default 0.75
        Step-size exponent, η_k = (k + 1)^(-η) (so η_0 = 1); convergence
        requires η ∈ (0, 1] (Avrachenkov et al. (2022)).
    initial : float, default 0.0
        y_0.

    Attributes
    ----------
    rate : float
        y_k.
    n_updates, elapsed
        k and the sum of the intervals passed to ``update``.
""" + _UPDATE_DOC + """
    Notes
    -----
    y_{k+1} = y_k + η_k [I_{k+1}(y_k + p) - y_k], eq. (2) of Avrachenkov et al.
    (2022), where p is the rate that generated the interval ending at crawl
    k + 1 (SPEC §1).
    η_k is evaluated as exp(-η log(k + 1)) (relative error ~1e-15, exactly 1
    at k = 0).

    Examples
    --------
    >>> from freshcore.estimation import SAEstimator
    >>> est = SAEstimator(crawl_rate=2.0, eta=1.0)
    >>> est.update(1).rate          # y_1 = 0 + 1 * (1 * (0 + 2) - 0)
    2.0
    >>> est.update(0).rate          # y_2 = 2 + (1/2) * (0 - 2)
    1.0
"""


@cites(AVRACHENKOV_2022)
class SAMEstimator(_est._SAMEstimator):
    __slots__ = ()

    def __init__(self, *, crawl_rate: float | None = None, eta: float = 1.3, beta: float = 0.75,
                 omega: float = 1.0, initial: float = 0.0) -> None:
        super().__init__(crawl_rate=crawl_rate, eta=eta, beta=beta, omega=omega, initial=initial)

    __doc__ = """Stochastic approximation with heavy-ball momentum (eqs. (3) and (10) of Avrachenkov et al. (2022)).
""" + _STREAM_PARAMETERS + """
    eta : float, default 1.3
        Step-size exponent, η_k = (k + 1)^(-η).
    beta : float, default 0.75
        Momentum exponent, β_k = (k + 1)^(-β).
    omega : float, default 1.0
        ω in ζ_k = (β_k - ω η_k) / β_{k-1}.
    initial : float, default 0.0
        z_0 = z_{-1}.

    Attributes
    ----------
    rate : float
        z_k.
    previous : float
        z_{k-1}.
    n_updates, elapsed
        k and the sum of the intervals passed to ``update``.
""" + _UPDATE_DOC + """
    Notes
    -----
    z_{k+1} = z_k + η_k [I_{k+1}(z_k + p) - z_k] + ζ_k (z_k - z_{k-1}),
    eq. (3) of Avrachenkov et al. (2022), ζ_k from their eq. (10) with ζ_0 = 0
    (β_{-1} = ∞, SPEC §1).
    The step sizes are evaluated as exp(-η log(k + 1)) and exp(-β log(k + 1))
    (one shared log; relative error ~1e-15, exactly 1 at k = 0).

    The momentum term can carry z_k below 0 for a while (e.g. after a run of
    unchanged crawls that follows a high estimate, or when p drops): the
    iterate is kept exactly as eq. (3) defines it, so clip it at 0
    (``max(rate, 0.0)``) before using it as a change rate.

    Examples
    --------
    >>> from freshcore.estimation import SAMEstimator
    >>> est = SAMEstimator(crawl_rate=2.0, eta=1.0, beta=1.0, omega=0.5)
    >>> est.update(1).rate          # z_1 = 0 + 1 * 2, zeta_0 = 0
    2.0
    >>> est.update(1).rate          # z_2 = 2 + (1/2) * 2 + (1/2 - 1/4) / 1 * 2
    3.5
"""


# ---------------------------------------------------------------------------
# whole logs at once
# ---------------------------------------------------------------------------

_ONLINE: dict[str, type] = {"naive": NaiveBatch, "lln": LLNBatch, "sa": SABatch, "sam": SAMBatch}
_METHODS = ("naive", "lln", "sa", "sam", "mle", "mm", "cgm")


def _method_params(method: str) -> tuple[str, ...]:
    """The keyword parameters ``estimate_rates`` passes on to ``method``'s estimator."""
    fn: Any
    if method in _ONLINE:
        fn = _ONLINE[method]
        skip = {"n_pages", "crawl_rate"}
    else:
        from .mle import cgm_rates, mle_rates, moment_rates

        fn = {"mle": mle_rates, "mm": moment_rates, "cgm": cgm_rates}[method]
        skip = {"changed", "intervals", "crawl_rate"}
    return tuple(name for name in inspect.signature(fn).parameters if name not in skip)


def _check_method_params(params: dict[str, Any], method: str, caller: str) -> None:
    """A TypeError naming the first keyword parameter that ``method`` does not take (and those it takes)."""
    takes = _method_params(method)
    for name in params:
        if name not in takes:
            options = "takes " + ", ".join(repr(t) for t in takes) if takes else "takes no parameter"
            raise TypeError(f"The {name!r} parameter of {caller} is not taken by method={method!r} (it {options}).")


@cites(AVRACHENKOV_2022)
def estimate_rates(
    changed: Any,
    intervals: Any = None,
    crawl_rate: Any = None,
    method: str = "lln",
    *,
    return_path: bool = False,
    **params: Any,
) -> np.ndarray:
    """Estimate the change rate of every page from a whole crawl log.

    Parameters
    ----------
    changed : array-like of 0/1 or bool, shape (n_pages, k) or (k,)
        ``changed[i, j]`` = I_{j+1} of page i.  A 1-D log is one page.
    intervals : array-like, shape like ``changed``, optional
        Crawl intervals τ (> 0).  Needed by "mle", "mm" and "cgm"; the online
        methods assume Poisson crawling at rate p and only validate them.
    crawl_rate : float or array-like of shape (n_pages,) or (n_pages, k)
        Crawl rate p > 0: one for all, one per page, or the rate that
        generated each interval.  Required by the online methods.
    method : {"lln", "naive", "sa", "sam", "mle", "mm", "cgm"}, default "lln"
        "naive", "lln", "sa" and "sam" run the batched kernels over the k
        columns (bit-identical to feeding each row to ``LLNEstimator`` etc.);
        "mle", "mm" (moment matching) and "cgm" (Cho–Garcia-Molina) delegate
        to ``freshcore.mle``.
    return_path : bool, default False
        Return the whole trajectory (online methods only).
    **params
        Step parameters of the method (``alpha``, ``consistent``, ``eta``,
        ``beta``, ``omega``, ``initial``) or of the offline estimators.

    Returns
    -------
    rates : ndarray, shape (n_pages,)
        The estimate after the k-th observation of every page; with
        ``return_path`` the (n_pages, k) trajectory.  For 1-D ``changed`` the
        page axis is dropped (a float, or shape (k,) with ``return_path``).

    Notes
    -----
    Update rules: eqs. (1)–(3) and (10) of Avrachenkov et al. (2022) (see the
    module docstring).

    Examples
    --------
    >>> from freshcore.estimation import estimate_rates
    >>> log = [[1, 1, 0, 1], [0, 0, 0, 1]]
    >>> estimate_rates(log, crawl_rate=2.0, method="lln")   # 2*3/(1+1), 2*1/(1+3)
    array([3. , 0.5])
    """
    caller = "estimate_rates"
    method = check_choice(method, "method", caller, _METHODS)
    _check_method_params(params, method, caller)
    if method in ("mle", "mm", "cgm"):
        if return_path:
            raise ValueError(f"The 'return_path' parameter of {caller} is only supported by the online methods "
                             f"'naive', 'lln', 'sa' and 'sam'. Got method={method!r}.")
        from .mle import cgm_rates, mle_rates, moment_rates

        offline: Any = {"mle": mle_rates, "mm": moment_rates, "cgm": cgm_rates}[method]
        return offline(changed, intervals, crawl_rate=crawl_rate, **params)

    c = check_binary(changed, "changed", caller, ndim=(1, 2))
    one_page = c.ndim == 1
    if one_page:
        c = c[None, :]
    n, k = c.shape
    if intervals is not None:
        dt = check_array(intervals, "intervals", caller, ndim=(1, 2), low=0.0, low_inclusive=False)
        if dt.shape != ((k,) if one_page else (n, k)):
            raise ValueError(f"The 'intervals' parameter of {caller} must have the shape of 'changed' "
                             f"{np.shape(changed)}. Got shape {dt.shape} instead.")
    if crawl_rate is None:
        raise ValueError(
            f"The 'crawl_rate' parameter of {caller} is required by method={method!r} (the online methods "
            f"assume Poisson crawling at a known rate); method='mle', 'mm' or 'cgm' estimate from the "
            f"'intervals' alone."
        )
    if np.ndim(crawl_rate) == 0:
        p_all = np.array([check_scalar(crawl_rate, "crawl_rate", caller, low=0.0, low_inclusive=False)])
        p_cols = None
    else:
        p_arr = check_array(crawl_rate, "crawl_rate", caller, ndim=(1, 2), low=0.0, low_inclusive=False)
        if one_page:
            ok_shapes = {(1,): "page", (k,): "obs"} if p_arr.ndim == 1 else {(1, k): "obs"}
        else:
            ok_shapes = {(n,): "page"} if p_arr.ndim == 1 else {(n, k): "obs"}
        kind = ok_shapes.get(p_arr.shape)
        if kind is None:
            raise ValueError(
                f"The 'crawl_rate' parameter of {caller} must be a scalar, one rate per page or one per "
                f"observation (the shape of 'changed' {np.shape(changed)}). Got shape {p_arr.shape} instead."
            )
        if kind == "page":
            p_all, p_cols = np.ascontiguousarray(p_arr.reshape(n)), None
        else:
            p_all, p_cols = None, np.ascontiguousarray(p_arr.reshape(n, k).T)
    batch = _ONLINE[method](n, crawl_rate=1.0, **params)
    cols = np.ascontiguousarray(c.T)
    path = np.empty((n, k)) if return_path else None
    for j in range(k):
        p = p_all if p_cols is None else p_cols[j]
        extra = batch._prepare(None, n)
        batch._apply(cols[j], None, p, extra)
        if path is not None:
            path[:, j] = batch._rates
    out = path if path is not None else batch._rates.copy()
    return out[0] if one_page else out
