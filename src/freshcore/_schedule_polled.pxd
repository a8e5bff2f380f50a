# Bounds of the crawl value of polled signals (value kind "polled", issue 19) for the scheduler: psi's bound,
# the line bounding V from an evaluation, the park staleness and the line bounding sqrt V through the root.
# Everything is in s-units (s the page's log-staleness; the scheduler multiplies slopes by Delta, since
# s = Delta (t - ell) between polls).  Every function is inline and allocation-free:
# ``from freshcore._schedule_polled cimport polled_line``.  Test kernels: freshcore._schedule_lines.
#
# Notation (freshcore._polled, freshcore.polled_signals): alpha = (1 - lambda) Delta, aw = alpha w (an unmoved
# window's weight), b = b(w) >= lambda Delta w (what a moved window adds; inf when nu = 0), lw = lambda Delta w,
# q = 1 - e^{-gamma w} (P(a window moves)), qb = 1 - q.  A path's post-poll staleness after n polls,
# x_n = x_{n-1} + aw (unmoved) or + aw + b (moved), the windows independent; between polls s grows at Delta, so
# s_t >= alpha t along every path.  V(s) = mu E int_0^T (e^{-s_t} - e^{-s}) dt with T the first time s_t >= s
# (the threshold policy's cycle; w(s) = E int_0^T e^{-s_t} dt and psi(s) = E T), non-decreasing; between the
# breakpoints dV/ds = mu e^{-s} psi(s), and at each breakpoint beta = x(n, j) + lw of an unmoved-last lattice
# point (n windows, j moved, the last unmoved) V jumps up by (mu/Delta) P e^{-x} R^1(lw),
# P = C(n-1, j) q^j qb^(n-j) (the point appears in V's sum with d = s - x = lw).
#
# Rounding.  The computed V is within LEVEL_SLACK = 1e-12 of the true one (freshcore._polled), and near a
# breakpoint it may fall on the wrong side of the jump (its test x + lw < s is rounded: a few ulps of s).  The
# bounds below cover both, for the computed values: an evaluation's v0 counts as v0 (1 + 2e-12), slopes are
# raised by 1e-12, and the breakpoints counted are those within eps = 1e-13 (1 + s0 + lw) below s0 (and
# 1e-13 of s above s), so a jump that v0 missed is still allowed for.

from libc.math cimport INFINITY, exp, sqrt, ceil, fmin, fmax
from libc.float cimport DBL_EPSILON

from freshcore._core cimport residual_exp, residual1_inverse
from freshcore._polled cimport PolledPage


cdef inline double polled_alpha(const PolledPage* pg) noexcept nogil:
    """``alpha = (1 - lambda) Delta`` of a page (Greedy pages, kind 1: ``Delta``; kind 2: 0)."""
    if pg.kind == 2:
        return 0.0
    if pg.kind == 1:
        return pg.dl
    return pg.aw / (pg.dw / pg.dl)


cdef inline double polled_psi_bar(const PolledPage* pg, double s) noexcept nogil:
    """An upper bound of ``psi(s)`` (time units): ``min(s/alpha, (s + alpha w + b)/(alpha + q b/w))``.

    * ``s/alpha``: ``s_t >= alpha t`` on every path, so the cycle ends by ``t = s/alpha`` (``T <= s/alpha``).
    * Wald: with ``N`` the first poll with ``x_N >= s``, the page is crawled by then (``T <= N w``: the drift
      or the poll's jump reached ``s``), and ``x_N < s + alpha w + b`` (``x_{N-1} < s``, one step at most
      ``alpha w + b``); the steps are i.i.d. of mean ``alpha w + q b``, so ``E[N] (alpha w + q b) = E[x_N]``
      and ``psi <= w E[N] < w (s + alpha w + b)/(alpha w + q b)``.  With ``b = inf`` (``nu = 0``) the first
      move crawls: ``E[N] <= 1/q``, the limit ``w/q``.

    Degenerate cases: ``alpha = 0`` (``lambda = 1``) keeps the second, ``q = 0`` the first (inf if both are);
    Greedy pages (kind 1, ``psi = s/Delta`` exactly) ``s/Delta``; pages that never change (kind 2) inf; 0 for
    ``s <= 0``.
    """
    cdef double w, p1, p2
    if not (s > 0.0):
        return 0.0
    if pg.kind == 2:
        return INFINITY
    if pg.kind == 1:
        return s / pg.dl
    w = pg.dw / pg.dl
    p1 = s / pg.aw if pg.aw > 0.0 else INFINITY
    if not (pg.q > 0.0):
        p2 = INFINITY
    elif pg.b == INFINITY:
        p2 = 1.0 / pg.q
    else:
        p2 = (s + pg.aw + pg.b) / (pg.aw + pg.q * pg.b)
    return w * fmin(p1, p2)


