"""Many chain FABRIK solves at once (``fabrik.solve_batch``), compiled and multi-threaded.

Every target is solved exactly as ``fabrik.solve`` solves it: the per-target body is
``fabrik.kernels.fabrik_chain.fabrik_chain_into``. Three ways of running a batch, all with the
same answers (bit for bit, pinned in tests/solvers/test_batch.py):

* ``batch_baseline``: ``prange`` over targets, each solving a new copy of its start (a kernel that
  returns its answer allocates it); copied into the outputs. The plain one-chain-per-thread
  kernel ``fabrik bench batch`` compares against.
* ``batch_per_thread``: ``prange`` over targets, each solved in place in its row of the output
  with ``fabrik_chain_into`` (nothing allocated on the way to a reached target).
* ``batch_lockstep``: ``prange`` over chunks of targets; each chunk runs ``LANES`` (4) targets in
  lockstep in a structure-of-arrays pose (joint, coordinate, lane), so that one FABRIK stage
  advances every lane's chain by one joint per step. The lanes' placed joints and difference
  vectors stay in registers through a stage (``stage_lanes``): four independent dependency chains
  of square roots and divides that the CPU overlaps, where one chain waits on each step. A lane
  runs plain iterations only (the arithmetic of ``fabrik.kernels.vec.reach_sweep``, operation for
  operation: the same bits); a target that
  reaches ``tol`` or the cap in them is written out and the lane takes the next target. Every
  other target (out of reach or within ``tol`` of the reach, reached before any iteration, no
  iteration asked for, or one whose effector looks stalled, which starts the stall checks and
  the singularity bends) is solved from its start by ``fabrik_chain_into`` instead, so its answer
  is the single solve's too.

Start poses are turned towards their targets (``fabrik.kernels.fabrik_chain.warm_turn``, the
``turn_start`` option of ``fabrik``) before any of these, by ``turn_starts``; the kernels then run
without the turn, so the GPU backend needs none of its own.

Chains with joint limits (and oriented targets) go through ``batch_constrained``: ``prange``
over targets, each calling ``fabrik_constrained``, the kernel ``fabrik.solve`` calls.

The batch kernels take records (``fabrik.kernels.records``): the batch's tasks (``ChainBatch``,
``LimitedBatch``), the bone lengths, the limits (``ChainLimits``), the ``Stop`` (``tol`` and
``max_iter``; ``orientation_tol`` read only with limits) and the arrays they write into
(``ChainBatchOut``, ``LimitedBatchOut``).

Status codes as ``fabrik.solvers.result.STATUSES``.
"""

import numpy as np
from numba import njit, prange

from fabrik.kernels.fabrik_chain import fabrik_chain_into, start_bent, warm_turn
from fabrik.kernels.fabrik_constrained import fabrik_constrained
from fabrik.kernels.records import ChainBatch, ChainBatchOut, ChainLimits, LimitedTask, Stop
from fabrik.kernels.stopping import MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, stall_tol
from fabrik.kernels.vec import TINY, chain_scale, fallback_direction

#: Targets solved in lockstep per chunk, each lane held in its own registers (``stage_lanes`` is
#: written for exactly this many). Measured with ``benchmarks/lane_ceiling.py``: the bare stage
#: loop gains 1.5x with 2 such lanes, 2.0x with 4 and no more with 8 or 16.
LANES = 4


@njit(cache=True, error_model="numpy", parallel=True)
def turn_starts(initials, bone_lengths, targets, roots, tol, max_iter):
    """Every target's start pose (initials (1 or N, n, 3)) after ``warm_turn`` towards it: (N, n, 3).
    roots (1 or N, 3) as ``batch_baseline``'s; a root of shape (N, 0) stands for each start's own."""
    n_targets = targets.shape[0]
    total, scale = chain_scale(bone_lengths)
    eps = TINY * scale
    out = np.empty((n_targets, initials.shape[1], 3))
    ss = 0 if initials.shape[0] == 1 else 1
    rs = 0 if roots.shape[0] == 1 else 1
    for i in prange(n_targets):
        out[i] = initials[i * ss]
        root = roots[i * rs]
        _, _, _, dist = fallback_direction(root, targets[i], eps)
        warm_turn(out[i], root, targets[i], tol, max_iter, total, dist)
    return out


