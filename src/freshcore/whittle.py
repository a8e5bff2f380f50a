"""Whittle index policy for crawling ephemeral content: the source model and the index.

News sites, forums and feeds publish content whose value decays within hours.  Avrachenkov and Borkar
(2018) model a source ``i`` as content arriving at Poisson rate ``Lambda_i`` with mean initial utility
``xi_i``, decaying at rate ``mu_i``; a crawler visits sources at the multiples of a period ``T`` and each
period picks which sources to crawl.  With ``alpha = e^{-mu T}`` and the expected utility gathered in one
period

    ``u = Lambda xi / mu (1 - alpha)``,   ``u* = u / (1 - alpha) = Lambda xi / mu``   (eq. (1)),

the state ``X`` of a source (the expected utility waiting there) evolves as

* passive: ``X <- alpha X + u``   (eq. (2)), no reward;
* active (crawled): reward ``X``, then ``X <- u``   (eq. (3)),

and the crawler maximises the long-run average reward under an average budget ``sum_i C_i v_i = M``.  The
problem is a restless bandit, Whittle indexable, with the closed-form index of Theorem 1 (:func:`whittle_index`).

This module holds :class:`SourceModel` (the per-source parameters, validated once), :func:`whittle_index` and
the relaxed problem of Section VII (:func:`source_gain`, :func:`lagrangian_bound`, :func:`relaxed_optimum`,
:func:`lambert_threshold`).  :mod:`freshcore.whittle_policies` holds the policies (Whittle top-M, greedy-type,
round robin, static, the relaxed controls, and :class:`~freshcore.whittle_policies.WhittleScheduler` for
millions of sources), :mod:`freshcore.whittle_simulation` the deterministic and stochastic simulators and
:mod:`freshcore.whittle_stochastic` the stochastic index of Section VIII and the stochastic model's bound.
SPEC section 5 settles where the paper is ambiguous or wrong (the index above ``u*``, the branch of Lambert W
in eq. (21), the sign of eq. (22)).

The computations are compiled (``freshcore._whittle``); this module validates, allocates and delegates.

References
----------
.. [1] K. Avrachenkov, V. S. Borkar, "Whittle index policy for crawling ephemeral content", IEEE Transactions
   on Control of Network Systems 5(1), 2018.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from freshcore import _whittle
from freshcore._papers import AVRACHENKOV_BORKAR_2018, cites
from freshcore._validation import broadcast_parameters, check_array, check_out, check_scalar

__all__ = ["RelaxedOptimum", "SourceModel", "check_sources", "lagrangian_bound", "lambert_threshold",
           "relaxed_optimum", "source_gain", "whittle_index"]

#: ``mu T`` below this is refused: the index's ``eta`` (up to ``37 / (mu T)``) must stay finite.
MIN_DECAY_PER_PERIOD = 1e-300


def _numbers(x: Any, name: str, caller: str, **bounds: Any) -> np.ndarray:
    """``x`` as a float64 array of ndim 0 or 1, checked; a scalar through ``check_scalar`` so that its message
    names it without an index (``Got nan instead``, not ``x[0] = nan``)."""
    if isinstance(x, (numbers.Number, np.generic)) or (isinstance(x, np.ndarray) and x.ndim == 0):
        return np.array(check_scalar(x, name, caller, **bounds))
    return check_array(x, name, caller, ndim=(0, 1), **bounds)


def _read_only_copy(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True, order="C")
    a.flags.writeable = False
    return a


@cites(AVRACHENKOV_BORKAR_2018)
class SourceModel:
    """Per-source parameters of the ephemeral-content model, validated once (SPEC section 5).

    Parameters
    ----------
    arrival_rate : float or array_like of shape (n_sources,)
        ``Lambda >= 0``, Poisson rate at which new content appears at each source.
    utility : float or array_like of shape (n_sources,)
        ``xi >= 0``, mean initial utility of one piece of content.
    decay : float or array_like of shape (n_sources,)
        ``mu > 0``, rate at which the utility of content decays (``xi e^{-mu t}`` at age ``t``).
    period : float, default=1.0
        ``T > 0``, the crawler's period: it decides at the multiples of ``T`` (one value for all sources).
    cost : float or array_like of shape (n_sources,), default=1.0
        ``C > 0``, what one crawl of each source takes from the budget ``M``.

    Scalars broadcast against the arrays.  All attributes are read-only float64 arrays of shape
    ``(n_sources,)`` (``period`` a float).

    Attributes
    ----------
    arrival_rate, utility, decay, cost : ndarray
        The parameters.
    period : float
        ``T``.
    alpha : ndarray
        ``e^{-mu T}``, what is left of a utility after one period.
    u : ndarray
        ``Lambda xi / mu (1 - alpha)``, the expected utility one period brings (eq. (1) of Avrachenkov and
        Borkar (2018)): the state right after a crawl.
    u_star : ndarray
        ``u / (1 - alpha) = Lambda xi / mu``, the limit of the state of a source never crawled.

    Raises
    ------
    ValueError
        If a parameter is out of range or NaN (naming it and the first bad index), the arrays' lengths
        differ, ``mu T`` is below 1e-300 or ``Lambda xi / mu`` overflows.
    TypeError
        If a parameter is not numeric.

    Notes
    -----
    ``len(sources)`` is the number of sources; ``sources[idx]`` (an integer, slice, boolean mask or index
    array) is the sub-model of the selected sources; models compare equal when all their parameters do,
    and pickle.

    Examples
    --------
    >>> from freshcore.whittle import SourceModel
    >>> table1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    >>> table1.u_star.round(2).tolist()
    [357.14, 500.0, 71.43, 95.24]
    >>> table1.u.round(3).tolist()
    [179.791, 147.656, 35.958, 18.04]
    """

    __slots__ = ("_alpha", "_arrival_rate", "_cost", "_decay", "_inv_mut", "_invc", "_mut", "_om", "_period", "_u",
                 "_u_star", "_utility")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, arrival_rate: Any, utility: Any, decay: Any, period: Any = 1.0, cost: Any = 1.0) -> None:
        caller = "SourceModel"
        lam = _numbers(arrival_rate, "arrival_rate", caller, low=0.0)
        xi = _numbers(utility, "utility", caller, low=0.0)
        mu = _numbers(decay, "decay", caller, low=0.0, low_inclusive=False)
        t = check_scalar(period, "period", caller, low=0.0, low_inclusive=False)
        c = _numbers(cost, "cost", caller, low=0.0, low_inclusive=False)
        lam, xi, mu, c = broadcast_parameters(caller, "sources", arrival_rate=(lam, arrival_rate),
                                              utility=(xi, utility), decay=(mu, decay), cost=(c, cost))
        self._set(lam, xi, mu, t, c, caller)

    def _set(self, lam: np.ndarray, xi: np.ndarray, mu: np.ndarray, t: float, c: np.ndarray, caller: str) -> None:
        with np.errstate(over="ignore"):
            mut = mu * t
            u_star = lam * xi / mu
        small = ~(mut >= MIN_DECAY_PER_PERIOD)
        if small.any():
            i = int(np.flatnonzero(small)[0])
            raise ValueError(
                f"The 'decay' parameter of {caller} times 'period' must be >= {MIN_DECAY_PER_PERIOD!r}; "
                f"decay[{i}] * period = {float(mut[i])!r}."
            )
        big = ~np.isfinite(u_star)
        if big.any():
            i = int(np.flatnonzero(big)[0])
            raise ValueError(
                f"The parameters of {caller} must give a finite u_star = arrival_rate * utility / decay; "
                f"source {i} gives {float(u_star[i])!r}."
            )
        om = -np.expm1(-mut)
        self._arrival_rate, self._utility, self._decay = (_read_only_copy(a) for a in (lam, xi, mu))
        self._period, self._cost = t, _read_only_copy(c)
        self._mut, self._om, self._invc = _read_only_copy(mut), _read_only_copy(om), _read_only_copy(1.0 / c)
        self._inv_mut = _read_only_copy(1.0 / mut)
        self._alpha = _read_only_copy(np.exp(-mut))
        self._u_star = _read_only_copy(u_star)
        self._u = _read_only_copy(u_star * om)

    arrival_rate = property(lambda self: self._arrival_rate, doc="Lambda, content arrival rates.")
    utility = property(lambda self: self._utility, doc="xi, mean initial utilities.")
    decay = property(lambda self: self._decay, doc="mu, utility decay rates.")
    period = property(lambda self: self._period, doc="T, the crawl period.")
    cost = property(lambda self: self._cost, doc="C, the budget one crawl of each source takes.")
    alpha = property(lambda self: self._alpha, doc="e^{-mu T}.")
    u = property(lambda self: self._u, doc="Lambda xi / mu (1 - alpha), the state right after a crawl.")
    u_star = property(lambda self: self._u_star, doc="Lambda xi / mu, the limit of a source never crawled.")

    def _kernel_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(u*, mu T, 1 / (mu T), 1 - alpha, 1 / C): what the compiled index kernels take."""
        return self._u_star, self._mut, self._inv_mut, self._om, self._invc

    def __len__(self) -> int:
        return len(self._decay)

    def __getitem__(self, idx: Any) -> SourceModel:
        if isinstance(idx, (numbers.Integral, np.integer)) and not isinstance(idx, (bool, np.bool_)):
            k = int(idx)
            if not -len(self) <= k < len(self):
                raise IndexError(f"source index {k} is out of range for {len(self)} sources")
            idx = [k % len(self)]
        new = SourceModel.__new__(SourceModel)
        lam, xi, mu, c = (np.atleast_1d(a[idx]) for a in (self._arrival_rate, self._utility, self._decay, self._cost))
        new._set(lam, xi, mu, self._period, c, "SourceModel")
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceModel):
            return NotImplemented
        return self._period == other._period and all(
            np.array_equal(a, b) for a, b in zip(
                (self._arrival_rate, self._utility, self._decay, self._cost),
                (other._arrival_rate, other._utility, other._decay, other._cost)))

    def __reduce__(self) -> tuple[type[SourceModel], tuple[Any, ...]]:
        return (SourceModel, (self._arrival_rate, self._utility, self._decay, self._period, self._cost))

    def __repr__(self) -> str:
        return f"SourceModel(n_sources={len(self)}, period={self._period!r})"