cdef inline double polled_peak(const PolledPage* pg, double s0) noexcept nogil:
    """``sup_{u >= s0} e^{-u} psibar(u)`` (``psibar``: :func:`polled_psi_bar`; ``s0 >= 0``, kinds 0 and 1).

    In units of ``alpha w``, ``psibar/w = min(u/aw, (u + A)/B)``, ``A = aw + b``, ``B = aw + q b``: the two
    lines cross at ``u_c = aw A/(q b)`` (``aw/q`` for ``b = inf``), the first below it.  ``e^{-u} u`` peaks
    at ``u = 1``, ``e^{-u} (u + A)`` at ``1 - A``: the first on ``[s0, u_c]`` at ``clamp(1, s0, u_c)``, the
    second on ``[max(s0, u_c), inf)`` at ``max(s0, u_c, 1 - A)``; the larger of the two (exact, two ``exp``).
    """
    cdef double w, uc, u, best = 0.0, lo, A, B
    if pg.kind == 1:
        u = fmax(s0, 1.0)
        return u * exp(-u) / pg.dl
    w = pg.dw / pg.dl
    if not (pg.q > 0.0):  # (not a lattice page's case) the first line only
        if not (pg.aw > 0.0):
            return INFINITY
        u = fmax(s0, 1.0)
        return w * (u * exp(-u) / pg.aw)
    if not (pg.aw > 0.0):
        uc = 0.0
    elif pg.b == INFINITY:
        uc = pg.aw / pg.q
    else:
        uc = pg.aw * ((pg.aw + pg.b) / (pg.q * pg.b))
    lo = s0
    if s0 < uc:
        u = fmin(fmax(s0, 1.0), uc)
        best = u * exp(-u) / pg.aw
        lo = uc
    if pg.b == INFINITY:
        best = fmax(best, exp(-lo) / pg.q)
    else:
        A = pg.aw + pg.b
        B = pg.aw + pg.q * pg.b
        u = fmax(lo, 1.0 - A)
        best = fmax(best, exp(-u) * ((u + A) / B))
    return w * best


cdef inline double polled_jump_scale(const PolledPage* pg, double mu, double s0, double eps) noexcept nogil:
    """``Jscale = (mu/Delta) R^1(lw) min(1, e^{lw - s0 + eps})``: the largest jump (per unit of path weight) at
    a breakpoint ``beta >= s0 - eps`` (``e^{-x} = e^{lw - beta}``), raised by 1e-12 for its rounding."""
    return (mu / pg.dl) * residual_exp(1, pg.lw) * fmin(1.0, exp(pg.lw - s0 + eps)) * (1.0 + 1e-12)


