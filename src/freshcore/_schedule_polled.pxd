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

from libc.math cimport INFINITY, exp, expm1, log, sqrt, ceil, floor, fmin, fmax
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


cdef inline double polled_cross(const PolledPage* pg) noexcept nogil:
    """``u_c``, where the two lines of :func:`polled_psi_bar` cross (the first below it): ``alpha w A/(q b)``
    (``A = alpha w + b``), ``alpha w/q`` for ``b = inf``, 0 for ``alpha w = 0``; inf for ``q = 0`` (the first
    line only)."""
    if not (pg.q > 0.0):
        return INFINITY
    if not (pg.aw > 0.0):
        return 0.0
    if pg.b == INFINITY:
        return pg.aw / pg.q
    return pg.aw * ((pg.aw + pg.b) / (pg.q * pg.b))


cdef inline double polled_peak(const PolledPage* pg, double s0) noexcept nogil:
    """``sup_{u >= s0} e^{-u} psibar(u)`` (``psibar``: :func:`polled_psi_bar`; ``s0 >= 0``, kinds 0 and 1).

    ``psibar/w = min(u/aw, (u + A)/D)``, ``aw = alpha w``, ``A = aw + b``, ``D = aw + q b``: the two
    lines cross at ``u_c = aw A/(q b)`` (``aw/q`` for ``b = inf``), the first below it.  ``e^{-u} u`` peaks
    at ``u = 1``, ``e^{-u} (u + A)`` at ``1 - A``: the first on ``[s0, u_c]`` at ``clamp(1, s0, u_c)``, the
    second on ``[max(s0, u_c), inf)`` at ``max(s0, u_c, 1 - A)``; the larger of the two (exact, two ``exp``).
    """
    cdef double w, uc, u, best = 0.0, lo, A, D
    if pg.kind == 1:
        u = fmax(s0, 1.0)
        return u * exp(-u) / pg.dl
    w = pg.dw / pg.dl
    if not (pg.q > 0.0):  # (not a lattice page's case) the first line only
        if not (pg.aw > 0.0):
            return INFINITY
        u = fmax(s0, 1.0)
        return w * (u * exp(-u) / pg.aw)
    uc = polled_cross(pg)
    lo = s0
    if s0 < uc:
        u = fmin(fmax(s0, 1.0), uc)
        best = u * exp(-u) / pg.aw
        lo = uc
    if pg.b == INFINITY:
        best = fmax(best, exp(-lo) / pg.q)
    else:
        A = pg.aw + pg.b
        D = pg.aw + pg.q * pg.b
        u = fmax(lo, 1.0 - A)
        best = fmax(best, exp(-u) * ((u + A) / D))
    return w * best


cdef inline double polled_next_break(const PolledPage* pg, double lo) noexcept nogil:
    """A lower bound of the smallest breakpoint ``beta = alpha w n + b j + lw >= lo`` (``n >= j + 1``; inf if
    there is none; ``lo`` itself where more than 8 columns cross ``lo``, or rounding leaves it unclear).

    Column ``j`` (``j`` moved windows) holds the breakpoints ``alpha w n + b j + lw``, ``n >= j + 1``; its
    first one at or above ``lo`` is at ``n = ceil((lo - b j - lw)/(alpha w))`` (from one below the rounded
    quotient's ceiling, stepped up at most four times), and the columns' first points ``(alpha w + b) j +
    alpha w + lw`` increase with ``j``: the columns are walked until one starts at or above ``lo``.  ``b =
    inf``: column 0 only; ``alpha w = 0``: column ``j`` is the single point ``b j + lw``.  Taken ``1e-13 (1 +
    beta)`` low (the kernel's breakpoints are rounded).
    """
    cdef double best = INFINITY, bj, first, n, t
    cdef int j, it
    if pg.aw + pg.b < INFINITY and not ((lo - pg.aw - pg.lw) < 8.0 * (pg.aw + pg.b)):
        return lo  # more than 8 columns cross lo (or NaN)
    for j in range(9):
        bj = pg.b * j if j > 0 else 0.0
        first = pg.aw * (j + 1.0) + bj + pg.lw
        if first >= lo:
            best = fmin(best, first)
            break
        if j == 8:
            return lo
        if pg.aw > 0.0:
            t = lo - bj - pg.lw
            n = ceil(t / pg.aw) - 1.0
            if n < j + 1.0:
                n = j + 1.0
            it = 0
            while pg.aw * n + bj + pg.lw < lo:
                n += 1.0
                it += 1
                if it > 3:
                    return lo  # (n beyond 2^53, or the quotient far off: no bound)
            best = fmin(best, pg.aw * n + bj + pg.lw)
        if pg.b == INFINITY:
            break
    if best == INFINITY:
        return INFINITY
    return best - 1e-13 * (1.0 + best)


