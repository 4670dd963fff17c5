"""The step that places a joint under joint limits, for tree FABRIK (section 4.3 on a tree); the
rotation-based methods restrict their turns in ``fabrik.kernels.tree_methods``.

The closed forms of the common limits are written out here, read by index and inlined, because
they run for every joint of every iteration (array views and calls cost reference counting per
array argument; on the CMU skeleton the four hinges make 20 such calls an iteration); the other
limits take the general path (``fabrik.kernels.constraints``).

Frames ``F`` (n, 3, 3) and limits follow ``fabrik.solvers.skeleton_fabrik``. The tables arrive
as the record ``limits = TreeLimits(Q, rows, circ, hcs, own_start, own_list, R0)``
(``fabrik.kernels.records``) of ``fabrik.model.rig.limit_tables``: ``Q[c] = R0[parent(c)]^T
A[parent(c)] R0[c]`` (``Rig.limit_Q``, A the skeleton's reference rotations, identity by default);
``rows`` (n, w) the packed limit rows (``fabrik.kernels.limit_layout.pack_limits``), row j
limiting every bone c leaving j in its reference frame ``F[j] Q[c]``; ``circ`` and ``hcs`` flag
the rows with a closed form (circular cones without a twist limit; hinges with their twist held at
0); ``own_start`` / ``own_list`` the non-zero bones whose reference frame is joint i's frame.

Forward stage, joint i with a non-zero bone (written out in the loop of
``fabrik.kernels.fabrik_tree``): the proposed bone direction gives a candidate frame (the old
frame carried onto it by the smallest rotation); a hinge on i turns it about the bone so that the
hinge plane holds the child; every limited child bone already placed is read *reversed* (the
parent turned by the smallest rotation that puts the child inside its limit); last the bone's own
limit is applied against its reference frame and its twist clamped; the joint proposes its
parent's position at the bone's length behind it. Backward stage (``backward_stage``), from the
root outwards: every bone takes the direction towards its child's forward-stage position
(untargeted bones keep their frame relative to the parent), a hinge parent is turned to hold its
child in the hinge plane, and the limit projects the direction and clamps the twist. So every
returned pose satisfies every limit and every bone keeps its length.
"""

import numpy as np
from numba import njit

from fabrik.kernels.constraints import (ACTIVE_EPS, COL_AXIS, COL_CONE, COL_HINGE, COL_TWIST_FLAG, COL_TYPE, TYPE_HINGE,
                                        limit_direction, limit_twist, wrap_angle)
from fabrik.kernels.frames import (reorthonormalise, rotate_about, rotate_frame, rotation_between, transport,
                                   transported_z, twist_about_y, twist_between, up_axis)
from fabrik.kernels.jacobian import restrict_frame
from fabrik.kernels.rigid_groups import hold_group
from fabrik.kernels.rotation_fit import kabsch, nearly_collinear
from fabrik.kernels.vec import TINY

#: Below this bend (radians) between a hinge's reference and its child bone the hinge plane is
#: ill-defined, and the parent bone's twist is left alone.
HINGE_ALIGN_MIN_BEND = 0.15


_COS_MIN_BEND = float(np.cos(HINGE_ALIGN_MIN_BEND))


@njit(cache=True, inline="always", error_model="numpy")
def _tr(O, o, F, j, d0, d1, d2):
    """``fabrik.kernels.frames.transport``, inlined and read by index: O[o] (3, 3) <- F[j] turned by
    the smallest rotation taking its +Y onto the unit (d0, d1, d2). O may be F and o may be j
    (every read of F[j] precedes the writes)."""
    u0, u1, u2 = transported_z(F[j, 0, 0], F[j, 1, 0], F[j, 2, 0], F[j, 0, 1], F[j, 1, 1], F[j, 2, 1],
                               F[j, 0, 2], F[j, 1, 2], F[j, 2, 2], d0, d1, d2)
    z0, z1, z2 = up_axis(d0, d1, d2, u0, u1, u2)
    O[o, 0, 0] = d1 * z2 - d2 * z1
    O[o, 1, 0] = d2 * z0 - d0 * z2
    O[o, 2, 0] = d0 * z1 - d1 * z0
    O[o, 0, 1] = d0
    O[o, 1, 1] = d1
    O[o, 2, 1] = d2
    O[o, 0, 2] = z0
    O[o, 1, 2] = z1
    O[o, 2, 2] = z2