cdef inline void polled_counts(const PolledPage* pg, double eps, double* n0a, double* n1a, double* n0b,
                               double* n1b) noexcept nogil:
    """Two lines ``N0 + N1 h`` bounding ``N(h)``, the expected number (path weight) of unmoved-last breakpoints
    in ``[s0 - eps, s0 + h + eps')`` (``eps' = eps + 1e-13 h``).

    * ``1 + h'/(alpha w)`` (``h'`` the band's length): along a path the post-poll values ``x_n`` rise by at
      least ``alpha w`` a window, so at most ``ceil(h'/(alpha w))`` of them (``beta = x + lw``) lie in it;
    * ``(1 + (alpha w + h')/(alpha w + b)) qb/q``: let ``sigma`` be the first ``n`` with ``x_{n-1} + alpha w``
      in or above the band (known before window ``sigma``: the windows from it on are fresh).  No unmoved
      point before ``sigma`` is in the band; after it they come in runs of unmoved windows, the first from
      ``sigma`` and one after each moved window ``n >= sigma`` still below the band's top.  Those moved
      windows have ``x_n >= band bottom + b`` and are ``alpha w + b`` apart: at most ``1 + (h' - b)/(alpha w
      + b)`` (none if ``h' < b``).  Each run is Geometric with mean ``qb/q`` whatever came before, so by
      Wald ``N <= (1 + (1 + (h' - b)/(alpha w + b))^+) qb/q <= (1 + (alpha w + h')/(alpha w + b)) qb/q``;
      ``b = inf``: the first run only, ``qb/q``.

    inf where a line does not exist (``alpha w = 0``; ``q = 0``).
    """
    cdef double r, bb
    if pg.aw > 0.0:
        n0a[0] = 1.0 + 2.0 * eps / pg.aw
        n1a[0] = (1.0 + 1e-13) / pg.aw
    else:
        n0a[0] = INFINITY
        n1a[0] = INFINITY
    if not (pg.q > 0.0):
        n0b[0] = INFINITY
        n1b[0] = INFINITY
        return
    r = pg.qb / pg.q
    if pg.b == INFINITY:
        n0b[0] = r
        n1b[0] = 0.0
        return
    bb = pg.aw + pg.b
    n0b[0] = (1.0 + (pg.aw + 2.0 * eps) / bb) * r
    n1b[0] = (1.0 + 1e-13) * r / bb


cdef inline int polled_lines(const PolledPage* pg, double mu, double s0, double v0, double* ca, double* sa,
                             double* cb, double* sb) noexcept nogil:
    """The two lines (intercept at ``s0``, slope per unit ``s``) of :func:`polled_line` (kinds 0 and 1, ``mu >
    0``, ``0 <= s0 < inf``, ``v0 >= 0``); 1 if there is only the first (no jumps: Greedy, or they vanish)."""
    cdef double S, c0, eps, J, n0a, n1a, n0b, n1b
    S = mu * polled_peak(pg, s0) * (1.0 + 1e-12)
    c0 = v0 + 2e-12 * v0
    ca[0] = c0
    sa[0] = S
    if pg.kind == 1:
        return 1
    eps = 1e-13 * (1.0 + s0 + pg.lw)
    J = polled_jump_scale(pg, mu, s0, eps)
    if not (J > 0.0):
        return 1
    polled_counts(pg, eps, &n0a, &n1a, &n0b, &n1b)
    ca[0] = c0 + J * n0a
    sa[0] = S + J * n1a
    cb[0] = c0 + J * n0b
    sb[0] = S + J * n1b
    return 2


