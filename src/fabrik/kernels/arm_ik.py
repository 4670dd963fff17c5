"""FABRIK for 7-joint human-like arms (a spherical shoulder, an elbow hinge, a spherical wrist),
compiled: the method of Lamb et al.'s DHM pilot study (Figure 1) on an ``fabrik.Arm``.

Layout as ``fabrik.kernels.arm`` (``axes`` (7, 3), ``origins`` (7, 4, 4), ``tip`` (4, 4)), with
joints 0-2 meeting at the shoulder S, joint 3 the elbow E (its axis perpendicular to the upper
arm) and joints 4-6 meeting at the wrist centre W, which the tip frame carries at the constant
offset ``wrist_in_tip`` (the wrist joints only turn the tip about W).

One solve, for a tip pose target (position ``p``, rotation ``R``):

1. the wrist centre goes where the target's orientation puts it: ``W* = p + R wrist_in_tip``
   (the study's Figure 1, B-C: the last segment placed and aligned with the target);
2. FABRIK on the two-bone chain S-E-W (the study's Figure 1, D-E): each iteration puts W on W*
   and E at the forearm's length towards its old place, then S back on the shoulder and E at the
   upper arm's length towards that. E never leaves the plane through S, W* and its old place, so
   the elbow keeps the swivel it had (the study's hinge-plane rule, minimal joint displacement),
   and the iterations converge to the point of the elbow circle in that half-plane; near a
   straight arm only slowly (hundreds of iterations to 1e-5 of the reach), so that point is taken
   directly (``_elbow_on_circle``; one iteration). The elbow's range bounds how close W can come
   to S; a target outside it ends with the hinge at its bound, pointed at the target;
3. the joint angles from the placed segments (``fabrik.kernels.arm_ik.euler3`` and the
   Paden-Kahan subproblems): the upper arm's frame from its direction and the hinge axis (the
   normal of the plane S-E-W, its sign the one that keeps the elbow in range), the shoulder's three
   angles from that frame, the elbow's from the forearm, the wrist's three from the target
   rotation. Of the two solutions of a spherical joint the one nearer the previous angles is taken
   (angles of joints without limits stay within pi of their previous values: continuous tracking).

A position target (no rotation) runs the same FABRIK on the three-bone chain S-E-W-T (T the tip)
and keeps the hand's roll: the tip frame is the previous one turned by the smallest rotation onto
the new hand direction. Status codes follow ``fabrik.solvers.result.STATUSES``.
"""

import numpy as np
from numba import njit

from fabrik.kernels.arm import _axis_rotation, forward_arm
from fabrik.kernels.stopping import MAX_ITERATIONS, REACHED, STALLED, UNREACHABLE

#: Distances below this fraction of the arm's reach count as zero (a straight arm's plane).
FLAT = 1e-9
#: An elbow this far (fraction of the reach) off the shoulder-wrist line tells its side itself.
BENT = 1e-3


@njit(cache=True, inline="always")
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, inline="always")
def _mm(A, B):
    """A @ B for 3 x 3 matrices, written out (numba's ``@`` goes through BLAS: slow at this size)."""
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
    return C


@njit(cache=True, inline="always")
def _mtm(A, B):
    """A.T @ B for 3 x 3 matrices."""
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[0, i] * B[0, j] + A[1, i] * B[1, j] + A[2, i] * B[2, j]
    return C


@njit(cache=True, inline="always")
def _mmt(A, B):
    """A @ B.T for 3 x 3 matrices."""
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[j, 0] + A[i, 1] * B[j, 1] + A[i, 2] * B[j, 2]
    return C


@njit(cache=True, inline="always")
def _mv(A, v):
    """A @ v for a 3 x 3 matrix and a 3-vector."""
    out = np.empty(3)
    for i in range(3):
        out[i] = A[i, 0] * v[0] + A[i, 1] * v[1] + A[i, 2] * v[2]
    return out


@njit(cache=True, inline="always")
def _mtv(A, v):
    """A.T @ v for a 3 x 3 matrix and a 3-vector."""
    out = np.empty(3)
    for i in range(3):
        out[i] = A[0, i] * v[0] + A[1, i] * v[1] + A[2, i] * v[2]
    return out


@njit(cache=True, inline="always")
def _wrap(angle):
    """``angle`` wrapped into (-pi, pi]."""
    return angle - 2.0 * np.pi * np.ceil((angle - np.pi) / (2.0 * np.pi))


