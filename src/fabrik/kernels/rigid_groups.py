"""Rigid groups for tree FABRIK: children of one joint moving as one body about it.

In a BVH skeleton a joint's rotation turns all its children together, so such a joint (a pelvis
with the thighs and the spine, a chest with the neck and the collars, a palm with the fingers) is
the centre of a group whose members keep their rest offsets from it
(``fabrik.model.rig.rigid_groups`` finds them). The groups arrive as the record ``groups =
Groups(group_of, group_start, group_members, group_offsets, in_group, releasable)``
(``fabrik.kernels.records``).

Members move as one rigid body about their centre: in the forward stage the centre goes to the
centroid of all its proposals, each targeted member proposing ``member - R o`` (their mean is the
best-fit placement of the group) and its other children proposing as usual
(``place_group_centre``; a held group's fit also counts the centre at its old position, which
keeps coupled groups such as a chest held on a held pelvis from drifting apart); in the backward stage every member is put at ``centre + R o``, R the
rotation that best maps the rest offsets onto the members' forward-stage positions, refined from
the previous R by Newton steps (``place_group_members``). A held (not releasable) group whose
centre hangs on a bone is first seated on that bone's sphere together with its turn
(``seat_group``).
"""

import numpy as np
from numba import njit

from fabrik.kernels.rotation_fit import (cross_covariance, definite, det3, fit_gradient, kabsch, newton_turn,
                                        refine_rotation, turn_rotation)
from fabrik.kernels.constraints import ACTIVE_EPS
from fabrik.kernels.frames import axis_angle_matrix, mm_to
from fabrik.kernels.vec import place_on_line

#: Newton steps per rigid-group fit and stage (warm-started from the previous fit).
RIGID_FIT_STEPS = 2


#: Newton steps of ``seat_group`` per backward stage at most, and the turn (radians) below which
#: they stop.
SEAT_STEPS, SEAT_STOP = 16, 1e-9


#: Halvings of a ``seat_group`` step that would not raise its objective, at most.
SEAT_HALVINGS = 6


@njit(cache=True, error_model="numpy")
def place_group_centre(p, centre, g, rot, active, group_start, group_members, group_offsets, src, dst,
                       proposal_sum, proposal_count, h, anchored, weights=None):
    """Forward stage at a rigid group's centre: fit the group to its targeted members' positions
    (``rot[g]`` refined) and put the centre at the centroid of the members' rigid proposals
    (``member - R o``) and the proposals of the centre's other children. ``anchored``: the fit
    also counts the centre itself at its old position (offset 0), as a chain's FABRIK aims a
    joint along the line to its old position; members close to one line (a chest's neck and two
    shoulders) leave a turn about that line almost free, and without the anchor the centre's
    lever carries that ill-conditioned turn into the centre's position, which then grows from
    iteration to iteration. ``h``: 3 x 3 scratch. ``weights`` (n,): effector weights
    (``fabrik.kernels.tree_extras.branch_weights``): the fit and the centroid weigh each member by
    its weight, and ``proposal_count`` holds the summed weights of the other proposals (None: every
    member and proposal counts once)."""
    m, ms0, ms1, ms2, md0, md1, md2 = member_means(p, g, active, group_start, group_members, group_offsets, weights)
    a = 1.0 if anchored else 0.0
    # the fit's centroids over the members and (weight a) the centre: rest offset 0, old position
    f = m / (m + a)
    cs0, cs1, cs2 = f * ms0, f * ms1, f * ms2
    cd0 = f * md0 + a * p[centre, 0] / (m + a)
    cd1 = f * md1 + a * p[centre, 1] / (m + a)
    cd2 = f * md2 + a * p[centre, 2] / (m + a)
    j = 0
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        if active[k]:
            w = 1.0 if weights is None else weights[k]
            src[j, 0] = w * (group_offsets[idx, 0] - cs0)
            src[j, 1] = w * (group_offsets[idx, 1] - cs1)
            src[j, 2] = w * (group_offsets[idx, 2] - cs2)
            dst[j, 0] = p[k, 0] - cd0
            dst[j, 1] = p[k, 1] - cd1
            dst[j, 2] = p[k, 2] - cd2
            j += 1
    src[j, 0] = -a * cs0
    src[j, 1] = -a * cs1
    src[j, 2] = -a * cs2
    dst[j, 0] = p[centre, 0] - cd0
    dst[j, 1] = p[centre, 1] - cd1
    dst[j, 2] = p[centre, 2] - cd2
    refine_rotation(rot[g], cross_covariance(src, dst, j + 1, h), RIGID_FIT_STEPS)
    total = m + proposal_count[centre]
    a0, a1, a2 = rotate3(rot[g], ms0, ms1, ms2)
    p[centre, 0] = (m * (md0 - a0) + proposal_sum[centre, 0]) / total
    p[centre, 1] = (m * (md1 - a1) + proposal_sum[centre, 1]) / total
    p[centre, 2] = (m * (md2 - a2) + proposal_sum[centre, 2]) / total


