import numpy as np
import pytest

from freshcore._validation import (
    check_array,
    check_binary,
    check_choice,
    check_indices,
    check_int,
    check_same_length,
    check_scalar,
)


def test_scalar_ok_and_messages():
    assert check_scalar(2, "bandwidth", "f", low=0, low_inclusive=False) == 2.0
    assert check_scalar(np.float32(1.5), "x", "f") == 1.5
    assert check_scalar(np.array(3.0), "x", "f") == 3.0
    with pytest.raises(ValueError, match=r"The 'bandwidth' parameter of optimal_rates must be a finite number > 0. "
                                         r"Got -1.0 instead."):
        check_scalar(-1.0, "bandwidth", "optimal_rates", low=0, low_inclusive=False)
    with pytest.raises(ValueError, match="finite"):
        check_scalar(float("nan"), "x", "f")
    with pytest.raises(ValueError, match="finite"):
        check_scalar(float("inf"), "x", "f")
    assert check_scalar(float("inf"), "x", "f", allow_inf=True) == float("inf")
    with pytest.raises(TypeError, match="'x'"):
        check_scalar("1", "x", "f")
    with pytest.raises(TypeError):
        check_scalar(True, "x", "f")


def test_int():
    assert check_int(np.int64(3), "k", "f", low=0) == 3
    with pytest.raises(TypeError):
        check_int(3.0, "k", "f")
    with pytest.raises(ValueError, match=">= 1"):
        check_int(0, "k", "f", low=1)


def test_array_first_bad_index():
    a = check_array([1, 2, 3], "w", "f", low=0)
    assert a.dtype == np.float64 and a.flags.c_contiguous
    with pytest.raises(ValueError, match=r"w\[3\] = -1.0"):
        check_array([0, 1, 2, -1, -2], "w", "f", low=0)
    with pytest.raises(ValueError, match=r"w\[1\] = nan"):
        check_array([0, np.nan], "w", "f")
    with pytest.raises(ValueError, match=r"w\[0, 1\]"):
        check_array([[0, np.inf]], "w", "f", ndim=2)
    with pytest.raises(ValueError, match="empty"):
        check_array([], "w", "f")
    with pytest.raises(TypeError, match="dtype"):
        check_array(["a"], "w", "f")
    with pytest.raises(TypeError):
        check_array("abc", "w", "f")
    with pytest.raises(ValueError, match="1-D"):
        check_array([[1.0]], "w", "f")


def test_array_readonly_input_not_copied_needlessly():
    x = np.arange(5.0)
    x.setflags(write=False)
    y = check_array(x, "x", "f")
    assert np.shares_memory(x, y)
    z = check_array(x, "x", "f", copy=True)
    assert not np.shares_memory(x, z)


def test_binary():
    assert check_binary([True, False], "changed", "f").tolist() == [1, 0]
    assert check_binary([1.0, 0.0], "changed", "f").dtype == np.uint8
    with pytest.raises(ValueError, match=r"changed\[2\] = 2"):
        check_binary([0, 1, 2], "changed", "f")
    with pytest.raises(ValueError, match=r"changed\[0\] = nan"):
        check_binary([np.nan], "changed", "f")
    with pytest.raises(TypeError):
        check_binary(np.array(["1"]), "changed", "f")


def test_misc():
    assert check_same_length("f", a=np.zeros(3), b=np.zeros(3), c=None) == 3
    with pytest.raises(ValueError, match="same length"):
        check_same_length("f", a=np.zeros(3), b=np.zeros(2))
    assert check_choice("poisson", "model", "f", ("poisson", "periodic")) == "poisson"
    with pytest.raises(ValueError, match="'model'"):
        check_choice("x", "model", "f", ("poisson", "periodic"))
    assert check_indices([0, 2], "pages", "f", 3).dtype == np.intp
    with pytest.raises(ValueError, match=r"pages\[1\] = 3"):
        check_indices([0, 3], "pages", "f", 3)
    with pytest.raises(TypeError):
        check_indices([0.0], "pages", "f", 3)
