"""Shared pieces of the ``bench/repro_*.py`` reproductions of the experiments of Busa-Fekete et al. (2025)
(SPEC section 4).

Instances follow their Section 6.1 (``freshcore.reproduce._tables.instance``, shared with
``freshcore reproduce``): ``Delta_i, mu_i ~ U[0, 1]``, and with signals ``lambda_i ~ Beta(0.25, 0.25)``,
``nu_i ~ U(0.1, 0.6)``; instance ``k`` uses ``numpy.random.default_rng(1000 * m + k)`` for the parameters
and seed ``k`` for the events, so every policy of a row sees the same instances and the same events.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

from freshcore.reproduce._tables import N_INSTANCES, R, fmt, instance, mean_se

__all__ = ["N_INSTANCES", "R", "fmt", "instance", "mean_se", "print_table"]


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
