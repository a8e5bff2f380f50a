# cython: language_level=3
"""Compiled crawl value of polled, lossy change signals (issue 19; the model is in ``freshcore.polled_signals``).

Layers as in ``_value.pyx``: ``cdef ... noexcept nogil`` functions for one page (declared in ``_polled.pxd`` so
the scheduler can cimport them) and ``def`` batch kernels over typed memoryviews that release the GIL.  Nothing
here validates: ``freshcore.polled_signals`` checks every parameter first.

The lattice by columns
----------------------
A lattice point is a path of ``n = k + j`` poll windows, ``k`` unmoved and ``j`` moved, at level
``x = alpha w n + b j``.  Split by its last window, its weight ``P`` is

* moved last (``j >= 1``, ``k >= 0``): ``C(n-1, j-1) q^j qb^k = q B(n-1, j-1)``, alive when ``x < s``:
  in ``k`` a negative binomial pmf (failures before the ``j``-th success);
* unmoved last (``k >= 1``): ``C(n-1, j) q^j qb^k = qb B(n-1, j)``, alive when ``x + lambda Delta w < s``;

(``B(m, i)`` the Binomial(``m``, ``q``) pmf) plus ``(0, 0)`` with weight 1.  A column is ``j`` fixed, ``k``
running: ``x`` grows by ``alpha w`` along it.  Summing the lattice by columns rather than rows is what makes it
cheap: a column whose mass lies far below the level ``s`` is *complete* and sums in closed form, and the
columns that cross the level need only the ``k`` where their pmf is not negligible.

Tilted weights.  ``W = P e^{-x}`` (what ``w`` and ``V`` weigh) is again a negative binomial pmf in ``k``, with
``qb`` replaced by ``r0 = qb e^{-alpha w} = e^{-(Delta + nu) w}``, times ``rho1^j``,
``rho1 = q e^{-alpha w - b}/(1 - r0)``.  So a complete column adds ``P`` totals 1 (moved) and ``qb/q``
(unmoved) and ``W`` totals ``rho1^j`` and ``rho1^j r0/(1 - r0)``; summed over every column they give
``sum_n e^{-Delta w n} = 1/(1 - e^{-Delta w})`` (``q e^{-b} + qb = e^{-lambda Delta w}``: the tilted
probability of a move is ``1 - e^{-nu w}``, only false moves).

The value.  With ``c = s - Delta w``, a point below ``c`` (interior, ``d = Delta w``) adds
``e^{-x} R^1(Delta w) + Delta w e^{-s} expm1(c - x)`` to ``V Delta/mu``, which is
``W (1 - e^{-Delta w}) - Delta w e^{-s} P``; a point above it (the band, ``d = s - x``) adds ``W R^1(s - x)``.
The difference form cancels only where ``c - x`` is small: there (``c - x < 0.7``, "near") each point is
added in the first form; below (``c - x >= 0.7``, "far") the two sums ``sum W`` and ``sum P`` are kept and
combined once, ``(1 - e^{-Delta w}) sum W - Delta w e^{-s} sum P``, where each point's difference is at
least ``1 - e^{-0.7} > 1/2`` of its first part (``Delta w e^{-Delta w}/(1 - e^{-Delta w}) <= 1``): at most one
bit lost.  ``psi`` and ``w`` are sums of non-negative terms.

Two paths.  Every term above is linear in the column sums of ``P``, ``W`` and ``k P``: an interior point
(``x <= c``) adds ``(1 - e^{-Delta w}) W - Delta w e^{-s} P``, a band point ``W R^1(y) = W - e^{-s} P (1 + y)``
(``y = s - x``), ``P y`` to ``psi Delta`` and ``W - e^{-s} P`` to ``w Delta``; only the differences cancel.

* CDF sums (``fast_walk``, tried first, everything interior in the difference form): a sub-column's interior
  and band sums are negative binomial CDFs, ``P(NB(r, p) <= K) = P(Binomial(K + r, p) >= r)`` (``nb_cdf``):
  the binomial tail on the far side of its mean from ``r - 1`` is summed from its first term (Loader's form)
  by the ratios of consecutive terms, which fall geometrically there, until the rest is below a quarter ulp
  (``O(sd)`` terms, ``sd`` the binomial's standard deviation, ~ ``sqrt(r)``: far fewer than the column's
  points), and the other tail is one minus it; a range is the difference of the two lower or the two upper
  tails, whichever is more accurate.  (The incomplete beta continued fraction was tried first: near
  ``x ~ (a + 1)/(a + b + 2)`` with ``b ~ 10^5`` Lentz's steps cancel and lose ~1e-12.)  ``k P`` is
  ``r (qb/p)`` times the NB(``r + 1``) pmf at ``k - 1``.  A band of at most ``BAND_WALK`` points is added
  point by point (exact non-negative terms).  Each sum carries an absolute error bound: the first term
  ``6 |log pmf| + 24 + log_binom_err`` ulps (Loader's log and ``exp``; ``log_binom_err`` the rounding of
  ``n p`` against the deviances, ``~|i - n p|`` ulps, which ``6 |log pmf| + 256`` missed at ``n ~ 10^8``; the
  three ``stirlerr`` within an ulp each), 4 ulps a ratio step times the term's distance from the first
  (``sum_k k term_k``, tracked), 2 for the compensated sum (Fast2Sum), one ulp for a complement, the
  subtraction of two tails, and 3 ulps of the magnitudes for the final differences (checked against 50-digit
  incomplete beta values; the sub-columns' interior sums are added compensated: 10^4 columns).  Not in the
  budget: the tilted weights' column factors ``rho1^j`` (``exp(j log rho1)``, ~``j`` ulps of ``log rho1``): on a
  3300-column page at ``s = 0.038``, ``w = 1`` the error of ``V`` was 1.03x its bound (1.9e-13 relative against the
  50-digit recursion).  ``fast_ok`` keeps the result only where the bounds of ``V``, ``w`` (and ``psi``) are below
  ``FAST_TOL = 4e-13`` of them.  It fails where ``V`` is small against the sums it is the difference of
  (small ``s``: ``V ~ s^2/2`` against ``Delta w e^{-s} psi``; a wide band holding most of the mass), or
  where a tail needs more than ``CF_MAXIT`` terms.  Cost: two to six tail sums a sub-column, ``O(columns x
  sd)``, not ``O(points)``; the two interior tails share their first terms' ``stirlerr`` and log parts
  (``nb_range0_pair``), a narrow band's first pmf follows from the interior's first term, and a band point's
  ``R^1`` is a short series (``band_r1``): one Loader log-pmf a sub-column where there is an interior.  A
  geometric sub-column (``r = 1``: column 0 and column 1's moved-last part) has its interior CDFs
  ``1 - pb^(kk + 1)`` by ``expm1`` (the binomial tail's ``1 - pb^n`` is only ``EPS`` absolute: against column
  0's factor ``qb/q ~ 1/(gamma w)`` at low recall and small nu that failed the bound: those pages walked).
* The extended retry (``ext_ok``, tried where the CDF sums' bounds fail, before the walk): the same sums with
  the sub-columns' interior CDFs, their column factors ``rho1^j``, the page's weights (``q``, ``1 - r0``, ...
  recomputed from ``Delta``, ``lambda``, ``nu``, ``w``), the narrow bands' anchors and the final difference in
  ``fc_ext`` (``_polled_ext.h``: x87 long double, unit ``XEPS = 2^-64``; its ``stirlerr`` table and a Stirling
  series to ``1/n^15`` are exact to it).  The error budget is the double one in units of ``XEPS`` (every part
  of it counts roundings; the log-pmf's ``6 |lp| + 24 + log_binom_err`` is checked against 50 digits in
  fc_ext), the band's sums stay double.  Where ``V`` is a difference amplified ``A``-fold against its sums
  (``A ~ 2/s``: 660 on the issue's page at ``s = 0.006``, ``w = 0.01``), the double bound ~14 ulps of the sums
  (``1e-12`` of ``V`` there) becomes ~14 ``XEPS`` (``7.8e-16``).  Where long double has no 64-bit
  significand (MSVC, aarch64, ppc64: double or a slow software quad) ``fc_ext`` is double and the retry is
  skipped: the walk as before (the portable fallback; ``-DFRESHCORE_NO_LONG_DOUBLE`` forces it).
* The walk (``walk``, the fallback), which loses at most about two bits: column ``j``'s far interior
  (``c - x >= 0.7``) in the difference form (column 0's, geometric, in closed form), the rest point by point:

  - complete (closed form) where the Chernoff bounds of the mass of both measures above the far boundary are
    below ``1e-17`` (``P(NB(r, p) > K) = P(Binomial(K + r, p) <= r - 1) <= exp(-(K + r) D((r - 1)/(K + r) || p))``);
  - otherwise each sub-column is walked from its far boundary (or its first ``k``) up to the last alive ``k``
    and down to the first, with ``P`` and ``W`` by the ratio of consecutive terms from a Loader anchor (its
    log-pmf by the saddle-point form, a few ulps; a fresh anchor every ``ANCHOR`` points), until the rest of
    the walk is bounded (geometrically: the ratios are monotone) below ``1e-17`` of the partial sums of
    ``psi``, ``w`` and ``V``.  The weights are carried as ``m 2^e`` (exact rescaling), so a walk that starts
    below the underflow (``P(k = 0) = q^j`` past ``j ~ 745/|log q|``) climbs out of it to the mode; the
    point-by-point sums are compensated (TwoSum: ~10^7 points otherwise drift by ~3e-13).

On both paths complete columns (the boundary at ``c`` for the CDF sums) add their closed-form totals, and the
columns stop when none is alive any more, or when the rest is bounded below ``1e-17`` of the partial sums (the
alive column masses of both measures decrease with ``j``; ``W`` at least by ``rho1`` a column; a column's
masses count what its walk left out, so they bound the next columns').  Where
``lambda = 1`` (``alpha w = 0``) every column sits at one level and sums in closed form.  A page whose walk
would pass ``MAX_STEPS`` points (tail terms count as points on the CDF path) is refused (status -1), so
nothing hangs.
"""

cimport cython
from libc.math cimport exp, expm1, log, log1p, floor, fabs, fmin, fmax, ldexp, nextafter, INFINITY, NAN, isnan

from freshcore._core cimport residual_exp, stirlerr, bd0

cdef extern from "_polled_ext.h" nogil:
    ctypedef long double fc_ext  # long double where it has a 64-bit significand, else double (the header)
    int FC_HAVE_EXT
    fc_ext FC_EXT_EPS
    fc_ext FC_LOG_2PI
    fc_ext fc_exp(fc_ext)
    fc_ext fc_expm1(fc_ext)
    fc_ext fc_log(fc_ext)
    fc_ext fc_log1p(fc_ext)
    fc_ext fc_fabs(fc_ext)
    fc_ext fc_stirl(fc_ext)
    fc_ext fc_bd0(fc_ext, fc_ext)

cdef double MAX_STEPS = 16777216.0  # 2^24 points
cdef double TOL = 1e-17
cdef double FAR = 0.7
cdef double LEVEL_SLACK = 1e-12
cdef double LOG_HALF_ULP = -37.42994775023705  # log(2^-54)
cdef double LOG_2PI = 1.8378770664093454835606594728112
cdef int MODE = 0  # 0: the fast path, its extended retry, else the walk; 1: the fast path only; 2: the walk only;
# 3: the extended retry only (tests)


cdef inline double stirl(double n) noexcept nogil:
    """``stirlerr(n)`` (freshcore._core's table to 15) inlined, its Stirling series from ``1/n`` and ``1/n^2`` by
    one division (_core's takes five: 8% of an evaluation's time; the roundings of a 0.005 sum, ~1e-18)."""
    cdef double u, u2
    if n <= 15.0:
        return stirlerr(n)
    u = 1.0 / n
    u2 = u * u
    return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - (1.0 / 1680.0 - (1.0 / 1188.0) * u2) * u2) * u2) * u2) * u


cdef inline double log_binom(double i, double n, double p, double pb, double log_p,
                             double log_pb) noexcept nogil:
    """``log(C(n, i) p^i pb^(n-i))`` for integers ``0 <= i <= n`` (``pb = 1 - p``, both > 0)."""
    if i == 0.0:
        return n * log_pb
    if i == n:
        return n * log_p
    return (stirl(n) - stirl(i) - stirl(n - i) - bd0(i, n * p) - bd0(n - i, n * pb)
            - 0.5 * (LOG_2PI + log(i) + log((n - i) / n)))


