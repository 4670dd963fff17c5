"""Prismatic joints in ``fabrik.Arm``: DH rows with a variable d, URDF ``prismatic`` joints (a SCARA
arm, a gantry, the Panda on a rail), forward kinematics against a product of 4x4 matrices and
against yourdfpy, every arm method sliding within the limits, pose targets reached, save/load."""

import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik import Arm, load_urdf, save_urdf
from fabrik_experiments.prismatic_robots import gantry_urdf, on_rail, scara_urdf

PI = math.pi
HALF_DEGREE = math.radians(0.5)
BUDGET = 60.0  # restarts, not the machine's speed, decide (tests never check wall-clock time)


def transform(rot=np.eye(3), xyz=(0.0, 0.0, 0.0)):
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = rot, xyz
    return t


def product(arm, q):
    """The tip transform of q by 4x4 matrices, joint by joint (the Arm's definition)."""
    t = np.eye(4)
    for k in range(arm.n_joints):
        a = arm.axes[k]
        motion = transform(xyz=a * q[k]) if arm.prismatic[k] else transform(Rotation.from_rotvec(a * q[k]).as_matrix())
        t = t @ arm.origins[k] @ motion
    return t @ arm.tip


def pose_errors(arm, q, position, rotation):
    positions, frames = fabrik.forward(arm, q)
    return float(np.linalg.norm(positions[-1] - position)), float(Rotation.from_matrix(frames[-1].T @ rotation)
                                                                  .magnitude())


SCARA_DH = [(0.0, 0.4, 0.0, 0.4), (0.0, 0.0, PI, 0.3), (0.0, 0.0, 0.0, 0.0), (0.0, 0.05, 0.0, 0.0)]
SCARA_LIMITS = [(-2.5, 2.5), (-2.6, 2.6), (0.0, 0.3), (-2 * PI, 2 * PI)]


def test_dh_rows_with_a_variable_d():
    arm = Arm.from_dh(SCARA_DH, limits=SCARA_LIMITS, joint_types="RRPR")
    assert arm.joint_types == ("revolute", "revolute", "prismatic", "revolute")
    np.testing.assert_array_equal(arm.prismatic, [False, False, True, False])
    q = np.array([0.3, -0.4, 0.2, 1.0])
    # standard DH: A_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i), the slide adding q to d_3
    t = np.eye(4)
    for (theta, d, alpha, a), value, kind in zip(SCARA_DH, q, "RRPR"):
        theta, d = (theta + value, d) if kind == "R" else (theta, d + value)
        t = t @ transform(Rotation.from_euler("z", theta).as_matrix()) @ transform(xyz=(0, 0, d)) \
            @ transform(xyz=(a, 0, 0)) @ transform(Rotation.from_euler("x", alpha).as_matrix())
    positions, frames = fabrik.forward(arm, q)
    np.testing.assert_allclose(positions[-1], t[:3, 3], atol=1e-15)
    np.testing.assert_allclose(frames[-1], t[:3, :3], atol=1e-15)
    # the slide moves the tip along z_2 by q[2], the frames' rotations unchanged
    moved, moved_frames = fabrik.forward(arm, q + [0, 0, 0.1, 0])
    np.testing.assert_allclose(moved[-1] - positions[-1], 0.1 * frames[2][:, 2], atol=1e-15)
    np.testing.assert_allclose(moved_frames, frames, atol=0)
    assert arm.bone_lengths[2] == pytest.approx(0.3)  # the slide, longest at its far limit
    assert arm.reach == pytest.approx(arm.bone_lengths.sum())


def test_prismatic_joints_need_finite_limits_and_name_the_problem():
    origins = np.tile(np.eye(4), (2, 1, 1))
    with pytest.raises(ValueError, match="prismatic joint 1 .'b'. needs finite lower and upper limits"):
        Arm(["a", "b"], np.eye(3)[:2], origins, np.eye(4), [-1, -np.inf], [1, 0.5],
            joint_types=["revolute", "prismatic"])
    with pytest.raises(ValueError, match=r"joint_types\[1\] must be one of"):
        Arm(["a", "b"], np.eye(3)[:2], origins, np.eye(4), joint_types=["revolute", "slider"])
    with pytest.raises(ValueError, match="joint_types as a string must be 4 letters"):
        Arm.from_dh(SCARA_DH, limits=SCARA_LIMITS, joint_types="RRXR")
    with pytest.raises(ValueError, match=r"upper\[0\] is 1e\+308: finite limits must lie within"):
        Arm(["a"], [[0, 0, 1]], origins[:1], np.eye(4), [-1.0], [1e308])


