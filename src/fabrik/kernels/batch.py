"""Many chain FABRIK solves at once (``fabrik.solve_batch``), compiled and multi-threaded.

Every target is solved exactly as ``fabrik.solve`` solves it: the per-target body is
``fabrik.kernels.fabrik_chain.fabrik_chain_into``. Three ways of running a batch, all with the
same answers (bit for bit, pinned in tests/test_batch.py):

* ``batch_baseline``: ``prange`` over targets, each calling ``fabrik_chain`` (which allocates its
  answer); copied into the outputs. The plain one-chain-per-thread kernel ``fabrik bench batch``
  compares against.
* ``batch_per_thread``: ``prange`` over targets, each solved in place in its row of the output
  with ``fabrik_chain_into`` (nothing allocated on the way to a reached target).
* ``batch_lockstep``: ``prange`` over chunks of targets; each chunk runs ``LANES`` targets in
  lockstep in a structure-of-arrays pose (joint, coordinate, lane), so that one FABRIK stage
  advances every lane's chain by one joint per step and the compiler turns the lane loop into
  SIMD instructions. A lane runs plain iterations only (the arithmetic of
  ``fabrik.kernels.vec.reach_sweep``, operation for operation: the same bits); a target that
  reaches ``tol`` or the cap in them is written out and the lane takes the next target. Every
  other target (out of reach or within ``tol`` of the reach, reached before any iteration, no
  iteration asked for, or one whose effector looks stalled, which starts the stall checks and
  the singularity bends) is solved from its start by ``fabrik_chain_into`` instead, so its answer
  is the single solve's too.

Chains with joint limits (and oriented targets) go through ``batch_constrained``: ``prange``
over targets, each calling ``fabrik_constrained``, the kernel ``fabrik.solve`` calls.

Status codes as ``fabrik.solvers.result.STATUSES``.
"""

import numpy as np
from numba import njit, prange

from fabrik.kernels.fabrik_chain import fabrik_chain, fabrik_chain_into
from fabrik.kernels.fabrik_constrained import fabrik_constrained
from fabrik.kernels.stopping import MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, stall_tol
from fabrik.kernels.vec import TINY, chain_scale, fallback_direction

#: Targets solved in lockstep per chunk by default (``solve_batch(..., lanes=)``); measured
#: against other counts on the Table 1 chain in docs/batch.md.
LANES = 4


@njit(cache=True, error_model="numpy", parallel=True)
def batch_baseline(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code):
    """The plain kernel: one ``fabrik_chain`` call per target, ``prange`` over targets.

    initials (1 or N, n, 3), targets (N, 3), roots (1 or N, 3); outputs (N, n, 3), (N,) x 3.
    """
    n_targets = targets.shape[0]
    ss = 0 if initials.shape[0] == 1 else 1  # the start pose's row step: shared or one per target
    rs = 0 if roots.shape[0] == 1 else 1
    for i in prange(n_targets):
        p, it, err, code = fabrik_chain(initials[i * ss], bone_lengths, targets[i],
                                        roots[i * rs], tol, max_iter)
        out_p[i] = p
        out_it[i] = it
        out_err[i] = err
        out_code[i] = code


@njit(cache=True, error_model="numpy", parallel=True)
def batch_per_thread(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code):
    """``prange`` over targets, each solved in place in ``out_p[i]`` (same arguments as
    ``batch_baseline``)."""
    n_targets = targets.shape[0]
    ss = 0 if initials.shape[0] == 1 else 1  # the start pose's row step: shared or one per target
    rs = 0 if roots.shape[0] == 1 else 1
    for i in prange(n_targets):
        out_p[i] = initials[i * ss]
        it, err, code = fabrik_chain_into(out_p[i], bone_lengths, targets[i], roots[i * rs],
                                          tol, max_iter)
        out_it[i] = it
        out_err[i] = err
        out_code[i] = code


@njit(cache=True, error_model="numpy", parallel=True)
def batch_lockstep(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code,
                   chunk, lanes):
    """``prange`` over chunks of ``chunk`` targets, each chunk solved by ``lockstep_range`` in
    ``lanes`` lanes (same arguments as ``batch_baseline``, plus ``chunk`` and ``lanes``)."""
    n_targets = targets.shape[0]
    n_chunks = (n_targets + chunk - 1) // chunk
    for c in prange(n_chunks):
        lockstep_range(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code,
                       c * chunk, min(n_targets, (c + 1) * chunk), lanes)


@njit(cache=True, error_model="numpy")
def solve_alone(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code, i):
    """Target ``i`` solved from its start by the single-chain kernel, into the outputs."""
    out_p[i] = initials[0 if initials.shape[0] == 1 else i]
    it, err, code = fabrik_chain_into(out_p[i], bone_lengths, targets[i], roots[0 if roots.shape[0] == 1 else i],
                                      tol, max_iter)
    out_it[i] = it
    out_err[i] = err
    out_code[i] = code


