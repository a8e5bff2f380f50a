# cython: language_level=3
"""Compiled special functions of freshcore (cimportable through ``_core.pxd``).

Design
------
freshcore's compiled code is layered (see STYLE.md):

1. ``cdef inline ... noexcept nogil`` functions for one page, one step or one
   series term;
2. ``def`` batch kernels over typed memoryviews (``const double[::1]`` in,
   caller-allocated ``double[::1]`` out) that release the GIL;
3. ``cdef class`` state holders for what must stay compiled between calls;
4. public Python functions and classes (``freshcore.*``) that validate input,
   choose defaults, allocate outputs and delegate here.

The kernels never validate user input: by the time they run, every array is
C-contiguous float64 (or the documented integer type), of matching length and
within range, so ``boundscheck``/``wraparound`` are off and ``cdivision`` is on
(guarded divisions only).  Build with ``FRESHCORE_DEBUG_CYTHON=1`` to switch the
checks back on.
"""
