"""Reproduce Section IX of Avrachenkov and Borkar (2018), "Whittle index policy for crawling ephemeral content",
beside SPEC section 5's numbers, each figure with its Lagrangian upper bound.

Table I's four sources (xi = 1.0, 0.7, 0.2, 0.08; mu = 0.7, 0.35, 0.7, 0.21; Lambda = 250; T = 1; C = 1):

* deterministic model (eqs. (2)-(3)), 1000 steps from X(0) = u: Whittle (M = 1 and 2), always source 1,
  greedy-type, round robin, the relaxed optimum, the dual descent of eq. (22);
* stochastic model (eq. (23)), 10 000 steps, replicas seeded alike for every policy (common random numbers):
  greedy-type, round robin and Whittle, deterministic and exponential utilities, mean +- standard error;
* the stochastic index of Section VIII (eqs. (33)-(35)) against the closed form at a few states.

The bound beside a deterministic figure is the relaxed optimum (the least Lagrangian bound, per-source DP);
beside a stochastic figure of a policy that does not look at the states (greedy-type, round robin) the same
bound holds, its expected rewards being the deterministic ones; beside Whittle's, which looks at the random
states, the Lagrangian bound of the stochastic model (per-source DP on a grid, ``stochastic_bound``).

Run: ``PYTHONPATH=src python bench/repro_whittle.py [--quick]`` (about a minute; --quick: seconds).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from freshcore.whittle import SourceModel, relaxed_optimum, whittle_index
from freshcore.whittle_policies import (
    DualDescentPolicy,
    GreedyPolicy,
    RelaxedPolicy,
    RoundRobinPolicy,
    StaticPolicy,
    WhittlePolicy,
)
from freshcore.whittle_simulation import simulate_sources
from freshcore.whittle_stochastic import stochastic_bound, stochastic_index

TABLE1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])


def _pattern(actions: np.ndarray) -> str:
    gaps = []
    for i in range(actions.shape[1]):
        g = sorted(set(np.diff(np.flatnonzero(actions[:, i])).tolist()))
        gaps.append("never" if not np.any(actions[:, i]) else "every " + "-".join(map(str, g)))
    return ", ".join(f"{i + 1}: {g}" for i, g in enumerate(gaps))


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    print(f"\n{title}")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def main(quick: bool = False) -> None:
    steps, replicas, stoch_steps = (1000, 4, 2000) if quick else (1000, 20, 10000)
    bound1, bound2 = relaxed_optimum(TABLE1, 1), relaxed_optimum(TABLE1, 2)
    rows = []
    w1 = simulate_sources(WhittlePolicy(1), TABLE1, steps)
    rows.append(["Whittle, M=1", f"{w1.reward:.2f}", "260.30", "260.30", f"{bound1.value:.2f}",
                 _pattern(w1.actions[0, 10:])])
    rows.append(["  long run (one cycle)", f"{w1.rewards[0, 998:1000].mean():.2f}", "-", "260.39",
                 f"{bound1.value:.2f}", ""])
    s1 = simulate_sources(StaticPolicy([0]), TABLE1, steps)
    rows.append(["always source 1", f"{s1.reward:.2f}", "179.8", "179.8", f"{bound1.value:.2f}", ""])
    g1 = simulate_sources(GreedyPolicy(1), TABLE1, steps)
    rows.append(["greedy-type, M=1", f"{g1.reward:.2f}", "-", "-", f"{bound1.value:.2f}", _pattern(g1.actions[0, 10:])])
    r1 = simulate_sources(RoundRobinPolicy(1), TABLE1, steps)
    rows.append(["round robin, M=1", f"{r1.reward:.2f}", "-", "-", f"{bound1.value:.2f}", ""])
    rx = simulate_sources(RelaxedPolicy(1), TABLE1, steps)
    rows.append(["relaxed optimum (exact)", f"{bound1.value:.2f}", "260.96", "260.39", f"{bound1.value:.2f}",
                 f"lambda* = {bound1.multiplier:.4f}; simulated {rx.reward:.2f}"])
    dd = simulate_sources(DualDescentPolicy(1), TABLE1, 10 * steps)
    rows.append(["dual descent eq. (22), 10^4 steps", f"{dd.reward:.2f}", "-", "-", f"{bound1.value:.2f}",
                 f"budget used {dd.budget_used.mean():.4f}"])
    w2 = simulate_sources(WhittlePolicy(2), TABLE1, steps)
    rows.append(["Whittle, M=2", f"{w2.reward:.2f}", "-", "-", f"{bound2.value:.2f}", _pattern(w2.actions[0, 100:])])
    rows.append(["  long run (7-period cycle)", f"{w2.rewards[0, 100:107].mean():.4f}", "-", "337.78",
                 f"{bound2.value:.2f}", ""])
    print_table(f"Deterministic model, {steps} steps from X(0) = u (steps 0..{steps - 1} averaged)",
                ["policy", "ours", "paper", "SPEC", "bound", "pattern (gaps between crawls, per source)"], rows)

    rows = []
    stoch: dict[str, tuple[dict, float, np.ndarray]] = {}
    grid_kw = dict(grid=100, samples=4096) if quick else dict(grid=200, samples=16384)
    for utility, paper in (("deterministic", {"greedy-type": "260.2", "round robin": "208.4", "Whittle": "253.1"}),
                           ("exponential", {"greedy-type": "259.3", "round robin": "207.3", "Whittle": "283.8"})):
        runs = {}
        observed = stochastic_bound(TABLE1, 1, utility=utility, rng=7, **grid_kw)[0]
        for name, policy in (("greedy-type", GreedyPolicy(1)), ("round robin", RoundRobinPolicy(1)),
                             ("Whittle", WhittlePolicy(1))):
            runs[name] = simulate_sources(policy, TABLE1, stoch_steps, model="stochastic", utility=utility,
                                          n_replicas=replicas, rng=2018)
            spec = {"greedy-type": "260.2 +- 0.2", "round robin": "208.4 +- 0.2", "Whittle": "~260.3"}[name] \
                if utility == "deterministic" else "not reproducible"
            bound = f"{bound1.value:.2f}" if name != "Whittle" else f"{observed:.2f} (grid)"
            r = runs[name]
            rows.append([f"{name}, {utility} utilities", f"{r.reward:.2f} +- {r.stderr:.2f}", paper[name], spec,
                         bound])
        d = runs["Whittle"].replica_rewards - runs["greedy-type"].replica_rewards
        stoch[utility] = (runs, observed, d)
        rows.append([f"  Whittle - greedy-type ({utility})", f"{d.mean():+.3f} +- {d.std(ddof=1) / np.sqrt(len(d)):.3f}",
                     "", "", ""])
    print_table(f"Stochastic model (eq. 23), Poisson arrivals, {stoch_steps} steps x {replicas} replicas "
                "(common random numbers)", ["policy", "ours", "paper", "SPEC", "bound"], rows)

    fracs = np.array([0.2, 0.5, 0.8, 0.95])
    x = fracs[:, None] * TABLE1.u_star
    det = whittle_index(x, TABLE1)
    sto = stochastic_index(x, TABLE1, rng=0, **(dict(iterations=2000, samples=32, grid=200) if quick else {}))
    rows = [[f"{f:.2f} u*"] + [f"{sto[k, i]:.2f} / {det[k, i]:.2f}" for i in range(4)] for k, f in enumerate(fracs)]
    print_table("Stochastic index (Section VIII, eqs. 33-35; Poisson arrivals, deterministic utilities) / "
                "closed form (Theorem 1)", ["state", "source 1", "source 2", "source 3", "source 4"], rows)
    print("\nNot reproducible (SPEC section 5), and why, from the figures above:")
    print(f"* the paper's relaxed 260.96: the exact relaxed optimum (the least Lagrangian bound) is "
          f"{bound1.value:.2f}, an upper")
    print("  bound on every policy of the deterministic model; 260.96 is above it.")
    _why_not(*stoch["deterministic"], paper=253.1, utility="deterministic")
    _why_not(*stoch["exponential"], paper=283.8, utility="exponential")
    runs = stoch["exponential"][0]
    print("* the paper's exponential-utility greedy-type 259.3 and round robin 207.3: these policies do not look at "
          "the")
    print("  states, so their expected reward depends on the utilities' mean only: it is the deterministic "
          "model's. Ours,")
    print(f"  {runs['greedy-type'].reward:.2f} +- {runs['greedy-type'].stderr:.2f} and "
          f"{runs['round robin'].reward:.2f} +- {runs['round robin'].stderr:.2f}, agree with the "
          "deterministic-utility ones; the paper's")
    print("  are 0.9 and 1.1 below its own 260.2 and 208.4, more than the +-0.2 SPEC quotes.")


def _why_not(runs: dict, bound: float, d: np.ndarray, paper: float, utility: str) -> None:
    """Say why the paper's stochastic Whittle figure for ``utility`` does not reproduce, from the run's figures."""
    w, g = runs["Whittle"], runs["greedy-type"]
    se_d = d.std(ddof=1) / np.sqrt(len(d))
    print(f"* the paper's stochastic Whittle {paper} ({utility} utilities): ours is {w.reward:.2f} +- "
          f"{w.stderr:.2f}, {d.mean():+.2f} +- {se_d:.2f}")
    print(f"  from greedy-type on the same arrivals, under the Lagrangian bound {bound:.2f} (an upper bound on "
          "every policy,")
    if paper > bound:
        print(f"  Whittle's included, up to +-0.1 from the grid and the sampling). {paper} is {paper - bound:.1f} "
              "ABOVE the bound:")
        print("  no policy of the model as stated (eq. 23) reaches it, so it is not simulation noise but another "
              "model or an error.")
    else:
        print(f"  Whittle's included, up to +-0.1 from the grid and the sampling). {paper} is "
              f"{(w.reward - paper) / w.stderr:.0f} of our standard errors")
        print(f"  below ours and {g.reward - paper:.1f} below our greedy-type, where our simulation of the model "
              f"as stated (eq. 23)")
        print(f"  puts Whittle within {abs(d.mean()) + 2 * se_d:.2f} of greedy-type (their difference, plus two "
              "standard errors). The paper")
        print("  does not say what would make Whittle lose that much (SPEC section 5 lists 253.1 as not "
              "reproducible).")

if __name__ == "__main__":
    t0 = time.perf_counter()
    main(quick="--quick" in sys.argv[1:])
    print(f"({time.perf_counter() - t0:.1f} s)")
