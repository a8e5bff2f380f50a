"""Reproduce Fig. 4 of Busa-Fekete et al. (2025): policies with noisy change signals (SPEC section 4).

R = 100, horizon 100, m in {100, 200, 500, 1000}, 3 instances with
``lambda ~ Beta(0.25, 0.25)``, ``nu ~ U(0.1, 0.6)`` (``repro_common``), accuracy
after a 20% burn-in.  Policies: ``Scheduler`` with value "greedy" (signals
ignored), "cis" (GREEDY-CIS: a signal is taken as proof of a change), "exact"
(GREEDY-NCIS) and "approx" with 1 and 2 terms (G-NCIS-APPROX-j).  Reference
columns: the signal-blind continuous optimum (periodic, their eq. (5)) and the
signal-aware one (``optimal_thresholds``, their Theorem 2).  Entries: mean ±
standard error over the instances; the last line per m is the mean
within-run standard error.

Run: ``PYTHONPATH=src python bench/repro_fig4.py [horizon]``.

Output (2 shared cores, 2026-11-22)::

    Busa-Fekete et al. (2025), Fig. 4: lambda ~ Beta(.25,.25), nu ~ U(.1,.6), R = 100, horizon 100, 3 instances, 20% burn-in
       m     opt(blind)   opt(signals)         GREEDY          G-CIS         G-NCIS       approx-1       approx-2
     100  0.8281±0.0069  0.9090±0.0058  0.8246±0.0077  0.9067±0.0084  0.9100±0.0057  0.9079±0.0064  0.9092±0.0062
     200  0.7022±0.0098  0.7725±0.0093  0.7066±0.0146  0.7364±0.0138  0.7760±0.0105  0.7706±0.0124  0.7726±0.0109
     500  0.5057±0.0031  0.5445±0.0026  0.5069±0.0048  0.4437±0.0008  0.5452±0.0020  0.5319±0.0054  0.5416±0.0056
    1000  0.3695±0.0059  0.3883±0.0052  0.3708±0.0041  0.2722±0.0038  0.3902±0.0061  0.3690±0.0038  0.3813±0.0048
    mean within-run standard error
       m  GREEDY   G-CIS  G-NCIS  approx-1  approx-2
     100  0.0059  0.0049  0.0048    0.0048    0.0048
     200  0.0066  0.0061  0.0055    0.0058    0.0061
     500  0.0045  0.0049  0.0046    0.0055    0.0047
    1000  0.0031  0.0026  0.0037    0.0030    0.0030
"""

from __future__ import annotations

import sys
import time

import numpy as np

from freshcore.policy_simulation import simulate
from freshcore.rates import freshness, optimal_rates
from freshcore.schedule import Scheduler
from freshcore.thresholds import optimal_thresholds

from repro_common import N_INSTANCES, R, fmt, instance, print_table

POLICIES = (("GREEDY", "greedy", None), ("G-CIS", "cis", None), ("G-NCIS", "exact", None),
            ("approx-1", "approx", 1), ("approx-2", "approx", 2))


def main(horizon: float = 100.0, sizes=(100, 200, 500, 1000)) -> None:
    rows, se_rows = [], []
    t0 = time.perf_counter()
    for m in sizes:
        blind, aware = [], []
        acc = {name: [] for name, _, _ in POLICIES}
        se = {name: [] for name, _, _ in POLICIES}
        for k in range(N_INSTANCES):
            pages = instance(m, k, signals=True)
            xi = optimal_rates(pages.change_rate, pages.importance, R, model="periodic")
            blind.append(freshness(xi, pages.change_rate, pages.importance, model="periodic"))
            aware.append(optimal_thresholds(pages, R).accuracy)
            for name, value, terms in POLICIES:
                res = simulate(Scheduler(pages, R, value=value, terms=terms), pages, horizon, rng=k)
                acc[name].append(res.accuracy)
                se[name].append(res.accuracy_se)
        rows.append([str(m), fmt(blind), fmt(aware)] + [fmt(acc[name]) for name, _, _ in POLICIES])
        se_rows.append([str(m)] + [f"{np.mean(se[name]):.4f}" for name, _, _ in POLICIES])
    print(f"Busa-Fekete et al. (2025), Fig. 4: lambda ~ Beta(.25,.25), nu ~ U(.1,.6), R = {R:g}, horizon {horizon:g}, "
          f"{N_INSTANCES} instances, 20% burn-in")
    print_table(["m", "opt(blind)", "opt(signals)"] + [name for name, _, _ in POLICIES], rows)
    print("mean within-run standard error")
    print_table(["m"] + [name for name, _, _ in POLICIES], se_rows)
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 100.0)
