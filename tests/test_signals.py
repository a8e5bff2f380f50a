"""Contracts of the signal-model fit (Appendix E of Busa-Fekete et al. (2025), SPEC §3) and of the signal-log
simulator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from freshcore.signals import fit_signal_model, naive_signal_model, simulate_signal_log

# ---------------------------------------------------------------------------- reference pieces

def _neg_loglik(x, tau, n, z):
    """-L(a, b) and its gradient, plain numpy (eq. (*) of freshcore.signals)."""
    s = x[0] * tau + x[1] * n
    c = z == 1
    value = np.sum(s[~c]) - np.sum(np.log(-np.expm1(-s[c])))
    with np.errstate(over="ignore"):
        r = 1.0 / np.expm1(s[c])
    grad = np.array([tau[~c].sum() - (r * tau[c]).sum(), n[~c].sum() - (r * n[c]).sum()])
    return value, grad


def _standard_errors(a, b, tau, n, z):
    """Square roots of the diagonal of the inverse observed information at (a, b)."""
    c = z == 1
    s = a * tau[c] + b * n[c]
    with np.errstate(over="ignore"):
        r = 1.0 / np.expm1(s)
    w = r * (1.0 + r)
    t, m = tau[c], n[c]
    info = np.array([[np.sum(w * t * t), np.sum(w * t * m)], [np.sum(w * t * m), np.sum(w * m * m)]])
    return np.sqrt(np.diag(np.linalg.inv(info)))


def _appendix_e_design(m, rng):
    """The design of Appendix E of Busa-Fekete et al. (2025).

    precision, recall ~ U[0.2, 0.95], 1/Delta ~ U[2, 20], p/Delta ~ U[1/4, 4].
    """
    precision = rng.uniform(0.2, 0.95, m)
    recall = rng.uniform(0.2, 0.95, m)
    delta = 1.0 / rng.uniform(2.0, 20.0, m)
    p = delta * rng.uniform(0.25, 4.0, m)
    nu = recall * delta * (1.0 - precision) / precision  # precision = lambda Delta / (lambda Delta + nu)
    return precision, recall, delta, nu, p


def _errors_on_design(m, horizon, seed):
    rng = np.random.default_rng(seed)
    precision, recall, delta, nu, p = _appendix_e_design(m, rng)
    mle = np.empty((m, 2))
    naive = np.empty((m, 2))
    for i in range(m):  # one page at a time: the logs differ in length by a factor of 16
        k = int(1.2 * p[i] * horizon) + 100
        log = simulate_signal_log(delta[i:i + 1], recall[i:i + 1], nu[i:i + 1], p[i:i + 1], k,
                                  horizon=horizon, rng=rng)
        assert np.cumsum(log.elapsed[0])[-1] < horizon  # the horizon, not k, ended the log
        fit = fit_signal_model(*log)
        est = naive_signal_model(*log)
        mle[i] = fit.precision[0] - precision[i], fit.recall[0] - recall[i]
        naive[i] = est.precision[0] - precision[i], est.recall[0] - recall[i]
    return mle, naive


# ---------------------------------------------------------------------------- simulator

def test_simulator_shapes_dtypes_and_seeding():
    a = simulate_signal_log([0.3, 0.1, 0.0], [0.5, 1.0, 0.2], [0.1, 0.0, 0.3], [1.0, 0.5, 2.0], 50, rng=7)
    b = simulate_signal_log([0.3, 0.1, 0.0], [0.5, 1.0, 0.2], [0.1, 0.0, 0.3], [1.0, 0.5, 2.0], 50, rng=7)
    c = simulate_signal_log([0.3, 0.1, 0.0], [0.5, 1.0, 0.2], [0.1, 0.0, 0.3], [1.0, 0.5, 2.0], 50, rng=8)
    assert a.elapsed.shape == a.n_signals.shape == a.changed.shape == (3, 50)
    assert (a.elapsed.dtype, a.n_signals.dtype, a.changed.dtype) == (np.float64, np.int64, np.uint8)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.elapsed, c.elapsed)
    assert not a.changed[2].any()  # Delta = 0: never changes
    # nu = 0 and recall 1: every change is signalled and every signal is a change
    np.testing.assert_array_equal(a.changed[1], a.n_signals[1] > 0)


def test_simulator_periodic_and_horizon():
    log = simulate_signal_log([0.2, 0.2], 0.5, 0.1, [0.5, 2.0], 40, schedule="periodic", horizon=10.0, rng=0)
    np.testing.assert_array_equal(log.elapsed[0], np.where(np.arange(40) < 5, 2.0, 0.0))
    np.testing.assert_array_equal(log.elapsed[1], np.where(np.arange(40) < 20, 0.5, 0.0))
    pad = log.elapsed == 0.0
    assert not log.n_signals[pad].any() and not log.changed[pad].any()


def test_simulator_matches_the_model():
    """Periodic crawls, tau = 1/p: P(change) = 1 - e^{-Delta tau}, E n = gamma tau, and eq. (*):
    P(no change | n) = e^{-alpha tau} (nu/gamma)^n, each within 4 standard errors."""
    delta, lam, nu, p, k = 0.4, 0.6, 0.3, 0.8, 400_000
    log = simulate_signal_log([delta], lam, nu, p, k, schedule="periodic", rng=11)
    tau = 1.0 / p
    z, n = log.changed[0], log.n_signals[0]
    gamma, alpha = lam * delta + nu, (1 - lam) * delta
    q = 1 - np.exp(-delta * tau)
    assert abs(z.mean() - q) <= 4 * np.sqrt(q * (1 - q) / k)
    assert abs(n.mean() - gamma * tau) <= 4 * np.sqrt(gamma * tau / k)
    for j in (0, 1, 2):
        sel = n == j
        q0 = np.exp(-alpha * tau) * (nu / gamma) ** j
        assert abs((1 - z[sel]).mean() - q0) <= 4 * np.sqrt(q0 * (1 - q0) / sel.sum())


# ---------------------------------------------------------------------------- the fit against scipy

def test_fit_equals_scipy_minimize():
    """The compiled Newton and scipy's L-BFGS-B (ftol 1e-15, gtol 1e-12, exact gradient) agree to 1e-6 of
    the estimator's own standard error; the Newton log-likelihood is never lower (beyond rounding)."""
    rng = np.random.default_rng(5)
    m = 25
    delta = rng.uniform(0.05, 0.5, m)
    lam = rng.uniform(0.1, 0.95, m)
    nu = rng.uniform(0.01, 0.5, m)
    p = delta * rng.uniform(0.25, 4.0, m)
    log = simulate_signal_log(delta, lam, nu, p, 300, rng=rng)
    fit = fit_signal_model(*log)
    assert not fit.clipped.any()
    for i in range(m):
        tau, n, z = log.elapsed[i], log.n_signals[i].astype(float), log.changed[i]
        res = minimize(_neg_loglik, [1.3 * fit.alpha[i] + 0.01, 1.0], args=(tau, n, z), jac=True,
                       method="L-BFGS-B", bounds=[(1e-12, None), (0.0, None)],
                       options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 1000})
        ours = np.array([fit.alpha[i], fit.alpha_beta[i]])
        se = _standard_errors(*ours, tau, n, z)
        np.testing.assert_array_less(np.abs(res.x - ours), 1e-6 * se)
        f_ours = _neg_loglik(ours, tau, n, z)[0]
        assert f_ours <= res.fun + 1e-12 * abs(res.fun)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.floats(1e-100, 1e100),
       schedule=st.sampled_from(["poisson", "periodic"]))
