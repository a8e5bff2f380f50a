"""Blind sampling: the experiments of Li, Cline and Loguinov (2017) that SPEC section 6 lists as reproducible.

Updates are Pareto throughout (F_U(x) = 1 − (1 + x)^{−3}: α = 3, β = 1, μ = 2, so G_U(x) = 1 − (1 + x)^{−2}),
started in equilibrium; samples start at time 0.

- Table I: WMRD (eq. (48)) and KS (eq. (49)) of M4 and M5 against G_U at x_n = n, n = 1 .. 9, at constant
  S = 1 (λ = 1), averaged over independent runs, beside the paper's numbers;
- E[D3] = Δ/G_U(Δ) = 4/3 and E[D4] = π²/6 at Δ = 1 (the paper's 1.63 is a simulation; D4's tail is
  x^{−2}, so its sample mean converges slowly: see :func:`d3_d4`);
- Fig. 4: the fraction p of samples M1 retains against E[G_U(S)] (eq. (5)), constant and exponential S;
- Fig. 15: M6's KS distance to G_U with exponential and uniform (on [0, 2/λ]) S, h = 0.05, λ = 1: to the
  bin averages (1/h) ∫ G_U over ((n − 1)h, nh], which M6 estimates at a fixed h (SPEC section 6; the renewal
  weight of these samplers varies by under 2% across a bin), and to G_U(nh) (off by about g_U h/2 at small
  n until h → 0);
- Fig. 8: μ and F_U recovered from M2 (constant S, λ = 100) by finite differences with the bin width of the
  flat-region search, and from M6 (exponential S) the same way;
- beyond the paper: periodic crawl rates under a bandwidth planned with the Poisson assumption (the true
  update rates in the periodic model of SPEC section 2) against rates planned with the age distributions M4
  recovers (``optimal_rates(AgeTable(...), ..., model="renewal")``) and with the true laws, all evaluated
  under the true update processes.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..blind import (
    AgeTable,
    Constant,
    Exponential,
    IntervalDistribution,
    Pareto,
    Uniform,
    flat_bin_width,
    ks,
    m2,
    m3,
    m4,
    m5,
    m6,
    simulate_log,
    update_distribution,
    wmrd,
)
from ..rates import freshness, optimal_rates
from ._tables import Table

UPDATES = Pareto(3.0, 1.0)
X9 = np.arange(1.0, 10.0)  # x_n = n Δ, n = 1 .. 9, Δ = 1
# Table I of Li, Cline and Loguinov (2017): T -> (w M4, κ M4, w M5, κ M5)
TABLE_I = {1e2: (3.5e-2, 6.4e-2, 3.7e-2, 6.7e-2), 1e3: (1.4e-2, 2.2e-2, 1.4e-2, 2.2e-2),
           1e4: (4.7e-3, 7.2e-3, 4.7e-3, 7.3e-3), 1e5: (1.5e-3, 2.4e-3, 1.5e-3, 2.4e-3),
           1e6: (4.1e-4, 5.8e-4, 4.1e-4, 5.8e-4), 1e7: (2.2e-4, 2.6e-4, 2.2e-4, 2.6e-4)}
E_D3, E_D4 = 4.0 / 3.0, math.pi**2 / 6.0
COLUMNS = ("w M4", "κ M4", "w M5", "κ M5")


def table_i(runs: dict[float, int], seed: int = 0) -> Table:
    """Table I: the mean of each metric over ``runs[T]`` independent windows of length T."""
    g = UPDATES.age_cdf(X9)
    table = Table("Table I of Li, Cline and Loguinov (2017): M4 and M5 under Pareto U (μ = 2), constant S "
                  "(λ = 1), mean over runs (paper's value in brackets)", ["T", "runs", *COLUMNS])
    for T, n_runs in runs.items():
        gen = np.random.default_rng([seed, int(T)])
        got = np.zeros(4)
        for _ in range(n_runs):
            c = simulate_log(UPDATES, Constant(1.0), T, rng=gen).changed
            a, b = m4(c, 9), m5(c, 9)
            got += (wmrd(a, g), ks(a, g), wmrd(b, g), ks(b, g))
        got /= n_runs
        ref = TABLE_I[T]
        table.rows.append([f"{T:.0e}", str(n_runs), *(f"{v:.2e} ({r:.1e})" for v, r in zip(got, ref))])
        table.values.update({f"{name}@{T:g}": float(v) for name, v in zip(COLUMNS, got)})
    return table


def _mean_from_cdf(cdf: np.ndarray) -> float:
    """Δ Σ_{n >= 0} (1 − G(nΔ)) with Δ = 1, G(0) = 0 (a lattice variable's mean; cdf reaches 1)."""
    return 1.0 + float(np.sum(1.0 - cdf))


HEAD = 100  # E[D4] = Σ_{n < HEAD} (1 − G_4(n)) simulated + Σ_{n >= HEAD} (1 + n)^{-2} exact (0.6% of it)


def d3_d4(horizon: float, seeds: int, seed: int = 0) -> Table:
    """E[D3] and E[D4] at Δ = 1 from M3's and M4's distributions over ``seeds`` windows of ``horizon``.

    D4's tail is x^{-2}: its variance is infinite and one update interval of length L adds ~L²/2 to the sum
    of its samples, so the plain sample mean wanders by percents even over 10^7 samples.  The row
    "E[D4], head + tail" sums the simulated 1 − G_4(n) over n < 100 (bounded samples, finite variance) and
    adds the exact tail Σ_{n >= 100} (1 + n)^{-2} = 0.00995 (0.6% of the total)."""
    d3, d4, head = [], [], []
    tail = math.pi**2 / 6.0 - sum((1.0 + n) ** -2 for n in range(HEAD))
    for k in range(seeds):
        c = simulate_log(UPDATES, Constant(1.0), horizon, rng=np.random.default_rng([seed, k])).changed
        n = len(c) + 1  # no gap or run is longer than the window
        d3.append(_mean_from_cdf(m3(c, n)))
        g4 = m4(c, n)
        d4.append(_mean_from_cdf(g4))
        head.append(_mean_from_cdf(g4[: HEAD - 1]) + tail)
    table = Table(f"E[D3] and E[D4] (Theorem 7 and Section V-C), Δ = 1, mean of {seeds} windows of T = "
                  f"{horizon:.0e}", ["", "simulated", "exact", "paper"])
    for name, got, exact, paper in (("E[D3]", d3, E_D3, "1.33"), ("E[D4]", d4, E_D4, "1.63"),
                                    ("E[D4], head + tail", head, E_D4, "")):
        table.rows.append([name, f"{np.mean(got):.4f} (windows {min(got):.3f} .. {max(got):.3f})",
                           f"{exact:.4f}", paper])
        table.values[name] = float(np.mean(got))
    return table


def retained_fraction(law: IntervalDistribution) -> float:
    """p = E[G_U(S)] (eq. (5)) for sampling intervals S of ``law`` (constant or exponential)."""
    if isinstance(law, Constant):
        return float(UPDATES.age_cdf(law.value))
    # S = -log(1 - u)/λ, u uniform on (0, 1): E[G_U(S)] = ∫_0^1 G_U(-log(1 - u)/λ) du by Gauss-Legendre
    nodes, weights = np.polynomial.legendre.leggauss(400)
    u = 0.5 * (nodes + 1.0)
    return float(0.5 * weights @ UPDATES.age_cdf(-np.log1p(-u) / law.rate))


def fig4(rates: tuple[float, ...], samples: float, seed: int = 0) -> Table:
    """Fig. 4: M1's retained fraction (the mean of the flags Q_{j,j+1}) over ``samples`` samples."""
    table = Table(f"Fig. 4 of Li, Cline and Loguinov (2017): fraction p of samples M1 retains, {samples:.0e} "
                  "samples, against E[G_U(S)] (eq. (5))", ["λ", "S", "simulated p", "E[G_U(S)]", "difference"])
    for lam in rates:
        for name, law in (("constant", Constant(1.0 / lam)), ("exponential", Exponential(lam))):
            c = simulate_log(UPDATES, law, samples / lam, rng=np.random.default_rng([seed, int(1000 * lam)])).changed
            p, want = float(c.mean()), retained_fraction(law)
            table.rows.append([f"{lam:g}", name, f"{p:.4f}", f"{want:.4f}", f"{p - want:+.4f}"])
            table.values[f"p {name}@{lam:g}"] = p
            table.values[f"E[G_U(S)] {name}@{lam:g}"] = want
    return table


def bin_average(h: float, n_bins: int) -> np.ndarray:
    """(1/h) ∫ G_U over ((n − 1)h, nh], n = 1 .. n_bins: ∫_a^b G_U = (b − a) − (1/(1 + a) − 1/(1 + b))."""
    a, b = h * np.arange(n_bins), h * np.arange(1, n_bins + 1)
    return 1.0 - (1.0 / (1.0 + a) - 1.0 / (1.0 + b)) / h


def fig15(horizon: float, h: float = 0.05, max_distance: float = 10.0, seed: int = 0) -> Table:
    """Fig. 15: M6 (fast form) against G_U with exponential and uniform S (λ = 1)."""
    n_bins = round(max_distance / h)
    n = np.arange(1, n_bins + 1)
    table = Table(f"Fig. 15 of Li, Cline and Loguinov (2017): M6, h = {h:g}, bins up to {max_distance:g}, "
                  f"T = {horizon:.0e}, λ = 1", ["S", "KS to the bin averages", "KS to G_U(nh)", "pairs"])
    for name, law in (("exponential", Exponential(1.0)), ("uniform [0, 2]", Uniform(0.0, 2.0))):
        log = simulate_log(UPDATES, law, horizon, rng=np.random.default_rng([seed, len(name)]))
        est, pairs, _ = m6(log.times, log.changed, h, n_bins, return_counts=True)
        k_avg, k_edge = ks(est, bin_average(h, n_bins)), ks(est, UPDATES.age_cdf(n * h))
        table.rows.append([name, f"{k_avg:.4f}", f"{k_edge:.4f}", f"{int(pairs.sum())}"])
        table.values[f"KS avg {name}"] = k_avg
        table.values[f"KS edge {name}"] = k_edge
    return table


def recovery(horizon_m2: float, horizon_m6: float, seed: int = 0, rtol_m6: float = 0.01) -> Table:
    """Fig. 8: μ and F_U from M2 (constant S, λ = 100) and from M6 (exponential S, λ = 1; its bins are averages
    of G_U, differentiated twice after summing)."""
    table = Table("Fig. 8 of Li, Cline and Loguinov (2017): μ and F_U recovered by 5-point finite differences, "
                  f"bin width h from the flat-region search (rtol 1%, M6 {rtol_m6:.0%})",
                  ["method", "T", "h", "μ (true 2)", "KS of F_U on [0, 10]"])
    k = np.arange(1.0, 5.0)
    log = simulate_log(UPDATES, Constant(0.01), horizon_m2, rng=np.random.default_rng([seed, 2]))
    h = flat_bin_width(lambda h: (h * k, m2(log.ages, h * k)), 1e-3, 1.0)
    x = h * np.arange(1, int(10.0 / h) + 1)
    r = update_distribution(m2(log.ages, x), x)
    rows = [("M2, constant S, λ = 100", horizon_m2, h, r)]
    log = simulate_log(UPDATES, Exponential(1.0), horizon_m6, rng=np.random.default_rng([seed, 6]))

    def m6_at(h: float, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # exponential sampling is not lattice
            return np.arange(1, n_bins + 1) * h, m6(log.times, log.changed, h, n_bins)

    h = flat_bin_width(lambda h: m6_at(h, 4), 1e-3, 1.0, rtol=rtol_m6, averages=True)
    x, est = m6_at(h, int(10.0 / h))
    r = update_distribution(est, x, averages=True)
    rows.append(("M6, exponential S, λ = 1", horizon_m6, h, r))
    for name, horizon, h, r in rows:
        d = ks(r.cdf, UPDATES.cdf(r.x))
        table.rows.append([name, f"{horizon:.0e}", f"{h:.4f}", f"{r.rate:.4f}", f"{d:.4f}"])
        table.values[f"mu {name.split(',')[0]}"] = r.rate
        table.values[f"KS F_U {name.split(',')[0]}"] = d
    return table


def crawl_rates(n_pages: int, horizon: float, seed: int = 0) -> Table:
    """Freshness of periodic crawl plans on pages that do not change like Poisson processes.

    Half the pages Pareto (α ~ U[2.5, 4], mean interval ~ U[0.5, 5]), half constant-interval (period ~
    U[0.5, 5]); importance ~ U[0, 1]; bandwidth 0.3 Σ μ_i.  Each page's G_U is estimated by M4 from a
    crawler's log over ``horizon`` at a constant interval of 0.1 (bins up to 30).  Plans, all from
    :func:`freshcore.rates.optimal_rates`: the periodic model with the true update rates μ_i (the Poisson
    assumption at its best), the renewal model with the estimated G_U (an :class:`AgeTable`), and with the
    true laws (the oracle); all evaluated with the true laws (``freshness(..., model="renewal")``)."""
    rng = np.random.default_rng([seed, 18])
    half = n_pages // 2
    alpha = rng.uniform(2.5, 4.0, half)
    laws: list[IntervalDistribution] = [Pareto(a, m * (a - 1.0)) for a, m in zip(alpha, rng.uniform(0.5, 5.0, half))]
    laws += [Constant(p) for p in rng.uniform(0.5, 5.0, n_pages - half)]
    w = rng.uniform(0.0, 1.0, n_pages)
    mu = np.array([law.rate for law in laws])
    budget = 0.3 * float(mu.sum())
    step, k = 0.1, 300
    x = step * np.arange(1, k + 1)
    estimated = AgeTable([m4(simulate_log(law, Constant(step), horizon, rng=rng).changed, k) for law in laws], x)
    plans = {"Poisson assumption (true μ)": optimal_rates(mu, w, budget, model="periodic"),
             "renewal, G_U from M4": optimal_rates(estimated, w, budget, model="renewal"),
             "renewal, true G_U (oracle)": optimal_rates(laws, w, budget, model="renewal")}
    table = Table(f"Beyond the paper: periodic crawl plans for {n_pages} non-Poisson pages (half Pareto, half "
                  f"constant intervals), bandwidth 0.3 Σμ, M4 over T = {horizon:g}; freshness under the true "
                  "processes", ["plan", "all pages", "Pareto pages", "constant pages"])
    for name, plan in plans.items():
        f = freshness(plan, laws, w, model="renewal", per_page=True)
        cols = [float(w @ f / w.sum()), float(w[:half] @ f[:half] / w[:half].sum()),
                float(w[half:] @ f[half:] / w[half:].sum())]
        table.rows.append([name, *(f"{v:.4f}" for v in cols)])
        table.values[f"freshness {name}"] = cols[0]
    return table


def run(quick: bool = False, seed: int = 0) -> list[Table]:
    """The tables; ``quick``: T up to 1e4 in Table I, shorter windows elsewhere (seconds)."""
    if quick:
        return [table_i({1e2: 2000, 1e3: 1000, 1e4: 300}, seed), d3_d4(1e6, 2, seed),
                fig4((0.5, 1.0, 2.0, 5.0, 10.0), 1e6, seed), fig15(1e6, seed=seed),
                recovery(1e5, 1e6, seed, rtol_m6=0.02), crawl_rates(100, 1000.0, seed)]
    return [table_i({1e2: 2000, 1e3: 1000, 1e4: 300, 1e5: 300, 1e6: 30}, seed), d3_d4(1e7, 4, seed),
            fig4((0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0), 2e6, seed), fig15(1e7, seed=seed),
            recovery(1e5, 1e7, seed), crawl_rates(1000, 2000.0, seed)]
