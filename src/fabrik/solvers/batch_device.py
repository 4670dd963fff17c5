"""``solve_batch(..., backend="warp")`` with arrays that live on a device (docs/batch.md, "Device
arrays").

Chains: targets (and start poses and roots) given as Warp arrays, or as any array with
``__dlpack__`` (torch, JAX, CuPy), stay where they are: ``wp.from_dlpack`` views them without a
copy, one Warp thread per target solves it (``fabrik.kernels.batch_warp``, float64 or float32),
and the answers are Warp arrays on the same device, handed back as the input's kind (a torch
tensor for a torch input, through DLPack: no copy). What crosses to the host: one integer (how
many targets the device handed back: out of reach, stalled, ...), then those targets' rows, which
the CPU solves (``fabrik.solvers.batch``'s numba path) and writes back; and one integer per input
array for the check that every value is finite. Host (NumPy) targets with ``precision="float32"``
run the same way and come back as NumPy arrays.

Skeletons without joint limits (method ``"fabrik"``, any ``rigid_sub_bases`` and ``swing_limbs``, the
defaults included; ``solve_skeleton_on_device``) run the same way on the Warp skeleton kernel
(``fabrik.kernels.batch_warp_tree``, float64 or float32): targets (N, k, 3) or ``{joint: (N, 3)}``
of device arrays, ``initial`` and ``root`` too, stay on the device; the rows the kernel hands back
cross to the host and are solved by the numba skeleton batch; answers (effector errors included)
come back as the targets' kind. Host (NumPy) inputs work too and get NumPy answers.

Arms: FABRIK on an arm of the shape of ``fabrik.models.dhm_arm`` (the DHM study's closed form,
``solve_arm_on_device``) runs on the Warp arm kernel (``fabrik.kernels.batch_warp_arm``, float64 or
float32): targets (N, 3), (points, rotations) or (N, 4, 4) and ``initial`` as device arrays stay on
the device; every branch runs there, so no row is handed back (only the rows of device rotations
that are not rotations to 1e-12 cross, to be read as ``fabrik.model.pose`` reads them); answers as
the targets' kind, NumPy for NumPy. Other arms and arm methods (``fabrik-revolute``, ``ccd``,
``jacobian-dls``: ``fabrik.kernels.arm_methods`` is not ported), and skeletons with joint limits
(``fabrik-constrained``), ``reach_step`` or ``dls_start``, are solved with ``backend="warp"`` on
the CPU by the numba batch, device inputs copied to the host and the answers copied back to the
inputs' device, with a ``HostFallbackWarning`` saying so and which method, arm or options keep the
batch off the device (``on_host``).
"""

from __future__ import annotations

import warnings
from typing import Mapping

import numpy as np

from fabrik._validation import MAX_COORDINATE


class HostFallbackWarning(RuntimeWarning):
    """``solve_batch(backend="warp")`` solved a skeleton or an arm on the CPU (skeletons with joint
    limits, ``reach_step`` or ``dls_start``, ``solve_skeleton_on_device``; arms other than S-R-S
    FABRIK, ``solve_arm_on_device``); device arrays were copied to the host and back."""


def is_device_array(value) -> bool:
    """Whether ``value`` is an array ``solve_batch``'s Warp path takes as it is: a Warp array, or
    anything but a NumPy array that has ``__dlpack__`` (torch, JAX, CuPy arrays)."""
    if value is None or isinstance(value, (np.ndarray, list, tuple, dict, float, int)):
        return False
    return type(value).__module__.split(".")[0] == "warp" or hasattr(value, "__dlpack__")


def _converter(value):
    """A function taking a Warp array to the kind of ``value`` (a device array) without a copy:
    torch, JAX and CuPy through their ``from_dlpack``; anything else gets the Warp array."""
    root = type(value).__module__.split(".")[0]
    if root == "torch":
        import torch

        return torch.from_dlpack
    if root in ("jax", "jaxlib"):
        import jax.dlpack

        return jax.dlpack.from_dlpack
    if root == "cupy":
        import cupy

        return cupy.from_dlpack
    return lambda w: w


