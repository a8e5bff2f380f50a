"""``freshcore rates``: a page table in, a crawl plan out (the library's optimal rates or thresholds)."""

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import run

from freshcore import PageModel, freshness, optimal_rates, optimal_thresholds

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PAGES = EXAMPLES / "pages.csv"


@pytest.mark.parametrize("model", ["poisson", "periodic"])
def test_example_pages_get_the_library_rates(model, capsys):
    status, out, err = run(["rates", str(PAGES), "--bandwidth", "10", "--model", model], capsys)
    pages = pd.read_csv(PAGES)
    want = optimal_rates(pages["change_rate"], pages["importance"], 10.0, model=model)
    plan = pd.read_csv(io.StringIO(out))
    assert status == 0
    assert list(plan.columns) == ["url", "change_rate", "importance", "crawl_rate", "freshness"]
    np.testing.assert_allclose(plan["crawl_rate"], want, rtol=1e-9)
    assert plan["crawl_rate"].sum() == pytest.approx(10.0, rel=1e-9)
    total = freshness(want, pages["change_rate"], pages["importance"], model=model)
    assert err == (f"freshcore rates: 25 pages, bandwidth 10, model {model}: expected freshness "
                   f"(importance-weighted fraction of time fresh) {total:.6f}\n")


def test_signals_and_bounds(capsys):
    status, out, _ = run(["rates", str(PAGES), "--bandwidth", "10", "--model", "signals", "-q"], capsys)
    pages = pd.read_csv(PAGES)
    res = optimal_thresholds(PageModel(pages["change_rate"].to_numpy(), pages["importance"].to_numpy(),
                                       pages["recall"].to_numpy(), pages["false_rate"].to_numpy()), 10.0)
    plan = pd.read_csv(io.StringIO(out))
    assert status == 0 and list(plan.columns)[-2:] == ["crawl_rate", "threshold"]
    np.testing.assert_allclose(plan["crawl_rate"], res.frequencies, rtol=1e-9)
    _, bounded, _ = run(["rates", str(PAGES), "--bandwidth", "10", "--min-rate", "0.2", "--max-rate", "0.6", "-q"],
                        capsys)
    rate = pd.read_csv(io.StringIO(bounded))["crawl_rate"]
    assert rate.min() >= 0.2 * (1 - 1e-12) and rate.max() <= 0.6 * (1 + 1e-12)
    no_weights = pd.read_csv(PAGES).drop(columns="importance")
    assert no_weights.shape[1] == 5


@pytest.mark.parametrize(
    ("table", "args", "message"),
    [
        ("url,change_rate\na,1\nb,2\na,3\n", [], "{p}, line 4, column 'url': 'a' is listed twice (first on line 2)"),
        ("url,change_rate\na,1\nb,-2\n", [], "{p}, line 3, column 'change_rate': -2 is not a finite number >= 0"),
        ("url,change_rate\na,1\nb,\n", [], "{p}, line 3, column 'change_rate': the value is missing"),
        ("url,change_rate,importance\na,1,x\n", [],
         "{p}, line 2, column 'importance': 'x' is not a finite number >= 0"),
        ("url,change_rate,recall,false_rate\na,1,1.5,0\n", ["--model", "signals"],
         "{p}, line 2, column 'recall': 1.5 is not in [0, 1]"),
        ("url,change_rate\na,1\n", ["--model", "signals"],
         "{p}: no column 'recall' (its columns: 'url', 'change_rate')"),
        ("url,change_rate\n", [], "{p}: the table has no page"),
        ("url,change_rate\na,1\nb,2\n", ["--min-rate", "6"], "{p}: The 'bandwidth'"),
    ],
)
def test_bad_tables_are_one_line_errors(tmp_path, capsys, table, args, message):
    p = tmp_path / "pages.csv"
    p.write_text(table)
    target = tmp_path / "plan.csv"
    status, out, err = run(["rates", str(p), "--bandwidth", "10", "-o", str(target), *args], capsys)
    assert status == 1 and out == "" and "\n" not in err.rstrip("\n")
    assert err.startswith("freshcore rates: " + message.format(p=p))
    assert not target.exists()
