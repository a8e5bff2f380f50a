# cython: language_level=3
"""Test kernels of the scheduler's scan (``_schedule_scan.pxd``, ``_schedule_scan.h``; no validation).

The scan itself is inline and compiled into ``freshcore._schedule``; this module
runs the same C kernels on arrays, for tests/test_schedule_bounds.py.
"""

from libc.stdint cimport int32_t


def scan_kernel(const double[::1] slopes, const double[::1] top_keys, const int32_t[::1] buckets, double t,
                double tpad, double mg, double f, double th, double[::1] bounds, int32_t[::1] cand_buckets,
                double[::1] cand_bounds):
    """The tick's scan of one family's tops (``freshcore_scan``): fills bounds[:n] and
    cand_buckets/cand_bounds[:count] (n + 1 entries); returns the count."""
    cdef Py_ssize_t n = slopes.shape[0], nc
    with nogil:
        nc = freshcore_scan(&slopes[0] if n else NULL, &top_keys[0] if n else NULL, &buckets[0] if n else NULL,
                            n, t, tpad, mg, f, th, &bounds[0] if n else NULL, &cand_buckets[0], &cand_bounds[0], 0)
    return nc


def pick_kernel(const double[::1] bounds, const int32_t[::1] buckets, double th, int32_t[::1] cand_buckets,
                double[::1] cand_bounds):
    """The rejoin's choice (``freshcore_pick``): cand_buckets/cand_bounds[:count] (n + 1 entries); returns the count."""
    cdef Py_ssize_t n = bounds.shape[0], nc
    with nogil:
        nc = freshcore_pick(&bounds[0] if n else NULL, &buckets[0] if n else NULL, n, th, &cand_buckets[0],
                            &cand_bounds[0], 0)
    return nc
