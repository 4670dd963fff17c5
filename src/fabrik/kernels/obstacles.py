"""Obstacle geometry for FABRIK with obstacles and self-collision, compiled.

Obstacles arrive as the (k, 17) table of ``fabrik.obstacles.pack``: per row the type (1 sphere,
2 capsule, 3 box, 4 half space), a radius, a point a, a point b (capsule) or the half extents
(box) or the unit normal (half space), and the box's rotation (row-major, columns its axes). Each
is a closed convex solid; its signed distance ``sdf`` is negative inside.

A bone is the segment between two joints; ``segment_clearance`` is the smallest signed distance
of the segment, less a radius, over all obstacles (for convex solids the signed distance along a
segment is convex in its parameter: closed forms for spheres, capsules and half spaces, a golden
section search for boxes). Other bones, for self-collision, are capsules (``caps`` (m, 7): a, b,
radius) measured by ``capsule_clearance``.

The step that keeps a bone off them is ``free_direction``: the direction nearest a wanted one
(from a joint already placed, at the bone's length) whose segment clears every obstacle and
capsule by ``margin``: the wanted direction when it does, else the first free one of rings of
directions at growing angles from it (``search_direction``), refined by bisection towards the
wanted one. Callers with joint limits run the same pattern with their own projection of each
candidate (``search_direction`` and ``between``).
"""

import numpy as np
from numba import njit

SPHERE, CAPSULE, BOX, HALF_SPACE = 1, 2, 3, 4

#: Rings of candidate directions ``free_direction`` tries, at angles ``pi (j / RINGS) ** 1.5`` from
#: the wanted direction (the first at 2.6 degrees), and directions per ring (2 for a planar model).
RINGS = 18
PER_RING = 12
#: Bisection steps between a free candidate and the blocked ring inside it.
REFINE_STEPS = 14
#: Golden-section steps of a box's distance along a segment (the interval shrinks 0.618 a step:
#: 1e-13 of the bone after 60).
GOLDEN_STEPS = 60
_GOLD = 0.6180339887498949


@njit(cache=True, inline="always", error_model="numpy")
def _point_segment(x, y, z, ax, ay, az, bx, by, bz):
    """Distance from (x, y, z) to the segment a-b."""
    ux, uy, uz = bx - ax, by - ay, bz - az
    uu = ux * ux + uy * uy + uz * uz
    t = 0.0
    if uu > 0.0:
        t = ((x - ax) * ux + (y - ay) * uy + (z - az) * uz) / uu
        t = min(max(t, 0.0), 1.0)
    dx, dy, dz = x - ax - t * ux, y - ay - t * uy, z - az - t * uz
    return np.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True, error_model="numpy")
def segment_segment(p1x, p1y, p1z, q1x, q1y, q1z, p2x, p2y, p2z, q2x, q2y, q2z):
    """The distance between the segments p1-q1 and p2-q2 (Ericson, Real-Time Collision Detection,
    5.1.9; degenerate and parallel segments included)."""
    d1x, d1y, d1z = q1x - p1x, q1y - p1y, q1z - p1z
    d2x, d2y, d2z = q2x - p2x, q2y - p2y, q2z - p2z
    rx, ry, rz = p1x - p2x, p1y - p2y, p1z - p2z
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    if a <= 1e-300 and e <= 1e-300:
        return np.sqrt(rx * rx + ry * ry + rz * rz)
    if a <= 1e-300:
        s = 0.0
        t = min(max(f / e, 0.0), 1.0)
    else:
        c = d1x * rx + d1y * ry + d1z * rz
        if e <= 1e-300:
            t = 0.0
            s = min(max(-c / a, 0.0), 1.0)
        else:
            b = d1x * d2x + d1y * d2y + d1z * d2z
            denom = a * e - b * b
            s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > 1e-14 * a * e else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = min(max(-c / a, 0.0), 1.0)
            elif t > 1.0:
                t = 1.0
                s = min(max((b - c) / a, 0.0), 1.0)
    x = p1x + s * d1x - p2x - t * d2x
    y = p1y + s * d1y - p2y - t * d2y
    z = p1z + s * d1z - p2z - t * d2z
    return np.sqrt(x * x + y * y + z * z)


@njit(cache=True, inline="always", error_model="numpy")
def _box_sdf(row, x, y, z):
    """Signed distance of (x, y, z) to the box of ``row``."""
    dx, dy, dz = x - row[2], y - row[3], z - row[4]
    # local coordinates: R^T d (R row-major in row[8:17], its columns the box's axes)
    lx = row[8] * dx + row[11] * dy + row[14] * dz
    ly = row[9] * dx + row[12] * dy + row[15] * dz
    lz = row[10] * dx + row[13] * dy + row[16] * dz
    qx, qy, qz = abs(lx) - row[5], abs(ly) - row[6], abs(lz) - row[7]
    ox, oy, oz = max(qx, 0.0), max(qy, 0.0), max(qz, 0.0)
    return np.sqrt(ox * ox + oy * oy + oz * oz) + min(max(qx, max(qy, qz)), 0.0)


