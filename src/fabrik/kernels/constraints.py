"""Joint-limit projections (section 4.3, Algorithm 3), compiled: the one place the kernels switch
on a limit's type (``limit_direction``, ``limit_twist``).

The packed rows are ``fabrik.kernels.limit_layout``'s; each rotational type's id and parameter
columns are defined here, beside its projection, and written by the type's ``pack`` in
``fabrik.limits``:

* ``TYPE_CONE`` (``fabrik.limits.Cone``): ``COL_CONE``, 4 columns, the signed squared
  cotangents s_right, s_left, s_up, s_down;
* ``TYPE_HINGE`` (``fabrik.limits.Hinge``): ``COL_AXIS``, 3 columns, the axis in the reference
  frame; ``COL_HINGE``, 2 columns, min and max (radians);
* ``TYPE_POLYGON`` (``fabrik.limits.Polygon``): ``COL_POLYGON``, the vertex count k, then k unit
  vertices (3 columns each) in order of increasing azimuth about +Y (``nearest_in_polygon``).

Directions are unit 3-vectors. A cone limit works in the parent frame's coordinates (x right,
y along the parent bone, z up) and follows the paper: the direction is mapped onto the plane at
distance 1 along the bone axis, (u, v) = (x, z) / |y|; the quadrant picks the conic of that
quadrant, A u^2 + B v^2 = 1, with A, B the signed squared cotangents of the quadrant's two angles
(upper plane, y > 0) or their negatives (the plane behind the joint, y < 0: Fig. 6). A conic with
A, B > 0 is an ellipse, with mixed signs a hyperbola branch (the paper's "parabolic" mixed case),
with a zero coefficient a straight line, and a quadrant with both angles at exactly 90 degrees
(both coefficients 0) is bounded by the rim y = 0 itself. When the direction is outside the
allowed region its true nearest point on the boundary conics is found in each plane (Newton's method on the curve
parameter, safeguarded by bisection and seeded by sampling), and of the best point of each plane
the one closest in angle to the direction is used.
"""

import math

import numpy as np
from numba import njit

from fabrik.kernels.limit_layout import COL_PARAMS, COL_TWIST, COL_TWIST_FLAG, COL_TYPE, TYPE_NONE  # noqa: F401

TYPE_CONE = 1
COL_CONE = COL_PARAMS  # 4 columns: s_right, s_left, s_up, s_down
TYPE_HINGE = 2
COL_AXIS = COL_PARAMS  # 3 columns: the hinge axis in the reference frame
COL_HINGE = COL_PARAMS + 3  # 2 columns: hinge min, max (radians)
TYPE_POLYGON = 3
COL_POLYGON = COL_PARAMS  # the vertex count k, then k vertices (x, y, z)

#: a limit counts as active when the direction lies within this (radians, roughly) of its boundary
ACTIVE_EPS = 1e-9
#: |y| below this (relative) is lifted to it before mapping onto the plane (directions on the rim)
_RIM = 1e-9
_KIND_ELLIPSE, _KIND_HYP_U, _KIND_HYP_V = 0, 1, 2


@njit(cache=True, inline="always", error_model="numpy")
def _arc_point(kind, a, b, t):
    """Point and first/second derivatives of the quadrant arc at parameter t."""
    if kind == _KIND_ELLIPSE:  # (a cos t, b sin t), t in [0, pi/2]
        c = np.cos(t)
        s = np.sin(t)
        return a * c, b * s, -a * s, b * c, -a * c, -b * s
    ch = np.cosh(t)
    sh = np.sinh(t)
    if kind == _KIND_HYP_U:  # (a cosh t, b sinh t), t >= 0
        return a * ch, b * sh, a * sh, b * ch, a * ch, b * sh
    return a * sh, b * ch, a * ch, b * sh, a * sh, b * ch  # (a sinh t, b cosh t)


