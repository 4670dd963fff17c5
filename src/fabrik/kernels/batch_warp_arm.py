"""``solve_batch(arm, ..., backend="warp")``: the DHM study's closed-form FABRIK on a 7-joint S-R-S
arm (``fabrik.kernels.arm_ik``: ``srs_start`` then ``srs_finish``, as ``fabrik.kernels.batch_arm.
batch_srs`` runs them) as NVIDIA Warp kernels, one thread per target, on a GPU or the CPU.

Two kernels, launched one after the other:

* ``srs_starts``: ``srs_start`` for each row of start angles (one row shared by every target, or
  one per target): the shoulder, elbow, wrist centre and tip points, the elbow axis and the tip
  frame of the start pose, and, for pose targets, the elbow's flex side (``_flex_sense``). It
  uses the rows of the answer's positions and frames as scratch, as ``batch_srs`` does (the
  second kernel overwrites them).
* ``srs_rows``: ``srs_finish`` for each target, without a pole (``batch_srs`` passes none): for a
  pose target the wrist centre placed from the target's rotation and the elbow put on its circle
  (``_elbow_on_circle``, one iteration); for a position target FABRIK on the chain S-E-W-T
  (``_fabrik_points`` with the elbow's range, ``_hinge_range``) and the hand's roll kept
  (``rotation_between``); then the seven angles (``_angles``: ``euler3``, ``sp1``, ``sp2``,
  ``_pick``, ``_triad``), forward kinematics, the errors (``pose_error``) and the status.

Every branch of ``srs_finish`` runs on the device, so no target is handed back to the CPU (unlike
the chain and skeleton kernels, which hand back the rows of the branches they do not port): the
position targets' FABRIK loop is the only iteration, and its cap (at most the arm method's
ceiling, ``Solver.max_iter_ceiling``, 10,000,000) fits Warp's 32-bit integers.

Each thread runs the numba code operation for operation (3-vectors and 3 x 3 matrices as Warp
values, every product and sum written out in the numba order rather than Warp's ``dot`` or
matrix product, which may round or sign a zero differently), so the answers are ``fabrik.solve``'s:
bit for bit where the device rounds as the CPU does, to rounding where it does not (a GPU fuses
multiplies and adds; tests/solvers/test_batch_warp_arm.py checks 1e-9 on Warp's CPU device).
The arm comes as ``srs_pack``'s array (169 values, its offsets spelled out below). In float32 the
same code runs in single precision, its thresholds (``FLAT``, ``BENT``, the gimbal-lock test)
unchanged.

Three small kernels read device pose targets as the host path reads them (``fabrik.model.pose``):
``pose_defects`` lists the rows of (N, 3, 3) rotations or (N, 4, 4) transforms that are not
rotations (rigid transforms) to a limit, ``split_poses`` splits transforms into points and
rotations, ``scatter_rows`` writes the host's readings of the listed rows back. Kernels are built
on first use per precision (``PRECISIONS`` of ``fabrik.kernels.batch_warp``).
"""

# (no `from __future__ import annotations`: Warp before 1.2 reads kernel annotations as objects)
import numpy as np

from fabrik.kernels import arm_ik
from fabrik.kernels.arm_ik import BENT, FLAT, START_SIZE
from fabrik.kernels.stopping import MAX_ITERATIONS, REACHED, STALLED, UNREACHABLE

#: Kernels per precision, built on first use.
_KERNELS: dict = {}

# srs_pack's layout and srs_start's size, spelled out in the kernels
assert (arm_ik._ORIGINS, arm_ik._TIP, arm_ik._AXES, arm_ik._LOWER, arm_ik._UPPER, arm_ik._WRIST, arm_ik._GAPS,
        arm_ik._SCALE, arm_ik.PACK_SIZE, START_SIZE) == (0, 112, 128, 149, 156, 163, 166, 168, 169, 25)
assert (REACHED, UNREACHABLE, STALLED, MAX_ITERATIONS) == (0, 1, 2, 3)


def kernels(precision: str = "float64"):
    """(warp, a namespace of the arm kernels for ``precision``), built once under
    ``fabrik._lazy.FIRST_USE``."""
    from fabrik.kernels.batch_warp import built_once

    return built_once(_KERNELS, precision, _make)


