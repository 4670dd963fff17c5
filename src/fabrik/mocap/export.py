"""Solved positions back to a take: rotations for every joint, in the recording's layout.

``motion_from_positions(skeleton, motion, positions)`` gives the ``fabrik.Motion`` (rotations,
quaternions ``(x, y, z, w)``) whose forward kinematics reproduce ``positions`` (F, n, 3, file
units) where a BVH skeleton can; ``save_take(path, skeleton, motion, positions)`` writes it in
the format the path's suffix names (``fabrik.save_motion``: ``.bvh`` with the recording's
hierarchy, offsets and channel layout, ``.npz`` joint positions) and says how far the written
file is from the positions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fabrik.mocap.takes import Take, _steady_translations, prepare_take
from fabrik.model.motion import ChannelLayout, Motion, rotations_from_positions
from fabrik.model.skeleton import Skeleton


def _take_for(skeleton: Skeleton, motion: Motion, take: Take | None) -> Take:
    if take is None:
        return prepare_take(skeleton, motion)
    if not isinstance(take, Take):
        raise ValueError(f"take must be a fabrik.mocap.Take (prepare_take), got {type(take).__name__}")
    if take.skeleton is not skeleton or take.motion is not motion:
        raise ValueError("take was prepared from another skeleton or motion: give the take that "
                         "prepare_take(skeleton, motion) returned for these, or none")
    return take


def _positions(positions, take: Take) -> np.ndarray:
    positions = getattr(positions, "positions", positions)  # a Reconstruction
    p = np.asarray(positions, dtype=np.float64)
    shape = take.positions.shape
    if p.shape != shape:
        raise ValueError(f"positions must have shape {shape} (the take's frames, every joint of the file), "
                         f"got {p.shape}")
    if not np.isfinite(p).all():
        raise ValueError("positions contain a non-finite value (NaN or inf)")
    return p


def _frames_and_limits(positions, frames, limits, take: Take):
    """(frames (F, m, 3, 3) or None, the body skeleton whose limits the file keeps) from the
    arguments of ``motion_from_positions``; a ``Reconstruction`` gives both."""
    if frames is None:
        frames = getattr(positions, "frames", None)
    if limits is None:
        limits = getattr(positions, "body", None)
    body = take.body
    if frames is None:
        return None, body
    F = np.asarray(frames, dtype=np.float64)
    shape = (take.n_frames, len(take.joints), 3, 3)
    if F.shape != shape:
        raise ValueError(f"frames must have shape {shape} (the take's frames, the solved joints), got {F.shape}")
    if not np.isfinite(F).all():
        raise ValueError("frames contain a non-finite value (NaN or inf)")
    if limits is None:
        return F, body
    if isinstance(limits, Skeleton):
        if limits.names != body.names or limits.n_joints != body.n_joints:
            raise ValueError("limits must be the solved skeleton (Take.body with constraints), whose joints are "
                             f"{body.names[:3]}...; got a skeleton with joints {limits.names[:3]}...")
        return F, body.with_constraints({limits.names[j]: items for j, items in limits.constraints.items()},
                                        reference=limits.limit_reference)
    if isinstance(limits, dict):
        return F, body.with_constraints(limits)
    raise ValueError(f"limits must be a mapping {{joint name: limits}} or the solved Skeleton, got "
                     f"{type(limits).__name__}")


def motion_from_positions(skeleton: Skeleton, motion: Motion, positions, *, take: Take | None = None,
                          frames=None, limits=None) -> Motion:
    """A motion (rotations) for solved ``positions`` of a recorded take.

    **With joint frames** (a constrained solve's ``frames``, given or carried by a
    ``Reconstruction``), each joint's rotation is the one its solved frames hold, twist included,
    and its local rotation is projected onto its limits (``fabrik.mocap.frames_export``): a
    hinge's local rotation then turns about its one axis and every limit holds in the written
    file, whatever reads it. Joints whose several child bones the limited solver moved apart (a
    pelvis carrying thighs and spine) get the least-squares rotation, so such a file may differ
    from ``positions`` there (``save_take`` returns by how much).

    **Without frames**, twist is seeded from the recording's first frame, then carried frame to frame. The
    recording's channel layout, position channels (holding the solved bones: a channel that only
    wobbles about its bone holds the bone) and frame time are kept, except that joints
    with fewer than three rotation channels (hinges, fixed joints) get all three
    (``ChannelLayout.with_all_rotations``): the solvers turn every joint as a ball joint. Joints
    outside the solved body (``Take.joints``) keep their recorded rotations.

    The result reproduces ``positions`` exactly where the skeleton can: position-based solvers
    such as FABRIK treat every bone as a free ball joint, so they may bend a joint's rigid set of
    children (a pelvis with both hips on one joint, shoulders on one chest joint); such a joint
    gets the least-squares rotation instead, and each joint below it is aimed at its solved
    children from where that puts it (``rigid_sub_bases`` prevents the bending). Skeletons whose
    multi-child joints have zero-length children (the CMU files) are reproduced exactly.

    Args:
        skeleton, motion: the recorded take (n joints, F frames).
        positions: (F, n, 3) solved world positions of every joint (file units), e.g.
            ``Reconstruction.positions`` (a ``Reconstruction`` itself is accepted).
        take: what ``prepare_take(skeleton, motion)`` returned, when the caller has it, so that
            it is not computed again.
        frames: (F, m, 3, 3) joint frames of the solved joints (``Take.joints``), e.g.
            ``Reconstruction.frames`` or ``SequenceSolution.frames`` of a constrained method;
            default a ``Reconstruction``'s own, else none.
        limits: the limits the file must keep: the solved skeleton with its constraints (as
            ``Reconstruction.body``) or a mapping ``{joint name: limits}`` for ``Take.body``;
            default a ``Reconstruction``'s ``body``. Used only with frames.

    Returns:
        A ``fabrik.Motion`` for ``skeleton`` (``fabrik.save_bvh`` writes it).

    Raises:
        ValueError: positions or frames of the wrong shape or not finite, a ``take`` of another
            skeleton or motion, limits of another skeleton, or whatever ``prepare_take`` refuses.
    """
    from scipy.spatial.transform import Rotation

    take = _take_for(skeleton, motion, take)
    solved_frames, limited = _frames_and_limits(positions, frames, limits, take)
    positions = _positions(positions, take)
    solved, joints, world_rotations = take.body, take.joints, take.rotations
    top = int(joints[0])
    rotations = motion.rotations.copy()
    if solved_frames is not None:
        from fabrik.mocap.frames_export import local_rotations_from_frames

        local = local_rotations_from_frames(limited, positions[:, joints], solved_frames)
        f, m = local.shape[:2]
        rotations[:, joints] = Rotation.from_matrix(local.reshape(-1, 3, 3)).as_quat().reshape(f, m, 4)
        root_world = local[:, 0]
    else:
        reference = motion.rotations[0, joints].copy()
        if top:
            reference[0] = Rotation.from_matrix(world_rotations[0, top]).as_quat()
        part = rotations_from_positions(solved, positions[:, joints], reference, propagate=True)
        rotations[:, joints] = part.rotations
        root_world = part.rotation_matrices()[:, 0]
    if top:
        above = world_rotations[:, skeleton.parents[top]]
        local = np.einsum("fji,fjk->fik", above, root_world)
        rotations[:, top] = Rotation.from_matrix(local).as_quat()
    root_positions = motion.root_positions if top else positions[:, 0]
    # position channels hold the bones that were solved (``prepare_take``'s fixed bones in place of
    # an exporter's rounding wobble), so the file reproduces the solved poses
    translations = {**motion.joint_translations, **_steady_translations(motion, solved, joints)}
    layout = motion.layout or ChannelLayout.default(skeleton)  # None: a motion not read from BVH
    return Motion(rotations, root_positions, motion.frame_time, joint_translations=translations,
                  layout=layout.with_all_rotations())


def save_take(path: str | Path, skeleton: Skeleton, motion: Motion, positions, *, take: Take | None = None,
              frames=None, limits=None) -> float:
    """Write solved ``positions`` of a recorded take (``motion_from_positions``) in the format
    ``path``'s suffix names (``fabrik.save_motion``): ``.bvh`` with the recording's hierarchy,
    offsets and channel layout (9 decimals), ``.npz`` as joint positions with the recording's
    skeleton (``fabrik.io.positions``).

    Args:
        path: the file to write (``.bvh`` or ``.npz``); its folder must exist.
        skeleton, motion, positions, take, frames, limits: as for ``motion_from_positions`` (a
            constrained ``Reconstruction`` brings its frames and limits, which the file keeps).

    Returns:
        The largest distance (file units) of a joint in the written motion from ``positions``
        over all frames: 0 to rounding where BVH rotations can hold the solved poses (see
        ``motion_from_positions`` for when they cannot, and for the limits kept with frames).

    Raises:
        ValueError: as ``motion_from_positions``, or a suffix no format has
        (``fabrik.UnknownFormatError``, checked first); OSError when the file cannot be written.
    """
    from fabrik.io.formats import motion_format

    fmt = motion_format(path)
    take = _take_for(skeleton, motion, take)
    poses = _positions(positions, take)
    written = motion_from_positions(skeleton, motion, positions, take=take, frames=frames, limits=limits)
    fmt.save(path, skeleton, written)  # BVH's 9 decimals read back as ``written`` to far below 1e-5 of a body
    return float(np.linalg.norm(written.world_positions(skeleton) - poses, axis=2).max())


__all__ = ["motion_from_positions", "save_take"]
