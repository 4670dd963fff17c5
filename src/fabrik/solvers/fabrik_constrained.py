"""FABRIK with joint limits and oriented targets on a single chain (section 4.3 of the paper).

``fabrik.solve`` routes here when the chain has constraints (``Chain.with_constraints``) or the
target carries a rotation (``target=(xyz, rotation)``). Conventions: docs/constraints.md and
``fabrik.limits``.

Oriented targets: the rotation (scipy ``Rotation``, (4,) quaternion x, y, z, w, or (3, 3) matrix)
is the wanted world frame of the last bone: its +Y axis is the last bone's direction (from the
joint before the effector to the effector) and its +Z the bone's up, i.e. its twist. The solver
places the joint before the effector at ``target - L_last * R[:, 1]`` in every forward stage.

Method options (``LimitOptions``): ``orientation_tol`` (radians, default 1e-3): the largest
rotation angle between the last bone's frame and the target rotation that counts as reached
(oriented targets only).

Solution extras (read-only mapping):
    frames: (n, 3, 3) world frame of each joint's bone (columns right, bone, up); the effector
        repeats the last bone's frame.
    root_frame: (3, 3) the fixed frame joint 0's limit is measured in.
    local_rotations: (n, 4) quaternions (x, y, z, w) of each frame relative to its parent frame
        (the root frame for joint 0; identity for the effector).
    swing_angles, twist_angles: (n,) radians, the swing-twist decomposition of local_rotations.
    active_constraints: sorted list of joint indices whose limit is active (on its boundary).
    orientation_error: radians (oriented targets only).
    polish_sweeps, restarts: (``fabrik-constrained`` only) when FABRIK ends short of the target
        it searches on, within ``max_iter`` (``fabrik.kernels.fabrik_constrained``,
        ``fabrik_constrained_polished``): limited CCD sweeps (CCD's step, not FABRIK's) from the
        best pose FABRIK saw and from the start pose, then ``restarts`` runs of FABRIK and CCD
        sweeps from fixed pseudo-random poses; ``polish_sweeps`` counts the CCD sweeps. All are
        counted in ``iterations``; the answer is the closest pose found. Both 0 when FABRIK
        reached the target.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fabrik._validation import check_tol
from fabrik.kernels.fabrik_constrained import fabrik_constrained, fabrik_constrained_polished
from fabrik.kernels.limit_layout import pack_limits
from fabrik.limits.base import joint_violation
from fabrik.model.constraints import root_frame, swing_twist
from fabrik.solvers.registry import Solver, add
from fabrik.solvers.result import STATUSES, Solution

DEFAULT_ORIENTATION_TOL = 1e-3


@dataclass(frozen=True)
class LimitOptions:
    """Options of the constrained chain methods that take oriented targets: ``orientation_tol``
    (radians >= 0), the largest angle between the last bone's frame and the target rotation that
    counts as reached."""

    orientation_tol: float = DEFAULT_ORIENTATION_TOL

    def __post_init__(self):
        object.__setattr__(self, "orientation_tol", check_tol(self.orientation_tol, "orientation_tol"))

_PREPARED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_IDENTITY = np.eye(3)


def prepare(chain):
    """(packed limits (n, w), root frame (3, 3)) for a chain, cached per chain object."""
    hit = _PREPARED.get(chain)
    if hit is None:
        limits = np.ascontiguousarray(pack_limits(chain.constraints, chain.n_joints, planar=chain.dim == 2))
        frame = np.ascontiguousarray(root_frame(chain))
        hit = (limits, frame)
        _PREPARED[chain] = hit
    return hit


def chain_limit_violations(chain, positions, frames, directions_only: bool = False) -> np.ndarray:
    """How far (radians) each joint's limits are exceeded on a chain; (..., n), 0 where every
    limit holds (and for the effector, which has no bone).

    The chain's counterpart of ``fabrik.model.pose_frames.limit_violations`` (skeletons),
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
    from fabrik.model.pose_frames import _vec_twist

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
        twist = _vec_twist(H, F[..., i, :, :]) if dim == 3 and not directions_only else None
        worst = np.maximum(worst, joint_violation(items, v, twist))
        out[..., i] = worst
    return out