def test_fit_kkt_and_time_scaling(seed, scale, schedule):
    """At the fit the projected gradient vanishes (KKT of the box), and rescaling time by c rescales
    alpha by 1/c and leaves alpha beta, precision and recall unchanged."""
    rng = np.random.default_rng(seed)
    delta, lam, nu = rng.uniform(0.05, 2.0), rng.uniform(0.0, 1.0), rng.uniform(0.0, 1.0)
    log = simulate_signal_log([delta], lam, nu, delta * rng.uniform(0.25, 4.0), 200, schedule=schedule, rng=rng)
    fit = fit_signal_model(*log)
    scaled = fit_signal_model(log.elapsed * scale, log.n_signals, log.changed)
    if not fit.clipped[0] and log.changed.any():
        x = np.array([fit.alpha[0], fit.alpha_beta[0]])
        _, g = _neg_loglik(x, log.elapsed[0], log.n_signals[0].astype(float), log.changed[0])
        # L is a sum of k terms; its gradient in a carries units of time: compare with sum(tau), sum(n)
        tol = 1e-9 * np.array([log.elapsed.sum(), log.n_signals.sum() + 1.0])
        for j in range(2):
            if x[j] > 0.0:
                assert abs(g[j]) <= tol[j]
            else:  # at the lower bound -L must not decrease inwards
                assert g[j] >= -tol[j]
        np.testing.assert_allclose(scaled.alpha * scale, fit.alpha, rtol=1e-8, atol=1e-12 * fit.alpha.max())
        np.testing.assert_allclose(scaled.alpha_beta, fit.alpha_beta, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(scaled.recall, fit.recall, rtol=1e-8, atol=1e-10)


def test_padding_and_column_order_do_not_matter():
    log = simulate_signal_log(np.full(20, 0.3), 0.6, 0.2, 0.5, 150, rng=3)
    fit = fit_signal_model(*log)
    z = np.zeros((20, 30))
    padded = fit_signal_model(np.hstack([log.elapsed, z]), np.hstack([log.n_signals, z]), np.hstack([log.changed, z]))
    np.testing.assert_array_equal(padded.alpha, fit.alpha)
    np.testing.assert_array_equal(padded.alpha_beta, fit.alpha_beta)
    perm = np.random.default_rng(4).permutation(150)
    shuffled = fit_signal_model(log.elapsed[:, perm], log.n_signals[:, perm], log.changed[:, perm])
    np.testing.assert_allclose(shuffled.alpha, fit.alpha, rtol=1e-9)
    np.testing.assert_allclose(shuffled.alpha_beta, fit.alpha_beta, rtol=1e-9)


def test_derived_quantities_follow_the_identities():
    log = simulate_signal_log(np.full(30, 0.25), 0.7, 0.15, 0.5, 2000, rng=9)
    fit = fit_signal_model(*log)
    gamma = log.n_signals.sum(axis=1) / log.elapsed.sum(axis=1)
    np.testing.assert_allclose(fit.signal_rate, gamma, rtol=1e-15)
    np.testing.assert_allclose(fit.precision, 1 - np.exp(-fit.alpha_beta), rtol=1e-14)
    np.testing.assert_allclose(fit.false_rate, gamma * np.exp(-fit.alpha_beta), rtol=1e-14)
    np.testing.assert_allclose(fit.change_rate, fit.alpha + gamma * fit.precision, rtol=1e-14)
    np.testing.assert_allclose(fit.recall, 1 - fit.alpha / fit.change_rate, rtol=1e-12)
    known = fit_signal_model(*log, change_rate=0.25)
    np.testing.assert_array_equal(known.alpha, fit.alpha)
    np.testing.assert_allclose(known.recall, np.clip(1 - fit.alpha / 0.25, 0, 1), rtol=1e-15)
    np.testing.assert_array_equal(known.change_rate, np.full(30, 0.25))


def test_boundary_cases_are_clipped_as_documented():
    tau = np.ones((5, 6))
    n = np.array([[0, 1, 0, 2, 0, 0],   # never changed -> (0, 0)
                  [0, 1, 0, 2, 0, 0],   # every interval changed -> alpha clipped
                  [0, 1, 0, 2, 0, 1],   # signals only in changed intervals -> alpha beta clipped
                  [0, 0, 0, 0, 0, 0],   # no signal at all -> alpha beta = 0
                  [0, 0, 0, 0, 0, 0]])  # all-zero padding row
    z = np.array([[0, 0, 0, 0, 0, 0],
                  [1, 1, 1, 1, 1, 1],
                  [1, 1, 0, 1, 0, 1],
                  [1, 0, 1, 0, 0, 0],
                  [0, 0, 0, 0, 0, 0]])
    tau[4] = 0.0
    fit = fit_signal_model(tau, n, z, alpha_upper=50.0, alpha_beta_upper=30.0)
    assert fit.alpha[0] == fit.alpha_beta[0] == fit.precision[0] == fit.recall[0] == 0.0
    assert fit.alpha[1] == 50.0 and fit.clipped[1]
    assert fit.alpha_beta[2] == 30.0 and fit.clipped[2] and fit.precision[2] == 1 - np.exp(-30.0)
    # page 2: with b at its cap the signalled changed intervals drop out (up to e^{-30}); the rest is
    # L(a) = -2a + log(1 - e^{-a}) (2 unchanged unit intervals, 1 unsignalled change): 1/(e^a - 1) = 2
    a_expected = np.log(1.5)
    np.testing.assert_allclose(fit.alpha[2], a_expected, rtol=1e-10)
    # page 3: 2 changed of 6 unit intervals, no signals: the closed form e^{-a} = 4/6
    np.testing.assert_allclose(fit.alpha[3], np.log(6.0 / 4.0), rtol=1e-10)
    assert fit.alpha_beta[3] == 0.0 and fit.signal_rate[3] == 0.0 and not fit.clipped[3]
    assert fit.alpha[4] == fit.alpha_beta[4] == fit.signal_rate[4] == fit.recall[4] == 0.0
    assert list(fit.clipped) == [False, True, True, False, False]


def test_read_only_and_list_inputs():
    log = simulate_signal_log([0.3, 0.2], 0.5, 0.2, 1.0, 100, rng=2)
    arrays = [np.array(a) for a in log]
    for a in arrays:
        a.setflags(write=False)
    fit = fit_signal_model(*arrays)
    lists = fit_signal_model(*(a.tolist() for a in log))
    np.testing.assert_array_equal(fit.alpha, lists.alpha)


# ---------------------------------------------------------------------------- issue 3 acceptance

def test_appendix_e_design_mle_accurate_naive_biased():
    """Issue 3: on the Appendix E design (horizon 1e5) the mean absolute error of precision and recall
    is <= 1e-2; the naive counts are biased upwards (their mean signed error is many standard errors
    from 0) while the MLE's mean signed error is statistically 0."""
    mle, naive = _errors_on_design(300, 1e5, seed=2024)
    mae = np.abs(mle).mean(axis=0)
    assert (mae <= 1e-2).all(), mae
    m = len(mle)
    for j in range(2):
        se_mle = mle[:, j].std(ddof=1) / np.sqrt(m)
        assert abs(mle[:, j].mean()) <= 4 * se_mle
        se_naive = naive[:, j].std(ddof=1) / np.sqrt(m)
        assert naive[:, j].mean() >= 10 * se_naive
        assert np.abs(naive[:, j]).mean() >= 5 * mae[j]


@pytest.mark.slow
def test_appendix_e_design_full():
    mle, naive = _errors_on_design(2000, 1e5, seed=7)
    mae = np.abs(mle).mean(axis=0)
    assert (mae <= 1e-2).all(), mae
    assert (naive.mean(axis=0) >= 10 * naive.std(axis=0, ddof=1) / np.sqrt(len(naive))).all()


def test_naive_counts():
    tau = [[1.0, 1.0, 2.0, 1.0, 1.0]]
    n = [[1, 0, 3, 1, 0]]
    z = [[1, 1, 0, 1, 0]]
    est = naive_signal_model(tau, n, z)
    assert est.precision[0] == 2 / 3 and est.recall[0] == 2 / 3
    none = naive_signal_model([[1.0, 1.0]], [[0, 0]], [[0, 0]])
    assert np.isnan(none.precision[0]) and np.isnan(none.recall[0])


# ---------------------------------------------------------------------------- bad input

GOOD = (np.ones((2, 3)), np.zeros((2, 3), dtype=int), np.zeros((2, 3), dtype=int))


@pytest.mark.parametrize("func", [fit_signal_model, naive_signal_model])
@pytest.mark.parametrize(
    "which, value, exc, match",
    [
        (0, [[1.0, -1.0, 1.0], [1.0, 1.0, 1.0]], ValueError, r"elapsed\[0, 1\] = -1.0"),
        (0, [[1.0, 1.0, 1.0], [1.0, np.inf, 1.0]], ValueError, r"elapsed\[1, 1\] = inf"),
        (0, [[1.0, 1.0, np.nan], [1.0, 1.0, 1.0]], ValueError, r"elapsed\[0, 2\]"),
        (0, np.ones(3), ValueError, "'elapsed'.*2-D"),
        (0, np.ones((0, 3)), ValueError, "'elapsed'.*empty"),
        (0, [["a", "b", "c"], ["a", "b", "c"]], TypeError, "'elapsed'"),
        (1, [[0, 0, 0], [0, 1.5, 0]], ValueError, r"non-negative integers; n_signals\[1, 1\] = 1.5"),
        (1, [[0, -1, 0], [0, 0, 0]], ValueError, r"n_signals\[0, 1\] = -1.0"),
        (1, np.zeros((3, 2)), ValueError, "same shape"),
        (2, [[0, 2, 0], [0, 0, 0]], ValueError, r"changed\[0, 1\] = 2"),
        (2, [[0, 0, 0], [0, 0.5, 0]], ValueError, r"changed\[1, 1\] = 0.5"),
        (2, np.zeros((2, 4)), ValueError, "same shape"),
    ],
)
def test_bad_log(func, which, value, exc, match):
    args = list(GOOD)
    args[which] = value
    with pytest.raises(exc, match=match):
        func(*args)


def test_impossible_change_is_rejected():
    tau = np.array([[1.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match=r"elapsed = 0 and n_signals = 0.*changed\[0, 1\] = 1"):
        fit_signal_model(tau, [[0, 0, 0]], [[0, 1, 0]])
    fit_signal_model(tau, [[0, 1, 0]], [[0, 1, 0]])  # a signal makes it possible


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"change_rate": 0.0}, "'change_rate'.*> 0"),
        ({"change_rate": [1.0, -1.0]}, r"change_rate\[1\] = -1.0"),
        ({"change_rate": [1.0, 1.0, 1.0]}, "'change_rate'.*one entry per page"),
        ({"alpha_upper": -1.0}, "'alpha_upper'"),
        ({"alpha_upper": [1.0, np.nan]}, r"alpha_upper\[1\]"),
        ({"alpha_beta_upper": 0.0}, "'alpha_beta_upper'"),
        ({"alpha_beta_upper": np.inf}, "'alpha_beta_upper'"),
        ({"max_iter": 0}, "'max_iter'"),
    ],
)
def test_bad_fit_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_signal_model(*GOOD, **kwargs)


