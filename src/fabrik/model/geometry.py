"""Rotation geometry in NumPy, and joint frames of skeleton poses and how far a pose breaks its
limits: what skeleton solvers, motion capture and the public ``fabrik.constraints`` share.

Conventions: right-handed, column vectors (a rotation R turns v into ``R @ v``), angles in
radians. Every helper is vectorised: leading axes ``...`` broadcast, and (3, 3) matrices sit in
the last two axes. The compiled counterparts, for kernels' hot loops, are in
``fabrik.kernels.frames`` (axis-angle matrices, rotations by cos/sin, the smallest rotation between
two directions) and ``fabrik.kernels.rotation_fit`` (Kabsch).

* ``axis_angle_matrices``: rotations about unit axes by angles (Rodrigues).
* ``rotations_between``: the smallest rotations taking unit a onto unit b.
* ``swing_from_y``: the smallest rotations taking +Y onto unit directions.
* ``twist_about_y`` and ``relative_twist``: the twist about +Y of a swing-twist split.
* ``orthonormalise``: the nearest rotations to nearly orthonormal matrices.
* ``kabsch``: the (weighted) least-squares rotations of vectors onto vectors.

Frames follow the convention of ``fabrik.solvers.skeleton_fabrik`` (docs/constraints.md): joint
i's frame ``F[i]`` (3 x 3, columns its +X, +Y, +Z) has +Y along the bone arriving at i; a
zero-length bone takes its parent's frame; the root's frame is the root orientation. For a BVH
pose with world rotations ``W``, ``F[i] = W[parent(i)] R0[i]`` with ``R0`` the rest frames
(``fabrik.model.rig.rest_frames``). A limit on joint j restricts each bone c leaving j in its
reference ``F[j] Rig.limit_Q[c]`` (``R0[j]^T A[j] R0[c]``, A the skeleton's ``limit_reference``,
identity by default).
"""

from __future__ import annotations

import numpy as np

from fabrik.limits.base import joint_violation
from fabrik.model.rig import rig


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dot products of vectors (..., 3) along the last axis."""
    return np.einsum("...i,...i->...", a, b)


def axis_angle_matrices(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotations (..., 3, 3) by ``angle`` (..., radians) about unit ``axis`` (..., 3), right-handed
    (Rodrigues: cos I + sin [axis]x + (1 - cos) axis axis^T)."""
    x, y, z = axis[..., 0], axis[..., 1], axis[..., 2]
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    out = np.empty(axis.shape[:-1] + (3, 3))
    out[..., 0, 0] = c + x * x * t
    out[..., 0, 1] = x * y * t - z * s
    out[..., 0, 2] = x * z * t + y * s
    out[..., 1, 0] = y * x * t + z * s
    out[..., 1, 1] = c + y * y * t
    out[..., 1, 2] = y * z * t - x * s
    out[..., 2, 0] = z * x * t - y * s
    out[..., 2, 1] = z * y * t + x * s
    out[..., 2, 2] = c + z * z * t
    return out


