"""FABRIK for skeletons with several end effectors (sections 4.1 and 4.2 of the paper).

Use it through ``fabrik.solve(skeleton, targets={"LeftHand": xyz, ...})`` (method ``"fabrik"``,
the default) or, in a tight loop over frames, through :func:`solve_skeleton_arrays`, which takes
arrays and skips the per-call dictionary work.

What the solver does (details in ``fabrik.kernels.fabrik_tree``):

* every targeted joint is an end effector; targets may sit on inner joints (section 4.2), which
  are then pinned during the forward stage, and the part of the tree beyond them is solved from
  there outwards in the backward stage;
* a joint where several targeted branches meet is a sub-base: the forward stage puts it at the
  centroid of the positions its branches propose (section 4.1), nested sub-bases in turn, down to
  the root; the backward stage runs from the root out along every targeted branch;
* branches with no target below them (e.g. fingers beyond a targeted wrist) keep their bone
  vectors: they are carried along rigidly by translation with the joint they hang from;
* the root is fixed at ``root`` (default ``initial[0]``, or the root joint's own target when it
  has one), and the start pose is first moved with it, as every method of the library starts
  (CCD and the Jacobian methods too); bone lengths are kept exactly, zero-length bones (common in BVH files) included.

The tree is prepared once per skeleton (``fabrik.model.rig``) and the whole
iteration loop runs inside one compiled kernel call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from fabrik._validation import MAX_COORDINATE, as_point, as_points, check_max_iter, check_tol, real_numbers
from fabrik.kernels.fabrik_tree import fabrik_tree, fabrik_tree_frames
from fabrik.kernels.tree import BAD_INDEX, BAD_ROOT
from fabrik.kernels.vec import all_finite3
from fabrik.solvers.registry import DEFAULT_MAX_ITER, Solver, add
from fabrik.model.rig import NO_FRAMES, NO_LIMITS, RIGID_MODES, Rig, rig, rigid_mode
from fabrik.solvers.result import STATUSES, SequenceSolution, Solution

_DEFAULT_TOL = 1e-3



















































def target_arrays(skeleton, targets, arrays: Rig | None = None) -> tuple[np.ndarray, np.ndarray, list]:
    """Convert ``{joint: xyz}`` to (indices (k,) int64, positions (k, 3) float64, names).

    Keys are joint names (or integer joint indices); values finite 3-vectors. Raises ValueError
    for an empty mapping, an unknown joint (listing the joints), or a bad value (naming the
    joint).
    """
    if arrays is None:
        arrays = rig(skeleton)
    if not isinstance(targets, Mapping):
        raise ValueError(f"targets must be a mapping {{joint_name: xyz}}, got {type(targets).__name__}")
    if len(targets) == 0:
        raise ValueError("targets is empty; give at least one {joint_name: xyz}")
    index_of = arrays.index_of
    n = arrays.parents.shape[0]
    indices = np.empty(len(targets), dtype=np.int64)
    names = []
    for m, key in enumerate(targets):
        j = index_of.get(key) if isinstance(key, str) else None
        if j is None:
            if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < n:
                j = int(key)
            else:
                raise ValueError(f"targets: unknown joint {key!r}; joints are: {', '.join(skeleton.names)}")
        indices[m] = j
        names.append(skeleton.names[j])
    if len(set(names)) != len(names):
        raise ValueError("targets: the same joint is given twice (by name and by index)")
    try:
        positions = np.array(real_numbers(list(targets.values()), "targets"), dtype=np.float64)
        good = positions.shape == (len(targets), 3) and bool(np.abs(positions).max() < MAX_COORDINATE)
    except (TypeError, ValueError):
        good = False
    if not good:
        for key, value in targets.items():
            if isinstance(value, tuple) and len(value) == 2 and np.ndim(value[0]) == 1:
                raise ValueError(f"targets[{key!r}]: oriented targets (xyz, rotation) are supported on chains only; "
                                 f"give a skeleton's targets as xyz positions")
            try:
                as_point(value, f"targets[{key!r}]", 3)
            except ValueError as exc:
                raise ValueError(f"{exc} (each target must be a finite xyz 3-vector)") from None
        raise ValueError("targets: each value must be a finite xyz 3-vector")
    return indices, positions, names


def prepare(skeleton, targets, initial, root):
    """Check and arrange the inputs shared by every skeleton method.

    Returns (arrays, target indices (k,), target positions (k, 3), joint names of the targets,
    initial (n, 3), root (3,), root_from_target). ``root_from_target`` is True when ``root`` was
    not given, so that a target on the root joint fixes the root. Raises ValueError on bad input
    (and when an explicit ``root`` disagrees with a target on the root joint).
    """
    arrays = rig(skeleton)
    indices, positions, names = target_arrays(skeleton, targets, arrays)
    n = arrays.parents.shape[0]
    if initial is None:
        initial = arrays.rest
    else:
        initial = as_points(initial, "initial", dim=3)
        if initial.shape[0] != n:
            raise ValueError(f"initial must have shape ({n}, 3) to match the skeleton, got {initial.shape}")
    root_from_target = root is None
    if root is None:
        root = initial[0].copy()
    else:
        root = as_point(root, "root", 3).copy()
        hit = np.flatnonzero(indices == 0)
        if hit.size and not np.allclose(positions[hit[0]], root, rtol=0.0, atol=1e-12 * max(1.0, float(arrays.reach.max()))):
            raise ValueError(f"root {root.tolist()} conflicts with the target on the root joint "
                             f"{skeleton.names[0]!r} {positions[hit[0]].tolist()}; give one of them")
    return arrays, indices, positions, names, initial, root, root_from_target


def raise_kernel_error(code: int, skeleton, indices, frame: int | None = None) -> None:
    """Turn a kernel's negative status into a ValueError (naming ``frame`` of a take when given)."""
    where = "" if frame is None else f"frame {frame}: "
    if code == BAD_INDEX:
        raise ValueError(f"{where}target_indices must be distinct joint indices in [0, {skeleton.n_joints}), "
                         f"got {np.asarray(indices).tolist()}")
    if code == BAD_ROOT:
        raise ValueError(f"{where}root conflicts with the target on the root joint; give one of them")
    raise ValueError(f"{where}solver failed with code {code}")


