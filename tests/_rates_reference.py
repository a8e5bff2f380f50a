"""Shared pieces of the optimal-rates tests (test_rates_newton, test_rates_periodic_pass, test_rates_renewal)."""

from __future__ import annotations

import numpy as np

#: Bad arrays and scalars every optimal_rates path (fast or checked) refuses, with the message's key part.
BAD_ARRAYS = [
    (dict(change_rate=np.array([0.1, -1.0, 0.2])), r"change_rate\[1\] = -1.0"),
    (dict(change_rate=np.array([0.1, 0.3, np.nan])), r"change_rate\[2\] = nan"),
    (dict(change_rate=np.array([np.inf, 0.1, 0.2])), r"change_rate\[0\] = inf"),
    (dict(importance=np.array([1.0, 1.0, -0.5])), r"importance\[2\] = -0.5"),
    (dict(importance=np.array([1.0, np.nan, 1.0])), r"importance\[1\] = nan"),
    (dict(importance=np.array([1.0, -np.inf, 1.0])), r"importance\[1\] = -inf"),
    (dict(change_rate=np.array([0.0, -0.0, -1e-300])), r"change_rate\[2\]"),
    (dict(bandwidth=np.nan), r"'bandwidth'"),
    (dict(bandwidth=0.0), r"'bandwidth'"),
]


def periodic_rate_allowance(d, weight, old, new):
    """For two solutions of one periodic problem (rates r0 = old.crawl_rate): per page, how much the difference
    of the two multipliers may move its rate (ya: u dr/du grows like 1/(1 - c) right past a page's threshold),
    which pages are time-shared across a jump (their threshold between the two multipliers), and the
    multipliers' relative difference (twice |du/u|, plus 1e-15 for the rates' own rounding)."""
    r0 = old.crawl_rate
    with np.errstate(all="ignore"):
        b = np.sqrt(d / weight)
        u = old.multiplier ** -0.5
        x = np.divide(d, r0, out=np.full(len(d), np.inf), where=r0 > 0)
        c, om = (b / u) ** 2, (u - b) / u * ((u + b) / u)
        ya = np.where((r0 > 0) & (om > 0), r0 * 2 * c * (1 + x) / (x * x * om), 0.0)
        u_lo, u_hi = sorted([new.multiplier ** -0.5, u])
        shared = (b >= u_lo * (1 - 1e-12)) & (b <= u_hi * (1 + 1e-12))
    moved = abs(new.multiplier / old.multiplier - 1.0) + 1e-15
    return ya, shared, moved
