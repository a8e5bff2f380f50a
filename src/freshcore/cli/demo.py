"""``freshcore demo``: the whole pipeline on a built-in synthetic web.

``freshcore demo`` runs the whole pipeline on a built-in synthetic web:

1. **The web.** ``--pages`` pages (default 10 000) drawn with a fixed seed:
   change rates Δ_i log-uniform on [0.02, 5] changes per day, importance
   weights w_i from a Pareto(1.5) law (heavy-tailed, like page popularity),
   normalised to sum to 1.  The bandwidth ``--bandwidth`` defaults to N/5
   crawls per day.
2. **Learning while crawling** (the loop of Section 5 of Avrachenkov, Patil and
   Thoppe (2022)).  Crawling starts uniform (B/N per page).  In each of
   ``--epochs`` epochs every page is crawled ``--crawls`` times at its current
   rate (Poisson crawling); each crawl only tells whether the page changed
   since the previous one.  A streaming estimator (``--method``: the
   interval-aware streaming MLE by default, or their online LLN/SA/SAM)
   updates Δ̂ for all pages, and the optimal Poisson-crawling rates for Δ̂
   (eq. (10) of Avrachenkov et al. (2020)) become the next epoch's rates.
3. **Judging.** After each epoch the current rates are scored by their
   weighted freshness under the *true* Δ, beside uniform crawling and the
   optimum computed from the true Δ; at the end the same comparison is made
   for periodic crawling (SPEC §2).
4. **Scheduling** (Algorithm 1 and Section 6 of Busa-Fekete, Zimmert, György
   et al. (2025); skipped with ``--no-schedule``.)  The web also sends change
   signals (sitemap pings and the like): each page has a recall
   λ_i ~ Beta(0.25, 0.25) (the probability that a change is signalled) and
   false signals at a rate ν_i ~ U(0.1, 0.6) per day, drawn with the same seed
   (:func:`synthetic_signals`), as in their experiments.  The crawler's model
   is a ``PageModel`` of the last epoch's estimates Δ̂, the signal parameters
   taken as known, and request rates μ_i = N w_i (one request per page per day
   on average).  The discrete-event simulator
   (:func:`freshcore.policy_simulation.simulate`) then plays ``--horizon``
   days (default 40) of changes, requests and signals of the *true* web, one
   crawl per tick at the same bandwidth, against each policy of
   ``--policies`` (default all), every one on the same events:

   - ``ncis``: GREEDY-NCIS, the exact ``Scheduler`` (crawl the page of highest
     crawl value, counting its signals since the last crawl);
   - ``greedy``: the same ``Scheduler`` with signals ignored;
   - ``lds``: low-discrepancy crawling at the continuous periodic optimum's
     rates for Δ̂ (signals ignored);
   - ``round-robin``: pages in turn;
   - ``nutch``: Apache Nutch's adaptive fetch schedule.

   The table gives each policy's accuracy (the fraction of requests served
   fresh, after a 20% burn-in) ± its batch-means standard error, beside the
   analytic accuracy of the continuous optimum on the true model, with
   signals (``optimal_thresholds(...).accuracy``, their Theorem 2) and
   without (the periodic optimum of stage 3); and each policy's decisions
   per second, counting only the time spent inside the policy (its ticks
   and the signals it is sent, not the simulator's own work).  Every page
   counts as freshly crawled at time 0, so short horizons flatter every
   policy a little.

The papers cited are listed in full under References in ``help(freshcore)``.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

import numpy as np

from .. import __version__
from .._papers import BUSA_FEKETE_2025, cites
from .._validation import check_int, check_rng
from ._common import add_verbosity, plain_text, positive_float, positive_int

__all__ = ["add_parser", "synthetic_signals", "synthetic_web"]


def synthetic_web(n_pages: int, rng: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """The demo's synthetic web: ``(change_rate, importance)``.

    Parameters
    ----------
    n_pages : int
        Number of pages, ``>= 0``.
    rng : int seed or numpy.random.Generator, default=0
        Source of the draws.

    Returns
    -------
    change_rate : ndarray, shape (n_pages,)
        Δ_i, log-uniform on [0.02, 5] (changes per day).
    importance : ndarray, shape (n_pages,)
        w_i ~ Pareto(1.5) + 1, normalised to sum to 1.

    Examples
    --------
    >>> delta, w = synthetic_web(4, rng=1)
    >>> delta.shape, round(float(w.sum()), 12)
    ((4,), 1.0)
    """
    n = check_int(n_pages, "n_pages", "synthetic_web", low=0)
    gen = check_rng(rng, "synthetic_web")
    change_rate = np.exp(gen.uniform(np.log(0.02), np.log(5.0), n))
    importance = gen.pareto(1.5, n) + 1.0
    importance /= importance.sum()
    return change_rate, importance


@cites(BUSA_FEKETE_2025)
def synthetic_signals(n_pages: int, rng: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """Change signals of the demo's synthetic web: ``(recall, false_rate)``.

    Parameters
    ----------
    n_pages : int
        Number of pages, ``>= 0``.
    rng : int seed or numpy.random.Generator, default=0
        Source of the draws (the demo gives it a stream of its own, spawned
        from its seed beside :func:`synthetic_web`'s).

    Returns
    -------
    recall : ndarray, shape (n_pages,)
        λ_i ~ Beta(0.25, 0.25): the probability that a change is signalled
        (mostly near 0 or 1: pages either ping reliably or hardly at all).
    false_rate : ndarray, shape (n_pages,)
        ν_i ~ U(0.1, 0.6), false signals per day.

    Raises
    ------
    ValueError, TypeError
        If ``n_pages`` is not an integer ``>= 0`` or ``rng`` not a seed or Generator.

    Notes
    -----
    The laws of Section 6.2 of Busa-Fekete et al. (2025) (and SPEC §3's check
    instance); with these parameters :class:`freshcore.pages.PageModel` gives
    each signal the time-equivalent ``beta_i = log1p(λ_i Δ_i/ν_i)/((1 - λ_i) Δ_i)``.

    Examples
    --------
    >>> recall, false_rate = synthetic_signals(3, rng=1)
    >>> recall.shape, bool(((0 <= recall) & (recall <= 1)).all())
    ((3,), True)
    >>> bool(((0.1 <= false_rate) & (false_rate <= 0.6)).all())
    True
    """
    n = check_int(n_pages, "n_pages", "synthetic_signals", low=0)
    gen = check_rng(rng, "synthetic_signals")
    recall = gen.beta(0.25, 0.25, n)
    false_rate = gen.uniform(0.1, 0.6, n)
    return recall, false_rate


def _streams(seed: int) -> dict[str, np.random.Generator]:
    """The demo's independent random streams from its one seed (each call gives fresh ones)."""
    return {
        "web": np.random.default_rng(seed),
        "crawls": np.random.default_rng(seed + 1),
        "signals": np.random.default_rng([seed, 1]),
        "events": np.random.default_rng([seed, 2]),
    }


# --policies names and their row labels, in the table's order
_POLICIES = {
    "ncis": "GREEDY-NCIS (Scheduler)",
    "greedy": "GREEDY (no signals)",
    "lds": "LDS (optimum's rates)",
    "round-robin": "round robin",
    "nutch": "Nutch adaptive",
}


_BURN_IN = 0.2  # fraction of the simulated horizon before requests count


def _policy_list(text: str) -> tuple[str, ...]:
    names = tuple(name.strip().lower() for name in text.split(","))
    for name in names:
        if name not in _POLICIES:
            raise argparse.ArgumentTypeError(
                f"unknown policy {name!r} in {text!r}; choose a comma-separated list of {', '.join(_POLICIES)}"
            )
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a policy is listed twice in {text!r}")
    return names


_STREAMING = {
    "mle": "IntervalMLEBatch",
    "lln": "LLNBatch",
    "sa": "SABatch",
    "sam": "SAMBatch",
}


def policy_builders(known: Any, bandwidth: float) -> dict[str, Any]:
    """A constructor of each policy of ``_POLICIES`` for pages whose model the crawler knows as ``known`` (a
    PageModel) at a bandwidth: the exact scheduler with signals and without, low discrepancy at the periodic
    optimum's rates, round robin, Nutch's adaptive schedule."""
    from ..policies import LowDiscrepancy, NutchAdaptive, RoundRobin
    from ..rates import optimal_rates
    from ..schedule import Scheduler

    n = len(known)
    return {
        "ncis": lambda: Scheduler(known, bandwidth, value="exact"),
        "greedy": lambda: Scheduler(known, bandwidth, value="greedy"),
        "lds": lambda: LowDiscrepancy(optimal_rates(known.change_rate, known.importance, bandwidth, model="periodic"),
                                      bandwidth),
        "round-robin": lambda: RoundRobin(n, bandwidth),
        "nutch": lambda: NutchAdaptive(n, bandwidth),
    }


class _Timed:
    """A policy seen through a stopwatch: every attribute is forwarded, calls are timed into ``seconds``."""

    def __init__(self, policy: Any) -> None:
        self._policy = policy
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._policy, name)
        if not callable(attr):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t

        return timed


