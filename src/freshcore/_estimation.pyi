"""Typed stub of the compiled online estimators (freshcore._estimation)."""

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

_T = TypeVar("_T", bound=_OnlineEstimator)

__test__: dict[str, str]

BLOCK: int

def _kernel_levels() -> tuple[int, int]: ...
def _set_kernel_level(level: int) -> int: ...
def sa_pages_update(
    koff: npt.NDArray[np.int64],
    blk: npt.NDArray[np.int64],
    base: int,
    y: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    pages: npt.NDArray[np.intp],
    p: npt.NDArray[np.float64],
    eta: float,
) -> None: ...
def sa_full_update(
    koff: npt.NDArray[np.int64],
    blk: npt.NDArray[np.int64],
    base: int,
    y: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    p: npt.NDArray[np.float64],
    eta: float,
    start: int,
    stop: int,
) -> None: ...
def sa_shared_update(
    y: npt.NDArray[np.float64], changed: npt.NDArray[np.uint8], p: npt.NDArray[np.float64], k: int, eta: float
) -> None: ...
def sam_pages_update(
    koff: npt.NDArray[np.int64],
    blk: npt.NDArray[np.int64],
    base: int,
    z: npt.NDArray[np.float64],
    z_prev: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    pages: npt.NDArray[np.intp],
    p: npt.NDArray[np.float64],
    eta: float,
    beta: float,
    omega: float,
) -> None: ...
def sam_full_update(
    koff: npt.NDArray[np.int64],
    blk: npt.NDArray[np.int64],
    base: int,
    z: npt.NDArray[np.float64],
    z_prev: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    p: npt.NDArray[np.float64],
    eta: float,
    beta: float,
    omega: float,
    start: int,
    stop: int,
) -> None: ...
def sam_shared_update(
    z: npt.NDArray[np.float64],
    z_prev: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    p: npt.NDArray[np.float64],
    k: int,
    eta: float,
    beta: float,
    omega: float,
) -> None: ...
def count_batch_update(
    koff: npt.NDArray[np.int64],
    blk: npt.NDArray[np.int64],
    base: int,
    n1: npt.NDArray[np.int64],
    n1_seg: npt.NDArray[np.int64],
    p_seg: npt.NDArray[np.float64],
    s_old: npt.NDArray[np.float64],
    rate: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    pages: npt.NDArray[np.intp] | None,
    p: npt.NDArray[np.float64],
    mode: int,
    alpha_kind: int,
    alpha: float,
    alpha_values: npt.NDArray[np.float64] | None,
) -> None: ...
def count_shared_update(
    n1: npt.NDArray[np.int64],
    rate: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    k1: int,
    p: float,
    mode: int,
    alpha_kind: int,
    alpha: float,
) -> None: ...
def count_shared_update32(
    n1: npt.NDArray[np.uint32],
    rate: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    k1: int,
    p: float,
    mode: int,
    alpha_kind: int,
    alpha: float,
) -> None: ...
def count_common_pages(
    koff: npt.NDArray[np.int64],
    blk: npt.NDArray[np.int64],
    base: int,
    n1: npt.NDArray[np.int64],
    rate: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    pages: npt.NDArray[np.intp],
    p: float,
    mode: int,
    alpha_kind: int,
    alpha: float,
    alpha_values: npt.NDArray[np.float64] | None,
) -> None: ...
def count_common_full(
    koff: npt.NDArray[np.int64],
    blk: npt.NDArray[np.int64],
    base: int,
    n1: npt.NDArray[np.int64],
    rate: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    p: float,
    mode: int,
    alpha_kind: int,
    alpha: float,
    alpha_values: npt.NDArray[np.float64] | None,
    start: int,
    stop: int,
) -> None: ...
def _check_params_rate(crawl_rate: Any, caller: str) -> float: ...
def _check_many(
    owner: Any, changed: Any, intervals: Any, crawl_rate: Any, default_rate: float
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64] | None, npt.NDArray[np.float64]]: ...
def _alpha_code(alpha: Any, caller: str) -> tuple[int, float, Callable[[int], float] | None]: ...

class _AlphaSequence:
    values: npt.NDArray[np.float64]
    caller: str
    def __init__(self, values: Any, caller: str) -> None: ...
    def __call__(self, k: int) -> float: ...
def _restore(cls: type[_T], d: dict[str, Any]) -> _T: ...

@disjoint_base
class _OnlineEstimator:
    @property
    def rate(self) -> float: ...
    @property
    def n_updates(self) -> int: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def crawl_rate(self) -> float | None: ...
    def update(self: _T, changed: Any, interval: float | None = None, crawl_rate: float | None = None) -> _T: ...
    def update_many(self: _T, changed: Any, intervals: Any = None, crawl_rate: Any = None) -> _T: ...
    def _params(self) -> dict[str, Any]: ...
    def _state(self) -> dict[str, Any]: ...
    def _set_state(self, state: dict[str, Any]) -> None: ...
    def to_dict(self) -> dict[str, Any]: ...
    @classmethod
    def from_dict(cls: type[_T], d: dict[str, Any]) -> _T: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@disjoint_base
class _CountEstimator(_OnlineEstimator):
    @property
    def n_changes(self) -> int: ...

@disjoint_base
class _NaiveEstimator(_CountEstimator):
    # keywords: see the public subclass in freshcore.estimation
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

@disjoint_base
class _LLNEstimator(_CountEstimator):
    # keywords: see the public subclass in freshcore.estimation
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def alpha(self) -> str | float | Callable[[int], float] | npt.ArrayLike: ...
    @property
    def consistent(self) -> bool | None: ...
    def update(self: _T, changed: Any, interval: float | None = None, crawl_rate: float | None = None) -> _T: ...
    def update_many(self: _T, changed: Any, intervals: Any = None, crawl_rate: Any = None) -> _T: ...

@disjoint_base
class _SAEstimator(_OnlineEstimator):
    # keywords: see the public subclass in freshcore.estimation
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def eta(self) -> float: ...

@disjoint_base
class _SAMEstimator(_OnlineEstimator):
    # keywords: see the public subclass in freshcore.estimation
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def eta(self) -> float: ...
    @property
    def beta(self) -> float: ...
    @property
    def omega(self) -> float: ...
    @property
    def previous(self) -> float: ...