@njit(cache=True)
def sp1(w, p, q):
    """Paden-Kahan subproblem 1: the angle of the rotation about the unit axis ``w`` taking the
    component of ``p`` perpendicular to ``w`` onto that of ``q`` (0 when either is zero)."""
    wp = _dot(w, p)
    wq = _dot(w, q)
    p0, p1, p2 = p[0] - wp * w[0], p[1] - wp * w[1], p[2] - wp * w[2]
    q0, q1, q2 = q[0] - wq * w[0], q[1] - wq * w[1], q[2] - wq * w[2]
    cx = p1 * q2 - p2 * q1
    cy = p2 * q0 - p0 * q2
    cz = p0 * q1 - p1 * q0
    s = w[0] * cx + w[1] * cy + w[2] * cz
    c = p0 * q0 + p1 * q1 + p2 * q2
    if s == 0.0 and c == 0.0:
        return 0.0
    return np.arctan2(s, c)


@njit(cache=True)
def sp2(w1, w2, p, q, out):
    """Paden-Kahan subproblem 2: angles (t1, t2) with ``R(w1, t1) R(w2, t2) p = q`` (unit,
    non-parallel axes through the origin). Writes the two solutions to ``out`` (2, 2) (equal when
    there is one; the nearest approach when there is none) and returns how many exact solutions
    there are (0, 1 or 2)."""
    c12 = _dot(w1, w2)
    x = np.empty(3)
    x[0] = w1[1] * w2[2] - w1[2] * w2[1]
    x[1] = w1[2] * w2[0] - w1[0] * w2[2]
    x[2] = w1[0] * w2[1] - w1[1] * w2[0]
    xx = _dot(x, x)
    den = c12 * c12 - 1.0
    alpha = (c12 * _dot(w2, p) - _dot(w1, q)) / den
    beta = (c12 * _dot(w1, q) - _dot(w2, p)) / den
    g2 = (_dot(p, p) - alpha * alpha - beta * beta - 2.0 * alpha * beta * c12) / xx
    count = 2
    if g2 < 0.0:
        g2 = 0.0
        count = 0
    elif g2 == 0.0:
        count = 1
    gamma = np.sqrt(g2)
    z = np.empty(3)
    for k in range(2):
        g = gamma if k == 0 else -gamma
        for c in range(3):
            z[c] = alpha * w1[c] + beta * w2[c] + g * x[c]
        out[k, 1] = sp1(w2, p, z)
        out[k, 0] = sp1(w1, z, q)
    return count


@njit(cache=True)
def euler3(M, a, b, c, prev, out):
    """The angles (q0, q1, q2) with ``M = R(a, q0) R(b, q1) R(c, q2)`` (unit axes, a and b not
    parallel, nor b and c) nearest ``prev`` (3,) (each difference wrapped into (-pi, pi]); written
    to ``out`` (2, 3): both solutions, the nearer first. Where a and c line up (gimbal lock) q0
    keeps its previous value and q2 takes the rest."""
    mc = _mv(M, c)
    pair = np.empty((2, 2))
    sp2(a, b, c, mc, pair)
    v = np.empty(3)
    # any vector perpendicular to c, for the last angle
    if abs(c[0]) < 0.9:
        v[0], v[1], v[2] = 0.0, -c[2], c[1]
    else:
        v[0], v[1], v[2] = c[2], 0.0, -c[0]
    r0 = np.empty((3, 3))
    r1 = np.empty((3, 3))
    for k in range(2):
        q0 = pair[k, 0]
        q1 = pair[k, 1]
        _axis_rotation(b, q1, r1)
        rb = _mv(r1, c)
        # gimbal lock: R(b, q1) c along a leaves q0 + q2 alone determined
        cr = np.sqrt((a[1] * rb[2] - a[2] * rb[1]) ** 2 + (a[2] * rb[0] - a[0] * rb[2]) ** 2
                     + (a[0] * rb[1] - a[1] * rb[0]) ** 2)
        if cr < 1e-9:
            q0 = prev[0]
        _axis_rotation(a, q0, r0)
        rest = _mtm(_mm(r0, r1), M)
        q2 = sp1(c, v, _mv(rest, v))
        out[k, 0] = prev[0] + _wrap(q0 - prev[0])
        out[k, 1] = prev[1] + _wrap(q1 - prev[1])
        out[k, 2] = prev[2] + _wrap(q2 - prev[2])
    d0 = abs(out[0, 0] - prev[0]) + abs(out[0, 1] - prev[1]) + abs(out[0, 2] - prev[2])
    d1 = abs(out[1, 0] - prev[0]) + abs(out[1, 1] - prev[1]) + abs(out[1, 2] - prev[2])
    if d1 < d0:
        for j in range(3):
            out[0, j], out[1, j] = out[1, j], out[0, j]


