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

from fabrik.kernels.arm import _forward_into, pose_error
from fabrik.kernels.frames import axis_angle_matrix, mm_to, rotation_between
from fabrik.kernels.stopping import MAX_ITERATIONS, REACHED, STALLED, UNREACHABLE
from fabrik.kernels.vec import chain_scale, place_on_line

#: The S-R-S arm's seven joints are all revolute (``fabrik.kernels.arm``'s ``slides``).
_REVOLUTE7 = np.zeros(7, dtype=np.bool_)

#: Distances below this fraction of the arm's reach count as zero (a straight arm's plane).
FLAT = 1e-9
#: An elbow this far (fraction of the reach) off the shoulder-wrist line tells its side itself.
BENT = 1e-3


# Allocation: a solve allocates five scratch arrays (``srs_solve`` one, ``srs_start`` two, ``srs_finish`` two);
# 3-vectors are tuples (kept in registers), 3 x 3 matrices are written into views of the scratch.
# The caller passes the arrays the answer goes into: a numba function that returns arrays
# unpickles the array type once per returned array on every call.


@njit(cache=True, inline="always")
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, inline="always")
def _norm(a):
    return np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit(cache=True, inline="always")
def _vec(a):
    """The 3-vector ``a`` (an array row or a tuple) as a tuple."""
    return (a[0], a[1], a[2])


@njit(cache=True, inline="always")
def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True, inline="always")
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, inline="always")
def _mul(s, a):
    return (s * a[0], s * a[1], s * a[2])


@njit(cache=True, inline="always")
def _div(a, s):
    return (a[0] / s, a[1] / s, a[2] / s)


@njit(cache=True, inline="always")
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, inline="always")
def _mv3(A, v):
    """A @ v for a 3 x 3 matrix (or a transposed view, ``A.T``) and a 3-vector, as a tuple."""
    return (A[0, 0] * v[0] + A[0, 1] * v[1] + A[0, 2] * v[2],
            A[1, 0] * v[0] + A[1, 1] * v[1] + A[1, 2] * v[2],
            A[2, 0] * v[0] + A[2, 1] * v[1] + A[2, 2] * v[2])


@njit(cache=True, inline="always")
def _mm(A, B):
    """A @ B (``fabrik.kernels.frames.mm_to``) in a new array."""
    C = np.empty((3, 3))
    mm_to(A, B, C)
    return C


@njit(cache=True, inline="always")
def _wrap(angle):
    """``angle`` wrapped into (-pi, pi]."""
    return angle - 2.0 * np.pi * np.ceil((angle - np.pi) / (2.0 * np.pi))


@njit(cache=True)
def sp1(w, p, q):
    """Paden-Kahan subproblem 1: the angle of the rotation about the unit axis ``w`` taking the
    component of ``p`` perpendicular to ``w`` onto that of ``q`` (0 when either is zero)."""
    pp = _sub(p, _mul(_dot(w, p), w))
    qq = _sub(q, _mul(_dot(w, q), w))
    s = _dot(w, _cross(pp, qq))
    c = _dot(pp, qq)
    if s == 0.0 and c == 0.0:
        return 0.0
    return np.arctan2(s, c)


@njit(cache=True)
def sp2(w1, w2, p, q):
    """Paden-Kahan subproblem 2: angles (t1, t2) with ``R(w1, t1) R(w2, t2) p = q`` (unit,
    non-parallel axes through the origin). Returns (t1, t2 of the first solution, t1, t2 of the
    second): the two equal when there is one, the nearest approach when there is none."""
    c12 = _dot(w1, w2)
    x = _cross(w1, w2)
    xx = _dot(x, x)
    den = c12 * c12 - 1.0
    alpha = (c12 * _dot(w2, p) - _dot(w1, q)) / den
    beta = (c12 * _dot(w1, q) - _dot(w2, p)) / den
    g2 = (_dot(p, p) - alpha * alpha - beta * beta - 2.0 * alpha * beta * c12) / xx
    gamma = np.sqrt(0.0 if g2 < 0.0 else g2)
    base = _add(_mul(alpha, w1), _mul(beta, w2))
    z = _add(base, _mul(gamma, x))
    a2 = sp1(w2, p, z)
    a1 = sp1(w1, z, q)
    z = _add(base, _mul(-gamma, x))
    b2 = sp1(w2, p, z)
    b1 = sp1(w1, z, q)
    return a1, a2, b1, b2


