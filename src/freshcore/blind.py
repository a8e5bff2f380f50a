"""Blind sampling: the update-interval distribution of pages that need not change like a Poisson process.

A crawler sees a page only when it downloads it.  From those downloads it learns either the page's age
(*age sampling*: a last-modified time) or only whether the page changed since the previous download
(*comparison sampling*: the flags Q_{j,j+1}).  Li, Cline and Loguinov (2017) show that the usual estimators
are biased unless the updates are Poisson, and give estimators of the age distribution
G_U(x) = μ ∫_0^x (1 − F_U(y)) dy of the update process (its forward-recurrence distribution), from which the
update-interval distribution F_U and the update rate μ follow by differentiation.  SPEC §6 settles their
definitions.

Estimators (names as in the paper)
    :func:`m1`, :func:`m2` (age sampling); :func:`m3`, :func:`m4`, :func:`m5` (comparison sampling at a
    constant interval); :func:`g_m4`, :func:`m6` (comparison sampling at random intervals).
Recovering F_U and μ
    :func:`update_distribution` (finite differences of an estimated G_U), :func:`flat_bin_width` (the bin
    width from the flat region of the estimated rate).
Distances
    :func:`wmrd` (eq. (48)), :func:`ks` (eq. (49)).
Simulation
    :class:`Exponential`, :class:`Pareto`, :class:`Constant`, :class:`Uniform`, :class:`Sampled` (interval
    distributions); :func:`renewal_times`; :func:`simulate_log` (a crawler's log, :class:`BlindLog`).
Crawl rates from G_U (beyond the paper)
    :class:`AgeTable` (the pages' G_U tabulated on a grid, e.g. estimated: the update laws that
    :func:`freshcore.rates.optimal_rates` and :func:`freshcore.rates.freshness` take with ``model="renewal"``,
    as they take :class:`Exponential`, :class:`Pareto`, :class:`Constant` and :class:`Uniform` laws);
    :func:`renewal_rates` and :func:`renewal_freshness` (their shorthands for a table).

Conventions: ``times`` are the n sample (download) times, strictly increasing; ``changed`` are the n − 1 flags
Q_{j,j+1}, 1 iff the page changed between sample j and sample j + 1; ``ages`` are the n ages A_U(s_j)
(time since the last update) at the samples.  Q_ij for i < j is the OR of the flags in between.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from . import _blind
from ._papers import LI_2017, cites
from ._renewal import AgeTable
from ._validation import check_array, check_binary, check_choice, check_int, check_rng, check_scalar
from .rates import freshness as _freshness
from .rates import optimal_rates as _optimal_rates

__all__ = [
    "AgeTable",
    "BlindLog",
    "Constant",
    "Exponential",
    "IntervalDistribution",
    "LatticeSamplingWarning",
    "Pareto",
    "Sampled",
    "Uniform",
    "UpdateDistribution",
    "flat_bin_width",
    "g_m4",
    "ks",
    "m1",
    "m2",
    "m3",
    "m4",
    "m5",
    "m6",
    "renewal_freshness",
    "renewal_rates",
    "renewal_times",
    "simulate_log",
    "update_distribution",
    "wmrd",
]

# m6 refuses more bins than this (1.6 GB of counts with max_bin=None; the kernels' bins are int32)
_MAX_BINS = 10**8


@cites(LI_2017)
class LatticeSamplingWarning(UserWarning):
    """The sample times lie on a lattice (every interval a multiple of one length): if the updates are lattice
    too, the samples phase-lock with them and no estimator is consistent (Assumption 1 of Li, Cline and
    Loguinov (2017))."""


# ---------------------------------------------------------------------------
# interval distributions and renewal processes
# ---------------------------------------------------------------------------


class IntervalDistribution:
    """The distribution of the intervals of a renewal process (between updates, or between samples).

    Subclasses give :meth:`sample` (independent intervals) and :meth:`length_biased` (the interval that
    covers a fixed time, density x f(x)/E[X], which gives a stationary start), :attr:`mean`, and where known
    in closed form :meth:`cdf` (F) and :meth:`age_cdf` (G, the age and residual distribution of the
    stationary process).
    """

    lattice: bool = False  # every interval a multiple of one length (phase lock, Assumption 1)

    @property
    def mean(self) -> float:
        raise NotImplementedError

    @property
    def rate(self) -> float:
        """1 / mean: events per unit time."""
        return 1.0 / self.mean

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def length_biased(self, size: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def cdf(self, x: Any) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} has no closed-form cdf")

    def age_cdf(self, x: Any) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} has no closed-form age_cdf")


class Exponential(IntervalDistribution):
    """Exponential intervals of rate ``rate`` (a Poisson process): F = G = 1 − e^{−rate x}.

    Examples
    --------
    >>> from freshcore.blind import Exponential
    >>> Exponential(2.0).age_cdf([0.5]).round(4).tolist()
    [0.6321]
    """

    def __init__(self, rate: float) -> None:
        self._rate = check_scalar(rate, "rate", "Exponential", low=0.0, low_inclusive=False)

    def __repr__(self) -> str:
        return f"Exponential(rate={self._rate!r})"

    @property
    def mean(self) -> float:
        return 1.0 / self._rate

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.exponential(1.0 / self._rate, size)

    def length_biased(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.gamma(2.0, 1.0 / self._rate, size)

    def cdf(self, x: Any) -> np.ndarray:
        return -np.expm1(-self._rate * np.maximum(np.asarray(x, dtype=float), 0.0))

    age_cdf = cdf


@cites(LI_2017)
class Pareto(IntervalDistribution):
    """Pareto (Lomax) intervals: F(x) = 1 − (1 + x/β)^{−α}, α > 1, mean β/(α − 1); the updates of Li, Cline and
    Loguinov (2017) are α = 3, β = 1 (μ = 2).  G(x) = 1 − (1 + x/β)^{−(α − 1)}.

    Examples
    --------
    >>> from freshcore.blind import Pareto
    >>> d = Pareto(3.0, 1.0)
    >>> d.mean, d.age_cdf([1.0]).tolist()
    (0.5, [0.75])
    """

    def __init__(self, alpha: float, beta: float = 1.0) -> None:
        self.alpha = check_scalar(alpha, "alpha", "Pareto", low=1.0, low_inclusive=False)
        self.beta = check_scalar(beta, "beta", "Pareto", low=0.0, low_inclusive=False)

    def __repr__(self) -> str:
        return f"Pareto(alpha={self.alpha!r}, beta={self.beta!r})"

    @property
    def mean(self) -> float:
        return self.beta / (self.alpha - 1.0)

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return self.beta * rng.pareto(self.alpha, size)  # numpy's pareto is the Lomax law with beta = 1

    def length_biased(self, size: int, rng: np.random.Generator) -> np.ndarray:
        # x f(x) ∝ y (1 + y)^{-alpha-1}, y = x/beta: the beta-prime law (2, alpha - 1), a ratio of gammas
        return self.beta * rng.gamma(2.0, 1.0, size) / rng.gamma(self.alpha - 1.0, 1.0, size)

    def cdf(self, x: Any) -> np.ndarray:
        y = np.maximum(np.asarray(x, dtype=float), 0.0) / self.beta
        return -np.expm1(-self.alpha * np.log1p(y))

    def age_cdf(self, x: Any) -> np.ndarray:
        y = np.maximum(np.asarray(x, dtype=float), 0.0) / self.beta
        return -np.expm1(-(self.alpha - 1.0) * np.log1p(y))


class Constant(IntervalDistribution):
    """Intervals of one length ``value`` (periodic updates or crawls; a lattice law).  G(x) = min(x/value, 1).

    Examples
    --------
    >>> from freshcore.blind import Constant
    >>> Constant(2.0).age_cdf([1.0, 3.0]).tolist()
    [0.5, 1.0]
    """

    lattice = True

    def __init__(self, value: float) -> None:
        self.value = check_scalar(value, "value", "Constant", low=0.0, low_inclusive=False)

    def __repr__(self) -> str:
        return f"Constant(value={self.value!r})"

    @property
    def mean(self) -> float:
        return self.value

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.full(size, self.value)

    length_biased = sample

    def cdf(self, x: Any) -> np.ndarray:
        return (np.asarray(x, dtype=float) >= self.value).astype(float)

    def age_cdf(self, x: Any) -> np.ndarray:
        return np.clip(np.asarray(x, dtype=float) / self.value, 0.0, 1.0)


class Uniform(IntervalDistribution):
    """Intervals uniform on [low, high], 0 <= low < high (the paper's uniform sampler is [0, 2/λ]).

    Examples
    --------
    >>> from freshcore.blind import Uniform
    >>> Uniform(0.0, 2.0).age_cdf([1.0, 2.0]).tolist()
    [0.75, 1.0]
    """

    def __init__(self, low: float, high: float) -> None:
        self.low = check_scalar(low, "low", "Uniform", low=0.0)
        self.high = check_scalar(high, "high", "Uniform", low=self.low, low_inclusive=False)

    def __repr__(self) -> str:
        return f"Uniform(low={self.low!r}, high={self.high!r})"

    @property
    def mean(self) -> float:
        return 0.5 * (self.low + self.high)

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(self.low, self.high, size)

    def length_biased(self, size: int, rng: np.random.Generator) -> np.ndarray:
        # density x / (mean (high - low)) on [low, high]: CDF (x^2 - low^2) / (high^2 - low^2)
        lo2, hi2 = self.low**2, self.high**2
        return np.sqrt(lo2 + rng.random(size) * (hi2 - lo2))

    def cdf(self, x: Any) -> np.ndarray:
        return np.clip((np.asarray(x, dtype=float) - self.low) / (self.high - self.low), 0.0, 1.0)

    def age_cdf(self, x: Any) -> np.ndarray:
        x = np.clip(np.asarray(x, dtype=float), 0.0, self.high)
        over = np.maximum(x - self.low, 0.0)  # ∫_0^x (1 - F) = x - over^2 / (2 (high - low))
        return np.minimum((x - over**2 / (2.0 * (self.high - self.low))) / self.mean, 1.0)


class Sampled(IntervalDistribution):
    """Intervals drawn by a user's ``sampler(rng, size)`` (positive, finite).

    The stationary start needs the length-biased law: it is drawn by picking from ``pool`` draws of the
    sampler with probabilities proportional to their lengths (exact as ``pool`` grows), and :attr:`mean` is
    the mean of one such pool.

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.blind import Sampled
    >>> d = Sampled(lambda rng, size: rng.gamma(4.0, 0.25, size))
    >>> d.sample(3, np.random.default_rng(0)).shape
    (3,)
    """

    def __init__(self, sampler: Callable[[np.random.Generator, int], Any], *, pool: int = 1 << 16,
                 rng: Any = 0) -> None:
        if not callable(sampler):
            raise TypeError(f"The 'sampler' parameter of Sampled must be callable. Got {type(sampler).__name__}.")
        self.sampler = sampler
        self.pool = check_int(pool, "pool", "Sampled", low=1)
        self._mean = float(self.sample(self.pool, check_rng(rng, "Sampled")).mean())

    def __repr__(self) -> str:
        return f"Sampled({self.sampler!r})"

    @property
    def mean(self) -> float:
        return self._mean

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        s = np.asarray(self.sampler(rng, size), dtype=float)
        if s.shape != (size,):
            raise ValueError(f"The 'sampler' of Sampled must return an array of shape ({size},). "
                             f"Got shape {s.shape} instead.")
        bad = ~(s > 0.0) | ~np.isfinite(s)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"The 'sampler' of Sampled must return finite intervals > 0; "
                             f"draw [{i}] = {s[i].item()!r}.")
        return s

    def length_biased(self, size: int, rng: np.random.Generator) -> np.ndarray:
        s = self.sample(self.pool, rng)
        return rng.choice(s, size=size, p=s / s.sum())


def _distribution(d: Any, name: str, caller: str) -> IntervalDistribution:
    if isinstance(d, IntervalDistribution):
        return d
    if callable(d):
        return Sampled(d)
    raise TypeError(f"The {name!r} parameter of {caller} must be an IntervalDistribution (Exponential, Pareto, "
                    f"Constant, Uniform, Sampled) or a sampler(rng, size). Got {type(d).__name__} instead.")


def _renewal(dist: IntervalDistribution, horizon: float, stationary: bool,
             gen: np.random.Generator) -> tuple[np.ndarray, float]:
    """Event times in [0, horizon) and the last event at or before 0 (stationary) or 0 itself (an event)."""
    if stationary:
        length = float(dist.length_biased(1, gen)[0])
        before = -gen.random() * length  # the covering interval, split at a uniform point
        t = before + length
    else:
        before = t = 0.0
    chunks = [np.array([t])]
    mean = dist.mean
    while t < horizon:
        m = (horizon - t) / mean
        m = int(m + 5.0 * math.sqrt(m) + 16.0)
        more = t + np.cumsum(dist.sample(m, gen))
        chunks.append(more)
        t = float(more[-1])
    times = np.concatenate(chunks)
    return times[: np.searchsorted(times, horizon, side="left")], before


def renewal_times(interval: Any, horizon: float, *, stationary: bool = True, rng: Any = None) -> np.ndarray:
    """The event times in [0, horizon) of a renewal process with intervals drawn from ``interval``.

    Parameters
    ----------
    interval : IntervalDistribution or callable
        The interval law (a callable ``sampler(rng, size)`` is wrapped in :class:`Sampled`).
    horizon : float > 0
        The end of the window.
    stationary : bool, default True
        Start the process in equilibrium (as if it had run forever: the interval covering time 0 is drawn
        length-biased and split at a uniform point), so the age and residual at every time have law G.
        With False the process has an event at time 0 (a crawler that starts by downloading the page).
    rng : None, int or numpy.random.Generator
        Source of randomness; the same seed gives the same times.

    Returns
    -------
    times : ndarray of float64
        Sorted event times (drawn in blocks: vectorised).

    Examples
    --------
    >>> from freshcore.blind import Constant, renewal_times
    >>> renewal_times(Constant(1.0), 3.0, stationary=False).tolist()
    [0.0, 1.0, 2.0]
    """
    caller = "renewal_times"
    dist = _distribution(interval, "interval", caller)
    horizon = check_scalar(horizon, "horizon", caller, low=0.0, low_inclusive=False)
    return _renewal(dist, horizon, bool(stationary), check_rng(rng, caller))[0]


@dataclass(frozen=True)
class BlindLog:
    """A crawler's log of one page, with the truth behind it.

    Attributes
    ----------
    times : ndarray, shape (n,)
        Sample (download) times.
    changed : ndarray of uint8, shape (n - 1,)
        Q_{j,j+1}: 1 iff an update fell in (times[j], times[j + 1]].
    ages : ndarray, shape (n,)
        The age A_U at each sample (what a last-modified header would tell).
    update_times : ndarray
        The update times in [0, horizon) (hidden from a crawler).
    """

    times: np.ndarray
    changed: np.ndarray
    ages: np.ndarray
    update_times: np.ndarray


@cites(LI_2017)
def simulate_log(updates: Any, samples: Any, horizon: float, *, rng: Any = None) -> BlindLog:
    """Simulate what a crawler logs about one page: stationary renewal updates, renewal samples from time 0.

    Parameters
    ----------
    updates, samples : IntervalDistribution or callable
        The laws of the update intervals U and of the sampling intervals S (a callable ``sampler(rng,
        size)`` is wrapped in :class:`Sampled`).
    horizon : float > 0
        Samples fall in [0, horizon).
    rng : None, int or numpy.random.Generator
        Source of randomness; the same seed gives the same log.

    Returns
    -------
    BlindLog

    Notes
    -----
    The update process starts in equilibrium (Section III-A of Li, Cline and Loguinov (2017)), so the age at
    every sample has law G_U; the first sample is at time 0.

    Examples
    --------
    >>> from freshcore.blind import Constant, Pareto, simulate_log
    >>> log = simulate_log(Pareto(3.0), Constant(1.0), 1000.0, rng=0)
    >>> len(log.times), len(log.changed), bool(log.ages.min() >= 0)
    (1000, 999, True)
    """
    caller = "simulate_log"
    u_dist = _distribution(updates, "updates", caller)
    s_dist = _distribution(samples, "samples", caller)
    horizon = check_scalar(horizon, "horizon", caller, low=0.0, low_inclusive=False)
    gen = check_rng(rng, caller)
    u, before = _renewal(u_dist, horizon, True, gen)
    s, _ = _renewal(s_dist, horizon, False, gen)
    every = np.concatenate(([before], u))
    last = np.searchsorted(every, s, side="right") - 1  # the last update at or before each sample
    return BlindLog(times=s, changed=(np.diff(last) > 0).astype(np.uint8), ages=s - every[last], update_times=u)


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


def _flags(x: Any, caller: str, n: int | None = None, *, name: str = "changed", of: str = "times") -> np.ndarray:
    """0/1 flags as a contiguous uint8 array (bool and uint8 without a copy), one per pair of consecutive
    samples when ``n`` (the number of samples) is given."""
    arr = x if isinstance(x, np.ndarray) else None
    if arr is not None and arr.ndim == 1 and arr.dtype in (np.bool_, np.uint8):
        arr = np.ascontiguousarray(arr).view(np.uint8)
        if arr.size == 0:
            raise ValueError(f"The {name!r} parameter of {caller} must not be empty.")
        i = _blind.first_not_binary(arr)
        if i >= 0:
            raise ValueError(f"The {name!r} parameter of {caller} must contain only 0/1 (or False/True) flags; "
                             f"{name}[{i}] = {arr[i].item()!r}.")
    else:
        arr = check_binary(x, name, caller)
    if n is not None and len(arr) != n - 1:
        raise ValueError(f"The {name!r} parameter of {caller} must have one flag per pair of consecutive samples, "
                         f"len({of}) - 1 = {n - 1}. Got {len(arr)} instead.")
    return arr


def _floats(x: Any, name: str, caller: str) -> np.ndarray:
    """A 1-D float64 array, not empty; float64 arrays pass without a scan (the compiled scans check them)."""
    if isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype == np.float64 and x.size:
        return np.ascontiguousarray(x)
    return check_array(x, name, caller, allow_inf=True)  # NaN is named here, the rest by the scans


def _bad_age(ages: np.ndarray, i: int, caller: str) -> None:
    if i >= 0:
        raise ValueError(f"The 'ages' parameter of {caller} must contain finite numbers >= 0; "
                         f"ages[{i}] = {ages[i].item()!r}.")


def _times(x: Any, caller: str) -> np.ndarray:
    arr = _floats(x, "times", caller)
    i = _blind.first_not_increasing(arr)
    if i >= 0:
        if i == 0 or not np.isfinite(arr[i]):
            raise ValueError(f"The 'times' parameter of {caller} must contain finite numbers; "
                             f"times[{i}] = {arr[i].item()!r}.")
        raise ValueError(f"The 'times' parameter of {caller} must be strictly increasing (sorted, no duplicates); "
                         f"times[{i}] = {arr[i].item()!r} is not above times[{i - 1}] = {arr[i - 1].item()!r}.")
    return arr


def _points(x: Any, caller: str, name: str = "x") -> np.ndarray:
    arr = check_array(x, name, caller, low=0.0)
    bad = np.flatnonzero(np.diff(arr) <= 0.0)
    if bad.size:
        i = int(bad[0]) + 1
        raise ValueError(f"The {name!r} parameter of {caller} must be strictly increasing; {name}[{i}] = "
                         f"{arr[i].item()!r} is not above {name}[{i - 1}] = {arr[i - 1].item()!r}.")
    return arr


_FEW_POINTS = 32  # up to this many points, one vectorised count per point beats a search per value


def _age_cdf(ages: np.ndarray, keep: np.ndarray | None, xs: np.ndarray, caller: str, total: int) -> np.ndarray:
    """The fraction of the ages (those with ``keep[j] = 1`` if given) <= each point, ``total`` of them: with few
    points the compiled pass counts #{ages <= x_m} directly and reports the first bad age in the same pass;
    else the ages are scanned, then counted per rank (those above exactly m points)."""
    if len(xs) <= _FEW_POINTS:
        counts = np.zeros(len(xs), dtype=np.int64)
        _bad_age(ages, _blind.le_counts(ages, keep, xs, counts), caller)
        return counts / total if total else np.full(len(xs), np.nan)
    _bad_age(ages, _blind.first_not_age(ages), caller)
    counts = np.zeros(len(xs) + 1, dtype=np.int64)
    _blind.rank_counts(ages, keep, xs, counts)
    return _cdf(counts, total)


def _gaps(changed: np.ndarray, k: int) -> tuple[np.ndarray, int, int, int]:
    """The histogram of the gaps between consecutive detections (index g = 1 .. k, k + 1 for longer ones),
    the number of detections, and the first and last detection (-1 without any)."""
    lanes = np.zeros((4, k + 2), dtype=np.int64)
    detections, first, last = _blind.detection_gaps(changed, lanes)
    return lanes.sum(axis=0), detections, first, last


def _cdf(counts: np.ndarray, total: float) -> np.ndarray:
    """The CDF at the points from the per-rank counts (rank m: exceeds the first m points); NaN without data."""
    if total <= 0:
        return np.full(len(counts) - 1, np.nan)
    return np.cumsum(counts[:-1]) / total


# ---------------------------------------------------------------------------
# age sampling
# ---------------------------------------------------------------------------


@cites(LI_2017)
def m1(ages: Any, changed: Any, x: Any) -> np.ndarray:
    """M1: the distribution of the ages kept when only the last sample before each detected update counts.

    From an age-sampling log (the page's age at every download, from a last-modified time, and the change
    flags), M1 keeps the age at sample j only if the page changed before sample j + 1 (the largest age seen
    in each update interval, as Cho and Garcia-Molina (2003) and Matloff (2005) proposed) and returns the
    fraction of kept ages <= each x.  It is biased unless the updates are Poisson: it measures neither F_U
    nor G_U (eq. (8) of Li, Cline and Loguinov (2017)).

    Parameters
    ----------
    ages : array-like of float >= 0, shape (n,)
        Ages A_U(s_j) at the n samples.
    changed : array-like of 0/1, shape (n - 1,)
        Q_{j,j+1}: 1 iff the page changed between sample j and j + 1.
    x : array-like of float >= 0, strictly increasing
        Where to evaluate.

    Returns
    -------
    ndarray, shape (len(x),)
        G_1(x, T) of eq. (7) (NaN if no age is kept).

    Notes
    -----
    Its limit is 1 − E[G_U(x + S) − G_U(x)] / E[G_U(S)] (eq. (8)).

    Examples
    --------
    >>> from freshcore.blind import m1
    >>> m1([0.2, 0.5, 0.1, 0.7], [0, 1, 1], [0.3, 0.6]).tolist()
    [0.5, 1.0]
    """
    caller = "m1"
    a = _floats(ages, "ages", caller)
    c = _flags(changed, caller, len(a), of="ages")
    xs = _points(x, caller)
    return _age_cdf(a, c, xs, caller, int(np.count_nonzero(c)))


@cites(LI_2017)
def m2(ages: Any, x: Any) -> np.ndarray:
    """M2: the distribution of all observed ages, a consistent estimate of the age distribution G_U.

    From an age-sampling log (the page's age at every download, from a last-modified time), M2 returns the
    fraction of ages <= each x.  Every sample counts, even several in one update interval; the estimate
    converges to G_U (Theorem 5 of Li, Cline and Loguinov (2017)), from which :func:`update_distribution`
    recovers F_U and μ.

    Parameters
    ----------
    ages : array-like of float >= 0, shape (n,)
        Ages A_U(s_j) at the samples.
    x : array-like of float >= 0, strictly increasing
        Where to evaluate.

    Returns
    -------
    ndarray, shape (len(x),)
        G_2(x, T) of eq. (29).

    Examples
    --------
    >>> from freshcore.blind import m2
    >>> m2([0.2, 0.5, 0.1, 0.7], [0.3, 0.6]).tolist()
    [0.5, 0.75]
    """
    caller = "m2"
    a = _floats(ages, "ages", caller)
    xs = _points(x, caller)
    return _age_cdf(a, None, xs, caller, len(a))


# ---------------------------------------------------------------------------
# comparison sampling at a constant interval
# ---------------------------------------------------------------------------

_CONSTANT_LOG = """changed : array-like of 0/1, shape (n - 1,)
    Q_{j,j+1} of n samples Δ apart.
n_points : int >= 1
    Evaluate at x_n = nΔ, n = 1 .. n_points."""


_F = TypeVar("_F", bound=Callable[..., Any])


def _constant_log(func: _F) -> _F:
    """Decorator: the parameters of M3-M5 (a comparison-sampling log at a constant interval) in the docstring,
    at ``{constant log}``."""
    if func.__doc__ is not None:  # python -OO
        func.__doc__ = func.__doc__.replace("{constant log}", _CONSTANT_LOG.replace("\n", "\n    "))
    return func


def _constant_gaps(changed: Any, n_points: int, caller: str) -> tuple[np.ndarray, int, np.ndarray, int, int, int]:
    """M3-M5's arguments checked: the flags, the number of points, and the gaps between detections with their
    number, first and last (:func:`_gaps`)."""
    c = _flags(changed, caller)
    k = check_int(n_points, "n_points", caller, low=1)
    return (c, k, *_gaps(c, k))



@cites(LI_2017)
@_constant_log
def m3(changed: Any, n_points: int) -> np.ndarray:
    """M3: the distribution of the distances between consecutive detected updates, at a constant interval Δ.

    From a comparison-sampling log at constant interval Δ (only whether the page changed between consecutive
    downloads), M3 takes the number of downloads between two consecutive detections, times Δ, as a sample of
    the update interval (the "create-based method" of earlier work) and returns the fraction of these
    samples <= nΔ.  It is biased unless the updates are Poisson: its limit is a discretised M1 (Theorem 6 of
    Li, Cline and Loguinov (2017)), with mean E[D_3] = Δ / G_U(Δ) (Theorem 7).

    Parameters
    ----------
    {constant log}

    Returns
    -------
    ndarray, shape (n_points,)
        G_3(x_n, T) of eq. (35) (NaN with fewer than two detections).

    Examples
    --------
    >>> from freshcore.blind import m3
    >>> m3([1, 0, 0, 1, 1, 0, 1], 3).tolist()
    [0.3333333333333333, 0.6666666666666666, 1.0]
    """
    hist = _constant_gaps(changed, n_points, "m3")[2]
    return _cdf(hist[1:], hist.sum())


@cites(LI_2017)
@_constant_log
def m4(changed: Any, n_points: int) -> np.ndarray:
    """M4: the distribution of the rounded-up ages at every sample, at a constant interval Δ; Δ-consistent
    for the age distribution G_U.

    From a comparison-sampling log at constant interval Δ, M4 gives every download the time since the
    download after which the last change was detected (Δ if the page changed since the previous download,
    else the previous value + Δ; eq. (40)), an upper rounding of the page's age, and returns the fraction of
    these values <= nΔ.  It converges to G_U(nΔ) (Theorem 8 of Li, Cline and Loguinov (2017)).  Samples before
    the first detection (whose age is unknown) are dropped.

    Parameters
    ----------
    {constant log}

    Returns
    -------
    ndarray, shape (n_points,)
        G_4(x_n, T) (NaN if the page never changed).

    Examples
    --------
    >>> from freshcore.blind import m4
    >>> m4([0, 1, 0, 0, 1, 0], 3).tolist()
    [0.4, 0.8, 1.0]
    """
    # a run of L samples from a detection to the next adds one sample to each of the values 1 .. L (eq. (40)),
    # so the count of value r is #{gaps >= r} plus 1 if the last run is that long
    c, k, hist, detections, first, last = _constant_gaps(changed, n_points, "m4")
    if not detections:
        return np.full(k, np.nan)
    r = np.arange(1, k + 1)
    runs = hist[::-1].cumsum()[::-1][1:k + 1] + (r <= len(c) - last)
    return np.cumsum(runs) / (len(c) - first)


@cites(LI_2017)
@_constant_log
def m5(changed: Any, n_points: int) -> np.ndarray:
    """M5: M3's samples capped at nΔ, summed and divided by the window; Δ-consistent for G_U with M3's few
    samples.

    From a comparison-sampling log at constant interval Δ, M5 takes M3's samples (the distance between
    consecutive detections), passes each through min(nΔ, ·), and divides their sum by the length of the
    window T = (n − 1)Δ (eq. (44) of Li, Cline and Loguinov (2017)).  It converges to G_U(nΔ) (Theorem 9)
    while keeping only one sample per detected update.  As SPEC §6 settles, the first detection (whose
    distance to the previous one is unknown) is dropped and the sum is divided by T, not by the number of
    detections.

    Parameters
    ----------
    {constant log}

    Returns
    -------
    ndarray, shape (n_points,)
        G_5(x_n, T).

    Examples
    --------
    >>> from freshcore.blind import m5
    >>> m5([1, 0, 0, 1, 1, 0, 1], 3).tolist()
    [0.42857142857142855, 0.7142857142857143, 0.8571428571428571]
    """
    c, k, hist = _constant_gaps(changed, n_points, "m5")[:3]
    # sum over gaps g of min(n, g) = sum_{m = 1..n} #{g >= m}
    at_least = hist[::-1].cumsum()[::-1]  # at_least[m] = #{g >= m}
    return np.cumsum(at_least[1:k + 1]) / len(c)


# ---------------------------------------------------------------------------
# comparison sampling at random intervals
# ---------------------------------------------------------------------------


@cites(LI_2017)
def g_m4(times: Any, changed: Any, x: Any) -> np.ndarray:
    """G-M4: M4 at random sampling intervals; biased (Fig. 14 of Li, Cline and Loguinov (2017)).

    From a comparison-sampling log at arbitrary download times, G-M4 rounds the page's age at download j up
    to s_j − s_j^*, where s_j^* is the download just before the last detected change (eq. (50)), and returns
    the fraction of these values <= each x.  With a constant interval it is M4; with random intervals the
    rounding error varies from sample to sample and the result is biased even for Poisson updates.  Samples
    before the first detection are dropped.

    Parameters
    ----------
    times : array-like of float, shape (n,)
        Sample times, strictly increasing.
    changed : array-like of 0/1, shape (n - 1,)
        Q_{j,j+1}.
    x : array-like of float >= 0, strictly increasing
        Where to evaluate.

    Returns
    -------
    ndarray, shape (len(x),)
        The fraction of G-M4's values <= x (NaN if the page never changed).

    Examples
    --------
    >>> from freshcore.blind import g_m4
    >>> g_m4([0.0, 0.5, 2.0, 2.5, 4.0], [0, 1, 0, 1], [1.0, 2.0]).tolist()
    [0.0, 1.0]
    """
    caller = "g_m4"
    t = _times(times, caller)
    c = _flags(changed, caller, len(t))
    xs = _points(x, caller)
    counts = np.zeros(len(xs) + 1, dtype=np.int64)
    total = _blind.gm4_counts(t, c, xs, counts)
    return _cdf(counts, total)


@cites(LI_2017)
def m6(times: Any, changed: Any, bin_width: float, max_bin: int | None = None, *, method: str = "fast",
       return_counts: bool = False) -> Any:
    """M6: the fraction of pairs of samples a distance y apart between which the page changed; consistent for
    the age distribution G_U at random sampling intervals.

    From a comparison-sampling log at arbitrary download times, M6 considers every pair of downloads i < j,
    puts it in the bin n of its distance ((n − 1)h < s_j − s_i <= nh), and returns, per bin, the fraction of
    pairs between which the page changed (Q_ij = 1: some flag between them is 1), eqs. (51)-(54) of Li,
    Cline and Loguinov (2017).  Since Q_ij = 1 iff the page's residual at s_i is below s_j − s_i, this
    estimates G_U at distance nh (Theorem 10: exactly as h → 0 with a sampler that reaches every distance,
    e.g. exponential or uniform on [0, 2/λ] intervals).

    Parameters
    ----------
    times : array-like of float, shape (n,)
        Sample times, strictly increasing.
    changed : array-like of 0/1, shape (n - 1,)
        Q_{j,j+1}: 1 iff the page changed between sample j and j + 1.
    bin_width : float > 0
        h.
    max_bin : int >= 1, optional
        The largest bin B (distances up to B h); default: every pair (B h >= s_n − s_1).
    method : {"fast", "pairs"}, default "fast"
        ``"pairs"``: the paper's loop over all n(n − 1)/2 pairs; ``"fast"``: only the pairs no more than
        B h apart, O(n k) for k samples per window (SPEC §6).  Both give the same counts.
    return_counts : bool, default False
        Also return the pair counts W(y_n) and the changed-pair counts Z(y_n).

    Returns
    -------
    estimate : ndarray, shape (B,)
        G_6(y_n) = Z(y_n)/W(y_n) at y_n = nh, n = 1 .. B (NaN where no pair falls in a bin).
    pairs, changed_pairs : ndarray of int64, shape (B,)
        W and Z, with ``return_counts``.

    Warns
    -----
    LatticeSamplingWarning
        If every sampling interval is a multiple of the shortest one (a lattice sampler, e.g. constant):
        then the samples can phase-lock with lattice updates (Assumption 1), and M6 offers nothing over M4.

    Notes
    -----
    At a fixed h the estimate is a renewal-weighted average of G_U over the bin ((n − 1)h, nh] (eq. (62);
    SPEC §6), not G_U(nh): with Poisson sampling the weight is flat (pass ``averages=True`` to
    :func:`update_distribution`).  The bin of a distance d is ⌈d · (1/h)⌉ in double precision, which differs
    from ⌈d/h⌉ only within an ulp of a bin edge.

    Examples
    --------
    >>> from freshcore.blind import m6
    >>> m6([0.0, 0.3, 1.1, 1.5, 2.6], [0, 1, 0, 1], 1.0, 2).tolist()
    [0.3333333333333333, 1.0]
    """
    caller = "m6"
    t = _times(times, caller)
    c = _flags(changed, caller, len(t))
    h = check_scalar(bin_width, "bin_width", caller, low=0.0, low_inclusive=False)
    check_choice(method, "method", caller, ("fast", "pairs"))
    span = float(t[-1] - t[0])
    if max_bin is None:
        b = max(1, math.ceil(span * (1.0 / h)))  # the bin of the longest distance
        if b > _MAX_BINS:
            raise ValueError(f"The 'max_bin' parameter of m6 is None, which would need {b} bins (the whole span "
                             f"{span!r} in bins of {h!r}); pass max_bin <= {_MAX_BINS}.")
    else:
        b = check_int(max_bin, "max_bin", caller, low=1, high=_MAX_BINS)
    step = _blind.lattice_step(t, 1e-9)
    if step > 0.0:
        warnings.warn(f"The 'times' parameter of m6: every sampling interval is a multiple of {step!r} (a lattice "
                      "sampler). If the updates are lattice too the samples phase-lock with them (Assumption 1 of "
                      "Li, Cline and Loguinov (2017)) and M6 is not consistent; with a lattice sampler M6 offers "
                      "nothing over M4.", LatticeSamplingWarning, stacklevel=2)
    # per bin 1 .. b the changed pairs and all pairs; row b + 1 gathers the pairs farther apart
    counts = np.zeros((b + 2, 2), dtype=np.int64)
    _blind.m6_counts(t, c, h, b, counts, method == "fast")
    updated, pairs = counts[1:b + 1, 0], counts[1:b + 1, 1]
    est = np.divide(updated, pairs, out=np.full(b, np.nan), where=pairs > 0)
    return (est, pairs, updated) if return_counts else est


# ---------------------------------------------------------------------------
# distances
# ---------------------------------------------------------------------------


def _pair(estimate: Any, target: Any, caller: str) -> tuple[np.ndarray, np.ndarray]:
    h = check_array(estimate, "estimate", caller)
    g = check_array(target, "target", caller)
    if len(h) != len(g):
        raise ValueError(f"The array parameters of {caller} must have the same length: 'estimate' has {len(h)}, "
                         f"'target' has {len(g)}.")
    return h, g


@cites(LI_2017)
def wmrd(estimate: Any, target: Any) -> float:
    """The weighted mean relative difference of two distribution functions on the same points, eq. (48) of
    Li, Cline and Loguinov (2017).

    Parameters
    ----------
    estimate, target : array-like of float, shape (m,)
        H(x_n, T) and G_U(x_n) (the paper uses x_n = nΔ, n = 1 .. 9); finite.

    Returns
    -------
    float
        Σ|H − G| / Σ (H + G)/2.

    Examples
    --------
    >>> from freshcore.blind import wmrd
    >>> round(wmrd([0.5, 1.0], [0.4, 1.0]), 6)
    0.068966
    """
    h, g = _pair(estimate, target, "wmrd")
    return float(np.abs(h - g).sum() / (0.5 * (h + g).sum()))


@cites(LI_2017)
def ks(estimate: Any, target: Any) -> float:
    """The Kolmogorov-Smirnov distance of two distribution functions on the same points, eq. (49) of Li,
    Cline and Loguinov (2017): the largest |H − G| over the points.

    Parameters
    ----------
    estimate, target : array-like of float, shape (m,)
        H(x_n, T) and G_U(x_n); finite.

    Returns
    -------
    float

    Examples
    --------
    >>> from freshcore.blind import ks
    >>> ks([0.5, 1.0], [0.4, 1.0])
    0.09999999999999998
    """
    h, g = _pair(estimate, target, "ks")
    return float(np.abs(h - g).max())


# ---------------------------------------------------------------------------
# recovering F_U and the update rate
# ---------------------------------------------------------------------------


def _derivative_weights(z: float, xs: np.ndarray, order: int = 1) -> np.ndarray:
    """Weights w with sum w_i f(xs_i) ≈ f^(order)(z), exact for polynomials of degree < len(xs) (Fornberg's
    recursion, "Generation of finite difference formulas on arbitrarily spaced grids", 1988)."""
    n = len(xs)
    c = np.zeros((n, order + 1))
    c[0, 0] = 1.0
    c1, c4 = 1.0, xs[0] - z
    for i in range(1, n):
        mn = min(i, order)
        c2, c5, c4 = 1.0, c4, xs[i] - z
        for j in range(i):
            c3 = xs[i] - xs[j]
            c2 *= c3
            if j == i - 1:
                for k in range(mn, 0, -1):
                    c[i, k] = c1 * (k * c[i - 1, k - 1] - c5 * c[i - 1, k]) / c2
                c[i, 0] = -c1 * c5 * c[i - 1, 0] / c2
            for k in range(mn, 0, -1):
                c[j, k] = (c4 * c[j, k] - k * c[j, k - 1]) / c3
            c[j, 0] = c4 * c[j, 0] / c3
        c1 = c2
    return c[:, order]


def _rate_from_integral(x: np.ndarray, integral: np.ndarray) -> float:
    """g_U(0) from I = ∫_0^x G_U at the points x (> 0): I(0) = I'(0) = 0, so I(x) = Σ_{j=2}^{m+1} a_j x^j through
    the m points gives g_U(0) = I''(0) = 2 a_2 (error O(h^m))."""
    scale = x[-1]
    a = np.linalg.solve((x[:, None] / scale) ** np.arange(2, len(x) + 2)[None, :], integral)
    return float(2.0 * a[0] / scale**2)


def _density(xs: np.ndarray, g: np.ndarray, points: int, order: int = 1) -> np.ndarray:
    """The derivative of that order of g at every xs from a `points`-point stencil: one-sided at the ends,
    centred inside.  Stencils of the same shape (all of them on an even grid, but the ends) share their
    weights."""
    n = len(xs)
    half = (points - 1) // 2
    out = np.empty(n)
    cache: dict[tuple[float, ...], np.ndarray] = {}
    for p in range(n):
        lo = min(max(p - half, 0), n - points)
        rel = xs[lo:lo + points] - xs[p]
        scale = rel[-1] - rel[0]
        unit = rel / scale
        key = tuple(np.round(unit, 12).tolist())
        w = cache.get(key)
        if w is None:
            w = cache[key] = _derivative_weights(0.0, unit, order)
        out[p] = (w @ g[lo:lo + points]) / scale**order
    return out


@dataclass(frozen=True)
class UpdateDistribution:
    """F_U and μ recovered from an estimate of G_U (:func:`update_distribution`).

    Attributes
    ----------
    x : ndarray, shape (m + 1,)
        0 and the points of the estimate.
    cdf : ndarray, shape (m + 1,)
        F_U(x) = 1 − g_U(x)/g_U(0).
    density : ndarray, shape (m + 1,)
        g_U(x) = G_U'(x) = μ (1 − F_U(x)).
    rate : float
        μ = g_U(0) = 1/E[U].
    """

    x: np.ndarray
    cdf: np.ndarray
    density: np.ndarray
    rate: float


@cites(LI_2017)
def update_distribution(age_cdf: Any, x: Any, *, points: int = 5, averages: bool = False) -> UpdateDistribution:
    """Recover the update-interval distribution F_U and the update rate μ from an estimate of G_U.

    G_U(x) = μ ∫_0^x (1 − F_U), so its derivative g_U = μ(1 − F_U): μ = g_U(0) and F_U = 1 − g_U/g_U(0)
    (Section IV-A of Li, Cline and Loguinov (2017)).  The derivative is taken by ``points``-point finite
    differences (Section IV-E): one-sided at 0 (with G_U(0) = 0) and at the last point, centred in between.

    Parameters
    ----------
    age_cdf : array-like of float, shape (m,)
        The estimate of G_U at the points ``x`` (from :func:`m2`, :func:`m4`, :func:`m5` or :func:`m6`);
        finite.
    x : array-like of float > 0, shape (m,), strictly increasing
        Where ``age_cdf`` holds (with ``averages``: the right ends of the bins).
    points : int >= 2, default 5
        Points of each stencil (the error of a k-point formula is O(h^{k-1})); m + 1 >= points.
    averages : bool, default False
        ``age_cdf[n]`` is the average of G_U over (x[n − 1], x[n]] (x[−1] = 0), as :func:`m6` estimates with
        a sampler whose renewal weight is flat across a bin (exponential sampling): the sums of the averages
        times the bin widths are then I(x) = ∫_0^x G_U exactly, and g_U is its second derivative
        (``points`` >= 3; at 0 from the polynomial with I(0) = I'(0) = 0 through the first points − 1).

    Returns
    -------
    UpdateDistribution

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.blind import Pareto, update_distribution
    >>> x = 0.01 * np.arange(1, 301)
    >>> r = update_distribution(Pareto(3.0).age_cdf(x), x)
    >>> round(r.rate, 4), round(float(np.abs(r.cdf - Pareto(3.0).cdf(r.x)).max()), 4)
    (2.0, 0.0)
    """
    caller = "update_distribution"
    g = check_array(age_cdf, "age_cdf", caller)
    xs = _points(x, caller)
    if len(xs) != len(g):
        raise ValueError(f"The array parameters of {caller} must have the same length: 'age_cdf' has {len(g)}, "
                         f"'x' has {len(xs)}.")
    if xs[0] <= 0.0:
        raise ValueError(f"The 'x' parameter of {caller} must contain numbers > 0 (G_U(0) = 0 is added); "
                         f"x[0] = {xs[0].item()!r}.")
    k = check_int(points, "points", caller, low=3 if averages else 2, high=len(xs) + 1)
    xs = np.concatenate(([0.0], xs))
    if averages:
        integral = np.concatenate(([0.0], np.cumsum(np.diff(xs) * g)))
        dens = _density(xs, integral, k, order=2)
        dens[0] = _rate_from_integral(xs[1:k], integral[1:k])
    else:
        dens = _density(xs, np.concatenate(([0.0], g)), k)
    rate = float(dens[0])
    if not rate > 0.0:
        raise ValueError(f"The 'age_cdf' parameter of {caller} must rise at 0 (the slope there is the update rate); "
                         f"its {k}-point slope at 0 is {rate!r}.")
    return UpdateDistribution(x=xs, cdf=1.0 - dens / rate, density=dens, rate=rate)


@cites(LI_2017)
def flat_bin_width(estimate: Callable[[float], Any], low: float, high: float, *, points: int = 5,
                   rtol: float = 0.01, xtol: float = 0.01, averages: bool = False) -> float:
    """The bin width h for recovering μ: the largest h in [low, high] where the estimated rate is flat.

    With bins too wide, the finite difference at 0 misses the curvature of G_U (the estimated E[U] = 1/μ
    falls as h shrinks); once h is small enough the estimate stays put (Fig. 8(a) of Li, Cline and Loguinov
    (2017)) until, at still smaller h, too few samples fall in the first bins and noise takes over.  The
    search halves h from ``high`` until the estimated rate at h agrees with the one at h/2 within ``rtol``
    (the top of the flat region), then bisects on a log scale between that h and 2h for the largest such h.

    Parameters
    ----------
    estimate : callable
        ``estimate(h)`` returns ``(x, G)``: the estimate of G_U at (at least ``points − 1``) points x > 0
        spaced h apart, e.g. ``lambda h: (h * n, m2(ages, h * n))`` with ``n = np.arange(1, 5)``.
    low, high : float, 0 < low < high
        The search range.
    points : int >= 2, default 5
        Points of the one-sided stencil at 0.
    rtol : float > 0, default 0.01
        Flat: |μ(h) − μ(h/2)| <= rtol μ(h/2).
    xtol : float > 0, default 0.01
        Stop when high/low < 1 + xtol.
    averages : bool, default False
        The estimate holds bin averages, as in :func:`update_distribution` (e.g. ``lambda h: (h * n,
        m6(times, changed, h, 4))``).

    Returns
    -------
    float
        h.

    Raises
    ------
    ValueError
        If the estimate is flat nowhere in [low, high] (too few samples for ``rtol``).

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.blind import Pareto, flat_bin_width
    >>> g = Pareto(3.0).age_cdf
    >>> n = np.arange(1, 5)
    >>> h = flat_bin_width(lambda h: (h * n, g(h * n)), 1e-4, 1.0)
    >>> 0.05 < h < 0.5
    True
    """
    caller = "flat_bin_width"
    if not callable(estimate):
        raise TypeError(f"The 'estimate' parameter of {caller} must be callable. Got {type(estimate).__name__}.")
    lo = check_scalar(low, "low", caller, low=0.0, low_inclusive=False)
    hi = check_scalar(high, "high", caller, low=lo, low_inclusive=False)
    k = check_int(points, "points", caller, low=3 if averages else 2)
    rt = check_scalar(rtol, "rtol", caller, low=0.0, low_inclusive=False)
    xt = check_scalar(xtol, "xtol", caller, low=0.0, low_inclusive=False)

    def rate(h: float) -> float:
        xv, gv = estimate(h)
        xv, gv = np.asarray(xv, dtype=float)[: k - 1], np.asarray(gv, dtype=float)[: k - 1]
        if len(xv) < k - 1:
            raise ValueError(f"The 'estimate' of {caller} must return at least points - 1 = {k - 1} values.")
        if averages:
            return _rate_from_integral(xv, np.cumsum(np.diff(np.concatenate(([0.0], xv))) * gv))
        return float(_derivative_weights(0.0, np.concatenate(([0.0], xv))) @ np.concatenate(([0.0], gv)))

    def flat(h: float) -> bool:
        a, b = rate(h), rate(0.5 * h)
        return bool(abs(a - b) <= rt * abs(b))

    h = hi
    while not flat(h):
        h *= 0.5
        if h < lo:
            raise ValueError(f"The estimate of {caller} is flat nowhere in [low, high] = [{lo!r}, {hi!r}] (its rate "
                             f"moves by more than rtol={rt!r} between h and h/2): more samples, or a larger "
                             "'rtol', are needed.")
    if h == hi:
        return hi
    lo, hi = h, min(2.0 * h, hi)  # flat at lo, not at hi
    while hi / lo > 1.0 + xt:
        mid = math.sqrt(lo * hi)
        if flat(mid):
            lo = mid
        else:
            hi = mid
    return lo


# ---------------------------------------------------------------------------
# beyond the paper: crawl rates for pages whose updates form a renewal process
# ---------------------------------------------------------------------------
#
# The crawl rates and freshness are freshcore.rates' optimal_rates and freshness with model="renewal" (the
# pages' update laws in place of their change rates); AgeTable (freshcore._renewal) tabulates estimated laws.

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
    distributions G_i (forward-recurrence laws, as :func:`m2`, :func:`m4`, :func:`m5` or :func:`m6` estimate).

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
    distributions G_i (estimated by :func:`m2` ... :func:`m6`, or fitted): the Poisson assumption dropped.

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
