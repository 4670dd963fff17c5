"""BVH rotations from a constrained solve's joint frames, every limit kept in the local rotations.

A solve with joint limits (``fabrik-constrained`` and the other methods with frames) returns a
frame per joint (``extras["frames"]``, ``SequenceSolution.frames``): for joint i with a bone
arriving from its parent, +Y along that bone and the bone's twist in the other two axes
(``fabrik.solvers.skeleton_fabrik``). In BVH terms ``F[c] = W[parent(c)] R0[c]`` for
every non-zero bone c, with ``W`` the world rotation of a joint and ``R0`` the rest frames, so the
world rotation of a joint j is ``F[c] R0[c]^T`` for its child bone c, twist included, and the
limit on j bounds j's local rotation ``L[j] = W[parent(j)]^T W[j]`` written in the child's rest
frame: ``R0[c]^T L[j] R0[c]``, a rotation about the hinge axis for a ``Hinge``, a swing inside the
cone for a ``Cone``, a twist about +Y within a ``Twist``.

``local_rotations_from_frames(skeleton, positions, frames)`` turns frames (F, n, 3, 3) into local
rotation matrices (F, n, 3, 3) for a BVH file of ``skeleton``:

* a joint with one child bone of non-zero length takes that bone's frame: ``W[j] = F[c] R0[c]^T``;
* a joint with several (a pelvis carrying both thighs and the spine, which the limited solver
  moves independently, but one BVH rotation turns together) takes the least-squares rotation of
  its child bones onto their solved directions (Kabsch), the children's frames breaking ties
  when the bones are collinear;
* a joint with no child bone of non-zero length (a leaf, or a joint whose children sit on it, as
  CMU's ``Hips`` and ``Chest2``) keeps its parent's world rotation (local identity), so the
  zero-length children carry the rotation; the root then takes its solved frame ``F[0]``.

Then, root first, each joint's local rotation relative to its parent's *written* rotation is
projected onto its limits as the solvers project a bone (``project_child``): its +Y onto the
nearest allowed direction (a hinge's plane and range, a cone, ...), its twist clamped to the
joint's twist range (a hinge's held at 0 without a ``Twist``). Where the solver's frames already
keep the limits (a joint with one child bone) this changes nothing but rounding; it matters at
joints whose children the BVH rotation must move together. The written file therefore holds every limit on its local rotations, and
reproduces the solved positions exactly where the skeleton can (``save_take`` reports the
largest distance).

A limit on the root is measured by the solver against the root orientation it held
(``root_rotation``), which a BVH file does not store; it is not projected here.
"""

from __future__ import annotations

import numpy as np

from fabrik.kernels.limit_layout import pack_limits
from fabrik.limits.base import joint_violation
from fabrik.model.geometry import axis_angle_matrices, kabsch, orthonormalise, swing_from_y, twist_about_y


def child_violation(items, M: np.ndarray) -> np.ndarray:
    """How far (radians, >= 0) rotations ``M`` (..., 3, 3), a joint's local rotation in one child
    bone's rest frame, exceed the joint's limits ``items``: 0 where all hold. The measure of
    ``limit_violations`` (``fabrik.limits.base.joint_violation``) of ``M``'s +Y and its twist
    about +Y."""
    return joint_violation(items, M[..., :, 1], twist_about_y(M))


def project_child(items, M: np.ndarray) -> np.ndarray:
    """``M`` (..., 3, 3) (a local rotation in a child bone's rest frame) moved onto the limits
    ``items`` as the solvers move a bone (``fabrik.kernels.constraints.project_local``): its +Y
    onto the nearest allowed direction, its twist about +Y clamped to the joint's twist range (a
    hinge's held at 0 without a ``Twist``, a cone's free), then put back together as the smallest
    rotation onto the new +Y followed by the twist. Rotations that keep the limits come back as
    they are."""
    from fabrik.kernels.constraints import project_local

    row = pack_limits({0: tuple(items)}, 1)[0]
    shape = M.shape[:-2]
    v = np.ascontiguousarray(M[..., :, 1].reshape(-1, 3))
    psi = np.ascontiguousarray(twist_about_y(M).reshape(-1))
    new_v = np.empty_like(v)
    new_psi = np.empty_like(psi)
    project_local(row, v, psi, new_v, new_psi)
    new_v = new_v.reshape(shape + (3,))
    out = swing_from_y(new_v) @ axis_angle_matrices(np.broadcast_to(np.array([0.0, 1.0, 0.0]), new_v.shape),
                                                    new_psi.reshape(shape))
    keep = child_violation(items, M) <= 0.0
    return np.where(keep[..., None, None], M, out)