def _writable(value, dtype, name: str = "input") -> np.ndarray:
    """``value`` as a C-contiguous, writable array of ``dtype`` (copied only when needed: numba
    compiles read-only arrays as a separate type); float64 inputs must be real numbers
    (``real_numbers``, naming ``name``)."""
    if dtype is np.float64 and not (type(value) is np.ndarray and value.dtype.char == "d"):
        value = real_numbers(value, name)
    arr = np.ascontiguousarray(value, dtype=dtype)
    return arr if arr.flags.writeable else arr.copy()


#: The defaults of skeleton FABRIK, the same in the library and ``fabrik reconstruct``: sub-bases
#: held rigid where a BVH joint rotation holds them (``"auto"``), so that every answer can be
#: written as joint rotations (``rotations_from_positions``, ``save_bvh``), and limbs swung
#: towards their targets before iterating. ``rigid_sub_bases=False, swing_limbs=False`` is the
#: paper's algorithm (section 4.1), whose sub-base children move on their own.
DEFAULT_RIGID_SUB_BASES = "auto"
DEFAULT_SWING_LIMBS = True


@dataclass(frozen=True)
class TrackingOptions:
    """Options of skeleton FABRIK.

    ``rigid_sub_bases``: False: the paper's sub-bases, every bone leaving a joint moves on its
    own. True: a joint's children at a distance move as one rigid body about it, as they do
    under a BVH joint's rotation (see ``rigid_groups``); the sub-base still goes to the centroid
    of its branches' (now rigid) proposals. ``"limbs"``: only the sub-bases inside limbs are
    rigid (a hand's palm carrying the fingers and thumb, a foot with several toes; see
    ``limb_groups``), their members found through zero-length joints; these groups are a prior,
    released when the solve stalls short of its targets with them. ``"auto"``: both kinds
    (``auto_groups``); only the groups that BVH does not hold rigid are released. ``"all"`` and
    ``"none"`` stand for True and False.

    ``swing_limbs``: True to first swing every limb (leg, arm, head; see ``limb_tops``) rigidly
    about its hip or shoulder joint so that it points at its targets, then iterate: a warm start
    for tracking, limbs keeping their shape from the previous frame.

    Defaults (``DEFAULT_RIGID_SUB_BASES``, ``DEFAULT_SWING_LIMBS``): ``"auto"`` and True, as in
    ``fabrik reconstruct``: every answer can be written as joint rotations. ``False, False`` is
    the paper's algorithm, whose answers may not be (a sub-base's children moved apart).
    """

    rigid_sub_bases: bool | str = DEFAULT_RIGID_SUB_BASES
    swing_limbs: bool = DEFAULT_SWING_LIMBS

    def __post_init__(self):
        mode = rigid_mode(self.rigid_sub_bases)
        if not isinstance(mode, (bool, str)) or mode not in (False, True, "limbs", "auto"):
            raise ValueError(f"rigid_sub_bases must be one of {RIGID_MODES}, got {self.rigid_sub_bases!r}")
        if not isinstance(self.swing_limbs, (bool, np.bool_)):
            raise ValueError(f"swing_limbs must be True or False, got {self.swing_limbs!r}")


