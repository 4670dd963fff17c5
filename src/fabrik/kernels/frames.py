"""Bone frames for constrained solves, compiled.

A frame is a (3, 3) rotation matrix whose columns are the bone's local axes in world coordinates:
column 0 right (+X), column 1 the bone direction (+Y), column 2 up (+Z). Frames are stored as
(n, 3, 3) arrays; the helpers take (3, 3) views and never allocate in the hot path except where
noted. Every output is re-orthonormalised with +Y exactly the given direction, so rounding never
accumulates and no NaN can appear.
"""

import numpy as np
from numba import njit


@njit(cache=True, inline="always", error_model="numpy")
def up_axis(d0, d1, d2, u0, u1, u2):
    """The unit vector perpendicular to the unit bone (d0, d1, d2) closest to (u0, u1, u2): a
    frame's +Z. When up is (anti)parallel to the bone, the coordinate axis least aligned with
    the bone is used instead. Returns (z0, z1, z2) as scalars (no array: kernels call it in
    hot loops)."""
    dot = u0 * d0 + u1 * d1 + u2 * d2
    z0, z1, z2 = u0 - dot * d0, u1 - dot * d1, u2 - dot * d2
    n = np.sqrt(z0 * z0 + z1 * z1 + z2 * z2)
    if n < 1e-9:
        # up is (anti)parallel to the bone: use the coordinate axis least aligned with it
        e0, e1, e2 = 0.0, 0.0, 0.0
        a0, a1, a2 = abs(d0), abs(d1), abs(d2)
        if a0 <= a1 and a0 <= a2:
            e0 = 1.0
        elif a1 <= a2:
            e1 = 1.0
        else:
            e2 = 1.0
        dot = e0 * d0 + e1 * d1 + e2 * d2
        z0, z1, z2 = e0 - dot * d0, e1 - dot * d1, e2 - dot * d2
        n = np.sqrt(z0 * z0 + z1 * z1 + z2 * z2)
    return z0 / n, z1 / n, z2 / n


@njit(cache=True, error_model="numpy")
def set_frame(out, d0, d1, d2, u0, u1, u2):
    """out <- the frame with +Y = unit (d0, d1, d2) and +Z as close as possible to (u0, u1, u2)."""
    z0, z1, z2 = up_axis(d0, d1, d2, u0, u1, u2)
    out[0, 0], out[1, 0], out[2, 0] = d1 * z2 - d2 * z1, d2 * z0 - d0 * z2, d0 * z1 - d1 * z0  # y x z
    out[0, 1], out[1, 1], out[2, 1] = d0, d1, d2
    out[0, 2], out[1, 2], out[2, 2] = z0, z1, z2


@njit(cache=True, error_model="numpy")
def reorthonormalise(F):
    """Rebuild F (3, 3) in place as a rotation from its +Y and +Z columns (removes the rounding
    drift that products of rotations accumulate; +Y keeps its direction)."""
    y0, y1, y2 = F[0, 1], F[1, 1], F[2, 1]
    r = np.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    if r <= 0.0:
        y0, y1, y2, r = 0.0, 1.0, 0.0, 1.0
    set_frame(F, y0 / r, y1 / r, y2 / r, F[0, 2], F[1, 2], F[2, 2])


@njit(cache=True, error_model="numpy")
def transport(out, P, d0, d1, d2):
    """out <- P turned by the smallest rotation taking P's +Y onto the unit (d0, d1, d2).

    ``out`` may be ``P``. For exactly opposite directions (within 1e-8) the half turn about P's +X
    is used, so the result is always defined.
    """
    u0, u1, u2 = transported_z(P[0, 0], P[1, 0], P[2, 0], P[0, 1], P[1, 1], P[2, 1], P[0, 2], P[1, 2], P[2, 2],
                               d0, d1, d2)
    set_frame(out, d0, d1, d2, u0, u1, u2)