cdef inline double polled_break_after(const PolledPage* pg, double s0) noexcept nogil:
    """``B``: no breakpoint in ``[s0 - eps, B)``, ``eps = 1e-13 (1 + s0 + lw)`` (:func:`polled_next_break`;
    inf for Greedy pages, which have none)."""
    if pg.kind != 0:
        return INFINITY
    return polled_next_break(pg, s0 - 1e-13 * (1.0 + s0 + pg.lw))


cdef inline double polled_jump_scale(const PolledPage* pg, double mu, double beta) noexcept nogil:
    """``Jscale = (mu/Delta) R^1(lw) min(1, e^{lw - beta})``: the largest jump (per unit of path weight) at a
    breakpoint at or above ``beta`` (``e^{-x} = e^{lw - beta}``), raised by 1e-12 for its rounding."""
    return (mu / pg.dl) * residual_exp(1, pg.lw) * fmin(1.0, exp(pg.lw - beta)) * (1.0 + 1e-12)


cdef inline double polled_log_nb_lower(const PolledPage* pg, double kk, double r) noexcept nogil:
    """log of a Chernoff bound of ``P(X <= kk)``, ``X ~ NB(r, q)`` (the failures before the ``r``-th success,
    ``q`` the page's move probability; integers ``kk``, ``r >= 1``); -inf for ``kk < 0``, 0 where it gives none.

    ``X <= kk`` iff the first ``n = kk + r`` trials hold at least ``r`` successes: ``P(Bin(n, q) >= r) <=
    e^{-n D(r/n || q)}`` for ``r/n >= q`` (Chernoff; ``D`` the binary relative entropy), and ``n D = r log(r/(n
    q)) + kk log(kk/(n qb))`` (``kk = 0``: ``q^r`` exactly).  The twin of ``freshcore._polled``'s
    ``log_nb_upper``."""
    cdef double n = kk + r
    if kk < 0.0:
        return -INFINITY
    if kk == 0.0:
        return r * pg.log_q
    if not (r > pg.q * n):
        return 0.0
    return -(r * (log(r / n) - pg.log_q) + kk * (log(kk / n) - pg.log_qb))


cdef inline double polled_log_nb_upper(const PolledPage* pg, double kk, double r) noexcept nogil:
    """log of a Chernoff bound of ``P(X > kk)``, ``X ~ NB(r, q)`` (integers ``kk >= 0``, ``r >= 1``); 0 where it
    gives none.  ``X > kk`` iff the first ``n = kk + r`` trials hold at most ``r - 1`` successes: ``P(Bin(n, q)
    <= r - 1) <= e^{-n D((r - 1)/n || q)}`` for ``(r - 1)/n <= q``, ``n D = (r - 1) log((r - 1)/(n q)) + (kk + 1)
    log((kk + 1)/(n qb))`` (``r = 1``: ``qb^n`` exactly).  ``freshcore._polled``'s ``log_nb_upper``, from the
    page's logs."""
    cdef double n = kk + r
    if kk < 0.0:
        return 0.0
    if r == 1.0:
        return n * pg.log_qb
    if not (r - 1.0 < pg.q * n):
        return 0.0
    return -((r - 1.0) * (log((r - 1.0) / n) - pg.log_q) + (kk + 1.0) * (log((kk + 1.0) / n) - pg.log_qb))


