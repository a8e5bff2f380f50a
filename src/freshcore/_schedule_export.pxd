# The scheduler state as the file format holds it (freshcore._schedule): every array and scalar the decisions
# depend on, out of a SchedulerState and back into one.  Inline functions compiled into freshcore._schedule
# (``SchedulerState.export_state``/``import_state`` call them; ``freshcore.schedule.Scheduler.to_dict`` and
# ``from_dict`` name and check the entries): ``from freshcore._schedule_export cimport state_export``.
#
# ``key`` and ``bucket`` (65535: in no bucket, and for removed pages) are each page's bound; the buckets are
# rebuilt from them on import, and since a bucket's heap order is the total order on ``(key, id)`` and a tick
# pops every parked page whose key has come, the continued run makes the same decisions *and* the same
# evaluations.  Parked pages are written as PARK whether before or after the horizon (the split is not state).

from libc.math cimport INFINITY, log

from freshcore._schedule cimport SchedulerState
from freshcore._schedule_pages cimport POLLED
from freshcore._schedule_buckets cimport PARK, FAR, N_CODES, DEAD, NOT_PLACED, buckets_key_of, buckets_fill


cdef inline object state_keys(SchedulerState s):
    """Each page's key (0 for a page in no bucket), float64."""
    import numpy as np
    out = np.zeros(s.n_ids)
    cdef double[::1] o = out
    cdef Py_ssize_t j
    for j in range(s.n_ids):
        if s.buckets.code[j] < N_CODES:
            o[j] = buckets_key_of(&s.buckets, j)
    return out


cdef inline dict state_export(SchedulerState s):
    """Every array and scalar of ``s`` the decisions depend on, as a dict of copies (the file format's keys)."""
    import numpy as np
    cdef Py_ssize_t m = s.n_ids
    cdef bint polled = s.pages.kind == POLLED
    s.sync_all()  # (every effective start synced to its poll group's polls: what a pop computes)
    alive = s.alive_mask()
    bucket = s.bucket[:m]
    groups = s.group_arrays is not None
    return {
        "change_rate": np.array(s._field("change_rate"), copy=True),
        "importance": np.array(s._field("importance"), copy=True),
        "recall": np.array(s.recall[:m], copy=True),
        "false_rate": np.array(s.false_rate[:m], copy=True),
        "alive": alive,
        "last": np.array(s._field("last_crawl"), copy=True),  # (under "polled": the effective start)
        # crawl and last poll times and poll intervals: under "polled" its arrays, else last, last and inf
        "crawl": np.array(s.polled_arrays[0][:m] if polled else s._field("last_crawl"), copy=True),
        "poll": np.array(s.polled_arrays[1][:m] if polled else s._field("last_crawl"), copy=True),
        "poll_interval": np.array(s.polled_arrays[2][:m], copy=True) if polled else np.full(m, np.inf),
        # poll groups (format 11): each slot's label (-1: none), its group's poll count at its last own event and
        # its effective start then (the anchor of the group's later polls); each group's poll count, last poll
        # time and the latest last poll of a member (a bound); without groups -1, 0, last and empty tables.
        # ``poll`` is each page's own last poll (its group's later polls: group_time where group_seen is behind)
        "poll_group": (np.array(s.group_arrays[0][:m], dtype=np.int64) if groups else np.full(m, -1, np.int64)),
        "group_seen": (np.array(s.group_arrays[1][:m], dtype=np.int64) if groups else np.zeros(m, np.int64)),
        "group_anchor": np.array(s.group_arrays[2][:m] if groups else s._field("last_crawl"), dtype=np.float64),
        "group_polls": np.array(s.group_tables[0], copy=True) if groups else np.zeros(0, np.int64),
        "group_time": np.array(s.group_tables[1], copy=True) if groups else np.zeros(0),
        "group_top": np.array(s.group_tables[2], copy=True) if groups else np.zeros(0),
        "ncis": np.array(s._field("n_signals"), dtype=np.int64),
        # under "polled" each page's key anchor (time, effective start; float32 values; inf: none), else inf
        "anchor_t": np.array(s.rekey_array[:m, 0], dtype=np.float64) if polled else np.full(m, np.inf),
        "anchor_ell": np.array(s.rekey_array[:m, 1], dtype=np.float64) if polled else np.full(m, np.inf),
        "key": state_keys(s),
        "bucket": np.where(alive, np.where(bucket == FAR, PARK, bucket), NOT_PLACED).astype(np.int64),
        "origin": s.buckets.calendar.origin,
        "rate": s.buckets.calendar.rate,
        "time": s.now,
        "signal_delay": s.signal_delay,
        "last_best": s.last_winning_value,
        "park_level": s.park.level,
        "park_margin": s.park.margin,
        "park_fall": s.park.last_fall_tick,
        "park_wait": s.park.halving_wait,
        "n_unparks": s.park.n_unparks,
        "park_moving": bool(s.park.moving),
        "park_move_ref": s.park.move_ref,
        "park_move_tick": s.park.move_tick,
        "park_settle": s.park.settle,
        "park_fall_level": s.park.fall_level,
        "park_lower": s.park.lower,
        "k": s.tick,
        "nticks": s.n_ticks,
        "built": bool(s.built),
        "n_evaluations": s.n_evaluations,
    }