@njit(cache=True, inline="always", error_model="numpy")
def sdf(row, x, y, z):
    """Signed distance of the point (x, y, z) to the obstacle ``row`` (negative inside)."""
    kind = row[0]
    if kind == SPHERE:
        dx, dy, dz = x - row[2], y - row[3], z - row[4]
        return np.sqrt(dx * dx + dy * dy + dz * dz) - row[1]
    if kind == CAPSULE:
        return _point_segment(x, y, z, row[2], row[3], row[4], row[5], row[6], row[7]) - row[1]
    if kind == BOX:
        return _box_sdf(row, x, y, z)
    return (x - row[2]) * row[5] + (y - row[3]) * row[6] + (z - row[4]) * row[7]


@njit(cache=True, error_model="numpy")
def point_clearance(obs, x, y, z):
    """The smallest signed distance of (x, y, z) to the obstacles (inf for none)."""
    best = np.inf
    for k in range(obs.shape[0]):
        best = min(best, sdf(obs[k], x, y, z))
    return best


@njit(cache=True, error_model="numpy")
def points_clearance(obs, pts, out):
    """out[i] <- ``point_clearance`` of pts[i] (pts (m, 3))."""
    for i in range(pts.shape[0]):
        out[i] = point_clearance(obs, pts[i, 0], pts[i, 1], pts[i, 2])


@njit(cache=True, error_model="numpy")
def segment_sdf(row, ax, ay, az, bx, by, bz):
    """The smallest signed distance to obstacle ``row`` of a point on the segment a-b."""
    kind = row[0]
    if kind == SPHERE:
        return _point_segment(row[2], row[3], row[4], ax, ay, az, bx, by, bz) - row[1]
    if kind == CAPSULE:
        return segment_segment(ax, ay, az, bx, by, bz, row[2], row[3], row[4], row[5], row[6], row[7]) - row[1]
    if kind == HALF_SPACE:
        return min(sdf(row, ax, ay, az), sdf(row, bx, by, bz))
    # a box: its signed distance is convex along the segment; golden section on [0, 1]
    lo, hi = 0.0, 1.0
    ux, uy, uz = bx - ax, by - ay, bz - az
    t1 = hi - _GOLD * (hi - lo)
    t2 = lo + _GOLD * (hi - lo)
    f1 = _box_sdf(row, ax + t1 * ux, ay + t1 * uy, az + t1 * uz)
    f2 = _box_sdf(row, ax + t2 * ux, ay + t2 * uy, az + t2 * uz)
    for _ in range(GOLDEN_STEPS):
        if f1 <= f2:
            hi = t2
            t2, f2 = t1, f1
            t1 = hi - _GOLD * (hi - lo)
            f1 = _box_sdf(row, ax + t1 * ux, ay + t1 * uy, az + t1 * uz)
        else:
            lo = t1
            t1, f1 = t2, f2
            t2 = lo + _GOLD * (hi - lo)
            f2 = _box_sdf(row, ax + t2 * ux, ay + t2 * uy, az + t2 * uz)
    return min(f1, f2, _box_sdf(row, ax, ay, az), _box_sdf(row, bx, by, bz))


@njit(cache=True, error_model="numpy")
def segment_clearance(obs, ax, ay, az, bx, by, bz, radius):
    """min over the obstacles of ``segment_sdf`` less ``radius`` (inf for none): negative when the
    segment (a capsule of ``radius``) enters one."""
    best = np.inf
    for k in range(obs.shape[0]):
        best = min(best, segment_sdf(obs[k], ax, ay, az, bx, by, bz))
    return best - radius


@njit(cache=True, error_model="numpy")
def capsule_clearance(caps, m, ax, ay, az, bx, by, bz, radius):
    """min over the first ``m`` rows of ``caps`` (a (3), b (3), radius) of the distance between the
    segment a-b and the row's segment, less both radii (inf for none)."""
    best = np.inf
    for k in range(m):
        c = caps[k]
        best = min(best, segment_segment(ax, ay, az, bx, by, bz, c[0], c[1], c[2], c[3], c[4], c[5]) - c[6])
    return best - radius