@njit(cache=True, error_model="numpy")
def _refine(kind, a, b, pu, pv, lo, hi, t):
    """Safeguarded Newton on h'(t) = (q(t) - p) . q'(t) inside [lo, hi], from t."""
    for _ in range(60):
        u, v, du, dv, ddu, ddv = _arc_point(kind, a, b, t)
        g = (u - pu) * du + (v - pv) * dv
        gp = du * du + dv * dv + (u - pu) * ddu + (v - pv) * ddv
        if g < 0.0:
            lo = t
        else:
            hi = t
        tn = t - g / gp if gp > 0.0 else 0.5 * (lo + hi)
        if not (lo < tn < hi):
            tn = 0.5 * (lo + hi)
        if abs(tn - t) <= 1e-15 * (1.0 + abs(t)):
            return tn
        t = tn
    return t


@njit(cache=True, error_model="numpy")
def arc_nearest(A, B, pu, pv, samples):
    """Nearest point to (pu, pv) on the curve A u^2 + B v^2 = 1 restricted to u >= 0, v >= 0.

    Returns (u, v, squared distance); the distance is inf when the quadrant holds no curve
    (A <= 0 and B <= 0). The query may lie in any quadrant. Ellipses (A, B > 0) are parametrised
    by angle, hyperbola branches by the hyperbolic angle, lines (a zero coefficient) solved in
    closed form; the parameter range is sampled ``samples`` times and each local minimum is
    refined by safeguarded Newton iterations.
    """
    if A <= 0.0 and B <= 0.0:
        return 0.0, 0.0, np.inf
    if B == 0.0:  # line u = 1/sqrt(A)
        u = 1.0 / np.sqrt(A)
        v = pv if pv > 0.0 else 0.0
        return u, v, (u - pu) ** 2 + (v - pv) ** 2
    if A == 0.0:  # line v = 1/sqrt(B)
        v = 1.0 / np.sqrt(B)
        u = pu if pu > 0.0 else 0.0
        return u, v, (u - pu) ** 2 + (v - pv) ** 2
    a = 1.0 / np.sqrt(abs(A))
    b = 1.0 / np.sqrt(abs(B))
    if A > 0.0 and B > 0.0:
        kind = _KIND_ELLIPSE
        tmax = 0.5 * np.pi
    else:
        kind = _KIND_HYP_U if A > 0.0 else _KIND_HYP_V
        # the arc starts at its vertex q0; points farther than |p| + |p - q0| from the origin
        # cannot be nearer than q0, and |q| >= sqrt(a^2 + b^2) sinh(t)
        r0 = np.sqrt((pu - a) ** 2 + pv * pv) if kind == _KIND_HYP_U else np.sqrt(pu * pu + (pv - b) ** 2)
        reach = np.sqrt(pu * pu + pv * pv) + r0
        tmax = np.arcsinh(reach / np.sqrt(a * a + b * b)) + 1e-3
    step = tmax / samples
    best_u = best_v = 0.0
    best = h_prev2 = h_prev = np.inf
    for k in range(samples + 2):
        # k = samples + 1 is a sentinel that closes the last local-minimum test
        if k <= samples:
            u, v, du, dv, ddu, ddv = _arc_point(kind, a, b, k * step)
            h = (u - pu) ** 2 + (v - pv) ** 2
        else:
            h = np.inf
        if k >= 1 and h_prev <= h_prev2 and h_prev <= h:
            km = k - 1
            lo = (km - 1) * step if km >= 1 else 0.0
            hi = (km + 1) * step if km < samples else tmax
            t = _refine(kind, a, b, pu, pv, lo, hi, km * step)
            u, v, du, dv, ddu, ddv = _arc_point(kind, a, b, t)
            d2 = (u - pu) ** 2 + (v - pv) ** 2
            if d2 < best:
                best, best_u, best_v = d2, u, v
        h_prev2 = h_prev
        h_prev = h
    return best_u, best_v, best


