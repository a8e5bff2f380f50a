"""freshcore.special.lambertw against mpmath (both branches, tails, branch point) and scipy."""

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc
from hypothesis import given
from hypothesis import strategies as st

from freshcore.special import BRANCH_POINT, lambertw

mp.mp.dps = 40
RTOL = 1e-13
E_INV = -BRANCH_POINT  # double nearest 1/e


def ref(z, branch):
    """mpmath at the exact double z (W-1(0) = -inf by convention)."""
    out = []
    for x in np.asarray(z, dtype=float).ravel():
        if branch == -1 and x == 0.0:
            out.append(-np.inf)
        elif x == BRANCH_POINT:
            out.append(-1.0)  # documented: the double nearest -1/e is the branch point
        else:
            out.append(float(mp.lambertw(mp.mpf(float(x)), branch)))
    return np.array(out)


def rel_err(a, r):
    a, r = np.asarray(a), np.asarray(r)
    with np.errstate(invalid="ignore"):
        err = np.abs(a - r) / np.abs(r)
    err[(a == r)] = 0.0
    return err


def grid_w0():
    rng = np.random.default_rng(0)
    return np.concatenate(
        [
            np.logspace(-320, 308, 500),  # tiny (subnormal) to huge
            -np.logspace(-320, np.log10(E_INV) - 1e-9, 300),  # negative side down to near -1/e
            BRANCH_POINT + np.logspace(-17, -0.5, 300),  # approach to the branch point
            rng.uniform(-E_INV, 10.0, 300),
            [0.0, np.finfo(float).max, 5e-324, -5e-324],
        ]
    )


def grid_wm1():
    rng = np.random.default_rng(1)
    z = np.concatenate(
        [
            -np.logspace(-320, np.log10(E_INV) - 1e-9, 600),  # z -> 0- (W-1 -> -inf) incl. subnormals
            BRANCH_POINT + np.logspace(-17, -0.5, 300),
            rng.uniform(-E_INV, 0.0, 300),
            [-5e-324, -1e-300, -np.finfo(float).tiny],
        ]
    )
    return z[z < 0]


@pytest.mark.parametrize("branch,grid", [(0, grid_w0), (-1, grid_wm1)])
def test_against_mpmath_whole_domain(branch, grid):
    z = grid()
    z = z[z > BRANCH_POINT]
    err = rel_err(lambertw(z, branch), ref(z, branch))
    i = int(np.argmax(err))
    assert err[i] <= RTOL, (z[i], err[i])


@pytest.mark.parametrize("branch", [0, -1])
def test_branch_point_no_worse_than_scipy(branch):
    """Within 1e-6 of -1/e the error is at the rounding level, and never above scipy's."""
    z = np.unique(BRANCH_POINT + np.logspace(-17, -6, 200))
    z = z[z > BRANCH_POINT]  # z == BRANCH_POINT is our convention (scipy: nan), tested below
    r = ref(z, branch)
    ours = rel_err(lambertw(z, branch), r)
    theirs = rel_err(sc.lambertw(z, branch).real, r)
    assert ours.max() <= theirs.max()
    assert np.all(ours <= np.maximum(theirs, 2.3e-16))
    # within the conditioning of W at the branch point: |dW/dz| z / W ~ 1/|1+W| times eps
    cond = np.abs(1.0 / (1.0 + r))
    assert np.all(ours <= 4 * np.finfo(float).eps * np.maximum(cond, 1.0))


def test_tiny_z_is_identity_to_rounding():
    z = np.array([1e-300, -1e-300, 5e-324, -5e-324, 1e-20, -1e-20])
    np.testing.assert_array_equal(lambertw(z), z)


def test_special_values():
    assert lambertw(0.0) == 0.0
    assert lambertw(np.inf) == np.inf
    assert lambertw(0.0, branch=-1) == -np.inf
    assert lambertw(BRANCH_POINT) == -1.0
    assert lambertw(BRANCH_POINT, branch=-1) == -1.0
    assert lambertw(np.e) == pytest.approx(1.0, rel=1e-15)
    assert lambertw(-np.exp(-2.0) * 2.0, branch=-1) == pytest.approx(-2.0, rel=1e-15)


@given(st.floats(min_value=BRANCH_POINT, max_value=1e300, allow_nan=False), st.sampled_from([0, -1]))
def test_hypothesis_inverse(z, branch):
    if branch == -1 and z >= 0:
        z = -abs(z) / (1.0 + abs(z)) * E_INV
    if z == 0 and branch == -1:
        return
    w = lambertw(z, branch)
    assert rel_err(np.array([w]), ref([z], branch))[0] <= RTOL
    if branch == 0:
        assert w >= -1.0
    else:
        assert w <= -1.0


def test_scalar_array_and_out():
    assert isinstance(lambertw(1.0), float)
    assert isinstance(lambertw(np.float64(1.0)), float)
    assert isinstance(lambertw(np.array(1.0)), float)
    z = np.linspace(-0.3, 3.0, 12).reshape(3, 4)
    w = lambertw(z)
    assert w.shape == (3, 4)
    out = np.empty((3, 4))
    assert lambertw(z, out=out) is out
    np.testing.assert_array_equal(out, w)
    np.testing.assert_allclose(w * np.exp(w), z, rtol=1e-14, atol=1e-300)
    ro = z.copy()
    ro.flags.writeable = False
    np.testing.assert_array_equal(lambertw(ro), w)
    assert lambertw(np.array([])).shape == (0,)
    np.testing.assert_array_equal(lambertw([1, 2]), lambertw([1.0, 2.0]))  # integer input


@pytest.mark.parametrize(
    "z,branch,match",
    [
        ([1.0, -0.5, 2.0], 0, r"z\[1\] = -0.5"),
        ([-0.1, 0.5], -1, r"z\[1\] = 0.5"),
        ([0.0, np.nan], 0, r"z\[1\] = nan"),
        ([-np.inf], 0, r"z\[0\] = -inf"),
        ([-0.2, -np.inf], -1, r"z\[1\] = -inf"),
        (-0.4, 0, "'z' parameter of lambertw"),
        (0.1, -1, "'z' parameter of lambertw"),
        (np.nan, 0, "'z' parameter of lambertw"),
    ],
)
def test_bad_z(z, branch, match):
    with pytest.raises(ValueError, match=match):
        lambertw(z, branch)


def test_bad_branch_and_types():
    with pytest.raises(ValueError, match="'branch' parameter of lambertw must be one of 0, -1"):
        lambertw(1.0, branch=1)
    with pytest.raises(TypeError, match="'branch'"):
        lambertw(1.0, branch=0.0)
    with pytest.raises(TypeError, match="'branch'"):
        lambertw(1.0, branch=True)
    with pytest.raises(TypeError, match="'z'"):
        lambertw("1.0")
    with pytest.raises(TypeError, match="'z'"):
        lambertw(np.array(["a"]))
    with pytest.raises(TypeError, match="'z'"):
        lambertw(np.array([1 + 1j]))


def test_bad_out():
    z = np.ones(3)
    with pytest.raises(ValueError, match=r"'out'.*shape"):
        lambertw(z, out=np.empty(4))
    with pytest.raises(TypeError, match=r"'out'.*float64"):
        lambertw(z, out=np.empty(3, dtype=np.float32))
    with pytest.raises(TypeError, match="'out'"):
        lambertw(z, out=[0.0, 0.0, 0.0])
    ro = np.empty(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"'out'.*writeable"):
        lambertw(z, out=ro)