def world_rotations_from_frames(skeleton, positions: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """(F, n, 3, 3) the world rotation each joint's frames and solved positions call for (module
    docstring), before the limits are projected."""
    from fabrik.model.rig import rig

    arrays = rig(skeleton)
    n = skeleton.n_joints
    parents, lengths, R0 = arrays.parents, arrays.lengths, arrays.rest_frames
    offsets = np.asarray(skeleton.offsets, dtype=np.float64)
    kids = [[] for _ in range(n)]
    for c in range(1, n):
        if lengths[c] > 0.0:
            kids[int(parents[c])].append(c)
    out = np.empty(frames.shape)
    for j in range(n):
        own = kids[j]
        if len(own) == 1:
            c = own[0]
            out[:, j] = frames[:, c] @ R0[c].T
        elif len(own) > 1:
            # the bones, and (a million times lighter) the axes of each child's frame, so that
            # collinear bones still get the frames' twist
            from_frames = np.einsum("fkij,kjl->fkil", frames[:, own], np.transpose(R0[own], (0, 2, 1)))
            a = [positions[:, c] - positions[:, j] for c in own]
            b = [offsets[c] for c in own]
            w = [1.0] * len(own)
            scale = 1e-6 * float(np.mean(lengths[own] ** 2))
            for k in range(len(own)):
                for axis in range(3):
                    a.append(from_frames[:, k, :, axis])
                    b.append(np.eye(3)[axis])
                    w.append(scale)
            out[:, j] = kabsch(np.stack(a, axis=1), np.array(b), np.array(w))
        elif j == 0:
            out[:, 0] = frames[:, 0]
        else:
            out[:, j] = out[:, int(parents[j])]
    return orthonormalise(out)


def local_rotations_from_frames(skeleton, positions, frames, *, project: bool = True) -> np.ndarray:
    """Local rotation matrices (F, n, 3, 3) for a BVH file of ``skeleton`` (its constraints
    included) from solved ``positions`` (F, n, 3) and joint ``frames`` (F, n, 3, 3): the world
    rotations of ``world_rotations_from_frames`` made local root first, each projected onto the
    joint's limits (``project_child``; ``project=False`` leaves them as they are). Row 0 is the
    root's world rotation."""
    from fabrik.model.rig import rig

    p = np.asarray(positions, dtype=np.float64)
    Fr = np.asarray(frames, dtype=np.float64)
    n = skeleton.n_joints
    if p.ndim != 3 or p.shape[1:] != (n, 3) or Fr.shape != p.shape[:2] + (3, 3):
        raise ValueError(f"positions (F, {n}, 3) and frames (F, {n}, 3, 3) must match, got {p.shape} and {Fr.shape}")
    if not (np.isfinite(p).all() and np.isfinite(Fr).all()):
        raise ValueError("positions and frames must be finite (found NaN or inf)")
    arrays = rig(skeleton)
    parents, lengths, R0 = arrays.parents, arrays.lengths, arrays.rest_frames
    target = world_rotations_from_frames(skeleton, p, Fr)
    written = np.empty_like(target)
    local = np.empty_like(target)
    written[:, 0] = local[:, 0] = target[:, 0]
    limits = skeleton.constraints
    for j in range(1, n):
        above = written[:, int(parents[j])]
        L = np.einsum("fji,fjk->fik", above, target[:, j])
        items = limits.get(j) if project else None
        if items:
            # limits bound the turn from the joint's reference rotation A (identity at rest)
            A = np.eye(3) if skeleton.limit_reference is None else skeleton.limit_reference[j]
            L = A.T @ L
            own = [c for c in range(j + 1, n) if parents[c] == j and lengths[c] > 0.0]
            for _ in range(2 if len(own) > 1 else 1):
                for c in own:
                    M = R0[c].T @ L @ R0[c]
                    L = R0[c] @ project_child(items, M) @ R0[c].T
            if len(own) > 1:
                L = _shrink_into(items, L, [R0[c] for c in own])
            L = A @ L
        local[:, j] = L
        written[:, j] = above @ L
    return local


def motion_from_frames(skeleton, positions, frames, *, frame_time: float = 1.0 / 30.0, layout=None):
    """A ``fabrik.Motion`` for a constrained solve of ``skeleton`` (its limits attached): solved
    ``positions`` (F, n, 3) or (n, 3) and joint ``frames`` (F, n, 3, 3) or (n, 3, 3), e.g. a
    ``SequenceSolution``'s ``positions`` and ``frames``, or one ``Solution``'s ``positions`` and
    ``extras["frames"]``. Rotations as ``local_rotations_from_frames`` (limits kept), the root at
    ``positions[:, 0]``; ``fabrik.save_bvh(path, skeleton, motion)`` writes it. For a recorded
    take use ``fabrik.mocap.save_take``, which keeps the file's layout."""
    from fabrik.model.motion import Motion

    p = np.asarray(positions, dtype=np.float64)
    Fr = np.asarray(frames, dtype=np.float64)
    if p.ndim == 2:
        p, Fr = p[None], Fr[None]
    local = local_rotations_from_frames(skeleton, p, Fr)
    if layout is not None:
        layout.check_for(skeleton)
    return Motion.from_matrices(local, p[:, 0], frame_time, layout=layout)


def _shrink_into(items, L: np.ndarray, rests) -> np.ndarray:
    """Where rotations ``L`` (F, 3, 3) of a joint with several child bones still break a limit
    for one of them, turn them back towards the identity (the rest pose, inside every cone and
    twist range) by the least fraction of their angle that keeps every child's limits."""
    from scipy.spatial.transform import Rotation

    def worst(R):
        return np.max([child_violation(items, Q.T @ R @ Q) for Q in rests], axis=0)

    bad = worst(L) > 0.0
    if not bad.any():
        return L
    rv = Rotation.from_matrix(L[bad]).as_rotvec()
    lo, hi = np.zeros(rv.shape[0]), np.ones(rv.shape[0])
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = worst(Rotation.from_rotvec(rv * mid[:, None]).as_matrix()) <= 0.0
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    out = L.copy()
    out[bad] = Rotation.from_rotvec(rv * lo[:, None]).as_matrix()
    return out


__all__ = ["motion_from_frames", "local_rotations_from_frames", "world_rotations_from_frames", "project_child", "child_violation"]
