"""Cyclic Coordinate Descent with joint limits on a single chain, compiled (the paper's comparison).

One iteration is one sweep from the joint before the effector down to the root. At joint j the
rest of the chain is turned rigidly about joint j by the smallest rotation that points the
effector at the goal; bone j's new direction is then restricted by joint j's limit against its
parent frame and its twist clamped, and the rotation actually applied to the sub-chain is the one
taking bone j's old frame to that restricted frame. With an oriented target the goal of joints
0..n-3 is ``target - L * target_y`` and joint n-2 turns the last bone towards the target frame.
Limits hold after every joint update, so every returned pose satisfies them. Frames, packed
limits and status codes are those of ``fabrik.kernels.fabrik_constrained`` (``fabrik.kernels.limited_common``).
"""

import numpy as np
from numba import njit

from fabrik.kernels.constraints import limit_direction, limit_twist
from fabrik.kernels.limited_common import (MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, STALLED, UNREACHABLE,
                                           orientation_error)
from fabrik.kernels.frames import (frames_along, planarise, reorthonormalise, rotate_frame, rotation_between, transport,
                                   twist_about_y, twist_between)
from fabrik.kernels.singularity import MAX_ESCAPES, fold_stuck_chain
from fabrik.kernels.vec import TINY, chain_scale


@njit(cache=True, error_model="numpy")
def _apply_limits_everywhere(p, frames, lengths, limits, root, root_frame, active, G, d, planar):
    """Re-place the chain from the root with every limit enforced (used once on the start pose);
    a planar chain's frames are kept on the plane as they are made, since the next joint's limit
    is read in them."""
    n = p.shape[0]
    for k in range(3):
        p[0, k] = root[k]
    for i in range(n - 1):
        P = root_frame if i == 0 else frames[i - 1]
        for k in range(3):
            d[k] = frames[i, k, 1]
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


@njit(cache=True, error_model="numpy")
def ccd_constrained(initial, lengths, target, root, limits, root_frame, target_rot, oriented, planar,
                    tol, orientation_tol, max_iter):
    """Solve one constrained chain by CCD; arguments and returns as ``fabrik_constrained``."""
    p = initial.copy()
    frames = np.empty((p.shape[0], 3, 3))
    frames_along(frames, p, root_frame)
    return ccd_constrained_from(p, frames, lengths, target, root, limits, root_frame, target_rot, oriented, planar,
                                tol, orientation_tol, max_iter)


