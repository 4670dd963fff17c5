"""Warm starts of skeleton FABRIK: the pose moves with a moved root; limbs swing about hip and shoulder."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.solvers.skeleton_fabrik import limb_tops, skeleton_arrays, solve_skeleton_arrays
from test_rigid_groups import pelvis_skeleton, posed


def cmu_style_skeleton():
    """Legs and arms hanging from zero-length pelvis and collar joints, two-fingered hands."""
    names = ["hips", "l_hipjoint", "l_hip", "l_knee", "l_ankle", "l_toe", "r_hipjoint", "r_hip", "r_knee",
             "r_ankle", "r_toe", "lowerback", "chest", "chest2", "lowerneck", "neck", "head", "l_collar",
             "l_shoulder", "l_elbow", "l_wrist", "l_fingers", "l_fingers_end", "l_thumb", "l_thumb_end"]
    parents = [-1, 0, 1, 2, 3, 4, 0, 6, 7, 8, 9, 0, 11, 12, 13, 14, 15, 13, 17, 18, 19, 20, 21, 20, 23]
    offsets = np.array([[0, 40, 0], [0, 0, 0], [1.2, -1.6, 0.7], [2.5, -6.8, 0], [2.4, -6.5, 0], [0.2, -0.4, 2.2],
                        [0, 0, 0], [-1.2, -1.6, 0.7], [-2.5, -6.8, 0], [-2.4, -6.5, 0], [-0.2, -0.4, 2.2],
                        [0, 0, 0], [0, 2, 0], [0, 2, 0], [0, 0, 0], [0, 1.6, 0.1], [0, 1.6, 0], [0, 0, 0],
                        [3, 1.5, 0], [0, -4.2, 0], [0, -3.3, 0], [0, -0.7, 0], [0, -0.5, 0], [0, 0, 0],
                        [0, -0.5, 0.5]], dtype=float)
    return fabrik.Skeleton.from_parents(names, parents, offsets)


def swings(skeleton):
    return [(skeleton.names[skeleton.parents[t]], skeleton.names[t]) for t in skeleton_arrays(skeleton).limb_tops]


def test_limbs_swing_about_hips_and_shoulders_past_zero_length_girdle_bones():
    sk = cmu_style_skeleton()
    assert swings(sk) == [("l_hip", "l_knee"), ("r_hip", "r_knee"), ("lowerneck", "neck"), ("l_shoulder", "l_elbow"),
                          ("l_wrist", "l_fingers"), ("l_thumb", "l_thumb_end")]


def test_a_spine_carrying_arms_and_head_is_not_a_limb():
    sk = pelvis_skeleton()
    pairs = swings(sk)
    assert ("l_up", "l_knee") in pairs and ("r_up", "r_knee") in pairs
    assert ("l_sh", "l_el") in pairs and ("r_sh", "r_el") in pairs
    # the spine (hips -> spine -> chest) carries both arms and the head: its leaves spread too far
    assert not any(top in ("spine", "chest") for _, top in pairs)
    # a branch point's own limb swings alone: the neck turns about the chest, the arms stay
    assert ("chest", "neck") in pairs


def test_a_chain_without_branches_has_one_limb_and_an_empty_skeleton_none():
    chain = fabrik.Skeleton.from_parents(["a", "b", "c"], [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 2, 0]])
    assert swings(chain) == [("b", "c")]
    parents = np.array([-1])
    assert limb_tops(parents, np.zeros(1), np.zeros((1, 3))).size == 0


def test_swing_turns_a_rigid_leg_onto_its_moved_target_without_bending_it():
    sk = pelvis_skeleton()
    rest = sk.rest_positions()
    foot = sk.index("l_foot")
    hip = sk.index("l_up")
    # the foot target: the rest foot turned 20 degrees forward about the hip
    angle = np.radians(20)
    rot = np.array([[1, 0, 0], [0, np.cos(angle), -np.sin(angle)], [0, np.sin(angle), np.cos(angle)]])
    goal = rest[hip] + rot @ (rest[foot] - rest[hip])
    sol = solve_skeleton_arrays(sk, np.array([foot]), goal[None], rest, rest[0], 1e-9, 0, swing_limbs=True)
    # zero iterations: only the warm start ran, and it already put the foot on its target
    assert sol.iterations == 0
    np.testing.assert_allclose(sol.positions[foot], goal, atol=1e-12)
    knee = sk.index("l_knee")
    np.testing.assert_allclose(sol.positions[knee], rest[hip] + rot @ (rest[knee] - rest[hip]), atol=1e-12)
    # the rest of the body did not move
    others = [j for j in range(sk.n_joints) if j not in (knee, foot)]
    np.testing.assert_allclose(sol.positions[others], rest[others], atol=0)


def test_a_moved_root_carries_the_start_pose_with_it():
    sk = pelvis_skeleton()
    pose = posed(sk, np.random.default_rng(3))
    shift = np.array([0.3, -0.1, 0.5])
    hands = [sk.index("l_hand"), sk.index("r_hand")]
    sol = fabrik.solve(sk, targets={sk.names[j]: pose[j] + shift for j in hands}, initial=pose, root=pose[0] + shift,
                       tol=1e-9)
    # the translated start already reaches the targets: no bone was dragged by the root
    assert sol.iterations == 0 and sol.status == "reached"
    np.testing.assert_allclose(sol.positions, pose + shift, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.05, 0.6), st.sampled_from(["pelvis", "cmu"]))
def test_swung_solves_keep_lengths_and_root_and_reach_posed_targets(seed, spread, model):
    sk = pelvis_skeleton() if model == "pelvis" else cmu_style_skeleton()
    rng = np.random.default_rng(seed)
    start = posed(sk, rng, spread)
    goal_pose = posed(sk, rng, spread)
    leaves = np.array(sk.leaves)
    sol = solve_skeleton_arrays(sk, leaves, goal_pose[leaves], start, goal_pose[0], 1e-4, 3000, swing_limbs=True)
    assert np.isfinite(sol.positions).all()
    np.testing.assert_allclose(sol.positions[0], goal_pose[0], atol=1e-12)
    bones = np.linalg.norm(sol.positions[1:] - sol.positions[sk.parents[1:]], axis=1)
    np.testing.assert_allclose(bones, sk.bone_lengths[1:], atol=1e-9)
    # posed targets are reachable: never reported unreachable, and within tol when reached
    assert sol.status in ("reached", "stalled", "max_iterations")
    if sol.status == "reached":
        assert sol.error <= 1e-4


@pytest.mark.parametrize("model", ["pelvis", "cmu"])
def test_swung_solves_reach_nearly_every_posed_target(model):
    sk = pelvis_skeleton() if model == "pelvis" else cmu_style_skeleton()
    leaves = np.array(sk.leaves)
    reached = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        start, goal_pose = posed(sk, rng, 0.4), posed(sk, rng, 0.4)
        sol = solve_skeleton_arrays(sk, leaves, goal_pose[leaves], start, goal_pose[0], 1e-4, 3000, swing_limbs=True)
        reached += sol.status == "reached"
    assert reached >= 57, f"{reached} of 60 posed targets reached"


def test_reconstruct_reports_the_swing_pivots_and_can_turn_them_off():
    from fabrik.experiments.reconstruct import reconstruct
    from fabrik.experiments.sample_motion import sample_walk

    sk, motion = sample_walk(n_frames=30)
    truth = motion.world_positions(sk)
    on = reconstruct(sk, truth, methods=["fabrik"])
    off = reconstruct(sk, truth, methods=["fabrik"], swing_limbs=False)
    assert on.swing_pivots and not off.swing_pivots
    assert on.to_json()["fabrik_swing_pivots"] == list(on.swing_pivots)
    assert "swung" in on.table() and "swung" not in off.table()
    assert not np.array_equal(on.result("fabrik").positions, off.result("fabrik").positions)


def test_limb_groups_find_a_hands_members_through_zero_length_joints():
    sk = cmu_style_skeleton()
    group_of, start, members, offsets, in_group = skeleton_arrays(sk).limb_groups
    assert [sk.names[c] for c in np.flatnonzero(group_of >= 0)] == ["l_wrist"]
    assert sorted(sk.names[m] for m in members) == ["l_fingers", "l_thumb_end"]
    g = group_of[sk.index("l_wrist")]
    assert {sk.names[j] for j in np.flatnonzero(in_group == g)} == {"l_fingers", "l_thumb", "l_thumb_end"}
    # pelvis, spine and chest are not inside a limb: the Mixamo-style pelvis skeleton has no limb group
    assert (skeleton_arrays(pelvis_skeleton()).limb_groups[0] < 0).all()


def rigid_hand_solve(seed):
    """A CMU-style skeleton solved from one random pose to the leaves of another (seed), both with
    the left hand in its rest shape, the hand a releasable rigid group. Returns (skeleton, hand
    joint indices, solution)."""
    sk = cmu_style_skeleton()
    rng = np.random.default_rng(seed)
    start, goal_pose = posed(sk, rng, 0.3), posed(sk, rng, 0.3)
    # a rigid hand: the finger and thumb turn with the wrist, as in the pose the targets come
    # from, so the solve reaches them without releasing the group and the hand keeps its shape
    hand = [sk.index(x) for x in ("l_wrist", "l_fingers", "l_thumb_end")]
    for pose in (start, goal_pose):
        rest = sk.rest_positions()
        r, _ = Rotation.align_vectors(pose[hand[1:]] - pose[hand[0]], rest[hand[1:]] - rest[hand[0]])
        pose[hand[1:]] = pose[hand[0]] + r.apply(rest[hand[1:]] - rest[hand[0]])
        pose[sk.index("l_fingers_end")] = pose[hand[1]] + r.apply(rest[sk.index("l_fingers_end")] - rest[hand[1]])
    leaves = np.array(sk.leaves)
    sol = solve_skeleton_arrays(sk, leaves, goal_pose[leaves], start, goal_pose[0], 1e-4, 3000, "limbs", True)
    return sk, hand, sol


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_rigid_hands_keep_their_shape_and_reach_posed_targets(seed):
    sk, hand, sol = rigid_hand_solve(seed)
    p = sol.positions
    assert np.isfinite(p).all()
    bones = np.linalg.norm(p[1:] - p[sk.parents[1:]], axis=1)
    np.testing.assert_allclose(bones, sk.bone_lengths[1:], atol=1e-9)
    assert sol.status in ("reached", "stalled", "max_iterations")
    if sol.extras["released_groups"]:
        # a stall with the group releases it (a palm is a prior, not a rule) and the iterations go
        # on with a free hand; about 2 seeds in 1,000 stall (seen: 3021, 3501, 8491, 8638)
        assert sol.extras["released_groups"] == ("l_wrist",)
        return
    rest = sk.rest_positions()
    got, want = p[hand[1:]] - p[hand[0]], rest[hand[1:]] - rest[hand[0]]
    np.testing.assert_allclose(got @ got.T, want @ want.T, atol=1e-9)


def test_a_released_hand_is_reported():
    # seed 3021 of the property above: the rigid hand stalls short of its targets, is released,
    # and the solve goes on with a free hand; seed 0 reaches with the hand held
    for seed, released in ((3021, ("l_wrist",)), (0, ())):
        _, _, sol = rigid_hand_solve(seed)
        assert sol.extras["released_groups"] == released, (seed, sol)
        assert sol.status in ("reached", "max_iterations")


def test_unknown_rigid_mode_is_rejected():
    sk = pelvis_skeleton()
    with pytest.raises(ValueError, match="rigid_sub_bases"):
        fabrik.solve(sk, targets={"l_hand": [0.5, 1.2, 0.0]}, rigid_sub_bases="hands")


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.2, 1.2))
def test_constrained_swing_never_violates_a_limit(seed, half_angle):
    from fabrik.solvers.skeleton_fabrik_constrained import limit_violations, solve_skeleton_constrained_arrays

    base = cmu_style_skeleton()
    limits = {name: fabrik.Cone(half_angle, half_angle, half_angle, half_angle)
              for name in base.names if base.children(base.index(name))}
    sk = base.with_constraints(limits)
    rng = np.random.default_rng(seed)
    start, goal_pose = posed(base, rng, 0.3), posed(base, rng, 0.3)
    leaves = np.array(sk.leaves)
    sol = solve_skeleton_constrained_arrays(sk, leaves, goal_pose[leaves], start, root=goal_pose[0], tol=1e-4,
                                            max_iter=300, swing_limbs=True)
    p = sol.positions
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p[0], goal_pose[0], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(p[1:] - p[sk.parents[1:]], axis=1), sk.bone_lengths[1:], atol=1e-9)
    assert limit_violations(sk, p, sol.extras["frames"]).max() <= 1e-9


def test_constrained_solve_takes_the_swing_option():
    sk = pelvis_skeleton().with_constraints({"l_up": fabrik.Cone(1.0, 1.0, 1.0, 1.0)})
    sol = fabrik.solve(sk, targets={"l_foot": [0.2, 0.3, 0.3]}, method="fabrik-constrained", swing_limbs=True)
    assert np.isfinite(sol.positions).all()


def test_a_hand_that_is_not_rigid_releases_its_group_and_reaches():
    # targets from poses whose thumb turned against the palm: no rigid hand reaches them all, so
    # the "limbs" groups are released when the solve stalls, and the effectors are reached
    sk = cmu_style_skeleton()
    wrist, thumb_end = sk.index("l_wrist"), sk.index("l_thumb_end")
    leaves = np.array(sk.leaves)
    turn = Rotation.from_rotvec([0.0, 0.0, 0.8])
    for seed in range(20):
        rng = np.random.default_rng(seed)
        start, goal_pose = posed(sk, rng, 0.3), posed(sk, rng, 0.3)
        goal_pose[thumb_end] = goal_pose[wrist] + turn.apply(goal_pose[thumb_end] - goal_pose[wrist])
        sol = solve_skeleton_arrays(sk, leaves, goal_pose[leaves], start, goal_pose[0], 1e-4, 3000, "limbs", True)
        assert sol.status == "reached" and sol.error <= 1e-4, (seed, sol.status, sol.error)


def test_swing_limbs_takes_a_bool_only():
    y = fabrik.models.y_shape()
    with pytest.raises(ValueError, match="swing_limbs must be True or False"):
        fabrik.solve(y, targets={"left_tip": [0, 4, 0]}, swing_limbs="no")
