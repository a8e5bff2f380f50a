"""Simulated blind sampling: renewal processes and what a crawler logs of them.

The interval laws of a renewal process (:class:`Exponential`, :class:`Pareto`, :class:`Constant`,
:class:`Uniform`, with their CDF F and age distribution G in closed form, and :class:`Sampled` for a user's
sampler), its event times (:func:`renewal_times`, started in equilibrium or with an event at 0), and one page's
crawl log with the truth behind it (:func:`simulate_log`, a :class:`BlindLog`): the input of the estimators of
:mod:`freshcore.blind_estimators`.  The laws are also the update laws that :func:`freshcore.rates.optimal_rates`
takes with ``model="renewal"``.  :mod:`freshcore.blind` gathers the whole blind-sampling API.

References
----------
.. [1] X. Li, D. B. H. Cline, D. Loguinov, "Temporal update dynamics under blind sampling", IEEE/ACM
   Transactions on Networking 25(1), 2017.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._papers import LI_2017, cites
from ._validation import check_int, check_rng, check_scalar

__all__ = ["BlindLog", "Constant", "Exponential", "IntervalDistribution", "Pareto", "Sampled", "Uniform",
           "renewal_times", "simulate_log"]


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