cdef inline double polled_mass_break(const PolledPage* pg, double lo, double B, double* mass) noexcept nogil:
    """``B' >= B``: the start of the next breakpoint zone holding more than a negligible path weight at or above
    ``lo`` (``B``: :func:`polled_next_break`'s at ``lo``, no breakpoint in ``[lo, B)``), and in ``mass[0]`` a
    bound of the total path weight ``P`` of the breakpoints in ``[lo, B')`` (0 if ``B' = B``).

    Column ``j`` holds the breakpoints ``beta_j(k) = alpha w (j + k) + b j + lw``, ``k >= 1`` unmoved windows,
    of weight ``P = C(j + k - 1, j) q^j qb^k = (qb/q) NB(k - 1; j + 1, q)`` (the last window unmoved; ``NB(i;
    r, q)`` the pmf of the failures before the ``r``-th success): the column's weight is ``qb/q`` in all, and
    for a page with ``lambda`` near 1 it sits in a narrow zone about ``k - 1 = (j + 1) qb/q`` (spread
    ``sqrt((j + 1) qb)/q``), far narrower than the columns' spacing, so ``V`` is all but flat between zones
    although breakpoints of negligible weight lie everywhere.  Per column, with ``t`` the ``k``-position of
    ``lo`` (``beta_j(k) >= lo`` iff ``k >= t``) and ``r = j + 1``:

    * ``lo`` above the column's mean (``t - 2 > r qb/q``): its breakpoints at or above ``lo`` have ``k - 1 >=
      K + 1``, ``K = floor(t) - 3`` (one lower than needed: the rounding of ``t``), so their weight is at most
      ``(qb/q) P(X > K) <= (qb/q) e^{U}``, ``U`` :func:`polled_log_nb_upper`; the column holds no zone above
      ``lo`` if ``U <= -30`` (else ``B`` is returned: ``lo`` is in the zone);
    * else the zone starts at ``z_j = beta_j(K + 2)`` with ``K`` the largest integer (guessed at ``r qb/q - 8
      sd``, the normal quantile, lowered by ``sd/2`` until verified, at most 8 times) whose lower tail ``P(X <=
      K) <= e^{L}``, ``L`` :func:`polled_log_nb_lower`, has ``L <= -30``: the breakpoints below ``z_j`` (``k -
      1 <= K``) weigh at most ``(qb/q) e^L``; ``K = -1`` (``z_j`` the column's first point) weighs 0.  If ``z_j
      <= lo`` (``K + 2 < t``) ``lo`` is in the zone: ``B`` is returned.  (The verification matters: column 0 is
      geometric, its lower tail ``1 - qb^{K+1}`` is not Gaussian.)

    ``B' = min_j z_j`` less ``1e-13 (1 + B')`` (the kernel's breakpoints are rounded, as
    :func:`polled_next_break` has it), at least ``B``; the columns are walked from ``j = 0`` until one starts
    at or above ``B'`` (they start at ``(alpha w + b) j + alpha w + lw``, increasing: the later ones hold
    nothing below ``B'``), at most 32 (else ``B``).  Every column below ``B'`` was counted, so ``mass = (qb/q)
    sum_j e^{U_j or L_j}`` bounds the weight in ``[lo, B')`` (a breakpoint counted twice, or below ``lo``, only
    adds); each ``e^{.}`` is taken at ``log + 1e-6`` (the logs' rounding: their terms are ``O(n log n)``, far
    below 1e-6 of them), the sum raised by 1e-12.  With the jump per unit weight at most ``Jscale(B)``
    (:func:`polled_jump_scale`; every such breakpoint is at or above ``B``), the jumps in ``[lo, B')`` add at
    most ``Jscale(B) mass`` to ``V``: the allowance (``delta = e^{-30}`` a column) the lines add to their
    intercepts, treating ``B'`` as the next breakpoint.  ``B`` itself where it does not pay: ``alpha w = 0``
    (the columns are points), ``q`` 0 or 1, ``lo`` in a zone, or more than 32 columns below.
    """
    cdef double best = INFINITY, tot = 0.0, bj, first, r, mean, sd, t, K, lg, z, step
    cdef int j, _it
    mass[0] = 0.0
    if not (B < INFINITY and pg.aw > 0.0 and pg.q > 0.0 and pg.qb > 0.0 and lo >= 0.0):
        return B
    for j in range(33):
        if j == 32:
            return B
        bj = pg.b * j if j > 0 else 0.0
        first = pg.aw * (j + 1.0) + bj + pg.lw
        if first - 1e-13 * (1.0 + first) >= best:
            break
        r = j + 1.0
        mean = r * pg.qb / pg.q
        sd = sqrt(r * pg.qb) / pg.q
        t = (lo - bj - pg.lw) / pg.aw - j
        if not (t < 4e15):
            return B  # (beyond 2^52 the k-positions are not integers)
        if t - 2.0 > mean:
            K = floor(t) - 3.0
            lg = polled_log_nb_upper(pg, K, r)
            if not (lg <= -30.0):
                return B
            tot += exp(lg + 1e-6)
        else:
            K = floor(mean - 8.0 * sd)
            step = fmax(1.0, floor(0.5 * sd))
            lg = 0.0
            for _it in range(9):
                if K + 2.0 < t:
                    return B  # lo is in the zone
                if K < 0.0:
                    K = -1.0
                    lg = -INFINITY
                    break
                lg = polled_log_nb_lower(pg, K, r)
                if lg <= -30.0:
                    break
                K -= step
            if not (lg <= -30.0):
                return B
            if K + 2.0 < t:
                return B
            z = pg.aw * (j + K + 2.0) + bj + pg.lw
            if lg > -INFINITY:
                tot += exp(lg + 1e-6)
            best = fmin(best, z)
        if pg.b == INFINITY:
            break
    if best < INFINITY:
        best = best - 1e-13 * (1.0 + best)
    if not (best > B):
        return B
    mass[0] = tot * (pg.qb / pg.q) * (1.0 + 1e-12)
    return best


