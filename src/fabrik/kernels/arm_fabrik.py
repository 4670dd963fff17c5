"""FABRIK on any serial arm of revolute joints (robots: offsets between axes, joint limits), with
the links' frames as its points, compiled.

Layout as ``fabrik.kernels.arm``: link k is the moving frame ``T_k = T_{k-1} @ origins[k] @
Rot(axes[k], q[k])`` (``T_{-1}`` the fixed base), the tip ``T_{m-1} @ tip``. FABRIK's points
become link poses and its "move the joint to the line towards its old place, at the bone's
length" becomes "turn the joint to the angle that brings the neighbouring link nearest its old
pose": a revolute joint leaves its link one degree of freedom, and the pose nearest another, in
the metric ``|t - t'|^2 + s^2 |R - R'|_F^2 / 2`` (``s`` the arm's reach, so that a radian weighs
as a reach), is ``A cos t + B sin t + C`` in the angle: its best angle is ``atan2(B, A)``, or the
nearer end of the joint's range.

One iteration:

* forward stage, from the tip inwards: the last link is put where the target wants it (a pose
  target: ``target @ tip^-1``; a position target: the link moved by the smallest translation
  that puts the tip on the target); each joint k then chooses the angle that puts link k - 1
  (hung from link k's new pose through the joint) nearest its old pose;
* backward stage, from the base outwards: each joint chooses the angle that puts its link (hung
  from the new pose of the link before) nearest where the forward stage put it. The backward
  stage gives the angles: every pose is a pose of the model, every limit holds.

Stops as the other arm methods (``fabrik.kernels.arm_methods``): reached (position within
``tol``, orientation within ``otol``), no progress over ``NO_PROGRESS_WINDOW`` iterations
(stalled, or unreachable beyond the reach), the cap; the best pose seen is returned.
"""

import numpy as np
from numba import njit

from fabrik.kernels.arm import _axis_rotation, forward_arm
from fabrik.kernels.arm_methods import _finish, pose_error
from fabrik.kernels.stopping import NO_PROGRESS_WINDOW, PROGRESS_FRACTION, REACHED


@njit(cache=True)
def _best_turn(AR, At, axis, BR, Bt, goalR, goalt, w, lo, hi, current):
    """The angle t in [lo, hi] putting the pose ``[AR | At] Rot(axis, t) [BR | Bt]`` nearest the goal
    pose (position distance squared plus ``w`` times half the squared Frobenius distance of the
    rotations); unwrapped near ``current`` when unlimited."""
    # rotation part: maximise tr(goalR^T AR Rot(t) BR) = tr(Rot(t) M), M = BR goalR^T AR
    M = BR @ goalR.T @ AR
    a0, a1, a2 = axis[0], axis[1], axis[2]
    Ma = M @ axis
    A = w * (M[0, 0] + M[1, 1] + M[2, 2] - (a0 * Ma[0] + a1 * Ma[1] + a2 * Ma[2]))
    B = w * (a0 * (M[1, 2] - M[2, 1]) + a1 * (M[2, 0] - M[0, 2]) + a2 * (M[0, 1] - M[1, 0]))
    # position part: maximise (goalt - At) . AR Rot(t) Bt  ->  v . Rot(t) u, v = AR^T (goalt - At), u = Bt
    v = AR.T @ (goalt - At)
    u = Bt
    ua = u[0] * a0 + u[1] * a1 + u[2] * a2
    va = v[0] * a0 + v[1] * a1 + v[2] * a2
    A += 2.0 * ((v[0] - va * a0) * (u[0] - ua * a0) + (v[1] - va * a1) * (u[1] - ua * a1)
                + (v[2] - va * a2) * (u[2] - ua * a2))
    B += 2.0 * (a0 * (u[1] * v[2] - u[2] * v[1]) + a1 * (u[2] * v[0] - u[0] * v[2]) + a2 * (u[0] * v[1] - u[1] * v[0]))
    if A == 0.0 and B == 0.0:
        return min(max(current, lo), hi)
    t = np.arctan2(B, A)
    t = current + (t - current) - 2.0 * np.pi * np.round((t - current) / (2.0 * np.pi))
    if lo <= t <= hi:
        return t
    vlo = A * np.cos(lo) + B * np.sin(lo)
    vhi = A * np.cos(hi) + B * np.sin(hi)
    return lo if vlo >= vhi else hi