# The entry points take records; the prange loops they call take plain arrays, because numba
# (0.68; its issues 5872, 7135, 10338) miscompiles arrays reached through a tuple in a parallel
# function: writes through ``out.positions[i]`` in a prange body are lost, and unpacking a record
# (``p, it, err, code = out.positions, ...``) before the loop bound its arrays to the wrong
# arguments, writing the answers into the start poses. No record reaches a ``parallel=True``
# function, as an argument or a local.


@njit(cache=True, error_model="numpy")
def batch_baseline(batch, bone_lengths, stop, out):
    """The plain kernel: one ``fabrik_chain_into`` call per target on a new copy of its start,
    ``prange`` over targets.

    batch: a ``ChainBatch`` (initials (1 or N, n, 3), targets (N, 3), roots (1 or N, 3));
    bone_lengths (n-1,); stop: a ``Stop`` (tol, max_iter; orientation_tol not read); out: a
    ``ChainBatchOut`` ((N, n, 3), (N,) x 3).
    """
    baseline_targets(batch.initials, bone_lengths, batch.targets, batch.roots, stop.tol, stop.max_iter,
                     out.positions, out.iterations, out.errors, out.codes)


@njit(cache=True, error_model="numpy")
def batch_per_thread(batch, bone_lengths, stop, out):
    """``prange`` over targets, each solved in place in ``out.positions[i]`` (same arguments as
    ``batch_baseline``)."""
    per_thread_targets(batch.initials, bone_lengths, batch.targets, batch.roots, stop.tol, stop.max_iter,
                       out.positions, out.iterations, out.errors, out.codes)


@njit(cache=True, error_model="numpy")
def batch_lockstep(batch, bone_lengths, stop, out, chunk):
    """``prange`` over chunks of ``chunk`` targets, each chunk solved by ``lockstep_range`` (same
    arguments as ``batch_baseline``, plus ``chunk``)."""
    lockstep_chunks(batch.initials, bone_lengths, batch.targets, batch.roots, stop.tol, stop.max_iter,
                    out.positions, out.iterations, out.errors, out.codes, chunk)


@njit(cache=True, error_model="numpy", parallel=True)
def baseline_targets(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code):
    """``batch_baseline``'s loop, on its records' arrays."""
    n_targets = targets.shape[0]
    ss = 0 if initials.shape[0] == 1 else 1  # the start pose's row step: shared or one per target
    rs = 0 if roots.shape[0] == 1 else 1
    for i in prange(n_targets):
        p = initials[i * ss].copy()
        it, err, code = fabrik_chain_into(p, bone_lengths, targets[i], roots[i * rs], tol, max_iter, False)
        out_p[i] = p
        out_it[i] = it
        out_err[i] = err
        out_code[i] = code


@njit(cache=True, error_model="numpy", parallel=True)
def per_thread_targets(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code):
    """``batch_per_thread``'s loop, on its records' arrays."""
    n_targets = targets.shape[0]
    ss = 0 if initials.shape[0] == 1 else 1  # the start pose's row step: shared or one per target
    rs = 0 if roots.shape[0] == 1 else 1
    for i in prange(n_targets):
        out_p[i] = initials[i * ss]
        it, err, code = fabrik_chain_into(out_p[i], bone_lengths, targets[i], roots[i * rs],
                                          tol, max_iter, False)
        out_it[i] = it
        out_err[i] = err
        out_code[i] = code


