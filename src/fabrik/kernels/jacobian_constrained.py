"""Jacobian IK with joint limits on a single chain, compiled: the Jacobian step, then clamping.

Each iteration takes the unconstrained method's step (``fabrik.kernels.jacobian``:
``fill_jacobian`` and ``jacobian_step``, same modes, error clamp and angle clamp), turns every
bone's frame by the rotation the step gives it (joint j's rotation vector turns bones j..n-2, so
bone i's frame is turned by ``R_0 R_1 ... R_i``), and then *clamps*: walking from the root to the
effector, each bone's turned direction is projected into its joint's limit against its parent's
(already clamped) frame with ``limit_direction``, its twist clamped with ``limit_twist`` (without
a twist limit the frame follows the projected bone by the smallest rotation), and the joint after
it is placed at the bone's length along it. When the next joint is a hinge the bone is also turned
about itself, within its twist range, so that the hinge plane holds the child bone's turned
direction (``hinge_alignment_twist``, as constrained FABRIK's backward stage does). So every pose
after a step satisfies every limit, and bone lengths are exact.

Frames, the packed limit rows, the root frame and the limit conventions are those of
``fabrik.kernels.fabrik_constrained`` (row i limits bone i against bone i - 1's frame, the fixed
root frame for bone 0); the start pose is made legal by one clamping pass. Without limits a step
is exactly the unconstrained method's step.
"""

import numpy as np
from numba import njit

from fabrik.kernels.singularity import MAX_ESCAPES, fold_stuck_chain
from fabrik.kernels.constraints import (COL_AXIS, COL_HINGE, COL_TWIST_FLAG, COL_TYPE, TYPE_HINGE,
                                        hinge_alignment_twist, limit_direction, limit_twist, wrap_angle)
from fabrik.kernels.frames import (axis_angle_matrix, frames_along, planarise, reorthonormalise, rotate_frame, transport,
                                   twist_about_y, twist_between)
from fabrik.kernels.jacobian import clamped_error, fill_jacobian, jacobian_step
from fabrik.kernels.stopping import (MAX_ITERATIONS, REACHED, STALLED, UNREACHABLE, effector_stalled, stall_tol,
                                      stretched_to_rounding)
from fabrik.kernels.vec import TINY, chain_scale, dist3v


@njit(cache=True, error_model="numpy")
def restrict_frame(out, D, P, row, d, G):
    """out <- the desired frame D (3, 3; +Y the desired bone direction) restricted by the limit
    ``row`` against the reference frame P: the direction projected into the allowed region, the
    twist of D relative to P (carried onto the bone) clamped when the row limits it, else the frame
    carried from D onto the projected direction by the smallest rotation. ``out`` may be ``D``;
    d (3,) and G (3, 3) are scratch. Returns 1 when the limit is active."""
    d[0] = D[0, 1]
    d[1] = D[1, 1]
    d[2] = D[2, 1]
    act = limit_direction(row, P, d, False)
    if row[COL_TWIST_FLAG] != 0.0:
        transport(G, P, D[0, 1], D[1, 1], D[2, 1])
        psi, act_t = limit_twist(row, twist_between(G, D))
        transport(G, P, d[0], d[1], d[2])
        twist_about_y(out, G, psi)
        act += act_t
    else:
        transport(out, D, d[0], d[1], d[2])
    return 1 if act > 0 else 0


@njit(cache=True, error_model="numpy")
def clamp_chain(p, frames, desired, lengths, limits, root, root_frame, active, planar, G, d):
    """Place the chain from ``root`` with bone i along ``desired[i]`` restricted by its limit
    (module docstring). Writes p (n, 3), frames (n, 3, 3) and active (n,)."""
    n = p.shape[0]
    last = n - 1
    for k in range(3):
        p[0, k] = root[k]
    for i in range(last):
        P = root_frame if i == 0 else frames[i - 1]
        act = restrict_frame(frames[i], desired[i], P, limits[i], d, G)
        if planar:
            planarise(frames[i])
        c = i + 1
        if not planar and c <= last - 1 and limits[c, COL_TYPE] == TYPE_HINGE:
            # turn the bone about itself (within its twist range) so that the child's hinge plane
            # holds the child's desired direction
            tau, ok = hinge_alignment_twist(frames[i], limits[c, COL_AXIS], limits[c, COL_AXIS + 2],
                                            desired[c, 0, 1], desired[c, 1, 1], desired[c, 2, 1],
                                            limits[c, COL_HINGE], limits[c, COL_HINGE + 1])
            if ok:
                if limits[i, COL_TWIST_FLAG] != 0.0:
                    transport(G, P, frames[i, 0, 1], frames[i, 1, 1], frames[i, 2, 1])
                    psi = twist_between(G, frames[i])
                    psi_new, act_t = limit_twist(limits[i], wrap_angle(psi + tau))
                    tau = psi_new - psi
                    act += act_t
                twist_about_y(frames[i], frames[i], tau)
        active[i] = 1 if act > 0 else 0
        for k in range(3):
            p[i + 1, k] = p[i, k] + lengths[i] * frames[i, k, 1]
    frames[last, :, :] = frames[last - 1]
    active[last] = 0


