"""The Whittle index of the stochastic model, learnt by two-timescale stochastic approximation (Section VIII of
Avrachenkov and Borkar (2018), eqs. (33)-(35)).

With random utilities (eq. (23)) the index has no closed form.  :func:`stochastic_index` estimates it at given
states ``x_c``: relative value iteration evaluates the threshold policy "crawl iff ``X >= x_c``" on a grid of
states (the fast timescale), while stochastic approximation moves the subsidy ``gamma`` until ``x_c`` is
indifferent between crawling and waiting (the slow timescale).  With the noise switched off it converges on
the closed form of :func:`freshcore.whittle.whittle_index`.

:func:`stochastic_gain` and :func:`stochastic_bound` solve each source's subsidised problem of the stochastic
model on the same kind of grid (policy iteration, exact linear solves) and give the Lagrangian upper bound of
every policy that crawls at most ``M`` a period and may look at the random states, such as Whittle's.

References
----------
.. [1] K. Avrachenkov, V. S. Borkar, "Whittle index policy for crawling ephemeral content", IEEE Transactions
   on Control of Network Systems 5(1), 2018.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from freshcore import _whittle
from freshcore._papers import AVRACHENKOV_BORKAR_2018, cites
from freshcore._validation import check_choice, check_int, check_rng, check_scalar
from freshcore.whittle import SourceModel, check_sources, check_states
from freshcore.whittle_simulation import UTILITIES, ArrivalStream

__all__ = ["stochastic_bound", "stochastic_gain", "stochastic_index"]


def _check_noise(noise: Any, caller: str) -> bool:
    """``noise`` as a bool; a TypeError naming it otherwise (``noise='no'`` is not ``True``)."""
    if not isinstance(noise, (bool, np.bool_)):
        raise TypeError(f"The 'noise' parameter of {caller} must be a bool (True or False). Got {noise!r} of type "
                        f"{type(noise).__name__} instead.")
    return bool(noise)


@cites(AVRACHENKOV_BORKAR_2018)
def stochastic_index(
    x: Any,
    sources: SourceModel,
    *,
    utility: str = "deterministic",
    noise: bool = True,
    grid: int = 400,
    samples: int = 128,
    iterations: int = 8000,
    rng: Any = None,
) -> np.ndarray:
    """The Whittle index of the stochastic model at states ``x``, by eqs. (33)-(35) of Avrachenkov and
    Borkar (2018).

    Parameters
    ----------
    x : array_like of shape (..., n_sources)
        The states ``x_c >= 0`` (thresholds) at which to estimate each source's index; every entry is a
        separate computation, so pass a few (the paper: "a finite family of x's, and interpolate").
    sources : SourceModel
        The sources.
    utility : {"deterministic", "exponential"}, default="deterministic"
        The law of an arrival's initial utility (as in
        :func:`~freshcore.whittle_simulation.simulate_sources`).
    noise : bool, default=True
        ``False`` replaces ``U`` by its mean ``u``: the deterministic model, whose index is
        :func:`~freshcore.whittle.whittle_index` (the check that the scheme is right).
    grid : int, default=400
        States of the value-iteration grid (``>= 16``), evenly spaced on ``[0, x_hi]``,
        ``x_hi = 1.5 max(x_c, u*, largest sample) + 8 sd``, ``sd`` the stationary spread of a never-crawled
        source.
    samples : int, default=128
        Draws of ``U`` that stand for its law ``phi`` (``>= 1``; one, ``u``, without noise).
    iterations : int, default=8000
        Steps of both timescales (``>= 1``).
    rng : None, int or numpy.random.Generator, optional
        Seed of the samples and of the stochastic-approximation draws.

    Returns
    -------
    gamma : ndarray of float64, shape of ``x``

    Raises
    ------
    ValueError
        If a state is negative, NaN or infinite (naming the first bad position), the last axis of ``x`` is
        not ``n_sources`` long, or ``grid``, ``samples``, ``iterations`` or ``utility`` is out of range.
    TypeError
        If ``sources`` is not a :class:`~freshcore.whittle.SourceModel`, or ``noise`` is not a bool.

    Notes
    -----
    Fast timescale, relative value iteration for the threshold policy at ``x_c`` with ``phi`` the empirical
    law of the samples and ``R_n = mean_s V_n(U_s)`` (the value right after a crawl, which the paper writes
    ``V_n(u)``):

        ``V_{n+1}(x) = C gamma_n + mean_s V_n(alpha x + U_s)``  for ``x < x_c``   (34)
        ``V_{n+1}(x) = x + R_n``  for ``x >= x_c``   (35)

    damped by a half (the noise-free dynamics are periodic) and shifted so that ``V(0) = 0``; V between grid
    points by linear interpolation.  Slow timescale, eq. (33):
    ``gamma_{n+1} = gamma_n - a_n (C gamma_n + V_n(alpha x_c + U~_n) - R_n - x_c)`` with ``U~_n`` drawn from the
    samples and ``a_n = 0.5 / (C (1 + n/100)^0.7)``, started at ``x_c / (2C)``.  The paper's (35) reads
    ``x - V_n(u)``; with ``V_n(u)`` the value after a crawl, the active branch of a value iteration is
    ``x + R_n`` (up to the common shift), which we use.  Accuracy: the grid's (about ``1e-4`` relative at 400
    points without noise, tests/test_whittle_stochastic_index.py) plus the stochastic approximation's noise
    (the tests compare with a direct solve of eqs. (28)-(31) on the same grid).

    Examples
    --------
    >>> from freshcore.whittle import SourceModel, whittle_index
    >>> from freshcore.whittle_stochastic import stochastic_index
    >>> table1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    >>> x = 0.6 * table1.u_star
    >>> (stochastic_index(x, table1, noise=False) / whittle_index(x, table1)).round(3).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    caller = "stochastic_index"
    src = check_sources(sources, caller)
    noise = _check_noise(noise, caller)
    arr = check_states(x, src, caller)
    check_choice(utility, "utility", caller, UTILITIES)
    grid = check_int(grid, "grid", caller, low=16)
    n_samples = check_int(samples, "samples", caller, low=1)
    iterations = check_int(iterations, "iterations", caller, low=1)
    gen = check_rng(rng, caller)
    n = len(src)
    flat = arr.reshape(-1)
    idx = np.tile(np.arange(n), flat.size // n if n else 0)
    if noise:
        draws = ArrivalStream(src, n_samples, utility, gen).draw(1)[0].T      # (n_sources, samples)
    else:
        draws = src.u[:, None].copy()
    sd = np.sqrt(draws.var(axis=1) / (1.0 - src.alpha**2))
    top = np.maximum(np.maximum(src.u_star, draws.max(axis=1)), 0.0)
    x_hi = 1.5 * np.maximum(flat, top[idx]) + 8.0 * sd[idx]
    x_hi = np.where(x_hi > 0.0, x_hi, 1.0)
    out = np.empty(flat.size)
    streams = gen.integers(1, 2**63, size=(flat.size, 4), dtype=np.uint64)
    _whittle.stochastic_index_kernel(
        np.ascontiguousarray(flat), np.ascontiguousarray(src.alpha[idx]), np.ascontiguousarray(src.cost[idx]),
        np.ascontiguousarray(x_hi), np.ascontiguousarray(draws[idx]), grid, iterations,
        np.ascontiguousarray(0.5 * flat * src._invc[idx]), streams, out)
    return out.reshape(arr.shape)


def _laws(src: SourceModel, utility: str, noise: bool, n_samples: int, gen: np.random.Generator) -> np.ndarray:
    """Samples of U standing for its law, shape (n_sources, samples) (``u`` itself without noise)."""
    if noise:
        return np.ascontiguousarray(ArrivalStream(src, n_samples, utility, gen).draw(1)[0].T)
    return src.u[:, None].copy()


def _weights(rows: np.ndarray, points: np.ndarray, n_rows: int, g: int, h: float) -> np.ndarray:
    """The (n_rows, g) matrix of linear-interpolation weights on the grid 0, h, ..., (g-1) h (clamped at both
    ends), each point adding its two weights to its row, every row's weights averaged over its points."""
    t = np.clip(points / h, 0.0, g - 1.0)
    j = np.minimum(np.floor(t).astype(np.intp), g - 2)
    frac = t - j
    w = np.zeros((n_rows, g))
    np.add.at(w, (rows, j), 1.0 - frac)
    np.add.at(w, (rows, j + 1), frac)
    return w / (len(points) // n_rows)


class _SourceGrid:
    """One source's stochastic model on a grid: passive and post-crawl transition matrices."""

    def __init__(self, alpha: float, cost: float, ustar: float, samples: np.ndarray, grid: int) -> None:
        sd = np.sqrt(samples.var() / (1.0 - alpha**2))
        x_hi = max(1.5 * max(ustar, float(samples.max())) + 8.0 * sd, 1e-300)
        self.g, self.cost = grid, cost
        self.x = np.linspace(0.0, x_hi, grid)
        h = x_hi / (grid - 1)
        flat = (alpha * self.x[:, None] + samples[None, :]).ravel()
        self.passive = _weights(np.repeat(np.arange(grid), len(samples)), flat, grid, grid, h)
        self.after_crawl = _weights(np.zeros(len(samples), dtype=np.intp), samples, 1, grid, h)[0]
        self.active = self.x >= ustar      # the policy to start from; each call leaves its optimum here

    def gain(self, lam: float) -> float:
        """The optimal average reward with subsidy C lam, by policy iteration (each policy solved exactly, the
        bias pinned at the grid's first state), started from the last call's optimum."""
        g = self.g
        active = self.active
        for _ in range(200):
            p = np.where(active[:, None], self.after_crawl[None, :], self.passive)
            r = np.where(active, self.x, self.cost * lam)
            a = np.zeros((g + 1, g + 1))
            a[:g, :g] = np.eye(g) - p
            a[:g, g] = 1.0
            a[g, 0] = 1.0
            sol = np.linalg.solve(a, np.append(r, 0.0))
            v, beta = sol[:g], sol[g]
            q_act = self.x + self.after_crawl @ v
            q_pas = self.cost * lam + self.passive @ v
            better = np.where(active, q_pas > q_act + 1e-12 * (1.0 + abs(beta)),
                              q_act > q_pas + 1e-12 * (1.0 + abs(beta)))
            if not better.any():
                break
            active = np.where(better, ~active, active)
        self.active = active
        return float(beta)


def _grids(src: SourceModel, utility: str, noise: bool, grid: int, samples: int, gen: np.random.Generator
           ) -> list[_SourceGrid]:
    draws = _laws(src, utility, noise, samples, gen)
    return [_SourceGrid(float(src.alpha[i]), float(src.cost[i]), float(src.u_star[i]), draws[i], grid)
            for i in range(len(src))]


@cites(AVRACHENKOV_BORKAR_2018)
def stochastic_gain(
    multiplier: Any,
    sources: SourceModel,
    *,
    utility: str = "deterministic",
    noise: bool = True,
    grid: int = 200,
    samples: int = 8192,
    rng: Any = None,
) -> np.ndarray:
    """The optimal average reward ``beta_i(lambda)`` of each source of the stochastic model on its own, with
    subsidy ``C_i lambda`` for each passive period (eq. (25) of Avrachenkov and Borkar (2018)).

    Parameters
    ----------
    multiplier : float
        ``lambda``, finite.
    sources : SourceModel
        The sources (a few: each takes a ``grid`` x ``grid`` linear solve per policy-iteration step).
    utility, noise, rng
        As for :func:`stochastic_index`.
    grid : int, default=200
        States of the grid (``>= 16``).
    samples : int, default=8192
        Draws of ``U`` standing for its law (the bound depends on its tails: with 1024 draws it moved by
        +-0.5 on Table I from seed to seed, tests/test_whittle_stochastic_index.py).

    Returns
    -------
    beta : ndarray of float64, shape (n_sources,)

    Notes
    -----
    The average-reward equation ``V(x) + beta = max(C lambda + E V(alpha x + U), x + E V(U))`` on a grid of
    ``[0, x_hi]`` (as :func:`stochastic_index`'s), ``U``'s law the samples', ``V`` between grid points by
    linear interpolation, solved by policy iteration (each policy's ``V`` and ``beta`` by one linear solve).
    Without noise it is the deterministic :func:`~freshcore.whittle.source_gain` up to the grid's error.
    """
    caller = "stochastic_gain"
    src = check_sources(sources, caller)
    noise = _check_noise(noise, caller)
    lam = check_scalar(multiplier, "multiplier", caller)
    check_choice(utility, "utility", caller, UTILITIES)
    grid = check_int(grid, "grid", caller, low=16)
    samples = check_int(samples, "samples", caller, low=1)
    gen = check_rng(rng, caller)
    return np.array([g.gain(lam) for g in _grids(src, utility, noise, grid, samples, gen)])


@cites(AVRACHENKOV_BORKAR_2018)
def stochastic_bound(
    sources: SourceModel,
    budget: Any,
    *,
    utility: str = "deterministic",
    noise: bool = True,
    grid: int = 200,
    samples: int = 8192,
    rng: Any = None,
) -> tuple[float, float]:
    """The Lagrangian upper bound of the stochastic model: ``min_lambda sum_i beta_i(lambda) + lambda (M -
    sum_i C_i)`` with :func:`stochastic_gain`'s ``beta``.

    It bounds the long-run average reward of every policy of eq. (23) of Avrachenkov and Borkar (2018) that
    crawls at most ``M`` (cost-weighted) a period on average, including those that look at the random states
    (Whittle's), up to the grid's error and the sampling of ``U``'s law (on Table I, 8192 draws: about +-0.1
    from seed to seed, a grid of 150 or 300 states within 0.01).

    Parameters
    ----------
    sources : SourceModel
        The sources (a few).
    budget : float
        ``M > 0``.
    utility, noise, grid, samples, rng
        As for :func:`stochastic_gain`.

    Returns
    -------
    (bound, multiplier) : tuple of float
        The least bound and the ``lambda`` where it is reached (golden-section search over
        ``[0, max_i x_hi,i / C_i]``; the function is convex in ``lambda``).
    """
    caller = "stochastic_bound"
    src = check_sources(sources, caller)
    noise = _check_noise(noise, caller)
    m = check_scalar(budget, "budget", caller, low=0.0, low_inclusive=False)
    check_choice(utility, "utility", caller, UTILITIES)
    grid = check_int(grid, "grid", caller, low=16)
    samples = check_int(samples, "samples", caller, low=1)
    grids = _grids(src, utility, noise, grid, samples, check_rng(rng, caller))
    total = float(src.cost.sum())

    def dual(lam: float) -> float:
        return sum(g.gain(lam) for g in grids) + lam * (m - total)

    lo, hi = 0.0, max(float(g.x[-1]) / g.cost for g in grids)
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = dual(a), dual(b)
    for _ in range(40):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = dual(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = dual(b)
    best = min((fa, a), (fb, b), (dual(0.0), 0.0))
    return float(best[0]), float(best[1])