cdef inline double polled_break_pre(const PolledPage* pg, double mu, double s0, double* pre) noexcept nogil:
    """The next breakpoint the lines take from ``s0`` and the allowance of the jumps before it: ``B'``
    (:func:`polled_mass_break` from ``lo = s0 - eps``, :func:`polled_break_after`'s ``B``) and ``pre[0] =
    Jscale(B) mass`` (:func:`polled_jump_scale`), so ``V(s) <= V(s0) + pre + (the integral and the jumps at
    or above B' in [s0, s))``; ``pre[0] = 0`` where ``B' = B``.  Kinds 0 and 1 (inf, 0 for Greedy pages)."""
    cdef double B, Bm, mass
    pre[0] = 0.0
    B = polled_break_after(pg, s0)
    if B == INFINITY:
        return B
    Bm = polled_mass_break(pg, s0 - 1e-13 * (1.0 + s0 + pg.lw), B, &mass)
    if mass > 0.0:
        pre[0] = polled_jump_scale(pg, mu, B) * mass
    return Bm


cdef inline void polled_counts(const PolledPage* pg, double gap, double* n0a, double* n1a, double* n0b,
                               double* n1b) noexcept nogil:
    """Two lines ``N0 + N1 h`` bounding ``N``, the expected number (path weight) of unmoved-last breakpoints in
    a band of length ``h' = (1 + 1e-13) h + gap`` (none if ``h' <= 0``).

    * ``1 + h'/(alpha w)``: along a path the post-poll values ``x_n`` rise by at least ``alpha w`` a window,
      so at most ``ceil(h'/(alpha w))`` of them (``beta = x + lw``) lie in the band;
    * ``(1 + (alpha w + h')/(alpha w + b)) qb/q``: let ``sigma`` be the first ``n`` with ``x_{n-1} + alpha w``
      in or above the band (known before window ``sigma``: the windows from it on are fresh).  No unmoved
      point before ``sigma`` is in the band; after it they come in runs of unmoved windows, the first from
      ``sigma`` and one after each moved window ``n >= sigma`` still below the band's top.  Those moved
      windows have ``x_n >= band bottom + b`` and are ``alpha w + b`` apart: at most ``1 + (h' - b)/(alpha w
      + b)`` (none if ``h' < b``).  Each run is Geometric with mean ``qb/q`` whatever came before, so by
      Wald ``N <= (1 + (1 + (h' - b)/(alpha w + b))^+) qb/q <= (1 + (alpha w + h')/(alpha w + b)) qb/q``;
      ``b = inf``: the first run only, ``qb/q``.

    With a negative ``gap`` (the band starts later) an intercept may be negative: as the count is 0 until
    the band starts, ``max(0, N0 + N1 h_1) + N1 (h - h_1)`` bounds it for every ``h >= h_1 >= 0``.
    inf where a line does not exist (``alpha w = 0``; ``q = 0``).
    """
    cdef double r, bb
    if pg.aw > 0.0:
        n0a[0] = 1.0 + gap / pg.aw
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
    n0b[0] = (1.0 + (pg.aw + gap) / bb) * r
    n1b[0] = (1.0 + 1e-13) * r / bb


