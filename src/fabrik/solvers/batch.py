"""``fabrik.solve_batch``: many targets for one chain, compiled and multi-threaded (docs/batch.md)."""

from __future__ import annotations

import math
import threading
from typing import NamedTuple

import numpy as np

from fabrik._progress import progress_bar
from fabrik._validation import check_coordinates, check_max_iter, check_memory, check_tol, real_numbers
from fabrik.kernels.records import ChainBatch, ChainBatchOut, LimitedBatch, LimitedBatchOut, Stop
from fabrik.kernels.stopping import MAX_ITERATIONS
from fabrik.model.chain import Chain
from fabrik.solvers import registry
from fabrik.solvers.api import DEFAULT_TOL
from fabrik.solvers.result import STATUSES

#: The ways ``solve_batch`` can run a batch on the CPU (``layout=``): ``"lockstep"`` (default:
#: LANES targets side by side per thread, ``fabrik.kernels.batch.batch_lockstep``; a batch of
#: fewer than LANES targets per thread runs per-thread, where lanes would idle), ``"per-thread"``
#: (one target after another per thread, solved in place) and ``"baseline"`` (one
#: ``fabrik_chain_into`` call per target, the plain kernel ``fabrik bench batch`` compares against).
LAYOUTS = ("lockstep", "per-thread", "baseline")
#: The methods ``solve_batch`` runs (``"fabrik"`` hands limited chains and oriented targets to
#: ``"fabrik-constrained"``, as ``fabrik.solve`` does).
BATCH_METHODS = ("fabrik", "fabrik-constrained")
#: Engines (``backend=``): ``"numba"`` (CPU, default) and ``"warp"`` (NVIDIA Warp, ``device=``
#: ``"cpu"`` or ``"cuda"``; the optional extra ``gpu``).
BACKENDS = ("numba", "warp")
#: Targets per work item of the lockstep layout (each thread takes chunks of this many).
CHUNK = 256
#: Batches of more targets than this are run in pieces of this size, so a progress bar can move.
PROGRESS_PIECE = 50_000


class BatchSolution(NamedTuple):
    """The outcome of ``solve_batch`` (an immutable record of arrays, one row per target).

    Attributes:
        positions: (N, n, d) float64 joint positions per target, root first.
        iterations: (N,) int64 iterations per target (as ``Solution.iterations``).
        error: (N,) float64 effector-to-target distance, in the chain's units.
        status: (N,) int8 status codes: index into ``status_names`` (``fabrik.STATUSES``):
            0 reached, 1 unreachable, 2 stalled, 3 max_iterations.
        reached: (N,) bool, ``status == 0``.
        method: the method's name.
        status_names: ``fabrik.STATUSES``, the meaning of each code.
        frames: (N, n, 3, 3) joint frames per target (``fabrik-constrained``: each
            ``Solution.extras["frames"]``), else None.
        orientation_error: (N,) radians between the last bone's frame (an arm's tip frame) and the
            target rotation (oriented targets: ``extras["orientation_error"]``), else None.
        effector_errors: skeletons: (N, k) float64 distance of each targeted joint to its target
            (``extras["effector_error_array"]``; ``error`` is the largest), else None.
        effectors: skeletons: the targeted joints' names, in the order of ``effector_errors``'
            columns; else ().
        joint_angles: arms: (N, m) joint values (``Solution.joint_angles``; radians, model units
            for prismatic joints), else None.
    """

    positions: np.ndarray
    iterations: np.ndarray
    error: np.ndarray
    status: np.ndarray
    reached: np.ndarray
    method: str = "fabrik"
    status_names: tuple = STATUSES
    frames: np.ndarray | None = None
    orientation_error: np.ndarray | None = None
    effector_errors: np.ndarray | None = None
    effectors: tuple = ()
    joint_angles: np.ndarray | None = None

    def statuses(self) -> np.ndarray:
        """The status of every target as a string array (``status_names[status]``; an answer on a
        device is copied to the host for it)."""
        return np.asarray(self.status_names)[_host(self.status)]

    def __len__(self) -> int:  # the number of targets, not the tuple's fields
        return self.positions.shape[0]

    def __repr__(self) -> str:
        if not isinstance(self.status, np.ndarray):  # on a device: no copy for a repr
            return (f"BatchSolution(method={self.method!r}, targets={self.positions.shape[0]}, on "
                    f"{getattr(self.positions, 'device', 'a device')})")
        counts = ", ".join(f"{name} {int(np.count_nonzero(self.status == k))}" for k, name in
                           enumerate(self.status_names))
        return f"BatchSolution(method={self.method!r}, targets={self.positions.shape[0]}, {counts})"