@njit(cache=True, inline="always", error_model="numpy")
def _cone_inside(limits, q, P, j, Q, c, d0, d1, d2):
    """True when row q of ``limits`` is a cone without a twist limit and the unit direction d
    lies strictly inside it, measured in the reference P[j] @ Q[c] (a cheap test by index that
    lets the hot loops skip the projection); False otherwise (then the full limit runs)."""
    if limits[q, COL_TYPE] != 1.0 or limits[q, COL_TWIST_FLAG] != 0.0:
        return False
    # coordinates of d in P[j] @ Q[c]: Q[c]^T (P[j]^T d)
    e0 = P[j, 0, 0] * d0 + P[j, 1, 0] * d1 + P[j, 2, 0] * d2
    e1 = P[j, 0, 1] * d0 + P[j, 1, 1] * d1 + P[j, 2, 1] * d2
    e2 = P[j, 0, 2] * d0 + P[j, 1, 2] * d1 + P[j, 2, 2] * d2
    x = Q[c, 0, 0] * e0 + Q[c, 1, 0] * e1 + Q[c, 2, 0] * e2
    y = Q[c, 0, 1] * e0 + Q[c, 1, 1] * e1 + Q[c, 2, 1] * e2
    z = Q[c, 0, 2] * e0 + Q[c, 1, 2] * e1 + Q[c, 2, 2] * e2
    sx = limits[q, COL_CONE] if x >= 0.0 else limits[q, COL_CONE + 1]
    sz = limits[q, COL_CONE + 2] if z >= 0.0 else limits[q, COL_CONE + 3]
    return y * abs(y) - sx * x * x - sz * z * z > 1e-12


@njit(cache=True, inline="always", error_model="numpy")
def _circular_own(F, q, Q, i, ca, sa):
    """Circular cone of half-angle alpha (cos ``ca``, sin ``sa``; any angle in (0, pi), no twist
    limit) on the bone whose desired frame is F[i], in its reference F[q] @ Q[i]: a direction
    outside keeps its azimuth and is put on the rim (the nearest allowed direction), and the
    frame follows by the smallest rotation. Closed form of ``limit_direction`` for this case.
    Returns 1 when the limit is active (moved, or on the rim to 1e-12)."""
    h0 = F[q, 0, 0] * Q[i, 0, 1] + F[q, 0, 1] * Q[i, 1, 1] + F[q, 0, 2] * Q[i, 2, 1]
    h1 = F[q, 1, 0] * Q[i, 0, 1] + F[q, 1, 1] * Q[i, 1, 1] + F[q, 1, 2] * Q[i, 2, 1]
    h2 = F[q, 2, 0] * Q[i, 0, 1] + F[q, 2, 1] * Q[i, 1, 1] + F[q, 2, 2] * Q[i, 2, 1]
    u0 = F[i, 0, 1]
    u1 = F[i, 1, 1]
    u2 = F[i, 2, 1]
    c = u0 * h0 + u1 * h1 + u2 * h2
    if c > ca + 1e-12:
        return 0
    if c >= ca:
        return 1
    w0 = u0 - c * h0
    w1 = u1 - c * h1
    w2 = u2 - c * h2
    r = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    if r < 1e-12:
        # straight behind the reference: every rim point is as near; take the reference's +X side
        w0 = F[q, 0, 0] * Q[i, 0, 0] + F[q, 0, 1] * Q[i, 1, 0] + F[q, 0, 2] * Q[i, 2, 0]
        w1 = F[q, 1, 0] * Q[i, 0, 0] + F[q, 1, 1] * Q[i, 1, 0] + F[q, 1, 2] * Q[i, 2, 0]
        w2 = F[q, 2, 0] * Q[i, 0, 0] + F[q, 2, 1] * Q[i, 1, 0] + F[q, 2, 2] * Q[i, 2, 0]
        r = 1.0
    k = sa / r
    d0 = ca * h0 + k * w0
    d1 = ca * h1 + k * w1
    d2 = ca * h2 + k * w2
    n = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    _tr(F, i, F, i, d0 / n, d1 / n, d2 / n)
    return 1


