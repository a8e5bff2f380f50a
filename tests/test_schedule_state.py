"""Scheduler state (issue 4): initial crawl times, batch signals, to_dict/pickle/copy and save/load.

The contract of SPEC section 4: after a save/load (or pickle, copy, from_dict) the continued decision
sequence is identical to an uninterrupted run.
"""

from __future__ import annotations

import copy
import importlib.util
import math
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import freshcore.schedule as schedule_mod
from freshcore.schedule import FORMAT_VERSION, Scheduler
from freshcore.simulator import simulate
from freshcore.value import PageModel

# the brute-force reference and page generator of test_schedule.py (tests run with --import-mode=importlib)
_spec = importlib.util.spec_from_file_location("_schedule_reference", Path(__file__).with_name("test_schedule.py"))
_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ref)
KINDS, Reference, kind_args, random_pages = _ref.KINDS, _ref.Reference, _ref.kind_args, _ref.random_pages


def state_equal(a: Scheduler, b: Scheduler) -> bool:
    da, db = a.to_dict(), b.to_dict()
    if da.keys() != db.keys():
        return False
    for k in da:
        x, y = da[k], db[k]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not np.array_equal(np.asarray(x), np.asarray(y), equal_nan=np.asarray(x).dtype.kind == "f"):
                return False
        elif x != y:
            return False
    return True


def script(seed, m, n_ops):
    """A seeded list of operations: ('run', k), ('signal', page, frac), ('rate', r)."""
    rng = np.random.default_rng(seed)
    ops = []
    for _ in range(n_ops):
        u = rng.random()
        if u < 0.5:
            ops.append(("run", int(rng.integers(1, 3 * m))))
        elif u < 0.85:
            ops.append(("signal", int(rng.integers(m)), float(rng.random())))
        else:
            ops.append(("rate", float(rng.uniform(0.05, 2.0) * m)))
    return ops


def apply(s, op, out):
    if op[0] == "run":
        out.extend(s.run(op[1]).tolist())
    elif op[0] == "signal":
        last = s.last_crawl[op[1]]
        s.signal(op[1], last + op[2] * (s.time - last + 0.5))
    else:
        s.set_rate(op[1])


# ---------------------------------------------------------------------------
# save / load, pickle, copy, to_dict: the continued run is the uninterrupted one


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(KINDS),
    m=st.integers(1, 150),
    n_ops=st.integers(0, 12),
    how=st.sampled_from(["save", "pickle", "deepcopy", "copy", "dict"]),
    delay=st.sampled_from([0.0, 0.05]),
)
def test_restore_continues_the_uninterrupted_run(tmp_path_factory, seed, kind, m, n_ops, how, delay):
    rng = np.random.default_rng(seed)
    pages = random_pages(rng, m)
    args = dict(kind_args(kind), signal_delay=delay)
    first, second = script(seed, m, n_ops), script(seed + 1, m, n_ops)
    whole = Scheduler(pages, m / 10.0, **args)
    want: list = []
    for op in first + second:
        apply(whole, op, want)
    part = Scheduler(pages, m / 10.0, **args)
    got: list = []
    for op in first:
        apply(part, op, got)
    if how == "save":
        path = tmp_path_factory.mktemp("s") / "sched.state"
        part.save(path)
        restored = Scheduler.load(path)
    elif how == "pickle":
        restored = pickle.loads(pickle.dumps(part))
    elif how == "deepcopy":
        restored = copy.deepcopy(part)
    elif how == "copy":
        restored = copy.copy(part)
    else:
        restored = Scheduler.from_dict(part.to_dict())
    assert state_equal(restored, part)
    for op in second:
        apply(restored, op, got)
    assert got == want
    # the restored structures are bit-identical: same evaluations, same final state
    assert restored._state.n_evaluations == whole._state.n_evaluations
    assert state_equal(restored, whole)


def test_restored_scheduler_matches_brute_force():
    rng = np.random.default_rng(3)
    pages = random_pages(rng, 300)
    s = Scheduler(pages, 30.0, value="exact", signal_delay=0.01)
    ref = Reference(pages, 30.0, value="exact", signal_delay=0.01)
    for block in range(6):
        for _ in range(150):
            p = int(rng.integers(300))
            t = ref.last[p] + rng.random() * (ref.time - ref.last[p] + 0.1)
            assert s.signal(p, t) == ref.signal(p, t)
            assert s.next() == ref.next()
        s = pickle.loads(pickle.dumps(s)) if block % 2 else Scheduler.from_dict(s.to_dict())