def solve_batch(model, targets, *, initial=None, root=None, tol: float = DEFAULT_TOL, max_iter: int | None = None,
                method: str = "fabrik", backend: str = "numba", layout: str | None = None, threads: int | None = None,
                device: str | None = None, progress: bool = False, effectors=None, precision: str = "float64",
                **options) -> BatchSolution:
    """Solve one model for many targets at once; every answer is ``fabrik.solve``'s for that target.

    A chain is described below; a ``fabrik.Skeleton`` (``fabrik.solvers.batch_skeleton``: targets
    (N, k, 3) for the joints ``effectors``, default its leaves, or ``{joint: (N, 3)}``) and a
    ``fabrik.Arm`` (``fabrik.solvers.batch_arm``: targets (N, 3), ``(points, rotations)`` or
    (N, 4, 4); ``initial`` (m,) or (N, m) joint values) take the same arguments otherwise
    (docs/batch.md).

    Args:
        model: a ``fabrik.Chain``; one with joint limits is solved with ``fabrik-constrained``
            (as ``fabrik.solve`` does), one target per thread. Or a skeleton or an arm (above).
        targets: (N, d) effector goals in the chain's units; or a pair (points (N, d), rotations)
            for oriented targets (N 3x3 matrices, e.g. ``fabrik.quat_xyzw(q)`` of N quaternions,
            or a scipy ``Rotation`` of N; solved with ``fabrik-constrained``). With
            ``backend="warp"`` a chain's targets (and ``initial``, ``root``) may be device
            arrays: Warp arrays or anything with ``__dlpack__`` (torch, JAX, CuPy); the answers
            are then device arrays of the same kind (``fabrik.solvers.batch_device``).
        initial: start pose, (n, d) for every target or (N, n, d) one per target; default the rest
            pose. Never written to.
        root: where the root must be, (d,) for every target or (N, d) one per target; default each
            start pose's root.
        tol, max_iter: as ``fabrik.solve`` (max_iter default: the method's cap).
        method: ``"fabrik"`` or ``"fabrik-constrained"``, or its ``Method`` (``BATCH_METHODS``; arms: every arm
            method).
        backend: ``"numba"`` (CPU threads) or ``"warp"`` (NVIDIA Warp; ``device`` ``"cpu"`` or
            ``"cuda"``, default Warp's preferred device; needs ``pip install warp-lang``).
            A skeleton without joint limits (method ``"fabrik"``; any ``rigid_sub_bases`` and
            ``swing_limbs``, the defaults included) runs on Warp's skeleton kernel, and FABRIK on an
            arm of the shape of ``fabrik.models.dhm_arm()`` on Warp's arm kernel, their targets,
            ``initial`` and ``root`` possibly device arrays (answers of the same kind); a skeleton
            with limits, ``reach_step`` or ``dls_start``, and other arms or arm methods, on the CPU
            with a ``HostFallbackWarning``.
        layout: the numba backend's arrangement for chains, one of ``LAYOUTS`` (all give the same
            answers; default ``"lockstep"``); refused with ``backend="warp"``, which has one
            arrangement, and for skeletons and arms.
        threads: numba threads to use (default: all of numba's; with Warp, for the targets it
            hands back to the CPU); the setting is restored after.
        progress: show a progress bar (batches larger than ``PROGRESS_PIECE`` run in pieces).
        effectors: a skeleton's targeted joints for an (N, k, 3) ``targets`` array.
        precision: ``"float64"`` (default) or ``"float32"`` (chains, skeletons without limits and
            S-R-S arms' FABRIK, on ``backend="warp"``).
        **options: the method's options (``fabrik-constrained``: ``orientation_tol``; skeletons:
            ``TrackingOptions``; arms: the arm method's, but ``time_budget`` and ``nearest``).

    Returns:
        A ``BatchSolution``; ``positions[k]``, ``iterations[k]``, ``error[k]`` and the status of
        target ``k`` equal ``fabrik.solve(model, targets[k], initial=..., root=...)``'s.

    Raises:
        ValueError: a model other than a chain, skeleton or arm, a method the batch does not run,
            bad shapes or numbers, unknown backend, layout, device, precision or options;
            ``layout`` with ``backend="warp"``; ``backend`` or ``layout`` with
            ``fabrik-constrained``. ``fabrik._validation.InsufficientMemoryError`` (a ValueError),
            before any work, for more targets than the memory available holds (``batch_bytes``).
    """
    method = registry.name_of(method)
    if precision not in ("float64", "float32"):
        raise ValueError(f"precision must be 'float64' or 'float32', got {precision!r}")
    if precision != "float64" and backend != "warp":
        raise ValueError("precision='float32' is for chains on backend='warp' (and skeletons there, without joint "
                         "limits, and FABRIK on an arm of the shape of fabrik.models.dhm_arm()); the numba kernels "
                         "solve in float64")
    if not isinstance(model, Chain):
        return _solve_other(model, targets, initial, root, tol, max_iter, method, backend, layout, threads, device,
                            progress, effectors, options, precision)
    if effectors is not None:
        raise ValueError("effectors names a skeleton's targeted joints; a chain has one effector, its last joint")
    rotations = None
    if isinstance(targets, tuple) and len(targets) == 2 and np.ndim(targets[0]) == 2:
        targets, rotations = targets
    chosen = registry.route(method, "chain", limited=bool(model.constraints), oriented=rotations is not None)
    if chosen.name not in BATCH_METHODS:
        raise ValueError(f"solve_batch supports methods {', '.join(BATCH_METHODS)} (FABRIK on a chain, with joint "
                         f"limits and oriented targets through fabrik-constrained), got {method!r}; use fabrik.solve "
                         "target by target for the others")
    constrained = chosen.limits
    opts = chosen.options("chain", options)
    if constrained and (backend != "numba" or layout not in (None, "lockstep")):
        raise ValueError("fabrik-constrained runs on backend 'numba', one target per thread: backend and layout "
                         "are for plain FABRIK")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if layout is not None and (not isinstance(layout, str) or layout not in LAYOUTS):
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if layout is not None and backend == "warp":
        raise ValueError(f"layout={layout!r} is for backend 'numba'; backend 'warp' has one arrangement, a Warp "
                         "thread per target (leave layout out)")
    if device is not None and backend != "warp":
        raise ValueError("device is a Warp option (backend='warp')")
    _check_threads(threads)
    tol = check_tol(tol)
    cap = registry.max_iter_or_default(chosen, "chain", None if max_iter is None else check_max_iter(max_iter))
    if backend == "warp":
        from fabrik.solvers.batch_device import is_device_array, solve_chain_on_device

        if precision == "float32" or any(is_device_array(v) for v in (targets, initial, root)):
            def host_solve(t, i, r):
                return solve_batch(model, t, initial=i, root=r, tol=tol, max_iter=max_iter, layout="per-thread",
                                   threads=threads, **options)

            return solve_chain_on_device(model, targets, initial, root, tol=tol, cap=cap,
                                         ceiling=chosen.chain.max_iter_ceiling, turn=opts.turn_start, device=device,
                                         precision=precision, progress=progress, host_solve=host_solve,
                                         solution=BatchSolution)
    dim = model._dim
    n = model.n_joints
    _check_batch_memory(targets, n, dim, constrained, rotations is not None,
                        initial is not None or (not constrained and opts.turn_start))
    targets3 = _lift(_finite(targets, "targets"), "targets", 2, dim)
    count = targets3.shape[0]
    if initial is None:
        initials = model._kernel_rest[None]
    else:
        arr = _finite(initial, "initial")
        if arr.ndim == 2:
            arr = arr[None]
        if arr.ndim != 3 or arr.shape[1:] != (n, dim) or arr.shape[0] not in (1, count):
            raise ValueError(f"initial must have shape ({n}, {dim}) or ({count}, {n}, {dim}) for {count} targets of "
                             f"this chain, got {np.shape(initial)}")
        initials = _lift(arr.reshape(-1, dim), "initial", 2, dim).reshape(arr.shape[0], n, 3)
    if root is None:
        roots = np.ascontiguousarray(initials[:, 0, :])
    else:
        arr = _finite(root, "root")
        if arr.ndim == 1:
            arr = arr[None]
        if arr.ndim != 2 or arr.shape[1] != dim or arr.shape[0] not in (1, count):
            raise ValueError(f"root must have shape ({dim},) or ({count}, {dim}) for {count} targets, got "
                             f"{np.shape(root)}")
        roots = _lift(arr, "root", 2, dim)
    if constrained:
        return _solve_constrained(model, targets3, rotations, initials, roots, tol, cap, chosen.chain.max_iter_ceiling,
                                  opts, threads, progress)
    if opts.turn_start:
        initials = _turned_starts(model, initials, targets3, roots, tol, cap, threads)
    out_p = np.empty((count, n, 3))
    out_it = np.empty(count, np.int64)
    out_err = np.empty(count)
    out_code = np.empty(count, np.int64)
    run = _numba_runner(layout or "lockstep", threads) if backend == "numba" else _warp_runner(device, threads)

    def launch(rows, starts, rows_cap, out):
        run(ChainBatch(_rows(initials, rows) if starts is None else starts, targets3[rows], _rows(roots, rows)),
            model._kernel_lengths, Stop(tol, 0.0, rows_cap), ChainBatchOut(*out))

    _in_slices(launch, [out_p, out_it, out_err, out_code], cap, chosen.chain.max_iter_ceiling, progress)
    positions = out_p if dim == 3 else np.ascontiguousarray(out_p[:, :, :2])
    status = out_code.astype(np.int8)
    return BatchSolution(positions, out_it, out_err, status, status == 0, "fabrik", STATUSES, None, None)