def _to_warp(wp, value, name: str, real, device=None):
    """``value`` (a device array) as a Warp array, viewed through DLPack (no copy); ValueError for
    another dtype than ``real`` or another device than ``device``."""
    arr = value if isinstance(value, wp.array) else wp.from_dlpack(value)
    if arr.dtype is not real:
        want = "float64" if real is wp.float64 else "float32"
        raise ValueError(f"{name} must hold {want} values on the device for precision={want!r}, got "
                         f"{wp.types.type_repr(arr.dtype)}; convert it, or pass precision='float32' for float32 arrays")
    if device is not None and str(arr.device) != str(device):
        raise ValueError(f"{name} is on device {arr.device}, the targets on {device}: give every array on one device")
    return arr


def _flat(wp, arr):
    return arr.flatten() if arr.is_contiguous else wp.clone(arr).flatten()


def _place(wp, value, name, shapes, real, dtype, dev, checks):
    """A device array for ``value`` (a device or a host array) of one of ``shapes``, as (rows,
    ...): a value of ``shapes[0]`` (one for every row) gets a leading axis of 1. Device values are
    appended to ``checks`` as (name, array) for ``_check_finite``; host values are checked here."""
    from fabrik.solvers.batch import _finite

    if is_device_array(value):
        arr = _to_warp(wp, value, name, real, dev)
        checks.append((name, arr))
    else:
        host = _finite(value, name)
        arr = None
    shape = tuple(arr.shape if arr is not None else host.shape)
    if shape not in shapes:
        raise ValueError(f"{name} must have shape {' or '.join(str(s) for s in shapes)}, got {shape}")
    if arr is None:
        arr = wp.array(np.ascontiguousarray(host, dtype=dtype), dtype=real, device=dev)
    if len(shape) == len(shapes[0]):  # one for every target
        arr = arr.reshape((1,) + shape) if arr.is_contiguous else wp.clone(arr).reshape((1,) + shape)
    return arr


def _check_finite(wp, k, checks, real, dev) -> None:
    """ValueError naming the first of ``checks`` ((name, Warp array) pairs) holding a NaN, an inf
    or a coordinate not below ``MAX_COORDINATE``: one integer per array crosses to the host."""
    flag = wp.zeros(1, dtype=wp.int32, device=dev)
    for name, arr in checks:
        wp.launch(k.bad_values, dim=arr.size, inputs=[_flat(wp, arr), MAX_COORDINATE if real is wp.float64 else 3e38,
                                                       flag], device=dev)
        if int(flag.numpy()[0]):
            raise ValueError(f"{name} contains a non-finite value (NaN or inf) or a coordinate not below "
                             f"{MAX_COORDINATE:g}")


def _gather(wp, k, arr, rows, handed: int, width: int, real, dev) -> np.ndarray:
    """The rows ``rows`` (a device int32 array of ``handed`` row indices) of ``arr`` ((1 or N, ...),
    ``width`` values a row) as a float64 host array of (handed, width) rows, gathered on the device
    so that only those rows cross; an array of one row (shared by every target) as that row."""
    if arr.shape[0] == 1:
        return arr.numpy()[0].astype(np.float64)
    flat = arr if arr.is_contiguous else wp.clone(arr)
    out = wp.empty((handed, width), dtype=real, device=dev)
    wp.launch(k.gather_rows, dim=(handed, width), inputs=[flat.reshape((flat.shape[0], width)), rows, out],
              device=dev)
    return out.numpy().astype(np.float64)


def _row_outputs(wp, count: int, n: int, real, dev):
    """The answers a Warp kernel writes, one row per solve, on device ``dev``: positions (count, n,
    3), iterations, largest errors, status codes, reached flags, and the count and list of the rows
    it hands back to the CPU."""
    return (wp.empty((count, n, 3), dtype=real, device=dev), wp.zeros(count, dtype=wp.int32, device=dev),
            wp.zeros(count, dtype=real, device=dev), wp.zeros(count, dtype=wp.int8, device=dev),
            wp.zeros(count, dtype=wp.bool, device=dev), wp.zeros(1, dtype=wp.int32, device=dev),
            wp.empty(count, dtype=wp.int32, device=dev))