@njit(cache=True, inline="always", error_model="numpy")
def _circular_reverse(F, i, c, Q, ca, sa):
    """The circular cone (no twist limit) of child bone c read reversed: a circular cone is its
    own reflection, so the parent candidate F[i] (3, 3) is turned by the smallest rotation that
    brings the reference direction F[i] @ Q[c] +Y within alpha of the child's direction F[c] +Y."""
    h0 = F[i, 0, 0] * Q[c, 0, 1] + F[i, 0, 1] * Q[c, 1, 1] + F[i, 0, 2] * Q[c, 2, 1]
    h1 = F[i, 1, 0] * Q[c, 0, 1] + F[i, 1, 1] * Q[c, 1, 1] + F[i, 1, 2] * Q[c, 2, 1]
    h2 = F[i, 2, 0] * Q[c, 0, 1] + F[i, 2, 1] * Q[c, 1, 1] + F[i, 2, 2] * Q[c, 2, 1]
    v0 = F[c, 0, 1]
    v1 = F[c, 1, 1]
    v2 = F[c, 2, 1]
    cth = h0 * v0 + h1 * v1 + h2 * v2
    if cth >= ca:
        return
    k0 = h1 * v2 - h2 * v1
    k1 = h2 * v0 - h0 * v2
    k2 = h0 * v1 - h1 * v0
    sth = np.sqrt(k0 * k0 + k1 * k1 + k2 * k2)
    if sth < 1e-12:
        return  # exactly opposite: no preferred turn; the backward stage settles it
    k0 /= sth
    k1 /= sth
    k2 /= sth
    # turn by theta - alpha about k (towards the child): cos/sin of the difference
    _turn_frame(F, i, k0, k1, k2, cth * ca + sth * sa, sth * ca - cth * sa)


@njit(cache=True, inline="always", error_model="numpy")
def _turn_frame(F, i, k0, k1, k2, cd, sd):
    """F[i] (3, 3) <- the rotation of cos ``cd``, sin ``sd`` about the unit axis k times F[i]
    (Rodrigues, by index)."""
    # written out rather than frames.rotate_about, whose products group as k (kv t): limited
    # skeleton takes carry a last-bit change from frame to frame into different answers (with
    # this and rotation_fit.turn_rotation on rotate_about, mocap_sets' limited medians moved 2-5%)
    t = 1.0 - cd
    for col in range(3):
        x = F[i, 0, col]
        y = F[i, 1, col]
        z = F[i, 2, col]
        kv = k0 * x + k1 * y + k2 * z
        F[i, 0, col] = x * cd + (k1 * z - k2 * y) * sd + k0 * kv * t
        F[i, 1, col] = y * cd + (k2 * x - k0 * z) * sd + k1 * kv * t
        F[i, 2, col] = z * cd + (k0 * y - k1 * x) * sd + k2 * kv * t


@njit(cache=True, inline="always", error_model="numpy")
def _hinge_basis(F, i, Q, c, lim, j):
    """World hinge axis a, reference direction h and b = a x h of row j in the reference
    F[i] @ Q[c] (read by index)."""
    ax = lim[j, COL_AXIS]
    ay = lim[j, COL_AXIS + 1]
    az = lim[j, COL_AXIS + 2]
    # axis and +Y of the reference in F[i]'s coordinates
    e0 = Q[c, 0, 0] * ax + Q[c, 0, 1] * ay + Q[c, 0, 2] * az
    e1 = Q[c, 1, 0] * ax + Q[c, 1, 1] * ay + Q[c, 1, 2] * az
    e2 = Q[c, 2, 0] * ax + Q[c, 2, 1] * ay + Q[c, 2, 2] * az
    a0 = F[i, 0, 0] * e0 + F[i, 0, 1] * e1 + F[i, 0, 2] * e2
    a1 = F[i, 1, 0] * e0 + F[i, 1, 1] * e1 + F[i, 1, 2] * e2
    a2 = F[i, 2, 0] * e0 + F[i, 2, 1] * e1 + F[i, 2, 2] * e2
    h0 = F[i, 0, 0] * Q[c, 0, 1] + F[i, 0, 1] * Q[c, 1, 1] + F[i, 0, 2] * Q[c, 2, 1]
    h1 = F[i, 1, 0] * Q[c, 0, 1] + F[i, 1, 1] * Q[c, 1, 1] + F[i, 1, 2] * Q[c, 2, 1]
    h2 = F[i, 2, 0] * Q[c, 0, 1] + F[i, 2, 1] * Q[c, 1, 1] + F[i, 2, 2] * Q[c, 2, 1]
    return a0, a1, a2, h0, h1, h2, a1 * h2 - a2 * h1, a2 * h0 - a0 * h2, a0 * h1 - a1 * h0


