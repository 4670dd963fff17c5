"""The rotation-based chain methods, CCD and the Jacobian methods, with or without joint limits: one
iteration driver, ``rotation_chain``, compiled. The step is the only difference: a CCD sweep
(``fabrik.kernels.ccd``) or a Jacobian step (``fabrik.kernels.jacobian``; with limits, the turned
frames clamped). Set-up, stopping and the singularity escape are shared:

* ``REACHED`` when the effector is within ``tol`` (and, for an oriented target, the last bone's
  frame within ``orientation_tol``); ``UNREACHABLE`` when a chain at a target beyond its reach is
  as close as it can come to rounding (``stopping.stretched_to_rounding``);
* after a stall (``effector_stalled``) a chain stuck on the line to its goal is folded
  (``fabrik.kernels.singularity``, at most ``MAX_ESCAPES`` times; with limits each folded bone's
  frame follows it, and a Jacobian method clamps again); else it stops ``UNREACHABLE`` or
  ``STALLED``: without limits ``UNREACHABLE`` beyond the reach or inside the inner reach with the
  effector as close as it can come, and a reachable target's solve goes on while its error is on
  course (``confirm_stall``); with limits ``UNREACHABLE`` beyond the reach;
* ``MAX_ITERATIONS`` at the cap.

Constrained CCD keeps three rules it had before the kernels were merged (they decide its
iteration counts, and constrained FABRIK polishes its answers with it): its no-progress test uses
``tol`` itself, not ``stall_tol``; it has no stretched-to-rounding stop; it folds only with a sweep
left and does not re-measure the error after a fold. Statuses and arrays as in ``fabrik.kernels.fabrik_chain``.
"""

import numpy as np
from numba import njit

from fabrik.kernels.ccd import ccd_sweep, ccd_sweep_limited, limit_start_pose, rotate_tail_vec, start_pose
from fabrik.kernels.frames import frames_along, orientation_error, planarise, rotate_frame, transport
from fabrik.kernels.jacobian import clamp_chain, clamped_error, fill_jacobian, is_planar, jacobian_step, turned_frames
from fabrik.kernels.records import ChainLimits, LimitedTask, RotationMethod, Stop
from fabrik.kernels.singularity import MAX_ESCAPES, fold_stuck_chain
from fabrik.kernels.stopping import (MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, STALLED, UNREACHABLE, confirm_stall,
                                      effector_stalled, stall_tol, stretched_to_rounding, unavoidable_error)
from fabrik.kernels.vec import TINY, chain_scale, dist3v, inner_reach

#: ``RotationMethod.mode`` of CCD, next to the Jacobian modes of ``fabrik.kernels.jacobian`` (0..3).
CCD = -1


