import itertools

import numpy as np
import pytest

from freshcore.synthetic_logs import simulate_crawls


def _jitter_prob(delta, p, j):
    """1 - E[exp(-delta tau)] for tau = (1/p)(1 + j U), U ~ U(-1, 1)."""
    a = delta / p
    return 1.0 - np.exp(-a) * np.sinh(a * j) / (a * j)


@pytest.mark.parametrize("schedule", ["poisson", "periodic", "jittered"])
def test_change_frequency_matches_theory(schedule):
    delta = np.array([0.5, 5.0, 20.0, 1.0])
    p = np.array([3.0, 3.0, 1.0, 10.0])
    k = 40_000
    changed, intervals = simulate_crawls(delta, p, k, schedule=schedule, jitter=0.4, rng=123)
    assert changed.dtype == np.uint8 and intervals.dtype == np.float64
    assert changed.shape == intervals.shape == (4, k)
    if schedule == "poisson":
        prob = delta / (delta + p)
    elif schedule == "periodic":
        prob = -np.expm1(-delta / p)
    else:
        prob = _jitter_prob(delta, p, 0.4)
    mean = changed.mean(axis=1)
    se = np.sqrt(prob * (1 - prob) / k)
    assert np.all(np.abs(mean - prob) < 4 * se + 1e-12)


@pytest.mark.parametrize("schedule", ["poisson", "periodic", "jittered"])
def test_interval_distribution(schedule):
    p = np.array([0.5, 3.0])
    k = 50_000
    _, tau = simulate_crawls([1.0, 1.0], p, k, schedule=schedule, jitter=0.5, rng=7)
    mean = tau.mean(axis=1)
    if schedule == "periodic":
        np.testing.assert_array_equal(tau, np.broadcast_to(1.0 / p[:, None], tau.shape))
        return
    sd = 1.0 / p if schedule == "poisson" else 0.5 / p / np.sqrt(3.0)
    assert np.all(np.abs(mean - 1.0 / p) < 4 * sd / np.sqrt(k))
    np.testing.assert_allclose(tau.std(axis=1), sd, rtol=0.03)
    if schedule == "jittered":
        assert np.all(tau.min(axis=1) >= 0.5 / p) and np.all(tau.max(axis=1) <= 1.5 / p)
    else:
        # memorylessness: P(tau > 2/p) = e^{-2}
        frac = (tau > 2.0 / p[:, None]).mean(axis=1)
        assert np.all(np.abs(frac - np.exp(-2)) < 4 * np.sqrt(np.exp(-2) * (1 - np.exp(-2)) / k))


def test_conditional_change_probability_given_interval():
    # under Poisson crawling P(I = 1 | tau) = 1 - e^{-delta tau}: check in interval bins
    changed, tau = simulate_crawls([2.0], [2.0], 200_000, rng=11)
    edges = np.quantile(tau[0], [0.0, 0.25, 0.5, 0.75, 1.0])
    for lo, hi in itertools.pairwise(edges):
        sel = (tau[0] >= lo) & (tau[0] < hi)
        expect = np.mean(-np.expm1(-2.0 * tau[0][sel]))
        got = changed[0][sel].mean()
        assert abs(got - expect) < 4 * np.sqrt(expect * (1 - expect) / sel.sum())


def test_seed_reproducible_and_generator_accepted():
    a = simulate_crawls([1.0, 2.0], 1.0, 50, schedule="jittered", rng=5)
    b = simulate_crawls([1.0, 2.0], 1.0, 50, schedule="jittered", rng=5)
    c = simulate_crawls([1.0, 2.0], 1.0, 50, schedule="jittered", rng=np.random.default_rng(5))
    d = simulate_crawls([1.0, 2.0], 1.0, 50, schedule="jittered", rng=6)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(a, c):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[1], d[1])
    # rng=None draws fresh randomness but keeps the shapes
    ch, tau = simulate_crawls([1.0], 2.0, 3)
    assert ch.shape == tau.shape == (1, 3)


def test_zero_change_rate_never_changes():
    changed, _ = simulate_crawls([0.0, 1e9], [1.0, 1.0], 100, rng=0)
    assert changed[0].sum() == 0 and changed[1].sum() == 100


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(change_rate=[1.0, -1.0]), ValueError, r"change_rate\[1\]"),
        (dict(change_rate=[np.nan]), ValueError, r"change_rate\[0\]"),
        (dict(change_rate=[]), ValueError, "change_rate"),
        (dict(change_rate=[[1.0]]), ValueError, "change_rate"),
        (dict(change_rate=["a"]), TypeError, "change_rate"),
        (dict(crawl_rate=0.0), ValueError, "crawl_rate"),
        (dict(crawl_rate=[1.0, 0.0]), ValueError, r"crawl_rate\[1\]"),
        (dict(crawl_rate=[1.0, 2.0, 3.0]), ValueError, "same length"),
        (dict(crawl_rate=np.inf), ValueError, "crawl_rate"),
        (dict(n_crawls=0), ValueError, "n_crawls"),
        (dict(n_crawls=2.5), TypeError, "n_crawls"),
        (dict(schedule="weekly"), ValueError, "schedule"),
        (dict(jitter=1.0), ValueError, "jitter"),
        (dict(jitter=-0.1), ValueError, "jitter"),
        (dict(rng="seed"), TypeError, "rng"),
        (dict(rng=-1), ValueError, "rng"),
    ],
)
def test_bad_input(kwargs, exc, match):
    args = dict(change_rate=[1.0, 2.0], crawl_rate=1.0, n_crawls=5, schedule="jittered", rng=0)
    args.update(kwargs)
    change_rate = args.pop("change_rate")
    crawl_rate = args.pop("crawl_rate")
    n_crawls = args.pop("n_crawls")
    with pytest.raises(exc, match=match):
        simulate_crawls(change_rate, crawl_rate, n_crawls, **args)