@njit(cache=True, error_model="numpy")
def bone_clearance(obs, caps, m, ax, ay, az, bx, by, bz, radius):
    """The clearance of the bone a-b (a capsule of ``radius``) from the obstacles and the first
    ``m`` capsules of ``caps``."""
    c = segment_clearance(obs, ax, ay, az, bx, by, bz, radius)
    if m > 0:
        c = min(c, capsule_clearance(caps, m, ax, ay, az, bx, by, bz, radius))
    return c


@njit(cache=True, error_model="numpy")
def pose_penetration(obs, p, parents, radius):
    """The depth (>= 0) to which the deepest bone of the pose ``p`` (n, 3) with ``parents`` (n,)
    enters an obstacle, bones as capsules of ``radius`` (a one-joint pose: its point)."""
    worst = 0.0
    n = p.shape[0]
    if n == 1:
        return max(0.0, radius - point_clearance(obs, p[0, 0], p[0, 1], p[0, 2]))
    for i in range(n):
        q = parents[i]
        if q < 0:
            continue
        c = segment_clearance(obs, p[q, 0], p[q, 1], p[q, 2], p[i, 0], p[i, 1], p[i, 2], radius)
        worst = max(worst, -c)
    return worst


@njit(cache=True, inline="always", error_model="numpy")
def _outward(row, x, y, z):
    """(nx, ny, nz, depth): the unit direction out of obstacle ``row`` at (x, y, z), inside it,
    and how far the point lies inside (-sdf)."""
    kind = row[0]
    if kind == SPHERE or kind == CAPSULE:
        cx, cy, cz = row[2], row[3], row[4]
        if kind == CAPSULE:
            ux, uy, uz = row[5] - cx, row[6] - cy, row[7] - cz
            uu = ux * ux + uy * uy + uz * uz
            t = 0.0
            if uu > 0.0:
                t = min(max(((x - cx) * ux + (y - cy) * uy + (z - cz) * uz) / uu, 0.0), 1.0)
            cx, cy, cz = cx + t * ux, cy + t * uy, cz + t * uz
        dx, dy, dz = x - cx, y - cy, z - cz
        r = np.sqrt(dx * dx + dy * dy + dz * dz)
        if r <= 0.0:
            return 0.0, 1.0, 0.0, row[1]
        return dx / r, dy / r, dz / r, row[1] - r
    if kind == HALF_SPACE:
        return row[5], row[6], row[7], -sdf(row, x, y, z)
    # a box: out through the nearest face
    dx, dy, dz = x - row[2], y - row[3], z - row[4]
    best = np.inf
    nx = ny = nz = 0.0
    for a in range(3):
        ax, ay, az = row[8 + a], row[11 + a], row[14 + a]  # the box's axis a (a column of R)
        local = ax * dx + ay * dy + az * dz
        gap = row[5 + a] - abs(local)
        if gap < best:
            best = gap
            s = 1.0 if local >= 0.0 else -1.0
            nx, ny, nz = s * ax, s * ay, s * az
    return nx, ny, nz, best


@njit(cache=True, error_model="numpy")
def push_out(obs, point, margin):
    """Move ``point`` (3,) out of every obstacle it lies in, to ``margin`` beyond the surface, in
    place, by repeated pushes along each one's outward direction (overlapping obstacles take
    several rounds). Returns True when it ends clear of all by ``margin``."""
    for _ in range(8 * obs.shape[0] + 8):
        moved = False
        for k in range(obs.shape[0]):
            if sdf(obs[k], point[0], point[1], point[2]) < margin:
                nx, ny, nz, depth = _outward(obs[k], point[0], point[1], point[2])
                step = depth + margin
                point[0] += step * nx
                point[1] += step * ny
                point[2] += step * nz
                moved = True
        if not moved:
            return True
    return point_clearance(obs, point[0], point[1], point[2]) >= margin


@njit(cache=True, inline="always", error_model="numpy")
def basis(d0, d1, d2, planar):
    """Two unit vectors (e1, e2) completing the unit d to a right-handed basis (as six floats);
    for a planar model (d in z = 0) e1 lies in the plane and e2 is +z."""
    if planar:
        return -d1, d0, 0.0, 0.0, 0.0, 1.0
    if abs(d0) < 0.6:
        tx, ty, tz = 1.0, 0.0, 0.0
    else:
        tx, ty, tz = 0.0, 1.0, 0.0
    e0x, e0y, e0z = d1 * tz - d2 * ty, d2 * tx - d0 * tz, d0 * ty - d1 * tx
    r = np.sqrt(e0x * e0x + e0y * e0y + e0z * e0z)
    e0x, e0y, e0z = e0x / r, e0y / r, e0z / r
    return e0x, e0y, e0z, d1 * e0z - d2 * e0y, d2 * e0x - d0 * e0z, d0 * e0y - d1 * e0x


