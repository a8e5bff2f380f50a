"""optimal_thresholds (Theorem 2 of Busa-Fekete et al. (2025), SPEC section 3): the continuous optimum with signals."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore.pages import PageModel
from freshcore.rates import freshness, optimal_rates
from freshcore.thresholds import optimal_thresholds
from freshcore.value import crawl_frequency, crawl_interval, crawl_value, fresh_time


def signal_instance(m, seed):
    """SPEC section 3's check distribution."""
    rng = np.random.default_rng(seed)
    dl, mu = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    return dl, mu, rng.beta(0.25, 0.25, m), rng.uniform(0.1, 0.6, m)


@pytest.mark.parametrize("m, R, seed", [(200, 100.0, 0), (1000, 100.0, 1), (50, 5.0, 2), (300, 3.0, 3)])
def test_without_signals_equals_the_periodic_optimum(m, R, seed):
    rng = np.random.default_rng(seed)
    dl, mu = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    res = optimal_thresholds(PageModel(dl, mu), R)
    ref = optimal_rates(dl, mu, R, model="periodic", return_details=True)
    np.testing.assert_allclose(res.frequencies, ref.crawl_rate, rtol=1e-12, atol=0.0)
    # at a jump of the total frequency (time-sharing) any multiplier of the final bracket is
    # optimal; both solvers stop with brackets (L_a - L_b)(S_b - S_a) <= 1e-15 L_a R
    assert res.multiplier == pytest.approx(ref.multiplier, rel=1e-8)
    assert res.accuracy == pytest.approx(ref.objective / mu.sum(), rel=1e-12)
    crawled = ref.crawl_rate > 0
    np.testing.assert_allclose(res.thresholds[crawled], 1.0 / ref.crawl_rate[crawled], rtol=1e-12)
    assert np.all(np.isinf(res.thresholds[~crawled]))