def solve_fabrik_skeleton(skeleton, targets, initial, root, tol, max_iter, options) -> Solution:
    """Multi-end-effector FABRIK (sections 4.1, 4.2); arguments as ``fabrik.solvers.registry``
    says, options ``TrackingOptions``.

    ``targets``: ``{joint_name: xyz}``; any joint may be targeted, leaves or inner joints, the
    root included (its target then fixes the root). ``initial``: (n, 3) start pose (default the
    rest pose); ``root``: (3,) fixed root (default the root joint's target if it has one, else
    ``initial[0]``).

    Returns a ``Solution`` with ``effector_errors`` {joint name: distance}; ``extras
    ["released_groups"]`` names the centres of the rigid groups the solve released (a tuple, empty
    when none), and ``extras["effector_error_array"]`` holds the errors as a (k,) array in target
    order.
    """
    arrays, indices, positions, _, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
    return _solve(skeleton, arrays, indices, positions, initial, root, root_from_target, float(tol), int(max_iter),
                  options.rigid_sub_bases, options.swing_limbs)


def _sequence(skeleton, indices, paths, initial, roots, tol, max_iter, options, progress) -> SequenceSolution:
    """A whole take in one compiled loop (``Method.sequence``, see ``solve_skeleton_sequence``)."""
    return solve_skeleton_sequence(skeleton, indices, paths, initial, roots, tol, max_iter, options.rigid_sub_bases,
                                   options.swing_limbs, progress)


add("fabrik", "skeleton", Solver(solve_fabrik_skeleton, TrackingOptions(), kernels=(fabrik_tree,)), sequence=_sequence)


def _solve(skeleton, arrays: Rig, idx, pos, initial, root, root_from_target: bool, tol: float,
           max_iter: int, rigid_sub_bases, swing_limbs: bool) -> Solution:
    """One kernel call on checked inputs, and its ``Solution`` (errors by joint name, and as an
    array in ``extras["effector_error_array"]``; the released groups' centres)."""
    groups = arrays.groups(rigid_sub_bases)
    released = np.zeros_like(groups[-1])
    out, _, _, iterations, errors, code = fabrik_tree(
        arrays.tree, groups, NO_LIMITS, (idx, pos, initial, NO_FRAMES, root, root_from_target), tol, max_iter,
        True, arrays.limbs(swing_limbs, rigid_sub_bases), released)
    if code < 0:
        raise_kernel_error(code, skeleton, idx)
    names = skeleton.names
    err = errors.tolist()
    return Solution(out, iterations, max(err), STATUSES[code], "fabrik",
                    {names[j]: e for j, e in zip(idx.tolist(), err)},
                    {"effector_error_array": errors, "released_groups": released_centres(skeleton, groups[0], released)})


def released_centres(skeleton, group_of, released) -> tuple[str, ...]:
    """Names of the centre joints of the rigid groups a solve released (``group_of`` (n,), -1 or
    the group whose centre the joint is; ``released``, one bool per group, from the kernel)."""
    if not released.any():
        return ()
    return tuple(skeleton.names[j] for j in np.flatnonzero(group_of >= 0) if released[group_of[j]])


def array_inputs(n: int, target_indices, target_positions, initial, root):
    """The light checks of the per-frame array interfaces (``solve_skeleton_arrays`` and the
    constrained ones) for a skeleton of n joints. Returns (indices (k,) int64, targets (k, 3),
    initial (n, 3), root (3,), root_from_target), all writable and C-contiguous; ``root`` None
    gives ``initial[0]`` with ``root_from_target`` True. ValueError names a wrong shape or a
    non-finite value."""
    idx = _writable(target_indices, np.int64)
    pos = _writable(target_positions, np.float64, "target_positions")
    p0 = _writable(initial, np.float64, "initial")
    k = idx.shape[0] if idx.ndim == 1 else -1
    if k < 1 or pos.shape != (k, 3):
        raise ValueError(f"target_indices must have shape (k,) with k >= 1 and target_positions (k, 3); "
                         f"got {idx.shape} and {pos.shape}")
    if p0.shape != (n, 3):
        raise ValueError(f"initial must have shape ({n}, 3) to match the skeleton, got {p0.shape}")
    if root is None:
        root_from_target = True
        r = p0[0].copy()
    else:
        root_from_target = False
        r = _writable(root, np.float64, "root")
        if r.shape != (3,):
            raise ValueError(f"root must have shape (3,), got {r.shape}")
    if not all_finite3(pos, p0, r):
        raise ValueError("target_positions, initial and root must be finite (found NaN or inf)")
    return idx, pos, p0, r, root_from_target


