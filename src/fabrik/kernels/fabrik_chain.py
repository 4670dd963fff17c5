"""FABRIK on a single chain, plain (Algorithm 1 of Aristidou & Lasenby 2011) or with joint limits
(section 4.3), compiled: one iteration driver, ``fabrik_chain_run``, for both. The stage steps
that place the joints are the difference: ``reach_sweep`` (``fabrik.kernels.vec``) without
limits, ``forward_stage`` and ``backward_stage`` (below) with them. Set-up, the reached test, the
no-progress test that starts a stop (``effector_stalled`` with ``stall_tol``, and for an oriented
target an orientation error that stopped falling too), the escape counter (``MAX_ESCAPES``) and the
return are shared; where the two keep their own rules (their iteration counts depend on them):

* the start: a plain chain may first be turned rigidly about its root towards the target
  (``warm_turn``, the ``turn_start`` option), then stops at once when the target is beyond its
  reach (stretched towards it), already reached, or within ``tol`` of the full reach; a limited
  chain's start pose is first made legal (and rooted) by a backward stage;
* after the no-progress test fires, a plain chain checks the whole pose once more in the next
  iteration (no joint moved by ``stall_tol``), bends when it is short of the target
  (``bend_chain``), and stops only off course (``confirm_stall``); a limited chain moves its goal
  sideways for one forward stage (``nudge_goal``) when the target is within reach, else stops;
* a limited chain keeps the best pose it saw and stops on it after ``NO_PROGRESS_WINDOW``
  iterations without progress (limits can make FABRIK cycle). A plain chain needs neither: its
  error did not rise between two iterations in any of 2,100 solves from straight and random bent
  starts (``benchmarks/plain_monotone.py``), so its last pose is its best.

Status codes follow ``fabrik.solvers.result.STATUSES``: 0 reached, 1 unreachable, 2 stalled,
3 max_iterations. Arrays are (n, 3); 2D chains come in embedded in z = 0.

Limits: every bone carries a frame (``fabrik.kernels.frames``); ``limits`` is the packed (n, w)
table of ``fabrik.kernels.limit_layout.pack_limits``: row i limits bone i against bone i - 1 (the
fixed ``root_frame`` for i = 0).

Forward stage (effector -> root): the effector goes onto the target (with an oriented target the
last bone is set along the target frame's +Y and takes the target frame, so the joint before the
effector goes to ``target - L * target_y``). Then for each bone i going inwards the joint i + 1
limit is applied *reversed*: the child bone i + 1 is already placed, so the proposed direction of
bone i is restricted to the set of parent directions from which bone i + 1 would be allowed (the
reflected region, see ``limit_direction``); then bone i's own limit is applied against its
parent's frame as it stands (from the previous backward stage; the fixed root frame for bone 0).
Applying the reversed child limit alone, as the paper describes, left constrained FABRIK stuck
far more often (measured: 172 of 200 random circular-cone chains reached against 192 of 200 with
both; see CHANGELOG.md). The frame of bone i is rebuilt from the child frame with the joint's
twist clamped, and joint i goes at distance L_i behind joint i + 1.

Backward stage (root -> effector): the root goes back to its base and each bone i takes the
direction towards the old position of joint i + 1, restricted by joint i's limit against its
parent frame. Its frame follows the bone by the smallest rotation; for a joint with a twist limit
it is instead the parent frame carried onto the bone, turned by the twist the bone had, clamped.
When the next joint is a hinge (and the target carries no orientation, whose twist the forward
stage has already propagated inwards) the bone is then turned about itself, within its twist
range, so that the hinge plane passes through the old position of the joint after the hinge: the
paper's Fig. 7 idea of choosing the hinge plane from where the chain must go, done with the twist
the joint has. (Measured on the DHM arm: 99 of 100 posed targets reached against 89 without.)
Joint limits are therefore met exactly after every backward stage, i.e. by every returned pose.
"""

import numpy as np
from numba import njit

