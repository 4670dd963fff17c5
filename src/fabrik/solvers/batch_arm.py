"""``fabrik.solve_batch`` on a ``fabrik.Arm``: N position or pose targets, joint values out, on
numba threads (``fabrik.kernels.batch_arm``), each answer ``fabrik.solve``'s (docs/batch.md,
"Arms").

FABRIK on an arm of the shape of ``fabrik.models.dhm_arm`` is the DHM study's closed-form pass
(``batch_srs``); FABRIK on any other arm, ``fabrik-revolute``, ``ccd`` and ``jacobian-dls`` run
``fabrik.solvers.arm.search``'s attempts and restarts compiled (``batch_search``). Two options of
the search are not taken: ``time_budget`` (a compiled batch has no clock: every restart runs, so
an answer is ``fabrik.solve``'s wherever that solve's search ended within its budget) and
``nearest`` (its search for the answer nearest the start is Python: use ``fabrik.solve``); both
are refused with a ValueError rather than ignored.
"""

from __future__ import annotations

import numpy as np

from fabrik._progress import progress_bar
from fabrik._validation import check_max_iter, check_memory, check_tol, real_numbers
from fabrik.kernels.records import ArmAnswers, ArmSearch, ArmSettings, ArmTasks, Stop
from fabrik.kernels.stopping import NO_PROGRESS_WINDOW, REACHED
from fabrik.model.arm import check_angles
from fabrik.model.pose import split_transforms, target_rotations
from fabrik.solvers import registry
from fabrik.solvers.arm import MARKER, NEWTON_NEAR, RESTART_WINDOW, arm_model, arm_shape_rest, srs_shape
from fabrik.solvers.result import STATUSES

#: The arm methods ``solve_batch`` runs.
ARM_BATCH_METHODS = ("fabrik", "fabrik-revolute", "ccd", "jacobian-dls")
#: Batches of more targets than this run in pieces of this size when a progress bar is shown.
PROGRESS_PIECE = 50_000
_IDENTITY = np.eye(3)[None]


def arm_batch_bytes(count: int, m: int, *, oriented: bool = False, starts: bool = False) -> int:
    """About how many bytes ``solve_batch`` allocates for ``count`` targets of an arm of ``m``
    joints: its answer (joint values, positions and frames of the m + 1 rows of
    ``fabrik.forward``, iterations, errors, statuses) and its working copies (the targets; with
    ``oriented`` their rotations, with ``starts`` a start per target)."""
    per = 8 * (m + 3 * (m + 1) + 9 * (m + 1) + 4 + 3) + 1
    if oriented:
        per += 8 * 9 * 2
    if starts:
        per += 8 * m
    return count * per


def arm_targets(targets) -> tuple[np.ndarray, np.ndarray | None]:
    """(points (N, 3), rotations (N, 3, 3) or None) of a batch of arm targets: (N, 3) points, a
    pair (points (N, 3), rotations: (N, 3, 3) matrices or a scipy ``Rotation`` of N), or (N, 4, 4)
    transforms; each as ``fabrik.solve`` reads one target (``fabrik.model.pose``)."""
    if isinstance(targets, tuple) and len(targets) == 2 and np.ndim(targets[0]) == 2:
        points = _points(targets[0])
        return points, target_rotations(targets[1], points.shape[0], 3, "rotations")
    if np.ndim(targets) == 3:
        points, rotations = split_transforms(targets, "targets")
        _points(points)
        return points, rotations
    return _points(targets), None


