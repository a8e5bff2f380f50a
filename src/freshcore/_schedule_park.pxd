# The park (freshcore._schedule, "The park"): the park level a margin below the last winning
# value, which pages park, their keys, the level's moves after each tick, and the horizon that splits the
# parked pages.  Every function is inline (compiled into freshcore._schedule):
# ``from freshcore._schedule_park cimport Park, parks``.
#
# The parked pages are split at a horizon, m/32 ticks ahead: those due by it are in PARK, the calendar of
# ticks (_schedule_calendar: a list per tick of the pages whose key falls after the last tick and by that
# one; a tick pops its list, and prefetches the next tick's pages), the others in FAR, an unsorted list
# whose keys are all after the horizon.  When a tick reaches the horizon, it moves m/32 ticks on and the
# FAR pages due by then join the calendar, so each FAR page is read once per move (~32 sequential entries
# per tick).  A change of rate changes the ticks: the calendar's pages go back to FAR and the next tick
# moves the horizon.  The split is not state: saved states say PARK for both, and a loaded state starts
# with the horizon at -inf.

from libc.math cimport INFINITY, sqrt
from libc.stdint cimport int32_t

from freshcore._schedule_pages cimport PageRecord
from freshcore._schedule_lines cimport PARK_SHADE, park_time
from freshcore._schedule_calendar cimport (calendar_tick_of, calendar_reset_heads, calendar_relink, calendar_push,
                                           calendar_compact)
from freshcore._schedule_heap cimport Heap, unsorted_take
from freshcore._schedule_buckets cimport Buckets, PARK, FAR, buckets_note
from freshcore._schedule_scan cimport freshcore_due_before

cdef extern from "_schedule_constants.h":
    const double PARK_EPS "FRESHCORE_PARK_EPS"

cdef enum:
    FAR_SHARE = 32  # the horizon moves by m/FAR_SHARE ticks
    SETTLE_SHARE = 64  # a tick of the settle looks at whole slope buckets of m/SETTLE_SHARE + 256 pages (or the last)
    LOWER_SHARE = 64  # a tick of a lowering re-keys the parked pages of m/LOWER_SHARE + 256 page ids


cdef struct Park:
    double level             # pages whose value is below it park, keyed by when they reach it (0: none)
    double fall_level        # every parked page not due is below it (>= level; above it while lowering)
    double margin            # its relative distance below the winning value
    long long last_fall_tick  # the tick count at the last fall below the level, or halving of the margin
    long long halving_wait   # ticks without a fall before the margin halves (m/16 .. m)
    double horizon           # every page in FAR has a key > horizon (-inf: none known)
    long long n_unparks      # ticks whose best value ended below the level
    bint moving              # the winning value moved over the last window: no page parks
    double move_ref          # the winning value at the window's start
    long long move_tick      # the tick count at the window's start
    long long settle         # the next slope bucket the settle looks at (0: no settle under way; _schedule._park_lines)
    long long lower          # 1 + the next page id the lowering re-keys (0: none under way; _schedule._lower)


cdef inline double park_floor(Py_ssize_t n_live) noexcept nogil:
    """The smallest park margin: 1/sqrt(m) within [PARK_EPS, 0.25] (1e-3 at m = 1e6; the winning value moves
    more at small m)."""
    cdef double f = 1.0 / sqrt(<double>n_live) if n_live > 0 else 0.25
    return PARK_EPS if f < PARK_EPS else (0.25 if f > 0.25 else f)


cdef inline bint parks(const Park* p, const PageRecord* r, double v, double tau) noexcept nogil:
    """Whether a Greedy page (record r) of value v at tau parks: the winning value not moving, below the park
    level, not constant.

    (Below ``level (1 - 2 PARK_SHADE)``: a parked page then either never reaches the level of its key,
    whose key is ``inf``, or ends above it.)
    """
    return (not p.moving and v < p.level * (1.0 - 2.0 * PARK_SHADE) and r.importance > 0.0
            and r.change_rate > 0.0 and tau < INFINITY)


cdef inline double park_key(const Park* p, const PageRecord* r) noexcept nogil:
    """A time before which the value of the Greedy page of record r (mu, Delta > 0) is below the level."""
    return park_time(r.last_crawl, r.change_rate, r.importance, p.level)