def test_bad_fit_option_types():
    with pytest.raises(TypeError, match="'max_iter'"):
        fit_signal_model(*GOOD, max_iter=2.5)
    with pytest.raises(TypeError, match="'change_rate'"):
        fit_signal_model(*GOOD, change_rate="fast")


SIM = {"change_rate": [0.1, 0.2], "recall": 0.5, "false_rate": 0.1, "crawl_rate": 1.0, "n_crawls": 5}


@pytest.mark.parametrize(
    "key, value, exc, match",
    [
        ("change_rate", [0.1, -0.2], ValueError, r"change_rate\[1\] = -0.2"),
        ("change_rate", [0.1, np.inf], ValueError, r"change_rate\[1\] = inf"),
        ("change_rate", [], ValueError, "'change_rate'.*empty"),
        ("change_rate", [[0.1, 0.2]], ValueError, "'change_rate'.*1-D"),
        ("recall", 1.5, ValueError, "'recall'.*<= 1.0"),
        ("recall", [0.5, -0.1], ValueError, r"recall\[1\] = -0.1"),
        ("recall", [0.5, 0.5, 0.5], ValueError, "'recall'.*one entry per page"),
        ("false_rate", -1.0, ValueError, "'false_rate'"),
        ("false_rate", [0.1, np.nan], ValueError, r"false_rate\[1\]"),
        ("crawl_rate", 0.0, ValueError, "'crawl_rate'.*> 0"),
        ("crawl_rate", [1.0, 0.0], ValueError, r"crawl_rate\[1\] = 0.0"),
        ("n_crawls", 0, ValueError, "'n_crawls'"),
        ("n_crawls", 2.0, TypeError, "'n_crawls'"),
    ],
)
def test_bad_simulation_input(key, value, exc, match):
    kwargs = dict(SIM, **{key: value})
    with pytest.raises(exc, match=match):
        simulate_signal_log(**kwargs)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"schedule": "jittered"}, ValueError, "'schedule'"),
        ({"horizon": 0.0}, ValueError, "'horizon'"),
        ({"horizon": np.nan}, ValueError, "'horizon'"),
        ({"rng": -1}, ValueError, "'rng'"),
        ({"rng": "seed"}, TypeError, "'rng'"),
    ],
)
def test_bad_simulation_options(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        simulate_signal_log(**SIM, **kwargs)
