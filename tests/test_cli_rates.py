"""``freshcore rates``: a page table in, a crawl plan out (the library's optimal rates or thresholds)."""

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import run

from freshcore import PageModel, freshness, optimal_rates, optimal_thresholds
from freshcore.blind import Constant, Exponential, Pareto, Uniform

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
        ("url,change_rate\na,1\n", ["--model", "renewal"],
         "{p}: no column 'update_law' (its columns: 'url', 'change_rate')"),
        ('url,update_law\na,"pareto(3, 1)"\nb,\n', ["--model", "renewal"],
         "{p}, line 3, column 'update_law': the value is missing"),
        ("url,update_law\na,gamma(2)\n", ["--model", "renewal"],
         "{p}, line 2, column 'update_law': 'gamma(2)' is not an update law: write one of exponential(...), "
         "pareto(...), constant(...), uniform(...), e.g. 'pareto(3, 1)'"),
        ("url,update_law\na,constant(2)\nb,pareto(x)\n", ["--model", "renewal"],
         "{p}, line 3, column 'update_law': 'pareto(x)': 'x' is not a number (or name=number)"),
        ('url,update_law\na,"pareto(3, gamma=1)"\n', ["--model", "renewal"],
         "{p}, line 2, column 'update_law': 'pareto(3, gamma=1)': pareto takes (alpha, beta)"),
        ('url,update_law\na,"uniform(low=1, 2)"\n', ["--model", "renewal"],
         "{p}, line 2, column 'update_law': 'uniform(low=1, 2)': a plain number after a name=number"),
        ("url,update_law\na,pareto(0.5)\n", ["--model", "renewal"],
         "{p}, line 2, column 'update_law': 'pareto(0.5)': The 'alpha' parameter of Pareto must be a finite "
         "number > 1.0"),
        ("url,update_law\na,constant(nan)\n", ["--model", "renewal"],
         "{p}, line 2, column 'update_law': 'constant(nan)': 'nan' is not a number (or name=number)"),
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


def test_renewal_laws_get_the_library_rates(tmp_path, capsys):
    """``--model renewal``: one update law per page, in either written form; the plan is optimal_rates' renewal
    plan under the laws, the change_rate out is 1 / E[interval], and the laws are written back in one form."""
    p = tmp_path / "laws.csv"
    p.write_text('url,update_law,importance\na,"pareto(3, 1)",1\nb,Constant(value=2.0),2\n'
                 'c,EXPONENTIAL( rate = 0.5 ),1\nd,"uniform(1,2)",0.5\ne,"Pareto(alpha=3.0, beta=1.0)",3\n')
    status, out, err = run(["rates", str(p), "--bandwidth", "2", "--model", "renewal", "--max-rate", "1.5"], capsys)
    laws = [Pareto(3, 1), Constant(2), Exponential(0.5), Uniform(1, 2), Pareto(3, 1)]
    w = [1, 2, 1, 0.5, 3]
    want = optimal_rates(laws, w, 2.0, model="renewal", max_rate=1.5)
    plan = pd.read_csv(io.StringIO(out))
    assert status == 0
    assert list(plan.columns) == ["url", "update_law", "change_rate", "importance", "crawl_rate", "freshness"]
    assert list(plan["update_law"]) == [repr(law) for law in laws]
    np.testing.assert_allclose(plan["change_rate"], [law.rate for law in laws], rtol=1e-9)
    np.testing.assert_allclose(plan["crawl_rate"], want, rtol=1e-9)
    np.testing.assert_allclose(plan["freshness"], freshness(want, laws, w, model="renewal", per_page=True),
                               rtol=1e-9, atol=1e-12)
    total = freshness(want, laws, w, model="renewal")
    assert err == (f"freshcore rates: 5 pages, bandwidth 2, model renewal: expected freshness "
                   f"(importance-weighted fraction of time fresh) {total:.6f}\n")


def test_the_readme_renewal_example_runs(capsys):
    status, out, _ = run(["rates", str(EXAMPLES / "update_laws.csv"), "--bandwidth", "4", "--model", "renewal", "-q"],
                         capsys)
    plan = pd.read_csv(io.StringIO(out))
    assert status == 0 and len(plan) == 8
    assert plan["crawl_rate"].sum() == pytest.approx(4.0, rel=1e-9)  # (the CSV keeps 10 digits)