cdef inline double bd0_err(double j, double x) noexcept nogil:
    """An error bound, in units of ``EPS``, of ``bd0(j, x)`` as ``log_binom`` takes it (``x = n p`` rounded, ``p``
    and ``1 - p`` each within an ulp, not summing to 1 exactly): Loader's deviance is stationary in ``x`` at
    ``x = j``, so a relative ``EPS`` on ``x`` moves it by ``|j - x| EPS``: two of those (the rounding of ``n p``
    and that of ``p`` against ``1 - p``; both deviances together measured within 1.9 ``|i - n p|``), and where
    ``j log(j/x) + x - j`` is formed directly (``|j - x| >= 0.1 (j + x)``) ``j + x`` more for its
    cancellation."""
    cdef double d = fabs(j - x)
    if d < 0.1 * (j + x):
        return 2.0 * d
    return 2.0 * d + (j + x)


cdef inline double log_binom_err(double i, double n, double p, double pb) noexcept nogil:
    """The deviances' part (``bd0_err`` of both) of an error bound, in units of ``EPS``, of ``log_binom(i, n, p,
    pb)`` (``lp``) and of its ``exp``, ``6 |lp| + 24 + log_binom_err`` (measured against 50-digit values over
    ``n`` up to 1e9, ``p`` from 1e-8 to ``1 - 1e-6``, ``i`` up to 10 sd from the mean: at most half of it;
    the three ``stirlerr`` are each within 0.97 ``EPS``, the table's and the Stirling series' truncation at
    ``n = 16``).  Without the deviance terms, ``6 |lp| + 256`` was passed by ~10^4 ulps at ``n ~ 10^8``."""
    if i == 0.0 or i == n:
        return 0.0
    return bd0_err(i, n * p) + bd0_err(n - i, n * pb)


cdef inline double log_nb_upper(double kk, double r, double p) noexcept nogil:
    """log of a Chernoff bound on ``P(NB(r, p) > kk)`` (failures before the ``r``-th success; 0: no bound)."""
    cdef double n = kk + r, a
    if kk < 0.0 or r < 1.0:
        return 0.0
    a = (r - 1.0) / n
    if a >= p:
        return 0.0
    if a == 0.0:
        return n * log1p(-p)
    return -n * (a * log(a / p) + (1.0 - a) * log((1.0 - a) / (1.0 - p)))


cdef void polled_prepare(PolledPage* pg, double dl, double lam, double nu, double w) noexcept nogil:
    cdef double ld = lam * dl, gamma = ld + nu, y
    pg.dl = dl
    pg.lam = lam
    pg.nu = nu
    pg.w = w
    pg.kind = 0
    if dl == 0.0:
        pg.kind = 2
        return
    if ld == 0.0 or w == INFINITY:
        pg.kind = 1
        return
    pg.aw = (dl - ld) * w
    pg.lw = ld * w
    pg.dw = dl * w
    if nu == 0.0:
        pg.b = INFINITY
    else:
        pg.b = ld * w + log1p(exp(-nu * w) * -expm1(-ld * w) / -expm1(-nu * w))
    pg.q = -expm1(-gamma * w)
    pg.qb = exp(-gamma * w)
    pg.log_q = log(pg.q)
    pg.log_qb = -gamma * w
    pg.r0 = exp(-(dl + nu) * w)
    pg.p1 = -expm1(-(dl + nu) * w)
    pg.lp1 = log(pg.p1)
    pg.lr0 = -(dl + nu) * w
    pg.eaw = exp(-pg.aw)
    pg.one_m_edw = -expm1(-pg.dw)
    pg.wu = pg.r0 / pg.p1
    # rho1 = q e^{-alpha w - b}/p1 = e^{-Delta w} (1 - e^{-nu w})/p1 (q e^{-b} = e^{-lambda Delta w} (1 - e^{-nu w}))
    # = e^{-Delta w} (1 + y), y = -e^{-nu w} (1 - e^{-Delta w})/p1: its log without the cancellation of
    # log q - log p1 (the columns' factors rho1^j carried ~4 j ulps: 10^-12 at j ~ 3000)
    pg.elr1 = 0.0
    if pg.b == INFINITY:
        pg.rho1 = 0.0
        pg.log_rho1 = -INFINITY
    else:
        y = -exp(-nu * w) * pg.one_m_edw / pg.p1
        pg.log_rho1 = -pg.dw + log1p(y)
        pg.rho1 = exp(pg.log_rho1)
        # its absolute error in ulps: Delta w's, y's 6 roundings through log1p (|y|/(1 + y)), the sum's
        pg.elr1 = pg.dw + 6.0 * -y / (1.0 + y) + 2.0 * fabs(pg.log_rho1)


cdef struct PX:
    # the page's weights in extended precision (the retry of the interior sums, fc_ext)
    fc_ext q
    fc_ext qb
    fc_ext log_q
    fc_ext log_qb
    fc_ext p1
    fc_ext r0
    fc_ext lp1
    fc_ext lr0
    fc_ext dw
    fc_ext one_m_edw
    fc_ext wu
    fc_ext log_rho1
    fc_ext elr1
    fc_ext dwes
    fc_ext xnfar     # the interior sums (as Acc's nfar, wfar), their compensations and error bounds
    fc_ext xwfar
    fc_ext xcnfar
    fc_ext xcwfar
    fc_ext xenfar
    fc_ext xewfar


cdef struct Acc:
    bint ext         # the interior sums in extended precision (x*): the retry
    PX* x            # the caller's weights and sums (a pointer: Acc stays as small as before)
    double nfar      # sum P over far interior points
    double wfar      # sum W over far interior points
    double nnear     # sum P over near interior points
    double wnear
    double vnear     # their value terms
    double bpsi      # band: sum P (s - x)
    double bfresh    # band: sum W (1 - e^{-(s - x)})
    double bval      # band: sum W R^1(s - x)
    double steps
    double run       # the longest walk from one Loader anchor (the recurrences' error grows with it)
    double s
    double c         # s - Delta w
    double cfar      # c - FAR
    double dwes      # Delta w e^{-s}
    double r1dw      # R^1(Delta w)
    double dmin      # min(Delta w, s): what a point adds to psi Delta at most
    bint need_psi
    double enfar     # the fast path (CDF sums): absolute error bounds of nfar and wfar,
    double ewfar
    double epsi      # and of the band's psi, fresh and value sums
    double efresh
    double eval
    double cnnear    # the walk: the compensations of its point-by-point sums (folded in at the end)
    double cwnear
    double cvnear
    double cbpsi
    double cbfresh
    double cbval
    double band_walk  # the CDF sums add a band of at most this many points point by point
    bint wide        # they took a band by its sums
    double cnfar     # the compensations of nfar and wfar over the sub-columns (the CDF sums, complete columns)
    double cwfar
    double tol       # the columns stop where their rest is below this part of the partial sums (TOL)
    double ttol      # a tail sum stops where its rest is below this part of it (QEPS: a quarter ulp)
    double vrest     # (lattice's coarse pass) a bound of what the columns left out add to V Delta/mu


# R^1(y) = y^2 sum_(k >= 2) (-1)^k (k - 1)/k! y^(k - 2): the coefficients k = 2..20 (to 4e-19 of the sum at y < 1)
cdef double[19] R1_SERIES = [
    0.5, -0.3333333333333333, 0.125, -0.03333333333333333,
    0.006944444444444444, -0.0011904761904761906, 0.00017361111111111112, -2.2045855379188714e-05,
    2.48015873015873e-06, -2.505210838544172e-07, 2.296443268665491e-08, -1.9270852604185937e-09,
    1.4911969277048643e-10, -1.0706029224547743e-11, 7.169215998581078e-13, -4.498331606952833e-14,
    2.6552651846596585e-15, -1.4797143443923793e-16, 7.809603484293113e-18]


cdef inline double band_r1(double y, double* fr) noexcept nogil:
    """``R^1(y) = 1 - e^{-y} (1 + y)`` for ``y > 0``, and ``1 - e^{-y}`` into ``fr``: below 1 by ``expm1`` and
    the Taylor series of ``R^1`` (alternating, terms falling: a few ulps), above from ``e = e^{-y}`` as
    ``(1 - e) - y e`` (at most ~4x cancellation, no ``1 + expm1`` loss at large ``y``)."""
    cdef double e, y2, y4, ca, cb, cc, cd
    cdef const double* c = R1_SERIES
    if y < 1.0:
        fr[0] = -expm1(-y)
        # Estrin's split by powers of y^4 (four short Horner chains, not one of 18 dependent steps)
        y2 = y * y
        y4 = y2 * y2
        ca = c[0] + y4 * (c[4] + y4 * (c[8] + y4 * (c[12] + y4 * c[16])))
        cb = c[1] + y4 * (c[5] + y4 * (c[9] + y4 * (c[13] + y4 * c[17])))
        cc = c[2] + y4 * (c[6] + y4 * (c[10] + y4 * (c[14] + y4 * c[18])))
        cd = c[3] + y4 * (c[7] + y4 * (c[11] + y4 * c[15]))
        return y2 * (((ca + y * cb) + y2 * cc) + y2 * y * cd)
    e = exp(-y)
    fr[0] = 1.0 - e
    return fr[0] - y * e


cdef inline void add_point(Acc* a, double p, double ww, double x) noexcept nogil:
    cdef double y, r1, fr
    if x <= a.c:
        if x <= a.cfar:
            a.nfar += p
            a.wfar += ww
        else:
            a.nnear += p
            a.wnear += ww
            a.vnear += ww * a.r1dw + a.dwes * p * expm1(a.c - x)
    else:
        y = a.s - x
        r1 = band_r1(y, &fr)
        a.bpsi += p * y
        a.bfresh += ww * fr
        a.bval += ww * r1


cdef inline void two_sum(double* s, double* c, double x) noexcept nogil:
    """``s += x`` with the rounding error added to ``c`` (Knuth's TwoSum, no branch)."""
    cdef double t = s[0] + x
    cdef double z = t - s[0]
    c[0] += (s[0] - (t - z)) + (x - z)
    s[0] = t


cdef inline void add_point_c(Acc* a, double p, double ww, double x) noexcept nogil:
    """``add_point`` with compensated sums (the walk adds up to ~10^7 points: plain sums drift ~3e-13)."""
    cdef double y, r1, fr
    if x <= a.c:
        if x <= a.cfar:
            a.nfar += p
            a.wfar += ww
        else:
            two_sum(&a.nnear, &a.cnnear, p)
            two_sum(&a.wnear, &a.cwnear, ww)
            two_sum(&a.vnear, &a.cvnear, ww * a.r1dw + a.dwes * p * expm1(a.c - x))
    else:
        y = a.s - x
        r1 = band_r1(y, &fr)
        two_sum(&a.bpsi, &a.cbpsi, p * y)
        two_sum(&a.bfresh, &a.cbfresh, ww * fr)
        two_sum(&a.bval, &a.cbval, ww * r1)


cdef inline bint small_rest(const Acc* a, const PolledPage* pg, double rest_p, double rest_w,
                            double vfac) noexcept nogil:
    """Whether a rest of ``rest_p`` (weights P) and ``rest_w`` (weights W, each adding at most ``vfac W`` to V)
    is below ``TOL`` of the partial sums of psi, w and V.

    A point adds at most ``W (1 - e^{-Delta w})`` to ``w Delta`` (``W (1 - e^{-d})``, ``d = min(Delta w, s - x)``)
    and to ``V Delta/mu`` (an interior point ``(1 - e^{-Delta w}) W - Delta w e^{-s} P``, a band point ``W R^1(s -
    x) <= W (1 - e^{-(s - x)})``): the rest's ``W`` counts that much, not whole (at ``w = 10^-3`` a factor ~10^3:
    ~10% fewer columns and time on the pages a Scheduler pops there)."""
    cdef double fresh = pg.one_m_edw * (a.wfar + a.wnear) + a.bfresh
    cdef double val = pg.one_m_edw * a.wfar - a.dwes * a.nfar + a.vnear + a.bval
    if rest_w * pg.one_m_edw > a.tol * fresh or rest_w * fmin(vfac, pg.one_m_edw) > a.tol * val:
        return False
    if a.need_psi and rest_p * a.dmin > a.tol * (pg.dw * (a.nfar + a.nnear) + a.bpsi):
        return False
    return True