@njit(cache=True)
def _pick(sols, lower, upper, first, q):
    """q[first:first + 3] <- the first of the two ``sols`` (2, 3) within the joints' limits (the
    nearer one when both or neither are), the angles clipped into their limits."""
    k = 0
    ok0 = True
    for j in range(3):
        if not (lower[first + j] <= sols[0, j] <= upper[first + j]):
            ok0 = False
    if not ok0:
        ok1 = True
        for j in range(3):
            if not (lower[first + j] <= sols[1, j] <= upper[first + j]):
                ok1 = False
        if ok1:
            k = 1
    for j in range(3):
        q[first + j] = min(max(sols[k, j], lower[first + j]), upper[first + j])


@njit(cache=True)
def _basis(u, w):
    """The orthonormal basis (columns) u, the unit part of w across u, and their cross product."""
    M = np.empty((3, 3))
    t = w - _dot(w, u) * u
    t = t / np.sqrt(_dot(t, t))
    for r in range(3):
        M[r, 0] = u[r]
        M[r, 1] = t[r]
    M[0, 2] = u[1] * t[2] - u[2] * t[1]
    M[1, 2] = u[2] * t[0] - u[0] * t[2]
    M[2, 2] = u[0] * t[1] - u[1] * t[0]
    return M


@njit(cache=True)
def _triad(a1, a2, b1, b2):
    """The rotation taking the unit a1 onto the unit b1 and a2's direction across a1 onto b2's
    across b1 (a1, a2 and b1, b2 at the same angle)."""
    return _mmt(_basis(b1, b2), _basis(a1, a2))


@njit(cache=True)
def _fabrik_points(pts, lengths, goal, tol, max_iter, lo_gap, hi_gap):
    """FABRIK on the chain ``pts`` (k, 3) (root pts[0] fixed) towards ``goal`` for its last
    point, in place. The middle joint of the first two bones keeps the distance from the root to
    the second point within [``lo_gap``, ``hi_gap``] (the elbow's range, as a distance). Returns
    (iterations, error)."""
    k = pts.shape[0]
    last = k - 1
    root = pts[0].copy()
    err = np.sqrt(_dot(pts[last] - goal, pts[last] - goal))
    reach = 0.0
    for i in range(k - 1):
        reach += lengths[i]
    d = goal - root
    dist = np.sqrt(_dot(d, d))
    if dist >= reach and err > tol:
        # out of reach (the paper's first case): the chain stretched straight at the goal
        for i in range(1, k):
            pts[i] = pts[i - 1] + lengths[i - 1] / dist * d
        return 1, np.sqrt(_dot(pts[last] - goal, pts[last] - goal))
    it = 0
    while it < max_iter and err > tol:
        prev = err
        # forward: the last point onto the goal, then inwards
        pts[last] = goal
        for i in range(last - 1, -1, -1):
            d = pts[i] - pts[i + 1]
            r = np.sqrt(_dot(d, d))
            if r > 0.0:
                pts[i] = pts[i + 1] + lengths[i] / r * d
        # backward: the root back, then outwards; the elbow's range bounds |pts[2] - root|
        pts[0] = root
        for i in range(1, k):
            d = pts[i] - pts[i - 1]
            r = np.sqrt(_dot(d, d))
            if r > 0.0:
                pts[i] = pts[i - 1] + lengths[i - 1] / r * d
            if i == 2:
                _hinge_range(pts, root, lengths, lo_gap, hi_gap)
        it += 1
        err = np.sqrt(_dot(pts[last] - goal, pts[last] - goal))
        if err >= prev:
            break  # no progress at all: the elbow's range holds it off the goal
    return it, err


@njit(cache=True)
def _hinge_range(pts, root, lengths, lo_gap, hi_gap):
    """Turn the forearm pts[1] -> pts[2] about the elbow, in the plane root-pts[1]-pts[2], so that
    |pts[2] - root| lies in [lo_gap, hi_gap] (the elbow's flexion range as a distance)."""
    d = pts[2] - root
    r = np.sqrt(_dot(d, d))
    if lo_gap <= r <= hi_gap:
        return
    gap = lo_gap if r < lo_gap else hi_gap
    u = pts[1] - root
    l1 = lengths[0]
    l2 = lengths[1]
    # the angle at the elbow giving |pts[2] - root| = gap, in the plane (u, d)
    cos_e = (l1 * l1 + l2 * l2 - gap * gap) / (2.0 * l1 * l2)
    cos_e = min(1.0, max(-1.0, cos_e))
    uu = u / l1
    side = d - _dot(d, uu) * uu
    s = np.sqrt(_dot(side, side))
    if s <= 0.0:
        return
    side = side / s
    # forearm direction: back along -u turned by the elbow angle towards side
    sin_e = np.sqrt(1.0 - cos_e * cos_e)
    f = -cos_e * uu + sin_e * side
    pts[2] = pts[1] + l2 * f