@njit(cache=True, error_model="numpy")
def cone_slack(x, y, z, s_r, s_l, s_u, s_d):
    """The cone's quadric y|y| - s_x x^2 - s_z z^2 (>= 0 inside) for a unit direction."""
    sx = s_r if x >= 0.0 else s_l
    sz = s_u if z >= 0.0 else s_d
    return y * abs(y) - sx * x * x - sz * z * z


#: a projected direction more than this (radians) outside the cone is put on its boundary along
#: its meridian (``nearest_in_cone``)
_MERIDIAN_SLACK = 1e-12


@njit(cache=True, error_model="numpy")
def nearest_in_cone(x, y, z, s_r, s_l, s_u, s_d):
    """The allowed direction nearest to unit (x, y, z) (parent-frame coordinates) for a cone given
    by its signed squared cotangents. Returns (x, y, z, moved).

    The nearest point is searched on the boundary conics (``_nearest_in_cone_search``). On cones
    whose quadrants differ by many orders of magnitude (an angle of 1e-6 rad beside one of
    pi - 1e-6) that search can land a little outside; the point is then moved along its meridian
    (same azimuth about +Y) onto the boundary, where the allowed polar angle is known in closed
    form, so the result is always inside to rounding."""
    if cone_slack(x, y, z, s_r, s_l, s_u, s_d) >= 0.0:
        return x, y, z, False
    rx, ry, rz, moved = _nearest_in_cone_search(x, y, z, s_r, s_l, s_u, s_d)
    rho2 = rx * rx + rz * rz
    if rho2 <= 0.0:
        return rx, ry, rz, moved
    sx = s_r if rx >= 0.0 else s_l
    sz = s_u if rz >= 0.0 else s_d
    s = (sx * rx * rx + sz * rz * rz) / rho2
    limit = np.arctan2(1.0, np.copysign(np.sqrt(abs(s)), s))
    rho = np.sqrt(rho2)
    if np.arctan2(rho, ry) <= limit + _MERIDIAN_SLACK:
        return rx, ry, rz, moved
    sl = np.sin(limit)
    return sl * rx / rho, np.cos(limit), sl * rz / rho, True


