"""``solve_batch(..., backend="warp")``: the lockstep lanes of ``fabrik.kernels.batch`` as an
NVIDIA Warp kernel, one thread per target, on a GPU (``device="cuda"``) or the CPU.

Each thread runs plain FABRIK iterations in float64 (or float32, ``precision``), the arithmetic of
``fabrik.kernels.vec.reach_sweep`` operation for operation, and ends with the target reached,
the cap, or a hand-back: a target out of reach or within ``tol`` of the reach, one reached
before any iteration, ``max_iter`` 0, or one whose effector looks stalled (where the stall checks
and the singularity bends of ``fabrik_chain_into`` begin). Handed-back targets are solved from
their start on the CPU by the numba path, so every answer is the single solve's: bit for bit
where the device rounds as the CPU does, and to rounding where it does not (a GPU may fuse a
multiply and an add; tests/solvers/test_batch.py checks 1e-9 relative on Warp's CPU device). A thread
that hands its target back appends its index to a list on the device (``back``, counted by
``back_count``), so that only those rows cross to the host.

With ``turn`` the thread first turns its start towards its target as
``fabrik.kernels.fabrik_chain.warm_turn`` does (the ``turn_start`` of ``fabrik``), operation for
operation: the device path (``fabrik.solvers.batch_device``) keeps starts on the device; the host
path turns them on the CPU first (``fabrik.kernels.batch.turn_starts``).

Warp is optional (``pip install warp-lang``, the ``gpu`` extra); it is imported on first use.
"""

# (no `from __future__ import annotations`: Warp before 1.2 reads kernel annotations as objects)
import numpy as np

from fabrik.kernels.records import ChainBatch, ChainBatchOut
from fabrik.kernels.stopping import MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, STALL_FLOOR
from fabrik.kernels.vec import TINY

#: Warp counts iterations in 32-bit integers: a larger cap is clamped to this (a solve that
#: needs more iterations than that has long been handed back to the CPU kernel as stalled).
WARP_MAX_ITER = 2 ** 31 - 1
#: The code a Warp thread leaves for a target the CPU kernel must solve.
HAND_BACK = -1

#: Kernels per precision (``"float64"``, ``"float32"``), built on first use.
_KERNELS: dict = {}
#: The precisions of the Warp kernels (``solve_batch(..., precision=)``).
PRECISIONS = ("float64", "float32")


def quiet_warp(wp) -> None:
    """Keep Warp's start-up greeting (devices, cache folder) off stdout: tables and JSON paths are
    printed there. Warnings still show."""
    if hasattr(wp, "LOG_WARNING") and hasattr(wp.config, "log_level"):
        wp.config.log_level = wp.LOG_WARNING
    else:  # older Warp
        wp.config.quiet = True


def import_warp():
    """``warp``, initialised quietly; ValueError naming the package when it is not installed."""
    try:
        import warp as wp
    except ImportError:  # pragma: no cover - depends on the environment
        raise ValueError("backend='warp' needs NVIDIA Warp: pip install warp-lang (or the 'gpu' extra: "
                         "pip install fabrik[gpu])") from None
    quiet_warp(wp)
    wp.init()
    return wp


def kernels(precision: str = "float64"):
    """(warp, a namespace of the kernels for ``precision``), built on first use under
    ``fabrik._lazy.FIRST_USE`` (once, whatever the threads)."""
    return built_once(_KERNELS, precision, _make)


def built_once(cache: dict, precision: str, make):
    """``cache[precision]``, made by ``make(precision)`` on first use under
    ``fabrik._lazy.FIRST_USE`` (once, whatever the threads)."""
    found = cache.get(precision)
    if found is not None:
        return found
    from fabrik._lazy import FIRST_USE

    with FIRST_USE:
        found = cache.get(precision)
        if found is None:
            found = cache[precision] = make(precision)
        return found


