"""The ``freshcore`` command.

``freshcore demo`` runs the whole pipeline on a built-in synthetic web:

1. **The web.** ``--pages`` pages (default 10 000) drawn with a fixed seed:
   change rates Δ_i log-uniform on [0.02, 5] changes per day, importance
   weights w_i from a Pareto(1.5) law (heavy-tailed, like page popularity),
   normalised to sum to 1.
2. **Learning.** Every page is crawled at the uniform rate B/N (Poisson
   crawling, ``--crawls`` crawls per page, default 100); each crawl tells only
   whether the page changed since the last one.  Δ_i is estimated from that
   log (``--method``, default the maximum-likelihood estimator, eq. (16) of 000).
3. **Deciding.** Optimal crawl rates under the bandwidth ``--bandwidth``
   (crawls per day, default N/5) are computed from the estimated Δ and from the
   true Δ, for Poisson and for periodic crawling (SPEC §2), and compared with
   uniform crawling by their weighted freshness under the *true* Δ.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from . import __version__

__all__ = ["main", "synthetic_web"]


def synthetic_web(n_pages: int, seed: int = 0):
    """The demo's synthetic web: ``(change_rates, weights)``.

    Parameters
    ----------
    n_pages : int
        Number of pages.
    seed : int
        Seed of the ``numpy.random.Generator`` (PCG64) that draws them.

    Returns
    -------
    change_rates : ndarray, shape (n_pages,)
        Δ_i, log-uniform on [0.02, 5] (changes per day).
    weights : ndarray, shape (n_pages,)
        Importance w_i ~ Pareto(1.5) + 1, normalised to sum to 1.

    Examples
    --------
    >>> delta, w = synthetic_web(4, seed=1)
    >>> delta.shape, round(float(w.sum()), 12)
    ((4,), 1.0)
    """
    rng = np.random.default_rng(seed)
    change_rates = np.exp(rng.uniform(np.log(0.02), np.log(5.0), n_pages))
    weights = rng.pareto(1.5, n_pages) + 1.0
    weights /= weights.sum()
    return change_rates, weights


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {v}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (v > 0 and np.isfinite(v)):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return v


def _demo(args, out) -> int:
    from tqdm import tqdm

    from .estimation import estimate_rates
    from .rates import freshness, optimal_rates
    from .simulation import simulate_crawls

    t0 = time.perf_counter()
    n = args.pages
    bandwidth = args.bandwidth if args.bandwidth is not None else n / 5.0
    delta, w = synthetic_web(n, args.seed)
    uniform = np.full(n, bandwidth / n)
    rng = np.random.default_rng(args.seed + 1)

    print(f"freshcore {__version__} demo: {n} pages, bandwidth {bandwidth:g} crawls/day, seed {args.seed}", file=out)
    print(
        f"  web: change rates log-uniform on [0.02, 5]/day (median {np.median(delta):.3f}), "
        f"Pareto(1.5) importance weights",
        file=out,
    )
    print(f"  learning: {args.crawls} Poisson crawls per page at the uniform rate, estimator {args.method!r}", file=out)

    # The long part: simulate the crawl log and estimate, in chunks of pages.
    est = np.empty(n)
    chunk = max(1, min(n, 2000))
    starts = range(0, n, chunk)
    bar = tqdm(starts, desc="crawling + estimating", unit="chunk", file=sys.stderr, disable=args.quiet)
    for s in bar:
        e = min(n, s + chunk)
        changed, intervals = simulate_crawls(delta[s:e], uniform[s:e], args.crawls, rng=rng)
        est[s:e] = estimate_rates(changed, intervals, crawl_rate=uniform[s:e], method=args.method)
    rel = np.abs(est - delta) / delta
    print(
        f"  estimation error |Δ̂-Δ|/Δ: median {np.median(rel):.3f}, 90th percentile {np.quantile(rel, 0.9):.3f}",
        file=out,
    )

    rows = []
    for model in ("poisson", "periodic"):
        r_est = optimal_rates(est, w, bandwidth, model=model)
        r_true = optimal_rates(delta, w, bandwidth, model=model)
        rows.append(
            (
                model,
                freshness(uniform, delta, w, model=model),
                freshness(r_est, delta, w, model=model),
                freshness(r_true, delta, w, model=model),
            )
        )
    print("", file=out)
    print("  weighted freshness under the true change rates (higher is better)", file=out)
    print(f"  {'crawling':<10s} {'uniform':>10s} {'from est. Δ':>12s} {'from true Δ':>12s}", file=out)
    for model, fu, fe, ft in rows:
        print(f"  {model:<10s} {fu:>10.4f} {fe:>12.4f} {ft:>12.4f}", file=out)
    print(f"\n  done in {time.perf_counter() - t0:.1f} s", file=out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="freshcore", description="Keep a crawler's copy of the web fresh.")
    parser.add_argument("--version", action="version", version=f"freshcore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="estimate change rates and optimal crawl rates on a built-in synthetic web",
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the synthetic web and crawls (default 0)")
    demo.add_argument("--pages", type=_positive_int, default=10_000, help="number of pages (default 10000)")
    demo.add_argument(
        "--bandwidth", type=_positive_float, default=None, help="crawls per day for all pages (default pages/5)"
    )
    demo.add_argument("--crawls", type=_positive_int, default=100, help="crawls per page while learning (default 100)")
    demo.add_argument(
        "--method",
        choices=("mle", "mm", "lln", "sa", "sam", "naive", "cgm"),
        default="mle",
        help="change-rate estimator (default mle)",
    )
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv=None, out=None) -> int:
    """Entry point of the ``freshcore`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out = sys.stdout if out is None else out
    if args.command == "demo":
        return _demo(args, out)
    parser.print_help(out)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