from fabrik.kernels.ccd import rotate_tail, start_pose_result, unit_or
from fabrik.kernels.constraints import (COL_AXIS, COL_HINGE, COL_TWIST_FLAG, COL_TYPE, TYPE_HINGE,
                                        hinge_alignment_twist, limit_direction, limit_twist, wrap_angle)
from fabrik.kernels.frames import orientation_error, planarise, rotate_about, transport, twist_about_y, twist_between
from fabrik.kernels.singularity import MAX_ESCAPES
from fabrik.kernels.stopping import (MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, STALLED, UNREACHABLE,
                                      confirm_stall, effector_stalled, max_joint_move, stall_tol, unavoidable_error)
from fabrik.kernels.vec import (TINY, any_perpendicular, chain_lengths_hold, chain_scale, dist3, dist3v,
                                fallback_direction, inner_reach, off_line2, place_on_line, reach_sweep)


#: The largest turn (radians) of a second or third ``bend_chain``: bone i of n - 1 turns by
#: BEND_ANGLE * (i + 1) / (n - 1), so every joint's angle changes by BEND_ANGLE / (n - 1).
#: Measured on 900 random reachable targets of 5-30 joint chains started folded onto the root:
#: 163 stalled with the first bend alone; with this one after it, none.
BEND_ANGLE = 0.2


@njit(cache=True, inline="always", error_model="numpy")
def shortest_bone(lengths, default):
    """The shortest non-zero bone length, or ``default`` where none is shorter."""
    shortest = default
    for i in range(lengths.shape[0]):
        if 0.0 < lengths[i] < shortest:
            shortest = lengths[i]
    return shortest


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
        shortest = shortest_bone(bone_lengths, scale)
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
        rx, ry, rz = rotate_about(ax, ay, az, np.cos(angle), np.sin(angle), dx, dy, dz)
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


#: ``turn_to_target`` leaves a start pose within this fraction of the chain's length of straight
#: alone: turned onto the target's line it would be the singular chain of section 5.4 (300 random
#: targets, 10 joints: from starts bent by 1e-3 to 1e-2 rad turning cost 0.6-1.0 iterations).
TURN_BENT = 1e-2


@njit(cache=True, inline="always", error_model="numpy")
def _bent_line(p, total):
    """(``start_bent(p, total)``, the unit vector from ``p``'s first joint to its effector)."""
    last = p.shape[0] - 1
    near = TURN_BENT * total
    span = dist3(p, last, p, 0)
    if span <= near:
        return False, 0.0, 0.0, 0.0
    ux, uy, uz = (p[last, 0] - p[0, 0]) / span, (p[last, 1] - p[0, 1]) / span, (p[last, 2] - p[0, 2]) / span
    for j in range(1, last):
        if off_line2(p[j, 0] - p[0, 0], p[j, 1] - p[0, 1], p[j, 2] - p[0, 2], ux, uy, uz) > near * near:
            return True, ux, uy, uz
    return False, ux, uy, uz


@njit(cache=True, error_model="numpy")
def start_bent(p, total):
    """Whether ``turn_to_target`` may turn the pose ``p`` (n, 3): its effector further than
    ``TURN_BENT * total`` from its first joint, and a joint further than that from their line."""
    return _bent_line(p, total)[0]


@njit(cache=True, error_model="numpy")
def turn_to_target(p, root, target, total):
    """Turn the start pose ``p`` (n, 3) rigidly about its first joint, in place, by the smallest
    rotation that points its effector along ``target - root`` (about the z axis for a chain in the
    z = 0 plane), so that a warm start from the answer to a nearby target begins off by the change
    in the target's distance only. Nothing is turned (returns False) for a pose that is not
    ``start_bent``, a target within ``TURN_BENT * total`` of the root, or directions parallel or
    opposite to rounding."""
    bent, ux, uy, uz = _bent_line(p, total)
    if not bent:
        return False
    vx, vy, vz = target[0] - root[0], target[1] - root[1], target[2] - root[2]
    dist = np.sqrt(vx * vx + vy * vy + vz * vz)
    if dist <= TURN_BENT * total:
        return False
    vx, vy, vz = vx / dist, vy / dist, vz / dist
    kx, ky, kz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx  # axis * sin(angle)
    s = np.sqrt(kx * kx + ky * ky + kz * kz)
    if s <= 1e-12:
        return False
    rotate_tail(p, 0, 1, (kx / s, ky / s, kz / s), ux * vx + uy * vy + uz * vz, s)
    return True


