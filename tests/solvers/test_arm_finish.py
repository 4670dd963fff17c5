"""Robot arms at tight tolerances and near their seed: FABRIK's Newton finish, ``nearest``
(answers close to ``initial``, tracking), answers exactly on the limits (issue 40.6) and
``reached`` decided on the orientation error that ``extras`` reports (issue 40.7)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik import Arm

PI = math.pi
BUDGET = 60.0  # restarts, not the machine's speed, decide (tests never check wall-clock time)
METHODS = ("fabrik", "ccd", "jacobian-dls")


def xarm7_like() -> Arm:
    """UFactory xArm 7's modified DH table (metres), as in tests/solvers/test_robot.py."""
    rows = [(0, .267, 0, 0), (0, 0, -PI / 2, 0), (0, .293, PI / 2, 0), (0, 0, PI / 2, .0525),
            (0, .3425, PI / 2, .0775), (0, 0, PI / 2, 0), (0, .097, -PI / 2, .076)]
    limits = [(-2 * PI, 2 * PI), (-2.059, 2.0944), (-2 * PI, 2 * PI), (-0.19198, 3.927), (-2 * PI, 2 * PI),
              (-1.69297, PI), (-2 * PI, 2 * PI)]
    return Arm.from_dh(rows, convention="modified", limits=limits)


def ur10_like() -> Arm:
    rows = [(0, .1273, PI / 2, 0), (0, 0, 0, -.612), (0, 0, 0, -.5723), (0, .163941, PI / 2, 0),
            (0, .1157, -PI / 2, 0), (0, .0922, 0, 0)]
    return Arm.from_dh(rows, limits=[(-2 * PI, 2 * PI)] * 6)


def exact_angle(frame, rotation) -> float:
    """The angle between two frames, computed independently of the library (scipy's quaternion
    magnitude: accurate near 0)."""
    return float(Rotation.from_matrix(np.asarray(frame).T @ rotation).magnitude())


def test_the_newton_finish_reaches_tight_tolerances():
    arm = xarm7_like()
    positions, frames = fabrik.forward(arm, arm.random_angles(np.random.default_rng(2), 40))
    start = arm.clip(np.zeros(7))
    for p, r in zip(positions[:, -1], frames[:, -1]):
        sol = fabrik.solve(arm, (p, r), initial=start, tol=1e-10, orientation_tol=1e-10, time_budget=BUDGET)
        assert sol.reached and sol.extras["newton_steps"] >= 1
        assert np.linalg.norm(fabrik.forward(arm, sol.joint_angles).positions[-1] - p) <= 1e-10
        assert exact_angle(sol.extras["frames"][-1], r) <= 1e-10 + 1e-15
    # FABRIK alone (finish=False): no Newton steps; FABRIK's linear convergence still gets there at 1e-5
    plain = fabrik.solve(arm, (p, r), initial=start, tol=1e-5, orientation_tol=1e-5, finish=False,
                         time_budget=BUDGET)
    assert plain.extras["newton_steps"] == 0 and plain.reached
    with pytest.raises(ValueError, match="finish must be True or False"):
        fabrik.solve(arm, p, finish="yes")
    assert "Newton" in fabrik.method("fabrik").arm.solve.__doc__ + fabrik.method("fabrik-revolute").summary


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(METHODS), st.booleans())
def test_answers_sit_on_the_limits_exactly_never_past_them(seed, method, wide):
    """Issue 40.6: every answer within [lower, upper] with no tolerance (CCD answered 1e-16 below a
    lower limit); starts far outside the limits, targets often out of reach, so that answers
    press against the limits."""
    rng = np.random.default_rng(seed)
    arm = xarm7_like() if wide else Arm.from_dh(
        [(0, .3, PI / 2, 0), (0, 0, -PI / 2, .4), (0, 0, PI / 2, .3), (0, .2, 0, 0)],
        limits=[sorted(rng.uniform(-1.5, 1.5, 2)) for _ in range(4)])
    start = rng.uniform(arm.lower - 3.0, arm.upper + 3.0)
    q_goal = arm.random_angles(rng)
    positions, frames = fabrik.forward(arm, q_goal)
    for target in ((positions[-1], frames[-1]), rng.normal(size=3) * arm.reach * 1.5):
        sol = fabrik.solve(arm, target, initial=start, method=method, tol=1e-6, time_budget=BUDGET)
        q = sol.joint_angles
        assert arm.within_limits(q, tol=0.0), (q - arm.lower, arm.upper - q)
        assert ((q >= arm.lower) & (q <= arm.upper)).all()


def test_ccd_on_the_human_arm_answers_within_its_limits(urdf_dir):
    arm = fabrik.load_urdf(urdf_dir / "human.urdf", tip="right_hand", base="middle_thorax")
    positions, frames = fabrik.forward(arm, arm.random_angles(np.random.default_rng(40), 300))
    for p, r in zip(positions[:, -1], frames[:, -1]):
        sol = fabrik.solve(arm, (p, r), method="ccd", tol=1e-4)
        assert arm.within_limits(sol.joint_angles)  # tol 0: on a limit at most, never 1 ulp past it


