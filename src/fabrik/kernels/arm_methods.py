"""FABRIK, CCD and damped least squares on arms of revolute and prismatic joints (``fabrik.Arm``,
robots: offsets between axes, joint limits, pose targets), compiled: one attempt from given joint
values, on one iteration driver (``arm_run``); the methods differ only in the step that moves the
joints. ``fabrik.solvers.arm`` restarts them.

Every kernel takes the arm as an ``ArmModel``, the target and start as an ``ArmTask``, the
stopping rule as a ``Stop`` and the method's settings as an ``ArmSettings``
(``fabrik.kernels.records``). Layout as ``fabrik.kernels.arm`` (``slides[k]``: joint k is
prismatic). Every method moves the
joint values q (so every pose is a pose of the model and every limit holds: values are clipped
into ``[lower, upper]`` after every change, which puts them on a limit exactly, never a rounding
past it) and measures a pose target by the tip's position error (model units) and its
orientation error (the angle of ``R_tip^T R_target``, radians, ``fabrik.kernels.arm.angle_between``);
the orientation counts as ``scale`` model units per radian in the objective, ``scale`` the arm's
reach. A revolute joint leaves the part of the arm beyond it one degree of freedom, a turn about
its axis, and the turn that brings a set of points nearest a set of goals is closed form:
``sum |c + Rot(a, t) (x_j - c) - g_j|^2`` is ``-2 (A cos t + B sin t) + const`` in the angle t,
best at ``atan2(B, A)``, at another turn of it inside a range wider than a turn, or at the better
end of the joint's range (``_best_angle``). A prismatic joint leaves a slide along its axis, and
the slide that brings a set of points nearest their goals is the mean of their offsets along the
axis, clipped into the range (``_best_slide``).

* FABRIK (``fabrik_arm``): the points it moves are the rows of ``forward_arm``: the joints'
  locations, the tip, and, for a pose target, three markers at ``marker`` (model units) from the
  tip along its frame's axes (so that the tip frame's orientation is measured in lengths, as the
  tip's position is). One iteration is FABRIK's two stages with hinges and slides in place of
  ball joints:

  - forward stage (reaching from the target): the arm, as it is, is moved rigidly so that its tip
    lies on the target (a pose target: the tip frame on the target frame; a position target: the
    tip on the target, the arm turned about it to lie nearest where it was, a ball joint at the
    target); then joint by joint from the last to the first, each joint turns (or slides) the part
    of the arm before it (the joints nearer the base) to lie nearest where it was before the stage.
    This is FABRIK's forward stage (each joint moved the least distance that keeps its bone) with
    the bones' directions restricted to what the joint's axis allows; the part before joint 0 (the
    base) ends displaced, as FABRIK's root does;
  - backward stage (reaching from the base): from the fixed base, joint by joint from the first
    to the last, each joint turns (or slides) the part of the arm beyond it (the joints nearer the
    tip, the tip and its markers) to lie nearest where the forward stage put it. The backward
    stage's values are the iteration's answer.

  **Finish**: FABRIK converges linearly, and its last digits come slowly. Once its error (the
  position error over ``scale`` plus the orientation error in radians) is below ``near``, damped
  Newton steps on the joint values take over (``newton_finish``: Levenberg-Marquardt with damping
  ``|e|^2``, which converges quadratically near a solution, joints at a limit held there); if
  they do not reach the target, FABRIK goes on from the best pose they found and tries them again
  once its error has halved.

* CCD (``ccd_arm``): one iteration visits the joints from the tip inwards; each turns to the angle
  that best serves the target for its own axis alone (position and orientation terms are both
  ``A cos t + B sin t + C`` in the joint's angle t), or slides to bring the tip nearest the target;
* DLS (``dls_arm``): the 6 x m Jacobian of the tip (position rows ``a_k x (tip - p_k)`` for a
  revolute joint, ``a_k`` for a prismatic one; orientation rows ``a_k`` (revolute) or 0, times
  ``scale``), ``dq = J^T (J J^T + damping^2 I)^-1 e``, the step clamped to ``max_angle_step`` on
  its largest component (``max_angle_step * scale`` for a slide), q clipped into its limits.

An attempt stops when the target is reached (position within ``tol`` and orientation within
``orientation_tol``, both measured by ``pose_error`` on the pose's ``forward_arm``; for a position
target only the first), when the weighted error ``position + scale * orientation`` has fallen by
less than ``PROGRESS_FRACTION`` of itself over ``window`` iterations (``NO_PROGRESS_WINDOW``, or
less while restarts remain: ``fabrik.solvers.arm.RESTART_WINDOW``; stalled, ``unreachable`` when
the target lies beyond the reach), or at ``max_iter``; it returns the best pose it has seen.
"""