def test_uninformative_signals_equal_the_periodic_optimum():
    # lambda = 0 with false signals: beta = 0, the signals are ignored
    rng = np.random.default_rng(5)
    dl, mu, nu = rng.uniform(0, 1, 300), rng.uniform(0, 1, 300), rng.uniform(0.1, 0.6, 300)
    res = optimal_thresholds(PageModel(dl, mu, 0.0, nu), 40.0)
    np.testing.assert_allclose(res.frequencies, optimal_rates(dl, mu, 40.0, model="periodic"), rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_spec_check_instance_beats_the_signal_blind_optimum(seed):
    dl, mu, lam, nu = signal_instance(200, seed)
    pages = PageModel(dl, mu, lam, nu)
    res = optimal_thresholds(pages, 100.0)
    blind = freshness(optimal_rates(dl, mu, 100.0, model="periodic"), dl, mu, model="periodic")
    assert res.frequencies.sum() == pytest.approx(100.0, rel=1e-13)
    assert res.accuracy > blind + 0.05  # measured: +0.076 to +0.092 over seeds 0-5
    # the accuracy is what the thresholds achieve: sum mu w f / sum mu
    f = crawl_frequency(res.thresholds, pages)
    fresh = np.where(f > 0, fresh_time(res.thresholds, pages) * f, 0.0)
    assert res.accuracy == pytest.approx(np.dot(mu, fresh) / mu.sum(), rel=1e-9)


@pytest.mark.parametrize("seed", [0, 4])
def test_theorem_2_conditions(seed):
    dl, mu, lam, nu = signal_instance(60, seed)
    pages = PageModel(dl, mu, lam, nu)
    res = optimal_thresholds(pages, 20.0)
    lam_ = res.multiplier
    crawled = np.isfinite(res.thresholds)
    # V(iota_i) = Lambda where crawled, V(inf) = mu/Delta <= Lambda elsewhere
    # (when the total frequency jumps across R the policy time-shares and the multiplier is only
    # pinned to the final bracket, (L_a - L_b)(S_b - S_a) <= 1e-15 L_a R: 3.4e-8 wide for seed 4)
    np.testing.assert_allclose(crawl_value(res.thresholds, pages)[crawled], lam_, rtol=1e-7)
    assert np.all(mu[~crawled] / dl[~crawled] <= lam_ * (1 + 1e-8))
    np.testing.assert_allclose(crawl_frequency(res.thresholds, pages), res.frequencies, rtol=1e-12)
    # V is the marginal accuracy of frequency: d(mu w f)/df = Lambda (central differences)
    io = np.where(crawled, res.thresholds, 1.0)
    h = 1e-4 * io
    gain = lambda t: mu * fresh_time(t, pages) * crawl_frequency(t, pages)  # noqa: E731
    df = crawl_frequency(io + h, pages) - crawl_frequency(io - h, pages)
    ok = crawled & (np.abs(df) > 1e-5 * res.frequencies)
    assert ok.sum() >= 20
    np.testing.assert_allclose((gain(io + h) - gain(io - h))[ok] / df[ok], lam_, rtol=1e-5)


def test_never_changing_and_unimportant_pages_are_not_crawled():
    pages = PageModel([0.0, 0.5, 1.0, 0.3], [1.0, 0.0, 1.0, 2.0], [0.5, 0.5, 0.2, 0.0], 0.3)
    res = optimal_thresholds(pages, 1.0)
    assert np.all(np.isinf(res.thresholds[:2])) and np.all(res.frequencies[:2] == 0.0)
    assert res.frequencies.sum() == pytest.approx(1.0, rel=1e-13)
    res0 = optimal_thresholds(PageModel([0.0, 0.0], 1.0), 1.0)
    assert res0.accuracy == 1.0 and np.all(res0.frequencies == 0.0)


@pytest.mark.parametrize("bandwidth", [0.0, -1.0, np.nan, np.inf])
def test_bad_bandwidth(bandwidth):
    with pytest.raises(ValueError, match="'bandwidth' parameter of optimal_thresholds"):
        optimal_thresholds(PageModel(1.0, 1.0), bandwidth)


def test_bad_pages():
    with pytest.raises(TypeError, match="'pages'"):
        optimal_thresholds([1.0, 2.0], 1.0)
    with pytest.raises(TypeError, match="'bandwidth'"):
        optimal_thresholds(PageModel(1.0, 1.0), "1")


def test_recall_one_crawls_at_the_best_signal_count():
    dl, mu, lam, nu = signal_instance(100, 0)
    lam[:10] = 1.0
    pages = PageModel(dl, mu, lam, nu)
    res = optimal_thresholds(pages, 30.0)
    assert res.frequencies.sum() == pytest.approx(30.0, rel=1e-13)
    assert np.all(res.signal_counts[10:] == 0) and np.all(np.isinf(res.thresholds[:10]))
    # brute force over K of the Lagrangian mu F_K - Lambda f_K, F_K = f_K (1 - rho^K)/Delta, f_K = gamma/K
    K = np.arange(1, 2001)[:, None]
    d, m_, v = dl[:10], mu[:10], nu[:10]
    f = (d + v) / K
    lagr = m_ * f * (1 - (v / (d + v)) ** K) / d - res.multiplier * f
    best = np.where(lagr.max(axis=0) > 0, K[np.argmax(lagr, axis=0), 0], 0)
    mixed = ~np.isclose(res.frequencies[:10], np.where(best > 0, (d + v) / np.maximum(best, 1), 0.0), rtol=1e-12)
    assert mixed.sum() <= 1  # at most the page that is time-shared
    np.testing.assert_array_equal(res.signal_counts[:10][~mixed], best[~mixed])


def test_recall_one_is_the_limit_of_recall_below_one():
    dl, mu, lam, nu = signal_instance(100, 0)
    lam[:10] = 1.0
    at_one = optimal_thresholds(PageModel(dl, mu, lam, nu), 30.0)
    gaps = []
    for e in (1e-4, 1e-6, 1e-8, 1e-10):
        lam[:10] = 1.0 - e
        near = optimal_thresholds(PageModel(dl, mu, lam, nu), 30.0)
        gaps.append(abs(near.accuracy - at_one.accuracy))
        assert np.all(near.signal_counts == 0)
    assert gaps[-1] <= 1e-11 and all(b <= a for a, b in itertools.pairwise(gaps))


@pytest.mark.parametrize("seed", [0, 7])
def test_value_slope_used_by_the_newton_solve(seed):
    # V'(iota) = mu alpha e^{-alpha iota} psi(iota) (w' = e^{-alpha iota} psi' term by term), against
    # central differences of the exact V, across the change of K = floor(iota/beta) included
    dl, mu, lam, nu = signal_instance(400, seed)
    lam = np.clip(lam, 0.05, 0.95)  # alpha and lambda Delta away from 0: V' well above rounding
    pages = PageModel(dl, mu, lam, nu)
    rng = np.random.default_rng(seed)
    io = rng.uniform(0.2, 20.0, 400)
    h = 1e-5 * io
    fd = (crawl_value(io + h, pages) - crawl_value(io - h, pages)) / (2 * h)
    from freshcore.value import crawl_interval

    slope = mu * pages.alpha * np.exp(-pages.alpha * io) * crawl_interval(io, pages)
    ok = slope > 1e-4 * mu  # where the rounding of V (1e-16 V / h) is far below 1e-6 of the slope
    assert ok.sum() >= 250
    np.testing.assert_allclose(fd[ok], slope[ok], rtol=1e-6)
    assert not np.allclose(fd[ok], (mu * pages.alpha * crawl_interval(io, pages))[ok], rtol=1e-6)


def test_thresholds_do_not_depend_on_the_thread_split():
    import freshcore._parallel as par

    dl, mu, lam, nu = signal_instance(3000, 11)
    pages = PageModel(dl, mu, lam, nu)
    old_chunk, old_heavy, old_threads = par.MIN_CHUNK, par.MIN_CHUNK_HEAVY, par.get_num_threads()
    try:
        par.set_num_threads(1)
        one = optimal_thresholds(pages, 300.0)
        par.MIN_CHUNK, par.MIN_CHUNK_HEAVY, _ = 500, 500, par.set_num_threads(3)
        three = optimal_thresholds(pages, 300.0)
    finally:
        par.MIN_CHUNK, par.MIN_CHUNK_HEAVY = old_chunk, old_heavy
        par.set_num_threads(old_threads)
    np.testing.assert_array_equal(one.thresholds, three.thresholds)
    np.testing.assert_array_equal(one.frequencies, three.frequencies)
    assert one.multiplier == three.multiplier and one.accuracy == three.accuracy


def solution(L, it, fs, d, c2=None, c3=None):
    """The solver's record of a solution at multiplier L from the threshold kernel's outputs (signal pages only)."""
    from freshcore.thresholds import _Solution

    empty = np.zeros(0)
    return _Solution(L ** -0.5, float(fs.sum()), 0.0, empty, it, fs, d, c2, c3, np.zeros(0, dtype=np.int_), empty)


def kernel_solver(seed, extra=()):
    """SPEC section 3's pages (2000, ``seed``) and ``solve(L, start, lo, hi, base)``: the threshold kernel at
    multiplier L (cold by default), returning the solution record: u, the thresholds, frequencies and slopes
    (and the ``extra`` outputs, "c2" and/or "c3")."""
    from freshcore import _thresholds

    dl, mu, lam, nu = signal_instance(2000, seed)
    pages = PageModel(dl, mu, lam, nu)
    par = [np.ascontiguousarray(x) for x in (dl, pages.alpha, pages.gamma, nu, pages.beta, mu)]
    n = len(dl)
    nan, zero, inf = np.full(n, np.nan), np.zeros(n), np.full(n, np.inf)

    def solve(L, start=nan, lo=zero, hi=inf, base=nan):
        out = {"it": np.empty(n), "fs": np.empty(n), "d": np.empty(n), **{k: np.empty(n) for k in extra}}
        _thresholds.threshold_kernel(L, *par, start, lo, hi, base, *out.values())
        return solution(L, **out)

    return pages, solve


@pytest.mark.parametrize("gap", [1e-3, 1e-6, 1e-10])
def test_warm_started_thresholds_equal_cold_solves(gap):
    # the outer iteration's shortcuts (first-order prediction, Hermite interpolation between two
    # solutions, both taken as exact when the step is small) against a cold Newton solve
    from freshcore.thresholds import _threshold_hints

    pages, solve = kernel_solver(12)
    L_b, L_a = 0.9, 0.9 * (1 + gap)
    below, above = solve(L_b), solve(L_a)
    for L in (L_b + 0.3 * (L_a - L_b), L_a * (1 + 0.5 * gap)):
        known = [below, above] if L < L_a else [above]
        start, lo, hi, base, _ = _threshold_hints(L, known, pages.alpha + pages.gamma)
        warm, cold = solve(L, start, lo, hi, base), solve(L)
        crawled = np.isfinite(cold.threshold)
        np.testing.assert_array_equal(np.isfinite(warm.threshold), crawled)
        assert crawled.sum() > 500
        v = crawl_value(warm.threshold, pages)[crawled]
        np.testing.assert_allclose(v, L, rtol=4e-15)
        # where V is not flat (condition number Lambda / (iota V') below 1e3), the thresholds agree
        with np.errstate(invalid="ignore"):
            cond = L / (cold.threshold * cold.slope)
        ok = crawled & (cond < 1e3)
        assert ok.sum() > 500
        np.testing.assert_allclose(warm.threshold[ok], cold.threshold[ok], rtol=1e-12)
        np.testing.assert_allclose(warm.signal_freq[ok], cold.signal_freq[ok], rtol=1e-12)


@pytest.mark.parametrize("bracket", ["narrow", "reversed", "open", "above", "below"])
def test_interval_inverse_from_any_bracket(bracket):
    # the time-sharing step's inverse of psi (regula falsi from the two solutions' thresholds)
    from freshcore import _thresholds

    dl, mu, lam, nu = signal_instance(400, 17)
    pages = PageModel(dl, mu, lam, nu)
    rng = np.random.default_rng(8)
    true = rng.uniform(0.05, 20, len(dl)) / np.maximum(dl, 0.05)
    target = crawl_interval(true, pages)
    lo, hi = {
        "narrow": (true * (1 - 1e-6), true * (1 + 1e-6)),
        "reversed": (true * (1 + 1e-3), true * (1 - 1e-3)),
        "open": (np.zeros_like(true), np.full_like(true, np.inf)),
        "above": (true * 3, true * 5),
        "below": (true / 5, true / 3),
    }[bracket]
    got = np.empty_like(true)
    args = [np.ascontiguousarray(x) for x in (target, pages.change_rate, pages.gamma, pages.false_rate, pages.beta)]
    _thresholds.interval_inverse_kernel(*args, np.ascontiguousarray(lo), np.ascontiguousarray(hi), got)
    np.testing.assert_allclose(crawl_interval(got, pages), target, rtol=1e-14)
    # where psi is not flat (elasticity psi' iota / psi > 1e-3) the root itself is determined to ~1e-13
    h = 1e-6 * true
    elasticity = (crawl_interval(true + h, pages) - crawl_interval(true - h, pages)) / (2 * h) * true / target
    ok = elasticity > 1e-3
    assert ok.sum() >= 200
    np.testing.assert_allclose(got[ok], true[ok], rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 7])