cdef inline int polled_lines(const PolledPage* pg, double mu, double s0, double v0, double B, double pre,
                             double* ca, double* sa, double* cb, double* sb, double* sline) noexcept nogil:
    """The two lines (intercept at ``s0``, slope per unit ``s``) of :func:`polled_line` (kinds 0 and 1, ``mu >
    0``, ``0 <= s0 < inf``, ``v0 >= 0``); 1 if there is only the first (no jumps: Greedy, none to come, or
    they vanish).  ``B``, ``pre``: :func:`polled_break_pre` (no jump before ``B`` but those ``pre`` allows for,
    so ``v0 (1 + 2e-12) + pre + sline[0] (s - s0)``, the line without the later jumps' part, bounds ``V`` on
    ``[s0, B]``; every intercept includes ``pre``)."""
    cdef double S, c0, eps, J, n0a, n1a, n0b, n1b
    S = mu * polled_peak(pg, s0) * (1.0 + 1e-12)
    sline[0] = S
    c0 = v0 + 2e-12 * v0 + pre
    ca[0] = c0
    sa[0] = S
    if B == INFINITY:  # (Greedy pages too)
        return 1
    eps = 1e-13 * (1.0 + s0 + pg.lw)
    J = polled_jump_scale(pg, mu, B)
    if not (J > 0.0):
        return 1
    # the band [B, s + eps + 1e-13 h): h' = (1 + 1e-13) h + (s0 + eps - B)
    polled_counts(pg, s0 + eps - B, &n0a, &n1a, &n0b, &n1b)
    ca[0] = c0 + J * fmax(n0a, 0.0)
    sa[0] = S + J * n1a
    cb[0] = c0 + J * fmax(n0b, 0.0)
    sb[0] = S + J * n1b
    return 2


cdef inline double polled_integral(const PolledPage* pg, double s0, double h) noexcept nogil:
    """``int_{s0}^{s0 + h} e^{-u} psibar(u) du`` at most (kinds 0 and 1, ``s0 >= 0``, ``h >= 0``): the smaller of
    the two lines' integrals, ``int e^{-u} (u + A) du = e^{-s0} ((s0 + A)(1 - e^{-h}) + R^1(h))`` (sums of
    non-negative terms: no cancellation), raised by 1e-12."""
    cdef double e = exp(-s0), om = -expm1(-h), r1 = residual_exp(1, h), t1, t2
    if pg.kind == 1:
        return e * (s0 * om + r1) / pg.dl * (1.0 + 1e-12)
    t1 = e * (s0 * om + r1) / pg.aw if pg.aw > 0.0 else INFINITY
    if not (pg.q > 0.0):
        t2 = INFINITY
    elif pg.b == INFINITY:
        t2 = e * om / pg.q
    else:
        t2 = e * ((s0 + pg.aw + pg.b) * om + r1) / (pg.aw + pg.q * pg.b)
    return (pg.dw / pg.dl) * fmin(t1, t2) * (1.0 + 1e-12)