@njit(cache=True, inline="always", error_model="numpy")
def _hinge_clamp(x, y, hcs, j):
    """(cos, sin, active) of the in-plane angle atan2(y, x) clamped to row j's range (nearer end
    along the circle), from the precomputed cos/sin of the bounds."""
    r = np.sqrt(x * x + y * y)
    if r < 1e-12:
        x, y, r = 1.0, 0.0, 1.0
    theta = np.arctan2(y, x)
    lo = hcs[j, 5]
    hi = hcs[j, 6]
    if lo <= theta <= hi:
        act = 1 if (theta - lo <= ACTIVE_EPS or hi - theta <= ACTIVE_EPS) else 0
        return x / r, y / r, act
    dl = abs(wrap_angle(theta - lo))
    dh = abs(wrap_angle(theta - hi))
    if dl <= dh:
        return hcs[j, 1], hcs[j, 2], 1
    return hcs[j, 3], hcs[j, 4], 1


@njit(cache=True, inline="always", error_model="numpy")
def _hinge_own(F, q, Q, i, limits, hcs, S):
    """Hinge of row q without twist freedom on the bone whose desired frame is F[i], in its
    reference F[q] @ Q[i]: the direction goes into the hinge plane at the clamped angle and the
    frame is the reference carried onto it (twist 0). Closed form of ``_place_general``. S (1, 3, 3)
    is scratch. Returns the active flag."""
    _product(S, 0, F, q, Q, i)
    a0, a1, a2, h0, h1, h2, b0, b1, b2 = _hinge_basis(F, q, Q, i, limits, q)
    u0 = F[i, 0, 1]
    u1 = F[i, 1, 1]
    u2 = F[i, 2, 1]
    c, sn, act = _hinge_clamp(u0 * h0 + u1 * h1 + u2 * h2, u0 * b0 + u1 * b1 + u2 * b2, hcs, q)
    d0 = c * h0 + sn * b0
    d1 = c * h1 + sn * b1
    d2 = c * h2 + sn * b2
    n = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    _tr(F, i, S, 0, d0 / n, d1 / n, d2 / n)
    return act


@njit(cache=True, inline="always", error_model="numpy")
def _hinge_reverse(F, i, c, Q, limits, hcs, pc):
    """Row pc's hinge (twist 0) of the placed child c read reversed: turn the parent candidate F[i]
    about the hinge axis so that the child's angle from the reference F[i] @ Q[c] is in range."""
    a0, a1, a2, h0, h1, h2, b0, b1, b2 = _hinge_basis(F, i, Q, c, limits, pc)
    v0 = F[c, 0, 1]
    v1 = F[c, 1, 1]
    v2 = F[c, 2, 1]
    x = v0 * h0 + v1 * h1 + v2 * h2
    y = v0 * b0 + v1 * b1 + v2 * b2
    r = np.sqrt(x * x + y * y)
    if r < 1e-12:
        return
    cb, sb, act = _hinge_clamp(x, y, hcs, pc)
    ct = x / r
    st = y / r
    # turn by delta = theta - bound about a: cos/sin of the difference
    cd = ct * cb + st * sb
    sd = st * cb - ct * sb
    if sd == 0.0 and cd > 0.0:
        return
    n = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    _turn_frame(F, i, a0 / n, a1 / n, a2 / n, cd, sd)