def _scatter_answers(wp, k, rows, sub, dtype, real, dev, outputs) -> None:
    """The CPU's answers ``sub`` (a ``BatchSolution`` of the handed-back rows) written into the
    device answers ``outputs`` (positions, iterations, errors, codes, reached) at ``rows``."""
    wp.launch(k.scatter_answers, dim=rows.shape[0], device=dev,
              inputs=[rows, wp.array(sub.positions.astype(dtype), dtype=real, device=dev),
                      wp.array(sub.iterations.astype(np.int32), dtype=wp.int32, device=dev),
                      wp.array(sub.error.astype(dtype), dtype=real, device=dev),
                      wp.array(sub.status.astype(np.int8), dtype=wp.int8, device=dev)],
              outputs=outputs)


def solve_chain_on_device(model, targets, initial, root, *, tol: float, cap: int, ceiling: int, turn: bool, device,
                          precision: str, progress: bool, host_solve, solution):
    """Plain chain FABRIK for every target with Warp (module docstring). ``cap`` the iteration
    cap, ``ceiling`` the method's ceiling, ``turn`` the ``turn_start`` option; ``host_solve(targets,
    initial, root)`` solves host rows as ``solve_batch`` does on numba (a ``BatchSolution``);
    ``solution`` the ``BatchSolution`` type."""
    from fabrik._progress import progress_bar
    from fabrik.kernels.batch_warp import WARP_MAX_ITER, get_device, kernels, scalars
    from fabrik.solvers.batch import _finite
    from fabrik.solvers.registry import SLICE_ITERATIONS
    from fabrik.solvers.result import STATUSES

    wp, k = kernels(precision)
    real, dtype = k.real, k.dtype
    n = model.n_joints
    if model._dim != 3:
        raise ValueError("the Warp device path solves 3D chains; solve a 2D chain's batch with NumPy arrays")
    on_device = is_device_array(targets)
    if on_device:
        t = _to_warp(wp, targets, "targets", real)
        dev = t.device
        if device is not None and str(get_device(wp, device)) != str(dev):
            raise ValueError(f"device={device!r}, but the targets are on {dev}")
        checks = [("targets", t)]
    else:
        host = _finite(targets, "targets")
        dev = get_device(wp, device)
        checks = []
        if host.ndim != 2 or host.shape[1] != 3:
            raise ValueError(f"targets must have shape (N, 3) to match the 3D chain, got shape {host.shape}")
        t = wp.array(np.ascontiguousarray(host, dtype=dtype), dtype=real, device=dev)
    if t.ndim != 2 or t.shape[1] != 3 or t.shape[0] < 1:
        raise ValueError(f"targets must have shape (N, 3) with N >= 1 to match the 3D chain, got shape {t.shape}")
    count = t.shape[0]

    def place(value, name, shapes):
        return _place(wp, value, name, shapes, real, dtype, dev, checks)

    if initial is None:
        starts = wp.array(model._kernel_rest[None].astype(dtype), dtype=real, device=dev)
    else:
        starts = place(initial, "initial", [(n, 3), (count, n, 3)])
    if root is None:
        roots, root_step = wp.zeros((1, 3), dtype=real, device=dev), -1
    else:
        roots = place(root, "root", [(3,), (count, 3)])
        root_step = 0 if roots.shape[0] == 1 else 1
    _check_finite(wp, k, checks, real, dev)
    cap = min(cap, ceiling)
    sliced = cap > SLICE_ITERATIONS
    lengths = model._kernel_lengths
    total, eps, stol, near = scalars(lengths, tol)
    p, it, err, code, reached, back_count, back = _row_outputs(wp, count, n, real, dev)
    with progress_bar(progress, count, "solve_batch", "target") as bar:
        wp.launch(k.fabrik_lanes, dim=count, device=dev,
                  inputs=[starts, 0 if starts.shape[0] == 1 else 1, wp.array(lengths.astype(dtype), dtype=real,
                                                                             device=dev),
                          t, roots, root_step, float(tol), int(min(SLICE_ITERATIONS if sliced else cap, WARP_MAX_ITER)),
                          total, eps, stol, int(bool(turn)), near, int(sliced)],
                  outputs=[p, it, err, code, reached, back_count, back])
        handed = int(back_count.numpy()[0])
        if handed:
            rows = back[:handed]

            def gather(arr, width):
                return _gather(wp, k, arr, rows, handed, width, real, dev)

            sub = host_solve(gather(t, 3), None if initial is None else gather(starts, 3 * n).reshape(-1, n, 3),
                             None if root is None else gather(roots, 3))
            _scatter_answers(wp, k, rows, sub, dtype, real, dev, [p, it, err, code, reached])
        if bar is not None:
            bar.update(count)
    out = _converter(targets) if on_device else (lambda w: w.numpy())
    return solution(out(p), out(it), out(err), out(code), out(reached), "fabrik", STATUSES)