cdef inline int state_import(SchedulerState s, d) except -2:
    """Overwrite ``s`` with ``state_export`` output of a state over the same page slots; -1 if memory runs out
    (``s`` then incomplete: it is marked broken and refuses every later call).

    The caller (``Scheduler.from_dict``) has checked every entry: nothing is validated here.  The parameters
    are those ``s`` was constructed with (the same slots).
    """
    import numpy as np
    cdef Py_ssize_t m = s.n_ids
    s._field("last_crawl")[:] = np.asarray(d["last"], dtype=np.float64)
    s._field("n_signals")[:] = np.asarray(d["ncis"], dtype=np.uint32)
    if s.pages.kind == POLLED:
        for a, name in zip(s.polled_arrays, ("crawl", "poll", "poll_interval")):
            a[:m] = np.asarray(d[name], dtype=np.float64)
        s._set_groups(None, None)
        if len(d["group_polls"]) or (np.asarray(d["poll_group"]) >= 0).any():
            s.use_groups(len(d["group_polls"]))
            for a, name in zip(s.group_arrays, ("poll_group", "group_seen", "group_anchor")):
                a[:m] = np.asarray(d[name], dtype=a.dtype)
            for a, name in zip(s.group_tables, ("group_polls", "group_time", "group_top")):
                a[:] = np.asarray(d[name], dtype=a.dtype)
        for i, name in enumerate(("anchor_t", "anchor_ell")):
            # (as float32 rounded up: a later anchor only shifts a key less; NaN as none)
            x = np.nan_to_num(np.asarray(d[name], dtype=np.float64), nan=np.inf)
            with np.errstate(over="ignore", invalid="ignore"):
                f = x.astype(np.float32)
                f = np.where(f.astype(np.float64) < x, np.nextafter(f, np.float32(np.inf)), f)
            s.rekey_array[:m, i] = f
    bucket = np.asarray(d["bucket"], dtype=np.uint16)
    s.bucket[:m] = np.where(bucket == PARK, FAR, bucket)  # the horizon is -inf (below)
    alive = np.asarray(d["alive"], dtype=bool)
    s.bucket[:m][~alive] = DEAD
    s.n_live = int(alive.sum())
    cdef double[::1] keys = np.ascontiguousarray(d["key"], dtype=np.float64)
    if buckets_fill(&s.buckets, m, &keys[0] if m > 0 else NULL) < 0:
        s.broken = True
        return -1
    s.buckets.calendar.origin = d["origin"]
    s.buckets.calendar.rate = d["rate"]
    s.now = d["time"]
    s.signal_delay = d["signal_delay"]
    s.last_winning_value = d["last_best"]
    s.log_last_winning_value = log(s.last_winning_value)
    s.tick = d["k"]
    s.n_ticks = d["nticks"]
    s.built = d["built"]
    s.n_evaluations = d["n_evaluations"]
    s.park.level = d["park_level"]
    s.park.margin = d["park_margin"]
    s.park.last_fall_tick = d["park_fall"]
    s.park.halving_wait = d["park_wait"]
    s.park.horizon = -INFINITY  # (FAR holds keys > -inf: the next tick moves the horizon)
    s.park.n_unparks = d["n_unparks"]
    s.park.moving = d["park_moving"]
    s.park.move_ref = d["park_move_ref"]
    s.park.move_tick = d["park_move_tick"]
    s.park.settle = d["park_settle"]
    s.park.fall_level = d["park_fall_level"]
    s.park.lower = d["park_lower"]
    s.buckets.calendar.last_popped_tick = s.tick
    s.rebuild_prone()  # (poll groups: from the pages' starts and bucket codes)
    return 0
