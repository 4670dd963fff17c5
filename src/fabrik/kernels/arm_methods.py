"""CCD and damped least squares on revolute-joint arms (``fabrik.Arm``), with joint limits and pose
targets, compiled: the comparison methods for arms and robots.

Layout as ``fabrik.kernels.arm``. Both methods move the joint angles q directly (so every pose
is a pose of the model and every limit holds: angles are clipped into ``[lower, upper]`` after
every change) and measure a pose target by the tip's position error (model units) and its
orientation error (the angle of ``R_target R_tip^T``, radians); the orientation counts as
``scale`` model units per radian in the objective, ``scale`` the arm's reach.

* CCD (``ccd_arm``): one iteration visits the joints from the tip inwards; each turns to the angle
  that best serves the target for its own axis alone (position and orientation terms are both
  ``A cos t + B sin t + C`` in the joint's angle t, so the best angle is ``atan2(B, A)``, or the
  nearer bound of its range when that lies outside it);
* DLS (``dls_arm``): the 6 x m Jacobian of the tip (position rows ``a_k x (tip - p_k)``,
  orientation rows ``a_k``, the latter times ``scale``), ``dq = J^T (J J^T + damping^2 I)^-1 e``,
  the step clamped to ``max_angle_step`` on its largest component, q clipped into its limits.

Both stop when the target is reached (position within ``tol`` and orientation within ``otol``;
for a position target only the first), when the weighted error has fallen by less than
``PROGRESS_FRACTION`` of itself over ``window`` iterations (default ``NO_PROGRESS_WINDOW``;
stalled, ``unreachable`` when the target lies beyond the reach), or at ``max_iter``; they return
the best pose seen.
"""

import numpy as np
from numba import njit

from fabrik.kernels.arm import _axis_rotation, forward_arm
from fabrik.kernels.arm_ik import _mmt, _mtm, _mv
from fabrik.kernels.stopping import MAX_ITERATIONS, NO_PROGRESS_WINDOW, PROGRESS_FRACTION, REACHED, STALLED, \
    UNREACHABLE


@njit(cache=True)
def pose_error(positions, frames, target_p, target_R, oriented):
    """(position error, orientation error (radians; 0 unless ``oriented``)) of a forward pose."""
    m = positions.shape[0] - 1
    d0 = positions[m, 0] - target_p[0]
    d1 = positions[m, 1] - target_p[1]
    d2 = positions[m, 2] - target_p[2]
    err = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    if not oriented:
        return err, 0.0
    rel = _mtm(frames[m], target_R)
    return err, np.arccos(min(1.0, max(-1.0, 0.5 * (rel[0, 0] + rel[1, 1] + rel[2, 2] - 1.0))))


@njit(cache=True)
def _world_axis(frames, axes, k):
    return _mv(frames[k], axes[k])


@njit(cache=True)
def _best_angle(A, B, lo, hi, current):
    """The angle t maximising ``A cos t + B sin t`` within [lo, hi]: its turn nearest ``current``
    inside the range (a range wider than a turn may hold another turn of it when the nearest lies
    beyond an end), else the better end of the range."""
    two_pi = 2.0 * np.pi
    t = np.arctan2(B, A)
    t = current + (t - current) - two_pi * np.round((t - current) / two_pi)
    if lo <= t <= hi:
        return t
    # the turn of t nearest the range, on the side it lies beyond
    t = t + two_pi * np.ceil((lo - t) / two_pi) if t < lo else t - two_pi * np.ceil((t - hi) / two_pi)
    if lo <= t <= hi:
        return t
    vlo = A * np.cos(lo) + B * np.sin(lo)
    vhi = A * np.cos(hi) + B * np.sin(hi)
    return lo if vlo >= vhi else hi


@njit(cache=True)
def ccd_arm(axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter, scale,
            window=NO_PROGRESS_WINDOW):
    """CCD on an arm (module docstring). Returns (q, positions, frames, iterations, error,
    orientation error, status)."""
    m = axes.shape[0]
    q = np.minimum(np.maximum(q0.copy(), lower), upper)
    positions = np.empty((m + 1, 3))
    frames = np.empty((m + 1, 3, 3))
    forward_arm(axes, origins, tip, q, positions, frames)
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if err <= tol and oerr <= otol:
        return q, positions, frames, 0, err, oerr, REACHED
    w = scale * scale  # orientation weight: radians as lengths of the reach
    best_q = q.copy()
    best = err + scale * oerr
    ref = best
    since = 0
    it = 0
    while it < max_iter:
        for k in range(m - 1, -1, -1):
            a = _world_axis(frames, axes, k)
            u = positions[m] - positions[k]
            v = target_p - positions[k]
            ua = u[0] * a[0] + u[1] * a[1] + u[2] * a[2]
            va = v[0] * a[0] + v[1] * a[1] + v[2] * a[2]
            # position: maximise v . R(t) u  ->  cos t (v_perp . u_perp) + sin t (a . (u x v))
            A = (v[0] - va * a[0]) * (u[0] - ua * a[0]) + (v[1] - va * a[1]) * (u[1] - ua * a[1]) \
                + (v[2] - va * a[2]) * (u[2] - ua * a[2])
            B = a[0] * (u[1] * v[2] - u[2] * v[1]) + a[1] * (u[2] * v[0] - u[0] * v[2]) + a[2] * (u[0] * v[1] - u[1] * v[0])
            if oriented:
                # orientation: maximise tr(R_t^T R(t) R_tip) = tr(R(t) M), M = R_tip R_t^T
                M = _mmt(frames[m], target_R)
                Ma = _mv(M, a)
                A += w * 0.5 * (M[0, 0] + M[1, 1] + M[2, 2] - (a[0] * Ma[0] + a[1] * Ma[1] + a[2] * Ma[2]))
                B += w * 0.5 * (a[0] * (M[1, 2] - M[2, 1]) + a[1] * (M[2, 0] - M[0, 2]) + a[2] * (M[0, 1] - M[1, 0]))
            if A == 0.0 and B == 0.0:
                continue
            # the best turn t about the joint's axis from where it is now
            t = _best_angle(A, B, lower[k] - q[k], upper[k] - q[k], 0.0)
            if t != 0.0:
                q[k] += t
                forward_arm(axes, origins, tip, q, positions, frames)
        it += 1
        err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
        if err <= tol and oerr <= otol:
            return q, positions, frames, it, err, oerr, REACHED
        score = err + scale * oerr
        if score < best:
            best = score
            best_q[:] = q
        if score < (1.0 - PROGRESS_FRACTION) * ref:
            ref = score
            since = 0
        else:
            since += 1
            if since >= window:
                break
    return _finish(axes, origins, tip, best_q, target_p, target_R, oriented, it, max_iter, positions, frames, scale)


