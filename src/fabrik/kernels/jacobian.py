"""The Jacobian steps on a single chain, compiled: transpose, damped least squares (DLS), DLS
through the SVD, and selectively damped least squares (SDLS, Buss & Kim 2005); and, for a chain
with joint limits, the clamping after each step. The iteration driver, set-up and stopping rules
are ``fabrik.kernels.rotation_chain``'s.

Model: every joint but the effector is a 3-DoF ball joint whose degrees of freedom are rotations
about the world x, y and z axes through the joint. The Jacobian of the effector position ``e``
is the 3 x 3(n-1) matrix whose column for joint ``j`` and axis ``w`` is ``w x (e - p_j)`` (in model
units per radian). A step ``dtheta`` is applied joint by joint, from the one before the effector
inwards, as a rigid rotation of the sub-chain beyond the joint by the rotation vector
``dtheta[3j:3j+3]`` (Rodrigues), so bone lengths stay exact. For a chain and target in the
z = 0 plane (2D chains) the x and y columns are zeroed: only rotations about z remain and the
chain stays planar.

With limits the step instead turns every bone's frame by the rotation it gives it (joint j's
rotation vector turns bones j..n-2, so bone i's frame is turned by ``R_0 R_1 ... R_i``:
``turned_frames``), and then *clamps* (``clamp_chain``): walking from the root to the effector,
each bone's turned frame is restricted by its joint's limit against its parent's (already
clamped) frame (``restrict_frame``), and the joint after it is placed at the bone's length along
it. When the next joint is a hinge the bone is also turned about itself, within its twist range,
so that the hinge plane holds the child bone's turned direction (``hinge_alignment_twist``, as
constrained FABRIK's backward stage does). So every pose after a step satisfies every limit, and
bone lengths are exact. Frames, the packed limit rows and the root frame are those of limited
FABRIK (``fabrik.kernels.fabrik_chain``).
"""

import numpy as np
from numba import njit

from fabrik.kernels.constraints import (COL_AXIS, COL_HINGE, COL_TWIST_FLAG, COL_TYPE, TYPE_HINGE,
                                        hinge_alignment_twist, limit_direction, limit_twist, wrap_angle)
from fabrik.kernels.frames import (axis_angle_matrix, planarise, reorthonormalise, rotate_frame, transport,
                                   twist_about_y, twist_between)

TRANSPOSE, DLS, SVD_DLS, SDLS = 0, 1, 2, 3


@njit(cache=True, error_model="numpy")
def is_planar(p, target):
    """True when every joint and the target have z exactly 0 (a 2D chain embedded in 3D)."""
    if target[2] != 0.0:
        return False
    for i in range(p.shape[0]):
        if p[i, 2] != 0.0:
            return False
    return True


@njit(cache=True, error_model="numpy")
def fill_jacobian(p, planar, jac):
    """Write the 3 x 3(n-1) effector-position Jacobian of pose ``p`` (n, 3) into ``jac``.

    Column 3j+a is ``axis_a x (p[n-1] - p[j])`` for the world axes a = x, y, z; for ``planar``
    poses the x and y columns are zero.
    """
    last = p.shape[0] - 1
    for j in range(last):
        dx = p[last, 0] - p[j, 0]
        dy = p[last, 1] - p[j, 1]
        dz = p[last, 2] - p[j, 2]
        c = 3 * j
        # x axis: (1,0,0) x d = (0, -dz, dy); y axis: (0,1,0) x d = (dz, 0, -dx); z axis: (-dy, dx, 0)
        jac[0, c] = jac[1, c + 1] = jac[2, c + 2] = 0.0
        jac[1, c] = 0.0 if planar else -dz
        jac[2, c] = 0.0 if planar else dy
        jac[0, c + 1] = 0.0 if planar else dz
        jac[2, c + 1] = 0.0 if planar else -dx
        jac[0, c + 2] = -dy
        jac[1, c + 2] = dx


