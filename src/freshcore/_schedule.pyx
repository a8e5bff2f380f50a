# cython: language_level=3, auto_pickle=False
"""Compiled state of the crawl scheduler (Algorithm 1 of Busa-Fekete et al. [1]_; SPEC section 4).

Layer 3 of STYLE.md: a ``cdef class`` that holds every per-page array and the
buckets, with ``nogil`` loops; ``freshcore.schedule.Scheduler`` validates and
delegates.  Nothing here validates user input.  Its units, each a ``.pxd`` of
inline functions compiled into this module: ``_schedule_pages`` (the page
record, values, the popped pages), ``_schedule_lines`` (slopes, line bounds,
slope buckets, park keys), ``_schedule_heap`` (4-ary heaps), ``_schedule_scan``
(the scan of the bucket tops; SIMD kernels in ``_schedule_scan.h``),
``_schedule_calendar`` (the calendar of ticks), ``_schedule_buckets`` (where a
page is kept), ``_schedule_park`` (the park), ``_schedule_memory``
(allocation; ``_schedule_memory.h``) and ``_schedule_export`` (the state as
the file format holds it); numeric constants in ``_schedule_constants.h``;
the state's fields and C methods declared in ``_schedule.pxd``.

At tick time ``t`` the scheduler crawls ``argmax_i V_i(tau_i(t))`` (ties to
the lowest index), ``tau_i(t) = (t - last_i) + b_i n_i`` (``b_i n_i`` read as
0 when ``n_i = 0``), with ``b_i`` the time-equivalent of a signal for the value
kind: ``beta_i`` for "exact"/"approx", 0 for "greedy" (signals ignored) and
``inf`` for "cis" when ``lambda_i Delta_i > 0`` (a signal is taken as proof of
a change).  Values are those of ``freshcore._value`` (the same ``cdef``
functions as ``freshcore.value.crawl_value``, so bit-identical to it).

Exactness: the slope invariant
------------------------------
Every value kind grows at a bounded, eventually decreasing pace:
``V'(tau) = mu alpha e^{-alpha tau} psi(tau) <= mu x e^{-x}`` with
``x = alpha tau`` (``psi(tau) <= tau``; Greedy: ``alpha = Delta``,
``psi = tau``; approx-j keeps the first j of the non-negative terms of
``psi``), so for every ``tau >= tau_0``

    V(tau) <= V(tau_0) + s (tau - tau_0),
    s = mu h(alpha tau_0),  h(x) = 1/e for x < 1, x e^{-x} for x >= 1

(``sup_{x' >= x} x' e^{-x'}``; tests/test_schedule_bounds.py checks it for
every kind).  When page ``j`` is evaluated at time ``t_0`` (value ``v_0``),
its bound is the line ``U_j(t) = v_0 + s_b (t - t_0) = s_b (t - k_j)``, valid
for every later ``t`` until the page is crawled or re-parameterised, where
``s_b >= s`` is the page's slope rounded up to its bucket's and ``k_j =
t_0 - v_0/s_b`` (shaded by a few ulps of the times involved) is its key.  A
counted signal adds ``b_j`` to ``tau_j``, so it lowers the key by ``b_j``
(no evaluation); ``b_j = inf`` (Greedy-CIS, ``nu = 0``) re-evaluates.
Constant values (``tau = inf``, ``mu = 0``, ``Delta = 0``, ``alpha = 0``,
or a slope that underflows) have ``s = 0``: ``U_j = v_0``, key ``-v_0``.

Greedy, where ``V`` is convex (``Delta tau_0 < 1``, or ``v_0 = 0``), may use
a line bounding ``ln V`` instead: ``V = (mu/Delta) F(Delta tau)`` with ``F``
the Gamma(2, 1) distribution function, log-concave since its density
``x e^{-x}`` is, so the tangent of ``ln V`` at ``tau_0`` (slope ``V'/V``)
bounds ``ln V`` everywhere; for ``v_0 = 0``, ``V <= (mu/e) tau`` and
``ln tau <= ln tau_1 - 1 + tau/tau_1`` give a line of slope ``1/tau_1``
(``tau_1 = e L/mu``, ``L`` the last winning value).  Of the two lines, the
one that reaches ``L`` later is kept (tests/test_schedule_bounds.py checks
both bounds).  A line bounding ``V`` from ``v_0 ~ mu Delta tau_0^2/2`` with
slope ``mu/e`` is loose by a factor ``~1/x``; the one bounding ``ln V``
follows the quadratic growth, which is what all pages do at start-up.

Every kind, and the start from equal crawl times: lines bounding sqrt V
---------------------------------------------------------------------------
``V(tau)/tau**2`` does not increase, for every kind, so ``sqrt V(tau) <=
sqrt(v_0) tau/tau_0`` for ``tau >= tau_0``: a line in ``t`` through the root
``tau = 0`` of slope ``sqrt(v_0)/tau_0``; with ``v_0 = 0`` (just crawled),
``V' <= mu alpha tau`` gives ``V <= (mu alpha/2) tau**2``, slope ``sqrt(mu
alpha/2)``.  Proof: ``(V/tau**2)' <= 0`` is ``tau V' <= 2 V``; with ``V' = mu
alpha e^{-alpha tau} psi(tau)`` and ``e^{-alpha s} >= e^{-alpha tau}`` on
``[0, tau]`` it suffices that ``tau psi(tau) <= 2 Psi(tau)``, ``Psi`` the
integral of ``psi``.  ``gamma psi(tau) = sum_i P(Z_i <= tau)`` counts the
points ``Z_i = S_{i+1} + i beta`` (``S_i`` sums of i Exp(gamma)) of a
renewal process with gaps ``G_0 ~ Exp(gamma)``, ``G_i = beta + Exp(gamma)``,
and ``tau psi - 2 Psi`` is ``E sum_{Z_i <= tau} (2 Z_i - tau)/gamma``.  Given
n + 1 points in ``[0, tau]``, that sum is ``(n + 1)(G_0 - G_{n+1}) + sum_j
(n + 1 - 2j) G_j`` (``G_{n+1} = tau - Z_n``); the middle gaps are
exchangeable (zero mean), and swapping the first gap a and the last b changes
the density by ``e^{gamma (min(b, beta) - min(a, beta))}`` (the last gap is
censored by ``beta + Exp(gamma)``), so the larger of the two is the last more
often: ``E[G_0 - G_{n+1}] <= 0``.  Approx-j keeps the first j + 1 points,
whose mean is below that of all; Greedy (``psi = tau``, ``F(x)/x**2``
decreasing) and Greedy-CIS (``psi`` concave) are special cases
(tests/test_schedule_bounds.py checks it for every kind, near the signals'
steps ``i beta`` included).  When every page starts crawled at the same time,
every value grows like ``tau**2`` at first and the ratios between them hold
still: a line bounding sqrt V grows with its page, where one bounding V (slope
``mu/e`` from ``~mu alpha tau_0**2/2``, loose by ``~1/(alpha tau_0)``) or ln V
(``e^{2 d}`` against ``(1 + d)**2`` over ``tau = tau_0 (1 + d)``) is popped
at every doubling of tau, and the first ticks popped most pages.  A page's
line is the one of the three (V, sqrt V, and ln V for Greedy's convex
values) that reaches the last winning value last.

The pages are kept in buckets by ``s_b``: bucket 0 for constant values; then
sixteen per octave, ``(1/2 + (q + 1)/32) 2**e`` for slopes from 2**-100 to
2**50 (smaller ones rounded up to the first), 2400 buckets for lines bounding
``V`` (1 .. 2400), the same 2400 for lines bounding ``ln V`` (2401 .. 4800)
and 2400 for lines bounding ``sqrt V`` (4801 .. 7200); above the largest
slope an unbounded bucket (7201) whose bound is ``inf``; 7204 bucket codes
with the two of the parked pages (7202, 7203).  A line's slope is rounded up
to its bucket's by at most 1/16 (1/4 with four per octave, format 12 and
before: at 10^6 pages polled 1% a tick the polled kind's evaluations a
decision fell from 7.95 to 7.18 and the exact kind's from 8.0 to 7.05 with
sixteen; with 64 a few more went, for a longer scan).  Each is a 4-ary
min-heap on ``(k_j, j)`` (keys stored beside the ids): in one bucket the page
with the smallest key has the largest bound, and a level change of any kind
costs nothing, since keys do not depend on a level.

A tick at ``t``: take the bucket whose top has the largest bound (ties: the
lower page id; a bound of ``ln V`` compared through ``exp``, of ``sqrt V``
through its square), pop that page,
evaluate it exactly and keep the best value ``v*`` so far (ties: lowest id;
buckets whose top's bound is below ``v*``, or ``ln v*``, leave the tick's
candidates, since ``v*`` only grows); repeat until every bound left,
inflated for rounding (``U (1 + 1e-11) + s_b 8 eps |t|``, for ``V`` and
``sqrt V``; for ``ln V``, ``U + 1e-11 (1 + |U|) + s_b 8 eps |t|``), is below
``v*`` (or ``ln v*``, ``sqrt v*``; or equal, for a higher id).  Every page not popped then has ``V_j(t) <=
U_j(t) < v*``: the best popped page is the exact argmax.  It is crawled
(``last = t``, ``n = 0``) and every popped page goes back with the line from
its value at ``t``.  Pages popped at a tick are those whose bound reaches the
winning value: the pages within ``s_b/R`` of the top and those whose line
from an earlier evaluation overshot (a page whose value is concave near its
crawl converges like Newton's method from below).  Work per tick is a few
evaluations and O(log m) heap work each, independent of the crawl rate and of
any level.

The tick's candidates: a top whose bound exceeded the winning value was
popped, so at the next tick every top's bound is within a few ticks' growth of
the last winning value ``L``, and the tick's winning value is within about
1e-6 of ``L`` (m = 1e6).  Only the buckets whose top reaches ``theta = L (1 -
1e-6)`` (``ln L - 1e-6`` for ``ln V``) enter the search (a handful of the
nonempty ones); the others wait, and rejoin only if the tick's best value
ends below ``theta`` (their bounds are then compared with it as above).
Either way every bucket whose top reaches the best value is searched, so the
decision is the same; only the order of the pops (so which pages are
evaluated) can differ.

The park: pages far below the winning value
-------------------------------------------
In steady state almost every page is far below the winning value, and a
line bound reaches it only after ~7 pops (each closes ~85-90% of the gap: the
slope is rounded up to its bucket's).  Greedy's value has an exact inverse, so
Greedy keeps a page whose value is below the park level ``P``
(``park_level``, a margin ``park_margin`` below the last winning value:
1/sqrt(m), 1e-3 at m = 1e6) apart, *parked*, keyed by the time it reaches
``P (1 - 1e-9)`` (``_schedule_lines.park_time``: Lambert W; the shade covers
the rounding of the inverse and of the values): **until its key, a parked
page's value is below the park level**.  At a tick the parked pages whose key
has come are popped and evaluated first; every other parked page is below
``P``, so the search over the buckets stands as above provided the tick's
best value ends at or above ``P``.  If it ends below (the winning value fell
by more than the margin: a higher rate, or the swings of small ``m``), every
parked page is evaluated (O(parked), ``n_unparks``), the margin doubles and
the level is lowered.  Raising the level costs nothing (keys of a lower level
are earlier, so still valid); it follows the winning value up, and the margin
halves again after a wait without a fall (m/16 ticks, doubled by a fall that
follows the last halving within it, halved by a halving;
``_schedule_park.park_follow``).  The buckets then hold only the
~m x margin pages near the top (~1e3 at m = 1e6), each popped ~3 times on its
way up.

The other kinds park too, keyed by a time before which bounds of their value
stay below ``P``: with ``V' = mu alpha e^{-alpha tau} psi(tau)``, ``psi``
1-Lipschitz (``psi(tau + h) <= psi(tau) + h``: psi is the expected time to
the crawl of the threshold policy) and ``psi(tau) <= min(tau, (tau +
beta)/(1 + gamma beta))`` (Wald's identity: ``(1 + gamma beta) psi`` is the
expected effective elapsed time at the crawl, which passes tau by less than
beta), the value from ``v_0`` at ``tau_0`` is at most the curve ``v_0 + mu
e^{-alpha tau_0} [psi_0 (1 - e^{-y}) + (1 - e^{-y} (1 + y))/alpha]``, ``y =
alpha (tau - tau_0)``, which reaches ``P`` where a Lambert W says
(``_schedule_lines.reach_time``), and at most the line bounding ``sqrt V``;
the key is the later of the two.  A signal moves a parked page's key earlier
by ``b_j``, as it moves a line's (no evaluation; into the calendar when it
comes due by the horizon).  The keys are bounds, not the exact times, so a
page popped from the park below the level parks again only if it is below it
by one margin more: one close to the level goes to a slope bucket, rather
than closing in on the level one park at a time.  The same psi bounds give
its line bounding ``V`` a smaller slope, ``mu e^{-alpha tau_0} sup_y
e^{-y} (alpha psi_0 + y)`` (and the same with Wald's line), where the one
from ``psi <= tau`` alone is ``mu h(alpha tau_0)``.  When the winning value
settles, the pages of the slope buckets below the level park keyed by the time
their line reaches it (no evaluation).

While the winning value moves (by more than four smallest margins over a
window of m times the smallest margin, sqrt(m) ticks; a scheduler starts
moving), no page parks: while it rises, a page parked at the level is
popped, below the risen level, every time tau grows by a constant factor,
where its line bounding sqrt V grows with it; while it falls, each fall below
the level evaluates every parked page.  A winning value that drifts down
slower than that is met by *lowerings* (``park_follow``): once it is 7/8 of
the way down to the level, the fall it heads for is done ahead and spread
over ticks: new pages park for the level a fall would set, the parked pages
are re-keyed for it m/64 + 256 page ids a tick (``park.lower``), and the ticks
are checked against the old level (``park.fall_level``, which every parked
page not yet re-keyed is below) until all are; the margin then covers the
drift seen since the level was set, over the wait before it halves.  A fall
is left for a drop faster than a lowering (a higher rate).  When a window
ends without a move, every page of the slope buckets whose bound is below
the park level parks:
the *settle*, whole slope buckets of m/64 + 256 pages a tick, in the order of
their codes (``park.settle``, the next bucket, saved with the state), so that
no tick does the O(m) of it (at 10^6 pages, Greedy from
``bench/cold_start.py``'s phased start, the one tick of it cost 12 brute-force
ticks).  A bucket is filtered in one pass over its arrays, the pages that stay
heapified (O(n)), where taking its pages out one at a time cost a sift and a
few misses each (96 ms at 10^6 pages, against 33 ms); the parked pages due
by the horizon go straight into the calendar.  The pages not yet looked at
keep their lines, valid bounds.

The parked pages due by a horizon m/32 ticks ahead (nearer when more than
2m/32 + 256 would join it at once) are in a calendar of ticks
(``PARK``), the others in an unsorted list (``FAR``; ``_schedule_park``).  The
split is not state: files say ``PARK`` for both.

Rounding: the bound must hold for the computed values, which are evaluated
at ``tau`` computed as ``fl(fl(t - last) + fl(b n))``.  Its error, at most
``3 eps (|t| + |t_0| + 2 |last| + 2 |b n|)``, is covered by shading the key
by ``8 eps (|t_0| + |last| + |b n|)`` time units and inflating the bound by
``s_b 8 eps |t|`` at comparison; the relative inflation ``1e-11`` covers the
values' own rounding (V is accurate to ~1e-15 relative, tests/test_value.py)
and that of the key arithmetic.

Dynamic pages: page ids are slots of the per-page arrays (handed out in
order, never reused), so "ties to the lowest index" is "lowest id".  A removed
page leaves its bucket; an added or re-parameterised page is evaluated at the
current time and placed with its line (O(log m), no rebuild).

Start-up: at the first tick every live page is evaluated once, or bounded (a
polled page past ``BOUND_WINDOWS`` poll windows: its closed-form bound
``polled_value_cheap``, four ``exp``/``expm1`` where its value sums a lattice;
the few near the top get their lattice bound when popped), and the buckets are
heapified (O(m)).  The largest of those values and bounds starts the park
(``park_start``; a bound is above the first winning value, ~1.35x on
bench_schedule_polled's start: the level starts that much higher, and follows
the winning values while they move).  Pages that all start crawled at the same
time have values that grow together, quadratically at first: the lines
bounding sqrt V (above) keep the first ticks to a few evaluations each.

Memory: allocation failure raises ``MemoryError`` and leaves the state as the
call found it (``step``, ``add``, ``update``, ``signal``, ``set_rate``);
``run`` and ``signal_many`` keep the ticks and signals before the failing one
(the message says how many).  The ``nogil`` code returns error codes: a tick
makes room before it takes a page out of its bucket, capacities shrink only
once a call has succeeded, and a tick that cannot put its pages back puts them
where they were (in the room they left) and restores its scalars.

Polled signals (value "polled", issue 19): the value is ``freshcore._polled``'s
``V(s)`` at the log-staleness ``s = Delta (t - ell)``, where the record's
``last_crawl`` holds the page's *effective start* ``ell`` (``n_signals``
stays 0) and three arrays, allocated only under this kind, its crawl time
``c``, last poll ``p`` and poll interval ``w``.  A crawl sets ``ell = c =
t``.  A poll at ``t`` closes the window ``(p, t]`` (``l`` of it after the
crawl, ``a`` before; ``_schedule_pages.poll_shift``): not moved, ``s``
falls by ``lambda Delta l`` (``ell += lambda l``) and the value only falls,
so every key stays a valid bound and nothing is re-keyed then (a slope
bucket's page is re-keyed lazily at its pop: its key later by ``min(ell -
ell_0, t - t_0)``, ``(t_0, ell_0)`` the anchor its key was put at, float32
rounded up, 8 bytes a page, saved with the state; back without an evaluation
if its bound is then below the tick's best value: ``_rekey_shift``; a parked
page likewise at its calendar pop, back to the park if its shifted key is
after ``t``, since a park key is where the page's bounds from ``s_0`` reach
the level: at 10^6 pages polled 1% a tick this took 3.3 evaluations a
decision of 13.9, most of them parked pages far below the level); moved, ``s`` rises
by the window's posterior less ``Delta l`` and the key moves earlier by the
rise over ``Delta`` (``_shift_earlier``, the signals' path; ``ell = -inf``
when the move proves a change); a poll at or before the crawl only sets
``p``.  A re-parameterised page keeps ``s`` at the current time.  The pages
whose value is exactly Greedy's (``lambda Delta = 0`` or ``w = inf``) take
Greedy's lines and park keys with ``ell`` as their last crawl; the others the
bounds of ``_schedule_polled`` (in s-units, times ``Delta`` in t, since ``s
<= s_0 + Delta (t - t_0)`` whatever the polls: an unmoved one lowers ``s``
and ``V`` does not decrease in ``s``; a moved one moves the key as it moves
``ell``).  Their line (``_schedule_lines.polled_page_line``) is the one that
reaches the last winning value ``L`` last of: ``polled_line``'s ``V <= c + S
(s - s_0)`` (``c`` holds the allowance for the jumps at the breakpoints to
come), the line through ``(s_0, v_0)`` that passes it beyond the next
breakpoint (no jump before it: ``polled_pivot_line``; an allowance alone can
pass ``L``), and the line bounding ``sqrt V`` through the root
(``polled_root_slope``: ``V <= mu s^2/(2 alpha)``, every page crawled at the
same time sharing it); a page whose cap ``mu/Delta`` is below ``L`` keeps the
cap as a constant bound (a line from near the cap, with its allowance, would
be popped at every tick).  They park as the other non-Greedy kinds (one
margin below the level), keyed by ``t_0 + (s^* - s_0)/Delta`` with ``s^*``
``polled_reach_s`` (``_schedule_lines.polled_park_time``), padded by ``8 eps
(|t_0| + |ell| + |key|)``; the settle keys them where their line reaches the
level (``line_park_time``), as the other kinds'.  The jump allowance is what
costs: for ``lambda`` near 1 the breakpoints are ``alpha w`` apart and the
allowance (about one run of unmoved windows' jumps, whatever the band's
length) can keep a page near the winning value popped at every tick; the
lines take the next breakpoint zone of real weight as the next breakpoint
(``polled_mass_break``: for ``lambda`` near 1 the weight sits in narrow
negative-binomial zones, a window apart), allowing for the rest.

Poll groups (``poll_group``: a sitemap's pages, polled by one fetch): an
unmoved window raises ``ell`` by ``lambda l``, additive in the window's
length, so a group's unmoved polls since a page's last own event (its crawl,
a poll of it alone or as moved, an update, a change of group) add up to one
window from its start then (``anchor``, with its last poll ``p``) to the
group's last poll.  Per group its poll count and last poll time; per page its
label, the group's count at its last own event (``seen``) and ``anchor``.
``_sync_polls(j)`` computes that one window (``poll_shift`` from the anchor:
the same bits however often it runs) before anything reads ``ell``: the pop's
``_evaluate``, ``_build``, ``_place``, ``_lower``, the settle, the views and
the export; ``_own_polls(j)`` makes them the page's own before its own
events.  A group poll costs O(moved): each moved page is synced to the
group's previous poll and polled as moved; the keys of the others stay
valid (unmoved polls only lower V).  One window rounds differently from the
sum of its pieces (a few ulps of ``ell``).  A member whose start is after its
window's (``ell > max(c, p)``: after an update, or a poll before ``ell``) may
see its next unmoved window capped at ``t`` (``poll_shift``), which one window
from its anchor would not see: such pages are kept in a list (``g_prone``)
and polled one by one at their group's next poll.  A moved poll of a page in
CONSTANT re-evaluates nothing: its bound (a constant value, or the cap
``mu/Delta``) holds at every ``s``.

A popped polled page past 32 poll windows is bounded before it is evaluated
(``polled_value_bounds``: the CDF sums to ~1e-6, with their rests and
rounding counted, about half the value's cost on large lattices).  Below the
best value it has lost, and goes back with the bound as its value (every
line and park key bounds V from any ``v0 >= V(s0)``); else it waits, and is
evaluated only when its bound still reaches the best value and no line's
bound is above it (``_evaluate``: the order keeps a restored state's run
the uninterrupted one's).  At 10^6 pages polled 1% a tick (w = 1e-3) 12.4
bounds and 1.4 values a decision took the place of 10.6 values: about 30%
less time.  A page popped from the park gets a closed-form bound first
(``polled_value_cheap``: the integral of psi's bound and every jump's, two
``exp`` and two ``expm1``, ~1% above V at low recall): the calendar's pages
are popped at the tick's start, before any value, so they wait with it and
get their lattice bound only if it still reaches the best value when they
are taken (``_resolve``); there 2.5 lattice bounds a decision became 0.5.
The same sums give a lower bound (``polled_value_bounds``: ~4e-7 below V at
the median there with the sums to ~1e-5): a waiting page whose lower bound is above the best value
(and above the upper bound of a best page taken so) is the tick's best
whatever its value, and is taken without it (``prov``); the best value is
then its lower bound, which keeps every comparison that drops a page valid,
and its value is computed only if a later page's value or bound may reach it
(``_better_p``) or the tick may fall.  The winning value the lines and the
park use is then that lower bound: their keys come a little earlier, never
later.  There 1.1 of 1.8 values a decision went (``n_bound_wins`` counts
the ticks).  A value that cannot be computed is then an error only where a
page's bound reaches the best value.

Values that cannot be computed: a page whose series would run past the cap of
``freshcore._value`` (NaN, no closed form) never reaches a heap.  Each
evaluation notes a NaN (``failed_page``; one comparison); the call then goes
back as it does when memory runs out and raises ``PageValueError`` naming the
page, its parameters and ``tau_eff``: a tick after its search (a NaN is never
the best), the first tick before it fills the buckets (a page it places by its
closed-form bound: only when popped, as above), ``add``/``update``/``signal``
from the page that failed.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling
   algorithm utilizing noisy change-indicating signals", 2025.
"""

