"""Bad input: every validated argument raises ValueError/TypeError naming it, and state is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from freshcore.estimation import LLNBatch, LLNEstimator, SAEstimator, SAMEstimator, estimate_rates

from _reference import BATCHES, ESTIMATORS, STREAMS

NAN = float("nan")
INF = float("inf")


# ---------------------------------------------------------------------------
# constructors
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("cls", STREAMS + BATCHES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad, exc", [(0.0, ValueError), (-1.0, ValueError), (NAN, ValueError), (INF, ValueError),
                                      ("2", TypeError), (True, TypeError)])
def test_constructor_crawl_rate(cls, bad, exc):
    """Every constructor (each batch one over 3 pages) refuses a bad crawl_rate, naming itself and the argument."""
    args = (3,) if cls in BATCHES else ()
    with pytest.raises(exc, match=f"'crawl_rate' parameter of {cls.__name__}"):
        cls(*args, crawl_rate=bad)


@pytest.mark.parametrize(
    "cls, name, bad, exc",
    [
        (LLNEstimator, "alpha", "ln", ValueError),
        (LLNEstimator, "alpha", 0.0, ValueError),
        (LLNEstimator, "alpha", -1.0, ValueError),
        (LLNEstimator, "alpha", NAN, ValueError),
        (LLNEstimator, "alpha", [[1.0]], TypeError),
        (LLNEstimator, "alpha", [1.0, -1.0], ValueError),
        (LLNEstimator, "alpha", [], ValueError),
        (LLNEstimator, "consistent", "yes", TypeError),
        (SAEstimator, "eta", 0.0, ValueError),
        (SAEstimator, "eta", NAN, ValueError),
        (SAEstimator, "initial", -0.5, ValueError),
        (SAEstimator, "initial", INF, ValueError),
        (SAMEstimator, "eta", -1.0, ValueError),
        (SAMEstimator, "beta", 0.0, ValueError),
        (SAMEstimator, "beta", "x", TypeError),
        (SAMEstimator, "omega", 0.0, ValueError),
        (SAMEstimator, "initial", -1.0, ValueError),
    ],
)
def test_constructor_step_parameters(cls, name, bad, exc):
    with pytest.raises(exc, match=f"'{name}' parameter of {cls.__name__}"):
        cls(**{name: bad})
    batch = next(b for b, stream in ESTIMATORS.values() if stream is cls)
    with pytest.raises(exc, match=f"'{name}' parameter of {batch.__name__}"):
        batch(2, **{name: bad})


@pytest.mark.parametrize("cls", BATCHES)
@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-3, ValueError), (2.0, TypeError), ("4", TypeError)])
def test_batch_n_pages(cls, bad, exc):
    with pytest.raises(exc, match="n_pages"):
        cls(bad, crawl_rate=1.0)


@pytest.mark.parametrize("cls", BATCHES)
def test_batch_crawl_rate_array(cls):
    with pytest.raises(ValueError, match=r"crawl_rate.*length n_pages=3"):
        cls(3, crawl_rate=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"crawl_rate\[1\]"):
        cls(3, crawl_rate=[1.0, -2.0, 1.0])


# ---------------------------------------------------------------------------
# streaming update / update_many (state unchanged after a rejected call)
# ---------------------------------------------------------------------------

def _fresh(cls):
    est = cls(crawl_rate=2.0)
    est.update(1).update(0, interval=0.5).update(1)
    return est


@pytest.mark.parametrize("cls", STREAMS)
@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"changed": 2}, ValueError, "changed"),
        ({"changed": -1}, ValueError, "changed"),
        ({"changed": 0.5}, ValueError, "changed"),
        ({"changed": NAN}, ValueError, "changed"),
        ({"changed": "1"}, TypeError, "changed"),
        ({"changed": None}, TypeError, "changed"),
        ({"changed": [1]}, ValueError, "changed"),
        ({"changed": 10**30}, TypeError, "changed"),  # not representable as a flag array
        ({"changed": 1, "interval": 0.0}, ValueError, "interval"),
        ({"changed": 1, "interval": -1.0}, ValueError, "interval"),
        ({"changed": 1, "interval": NAN}, ValueError, "interval"),
        ({"changed": 1, "interval": INF}, ValueError, "interval"),
        ({"changed": 1, "interval": "1"}, TypeError, "interval"),
        ({"changed": 1, "crawl_rate": 0.0}, ValueError, "crawl_rate"),
        ({"changed": 1, "crawl_rate": -2}, ValueError, "crawl_rate"),
        ({"changed": 1, "crawl_rate": NAN}, ValueError, "crawl_rate"),
        ({"changed": 1, "crawl_rate": INF}, ValueError, "crawl_rate"),
        ({"changed": 1, "crawl_rate": [1.0]}, TypeError, "crawl_rate"),
        ({"changed": 1, "interval": 1.0, "crawl_rate": -1.0}, ValueError, "crawl_rate"),
        ({"changed": 1, "interval": -1.0, "crawl_rate": 1.0}, ValueError, "interval"),
    ],
)
def test_update_rejects_bad_input_and_keeps_state(cls, kwargs, exc, match):
    est = _fresh(cls)
    before = est.to_dict()
    with pytest.raises(exc, match=match):
        est.update(**kwargs)
    assert est.to_dict() == before


@pytest.mark.parametrize("cls", STREAMS)
def test_update_without_any_crawl_rate(cls):
    est = cls()
    with pytest.raises(ValueError, match="crawl_rate"):
        est.update(1)
    with pytest.raises(ValueError, match="crawl_rate"):
        est.update_many([1, 0])
    assert est.n_updates == 0


def test_lln_callable_alpha_bad_value_keeps_state():
    est = LLNEstimator(crawl_rate=1.0, alpha=lambda k: 1.0 if k < 3 else -1.0)
    est.update(1).update(0)
    before = est.to_dict()
    with pytest.raises(ValueError, match="alpha"):
        est.update(1)
    assert est.to_dict() == before
    with pytest.raises(ValueError, match="alpha"):
        est.update_many([1, 1])
    assert est.to_dict() == before


@pytest.mark.parametrize("cls", STREAMS)
@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"changed": [1, 0, 1, 3]}, ValueError, r"changed\[3\]"),
        ({"changed": [[1, 0]]}, ValueError, "changed"),
        ({"changed": ["a"]}, TypeError, "changed"),
        ({"changed": [1, 0], "intervals": [1.0]}, ValueError, "intervals"),
        ({"changed": [1, 0], "intervals": [1.0, -1.0]}, ValueError, r"intervals\[1\]"),
        ({"changed": [1, 0], "intervals": [1.0, NAN]}, ValueError, r"intervals\[1\]"),
        ({"changed": [1, 0], "intervals": 0.0}, ValueError, "intervals"),
        ({"changed": [1, 0], "crawl_rate": [1.0, 0.0]}, ValueError, r"crawl_rate\[1\]"),
        ({"changed": [1, 0], "crawl_rate": [1.0]}, ValueError, "crawl_rate"),
        ({"changed": [1, 0], "crawl_rate": -1.0}, ValueError, "crawl_rate"),
    ],
)
def test_update_many_validates_everything_first(cls, kwargs, exc, match):
    est = _fresh(cls)
    before = est.to_dict()
    with pytest.raises(exc, match=match):
        est.update_many(**kwargs)
    assert est.to_dict() == before


@pytest.mark.parametrize("cls", STREAMS)
def test_from_dict_rejects_bad_state(cls):
    d = _fresh(cls).to_dict()
    d["state"]["n_updates"] = -1
    with pytest.raises(ValueError, match="n_updates"):
        cls.from_dict(d)
    d = _fresh(cls).to_dict()
    d["state"]["rate"] = NAN
    with pytest.raises(ValueError, match="rate"):
        cls.from_dict(d)


# ---------------------------------------------------------------------------
# batch update
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("cls", BATCHES)
@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"changed": [1, 0]}, ValueError, "n_pages=3"),
        ({"changed": [1, 0, 2]}, ValueError, r"changed\[2\]"),
        ({"changed": []}, ValueError, "changed"),
        ({"changed": [[1, 0, 1]]}, ValueError, "changed"),
        ({"changed": np.array(["1", "0", "1"])}, TypeError, "changed"),
        ({"changed": [1, 0], "pages": [0, 3]}, ValueError, r"pages\[1\]"),
        ({"changed": [1, 0], "pages": [0, -1]}, ValueError, r"pages\[1\]"),
        ({"changed": [1, 0], "pages": [0.0, 1.0]}, TypeError, "pages"),
        ({"changed": [1, 0], "pages": [0]}, ValueError, "pages"),
        ({"changed": [1, 0, 1], "crawl_rate": [1.0, 1.0]}, ValueError, "crawl_rate"),
        ({"changed": [1, 0, 1], "crawl_rate": [1.0, NAN, 1.0]}, ValueError, r"crawl_rate\[1\]"),
        ({"changed": [1, 0, 1], "crawl_rate": 0.0}, ValueError, "crawl_rate"),
        ({"changed": [1, 0, 1], "intervals": [1.0, 0.0, 1.0]}, ValueError, r"intervals\[1\]"),
        ({"changed": [1, 0, 1], "intervals": -1.0}, ValueError, "intervals"),
        ({"changed": [1, 0, 1], "intervals": [1.0]}, ValueError, "intervals"),
    ],
)
def test_batch_update_rejects_bad_input_and_keeps_state(cls, kwargs, exc, match):
    b = cls(3, crawl_rate=1.5)
    b.update([1, 0, 1]).update([1], pages=[2])
    before = b.to_dict()
    with pytest.raises(exc, match=match):
        b.update(**kwargs)
    after = b.to_dict()
    assert after.keys() == before.keys()
    for key in before["state"]:
        np.testing.assert_array_equal(after["state"][key], before["state"][key])


@pytest.mark.parametrize("cls", BATCHES)
def test_batch_missing_crawl_rate(cls):
    b = cls(2)
    with pytest.raises(ValueError, match="crawl_rate"):
        b.update([1, 0])
    assert b.n_updates.tolist() == [0, 0]


def test_batch_callable_alpha_bad_value_keeps_state():
    b = LLNBatch(2, crawl_rate=1.0, alpha=lambda k: 1.0 if k < 2 else 0.0)
    b.update([1, 0])
    with pytest.raises(ValueError, match="alpha"):
        b.update([1, 1])
    assert b.n_updates.tolist() == [1, 1]


@pytest.mark.parametrize("cls", BATCHES)
def test_batch_from_dict_rejects_bad_state(cls):
    d = cls(3, crawl_rate=1.0).update([1, 0, 1]).to_dict()
    d["state"]["n_updates"] = np.array([1, 1])
    with pytest.raises(ValueError, match="n_updates"):
        cls.from_dict(d)
    d = cls(3, crawl_rate=1.0).update([1, 0, 1]).to_dict()
    d["state"]["rates"] = np.array([1.0, NAN, 1.0])
    with pytest.raises(ValueError, match="rates"):
        cls.from_dict(d)


# ---------------------------------------------------------------------------
# estimate_rates
# ---------------------------------------------------------------------------

LOG = [[1, 0, 1], [0, 0, 1]]


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        ((LOG,), {"crawl_rate": 1.0, "method": "lnn"}, ValueError, "method"),
        ((LOG,), {"crawl_rate": 1.0, "method": 3}, ValueError, "method"),
        (([[[1]]],), {"crawl_rate": 1.0}, ValueError, "changed"),
        (([[1, 2]],), {"crawl_rate": 1.0}, ValueError, r"changed\[0, 1\]"),
        (([],), {"crawl_rate": 1.0}, ValueError, "changed"),
        ((LOG,), {}, ValueError, "crawl_rate"),
        ((LOG,), {"crawl_rate": -1.0}, ValueError, "crawl_rate"),
        ((LOG,), {"crawl_rate": [1.0, 2.0, 3.0]}, ValueError, "crawl_rate"),
        ((LOG,), {"crawl_rate": [[1.0, 2.0, 3.0]]}, ValueError, "crawl_rate"),
        ((LOG,), {"crawl_rate": [[1.0, 2.0, 3.0], [1.0, 0.0, 1.0]]}, ValueError, r"crawl_rate\[1, 1\]"),
        ((LOG, [[1.0, 1.0, 1.0]]), {"crawl_rate": 1.0}, ValueError, "intervals"),
        ((LOG, [[1.0, 1.0, 1.0], [1.0, -1.0, 1.0]]), {"crawl_rate": 1.0}, ValueError, r"intervals\[1, 1\]"),
        ((LOG,), {"crawl_rate": 1.0, "method": "sa", "eta": -1.0}, ValueError, "eta"),
        ((LOG,), {"crawl_rate": 1.0, "method": "mle", "return_path": True}, ValueError, "return_path"),
    ],
)
def test_estimate_rates_bad_input(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        estimate_rates(*args, **kwargs)


def test_lln_sequence_alpha_past_its_end_keeps_state():
    est = LLNEstimator(crawl_rate=1.0, alpha=[1.0, 2.0])
    est.update(1).update(1)
    before = est.to_dict()
    with pytest.raises(ValueError, match="alpha"):
        est.update(0)
    with pytest.raises(ValueError, match="alpha"):
        est.update_many([0])
    assert est.n_updates == 2 and est.rate == before["state"]["rate"]
    b = LLNBatch(2, crawl_rate=1.0, alpha=(1.0,))
    b.update([1, 1])
    with pytest.raises(ValueError, match="alpha"):
        b.update([1], pages=[0])
    assert b.n_updates.tolist() == [1, 1]


@pytest.mark.parametrize(
    "method, params, message",
    [
        ("lln", {"eta": 1.0}, "'eta' parameter of estimate_rates is not taken by method='lln' (it takes 'alpha', "
                              "'consistent')"),
        ("naive", {"alpha": "log"}, "'alpha' parameter of estimate_rates is not taken by method='naive' (it takes "
                                    "no parameter)"),
        ("sa", {"beta": 0.5}, "(it takes 'eta', 'initial')"),
        ("mle", {"eta": 1.0}, "not taken by method='mle' (it takes 'upper', 'return_clipped', 'out')"),
    ],
)
def test_estimate_rates_names_parameters_the_method_does_not_take(method, params, message):
    """A parameter of another method is a TypeError naming it and the method's own, never an internal class."""
    changed, intervals = np.zeros((2, 3)), np.ones((2, 3))
    with pytest.raises(TypeError) as info:
        estimate_rates(changed, intervals, crawl_rate=1.0, method=method, **params)
    assert message in str(info.value)
    assert "Batch" not in str(info.value) and "__init__" not in str(info.value)


def test_estimate_rates_without_a_crawl_rate_points_at_the_methods_that_need_none():
    with pytest.raises(ValueError, match=r"required by method='lln'.*method='mle', 'mm' or 'cgm' estimate from the "
                                         "'intervals' alone"):
        estimate_rates(np.zeros((2, 3)), np.ones((2, 3)))
    assert estimate_rates(np.zeros((2, 3)), np.ones((2, 3)), method="mle").shape == (2,)