def check_sources(sources: Any, caller: str, name: str = "sources") -> SourceModel:
    """``sources`` itself if it is a :class:`SourceModel`; TypeError naming ``caller`` otherwise."""
    if not isinstance(sources, SourceModel):
        raise TypeError(
            f"The {name!r} parameter of {caller} must be a SourceModel. Got {type(sources).__name__} instead."
        )
    return sources


def check_states(x: Any, sources: SourceModel, caller: str, name: str = "x") -> np.ndarray:
    """``x`` as a C-contiguous float64 array of shape ``(..., n_sources)`` of finite states ``>= 0``."""
    if isinstance(x, (numbers.Number, np.generic)) or (isinstance(x, np.ndarray) and x.ndim == 0):
        check_scalar(x, name, caller, low=0.0)  # a bad value named without an index, before the shape
    arr = check_array(x, name, caller, ndim=None, low=0.0, allow_empty=True)
    n = len(sources)
    if arr.ndim == 0 or arr.shape[-1] != n:
        raise ValueError(
            f"The {name!r} parameter of {caller} must have shape (..., {n}) (its last axis runs over the "
            f"{n} sources). Got shape {arr.shape} instead."
        )
    return arr


@cites(AVRACHENKOV_BORKAR_2018)
def whittle_index(x: Any, sources: SourceModel, *, out: np.ndarray | None = None) -> np.ndarray:
    """The Whittle index ``gamma_i(x_i)`` of each source in state ``x_i`` (Theorem 1, SPEC section 5).

    The subsidy for passivity at which crawling source ``i`` now and leaving it are equally good in the
    source's own average-reward problem (eq. (10) of Avrachenkov and Borkar (2018)).  The index policy
    crawls, each period, the sources of the ``M`` largest indices.

    Parameters
    ----------
    x : array_like of shape (..., n_sources)
        States ``X_i >= 0`` (the expected utility waiting at each source), finite; the last axis runs over
        the sources, the leading axes over anything (replicas, times, a grid of states).
    sources : SourceModel
        The sources.
    out : ndarray of float64, optional
        C-contiguous array of the shape of ``x`` that receives the result.

    Returns
    -------
    gamma : ndarray of float64, shape of ``x``
        The indices (``out`` when given).

    Raises
    ------
    ValueError
        If a state is negative, NaN or infinite (naming the first bad position), or the last axis of ``x``
        is not ``n_sources`` long.
    TypeError
        If ``sources`` is not a :class:`SourceModel` or ``x`` is not numeric.

    Notes
    -----
    Theorem 1 in its exact ceil form: for ``0 <= x < u*``

        ``gamma(x) = [eta ((1 - alpha) x - u) + u (1 - alpha^eta) / (1 - alpha)] / C``,
        ``eta = ceil(log_alpha(1 - x / u*))``,

    ``eta`` being the number of passive periods after a crawl until the state reaches ``x``; and
    ``gamma(x) = x / C`` for ``x >= u*`` (the paper's ``log+`` convention would give ``0`` there, which is
    wrong: SPEC section 5).  ``gamma`` is continuous and increasing in ``x``.  The Remark's simplified form
    ``(eta ((1 - alpha) x - u) + x) / C`` without the ceiling agrees only on the states a source reaches after
    a crawl, ``x_n = u* (1 - alpha^n)``, so it is not offered.  Computed as
    ``[u* (1 - alpha^eta) - eta (1 - alpha)(u* - x)] / C`` whose terms both lie in ``[0, u*]``: the absolute
    error is a few ulp of ``u* / C``.  The tests check it against the definition itself (the subsidy at which
    crawling and waiting are equally good, by relative value iteration on the states reachable from the state
    tested) to 1e-9, at every kind of state: the grid ``x_n``, off-grid states (random ones, just off the grid,
    at and below ``u``, just below ``u*``), states above ``u*``, and costs ``C != 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.whittle import SourceModel, whittle_index
    >>> table1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    >>> whittle_index(table1.u, table1).round(3).tolist()          # right after a crawl
    [90.509, 43.605, 18.102, 3.417]
    >>> whittle_index(np.array([[0.0, 600.0, 71.5, 50.0]]), table1).round(3).tolist()
    [[0.0, 600.0, 71.5, 19.848]]
    """
    caller = "whittle_index"
    src = check_sources(sources, caller)
    arr = check_states(x, src, caller)
    if out is None:
        out = np.empty(arr.shape, dtype=np.float64)
    else:
        check_out(out, arr.shape, caller)
    _whittle.index_kernel(arr.reshape(-1), *src._kernel_args(), out.reshape(-1))
    return out