import numpy as np
from numba import njit

from fabrik.kernels.arm import angle_between, forward_arm, pose_error
from fabrik.kernels.arm_ik import _cross, _mm, _mv3
from fabrik.kernels.frames import axis_angle_matrix, mm_to
from fabrik.kernels.obstacles import segment_clearance, segment_segment
from fabrik.kernels.records import ArmScratch
from fabrik.kernels.vec import dist3v
from fabrik.kernels.stopping import MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, STALLED, UNREACHABLE

#: Damped Newton tries per finish (each one ``forward_arm`` and a 6 x 6 solve, and the Jacobian
#: after a kept step): near a solution the error squares every step, so a handful takes 1e-3 to
#: 1e-12; the rest serve steps tried again with more damping.
NEWTON_STEPS = 12
#: The damping of the Newton steps is ``mu |e|^2`` (e normalised: position over the reach,
#: orientation in radians), mu starting at ``NEWTON_MU``, times 16 after a step that does not
#: lower ``|e|``, a quarter after one that does, never below ``NEWTON_MU_MIN``: near a solution the
#: damping vanishes faster than the error (Newton's quadratic convergence), and near a singular
#: pose it keeps the steps short.
NEWTON_MU = 1e-3
NEWTON_MU_MIN = 1e-9
#: Newton tries from the start itself (``near`` = inf: a solve preferring the answer nearest its
#: start), where slow progress near a singular pose is worth more tries than a restart.
START_NEWTON_STEPS = 48
#: The largest step of a joint in one of those steps (radians; a slide: this times ``scale``):
#: short steps, each from a new linearisation, follow the start's branch where one long step
#: would land farther along the arm's redundancy.
NEAREST_MAX_STEP = 0.05
#: The largest step of a joint in one Newton step (radians; a slide: this times ``scale``): longer
#: steps leave the region where the linearisation holds, and would leave the start's branch.
NEWTON_MAX_STEP = 0.5
#: Passes of a Newton step that take a joint the step would carry past a limit, put it on that
#: limit and solve again for the others.
NEWTON_PASSES = 3


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


@njit(cache=True, inline="always")
def _best_slide(X, G, first, stop, a, lo, hi):
    """The slide s along the unit axis a within [lo, hi] minimising ``sum_j |X_j + s a - G_j|^2``
    over rows ``first:stop``: the mean of ``a . (G_j - X_j)``, clipped."""
    total = 0.0
    for j in range(first, stop):
        total += a[0] * (G[j, 0] - X[j, 0]) + a[1] * (G[j, 1] - X[j, 1]) + a[2] * (G[j, 2] - X[j, 2])
    s = total / max(stop - first, 1)
    return min(max(s, lo), hi)


@njit(cache=True, inline="always")
def _rotation_vector(F, G):
    """The rotation vector (axis times angle, radians, in the base frame) of ``G @ F.T``: the turn
    taking the frame F (3, 3) onto G, as a 3-tuple; its angle is ``angle_between(F, G)``."""
    # R = G F^T; its axial vector v = (R32 - R23, R13 - R31, R21 - R12) = 2 sin(angle) axis
    R = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            R[i, j] = G[i, 0] * F[j, 0] + G[i, 1] * F[j, 1] + G[i, 2] * F[j, 2]
    v0 = R[2, 1] - R[1, 2]
    v1 = R[0, 2] - R[2, 0]
    v2 = R[1, 0] - R[0, 1]
    s = np.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    angle = np.arctan2(0.5 * s, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0))
    if s > 1e-6:
        f = angle / s
        return (v0 * f, v1 * f, v2 * f)
    if angle < 1.0:
        return (0.5 * v0, 0.5 * v1, 0.5 * v2)  # sin(angle) = angle to rounding
    # near half a turn: the axis from the diagonal
    k = 0
    if R[1, 1] > R[k, k]:
        k = 1
    if R[2, 2] > R[k, k]:
        k = 2
    x0, x1, x2 = R[0, k], R[1, k], R[2, k]
    if k == 0:
        x0 += 1.0
    elif k == 1:
        x1 += 1.0
    else:
        x2 += 1.0
    n = np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    return (x0 * angle / n, x1 * angle / n, x2 * angle / n)


