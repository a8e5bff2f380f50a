"""Write examples/crawl_log.csv: a small crawl log as a crawler would keep it (the input of
``freshcore estimate``).

25 URLs crawled at irregular times over 60 days (each at its own mean interval, from 6 hours to 4 days,
jittered), timestamps in ISO 8601 UTC, a ``changed`` flag (the page's content differed from the previous
crawl), the ``etag`` that a crawler would have compared to find it, and the change ``signals`` (sitemap
pings, say) received since the previous crawl: each change is signalled with the page's recall, and false
signals come at its false-signal rate.  The pages' true parameters go to
examples/pages.csv, a page table (the input of ``freshcore rates``): change rate (per day), importance,
change-signal recall and false signals per day, and the mean interval at which the log crawled them, so
that the estimates can be compared with the truth.

Run: ``python examples/make_crawl_log.py --write`` writes the files (deterministic: the ones in the
repository are its output); without ``--write`` it checks that they are, and prints what they hold.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def make(n_urls: int = 25, days: float = 60.0, seed: int = 2026) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The log and the true rates."""
    rng = np.random.default_rng(seed)
    rate = np.round(10 ** rng.uniform(-1.3, 0.5, n_urls), 4)  # changes per day: every 3 h to every 20 days
    interval = np.round(10 ** rng.uniform(-0.6, 0.6, n_urls), 3)  # mean days between crawls
    signals = np.random.default_rng(seed + 1)
    importance = np.round(signals.pareto(1.5, n_urls) + 1.0, 3)
    recall = np.round(signals.beta(0.25, 0.25, n_urls), 3)
    false_rate = np.round(signals.uniform(0.1, 0.6, n_urls), 3)
    pings = np.random.default_rng(seed + 2)  # (its own stream: the crawls and changes do not depend on it)
    start = np.datetime64("2026-09-01T00:00:00")
    rows = []
    for i in range(n_urls):
        url = f"https://www.example.org/catalog/item-{i:02d}.html"
        t, version, received = 0.0, 0, 0
        while t < days:
            etag = f"{seed:x}-{i:02d}-{version:04d}"
            stamp = start + np.timedelta64(round(t * 86400), "s")
            rows.append((url, str(stamp) + "Z", etag, received))
            gap = interval[i] * rng.uniform(0.5, 1.5)
            changes = rng.poisson(rate[i] * gap)
            version += changes
            t += gap
            # signals before the next crawl: each change signalled with probability recall, false ones at false_rate
            received = int(pings.binomial(changes, recall[i]) + pings.poisson(false_rate[i] * gap))
    log = pd.DataFrame(rows, columns=["url", "time", "etag", "signals"])
    log["changed"] = (log["etag"] != log.groupby("url")["etag"].shift()).astype(int)
    log.loc[log.groupby("url").head(1).index, "changed"] = 0  # a first crawl has nothing to compare with
    log = log.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # logs come in any order
    truth = pd.DataFrame({"url": [f"https://www.example.org/catalog/item-{i:02d}.html" for i in range(n_urls)],
                          "change_rate": rate, "importance": importance, "recall": recall,
                          "false_rate": false_rate, "mean_crawl_interval": interval})
    return log[["url", "time", "changed", "etag", "signals"]], truth


def main(write: bool) -> None:
    files = dict(zip(("crawl_log.csv", "pages.csv"), make()))
    for name, table in files.items():
        text = table.to_csv(index=False)
        path = HERE / name
        if write:
            path.write_text(text)
            print(f"wrote {path}")
        elif not path.exists() or path.read_text() != text:
            sys.exit(f"{path} is not this script's output: run it with --write")
    log = files["crawl_log.csv"]
    print(f"crawl_log.csv: {len(log)} crawls of {log['url'].nunique()} URLs, {log['time'].min()} to "
          f"{log['time'].max()}, {int(log['changed'].sum())} changes seen")
    pages = files["pages.csv"]
    print(f"pages.csv: the true change rates, {pages['change_rate'].min():g} to {pages['change_rate'].max():g} per "
          "day, with importance and signal parameters")
    print("estimate them with: freshcore estimate examples/crawl_log.csv; plan crawls with: freshcore rates "
          "examples/pages.csv --bandwidth 10")


if __name__ == "__main__":
    main("--write" in sys.argv[1:])
