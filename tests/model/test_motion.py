"""Motion: forward kinematics and positions -> rotations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from fabrik.model.motion import ChannelLayout, Motion, rotations_from_positions
from fabrik.model.skeleton import Skeleton
from fabrik_experiments.sample_motion import humanoid_skeleton, sample_walk

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mocap"
MOCAP_FILE = MOCAP / "cmu_131_01.bvh"


def chain3() -> Skeleton:
    return Skeleton.from_parents(["a", "b", "c"], [-1, 0, 1], [[1, 2, 3], [0, 1, 0], [0, 2, 0]])


def test_forward_kinematics_by_hand():
    skel = chain3()
    q = np.zeros((1, 3, 4))
    q[..., 3] = 1
    q[0, 0] = Rotation.from_euler("Z", 90, degrees=True).as_quat()  # root turns +Y into -X
    q[0, 1] = Rotation.from_euler("X", 90, degrees=True).as_quat()  # b turns +Y into +Z
    m = Motion(q, [[1, 2, 3]])
    p = m.world_positions(skel)
    np.testing.assert_allclose(p[0], [[1, 2, 3], [0, 2, 3], [0, 2, 5]], atol=1e-12)


def test_joint_translations_replace_offsets():
    skel = chain3()
    m = Motion.rest(skel, 2)
    moved = Motion(m.rotations, m.root_positions, joint_translations={1: [[0, 5, 0], [1, 0, 0]]})
    p = moved.world_positions(skel)
    np.testing.assert_allclose(p[:, 1], [[1, 7, 3], [2, 2, 3]])
    np.testing.assert_allclose(p[:, 2], [[1, 9, 3], [2, 4, 3]])


def test_motion_validation():
    skel = chain3()
    good = Motion.rest(skel, 2)
    with pytest.raises(ValueError, match="rotations"):
        Motion(np.zeros((2, 3, 3)), good.root_positions)
    with pytest.raises(ValueError, match="zero quaternion"):
        Motion(np.zeros((2, 3, 4)), good.root_positions)
    with pytest.raises(ValueError, match="root_positions"):
        Motion(good.rotations, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="frame_time"):
        Motion(good.rotations, good.root_positions, frame_time=0)
    with pytest.raises(ValueError, match="joint_translations"):
        Motion(good.rotations, good.root_positions, joint_translations={0: np.zeros((2, 3))})
    with pytest.raises(ValueError, match="joints"):
        good.world_positions(humanoid_skeleton())
    assert not good.rotations.flags.writeable


def test_quaternions_are_normalised_and_frames_slice():
    skel = chain3()
    q = np.tile([0.0, 0.0, 0.0, 2.0], (5, 3, 1))
    m = Motion(q, np.arange(15.0).reshape(5, 3), frame_time=0.1)
    np.testing.assert_allclose(m.rotations[..., 3], 1.0)
    sub = m.frames(1, 5, 2)
    assert sub.n_frames == 2 and sub.frame_time == pytest.approx(0.2)
    np.testing.assert_allclose(sub.root_positions, m.root_positions[1:5:2])
    with pytest.raises(ValueError, match="no frames"):
        m.frames(4, 2)


def test_rest_motion_gives_rest_positions():
    skel = humanoid_skeleton()
    np.testing.assert_allclose(Motion.rest(skel).world_positions(skel)[0], skel.rest_positions(), atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_round_trip_of_fk_positions_is_exact(seed):
    """Positions made by forward kinematics (every joint's children a rotated rest copy) come back."""
    skel = humanoid_skeleton()
    rng = np.random.default_rng(seed)
    F = 3
    q = Rotation.random(F * skel.n_joints, random_state=rng).as_quat().reshape(F, skel.n_joints, 4)
    truth = Motion(q, rng.normal(size=(F, 3)) * 50)
    p = truth.world_positions(skel)
    back = rotations_from_positions(skel, p)
    assert np.max(np.abs(back.world_positions(skel) - p)) < 1e-9 * skel.height()
    # multi-child joints (Hips, Spine1) are fully determined: their world rotations come back
    # (local ones need not: the twist of the single-child Spine between them is free)
    _, w_back = back.world_transforms(skel)
    _, w_true = truth.world_transforms(skel)
    for name in ("Hips", "Spine1"):
        j = skel.index(name)
        np.testing.assert_allclose(w_back[:, j], w_true[:, j], atol=1e-9)  # rotation matrices


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 12))
def test_round_trip_chain_with_arbitrary_bone_directions(seed, n):
    """A chain placed bone by bone in random directions (exact lengths): single-child joints
    reproduce it to rounding."""
    rng = np.random.default_rng(seed)
    offsets = rng.normal(size=(n, 3))
    skel = Skeleton.from_parents([f"j{i}" for i in range(n)], list(range(-1, n - 1)), offsets)
    F = 4
    p = np.zeros((F, n, 3))
    p[:, 0] = rng.normal(size=(F, 3))
    for i in range(1, n):
        d = rng.normal(size=(F, 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        p[:, i] = p[:, i - 1] + d * np.linalg.norm(offsets[i])
    back = rotations_from_positions(skel, p, propagate=bool(seed % 2))
    scale = max(skel.height(p[0]), 1.0)
    assert np.max(np.abs(back.world_positions(skel) - p)) < 1e-9 * scale


def test_antiparallel_bone_is_handled():
    skel = chain3()
    p = skel.rest_positions().copy()
    p[2] = p[1] - (p[2] - p[1])  # fold the last bone straight back
    back = rotations_from_positions(skel, p)
    assert np.isfinite(back.rotations).all()
    np.testing.assert_allclose(back.world_positions(skel)[0], p, atol=1e-12)


def test_twist_comes_from_the_reference():
    """With the true rotations as reference the swing is the identity, so the true twist (and the
    whole rotation) of every single-child joint is kept."""
    skel, motion = sample_walk(n_frames=10)
    p = motion.world_positions(skel)
    back = rotations_from_positions(skel, p, motion.rotations, propagate=False)
    leaves = set(skel.leaves)
    for j in range(skel.n_joints):
        if j in leaves:
            continue
        dot = np.abs(np.sum(back.rotations[:, j] * motion.rotations[:, j], axis=1))
        np.testing.assert_allclose(dot, 1.0, atol=1e-9, err_msg=skel.names[j])


def test_propagated_twist_is_continuous():
    skel, motion = sample_walk()
    p = motion.world_positions(skel)
    back = rotations_from_positions(skel, p, motion.rotations[0])
    np.testing.assert_allclose(back.world_positions(skel), p, atol=1e-9 * skel.height())
    # consecutive frames differ by small rotations (no twist flips)
    r = Rotation.from_quat(back.rotations[1:].reshape(-1, 4)) * Rotation.from_quat(
        back.rotations[:-1].reshape(-1, 4)).inv()
    assert r.magnitude().max() < np.radians(20)


def test_layout_and_reference_motion_are_carried():
    skel, motion = sample_walk(n_frames=5)
    back = rotations_from_positions(skel, motion.world_positions(skel), motion)
    assert back.layout == motion.layout and back.frame_time == motion.frame_time
    with pytest.raises(ValueError, match="positions"):
        rotations_from_positions(skel, np.zeros((5, 3, 3)))
    with pytest.raises(ValueError, match="reference_rotations"):
        rotations_from_positions(skel, motion.world_positions(skel), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="layout"):
        rotations_from_positions(skel, motion.world_positions(skel), layout=ChannelLayout(((),)))


@pytest.mark.mocap
@pytest.mark.skipif(not MOCAP_FILE.is_file(), reason=f"real mocap file not found: {MOCAP_FILE}")
def test_round_trip_on_mocap_with_zero_length_bones():
    from fabrik.io.bvh import load_bvh

    skel, motion = load_bvh(MOCAP_FILE)
    motion = motion.frames(0, 300)
    p = motion.world_positions(skel)
    back = rotations_from_positions(skel, p, motion.rotations[0])
    assert np.max(np.abs(back.world_positions(skel) - p)) < 1e-9 * skel.height()