@njit(cache=True)
def _links(axes, origins, q, LR, Lt):
    """Link poses of angles q: LR (m, 3, 3), Lt (m, 3) (link k = T_k, the moving frame of joint k)."""
    m = axes.shape[0]
    R = np.eye(3)
    t = np.zeros(3)
    turn = np.empty((3, 3))
    for k in range(m):
        t = t + R @ origins[k][:3, 3]
        R = R @ origins[k][:3, :3]
        _axis_rotation(axes[k], q[k], turn)
        R = R @ turn
        LR[k] = R
        Lt[k] = t


@njit(cache=True)
def fabrik_arm(axes, origins, tip, lower, upper, target_p, target_R, oriented, q0, tol, otol, max_iter, scale):
    """FABRIK on an arm (module docstring). Returns (q, positions, frames, iterations, error,
    orientation error, status) as ``fabrik.kernels.arm_methods.ccd_arm``."""
    m = axes.shape[0]
    q = np.minimum(np.maximum(q0.copy(), lower), upper)
    positions = np.empty((m + 1, 3))
    frames = np.empty((m + 1, 3, 3))
    forward_arm(axes, origins, tip, q, positions, frames)
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if err <= tol and oerr <= otol:
        return q, positions, frames, 0, err, oerr, REACHED
    lever = np.empty(m)
    LR = np.empty((m, 3, 3))
    Lt = np.empty((m, 3))
    DR = np.empty((m, 3, 3))  # the forward stage's link poses
    Dt = np.empty((m, 3))
    tipR = tip[:3, :3].copy()
    tipt = tip[:3, 3].copy()
    eye = np.eye(3)
    zero = np.zeros(3)
    turn = np.empty((3, 3))
    best_q = q.copy()
    best = err + scale * oerr
    ref = best
    since = 0
    it = 0
    while it < max_iter:
        _links(axes, origins, q, LR, Lt)
        # a link's turn weighs as the displacement it gives the tip: its lever arm squared, halved
        for k in range(m):
            d = positions[m] - Lt[k]
            lever[k] = 0.5 * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + 1e-12 * scale * scale
        # forward stage: the last link where the target wants it
        if oriented:
            DR[m - 1] = target_R @ tipR.T
            Dt[m - 1] = target_p - DR[m - 1] @ tipt
        else:
            DR[m - 1] = LR[m - 1]
            Dt[m - 1] = Lt[m - 1] + (target_p - (LR[m - 1] @ tipt + Lt[m - 1]))
        for k in range(m - 1, 0, -1):
            # link k-1 = D_k Rot(a_k, -t) origins[k]^-1: the pose of the form A Rot(a, s) B with s = -t
            oR = origins[k][:3, :3]
            ot = origins[k][:3, 3]
            BR = oR.T
            Bt = -(oR.T @ ot)
            s = _best_turn(DR[k], Dt[k], axes[k], BR, Bt, LR[k - 1], Lt[k - 1], lever[k - 1], -upper[k], -lower[k],
                           -q[k])
            _axis_rotation(axes[k], s, turn)
            DR[k - 1] = DR[k] @ turn @ BR
            Dt[k - 1] = DR[k] @ turn @ Bt + Dt[k]
        # backward stage: from the base outwards, each link nearest its forward-stage pose
        R = eye
        t = zero
        for k in range(m):
            AR = R @ origins[k][:3, :3]
            At = t + R @ origins[k][:3, 3]
            q[k] = _best_turn(AR, At, axes[k], eye, zero, DR[k], Dt[k], lever[k], lower[k], upper[k], q[k])
            _axis_rotation(axes[k], q[k], turn)
            R = AR @ turn
            t = At
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
            if since >= NO_PROGRESS_WINDOW:
                break
    return _finish(axes, origins, tip, best_q, target_p, target_R, oriented, it, max_iter, positions, frames, scale)