def solve_skeleton_on_device(skeleton, targets, effectors, initial, root, *, tol: float, cap: int, ceiling: int,
                             device, precision: str, progress: bool, host_solve, solution, rigid_sub_bases=False,
                             swing_limbs: bool = False):
    """Skeleton FABRIK without limits (``rigid_sub_bases`` and ``swing_limbs`` as ``fabrik.solve``
    takes them: held rigid groups fitted, limbs swung) for every row of targets with Warp
    (``fabrik.kernels.batch_warp_tree``; module docstring).
    ``targets``: (N, k, 3) for the joints ``effectors`` (default the leaves) or ``{joint: (N, 3)}``,
    device or host arrays; ``cap`` the iteration cap, ``ceiling`` the method's ceiling;
    ``host_solve(targets (h, k, 3), initial, root, names)`` solves host rows as ``solve_batch``
    does on numba (a ``BatchSolution``); ``solution`` the ``BatchSolution`` type. Host inputs get
    host (NumPy) answers, iterations int64 as on numba; device inputs answers of their kind."""
    from fabrik._progress import progress_bar
    from fabrik.kernels.batch_warp import WARP_MAX_ITER, get_device, kernels
    from fabrik.kernels.batch_warp_tree import kernels as tree_kernels
    from fabrik.kernels.batch_warp_tree import held_tables, scratch_shapes, tree_scalars, tree_tables
    from fabrik.model.rig import rig
    from fabrik.solvers.batch_skeleton import (_check_root_targets, _joint_list, check_goal_rows,
                                               effector_targets, per_solve)
    from fabrik.solvers.registry import SLICE_ITERATIONS
    from fabrik.solvers.result import STATUSES
    from fabrik.solvers.skeleton_inputs import target_arrays

    wp, k = kernels(precision)
    _, kt = tree_kernels(precision)
    real, dtype = k.real, k.dtype
    arrays = rig(skeleton)
    n = arrays.parents.shape[0]
    checks: list = []
    mapping = isinstance(targets, Mapping)
    first = _first_device_array(targets)
    if first is None:  # host targets: the numba path's checks, then one copy to the device
        idx, names, goals = effector_targets(skeleton, targets, effectors, arrays)
        dev = get_device(wp, device)
        t = wp.array(np.ascontiguousarray(goals, dtype=dtype), dtype=real, device=dev)
    else:
        dev = _to_warp(wp, first, "targets", real).device
        if device is not None and str(get_device(wp, device)) != str(dev):
            raise ValueError(f"device={device!r}, but the targets are on {dev}")
        if mapping:
            if effectors is not None:
                raise ValueError("effectors names the joints of an (N, k, 3) targets array; a mapping {joint: (N, 3)} "
                                 "names its own")
            keys = list(targets)
            paths = []
            for key, value in targets.items():
                if not is_device_array(value):
                    raise ValueError(f"targets[{key!r}] is a host array, other targets device arrays: give them on "
                                     "one device")
                path = _to_warp(wp, value, f"targets[{key!r}]", real, dev)
                check_goal_rows(key, tuple(path.shape), paths[0].shape[0] if paths else None)
                checks.append((f"targets[{key!r}]", path))
                paths.append(path)
            t = wp.empty((paths[0].shape[0], len(paths), 3), dtype=real, device=dev)
            for col, path in enumerate(paths):
                wp.launch(kt.put_column, dim=(path.shape[0], 3), inputs=[path, col, t], device=dev)
        else:
            keys = list(skeleton.leaves) if effectors is None else _joint_list(effectors)
            t = _to_warp(wp, targets, "targets", real, dev)
            if t.ndim != 3 or tuple(t.shape[1:]) != (len(keys), 3) or t.shape[0] < 1:
                which = "the skeleton's leaves (effectors=None)" if effectors is None else "effectors"
                raise ValueError(f"targets must have shape (N, {len(keys)}, 3), one row of goals per solve for the "
                                 f"{len(keys)} joints of {which}, or be a mapping {{joint: (N, 3)}}; got {t.shape}")
            if not t.is_contiguous:
                t = wp.clone(t)
            checks.append(("targets", t))
        idx, _, names = target_arrays(skeleton, {key: np.zeros(3) for key in keys}, arrays)
        if len(set(idx.tolist())) != len(keys):
            raise ValueError(f"targets must name each joint once, got {keys!r}")
    count, kk = t.shape[0], idx.shape[0]
    host_in = first is None and not any(is_device_array(v) for v in (initial, root))

    def place(value, name, shape):
        if is_device_array(value):
            return _place(wp, value, name, [shape, (count,) + shape], real, dtype, dev, checks)
        host = per_solve(value, name, shape, count)  # the numba path's checks and messages
        return wp.array(host.astype(dtype), dtype=real, device=dev)

    starts = wp.array(arrays.rest[None].astype(dtype), dtype=real, device=dev) if initial is None else \
        place(initial, "initial", (n, 3))
    if root is None:
        roots, root_step = wp.zeros((1, 3), dtype=real, device=dev), -1
    else:
        roots = place(root, "root", (3,))
        root_step = 0 if roots.shape[0] == 1 else 1
        if host_in:
            _check_root_targets(skeleton, arrays, idx, goals, roots.numpy().astype(np.float64))
    _check_finite(wp, k, checks, real, dev)
    cap = min(cap, ceiling)
    sliced = cap > SLICE_ITERATIONS
    slot, active, active_list = tree_tables(arrays.parents, idx)
    scale, eps, stol = tree_scalars(arrays.lengths, tol)
    groups = arrays.groups(rigid_sub_bases)
    held = held_tables(groups, arrays.limbs(swing_limbs, rigid_sub_bases), arrays.tree, active)

    def on(values, kind=None):
        return wp.array(np.ascontiguousarray(values, dtype=kind or dtype), dtype=wp.int32 if kind else real,
                        device=dev)

    scratch = [wp.empty(shape, dtype=real if kind == "real" else wp.int32, device=dev)
               for shape, kind in scratch_shapes(count, n, kk, groups.group_start.shape[0] - 1)]
    p, it, err, code, reached, back_count, back = _row_outputs(wp, count, n, real, dev)
    errors = wp.empty((count, kk), dtype=real, device=dev)
    with progress_bar(progress, count, "solve_batch", "solve") as bar:
        wp.launch(kt.fabrik_tree_rows, dim=count, device=dev,
                  inputs=[t, starts, 0 if starts.shape[0] == 1 else 1, roots, root_step,
                          on(arrays.parents, np.int32), on(arrays.lengths), on(arrays.rest_dirs), on(arrays.reach),
                          on(idx, np.int32), on(slot, np.int32), on(active, np.int32), on(active_list, np.int32)]
                  + [on(table, None if table.dtype == np.float64 else np.int32) for table in held]
                  + [float(tol), int(min(SLICE_ITERATIONS if sliced else cap, WARP_MAX_ITER)), scale, eps, stol,
                     int(sliced)] + scratch,
                  outputs=[p, errors, it, err, code, reached, back_count, back])
        handed = int(back_count.numpy()[0])
        if handed:
            rows = back[:handed]

            def gather(arr, width):
                return _gather(wp, k, arr, rows, handed, width, real, dev)

            sub = host_solve(gather(t, 3 * kk).reshape(-1, kk, 3),
                             None if initial is None else gather(starts, 3 * n).reshape(-1, n, 3),
                             None if root is None else gather(roots, 3), list(names))
            _scatter_answers(wp, k, rows, sub, dtype, real, dev, [p, it, err, code, reached])
            wp.launch(kt.scatter_rows, dim=(handed, kk), device=dev,
                      inputs=[rows, wp.array(sub.effector_errors.astype(dtype), dtype=real, device=dev), errors])
        if bar is not None:
            bar.update(count)
    if first is None:
        return solution(p.numpy(), it.numpy().astype(np.int64), err.numpy(), code.numpy(), reached.numpy(), "fabrik",
                        STATUSES, None, None, errors.numpy(), tuple(names))
    out = _converter(first)
    return solution(out(p), out(it), out(err), out(code), out(reached), "fabrik", STATUSES, None, None, out(errors),
                    tuple(names))


