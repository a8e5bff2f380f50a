"""Policies and the deterministic simulator of ephemeral-content sources; SPEC section 5's reproducible numbers
(Section IX of Avrachenkov and Borkar (2018))."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore.whittle import SourceModel, whittle_index
from freshcore.whittle_policies import (
    GreedyPolicy,
    RoundRobinPolicy,
    SourcePolicy,
    StaticPolicy,
    WhittlePolicy,
    top_m,
)
from freshcore.whittle_simulation import simulate_sources

TABLE1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])


def gaps(crawled):
    return set(np.diff(np.flatnonzero(crawled)).tolist())


# ---------------------------------------------------------------------------
# SPEC section 5, deterministic


def test_whittle_m1_reproduces_260_30_and_alternates():
    run = simulate_sources(WhittlePolicy(1), TABLE1, 1000)
    assert round(run.reward, 2) == 260.30
    a = run.actions[0]
    assert a.sum(axis=1).tolist() == [1] * 1000
    assert a[:, 0].tolist() == [k % 2 == 0 for k in range(1000)]     # sources 1 and 2 alternate
    assert a[:, 1].tolist() == [k % 2 == 1 for k in range(1000)]
    assert not a[:, 2:].any()                                         # 3 and 4 never crawled
    # the long run: the average over the period-2 cycle
    assert round(float(run.rewards[0, 2:4].mean()), 2) == 260.39


def test_always_source_1_gives_179_8():
    assert round(simulate_sources(StaticPolicy([[0]]), TABLE1, 1000).reward, 1) == 179.8


def test_whittle_m2_pattern():
    run = simulate_sources(WhittlePolicy(2), TABLE1, 1000)
    a = run.actions[0, 100:]
    assert a.sum(axis=1).tolist() == [2] * 900
    assert a[:, 0].all()                                              # source 1 every period
    assert gaps(a[:, 1]) == {1, 2} and gaps(a[:, 2]) == {3, 4} and gaps(a[:, 3]) == {7}
    # periodic with period 7 after the transient: the long run is one cycle's average
    np.testing.assert_array_equal(run.actions[0, 100:107], run.actions[0, 107:114])
    # SPEC's "long run 337.78": the cycle's average is 337.7745 (337.78 only when rounded twice)
    assert round(float(run.rewards[0, 100:107].mean()), 4) == 337.7745


def test_greedy_and_round_robin_deterministic():
    g = simulate_sources(GreedyPolicy(1), TABLE1, 1000)
    w = simulate_sources(WhittlePolicy(1), TABLE1, 1000)
    np.testing.assert_array_equal(g.actions, w.actions)               # the same alternation here
    rr = simulate_sources(RoundRobinPolicy(1), TABLE1, 8)
    assert rr.actions[0].argmax(axis=1).tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    rr2 = simulate_sources(RoundRobinPolicy(3), TABLE1, 3)
    assert rr2.actions[0].astype(int).tolist() == [[1, 1, 1, 0], [1, 1, 0, 1], [1, 0, 1, 1]]


# ---------------------------------------------------------------------------
# Policies against plain references


def reference_run(score, sources, m, n_steps, x0):
    """The deterministic dynamics written out: top-m of score(x, age) by sorting (ties: lowest index)."""
    x, age = np.array(x0, dtype=float), np.ones(len(sources), dtype=int)
    total, chosen = 0.0, []
    for _ in range(n_steps):
        s = score(x, age)
        pick = sorted(range(len(x)), key=lambda i: (-s[i], i))[:m]
        total += sum(x[i] for i in pick)
        chosen.append(sorted(pick))
        crawled = np.zeros(len(x), dtype=bool)
        crawled[pick] = True
        x = np.where(crawled, sources.u, sources.alpha * x + sources.u)
        age = np.where(crawled, 1, age + 1)
    return total / n_steps, chosen


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 7), m=st.integers(1, 3), start=st.booleans())
def test_index_policies_match_reference(seed, n, m, start):
    m = min(m, n)
    rng = np.random.default_rng(seed)
    s = SourceModel(rng.uniform(1, 100, n), rng.uniform(0.1, 2, n), rng.uniform(0.05, 2, n),
                    period=float(rng.uniform(0.5, 2)), cost=rng.uniform(0.5, 2, n))
    x0 = rng.uniform(0, 1.5, n) * s.u_star if start else s.u
    for policy, score in ((WhittlePolicy(m), lambda x, a: whittle_index(x, s)),
                          (GreedyPolicy(m), lambda x, a: s.u_star * (1 - np.exp(-s.decay * s.period * a)))):
        run = simulate_sources(policy, s, 60, x0=x0)
        ref, chosen = reference_run(score, s, m, 60, x0)
        assert [np.flatnonzero(v).tolist() for v in run.actions[0]] == chosen
        assert run.reward == pytest.approx(ref, rel=1e-12)


def test_top_m_ties_go_to_lowest_index():
    v = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    assert top_m(v, 2).astype(int).tolist() == [[0, 1, 1, 0, 0], [1, 1, 0, 0, 0]]
    # ties in the index: identical sources in identical states, the lowest is crawled first
    s = SourceModel(10.0, 1.0, [0.5, 0.5, 0.5])
    run = simulate_sources(WhittlePolicy(1), s, 6)
    assert run.actions[0].argmax(axis=1).tolist() == [0, 1, 2, 0, 1, 2]


def test_policies_satisfy_protocol_and_simulation_result():
    for p in (WhittlePolicy(), GreedyPolicy(), RoundRobinPolicy(), StaticPolicy([0, 1])):
        assert isinstance(p, SourcePolicy)
    run = simulate_sources(StaticPolicy([0, 1]), TABLE1, 10, n_replicas=3)
    assert run.rewards.shape == (3, 10) and run.actions.shape == (3, 10, 4)
    assert run.crawl_frequency.tolist() == [0.5, 0.5, 0.0, 0.0]
    assert run.budget_used.tolist() == [[1.0] * 10] * 3
    assert run.replica_rewards.shape == (3,) and run.stderr == 0.0 and "n_steps=10" in repr(run)
    assert np.isnan(simulate_sources(StaticPolicy([0]), TABLE1, 3).stderr)
    x0 = np.array([0.0, 0.0, 400.0, 0.0])
    run = simulate_sources(WhittlePolicy(1), TABLE1, 1, x0=x0)
    assert run.rewards.tolist() == [[400.0]]


# ---------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        (WhittlePolicy(5), r"'budget' parameter of WhittlePolicy must be an integer in 1\.\.4 .* Got 5"),
        (GreedyPolicy(5), r"'budget' parameter of GreedyPolicy"),
        (RoundRobinPolicy(5), r"'budget' parameter of RoundRobinPolicy"),
        (StaticPolicy([[0, 1], [2, 4]]), r"'schedule' parameter of StaticPolicy must hold source indices in "
                                         r"0\.\.3; schedule\[1, 1\] = 4"),
    ],
)
def test_budget_outside_1_to_n(policy, message):
    with pytest.raises(ValueError, match=message):
        simulate_sources(policy, TABLE1, 10)


def test_bad_policy_parameters():
    with pytest.raises(ValueError, match=r"'budget' parameter of WhittlePolicy must be an integer >= 1\. Got 0"):
        WhittlePolicy(0)
    with pytest.raises(TypeError, match="'budget' parameter of GreedyPolicy"):
        GreedyPolicy(1.5)
    with pytest.raises(ValueError, match="'schedule' parameter of StaticPolicy"):
        StaticPolicy([0.5])
    with pytest.raises(ValueError, match="'schedule' parameter of StaticPolicy"):
        StaticPolicy([])


@pytest.mark.parametrize(
    ("kwargs", "exc", "message"),
    [
        (dict(n_steps=0), ValueError, "'n_steps' parameter of simulate_sources must be an integer >= 1"),
        (dict(n_replicas=0), ValueError, "'n_replicas'"),
        (dict(x0=[1.0, -1.0, 0.0, 0.0]), ValueError, r"'x0' .*; x0\[1\] = -1.0"),
        (dict(x0=[1.0, np.nan, 0.0, 0.0]), ValueError, r"x0\[1\] = nan"),
        (dict(x0=[1.0, 1.0]), ValueError, r"'x0' parameter of simulate_sources must have shape \(\.\.\., 4\)"),
        (dict(x0=np.ones((2, 4)), n_replicas=3), ValueError, r"shape \(4,\) or \(3, 4\)"),
        (dict(model="markov"), ValueError, "'model' parameter of simulate_sources must be one of"),
        (dict(sources=object()), TypeError, "'sources' parameter of simulate_sources must be a SourceModel"),
        (dict(policy=object()), TypeError, "'policy' parameter of simulate_sources must have start"),
    ],
)
def test_simulator_bad_input(kwargs, exc, message):
    args = dict(policy=WhittlePolicy(1), sources=TABLE1, n_steps=10)
    args.update(kwargs)
    with pytest.raises(exc, match=message):
        simulate_sources(**args)
