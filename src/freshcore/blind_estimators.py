"""The estimators of Li, Cline and Loguinov (2017) of a page's update process under blind sampling.

A crawler sees a page only when it downloads it.  From an age-sampling log (the page's age at every download)
:func:`m1` and :func:`m2`; from a comparison-sampling log (only whether the page changed since the previous
download) at a constant interval :func:`m3`, :func:`m4` and :func:`m5`, at random intervals :func:`g_m4` and
:func:`m6`.  M2, M4, M5 and M6 estimate the age distribution G_U of the updates (M1, M3 and G-M4 are the biased
estimators the paper compares them with); :mod:`freshcore.blind_recovery` recovers F_U and the update rate from
them.  The counts are compiled (``freshcore._blind``); the conventions are those of :mod:`freshcore.blind`, which
gathers the whole blind-sampling API.

References
----------
.. [1] X. Li, D. B. H. Cline, D. Loguinov, "Temporal update dynamics under blind sampling", IEEE/ACM
   Transactions on Networking 25(1), 2017.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from . import _blind
from ._blind_validation import _bad_age, _flags, _floats, _points, _times
from ._papers import LI_2017, cites
from ._validation import check_choice, check_int, check_scalar

__all__ = ["LatticeSamplingWarning", "g_m4", "m1", "m2", "m3", "m4", "m5", "m6"]

# m6 refuses more bins than this (1.6 GB of counts with max_bin=None; the kernels' bins are int32)
_MAX_BINS = 10**8


@cites(LI_2017)
class LatticeSamplingWarning(UserWarning):
    """The sample times lie on a lattice (every interval a multiple of one length): if the updates are lattice
    too, the samples phase-lock with them and no estimator is consistent (Assumption 1 of Li, Cline and
    Loguinov (2017))."""


_FEW_POINTS = 32  # up to this many points, one vectorised count per point beats a search per value


def _age_cdf(ages: np.ndarray, keep: np.ndarray | None, xs: np.ndarray, caller: str, total: int) -> np.ndarray:
    """The fraction of the ages (those with ``keep[j] = 1`` if given) <= each point, ``total`` of them: with few
    points the compiled pass counts #{ages <= x_m} directly and reports the first bad age in the same pass;
    else the ages are scanned, then counted per rank (those above exactly m points)."""
    if len(xs) <= _FEW_POINTS:
        counts = np.zeros(len(xs), dtype=np.int64)
        _bad_age(ages, _blind.le_counts(ages, keep, xs, counts), caller)
        return counts / total if total else np.full(len(xs), np.nan)
    _bad_age(ages, _blind.first_not_age(ages), caller)
    counts = np.zeros(len(xs) + 1, dtype=np.int64)
    _blind.rank_counts(ages, keep, xs, counts)
    return _cdf(counts, total)


def _gaps(changed: np.ndarray, k: int) -> tuple[np.ndarray, int, int, int]:
    """The histogram of the gaps between consecutive detections (index g = 1 .. k, k + 1 for longer ones),
    the number of detections, and the first and last detection (-1 without any)."""
    lanes = np.zeros((4, k + 2), dtype=np.int64)
    detections, first, last = _blind.detection_gaps(changed, lanes)
    return lanes.sum(axis=0), detections, first, last


def _cdf(counts: np.ndarray, total: float) -> np.ndarray:
    """The CDF at the points from the per-rank counts (rank m: exceeds the first m points); NaN without data."""
    if total <= 0:
        return np.full(len(counts) - 1, np.nan)
    return np.cumsum(counts[:-1]) / total


# ---------------------------------------------------------------------------
# age sampling
# ---------------------------------------------------------------------------


@cites(LI_2017)
def m1(ages: Any, changed: Any, x: Any) -> np.ndarray:
    """M1: the distribution of the ages kept when only the last sample before each detected update counts.

    From an age-sampling log (the page's age at every download, from a last-modified time, and the change
    flags), M1 keeps the age at sample j only if the page changed before sample j + 1 (the largest age seen
    in each update interval, as Cho and Garcia-Molina (2003) and Matloff (2005) proposed) and returns the
    fraction of kept ages <= each x.  It is biased unless the updates are Poisson: it measures neither F_U
    nor G_U (eq. (8) of Li, Cline and Loguinov (2017)).

    Parameters
    ----------
    ages : array-like of float >= 0, shape (n,)
        Ages A_U(s_j) at the n samples.
    changed : array-like of 0/1, shape (n - 1,)
        Q_{j,j+1}: 1 iff the page changed between sample j and j + 1.
    x : array-like of float >= 0, strictly increasing
        Where to evaluate.

    Returns
    -------
    ndarray, shape (len(x),)
        G_1(x, T) of eq. (7) (NaN if no age is kept).

    Notes
    -----
    Its limit is 1 − E[G_U(x + S) − G_U(x)] / E[G_U(S)] (eq. (8)).

    Examples
    --------
    >>> from freshcore.blind import m1
    >>> m1([0.2, 0.5, 0.1, 0.7], [0, 1, 1], [0.3, 0.6]).tolist()
    [0.5, 1.0]
    """
    caller = "m1"
    a = _floats(ages, "ages", caller)
    c = _flags(changed, caller, len(a), of="ages")
    xs = _points(x, caller)
    return _age_cdf(a, c, xs, caller, int(np.count_nonzero(c)))


@cites(LI_2017)
def m2(ages: Any, x: Any) -> np.ndarray:
    """M2: the distribution of all observed ages, a consistent estimate of the age distribution G_U.

    From an age-sampling log (the page's age at every download, from a last-modified time), M2 returns the
    fraction of ages <= each x.  Every sample counts, even several in one update interval; the estimate
    converges to G_U (Theorem 5 of Li, Cline and Loguinov (2017)), from which
    :func:`~freshcore.blind_recovery.update_distribution` recovers F_U and μ.

    Parameters
    ----------
    ages : array-like of float >= 0, shape (n,)
        Ages A_U(s_j) at the samples.
    x : array-like of float >= 0, strictly increasing
        Where to evaluate.

    Returns
    -------
    ndarray, shape (len(x),)
        G_2(x, T) of eq. (29).

    Examples
    --------
    >>> from freshcore.blind import m2
    >>> m2([0.2, 0.5, 0.1, 0.7], [0.3, 0.6]).tolist()
    [0.5, 0.75]
    """
    caller = "m2"
    a = _floats(ages, "ages", caller)
    xs = _points(x, caller)
    return _age_cdf(a, None, xs, caller, len(a))


# ---------------------------------------------------------------------------
# comparison sampling at a constant interval
# ---------------------------------------------------------------------------

_CONSTANT_LOG = """changed : array-like of 0/1, shape (n - 1,)
    Q_{j,j+1} of n samples Δ apart.
n_points : int >= 1
    Evaluate at x_n = nΔ, n = 1 .. n_points."""


_F = TypeVar("_F", bound=Callable[..., Any])


def _constant_log(func: _F) -> _F:
    """Decorator: the parameters of M3-M5 (a comparison-sampling log at a constant interval) in the docstring,
    at ``{constant log}``."""
    if func.__doc__ is not None:  # python -OO
        func.__doc__ = func.__doc__.replace("{constant log}", _CONSTANT_LOG.replace("\n", "\n    "))
    return func


def _constant_gaps(changed: Any, n_points: int, caller: str) -> tuple[np.ndarray, int, np.ndarray, int, int, int]:
    """M3-M5's arguments checked: the flags, the number of points, and the gaps between detections with their
    number, first and last (:func:`_gaps`)."""
    c = _flags(changed, caller)
    k = check_int(n_points, "n_points", caller, low=1)
    return (c, k, *_gaps(c, k))


@cites(LI_2017)
@_constant_log
def m3(changed: Any, n_points: int) -> np.ndarray:
    """M3: the distribution of the distances between consecutive detected updates, at a constant interval Δ.

    From a comparison-sampling log at constant interval Δ (only whether the page changed between consecutive
    downloads), M3 takes the number of downloads between two consecutive detections, times Δ, as a sample of
    the update interval (the "create-based method" of earlier work) and returns the fraction of these
    samples <= nΔ.  It is biased unless the updates are Poisson: its limit is a discretised M1 (Theorem 6 of
    Li, Cline and Loguinov (2017)), with mean E[D_3] = Δ / G_U(Δ) (Theorem 7).

    Parameters
    ----------
    {constant log}

    Returns
    -------
    ndarray, shape (n_points,)
        G_3(x_n, T) of eq. (35) (NaN with fewer than two detections).

    Examples
    --------
    >>> from freshcore.blind import m3
    >>> m3([1, 0, 0, 1, 1, 0, 1], 3).tolist()
    [0.3333333333333333, 0.6666666666666666, 1.0]
    """
    hist = _constant_gaps(changed, n_points, "m3")[2]
    return _cdf(hist[1:], hist.sum())


@cites(LI_2017)
@_constant_log
def m4(changed: Any, n_points: int) -> np.ndarray:
    """M4: the distribution of the rounded-up ages at every sample, at a constant interval Δ; Δ-consistent
    for the age distribution G_U.

    From a comparison-sampling log at constant interval Δ, M4 gives every download the time since the
    download after which the last change was detected (Δ if the page changed since the previous download,
    else the previous value + Δ; eq. (40)), an upper rounding of the page's age, and returns the fraction of
    these values <= nΔ.  It converges to G_U(nΔ) (Theorem 8 of Li, Cline and Loguinov (2017)).  Samples before
    the first detection (whose age is unknown) are dropped.

    Parameters
    ----------
    {constant log}

    Returns
    -------
    ndarray, shape (n_points,)
        G_4(x_n, T) (NaN if the page never changed).

    Examples
    --------
    >>> from freshcore.blind import m4
    >>> m4([0, 1, 0, 0, 1, 0], 3).tolist()
    [0.4, 0.8, 1.0]
    """
    # a run of L samples from a detection to the next adds one sample to each of the values 1 .. L (eq. (40)),
    # so the count of value r is #{gaps >= r} plus 1 if the last run is that long
    c, k, hist, detections, first, last = _constant_gaps(changed, n_points, "m4")
    if not detections:
        return np.full(k, np.nan)
    r = np.arange(1, k + 1)
    runs = hist[::-1].cumsum()[::-1][1:k + 1] + (r <= len(c) - last)
    return np.cumsum(runs) / (len(c) - first)


@cites(LI_2017)
@_constant_log
def m5(changed: Any, n_points: int) -> np.ndarray:
    """M5: M3's samples capped at nΔ, summed and divided by the window; Δ-consistent for G_U with M3's few
    samples.

    From a comparison-sampling log at constant interval Δ, M5 takes M3's samples (the distance between
    consecutive detections), passes each through min(nΔ, ·), and divides their sum by the length of the
    window T = (n − 1)Δ (eq. (44) of Li, Cline and Loguinov (2017)).  It converges to G_U(nΔ) (Theorem 9)
    while keeping only one sample per detected update.  As SPEC §6 settles, the first detection (whose
    distance to the previous one is unknown) is dropped and the sum is divided by T, not by the number of
    detections.

    Parameters
    ----------
    {constant log}

    Returns
    -------
    ndarray, shape (n_points,)
        G_5(x_n, T).

    Examples
    --------
    >>> from freshcore.blind import m5
    >>> m5([1, 0, 0, 1, 1, 0, 1], 3).tolist()
    [0.42857142857142855, 0.7142857142857143, 0.8571428571428571]
    """
    c, k, hist = _constant_gaps(changed, n_points, "m5")[:3]
    # sum over gaps g of min(n, g) = sum_{m = 1..n} #{g >= m}
    at_least = hist[::-1].cumsum()[::-1]  # at_least[m] = #{g >= m}
    return np.cumsum(at_least[1:k + 1]) / len(c)


# ---------------------------------------------------------------------------
# comparison sampling at random intervals
# ---------------------------------------------------------------------------


@cites(LI_2017)
def g_m4(times: Any, changed: Any, x: Any) -> np.ndarray:
    """G-M4: M4 at random sampling intervals; biased (Fig. 14 of Li, Cline and Loguinov (2017)).

    From a comparison-sampling log at arbitrary download times, G-M4 rounds the page's age at download j up
    to s_j − s_j^*, where s_j^* is the download just before the last detected change (eq. (50)), and returns
    the fraction of these values <= each x.  With a constant interval it is M4; with random intervals the
    rounding error varies from sample to sample and the result is biased even for Poisson updates.  Samples
    before the first detection are dropped.

    Parameters
    ----------
    times : array-like of float, shape (n,)
        Sample times, strictly increasing.
    changed : array-like of 0/1, shape (n - 1,)
        Q_{j,j+1}.
    x : array-like of float >= 0, strictly increasing
        Where to evaluate.

    Returns
    -------
    ndarray, shape (len(x),)
        The fraction of G-M4's values <= x (NaN if the page never changed).

    Examples
    --------
    >>> from freshcore.blind import g_m4
    >>> g_m4([0.0, 0.5, 2.0, 2.5, 4.0], [0, 1, 0, 1], [1.0, 2.0]).tolist()
    [0.0, 1.0]
    """
    caller = "g_m4"
    t = _times(times, caller)
    c = _flags(changed, caller, len(t))
    xs = _points(x, caller)
    counts = np.zeros(len(xs) + 1, dtype=np.int64)
    total = _blind.gm4_counts(t, c, xs, counts)
    return _cdf(counts, total)


@cites(LI_2017)
def m6(times: Any, changed: Any, bin_width: float, max_bin: int | None = None, *, method: str = "fast",
       return_counts: bool = False) -> Any:
    """M6: the fraction of pairs of samples a distance y apart between which the page changed; consistent for
    the age distribution G_U at random sampling intervals.

    From a comparison-sampling log at arbitrary download times, M6 considers every pair of downloads i < j,
    puts it in the bin n of its distance ((n − 1)h < s_j − s_i <= nh), and returns, per bin, the fraction of
    pairs between which the page changed (Q_ij = 1: some flag between them is 1), eqs. (51)-(54) of Li,
    Cline and Loguinov (2017).  Since Q_ij = 1 iff the page's residual at s_i is below s_j − s_i, this
    estimates G_U at distance nh (Theorem 10: exactly as h → 0 with a sampler that reaches every distance,
    e.g. exponential or uniform on [0, 2/λ] intervals).

    Parameters
    ----------
    times : array-like of float, shape (n,)
        Sample times, strictly increasing.
    changed : array-like of 0/1, shape (n - 1,)
        Q_{j,j+1}: 1 iff the page changed between sample j and j + 1.
    bin_width : float > 0
        h.
    max_bin : int >= 1, optional
        The largest bin B (distances up to B h); default: every pair (B h >= s_n − s_1).
    method : {"fast", "pairs"}, default "fast"
        ``"pairs"``: the paper's loop over all n(n − 1)/2 pairs; ``"fast"``: only the pairs no more than
        B h apart, O(n k) for k samples per window (SPEC §6).  Both give the same counts.
    return_counts : bool, default False
        Also return the pair counts W(y_n) and the changed-pair counts Z(y_n).

    Returns
    -------
    estimate : ndarray, shape (B,)
        G_6(y_n) = Z(y_n)/W(y_n) at y_n = nh, n = 1 .. B (NaN where no pair falls in a bin).
    pairs, changed_pairs : ndarray of int64, shape (B,)
        W and Z, with ``return_counts``.

    Warns
    -----
    LatticeSamplingWarning
        If every sampling interval is a multiple of the shortest one (a lattice sampler, e.g. constant):
        then the samples can phase-lock with lattice updates (Assumption 1), and M6 offers nothing over M4.

    Notes
    -----
    At a fixed h the estimate is a renewal-weighted average of G_U over the bin ((n − 1)h, nh] (eq. (62);
    SPEC §6), not G_U(nh): with Poisson sampling the weight is flat (pass ``averages=True`` to
    :func:`~freshcore.blind_recovery.update_distribution`).  The bin of a distance d is ⌈d · (1/h)⌉ in double
    precision, which differs from ⌈d/h⌉ only within an ulp of a bin edge.

    Examples
    --------
    >>> from freshcore.blind import m6
    >>> m6([0.0, 0.3, 1.1, 1.5, 2.6], [0, 1, 0, 1], 1.0, 2).tolist()
    [0.3333333333333333, 1.0]
    """
    caller = "m6"
    t = _times(times, caller)
    c = _flags(changed, caller, len(t))
    h = check_scalar(bin_width, "bin_width", caller, low=0.0, low_inclusive=False)
    check_choice(method, "method", caller, ("fast", "pairs"))
    span = float(t[-1] - t[0])
    if max_bin is None:
        b = max(1, math.ceil(span * (1.0 / h)))  # the bin of the longest distance
        if b > _MAX_BINS:
            raise ValueError(f"The 'max_bin' parameter of m6 is None, which would need {b} bins (the whole span "
                             f"{span!r} in bins of {h!r}); pass max_bin <= {_MAX_BINS}.")
    else:
        b = check_int(max_bin, "max_bin", caller, low=1, high=_MAX_BINS)
    step = _blind.lattice_step(t, 1e-9)
    if step > 0.0:
        warnings.warn(f"The 'times' parameter of m6: every sampling interval is a multiple of {step!r} (a lattice "
                      "sampler). If the updates are lattice too the samples phase-lock with them (Assumption 1 of "
                      "Li, Cline and Loguinov (2017)) and M6 is not consistent; with a lattice sampler M6 offers "
                      "nothing over M4.", LatticeSamplingWarning, stacklevel=2)
    # per bin 1 .. b the changed pairs and all pairs; row b + 1 gathers the pairs farther apart
    counts = np.zeros((b + 2, 2), dtype=np.int64)
    _blind.m6_counts(t, c, h, b, counts, method == "fast")
    updated, pairs = counts[1:b + 1, 0], counts[1:b + 1, 1]
    est = np.divide(updated, pairs, out=np.full(b, np.nan), where=pairs > 0)
    return (est, pairs, updated) if return_counts else est