@njit(cache=True, error_model="numpy")
def clamp_max_abs(v, limit):
    """Scale ``v`` in place so that its largest absolute entry is at most ``limit``."""
    m = 0.0
    for i in range(v.shape[0]):
        m = max(m, abs(v[i]))
    if m > limit:
        f = limit / m
        for i in range(v.shape[0]):
            v[i] *= f


@njit(cache=True, error_model="numpy")
def solve_sym3(a, b):
    """Solve the 3x3 symmetric positive definite system a x = b (Cholesky); zeros if singular."""
    x = np.zeros(3)
    l00 = a[0, 0]
    if l00 <= 0.0:
        return x
    l00 = np.sqrt(l00)
    l10 = a[1, 0] / l00
    l20 = a[2, 0] / l00
    d1 = a[1, 1] - l10 * l10
    if d1 <= 0.0:
        return x
    l11 = np.sqrt(d1)
    l21 = (a[2, 1] - l20 * l10) / l11
    d2 = a[2, 2] - l20 * l20 - l21 * l21
    if d2 <= 0.0:
        return x
    l22 = np.sqrt(d2)
    y0 = b[0] / l00
    y1 = (b[1] - l10 * y0) / l11
    y2 = (b[2] - l20 * y0 - l21 * y1) / l22
    x[2] = y2 / l22
    x[1] = (y1 - l21 * x[2]) / l11
    x[0] = (y0 - l10 * x[1] - l20 * x[2]) / l00
    return x


@njit(cache=True, error_model="numpy")
def gram(jac, lam2):
    """J J^T + lam2 I (3 x 3) of a 3-row matrix."""
    a = np.zeros((3, 3))
    m = jac.shape[1]
    for r in range(3):
        for q in range(r, 3):
            acc = 0.0
            for c in range(m):
                acc += jac[r, c] * jac[q, c]
            a[r, q] = a[q, r] = acc + lam2 if q == r else acc
    return a


@njit(cache=True, error_model="numpy")
def svd3(jac):
    """Thin SVD of a 3 x m matrix: (u (3, 3), s (3,) descending, vt (3, m)) with J = u diag(s) vt.

    One-sided Jacobi (Hestenes) on the m x 3 matrix J^T: plane rotations Q make the columns of
    W = J^T Q orthogonal; then s_i = |W_i|, u = Q and the rows of vt are W_i / s_i. Accurate to
    rounding for every singular value, and much cheaper than a general LAPACK call for 3 rows.
    Rows of vt for zero singular values are left zero.
    """
    m = jac.shape[1]
    w = jac.copy()  # rows are the columns of W
    q = np.eye(3)
    for sweep in range(30):
        off = 0.0
        for i in range(2):
            for j in range(i + 1, 3):
                alpha = beta = gamma = 0.0
                for c in range(m):
                    alpha += w[i, c] * w[i, c]
                    beta += w[j, c] * w[j, c]
                    gamma += w[i, c] * w[j, c]
                if gamma == 0.0 or abs(gamma) <= 1e-15 * np.sqrt(alpha * beta):
                    continue
                off = max(off, abs(gamma) / np.sqrt(alpha * beta))
                zeta = (beta - alpha) / (2.0 * gamma)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                cs = 1.0 / np.sqrt(1.0 + t * t)
                sn = cs * t
                for c in range(m):
                    w[i, c], w[j, c] = cs * w[i, c] - sn * w[j, c], sn * w[i, c] + cs * w[j, c]
                for r in range(3):
                    q[r, i], q[r, j] = cs * q[r, i] - sn * q[r, j], sn * q[r, i] + cs * q[r, j]
        if off <= 1e-15:
            break
    s = np.zeros(3)
    for i in range(3):
        acc = 0.0
        for c in range(m):
            acc += w[i, c] * w[i, c]
        s[i] = np.sqrt(acc)
    order = np.argsort(-s)
    u = np.empty((3, 3))
    vt = np.zeros((3, m))
    s_sorted = np.empty(3)
    for k in range(3):
        i = order[k]
        s_sorted[k] = s[i]
        for r in range(3):
            u[r, k] = q[r, i]
        if s[i] > 0.0:
            for c in range(m):
                vt[k, c] = w[i, c] / s[i]
    return u, s_sorted, vt