@njit(cache=True)
def srs_solve(axes, origins, tip, lower, upper, wrist_in_tip, gaps, target_p, target_R, oriented, q_prev, tol, otol,
              max_iter, scale, plane_rule=0):
    """Solve a 7-joint S-R-S arm for a tip target (module docstring).

    ``wrist_in_tip`` (3,): the wrist centre in tip coordinates; ``gaps`` (2,): the range of the
    shoulder-wrist distance the elbow's limits allow (``fabrik.solvers.arm``); ``target_R`` (3, 3)
    is read when ``oriented``; ``q_prev`` (7,) the start (never written); ``tol`` (model units),
    ``otol`` (radians); ``scale`` the arm's reach. Returns (q (7,), positions (8, 3), frames (8, 3, 3)
    (``fabrik.kernels.arm.forward_arm`` of q), iterations, position error, orientation error
    (radians; 0 for a position target), status)."""
    m = 7
    positions = np.empty((m + 1, 3))
    frames = np.empty((m + 1, 3, 3))
    forward_arm(axes, origins, tip, q_prev, positions, frames)
    S = positions[0].copy()
    E0 = positions[3].copy()
    W0 = positions[4].copy()
    T0 = positions[m].copy()
    l1 = np.sqrt(_dot(E0 - S, E0 - S))
    l2 = np.sqrt(_dot(W0 - E0, W0 - E0))
    l3 = np.sqrt(_dot(T0 - W0, T0 - W0))
    t4 = origins[4][:3, 3].copy()
    up = origins[3][:3, 3].copy()
    a3 = _mv(origins[3][:3, :3], axes[3])
    gap_lo = gaps[0]
    gap_hi = gaps[1]

    q = q_prev.copy()
    hinge_prev = _mv(frames[3], axes[3])
    if oriented:
        goal = target_p + _mv(target_R, wrist_in_tip)
        E, W = _elbow_on_circle(S, E0, goal, l1, l2, gap_lo, gap_hi, hinge_prev,
                                _flex_sense(axes, origins, tip, lower, upper, q_prev))
        if plane_rule == 1:
            # the study's hinge plane: through S and W, across the wrist's second axis (joint 6)
            # as the hand now holds it (its previous angle to the hand kept)
            a5 = _mv(target_R, _mtv(frames[m], _mv(frames[5], axes[5])))
            u = W - S
            n = np.cross(a5, u)
            nn = np.sqrt(_dot(n, n))
            if nn > FLAT * scale * scale:
                v = np.cross(n / nn, u / np.sqrt(_dot(u, u)))
                c = S + _dot(E - S, u) / _dot(u, u) * u
                r = np.sqrt(_dot(E - c, E - c))
                E1 = c + r * v
                E2 = c - r * v
                E = E1 if _dot(E1 - E0, E1 - E0) <= _dot(E2 - E0, E2 - E0) else E2
        it = 1
        R_tip = target_R.copy()
    else:
        pts = np.empty((4, 3))
        pts[0] = S
        pts[1] = E0
        pts[2] = W0
        pts[3] = T0
        lengths = np.array([l1, l2, l3])
        it, _ = _fabrik_points(pts, lengths, target_p, tol, max_iter, gap_lo, gap_hi)
        E = pts[1]
        W = pts[2]
        # the hand's roll kept: the previous tip frame turned onto the new hand direction
        old = (T0 - W0) / l3
        new = (pts[3] - W) / l3
        R_tip = _mm(_turn_onto(old, new), frames[m])

    _angles(axes, origins, tip, lower, upper, q_prev, S, E, W, R_tip, hinge_prev, up, t4, a3, scale, q)
    forward_arm(axes, origins, tip, q, positions, frames)
    d = positions[m] - target_p
    err = np.sqrt(_dot(d, d))
    oerr = 0.0
    if oriented:
        rel = _mtm(frames[m], target_R)
        oerr = np.arccos(min(1.0, max(-1.0, 0.5 * (rel[0, 0] + rel[1, 1] + rel[2, 2] - 1.0))))
    if err <= tol and oerr <= otol:
        return q, positions, frames, it, err, oerr, REACHED
    reach = l1 + l2 + (0.0 if oriented else l3)
    wd = (target_p + _mv(target_R, wrist_in_tip)) if oriented else target_p
    far = np.sqrt(_dot(wd - S, wd - S)) > reach
    if it >= max_iter:
        return q, positions, frames, it, err, oerr, MAX_ITERATIONS
    return q, positions, frames, it, err, oerr, (UNREACHABLE if far else STALLED)


