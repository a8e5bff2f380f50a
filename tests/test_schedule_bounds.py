"""The slope bound the scheduler's rebuild relies on: V grows by at most mu/e per unit of tau_eff.

``freshcore._schedule`` keys a cold page after a rebuild by ``t + (L - V)/(0.368 mu)``
instead of searching for the crossing of the level ``L``; that key is valid only if
``V(tau + s) - V(tau) <= s mu/e`` for the "exact", "cis" and "greedy" values (V' = mu alpha
e^{-alpha tau} psi(tau) with psi(tau) <= tau, and x e^{-x} <= 1/e).
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore.value import PageModel, crawl_value

SLOPE = 0.368  # the constant in _schedule.pyx


def pages_from(dl, mu, lam, nu):
    return PageModel(np.array([dl]), np.array([mu]), np.array([lam]), np.array([nu]))


@settings(max_examples=300, deadline=None)
@given(
    dl=st.floats(1e-4, 1e3),
    mu=st.floats(1e-3, 1e3),
    lam=st.sampled_from([0.0, 1e-6, 0.05, 0.5, 0.95, 1.0 - 1e-9]),
    nu=st.sampled_from([0.0, 1e-6, 0.1, 0.6, 10.0]),
    kind=st.sampled_from(["exact", "cis", "greedy"]),
)
def test_value_slope_at_most_mu_over_e(dl, mu, lam, nu, kind):
    pages = pages_from(dl, mu, lam, nu)
    # tau on the page's own scale and far beyond it; s from tiny to large steps
    tau = np.concatenate([[0.0], np.geomspace(1e-6, 1e3, 60) / dl])
    for s in (1e-3 / dl, 0.1 / dl, 1.0 / dl, 10.0 / dl):
        v0 = np.array([crawl_value(x, pages, kind)[0] for x in tau])
        v1 = np.array([crawl_value(x + s, pages, kind)[0] for x in tau])
        growth = v1 - v0
        assert np.all(growth <= s * mu / np.e * (1 + 1e-9) + 1e-13 * np.abs(v1)), (kind, s)
        assert s * mu / np.e < s * mu * SLOPE


def test_bound_is_nearly_attained_by_greedy():
    # Greedy: dV/dtau = mu Delta tau e^{-Delta tau}, equal to mu/e at Delta tau = 1 -- the bound is tight.
    pages = pages_from(2.0, 3.0, 0.0, 0.0)
    h = 1e-6
    slope = (crawl_value(0.5 + h, pages, "greedy")[0] - crawl_value(0.5 - h, pages, "greedy")[0]) / (2 * h)
    assert abs(slope - 3.0 / np.e) < 1e-6
