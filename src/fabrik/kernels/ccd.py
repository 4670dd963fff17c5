"""The sweeps of cyclic coordinate descent (CCD) on a single chain, with and without joint limits,
compiled; plus the rotation helpers that the other rotation-based kernels (Jacobian, FTL,
triangulation) share. The iteration driver, set-up and stopping rules are
``fabrik.kernels.rotation_chain``'s.

CCD (Wang & Chen 1991; section 5 of Aristidou & Lasenby 2011): one iteration is one sweep over
the joints from the one before the end effector inwards to the root; at each joint the sub-chain
beyond it is rotated rigidly about it so that the end effector points at the target. Without
limits (``ccd_sweep``) rotations are applied to positions with Rodrigues' formula, so bone lengths
stay exact up to rounding; 2D chains come in embedded in z = 0 and every rotation used for them is
about the z axis, so they stay planar.

With limits (``ccd_sweep_limited``; the paper's constrained comparison; frames and limit rows as
in ``fabrik.kernels.fabrik_chain``) at joint j the smallest rotation pointing the effector at the
goal is proposed; bone j's new direction is then restricted by joint j's limit against its parent
frame and its twist clamped, and the rotation actually applied to the sub-chain is the one taking
bone j's old frame to that restricted frame. With an oriented target the goal of joints 0..n-3 is
``target - L * target_y`` and joint n-2 turns the last bone towards the target frame. Limits hold
after every joint update, so every returned pose satisfies them (the start pose is made legal by
``limit_start_pose``).
"""

import numpy as np
from numba import njit

from fabrik.kernels.constraints import limit_direction, limit_twist
from fabrik.kernels.frames import (planarise, reorthonormalise, rotate_about, rotate_frame, rotation_between, transport,
                                   twist_about_y, twist_between)
from fabrik.kernels.stopping import MAX_ITERATIONS, REACHED
from fabrik.kernels.vec import TINY, any_perpendicular, chain_scale, dist3v


@njit(cache=True, error_model="numpy")
def unit_or(vx, vy, vz, out, fallback, eps):
    """Write (vx, vy, vz) normalised into ``out``; the unit ``fallback`` when its norm <= eps."""
    r = np.sqrt(vx * vx + vy * vy + vz * vz)
    if r > eps:
        out[0], out[1], out[2] = vx / r, vy / r, vz / r
        return True
    out[0], out[1], out[2] = fallback[0], fallback[1], fallback[2]
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
    p[0] = root
    prev = np.zeros(3)
    ex = np.array((1.0, 0.0, 0.0))
    unit_or(target[0] - root[0], target[1] - root[1], target[2] - root[2], prev, ex, TINY * scale)
    for i in range(n - 1):
        unit_or(initial[i + 1, 0] - initial[i, 0], initial[i + 1, 1] - initial[i, 1],
                initial[i + 1, 2] - initial[i, 2], prev, prev, TINY * scale)
        for k in range(3):
            p[i + 1, k] = p[i, k] + bone_lengths[i] * prev[k]
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
    ax, ay, az = axis[0], axis[1], axis[2]
    for m in range(first, p.shape[0]):
        rx, ry, rz = rotate_about(ax, ay, az, c, s, p[m, 0] - p[j, 0], p[m, 1] - p[j, 1], p[m, 2] - p[j, 2])
        p[m, 0] = p[j, 0] + rx
        p[m, 1] = p[j, 1] + ry
        p[m, 2] = p[j, 2] + rz


@njit(cache=True, error_model="numpy")
def rotate_tail_vec(p, j, first, wx, wy, wz):
    """Rotate joints ``first..n-1`` about joint ``j`` by the rotation vector (wx, wy, wz)
    (axis times angle in radians)."""
    angle = np.sqrt(wx * wx + wy * wy + wz * wz)
    if angle <= 1e-300:
        return
    rotate_tail(p, j, first, np.array((wx / angle, wy / angle, wz / angle)), np.cos(angle), np.sin(angle))


@njit(cache=True, error_model="numpy")
def half_turn(axis, u):
    """axis <- u x any_perpendicular(u), the axis of a half turn reversing the unit ``u`` (+-z for
    ``u`` in the z = 0 plane, so planar chains stay planar). Returns its (cosine, sine): (-1, 0)."""
    w = any_perpendicular(u)
    axis[0] = u[1] * w[2] - u[2] * w[1]
    axis[1] = u[2] * w[0] - u[0] * w[2]
    axis[2] = u[0] * w[1] - u[1] * w[0]
    return -1.0, 0.0


@njit(cache=True, error_model="numpy")
def ccd_sweep(p, target, scale):
    """One CCD iteration in place: joints n-2 .. 0, each turning the effector towards the target."""
    last = p.shape[0] - 1
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
            axis[0], axis[1], axis[2] = cx / nc, cy / nc, cz / nc
        elif c < 0.0:  # pointing exactly away
            c, s = half_turn(axis, np.array((ax_ / na, ay_ / na, az_ / na)))
        else:
            continue  # already pointing at the target
        rotate_tail(p, j, j + 1, axis, min(1.0, max(-1.0, c)), s)