#: Iterations between recomputations of the points from the joint values (``forward_arm``); in
#: between, the stages' moves carry them, exactly but for rounding.
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


@njit(cache=True, inline="always")
def _shift(X, first, stop, a, s):
    """X[j] += s a for the rows ``first:stop``."""
    for j in range(first, stop):
        for i in range(3):
            X[j, i] += s * a[i]


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
def _errors(X, m, marker, target_p, target_R, oriented, T):
    """(position error, orientation error in radians) of the points X: the tip (row m) and its
    frame, read from its markers (rows m + 1..m + 3, ``marker`` from it) into ``T`` (3, 3), as
    ``pose_error``."""
    err = dist3v(X, m, target_p)
    if not oriented:
        return err, 0.0
    for e in range(3):
        for i in range(3):
            T[i, e] = (X[m + 1 + e, i] - X[m, i]) / marker
    return err, angle_between(T, target_R)


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
def _set(q, k, value, lower, upper):
    """q[k] <- value clipped into [lower[k], upper[k]] (on a limit exactly when past it)."""
    q[k] = min(max(value, lower[k]), upper[k])


@njit(cache=True, inline="always")
def _ccd_sweep(model, task, q, positions, frames, scale):
    """CCD's step: each joint from the tip inwards turned (or slid) to its best value for the target
    (``ArmModel``, ``ArmTask``; ``q`` and its forward pose ``positions``, ``frames`` updated)."""
    axes, origins, tip, slides, lower, upper = model
    target_p, target_R, oriented = task.target, task.rotation, task.oriented
    m = axes.shape[0]
    w = scale * scale  # orientation weight: radians as lengths of the reach
    for k in range(m - 1, -1, -1):
        a = _mv3(frames[k], axes[k])
        if slides[k]:
            # position only: the slide bringing the tip nearest the target
            s = 0.0
            for i in range(3):
                s += a[i] * (target_p[i] - positions[m, i])
            s = min(max(s, lower[k] - q[k]), upper[k] - q[k])
            if s != 0.0:
                _set(q, k, q[k] + s, lower, upper)
                forward_arm(axes, origins, tip, slides, q, positions, frames)
            continue
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
            _set(q, k, q[k] + t, lower, upper)
            forward_arm(axes, origins, tip, slides, q, positions, frames)


@njit(cache=True, inline="always")
def _jacobian(axes, slides, positions, frames, oriented, orient_weight, pos_scale, J):
    """J (3 or 6, m): the tip's velocity per joint velocity, its position rows divided by
    ``pos_scale`` and its orientation rows times ``orient_weight``; a prismatic joint's column is
    per ``pos_scale`` model units of slide (position rows ``a``, orientation rows 0)."""
    m = axes.shape[0]
    for k in range(m):
        a = _mv3(frames[k], axes[k])
        if slides[k]:
            J[0, k], J[1, k], J[2, k] = a[0], a[1], a[2]
            if oriented:
                J[3, k], J[4, k], J[5, k] = 0.0, 0.0, 0.0
            continue
        r = (positions[m, 0] - positions[k, 0], positions[m, 1] - positions[k, 1], positions[m, 2] - positions[k, 2])
        c = _cross(a, r)
        J[0, k], J[1, k], J[2, k] = c[0] / pos_scale, c[1] / pos_scale, c[2] / pos_scale
        if oriented:
            J[3, k], J[4, k], J[5, k] = orient_weight * a[0], orient_weight * a[1], orient_weight * a[2]


@njit(cache=True, inline="always")
def _residual(positions, frames, target_p, target_R, oriented, orient_weight, pos_scale, e):
    """e (3 or 6,): the target's offset from the tip over ``pos_scale``, then the rotation vector
    from the tip frame to the target's times ``orient_weight``."""
    m = positions.shape[0] - 1
    for c in range(3):
        e[c] = (target_p[c] - positions[m, c]) / pos_scale
    if oriented:
        rv = _rotation_vector(frames[m], target_R)
        for c in range(3):
            e[3 + c] = orient_weight * rv[c]


