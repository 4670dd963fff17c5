"""Best-fit rotations for rigid groups of points (compiled).

``kabsch`` solves Wahba's problem exactly through an SVD (used once per solve, to start);
``refine_rotation`` improves a nearby rotation by Newton steps on its rotation vector (falling back
on the step of Mueller et al. 2016, "A robust method to extract the rotational part of
deformations", far from the optimum): warm-started from the previous answer, one or two steps
suffice. Both find the R maximising sum_k <R a_k, b_k>, i.e. the rotation that best maps the
vectors a_k onto the b_k, given H = sum_k b_k a_k^T.
"""

import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy")
def cross_covariance(src, dst, m):
    """H = sum_k dst_k src_k^T over the first m rows of two (>= m, 3) arrays."""
    h = np.zeros((3, 3))
    for k in range(m):
        for r in range(3):
            for c in range(3):
                h[r, c] += dst[k, r] * src[k, c]
    return h


@njit(cache=True, error_model="numpy")
def kabsch(h):
    """The proper rotation R maximising trace(R^T H) (3 x 3)."""
    u, s, vt = np.linalg.svd(h)
    if np.linalg.det(u @ vt) < 0.0:
        for r in range(3):
            u[r, 2] = -u[r, 2]
    return u @ vt


@njit(cache=True, error_model="numpy")
def refine_rotation(rot, h, steps):
    """Improve the rotation ``rot`` (3 x 3, in place) towards the maximiser of trace(R^T H).

    With P = R H^T = sum_k (R a_k) b_k^T the gradient is g = sum_k (R a_k) x b_k and the Hessian
    trace(P) I - (P + P^T) / 2; where that is not positive definite the step g / |trace(P)| is
    taken instead. Steps are capped at 1 rad and stop once below 1e-12 rad.
    """
    for _ in range(steps):
        p00 = rot[0, 0] * h[0, 0] + rot[0, 1] * h[0, 1] + rot[0, 2] * h[0, 2]
        p01 = rot[0, 0] * h[1, 0] + rot[0, 1] * h[1, 1] + rot[0, 2] * h[1, 2]
        p02 = rot[0, 0] * h[2, 0] + rot[0, 1] * h[2, 1] + rot[0, 2] * h[2, 2]
        p10 = rot[1, 0] * h[0, 0] + rot[1, 1] * h[0, 1] + rot[1, 2] * h[0, 2]
        p11 = rot[1, 0] * h[1, 0] + rot[1, 1] * h[1, 1] + rot[1, 2] * h[1, 2]
        p12 = rot[1, 0] * h[2, 0] + rot[1, 1] * h[2, 1] + rot[1, 2] * h[2, 2]
        p20 = rot[2, 0] * h[0, 0] + rot[2, 1] * h[0, 1] + rot[2, 2] * h[0, 2]
        p21 = rot[2, 0] * h[1, 0] + rot[2, 1] * h[1, 1] + rot[2, 2] * h[1, 2]
        p22 = rot[2, 0] * h[2, 0] + rot[2, 1] * h[2, 1] + rot[2, 2] * h[2, 2]
        gx = p12 - p21
        gy = p20 - p02
        gz = p01 - p10
        tr = p00 + p11 + p22
        m00 = tr - p00
        m11 = tr - p11
        m22 = tr - p22
        m01 = -0.5 * (p01 + p10)
        m02 = -0.5 * (p02 + p20)
        m12 = -0.5 * (p12 + p21)
        c00 = m11 * m22 - m12 * m12
        c01 = m02 * m12 - m01 * m22
        c02 = m01 * m12 - m02 * m11
        det = m00 * c00 + m01 * c01 + m02 * c02
        if m00 > 0.0 and m00 * m11 - m01 * m01 > 0.0 and det > 1e-12 * (abs(tr) ** 3 + 1e-300):
            c11 = m00 * m22 - m02 * m02
            c12 = m01 * m02 - m00 * m12
            c22 = m00 * m11 - m01 * m01
            inv = 1.0 / det
            wx = (c00 * gx + c01 * gy + c02 * gz) * inv
            wy = (c01 * gx + c11 * gy + c12 * gz) * inv
            wz = (c02 * gx + c12 * gy + c22 * gz) * inv
        else:
            scale = 1.0 / (abs(tr) + 1e-300)
            wx = gx * scale
            wy = gy * scale
            wz = gz * scale
        angle = np.sqrt(wx * wx + wy * wy + wz * wz)
        if angle < 1e-12:
            return
        if angle > 1.0:
            wx /= angle
            wy /= angle
            wz /= angle
            angle = 1.0
        kx = wx / angle
        ky = wy / angle
        kz = wz / angle
        c = np.cos(angle)
        s = np.sin(angle)
        t = 1.0 - c
        # Rodrigues: Q = c I + s [k]x + t k k^T, then rot <- Q rot
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
            x = rot[0, col]
            y = rot[1, col]
            z = rot[2, col]
            rot[0, col] = q00 * x + q01 * y + q02 * z
            rot[1, col] = q10 * x + q11 * y + q12 * z
            rot[2, col] = q20 * x + q21 * y + q22 * z