@njit(cache=True, error_model="numpy")
def warm_turn(p, root, target, tol, max_iter, total, dist):
    """``turn_to_target`` where a plain solve will iterate from ``p``: ``max_iter`` > 0, a target
    within reach (``dist`` = |target - root| <= ``total``) and an effector not already within
    ``tol`` of it (a start that is already an answer is returned as it is). The first step of
    ``fabrik_chain_run`` with ``turn``; ``fabrik.solve_batch`` runs it on its start poses before
    its kernels, so that their answers stay ``fabrik.solve``'s bit for bit. True if it turned."""
    return max_iter > 0 and dist <= total and dist3v(p, p.shape[0] - 1, target) > tol and \
        turn_to_target(p, root, target, total)


@njit(cache=True, error_model="numpy")
def nudge_goal(goal, p, lengths, total):
    """Move goal sideways, off the chain's line, by a tenth of the shortest non-zero bone."""
    n = p.shape[0]
    u = np.zeros(3)
    r = dist3(p, n - 1, p, 0)
    for k in range(3):
        u[k] = (p[n - 1, k] - p[0, k]) / r if r > TINY * total else (1.0 if k == 1 else 0.0)
    side = any_perpendicular(u)
    shortest = shortest_bone(lengths, total)
    for k in range(3):
        goal[k] += 0.1 * shortest * side[k]


#: Iterations without the best error (position, plus for an oriented target the orientation as a
#: distance at the last bone's tip) falling by ``PROGRESS_FRACTION`` after which a limited solve
#: stops on the best pose it saw: limits, and an orientation, can make FABRIK cycle between poses
#: while its effector keeps moving. On 1500 random limited chains whose targets the limits often
#: block, solves that ran to the cap went from 291 to 0 (mean iterations 204 -> 51, the same 206
#: reached); a window of 100 lost targets reached after 209 to 410 iterations.
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


@njit(cache=True, inline="always", error_model="numpy")
def copy_pose(p, frames, active, from_p, from_frames, from_active):
    """``p``, ``frames``, ``active`` <- ``from_p``, ``from_frames``, ``from_active`` (a limited
    chain's pose)."""
    p[:, :] = from_p
    frames[:, :, :] = from_frames
    active[:] = from_active