@njit(cache=True, inline="always")
def _damped_solve(J, w, damping2, e, G, y, dq):
    """dq = W J^T (J W J^T + damping2 I)^-1 e, W = diag(w) (m,) >= 0: the step of least
    ``sum dq_k^2 / w_k`` (a joint of weight 0 held still); ``G`` (rows, rows) and ``y`` (rows,)
    scratch; a Cholesky solve written out (rows <= 6)."""
    rows, m = J.shape
    for r in range(rows):
        for c in range(r + 1):
            total = 0.0
            for k in range(m):
                total += w[k] * J[r, k] * J[c, k]
            G[r, c] = total
        G[r, r] += damping2
    # G = L L^T in place (lower triangle), then L L^T y = e
    for c in range(rows):
        d = G[c, c]
        for k in range(c):
            d -= G[c, k] * G[c, k]
        d = np.sqrt(max(d, 1e-300))
        G[c, c] = d
        for r in range(c + 1, rows):
            total = G[r, c]
            for k in range(c):
                total -= G[r, k] * G[c, k]
            G[r, c] = total / d
    for r in range(rows):
        total = e[r]
        for k in range(r):
            total -= G[r, k] * y[k]
        y[r] = total / G[r, r]
    for r in range(rows - 1, -1, -1):
        total = y[r]
        for k in range(r + 1, rows):
            total -= G[k, r] * y[k]
        y[r] = total / G[r, r]
    for k in range(m):
        total = 0.0
        for r in range(rows):
            total += J[r, k] * y[r]
        dq[k] = w[k] * total