@njit(cache=True)
def _elbow_on_circle(S, E0, goal, l1, l2, gap_lo, gap_hi, hinge_prev, flex_sense):
    """(E, W): where FABRIK's iterations on the two bones S-E-W take the elbow and the wrist for a
    wrist goal: W on the goal (or, out of the elbow's range, as near it as the range allows,
    towards it), and E on the circle of elbows for that W, in the half-plane through S, W and the
    elbow's previous place E0 (every FABRIK step stays in that plane, and its iterations converge
    there: near a straight arm only slowly, so the point is taken directly). A previous elbow on
    the line S-W takes its side from the previous hinge axis. ``flex_sense`` (+-1): the side, as a
    multiple of ``hinge_prev x (W - S)``, that flexing the elbow from its previous angle gives."""
    d = goal - S
    dist = np.sqrt(_dot(d, d))
    u = d / dist if dist > 0.0 else _mv(np.eye(3), hinge_prev)
    reach = min(max(dist, gap_lo), gap_hi)
    W = S + reach * u
    a = (l1 * l1 - l2 * l2 + reach * reach) / (2.0 * reach)
    r = np.sqrt(max(l1 * l1 - a * a, 0.0))
    e0 = E0 - S
    side = e0 - _dot(e0, u) * u
    s = np.sqrt(_dot(side, side))
    # the elbow's side of S-W: across the previous hinge axis, so that the upper arm's roll (and
    # the wrist's) carries on where the elbow point alone leaves it loose (a nearly straight elbow
    # moves by micrometres over a half turn of the swivel); its sense from the previous elbow when
    # that is clearly bent, else from the elbow's flexion sense
    hinge_side = np.cross(hinge_prev, u)
    h = np.sqrt(_dot(hinge_side, hinge_side))
    if h > FLAT:
        sense = flex_sense
        if s > BENT * (l1 + l2):
            sense = 1.0 if _dot(hinge_side, side) >= 0.0 else -1.0
        side = sense * hinge_side
        s = h
    elif s <= FLAT * (l1 + l2):
        side = np.cross(hinge_prev, u)
        s = np.sqrt(_dot(side, side))
    E = S + a * u + (r / s) * side
    return E, W


@njit(cache=True)
def _flex_sense(axes, origins, tip, lower, upper, q_prev):
    """+1 or -1: the side of the shoulder-wrist line, as a multiple of ``hinge x (W - S)``, that the
    elbow takes when it is flexed from ``q_prev`` towards the middle of its range (constant for
    an arm whose elbow bends one way; probed by forward kinematics, so any DH convention works)."""
    q = q_prev.copy()
    mid = 0.5 * (lower[3] + upper[3]) if np.isfinite(lower[3]) and np.isfinite(upper[3]) else q[3] + 1.0
    q[3] = q[3] + (0.3 if mid >= q[3] else -0.3)
    positions = np.empty((8, 3))
    frames = np.empty((8, 3, 3))
    forward_arm(axes, origins, tip, q, positions, frames)
    S = positions[0]
    u = positions[4] - S
    e = positions[3] - S
    side = e - _dot(e, u) / _dot(u, u) * u
    return 1.0 if _dot(np.cross(_mv(frames[3], axes[3]), u), side) >= 0.0 else -1.0


@njit(cache=True)
def _turn_onto(a, b):
    """The smallest rotation taking the unit a onto the unit b."""
    R = np.eye(3)
    v0 = a[1] * b[2] - a[2] * b[1]
    v1 = a[2] * b[0] - a[0] * b[2]
    v2 = a[0] * b[1] - a[1] * b[0]
    c = _dot(a, b)
    if c < -1.0 + 1e-12:
        # half a turn about any axis perpendicular to a
        p = np.array([0.0, -a[2], a[1]]) if abs(a[0]) < 0.9 else np.array([a[2], 0.0, -a[0]])
        p = p / np.sqrt(_dot(p, p))
        for i in range(3):
            for j in range(3):
                R[i, j] = 2.0 * p[i] * p[j] - (1.0 if i == j else 0.0)
        return R
    k = 1.0 / (1.0 + c)
    V = np.array([[0.0, -v2, v1], [v2, 0.0, -v0], [-v1, v0, 0.0]])
    return R + V + _mm(V, V) * k


