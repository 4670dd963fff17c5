"""FABRIK on the DHM study's arm: oriented and position targets, joint angles in and out."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik import models


@pytest.fixture(scope="module")
def arm():
    return models.dhm_arm()


def pose_errors(arm, q, target, rotation):
    """Tip position error (model units) and orientation error (degrees) of angles q, judged by the
    DH product (``fabrik.forward``), not by the solver's own report."""
    positions, frames = fabrik.forward(arm, q)
    rel = frames[-1].T @ rotation
    angle = math.degrees(math.acos(min(1.0, max(-1.0, (np.trace(rel) - 1.0) / 2.0))))
    return float(np.linalg.norm(positions[-1] - target)), angle


def test_random_reachable_oriented_targets_are_reached(arm):
    rng = np.random.default_rng(7)
    qs = arm.random_angles(rng, 300)
    positions, frames = fabrik.forward(arm, qs)
    reached = 0
    for k in range(qs.shape[0]):
        sol = fabrik.solve(arm, (positions[k, -1], frames[k, -1]), tol=1e-3 * arm.reach)
        err, angle = pose_errors(arm, sol.joint_angles, positions[k, -1], frames[k, -1])
        reached += err <= 1e-3 * arm.reach and angle <= 0.5
        assert arm.within_limits(sol.joint_angles)
    assert reached >= 0.99 * qs.shape[0]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans())
def test_joint_angles_reproduce_the_solved_pose(seed, oriented):
    arm = models.dhm_arm()
    rng = np.random.default_rng(seed)
    q_goal, q_start = arm.random_angles(rng, 2)
    positions, frames = fabrik.forward(arm, q_goal)
    target = (positions[-1], Rotation.from_matrix(frames[-1])) if oriented else positions[-1]
    sol = fabrik.solve(arm, target, initial=q_start)
    again, again_frames = fabrik.forward(arm, sol.joint_angles)
    np.testing.assert_allclose(again, sol.positions, atol=1e-9 * arm.reach, rtol=0)
    np.testing.assert_allclose(again_frames, sol.extras["frames"], atol=1e-9, rtol=0)
    assert arm.within_limits(sol.joint_angles)
    assert np.isfinite(sol.joint_angles).all()
    assert sol.reached, sol
    if oriented:
        assert sol.extras["orientation_error"] <= 1e-3


def test_tracking_keeps_the_elbow_swivel_and_moves_little(arm):
    rng = np.random.default_rng(3)
    a, b = arm.random_angles(rng, 2)
    path = np.array([a + (b - a) * s for s in np.linspace(0.0, 0.2, 40)])
    positions, frames = fabrik.forward(arm, path)
    q = path[0]
    elbow = positions[0, 3]
    for k in range(path.shape[0]):
        sol = fabrik.solve(arm, (positions[k, -1], frames[k, -1]), initial=q)
        assert sol.reached
        # no branch flips from frame to frame (near a gimbal lock of the shoulder, q1 = -pi/2 here,
        # its first and third angles trade larger amounts), and the elbow moves as little as the
        # recorded one
        assert np.abs(sol.joint_angles - q).max() < 1.0  # a flip of a spherical joint turns pi
        assert np.linalg.norm(sol.positions[3] - elbow) <= 2.0 * np.linalg.norm(positions[k, 3] - positions[max(k - 1, 0), 3]) + 1e-6
        q, elbow = sol.joint_angles, sol.positions[3]


def test_position_targets_keep_the_hand_roll(arm):
    rng = np.random.default_rng(4)
    q_goal, q_start = arm.random_angles(rng, 2)
    goal = fabrik.forward(arm, q_goal).positions[-1]
    sol = fabrik.solve(arm, goal, initial=q_start)
    assert sol.reached and "orientation_error" not in sol.extras
    assert np.linalg.norm(sol.positions[-1] - goal) <= 1e-3


