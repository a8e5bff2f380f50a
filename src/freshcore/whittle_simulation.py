"""Simulators of ephemeral-content sources under a crawl policy (Avrachenkov and Borkar (2018)).

:func:`simulate_sources` runs any :class:`~freshcore.whittle_policies.SourcePolicy` for a number of periods
on the deterministic model of eqs. (2)-(3) (the state is the expected utility waiting at a source) or on the
stochastic model of eq. (23), where each period brings a random utility ``U`` instead of its mean ``u``.
Every period ``k`` the policy picks the sources to crawl from the states ``X(k)``; a crawled source yields
its state as reward.  The stochastic runs are seeded, vectorised over replicas, and draw the arrivals
independently of the decisions, so two policies run with one seed see the same arrivals (common random
numbers): the difference of their rewards has a much smaller standard error than either.

References
----------
.. [1] K. Avrachenkov, V. S. Borkar, "Whittle index policy for crawling ephemeral content", IEEE Transactions
   on Control of Network Systems 5(1), 2018.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from freshcore import _whittle
from freshcore._papers import AVRACHENKOV_BORKAR_2018, cites
from freshcore._validation import check_choice, check_int, check_rng
from freshcore.whittle import SourceModel, check_sources, check_states
from freshcore.whittle_policies import SourcePolicy

__all__ = ["ArrivalStream", "SourceSimulation", "simulate_sources"]

MODELS = ("deterministic", "stochastic")
UTILITIES = ("deterministic", "exponential")
#: Periods of arrivals drawn per call of the compiled generator.
BLOCK = 512
#: Sources with ``mu T <= 8`` and at least 16 expected arrivals a period discount them through a table of
#: ``e^{-mu T j/256}`` (2 KiB each, for the first 16384 such sources).
TABLE_MAX_DECAY, TABLE_MIN_ARRIVALS, TABLE_MAX_SOURCES = 8.0, 16.0, 16384


class ArrivalStream:
    """The utilities ``U_i(k)`` that each period brings to each source in the stochastic model (eq. (23)).

    Arrivals at source ``i`` form a Poisson process of rate ``Lambda_i``: a period brings a Poisson
    ``Lambda_i T`` number of them at independent uniform epochs, each worth its initial utility (``xi_i``, or an
    exponential of mean ``xi_i``) times ``e^{-mu_i (kT - tau)}`` at the period's end.  ``E[U_i] = u_i``.

    Each replica has its own random numbers (eight xoshiro256** streams, seeded from ``rng``; the epochs of a
    source with many arrivals come eight at a time, one from each, see ``freshcore._whittle_arrivals.h``), read
    period by period and source by source: two streams made with the same seed give the same utilities however they are
    read in blocks, so the policies of a comparison can see the same arrivals.

    Parameters
    ----------
    sources : SourceModel
    n_replicas : int
    utility : {"deterministic", "exponential"}
    rng : None, int or numpy.random.Generator
    """

    def __init__(self, sources: SourceModel, n_replicas: int, utility: str, rng: Any) -> None:
        gen = check_rng(rng, "ArrivalStream")
        self._streams = gen.integers(1, 2**63, size=(n_replicas, 32), dtype=np.uint64)   # eight states a replica
        self._lam_t = np.ascontiguousarray(sources.arrival_rate * sources.period)
        self._mut, self._xi = sources._mut, sources.utility
        self._exponential = utility == "exponential"
        self._n = len(sources)
        # e^{-mu T j/256} for the compiled generator's sources with many arrivals a period (a property of the
        # source, not of the draw: the same bits however the periods are blocked)
        use = (sources._mut <= TABLE_MAX_DECAY) & (self._lam_t >= TABLE_MIN_ARRIVALS)
        use &= np.cumsum(use) <= TABLE_MAX_SOURCES
        self._slot = np.where(use, np.cumsum(use) - 1, -1).astype(np.int64)
        self._tables = np.exp(-np.outer(sources._mut[use], np.arange(256) / 256.0))
        if not use.any():
            self._tables = np.zeros((1, 256))

    def draw(self, n_steps: int, counts: np.ndarray | None = None) -> np.ndarray:
        """The utilities of the next ``n_steps`` periods, shape ``(n_steps, n_replicas, n_sources)``
        (``counts``, int64 of that shape, receives the numbers of arrivals)."""
        out = np.empty((n_steps, len(self._streams), self._n))
        _whittle.arrivals_kernel(self._streams, self._lam_t, self._mut, self._xi, self._exponential, self._tables,
                                 self._slot, out, counts)
        return out


class SourceSimulation:
    """The outcome of :func:`simulate_sources`.

    Attributes
    ----------
    rewards : ndarray of float64, shape (n_replicas, n_steps)
        The reward of each period: the summed states of the sources crawled in it.
    actions : ndarray of bool, shape (n_replicas, n_steps, n_sources)
        Which sources were crawled in each period.
    costs : ndarray of float64, shape (n_sources,)
        ``C``, to count the budget used.
    """

    __slots__ = ("actions", "costs", "rewards")

    def __init__(self, rewards: np.ndarray, actions: np.ndarray, costs: np.ndarray) -> None:
        self.rewards, self.actions, self.costs = rewards, actions, costs

    @property
    def replica_rewards(self) -> np.ndarray:
        """Average reward per period of each replica, shape ``(n_replicas,)``."""
        return np.asarray(self.rewards.mean(axis=1))

    @property
    def reward(self) -> float:
        """Average reward per period over all periods and replicas."""
        return float(self.rewards.mean())

    @property
    def stderr(self) -> float:
        """Standard error of :attr:`reward` across replicas (NaN with one replica)."""
        r = self.replica_rewards
        return float(r.std(ddof=1) / np.sqrt(len(r))) if len(r) > 1 else float("nan")

    @property
    def crawl_frequency(self) -> np.ndarray:
        """Fraction of the periods in which each source was crawled, shape ``(n_sources,)``."""
        return np.asarray(self.actions.mean(axis=(0, 1)))

    @property
    def budget_used(self) -> np.ndarray:
        """``sum_i C_i v_i`` in each period, shape ``(n_replicas, n_steps)``."""
        return np.asarray(self.actions @ self.costs)

    def __repr__(self) -> str:
        r, n = self.rewards.shape
        return f"SourceSimulation(n_replicas={r}, n_steps={n}, reward={self.reward:.6g})"


@cites(AVRACHENKOV_BORKAR_2018)
def simulate_sources(
    policy: SourcePolicy,
    sources: SourceModel,
    n_steps: int,
    *,
    x0: Any = None,
    model: str = "deterministic",
    utility: str = "deterministic",
    n_replicas: int = 1,
    rng: Any = None,
) -> SourceSimulation:
    """Run ``policy`` on ``sources`` for ``n_steps`` periods.

    Parameters
    ----------
    policy : SourcePolicy
        Any object with ``start(sources, n_replicas)`` and ``choose(state, age, step)``
        (:mod:`freshcore.whittle_policies`).
    sources : SourceModel
        The sources.
    n_steps : int
        Periods to run, ``>= 1``.
    x0 : array_like of shape (n_sources,) or (n_replicas, n_sources), optional
        The states at period 0 (finite, ``>= 0``); default every source just crawled: ``u``
        (deterministic), a draw of ``U`` (stochastic).
    model : {"deterministic", "stochastic"}, default="deterministic"
        ``"deterministic"``: eqs. (2)-(3) of Avrachenkov and Borkar (2018), passive ``X <- alpha X + u``,
        crawled ``X <- u``.  ``"stochastic"``: eq. (23), ``u`` replaced by the period's random utility
        ``U(k+1)`` (:class:`ArrivalStream`).
    utility : {"deterministic", "exponential"}, default="deterministic"
        Stochastic model: each arrival's initial utility is ``xi`` or an exponential of mean ``xi`` (the
        paper's two readings, SPEC section 5).
    n_replicas : int, default=1
        Independent copies of the system, run together.
    rng : None, int or numpy.random.Generator, optional
        Seed of the stochastic model's arrivals; the same seed gives every policy the same arrivals
        (common random numbers).

    Returns
    -------
    SourceSimulation
        Rewards and actions of every period; ``reward`` averages the rewards of periods ``0..n_steps-1``.

    Raises
    ------
    ValueError
        If ``n_steps`` or ``n_replicas`` is below 1, ``x0`` is negative, NaN, infinite or of the wrong shape,
        ``model`` is unknown, or the policy refuses its parameters (e.g. a budget above ``n_sources``).
    TypeError
        If ``sources`` is not a SourceModel or ``policy`` lacks ``start``/``choose``.

    Notes
    -----
    Period ``k`` (``k = 0..n_steps-1``): the policy sees ``X(k)`` and the ages, crawls the sources ``v(k)``,
    earns ``sum_i v_i(k) X_i(k)``; then ``X(k+1) = u`` where crawled and ``alpha X(k) + u`` elsewhere
    (stochastic: ``U(k+1)`` and ``alpha X(k) + U(k+1)``).

    Examples
    --------
    >>> from freshcore.whittle import SourceModel
    >>> from freshcore.whittle_policies import StaticPolicy
    >>> table1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    >>> round(simulate_sources(StaticPolicy([0]), table1, 1000).reward, 1)     # always source 1 (SPEC: 179.8)
    179.8
    """
    caller = "simulate_sources"
    src = check_sources(sources, caller)
    if not isinstance(policy, SourcePolicy):
        raise TypeError(
            f"The 'policy' parameter of {caller} must have start(sources, n_replicas) and choose(state, age, step) "
            f"methods (freshcore.whittle_policies.SourcePolicy). Got {type(policy).__name__} instead."
        )
    n_steps = check_int(n_steps, "n_steps", caller, low=1)
    n_replicas = check_int(n_replicas, "n_replicas", caller, low=1)
    check_choice(model, "model", caller, MODELS)
    check_choice(utility, "utility", caller, UTILITIES)
    n = len(src)
    stochastic = model == "stochastic"
    stream = ArrivalStream(src, n_replicas, utility, check_rng(rng, caller)) if stochastic else None
    if x0 is None:
        x = stream.draw(1)[0] if stream is not None else np.tile(src.u, (n_replicas, 1))
    else:
        x0a = check_states(x0, src, caller, name="x0")
        if x0a.ndim > 2 or (x0a.ndim == 2 and x0a.shape[0] != n_replicas):
            raise ValueError(
                f"The 'x0' parameter of {caller} must have shape ({n},) or ({n_replicas}, {n}). "
                f"Got shape {x0a.shape} instead."
            )
        x = np.array(np.broadcast_to(x0a, (n_replicas, n)))
    age = np.ones((n_replicas, n), dtype=np.int64)
    rewards = np.empty((n_replicas, n_steps))
    actions = np.empty((n_replicas, n_steps, n), dtype=bool)
    alpha, u = src.alpha, src.u
    policy.start(src, n_replicas)
    x.flags.writeable = False
    age.flags.writeable = False
    block = np.broadcast_to(u, (BLOCK, n_replicas, n))
    for k in range(n_steps):
        if stream is not None and k % BLOCK == 0:
            block = stream.draw(min(BLOCK, n_steps - k))
        u = block[k % BLOCK]
        v = np.asarray(policy.choose(x, age, k), dtype=bool)
        if v.shape != x.shape:
            raise ValueError(f"The policy's choose() returned shape {v.shape}; {caller} needs {x.shape}.")
        actions[:, k] = v
        rewards[:, k] = np.where(v, x, 0.0).sum(axis=1)
        x = np.where(v, u, alpha * x + u)
        age = np.where(v, 1, age + 1)
        x.flags.writeable = False
        age.flags.writeable = False
    return SourceSimulation(rewards, actions, src.cost)
