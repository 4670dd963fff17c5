"""The paper's multi-end-effector models (section 5.2): structure, names and proportions."""

import math

import numpy as np
import pytest

import fabrik
from fabrik import Skeleton, models


def test_y_shape_has_10_joints_and_2_effectors():
    sk = models.y_shape()
    assert isinstance(sk, Skeleton)
    assert sk.n_joints == 10
    assert [sk.names[i] for i in sk.leaves] == ["left_tip", "right_tip"]
    assert sk.sub_bases == [sk.index("fork")]
    np.testing.assert_allclose(sk.bone_lengths[1:], 1.0)
    rest = sk.rest_positions()
    np.testing.assert_allclose(rest[sk.index("fork")], [0, 3, 0])
    assert rest[sk.index("left_tip"), 0] < 0 < rest[sk.index("right_tip"), 0]
    np.testing.assert_allclose(rest[:, 2], 0.0)  # planar
    np.testing.assert_allclose(rest[[4, 5, 6]] * [-1, 1, 1], rest[[7, 8, 9]])  # mirror image


def test_y_shape_scales_and_checks_its_arguments():
    sk = models.y_shape(bone_length=2.5, branch_angle=math.radians(20))
    np.testing.assert_allclose(sk.bone_lengths[1:], 2.5)
    for bad in ({"bone_length": 0.0}, {"bone_length": float("nan")}, {"branch_angle": 0.0}, {"branch_angle": 2.0},
                {"bone_length": "1"}, {"branch_angle": "0.5"}):
        with pytest.raises(ValueError):
            models.y_shape(**bad)


def test_hand_has_26_joints_and_5_finger_tips():
    sk = models.hand()
    assert sk.n_joints == 26
    assert sk.names[0] == "wrist"
    assert [sk.names[i] for i in sk.leaves] == [f"{f}_tip" for f in models.FINGERS]
    assert sk.sub_bases == [0]  # the wrist joins the five chains
    for finger in models.FINGERS:
        chain = [j for j, name in enumerate(sk.names) if name.startswith(finger + "_")]
        assert len(chain) == 5
        assert sk.parents[chain[0]] == 0 and all(sk.parents[b] == a for a, b in zip(chain, chain[1:]))
    rest = sk.rest_positions()
    assert (sk.bone_lengths[1:] > 0.0).all()
    # adult proportions, metres: wrist to middle finger tip about 0.18-0.20 m
    assert 0.17 < np.linalg.norm(rest[sk.index("middle_tip")]) < 0.21
    assert rest[sk.index("thumb_tip"), 0] > rest[sk.index("index_tip"), 0] > rest[sk.index("little_tip"), 0]
    assert np.linalg.norm(rest[sk.index("middle_tip")]) > np.linalg.norm(rest[sk.index("little_tip")])


def test_humanoid_has_13_joints_and_5_effectors():
    sk = models.humanoid()
    assert sk.n_joints == 13
    assert sk.names[0] == "pelvis"
    assert sorted(sk.names[i] for i in sk.leaves) == sorted(["head", "l_wrist", "r_wrist", "l_ankle", "r_ankle"])
    assert sk.sub_bases == [sk.index("pelvis"), sk.index("neck")]
    rest = sk.rest_positions()
    assert (sk.bone_lengths[1:] > 0.0).all()
    # plausible adult proportions in metres, +Y up, left at +X
    assert 1.5 < rest[sk.index("head"), 1] - rest[sk.index("l_ankle"), 1] < 1.8
    arm = sk.bone_lengths[sk.index("l_elbow")] + sk.bone_lengths[sk.index("l_wrist")]
    leg = sk.bone_lengths[sk.index("l_knee")] + sk.bone_lengths[sk.index("l_ankle")]
    assert 0.45 < arm < 0.65 and 0.8 < leg < 1.0
    assert 0.3 < np.linalg.norm(rest[sk.index("l_shoulder")] - rest[sk.index("r_shoulder")]) < 0.45
    assert rest[sk.index("l_wrist"), 0] > 0 > rest[sk.index("r_wrist"), 0]
    # mirror symmetric
    for left in ("shoulder", "elbow", "wrist", "knee", "ankle"):
        np.testing.assert_allclose(rest[sk.index("l_" + left)] * [-1, 1, 1], rest[sk.index("r_" + left)])


@pytest.mark.parametrize("build", [models.y_shape, models.hand, models.humanoid])
def test_models_solve_for_their_own_effectors(build):
    sk = build()
    rest = sk.rest_positions()
    # each effector pulled a tenth of the way towards the root and sideways: within reach
    side = 0.03 * sk.height() * np.array([0.3, 0.0, 0.4])
    targets = {sk.names[j]: rest[j] + 0.1 * (rest[0] - rest[j]) + side for j in sk.leaves}
    start = max(np.linalg.norm(rest[sk.index(n)] - t) for n, t in targets.items())
    # the paper's free sub-bases: these targets ask the pelvis and the chest to change shape, which
    # no pose of joint rotations does (FABRIK with free sub-bases, DLS and CCD reach them with
    # poses 0.11-0.13 m from any BVH pose); the default ("auto", held pelvis and chest) stops at
    # 0.36 of the start error with a pose that is exactly writable
    sol = fabrik.solve(sk, targets=targets, tol=1e-4 * sk.height(), rigid_sub_bases=False, swing_limbs=False)
    assert sol.status in ("reached", "stalled")
    assert sol.error < 0.05 * start
    np.testing.assert_allclose(np.linalg.norm(sol.positions[1:] - sol.positions[sk.parents[1:]], axis=1),
                               sk.bone_lengths[1:], rtol=1e-9)


def test_models_expose_only_models():
    import fabrik.models as models

    public = {k for k, v in vars(models).items() if not k.startswith("_") and not isinstance(v, type(math))}
    assert {"np", "math", "check_positive"}.isdisjoint(public) and "np" not in vars(models)
    assert public - {"Skeleton"} == set(models.__all__)
