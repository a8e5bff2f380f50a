"""The numpy lattice sum of ``freshcore.polled_signals`` (its implementation before the compiled one, issue 19):
the reference the compiled ``psi``, ``w`` and ``V`` are tested against.  It sums the lattice row by row over
the blocks of ``freshcore.polled_signals._blocks`` (kept there: ``bench/repro_polled.py`` builds its tables from
them), ``O(points)``, and refuses a page past ``MAX_POINTS`` points."""

from __future__ import annotations

import math

import numpy as np

from freshcore.polled_signals import _LOG_TAIL, _TAIL, _blocks
from freshcore.special import residual_exp


def _page_sums(iota: float, dl: float, lam: float, nu: float, w: float, need_psi: bool = True
               ) -> tuple[float, float, float]:
    """``(psi, w, V/mu)`` of one page at threshold ``iota``; without ``need_psi`` the sum stops once ``w`` and
    ``V`` are accurate (``psi`` is then a lower bound), which bounds the work at large ``iota``."""
    if iota <= 0.0:
        return 0.0, 0.0, 0.0
    if dl == 0.0:
        return math.inf, math.inf, 0.0
    if iota == math.inf:
        return math.inf, 1.0 / dl, 1.0 / dl
    if lam * dl == 0.0 or w == math.inf:  # Greedy: s = Delta tau
        return iota / dl, -math.expm1(-iota) / dl, float(residual_exp(1, iota)) / dl
    alpha = dl - lam * dl
    if not need_psi and alpha > 0.0 and iota > 40.0 and -iota + math.log1p(dl * iota / alpha) < _LOG_TAIL:
        # 1/Delta - w = E[e^{-s_T}]/Delta <= e^{-iota}/Delta and psi <= iota/alpha, so
        # 0 <= 1/Delta - V/mu <= e^{-iota} (1 + Delta iota/alpha)/Delta: below 1e-17 of 1/Delta
        return math.nan, 1.0 / dl, 1.0 / dl
    psi_terms: list[np.ndarray] = []
    fresh_terms: list[np.ndarray] = []
    value_terms: list[np.ndarray] = []
    psi = val = cut = 0.0
    e_iota = math.exp(-iota)
    dw = dl * w
    for blk in _blocks(iota, dl, lam, nu, w):
        x, p = blk.x, blk.weight
        d = np.minimum(dw, iota - x)
        ex = np.exp(-x)
        with np.errstate(over="ignore", invalid="ignore"):
            second = np.where(d < dw, 0.0, d * e_iota * np.expm1(iota - x - d))
        psi_terms.append(p * d)
        fresh_terms.append(p * ex * -np.expm1(-d))
        value_terms.append(p * (ex * residual_exp(1, d) + second))
        psi += float(psi_terms[-1].sum())
        val += float(value_terms[-1].sum())
        cut += blk.cut
        # a left-out point adds at most w to psi and w e^{-x} <= w e^{-level} to w and V
        rest = blk.rest + cut
        if (not need_psi or rest * dw <= _TAIL * psi) and rest * dw * math.exp(-blk.level) <= _TAIL * val:
            break
    # w <= 1/Delta and V <= mu/Delta hold exactly; the sums can pass them by rounding
    return (float(np.sum(np.concatenate(psi_terms))) / dl, min(float(np.sum(np.concatenate(fresh_terms))), 1.0) / dl,
            min(float(np.sum(np.concatenate(value_terms))), 1.0) / dl)