@njit(cache=True, error_model="numpy")
def lockstep_range(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code,
                   start, stop, lanes):
    """Targets ``start..stop-1`` in ``lanes`` lanes (module docstring). The lane count is a
    run-time value on purpose: with a constant one the compiler unrolls the lane loops fully and
    then cannot prove the lanes' arrays apart, and emits scalar code; with a run-time count it
    vectorises them (behind a run-time overlap check). A range of fewer targets gets as many lanes."""
    lanes = max(1, min(lanes, stop - start))
    n = bone_lengths.shape[0] + 1
    last = n - 1
    total, scale = chain_scale(bone_lengths)
    eps = TINY * scale
    eps2 = eps * eps
    stol = stall_tol(tol, scale)
    tol2 = tol * tol
    P = np.zeros((n, 3, lanes))  # the lanes' poses: joint, coordinate, lane
    T = np.zeros((3, lanes))  # targets
    R = np.zeros((3, lanes))  # roots
    F = np.zeros((3, lanes))  # fallback directions (fabrik_chain_into's fx, fy, fz)
    ax = np.zeros(lanes)
    ay = np.zeros(lanes)
    az = np.zeros(lanes)
    dx = np.zeros(lanes)
    dy = np.zeros(lanes)
    dz = np.zeros(lanes)
    prev = np.zeros((4, lanes))  # the effector before the iteration (x, y, z) and the error
    index = np.full(lanes, -1)
    count = np.zeros(lanes, np.int64)
    shared_start = initials.shape[0] == 1
    shared_root = roots.shape[0] == 1
    next_target = start
    active = 0
    for lane in range(lanes):
        next_target = fill_lane(P, T, R, F, prev, index, count, lane, next_target, stop, initials, bone_lengths,
                                targets, roots, tol, max_iter, out_p, out_it, out_err, out_code, total, eps,
                                shared_start, shared_root)
        if index[lane] >= 0:
            active += 1
    while active > 0:
        for lane in range(lanes):
            prev[0, lane] = P[last, 0, lane]
            prev[1, lane] = P[last, 1, lane]
            prev[2, lane] = P[last, 2, lane]
        # forward stage (reach_sweep from the target, joints last - 1 down to 0)
        for lane in range(lanes):
            ax[lane] = T[0, lane]
            ay[lane] = T[1, lane]
            az[lane] = T[2, lane]
            P[last, 0, lane] = ax[lane]
            P[last, 1, lane] = ay[lane]
            P[last, 2, lane] = az[lane]
            dx[lane] = P[last - 1, 0, lane] - ax[lane]
            dy[lane] = P[last - 1, 1, lane] - ay[lane]
            dz[lane] = P[last - 1, 2, lane] - az[lane]
        for j in range(last - 1, -1, -1):
            lockstep_step(P, j, j - 1, j > 0, bone_lengths[j], ax, ay, az, dx, dy, dz, F, eps2)
        # backward stage (root back on its base, joints 1 to last)
        for lane in range(lanes):
            ax[lane] = R[0, lane]
            ay[lane] = R[1, lane]
            az[lane] = R[2, lane]
            P[0, 0, lane] = ax[lane]
            P[0, 1, lane] = ay[lane]
            P[0, 2, lane] = az[lane]
            dx[lane] = P[1, 0, lane] - ax[lane]
            dy[lane] = P[1, 1, lane] - ay[lane]
            dz[lane] = P[1, 2, lane] - az[lane]
        for j in range(1, n):
            lockstep_step(P, j, j + 1, j < last, bone_lengths[j - 1], ax, ay, az, dx, dy, dz, F, eps2)
        # the end of fabrik_chain_into's iteration, lane by lane
        for lane in range(lanes):
            i = index[lane]
            if i < 0:
                continue
            count[lane] += 1
            ex = ax[lane] - T[0, lane]
            ey = ay[lane] - T[1, lane]
            ez = az[lane] - T[2, lane]
            err2 = ex * ex + ey * ey + ez * ez
            done = False
            if err2 <= tol2:
                store_lane(P, lane, out_p[i])
                out_it[i] = count[lane]
                out_err[i] = np.sqrt(err2)
                out_code[i] = REACHED
                done = True
            else:
                err = np.sqrt(err2)
                if count[lane] >= max_iter:
                    store_lane(P, lane, out_p[i])
                    out_it[i] = count[lane]
                    out_err[i] = err
                    out_code[i] = MAX_ITERATIONS
                    done = True
                else:
                    mx = P[last, 0, lane] - prev[0, lane]
                    my = P[last, 1, lane] - prev[1, lane]
                    mz = P[last, 2, lane] - prev[2, lane]
                    if mx * mx + my * my + mz * mz < stol * stol and err > (1.0 - PROGRESS_FRACTION) * prev[3, lane]:
                        # effector_stalled: the stall checks begin; the single solve takes it
                        solve_alone(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err,
                                    out_code, i)
                        done = True
                    else:
                        prev[3, lane] = err
            if done:
                next_target = fill_lane(P, T, R, F, prev, index, count, lane, next_target, stop, initials,
                                        bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err,
                                        out_code, total, eps, shared_start, shared_root)
                if index[lane] < 0:
                    active -= 1