@njit(cache=True, inline="always", error_model="numpy")
def ring_angle(j):
    """The angle (radians) of ring j (1..RINGS) of the search from the wanted direction."""
    return np.pi * (j / RINGS) ** 1.5


@njit(cache=True, inline="always", error_model="numpy")
def ring_direction(d0, d1, d2, e, angle, k, per_ring, j):
    """The unit direction at ``angle`` from d, azimuth k of ``per_ring`` (staggered by ring j),
    about the basis ``e`` (six floats from ``basis``)."""
    phi = 2.0 * np.pi * (k + 0.5 * (j % 2)) / per_ring
    c, s = np.cos(angle), np.sin(angle)
    cp, sp = np.cos(phi), np.sin(phi)
    x = c * d0 + s * (cp * e[0] + sp * e[3])
    y = c * d1 + s * (cp * e[1] + sp * e[4])
    z = c * d2 + s * (cp * e[2] + sp * e[5])
    r = np.sqrt(x * x + y * y + z * z)
    return x / r, y / r, z / r


@njit(cache=True, inline="always", error_model="numpy")
def between(a0, a1, a2, b0, b1, b2, t):
    """The unit direction a fraction ``t`` of the way from unit a to unit b along their great
    circle (a normalised blend: monotone in angle, exact at 0 and 1)."""
    x = (1.0 - t) * a0 + t * b0
    y = (1.0 - t) * a1 + t * b1
    z = (1.0 - t) * a2 + t * b2
    r = np.sqrt(x * x + y * y + z * z)
    if r < 1e-12:
        return b0, b1, b2
    return x / r, y / r, z / r


@njit(cache=True, error_model="numpy")
def free_direction(obs, caps, m, P, d, L, radius, margin, planar):
    """Turn the unit direction ``d`` (3,), in place, to the nearest direction found whose bone from
    ``P`` (3,) of length ``L`` clears the obstacles and the first ``m`` capsules of ``caps`` by
    ``margin`` (``bone_clearance`` with ``radius``); a planar model turns in z = 0 only. Returns
    True when it found one (``d`` unchanged when the wanted direction is free), False when every
    candidate was blocked (``d`` unchanged)."""
    px, py, pz = P[0], P[1], P[2]
    if bone_clearance(obs, caps, m, px, py, pz, px + L * d[0], py + L * d[1], pz + L * d[2], radius) >= margin:
        return True
    e = basis(d[0], d[1], d[2], planar)
    per = 2 if planar else PER_RING
    for j in range(1, RINGS + 1):
        angle = ring_angle(j)
        best = -np.inf
        bx = by = bz = 0.0
        for k in range(per):
            x, y, z = ring_direction(d[0], d[1], d[2], e, angle, k, per, j)
            c = bone_clearance(obs, caps, m, px, py, pz, px + L * x, py + L * y, pz + L * z, radius)
            if c >= margin and c > best:
                best, bx, by, bz = c, x, y, z
        if best > -np.inf:
            # bisect between the wanted direction (blocked) and the free candidate for the nearest
            # free direction on that azimuth
            lo, hi = 0.0, 1.0
            for _ in range(REFINE_STEPS):
                mid = 0.5 * (lo + hi)
                x, y, z = between(d[0], d[1], d[2], bx, by, bz, mid)
                if bone_clearance(obs, caps, m, px, py, pz, px + L * x, py + L * y, pz + L * z, radius) >= margin:
                    hi = mid
                else:
                    lo = mid
            d[0], d[1], d[2] = between(d[0], d[1], d[2], bx, by, bz, hi)
            return True
    return False


@njit(cache=True, error_model="numpy")
def chain_bones_clear(obs, p, first, stop, margin):
    """True when the bones of the chain ``p`` from joint ``first`` to joint ``stop - 1`` (bone i
    joins i - 1 to i, for i in [max(first, 1), stop)) clear the obstacles by ``margin``."""
    for i in range(max(first, 1), stop):
        if segment_clearance(obs, p[i - 1, 0], p[i - 1, 1], p[i - 1, 2], p[i, 0], p[i, 1], p[i, 2], 0.0) < margin:
            return False
    return True


@njit(cache=True, error_model="numpy")
def smallest_clearance(obs, p, parents):
    """The smallest ``segment_clearance`` of the bones of the pose ``p`` (inf without obstacles)."""
    best = np.inf
    for i in range(p.shape[0]):
        q = parents[i]
        if q >= 0:
            best = min(best, segment_clearance(obs, p[q, 0], p[q, 1], p[q, 2], p[i, 0], p[i, 1], p[i, 2], 0.0))
    return best