@njit(cache=True)
def euler3(M, a, b, c, prev, out, r0, r1, r01, rest):
    """The angles (q0, q1, q2) with ``M = R(a, q0) R(b, q1) R(c, q2)`` (unit axes, a and b not
    parallel, nor b and c) nearest ``prev`` (3,) (each difference wrapped into (-pi, pi]); written
    to ``out`` (2, 3): both solutions, the nearer first. Where a and c line up (gimbal lock) q0
    keeps its previous value and q2 takes the rest. ``r0``, ``r1``, ``r01``, ``rest``: (3, 3) scratch."""
    mc = _mv3(M, c)
    pa0, pa1, pb0, pb1 = sp2(a, b, c, mc)
    # any vector perpendicular to c, for the last angle
    if abs(c[0]) < 0.9:
        v = (0.0, -c[2], c[1])
    else:
        v = (c[2], 0.0, -c[0])
    for k in range(2):
        q0 = pa0 if k == 0 else pb0
        q1 = pa1 if k == 0 else pb1
        axis_angle_matrix(r1, b[0], b[1], b[2], q1)
        rb = _mv3(r1, c)
        # gimbal lock: R(b, q1) c along a leaves q0 + q2 alone determined
        if _norm(_cross(a, rb)) < 1e-9:
            q0 = prev[0]
        axis_angle_matrix(r0, a[0], a[1], a[2], q0)
        mm_to(r0, r1, r01)
        mm_to(r01.T, M, rest)
        q2 = sp1(c, v, _mv3(rest, v))
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
    for s in range(2):
        inside = True
        for j in range(3):
            if not (lower[first + j] <= sols[s, j] <= upper[first + j]):
                inside = False
        if inside:
            k = s
            break
    for j in range(3):
        q[first + j] = min(max(sols[k, j], lower[first + j]), upper[first + j])


@njit(cache=True, inline="always")
def _basis(u, w, M):
    """M <- the orthonormal basis (columns) u, the unit part of w across u, and their cross product."""
    t = _sub(w, _mul(_dot(w, u), u))
    t = _div(t, _norm(t))
    v = _cross(u, t)
    for r in range(3):
        M[r, 0], M[r, 1], M[r, 2] = u[r], t[r], v[r]


@njit(cache=True, inline="always")
def _triad(a1, a2, b1, b2, out, s1, s2):
    """out <- the rotation taking the unit a1 onto the unit b1 and a2's direction across a1 onto
    b2's across b1 (a1, a2 and b1, b2 at the same angle); ``s1``, ``s2`` (3, 3) scratch."""
    _basis(b1, b2, s1)
    _basis(a1, a2, s2)
    mm_to(s1, s2.T, out)


@njit(cache=True)
def _fabrik_points(pts, lengths, goal, tol, max_iter, lo_gap, hi_gap):
    """FABRIK on the chain ``pts`` (k, 3) (root pts[0] fixed) towards ``goal`` for its last
    point, in place. The middle joint of the first two bones keeps the distance from the root to
    the second point within [``lo_gap``, ``hi_gap``] (the elbow's range, as a distance). Returns
    (iterations, error)."""
    k = pts.shape[0]
    last = k - 1
    root = _vec(pts[0])
    err = _norm(_sub(pts[last], goal))
    reach, _ = chain_scale(lengths[:k - 1])
    d = _sub(goal, root)
    dist = _norm(d)
    if dist >= reach and err > tol:
        # out of reach (the paper's first case): the chain stretched straight at the goal
        for i in range(1, k):
            s = lengths[i - 1] / dist
            for c in range(3):
                pts[i, c] = pts[i - 1, c] + s * d[c]
        return 1, _norm(_sub(pts[last], goal))
    it = 0
    while it < max_iter and err > tol:
        prev = err
        # forward: the last point onto the goal, then inwards
        for c in range(3):
            pts[last, c] = goal[c]
        # (a point on its neighbour stays there: the fallback direction is zero)
        for i in range(last - 1, -1, -1):
            place_on_line(pts, i, i + 1, lengths[i], 0.0, 0.0, 0.0, 0.0)
        # backward: the root back, then outwards; the elbow's range bounds |pts[2] - root|
        for c in range(3):
            pts[0, c] = root[c]
        for i in range(1, k):
            place_on_line(pts, i, i - 1, lengths[i - 1], 0.0, 0.0, 0.0, 0.0)
            if i == 2:
                _hinge_range(pts, root, lengths, lo_gap, hi_gap)
        it += 1
        err = _norm(_sub(pts[last], goal))
        if err >= prev:
            break  # no progress at all: the elbow's range holds it off the goal
    return it, err