def _scheduling(
    args: argparse.Namespace, out: TextIO, delta: np.ndarray, d_hat: np.ndarray, w: np.ndarray, bandwidth: float
) -> None:
    """Stage 4 of the demo: simulate the policies on the true web, print one table."""
    from tqdm import tqdm

    from ..pages import PageModel
    from ..policy_simulation import simulate
    from ..rates import freshness, optimal_rates
    from ..thresholds import optimal_thresholds

    n = len(delta)
    recall, false_rate = synthetic_signals(n, _streams(args.seed)["signals"])
    mu = n * w  # one request per page per day on average; accuracy is weighted by requests, as freshness by w
    true = PageModel(delta, mu, recall, false_rate)
    known = PageModel(d_hat, mu, recall, false_rate)
    builders = policy_builders(known, bandwidth)
    with_signals = optimal_thresholds(true, bandwidth).accuracy
    blind = freshness(optimal_rates(delta, mu, bandwidth, model="periodic"), delta, mu, model="periodic")

    horizon = args.horizon
    print(file=out)
    print(f"  scheduling: {horizon:g} simulated days of the true web's changes, requests and signals, "
          f"{bandwidth:g} crawls/day", file=out)
    print(f"  (signal recall ~ Beta(0.25, 0.25), false signals ~ U(0.1, 0.6)/day); "
          f"the policies know Δ̂ of epoch {args.epochs}", file=out)
    print(f"  accuracy: fraction of requests served fresh in days {_BURN_IN * horizon:g}-{horizon:g}; "
          "decisions/s: time inside the policy", file=out)
    print(f"  {'policy':<32s} {'accuracy':>8s} {'± se':>7s} {'crawls':>8s} {'decisions/s':>12s}", file=out)
    print(f"  {'optimum with signals (analytic)':<32s} {with_signals:>8.4f}", file=out)
    print(f"  {'optimum, no signals (analytic)':<32s} {blind:>8.4f}", file=out)
    bar = tqdm(args.policies, desc="scheduling", unit="policy", file=sys.stderr, disable=args.quiet, leave=False)
    for name in bar:
        policy = _Timed(builders[name]())
        res = simulate(policy, true, horizon, rng=_streams(args.seed)["events"], burn_in=_BURN_IN)
        crawls = len(res.crawl_pages)
        speed = f"{crawls / policy.seconds:>12,.0f}" if policy.seconds > 0 else f"{'-':>12s}"
        bar.clear()
        print(f"  {_POLICIES[name]:<32s} {res.accuracy:>8.4f} {res.accuracy_se:>7.4f} {crawls:>8d} {speed}",
              file=out)
    bar.close()