def _host(values) -> np.ndarray:
    """``values`` as a NumPy array (a device array through DLPack: Warp's ``numpy()`` copy)."""
    if isinstance(values, np.ndarray):
        return values
    from fabrik.solvers.batch_device import to_host

    return np.asarray(to_host(values))


def _solve_other(model, targets, initial, root, tol, max_iter, method, backend, layout, threads, device, progress,
                 effectors, options, precision="float64") -> BatchSolution:
    """``solve_batch`` for a skeleton or an arm (``fabrik.solvers.batch_skeleton``,
    ``fabrik.solvers.batch_arm``)."""
    from fabrik.model.arm import Arm
    from fabrik.model.skeleton import Skeleton

    if not isinstance(model, (Skeleton, Arm)):
        raise ValueError(f"solve_batch solves a fabrik.Chain, fabrik.Skeleton or fabrik.Arm, got "
                         f"{type(model).__name__}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if layout is not None:
        raise ValueError(f"layout={layout!r} is for chains; a skeleton or an arm batch runs one solve per numba "
                         "thread at a time (leave layout out)")
    if device is not None and backend != "warp":
        raise ValueError("device is a Warp option (backend='warp')")
    _check_threads(threads)
    if backend == "warp":
        from fabrik.solvers.batch_device import on_host

        reason = None
        if isinstance(model, Skeleton):
            from fabrik.solvers.batch_skeleton import device_blocker, skeleton_route

            chosen, opts = skeleton_route(model, method, options)
            reason = device_blocker(model, chosen, opts)
            if reason is None:
                return _skeleton_on_device(model, targets, effectors, initial, root, tol, max_iter, chosen, threads,
                                           device, precision, progress, options)
            if precision != "float64":
                raise ValueError(f"precision='float32' is for chains and skeletons without joint limits on "
                                 f"backend='warp'; this skeleton batch uses {reason}, solved on the CPU in float64 "
                                 "(method 'fabrik' without limits, reach_step or dls_start runs on the Warp kernel)")
        else:
            reason = _arm_device_blocker(model, method)
            if reason is None:
                return _arm_on_device(model, targets, effectors, initial, root, tol, max_iter, method, device,
                                      precision, progress, options)
            if precision != "float64":
                raise ValueError(f"precision='float32' is for arms on the Warp arm kernel (FABRIK on an arm of the "
                                 f"shape of fabrik.models.dhm_arm()); {reason}, solved on the CPU in float64")
        return on_host(lambda t, i, r, o: _solve_other(model, t, i, r, tol, max_iter, method, "numba", None, threads,
                                                     None, progress, effectors, o),
                       model, targets, initial, root, device, options, reason)
    if isinstance(model, Skeleton):
        from fabrik.solvers.batch_skeleton import solve_skeleton_batch

        return solve_skeleton_batch(model, targets, effectors=effectors, initial=initial, root=root, tol=tol,
                                    max_iter=max_iter, method=method, threads=threads, progress=progress,
                                    options=options, run_parallel=_parallel, in_slices=_in_slices,
                                    solution=BatchSolution)
    _check_arm_arguments(effectors, root)
    from fabrik.solvers.batch_arm import solve_arm_batch

    return solve_arm_batch(model, targets, initial=initial, tol=tol, max_iter=max_iter, method=method,
                           threads=threads, progress=progress, options=options, run_parallel=_parallel,
                           solution=BatchSolution)


def _skeleton_on_device(skeleton, targets, effectors, initial, root, tol, max_iter, chosen, threads, device,
                        precision, progress, options) -> BatchSolution:
    """A skeleton batch without limits on the Warp kernel (``fabrik.solvers.batch_device.solve_skeleton_on_device``),
    the rows it hands back solved by the numba batch."""
    from fabrik.solvers.batch_device import solve_skeleton_on_device

    tol = check_tol(tol)
    solver = chosen.skeleton
    cap = solver.max_iter if max_iter is None else check_max_iter(max_iter)

    def host_solve(t, i, r, names):
        return _solve_other(skeleton, t, i, r, tol, max_iter, chosen.name, "numba", None, threads, None, False,
                            names, options)

    opts = chosen.options("skeleton", options)
    return solve_skeleton_on_device(skeleton, targets, effectors, initial, root, tol=tol, cap=cap,
                                    ceiling=solver.max_iter_ceiling, device=device, precision=precision,
                                    progress=progress, host_solve=host_solve, solution=BatchSolution,
                                    rigid_sub_bases=opts.rigid_sub_bases, swing_limbs=opts.swing_limbs)


def _check_arm_arguments(effectors, root) -> None:
    """ValueError for the skeleton and chain arguments an arm batch does not take."""
    if effectors is not None:
        raise ValueError("effectors names a skeleton's targeted joints; an arm's effector is its tip")
    if root is not None:
        raise ValueError("an arm's base is fixed; root is not used (express the targets in the base frame)")


def _arm_device_blocker(arm, method) -> str | None:
    """None when the Warp arm kernel (``fabrik.kernels.batch_warp_arm``) solves an arm batch of
    ``method``: FABRIK on an arm of the shape of ``fabrik.models.dhm_arm`` (the closed-form
    ``batch_srs``); else what keeps it on the CPU, for ``HostFallbackWarning``."""
    from fabrik.solvers.arm import srs_shape

    name = registry.route(method, "arm").name
    if name != "fabrik":
        return f"this batch uses method {name!r}"
    if srs_shape(arm) is None:
        return "this arm is not a 7-joint S-R-S arm (the search of other arms' FABRIK runs on the CPU)"
    return None


def _arm_on_device(arm, targets, effectors, initial, root, tol, max_iter, method, device, precision, progress,
                   options) -> BatchSolution:
    """An S-R-S arm's FABRIK batch on the Warp arm kernel
    (``fabrik.solvers.batch_device.solve_arm_on_device``), after the numba path's checks of its
    arguments (``fabrik.solvers.batch_arm.solve_arm_batch``)."""
    from fabrik.solvers.arm import srs_shape
    from fabrik.solvers.batch_device import solve_arm_on_device

    _check_arm_arguments(effectors, root)
    chosen = registry.route(method, "arm")
    opts = chosen.options("arm", options)
    solver = chosen.arm
    tol = check_tol(tol)
    cap = solver.max_iter if max_iter is None else min(check_max_iter(max_iter), solver.max_iter_ceiling)
    return solve_arm_on_device(arm, srs_shape(arm), targets, initial, tol=tol, orientation_tol=opts.orientation_tol,
                               cap=cap, device=device, precision=precision, progress=progress, solution=BatchSolution)


def batch_bytes(count: int, n: int, dim: int = 3, *, constrained: bool = False, oriented: bool = False,
                starts: bool = False) -> int:
    """About how many bytes ``solve_batch`` allocates for ``count`` targets on a chain of ``n``
    joints in ``dim`` dimensions: its answer (positions, iterations, errors, statuses; with
    limits also the frames and orientation errors) and its working copies (the targets lifted to
    3D and checked; with ``starts``, a start pose per target; with ``oriented``, the rotations)."""
    per_target = 8 * (3 * n + 3 + 3 + 2 * dim) + 2
    if dim == 2:
        per_target += 8 * 2 * n  # the answer cut back to 2D
    if constrained:
        per_target += 8 * (9 * n + 1)
    if oriented:
        per_target += 8 * 9 * 2
    if starts:
        per_target += 8 * 3 * n * 2
    return count * per_target


def _check_batch_memory(targets, n: int, dim: int, constrained: bool, oriented: bool, starts: bool) -> None:
    """``InsufficientMemoryError`` before any work when the batch needs more memory than is
    available (``fabrik._validation.check_memory``). The count is read from the targets' shape
    (an array's without copying it; anything else is read as NumPy would)."""
    try:
        shape = np.shape(targets)
    except ValueError:  # ragged: the checks that follow name the problem
        return
    if len(shape) != 2:
        return
    count = int(shape[0])
    need = batch_bytes(count, n, dim, constrained=constrained, oriented=oriented, starts=starts)
    per_target = max(1, need // max(count, 1))
    check_memory(need, f"solve_batch of {count:,} targets on a chain of {n} joints",
                 lambda available: f"solve them in pieces of at most {max(1, available // (2 * per_target)):,} targets "
                                   "(half the memory available)")


def _turned_starts(model, initials, targets3, roots, tol, cap, threads):
    """The start poses after ``fabrik.solve``'s ``turn_start`` (one per target, (N, n, 3)), or
    ``initials`` as they are when they are one shared pose that is not bent enough to be turned
    (a straight rest pose)."""
    from fabrik.kernels import batch

    if initials.shape[0] == 1 and not batch.start_bent(initials[0], float(np.sum(model._kernel_lengths))):
        return initials
    return _parallel(threads, batch.turn_starts, (initials, model._kernel_lengths, targets3, roots, tol, cap))


def _solve_constrained(model, targets3, rotations, initials, roots, tol, cap, ceiling, opts, threads, progress):
    """``fabrik-constrained`` for every target (``fabrik.kernels.batch.batch_constrained``)."""
    from fabrik.kernels import batch
    from fabrik.kernels._cache_guard import announce_compile
    from fabrik.solvers.api import _target_rotation
    from fabrik.solvers.chain_limits import kernel_limits

    count, n, dim = targets3.shape[0], model.n_joints, model._dim
    oriented = rotations is not None
    if oriented:
        if hasattr(rotations, "as_matrix"):  # a scipy Rotation holding N rotations
            rotations = rotations.as_matrix()
        if len(rotations) != count:
            raise ValueError(f"oriented targets need one rotation per target: {count} points, {len(rotations)} "
                             "rotations")
        mats = np.ascontiguousarray(np.stack([_target_rotation(r, dim) for r in rotations]))
    else:
        mats = np.eye(3)[None]
    limits = kernel_limits(model)
    out_p = np.empty((count, n, 3))
    out_frames = np.empty((count, n, 3, 3))
    out_it = np.empty(count, np.int64)
    out_err = np.empty(count)
    out_oerr = np.empty(count)
    out_code = np.empty(count, np.int64)
    announce_compile(batch.batch_constrained)
    run = _with_threads(threads, batch.batch_constrained)

    def launch(rows, starts, rows_cap, out):
        run(LimitedBatch(_rows(initials, rows) if starts is None else starts, targets3[rows], _rows(roots, rows),
                         _rows(mats, rows), oriented),
            model._kernel_lengths, limits, Stop(tol, opts.orientation_tol, rows_cap), LimitedBatchOut(*out))

    _in_slices(launch, [out_p, out_it, out_err, out_code, out_frames, out_oerr], cap, ceiling, progress)
    positions = out_p if dim == 3 else np.ascontiguousarray(out_p[:, :, :2])
    status = out_code.astype(np.int8)
    return BatchSolution(positions, out_it, out_err, status, status == 0, "fabrik-constrained", STATUSES, out_frames,
                         out_oerr if oriented else None)


def _rows(values: np.ndarray, rows) -> np.ndarray:
    """The rows of a per-target array for targets ``rows`` (a slice or indices), or the array as it
    is when it holds one row for every target."""
    return values if values.shape[0] == 1 else values[rows]


def _in_slices(launch, out: list, cap: int, ceiling: int, progress: bool) -> None:
    """Solve every target as ``fabrik.solve`` does, into ``out`` ([positions, iterations, errors,
    status codes, and any other per-target outputs], one row per target): at most ``ceiling``
    iterations, run as kernel calls of at most ``registry.SLICE_ITERATIONS`` each, a target that
    ended a slice ``max_iterations`` going on from the pose it ended on (``api._in_slices``; a
    batch of caps within one slice is one call). ``launch(rows, starts, cap, out_rows)`` solves
    targets ``rows`` (a slice or indices) from ``starts`` ((k, n, 3), or None for the batch's own
    start poses) into ``out_rows``. The first slice runs in pieces of ``PROGRESS_PIECE`` targets
    when ``progress`` shows a bar."""
    count = out[0].shape[0]
    cap = min(cap, ceiling)
    first = min(cap, registry.SLICE_ITERATIONS)
    pieces = [(0, count)] if not progress or count <= PROGRESS_PIECE else [
        (s, min(count, s + PROGRESS_PIECE)) for s in range(0, count, PROGRESS_PIECE)]
    with progress_bar(progress, count, "solve_batch", "target") as bar:
        for s, e in pieces:
            launch(slice(s, e), None, first, [o[s:e] for o in out])
            if bar is not None:
                bar.update(e - s)
    if cap <= first:
        return
    positions, iterations, _, codes = out[:4]
    done, last = iterations.copy(), iterations.copy()
    while True:
        left = cap - done
        pending = np.flatnonzero((codes == MAX_ITERATIONS) & (left > 0) & (last > 0))
        if pending.size == 0:
            break
        for rest in np.unique(left[pending]):
            rows = pending[left[pending] == rest]
            part = [np.empty((rows.size,) + o.shape[1:], o.dtype) for o in out]
            launch(rows, np.ascontiguousarray(positions[rows]), int(min(rest, registry.SLICE_ITERATIONS)), part)
            for o, values in zip(out, part):
                o[rows] = values
            last[rows] = part[1]
            done[rows] += part[1]
    iterations[:] = done


def _with_threads(threads, kernel):
    """``kernel(*args)`` as a function of ``args``, run on ``threads`` numba threads (``_parallel``;
    ``threads`` checked by ``solve_batch``)."""
    return lambda *args: _parallel(threads, kernel, args)


def _check_threads(threads) -> None:
    import numba

    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, (int, np.integer))
                                or not 1 <= threads <= numba.config.NUMBA_NUM_THREADS):
        raise ValueError(f"threads must be a whole number from 1 to {numba.config.NUMBA_NUM_THREADS}, got "
                         f"{threads!r}")


