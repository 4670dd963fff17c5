"""The default human limit set: placement by joint names (CMU, Mixamo with and without prefix,
l_knee style), hinge directions from the rest pose, unplaced joints reported."""

import math
from pathlib import Path

import numpy as np
import pytest

from fabrik.constraints import Cone, Hinge
from fabrik.model.humanoid_limits import LIMITS, humanoid
from fabrik.model.skeleton import Skeleton
from fabrik.model.rig import rig

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mocap"
DEG = math.pi / 180


def build(spec):
    """Skeleton from [(name, parent name or None, offset xyz), ...] in topological order."""
    names = [s[0] for s in spec]
    parents = [-1 if s[1] is None else names.index(s[1]) for s in spec]
    return Skeleton.from_parents(names, parents, np.array([s[2] for s in spec], float))


def cmu_like():
    """The CMU BVH layout (names and zero-length joints as in cmu_131_*.bvh), Y up, facing +Z."""
    spec = [("Hips", None, (0, 0, 0))]
    for side, s in (("L", 1), ("R", -1)):
        full = "Left" if side == "L" else "Right"
        spec += [(f"{side}HipJoint", "Hips", (0, 0, 0)), (f"{full}Hip", f"{side}HipJoint", (s * 1.2, -1.6, 0.7)),
                 (f"{full}Knee", f"{full}Hip", (s * 2.5, -6.8, 0)), (f"{full}Ankle", f"{full}Knee", (s * 2.4, -6.5, 0)),
                 (f"{full}Toe", f"{full}Ankle", (s * 0.1, -0.4, 2.2)), (f"{full}Toe_End", f"{full}Toe", (0, 0, 1.1))]
    spec += [("lowerback", "Hips", (0, 0, 0)), ("Chest", "lowerback", (0, 2, 0)), ("Chest2", "Chest", (0, 2, 0)),
             ("lowerneck", "Chest2", (0, 0, 0)), ("Neck", "lowerneck", (0, 1.6, 0.1)), ("Head", "Neck", (0, 1.6, 0)),
             ("Head_End", "Head", (0, 1.6, 0))]
    for side, s in (("L", 1), ("R", -1)):
        full = "Left" if side == "L" else "Right"
        hand = side.lower() + "hand"
        spec += [(f"{full}Collar", "Chest2", (0, 0, 0)), (f"{full}Shoulder", f"{full}Collar", (s * 3.0, 1.5, 0)),
                 (f"{full}Elbow", f"{full}Shoulder", (0, -4.2, 0)), (f"{full}Wrist", f"{full}Elbow", (0, -3.3, 0)),
                 (hand, f"{full}Wrist", (0, 0, 0)), (f"{side}Fingers", hand, (0, -0.6, 0)),
                 (f"{side}Fingers_End", f"{side}Fingers", (0, -0.5, 0)), (f"{side}Thumb", f"{full}Wrist", (0, 0, 0)),
                 (f"{side}Thumb_End", f"{side}Thumb", (0, -0.5, 0.5))]
    return build(spec)


def mixamo_like(prefix=""):
    """A Mixamo T-pose (arms along +-X), Y up, facing +Z; joint names with ``prefix``."""
    spec = [("Hips", None, (0, 100, 0)), ("Spine", "Hips", (0, 10, 0)), ("Spine1", "Spine", (0, 12, 0)),
            ("Spine2", "Spine1", (0, 13, 0)), ("Neck", "Spine2", (0, 15, 1)), ("Head", "Neck", (0, 10, 2)),
            ("HeadTop_End", "Head", (0, 18, 0))]
    for side, s in (("Left", 1), ("Right", -1)):
        spec += [(f"{side}Shoulder", "Spine2", (s * 6, 12, 0)), (f"{side}Arm", f"{side}Shoulder", (s * 12, 0, 0)),
                 (f"{side}ForeArm", f"{side}Arm", (s * 27, 0, 0)), (f"{side}Hand", f"{side}ForeArm", (s * 26, 0, 0)),
                 (f"{side}HandIndex1", f"{side}Hand", (s * 9, 0, 2)),
                 (f"{side}HandIndex2", f"{side}HandIndex1", (s * 4, 0, 0)),
                 (f"{side}UpLeg", "Hips", (s * 9, -6, 0)), (f"{side}Leg", f"{side}UpLeg", (0, -42, 0)),
                 (f"{side}Foot", f"{side}Leg", (0, -41, -1)), (f"{side}ToeBase", f"{side}Foot", (0, -7, 13)),
                 (f"{side}Toe_End", f"{side}ToeBase", (0, 0, 8))]
    return build([(prefix + n, None if p is None else prefix + p, o) for n, p, o in spec])