@njit(cache=True, error_model="numpy")
def place_group_members(p, centre, g, rot, active, group_start, group_members, group_offsets, carried, src, dst, h,
                        weights=None):
    """Backward stage at a rigid group's centre (already placed): turn the group towards its
    targeted members' forward-stage positions and put every member at ``centre + R o``
    (untargeted members through their carried bone vectors). ``h``: 3 x 3 scratch. ``weights``
    (n,) or None: the turn's fit weighs each member by its effector weight."""
    m = member_offsets(p, centre, g, active, group_start, group_members, group_offsets, src, dst, weights)
    if m > 0:
        refine_rotation(rot[g], cross_covariance(src, dst, m, h), RIGID_FIT_STEPS)
    r = rot[g]
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        for c in range(3):
            v = r[c, 0] * group_offsets[idx, 0] + r[c, 1] * group_offsets[idx, 1] + r[c, 2] * group_offsets[idx, 2]
            if active[k]:
                p[k, c] = p[centre, c] + v
            else:
                carried[k, c] = v


@njit(cache=True, inline="always", error_model="numpy")
def member_offsets(p, centre, g, active, group_start, group_members, group_offsets, src, dst, weights=None):
    """The first m rows of ``src`` and ``dst`` <- the rest offsets of group g's active members
    (each times its effector weight when ``weights`` (n,) is given) and their offsets from
    ``p[centre]``; returns m."""
    m = 0
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        if active[k]:
            w = 1.0 if weights is None else weights[k]
            for c in range(3):
                src[m, c] = w * group_offsets[idx, c]
                dst[m, c] = p[k, c] - p[centre, c]
            m += 1
    return m


@njit(cache=True, inline="always", error_model="numpy")
def member_means(p, g, active, group_start, group_members, group_offsets, weights=None):
    """(m, ms0, ms1, ms2, md0, md1, md2): how many of group g's members are active, and the means
    of their rest offsets and of their positions in ``p`` (NaN when none is). With ``weights``
    (n,): m the active members' summed weights and the means weighted."""
    m = 0
    total = 0.0
    ms0 = ms1 = ms2 = 0.0
    md0 = md1 = md2 = 0.0
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        if active[k]:
            if weights is None:
                ms0 += group_offsets[idx, 0]
                ms1 += group_offsets[idx, 1]
                ms2 += group_offsets[idx, 2]
                md0 += p[k, 0]
                md1 += p[k, 1]
                md2 += p[k, 2]
                m += 1
            else:
                w = weights[k]
                ms0 += w * group_offsets[idx, 0]
                ms1 += w * group_offsets[idx, 1]
                ms2 += w * group_offsets[idx, 2]
                md0 += w * p[k, 0]
                md1 += w * p[k, 1]
                md2 += w * p[k, 2]
                total += w
    if weights is None:
        return m, ms0 / m, ms1 / m, ms2 / m, md0 / m, md1 / m, md2 / m
    return total, ms0 / total, ms1 / total, ms2 / total, md0 / total, md1 / total, md2 / total


@njit(cache=True, inline="always", error_model="numpy")
def rotate3(rt, x, y, z):
    """The 3 x 3 matrix ``rt`` times the vector (x, y, z), as three floats."""
    return (rt[0, 0] * x + rt[0, 1] * y + rt[0, 2] * z, rt[1, 0] * x + rt[1, 1] * y + rt[1, 2] * z,
            rt[2, 0] * x + rt[2, 1] * y + rt[2, 2] * z)


@njit(cache=True, inline="always", error_model="numpy")
def seat_value(rt, h, ms0, ms1, ms2, w0, w1, w2, m, length):
    """``seat_group``'s F(R) = tr(R^T H) - M / 2 (|w - R ms| - length)^2."""
    value = 0.0
    for r in range(3):
        for c in range(3):
            value += rt[r, c] * h[r, c]
    a0, a1, a2 = rotate3(rt, ms0, ms1, ms2)
    gap = np.sqrt((w0 - a0) ** 2 + (w1 - a1) ** 2 + (w2 - a2) ** 2) - length
    return value - 0.5 * m * gap * gap