@njit(cache=True, error_model="numpy")
def rotation_chain(p, frames, active, task, lengths, limits, stop, method):
    """Solve one chain from a start pose by CCD (``method.mode`` ``CCD``) or a Jacobian method
    (``method``: a ``RotationMethod``, its mode and settings as ``fabrik.kernels.jacobian.jacobian_step``
    takes them), with the limits ``limits`` (a ``ChainLimits``; its table (0, w): none).

    ``p`` (n, 3) is the start pose, rooted and rigid (with limits: legal, with its bone frames
    ``frames`` (n, 3, 3) and ``active`` (n,) int64; without, (0, 3, 3) and (0,)); all three are
    updated in place and returned. ``task`` (a ``LimitedTask``): its target, root and target
    rotation (an oriented target: CCD only); its ``initial`` is not read, ``p`` is the start.
    ``stop``: a ``Stop``.

    Returns (positions, frames, active, iterations, error, orientation_error, status_code).
    """
    target, root, target_rot, oriented = task.target, task.root, task.target_rot, task.oriented
    table, root_frame, planar = limits.table, limits.root_frame, limits.planar
    tol, orientation_tol, max_iter = stop.tol, stop.orientation_tol, stop.max_iter
    mode = method.mode
    n = p.shape[0]
    last = n - 1
    limited = table.shape[0] > 0
    own_rules = limited and mode == CCD  # constrained CCD's own rules (module docstring)
    total, scale = chain_scale(lengths)
    stop_tol = tol if own_rules else stall_tol(tol, scale)
    dist = np.sqrt((target[0] - root[0]) ** 2 + (target[1] - root[1]) ** 2 + (target[2] - root[2]) ** 2)
    inner = inner_reach(lengths, total)
    reachable = not limited and inner - tol <= dist <= total
    # the goal of the turns: the target, or with an oriented target the joint before the effector's
    goal = target.copy()
    end = last
    if oriented and last >= 1:
        end = last - 1
        for k in range(3):
            goal[k] = target[k] - lengths[last - 1] * target_rot[k, 1]
    err = dist3v(p, last, target)
    oerr = orientation_error(frames[last - 1], target_rot) if oriented else 0.0
    if err <= tol and oerr <= orientation_tol:
        return p, frames, active, 0, err, oerr, REACHED
    m = 0 if mode == CCD else 3 * (n - 1)
    jac = np.zeros((3, m))
    dtheta = np.zeros(m)
    e = np.zeros(3)
    per_bone = np.empty((n if limited else 0, 3, 3))  # CCD's turns, the Jacobian's turned frames
    W = np.empty((5, 3, 3))
    d = np.empty(3)
    bends = 0
    drop = last_drop = np.inf  # how much the last iterations lowered the error: none yet
    probe_err, probe_end = np.inf, 0  # confirm_stall's probe: none yet
    it = 0
    while it < max_iter:
        px, py, pz = p[last, 0], p[last, 1], p[last, 2]
        prev_err, prev_oerr = err, oerr
        older_drop, last_drop = last_drop, drop
        if mode == CCD:
            if limited:
                ccd_sweep_limited(p, frames, lengths, goal, end, table, root_frame, target_rot, oriented, planar,
                                  active, per_bone, W, d)
            else:
                ccd_sweep(p, target, scale)
        else:
            clamped_error(p, last, target, err, method.max_error_step, e)
            fill_jacobian(p, planar, jac)
            jacobian_step(jac, e, mode, method.damping, method.max_angle_step, method.alpha, dtheta)
            if limited:
                turned_frames(per_bone, frames, dtheta, W[0], W[1], W[2])
                clamp_chain(p, frames, per_bone, lengths, table, root, root_frame, active, planar, W[3], d)
            else:
                for j in range(last - 1, -1, -1):
                    rotate_tail_vec(p, j, j + 1, dtheta[3 * j], dtheta[3 * j + 1], dtheta[3 * j + 2])
                if planar:
                    p[:, 2] = 0.0
        it += 1
        err = dist3v(p, last, target)
        if oriented:
            oerr = orientation_error(frames[last - 1], target_rot)
        if err <= tol and oerr <= orientation_tol:
            return p, frames, active, it, err, oerr, REACHED
        if not own_rules and stretched_to_rounding(err, dist, total):
            return p, frames, active, it, err, oerr, UNREACHABLE
        drop = prev_err - err
        if not (effector_stalled(p, last, px, py, pz, stop_tol, err, prev_err)
                and (oerr <= orientation_tol or oerr > (1.0 - PROGRESS_FRACTION) * prev_oerr)):
            continue
        jacobian_limited = limited and mode != CCD
        if (bends < MAX_ESCAPES and (it < max_iter or not own_rules) and end >= 1
                and fold_on_line(p, frames, per_bone if jacobian_limited else frames, lengths, goal, end, tol, scale,
                                 planar and not jacobian_limited)):
            bends += 1
            if jacobian_limited:
                clamp_chain(p, frames, per_bone, lengths, table, root, root_frame, active, planar, W[3], d)
            if not own_rules:
                err = dist3v(p, last, target)
                drop = np.inf  # the trend starts again
            continue
        if limited:
            verdict = UNREACHABLE if dist > total else STALLED
        else:
            short = err > unavoidable_error(dist, total, inner, tol) + stall_tol(tol, scale)
            verdict = UNREACHABLE if (dist > total or dist < inner - tol) and not short else STALLED
        if not (verdict == STALLED and reachable):
            return p, frames, active, it, err, oerr, verdict
        # slow is not stuck: a reachable target's error still on course, or still falling, goes on
        stalled, probe_err, probe_end = confirm_stall(err, prev_err, last_drop, older_drop, tol, it, probe_err,
                                                      probe_end)
        if stalled:
            return p, frames, active, it, err, oerr, verdict
    return p, frames, active, it, err, oerr, MAX_ITERATIONS


@njit(cache=True, error_model="numpy")
def fold_on_line(p, frames, out, lengths, goal, end, tol, scale, planar):
    """The one singularity rule on joints 0..``end`` aimed at ``goal``: fold them when they are
    short of it and on its line (``fold_stuck_chain``); then, with frames, write into ``out`` (which
    may be ``frames``) each bone's frame carried onto its folded direction by the smallest rotation
    (snapped onto the plane when ``planar``). A zero-length bone has no direction: its frame turns
    with its parent's, so that it keeps its place within its joint's limits (a CCD sweep never
    turns it back; tests/project/test_fuzz.py). Returns True when folded."""
    q = p[:end + 1].copy()
    err = dist3v(q, end, goal)
    if not fold_stuck_chain(q, lengths[:end], goal, err, tol, scale):
        return False
    old = frames[:end].copy()
    turn = np.empty((3, 3))
    for i in range(end if frames.shape[0] > 0 else 0):
        x = q[i + 1, 0] - q[i, 0]
        y = q[i + 1, 1] - q[i, 1]
        z = q[i + 1, 2] - q[i, 2]
        r = np.sqrt(x * x + y * y + z * z)
        if r > TINY * scale:
            transport(out[i], old[i], x / r, y / r, z / r)
        elif i > 0:
            for a in range(3):  # turn = out[i - 1] old[i - 1]^T, the parent's turn
                for b in range(3):
                    turn[a, b] = (out[i - 1, a, 0] * old[i - 1, b, 0] + out[i - 1, a, 1] * old[i - 1, b, 1]
                                  + out[i - 1, a, 2] * old[i - 1, b, 2])
            rotate_frame(out[i], old[i], turn)
        else:
            out[i, :, :] = old[i]
        if planar:
            planarise(out[i])
    p[:end + 1, :] = q
    return True