from libc.math cimport INFINITY, NAN, fabs, exp, log, sqrt
from libc.float cimport DBL_EPSILON
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free

cimport cython
import numpy as np

from freshcore.value import PageValueError
from freshcore._schedule_memory cimport (FRESHCORE_PREFETCH, freshcore_malloc, freshcore_fail_allocation,
                                         freshcore_allocation_count, freshcore_trim)
from freshcore._schedule_pages cimport (PageRecord, GREEDY, POLLED, page_tau, value_at, value_upper_at,
                                        signal_time, page_alpha, interval_bound, popped_reserve, popped_resize,
                                        popped_free, page_records, grown, poll_shift, rescaled_start, polled_greedy,
                                        PREP_CACHE, wait_push, wait_pop, wait_sift_down)
from freshcore._polled cimport PolledPage
from freshcore._schedule_heap cimport Heap, HEAP_LEAD, heap_sift_up, heap_heapify, heap_resize, unsorted_append
from freshcore._schedule_lines cimport (BOUND_MARGIN, N_TABLE, UNBOUNDED, CONSTANT, PARK_SHADE, page_line, top_bound,
                                        family_of, reach_time, line_park_time, key_pad, polled_park_time,
                                        park_share, park_time_at, park_x_many, park_x_set_level,
                                        SLOPES_PER_OCTAVE as SLOPES_PER_OCTAVE_,
                                        SQRT_SLOPES_PER_OCTAVE as SQRT_SLOPES_PER_OCTAVE_, N_OCTAVES as N_OCTAVES_)
from freshcore._schedule_scan cimport freshcore_scan, freshcore_pick, reaching, tops_offset, cand_offset, tops_remove
from freshcore._schedule_calendar cimport (CalendarEntry, calendar_time, calendar_push, calendar_release,
                                           calendar_empty, calendar_clear, calendar_prefetch, calendar_reserve)
from freshcore._schedule_buckets cimport (Buckets, bucket_t, PARK, FAR, N_CODES, DEAD, NOT_PLACED, buckets_init,
                                          buckets_free, buckets_push, buckets_take, buckets_remove, buckets_key_of,
                                          buckets_top_bound, buckets_set_top, buckets_shrink, buckets_fill,
                                          buckets_grow, buckets_oversized,
                                          buckets_unpark_calendar, buckets_unscanned_candidates)
from freshcore._schedule_park cimport (Park, PARK_EPS, SETTLE_SHARE, LOWER_SHARE, parks, park_key, park_start,
                                       park_follow, park_advance)
from freshcore._schedule_export cimport state_export, state_import

cdef extern from "<math.h>" nogil:
    float nextafterf(float x, float y)


cdef inline float _float_up(double x) noexcept nogil:
    """x rounded up to a float (inf for NaN or beyond the float range)."""
    cdef float f
    if not (fabs(x) < 3e38):
        return INFINITY
    f = <float>x
    if <double>f < x:
        f = nextafterf(f, INFINITY)
    return f


cdef extern from "_schedule_constants.h":
    const double PREFILTER "FRESHCORE_PREFILTER"

cdef enum:
    NO_MEMORY = -2  # _step's result when memory is exhausted
    NO_VALUE = -3  # the result of _step, _build, _place and _signal when a page's value cannot be computed
    SIGNAL_AHEAD = 8  # a stream of signals prefetches the pages of the one this many ahead
    FALL_AHEAD = 8  # the loops over every parked page (a fall) fetch the record of the one this many ahead
    PARK_CHUNK = 64  # the settle computes Greedy's park keys this many pages at a time (park_x_many)
    SETTLE_AHEAD = 24  # the settle's pass over a bucket fetches the record of the page this many ahead (8: 10% slower)
    # a popped polled page is bounded first (_evaluate), and placed by its closed-form bound at the first tick
    # (_build), if tau is past this many poll windows
    BOUND_WINDOWS = 32

cdef double STAGE_CHEAP = -2.0  # popped.exp of a page waiting with its closed-form bound only (_evaluate)


cdef inline double _shifted_key(double key, double rd, double t) noexcept nogil:
    """A popped page's key moved later by ``rd`` (``_rekey_shift``), shaded for the rounding of the sum."""
    return (key + rd * (1.0 - 1e-12)) - 8.0 * DBL_EPSILON * (fabs(key) + fabs(t) + rd)


cdef inline bint _better(Py_ssize_t j, double v, double* bv, Py_ssize_t* best) noexcept nogil:
    """Whether page j of value v is the tick's new best (above the best value, or equal with a lower id); if so
    it is made the best."""
    if v > bv[0] or (v == bv[0] and j < best[0]):
        bv[0] = v
        best[0] = j
        return True
    return False


# The level of the vector kernel of Greedy's park keys in the settle (park_x_many: 0 baseline, 1 AVX2, 2
# AVX-512, the widest this build and CPU run; -1: none, the scalar park_time)
cdef int _park_x_level = park_x_set_level(2)

#: Bytes of the polled kind's cache of prepared pages (``_schedule_pages.page_prepare``), whatever the page count.
PREP_CACHE_BYTES = PREP_CACHE * sizeof(PolledPage)

#: Number of bucket codes (constant values, the slopes, the unbounded slopes, the two of parked pages).
N_BUCKETS = N_CODES

#: Bucket code of the lines of unbounded slope.
UNBOUNDED_CODE = UNBOUNDED

#: Slope buckets per octave of the lines bounding V (and ln V); those bounding sqrt V have SQRT_SLOPES_PER_OCTAVE.
SLOPES_PER_OCTAVE = SLOPES_PER_OCTAVE_
SQRT_SLOPES_PER_OCTAVE = SQRT_SLOPES_PER_OCTAVE_
#: Octaves of slopes each family covers (2**-100 .. 2**50).
N_OCTAVES = N_OCTAVES_

#: Bucket code of a parked Greedy page (keyed by the time it reaches the park level) due before the horizon.
PARK_CODE = PARK

#: Bucket code of a parked Greedy page due at or after the horizon (an unsorted list).
FAR_CODE = FAR

#: Bucket code of a live page in no bucket (and, in exported states, of a removed page).
NOT_PLACED_CODE = NOT_PLACED

#: Largest signal count per page between two crawls (32-bit counters); ``Scheduler`` refuses more.
MAX_SIGNALS = 4294967295


# -- for tests ------------------------------------------------------------------------------------------------
def _fail_allocation(long long n):
    """Make the n-th allocation of the scheduler's compiled code from now on fail, once (0: none; for tests)."""
    freshcore_fail_allocation(n)


def _allocation_count():
    """Allocations the scheduler's compiled code has made (or been refused) so far (for tests)."""
    return freshcore_allocation_count()


def _set_park_x_level(int level):
    """Compute the settle's Greedy park keys with the vector kernel of level ``min(level, widest)`` (-1: the scalar
    ``park_time``); return the previous level.  For tests: not while a scheduler ticks."""
    global _park_x_level
    old = _park_x_level
    _park_x_level = -1 if level < 0 else park_x_set_level(level)
    return old


def _fill_records(records, const double[::1] delta, const double[::1] mu, const double[::1] last):
    """The new records' fields in one pass (each record's cache line written once, where a numpy assignment per
    field was a strided pass each): Delta, mu, the last crawl (0 if ``last`` is None), entry -1, no signal."""
    cdef PageRecord[::1] r = records
    cdef Py_ssize_t j, n = r.shape[0]
    if n == 0:
        return
    if delta.shape[0] != n or mu.shape[0] != n or (last is not None and last.shape[0] != n):
        raise ValueError("_fill_records: arrays of different lengths")
    cdef PageRecord* p = &r[0]
    cdef const double* d = &delta[0]
    cdef const double* u = &mu[0]
    cdef const double* t = &last[0] if last is not None else NULL
    with nogil:
        for j in range(n):
            p[j].last_crawl = t[j] if t != NULL else 0.0
            p[j].change_rate = d[j]
            p[j].importance = u[j]
            p[j].entry = -1
            p[j].n_signals = 0


def _poll_shift(double ell, double c, double p0, double t, bint moved, double dl, double lam, double nu):
    """The effective start of a polled page after a poll at ``t > c`` (the compiled ``poll_shift``; for the
    brute-force reference of the tests, which must make the same floating-point operations)."""
    return poll_shift(ell, c, p0, t, moved, dl, lam, nu)


def _rescaled_start(double ell, double now, double old_dl, double new_dl):
    """The effective start that keeps a polled page's staleness at ``now`` across a change of Delta (the compiled
    ``rescaled_start``; for the tests' reference)."""
    return rescaled_start(ell, now, old_dl, new_dl)


