"""Threads for full-array batch updates.

The batched estimators' kernels release the GIL, and in a full update (every
page once, ``pages=None``) each page's step depends on that page alone.  Such
updates of large batches are split into contiguous chunks that run on a small
shared thread pool, the calling thread taking one chunk.  The kernels are
memory bound, and on the 2-core machine this project is measured on two
threads move twice the bytes of one (``np.copyto`` of 10^7 doubles: 10.0 ms
on one thread, 4.8 ms on two).  Every page sees the same arithmetic whatever
the split, so results are bit-identical for any thread count.

The thread count defaults to the CPUs this process may use (at most 8), or to
the environment variable ``FRESHCORE_NUM_THREADS``; :func:`set_num_threads`
changes it (1 turns threading off, e.g. in a crawler that already runs one
process per core).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ._validation import check_int

__all__ = ["get_num_threads", "parallel_chunks", "set_num_threads"]

#: Pages per thread below which a batch update stays on the calling thread
#: (thread hand-off costs tens of microseconds; a page costs about a nanosecond).
MIN_CHUNK = 1 << 18
#: The same for kernels that spend about a microsecond per page (crawl values,
#: threshold solves): 4096 pages are a few milliseconds of work.
MIN_CHUNK_HEAVY = 1 << 12


def _default_threads() -> int:
    env = os.environ.get("FRESHCORE_NUM_THREADS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"FRESHCORE_NUM_THREADS must be a whole number >= 1. Got {env!r} instead.")
        return n
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


_num_threads = _default_threads()
_pool: ThreadPoolExecutor | None = None
_pool_key: tuple[int, int] | None = None  # (pid, workers) the pool was made for
_lock = threading.Lock()


def get_num_threads() -> int:
    """Number of threads large batch updates use (see :func:`set_num_threads`).

    Examples
    --------
    >>> import freshcore
    >>> freshcore.get_num_threads() >= 1
    True
    """
    return _num_threads


def set_num_threads(n: int) -> int:
    """Set the number of threads large batch updates use; return the previous value.

    Parameters
    ----------
    n : int >= 1
        1 keeps every update on the calling thread.

    Returns
    -------
    int
        The previous setting.

    Notes
    -----
    Only full updates (``pages=None``) of batches with at least
    ``2 * 2**18`` pages are split; results do not depend on the setting.

    Examples
    --------
    >>> import freshcore
    >>> old = freshcore.set_num_threads(1)
    >>> freshcore.get_num_threads()
    1
    >>> _ = freshcore.set_num_threads(old)
    """
    global _num_threads
    n = check_int(n, "n", "set_num_threads", low=1)
    old, _num_threads = _num_threads, n
    return old


def _get_pool(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_key
    key = (os.getpid(), workers)  # a forked child must not reuse its parent's (dead) threads
    with _lock:
        if _pool is None or _pool_key != key:
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="freshcore")
            _pool_key = key
        return _pool


def parallel_chunks(n: int, fn: Callable[[int, int], None], heavy: bool = False) -> None:
    """Call ``fn(start, stop)`` over contiguous chunks covering ``range(n)``.

    Uses up to :func:`get_num_threads` threads, each with at least
    ``MIN_CHUNK`` items (``MIN_CHUNK_HEAVY`` with ``heavy=True``, for kernels
    costing about a microsecond per item); ``fn`` must release the GIL to
    gain anything and must touch only its own chunk.  Exceptions of any chunk
    propagate.
    """
    chunks = min(_num_threads, n // (MIN_CHUNK_HEAVY if heavy else MIN_CHUNK))
    if chunks <= 1:
        fn(0, n)
        return
    bounds = [n * i // chunks for i in range(chunks + 1)]
    pool = _get_pool(chunks - 1)
    futures = [pool.submit(fn, bounds[i], bounds[i + 1]) for i in range(1, chunks)]
    try:
        fn(bounds[0], bounds[1])
    finally:
        for f in futures:
            f.result()