def solve_arm_on_device(arm, shape, targets, initial, *, tol: float, orientation_tol: float, cap: int, device,
                        precision: str, progress: bool, solution):
    """FABRIK on a 7-joint S-R-S arm (``shape``: its ``fabrik.solvers.arm.ArmShape``) for every
    target with Warp (``fabrik.kernels.batch_warp_arm``: ``srs_start``, then ``srs_finish``, one
    thread per target; every branch runs on the device, none is handed back). ``targets``: (N, 3)
    points, a pair (points (N, 3), rotations (N, 3, 3)) or (N, 4, 4) transforms, device or host
    arrays (``_arm_targets``); ``initial`` (7,) or (N, 7) start angles (radians), default the
    arm's rest; ``tol`` (model units), ``orientation_tol`` (radians) and ``cap`` the iteration cap
    as ``fabrik.solvers.batch_arm.solve_arm_batch`` reads them; ``solution`` the
    ``BatchSolution`` type. Host targets get NumPy answers (iterations int64, as on numba), device
    targets answers of their kind on their device."""
    from fabrik._progress import progress_bar
    from fabrik.kernels.batch_warp import WARP_MAX_ITER, kernels
    from fabrik.kernels.batch_warp_arm import kernels as arm_kernels
    from fabrik.solvers.batch_arm import arm_starts
    from fabrik.solvers.result import STATUSES

    wp, k = kernels(precision)
    _, ka = arm_kernels(precision)
    real, dtype = k.real, k.dtype
    if cap > WARP_MAX_ITER:  # (no arm method's ceiling comes near)
        raise ValueError(f"max_iter: the Warp arm kernel counts iterations in 32-bit integers, at most {WARP_MAX_ITER}")
    first = _first_device_array(targets)
    points, rotations, dev, checks = _arm_targets(wp, k, ka, targets, first, device, real, dtype)
    count = points.shape[0]
    if initial is None:
        starts = wp.array(shape.rest[None].astype(dtype), dtype=real, device=dev)
    elif is_device_array(initial):
        starts = _place(wp, initial, "initial", [(7,), (count, 7)], real, dtype, dev, checks)
    else:  # the numba path's checks and messages
        starts = wp.array(arm_starts(initial, 7, count).astype(dtype), dtype=real, device=dev)
    _check_finite(wp, k, checks, real, dev)
    oriented = rotations is not None
    if not oriented:  # (read by no thread: a position target's rotation)
        rotations = wp.array(np.eye(3)[None].astype(dtype), dtype=real, device=dev)
    p, it, err, code, reached, _, _ = _row_outputs(wp, count, 8, real, dev)
    q = wp.empty((count, 7), dtype=real, device=dev)
    frames = wp.empty((count, 8, 3, 3), dtype=real, device=dev)
    oerr = wp.empty(count, dtype=real, device=dev)
    start = wp.empty((starts.shape[0], 25), dtype=real, device=dev)
    pack = wp.array(shape.pack.astype(dtype), dtype=real, device=dev)
    per_row = int(starts.shape[0] > 1)
    with progress_bar(progress, count, "solve_batch", "target") as bar:
        # the starts first (one shared start computed once, as batch_srs does), the answers' rows as scratch
        wp.launch(ka.srs_starts, dim=starts.shape[0], device=dev,
                  inputs=[pack, starts, int(oriented), p, frames, start])
        wp.launch(ka.srs_rows, dim=count, device=dev,
                  inputs=[pack, start, per_row, starts, per_row, points, rotations, int(rotations.shape[0] > 1),
                          int(oriented), float(tol), float(orientation_tol), int(cap)],
                  outputs=[q, p, frames, it, err, oerr, code, reached])
        if bar is not None:
            bar.update(count)
    if first is None:  # host targets (whatever ``initial``): host answers, as for chains and skeletons
        return solution(p.numpy(), it.numpy().astype(np.int64), err.numpy(), code.numpy(), reached.numpy(), "fabrik",
                        STATUSES, frames.numpy(), oerr.numpy() if oriented else None, None, (), q.numpy())
    out = _converter(first)
    return solution(out(p), out(it), out(err), out(code), out(reached), "fabrik", STATUSES, out(frames),
                    out(oerr) if oriented else None, None, (), out(q))