#: numba's ``workqueue`` threading layer (its fallback where neither TBB nor OpenMP is installed)
#: aborts the process when two Python threads launch parallel kernels at once; under it the batch
#: kernels take this lock, one batch at a time (each uses every numba thread anyway).
_WORKQUEUE_LAUNCH = threading.Lock()


def _parallel(threads, call, args):
    """``call(*args)`` on ``threads`` numba threads (None: all of them), numba's setting restored
    after (it is per Python thread); one launch at a time under the workqueue threading layer.
    Returns what ``call`` returns."""
    import numba

    before = numba.get_num_threads()  # (starts numba's threading layer, so that its name is known)
    if threads is not None:
        numba.set_num_threads(int(threads))
    try:
        if numba.threading_layer() == "workqueue":
            with _WORKQUEUE_LAUNCH:
                return call(*args)
        return call(*args)
    finally:
        numba.set_num_threads(before)


def _finite(value, name: str) -> np.ndarray:
    return check_coordinates(real_numbers(value, name), name)


def _lift(arr: np.ndarray, name: str, ndim: int, dim: int) -> np.ndarray:
    """(m, dim) -> C-contiguous (m, 3) float64, z = 0 for 2D; ValueError for another shape."""
    if arr.ndim != ndim or arr.shape[-1] != dim:
        raise ValueError(f"{name} must have shape (N, {dim}) to match the {dim}D chain, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: give at least one target")
    out = np.zeros((arr.shape[0], 3))
    out[:, :dim] = arr
    return out


