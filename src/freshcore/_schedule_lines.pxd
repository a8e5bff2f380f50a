# The bounds on a page's value that the scheduler keeps (freshcore._schedule's module notes prove them):
# the slope of a line bounding V, ln V or sqrt V from an evaluation, the slope buckets (sixteen per octave) and
# their table, a page's line (bucket and key), the bound of a bucket's top at a tick, and the park
# key.  Every function is inline
# (compiled into freshcore._schedule): ``from freshcore._schedule_lines cimport bucket_of_slope``.

from libc.math cimport INFINITY, fabs, exp, log, log1p, sqrt, frexp, ldexp
from libc.float cimport DBL_EPSILON, DBL_MIN
from libc.stdint cimport uint64_t
from libc.string cimport memcpy

from freshcore._core cimport residual1_inverse, residual_exp

from freshcore._schedule_pages cimport (Pages, GREEDY, CIS, POLLED, page_alpha, page_gamma, polled_greedy,
                                        page_prepare)
from freshcore._polled cimport PolledPage, polled_prepare
from freshcore._schedule_polled cimport (polled_line, polled_lines, polled_break_pre, polled_root_slope,
                                         polled_reach_s)

cdef extern from "_schedule_constants.h":
    const double BOUND_MARGIN "FRESHCORE_BOUND_MARGIN"
    const double SLOPE_SAFETY "FRESHCORE_SLOPE_SAFETY"
    const double INV_E_UP "FRESHCORE_INV_E_UP"
    const double E_UP "FRESHCORE_E_UP"
    const double PARK_SHADE "FRESHCORE_PARK_SHADE"

cdef enum:
    SLOPES_PER_OCTAVE = 16
    SQRT_SLOPES_PER_OCTAVE = 16  # the lines bounding sqrt V: their rounding is squared in V
    N_OCTAVES = 150        # slopes 2**-100 .. 2**50
    EXPONENT_OFFSET = 100
    N_SLOPES = N_OCTAVES * SLOPES_PER_OCTAVE  # slope buckets of the V and ln V families
    N_SQRT_SLOPES = N_OCTAVES * SQRT_SLOPES_PER_OCTAVE  # of the sqrt V family
    N_TABLE = 1 + N_SLOPES + N_SQRT_SLOPES  # the slope table: 0, the V and ln V slopes, the sqrt V ones
    # bucket codes of the lines: CONSTANT (constant values, keyed by -value), 1 .. N_SLOPES (lines bounding
    # V, by slope), N_SLOPES + 1 .. 2 N_SLOPES (lines bounding ln V, the same slopes), 2 N_SLOPES + 1 ..
    # 2 N_SLOPES + N_SQRT_SLOPES (lines bounding sqrt V, sixteen per octave), UNBOUNDED (slopes above the
    # largest: bound inf)
    CONSTANT = 0
    LOG_FAMILY = N_SLOPES        # a bucket of lines bounding ln V: LOG_FAMILY + its slope's bucket
    SQRT_FAMILY = 2 * N_SLOPES   # a bucket of lines bounding sqrt V: SQRT_FAMILY + its slope's bucket
    UNBOUNDED = 1 + 2 * N_SLOPES + N_SQRT_SLOPES