@pytest.mark.parametrize("method", METHODS)
def test_reached_is_decided_on_the_reported_orientation_error(method):
    """Issue 40.7: with orientation_tol=0 a solve reported ``reached`` with 1e-8 rad of error while
    extras said 0.0 (arccos of the trace rounds small angles to 0). The reported error is now
    the accurate angle, and reached means both reported errors are within the tolerances."""
    arm = ur10_like()
    positions, frames = fabrik.forward(arm, arm.random_angles(np.random.default_rng(5), 35))
    for p, r in zip(positions[:, -1], frames[:, -1]):
        for otol in (0.0, 1e-9, 1e-6):
            sol = fabrik.solve(arm, (p, r), method=method, tol=1e-3, orientation_tol=otol, time_budget=0.2,
                               restarts=2)
            reported = sol.extras["orientation_error"]
            assert reported == pytest.approx(exact_angle(sol.extras["frames"][-1], r), rel=1e-6, abs=1e-15)
            assert sol.reached == (sol.error <= 1e-3 and reported <= otol)
            if sol.reached and otol == 0.0:
                assert exact_angle(sol.extras["frames"][-1], r) <= 1e-15


def test_a_tiny_orientation_error_is_measured_not_rounded_to_zero():
    from fabrik.model.arm import tip_errors

    arm = ur10_like()
    q = arm.random_angles(3)
    positions, frames = fabrik.forward(arm, q)
    for angle in (1e-4, 1e-8, 1e-11):
        turned = Rotation.from_rotvec([0.0, 0.0, angle]).as_matrix() @ frames[-1]
        assert tip_errors(arm, q, positions[-1], turned)[1] == pytest.approx(angle, rel=1e-6)


def test_nearest_prefers_the_answer_closest_to_initial():
    # a planar two-link arm: every reachable point has an elbow-up and an elbow-down answer
    origins = np.tile(np.eye(4), (2, 1, 1))
    origins[1, 0, 3] = 1.0
    tip = np.eye(4)
    tip[0, 3] = 1.0
    arm = Arm(["shoulder", "elbow"], [[0, 0, 1.0], [0, 0, 1.0]], origins, tip, [-PI, -3.0], [PI, 3.0])
    target = fabrik.forward(arm, [0.4, 1.2]).positions[-1]  # the other answer: (1.6, -1.2)
    for start, want in (([0.3, 1.0], [0.4, 1.2]), ([1.7, -1.0], [1.6, -1.2])):
        sol = fabrik.solve(arm, target, initial=start, nearest=True, tol=1e-9)
        assert sol.reached and np.allclose(sol.joint_angles, want, atol=1e-6), sol.joint_angles
    # from far away (no Newton path from the start): the nearest of the answers found
    far = fabrik.solve(arm, target, initial=[-2.0, -2.9], nearest=True, tol=1e-9, time_budget=BUDGET)
    assert far.reached and np.allclose(far.joint_angles, [1.6, -1.2], atol=1e-6)
    with pytest.raises(ValueError, match="nearest must be True or False"):
        fabrik.solve(arm, target, nearest=1)


def test_nearest_folds_whole_turns_onto_the_start():
    arm = ur10_like()  # every joint +-2 pi: each angle and the angle 2 pi away are the same pose
    q = np.array([0.5, -1.0, 1.2, -0.7, 1.1, 0.4])
    positions, frames = fabrik.forward(arm, q)
    start = q + np.array([2 * PI, 0, 0, 0, 0, -2 * PI]) + 0.3  # far from Newton's reach of q itself
    sol = fabrik.solve(arm, (positions[-1], frames[-1]), initial=start, nearest=True, tol=1e-6,
                       time_budget=BUDGET)
    assert sol.reached and np.abs(sol.joint_angles - start).max() < PI


def smooth_path(arm, n, rng):
    """A smooth random path of joint values within the limits: each joint a sum of three slow
    sinusoids about the middle of its range."""
    low, span = arm.random_ranges()
    t = np.linspace(0.0, 1.0, n)[:, None]
    m = arm.n_joints
    freq, phase, amp = rng.uniform(0.5, 2.0, (3, m)), rng.uniform(0, 2 * PI, (3, m)), rng.uniform(0.2, 1.0, (3, m))
    wave = sum(amp[i] * np.sin(2 * PI * freq[i] * t + phase[i]) for i in range(3)) / amp.sum(axis=0)
    return low + span / 2 + 0.45 * span * wave


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_tracking_with_nearest_never_jumps(seed):
    """The path's own joint values are a continuous solution; the answers, each from the last,
    stay continuous (no joint moves over 0.1 rad between consecutive answers), on the path's
    branch through poses near singular ones (``_nearest_branch``)."""
    arm = ur10_like()
    path = smooth_path(arm, 1000, np.random.default_rng(seed))
    positions, frames = fabrik.forward(arm, path)
    q = path[0]
    for k in range(path.shape[0]):
        sol = fabrik.solve(arm, (positions[k, -1], frames[k, -1]), initial=q, tol=1e-5, orientation_tol=1e-5,
                           nearest=True, time_budget=BUDGET)
        assert sol.reached
        assert np.abs(sol.joint_angles - q).max() <= 0.1, k
        q = sol.joint_angles
    np.testing.assert_allclose(q, path[-1], atol=1e-4)  # still on the path's own branch