def test_copies_are_independent():
    pages = PageModel([1.0, 0.5, 0.25], [1.0, 1.0, 1.0], recall=0.5, false_rate=0.1)
    s = Scheduler(pages, 1.0)
    s.run(4)
    for c in (copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
        assert c is not s and c._state is not s._state
        c.run(3)
        c.signal(0, c.time)
        assert s.time == 4.0 and c.time == 7.0


def test_compiled_state_pickles():
    rng = np.random.default_rng(8)
    s = Scheduler(random_pages(rng, 90), 9.0, value="approx", terms=3)
    s.run(200)
    st2 = pickle.loads(pickle.dumps(s._state))
    out1, out2 = np.empty(100, dtype=np.intp), np.empty(100, dtype=np.intp)
    s._state.run(100, out1)
    st2.run(100, out2)
    assert out1.tolist() == out2.tolist()
    assert st2.n_evaluations == s._state.n_evaluations


def test_to_dict_contents():
    pages = PageModel([1.0, 2.0], [1.0, 3.0], recall=0.25, false_rate=0.5)
    s = Scheduler(pages, 2.0, value="approx", terms=2, signal_delay=0.1)
    s.run(3)
    d = s.to_dict()
    assert d["format_version"] == FORMAT_VERSION
    assert (d["value"], d["terms"], d["signal_delay"], d["rate"], d["time"]) == ("approx", 2, 0.1, 2.0, 1.5)
    np.testing.assert_array_equal(d["importance"], [1.0, 3.0])
    d["last"][:] = 99.0  # a copy
    assert s.last_crawl.max() == 1.5
    assert state_equal(Scheduler.from_dict(s.to_dict()), s)
    # a fresh scheduler (nothing built yet) round-trips too
    fresh = Scheduler(pages, 2.0)
    assert Scheduler.from_dict(fresh.to_dict()).run(5).tolist() == fresh.run(5).tolist()


def test_from_dict_rejects_inconsistent_state():
    rng = np.random.default_rng(2)
    s = Scheduler(random_pages(rng, 100), 10.0)
    s.run(150)
    good = s.to_dict()
    assert len(good["heap"]) > 2 and len(good["hot"]) > 0

    def with_(**kw):
        d = dict(good)
        d.update(kw)
        return d

    heap, hot = good["heap"], good["hot"]
    bad_heap = heap.copy()
    bad_heap[[0, -1]] = bad_heap[[-1, 0]]  # root no longer the minimum
    cases = [
        ({k: v for k, v in good.items() if k != "heap"}, "lacks the entries"),
        (with_(format_version=FORMAT_VERSION + 1), "format version"),
        (with_(heap=np.append(heap[:-1], 100)), "page indices in"),
        (with_(heap=np.append(heap[:-1], -1)), "page indices in"),
        (with_(hot=np.append(hot[:-1], heap[0])), "distinct pages"),
        (with_(heap=heap[:-1]), "every page once"),
        (with_(heap=bad_heap), "min-heap"),
        (with_(hval=good["hval"][:-1]), "must have the shape of 'hot'"),
        (with_(last=good["last"][:-1]), "must have shape"),
        (with_(last=np.where(np.arange(100) == 3, np.nan, good["last"])), "must be finite"),
        (with_(ncis=good["ncis"] + 0.5), "integer counts"),
        (with_(k=-1), "integer >= 0"),
        (with_(time=math.nan), "finite number"),
        (with_(need_rebuild=1), "must be a bool"),
        (with_(value="ncis"), "'value' parameter"),
        (with_(rate=0.0), "'rate' parameter"),
        (with_(change_rate=-good["change_rate"] - 1), "'change_rate' parameter"),
    ]
    for d, msg in cases:
        with pytest.raises(ValueError, match=msg):
            Scheduler.from_dict(d)
    with pytest.raises(TypeError, match="must be a dict"):
        Scheduler.from_dict([1, 2])


# ---------------------------------------------------------------------------
# the file: atomic, checked


def saved(tmp_path, m=60):
    rng = np.random.default_rng(4)
    s = Scheduler(random_pages(rng, m), m / 10.0, value="cis", signal_delay=0.05)
    s.run(3 * m)
    s.signal(1, s.time)
    path = tmp_path / "sched.npz"
    s.save(path)
    return s, path


def test_save_is_an_npz_without_pickles(tmp_path):
    s, path = saved(tmp_path)
    assert os.listdir(tmp_path) == ["sched.npz"]  # no temporary file left behind
    with np.load(path, allow_pickle=False) as z:
        assert str(z["magic"]) == "freshcore.Scheduler"
        assert int(z["format_version"]) == FORMAT_VERSION
        assert len(str(z["sha256"])) == 64
    s.save(str(path))  # overwrite, str path
    assert state_equal(Scheduler.load(str(path)), s)


def test_load_truncated_file(tmp_path):
    s, path = saved(tmp_path)
    blob = path.read_bytes()
    for n in (0, 10, len(blob) // 3, len(blob) // 2, len(blob) - 30, len(blob) - 1):
        path.write_bytes(blob[:n])
        with pytest.raises(ValueError, match="truncated or corrupted|not a freshcore scheduler file"):
            Scheduler.load(path)


def test_load_bit_flips_never_give_another_state(tmp_path):
    # every flip is caught (zip CRC, SHA-256 of the payload, magic, version) unless it hits a byte
    # that carries no state (e.g. a zip timestamp), in which case the loaded state is the saved one
    s, path = saved(tmp_path)
    blob = path.read_bytes()
    rng = np.random.default_rng(0)
    positions = np.concatenate([rng.choice(len(blob), size=300, replace=False), [0, len(blob) - 1]])
    caught = 0
    for pos in positions:
        flipped = bytearray(blob)
        flipped[pos] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(flipped))
        try:
            other = Scheduler.load(path)
        except ValueError:
            caught += 1
            continue
        assert state_equal(other, s), f"bit flip at byte {pos} loaded another state"
    assert caught > 250


def test_load_detects_payload_change_with_valid_archive(tmp_path):
    # a change that keeps the archive valid (re-zipped) is caught by the SHA-256
    s, path = saved(tmp_path)
    with np.load(path, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    data["last"] = data["last"].copy()
    data["last"][0] -= 1.0
    np.savez(path, **data)
    with pytest.raises(ValueError, match="SHA-256"):
        Scheduler.load(path)


def rewrite(path, **changes):
    with np.load(path, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    data.update({k: np.asarray(v) for k, v in changes.items()})
    data["sha256"] = np.asarray(schedule_mod._digest(data))
    with open(path, "wb") as f:
        np.savez(f, **data)


def test_load_wrong_magic_and_other_version(tmp_path):
    s, path = saved(tmp_path)
    rewrite(path, magic="freshcore.Other")
    with pytest.raises(ValueError, match="not a freshcore scheduler file"):
        Scheduler.load(path)
    s.save(path)
    rewrite(path, format_version=FORMAT_VERSION + 1)
    with pytest.raises(ValueError, match=f"format version {FORMAT_VERSION + 1}"):
        Scheduler.load(path)
    np.save(tmp_path / "plain.npy", np.zeros(3))
    with pytest.raises(ValueError, match="not a freshcore scheduler file"):
        Scheduler.load(tmp_path / "plain.npy")
    (tmp_path / "text").write_text("hello")
    with pytest.raises(ValueError, match="truncated or corrupted"):
        Scheduler.load(tmp_path / "text")
    with pytest.raises(FileNotFoundError):
        Scheduler.load(tmp_path / "missing")


@pytest.mark.parametrize("where", ["savez", "fsync", "replace"])
def test_failed_save_leaves_previous_file(tmp_path, monkeypatch, where):
    s, path = saved(tmp_path)
    before = path.read_bytes()
    s.run(50)

    def boom(*a, **k):
        if where == "savez":  # fail after part of the archive is written
            f = a[0]
            f.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    target = {"savez": (np, "savez"), "fsync": (os, "fsync"), "replace": (os, "replace")}[where]
    monkeypatch.setattr(*target, boom)
    with pytest.raises(OSError, match="disk full"):
        s.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["sched.npz"]
    assert Scheduler.load(path).time < s.time


# ---------------------------------------------------------------------------
# initial crawl times


@pytest.mark.parametrize("kind", KINDS)
def test_staggered_start_matches_brute_force(kind):
    rng = np.random.default_rng(21)
    m = 200
    pages = random_pages(rng, m)
    last = -rng.uniform(0.0, 10.0, m)
    last[:5] = 0.0
    args = kind_args(kind)
    s = Scheduler(pages, 20.0, last_crawl=last, **args)
    ref = Reference(pages, 20.0, **args)
    ref.last = last.copy()
    np.testing.assert_array_equal(s.last_crawl, last)
    for j in range(600):
        if j % 3 == 0:
            p = int(rng.integers(m))
            t = ref.last[p] + rng.random() * (ref.time - ref.last[p] + 0.1)
            assert s.signal(p, t) == ref.signal(p, t)
        assert s.next() == ref.next(), j
    last[:] = 5.0  # the scheduler took a copy
    assert s.last_crawl.max() <= s.time


def test_staggered_start_is_cheaper():
    # the equal-start transient evaluates O(m) pages per tick; a staggered start does not
    rng = np.random.default_rng(5)
    m = 5000
    pages = random_pages(rng, m, duplicates=False)
    equal = Scheduler(pages, m / 10.0, value="greedy")
    stag = Scheduler(pages, m / 10.0, value="greedy", last_crawl=-rng.uniform(0.0, 10.0, m))
    equal.run(m // 2)
    stag.run(m // 2)
    assert stag._state.n_evaluations < equal._state.n_evaluations / 2  # measured: 417363 vs 1427336


def test_last_crawl_errors():
    pages = PageModel([1.0, 2.0, 3.0], [1.0, 1.0, 1.0])
    for bad, msg in (
        ([0.0, 0.5, -1.0], r"must contain finite numbers <= 0.0; last_crawl\[1\] = 0.5"),
        ([0.0, -1.0, math.nan], r"last_crawl\[2\] = nan"),
        ([-math.inf, 0.0, 0.0], r"last_crawl\[0\] = -inf"),
        ([0.0, 0.0], "must have one entry per page"),
        ([[0.0, 0.0, 0.0]], "must be a 1-D array"),
    ):
        with pytest.raises(ValueError, match=msg):
            Scheduler(pages, 1.0, last_crawl=bad)
    with pytest.raises(TypeError, match="'last_crawl' parameter"):
        Scheduler(pages, 1.0, last_crawl=["a", "b", "c"])


# ---------------------------------------------------------------------------
# signal_many


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(KINDS), m=st.integers(1, 100),
       delay=st.sampled_from([0.0, 0.3]))
def test_signal_many_equals_a_loop_of_signal(seed, kind, m, delay):
    rng = np.random.default_rng(seed)
    pages = random_pages(rng, m)
    a = Scheduler(pages, m / 5.0, signal_delay=delay, **kind_args(kind))
    b = Scheduler(pages, m / 5.0, signal_delay=delay, **kind_args(kind))
    for _ in range(5):
        k = int(rng.integers(1, 3 * m))
        assert a.run(k).tolist() == b.run(k).tolist()
        n = int(rng.integers(0, 2 * m))
        ps = rng.integers(m, size=n)
        last = a.last_crawl[ps]
        ts = last + rng.random(n) * (a.time - last + 0.2)
        counted = a.signal_many(ps, ts)
        assert counted.dtype == np.bool_ and counted.shape == (n,)
        assert counted.tolist() == [b.signal(int(p), float(t)) for p, t in zip(ps, ts)]
        np.testing.assert_array_equal(a.signal_counts, b.signal_counts)
    assert a.run(2 * m).tolist() == b.run(2 * m).tolist()


def test_signal_many_errors_leave_state_unchanged():
    pages = PageModel([1.0, 2.0, 0.5], [1.0, 1.0, 2.0], recall=0.5, false_rate=0.2)
    s = Scheduler(pages, 2.0)
    s.run(5)
    before = s.to_dict()
    crawled = int(np.argmax(s.last_crawl))
    t = s.time
    cases = [
        (ValueError, r"'pages' parameter of Scheduler.signal_many must contain indices in \[0, 3\); pages\[2\] = 3",
         ([0, 1, 3], [t, t, t])),
        (ValueError, r"pages\[0\] = -1", ([-1], [t])),
        (TypeError, "'pages' parameter", ([0.0], [t])),
        (ValueError, r"'times' parameter of Scheduler.signal_many must contain finite numbers; times\[1\] = nan",
         ([0, 1], [t, math.nan])),
        (ValueError, r"times\[0\] = inf", ([0], [math.inf])),
        (ValueError, "must have the same length", ([0, 1], [t])),
        (ValueError, r"must not precede the last crawl of each page; times\[1\]",
         ([0, crawled], [t, s.last_crawl[crawled] - 1e-9])),
    ]
    for exc, msg, args in cases:
        with pytest.raises(exc, match=msg):
            s.signal_many(*args)
        assert state_equal(Scheduler.from_dict(before), s)
    assert s.signal_many([], []).shape == (0,)


def test_simulator_uses_signal_many_with_identical_results():
    class OneByOne(Scheduler):
        signal_many = None  # the simulator then loops over signal()

    rng = np.random.default_rng(9)
    pages = random_pages(rng, 100, degenerate=False)
    kw = dict(horizon=20.0, seed=3, signal_delay=0.05)
    a = simulate(Scheduler(pages, 10.0, signal_delay=0.02), pages, **kw)
    b = simulate(OneByOne(pages, 10.0, signal_delay=0.02), pages, **kw)
    assert a.n_signals > 500 and a.n_signals_counted > 0
    assert a.n_signals_counted == b.n_signals_counted
    assert a.accuracy == b.accuracy
    np.testing.assert_array_equal(a.crawl_counts, b.crawl_counts)