def test_curvature_used_by_the_halley_solve(seed):
    # V''/V' = psi'/psi - alpha with psi' = sum_n p_n(gamma s_n) (the kernel's optional output), against
    # central differences of log V' = log(mu alpha psi) - alpha iota at the solved thresholds
    from freshcore import _thresholds

    dl, mu, lam, nu = signal_instance(400, seed)
    lam = np.clip(lam, 0.05, 0.95)
    pages = PageModel(dl, mu, lam, nu)
    n = len(dl)
    par = [np.ascontiguousarray(x) for x in (dl, pages.alpha, pages.gamma, nu, pages.beta, mu)]
    it, f, d, c2 = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    nan = np.full(n, np.nan)
    _thresholds.threshold_kernel(0.3, *par, nan, np.zeros(n), np.full(n, np.inf), nan, it, f, d, c2)
    crawled = np.isfinite(it)
    assert crawled.sum() >= 200
    io = it[crawled]
    sub = pages[np.flatnonzero(crawled)]
    h = 1e-6 * io
    fd = (np.log(crawl_interval(io + h, sub)) - np.log(crawl_interval(io - h, sub))) / (2 * h) - sub.alpha
    # (errors scaled by 1/iota, the size of psi'/psi at small iota)
    np.testing.assert_allclose(c2[crawled] * io, fd * io, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d[crawled], sub.importance * sub.alpha * np.exp(-sub.alpha * io) / f[crawled],
                               rtol=1e-14)


