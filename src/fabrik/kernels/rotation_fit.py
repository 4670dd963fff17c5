"""Best-fit rotations for rigid groups of points (compiled): the R maximising sum_k <R a_k, b_k>,
i.e. the rotation that best maps the vectors a_k onto the b_k, given H = sum_k b_k a_k^T (Wahba's
problem). ``kabsch`` solves it exactly (once per solve, to start; as in Theobald's QCP, 2005);
``refine_rotation`` improves a nearby rotation by Newton steps on its rotation vector (falling back
on the step of Mueller et al. 2016, "A robust method to extract the rotational part of
deformations", far from the optimum): warm-started from the previous answer, one or two suffice.
"""

import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy")
def cross_covariance(src, dst, m, h):
    """H = sum_k dst_k src_k^T over the first m rows of two (>= m, 3) arrays, written into the
    3 x 3 ``h`` (scratch the caller keeps, so that a fit every iteration allocates nothing), which
    is returned."""
    h[:, :] = 0.0
    for k in range(m):
        for r in range(3):
            for c in range(3):
                h[r, c] += dst[k, r] * src[k, c]
    return h


@njit(cache=True, error_model="numpy")
def kabsch_svd(h):
    """The proper rotation R maximising trace(R^T H) (3 x 3), through an SVD of H: any one of
    them where several do (H of rank 0 or 1)."""
    u, s, vt = np.linalg.svd(h)
    if np.linalg.det(u @ vt) < 0.0:
        for r in range(3):
            u[r, 2] = -u[r, 2]
    return u @ vt


#: The quaternion of the largest eigenvalue is taken as unique when the product of the gaps to the
#: three other eigenvalues exceeds this fraction of the cube of the eigenvalue bound; below it (a
#: repeated largest eigenvalue: collinear or no vectors) ``kabsch`` falls back on the SVD.
UNIQUE_GAP = 1e-9


@njit(cache=True, error_model="numpy")
def kabsch(h):
    """The proper rotation R maximising trace(R^T H) (3 x 3), H = sum_k b_k a_k^T.

    Horn (1987): with S = H^T, R is the rotation of the unit quaternion that is the eigenvector
    of the largest eigenvalue of the symmetric, traceless 4 x 4 matrix N built from S, and that
    eigenvalue is max trace(R^T H). Its characteristic polynomial x^4 + c2 x^2 + c1 x + c0 has
    only real roots, so Newton's method started above the largest root (at sqrt(3) |H|_F, which
    bounds the sum of H's singular values) falls monotonically onto it. The eigenvector is a
    column of the adjugate of N - lambda I. About 30 times cheaper than an SVD in compiled code.
    """
    sxx, sxy, sxz = h[0, 0], h[1, 0], h[2, 0]  # S = H^T
    syx, syy, syz = h[0, 1], h[1, 1], h[2, 1]
    szx, szy, szz = h[0, 2], h[1, 2], h[2, 2]
    n = np.empty((4, 4))
    n[0, 0] = sxx + syy + szz
    n[0, 1] = n[1, 0] = syz - szy
    n[0, 2] = n[2, 0] = szx - sxz
    n[0, 3] = n[3, 0] = sxy - syx
    n[1, 1] = sxx - syy - szz
    n[1, 2] = n[2, 1] = sxy + syx
    n[1, 3] = n[3, 1] = szx + sxz
    n[2, 2] = -sxx + syy - szz
    n[2, 3] = n[3, 2] = syz + szy
    n[3, 3] = -sxx - syy + szz
    frob2 = 0.0
    for r in range(3):
        for c in range(3):
            frob2 += h[r, c] * h[r, c]
    bound = np.sqrt(3.0 * frob2)
    if not bound > 0.0:
        return kabsch_svd(h)
    det_s = _minor3(h, 0, 1, 2, 0, 1, 2)  # det S = det H
    c2 = -2.0 * frob2
    c1 = -8.0 * det_s
    c0 = _det4(n)
    lam = bound
    for _ in range(60):
        lam2 = lam * lam
        value = (lam2 + c2) * lam2 + c1 * lam + c0
        slope = 4.0 * lam2 * lam + 2.0 * c2 * lam + c1
        if not slope > 0.0:
            break
        step = value / slope
        lam -= step
        if step <= 1e-15 * bound:
            break
    # adjugate of N - lam I: its largest column is the eigenvector (times the gaps' product)
    for d in range(4):
        n[d, d] -= lam
    best = -1.0
    q0 = q1 = q2 = q3 = 0.0
    for col in range(4):
        a0, a1, a2, a3 = _cofactor(n, 0, col), _cofactor(n, 1, col), _cofactor(n, 2, col), _cofactor(n, 3, col)
        norm2 = a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3
        if norm2 > best:
            best, q0, q1, q2, q3 = norm2, a0, a1, a2, a3
    # |adj column| >= |gap product| / 2 for the best column
    if not np.sqrt(best) > 0.5 * UNIQUE_GAP * bound * bound * bound:
        return kabsch_svd(h)
    inv = 1.0 / np.sqrt(best)
    w, x, y, z = q0 * inv, q1 * inv, q2 * inv, q3 * inv
    rot = np.empty((3, 3))
    rot[0, 0] = w * w + x * x - y * y - z * z
    rot[0, 1] = 2.0 * (x * y - w * z)
    rot[0, 2] = 2.0 * (x * z + w * y)
    rot[1, 0] = 2.0 * (x * y + w * z)
    rot[1, 1] = w * w - x * x + y * y - z * z
    rot[1, 2] = 2.0 * (y * z - w * x)
    rot[2, 0] = 2.0 * (x * z - w * y)
    rot[2, 1] = 2.0 * (y * z + w * x)
    rot[2, 2] = w * w - x * x - y * y + z * z
    return rot