cdef inline double r1_bound(double y) noexcept nogil:
    """An upper bound on R^1(y) = 1 - e^{-y}(1 + y) <= min(1, y^2/2)."""
    return fmin(1.0, 0.5 * y * y) if y > 0.0 else 0.0


cdef inline bint rest_ok(const Acc* a, const PolledPage* pg, double rest_p, double rest_w, double vfac_p,
                         double vfac_w) noexcept nogil:
    """Whether points of total weights ``rest_p`` (P) and ``rest_w`` (W), adding at most ``vfac_p P + vfac_w W``
    to ``V Delta/mu``, are below ``TOL`` of the partial sums of psi, w and V."""
    cdef double fresh = pg.one_m_edw * (a.wfar + a.wnear) + a.bfresh
    cdef double val = pg.one_m_edw * a.wfar - a.dwes * a.nfar + a.vnear + a.bval
    if rest_w > TOL * fresh or rest_w * vfac_w + rest_p * vfac_p > TOL * val:
        return False
    if a.need_psi and rest_p * a.dmin > TOL * (pg.dw * (a.nfar + a.nnear) + a.bpsi):
        return False
    return True


cdef double K_CAP = 1e15  # the largest k of a sub-column (below 2^53: k + 1 is exact)


cdef inline bint k_in(double aw, double j, double bj, double lim, bint strict, double k) noexcept nogil:
    return aw * (k + j) + bj < lim if strict else aw * (k + j) + bj <= lim


cdef inline double last_k_in(double aw, double j, double bj, double lim, bint strict, double kmin,
                             double kmax) noexcept nogil:
    """The largest ``k`` in ``[kmin, kmax]`` with ``aw (k + j) + bj < lim`` (``<=`` if not strict), ``kmin - 1``
    if none (``aw > 0``: the test is monotone in ``k``).  From the quotient's guess, corrected a few steps;
    where rounding puts the guess farther off (``aw`` within ulps of 0 against ``lim``), by bisection, so
    at most ~50 tests whatever the inputs (stepping by one from the cap took ~1e15 steps: a hang)."""
    cdef double k = floor((lim - bj) / aw - j), lo, hi, mid
    cdef int it
    if not (k <= kmax):  # also NaN
        k = kmax
    if k < kmin - 1.0:
        k = kmin - 1.0
    it = 0
    while k >= kmin and not k_in(aw, j, bj, lim, strict, k) and it < 4:
        k -= 1.0
        it += 1
    if k >= kmin and not k_in(aw, j, bj, lim, strict, k):
        lo = kmin - 1.0  # in (or below the range)
        hi = k  # out
        while hi - lo > 1.0:
            mid = floor(0.5 * (lo + hi))
            if mid >= kmin and not k_in(aw, j, bj, lim, strict, mid):
                hi = mid
            else:
                lo = mid
        return lo
    it = 0
    while k < kmax and k_in(aw, j, bj, lim, strict, k + 1.0) and it < 4:
        k += 1.0
        it += 1
    if k < kmax and k_in(aw, j, bj, lim, strict, k + 1.0):
        lo = k + 1.0  # in
        hi = kmax + 1.0  # out, or past the range
        while hi - lo > 1.0:
            mid = floor(0.5 * (lo + hi))
            if k_in(aw, j, bj, lim, strict, mid):
                lo = mid
            else:
                hi = mid
        return lo
    return k


cdef inline int column_ends(double aw, double q, double j, double bj, double lim, double inner, double kmin,
                            double* kend, double* kin) noexcept nogil:
    """A sub-column's last alive ``k`` (``kend``: ``x < lim``) and last ``k`` at or below ``inner`` (``kin``),
    each ``kmin - 1`` if none.  1: nothing alive; -1: cut by ``K_CAP`` with more than ``qb^K_CAP ~ e^-50``
    past it (refused); else 0."""
    kend[0] = last_k_in(aw, j, bj, lim, True, kmin, K_CAP)
    if kend[0] < kmin:
        return 1
    if kend[0] >= K_CAP and K_CAP * q < 50.0:
        return -1
    kin[0] = last_k_in(aw, j, bj, inner, False, kmin, kend[0])
    return 0


cdef int ANCHOR = 128  # the walk takes a fresh Loader anchor every this many points
cdef double LN2 = 0.69314718055994530942
cdef double SC_LO = 1.4916681462400413e-154  # 2^-511: a scaled weight is kept in [2^-511, 2^511]
cdef double SC_HI = 6.703903964971299e+153   # 2^511


cdef inline double scaled_exp(double lg, double* ex) noexcept nogil:
    """``exp(lg)`` as ``m 2^ex`` with ``m`` in ``[1, 2)`` (``ex = 0`` and ``m = exp(lg)`` where that is normal)."""
    if lg > -600.0:
        ex[0] = 0.0
        return exp(lg)
    ex[0] = floor(lg / LN2)
    return exp(lg - ex[0] * LN2)


cdef inline double rescale(double* m, double* ex) noexcept nogil:
    """Bring a scaled weight ``m 2^ex`` back into ``[2^-511, 2^511]`` (exactly: powers of two) and return
    ``2^ex`` (0 below the subnormals: the weight is below 2^-1074)."""
    while m[0] < SC_LO and m[0] > 0.0:
        m[0] *= SC_HI
        ex[0] -= 511.0
    while m[0] > SC_HI:
        m[0] *= SC_LO
        ex[0] += 511.0
    if ex[0] == 0.0:
        return 1.0
    return ldexp(1.0, <int>fmax(ex[0], -1100.0)) if ex[0] < 1100.0 else INFINITY


cdef int walk(Acc* a, const PolledPage* pg, double j, int m, double ptot, double wtot, double* col_p,
              double* col_w) noexcept nogil:
    """Add sub-column ``(j, m)`` (``m = 1``: moved last, ``k >= 0``; ``m = 0``: unmoved last, ``k >= 1``;
    ``ptot``, ``wtot`` its complete P and W masses) to the sums; upper bounds of its alive P and W masses go to
    col_p, col_w (what the walk added plus the bound of the rest it left out).

    The far interior ``k <= kf`` is summed as a whole: its complement (the walk up from ``kf + 1``, which also
    adds the near and band points one by one) where ``kf`` is at or above the mean of the measure (the far part
    then holds at least about a third of the column's mass), else its lower tail (the walk down from ``kf``),
    so no sum loses more than about two bits.  The weights are carried by the
    ratios of consecutive terms as ``m 2^e`` (``m`` kept in ``[2^-511, 2^511]`` by exact powers of two): a
    walk that starts far below the mode (a many-column page: ``P(k = 0) = q^j`` underflows past ``j ~ 290``
    at ``q = 0.078``) climbs out of the underflow instead of carrying a zero (or a subnormal's few digits)
    up to the mode, which dropped whole columns and then stopped the columns (``col_p = 0``).  -1: too long."""
    cdef double aw = pg.aw, q = pg.q, qb = pg.qb, eaw = pg.eaw
    cdef double kmin = 1.0 - m
    cdef double lim = a.s if m == 1 else a.s - pg.lw
    cdef double bj = pg.b * j if j > 0.0 else 0.0
    cdef double kend, kf, k, lp, p, ww, p_kf, w_kf, r, rw, x, vfw
    cdef double pm, wm, pe, we, fp, fw  # the scaled weights: P = pm 2^pe = pm fp, W = wm 2^we = wm fw
    cdef int st, nstep
    cdef double tail_p = 0.0, tail_w = 0.0, low_p = 0.0, low_w = 0.0, alive_p = 0.0, alive_w = 0.0
    cdef double rest_p = 0.0, rest_w = 0.0
    cdef bint comp_p, comp_w, has_far, done_p, done_w, geo, need_p, need_w
    cdef double steps0 = a.steps
    st = column_ends(aw, q, j, bj, lim, a.cfar, kmin, &kend, &kf)
    if st != 0:
        return 0 if st == 1 else -1
    has_far = kf >= kmin
    if not has_far:
        kf = kmin - 1.0
    # the complement only at or above the measure's mean (NB(j + 1 - m) at k - (1 - m)), where the far part
    # holds at least about a third of the mass: above the mode alone it can hold almost none (column 0's
    # P(k) = qb^k has its mode at k = 1 and its mass qb/q ~ 1/(gamma w): ptot - tail_p lost ~1/q-fold, 1e-7 of
    # V at nu = 1e-6, lambda Delta w ~ 1e-12; and the walk up to the tail's end took ~1/q points at nu = 0)
    comp_p = has_far and kf >= (j + 1.0 - m) * (qb / q) + (1.0 - m)
    comp_w = has_far and kf >= (j + 1.0 - m) * pg.wu + (1.0 - m)
    # and only where its walk past the alive points (~40/-log(ratio) points, the ratio at kend + 1: they fall)
    # is shorter than the walk down (at most kf + 1 - kmin points): a slow tail (a low-q column 1, W's ratio
    # ~ e^{-alpha w}(1 + 1/k)) took ~40/(alpha w) points, 8x the column's
    if comp_p or comp_w:
        r = qb * (kend + 1.0 + j) / (kend + 1.0 + m)
        if comp_p and not (r < 1.0 and 40.0 < -log(r) * (kf + 1.0 - kmin)):
            comp_p = False
        if comp_w and not (r * eaw < 1.0 and 40.0 < -log(r * eaw) * (kf + 1.0 - kmin)):
            comp_w = False
    # column 0 (j = 0, m = 0): P(k) = qb^k and W(k) = r0^k, whose far part sums in closed form (no walk over
    # it: ~1/((Delta + nu) w) points for W's complement, ~1/q for P's lower tail)
    geo = j == 0.0 and has_far
    if geo:
        comp_p = False
        comp_w = False
    # P and W at kf (the walk down; the anchor) and at kf + 1 (the walk up), by ratios upwards only (qb may be 0)
    k = kf if has_far else kmin
    lp = (pg.log_q if m == 1 else pg.log_qb) + log_binom(j - m, k + j - 1.0, q, qb, pg.log_q, pg.log_qb)
    pm = scaled_exp(lp, &pe)
    wm = scaled_exp(lp - (aw * (k + j) + bj), &we)
    fp = rescale(&pm, &pe)
    fw = rescale(&wm, &we)
    p_kf = pm * fp
    w_kf = wm * fw
    p = p_kf
    ww = w_kf
    if has_far:
        r = qb * (k + j) / (k + m)
        pm *= r
        wm *= r * eaw
        fp = rescale(&pm, &pe)
        fw = rescale(&wm, &we)
        p = pm * fp
        ww = wm * fw
        k += 1.0
    # an interior point adds at most e^{-x} (R^1(Delta w) + Delta w e^{-Delta w}) = (1 - e^{-Delta w}) W to V
    vfw = pg.one_m_edw
    nstep = 0
    if k <= kend or comp_p or comp_w:
        # up from kf + 1: near and band points one by one, and the complement's mass
        while True:
            x = aw * (k + j) + bj
            if k <= kend:
                add_point_c(a, p, ww, x)
                alive_p += p
                alive_w += ww
            tail_p += p
            tail_w += ww
            a.steps += 1.0
            if a.steps > MAX_STEPS:
                return -1
            r = qb * (k + j) / (k + m)
            rw = r * eaw
            k += 1.0
            nstep += 1
            if nstep == ANCHOR:  # a fresh anchor: the ratios' rounding errors do not pile up along the walk
                nstep = 0
                lp = (pg.log_q if m == 1 else pg.log_qb) + log_binom(j - m, k + j - 1.0, q, qb, pg.log_q,
                                                                     pg.log_qb)
                pm = scaled_exp(lp, &pe)
                wm = scaled_exp(lp - (aw * (k + j) + bj), &we)
                fp = rescale(&pm, &pe)
                fw = rescale(&wm, &we)
            else:
                pm *= r
                wm *= rw
                if pm < SC_LO or pm > SC_HI:
                    fp = rescale(&pm, &pe)
                if wm < SC_LO or wm > SC_HI:
                    fw = rescale(&wm, &we)
            p = pm * fp
            ww = wm * fw
            if k > kend and not comp_p and not comp_w:
                break
            # what is left of the walk: alive points (while k <= kend) and the complements' masses, bounded by
            # geometric series (the ratios fall with k)
            # (only the measures still summed need a falling ratio: past the alive points with only W's
            # complement left, P's ratio qb (k + j)/(k + m) can stay above 1 for ~1/q points: 10^7 at nu = 1e-6)
            need_p = comp_p or k <= kend
            need_w = comp_w or k <= kend
            if (r < 1.0 or not need_p) and (rw < 1.0 or not need_w):
                rest_p = p / (1.0 - r) if need_p else 0.0
                rest_w = ww / (1.0 - rw) if need_w else 0.0
                if rest_ok(a, pg, rest_p if comp_p or (k <= kend and a.need_psi) else 0.0, rest_w,
                           a.dwes if comp_p else 0.0, fmax(vfw, r1_bound(a.s - x))):
                    if k <= kend:  # the alive points left out count in the column's masses
                        alive_p += rest_p
                        alive_w += rest_w
                    break
    if has_far and not geo and not (comp_p and comp_w):
        # down from kf: the lower tails of the measures below their means (P, W <= 1 and the weights fall once
        # below the mode: no rescaling)
        rest_p = 0.0
        rest_w = 0.0
        nstep = 0
        k = kf
        p = p_kf
        ww = w_kf
        done_p = comp_p
        done_w = comp_w
        while True:
            if not done_p:
                low_p += p
            if not done_w:
                low_w += ww
            a.steps += 1.0
            if a.steps > MAX_STEPS:
                return -1
            if k <= kmin:
                break
            r = (k - 1.0 + m) / (qb * (k - 1.0 + j))
            rw = r / eaw
            k -= 1.0
            nstep += 1
            if nstep == ANCHOR:
                nstep = 0
                lp = (pg.log_q if m == 1 else pg.log_qb) + log_binom(j - m, k + j - 1.0, q, qb, pg.log_q,
                                                                     pg.log_qb)
                p = exp(lp)
                ww = exp(lp - (aw * (k + j) + bj))
            else:
                p *= r
                ww *= rw
            if not done_p and r < 1.0 and rest_ok(a, pg, p / (1.0 - r), 0.0, a.dwes, 0.0):
                done_p = True
                rest_p += p / (1.0 - r)  # left out of the sums; counts in the column's mass
            if not done_w and rw < 1.0 and rest_ok(a, pg, 0.0, ww / (1.0 - rw), 0.0, pg.one_m_edw):
                done_w = True
                rest_w += ww / (1.0 - rw)
            if done_p and done_w:
                break
    a.run = fmax(a.run, a.steps - steps0)
    if geo:
        # column 0's far part k = 1..kf: geometric sums, a few ulps (-expm1 of an exact-ish exponent)
        # (qb (1 - qb^kf)/q in this order: qb/q overflows where q is subnormal, the quotient is at most kf)
        low_p = qb * (-expm1(kf * pg.log_qb) / q)
        low_w = pg.r0 * (-expm1(kf * pg.lr0) / pg.p1)
        rest_p = 0.0
        rest_w = 0.0
    elif has_far:
        low_p = fmax(ptot - tail_p, 0.0) if comp_p else low_p
        low_w = fmax(wtot - tail_w, 0.0) if comp_w else low_w
    if has_far:
        a.nfar += low_p
        a.wfar += low_w
    col_p[0] += low_p + alive_p + (rest_p if has_far and not comp_p else 0.0)
    col_w[0] += low_w + alive_w + (rest_w if has_far and not comp_w else 0.0)
    return 0


