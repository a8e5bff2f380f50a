"""Shared pieces of the ``bench/repro_*.py`` reproductions of the experiments of Busa-Fekete et al. (2025)
(SPEC section 4).

Instances follow their Section 6.1: ``Delta_i, mu_i ~ U[0, 1]``, and with signals
``lambda_i ~ Beta(0.25, 0.25)``, ``nu_i ~ U(0.1, 0.6)``; instance ``k`` uses
``numpy.random.default_rng(1000 * m + k)`` for the parameters and seed
``k`` for the events, so every policy of a row sees the same instances and the
same events.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

import math

import numpy as np

from freshcore.pages import PageModel

R = 100.0
N_INSTANCES = 3


def instance(m: int, k: int, signals: bool = False) -> PageModel:
    """Instance ``k`` with ``m`` pages (Section 6.1 of Busa-Fekete et al. (2025))."""
    rng = np.random.default_rng(1000 * m + k)
    dl, mu = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    if not signals:
        return PageModel(dl, mu)
    return PageModel(dl, mu, rng.beta(0.25, 0.25, m), rng.uniform(0.1, 0.6, m))


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error of the mean over instances."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan


def fmt(values) -> str:
    m, s = mean_se(values)
    return f"{m:.4f}±{s:.4f}"


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
