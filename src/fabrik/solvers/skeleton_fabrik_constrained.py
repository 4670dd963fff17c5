"""Multi-end-effector FABRIK with joint limits on skeletons (sections 4.1 and 4.3 of the paper).

``fabrik.solve(skeleton.with_constraints({...}), targets={...})`` routes here (method
``"fabrik-constrained"``). The limit types are those of ``fabrik.constraints`` (``Cone``,
``Hinge``, ``Twist``); this module fixes what they mean on a tree.

Frames
------
Every joint i carries a world frame ``F[i]`` (3x3 rotation, columns = its +X, +Y, +Z axes):

* for a joint with a bone arriving from its parent, the frame of that bone, +Y along it
  (parent -> i): the chain convention of ``fabrik.constraints``, where the frame that limits
  bone i is bone i - 1's, carried over to trees (each joint has one arriving bone);
* a zero-length bone has no direction: its joint takes its parent's frame (BVH joints at one
  place, e.g. CMU's ``Hips -> LHipJoint``, share one frame and never give NaN);
* the root's frame is the root's orientation (identity at rest).

*Rest frames* ``R0[i]`` (``rest_frames``): identity for the root; for a non-zero bone +Y along its
rest offset and +Z towards world +Z, or towards world +Y when the bone lies within 25 degrees of
the Z axis; a zero-length bone copies its parent's. For a BVH pose with world rotation matrices
``W`` (``Motion.world_transforms``), ``F[i] = W[parent(i)] R0[i]`` and ``F[root] = W[root]``
(``frames_from_world_rotations``). During a solve a frame follows its bone by the smallest
rotation; a hinge parent is turned about its own bone so that the hinge plane holds its child
(the twist a hinge needs), and twists are clamped where a ``Twist`` (or a ``Hinge``, twist 0) asks.

Which bone a limit restricts
----------------------------
As for chains, a limit on joint j restricts the bone(s) *leaving* j (j -> each child c), relative
to the bone *arriving* at j (j's frame; the root's orientation for the root). On a tree the
reference is that frame turned by the bone's constant rest offset: ``H_c = F[j] R0[j]^T R0[c]``.
So the limit is centred on the bone's **rest direction** relative to its parent (where BVH
rotations are zero), not on the parent bone's direction: a joint with several children (a
pelvis, a chest) has one limit that each child bone obeys about its own rest direction, and for a
skeleton whose rest pose is straight the two conventions agree. The cone's up/down/left/right
are towards the +Z, -Z, -X, +X axes of ``H_c``, i.e. of the child bone's rest frame carried along
by its parent (for a +Y-up character facing +Z: up = forward for limbs along -Y). A ``Hinge``
axis is given in ``H_c`` coordinates (perpendicular to +Y) and a ``Twist`` is the twist of
``F[c]`` about the bone relative to ``H_c`` carried onto it. In BVH terms: the limit on joint j
bounds j's local rotation (expressed in the child's rest frame).

Limits on zero-length bones restrict nothing (they have no direction); put the limit on the
zero-length joint itself instead (CMU: ``LHipJoint`` limits the pelvis bone to ``LeftHip``).

Branches with no target below them keep their pose relative to the joint they hang from (they
turn with it; the unconstrained solver only translates them), so their limits keep holding.

The root
--------
The root's position is fixed as for the unconstrained solver, and so is its orientation during a
solve: ``initial_frames[0]`` when frames are given, else the orientation fitted to the initial
pose (identity for the rest pose), or ``root_rotation``. Limits on the root's own bones (looking
through zero-length bones) are measured against it, like a chain's fixed root frame; a tracker
that passes each solution's frames on keeps the root orientation it started with. With
``root_rotation="free"`` the orientation is instead refitted in every iteration (least squares
over the root's own bones), which lets the whole body turn but leaves the pelvis orientation to
FABRIK's pulls (on the CMU files this drifted: hip joints ~2.2 units off against ~0.5 held).

Method options
--------------
``initial_frames``: (n, 3, 3) frames of the start pose (default: derived from ``initial``, see
``frames_from_pose``; for a BVH frame use ``frames_from_world_rotations``). Passing a previous
solution's ``extras["frames"]`` keeps twists continuous from frame to frame.
``root_rotation``: the root orientation to hold (scipy Rotation, (x, y, z, w) quaternion or 3x3
matrix), or ``"free"`` (refitted every iteration); default: held at the initial frames' root.
``swing_limbs``: True to swing each limb and its frames about its hip or shoulder joint towards
its targets before the first iteration, as for method ``"fabrik"``; default False.
``turn_search``: True to retry a solve that ends short of its targets (any status but
``reached``) from turned starts: the root's frame and the root's branches (the subtrees of its
children) that hold an effector left further than ``tol``, positions and frames, turned as one
about the vertical through the root (the rig's rest up, ``rest_up``) by each of
``TURN_SEARCH_DEGREES``; the branches that reached start where they were. The reaching answer
that moves the joints least from the start wins, else the lowest largest error; ``iterations``
counts every attempt's. A held pelvis (the root orientation is not refitted during a solve) falls
behind a body that turns, which a walk's targets barely show, until the narrow limits above it
block the head and hands; the search turns it. Not done with a held ``root_rotation``. Default
False; ``fabrik reconstruct`` and ``fabrik.mocap.reconstruct_take`` turn it on.

Solution extras: ``frames`` (n, 3, 3), ``active_constraints`` (names, in skeleton order, of the
joints whose limit is on its boundary in the returned pose), ``effector_error_array`` (k,), and,
computed when read, ``local_rotations`` (n, 4) (x, y, z, w quaternions of each frame relative to
its parent's), ``swing_angles`` and ``twist_angles`` (n,) radians (``ConstrainedExtras``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabrik._validation import check_max_iter, check_tol

from fabrik.kernels.fabrik_tree import fabrik_tree, fabrik_tree_frames
from fabrik.kernels.stopping import REACHED
from fabrik.kernels.tree_limits import frames_from_pose as _frames_from_pose_kernel
from fabrik.model.constraints import Cone, Hinge, Twist, as_rotation_matrix, twist_excess
from fabrik.model.rig import rig
from fabrik.solvers.fabrik_constrained import ConstrainedExtras
from fabrik.solvers.registry import DEFAULT_MAX_ITER, Solver, add
from fabrik.solvers.result import STATUSES, SequenceSolution, Solution
from fabrik.solvers.skeleton_fabrik import (DEFAULT_SWING_LIMBS, _writable, array_inputs, prepare,
                                            raise_kernel_error)

METHOD = "fabrik-constrained"


@dataclass(frozen=True, eq=False)
class FrameOptions:
    """Options of the constrained skeleton methods: ``initial_frames`` (n, 3, 3) frames of the start
    pose (default: derived from ``initial``, ``frames_from_pose``; pass a previous solution's
    ``extras["frames"]`` to keep twists continuous), ``root_rotation`` (the root orientation to
    hold: a scipy Rotation, (x, y, z, w) quaternion or 3x3 matrix; ``"free"`` to refit it every
    iteration, ``fabrik-constrained`` only; default: held at the initial frames' root)."""

    initial_frames: Any = None
    root_rotation: Any = None


@dataclass(frozen=True, eq=False)
class LimitedTrackingOptions(FrameOptions):
    """``FrameOptions`` plus ``swing_limbs`` (as for skeleton FABRIK, ``TrackingOptions``; default
    True, as there and in ``fabrik reconstruct``) and ``turn_search`` (default False; True in
    ``fabrik reconstruct``: a solve that ends short of its targets is retried from its start pose
    turned about the root's up axis, module docstring)."""

    swing_limbs: bool = DEFAULT_SWING_LIMBS
    turn_search: bool = False

    def __post_init__(self):
        for name in ("swing_limbs", "turn_search"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {value!r}")


#: The turns (degrees) of the whole start pose about the root's up axis that ``turn_search``
#: tries, in this order, after a solve that ended short of its targets.
TURN_SEARCH_DEGREES = (15.0, -15.0, 30.0, -30.0, 60.0, -60.0, 90.0, -90.0)

#: The iteration cap of each turned attempt (the solve's own cap where that is lower).
TURN_SEARCH_MAX_ITER = 1000

def rest_up(skeleton) -> np.ndarray:
    """The body's up axis in the rest pose (``fabrik.model.humanoid_limits.body_axes``: root to
    neck/head by joint names, else the spine, else ankles to root, else +Y), a unit (3,) vector."""
    from fabrik.model.humanoid_limits import body_axes

    return np.asarray(body_axes(skeleton).up, dtype=np.float64)


def _axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """The 3x3 rotation by ``angle`` radians about the unit ``axis`` (Rodrigues)."""
    x, y, z = axis
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def _branches(parents: np.ndarray) -> np.ndarray:
    """(n,) int64: for each joint, the child of the root whose subtree holds it (-1 for the root)."""
    out = np.full(parents.shape[0], -1, dtype=np.int64)
    for j in range(1, parents.shape[0]):
        out[j] = j if parents[j] == 0 else out[parents[j]]
    return out


def _turn_rotations(up: np.ndarray) -> list[np.ndarray]:
    """The rotations of ``TURN_SEARCH_DEGREES`` about the unit ``up``, in that order."""
    return [_axis_rotation(up, math.radians(degrees)) for degrees in TURN_SEARCH_DEGREES]


def _turn_search(attempt, first, p0, F0, up, parents, idx, tol, rotations=None, branch=None):
    """The best answer of ``attempt(p, F)`` (the kernel's 6-tuple) over turned starts: the root's
    frame and the root's branches holding an effector the unturned answer ``first`` left short
    (further than ``tol``), turned as one about ``up`` through the root ``p0[0]`` by each
    of ``TURN_SEARCH_DEGREES``; the other branches (the limbs that reached) start where they were.
    The reaching answer that moves the joints least from ``p0`` wins (tracking continuity); with
    none, the lowest largest error. Iterations are summed over every attempt. ``rotations``
    (``_turn_rotations(up)``) and ``branch`` (``_branches(parents)``) may be given computed once
    for a whole take."""
    if rotations is None:
        rotations = _turn_rotations(up)
    if branch is None:
        branch = _branches(parents)
    short = {int(branch[j]) for j, e in zip(idx.tolist(), first[4].tolist()) if e > tol}
    turned = np.array([b in short for b in branch.tolist()]) if short else np.ones(branch.shape[0], dtype=bool)
    turned[0] = True
    best, best_key = first, (1, float(first[4].max()) if first[4].size else 0.0)
    total = first[3]
    for R in rotations:
        p = p0.copy()
        F = F0.copy()
        p[turned] = (p0[turned] - p0[0]) @ R.T + p0[0]
        F[turned] = np.einsum("ij,njk->nik", R, F0[turned])
        answer = attempt(p, F, TURN_SEARCH_MAX_ITER)
        total += answer[3]
        if answer[5] == REACHED:
            key = (0, float(((answer[0] - p0) ** 2).sum()))
        else:
            key = (1, float(answer[4].max()) if answer[4].size else 0.0)
        if key < best_key:
            best, best_key = answer, key
    return best[:3] + (total,) + best[4:]


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
    p = _writable(positions, np.float64, "positions")
    if p.shape != (skeleton.n_joints, 3) or not np.isfinite(p).all():
        raise ValueError(f"positions must be finite with shape ({skeleton.n_joints}, 3), got {p.shape}")
    out = np.empty((skeleton.n_joints, 3, 3))
    _frames_from_pose_kernel(p, arrays.parents, arrays.lengths, arrays.Q, arrays.own_start, arrays.own_list, out)
    return out


def _check_frames(frames, n: int, name: str = "initial_frames") -> np.ndarray:
    F = _writable(frames, np.float64, name)
    if F.shape != (n, 3, 3):
        raise ValueError(f"{name} must have shape ({n}, 3, 3), got {F.shape}")
    if not np.isfinite(F).all():
        raise ValueError(f"{name} contain a non-finite value")
    err = np.abs(np.einsum("nji,njk->nik", F, F) - np.eye(3)).max()
    if err > 1e-6 or (np.linalg.det(F) < 0).any():
        raise ValueError(f"{name} must be rotation matrices (orthonormal, det +1)")
    return F


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


def _vec_cone_violation(cone: Cone, v) -> np.ndarray:
    """``cone_violation`` for many parent-frame directions v (..., 3) (unit), vectorised."""
    s_r, s_l, s_u, s_d = cone.signed_cot2()
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    sx = np.where(x >= 0, s_r, s_l)
    sz = np.where(z >= 0, s_u, s_d)
    rho2 = x * x + z * z
    polar = np.arctan2(np.sqrt(rho2), y)
    safe = np.where(rho2 > 0, rho2, 1.0)
    sv = (sx * x * x + sz * z * z) / safe
    limit = np.arctan2(1.0, np.copysign(np.sqrt(np.abs(sv)), sv))
    on_axis = np.where(y > 0, 0.0, math.pi - max(cone.up, cone.down, cone.left, cone.right))
    return np.where(rho2 > 0, polar - limit, on_axis)


def limit_violations(skeleton, positions, frames) -> np.ndarray:
    """How far (radians) each joint's limit is exceeded; (..., n), 0 where every limit holds.

    Pure numpy, independent of the kernels; ``positions`` (..., n, 3) and ``frames``
    (..., n, 3, 3) may carry leading axes (e.g. frames of a motion). For each non-zero bone c
    limited by joint j = parent(c), in its reference frame ``H = frames[j] R0[j]^T R0[c]``, with
    v the bone's direction (from ``positions``) in H: a ``Cone``'s ``cone_violation``; a
    ``Hinge``'s angle out of its plane and beyond its range; a ``Twist``'s (and a hinge's implicit
    zero twist's) excess of ``frames[c]``'s twist relative to H. Also counted: the angle between
    ``frames[c]``'s +Y and the bone. Entry j is the worst over j's bones.
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
        H = F[..., j, :, :] @ arrays.Q[c]
        u = p[..., c, :] - p[..., j, :]
        u = u / np.linalg.norm(u, axis=-1, keepdims=True)
        v = np.einsum("...ji,...j->...i", H, u)
        y_axis = F[..., c, :, 1]
        worst = np.arctan2(np.linalg.norm(np.cross(y_axis, u), axis=-1), np.einsum("...i,...i->...", y_axis, u))
        twist = _vec_twist(H, F[..., c, :, :])
        has_twist = False
        for item in items:
            if isinstance(item, Cone):
                worst = np.maximum(worst, _vec_cone_violation(item, v))
            elif isinstance(item, Hinge):
                a = np.asarray(item.axis)
                off_plane = np.arcsin(np.minimum(1.0, np.abs(v @ a)))
                theta = np.arctan2(np.cross([0.0, 1.0, 0.0], v) @ a, v[..., 1])
                worst = np.maximum.reduce([worst, off_plane, twist_excess(theta, item.min, item.max)])
            elif isinstance(item, Twist):
                has_twist = True
                worst = np.maximum(worst, twist_excess(twist, item.min, item.max))
        if not has_twist and any(isinstance(item, Hinge) for item in items):
            worst = np.maximum(worst, np.abs(twist))
        out[..., j] = np.maximum(out[..., j], worst)
    return out


def _root_option(value) -> tuple[np.ndarray | None, bool]:
    """(fixed root matrix or None, free) from a ``root_rotation`` option value."""
    if value is None:
        return None, False
    if isinstance(value, str):
        if value == "free":
            return None, True
        raise ValueError(f"root_rotation must be a rotation, 'free' or None, got {value!r}")
    return as_rotation_matrix(value, "root_rotation"), False


def _run(skeleton, idx, pos, p0, frames, root, root_from_target, root_matrix, free_root, tol, max_iter,
         swing_limbs=False, turn_up=None):
    """One solve; ``turn_up`` (the rest up axis, or None for no ``turn_search``) retries a solve
    that ends short from turned starts (``_turn_search``; never with a held ``root_rotation``)."""
    arrays = rig(skeleton)
    if frames is None:
        frames = np.empty((arrays.parents.shape[0], 3, 3))
        _frames_from_pose_kernel(p0, arrays.parents, arrays.lengths, arrays.Q, arrays.own_start, arrays.own_list,
                                 frames)
    if root_matrix is not None:
        frames = frames.copy()
        frames[0] = root_matrix
    tol, max_iter = check_tol(tol), check_max_iter(max_iter)
    tree, groups, limits, tops = arrays.tree, arrays.groups(True), arrays.limits, arrays.limbs(swing_limbs, True)
    if groups[0][0] >= 0 and root_matrix is None:
        free_root = True  # a held root group turns the root frame

    def attempt(p, F, cap=max_iter):
        return fabrik_tree(tree, groups, limits, (idx, pos, p, F, root, root_from_target), tol, min(cap, max_iter),
                           not free_root, tops, np.zeros(1, dtype=np.bool_))

    answer = attempt(p0, frames)
    code = answer[5]
    if code < 0:
        raise_kernel_error(code, skeleton, idx)
    if code != REACHED and turn_up is not None and root_matrix is None:
        answer = _turn_search(attempt, answer, p0, frames, turn_up, arrays.parents, idx, tol)
    out, F, row_active, iterations, errors, code = answer
    return constrained_skeleton_solution(skeleton, METHOD, out, F, row_active, iterations, errors, code, idx)


def constrained_skeleton_solution(skeleton, method, positions, frames, row_active, iterations, errors, code,
                                  target_indices) -> Solution:
    """The ``Solution`` of a constrained skeleton solve: per-effector errors by name, and extras
    ``frames`` (n, 3, 3), ``active_constraints`` (joint names), ``effector_error_array`` (k,) and,
    computed when read, ``local_rotations`` / ``swing_angles`` / ``twist_angles`` relative to each
    joint's parent frame (see ``ConstrainedExtras``)."""
    names = skeleton.names
    err = errors.tolist()
    extras = ConstrainedExtras({"frames": frames, "effector_error_array": errors,
                                "active_constraints": [names[j] for j in np.flatnonzero(row_active).tolist()]},
                               parents=np.asarray(skeleton.parents))
    return Solution(positions, iterations, max(err), STATUSES[code], method,
                    {names[j]: e for j, e in zip(np.asarray(target_indices).tolist(), err)}, extras)


def solve_fabrik_skeleton_constrained(skeleton, targets, initial, root, tol, max_iter, options) -> Solution:
    """Multi-end-effector FABRIK with the skeleton's joint limits (module docstring); arguments as
    ``fabrik.solvers.registry`` says, options ``LimitedTrackingOptions``. Every bone keeps its
    length and every limit holds in ``positions`` (``extras["frames"]`` are the matching frames)."""
    arrays, indices, positions, names, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
    initial = _writable(initial, np.float64)
    frames = options.initial_frames
    if frames is not None:
        frames = _check_frames(frames, skeleton.n_joints)
    root_matrix, free_root = _root_option(options.root_rotation)
    return _run(skeleton, indices, positions, initial, frames, _writable(root, np.float64), root_from_target,
                root_matrix, free_root, tol, int(max_iter), options.swing_limbs,
                rest_up(skeleton) if options.turn_search else None)


def solve_skeleton_constrained_arrays(skeleton, target_indices, target_positions, initial, initial_frames=None,
                                      root=None, tol=1e-3, max_iter=DEFAULT_MAX_ITER, root_rotation=None,
                                      swing_limbs: bool = DEFAULT_SWING_LIMBS, turn_up=None) -> Solution:
    """Constrained skeleton FABRIK on arrays, for per-frame loops (light checks only).

    Args as ``fabrik.solvers.skeleton_fabrik.solve_skeleton_arrays``, plus ``initial_frames``
    (n, 3, 3) (default derived from ``initial``; pass the previous ``extras["frames"]`` when
    tracking), ``root_rotation`` (held root orientation, or ``"free"``; default: held at
    ``initial_frames[0]``), ``swing_limbs`` and ``turn_up`` (the rest up axis, ``rest_up``, to
    retry a frame that ends short from turned starts as ``turn_search`` does; None: no retry).
    """
    n = skeleton.n_joints
    idx, pos, p0, r, root_from_target = array_inputs(n, target_indices, target_positions, initial, root)
    frames = None
    if initial_frames is not None:
        frames = _writable(initial_frames, np.float64, "initial_frames")
        if frames.shape != (n, 3, 3):
            raise ValueError(f"initial_frames must have shape ({n}, 3, 3), got {frames.shape}")
        if not math.isfinite(frames.sum()):
            raise ValueError("initial_frames must be finite (found NaN or inf)")
    root_matrix, free_root = _root_option(root_rotation)
    return _run(skeleton, idx, pos, p0, frames, r, root_from_target, root_matrix, free_root, tol, max_iter,
                swing_limbs, turn_up)


def _frame_solver(skeleton, indices, tol, max_iter, options):
    """One frame of a take on arrays (``fabrik.solvers.sequence``): the per-frame checks light."""
    first = options.initial_frames
    up = rest_up(skeleton) if options.turn_search else None

    def one(targets, previous, root, frames):
        return solve_skeleton_constrained_arrays(skeleton, indices, targets, previous, first if frames is None else frames,
                                                 root, tol, max_iter, options.root_rotation, options.swing_limbs, up)
    return one


def solve_skeleton_constrained_sequence(skeleton, indices, paths, initial, roots, tol, max_iter, options,
                                        progress=None) -> SequenceSolution:
    """A whole take with constrained skeleton FABRIK (``Method.sequence``): frame f started from
    frame f - 1's positions and frames, the first from ``options.initial_frames`` (default
    ``frames_from_pose(initial)``), in compiled runs (``fabrik_tree_frames``): the whole take in
    one call, or about 1% of it per call with ``progress``. With ``options.turn_search`` a run
    stops after a frame that ends short of its targets; that frame is solved again as
    ``turn_search`` says (each turned start one compiled call), and the take goes on from its
    answer. The same answers as solving frame by frame (``solve_skeleton_constrained_arrays``).

    Args:
        indices (k,) int64, paths (F, k, 3), initial (n, 3), roots (F, 3) or None (the root
        stays at ``initial[0]`` unless a target is on it), tol, max_iter: checked by
        ``fabrik.solve_sequence``; options: ``LimitedTrackingOptions``; progress: None or a
        function called with the number of frames done since its last call.
    """
    arrays = rig(skeleton)
    n = arrays.parents.shape[0]
    idx = np.ascontiguousarray(indices, dtype=np.int64)
    pos = np.ascontiguousarray(paths, dtype=np.float64)
    p0 = _writable(initial, np.float64, "initial")
    frames, k = pos.shape[0], idx.shape[0]
    root_from_target = roots is None
    rts = np.repeat(p0[:1], frames, axis=0) if root_from_target else np.ascontiguousarray(roots, dtype=np.float64)
    if options.initial_frames is not None:
        F0 = _check_frames(options.initial_frames, n).copy()
    else:
        F0 = frames_from_pose(skeleton, p0)
    root_matrix, free_root = _root_option(options.root_rotation)
    if root_matrix is not None:
        F0[0] = root_matrix
    tol, max_iter = check_tol(tol), check_max_iter(max_iter)
    tree, groups, limits, tops = arrays.tree, arrays.groups(True), arrays.limits, arrays.limbs(options.swing_limbs, True)
    if groups[0][0] >= 0 and root_matrix is None:
        free_root = True  # a held root group turns the root frame
    up = rest_up(skeleton) if options.turn_search and root_matrix is None else None
    if up is not None:
        rotations, branch = _turn_rotations(up), _branches(arrays.parents)
    out = np.empty((frames, n, 3))
    out_frames = np.empty((frames, n, 3, 3))
    iterations = np.zeros(frames, dtype=np.int64)
    errors = np.zeros((frames, k))
    codes = np.zeros(frames, dtype=np.int64)
    prev, prev_frames = p0, F0
    step = frames if progress is None else max(1, frames // 100)
    one = (np.empty((1, n, 3)), np.empty((1, n, 3, 3)), np.zeros(1, dtype=np.int64), np.zeros((1, k)),
           np.zeros(1, dtype=np.int64))  # a turned attempt's answer
    start = 0
    while start < frames:
        stop = min(frames, start + step)
        done = fabrik_tree_frames(tree, groups, limits, idx, pos[start:stop], prev, prev_frames, rts[start:stop],
                                  root_from_target, tol, max_iter, not free_root, tops, out[start:stop],
                                  out_frames[start:stop], iterations[start:stop], errors[start:stop],
                                  codes[start:stop], up is not None)
        if done < stop - start and codes[start + done] < 0:  # (a frame not yet written has code 0)
            raise_kernel_error(int(codes[start + done]), skeleton, idx, start + done)
        end = start + done
        if up is not None and codes[end - 1] != REACHED:  # the run stopped after this frame
            f = end - 1
            p_start = prev if f == start else out[f - 1]
            F_start = prev_frames if f == start else out_frames[f - 1]

            def attempt(p, F, cap=max_iter, f=f):
                # the run's own kernel (no second compiled signature to load on the first retry)
                fabrik_tree_frames(tree, groups, limits, idx, pos[f:f + 1], p, F, rts[f:f + 1], root_from_target,
                                   tol, min(cap, max_iter), not free_root, tops, *one, False)
                return one[0][0].copy(), one[1][0].copy(), None, int(one[2][0]), one[3][0].copy(), int(one[4][0])

            # the run's own answer for frame f is the unturned attempt (the kernel is deterministic)
            first = (out[f].copy(), out_frames[f].copy(), None, int(iterations[f]), errors[f].copy(), int(codes[f]))
            answer = _turn_search(attempt, first, np.ascontiguousarray(p_start), np.ascontiguousarray(F_start), up,
                                  arrays.parents, idx, tol, rotations, branch)
            out[f], out_frames[f], _, iterations[f], errors[f], codes[f] = answer
        prev, prev_frames = out[end - 1], out_frames[end - 1]
        if progress is not None:
            progress(end - start)
        start = end
    return SequenceSolution(out, iterations, errors, codes, METHOD, tuple(skeleton.names[j] for j in idx.tolist()),
                            out_frames)


def _sequence(skeleton, indices, paths, initial, roots, tol, max_iter, options, progress) -> SequenceSolution:
    """``Method.sequence`` of ``fabrik-constrained`` (``solve_skeleton_constrained_sequence``)."""
    return solve_skeleton_constrained_sequence(skeleton, indices, paths, initial, roots, tol, max_iter, options,
                                               progress)


add(METHOD, "skeleton", Solver(solve_fabrik_skeleton_constrained, LimitedTrackingOptions(), kernels=(fabrik_tree,)), frame=_frame_solver,
    sequence=_sequence, limits=True, frames=True)

__all__ = ["solve_fabrik_skeleton_constrained", "FrameOptions", "LimitedTrackingOptions", "solve_skeleton_constrained_arrays", "solve_skeleton_constrained_sequence", "rest_up", "TURN_SEARCH_DEGREES", "TURN_SEARCH_MAX_ITER", "frames_from_world_rotations", "frames_from_pose", "limit_violations", "constrained_skeleton_solution", "METHOD"]
