"""FABRIK, CCD and damped least squares on revolute-joint arms (``fabrik.Arm``, robots: offsets
between axes, joint limits, pose targets), compiled: one attempt from given joint angles, on one
iteration driver (``arm_run``); the methods differ only in the step that turns the joints.
``fabrik.solvers.arm`` restarts FABRIK.

Layout as ``fabrik.kernels.arm``. Every method moves the joint angles q (so every pose is a pose of
the model and every limit holds: angles are clipped into ``[lower, upper]`` after every change) and
measures a pose target by the tip's position error (model units) and its orientation error (the
angle of ``R_target R_tip^T``, radians); the orientation counts as ``scale`` model units per
radian in the objective, ``scale`` the arm's reach. A revolute joint leaves the part of the arm
beyond it one degree of freedom, a turn about its axis, and the turn that brings a set of points
nearest a set of goals is closed form: ``sum |c + Rot(a, t) (x_j - c) - g_j|^2`` is
``-2 (A cos t + B sin t) + const`` in the angle t, best at ``atan2(B, A)``, at another turn of it
inside a range wider than a turn, or at the better end of the joint's range (``_best_angle``).

* FABRIK (``fabrik_arm``): the points it moves are the rows of ``forward_arm``: the joints'
  locations, the tip, and, for a pose target, three markers at ``marker`` (model units) from the
  tip along its frame's axes (so that the tip frame's orientation is measured in lengths, as the
  tip's position is). One iteration is FABRIK's two stages with hinges in place of ball joints:

  - forward stage (reaching from the target): the arm, as it is, is moved rigidly so that its tip
    lies on the target (a pose target: the tip frame on the target frame; a position target: the
    tip on the target, the arm turned about it to lie nearest where it was, a ball joint at the
    target); then joint by joint from the last to the second, each joint turns the part of the arm
    before it (the joints nearer the base) to lie nearest where it was before the stage. This is
    FABRIK's forward stage (each joint moved the least distance that keeps its bone) with the
    bones' directions restricted to what the joint's axis allows; the part before joint 0 (the
    base) ends displaced, as FABRIK's root does;
  - backward stage (reaching from the base): from the fixed base, joint by joint from the first
    to the last, each joint turns the part of the arm beyond it (the joints nearer the tip, the
    tip and its markers) to lie nearest where the forward stage put it. The backward stage's
    angles are the iteration's answer.

* CCD (``ccd_arm``): one iteration visits the joints from the tip inwards; each turns to the angle
  that best serves the target for its own axis alone (position and orientation terms are both
  ``A cos t + B sin t + C`` in the joint's angle t);
* DLS (``dls_arm``): the 6 x m Jacobian of the tip (position rows ``a_k x (tip - p_k)``,
  orientation rows ``a_k``, the latter times ``scale``), ``dq = J^T (J J^T + damping^2 I)^-1 e``,
  the step clamped to ``max_angle_step`` on its largest component, q clipped into its limits.

An attempt stops when the target is reached (position within ``tol`` and orientation within
``otol``; for a position target only the first), when the weighted error
``position + scale * orientation`` has fallen by less than ``PROGRESS_FRACTION`` of itself over
``window`` iterations (default ``NO_PROGRESS_WINDOW``; stalled, ``unreachable`` when the target
lies beyond the reach), or at ``max_iter``; it returns the best pose it has seen.
"""

import numpy as np
from numba import njit

from fabrik.kernels.arm import _axis_rotation, forward_arm, pose_error
from fabrik.kernels.arm_ik import _cross, _mm, _mul, _mv3
from fabrik.kernels.frames import mm_to
from fabrik.kernels.vec import dist3v
from fabrik.kernels.stopping import MAX_ITERATIONS, NO_PROGRESS_WINDOW, PROGRESS_FRACTION, REACHED, STALLED, \
    UNREACHABLE


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


#: Iterations between recomputations of the points from the joint angles (``forward_arm``); in
#: between, the stages' turns move them, exactly but for rounding.
REFRESH = 32
#: The origin (``_move``'s centre for directions).
_ZERO = (0.0, 0.0, 0.0)