def _make(precision: str):
    from types import SimpleNamespace

    wp = import_warp()
    real = wp.float64 if precision == "float64" else wp.float32
    i32 = wp.int32

    @wp.kernel(enable_backward=False, module="unique")
    def fabrik_lanes(init: wp.array3d(dtype=real), start_step: int, lengths: wp.array(dtype=real),
                     targets: wp.array2d(dtype=real), roots: wp.array2d(dtype=real), root_step: int, tol: real,
                     max_iter: int, total: real, eps: real, stol: real, turn: int, near: real, back_at_cap: int,
                     p: wp.array3d(dtype=real), out_it: wp.array(dtype=i32), out_err: wp.array(dtype=real),
                     out_code: wp.array(dtype=wp.int8), out_reached: wp.array(dtype=wp.bool),
                     back_count: wp.array(dtype=i32), back: wp.array(dtype=i32)):
        # root_step -1: each start's own root (init[si, 0]); turn 1: warm_turn first (module docstring)
        i = wp.tid()
        si = i * start_step
        n = lengths.shape[0] + 1
        last = n - 1
        for j in range(n):
            for c in range(3):
                p[i, j, c] = init[si, j, c]
        tx = targets[i, 0]
        ty = targets[i, 1]
        tz = targets[i, 2]
        rx = init[si, 0, 0]
        ry = init[si, 0, 1]
        rz = init[si, 0, 2]
        if root_step >= 0:
            rx = roots[i * root_step, 0]
            ry = roots[i * root_step, 1]
            rz = roots[i * root_step, 2]
        # fallback_direction
        fx = rx - tx
        fy = ry - ty
        fz = rz - tz
        dist = wp.sqrt(fx * fx + fy * fy + fz * fz)
        if dist > eps:
            fx = fx / dist
            fy = fy / dist
            fz = fz / dist
        else:
            fx = real(1.0)
            fy = real(0.0)
            fz = real(0.0)
        ex = p[i, last, 0] - tx
        ey = p[i, last, 1] - ty
        ez = p[i, last, 2] - tz
        err = wp.sqrt(ex * ex + ey * ey + ez * ez)
        if turn != 0 and max_iter > 0 and dist <= total and err > tol:
            # fabrik.kernels.fabrik_chain.warm_turn: turn_to_target's _bent_line, then rotate_tail
            span = wp.sqrt((p[i, last, 0] - p[i, 0, 0]) * (p[i, last, 0] - p[i, 0, 0])
                           + (p[i, last, 1] - p[i, 0, 1]) * (p[i, last, 1] - p[i, 0, 1])
                           + (p[i, last, 2] - p[i, 0, 2]) * (p[i, last, 2] - p[i, 0, 2]))
            if span > near:
                ux = (p[i, last, 0] - p[i, 0, 0]) / span
                uy = (p[i, last, 1] - p[i, 0, 1]) / span
                uz = (p[i, last, 2] - p[i, 0, 2]) / span
                bent = int(0)
                for j in range(1, last):
                    if bent == 0:
                        x = p[i, j, 0] - p[i, 0, 0]
                        y = p[i, j, 1] - p[i, 0, 1]
                        z = p[i, j, 2] - p[i, 0, 2]
                        along = x * ux + y * uy + z * uz
                        ox = x - along * ux
                        oy = y - along * uy
                        oz = z - along * uz
                        if ox * ox + oy * oy + oz * oz > near * near:
                            bent = int(1)
                if bent != 0:
                    vx = tx - rx
                    vy = ty - ry
                    vz = tz - rz
                    vd = wp.sqrt(vx * vx + vy * vy + vz * vz)
                    if vd > near:
                        vx = vx / vd
                        vy = vy / vd
                        vz = vz / vd
                        kx = uy * vz - uz * vy
                        ky = uz * vx - ux * vz
                        kz = ux * vy - uy * vx
                        sk = wp.sqrt(kx * kx + ky * ky + kz * kz)
                        if sk > real(1e-12):
                            ax = kx / sk
                            ay = ky / sk
                            az = kz / sk
                            cs = ux * vx + uy * vy + uz * vz
                            for m in range(1, n):
                                wx = p[i, m, 0] - p[i, 0, 0]
                                wy = p[i, m, 1] - p[i, 0, 1]
                                wz = p[i, m, 2] - p[i, 0, 2]
                                kd = (ax * wx + ay * wy + az * wz) * (real(1.0) - cs)
                                cx = ay * wz - az * wy
                                cy = az * wx - ax * wz
                                cz = ax * wy - ay * wx
                                p[i, m, 0] = p[i, 0, 0] + wx * cs + cx * sk + ax * kd
                                p[i, m, 1] = p[i, 0, 1] + wy * cs + cy * sk + ay * kd
                                p[i, m, 2] = p[i, 0, 2] + wz * cs + cz * sk + az * kd
                            ex = p[i, last, 0] - tx
                            ey = p[i, last, 1] - ty
                            ez = p[i, last, 2] - tz
                            err = wp.sqrt(ex * ex + ey * ey + ez * ez)
        eps2 = eps * eps
        tol2 = tol * tol
        code = int(-2)
        count = int(0)
        if max_iter == 0 or dist > total - tol or err <= tol:
            code = int(-1)
        prev_err = err
        while code == -2:
            px = p[i, last, 0]
            py = p[i, last, 1]
            pz = p[i, last, 2]
            # forward stage: the effector on the target, joints last - 1 down to 0
            ax = tx
            ay = ty
            az = tz
            p[i, last, 0] = ax
            p[i, last, 1] = ay
            p[i, last, 2] = az
            dx = p[i, last - 1, 0] - ax
            dy = p[i, last - 1, 1] - ay
            dz = p[i, last - 1, 2] - az
            for m in range(last):
                j = last - 1 - m
                r2 = dx * dx + dy * dy + dz * dz
                if r2 <= eps2:
                    dx = fx
                    dy = fy
                    dz = fz
                    r2 = real(1.0)
                s = lengths[j] / r2
                qx = s * dx
                qy = s * dy
                qz = s * dz
                rt = wp.sqrt(r2)
                if j > 0:
                    dx = (p[i, j - 1, 0] - ax) - qx * rt
                    dy = (p[i, j - 1, 1] - ay) - qy * rt
                    dz = (p[i, j - 1, 2] - az) - qz * rt
                ax = ax + qx * rt
                ay = ay + qy * rt
                az = az + qz * rt
                p[i, j, 0] = ax
                p[i, j, 1] = ay
                p[i, j, 2] = az
            # backward stage: the root on its base, joints 1 to last
            ax = rx
            ay = ry
            az = rz
            p[i, 0, 0] = ax
            p[i, 0, 1] = ay
            p[i, 0, 2] = az
            dx = p[i, 1, 0] - ax
            dy = p[i, 1, 1] - ay
            dz = p[i, 1, 2] - az
            for j in range(1, n):
                r2 = dx * dx + dy * dy + dz * dz
                if r2 <= eps2:
                    dx = fx
                    dy = fy
                    dz = fz
                    r2 = real(1.0)
                s = lengths[j - 1] / r2
                qx = s * dx
                qy = s * dy
                qz = s * dz
                rt = wp.sqrt(r2)
                if j < last:
                    dx = (p[i, j + 1, 0] - ax) - qx * rt
                    dy = (p[i, j + 1, 1] - ay) - qy * rt
                    dz = (p[i, j + 1, 2] - az) - qz * rt
                ax = ax + qx * rt
                ay = ay + qy * rt
                az = az + qz * rt
                p[i, j, 0] = ax
                p[i, j, 1] = ay
                p[i, j, 2] = az
            count = count + 1
            ex = ax - tx
            ey = ay - ty
            ez = az - tz
            err2 = ex * ex + ey * ey + ez * ez
            if err2 <= tol2:
                err = wp.sqrt(err2)
                code = int(0)
            else:
                err = wp.sqrt(err2)
                if count >= max_iter:
                    code = int(3)
                else:
                    mx = ax - px
                    my = ay - py
                    mz = az - pz
                    if mx * mx + my * my + mz * mz < stol * stol and err > (real(1.0) - real(0.01)) * prev_err:
                        code = int(-1)  # the stall checks begin: the CPU kernel solves it
                    prev_err = err
        if code == 3 and back_at_cap != 0:
            code = int(-1)  # a cap beyond one slice: the CPU path solves it, in slices as fabrik.solve does
        out_it[i] = count
        out_err[i] = err
        out_code[i] = wp.int8(code)
        out_reached[i] = code == 0
        if code == -1:
            back[wp.atomic_add(back_count, 0, 1)] = i

    @wp.kernel(enable_backward=False, module="unique")
    def bad_values(values: wp.array(dtype=real), limit: real, flag: wp.array(dtype=i32)):
        # flag[0] <- 1 where a value is not finite or not below limit in size (NaN fails both tests)
        i = wp.tid()
        v = values[i]
        if not (wp.abs(v) < limit):
            flag[0] = 1

    @wp.kernel(enable_backward=False, module="unique")
    def gather_rows(src: wp.array2d(dtype=real), rows: wp.array(dtype=i32), dst: wp.array2d(dtype=real)):
        i, c = wp.tid()
        dst[i, c] = src[rows[i], c]

    @wp.kernel(enable_backward=False, module="unique")
    def scatter_answers(rows: wp.array(dtype=i32), p_in: wp.array3d(dtype=real), it_in: wp.array(dtype=i32),
                        err_in: wp.array(dtype=real), code_in: wp.array(dtype=wp.int8), p: wp.array3d(dtype=real),
                        out_it: wp.array(dtype=i32), out_err: wp.array(dtype=real),
                        out_code: wp.array(dtype=wp.int8), out_reached: wp.array(dtype=wp.bool)):
        k = wp.tid()
        i = rows[k]
        for j in range(p.shape[1]):
            for c in range(3):
                p[i, j, c] = p_in[k, j, c]
        out_it[i] = it_in[k]
        out_err[i] = err_in[k]
        out_code[i] = code_in[k]
        out_reached[i] = code_in[k] == wp.int8(0)

    return wp, SimpleNamespace(real=real, dtype=np.float64 if precision == "float64" else np.float32,
                               fabrik_lanes=fabrik_lanes, bad_values=bad_values, gather_rows=gather_rows,
                               scatter_answers=scatter_answers)