@njit(cache=True)
def _hinge_range(pts, root, lengths, lo_gap, hi_gap):
    """Turn the forearm pts[1] -> pts[2] about the elbow, in the plane root-pts[1]-pts[2], so that
    |pts[2] - root| lies in [lo_gap, hi_gap] (the elbow's flexion range as a distance)."""
    d = _sub(pts[2], root)
    r = _norm(d)
    if lo_gap <= r <= hi_gap:
        return
    gap = lo_gap if r < lo_gap else hi_gap
    l1, l2 = lengths[0], lengths[1]
    # the angle at the elbow giving |pts[2] - root| = gap, in the plane of the upper arm uu and d
    cos_e = min(1.0, max(-1.0, (l1 * l1 + l2 * l2 - gap * gap) / (2.0 * l1 * l2)))
    uu = _div(_sub(pts[1], root), l1)
    side = _sub(d, _mul(_dot(d, uu), uu))
    s = _norm(side)
    if s <= 0.0:
        return
    side = _div(side, s)
    # forearm direction: back along -uu turned by the elbow angle towards side
    sin_e = np.sqrt(1.0 - cos_e * cos_e)
    f = _add(_mul(-cos_e, uu), _mul(sin_e, side))
    for c in range(3):
        pts[2, c] = pts[1, c] + l2 * f[c]


#: The size of ``srs_start``'s array.
START_SIZE = 25

#: The 3 x 3 scratch matrices of one solve (``srs_solve``): 0-1 forward kinematics, 2-3 the
#: hand's turn (position targets), 6-23 ``_angles``.
_N_MATS = 24
#: Where each part of an arm lies in ``srs_pack``'s array (start, size).
_ORIGINS, _TIP, _AXES, _LOWER, _UPPER, _WRIST, _GAPS, _SCALE = 0, 112, 128, 149, 156, 163, 166, 168
PACK_SIZE = 169


def srs_pack(axes, origins, tip, lower, upper, wrist_in_tip, gaps, scale):
    """What ``srs_solve`` reads of an arm, in one float64 array (one argument instead of eight:
    numba unboxes each array argument of a call on its own): ``axes`` (7, 3), ``origins``
    (7, 4, 4), ``tip`` (4, 4), ``lower``, ``upper`` (7,), ``wrist_in_tip`` (3,), ``gaps`` (2,)
    and ``scale``, the arm's reach."""
    parts = (origins, tip, axes, lower, upper, wrist_in_tip, gaps, [scale])  # in the order of the offsets
    pack = np.concatenate([np.asarray(a, dtype=np.float64).reshape(-1) for a in parts])
    if pack.shape != (PACK_SIZE,):
        raise ValueError(f"srs_pack takes a 7-joint arm's arrays ({PACK_SIZE} values), got {pack.size}")
    return pack


@njit(cache=True, inline="always")
def _unpack(pack):
    """Views of ``srs_pack``'s array: (axes, origins, tip, lower, upper, wrist_in_tip, gaps)."""
    return (pack[_AXES:_LOWER].reshape((7, 3)), pack[_ORIGINS:_TIP].reshape((7, 4, 4)),
            pack[_TIP:_AXES].reshape((4, 4)), pack[_LOWER:_UPPER], pack[_UPPER:_WRIST], pack[_WRIST:_GAPS],
            pack[_GAPS:_SCALE])