@njit(cache=True, error_model="numpy")
def seat_group(p, centre, parent, length, g, rot, active, group_start, group_members, group_offsets, eps, scratch,
               weights=None):
    """Backward stage at a held group's centre (already on its bone's sphere about
    ``p[parent]``, ``length`` > ``eps`` from it): choose the centre on that sphere and the group's
    turn R together, so that the targeted members come as close as they can to their
    forward-stage positions m_k (rest offsets o_k from the centre).

    With M members, ms and md the means of the o_k and the m_k, and the centre at
    ``parent + length * d`` (d a unit vector), sum_k |centre + R o_k - m_k|^2 is, up to a constant,
    ``-2 tr(R^T H) + M |length d - v|^2`` with H = sum_k (m_k - md)(o_k - ms)^T and
    v = md - parent - R ms. The best d is v / |v|, which leaves
    ``F(R) = tr(R^T H) - M / 2 (|v| - length)^2`` to maximise over R alone: Newton steps on R's
    rotation vector from the last R (with F's exact Hessian where that is negative definite,
    else with the second term's Gauss-Newton part; a step that would lower F halved, at most
    ``SEAT_HALVINGS`` times; at most ``SEAT_STEPS`` steps, until one turns R by less than
    ``SEAT_STOP`` rad), then the centre goes to ``parent + length * v / |v|``. (Placing the
    centre on the line towards its forward-stage position and then turning the group about it
    lets a chest on a nearly straight spine creep.) ``scratch``: (2, 3, 3). ``weights`` (n,) or
    None: each member weighed by its effector weight (M the summed weights, the means and H
    weighted)."""
    h = scratch[0]
    trial = scratch[1]
    m, ms0, ms1, ms2, md0, md1, md2 = member_means(p, g, active, group_start, group_members, group_offsets, weights)
    if m == 0:
        return
    h[:, :] = 0.0  # sum_k m_k o_k^T, then H
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        if active[k]:
            for r in range(3):
                wp = p[k, r] if weights is None else weights[k] * p[k, r]
                h[r, 0] += wp * group_offsets[idx, 0]
                h[r, 1] += wp * group_offsets[idx, 1]
                h[r, 2] += wp * group_offsets[idx, 2]
    for r in range(3):
        mdr = md0 if r == 0 else (md1 if r == 1 else md2)
        h[r, 0] -= m * mdr * ms0
        h[r, 1] -= m * mdr * ms1
        h[r, 2] -= m * mdr * ms2
    w0 = md0 - p[parent, 0]
    w1 = md1 - p[parent, 1]
    w2 = md2 - p[parent, 2]
    rt = rot[g]
    now = seat_value(rt, h, ms0, ms1, ms2, w0, w1, w2, m, length)
    for _ in range(SEAT_STEPS):
        gx, gy, gz, tr, k00, k01, k02, k11, k12, k22 = fit_gradient(rt, h)
        # a = R ms and v = md - parent - a
        a0, a1, a2 = rotate3(rt, ms0, ms1, ms2)
        v0 = w0 - a0
        v1 = w1 - a1
        v2 = w2 - a2
        rr = np.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        aa = a0 * a0 + a1 * a1 + a2 * a2
        scale = abs(tr) + m * aa
        if rr > eps:
            # |v| changes by b . w / |v| for the turn w, b = v x a, to first order (r^2 grows by
            # 2 b . w + w^T Q w, Q = (|a|^2 + v . a) I - a a^T - (a v^T + v a^T) / 2): the gradient
            # of M / 2 (|v| - length)^2 and its Hessian, M b b^T / |v|^2 plus f (Q - b b^T / |v|^2)
            # with f = M (|v| - length) / |v|. Where the whole is not positive definite (members
            # whose offsets are centred near the centre, |a| small, leave a turn nearly free)
            # the second part is dropped (Gauss-Newton).
            b0 = v1 * a2 - v2 * a1
            b1 = v2 * a0 - v0 * a2
            b2 = v0 * a1 - v1 * a0
            f = m * (rr - length) / rr
            gx -= f * b0
            gy -= f * b1
            gz -= f * b2
            cb = m / (rr * rr)
            k00 += cb * b0 * b0
            k01 += cb * b0 * b1
            k02 += cb * b0 * b2
            k11 += cb * b1 * b1
            k12 += cb * b1 * b2
            k22 += cb * b2 * b2
            cb = f / (rr * rr)
            diag = aa + v0 * a0 + v1 * a1 + v2 * a2
            e00 = k00 + f * (diag - a0 * a0 - v0 * a0) - cb * b0 * b0
            e01 = k01 - f * (a0 * a1 + 0.5 * (a0 * v1 + v0 * a1)) - cb * b0 * b1
            e02 = k02 - f * (a0 * a2 + 0.5 * (a0 * v2 + v0 * a2)) - cb * b0 * b2
            e11 = k11 + f * (diag - a1 * a1 - v1 * a1) - cb * b1 * b1
            e12 = k12 - f * (a1 * a2 + 0.5 * (a1 * v2 + v1 * a2)) - cb * b1 * b2
            e22 = k22 + f * (diag - a2 * a2 - v2 * a2) - cb * b2 * b2
            if definite(e00, e01, e11, det3(e00, e01, e02, e11, e12, e22), scale):
                k00, k01, k02, k11, k12, k22 = e00, e01, e02, e11, e12, e22
        wx, wy, wz = newton_turn(k00, k01, k02, k11, k12, k22, gx, gy, gz, scale)
        # F is not concave everywhere: halve a step that would lower it
        turned = 0.0
        for _ in range(SEAT_HALVINGS):
            trial[:, :] = rt
            turned = turn_rotation(trial, wx, wy, wz)
            if turned == 0.0:
                break
            value = seat_value(trial, h, ms0, ms1, ms2, w0, w1, w2, m, length)
            if value >= now:
                now = value
                break
            wx *= 0.5
            wy *= 0.5
            wz *= 0.5
        else:
            break  # no step along w raises F: R is as good as this turn gets
        rt[:, :] = trial
        if turned < SEAT_STOP:
            break
    a0, a1, a2 = rotate3(rt, ms0, ms1, ms2)
    # the centre where the members' fit puts it, pulled onto the sphere (where it meets the
    # parent, the centre's current direction is kept)
    x, y, z = p[centre, 0], p[centre, 1], p[centre, 2]
    p[centre, 0] = md0 - a0
    p[centre, 1] = md1 - a1
    p[centre, 2] = md2 - a2
    place_on_line(p, centre, parent, length, (x - p[parent, 0]) / length, (y - p[parent, 1]) / length,
                  (z - p[parent, 2]) / length, eps)