@njit(cache=True, inline="always", error_model="numpy")
def clamped_error(p, last, target, err, max_error_step, e):
    """e (3,) <- the effector's error vector ``target - p[last]``, of length ``err``, shortened to
    ``max_error_step`` when longer (Buss and Kim's error clamp)."""
    f = max_error_step / err if err > max_error_step else 1.0
    for k in range(3):
        e[k] = f * (target[k] - p[last, k])


@njit(cache=True, error_model="numpy")
def jacobian_step(jac, err, mode, damping, max_angle_step, alpha, dtheta):
    """The joint-angle step (radians) for effector error ``err`` (3,), written into ``dtheta``.

    mode 0 transpose: ``alpha J^T e`` with ``alpha`` > 0 fixed or, for ``alpha`` <= 0, the
    Buss-Kim adaptive ``<e, J J^T e> / |J J^T e|^2``; mode 1 DLS: ``J^T (J J^T + damping^2 I)^-1 e``;
    mode 2 SVD-DLS: ``sum_i s_i / (s_i^2 + damping^2) (u_i . e) v_i``; mode 3 SDLS (Buss & Kim
    2005) with ``gamma_max = max_angle_step``. Every mode then scales the step so no joint angle
    changes by more than ``max_angle_step``.
    """
    m = jac.shape[1]
    if mode == TRANSPOSE:
        for c in range(m):
            dtheta[c] = jac[0, c] * err[0] + jac[1, c] * err[1] + jac[2, c] * err[2]
        if alpha > 0.0:
            a = alpha
        else:
            jjte = np.zeros(3)
            for r in range(3):
                for c in range(m):
                    jjte[r] += jac[r, c] * dtheta[c]
            num = err[0] * jjte[0] + err[1] * jjte[1] + err[2] * jjte[2]
            den = jjte[0] * jjte[0] + jjte[1] * jjte[1] + jjte[2] * jjte[2]
            a = num / den if den > 0.0 else 0.0
        for c in range(m):
            dtheta[c] *= a
    elif mode == DLS:
        f = solve_sym3(gram(jac, damping * damping), err)
        for c in range(m):
            dtheta[c] = jac[0, c] * f[0] + jac[1, c] * f[1] + jac[2, c] * f[2]
    else:
        u, s, vt = svd3(jac)
        dtheta[:] = 0.0
        if mode == SVD_DLS:
            lam2 = damping * damping
            for i in range(3):
                denom = s[i] * s[i] + lam2
                if denom <= 0.0:
                    continue
                coef = s[i] / denom * (u[0, i] * err[0] + u[1, i] * err[1] + u[2, i] * err[2])
                for c in range(m):
                    dtheta[c] += coef * vt[i, c]
        else:
            col_norm = np.empty(m)
            for c in range(m):
                col_norm[c] = np.sqrt(jac[0, c] ** 2 + jac[1, c] ** 2 + jac[2, c] ** 2)
            phi = np.empty(m)
            for i in range(3):
                if s[i] <= 1e-12 * s[0] or s[i] <= 1e-300:
                    continue
                inv = 1.0 / s[i]
                alpha_i = u[0, i] * err[0] + u[1, i] * err[1] + u[2, i] * err[2]
                # N_i: norm of u_i per effector (one effector: 1). M_i: size of the effector
                # response to a unit move along v_i, per unit of singular value.
                big_m = 0.0
                for c in range(m):
                    big_m += abs(vt[i, c]) * col_norm[c]
                big_m *= inv
                gamma = max_angle_step / big_m if big_m > 1.0 else max_angle_step
                for c in range(m):
                    phi[c] = inv * alpha_i * vt[i, c]
                clamp_max_abs(phi, gamma)
                for c in range(m):
                    dtheta[c] += phi[c]
    clamp_max_abs(dtheta, max_angle_step)


