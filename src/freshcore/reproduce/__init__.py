"""The papers' experiments, reproduced: ``freshcore reproduce NAME`` prints their tables.

Each module holds one topic's experiments, as the tests and ``bench/`` run them, and a ``run(quick=False,
seed=0)`` that returns its tables (:class:`Table`: text, and the numbers behind it) beside the numbers SPEC
lists as reproducible:

- ``estimators``: RMSE of the online estimators and the MLE (Avrachenkov, Patil and Thoppe (2022));
- ``rates``: the optimal crawl rates' check distribution (periodic and Poisson crawling);
- ``scheduler``: the scheduler without signals against the continuous optimum (Fig. 2 and Appendix B of
  Busa-Fekete, Zimmert, György et al. (2025));
- ``signals``: the scheduler with change signals (their Fig. 4).

The Whittle index policy and the blind-sampling estimators will join as ``whittle`` and ``blind``.
"""

from __future__ import annotations

from types import ModuleType

from . import estimators, rates, scheduler, signals
from ._tables import Table

__all__ = ["EXPERIMENTS", "Table", "run"]

EXPERIMENTS: dict[str, ModuleType] = {"estimators": estimators, "rates": rates, "scheduler": scheduler,
                                      "signals": signals}


def run(name: str, quick: bool = False, seed: int = 0) -> list[Table]:
    """The tables of experiment ``name`` (one of :data:`EXPERIMENTS`)."""
    if name not in EXPERIMENTS:
        raise ValueError(f"The 'name' parameter of run must be one of {', '.join(map(repr, EXPERIMENTS))}. "
                         f"Got {name!r} instead.")
    tables: list[Table] = EXPERIMENTS[name].run(quick=quick, seed=seed)
    return tables
