"""Joint frames of skeleton poses and how far a pose breaks its limits: the geometry that
skeleton solvers, motion capture and the public ``fabrik.constraints`` share.

Frames follow the convention of ``fabrik.solvers.skeleton_fabrik`` (docs/constraints.md): joint
i's frame ``F[i]`` (3 x 3, columns its +X, +Y, +Z) has +Y along the bone arriving at i; a
zero-length bone takes its parent's frame; the root's frame is the root orientation. For a BVH
pose with world rotations ``W``, ``F[i] = W[parent(i)] R0[i]`` with ``R0`` the rest frames
(``fabrik.model.rig.rest_frames``). A limit on joint j restricts each bone c leaving j in its
reference ``F[j] Rig.limit_Q[c]`` (``R0[j]^T A[j] R0[c]``, A the skeleton's ``limit_reference``,
identity by default).
"""

from __future__ import annotations

import math

import numpy as np

from fabrik.limits.base import joint_violation
from fabrik.model.rig import rig


def _writable(value, name: str) -> np.ndarray:
    from fabrik._validation import real_numbers

    arr = np.ascontiguousarray(real_numbers(value, name), dtype=np.float64)
    return arr if arr.flags.writeable else arr.copy()


def rest_up(skeleton) -> np.ndarray:
    """The body's up axis in the rest pose (``fabrik.model.humanoid_limits.body_axes``: root to
    neck/head by joint names, else the spine, else ankles to root, else +Y), a unit (3,) vector."""
    from fabrik.model.humanoid_limits import body_axes

    return np.asarray(body_axes(skeleton).up, dtype=np.float64)


def frames_from_world_rotations(skeleton, world_rotations) -> np.ndarray:
    """Joint frames of a BVH pose: ``F[i] = W[parent(i)] R0[i]``, ``F[root] = W[root]``.

    Args:
        world_rotations: (n, 3, 3) or (F, n, 3, 3) world rotation matrices per joint (the second
            output of ``Motion.world_transforms``).

    Returns:
        (n, 3, 3) or (F, n, 3, 3) frames (zero-length bones take their parent's frame).
    """
    W = np.asarray(world_rotations, dtype=np.float64)
    n = skeleton.n_joints
    if W.shape[-3:] != (n, 3, 3) or W.ndim not in (3, 4):
        raise ValueError(f"world_rotations must have shape (n, 3, 3) or (F, n, 3, 3) with n = {n}, got {W.shape}")
    if not np.isfinite(W).all():
        raise ValueError("world_rotations contain a non-finite value")
    arrays = rig(skeleton)
    R0 = arrays.rest_frames
    out = np.empty_like(W)
    out[..., 0, :, :] = W[..., 0, :, :]
    for i in range(1, n):
        q = arrays.parents[i]
        if arrays.lengths[i] == 0.0:
            out[..., i, :, :] = out[..., q, :, :]
        else:
            out[..., i, :, :] = W[..., q, :, :] @ R0[i]
    return np.ascontiguousarray(out)


def frames_from_pose(skeleton, positions) -> np.ndarray:
    """(n, 3, 3) frames for joint positions (n, 3) with zero twist relative to the rest pose.

    The root frame is the least-squares rotation taking the rest directions of the root's own
    bones onto their directions in ``positions`` (identity for the rest pose); every other bone's
    frame is its reference frame (parent frame times the rest offset rotation) carried onto the
    bone by the smallest rotation. This is what a solve uses when ``initial_frames`` is not given.
    """
    arrays = rig(skeleton)
    p = _writable(positions, "positions")
    if p.shape != (skeleton.n_joints, 3) or not np.isfinite(p).all():
        raise ValueError(f"positions must be finite with shape ({skeleton.n_joints}, 3), got {p.shape}")
    out = np.empty((skeleton.n_joints, 3, 3))
    from fabrik.kernels.tree_limits import frames_from_pose as frames_kernel

    frames_kernel(p, arrays.parents, arrays.lengths, arrays.Q, arrays.own_start, arrays.own_list, out)
    return out


def turned_frames(skeleton, frames, before, after) -> np.ndarray:
    """(..., n, 3, 3) joint ``frames`` of poses ``before`` (..., n, 3), each bone's frame turned by
    the smallest rotation taking its direction in ``before`` onto its direction in ``after``
    (same shape): the frames of ``after`` keeping the bones' roll. A zero-length bone takes its
    parent's frame; the root's frame is kept."""
    arrays = rig(skeleton)
    parents, lengths = arrays.parents, arrays.lengths
    bones = np.flatnonzero(lengths > 0.0)
    p, q = np.asarray(before, dtype=np.float64), np.asarray(after, dtype=np.float64)
    a = p[..., bones, :] - p[..., parents[bones], :]
    b = q[..., bones, :] - q[..., parents[bones], :]
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    v = np.cross(a, b)
    c = np.einsum("...i,...i->...", a, b)
    k = np.where(1.0 + c > 1e-12, 1.0 / np.maximum(1.0 + c, 1e-12), 0.0)
    K = np.zeros(v.shape + (3,))
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    K[..., 1, 0], K[..., 2, 0], K[..., 2, 1] = v[..., 2], -v[..., 1], v[..., 0]
    R = np.eye(3) + K + k[..., None, None] * (K @ K)  # Rodrigues: the smallest rotation a -> b
    out = np.array(frames, dtype=np.float64)
    out[..., bones, :, :] = R @ out[..., bones, :, :]
    for i in range(1, skeleton.n_joints):
        if lengths[i] == 0.0:
            out[..., i, :, :] = out[..., parents[i], :, :]
    return out