def _demo(args: argparse.Namespace, out: TextIO) -> int:
    from tqdm import tqdm

    from .. import estimation, mle
    from ..rates import freshness, optimal_rates
    from ..synthetic_logs import simulate_crawls

    t0 = time.perf_counter()
    n = args.pages
    bandwidth = args.bandwidth if args.bandwidth is not None else n / 5.0
    floor = 1e-3 * bandwidth / n  # keep every page observed (Section 5 of Avrachenkov et al. (2022) has a floor too)
    delta, w = synthetic_web(n, _streams(args.seed)["web"])
    rng = _streams(args.seed)["crawls"]
    uniform = np.full(n, bandwidth / n)
    oracle = optimal_rates(delta, w, bandwidth, model="poisson", min_rate=floor)
    f_uniform = freshness(uniform, delta, w)
    f_oracle = freshness(oracle, delta, w)

    est: Any  # the interval-aware MLE or an online estimator of Avrachenkov et al. (2022)
    if args.method == "mle":
        est = mle.IntervalMLEBatch(n, n_bins=64)  # crawl rates from the floor to the optimum: ~30 octaves
    else:
        est = getattr(estimation, _STREAMING[args.method])(n, crawl_rate=uniform)

    print(f"freshcore {__version__} demo: {n} pages, bandwidth {bandwidth:g} crawls/day, seed {args.seed}", file=out)
    print(
        f"  web: change rates log-uniform on [0.02, 5]/day (median {np.median(delta):.3f}), "
        f"Pareto(1.5) importance weights",
        file=out,
    )
    print(
        f"  learning: {args.epochs} epochs of {args.crawls} Poisson crawls per page, estimator "
        f"{_STREAMING[args.method]}, re-optimising after each epoch",
        file=out,
    )
    print("", file=out)
    print("  weighted freshness under the true change rates (Poisson crawling; higher is better)", file=out)
    print(f"  {'epoch':>5s} {'uniform':>9s} {'adaptive':>9s} {'optimum':>9s} {'median |Δ̂-Δ|/Δ':>16s}", file=out)

    rates = uniform.copy()
    shown = {1, 2, 3, 5, args.epochs} | set(range(10, args.epochs + 1, 10))
    bar = tqdm(range(1, args.epochs + 1), desc="crawling + learning", unit="epoch", file=sys.stderr,
               disable=args.quiet, leave=False)
    for epoch in bar:
        changed, intervals = simulate_crawls(delta, rates, args.crawls, rng=rng)
        for j in range(args.crawls):
            if args.method == "mle":
                est.update(changed[:, j], intervals=intervals[:, j])
            else:
                est.update(changed[:, j], crawl_rate=rates, intervals=intervals[:, j])
        d_hat = np.maximum(est.rates, 0.0)  # SAM's momentum can dip below 0 (see SAMEstimator)
        rates = optimal_rates(d_hat, w, bandwidth, model="poisson", min_rate=floor)
        if epoch in shown:
            err = np.median(np.abs(d_hat - delta) / delta)
            bar.clear()
            print(f"  {epoch:>5d} {f_uniform:>9.4f} {freshness(rates, delta, w):>9.4f} {f_oracle:>9.4f} "
                  f"{err:>16.3f}", file=out)
    bar.close()

    print("", file=out)
    print("  periodic crawling, same final estimates", file=out)
    r_est = optimal_rates(d_hat, w, bandwidth, model="periodic", min_rate=0.0)
    r_true = optimal_rates(delta, w, bandwidth, model="periodic")
    print(f"  {'':>5s} {'uniform':>9s} {'adaptive':>9s} {'optimum':>9s}", file=out)
    print(
        f"  {'':>5s} {freshness(uniform, delta, w, model='periodic'):>9.4f} "
        f"{freshness(r_est, delta, w, model='periodic'):>9.4f} {freshness(r_true, delta, w, model='periodic'):>9.4f}",
        file=out,
    )
    if not args.no_schedule:
        _scheduling(args, out, delta, d_hat, w, bandwidth)
    print(f"\n  done in {time.perf_counter() - t0:.1f} s", file=out)
    return 0