@njit(cache=True, error_model="numpy")
def fit_groups(p, parents, group_of, group_start, group_members, group_offsets, active):
    """The start of a solve with rigid groups: (rot (G, 3, 3), active_members (G,), src, dst): each
    group's rotation best mapping its rest offsets onto the members' offsets in ``p`` (``kabsch``),
    how many members are active, and scratch rows for the fits."""
    n_groups = group_start.shape[0] - 1
    rot = np.zeros((max(n_groups, 1), 3, 3))
    active_members = np.zeros(max(n_groups, 1), dtype=np.int64)
    src = np.empty((group_members.shape[0] + 1, 3))
    dst = np.empty((group_members.shape[0] + 1, 3))
    h = np.empty((3, 3))
    for g in range(n_groups):
        m = 0
        centre = group_members[group_start[g]]
        while group_of[centre] != g:
            centre = parents[centre]
        for idx in range(group_start[g], group_start[g + 1]):
            member = group_members[idx]
            for c in range(3):
                src[m, c] = group_offsets[idx, c]
                dst[m, c] = p[member, c] - p[centre, c]
            if active[member]:
                active_members[g] += 1
            m += 1
        rot[g] = kabsch(cross_covariance(src, dst, m, h))
    return rot, active_members, src, dst


@njit(cache=True, error_model="numpy")
def _largest_turn(k0, k1, k2, R0, centre, g, group_start, group_members, group_offsets, ca):
    """The largest angle of a turn about the unit axis k (in the centre's rest frame) that keeps
    every member's bone within ``acos(ca)`` of its rest direction: for a member at rest direction
    r, a turn by t moves it by acos(cos t + (1 - cos t) (k . r)^2)."""
    best = np.pi
    for idx in range(group_start[g], group_start[g + 1]):
        o0, o1, o2 = group_offsets[idx, 0], group_offsets[idx, 1], group_offsets[idx, 2]
        r = np.sqrt(o0 * o0 + o1 * o1 + o2 * o2)
        if r == 0.0:
            continue
        # the member's rest direction in the centre's rest frame: R0[centre]^T o / |o|
        x = (R0[centre, 0, 0] * o0 + R0[centre, 1, 0] * o1 + R0[centre, 2, 0] * o2) / r
        y = (R0[centre, 0, 1] * o0 + R0[centre, 1, 1] * o1 + R0[centre, 2, 1] * o2) / r
        z = (R0[centre, 0, 2] * o0 + R0[centre, 1, 2] * o1 + R0[centre, 2, 2] * o2) / r
        along = k0 * x + k1 * y + k2 * z
        off = 1.0 - along * along
        if off <= 1e-12:
            continue  # a member on the axis never moves
        c = 1.0 - (1.0 - ca) / off
        if c > -1.0:
            t = np.arccos(min(1.0, c))
            if t < best:
                best = t
    return best


