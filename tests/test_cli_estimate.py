"""``freshcore estimate``: crawl logs in (CSV, Parquet, stdin), estimates out, one-line errors, atomic outputs."""

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import run

from freshcore.cli import main
from freshcore.crawl_logs import estimate_log_rates

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LOG = EXAMPLES / "crawl_log.csv"


def test_example_log_gives_the_library_estimates(capsys):
    status, out, err = run(["estimate", str(LOG)], capsys)
    assert status == 0 and err == ""
    got = pd.read_csv(io.StringIO(out))
    want = estimate_log_rates(pd.read_csv(LOG), signal_column="signals").reset_index()
    assert list(got.columns) == ["url", "change_rate", "ci_low", "ci_high", "n_intervals", "n_changes", "clipped",
                                 "recall", "false_rate"]  # (the log has a 'signals' column)
    assert got["url"].tolist() == want["url"].tolist() and len(got) == 25
    np.testing.assert_allclose(got["change_rate"], want["change_rate"], rtol=1e-9)
    np.testing.assert_array_equal(got["n_changes"], want["n_changes"])
    np.testing.assert_allclose(got["recall"], want["recall"], rtol=1e-9)
    _, no_signals, _ = run(["estimate", str(LOG), "--signal-column", "signals"], capsys)
    assert no_signals == out
    truth = pd.read_csv(EXAMPLES / "pages.csv")
    inside = (got["ci_low"] <= truth["change_rate"]) & (truth["change_rate"] <= got["ci_high"])
    assert inside.mean() >= 0.8  # (25 pages: 84% of the 95% intervals hold the truth in this file)


def test_fingerprints_parquet_json_and_units(tmp_path, capsys):
    """The etag column gives the changed flags' estimates; Parquet the CSV's; per hour 1/24 of per day."""
    _, by_flags, _ = run(["estimate", str(LOG)], capsys)
    _, by_etag, _ = run(["estimate", str(LOG), "--fingerprint-column", "etag"], capsys)
    assert by_etag == by_flags
    pq = tmp_path / "log.parquet"
    pd.read_csv(LOG).to_parquet(pq)
    _, from_parquet, _ = run(["estimate", str(pq)], capsys)
    assert from_parquet == by_flags
    status, lines, _ = run(["estimate", str(LOG), "--format", "json", "--unit", "hour"], capsys)
    records = [json.loads(line) for line in lines.splitlines()]
    day = pd.read_csv(io.StringIO(by_flags))
    assert status == 0 and len(records) == 25
    np.testing.assert_allclose([r["change_rate"] for r in records], day["change_rate"] / 24, rtol=1e-9)
    clipped = [r for r in records if r["clipped"]]
    assert clipped and all(r["ci_high"] == "inf" for r in clipped)