@njit(cache=True, inline="always")
def _turn_terms(X, G, first, stop, a, c):
    """(A, B) with ``sum_j |c + Rot(a, t) (X_j - c) - G_j|^2 = -2 (A cos t + B sin t) + const`` over
    rows ``first:stop`` of the points X and goals G, for the unit axis a through c."""
    A = 0.0
    B = 0.0
    for j in range(first, stop):
        u0 = X[j, 0] - c[0]
        u1 = X[j, 1] - c[1]
        u2 = X[j, 2] - c[2]
        v0 = G[j, 0] - c[0]
        v1 = G[j, 1] - c[1]
        v2 = G[j, 2] - c[2]
        ua = u0 * a[0] + u1 * a[1] + u2 * a[2]
        va = v0 * a[0] + v1 * a[1] + v2 * a[2]
        A += u0 * v0 + u1 * v1 + u2 * v2 - ua * va
        B += a[0] * (u1 * v2 - u2 * v1) + a[1] * (u2 * v0 - u0 * v2) + a[2] * (u0 * v1 - u1 * v0)
    return A, B


@njit(cache=True, inline="always")
def _move(X, first, stop, rot, c, out, to):
    """out[j] <- to + rot (X[j] - c) for the rows ``first:stop`` (``out`` may be X): the points X
    turned by ``rot`` (3, 3) about c and carried onto ``to`` (directions: c = to = 0)."""
    for j in range(first, stop):
        u0 = X[j, 0] - c[0]
        u1 = X[j, 1] - c[1]
        u2 = X[j, 2] - c[2]
        for i in range(3):
            out[j, i] = to[i] + rot[i, 0] * u0 + rot[i, 1] * u1 + rot[i, 2] * u2


@njit(cache=True)
def _points(axes, positions, frames, marker, X, Z):
    """The points of a forward pose: X (m + 4, 3): joints, tip, the tip's three markers; Z (m, 3):
    the joints' axes in the base frame."""
    m = axes.shape[0]
    X[:m + 1] = positions
    for e in range(3):
        for i in range(3):
            X[m + 1 + e, i] = positions[m, i] + marker * frames[m, i, e]
    for k in range(m):
        Z[k, 0], Z[k, 1], Z[k, 2] = _mv3(frames[k], axes[k])


@njit(cache=True)
def _errors(X, m, marker, target_p, target_R, oriented):
    """(position error, orientation error in radians) of the points X: the tip (row m) and its
    frame, read from its markers (rows m + 1..m + 3, ``marker`` from it), as ``pose_error``."""
    err = dist3v(X, m, target_p)
    if not oriented:
        return err, 0.0
    trace = 0.0
    for e in range(3):
        for i in range(3):
            trace += (X[m + 1 + e, i] - X[m, i]) * target_R[i, e]
    return err, np.arccos(min(1.0, max(-1.0, 0.5 * (trace / marker - 1.0))))


@njit(cache=True)
def _hang(X, Z, marker, target_p, target_R, oriented, m, Y, ZY):
    """The start of the forward stage: Y, ZY = the points X and axes Z moved rigidly so that the
    tip (row m, its frame given by its markers) lies on the target: for a pose target its frame on
    the target frame; for a position target the arm turned about the target to lie nearest X (the
    best rotation of the joints' offsets from the tip onto their offsets from the target)."""
    E = np.empty((3, 3))
    if oriented:
        # E = target_R @ tip_R^T, tip_R's columns the markers' offsets from the tip over ``marker``
        for i in range(3):
            for j in range(3):
                E[i, j] = (target_R[i, 0] * (X[m + 1, j] - X[m, j]) + target_R[i, 1] * (X[m + 2, j] - X[m, j])
                           + target_R[i, 2] * (X[m + 3, j] - X[m, j])) / marker
    else:
        H = np.zeros((3, 3))
        for j in range(m):
            for i in range(3):
                for k in range(3):
                    H[i, k] += (X[j, i] - X[m, i]) * (X[j, k] - target_p[k])
        U, _, Vt = np.linalg.svd(H)
        if np.linalg.det(U) * np.linalg.det(Vt) < 0.0:
            U[:, 2] = -U[:, 2]
        mm_to(Vt.T, U.T, E)
    _move(X, 0, Y.shape[0], E, X[m], Y, target_p)
    _move(Z, 0, m, E, _ZERO, ZY, _ZERO)


