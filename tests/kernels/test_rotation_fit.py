"""The best-fit rotation kernels behind rigid groups and root frames (fabrik.kernels.rotation_fit)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik.kernels.rotation_fit import kabsch, kabsch_svd, nearly_collinear, refine_rotation


def _objective(rot, h):
    return float(np.trace(rot.T @ h))


def _assert_rotation(rot):
    np.testing.assert_allclose(rot @ rot.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(rot) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(2, 6), noise=st.sampled_from([0.0, 1e-6, 0.05, 1.0, 10.0]),
       scale=st.sampled_from([1e-4, 1.0, 1e4]))
def test_kabsch_finds_the_same_best_rotation_as_the_svd(seed, count, noise, scale):
    rng = np.random.default_rng(seed)
    src = rng.normal(size=(count, 3)) * scale
    true_rot = kabsch_svd(rng.normal(size=(3, 3)))
    dst = src @ true_rot.T + noise * scale * rng.normal(size=(count, 3))
    h = dst.T @ src
    rot = kabsch(h)
    _assert_rotation(rot)
    best = _objective(kabsch_svd(h), h)
    assert _objective(rot, h) >= best - 1e-10 * abs(best) - 1e-300
    if noise == 0.0:  # exact data: the rotation itself is recovered
        np.testing.assert_allclose(rot, true_rot, atol=1e-9)


def test_kabsch_on_reflections_and_degenerate_sums():
    # H with a negative determinant: the best proper rotation, not the reflection
    h = np.diag([1.0, 1.0, -1.0])
    np.testing.assert_allclose(kabsch(h), np.eye(3), atol=1e-12)
    h = np.diag([1.0, -1.0, -1.0])  # a half turn about x is exact
    np.testing.assert_allclose(kabsch(h), np.diag([1.0, -1.0, -1.0]), atol=1e-12)
    # nothing or one direction: any best rotation, a proper one, as good as the SVD's
    for h in (np.zeros((3, 3)), np.outer([1.0, 0, 0], [0, 1.0, 0]), np.outer([1.0, 2, 3], [3.0, 2, 1])):
        rot = kabsch(h)
        _assert_rotation(rot)
        assert _objective(rot, h) == pytest.approx(_objective(kabsch_svd(h), h), abs=1e-12)


def test_refine_rotation_stays_on_the_optimum_kabsch_finds():
    rng = np.random.default_rng(5)
    src = rng.normal(size=(4, 3))
    dst = src @ kabsch_svd(rng.normal(size=(3, 3))).T + 0.1 * rng.normal(size=(4, 3))
    h = dst.T @ src
    rot = kabsch(h)
    polished = rot.copy()
    refine_rotation(polished, h, 3)
    np.testing.assert_allclose(polished, rot, atol=1e-12)


def test_nearly_collinear_matches_the_singular_value_ratio_away_from_the_threshold():
    rng = np.random.default_rng(11)
    for _ in range(2000):
        ratio = 10 ** rng.uniform(-10, 0)
        h = rng.normal(size=(3, 3)) @ np.diag([1.0, ratio, ratio * rng.uniform()]) @ rng.normal(size=(3, 3))
        s = np.linalg.svd(h, compute_uv=False)
        if s[1] < 1e-7 * s[0]:
            assert nearly_collinear(h)
        elif s[1] > 1e-4 * s[0]:
            assert not nearly_collinear(h)
    assert nearly_collinear(np.zeros((3, 3)))
    assert nearly_collinear(np.outer([1.0, 2, 3], [0.5, 0, 1]))
    assert not nearly_collinear(np.eye(3))