def _arm_targets(wp, k, ka, targets, first, device, real, dtype):
    """(points (N, 3), rotations (N, 3, 3) or None, the device, the (name, array) pairs
    ``_check_finite`` still has to check) of an arm batch's targets on the device: (N, 3) points,
    a pair (points, rotations) or (N, 4, 4) transforms, as ``fabrik.solvers.batch_arm.arm_targets``
    reads them. Host targets (``first`` None: no device array among them) go through that
    function and are copied over; device ones stay where they are (``_device_rotations``)."""
    from fabrik.kernels.batch_warp import get_device
    from fabrik.solvers.batch_arm import _points, arm_targets
    from fabrik.model.pose import target_rotations

    def upload(host):
        return wp.array(np.ascontiguousarray(host, dtype=dtype), dtype=real, device=dev)

    if first is None:
        points, rotations = arm_targets(targets)
        dev = get_device(wp, device)
        return upload(points), None if rotations is None else upload(rotations), dev, []
    dev = _to_warp(wp, first, "targets", real).device
    if device is not None and str(get_device(wp, device)) != str(dev):
        raise ValueError(f"device={device!r}, but the targets are on {dev}")
    checks: list = []
    pair = isinstance(targets, tuple) and len(targets) == 2
    value = targets[0] if pair else targets
    if is_device_array(value):
        raw = _to_warp(wp, value, "targets", real, dev)
    else:
        raw = upload(_points(value))  # (host points beside device rotations)
    if not pair and raw.ndim == 3 and tuple(raw.shape[1:]) == (4, 4) and raw.shape[0] >= 1:
        points, rotations = _device_rotations(wp, k, ka, raw, "targets", real, dtype, dev)
        checks.append(("targets", points))
        return points, rotations, dev, checks
    if raw.ndim != 2 or raw.shape[1] != 3 or raw.shape[0] < 1:
        raise ValueError(f"an arm's targets must be (N, 3) points, a pair ((N, 3) points, (N, 3, 3) rotations) or "
                         f"(N, 4, 4) transforms, with N >= 1; got shape {tuple(raw.shape)}")
    if is_device_array(value):
        checks.append(("targets", raw))
    if not pair:
        return raw, None, dev, checks
    count = raw.shape[0]
    if not is_device_array(targets[1]):
        return raw, upload(target_rotations(targets[1], count, 3, "rotations")), dev, checks
    mats = _to_warp(wp, targets[1], "rotations", real, dev)
    if tuple(mats.shape) != (count, 3, 3):
        raise ValueError(f"rotations must have shape ({count}, 3, 3), one rotation matrix per target, got "
                         f"{tuple(mats.shape)}")
    _, rotations = _device_rotations(wp, k, ka, mats, "rotations", real, dtype, dev)
    return raw, rotations, dev, checks