@pytest.mark.parametrize("gap", [1e-6, 1e-9])
def test_interpolated_interval_between_close_solutions(gap):
    # where the Hermite threshold is exact, optimal_thresholds takes psi there from the cubic Hermite
    # interpolant through both solutions' psi and psi' (no series): against the series at that threshold
    from freshcore import _thresholds
    from freshcore.thresholds import _threshold_hints

    dl, mu, lam, nu = signal_instance(2000, 13)
    pages = PageModel(dl, mu, lam, nu)
    par = [np.ascontiguousarray(x) for x in (dl, pages.alpha, pages.gamma, nu, pages.beta, mu)]
    n = len(dl)
    nan = np.full(n, np.nan)

    def solve(L):
        it, f, d, c2 = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        _thresholds.threshold_kernel(L, *par, nan, np.zeros(n), np.full(n, np.inf), nan, it, f, d, c2)
        return solution(L, it, f, d, c2)

    L_b, L_a = 0.9, 0.9 * (1 + gap)
    below, above = solve(L_b), solve(L_a)
    L = L_b + 0.37 * (L_a - L_b)
    start, _, _, base, interp = _threshold_hints(L, [below, above], pages.alpha + pages.gamma, pages.alpha,
                                                 pages.beta)
    idx = interp.idx
    assert len(idx) > 300
    np.testing.assert_array_equal(base[idx], start[idx])
    sub = pages[idx]
    np.testing.assert_allclose(interp.psi, crawl_interval(start[idx], sub), rtol=4e-15)  # a few ulps of the series
    np.testing.assert_allclose(crawl_value(start[idx], sub), L, rtol=4e-15)
    cold = solve(L)
    np.testing.assert_allclose(interp.curv2 * start[idx], cold.curv2[idx] * start[idx], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("gap", [1e-5, 1e-6, 1e-8])
def test_third_order_predictions_equal_cold_solves(gap):
    # with V'''/V' from the kernel, a one-sided prediction is taken as exact within kappa |h| <= 5e-5 (no
    # multiple of beta in between): those thresholds against cold solves
    from freshcore.thresholds import _threshold_hints

    pages, solve = kernel_solver(14, ("c2", "c3"))
    near = solve(0.9)
    L = 0.9 * (1 + gap)
    start, lo, hi, base, _ = _threshold_hints(L, [near], pages.alpha + pages.gamma, pages.alpha, pages.beta)
    taken = np.isfinite(start) & (base == start)
    assert taken.sum() > (500 if gap <= 1e-6 else 50)
    warm, cold = solve(L, start, lo, hi, base), solve(L)
    crawled = np.isfinite(cold.threshold)
    np.testing.assert_allclose(crawl_value(warm.threshold[taken], pages[np.flatnonzero(taken)]), L, rtol=4e-15)
    with np.errstate(invalid="ignore"):
        cond = L / (cold.threshold * cold.slope)
    ok = crawled & taken & (cond < 1e3)
    np.testing.assert_allclose(warm.threshold[ok], cold.threshold[ok], rtol=1e-12)
    np.testing.assert_allclose(warm.signal_freq[ok], cold.signal_freq[ok], rtol=1e-12)


def test_the_long_threshold_of_the_issue_in_bounded_time():
    # 13 s for two pages before: at bandwidth 1e-6 the recall-1e-12 page's threshold is ~1e6, where psi's series
    # ran over ~1e6 signals per evaluation; its closed form makes it a few evaluations of O(1) work
    import threading

    pages = PageModel([1.0, 2.0], [1.0, 1.0], recall=[1e-12, 0.5], false_rate=1.0)
    box = {}
    th = threading.Thread(target=lambda: box.setdefault("res", optimal_thresholds(pages, 1e-6)), daemon=True)
    th.start()
    th.join(1.3)
    assert not th.is_alive(), "optimal_thresholds took more than 1.3 s"
    res = box["res"]
    assert res.frequencies.sum() == pytest.approx(1e-6, rel=1e-13)
    # psi(iota) = (iota + kappa)/(1 + u) = 1/f exactly (the form's error is below 1e-16 of psi here)
    u = pages.gamma[0] * pages.beta[0]
    kappa = u * pages.beta[0] / (2 * (1 + u))
    assert res.thresholds[0] == pytest.approx(1e6 * (1 + u) - kappa, rel=1e-15)


@pytest.mark.parametrize("R", [2 / 7000, 2e-4])
def test_thresholds_past_4096_signal_steps(R):
    # where psi's closed form is refused past K = 4096 (gamma beta = 99, its bound not below 1e-16), psi was the
    # closed form plus the series (about twice psi): the thresholds stopped short of K = 4097 and their frequencies
    # were not 1/psi (1.4286e-4 against 1.4326e-4 at R = 2/7000; at R = 2e-4 iota stayed at K = 4096)
    from scipy.special import gammainc

    pages = PageModel([0.001, 0.001], [1.0, 1.0], [0.99, 0.99], [0.58, 0.58])
    res = optimal_thresholds(pages, R)
    g, b = float(pages.gamma[0]), float(pages.beta[0])
    t = res.thresholds[0]
    k = int(t // b)
    assert k > 4096
    n = np.arange(k + 1)
    psi = (gammainc(n + 1, g * (t - n * b)) / g).sum()
    np.testing.assert_allclose(res.frequencies, 1.0 / psi, rtol=1e-12)
    assert res.frequencies.sum() == pytest.approx(R, rel=1e-13)


def test_an_extrapolating_step_past_the_largest_double_is_refused():
    """The interpolating steps of the outer iteration may land beyond 1e308; they fall back (was OverflowError)."""
    pages = PageModel([1, 2, 3], [1, 1, 1], recall=[0, 1, 0.5], false_rate=[0.1, 0.2, 0])
    res = optimal_thresholds(pages, 0.7)
    assert abs(res.frequencies.sum() - 0.7) <= 1e-12 * 0.7
    assert np.isfinite(res.multiplier) and 0.0 < res.accuracy < 1.0


@settings(max_examples=200, deadline=None)
@given(
    pages=st.lists(
        st.tuples(
            st.floats(1e-3, 1e3),
            st.floats(1e-3, 1e3),
            st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)),
            st.one_of(st.just(0.0), st.floats(1e-3, 1e3)),
        ),
        min_size=1,
        max_size=6,
    ),
    bandwidth=st.floats(1e-3, 1e3),
)
def test_small_instances_spend_the_bandwidth_or_crawl_everything(pages, bandwidth):
    """Any small instance over six decades of every parameter: an answer that spends the bandwidth, no exception."""
    model = PageModel(*(np.array(col) for col in zip(*pages)))
    res = optimal_thresholds(model, bandwidth)
    f = res.frequencies
    assert np.all(np.isfinite(f)) and np.all(f >= 0.0)
    assert abs(f.sum() - bandwidth) <= 1e-9 * bandwidth or res.multiplier == 0.0
    assert 0.0 <= res.accuracy <= 1.0