@njit(cache=True, inline="always")
def _ccd_sweep(axes, origins, tip, lower, upper, target_p, target_R, oriented, q, positions, frames, scale):
    """CCD's step: each joint from the tip inwards turned to its best angle for the target."""
    m = axes.shape[0]
    w = scale * scale  # orientation weight: radians as lengths of the reach
    for k in range(m - 1, -1, -1):
        a = _mv3(frames[k], axes[k])
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
            M = _mm(frames[m], target_R.T)
            Ma = _mv3(M, a)
            A += w * 0.5 * (M[0, 0] + M[1, 1] + M[2, 2] - (a[0] * Ma[0] + a[1] * Ma[1] + a[2] * Ma[2]))
            B += w * 0.5 * (a[0] * (M[1, 2] - M[2, 1]) + a[1] * (M[2, 0] - M[0, 2]) + a[2] * (M[0, 1] - M[1, 0]))
        if A == 0.0 and B == 0.0:
            continue
        # the best turn t about the joint's axis from where it is now
        t = _best_angle(A, B, lower[k] - q[k], upper[k] - q[k], 0.0)
        if t != 0.0:
            q[k] += t
            forward_arm(axes, origins, tip, q, positions, frames)


@njit(cache=True, inline="always")
def _dls_step(axes, origins, tip, lower, upper, target_p, target_R, oriented, q, positions, frames, scale, damping,
              max_angle_step, J, e):
    """The damped least squares step, into ``q`` and its forward pose; ``J`` (rows, m) and ``e``
    (rows,) are scratch, rows 6 for a pose target, else 3."""
    m = axes.shape[0]
    rows = J.shape[0]
    for k in range(m):
        a = _mv3(frames[k], axes[k])
        r = positions[m] - positions[k]
        J[0, k], J[1, k], J[2, k] = _cross(a, r)
        if oriented:
            J[3, k], J[4, k], J[5, k] = _mul(scale, a)
    for c in range(3):
        e[c] = target_p[c] - positions[m, c]
    if oriented:
        rv = _rotation_vector(_mm(target_R, frames[m].T))
        for c in range(3):
            e[3 + c] = scale * rv[c]
    G = J @ J.T
    for r in range(rows):
        G[r, r] += damping * damping
    dq = J.T @ np.linalg.solve(G, e)
    big = np.max(np.abs(dq))
    if big > max_angle_step:
        dq *= max_angle_step / big
    q[:] = np.minimum(np.maximum(q + dq, lower), upper)
    forward_arm(axes, origins, tip, q, positions, frames)


#: ``method`` codes of ``arm_run``.
FABRIK, CCD, DLS = 0, 1, 2


