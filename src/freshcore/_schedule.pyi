"""Typed stub of the compiled scheduler state (the ``cdef`` methods are reachable from Cython only)."""

import numpy as np
from numpy.typing import NDArray

_F = NDArray[np.float64]

class SchedulerState:
    n_evaluations: int
    n_rebuilds: int
    def __init__(
        self,
        delta: _F,
        mu: _F,
        alpha: _F,
        gamma: _F,
        nu: _F,
        beta: _F,
        recall: _F,
        beff: _F,
        kind: int,
        terms: int,
        rate: float,
        signal_delay: float,
    ) -> None: ...
    @property
    def time(self) -> float: ...
    @property
    def rate(self) -> float: ...
    @property
    def level(self) -> float: ...
    @property
    def n_hot(self) -> int: ...
    def last_crawl(self) -> _F: ...
    def signal_counts(self) -> NDArray[np.int64]: ...
    def last_crawl_of(self, j: int) -> float: ...
    def step(self) -> int: ...
    def run(self, n: int, out: NDArray[np.intp]) -> None: ...
    def signal(self, j: int, t: float) -> bool: ...
    def set_rate(self, rate: float) -> None: ...

__test__: dict[str, str]
