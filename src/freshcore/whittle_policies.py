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

from freshcore import _statefile, _whittle
from freshcore._papers import AVRACHENKOV_BORKAR_2018, cites
from freshcore._statefile import Entry
from freshcore._validation import check_choice, check_int, check_scalar
from freshcore.whittle import (
    RelaxedOptimum,
    SourceModel,
    check_sources,
    check_states,
    lambert_threshold,
    relaxed_optimum,
    whittle_index,
)

__all__ = [
    "DualDescentPolicy",
    "GreedyPolicy",
    "LambertThresholdPolicy",
    "RelaxedPolicy",
    "RoundRobinPolicy",
    "SourcePolicy",
    "StaticPolicy",
    "WhittlePolicy",
    "WhittleScheduler",
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


# ---------------------------------------------------------------------------
# Relaxed controls (Section VII): the budget met on average only

#: Indices within this relative distance of the multiplier count as ties.
TIE = 1e-9


@cites(AVRACHENKOV_BORKAR_2018)
class RelaxedPolicy:
    """The exact optimum of the relaxed problem as a policy: crawl iff ``gamma(X) >= lambda*``, time-sharing.

    :func:`~freshcore.whittle.relaxed_optimum` gives ``lambda*`` and, for the sources indifferent at it, the
    share of their cycles that end at the tie; this policy crawls a source whose index exceeds ``lambda*``,
    and a source at the tie (within a relative 1e-9) in that share of its visits (evenly spread, Bresenham's
    way), so that the average budget is ``M`` and the long-run reward the relaxed optimum, an upper bound on
    every policy crawling at most ``M`` a period (Section VII of Avrachenkov and Borkar (2018); SPEC
    section 5).  The number crawled per period varies.

    Parameters
    ----------
    budget : float
        ``M > 0``, the average budget ``sum_i C_i v_i``.

    Attributes
    ----------
    optimum : RelaxedOptimum
        The relaxed optimum of the sources of the last run (None before one).
    """

    _caller = "RelaxedPolicy"

    def __init__(self, budget: Any = 1.0) -> None:
        self._m = check_scalar(budget, "budget", self._caller, low=0.0, low_inclusive=False)
        self.optimum: RelaxedOptimum | None = None

    budget = property(lambda self: self._m, doc="M, the average budget.")

    def start(self, sources: SourceModel, n_replicas: int) -> None:
        self._sources = sources
        self.optimum = relaxed_optimum(sources, self._m)
        self._credit = np.zeros((n_replicas, len(sources)))

    def choose(self, state: np.ndarray, age: np.ndarray, step: int) -> np.ndarray:
        assert self.optimum is not None
        lam, share = self.optimum.multiplier, self.optimum.share
        g = whittle_index(state, self._sources)
        tie = np.abs(g - lam) <= TIE * lam
        self._credit += np.where(tie, share, 0.0)
        spend = tie & (self._credit >= 1.0 - 1e-12)
        self._credit -= spend
        return (g > lam) & ~tie | spend


@cites(AVRACHENKOV_BORKAR_2018)
class LambertThresholdPolicy:
    """Crawl iff ``X >= x_bar(lambda)``, the threshold of eq. (21) of Avrachenkov and Borkar (2018).

    :func:`~freshcore.whittle.lambert_threshold` (lower branch of Lambert W, SPEC's extensions) at a fixed
    multiplier: the continuous-period optimum of each source's subsidised problem.

    Parameters
    ----------
    multiplier : float
        ``lambda``, finite.
    """

    _caller = "LambertThresholdPolicy"

    def __init__(self, multiplier: Any) -> None:
        self._lam = check_scalar(multiplier, "multiplier", self._caller)

    multiplier = property(lambda self: self._lam, doc="lambda.")

    def start(self, sources: SourceModel, n_replicas: int) -> None:
        self._threshold = lambert_threshold(self._lam, sources)

    def choose(self, state: np.ndarray, age: np.ndarray, step: int) -> np.ndarray:
        return np.asarray(state >= self._threshold)


@cites(AVRACHENKOV_BORKAR_2018)
class DualDescentPolicy:
    """The relaxed control with its multiplier learnt online: eq. (22) as corrected in SPEC section 5.

    Each period crawls the sources that the current multiplier ``lambda(k)`` makes active, then
    ``lambda(k+1) = lambda(k) - b(k) (M - sum_i C_i v_i(k))`` (the paper prints ``M/N`` and the wrong index;
    SPEC section 5), with ``b(k) = step / (k + 1)^0.7`` (``sum b = inf``, ``sum b^2 < inf``).  One multiplier
    per replica.

    Parameters
    ----------
    budget : float
        ``M > 0``, the average budget.
    step : float, optional
        ``b(0) > 0``; default a tenth of the largest ``u* / C``.
    multiplier : float, default=0.0
        ``lambda(0)``.
    rule : {"index", "lambert"}, default="index"
        Which sources ``lambda(k)`` makes active: ``"index"`` those with ``gamma(X) >= lambda(k)`` (the exact
        discrete relaxed policy), ``"lambert"`` those with ``X >= x_bar(lambda(k))`` of eq. (21), as the paper
        has it (Section VII of Avrachenkov and Borkar (2018)).

    Attributes
    ----------
    multiplier : ndarray of float64, shape (n_replicas,)
        The current ``lambda`` of each replica.
    """

    _caller = "DualDescentPolicy"

    def __init__(self, budget: Any = 1.0, step: Any = None, multiplier: Any = 0.0, rule: str = "index") -> None:
        self._m = check_scalar(budget, "budget", self._caller, low=0.0, low_inclusive=False)
        self._step = None if step is None else check_scalar(step, "step", self._caller, low=0.0,
                                                             low_inclusive=False)
        self._lam0 = check_scalar(multiplier, "multiplier", self._caller)
        self._rule = check_choice(rule, "rule", self._caller, ("index", "lambert"))
        self.multiplier = np.array([self._lam0])

    budget = property(lambda self: self._m, doc="M, the average budget.")

    def start(self, sources: SourceModel, n_replicas: int) -> None:
        self._sources = sources
        self._b0 = self._step if self._step is not None else 0.1 * float((sources.u_star / sources.cost).max())
        self.multiplier = np.full(n_replicas, self._lam0)

    def choose(self, state: np.ndarray, age: np.ndarray, step: int) -> np.ndarray:
        s = self._sources
        lam = self.multiplier[:, None]
        if self._rule == "index":
            v = whittle_index(state, s) >= lam
        else:
            c_lam = np.ascontiguousarray(lam * s.cost)
            x_bar = np.empty(c_lam.shape)
            _whittle.threshold_kernel(c_lam.reshape(-1), s.u_star, x_bar.reshape(-1))
            v = state >= x_bar
        self.multiplier = self.multiplier - self._b0 / (step + 1.0) ** 0.7 * (self._m - v @ s.cost)
        return np.asarray(v)


@cites(AVRACHENKOV_BORKAR_2018)
class WhittleScheduler:
    """Whittle top-M on the deterministic model at scale: each period's ``M`` sources without evaluating every
    index.

    The decisions of :class:`WhittlePolicy` driven by
    :func:`~freshcore.whittle_simulation.simulate_sources` (the ``M`` largest indices, ties to the lowest
    source index), for millions of sources.  A passive source's state is known in advance (eq. (2) of
    Avrachenkov and Borkar (2018) solved: ``X(t) = u* + (X(t0) - u*) alpha^{t - t0}``) and its index increases
    with it, so each source sleeps until the period when its index may reach a level that at least ``M``
    indices reach; only the sources near the top are evaluated each period (see ``freshcore._whittle``).

    Parameters
    ----------
    sources : SourceModel
        The sources.
    budget : int
        ``M``, sources crawled per period, ``1 <= M <= n_sources``.
    x0 : array_like of shape (n_sources,), optional
        The states at period 0 (finite, ``>= 0``); default ``u``.
    slack : int, optional
        How many indices beyond the ``M``-th the level leaves above it when it is reset (default ``M``):
        more means fewer resets and more sources evaluated each period.

    Notes
    -----
    States are computed in closed form from the last crawl (or the start), not by iterating eq. (2), so they
    may differ from :func:`~freshcore.whittle_simulation.simulate_sources`' in the last bits; decisions differ
    only if two indices agree to within those bits.  A period's reward is the correctly rounded sum of the
    crawled states (as ``math.fsum``), whatever the order in which they were selected.

    :meth:`to_dict` and :meth:`from_dict` save and restore the scheduler exactly (the continued decisions,
    rewards and states are those of an uninterrupted run); ``pickle``, ``copy.copy`` and ``copy.deepcopy`` go
    through them and give independent schedulers.

    Examples
    --------
    >>> from freshcore.whittle import SourceModel
    >>> from freshcore.whittle_policies import WhittleScheduler
    >>> table1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])
    >>> chosen, rewards = WhittleScheduler(table1, 1).run(1000)
    >>> chosen[:6, 0].tolist(), round(float(rewards.mean()), 2)
    ([0, 1, 0, 1, 0, 1], 260.3)
    """

    _caller = "WhittleScheduler"

    def __init__(self, sources: SourceModel, budget: Any, x0: Any = None, slack: Any = None) -> None:
        src = check_sources(sources, self._caller)
        m = _budget(budget, self._caller)
        _check_budget_fits(m, len(src), self._caller)
        if x0 is None:
            x = src.u
        else:
            x = check_states(x0, src, self._caller, name="x0")
            if x.ndim != 1:
                raise ValueError(f"The 'x0' parameter of {self._caller} must have shape ({len(src)},). "
                                 f"Got shape {x.shape} instead.")
        k = m if slack is None else check_int(slack, "slack", self._caller, low=0)
        self._start(src, m, np.array(x, dtype=float), min(k, len(src) - m))

    def _start(self, src: SourceModel, m: int, x0: np.ndarray, slack: int) -> None:
        self._sources, self._m, self._n, self._slack, self._x0 = src, m, len(src), slack, x0
        self._core = _whittle.TopMCore(*src._kernel_args(), src.u, x0, m, slack)

    budget = property(lambda self: self._m, doc="M, the number of sources crawled each period.")

    @property
    def time(self) -> int:
        """Periods run so far."""
        return int(self._core.time)

    def run(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The next ``n`` periods: the crawled sources (int64, shape ``(n, M)``, each row ascending) and the
        rewards (the summed states of the crawled sources, shape ``(n,)``)."""
        n = check_int(n, "n", f"{self._caller}.run", low=0)
        chosen = np.empty((n, self._m), dtype=np.int64)
        rewards = np.empty(n)
        self._core.run(n, chosen, rewards)
        chosen.sort(axis=1)
        return chosen, rewards

    def states(self) -> np.ndarray:
        """The state of every source now, shape ``(n_sources,)``."""
        out = np.empty(self._n)
        self._core.states(out)
        return out

    # -- save / restore: dict, pickle, copy ------------------------------------------------------------------
    #: The format version of :meth:`to_dict`.
    FORMAT_VERSION = 1

    def to_dict(self) -> dict[str, Any]:
        """The full state as a dict of numpy arrays and Python scalars (copies).

        Holds the sources' parameters (``arrival_rate``, ``utility``, ``decay``, ``period``, ``cost``),
        ``budget``, ``slack`` (as used: at most ``n_sources - budget``), ``time``, and per source what the
        compiled core keeps: ``x0`` (its state at period 0) and ``last_crawl`` (the last period it was crawled
        in, ``-1`` if never), from which its state now follows in closed form; ``states`` (the states now)
        is there to read and is checked against them.  :meth:`from_dict` restores it exactly: the continued
        decisions and rewards are those of an uninterrupted run.  ``pickle``, ``copy.copy`` and
        ``copy.deepcopy`` go through it, so a copy is independent of the original.
        """
        x_ref = np.empty(self._n)
        t_ref = np.empty(self._n, dtype=np.int64)
        self._core.record(x_ref, t_ref)
        s = self._sources
        return {
            "format_version": self.FORMAT_VERSION,
            "arrival_rate": np.array(s.arrival_rate), "utility": np.array(s.utility),
            "decay": np.array(s.decay), "period": float(s.period), "cost": np.array(s.cost),
            "budget": self._m, "slack": self._slack, "time": self.time,
            "x0": self._x0.copy(), "last_crawl": t_ref - 1, "states": self.states(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WhittleScheduler:
        """Rebuild a scheduler from :meth:`to_dict` output; it continues exactly where the saved one stopped.

        Every entry is checked (type, shape, range), and so are the invariants that tie them together:
        ``1 <= budget <= n_sources``, ``slack <= n_sources - budget``, every ``last_crawl`` before ``time``,
        at most ``budget`` sources last crawled in any one period and exactly ``budget`` in the period before
        ``time``, and ``states`` the states that ``x0`` and ``last_crawl`` give at ``time`` (to 1e-9 of
        ``u_star``).

        Raises
        ------
        TypeError
            If ``d`` is not a mapping.
        ValueError
            If an entry is missing, of the wrong type or shape, out of range, or inconsistent with the others;
            the message names the entry (and, for arrays, the first bad index).
        """
        caller = f"{cls.__name__}.from_dict"
        version = _statefile.check_entries(d, (Entry("format_version", "int"),), caller)["format_version"]
        if version != cls.FORMAT_VERSION:
            raise ValueError(f"The 'd' parameter of {caller} is of format version {version!r}; this freshcore "
                             f"reads version {cls.FORMAT_VERSION}.")
        n = len(np.atleast_1d(d.get("decay", ())))
        if n == 0:
            raise ValueError(f"The 'decay' entry of the dict given to {caller} must hold one decay rate per "
                             "source (at least one).")
        e = _statefile.check_entries(d, _SCHEDULER_STATE, caller, n)

        def bad(name: str, why: str) -> ValueError:
            return ValueError(f"The {name!r} entry of the dict given to {caller} {why}.")

        try:
            src = SourceModel(e["arrival_rate"], e["utility"], e["decay"], e["period"], e["cost"])
        except ValueError as exc:
            raise ValueError(f"The source entries of the dict given to {caller} do not make a SourceModel: "
                             f"{exc}") from None
        m, slack, t, last = e["budget"], e["slack"], e["time"], e["last_crawl"]
        if m > n:
            raise bad("budget", f"must be in 1..{n} (the number of sources), got {m!r}")
        if slack > n - m:
            raise bad("slack", f"must be at most n_sources - budget = {n - m}, got {slack!r}")
        late = np.flatnonzero(last >= t)
        if late.size:
            i = int(late[0])
            raise bad("last_crawl", f"must be before 'time' = {t}; last_crawl[{i}] = {int(last[i])}")
        periods, counts = np.unique(last[last >= 0], return_counts=True)
        if counts.size and counts.max() > m:
            k = int(np.argmax(counts > m))
            raise bad("last_crawl", f"has {int(counts[k])} sources last crawled in period {int(periods[k])}, "
                                    f"more than 'budget' = {m}")
        if t > 0 and (last == t - 1).sum() != m:
            raise bad("last_crawl", f"must have 'budget' = {m} sources crawled in period time - 1 = {t - 1}, "
                                    f"got {int((last == t - 1).sum())}")
        self = cls.__new__(cls)
        self._start(src, m, e["x0"], slack)
        x_ref = np.where(last >= 0, src.u, e["x0"])
        self._core.restore(x_ref, np.ascontiguousarray(last + 1), t)
        now = self.states()
        off = np.flatnonzero(~(np.abs(e["states"] - now) <= 1e-9 * src.u_star))
        if off.size:
            i = int(off[0])
            raise bad("states", f"must be the states that 'x0' and 'last_crawl' give at 'time' = {t}; "
                                f"states[{i}] = {e['states'][i].item()!r}, not {now[i].item()!r}")
        return self

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        return (type(self).from_dict, (self.to_dict(),))

    def __repr__(self) -> str:
        return f"WhittleScheduler(n_sources={self._n}, budget={self._m}, time={self.time})"


#: The entries of :meth:`WhittleScheduler.to_dict` (the arrays have one entry per source).
_SCHEDULER_STATE = (
    Entry("format_version", "int"),
    Entry("arrival_rate", "floats", low=0.0),
    Entry("utility", "floats", low=0.0),
    Entry("decay", "floats", low=0.0, open_low=True),
    Entry("period", "float", low=0.0, open_low=True),
    Entry("cost", "floats", low=0.0, open_low=True),
    Entry("budget", "int", low=1),
    Entry("slack", "int", low=0),
    Entry("time", "int", low=0),
    Entry("x0", "floats", low=0.0),
    Entry("last_crawl", "ints", low=-1),
    Entry("states", "floats", low=0.0),
)