@njit(cache=True, error_model="numpy")
def _nearest_in_cone_search(x, y, z, s_r, s_l, s_u, s_d):
    """``nearest_in_cone``'s search for an (x, y, z) outside the cone."""
    ay = max(abs(y), _RIM)
    pu, pv = x / ay, z / ay
    if s_r == s_l and s_r == s_u and s_r == s_d and s_r > 0.0:
        # a circular cone (under 90 degrees): the nearest point on the circle is radial, in the
        # plane in front (for a direction behind the joint, by the reflection of Fig. 6b)
        r = np.sqrt(pu * pu + pv * pv)
        a = 1.0 / np.sqrt(s_r)
        if r > 0.0:
            cx, cz = a * pu / r, a * pv / r
        else:
            cx, cz = a, 0.0  # straight behind: every rim point is as near; take the right-hand one
        n = np.sqrt(cx * cx + 1.0 + cz * cz)
        return cx / n, 1.0 / n, cz / n, True
    if y > 0.0 and s_r > 0.0 and s_l > 0.0 and s_u > 0.0 and s_d > 0.0:
        # the common case: outside a convex composite ellipse; the nearest point is on the
        # query's own quadrant arc and the distance along it is unimodal
        qx = 1.0 if pu >= 0.0 else -1.0
        qz = 1.0 if pv >= 0.0 else -1.0
        A = s_r if qx > 0.0 else s_l
        B = s_u if qz > 0.0 else s_d
        u, v, d2 = arc_nearest(A, B, qx * pu, qz * pv, 4)
        cx, cz = qx * u, qz * v
        n = np.sqrt(cx * cx + 1.0 + cz * cz)
        return cx / n, 1.0 / n, cz / n, True
    best_dot = -np.inf
    rx, ry, rz = x, y, z
    for plane in range(2):
        sign = 1.0 if plane == 0 else -1.0
        pd2 = np.inf
        pu_best = pv_best = 0.0
        for quad in range(4):
            qx = 1.0 if quad % 2 == 0 else -1.0
            qz = 1.0 if quad < 2 else -1.0
            A = s_r if qx > 0.0 else s_l
            B = s_u if qz > 0.0 else s_d
            u, v, d2 = arc_nearest(sign * A, sign * B, qx * pu, qz * pv, 16)
            if d2 < pd2:
                pd2, pu_best, pv_best = d2, qx * u, qz * v
        if pd2 < np.inf:
            n = np.sqrt(pu_best * pu_best + 1.0 + pv_best * pv_best)
            cx, cy, cz = pu_best / n, sign / n, pv_best / n
            dot = cx * x + cy * y + cz * z
            if dot > best_dot:
                best_dot, rx, ry, rz = dot, cx, cy, cz
    # a quadrant whose two angles are both exactly 90 degrees (A = B = 0) has no conic in either
    # plane: its boundary is the quarter of the rim y = 0 in that quadrant (the limiting case of
    # the conic); the nearest point of that arc is the direction projected onto y = 0, or the
    # nearer end of the arc when the projection falls outside the quadrant
    for quad in range(4):
        qx = 1.0 if quad % 2 == 0 else -1.0
        qz = 1.0 if quad < 2 else -1.0
        A = s_r if qx > 0.0 else s_l
        B = s_u if qz > 0.0 else s_d
        if A != 0.0 or B != 0.0:
            continue
        ex = x if x * qx > 0.0 else 0.0
        ez = z if z * qz > 0.0 else 0.0
        # scaled by the larger first: squares of ~1e-162 are subnormal (the unit vector came out
        # 1.22 long), and so are components of ~1e-320, whose hypot rounds to one of them (it came
        # out (1, 0, 1))
        m = max(abs(ex), abs(ez))
        if m > 0.0:
            n = np.hypot(ex / m, ez / m)
            cx, cz = ex / m / n, ez / m / n
        elif qx * x >= qz * z:
            cx, cz = qx, 0.0  # straight behind, or the opposite quadrant: the nearer end
        else:
            cx, cz = 0.0, qz
        dot = cx * x + cz * z
        if dot > best_dot:
            best_dot, rx, ry, rz = dot, cx, 0.0, cz
    return rx, ry, rz, True


@njit(cache=True, error_model="numpy")
def nearest_in_polygon(row, x, y, z):
    """The allowed direction nearest (by angle) to unit (x, y, z) for the spherical polygon of
    ``row`` (``COL_POLYGON``: k vertices going round +Y by increasing azimuth atan2(z, x), each
    edge the great-circle arc between neighbours). Returns (x, y, z, moved, active).

    Inside: the direction lies in some edge's lune (its azimuth between the edge's ends') on +Y's
    side of the edge's great circle (normal n = b x a). Outside, the nearest point is on the
    boundary: per edge, the foot of the perpendicular on its great circle where it falls on the
    arc, else the nearer end; the nearest of those. ``active`` when moved, or inside within
    ``ACTIVE_EPS`` of the boundary."""
    k = int(row[COL_POLYGON])
    inside = False
    best = np.inf
    bx = by = bz = 0.0
    for j in range(k):
        c = COL_POLYGON + 1 + 3 * j
        e = COL_POLYGON + 1 + 3 * ((j + 1) % k)
        a0, a1, a2 = row[c], row[c + 1], row[c + 2]
        b0, b1, b2 = row[e], row[e + 1], row[e + 2]
        n0 = b1 * a2 - b2 * a1
        n1 = b2 * a0 - b0 * a2
        n2 = b0 * a1 - b1 * a0
        nn = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
        n0 /= nn
        n1 /= nn
        n2 /= nn
        s = x * n0 + y * n1 + z * n2
        if s >= 0.0 and a0 * z - a2 * x >= 0.0 and x * b2 - z * b0 >= 0.0:
            inside = True
        # the foot on the great circle, and whether it lies on the arc (turned from a towards it
        # and from it towards b about the arc's axis -n)
        t0 = x - s * n0
        t1 = y - s * n1
        t2 = z - s * n2
        tn = np.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
        on_arc = False
        if tn > 0.0:
            t0 /= tn
            t1 /= tn
            t2 /= tn
            on_arc = ((a1 * t2 - a2 * t1) * n0 + (a2 * t0 - a0 * t2) * n1 + (a0 * t1 - a1 * t0) * n2 <= 0.0
                      and (t1 * b2 - t2 * b1) * n0 + (t2 * b0 - t0 * b2) * n1 + (t0 * b1 - t1 * b0) * n2 <= 0.0)
        if on_arc:
            angle = np.arctan2(abs(s), tn)
            if angle < best:
                best, bx, by, bz = angle, t0, t1, t2
        else:
            for q in range(2):
                q0, q1, q2 = (a0, a1, a2) if q == 0 else (b0, b1, b2)
                c0 = y * q2 - z * q1
                c1 = z * q0 - x * q2
                c2 = x * q1 - y * q0
                angle = np.arctan2(np.sqrt(c0 * c0 + c1 * c1 + c2 * c2), x * q0 + y * q1 + z * q2)
                if angle < best:
                    best, bx, by, bz = angle, q0, q1, q2
    if inside:
        return x, y, z, False, best <= ACTIVE_EPS
    return bx, by, bz, True, True


