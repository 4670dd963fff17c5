"""``solve_batch(..., backend="warp")``: the lockstep lanes of ``fabrik.kernels.batch`` as an
NVIDIA Warp kernel, one thread per target, on a GPU (``device="cuda"``) or the CPU.

Each thread runs plain FABRIK iterations in float64, the arithmetic of
``fabrik.kernels.vec.reach_sweep`` operation for operation, and ends with the target reached,
the cap, or a hand-back: a target out of reach or within ``tol`` of the reach, one reached
before any iteration, ``max_iter`` 0, or one whose effector looks stalled (where the stall checks
and the singularity bends of ``fabrik_chain_into`` begin). Handed-back targets are solved from
their start on the CPU by the numba kernel (``batch_per_thread``), so every answer is the single
solve's: bit for bit where the device rounds as the CPU does, and to rounding where it does not
(a GPU may fuse a multiply and an add; tests/test_batch.py checks 1e-9 relative on Warp's CPU
device).

Warp is optional (``pip install warp-lang``, the ``gpu`` extra); it is imported on first use.
"""

# (no `from __future__ import annotations`: Warp before 1.2 reads kernel annotations as objects)
import numpy as np

from fabrik.kernels.stopping import MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, STALL_FLOOR
from fabrik.kernels.vec import TINY

#: Warp counts iterations in 32-bit integers: a larger cap is clamped to this (a solve that
#: needs more iterations than that has long been handed back to the CPU kernel as stalled).
WARP_MAX_ITER = 2 ** 31 - 1
#: The code a Warp thread leaves for a target the CPU kernel must solve.
HAND_BACK = -1

_kernel = None


def quiet_warp(wp) -> None:
    """Keep Warp's start-up greeting (devices, cache folder) off stdout: tables and JSON paths are
    printed there. Warnings still show."""
    if hasattr(wp, "LOG_WARNING") and hasattr(wp.config, "log_level"):
        wp.config.log_level = wp.LOG_WARNING
    else:  # older Warp
        wp.config.quiet = True


def _import_warp():
    try:
        import warp as wp
    except ImportError:  # pragma: no cover - depends on the environment
        raise ValueError("backend='warp' needs NVIDIA Warp: pip install warp-lang (or the 'gpu' extra: "
                         "pip install fabrik[gpu])") from None
    return wp


def _build():
    """(warp, the kernel), built on first use under ``fabrik._lazy.FIRST_USE`` (once, whatever
    the threads)."""
    if _kernel is not None:
        return _kernel
    from fabrik._lazy import FIRST_USE

    with FIRST_USE:
        return _kernel if _kernel is not None else _make()


def _make():
    global _kernel
    wp = _import_warp()
    quiet_warp(wp)
    wp.init()
    f64 = wp.float64

    @wp.kernel(enable_backward=False)
    def fabrik_lanes(init: wp.array3d(dtype=f64), start_step: int, lengths: wp.array(dtype=f64),
                     targets: wp.array2d(dtype=f64), roots: wp.array2d(dtype=f64), root_step: int, tol: f64,
                     max_iter: int, total: f64, eps: f64, stol: f64, p: wp.array3d(dtype=f64),
                     out_it: wp.array(dtype=int), out_err: wp.array(dtype=f64), out_code: wp.array(dtype=int)):
        i = wp.tid()
        si = i * start_step
        ri = i * root_step
        n = lengths.shape[0] + 1
        last = n - 1
        for j in range(n):
            for c in range(3):
                p[i, j, c] = init[si, j, c]
        tx = targets[i, 0]
        ty = targets[i, 1]
        tz = targets[i, 2]
        rx = roots[ri, 0]
        ry = roots[ri, 1]
        rz = roots[ri, 2]
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
            fx = f64(1.0)
            fy = f64(0.0)
            fz = f64(0.0)
        ex = p[i, last, 0] - tx
        ey = p[i, last, 1] - ty
        ez = p[i, last, 2] - tz
        err = wp.sqrt(ex * ex + ey * ey + ez * ez)
        eps2 = eps * eps
        tol2 = tol * tol
        if max_iter == 0 or dist > total - tol or err <= tol:
            out_code[i] = -1
            return
        prev_err = err
        count = int(0)
        code = int(-2)
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
                    r2 = f64(1.0)
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
                    r2 = f64(1.0)
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
                    if mx * mx + my * my + mz * mz < stol * stol and err > (f64(1.0) - f64(0.01)) * prev_err:
                        code = int(-1)  # the stall checks begin: the CPU kernel solves it
                    prev_err = err
        out_it[i] = count
        out_err[i] = err
        out_code[i] = code

    _kernel = (wp, fabrik_lanes)
    return _kernel


assert PROGRESS_FRACTION == 0.01 and REACHED == 0 and MAX_ITERATIONS == 3  # spelled out in the kernel


def run_warp(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code, *,
             device=None):
    """Solve the batch (``fabrik.kernels.batch.batch_baseline``'s arguments) with Warp on
    ``device`` (None: Warp's preferred device), then the handed-back targets on the CPU."""
    wp, kernel = _build()
    try:
        dev = wp.get_device(device)
    except Exception as exc:  # Warp raises its own error types for an unknown device
        raise ValueError(f"device: Warp cannot use {device!r} ({exc}); try 'cpu' or 'cuda'") from None
    count = targets.shape[0]
    n = bone_lengths.shape[0] + 1
    # chain_scale and stall_tol, as the numba kernels compute them
    total = 0.0
    for length in bone_lengths:
        total += float(length)
    scale = total if total > 0.0 else 1.0
    eps = TINY * scale
    stol = max(tol, STALL_FLOOR * scale)
    with wp.ScopedDevice(dev):
        w_init = wp.array(initials, dtype=wp.float64)
        w_len = wp.array(bone_lengths, dtype=wp.float64)
        w_tar = wp.array(targets, dtype=wp.float64)
        w_root = wp.array(roots, dtype=wp.float64)
        w_p = wp.empty((count, n, 3), dtype=wp.float64)
        w_it = wp.zeros(count, dtype=int)
        w_err = wp.zeros(count, dtype=wp.float64)
        w_code = wp.zeros(count, dtype=int)
        wp.launch(kernel, dim=count, inputs=[w_init, 0 if initials.shape[0] == 1 else 1, w_len, w_tar, w_root,
                                             0 if roots.shape[0] == 1 else 1, float(tol),
                                             int(min(max_iter, WARP_MAX_ITER)), total, eps, stol],
                  outputs=[w_p, w_it, w_err, w_code])
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
        batch_per_thread(sub_init, bone_lengths, np.ascontiguousarray(targets[back]), sub_root, tol, max_iter, p,
                         it, err, code)
        out_p[back] = p
        out_it[back] = it
        out_err[back] = err
        out_code[back] = code
    return int(back.size)