cdef inline Py_ssize_t move_window(Py_ssize_t n_live) noexcept nogil:
    """Ticks over which the move of the winning value is measured: m times the smallest margin, sqrt(m) (at
    least 16)."""
    cdef Py_ssize_t w = <Py_ssize_t>(<double>n_live * park_floor(n_live))
    return w if w > 16 else 16


cdef inline void park_start(Park* p, double vmax, long long n_ticks, Py_ssize_t n_live) noexcept nogil:
    """The park at the first tick, whose winning value is at most vmax (the build's largest value, or bound of a
    polled page): moving (until a window shows otherwise)."""
    p.margin = park_floor(n_live)
    p.level = p.fall_level = vmax * (1.0 - p.margin)
    p.lower = 0
    p.halving_wait = shortest_wait(n_live)
    p.moving = True
    p.move_ref = vmax
    p.move_tick = n_ticks


cdef inline long long shortest_wait(Py_ssize_t n_live) noexcept nogil:
    """The shortest wait before the margin halves: m/16 ticks (at least 16)."""
    return n_live // 16 if n_live >= 256 else 16


cdef inline void park_follow(Park* p, double bv, bint fell, bint has_parked, long long n_ticks,
                             Py_ssize_t n_live) noexcept nogil:
    """The level after a tick whose best value is bv > 0: lowered after a fall (with twice the margin), raised
    (free: keys of a lower level stay valid) when the winning value has moved two margins above it, or with
    half the margin when none fell for ``halving_wait`` ticks (m/16 at first; doubled, up to m, by a fall
    within that many ticks of the last halving or fall, where a smaller margin was tried too soon; halved
    again by each halving: the margin is back at its floor ~2m ticks after a start whose winning value fell
    far, and a margin that is too small is tried less and less often, each fall evaluating every parked
    page).

    Every ``move_window`` ticks, whether the winning value moved by more than four smallest margins over the
    window.  While it moves, no page parks (those parked stay, their keys valid): while it rises (the start
    from equal crawl times, where every value grows like tau**2) a page parked at the level would be popped,
    below the risen level, every time tau grows by a constant factor, whereas its line bounding sqrt V grows
    with it; while it falls (a start far from the steady state) the level would fall under the parked pages
    again and again, each fall evaluating every parked page.
    """
    cdef double f
    if n_ticks - p.move_tick >= move_window(n_live):
        f = 4.0 * park_floor(n_live)
        p.moving = not (bv <= p.move_ref * (1.0 + f) and bv >= p.move_ref * (1.0 - f))
        p.move_ref = bv
        p.move_tick = n_ticks
    cdef double lv
    if fell or p.level == 0.0:
        if fell:
            park_widen(p, bv, n_ticks, n_live)
        p.level = p.fall_level = bv * (1.0 - p.margin)
        p.lower = 0  # (a fall evaluated every parked page)
        return
    if p.margin > park_floor(n_live) and n_ticks - p.last_fall_tick > p.halving_wait:
        p.margin = 0.5 * p.margin if p.margin > 2.0 * park_floor(n_live) else park_floor(n_live)
        p.last_fall_tick = n_ticks
        p.halving_wait = p.halving_wait // 2 if p.halving_wait // 2 > shortest_wait(n_live) else shortest_wait(n_live)
        lv = bv * (1.0 - p.margin)
        if lv > p.level:
            park_raise(p, lv)  # (raised only: a lower level waits for a fall)
    elif p.level < bv * (1.0 - 2.0 * p.margin):
        park_raise(p, bv * (1.0 - p.margin))
    elif p.lower == 0 and has_parked and bv < p.fall_level * (1.0 + 0.125 * p.margin):
        # the winning value has fallen seven eighths of the way to the level: the fall it is heading for is
        # done ahead, spread over ticks (the lowering, _schedule._lower): new pages park for the level a fall
        # would set, and the parked ones are re-keyed for it, m/LOWER_SHARE page ids a tick; the level the
        # tick's best value is checked against stays until they all are
        park_widen(p, bv, n_ticks, n_live)
        p.level = bv * (1.0 - p.margin)
        p.lower = 1