# ---------------------------------------------------------------------------
# The relaxed problem (Section VII): one multiplier, each source on its own


def _grid_index(n: np.ndarray, src: SourceModel) -> np.ndarray:
    """gamma_i(x_n) on the states x_n = u* (1 - alpha^n) a crawled source visits (n >= 1, the Remark's form,
    exact there): [n ((1 - alpha) x_n - u) + x_n] / C = [x_n - n (1 - alpha) u* alpha^n] / C."""
    with np.errstate(over="ignore", invalid="ignore"):
        an = np.exp(-src._mut * n)
        xn = -src.u_star * np.expm1(-src._mut * n)
        return (xn - n * src._om * src.u_star * an) * src._invc


def _cycle_lengths(multiplier: float, src: SourceModel) -> np.ndarray:
    """n_i(lambda) = min{n >= 1 : gamma_i(x_n) >= lambda} (float; inf where no n: lambda >= u*/C), the period of
    source i under the relaxed policy "crawl iff gamma(X) >= lambda" started after a crawl."""
    n = len(src)
    if multiplier <= 0.0:
        return np.ones(n)
    never = ~(multiplier < src.u_star * src._invc)
    lo = np.zeros(n)                      # gamma(x_lo) < lambda (x_0 = 0)
    hi = np.ones(n)
    # grow hi until gamma(x_hi) >= lambda, then bisect on the integers
    for _ in range(64):
        short = ~never & (_grid_index(hi, src) < multiplier)
        if not short.any():
            break
        lo = np.where(short, hi, lo)
        hi = np.where(short, 2.0 * hi, hi)
    while True:
        open_ = ~never & (hi - lo > 1.0)
        if not open_.any():
            break
        mid = np.floor(0.5 * (lo + hi))
        up = _grid_index(mid, src) >= multiplier
        hi = np.where(open_ & up, mid, hi)
        lo = np.where(open_ & ~up, mid, lo)
    return np.where(never, np.inf, hi)