@njit(cache=True)
def newton_finish(model, task, stop, scale, steps, max_step, barrier, q, positions, frames, work, col=None):
    """Damped Newton (Levenberg-Marquardt) steps on the joint values from ``q`` (m,), whose forward
    pose ``positions``, ``frames`` is given, towards ``task``'s target (``ArmModel``, ``ArmTask``;
    its ``start`` is not read): each step solves ``(J J^T + mu |e|^2 I) y = e``,
    ``dq = J^T y`` on the normalised error e (position over ``scale``, orientation in radians) and
    Jacobian (slides per ``scale``), at most ``max_step`` on its largest component; a joint the
    step would carry past a limit is put on the limit and the step solved again for the others
    (``NEWTON_PASSES``). A step is kept only when it lowers ``|e|`` (then mu falls, to
    ``NEWTON_MU_MIN`` at least; it starts at ``NEWTON_MU``); one that does not is tried again with
    mu 16 times larger. The steps end on reaching the target (``stop``'s ``tol`` and
    ``orientation_tol`` by ``pose_error``; its ``max_iter`` is not read), when mu passes 1e6, or
    after ``steps`` tries. ``q``, ``positions``, ``frames`` end at the best pose; returns (position
    error, orientation error, reached, steps kept). ``work``: scratch (``ArmScratch``).

    ``barrier``: a joint the step would take towards its nearer limit counts in the step's least
    norm with a weight that falls from 1 to 0 as it nears that limit (the gradient of Chan and
    Dubey's joint-limit measure), so that a redundant arm turns its other joints instead of
    running into the limit.

    ``col``: None, or obstacles and self-collision (``arm_links_clear``): a step whose pose does not
    keep the links clear is not kept (as one that does not lower ``|e|``)."""
    axes, origins, tip, slides, lower, upper = model
    target_p, target_R, oriented = task.target, task.rotation, task.oriented
    tol, otol = stop.tol, stop.orientation_tol
    J, e, G, y, dq, weights, trial, trial_positions, trial_frames = work
    m = axes.shape[0]
    rows = J.shape[0]
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if err <= tol and oerr <= otol:
        return err, oerr, True, 0
    _residual(positions, frames, target_p, target_R, oriented, 1.0, scale, e)
    cost = 0.0
    for r in range(rows):
        cost += e[r] * e[r]
    kept = 0
    mu = NEWTON_MU
    fresh = False  # whether J is the Jacobian of q
    for _ in range(steps):
        if not fresh:
            _jacobian(axes, slides, positions, frames, oriented, 1.0, scale, J)
            fresh = True
        _residual(positions, frames, target_p, target_R, oriented, 1.0, scale, e)
        damping2 = mu * cost + 1e-24
        for k in range(m):
            weights[k] = 1.0
            trial[k] = q[k]
        _damped_solve(J, weights, damping2, e, G, y, dq)
        # a joint the step takes towards its nearer limit is weighted down by the limits' barrier
        # (its share of the step falls as it nears the limit: the redundancy turns the others)
        weighted = False
        for k in range(m if barrier else 0):
            lo, hi = lower[k], upper[k]
            if np.isfinite(lo) and np.isfinite(hi) and hi > lo and dq[k] * (2.0 * q[k] - lo - hi) > 0.0:
                unit = scale if slides[k] else 1.0
                room = 4.0 * (hi - q[k]) ** 2 * (q[k] - lo) ** 2
                # |dH/dq| of H = sum (hi - lo)^2 / (4 (hi - q)(q - lo)) (Chan & Dubey 1995), per unit
                weights[k] = room / (room + unit * (hi - lo) ** 2 * abs(2.0 * q[k] - lo - hi))
                weighted = True
        for _pass in range(NEWTON_PASSES):
            if weighted or _pass > 0:
                _damped_solve(J, weights, damping2, e, G, y, dq)
            big = 0.0
            for k in range(m):
                big = max(big, abs(dq[k]))
            shrink = max_step / big if big > max_step else 1.0
            held = False
            for k in range(m):
                if weights[k] == 0.0:
                    continue
                unit = scale if slides[k] else 1.0
                value = q[k] + shrink * dq[k] * unit
                if value < lower[k] or value > upper[k]:
                    # on the limit, and solved again without it: its part of the step taken out of e
                    bound = lower[k] if value < lower[k] else upper[k]
                    moved = (bound - q[k]) / unit
                    for r in range(rows):
                        e[r] -= J[r, k] * moved
                    trial[k] = bound
                    weights[k] = 0.0
                    held = True
            if not held or _pass == NEWTON_PASSES - 1:
                for k in range(m):
                    if weights[k] != 0.0:
                        unit = scale if slides[k] else 1.0
                        _set(trial, k, q[k] + shrink * dq[k] * unit, lower, upper)
                break
        forward_arm(axes, origins, tip, slides, trial, trial_positions, trial_frames)
        _residual(trial_positions, trial_frames, target_p, target_R, oriented, 1.0, scale, e)
        new_cost = 0.0
        for r in range(rows):
            new_cost += e[r] * e[r]
        if col is not None:
            if not arm_links_clear(trial_positions, 0, col):
                new_cost = np.inf  # into an obstacle (or the arm itself): not kept
        if not new_cost < cost:
            # the linearisation overshot (near a singularity, or far): damp harder and try again
            mu *= 16.0
            if mu > 1e6:
                break
            continue
        mu = max(0.25 * mu, NEWTON_MU_MIN)
        cost = new_cost
        kept += 1
        fresh = False
        q[:] = trial
        positions[:] = trial_positions
        frames[:] = trial_frames
        err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
        if err <= tol and oerr <= otol:
            return err, oerr, True, kept
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    return err, oerr, False, kept


@njit(cache=True, inline="always")
def _dls_step(model, task, settings, q, positions, frames, work):
    """The damped least squares step (``settings``' ``scale``, ``damping``, ``max_angle_step``),
    into ``q`` and its forward pose; ``work`` is scratch (``ArmScratch``, its ``weights`` all 1)."""
    axes, origins, tip, slides, lower, upper = model
    target_p, target_R, oriented = task.target, task.rotation, task.oriented
    scale, damping, max_angle_step = settings.scale, settings.damping, settings.max_angle_step
    J, e, G, y, dq, weights = work.J, work.e, work.G, work.y, work.dq, work.weights
    m = axes.shape[0]
    # in model units: position rows as they are, orientation rows times scale; slides per unit
    _jacobian(axes, slides, positions, frames, oriented, scale, 1.0, J)
    _residual(positions, frames, target_p, target_R, oriented, scale, 1.0, e)
    _damped_solve(J, weights, damping * damping, e, G, y, dq)
    big = 0.0
    for k in range(m):
        big = max(big, abs(dq[k]) / (scale if slides[k] else 1.0))
    shrink = max_angle_step / big if big > max_angle_step else 1.0
    for k in range(m):
        _set(q, k, q[k] + shrink * dq[k], lower, upper)
    forward_arm(axes, origins, tip, slides, q, positions, frames)