def test_statuses_out_of_reach_and_inside_the_elbow_range(arm):
    far = fabrik.solve(arm, ([3.0 * arm.reach, 0.0, 0.0], np.eye(3)))
    assert far.status == "unreachable"
    assert far.iterations == 1
    # the elbow folds to 120 degrees at most: the wrist cannot come to the shoulder
    close = fabrik.solve(arm, [0.5, 0.0, 0.0])
    assert close.status == "stalled"
    assert close.joint_angles[3] == pytest.approx(2.0 * math.pi / 3.0)
    assert arm.within_limits(close.joint_angles)


def test_bad_inputs_are_named(arm):
    with pytest.raises(ValueError, match="rotation"):
        fabrik.solve(arm, ([10.0, 0.0, 0.0], np.ones((3, 3))))
    with pytest.raises(ValueError, match="non-finite"):
        fabrik.solve(arm, [10.0, np.nan, 0.0])
    with pytest.raises(ValueError, match="initial.*shape|q must have shape"):
        fabrik.solve(arm, [10.0, 0.0, 0.0], initial=np.zeros(6))
    with pytest.raises(ValueError, match="non-finite"):
        fabrik.solve(arm, [10.0, 0.0, 0.0], initial=[0, 0, 0, np.nan, 0, 0, 0])
    with pytest.raises(ValueError, match="base is fixed"):
        fabrik.solve(arm, [10.0, 0.0, 0.0], root=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="orientation_tol"):
        fabrik.solve(arm, [10.0, 0.0, 0.0], orientation_tol=-1.0)
    six = fabrik.Arm.from_dh([(0.0, 0.0, math.pi / 2, 0.0), (0.0, 0.0, math.pi / 2, 0.0), (0.0, 30.0, 0.0, 0.0),
                              (0.0, 0.0, math.pi / 2, 0.0), (0.0, 0.0, 0.0, 20.0), (0.0, 10.0, 0.0, 0.0)])
    # any other arm is FABRIK on link frames (tests/solvers/test_robot.py); its own options are checked
    assert fabrik.solve(six, [10.0, 0.0, 0.0]).joint_angles.shape == (6,)
    with pytest.raises(ValueError, match="restarts"):
        fabrik.solve(six, [10.0, 0.0, 0.0], restarts=-1)
    with pytest.raises(ValueError, match="time_budget"):
        fabrik.solve(six, [10.0, 0.0, 0.0], time_budget=0.0)
    with pytest.raises(ValueError, match="unknown method"):
        fabrik.solve(arm, [10.0, 0.0, 0.0], method="triangulation")


def test_the_kernel_pack_holds_the_arm(arm):
    from fabrik.kernels.arm_ik import _unpack
    from fabrik.solvers.arm import srs_shape

    shape = srs_shape(arm)
    axes, origins, tip, lower, upper, wrist_in_tip, gaps = _unpack(shape.pack)
    for got, want in ((axes, arm.axes), (origins, arm.origins), (tip, arm.tip), (lower, arm.lower),
                      (upper, arm.upper), (wrist_in_tip, shape.wrist_in_tip), (gaps, shape.gaps)):
        np.testing.assert_array_equal(got, want)
    assert shape.pack[-1] == arm.reach


def test_the_kernel_pack_takes_only_a_seven_joint_arm(arm):
    from fabrik.kernels.arm_ik import srs_pack

    axes, origins, tip, _ = arm._kernel
    with pytest.raises(ValueError, match="7-joint"):
        srs_pack(axes[:6], origins[:6], tip, arm.lower[:6], arm.upper[:6], np.zeros(3), np.zeros(2), 1.0)