@njit(cache=True, error_model="numpy")
def hold_group(p, F, centre, g, rot, active, group_start, group_members, group_offsets, R0, circ, root_free, src,
               dst, h, L, T):
    """Backward stage of a solve with joint frames at a held group's centre (already placed, its
    frame ``F[centre]`` set): turn the group towards its active members' forward-stage positions
    (``rot[g]``, the centre's world rotation against the rest pose, refined by Newton steps), keep
    that turn inside the centre's limit when it is a circular cone (``circ[centre]``: the largest
    turn about the same axis that holds every member's bone in the cone), then put every member at
    ``centre + R o`` with the frame ``R R0[member]``. At the root the group's turn is the root's
    frame: fitted when ``root_free``, else held at ``F[0]``. Returns 1 when the centre's limit is
    on its boundary (clamped or within ``ACTIVE_EPS``), else 0. A centre with another kind of limit is
    not held (``fabrik_tree`` releases its group). L, T (3, 3) are scratch."""
    m = member_offsets(p, centre, g, active, group_start, group_members, group_offsets, src, dst)
    r = rot[g]
    active_limit = 0
    if centre == 0 and not root_free:
        r[:, :] = F[0]
    elif m > 0:
        refine_rotation(r, cross_covariance(src, dst, m, h), RIGID_FIT_STEPS)
    if centre == 0:
        F[0, :, :] = r
    elif circ[centre, 0] <= 1.0:
        # the centre's local turn in its rest frame: L = F[centre]^T R R0[centre]
        mm_to(r, R0[centre], T)
        for a in range(3):
            for b in range(3):
                L[a, b] = F[centre, 0, a] * T[0, b] + F[centre, 1, a] * T[1, b] + F[centre, 2, a] * T[2, b]
        cos_t = 0.5 * (L[0, 0] + L[1, 1] + L[2, 2] - 1.0)
        k0 = L[2, 1] - L[1, 2]
        k1 = L[0, 2] - L[2, 0]
        k2 = L[1, 0] - L[0, 1]
        s = np.sqrt(k0 * k0 + k1 * k1 + k2 * k2)  # 2 sin t
        if s > 1e-12:
            k0 /= s
            k1 /= s
            k2 /= s
            t = np.arctan2(0.5 * s, cos_t)
            most = _largest_turn(k0, k1, k2, R0, centre, g, group_start, group_members, group_offsets, circ[centre, 0])
            if t >= most - ACTIVE_EPS:
                active_limit = 1
            if t > most:
                axis_angle_matrix(L, k0, k1, k2, most)
                # R = F[centre] L R0[centre]^T
                mm_to(F[centre], L, T)
                for a in range(3):
                    for b in range(3):
                        r[a, b] = T[a, 0] * R0[centre, b, 0] + T[a, 1] * R0[centre, b, 1] + T[a, 2] * R0[centre, b, 2]
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        for c in range(3):
            p[k, c] = p[centre, c] + r[c, 0] * group_offsets[idx, 0] + r[c, 1] * group_offsets[idx, 1] \
                + r[c, 2] * group_offsets[idx, 2]
        mm_to(r, R0[k], T)
        F[k, :, :] = T
    return active_limit


@njit(cache=True, error_model="numpy")
def group_ends(group_of, group_start, group_members):
    """(G, 2) int64: each group's centre and its lowest-numbered member."""
    n_groups = group_start.shape[0] - 1
    ends = np.zeros((max(n_groups, 1), 2), dtype=np.int64)
    for j in range(group_of.shape[0]):
        if group_of[j] >= 0:
            ends[group_of[j], 0] = j
    for g in range(n_groups):
        first = group_members[group_start[g]]
        for idx in range(group_start[g], group_start[g + 1]):
            first = min(first, group_members[idx])
        ends[g, 1] = first
    return ends
