# cython: language_level=3
"""Test kernels of the scheduler's bounds (``_schedule_lines.pxd``; no validation).

The bounds themselves are inline and compiled into ``freshcore._schedule``; this
module runs them on arrays, for tests/test_schedule_bounds.py.
"""


def park_time_kernel(const double[::1] last, const double[::1] delta, const double[::1] mu, double level,
                     double[::1] out):
    """out[i] = the park key of a Greedy page at ``level`` (``park_time``)."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(out.shape[0]):
            out[i] = park_time(last[i], delta[i], mu[i], level)