#: ``method`` codes of ``arm_run``.
FABRIK, CCD, DLS = 0, 1, 2

#: Halvings of a backward-stage move that would carry a link into an obstacle.
CLEAR_HALVINGS = 12


@njit(cache=True)
def arm_links_clear(X, first, col):
    """True when the links of the pose ``X`` (rows 0..m: the joints and the tip) from link
    ``first`` on (link i joins rows i and i + 1) clear the obstacles by ``margin`` and, with a
    radius, keep ``2 radius + margin`` from every link before ``first`` they are paired with
    (``col`` = (obstacles, pairs (m, m) bool, radius, margin); the links from ``first`` on move
    together, so pairs among them are not checked)."""
    obs, pairs, radius, margin = col
    m = pairs.shape[0]
    for i in range(first, m):
        if segment_clearance(obs, X[i, 0], X[i, 1], X[i, 2], X[i + 1, 0], X[i + 1, 1], X[i + 1, 2], 0.0) < margin:
            return False
        if radius > 0.0:
            for j in range(first if first > 0 else m):
                if j != i and pairs[i, j] and segment_segment(
                        X[i, 0], X[i, 1], X[i, 2], X[i + 1, 0], X[i + 1, 1], X[i + 1, 2],
                        X[j, 0], X[j, 1], X[j, 2], X[j + 1, 0], X[j + 1, 1], X[j + 1, 2]) < 2.0 * radius + margin:
                    return False
    return True


@njit(cache=True)
def _clear_part(X, saved, k, n, m, slide, axis, c, t, rot, col):
    """The largest part (1, else found by ``CLEAR_HALVINGS`` halvings; 0 when none) of the move t
    of joint k (a turn about ``axis`` through c, or a slide along it) after which the links from k
    on stay clear (``arm_links_clear``); ``X`` is left as it was, ``saved`` is scratch."""
    saved[k + 1:n] = X[k + 1:n]
    lo, hi, part = 0.0, 1.0, 1.0
    for step in range(CLEAR_HALVINGS + 1):
        if slide:
            _shift(X, k + 1, n, axis, part * t)
        else:
            axis_angle_matrix(rot, axis[0], axis[1], axis[2], part * t)
            _move(X, k + 1, n, rot, c, X, c)
        clear = arm_links_clear(X, k, col)
        X[k + 1:n] = saved[k + 1:n]
        if step == 0:
            if clear:
                return 1.0
            part = 0.5
            continue
        if clear:
            lo = part
        else:
            hi = part
        part = 0.5 * (lo + hi)
    return lo