def _device_rotations(wp, k, ka, poses, name, real, dtype, dev):
    """(points (N, 3) or None, rotations (N, 3, 3)) of device ``poses``: (N, 3, 3) rotations or
    (N, 4, 4) transforms (then the points too), as ``fabrik.model.pose.target_rotations`` and
    ``split_transforms`` read them: rows that are rotations (rigid transforms) to 1e-12 (1e-6 in
    float32, which rounds at 1e-7) are taken as they are, tested on the device; only the other
    rows cross to the host, to be made what ``target_rotation`` (``split_transform``) makes of
    them (the nearest rotation), or to raise its ValueError naming the row. The caller's array is
    never written."""
    from fabrik.model.pose import split_transform, target_rotation

    count = poses.shape[0]
    transforms = poses.shape[1] == 4
    bad_count = wp.zeros(1, dtype=wp.int32, device=dev)
    bad = wp.empty(count, dtype=wp.int32, device=dev)
    limit = 1e-12 if real is wp.float64 else 1e-6
    wp.launch(ka.pose_defects, dim=count, inputs=[poses, limit], outputs=[bad_count, bad], device=dev)
    points, mats = None, poses
    if transforms:
        points = wp.empty((count, 3), dtype=real, device=dev)
        mats = wp.empty((count, 3, 3), dtype=real, device=dev)
        wp.launch(ka.split_poses, dim=(count, 3), inputs=[poses], outputs=[points, mats], device=dev)
    handed = int(bad_count.numpy()[0])
    if not handed:
        return points, mats
    rows = bad[:handed]
    width = 16 if transforms else 9
    raw = _gather(wp, k, poses, rows, handed, width, real, dev).reshape(handed, width)
    fixed_points, fixed_mats = np.empty((handed, 3)), np.empty((handed, 9))
    for j, row in enumerate(rows.numpy().tolist()):
        if transforms:
            fixed_points[j], rotation = split_transform(raw[j].reshape(4, 4), 3, f"{name}[{row}]")
        else:
            rotation = target_rotation(raw[j].reshape(3, 3), 3, f"{name}[{row}]")
        fixed_mats[j] = rotation.reshape(-1)
    if not transforms:
        mats = wp.clone(mats)  # (the caller's array)
    pairs = [(fixed_mats, mats.reshape((count, 9)))] + ([(fixed_points, points)] if transforms else [])
    for fixed, dst in pairs:
        wp.launch(ka.scatter_rows, dim=fixed.shape, device=dev,
                  inputs=[rows, wp.array(fixed.astype(dtype), dtype=real, device=dev), dst])
    return points, mats