cdef double EPS = 1.1102230246251565e-16  # 2^-53
cdef int CF_MAXIT = 4000  # terms of a binomial tail sum
cdef double BAND_WALK = 24.0  # a band of at most this many points is added point by point (exact terms)
cdef double BAND_WALK_WIDE = 4096.0  # the retry's (where the band's sums cancel: lambda near 1, small s)
cdef int BAND_ANCHOR = 32  # a wide band walk takes a fresh Loader anchor every this many points
cdef double FAST_TOL = 4e-13  # the fast path's error bound must be below this part of each sum
cdef double QEPS = 2.7755575615628914e-17  # 2^-55: a tail sum's rest left out (a quarter ulp)
cdef double COARSE_TOL = 1e-6    # polled_value_bounds: the columns' rest (of the partial sums)
cdef double COARSE_TTOL = 1e-7   # and each tail's


cdef inline int nb_cdf(double kk, double r, double p, double pb, double log_p, double log_pb, double* lower,
                       double* elower, double* upper, double* eupper, double* steps, double ttol) noexcept nogil:
    """``P(NB(r, p) <= kk)`` (failures before the ``r``-th success, success probability ``p``) and its
    complement, each with an absolute error bound.  ``P(NB(r, p) > kk) = P(Binomial(n, p) <= r - 1)``,
    ``n = kk + r``: the binomial tail on the far side of its mean from ``r - 1`` is summed (positive terms, from
    its first term in Loader's form down the ratios of consecutive terms, which fall geometrically there, until
    the rest is below a quarter ulp), the other is one minus it.  -1: more than ``CF_MAXIT`` terms."""
    cdef double n = kk + r, i
    cdef bint low
    if kk < 0.0:
        lower[0] = 0.0
        elower[0] = 0.0
        upper[0] = 1.0
        eupper[0] = 0.0
        return 0
    low = r - 1.0 < n * p  # the binomial's lower tail (i <= r - 1) is below its mean: sum it
    i = r - 1.0 if low else r
    return nb_tail(n, p, pb, low, i, log_binom(i, n, p, pb, log_p, log_pb), lower, elower, upper, eupper, steps,
                   ttol)


cdef inline int nb_tail(double n, double p, double pb, bint low, double i, double lp, double* lower,
                        double* elower, double* upper, double* eupper, double* steps, double ttol) noexcept nogil:
    """``nb_cdf`` from its first term: the Binomial(``n``, ``p``) pmf at ``i`` (``r - 1`` if ``low``, else
    ``r``) has the log ``lp`` (Loader's form).  The sum stops where its rest is below ``ttol`` of it (``QEPS``, a
    quarter ulp, in the budget's 3 ulps; a larger ``ttol``, ``polled_value_bounds``', is added to the bound)."""
    cdef double term, tot, rt, et, ctot, psum, tnew, lerr
    cdef int it
    lerr = 6.0 * fabs(lp) + 24.0 + log_binom_err(i, n, p, pb)
    term = exp(lp)
    tot = term
    ctot = 0.0
    psum = 0.0
    it = 0
    while True:
        if low:
            if i <= 0.0:
                break
            rt = i * pb / ((n - i + 1.0) * p)
            i -= 1.0
        else:
            if i >= n:
                break
            rt = (n - i) * p / ((i + 1.0) * pb)
            i += 1.0
        term *= rt
        psum += tot
        # Fast2Sum (terms positive, tot >= term): the sum's rounding errors go to ctot
        tnew = tot + term
        ctot += term - (tnew - tot)
        tot = tnew
        it += 1
        if rt < 1.0 and term * rt <= ttol * tot * (1.0 - rt):  # the rest term rt/(1 - rt), no division
            break
        if it > CF_MAXIT:
            return -1
    tot += ctot
    steps[0] += it
    # the first term: Loader's log and exp (log_binom_err, relative); the k-th term is k ratios on, each ratio
    # 3 roundings and the product one: 4 k ulps, sum_k k term_k = it tot - (the partial sums before each step);
    # the compensated sum: 2 ulps; the rest left out: a quarter
    et = EPS * (tot * (lerr + 3.0) + 4.0 * fmax(it * tot - psum, 0.0))
    if ttol > QEPS:
        et += ttol * tot
    if low:
        upper[0] = tot
        eupper[0] = et
        lower[0] = 1.0 - tot
        elower[0] = et + EPS
    else:
        lower[0] = tot
        elower[0] = et
        upper[0] = 1.0 - tot
        eupper[0] = et + EPS
    return 0


cdef inline void range0(double l1, double el1, double u1, double eu1, double* tot, double* err) noexcept nogil:
    """``nb_range`` from 0 given the tails at its end (the lower tail at -1 is 0 exactly)."""
    if el1 <= eu1:
        tot[0] = fmax(l1, 0.0)
        err[0] = el1 + EPS * l1
    else:
        tot[0] = fmax(1.0 - u1, 0.0)
        err[0] = eu1 + EPS


cdef inline int nb_range0_pair(double kk, double r, const PolledPage* pg, double* sp, double* ep, double* sw,
                               double* ew, double* steps, double* lnext, double ttol) noexcept nogil:
    """``nb_range(0, kk)`` of both measures, NB(``r``, ``q``) (P) and NB(``r``, ``1 - r0``) (W): where both
    binomial tails start at the same ``i`` their first terms share Loader's ``stirlerr`` and log parts (the
    same operations in the same order as ``log_binom``: the same bits).  ``lnext``: the log of the NB(``r``,
    ``q``) pmf at ``kk + 1`` from P's first term (``NB(kk + 1) = Bin(n, r) r qb/(kk + 1)`` and ``Bin(n, r) =
    Bin(n, r - 1) (kk + 1) q/(r qb)``, ``n = kk + r``): where the band walk starts."""
    cdef double n = kk + r, i, ip, iw, lpp, lpw, shared, half, l1, el1, u1, eu1
    cdef bint lowp, loww
    if kk < 0.0:
        sp[0] = ep[0] = sw[0] = ew[0] = 0.0
        return 0
    if r == 1.0:
        # geometric (column 0, and column 1's moved-last part): P(NB(1, p) <= kk) = 1 - pb^(kk + 1) by expm1, a
        # few ulps (the binomial tail gave it as 1 - pb^n, EPS absolute: against column 0's factor qb/q ~ 1/q
        # that refused the low-recall, low-nu pages)
        sp[0] = -expm1((kk + 1.0) * pg.log_qb)
        ep[0] = 4.0 * EPS * sp[0]
        sw[0] = -expm1((kk + 1.0) * pg.lr0)
        ew[0] = 4.0 * EPS * sw[0]
        lnext[0] = pg.log_q + (kk + 1.0) * pg.log_qb
        return 0
    lowp = r - 1.0 < n * pg.q
    loww = r - 1.0 < n * pg.p1
    ip = r - 1.0 if lowp else r
    iw = r - 1.0 if loww else r
    if ip == iw and ip > 0.0 and ip < n:
        i = ip
        shared = stirl(n) - stirl(i) - stirl(n - i)
        half = 0.5 * (LOG_2PI + log(i) + log((n - i) / n))
        lpp = shared - bd0(i, n * pg.q) - bd0(n - i, n * pg.qb) - half
        lpw = shared - bd0(i, n * pg.p1) - bd0(n - i, n * pg.r0) - half
    else:
        lpp = log_binom(ip, n, pg.q, pg.qb, pg.log_q, pg.log_qb)
        lpw = log_binom(iw, n, pg.p1, pg.r0, pg.lp1, pg.lr0)
    lnext[0] = lpp + pg.log_q if lowp else lpp + log(r / (kk + 1.0)) + pg.log_qb
    if nb_tail(n, pg.q, pg.qb, lowp, ip, lpp, &l1, &el1, &u1, &eu1, steps, ttol) != 0:
        return -1
    range0(l1, el1, u1, eu1, sp, ep)
    if nb_tail(n, pg.p1, pg.r0, loww, iw, lpw, &l1, &el1, &u1, &eu1, steps, ttol) != 0:
        return -1
    range0(l1, el1, u1, eu1, sw, ew)
    return 0


cdef inline int nb_range(double k0, double k1, double r, double p, double pb, double log_p, double log_pb,
                         double* tot, double* err, double* steps, double ttol) noexcept nogil:
    """``sum_{k0 <= k <= k1}`` of the NB(r, p) pmf and an absolute error bound (the difference of the two
    lower or of the two upper tails, whichever is more accurate)."""
    cdef double l1, el1, u1, eu1, l0, el0, u0, eu0
    if k1 < k0:
        tot[0] = 0.0
        err[0] = 0.0
        return 0
    if nb_cdf(k1, r, p, pb, log_p, log_pb, &l1, &el1, &u1, &eu1, steps, ttol) != 0:
        return -1
    if nb_cdf(k0 - 1.0, r, p, pb, log_p, log_pb, &l0, &el0, &u0, &eu0, steps, ttol) != 0:
        return -1
    if el1 + el0 <= eu1 + eu0:
        tot[0] = fmax(l1 - l0, 0.0)
        err[0] = el1 + el0 + EPS * l1
    else:
        tot[0] = fmax(u0 - u1, 0.0)
        err[0] = eu1 + eu0 + EPS * u0
    return 0