@njit(cache=True, inline="always", error_model="numpy")
def _unit_between(d, p, i, j, fx, fy, fz):
    """d <- unit(p[j] - p[i]); (fx, fy, fz) when the joints coincide. Returns the distance."""
    x = p[j, 0] - p[i, 0]
    y = p[j, 1] - p[i, 1]
    z = p[j, 2] - p[i, 2]
    r = np.sqrt(x * x + y * y + z * z)
    if r > TINY:
        d[0] = x / r
        d[1] = y / r
        d[2] = z / r
    else:
        d[0] = fx
        d[1] = fy
        d[2] = fz
    return r


@njit(cache=True, inline="always", error_model="numpy")
def align_hinge_twist(F, i, Q, c, limits, pc, s0, s1, s2):
    """Turn frame F[i] (3, 3) about its own +Y so that the hinge of row pc of ``limits``
    (measured in the reference ``F[i] Q[c]``) holds the unit child direction s in its plane, at an angle inside (or
    nearest to) its range; of the two solutions the one needing the smaller turn wins a tie.
    Nothing happens when the child bends less than ``HINGE_ALIGN_MIN_BEND`` from the reference."""
    a0, a1, a2, h0, h1, h2, _, _, _ = _hinge_basis(F, i, Q, c, limits, pc)  # world axis, reference +Y
    a = (a0, a1, a2)
    h = (h0, h1, h2)
    u = (F[i, 0, 1], F[i, 1, 1], F[i, 2, 1])
    hs = h[0] * s0 + h[1] * s1 + h[2] * s2
    if hs > _COS_MIN_BEND:
        return
    # a(psi) = cos(psi) a_perp + sin(psi) (u x a_perp) + a_par u ; want a(psi) . s = 0
    a_par = a[0] * u[0] + a[1] * u[1] + a[2] * u[2]
    ap0 = a[0] - a_par * u[0]
    ap1 = a[1] - a_par * u[1]
    ap2 = a[2] - a_par * u[2]
    ua0 = u[1] * ap2 - u[2] * ap1
    ua1 = u[2] * ap0 - u[0] * ap2
    ua2 = u[0] * ap1 - u[1] * ap0
    A = ap0 * s0 + ap1 * s1 + ap2 * s2
    B = ua0 * s0 + ua1 * s1 + ua2 * s2
    C = a_par * (u[0] * s0 + u[1] * s1 + u[2] * s2)
    R = np.sqrt(A * A + B * B)
    if R < 1e-9:
        return
    # psi = base +- off with cos/sin(base) = (A, B) / R and cos(off) = -C / R: no trigonometry
    cb = A / R
    sb = B / R
    co = -C / R
    if co > 1.0:
        co = 1.0
    elif co < -1.0:
        co = -1.0
    so = np.sqrt(1.0 - co * co)
    lo = limits[pc, COL_HINGE]
    hi = limits[pc, COL_HINGE + 1]
    best_c = 1.0
    best_s = 0.0
    best_cost = np.inf
    for k in range(2):
        sg = 1.0 if k == 0 else -1.0
        c = cb * co - sb * sg * so
        sn = sb * co + cb * sg * so
        # a and h turned about u by psi
        r0, r1, r2 = rotate_about(u[0], u[1], u[2], c, sn, a[0], a[1], a[2])
        g0, g1, g2 = rotate_about(u[0], u[1], u[2], c, sn, h[0], h[1], h[2])
        # signed angle from g to s about the rotated axis
        cx = g1 * s2 - g2 * s1
        cy = g2 * s0 - g0 * s2
        cz = g0 * s1 - g1 * s0
        theta = np.arctan2(cx * r0 + cy * r1 + cz * r2, g0 * s0 + g1 * s1 + g2 * s2)
        excess = 0.0
        if theta < lo:
            excess = lo - theta
        elif theta > hi:
            excess = theta - hi
        cost = excess + 1e-3 * (1.0 - c)
        if cost < best_cost:
            best_cost = cost
            best_c = c
            best_s = sn
    # turn F[i] about its own +Y (u) by psi: x <- c x - s z, z <- c z + s x
    for r in range(3):
        gx = F[i, r, 0]
        gz = F[i, r, 2]
        F[i, r, 0] = best_c * gx - best_s * gz
        F[i, r, 2] = best_c * gz + best_s * gx


