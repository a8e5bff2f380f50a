"""The papers' experiments, reproduced: ``freshcore reproduce NAME`` prints their tables.

Each module holds one topic's experiments, as the tests and ``bench/`` run them, and a ``run(quick=False,
seed=0)`` that returns its tables (:class:`Table`: text, and the numbers behind it) beside the numbers SPEC
lists as reproducible:

- ``estimators``: RMSE of the online estimators and the MLE (Avrachenkov, Patil and Thoppe (2022));
- ``rates``: the optimal crawl rates' check distribution (periodic and Poisson crawling);
- ``scheduler``: the scheduler without signals against the continuous optimum (Fig. 2 and Appendix B of
  Busa-Fekete, Zimmert, György et al. (2025));
- ``signals``: the scheduler with change signals (their Fig. 4);
- ``blind``: the blind-sampling estimators M1-M6 (Table I, E[D3], E[D4], Figs. 4, 8 and 15 of Li, Cline and
  Loguinov (2017)).

The Whittle index policy will join as ``whittle``.
"""

from __future__ import annotations

from types import ModuleType

from . import blind, estimators, rates, scheduler, signals
from ._tables import Table

__all__ = ["EXPERIMENTS", "Table", "run"]

EXPERIMENTS: dict[str, ModuleType] = {"estimators": estimators, "rates": rates, "scheduler": scheduler,
                                      "signals": signals, "blind": blind}


def run(name: str, quick: bool = False, seed: int = 0) -> list[Table]:
    """The tables of experiment ``name`` (one of :data:`EXPERIMENTS`)."""
    if name not in EXPERIMENTS:
        raise ValueError(f"The 'name' parameter of run must be one of {', '.join(map(repr, EXPERIMENTS))}. "
                         f"Got {name!r} instead.")
    tables: list[Table] = EXPERIMENTS[name].run(quick=quick, seed=seed)
    return tables