# ---------------------------------------------------------------------------
# The extended-precision retry (fc_ext: x87 long double, 2^-64; double elsewhere, where it is not tried)


cdef double XEPS = FC_EXT_EPS
cdef int XCF_MAXIT = 6000  # the tails run to a quarter ulp of fc_ext: ~11 bits further than double's


cdef inline void px_prepare(PX* x, const PolledPage* pg, double s) noexcept nogil:
    """The page's weights in ``fc_ext`` from ``Delta``, ``lambda``, ``nu``, ``w`` (as ``polled_prepare``)."""
    cdef fc_ext gw, d1, y
    gw = (<fc_ext>pg.lam * <fc_ext>pg.dl + <fc_ext>pg.nu) * <fc_ext>pg.w
    x.q = -fc_expm1(-gw)
    x.qb = fc_exp(-gw)
    x.log_q = fc_log(x.q)
    x.log_qb = -gw
    d1 = (<fc_ext>pg.dl + <fc_ext>pg.nu) * <fc_ext>pg.w
    x.r0 = fc_exp(-d1)
    x.p1 = -fc_expm1(-d1)
    x.lp1 = fc_log(x.p1)
    x.lr0 = -d1
    x.dw = <fc_ext>pg.dl * <fc_ext>pg.w
    x.one_m_edw = -fc_expm1(-x.dw)
    x.wu = x.r0 / x.p1
    x.dwes = x.dw * fc_exp(-<fc_ext>s)
    if pg.b == INFINITY:
        x.log_rho1 = -INFINITY
        x.elr1 = 0.0
    else:
        # as polled_prepare: rho1 = e^{-Delta w} (1 + y), y = -e^{-nu w} (1 - e^{-Delta w})/p1
        y = -fc_exp(-<fc_ext>pg.nu * <fc_ext>pg.w) * x.one_m_edw / x.p1
        x.log_rho1 = -x.dw + fc_log1p(y)
        x.elr1 = x.dw + 6.0 * -y / (1.0 + y) + 2.0 * fc_fabs(x.log_rho1)


cdef inline fc_ext log_binom_x(fc_ext i, fc_ext n, fc_ext p, fc_ext pb, fc_ext log_p, fc_ext log_pb) noexcept nogil:
    """``log_binom`` in ``fc_ext`` (its ``stirlerr`` table and series to ``fc_ext``'s precision, _polled_ext.h)."""
    if i == 0.0:
        return n * log_pb
    if i == n:
        return n * log_p
    return (fc_stirl(n) - fc_stirl(i) - fc_stirl(n - i) - fc_bd0(i, n * p) - fc_bd0(n - i, n * pb)
            - 0.5 * (FC_LOG_2PI + fc_log(i) + fc_log((n - i) / n)))


cdef inline int nb_tail_x(fc_ext n, fc_ext p, fc_ext pb, bint low, fc_ext i, fc_ext lp, fc_ext* lower,
                          fc_ext* elower, fc_ext* upper, fc_ext* eupper, double* steps) noexcept nogil:
    """``nb_tail`` in ``fc_ext``, its error bound in units of ``XEPS`` (the same budget: every part of it is a
    count of roundings)."""
    cdef fc_ext term, tot, rt, et, ctot, psum, tnew, lerr
    cdef int it
    lerr = 6.0 * fc_fabs(lp) + 24.0 + log_binom_err(<double>i, <double>n, <double>p, <double>pb)
    term = fc_exp(lp)
    tot = term
    ctot = 0.0
    psum = 0.0
    it = 0
    while True:
        if low:
            if i <= 0.0:
                break
            rt = i * pb / ((n - i + 1.0) * p)
            i -= 1.0
        else:
            if i >= n:
                break
            rt = (n - i) * p / ((i + 1.0) * pb)
            i += 1.0
        term *= rt
        psum += tot
        tnew = tot + term
        ctot += term - (tnew - tot)
        tot = tnew
        it += 1
        if rt < 1.0 and term * rt <= 0.25 * XEPS * tot * (1.0 - rt):
            break
        if it > XCF_MAXIT:
            return -1
    tot += ctot
    steps[0] += it
    et = XEPS * (tot * (lerr + 3.0) + 4.0 * fmax(<double>(it * tot - psum), 0.0))
    if low:
        upper[0] = tot
        eupper[0] = et
        lower[0] = 1.0 - tot
        elower[0] = et + XEPS
    else:
        lower[0] = tot
        elower[0] = et
        upper[0] = 1.0 - tot
        eupper[0] = et + XEPS
    return 0


cdef inline void range0_x(fc_ext l1, fc_ext el1, fc_ext u1, fc_ext eu1, fc_ext* tot, fc_ext* err) noexcept nogil:
    if el1 <= eu1:
        tot[0] = l1 if l1 > 0.0 else 0.0
        err[0] = el1 + XEPS * l1
    else:
        tot[0] = 1.0 - u1 if u1 < 1.0 else 0.0
        err[0] = eu1 + XEPS


cdef inline int nb_range0_pair_x(double kk, double r, const PX* x, fc_ext* sp, fc_ext* ep, fc_ext* sw,
                                 fc_ext* ew, double* steps) noexcept nogil:
    """``nb_range0_pair`` in ``fc_ext`` (no ``lnext``: the band takes its first pmf from Loader's form)."""
    cdef fc_ext n = <fc_ext>kk + r, ip, iw, lpp, lpw, l1, el1, u1, eu1
    cdef bint lowp, loww
    if kk < 0.0:
        sp[0] = ep[0] = sw[0] = ew[0] = 0.0
        return 0
    if r == 1.0:
        sp[0] = -fc_expm1((kk + 1.0) * x.log_qb)
        ep[0] = 4.0 * XEPS * sp[0]
        sw[0] = -fc_expm1((kk + 1.0) * x.lr0)
        ew[0] = 4.0 * XEPS * sw[0]
        return 0
    lowp = r - 1.0 < n * x.q
    loww = r - 1.0 < n * x.p1
    ip = r - 1.0 if lowp else r
    iw = r - 1.0 if loww else r
    lpp = log_binom_x(ip, n, x.q, x.qb, x.log_q, x.log_qb)
    lpw = log_binom_x(iw, n, x.p1, x.r0, x.lp1, x.lr0)
    if nb_tail_x(n, x.q, x.qb, lowp, ip, lpp, &l1, &el1, &u1, &eu1, steps) != 0:
        return -1
    range0_x(l1, el1, u1, eu1, sp, ep)
    if nb_tail_x(n, x.p1, x.r0, loww, iw, lpw, &l1, &el1, &u1, &eu1, steps) != 0:
        return -1
    range0_x(l1, el1, u1, eu1, sw, ew)
    return 0


cdef inline void two_sum_x(fc_ext* s, fc_ext* c, fc_ext x) noexcept nogil:
    cdef fc_ext t = s[0] + x
    cdef fc_ext z = t - s[0]
    c[0] += (s[0] - (t - z)) + (x - z)
    s[0] = t


cdef inline void add_far_x(Acc* a, double j, fc_ext sp, fc_ext ep, fc_ext sw, fc_ext ew, int m) noexcept nogil:
    """Add a sub-column's interior sums (NB CDFs ``sp``, ``sw`` with their bounds) times its column factors."""
    cdef fc_ext rhoj = fc_exp(j * a.x[0].log_rho1) if j > 0.0 else 1.0
    cdef fc_ext cp = 1.0 if m == 1 else a.x[0].qb / a.x[0].q
    cdef fc_ext cw = rhoj if m == 1 else rhoj * a.x[0].wu
    cdef fc_ext ecw = (j * (a.x[0].elr1 + fc_fabs(a.x[0].log_rho1)) if j > 0.0 else 0.0) + 8.0
    two_sum_x(&a.x[0].xnfar, &a.x[0].xcnfar, cp * sp)
    a.x[0].xenfar += cp * ep
    two_sum_x(&a.x[0].xwfar, &a.x[0].xcwfar, cw * sw)
    a.x[0].xewfar += cw * (ew + sw * XEPS * ecw)
    a.nfar += <double>(cp * sp)  # (the double sums steer the columns' stopping test)
    a.wfar += <double>(cw * sw)


cdef inline bint fast_bound_ok_x(const PolledPage* pg, bint need_psi, const Acc* a) noexcept nogil:
    """``fast_bound_ok`` of the extended sums: their bounds and ``3 XEPS`` of the magnitudes of the final
    difference; the band sums (double) and the result's rounding to double as before."""
    cdef fc_ext mag, val, fresh
    mag = a.x[0].one_m_edw * a.x[0].xwfar + a.x[0].dwes * a.x[0].xnfar
    val = a.x[0].one_m_edw * a.x[0].xwfar - a.x[0].dwes * a.x[0].xnfar + a.bval
    if not (a.x[0].one_m_edw * a.x[0].xewfar + a.x[0].dwes * a.x[0].xenfar + a.eval + XEPS * 3.0 * mag
            + EPS * (2.0 * fc_fabs(val) + fabs(a.bval)) <= FAST_TOL * val):
        return False
    fresh = a.x[0].one_m_edw * a.x[0].xwfar + a.bfresh
    if not (a.x[0].one_m_edw * a.x[0].xewfar + a.efresh + 8.0 * EPS * fresh <= FAST_TOL * fresh):
        return False
    if need_psi and not (a.x[0].dw * a.x[0].xenfar + a.epsi <= FAST_TOL * (a.x[0].dw * a.x[0].xnfar + a.bpsi)):
        return False
    return True


