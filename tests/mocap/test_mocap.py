"""fabrik.mocap: a take reconstructed with one method, written back as BVH, and the takes it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import fabrik
import fabrik.mocap as mocap
from fabrik.constraints import limit_violations
from fabrik.mocap import (Take, motion_from_positions, prepare_take, reconstruct_positions, reconstruct_take,
                          save_take)
from fabrik.model.motion import ChannelLayout, Motion
from fabrik.model.skeleton import Skeleton
from fabrik_experiments.sample_motion import sample_walk


def test_everything_in_all_imports():
    for name in mocap.__all__:
        assert getattr(mocap, name) is not None, name


def _bones(skeleton: Skeleton, positions: np.ndarray) -> np.ndarray:
    """(F, n - 1) the length of every bone in every frame."""
    return np.linalg.norm(positions[:, 1:] - positions[:, skeleton.parents[1:]], axis=2)


def test_reconstruct_take_follows_the_effectors_and_keeps_the_bones():
    skel, motion = sample_walk(n_frames=30)
    truth = motion.world_positions(skel)
    h = skel.height()
    rec = reconstruct_take(skel, motion)
    assert rec.method == "fabrik" and rec.frames is None and rec.notes == ()
    assert rec.positions.shape == truth.shape and np.isfinite(rec.positions).all()
    np.testing.assert_array_equal(rec.joints, np.arange(skel.n_joints))
    assert set(rec.effectors) == {"LeftToeBase_End", "RightToeBase_End", "Head_End", "LeftHand_End",
                                  "RightHand_End"}
    assert rec.tol == pytest.approx(1e-3 * h) and rec.seconds > 0
    np.testing.assert_allclose(rec.positions[:, 0], truth[:, 0], atol=1e-9 * h)  # the root follows its path
    eff = [skel.index(n) for n in rec.effectors]
    assert np.linalg.norm(rec.positions[:, eff] - truth[:, eff], axis=2).max() <= rec.tol
    assert rec.solution.reached.all()
    np.testing.assert_allclose(_bones(skel, rec.positions), _bones(skel, truth), atol=1e-9 * h)
    # the same solve from the positions alone, and with another method through the same call
    same = reconstruct_positions(skel, truth)
    np.testing.assert_array_equal(same.positions, rec.positions)
    ccd = reconstruct_take(skel, motion, method="ccd", effectors=["LeftHand_End", "RightHand_End"], max_iter=5)
    assert ccd.method == "ccd" and ccd.effectors == ("LeftHand_End", "RightHand_End")
    assert ccd.solution.iterations.max() <= 5


def test_limits_give_the_limited_method_and_hold():
    skel, motion = sample_walk(n_frames=12)
    rec = reconstruct_take(skel, motion, constraints="humanoid")
    assert rec.method == "fabrik-constrained"
    assert rec.frames.shape == (12, skel.n_joints, 3, 3)
    limits, _ = mocap.resolve_constraints(skel, "humanoid")
    assert limit_violations(skel.with_constraints(limits), rec.positions, rec.frames).max() < 1e-9
    with pytest.raises(ValueError, match="applies joint limits.*give constraints"):
        reconstruct_take(skel, motion, method="fabrik-constrained")
    # on recorded positions a method with limits solves the skeleton as given, as solve_sequence does
    free = reconstruct_positions(skel, motion.world_positions(skel), method="fabrik-constrained")
    assert free.method == "fabrik-constrained" and free.frames.shape == (12, skel.n_joints, 3, 3)


def test_round_trip_through_bvh(tmp_path):
    skel, motion = sample_walk(n_frames=20)
    src = tmp_path / "walk.bvh"
    fabrik.save_bvh(src, skel, motion)
    skel, motion = fabrik.load_bvh(src)
    rec = reconstruct_take(skel, motion)
    out = tmp_path / "rec.bvh"
    miss = save_take(out, skel, motion, rec)
    h = skel.height()
    # the sample walk's pelvis and chest carry bones to several children, which the default
    # rigid groups keep rigid, so BVH rotations hold FABRIK's poses
    assert miss < 1e-9 * h
    s2, m2 = fabrik.load_bvh(out)
    assert s2.names == skel.names and m2.n_frames == 20 and m2.frame_time == pytest.approx(motion.frame_time)
    np.testing.assert_allclose(s2.offsets, skel.offsets, atol=1e-9)
    np.testing.assert_allclose(m2.world_positions(s2), rec.positions, atol=1e-6 * h)
    # motion_from_positions is what save_take writes
    written = motion_from_positions(skel, motion, rec.positions)
    np.testing.assert_allclose(written.world_positions(skel), m2.world_positions(s2), atol=1e-6 * h)
    with pytest.raises(ValueError, match="positions must have shape"):
        motion_from_positions(skel, motion, rec.positions[:, :3])
    with pytest.raises(ValueError, match="another skeleton or motion"):
        save_take(out, skel, motion, rec, take=prepare_take(skel, motion.frames(0, 20)))


def _under_a_reference_node(skel: Skeleton, motion: Motion) -> tuple[Skeleton, Motion]:
    """The take hung below a static ``reference`` root, its hips moving in position channels
    (as MotionBuilder writes)."""
    names = ("reference",) + skel.names
    parents = np.concatenate([[-1, 0], skel.parents[1:] + 1])
    offsets = np.vstack([[0.0, 0.0, 0.0], skel.offsets])
    big = Skeleton.from_parents(names, parents, offsets)
    F = motion.n_frames
    rotations = np.concatenate([np.tile([0.0, 0.0, 0.0, 1.0], (F, 1, 1)), motion.rotations], axis=1)
    layout = motion.layout
    channels = (("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"),) + layout.channels
    moving = Motion(rotations, np.zeros((F, 3)), motion.frame_time, joint_translations={1: motion.root_positions},
                    layout=ChannelLayout(channels, frozenset(j + 1 for j in layout.end_sites)))
    return big, moving


def test_a_moving_hips_under_a_static_reference_becomes_the_root(tmp_path):
    skel, motion = sample_walk(n_frames=16)
    big, moving = _under_a_reference_node(skel, motion)
    np.testing.assert_allclose(moving.world_positions(big)[:, 1:], motion.world_positions(skel), atol=1e-9)
    take = prepare_take(big, moving)
    assert isinstance(take, Take) and take.body.names == skel.names
    np.testing.assert_array_equal(take.joints, np.arange(1, big.n_joints))
    assert any("'Hips' is the root here" in note for note in take.notes)
    plain = reconstruct_take(skel, motion)
    rec = reconstruct_take(big, moving)
    assert rec.positions.shape == (16, big.n_joints, 3) and rec.notes == take.notes
    np.testing.assert_allclose(rec.positions[:, 1:], plain.positions, atol=1e-9 * skel.height())
    np.testing.assert_array_equal(rec.positions[:, 0], take.positions[:, 0])  # the reference as recorded
    assert save_take(tmp_path / "rec.bvh", big, moving, rec, take=take) < 1e-9 * skel.height()
    # effectors are joints of the file; the reference node is not solved for
    by_index = reconstruct_take(big, moving, effectors=[big.index("LeftHand_End"), "RightHand_End"])
    assert by_index.effectors == ("LeftHand_End", "RightHand_End")
    with pytest.raises(ValueError, match="'reference' is outside the solved body"):
        reconstruct_take(big, moving, effectors=[0])


def test_takes_that_cannot_be_solved_say_why():
    skel, motion = sample_walk(n_frames=5)
    # a bone that changes length in its position channels, inside the body
    spine = skel.index("Spine")
    stretch = Motion(motion.rotations, motion.root_positions, motion.frame_time,
                     joint_translations={spine: skel.offsets[spine] * np.linspace(1.0, 1.5, 5)[:, None]})
    with pytest.raises(ValueError, match="'Spine' moves relative to its parent 'Hips'"):
        reconstruct_take(skel, stretch)
    # nothing but zero-length bones
    flat = Skeleton.from_parents(["root", "a", "b"], [-1, 0, 1], np.zeros((3, 3)))
    with pytest.raises(ValueError, match="zero length"):
        reconstruct_take(flat, Motion.rest(flat, 3))
    # the root is pinned, not an effector; joints must exist; methods must exist
    with pytest.raises(ValueError, match="always pinned"):
        reconstruct_take(skel, motion, effectors=["Hips"])
    with pytest.raises(ValueError, match="unknown joint 'Nope'; joints are: Hips"):
        reconstruct_take(skel, motion, effectors=["Nope"])
    with pytest.raises(ValueError, match="listed twice"):
        reconstruct_take(skel, motion, effectors=["Head_End", "Head_End"])
    with pytest.raises(ValueError, match="unknown skeleton method 'nope'; methods are: ccd"):
        reconstruct_take(skel, motion, method="nope")
    with pytest.raises(ValueError, match=r"takes no option 'damping'; it takes rigid_sub_bases, swing_limbs, turn_search, reach_step, dls_start, dls_damping, initial_frames, root_rotation"):
        reconstruct_take(skel, motion, damping=1.0)
    with pytest.raises(ValueError, match="tol must be finite"):
        reconstruct_take(skel, motion, tol=-1.0)
    with pytest.raises(ValueError, match="motion has 26 joints but the skeleton has 3"):
        reconstruct_take(flat, motion)
    with pytest.raises(ValueError, match="motion must be a fabrik.Motion"):
        reconstruct_take(skel, motion.world_positions(skel))
    with pytest.raises(ValueError, match=r"positions must have shape \(F, 26, 3\)"):
        reconstruct_positions(skel, np.zeros((4, 3, 3)))
    with pytest.raises(ValueError, match="non-finite"):
        reconstruct_positions(skel, np.full((2, 26, 3), np.nan))
    with pytest.raises(ValueError, match="skeleton must be a fabrik.Skeleton"):
        mocap.default_effectors("Hips")
    with pytest.raises(ValueError, match="effector index 26 out of range"):
        mocap.evaluated_joints(skel, [26])