@njit(cache=True, error_model="numpy")
def ccd_chain(task, lengths, stop):
    """Solve one chain by CCD: ``jacobian_chain`` with mode ``CCD`` (``stop.max_iter`` counts sweeps)."""
    return jacobian_chain(task, lengths, stop, RotationMethod(CCD, 0.0, 0.0, 0.0, 0.0))


@njit(cache=True, error_model="numpy")
def jacobian_chain(task, lengths, stop, method):
    """Solve one chain with a Jacobian method. Returns (positions, iterations, error, status).

    task: a ``ChainTask``: its ``initial`` (n, 3) start pose is never written; its bone directions
    are kept, hung from ``root`` with the exact ``lengths`` (n-1,) (``fabrik.kernels.ccd.start_pose``).
    stop: a ``Stop`` (``tol`` >= 0 in model units, ``max_iter`` >= 0; ``orientation_tol`` not read).
    method: a ``RotationMethod``, mode 0..3 (``jacobian_step``) or ``CCD``.
    """
    target, root = task.target, task.root
    p = start_pose(task.initial, lengths, root, target)
    # no limits, no oriented target; planar when the pose and the target lie in z = 0
    q, _, _, it, err, _, code = rotation_chain(p, np.empty((0, 3, 3)), np.zeros(0, dtype=np.int64),
                                               LimitedTask(task.initial, target, root, np.eye(3), False), lengths,
                                               ChainLimits(np.empty((0, 13)), np.eye(3), is_planar(p, target)),
                                               Stop(stop.tol, 0.0, stop.max_iter), method)
    return q, it, err, code


@njit(cache=True, error_model="numpy")
def ccd_constrained(task, lengths, limits, stop):
    """Solve one constrained chain by CCD; arguments and returns as
    ``fabrik.kernels.fabrik_constrained.fabrik_constrained``."""
    p = task.initial.copy()
    frames = np.empty((p.shape[0], 3, 3))
    frames_along(frames, p, limits.root_frame)
    return ccd_constrained_from(p, frames, task, lengths, limits, stop)


@njit(cache=True, error_model="numpy")
def ccd_constrained_from(p, frames, task, lengths, limits, stop):
    """``ccd_constrained`` from a pose ``p`` with its bone frames (n, 3, 3), both updated in place
    and returned (``task.initial`` not read): what constrained chain FABRIK polishes its best pose
    with (the frames keep the twists, which the frames ``frames_along`` rebuilds from positions
    alone would not)."""
    active = np.zeros(p.shape[0], dtype=np.int64)
    limit_start_pose(p, frames, lengths, limits.table, task.root, limits.root_frame, active, limits.planar)
    return rotation_chain(p, frames, active, task, lengths, limits, stop, RotationMethod(CCD, 0.0, 0.0, 0.0, 0.0))


@njit(cache=True, error_model="numpy")
def jacobian_constrained(task, lengths, limits, stop, method):
    """Solve one constrained chain with a Jacobian method, clamping after every step (``task`` a
    ``ChainTask``: no oriented targets; its ``initial``, never written, made legal by one clamping
    pass). ``limits`` a ``ChainLimits``, ``stop`` a ``Stop`` (``orientation_tol`` not read),
    ``method`` a ``RotationMethod`` (a Jacobian mode); returns the 7 values of ``rotation_chain``
    (orientation error 0)."""
    initial, root_frame = task.initial, limits.root_frame
    n = initial.shape[0]
    p = np.empty((n, 3))
    frames = np.empty((n, 3, 3))
    desired = np.empty((n, 3, 3))
    frames_along(desired, initial, root_frame)
    active = np.zeros(n, dtype=np.int64)
    clamp_chain(p, frames, desired, lengths, limits.table, task.root, root_frame, active, limits.planar,
                np.empty((3, 3)), np.empty(3))
    return rotation_chain(p, frames, active, LimitedTask(initial, task.target, task.root, root_frame, False), lengths,
                          limits, Stop(stop.tol, 0.0, stop.max_iter), method)