cdef int fast_walk(Acc* a, const PolledPage* pg, double j, int m, double* col_p, double* col_w) noexcept nogil:
    """Sub-column ``(j, m)`` as in ``walk`` but by negative binomial CDFs: ``P(k)`` is ``cP`` times the
    NB(``j + 1 - m``, ``q``) pmf at ``k - (1 - m)``, ``W(k)`` is ``cW`` times the NB(``j + 1 - m``,
    ``1 - r0``) pmf there.  The interior (``x <= c``) goes to nfar/wfar (combined in the difference form), the
    band point by point when it is narrow, else by its sums of ``P``, ``W`` and ``k P`` (``k P`` is a
    NB(``r + 1``) pmf); every sum carries an absolute error bound.  -1: a tail sum too long."""
    cdef double aw = pg.aw, q = pg.q, qb = pg.qb, p1 = pg.p1, lp1 = pg.lp1, lr0 = pg.lr0
    cdef double kmin = 1.0 - m, off = 1.0 - m, r = j + 1.0 - m
    cdef double lim = a.s if m == 1 else a.s - pg.lw
    cdef double bj = pg.b * j if j > 0.0 else 0.0
    cdef double rhoj = exp(j * pg.log_rho1) if j > 0.0 else 1.0
    cdef double cp = 1.0 if m == 1 else qb / q
    cdef double cw = rhoj if m == 1 else rhoj * pg.wu
    # cw's relative error in ulps: j times log rho1's (elr1), exp's rounding of j log rho1, and wu's
    cdef double ecw = (j * (pg.elr1 + fabs(pg.log_rho1)) if j > 0.0 else 0.0) + 8.0
    cdef double kend, kc, k, sp, ep, sw, ew, lp, p, ww, x, skp, ekp, x0, es, bpsi, ebpsi, rt
    cdef double pm, wm, pe, we, fp, fw, eaw, lnext, lberr, n2
    cdef int st, nstep
    cdef bint wide
    cdef fc_ext xsp, xep, xsw, xew
    st = column_ends(aw, q, j, bj, lim, a.c, kmin, &kend, &kc)
    if st != 0:
        return 0 if st == 1 else -1
    lnext = NAN
    if kc >= kmin and a.ext:
        if nb_range0_pair_x(kc - off, r, a.x, &xsp, &xep, &xsw, &xew, &a.steps) != 0:
            return -1
        add_far_x(a, j, xsp, xep, xsw, xew, m)
        col_p[0] += <double>xsp * cp
        col_w[0] += <double>xsw * cw
    elif kc >= kmin:
        if nb_range0_pair(kc - off, r, pg, &sp, &ep, &sw, &ew, &a.steps, &lnext, a.ttol) != 0:
            return -1
        two_sum(&a.nfar, &a.cnfar, cp * sp)
        a.enfar += cp * ep
        two_sum(&a.wfar, &a.cwfar, cw * sw)
        a.ewfar += cw * (ew + sw * EPS * ecw)
        col_p[0] += cp * sp
        col_w[0] += cw * sw
    else:
        kc = kmin - 1.0
    if kend - kc <= a.band_walk:
        wide = kend - kc > BAND_WALK
        k = kc + 1.0
        if isnan(lnext):
            lp = (pg.log_q if m == 1 else pg.log_qb) + log_binom(j - m, k + j - 1.0, q, qb, pg.log_q, pg.log_qb)
            lberr = log_binom_err(j - m, k + j - 1.0, q, qb)
        else:  # from the interior's first term (a few ulps of |lp| more than Loader's: inside the 24 allowed)
            lp = lnext if m == 1 else lnext + (pg.log_qb - pg.log_q)
            n2 = kc - off + r
            lberr = 0.0 if r == 1.0 else log_binom_err(r - 1.0 if r - 1.0 < n2 * q else r, n2, q, qb)
        # a point's pmf: its first one's log (6 |lp| + 24 + lberr ulps, as the tails' first terms) and 4 ulps a
        # ratio since
        lberr += 6.0 * fabs(lp) + 24.0
        # scaled as in walk (the first point may underflow below the mode and the next ones not)
        pm = scaled_exp(lp, &pe)
        wm = scaled_exp(lp - (aw * (k + j) + bj), &we)
        fp = rescale(&pm, &pe)
        fw = rescale(&wm, &we)
        if a.ext:
            band_anchor_x(a, j, m, k, aw * (k + j) + bj, &pm, &pe, &fp, &wm, &we, &fw, &lberr)
        eaw = pg.eaw
        nstep = 0
        while k <= kend:
            x = aw * (k + j) + bj
            p = pm * fp
            ww = wm * fw
            if wide:
                add_point_c(a, p, ww, x)  # compensated (band points only: its far sums are not reached)
            else:
                add_point(a, p, ww, x)
            # a point's terms: its pmf to a few ulps (Loader's log, then ratios)
            a.epsi += p * (a.s - x) * EPS * lberr
            # (W's term is W (1 - e^{-(s - x)}) <= W min(1, s - x): its pmf's error and 3 ulps of expm1 and the
            # product; W alone here was ~1/(Delta w) times too much at small s: the retry's pages failed on w)
            a.efresh += ww * fmin(1.0, a.s - x) * EPS * (lberr + 3.0)
            a.eval += ww * r1_bound(a.s - x) * EPS * lberr
            col_p[0] += p
            col_w[0] += ww
            rt = qb * (k + j) / (k + m)
            k += 1.0
            a.steps += 1.0
            nstep += 1
            if wide and nstep == BAND_ANCHOR:  # a fresh anchor: the ratios' 4 ulps a point do not pile up
                nstep = 0
                lp = (pg.log_q if m == 1 else pg.log_qb) + log_binom(j - m, k + j - 1.0, q, qb, pg.log_q,
                                                                     pg.log_qb)
                lberr = 6.0 * fabs(lp) + 24.0 + log_binom_err(j - m, k + j - 1.0, q, qb)
                pm = scaled_exp(lp, &pe)
                wm = scaled_exp(lp - (aw * (k + j) + bj), &we)
                fp = rescale(&pm, &pe)
                fw = rescale(&wm, &we)
                if a.ext:
                    band_anchor_x(a, j, m, k, aw * (k + j) + bj, &pm, &pe, &fp, &wm, &we, &fw, &lberr)
                continue
            pm *= rt
            wm *= rt * eaw
            if pm < SC_LO or pm > SC_HI:
                fp = rescale(&pm, &pe)
            if wm < SC_LO or wm > SC_HI:
                fw = rescale(&wm, &we)
            lberr += 4.0
            if a.steps > MAX_STEPS:
                return -1
        return 0
    a.wide = True
    if nb_range(kc + 1.0 - off, kend - off, r, q, qb, pg.log_q, pg.log_qb, &sp, &ep, &a.steps, a.ttol) != 0:
        return -1
    if nb_range(kc + 1.0 - off, kend - off, r, p1, pg.r0, lp1, lr0, &sw, &ew, &a.steps, a.ttol) != 0:
        return -1
    # sum k' P(k') over the band: k' NB(r, q)(k') = r (qb/q) NB(r + 1, q)(k' - 1)
    if nb_range(kc - off, kend - off - 1.0, r + 1.0, q, qb, pg.log_q, pg.log_qb, &skp, &ekp, &a.steps,
                a.ttol) != 0:
        return -1
    sp *= cp
    ep *= cp
    ew = cw * (ew + sw * EPS * ecw)
    sw *= cw
    skp *= cp * r * qb / q
    ekp *= cp * r * qb / q
    col_p[0] += sp
    col_w[0] += sw
    x0 = aw * (off + j) + bj  # x = x0 + aw k'
    es = exp(-a.s)
    bpsi = (a.s - x0) * sp - aw * skp
    ebpsi = fabs(a.s - x0) * ep + aw * ekp + 4.0 * EPS * ((a.s - x0) * sp + aw * skp)
    bpsi = fmax(bpsi, 0.0)
    a.bpsi += bpsi
    a.epsi += ebpsi
    a.bfresh += sw - es * sp
    a.efresh += ew + es * ep + 4.0 * EPS * (sw + es * sp)
    a.bval += sw - es * sp - es * bpsi
    a.eval += ew + es * ep + es * ebpsi + 4.0 * EPS * (sw + es * sp + es * bpsi)
    return 0


cdef inline bint complete(const Acc* a, const PolledPage* pg, double j, int m) noexcept nogil:
    """Whether sub-column ``(j, m)`` lies below the far boundary but for a mass below ``TOL`` (both measures)."""
    cdef double kf, n, d, r = j + 1.0 - m
    if a.cfar < 0.0:
        return False
    kf = floor((a.cfar - (pg.b * j if j > 0.0 else 0.0)) / pg.aw - j) - 1.0  # one less: rounding
    if kf > 1e300:
        return True
    kf -= 1.0 - m  # unmoved last: P(k) is the NB(j + 1) pmf at k - 1
    if kf < 0.0:
        return False
    # n D(a || q) <= n (a - q)^2/(q qb) (KL below chi-square): no bound below e^-42 unless this passes
    n = kf + r
    d = pg.q * n - (r - 1.0)
    if d <= 0.0 or d * d < 42.0 * n * pg.q * pg.qb:
        return False
    return (log_nb_upper(kf, r, pg.q) < -40.0 - 2.0          # log(1e-17) = -39.1
            and log_nb_upper(kf, r, pg.p1) < -42.0)


cdef int lattice(const PolledPage* pg, double s, bint need_psi, double far, bint fast, Acc* out,
                 double band_walk=BAND_WALK, PX* px=NULL, bint coarse=False) noexcept nogil:
    """The sums of one page at ``s`` (``0 < s < inf``, lattice pages) into ``out``; ``far``: how far below
    ``c = s - Delta w`` the points are summed by the difference form; ``band_walk``: the widest band the CDF
    sums add point by point.  -1: too long."""
    cdef Acc a
    cdef double j, jmax, col_p, col_w, ptot, wtot, rho_j, x, nrem, rest_w
    cdef int m, st
    cdef bint dead_m, dead_u
    a.nfar = a.wfar = a.nnear = a.wnear = a.vnear = a.bpsi = a.bfresh = a.bval = a.steps = a.run = 0.0
    a.enfar = a.ewfar = a.epsi = a.efresh = a.eval = 0.0
    a.cnnear = a.cwnear = a.cvnear = a.cbpsi = a.cbfresh = a.cbval = a.cnfar = a.cwfar = 0.0
    a.s = s
    a.band_walk = band_walk
    a.wide = False
    a.tol = COARSE_TOL if coarse else TOL
    a.ttol = COARSE_TTOL if coarse else QEPS
    a.vrest = 0.0
    a.c = s - pg.dw
    a.cfar = a.c - far
    a.dwes = pg.dw * exp(-s)
    a.r1dw = residual_exp(1, pg.dw)
    a.dmin = fmin(pg.dw, s)
    a.need_psi = need_psi
    add_point(&a, 1.0, 1.0, 0.0)  # (0, 0)
    a.ext = px != NULL
    a.x = px
    if a.ext:
        px_prepare(px, pg, s)
        px.xnfar = px.xwfar = px.xcnfar = px.xcwfar = px.xenfar = px.xewfar = 0.0
        if 0.0 <= a.cfar:
            a.x[0].xnfar = 1.0
            a.x[0].xwfar = 1.0
    jmax = 0.0 if pg.b == INFINITY else floor(s / (pg.aw + pg.b)) + 1.0
    j = 0.0
    rho_j = 1.0
    while j <= jmax:
        a.steps += 1.0  # a column counts as a point of the work bound
        if a.steps > MAX_STEPS:
            return -1
        col_p = 0.0
        col_w = 0.0
        dead_m = j == 0.0 or (pg.aw + pg.b) * j >= s
        dead_u = pg.aw * (1.0 + j) + (pg.b * j if j > 0.0 else 0.0) + pg.lw >= s
        if dead_m and dead_u:
            break
        if pg.aw == 0.0:  # lambda = 1: every point of a column sits at x = b j
            x = pg.b * j if j > 0.0 else 0.0
            if not dead_m:
                add_point(&a, 1.0, rho_j, x)
                col_p += 1.0
                col_w += rho_j
            if not dead_u:
                ptot = pg.qb / pg.q
                wtot = rho_j * pg.wu
                add_point(&a, ptot, wtot, x)
                col_p += ptot
                col_w += wtot
        else:
            for m in range(2):
                if (m == 1 and dead_m) or (m == 0 and dead_u):
                    continue
                if a.ext and complete(&a, pg, j, m):
                    add_far_x(&a, j, 1.0, 0.0, 1.0, 0.0, m)
                    col_p += 1.0 if m == 1 else pg.qb / pg.q
                    col_w += rho_j if m == 1 else rho_j * pg.wu
                elif not a.ext and complete(&a, pg, j, m):
                    ptot = 1.0 if m == 1 else pg.qb / pg.q
                    wtot = rho_j if m == 1 else rho_j * pg.wu
                    two_sum(&a.nfar, &a.cnfar, ptot)
                    two_sum(&a.wfar, &a.cwfar, wtot)
                    # rho1^j: j times log rho1's error (elr1), exp's rounding of j log rho1, and wu's
                    a.ewfar += wtot * EPS * ((j * (pg.elr1 + fabs(pg.log_rho1)) if j > 0.0 else 0.0) + 8.0)
                    col_p += ptot
                    col_w += wtot
                elif fast:
                    st = fast_walk(&a, pg, j, m, &col_p, &col_w)
                    if st != 0:
                        return st
                    if a.steps > MAX_STEPS:
                        return -1
                else:
                    st = walk(&a, pg, j, m, 1.0 if m == 1 else pg.qb / pg.q,
                              rho_j if m == 1 else rho_j * pg.wu, &col_p, &col_w)
                    if st != 0:
                        return st
        # the columns after this one: P masses decrease, W masses at least by rho1 a column
        nrem = jmax - j
        rest_w = col_w * fmin(nrem, pg.rho1 / (1.0 - pg.rho1))
        if j > 0.0 and small_rest(&a, pg, col_p * nrem, rest_w, r1_bound(s)):  # column 0 has no moved part
            if coarse:  # (what the rest adds to V at most: small_rest's bound)
                # (col_w from tails stopped at ttol of themselves: up to that part low)
                a.vrest += rest_w * (1.0 + 4.0 * a.ttol) * fmin(r1_bound(s), pg.one_m_edw)
            break
        j += 1.0
        # rho1^j by exp (as fast_walk's factors): j products carried j ulps (150 at 150 columns: refused pages)
        rho_j = exp(j * pg.log_rho1)
    a.nfar += a.cnfar
    a.wfar += a.cwfar
    if a.ext:
        px.xnfar += px.xcnfar
        px.xwfar += px.xcwfar
    a.nnear += a.cnnear
    a.wnear += a.cwnear
    a.vnear += a.cvnear
    a.bpsi += a.cbpsi
    a.bfresh += a.cbfresh
    a.bval += a.cbval
    out[0] = a
    return 0