def underscore_like():
    """``l_knee``-style names (Y up, facing +Z), a 'pelvis' root."""
    spec = [("pelvis", None, (0, 0, 0)), ("spine_01", "pelvis", (0, 10, 0)), ("spine_02", "spine_01", (0, 10, 0)),
            ("neck", "spine_02", (0, 10, 0)), ("head", "neck", (0, 8, 0)), ("head_end", "head", (0, 10, 0))]
    for side, s in (("l", 1), ("r", -1)):
        spec += [(f"{side}_clavicle", "spine_02", (s * 4, 8, 0)), (f"{side}_shoulder", f"{side}_clavicle", (s * 10, 0, 0)),
                 (f"{side}_elbow", f"{side}_shoulder", (s * 25, 0, 0)), (f"{side}_wrist", f"{side}_elbow", (s * 25, 0, 0)),
                 (f"{side}_hand_end", f"{side}_wrist", (s * 8, 0, 0)),
                 (f"{side}_hip", "pelvis", (s * 9, -5, 0)), (f"{side}_knee", f"{side}_hip", (0, -40, 0)),
                 (f"{side}_ankle", f"{side}_knee", (0, -40, 0)), (f"{side}_toe", f"{side}_ankle", (0, -5, 12)),
                 (f"{side}_toe_end", f"{side}_toe", (0, 0, 6))]
    return build(spec)


def kinds(limits):
    """{joint: 'hinge' or cone half-angle in degrees (rounded)}."""
    out = {}
    for name, items in limits.items():
        assert len(items) == 1
        item = items[0]
        if isinstance(item, Hinge):
            out[name] = "hinge"
        else:
            assert isinstance(item, Cone) and item.up == item.down == item.left == item.right
            out[name] = round(item.up / DEG)
    return out


def bends_towards(skel, joint, limits):
    """The world direction a hinge at ``joint`` turns its child bone to at +60 degrees, minus the
    rest direction (positive components show where the limb bends)."""
    hinge = limits[joint][0]
    child = next(c for c in range(skel.n_joints) if skel.parents[c] == skel.index(joint))
    R0 = rig(skel).rest_frames[child]
    axis = R0 @ np.array(hinge.axis)
    s = R0[:, 1]
    bent = math.cos(60 * DEG) * s + math.sin(60 * DEG) * np.cross(axis, s)
    return bent - s


def test_cmu_names():
    skel = cmu_like()
    limits, unplaced = humanoid(skel)
    got = kinds(limits)
    expected = {"LHipJoint": 10, "RHipJoint": 10, "LeftHip": 120, "RightHip": 120, "LeftKnee": "hinge",
                "RightKnee": "hinge", "LeftAnkle": 60, "RightAnkle": 60, "LeftToe": 60, "RightToe": 60,
                "lowerback": 40, "Chest": 40, "lowerneck": 45, "Neck": 45, "Head": 45, "LeftCollar": 20,
                "RightCollar": 20, "LeftShoulder": 120, "RightShoulder": 120, "LeftElbow": "hinge",
                "RightElbow": "hinge", "lhand": 85, "rhand": 85, "LFingers": 90, "RFingers": 90}
    assert got == expected
    assert unplaced == ["LThumb", "RThumb"]  # thumbs stay free: their rest direction varies by rig
    skel.with_constraints(limits)  # every placement is valid (no leaves, known joints)
    for knee in ("LeftKnee", "RightKnee"):
        assert bends_towards(skel, knee, limits)[2] < -0.3  # backwards (-Z)
    for elbow in ("LeftElbow", "RightElbow"):
        assert bends_towards(skel, elbow, limits)[2] > 0.3  # forwards (+Z)