@njit(cache=True, error_model="numpy")
def wrap_angle(a):
    """a wrapped into (-pi, pi]."""
    a = np.fmod(a + np.pi, 2.0 * np.pi)
    if a < 0.0:
        a += 2.0 * np.pi
    return a - np.pi


@njit(cache=True, error_model="numpy")
def clamp_angle(theta, lo, hi):
    """(theta (in (-pi, pi]) clamped into [lo, hi] along the circle: the nearer end when outside,
    1 when that moved it or it lies within ``ACTIVE_EPS`` of an end (the limit is active), else 0)."""
    if lo <= theta <= hi:
        return theta, (1 if abs(theta - lo) <= ACTIVE_EPS or abs(theta - hi) <= ACTIVE_EPS else 0)
    dl = abs(wrap_angle(theta - lo))
    dh = abs(wrap_angle(theta - hi))
    return (lo if dl <= dh else hi), 1


@njit(cache=True, inline="always", error_model="numpy")
def renormalise(d):
    """d (3,) <- d / |d| for a d that is a unit vector up to rounding. A limited direction is
    built from the reference frame's axes, and each frame from the limited direction of the bone
    before it, so without this the rounding grows joint by joint: on an 80-joint hinge chain the
    bones ended up 5 times their length."""
    inv = 1.0 / np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    d[0] *= inv
    d[1] *= inv
    d[2] *= inv