@njit(cache=True, error_model="numpy")
def limit_start_pose(p, frames, lengths, limits, root, root_frame, active, planar):
    """Re-place the chain from the root with every limit enforced (once, on the start pose of a
    limited CCD solve); a planar chain's frames are kept on the plane as they are made, since the
    next joint's limit is read in them, and snapped onto it again at the end."""
    n = p.shape[0]
    G = np.empty((3, 3))
    d = np.empty(3)
    p[0] = root
    for i in range(n - 1):
        P = root_frame if i == 0 else frames[i - 1]
        d[:] = frames[i, :, 1]
        act = limit_direction(limits[i], P, d, False)
        transport(G, P, frames[i, 0, 1], frames[i, 1, 1], frames[i, 2, 1])
        psi, act_t = limit_twist(limits[i], twist_between(G, frames[i]))
        transport(G, P, d[0], d[1], d[2])
        twist_about_y(frames[i], G, psi)
        if planar:
            planarise(frames[i])
        active[i] = 1 if act + act_t > 0 else 0
        for k in range(3):
            p[i + 1, k] = p[i, k] + lengths[i] * d[k]
    frames[n - 1, :, :] = frames[n - 2]
    if planar:
        # (a transported start frame can come out with +Z flipped)
        for i in range(n):
            planarise(frames[i])


@njit(cache=True, error_model="numpy")
def ccd_sweep_limited(p, frames, lengths, goal, end, limits, root_frame, target_rot, oriented, planar, active, turns,
                      W, d):
    """One limited CCD iteration in place (module docstring): joints n-2 .. 0 turn joint ``end``
    (the effector, or the joint before it for an oriented target) towards ``goal``, each turn
    restricted by the joint's limits. Updates ``p``, ``frames`` and ``active``; ``turns``
    (n, 3, 3), ``W`` (5, 3, 3) and ``d`` (3,) are scratch.

    Within a sweep joint j only reads its own and its parent's frame and its own position, which
    the turns of the joints after it have not touched, and the effector: so the sweep turns the
    effector alone and records each turn Q_j; the frames after joint j are brought up to date once
    afterwards (frame i is Q_0 Q_1 .. Q_(i-1) times the frame its own step set), and the joints
    re-seated on them. O(n) a sweep instead of O(n^2)."""
    n = p.shape[0]
    last = n - 1
    G, R, Fnew, M, tmp = W[0], W[1], W[2], W[3], W[4]
    ex_, ey_, ez_ = p[end, 0], p[end, 1], p[end, 2]
    for j in range(last - 1, -1, -1):
        if oriented and j == last - 1:
            # turn the last bone (and its frame) towards the target frame
            Fnew[:, :] = target_rot
            d[:] = target_rot[:, 1]
        else:
            ex = ex_ - p[j, 0]
            ey = ey_ - p[j, 1]
            ez = ez_ - p[j, 2]
            gx = goal[0] - p[j, 0]
            gy = goal[1] - p[j, 1]
            gz = goal[2] - p[j, 2]
            re = np.sqrt(ex * ex + ey * ey + ez * ez)
            rg = np.sqrt(gx * gx + gy * gy + gz * gz)
            if re <= TINY or rg <= TINY:
                turns[j, :, :] = np.eye(3)  # no turn
                continue
            rotation_between(R, ex / re, ey / re, ez / re, gx / rg, gy / rg, gz / rg)
            rotate_frame(Fnew, frames[j], R)
            for k in range(3):
                d[k] = Fnew[k, 1]
        P = root_frame if j == 0 else frames[j - 1]
        act = limit_direction(limits[j], P, d, False)
        # twist of the proposed frame carried onto the limited direction
        transport(tmp, Fnew, d[0], d[1], d[2])
        transport(G, P, d[0], d[1], d[2])
        psi, act_t = limit_twist(limits[j], twist_between(G, tmp))
        twist_about_y(Fnew, G, psi)
        if planar:
            # a half turn (a hinge at +-pi) is transported about +X, which flips +Z: the turn
            # Q below would then mirror the rest of a planar chain within its plane
            planarise(Fnew)
        active[j] = 1 if act + act_t > 0 else 0
        # Q = Fnew @ frames[j]^T turns the whole sub-chain about joint j
        for r in range(3):
            for c in range(3):
                turns[j, r, c] = (Fnew[r, 0] * frames[j, c, 0] + Fnew[r, 1] * frames[j, c, 1]
                                  + Fnew[r, 2] * frames[j, c, 2])
        if end > j:
            x = ex_ - p[j, 0]
            y = ey_ - p[j, 1]
            z = ez_ - p[j, 2]
            Q = turns[j]
            ex_ = p[j, 0] + Q[0, 0] * x + Q[0, 1] * y + Q[0, 2] * z
            ey_ = p[j, 1] + Q[1, 0] * x + Q[1, 1] * y + Q[1, 2] * z
            ez_ = p[j, 2] + Q[2, 0] * x + Q[2, 1] * y + Q[2, 2] * z
        frames[j, :, :] = Fnew
    # frame i <- Q_0 .. Q_(i-1) frame i, accumulated from the root outwards
    for r in range(3):
        for c in range(3):
            M[r, c] = 1.0 if r == c else 0.0
    for i in range(n - 1):
        if i > 0:
            rotate_frame(tmp, frames[i], M)
            frames[i, :, :] = tmp
        rotate_frame(tmp, turns[i], M)  # M <- M Q_i
        M[:, :] = tmp
    # re-orthonormalise the frames and re-seat the joints on them, so rounding never
    # accumulates into the frames or the bone lengths
    for i in range(n - 1):
        reorthonormalise(frames[i])
        if planar:
            planarise(frames[i])
        for k in range(3):
            p[i + 1, k] = p[i, k] + lengths[i] * frames[i, k, 1]
    frames[n - 1, :, :] = frames[n - 2]