cdef inline double polled_line(const PolledPage* pg, double mu, double s0, double v0, double level,
                               double* c) noexcept nogil:
    """A slope ``S >= 0`` per unit ``s`` and ``c[0]`` with ``V(s) <= c[0] + S (s - s0)`` for every ``s >=
    s0``, for the page's value ``V`` (``mu`` its importance) given ``V(s0) = v0`` as computed.

    ``V(s) - V(s0)`` is the integral of ``mu e^{-u} psi(u)`` over ``[s0, s)`` plus the jumps at the
    breakpoints in ``[s0, s)`` (``V`` is left-continuous).  The integral is at most ``S_line (s - s0)``,
    ``S_line = mu sup_{u >= s0} e^{-u} psibar(u)`` (:func:`polled_peak`).  The breakpoints lie at or above
    ``B`` (:func:`polled_break_after`: none in ``[s0 - eps, B)``); one at ``beta = x + lw`` of weight ``P``
    adds ``(mu/Delta) P e^{-x} R^1(lw) <= Jscale P`` (:func:`polled_jump_scale`, ``x >= B - lw``).  Those
    below the next zone ``B' >= B`` (:func:`polled_mass_break`) weigh so little in all that they add at most
    ``pre`` (:func:`polled_break_pre`), and the ``P`` of the breakpoints in a band of length ``h'`` sum to the
    expected number of unmoved-last windows a path has there, at most ``N(h') = min(1 + h'/(alpha w), (1 +
    (alpha w + h')/(alpha w + b)) (1-q)/q)`` (:func:`polled_counts`; the band ``[B', s)``, 0 before ``B'``,
    with ``Jscale`` at ``B'``).  Each branch of ``N`` gives a line: intercept ``v0 + pre + Jscale N0``, slope
    ``S_line + Jscale N1``.  Of the two, the one that reaches ``level``
    last is returned (the smaller slope if ``level <= 0``).  With the rounding allowances of this file's
    notes.  Cost: ``polled_prepare``'s page, three ``exp``, one ``R^1``, a few divisions.

    Returns

    * a finite ``S > 0``: the line; it may pass ``mu/Delta`` (``V <= mu/Delta`` always: the caller may cap);
    * ``S = 0``: ``V(s) <= c[0]`` for every ``s >= s0``.  ``c[0] = v0``: ``V`` can no longer grow (``mu = 0``,
      ``Delta = 0``, ``s0 = inf``, or ``v0`` at ``mu/Delta``); else ``c[0]`` is a constant bound, above
      ``v0`` (the cap ``mu/Delta`` (1 + 4 eps) when each line's intercept is above it; or the slope
      underflowed, ``s0`` beyond ~745): the value may still grow below it;
    * ``S = inf`` (``c[0] = v0``): no finite line (``v0`` NaN, a refused evaluation; or both lines overflow).

    ``alpha = 0`` (``lambda = 1``) keeps the second branch, ``b = inf`` (``nu = 0``) too (its slope is
    ``S_line``, ``psibar <= w/q``).  Greedy pages (kind 1, no jumps) get ``v0 + S_line (s - s0)``, ``S_line =
    (mu/Delta) max(s0, 1) e^{-max(s0, 1)}`` (the largest slope of ``(mu/Delta) R^1`` from ``s0`` on).
    Every page crawled at the same time (``s0 = 0``, ``v0 = 0``) shares its line: a from-the-root bound
    before any evaluation (:func:`polled_root_slope` for ``sqrt V``).
    """
    cdef double cap, ca, sa, cb, sb, s0e, sline, B, pre
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
    B = polled_break_pre(pg, mu, s0e, &pre)
    n = polled_lines(pg, mu, s0e, v0, B, pre, &ca, &sa, &cb, &sb, &sline)
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