cdef inline void fill_slope_table(double* table) noexcept nogil:
    """table[0 .. N_TABLE - 1]: 0 (CONSTANT), the slope of each bucket of the V (and ln V) family, then of
    each of the sqrt V family.

    Bucket ``1 + o P + q`` of a family of P slopes per octave holds the slopes up to ``(1/2 + (q + 1)/(2 P))
    2**(o + 1 - EXPONENT_OFFSET)``.
    """
    cdef int b
    table[0] = 0.0
    for b in range(1, N_SLOPES + 1):
        table[b] = ldexp(0.5 + <double>((b - 1) % SLOPES_PER_OCTAVE + 1) / (2.0 * SLOPES_PER_OCTAVE),
                         (b - 1) // SLOPES_PER_OCTAVE + 1 - EXPONENT_OFFSET)
    for b in range(1, N_SQRT_SLOPES + 1):
        table[N_SLOPES + b] = ldexp(0.5 + <double>((b - 1) % SQRT_SLOPES_PER_OCTAVE + 1)
                                    / (2.0 * SQRT_SLOPES_PER_OCTAVE),
                                    (b - 1) // SQRT_SLOPES_PER_OCTAVE + 1 - EXPONENT_OFFSET)


cdef inline int family_of(Py_ssize_t b) noexcept nogil:
    """The family of slope bucket b: 0 (lines bounding V), 1 (ln V) or 2 (sqrt V)."""
    return 2 if b > SQRT_FAMILY else (1 if b > LOG_FAMILY else 0)


cdef inline double bucket_slope(const double* table, Py_ssize_t b) noexcept nogil:
    """The slope of slope bucket b (1 .. UNBOUNDED - 1: the V and ln V families share the table's slopes,
    those of the sqrt V family follow)."""
    return table[b - N_SLOPES if b > N_SLOPES else b]


cdef inline int bucket_of_slope_in(double s, int per_octave, int n_slopes, int unbounded) noexcept nogil:
    """The bucket (1 .. n_slopes, in a family of per_octave slopes per octave) of lines of slope s > 0: its
    slope is >= s; ``unbounded`` above the largest."""
    cdef double f
    cdef int e, o
    cdef uint64_t bits
    memcpy(&bits, &s, 8)
    e = <int>((bits >> 52) & 0x7ff)
    if e == 0 or e == 0x7ff:
        f = frexp(s, &e)  # s = f 2**e, 1/2 <= f < 1 (subnormal, inf)
    else:  # frexp from the bits (no library call): the same f and e
        e -= 1022
        bits = (bits & 0x800fffffffffffffULL) | (<uint64_t>1022 << 52)
        memcpy(&f, &bits, 8)
    o = e + EXPONENT_OFFSET - 1
    if o < 0:
        return 1  # below the smallest slope: rounded up to it
    if o >= N_OCTAVES:
        return unbounded
    # f < 1/2 + (q + 1)/(2 per_octave): the bucket's slope is >= s
    return 1 + o * per_octave + <int>((f - 0.5) * (2 * per_octave))


cdef inline int bucket_of_slope(double s) noexcept nogil:
    """The bucket of lines bounding V of slope s > 0 (its slope is >= s; UNBOUNDED above the largest)."""
    return bucket_of_slope_in(s, SLOPES_PER_OCTAVE, N_SLOPES, UNBOUNDED)


cdef inline double value_slope(double mu, double delta, double a, double tau0, double ex) noexcept nogil:
    """s with V(tau) <= V(tau0) + s (tau - tau0) for every tau >= tau0; 0 for a constant value.

    ``s = mu h(a tau0)``, ``h(x) = 1/e`` for ``x < 1``, ``x e^{-x}`` beyond (the module notes); ``a``:
    the page's alpha (Greedy: Delta); ``ex``: ``e^{-a tau0}`` if the value's evaluation computed it, else
    negative.
    """
    cdef double x
    if mu == 0.0 or delta == 0.0 or not (tau0 < INFINITY):
        return 0.0
    if a == 0.0:
        return 0.0  # alpha = 0: V is 0 for every finite tau
    x = a * tau0
    if x < 1.0:
        return mu * INV_E_UP
    return mu * (x * (ex if ex >= 0.0 else exp(-x)))


cdef inline double peak_share(double A) noexcept nogil:
    """``sup_{y >= 0} e^{-y} (A + y)``: ``A`` if ``A >= 1``, else ``e^{A - 1}``."""
    return A if A >= 1.0 else exp(A - 1.0)


cdef inline double psi_slope(double mu, double a, double tau0, double psi0, double b, double g,
                             double s) noexcept nogil:
    """The smaller of s (``value_slope``) and the slopes that psi's bounds give (every kind but Greedy; ``b =
    b_j``, ``g = gamma_j``).

    ``V'(tau) = mu a e^{-a tau} psi(tau)`` with ``psi`` 1-Lipschitz from
    ``psi(tau0) <= psi0``, and ``psi(tau) <= (tau + b)/(1 + g b)`` (Wald's
    identity: the effective elapsed time at the crawl is at most ``tau + b``;
    for ``0 < b < inf``), so for ``tau >= tau0`` it is at most ``mu e^{-a tau0}
    sup_y e^{-y} (A + y)`` with ``A = a psi0``, and ``mu e^{-a tau0} sup_y
    e^{-y} (a (tau0 + b) + y)/(1 + g b)``.  ``s`` if these underflow (a
    constant value is never made of a growing one here).
    """
    cdef double e = exp(-a * tau0), t, t2
    if not (e > 0.0):
        return s
    t = mu * e * peak_share(a * psi0)
    if 0.0 < b < INFINITY:
        t2 = mu * e * peak_share(a * (tau0 + b)) / (1.0 + g * b)
        if t2 < t:
            t = t2
    return t if 0.0 < t < s else s


cdef inline double log_line_slope(double mu, double delta, double v0, double tau0, double ex,
                                  double last_winning_value, double rate, double* c) noexcept nogil:
    """Greedy: slope s and value c (in ``c[0]``) at tau0 of a line in tau bounding ln V for every tau >= tau0.

    ``V = (mu/Delta) F(Delta tau)`` with ``F`` the Gamma(2, 1) distribution
    function, log-concave since its density ``x e^{-x}`` is: the tangent of
    ``ln V`` at ``tau0``, slope ``V'/V = mu x e^{-x} / v0``, lies above ``ln V``
    everywhere.  When ``v0 = 0`` (just crawled, or underflow), ``V(tau) <=
    (mu/e) tau`` and ``ln tau <= ln tau1 - 1 + tau/tau1`` for any ``tau1 > 0``
    give the line of slope ``1/tau1``; ``tau1 = e L/mu`` with ``L`` the last
    winning value (``1/rate`` before the first), where the linear bound reaches
    ``L``.  The caller has excluded constant values (``mu = 0``,
    ``Delta = 0``, ``tau0 = inf``); ``ex`` as for :func:`value_slope`.
    """
    cdef double x, tau1
    if v0 > 0.0:
        x = delta * tau0
        c[0] = log(v0)
        return mu * (x * (ex if ex >= 0.0 else exp(-x))) / v0
    tau1 = E_UP * last_winning_value / mu if last_winning_value > 0.0 else 1.0 / rate
    if not (tau1 > 0.0 and tau1 < INFINITY):
        tau1 = 1.0 / rate
    c[0] = log(mu * INV_E_UP) + log(tau1) - 1.0 + tau0 / tau1
    return 1.0 / tau1


cdef inline double sqrt_line_slope(double mu, double a, double v0, double tau0, double* c) noexcept nogil:
    """Slope s and value c (in ``c[0]``) at tau0 of a line in tau bounding sqrt V for every tau >= tau0.

    ``V(tau)/tau**2`` does not increase (the module notes), so ``sqrt V(tau)
    <= sqrt(v0) tau/tau0``: the line through ``(tau0, sqrt v0)`` and the root
    ``tau = 0``, of slope ``sqrt(v0)/tau0``.  When ``v0 = 0`` or ``tau0 = 0``
    (just crawled, or underflow): ``V' <= mu a tau`` gives ``V(tau) <=
    (mu a/2) tau**2``, slope ``sqrt(mu a/2)`` and ``c = s tau0``.  ``a``: the
    page's alpha (Greedy: Delta).  0 if the slope underflows.
    """
    cdef double s
    if v0 > 0.0 and tau0 > 0.0:
        c[0] = sqrt(v0)
        return c[0] / tau0
    s = sqrt(0.5 * (mu * a))
    c[0] = s * tau0
    return s


cdef inline void polled_pivot_line(const PolledPage* pg, double mu, double s0, double v0, double L, double* c,
                                   double* S) noexcept nogil:
    """Replaces the line ``(c[0], S[0])`` (``polled_line``'s, in s-units from ``s0``) by a line through ``(s0,
    v0 (1 + 2e-12) + pre)`` where that one reaches ``L`` later: below the next breakpoint ``B`` (``polled_break_pre``)
    there is no jump but those ``pre`` allows for, so ``V(s) <= c0 + S_line (s - s0)`` on ``[s0, B]`` (``c0 = v0
    (1 + 2e-12) + pre``), and beyond it
    each of ``polled_lines``' lines ``(cx, Sx)`` holds, which the line from ``c0`` of slope ``Sx + (cx - c0)/(B -
    s0)`` passes at ``B`` and after (``cx >= c0``).  A page whose jump allowance alone (the intercept) passes the
    winning value would otherwise be popped at every tick until its crawl."""
    cdef double s0e = s0 if s0 > 0.0 else 0.0, B, ca, sa, cb, sbb, sline, c0, h, sx, r, best, pre
    cdef int n
    B = polled_break_pre(pg, mu, s0e, &pre)
    if not (B > s0e) or B == INFINITY:
        return  # (no jump to come: polled_line's line is the one from c0 already)
    n = polled_lines(pg, mu, s0e, v0, B, pre, &ca, &sa, &cb, &sbb, &sline)
    c0 = v0 + 2e-12 * v0 + pre
    h = B - s0e
    best = (L - c[0]) / S[0] if S[0] > 0.0 else -INFINITY
    sx = -1.0
    if sa < INFINITY and ca < INFINITY:
        sx = sa + (ca - c0) / h
    if n == 2 and sbb < INFINITY and cb < INFINITY:
        r = sbb + (cb - c0) / h
        if sx < 0.0 or r < sx:
            sx = r
    if not (sx > 0.0):
        return
    sx = (sx if sx > sline else sline) * (1.0 + 1e-12)
    if sx < INFINITY and (L - c0) / sx > best:
        c[0] = c0
        S[0] = sx


cdef inline int polled_page_line(const Pages* p, Py_ssize_t j, double t0, double v0, double tau0,
                                 const double* table, double L, double* key) noexcept nogil:
    """Bucket and key (in ``key[0]``) of the bound of polled page j (not of Greedy's value) from ``V_j = v0`` at
    time t0, ``tau0 = t0 - ell`` (``s0 = Delta tau0``, the bits ``value_at`` evaluated at).

    Two lines (freshcore._schedule, "Polled signals"), of which the one that reaches the last winning value
    L last is kept (the sqrt V one when there is no L yet):

    * family 0: ``V(s) <= c + S (s - s0)`` for ``s >= s0`` (``polled_line``, the branch reaching L last), so
      ``V <= c + S Delta (t - t0)`` for ``t >= t0`` whatever the polls (an unmoved one lowers s, and V does not
      decrease in s; a moved one shifts the key as it shifts ``ell``): slope ``S Delta``, key ``t0 - c/s_b``;
    * family 2: ``sqrt V(s) <= R s`` from the root (``polled_root_slope``, ``R = sqrt(mu/(2 alpha))``), so
      ``sqrt V <= R Delta (t - ell)``: the line through ``(t0, R Delta tau0)`` of slope ``R Delta``, as
      ``sqrt_line_slope``'s (every page crawled at the same time shares it).

    ``polled_line``'s slope 0 with ``c = v0``: a constant value (CONSTANT, key ``-v0``); slope 0 with ``c >
    v0`` is a cap (``V <= c`` for ever, the value still growing below it), left to the pivot line or the family 2
    line.  Whatever the lines, a page whose cap ``mu/Delta`` (``(1 + 4 eps)``, as ``polled_line`` has it) is below
    L goes to CONSTANT keyed by ``-cap``: never popped while the winning value stays above it, where a line from
    an evaluation near the cap (its jump allowance alone passing the cap and L) would be popped at every tick;
    with no finite line, the cap too if the line's slope was 0, else
    UNBOUNDED.  Keys shaded by ``key_pad`` (``8 eps (|t0| + |ell|)``).
    """
    cdef PolledPage pg
    cdef double dl = p.records[j].change_rate, mu = p.records[j].importance
    cdef double s0 = dl * tau0, c, S, sv = 0.0, sq = 0.0, cq = 0.0, rbest, r, s, sb, cap
    cdef int family = -1, b
    page_prepare(p, j, &pg)
    S = polled_line(&pg, mu, s0, v0, L, &c)
    if S == 0.0 and not (c > v0):
        key[0] = -v0  # a constant value
        return CONSTANT
    rbest = -INFINITY
    if L > 0.0 and S < INFINITY:
        polled_pivot_line(&pg, mu, s0, v0, L, &c, &S)  # (the cap, S = 0, too)
    if 0.0 < S < INFINITY:
        sv = S * dl
        if sv < INFINITY:
            family = 0
            rbest = (L - c) / sv if L > 0.0 else -INFINITY
    r = polled_root_slope(&pg, mu)
    if 0.0 < r < INFINITY and tau0 < INFINITY:
        sq = r * dl
        cq = sq * tau0 if tau0 > 0.0 else 0.0  # (ell after t0: the line from (t0, 0) bounds it too)
        if sq < INFINITY and cq < INFINITY:
            r = (sqrt(L) - cq) / sq if L > 0.0 else INFINITY
            if family < 0 or r > rbest:
                family = 2
    cap = (mu / dl) * (1.0 + 4.0 * DBL_EPSILON)  # (polled_line's: V <= mu/Delta as computed)
    if cap < L or family < 0:
        # the cap as a constant bound: never popped while the winning value is above it, where a line from an
        # evaluation whose allowances pass the winning value would be popped at every tick (pages near their cap,
        # whose jump allowance passes it); else where no line is finite
        if cap < L or S == 0.0 or not (cap < INFINITY):
            key[0] = -(cap if cap < INFINITY else c)
            return CONSTANT
        key[0] = t0
        return UNBOUNDED
    if family == 2:
        s, c = sq * SLOPE_SAFETY, cq
        b = bucket_of_slope_in(s, SQRT_SLOPES_PER_OCTAVE, N_SQRT_SLOPES, UNBOUNDED)
    else:
        s = sv * SLOPE_SAFETY
        b = bucket_of_slope(s)
    if b == UNBOUNDED:
        key[0] = t0
        return UNBOUNDED
    if family == 2:
        b += SQRT_FAMILY
    sb = bucket_slope(table, b)
    key[0] = (t0 - c / sb) - key_pad(p, j, t0, 0.0)
    return b


cdef inline double polled_park_time(const Pages* p, Py_ssize_t j, double t0, double v0, double tau0,
                                    double level) noexcept nogil:
    """A time before which the value of polled page j (not of Greedy's value), ``v0`` at t0 (``tau0 = t0 -
    ell``, ``s0 = Delta tau0``), stays below ``P = level (1 - PARK_SHADE)``: ``t0 + (s* - s0)/Delta`` with ``s*``
    ``polled_reach_s`` (a lower bound of the first ``s`` at which ``V(s) >= P``; ``s <= s0 + Delta (t - t0)``
    whatever the polls, the moved ones shifting the key as they shift ``ell``), taken 4 ulps low, less
    ``8 eps (|t0| + |ell| + |key|)`` (the rounding of ``tau`` and ``s``); inf if V never reaches ``P``."""
    cdef PolledPage pg
    cdef double dl = p.records[j].change_rate, s0 = dl * tau0, ss, key
    page_prepare(p, j, &pg)
    ss = polled_reach_s(&pg, p.records[j].importance, s0, v0, level * (1.0 - PARK_SHADE))
    if ss == INFINITY:
        return INFINITY
    if not (ss > s0):
        return t0 - key_pad(p, j, t0, 0.0)
    key = t0 + ((ss - s0) / dl) * (1.0 - 4.0 * DBL_EPSILON)
    return (key - 8.0 * DBL_EPSILON * (fabs(t0) + fabs(p.records[j].last_crawl) + fabs(key))) - 1e-300


cdef inline int page_line(const Pages* p, Py_ssize_t j, double t0, double v0, double tau0, double ex,
                          double psi0, double bj, const double* table, double last_winning_value,
                          double log_last_winning_value,
                          double rate, double* key) noexcept nogil:
    """Bucket and key (in ``key[0]``) of the bound of page j from V_j = v0 at time t0 (tau_j = tau0; ``ex`` as
    for :func:`value_slope`; ``psi0`` a bound of psi_j(tau0) and ``bj = b_j``, for :func:`psi_slope`).

    Of the lines that bound V (every kind), sqrt V (every kind) and ln V
    (Greedy where V is convex), the one that reaches the last winning value
    L last is kept (all are valid bounds; bucket rounding is ignored in the
    choice); the line bounding sqrt V when there is no L yet.
    """
    cdef double s, sb, pad, c, sl, cl, sq, cq, L, r, rbest
    cdef double dl = p.records[j].change_rate, mu = p.records[j].importance
    cdef bint greedy = p.kind == GREEDY
    cdef double a
    cdef int b, family = 0
    if p.kind == POLLED:
        # pages with Greedy's value (polled_greedy), from tau0 >= 0, take Greedy's lines (in t, tau = t - ell);
        # the others the polled bounds (polled_page_line)
        if not (polled_greedy(p, j) and tau0 >= 0.0):
            return polled_page_line(p, j, t0, v0, tau0, table, last_winning_value, key)
        greedy = True
    a = dl if greedy else page_alpha(p, j)
    s = value_slope(mu, dl, a, tau0, ex)
    if not greedy and s > 0.0:
        s = psi_slope(mu, a, tau0, psi0, bj if p.kind != CIS else INFINITY, page_gamma(p, j), s)
    c = v0
    if not (s > 0.0):
        key[0] = -v0  # a constant value
        return CONSTANT
    L = last_winning_value
    rbest = (L - v0) / s if L > 0.0 else -INFINITY  # when the line bounding V reaches L
    sq = sqrt_line_slope(mu, a, v0, tau0, &cq)
    if sq > 0.0:
        r = (sqrt(L) - cq) / sq if L > 0.0 else INFINITY
        if r > rbest:
            s, c, family, rbest = sq, cq, 2, r
    if greedy and not (dl * tau0 >= 1.0 and v0 > 0.0) and L > 0.0:
        # Greedy where V is convex (where it is concave, the line bounding V is its tangent): also a line
        # bounding ln V
        sl = log_line_slope(mu, dl, v0, tau0, ex, last_winning_value, rate, &cl)
        r = (log_last_winning_value - cl) / sl
        if r > rbest:
            s, c, family = sl, cl, 1
    s = s * SLOPE_SAFETY
    if not (s > 0.0):
        key[0] = -v0
        return CONSTANT
    if family == 2:
        b = bucket_of_slope_in(s, SQRT_SLOPES_PER_OCTAVE, N_SQRT_SLOPES, UNBOUNDED)
    else:
        b = bucket_of_slope(s)
    if b == UNBOUNDED:
        key[0] = t0
        return UNBOUNDED
    if family == 1:
        b += LOG_FAMILY
    elif family == 2:
        b += SQRT_FAMILY
    sb = bucket_slope(table, b)
    pad = key_pad(p, j, t0, bj)
    key[0] = (t0 - c / sb) - pad
    return b


cdef inline double top_bound(const double* table, Py_ssize_t b, double key, double t, double tpad) noexcept nogil:
    """The inflated bound at time t of the top (key ``key``) of nonempty bucket b (tpad = 8 eps |t|).

    ``U = s_b (t - key)``, inflated by ``BOUND_MARGIN |U| + s_b tpad`` (for the lines bounding sqrt V, a bound
    of sqrt V); for the lines bounding ln V (a bound of ln V) by ``BOUND_MARGIN (1 + |U|) + s_b tpad``;
    ``-key`` for CONSTANT, inf for UNBOUNDED.  The scan
    (``freshcore_scan`` in _schedule_scan.h) repeats this arithmetic in this order.
    """
    cdef double u, sb
    if b == UNBOUNDED:
        return INFINITY
    if b == CONSTANT:
        u = -key
        return u + BOUND_MARGIN * fabs(u)
    sb = bucket_slope(table, b)
    u = sb * (t - key)
    if b > LOG_FAMILY and b <= SQRT_FAMILY:  # a bound of ln V: absolute margin
        return u + BOUND_MARGIN * (1.0 + fabs(u)) + sb * tpad
    return u + BOUND_MARGIN * fabs(u) + sb * tpad


cdef extern from "_schedule_park_x.h":
    # x = -1 - W-1(-(1 - c)/e) for many c at once (0 <= c < 1; the settle's park keys), by the periodic rates'
    # vector kernel; the level set (-1: no vector kernel, park_x_many then does nothing)
    void park_x_many "freshcore_park_x"(const double* c, double* out, Py_ssize_t n) noexcept nogil
    int park_x_set_level "freshcore_park_x_set_level"(int level) noexcept nogil


cdef inline double park_share(double delta, double mu, double level) noexcept nogil:
    """``y = P Delta/mu``, ``P = level (1 - PARK_SHADE)``: the share of its largest value ``mu/Delta`` that a
    Greedy page reaches at the shaded park level (``park_time``)."""
    return (level * (1.0 - PARK_SHADE)) * delta / mu


cdef inline double park_time_at(double last, double delta, double y, double x) noexcept nogil:
    """``park_time`` from ``y = park_share(...)`` and ``x = residual1_inverse(y, 1 - y)``, or x computed otherwise
    within 5e-14 relative (the vector kernel of ``park_x_many``: 2e-15); ``inf`` if ``y >= 1`` (x unused)."""
    cdef double key
    if not (y < 1.0):
        return INFINITY
    key = last + (x * (1.0 - 5e-14)) / delta
    return (key - 8.0 * DBL_EPSILON * (fabs(last) + fabs(key))) - 1e-300


cdef inline double park_time(double last, double delta, double mu, double level) noexcept nogil:
    """A time before which the Greedy value of a page (last crawl ``last``, Delta, mu > 0) is below ``level``.

    The time at which ``V = (mu/Delta) F(Delta tau)`` reaches ``P = level
    (1 - PARK_SHADE)``: ``F(x) = y = P Delta/mu`` at ``x = -(1 + W_{-1}(-(1 -
    y)/e))`` (``_core.residual1_inverse``, as the periodic rates; it can be
    2.3e-14 relative high near ``y = 0.005``, the largest excess over a
    50-digit reference of 8000 ``y`` from 1e-8 to 1 with 6000 of them in
    [5e-4, 0.05], where the Lambert W leaves its branch-point series: ``x`` is
    taken 5e-14 lower), less a few ulps of the times; ``inf`` if ``y >= 1``
    (V stays below P).
    ``PARK_SHADE`` (1e-9 of the level, so at least ~5e-10 of ``x``) covers
    the errors of ``x`` (~1e-15 relative), of ``tau = t - last`` and of the
    computed values (tests/test_schedule_bounds.py checks both sides).  The
    settle computes x for many pages at once (``park_x_many``; ``park_time_at``).
    """
    cdef double y = park_share(delta, mu, level)
    return park_time_at(last, delta, y, residual1_inverse(y, 1.0 - y) if y < 1.0 else 0.0)


cdef inline double key_pad(const Pages* p, Py_ssize_t j, double t0, double bj) noexcept nogil:
    """The shade of a key of page j made at t0 (b_j = bj): a few ulps of the times in tau's computation,
    ``8 eps (|t0| + |last| + |b n|)`` (freshcore._schedule, "Rounding")."""
    cdef double shift = fabs(bj * <double>p.records[j].n_signals) if p.records[j].n_signals > 0 else 0.0
    return 8.0 * DBL_EPSILON * (fabs(t0) + fabs(p.records[j].last_crawl) + shift) + 1e-300


cdef inline double reach_time(double t0, double tau0, double v0, double psi0, double a, double mu, double level,
                              double pad) noexcept nogil:
    """A time before which the value of a page of any kind, ``v0`` at ``t0`` (``tau_j = tau0``, ``psi(tau0) <=
    psi0``, ``alpha = a > 0``, ``mu > 0``), stays below ``P = level (1 - PARK_SHADE)``.

    The later of the times at which two bounds of ``V(tau0 + d)`` reach ``P``
    (freshcore._schedule, "The park"), less ``pad`` (a few ulps of the times):

    * the curve ``v0 + mu e^{-a tau0} [psi0 (1 - e^{-y}) + (1 - e^{-y} (1 + y))/a]``, ``y = a d``
      (``V' = mu a e^{-a tau} psi(tau)`` with ``psi`` 1-Lipschitz), inflated by 1e-11 for the rounding of
      ``e^{-a tau0}`` and ``psi0``.  With ``A = a psi0`` and ``r`` the share of its limit above ``v0``
      that ``P`` needs, it reaches ``P`` where ``e^{-y} (1 + A + y) = (1 + A)(1 - r)``: ``y = x - A``
      with ``R^1(x) = R^1(A) + r (1 + A) e^{-A}`` (``residual1_inverse``, the Greedy park's Lambert W),
      and ``y`` is at least every iterate ``y_{k+1} = -log(1 - r) + log(1 + y_k/(1 + A))`` from
      ``y_0 = -log(1 - r)`` (an increasing map below its fixed point), used (the larger of the two, each
      taken a little low) where the first loses its digits to the difference ``x - A`` (``y < A/1000``);
    * the line bounding ``sqrt V`` through the root (``V(tau)/tau**2`` does not increase), or ``V <= (mu
      a/2) tau**2`` when ``v0`` is 0 or subnormal.

    ``inf`` if neither ever reaches ``P``; ``t0 - pad`` if ``v0 >= P``.
    """
    cdef double P = level * (1.0 - PARK_SHADE), gap = P - v0, e, big, A, r, y, y0, ea, x, q, d = 0.0
    if not (gap > 0.0):
        return t0 - pad
    e = exp(-a * tau0)
    big = ((mu * e) * (psi0 + 1.0 / a)) * (1.0 + 1e-11)  # the curve's limit above v0
    if e > 1e-290 and big < INFINITY:  # (else: the curve is not used)
        if not (gap < big):
            return INFINITY  # the curve never reaches P (nor the value)
        A = a * psi0
        r = gap / big
        y = -1.0
        if A < 700.0:
            ea = exp(-A)
            q = (1.0 + A) * ((1.0 - r) * ea)
            x = residual1_inverse(residual_exp(1, A) + r * ((1.0 + A) * ea), q)
            y = x * (1.0 - 1e-14) - A
        if y < 1e-3 * A:  # (x - A lost its digits, or no Lambert W: the iterates)
            y0 = -log1p(-r)
            x = y0 + log1p(y0 / (1.0 + A))
            x = (y0 + log1p(x / (1.0 + A))) * (1.0 - 1e-14)
            if x > y:
                y = x
        d = y / a if y > 0.0 else 0.0
    # the line bounding sqrt V (from a normal v0: P/v0 may overflow, and a subnormal v0 has lost digits)
    if v0 >= DBL_MIN and tau0 > 0.0:
        y = tau0 * (sqrt(P) / sqrt(v0) - 1.0)
    else:
        y = sqrt(2.0 * P / mu) / sqrt(a) - tau0
    y = y * (1.0 - 1e-14)
    if y > d:
        d = y
    return (t0 + d) - pad


cdef inline double line_park_time(const double* table, Py_ssize_t b, double key, double level) noexcept nogil:
    """A time before which the bound of a page in slope bucket b (lines bounding V or sqrt V) with key ``key``,
    inflated as ``top_bound`` inflates it, is below ``level``: where the line reaches ``level (1 - PARK_SHADE)``
    (its square root for sqrt V), less 1e-12 of the way and a few ulps of the times (the inflation is 1e-11
    of the bound and ``s_b 8 eps |t|``)."""
    cdef double sb = bucket_slope(table, b), u = level * (1.0 - PARK_SHADE), d, tp
    if b > SQRT_FAMILY:
        u = sqrt(u)
    d = (u / sb) * (1.0 - 1e-12)
    tp = key + d
    return (tp - 16.0 * DBL_EPSILON * (fabs(key) + fabs(tp))) - 1e-300