@njit(cache=True, inline="always", error_model="numpy")
def _product(G, g, F, j, Q, c):
    """G[g] <- F[j] @ Q[c], by index (G[g] must not be F[j])."""
    for r in range(3):
        f0 = F[j, r, 0]
        f1 = F[j, r, 1]
        f2 = F[j, r, 2]
        for k in range(3):
            G[g, r, k] = f0 * Q[c, 0, k] + f1 * Q[c, 1, k] + f2 * Q[c, 2, k]


@njit(cache=True, error_model="numpy")
def fit_root_frame(F0, p, root3, own_start, own_list, active, Q, M, R, d):
    """F0 <- the rotation best mapping the rest directions of the root's own active bones (Q[c]
    +Y, in the root's rest frame) onto the directions from the root to their joints in ``p``
    (least squares, proper rotation: ``kabsch``). One direction: the old F0 turned by the smallest
    rotation. None: unchanged. M, R (3, 3) and d (3,) are scratch."""
    count = 0
    first = -1
    M[:, :] = 0.0
    for m in range(own_start[0], own_start[1]):
        c = own_list[m]
        if not active[c]:
            continue
        # the root sits at root3 in the backward stage; measure from there
        x = p[c, 0] - root3[0]
        y = p[c, 1] - root3[1]
        z = p[c, 2] - root3[2]
        r = np.sqrt(x * x + y * y + z * z)
        if r <= TINY:
            continue
        x /= r
        y /= r
        z /= r
        if first < 0:
            first = c
            d[0] = x
            d[1] = y
            d[2] = z
        count += 1
        for row in range(3):
            b = x if row == 0 else (y if row == 1 else z)
            for col in range(3):
                M[row, col] += b * Q[c, col, 1]
    if count == 0:
        return
    if count >= 2 and not nearly_collinear(M):
        F0[:, :] = kabsch(M)
        reorthonormalise(F0)
        return
    # one direction (or collinear ones): smallest turn of the old frame
    c = first
    a0 = F0[0, 0] * Q[c, 0, 1] + F0[0, 1] * Q[c, 1, 1] + F0[0, 2] * Q[c, 2, 1]
    a1 = F0[1, 0] * Q[c, 0, 1] + F0[1, 1] * Q[c, 1, 1] + F0[1, 2] * Q[c, 2, 1]
    a2 = F0[2, 0] * Q[c, 0, 1] + F0[2, 1] * Q[c, 1, 1] + F0[2, 2] * Q[c, 2, 1]
    rotation_between(R, a0, a1, a2, d[0], d[1], d[2])
    rotate_frame(M, F0, R)
    F0[:, :] = M
    reorthonormalise(F0)


