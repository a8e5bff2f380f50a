# cython: language_level=3
"""Test kernels of the scheduler's bounds (``_schedule_lines.pxd``; no validation).

The bounds themselves are inline and compiled into ``freshcore._schedule``; this
module runs them on arrays, for tests/test_schedule_bounds.py.
"""

import numpy as np


cdef int PARK_X_LEVEL_C = park_x_set_level(2)


#: The level of the vector kernel of the batched park keys (-1: none; the widest this build and CPU run).
PARK_X_LEVEL = PARK_X_LEVEL_C


def park_time_many_kernel(const double[::1] last, const double[::1] delta, const double[::1] mu, double level,
                          double[::1] out):
    """out[i] = the park key of a Greedy page at ``level`` as the settle computes it: x for all pages at once by
    ``park_x_many`` (``park_time``'s scalar Lambert W where there is no vector kernel), then ``park_time_at``."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef double[::1] y = np.empty(n)
    cdef double[::1] c = np.empty(n)
    cdef double[::1] x = np.empty(n)
    with nogil:
        for i in range(n):
            y[i] = park_share(delta[i], mu[i], level)
            c[i] = y[i] if y[i] < 1.0 else 0.5
        if PARK_X_LEVEL_C >= 0 and n > 0:
            park_x_many(&c[0], &x[0], n)
        else:
            for i in range(n):
                x[i] = residual1_inverse(c[i], 1.0 - c[i])
        for i in range(n):
            out[i] = park_time_at(last[i], delta[i], y[i], x[i])


def park_time_kernel(const double[::1] last, const double[::1] delta, const double[::1] mu, double level,
                     double[::1] out):
    """out[i] = the park key of a Greedy page at ``level`` (``park_time``)."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(out.shape[0]):
            out[i] = park_time(last[i], delta[i], mu[i], level)


