"""ShardedScheduler state (issue 4): to_dict/from_dict, pickle/copy and save/load.

The contract of SPEC section 4, as for one Scheduler (tests/test_schedule_state.py): after a save/load
(or pickle, copy, from_dict) the continued decision sequence is identical to an uninterrupted run, also
in the middle of a round and of a rate change; a bad file or dict gives a clear error.
"""

from __future__ import annotations

import copy
import math
import os
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freshcore import _statefile
from freshcore.pages import PageModel
from freshcore.schedule import Scheduler
from freshcore.sharding import ShardedScheduler

from _reference import KINDS, SHARDED_OP, kind_args, plain_pages
from _state_files import (
    HOWS,
    bit_flips_never_give_another_state,
    failed_save_leaves_previous_file,
    restore,
    rewrite,
    state_equal,
    truncated_files_raise,
)

OPS = st.lists(SHARDED_OP, max_size=16)


def apply(s: ShardedScheduler, op: str, arg: int, out: list) -> None:
    if op == "run":
        out.extend(s.run(arg).tolist())
    elif op == "next":
        out.append(s.next())
    elif op == "rate":
        s.set_bandwidth(arg / 2)
    else:
        page = arg % s.n_pages
        t = max(s.time, float(s.last_crawl[page])) + (arg % 7) * 0.01
        out.append(s.signal(page, t))


# ---------------------------------------------------------------------------
# the continued run is the uninterrupted one


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(1, 4),
    kind=st.sampled_from(KINDS),
    first=OPS,
    second=OPS,
    how=st.sampled_from(HOWS),
)
def test_restore_continues_the_uninterrupted_run(tmp_path_factory, seed, k, kind, first, second, how):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(k, 3 * k + 8))
    pages = plain_pages(rng, m)
    args = dict(kind_args(kind), signal_delay=0.02, assign=rng.permutation(np.arange(m) % k))
    whole = ShardedScheduler(pages, 5.0, k, **args)
    want: list = []
    for op, arg in first + second:
        apply(whole, op, arg, want)
    part = ShardedScheduler(pages, 5.0, k, **args)
    got: list = []
    for op, arg in first:
        apply(part, op, arg, got)
    restored = restore(part, how, tmp_path_factory.mktemp("s"))
    assert state_equal(restored, part)
    for op, arg in second:
        apply(restored, op, arg, got)
    assert got == want
    # bit-identical shards: the same value evaluations, the same final state
    assert [x._state.n_evaluations for x in restored.schedulers] == [x._state.n_evaluations for x in whole.schedulers]
    assert state_equal(restored, whole)


@pytest.mark.parametrize("how", HOWS)
def test_restore_mid_round_during_a_rate_change(tmp_path, how):
    rng = np.random.default_rng(11)
    pages = plain_pages(rng, 40)
    whole = ShardedScheduler(pages, 8.0, 4, value="exact", signal_delay=0.05)
    part = ShardedScheduler(pages, 8.0, 4, value="exact", signal_delay=0.05)
    for s in (whole, part):
        s.run(9)  # round 3 at t = 1.5, shard 0 has ticked
        s.set_bandwidth(12.0)  # shards 1..3 still tick at 1.5, then take rate 3
        s.signal(5, s.time)
        s.signal(6, s.time + 0.01)
    d = part.to_dict()
    assert (d["position"], d["ticks"], d["time"], d["shard_rate"], d["pending_rate"]) == (1, 3, 1.5, 2.0, 3.0)
    assert [x["rate"] for x in d["schedulers"]] == [3.0, 2.0, 2.0, 2.0]
    restored = restore(part, how, tmp_path)
    np.testing.assert_array_equal(restored.tick_times(8), whole.tick_times(8))
    for n in (1, 2, 5, 17):
        np.testing.assert_array_equal(restored.run(n), whole.run(n))
    restored.set_bandwidth(4.0)
    whole.set_bandwidth(4.0)
    np.testing.assert_array_equal(restored.run(23), whole.run(23))
    assert state_equal(restored, whole)