@njit(cache=True, error_model="numpy", parallel=True)
def lockstep_chunks(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code, chunk):
    """``batch_lockstep``'s loop, on its records' arrays."""
    n_targets = targets.shape[0]
    n_chunks = (n_targets + chunk - 1) // chunk
    for c in prange(n_chunks):
        lockstep_range(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code,
                       c * chunk, min(n_targets, (c + 1) * chunk))


@njit(cache=True, error_model="numpy")
def solve_alone(batch, bone_lengths, stop, out, i):
    """Target ``i`` solved from its start by the single-chain kernel, into the outputs."""
    initials, roots = batch.initials, batch.roots
    out.positions[i] = initials[0 if initials.shape[0] == 1 else i]
    it, err, code = fabrik_chain_into(out.positions[i], bone_lengths, batch.targets[i],
                                      roots[0 if roots.shape[0] == 1 else i], stop.tol, stop.max_iter, False)
    out.iterations[i] = it
    out.errors[i] = err
    out.codes[i] = code


@njit(cache=True, error_model="numpy")
def lockstep_range(initials, bone_lengths, targets, roots, tol, max_iter, out_p, out_it, out_err, out_code,
                   first, end):
    """Targets ``first..end-1`` in ``LANES`` lanes (module docstring); a lane with no target left
    rides through the stages on its last pose, its results unused. Plain arrays, as a prange body
    passes them; the records that ``fill_lane`` and ``solve_alone`` take are built here."""
    batch = ChainBatch(initials, targets, roots)
    stop = Stop(tol, 0.0, max_iter)
    out = ChainBatchOut(out_p, out_it, out_err, out_code)
    lanes = LANES
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
    prev = np.zeros((4, lanes))  # the effector before the iteration (x, y, z) and the error
    index = np.full(lanes, -1)
    count = np.zeros(lanes, np.int64)
    next_target = first
    active = 0
    for lane in range(lanes):
        next_target = fill_lane(P, T, R, F, prev, index, count, lane, next_target, end, batch, bone_lengths, stop,
                                out, total, eps)
        if index[lane] >= 0:
            active += 1
    while active > 0:
        stage_lanes(P, T, F, bone_lengths, last - 1, -1, -1, eps2)  # forward: from the target to the root
        stage_lanes(P, R, F, bone_lengths, 1, n, 1, eps2)  # backward: from the root back out
        # the end of fabrik_chain_into's iteration, lane by lane
        for lane in range(lanes):
            i = index[lane]
            if i < 0:
                continue
            count[lane] += 1
            ex = P[last, 0, lane] - T[0, lane]
            ey = P[last, 1, lane] - T[1, lane]
            ez = P[last, 2, lane] - T[2, lane]
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
                    x = P[last, 0, lane]
                    y = P[last, 1, lane]
                    z = P[last, 2, lane]
                    mx = x - prev[0, lane]
                    my = y - prev[1, lane]
                    mz = z - prev[2, lane]
                    if mx * mx + my * my + mz * mz < stol * stol and err > (1.0 - PROGRESS_FRACTION) * prev[3, lane]:
                        # effector_stalled: the stall checks begin; the single solve takes it
                        solve_alone(batch, bone_lengths, stop, out, i)
                        done = True
                    else:
                        prev[0, lane] = x  # the effector before the next iteration
                        prev[1, lane] = y
                        prev[2, lane] = z
                        prev[3, lane] = err
            if done:
                next_target = fill_lane(P, T, R, F, prev, index, count, lane, next_target, end, batch,
                                        bone_lengths, stop, out, total, eps)
                if index[lane] < 0:
                    active -= 1