cdef inline double polled_value_cheap(const PolledPage* pg, double s, double mu) noexcept nogil:
    """An upper bound of ``V(s)`` in closed form (lattice pages, kind 0; inf for the others or where it gives
    none): ``mu int_0^s e^{-u} psibar(u) du`` plus a bound of every jump below ``s``, at most ``mu R^1(s)/alpha``
    and ``mu/Delta``.  Four ``exp``/``expm1``: what the scheduler tries on a parked page before the lattice
    sums' bound (``polled_value_bounds``).

    ``V(0) = 0``, and ``V(s)`` is the integral of ``mu e^{-u} psi(u)`` over ``[0, s)`` plus the jumps at the
    breakpoints below ``s``.  The integral: ``psibar`` (:func:`polled_psi_bar`) is ``w`` times the smaller of
    ``u/(alpha w)`` and ``(u + A)/D`` (:func:`polled_peak`'s ``A``, ``D``; ``1/q`` for ``b = inf``), the first
    below their crossing ``u_c``: ``int_0^{u1} e^{-u} u du = R^1(u1)`` (``u1 = min(u_c, s)``) and ``int_{u_c}^s
    e^{-u} (u + A) du = e^{-u_c} (u_c + 1 + A) - e^{-s} (s + 1 + A)``.  The jumps: one at the breakpoint of an
    unmoved-last point ``(n, j)`` adds ``(mu/Delta) P e^{-x} R^1(lw) <= (mu/Delta) P lw^2/2``, and ``P`` is the
    probability that the cycle runs past poll ``n`` with that pattern, so the ``P`` of all of them sum to at
    most the expected number of polls before the crawl, ``E #{n >= 1: n w < T} <= psi(s)/w <= psibar(s)/w``.
    ``mu R^1(s)/alpha``: :func:`polled_root_slope`'s bound, jumps included.  Rounding: ``R^1(x) = (1 - e^{-x})
    - x e^{-x}`` (each part a few ulps) raised by ``8 eps x``, the difference above by ``8 eps`` of its first
    part, the result by 4e-12 (the computed ``V`` is within 1e-12 of the true one), capped at ``mu/Delta``
    (1 + 4 eps).
    """
    cdef double w, uc, u1, es, r1s, r1u, eu, integral = 0.0, v, a, hi
    if pg.kind != 0 or not (s >= 0.0 and s < INFINITY) or not (mu >= 0.0 and mu < INFINITY):
        return INFINITY
    w = pg.dw / pg.dl
    uc = polled_cross(pg)
    es = exp(-s)
    r1s = fmax(-expm1(-s) - s * es, 0.0) + 8.0 * DBL_EPSILON * s
    u1 = fmin(uc, s)
    eu = es if u1 == s else exp(-u1)  # (e^{-u_c} where the second line's part is there)
    if u1 > 0.0:
        r1u = r1s if u1 == s else fmax(-expm1(-u1) - u1 * eu, 0.0) + 8.0 * DBL_EPSILON * u1
        integral = r1u / pg.aw
    if s > uc:
        if pg.b == INFINITY:
            hi = eu
            integral += (hi - es + 8.0 * DBL_EPSILON * hi) / pg.q
        else:
            hi = eu * (uc + 1.0 + pg.aw + pg.b)
            integral += (hi - es * (s + 1.0 + pg.aw + pg.b) + 8.0 * DBL_EPSILON * hi) / (pg.aw + pg.q * pg.b)
    v = (mu * w * integral + (mu / pg.dl) * (0.5 * pg.lw * pg.lw) * (polled_psi_bar(pg, s) / w)) * (1.0 + 4e-12)
    a = polled_alpha(pg)
    if a > 0.0:
        v = fmin(v, mu * r1s / a * (1.0 + 4e-12))
    if not (v == v):
        return INFINITY
    return fmin(v, mu / pg.dl * (1.0 + 4.0 * DBL_EPSILON))


