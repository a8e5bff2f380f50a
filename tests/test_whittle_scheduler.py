"""WhittleScheduler: Whittle top-M on the deterministic model without evaluating every index each period; the
same decisions as evaluating them all (Avrachenkov and Borkar (2018), SPEC section 5)."""

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
