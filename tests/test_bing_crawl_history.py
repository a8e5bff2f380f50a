"""The Bing crawl-history layout (freshcore.bing_crawl_history) and ``freshcore estimate --layout bing``."""

import io
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from freshcore import estimate_log_rates, mle_rates
from freshcore.bing_crawl_history import BingFormatError, read_history, read_pages
from freshcore.cli import main

DATA = Path(__file__).resolve().parent.parent / "examples" / "bing_layout"


def file_histories():
    """The example's histories as the file writes them: {id: (offset, intervals, changed)}."""
    out = {}
    for line in (DATA / "urlid_offset_history.txt").read_text().splitlines():
        uid, offset, hist = line.split("\t")
        pairs = np.array(eval(hist), dtype=float).reshape(-1, 2)  # (the test's own reading of the literal)
        out[int(uid)] = (float(offset), pairs[:, 0], pairs[:, 1].astype(np.uint8))
    return out


def test_history_rows_and_estimates():
    hist = file_histories()
    chunks = list(read_history(DATA, chunk_rows=500))
    log = pd.concat(chunks, ignore_index=True)
    assert len(chunks) > 1 and len(log) == sum(len(h[1]) + 1 for h in hist.values())
    for uid, (offset, tau, c) in list(hist.items())[:10]:
        rows = log[log["url"] == uid]
        assert rows["time"].iloc[0] == offset and rows["changed"].iloc[0] == 0
        np.testing.assert_allclose(np.diff(rows["time"]), tau, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(rows["changed"].iloc[1:], c)
    r = estimate_log_rates(read_history(DATA, chunk_rows=500))
    for uid, (_, tau, c) in hist.items():
        assert r.loc[uid, "change_rate"] == pytest.approx(mle_rates(c, tau), rel=1e-9)
    pages = read_pages(DATA)
    assert pages.index.name == "url" and sorted(pages.index) == sorted(hist)
    assert pages["reference_rate"].notna().sum() == 9 and (pages["importance"] > 0).all()


@pytest.mark.parametrize(
    ("line", "detail"),
    [
        ("7\t0.5\n", "expected 3 tab-separated fields (URL id, offset, history), got 2"),
        ("x7\t0.5\t[[1.0, 0]]\n", "the URL id 'x7' is not an integer"),
        ("7\t-1\t[[1.0, 0]]\n", "the first crawl's offset '-1' is not a number >= 0"),
        ("7\t0.5\t[[1.0, 0], [0.0, 1]]\n", "interval 2 of the history is 0.0, not a number > 0"),
        ("7\t0.5\t[[1.0, 2]]\n", "change indicator 1 of the history is 2.0, not 0/1"),
        ("7\t0.5\t[[1.0, 0], [2.0]]\n", "the history has an interval without its change indicator"),
        ("7\t0.5\t1.0, 0\n", "the history is not a list [[interval, changed], ...]"),
    ],
)
def test_format_errors_name_file_and_line(tmp_path, capsys, line, detail):
    shutil.copytree(DATA, tmp_path / "d")
    path = tmp_path / "d" / "urlid_offset_history.txt"
    path.write_text("5\t1.0\t[[1.0, 1]]\n" + line)
    with pytest.raises(BingFormatError, match="^" + __import__("re").escape(f"{path}, line 2: {detail}") + "$"):
        list(read_history(tmp_path / "d"))
    out = io.StringIO()
    assert main(["estimate", "--layout", "bing", str(tmp_path / "d"), "-o", str(tmp_path / "o.csv")], out=out) == 1
    assert capsys.readouterr().err == f"freshcore estimate: {path}, line 2: {detail}\n"
    assert not (tmp_path / "o.csv").exists()


def test_command_on_the_layout_feeds_rates(tmp_path, capsys):
    est = tmp_path / "bing_rates.csv"
    assert main(["estimate", "--layout", "bing", str(DATA), "-o", str(est)]) == 0
    table = pd.read_csv(est)
    assert list(table.columns) == ["url", "change_rate", "ci_low", "ci_high", "n_intervals", "n_changes", "clipped",
                                   "importance", "reference_rate"]
    assert len(table) == 59 and table["reference_rate"].notna().sum() == 9
    out = io.StringIO()
    assert main(["rates", str(est), "--bandwidth", "20", "-q"], out=out) == 0
    plan = pd.read_csv(io.StringIO(out.getvalue()))
    assert plan["crawl_rate"].sum() == pytest.approx(20.0, rel=1e-9)
    assert main(["estimate", "--layout", "bing", str(tmp_path / "nowhere")]) == 1
    assert capsys.readouterr().err == f"freshcore estimate: {tmp_path / 'nowhere'}: no such file\n"
