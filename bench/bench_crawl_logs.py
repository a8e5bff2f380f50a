"""Benchmarks of freshcore.crawl_logs: per-page rates from a ragged, shuffled long-format crawl log.

Group ``estimate_log_rates, <rows> rows``: a log of URL strings, millisecond timestamps and change flags
(``n`` pages x 101 daily Poisson crawls, rows shuffled), as a pandas DataFrame.

* baseline: the natural pandas + scipy way -- ``sort_values`` by URL and time, ``groupby(...).diff()`` for
  the intervals, then per page ``scipy.optimize.brentq`` on the MLE equation (the same root to 1e-12);
* freshcore: ``estimate_log_rates(df)`` (the MLE of every page and its confidence interval).

Run as a script (``python bench/bench_crawl_logs.py 100000``) it times 10^5 URLs x 101 crawls, the issue's
10^7 rows, on one core, and prints the peak memory.
"""

from __future__ import annotations

import math
import resource
import sys
import time

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq

from freshcore.crawl_logs import estimate_log_rates
from freshcore.synthetic_logs import simulate_crawls

from benchutil import role, sizes

K = 100  # intervals per page


def crawl_log(n_pages: int, k: int = K, seed: int = 0) -> pd.DataFrame:
    """n_pages URLs x (k + 1) daily Poisson crawls (times in ms since 2023-11-14), changes every 3 h to 12 days."""
    rng = np.random.default_rng(seed)
    delta = 10 ** rng.uniform(-6, -4, n_pages)  # per second
    changed, tau = simulate_crawls(delta, 1 / 86400.0, k, rng=rng)
    ms = np.round((1.7e9 + np.c_[np.zeros(n_pages), np.cumsum(tau, axis=1)]) * 1000).astype(np.int64).ravel()
    flags = np.c_[np.zeros(n_pages, np.uint8), changed].ravel()
    urls = np.repeat(np.array([f"https://example.com/page/{i}" for i in range(n_pages)], dtype=object), k + 1)
    order = rng.permutation(urls.size)
    return pd.DataFrame({"url": urls[order], "time": ms[order].astype("datetime64[ms]"), "changed": flags[order]})


def pandas_scipy_rates(df: pd.DataFrame) -> pd.Series:
    """The plain way: sort, diff per URL, brentq per page (rates per day)."""
    d = df.sort_values(["url", "time"], kind="stable")
    tau = d.groupby("url", sort=False)["time"].diff().dt.total_seconds().to_numpy() / 86400.0
    keep = ~np.isnan(tau)
    obs = pd.DataFrame({"url": d["url"].to_numpy()[keep], "tau": tau[keep], "c": d["changed"].to_numpy()[keep]})
    out = {}
    for url, g in obs.groupby("url", sort=True):
        t, c = g["tau"].to_numpy(), g["c"].to_numpy()
        t1, s0 = t[c == 1], t[c == 0].sum()
        if t1.size == 0 or s0 == 0.0:
            out[url] = 0.0 if t1.size == 0 else math.inf
            continue
        with np.errstate(over="ignore"):  # (e^x overflows at the bracket's end: the term is 0 there)
            out[url] = brentq(lambda x, t1=t1, s0=s0: np.sum(t1 / np.expm1(x * t1)) - s0,
                              t1.size / (s0 + t1.sum() / 2), t1.size / s0, xtol=1e-300, rtol=1e-15)
    return pd.Series(out)


@pytest.mark.parametrize("n", sizes(1_000, 10_000, smoke=20))
def test_log_rates_pandas_scipy(benchmark, n):
    benchmark.group = f"estimate_log_rates, {n * (K + 1)} rows"
    role(benchmark, "baseline", n_pages=n, rows=n * (K + 1))
    df = crawl_log(n)
    want = estimate_log_rates(df)["change_rate"]
    got = benchmark.pedantic(pandas_scipy_rates, args=(df,), rounds=1, iterations=1) if n >= 10_000 else \
        benchmark(pandas_scipy_rates, df)
    finite = np.isfinite(got.to_numpy()) & ~estimate_log_rates(df)["clipped"].to_numpy()
    np.testing.assert_allclose(got.to_numpy()[finite], want.to_numpy()[finite], rtol=1e-12)


@pytest.mark.parametrize("n", sizes(1_000, 10_000, smoke=20))
def test_log_rates_freshcore(benchmark, n):
    benchmark.group = f"estimate_log_rates, {n * (K + 1)} rows"
    role(benchmark, "freshcore", n_pages=n, rows=n * (K + 1))
    df = crawl_log(n)
    benchmark(estimate_log_rates, df)


def _chunked_parquet(path: str, rows: int = 1_000_000):
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches(batch_size=rows):
        yield batch.to_pandas()


if __name__ == "__main__":
    # python bench/bench_crawl_logs.py N            : N URLs x 101 crawls as one DataFrame
    # python bench/bench_crawl_logs.py N FILE.parquet : write it to FILE, then (in a new process) read it back
    #                                                  in chunks of 10^6 rows: the memory of a chunked log
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    if len(sys.argv) > 2 and not sys.argv[2].startswith("--"):
        crawl_log(n).to_parquet(sys.argv[2])
        import subprocess

        subprocess.run([sys.executable, __file__, str(n), "--read", sys.argv[2]], check=True)
        sys.exit(0)
    if len(sys.argv) > 3 and sys.argv[2] == "--read":
        t = time.perf_counter()
        out = estimate_log_rates(_chunked_parquet(sys.argv[3]))
        elapsed = time.perf_counter() - t
        what = f"{sys.argv[3]} in chunks of 10^6 rows"
    else:
        df = crawl_log(n)
        t = time.perf_counter()
        out = estimate_log_rates(df)
        elapsed = time.perf_counter() - t
        what = f"{len(df)} rows in one DataFrame"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{what}, {len(out)} pages: {elapsed:.2f} s, peak RSS {peak:.0f} MB")