def test_mirrored_and_scaled_arms_with_slides():
    arm = Arm.from_dh(SCARA_DH, limits=SCARA_LIMITS, joint_types="RRPR")
    q = arm.random_angles(3)
    positions, frames = fabrik.forward(arm, q)
    s = np.diag([1.0, -1.0, 1.0])
    mirror = fabrik.forward(arm.mirrored([0, 1, 0]), q)
    np.testing.assert_allclose(mirror.positions, positions @ s, atol=1e-14)
    half = arm.scaled(0.5)
    assert half.upper[2] == 0.15 and half.upper[0] == arm.upper[0]  # slides scale, angles do not
    np.testing.assert_allclose(fabrik.forward(half, q * [1, 1, 0.5, 1]).positions, 0.5 * positions, atol=1e-15)


ROBOTS = {"scara": (scara_urdf, "tool"), "gantry": (gantry_urdf, "tool")}


def _robot_text(name, urdf_dir=None):
    if name == "panda on a rail":
        return on_rail((urdf_dir / "panda.urdf").read_text(), "panda_link0"), "panda_hand"
    make, tip = ROBOTS[name]
    return make(), tip


@pytest.mark.parametrize("name", ["scara", "gantry", "panda on a rail"])
def test_urdf_prismatic_joints_match_yourdfpy(name, request):
    import yourdfpy

    urdf_dir = request.getfixturevalue("urdf_dir") if name == "panda on a rail" else None
    text, tip = _robot_text(name, urdf_dir)
    arm = load_urdf(text, tip=tip)
    assert arm.prismatic.any()
    model = yourdfpy.URDF.load(io.BytesIO(text.encode()), load_meshes=False, build_collision_scene_graph=False,
                               load_collision_meshes=False)
    qs = arm.random_angles(np.random.default_rng(7), 50)
    positions, frames = fabrik.forward(arm, qs)
    for q, p, f in zip(qs, positions, frames):
        model.update_cfg(dict(zip(arm.joint_names, q)))
        got = model.get_transform(arm.tip_name, arm.base_name)
        np.testing.assert_allclose(p[-1], got[:3, 3], rtol=0, atol=1e-12)
        np.testing.assert_allclose(f[-1], got[:3, :3], rtol=0, atol=1e-12)
        np.testing.assert_allclose(product(arm, q), got, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["scara", "gantry", "panda on a rail"])
def test_pose_targets_on_prismatic_robots_are_reached(name, request):
    urdf_dir = request.getfixturevalue("urdf_dir") if name == "panda on a rail" else None
    text, tip = _robot_text(name, urdf_dir)
    arm = load_urdf(text, tip=tip)
    rng = np.random.default_rng(11)
    goals = arm.random_angles(rng, 60)
    positions, frames = fabrik.forward(arm, goals)
    start = arm.clip(np.zeros(arm.n_joints))
    reached = 0
    for p, r in zip(positions[:, -1], frames[:, -1]):
        for tol, otol in ((1e-3, HALF_DEGREE), (1e-5, 1e-5)):
            sol = fabrik.solve(arm, (p, r), initial=start, tol=tol, orientation_tol=otol, time_budget=BUDGET)
            assert arm.within_limits(sol.joint_angles)
            err, angle = pose_errors(arm, sol.joint_angles, p, r)
            assert sol.reached == (err <= tol and angle <= otol)
            reached += sol.reached
    assert reached >= 0.99 * 120


def test_save_urdf_writes_prismatic_joints(tmp_path):
    arm = Arm.from_dh(SCARA_DH, limits=SCARA_LIMITS, joint_types="RRPR")
    save_urdf(tmp_path / "scara.urdf", arm)
    text = (tmp_path / "scara.urdf").read_text()
    assert 'type="prismatic"' in text
    back = load_urdf(tmp_path / "scara.urdf", tip="tip")
    assert back.joint_types == arm.joint_types
    q = arm.random_angles(np.random.default_rng(1), 20)
    np.testing.assert_allclose(fabrik.forward(back, q).positions, fabrik.forward(arm, q).positions, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(["fabrik", "ccd", "jacobian-dls"]), st.booleans())
def test_every_method_slides_within_the_limits(seed, method, oriented):
    arm = load_urdf(gantry_urdf(), tip="tool")
    rng = np.random.default_rng(seed)
    goal = arm.random_angles(rng)
    start = rng.uniform(arm.lower - 0.5, arm.upper + 0.5)  # outside the limits: clipped
    positions, frames = fabrik.forward(arm, goal)
    target = (positions[-1], frames[-1]) if oriented else positions[-1]
    sol = fabrik.solve(arm, target, initial=start, method=method, tol=1e-4, time_budget=BUDGET)
    assert arm.within_limits(sol.joint_angles) and np.isfinite(sol.joint_angles).all()
    again = fabrik.forward(arm, sol.joint_angles)
    np.testing.assert_allclose(again.positions, sol.positions, atol=1e-12)
    if method == "fabrik":
        assert sol.reached, sol
