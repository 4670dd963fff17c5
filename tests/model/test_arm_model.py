"""Revolute-joint arms: DH tables, forward kinematics, the DHM arm, URDF in and out.

References written here from the definitions: DH frames as plain products of 4x4 matrices, joint
rotations by scipy's rotation vectors, and yourdfpy's own forward kinematics for URDF files.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik import Arm, Chain, URDFError, forward, load_urdf, models, save_urdf
from fabrik.io.urdf import rpy_from_matrix

HALF = math.pi / 2
# Table 1 of the seed (Lamb et al.), lengths in cm: L1 upper arm, L2 forearm, L3 hand
L1, L2, L3 = 33.0, 27.0, 19.0
SEED_TABLE = [(0, 0, HALF, 0), (HALF, 0, HALF, 0), (HALF, L1, HALF, 0), (HALF, 0, 0, L2),
              (0, 0, HALF, 0), (HALF, 0, HALF, 0), (0, L3, 0, 0)]


def rz(t):
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def rx(t):
    c, s = math.cos(t), math.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def tz(d):
    m = np.eye(4)
    m[2, 3] = d
    return m


def tx(a):
    m = np.eye(4)
    m[0, 3] = a
    return m


def dh_frames(rows, q, convention):
    """Frames 0..m of a DH table at angles q: the product of the A_i, straight from the definition."""
    frames = [np.eye(4)]
    for (offset, d, alpha, a), qi in zip(rows, q):
        theta = offset + qi
        step = rz(theta) @ tz(d) @ tx(a) @ rx(alpha) if convention == "standard" else rx(alpha) @ tx(a) @ rz(theta) @ tz(d)
        frames.append(frames[-1] @ step)
    return frames


def random_table(rng, m):
    return [(rng.uniform(-3, 3), rng.uniform(-2, 2), rng.uniform(-3, 3), rng.uniform(-2, 2)) for _ in range(m)]


@pytest.mark.parametrize("convention", ["standard", "modified"])
@pytest.mark.parametrize("table", ["seed", "random"])
def test_forward_matches_the_dh_product(convention, table):
    rng = np.random.default_rng(7)
    rows = SEED_TABLE if table == "seed" else random_table(rng, 6)
    arm = Arm.from_dh(rows, convention=convention)
    qs = rng.uniform(-math.pi, math.pi, (20, len(rows)))
    batch = forward(arm, qs)
    scale = 1e-9 * max(sum(abs(r[1]) + abs(r[3]) for r in rows), 1.0)
    for q, pos_b, frames_b in zip(qs, batch.positions, batch.frames):
        positions, frames = forward(arm, q)
        np.testing.assert_array_equal(positions, pos_b)  # one pose or a batch: the same numbers
        np.testing.assert_array_equal(frames, frames_b)
        ref = dh_frames(rows, q, convention)
        m = len(rows)
        if convention == "standard":  # row k is DH frame k, base to last
            for k in range(m + 1):
                np.testing.assert_allclose(positions[k], ref[k][:3, 3], rtol=0, atol=scale)
                np.testing.assert_allclose(frames[k], ref[k][:3, :3], rtol=0, atol=1e-12)
        else:  # row k is Craig's frame k + 1 before its rotation about z; row m is frame m
            for k in range(m):
                np.testing.assert_allclose(positions[k], ref[k + 1][:3, 3], rtol=0, atol=scale)
                np.testing.assert_allclose(frames[k] @ rz(q[k])[:3, :3], ref[k + 1][:3, :3], rtol=0, atol=1e-12)
            np.testing.assert_allclose(positions[m], ref[m][:3, 3], rtol=0, atol=scale)
            np.testing.assert_allclose(frames[m], ref[m][:3, :3], rtol=0, atol=1e-12)


def test_arm_layout_rest_pose_and_groups():
    arm = Arm.from_dh(SEED_TABLE)
    assert arm.n_joints == 7 and arm.joint_names == tuple(f"joint_{i}" for i in range(1, 8))
    np.testing.assert_array_equal(arm.axes, np.tile([0.0, 0.0, 1.0], (7, 1)))
    np.testing.assert_allclose(arm.rest_positions, forward(arm, np.zeros(7)).positions, atol=1e-12)
    np.testing.assert_allclose(arm.rest_positions[[3, 4, 7]], [[L1, 0, 0], [L1 + L2, 0, 0], [L1 + L2 + L3, 0, 0]])
    np.testing.assert_array_equal(arm.bone_lengths, [0, 0, L1, L2, 0, 0, L3])
    assert arm.reach == L1 + L2 + L3
    assert arm.spherical_groups() == ((0, 1, 2), (4, 5, 6))
    for name in ("axes", "origins", "tip", "lower", "upper"):
        value = getattr(arm, name)
        assert not value.flags.writeable and value.flags.c_contiguous and value.dtype == np.float64
    assert isinstance(Chain.from_dh(SEED_TABLE), Arm)
    np.testing.assert_array_equal(Chain.from_dh(SEED_TABLE, convention="modified").origins,
                                  Arm.from_dh(SEED_TABLE, convention="modified").origins)


def test_limits_clip_and_random_angles():
    arm = Arm.from_dh(SEED_TABLE[:3], limits=[(-1.0, 1.0), None, (0.5, math.inf)])
    np.testing.assert_array_equal(arm.lower, [-1.0, -math.inf, 0.5])
    np.testing.assert_array_equal(arm.upper, [1.0, math.inf, math.inf])
    assert arm.within_limits([0.0, 50.0, 0.5]) is True
    assert arm.within_limits([1.05, 0.0, 1.0]) is False and arm.within_limits([1.05, 0.0, 1.0], tol=0.1) is True
    np.testing.assert_array_equal(arm.within_limits([[0, 0, 0.0], [0, 0, 1.0]]), [False, True])
    np.testing.assert_array_equal(arm.clip([[-3.0, 9.0, 0.0]]), [[-1.0, 9.0, 0.5]])
    qs = arm.random_angles(np.random.default_rng(1), 2000)
    assert qs.shape == (2000, 3) and arm.within_limits(qs).all()
    assert -math.pi <= qs[:, 1].min() < -3.0 and 3.0 < qs[:, 1].max() <= math.pi  # unlimited: [-pi, pi]
    assert qs[:, 2].max() <= 0.5 + 2 * math.pi  # one-sided: a full turn from the limit
    assert arm.random_angles(3).shape == (3,)
    np.testing.assert_array_equal(arm.random_angles(5, 4), arm.random_angles(5, 4))


def test_forward_checks_its_input_and_never_writes_it():
    arm = Arm.from_dh(SEED_TABLE)
    q = np.linspace(-1, 1, 7)
    q.setflags(write=False)
    np.testing.assert_array_equal(forward(arm, q).positions, forward(arm, q.tolist()).positions)
    np.testing.assert_array_equal(q, np.linspace(-1, 1, 7))
    assert forward(arm, np.zeros((0, 7))).positions.shape == (0, 8, 3)
    for bad, words in [([0.0] * 6, "shape (7,) or (N, 7)"), (np.zeros((2, 3, 7)), "shape"),
                       ([0, 0, 0, math.nan, 0, 0, 0], "non-finite angle (NaN or inf) at index (3,)"),
                       (np.full((2, 7), math.inf), "non-finite"), (np.zeros(7, complex), "real numbers"),
                       (["a"] * 7, "real numbers"), ([None] * 7, "real numbers")]:
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
            forward(arm, bad)
    with pytest.raises(ValueError, match="must be a fabrik.Arm"):
        forward(Chain.straight(3), [0.0, 0.0])


@pytest.mark.parametrize("rows, convention, words", [
    ([(0, 0, 0)], "standard", r"rows\[0\] has 3 values"),
    ([(0, 0, 0, 1), (0, 0, 0, 1, 2)], "standard", r"rows\[1\] has 5 values"),
    ([(0, 0, 0, 1), (0, math.nan, 0, 1)], "standard", r"rows\[1\] contains a non-finite"),
    ([(0, 0, 0, "1")], "standard", r"rows\[0\] must be 4 numbers"),
    ([], "standard", "empty"),
    ([(0, 0, 0, 1)], "craig", "unknown DH convention 'craig'; use one of"),
])
def test_bad_dh_tables_name_the_row(rows, convention, words):
    with pytest.raises(ValueError, match=words):
        Arm.from_dh(rows, convention=convention)


def test_arm_refuses_bad_models():
    eye = np.tile(np.eye(4), (2, 1, 1))
    good = dict(joint_names=("a", "b"), axes=[[0, 0, 1], [1, 0, 0]], origins=eye, tip=np.eye(4))
    Arm(**good)
    sheared = eye.copy()
    sheared[1, 0, 1] = 0.1
    mirror = np.diag([1.0, 1.0, -1.0, 1.0])
    nan_tip = np.eye(4)
    nan_tip[0, 3] = math.nan
    for change, words in [({"joint_names": ("a", "a")}, r"distinct; repeated: \['a'\]"),
                          ({"joint_names": ("a",)}, r"shape \(1, 3\)"),
                          ({"axes": [[0, 0, 1], [0, 0, 0]]}, r"axes\[1\] \(joint 'b'\) must be a finite, non-zero"),
                          ({"origins": sheared}, r"origins\[1\] is not a rigid transform"),
                          ({"tip": mirror}, "tip is not a rigid transform"),
                          ({"tip": nan_tip}, "tip contains a non-finite"),
                          ({"origins": eye[:1]}, r"origins must have shape \(2, 4, 4\)"),
                          ({"lower": [0.0, 1.0], "upper": [1.0, 0.5]}, r"joint 1 \('b'\) has lower 1.0 > upper 0.5"),
                          ({"lower": [math.nan, 0.0]}, r"lower\[0\] is NaN"),
                          ({"base_name": ""}, "base_name must be a non-empty str")]:
        with pytest.raises(ValueError, match=words):
            Arm(**{**good, **change})
    np.testing.assert_allclose(Arm(**{**good, "axes": [[0, 0, 2], [3, 4, 0]]}).axes, [[0, 0, 1], [0.6, 0.8, 0]])


def test_mirrored_and_scaled_arms():
    rng = np.random.default_rng(3)
    arm = Arm.from_dh(random_table(rng, 5), limits=[(-1, 2)] * 5)
    normal = rng.normal(size=3)
    n = normal / np.linalg.norm(normal)
    s = np.eye(3) - 2 * np.outer(n, n)
    twin = arm.mirrored(normal)
    q = arm.random_angles(rng, 10)
    np.testing.assert_allclose(forward(twin, q).positions, forward(arm, q).positions @ s, atol=1e-12)
    np.testing.assert_allclose(forward(twin, q).frames, s @ forward(arm, q).frames @ s, atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(forward(twin, q).frames), 1.0)
    with pytest.raises(ValueError, match="normal must be a finite, non-zero 3-vector"):
        arm.mirrored([0, 0, 0])
    np.testing.assert_array_equal(twin.lower, arm.lower)
    np.testing.assert_allclose(forward(arm.scaled(0.01), q).positions, forward(arm, q).positions * 0.01, atol=1e-14)


def test_dhm_arm_is_the_seed_table_with_winter_lengths():
    arm = models.dhm_arm()
    h = models.DHM_STATURE_CM
    lengths = (0.186 * h, 0.146 * h, 0.108 * h)
    table = Arm.from_dh([(0, 0, HALF, 0), (HALF, 0, HALF, 0), (HALF, lengths[0], HALF, 0), (HALF, 0, 0, lengths[1]),
                         (0, 0, HALF, 0), (HALF, 0, HALF, 0), (0, lengths[2], 0, 0)])
    q = arm.random_angles(0, 10)
    np.testing.assert_array_equal(forward(arm, q).positions, forward(table, q).positions)
    assert arm.joint_names == ("shoulder_1", "shoulder_2", "shoulder_3", "elbow", "wrist_1", "wrist_2", "wrist_3")
    np.testing.assert_allclose(arm.bone_lengths, [0, 0, lengths[0], lengths[1], 0, 0, lengths[2]])
    assert arm.spherical_groups() == ((0, 1, 2), (4, 5, 6))
    np.testing.assert_allclose(models.dhm_arm(height=150).bone_lengths[[2, 3, 6]], [27.9, 21.9, 16.2])
    np.testing.assert_allclose(models.dhm_arm(30, 25, 18, height=150).bone_lengths[[2, 3, 6]], [30, 25, 18])
    for bad in ({"upper_arm": -1.0}, {"height": math.nan}, {"side": "middle"}):
        with pytest.raises(ValueError):
            models.dhm_arm(**bad)


@pytest.mark.parametrize("side", ["right", "left"])
def test_dhm_elbow_q4_is_the_flexion_angle(side):
    arm = models.dhm_arm(side=side)
    assert arm.lower[3] == 0.0 and arm.upper[3] == pytest.approx(math.radians(120))
    assert np.isinf(np.delete(arm.lower, 3)).all() and np.isinf(np.delete(arm.upper, 3)).all()
    rng = np.random.default_rng(11)
    for flexion in np.linspace(0.0, 2 * math.pi / 3, 7):
        q = rng.uniform(-math.pi, math.pi, 7)
        q[3] = flexion
        p = forward(arm, q).positions
        upper, fore = p[3] - p[0], p[4] - p[3]
        angle = math.acos(np.clip(upper @ fore / np.linalg.norm(upper) / np.linalg.norm(fore), -1, 1))
        assert angle == pytest.approx(flexion, abs=1e-9)  # 0 straight, 120 degrees fully flexed
    straight = forward(arm, np.zeros(7)).positions
    assert np.linalg.norm(straight[4] - straight[0]) == pytest.approx(arm.bone_lengths[2] + arm.bone_lengths[3])


def test_dhm_left_arm_is_the_mirror_image():
    right, left = models.dhm_arm(), models.dhm_arm(side="left")
    q = right.random_angles(4, 50)
    np.testing.assert_allclose(forward(left, q).positions, forward(right, q).positions * [1, 1, -1], atol=1e-12)
    np.testing.assert_array_equal(left.axes, right.axes)  # still +z: a DH arm with alpha, d negated
    assert left.base_name == "left_shoulder" and left.tip_name == "left_fingertip"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8).flatmap(lambda m: st.tuples(
    st.lists(st.tuples(*[st.floats(-4, 4)] * 4), min_size=m, max_size=m),
    st.lists(st.floats(0, 1), min_size=m, max_size=m), st.sampled_from(["standard", "modified"]))))
def test_forward_keeps_the_rest_bone_lengths(case):
    rows, unit, convention = case
    arm = Arm.from_dh(rows, convention=convention, limits=[(-2.0, 1.5)] * len(rows))
    q = arm.lower + np.array(unit) * (arm.upper - arm.lower)
    positions, frames = forward(arm, q)
    tol = 1e-9 * max(arm.reach, 1.0)
    np.testing.assert_allclose(np.linalg.norm(np.diff(positions, axis=0), axis=1), arm.bone_lengths, atol=tol)
    np.testing.assert_allclose(positions[0], arm.rest_positions[0], atol=tol)  # joint 0 never moves
    np.testing.assert_allclose(frames @ frames.transpose(0, 2, 1), np.broadcast_to(np.eye(3), frames.shape),
                               atol=1e-12)


def test_rpy_survives_gimbal_lock():
    rng = np.random.default_rng(5)
    mats = list(Rotation.random(50, random_state=1).as_matrix())
    for pitch in (HALF, -HALF, HALF - 1e-14, HALF + 3e-16, -HALF + 1e-12):
        mats.append(Rotation.from_euler("ZYX", [rng.uniform(-3, 3), pitch, rng.uniform(-3, 3)]).as_matrix())
    for m in mats:
        roll, pitch, yaw = rpy_from_matrix(m)
        back = Rotation.from_euler("ZYX", [yaw, pitch, roll]).as_matrix()  # URDF: Rz(yaw) Ry(pitch) Rx(roll)
        np.testing.assert_allclose(back, m, atol=2e-15)


# --- URDF -------------------------------------------------------------------------------------

def yourdfpy_frames(path, arm, q):
    """yourdfpy's own forward kinematics: each joint's moving frame and the tip, in the base link."""
    import yourdfpy

    model = yourdfpy.URDF.load(str(path), load_meshes=False)
    model.update_cfg(dict(zip(arm.joint_names, q)))
    moving = [model.get_transform(model.joint_map[name].child, arm.base_name) for name in arm.joint_names]
    return moving, model.get_transform(arm.tip_name, arm.base_name)


def assert_matches_yourdfpy(path, arm, qs, atol):
    for q in qs:
        positions, frames = forward(arm, q)
        moving, tip = yourdfpy_frames(path, arm, q)
        for k, frame in enumerate(moving):  # joint k's frame, turned by its own angle, is yourdfpy's link frame
            turn = Rotation.from_rotvec(arm.axes[k] * q[k]).as_matrix()
            np.testing.assert_allclose(positions[k], frame[:3, 3], rtol=0, atol=atol)
            np.testing.assert_allclose(frames[k] @ turn, frame[:3, :3], rtol=0, atol=1e-12)
        np.testing.assert_allclose(positions[-1], tip[:3, 3], rtol=0, atol=atol)
        np.testing.assert_allclose(frames[-1], tip[:3, :3], rtol=0, atol=1e-12)


@pytest.mark.parametrize("robot, tip, joints, groups", [
    ("panda", "panda_hand", [f"panda_joint{i}" for i in range(1, 8)], ((0, 1), (4, 5))),
    ("ur5", "tool0", ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
                      "wrist_3_joint"], ()),
])
def test_urdf_forward_matches_yourdfpy(urdf_dir, robot, tip, joints, groups):
    path = urdf_dir / f"{robot}.urdf"
    arm = load_urdf(path, tip=tip)
    assert list(arm.joint_names) == joints and arm.tip_name == tip
    assert arm.spherical_groups() == groups
    assert np.isfinite(arm.lower).all() and np.isfinite(arm.upper).all()
    assert_matches_yourdfpy(path, arm, arm.random_angles(np.random.default_rng(2), 15), atol=1e-9 * arm.reach)


def test_urdf_human_arm_from_the_thorax(urdf_dir):
    arm = load_urdf(urdf_dir / "human.urdf", tip="right_hand", base="middle_thorax")
    assert arm.joint_names[0] == "right_clavicle_joint_X" and arm.joint_names[-1] == "right_wrist_X"
    assert_matches_yourdfpy(urdf_dir / "human.urdf", arm, arm.random_angles(9, 3), atol=1e-9 * arm.reach)


@pytest.mark.parametrize("side", ["right", "left"])
def test_dhm_arm_round_trips_through_urdf(tmp_path, side):
    arm = models.dhm_arm(side=side)
    path = tmp_path / "dhm.urdf"
    save_urdf(path, arm, name="dhm_arm")
    back = load_urdf(path, tip=arm.tip_name)
    assert back.joint_names == arm.joint_names and back.base_name == arm.base_name
    np.testing.assert_array_equal(back.lower, arm.lower)
    np.testing.assert_array_equal(back.upper, arm.upper)
    qs = arm.random_angles(np.random.default_rng(6), 20)
    np.testing.assert_allclose(forward(back, qs).positions, forward(arm, qs).positions, rtol=0, atol=1e-12 * arm.reach)
    np.testing.assert_allclose(forward(back, qs).frames, forward(arm, qs).frames, rtol=0, atol=1e-14)
    assert_matches_yourdfpy(path, arm, qs[:5], atol=1e-12 * arm.reach)  # the file itself, read by yourdfpy


def test_save_urdf_writes_any_arm_and_refuses_one_sided_limits(tmp_path):
    rng = np.random.default_rng(8)
    arm = Arm.from_dh(random_table(rng, 6), convention="modified", limits=[(-1, 1), None] * 3,
                      names=["a", "b", "a_link", "d", "e", "f"], base_name="a_link", tip_name="f_link")
    save_urdf(tmp_path / "any.urdf", arm)
    back = load_urdf(tmp_path / "any.urdf", tip="f_link", base="a_link")
    qs = arm.random_angles(rng, 10)
    np.testing.assert_allclose(forward(back, qs).positions, forward(arm, qs).positions, rtol=0, atol=1e-12)
    with pytest.raises(URDFError, match="joint 'joint_2' is limited on one side only"):
        save_urdf(tmp_path / "bad.urdf", Arm.from_dh(SEED_TABLE[:2], limits=[None, (0.0, math.inf)]))


def write_urdf(tmp_path, joints):
    """A small robot: link names from the joints; each joint (name, type, parent, child[, extra xml])."""
    links = sorted({j[2] for j in joints} | {j[3] for j in joints})
    body = "".join(f'<link name="{n}"/>' for n in links)
    for name, kind, parent, child, *extra in joints:
        body += (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                 f'<origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 0 2"/>{"".join(extra)}</joint>')
    path = tmp_path / "robot.urdf"
    path.write_text(f'<?xml version="1.0"?><robot name="r">{body}</robot>')
    return path


LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def test_load_urdf_folds_fixed_joints_and_ignores_branches(tmp_path):
    path = write_urdf(tmp_path, [("j1", "revolute", "base", "l1", LIMIT), ("f", "fixed", "l1", "l2"),
                                 ("j2", "continuous", "l2", "l3"), ("finger", "prismatic", "l3", "finger", LIMIT),
                                 ("t", "fixed", "l3", "tool")])
    arm = load_urdf(path, tip="tool")
    assert arm.joint_names == ("j1", "j2") and arm.base_name == "base"
    np.testing.assert_array_equal(arm.axes, [[0, 0, 1], [0, 0, 1]])  # normalised
    np.testing.assert_array_equal(arm.lower, [-1, -math.inf])
    np.testing.assert_allclose(arm.rest_positions, [[0, 0, 0.1], [0, 0, 0.3], [0, 0, 0.4]])
    np.testing.assert_allclose(arm.bone_lengths, [0.2, 0.1])


def test_load_urdf_errors_name_the_problem(tmp_path, urdf_dir):
    panda = urdf_dir / "panda.urdf"
    with pytest.raises(URDFError, match="unknown link 'hand' for tip .*; links are: panda_link0, panda_link1"):
        load_urdf(panda, tip="hand")
    with pytest.raises(URDFError, match="no path from base 'panda_leftfinger' to tip 'panda_hand'"):
        load_urdf(panda, tip="panda_hand", base="panda_leftfinger")
    finger = load_urdf(panda, tip="panda_leftfinger")  # the arm and one finger's prismatic joint
    assert finger.n_joints == 8 and finger.joint_types[-1] == "prismatic" and finger.upper[-1] == 0.04
    with pytest.raises(URDFError, match="joint 'panda_finger_joint2' on the path mimics 'panda_finger_joint1'"):
        load_urdf(panda, tip="panda_rightfinger")
    with pytest.raises(URDFError, match="tip and base are the same link"):
        load_urdf(panda, tip="panda_link0")
    assert issubclass(URDFError, ValueError)


def test_load_urdf_refuses_broken_files(tmp_path):
    with pytest.raises(URDFError, match="URDF file not found"):
        load_urdf(tmp_path / "missing.urdf", tip="x")
    broken = tmp_path / "broken.urdf"
    broken.write_text('<robot name="r"><link name="a"></robot>')
    with pytest.raises(URDFError, match="is not well-formed XML"):
        load_urdf(broken, tip="a")
    broken.write_text('<sdf version="1.6"/>')
    with pytest.raises(URDFError, match="root element is <sdf>, not <robot>"):
        load_urdf(broken, tip="a")
    for joints, words in [
        ([("j", "planar", "a", "b")], "joint 'j' on the path from 'a' to 'b' is 'planar'"),
        ([("j", "revolute", "a", "b")], "revolute joint 'j' has no <limit>"),
        ([("j", "fixed", "a", "b")], "no revolute, continuous or prismatic joint between 'a' and 'b'"),
        ([("j", "continuous", "a", "b"), ("k", "continuous", "b", "c", '<mimic joint="j"/>')], "'k' on the path mimics"),
        ([("j", "continuous", "a", "b"), ("k", "continuous", "c", "d")], "has 2 root links .*; pass base="),
        ([("j", "continuous", "a", "b"), ("k", "floating", "b", "c")], "joint 'k' on the path .* 'floating'"),
        ([("j", "continuous", "a", "b"), ("k", "prismatic", "b", "c")], "prismatic joint 'k' has no <limit>"),
    ]:
        tip = joints[-1][3]
        with pytest.raises(URDFError, match=words):
            load_urdf(write_urdf(tmp_path, joints), tip=tip, base="a" if "mimics" in words else None)
    tree = write_urdf(tmp_path, [("j", "continuous", "a", "b"), ("k", "continuous", "a", "c")])
    with pytest.raises(URDFError, match="unknown link 'd' for tip in .*; links are: a, b, c"):
        load_urdf(tree, tip="d")
    with pytest.raises(URDFError, match="no path from base 'b' to tip 'c' .*: 'c' is not below 'b'"):
        load_urdf(tree, tip="c", base="b")


def test_dhm_figure_script_runs(tmp_path):
    import runpy
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "examples" / "fig_dhm_arm.py"
    out = tmp_path / "arm.png"
    argv = sys.argv
    sys.argv = [str(script), str(out)]
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = argv
    assert out.stat().st_size > 10_000
