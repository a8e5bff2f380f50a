"""Crawl policies for ephemeral-content sources, behind one interface (:class:`SourcePolicy`).

Each period the crawler picks which sources to crawl (Avrachenkov and Borkar (2018), Section IX):

* :class:`WhittlePolicy` -- the ``M`` largest Whittle indices (:func:`freshcore.whittle.whittle_index`);
* :class:`GreedyPolicy` -- the paper's greedy-type policy: the ``M`` largest
  ``Lambda xi / mu (1 - e^{-mu t})``, ``t`` the time since the source's last crawl;
* :class:`RoundRobinPolicy` -- ``M`` sources at a time in a fixed cycle;
* :class:`StaticPolicy` -- a fixed schedule, repeated (e.g. ``[[0]]``: always source 0);
* the relaxed controls of Section VII, which meet the budget ``sum_i C_i v_i = M`` on average only:
  :class:`RelaxedPolicy` (the exact discrete relaxed optimum: crawl iff ``gamma(X) >= lambda*``, time-sharing
  at the tie), :class:`LambertThresholdPolicy` (eq. (21)'s threshold at a fixed multiplier) and
  :class:`DualDescentPolicy` (the multiplier learnt by eq. (22) as corrected in SPEC section 5).

The simulators of :mod:`freshcore.whittle_simulation` drive any of them, vectorised over replicas.  Top-M
policies crawl exactly ``M`` sources a period whatever the costs (the hard "at most M" constraint of which the
budget is the relaxation); the costs enter through the index and the relaxed constraint.

References
----------
.. [1] K. Avrachenkov, V. S. Borkar, "Whittle index policy for crawling ephemeral content", IEEE Transactions
   on Control of Network Systems 5(1), 2018.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from freshcore._papers import AVRACHENKOV_BORKAR_2018, cites
from freshcore._validation import check_int
from freshcore.whittle import SourceModel, whittle_index

__all__ = [
    "GreedyPolicy",
    "RoundRobinPolicy",
    "SourcePolicy",
    "StaticPolicy",
    "WhittlePolicy",
    "top_m",
]


@runtime_checkable
@cites(AVRACHENKOV_BORKAR_2018)
class SourcePolicy(Protocol):
    """What a policy for ephemeral-content sources offers: a period's crawls from the sources' states.

    A simulator calls :meth:`start` once, then :meth:`choose` every period ``k = 0, 1, ...`` and advances
    the states itself (eqs. (2)-(3) or (23) of Avrachenkov and Borkar (2018)).  Rows are independent
    replicas of the system (the stochastic simulator runs many at once).
    """

    def start(self, sources: SourceModel, n_replicas: int) -> None:
        """Get ready for ``n_replicas`` systems of ``sources`` (validating the policy's own parameters
        against them); forgets any earlier run."""

    def choose(self, state: np.ndarray, age: np.ndarray, step: int) -> np.ndarray:
        """The sources crawled at period ``step``: a bool array of shape ``(n_replicas, n_sources)``.

        ``state`` (float64) holds each source's state ``X`` before the period's crawls, ``age`` (int64) the
        number of periods since its last crawl (1 right after one; the simulators start every source at
        age 1, as if crawled just before period 0).  Neither may be modified.
        """


def top_m(values: np.ndarray, m: int) -> np.ndarray:
    """Bool mask of the ``m`` largest entries of each row of ``values``, ties to the lowest column."""
    order = np.argsort(-values, axis=-1, kind="stable")[..., :m]
    mask = np.zeros(values.shape, dtype=bool)
    np.put_along_axis(mask, order, True, axis=-1)
    return mask


def _budget(m: Any, caller: str) -> int:
    return check_int(m, "budget", caller, low=1)


def _check_budget_fits(m: int, n: int, caller: str) -> None:
    if m > n:
        raise ValueError(
            f"The 'budget' parameter of {caller} must be an integer in 1..{n} (the number of sources). "
            f"Got {m!r} instead."
        )


class _TopM:
    """Top-M by a score of (state, age): the shared part of the index policies."""

    _caller = "policy"

    def __init__(self, budget: Any = 1) -> None:
        self._m = _budget(budget, self._caller)
        self._sources: SourceModel | None = None

    budget = property(lambda self: self._m, doc="M, the number of sources crawled each period.")

    def start(self, sources: SourceModel, n_replicas: int) -> None:
        _check_budget_fits(self._m, len(sources), self._caller)
        self._sources = sources

    def _score(self, state: np.ndarray, age: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def choose(self, state: np.ndarray, age: np.ndarray, step: int) -> np.ndarray:
        return top_m(self._score(state, age), self._m)


@cites(AVRACHENKOV_BORKAR_2018)
class WhittlePolicy(_TopM):
    """Crawl the ``M`` sources of the largest Whittle index each period; ties go to the lowest source index.

    The index policy of Theorem 1 of Avrachenkov and Borkar (2018) (SPEC section 5), on the observed states.

    Parameters
    ----------
    budget : int, default=1
        ``M``, sources crawled per period (``1 <= M <= n_sources``, checked when a simulation starts).

    Examples
    --------
    >>> from freshcore.whittle import SourceModel
    >>> from freshcore.whittle_policies import WhittlePolicy
    >>> from freshcore.whittle_simulation import simulate_sources
    >>> table1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    >>> run = simulate_sources(WhittlePolicy(1), table1, 1000)
    >>> round(run.reward, 2), run.actions[0, :6].argmax(axis=1).tolist()     # SPEC: 260.30, 1 and 2 alternate
    (260.3, [0, 1, 0, 1, 0, 1])
    """

    _caller = "WhittlePolicy"

    def _score(self, state: np.ndarray, age: np.ndarray) -> np.ndarray:
        assert self._sources is not None
        return whittle_index(state, self._sources)


@cites(AVRACHENKOV_BORKAR_2018)
class GreedyPolicy(_TopM):
    """The greedy-type policy: the ``M`` largest ``Lambda xi / mu (1 - e^{-mu t})`` (ties: lowest index).

    ``t`` is the time since the source's last crawl (its age times ``T``): the score is the expected state
    of a source crawled ``t`` ago, ``u* (1 - alpha^age)``, so the policy needs no observation (Section IX of
    Avrachenkov and Borkar (2018)).

    Parameters
    ----------
    budget : int, default=1
        ``M``, sources crawled per period.
    """

    _caller = "GreedyPolicy"

    def _score(self, state: np.ndarray, age: np.ndarray) -> np.ndarray:
        assert self._sources is not None
        s = self._sources
        return -s.u_star * np.expm1(-s._mut * age)


class RoundRobinPolicy:
    """Crawl ``M`` sources at a time in the fixed cycle 0, 1, ..., n-1, 0, ...

    Period ``k`` crawls sources ``(k M + j) mod n``, ``j < M``.

    Parameters
    ----------
    budget : int, default=1
        ``M``, sources crawled per period.
    """

    _caller = "RoundRobinPolicy"

    def __init__(self, budget: Any = 1) -> None:
        self._m = _budget(budget, self._caller)
        self._n = 0

    budget = property(lambda self: self._m, doc="M, the number of sources crawled each period.")

    def start(self, sources: SourceModel, n_replicas: int) -> None:
        _check_budget_fits(self._m, len(sources), self._caller)
        self._n = len(sources)

    def choose(self, state: np.ndarray, age: np.ndarray, step: int) -> np.ndarray:
        mask = np.zeros(state.shape, dtype=bool)
        mask[:, (step * self._m + np.arange(self._m)) % self._n] = True
        return mask


class StaticPolicy:
    """A fixed schedule, repeated: period ``k`` crawls the sources ``schedule[k mod len(schedule)]``.

    Parameters
    ----------
    schedule : array_like of int, shape (n_periods,) or (n_periods, M)
        The sources crawled in each period of the cycle (a 1-D schedule crawls one source a period).
        ``[[0]]`` or ``[0]`` crawls source 0 every period; ``[0, 1]`` alternates sources 0 and 1.
    """

    _caller = "StaticPolicy"

    def __init__(self, schedule: Any) -> None:
        arr = np.asarray(schedule)
        if arr.dtype.kind not in "iu" or arr.ndim not in (1, 2) or arr.size == 0:
            raise ValueError(
                f"The 'schedule' parameter of {self._caller} must be a non-empty 1-D or 2-D array of source "
                f"indices. Got {schedule!r} instead."
            )
        self._schedule = np.array(arr.reshape(len(arr), -1), dtype=np.int64)

    def start(self, sources: SourceModel, n_replicas: int) -> None:
        bad = (self._schedule < 0) | (self._schedule >= len(sources))
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            raise ValueError(
                f"The 'schedule' parameter of {self._caller} must hold source indices in 0..{len(sources) - 1}; "
                f"schedule[{i}, {j}] = {int(self._schedule[i, j])}."
            )

    def choose(self, state: np.ndarray, age: np.ndarray, step: int) -> np.ndarray:
        mask = np.zeros(state.shape, dtype=bool)
        mask[:, self._schedule[step % len(self._schedule)]] = True
        return mask
