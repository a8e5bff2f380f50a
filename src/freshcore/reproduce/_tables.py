"""What the reproductions share: the papers' random instances and plain-text tables of mean ± standard error."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..pages import PageModel

R = 100.0  # the bandwidth of the experiments of Busa-Fekete et al. (2025), Section 6
N_INSTANCES = 3


def instance(m: int, k: int, signals: bool = False) -> PageModel:
    """Instance ``k`` with ``m`` pages of Section 6.1 of Busa-Fekete et al. (2025): ``Delta_i, mu_i ~ U[0, 1]``,
    with signals ``lambda_i ~ Beta(0.25, 0.25)``, ``nu_i ~ U(0.1, 0.6)``; parameters from
    ``numpy.random.default_rng(1000 m + k)`` (events from seed ``k``), so every policy of a row sees the same
    instances and events."""
    rng = np.random.default_rng(1000 * m + k)
    dl, mu = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    if not signals:
        return PageModel(dl, mu)
    return PageModel(dl, mu, rng.beta(0.25, 0.25, m), rng.uniform(0.1, 0.6, m))


def mean_se(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean over instances (NaN for one)."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan)


def fmt(values: Sequence[float]) -> str:
    m, s = mean_se(values)
    return f"{m:.4f}" if math.isnan(s) else f"{m:.4f}±{s:.4f}"


@dataclass
class Table:
    """A titled table of strings, with the numbers behind it in ``values`` (for tests and plots)."""

    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    values: dict[str, float] = field(default_factory=dict)

    def text(self) -> str:
        widths = [max(len(h), *(len(r[i]) for r in self.rows)) if self.rows else len(h)
                  for i, h in enumerate(self.header)]
        lines = [self.title, "  ".join(h.rjust(w) for h, w in zip(self.header, widths))]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in self.rows]
        return "\n".join(lines)