@njit(cache=True)
def srs_start(pack, q_prev, oriented, positions, frames, start):
    """What ``srs_solve`` reads of its start angles ``q_prev`` (7,), which depends on nothing else,
    written to ``start`` (``START_SIZE``,) (layout: ``_start_parts``): the shoulder, elbow, wrist
    centre and tip points and the elbow axis of the start pose, the tip frame, and, for an
    ``oriented`` target, the elbow's flex side (``_flex_sense``). ``positions`` (8, 3) and
    ``frames`` (8, 3, 3) are scratch. A batch whose targets share a start computes it once
    (``fabrik.kernels.batch_arm``)."""
    axes, origins, tip, lower, upper, wrist_in_tip, gaps = _unpack(pack)
    mats = np.empty((2, 3, 3))
    vecs = np.empty(10)
    rot, turn = mats[0], mats[1]
    trans, probe = vecs[0:3], vecs[3:10]
    _forward_into(axes, origins, tip, _REVOLUTE7, q_prev, positions, frames, rot, turn, trans)
    hinge = _mv3(frames[3], axes[3])
    for c in range(3):
        # shoulder, elbow, wrist centre and tip before the solve, then the elbow axis
        start[c], start[3 + c], start[6 + c], start[9 + c] = (positions[0, c], positions[3, c], positions[4, c],
                                                              positions[7, c])
        start[12 + c] = hinge[c]
        for r in range(3):
            start[15 + 3 * c + r] = frames[7, c, r]
    start[24] = 0.0
    if oriented:
        start[24] = _flex_sense(axes, origins, tip, lower, upper, q_prev, probe, positions, frames, rot, turn, trans)


@njit(cache=True, inline="always")
def _start_parts(start):
    """``srs_start``'s array as (shoulder, elbow, wrist, tip, hinge) 3-tuples, the tip frame (3, 3)
    view and the flex side."""
    return ((start[0], start[1], start[2]), (start[3], start[4], start[5]), (start[6], start[7], start[8]),
            (start[9], start[10], start[11]), (start[12], start[13], start[14]), start[15:24].reshape((3, 3)),
            start[24])


@njit(cache=True)
def srs_solve(pack, task, stop, q, positions, frames, pole=None):
    """Solve a 7-joint S-R-S arm for a tip target (module docstring): ``srs_finish`` from
    ``srs_start`` of ``task.start``. Arguments and result as ``srs_finish``'s."""
    start = np.empty(START_SIZE)
    srs_start(pack, task.start, task.oriented, positions, frames, start)
    return srs_finish(pack, start, task, stop, q, positions, frames, pole)


