"""Change-indicating signals: simulated signal logs and the fit of the signal model.

The model is that of Section 3 of Busa-Fekete, Zimmert, György et al. (2025),
the fit that of their Appendix E.

Model (SPEC §3).  Per page, changes form a Poisson process
of rate Delta; each change emits a true change-indicating signal (CIS) with
probability lambda (the recall), independently; false signals form an
independent Poisson process of rate nu.  Derived: the signal rate
gamma = lambda Delta + nu, the unsignalled change rate alpha = (1 - lambda) Delta
and alpha beta = -log(nu / gamma) >= 0.  Between two crawls separated by tau
with n signals received,

    P(no change | tau, n) = exp(-alpha tau - alpha beta n)            (*)

(each of the n signals is false with probability nu/gamma, independently, and
no unsignalled change happened with probability e^{-alpha tau}).

Identities used to turn the fitted (alpha, alpha beta) into precision and recall:

* precision = lambda Delta / gamma = 1 - nu / gamma = 1 - e^{-alpha beta}
  (needs neither gamma nor Delta);
* lambda Delta = gamma precision and Delta = alpha + lambda Delta, so
  recall = lambda = 1 - alpha / Delta = gamma precision / (alpha + gamma precision);
* nu = gamma e^{-alpha beta}.

gamma is estimated as sum(n) / sum(tau) per page (the crawl intervals tile the
observed time, so this is the Poisson MLE of the signal rate, Appendix E of
Busa-Fekete et al. (2025): "we can estimate ... the rate of the CIS gamma with
good accuracy based on the frequency of logged events").

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from . import _signals
from ._papers import BUSA_FEKETE_2025, cites
from ._validation import _index_str, check_array, check_binary, check_choice, check_int, check_rng, check_scalar

__all__ = [
    "NaiveSignalModel",
    "SignalLog",
    "SignalModelFit",
    "fit_signal_model",
    "naive_signal_model",
    "simulate_signal_log",
]

SCHEDULES = ("poisson", "periodic")


class SignalLog(NamedTuple):
    """A crawl log with signal counts, arrays of shape (n_pages, n_crawls).

    ``elapsed[i, j]`` is the time between crawl j - 1 and crawl j of page i,
    ``n_signals[i, j]`` the number of signals received in that interval (int64)
    and ``changed[i, j]`` (uint8) is 1 iff the page changed in it.  Entries
    past a ``horizon`` are zero padding (0, 0, 0), which carry no likelihood.
    """

    elapsed: np.ndarray
    n_signals: np.ndarray
    changed: np.ndarray


@dataclass(frozen=True)
class SignalModelFit:
    """Result of :func:`fit_signal_model`; every field is an array of shape (n_pages,).

    Attributes
    ----------
    alpha : unsignalled change rate alpha = (1 - lambda) Delta (MLE).
    alpha_beta : alpha beta = -log(nu / gamma) (MLE).
    signal_rate : gamma, sum(n_signals) / sum(elapsed).
    change_rate : Delta, as given or estimated as alpha + gamma precision.
    precision : 1 - e^{-alpha beta}.
    recall : lambda = 1 - alpha / Delta, clipped to [0, 1].
    false_rate : nu = gamma e^{-alpha beta}.
    clipped : True where alpha or alpha beta reached its upper bound
        (no finite maximiser, see :func:`fit_signal_model`).
    n_iter : Newton iterations used per page.
    """

    alpha: np.ndarray
    alpha_beta: np.ndarray
    signal_rate: np.ndarray
    change_rate: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    false_rate: np.ndarray
    clipped: np.ndarray
    n_iter: np.ndarray


class NaiveSignalModel(NamedTuple):
    """Result of :func:`naive_signal_model`: arrays of shape (n_pages,), NaN where undefined."""

    precision: np.ndarray
    recall: np.ndarray


def _rate(x: Any, name: str, caller: str, n: int, *, high: float | None = None, positive: bool = False) -> np.ndarray:
    if np.ndim(x) == 0:
        v = check_scalar(x, name, caller, low=0.0, low_inclusive=not positive, high=high)
        return np.full(n, v)
    arr = check_array(x, name, caller, ndim=1, low=0.0, low_inclusive=not positive, high=high)
    if arr.shape[0] != n:
        raise ValueError(
            f"The {name!r} parameter of {caller} must be a number or have one entry per page "
            f"({n}). Got {arr.shape[0]} entries instead."
        )
    return arr


def simulate_signal_log(
    change_rate: Any, recall: Any, false_rate: Any, crawl_rate: Any, n_crawls: int, *, schedule: str = "poisson",
    horizon: float | None = None, rng: Any = None,
) -> SignalLog:
    """Simulate crawl logs with change-indicating signals, exactly, vectorised over pages.

    Parameters
    ----------
    change_rate : array-like of float >= 0, shape (n_pages,)
        Change rate Delta of each page.
    recall : float or array-like of float in [0, 1], shape (n_pages,)
        Probability lambda that a change emits a (true) signal.
    false_rate : float or array-like of float >= 0, shape (n_pages,)
        Rate nu of the false signals.
    crawl_rate : float or array-like of float > 0, shape (n_pages,)
        Crawl rate p of each page.
    n_crawls : int >= 1
        Number of crawl intervals per page (the maximum if ``horizon`` is given).
    schedule : {"poisson", "periodic"}, default "poisson"
        ``"poisson"``: intervals tau ~ Exp(p); ``"periodic"``: tau = 1/p.
    horizon : float > 0 or None, default None
        If given, crawls after this time are dropped: their entries become
        zero padding (elapsed 0, no signal, unchanged), which
        :func:`fit_signal_model` and :func:`naive_signal_model` ignore.
    rng : None, int or numpy.random.Generator
        Source of randomness (as in :func:`freshcore.synthetic_logs.simulate_crawls`).

    Returns
    -------
    SignalLog
        ``(elapsed, n_signals, changed)``, each of shape (n_pages, n_crawls).

    Notes
    -----
    Per interval of length tau, independently (Poisson processes have
    independent increments): the number of changes N ~ Poisson(Delta tau);
    the true signals are their binomial thinning, S ~ Binomial(N, lambda);
    false signals F ~ Poisson(nu tau).  ``n_signals = S + F`` and
    ``changed = [N > 0]``, so that eq. (*) of the module docstring (SPEC §3)
    holds exactly.

    Examples
    --------
    >>> from freshcore.signals import simulate_signal_log
    >>> log = simulate_signal_log([0.5, 0.0], 0.8, 0.1, 1.0, 5, schedule="periodic", rng=0)
    >>> log.elapsed.shape, log.n_signals.dtype, log.changed[1].tolist()
    ((2, 5), dtype('int64'), [0, 0, 0, 0, 0])
    """
    caller = "simulate_signal_log"
    delta = check_array(change_rate, "change_rate", caller, ndim=1, low=0.0)
    n = delta.shape[0]
    lam = _rate(recall, "recall", caller, n, high=1.0)
    nu = _rate(false_rate, "false_rate", caller, n)
    p = _rate(crawl_rate, "crawl_rate", caller, n, positive=True)
    k = check_int(n_crawls, "n_crawls", caller, low=1)
    check_choice(schedule, "schedule", caller, SCHEDULES)
    h = None if horizon is None else check_scalar(horizon, "horizon", caller, low=0.0, low_inclusive=False)
    gen = check_rng(rng, caller)
    if schedule == "poisson":
        tau = gen.exponential(1.0, size=(n, k)) / p[:, None]
    else:
        tau = np.repeat((1.0 / p)[:, None], k, axis=1)
    if h is not None:
        keep = np.cumsum(tau, axis=1) <= h
        tau = np.where(keep, tau, 0.0)
    n_changes = gen.poisson(delta[:, None] * tau)
    true_signals = gen.binomial(n_changes, lam[:, None])
    false_signals = gen.poisson(nu[:, None] * tau)
    n_signals = np.ascontiguousarray(true_signals + false_signals, dtype=np.int64)
    changed = np.ascontiguousarray(n_changes > 0, dtype=np.uint8)
    return SignalLog(np.ascontiguousarray(tau), n_signals, changed)


def _counts(x: Any, name: str, caller: str) -> np.ndarray:
    """Non-negative integer counts as float64 (exact below 2^53), naming the first bad index."""
    arr = check_array(x, name, caller, ndim=2, low=0.0)
    frac = arr != np.floor(arr)
    if frac.any():
        i = int(np.flatnonzero(frac.ravel())[0])
        raise ValueError(
            f"The {name!r} parameter of {caller} must contain non-negative integers; "
            f"{_index_str(name, i, arr.shape)} = {arr.ravel()[i].item()!r}."
        )
    return arr


def _log_arrays(elapsed: Any, n_signals: Any, changed: Any, caller: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tau = check_array(elapsed, "elapsed", caller, ndim=2, low=0.0)
    cnt = _counts(n_signals, "n_signals", caller)
    z = check_binary(changed, "changed", caller, ndim=2)
    if not (tau.shape == cnt.shape == z.shape):
        raise ValueError(
            f"The array parameters of {caller} must have the same shape: 'elapsed' has {tau.shape}, "
            f"'n_signals' has {cnt.shape}, 'changed' has {z.shape}."
        )
    return tau, cnt, z


@cites(BUSA_FEKETE_2025)
def fit_signal_model(
    elapsed: Any, n_signals: Any, changed: Any, *, change_rate: Any = None, alpha_upper: Any = None,
    alpha_beta_upper: Any = 40.0, max_iter: int = 100,
) -> SignalModelFit:
    """Maximum-likelihood fit of (alpha, alpha beta) per page from a crawl log with signal counts.

    Parameters
    ----------
    elapsed : array-like of float >= 0, shape (n_pages, n_crawls)
        Elapsed time tau between consecutive crawls.
    n_signals : array-like of non-negative integers, shape (n_pages, n_crawls)
        Signals received in each interval.
    changed : array-like of 0/1, shape (n_pages, n_crawls)
        Whether the page changed in each interval.  A change in an interval
        with no elapsed time and no signal is impossible under the model and
        rejected; all-zero entries (0, 0, 0) are padding and carry no information.
    change_rate : None, float > 0 or array-like of float > 0, shape (n_pages,)
        Known change rate Delta, used for recall = 1 - alpha/Delta.  If None,
        Delta is estimated from the same log as alpha + gamma precision.
    alpha_upper : None, float > 0 or array-like, shape (n_pages,)
        Upper bound of alpha; default 1000 / (mean elapsed time of the page).
    alpha_beta_upper : float > 0, default 40
        Upper bound of alpha beta (precision 1 - e^{-40} = 1 in double precision).
    max_iter : int >= 1, default 100
        Newton iterations per page.

    Returns
    -------
    SignalModelFit
        alpha, alpha_beta, signal_rate, change_rate, precision, recall,
        false_rate, clipped, n_iter (arrays of shape (n_pages,)).

    Notes
    -----
    The log-likelihood of (a, b) = (alpha, alpha beta) >= 0, from eq. (*)
    (Appendix E of Busa-Fekete et al. (2025), SPEC §3),

        L(a, b) = sum_{unchanged} (-a tau - b n) + sum_{changed} log(1 - e^{-a tau - b n}),

    is concave; it is maximised per page by a compiled projected Newton method
    with an active set on [0, alpha_upper] x [0, alpha_beta_upper] (see
    ``freshcore._signals``).  Boundary cases, all documented by the bounds:

    * no change observed: the maximiser is (0, 0), so precision = 0,
      alpha = 0 and (if Delta is estimated) Delta = gamma * 0 = 0, recall = 0;
    * no unchanged interval with a signal while some changed one has one:
      L increases in b without bound (perfect precision); b is clipped to
      ``alpha_beta_upper`` and ``clipped`` is set;
    * every interval changed: no finite alpha; clipped to ``alpha_upper``;
    * no signal in any changed interval: b does not enter the changed terms,
      so b = 0 (precision 0) is the maximiser.

    recall is 1 - alpha/Delta clipped to [0, 1] (with an estimated Delta it
    is gamma precision / (alpha + gamma precision), in [0, 1] by construction,
    and 0 when Delta = 0).

    Appendix E of Busa-Fekete et al. (2025) writes
    z ~ Ber(exp(-<(alpha, alpha beta), (tau, n)>)) with z "indicating whether
    there has been a change"; exp(...) is the probability of *no* change
    (SPEC §3, and eq. (*) above), so it is 1 - z that has that law, which is
    the likelihood used here.

    Examples
    --------
    >>> from freshcore.signals import fit_signal_model, simulate_signal_log
    >>> log = simulate_signal_log([0.2], 0.6, 0.05, 0.4, 20000, rng=1)
    >>> fit = fit_signal_model(*log)
    >>> precision = 0.6 * 0.2 / (0.6 * 0.2 + 0.05)
    >>> bool(abs(fit.precision[0] - precision) < 0.03), bool(abs(fit.recall[0] - 0.6) < 0.03)
    (True, True)
    """
    caller = "fit_signal_model"
    tau, cnt, z = _log_arrays(elapsed, n_signals, changed, caller)
    n = tau.shape[0]
    impossible = (z == 1) & (tau == 0.0) & (cnt == 0.0)
    if impossible.any():
        i = int(np.flatnonzero(impossible.ravel())[0])
        raise ValueError(
            f"The 'changed' parameter of {caller} flags a change in an interval with elapsed = 0 and "
            f"n_signals = 0, which has probability 0 under the model; {_index_str('changed', i, z.shape)} = 1."
        )
    delta = None if change_rate is None else _rate(change_rate, "change_rate", caller, n, positive=True)
    total_tau = tau.sum(axis=1)
    if alpha_upper is None:
        used = np.count_nonzero(tau > 0.0, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            a_hi = np.where(total_tau > 0.0, 1000.0 * used / total_tau, 1.0)
    else:
        a_hi = _rate(alpha_upper, "alpha_upper", caller, n, positive=True)
    b_hi = np.full(n, check_scalar(alpha_beta_upper, "alpha_beta_upper", caller, low=0.0, low_inclusive=False))
    iters = check_int(max_iter, "max_iter", caller, low=1)
    alpha = np.empty(n)
    alpha_beta = np.empty(n)
    n_iter = np.empty(n, dtype=np.intc)
    _signals.fit_rows(tau, cnt, z, a_hi, b_hi, alpha, alpha_beta, n_iter, iters)
    clipped = (alpha >= a_hi) | (alpha_beta >= b_hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.where(total_tau > 0.0, cnt.sum(axis=1) / total_tau, 0.0)
        precision = -np.expm1(-alpha_beta)
        false_rate = gamma * np.exp(-alpha_beta)
        if delta is None:
            delta = alpha + gamma * precision
            recall = np.where(delta > 0.0, gamma * precision / delta, 0.0)
        else:
            recall = np.clip(1.0 - alpha / delta, 0.0, 1.0)
    return SignalModelFit(alpha, alpha_beta, gamma, delta, precision, recall, false_rate, clipped, n_iter)


@cites(BUSA_FEKETE_2025)
def naive_signal_model(elapsed: Any, n_signals: Any, changed: Any) -> NaiveSignalModel:
    """Naive interval-counting precision and recall: the biased baseline of Appendix E of Busa-Fekete et al. (2025).

    Parameters
    ----------
    elapsed, n_signals, changed : array-like, shape (n_pages, n_crawls)
        As for :func:`fit_signal_model` (``elapsed`` is only validated).

    Returns
    -------
    NaiveSignalModel
        ``precision`` = #(intervals with a signal and a change) / #(intervals with a signal),
        ``recall`` = #(intervals with a signal and a change) / #(intervals with a change);
        NaN where the denominator is 0.

    Notes
    -----
    The crawl intervals stand in for the unobserved change sequence.  Appendix E
    of Busa-Fekete et al. (2025) prints the recall's denominator for both
    formulas; precision is "the proportion of time there is a change following
    a signal" (their Section 2), so its denominator is the signalled
    intervals.  Both are biased: a false signal in an interval that also holds
    an unsignalled change counts as a true one (precision too high), and so
    does a changed interval whose only signals are false (recall too high),
    while several changes in one interval count once.

    Examples
    --------
    >>> from freshcore.signals import naive_signal_model
    >>> est = naive_signal_model([[1.0, 1.0, 1.0, 1.0]], [[1, 0, 2, 0]], [[1, 1, 0, 0]])
    >>> est.precision.tolist(), est.recall.tolist()
    ([0.5], [0.5])
    """
    caller = "naive_signal_model"
    _, cnt, z = _log_arrays(elapsed, n_signals, changed, caller)
    signalled = cnt > 0.0
    both = np.count_nonzero(signalled & (z == 1), axis=1).astype(float)
    n_sig = np.count_nonzero(signalled, axis=1)
    n_chg = np.count_nonzero(z, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(n_sig > 0, both / n_sig, np.nan)
        recall = np.where(n_chg > 0, both / n_chg, np.nan)
    return NaiveSignalModel(precision, recall)