@njit(cache=True, error_model="numpy")
def limit_direction(row, G, d, reverse):
    """Apply one joint's rotational limit to the unit world direction d (3,), in place.

    ``G`` (3, 3) is the reference frame. Normally (``reverse`` False) it is the parent frame and d
    the child bone's direction. In the forward stage (``reverse`` True) d is the *parent* bone's
    direction and G the child's frame turned back by the joint's twist (the parent frame carried
    onto the child bone): the parent direction seen from the child is the point reflection of
    the child seen from the parent through the bone axis (x, y, z) -> (-x, y, -z), so the same
    region is used with x and z negated (for a hinge, the angle range negated).
    Returns 1 if the limit was active (moved d, or d lies on its boundary), else 0.
    """
    kind = int(row[COL_TYPE])
    if kind == TYPE_CONE:
        x = G[0, 0] * d[0] + G[1, 0] * d[1] + G[2, 0] * d[2]
        y = G[0, 1] * d[0] + G[1, 1] * d[1] + G[2, 1] * d[2]
        z = G[0, 2] * d[0] + G[1, 2] * d[1] + G[2, 2] * d[2]
        if reverse:
            x, z = -x, -z
        s_r, s_l, s_u, s_d = row[COL_CONE], row[COL_CONE + 1], row[COL_CONE + 2], row[COL_CONE + 3]
        x, y, z, moved = nearest_in_cone(x, y, z, s_r, s_l, s_u, s_d)
        if not moved:
            slack = cone_slack(x, y, z, s_r, s_l, s_u, s_d)
            scale = 1.0 + max(abs(s_r), abs(s_l), abs(s_u), abs(s_d))
            return 1 if slack <= ACTIVE_EPS * scale else 0
        if reverse:
            x, z = -x, -z
        for k in range(3):
            d[k] = G[k, 0] * x + G[k, 1] * y + G[k, 2] * z
        renormalise(d)
        return 1
    if kind == TYPE_HINGE:
        ax, ay, az = row[COL_AXIS], row[COL_AXIS + 1], row[COL_AXIS + 2]
        # axis and parent direction in world coordinates
        a0 = G[0, 0] * ax + G[0, 1] * ay + G[0, 2] * az
        a1 = G[1, 0] * ax + G[1, 1] * ay + G[1, 2] * az
        a2 = G[2, 0] * ax + G[2, 1] * ay + G[2, 2] * az
        p0, p1, p2 = G[0, 1], G[1, 1], G[2, 1]
        lo, hi = row[COL_HINGE], row[COL_HINGE + 1]
        if reverse:
            lo, hi = -hi, -lo
        # w = a x p completes the plane's basis
        w0 = a1 * p2 - a2 * p1
        w1 = a2 * p0 - a0 * p2
        w2 = a0 * p1 - a1 * p0
        cos_part = d[0] * p0 + d[1] * p1 + d[2] * p2
        sin_part = d[0] * w0 + d[1] * w1 + d[2] * w2
        # along the axis the angle is undefined: start from the parent direction
        theta = 0.0 if cos_part * cos_part + sin_part * sin_part < 1e-24 else np.arctan2(sin_part, cos_part)
        tc, active = clamp_angle(theta, lo, hi)
        c = np.cos(tc)
        s = np.sin(tc)
        d[0] = c * p0 + s * w0
        d[1] = c * p1 + s * w1
        d[2] = c * p2 + s * w2
        renormalise(d)
        return active
    if kind == TYPE_POLYGON:
        x = G[0, 0] * d[0] + G[1, 0] * d[1] + G[2, 0] * d[2]
        y = G[0, 1] * d[0] + G[1, 1] * d[1] + G[2, 1] * d[2]
        z = G[0, 2] * d[0] + G[1, 2] * d[1] + G[2, 2] * d[2]
        if reverse:
            x, z = -x, -z
        x, y, z, moved, active = nearest_in_polygon(row, x, y, z)
        if not moved:
            return 1 if active else 0
        if reverse:
            x, z = -x, -z
        for k in range(3):
            d[k] = G[k, 0] * x + G[k, 1] * y + G[k, 2] * z
        renormalise(d)
        return 1
    return 0


@njit(cache=True, error_model="numpy")
def limit_twist(row, psi):
    """(twist clamped to the row's twist range when it has one, active flag)."""
    if row[COL_TWIST_FLAG] == 0.0:
        return psi, 0
    return clamp_angle(psi, row[COL_TWIST], row[COL_TWIST + 1])