@pytest.mark.parametrize("prefix", ["", "mixamorig:", "mixamorig_"])
def test_mixamo_names(prefix):
    skel = mixamo_like(prefix)
    limits, unplaced = humanoid(skel)
    got = {k[len(prefix):]: v for k, v in kinds(limits).items()}
    expected = {"Hips": 10, "Spine": 40, "Spine1": 40, "Spine2": 40, "Neck": 45, "Head": 45}
    for side in ("Left", "Right"):
        expected.update({f"{side}Shoulder": 20, f"{side}Arm": 120, f"{side}ForeArm": "hinge", f"{side}Hand": 85,
                         f"{side}UpLeg": 120, f"{side}Leg": "hinge", f"{side}Foot": 60, f"{side}ToeBase": 60,
                         f"{side}HandIndex1": 90})
    assert got == expected
    assert unplaced == []
    assert bends_towards(skel, prefix + "LeftLeg", limits)[2] < -0.3
    assert bends_towards(skel, prefix + "LeftForeArm", limits)[2] > 0.3  # T-pose: the forearm swings forwards
    assert bends_towards(skel, prefix + "RightForeArm", limits)[2] > 0.3


def test_underscore_names_and_case():
    skel = underscore_like()
    limits, unplaced = humanoid(skel)
    got = kinds(limits)
    expected = {"pelvis": 10, "spine_01": 40, "spine_02": 40, "neck": 45, "head": 45}
    for s in ("l", "r"):
        expected.update({f"{s}_clavicle": 20, f"{s}_shoulder": 120, f"{s}_elbow": "hinge", f"{s}_wrist": 85,
                         f"{s}_hip": 120, f"{s}_knee": "hinge", f"{s}_ankle": 60, f"{s}_toe": 60})
    assert got == expected and unplaced == []
    upper = Skeleton.from_parents([n.upper() for n in skel.names], skel.parents, skel.offsets)
    assert {k.lower(): v for k, v in kinds(humanoid(upper)[0]).items()} == expected


def test_unknown_names_are_reported():
    skel = Skeleton.from_parents(["base", "link1", "link2", "tool"], [-1, 0, 1, 2],
                                 [[0, 0, 0], [0, 1, 0], [0, 1, 0], [0, 1, 0]])
    assert humanoid(skel) == ({}, ["base", "link1", "link2"])


def test_limits_table_is_documented():
    doc = humanoid.__module__
    import importlib

    text = importlib.import_module(doc).__doc__
    for part, spec in LIMITS.items():
        assert part in text
        if spec is not None:
            assert f"{spec[1]:g}" in text


@pytest.mark.skipif(not (MOCAP / "cmu_131_01.bvh").is_file(), reason=f"motion-capture files not found in {MOCAP}")
def test_real_cmu_file_and_recorded_motion_mostly_inside():
    from fabrik.io.bvh import load_bvh
    from fabrik.model.geometry import frames_from_world_rotations, limit_violations

    skel, motion = load_bvh(MOCAP / "cmu_131_01.bvh")
    limits, unplaced = humanoid(skel)
    assert set(kinds(limits)) == set(kinds(humanoid(cmu_like())[0]))
    limited = skel.with_constraints(limits)
    P, W = motion.frames(0, None, 10).world_transforms(skel)
    viol = limit_violations(limited, P, frames_from_world_rotations(skel, W))
    # the recording respects the cones; its elbow hinges turn about an axis 30 degrees from the
    # generic one (a twist of the upper arm, which the solver is free to choose)
    names = [skel.names[j] for j in np.flatnonzero(viol.max(axis=0) > 2 * DEG)]
    assert names == ["LeftElbow", "RightElbow"]