def to_host(value):
    """A device array (or a mapping or tuple of them) copied to NumPy; anything else as it is."""
    if isinstance(value, Mapping):
        return {key: to_host(v) for key, v in value.items()}
    if isinstance(value, tuple):
        return tuple(to_host(v) for v in value)
    if not is_device_array(value):
        return value
    from fabrik.kernels.batch_warp import import_warp

    wp = import_warp()
    return (value if isinstance(value, wp.array) else wp.from_dlpack(value)).numpy()


def _first_device_array(value):
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        for v in value:
            found = _first_device_array(v)
            if found is not None:
                return found
        return None
    return value if is_device_array(value) else None


def on_host(run, model, targets, initial, root, device, options, reason=None):
    """A skeleton or arm batch asked of Warp: solved by ``run(targets, initial, root, options)`` on
    the CPU (numba), with a ``HostFallbackWarning`` (``reason`` names what keeps it off the Warp
    kernel: a skeleton's options, an arm's method or shape); device inputs copied to the host and,
    when the targets were on a device, every array of the answer copied back to it as the targets'
    kind."""
    from fabrik.kernels.batch_warp import get_device, import_warp

    kind = "an arm" if type(model).__name__ == "Arm" else "a skeleton"
    first = _first_device_array(targets)
    if device is not None:
        get_device(import_warp(), device)  # an unknown device is an error here too
    copied = ", its device arrays copied to the host and the answers back" if first is not None else ""
    if kind == "a skeleton":
        why = (f"the Warp skeleton kernel runs FABRIK without joint limits (rigid sub-bases and limb swing "
               f"included), and this batch uses {reason or 'other options'}; method 'fabrik' on a skeleton without "
               "joint limits, without reach_step or dls_start, runs on the device")
    else:
        why = (f"the Warp arm kernel runs FABRIK on an arm of the shape of fabrik.models.dhm_arm() (7 joints, a "
               f"spherical shoulder and wrist) only, and {reason or 'this batch is another'}")
    warnings.warn(f"solve_batch(backend='warp'): {why}; this batch is solved on the CPU (numba threads){copied}",
                  HostFallbackWarning, stacklevel=4)
    result = run(to_host(targets), to_host(initial), to_host(root), {k: to_host(v) for k, v in options.items()})
    if first is None:
        return result
    wp = import_warp()
    dev = (first if isinstance(first, wp.array) else wp.from_dlpack(first)).device
    back = _converter(first)

    def upload(value):
        if not isinstance(value, np.ndarray):
            return value
        return back(wp.array(np.ascontiguousarray(value), device=dev))

    return type(result)(*[upload(value) for value in result])  # (a BatchSolution's len() counts targets)


__all__ = ["HostFallbackWarning", "is_device_array", "solve_chain_on_device", "solve_skeleton_on_device",
           "solve_arm_on_device", "on_host", "to_host"]
