"""Warm starts of skeleton FABRIK: the pose moves with a moved root; limbs swing about hip and shoulder."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.model.rig import limb_pivot, limb_tops, rig, twist_branches
from fabrik.solvers.skeleton_fabrik import solve_skeleton_arrays
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


def swings(skeleton, tops=None):
    """(pivot, top) name pairs; top "*" where everything below the pivot swings."""
    tops = rig(skeleton).limb_tops if tops is None else tops
    return [(skeleton.names[limb_pivot(skeleton.parents, t)], "*" if t < 0 else skeleton.names[t]) for t in tops]


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
    from fabrik_experiments.reconstruction import reconstruct
    from fabrik_experiments.sample_motion import sample_walk

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
    group_of, start, members, offsets, in_group, _ = rig(sk).groups("limbs")
    assert [sk.names[c] for c in np.flatnonzero(group_of >= 0)] == ["l_wrist"]
    assert sorted(sk.names[m] for m in members) == ["l_fingers", "l_thumb_end"]
    g = group_of[sk.index("l_wrist")]
    assert {sk.names[j] for j in np.flatnonzero(in_group == g)} == {"l_fingers", "l_thumb", "l_thumb_end"}
    # pelvis, spine and chest are not inside a limb: the Mixamo-style pelvis skeleton has no limb group
    assert (rig(pelvis_skeleton()).groups("limbs")[0] < 0).all()


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
    from fabrik.model.geometry import limit_violations

    base = cmu_style_skeleton()
    limits = {name: fabrik.Cone(half_angle, half_angle, half_angle, half_angle)
              for name in base.names if base.children(base.index(name))}
    sk = base.with_constraints(limits)
    rng = np.random.default_rng(seed)
    start, goal_pose = posed(base, rng, 0.3), posed(base, rng, 0.3)
    leaves = np.array(sk.leaves)
    sol = solve_skeleton_arrays(sk, leaves, goal_pose[leaves], start, root=goal_pose[0], tol=1e-4, max_iter=300,
                                swing_limbs=True)
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


def twist_rig():
    """An Unreal/Rokoko-style body: twist joints with End Sites beside the upper arm, forearm,
    thigh and calf, a hand with two fingers, a pelvis and chest that a BVH rotation holds rigid."""
    joints = [  # name, parent, offset
        ("hips", None, [0, 95, 0]), ("spine", "hips", [0, 12, 0]), ("chest", "spine", [0, 24, 0]),
        ("neck", "chest", [0, 14, 1]), ("head", "neck", [0, 10, 1]), ("head_end", "head", [0, 18, 0]),
        ("clavicle_l", "chest", [4, 10, 0]), ("upperarm_l", "clavicle_l", [12, 0, 0]),
        ("lowerarm_l", "upperarm_l", [28, 0, 0]), ("lowerarm_twist_l", "lowerarm_l", [12, 0, 0]),
        ("lowerarm_twist_l_end", "lowerarm_twist_l", [5, 0, 0]), ("hand_l", "lowerarm_l", [25, 0, 0]),
        ("index_l", "hand_l", [9, 0, 2]), ("index_l_end", "index_l", [6, 0, 0]),
        ("pinky_l", "hand_l", [9, 0, -2]), ("pinky_l_end", "pinky_l", [5, 0, 0]),
        ("upperarm_twist_l", "upperarm_l", [14, 0, 0]), ("upperarm_twist_l_end", "upperarm_twist_l", [5, 0, 0]),
        ("clavicle_r", "chest", [-4, 10, 0]), ("upperarm_r", "clavicle_r", [-12, 0, 0]),
        ("lowerarm_r", "upperarm_r", [-28, 0, 0]), ("hand_r", "lowerarm_r", [-25, 0, 0]),
        ("hand_r_end", "hand_r", [-8, 0, 0]),
        ("thigh_l", "hips", [9, -5, 0]), ("calf_l", "thigh_l", [0, -43, 0]),
        ("calf_twist_l", "calf_l", [0, -20, 0]), ("calf_twist_l_end", "calf_twist_l", [0, -5, 0]),
        ("foot_l", "calf_l", [0, -42, 0]), ("toe_l", "foot_l", [0, -7, 13]),
        ("thigh_twist_l", "thigh_l", [0.5, -20, 0]), ("thigh_twist_l_end", "thigh_twist_l", [0, -5, 0]),
        ("thigh_r", "hips", [-9, -5, 0]), ("calf_r", "thigh_r", [0, -43, 0]), ("foot_r", "calf_r", [0, -42, 0]),
        ("toe_r", "foot_r", [0, -7, 13]),
    ]
    names = [j[0] for j in joints]
    parents = [-1 if j[1] is None else names.index(j[1]) for j in joints]
    return fabrik.Skeleton.from_parents(names, parents, np.array([j[2] for j in joints], dtype=float))


def test_twist_branches_are_the_leaf_chains_lying_along_a_sibling_bone():
    sk = twist_rig()
    arrays = rig(sk)
    twist = twist_branches(arrays.parents, arrays.lengths, arrays.rest)
    assert sorted(sk.names[j] for j in np.flatnonzero(twist)) == sorted(
        f"{bone}_twist_l{end}" for bone in ("upperarm", "lowerarm", "thigh", "calf") for end in ("", "_end"))
    # fingers, toes and the head leave their joints at an angle or carry no sibling: not twists;
    # a CMU hand's zero-length finger and thumb joints neither
    cmu = cmu_style_skeleton()
    arrays = rig(cmu)
    assert not twist_branches(arrays.parents, arrays.lengths, arrays.rest).any()


def test_twist_bones_neither_split_a_limb_nor_stay_behind_when_it_swings():
    sk = twist_rig()
    # the arms and the left leg run on past their twist bones: one limb each, swinging everything
    # below the shoulder or hip joint ("*"), twist bones included; the right leg has none
    assert swings(sk) == [("head", "head_end"), ("upperarm_l", "*"), ("hand_l", "index_l"), ("hand_l", "pinky_l"),
                          ("upperarm_r", "lowerarm_r"), ("thigh_l", "*"), ("thigh_r", "calf_r")]
    # with the BVH-rigid groups held, the whole-limb entries stay: they turn the upper arm's group
    # (elbow and twist joint) as one body; the fingers, members of the palm, swing below it
    assert swings(sk, rig(sk).held_limb_tops) == [
        ("head", "head_end"), ("upperarm_l", "*"), ("index_l", "index_l_end"), ("pinky_l", "pinky_l_end"),
        ("upperarm_r", "lowerarm_r"), ("thigh_l", "*"), ("thigh_r", "calf_r")]
    rest = sk.rest_positions()
    # a target set reached by turning the whole left arm about the shoulder joint
    angle = np.radians(35)
    rot = Rotation.from_rotvec([0, 0, angle]).as_matrix()
    shoulder = sk.index("upperarm_l")
    arrays = rig(sk)
    below = arrays.order[arrays.position[shoulder] + 1:arrays.subtree_end[shoulder]]
    goal = rest.copy()
    goal[below] = rest[shoulder] + (rest[below] - rest[shoulder]) @ rot.T
    targets = [sk.index(n) for n in ("index_l_end", "pinky_l_end", "lowerarm_twist_l_end", "upperarm_twist_l_end")]
    for mode in ("auto", True, "limbs", False):
        sol = solve_skeleton_arrays(sk, np.array(targets), goal[targets], rest, rest[0], 1e-9, 0,
                                    rigid_sub_bases=mode, swing_limbs=True)
        # the swing alone (no iteration) lays the arm, its twist bones with it, onto the goal
        np.testing.assert_allclose(sol.positions, goal, atol=1e-9, err_msg=str(mode))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_twist_rig_solves_keep_every_held_group_rigid_and_reach(seed):
    sk = twist_rig()
    rng = np.random.default_rng(seed)
    pose = posed(sk, rng, spread=0.25)
    start = posed(sk, np.random.default_rng(seed + 1), spread=0.25)
    leaves = [j for j in range(1, sk.n_joints) if j not in set(sk.parents)]
    sol = solve_skeleton_arrays(sk, np.array(leaves), pose[leaves], start, pose[0], 1e-3, 2000,
                                rigid_sub_bases="auto", swing_limbs=True)
    p = sol.positions
    assert np.isfinite(p).all()
    arrays = rig(sk)
    np.testing.assert_allclose(np.linalg.norm(p[1:] - p[arrays.parents[1:]], axis=1), arrays.lengths[1:],
                               rtol=1e-9, atol=1e-9)
    rest = sk.rest_positions()
    group_of, start_idx, members = arrays.groups(True)[:3]
    for centre in np.flatnonzero(group_of >= 0):
        g = group_of[centre]
        idx = members[start_idx[g]:start_idx[g + 1]]
        got, want = p[idx] - p[centre], rest[idx] - rest[centre]
        np.testing.assert_allclose(got @ got.T, want @ want.T, atol=1e-6, err_msg=sk.names[centre])
    assert sol.error < 0.05 * sk.height(), sol
