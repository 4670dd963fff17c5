"""Closed loops on skeletons (section 4.2): two hands holding one object, a hand attached to
another joint (``fabrik.loops``; issue 42, item 4)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.constraints import humanoid, limit_violations
from fabrik.loops import Attach, HeldObject
from fabrik.obstacles import Sphere, penetration

BODY = fabrik.models.humanoid()
REST = BODY.rest_positions()
HALF = 0.2  # half the bar between the hands


def bar(pose=None, position=None):
    return HeldObject({"l_wrist": [HALF, 0.0, 0.0], "r_wrist": [-HALF, 0.0, 0.0]}, pose=pose, position=position)


def holdable_pose(seed):
    """An object pose the body can hold: a random reachable body pose's hands, the bar between
    them (its length the grip spacing, so both hands can be on it)."""
    rng = np.random.default_rng(seed)
    while True:
        centre = REST[0] + [0.0, 0.3, 0.35] + rng.uniform(-0.15, 0.15, 3)
        axis = np.array([1.0, 0.0, 0.0]) + rng.normal(0, 0.3, 3)
        axis /= np.linalg.norm(axis)
        roll = rng.uniform(-np.pi, np.pi)
        R = Rotation.from_rotvec(roll * axis).as_matrix() @ Rotation.align_vectors([axis], [[1.0, 0.0, 0.0]])[0].as_matrix()
        hands = centre[:, None] + R @ np.array([[HALF, 0, 0], [-HALF, 0, 0]]).T
        if all(np.linalg.norm(hands[:, i] - REST[3 + 3 * i]) < 0.5 for i in range(2)):
            return centre, R


@given(st.integers(0, 100_000))
@settings(max_examples=20, deadline=None)
def test_two_hands_hold_a_placed_bar(seed):
    centre, R = holdable_pose(seed)
    sol = fabrik.solve(BODY, targets={"head": REST[2]}, loops=[bar(pose=(centre, R))], tol=1e-4)
    assert sol.extras["loop_errors"].shape == (1,)
    assert sol.status == "reached"
    assert sol.extras["loop_errors"][0] <= 1e-4
    want = centre + R @ [HALF, 0, 0]
    assert np.linalg.norm(sol.positions[5] - want) <= 1e-4
    lengths = np.linalg.norm(sol.positions[1:] - sol.positions[np.asarray(BODY.parents[1:])], axis=1)
    assert np.allclose(lengths, np.linalg.norm(REST[1:] - REST[np.asarray(BODY.parents[1:])], axis=1), atol=1e-9)


def test_a_wheel_turns_with_the_hands_about_its_hub():
    hub = REST[0] + [0.0, 0.25, 0.4]
    sol = fabrik.solve(BODY, targets={"head": REST[2]}, loops=[bar(position=hub)], tol=1e-4)
    assert sol.status == "reached"
    centre, R = sol.extras["objects"][0]
    assert np.allclose(centre, hub)
    assert np.linalg.norm(sol.positions[5] - (hub + R @ [HALF, 0, 0])) <= 1e-4
    assert np.linalg.norm(sol.positions[8] - (hub + R @ [-HALF, 0, 0])) <= 1e-4


def test_a_free_bar_keeps_the_hands_apart_by_its_length():
    sol = fabrik.solve(BODY, targets={"head": REST[2] + [0.05, -0.1, 0.1]}, loops=[bar()], tol=1e-4)
    assert sol.status == "reached"
    assert abs(np.linalg.norm(sol.positions[5] - sol.positions[8]) - 2 * HALF) <= 2e-4


def test_a_hand_on_the_hip_stays_there():
    offset = np.array([0.2, 0.0, 0.05])  # beside the pelvis, within the arm's reach
    sol = fabrik.solve(BODY, targets={"l_ankle": REST[10] + [0.0, 0.1, 0.1]},
                       loops=[Attach("l_wrist", "pelvis", offset)], tol=1e-3)
    assert sol.status == "reached", sol
    assert np.linalg.norm(sol.positions[5] - (sol.positions[0] + offset)) <= 1e-3
    assert sol.extras["loop_errors"][0] <= 1e-3


def test_a_hand_attached_to_the_knee_follows_it():
    # the wrist reaches the knee only with the spine bent: the default "auto" sub-bases hold the
    # spine and thighs as one rigid body, so they are released here
    offset = np.array([0.12, -0.05, 0.05])
    for lift in ([0.0, 0.1, 0.1], [0.0, 0.35, 0.3]):
        sol = fabrik.solve(BODY, targets={"l_ankle": REST[10] + lift}, rigid_sub_bases=False,
                           loops=[Attach("l_wrist", "l_knee", offset)], tol=1e-3)
        assert sol.status == "reached", sol
        assert np.linalg.norm(sol.positions[5] - (sol.positions[9] + offset)) <= 1e-3
        assert sol.extras["loop_errors"][0] <= 1e-3


def test_loops_compose_with_limits_and_obstacles():
    limits, _ = humanoid(BODY)
    body = BODY.with_constraints(limits)
    centre, R = holdable_pose(7)
    ball = Sphere(REST[0] + [0.0, 0.3, 0.7], 0.05)
    sol = fabrik.solve(body, targets={"head": REST[2]}, loops=[bar(pose=(centre, R))], obstacles=[ball],
                       tol=1e-3)
    assert limit_violations(body, sol.positions, sol.extras["frames"]).max() <= 1e-6
    assert penetration([ball], sol.positions, BODY.parents) <= 1e-9
    assert sol.extras["loop_errors"][0] <= 1e-2


@pytest.mark.parametrize("loops, match", [
    ([HeldObject({"l_wrist": [0, 0, 0], "nose": [1, 0, 0]})], "unknown joint"),
    ([Attach("l_wrist", "l_wrist")], "itself"),
    ([Attach("l_wrist", "pelvis"), Attach("l_wrist", "neck")], "two loops"),
    (["bar"], "HeldObject or Attach"), ([], "empty"),
])
def test_bad_loops(loops, match):
    with pytest.raises(ValueError, match=match):
        fabrik.solve(BODY, targets={"head": REST[2]}, loops=loops)


def test_a_held_joint_takes_no_target():
    with pytest.raises(ValueError, match="held by a loop"):
        fabrik.solve(BODY, targets={"l_wrist": REST[5]}, loops=[bar()])


def test_bad_objects():
    with pytest.raises(ValueError, match="two or more"):
        HeldObject({"l_wrist": [0, 0, 0]})
    with pytest.raises(ValueError, match="not both"):
        HeldObject({"l_wrist": [0, 0, 0], "r_wrist": [1, 0, 0]}, pose=([0, 0, 0], None), position=[0, 0, 0])