@njit(cache=True, inline="always", error_model="numpy")
def transported_z(x0, x1, x2, a0, a1, a2, w0, w1, w2, d0, d1, d2):
    """The +Z axis (w) of a frame with axes x, a (+Y), w, turned by the smallest rotation taking
    a onto the unit d; for exactly opposite a and d (within 1e-8) the half turn about x. The
    arithmetic of ``transport``, on scalars so that hot loops can read frames by index."""
    c = a0 * d0 + a1 * d1 + a2 * d2
    if 1.0 + c < 1e-8:
        s = 2.0 * (x0 * w0 + x1 * w1 + x2 * w2)
        return s * x0 - w0, s * x1 - w1, s * x2 - w2
    # Rodrigues with v = a x d: R w = w + v x w + v x (v x w) / (1 + c)
    v0 = a1 * d2 - a2 * d1
    v1 = a2 * d0 - a0 * d2
    v2 = a0 * d1 - a1 * d0
    c0 = v1 * w2 - v2 * w1
    c1 = v2 * w0 - v0 * w2
    c2 = v0 * w1 - v1 * w0
    k = 1.0 / (1.0 + c)
    return (w0 + c0 + k * (v1 * c2 - v2 * c1), w1 + c1 + k * (v2 * c0 - v0 * c2),
            w2 + c2 + k * (v0 * c1 - v1 * c0))


@njit(cache=True, error_model="numpy")
def twist_between(G, F):
    """Signed angle (radians) about the shared +Y turning G's +Z onto F's +Z (G, F share +Y)."""
    sx = F[0, 2] * G[0, 0] + F[1, 2] * G[1, 0] + F[2, 2] * G[2, 0]
    sz = F[0, 2] * G[0, 2] + F[1, 2] * G[1, 2] + F[2, 2] * G[2, 2]
    return np.arctan2(sx, sz)


@njit(cache=True, error_model="numpy")
def twist_about_y(out, G, psi):
    """out <- G followed by a rotation of ``psi`` about its own +Y (out may be G)."""
    c = np.cos(psi)
    s = np.sin(psi)
    for r in range(3):
        gx = G[r, 0]
        gz = G[r, 2]
        out[r, 0] = c * gx - s * gz
        out[r, 2] = c * gz + s * gx
        out[r, 1] = G[r, 1]


@njit(cache=True, inline="always", error_model="numpy")
def mm_to(A, B, C):
    """C <- A @ B for (3, 3) arrays or their transposed views (C not A or B), written out (numba's
    ``@`` goes through BLAS: slow at this size)."""
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(cache=True, error_model="numpy")
def rotate_frame(out, F, R):
    """out <- R @ F for (3, 3) arrays (out must not alias F)."""
    mm_to(R, F, out)


@njit(cache=True, error_model="numpy")
def rotation_between(R, a0, a1, a2, b0, b1, b2):
    """R <- the smallest rotation taking unit a onto unit b (half turn about a perpendicular if opposite)."""
    c = a0 * b0 + a1 * b1 + a2 * b2
    if 1.0 + c < 1e-12:
        # half turn about any axis perpendicular to a
        if abs(a0) < 0.9:
            e0, e1, e2 = 1.0, 0.0, 0.0
        else:
            e0, e1, e2 = 0.0, 1.0, 0.0
        p0 = a1 * e2 - a2 * e1
        p1 = a2 * e0 - a0 * e2
        p2 = a0 * e1 - a1 * e0
        n = np.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
        p = (p0 / n, p1 / n, p2 / n)
        for i in range(3):
            for j in range(3):
                R[i, j] = 2.0 * p[i] * p[j] - (1.0 if i == j else 0.0)
        return
    v0 = a1 * b2 - a2 * b1
    v1 = a2 * b0 - a0 * b2
    v2 = a0 * b1 - a1 * b0
    k = 1.0 / (1.0 + c)
    R[0, 0], R[0, 1], R[0, 2] = 1.0 - k * (v1 * v1 + v2 * v2), -v2 + k * v0 * v1, v1 + k * v0 * v2
    R[1, 0], R[1, 1], R[1, 2] = v2 + k * v0 * v1, 1.0 - k * (v0 * v0 + v2 * v2), -v0 + k * v1 * v2
    R[2, 0], R[2, 1], R[2, 2] = -v1 + k * v0 * v2, v0 + k * v1 * v2, 1.0 - k * (v0 * v0 + v1 * v1)


