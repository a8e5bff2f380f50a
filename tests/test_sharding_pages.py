"""ShardedScheduler with pages added, removed and re-parameterised by stable id (issue 4).

New pages go, one by one, to the shard with the fewest live pages; ids are never reused; the merged
stream stays the (tick time, shard) merge of the shards' own exact schedulers.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freshcore import _schedule, sharding
from freshcore.pages import PageModel
from freshcore.schedule import Scheduler
from freshcore.sharding import ShardedScheduler

from _reference import KINDS, SHARDED_OP, DynamicMergedReference, kind_args, plain_pages
from _state_files import HOWS, restore, state_equal

OP = st.one_of(
    SHARDED_OP,
    st.tuples(st.just("add"), st.integers(1, 4), st.integers(0, 2**32 - 1), st.booleans()),
    st.tuples(st.just("remove"), st.integers(0, 10**6)),
    st.tuples(st.just("update"), st.integers(0, 10**6), st.integers(0, 2**32 - 1)),
    st.tuples(st.just("restore"), st.sampled_from(HOWS)),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 4), kind=st.sampled_from(KINDS),
       ops=st.lists(OP, max_size=25))
def test_against_the_dynamic_reference(tmp_path_factory, seed, k, kind, ops):
    """Any interleaving of run/next/set_bandwidth/signals/additions/removals/updates/restores equals the reference."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(k, 2 * k + 5))
    pages = plain_pages(rng, m)
    assign = rng.permutation(np.arange(m) % k)
    args = dict(kind_args(kind), signal_delay=0.02)
    s = ShardedScheduler(pages, 5.0, k, assign=assign, **args)
    ref = DynamicMergedReference(pages, 5.0, k, assign, **args)
    for op, arg, *more in ops:
        live = s.page_ids
        if op == "run":
            np.testing.assert_array_equal(s.run(arg), [ref.next() for _ in range(arg)])
        elif op == "next":
            assert s.next() == ref.next()
        elif op == "rate":
            s.set_bandwidth(arg / 2)
            ref.set_bandwidth(arg / 2)
        elif op == "signal":
            page = int(live[arg % len(live)])
            t = max(s.time, float(s.last_crawl[arg % len(live)])) + (arg % 7) * 0.01
            assert s.signal(page, t) == ref.signal(page, t)
        elif op == "add":
            r = np.random.default_rng(more[0])
            new = plain_pages(r, arg)
            if more[1]:  # explicit last crawls, before the time of every shard (some may be a round behind)
                last = min(x.time for x in s.schedulers) - 2.0 * r.random(arg)
                assert s.add_pages(new, last_crawl=last).tolist() == ref.add(new, last)
            else:
                assert s.add_pages(new).tolist() == ref.add(new)
        elif op == "remove":
            page = int(live[arg % len(live)])
            if s.schedulers[s.shard_of(page)].n_pages == 1:
                with pytest.raises(ValueError, match=f"leave shard {s.shard_of(page)} without pages"):
                    s.remove_pages([page])
            else:
                s.remove_pages([page])
                ref.remove(page)
        elif op == "update":
            page = int(live[arg % len(live)])
            new = plain_pages(np.random.default_rng(more[0]), 1)
            s.update_pages([page], new)
            ref.update(page, new)
        else:
            s = restore(s, arg, tmp_path_factory.mktemp("s"))
        assert s.page_ids.tolist() == ref.live() and s.n_pages == len(ref.live())
        assert s.last_crawl.tolist() == ref.per_page("last_crawl")
        assert s.signal_counts.tolist() == ref.per_page("signal_counts")
        assert s.time == ref.time
    # the pages' parameters follow their ids
    want = {}
    for sh, sched in enumerate(ref.scheds):
        for j, x in zip(sched.page_ids.tolist(), sched.pages.change_rate.tolist()):
            want[ref.ids[sh][j]] = x
    assert s.pages.change_rate.tolist() == [want[g] for g in s.page_ids.tolist()]
    for g in s.page_ids.tolist():
        sh = s.shard_of(g)
        assert g in s.shard_pages(sh) and sh == ref.where(g)[0] and s.local_index(g) == ref.where(g)[1]


def test_one_shard_is_the_scheduler_with_dynamic_pages():
    rng = np.random.default_rng(4)
    pages = plain_pages(rng, 30)
    a = Scheduler(pages, 6.0, value="exact", signal_delay=0.05)
    b = ShardedScheduler(pages, 6.0, 1, value="exact", signal_delay=0.05)
    for step in range(30):
        np.testing.assert_array_equal(a.run(7), b.run(7))
        new = plain_pages(rng, 2)
        assert a.add_pages(new).tolist() == b.add_pages(new).tolist()
        gone = [int(a.page_ids[step % a.n_pages])]
        a.remove_pages(gone)
        b.remove_pages(gone)
        upd = [int(a.page_ids[-1])]
        a.update_pages(upd, plain_pages(np.random.default_rng(step), 1))
        b.update_pages(upd, plain_pages(np.random.default_rng(step), 1))
        page = int(a.page_ids[0])
        assert a.signal(page, a.time) == b.signal(page, b.time)
        np.testing.assert_array_equal(a.page_ids, b.page_ids)
        np.testing.assert_array_equal(a.last_crawl, b.last_crawl)
        assert a.pages == b.pages


