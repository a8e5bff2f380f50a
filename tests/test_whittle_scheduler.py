"""WhittleScheduler: Whittle top-M on the deterministic model without evaluating every index each period; the
same decisions as evaluating them all (Avrachenkov and Borkar (2018), SPEC section 5)."""

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore.whittle import SourceModel, whittle_index
from freshcore.whittle_policies import WhittlePolicy, WhittleScheduler
from freshcore.whittle_simulation import simulate_sources


def numpy_top_m(sources, m, periods, x0):
    """Every index every period, the top m by argpartition with ties to the lowest index; X by eq. (2)."""
    x = np.array(x0, dtype=float)
    n = len(sources)
    chosen, rewards = [], []
    for _ in range(periods):
        g = whittle_index(x, sources)
        part = np.argpartition(-g, m - 1)[:m] if m < n else np.arange(n)
        theta = g[part].min()
        above = np.flatnonzero(g > theta)
        ties = np.flatnonzero(g == theta)[: m - len(above)]
        pick = np.sort(np.concatenate([above, ties]))
        chosen.append(pick)
        rewards.append(x[pick].sum())
        x = sources.alpha * x + sources.u
        x[pick] = sources.u[pick]
    return np.array(chosen), np.array(rewards)


def random_sources(rng, n, costs=True):
    return SourceModel(rng.uniform(1, 100, n), rng.uniform(0.1, 1, n), rng.uniform(0.02, 2, n),
                       period=float(rng.uniform(0.5, 2)), cost=rng.uniform(0.5, 2, n) if costs else 1.0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), m=st.integers(1, 8), start=st.booleans(),
       slack=st.sampled_from([None, 0, 3]))
def test_same_decisions_as_the_simulated_policy(seed, n, m, start, slack):
    m = min(m, n)
    rng = np.random.default_rng(seed)
    s = random_sources(rng, n)
    x0 = rng.uniform(0, 1.5, n) * s.u_star if start else s.u
    chosen, rewards = WhittleScheduler(s, m, x0=x0, slack=slack).run(150)
    run = simulate_sources(WhittlePolicy(m), s, 150, x0=x0)
    assert [np.flatnonzero(a).tolist() for a in run.actions[0]] == chosen.tolist()
    np.testing.assert_allclose(rewards, run.rewards[0], rtol=1e-12)


def test_same_decisions_as_numpy_top_m_at_20000_sources():
    s = random_sources(np.random.default_rng(3), 20000, costs=False)
    sched = WhittleScheduler(s, 100)
    chosen, rewards = sched.run(300)
    ref_chosen, ref_rewards = numpy_top_m(s, 100, 300, s.u)
    np.testing.assert_array_equal(chosen, ref_chosen)
    np.testing.assert_allclose(rewards, ref_rewards, rtol=1e-12)
    assert sched.time == 300
    # the closed-form states: each source's state since its last crawl
    last = np.full(len(s), -1)
    for k, row in enumerate(chosen):
        last[row] = k
    ages = np.where(last >= 0, 300 - last - 1, 300)
    start = np.where(last >= 0, s.u, s.u)
    expect = s.u_star + (start - s.u_star) * np.exp(-s.decay * s.period * ages)
    np.testing.assert_allclose(sched.states(), expect, rtol=1e-13)


def test_ties_and_table1():
    s = SourceModel(10.0, 1.0, [0.5, 0.5, 0.5])
    chosen, _ = WhittleScheduler(s, 1).run(6)
    assert chosen[:, 0].tolist() == [0, 1, 2, 0, 1, 2]
    table1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    chosen, rewards = WhittleScheduler(table1, 2).run(1000)
    run = simulate_sources(WhittlePolicy(2), table1, 1000)
    assert round(float(rewards.mean()), 2) == round(run.reward, 2)
    chosen2, _ = WhittleScheduler(table1, 4).run(3)
    assert chosen2.tolist() == [[0, 1, 2, 3]] * 3


@pytest.mark.parametrize(
    ("call", "exc", "message"),
    [
        (lambda s: WhittleScheduler(s, 5), ValueError, r"'budget' parameter of WhittleScheduler must be an integer "
                                                       r"in 1\.\.4"),
        (lambda s: WhittleScheduler(s, 0), ValueError, "'budget'"),
        (lambda s: WhittleScheduler(s, 1, x0=[1.0, -2.0, 0.0, 0.0]), ValueError, r"x0\[1\] = -2.0"),
        (lambda s: WhittleScheduler(s, 1, x0=np.ones((2, 4))), ValueError, r"must have shape \(4,\)"),
        (lambda s: WhittleScheduler(s, 1, slack=-1), ValueError, "'slack'"),
        (lambda s: WhittleScheduler(object(), 1), TypeError, "'sources' parameter of WhittleScheduler"),
        (lambda s: WhittleScheduler(s, 1).run(-1), ValueError, r"'n' parameter of WhittleScheduler\.run"),
    ],
)
def test_scheduler_bad_input(call, exc, message):
    with pytest.raises(exc, match=message):
        call(SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21]))


# -- save / restore ------------------------------------------------------------------------------------------


def _scheduler(seed=7, n=3000, m=25):
    rng = np.random.default_rng(seed)
    s = random_sources(rng, n)
    return WhittleScheduler(s, m, x0=rng.uniform(0, 1.5, n) * s.u_star, slack=4)