def rotations_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smallest rotations (..., 3, 3) taking unit directions ``a`` (..., 3) onto unit ``b``
    (..., 3): Rodrigues with v = a x b, ``I + [v]x + [v]x^2 / (1 + a . b)``. For opposite
    directions (1 + a . b <= 1e-12), where no smallest rotation exists, the last term is dropped
    (``I + [v]x``, the identity to rounding): callers keep such frames as they were."""
    v = np.cross(a, b)
    c = _dot(a, b)
    k = np.where(1.0 + c > 1e-12, 1.0 / np.maximum(1.0 + c, 1e-12), 0.0)
    K = np.zeros(v.shape + (3,))
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    K[..., 1, 0], K[..., 2, 0], K[..., 2, 1] = v[..., 2], -v[..., 1], v[..., 0]
    return np.eye(3) + K + k[..., None, None] * (K @ K)


def swing_from_y(v: np.ndarray) -> np.ndarray:
    """The smallest rotations (..., 3, 3) taking +Y onto unit directions ``v`` (..., 3), the swing
    of a swing-twist split; for v = -Y the half turn about +X."""
    axis = np.stack([v[..., 2], np.zeros(v.shape[:-1]), -v[..., 0]], axis=-1)  # e_y x v
    s = np.linalg.norm(axis, axis=-1)
    angle = np.arctan2(s, v[..., 1])
    safe = np.where(s[..., None] > 1e-300, axis / np.where(s[..., None] > 1e-300, s[..., None], 1.0),
                    np.array([1.0, 0.0, 0.0]))
    return axis_angle_matrices(safe, angle)


def twist_about_y(M: np.ndarray) -> np.ndarray:
    """Twist (..., radians, in (-pi, pi]) about +Y of rotations ``M`` (..., 3, 3), in the
    swing-twist split ``M = swing_from_y(M's +Y) Rot_y(twist)``; for M's +Y = -Y (1 + M_yy below
    1e-12) the swing is taken as the half turn about +X."""
    v = M[..., :, 1]
    z = M[..., :, 2]
    # the frame S carries: S e_z for the smallest rotation S taking e_y onto v
    c = v[..., 1]
    k = 1.0 / np.maximum(1.0 + c, 1e-300)
    sz = np.stack([-v[..., 0] * v[..., 2] * k, -v[..., 2], 1.0 - v[..., 2] * v[..., 2] * k], axis=-1)
    sz = np.where((1.0 + c < 1e-12)[..., None], np.array([0.0, 0.0, -1.0]), sz)
    sx = np.cross(v, sz)
    return np.arctan2(_dot(z, sx), _dot(z, sz))


def relative_twist(H: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Twist (..., radians) of frames ``F`` (..., 3, 3) about their +Y relative to frames ``H``
    (..., 3, 3) carried onto that +Y by the smallest rotation (the swing-twist split of
    ``fabrik.model.constraints.swing_twist``); for opposite +Y axes (1 + cos below 1e-8) H is
    carried by the half turn about its +X. ``twist_about_y`` is the case H = I, with its own
    handling of the opposite direction (its swing is the half turn about +X within 1e-12):
    folding it into this one would change twists of rotations within 1e-4 rad of the half
    turn beyond rounding."""
    a = H[..., :, 1]
    b = F[..., :, 1]
    z = H[..., :, 2]
    c = _dot(a, b)
    v = np.cross(a, b)
    vz = np.cross(v, z)
    k = np.where(1.0 + c < 1e-8, 0.0, 1.0 / np.maximum(1.0 + c, 1e-8))[..., None]
    gz = np.where((1.0 + c < 1e-8)[..., None], -z, z + vz + k * np.cross(v, vz))
    gz = gz - _dot(gz, b)[..., None] * b
    gz /= np.linalg.norm(gz, axis=-1, keepdims=True)
    gx = np.cross(b, gz)
    fz = F[..., :, 2]
    return np.arctan2(_dot(fz, gx), _dot(fz, gz))


def orthonormalise(R: np.ndarray) -> np.ndarray:
    """The nearest rotations (..., 3, 3) (Frobenius norm, det +1) to matrices ``R`` (..., 3, 3),
    through an SVD; a reflection is turned into the nearest rotation by flipping the axis of the
    smallest singular value."""
    U, _, Vt = np.linalg.svd(R)
    d = np.linalg.det(U @ Vt)
    U[..., :, 2] *= np.where(d < 0, -1.0, 1.0)[..., None]
    return U @ Vt


def kabsch(a: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """The rotations R (..., 3, 3) minimising sum_k w_k |R b_k - a_k|^2 (Kabsch, through an SVD of
    H = sum_k w_k a_k b_k^T): ``a`` (..., K, 3), ``b`` (K, 3) or (..., K, 3), ``weights`` (K,)
    (default all 1). Centre the points first for the best rigid placement; any one of the best
    rotations where several are (H of rank 0 or 1)."""
    b = np.broadcast_to(b, a.shape)
    if weights is None:
        H = np.swapaxes(a, -1, -2) @ b
    else:
        H = np.einsum("k,...ki,...kj->...ij", weights, a, b)
    U, _, Vt = np.linalg.svd(H)
    d = np.sign(np.linalg.det(U @ Vt))
    D = np.zeros(H.shape)
    D[..., 0, 0] = 1.0
    D[..., 1, 1] = 1.0
    D[..., 2, 2] = np.where(d == 0, 1.0, d)
    return U @ D @ Vt


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
    R = rotations_between(a, b)
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
        worst = np.arctan2(np.linalg.norm(np.cross(y_axis, u), axis=-1), _dot(y_axis, u))
        twist = None if directions_only else relative_twist(H, F[..., c, :, :])
        worst = np.maximum(worst, joint_violation(items, v, twist))
        out[..., j] = np.maximum(out[..., j], worst)
    return out


__all__ = ["axis_angle_matrices", "rotations_between", "swing_from_y", "twist_about_y", "relative_twist", "orthonormalise",
           "kabsch", "frames_from_world_rotations", "frames_from_pose", "turned_frames", "carry_frames",
           "limit_violations", "rest_up"]