def scalars(bone_lengths: np.ndarray, tol: float) -> tuple[float, float, float, float]:
    """(total, eps, stol, turn near) as the numba kernels compute them (``chain_scale``,
    ``stall_tol``, ``fabrik.kernels.fabrik_chain.TURN_BENT``)."""
    from fabrik.kernels.fabrik_chain import TURN_BENT

    total = 0.0
    for length in bone_lengths:
        total += float(length)
    scale = total if total > 0.0 else 1.0
    return total, TINY * scale, max(tol, STALL_FLOOR * scale), TURN_BENT * total


def get_device(wp, device):
    try:
        return wp.get_device(device)
    except Exception as exc:  # Warp raises its own error types for an unknown device
        raise ValueError(f"device: Warp cannot use {device!r} ({exc}); try 'cpu' or 'cuda'") from None


assert PROGRESS_FRACTION == 0.01 and REACHED == 0 and MAX_ITERATIONS == 3  # spelled out in the kernel


def run_warp(batch, bone_lengths, stop, out, *, device=None):
    """Solve the batch (``fabrik.kernels.batch.batch_baseline``'s arguments, host arrays, starts
    already turned) with Warp on ``device`` (None: Warp's preferred device), then the handed-back
    targets on the CPU; the answers are copied back into the host outputs. Returns how many were
    handed back."""
    initials, targets, roots, tol, max_iter = batch.initials, batch.targets, batch.roots, stop.tol, stop.max_iter
    out_p, out_it, out_err, out_code = out
    wp, k = kernels("float64")
    dev = get_device(wp, device)
    count = targets.shape[0]
    n = bone_lengths.shape[0] + 1
    total, eps, stol, near = scalars(bone_lengths, tol)
    with wp.ScopedDevice(dev):
        w_p = wp.empty((count, n, 3), dtype=wp.float64)
        w_it = wp.zeros(count, dtype=wp.int32)
        w_err = wp.zeros(count, dtype=wp.float64)
        w_code = wp.zeros(count, dtype=wp.int8)
        w_reached = wp.zeros(count, dtype=wp.bool)
        w_count = wp.zeros(1, dtype=wp.int32)
        w_back = wp.empty(count, dtype=wp.int32)
        wp.launch(k.fabrik_lanes, dim=count,
                  inputs=[wp.array(initials, dtype=wp.float64), 0 if initials.shape[0] == 1 else 1,
                          wp.array(bone_lengths, dtype=wp.float64), wp.array(targets, dtype=wp.float64),
                          wp.array(roots, dtype=wp.float64), 0 if roots.shape[0] == 1 else 1, float(tol),
                          int(min(max_iter, WARP_MAX_ITER)), total, eps, stol, 0, near, 0],
                  outputs=[w_p, w_it, w_err, w_code, w_reached, w_count, w_back])
        out_p[:] = w_p.numpy()
        out_it[:] = w_it.numpy()
        out_err[:] = w_err.numpy()
        out_code[:] = w_code.numpy()
    if max_iter > WARP_MAX_ITER:  # Warp's cap was clamped: those at it go on on the CPU
        out_code[out_code == MAX_ITERATIONS] = HAND_BACK
    back = np.flatnonzero(out_code == HAND_BACK)
    if back.size:
        from fabrik.kernels.batch import batch_per_thread

        sub_init = initials if initials.shape[0] == 1 else np.ascontiguousarray(initials[back])
        sub_root = roots if roots.shape[0] == 1 else np.ascontiguousarray(roots[back])
        p = np.empty((back.size, n, 3))
        it = np.empty(back.size, np.int64)
        err = np.empty(back.size)
        code = np.empty(back.size, np.int64)
        batch_per_thread(ChainBatch(sub_init, np.ascontiguousarray(targets[back]), sub_root), bone_lengths, stop,
                         ChainBatchOut(p, it, err, code))
        out_p[back] = p
        out_it[back] = it
        out_err[back] = err
        out_code[back] = code
    return int(back.size)