@njit(cache=True, error_model="numpy")
def hinge_alignment_twist(F, ax, az, w0, w1, w2, bend_lo, bend_hi):
    """The twist about F's +Y that puts the world vector w in the plane normal to a hinge axis.

    The hinge axis is (ax, 0, az) in frame F (3, 3); turning F about its +Y by tau turns the axis
    with it. Of the two twists that make the axis perpendicular to w, the one whose bend angle
    towards w (right-handed about the axis, from +Y) is nearer [bend_lo, bend_hi] wins, then the
    smaller |tau|. Returns (tau, ok); ok is False when w is (nearly) along +Y.
    """
    wx = F[0, 0] * w0 + F[1, 0] * w1 + F[2, 0] * w2
    wy = F[0, 1] * w0 + F[1, 1] * w1 + F[2, 1] * w2
    wz = F[0, 2] * w0 + F[1, 2] * w1 + F[2, 2] * w2
    r = np.sqrt(wx * wx + wz * wz)
    if r <= 1e-9 * np.sqrt(wx * wx + wy * wy + wz * wz) or r == 0.0:
        return 0.0, False
    # in the x-z plane (x + i z) a twist by tau turns the axis by -tau
    alpha = np.arctan2(az, ax)
    beta = np.arctan2(wz, wx)
    best_tau, best_gap = 0.0, np.inf
    for k in range(2):
        tau = wrap_angle(alpha - beta - 0.5 * np.pi + k * np.pi)
        ang = alpha - tau
        axx = np.cos(ang)
        axz = np.sin(ang)
        theta = np.arctan2(wz * axx - wx * axz, wy)
        gap = 0.0 if bend_lo <= theta <= bend_hi else min(abs(wrap_angle(theta - bend_lo)),
                                                           abs(wrap_angle(theta - bend_hi)))
        if gap < best_gap - 1e-12 or (abs(gap - best_gap) <= 1e-12 and abs(tau) < abs(best_tau)):
            best_gap, best_tau = gap, tau
    return best_tau, True


@njit(cache=True, error_model="numpy")
def project_local(row, v, psi, out_v, out_psi):
    """The limits of one packed ``row`` applied as the solvers apply them, to many local poses:
    unit directions v (m, 3) in the reference frame projected by ``limit_direction`` (into
    ``out_v``) and twists psi (m,) clamped by ``limit_twist`` (into ``out_psi``)."""
    G = np.eye(3)
    d = np.empty(3)
    for k in range(v.shape[0]):
        d[0] = v[k, 0]
        d[1] = v[k, 1]
        d[2] = v[k, 2]
        limit_direction(row, G, d, False)
        out_v[k, 0] = d[0]
        out_v[k, 1] = d[1]
        out_v[k, 2] = d[2]
        out_psi[k], _ = limit_twist(row, psi[k])


def closed_forms(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(circ (n, 2), hcs (n, 7)) for packed ``rows``, the rows the tree kernel answers in closed
    form (``fabrik.kernels.tree_limits``): ``circ[j]`` the (cos, sin) of the half-angle where row j
    is a circular cone without a twist limit, (2, 0) elsewhere; ``hcs[j]`` (1, cos lo, sin lo,
    cos hi, sin hi, lo, hi) where row j is a hinge with its twist held at 0, zeros elsewhere."""
    n = rows.shape[0]
    circ = np.zeros((n, 2))
    circ[:, 0] = 2.0
    hcs = np.zeros((n, 7))
    for j in range(n):
        row = rows[j]
        if row[COL_TYPE] == TYPE_CONE and row[COL_TWIST_FLAG] == 0.0:
            s_vals = row[COL_CONE:COL_CONE + 4]
            if np.all(s_vals == s_vals[0]):
                cot = math.copysign(math.sqrt(abs(s_vals[0])), s_vals[0])
                alpha = math.atan2(1.0, cot)
                circ[j] = (math.cos(alpha), math.sin(alpha))
        if (row[COL_TYPE] == TYPE_HINGE and row[COL_TWIST_FLAG] != 0.0 and row[COL_TWIST] == 0.0
                and row[COL_TWIST + 1] == 0.0):
            lo, hi = row[COL_HINGE], row[COL_HINGE + 1]
            hcs[j] = (1.0, math.cos(lo), math.sin(lo), math.cos(hi), math.sin(hi), lo, hi)
    return circ, hcs