@njit(cache=True, error_model="numpy")
def backward_stage(p, F, parents, lengths, Q, limits, circ, hcs, own_start, own_list, active, local, root3,
                   row_active, P3, R, d, held):
    """Root onto its base, then outwards (module docstring). ``local[i]`` is the frame of an
    untargeted bone i relative to its parent frame. Fills ``row_active`` (per limit row). Each
    bone's frame is built in place in F[i]; P3 (1, 3, 3), R (3, 3) and d (3,) are scratch.

    ``held``: the rigid groups held in this stage, ``(groups, rot, active_members, released,
    ends, R0, root_free, scratch)`` (``groups`` the kernels' ``Groups`` arrays, ``rot`` each group's
    turn, ``ends`` (G, 2) each group's centre and lowest-numbered member, ``R0`` the rest frames,
    ``scratch`` the fit's (src, dst, h, L, T)): the members of a held group that is not released
    are placed together by ``fabrik.kernels.rigid_groups.hold_group`` when the first of them is
    reached."""
    groups, rot, active_members, released, ends, R0, root_free, scratch = held
    group_of, group_start, group_members, group_offsets, in_group, _ = groups
    src, dst, fit_h, fit_L, fit_T = scratch
    n_groups = group_start.shape[0] - 1
    n = parents.shape[0]
    p[0, 0] = root3[0]
    p[0, 1] = root3[1]
    p[0, 2] = root3[2]
    row_active[:] = 0
    for g in range(n_groups):
        if ends[g, 0] == 0 and active_members[g] >= 2 and not released[g]:
            hold_group(p, F, 0, g, rot, active, group_start, group_members, group_offsets, R0, circ, root_free,
                       src, dst, fit_h, fit_L, fit_T)
    for i in range(1, n):
        q = parents[i]
        L = lengths[i]
        if n_groups > 0 and L > 0.0 and in_group[i] >= 0:
            g = in_group[i]
            if active_members[g] >= 2 and not released[g]:
                c = ends[g, 0]
                if c != 0 and ends[g, 1] == i:  # the group's first member: place them all
                    if hold_group(p, F, c, g, rot, active, group_start, group_members, group_offsets, R0, circ,
                                  root_free, src, dst, fit_h, fit_L, fit_T):
                        row_active[c] = 1
                continue
        if L == 0.0:
            p[i, 0] = p[q, 0]
            p[i, 1] = p[q, 1]
            p[i, 2] = p[q, 2]
            for r in range(3):  # F[i] <- F[q], written out (see the note below)
                F[i, r, 0] = F[q, r, 0]
                F[i, r, 1] = F[q, r, 1]
                F[i, r, 2] = F[q, r, 2]
            continue
        if active[i]:
            _unit_between(d, p, q, i, F[i, 0, 1], F[i, 1, 1], F[i, 2, 1])
            _tr(F, i, F, i, d[0], d[1], d[2])
        else:
            _product(F, i, F, q, local, i)
        # p[i] is about to move: the children still sit where the forward stage put them
        _set_joint(p, q, i, L, F)
        for m in range(own_start[i], own_start[i + 1]):
            c = own_list[m]
            if active[c] and limits[parents[c], COL_TYPE] == TYPE_HINGE:
                _unit_between(d, p, i, c, F[i, 0, 1], F[i, 1, 1], F[i, 2, 1])
                align_hinge_twist(F, i, Q, c, limits, parents[c], d[0], d[1], d[2])
                break
        # the bone's own limit: its closed form where circ or hcs flag row q, else a cheap inside
        # test and the general projection (written out: through an inlined wrapper its array
        # arguments cost a reference count increment and decrement each, per joint)
        if circ[q, 0] <= 1.0:
            act = _circular_own(F, q, Q, i, circ[q, 0], circ[q, 1])
        elif hcs[q, 0] != 0.0:
            act = _hinge_own(F, q, Q, i, limits, hcs, P3)
        elif row_limits(limits, q) and not _cone_inside(limits, q, F, q, Q, i, F[i, 0, 1], F[i, 1, 1], F[i, 2, 1]):
            act = _place_general(F, i, q, Q, limits, P3, R, d)
        else:
            act = 0
        if act:
            row_active[q] = 1
        _set_joint(p, q, i, L, F)


@njit(cache=True, error_model="numpy")
def _place_general(F, i, q, Q, limits, P3, R, d):
    """Restrict the desired frame F[i] by row q of ``limits`` against its reference F[q] @ Q[i]
    (the general path): ``fabrik.kernels.jacobian.restrict_frame``, except that a frame inside a
    limit without a twist limit is left as it is. P3 (1, 3, 3), R (3, 3) and d (3,) are scratch.
    Returns 1 when the limit is active."""
    _product(P3, 0, F, q, Q, i)
    if limits[q, COL_TWIST_FLAG] != 0.0:
        return restrict_frame(F[i], F[i], P3[0], limits[q], d, R)
    d[0] = F[i, 0, 1]
    d[1] = F[i, 1, 1]
    d[2] = F[i, 2, 1]
    if limit_direction(limits[q], P3[0], d, False) == 0:
        return 0
    transport(F[i], F[i], d[0], d[1], d[2])
    return 1