cdef inline double polled_line(const PolledPage* pg, double mu, double s0, double v0, double level,
                               double* c) noexcept nogil:
    """A slope ``S >= 0`` per unit ``s`` and ``c[0]`` with ``V(s) <= c[0] + S (s - s0)`` for every ``s >=
    s0``, for the page's value ``V`` (``mu`` its importance) given ``V(s0) = v0`` as computed.

    ``V(s) - V(s0)`` is the integral of ``mu e^{-u} psi(u)`` over ``[s0, s)`` plus the jumps at the
    breakpoints in ``[s0, s)`` (``V`` is left-continuous).  The integral is at most ``S_line (s - s0)``,
    ``S_line = mu sup_{u >= s0} e^{-u} psibar(u)`` (:func:`polled_peak`).  A breakpoint ``beta = x + lw`` of
    weight ``P`` adds ``(mu/Delta) P e^{-x} R^1(lw) <= Jscale P`` (:func:`polled_jump_scale`, ``x >=
    s0 - lw``), and the ``P`` of the breakpoints in a band of length ``h`` sum to the expected number of
    unmoved-last windows a path has there, at most ``N(h) = min(1 + h/(alpha w), (1 + (alpha w + h)/(alpha
    w + b)) (1-q)/q)`` (:func:`polled_counts`).  Each branch of ``N`` gives a line: intercept ``v0 + Jscale
    N0``, slope ``S_line + Jscale N1``.  Of the two, the one that reaches ``level`` last is returned (the
    smaller slope if ``level <= 0``).  With the rounding allowances of this file's notes.

    Returns

    * a finite ``S > 0``: the line; it may pass ``mu/Delta`` (``V <= mu/Delta`` always: the caller may cap);
    * ``S = 0``: ``V(s) <= c[0]`` for every ``s >= s0``.  ``c[0] = v0``: ``V`` can no longer grow (``mu = 0``,
      ``Delta = 0``, ``s0 = inf``, or ``v0`` at ``mu/Delta``); else ``c[0]`` is a constant bound, above
      ``v0`` (the cap ``mu/Delta`` (1 + 4 eps) when each line's intercept is above it; or the slope
      underflowed, ``s0`` beyond ~745): the value may still grow below it;
    * ``S = inf`` (``c[0] = v0``): no finite line (``v0`` NaN, a refused evaluation; or both lines overflow).

    ``alpha = 0`` (``lambda = 1``) keeps the second branch, ``b = inf`` (``nu = 0``) too (its slope is
    ``S_line``, ``psibar <= w/q``); Greedy pages (kind 1, no jumps) get ``v0 + S_line (s - s0)``, their
    tangent-free Greedy line ``S_line = (mu/Delta) max(s0, 1) e^{-max(s0, 1)}``.
    """
    cdef double cap, ca, sa, cb, sb, s0e
    cdef int n
    c[0] = v0
    if pg.kind == 2 or mu == 0.0 or not (s0 < INFINITY):
        return 0.0
    cap = mu / pg.dl
    if v0 >= cap:
        return 0.0
    if not (v0 >= 0.0):
        return INFINITY
    s0e = fmax(s0, 0.0)
    n = polled_lines(pg, mu, s0e, v0, &ca, &sa, &cb, &sb)
    if n == 2:
        if not (sa < INFINITY and ca < INFINITY):
            ca, sa = cb, sb
        elif sb < INFINITY and cb < INFINITY:
            if level > 0.0:
                # b reaches level later: (level - cb)/sb > (level - ca)/sa
                if (level - cb) * sa > (level - ca) * sb:
                    ca, sa = cb, sb
            elif sb < sa or (sb == sa and cb < ca):
                ca, sa = cb, sb
    if not (sa < INFINITY and ca < INFINITY):
        return INFINITY
    if ca >= cap:
        c[0] = cap * (1.0 + 4.0 * DBL_EPSILON)
        return 0.0
    c[0] = ca
    return sa


cdef inline double polled_tail(const PolledPage* pg, double mu, double s0, double v0) noexcept nogil:
    """A bound of ``V(inf)``'s part reachable from ``(s0, v0)``, below the cap only where it helps:
    ``v0 + mu int_{s0}^inf e^{-u} psibar(u) du`` plus every jump at a breakpoint above ``s0 - eps``.

    ``int e^{-u} u/alpha = e^{-s0} (1 + s0)/alpha`` and ``int e^{-u} (u + A) w/B = e^{-s0} (1 + s0 + A) w/B``
    (the smaller; ``w/q e^{-s0}`` for ``b = inf``).  Jumps: bands ``[s0 - eps + k, s0 - eps + k + 1)`` hold
    at most ``N(1)`` of path weight each (:func:`polled_counts`), of size at most ``Jscale e^{-k}``... more
    exactly ``(mu/Delta) R^1(lw) min(1, e^{c - k})``, ``c = lw - s0 + eps``; summed over ``k >= 0``:
    ``ceil(c)^+ + e^{c - ceil(c)^+}/(1 - 1/e)``.  inf if it overflows.  Kinds 0 and 1, ``mu > 0``,
    ``0 <= s0 < inf``.
    """
    cdef double w, e = exp(-s0), t1, t2, integral, eps, n0a, n1a, n0b, n1b, nn, cc, kf, jsum
    if pg.kind == 1:
        return v0 * (1.0 + 2e-12) + (mu * e * (1.0 + s0) / pg.dl) * (1.0 + 1e-12)
    w = pg.dw / pg.dl
    t1 = e * (1.0 + s0) / pg.aw if pg.aw > 0.0 else INFINITY
    if not (pg.q > 0.0):
        t2 = INFINITY
    elif pg.b == INFINITY:
        t2 = e / pg.q
    else:
        t2 = e * (1.0 + s0 + pg.aw + pg.b) / (pg.aw + pg.q * pg.b)
    integral = mu * w * fmin(t1, t2) * (1.0 + 1e-12)
    eps = 1e-13 * (1.0 + s0 + pg.lw)
    polled_counts(pg, eps, &n0a, &n1a, &n0b, &n1b)
    nn = fmin(n0a + n1a, n0b + n1b)
    cc = pg.lw - s0 + eps
    kf = ceil(cc) if cc > 0.0 else 0.0
    jsum = kf + exp(cc - kf) / (1.0 - 0.36787944117144233)
    return v0 * (1.0 + 2e-12) + integral + (mu / pg.dl) * residual_exp(1, pg.lw) * nn * jsum * (1.0 + 1e-12)