@pytest.mark.parametrize("how", ["dict", "pickle", "copy", "deepcopy"])
def test_restored_scheduler_continues_exactly(how):
    a = _scheduler()
    a.run(173)
    b = {"dict": lambda: WhittleScheduler.from_dict(a.to_dict()), "pickle": lambda: pickle.loads(pickle.dumps(a)),
         "copy": lambda: copy.copy(a), "deepcopy": lambda: copy.deepcopy(a)}[how]()
    assert b.time == a.time == 173 and b.budget == a.budget
    np.testing.assert_array_equal(b.states(), a.states())
    # the copy runs first: the original must not move
    chosen_b, rewards_b = b.run(400)
    assert a.time == 173
    chosen_a, rewards_a = a.run(400)
    np.testing.assert_array_equal(chosen_b, chosen_a)
    np.testing.assert_array_equal(rewards_b, rewards_a)  # bit for bit
    assert a.time == b.time == 573
    np.testing.assert_array_equal(b.states(), a.states())
    for k, v in a.to_dict().items():
        np.testing.assert_array_equal(b.to_dict()[k], v, err_msg=k)


def test_to_dict_holds_the_record_and_a_fresh_scheduler_round_trips():
    s = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    sched = WhittleScheduler(s, 1)
    d = sched.to_dict()
    assert d["time"] == 0 and d["last_crawl"].tolist() == [-1] * 4 and d["budget"] == 1 and d["slack"] == 1
    np.testing.assert_array_equal(d["states"], s.u)
    chosen, _ = sched.run(5)
    d = sched.to_dict()
    assert d["time"] == 5 and d["last_crawl"].tolist() == [4, 3, -1, -1] and chosen[:, 0].tolist() == [0, 1, 0, 1, 0]
    ref, _ = WhittleScheduler(s, 1).run(12)
    np.testing.assert_array_equal(WhittleScheduler.from_dict(d).run(7)[0], ref[5:])
    assert repr(sched) == "WhittleScheduler(n_sources=4, budget=1, time=5)"


def test_rewards_are_correctly_rounded_sums_of_the_crawled_states():
    # (so they do not depend on the order in which the core selected the sources, which a restore changes)
    s = random_sources(np.random.default_rng(5), 500)
    sched = WhittleScheduler(s, 40)
    for _ in range(60):
        x = sched.states()
        (row,), (r,) = sched.run(1)
        assert r == math.fsum(x[row].tolist())


def test_a_reward_that_overflows_is_inf_as_the_plain_sum():
    _, rewards = WhittleScheduler(SourceModel(1.7e308, 1.0, [1.0, 1.0, 1.0]), 2).run(3)
    assert np.isposinf(rewards).all()


def test_the_compiled_core_refuses_pickle_with_a_clear_message():
    with pytest.raises(TypeError, match="pickle the WhittleScheduler that holds it"):
        pickle.dumps(_scheduler(n=10, m=2)._core)


def _edit(**changes):
    sched = _scheduler(n=50, m=3)
    sched.run(20)
    d = sched.to_dict()
    for k, v in changes.items():
        if v is None:
            del d[k]
        elif callable(v):
            d[k] = v(d[k])
        else:
            d[k] = v
    return d


def _set(i, v):
    def f(a):
        a = a.copy()
        a[i] = v
        return a
    return f


@pytest.mark.parametrize(
    ("d", "exc", "message"),
    [
        (lambda: [1, 2], TypeError, "'d' parameter of WhittleScheduler.from_dict must be a dict"),
        (lambda: _edit(time=None), ValueError, r"lacks the entries \['time'\]"),
        (lambda: _edit(format_version=2), ValueError, "format version 2"),
        (lambda: _edit(decay=_set(3, -1.0)), ValueError, r"'decay' entry .* decay\[3\] = -1.0"),
        (lambda: _edit(x0=_set(2, np.nan)), ValueError, r"'x0' entry .* x0\[2\] = nan"),
        (lambda: _edit(cost=lambda a: a[:-1]), ValueError, r"'cost' entry .* shape \(50,\)"),
        (lambda: _edit(period=0.0), ValueError, "'period' entry"),
        (lambda: _edit(budget=51), ValueError, r"'budget' entry .* must be in 1\.\.50"),
        (lambda: _edit(budget=0), ValueError, "'budget' entry"),
        (lambda: _edit(slack=48), ValueError, r"'slack' entry .* at most n_sources - budget = 47"),
        (lambda: _edit(time=-1), ValueError, "'time' entry"),
        (lambda: _edit(time=1.5), ValueError, "'time' entry .* integer"),
        (lambda: _edit(last_crawl=_set(4, 20)), ValueError, r"'last_crawl' entry .* before 'time' = 20; "
                                                            r"last_crawl\[4\] = 20"),
        (lambda: _edit(last_crawl=_set(4, -2)), ValueError, r"'last_crawl' entry .* last_crawl\[4\] = -2"),
        (lambda: _edit(last_crawl=lambda a: np.where(a == 19, -1, a)), ValueError,
         r"'last_crawl' entry .* crawled in period time - 1 = 19, got 0"),
        (lambda: _edit(last_crawl=lambda a: np.full_like(a, 19)), ValueError,
         "'last_crawl' entry .* 50 sources last crawled in period 19, more than 'budget' = 3"),
        (lambda: _edit(states=lambda a: a * 1.01), ValueError, r"'states' entry .* states\[0\]"),
        (lambda: _edit(decay=lambda a: np.full_like(a, 1e-300)), ValueError, "source entries .* SourceModel"),
    ],
)
def test_from_dict_refuses_bad_dicts(d, exc, message):
    with pytest.raises(exc, match=message):
        WhittleScheduler.from_dict(d())