def _gains(multiplier: float, n: np.ndarray, src: SourceModel) -> np.ndarray:
    """beta_i = [C lambda (n - 1) + x_n] / n for a cycle of n periods (C lambda where n is infinite)."""
    c_lam = src.cost * multiplier
    finite = np.isfinite(n)
    nf = np.where(finite, n, 1.0)
    xn = -src.u_star * np.expm1(-src._mut * nf)
    return np.where(finite, (c_lam * (nf - 1.0) + xn) / nf, c_lam)


@cites(AVRACHENKOV_BORKAR_2018)
def source_gain(multiplier: Any, sources: SourceModel) -> np.ndarray:
    """The optimal average reward ``beta_i(lambda)`` of each source on its own, with subsidy ``C_i lambda`` for
    each passive period (eq. (6) of Avrachenkov and Borkar (2018)).

    Parameters
    ----------
    multiplier : float
        ``lambda``, any finite number.
    sources : SourceModel
        The sources.

    Returns
    -------
    beta : ndarray of float64, shape (n_sources,)

    Notes
    -----
    The per-source dynamic programme solved exactly: its optimal policy crawls iff ``gamma(X) >= lambda``
    (Theorem 1), so after the first crawl it repeats a cycle of ``n = min{n >= 1: gamma(x_n) >= lambda}``
    periods, ``x_n = u* (1 - alpha^n)``, and by renewal reward (eq. (19))
    ``beta = [C lambda (n - 1) + x_n] / n`` (``C lambda`` when no ``n`` exists: never crawl).  ``n`` is found
    by bisection on the integers.  The tests check ``beta`` against relative value iteration.
    """
    caller = "source_gain"
    src = check_sources(sources, caller)
    lam = check_scalar(multiplier, "multiplier", caller)
    return _gains(lam, _cycle_lengths(lam, src), src)