# --- limits that fit the rig in front of them (issue 29, item 2) ---------------------------

def _rot(axis, degrees):
    from scipy.spatial.transform import Rotation

    return Rotation.from_rotvec(np.radians(degrees) * np.asarray(axis, float)).as_matrix()


def _below(skel, pivot):
    """The joints strictly below ``pivot``."""
    inside = {pivot}
    for j in range(skel.n_joints):
        if skel.parents[j] in inside:
            inside.add(j)
    return sorted(inside - {pivot})


def walk_variant(kind):
    """The procedural walk's rig and motion made into another rig showing the same walk:
    ``(skeleton, world positions (F, n, 3), world rotations (F, n, 3, 3), left, forward)``, the
    last two the body's world axes."""
    from fabrik_experiments.sample_motion import sample_walk

    skel, motion = sample_walk(n_frames=60)
    P, W = motion.world_transforms(skel)
    names, offsets = list(skel.names), np.array(skel.offsets, float)
    P, W = np.array(P), np.array(W)
    T = np.eye(3)
    if kind == "z_up":
        T = _rot([1, 0, 0], 90)
    elif kind == "mirrored":
        T = np.diag([-1.0, 1.0, 1.0])
    elif kind == "mixamo":
        names = ["mixamorig:" + n for n in names]
    rests = {"a_pose": [("LeftArm", [0, 0, 1], 45), ("RightArm", [0, 0, 1], -45)],
             "t_pose": [("LeftArm", [0, 0, 1], 90), ("RightArm", [0, 0, 1], -90)],
             "bent_knees": [("LeftLeg", [1, 0, 0], 25), ("RightLeg", [1, 0, 0], 25),
                            ("LeftForeArm", [1, 0, 0], -30), ("RightForeArm", [1, 0, 0], -30)]}
    for pivot, axis, degrees in rests.get(kind, []):
        A = _rot(axis, degrees)
        j = skel.index(pivot)
        for c in _below(skel, j):
            offsets[c] = A @ offsets[c]
        for k in [j] + [c for c in _below(skel, j)]:
            W[:, k] = W[:, k] @ A.T
    offsets = offsets @ T.T
    P = P @ T.T
    W = np.einsum("ij,fnjk,lk->fnil", T, W, T)
    new = Skeleton.from_parents(names, skel.parents, offsets)
    return new, P, W, T @ np.array([1.0, 0, 0]), T @ np.array([0, 0, 1.0])


VARIANTS = ["plain", "z_up", "mirrored", "a_pose", "t_pose", "bent_knees", "mixamo"]


@pytest.mark.parametrize("kind", VARIANTS)
def test_hinges_follow_the_body_on_any_rig(kind):
    from fabrik.model.humanoid_limits import body_axes

    skel, P, W, left, forward = walk_variant(kind)
    axes = body_axes(skel)
    assert np.dot(axes.left, left) > 0.99 and np.dot(axes.forward, forward) > 0.99, axes.sources
    limits, unplaced = humanoid(skel)
    prefix = "mixamorig:" if kind == "mixamo" else ""
    arrays = rig(skel)
    for joint, sign in (("LeftLeg", -1), ("RightLeg", -1), ("LeftForeArm", 1), ("RightForeArm", 1)):
        (hinge,) = limits[prefix + joint]
        assert isinstance(hinge, Hinge)
        child = skel.index(prefix + joint) + 1
        R0 = arrays.rest_frames[child]
        axis, bone = R0 @ np.array(hinge.axis), R0[:, 1]
        # the body's left-right axis made perpendicular to the bone (itself where the limb hangs)
        expected = left - np.dot(left, bone) * bone
        if np.linalg.norm(expected) > 0.2:
            assert abs(np.dot(axis, expected / np.linalg.norm(expected))) > 0.999, (joint, axis, expected)
        # flexion turns the shin backwards, the forearm forwards
        assert sign * np.dot(bends_towards(skel, prefix + joint, limits), forward) > 0.3


