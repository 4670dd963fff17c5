"""FABRIK with joint limits on a single chain (section 4.3 of the paper), compiled.

Every bone carries a frame (``fabrik.kernels.frames``); ``limits`` is the packed (n, 13) table
of ``fabrik.model.constraints.pack_limits``: row i limits bone i against bone i - 1 (the fixed
``root_frame`` for i = 0).

Forward stage (effector -> root): the effector goes onto the target (with an oriented target the
last bone is set along the target frame's +Y and takes the target frame, so the joint before the
effector goes to ``target - L * target_y``). Then for each bone i going inwards the joint i + 1
limit is applied *reversed*: the child bone i + 1 is already placed, so the proposed direction of
bone i is restricted to the set of parent directions from which bone i + 1 would be allowed (the
reflected region, see ``limit_direction``); then bone i's own limit is applied against its
parent's frame as it stands (from the previous backward stage; the fixed root frame for bone 0).
Applying the reversed child limit alone, as the paper describes, left constrained FABRIK stuck
far more often (measured: 172 of 200 random circular-cone chains reached against 192 of 200 with
both; see CHANGELOG.md). The frame of bone i is rebuilt from the child frame with the joint's twist clamped, and
joint i goes at distance L_i behind joint i + 1.

Backward stage (root -> effector): the root goes back to its base and each bone i takes the
direction towards the old position of joint i + 1, restricted by joint i's limit against its
parent frame. Its frame follows the bone by the smallest rotation; for a joint with a twist limit
it is instead the parent frame carried onto the bone, turned by the twist the bone had, clamped.
When the next joint is a hinge (and the target carries no orientation, whose twist the forward
stage has already propagated inwards) the bone is then turned about itself, within its twist
range, so that the hinge plane passes through the old position of the joint after the hinge: the
paper's Fig. 7 idea of choosing the hinge plane from where the chain must go, done with the twist
the joint has. (Measured on the DHM arm below: 99 of 100 posed targets reached against 89 without.) Joint limits are therefore met exactly after every
backward stage, i.e. by every returned pose.
"""

import numpy as np
from numba import njit

from fabrik.kernels.constraints import (COL_AXIS, COL_HINGE, COL_TWIST_FLAG, COL_TYPE, TYPE_HINGE,
                                        hinge_alignment_twist, limit_direction, limit_twist, wrap_angle)
from fabrik.kernels.ccd import unit_or
from fabrik.kernels.frames import frames_along, orientation_error, planarise, transport, twist_about_y, twist_between
from fabrik.kernels.rotation_chain import ccd_constrained_from
from fabrik.kernels.stopping import MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, STALLED, UNREACHABLE
from fabrik.kernels.vec import TINY, any_perpendicular, chain_scale

#: Iterations without the best error (position, plus for an oriented target the orientation as a
#: distance at the last bone's tip) falling by ``PROGRESS_FRACTION`` after which a solve stops,
#: stalled (or unreachable), on the best pose it saw: limits, and an orientation, can make FABRIK
#: cycle between poses, where the plain no-progress test never fires (the effector keeps
#: moving); a solve that runs to the cap also answers with the best pose it saw. Measured on the
#: DHM arm's 100 oriented targets (tol 0.1, cap 1000): 63 reached with or without the rule, mean
#: iterations 74.8 -> 48.0; a window of 100 lost one target that leaves a plateau after 209
#: iterations (and 50, on position targets, two constrained Table 1 targets reached after 230 and
#: 410). Position targets got the rule later: on 1500 random chains of 3-7 joints with cones and
#: hinges and targets the limits often block, solves that ran to the cap went from 291 to 0 and
#: mean iterations from 204 to 51, the same 206 reached; the constrained Table 1 and the DHM arm
#: give the same answer for every target as before.
NO_PROGRESS_WINDOW = 200


