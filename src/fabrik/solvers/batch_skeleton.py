"""``fabrik.solve_batch`` on a ``fabrik.Skeleton``: N independent skeleton FABRIK solves, with or
without joint limits, on numba threads (``fabrik.kernels.batch_tree.batch_tree``), each answer
``fabrik.solve``'s (docs/batch.md, "Skeletons")."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from fabrik._validation import check_max_iter, check_memory, check_tol, real_numbers
from fabrik.kernels.records import BatchOut, StartFrames, TreeTask
from fabrik.kernels.stopping import REACHED
from fabrik.model.geometry import frames_from_pose
from fabrik.model.rig import NO_FRAMES, rig
from fabrik.solvers import registry
from fabrik.solvers.result import STATUSES
from fabrik.solvers.skeleton_fabrik import (DLS_START_METHOD, METHOD, _check_frames, _kernel_inputs, _root_option,
                                            _stop, dls_start_damping, raise_kernel_error, retries_short,
                                            target_arrays)

#: The skeleton methods ``solve_batch`` runs: FABRIK, and FABRIK following joint frames (the method
#: of a skeleton with limits).
SKELETON_BATCH_METHODS = ("fabrik", METHOD, DLS_START_METHOD, DLS_START_METHOD + "-constrained")
_NO_ROOT_MATRIX = np.zeros((0, 3))


def skeleton_batch_bytes(count: int, n: int, k: int, *, frames: bool = False, starts: bool = False) -> int:
    """About how many bytes ``solve_batch`` allocates for ``count`` solves of a skeleton of ``n``
    joints with ``k`` targeted joints: its answer (positions, iterations, errors per effector and
    their largest, statuses; with ``frames`` the joint frames and the rows on a limit) and its
    working copies (the targets stacked; with ``starts`` a start pose per solve)."""
    per = 8 * (3 * n + 3 * k + k + 3) + 1
    if frames:
        per += 8 * (9 * n + n)
    if starts:
        per += 8 * 3 * n
    return count * per


def check_goal_rows(key, shape: tuple, rows: int | None) -> None:
    """ValueError unless one joint's goals ``targets[key]`` have shape (N, 3) with N >= 1, N the
    ``rows`` of the joints before it (None for the first)."""
    if len(shape) != 2 or shape[1] != 3 or shape[0] < 1:
        raise ValueError(f"targets[{key!r}] must have shape (N, 3) with N >= 1 (one goal per solve), got {shape}")
    if rows is not None and shape[0] != rows:
        raise ValueError(f"targets[{key!r}] has {shape[0]} rows, the targets before it {rows}; every joint needs one "
                         "goal per solve")


def effector_targets(skeleton, targets, effectors, arrays):
    """(indices (k,) int64, names, targets (N, k, 3) float64 C-contiguous) from ``targets``: a
    mapping ``{joint: (N, 3)}`` or an (N, k, 3) array for the joints ``effectors`` (names or
    indices; default ``skeleton.leaves``). ValueError naming the problem."""
    if isinstance(targets, Mapping):
        if effectors is not None:
            raise ValueError("effectors names the joints of an (N, k, 3) targets array; a mapping {joint: (N, 3)} "
                             "names its own")
        if len(targets) == 0:
            raise ValueError("targets is empty; give at least one {joint_name: (N, 3) array}")
        paths = []
        for key, value in targets.items():
            path = real_numbers(value, f"targets[{key!r}]")
            check_goal_rows(key, path.shape, paths[0].shape[0] if paths else None)
            paths.append(path)
        keys = list(targets)
        stacked = np.stack(paths, axis=1)
    else:
        keys = list(skeleton.leaves) if effectors is None else _joint_list(effectors)
        stacked = real_numbers(targets, "targets")
        if stacked.ndim != 3 or stacked.shape[1:] != (len(keys), 3) or stacked.shape[0] < 1:
            which = "the skeleton's leaves (effectors=None)" if effectors is None else "effectors"
            raise ValueError(f"targets must have shape (N, {len(keys)}, 3), one row of goals per solve for the "
                             f"{len(keys)} joints of {which}, or be a mapping {{joint: (N, 3)}}; got "
                             f"{np.shape(targets)}")
    indices, _, names = target_arrays(skeleton, dict(zip(keys, stacked[0])), arrays)
    out = np.ascontiguousarray(stacked, dtype=np.float64)
    _check_rows(out, "targets")
    return indices, names, out


def _joint_list(effectors) -> list:
    """``effectors`` as a list of joint names or indices, each joint once."""
    if isinstance(effectors, (str, bytes)) or not hasattr(effectors, "__iter__"):
        raise ValueError(f"effectors must be a list of joint names or indices, got {effectors!r}")
    keys = list(effectors)
    for key in keys:
        if not isinstance(key, (str, int, np.integer)) or isinstance(key, bool):
            raise ValueError(f"effectors: {key!r} is not a joint name or index")
    if len(set(keys)) != len(keys) or not keys:
        raise ValueError(f"effectors must name each joint once, and at least one, got {keys!r}")
    return keys


def _check_rows(arr: np.ndarray, name: str) -> None:
    """ValueError naming ``name`` and the first row (solve) holding a NaN, an inf or a coordinate
    too large to square."""
    from fabrik._validation import MAX_COORDINATE

    good = (np.abs(arr.reshape(arr.shape[0], -1)) < MAX_COORDINATE).all(axis=1)
    if not good.all():
        row = int(np.flatnonzero(~good)[0])
        values = arr[row]
        if not np.isfinite(values).all():
            raise ValueError(f"{name} is not finite (NaN or inf) in row {row}")
        raise ValueError(f"{name} has a coordinate of {np.abs(values).max():g} in row {row}; coordinates must stay "
                         f"below {MAX_COORDINATE:g}")


def per_solve(value, name: str, shape: tuple, count: int) -> np.ndarray:
    """``value`` as a C-contiguous float64 array of (1,) + shape (one for every solve) or (count,)
    + shape (one per solve), every row checked finite (``_check_rows``)."""
    arr = real_numbers(value, name)
    if arr.shape == shape:
        arr = arr[None]
    if arr.shape[1:] != shape or arr.shape[0] not in (1, count):
        dims = ", ".join(str(s) for s in shape)
        raise ValueError(f"{name} must have shape ({dims}) for every solve or ({count}, {dims}), one per solve; got "
                         f"{np.shape(value)}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not arr.flags.writeable:
        arr = arr.copy()
    _check_rows(arr, name)
    return arr


def check_frame_rows(frames: np.ndarray, n: int, name: str = "initial_frames") -> np.ndarray:
    """(1 or N, n, 3, 3) start frames checked as ``_check_frames`` checks one set: rotations
    (orthonormal to 1e-6, det +1)."""
    if frames.shape[0] == 1:
        return _check_frames(frames[0], n, name)[None]
    err = np.abs(np.einsum("...ji,...jk->...ik", frames, frames) - np.eye(3)).max(axis=(-1, -2, -3))
    bad = np.flatnonzero((err > 1e-6) | (np.linalg.det(frames) < 0).any(axis=1))
    if bad.size:
        raise ValueError(f"{name} must be rotation matrices (orthonormal, det +1); row {int(bad[0])} is not")
    return frames


def skeleton_route(skeleton, method, options):
    """(the ``registry`` method, its options) of a skeleton batch; ValueError for a method the batch
    does not run or an unknown option."""
    chosen = registry.route(method, "skeleton", limited=bool(skeleton.constraints))
    if chosen.name not in SKELETON_BATCH_METHODS:
        raise ValueError(f"solve_batch solves skeletons with methods {', '.join(SKELETON_BATCH_METHODS)}, got "
                         f"{method!r}; use fabrik.solve target by target for the others")
    return chosen, chosen.options("skeleton", options)


def device_blocker(skeleton, chosen, opts) -> str | None:
    """None when a skeleton batch runs on the Warp skeleton kernel (``fabrik.kernels.batch_warp_tree``:
    method ``"fabrik"`` on a skeleton without joint limits, any ``rigid_sub_bases`` and
    ``swing_limbs``); else what keeps it on the CPU, in words naming the option: joint limits (or
    the method that follows frames), ``reach_step`` (its retries run ``fabrik.solve`` row by row),
    ``dls_start`` (a damped least-squares step the device does not take)."""
    reasons = []
    if chosen.frames:
        reasons.append("joint limits" if skeleton.constraints else f"method={chosen.name!r}")
    elif opts.reach_step:
        reasons.append("reach_step=True")
    if opts.dls_start:
        reasons.append("dls_start=True")
    return ", ".join(reasons) or None


def solve_skeleton_batch(skeleton, targets, *, effectors=None, initial=None, root=None, tol, max_iter, method,
                         threads, progress, options, run_parallel, in_slices, solution):
    """``solve_batch`` for a skeleton (arguments as ``fabrik.solvers.batch.solve_batch`` says;
    ``run_parallel``, ``in_slices`` and ``solution`` are that module's ``_parallel``, ``_in_slices``
    and ``BatchSolution``)."""
    from fabrik.kernels._cache_guard import announce_compile
    from fabrik.kernels.batch_tree import batch_tree

    chosen, opts = skeleton_route(skeleton, method, options)
    with_frames = chosen.frames
    solver = chosen.skeleton
    tol = check_tol(tol)
    cap = solver.max_iter if max_iter is None else check_max_iter(max_iter)
    arrays = rig(skeleton)
    n = arrays.parents.shape[0]
    _check_memory(targets, effectors, skeleton, n, with_frames, initial is not None)
    idx, names, goals = effector_targets(skeleton, targets, effectors, arrays)
    count, k = goals.shape[0], idx.shape[0]
    initials = arrays.rest[None] if initial is None else per_solve(initial, "initial", (n, 3), count)
    root_from_target = root is None
    roots = np.ascontiguousarray(initials[:, 0]) if root is None else per_solve(root, "root", (3,), count)
    if not root_from_target:
        _check_root_targets(skeleton, arrays, idx, goals, roots)
    root_matrix, free_root = _root_option(opts.root_rotation) if with_frames else (None, False)
    groups, limits, kernel_options = _kernel_inputs(arrays, with_frames, opts.rigid_sub_bases, opts.swing_limbs,
                                                    root_matrix, free_root, dls_start_damping(skeleton, opts))
    derive = False
    if not with_frames:
        frames_in = NO_FRAMES[None]
    elif opts.initial_frames is not None:
        frames_in = check_frame_rows(per_solve(opts.initial_frames, "initial_frames", (n, 3, 3), count), n)
    elif initials.shape[0] == 1:
        frames_in = frames_from_pose(skeleton, initials[0])[None]
    else:
        frames_in, derive = NO_FRAMES[None], True
    rm = _NO_ROOT_MATRIX if root_matrix is None else np.ascontiguousarray(root_matrix)
    out_p = np.empty((count, n, 3))
    out_frames = np.empty((count, n if with_frames else 0, 3, 3))
    out_active = np.empty((count, n if with_frames else 0), np.int64)
    out_it = np.empty(count, np.int64)
    out_err = np.empty((count, k))
    out_code = np.empty(count, np.int64)
    announce_compile(batch_tree)

    def launch(rows, starts, rows_cap, out):
        p, it, err, code, frames, active = out
        if starts is None:
            s, f, r, d = _rows(initials, rows), _rows(frames_in, rows), _rows(roots, rows), derive
        else:  # a slice after the first: on from the last one's pose and frames, as fabrik.solve goes on
            s, d = starts, False
            f = np.ascontiguousarray(out_frames[rows]) if with_frames else frames_in
            r = np.ascontiguousarray(starts[:, 0]) if root_from_target else _rows(roots, rows)
        task = TreeTask(idx, goals[rows], s, f, r, root_from_target)
        start = StartFrames(d, rm, arrays.parents, arrays.lengths, arrays.Q, arrays.own_start, arrays.own_list)
        run_parallel(threads, batch_tree, (arrays.tree, groups, limits, task, _stop(tol, rows_cap), kernel_options,
                                           start, BatchOut(p, frames, active, it, err, code)))

    in_slices(launch, [out_p, out_it, out_err, out_code, out_frames, out_active], cap, solver.max_iter_ceiling,
              progress)
    bad = np.flatnonzero(out_code < 0)
    if bad.size:
        raise_kernel_error(int(out_code[bad[0]]), skeleton, idx, None)
    if retries_short(opts, with_frames, root_matrix):
        _retry_short(skeleton, chosen.name, names, goals, initial, root, tol, max_iter, opts, with_frames, out_p,
                     out_frames, out_it, out_err, out_code)
    status = out_code.astype(np.int8)
    return solution(out_p, out_it, out_err.max(axis=1), status, status == REACHED, chosen.name, STATUSES,
                    out_frames if with_frames else None, None, out_err, tuple(names))


def _rows(values: np.ndarray, rows) -> np.ndarray:
    return values if values.shape[0] == 1 else values[rows]


def _check_memory(targets, effectors, skeleton, n: int, frames: bool, starts: bool) -> None:
    if isinstance(targets, Mapping):
        try:
            count = int(np.shape(next(iter(targets.values())))[0]) if targets else 0
        except (ValueError, IndexError):
            return
        k = len(targets)
    else:
        try:
            shape = np.shape(targets)
        except ValueError:
            return
        if len(shape) != 3:
            return
        count, k = int(shape[0]), int(shape[1])
    need = skeleton_batch_bytes(count, n, k, frames=frames, starts=starts)
    per = max(1, need // max(count, 1))
    check_memory(need, f"solve_batch of {count:,} solves on a skeleton of {n} joints",
                 lambda available: f"solve them in pieces of at most {max(1, available // (2 * per)):,} solves (half "
                                   "the memory available)")


def _check_root_targets(skeleton, arrays, idx, goals, roots) -> None:
    """An explicit ``root`` must agree with a target on the root joint, as ``fabrik.solve`` requires
    (``skeleton_fabrik.prepare``); ValueError naming the first solve where it does not."""
    hit = np.flatnonzero(idx == 0)
    if not hit.size:
        return
    atol = 1e-12 * max(1.0, float(arrays.reach.max()))
    off = ~(np.abs(goals[:, hit[0]] - roots) <= atol).all(axis=1)
    if off.any():
        row = int(np.flatnonzero(off)[0])
        raise ValueError(f"row {row}: root {roots[0 if roots.shape[0] == 1 else row].tolist()} conflicts with the "
                         f"target on the root joint {skeleton.names[0]!r} {goals[row, hit[0]].tolist()}; give one of "
                         "them")


def _retry_short(skeleton, method, names, goals, initial, root, tol, max_iter, opts, with_frames, out_p, out_frames,
                 out_it, out_err, out_code) -> None:
    """``reach_step`` or ``turn_search`` (``retries_short``): every solve that ended short of its
    targets solved again by ``fabrik.solve`` itself (its first attempt is the batch's; the retries
    follow, in Python), so the answer is the single solve's."""
    from fabrik.solvers.api import solve

    for i in np.flatnonzero(out_code != REACHED).tolist():
        start = None if initial is None else _row(initial, i, 2)
        base = None if root is None else _row(root, i, 1)
        more = dict(reach_step=opts.reach_step, dls_start=opts.dls_start, dls_damping=opts.dls_damping)
        if with_frames:
            frames = opts.initial_frames
            more.update(turn_search=opts.turn_search, initial_frames=None if frames is None else _row(frames, i, 3),
                        root_rotation=opts.root_rotation)
        sol = solve(skeleton, targets=dict(zip(names, goals[i])), initial=start, root=base,
                    method=method, tol=tol, max_iter=max_iter,
                    rigid_sub_bases=opts.rigid_sub_bases, swing_limbs=opts.swing_limbs, **more)
        out_p[i] = sol.positions
        if with_frames:
            out_frames[i] = sol.extras["frames"]
        out_it[i] = sol.iterations
        out_err[i] = sol.extras["effector_error_array"]
        out_code[i] = STATUSES.index(sol.status)


def _row(value, i: int, ndim: int):
    """Solve i's value of an argument given for every solve (``ndim`` dimensions) or per solve."""
    arr = np.asarray(value, dtype=np.float64)
    return arr if arr.ndim == ndim else arr[i]


__all__ = ["SKELETON_BATCH_METHODS", "skeleton_batch_bytes", "solve_skeleton_batch", "skeleton_route", "device_blocker",
           "effector_targets", "per_solve"]