#: ``nearly_collinear`` threshold on the second singular value as a fraction of the first.
COLLINEAR_RATIO = 1e-6


@njit(cache=True, error_model="numpy")
def nearly_collinear(h):
    """True when the 3 x 3 ``h`` has (nearly) rank 1 or 0, i.e. its second singular value is
    below about ``COLLINEAR_RATIO`` times its first: then the vectors it sums leave a turn about
    their common line free, and no single best rotation exists. Tested without an SVD: the
    cofactors' norm is at least s0 s1 and at most sqrt(3) s0 s1, and |h|_F >= s0."""
    cof2 = 0.0
    frob2 = 0.0
    for r in range(3):
        r1 = 1 if r == 0 else 0
        r2 = 1 if r == 2 else 2
        for c in range(3):
            c1 = 1 if c == 0 else 0
            c2 = 1 if c == 2 else 2
            minor = h[r1, c1] * h[r2, c2] - h[r1, c2] * h[r2, c1]
            cof2 += minor * minor
            frob2 += h[r, c] * h[r, c]
    return not cof2 > 3.0 * COLLINEAR_RATIO * COLLINEAR_RATIO * frob2 * frob2


@njit(cache=True, inline="always", error_model="numpy")
def _minor3(m, r0, r1, r2, c0, c1, c2):
    return (m[r0, c0] * (m[r1, c1] * m[r2, c2] - m[r1, c2] * m[r2, c1])
            - m[r0, c1] * (m[r1, c0] * m[r2, c2] - m[r1, c2] * m[r2, c0])
            + m[r0, c2] * (m[r1, c0] * m[r2, c1] - m[r1, c1] * m[r2, c0]))


@njit(cache=True, inline="always", error_model="numpy")
def _cofactor(m, row, col):
    """Entry (row, col) of the adjugate of the 4 x 4 matrix m: the signed minor of m without
    row ``col`` and column ``row``."""
    # the rows 0..3 without ``col`` and the columns 0..3 without ``row``: k, or k + 1 past the gap
    r0 = 0 if col > 0 else 1
    r1 = 1 if col > 1 else 2
    r2 = 2 if col > 2 else 3
    c0 = 0 if row > 0 else 1
    c1 = 1 if row > 1 else 2
    c2 = 2 if row > 2 else 3
    sign = 1.0 if (row + col) % 2 == 0 else -1.0
    return sign * _minor3(m, r0, r1, r2, c0, c1, c2)


@njit(cache=True, error_model="numpy")
def _det4(m):
    """det(m) of a 4 x 4 matrix, by cofactors along the first row."""
    total = 0.0
    for col in range(4):
        total += m[0, col] * _cofactor(m, col, 0)
    return total


@njit(cache=True, inline="always", error_model="numpy")
def fit_gradient(rot, h):
    """The ascent direction and curvature of trace(R^T H) in R's rotation vector at ``rot``.

    For R <- exp([w]) R, with P = R H^T = sum_k (R a_k) b_k^T: the gradient is
    g = sum_k (R a_k) x b_k and the Hessian of -trace is trace(P) I - (P + P^T) / 2. Returns
    (gx, gy, gz, trace(P), m00, m01, m02, m11, m12, m22), the last six that Hessian's entries.
    """
    p00 = rot[0, 0] * h[0, 0] + rot[0, 1] * h[0, 1] + rot[0, 2] * h[0, 2]
    p01 = rot[0, 0] * h[1, 0] + rot[0, 1] * h[1, 1] + rot[0, 2] * h[1, 2]
    p02 = rot[0, 0] * h[2, 0] + rot[0, 1] * h[2, 1] + rot[0, 2] * h[2, 2]
    p10 = rot[1, 0] * h[0, 0] + rot[1, 1] * h[0, 1] + rot[1, 2] * h[0, 2]
    p11 = rot[1, 0] * h[1, 0] + rot[1, 1] * h[1, 1] + rot[1, 2] * h[1, 2]
    p12 = rot[1, 0] * h[2, 0] + rot[1, 1] * h[2, 1] + rot[1, 2] * h[2, 2]
    p20 = rot[2, 0] * h[0, 0] + rot[2, 1] * h[0, 1] + rot[2, 2] * h[0, 2]
    p21 = rot[2, 0] * h[1, 0] + rot[2, 1] * h[1, 1] + rot[2, 2] * h[1, 2]
    p22 = rot[2, 0] * h[2, 0] + rot[2, 1] * h[2, 1] + rot[2, 2] * h[2, 2]
    tr = p00 + p11 + p22
    return (p12 - p21, p20 - p02, p01 - p10, tr,
            tr - p00, -0.5 * (p01 + p10), -0.5 * (p02 + p20), tr - p11, -0.5 * (p12 + p21), tr - p22)