cdef bint fast_ok(const PolledPage* pg, double s, bint need_psi, Acc* a) noexcept nogil:
    """The fast path (every interior point in the difference form, sub-columns by CDFs): whether it ran and
    its error bounds of ``V``, ``w`` (and ``psi``) are below ``FAST_TOL`` of them."""
    if lattice(pg, s, need_psi, 0.0, True, a) != 0:
        return False
    if not fast_bound_ok(pg, need_psi, a):
        # bands taken by their sums (which cancel where s - x is small against Delta w): once more with bands
        # of up to BAND_WALK_WIDE points added point by point (~1/(1 - lambda) points a column)
        return (a.wide and lattice(pg, s, need_psi, 0.0, True, a, BAND_WALK_WIDE) == 0
                and fast_bound_ok(pg, need_psi, a))
    return True


cdef inline void band_anchor_x(const Acc* a, double j, int m, double k, double x, double* pm, double* pe,
                               double* fp, double* wm, double* we, double* fw, double* lberr) noexcept nogil:
    """The retry's band anchor: the pmf at ``k`` of sub-column ``(j, m)`` (``P`` and ``W = P e^{-x}``) from
    Loader's log in ``fc_ext``, rounded to double: its error bound (``lberr``, units of ``EPS``) is the extended
    one (``XEPS (6 |lp| + 24 + log_binom_err)``) and the two roundings to double (exp's and the conversion's).
    Left as the double anchor where it would be below ~e^-700 (the double scaled form carries it)."""
    cdef fc_ext lpx = ((a.x[0].log_q if m == 1 else a.x[0].log_qb)
                       + log_binom_x(j - m, k + j - 1.0, a.x[0].q, a.x[0].qb, a.x[0].log_q, a.x[0].log_qb))
    if not (lpx - x > -700.0):
        return
    pm[0] = <double>fc_exp(lpx)
    wm[0] = <double>fc_exp(lpx - x)
    pe[0] = 0.0
    we[0] = 0.0
    fp[0] = 1.0
    fw[0] = 1.0
    lberr[0] = (XEPS / EPS) * (6.0 * fc_fabs(lpx) + 24.0 + log_binom_err(j - m, k + j - 1.0, a.x[0].q, a.x[0].qb)) + 2.0


cdef bint ext_ok(const PolledPage* pg, double s, bint need_psi, Acc* a, PX* px) noexcept nogil:
    """The retry of the CDF sums with the interior sums in ``fc_ext`` (where it has 64 bits): whether it ran and
    its bounds are below ``FAST_TOL``."""
    if not FC_HAVE_EXT or pg.aw == 0.0:
        return False
    if lattice(pg, s, need_psi, 0.0, True, a, BAND_WALK, px) != 0:
        return False
    if not fast_bound_ok_x(pg, need_psi, a):
        return (a.wide and lattice(pg, s, need_psi, 0.0, True, a, BAND_WALK_WIDE, px) == 0
                and fast_bound_ok_x(pg, need_psi, a))
    return True


cdef inline double fast_value(const PolledPage* pg, const Acc* a, double* err) noexcept nogil:
    """``V Delta/mu`` from the CDF sums and its error bound (``err[0]``): the sums' bounds and V's rounding (the
    products 2 ulps of the first term (expm1, product) and 3 of the second (exp and two products), the difference
    one of ``|V - bval|``, the sum one of V)."""
    cdef double mag = pg.one_m_edw * a.wfar + a.dwes * a.nfar
    cdef double val = pg.one_m_edw * a.wfar - a.dwes * a.nfar + a.bval
    err[0] = pg.one_m_edw * a.ewfar + a.dwes * a.enfar + a.eval + EPS * (3.0 * mag + 2.0 * fabs(val) + fabs(a.bval))
    return val


cdef inline bint fast_bound_ok(const PolledPage* pg, bint need_psi, const Acc* a) noexcept nogil:
    """Whether the CDF sums' error bounds of ``V``, ``w`` (and ``psi``) are below ``FAST_TOL`` of them."""
    cdef double err, fresh
    cdef double val = fast_value(pg, a, &err)
    if not (err <= FAST_TOL * val):
        return False
    fresh = pg.one_m_edw * a.wfar + a.bfresh
    if not (pg.one_m_edw * a.ewfar + a.efresh + 8.0 * EPS * fresh <= FAST_TOL * fresh):
        return False
    if need_psi and not (pg.dw * a.enfar + a.epsi <= FAST_TOL * (pg.dw * a.nfar + a.bpsi)):
        return False
    return True


cdef inline bint saturated_at(const PolledPage* pg, double s) noexcept nogil:
    """Whether ``V/mu`` and ``w`` of a lattice page round to ``1/Delta`` at ``s``: ``1/Delta - w = E[e^{-s_T}]/Delta
    <= e^{-s}/Delta`` and ``psi <= s/alpha``, so ``0 <= 1/Delta - V/mu <= e^{-s} (1 + Delta s/alpha)/Delta``: below
    half an ulp of ``1/Delta`` (2^-54)."""
    cdef double alpha = pg.aw / (pg.dw / pg.dl)
    return alpha > 0.0 and s > 30.0 and -s + log1p(pg.dl * s / alpha) < LOG_HALF_ULP


cdef int polled_sums(const PolledPage* pg, double s, bint need_psi, double* psi, double* fresh,
                     double* value) noexcept nogil:
    """``psi``, ``w`` and ``V/mu`` of one page at ``s`` (``psi`` only when ``need_psi``; NaN otherwise).
    Returns 0, or -1 when the walk would pass MAX_STEPS points."""
    cdef Acc a
    cdef PX px
    cdef double dl = pg.dl, val
    cdef fc_ext xval
    cdef bint saturated
    cdef int st
    psi[0] = NAN
    if s <= 0.0:
        psi[0] = 0.0
        fresh[0] = 0.0
        value[0] = 0.0
        return 0
    if pg.kind == 2:
        psi[0] = INFINITY
        fresh[0] = INFINITY
        value[0] = 0.0
        return 0
    if s == INFINITY:
        psi[0] = INFINITY
        fresh[0] = 1.0 / dl
        value[0] = 1.0 / dl
        return 0
    if pg.kind == 1:
        psi[0] = s / dl
        fresh[0] = -expm1(-s) / dl
        value[0] = residual_exp(1, s) / dl
        return 0
    saturated = saturated_at(pg, s)
    if saturated and not need_psi:
        fresh[0] = 1.0 / dl
        value[0] = 1.0 / dl
        return 0
    if MODE == 2 or MODE == 3 or not fast_ok(pg, s, need_psi, &a):
        if MODE == 1:
            return -2
        if MODE != 2 and ext_ok(pg, s, need_psi, &a, &px):
            xval = a.x[0].one_m_edw * a.x[0].xwfar - a.x[0].dwes * a.x[0].xnfar + a.bval
            if need_psi:
                psi[0] = <double>(a.x[0].dw * a.x[0].xnfar + a.bpsi) / dl
            fresh[0] = fmin(<double>(a.x[0].one_m_edw * a.x[0].xwfar + a.bfresh), 1.0) / dl
            value[0] = fmin(fmax(<double>xval, 0.0), 1.0) / dl
            if -s < LOG_HALF_ULP:
                fresh[0] = 1.0 / dl
            if saturated:
                value[0] = 1.0 / dl
            return 0
        if MODE == 3:
            return -2
        st = lattice(pg, s, need_psi, FAR, False, &a)
        if st != 0:
            return st
    val = pg.one_m_edw * a.wfar - a.dwes * a.nfar + a.vnear + a.bval
    if need_psi:
        psi[0] = (pg.dw * (a.nfar + a.nnear) + a.bpsi) / dl
    fresh[0] = fmin(pg.one_m_edw * (a.wfar + a.wnear) + a.bfresh, 1.0) / dl
    value[0] = fmin(fmax(val, 0.0), 1.0) / dl
    if -s < LOG_HALF_ULP:
        fresh[0] = 1.0 / dl
    if saturated:
        value[0] = 1.0 / dl
    return 0


cdef double polled_value(const PolledPage* pg, double s, double mu) noexcept nogil:
    """``V(s)`` of one page (NaN if refused)."""
    cdef double psi, fresh, val
    if polled_sums(pg, s, False, &psi, &fresh, &val) != 0:
        return NAN
    return mu * val


cdef double polled_value_bounds(const PolledPage* pg, double s, double mu, double* lower) noexcept nogil:
    """An upper bound of ``V(s)`` as ``polled_value`` computes it, for about half its cost where the lattice is
    large (a Scheduler's test of a popped page against the tick's best value: below it, the page has lost
    whatever its value; NaN if not found, then evaluate).

    The CDF sums with their tails stopped at ``COARSE_TTOL`` of themselves and the columns at ``COARSE_TOL`` of
    the partial sums, both rests counted (``nb_tail``'s bound, ``vrest``); ``V``'s bound is ``fast_bound_ok``'s.
    That bounds the exact ``V``; the computed one is within ``FAST_TOL`` (4e-13) of it on the CDF sums and closer
    on the retry and the walk (and the ``1e-17`` rests neither counts): ``(1 + 1e-12)`` covers them, and the
    rounding to ``mu``'s units is monotone.  Pages other than the lattice's, and ``s`` at 0 or inf, get
    ``polled_value`` itself.

    ``lower[0]``: a lower bound of ``V(s)`` as computed from the same sums, ``val - err`` without the columns'
    rest (every point adds a non-negative term to ``V``: what the columns and tails left out only raises it),
    lowered by ``(1 - 1e-12)``; ``V`` itself where it is returned (the other pages, saturated ones), NaN with the
    upper bound.  A Scheduler takes a page whose lower bound is above every other page's upper bound without its
    value.

    ``COARSE_TOL`` and ``COARSE_TTOL`` are 1e-6 and 1e-7.  A Scheduler at 10^6 pages polled 1% a tick (w = 1e-3,
    bench_schedule_polled's feed, each run alone, three runs each in turn, load ~1) spent 28.0-30.0 us a decision
    in ``run`` with them against 31.2-32.4 with 1e-5 and 1e-6 (7.07 -> 6.87 evaluations: where the winner is taken
    on its bounds, tighter bounds settle more ticks without a value); 1e-7 and 1e-8: 28.6-28.9; 1e-9 and 1e-10:
    31.1-32.1 against 32.0-33.4 (the sums cost more).  Earlier, before the winner was taken on its bounds, 1e-5
    and 1e-6 had been the best (1e-4 and 1e-5: 16% more time; 1e-8 and 1e-9: 12% more)."""
    cdef Acc a
    cdef double val, err, up, lo
    lower[0] = NAN
    if pg.kind != 0 or not (s > 0.0 and s < INFINITY):
        lower[0] = polled_value(pg, s, mu)
        return lower[0]
    if saturated_at(pg, s):
        # saturated: polled_sums' 1/Delta times mu, as polled_value computes it (mu/Delta can be an ulp less: a
        # page tied with a saturated twin lost without its value)
        lower[0] = mu * (1.0 / pg.dl)
        return lower[0]
    if lattice(pg, s, False, 0.0, True, &a, BAND_WALK, NULL, True) != 0:
        return NAN
    val = fast_value(pg, &a, &err)
    up = (val + err + a.vrest) * (1.0 + 1e-12)
    if not (up >= 0.0):  # (NaN)
        return NAN
    lo = (val - err) * (1.0 - 1e-12)
    lower[0] = mu * (fmin(fmax(lo, 0.0), 1.0) / pg.dl)
    return mu * (fmin(up, 1.0) / pg.dl)


cdef double r1_root(double y, double x) noexcept nogil:
    """The root of ``R^1(s) = y`` (``0 < y < 1``) to about 1e-3 relative, by Newton from ``x`` (``R^1' = s e^{-s}``;
    ``x`` below the root where ``R^1`` is concave, e.g. ``sqrt(2 y)``)."""
    cdef double step
    cdef int _it
    for _it in range(60):
        step = (y - residual_exp(1, x)) / (x * exp(-x))
        if not (x + step > 0.0):
            step = -0.5 * x
        x += step
        if fabs(step) <= 1e-3 * x:
            break
    return x