def add_parser(sub: Any) -> None:
    """The ``demo`` subcommand and its options."""
    demo = sub.add_parser(
        "demo",
        help="estimate change rates, optimal crawl rates and schedules on a built-in synthetic web",
        description=plain_text(__doc__.split("\n\n", 1)[1]) + "\n\nexample:\n  freshcore demo --pages 2000 --epochs 10",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.set_defaults(run=_demo)
    demo.add_argument("--seed", type=int, default=0,
                      help="seed of the synthetic web, its signals, the crawls and the simulation (default 0)")
    demo.add_argument("--pages", type=positive_int, default=10_000, help="number of pages (default 10000)")
    demo.add_argument(
        "--bandwidth", type=positive_float, default=None, help="crawls per day for all pages (default pages/5)"
    )
    demo.add_argument("--epochs", type=positive_int, default=30, help="learning epochs (default 30)")
    demo.add_argument("--crawls", type=positive_int, default=20, help="crawls per page per epoch (default 20)")
    demo.add_argument(
        "--method",
        choices=tuple(_STREAMING),
        default="mle",
        help="streaming change-rate estimator (default mle: the interval-aware streaming MLE)",
    )
    demo.add_argument(
        "--horizon", type=positive_float, default=40.0,
        help="simulated days of the scheduling stage (default 40: about 15 s in all for 10000 pages)",
    )
    demo.add_argument(
        "--policies", type=_policy_list, default=tuple(_POLICIES), metavar="LIST",
        help=f"comma-separated policies of the scheduling stage (default all: {','.join(_POLICIES)})",
    )
    demo.add_argument("--no-schedule", action="store_true", help="skip the scheduling stage")
    add_verbosity(demo, "no progress bar")