def _points(value) -> np.ndarray:
    from fabrik.solvers.batch_skeleton import _check_rows

    arr = real_numbers(value, "targets")
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] < 1:
        raise ValueError(f"an arm's targets must be (N, 3) points, a pair ((N, 3) points, (N, 3, 3) rotations) or "
                         f"(N, 4, 4) transforms, with N >= 1; got shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    _check_rows(arr, "targets")
    return arr


def solve_arm_batch(arm, targets, *, initial, tol, max_iter, method, threads, progress, options, run_parallel,
                    solution):
    """``solve_batch`` for an arm (arguments as ``fabrik.solvers.batch.solve_batch`` says;
    ``run_parallel`` and ``solution`` are that module's ``_parallel`` and ``BatchSolution``)."""
    from fabrik.kernels._cache_guard import announce_compile
    from fabrik.kernels import batch_arm

    chosen = registry.route(method, "arm")
    if chosen.name not in ARM_BATCH_METHODS:
        raise ValueError(f"solve_batch solves arms with methods {', '.join(ARM_BATCH_METHODS)}, got {method!r}; use "
                         "fabrik.solve target by target for the others")
    shape = srs_shape(arm) if chosen.name == "fabrik" else None
    if shape is None:
        for name, why in (("time_budget", "a compiled batch has no clock: every restart runs"),
                          ("nearest", "its search for the answer nearest the start runs in Python; use fabrik.solve")):
            if name in options:
                raise ValueError(f"solve_batch does not take {name} on this arm ({why})")
    opts = chosen.options("arm", options)
    solver = chosen.arm
    tol = check_tol(tol)
    cap = solver.max_iter if max_iter is None else min(check_max_iter(max_iter), solver.max_iter_ceiling)
    m = arm.n_joints
    _check_memory(targets, m, initial is not None)
    points, rotations = arm_targets(targets)
    count = points.shape[0]
    oriented = rotations is not None
    mats = rotations if oriented else _IDENTITY
    if initial is None:
        starts = (shape.rest if shape is not None else arm_shape_rest(arm))[None]
    else:
        starts = arm_starts(initial, m, count)
    out_q = np.empty((count, m))
    out_p = np.empty((count, m + 1, 3))
    out_frames = np.empty((count, m + 1, 3, 3))
    out_it = np.empty(count, np.int64)
    out_err = np.empty(count)
    out_oerr = np.empty(count)
    out_code = np.empty(count, np.int64)
    outs = (out_q, out_p, out_frames, out_it, out_err, out_oerr, out_code)
    stop = Stop(tol, opts.orientation_tol, cap)

    def tasks(rows):
        return ArmTasks(points[rows], _rows(mats, rows), oriented, _rows(starts, rows))

    def answers(rows):
        return ArmAnswers(*(o[rows] for o in outs))

    if shape is not None:
        kernel = batch_arm.batch_srs

        def args(rows):
            return shape.pack, tasks(rows), stop, answers(rows)
    else:
        kernel = batch_arm.batch_search
        model = arm_model(arm)
        reach = float(arm.reach)
        code = {"ccd": batch_arm.CCD, "jacobian-dls": batch_arm.DLS}.get(chosen.name, batch_arm.FABRIK)
        if code == batch_arm.FABRIK:
            length = float(arm.reach or 1.0)  # as solve_revolute_arm
            settings = ArmSettings(length, NO_PROGRESS_WINDOW, MARKER * length, NEWTON_NEAR if opts.finish else 0.0)
        elif code == batch_arm.DLS:
            settings = ArmSettings(reach, NO_PROGRESS_WINDOW, damping=opts.damping * reach,
                                   max_angle_step=opts.max_angle_step)
        else:
            settings = ArmSettings(reach, NO_PROGRESS_WINDOW)
        search = ArmSearch(_restart_values(arm, opts), RESTART_WINDOW, reach)

        def args(rows):
            return code, model, tasks(rows), stop, settings, search, answers(rows)
    announce_compile(kernel)
    pieces = [slice(0, count)] if not progress or count <= PROGRESS_PIECE else [
        slice(s, min(count, s + PROGRESS_PIECE)) for s in range(0, count, PROGRESS_PIECE)]
    with progress_bar(progress, count, "solve_batch", "target") as bar:
        for rows in pieces:
            run_parallel(threads, kernel, args(rows))
            if bar is not None:
                bar.update(rows.stop - rows.start)
    status = out_code.astype(np.int8)
    return solution(out_p, out_it, out_err, status, status == REACHED, chosen.name, STATUSES, out_frames, out_oerr if oriented else None, None, (), out_q)


def arm_starts(initial, m: int, count: int) -> np.ndarray:
    """``initial`` as a batch's start angles: (1, m) for every target or (count, m), one per
    target, float64 (``check_angles``); ValueError for another shape or a value not finite."""
    starts = check_angles(initial, m)
    if starts.ndim == 1:
        starts = starts[None]
    if starts.shape[0] not in (1, count):
        raise ValueError(f"initial must have shape ({m},) for every target or ({count}, {m}), one per target; got "
                         f"{starts.shape}")
    if not starts.flags.writeable:
        starts = starts.copy()
    return starts


def _check_memory(targets, m: int, starts: bool) -> None:
    try:
        shape = np.shape(targets[0] if isinstance(targets, tuple) else targets)
    except (ValueError, IndexError, TypeError):
        return  # (arm_targets names the problem)
    if len(shape) < 2:
        return
    count = int(shape[0])
    need = arm_batch_bytes(count, m, oriented=isinstance(targets, tuple) or len(shape) == 3, starts=starts)
    per = max(1, need // max(count, 1))
    check_memory(need, f"solve_batch of {count:,} targets on an arm of {m} joints",
                 lambda available: f"solve them in pieces of at most {max(1, available // (2 * per)):,} targets (half "
                                   "the memory available)")


def _rows(values: np.ndarray, rows: slice) -> np.ndarray:
    return values if values.shape[0] == 1 else values[rows]


def _restart_values(arm, opts) -> np.ndarray:
    """(restarts, m): the values ``fabrik.solvers.arm.search`` starts its restarts from, in its
    order (its generator seeded with ``opts.seed``, one draw per restart: the same for every
    target)."""
    m = arm.n_joints
    out = np.empty((opts.restarts, m))
    if opts.restarts:
        rng = np.random.default_rng(opts.seed)
        low, span = arm.random_ranges()
        for r in range(opts.restarts):
            out[r] = low + span * rng.random(low.shape[0])
    return out


__all__ = ["ARM_BATCH_METHODS", "arm_batch_bytes", "arm_starts", "arm_targets", "solve_arm_batch"]