cdef inline double polled_tail(const PolledPage* pg, double mu, double s0, double v0, double B,
                               double pre) noexcept nogil:
    """A bound of ``V(s)`` for every ``s >= s0`` from ``V(s0) = v0`` (it helps where it is below ``mu/Delta``):
    ``v0 + mu int_{s0}^inf e^{-u} psibar(u) du`` plus every jump to come.

    ``int e^{-u} u/alpha = e^{-s0} (1 + s0)/alpha`` and ``int e^{-u} (u + A) w/D = e^{-s0} (1 + s0 + A) w/D``
    (:func:`polled_peak`'s ``A``, ``D``; the smaller; ``w/q e^{-s0}`` for ``b = inf``).  Jumps: at
    breakpoints at or above ``B`` (:func:`polled_break_after`); the bands ``[B + k, B + k + 1)`` hold at most
    ``N(1)`` of path weight each (:func:`polled_counts`), each jump at most ``(mu/Delta) R^1(lw) min(1, e^{c - k})``,
    ``c = lw - B``; summed over ``k >= 0``: ``ceil(c)^+ + e^{c - ceil(c)^+}/(1 - 1/e)``; before ``B``, ``pre``
    (:func:`polled_break_pre`).  inf if it overflows.  Kinds 0 and 1, ``mu > 0``, ``0 <= s0 < inf``.
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
    if B == INFINITY:
        return v0 * (1.0 + 2e-12) + pre + integral
    polled_counts(pg, eps, &n0a, &n1a, &n0b, &n1b)
    nn = fmin(n0a + n1a, n0b + n1b)
    cc = pg.lw - B
    kf = ceil(cc) if cc > 0.0 else 0.0
    jsum = kf + exp(cc - kf) / (1.0 - 0.36787944117144233)
    return v0 * (1.0 + 2e-12) + pre + integral + (mu / pg.dl) * residual_exp(1, pg.lw) * nn * jsum * (1.0 + 1e-12)


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


cdef inline double polled_reach_refine(const PolledPage* pg, double mu, double s0, double v0, double P,
                                       double h, double B, double pre, bint jumps) noexcept nogil:
    """Moves a lower bound ``h`` of the reach (``s0 + h``; :func:`polled_reach_s`) up by the curve
    ``G(h) = v0 (1 + 2e-12) + pre + mu I(h) + Jscale N(h)`` (``I``: :func:`polled_integral`, below the line's
    ``S_line h``; ``N`` either branch of :func:`polled_counts`): ``V(s0 + h') <= G(h')`` for ``h' >= 0``.
    From ``h_k`` with ``G(h_k) < P``, ``G`` grows at most at ``mu sup_{u >= s0 + h_k} e^{-u} psibar(u) +
    Jscale N1`` (each branch, from its value at ``h_k``): the later of the two lines' crossings is a lower
    bound again (Newton from below with a slope bound).  At most two steps (the second adds ~3% of the
    first's gain), while a step adds 1e-2."""
    cdef double eps, J = 0.0, n0a = 0.0, n1a = 0.0, n0b = 0.0, n1b = 0.0, gap, g, sk, ra, rb, step
    cdef int _it
    if jumps:
        eps = 1e-13 * (1.0 + s0 + pg.lw)
        J = polled_jump_scale(pg, mu, B)
        gap = s0 + eps - B
        polled_counts(pg, gap, &n0a, &n1a, &n0b, &n1b)
    for _it in range(2):
        g = v0 + 2e-12 * v0 + pre + mu * polled_integral(pg, s0, h)
        sk = mu * polled_peak(pg, s0 + h) * (1.0 + 1e-12)
        if jumps:
            ra = rb = 0.0
            if n1a < INFINITY:
                ra = (P - (g + J * fmax(n0a + n1a * h, 0.0))) / (sk + J * n1a)
            else:
                ra = -INFINITY
            if n1b < INFINITY:
                rb = (P - (g + J * fmax(n0b + n1b * h, 0.0))) / (sk + J * n1b)
            else:
                rb = -INFINITY
            step = fmax(ra, rb)
        else:
            step = (P - g) / sk
        if not (step > 0.0 and step < INFINITY):
            break
        step = step * (1.0 - 1e-12)
        h += step
        if step < 1e-2 * h:
            break
    return h


cdef inline double polled_reach_s(const PolledPage* pg, double mu, double s0, double v0, double P) noexcept nogil:
    """A lower bound of the first ``s >= s0`` at which the computed ``V(s) >= P``, from ``V(s0) = v0``.

    The largest of: ``s0``; where each line of :func:`polled_line` reaches ``P`` (``V`` lies below both);
    where the root bound ``mu R^1(s)/alpha`` (:func:`polled_root_slope`) reaches it (``R^1``'s inverse by
    ``residual1_inverse``, a Lambert W, taken 5e-14 low; ``sqrt(2 alpha P/mu)`` below ``P alpha/mu =
    1e-8``); each less 1e-13 of itself.  ``s0`` if ``v0 >= P`` (or ``v0`` is NaN); inf if ``P > mu/Delta``,
    ``P`` above :func:`polled_tail` (the lines' integral and every jump to come), or ``V`` can no longer
    grow (``mu = 0``, ``Delta = 0``, ``s0 = inf``).  No evaluation of ``V``: a few ``exp``, one Lambert W.
    """
    cdef double cap, s0e, ca, sa, cb, sb, h, r, y, a, x, brk, sline, pre
    cdef int n
    if v0 >= P or not (v0 == v0):
        return s0
    if pg.kind == 2 or mu == 0.0 or not (s0 < INFINITY):
        return INFINITY
    cap = mu / pg.dl
    if P > cap:
        return INFINITY
    s0e = fmax(s0, 0.0)
    brk = polled_break_pre(pg, mu, s0e, &pre)
    if P > polled_tail(pg, mu, s0e, v0, brk, pre):
        return INFINITY
    n = polled_lines(pg, mu, s0e, v0, brk, pre, &ca, &sa, &cb, &sb, &sline)
    h = 0.0
    if ca < P:
        h = (P - ca) / sa if sa > 0.0 else INFINITY
    if n == 2:
        if cb < P:
            r = (P - cb) / sb if sb > 0.0 else INFINITY
            if r > h:
                h = r
        # no jump before brk but pre's: V stays below the line without the later ones there
        r = (P - (v0 + 2e-12 * v0 + pre)) / sline if sline > 0.0 else INFINITY
        r = fmin(r, brk - s0e)
        if r > h:
            h = r
    if h == INFINITY:
        return INFINITY
    h = polled_reach_refine(pg, mu, s0e, v0, P, h, brk, pre, n == 2)
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