@njit(cache=True)
def _angles(axes, origins, tip, lower, upper, q_prev, S, E, W, R_tip, hinge_prev, up, t4, a3, scale, q):
    """The seven angles (written to ``q``) that put the elbow on E, the wrist centre on W and the
    tip frame at ``R_tip`` (module docstring, step 3). ``hinge_prev``: the elbow axis in world
    coordinates before the solve (the hinge plane of a straight arm); ``up`` the upper arm in the
    shoulder's last moving frame, ``t4`` the forearm in the elbow's moving frame, ``a3`` the elbow
    axis in the shoulder's last moving frame."""
    O = np.empty((7, 3, 3))
    for k in range(7):
        O[k] = origins[k][:3, :3]
    arm = E - S
    fore = W - E
    n = np.cross(arm, fore)
    nn = np.sqrt(_dot(n, n))
    if nn <= FLAT * scale * scale:
        # a straight arm: the hinge plane the elbow had
        n = hinge_prev - _dot(hinge_prev, arm) / _dot(arm, arm) * arm
        nn = np.sqrt(_dot(n, n))
    n = n / nn
    u = up / np.sqrt(_dot(up, up))
    au = arm / np.sqrt(_dot(arm, arm))
    sols = np.empty((2, 3))
    best = np.empty(7)
    best_cost = np.inf
    trial = np.empty(7)
    Rz = np.empty((3, 3))
    for sign in (1.0, -1.0):
        # the shoulder's last moving frame: upper arm onto E - S, elbow axis onto +-n
        R2 = _triad(u, a3, au, sign * n)
        # shoulder: O0^T R2 = R(a0, q0) O1 R(a1, q1) O2 R(a2, q2)
        B = _mm(O[1], O[2])
        M = _mmt(_mtm(O[0], R2), B)
        euler3(M, axes[0], _mv(O[1], axes[1]), _mv(B, axes[2]), q_prev[0:3], sols)
        _pick(sols, lower, upper, 0, trial)
        # elbow: the forearm in the elbow's frame
        R3 = _mm(R2, O[3])
        trial[3] = q_prev[3] + _wrap(sp1(axes[3], t4, _mtv(R3, fore)) - q_prev[3])
        # wrist: F4^T R_tip O_tip^T = R(a4, q4) O5 R(a5, q5) O6 R(a6, q6)
        _axis_rotation(axes[3], trial[3], Rz)
        F4 = _mm(_mm(R3, Rz), O[4])
        B = _mm(O[5], O[6])
        M = _mmt(_mmt(_mtm(F4, R_tip), tip[:3, :3]), B)
        euler3(M, axes[4], _mv(O[5], axes[5]), _mv(B, axes[6]), q_prev[4:7], sols)
        _pick(sols, lower, upper, 4, trial)
        out = max(lower[3] - trial[3], trial[3] - upper[3], 0.0)
        cost = out * 1e3
        for j in range(7):
            cost += abs(trial[j] - q_prev[j])
        if cost < best_cost:
            best_cost = cost
            best[:] = trial
    for j in range(7):
        q[j] = min(max(best[j], lower[j]), upper[j])


@njit(cache=True)
def srs_angles(axes, origins, tip, lower, upper, E, W, R_tip, q_prev, scale):
    """The seven angles of an S-R-S arm that put its elbow on E, its wrist centre on W and its tip
    frame at ``R_tip`` (the shoulder is fixed), nearest ``q_prev`` (step 3 of the module
    docstring, for a pose known in full, e.g. a recording). E and W must lie at the upper arm's
    and the forearm's lengths; an elbow outside its range is clipped into it."""
    positions = np.empty((8, 3))
    frames = np.empty((8, 3, 3))
    forward_arm(axes, origins, tip, q_prev, positions, frames)
    q = q_prev.copy()
    _angles(axes, origins, tip, lower, upper, q_prev, positions[0].copy(), E, W, R_tip, _mv(frames[3], axes[3]),
            origins[3][:3, 3].copy(), origins[4][:3, 3].copy(), _mv(origins[3][:3, :3], axes[3]), scale, q)
    return q
