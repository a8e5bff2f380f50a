"""``freshcore simulate``: every policy on the same simulated events of a page table."""

import io
from pathlib import Path

import numpy as np
import pandas as pd
from _cli import run

from freshcore import PageModel, Scheduler, simulate
from freshcore.cli import main

PAGES = Path(__file__).resolve().parent.parent / "examples" / "pages.csv"


def test_table_of_every_policy(capsys):
    status, out, err = run(["simulate", str(PAGES), "--bandwidth", "10", "--horizon", "100"], capsys)
    lines = out.splitlines()
    assert status == 0 and err == ""
    assert lines[0] == ("5 policies, 100 units of time, bandwidth 10, seed 0; accuracy: fraction of requests served "
                        "fresh after 0.2 of the horizon")
    assert [line[:32].strip() for line in lines[2:]] == [
        "optimum with signals (analytic)", "optimum, no signals (analytic)", "GREEDY-NCIS (Scheduler)",
        "GREEDY (no signals)", "LDS (optimum's rates)", "round robin", "Nutch adaptive"]


def test_rows_are_the_library_simulation(capsys):
    """The NCIS row is simulate(Scheduler(pages, B)) on the events of seed [seed, 2]; CSV and JSON carry it."""
    _, out, _ = run(["simulate", str(PAGES), "--bandwidth", "10", "--horizon", "80", "--policies", "ncis,lds",
                     "--seed", "5", "--format", "csv"], capsys)
    table = pd.read_csv(io.StringIO(out))
    t = pd.read_csv(PAGES)
    pages = PageModel(t["change_rate"].to_numpy(), t["importance"].to_numpy(), t["recall"].to_numpy(),
                      t["false_rate"].to_numpy())
    res = simulate(Scheduler(pages, 10.0), pages, 80.0, rng=np.random.default_rng([5, 2]))
    row = table[table["policy"] == "GREEDY-NCIS (Scheduler)"].iloc[0]
    assert row["accuracy"] == float(f"{res.accuracy:.10g}") and row["crawls"] == 800  # (CSV: 10 digits)
    assert len(table) == 4
    _, js, _ = run(["simulate", str(PAGES), "--bandwidth", "10", "--horizon", "80", "--policies", "ncis",
                    "--seed", "5", "--format", "json"], capsys)
    assert '"accuracy_se": null' in js.splitlines()[0] and f'"accuracy": {res.accuracy!r}' in js.splitlines()[-1]


def test_bad_options(tmp_path, capsys):
    status, _, err = run(["simulate", str(PAGES), "--bandwidth", "10", "--horizon", "5", "--burn-in", "1"], capsys)
    assert status == 1 and err == "freshcore simulate: --burn-in must be in [0, 1), got 1.0\n"
    try:
        main(["simulate", str(PAGES), "--bandwidth", "10", "--horizon", "5", "--policies", "ncis,magic"])
    except SystemExit as e:
        assert e.code == 2
    assert "unknown policy 'magic'" in capsys.readouterr().err


def test_plots_are_written(tmp_path, capsys, monkeypatch):
    """--plot draws a figure for estimate, rates and simulate (PNG, SVG or PDF by the name), with the mode a plain
    file gets; without matplotlib it is a one-line error and nothing is written."""
    import os
    import stat

    examples = PAGES.parent
    runs = {
        "est.png": ["estimate", str(examples / "crawl_log.csv")],
        "bing.svg": ["estimate", "--layout", "bing", str(examples / "bing_layout")],
        "rates.pdf": ["rates", str(PAGES), "--bandwidth", "10", "-q"],
        "sim.png": ["simulate", str(PAGES), "--bandwidth", "10", "--horizon", "20", "--policies", "ncis,lds"],
    }
    magic = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}
    mask = os.umask(0)
    os.umask(mask)
    for name, args in runs.items():
        target = tmp_path / name
        assert main([*args, "-o", str(tmp_path / (name + ".out")), "--plot", str(target)]) == 0
        assert target.read_bytes().startswith(magic[target.suffix])
        assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    status = main(["rates", str(PAGES), "--bandwidth", "10", "-q", "-o", str(tmp_path / "p.csv"),
                   "--plot", str(tmp_path / "none.png")])
    assert status == 1 and not (tmp_path / "none.png").exists() and not (tmp_path / "p.csv").exists()
    assert capsys.readouterr().err.endswith("freshcore rates: --plot needs matplotlib: pip install "
                                            "'freshcore[plot]' (for rates)\n")