def solve_skeleton_arrays(skeleton, target_indices, target_positions, initial, root=None, tol=_DEFAULT_TOL,
                          max_iter=DEFAULT_MAX_ITER, rigid_sub_bases: bool | str = DEFAULT_RIGID_SUB_BASES,
                          swing_limbs: bool = DEFAULT_SWING_LIMBS) -> Solution:
    """Multi-end-effector FABRIK on arrays, for per-frame loops (no dictionaries to build).

    Same algorithm and results as ``fabrik.solve(skeleton, targets=...)``, with light checks only
    (shapes and finiteness), so that a warm-started frame costs a few microseconds of Python.

    Args:
        skeleton: a ``fabrik.Skeleton``.
        target_indices: (k,) distinct joint indices (``skeleton.index(name)``), k >= 1.
        target_positions: (k, 3) finite goals, row t for joint ``target_indices[t]``.
        initial: (n, 3) start pose (e.g. the previous frame's ``positions``). Never written.
        root: (3,) fixed root position, or None: the target of the root joint if index 0 is
            targeted, else ``initial[0]``.
        tol: absolute tolerance (model units) on every effector's error; max_iter: the cap.
        rigid_sub_bases, swing_limbs: as for ``solve_fabrik_skeleton``.

    Returns:
        ``Solution`` as from ``solve``; ``effector_errors`` is keyed by joint name, and
        ``extras["effector_error_array"]`` holds the same errors as a (k,) array in the order of
        ``target_indices``, and ``extras["released_groups"]`` the released groups' centres.

    Raises:
        ValueError: wrong shapes or dtypes that cannot be converted, non-finite values,
            repeated or out-of-range indices, an explicit root that conflicts with a root target.
    """
    arrays = rig(skeleton)
    idx, pos, p0, r, root_from_target = array_inputs(arrays.parents.shape[0], target_indices, target_positions,
                                                     initial, root)
    return _solve(skeleton, arrays, idx, pos, p0, r, root_from_target, check_tol(tol), check_max_iter(max_iter),
                  rigid_sub_bases, swing_limbs)


def solve_skeleton_sequence(skeleton, target_indices, target_positions, initial, roots=None, tol=_DEFAULT_TOL,
                            max_iter=DEFAULT_MAX_ITER, rigid_sub_bases: bool | str = DEFAULT_RIGID_SUB_BASES,
                            swing_limbs: bool = DEFAULT_SWING_LIMBS,
                            progress: Callable[[int], None] | None = None, chunk: int | None = None) -> SequenceSolution:
    """Multi-end-effector FABRIK over F frames of a take, each frame started from the answer of the
    frame before, in one compiled loop.

    Frame by frame the same as calling ``solve_skeleton_arrays`` with the previous frame's
    ``positions`` as ``initial`` (to the last bit), without its per-frame Python cost (input
    checks, result records), which on a CMU walk is about as much as the iterations themselves.

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

    Returns:
        ``SequenceSolution`` (positions (F, n, 3), iterations (F,), effector_errors (F, k) in the
        order of ``target_indices``, status_codes (F,) into ``STATUSES``).

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
    groups = arrays.groups(rigid_sub_bases)
    tops = arrays.limbs(swing_limbs, rigid_sub_bases)
    out = np.empty((frames, n, 3))
    iterations = np.zeros(frames, dtype=np.int64)
    errors = np.zeros((frames, k))
    codes = np.zeros(frames, dtype=np.int64)
    step = frames if progress is None else max(1, int(chunk) if chunk else frames // 100)
    start = 0
    while start < frames:
        stop = min(frames, start + step)
        first = p0 if start == 0 else out[start - 1]
        done = fabrik_tree_frames(arrays.tree, groups, NO_LIMITS, idx, pos[start:stop], first, NO_FRAMES,
                                  rts[start:stop], root_from_target, tol, max_iter, True, tops, out[start:stop],
                                  NO_FRAMES, iterations[start:stop], errors[start:stop], codes[start:stop], False)
        if done < stop - start:
            raise_kernel_error(int(codes[start + done]), skeleton, idx, start + done)
        if progress is not None:
            progress(stop - start)
        start = stop
    return SequenceSolution(out, iterations, errors, codes, "fabrik", tuple(skeleton.names[j] for j in idx.tolist()))


__all__ = ["solve_fabrik_skeleton", "TrackingOptions", "DEFAULT_RIGID_SUB_BASES", "DEFAULT_SWING_LIMBS", "solve_skeleton_arrays", "solve_skeleton_sequence", "array_inputs", "target_arrays", "prepare", "raise_kernel_error"]