@pytest.mark.parametrize("kind", VARIANTS)
def test_the_walk_on_any_rig_keeps_every_limit(kind):
    from fabrik.model.geometry import frames_from_world_rotations, limit_violations

    skel, P, W, left, forward = walk_variant(kind)
    limits, _ = humanoid(skel)
    limited = skel.with_constraints(limits)
    viol = limit_violations(limited, P, frames_from_world_rotations(skel, W))
    worst = viol.max(axis=0)
    assert worst.max() <= 1e-9, {skel.names[j]: float(worst[j]) for j in np.flatnonzero(worst > 1e-9)}


def test_bent_rest_shifts_the_hinge_range():
    plain = humanoid(walk_variant("plain")[0])[0]["LeftLeg"][0]
    bent = humanoid(walk_variant("bent_knees")[0])[0]["LeftLeg"][0]
    assert bent.min == pytest.approx(plain.min - 25 * DEG, abs=1e-9)
    assert bent.max == pytest.approx(plain.max - 25 * DEG, abs=1e-9)


@pytest.mark.parametrize("transform", ["z_up", "mirrored"])
def test_model_humanoid_knees_and_elbows_on_turned_and_mirrored_rigs(transform):
    import fabrik

    base = fabrik.models.humanoid()
    T = _rot([1, 0, 0], 90) if transform == "z_up" else np.diag([-1.0, 1.0, 1.0])
    skel = Skeleton.from_parents(base.names, base.parents, np.array(base.offsets) @ T.T)
    left, forward = T @ np.array([1.0, 0, 0]), T @ np.array([0, 0, 1.0])
    limits, _ = humanoid(skel)
    arrays = rig(skel)
    for joint, sign in (("l_knee", -1), ("r_knee", -1), ("l_elbow", 1), ("r_elbow", 1)):
        child = skel.index(joint) + 1
        R0 = arrays.rest_frames[child]
        axis, bone = R0 @ np.array(limits[joint][0].axis), R0[:, 1]
        expected = left - np.dot(left, bone) * bone
        assert abs(np.dot(axis, expected / np.linalg.norm(expected))) > 0.999
        assert sign * np.dot(bends_towards(skel, joint, limits), forward) > 0.1


def test_first_frame_decides_where_the_rest_pose_cannot():
    """A mirrored rig with no feet and straight limbs at rest: the rest pose cannot tell front
    from back, so without a pose forward is assumed right-handed (wrong for this mirror); the
    walk's first frame (knees and elbows bent) tells."""
    from fabrik.model.humanoid_limits import body_axes

    skel, P, W, left, forward = walk_variant("mirrored")
    keep = [j for j, n in enumerate(skel.names) if "Toe" not in n]
    sub = Skeleton.from_parents([skel.names[j] for j in keep], [keep.index(skel.parents[j]) if j else -1 for j in keep],
                                np.array(skel.offsets)[keep])
    pose = P[0][keep]
    assert "assumed" in body_axes(sub).sources["forward"]
    assert np.dot(body_axes(sub).forward, forward) < -0.99
    axes = body_axes(sub, pose=pose)
    assert axes.sources["forward"].startswith("first frame")
    assert np.dot(axes.forward, forward) > 0.99
    limits, _ = humanoid(sub, pose=pose)
    assert np.dot(bends_towards(sub, "LeftLeg", limits), forward) < -0.3
    with pytest.raises(ValueError, match="pose must have shape"):
        humanoid(sub, pose=pose[:3])
    with pytest.raises(ValueError, match="non-finite"):
        humanoid(sub, pose=np.full_like(pose, np.nan))