@njit(cache=True)
def _finish(axes, origins, tip, q, target_p, target_R, oriented, it, max_iter, positions, frames, scale):
    """The best pose's answer: its forward pose, errors and status (the cap, or stalled: out of
    reach when the target lies farther from the base than the arm reaches)."""
    m = axes.shape[0]
    forward_arm(axes, origins, tip, q, positions, frames)
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if it >= max_iter:
        return q, positions, frames, it, err, oerr, MAX_ITERATIONS
    d = target_p - positions[0]
    far = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) > scale
    return q, positions, frames, it, err, oerr, (UNREACHABLE if far else STALLED)


@njit(cache=True)
def dls_arm(axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter, scale, damping,
            max_angle_step, window=NO_PROGRESS_WINDOW):
    """Damped least squares on an arm (module docstring). Returns as ``ccd_arm``."""
    m = axes.shape[0]
    q = np.minimum(np.maximum(q0.copy(), lower), upper)
    positions = np.empty((m + 1, 3))
    frames = np.empty((m + 1, 3, 3))
    forward_arm(axes, origins, tip, q, positions, frames)
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if err <= tol and oerr <= otol:
        return q, positions, frames, 0, err, oerr, REACHED
    rows = 6 if oriented else 3
    J = np.zeros((rows, m))
    e = np.zeros(rows)
    best_q = q.copy()
    best = err + scale * oerr
    ref = best
    since = 0
    lam2 = damping * damping
    it = 0
    while it < max_iter:
        for k in range(m):
            a = _world_axis(frames, axes, k)
            r = positions[m] - positions[k]
            J[0, k] = a[1] * r[2] - a[2] * r[1]
            J[1, k] = a[2] * r[0] - a[0] * r[2]
            J[2, k] = a[0] * r[1] - a[1] * r[0]
            if oriented:
                J[3, k] = scale * a[0]
                J[4, k] = scale * a[1]
                J[5, k] = scale * a[2]
        for c in range(3):
            e[c] = target_p[c] - positions[m, c]
        if oriented:
            rv = _rotation_vector(_mmt(target_R, frames[m]))
            for c in range(3):
                e[3 + c] = scale * rv[c]
        G = J @ J.T
        for r in range(rows):
            G[r, r] += lam2
        dq = J.T @ np.linalg.solve(G, e)
        big = np.max(np.abs(dq))
        if big > max_angle_step:
            dq *= max_angle_step / big
        q = np.minimum(np.maximum(q + dq, lower), upper)
        forward_arm(axes, origins, tip, q, positions, frames)
        it += 1
        err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
        if err <= tol and oerr <= otol:
            return q, positions, frames, it, err, oerr, REACHED
        score = err + scale * oerr
        if score < best:
            best = score
            best_q[:] = q
        if score < (1.0 - PROGRESS_FRACTION) * ref:
            ref = score
            since = 0
        else:
            since += 1
            if since >= window:
                break
    return _finish(axes, origins, tip, best_q, target_p, target_R, oriented, it, max_iter, positions, frames, scale)


@njit(cache=True)
def _rotation_vector(R):
    """The rotation vector (axis times angle, radians) of the rotation matrix R."""
    c = min(1.0, max(-1.0, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)))
    angle = np.arccos(c)
    v = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if s > 1e-12:
        return v * (angle / s)
    if c > 0.0:
        return 0.5 * v  # small angle
    # half a turn: the axis from the diagonal
    k = np.argmax(np.array([R[0, 0], R[1, 1], R[2, 2]]))
    axis = np.array([R[0, k], R[1, k], R[2, k]])
    axis[k] += 1.0
    axis /= np.sqrt(axis[0] ** 2 + axis[1] ** 2 + axis[2] ** 2)
    return axis * angle