@njit(cache=True, error_model="numpy")
def ccd_constrained_from(p, frames, lengths, target, root, limits, root_frame, target_rot, oriented, planar,
                         tol, orientation_tol, max_iter):
    """``ccd_constrained`` from a pose with its bone frames (n, 3, 3), both updated in place and
    returned: what constrained chain FABRIK polishes its best pose with (the frames keep the
    twists, which the frames ``frames_along`` rebuilds from positions alone would not)."""
    n = p.shape[0]
    last = n - 1
    active = np.zeros(n, dtype=np.int64)
    G = np.empty((3, 3))
    R = np.empty((3, 3))
    Fnew = np.empty((3, 3))
    turns = np.empty((n, 3, 3))
    M = np.empty((3, 3))
    tmp = np.empty((3, 3))
    d = np.empty(3)
    goal = target.copy()
    end = last
    if oriented and last >= 1:
        end = last - 1
        for k in range(3):
            goal[k] = target[k] - lengths[last - 1] * target_rot[k, 1]
    total = 0.0
    for i in range(n - 1):
        total += lengths[i]
    dist = np.sqrt((target[0] - root[0]) ** 2 + (target[1] - root[1]) ** 2 + (target[2] - root[2]) ** 2)

    _, scale = chain_scale(lengths)
    bends = 0
    _apply_limits_everywhere(p, frames, lengths, limits, root, root_frame, active, G, d, planar)
    if planar:
        # snap the start frames onto the plane as every iteration does (a transported start frame
        # can come out with +Z flipped)
        for i in range(n):
            planarise(frames[i])
    err = np.sqrt((p[last, 0] - target[0]) ** 2 + (p[last, 1] - target[1]) ** 2 + (p[last, 2] - target[2]) ** 2)
    oerr = orientation_error(frames[last - 1], target_rot) if oriented else 0.0
    if err <= tol and oerr <= orientation_tol:
        return p, frames, active, 0, err, oerr, REACHED
    it = 0
    while it < max_iter:
        px = p[last, 0]
        py = p[last, 1]
        pz = p[last, 2]
        prev_err = err
        prev_oerr = oerr
        # Within a sweep joint j only reads its own and its parent's frame and its own position,
        # which the turns of the joints after it have not touched, and the effector: so the
        # sweep turns the effector alone and records each turn Q_j; the frames after joint j
        # are brought up to date once afterwards (frame i is Q_0 Q_1 .. Q_(i-1) times the frame
        # its own step set), and the joints re-seated on them. O(n) a sweep instead of O(n^2).
        ex_ = p[end, 0]
        ey_ = p[end, 1]
        ez_ = p[end, 2]
        for j in range(last - 1, -1, -1):
            for r in range(3):
                for c in range(3):
                    turns[j, r, c] = 1.0 if r == c else 0.0
            if oriented and j == last - 1:
                # turn the last bone (and its frame) towards the target frame
                Fnew[:, :] = target_rot
                for k in range(3):
                    d[k] = target_rot[k, 1]
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
        it += 1
        err = np.sqrt((p[last, 0] - target[0]) ** 2 + (p[last, 1] - target[1]) ** 2 + (p[last, 2] - target[2]) ** 2)
        if oriented:
            oerr = orientation_error(frames[last - 1], target_rot)
        if err <= tol and oerr <= orientation_tol:
            return p, frames, active, it, err, oerr, REACHED
        moved = (p[last, 0] - px) ** 2 + (p[last, 1] - py) ** 2 + (p[last, 2] - pz) ** 2
        if (moved < tol * tol and err > (1.0 - PROGRESS_FRACTION) * prev_err
                and (oerr <= orientation_tol or oerr > (1.0 - PROGRESS_FRACTION) * prev_oerr)):
            if bends < MAX_ESCAPES and it < max_iter and end >= 1 and _fold_if_on_line(
                    p, frames, lengths, goal, end, tol, scale, planar):
                # the straight-chain singularity (``fabrik.kernels.singularity``): the joints up
                # to the aim point (the effector, or the joint before it for an oriented target)
                # lie on the line to it, where no turn bends them; folded, the next sweep
                # restores the limits
                bends += 1
                continue
            return p, frames, active, it, err, oerr, (UNREACHABLE if dist > total else STALLED)
    return p, frames, active, it, err, oerr, MAX_ITERATIONS


@njit(cache=True, error_model="numpy")
def _fold_if_on_line(p, frames, lengths, goal, end, tol, scale, planar):
    """The one singularity rule on joints 0..``end`` aimed at ``goal``: fold them when they are
    short of it and on its line (``fold_stuck_chain``), then carry each folded bone's frame onto
    its new direction by the smallest rotation. Returns True when folded."""
    q = p[:end + 1].copy()
    err = np.sqrt((q[end, 0] - goal[0]) ** 2 + (q[end, 1] - goal[1]) ** 2 + (q[end, 2] - goal[2]) ** 2)
    if not fold_stuck_chain(q, lengths[:end], goal, err, tol, scale):
        return False
    for i in range(end):
        dx = q[i + 1, 0] - q[i, 0]
        dy = q[i + 1, 1] - q[i, 1]
        dz = q[i + 1, 2] - q[i, 2]
        r = np.sqrt(dx * dx + dy * dy + dz * dz)
        if r > TINY * scale:
            transport(frames[i], frames[i], dx / r, dy / r, dz / r)
            if planar:
                planarise(frames[i])
    p[:end + 1, :] = q
    return True