@njit(cache=True, inline="always", error_model="numpy")
def lane_step(P, j, nj, length, lane, a0, a1, a2, x, y, z, f0, f1, f2, eps2):
    """``reach_sweep``'s step for one lane, operation for operation: joint ``j`` placed at
    ``length`` from the joint placed before it (``a``) along ``(x, y, z)`` = old ``p[j]`` - ``a``
    (the fallback ``f`` where they coincide); then the difference vector of joint ``nj`` (the
    stage's next joint; any row after its last, the result unused). Returns the new ``a`` and
    difference vector."""
    r2 = x * x + y * y + z * z
    small = r2 <= eps2
    # selects, not branches: the four lanes' steps stay straight-line code
    x = f0 if small else x
    y = f1 if small else y
    z = f2 if small else z
    r2 = 1.0 if small else r2
    s = length / r2
    qx = s * x
    qy = s * y
    qz = s * z
    rt = np.sqrt(r2)
    x = (P[nj, 0, lane] - a0) - qx * rt
    y = (P[nj, 1, lane] - a1) - qy * rt
    z = (P[nj, 2, lane] - a2) - qz * rt
    a0 = a0 + qx * rt
    a1 = a1 + qy * rt
    a2 = a2 + qz * rt
    P[j, 0, lane] = a0
    P[j, 1, lane] = a1
    P[j, 2, lane] = a2
    return a0, a1, a2, x, y, z


@njit(cache=True, inline="always", error_model="numpy")
def stage_lanes(P, A, F, bone_lengths, first, stop, step, eps2):
    """One FABRIK stage in all ``LANES`` lanes: joint ``first - step`` set to ``A`` (the targets,
    or the roots), then joints ``first``, ``first + step``, ... up to ``stop`` (excluded) placed
    by ``lane_step``; joint j and j - step are joined by bone ``min(j, j - step)``.

    Each lane's placed joint, difference vector and fallback direction are local variables, so
    they stay in registers across joints; held in arrays (a run-time lane loop) they cost a load,
    a store and the compiler's run-time overlap checks per joint, about a tenth of the batch's time
    on the Table 1 chain. Hence the four lanes written out."""
    back = first - step
    for c in range(3):
        for lane in range(LANES):
            P[back, c, lane] = A[c, lane]
    a00, a01, a02 = A[0, 0], A[1, 0], A[2, 0]
    a10, a11, a12 = A[0, 1], A[1, 1], A[2, 1]
    a20, a21, a22 = A[0, 2], A[1, 2], A[2, 2]
    a30, a31, a32 = A[0, 3], A[1, 3], A[2, 3]
    d00, d01, d02 = P[first, 0, 0] - a00, P[first, 1, 0] - a01, P[first, 2, 0] - a02
    d10, d11, d12 = P[first, 0, 1] - a10, P[first, 1, 1] - a11, P[first, 2, 1] - a12
    d20, d21, d22 = P[first, 0, 2] - a20, P[first, 1, 2] - a21, P[first, 2, 2] - a22
    d30, d31, d32 = P[first, 0, 3] - a30, P[first, 1, 3] - a31, P[first, 2, 3] - a32
    f00, f01, f02 = F[0, 0], F[1, 0], F[2, 0]
    f10, f11, f12 = F[0, 1], F[1, 1], F[2, 1]
    f20, f21, f22 = F[0, 2], F[1, 2], F[2, 2]
    f30, f31, f32 = F[0, 3], F[1, 3], F[2, 3]
    j = first
    final = stop - step
    while True:
        more = j != final
        nj = j + step if more else j  # (the last step's next row: any row will do)
        length = bone_lengths[j if step < 0 else j - 1]
        a00, a01, a02, d00, d01, d02 = lane_step(P, j, nj, length, 0, a00, a01, a02, d00, d01, d02,
                                                 f00, f01, f02, eps2)
        a10, a11, a12, d10, d11, d12 = lane_step(P, j, nj, length, 1, a10, a11, a12, d10, d11, d12,
                                                 f10, f11, f12, eps2)
        a20, a21, a22, d20, d21, d22 = lane_step(P, j, nj, length, 2, a20, a21, a22, d20, d21, d22,
                                                 f20, f21, f22, eps2)
        a30, a31, a32, d30, d31, d32 = lane_step(P, j, nj, length, 3, a30, a31, a32, d30, d31, d32,
                                                 f30, f31, f32, eps2)
        if not more:
            break
        j = nj