def test_accuracy_of_a_page_crawled_at_every_signal_is_at_most_one():
    """F = f (1 - rho)/Delta = 1 for a recall-1 page crawled at each signal (f = gamma); rounding gave 1 + 4e-16."""
    res = optimal_thresholds(PageModel([0.5], [1.0], recall=[1.0], false_rate=[3.0]), 4.0)
    assert res.multiplier == 0.0 and res.signal_counts.tolist() == [1]
    assert res.accuracy == 1.0

def test_recall_one_pages_cannot_use_a_bandwidth_above_their_signal_rate():
    """Only recall-1 pages: each is crawled at most once per signal (gamma = Delta + nu per unit time).

    A bandwidth above the sum of the gammas is not binding: every page at its first signal, multiplier 0
    (on the starting tree the outer iteration grew without end until memory ran out).
    """
    pages = PageModel([0.0098, 0.09], [1.7, 0.9], recall=1.0, false_rate=[0.0526, 0.13])
    gamma = pages.gamma
    res = optimal_thresholds(pages, 1.3)
    assert res.multiplier == 0.0
    np.testing.assert_array_equal(res.signal_counts, [1, 1])
    np.testing.assert_allclose(res.frequencies, gamma, rtol=1e-15)
    assert res.accuracy == 1.0  # every change signalled, and crawled at its signal
    below = optimal_thresholds(pages, 0.5 * gamma.sum())  # a binding bandwidth still solves as before
    assert abs(below.frequencies.sum() - 0.5 * gamma.sum()) <= 1e-12 * gamma.sum() and below.multiplier > 0