cdef double polled_level(const PolledPage* pg, double level, double mu) noexcept nogil:
    """The smallest ``s`` (to one ulp) with ``V(s) >= level (1 - LEVEL_SLACK)`` as computed: a lower bound of
    the true crossing ``inf {s : V(s) >= level}`` (the computed ``V`` is within ``LEVEL_SLACK`` of the true
    one), at most one ulp above it.  0 for ``level <= 0``, inf where ``level >= mu/Delta`` (never reached),
    NaN if an evaluation is refused.

    Safeguarded Newton on a bracket ``V(lo) < target <= V(hi)``: ``dV/ds = mu e^{-s} psi(s)`` between the
    jumps, with ``psi`` from the same sums as ``V``.  A step that leaves the bracket, or the second of two
    steps that do not halve the one before, is replaced by bisection (a jump of ``V`` inside the bracket is
    found that way); a step is pushed two ulps past its landing point, so the last evaluations straddle the
    crossing; a step that lands within four ulps (as near as ``V``'s rounding lets Newton tell) is taken as it
    is and followed by steps of 1, 1, 2, 4, ... ulps towards the crossing until the bracket closes or is
    overshot, then bisection: the bracket closes to one ulp without a long bisection tail.
    The start is just below the root of ``mu R^1(s)/alpha = level`` (a bound of ``V``: a lower bound of the
    crossing, tight where ``lambda`` is small)."""
    cdef double target, lo, hi, v, x, xn, step, d, alpha, width, psi, fresh, val, y, gal = 1.0
    cdef int _it, slow = 0, probe = 0
    if not level > 0.0:
        return 0.0
    if pg.kind == 2 or mu == 0.0 or level >= mu / pg.dl:
        return INFINITY
    target = level * (1.0 - LEVEL_SLACK)  # compared with mu V, as polled_value gives it
    # V(s) <= mu R^1(s)/alpha < mu s^2/(2 alpha): the crossing is above the root of R^1(s) = alpha target/mu
    # (when below 1; from sqrt(2 alpha target/mu) by Newton, R^1' = s e^{-s}), the start
    alpha = pg.dl if pg.kind == 1 else pg.aw / (pg.dw / pg.dl)
    lo = 0.0
    hi = INFINITY
    y = alpha * target / mu
    x = fmax((2.0 * y) ** 0.5, 1e-300)
    if y < 0.999:
        x = fmax(r1_root(y, x) * (1.0 - 1e-3), x)
    width = INFINITY
    for _it in range(300):
        if polled_sums(pg, x, True, &psi, &fresh, &val) != 0:
            return NAN
        v = mu * val
        if v >= target:
            hi = x
        else:
            lo = x
        if hi <= nextafter(lo, INFINITY):
            return hi
        xn = NAN
        if probe > 0:
            # the end: the crossing is within a few ulps of x (as far as V's rounding lets Newton tell): step
            # towards it by 1, 1, 2, 4, ... ulps until the bracket is closed or finite, then bisect it
            xn = x - gal * (x - nextafter(x, 0.0)) if v >= target else x + gal * (nextafter(x, INFINITY) - x)
            probe += 1
            if probe > 2:
                gal *= 2.0
            if not (xn > lo and xn < hi):
                xn = NAN  # past the other end of the bracket: bisection from here on
                probe = -1
        elif probe == 0:
            d = mu * exp(-x) * psi
            step = (target - v) / d if d > 0.0 else NAN
            if fabs(step) > 0.5 * width:
                slow += 1  # Newton is not converging (a jump, or far from the crossing)
            else:
                slow = 0
            width = fabs(step)
            if d > 0.0 and slow < 2:
                xn = x + step
                if hi == INFINITY:
                    xn = fmin(xn, fmax(4.0 * x, 1.0))  # no bracket yet: at most a factor 4 (or up to 1) at once
                if fabs(step) <= 4.0 * (nextafter(x, INFINITY) - x) and xn > lo and xn < hi:
                    probe = 1  # Newton lands within a few ulps: evaluate there, then step by ulps
                    gal = 1.0
                else:
                    # two ulps past the landing point, towards the side the step goes
                    xn = nextafter(nextafter(xn, INFINITY if step > 0.0 else 0.0), INFINITY if step > 0.0 else 0.0)
        if not (xn > lo and xn < hi):
            if hi == INFINITY:
                xn = 2.0 * x
                if xn > 1e300:
                    return INFINITY
            else:
                xn = 0.5 * (lo + hi)
                slow = 0
                width = INFINITY
                if probe > 0:
                    probe = -1
                if not (xn > lo and xn < hi):
                    return hi
        x = xn
    return hi


def _set_mode(int mode):
    """Which path ``polled_sums`` takes (tests): 0 the fast one else the walk, 1 the fast one only (-2 where
    it cannot vouch for its result), 2 the walk only; returns the previous mode."""
    global MODE
    cdef int old = MODE
    MODE = mode
    return old


@cython.boundscheck(False)
@cython.wraparound(False)
def sums_kernel(const double[::1] s, const double[::1] dl, const double[::1] lam, const double[::1] nu,
                const double[::1] w, const double[::1] mu, int what, double[::1] out):
    """``out[i]`` = psi (what 0), w (1) or V (2) of page ``i``; returns the first refused page or -1."""
    cdef Py_ssize_t i, n = s.shape[0], bad = -1
    cdef PolledPage pg
    cdef double psi, fresh, val
    with nogil:
        for i in range(n):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            if polled_sums(&pg, s[i], what == 0, &psi, &fresh, &val) != 0:
                bad = i
                break
            out[i] = psi if what == 0 else (fresh if what == 1 else mu[i] * val)
    return bad


@cython.boundscheck(False)
@cython.wraparound(False)
def level_kernel(const double[::1] level, const double[::1] dl, const double[::1] lam, const double[::1] nu,
                 const double[::1] w, const double[::1] mu, double[::1] out):
    """``out[i]`` = the smallest staleness with ``V >= level[i]`` (``polled_level``); returns the first refused
    page or -1."""
    cdef Py_ssize_t i, n = level.shape[0], bad = -1
    cdef PolledPage pg
    with nogil:
        for i in range(n):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            out[i] = polled_level(&pg, level[i], mu[i])
            if isnan(out[i]):
                bad = i
                break
    return bad


def _value_upper(double s, double dl, double lam, double nu, double w, double mu=1.0):
    """The upper bound of ``polled_value_bounds`` of one page (tests)."""
    return _value_bounds(s, dl, lam, nu, w, mu)[1]


def _value_bounds(double s, double dl, double lam, double nu, double w, double mu=1.0):
    """``(lower, upper)`` of ``polled_value_bounds`` of one page (tests)."""
    cdef PolledPage pg
    cdef double lower, upper
    polled_prepare(&pg, dl, lam, nu, w)
    upper = polled_value_bounds(&pg, s, mu, &lower)
    return lower, upper


def _nb_cdf(double kk, double r, double p):
    """(status, lower, its error bound, upper, its error bound) of ``nb_cdf`` (tests)."""
    cdef double lo, elo, up, eup, steps = 0.0
    cdef int st = nb_cdf(kk, r, p, 1.0 - p, log(p), log1p(-p), &lo, &elo, &up, &eup, &steps, QEPS)
    return st, lo, elo, up, eup


from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC


@cython.boundscheck(False)
@cython.wraparound(False)
def _profile(const double[::1] s, const double[::1] dl, const double[::1] lam, const double[::1] nu,
             const double[::1] w, int reps, double[::1] ns, double[:, ::1] info):
    """Per page: the least time of ``reps`` evaluations of ``V`` (``ns``, nanoseconds, clock included) and
    ``info[i] = (path: 0 fast / 1 walk / 2 the extended retry, steps of the fast attempt (or the retry's), steps
    of the walk)`` (bench, profiling)."""
    cdef Py_ssize_t i, n = s.shape[0]
    cdef PolledPage pg
    cdef double psi, fresh, val, best, t
    cdef timespec t0, t1
    cdef int _rep
    cdef Acc a
    cdef PX px
    with nogil:
        for i in range(n):
            polled_prepare(&pg, dl[i], lam[i], nu[i], w[i])
            best = INFINITY
            for _rep in range(reps):
                clock_gettime(CLOCK_MONOTONIC, &t0)
                polled_sums(&pg, s[i], False, &psi, &fresh, &val)
                clock_gettime(CLOCK_MONOTONIC, &t1)
                t = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)
                best = fmin(best, t)
            ns[i] = best
            info[i, 0] = 0.0
            info[i, 1] = 0.0
            info[i, 2] = 0.0
            if pg.kind == 0 and s[i] > 0.0 and s[i] < INFINITY:
                if fast_ok(&pg, s[i], False, &a):
                    info[i, 1] = a.steps
                elif ext_ok(&pg, s[i], False, &a, &px):
                    info[i, 0] = 2.0
                    info[i, 1] = a.steps
                else:
                    info[i, 0] = 1.0
                    info[i, 1] = a.steps
                    lattice(&pg, s[i], False, FAR, False, &a)
                    info[i, 2] = a.steps


def _r1(double y):
    """``(R^1(y), 1 - e^{-y})`` as the band sums take them (tests)."""
    cdef double fr
    cdef double r1 = band_r1(y, &fr)
    return r1, fr


def _fast_bounds(double s, double dl, double lam, double nu, double w, double band_walk=BAND_WALK):
    """``(status, V, the fast path's error bound of V)`` of one page, ``V`` per unit importance, bands of up to
    ``band_walk`` points added point by point (tests: status 0 where the CDF sums ran, whether or not the bound
    is below ``FAST_TOL`` of ``V``)."""
    cdef PolledPage pg
    cdef Acc a
    cdef double val, err
    polled_prepare(&pg, dl, lam, nu, w)
    if pg.kind != 0 or not (s > 0.0 and s < INFINITY) or lattice(&pg, s, False, 0.0, True, &a, band_walk) != 0:
        return -1, NAN, NAN
    val = fast_value(&pg, &a, &err)
    return 0, val / dl, err / dl


def _log_binom(double i, double n, double p):
    """``(lp, its error bound)``: ``log_binom`` (Loader's saddle-point log of the Binomial(``n``, ``p``) pmf at
    ``i``) and ``EPS (6 |lp| + 24 + log_binom_err)`` (tests)."""
    cdef double lp = log_binom(i, n, p, 1.0 - p, log(p), log1p(-p))
    return lp, EPS * (6.0 * fabs(lp) + 24.0 + log_binom_err(i, n, p, 1.0 - p))


def _ext_bounds(double s, double dl, double lam, double nu, double w, double band_walk=BAND_WALK):
    """``(status, V, the extended retry's error bound of V, whether its bounds pass, the w bound's interior
    part, its band part, w Delta)`` of one page, ``V`` per unit importance (tests; status 0 where the sums ran)."""
    cdef PolledPage pg
    cdef Acc a
    cdef PX px
    cdef fc_ext mag, val
    polled_prepare(&pg, dl, lam, nu, w)
    if (pg.kind != 0 or not (s > 0.0 and s < INFINITY) or pg.aw == 0.0
            or lattice(&pg, s, False, 0.0, True, &a, band_walk, &px) != 0):
        return -1, NAN, NAN, False
    mag = a.x[0].one_m_edw * a.x[0].xwfar + a.x[0].dwes * a.x[0].xnfar
    val = a.x[0].one_m_edw * a.x[0].xwfar - a.x[0].dwes * a.x[0].xnfar + a.bval
    return (0, <double>val / dl,
            <double>(a.x[0].one_m_edw * a.x[0].xewfar + a.x[0].dwes * a.x[0].xenfar + a.eval + XEPS * 3.0 * mag
                     + EPS * (2.0 * fc_fabs(val) + fabs(a.bval))) / dl, bool(fast_bound_ok_x(&pg, False, &a)),
            <double>(a.x[0].one_m_edw * a.x[0].xewfar), a.efresh, <double>(a.x[0].one_m_edw * a.x[0].xwfar + a.bfresh))


def _log_binom_x(double i, double n, double p):
    """``(lp, lp - float(lp), its error bound)``: ``log_binom_x`` (Loader's log-pmf in ``fc_ext``) as a double and
    the rest, and ``XEPS (6 |lp| + 24 + log_binom_err)`` (tests; ``p`` and ``1 - p`` in ``fc_ext``)."""
    cdef fc_ext pp = p, pb = 1.0 - <fc_ext>p
    cdef fc_ext lp = log_binom_x(i, n, pp, pb, fc_log(pp), fc_log1p(-pp))
    cdef double hi = <double>lp
    return hi, <double>(lp - hi), XEPS * (6.0 * <double>fc_fabs(lp) + 24.0 + log_binom_err(i, n, p, 1.0 - p))


def _have_ext():
    """Whether the extended retry runs here (``fc_ext`` has a 64-bit significand)."""
    return bool(FC_HAVE_EXT)