@njit(cache=True)
def srs_finish(pack, start, task, stop, q, positions, frames, pole=None):
    """Solve a 7-joint S-R-S arm for a tip target (module docstring) from ``start`` (``srs_start``'s
    array for ``task.start``).

    ``pack``: the arm (``srs_pack``), with ``wrist_in_tip`` (3,) the wrist centre in tip
    coordinates and ``gaps`` (2,) the range of the shoulder-wrist distance the elbow's limits
    allow (``fabrik.solvers.arm``); ``task``: the target and the start (``fabrik.kernels.records.ArmTask``:
    ``rotation`` read when ``oriented``, ``start`` (7,) never written); ``stop``: ``Stop`` (``tol``
    in model units, ``orientation_tol`` in radians, ``max_iter`` the position target's FABRIK
    iterations). Writes the answer to ``q`` (7,), ``positions`` (8, 3) and ``frames`` (8, 3, 3)
    (``fabrik.kernels.arm.forward_arm`` of q; none of them ``task.start``) and returns (iterations,
    position error, orientation error (radians; 0 for a position target), status). Allocates two
    scratch arrays. ``pole`` (3,) or None: the elbow goes on its circle on the pole's side of the
    shoulder-wrist line, in the plane through the shoulder, the wrist and the pole
    (``_elbow_to_pole``)."""
    target_p, target_R, oriented, q_prev = task.target, task.rotation, task.oriented, task.start
    tol, otol, max_iter = stop.tol, stop.orientation_tol, stop.max_iter
    m = 7
    axes, origins, tip, lower, upper, wrist_in_tip, gaps = _unpack(pack)
    scale = pack[_SCALE]
    mats = np.empty((_N_MATS, 3, 3))
    vecs = np.empty((4, 7))
    rot, turn = mats[0], mats[1]
    trans = vecs[3, 0:3]
    S, E0, W0, T0, hinge_prev, tip_frame, sense = _start_parts(start)
    l1 = _norm(_sub(E0, S))
    l2 = _norm(_sub(W0, E0))
    l3 = _norm(_sub(T0, W0))
    if oriented:
        goal = _add(target_p, _mv3(target_R, wrist_in_tip))
        E, W = _elbow_on_circle(S, E0, goal, l1, l2, gaps[0], gaps[1], hinge_prev, sense)
        if pole is not None:
            E = _elbow_to_pole(S, E, W, pole)
        it = 1
        R_tip = target_R
    else:
        # the chain S-E-W-T in the rows 0-3 of positions (scratch until the answer's pose)
        pts = positions[0:4]
        for c in range(3):
            pts[0, c], pts[1, c], pts[2, c], pts[3, c] = S[c], E0[c], W0[c], T0[c]
        lengths = vecs[3, 3:6]
        lengths[0], lengths[1], lengths[2] = l1, l2, l3
        goal = _vec(target_p)
        it, _ = _fabrik_points(pts, lengths, goal, tol, max_iter, gaps[0], gaps[1])
        E, W = _vec(pts[1]), _vec(pts[2])
        if pole is not None:
            E = _elbow_to_pole(S, E, W, pole)
        # the hand's roll kept: the previous tip frame turned onto the new hand direction
        old = _div(_sub(T0, W0), l3)
        new = _div(_sub(pts[3], W), l3)
        rotation_between(mats[2], old[0], old[1], old[2], new[0], new[1], new[2])
        R_tip = mats[3]
        mm_to(mats[2], tip_frame, R_tip)

    _angles(axes, origins, tip, lower, upper, q_prev, S, E, W, R_tip, hinge_prev, scale, q, mats, vecs)
    for k in range(m):  # on the limits exactly, never a rounding past them
        q[k] = min(max(q[k], lower[k]), upper[k])
    _forward_into(axes, origins, tip, _REVOLUTE7, q, positions, frames, rot, turn, trans)
    err, oerr = pose_error(positions, frames, target_p, target_R, oriented)
    if err <= tol and oerr <= otol:
        return it, err, oerr, REACHED
    if it >= max_iter:
        return it, err, oerr, MAX_ITERATIONS
    far = _norm(_sub(goal, S)) > l1 + l2 + (0.0 if oriented else l3)  # goal: the wrist's, or the tip's
    return it, err, oerr, (UNREACHABLE if far else STALLED)


@njit(cache=True)
def _elbow_to_pole(S, E, W, pole):
    """The elbow E turned about the shoulder-wrist line S-W onto the pole's side of it (3-tuples;
    the pole (3,)): the pole arm of ``fabrik.kernels.poles`` for the S-R-S arm. E as it is when
    the pole or E lies on the line."""
    d = _sub(W, S)
    dist = _norm(d)
    if dist <= 0.0:
        return E
    u = _div(d, dist)
    e = _sub(E, S)
    along = _dot(e, u)
    side = _sub(e, _mul(along, u))
    r = _norm(side)
    w = _sub((pole[0], pole[1], pole[2]), S)
    wside = _sub(w, _mul(_dot(w, u), u))
    rw = _norm(wside)
    if r <= 1e-12 * dist or rw <= 1e-12 * dist:
        return E
    return _add(_add(S, _mul(along, u)), _mul(r / rw, wside))