@pytest.mark.parametrize("oriented", [True, False])
def test_each_answer_is_new_arrays_and_the_inputs_stay_as_they_were(arm, oriented):
    qs = arm.random_angles(np.random.default_rng(11), 3)
    positions, frames = fabrik.forward(arm, qs)
    kept = [a.copy() for a in (positions, frames, qs)]
    solutions = []
    for k in range(2):
        target = (positions[k, -1], frames[k, -1]) if oriented else positions[k, -1]
        solutions.append(fabrik.solve(arm, target, initial=qs[2]))
    first_pose = [solutions[0].joint_angles.copy(), solutions[0].positions.copy(), solutions[0].extras["frames"].copy()]
    solutions.append(fabrik.solve(arm, (positions[2, -1], frames[2, -1]) if oriented else positions[2, -1]))
    for a, b in zip(kept, (positions, frames, qs)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first_pose[0], solutions[0].joint_angles)
    np.testing.assert_array_equal(first_pose[1], solutions[0].positions)
    np.testing.assert_array_equal(first_pose[2], solutions[0].extras["frames"])
    one, two = solutions[0], solutions[1]
    for a, b in ((one.joint_angles, two.joint_angles), (one.positions, two.positions),
                 (one.extras["frames"], two.extras["frames"])):
        assert not np.shares_memory(a, b)
    assert not np.shares_memory(solutions[2].joint_angles, arm.lower)


def test_every_spelling_of_a_pose_target_gives_the_same_angles(arm):
    q = arm.random_angles(np.random.default_rng(5))
    positions, frames = fabrik.forward(arm, q)
    p, R = positions[-1], frames[-1]
    base = fabrik.solve(arm, (p, R))
    xyzw = Rotation.from_matrix(R).as_quat()
    transform = np.eye(4)
    transform[:3, :3], transform[:3, 3] = R, p
    for target in ((list(p), R), (tuple(p), R.tolist()), (p, Rotation.from_matrix(R)),
                   (p, fabrik.quat_xyzw(xyzw)), (p, fabrik.quat_wxyz(np.r_[xyzw[3], xyzw[:3]])),
                   (p, fabrik.quat_xyzw(list(xyzw))), (p.astype(np.float32), np.asfortranarray(R)), transform,
                   transform.tolist(), np.asfortranarray(transform.astype(np.float32))):
        sol = fabrik.solve(arm, target)
        np.testing.assert_allclose(sol.joint_angles, base.joint_angles, atol=1e-6, rtol=0)
        assert sol.status == base.status
    assert "orientation_error" in base.extras and "orientation_error" not in fabrik.solve(arm, p).extras


def test_a_quaternion_must_say_its_order(arm):
    p, R = (x[-1] for x in fabrik.forward(arm, arm.random_angles(2)))
    xyzw = Rotation.from_matrix(R).as_quat()
    wxyz = np.r_[xyzw[3], xyzw[:3]]
    for raw in (xyzw, wxyz, list(wxyz), tuple(xyzw)):
        with pytest.raises(ValueError, match=r"quat_xyzw\(q\) for \(x, y, z, w\).*quat_wxyz\(q\) for \(w, x, y, z\)"):
            fabrik.solve(arm, (p, raw))
    np.testing.assert_allclose(fabrik.quat_wxyz(wxyz), R, atol=1e-15)
    np.testing.assert_allclose(fabrik.quat_xyzw(xyzw), R, atol=1e-15)
    np.testing.assert_allclose(fabrik.quat_xyzw(3.0 * xyzw), R, atol=1e-15)  # normalised
    many = Rotation.random(5, random_state=3)
    np.testing.assert_allclose(fabrik.quat_xyzw(many.as_quat()), many.as_matrix(), atol=1e-15)
    for bad, words in (([0, 0, 0, 0], "zero quaternion"), ([1, 2, 3], r"shape \(4,\) or \(N, 4\)"),
                       ([np.nan, 0, 0, 1], "non-finite"), ("abcd", "4 numbers")):
        with pytest.raises(ValueError, match=words):
            fabrik.quat_wxyz(bad)


def test_a_transform_target_is_checked(arm):
    p, R = (x[-1] for x in fabrik.forward(arm, arm.random_angles(2)))
    transform = np.eye(4)
    transform[:3, :3], transform[:3, 3] = R, p
    for change, words in (((3, 0), "last row must be"), ((0, 0), "must be a rotation"), ((1, 3), "non-finite")):
        bad = transform.copy()
        bad[change] = np.nan if words == "non-finite" else 0.5
        with pytest.raises(ValueError, match=words):
            fabrik.solve(arm, bad)