@njit(cache=True, error_model="numpy")
def forward_stage(p, frames, lengths, limits, target, target_rot, oriented, G, d, root_frame, planar, eps):
    """Effector onto the target, then inwards; joint limits applied reversed (see module doc)."""
    n = p.shape[0]
    last = n - 1
    for k in range(3):
        p[last, k] = target[k]
    start = last - 1
    if oriented and last >= 1:
        for k in range(3):
            p[last - 1, k] = target[k] - lengths[last - 1] * target_rot[k, 1]
        frames[last - 1, :, :] = target_rot
        start = last - 2
    for i in range(start, -1, -1):
        unit_or(p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2], d, frames[i, :, 1], eps)
        c = i + 1
        if c <= last - 1:
            # the child's frame turned back by its (clamped) twist = the parent frame carried onto
            # the child bone; the child's limit, reversed, restricts this bone's direction
            transport(G, frames[i], frames[c, 0, 1], frames[c, 1, 1], frames[c, 2, 1])
            if limits[c, COL_TWIST_FLAG] != 0.0:
                psi = twist_between(G, frames[c])
                psi, _ = limit_twist(limits[c], psi)
                twist_about_y(G, frames[c], -psi)
            limit_direction(limits[c], G, d, True)
            # then this bone's own limit against its parent's frame as it stands (from the last
            # backward stage; the fixed root frame for bone 0)
            limit_direction(limits[i], root_frame if i == 0 else frames[i - 1], d, False)
            transport(frames[i], G, d[0], d[1], d[2])
        else:
            limit_direction(limits[i], root_frame if i == 0 else frames[i - 1], d, False)
            transport(frames[i], frames[i], d[0], d[1], d[2])
        if planar:
            planarise(frames[i])
            for k in range(3):
                d[k] = frames[i, k, 1]
        for k in range(3):
            p[i, k] = p[i + 1, k] - lengths[i] * d[k]


@njit(cache=True, error_model="numpy")
def backward_stage(p, frames, lengths, limits, root, root_frame, active, G, d, planar, align, eps):
    """Root onto its base, then outwards; each joint's limit against its parent frame.

    With ``align``, a bone whose child joint is a hinge is turned about itself (within its twist
    range) so that the hinge plane passes through the old position of the joint after the hinge.
    """
    n = p.shape[0]
    last = n - 1
    for k in range(3):
        p[0, k] = root[k]
    for i in range(last):
        P = root_frame if i == 0 else frames[i - 1]
        unit_or(p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2], d, frames[i, :, 1], eps)
        act = limit_direction(limits[i], P, d, False)
        act_t = 0
        if limits[i, COL_TWIST_FLAG] != 0.0:
            # the twist the bone had, measured against the (new) parent frame carried onto it,
            # clamped, then applied to the parent frame carried onto the new direction
            transport(G, P, frames[i, 0, 1], frames[i, 1, 1], frames[i, 2, 1])
            psi = twist_between(G, frames[i])
            psi, act_t = limit_twist(limits[i], psi)
            transport(G, P, d[0], d[1], d[2])
            twist_about_y(frames[i], G, psi)
        else:
            # free twist: the frame follows its bone by the smallest rotation
            transport(frames[i], frames[i], d[0], d[1], d[2])
        if planar:
            planarise(frames[i])
            for k in range(3):
                d[k] = frames[i, k, 1]
        for k in range(3):
            p[i + 1, k] = p[i, k] + lengths[i] * d[k]
        c = i + 1
        if align and c <= last - 1 and limits[c, COL_TYPE] == TYPE_HINGE:
            # turn this bone about itself, within its twist range, so that the child's hinge
            # plane passes through the old position of joint c + 1 (the paper's Fig. 7 idea of
            # choosing the hinge plane from the target, done with the twist the joint has)
            tau, ok = hinge_alignment_twist(frames[i], limits[c, COL_AXIS], limits[c, COL_AXIS + 2],
                                            p[c + 1, 0] - p[c, 0], p[c + 1, 1] - p[c, 1], p[c + 1, 2] - p[c, 2],
                                            limits[c, COL_HINGE], limits[c, COL_HINGE + 1])
            if ok:
                if limits[i, COL_TWIST_FLAG] != 0.0:
                    transport(G, P, d[0], d[1], d[2])
                    psi = twist_between(G, frames[i])
                    psi_new, act_t = limit_twist(limits[i], wrap_angle(psi + tau))
                    tau = psi_new - psi
                twist_about_y(frames[i], frames[i], tau)
                if planar:
                    planarise(frames[i])
        active[i] = 1 if (act + act_t) > 0 else 0
    frames[last, :, :] = frames[last - 1]
    active[last] = 0


