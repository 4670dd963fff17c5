"""Small vector helpers shared by the kernels.

Kernels work in 3D only: 2D models are embedded in the z = 0 plane by the solvers (every FABRIK
step is an affine combination of points, so a planar chain stays planar).
"""

import numpy as np
from numba import njit

#: Relative size below which two points count as coincident (a direction is undefined).
TINY = 1e-12


@njit(cache=True, error_model="numpy")
def chain_scale(bone_lengths):
    """(total length, a positive length scale) of a chain with ``bone_lengths`` (n-1,)."""
    total = 0.0
    for i in range(bone_lengths.shape[0]):
        total += bone_lengths[i]
    return total, (total if total > 0.0 else 1.0)


@njit(cache=True, error_model="numpy")
def chain_lengths_hold(p, bone_lengths, scale):
    """True when every bone of the chain pose ``p`` (n, 3) has its length (to 1e-9 of ``scale``)."""
    for i in range(bone_lengths.shape[0]):
        if abs(dist3(p, i + 1, p, i) - bone_lengths[i]) > 1e-9 * scale:
            return False
    return True


@njit(cache=True, error_model="numpy")
def inner_reach(bone_lengths, total):
    """The smallest distance from the root at which a chain's end can be: ``2 * longest - total``
    (negative when the other bones outreach the longest, i.e. the root itself is reachable);
    ``total`` is the sum of ``bone_lengths``."""
    longest = 0.0
    for i in range(bone_lengths.shape[0]):
        if bone_lengths[i] > longest:
            longest = bone_lengths[i]
    return 2.0 * longest - total


@njit(cache=True, inline="always", error_model="numpy")
def dist3(a, i, b, j):
    """|a[i] - b[j]| for rows of (n, 3) arrays."""
    x = a[i, 0] - b[j, 0]
    y = a[i, 1] - b[j, 1]
    z = a[i, 2] - b[j, 2]
    return np.sqrt(x * x + y * y + z * z)


@njit(cache=True, inline="always", error_model="numpy")
def dist3v(a, i, v):
    """|a[i] - v| for a row of an (n, 3) array and a (3,) vector."""
    x = a[i, 0] - v[0]
    y = a[i, 1] - v[1]
    z = a[i, 2] - v[2]
    return np.sqrt(x * x + y * y + z * z)


@njit(cache=True, inline="always", error_model="numpy")
def fallback_direction(root, target, eps):
    """(fx, fy, fz, dist): the unit vector from ``target`` towards ``root`` (both (3,)), the
    direction a chain kernel gives two coincident joints (see ``place_on_line``), and the distance
    between the two points; +X when they are within ``eps`` of each other. Scalars, so that the
    per-solve setup allocates nothing."""
    fx = root[0] - target[0]
    fy = root[1] - target[1]
    fz = root[2] - target[2]
    dist = np.sqrt(fx * fx + fy * fy + fz * fz)
    if dist > eps:
        return fx / dist, fy / dist, fz / dist, dist
    return 1.0, 0.0, 0.0, dist


@njit(cache=True, inline="always", error_model="numpy")
def place_on_line(p, i, j, length, fx, fy, fz, eps):
    """Move joint i onto the ray from joint j through joint i, at ``length`` from joint j.

    The paper's ``p_i = (1 - lambda) p_j + lambda p_i`` with ``lambda = length / |p_i - p_j|``.
    When the joints are within ``eps`` of each other the direction is undefined and the unit
    vector (fx, fy, fz) is used instead, so zero-length bones and folded chains never produce NaN.
    (The fallback comes as scalars, not an array: an array argument may alias ``p`` for the
    compiler, which then reloads after every store and the loop runs about 40% slower.)
    """
    x = p[i, 0] - p[j, 0]
    y = p[i, 1] - p[j, 1]
    z = p[i, 2] - p[j, 2]
    r = np.sqrt(x * x + y * y + z * z)
    if r <= eps:
        x, y, z, r = fx, fy, fz, 1.0
    lam = length / r
    p[i, 0] = p[j, 0] + lam * x
    p[i, 1] = p[j, 1] + lam * y
    p[i, 2] = p[j, 2] + lam * z


@njit(cache=True, inline="always", error_model="numpy")
def reach_sweep(p, first, count, step, ax, ay, az, bone_lengths, fx, fy, fz, eps):
    """One FABRIK stage along a chain: ``place_on_line`` for joints ``first``, ``first + step``,
    ... (``count`` of them, ``step`` = -1 for the forward stage, +1 for the backward stage), each
    placed from the joint before it in the sweep, whose new position (ax, ay, az) the caller has
    already set. Joint j and its neighbour j - step are joined by bone ``min(j, j - step)``;
    joints within ``eps`` (``TINY`` times the chain's length scale) count as coincident.
    Returns the new position of the last joint placed.

    Same arithmetic as ``place_on_line``, arranged for speed: a stage is one long dependency chain,
    joint after joint, so its time is the latency of one step times the joints. Three things
    shorten the step (together about 20% on the Table 1 chain; results agree to rounding):
    the placed joint stays in registers rather than being read back from ``p``; ``lambda`` is
    ``(length / r^2) * sqrt(r^2)``, so that the divide runs beside the square root instead of
    after it; and the next joint's difference vector is updated from the one already known
    (``(p_next - a) - lambda (p_j - a)``), which saves a subtraction on the chain.
    """
    j = first
    dx = p[j, 0] - ax
    dy = p[j, 1] - ay
    dz = p[j, 2] - az
    ndx = dx
    ndy = dy
    ndz = dz
    for m in range(count):
        bone = j if step < 0 else j - 1
        r2 = dx * dx + dy * dy + dz * dz
        if r2 <= eps * eps:
            dx, dy, dz, r2 = fx, fy, fz, 1.0
        s = bone_lengths[bone] / r2
        qx = s * dx
        qy = s * dy
        qz = s * dz
        rt = np.sqrt(r2)
        nj = j + step
        if m + 1 < count:
            ndx = (p[nj, 0] - ax) - qx * rt
            ndy = (p[nj, 1] - ay) - qy * rt
            ndz = (p[nj, 2] - az) - qz * rt
        ax = ax + qx * rt
        ay = ay + qy * rt
        az = az + qz * rt
        p[j, 0] = ax
        p[j, 1] = ay
        p[j, 2] = az
        dx = ndx
        dy = ndy
        dz = ndz
        j = nj
    return ax, ay, az