@cites(AVRACHENKOV_BORKAR_2018)
def lagrangian_bound(multiplier: Any, sources: SourceModel, budget: Any) -> float:
    """The Lagrangian upper bound ``D(lambda) = sum_i beta_i(lambda) + lambda (M - sum_i C_i)``.

    For every ``lambda >= 0`` it bounds the long-run average reward of any policy of the deterministic model
    (eqs. (2)-(3) of Avrachenkov and Borkar (2018)) whose average budget ``sum_i C_i v_i`` is at most ``M``,
    and so of every top-M policy when ``C = 1``; also of any policy of the stochastic model (eq. (23)) that
    does not look at the states (its expected rewards are the deterministic ones), such as
    :class:`~freshcore.whittle_policies.GreedyPolicy` or round robin.  Its minimum over ``lambda`` is the
    relaxed optimum (:func:`relaxed_optimum`).

    Parameters
    ----------
    multiplier : float
        ``lambda >= 0``.
    sources : SourceModel
        The sources.
    budget : float
        ``M > 0``.

    Returns
    -------
    float
    """
    caller = "lagrangian_bound"
    src = check_sources(sources, caller)
    lam = check_scalar(multiplier, "multiplier", caller, low=0.0)
    m = check_scalar(budget, "budget", caller, low=0.0, low_inclusive=False)
    return float(_gains(lam, _cycle_lengths(lam, src), src).sum() + lam * (m - src.cost.sum()))