cdef inline void park_widen(Park* p, double bv, long long n_ticks, Py_ssize_t n_live) noexcept nogil:
    """The margin after a fall (or the start of a lowering) to bv: doubled, or wide enough for the winning
    value's drop since the level was set (from level/(1 - margin), the last fall or halving) to go on for the
    wait before it halves, whichever is wider (at most 1/2); and that wait quadrupled (up to m) if the fall came
    soon after the last one or the last halving: a halving halves the wait, so with a doubling here a margin too
    small for the winning value's swings (SPEC section 3's signals) was tried again every ~m/4 ticks, a fall
    (O(m) evaluations) each time.  (A start far from the steady state sees the winning value drift down
    for ~m ticks after it settles: doubling alone took 8-11 falls, each O(m).)"""
    cdef double drift = (p.level / (1.0 - p.margin) - bv) / bv / <double>(n_ticks - p.last_fall_tick + 1)
    if n_ticks - p.last_fall_tick <= p.halving_wait:  # (soon after the last halving or fall)
        p.halving_wait = 4 * p.halving_wait if 4 * p.halving_wait < n_live else n_live
    p.margin = 2.0 * p.margin
    if drift * <double>p.halving_wait > p.margin:
        p.margin = drift * <double>p.halving_wait
    if not (p.margin <= 0.5):
        p.margin = 0.5
    p.last_fall_tick = n_ticks


cdef inline void park_raise(Park* p, double lv) noexcept nogil:
    """The level raised to lv (free: keys of a lower level stay valid); a lowering under way ends if lv reaches
    the level the parked pages not yet re-keyed are below."""
    p.level = lv
    if lv >= p.fall_level:
        p.fall_level = lv
        p.lower = 0


cdef inline int park_advance(Park* p, Buckets* s, double t, Py_ssize_t n_live) noexcept nogil:
    """Move the horizon past t (by m/FAR_SHARE ticks) and the FAR pages due by it to PARK; -1 if memory is
    exhausted (the horizon is then as before, every page parked).

    PARK (the calendar) then holds only the pages due within ~m/32 ticks and each FAR page is read once
    per horizon move (~32 entries per tick, sequentially).
    """
    cdef Py_ssize_t i, w, e, n, due
    cdef int32_t j
    cdef double key, hor, old = p.horizon
    cdef double* keys
    cdef Heap* far = &s.heaps[FAR]
    # (at least t: every page left in FAR is then due after t)
    n = n_live // FAR_SHARE + 1
    p.horizon = t + <double>n / s.calendar.rate
    # at most ~2m/FAR_SHARE pages move at once: a nearer horizon (halved, down to one tick) when more are due
    # by it (pages crawled together are due together: from the all-equal start, 19% of 10^6 Greedy pages
    # were due by one move, 50 ms, four brute-force ticks); each halving estimates the due entries from one
    # in 64 (~1/64 of the scan's reads)
    while n > 1:
        due = 0
        for i in range(0, far.size, 64):
            due += far.keys[i] <= p.horizon
        if 64 * due <= 2 * (n_live // FAR_SHARE) + 256:
            break
        n //= 2
        p.horizon = t + <double>n / s.calendar.rate
    # the calendar spans every tick up to the horizon's (a few more for rounding): relinked if it has to
    # grow, or shrink by 8
    w = <Py_ssize_t>(calendar_tick_of(&s.calendar, p.horizon) - s.calendar.last_popped_tick) + 8
    if w > s.calendar.mask or 8 * w < s.calendar.mask:
        if calendar_reset_heads(&s.calendar, w) < 0:
            p.horizon = old
            return -1
        calendar_relink(&s.calendar)
    # from the end down (the last entry, which fills a hole, is already read); the search for the next due
    # entry is a tight loop over a local pointer (~1 in 32 entries is due)
    i = far.size
    hor = p.horizon
    keys = far.keys
    while True:
        i = freshcore_due_before(keys, i, hor)
        if i < 0:
            break
        key = keys[i]
        j = far.ids[i]
        e = calendar_push(&s.calendar, j, key)
        if e < 0:
            p.horizon = old
            return -1
        unsorted_take(far, i, s.records)
        s.records[j].entry = <int32_t>e
        s.code[j] = PARK
    buckets_note(s, FAR)
    if s.calendar.capacity > s.calendar.size + s.calendar.size // 4 + 256:  # (grown by 1/8 + 128 when full)
        calendar_compact(&s.calendar, s.records)
    return 0
