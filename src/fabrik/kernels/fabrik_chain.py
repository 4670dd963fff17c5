"""FABRIK on a single chain: Algorithm 1 of Aristidou & Lasenby (2011), compiled.

Status codes follow ``fabrik.solvers.result.STATUSES``: 0 reached, 1 unreachable, 2 stalled,
3 max_iterations. Arrays are (n, 3); 2D chains come in embedded in z = 0.
"""

import numpy as np
from numba import njit

from fabrik.kernels.ccd import start_pose_result
from fabrik.kernels.vec import (TINY, any_perpendicular, chain_lengths_hold, chain_scale, dist3, dist3v,
                                fallback_direction, inner_reach, place_on_line, reach_sweep)

from fabrik.kernels.stopping import (MAX_ITERATIONS, REACHED, STALLED, UNREACHABLE, confirm_stall, effector_stalled,
                                      max_joint_move, stall_tol, unavoidable_error)


#: The largest turn (radians) of a second or third ``bend_chain``: bone i of n - 1 turns by
#: BEND_ANGLE * (i + 1) / (n - 1), so every joint's angle changes by BEND_ANGLE / (n - 1).
#: Measured on 900 random reachable targets of 5-30 joint chains started folded onto the root:
#: 163 stalled with the first bend alone; with this one after it, none.
BEND_ANGLE = 0.2


@njit(cache=True, error_model="numpy")
def bend_chain(p, target, bone_lengths, scale, fx, fy, fz, ramp):
    """Bend a stuck chain (section 5.4), in place, in one of two ways.

    The first bend (``ramp`` False) is the paper's small bend: every joint after the root moves
    sideways (perpendicular to the root-to-target line, in the z = 0 plane for planar chains) by
    a tenth of the shortest bone, and the bone lengths are restored outwards from the root, so
    the first bone tilts. That frees a straight chain (even with the target at the edge of its
    reach), but a chain folded back on itself keeps its fold and can fold back again.

    Later bends (``ramp`` True) turn bone i by ``BEND_ANGLE * (i + 1) / (n - 1)`` about an axis
    across the root-to-target line (+-z for planar chains, which stay planar) and rebuild the
    joints from the root with the exact bone lengths: every joint angle changes by the same
    small amount, which opens folds too (a uniform turn of every bone would not).
    """
    n = p.shape[0]
    u = np.zeros(3)
    r = dist3v(p, 0, target)
    if r <= TINY * scale:
        r = dist3(p, n - 1, p, 0)
        if r > TINY * scale:
            for k in range(3):
                u[k] = (p[n - 1, k] - p[0, k]) / r
        else:
            u[0] = 1.0
    else:
        for k in range(3):
            u[k] = (target[k] - p[0, k]) / r
    side = any_perpendicular(u)
    if not ramp:
        shortest = scale
        for i in range(bone_lengths.shape[0]):
            if 0.0 < bone_lengths[i] < shortest:
                shortest = bone_lengths[i]
        for i in range(1, n):
            for k in range(3):
                p[i, k] += 0.1 * shortest * side[k]
        for i in range(n - 1):
            place_on_line(p, i + 1, i, bone_lengths[i], fx, fy, fz, TINY * scale)
        return
    ax = u[1] * side[2] - u[2] * side[1]
    ay = u[2] * side[0] - u[0] * side[2]
    az = u[0] * side[1] - u[1] * side[0]
    before = p.copy()
    for i in range(n - 1):
        dx = before[i + 1, 0] - before[i, 0]
        dy = before[i + 1, 1] - before[i, 1]
        dz = before[i + 1, 2] - before[i, 2]
        length = np.sqrt(dx * dx + dy * dy + dz * dz)
        if length <= TINY * scale:
            dx, dy, dz, length = -fx, -fy, -fz, 1.0  # coincident joints: towards the target
        angle = BEND_ANGLE * (i + 1) / (n - 1)
        c = np.cos(angle)
        s = np.sin(angle)
        # Rodrigues: d cos + (a x d) sin + a (a . d)(1 - cos)
        ad = ax * dx + ay * dy + az * dz
        rx = dx * c + (ay * dz - az * dy) * s + ax * ad * (1.0 - c)
        ry = dy * c + (az * dx - ax * dz) * s + ay * ad * (1.0 - c)
        rz = dz * c + (ax * dy - ay * dx) * s + az * ad * (1.0 - c)
        lam = bone_lengths[i] / length
        p[i + 1, 0] = p[i, 0] + lam * rx
        p[i + 1, 1] = p[i, 1] + lam * ry
        p[i + 1, 2] = p[i, 2] + lam * rz


@njit(cache=True, error_model="numpy")
def stretch_towards(p, root, bone_lengths, fx, fy, fz):
    """Lay the chain ``p`` (n, 3) straight from ``root`` along -(fx, fy, fz), in place.

    Each joint goes on the root-to-target line, not on the line from the joint before it to the
    target: rounding can put a joint on the target before a zero-length tail, and 0 / 0."""
    for k in range(3):
        p[0, k] = root[k]
    for i in range(p.shape[0] - 1):
        p[i + 1, 0] = p[i, 0] - bone_lengths[i] * fx
        p[i + 1, 1] = p[i, 1] - bone_lengths[i] * fy
        p[i + 1, 2] = p[i, 2] - bone_lengths[i] * fz


