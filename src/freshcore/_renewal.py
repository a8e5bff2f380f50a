"""The update laws of the ``"renewal"`` model of :func:`freshcore.rates.optimal_rates` and
:func:`freshcore.rates.freshness`: pages crawled periodically whose updates form renewal processes.

A page whose updates form a stationary renewal process with age distribution G (the forward-recurrence law,
SPEC section 6) and which is crawled every I = 1/f, at a phase independent of its updates, is fresh at age a of
the crawl with probability 1 - G(a): its freshness is F(f) = f H(1/f), H(I) = ∫_0^I (1 - G), and
d(f H(1/f))/df = psi(1/f), psi(I) = ∫_0^I a dG(a) the partial mean of the age (Li, Cline and Loguinov (2017)
for G; the periodic optimum of SPEC section 2 where G is exponential).  This module holds, per family of laws,
what the search on the multiplier in ``freshcore.rates`` needs: the rates at a multiplier (the solution of
psi(I) = Lambda/w, clipped to the bounds) with their derivative, the freshness of a rate, psi itself, and the
mean age E[A] = psi(inf) (the page is crawled iff Lambda < w E[A]).

Families: tabulated (:class:`AgeTable`: compiled passes, ``freshcore._blind``), exponential (change rates or
:class:`~freshcore.blind.Exponential` laws: the periodic model's compiled pass, ``freshcore._rates``),
constant intervals (closed form), Pareto and uniform intervals (vectorised Newton on exact closed forms).
:class:`AgeTable` is public as ``freshcore.blind.AgeTable``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _blind, _rates
from ._blind_validation import _points
from ._papers import LI_2017, cites
from ._rates_common import _r1
from ._validation import _index_str, _shaped, check_array, read_only_view

# (S, dS/du) of one family's pages at u = Lambda^-1/2, their rates written to the array if given
Pass = Callable[[float, "np.ndarray | None"], "tuple[float, float]"]


@cites(LI_2017)
class AgeTable:
    """The age distributions G_i of n pages tabulated on one grid: estimated update laws for
    :func:`freshcore.rates.optimal_rates` and :func:`freshcore.rates.freshness` with ``model="renewal"``.

    G_U is the age distribution (forward-recurrence law) of a page's update process, which :func:`m2`,
    :func:`m4`, :func:`m5` and :func:`m6` estimate on their grids (Li, Cline and Loguinov (2017)); a page
    crawled every I is fresh at age a of the crawl with probability 1 − G_U(a).

    Parameters
    ----------
    age_cdf : array-like of float, shape (n, m) or (m,)
        G_i at the points ``x``, one row per page (1-D: one page); finite.  Each row is clipped to [0, 1]
        and made non-decreasing (its running maximum), as an estimate may wiggle.
    x : array-like of float > 0, shape (m,), strictly increasing
        The grid (G(0) = 0 is added).

    Attributes
    ----------
    x : ndarray, shape (m,)
        The grid (read-only).
    age_cdf : ndarray, shape (n, m)
        The tabulated G_i after clipping (read-only).
    mean_age : ndarray, shape (n,)
        E[A_i] = ∫ a dG_i(a), the tail included: the largest marginal value of crawling page i per unit of
        importance (a page is crawled iff the multiplier is below w_i E[A_i]).
    n_pages : int
        n.

    Notes
    -----
    Between the points G is linear; beyond the last point x_m, where G(x_m) < 1, it has an exponential tail
    1 − G(a) = (1 − G(x_m)) e^{−r (a − x_m)} whose hazard r is the slope of −log(1 − G) over the last
    quarter of the grid (exact for an exponential G; 1/x_m where 1 − G does not fall there).  A row that
    reaches 1 has no tail.  The change (update) rate μ_i = G_i'(0) is not needed to plan crawls; estimate it
    with :func:`update_distribution`.

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.blind import AgeTable, Constant, Pareto
    >>> from freshcore.rates import optimal_rates
    >>> x = np.linspace(0.01, 4.0, 400)
    >>> table = AgeTable([Constant(2.0).age_cdf(x), Pareto(3.0).age_cdf(x)], x)
    >>> table.n_pages, table.mean_age.round(3).tolist()  # both 1, but Pareto's tail is heavier than exponential
    (2, [1.0, 0.89])
    >>> optimal_rates(table, [1.0, 1.0], 1.0, model="renewal").round(4)  # the exact laws give 2/3 and 1/3
    array([0.6667, 0.3333])
    """

    __slots__ = ("_g", "_hazard", "_mean_age", "_pm", "_psum", "_slope0", "_tail", "_x")

    def __init__(self, age_cdf: Any, x: Any) -> None:
        self._build(age_cdf, x, "AgeTable")

    @classmethod
    def _checked(cls, age_cdf: Any, x: Any, caller: str) -> AgeTable:
        """An AgeTable whose errors name ``caller`` (for the functions that build one from arrays)."""
        table = cls.__new__(cls)
        table._build(age_cdf, x, caller)
        return table

    def _build(self, age_cdf: Any, x: Any, caller: str) -> None:
        xs = _points(x, caller)
        if xs[0] <= 0.0:
            raise ValueError(f"The 'x' parameter of {caller} must contain numbers > 0 (G(0) = 0 is added); "
                             f"x[0] = {xs[0].item()!r}.")
        g_in = np.ascontiguousarray(_shaped(age_cdf, "age_cdf", caller, (1, 2), False), dtype=np.float64)
        shape = g_in.shape
        g_in = g_in.reshape(1, -1) if g_in.ndim == 1 else g_in
        if g_in.shape[1] != len(xs):
            raise ValueError(f"The 'age_cdf' parameter of {caller} must have one column per point of 'x' "
                             f"({len(xs)}). Got shape {shape} instead.")
        n, m = g_in.shape
        if n == 0:
            raise ValueError(f"The 'age_cdf' parameter of {caller} must not be empty.")
        self._x = xs
        self._g, self._psum = np.empty((n, m)), np.empty((n, m))
        self._tail, self._hazard, self._mean_age, self._slope0 = (np.empty(n) for _ in range(4))
        i = _blind.renewal_table(xs, g_in, self._g, self._psum, self._tail, self._hazard, self._mean_age,
                                 self._slope0)
        if i >= 0:
            raise ValueError(f"The 'age_cdf' parameter of {caller} must contain finite numbers; "
                             f"{_index_str('age_cdf', i, shape)} = {g_in.ravel()[i].item()!r}.")
        self._pm = np.ascontiguousarray(self._psum[:, -1])

    def __repr__(self) -> str:
        return f"AgeTable(n_pages={len(self._g)}, x=[{self._x[0]!r} .. {self._x[-1]!r}] ({len(self._x)} points))"

    def __len__(self) -> int:
        return len(self._g)

    @property
    def n_pages(self) -> int:
        return len(self._g)

    @property
    def x(self) -> np.ndarray:
        return read_only_view(self._x)

    @property
    def age_cdf(self) -> np.ndarray:
        return read_only_view(self._g)

    @property
    def mean_age(self) -> np.ndarray:
        return read_only_view(self._mean_age)


# ---------------------------------------------------------------------------
# families of laws: each over its pages (``idx`` into the page vector, None for all of them)
# ---------------------------------------------------------------------------


class _Family:
    idx: np.ndarray | None = None

    def changes(self) -> np.ndarray | None:
        """Pages whose content changes (None: all)."""
        return None

    def mean_age(self) -> np.ndarray:
        raise NotImplementedError

    def slope0(self) -> np.ndarray:
        """G'(0), the update rate: psi(I) <= G'(0) I^2/2 for every age law (its density never rises)."""
        raise NotImplementedError

    def make_pass(self, w: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> Pass:
        """The pass at u for importance ``w`` (pages with w = 0 stay at ``lo``) and bounds (None: 0, inf)."""
        raise NotImplementedError

    def strided(self, step: int) -> _Family:
        """The family of pages 0, step, 2 step, ... (all of its pages: idx None)."""
        raise NotImplementedError

    def fresh(self, rate: np.ndarray) -> np.ndarray:
        """F = f H(1/f) per page (0 at f = 0, 1 at f = inf)."""
        raise NotImplementedError

    def psi(self, interval: np.ndarray) -> np.ndarray:
        """psi(I) per page (E[A] at I = inf)."""
        raise NotImplementedError


def _inverse(w: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return 1.0 / w


def _intervals(rate: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return 1.0 / rate


class _Exponential(_Family):
    """G(a) = 1 - e^{-Delta a} (Poisson updates): the periodic model's compiled pass, b_i = sqrt(Delta_i/w_i)."""

    def __init__(self, delta: np.ndarray, idx: np.ndarray | None = None) -> None:
        self.delta, self.idx = delta, idx

    def changes(self) -> np.ndarray:
        return self.delta > 0.0

    def strided(self, step: int) -> _Family:
        return _Exponential(np.ascontiguousarray(self.delta[::step]))

    def mean_age(self) -> np.ndarray:
        return _inverse(self.delta)

    def slope0(self) -> np.ndarray:
        return self.delta

    def make_pass(self, w: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> Pass:
        with np.errstate(divide="ignore", invalid="ignore"):
            b = np.sqrt(self.delta / w)
        b[~((w > 0.0) & (self.delta > 0.0))] = math.inf  # never above u: at their minimum
        delta = self.delta

        def pass_(u: float, out: np.ndarray | None) -> tuple[float, float]:
            S, D, _, _ = _rates.periodic_sums(b, delta, lo, hi, u, 0.0, out)
            return S, D

        return pass_

    def fresh(self, rate: np.ndarray) -> np.ndarray:
        out = np.empty(len(rate))
        _rates.freshness_kernel(np.ascontiguousarray(rate), self.delta, True, out)
        return out

    def psi(self, interval: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            y = self.delta * interval
            return np.where(self.delta > 0.0, _r1(np.where(np.isnan(y), 0.0, y)) / self.delta, 0.0)


class _Table(_Family):
    """An :class:`AgeTable`: the compiled passes of ``freshcore._blind``."""

    def __init__(self, table: AgeTable) -> None:
        self.t = table

    def strided(self, step: int) -> _Family:
        t, sub = self.t, AgeTable.__new__(AgeTable)
        sub._x = t._x
        for name in ("_g", "_psum", "_pm", "_tail", "_hazard", "_mean_age", "_slope0"):
            setattr(sub, name, np.ascontiguousarray(getattr(t, name)[::step]))
        return _Table(sub)

    def mean_age(self) -> np.ndarray:
        return self.t._mean_age

    def slope0(self) -> np.ndarray:
        return self.t._slope0

    def make_pass(self, w: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> Pass:
        t, inv_w = self.t, _inverse(w)

        def pass_(u: float, out: np.ndarray | None) -> tuple[float, float]:
            return _blind.renewal_pass(t._x, t._psum, t._pm, t._tail, t._hazard, t._mean_age, inv_w, lo, hi,
                                       1.0 / (u * u), u, out)

        return pass_

    def fresh(self, rate: np.ndarray) -> np.ndarray:
        out = np.empty(len(rate))
        _blind.renewal_freshness(self.t._x, self.t._g, self.t._tail, self.t._hazard, _intervals(rate), out)
        return out

    def psi(self, interval: np.ndarray) -> np.ndarray:
        out = np.empty(len(interval))
        _blind.renewal_psi(self.t._x, self.t._psum, self.t._tail, self.t._hazard, self.t._mean_age,
                           np.ascontiguousarray(interval, dtype=np.float64), out)
        return out


def _r2(x: np.ndarray) -> np.ndarray:
    """(e^x - 1 - x)/x^2 without cancellation (1/2 at 0)."""
    out = np.empty_like(x)
    small = np.abs(x) < 0.1
    xs = x[small]
    c = [1.0 / math.factorial(j + 2) for j in range(10)]
    acc = np.full_like(xs, c[-1])
    for cj in c[-2::-1]:
        acc = cj + xs * acc
    out[small] = acc
    xl = x[~small]
    with np.errstate(over="ignore", invalid="ignore"):
        out[~small] = (np.expm1(xl) - xl) / (xl * xl)
    return out


def _e1(x: np.ndarray) -> np.ndarray:
    """(e^x - 1)/x (1 at 0)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.where(x == 0.0, 1.0, np.expm1(x) / np.where(x == 0.0, 1.0, x))


class _Analytic(_Family):
    """A law with closed forms for psi, its tail E[A] - psi, the age density g and H; psi(I) = Lambda/w is
    solved by Newton on log I (on log psi where the level is below E[A]/2, on log(E[A] - psi) above, without
    cancellation), bracketed."""

    def psi(self, interval: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def tail(self, interval: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def density(self, interval: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def idensity(self, interval: np.ndarray) -> np.ndarray:
        """I g(I) (dpsi/dI), without overflow where I is huge."""
        return interval * self.density(interval)

    def integral(self, interval: np.ndarray) -> np.ndarray:
        """H(I) = ∫_0^I (1 - G), finite I."""
        raise NotImplementedError

    def solve(self, level: np.ndarray) -> np.ndarray:
        """I with psi(I) = level, for 0 < level < E[A] (NaN elsewhere; inf where I is past the double range,
        as for a Pareto tail that falls slower than any power the range can hold)."""
        mean = self.mean_age()
        ok = (level > 0.0) & (level < mean)
        level = np.where(ok, level, 0.5 * np.where(np.isfinite(mean), mean, 1.0))
        upper = level > 0.5 * mean
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            goal = np.log(np.where(upper, mean - level, level))
            far = upper & ~(self.tail(np.full(len(level), 1e300)) <= np.exp(goal))
            # psi(I) <= G'(0) I^2/2: the guess is below the root
            lo = np.zeros(len(level))
            hi = np.full(len(level), math.inf)
            i = np.sqrt(2.0 * level / self.slope0())
            done = ~ok | far
            for _ in range(200):
                value = np.where(upper, self.tail(i), self.psi(i))
                big = np.where(upper, value < np.exp(goal), value > np.exp(goal))
                hi = np.where(big, np.minimum(hi, i), hi)
                lo = np.where(big, lo, np.maximum(lo, i))
                # d log value / d log I: +-I^2 g/value
                slope = i * self.idensity(i) / value
                step = (goal - np.log(value)) / np.where(upper, -slope, slope)
                new = i * np.exp(np.clip(step, -20.0, 20.0))
                # a Newton step below 1e-9 leaves an error of order its square: done after it
                last = ~done & ((np.abs(new - i) <= 1e-9 * i) | (hi - lo <= 4e-16 * hi) & np.isfinite(hi))
                bad = ~done & ~last & (~((new > lo) & (new < hi)) | ~np.isfinite(new))
                bisect = np.where(lo > 0.0, np.where(hi > 4.0 * lo, np.sqrt(lo * hi), 0.5 * (lo + hi)), 0.5 * hi)
                i = np.where(done, i, np.where(bad, np.where(np.isfinite(hi), bisect, 4.0 * i), new))
                done |= last
                if done.all():
                    break
        return np.where(ok, np.where(far, math.inf, i), math.nan)

    def make_pass(self, w: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> Pass:
        inv_w = _inverse(w)
        lo = np.zeros(len(w)) if lo is None else lo
        hi = np.full(len(w), math.inf) if hi is None else hi
        mean = self.mean_age()

        def pass_(u: float, out: np.ndarray | None) -> tuple[float, float]:
            t = inv_w / (u * u)
            crawled = t < mean
            i = self.solve(t)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                f = np.where(crawled, 1.0 / i, 0.0)
                r = np.minimum(np.maximum(f, lo), hi)
                free = crawled & (f > lo) & (f < hi)
                d = np.where(free, 2.0 * t / (u * i * i * self.idensity(i)), 0.0)
            if out is not None:
                out[:] = r
            return _rates.csum(r), _rates.csum(np.ascontiguousarray(d))

        return pass_

    def fresh(self, rate: np.ndarray) -> np.ndarray:
        i = _intervals(rate)
        fin = np.isfinite(i) & (i > 0.0)
        with np.errstate(invalid="ignore", over="ignore", under="ignore", divide="ignore"):
            h = self.integral(np.where(fin, i, 1.0)) / np.where(fin, i, 1.0)
        return np.where(fin, h, np.where(i > 0.0, 0.0, 1.0))


class _Constant(_Analytic):
    """Updates every P: G(a) = min(a/P, 1), psi(I) = min(I, P)^2/(2P), E[A] = P/2; the rate is u sqrt(w/(2P))
    from the entry u = sqrt(2/(w P)), where it jumps from 0 to 1/P (the objective is linear below 1/P)."""

    def __init__(self, period: np.ndarray, idx: np.ndarray | None = None) -> None:
        self.p, self.idx = period, idx

    def strided(self, step: int) -> _Family:
        return _Constant(self.p[::step])

    def mean_age(self) -> np.ndarray:
        return 0.5 * self.p

    def slope0(self) -> np.ndarray:
        return 1.0 / self.p

    def psi(self, interval: np.ndarray) -> np.ndarray:
        i = np.minimum(interval, self.p)
        return i * i / (2.0 * self.p)

    def tail(self, interval: np.ndarray) -> np.ndarray:
        return 0.5 * self.p - self.psi(interval)

    def density(self, interval: np.ndarray) -> np.ndarray:
        return np.where(interval < self.p, 1.0 / self.p, 0.0)

    def integral(self, interval: np.ndarray) -> np.ndarray:
        i = np.minimum(interval, self.p)
        return i - i * i / (2.0 * self.p)

    def solve(self, level: np.ndarray) -> np.ndarray:
        ok = (level > 0.0) & (level < 0.5 * self.p)
        with np.errstate(invalid="ignore"):
            return np.where(ok, np.sqrt(2.0 * self.p * level), math.nan)


class _Pareto(_Analytic):
    """F(x) = 1 - (1 + x/beta)^-alpha: with k = alpha - 1, y = log1p(I/beta), G = 1 - e^{-k y},
    g = (k/beta) e^{-(k + 1) y}, psi = beta k y^2 ((1 - k) R((1 - k) y) + k R(-k y)) with R(x) = (e^x - 1 -
    x)/x^2, E[A] - psi = (beta + k I) e^{-k y}/(k - 1) and E[A] = beta/(k - 1) (inf for k <= 1), H = beta y
    E((1 - k) y) with E(x) = (e^x - 1)/x."""

    def __init__(self, alpha: np.ndarray, beta: np.ndarray, idx: np.ndarray | None = None) -> None:
        self.k, self.beta, self.idx = alpha - 1.0, beta, idx

    def strided(self, step: int) -> _Family:
        return _Pareto(self.k[::step] + 1.0, self.beta[::step])

    def mean_age(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.where(self.k > 1.0, self.beta / (self.k - 1.0), math.inf)

    def slope0(self) -> np.ndarray:
        return self.k / self.beta

    def psi(self, interval: np.ndarray) -> np.ndarray:
        y = np.log1p(interval / self.beta)
        with np.errstate(over="ignore", invalid="ignore"):
            v = self.beta * self.k * y * y * ((1.0 - self.k) * _r2((1.0 - self.k) * y) + self.k * _r2(-self.k * y))
        return np.where(np.isinf(interval), self.mean_age(), v)

    def tail(self, interval: np.ndarray) -> np.ndarray:
        y = np.log1p(interval / self.beta)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return (self.beta + self.k * interval) * np.exp(-self.k * y) / (self.k - 1.0)

    def density(self, interval: np.ndarray) -> np.ndarray:
        return self.k / self.beta * np.exp(-(self.k + 1.0) * np.log1p(interval / self.beta))

    def idensity(self, interval: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return self.k * (interval / (self.beta + interval)) * np.exp(-self.k * np.log1p(interval / self.beta))

    def integral(self, interval: np.ndarray) -> np.ndarray:
        y = np.log1p(interval / self.beta)
        return self.beta * y * _e1((1.0 - self.k) * y)


class _Uniform(_Analytic):
    """U uniform on [a, b], mean m: g = 1/m below a, (b - I)/((b - a) m) on [a, b]; psi = I^2/(2m) below a,
    a^2/(2m) + (I - a)(3bI + 3ab - 2I^2 - 2aI - 2a^2)/(6 (b - a) m) on [a, b]; E[A] - psi on [a, b] is
    (b - I)^2 (b + 2I)/(6 (b - a) m); E[A] = (a^2 + ab + b^2)/(3 (a + b)); H = I - (I^2/2 - (I - a)_+^3/(6 (b -
    a)))/m up to b."""

    def __init__(self, low: np.ndarray, high: np.ndarray, idx: np.ndarray | None = None) -> None:
        self.a, self.b, self.idx = low, high, idx
        self.m = 0.5 * (low + high)

    def strided(self, step: int) -> _Family:
        return _Uniform(self.a[::step], self.b[::step])

    def mean_age(self) -> np.ndarray:
        a, b = self.a, self.b
        return (a * a + a * b + b * b) / (3.0 * (a + b))

    def slope0(self) -> np.ndarray:
        return 1.0 / self.m

    def psi(self, interval: np.ndarray) -> np.ndarray:
        a, b, m = self.a, self.b, self.m
        i = np.minimum(interval, b)
        ia = np.maximum(i, a)
        mid = a * a / (2.0 * m) + (ia - a) * (3.0 * b * ia + 3.0 * a * b - 2.0 * ia * ia - 2.0 * a * ia
                                              - 2.0 * a * a) / (6.0 * (b - a) * m)
        return np.where(i <= a, i * i / (2.0 * m), mid)

    def tail(self, interval: np.ndarray) -> np.ndarray:
        a, b, m = self.a, self.b, self.m
        i = np.minimum(interval, b)
        ia = np.maximum(i, a)
        return np.where(i <= a, self.mean_age() - i * i / (2.0 * m), (b - ia) ** 2 * (b + 2.0 * ia)
                        / (6.0 * (b - a) * m))

    def density(self, interval: np.ndarray) -> np.ndarray:
        a, b, m = self.a, self.b, self.m
        return np.where(interval < a, 1.0 / m, np.maximum(b - interval, 0.0) / ((b - a) * m))

    def integral(self, interval: np.ndarray) -> np.ndarray:
        a, b, m = self.a, self.b, self.m
        i = np.minimum(interval, b)
        over = np.maximum(i - a, 0.0)
        return i - (0.5 * i * i - over**3 / (6.0 * (b - a))) / m


# ---------------------------------------------------------------------------
# the laws of all pages
# ---------------------------------------------------------------------------


class Laws:
    """The pages' update laws, grouped into families."""

    def __init__(self, n: int, families: list[_Family]) -> None:
        self.n, self.families = n, families

    def _each(self, fn: Callable[[_Family], np.ndarray], dtype: Any = float) -> np.ndarray:
        if len(self.families) == 1 and self.families[0].idx is None:
            return np.asarray(fn(self.families[0]), dtype=dtype)
        out = np.empty(self.n, dtype=dtype)
        for fam in self.families:
            out[fam.idx] = fn(fam)
        return out

    def changes(self) -> np.ndarray:
        """Pages whose content changes (the others are always fresh)."""

        def each(f: _Family) -> np.ndarray:
            c = f.changes()
            return np.ones(self.n if f.idx is None else len(f.idx), dtype=bool) if c is None else c

        return self._each(each, dtype=bool)

    def mean_age(self) -> np.ndarray:
        return self._each(lambda f: f.mean_age())

    def slope0(self) -> np.ndarray:
        return self._each(lambda f: f.slope0())

    def fresh(self, rate: np.ndarray) -> np.ndarray:
        return self._each(lambda f: f.fresh(rate if f.idx is None else rate[f.idx]))

    def psi(self, interval: np.ndarray) -> np.ndarray:
        return self._each(lambda f: f.psi(interval if f.idx is None else interval[f.idx]))

    def strided(self, step: int) -> Laws | None:
        """The laws of pages 0, step, 2 step, ... (None where the pages mix families)."""
        if len(self.families) != 1 or self.families[0].idx is not None:
            return None
        fam = self.families[0].strided(step)
        return Laws(len(fam.mean_age()), [fam])

    def make_pass(self, w: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> Pass:
        """(S, dS/du) of all pages at u, their rates written to the array if given."""
        if len(self.families) == 1 and self.families[0].idx is None:
            return self.families[0].make_pass(w, lo, hi)
        parts = []
        for fam in self.families:
            ix = fam.idx
            parts.append((ix, fam.make_pass(w[ix], None if lo is None else np.ascontiguousarray(lo[ix]),
                                            None if hi is None else np.ascontiguousarray(hi[ix])),
                          np.empty(len(ix))))  # type: ignore[arg-type]

        def pass_(u: float, out: np.ndarray | None) -> tuple[float, float]:
            S = D = 0.0
            for ix, p, buf in parts:
                s, d = p(u, buf if out is not None else None)
                if out is not None:
                    out[ix] = buf
                S += s
                D += d
            # the spend of the rates written is their compensated sum, as the solvers' final check takes it: the
            # families' sums added one by one can fall an ulp short of it, and a search that stops on them can
            # hand back rates an ulp over the budget
            return (S if out is None else _rates.csum(out)), D

        return pass_


def is_laws(x: Any) -> bool:
    """Whether ``x`` holds update laws rather than change rates (for the models that need rates)."""
    from .blind_simulation import IntervalDistribution

    if isinstance(x, (AgeTable, IntervalDistribution)):
        return True
    return isinstance(x, (list, tuple)) and any(isinstance(v, IntervalDistribution) for v in x[:1])


def laws(x: Any, name: str, caller: str) -> Laws:
    """The update laws of ``x``: an :class:`AgeTable`, a sequence of laws (Exponential, Pareto, Constant,
    Uniform) or change rates (exponential laws)."""
    from .blind_simulation import Constant, Exponential, IntervalDistribution, Pareto, Uniform

    if isinstance(x, AgeTable):
        return Laws(len(x), [_Table(x)])
    if isinstance(x, IntervalDistribution):
        raise TypeError(f"The {name!r} parameter of {caller} must hold one update law per page (a sequence of "
                        f"them, or an AgeTable). Got the single law {x!r}; repeat it, e.g. [law] * n_pages.")
    seq: Any = None
    if isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.dtype == object):
        arr = np.asarray(x, dtype=object) if not isinstance(x, np.ndarray) else x
        if arr.ndim == 1 and any(isinstance(v, IntervalDistribution) for v in arr):
            seq = arr
    if seq is None:  # change rates: exponential laws
        delta = check_array(x, name, caller, low=0.0)
        return Laws(len(delta), [_Exponential(delta)])
    kinds: dict[type, list[int]] = {Exponential: [], Pareto: [], Constant: [], Uniform: []}
    for i, law in enumerate(seq):
        kind = kinds.get(type(law))
        if kind is None:
            what = (f"{law!r}, which has no closed-form age distribution here; tabulate it (an AgeTable)"
                    if isinstance(law, IntervalDistribution) else f"a {type(law).__name__}")
            raise TypeError(f"The {name!r} parameter of {caller} must hold update laws (Exponential, Pareto, "
                            f"Constant or Uniform from freshcore.blind); {name}[{i}] is {what}.")
        kind.append(i)
    n = len(seq)
    fams: list[_Family] = []
    for cls, pos in kinds.items():
        if not pos:
            continue
        idx = None if len(pos) == n else np.asarray(pos, dtype=np.intp)
        items = [seq[i] for i in pos]
        if cls is Exponential:
            fams.append(_Exponential(np.array([v._rate for v in items]), idx))
        elif cls is Pareto:
            fams.append(_Pareto(np.array([v.alpha for v in items]), np.array([v.beta for v in items]), idx))
        elif cls is Constant:
            fams.append(_Constant(np.array([v.value for v in items]), idx))
        else:
            fams.append(_Uniform(np.array([v.low for v in items]), np.array([v.high for v in items]), idx))
    return Laws(n, fams)