def reach_time_kernel(const double[::1] t0, const double[::1] tau0, const double[::1] v0, const double[::1] psi0,
                      const double[::1] a, const double[::1] mu, double level, double[::1] out):
    """out[i] = the park key of a page of any kind from its value at t0 (``reach_time``, no pad)."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(out.shape[0]):
            out[i] = reach_time(t0[i], tau0[i], v0[i], psi0[i], a[i], mu[i], level, 0.0)


def psi_slope_kernel(const double[::1] mu, const double[::1] a, const double[::1] tau0, const double[::1] psi0,
                     const double[::1] b, const double[::1] g, double[::1] out):
    """out[i] = the slope of a line bounding V from tau0 (``psi_slope`` under ``value_slope``'s)."""
    cdef Py_ssize_t i
    cdef double s
    with nogil:
        for i in range(out.shape[0]):
            s = value_slope(mu[i], 1.0, a[i], tau0[i], -1.0)
            out[i] = psi_slope(mu[i], a[i], tau0[i], psi0[i], b[i], g[i], s) if s > 0.0 else s


# The bounds of the polled value kind (_schedule_polled.pxd, issue 19): one page per index, its PolledPage
# prepared from (Delta, lambda, nu, w) as freshcore._polled's kernels do; s-units throughout.

from freshcore._polled cimport PolledPage, polled_prepare
from freshcore._schedule_polled cimport (polled_psi_bar, polled_line, polled_reach_s, polled_root_slope,
                                         polled_tail, polled_break_pre, polled_next_break,
                                         polled_mass_break, polled_value_cheap)


def polled_psi_bar_kernel(const double[::1] s, const double[::1] dl, const double[::1] lam,
                          const double[::1] nu, const double[::1] w, double[::1] out):
    """out[i] = the bound of psi(s[i]) (``polled_psi_bar``)."""
    cdef Py_ssize_t i
    cdef PolledPage pg
    with nogil:
        for i in range(out.shape[0]):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            out[i] = polled_psi_bar(&pg, s[i])


def polled_line_kernel(const double[::1] s0, const double[::1] v0, const double[::1] level,
                       const double[::1] dl, const double[::1] lam, const double[::1] nu, const double[::1] w,
                       const double[::1] mu, double[::1] slope, double[::1] c):
    """slope[i], c[i] = the line bounding V from ``V(s0[i]) = v0[i]`` chosen for ``level[i]`` (``polled_line``)."""
    cdef Py_ssize_t i
    cdef PolledPage pg
    with nogil:
        for i in range(slope.shape[0]):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            slope[i] = polled_line(&pg, mu[i], s0[i], v0[i], level[i], &c[i])


def polled_reach_s_kernel(const double[::1] s0, const double[::1] v0, const double[::1] level,
                          const double[::1] dl, const double[::1] lam, const double[::1] nu, const double[::1] w,
                          const double[::1] mu, double[::1] out):
    """out[i] = a lower bound of the first s >= s0[i] with V(s) >= level[i] (``polled_reach_s``)."""
    cdef Py_ssize_t i
    cdef PolledPage pg
    with nogil:
        for i in range(out.shape[0]):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            out[i] = polled_reach_s(&pg, mu[i], s0[i], v0[i], level[i])


def polled_tail_kernel(const double[::1] s0, const double[::1] v0, const double[::1] dl, const double[::1] lam,
                       const double[::1] nu, const double[::1] w, const double[::1] mu, double[::1] out):
    """out[i] = the bound of every V(s), s >= s0[i], from ``V(s0[i]) = v0[i]`` (``polled_tail``; 0 < Delta,
    mu)."""
    cdef Py_ssize_t i
    cdef PolledPage pg
    cdef double B, pre
    with nogil:
        for i in range(out.shape[0]):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            B = polled_break_pre(&pg, mu[i], s0[i], &pre)
            out[i] = polled_tail(&pg, mu[i], s0[i], v0[i], B, pre)


def polled_mass_break_kernel(const double[::1] lo, const double[::1] dl, const double[::1] lam,
                             const double[::1] nu, const double[::1] w, double[::1] brk, double[::1] zone,
                             double[::1] mass):
    """brk[i] = the next breakpoint at or above ``lo[i]`` (``polled_next_break``, taken low), zone[i] = the next
    zone's start ``B' >= brk[i]`` and mass[i] the path weight bound of the breakpoints in ``[lo[i], B')``
    (``polled_mass_break``; kind 0 pages)."""
    cdef Py_ssize_t i
    cdef PolledPage pg
    with nogil:
        for i in range(brk.shape[0]):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            brk[i] = polled_next_break(&pg, lo[i]) if pg.kind == 0 else INFINITY
            zone[i] = polled_mass_break(&pg, lo[i], brk[i], &mass[i])


def polled_value_cheap_kernel(const double[::1] s, const double[::1] dl, const double[::1] lam,
                              const double[::1] nu, const double[::1] w, const double[::1] mu, double[::1] out):
    """out[i] = the closed-form upper bound of V(s[i]) (``polled_value_cheap``; inf where it gives none)."""
    cdef Py_ssize_t i
    cdef PolledPage pg
    with nogil:
        for i in range(out.shape[0]):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            out[i] = polled_value_cheap(&pg, s[i], mu[i])


def polled_root_slope_kernel(const double[::1] dl, const double[::1] lam, const double[::1] nu,
                             const double[::1] w, const double[::1] mu, double[::1] out):
    """out[i] = the slope of the line through the root bounding sqrt V (``polled_root_slope``)."""
    cdef Py_ssize_t i
    cdef PolledPage pg
    with nogil:
        for i in range(out.shape[0]):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            out[i] = polled_root_slope(&pg, mu[i])


def polled_page_line_kernel(const double[::1] s0, const double[::1] v0, const double[::1] level,
                            const double[::1] dl, const double[::1] lam, const double[::1] nu, const double[::1] w,
                            const double[::1] mu, double[::1] slope, double[::1] c):
    """slope[i], c[i] = the line bounding V (s-units, from ``s0[i]``) that the scheduler keeps for a polled page
    when it reaches ``level[i]`` later than the root line: ``polled_line``'s, or the line through ``(s0, v0 (1 +
    2e-12))`` that passes it beyond the next breakpoint (``polled_pivot_line``)."""
    cdef Py_ssize_t i
    cdef PolledPage pg
    cdef double S
    with nogil:
        for i in range(slope.shape[0]):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            S = polled_line(&pg, mu[i], s0[i], v0[i], level[i], &c[i])
            if level[i] > 0.0 and S < INFINITY and not (S == 0.0 and not (c[i] > v0[i])):
                polled_pivot_line(&pg, mu[i], s0[i], v0[i], level[i], &c[i], &S)
            slope[i] = S
