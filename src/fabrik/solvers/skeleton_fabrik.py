"""FABRIK for skeletons with several end effectors (sections 4.1-4.3 of the paper), with or
without joint limits: one solver, one kernel path (``fabrik.kernels.fabrik_tree``), its options
composing.

Use it through ``fabrik.solve(skeleton, targets={"LeftHand": xyz, ...})`` (method ``"fabrik"``,
the default; on a skeleton with limits the same solver runs under the name
``"fabrik-constrained"``), through ``fabrik.solve_sequence`` for a take, or, in a tight loop over
frames, through :func:`solve_skeleton_arrays`, which takes arrays and skips the per-call
dictionary work.

What the solver does (details in ``fabrik.kernels.fabrik_tree``):

* every targeted joint is an end effector; targets may sit on inner joints (section 4.2), which
  are then pinned during the forward stage, and the part of the tree beyond them is solved from
  there outwards in the backward stage;
* a joint where several targeted branches meet is a sub-base: the forward stage puts it at the
  centroid of the positions its branches propose (section 4.1), nested sub-bases in turn, down to
  the root; the backward stage runs from the root out along every targeted branch;
* branches with no target below them (e.g. fingers beyond a targeted wrist) keep their pose
  relative to the joint they hang from;
* the root is fixed at ``root`` (default ``initial[0]``, or the root joint's own target when it
  has one), and the start pose is first moved with it; bone lengths are kept exactly,
  zero-length bones (common in BVH files) included.

Options (``TrackingOptions``; each works with or without the others):

* ``rigid_sub_bases``: which joints carry their children as one rigid body, as a BVH joint's
  rotation does (``fabrik.model.rig.rigid_groups``): ``"auto"`` (default) or True every joint
  whose children hang from it at a distance (a pelvis with thighs and spine, a chest with neck
  and collars; without limits ``"auto"`` adds the sub-bases inside limbs, a hand's palm with its
  fingers, released when a solve stalls with them), ``"limbs"`` only those, False the paper's
  sub-bases. With limits the held groups turn as one within their centre's limit (a circular
  cone; a centre with another kind of limit is not held), and a held group at the root turns
  the root frame, unless ``root_rotation`` holds it. So every answer is a BVH pose:
  ``fabrik.mocap.save_take`` writes exactly the solved positions.
* ``swing_limbs`` (default True): swing every limb (``fabrik.model.rig.limb_tops``) rigidly about
  its hip or shoulder joint towards its targets before iterating; a warm start for tracking.
* ``reach_step`` (default False; ``fabrik reconstruct`` turns it on): a solve that ends short of
  its targets is tried again from a start whose held trunk groups (the pelvis, a chest on it) are
  turned, with their joints' frames under limits, so that each target lies within its limb's
  reach (``fabrik.solvers.reach_step``); the answer that reaches, else the lower largest error,
  wins, and ``iterations`` counts both attempts. With limits it comes after ``turn_search``.
* With joint limits (``Skeleton.with_constraints``): every joint carries a frame (module
  ``fabrik.model.geometry``), bones are placed inside their limits in both stages (section
  4.3; the limit conventions follow below), and ``initial_frames`` (n, 3, 3) give the start
  pose's frames (default ``frames_from_pose(initial)``; pass the previous answer's
  ``extras["frames"]`` when tracking, so twists stay continuous), ``root_rotation`` the root
  orientation to hold (a scipy Rotation, an (x, y, z, w) quaternion or a 3 x 3 matrix; ``"free"``
  to refit it every iteration; default: held at ``initial_frames[0]``, turned by a held root
  group), and ``turn_search`` (default False; ``fabrik reconstruct`` turns it on) retries a
  solve that ends short of its targets from starts turned about the root's up axis by each of
  ``TURN_SEARCH_DEGREES`` (the root's frame and the root's branches that hold an effector left
  further than ``tol``; the reaching answer that moves the joints least wins, else the lowest
  largest error; ``iterations`` counts every attempt's).

Limits on a tree
----------------
Every joint i carries a world frame ``F[i]`` (3x3 rotation, columns = its +X, +Y, +Z axes): for a
joint with a bone arriving from its parent, +Y along that bone; a zero-length bone takes its
parent's frame; the root's frame is the root's orientation. *Rest frames* ``R0[i]``
(``fabrik.model.rig.rest_frames``): +Y along the bone's rest offset. For a BVH pose with world
rotations ``W``, ``F[i] = W[parent(i)] R0[i]`` (``fabrik.model.geometry``). A limit on joint j
restricts the bone(s) leaving j, each c in its reference ``H_c = F[j] R0[j]^T A[j] R0[c]`` with
``A[j]`` the joint's reference rotation (``Skeleton.limit_reference``, identity by default): the
limit is centred on the bone's rest direction relative to its parent, turned by ``A[j]``. The
cone's up/down/left/right are towards the +Z, -Z, -X, +X axes of ``H_c``; a ``Hinge`` axis is
given in ``H_c`` coordinates (perpendicular to +Y) and a ``Twist`` bounds the twist of ``F[c]``
about the bone relative to ``H_c``. In BVH terms the limit on joint j bounds j's local rotation
(relative to ``A[j]``, in the child's rest frame). Limits on zero-length bones restrict nothing;
put the limit on the zero-length joint itself (CMU: ``LHipJoint`` limits the pelvis bone to
``LeftHip``). The root's own bones are measured against the root orientation.

Solutions: ``effector_errors`` by joint name; extras ``effector_error_array`` (k,) and, without
limits, ``released_groups`` (the centres of the groups the solve released); with limits
``frames`` (n, 3, 3), ``active_constraints`` (names of the joints whose limit is on its boundary)
and, computed when read, ``local_rotations`` (n, 4) (x, y, z, w) and ``swing_angles`` /
``twist_angles`` (n,) radians (``ConstrainedExtras``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from fabrik._validation import check_max_iter, check_positive, check_tol
from fabrik.kernels.fabrik_tree import fabrik_tree, fabrik_tree_frames
from fabrik.kernels.records import NO_START_STEP, Stop, TakeOut, TreeOptions, TreeTake, TreeTask
from fabrik.kernels.stopping import REACHED
from fabrik.kernels.vec import all_finite3
from fabrik.model.constraints import as_rotation_matrix
from fabrik.model.geometry import frames_from_pose, rest_up
from fabrik.model.rig import NO_FRAMES, NO_LIMITS, RIGID_MODES, Rig, rig, rigid_mode
from fabrik.solvers.result import ConstrainedExtras
from fabrik.solvers.registry import DEFAULT_MAX_ITER, Solver, add
from fabrik.solvers.result import STATUSES, SequenceSolution, Solution
from fabrik.solvers.skeleton_inputs import _writable, array_inputs, prepare, raise_kernel_error, target_arrays
from fabrik.solvers.reach_step import retry_short, trunk_layout
from fabrik.solvers.turn_search import (TURN_SEARCH_DEGREES, TURN_SEARCH_MAX_ITER, branches, search_turns,
                                        turn_rotations)

_DEFAULT_TOL = 1e-3

#: The method name of a solve with joint limits (the same solver as ``"fabrik"``).
METHOD = "fabrik-constrained"
#: The method name of skeleton FABRIK with ``dls_start`` on by default (and ``-constrained``).
DLS_START_METHOD = "fabrik-dls-start"


#: The defaults of skeleton FABRIK, the same in the library and ``fabrik reconstruct``: sub-bases
#: held rigid where a BVH joint rotation holds them (``"auto"``), so that every answer can be
#: written as joint rotations (``save_bvh``), and limbs swung towards their targets before
#: iterating. ``rigid_sub_bases=False, swing_limbs=False`` is the paper's algorithm (section 4.1),
#: whose sub-base children move on their own.
DEFAULT_RIGID_SUB_BASES = "auto"
DEFAULT_SWING_LIMBS = True

#: ``dls_start``'s default damping as a fraction of the skeleton's height (``Skeleton.height``):
#: light enough that the step goes most of the way to the targets.
DLS_START_DAMPING = 0.02


@dataclass(frozen=True, eq=False)
class FrameOptions:
    """The options of a skeleton solve with joint frames: ``initial_frames`` (n, 3, 3) frames of
    the start pose (default derived from ``initial``, ``fabrik.model.geometry.frames_from_pose``;
    pass a previous solution's ``extras["frames"]`` to keep twists continuous), ``root_rotation``
    (the root orientation to hold: a scipy Rotation, (x, y, z, w) quaternion or 3x3 matrix;
    ``"free"`` to refit it every iteration, FABRIK only; default: held at the initial frames'
    root). Used only on skeletons with limits."""

    initial_frames: Any = None
    root_rotation: Any = None


@dataclass(frozen=True, eq=False)
class TrackingOptions:
    """The options of skeleton FABRIK (module docstring): ``rigid_sub_bases`` (``RIGID_MODES``,
    default ``"auto"``), ``swing_limbs`` (default True), ``reach_step`` (default False),
    ``dls_start`` (default False) with ``dls_damping`` (model units > 0; default None,
    ``DLS_START_DAMPING`` x the skeleton's height), and, used with limits, ``turn_search``
    (default False), ``initial_frames`` and ``root_rotation`` (as ``FrameOptions`` says)."""

    rigid_sub_bases: bool | str = DEFAULT_RIGID_SUB_BASES
    swing_limbs: bool = DEFAULT_SWING_LIMBS
    turn_search: bool = False
    reach_step: bool = False
    dls_start: bool = False
    dls_damping: float | None = None
    initial_frames: Any = None
    root_rotation: Any = None

    def __post_init__(self):
        mode = rigid_mode(self.rigid_sub_bases)
        if not isinstance(mode, (bool, str)) or mode not in (False, True, "limbs", "auto"):
            raise ValueError(f"rigid_sub_bases must be one of {RIGID_MODES}, got {self.rigid_sub_bases!r}")
        for name in ("swing_limbs", "turn_search", "reach_step", "dls_start"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {value!r}")
        if self.dls_damping is not None:
            object.__setattr__(self, "dls_damping", check_positive(self.dls_damping, "dls_damping"))


def dls_start_damping(skeleton, options: TrackingOptions) -> float:
    """The damping (model units) of ``options``' damped least-squares start step on ``skeleton``:
    0.0 without ``dls_start``, else ``dls_damping`` or ``DLS_START_DAMPING`` x its height."""
    if not options.dls_start:
        return 0.0
    if options.dls_damping is not None:
        return float(options.dls_damping)
    return DLS_START_DAMPING * skeleton.height()


def _kernel_inputs(arrays: Rig, limited: bool, rigid_sub_bases, swing_limbs, root_matrix, free_root,
                   dls_start: float = 0.0):
    """(``Groups``, ``TreeLimits``, ``TreeOptions``) for ``fabrik_tree``: without limits the groups
    of ``rigid_sub_bases``; with limits the BVH-rigid groups (``True``) where ``rigid_sub_bases`` is
    True or ``"auto"``, their root group turning the root frame unless ``root_matrix`` holds it.
    ``dls_start``: the damping of the start step (``dls_start_damping``; 0.0 for none)."""
    start = NO_START_STEP
    if dls_start > 0.0:
        from fabrik.solvers.jacobian import DampedOptions
        from fabrik.solvers.skeleton_methods import kernel_settings

        # jacobian-dls's own step (its clamps of the error and of the angles) at this damping
        start = np.array(kernel_settings(DampedOptions(damping=dls_start), arrays.lengths))
    if not limited:
        return (arrays.groups(rigid_sub_bases), NO_LIMITS,
                TreeOptions(True, arrays.limbs(swing_limbs, rigid_sub_bases), start))
    mode = rigid_mode(rigid_sub_bases)
    held = mode is True or mode == "auto"
    groups = arrays.groups(held)
    root_group = held and groups.group_of[0] >= 0 and root_matrix is None
    return groups, arrays.limits, TreeOptions(not (free_root or root_group), arrays.limbs(swing_limbs, held), start)


def retries_short(options: TrackingOptions, limited: bool, root_matrix) -> bool:
    """Whether a solve with these options that ends short is tried again: ``reach_step``, or with
    limits ``turn_search``; never with a held root rotation (it turns nothing)."""
    if limited and root_matrix is not None:
        return False
    return bool(options.reach_step or (limited and options.turn_search))


def _stop(tol: float, max_iter: int) -> Stop:
    """The ``Stop`` of a tree kernel (points only: no orientation tolerance to read)."""
    return Stop(tol, 0.0, max_iter)


def solve_fabrik_skeleton(skeleton, targets, initial, root, tol, max_iter, options, with_frames=None,
                          ext=None) -> Solution:
    """Multi-end-effector FABRIK (module docstring); arguments as ``fabrik.solvers.registry``
    says, options ``TrackingOptions``.

    ``targets``: ``{joint_name: xyz}``; any joint may be targeted, leaves or inner joints, the
    root included (its target then fixes the root). ``initial``: (n, 3) start pose (default the
    rest pose); ``root``: (3,) fixed root (default the root joint's target if it has one, else
    ``initial[0]``). On a skeleton with limits every bone keeps its length and every limit holds
    in ``positions`` (``extras["frames"]`` are the matching frames). ``with_frames``: follow joint
    frames (the limited path) even without limits (method ``"fabrik-constrained"``); default:
    when the skeleton has limits. ``ext``: the kernel's effector weights, poles, obstacles and
    self-collision (``fabrik.solvers.extended``), or None.
    """
    arrays, indices, positions, _, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
    if not (bool(skeleton.constraints) if with_frames is None else with_frames):
        return _solve_plain(skeleton, arrays, indices, positions, initial, root, root_from_target, float(tol),
                            int(max_iter), options.rigid_sub_bases, options.swing_limbs, ext, options.reach_step,
                            dls_start_damping(skeleton, options))
    frames = options.initial_frames
    if frames is not None:
        frames = _check_frames(frames, skeleton.n_joints)
    root_matrix, free_root = _root_option(options.root_rotation)
    return _solve_limited(skeleton, indices, positions, _writable(initial, np.float64), frames,
                          _writable(root, np.float64), root_from_target, root_matrix, free_root, tol, int(max_iter),
                          options.rigid_sub_bases, options.swing_limbs,
                          rest_up(skeleton) if options.turn_search else None, ext, options.reach_step,
                          dls_start_damping(skeleton, options))


def _solve_plain(skeleton, arrays: Rig, idx, pos, initial, root, root_from_target: bool, tol: float,
                 max_iter: int, rigid_sub_bases, swing_limbs: bool, ext=None, reach_step: bool = False,
                 dls_start: float = 0.0) -> Solution:
    """One kernel call without limits on checked inputs, and its ``Solution`` (errors by joint
    name, and as an array in ``extras["effector_error_array"]``; the released groups' centres).
    ``ext``: the kernel's weights, poles and obstacles (``fabrik.solvers.extended``), or None;
    ``reach_step``: a short answer retried from turned trunk groups (``fabrik.solvers.reach_step``);
    ``dls_start``: the damping of the start step (``dls_start_damping``; 0.0 for none)."""
    groups, limits, options = _kernel_inputs(arrays, False, rigid_sub_bases, swing_limbs, None, False, dls_start)
    stop = _stop(tol, max_iter)

    def attempt(p, F=NO_FRAMES):
        # (the kernel's 6-tuple with the groups this attempt released in place of its row_active)
        released = np.zeros_like(groups.releasable)
        task = TreeTask(idx, pos, p, NO_FRAMES, root, root_from_target)
        if ext is None:
            answer = fabrik_tree(arrays.tree, groups, limits, task, stop, options, released)
        else:
            answer = fabrik_tree(arrays.tree, groups, limits, task, stop, options, released, ext)
        return (answer[0], answer[1], released, *answer[3:])

    answer = attempt(initial)
    if answer[5] < 0:
        raise_kernel_error(answer[5], skeleton, idx)
    if reach_step and answer[5] != REACHED:
        answer = _retried(attempt, answer, None, None, None, trunk_layout(arrays.parents, arrays.lengths, groups, idx),
                          arrays.parents, idx, pos, tol)
    out, _, released, iterations, errors, code = answer
    names = skeleton.names
    err = errors.tolist()
    return Solution(out, iterations, max(err), STATUSES[code], "fabrik",
                    {names[j]: e for j, e in zip(idx.tolist(), err)},
                    {"effector_error_array": errors,
                     "released_groups": released_centres(skeleton, groups.group_of, released)})


def _solve_limited(skeleton, idx, pos, p0, frames, root, root_from_target, root_matrix, free_root, tol, max_iter,
                   rigid_sub_bases=DEFAULT_RIGID_SUB_BASES, swing_limbs=False, turn_up=None, ext=None,
                   reach_step: bool = False, dls_start: float = 0.0) -> Solution:
    """One solve with limits; a solve that ends short is retried, never with a held
    ``root_rotation``: with ``turn_up`` (the rest up axis, or None for no ``turn_search``) from
    starts turned about it (``search_turns``), then, still short, with ``reach_step`` from its
    best answer's trunk groups turned (``retry_short``); ``ext`` and ``dls_start`` as for
    ``_solve_plain``."""
    arrays = rig(skeleton)
    if frames is None:
        frames = frames_from_pose(skeleton, p0)
    if root_matrix is not None:
        frames = frames.copy()
        frames[0] = root_matrix
    tol, max_iter = check_tol(tol), check_max_iter(max_iter)
    groups, limits, options = _kernel_inputs(arrays, True, rigid_sub_bases, swing_limbs, root_matrix, free_root,
                                             dls_start)

    def attempt(p, F, cap=max_iter):
        task = TreeTask(idx, pos, p, F, root, root_from_target)
        stop = _stop(tol, min(cap, max_iter))
        if ext is None:
            return fabrik_tree(arrays.tree, groups, limits, task, stop, options, np.zeros_like(groups.releasable))
        return fabrik_tree(arrays.tree, groups, limits, task, stop, options, np.zeros_like(groups.releasable), ext)

    answer = attempt(p0, frames)
    code = answer[5]
    if code < 0:
        raise_kernel_error(code, skeleton, idx)
    if code != REACHED and root_matrix is None:
        trunk = trunk_layout(arrays.parents, arrays.lengths, groups, idx) if reach_step else None
        answer = _retried(attempt, answer, p0, frames, turn_up, trunk, arrays.parents, idx, pos, tol)
    out, F, row_active, iterations, errors, code = answer
    return constrained_skeleton_solution(skeleton, METHOD, out, F, row_active, iterations, errors, code, idx)


def _retried(attempt, first, p0, F0, up, trunk, parents, idx, targets, tol, rotations=None, branch=None):
    """A solve that ended short (``first``, the kernel's 6-tuple; ``attempt(p, F[, cap])`` the same
    solve from another start) tried again: with ``up`` (the rest up axis; None: no
    ``turn_search``) from starts ``p0``, ``F0`` turned about it (``search_turns``, which takes
    ``rotations`` and ``branch`` computed once per take), then, still short, with ``trunk`` (a
    ``TrunkLayout``; None: no ``reach_step``) from the best answer's trunk groups turned
    (``retry_short``). Returns the answer kept, ``first`` when it reached."""
    answer = first
    if up is not None and answer[5] != REACHED:
        answer = search_turns(attempt, answer, p0, F0, up, parents, idx, tol, rotations, branch)
    return retry_short(attempt, answer, trunk, targets, tol)


def released_centres(skeleton, group_of, released) -> tuple[str, ...]:
    """Names of the centre joints of the rigid groups a solve released (``group_of`` (n,), -1 or
    the group whose centre the joint is; ``released``, one bool per group, from the kernel)."""
    if not released.any():
        return ()
    return tuple(skeleton.names[j] for j in np.flatnonzero(group_of >= 0) if released[group_of[j]])


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


def _root_option(value) -> tuple[np.ndarray | None, bool]:
    """(fixed root matrix or None, free) from a ``root_rotation`` option value."""
    if value is None:
        return None, False
    if isinstance(value, str):
        if value == "free":
            return None, True
        raise ValueError(f"root_rotation must be a rotation, 'free' or None, got {value!r}")
    return as_rotation_matrix(value, "root_rotation"), False


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


def solve_skeleton_arrays(skeleton, target_indices, target_positions, initial, root=None, tol=_DEFAULT_TOL,
                          max_iter=DEFAULT_MAX_ITER, rigid_sub_bases: bool | str = DEFAULT_RIGID_SUB_BASES,
                          swing_limbs: bool = DEFAULT_SWING_LIMBS, *, initial_frames=None, root_rotation=None,
                          turn_up=None, reach_step: bool = False, dls_start: float = 0.0,
                          with_frames=None) -> Solution:
    """Multi-end-effector FABRIK on arrays, for per-frame loops (no dictionaries to build).

    Same algorithm and results as ``fabrik.solve(skeleton, targets=...)``, with light checks only
    (shapes and finiteness), so that a warm-started frame costs a few microseconds of Python.

    Args:
        skeleton: a ``fabrik.Skeleton`` (with limits: a limited solve).
        target_indices: (k,) distinct joint indices (``skeleton.index(name)``), k >= 1.
        target_positions: (k, 3) finite goals, row t for joint ``target_indices[t]``.
        initial: (n, 3) start pose (e.g. the previous frame's ``positions``). Never written.
        root: (3,) fixed root position, or None: the target of the root joint if index 0 is
            targeted, else ``initial[0]``.
        tol: absolute tolerance (model units) on every effector's error; max_iter: the cap.
        rigid_sub_bases, swing_limbs: as ``TrackingOptions`` says.
        initial_frames, root_rotation: with limits, as ``FrameOptions`` says (pass the previous
            frame's ``extras["frames"]`` when tracking).
        turn_up: with limits, the rest up axis (``fabrik.model.geometry.rest_up``) to retry a
            frame that ends short from turned starts as ``turn_search`` does; None: no retry.
        reach_step: retry a solve that ends short as ``TrackingOptions`` says.
        dls_start: the damping (model units) of a damped least-squares step from the start
            before iterating (``TrackingOptions.dls_start``, ``dls_start_damping``); 0.0: none.
        with_frames: as for ``solve_fabrik_skeleton``.

    Returns:
        ``Solution`` as from ``solve``; ``extras["effector_error_array"]`` holds the errors as a
        (k,) array in the order of ``target_indices``.

    Raises:
        ValueError: wrong shapes or dtypes that cannot be converted, non-finite values,
            repeated or out-of-range indices, an explicit root that conflicts with a root target.
    """
    arrays = rig(skeleton)
    n = arrays.parents.shape[0]
    idx, pos, p0, r, root_from_target = array_inputs(n, target_indices, target_positions, initial, root)
    if not (bool(skeleton.constraints) if with_frames is None else with_frames):
        return _solve_plain(skeleton, arrays, idx, pos, p0, r, root_from_target, check_tol(tol),
                            check_max_iter(max_iter), rigid_sub_bases, swing_limbs, reach_step=reach_step,
                            dls_start=dls_start)
    frames = None
    if initial_frames is not None:
        frames = _writable(initial_frames, np.float64, "initial_frames")
        if frames.shape != (n, 3, 3):
            raise ValueError(f"initial_frames must have shape ({n}, 3, 3), got {frames.shape}")
        if not math.isfinite(frames.sum()):
            raise ValueError("initial_frames must be finite (found NaN or inf)")
    root_matrix, free_root = _root_option(root_rotation)
    return _solve_limited(skeleton, idx, pos, p0, frames, r, root_from_target, root_matrix, free_root, tol, max_iter,
                          rigid_sub_bases, swing_limbs, turn_up, reach_step=reach_step, dls_start=dls_start)


def solve_skeleton_sequence(skeleton, target_indices, target_positions, initial, roots=None, tol=_DEFAULT_TOL,
                            max_iter=DEFAULT_MAX_ITER, rigid_sub_bases: bool | str = DEFAULT_RIGID_SUB_BASES,
                            swing_limbs: bool = DEFAULT_SWING_LIMBS,
                            progress: Callable[[int], None] | None = None, chunk: int | None = None, *,
                            initial_frames=None, root_rotation=None, turn_search: bool = False,
                            reach_step: bool = False, dls_start: float = 0.0, with_frames=None) -> SequenceSolution:
    """Multi-end-effector FABRIK over F frames of a take, each frame started from the answer (and,
    with limits, the frames) of the frame before, in compiled runs.

    Frame by frame the same as calling ``solve_skeleton_arrays`` with the previous frame's
    ``positions`` (and ``extras["frames"]``) as the start (to the last bit), without its
    per-frame Python cost. With ``reach_step``, or limits and ``turn_search`` (``retries_short``),
    a run stops after a frame that ends short of its targets; that frame is solved again as the
    options say, and the take goes on from its answer.

    Args:
        skeleton: a ``fabrik.Skeleton``.
        target_indices: (k,) distinct joint indices (``skeleton.index(name)``), k >= 1.
        target_positions: (F, k, 3) finite goals: frame f, row t for joint ``target_indices[t]``.
        initial: (n, 3) the start pose of frame 0 (e.g. the recording's first frame). Never written.
        roots: (F, 3) the fixed root of every frame, or None: the root joint's target where index 0
            is targeted, else ``initial[0]`` in every frame.
        tol, max_iter, rigid_sub_bases, swing_limbs: as for ``solve_skeleton_arrays`` (every frame).
        progress: called with the number of frames just finished after each run of ``chunk``
            frames (e.g. a tqdm bar's ``update``).
        chunk: frames per compiled call when ``progress`` is given (default: about 1% of F).
        initial_frames, root_rotation, turn_search: with limits, as ``TrackingOptions`` says
            (``initial_frames`` for frame 0); reach_step: as it says.
        dls_start: as for ``solve_skeleton_arrays`` (every frame).
        with_frames: as for ``solve_fabrik_skeleton``.

    Returns:
        ``SequenceSolution`` (positions (F, n, 3), iterations (F,), effector_errors (F, k) in the
        order of ``target_indices``, status_codes (F,) into ``STATUSES``; with limits frames
        (F, n, 3, 3)).

    Raises:
        ValueError: wrong shapes, non-finite values, repeated or out-of-range indices, no frames,
            an explicit root that conflicts with a root target (naming the frame).
    """
    arrays = rig(skeleton)
    n = arrays.parents.shape[0]
    idx = _writable(target_indices, np.int64)
    pos = _writable(target_positions, np.float64, "target_positions")
    p0 = _writable(initial, np.float64, "initial")
    k = idx.shape[0] if idx.ndim == 1 else -1
    if k < 1 or pos.ndim != 3 or pos.shape[1:] != (k, 3) or pos.shape[0] < 1:
        raise ValueError(f"target_indices must have shape (k,) with k >= 1 and target_positions (F, k, 3) with "
                         f"F >= 1; got {idx.shape} and {pos.shape}")
    frames = pos.shape[0]
    if p0.shape != (n, 3):
        raise ValueError(f"initial must have shape ({n}, 3) to match the skeleton, got {p0.shape}")
    root_from_target = roots is None
    if root_from_target:
        rts = np.repeat(p0[:1], frames, axis=0)
    else:
        rts = _writable(roots, np.float64, "roots")
        if rts.shape != (frames, 3):
            raise ValueError(f"roots must have shape ({frames}, 3), one per frame of target_positions, got {rts.shape}")
    if not all_finite3(pos, p0, rts):
        raise ValueError("target_positions, initial and roots must be finite (found NaN or inf)")
    tol = check_tol(tol)
    max_iter = check_max_iter(max_iter)
    limited = bool(skeleton.constraints) if with_frames is None else with_frames
    root_matrix, free_root = _root_option(root_rotation) if limited else (None, False)
    groups, limits, options = _kernel_inputs(arrays, limited, rigid_sub_bases, swing_limbs, root_matrix, free_root,
                                             dls_start)
    F0 = NO_FRAMES
    if limited:
        F0 = frames_from_pose(skeleton, p0) if initial_frames is None else _check_frames(initial_frames, n).copy()
        if root_matrix is not None:
            F0[0] = root_matrix
    up = rest_up(skeleton) if limited and turn_search and root_matrix is None else None
    rotations = branch = None
    if up is not None:
        rotations, branch = turn_rotations(up), branches(arrays.parents)
    trunk = (trunk_layout(arrays.parents, arrays.lengths, groups, idx)
             if reach_step and not (limited and root_matrix is not None) else None)
    retry = up is not None or trunk is not None
    out = np.empty((frames, n, 3))
    out_frames = np.empty((frames, n, 3, 3)) if limited else NO_FRAMES
    iterations = np.zeros(frames, dtype=np.int64)
    errors = np.zeros((frames, k))
    codes = np.zeros(frames, dtype=np.int64)
    prev, prev_frames = p0, F0
    step = frames if progress is None else max(1, int(chunk) if chunk else frames // 100)
    one = TakeOut(np.empty((1, n, 3)), np.empty((1, n, 3, 3)) if limited else NO_FRAMES, np.zeros(1, dtype=np.int64),
                  np.zeros((1, k)), np.zeros(1, dtype=np.int64))  # a retried attempt's answer
    run_stop = _stop(tol, max_iter)
    start = 0
    while start < frames:
        stop = min(frames, start + step)
        take = TreeTake(idx, pos[start:stop], prev, prev_frames, rts[start:stop], root_from_target)
        written = TakeOut(out[start:stop], out_frames[start:stop] if limited else NO_FRAMES, iterations[start:stop],
                          errors[start:stop], codes[start:stop])
        done = fabrik_tree_frames(arrays.tree, groups, limits, take, run_stop, options, retry, written)
        if done < stop - start and codes[start + done] < 0:  # (a frame not yet written has code 0)
            raise_kernel_error(int(codes[start + done]), skeleton, idx, start + done)
        end = start + done
        if retry and codes[end - 1] != REACHED:  # the run stopped after this frame
            f = end - 1
            p_start = prev if f == start else out[f - 1]
            F_start = prev_frames if f == start or not limited else out_frames[f - 1]

            def attempt(p, F, cap=max_iter, f=f):
                # the run's own kernel (no second compiled signature to load on the first retry)
                fabrik_tree_frames(arrays.tree, groups, limits,
                                   TreeTake(idx, pos[f:f + 1], p, F, rts[f:f + 1], root_from_target),
                                   _stop(tol, min(cap, max_iter)), options, False, one)
                return (one.positions[0].copy(), one.frames[0].copy() if limited else NO_FRAMES, None,
                        int(one.iterations[0]), one.errors[0].copy(), int(one.codes[0]))

            # the run's own answer for frame f is the first attempt (the kernel is deterministic)
            first = (out[f].copy(), out_frames[f].copy() if limited else NO_FRAMES, None, int(iterations[f]),
                     errors[f].copy(), int(codes[f]))
            answer = _retried(attempt, first, np.ascontiguousarray(p_start), np.ascontiguousarray(F_start), up,
                              trunk, arrays.parents, idx, pos[f], tol, rotations, branch)
            out[f], frames_f, _, iterations[f], errors[f], codes[f] = answer
            if limited:
                out_frames[f] = frames_f
        prev = out[end - 1]
        if limited:
            prev_frames = out_frames[end - 1]
        if progress is not None:
            progress(end - start)
        start = end
    return SequenceSolution(out, iterations, errors, codes, METHOD if limited else "fabrik",
                            tuple(skeleton.names[j] for j in idx.tolist()), out_frames if limited else None)


def _sequence(skeleton, indices, paths, initial, roots, tol, max_iter, options, progress,
              with_frames=None) -> SequenceSolution:
    """``Method.sequence`` of skeleton FABRIK (``solve_skeleton_sequence``)."""
    return solve_skeleton_sequence(skeleton, indices, paths, initial, roots, tol, max_iter, options.rigid_sub_bases,
                                   options.swing_limbs, progress, initial_frames=options.initial_frames,
                                   root_rotation=options.root_rotation, turn_search=options.turn_search,
                                   reach_step=options.reach_step, dls_start=dls_start_damping(skeleton, options),
                                   with_frames=with_frames)


def _frame_solver(skeleton, indices, tol, max_iter, options):
    """One frame of a take on arrays (``fabrik.solvers.sequence``), with frames: the per-frame
    checks light."""
    first = options.initial_frames
    up = rest_up(skeleton) if options.turn_search else None
    damping = dls_start_damping(skeleton, options)

    def one(targets, previous, root, frames):
        return solve_skeleton_arrays(skeleton, indices, targets, previous, root, tol, max_iter,
                                     options.rigid_sub_bases, options.swing_limbs,
                                     initial_frames=first if frames is None else frames,
                                     root_rotation=options.root_rotation, turn_up=up, reach_step=options.reach_step,
                                     dls_start=damping, with_frames=True)
    return one


def _with_frames(function):
    """``function`` (the solver or its sequence) always following joint frames: ``"fabrik-constrained"``."""
    def run(*args, **more):
        return function(*args, with_frames=True, **more)
    run.__doc__ = function.__doc__
    return run


add("fabrik", "skeleton", Solver(solve_fabrik_skeleton, TrackingOptions(), kernels=(fabrik_tree,)), sequence=_sequence)
add(METHOD, "skeleton", Solver(_with_frames(solve_fabrik_skeleton), TrackingOptions(), kernels=(fabrik_tree,)),
    frame=_frame_solver, sequence=_with_frames(_sequence), limits=True, frames=True)
# the same solver with ``dls_start`` on: its own rows in ``fabrik reconstruct`` (a step that is not FABRIK)
add(DLS_START_METHOD, "skeleton", Solver(solve_fabrik_skeleton, TrackingOptions(dls_start=True), kernels=(fabrik_tree,)),
    sequence=_sequence, limited=DLS_START_METHOD + "-constrained",
    summary="skeleton FABRIK, each solve started by one damped least-squares step (dls_start)")
add(DLS_START_METHOD + "-constrained", "skeleton",
    Solver(_with_frames(solve_fabrik_skeleton), TrackingOptions(dls_start=True), kernels=(fabrik_tree,)),
    frame=_frame_solver, sequence=_with_frames(_sequence), limits=True, frames=True,
    summary="the same with joint limits (fabrik-constrained with dls_start)")

__all__ = ["solve_fabrik_skeleton", "TrackingOptions", "FrameOptions", "DEFAULT_RIGID_SUB_BASES",
           "DEFAULT_SWING_LIMBS", "solve_skeleton_arrays", "solve_skeleton_sequence", "array_inputs", "target_arrays",
           "prepare", "raise_kernel_error", "constrained_skeleton_solution", "TURN_SEARCH_DEGREES",
           "TURN_SEARCH_MAX_ITER", "METHOD", "DLS_START_METHOD", "DLS_START_DAMPING", "dls_start_damping"]