def _no_memory(what):
    return MemoryError(f"out of memory in the crawl scheduler: {what}")


def _no_value(page, change_rate, recall, false_rate, tau, then, polled=False):
    """The PageValueError of a page the scheduler cannot evaluate at tau (polled: named at s = Delta tau)."""
    if polled:
        return PageValueError("The crawl scheduler", page, change_rate, recall, false_rate, "staleness",
                              change_rate * tau, then)
    return PageValueError("The crawl scheduler", page, change_rate, recall, false_rate, "tau_eff", tau, then)


@cython.final
cdef class SchedulerState:
    """Per-page state and the buckets (see the module notes).

    ``SchedulerState(delta, mu, nu, recall, kind, terms, rate, signal_delay,
    last=None, poll_interval=None)``; kind 0 exact, 1 approx-``terms``, 2
    greedy, 3 cis, 4 polled (``poll_interval`` required: each page's ``w``).
    ``alpha``, ``gamma`` and ``beta`` are recomputed from these when needed
    (the same floating-point operations as ``PageModel``, ``beta`` by the
    same compiled function, so the same bits), to save memory.

    Memory per page slot: the 32-byte ``PageRecord`` (in one cache line: the
    record array is 32-byte aligned), false rate and recall (8 bytes each,
    read by the kinds that use signals), the 2-byte bucket code (also the live
    flag) and the 12-byte entry of its bucket (key and page id; 16 bytes in
    the calendar); the capacities are ``_schedule_buckets``'.  Under "polled"
    only, three float64 arrays more: crawl time ``c``, last poll time ``p``
    and poll interval ``w`` (the record's ``last_crawl`` is then the effective
    start ``ell``, ``s = Delta (t - ell)``).
    """

    def __cinit__(self):
        if buckets_init(&self.buckets) < 0:
            raise _no_memory("a new scheduler")

    def __dealloc__(self):
        buckets_free(&self.buckets)
        popped_free(&self.popped)

    def __init__(self, delta, mu, nu, recall, int kind, long terms,
                 double rate, double signal_delay, last=None, poll_interval=None):
        m = np.shape(nu)[0]
        records = page_records(m, False)
        _fill_records(records, np.ascontiguousarray(delta, dtype=np.float64),
                      np.ascontiguousarray(mu, dtype=np.float64),
                      None if last is None else np.ascontiguousarray(last, dtype=np.float64))
        polled = None
        if kind == POLLED:  # crawl and last poll at the last crawl; each page's w
            crawl = np.zeros(m) if last is None else np.array(last, dtype=np.float64, copy=True)
            polled = (crawl, crawl.copy(), np.array(poll_interval, dtype=np.float64, copy=True))
        self._set_arrays(records, np.array(nu, dtype=np.float64, copy=True),
                         np.array(recall, dtype=np.float64, copy=True), np.full(m, NOT_PLACED, dtype=np.uint16),
                         polled)
        # (the other fields start at 0: time 0, no tick, no winning value, no park level, not built)
        self.pages.kind, self.pages.terms = kind, terms
        self.n_ids = self.capacity = self.n_live = m
        self.buckets.calendar.rate, self.signal_delay = rate, signal_delay
        self.log_last_winning_value = -INFINITY
        self.park.margin, self.park.horizon = PARK_EPS, -INFINITY
        self.failed_page = -1

    def _set_arrays(self, records, false_rate, recall, bucket, polled=None):
        """The per-page arrays (same length) and the pointers to their data; ``polled``: (crawl, last poll, poll
        interval) under "polled", else None."""
        cdef PageRecord[::1] r = records
        cdef double[::1] nu = false_rate
        cdef double[::1] lam = recall
        cdef bucket_t[::1] code = bucket
        cdef double[::1] c
        cdef double[::1] pl
        cdef double[::1] w
        self.records_array, self.false_rate, self.recall, self.bucket = records, false_rate, recall, bucket
        n = r.shape[0]
        self.pages.records = self.buckets.records = &r[0] if n > 0 else NULL
        self.pages.false_rate = &nu[0] if n > 0 else NULL
        self.pages.recall = &lam[0] if n > 0 else NULL
        self.buckets.code = &code[0] if n > 0 else NULL
        self.polled_arrays = polled
        self.pages.crawl = self.pages.last_poll = self.pages.poll_interval = NULL
        if polled is not None and n > 0:
            c, pl, w = polled
            self.pages.crawl, self.pages.last_poll, self.pages.poll_interval = &c[0], &pl[0], &w[0]
        # the polled pages' prepare cache (page_prepare; its slots match pages by their parameters: kept as is)
        cdef unsigned char[::1] pc
        if polled is None:
            self.prep_cache_array, self.pages.prep_cache = None, NULL
        elif self.prep_cache_array is None:
            self.prep_cache_array = np.zeros(PREP_CACHE * sizeof(PolledPage), dtype=np.uint8)
            pc = self.prep_cache_array
            self.pages.prep_cache = <PolledPage*>&pc[0]
        # the keys' anchors (re-key at a pop): the old ones kept (same ids), the new slots without one
        cdef float[:, ::1] rk
        old = self.rekey_array
        self.rekey_array, self.rekey = None, NULL
        if polled is not None:
            self.rekey_array = np.full((n, 2), np.inf, dtype=np.float32)
            if old is not None:
                self.rekey_array[:min(n, old.shape[0])] = old[:min(n, old.shape[0])]
            if n > 0:
                rk = self.rekey_array
                self.rekey = &rk[0, 0]

    def _set_groups(self, arrays, tables):
        """The poll groups' arrays (label int32, seen int64, anchor float64, prone flag uint8, prone list int32 (its
        first n_prone entries); one per slot) and tables (polls int64,
        time and top float64; one per group) and the pointers to their data; None, None: no groups."""
        cdef int32_t[::1] lab
        cdef int64_t[::1] seen
        cdef double[::1] anc
        cdef unsigned char[::1] flag
        cdef int32_t[::1] prone
        cdef int64_t[::1] gp
        cdef double[::1] gt
        cdef double[::1] gx
        self.group_arrays, self.group_tables = arrays, tables
        self.g_label, self.g_seen, self.g_anchor = NULL, NULL, NULL
        self.g_flag, self.g_prone = NULL, NULL
        self.g_polls, self.g_time, self.g_top = NULL, NULL, NULL
        self.n_groups = 0
        if arrays is None:
            self.n_prone = 0
            return
        lab, seen, anc, flag, prone = arrays
        gp, gt, gx = tables
        if lab.shape[0] > 0:
            self.g_label, self.g_seen, self.g_anchor = &lab[0], &seen[0], &anc[0]
            self.g_flag, self.g_prone = &flag[0], &prone[0]
        self.n_groups = gp.shape[0]
        if self.n_groups > 0:
            self.g_polls, self.g_time, self.g_top = &gp[0], &gt[0], &gx[0]

    def use_groups(self, Py_ssize_t n_groups=0):
        """Allocate the poll groups' arrays (every page in none) if not yet, and the tables to n_groups groups at
        least (a new group: no poll, time and top -inf)."""
        cdef Py_ssize_t m = self.capacity, g0
        if self.pages.kind != POLLED:
            raise ValueError("poll groups exist only under value 'polled'")
        arrays, tables = self.group_arrays, self.group_tables
        if arrays is None:
            arrays = (np.full(m, -1, dtype=np.int32), np.zeros(m, dtype=np.int64),
                      np.array(self.records_array["last_crawl"][:m], dtype=np.float64), np.zeros(m, dtype=np.uint8),
                      np.zeros(m, dtype=np.int32))
            self.n_prone = 0
            tables = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
        g0 = tables[0].shape[0]
        if n_groups > g0:
            # (exactly n_groups: the labels usually come at once; a table entry is 24 bytes)
            tables = (grown(tables[0], g0, n_groups, 0), grown(tables[1], g0, n_groups, -INFINITY),
                      grown(tables[2], g0, n_groups, -INFINITY))
        self._set_groups(arrays, tables)

    cdef _usable(self):
        if self.broken:
            raise RuntimeError("this crawl scheduler's state is incomplete: loading it ran out of memory "
                               "(load the saved state again)")

    cdef _failed(self, str then):
        """The PageValueError of ``failed_page`` (which it clears), the message ending with ``then``."""
        cdef Py_ssize_t j = self.failed_page
        self.failed_page = -1
        return _no_value(j, self.pages.records[j].change_rate, self.pages.recall[j], self.pages.false_rate[j],
                         self.failed_tau, then, self.pages.kind == POLLED)

    # -- read-only views -------------------------------------------------
    @property
    def time(self):
        return self.now

    @property
    def rate(self):
        return self.buckets.calendar.rate

    def tick_times(self, Py_ssize_t n):
        """The times of the next n ticks as the ticks compute them (calendar_time: origin + k/rate)."""
        cdef Py_ssize_t i
        out = np.empty(max(n, 0))
        cdef double[::1] o = out
        for i in range(o.shape[0]):
            o[i] = calendar_time(&self.buckets.calendar, self.tick + 1 + i)
        return out

    @property
    def n_pages(self):
        """Live pages."""
        return self.n_live

    @property
    def n_slots(self):
        """Page ids handed out so far (live or removed): the next new id."""
        return self.n_ids

    @property
    def n_unparks(self):
        """Ticks whose best value ended below the park level."""
        return self.park.n_unparks

    def bucket_sizes(self):
        """Pages in each bucket code, int64 (length N_BUCKETS = 7204).

        0: constant values; 1 .. 2400: lines bounding V, by slope (sixteen
        per octave from 2**-100 to 2**50); 2401 .. 4800: lines bounding ln V,
        the same slopes; 4801 .. 7200: lines bounding sqrt V (sixteen per
        octave); 7201 (UNBOUNDED_CODE): larger slopes; 7202 (PARK_CODE):
        parked pages due by the horizon (the calendar); 7203 (FAR_CODE): the
        other parked pages.
        """
        out = np.zeros(N_CODES, dtype=np.int64)
        cdef Py_ssize_t b
        for b in range(N_CODES):
            out[b] = self.buckets.heaps[b].size
        out[PARK] = self.buckets.calendar.size
        return out

    def _buckets(self):
        """Bucket code of ids ``0 .. n_slots - 1`` as held (PARK: in the calendar, FAR after the horizon), a copy."""
        return self.bucket[:self.n_ids].astype(np.int64)

    def alive_mask(self):
        """Live flags of ids ``0 .. n_slots - 1`` (bool, a new array)."""
        return self.bucket[:self.n_ids] != DEAD

    def alive_of(self, ids):
        """Live flags of the given ids (each in ``0 .. n_slots - 1``), bool."""
        return self.bucket[:self.n_ids][ids] != DEAD

    def page_ids(self):
        """Live page ids, increasing (int64)."""
        return np.flatnonzero(self.alive_mask()).astype(np.int64)

    def _field(self, name):
        """A field of the records of ids ``0 .. n_slots - 1`` (a strided view)."""
        return self.records_array[name][:self.n_ids]

    def _live(self, a):
        x = a[:self.n_ids]
        if self.n_live == self.n_ids:
            return np.array(x, copy=True)
        return x[self.alive_mask()]

    def last_crawl(self):
        """Last crawl of each live page, in id order (copy)."""
        return self._live(self.last_crawl_view())

    def signal_counts(self):
        """Counted signals of each live page, in id order (int64 copy)."""
        return self._live(self._field("n_signals")).astype(np.int64)

    def signal_count_view(self):
        """Read-only view of the signal counts of ids ``0 .. n_slots - 1`` (uint32, no copy)."""
        a = self._field("n_signals")
        a.flags.writeable = False
        return a

    def params(self):
        """(change_rate, importance, recall, false_rate) of the live pages, in id order (copies)."""
        return (self._live(self._field("change_rate")), self._live(self._field("importance")),
                self._live(self.recall), self._live(self.false_rate))

    def last_crawl_of(self, Py_ssize_t j):
        return self.pages.crawl[j] if self.pages.kind == POLLED else self.pages.records[j].last_crawl

    def last_crawl_view(self):
        """Read-only view of the last-crawl times (no copy; valid until the next call that changes them); under
        "polled" the crawl times (the records hold the effective starts)."""
        a = self.polled_arrays[0][:self.n_ids] if self.pages.kind == POLLED else self._field("last_crawl")
        a.flags.writeable = False
        return a

    def polled_view(self, Py_ssize_t which):
        """Read-only view of ids ``0 .. n_slots - 1``'s effective start (0), last poll (1) or poll interval (2),
        under "polled" (with poll groups: every page synced to its group's polls first, and the last polls a
        copy, each page's own or its group's later one)."""
        cdef Py_ssize_t j
        if which == 0:
            self.sync_all()
        if which == 1 and self.g_label != NULL:
            a = np.empty(self.n_ids)
            for j in range(self.n_ids):
                a[j] = self._last_poll(j)
        else:
            a = self._field("last_crawl") if which == 0 else self.polled_arrays[which][:self.n_ids]
        a.flags.writeable = False
        return a

    def set_last_polls(self, const double[::1] last_poll):
        """Ids ``0 .. len(last_poll) - 1``'s last polls (checked by the caller: not after their crawls; before the
        first tick and any poll group)."""
        cdef Py_ssize_t j
        for j in range(last_poll.shape[0]):
            self.pages.last_poll[j] = last_poll[j]

    def sync_all(self):
        """Every page's effective start brought up to its group's polls (``_sync_polls``; O(m), no change of any
        decision: what a pop would compute)."""
        cdef Py_ssize_t j
        if self.g_label == NULL:
            return
        with nogil:
            for j in range(self.n_ids):
                self._sync_polls(j)

    def group_view(self, Py_ssize_t which):
        """Read-only view of ids ``0 .. n_slots - 1``'s poll group label (0, int32, -1: none; None without
        groups), or of the groups' poll counts (1), last poll times (2) or latest member polls (3)."""
        if self.group_arrays is None:
            return None
        a = self.group_arrays[0][:self.n_ids] if which == 0 else self.group_tables[which - 1]
        a = a.view()
        a.flags.writeable = False
        return a

    def nbytes(self):
        """Bytes held: per-slot arrays at capacity, the heaps and the calendar at capacity, the tables and buffers."""
        cdef Py_ssize_t b, heaps = 0
        cdef Py_ssize_t scanned = (self.buckets.tops.capacity[0] + self.buckets.tops.capacity[1]
                                   + self.buckets.tops.capacity[2])
        for b in range(N_CODES):
            heaps += self.buckets.heaps[b].capacity + (HEAP_LEAD if self.buckets.heaps[b].capacity > 0 else 0)
        # the 32-byte records, false rate and recall (float64), bucket (uint16); the slope table; the heaps;
        # the popped pages; the calendar; the heap headers and scan positions; the scan and its candidates
        # (under "polled" three float64 arrays more: crawl, last poll, poll interval, and the keys' anchors, two
        # float32; with poll groups a label, a count and an anchor more, and 24 bytes a group; the prepare cache)
        return (self.capacity * (sizeof(PageRecord) + (5 if self.pages.kind == POLLED else 2) * sizeof(double)
                                 + sizeof(bucket_t) + (2 * sizeof(float) if self.pages.kind == POLLED else 0)
                                 + ((sizeof(int32_t) + sizeof(int64_t) + sizeof(double))
                                    if self.group_arrays is not None else 0))
                + self.n_groups * (sizeof(int64_t) + 2 * sizeof(double))
                + N_TABLE * sizeof(double)
                + heaps * (sizeof(int32_t) + sizeof(double))
                + self.popped.capacity * (2 * sizeof(int32_t) + 6 * sizeof(double) + sizeof(bucket_t))
                + (PREP_CACHE * sizeof(PolledPage) if self.pages.prep_cache != NULL else 0)
                + self.buckets.calendar.capacity * sizeof(CalendarEntry)
                + (self.buckets.calendar.mask + 1) * sizeof(int32_t)
                + N_CODES * (sizeof(Heap) + sizeof(int32_t))
                + scanned * (3 * sizeof(double) + sizeof(int32_t)) + sizeof(double)
                + (scanned + 9) * (sizeof(double) + sizeof(int32_t)))

    def _capacities(self):
        """(FAR's capacity, the calendar's entries and lists, the popped pages' buffer, the slope heaps' entries),
        for tests."""
        cdef Py_ssize_t b, heaps = 0
        for b in range(PARK):
            heaps += self.buckets.heaps[b].capacity
        return (self.buckets.heaps[FAR].capacity, self.buckets.calendar.capacity, self.buckets.calendar.mask + 1,
                self.popped.capacity, heaps)

    # -- pages in their buckets -----------------------------------------------
    cdef inline double _value(self, Py_ssize_t j, double tau, double* ex, double* b) noexcept nogil:
        """V_j(tau), counted (``value_at``, with ex and b_j); NaN (past the series cap) noted in ``failed_page``."""
        cdef double v
        self.n_evaluations += 1
        v = value_at(&self.pages, j, tau, ex, b)
        if v != v:
            self.failed_page, self.failed_tau = j, tau
        return v

    cdef inline bint _parks(self, Py_ssize_t j, double v, double tau) noexcept nogil:
        """Whether page j, of value v at tau, parks: below the park level, not constant; pages of other kinds
        than Greedy (whose keys are bounds, not the exact time) only below it by a margin more, so that they
        do not close in on the level a park at a time."""
        if self.pages.kind == GREEDY:
            return parks(&self.park, &self.pages.records[j], v, tau)
        if self.pages.kind == POLLED and polled_greedy(&self.pages, j):
            # pages with Greedy's value park as Greedy's (its exact key, from ell); the other polled pages as the
            # other kinds (their keys, polled_park_time, are bounds too)
            return parks(&self.park, &self.pages.records[j], v, tau)
        return (parks(&self.park, &self.pages.records[j], v, tau) and v < self.park.level * (1.0 - self.park.margin)
                and (self.pages.kind == POLLED or page_alpha(&self.pages, j) > 0.0))

    cdef inline double _park_key(self, Py_ssize_t j, double t, double v, double tau, double psi, double b
                                 ) noexcept nogil:
        """The key of page j, of value v at time t (tau_j = tau, psi_j(tau) <= psi, b_j = b), parking: Greedy's
        exact inverse, else the time its bounds reach the level (``reach_time``)."""
        if self.pages.kind == GREEDY or (self.pages.kind == POLLED and polled_greedy(&self.pages, j)):
            return park_key(&self.park, &self.pages.records[j])
        if self.pages.kind == POLLED:
            return polled_park_time(&self.pages, j, t, v, tau, self.park.level)
        return reach_time(t, tau, v, psi, page_alpha(&self.pages, j), self.pages.records[j].importance,
                          self.park.level, key_pad(&self.pages, j, t, b))

    cdef int _put(self, Py_ssize_t j, double t, double v, double tau, double ex, double bj) noexcept nogil:
        """Push page j (in no bucket) of value v at time t (tau_j = tau; ex and bj = b_j as ``value_at`` gives
        them): parked, or with its line; -1 if memory is exhausted (nothing changed)."""
        cdef double key
        # (POLLED: its lines and park keys bound psi themselves, polled_psi_bar; not computed here)
        cdef double psi = interval_bound(&self.pages, j, tau, bj) if self.pages.kind != POLLED else 0.0
        cdef int b
        if self._parks(j, v, tau):
            key = self._park_key(j, t, v, tau, psi, bj)
            if key == key:  # (NaN: no key; the page keeps a line)
                if buckets_push(&self.buckets, j, PARK if key <= self.park.horizon else FAR, key) < 0:
                    return -1
                if self.rekey != NULL:  # (a park key moves later after unmoved polls as a line's key does)
                    self._rekey_set(j, t, self.pages.records[j].last_crawl)
                return 0
        b = page_line(&self.pages, j, t, v, tau, ex, psi, bj, self.buckets.slope_table, self.last_winning_value,
                      self.log_last_winning_value, self.buckets.calendar.rate, &key)
        if buckets_push(&self.buckets, j, b, key) < 0:
            return -1
        if self.rekey != NULL:
            self._rekey_set(j, t, self.pages.records[j].last_crawl)
        return 0

    cdef inline double _ell(self, Py_ssize_t j) noexcept nogil:
        """Page j's effective start ``ell`` as a pop reads it (polled): synced to its poll group's polls first."""
        self._sync_polls(j)
        return self.pages.records[j].last_crawl

    cdef inline void _rekey_set(self, Py_ssize_t j, double t0, double ell0) noexcept nogil:
        """Page j's key anchored at (t0, ell0) (each rounded up: a later anchor shifts the key less; inf: none)."""
        self.rekey[2 * j] = _float_up(t0)
        self.rekey[2 * j + 1] = _float_up(ell0)

    cdef inline void _mark_rekeyed(self, Py_ssize_t n, Py_ssize_t j, double rk, double rd, Py_ssize_t source,
                                   double key) noexcept nogil:
        """Popped page j (the ``n``-th), popped from ``source`` where its key was ``key``, goes back at the tick's
        end with the key ``rk``, its anchor moved by ``rd``, not evaluated (``popped.value`` -inf is the mark)."""
        self.popped.id[n] = <int32_t>j
        self.popped.value[n] = -INFINITY
        self.popped.exp[n] = rk
        self.popped.beta[n] = rd
        self.popped.source[n] = <bucket_t>source
        self.popped.key[n] = key

    cdef inline double _rekey_shift(self, Py_ssize_t j, double t) noexcept nogil:
        """How much later the key of page j (polled, in a slope bucket, anchored) may move at time t: ``D =
        min(ell - ell0, t - t0)`` (0 if none; inf anchors give none).

        Its key was put at t0 from ``V(s0)``, ``s0 = Delta (t0 - ell0)``, as a line in the bucket's family
        (``g(V(s)) <= c + S (s - s0)`` for ``s >= s0``, ``g`` V, ln V or sqrt V; ``V(s) <= V(s0)`` below ``s0``,
        ``g(V(s0)) <= c``) whose bucket slope ``sb >= S Delta``: ``g(V) <= c + sb (t' - t0)`` while ``ell``
        stays (the bucket's bound ``sb (t' - key)`` at least that).  A moved poll lowering ``ell`` by ``d``
        moves the key earlier by ``d`` and the anchor too (``_shift_earlier``).  Unmoved polls raise ``ell``
        (``s`` at ``t'`` is ``Delta (t' - ell)``): with ``D <= ell - ell0``, ``c + sb (t' - t0 - D) >= c + S
        (s(t') - s0)`` where ``s(t') >= s0``, and with ``D <= t - t0 <= t' - t0`` it is at least ``c`` for every
        ``t' >= t``, which bounds ``g(V)`` where ``s(t') < s0``: the key moved later by ``D`` bounds ``g(V)``
        from t on.  (Without the cap ``t - t0`` the line falls below ``c`` before ``s0``: not a bound.)  The
        anchors are rounded up (float32), so D is at most the exact one."""
        cdef double t0 = self.rekey[2 * j], e0 = self.rekey[2 * j + 1], d
        d = self._ell(j) - e0
        if t - t0 < d:
            d = t - t0
        return d if d > 0.0 else 0.0

    cdef int _place(self, Py_ssize_t j, double t) noexcept nogil:
        """Evaluate live page j (in no bucket) at time t and push it (parked, or with its line); -1 if memory is
        exhausted, NO_VALUE if its value cannot be computed (the page then in no bucket)."""
        cdef double tau, ex, b, v
        self._sync_polls(j)
        tau = page_tau(&self.pages, j, t)
        v = self._value(j, tau, &ex, &b)
        if v != v:
            return NO_VALUE
        return self._put(j, t, v, tau, ex, b)

    # -- ticks -------------------------------------------------------------------
    cdef int _build(self, double t) noexcept nogil:
        """Evaluate every live page at t (a large polled lattice: its closed-form bound) and fill the buckets (the
        first tick, O(m)); -1 if memory is exhausted,
        NO_VALUE if a page's value cannot be computed (nothing changed but the evaluation count)."""
        cdef Py_ssize_t j
        cdef double tau, v, ex, b, lv, lo, vmax = 0.0
        cdef Park park = self.park
        cdef bucket_t* code = self.buckets.code
        cdef double* keys = <double*>freshcore_malloc(self.n_ids * sizeof(double))
        # Greedy's e^{-Delta tau} of each value, for its lines (page_line would compute it again: one exp a page;
        # without the room, it does)
        cdef double* exs = (<double*>freshcore_malloc(self.n_ids * sizeof(double))
                            if self.pages.kind == GREEDY and keys != NULL else NULL)
        if keys == NULL:
            return -1
        for j in range(self.n_ids):
            if code[j] == DEAD:
                continue
            self._sync_polls(j)
            tau = page_tau(&self.pages, j, t)
            v = NAN
            if self._bounded_first(j, tau):
                # a large lattice: its closed-form bound places it (every line and park key bounds V from any
                # v0 >= V(s0)); the pages near the top get their lattice bound or value when popped
                v = value_upper_at(&self.pages, j, tau, True, &lo)
                if not (v < INFINITY):
                    v = NAN
            if v != v:
                v = self._value(j, tau, &ex, &b)
            keys[j] = v
            if exs != NULL:
                exs[j] = ex
            if keys[j] > vmax:
                vmax = keys[j]
        if self.failed_page >= 0:
            free(keys)
            free(exs)
            return NO_VALUE
        # the first winning value is at most vmax (the largest value, or closed-form bound: polled): the park starts
        # moving from it
        park_start(&self.park, vmax, self.n_ticks, self.n_live)
        lv = log(vmax)
        for j in range(self.n_ids):
            if code[j] == DEAD:
                continue
            tau = page_tau(&self.pages, j, t)
            v = keys[j]
            # no page parks (the park starts moving): the lines chosen for vmax as the last winning value
            b = signal_time(&self.pages, j)
            code[j] = <bucket_t>page_line(&self.pages, j, t, v, tau, exs[j] if exs != NULL else -1.0,
                                          interval_bound(&self.pages, j, tau, b), b,
                                          self.buckets.slope_table, vmax, lv, self.buckets.calendar.rate,
                                          &keys[j])
            if self.rekey != NULL:
                self._rekey_set(j, t, self.pages.records[j].last_crawl)
        free(exs)
        if buckets_fill(&self.buckets, self.n_ids, keys) < 0:
            for j in range(self.n_ids):
                if code[j] != DEAD:
                    code[j] = NOT_PLACED
            self.park = park
            free(keys)
            return -1
        free(keys)
        self.built = True
        return 0

    cdef inline bint _evaluate(self, Py_ssize_t j, double t, Py_ssize_t source, double key, Py_ssize_t* pn,
                               double* bv, Py_ssize_t* best, Py_ssize_t* nwait, double prio) noexcept nogil:
        """Evaluate page j at t, popped from bucket source where its key was key (room made by the caller),
        keep it (the ``pn[0]``-th popped page) and the best so far; whether it is the new best.  (The page is
        first synced to its poll group's polls, ``_sync_polls``: every evaluation of a popped page comes here.)

        The polled kind computes a bound of V first where its lattice is large (``tau`` past ``BOUND_WINDOWS``
        poll windows; ``value_upper_at``: the CDF sums to ~1e-6, about half its cost there; counted as an evaluation:
        on a few windows it costs as much as the value, 5% more time at w = 1).  A parked page (source PARK or
        FAR) gets the closed-form bound instead (``value_upper_at``'s ``closed_form``, not counted) and, if that
        reaches the best value, waits with it: its lattice bound comes at ``_resolve``, when the best value has
        grown.  Below the
        best value, the page has lost whatever its value, and goes back with the bound as its value (its lines
        and park key bound V
        from any ``v0 >= V(s0)``: ``_schedule_lines.polled_page_line``).  Else it waits with its bound
        (``popped.wait[:nwait]``) and ``prio = min(bound, prio)`` (``prio``: the bound of its line at the pop, inf
        if none): ``_resolve`` evaluates it once no line's bound reaches its prio and no waiting page's prio is
        above it, and most never are (the best value passes their bounds first); one whose lower bound
        (``popped.lower``, kept with the lattice bound) passes the best value is taken without its value.  A NaN
        bound: its value at once.

        Order: lines leave the heaps in (key, id) order, but the calendar's pages and a fall's parked pages come
        in an order a restored state does not keep.  Had they been evaluated at once, one could raise the best
        value before another's bound was compared with it: that loser would keep its bound or its value as the
        order fell, and a restored run would leave the uninterrupted one.  They wait instead, and are taken by
        prio (then id); a waiting page is taken only when its prio is strictly above every line left, and its prio
        is at most the line it was popped at, so never inside a run of tied lines."""
        cdef double ex, b, v, tau, lo
        cdef Py_ssize_t n = pn[0]
        cdef bint waits = False, cheap
        self._sync_polls(j)
        tau = page_tau(&self.pages, j, t)
        v = NAN
        ex, b = -1.0, 0.0
        self.popped.id[n] = <int32_t>j  # (first: the waiting heap orders ties by it)
        if self._bounded_first(j, tau):
            # a parked page (popped at the tick's start, before any value, or in a fall) gets the closed-form
            # bound (not counted) and, if it waits, its lattice bound only later (ex = STAGE_CHEAP; _resolve)
            cheap = source == PARK or source == FAR
            v = value_upper_at(&self.pages, j, tau, cheap, &lo)
            self.popped.lower[n] = lo
            if v == v:
                if not cheap:
                    self.n_evaluations += 1
                if not (v < bv[0]):
                    waits = True
                    if cheap:
                        ex = STAGE_CHEAP
                    self.popped.prio[n] = v if v < prio else prio
                    wait_push(&self.popped, nwait, <int32_t>n)
        if v != v:
            v = self._value(j, tau, &ex, &b)
        self.popped.value[n] = v
        self.popped.exp[n] = ex
        self.popped.beta[n] = b
        self.popped.source[n] = <bucket_t>source
        self.popped.key[n] = key
        pn[0] = n + 1
        return False if waits else self._better_p(j, v, t, bv, best)

    cdef inline bint _bounded_first(self, Py_ssize_t j, double tau) noexcept nogil:
        """Whether polled page j at ``tau`` (synced) gets a bound before its value (``_evaluate``, ``_build``): a
        lattice page past ``BOUND_WINDOWS`` poll windows, not of Greedy's value, that changes."""
        return (self.pages.kind == POLLED and tau > BOUND_WINDOWS * self.pages.poll_interval[j]
                and self.pages.records[j].change_rate != 0.0 and not polled_greedy(&self.pages, j))

    cdef inline bint _better_p(self, Py_ssize_t j, double v, double t, double* bv, Py_ssize_t* best) noexcept nogil:
        """``_better`` of page j of value v, the best page's value computed first if it was taken on its bounds
        and v may reach it (``v >= bv``: ``bv`` is then its lower bound)."""
        if self.prov >= 0 and not (v < bv[0]):
            self._settle_prov(t, bv)
        return _better(j, v, bv, best)

    cdef void _settle_prov(self, double t, double* bv) noexcept nogil:
        """The value of the best page taken on its bounds (``prov``), which becomes the best value (it is at
        least the lower bound that was); if it cannot be computed (the tick then fails) the lower bound stays."""
        cdef double v = self._value_into(self.prov, t)
        self.prov = -1
        if v == v:
            bv[0] = v

    cdef inline double _value_into(self, Py_ssize_t n, double t) noexcept nogil:
        """The value at t of the ``n``-th popped page, kept in ``popped`` (its value, exp and beta); returned."""
        cdef Py_ssize_t j = self.popped.id[n]
        cdef double ex, b
        cdef double v = self._value(j, page_tau(&self.pages, j, t), &ex, &b)
        self.popped.value[n] = v
        self.popped.exp[n] = ex
        self.popped.beta[n] = b
        return v

    cdef inline bint _resolve(self, Py_ssize_t* nwait, double t, double* bv, Py_ssize_t* best) noexcept nogil:
        """Evaluate the waiting heap's top (``_waiting_top``: ``popped.wait[0]``), which leaves the heap: its value
        replaces its bound; whether it is the new best.  A page with its closed-form bound only (``popped.exp``
        ``STAGE_CHEAP``) gets its lattice bound instead and stays (False).  A page whose lower bound is above the
        best value, and above the upper bound of a best page taken on its bounds, is the new best without its
        value (``prov``: the best value is its lower bound, its value keeps its upper bound)."""
        cdef Py_ssize_t n = self.popped.wait[0], j = self.popped.id[n]
        cdef double v, lo
        if self.popped.exp[n] == STAGE_CHEAP:
            # its lattice bound (sums to ~1e-6): it waits on with it (the smaller of its two bounds) as its value
            # and prio, or leaves the list at the next look if that is below the best value
            self.popped.exp[n] = -1.0
            v = value_upper_at(&self.pages, j, page_tau(&self.pages, j, t), False, &lo)
            self.popped.lower[n] = lo
            if v == v:
                self.n_evaluations += 1
                if v < self.popped.value[n]:
                    self.popped.value[n] = v
                if self.popped.value[n] < self.popped.prio[n]:
                    self.popped.prio[n] = self.popped.value[n]
                    wait_sift_down(&self.popped, nwait[0], 0)
                return False
        wait_pop(&self.popped, nwait)
        lo = self.popped.lower[n]
        if lo > bv[0] and (self.prov < 0 or lo > self.popped.value[self.prov]):
            # its lower bound passes the best value (and the upper bound of a best page taken on its bounds): it is
            # the best whatever its value, taken on its bounds (its value only if a later page may reach it:
            # _better_p); the one it passes keeps its upper bound as its value
            self.prov = n
            bv[0] = lo
            best[0] = j
            return True
        return self._better_p(j, self._value_into(n, t), t, bv, best)

    cdef inline bint _waiting_top(self, Py_ssize_t* nwait, double bv, Py_ssize_t best, double* u) noexcept nogil:
        """Of the waiting pages whose bound reaches the best value (above it, or equal with a lower id), whether any
        is left; the heap's top is then the one of the largest prio (ties: the lower id), its prio in ``u[0]``.
        Those on top that no longer reach it leave the heap (lost: their bound is their value; the best value only
        grows, so one that does not reach it never will, and a page below the top that does not is dropped when it
        comes up: the top among those that reach it is the same).  O(log n) a page, where a scan of the list was
        O(n) a look and O(n^2) a tick: 215 s of the first 5000 decisions at 10^6 pages (a fall's every parked
        page waiting)."""
        cdef Py_ssize_t n, j
        cdef double v
        while nwait[0] > 0:
            n = self.popped.wait[0]
            v = self.popped.value[n]
            j = self.popped.id[n]
            if v > bv or (v == bv and j < best):
                u[0] = self.popped.prio[n]
                return True
            wait_pop(&self.popped, nwait)
            self.popped.exp[n] = -1.0  # (lost with its bound as its value)
        u[0] = -INFINITY
        return False

    cdef void _resolve_all(self, Py_ssize_t* nwait, double t, double* bv, Py_ssize_t* best) noexcept nogil:
        """Every waiting page that reaches the best value evaluated, in the order of their prios (no line left)."""
        cdef double u
        while self._waiting_top(nwait, bv[0], best[0], &u):
            self._resolve(nwait, t, bv, best)

    cdef void _park_lines(self, double t, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
        """A tick of the settle (the winning value has stopped moving): every page of the slope buckets b0 .. b1 - 1
        whose bound at t is below the park level parks (the tick has made room for them in FAR and the
        calendar), keyed by Greedy's exact time or, for the other kinds, the time its line reaches the level:
        into the calendar if due by the horizon, else into FAR.  (By whole buckets: one pass over each bucket's
        arrays, which keeps the pages that stay and heapifies them, where taking the pages out one at a time
        cost a sift each and a miss on the heap's entries; the same pages as in a state saved and loaded, which
        has the same pages in each bucket.)"""
        cdef Buckets* s = &self.buckets
        cdef Py_ssize_t b
        cdef double tpad = 8.0 * DBL_EPSILON * fabs(t), lim = self.park.level * (1.0 - 2.0 * PARK_SHADE)
        for b in range(b0, b1):
            if s.heaps[b].size > 0:
                self._settle_bucket(b, t, tpad, lim)

    cdef void _settle_bucket(self, Py_ssize_t b, double t, double tpad, double lim) noexcept nogil:
        """The settle of slope bucket b (``_park_lines``): its pages below lim park, the others stay, heapified.
        Greedy's keys are computed PARK_CHUNK pages at a time by the vector kernel (``park_x_many``) where there is
        one."""
        cdef Buckets* s = &self.buckets
        cdef Heap* h = &s.heaps[b]
        cdef PageRecord* rec = self.pages.records
        cdef int32_t* ids = h.ids
        cdef double* keys = h.keys
        cdef Py_ssize_t i, w = 0, n = h.size, k = 0
        cdef int32_t j
        cdef double key, y
        cdef bint greedy = self.pages.kind == GREEDY, batch = greedy and _park_x_level >= 0
        cdef int32_t cid[PARK_CHUNK]
        cdef double cy[PARK_CHUNK]
        cdef double cc[PARK_CHUNK]
        cdef double cx[PARK_CHUNK]
        for i in range(n):
            if i + SETTLE_AHEAD < n:
                FRESHCORE_PREFETCH(&rec[ids[i + SETTLE_AHEAD]])
                FRESHCORE_PREFETCH(&s.code[ids[i + SETTLE_AHEAD]])
            j = ids[i]
            key = keys[i]
            if not self._below_park(b, key, t, tpad, lim):
                ids[w] = j
                keys[w] = key
                rec[j].entry = <int32_t>w
                w += 1
                continue
            if batch:  # Greedy's exact key, for PARK_CHUNK pages at once
                y = park_share(rec[j].change_rate, rec[j].importance, self.park.level)
                cid[k] = j
                cy[k] = y
                cc[k] = y if y < 1.0 else 0.5
                k += 1
                if k == PARK_CHUNK:
                    park_x_many(cc, cx, k)
                    self._settle_keys(cid, cy, cx, k)
                    k = 0
                continue
            # Greedy (and the polled pages of Greedy's value, whose lines may bound ln V, which line_park_time does
            # not read): the exact key; the others: where their line reaches the level
            if greedy or polled_greedy(&self.pages, j):
                self._sync_polls(j)  # (under "polled": ell synced to the page's group polls)
                key = park_key(&self.park, &rec[j])
            else:
                key = line_park_time(s.slope_table, b, key, self.park.level)
            self._settle_put(j, key)
        if k > 0:
            park_x_many(cc, cx, k)
            self._settle_keys(cid, cy, cx, k)
        h.size = <int32_t>w
        if w == 0:
            tops_remove(&s.tops, b)
        else:
            heap_heapify(h, rec)
            buckets_set_top(s, b)
        if buckets_oversized(s, b):  # (a best effort: most of its pages left)
            heap_resize(h, (w + w // 16 + 4 - HEAP_LEAD) if w > 0 else 0)

    cdef void _settle_keys(self, const int32_t* cid, const double* cy, const double* cx, Py_ssize_t k) noexcept nogil:
        """Park the settle's Greedy pages cid[:k], of park shares cy[:k] and x = residual1_inverse in cx[:k]."""
        cdef Py_ssize_t a
        cdef int32_t j
        for a in range(k):
            j = cid[a]
            self._settle_put(j, park_time_at(self.pages.records[j].last_crawl, self.pages.records[j].change_rate,
                                             cy[a], cx[a]))

    cdef inline void _settle_put(self, int32_t j, double key) noexcept nogil:
        """Park page j (taken out of its slope bucket) with this key: into the calendar if due by the horizon, else
        into FAR (the tick made room in both)."""
        cdef Buckets* s = &self.buckets
        if key <= self.park.horizon:
            s.records[j].entry = <int32_t>calendar_push(&s.calendar, j, key)
            s.code[j] = PARK
        else:
            unsorted_append(&s.heaps[FAR], j, key, s.records)
            s.code[j] = FAR

    cdef void _lower(self, double t) noexcept nogil:
        """A tick of a lowering (``park_follow``): the parked pages of m/LOWER_SHARE + 256 page ids from
        park.lower - 1 on are evaluated and parked again for the new level, those that no longer park keyed at t
        (the next tick pops them), into FAR (a page of the calendar due by the horizon into the entry it left;
        the others due by it join the calendar at the next tick's move of it); once every id is done, the level
        the ticks' best values are checked against is the new one.  (After the tick has succeeded, which made
        room for them in FAR.  A page
        whose value cannot be computed stays where it was, and the lowering waits there: it ends at the latest
        with the fall it was doing ahead, which raises the error.)"""
        cdef Buckets* s = &self.buckets
        cdef Py_ssize_t j, b, e = self._lower_end()
        cdef double key, v, tau, ex, bj
        for j in range(self.park.lower - 1, e):
            b = s.code[j]
            if b != PARK and b != FAR:
                continue
            self._sync_polls(j)
            tau = page_tau(&self.pages, j, t)
            v = self._value(j, tau, &ex, &bj)
            if v != v:
                self.failed_page = -1
                self.park.lower = j + 1
                return
            key = t
            if self._parks(j, v, tau):
                key = self._park_key(j, t, v, tau, interval_bound(&self.pages, j, tau, bj), bj)
                if key != key:
                    key = t
            buckets_take(s, b, s.records[j].entry)
            if self.rekey != NULL:  # (its new key from its value at t)
                self._rekey_set(j, t, self.pages.records[j].last_crawl)
            if b == PARK and key <= self.park.horizon:  # (into the entry it has just left: no allocation)
                s.records[j].entry = <int32_t>calendar_push(&s.calendar, <int32_t>j, key)
                s.code[j] = PARK
            else:
                unsorted_append(&s.heaps[FAR], <int32_t>j, key, s.records)
                s.code[j] = FAR
                if key <= self.park.horizon:
                    self.park.horizon = -INFINITY  # (the next tick moves it, and this page to the calendar)
        if e < self.n_ids:
            self.park.lower = e + 1
        else:
            self.park.lower = 0
            self.park.fall_level = self.park.level

    cdef Py_ssize_t _lower_end(self) noexcept nogil:
        """The end (excluded) of the page ids this tick of a lowering re-keys."""
        cdef Py_ssize_t e = self.park.lower - 1 + self.n_live // LOWER_SHARE + 256
        return e if e < self.n_ids else self.n_ids

    cdef Py_ssize_t _settle_end(self) noexcept nogil:
        """The end (excluded) of the slope buckets this tick of the settle looks at: from park.settle on, whole
        buckets until they hold m/SETTLE_SHARE + 256 pages, or the last one."""
        cdef Py_ssize_t b = self.park.settle, n = 0, share = self.n_live // SETTLE_SHARE + 256
        while b < UNBOUNDED and n < share:
            n += self.buckets.heaps[b].size
            b += 1
        return b

    cdef Py_ssize_t _bucket_pages(self, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
        """The pages in buckets b0 .. b1 - 1."""
        cdef Py_ssize_t b, n = 0
        for b in range(b0, b1):
            n += self.buckets.heaps[b].size
        return n

    cdef inline bint _below_park(self, Py_ssize_t b, double key, double t, double tpad, double lim) noexcept nogil:
        """Whether the (inflated) bound at t of a page of slope bucket b with this key, as a bound of V, is below
        lim."""
        cdef double u = top_bound(self.buckets.slope_table, b, key, t, tpad)
        cdef int f = family_of(b)
        if f == 1:
            return exp(u) < lim
        if f == 2:
            return u * u < lim
        return u < lim

    cdef void _undo_tick(self, const TickUndo* u, Py_ssize_t pn, Py_ssize_t placed, Py_ssize_t best) noexcept nogil:
        """Put back a tick that ran out of memory: the first ``placed`` popped pages out of their new buckets,
        the winner's record and the scalars as they were, every popped page back where it was popped from
        with its key (room: they left it, and capacities shrink only once a tick has succeeded)."""
        cdef Py_ssize_t i
        for i in range(placed):
            buckets_remove(&self.buckets, self.popped.id[i])
            if self.rekey != NULL:  # (its anchor as it was: the tick kept it in value and exp)
                self._rekey_set(self.popped.id[i], self.popped.value[i], self.popped.exp[i])
        if best >= 0:
            self.pages.records[best].last_crawl = u.winner_last_crawl
            self.pages.records[best].n_signals = u.winner_signals
            if self.pages.kind == POLLED:
                self.pages.crawl[best] = u.winner_crawl
                if self.g_label != NULL:
                    self.pages.last_poll[best] = u.winner_last_poll
                    self.g_seen[best], self.g_anchor[best] = u.winner_seen, u.winner_anchor
        self.tick, self.n_ticks, self.now = u.tick, u.n_ticks, u.now
        self.buckets.calendar.last_popped_tick = u.last_popped_tick
        self.n_evaluations, self.park = u.n_evaluations, u.park
        self.last_winning_value, self.log_last_winning_value = u.last_winning_value, u.log_last_winning_value
        for i in range(pn):
            if buckets_push(&self.buckets, self.popped.id[i], self.popped.source[i], self.popped.key[i]) < 0:
                self.broken = True  # (cannot happen: the room is there)

    cdef Py_ssize_t _step(self) noexcept nogil:
        """Crawl at the next tick; returns the page, or NO_MEMORY if memory is exhausted, NO_VALUE if the value of
        a page it evaluates cannot be computed (the state is then as before the call)."""
        cdef double t, tpad, u, bu, ul, uq, bv, lbv, qbv, key, mg, th0, th1, th2, rd, rk, ot = 0.0, oe = 0.0
        cdef Buckets* s = &self.buckets
        cdef int32_t* buckets
        cdef int32_t* cand
        cdef int32_t* cand_l
        cdef int32_t* cand_q
        cdef int32_t* fc
        cdef double* slopes
        cdef double* top_keys
        cdef double* bounds
        cdef double* cbound
        cdef double* cbound_l
        cdef double* cbound_q
        cdef double* fb
        cdef Py_ssize_t* fn
        cdef int32_t* heads
        cdef bint rejoined = False, fell, was_moving, waiting
        cdef Py_ssize_t o1, o2, nc, ncl, ncq, a, ba, bl, bq, fi, b, j, btop, best, pn, i, nfar, ncal, settle_end
        cdef Py_ssize_t nrk = 0, slot
        cdef int fam
        cdef TickUndo undo
        cdef double pu
        cdef Py_ssize_t nwait = 0
        undo.tick, undo.n_ticks, undo.now = self.tick, self.n_ticks, self.now
        undo.last_popped_tick, undo.n_evaluations = s.calendar.last_popped_tick, self.n_evaluations
        self.tick += 1
        self.n_ticks += 1
        t = calendar_time(&s.calendar, self.tick)
        self.now = t
        if not self.built:
            s.calendar.last_popped_tick = self.tick - 1
            a = self._build(t)
            if a < 0:
                self.tick, self.n_ticks, self.now = undo.tick, undo.n_ticks, undo.now
                s.calendar.last_popped_tick, self.n_evaluations = undo.last_popped_tick, undo.n_evaluations
                return NO_MEMORY if a == -1 else NO_VALUE
            # (a tick that fails after the build keeps it: the retry finds the same buckets)
            undo.last_popped_tick, undo.n_evaluations = s.calendar.last_popped_tick, self.n_evaluations
        undo.last_winning_value, undo.log_last_winning_value = self.last_winning_value, self.log_last_winning_value
        undo.park = self.park
        tpad = 8.0 * DBL_EPSILON * fabs(t)
        # candidates: the nonempty buckets whose top's bound reaches theta, a little below the last winning
        # value; the others are deferred, and looked at again only if the best value of this tick ends below
        # theta (as soon as every candidate left is below theta too: then they rejoin before the next pop).  At
        # the start of a tick every top's bound is within a few ticks' growth of the last winning value (any
        # above it was popped at the last tick), so theta keeps a handful of the scanned buckets.
        th0 = self.last_winning_value * (1.0 - PREFILTER)
        th1 = self.log_last_winning_value - PREFILTER  # for the lines bounding ln V
        th2 = sqrt(th0)  # for those bounding sqrt V
        # (the arrays in locals: the stores below would otherwise make the compiler reload them)
        buckets, slopes, top_keys, bounds = s.tops.buckets, s.tops.slopes, s.tops.top_keys, s.tops.bounds
        cand, cbound = s.tops.cand_buckets, s.tops.cand_bounds
        mg = BOUND_MARGIN
        o1, o2 = tops_offset(&s.tops, 1), tops_offset(&s.tops, 2)
        # the bounds of the tops (by position) and the candidates among them: those of lines bounding V in
        # cand/cbound[:nc], ln V in cand_l/cbound_l[:ncl], sqrt V in cand_q/cbound_q[:ncq] (each family's
        # argmax then takes no branch on the family)
        cand_l, cbound_l = cand + cand_offset(&s.tops, 1), cbound + cand_offset(&s.tops, 1)
        cand_q, cbound_q = cand + cand_offset(&s.tops, 2), cbound + cand_offset(&s.tops, 2)
        nc = freshcore_scan(slopes, top_keys, buckets, s.tops.count[0], t, tpad, mg, 0.0, th0, bounds, cand,
                            cbound, 0)
        ncl = freshcore_scan(slopes + o1, top_keys + o1, buckets + o1, s.tops.count[1], t, tpad, mg, 1.0, th1,
                             bounds + o1, cand_l, cbound_l, 0)
        ncq = freshcore_scan(slopes + o2, top_keys + o2, buckets + o2, s.tops.count[2], t, tpad, mg, 0.0, th2,
                             bounds + o2, cand_q, cbound_q, 0)
        nc = buckets_unscanned_candidates(s, t, tpad, th0, nc)
        # the candidates' top pages: fetched while the calendar's pages are evaluated
        for a in range(nc):
            FRESHCORE_PREFETCH(&self.pages.records[s.heaps[cand[a]].ids[0]])
        for a in range(ncq):
            FRESHCORE_PREFETCH(&self.pages.records[s.heaps[cand_q[a]].ids[0]])
        best = -1
        bv = -INFINITY
        lbv = -INFINITY
        qbv = -INFINITY
        pn = 0
        self.prov = -1
        if t >= self.park.horizon and s.heaps[FAR].size > 0:
            if park_advance(&self.park, s, t, self.n_live) < 0:
                self._undo_tick(&undo, 0, 0, -1)
                return NO_MEMORY
            undo.park.horizon = self.park.horizon
        # parked pages whose key has come (the calendar's list of this tick): they may have reached the park
        # level (evaluated, popped)
        if s.calendar.size > 0:
            heads = s.calendar.heads
            a = <Py_ssize_t>(self.tick & s.calendar.mask)
            i = heads[a]
            while i >= 0:
                if pn == self.popped.capacity and popped_reserve(&self.popped, pn + 1) < 0:
                    self._undo_tick(&undo, pn, 0, -1)
                    return NO_MEMORY
                j = s.calendar.entries[i].id
                key = s.calendar.entries[i].key
                FRESHCORE_PREFETCH(&self.pages.records[j])
                heads[a] = s.calendar.entries[i].next
                calendar_release(&s.calendar, i)
                self.pages.records[j].entry = -1
                s.code[j] = NOT_PLACED
                if self.rekey != NULL:
                    # unmoved polls since its park key was put (polled): the key later by _rekey_shift; if that is
                    # after t, the page is below the level at t and parks again with it at the tick's end, not
                    # evaluated (unless the tick falls: then it is evaluated with the other parked pages)
                    rd = self._rekey_shift(j, t)
                    if rd > 0.0:
                        rk = _shifted_key(key, rd, t)
                        if rk > t:
                            self._mark_rekeyed(pn, j, rk, rd, PARK, key)
                            pn += 1
                            nrk += 1
                            i = heads[a]
                            continue
                self._evaluate(j, t, PARK, key, &pn, &bv, &best, &nwait, INFINITY)
                i = heads[a]
            calendar_prefetch(&s.calendar, self.tick, self.pages.records, s.code,
                              self.pages.recall if self.pages.kind != GREEDY else NULL, self.pages.false_rate)
        s.calendar.last_popped_tick = self.tick
        if best >= 0:
            lbv = log(bv)
            qbv = sqrt(bv)
        while True:
            while nc + ncl + ncq > 0 or nwait > 0:
                # the largest bound among the lines bounding V, ln V and sqrt V (ties: the lower page id);
                # the bounds of ln V are compared with ln of the best value, those of sqrt V with its sqrt
                ba = bl = bq = -1
                bu = ul = uq = -INFINITY
                for a in range(nc):
                    u = cbound[a]
                    if ba < 0 or u > bu or (u == bu and s.heaps[cand[a]].ids[0] < s.heaps[cand[ba]].ids[0]):
                        ba, bu = a, u
                for a in range(ncl):
                    u = cbound_l[a]
                    if bl < 0 or u > ul or (u == ul and s.heaps[cand_l[a]].ids[0] < s.heaps[cand_l[bl]].ids[0]):
                        bl, ul = a, u
                for a in range(ncq):
                    u = cbound_q[a]
                    if bq < 0 or u > uq or (u == uq and s.heaps[cand_q[a]].ids[0] < s.heaps[cand_q[bq]].ids[0]):
                        bq, uq = a, u
                if ba >= 0 and not (bu > bv or (bu == bv and s.heaps[cand[ba]].ids[0] < best)):
                    ba = -1  # no line bounding V reaches the best value
                if bl >= 0 and not (ul > lbv or (ul == lbv and s.heaps[cand_l[bl]].ids[0] < best)):
                    bl = -1
                if bq >= 0 and not (uq > qbv or (uq == qbv and s.heaps[cand_q[bq]].ids[0] < best)):
                    bq = -1
                # the family whose bound, as a bound of V, is the largest
                fam, u = 0, bu if ba >= 0 else -INFINITY
                if bl >= 0 and exp(ul) > u:
                    fam, u = 1, exp(ul)
                if bq >= 0 and uq * uq > u:
                    fam, u = 2, uq * uq
                # a popped page waiting with its bound (polled) is evaluated once every line's bound is below its
                # prio (_evaluate)
                waiting = nwait > 0 and self._waiting_top(&nwait, bv, best, &pu)
                if waiting and (pu > u or (ba < 0 and bl < 0 and bq < 0)):
                    if self._resolve(&nwait, t, &bv, &best):
                        lbv = log(bv)
                        qbv = sqrt(bv)
                        nc = reaching(cand, cbound, nc, bv)
                        ncl = reaching(cand_l, cbound_l, ncl, lbv)
                        ncq = reaching(cand_q, cbound_q, ncq, qbv)
                    continue
                if ba < 0 and bl < 0 and bq < 0:
                    break  # every candidate left is below the best value (or equal with a higher id)
                if (not rejoined and (ba < 0 or bu < th0) and (bl < 0 or ul < th1) and (bq < 0 or uq < th2)
                        and not (bv >= th0 and lbv >= th1 and qbv >= th2)):
                    # every candidate left is below theta, and so is the best value: the deferred buckets rejoin
                    # before any of them is popped (else one bucket's pages below theta would all be popped
                    # ahead of a deferred bucket's above them: 130 000 caps a tick from CONSTANT at the start
                    # of 10^6 polled pages, the winner in a deferred line)
                    break
                pu = u  # (the popped line's bound, as a bound of V: the prio of a wait)
                if fam == 0:
                    fc, fb, fn, fi = cand, cbound, &nc, ba
                elif fam == 1:
                    fc, fb, fn, fi = cand_l, cbound_l, &ncl, bl
                else:
                    fc, fb, fn, fi = cand_q, cbound_q, &ncq, bq
                b = fc[fi]
                btop = s.heaps[b].ids[0]
                key = s.heaps[b].keys[0]
                # the page's record (one cache line) and the other kinds' fields: fetched while the heap is updated
                FRESHCORE_PREFETCH(&self.pages.records[btop])
                if self.pages.kind != GREEDY:
                    FRESHCORE_PREFETCH(&self.pages.recall[btop])
                    FRESHCORE_PREFETCH(&self.pages.false_rate[btop])
                if pn == self.popped.capacity and popped_reserve(&self.popped, pn + 1) < 0:
                    self._undo_tick(&undo, pn, 0, -1)
                    return NO_MEMORY
                buckets_take(s, b, 0)
                if s.heaps[b].size > 0:
                    u = buckets_top_bound(s, b, t, tpad)
                    fb[fi] = u
                    if s.tops.position[b] >= 0:
                        bounds[s.tops.position[b]] = u  # (its new top's bound, for a rejoin)
                else:
                    fn[0] -= 1
                    fc[fi] = fc[fn[0]]
                    fb[fi] = fb[fn[0]]
                if self.rekey != NULL and best >= 0 and b != CONSTANT and b < UNBOUNDED:
                    # unmoved polls since its time key was put (polled, a line): the key later by _rekey_shift;
                    # if its bound at t is then below the best value, back into its bucket with that key at the
                    # tick's end, not evaluated
                    rd = self._rekey_shift(btop, t)
                    if rd > 0.0:
                        rk = _shifted_key(key, rd, t)
                        if rk > key and self._below_park(b, rk, t, tpad, bv):
                            self._mark_rekeyed(pn, btop, rk, rd, b, key)
                            pn += 1
                            continue
                if self._evaluate(btop, t, b, key, &pn, &bv, &best, &nwait, pu):
                    lbv = log(bv)
                    qbv = sqrt(bv)
                    # the best value only grows: drop the candidates that can no longer reach it
                    nc = reaching(cand, cbound, nc, bv)
                    ncl = reaching(cand_l, cbound_l, ncl, lbv)
                    ncq = reaching(cand_q, cbound_q, ncq, qbv)
            if rejoined or (bv >= th0 and lbv >= th1 and qbv >= th2):
                break  # every deferred bound is below theta (ln theta, sqrt theta), so below the best value
            # the best value ended below theta: every nonempty bucket whose top's bound reaches it rejoins (the
            # candidates left are below it: the search over them has ended).  bounds holds the bounds at t: a
            # deferred bucket is untouched since the scan, a popped one's was updated, and a bucket emptied
            # since is no longer scanned (the last one of its family took its place)
            nc = freshcore_pick(bounds, buckets, s.tops.count[0], bv, cand, cbound, 0)
            ncl = freshcore_pick(bounds + o1, buckets + o1, s.tops.count[1], lbv, cand_l, cbound_l, 0)
            ncq = freshcore_pick(bounds + o2, buckets + o2, s.tops.count[2], qbv, cand_q, cbound_q, 0)
            nc = buckets_unscanned_candidates(s, t, tpad, bv, nc)
            rejoined = True
        nfar = s.heaps[FAR].size
        if self.prov >= 0 and s.calendar.size + nfar + nrk > 0 and not (bv >= self.park.fall_level):
            # (the best page's lower bound is below the park level: its value decides whether the tick falls)
            self._settle_prov(t, &bv)
            lbv = log(bv)
            qbv = sqrt(bv)
        fell = s.calendar.size + nfar + nrk > 0 and not (bv >= self.park.fall_level)
        if fell:
            # the best value ended below the park level, which bounds only the parked pages not yet due: every
            # parked page is evaluated (O(parked); the level is then lowered), those re-keyed at their pop too
            if popped_reserve(&self.popped, pn + s.calendar.size + nfar) < 0:
                self._undo_tick(&undo, pn, 0, -1)
                return NO_MEMORY
            self.park.n_unparks += 1
            if nrk > 0:
                for i in range(pn):
                    if self.popped.value[i] == -INFINITY and self.popped.source[i] == PARK:
                        slot = i  # (evaluated in its place: _evaluate keeps it in that slot)
                        self._evaluate(self.popped.id[i], t, PARK, self.popped.key[i], &slot, &bv, &best, &nwait,
                                       INFINITY)
            for i in range(s.calendar.top + nfar):
                # (the pages come in no order of their ids: each one's record, a miss, fetched FALL_AHEAD on)
                if i + FALL_AHEAD < s.calendar.top:
                    if s.calendar.entries[i + FALL_AHEAD].id >= 0:
                        self._prefetch_page(s.calendar.entries[i + FALL_AHEAD].id)
                elif i + FALL_AHEAD < s.calendar.top + nfar:
                    self._prefetch_page(s.heaps[FAR].ids[i + FALL_AHEAD - s.calendar.top])
                if i < s.calendar.top:
                    j, b, key = s.calendar.entries[i].id, PARK, s.calendar.entries[i].key
                else:
                    j, b, key = s.heaps[FAR].ids[i - s.calendar.top], FAR, s.heaps[FAR].keys[i - s.calendar.top]
                if j >= 0:  # (a free calendar entry: -1)
                    self.pages.records[j].entry = -1
                    s.code[j] = NOT_PLACED
                    self._evaluate(j, t, b, key, &pn, &bv, &best, &nwait, INFINITY)
            self._resolve_all(&nwait, t, &bv, &best)  # (in the order of their bounds: not the calendar's)
            calendar_empty(&s.calendar)  # (the memory is kept until the tick has succeeded)
            s.heaps[FAR].size = 0  # (its capacity is kept: most pages are parked again below)
            self.park.horizon = -INFINITY
            lbv = log(bv)
            qbv = sqrt(bv)
        if self.failed_page >= 0:  # a popped page's value could not be computed (and is not the best): no tick
            self._undo_tick(&undo, pn, 0, -1)
            return NO_VALUE
        was_moving = self.park.moving
        if bv > 0.0:
            park_follow(&self.park, bv, fell, s.calendar.size + s.heaps[FAR].size + nrk > 0, self.n_ticks,
                        self.n_live)
        if self.park.moving:
            self.park.settle = 0  # (a settle under way stops: while the winning value moves, no page parks)
        elif was_moving:
            self.park.settle = 1  # settled: the pages of the slope buckets below the level park, bucket 1 on
        settle_end = 0
        if self.park.settle > 0 or self.park.lower > 0:
            # this tick's shares of the settle and of a lowering park once the tick has succeeded (_park_lines,
            # _lower): room for every page of their ids and the popped pages in FAR now, so that the tick fails
            # here or not (those due by the horizon join the calendar at the next tick's move of it)
            # (the popped pages may take room first; the settle adds at most the pages of its ids in the slope
            # buckets, the lowering at most those in the calendar: its FAR pages leave FAR before they go back)
            nfar = pn
            ncal = 0
            if self.park.settle > 0:
                settle_end = self._settle_end()
                ncal = self._bucket_pages(self.park.settle, settle_end)
                nfar += ncal
            if self.park.lower > 0:
                nfar += min(self._lower_end() - (self.park.lower - 1), s.calendar.size + pn)
            if s.heaps[FAR].size + nfar > s.heaps[FAR].capacity:
                if self.park.settle > 0:  # (room for every page the settle may park: FAR grows once, not each tick)
                    nfar += self._bucket_pages(settle_end, UNBOUNDED)
                if buckets_grow(s, FAR, s.heaps[FAR].size + nfar) < 0:
                    self._undo_tick(&undo, pn, 0, -1)
                    return NO_MEMORY
            # (the settle's pages due by the horizon go into the calendar: room for them and the popped pages)
            if ncal > 0 and calendar_reserve(&s.calendar, ncal + pn) < 0:
                self._undo_tick(&undo, pn, 0, -1)
                return NO_MEMORY
        # crawl the winner; every popped page goes back, parked or with its line from t
        self.last_winning_value = bv
        self.log_last_winning_value = lbv
        undo.winner_last_crawl = self.pages.records[best].last_crawl
        undo.winner_signals = self.pages.records[best].n_signals
        if self.pages.kind == POLLED:  # the crawl starts s at 0 (ell = c = t); the last poll is kept
            undo.winner_crawl = self.pages.crawl[best]
            if self.g_label != NULL:  # (its group's polls its own first: its last poll is the group's)
                undo.winner_last_poll, undo.winner_seen = self.pages.last_poll[best], self.g_seen[best]
                undo.winner_anchor = self.g_anchor[best]
                self._own_polls(best)
            self.pages.crawl[best] = t
        self.pages.records[best].last_crawl = t
        self.pages.records[best].n_signals = 0
        if self.pages.kind == POLLED:
            self._anchor(best)
        for i in range(pn):
            j = self.popped.id[i]
            if i + FALL_AHEAD < pn:  # (after a fall, pn is every parked page: their records fetched ahead)
                self._prefetch_page(self.popped.id[i + FALL_AHEAD])
            if self.rekey != NULL:
                ot, oe = self.rekey[2 * j], self.rekey[2 * j + 1]
            if j == best:
                # the winner at tau = t - last = 0 (no signal counted): V(0) = 0 and psi(0) = 0 for every kind,
                # not evaluated
                a = self._put(j, t, 0.0, 0.0, -1.0, self.popped.beta[i])
            elif self.popped.value[i] == -INFINITY:
                # re-keyed at its pop: back into its bucket with the later key, its anchor moved as much (a parked
                # page into the calendar if due by the horizon, else FAR)
                b = self.popped.source[i]
                if b == PARK and not (self.popped.exp[i] <= self.park.horizon):
                    b = FAR
                a = buckets_push(&self.buckets, j, b, self.popped.exp[i])
                if a >= 0:
                    self._rekey_set(j, <double>self.rekey[2 * j] + self.popped.beta[i],
                                    <double>self.rekey[2 * j + 1] + self.popped.beta[i])
            else:
                a = self._put(j, t, self.popped.value[i], page_tau(&self.pages, j, t), self.popped.exp[i],
                              self.popped.beta[i])
            if a < 0:
                self._undo_tick(&undo, pn, i, best)
                return NO_MEMORY if a == -1 else NO_VALUE
            if self.rekey != NULL:  # (its anchor before the tick, should it be undone; value and exp are used)
                self.popped.value[i], self.popped.exp[i] = ot, oe
        # the tick has succeeded: Greedy's pages park if the winning value has stopped moving; oversized arrays
        # shrink (each a best effort)
        if self.park.settle > 0:
            self._park_lines(t, self.park.settle, settle_end)
            self.park.settle = settle_end if settle_end < UNBOUNDED else 0
            if self.park.settle == 0:
                # FAR grew at once for every page of the slope buckets; those that stayed (16% of 10^7 exact pages
                # from the staggered start, 2 bytes a page) give their room back (a best effort, one copy)
                if s.heaps[FAR].capacity > s.heaps[FAR].size + s.heaps[FAR].size // 16 + 64:
                    buckets_grow(s, FAR, s.heaps[FAR].size)
                freshcore_trim()  # (the heaps' memory back to the system: most pages left them)
        if self.park.lower > 0:
            self._lower(t)
        buckets_shrink(s)
        if fell:
            calendar_clear(&s.calendar)
        if self.popped.capacity > 256 and 8 * pn < self.popped.capacity:  # a start-up transient's buffer is not kept
            popped_resize(&self.popped, 2 * pn if 2 * pn > 256 else 256)
        if self.prov >= 0:
            self.n_bound_wins += 1
        return best

    def step(self):
        """Crawl at the next tick; returns the page."""
        cdef Py_ssize_t best
        self._usable()
        with nogil:
            best = self._step()
        if best == NO_MEMORY:
            self.failed_page = -1  # (a page popped before memory ran out may have been noted)
            raise _no_memory("a tick (the scheduler is as before it)")
        if best == NO_VALUE:
            raise self._failed(" The tick is not taken: the scheduler is as before it.")
        return best

    def run(self, Py_ssize_t n, Py_ssize_t[::1] out):
        """out[:n] = the pages crawled at the next n ticks."""
        cdef Py_ssize_t i, best = 0
        self._usable()
        with nogil:
            for i in range(n):
                best = self._step()
                if best < 0:
                    break
                out[i] = best
        if best == NO_MEMORY:
            self.failed_page = -1
            raise _no_memory(f"tick {i + 1} of {n} (the first {i} were taken; the scheduler is at time {self.now!r})")
        if best == NO_VALUE:
            raise self._failed(f" At tick {i + 1} of {n}: the first {i} were taken; the scheduler is at time "
                               f"{self.now!r}.")

    def run_signalled(self, Py_ssize_t n, const Py_ssize_t[::1] pages, const double[::1] times,
                      Py_ssize_t[::1] out):
        """out[:n] = the pages crawled at the next n ticks, each signal (pages[i], times[i]) counted (signal) just
        before the first tick at or after its time, those after the last tick after it (pages, times and
        counts already validated, times non-decreasing)."""
        cdef Py_ssize_t k = 0, i = 0, ns = pages.shape[0], best = 0
        cdef int r = 0
        cdef double tn
        self._usable()
        with nogil:
            for k in range(n + 1):
                tn = calendar_time(&self.buckets.calendar, self.tick + 1) if k < n else INFINITY
                while i < ns and times[i] <= tn:
                    if i + SIGNAL_AHEAD < ns:
                        self._prefetch_page(pages[i + SIGNAL_AHEAD])
                    r = self._signal(pages[i], times[i])
                    if r < 0:
                        break
                    i += 1
                if r < 0 or k == n:
                    break
                best = self._step()
                if best < 0:
                    break
                out[k] = best
        where = f"the first {k} ticks were taken and the first {i} signals recorded; the scheduler is at time " \
                f"{self.now!r}"
        if r == -1 or best == NO_MEMORY:
            self.failed_page = -1
            raise _no_memory((f"signal {i + 1} of {ns}" if r == -1 else f"tick {k + 1} of {n}") + f" ({where})")
        if r == NO_VALUE:
            raise self._failed(f" At signal {i + 1} of {ns}: {where}.")
        if best == NO_VALUE:
            raise self._failed(f" At tick {k + 1} of {n}: {where}.")

    # -- signals ----------------------------------------------------------------
    cdef inline void _prefetch_page(self, Py_ssize_t j) noexcept nogil:
        """Fetch page j's record, parameters and bucket code ahead of a signal to it (a stream of signals
        prefetches the page SIGNAL_AHEAD signals on)."""
        FRESHCORE_PREFETCH(&self.pages.records[j])
        FRESHCORE_PREFETCH(&self.pages.recall[j])
        FRESHCORE_PREFETCH(&self.pages.false_rate[j])
        FRESHCORE_PREFETCH(&self.buckets.code[j])

    def signal(self, Py_ssize_t j, double t):
        """Count a signal of page j at time t (t >= last crawl, count below MAX_SIGNALS); False if discarded."""
        cdef int r
        self._usable()
        r = self._signal(j, t)
        if r == -1:
            raise _no_memory("a signal (not counted; the scheduler is as before it)")
        if r == NO_VALUE:
            raise self._failed(" The signal is not counted: the scheduler is as before it.")
        return r == 1

    def signals_ok(self, const Py_ssize_t[::1] pages, const double[::1] times):
        """Whether ``signal_many(pages, times)`` needs no check: the lengths agree, every id is live, every time is
        finite and not before its page's last crawl, and no page could pass MAX_SIGNALS (its count plus all n).
        False sends the caller to the checks that name the first bad index."""
        cdef Py_ssize_t i, j, n = pages.shape[0]
        cdef double t
        cdef bint ok = times.shape[0] == n
        with nogil:
            for i in range(n if ok else 0):
                j = pages[i]
                if j < 0 or j >= self.n_ids or self.buckets.code[j] == DEAD:
                    ok = False
                    break
                t = times[i]
                if not (t >= self.pages.records[j].last_crawl) or t == INFINITY or \
                        <double>self.pages.records[j].n_signals + <double>n > 4294967295.0:
                    ok = False
                    break
        return ok

    def signal_many(self, const Py_ssize_t[::1] pages, const double[::1] times, unsigned char[::1] out):
        """out[i] = signal(pages[i], times[i]), in order (pages, times and counts already validated)."""
        cdef Py_ssize_t i, n = pages.shape[0]
        cdef int r = 0
        self._usable()
        with nogil:
            for i in range(n):
                if i + SIGNAL_AHEAD < n:
                    self._prefetch_page(pages[i + SIGNAL_AHEAD])
                r = self._signal(pages[i], times[i])
                if r < 0:
                    break
                out[i] = r
        if r == -1:
            raise _no_memory(f"signal {i + 1} of {n} (the first {i} were recorded, the others not)")
        if r == NO_VALUE:
            raise self._failed(f" At signal {i + 1} of {n}: the first {i} were recorded, the others not.")

    cdef int _signal(self, Py_ssize_t j, double t) noexcept nogil:
        """1 if counted, 0 if discarded, -1 if memory is exhausted, NO_VALUE if the page's value cannot be computed
        (nothing changed then)."""
        cdef double b
        cdef int placed
        cdef PageRecord* r = &self.pages.records[j]
        if t - r.last_crawl < self.signal_delay:
            return 0
        r.n_signals += 1
        if not self.built:
            return 1
        b = signal_time(&self.pages, j)
        if b == 0.0:
            return 1  # tau unchanged
        placed = self._shift_earlier(j, b, b * <double>r.n_signals)
        if placed < 0:
            r.n_signals -= 1
            return placed
        return 1

    cdef int _shift_earlier(self, Py_ssize_t j, double d, double span) noexcept nogil:
        """Page j's tau has grown by d > 0 (a counted signal's b_j, a moved poll's rise over Delta; ``span``: the
        size of the shifts its tau holds, for the key's pad): its line (or a parked page's bounds) moves left by
        d, the key lowered (no evaluation); d = inf and the buckets without a time key (CONSTANT, UNBOUNDED)
        re-evaluate it at the current time.  0, or -1 if memory is exhausted, NO_VALUE if its value cannot be
        computed (its bucket and key as before then; the caller puts its own change back)."""
        cdef double key, new_key
        cdef Py_ssize_t k = self.buckets.code[j], i = self.pages.records[j].entry
        cdef int placed
        cdef long long evaluations
        if k == CONSTANT and self.pages.kind == POLLED:
            # a polled page's constant bound holds at every s (a constant value from s0 on, V not decreasing in
            # s, or the cap mu/Delta: polled_page_line), however far a moved poll raises s: nothing to do (a
            # third of the polled pages sit there at the bench's webs, and a re-evaluation each cost)
            return 0
        key = buckets_key_of(&self.buckets, j)
        if d == INFINITY or k == CONSTANT or k == UNBOUNDED:
            evaluations = self.n_evaluations
            buckets_take(&self.buckets, k, i)
            placed = self._place(j, self.now)
            if placed < 0:
                buckets_push(&self.buckets, j, k, key)  # (room: it has just left)
                self.n_evaluations = evaluations
                return placed
            buckets_shrink(&self.buckets)
            return 0
        if key == INFINITY:
            return 0  # parked, never to reach the level (its bound holds at every later tau)
        if self.rekey != NULL:  # (the anchor moves with the key)
            self._rekey_set(j, <double>self.rekey[2 * j] - d, <double>self.rekey[2 * j + 1] - d)
        # (pad for the larger shift held)
        new_key = (key - d) - 8.0 * DBL_EPSILON * (span + fabs(key))
        if k == FAR and new_key > self.park.horizon:
            self.buckets.heaps[FAR].keys[i] = new_key  # (an unsorted list)
            return 0
        if k == PARK or k == FAR:
            # due by the horizon: in the calendar (at the next tick if its new key has passed)
            buckets_take(&self.buckets, k, i)
            if buckets_push(&self.buckets, j, PARK, new_key) < 0:
                buckets_push(&self.buckets, j, k, key)  # (room: it has just left)
                return -1
            return 0
        key = new_key
        heap_sift_up(&self.buckets.heaps[k], i, <int32_t>j, key, self.pages.records)
        buckets_set_top(&self.buckets, k)
        return 0

    # -- polls (value kind "polled") ------------------------------------------------
    def polls_ok(self, const Py_ssize_t[::1] pages, double t):
        """Whether ``poll_many(pages, t, ...)`` needs no check of its ids and time: every id is live and t is not
        before its page's last poll (t itself checked by the caller).  False sends the caller to the checks that
        name the first bad index."""
        cdef Py_ssize_t i, j, n = pages.shape[0]
        cdef bint ok = self.pages.kind == POLLED
        with nogil:
            for i in range(n if ok else 0):
                j = pages[i]
                if j < 0 or j >= self.n_ids or self.buckets.code[j] == DEAD or not (t >= self._last_poll(j)):
                    ok = False
                    break
        return ok

    def poll_many(self, const Py_ssize_t[::1] pages, double t, const unsigned char[::1] moved):
        """Record the polls ``(pages[i], t, moved[i])`` in order (checked by the caller); returns how many raised
        a page's staleness (moved, with a part of the window after the crawl)."""
        cdef Py_ssize_t i, j, n = pages.shape[0], rose = 0
        cdef int r = 0
        cdef int32_t g
        self._usable()
        with nogil:
            for i in range(n):
                j = pages[i]
                self._own_polls(j)  # (its poll group's polls before this one its own: ell synced, p the group's)
                if self.g_label != NULL:
                    g = self.g_label[j]
                    if g >= 0 and self.g_top[g] < t:
                        self.g_top[g] = t
                r = self._poll(j, t, moved[i] != 0)
                if r < 0:
                    break
                rose += r
        if r == -1:
            raise _no_memory(f"poll {i + 1} of {n} (the first {i} were recorded, the others not)")
        if r == NO_VALUE:
            raise self._failed(f" At poll {i + 1} of {n}: the first {i} were recorded, the others not.")
        return rose

    cdef int _poll(self, Py_ssize_t j, double t, bint moved) noexcept nogil:
        """A poll of page j at t (not before its last poll; its group's polls already its own, ``_own_polls``): the
        last poll time set and, for a window that reaches
        past the crawl, the effective start moved (``poll_shift``).  A fall of s (not moved) needs nothing more:
        the value only falls, so every key and bound stays valid; a rise moves the key earlier by rise/Delta
        (``_shift_earlier``).  1 if s rose, 0 otherwise, -1 if memory is exhausted, NO_VALUE if the page's value
        cannot be computed (nothing changed then)."""
        cdef PageRecord* r = &self.pages.records[j]
        cdef double ell, c, p0, new_ell
        cdef int placed
        ell, c, p0 = r.last_crawl, self.pages.crawl[j], self.pages.last_poll[j]
        self.pages.last_poll[j] = t
        if not (t > c):
            return 0  # at or before the crawl: only the start of the next window
        new_ell = poll_shift(ell, c, p0, t, moved, r.change_rate, self.pages.recall[j], self.pages.false_rate[j])
        r.last_crawl = new_ell
        self._anchor(j)
        if not (new_ell < ell):
            return 0
        if not self.built:
            return 1
        placed = self._shift_earlier(j, ell - new_ell, fabs(ell) + fabs(new_ell))
        if placed < 0:
            r.last_crawl = ell
            self._anchor(j)
            self.pages.last_poll[j] = p0
            return placed
        return 1

    # -- poll groups: a group's unmoved polls applied lazily ---------------------------------------------------
    cdef inline void _sync_polls(self, Py_ssize_t j) noexcept nogil:
        """Page j's effective start brought up to its poll group's last poll: the group's polls since the page's
        last own event (its crawl, a poll of it alone or as moved, a change of parameters or group: ``seen``,
        ``anchor`` and its last poll ``p`` then) are unmoved windows whose lowerings of ``s`` add up to one
        window ``(p, T_G]`` (``ell += lambda l``, ``l`` its part after the crawl: ``poll_shift``), computed
        from the anchor, so the same bits whenever (and however often) it is called.  Every reader of a page's
        ``ell`` calls it first (an evaluation, a crawl, a poll, an update, the views); the keys need no sync:
        unmoved polls only lower V."""
        cdef int32_t g
        cdef double tg, c
        if self.g_label == NULL:
            return
        g = self.g_label[j]
        if g < 0 or self.g_seen[j] == self.g_polls[g]:
            return
        tg, c = self.g_time[g], self.pages.crawl[j]
        if tg > c:
            self.pages.records[j].last_crawl = poll_shift(self.g_anchor[j], c, self.pages.last_poll[j], tg, False,
                                                          self.pages.records[j].change_rate, self.pages.recall[j],
                                                          self.pages.false_rate[j])
        else:
            self.pages.records[j].last_crawl = self.g_anchor[j]

    cdef inline void _own_polls(self, Py_ssize_t j) noexcept nogil:
        """Before an own event of page j: its group's polls since its last one made its own (synced, its last
        poll the group's, its count the group's, its anchor the synced start)."""
        cdef int32_t g
        if self.g_label == NULL:
            return
        g = self.g_label[j]
        if g < 0 or self.g_seen[j] == self.g_polls[g]:
            return
        self._sync_polls(j)
        if self.pages.last_poll[j] < self.g_time[g]:
            self.pages.last_poll[j] = self.g_time[g]
        self.g_seen[j] = self.g_polls[g]
        self.g_anchor[j] = self.pages.records[j].last_crawl

    cdef inline void _anchor(self, Py_ssize_t j) noexcept nogil:
        """After an own event of page j that set its effective start: the anchor of its next group polls; a
        member whose start is after its window's start (``ell > max(c, p)``) into the prone list."""
        cdef double ell, m
        if self.g_label != NULL:
            ell = self.pages.records[j].last_crawl
            self.g_anchor[j] = ell
            if self.g_label[j] >= 0 and not self.g_flag[j]:
                m = self.pages.crawl[j] if self.pages.crawl[j] > self.pages.last_poll[j] else self.pages.last_poll[j]
                if ell > m:
                    self.g_flag[j] = 1
                    self.g_prone[self.n_prone] = <int32_t>j
                    self.n_prone += 1

    cdef inline bint _prone(self, Py_ssize_t j) noexcept nogil:
        """Whether page j (a group member, no group poll pending) has its effective start after its window's."""
        cdef double c = self.pages.crawl[j], p = self.pages.last_poll[j]
        return self.pages.records[j].last_crawl > (c if c > p else p)

    @property
    def n_prone(self):
        """Entries of the prone list (for tests)."""
        return self.n_prone

    def rebuild_prone(self):
        """The prone list from the state (after an import): every member with no poll pending and ``ell >
        max(c, p)``."""
        cdef Py_ssize_t j
        cdef int32_t g
        if self.g_label == NULL:
            return
        self.n_prone = 0
        for j in range(self.n_ids):
            self.g_flag[j] = 0
            g = self.g_label[j]
            if g >= 0 and self.buckets.code[j] != DEAD and self.g_seen[j] == self.g_polls[g] and self._prone(j):
                self.g_flag[j] = 1
                self.g_prone[self.n_prone] = <int32_t>j
                self.n_prone += 1

    cdef inline double _last_poll(self, Py_ssize_t j) noexcept nogil:
        """Page j's last poll: its own, or its group's if later polls of the group are pending."""
        cdef int32_t g
        if self.g_label != NULL:
            g = self.g_label[j]
            if g >= 0 and self.g_seen[j] != self.g_polls[g]:
                return self.g_time[g] if self.g_time[g] > self.pages.last_poll[j] else self.pages.last_poll[j]
        return self.pages.last_poll[j]

    def group_ok(self, Py_ssize_t g, double t, const Py_ssize_t[::1] moved):
        """Whether ``poll_group(g, t, moved)`` needs no check: g is a group, t is not before its last poll nor
        the latest last poll of a member (``top``, a bound), and every moved id is a live member.  False sends
        the caller to the checks that name the first bad index."""
        cdef Py_ssize_t i, j, n = moved.shape[0]
        cdef bint ok = self.pages.kind == POLLED and 0 <= g < self.n_groups and self.g_label != NULL
        if ok:
            ok = t >= self.g_time[g] and t >= self.g_top[g]
        with nogil:
            for i in range(n if ok else 0):
                j = moved[i]
                if j < 0 or j >= self.n_ids or self.buckets.code[j] == DEAD or self.g_label[j] != g:
                    ok = False
                    break
        return ok

    def group_top(self, Py_ssize_t g):
        """The latest last poll of a live member of group g, exactly (O(m)); the group's ``top`` set to it."""
        cdef Py_ssize_t j
        cdef double top = -INFINITY
        for j in range(self.n_ids):
            if self.g_label[j] == g and self.buckets.code[j] != DEAD and self.pages.last_poll[j] > top:
                top = self.pages.last_poll[j]
        self.g_top[g] = top
        return top

    def poll_group(self, Py_ssize_t g, double t, const Py_ssize_t[::1] moved):
        """A poll of every live page of group g at t, the moved ones listed (checked by the caller: ``group_ok``),
        in O(len(moved)): each moved page's group polls made its own (to the group's previous poll) and its
        window closed as moved (``_poll``); the others' windows, unmoved, wait in the group's count and time
        (``_sync_polls``).  Returns how many raised a page's staleness.  If a moved poll fails (memory, a value
        that cannot be computed), the group's poll is recorded for every page but the moved ones from that one
        on, whose windows stay open from the group's previous poll (the message says so)."""
        cdef Py_ssize_t i, q, j, w, n = moved.shape[0], rose = 0
        cdef int64_t n1
        cdef int r = 0
        self._usable()
        n1 = self.g_polls[g] + 1
        with nogil:
            for i in range(n):
                j = moved[i]
                if i + SIGNAL_AHEAD < n:
                    self._prefetch_page(moved[i + SIGNAL_AHEAD])
                if self.g_seen[j] != n1:  # (else a repeat: its window since this poll is empty)
                    self._own_polls(j)
                r = self._poll(j, t, True)
                if r < 0:
                    break
                self.g_seen[j] = n1
                rose += r
            if r < 0:  # the moved pages from i on: made their own to the previous poll, not polled now
                for q in range(i, n):
                    j = moved[q]
                    if self.g_seen[j] != n1:
                        self._own_polls(j)
                        self.g_seen[j] = n1
            # the prone members (``ell > max(c, p)``: a window of theirs may be capped), polled one by one (an
            # unmoved poll: it cannot fail); the list keeps those of the other groups and those still prone
            w = 0
            for q in range(self.n_prone):
                j = self.g_prone[q]
                if self.g_label[j] == g and self.buckets.code[j] != DEAD and self.g_seen[j] == n1 - 1 and \
                        self._prone(j):
                    self._poll(j, t, False)
                    self.g_seen[j] = n1
                if self.g_label[j] >= 0 and self.buckets.code[j] != DEAD and \
                        self.g_seen[j] == (n1 if self.g_label[j] == g else self.g_polls[self.g_label[j]]) and \
                        self._prone(j):
                    self.g_prone[w] = <int32_t>j
                    w += 1
                else:
                    self.g_flag[j] = 0
            self.n_prone = w
            self.g_polls[g] = n1
            self.g_time[g] = t
        if r == -1:
            raise _no_memory(f"the moved poll {i + 1} of {n} of the group poll (the group's poll is recorded but "
                             f"for the moved pages from that one on, whose windows stay open: poll them again)")
        if r == NO_VALUE:
            raise self._failed(f" At the moved poll {i + 1} of {n} of the group poll: the group's poll is recorded "
                               f"but for the moved pages from that one on, whose windows stay open (poll them "
                               f"again).")
        return rose

    def set_groups(self, const Py_ssize_t[::1] ids, const int32_t[::1] labels):
        """Live pages (checked) into poll groups (labels >= -1, tables already grown by ``use_groups``): each one's
        old group's polls made its own, its count the new group's (no earlier poll of it applies), the new group's
        top raised to its last poll."""
        cdef Py_ssize_t i, j
        cdef int32_t g
        with nogil:
            for i in range(ids.shape[0]):
                j = ids[i]
                self._own_polls(j)
                g = labels[i]
                self.g_label[j] = g
                self.g_seen[j] = 0
                if g >= 0:
                    self.g_seen[j] = self.g_polls[g]
                    if self.g_top[g] < self.pages.last_poll[j]:
                        self.g_top[g] = self.pages.last_poll[j]
                self._anchor(j)

    # -- dynamic pages ------------------------------------------------------------
    def _grow(self, Py_ssize_t need):
        """Capacity >= need slots, by amortised doubling (a copy of every per-page array)."""
        cdef Py_ssize_t cap = self.capacity, m = self.n_ids
        if need <= cap:
            return
        cap = max(need, 2 * cap, 16)
        records = page_records(cap)
        records[:m] = self.records_array[:m]
        polled = None if self.polled_arrays is None else tuple(grown(a, m, cap, 0.0) for a in self.polled_arrays)
        self._set_arrays(records, grown(self.false_rate, m, cap, 0.0), grown(self.recall, m, cap, 0.0),
                         grown(self.bucket, m, cap, NOT_PLACED), polled)
        if self.group_arrays is not None:
            lab, seen, anc, flag, prone = self.group_arrays
            self._set_groups((grown(lab, m, cap, -1), grown(seen, m, cap, 0), grown(anc, m, cap, 0.0),
                              grown(flag, m, cap, 0), grown(prone, m, cap, 0)), self.group_tables)
        self.capacity = cap

    def add(self, const double[::1] delta, const double[::1] mu, const double[::1] nu,
            const double[::1] recall, const double[::1] last, const double[::1] poll_interval=None,
            const double[::1] last_poll=None, const int32_t[::1] group=None):
        """Append pages with ids n_slots, n_slots + 1, ...; returns the first new id (``poll_interval`` under
        "polled": crawl at ``last``, last poll at ``last_poll`` (None: ``last``), poll group ``group`` (None:
        none; the tables grown by ``use_groups``), whose count it takes)."""
        cdef Py_ssize_t i, j, q, n = delta.shape[0], first = self.n_ids
        cdef int32_t g
        cdef long long evaluations = self.n_evaluations
        cdef int failed = 0
        cdef PageRecord* r
        self._usable()
        self._grow(self.n_ids + n)
        with nogil:
            for i in range(n):
                j = first + i
                r = &self.pages.records[j]
                r.change_rate, r.importance, r.last_crawl, r.n_signals, r.entry = delta[i], mu[i], last[i], 0, -1
                self.pages.false_rate[j], self.pages.recall[j] = nu[i], recall[i]
                if self.pages.kind == POLLED:
                    self.pages.crawl[j] = self.pages.last_poll[j] = last[i]
                    if last_poll is not None:
                        self.pages.last_poll[j] = last_poll[i]
                    self.pages.poll_interval[j] = poll_interval[i]
                    if self.g_label != NULL:
                        g = group[i] if group is not None else -1
                        self.g_label[j], self.g_anchor[j], self.g_seen[j] = g, last[i], 0
                        if g >= 0:
                            self.g_seen[j] = self.g_polls[g]
                            if self.g_top[g] < self.pages.last_poll[j]:
                                self.g_top[g] = self.pages.last_poll[j]
                self.buckets.code[j] = NOT_PLACED
                self.n_ids += 1
                self.n_live += 1
                failed = self._place(j, self.now) if self.built else 0
                if failed < 0:
                    for q in range(first, j):  # none is added: the pages placed so far leave their buckets
                        buckets_remove(&self.buckets, q)
                    self.n_ids = first
                    self.n_live -= i + 1
                    self.n_evaluations = evaluations
                    break
        if failed == -1:
            raise _no_memory("adding pages (none was added)")
        if failed == NO_VALUE:
            self.failed_page = -1
            raise _no_value(i, delta[i], recall[i], nu[i], self.failed_tau, f" It is pages[{i}] of those added; none "
                            f"was added.", self.pages.kind == POLLED)
        return first

    def remove(self, const Py_ssize_t[::1] ids):
        """Remove live pages (distinct ids, checked by the caller); their ids are never reused."""
        cdef Py_ssize_t i, j
        self._usable()
        with nogil:
            for i in range(ids.shape[0]):
                j = ids[i]
                if self.buckets.code[j] < N_CODES:
                    buckets_remove(&self.buckets, j)
                    buckets_shrink(&self.buckets)
                self.buckets.code[j] = DEAD
                self.n_live -= 1

    def update(self, const Py_ssize_t[::1] ids, const double[::1] delta, const double[::1] mu,
               const double[::1] nu, const double[::1] recall, const double[::1] poll_interval=None):
        """New parameters for live pages (distinct ids); last crawl and signal count kept.  Under "polled", the
        new poll intervals (None: kept), and the effective start moved so that s at the current time is kept
        (``rescaled_start``)."""
        cdef Py_ssize_t i, j, q, n = ids.shape[0]
        cdef long long evaluations = self.n_evaluations
        cdef int failed = 0
        cdef bint polled = self.pages.kind == POLLED
        self._usable()
        # each page's parameters, bucket and key before the call (and, under "polled", its effective start and
        # poll interval), to put it back if memory runs out
        cdef double[:, ::1] old = np.empty((n, 9), dtype=np.float64)
        cdef Py_ssize_t[::1] old_code = np.empty(n, dtype=np.intp)
        with nogil:
            for i in range(n):
                j = ids[i]
                if polled:
                    self._own_polls(j)  # (its group's polls its own first: ell synced)
                    old[i, 5], old[i, 6] = self.pages.records[j].last_crawl, self.pages.poll_interval[j]
                    old[i, 7], old[i, 8] = self.rekey[2 * j], self.rekey[2 * j + 1]
                    self.pages.records[j].last_crawl = rescaled_start(old[i, 5], self.now,
                                                                      self.pages.records[j].change_rate, delta[i])
                    self._anchor(j)
                    if poll_interval is not None:
                        self.pages.poll_interval[j] = poll_interval[i]
                self._swap_params(j, &old[i, 0], delta[i], mu[i], nu[i], recall[i])
                old_code[i] = self.buckets.code[j]
                if old_code[i] < N_CODES:
                    old[i, 4] = buckets_key_of(&self.buckets, j)
                    buckets_remove(&self.buckets, j)
                failed = self._place(j, self.now) if self.built else 0
                if failed < 0:
                    # none is updated: from the last to the first, each page out of its new bucket (the failed
                    # one is in none), its parameters back, and back in its old bucket (room: it left it)
                    for q in range(i, -1, -1):
                        j = ids[q]
                        if q < i:
                            buckets_remove(&self.buckets, j)
                        self._swap_params(j, NULL, old[q, 0], old[q, 1], old[q, 2], old[q, 3])
                        if polled:
                            self.pages.records[j].last_crawl, self.pages.poll_interval[j] = old[q, 5], old[q, 6]
                            self._anchor(j)
                            self._rekey_set(j, old[q, 7], old[q, 8])
                        if old_code[q] < N_CODES and buckets_push(&self.buckets, j, old_code[q], old[q, 4]) < 0:
                            self.broken = True  # (cannot happen: the room is there)
                    self.n_evaluations = evaluations
                    break
            if failed == 0:
                buckets_shrink(&self.buckets)
        if failed == -1:
            raise _no_memory("updating pages (none was updated)")
        if failed == NO_VALUE:
            self.failed_page = -1
            raise _no_value(ids[i], delta[i], recall[i], nu[i], self.failed_tau, " None was updated.",
                            self.pages.kind == POLLED)

    cdef inline void _swap_params(self, Py_ssize_t j, double* old, double delta, double mu, double nu,
                                  double recall) noexcept nogil:
        """Page j's parameters set (the old ones to old[0 .. 3] unless NULL)."""
        cdef PageRecord* r = &self.pages.records[j]
        if old != NULL:
            old[0], old[1], old[2], old[3] = r.change_rate, r.importance, self.pages.false_rate[j], self.pages.recall[j]
        r.change_rate, r.importance, self.pages.false_rate[j], self.pages.recall[j] = delta, mu, nu, recall

    # -- exact state export / import (save, load, pickle) --------------------------
    def __reduce__(self):
        cdef Py_ssize_t m = self.n_ids
        params = (np.array(self._field("change_rate")), np.array(self._field("importance")),
                  np.array(self.false_rate[:m]), np.array(self.recall[:m]))
        return (_restore, (params, self.pages.kind, self.pages.terms, self.export_state()))

    def export_state(self):
        """Every array and scalar the decisions depend on, as a dict of copies (``_schedule_export``)."""
        self._usable()
        return state_export(self)

    def import_state(self, d):
        """Overwrite the state with ``export_state()`` output of a state over the same page slots, checked by the
        caller (``_schedule_export``).  If memory runs out, the state is left incomplete and refuses every later
        call."""
        self._usable()
        if state_import(self, d) < 0:
            raise _no_memory("loading a state (the scheduler is unusable)")

    def set_rate(self, double rate):
        """Ticks continue at spacing 1/rate from the current time; the calendar's pages go to FAR (its ticks
        were the old rate's) and the next tick moves the horizon."""
        self._usable()
        if buckets_unpark_calendar(&self.buckets) < 0:
            raise _no_memory("changing the rate (the rate is unchanged)")
        self.buckets.calendar.origin = self.now
        self.buckets.calendar.rate = rate
        self.buckets.calendar.last_popped_tick = 0
        self.tick = 0
        self.park.horizon = -INFINITY


def _restore(params, int kind, long terms, state):
    """Unpickle a :class:`SchedulerState` (its ``__reduce__``)."""
    s = SchedulerState(*params, kind, terms, state["rate"], state["signal_delay"],
                       poll_interval=state["poll_interval"] if kind == POLLED else None)
    s.import_state(state)
    return s