class ConstrainedExtras(Mapping):
    """The read-only ``Solution.extras`` of a constrained solve.

    ``frames``, ``root_frame``, ``active_constraints`` (and ``orientation_error``) are stored;
    ``local_rotations``, ``swing_angles`` and ``twist_angles`` are computed on first access, so a
    solve does not pay for them unless they are read.

    For a chain (``parents`` None) frame i belongs to bone i and is relative to frame i - 1 (frame
    0 to ``root_frame``; the effector has no bone and gets the identity). For a skeleton
    (``parents`` the (n,) parent indices) frame i belongs to the bone arriving at joint i and is
    relative to its parent's frame; the root's frame is relative to the world axes. A 2D chain
    (``planar``) has no twist: its frames keep +Z on the plane's normal, and its twist angles are
    0 (a bone folded exactly back would otherwise read as a half turn of twist).
    """

    _DERIVED = ("local_rotations", "swing_angles", "twist_angles")

    def __init__(self, stored: dict, parents=None, planar: bool = False):
        self._data = dict(stored)
        self._parents = parents
        self._planar = planar

    def _derive(self) -> None:
        from scipy.spatial.transform import Rotation

        frames = self._data["frames"]
        n = frames.shape[0]
        parents = np.empty_like(frames)
        if self._parents is None:
            parents[0] = self._data["root_frame"]
            parents[1:] = frames[:-1]
            with_bone = range(n - 1)
        else:
            parents[0] = np.eye(3)
            parents[1:] = frames[self._parents[1:]]
            with_bone = range(n)
        local = np.einsum("nji,njk->nik", parents, frames)
        if self._parents is None:
            local[-1] = np.eye(3)
        swing = np.arctan2(np.hypot(local[:, 0, 1], local[:, 2, 1]), local[:, 1, 1])
        twist = np.zeros(n)
        for i in () if self._planar else with_bone:
            twist[i] = swing_twist(parents[i], frames[i])[1]
        for name, value in (("local_rotations", Rotation.from_matrix(local).as_quat()), ("swing_angles", swing),
                            ("twist_angles", twist)):
            value.setflags(write=False)
            self._data[name] = value

    def __getitem__(self, key):
        if key in self._DERIVED and key not in self._data:
            self._derive()
        return self._data[key]

    def __iter__(self):
        keys = list(self._data)
        keys += [k for k in self._DERIVED if k not in self._data]
        return iter(keys)

    def __len__(self):
        return len(set(self._data) | set(self._DERIVED))

    def __repr__(self):
        return f"ConstrainedExtras({sorted(self)})"


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


def solve_fabrik_constrained(chain, target, rotation, initial, root, tol, max_iter, options) -> Solution:
    """Constrained FABRIK: joint limits applied at every step of both stages (see module doc).

    Arguments as ``fabrik.solvers.registry`` says. The returned pose always satisfies every
    limit (each iteration ends with a backward stage that enforces them). Status ``unreachable``
    when the target is farther than the chain's length and it stopped progressing, ``stalled``
    when it stopped short otherwise (the limits may make a target within reach unreachable).
    A solve that ends short of the target searches on with limited CCD sweeps and restarts
    (``extras["polish_sweeps"]``, ``extras["restarts"]``), so that a target the limits keep out
    of reach ends near the closest pose they allow.
    """
    limits, frame = prepare(chain)
    oriented = rotation is not None
    *result, sweeps, restarts = fabrik_constrained_polished(initial, chain._kernel_lengths, target, root, limits, frame,
                                                  rotation if oriented else _IDENTITY, oriented, chain.dim == 2,
                                                  tol, options.orientation_tol, max_iter)
    return build_solution("fabrik-constrained", chain, result, frame, oriented, {"polish_sweeps": int(sweeps),
                                                                               "restarts": int(restarts)})


add("fabrik-constrained", "chain", Solver(solve_fabrik_constrained, LimitOptions(), kernels=(fabrik_constrained,)), limits=True, oriented=True,
    frames=True, summary="FABRIK with joint limits and oriented targets (section 4.3)")

__all__ = ["solve_fabrik_constrained", "prepare", "build_solution", "LimitOptions", "DEFAULT_ORIENTATION_TOL",
           "chain_limit_violations"]