#: Starts from pseudo-random poses (``restart_pose``) after FABRIK and its CCD polish from the
#: given start ended short of the target (see ``fabrik_constrained_polished``).
RESTARTS = 2


@njit(cache=True, error_model="numpy")
def fabrik_constrained(initial, lengths, target, root, limits, root_frame, target_rot, oriented, planar,
                       tol, orientation_tol, max_iter):
    """Solve one constrained chain: ``fabrik_constrained_polished`` without its last two values."""
    p, frames, active, it, err, oerr, code, _, _ = fabrik_constrained_polished(
        initial, lengths, target, root, limits, root_frame, target_rot, oriented, planar, tol, orientation_tol,
        max_iter)
    return p, frames, active, it, err, oerr, code


@njit(cache=True, error_model="numpy")
def _fabrik_then_ccd(initial, lengths, target, root, limits, root_frame, target_rot, oriented, planar,
                     tol, orientation_tol, max_iter):
    """FABRIK from ``initial``, then limited CCD sweeps from its best pose when it ended short
    (within what is left of ``max_iter``); the better pose. Returns the 7 values and the sweeps."""
    p, frames, active, it, err, oerr, code = fabrik_constrained_search(
        initial, lengths, target, root, limits, root_frame, target_rot, oriented, planar, tol, orientation_tol,
        max_iter)
    if code == REACHED or it >= max_iter:
        return p, frames, active, it, err, oerr, code, 0
    q, qf, qa, sweeps, qerr, qoerr, qcode = ccd_constrained_from(
        p.copy(), frames.copy(), lengths, target, root, limits, root_frame, target_rot, oriented, planar, tol,
        orientation_tol, max_iter - it)
    weight = lengths[p.shape[0] - 2] if oriented else 0.0
    if qerr + weight * qoerr < err + weight * oerr:
        if qcode == MAX_ITERATIONS and code != MAX_ITERATIONS:
            qcode = code
        return q, qf, qa, it + sweeps, qerr, qoerr, qcode, sweeps
    return p, frames, active, it + sweeps, err, oerr, code, sweeps


@njit(cache=True, error_model="numpy")
def restart_pose(p, lengths, root, planar, k):
    """Start pose ``k`` (>= 1) of the restarts: every bone in a direction drawn from a fixed
    pseudo-random sequence seeded by ``k`` (the same poses every call; in the z = 0 plane for a
    2D chain), joined up from ``root``. Limits are applied by the solve's first backward stage."""
    state = np.uint64(0x9E3779B97F4A7C15) * np.uint64(k) + np.uint64(0x632BE59BD9B4E019)
    for k2 in range(3):
        p[0, k2] = root[k2]
    for i in range(lengths.shape[0]):
        r = 0.0
        v = np.zeros(3)
        while r < 1e-3:
            for c in range(3):
                # splitmix64
                state += np.uint64(0x9E3779B97F4A7C15)
                z = state
                z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                z = z ^ (z >> np.uint64(31))
                v[c] = 2.0 * (float(z >> np.uint64(11)) / 9007199254740992.0) - 1.0
            if planar:
                v[2] = 0.0
            r = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
            if r > 1.0:
                r = 0.0  # inside the unit ball only, so that directions are uniform
        for c in range(3):
            p[i + 1, c] = p[i, c] + lengths[i] * v[c] / r


