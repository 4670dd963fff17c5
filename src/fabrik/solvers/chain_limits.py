"""What the chain methods with joint limits share (FABRIK, CCD and the Jacobian methods with
limits, ``fabrik.solvers.fabrik``, ``ccd`` and ``jacobian``): their options, the packed limits of a
chain, the Solution they return, and the limits' measure on a chain's poses.

Oriented targets: the rotation (scipy ``Rotation``, (4,) quaternion x, y, z, w, or (3, 3) matrix)
is the wanted world frame of the last bone: its +Y axis is the last bone's direction (from the
joint before the effector to the effector) and its +Z the bone's up, i.e. its twist.

Solution extras of a limited chain solve (read-only mapping, ``fabrik.solvers.result.ConstrainedExtras``):
    frames: (n, 3, 3) world frame of each joint's bone (columns right, bone, up); the effector
        repeats the last bone's frame.
    root_frame: (3, 3) the fixed frame joint 0's limit is measured in.
    local_rotations: (n, 4) quaternions (x, y, z, w) of each frame relative to its parent frame
        (the root frame for joint 0; identity for the effector).
    swing_angles, twist_angles: (n,) radians, the swing-twist decomposition of local_rotations.
    active_constraints: sorted list of joint indices whose limit is active (on its boundary).
    orientation_error: radians (oriented targets only).
Conventions: docs/constraints.md and ``fabrik.limits``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from fabrik._validation import check_tol
from fabrik.kernels.limit_layout import pack_limits
from fabrik.kernels.records import ChainLimits
from fabrik.limits.base import joint_violation
from fabrik.model.constraints import root_frame
from fabrik.solvers.result import STATUSES, ConstrainedExtras, Solution

DEFAULT_ORIENTATION_TOL = 1e-3


@dataclass(frozen=True)
class LimitOptions:
    """Options of the constrained chain methods that take oriented targets: ``orientation_tol``
    (radians >= 0), the largest angle between the last bone's frame and the target rotation that
    counts as reached."""

    orientation_tol: float = DEFAULT_ORIENTATION_TOL

    def __post_init__(self):
        object.__setattr__(self, "orientation_tol", check_tol(self.orientation_tol, "orientation_tol"))

IDENTITY = np.eye(3)
_PREPARED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
IDENTITY = np.eye(3)


def prepare(chain):
    """(packed limits (n, w), root frame (3, 3)) for a chain, cached per chain object."""
    limits = kernel_limits(chain)
    return limits.table, limits.root_frame


def kernel_limits(chain) -> ChainLimits:
    """A chain's limits as the kernels take them (``fabrik.kernels.records.ChainLimits``: the packed
    limits (n, w), the root frame (3, 3), planar for a 2D chain), cached per chain object."""
    hit = _PREPARED.get(chain)
    if hit is None:
        planar = chain.dim == 2
        limits = np.ascontiguousarray(pack_limits(chain.constraints, chain.n_joints, planar=planar))
        hit = ChainLimits(limits, np.ascontiguousarray(root_frame(chain)), planar)
        _PREPARED[chain] = hit
    return hit


def chain_limit_violations(chain, positions, frames, directions_only: bool = False) -> np.ndarray:
    """How far (radians) each joint's limits are exceeded on a chain; (..., n), 0 where every
    limit holds (and for the effector, which has no bone).

    The chain's counterpart of ``fabrik.model.geometry.limit_violations`` (skeletons),
    the same measure in pure NumPy, independent of the kernels: ``positions`` (..., n, d) in the
    chain's dimension and ``frames`` (..., n, 3, 3) (a constrained solve's ``extras["frames"]``)
    may carry leading axes. Joint i's limits restrict bone i (joint i -> i + 1) in the frame H of
    bone i - 1 (the chain's fixed ``root_frame`` for joint 0); with v the bone's direction in H
    and the twist of ``frames[i]`` relative to H (3D chains only: a 2D chain has no twist), the
    joint's limits' own measure (``fabrik.limits.base.joint_violation``, as for skeletons: a
    cone's excess, a hinge's angle out of its plane and range, a twist's excess, a hinge's zero
    twist without one). Also counted: the angle between ``frames[i]``'s
    +Y and the bone. A zero-length bone has no direction of its own: its frame's +Y stands for it
    (docs/constraints.md, "Edge cases"). ``directions_only``: the bones' directions alone, twists
    left out (what positions show), as the skeletons' measure takes it.

    ``fabrik.constraints.limit_violations`` checks the numbers (finite coordinates, rotation
    frames) before it calls this.

    Raises:
        ValueError: shapes that do not match the chain.
    """
    from fabrik.model.geometry import relative_twist

    n, dim = chain.n_joints, chain.dim
    p = np.asarray(positions, dtype=np.float64)
    F = np.asarray(frames, dtype=np.float64)
    if p.shape[-2:] != (n, dim) or F.shape[-3:] != (n, 3, 3) or F.shape[:-3] != p.shape[:-2]:
        raise ValueError(f"positions (..., {n}, {dim}) and frames (..., {n}, 3, 3) must match this {dim}D chain, "
                         f"got {p.shape} and {F.shape}")
    if dim == 2:
        p = np.concatenate([p, np.zeros(p.shape[:-1] + (1,))], axis=-1)
    root = root_frame(chain)
    out = np.zeros(p.shape[:-1])
    for i in range(n - 1):
        items = chain.constraints.get(i, ())
        if not items:
            continue
        H = np.broadcast_to(root, F.shape[:-3] + (3, 3)) if i == 0 else F[..., i - 1, :, :]
        y_axis = F[..., i, :, 1]
        d = p[..., i + 1, :] - p[..., i, :]
        norm = np.linalg.norm(d, axis=-1, keepdims=True)
        bone = norm[..., 0] > 0.0
        u = np.where(norm > 0.0, d / np.where(norm > 0.0, norm, 1.0), y_axis)  # a zero-length bone: its +Y
        worst = np.where(bone, np.arctan2(np.linalg.norm(np.cross(y_axis, u), axis=-1),
                                          np.einsum("...i,...i->...", y_axis, u)), 0.0)
        v = np.einsum("...ji,...j->...i", H, u)
        twist = relative_twist(H, F[..., i, :, :]) if dim == 3 and not directions_only else None
        worst = np.maximum(worst, joint_violation(items, v, twist))
        out[..., i] = worst
    return out


def build_solution(method, chain, result, root_frame_, oriented, more=None) -> Solution:
    """Wrap a kernel result tuple into a Solution with the documented extras (and ``more``)."""
    positions, frames, active, iterations, error, oerr, code = result
    frames.setflags(write=False)
    reference = root_frame_.copy()
    reference.setflags(write=False)
    stored = {"frames": frames, "root_frame": reference, "active_constraints": [int(i) for i in np.flatnonzero(active)]}
    if oriented:
        stored["orientation_error"] = float(oerr)
    if more:
        stored.update(more)
    return Solution(positions, int(iterations), float(error), STATUSES[code], method, None,
                    ConstrainedExtras(stored, planar=chain.dim == 2))



__all__ = ["LimitOptions", "DEFAULT_ORIENTATION_TOL", "IDENTITY", "prepare", "kernel_limits", "build_solution",
           "chain_limit_violations"]