@njit(cache=True, error_model="numpy")
def store_lane(P, lane, out):
    for j in range(P.shape[0]):
        for c in range(3):
            out[j, c] = P[j, c, lane]


@njit(cache=True, error_model="numpy")
def fill_lane(P, T, R, F, prev, index, count, lane, next_target, end, batch, bone_lengths, stop, out, total, eps):
    """Give ``lane`` the next target from ``next_target`` (before ``end``) that needs plain
    iterations, solving the others (``solve_alone``) on the way. Returns the new ``next_target``;
    ``index[lane]`` is -1 when none was left."""
    initials, targets, roots = batch.initials, batch.targets, batch.roots
    shared_start = initials.shape[0] == 1
    shared_root = roots.shape[0] == 1
    tol, max_iter = stop.tol, stop.max_iter
    last = bone_lengths.shape[0]
    while next_target < end:
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
            solve_alone(batch, bone_lengths, stop, out, i)
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
        prev[0, lane] = start[last, 0]
        prev[1, lane] = start[last, 1]
        prev[2, lane] = start[last, 2]
        prev[3, lane] = err
        count[lane] = 0
        index[lane] = i
        return next_target
    index[lane] = -1
    return next_target


@njit(cache=True, error_model="numpy")
def batch_constrained(batch, bone_lengths, limits, stop, out):
    """Constrained FABRIK (``fabrik.kernels.fabrik_constrained.fabrik_constrained``, the kernel of
    ``fabrik.solve`` with ``fabrik-constrained``), ``prange`` over targets: ``batch`` a
    ``LimitedBatch`` (its ``rotations`` (1 or N, 3, 3) the oriented targets' frames, read when
    ``oriented``), ``limits`` a ``ChainLimits``, ``stop`` a ``Stop``, ``out`` a ``LimitedBatchOut``."""
    constrained_targets(batch.initials, bone_lengths, batch.targets, batch.roots, limits.table, limits.root_frame,
                        batch.rotations, batch.oriented, limits.planar, stop.tol, stop.orientation_tol, stop.max_iter,
                        out.positions, out.frames, out.iterations, out.errors, out.orientation_errors, out.codes)


@njit(cache=True, error_model="numpy", parallel=True)
def constrained_targets(initials, bone_lengths, targets, roots, table, root_frame, rotations, oriented, planar, tol,
                        orientation_tol, max_iter, out_p, out_frames, out_it, out_err, out_oerr, out_code):
    """``batch_constrained``'s loop, on its records' arrays (the records each target's solve takes
    are built in ``constrained_one``, outside the prange body)."""
    n_targets = targets.shape[0]
    ss = 0 if initials.shape[0] == 1 else 1
    rs = 0 if roots.shape[0] == 1 else 1
    qs = 0 if rotations.shape[0] == 1 else 1
    for i in prange(n_targets):
        p, frames, active, it, err, oerr, code = constrained_one(
            initials[i * ss], bone_lengths, targets[i], roots[i * rs], table, root_frame, rotations[i * qs],
            oriented, planar, tol, orientation_tol, max_iter)
        out_p[i] = p
        out_frames[i] = frames
        out_it[i] = it
        out_err[i] = err
        out_oerr[i] = oerr
        out_code[i] = code


@njit(cache=True, error_model="numpy")
def constrained_one(initial, bone_lengths, target, root, table, root_frame, rotation, oriented, planar, tol,
                    orientation_tol, max_iter):
    """One target of ``constrained_targets``: ``fabrik_constrained`` on records built from its arrays."""
    return fabrik_constrained(LimitedTask(initial, target, root, rotation, oriented), bone_lengths,
                              ChainLimits(table, root_frame, planar), Stop(tol, orientation_tol, max_iter))