@njit(cache=True, error_model="numpy")
def fabrik_chain(initial, bone_lengths, target, root, tol, max_iter):
    """Solve one chain. Returns (positions, iterations, error, status_code).

    initial: (n, 3) start pose (copied, never mutated); bone_lengths: (n-1,); target, root: (3,).
    The solve itself is ``fabrik_chain_into``, which ``fabrik.solve_batch`` calls too.
    """
    p = initial.copy()
    iterations, err, code = fabrik_chain_into(p, bone_lengths, target, root, tol, max_iter)
    return p, iterations, err, code


@njit(cache=True, error_model="numpy")
def fabrik_chain_into(p, bone_lengths, target, root, tol, max_iter):
    """Solve one chain in place: ``p`` (n, 3) holds the start pose on entry and the answer on
    return. Returns (iterations, error, status_code). The per-target body of both
    ``fabrik_chain`` (``fabrik.solve``) and the batch kernels (``fabrik.kernels.batch``), so that
    a batch answers exactly as target-by-target solves do; it allocates nothing on the way to a
    reached target (a stall check's snapshot and a bend do).
    """
    n = p.shape[0]
    last = n - 1
    total, scale = chain_scale(bone_lengths)

    # direction used where two joints coincide: from the target back towards the root
    fx, fy, fz, dist = fallback_direction(root, target, TINY * scale)
    inner = inner_reach(bone_lengths, total)
    inside_inner_reach = dist < inner - tol

    if max_iter == 0:
        # no iteration: the start pose, made rigid and hung from the root as every method's is
        start, it0, err0, code0 = start_pose_result(p, bone_lengths, root, target, tol)
        p[:, :] = start
        return it0, err0, code0

    if dist > total:
        # Unreachable: the chain stretched straight from the root towards the target
        stretch_towards(p, root, bone_lengths, fx, fy, fz)
        err = dist3v(p, last, target)
        # a target a hair beyond full reach is still reached within tolerance
        return 1, err, (REACHED if err <= tol else UNREACHABLE)

    # (targets closer to the root than 2*longest - total, inside_inner_reach, cannot be reached either)
    err = dist3v(p, last, target)
    if err <= tol and dist3v(p, 0, root) == 0.0 and chain_lengths_hold(p, bone_lengths, scale):
        return 0, err, REACHED
    if dist > total - tol:
        # Within tol of the full reach: the stretched chain is within tol of the target, where
        # iterating converges ever more slowly (hundreds of iterations, and not always within tol
        # in max_iter, as the chain straightens).
        stretched = p.copy()
        stretch_towards(stretched, root, bone_lengths, fx, fy, fz)
        stretched_err = dist3v(stretched, last, target)
        if stretched_err <= tol:  # (not by rounding at the band's inner edge: iterate then)
            p[:, :] = stretched
            return 1, stretched_err, REACHED

    perturbations = 0
    # The no-progress test runs in two steps so that the hot loop pays nothing for it: when the
    # effector looks stalled, a snapshot of the pose is taken, and the next iteration declares a
    # stall only if no joint moved more than tol since the snapshot.
    snapshot = p  # allocated on first use
    check_pose = False
    tol2 = tol * tol
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
        if check_pose:
            if snapshot is p:
                snapshot = np.empty_like(p)
            snapshot[:, :] = p
        # forward reaching: effector onto the target, then inwards to the root
        p[last, 0] = target[0]
        p[last, 1] = target[1]
        p[last, 2] = target[2]
        reach_sweep(p, last - 1, last, -1, target[0], target[1], target[2], bone_lengths, fx, fy, fz, TINY * scale)
        # backward reaching: root back onto its base, then outwards to the effector
        p[0, 0] = root[0]
        p[0, 1] = root[1]
        p[0, 2] = root[2]
        x, y, z = reach_sweep(p, 1, last, 1, root[0], root[1], root[2], bone_lengths, fx, fy, fz, TINY * scale)
        it += 1
        ex = x - target[0]
        ey = y - target[1]
        ez = z - target[2]
        err2 = ex * ex + ey * ey + ez * ez
        if err2 <= tol2:
            return it, np.sqrt(err2), REACHED
        err = np.sqrt(err2)
        drop = prev_err - err
        if check_pose:
            check_pose = False
            if max_joint_move(p, snapshot) < stall_tol(tol, scale):
                # Stuck short of where the chain can come: the straight-chain singularity of
                # section 5.4, or a chain within rounding of it (straight or folded; a target
                # inside the inner reach on the line of a chain folded the wrong way). Bend it
                # and go on.
                short = err > unavoidable_error(dist, total, inner, tol) + stall_tol(tol, scale)
                if short and perturbations < 3:
                    bend_chain(p, target, bone_lengths, scale, fx, fy, fz, perturbations > 0)
                    perturbations += 1
                    err = dist3v(p, last, target)  # what a solve capped right here reports
                    drop = np.inf  # the trend starts again
                    continue
                if inside_inner_reach:
                    return it, err, (STALLED if short else UNREACHABLE)
                stalled, probe_err, probe_end = confirm_stall(err, prev_err, last_drop, older_drop, tol, it,
                                                              probe_err, probe_end)
                if stalled:
                    return it, err, STALLED
        # a nearly folded chain can unfold slowly while its effector barely moves, hence the
        # second, whole-pose check above before a stall is declared
        if effector_stalled(p, last, px, py, pz, stall_tol(tol, scale), err, prev_err):
            check_pose = True
    return it, err, MAX_ITERATIONS