cdef inline double polled_root_slope(const PolledPage* pg, double mu) noexcept nogil:
    """The slope per unit ``s`` of a line through the root bounding ``sqrt V``: ``sqrt V(s) <= S s`` for every
    ``s >= 0``, ``S = sqrt(mu/(2 alpha))`` (raised by 1e-12 for the computed values).

    ``V(s) <= mu R^1(s)/alpha <= mu s^2/(2 alpha)``, jumps included: ``V(s) = mu E int_0^T (e^{-s_t} -
    e^{-s}) dt``, the integrand is positive for ``t < T`` and ``T <= s/alpha``, and ``e^{-s_t} <=
    e^{-alpha t}`` (``s_t >= alpha t`` on every path), so ``V(s) <= mu int_0^{s/alpha} (e^{-alpha t} -
    e^{-s}) dt = mu R^1(s)/alpha``.  (``V/s^2`` itself is not monotone, so lines through the root and an
    evaluation are not bounds.)  The same for every page crawled at the same time, before any evaluation.
    0 if ``V`` stays 0 (``mu = 0``, ``Delta = 0``); inf for ``alpha = 0`` (``lambda = 1``: no such bound; the
    line of :func:`polled_line` from ``(0, 0)`` holds instead).
    """
    cdef double a = polled_alpha(pg)
    if pg.kind == 2 or mu == 0.0:
        return 0.0
    if not (a > 0.0):
        return INFINITY
    return sqrt(0.5 * mu / a) * (1.0 + 1e-12)


cdef inline double polled_reach_s(const PolledPage* pg, double mu, double s0, double v0, double P) noexcept nogil:
    """A lower bound of the first ``s >= s0`` at which the computed ``V(s) >= P``, from ``V(s0) = v0``.

    The largest of: ``s0``; where each line of :func:`polled_line` reaches ``P`` (``V`` lies below both);
    where the root bound ``mu R^1(s)/alpha`` (:func:`polled_root_slope`) reaches it (``R^1``'s inverse by
    ``residual1_inverse``, a Lambert W, taken 5e-14 low; ``sqrt(2 alpha P/mu)`` below ``P alpha/mu =
    1e-8``); each less 1e-13 of itself.  ``s0`` if ``v0 >= P`` (or ``v0`` is NaN); inf if ``P > mu/Delta``,
    ``P`` above :func:`polled_tail` (the lines' integral and every jump to come), or ``V`` can no longer
    grow (``mu = 0``, ``Delta = 0``, ``s0 = inf``).  No evaluation of ``V``: a few ``exp``, one Lambert W.
    """
    cdef double cap, s0e, ca, sa, cb, sb, h, r, y, a, x
    cdef int n
    if v0 >= P or not (v0 == v0):
        return s0
    if pg.kind == 2 or mu == 0.0 or not (s0 < INFINITY):
        return INFINITY
    cap = mu / pg.dl
    if P > cap:
        return INFINITY
    s0e = fmax(s0, 0.0)
    if P > polled_tail(pg, mu, s0e, v0):
        return INFINITY
    n = polled_lines(pg, mu, s0e, v0, &ca, &sa, &cb, &sb)
    h = 0.0
    if ca < P:
        h = (P - ca) / sa if sa > 0.0 else INFINITY
    if n == 2 and cb < P:
        r = (P - cb) / sb if sb > 0.0 else INFINITY
        if r > h:
            h = r
    if h == INFINITY:
        return INFINITY
    h = s0e + h * (1.0 - 1e-13)
    a = polled_alpha(pg)
    if a > 0.0:
        y = P * a / (mu * (1.0 + 2e-12))
        if y < 1e-8:
            x = sqrt(2.0 * y)
        elif y < 1.0:
            x = residual1_inverse(y, 1.0 - y) * (1.0 - 5e-14)
        else:
            x = INFINITY
        x = x * (1.0 - 1e-13)
        if x > h:
            h = x
    h = h - 4.0 * DBL_EPSILON * h
    return h if h > s0 else s0