@njit(cache=True, inline="always", error_model="numpy")
def lockstep_step(P, j, nj, more, length, ax, ay, az, dx, dy, dz, F, eps2):
    """One joint of a FABRIK stage in every lane: joint ``j`` placed at ``length`` from the joint
    placed before it (``a``), along ``d`` = old ``p[j]`` - ``a``; then ``d`` for joint ``nj`` when
    ``more``. ``reach_sweep``'s step, operation for operation."""
    for lane in range(P.shape[2]):
        x = dx[lane]
        y = dy[lane]
        z = dz[lane]
        r2 = x * x + y * y + z * z
        small = r2 <= eps2
        f0 = F[0, lane]  # loaded whatever ``small`` is, so that the choice is a select, not a branch
        f1 = F[1, lane]
        f2 = F[2, lane]
        x = f0 if small else x
        y = f1 if small else y
        z = f2 if small else z
        r2 = 1.0 if small else r2
        s = length / r2
        qx = s * x
        qy = s * y
        qz = s * z
        rt = np.sqrt(r2)
        a0 = ax[lane]
        a1 = ay[lane]
        a2 = az[lane]
        if more:
            dx[lane] = (P[nj, 0, lane] - a0) - qx * rt
            dy[lane] = (P[nj, 1, lane] - a1) - qy * rt
            dz[lane] = (P[nj, 2, lane] - a2) - qz * rt
        a0 = a0 + qx * rt
        a1 = a1 + qy * rt
        a2 = a2 + qz * rt
        ax[lane] = a0
        ay[lane] = a1
        az[lane] = a2
        P[j, 0, lane] = a0
        P[j, 1, lane] = a1
        P[j, 2, lane] = a2


@njit(cache=True, error_model="numpy")
def store_lane(P, lane, out):
    for j in range(P.shape[0]):
        for c in range(3):
            out[j, c] = P[j, c, lane]


@njit(cache=True, error_model="numpy")
def fill_lane(P, T, R, F, prev, index, count, lane, next_target, stop, initials, bone_lengths, targets, roots,
              tol, max_iter, out_p, out_it, out_err, out_code, total, eps, shared_start, shared_root):
    """Give ``lane`` the next target from ``next_target`` that needs plain iterations, solving the
    others (``solve_alone``) on the way. Returns the new ``next_target``; ``index[lane]`` is -1
    when none was left."""
    last = bone_lengths.shape[0]
    while next_target < stop:
        i = next_target
        next_target += 1
        start = initials[0 if shared_start else i]
        root = roots[0 if shared_root else i]
        target = targets[i]
        fx, fy, fz, dist = fallback_direction(root, target, eps)
        ex = start[last, 0] - target[0]
        ey = start[last, 1] - target[1]
        ez = start[last, 2] - target[2]
        err = np.sqrt(ex * ex + ey * ey + ez * ez)
        if max_iter == 0 or dist > total - tol or err <= tol:
            solve_alone(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code, i)
            continue
        for j in range(last + 1):
            for c in range(3):
                P[j, c, lane] = start[j, c]
        for c in range(3):
            T[c, lane] = target[c]
            R[c, lane] = root[c]
        F[0, lane] = fx
        F[1, lane] = fy
        F[2, lane] = fz
        prev[3, lane] = err
        count[lane] = 0
        index[lane] = i
        return next_target
    index[lane] = -1
    return next_target


@njit(cache=True, error_model="numpy", parallel=True)
def batch_constrained(initials, bone_lengths, targets, roots, limits, root_frame, rotations, oriented, planar, tol,
                      orientation_tol, max_iter, out_p, out_frames, out_it, out_err, out_oerr, out_code):
    """Constrained FABRIK (``fabrik.kernels.fabrik_constrained.fabrik_constrained``, the kernel of
    ``fabrik.solve`` with ``fabrik-constrained``), ``prange`` over targets. ``rotations`` (1 or N,
    3, 3) are the oriented targets' frames (used when ``oriented``)."""
    n_targets = targets.shape[0]
    ss = 0 if initials.shape[0] == 1 else 1
    rs = 0 if roots.shape[0] == 1 else 1
    qs = 0 if rotations.shape[0] == 1 else 1
    for i in prange(n_targets):
        p, frames, active, it, err, oerr, code = fabrik_constrained(
            initials[i * ss], bone_lengths, targets[i], roots[i * rs], limits, root_frame, rotations[i * qs],
            oriented, planar, tol, orientation_tol, max_iter)
        out_p[i] = p
        out_frames[i] = frames
        out_it[i] = it
        out_err[i] = err
        out_oerr[i] = oerr
        out_code[i] = code
