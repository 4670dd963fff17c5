"""The shared rotation geometry: NumPy helpers (fabrik.model.geometry) and the compiled ones they
mirror (fabrik.kernels.frames), checked against scipy and against each other."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from fabrik.kernels.frames import axis_angle_matrix, rotate_about
from fabrik.model.geometry import (axis_angle_matrices, kabsch, orthonormalise, relative_twist, rotations_between,
                                   swing_from_y, twist_about_y)


def _units(rng, count):
    v = rng.normal(size=(count, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_axis_angle_matrices_match_scipy_and_the_compiled_builder_and_rotation():
    rng = np.random.default_rng(1)
    axes, angles = _units(rng, 50), rng.uniform(-4.0, 4.0, 50)
    want = Rotation.from_rotvec(axes * angles[:, None]).as_matrix()
    np.testing.assert_allclose(axis_angle_matrices(axes, angles), want, atol=1e-14)
    R = np.empty((3, 3))
    for k, v in zip(range(50), _units(rng, 50)):
        axis_angle_matrix(R, axes[k, 0], axes[k, 1], axes[k, 2], angles[k])
        np.testing.assert_allclose(R, want[k], atol=1e-14)
        turned = rotate_about(*axes[k], np.cos(angles[k]), np.sin(angles[k]), *v)
        np.testing.assert_allclose(turned, want[k] @ v, atol=1e-14)


def test_rotations_between_and_swing_from_y_take_a_onto_b_by_the_smallest_turn():
    rng = np.random.default_rng(2)
    a, b = _units(rng, 50), _units(rng, 50)
    R = rotations_between(a, b)
    np.testing.assert_allclose(np.einsum("kij,kj->ki", R, a), b, atol=1e-12)
    angle = np.linalg.norm(Rotation.from_matrix(R).as_rotvec(), axis=1)
    np.testing.assert_allclose(angle, np.arccos(np.clip(np.einsum("ki,ki->k", a, b), -1, 1)), atol=1e-7)
    S = swing_from_y(b)
    np.testing.assert_allclose(S, rotations_between(np.broadcast_to([0.0, 1.0, 0.0], b.shape), b), atol=1e-12)
    np.testing.assert_allclose(swing_from_y(np.array([0.0, -1.0, 0.0])), np.diag([1.0, -1.0, -1.0]), atol=1e-15)


def test_a_swing_and_a_twist_put_back_together_give_the_rotation():
    M = Rotation.random(100, random_state=3).as_matrix()
    psi = twist_about_y(M)
    twist = axis_angle_matrices(np.broadcast_to([0.0, 1.0, 0.0], (100, 3)), psi)
    np.testing.assert_allclose(swing_from_y(M[:, :, 1]) @ twist, M, atol=1e-12)
    np.testing.assert_allclose(relative_twist(np.broadcast_to(np.eye(3), M.shape), M), psi, atol=1e-12)


def test_kabsch_recovers_a_rotation_and_orthonormalise_the_nearest_one():
    rng = np.random.default_rng(4)
    true = Rotation.random(20, random_state=4).as_matrix()
    b = rng.normal(size=(6, 3))
    a = np.einsum("fij,kj->fki", true, b)
    np.testing.assert_allclose(kabsch(a, b), true, atol=1e-12)
    np.testing.assert_allclose(kabsch(a, b, np.full(6, 0.5)), true, atol=1e-12)
    np.testing.assert_allclose(kabsch(a[3], b), true[3], atol=1e-12)
    noisy = true + rng.normal(0, 1e-7, true.shape)
    got = orthonormalise(noisy.copy())
    np.testing.assert_allclose(got @ np.swapaxes(got, 1, 2), np.broadcast_to(np.eye(3), got.shape), atol=1e-14)
    np.testing.assert_allclose(got, true, atol=1e-6)
    assert np.linalg.det(orthonormalise(np.diag([1.0, 1.0, -1.0]))) == pytest.approx(1.0)
