"""The ``freshcore`` command.

``freshcore demo`` runs the whole pipeline on a built-in synthetic web:

1. **The web.** ``--pages`` pages (default 10 000) drawn with a fixed seed:
   change rates Δ_i log-uniform on [0.02, 5] changes per day, importance
   weights w_i from a Pareto(1.5) law (heavy-tailed, like page popularity),
   normalised to sum to 1.  The bandwidth ``--bandwidth`` defaults to N/5
   crawls per day.
2. **Learning while crawling** (the loop of 000 Section 5).  Crawling starts
   uniform (B/N per page).  In each of ``--epochs`` epochs every page is
   crawled ``--crawls`` times at its current rate (Poisson crawling); each crawl
   only tells whether the page changed since the previous one.  A streaming
   estimator (``--method``: the interval-aware streaming MLE by default, or
   the online LLN/SA/SAM of 000) updates Δ̂ for all pages, and the optimal
   Poisson-crawling rates for Δ̂ (eq. (10) of 003) become the next epoch's
   rates.
3. **Judging.** After each epoch the current rates are scored by their
   weighted freshness under the *true* Δ, beside uniform crawling and the
   optimum computed from the true Δ; at the end the same comparison is made
   for periodic crawling (SPEC §2).
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


_STREAMING = {
    "mle": "IntervalMLEBatch",
    "lln": "LLNBatch",
    "sa": "SABatch",
    "sam": "SAMBatch",
}


def _demo(args, out) -> int:
    from tqdm import tqdm

    from . import estimation, mle
    from .rates import freshness, optimal_rates
    from .simulation import simulate_crawls

    t0 = time.perf_counter()
    n = args.pages
    bandwidth = args.bandwidth if args.bandwidth is not None else n / 5.0
    floor = 1e-3 * bandwidth / n  # keep every page observed (000 Section 5 uses a floor rate too)
    delta, w = synthetic_web(n, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    uniform = np.full(n, bandwidth / n)
    oracle = optimal_rates(delta, w, bandwidth, model="poisson", min_rate=floor)
    f_uniform = freshness(uniform, delta, w)
    f_oracle = freshness(oracle, delta, w)

    if args.method == "mle":
        est = mle.IntervalMLEBatch(n, tau_min=0.1 / uniform[0], tau_max=100.0 / floor)
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
                est.update(changed[:, j], crawl_rates=rates, intervals=intervals[:, j])
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
    demo.add_argument("--epochs", type=_positive_int, default=30, help="learning epochs (default 30)")
    demo.add_argument("--crawls", type=_positive_int, default=20, help="crawls per page per epoch (default 20)")
    demo.add_argument(
        "--method",
        choices=tuple(_STREAMING),
        default="mle",
        help="streaming change-rate estimator (default mle: the interval-aware streaming MLE)",
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