@njit(cache=True, error_model="numpy")
def fabrik_constrained_polished(initial, lengths, target, root, limits, root_frame, target_rot, oriented, planar,
                                tol, orientation_tol, max_iter):
    """FABRIK (``fabrik_constrained_search``) and, when it ends short of the target, a search for
    a closer pose within what is left of ``max_iter``; the closest pose found is returned.

    Where the limits keep the target out of reach FABRIK's stages, which place each bone by the
    limits of its neighbours alone, can settle (or cycle) far from the closest pose the limits
    allow. Then, in turn, each while the target is not reached: limited CCD sweeps
    (``fabrik.kernels.ccd``, which turn the whole rest of the chain about each joint
    towards the target) from FABRIK's best pose; limited CCD from the start pose; and ``RESTARTS``
    runs of FABRIK followed by CCD sweeps from pseudo-random poses (``restart_pose``). Measured
    in ``benchmarks/limited_best.py`` (500 random limited chains with targets out of reach under
    their limits; final error within 10%, or 1e-3 of the reach, of a multi-start search's best):
    FABRIK alone 85.2% of the cases, with the sweeps from its best pose 94.2%, all of the above
    97.8% (worst case 1.62 times the best, against 8.70 alone; constrained CCD alone 84.6%).

    Returns the 7 values of ``fabrik_constrained``, the CCD sweeps run (counted in the
    iterations) and the restarts run (0, 0 when FABRIK reached the target).
    """
    n = initial.shape[0]
    p, frames, active, it, err, oerr, code, sweeps = _fabrik_then_ccd(
        initial, lengths, target, root, limits, root_frame, target_rot, oriented, planar, tol, orientation_tol,
        max_iter)
    restarts = 0
    if code == REACHED or it >= max_iter or n < 2:
        return p, frames, active, it, err, oerr, code, sweeps, restarts
    weight = lengths[n - 2] if oriented else 0.0
    # limited CCD from the start pose
    q = initial.copy()
    qf = np.empty((n, 3, 3))
    frames_along(qf, q, root_frame)
    q, qf, qa, k, qerr, qoerr, qcode = ccd_constrained_from(
        q, qf, lengths, target, root, limits, root_frame, target_rot, oriented, planar, tol, orientation_tol,
        max_iter - it)
    it += k
    sweeps += k
    if qerr + weight * qoerr < err + weight * oerr:
        p, frames, active, err, oerr = q, qf, qa, qerr, qoerr
        code = qcode if qcode != MAX_ITERATIONS else code
    start = np.empty((n, 3))
    while restarts < RESTARTS and code != REACHED and it < max_iter:
        restarts += 1
        restart_pose(start, lengths, root, planar, restarts)
        q, qf, qa, k, qerr, qoerr, qcode, ks = _fabrik_then_ccd(
            start, lengths, target, root, limits, root_frame, target_rot, oriented, planar, tol, orientation_tol,
            max_iter - it)
        it += k
        sweeps += ks
        if qerr + weight * qoerr < err + weight * oerr:
            p, frames, active, err, oerr = q, qf, qa, qerr, qoerr
            code = qcode if qcode != MAX_ITERATIONS else code
    return p, frames, active, it, err, oerr, code, sweeps, restarts