class RelaxedOptimum:
    """The exact optimum of the relaxed problem (:func:`relaxed_optimum`).

    Attributes
    ----------
    value : float
        The optimal long-run average reward under the average budget: the least Lagrangian upper bound.
    multiplier : float
        ``lambda*``, the optimal Lagrange multiplier (the Whittle index at which sources are crawled).
    cycle : ndarray of float64, shape (n_sources,)
        The period ``n_i`` of each source (``inf``: never crawled) when it crawls at ``gamma(X) >= lambda*``.
    share : ndarray of float64, shape (n_sources,)
        For the sources indifferent at ``lambda*`` (``gamma_i(x_{n_i}) = lambda*``), the fraction of their
        cycles that are ``n_i`` long, the rest ``n_i + 1`` (time-sharing); 1 for the others.
    frequency : ndarray of float64, shape (n_sources,)
        Crawls per period of each source; ``sum_i C_i frequency_i = M`` unless ``M >= sum_i C_i``.
    """

    __slots__ = ("cycle", "frequency", "multiplier", "share", "value")

    def __init__(self, value: float, multiplier: float, cycle: np.ndarray, share: np.ndarray,
                 frequency: np.ndarray) -> None:
        self.value, self.multiplier, self.cycle, self.share, self.frequency = value, multiplier, cycle, share, frequency

    def __repr__(self) -> str:
        return f"RelaxedOptimum(value={self.value!r}, multiplier={self.multiplier!r})"


@cites(AVRACHENKOV_BORKAR_2018)
def relaxed_optimum(sources: SourceModel, budget: Any) -> RelaxedOptimum:
    """The exact optimum of the relaxed problem: the average budget ``sum_i C_i v_i = M`` met on average only.

    Section VII of Avrachenkov and Borkar (2018): with one multiplier ``lambda`` each source solves its own
    problem (:func:`source_gain`); the relaxed optimum is ``min_lambda D(lambda)``
    (:func:`lagrangian_bound`), an upper bound on every policy that crawls at most ``M`` a period.  In discrete
    time it crawls a source iff ``gamma(X) >= lambda*`` (SPEC section 5), time-sharing at the tie.

    Parameters
    ----------
    sources : SourceModel
        The sources.
    budget : float
        ``M``, the average budget: ``0 < M <= sum_i C_i`` (``N``, the number of sources, when every ``C_i =
        1``: crawling every source every period).  A fractional ``M`` is fine: the relaxed constraint holds on
        average only (e.g. ``M = 1.3``: 1.3 sources a period in the long run).

    Returns
    -------
    RelaxedOptimum

    Raises
    ------
    ValueError
        If ``budget`` is not a finite number in ``(0, sum_i C_i]``.

    Notes
    -----
    ``F(lambda) = sum_i C_i / n_i(lambda)``, the budget the relaxed policy uses, steps down at the grid
    indices ``gamma_i(x_n)``; bisection on ``lambda`` finds the step where it crosses ``M``, ``lambda*`` is
    that grid index, and the sources indifferent there alternate cycles of ``n`` and ``n + 1`` periods in the
    proportion that meets ``M`` exactly (by strong duality any proportion gives ``D(lambda*)``, so the value is
    ``D(lambda*)``; the tests check it against the rewards of the time-shared cycles and against
    :class:`~freshcore.whittle_policies.RelaxedPolicy` simulated).  For the sources of Table I with ``M = 1``
    it is 260.39 (the paper's 260.96 is not reachable: SPEC section 5).

    Examples
    --------
    >>> from freshcore.whittle import SourceModel, relaxed_optimum
    >>> table1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    >>> opt = relaxed_optimum(table1, 1)
    >>> round(opt.value, 2), opt.cycle.tolist()
    (260.39, [2.0, 2.0, inf, inf])
    """
    caller = "relaxed_optimum"
    src = check_sources(sources, caller)
    total_cost = float(src.cost.sum())
    m = check_scalar(budget, "budget", caller, low=0.0, low_inclusive=False)
    if m > total_cost:
        raise ValueError(
            f"The 'budget' parameter of {caller} must be in (0, {total_cost!r}], the budget that crawls every "
            f"source every period (sum of 'cost'; the number of sources when every cost is 1). Got {budget!r} "
            "instead."
        )
    n = len(src)
    if m == total_cost:
        cycle = np.ones(n)
        return RelaxedOptimum(float(src.u.sum()), 0.0, cycle, np.ones(n), np.ones(n))

    def used(lam: float) -> float:
        return float((src.cost / _cycle_lengths(lam, src)).sum())

    lo, hi = 0.0, float((src.u_star * src._invc).max())   # used(lo) >= M > used(hi) = 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if used(mid) >= m:
            lo = mid
        else:
            hi = mid
    # lambda* is the grid index where the step is: the smallest gamma_i(x_{n_i(lo)}) >= lo
    cyc = _cycle_lengths(lo, src)
    finite = np.isfinite(cyc)
    at = np.where(finite, _grid_index(np.where(finite, cyc, 1.0), src), np.inf)
    lam = float(at.min())
    cyc = _cycle_lengths(lam, src)
    tie = finite & (at <= lam * (1 + 1e-12))
    rest = float((src.cost[~tie] / cyc[~tie]).sum())
    share = np.ones(n)
    if tie.any():
        ct, nt = src.cost[tie], cyc[tie]
        # p in [0, 1] with sum_tie C / (n + 1 - p) = M - rest (increasing in p)
        target = m - rest
        plo, phi = 0.0, 1.0
        for _ in range(100):
            p = 0.5 * (plo + phi)
            if float((ct / (nt + 1.0 - p)).sum()) < target:
                plo = p
            else:
                phi = p
        p = 0.5 * (plo + phi)
        share[tie] = 1.0 if p > 1.0 - 1e-12 else 0.0 if p < 1e-12 else p   # exact at the ends: no drift
    mean_cycle = np.where(np.isfinite(cyc), cyc + 1.0 - share, np.inf)
    frequency = np.where(np.isfinite(mean_cycle), 1.0 / np.where(np.isfinite(mean_cycle), mean_cycle, 1.0), 0.0)
    value = float(_gains(lam, cyc, src).sum() + lam * (m - total_cost))
    return RelaxedOptimum(value, lam, cyc, share, frequency)