def _numba_runner(layout: str, threads: int | None):
    import numba

    from fabrik.kernels import batch
    from fabrik.kernels._cache_guard import announce_compile

    kernel = {"lockstep": batch.batch_lockstep, "per-thread": batch.batch_per_thread,
              "baseline": batch.batch_baseline}[layout]
    announce_compile(kernel)

    def launch(*args):  # (a ChainBatch, the bone lengths, a Stop, a ChainBatchOut)
        count, workers = args[0].targets.shape[0], numba.get_num_threads()
        if layout == "lockstep" and count >= batch.LANES * workers:
            # small batches in small chunks, so that every thread gets work; never fewer
            # targets than lanes, which would ride through every stage idle
            chunk = max(batch.LANES, min(CHUNK, math.ceil(count / (4 * workers))))
            kernel(*args, chunk)
        elif layout == "lockstep":
            batch.batch_per_thread(*args)
        else:
            kernel(*args)

    return lambda *args: _parallel(threads, launch, args)


def _warp_runner(device, threads: int | None):
    from fabrik.kernels.batch_warp import run_warp


    def run(*args):  # (Warp hands some targets back to a parallel numba kernel: ``_parallel``)
        _parallel(threads, lambda *a: run_warp(*a, device=device), args)

    return run


__all__ = ["solve_batch", "BatchSolution", "LAYOUTS", "BACKENDS", "batch_bytes"]
