"""Write examples/bing_layout/: a small synthetic dataset in the layout of the public Bing crawl history.

The layout of the dataset of Kolobov, Lubetzky, Peres and Horvitz (SIGIR 2019) and Kolobov et al. (NeurIPS
2019), three TSV files without a header (see ``freshcore.bing_crawl_history``), for 60 URLs crawled about
daily for 14 weeks (98 days), each changing as a Poisson process at its own rate:

- ``urlid_offset_history.txt``: URL id, first crawl's offset (days), ``[[interval, changed], ...]``;
- ``urlid_imp.txt``: URL id, importance score;
- ``urlid_chrate_compl_obs_hist.txt``: URL id, change rate per day, for a fifth of the URLs (here the true
  rate, where the real dataset has a sitemap-based estimate).

As in the real dataset, URLs that never changed are left out.  Run ``python examples/make_bing_layout.py
--write`` to write the files (deterministic: the ones in the repository are its output); without ``--write``
it checks that they are, and prints what they hold.  Then: ``freshcore estimate --layout bing
examples/bing_layout``.
"""

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "bing_layout"


def make(n_urls: int = 60, days: float = 98.0, seed: int = 2019) -> dict[str, str]:
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(10**7, size=n_urls, replace=False))
    rate = 10 ** rng.uniform(-1.5, 0.7, n_urls)  # changes per day
    history, imp, complete = [], [], []
    for i, url in enumerate(ids):
        offset = rng.uniform(0, 2)
        t, pairs = offset, []
        while True:
            gap = rng.uniform(0.05, 0.4) if rng.random() < 0.1 else rng.uniform(0.7, 1.3)  # a few extra crawls
            if t + gap > days:
                break
            pairs.append(f"[{gap!r}, {int(rng.poisson(rate[i] * gap) > 0)}]")
            t += gap
        if not any(p.endswith(", 1]") for p in pairs):
            continue  # (never changed: dropped, as in the dataset)
        history.append(f"{url}\t{offset!r}\t[{', '.join(pairs)}]\n")
        imp.append(f"{url}\t{rng.lognormal(0, 1.5)!r}\n")
        if rng.random() < 0.2:
            complete.append(f"{url}\t{float(rate[i])!r}\n")
    return {"urlid_offset_history.txt": "".join(history), "urlid_imp.txt": "".join(imp),
            "urlid_chrate_compl_obs_hist.txt": "".join(complete)}


def main(write: bool) -> None:
    files = make()
    for name, text in files.items():
        path = HERE / name
        if write:
            HERE.mkdir(exist_ok=True)
            path.write_text(text)
            print(f"wrote {path}")
        elif not path.exists() or path.read_text() != text:
            sys.exit(f"{path} is not this script's output: run it with --write")
    print(f"urlid_offset_history.txt: {files['urlid_offset_history.txt'].count(chr(10))} URLs, 98 days of crawls")
    print(f"urlid_imp.txt: their importance; urlid_chrate_compl_obs_hist.txt: "
          f"{files['urlid_chrate_compl_obs_hist.txt'].count(chr(10))} complete-observation change rates")
    print("estimate them with: freshcore estimate --layout bing examples/bing_layout")


if __name__ == "__main__":
    main("--write" in sys.argv[1:])