@njit(cache=True)
def _elbow_on_circle(S, E0, goal, l1, l2, gap_lo, gap_hi, hinge_prev, flex_sense):
    """(E, W): where FABRIK's iterations on the two bones S-E-W take the elbow and the wrist for a
    wrist goal: W on the goal (or, out of the elbow's range, as near it as the range allows,
    towards it), and E on the circle of elbows for that W, in the half-plane through S, W and the
    elbow's previous place E0 (every FABRIK step stays in that plane, and its iterations converge
    there: near a straight arm only slowly, so the point is taken directly). A previous elbow on
    the line S-W takes its side from the previous hinge axis. ``flex_sense`` (+-1): the side, as a
    multiple of ``hinge_prev x (W - S)``, that flexing the elbow from its previous angle gives.
    Points are 3-tuples."""
    d = _sub(goal, S)
    dist = _norm(d)
    u = _div(d, dist) if dist > 0.0 else hinge_prev
    reach = min(max(dist, gap_lo), gap_hi)
    W = _add(S, _mul(reach, u))
    a = (l1 * l1 - l2 * l2 + reach * reach) / (2.0 * reach)
    r = np.sqrt(max(l1 * l1 - a * a, 0.0))
    e0 = _sub(E0, S)
    side = _sub(e0, _mul(_dot(e0, u), u))
    s = _norm(side)
    # the elbow's side of S-W: across the previous hinge axis, so that the upper arm's roll (and
    # the wrist's) carries on where the elbow point alone leaves it loose (a nearly straight elbow
    # moves by micrometres over a half turn of the swivel); its sense from the previous elbow when
    # that is clearly bent, else from the elbow's flexion sense
    hinge_side = _cross(hinge_prev, u)
    h = _norm(hinge_side)
    if h > FLAT:
        sense = flex_sense
        if s > BENT * (l1 + l2):
            sense = 1.0 if _dot(hinge_side, side) >= 0.0 else -1.0
        side = _mul(sense, hinge_side)
        s = h
    elif s <= FLAT * (l1 + l2):
        side = _cross(hinge_prev, u)
        s = _norm(side)
    E = _add(_add(S, _mul(a, u)), _mul(r / s, side))
    return E, W


@njit(cache=True)
def _flex_sense(axes, origins, tip, lower, upper, q_prev, q, positions, frames, rot, turn, trans):
    """+1 or -1: the side of the shoulder-wrist line, as a multiple of ``hinge x (W - S)``, that the
    elbow takes when it is flexed from ``q_prev`` towards the middle of its range (constant for
    an arm whose elbow bends one way; probed by forward kinematics, so any DH convention works).
    ``q`` (7,), ``positions`` (8, 3), ``frames`` (8, 3, 3), ``rot``, ``turn`` (3, 3) and ``trans``
    (3,) are scratch."""
    q[:] = q_prev
    mid = 0.5 * (lower[3] + upper[3]) if np.isfinite(lower[3]) and np.isfinite(upper[3]) else q[3] + 1.0
    q[3] = q[3] + (0.3 if mid >= q[3] else -0.3)
    _forward_into(axes, origins, tip, _REVOLUTE7, q, positions, frames, rot, turn, trans)
    S = _vec(positions[0])
    u = _sub(positions[4], S)
    e = _sub(positions[3], S)
    side = _sub(e, _mul(_dot(e, u) / _dot(u, u), u))
    return 1.0 if _dot(_cross(_mv3(frames[3], axes[3]), u), side) >= 0.0 else -1.0