@njit(cache=True, inline="always")
def arm_run(method, axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter, scale,
            window, marker, damping, max_angle_step):
    """One attempt of ``method`` (``FABRIK``, ``CCD`` or ``DLS``) from the angles ``q0`` (module
    docstring).

    ``target_R`` (3, 3) is read when ``oriented``; ``tol`` in model units, ``otol`` in radians;
    ``scale`` (the reach) weighs a radian of orientation error as a length; ``window`` the
    iterations without progress after which the attempt stops; ``marker`` (FABRIK: model units) is
    the distance of the orientation markers from the tip; ``damping`` and ``max_angle_step`` are
    DLS's. Returns (q, positions, frames, iterations, error, orientation error, status). Inlined
    into each method's entry, where ``method`` is a constant the compiler folds."""
    m = axes.shape[0]
    q = np.minimum(np.maximum(q0.copy(), lower), upper)
    positions = np.empty((m + 1, 3))
    frames = np.empty((m + 1, 3, 3))
    forward_arm(axes, origins, tip, q, positions, frames)
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if err <= tol and oerr <= otol:
        return q, positions, frames, 0, err, oerr, REACHED
    mf = m if method == FABRIK else 0
    n = mf + 4 if mf > 0 else 0
    last = n if oriented else m + 1  # FABRIK: the points the backward stage brings to the forward's
    X = np.empty((n, 3))  # FABRIK: the arm as it is: joints, tip, markers
    Y = np.empty_like(X)  # the forward stage's arm
    Z = np.empty((mf, 3))  # joint axes of X, then of the backward stage's arm
    ZY = np.empty((mf, 3))  # joint axes of Y
    rot = np.empty((3, 3))
    c = np.empty(3)
    rows = 6 if oriented else 3
    J = np.zeros((rows, m if method == DLS else 0))
    e = np.zeros(rows)
    best_q = q.copy()
    best = err + scale * oerr
    ref = best
    since = 0
    it = 0
    if method == FABRIK:
        _points(axes, positions, frames, marker, X, Z)
    while it < max_iter:
        if method == FABRIK:
            # forward stage: the arm hung from the target, each joint from the tip inwards turning
            # the part before it (joints 0..k-1) nearest where it was; the turn t moves q[k] by -t
            _hang(X, Z, marker, target_p, target_R, oriented, m, Y, ZY)
            for k in range(m - 1, 0, -1):
                c[0], c[1], c[2] = Y[k, 0], Y[k, 1], Y[k, 2]
                A, B = _turn_terms(Y, X, 0, k, ZY[k], c)
                if A == 0.0 and B == 0.0:
                    continue
                t = _best_angle(A, B, q[k] - upper[k], q[k] - lower[k], 0.0)
                if t != 0.0:
                    _axis_rotation(ZY[k], t, rot)
                    _move(Y, 0, k, rot, c, Y, c)
                    _move(ZY, 0, k, rot, _ZERO, ZY, _ZERO)
            # backward stage: from the base, each joint turning the part beyond it (joints k+1..,
            # the tip, its markers) nearest where the forward stage put it
            for k in range(m):
                c[0], c[1], c[2] = X[k, 0], X[k, 1], X[k, 2]
                A, B = _turn_terms(X, Y, k + 1, last, Z[k], c)
                if A == 0.0 and B == 0.0:
                    continue
                t = _best_angle(A, B, lower[k] - q[k], upper[k] - q[k], 0.0)
                if t != 0.0:
                    q[k] = min(max(q[k] + t, lower[k]), upper[k])
                    _axis_rotation(Z[k], t, rot)
                    _move(X, k + 1, n, rot, c, X, c)
                    _move(Z, k + 1, m, rot, _ZERO, Z, _ZERO)
        elif method == CCD:
            _ccd_sweep(axes, origins, tip, lower, upper, target_p, target_R, oriented, q, positions, frames, scale)
        else:
            _dls_step(axes, origins, tip, lower, upper, target_p, target_R, oriented, q, positions, frames, scale,
                      damping, max_angle_step, J, e)
        it += 1
        if method == FABRIK:
            # the backward stage moved X and Z with the joints: they are the new pose's (to
            # rounding, cleared every REFRESH iterations and checked on reaching)
            err, oerr = _errors(X, m, marker, target_p, target_R, oriented)
            if (err <= tol and oerr <= otol) or it % REFRESH == 0:
                forward_arm(axes, origins, tip, q, positions, frames)
                err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
                if err <= tol and oerr <= otol:
                    return q, positions, frames, it, err, oerr, REACHED
                _points(axes, positions, frames, marker, X, Z)
        else:
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
    # the best pose's answer: its forward pose, errors and status (the cap, or stalled: out of
    # reach when the target lies farther from the base than the arm reaches)
    forward_arm(axes, origins, tip, best_q, positions, frames)
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if it >= max_iter:
        return best_q, positions, frames, it, err, oerr, MAX_ITERATIONS
    far = dist3v(positions, 0, target_p) > scale
    return best_q, positions, frames, it, err, oerr, (UNREACHABLE if far else STALLED)


@njit(cache=True)
def fabrik_arm(axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter, scale, marker,
               window):
    """One FABRIK attempt on an arm from the angles ``q0``: ``arm_run`` with ``FABRIK``."""
    return arm_run(FABRIK, axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter,
                   scale, window, marker, 0.0, 0.0)


@njit(cache=True)
def ccd_arm(axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter, scale,
            window=NO_PROGRESS_WINDOW):
    """CCD on an arm: ``arm_run`` with ``CCD``."""
    return arm_run(CCD, axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter,
                   scale, window, 0.0, 0.0, 0.0)


@njit(cache=True)
def dls_arm(axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter, scale, damping,
            max_angle_step, window=NO_PROGRESS_WINDOW):
    """Damped least squares on an arm: ``arm_run`` with ``DLS``."""
    return arm_run(DLS, axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter,
                   scale, window, 0.0, damping, max_angle_step)
