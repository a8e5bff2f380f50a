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

This module gathers them; each group lives in its own module: :mod:`freshcore.blind_simulation` (interval laws,
renewal times, simulated logs), :mod:`freshcore.blind_estimators` (M1-M6, G-M4), :mod:`freshcore.blind_recovery`
(F_U and μ from G_U), :mod:`freshcore.blind_distances` (WMRD, KS) and :mod:`freshcore.blind_rates` (crawl rates
from G_U).

Conventions: ``times`` are the n sample (download) times, strictly increasing; ``changed`` are the n − 1 flags
Q_{j,j+1}, 1 iff the page changed between sample j and sample j + 1; ``ages`` are the n ages A_U(s_j)
(time since the last update) at the samples.  Q_ij for i < j is the OR of the flags in between.
"""

from __future__ import annotations

from .blind_distances import ks, wmrd
from .blind_estimators import LatticeSamplingWarning, g_m4, m1, m2, m3, m4, m5, m6
from .blind_rates import AgeTable, renewal_freshness, renewal_rates
from .blind_recovery import UpdateDistribution, flat_bin_width, update_distribution
from .blind_simulation import (
    BlindLog,
    Constant,
    Exponential,
    IntervalDistribution,
    Pareto,
    Sampled,
    Uniform,
    renewal_times,
    simulate_log,
)

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