@njit(cache=True)
def _angles(axes, origins, tip, lower, upper, q_prev, S, E, W, R_tip, hinge_prev, scale, q, mats, vecs):
    """The seven angles (written to ``q``) that put the elbow on E, the wrist centre on W and the
    tip frame at ``R_tip`` (module docstring, step 3). ``hinge_prev``: the elbow axis in world
    coordinates before the solve (the hinge plane of a straight arm; points and vectors as
    3-tuples). Scratch: the 3 x 3 matrices 6-23 of ``mats`` and the rows 0-1 of ``vecs`` (2+, 7)."""
    up = (origins[3, 0, 3], origins[3, 1, 3], origins[3, 2, 3])  # the upper arm in joint 2's moving frame
    t4 = (origins[4, 0, 3], origins[4, 1, 3], origins[4, 2, 3])  # the forearm in the elbow's moving frame
    a3 = _mv3(origins[3], axes[3])  # the elbow axis in joint 2's moving frame
    O0, O1, O2, O3 = origins[0, :3, :3], origins[1, :3, :3], origins[2, :3, :3], origins[3, :3, :3]
    O4, O5, O6 = origins[4, :3, :3], origins[5, :3, :3], origins[6, :3, :3]
    R2, s1, s2, B, X, M, R3, Rz = mats[6], mats[7], mats[8], mats[9], mats[10], mats[11], mats[12], mats[13]
    R3z, F4, X1, X2, r0, r1, r01, rest = (mats[14], mats[15], mats[16], mats[17], mats[18], mats[19], mats[20],
                                          mats[21])
    B2 = mats[22]
    sols = mats[23, 0:2]
    best = vecs[0]
    trial = vecs[1]
    arm = _sub(E, S)
    fore = _sub(W, E)
    n = _cross(arm, fore)
    nn = _norm(n)
    if nn <= FLAT * scale * scale:
        # a straight arm: the hinge plane the elbow had
        n = _sub(hinge_prev, _mul(_dot(hinge_prev, arm) / _dot(arm, arm), arm))
        nn = _norm(n)
    n = _div(n, nn)
    u = _div(up, _norm(up))
    au = _div(arm, _norm(arm))
    # what the loop below reads of the arm alone
    mm_to(O1, O2, B)
    mm_to(O5, O6, B2)
    b1 = _mv3(O1, axes[1])
    c1 = _mv3(B, axes[2])
    b2 = _mv3(O5, axes[5])
    c2 = _mv3(B2, axes[6])
    best_cost = np.inf
    for k in range(2):
        sign = 1.0 if k == 0 else -1.0
        # the shoulder's last moving frame: upper arm onto E - S, elbow axis onto +-n
        _triad(u, a3, au, _mul(sign, n), R2, s1, s2)
        # shoulder: O0^T R2 = R(a0, q0) O1 R(a1, q1) O2 R(a2, q2)
        mm_to(O0.T, R2, X)
        mm_to(X, B.T, M)
        euler3(M, axes[0], b1, c1, q_prev[0:3], sols, r0, r1, r01, rest)
        _pick(sols, lower, upper, 0, trial)
        # elbow: the forearm in the elbow's frame
        mm_to(R2, O3, R3)
        trial[3] = q_prev[3] + _wrap(sp1(axes[3], t4, _mv3(R3.T, fore)) - q_prev[3])
        # wrist: F4^T R_tip O_tip^T = R(a4, q4) O5 R(a5, q5) O6 R(a6, q6)
        axis_angle_matrix(Rz, axes[3, 0], axes[3, 1], axes[3, 2], trial[3])
        mm_to(R3, Rz, R3z)
        mm_to(R3z, O4, F4)
        mm_to(F4.T, R_tip, X1)
        mm_to(X1, tip.T, X2)
        mm_to(X2, B2.T, M)
        euler3(M, axes[4], b2, c2, q_prev[4:7], sols, r0, r1, r01, rest)
        _pick(sols, lower, upper, 4, trial)
        out = max(lower[3] - trial[3], trial[3] - upper[3], 0.0)
        cost = out * 1e3
        for j in range(7):
            cost += abs(trial[j] - q_prev[j])
        if cost < best_cost:
            best_cost = cost
            for j in range(7):
                best[j] = trial[j]
    for j in range(7):
        q[j] = min(max(best[j], lower[j]), upper[j])


@njit(cache=True)
def srs_angles(axes, origins, tip, lower, upper, E, W, R_tip, q_prev, scale):
    """Step 3 of the module docstring alone, for a pose known in full (``fabrik.solvers.arm.arm_angles``):
    the seven angles that put the elbow on E, the wrist centre on W and the tip frame at ``R_tip``."""
    mats, vecs = np.empty((_N_MATS, 3, 3)), np.empty((4, 7))
    positions, frames = np.empty((8, 3)), np.empty((8, 3, 3))
    _forward_into(axes, origins, tip, _REVOLUTE7, q_prev, positions, frames, mats[0], mats[1], vecs[3, 0:3])
    q = q_prev.copy()
    _angles(axes, origins, tip, lower, upper, q_prev, _vec(positions[0]), _vec(E), _vec(W), R_tip,
            _mv3(frames[3], axes[3]), scale, q, mats, vecs)
    return q