@njit(cache=True, error_model="numpy")
def fabrik_constrained_search(initial, lengths, target, root, limits, root_frame, target_rot, oriented, planar,
                              tol, orientation_tol, max_iter):
    """Solve one constrained chain by FABRIK alone.

    Args: initial (n, 3) start pose (copied); lengths (n-1,); target, root (3,); limits (n, 13);
    root_frame (3, 3); target_rot (3, 3) target frame of the last bone (used when ``oriented``);
    planar: the chain lies in z = 0 (a 2D chain; frames are kept exactly in the plane);
    tol (distance), orientation_tol (radians); max_iter.

    Returns (positions (n, 3), frames (n, 3, 3), active (n,) int64, iterations, error,
    orientation_error, status_code). The returned pose always satisfies the limits: it is the
    result of a backward stage, which is also applied once to the start pose before iterating.
    """
    p = initial.copy()
    n = p.shape[0]
    last = n - 1
    frames = np.empty((n, 3, 3))
    frames_along(frames, p, root_frame)
    active = np.zeros(n, dtype=np.int64)
    G = np.empty((3, 3))
    d = np.empty(3)
    total, scale = chain_scale(lengths)
    dist = 0.0
    for k in range(3):
        dist += (target[k] - root[k]) ** 2
    dist = np.sqrt(dist)
    eps = TINY * scale  # joints closer than this coincide

    # make the start pose legal (and rooted) first
    backward_stage(p, frames, lengths, limits, root, root_frame, active, G, d, planar, not (oriented or planar), eps)
    err = 0.0
    for k in range(3):
        err += (p[last, k] - target[k]) ** 2
    err = np.sqrt(err)
    oerr = orientation_error(frames[last - 1], target_rot) if oriented else 0.0
    if err <= tol and oerr <= orientation_tol:
        return p, frames, active, 0, err, oerr, REACHED
    goal = target.copy()
    perturbations = 0
    # cycles: limits (or a target orientation they do not allow) can make FABRIK alternate
    # between poses without ever stalling; the best pose seen, by position error plus the
    # orientation error as a distance at the last bone's tip, is kept
    orient_weight = lengths[last - 1] if oriented else 0.0
    best_score = err + orient_weight * oerr
    best_p = p.copy()
    best_frames = frames.copy()
    best_active = active.copy()
    best_err = err
    best_oerr = oerr
    progress_ref = score = best_score
    since_progress = 0
    it = 0
    while it < max_iter:
        px = p[last, 0]
        py = p[last, 1]
        pz = p[last, 2]
        prev_err = err
        prev_oerr = oerr
        forward_stage(p, frames, lengths, limits, goal, target_rot, oriented, G, d, root_frame, planar, eps)
        backward_stage(p, frames, lengths, limits, root, root_frame, active, G, d, planar, not (oriented or planar), eps)
        it += 1
        for k in range(3):
            goal[k] = target[k]
        err = 0.0
        for k in range(3):
            err += (p[last, k] - target[k]) ** 2
        err = np.sqrt(err)
        if oriented:
            oerr = orientation_error(frames[last - 1], target_rot)
        if err <= tol and oerr <= orientation_tol:
            return p, frames, active, it, err, oerr, REACHED
        score = err + orient_weight * oerr
        if score < best_score:
            best_score = score
            best_p[:, :] = p
            best_frames[:, :, :] = frames
            best_active[:] = active
            best_err = err
            best_oerr = oerr
        if score < (1.0 - PROGRESS_FRACTION) * progress_ref:
            progress_ref = score
            since_progress = 0
        else:
            since_progress += 1
            if since_progress >= NO_PROGRESS_WINDOW:
                return (best_p, best_frames, best_active, it, best_err, best_oerr,
                        (UNREACHABLE if dist > total else STALLED))
        moved = (p[last, 0] - px) ** 2 + (p[last, 1] - py) ** 2 + (p[last, 2] - pz) ** 2
        if (moved < tol * tol and err > (1.0 - PROGRESS_FRACTION) * prev_err
                and (oerr <= orientation_tol or oerr > (1.0 - PROGRESS_FRACTION) * prev_oerr)):
            if dist <= total and perturbations < 3:
                # stuck short of a target within reach: the singular straight chain of section 5.4
                # (FABRIK cannot bend it) or a local minimum of the limits. Run one forward stage
                # towards a goal nudged sideways, at most 3 times (measured on 200 random chains
                # with circular cones: 195 reached against 192 without; DHM arm with oriented
                # targets: 63 of 100 against 61)
                nudge_goal(goal, p, lengths, total)
                perturbations += 1
                continue
            if best_score < score:
                return (best_p, best_frames, best_active, it, best_err, best_oerr,
                        (UNREACHABLE if dist > total else STALLED))
            return p, frames, active, it, err, oerr, (UNREACHABLE if dist > total else STALLED)
    if best_score < score:
        return best_p, best_frames, best_active, it, best_err, best_oerr, MAX_ITERATIONS
    return p, frames, active, it, err, oerr, MAX_ITERATIONS


@njit(cache=True, error_model="numpy")
def nudge_goal(goal, p, lengths, total):
    """Move goal sideways, off the chain's line, by a tenth of the shortest non-zero bone."""
    n = p.shape[0]
    u = np.zeros(3)
    r = 0.0
    for k in range(3):
        u[k] = p[n - 1, k] - p[0, k]
        r += u[k] * u[k]
    r = np.sqrt(r)
    if r > TINY * total:
        for k in range(3):
            u[k] /= r
    else:
        u[1] = 1.0
    side = any_perpendicular(u)
    shortest = total
    for i in range(lengths.shape[0]):
        if 0.0 < lengths[i] < shortest:
            shortest = lengths[i]
    for k in range(3):
        goal[k] += 0.1 * shortest * side[k]