@njit(cache=True, inline="always", error_model="numpy")
def definite(m00, m01, m11, det, scale):
    """Whether a symmetric 3 x 3 matrix with leading entries m00, m01, m11 and determinant ``det``
    is clearly positive definite for entries of size ``scale`` (its minors positive, the
    determinant above 1e-12 scale^3)."""
    return m00 > 0.0 and m00 * m11 - m01 * m01 > 0.0 and det > 1e-12 * (scale ** 3 + 1e-300)


@njit(cache=True, inline="always", error_model="numpy")
def det3(m00, m01, m02, m11, m12, m22):
    """The determinant of the symmetric 3 x 3 matrix with these entries."""
    return m00 * (m11 * m22 - m12 * m12) + m01 * (m02 * m12 - m01 * m22) + m02 * (m01 * m12 - m02 * m11)


@njit(cache=True, inline="always", error_model="numpy")
def newton_turn(m00, m01, m02, m11, m12, m22, gx, gy, gz, scale):
    """The rotation vector M^-1 g for the symmetric 3 x 3 Hessian M (entries m..) and gradient g,
    or the gradient step g / scale where M is not clearly positive definite (its determinant
    below 1e-12 scale^3); ``scale`` >= 0 is the size of M's entries."""
    c00 = m11 * m22 - m12 * m12
    c01 = m02 * m12 - m01 * m22
    c02 = m01 * m12 - m02 * m11
    det = m00 * c00 + m01 * c01 + m02 * c02
    if definite(m00, m01, m11, det, scale):
        c11 = m00 * m22 - m02 * m02
        c12 = m01 * m02 - m00 * m12
        c22 = m00 * m11 - m01 * m01
        inv = 1.0 / det
        return ((c00 * gx + c01 * gy + c02 * gz) * inv, (c01 * gx + c11 * gy + c12 * gz) * inv,
                (c02 * gx + c12 * gy + c22 * gz) * inv)
    inv = 1.0 / (scale + 1e-300)
    return gx * inv, gy * inv, gz * inv


@njit(cache=True, inline="always", error_model="numpy")
def turn_rotation(rot, wx, wy, wz):
    """rot <- exp([w]) rot in place (Rodrigues), the turn capped at 1 rad. Returns the angle
    turned; a turn under 1e-12 rad is not made (0 returned)."""
    angle = np.sqrt(wx * wx + wy * wy + wz * wz)
    if angle < 1e-12:
        return 0.0
    kx, ky, kz = wx / angle, wy / angle, wz / angle
    angle = min(angle, 1.0)
    c = np.cos(angle)
    s = np.sin(angle)
    t = 1.0 - c
    # Rodrigues: Q = c I + s [k]x + t k k^T, then rot <- Q rot. Written out rather than turning
    # each column by frames.rotate_about (other roundings): limited skeleton takes carry a
    # last-bit change from frame to frame into different answers (with this and tree_limits'
    # _turn_frame on rotate_about, mocap_sets' limited medians moved 2-5%)
    q00 = c + t * kx * kx
    q01 = t * kx * ky - s * kz
    q02 = t * kx * kz + s * ky
    q10 = t * kx * ky + s * kz
    q11 = c + t * ky * ky
    q12 = t * ky * kz - s * kx
    q20 = t * kx * kz - s * ky
    q21 = t * ky * kz + s * kx
    q22 = c + t * kz * kz
    for col in range(3):
        x, y, z = rot[0, col], rot[1, col], rot[2, col]
        rot[0, col] = q00 * x + q01 * y + q02 * z
        rot[1, col] = q10 * x + q11 * y + q12 * z
        rot[2, col] = q20 * x + q21 * y + q22 * z
    return angle


@njit(cache=True, error_model="numpy")
def refine_rotation(rot, h, steps):
    """Improve the rotation ``rot`` (3 x 3, in place) towards the maximiser of trace(R^T H).

    Newton steps on its rotation vector (``fit_gradient``); where the Hessian is not positive
    definite the step g / |trace(P)| is taken instead. Steps are capped at 1 rad and stop once
    below 1e-12 rad.
    """
    for _ in range(steps):
        gx, gy, gz, tr, m00, m01, m02, m11, m12, m22 = fit_gradient(rot, h)
        wx, wy, wz = newton_turn(m00, m01, m02, m11, m12, m22, gx, gy, gz, abs(tr))
        if turn_rotation(rot, wx, wy, wz) == 0.0:
            return