def _make(precision: str):
    from types import SimpleNamespace

    from fabrik.kernels.batch_warp import import_warp

    wp = import_warp()
    real = wp.float64 if precision == "float64" else wp.float32
    vec3 = wp.vec3d if precision == "float64" else wp.vec3f
    mat33 = wp.mat33d if precision == "float64" else wp.mat33f
    vec7 = wp.types.vector(length=7, dtype=real)
    i32 = wp.int32

    # -- 3-vectors and 3 x 3 matrices, in the numba order (arm_ik's _dot, _norm, _mv3, mm_to, ...)

    @wp.func
    def dot3(a: vec3, b: vec3):
        return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]

    @wp.func
    def norm3(a: vec3):
        return wp.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])

    @wp.func
    def cross3(a: vec3, b: vec3):
        return vec3(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])

    @wp.func
    def scaled(s: real, a: vec3):
        return vec3(s * a[0], s * a[1], s * a[2])

    @wp.func
    def divided(a: vec3, s: real):
        return vec3(a[0] / s, a[1] / s, a[2] / s)

    @wp.func
    def mv3(A: mat33, v: vec3):
        return vec3(A[0, 0] * v[0] + A[0, 1] * v[1] + A[0, 2] * v[2],
                    A[1, 0] * v[0] + A[1, 1] * v[1] + A[1, 2] * v[2],
                    A[2, 0] * v[0] + A[2, 1] * v[1] + A[2, 2] * v[2])

    @wp.func
    def mm(A: mat33, B: mat33):
        C = mat33()
        for i in range(3):
            for j in range(3):
                C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
        return C

    @wp.func
    def axis_angle(k: vec3, angle: real):
        # fabrik.kernels.frames.axis_angle_matrix
        c = wp.cos(angle)
        s = wp.sin(angle)
        t = real(1.0) - c
        return mat33(c + t * k[0] * k[0], t * k[0] * k[1] - s * k[2], t * k[0] * k[2] + s * k[1],
                     t * k[1] * k[0] + s * k[2], c + t * k[1] * k[1], t * k[1] * k[2] - s * k[0],
                     t * k[2] * k[0] - s * k[1], t * k[2] * k[1] + s * k[0], c + t * k[2] * k[2])

    @wp.func
    def rotation_between(a: vec3, b: vec3):
        # fabrik.kernels.frames.rotation_between: the smallest rotation taking unit a onto unit b
        c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
        R = mat33()
        if real(1.0) + c < real(1e-12):
            e = vec3(real(0.0), real(1.0), real(0.0))
            if wp.abs(a[0]) < real(0.9):
                e = vec3(real(1.0), real(0.0), real(0.0))
            p = cross3(a, e)
            n = norm3(p)
            p = vec3(p[0] / n, p[1] / n, p[2] / n)
            for i in range(3):
                for j in range(3):
                    eye = real(0.0)
                    if i == j:
                        eye = real(1.0)
                    R[i, j] = real(2.0) * p[i] * p[j] - eye
        else:
            v = cross3(a, b)
            k = real(1.0) / (real(1.0) + c)
            R = mat33(real(1.0) - k * (v[1] * v[1] + v[2] * v[2]), -v[2] + k * v[0] * v[1], v[1] + k * v[0] * v[2],
                      v[2] + k * v[0] * v[1], real(1.0) - k * (v[0] * v[0] + v[2] * v[2]), -v[0] + k * v[1] * v[2],
                      -v[1] + k * v[0] * v[2], v[0] + k * v[1] * v[2], real(1.0) - k * (v[0] * v[0] + v[1] * v[1]))
        return R

    @wp.func
    def wrap(angle: real):
        # arm_ik._wrap: into (-pi, pi]
        pi = real(np.pi)
        return angle - real(2.0) * pi * wp.ceil((angle - pi) / (real(2.0) * pi))

    # -- the arm, read from srs_pack's array

    # srs_pack's array: origins (7, 4, 4) from 0, tip (4, 4) 112, axes (7, 3) 128, lower (7,) 149,
    # upper (7,) 156, wrist_in_tip (3,) 163, gaps (2,) 166, scale 168 (asserted above)

    @wp.func
    def origin_rot(pack: wp.array(dtype=real), k: int):
        # the rotation block of origins[k] (k = 7: the tip transform)
        b = 16 * k
        return mat33(pack[b], pack[b + 1], pack[b + 2], pack[b + 4], pack[b + 5], pack[b + 6], pack[b + 8],
                     pack[b + 9], pack[b + 10])

    @wp.func
    def origin_t(pack: wp.array(dtype=real), k: int):
        b = 16 * k
        return vec3(pack[b + 3], pack[b + 7], pack[b + 11])

    @wp.func
    def axis(pack: wp.array(dtype=real), k: int):
        return vec3(pack[128 + 3 * k], pack[129 + 3 * k], pack[130 + 3 * k])

    @wp.func
    def forward_into(pack: wp.array(dtype=real), q: vec7, positions: wp.array3d(dtype=real),
                     frames: wp.array4d(dtype=real), i: int):
        # fabrik.kernels.arm._forward_into for 7 revolute joints: rows i of positions (N, 8, 3), frames (N, 8, 3, 3)
        rot = mat33(real(1.0), real(0.0), real(0.0), real(0.0), real(1.0), real(0.0), real(0.0), real(0.0),
                    real(1.0))
        trans = vec3(real(0.0), real(0.0), real(0.0))
        for k in range(8):
            F = mm(rot, origin_rot(pack, k))
            t = origin_t(pack, k)
            p = mv3(rot, t) + trans
            for r in range(3):
                positions[i, k, r] = p[r]
                for c in range(3):
                    frames[i, k, r, c] = F[r, c]
            if k < 7:
                rot = mm(F, axis_angle(axis(pack, k), q[k]))
                trans = p

    @wp.func
    def row3(a: wp.array3d(dtype=real), i: int, k: int):
        return vec3(a[i, k, 0], a[i, k, 1], a[i, k, 2])

    @wp.func
    def frame_at(frames: wp.array4d(dtype=real), i: int, k: int):
        return mat33(frames[i, k, 0, 0], frames[i, k, 0, 1], frames[i, k, 0, 2], frames[i, k, 1, 0],
                     frames[i, k, 1, 1], frames[i, k, 1, 2], frames[i, k, 2, 0], frames[i, k, 2, 1],
                     frames[i, k, 2, 2])

    # -- srs_start

    @wp.func
    def flex_sense(pack: wp.array(dtype=real), q_prev: vec7, positions: wp.array3d(dtype=real),
                   frames: wp.array4d(dtype=real), i: int):
        # arm_ik._flex_sense: the side the elbow takes when flexed towards the middle of its range
        q = vec7(q_prev)
        lo = pack[149 + 3]
        hi = pack[156 + 3]
        mid = q[3] + real(1.0)
        if wp.isfinite(lo) and wp.isfinite(hi):
            mid = real(0.5) * (lo + hi)
        step = real(-0.3)
        if mid >= q[3]:
            step = real(0.3)
        q[3] = q[3] + step
        forward_into(pack, q, positions, frames, i)
        S = row3(positions, i, 0)
        u = row3(positions, i, 4) - S
        e = row3(positions, i, 3) - S
        side = e - scaled(dot3(e, u) / dot3(u, u), u)
        sense = real(-1.0)
        if dot3(cross3(mv3(frame_at(frames, i, 3), axis(pack, 3)), u), side) >= real(0.0):
            sense = real(1.0)
        return sense

    @wp.kernel(enable_backward=False, module="unique")
    def srs_starts(pack: wp.array(dtype=real), q_starts: wp.array2d(dtype=real), oriented: int,
                   positions: wp.array3d(dtype=real), frames: wp.array4d(dtype=real), start: wp.array2d(dtype=real)):
        # arm_ik.srs_start for row i of q_starts (R, 7) into start (R, 25); positions, frames: scratch rows
        i = wp.tid()
        q = vec7()
        for j in range(7):
            q[j] = q_starts[i, j]
        forward_into(pack, q, positions, frames, i)
        hinge = mv3(frame_at(frames, i, 3), axis(pack, 3))
        for c in range(3):
            start[i, c] = positions[i, 0, c]
            start[i, 3 + c] = positions[i, 3, c]
            start[i, 6 + c] = positions[i, 4, c]
            start[i, 9 + c] = positions[i, 7, c]
            start[i, 12 + c] = hinge[c]
            for r in range(3):
                start[i, 15 + 3 * c + r] = frames[i, 7, c, r]
        start[i, 24] = real(0.0)
        if oriented != 0:
            start[i, 24] = flex_sense(pack, q, positions, frames, i)

    # -- srs_finish's steps

    @wp.func
    def start_point(start: wp.array2d(dtype=real), s: int, at: int):
        return vec3(start[s, at], start[s, at + 1], start[s, at + 2])

    @wp.func
    def elbow_on_circle(S: vec3, E0: vec3, goal: vec3, l1: real, l2: real, gap_lo: real, gap_hi: real,
                        hinge_prev: vec3, flex: real):
        # arm_ik._elbow_on_circle: (E, W) for a wrist goal
        d = goal - S
        dist = norm3(d)
        u = hinge_prev
        if dist > real(0.0):
            u = divided(d, dist)
        reach = wp.min(wp.max(dist, gap_lo), gap_hi)
        W = S + scaled(reach, u)
        a = (l1 * l1 - l2 * l2 + reach * reach) / (real(2.0) * reach)
        r = wp.sqrt(wp.max(l1 * l1 - a * a, real(0.0)))
        e0 = E0 - S
        side = e0 - scaled(dot3(e0, u), u)
        s = norm3(side)
        hinge_side = cross3(hinge_prev, u)
        h = norm3(hinge_side)
        if h > real(FLAT):
            sense = flex
            if s > real(BENT) * (l1 + l2):
                sense = real(-1.0)
                if dot3(hinge_side, side) >= real(0.0):
                    sense = real(1.0)
            side = scaled(sense, hinge_side)
            s = h
        elif s <= real(FLAT) * (l1 + l2):
            side = cross3(hinge_prev, u)
            s = norm3(side)
        E = (S + scaled(a, u)) + scaled(r / s, side)
        return E, W

    @wp.func
    def on_line(pi: vec3, pj: vec3, length: real):
        # fabrik.kernels.vec.place_on_line with eps 0 and a zero fallback: pi at length from pj, towards pi
        x = pi - pj
        r = wp.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])
        if r <= real(0.0):
            x = vec3(real(0.0), real(0.0), real(0.0))
            r = real(1.0)
        lam = length / r
        return pj + scaled(lam, x)

    @wp.func
    def hinge_range(p1: vec3, p2: vec3, root: vec3, l1: real, l2: real, lo_gap: real, hi_gap: real):
        # arm_ik._hinge_range: p2 turned about the elbow p1 so that |p2 - root| lies in [lo_gap, hi_gap]
        d = p2 - root
        r = norm3(d)
        out = p2
        if not (lo_gap <= r and r <= hi_gap):
            gap = hi_gap
            if r < lo_gap:
                gap = lo_gap
            cos_e = wp.min(real(1.0), wp.max(real(-1.0), (l1 * l1 + l2 * l2 - gap * gap) / (real(2.0) * l1 * l2)))
            uu = divided(p1 - root, l1)
            side = d - scaled(dot3(d, uu), uu)
            s = norm3(side)
            if s > real(0.0):
                side = divided(side, s)
                sin_e = wp.sqrt(real(1.0) - cos_e * cos_e)
                f = scaled(-cos_e, uu) + scaled(sin_e, side)
                out = p1 + scaled(l2, f)
        return out

    @wp.func
    def fabrik_points(S: vec3, E0: vec3, W0: vec3, T0: vec3, goal: vec3, l1: real, l2: real, l3: real, tol: real,
                      max_iter: int, gap_lo: real, gap_hi: real):
        # arm_ik._fabrik_points on the chain S-E-W-T (root S fixed) towards the tip goal, the elbow's
        # range bounding |W - S| to [gap_lo, gap_hi]: (E, W, T, iterations)
        p0 = S
        p1 = E0
        p2 = W0
        p3 = T0
        err = norm3(p3 - goal)
        reach = real(0.0) + l1 + l2 + l3
        d = goal - S
        dist = norm3(d)
        it = int(0)
        if dist >= reach and err > tol:
            # out of reach (the paper's first case): the chain stretched straight at the goal
            p1 = p0 + scaled(l1 / dist, d)
            p2 = p1 + scaled(l2 / dist, d)
            p3 = p2 + scaled(l3 / dist, d)
            it = int(1)
        else:
            going = int(1)
            while going != 0 and it < max_iter and err > tol:
                prev = err
                p3 = goal
                p2 = on_line(p2, p3, l3)
                p1 = on_line(p1, p2, l2)
                p0 = S  # (the forward stage's move of the root is undone at once: not made)
                p1 = on_line(p1, p0, l1)
                p2 = on_line(p2, p1, l2)
                p2 = hinge_range(p1, p2, S, l1, l2, gap_lo, gap_hi)
                p3 = on_line(p3, p2, l3)
                it = it + 1
                err = norm3(p3 - goal)
                if err >= prev:
                    going = int(0)  # no progress at all: the elbow's range holds it off the goal
        return p1, p2, p3, it

    @wp.func
    def sp1(w: vec3, p: vec3, q: vec3):
        # arm_ik.sp1 (Paden-Kahan subproblem 1)
        pp = p - scaled(dot3(w, p), w)
        qq = q - scaled(dot3(w, q), w)
        s = dot3(w, cross3(pp, qq))
        c = dot3(pp, qq)
        angle = real(0.0)
        if not (s == real(0.0) and c == real(0.0)):
            angle = wp.atan2(s, c)
        return angle

    @wp.func
    def sp2(w1: vec3, w2: vec3, p: vec3, q: vec3):
        # arm_ik.sp2 (Paden-Kahan subproblem 2): (t1, t2) of the first solution, then the second's, each
        # pair the first two entries of a 3-vector
        c12 = dot3(w1, w2)
        x = cross3(w1, w2)
        xx = dot3(x, x)
        den = c12 * c12 - real(1.0)
        alpha = (c12 * dot3(w2, p) - dot3(w1, q)) / den
        beta = (c12 * dot3(w1, q) - dot3(w2, p)) / den
        g2 = (dot3(p, p) - alpha * alpha - beta * beta - real(2.0) * alpha * beta * c12) / xx
        g = g2
        if g2 < real(0.0):
            g = real(0.0)
        gamma = wp.sqrt(g)
        base = scaled(alpha, w1) + scaled(beta, w2)
        z = base + scaled(gamma, x)
        a2 = sp1(w2, p, z)
        a1 = sp1(w1, z, q)
        z = base + scaled(-gamma, x)
        b2 = sp1(w2, p, z)
        b1 = sp1(w1, z, q)
        return vec3(a1, a2, real(0.0)), vec3(b1, b2, real(0.0))

    @wp.func
    def euler3(M: mat33, a: vec3, b: vec3, c: vec3, prev: vec3):
        # arm_ik.euler3: both solutions of M = R(a, q0) R(b, q1) R(c, q2), the nearer prev first
        mc = mv3(M, c)
        first, second = sp2(a, b, c, mc)
        v = vec3(c[2], real(0.0), -c[0])
        if wp.abs(c[0]) < real(0.9):
            v = vec3(real(0.0), -c[2], c[1])
        out0 = vec3()
        out1 = vec3()
        for k in range(2):
            q0 = first[0]
            q1 = first[1]
            if k == 1:
                q0 = second[0]
                q1 = second[1]
            r1 = axis_angle(b, q1)
            rb = mv3(r1, c)
            if norm3(cross3(a, rb)) < real(1e-9):
                q0 = prev[0]  # gimbal lock: q0 keeps its value, q2 takes the rest
            r0 = axis_angle(a, q0)
            r01 = mm(r0, r1)
            rest = mm(wp.transpose(r01), M)
            q2 = sp1(c, v, mv3(rest, v))
            sol = vec3(prev[0] + wrap(q0 - prev[0]), prev[1] + wrap(q1 - prev[1]), prev[2] + wrap(q2 - prev[2]))
            if k == 0:
                out0 = sol
            else:
                out1 = sol
        d0 = wp.abs(out0[0] - prev[0]) + wp.abs(out0[1] - prev[1]) + wp.abs(out0[2] - prev[2])
        d1 = wp.abs(out1[0] - prev[0]) + wp.abs(out1[1] - prev[1]) + wp.abs(out1[2] - prev[2])
        if d1 < d0:
            return out1, out0
        return out0, out1

    @wp.func
    def pick(s0: vec3, s1: vec3, pack: wp.array(dtype=real), first: int):
        # arm_ik._pick: the first solution within the joints' limits (else the nearer), clipped into them
        sol = s0
        inside = int(1)
        for j in range(3):
            if not (pack[149 + first + j] <= s0[j] and s0[j] <= pack[156 + first + j]):
                inside = int(0)
        if inside == 0:
            inside = int(1)
            for j in range(3):
                if not (pack[149 + first + j] <= s1[j] and s1[j] <= pack[156 + first + j]):
                    inside = int(0)
            if inside == 1:
                sol = s1
        return vec3(wp.min(wp.max(sol[0], pack[149 + first]), pack[156 + first]),
                    wp.min(wp.max(sol[1], pack[150 + first]), pack[157 + first]),
                    wp.min(wp.max(sol[2], pack[151 + first]), pack[158 + first]))

    @wp.func
    def basis(u: vec3, w: vec3):
        # arm_ik._basis: columns u, w's unit part across u, their cross product
        t = w - scaled(dot3(w, u), u)
        t = divided(t, norm3(t))
        v = cross3(u, t)
        return mat33(u[0], t[0], v[0], u[1], t[1], v[1], u[2], t[2], v[2])

    @wp.func
    def angles(pack: wp.array(dtype=real), q_prev: vec7, S: vec3, E: vec3, W: vec3, R_tip: mat33,
               hinge_prev: vec3, scale: real):
        # arm_ik._angles: the seven angles putting the elbow on E, the wrist centre on W, the tip frame at R_tip
        up = origin_t(pack, 3)
        t4 = origin_t(pack, 4)
        O3 = origin_rot(pack, 3)
        a3 = mv3(O3, axis(pack, 3))
        O1 = origin_rot(pack, 1)
        O5 = origin_rot(pack, 5)
        arm = E - S
        fore = W - E
        n = cross3(arm, fore)
        nn = norm3(n)
        if nn <= real(FLAT) * scale * scale:
            # a straight arm: the hinge plane the elbow had
            n = hinge_prev - scaled(dot3(hinge_prev, arm) / dot3(arm, arm), arm)
            nn = norm3(n)
        n = divided(n, nn)
        u = divided(up, norm3(up))
        au = divided(arm, norm3(arm))
        B = mm(O1, origin_rot(pack, 2))
        B2 = mm(O5, origin_rot(pack, 6))
        b1 = mv3(O1, axis(pack, 1))
        c1 = mv3(B, axis(pack, 2))
        b2 = mv3(O5, axis(pack, 5))
        c2 = mv3(B2, axis(pack, 6))
        tip_t = wp.transpose(origin_rot(pack, 7))
        best = vec7()
        best_cost = real(wp.inf)
        for k in range(2):
            sign = real(1.0)
            if k == 1:
                sign = real(-1.0)
            trial = vec7()
            # the shoulder's last moving frame (arm_ik._triad): upper arm onto E - S, elbow axis onto +-n
            R2 = mm(basis(au, scaled(sign, n)), wp.transpose(basis(u, a3)))
            M = mm(mm(wp.transpose(origin_rot(pack, 0)), R2), wp.transpose(B))
            s0, s1 = euler3(M, axis(pack, 0), b1, c1, vec3(q_prev[0], q_prev[1], q_prev[2]))
            sh = pick(s0, s1, pack, 0)
            R3 = mm(R2, O3)
            q3 = q_prev[3] + wrap(sp1(axis(pack, 3), t4, mv3(wp.transpose(R3), fore)) - q_prev[3])
            F4 = mm(mm(R3, axis_angle(axis(pack, 3), q3)), origin_rot(pack, 4))
            M = mm(mm(mm(wp.transpose(F4), R_tip), tip_t), wp.transpose(B2))
            w0, w1 = euler3(M, axis(pack, 4), b2, c2, vec3(q_prev[4], q_prev[5], q_prev[6]))
            wr = pick(w0, w1, pack, 4)
            for j in range(3):
                trial[j] = sh[j]
                trial[4 + j] = wr[j]
            trial[3] = q3
            out = wp.max(wp.max(pack[152] - q3, q3 - pack[159]), real(0.0))
            cost = out * real(1e3)
            for j in range(7):
                cost += wp.abs(trial[j] - q_prev[j])
            if cost < best_cost:
                best_cost = cost
                best = trial
        q = vec7()
        for j in range(7):
            q[j] = wp.min(wp.max(best[j], pack[149 + j]), pack[156 + j])
        return q

    @wp.func
    def rel(F: mat33, G: mat33, i: int, j: int):
        # entry (i, j) of F^T G (fabrik.kernels.arm._rel)
        return F[0, i] * G[0, j] + F[1, i] * G[1, j] + F[2, i] * G[2, j]

    @wp.func
    def angle_between(F: mat33, G: mat33):
        # fabrik.kernels.arm.angle_between: the angle (radians) of the rotation F^T G
        v0 = rel(F, G, 2, 1) - rel(F, G, 1, 2)
        v1 = rel(F, G, 0, 2) - rel(F, G, 2, 0)
        v2 = rel(F, G, 1, 0) - rel(F, G, 0, 1)
        trace = rel(F, G, 0, 0) + rel(F, G, 1, 1) + rel(F, G, 2, 2)
        return wp.atan2(real(0.5) * wp.sqrt(v0 * v0 + v1 * v1 + v2 * v2), real(0.5) * (trace - real(1.0)))

    @wp.func
    def status(err: real, oerr: real, tol: real, otol: real, it: int, max_iter: int, far: bool):
        # srs_finish's status (fabrik.solvers.result.STATUSES): far, the goal beyond the arm's reach
        code = int(STALLED)
        if err <= tol and oerr <= otol:
            code = int(REACHED)
        elif it >= max_iter:
            code = int(MAX_ITERATIONS)
        elif far:
            code = int(UNREACHABLE)
        return code

    @wp.kernel(enable_backward=False, module="unique")
    def srs_rows(pack: wp.array(dtype=real), start: wp.array2d(dtype=real), start_step: int,
                 q_starts: wp.array2d(dtype=real), q_step: int, targets: wp.array2d(dtype=real),
                 rotations: wp.array3d(dtype=real), rot_step: int, oriented: int, tol: real, otol: real,
                 max_iter: int,
                 out_q: wp.array2d(dtype=real), positions: wp.array3d(dtype=real), frames: wp.array4d(dtype=real),
                 out_it: wp.array(dtype=i32), out_err: wp.array(dtype=real), out_oerr: wp.array(dtype=real),
                 out_code: wp.array(dtype=wp.int8), out_reached: wp.array(dtype=wp.bool)):
        # arm_ik.srs_finish for target i from start row i * start_step (srs_starts), start angles
        # row i * q_step, rotation row i * rot_step (read when oriented)
        i = wp.tid()
        s = i * start_step
        q_prev = vec7()
        for j in range(7):
            q_prev[j] = q_starts[i * q_step, j]
        target_p = vec3(targets[i, 0], targets[i, 1], targets[i, 2])
        ri = i * rot_step
        target_R = mat33(rotations[ri, 0, 0], rotations[ri, 0, 1], rotations[ri, 0, 2], rotations[ri, 1, 0],
                         rotations[ri, 1, 1], rotations[ri, 1, 2], rotations[ri, 2, 0], rotations[ri, 2, 1],
                         rotations[ri, 2, 2])
        S = start_point(start, s, 0)
        E0 = start_point(start, s, 3)
        W0 = start_point(start, s, 6)
        T0 = start_point(start, s, 9)
        hinge_prev = start_point(start, s, 12)
        tip_frame = mat33(start[s, 15], start[s, 16], start[s, 17], start[s, 18], start[s, 19], start[s, 20],
                          start[s, 21], start[s, 22], start[s, 23])
        l1 = norm3(E0 - S)
        l2 = norm3(W0 - E0)
        l3 = norm3(T0 - W0)
        gap_lo = pack[166]
        gap_hi = pack[167]
        it = int(1)
        goal = target_p
        E = E0
        W = W0
        R_tip = target_R
        if oriented != 0:
            goal = target_p + mv3(target_R, vec3(pack[163], pack[164], pack[165]))
            E, W = elbow_on_circle(S, E0, goal, l1, l2, gap_lo, gap_hi, hinge_prev, start[s, 24])
        else:
            E, W, T, it = fabrik_points(S, E0, W0, T0, goal, l1, l2, l3, tol, max_iter, gap_lo, gap_hi)
            # the hand's roll kept: the previous tip frame turned onto the new hand direction
            old = divided(T0 - W0, l3)
            new = divided(T - W, l3)
            R_tip = mm(rotation_between(old, new), tip_frame)
        q = angles(pack, q_prev, S, E, W, R_tip, hinge_prev, pack[168])
        for k in range(7):  # on the limits exactly, never a rounding past them
            q[k] = wp.min(wp.max(q[k], pack[149 + k]), pack[156 + k])
            out_q[i, k] = q[k]
        forward_into(pack, q, positions, frames, i)
        x = positions[i, 7, 0] - target_p[0]
        y = positions[i, 7, 1] - target_p[1]
        z = positions[i, 7, 2] - target_p[2]
        err = wp.sqrt(x * x + y * y + z * z)
        oerr = real(0.0)
        if oriented != 0:
            oerr = angle_between(frame_at(frames, i, 7), target_R)
        extra = l3  # the goal is the tip's: the hand's length counts
        if oriented != 0:
            extra = real(0.0)  # the goal is the wrist centre's
        code = status(err, oerr, tol, otol, it, max_iter, norm3(goal - S) > l1 + l2 + extra)
        out_it[i] = it
        out_err[i] = err
        out_oerr[i] = oerr
        out_code[i] = wp.int8(code)
        out_reached[i] = code == 0

    @wp.kernel(enable_backward=False, module="unique")
    def pose_defects(poses: wp.array3d(dtype=real), limit: real, bad_count: wp.array(dtype=i32),
                     bad: wp.array(dtype=i32)):
        # fabrik.kernels.arm.rotation_defect of row i's 3 x 3 block (poses (N, 3, 3) or (N, 4, 4)), with
        # transform_defect's last-row test for transforms; rows off by more than limit (or NaN) listed in bad
        i = wp.tid()
        a = poses[i, 0, 0]
        b = poses[i, 0, 1]
        c = poses[i, 0, 2]
        d = poses[i, 1, 0]
        e = poses[i, 1, 1]
        f = poses[i, 1, 2]
        g = poses[i, 2, 0]
        h = poses[i, 2, 1]
        k = poses[i, 2, 2]
        det = a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g)
        rows = wp.max(wp.max(wp.abs(a * a + b * b + c * c - real(1.0)), wp.abs(d * d + e * e + f * f - real(1.0))),
                      wp.abs(g * g + h * h + k * k - real(1.0)))
        across = wp.max(wp.max(wp.abs(a * d + b * e + c * f), wp.abs(a * g + b * h + c * k)),
                        wp.abs(d * g + e * h + f * k))
        off = wp.max(wp.max(rows, across), wp.abs(det - real(1.0)))
        if poses.shape[1] == 4:
            off = wp.max(wp.max(off, wp.max(wp.abs(poses[i, 3, 0]), wp.abs(poses[i, 3, 1]))),
                         wp.max(wp.abs(poses[i, 3, 2]), wp.abs(poses[i, 3, 3] - real(1.0))))
        if not (off <= limit) or not wp.isfinite(a + b + c + d + e + f + g + h + k):  # (wp.max may drop a NaN)
            bad[wp.atomic_add(bad_count, 0, 1)] = i

    @wp.kernel(enable_backward=False, module="unique")
    def split_poses(poses: wp.array3d(dtype=real), points: wp.array2d(dtype=real), mats: wp.array3d(dtype=real)):
        # (N, 4, 4) transforms -> points (N, 3), rotations (N, 3, 3); one thread per row and axis
        i, r = wp.tid()
        points[i, r] = poses[i, r, 3]
        for c in range(3):
            mats[i, r, c] = poses[i, r, c]

    @wp.kernel(enable_backward=False, module="unique")
    def scatter_rows(rows: wp.array(dtype=i32), src: wp.array2d(dtype=real), dst: wp.array2d(dtype=real)):
        # dst[rows[k]] <- src[k] (rows of any width)
        k, c = wp.tid()
        dst[rows[k], c] = src[k, c]

    return wp, SimpleNamespace(real=real, dtype=np.float64 if precision == "float64" else np.float32,
                               srs_starts=srs_starts, srs_rows=srs_rows, pose_defects=pose_defects,
                               split_poses=split_poses, scatter_rows=scatter_rows)