@njit(cache=True, error_model="numpy")
def axis_angle_matrix(R, k0, k1, k2, angle):
    """R (3, 3) <- the rotation by ``angle`` radians about the unit axis k (right-handed,
    Rodrigues: R = cos I + sin [k]x + (1 - cos) k k^T, acting on column vectors, R @ v). The one
    compiled builder of this matrix (arms, poles, the Jacobian steps and the rigid groups use it)."""
    c = np.cos(angle)
    s = np.sin(angle)
    t = 1.0 - c
    R[0, 0], R[0, 1], R[0, 2] = c + t * k0 * k0, t * k0 * k1 - s * k2, t * k0 * k2 + s * k1
    R[1, 0], R[1, 1], R[1, 2] = t * k1 * k0 + s * k2, c + t * k1 * k1, t * k1 * k2 - s * k0
    R[2, 0], R[2, 1], R[2, 2] = t * k2 * k0 - s * k1, t * k2 * k1 + s * k0, c + t * k2 * k2


@njit(cache=True, inline="always", error_model="numpy")
def rotate_about(ax, ay, az, c, s, vx, vy, vz):
    """The vector v turned about the unit axis a by the angle with cosine ``c`` and sine ``s``
    (right-handed; Rodrigues: v c + (a x v) s + a (a . v)(1 - c)), as scalars (rx, ry, rz): the
    compiled rotation of a vector by axis and angle for hot loops that hold cos and sin already
    (bones turned about a joint, axes turned about a bone). ``tree_limits._turn_frame`` and
    ``rotation_fit.turn_rotation`` keep their own product order (see there)."""
    kd = (ax * vx + ay * vy + az * vz) * (1.0 - c)
    return (vx * c + (ay * vz - az * vy) * s + ax * kd,
            vy * c + (az * vx - ax * vz) * s + ay * kd,
            vz * c + (ax * vy - ay * vx) * s + az * kd)


@njit(cache=True, error_model="numpy")
def frames_along(frames, p, root_frame):
    """Fill frames (n, 3, 3) for pose p (n, 3): bone i's frame is bone i-1's (root_frame for bone 0)
    carried onto bone i by the smallest rotation (zero twist everywhere); frames[n-1] = frames[n-2].
    A zero-length bone keeps its parent's direction."""
    n = p.shape[0]
    for i in range(n - 1):
        d0 = p[i + 1, 0] - p[i, 0]
        d1 = p[i + 1, 1] - p[i, 1]
        d2 = p[i + 1, 2] - p[i, 2]
        r = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        P = root_frame if i == 0 else frames[i - 1]
        if r > 1e-12:
            transport(frames[i], P, d0 / r, d1 / r, d2 / r)
        else:
            frames[i, :, :] = P
    frames[n - 1, :, :] = frames[n - 2]


@njit(cache=True, error_model="numpy")
def planarise(F):
    """Snap a frame of a planar (z = 0) chain back onto the plane: +Y in it, +Z = (0, 0, 1).

    Rounding would otherwise tilt frames out of the plane, and a tilted hinge plane feeds the tilt
    back into the positions; 2D chains call this after every frame update. +Z is always the plane's
    normal (a planar chain has no twist), so "left" stays a turn about +Z.
    """
    y0, y1 = F[0, 1], F[1, 1]
    r = np.sqrt(y0 * y0 + y1 * y1)
    y0, y1 = (y0 / r, y1 / r) if r > 0.0 else (0.0, 1.0)
    F[0, 0], F[1, 0], F[2, 0] = y1, -y0, 0.0  # x = y cross z
    F[0, 1], F[1, 1], F[2, 1] = y0, y1, 0.0
    F[0, 2], F[1, 2], F[2, 2] = 0.0, 0.0, 1.0


@njit(cache=True, error_model="numpy")
def orientation_error(F, T):
    """Rotation angle (radians) between two frames (3, 3), accurate near 0."""
    s = 0.0
    for r in range(3):
        for c in range(3):
            e = F[r, c] - T[r, c]
            s += e * e
    x = np.sqrt(s) / (2.0 * np.sqrt(2.0))
    if x > 1.0:
        x = 1.0
    return 2.0 * np.arcsin(x)