@njit(cache=True, inline="always", error_model="numpy")
def off_line2(x, y, z, ux, uy, uz):
    """The squared distance of the point (x, y, z) from the line through the origin along the
    unit vector (ux, uy, uz)."""
    along = x * ux + y * uy + z * uz
    ox, oy, oz = x - along * ux, y - along * uy, z - along * uz
    return ox * ox + oy * oy + oz * oz


@njit(cache=True, error_model="numpy")
def any_perpendicular(u):
    """A unit vector perpendicular to the unit 3-vector ``u``.

    For ``u`` in the z = 0 plane the answer stays in that plane (2D models remain planar).
    """
    out = np.zeros(3)
    if abs(u[2]) < 1e-12:
        n = np.sqrt(u[1] * u[1] + u[0] * u[0])
        out[0], out[1] = (-u[1] / n, u[0] / n) if n > 0.0 else (1.0, u[0])
        return out
    ax = 0
    if abs(u[1]) < abs(u[ax]):
        ax = 1
    if abs(u[2]) < abs(u[ax]):
        ax = 2
    e = np.zeros(3)
    e[ax] = 1.0
    out[0], out[1], out[2] = u[1] * e[2] - u[2] * e[1], u[2] * e[0] - u[0] * e[2], u[0] * e[1] - u[1] * e[0]
    n = np.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2])
    for k in range(3):
        out[k] /= n
    return out


@njit(cache=True, error_model="numpy")
def all_finite3(a, b, c):
    """True when every value of the float64 arrays ``a``, ``b`` and ``c`` is finite (x * 0 is 0
    for a finite x and NaN for NaN or inf). The per-frame input check: a compiled loop costs
    about a sixth of three NumPy reductions on arrays of a few dozen values."""
    s = 0.0
    for x in a.flat:
        s += x * 0.0
    for x in b.flat:
        s += x * 0.0
    for x in c.flat:
        s += x * 0.0
    return s == 0.0


@njit(cache=True, error_model="numpy")
def rotate_span(p, start, stop, pivot, order, R):
    """Turn the joints ``order[start:stop]`` by R (3, 3) about ``p[pivot]`` (in place)."""
    for b in range(start, stop):
        i = order[b]
        x = p[i, 0] - p[pivot, 0]
        y = p[i, 1] - p[pivot, 1]
        z = p[i, 2] - p[pivot, 2]
        for c in range(3):
            p[i, c] = p[pivot, c] + R[c, 0] * x + R[c, 1] * y + R[c, 2] * z


@njit(cache=True, inline="always", error_model="numpy")
def turn_joint(p, F, j, pivot, R):
    """Turn joint j of ``p`` (n, 3) by R (3, 3) about ``p[pivot]``, and its frame ``F[j]`` with it
    unless ``F`` is empty (in place)."""
    x, y, z = p[j, 0] - p[pivot, 0], p[j, 1] - p[pivot, 1], p[j, 2] - p[pivot, 2]
    for c in range(3):
        p[j, c] = p[pivot, c] + R[c, 0] * x + R[c, 1] * y + R[c, 2] * z
    if F.shape[0] > 0:
        for c in range(3):
            f0, f1, f2 = F[j, 0, c], F[j, 1, c], F[j, 2, c]
            F[j, 0, c] = R[0, 0] * f0 + R[0, 1] * f1 + R[0, 2] * f2
            F[j, 1, c] = R[1, 0] * f0 + R[1, 1] * f1 + R[1, 2] * f2
            F[j, 2, c] = R[2, 0] * f0 + R[2, 1] * f1 + R[2, 2] * f2


@njit(cache=True, error_model="numpy")
def rotate_subtree(p, top, pivot, order, subtree_end, position, R):
    """Turn ``top`` and every joint below it by R about ``p[pivot]`` (in place)."""
    rotate_span(p, position[top], subtree_end[top], pivot, order, R)


@njit(cache=True, error_model="numpy")
def bounded(a, limit):
    """True when every value of the float64 array ``a`` is finite and below ``limit`` in size (a
    NaN fails the comparison): the check of an input that is already a float64 array, in one
    compiled pass and without a copy."""
    for x in a.flat:
        if not abs(x) < limit:
            return False
    return True