@cites(AVRACHENKOV_BORKAR_2018)
def lambert_threshold(multiplier: Any, sources: SourceModel) -> np.ndarray:
    """The optimal threshold ``x_bar(lambda)`` of eq. (21) of Avrachenkov and Borkar (2018), lower branch.

    ``x_bar = u* (1 - exp(1 + W_{-1}((C lambda / u* - 1) / e)))`` for ``0 < C lambda < u*``, extended by
    ``x_bar = 0`` for ``lambda <= 0`` and ``x_bar = C lambda`` for ``C lambda >= u*`` (SPEC section 5; both
    extensions are continuous, so every finite ``lambda`` has a threshold, never NaN).

    Parameters
    ----------
    multiplier : float or array_like of shape (n_sources,)
        ``lambda``, finite.
    sources : SourceModel
        The sources.

    Returns
    -------
    x_bar : ndarray of float64, shape (n_sources,)

    Notes
    -----
    The stationary point of the renewal reward (19) in a continuous number of periods ``eta``: it is the
    optimum for a continuous period, not the exact discrete-time relaxed policy, which crawls iff
    ``gamma(X) >= lambda`` (SPEC section 5; :func:`relaxed_optimum`).  The principal branch that the paper's
    ``W`` suggests gives ``x_bar <= 0``.  ``1 + W_{-1}`` comes from the compiled lower branch behind
    :func:`freshcore.special.lambertw`, in its shifted form that takes ``q = 1 + e z = C lambda / u*``
    exactly: near ``lambda = 0``, the branch point, ``x_bar ~ sqrt(2 C lambda u*)`` keeps all its digits.

    Examples
    --------
    >>> from freshcore.whittle import SourceModel, lambert_threshold
    >>> table1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    >>> lambert_threshold(100.0, table1).round(2).tolist()
    [231.27, 280.75, 100.0, 100.0]
    """
    caller = "lambert_threshold"
    src = check_sources(sources, caller)
    lam = _numbers(multiplier, "multiplier", caller)
    if np.ndim(multiplier) == 1 and len(lam) != len(src):
        raise ValueError(
            f"The 'multiplier' parameter of {caller} must be a number or an array of length {len(src)} "
            f"(the number of sources). Got length {len(lam)} instead."
        )
    c_lam = np.ascontiguousarray((lam.reshape(-1)[0] if np.ndim(multiplier) == 0 else lam) * src.cost)
    out = np.empty(len(src))
    _whittle.threshold_kernel(c_lam, src.u_star, out)
    return out