@njit(cache=True, error_model="numpy")
def turned_frames(desired, frames, dtheta, R, M, tmp):
    """desired[i] <- (R_0 R_1 ... R_i) frames[i], R_j the rotation of rotation vector
    dtheta[3j:3j+3] (world axes): each bone turned as the unconstrained step turns it, then
    re-orthonormalised. Without that the rounding of the products carried over from step to step
    (the frames are the last step's) and grew over thousands of steps: a frame's +Y, which places
    the next joint, drifted off unit length, and 5 of 10,000 fuzzed solves (issue 31) ended with a
    frame 1.2-1.5e-6 rad off its own bone."""
    n = frames.shape[0]
    for r in range(3):
        for c in range(3):
            M[r, c] = 1.0 if r == c else 0.0
    for i in range(n - 1):
        wx = dtheta[3 * i]
        wy = dtheta[3 * i + 1]
        wz = dtheta[3 * i + 2]
        angle = np.sqrt(wx * wx + wy * wy + wz * wz)
        if angle > 1e-300:
            axis_angle_matrix(R, wx / angle, wy / angle, wz / angle, angle)
            for r in range(3):
                for c in range(3):
                    tmp[r, c] = M[r, 0] * R[0, c] + M[r, 1] * R[1, c] + M[r, 2] * R[2, c]
            M[:, :] = tmp
        rotate_frame(desired[i], frames[i], M)
        reorthonormalise(desired[i])
    desired[n - 1, :, :] = desired[n - 2]


@njit(cache=True, error_model="numpy")
def jacobian_constrained(initial, lengths, target, root, limits, root_frame, planar, tol, max_iter, mode, damping,
                         max_error_step, max_angle_step, alpha):
    """Solve one constrained chain with a Jacobian method, clamping after every step.

    Args: initial (n, 3) start pose (never written); lengths (n-1,); target, root (3,); limits
    (n, 13); root_frame (3, 3); planar: a 2D chain in z = 0 (only rotations about z, frames kept
    in the plane); tol (model units); max_iter; mode, damping, max_error_step, max_angle_step,
    alpha as ``fabrik.kernels.jacobian.jacobian_chain``.

    Returns (positions (n, 3), frames (n, 3, 3), active (n,) int64, iterations, error, 0.0,
    status_code), the tuple of ``fabrik_constrained`` (no orientation error: no oriented targets).
    A chain stuck on the line to its target is folded (``fabrik.kernels.singularity``) and clamped
    again, as the unconstrained method does.
    """
    n = initial.shape[0]
    last = n - 1
    p = np.empty((n, 3))
    frames = np.empty((n, 3, 3))
    desired = np.empty((n, 3, 3))
    frames_along(desired, initial, root_frame)
    active = np.zeros(n, dtype=np.int64)
    G = np.empty((3, 3))
    R = np.empty((3, 3))
    M = np.empty((3, 3))
    tmp = np.empty((3, 3))
    d = np.empty(3)
    clamp_chain(p, frames, desired, lengths, limits, root, root_frame, active, planar, G, d)
    total, scale = chain_scale(lengths)
    dist = np.sqrt((target[0] - root[0]) ** 2 + (target[1] - root[1]) ** 2 + (target[2] - root[2]) ** 2)
    unreachable = dist > total
    err = dist3v(p, last, target)
    if err <= tol:
        return p, frames, active, 0, err, 0.0, REACHED
    jac = np.zeros((3, 3 * (n - 1)))
    dtheta = np.zeros(3 * (n - 1))
    e = np.zeros(3)
    bent = np.empty((n, 3))
    bends = 0
    it = 0
    while it < max_iter:
        px = p[last, 0]
        py = p[last, 1]
        pz = p[last, 2]
        prev_err = err
        clamped_error(p, last, target, err, max_error_step, e)
        fill_jacobian(p, planar, jac)
        jacobian_step(jac, e, mode, damping, max_angle_step, alpha, dtheta)
        turned_frames(desired, frames, dtheta, R, M, tmp)
        clamp_chain(p, frames, desired, lengths, limits, root, root_frame, active, planar, G, d)
        it += 1
        err = dist3v(p, last, target)
        if err <= tol:
            return p, frames, active, it, err, 0.0, REACHED
        if stretched_to_rounding(err, dist, total):
            return p, frames, active, it, err, 0.0, UNREACHABLE
        if effector_stalled(p, last, px, py, pz, stall_tol(tol, scale), err, prev_err):
            bent[:, :] = p
            if bends < MAX_ESCAPES and fold_stuck_chain(bent, lengths, target, err, tol, scale):
                for i in range(last):
                    x = bent[i + 1, 0] - bent[i, 0]
                    y = bent[i + 1, 1] - bent[i, 1]
                    z = bent[i + 1, 2] - bent[i, 2]
                    r = np.sqrt(x * x + y * y + z * z)
                    if r > TINY * scale:
                        transport(desired[i], frames[i], x / r, y / r, z / r)
                    else:
                        desired[i, :, :] = frames[i]
                clamp_chain(p, frames, desired, lengths, limits, root, root_frame, active, planar, G, d)
                bends += 1
                err = dist3v(p, last, target)
                continue
            return p, frames, active, it, err, 0.0, (UNREACHABLE if unreachable else STALLED)
    return p, frames, active, it, err, 0.0, MAX_ITERATIONS