@njit(cache=True, error_model="numpy")
def _reverse_general(F, i, c, Q, limits, pc, P3, G, R, h, T):
    """Turn the candidate parent frame F[i] by the smallest rotation that puts its placed child
    bone c inside row pc of ``limits`` (measured in F[i] @ Q[c]): the limit read reversed (the
    general path). P3 (1, 3, 3), G, R, T (3, 3) and h (3,) are scratch."""
    _product(P3, 0, F, i, Q, c)  # the reference frame P of the child bone
    P = P3[0]
    Fc = F[c]
    row = limits[pc]
    # P carried onto the child bone, the child's twist against it clamped, child turned back
    # (with a free twist the untwisted child frame is exactly P carried onto the child bone)
    transport(G, P, Fc[0, 1], Fc[1, 1], Fc[2, 1])
    if row[COL_TWIST_FLAG] != 0.0:
        psi = twist_between(G, Fc)
        psi, _ = limit_twist(row, psi)
        twist_about_y(G, Fc, -psi)
    h[0] = P[0, 1]
    h[1] = P[1, 1]
    h[2] = P[2, 1]
    if limit_direction(row, G, h, True) == 0:
        return
    rotation_between(R, P[0, 1], P[1, 1], P[2, 1], h[0], h[1], h[2])
    rotate_frame(T, F[i], R)
    F[i, :, :] = T


@njit(cache=True, inline="always", error_model="numpy")
def _set_joint(p, q, i, L, F):
    """p[i] <- p[q] + L F[i] +Y."""
    p[i, 0] = p[q, 0] + L * F[i, 0, 1]
    p[i, 1] = p[q, 1] + L * F[i, 1, 1]
    p[i, 2] = p[q, 2] + L * F[i, 2, 1]


@njit(cache=True, error_model="numpy")
def frames_from_pose(p, parents, lengths, Q, own_start, own_list, out):
    """out (n, 3, 3) <- frames for pose p (n, 3) with zero twist from the rest: the root frame is
    fitted to its own bones (identity at rest), then each bone's frame is its reference frame
    carried onto the bone by the smallest rotation; zero-length bones take their parent's frame."""
    n = parents.shape[0]
    M = np.empty((3, 3))
    R = np.empty((3, 3))
    G = np.empty((3, 3))
    d = np.empty(3)
    out[0, :, :] = np.eye(3)
    fit_root_frame(out[0], p, p[0].copy(), own_start, own_list, np.ones(n, dtype=np.bool_), Q, M, R, d)
    for i in range(1, n):
        q = parents[i]
        if lengths[i] == 0.0:
            out[i, :, :] = out[q]
            continue
        rotate_frame(G, Q[i], out[q])  # the reference frame out[q] @ Q[i]
        _unit_between(d, p, q, i, G[0, 1], G[1, 1], G[2, 1])
        transport(out[i], G, d[0], d[1], d[2])


@njit(cache=True, inline="always", error_model="numpy")
def row_limits(limits, j):
    """True when row j of ``limits`` restricts anything (a direction limit or a twist limit)."""
    return limits[j, COL_TYPE] != 0.0 or limits[j, COL_TWIST_FLAG] != 0.0


@njit(cache=True, error_model="numpy")
def refresh_active(F, parents, lengths, Q, limits, row_active):
    """row_active[j] <- 1 when a bone limited by row j lies on its limit's boundary in frames F."""
    n = parents.shape[0]
    H = np.empty((3, 3))
    D = np.empty((3, 3))
    G = np.empty((3, 3))
    d = np.empty(3)
    row_active[:] = 0
    for i in range(1, n):
        q = parents[i]
        if lengths[i] > 0.0 and row_limits(limits, q):
            rotate_frame(H, Q[i], F[q])  # the reference frame F[q] @ Q[i]
            if restrict_frame(D, F[i], H, limits[q], d, G):
                row_active[q] = 1


@njit(cache=True, inline="always", error_model="numpy")
def own_limit(F, q, i, Q, rows, circ, hcs, P3, R, d):
    """The bone i's own limit (row q, against ``F[q] Q[i]``) applied to its frame ``F[i]``, as
    ``backward_stage`` applies it (the forward stage of ``fabrik_tree`` and the obstacle repair of ``tree_extras``)."""
    if circ[q, 0] <= 1.0:
        _circular_own(F, q, Q, i, circ[q, 0], circ[q, 1])
    elif hcs[q, 0] != 0.0:
        _hinge_own(F, q, Q, i, rows, hcs, P3)
    elif row_limits(rows, q) and not _cone_inside(rows, q, F, q, Q, i, F[i, 0, 1], F[i, 1, 1], F[i, 2, 1]):
        _place_general(F, i, q, Q, rows, P3, R, d)
