"""Cyclic coordinate descent (CCD) on a single chain, compiled; plus the rotation helpers that the
other rotation-based kernels (Jacobian, triangulation) share.

CCD (Wang & Chen 1991; section 5 of Aristidou & Lasenby 2011): one iteration is one sweep over
the joints from the one before the end effector inwards to the root; at each joint the sub-chain
beyond it is rotated rigidly about it so that the end effector points at the target. Rotations are
applied to positions with Rodrigues' formula, so bone lengths stay exact up to rounding.

Status codes follow ``fabrik.solvers.result.STATUSES``: 0 reached, 1 unreachable, 2 stalled,
3 max_iterations. Arrays are (n, 3); 2D chains come in embedded in z = 0 and every rotation used
for them is about the z axis, so they stay planar.
"""

import numpy as np
from numba import njit

from fabrik.kernels.singularity import MAX_ESCAPES, fold_stuck_chain
from fabrik.kernels.vec import TINY, any_perpendicular, chain_scale, dist3v, inner_reach

from fabrik.kernels.stopping import (MAX_ITERATIONS, REACHED, STALLED, UNREACHABLE, confirm_stall,
                                      effector_stalled, stall_tol, stretched_to_rounding, unavoidable_error)

@njit(cache=True, error_model="numpy")
def unit_or(vx, vy, vz, out, fallback, eps):
    """Write (vx, vy, vz) normalised into ``out``; the unit ``fallback`` when its norm <= eps."""
    r = np.sqrt(vx * vx + vy * vy + vz * vz)
    if r > eps:
        out[0] = vx / r
        out[1] = vy / r
        out[2] = vz / r
        return True
    out[0] = fallback[0]
    out[1] = fallback[1]
    out[2] = fallback[2]
    return False


@njit(cache=True, error_model="numpy")
def start_pose(initial, bone_lengths, root, target):
    """The start pose of a rotation-based solver: ``initial``'s bone directions, hung from ``root``
    with the chain's exact bone lengths (so a moved root translates the chain, and a pose with
    slightly wrong lengths is made rigid). A bone of zero length in ``initial`` takes the previous
    bone's direction (the root-to-target direction for the first one).
    """
    n = initial.shape[0]
    total, scale = chain_scale(bone_lengths)
    p = np.empty((n, 3))
    for k in range(3):
        p[0, k] = root[k]
    prev = np.zeros(3)
    rt = np.zeros(3)
    ex = np.zeros(3)
    ex[0] = 1.0
    unit_or(target[0] - root[0], target[1] - root[1], target[2] - root[2], rt, ex, TINY * scale)
    for k in range(3):
        prev[k] = rt[k]
    u = np.zeros(3)
    for i in range(n - 1):
        unit_or(initial[i + 1, 0] - initial[i, 0], initial[i + 1, 1] - initial[i, 1],
                initial[i + 1, 2] - initial[i, 2], u, prev, TINY * scale)
        for k in range(3):
            p[i + 1, k] = p[i, k] + bone_lengths[i] * u[k]
            prev[k] = u[k]
    return p


@njit(cache=True, error_model="numpy")
def start_pose_result(initial, bone_lengths, root, target, tol):
    """What a solve with no iterations (``max_iter`` 0) returns: (``start_pose``, 0, error,
    status), the status ``REACHED`` within ``tol``, else ``MAX_ITERATIONS`` (as from every
    method: ``UNREACHABLE`` means the chain was turned at the target, which takes an
    iteration)."""
    p = start_pose(initial, bone_lengths, root, target)
    err = dist3v(p, p.shape[0] - 1, target)
    return p, 0, err, (REACHED if err <= tol else MAX_ITERATIONS)


@njit(cache=True, inline="always", error_model="numpy")
def rotate_tail(p, j, first, axis, c, s):
    """Rotate joints ``first..n-1`` about joint ``j`` by the angle with cosine ``c`` and sine ``s``
    about the unit ``axis`` (Rodrigues' formula; right-handed)."""
    n = p.shape[0]
    ax = axis[0]
    ay = axis[1]
    az = axis[2]
    for m in range(first, n):
        vx = p[m, 0] - p[j, 0]
        vy = p[m, 1] - p[j, 1]
        vz = p[m, 2] - p[j, 2]
        kd = (ax * vx + ay * vy + az * vz) * (1.0 - c)
        cx = ay * vz - az * vy
        cy = az * vx - ax * vz
        cz = ax * vy - ay * vx
        p[m, 0] = p[j, 0] + vx * c + cx * s + ax * kd
        p[m, 1] = p[j, 1] + vy * c + cy * s + ay * kd
        p[m, 2] = p[j, 2] + vz * c + cz * s + az * kd


@njit(cache=True, error_model="numpy")
def rotate_tail_vec(p, j, first, wx, wy, wz):
    """Rotate joints ``first..n-1`` about joint ``j`` by the rotation vector (wx, wy, wz)
    (axis times angle in radians)."""
    angle = np.sqrt(wx * wx + wy * wy + wz * wz)
    if angle <= 1e-300:
        return
    axis = np.empty(3)
    axis[0] = wx / angle
    axis[1] = wy / angle
    axis[2] = wz / angle
    rotate_tail(p, j, first, axis, np.cos(angle), np.sin(angle))


#: ``bend_or_stop``'s answer when it bent the chain and the solve goes on.
BENT = -1


