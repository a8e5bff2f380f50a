"""The Whittle index of the stochastic model, learnt by two-timescale stochastic approximation (Section VIII of
Avrachenkov and Borkar (2018), eqs. (33)-(35)).

With random utilities (eq. (23)) the index has no closed form.  :func:`stochastic_index` estimates it at given
states ``x_c``: relative value iteration evaluates the threshold policy "crawl iff ``X >= x_c``" on a grid of
states (the fast timescale), while stochastic approximation moves the subsidy ``gamma`` until ``x_c`` is
indifferent between crawling and waiting (the slow timescale).  With the noise switched off it converges on
the closed form of :func:`freshcore.whittle.whittle_index`.

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
from freshcore._validation import check_choice, check_int, check_rng
from freshcore.whittle import SourceModel, check_sources, check_states
from freshcore.whittle_simulation import UTILITIES, ArrivalStream

__all__ = ["stochastic_index"]


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
        If ``sources`` is not a :class:`~freshcore.whittle.SourceModel`.

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