@njit(cache=True, error_model="numpy")
def restrict_frame(out, D, P, row, d, G):
    """out <- the desired frame D (3, 3; +Y the desired bone direction) restricted by the limit
    ``row`` against the reference frame P: the direction projected into the allowed region, the
    twist of D relative to P (carried onto the bone) clamped when the row limits it, else the frame
    carried from D onto the projected direction by the smallest rotation. ``out`` may be ``D``;
    d (3,) and G (3, 3) are scratch. Returns 1 when the limit is active."""
    d[0], d[1], d[2] = D[0, 1], D[1, 1], D[2, 1]
    act = limit_direction(row, P, d, False)
    if row[COL_TWIST_FLAG] != 0.0:
        transport(G, P, D[0, 1], D[1, 1], D[2, 1])
        psi, act_t = limit_twist(row, twist_between(G, D))
        transport(G, P, d[0], d[1], d[2])
        twist_about_y(out, G, psi)
        act += act_t
    else:
        transport(out, D, d[0], d[1], d[2])
    return 1 if act > 0 else 0


@njit(cache=True, error_model="numpy")
def clamp_chain(p, frames, desired, lengths, limits, root, root_frame, active, planar, G, d):
    """Place the chain from ``root`` with bone i along ``desired[i]`` restricted by its limit
    (module docstring). Writes p (n, 3), frames (n, 3, 3) and active (n,)."""
    last = p.shape[0] - 1
    for k in range(3):
        p[0, k] = root[k]
    for i in range(last):
        P = root_frame if i == 0 else frames[i - 1]
        act = restrict_frame(frames[i], desired[i], P, limits[i], d, G)
        if planar:
            planarise(frames[i])
        c = i + 1
        if not planar and c <= last - 1 and limits[c, COL_TYPE] == TYPE_HINGE:
            # turn the bone about itself (within its twist range) so that the child's hinge plane
            # holds the child's desired direction
            tau, ok = hinge_alignment_twist(frames[i], limits[c, COL_AXIS], limits[c, COL_AXIS + 2],
                                            desired[c, 0, 1], desired[c, 1, 1], desired[c, 2, 1],
                                            limits[c, COL_HINGE], limits[c, COL_HINGE + 1])
            if ok:
                if limits[i, COL_TWIST_FLAG] != 0.0:
                    transport(G, P, frames[i, 0, 1], frames[i, 1, 1], frames[i, 2, 1])
                    psi = twist_between(G, frames[i])
                    psi_new, act_t = limit_twist(limits[i], wrap_angle(psi + tau))
                    tau = psi_new - psi
                    act += act_t
                twist_about_y(frames[i], frames[i], tau)
        active[i] = 1 if act > 0 else 0
        for k in range(3):
            p[i + 1, k] = p[i, k] + lengths[i] * frames[i, k, 1]
    frames[last, :, :] = frames[last - 1]
    active[last] = 0


@njit(cache=True, error_model="numpy")
def turned_frames(desired, frames, dtheta, R, M, tmp):
    """desired[i] <- (R_0 R_1 ... R_i) frames[i], R_j the rotation of rotation vector
    dtheta[3j:3j+3] (world axes): each bone turned as the unconstrained step turns it, then
    re-orthonormalised, so that the rounding of the products does not carry over from step to step
    (the frames are the last step's) and tilt a frame off its own bone (tests/project/test_fuzz.py)."""
    n = frames.shape[0]
    for r in range(3):
        for c in range(3):
            M[r, c] = 1.0 if r == c else 0.0
    for i in range(n - 1):
        wx, wy, wz = dtheta[3 * i], dtheta[3 * i + 1], dtheta[3 * i + 2]
        angle = np.sqrt(wx * wx + wy * wy + wz * wz)
        if angle > 1e-300:
            axis_angle_matrix(R, wx / angle, wy / angle, wz / angle, angle)
            rotate_frame(tmp, R, M)  # tmp <- M R
            M[:, :] = tmp
        rotate_frame(desired[i], frames[i], M)
        reorthonormalise(desired[i])
    desired[n - 1, :, :] = desired[n - 2]