@njit(cache=True, inline="always")
def arm_run(method, model, task, stop, settings, col=None):
    """One attempt of ``method`` (``FABRIK``, ``CCD`` or ``DLS``) on the arm ``model``
    (``fabrik.kernels.records.ArmModel``) from ``task.start`` towards its target (``ArmTask``),
    stopping by ``stop`` (``Stop``: ``tol`` in model units, ``orientation_tol`` in radians,
    ``max_iter``), with ``settings`` (``ArmSettings``; module docstring).

    ``settings.scale`` (the reach) weighs a radian of orientation error as a length; ``window`` the
    iterations without progress after which the attempt stops; ``marker`` (FABRIK: model units) is
    the distance of the orientation markers from the tip; ``damping`` and ``max_angle_step`` are
    DLS's; ``near`` (FABRIK) the error (position over ``scale`` plus orientation in radians) below
    which Newton steps finish the solve (0: never; inf: from the start, in steps of at most
    ``NEAREST_MAX_STEP``, with the limits' ``barrier`` when asked). Returns (q, positions,
    frames, iterations, error, orientation error, status, Newton steps kept). Inlined into each
    method's entry, where ``method`` is a constant the compiler folds.

    ``col`` (FABRIK only): None, or (obstacles (K, 17), pairs (m, m) bool, radius, margin): the
    backward stage turns (or slides) each joint by the largest part of its move that keeps the
    links it moves clear of the obstacles and of the links kept apart from them
    (``arm_links_clear``, ``_clear_part``), and the Newton finish keeps only clear steps; from a
    clear start every pose of the attempt is clear."""
    axes, origins, tip, slides, lower, upper = model
    target_p, target_R, oriented = task.target, task.rotation, task.oriented
    tol, otol, max_iter = stop.tol, stop.orientation_tol, stop.max_iter
    scale, window, marker, near, barrier = settings.scale, settings.window, settings.marker, settings.near, \
        settings.barrier
    m = axes.shape[0]
    q = np.minimum(np.maximum(task.start.copy(), lower), upper)
    positions = np.empty((m + 1, 3))
    frames = np.empty((m + 1, 3, 3))
    forward_arm(axes, origins, tip, slides, q, positions, frames)
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if err <= tol and oerr <= otol:
        return q, positions, frames, 0, err, oerr, REACHED, 0
    mf = m if method == FABRIK else 0
    n = mf + 4 if mf > 0 else 0
    last = n if oriented else m + 1  # FABRIK: the points the backward stage brings to the forward's
    X = np.empty((n, 3))  # FABRIK: the arm as it is: joints, tip, markers
    Y = np.empty_like(X)  # the forward stage's arm
    Z = np.empty((mf, 3))  # joint axes of X, then of the backward stage's arm
    ZY = np.empty((mf, 3))  # joint axes of Y
    T = np.empty((3, 3))
    rot = np.empty((3, 3))
    c = np.empty(3)
    rows = 6 if oriented else 3
    work = ArmScratch(np.zeros((rows, m)), np.zeros(rows), np.zeros((rows, rows)), np.zeros(rows), np.zeros(m),
                      np.ones(m), np.empty(m), np.empty_like(positions), np.empty_like(frames))
    if col is not None:
        saved = np.empty_like(X)
    best_q = q.copy()
    best = err + scale * oerr
    ref = best
    since = 0
    it = 0
    newton = 0
    if method == FABRIK:
        if best < near * scale:
            start = near == np.inf  # a solve preferring the answer nearest its start
            err, oerr, done, kept = newton_finish(model, task, stop, scale,
                                                  START_NEWTON_STEPS if start else NEWTON_STEPS,
                                                  NEAREST_MAX_STEP if start else NEWTON_MAX_STEP, barrier and start,
                                                  q, positions, frames, work, col)
            newton += kept
            if done:
                return q, positions, frames, 0, err, oerr, REACHED, newton
            near = 0.5 * min(near * scale, err + scale * oerr) / scale
            if err + scale * oerr < best:
                best = err + scale * oerr
                best_q[:] = q
                ref = best
        _points(axes, positions, frames, marker, X, Z)
    while it < max_iter:
        if method == FABRIK:
            # forward stage: the arm hung from the target, each joint from the tip inwards turning
            # (sliding) the part before it nearest where it was: joints 0..k-1 about a hinge
            # through joint k, joints 0..k along a slide; the move t changes q[k] by -t
            _hang(X, Z, marker, target_p, target_R, oriented, m, Y, ZY)
            for k in range(m - 1, -1, -1):
                if slides[k]:
                    t = _best_slide(Y, X, 0, k + 1, ZY[k], q[k] - upper[k], q[k] - lower[k])
                    if t != 0.0:
                        _shift(Y, 0, k + 1, ZY[k], t)
                    continue
                c[0], c[1], c[2] = Y[k, 0], Y[k, 1], Y[k, 2]
                A, B = _turn_terms(Y, X, 0, k, ZY[k], c)
                if A == 0.0 and B == 0.0:
                    continue
                t = _best_angle(A, B, q[k] - upper[k], q[k] - lower[k], 0.0)
                if t != 0.0:
                    axis_angle_matrix(rot, ZY[k, 0], ZY[k, 1], ZY[k, 2], t)
                    _move(Y, 0, k, rot, c, Y, c)
                    _move(ZY, 0, k, rot, _ZERO, ZY, _ZERO)
            # backward stage: from the base, each joint turning (sliding) the part beyond it
            # (joints k+1.., the tip, its markers) nearest where the forward stage put it
            for k in range(m):
                if slides[k]:
                    t = _best_slide(X, Y, k + 1, last, Z[k], lower[k] - q[k], upper[k] - q[k])
                    if col is not None:
                        if t != 0.0:
                            t *= _clear_part(X, saved, k, n, m, True, Z[k], c, t, rot, col)
                    if t != 0.0:
                        _set(q, k, q[k] + t, lower, upper)
                        _shift(X, k + 1, n, Z[k], t)
                    continue
                c[0], c[1], c[2] = X[k, 0], X[k, 1], X[k, 2]
                A, B = _turn_terms(X, Y, k + 1, last, Z[k], c)
                if A == 0.0 and B == 0.0:
                    continue
                t = _best_angle(A, B, lower[k] - q[k], upper[k] - q[k], 0.0)
                if col is not None:
                    if t != 0.0:
                        t *= _clear_part(X, saved, k, n, m, False, Z[k], c, t, rot, col)
                if t != 0.0:
                    _set(q, k, q[k] + t, lower, upper)
                    axis_angle_matrix(rot, Z[k, 0], Z[k, 1], Z[k, 2], t)
                    _move(X, k + 1, n, rot, c, X, c)
                    _move(Z, k + 1, m, rot, _ZERO, Z, _ZERO)
        elif method == CCD:
            _ccd_sweep(model, task, q, positions, frames, scale)
        else:
            _dls_step(model, task, settings, q, positions, frames, work)
        it += 1
        if method == FABRIK:
            # the backward stage moved X and Z with the joints: they are the new pose's (to
            # rounding, cleared every REFRESH iterations and checked on reaching or finishing)
            err, oerr = _errors(X, m, marker, target_p, target_R, oriented, T)
            finish = err + scale * oerr < near * scale
            if (err <= tol and oerr <= otol) or finish or it % REFRESH == 0:
                forward_arm(axes, origins, tip, slides, q, positions, frames)
                err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
                if err <= tol and oerr <= otol:
                    return q, positions, frames, it, err, oerr, REACHED, newton
                if finish:
                    err, oerr, done, kept = newton_finish(model, task, stop, scale, NEWTON_STEPS, NEWTON_MAX_STEP,
                                                          False, q, positions, frames, work, col)
                    newton += kept
                    if done:
                        return q, positions, frames, it, err, oerr, REACHED, newton
                    # not there yet: FABRIK goes on from the steps' best pose (kept as the best
                    # when it is), and tries them again once its error has halved
                    near = 0.5 * min(near * scale, err + scale * oerr) / scale
                    if err + scale * oerr < best:
                        best = err + scale * oerr
                        best_q[:] = q
                _points(axes, positions, frames, marker, X, Z)
        else:
            err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
            if err <= tol and oerr <= otol:
                return q, positions, frames, it, err, oerr, REACHED, 0
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
    forward_arm(axes, origins, tip, slides, best_q, positions, frames)
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if err <= tol and oerr <= otol:
        return best_q, positions, frames, it, err, oerr, REACHED, newton
    if it >= max_iter:
        return best_q, positions, frames, it, err, oerr, MAX_ITERATIONS, newton
    far = dist3v(positions, 0, target_p) > scale
    return best_q, positions, frames, it, err, oerr, (UNREACHABLE if far else STALLED), newton


@njit(cache=True)
def fabrik_arm(model, task, stop, settings, col=None):
    """One FABRIK attempt on an arm (``ArmModel``) from ``task.start`` (``ArmTask``): ``arm_run``
    with ``FABRIK``, Newton steps finishing it below ``settings.near`` (``ArmSettings``: ``scale``,
    ``window``, ``marker``, ``near``, ``barrier``); ``col`` obstacles and self-collision
    (``arm_run``), or None."""
    return arm_run(FABRIK, model, task, stop, settings, col)


@njit(cache=True)
def ccd_arm(model, task, stop, settings):
    """CCD on an arm: ``arm_run`` with ``CCD`` (``settings``: ``ArmSettings``' ``scale`` and ``window``)."""
    return arm_run(CCD, model, task, stop, settings)


@njit(cache=True)
def dls_arm(model, task, stop, settings):
    """Damped least squares on an arm: ``arm_run`` with ``DLS`` (``settings``: ``ArmSettings``'
    ``scale``, ``window``, ``damping``, ``max_angle_step``)."""
    return arm_run(DLS, model, task, stop, settings)