@pytest.mark.parametrize("seed", range(6))
def test_fill_is_one_by_one_to_the_smallest_shard(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 9))
    live = rng.integers(1, 12, k)
    for n in (0, 1, 2, 5, 17, 60):
        counts, want = live.copy(), []
        for _ in range(n):
            s = int(np.argmin(counts))  # the first of the smallest
            want.append(s)
            counts[s] += 1
        assert sharding._fill(live, n).tolist() == want


def test_added_pages_go_to_the_shard_with_fewest_live_pages():
    s = ShardedScheduler(plain_pages(np.random.default_rng(1), 12), 6.0, 3, value="greedy")
    s.remove_pages([1, 4])  # shard 1 keeps 2 pages
    assert [x.n_pages for x in s.schedulers] == [4, 2, 4]
    new = s.add_pages(plain_pages(np.random.default_rng(2), 4))
    assert new.tolist() == [12, 13, 14, 15]
    assert [s.shard_of(g) for g in new] == [1, 1, 0, 1]
    assert [s.local_index(g) for g in new] == [4, 5, 4, 6]  # never reused: shard 1's removed ids were 0 and 1
    assert s.shard_pages(1).tolist() == [7, 10, 12, 13, 15]
    assert s.page_ids.tolist() == [0, 2, 3, *range(5, 16)] and s.n_pages == 14
    out = s.run(60)
    assert set(out.tolist()) <= set(s.page_ids.tolist())
    assert not np.isin(out, [1, 4]).any()


def test_added_pages_take_their_shards_time():
    pages = plain_pages(np.random.default_rng(5), 6)
    s = ShardedScheduler(pages, 3.0, 3, value="exact")
    s.run(4)  # round 2 at t = 2, shard 0 has ticked; shards 1, 2 are at t = 1
    new = s.add_pages(plain_pages(np.random.default_rng(6), 3))
    assert [s.shard_of(g) for g in new] == [0, 1, 2]
    assert s.last_crawl[-3:].tolist() == [2.0, 1.0, 1.0]
    with pytest.raises(ValueError, match=r"last_crawl\[1\] = 1.5 > 1.0, the time of shard 1"):
        s.add_pages(plain_pages(np.random.default_rng(7), 2), last_crawl=[1.5, 1.5])
    assert s.n_pages == 9
    with pytest.raises(ValueError, match="one entry per page"):
        s.add_pages(plain_pages(np.random.default_rng(7), 2), last_crawl=[0.5])
    with pytest.raises(ValueError, match="'last_crawl'"):
        s.add_pages(plain_pages(np.random.default_rng(7), 2), last_crawl=np.nan)
    assert s.add_pages(plain_pages(np.random.default_rng(7), 2), last_crawl=0.5).tolist() == [9, 10]
    assert s.last_crawl[-2:].tolist() == [0.5, 0.5]


def make():
    s = ShardedScheduler(plain_pages(np.random.default_rng(3), 9), 6.0, 3, value="exact", signal_delay=0.05)
    s.run(7)
    s.remove_pages([4])
    return s


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda s: s.remove_pages([4]), ValueError, r"'ids' parameter of ShardedScheduler.remove_pages.*ids\[0\] = 4 "
                                                    r"\(removed\)"),
        (lambda s: s.remove_pages([0, 9]), ValueError, "'ids'"),
        (lambda s: s.remove_pages([0, 3, 0]), ValueError, r"distinct page ids; ids\[2\] = 0 is repeated"),
        (lambda s: s.remove_pages([1, 7]), ValueError, "would leave shard 1 without pages.*nothing is removed"),
        (lambda s: s.remove_pages([0.0]), TypeError, "'ids'"),
        (lambda s: s.update_pages([4], plain_pages(np.random.default_rng(0), 1)), ValueError, r"\(removed\)"),
        (lambda s: s.update_pages([0, 1], plain_pages(np.random.default_rng(0), 1)), ValueError,
         r"one page per id \(2\)"),
        (lambda s: s.update_pages([0], [1.0, 1.0]), TypeError, "PageModel"),
        (lambda s: s.add_pages([1.0]), TypeError, "'pages' parameter of ShardedScheduler.add_pages"),
        (lambda s: s.signal(4, 5.0), ValueError, r"'page' parameter of ShardedScheduler.signal must be a live page "
                                                 r"id. Got 4 \(removed\)"),
        (lambda s: s.signal_many([0, 4], [5.0, 5.0]), ValueError, r"pages\[1\] = 4 \(removed\)"),
        (lambda s: s.shard_of(4), ValueError, r"\(removed\)"),
        (lambda s: s.local_index(9), ValueError, "'page'"),
    ],
)
def test_bad_calls_leave_the_state_unchanged(call, exc, match):
    s, twin = make(), make()
    with pytest.raises(exc, match=match):
        call(s)
    assert state_equal(s, twin)
    np.testing.assert_array_equal(s.run(11), twin.run(11))


def test_signal_count_limit_keeps_the_shards_message(monkeypatch):
    s = ShardedScheduler(PageModel([1.0, 0.5], [1.0, 1.0], recall=0.5), 2.0, 2)
    monkeypatch.setattr(_schedule, "MAX_SIGNALS", 2)
    s.signal(1, 0.0)
    s.signal(1, 0.0)
    with pytest.raises(ValueError, match="already has 2 signals"):
        s.signal(1, 0.0)