def carry_frames(skeleton, positions, first_frames=None) -> np.ndarray:
    """(F, n, 3, 3) joint frames for poses ``positions`` (F, n, 3) whose roll is carried from frame
    to frame (``turned_frames`` of the frame before; the root's frame the least-squares turn of
    its own bones), from ``first_frames`` (n, 3, 3; default ``frames_from_pose(positions[0])``):
    the frames a tracker that only sees positions keeps."""
    p = np.asarray(positions, dtype=np.float64)
    n = skeleton.n_joints
    if p.ndim != 3 or p.shape[1:] != (n, 3) or not np.isfinite(p).all():
        raise ValueError(f"positions must be finite with shape (F, {n}, 3), got {p.shape}")
    out = np.empty(p.shape[:2] + (3, 3))
    out[0] = frames_from_pose(skeleton, p[0]) if first_frames is None else np.asarray(first_frames, dtype=np.float64)
    for f in range(1, p.shape[0]):
        out[f] = turned_frames(skeleton, out[f - 1], p[f - 1], p[f])
        out[f, 0] = frames_from_pose(skeleton, p[f])[0]
    return out


def _vec_twist(H, Fc) -> np.ndarray:
    """Twist (radians) of frames Fc (..., 3, 3) about their +Y relative to H carried onto that +Y
    by the smallest rotation (the swing-twist split of ``swing_twist``), vectorised."""
    a = H[..., :, 1]
    b = Fc[..., :, 1]
    z = H[..., :, 2]
    c = np.einsum("...i,...i->...", a, b)
    v = np.cross(a, b)
    vz = np.cross(v, z)
    k = np.where(1.0 + c < 1e-8, 0.0, 1.0 / np.maximum(1.0 + c, 1e-8))[..., None]
    gz = np.where((1.0 + c < 1e-8)[..., None], -z, z + vz + k * np.cross(v, vz))
    gz = gz - np.einsum("...i,...i->...", gz, b)[..., None] * b
    gz /= np.linalg.norm(gz, axis=-1, keepdims=True)
    gx = np.cross(b, gz)
    fz = Fc[..., :, 2]
    return np.arctan2(np.einsum("...i,...i->...", fz, gx), np.einsum("...i,...i->...", fz, gz))


def limit_violations(skeleton, positions, frames, directions_only: bool = False) -> np.ndarray:
    """How far (radians) each joint's limit is exceeded; (..., n), 0 where every limit holds.

    Pure numpy, independent of the kernels; ``positions`` (..., n, 3) and ``frames``
    (..., n, 3, 3) may carry leading axes (e.g. frames of a motion). For each non-zero bone c
    limited by joint j = parent(c), in its reference frame ``H = frames[j] Rig.limit_Q[c]``, with
    v the bone's direction (from ``positions``) in H and the twist of ``frames[c]`` relative to
    H: the joint's limits' own measure (``fabrik.limits.base.joint_violation``: a cone's excess,
    a hinge's angle out of its plane and range, a twist's excess, a hinge's zero twist without
    one). Also counted: the angle between ``frames[c]``'s +Y and the bone. Entry j is the worst
    over j's bones. ``directions_only``: the bones' directions alone, twists left out (what
    positions show).
    """
    arrays = rig(skeleton)
    p = np.asarray(positions, dtype=np.float64)
    F = np.asarray(frames, dtype=np.float64)
    n = skeleton.n_joints
    if p.shape[-2:] != (n, 3) or F.shape[-3:] != (n, 3, 3) or F.shape[:-3] != p.shape[:-2]:
        raise ValueError(f"positions (..., {n}, 3) and frames (..., {n}, 3, 3) must match, got {p.shape} and {F.shape}")
    out = np.zeros(p.shape[:-1])
    for c in range(1, n):
        j = int(arrays.parents[c])
        items = skeleton.constraints.get(j)
        if not items or arrays.lengths[c] == 0.0:
            continue
        H = F[..., j, :, :] @ arrays.limit_Q[c]
        u = p[..., c, :] - p[..., j, :]
        u = u / np.linalg.norm(u, axis=-1, keepdims=True)
        v = np.einsum("...ji,...j->...i", H, u)
        y_axis = F[..., c, :, 1]
        worst = np.arctan2(np.linalg.norm(np.cross(y_axis, u), axis=-1), np.einsum("...i,...i->...", y_axis, u))
        twist = None if directions_only else _vec_twist(H, F[..., c, :, :])
        worst = np.maximum(worst, joint_violation(items, v, twist))
        out[..., j] = np.maximum(out[..., j], worst)
    return out


__all__ = ["frames_from_world_rotations", "frames_from_pose", "turned_frames", "carry_frames", "limit_violations",
           "rest_up"]