def test_numeric_times_and_output_file(tmp_path, capsys):
    """Unix seconds by default (--time-unit for others); -o writes the file, nothing on stdout."""
    log = pd.read_csv(LOG)
    stamps = pd.to_datetime(log["time"]).dt.tz_localize(None).to_numpy()
    seconds = stamps.astype("datetime64[s]").astype(np.int64)
    num = tmp_path / "num.csv"
    log.assign(time=seconds).to_csv(num, index=False)
    ms = tmp_path / "ms.csv"
    log.assign(time=seconds * 1000).to_csv(ms, index=False)
    _, want, _ = run(["estimate", str(LOG)], capsys)
    out_file = tmp_path / "rates.csv"
    status, out, _ = run(["estimate", str(num), "-o", str(out_file)], capsys)
    assert status == 0 and out == "" and out_file.read_text() == want
    _, got_ms, _ = run(["estimate", str(ms), "--time-unit", "millisecond"], capsys)
    assert got_ms == want


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (None, [], "freshcore estimate: missing.csv: no such file"),
        ("url,time,changed\n", [], "freshcore estimate: {log}: the log is empty."),
        ("", [], "freshcore estimate: {log}: the file is empty"),
        ("url,when,changed\na,1,0\n", [], "freshcore estimate: {log}: no column 'time' (its columns: 'url', 'when', "
                                         "'changed')"),
        ("url,time,changed\na,2026-01-01,0\na,yesterday,1\n", [],
         "freshcore estimate: {log}, line 3, column 'time': 'yesterday' is not a number or a timestamp"),
        ("url,time,changed\na,1,0\na,2,maybe\n", [],
         "freshcore estimate: {log}, line 3, column 'changed': 'maybe' is not 0/1 or true/false"),
        ("url,time,changed\na,1,0\na,2,1\na,2,0\n", [],
         "freshcore estimate: {log}, line 4, column 'time': page 'a' is crawled twice at 1970-01-01T00:00:02 "
         "(also on row 1 of the log)"),
        ("url,time,changed\na,1,0\n,2,1\n", [], "freshcore estimate: {log}, line 3, column 'url': the page is missing"),
        ("url,time,changed,signals\na,1,0,0\na,2,1,x\n", [],
         "freshcore estimate: {log}, line 3, column 'signals': 'x' is not a count of signals"),
        ("url,time,changed\na,1,0\na,2,1\n", ["--confidence", "1.5"],
         "freshcore estimate: --confidence must be between 0 and 1, got 1.5"),
    ],
)
def test_bad_logs_are_one_line_errors(tmp_path, capsys, content, args, message):
    log = tmp_path / "log.csv"
    if content is not None:
        log.write_text(content)
    target = tmp_path / "out.csv"
    path = str(log) if content is not None else "missing.csv"
    status, out, err = run(["estimate", path, *args, "-o", str(target)], capsys)
    assert status == 1 and out == ""
    assert err == message.format(log=log) + "\n"
    assert not target.exists() and list(tmp_path.iterdir()) == ([log] if content is not None else [])


def test_truncated_parquet_and_a_folder(tmp_path, capsys):
    pq = tmp_path / "log.parquet"
    pd.read_csv(LOG).to_parquet(pq)
    pq.write_bytes(pq.read_bytes()[:300])
    status, _, err = run(["estimate", str(pq)], capsys)
    assert status == 1 and err.startswith(f"freshcore estimate: {pq}: not a readable Parquet file (")
    status, _, err = run(["estimate", str(tmp_path)], capsys)
    assert status == 1 and err.startswith(f"freshcore estimate: {tmp_path}: cannot be read (")


def test_usage_errors_exit_2_and_help_is_plain_text(capsys):
    with pytest.raises(SystemExit) as e:
        main(["estimate", str(LOG), "--unit", "fortnight"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["estimate", "--help"])
    text = capsys.readouterr().out
    assert e.value.code == 0
    assert "examples:\n  freshcore estimate crawls.csv -o rates.csv" in text
    assert "``" not in text and ":func:" not in text
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    demo_help = capsys.readouterr().out
    assert "``" not in demo_help and "**" not in demo_help and "example:" in demo_help


def test_stdin_and_a_closed_pipe():
    """`-` reads CSV from stdin; a reader that stops early (| head) ends the command quietly, status 0."""
    done = subprocess.run([sys.executable, "-m", "freshcore", "estimate", "-"], input=LOG.read_text(),
                          capture_output=True, text=True, check=True)
    assert done.stdout.startswith("url,change_rate,") and done.stderr == ""
    head = subprocess.run(f"{sys.executable} -m freshcore estimate {LOG} | head -1", shell=True, capture_output=True,
                          text=True)
    assert head.returncode == 0 and head.stdout.startswith("url,") and "Traceback" not in head.stderr


def test_reference_rates_are_joined_and_plotted(tmp_path, capsys):
    """--reference adds the known rates beside the estimates (the plot draws one against the other)."""
    status, out, _ = run(["estimate", str(LOG), "--reference", str(EXAMPLES / "pages.csv"), "--plot",
                          str(tmp_path / "e.png")], capsys)
    got = pd.read_csv(io.StringIO(out))
    truth = pd.read_csv(EXAMPLES / "pages.csv")
    assert status == 0 and list(got.columns)[-1] == "reference_rate"
    np.testing.assert_array_equal(got["reference_rate"], truth.set_index("url").loc[got["url"], "change_rate"])
    assert (tmp_path / "e.png").read_bytes().startswith(b"\x89PNG")
