"""Crawl rates for pages whose updates form renewal processes with a known or estimated age distribution G
(beyond Li, Cline and Loguinov (2017), whose estimators give G).

:class:`AgeTable` tabulates the pages' G on one grid (e.g. as :func:`freshcore.blind.m4` or
:func:`freshcore.blind.m6` estimate it): the update laws that :func:`freshcore.rates.optimal_rates` and
:func:`freshcore.rates.freshness` take with ``model="renewal"``, as they take the laws of
:mod:`freshcore.blind_simulation`.  :func:`renewal_rates` and :func:`renewal_freshness` are their shorthands for a
table.  :mod:`freshcore.blind` gathers the whole blind-sampling API.

References
----------
.. [1] X. Li, D. B. H. Cline, D. Loguinov, "Temporal update dynamics under blind sampling", IEEE/ACM
   Transactions on Networking 25(1), 2017.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._papers import LI_2017, cites
from ._renewal import AgeTable
from ._validation import check_array, check_scalar
from .rates import freshness as _freshness
from .rates import optimal_rates as _optimal_rates

__all__ = ["AgeTable", "renewal_freshness", "renewal_rates"]

AgeTable.__module__ = __name__  # documented and doctested here


def _weights(importance: Any, n: int, caller: str) -> np.ndarray:
    if importance is None:
        return np.ones(n)
    w = check_array(importance, "importance", caller, low=0.0)
    if len(w) != n:
        raise ValueError(f"The array parameters of {caller} must have the same length: 'age_cdf' has {n} rows, "
                         f"'importance' has {len(w)}.")
    return w


@cites(LI_2017)
def renewal_freshness(crawl_rate: Any, age_cdf: Any, x: Any, importance: Any = None, *,
                      per_page: bool = False) -> Any:
    """The freshness of pages crawled periodically whose updates form renewal processes with age
    distributions G_i (forward-recurrence laws, as :func:`~freshcore.blind.m2`, :func:`~freshcore.blind.m4`,
    :func:`~freshcore.blind.m5` or :func:`~freshcore.blind.m6` estimate).

    A shorthand for ``freshcore.rates.freshness(crawl_rate, AgeTable(age_cdf, x), importance,
    model="renewal", per_page=per_page)``.  A page crawled every I = 1/f, at a phase independent of its
    updates, is fresh at age a of the crawl iff no update fell in the a that followed it, which has
    probability 1 − G(a); its time-averaged freshness is f ∫_0^{1/f} (1 − G(a)) da.  With G(a) = 1 − e^{−Δa}
    this is the periodic freshness of SPEC §2.

    Parameters
    ----------
    crawl_rate : array-like of float >= 0, shape (n,)
        Crawls per unit time f_i (0: never crawled, freshness 0).
    age_cdf : array-like of float, shape (n, m)
        G_i at the points x (see :class:`AgeTable` for the clipping, the interpolation and the tail).
    x : array-like of float > 0, shape (m,), strictly increasing
    importance : array-like of float >= 0, shape (n,), optional
        Weights (default 1), not all zero.
    per_page : bool, default False
        Return every page's freshness instead of the weighted mean.

    Returns
    -------
    float or ndarray
        Σ w_i F_i / Σ w_i, or F_i.

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.blind import Constant, renewal_freshness
    >>> x = np.linspace(0.01, 2.0, 200)
    >>> round(renewal_freshness([0.5], [Constant(1.0).age_cdf(x)], x), 6)  # period 1, crawled every 2: 1/4
    0.25
    """
    caller = "renewal_freshness"
    table = AgeTable._checked(age_cdf, x, caller)
    f = check_array(crawl_rate, "crawl_rate", caller, low=0.0)
    if len(f) != len(table):
        raise ValueError(f"The array parameters of {caller} must have the same length: 'crawl_rate' has {len(f)}, "
                         f"'age_cdf' has {len(table)} rows.")
    w = _weights(importance, len(f), caller)
    if not (w > 0).any():
        raise ValueError(f"The 'importance' parameter of {caller} must not be all zero.")
    return _freshness(f, table, w, model="renewal", per_page=per_page)


@cites(LI_2017)
def renewal_rates(age_cdf: Any, x: Any, importance: Any, bandwidth: float, *, return_details: bool = False) -> Any:
    """Optimal periodic crawl rates under a bandwidth for pages whose updates form renewal processes with age
    distributions G_i (estimated by :func:`~freshcore.blind.m2` ... :func:`~freshcore.blind.m6`, or fitted): the
    Poisson assumption dropped.

    A shorthand for ``freshcore.rates.optimal_rates(AgeTable(age_cdf, x), importance, bandwidth,
    model="renewal")``, which documents the model: maximise Σ w_i f_i H_i(1/f_i), H_i(I) = ∫_0^I (1 − G_i),
    subject to Σ f_i <= bandwidth; page i is crawled iff the multiplier Λ < w_i E[A_i] (its mean age), at the
    interval I_i with ψ_i(I_i) = Λ/w_i, ψ_i(I) = ∫_0^I a dG_i(a).  With G_i(a) = 1 − e^{−Δ_i a} this is the
    periodic optimum of SPEC §2.

    Parameters
    ----------
    age_cdf : array-like of float, shape (n, m)
        G_i at the points x (see :class:`AgeTable` for the clipping, the interpolation and the tail).
    x : array-like of float > 0, shape (m,), strictly increasing
    importance : array-like of float >= 0, shape (n,)
        Weights w_i.
    bandwidth : float > 0
        Crawls per unit time in total.
    return_details : bool, default False
        Also return the multiplier Λ and the weighted freshness reached.

    Returns
    -------
    rates : ndarray, shape (n,)
        f_i (0 for pages not crawled).
    multiplier, freshness : float
        With ``return_details`` (``optimal_rates``' :class:`~freshcore.rates.RatesResult` holds the same and
        the objective Σ w_i F_i).

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.blind import Exponential, renewal_rates
    >>> x = np.linspace(0.001, 10.0, 10_000)
    >>> g = np.array([Exponential(0.5).age_cdf(x), Exponential(2.0).age_cdf(x)])
    >>> renewal_rates(g, x, [1.0, 1.0], 2.0).round(3)
    array([0.817, 1.183])
    """
    caller = "renewal_rates"
    table = AgeTable._checked(age_cdf, x, caller)
    w = _weights(importance, len(table), caller)
    budget = check_scalar(bandwidth, "bandwidth", caller, low=0.0, low_inclusive=False)
    res = _optimal_rates(table, w, budget, model="renewal", return_details=True)
    if not return_details:
        return res.crawl_rate
    total = float(w.sum())
    return res.crawl_rate, res.multiplier, res.objective / total if total > 0.0 else 0.0