@njit(cache=True, inline="always", error_model="numpy")
def fabrik_chain_run(p, lengths, target, root, tol, max_iter, lim, turn):
    """Solve one chain in place by FABRIK: plain with ``lim`` None, else limited with ``lim`` =
    (frames, active, limits, root_frame, target_rot, oriented, planar, orientation_tol) as
    ``fabrik.kernels.fabrik_constrained.fabrik_constrained_search`` builds it from its records, ``frames``
    (n, 3, 3) the start pose's bone frames and ``active`` (n,) int64. ``p`` (n, 3) holds the start
    pose on entry and the answer on return (with limits ``frames`` and ``active`` too). ``turn``
    (plain only): first turn the start pose towards the target (``warm_turn``). Returns
    (iterations, error, orientation_error, status_code).

    Inlined into its two entries (``fabrik_chain_into``, ``fabrik_constrained_search``), each
    compiled without the other's branches on ``lim is None`` (numba prunes them before typing): a
    plain solve runs none of the limited code and no extra call, and allocates nothing on the way
    to a reached target (a stall check's snapshot and a bend do).
    """
    n = p.shape[0]
    last = n - 1
    total, scale = chain_scale(lengths)
    eps = TINY * scale  # joints closer than this coincide
    # direction used where two joints coincide: from the target back towards the root
    fx, fy, fz, dist = fallback_direction(root, target, eps)
    inner = inner_reach(lengths, total)
    oerr = 0.0
    otol = np.inf  # orientation tolerance: none without limits
    if lim is None:
        if turn:
            warm_turn(p, root, target, tol, max_iter, total, dist)
        if max_iter == 0:
            # no iteration: the start pose, made rigid and hung from the root as every method's is
            start, it0, err0, code0 = start_pose_result(p, lengths, root, target, tol)
            p[:, :] = start
            return it0, err0, 0.0, code0
        if dist > total:
            # Unreachable: the chain stretched straight from the root towards the target
            stretch_towards(p, root, lengths, fx, fy, fz)
            err = dist3v(p, last, target)
            # a target a hair beyond full reach is still reached within tolerance
            return 1, err, 0.0, (REACHED if err <= tol else UNREACHABLE)
        # (targets closer to the root than 2*longest - total cannot be reached either)
        err = dist3v(p, last, target)
        if err <= tol and dist3v(p, 0, root) == 0.0 and chain_lengths_hold(p, lengths, scale):
            return 0, err, 0.0, REACHED
        if dist > total - tol:
            # Within tol of the full reach: the stretched chain is within tol of the target, where
            # iterating converges ever more slowly (hundreds of iterations, and not always within
            # tol in max_iter, as the chain straightens).
            stretched = p.copy()
            stretch_towards(stretched, root, lengths, fx, fy, fz)
            stretched_err = dist3v(stretched, last, target)
            if stretched_err <= tol:  # (not by rounding at the band's inner edge: iterate then)
                p[:, :] = stretched
                return 1, stretched_err, 0.0, REACHED
    else:
        frames, active, limits, root_frame, target_rot, oriented, planar, otol = lim
        G = np.empty((3, 3))
        d = np.empty(3)
        align = not (oriented or planar)
        # make the start pose legal (and rooted) first
        backward_stage(p, frames, lengths, limits, root, root_frame, active, G, d, planar, align, eps)
        err = dist3v(p, last, target)
        if oriented:
            oerr = orientation_error(frames[last - 1], target_rot)
        if err <= tol and oerr <= otol:
            return 0, err, oerr, REACHED
        goal = target.copy()
        # cycles: limits (or a target orientation they do not allow) can make FABRIK alternate
        # between poses without ever stalling; the best pose seen, by position error plus the
        # orientation error as a distance at the last bone's tip, is kept
        orient_weight = lengths[last - 1] if oriented else 0.0
        progress_ref = score = best_score = err + orient_weight * oerr
        best_p = p.copy()
        best_frames = frames.copy()
        best_active = active.copy()
        best_err = err
        best_oerr = oerr
        since_progress = 0
    escapes = 0
    # A plain chain's no-progress test runs in two steps so that the hot loop pays nothing for it:
    # when the effector looks stalled, a snapshot of the pose is taken, and the next iteration
    # declares a stall only if no joint moved more than tol since the snapshot.
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
        prev_oerr = oerr
        older_drop = last_drop
        last_drop = drop
        if check_pose:
            if snapshot is p:
                snapshot = np.empty_like(p)
            snapshot[:, :] = p
        if lim is None:
            # forward reaching: effector onto the target, then inwards to the root
            p[last, 0] = target[0]
            p[last, 1] = target[1]
            p[last, 2] = target[2]
            reach_sweep(p, last - 1, last, -1, target[0], target[1], target[2], lengths, fx, fy, fz, eps)
            # backward reaching: root back onto its base, then outwards to the effector
            p[0, 0] = root[0]
            p[0, 1] = root[1]
            p[0, 2] = root[2]
            x, y, z = reach_sweep(p, 1, last, 1, root[0], root[1], root[2], lengths, fx, fy, fz, eps)
        else:
            forward_stage(p, frames, lengths, limits, goal, target_rot, oriented, G, d, root_frame, planar, eps)
            backward_stage(p, frames, lengths, limits, root, root_frame, active, G, d, planar, align, eps)
            for k in range(3):
                goal[k] = target[k]
            x = p[last, 0]
            y = p[last, 1]
            z = p[last, 2]
            if oriented:
                oerr = orientation_error(frames[last - 1], target_rot)
        it += 1
        ex = x - target[0]
        ey = y - target[1]
        ez = z - target[2]
        err2 = ex * ex + ey * ey + ez * ez
        if err2 <= tol2 and oerr <= otol:
            return it, np.sqrt(err2), oerr, REACHED
        err = np.sqrt(err2)
        drop = prev_err - err
        if lim is None:
            if check_pose:
                check_pose = False
                if max_joint_move(p, snapshot) < stall_tol(tol, scale):
                    # Stuck short of where the chain can come: the straight-chain singularity of
                    # section 5.4, or a chain within rounding of it (straight or folded; a target
                    # inside the inner reach on the line of a chain folded the wrong way). Bend it
                    # and go on.
                    short = err > unavoidable_error(dist, total, inner, tol) + stall_tol(tol, scale)
                    if short and escapes < MAX_ESCAPES:
                        bend_chain(p, target, lengths, scale, fx, fy, fz, escapes > 0)
                        escapes += 1
                        err = dist3v(p, last, target)  # what a solve capped right here reports
                        drop = np.inf  # the trend starts again
                        continue
                    if dist < inner - tol:
                        return it, err, 0.0, (STALLED if short else UNREACHABLE)
                    stalled, probe_err, probe_end = confirm_stall(err, prev_err, last_drop, older_drop, tol, it,
                                                                  probe_err, probe_end)
                    if stalled:
                        return it, err, 0.0, STALLED
        else:
            score = err + orient_weight * oerr
            if score < best_score:
                best_score = score
                copy_pose(best_p, best_frames, best_active, p, frames, active)
                best_err = err
                best_oerr = oerr
            if score < (1.0 - PROGRESS_FRACTION) * progress_ref:
                progress_ref = score
                since_progress = 0
            else:
                since_progress += 1
                if since_progress >= NO_PROGRESS_WINDOW:
                    copy_pose(p, frames, active, best_p, best_frames, best_active)
                    return it, best_err, best_oerr, (UNREACHABLE if dist > total else STALLED)
        # a nearly folded chain can unfold slowly while its effector barely moves, hence a plain
        # chain's second, whole-pose check above before a stall is declared
        if not (effector_stalled(p, last, px, py, pz, stall_tol(tol, scale), err, prev_err)
                and (oerr <= otol or oerr > (1.0 - PROGRESS_FRACTION) * prev_oerr)):
            continue
        if lim is None:
            check_pose = True
        elif dist <= total and escapes < MAX_ESCAPES:
            # stuck short of a target within reach: the singular straight chain of section 5.4
            # (FABRIK cannot bend it) or a local minimum of the limits. Run one forward stage
            # towards a goal nudged sideways (measured on 200 random chains with circular cones:
            # 195 reached against 192 without; DHM arm with oriented targets: 63 of 100 against 61)
            nudge_goal(goal, p, lengths, total)
            escapes += 1
        else:
            if best_score < score:
                copy_pose(p, frames, active, best_p, best_frames, best_active)
                err, oerr = best_err, best_oerr
            return it, err, oerr, (UNREACHABLE if dist > total else STALLED)
    if lim is not None:
        if best_score < score:
            copy_pose(p, frames, active, best_p, best_frames, best_active)
            err, oerr = best_err, best_oerr
    return it, err, oerr, MAX_ITERATIONS


@njit(cache=True, error_model="numpy")
def fabrik_chain_into(p, bone_lengths, target, root, tol, max_iter, turn):
    """Solve one chain in place (``fabrik_chain_run`` without limits): ``p`` (n, 3) holds the start
    pose on entry and the answer on return. Returns (iterations, error, status_code). The
    per-target body of both ``fabrik.solve`` (``fabrik.kernels.fabrik_chain_entry``) and the batch
    kernels (``fabrik.kernels.batch``), so that a batch answers exactly as target-by-target solves
    do.
    """
    it, err, _, code = fabrik_chain_run(p, bone_lengths, target, root, tol, max_iter, None, turn)
    return it, err, code