@njit(cache=True, error_model="numpy")
def bend_or_stop(p, bone_lengths, target, scale, err, dist, total, inner, tol, bends):
    """What a rotation-based chain solver does when its effector stalls: a chain stuck on the line
    to its target is folded (``fabrik.kernels.singularity``, at most ``MAX_ESCAPES`` times;
    returns ``BENT``); otherwise the status to stop with: ``UNREACHABLE`` when the target is
    beyond the chain's reach (``total``) or inside its inner reach (``inner``) and the effector
    is as close to it as the chain can come (within ``tol``), else ``STALLED``."""
    if bends < MAX_ESCAPES and fold_stuck_chain(p, bone_lengths, target, err, tol, scale):
        return BENT
    short = err > unavoidable_error(dist, total, inner, tol) + stall_tol(tol, scale)
    return UNREACHABLE if (dist > total or dist < inner - tol) and not short else STALLED


@njit(cache=True, error_model="numpy")
def ccd_sweep(p, target, scale):
    """One CCD iteration in place: joints n-2 .. 0, each turning the effector towards the target."""
    n = p.shape[0]
    last = n - 1
    axis = np.empty(3)
    eps = TINY * scale
    for j in range(last - 1, -1, -1):
        ax_ = p[last, 0] - p[j, 0]
        ay_ = p[last, 1] - p[j, 1]
        az_ = p[last, 2] - p[j, 2]
        bx = target[0] - p[j, 0]
        by = target[1] - p[j, 1]
        bz = target[2] - p[j, 2]
        na = np.sqrt(ax_ * ax_ + ay_ * ay_ + az_ * az_)
        nb = np.sqrt(bx * bx + by * by + bz * bz)
        if na <= eps or nb <= eps:
            continue  # effector or target on the joint: no direction to turn to
        cx = ay_ * bz - az_ * by
        cy = az_ * bx - ax_ * bz
        cz = ax_ * by - ay_ * bx
        nc = np.sqrt(cx * cx + cy * cy + cz * cz)
        c = (ax_ * bx + ay_ * by + az_ * bz) / (na * nb)
        s = nc / (na * nb)
        if nc > 1e-15 * na * nb:
            axis[0] = cx / nc
            axis[1] = cy / nc
            axis[2] = cz / nc
        elif c < 0.0:
            # pointing exactly away: half a turn about an axis perpendicular to the effector
            # direction (about z for planar chains: u x perpendicular(u) = +-z)
            u = np.empty(3)
            u[0] = ax_ / na
            u[1] = ay_ / na
            u[2] = az_ / na
            w = any_perpendicular(u)
            axis[0] = u[1] * w[2] - u[2] * w[1]
            axis[1] = u[2] * w[0] - u[0] * w[2]
            axis[2] = u[0] * w[1] - u[1] * w[0]
            c = -1.0
            s = 0.0
        else:
            continue  # already pointing at the target
        if c > 1.0:
            c = 1.0
        elif c < -1.0:
            c = -1.0
        rotate_tail(p, j, j + 1, axis, c, s)


@njit(cache=True, error_model="numpy")
def ccd_chain(initial, bone_lengths, target, root, tol, max_iter):
    """Solve one chain by CCD. Returns (positions, iterations, error, status_code).

    initial: (n, 3) start pose (never mutated; its bone directions are kept, hung from ``root``
    with the exact ``bone_lengths``); bone_lengths: (n-1,); target, root: (3,); tol >= 0 in
    model units; max_iter >= 0 sweeps.
    """
    p = start_pose(initial, bone_lengths, root, target)
    n = p.shape[0]
    last = n - 1
    total, scale = chain_scale(bone_lengths)
    dist = dist3v(p, 0, target)
    inner = inner_reach(bone_lengths, total)
    reachable = inner - tol <= dist <= total
    err = dist3v(p, last, target)
    if err <= tol:
        return p, 0, err, REACHED
    bends = 0
    drop = last_drop = np.inf  # how much the last iterations lowered the error: none yet
    probe_err, probe_end = np.inf, 0  # confirm_stall's probe: none yet
    it = 0
    while it < max_iter:
        px = p[last, 0]
        py = p[last, 1]
        pz = p[last, 2]
        prev_err = err
        older_drop = last_drop
        last_drop = drop
        ccd_sweep(p, target, scale)
        it += 1
        err = dist3v(p, last, target)
        if err <= tol:
            return p, it, err, REACHED
        if stretched_to_rounding(err, dist, total):
            return p, it, err, UNREACHABLE
        drop = prev_err - err
        if effector_stalled(p, last, px, py, pz, stall_tol(tol, scale), err, prev_err):
            verdict = bend_or_stop(p, bone_lengths, target, scale, err, dist, total, inner, tol, bends)
            if verdict == BENT:
                bends += 1
                err = dist3v(p, last, target)
                drop = np.inf  # the trend starts again
                continue
            if not (verdict == STALLED and reachable):
                return p, it, err, verdict
            # slow is not stuck: a reachable target's error still on course, or still falling, goes on
            stalled, probe_err, probe_end = confirm_stall(err, prev_err, last_drop, older_drop, tol, it, probe_err,
                                                          probe_end)
            if stalled:
                return p, it, err, verdict
    return p, it, err, MAX_ITERATIONS