def test_copies_are_independent():
    s = ShardedScheduler(PageModel(np.linspace(0.1, 1.0, 6), np.ones(6)), 2.0, 2, value="greedy")
    s.run(5)
    for c in (copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
        assert c is not s and all(x is not y for x, y in zip(c.schedulers, s.schedulers))
        c.run(3)
        c.signal(0, c.time)
        c.set_bandwidth(4.0)
        assert (s.time, s.bandwidth, int(s.signal_counts.sum())) == (3.0, 2.0, 0)
        assert c.time == 4.0


def test_to_dict_contents():
    pages = PageModel([1.0, 2.0, 0.5, 0.25, 3.0], [1.0, 3.0, 1.0, 1.0, 2.0], recall=0.25, false_rate=0.5)
    s = ShardedScheduler(pages, 2.0, 2, value="approx", terms=2, signal_delay=0.1, assign=[1, 0, 0, 1, 1])
    s.run(3)
    d = s.to_dict()
    assert d["format_version"] == ShardedScheduler.FORMAT_VERSION
    assert (d["shards"], d["rate"], d["position"], d["time"], d["ticks"]) == (2, 2.0, 1, 2.0, 2)
    assert (d["origin"], d["shard_rate"], d["pending_rate"]) == (0.0, 1.0, None)
    assert d["assign"].tolist() == [1, 0, 0, 1, 1]
    assert [x["format_version"] for x in d["schedulers"]] == [Scheduler.FORMAT_VERSION] * 2
    assert state_equal(s.schedulers[1], Scheduler.from_dict(d["schedulers"][1]))
    d["assign"][:] = 0  # copies
    d["schedulers"][0]["last"][:] = 99.0
    assert s.shard_of(0) == 1 and s.last_crawl.max() == 2.0
    r = ShardedScheduler.from_dict(s.to_dict())
    assert r.pages == pages and r.shard_pages(1).tolist() == [0, 3, 4] and r.local_index(4) == 2
    assert (r.value, r.schedulers[0].terms, r.schedulers[1].signal_delay) == ("approx", 2, 0.1)
    with pytest.raises(ValueError):
        r.shard_pages(0)[0] = 1  # read-only, as after construction
    # a fresh one (nothing built yet) round-trips too
    fresh = ShardedScheduler(pages, 2.0, 3)
    assert ShardedScheduler.from_dict(fresh.to_dict()).run(7).tolist() == fresh.run(7).tolist()


# ---------------------------------------------------------------------------
# bad dicts


def make(k=3, n=7):
    s = ShardedScheduler(plain_pages(np.random.default_rng(2), 12), 6.0, k, value="exact")
    s.run(n)  # n = 7, k = 3: mid-round, position 1
    return s


def test_from_dict_rejects_bad_entries():
    s = make()
    good = s.to_dict()
    assert good["position"] == 1

    def with_(**kw):
        d = copy.deepcopy(good)
        d.update(kw)
        return d

    def shard(i, **kw):
        d = copy.deepcopy(good)
        d["schedulers"][i].update(kw)
        return d

    other_kind = ShardedScheduler(s.pages, 6.0, 3, value="greedy")
    other_kind.run(7)
    mixed = copy.deepcopy(good)
    mixed["schedulers"][2] = other_kind.schedulers[2].to_dict()
    emptied = copy.deepcopy(good)
    one = Scheduler.from_dict(emptied["schedulers"][1])
    emptied["schedulers"][1] = one.remove_pages(one.page_ids).to_dict()
    fresh = ShardedScheduler(s.pages, 6.0, 3).to_dict()
    cases = [
        ({k: v for k, v in good.items() if k != "ticks"}, r"lacks the entries \['ticks'\]"),
        (with_(format_version=ShardedScheduler.FORMAT_VERSION + 1),
         f"format version {ShardedScheduler.FORMAT_VERSION + 1}"),
        (with_(shards=0), "'shards' entry.*integer >= 1"),
        (with_(shards=2.0), "'shards' entry.*integer >= 1"),
        (with_(shards=True), "'shards' entry.*integer >= 1"),
        (with_(shards=4), "'rate' entry.*'shard_rate'"),
        (with_(shards=4, rate=8.0), "'assign'.*leaves shard 3 without pages"),
        (with_(position=3), "'position' entry.*below 'shards'"),
        (with_(position=-1), "'position' entry.*integer >= 0"),
        (with_(ticks=-1), "'ticks' entry.*integer >= 0"),
        (with_(ticks=0, time=0.0), "'position' entry.*before the first round"),
        (with_(time=math.nan), "'time' entry.*finite number"),
        (with_(time=np.zeros(2)), r"'time' entry.*must be a scalar \(expected a scalar entry, got an array of shape"),
        (with_(time=good["time"] + 0.5), "'time' entry.*'origin' \\+ 'ticks' / 'shard_rate'"),
        (with_(origin="0"), "'origin' entry.*finite number"),
        (with_(rate=0.0), "'rate' entry.*> 0"),
        (with_(rate=7.0), "'rate' entry.*shards' new rate 'shard_rate'"),
        (with_(shard_rate=-2.0), "'shard_rate' entry.*> 0"),
        (with_(pending_rate=math.inf), "'pending_rate' entry.*finite number"),
        (with_(pending_rate=3.0), "'rate' entry.*'pending_rate'"),
        (with_(pending_rate=2.0), "shard 0's clock"),  # shard 0 did not take a new rate
        ({**fresh, "pending_rate": 2.0}, "'pending_rate' entry.*None between rounds"),
        (with_(assign=good["assign"].astype(float)), "'assign' entry.*1-d integer array"),
        (with_(assign=good["assign"][None]), "'assign' entry.*1-d integer array"),
        (with_(assign=np.where(np.arange(12) == 4, 3, good["assign"])), r"'assign'.*\[0, 3\); assign\[4\] = 3"),
        (with_(assign=np.zeros(12, dtype=np.int64)), "'assign'.*leaves shard 1 without pages"),
        (with_(assign=good["assign"][:-1]), "'schedulers' entry.*shard 2 the 3 page ids"),
        (with_(schedulers=tuple(good["schedulers"][:2])), "'schedulers' entry.*list of 3 dicts"),
        (with_(schedulers={"0": good["schedulers"][0]}), "'schedulers' entry.*list of 3 dicts"),
        (with_(schedulers=[*good["schedulers"][:2], [1, 2]]), "bad dict for shard 2.*must be a dict"),
        (shard(1, rate=0.0), "bad dict for shard 1.*'rate' entry.*> 0.0, got 0.0"),
        (shard(0, format_version=Scheduler.FORMAT_VERSION + 1), "bad dict for shard 0.*format version"),
        (mixed, "share one value kind.*shard 2 differs"),
        (emptied, "shard 1 the 4 page ids of 'assign', at least one of them live"),
        (shard(2, k=good["schedulers"][2]["k"] + 1), r"bad dict for shard 2.*'time' entry.*'origin' \+ 'k' / 'rate'"),
        (shard(2, origin=1.0, k=0, time=1.0), "shard 2's clock"),
        (shard(0, rate=4.0), r"bad dict for shard 0.*'time' entry.*'origin' \+ 'k' / 'rate'"),
        (shard(1, time=good["time"]), r"bad dict for shard 1.*'time' entry.*'origin' \+ 'k' / 'rate'"),
        # shard 1 has not ticked in this round yet: a clock of its own that adds up, but not the merge's
        (shard(1, time=good["time"], k=good["schedulers"][1]["k"] + 1, nticks=good["schedulers"][1]["nticks"] + 1),
         "shard 1's clock"),
    ]
    for d, msg in cases:
        with pytest.raises(ValueError, match=msg):
            ShardedScheduler.from_dict(d)
    for bad in ([1, 2], None, "d"):
        with pytest.raises(TypeError, match=r"'d' parameter of ShardedScheduler.from_dict must be a dict"):
            ShardedScheduler.from_dict(bad)
    assert state_equal(ShardedScheduler.from_dict(good), s)


# ---------------------------------------------------------------------------
# the file: Scheduler's machinery, its own magic string


def saved(tmp_path, pending=False):
    s = make(k=3, n=10)
    if pending:
        s.set_bandwidth(9.0)
    s.signal(1, s.time)
    path = tmp_path / "sharded.npz"
    s.save(path)
    return s, path


def entries(path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("pending", [False, True])
def test_save_is_an_npz_without_pickles(tmp_path, pending):
    s, path = saved(tmp_path, pending)
    assert os.listdir(tmp_path) == ["sharded.npz"]  # no temporary file left behind
    data = entries(path)
    assert str(data["magic"]) == "freshcore.ShardedScheduler"
    assert int(data["format_version"]) == ShardedScheduler.FORMAT_VERSION
    assert int(data["schedulers/2/format_version"]) == Scheduler.FORMAT_VERSION
    # None is listed, not stored: a pending rate only in the middle of a change of bandwidth
    assert ("pending_rate" in data) == pending
    assert ("pending_rate" in data.get("none", np.array([])).tolist()) != pending
    assert {k.split("/")[1] for k in data if "/" in k} == {"0", "1", "2"}
    s.save(str(path))  # overwrite, str path
    assert state_equal(ShardedScheduler.load(str(path)), s)


def test_load_truncated_file(tmp_path):
    truncated_files_raise(*saved(tmp_path), what="sharded scheduler")


def test_load_bit_flips_never_give_another_state(tmp_path):
    bit_flips_never_give_another_state(*saved(tmp_path), state_equal, n_flips=150)


def test_load_detects_payload_change_with_valid_archive(tmp_path):
    _, path = saved(tmp_path)
    data = entries(path)
    data["schedulers/1/last"] = data["schedulers/1/last"] - 1.0
    np.savez(path, **data)
    with pytest.raises(ValueError, match="SHA-256"):
        ShardedScheduler.load(path)


def test_load_wrong_magic_other_version_and_bad_state(tmp_path):
    s, path = saved(tmp_path)
    one = tmp_path / "one.npz"
    s.schedulers[0].save(one)
    with pytest.raises(ValueError, match=r"not a freshcore sharded scheduler file: its magic string is "
                       "'freshcore.Scheduler'.*with Scheduler.load"):
        ShardedScheduler.load(one)
    with pytest.raises(ValueError, match=r"not a freshcore scheduler file.*ShardedScheduler.load"):
        Scheduler.load(path)
    rewrite(path, magic="something else")
    with pytest.raises(ValueError, match="not a freshcore sharded scheduler file"):
        ShardedScheduler.load(path)
    s.save(path)
    rewrite(path, format_version=ShardedScheduler.FORMAT_VERSION + 1)
    version = ShardedScheduler.FORMAT_VERSION + 1
    with pytest.raises(ValueError, match=f"sharded scheduler file of format version {version}"):
        ShardedScheduler.load(path)
    s.save(path)
    rewrite(path, **{"schedulers/1/format_version": Scheduler.FORMAT_VERSION + 1})
    with pytest.raises(ValueError, match=r"bad dict for shard 1.*format version"):
        ShardedScheduler.load(path)
    s.save(path)
    rewrite(path, position=0)  # a consistent file whose state is not: the shards' clocks disagree
    with pytest.raises(ValueError, match="shard 1's clock"):
        ShardedScheduler.load(path)
    s.save(path)
    data = entries(path)
    del data["schedulers/2/key"]
    data["sha256"] = np.asarray(_statefile.digest(data))
    np.savez(path, **data)
    with pytest.raises(ValueError, match=r"bad dict for shard 2.*lacks the entries"):
        ShardedScheduler.load(path)
    np.save(tmp_path / "plain.npy", np.zeros(3))
    with pytest.raises(ValueError, match="not a freshcore sharded scheduler file"):
        ShardedScheduler.load(tmp_path / "plain.npy")
    with pytest.raises(FileNotFoundError):
        ShardedScheduler.load(tmp_path / "missing")


@pytest.mark.parametrize("where", ["savez", "fsync", "replace"])
def test_failed_save_leaves_previous_file(tmp_path, monkeypatch, where):
    failed_save_leaves_previous_file(*saved(tmp_path), monkeypatch, where)


def test_the_file_machinery_is_shared():
    # one implementation of the atomic, checked file (freshcore._statefile), two magic strings
    assert ShardedScheduler._MAGIC != Scheduler._MAGIC
    assert issubclass(ShardedScheduler, _statefile.StateFile) and issubclass(Scheduler, _statefile.StateFile)
    assert ShardedScheduler.save is Scheduler.save
