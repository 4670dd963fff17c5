"""``solve_batch(skeleton, ..., backend="warp")``: multi-end-effector FABRIK on a tree (the paper's
sections 4.1-4.2, with the library's held rigid groups and limb swing) as an NVIDIA Warp kernel,
one thread per row of targets, on a GPU or the CPU.

What a thread runs is ``fabrik.kernels.fabrik_tree.fabrik_tree`` without joint limits (no frames)
and without engine options (weights, poles, obstacles), operation for operation, for any
``rigid_sub_bases`` and ``swing_limbs``: the library's defaults (``"auto"``, True) as well as the
plain configuration (False, False). ``solve_batch`` sends a batch here for method ``"fabrik"`` on
a skeleton without limits and without ``reach_step``
(``fabrik.solvers.batch_skeleton.device_blocker``). Per row:

* the set-up of ``tree_setup`` (the fixed root, taken from the root joint's target when it has one
  and no ``root`` was given; whether some target lies beyond its path's reach), the start pose
  moved onto the root (``move_to_root``), the limbs swung towards their targets
  (``swing_limbs``, the ``limb_tops`` entries of ``swing_limbs=True``), the bone vectors of the
  untargeted subtrees (``bone_at_length``), the check that the start already meets every target
  (0 iterations), and each rigid group's first turn (``fit_groups``: ``kabsch``, Horn's
  quaternion with Newton's method on the characteristic quartic, as ``rotation_fit`` computes it);
* the iterations: the forward stage from the effectors inwards (targeted joints pinned on their
  targets; a held group's centre placed by the group's fit, ``place_group_centre``, its members
  proposing through that fit; other sub-bases at the centroid of their children's proposals; each
  active joint proposing its parent at the bone's length), the backward stage from the root
  outwards (``place_on_line``; untargeted subtrees carried by translation; a held group seated on
  its bone's sphere, ``seat_group``, and its members placed, ``place_group_members``), the errors
  (``effector_errors``), the best pose seen, and the stopping rules: reached, the iteration cap
  (the best pose when it beats the last), and the no-progress window (``NO_PROGRESS_WINDOW``
  iterations without a ``PROGRESS_FRACTION`` gain and off course, ``still_converging``: the best
  pose, ``unreachable`` or ``stalled``); the stall test (``effectors_stalled``, then the whole pose
  compared with the iteration before, ``max_joint_move``) and what follows a confirmed stall: the
  releasable groups let go (once), else, when no path needs bending, the stop with the best pose
  (``unreachable`` when a target lies beyond its path's reach, ``stalled`` when the error is off
  course), or going on (still on course). The group fits' Newton steps
  (``refine_rotation``, ``seat_group``'s) are ``rotation_fit``'s, step for step.

Handed back to the CPU (the thread stops, flags its row, and the numba skeleton batch,
``fabrik.kernels.batch_tree``, solves that row from its start):

* a confirmed stall with some unreached path short of its target and on the line to it: there
  ``fabrik_tree`` moves that path's goal across the line for an iteration
  (``fabrik.kernels.singularity.nudge_stuck_paths``; the thread only runs the test);
* a group whose first turn ``kabsch`` takes from an SVD (its fit of nothing or of a repeated
  largest eigenvalue: a start with the members on their centre), which is not ported;
* ``max_iter`` 0 (the start pose made rigid, ``rebuild_lengths``), an iteration cap beyond one
  slice (``fabrik.solvers.registry.SLICE_ITERATIONS``: the CPU runs it in slices as ``fabrik.solve``
  does), and an explicit ``root`` off the root joint's own target (the CPU raises the ValueError).

So every answer is ``fabrik.solve``'s with the same options: bit for bit where the device rounds
as the CPU does (Warp's CPU device does), to rounding where it does not (a GPU may fuse a multiply
and an add); tests/solvers/test_batch_warp_tree.py checks 1e-9 of the skeleton's size, iterations
and statuses on Warp's CPU device. A thread that hands its row back appends its index to ``back``
(counted by ``back_count``), so only those rows cross to the host. Every thread works in rows of
scratch arrays the caller allocates (``scratch_shapes``: poses, proposals, each group's turn); the
group and limb tables are the same for every row (``held_tables``); the kernels are built on first
use per precision (``PRECISIONS`` of ``fabrik.kernels.batch_warp``).
"""

# (no `from __future__ import annotations`: Warp before 1.2 reads kernel annotations as objects)
import numpy as np

from fabrik.kernels.rigid_groups import RIGID_FIT_STEPS, SEAT_HALVINGS, SEAT_STEPS, SEAT_STOP
from fabrik.kernels.rotation_fit import UNIQUE_GAP
from fabrik.kernels.stopping import (MAX_ITERATIONS, NO_PROGRESS_WINDOW, PROGRESS_FRACTION, REACHED, STALLED,
                                     STALL_FLOOR, UNREACHABLE)
from fabrik.kernels.vec import TINY

#: Kernels per precision, built on first use.
_KERNELS: dict = {}


def kernels(precision: str = "float64"):
    """(warp, a namespace of the tree kernel for ``precision``), built once under
    ``fabrik._lazy.FIRST_USE``."""
    from fabrik.kernels.batch_warp import built_once

    return built_once(_KERNELS, precision, _make)


assert (PROGRESS_FRACTION == 0.01 and NO_PROGRESS_WINDOW == 50 and REACHED == 0 and UNREACHABLE == 1
        and STALLED == 2 and MAX_ITERATIONS == 3)  # spelled out in the kernel


def _make(precision: str):
    from types import SimpleNamespace

    from fabrik.kernels.batch_warp import import_warp

    wp = import_warp()
    real = wp.float64 if precision == "float64" else wp.float32
    i32 = wp.int32
    vec3 = wp.types.vector(length=3, dtype=real)
    mat3 = wp.types.matrix(shape=(3, 3), dtype=real)
    mat4 = wp.types.matrix(shape=(4, 4), dtype=real)
    fit_steps, seat_steps, seat_halvings, seat_stop = RIGID_FIT_STEPS, SEAT_STEPS, SEAT_HALVINGS, SEAT_STOP
    unique_gap = UNIQUE_GAP

    @wp.func
    def still_converging(err: real, prev_err: real, last_drop: real, older_drop: real, it: int, tol: real):
        # fabrik.kernels.stopping.still_converging after iteration ``it``: the drops before the
        # second and third iterations are inf there (last_drop, older_drop unknown: not read)
        on_course = int(1)
        drop = prev_err - err
        if drop <= real(1e-12) * prev_err:
            on_course = int(0)
        elif it >= 2 and last_drop > real(0.0):
            ratio = drop / last_drop
            if ratio < real(1.0) and it >= 3:
                faster = int(0)
                if older_drop > real(0.0):
                    if ratio > last_drop / older_drop:
                        faster = int(1)
                if faster == 0:
                    if not (err - drop * ratio / (real(1.0) - ratio) <= tol):
                        on_course = int(0)
        return on_course

    @wp.func
    def effector_errors(p: wp.array3d(dtype=real), targets: wp.array3d(dtype=real), target_idx: wp.array(dtype=i32),
                        errors: wp.array2d(dtype=real), i: int):
        # fabrik.kernels.tree.effector_errors for row i: each target's distance into errors[i], the largest returned
        err = real(0.0)
        for t in range(target_idx.shape[0]):
            e = target_idx[t]
            x = p[i, e, 0] - targets[i, t, 0]
            y = p[i, e, 1] - targets[i, t, 1]
            z = p[i, e, 2] - targets[i, t, 2]
            d = wp.sqrt(x * x + y * y + z * z)
            errors[i, t] = d
            if d > err:
                err = d
        return err

    @wp.func
    def place_on_line(p: wp.array3d(dtype=real), i: int, j: int, q: int, length: real, fx: real, fy: real, fz: real,
                      eps: real):
        # fabrik.kernels.vec.place_on_line for row i: joint j onto the ray from joint q through j, at
        # ``length`` from q; along the unit (fx, fy, fz) where the two are within eps
        x = p[i, j, 0] - p[i, q, 0]
        y = p[i, j, 1] - p[i, q, 1]
        z = p[i, j, 2] - p[i, q, 2]
        r = wp.sqrt(x * x + y * y + z * z)
        if r <= eps:
            x = fx
            y = fy
            z = fz
            r = real(1.0)
        lam = length / r
        p[i, j, 0] = p[i, q, 0] + lam * x
        p[i, j, 1] = p[i, q, 1] + lam * y
        p[i, j, 2] = p[i, q, 2] + lam * z

    # --- rigid groups: fabrik.kernels.rotation_fit and fabrik.kernels.rigid_groups, operation for
    # operation (3 x 3 matrices as Warp values; a row's group turns in ``rot``, (count, G, 3, 3))

    @wp.func
    def add_outer(h: mat3, d0: real, d1: real, d2: real, s0: real, s1: real, s2: real):
        # one pair of rows of rotation_fit.cross_covariance: h + d s^T, entry by entry
        out = h
        out[0, 0] = h[0, 0] + d0 * s0
        out[0, 1] = h[0, 1] + d0 * s1
        out[0, 2] = h[0, 2] + d0 * s2
        out[1, 0] = h[1, 0] + d1 * s0
        out[1, 1] = h[1, 1] + d1 * s1
        out[1, 2] = h[1, 2] + d1 * s2
        out[2, 0] = h[2, 0] + d2 * s0
        out[2, 1] = h[2, 1] + d2 * s1
        out[2, 2] = h[2, 2] + d2 * s2
        return out

    @wp.func
    def rotate3(r: mat3, x: real, y: real, z: real):
        # rigid_groups.rotate3: r (x, y, z)
        return (r[0, 0] * x + r[0, 1] * y + r[0, 2] * z, r[1, 0] * x + r[1, 1] * y + r[1, 2] * z,
                r[2, 0] * x + r[2, 1] * y + r[2, 2] * z)

    @wp.func
    def load_rot(rot: wp.array4d(dtype=real), i: int, g: int):
        return mat3(rot[i, g, 0, 0], rot[i, g, 0, 1], rot[i, g, 0, 2], rot[i, g, 1, 0], rot[i, g, 1, 1],
                    rot[i, g, 1, 2], rot[i, g, 2, 0], rot[i, g, 2, 1], rot[i, g, 2, 2])

    @wp.func
    def store_rot(rot: wp.array4d(dtype=real), i: int, g: int, r: mat3):
        for a in range(3):
            for b in range(3):
                rot[i, g, a, b] = r[a, b]

    @wp.func
    def fit_gradient(rot: mat3, h: mat3):
        # rotation_fit.fit_gradient: (gx, gy, gz, trace(P), the six entries of -trace's Hessian)
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
        return (p12 - p21, p20 - p02, p01 - p10, tr, tr - p00, real(-0.5) * (p01 + p10), real(-0.5) * (p02 + p20),
                tr - p11, real(-0.5) * (p12 + p21), tr - p22)

    @wp.func
    def definite(m00: real, m01: real, m11: real, det: real, scale: real):
        # rotation_fit.definite, as 1 or 0
        ok = int(0)
        if m00 > real(0.0):
            if m00 * m11 - m01 * m01 > real(0.0):
                if det > real(1e-12) * (scale * scale * scale + real(1e-300)):
                    ok = int(1)
        return ok

    @wp.func
    def det3(m00: real, m01: real, m02: real, m11: real, m12: real, m22: real):
        # rotation_fit.det3: the determinant of a symmetric 3 x 3
        return m00 * (m11 * m22 - m12 * m12) + m01 * (m02 * m12 - m01 * m22) + m02 * (m01 * m12 - m02 * m11)

    @wp.func
    def newton_turn(m00: real, m01: real, m02: real, m11: real, m12: real, m22: real, gx: real, gy: real, gz: real,
                    scale: real):
        # rotation_fit.newton_turn: M^-1 g, or g / scale where M is not clearly positive definite
        c00 = m11 * m22 - m12 * m12
        c01 = m02 * m12 - m01 * m22
        c02 = m01 * m12 - m02 * m11
        det = m00 * c00 + m01 * c01 + m02 * c02
        wx = real(0.0)
        wy = real(0.0)
        wz = real(0.0)
        if definite(m00, m01, m11, det, scale) != 0:
            c11 = m00 * m22 - m02 * m02
            c12 = m01 * m02 - m00 * m12
            c22 = m00 * m11 - m01 * m01
            inv = real(1.0) / det
            wx = (c00 * gx + c01 * gy + c02 * gz) * inv
            wy = (c01 * gx + c11 * gy + c12 * gz) * inv
            wz = (c02 * gx + c12 * gy + c22 * gz) * inv
        else:
            inv = real(1.0) / (scale + real(1e-300))
            wx = gx * inv
            wy = gy * inv
            wz = gz * inv
        return wx, wy, wz

    @wp.func
    def turn_rotation(rot: mat3, wx: real, wy: real, wz: real):
        # rotation_fit.turn_rotation: (exp([w]) rot with the turn capped at 1 rad, the angle turned);
        # a turn under 1e-12 rad is not made (rot and 0 returned)
        angle = wp.sqrt(wx * wx + wy * wy + wz * wz)
        out = rot
        turned = real(0.0)
        if not (angle < real(1e-12)):
            kx = wx / angle
            ky = wy / angle
            kz = wz / angle
            turned = wp.min(angle, real(1.0))
            c = wp.cos(turned)
            s = wp.sin(turned)
            t = real(1.0) - c
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
                out[0, col] = q00 * x + q01 * y + q02 * z
                out[1, col] = q10 * x + q11 * y + q12 * z
                out[2, col] = q20 * x + q21 * y + q22 * z
        return out, turned

    @wp.func
    def refine_rotation(rot: mat3, h: mat3):
        # rotation_fit.refine_rotation with RIGID_FIT_STEPS Newton steps
        out = rot
        for _ in range(fit_steps):
            gx, gy, gz, tr, m00, m01, m02, m11, m12, m22 = fit_gradient(out, h)
            wx, wy, wz = newton_turn(m00, m01, m02, m11, m12, m22, gx, gy, gz, wp.abs(tr))
            out, turned = turn_rotation(out, wx, wy, wz)
            if turned == real(0.0):
                break
        return out

    @wp.func
    def minor3(m: mat4, r0: int, r1: int, r2: int, c0: int, c1: int, c2: int):
        # rotation_fit._minor3
        return (m[r0, c0] * (m[r1, c1] * m[r2, c2] - m[r1, c2] * m[r2, c1])
                - m[r0, c1] * (m[r1, c0] * m[r2, c2] - m[r1, c2] * m[r2, c0])
                + m[r0, c2] * (m[r1, c0] * m[r2, c1] - m[r1, c1] * m[r2, c0]))

    @wp.func
    def kept(k: int, gap: int):
        # the k-th of the indices 0..3 without ``gap``: k, or k + 1 past the gap
        if k >= gap:
            return k + 1
        return k

    @wp.func
    def cofactor(m: mat4, row: int, col: int):
        # rotation_fit._cofactor: entry (row, col) of the adjugate of m
        r0 = kept(0, col)
        r1 = kept(1, col)
        r2 = kept(2, col)
        c0 = kept(0, row)
        c1 = kept(1, row)
        c2 = kept(2, row)
        sign = real(1.0)
        if (row + col) % 2 != 0:
            sign = real(-1.0)
        return sign * minor3(m, r0, r1, r2, c0, c1, c2)

    @wp.func
    def kabsch(h: mat3):
        # rotation_fit.kabsch (Horn's quaternion, Newton on the characteristic quartic from above):
        # (R, 1); (identity, 0) where kabsch falls back on an SVD (H of rank 0 or 1, a repeated
        # largest eigenvalue), which the device does not port: the row is handed back
        sxx = h[0, 0]
        sxy = h[1, 0]
        sxz = h[2, 0]
        syx = h[0, 1]
        syy = h[1, 1]
        syz = h[2, 1]
        szx = h[0, 2]
        szy = h[1, 2]
        szz = h[2, 2]
        n01 = syz - szy
        n02 = szx - sxz
        n03 = sxy - syx
        n12 = sxy + syx
        n13 = szx + sxz
        n23 = syz + szy
        n = mat4(sxx + syy + szz, n01, n02, n03,
                 n01, sxx - syy - szz, n12, n13,
                 n02, n12, -sxx + syy - szz, n23,
                 n03, n13, n23, -sxx - syy + szz)
        frob2 = real(0.0)
        for r in range(3):
            for c in range(3):
                frob2 = frob2 + h[r, c] * h[r, c]
        bound = wp.sqrt(real(3.0) * frob2)
        ok = int(0)
        rot = mat3(real(1.0), real(0.0), real(0.0), real(0.0), real(1.0), real(0.0), real(0.0), real(0.0),
                   real(1.0))
        if bound > real(0.0):
            det_s = (h[0, 0] * (h[1, 1] * h[2, 2] - h[1, 2] * h[2, 1])
                     - h[0, 1] * (h[1, 0] * h[2, 2] - h[1, 2] * h[2, 0])
                     + h[0, 2] * (h[1, 0] * h[2, 1] - h[1, 1] * h[2, 0]))
            c2 = real(-2.0) * frob2
            c1 = real(-8.0) * det_s
            c0 = real(0.0)  # _det4: cofactors along the first row
            for col in range(4):
                c0 = c0 + n[0, col] * cofactor(n, col, 0)
            lam = bound
            for _ in range(60):
                lam2 = lam * lam
                value = (lam2 + c2) * lam2 + c1 * lam + c0
                slope = real(4.0) * lam2 * lam + real(2.0) * c2 * lam + c1
                if not (slope > real(0.0)):
                    break
                step = value / slope
                lam = lam - step
                if step <= real(1e-15) * bound:
                    break
            for d in range(4):
                n[d, d] = n[d, d] - lam
            best = real(-1.0)
            q0 = real(0.0)
            q1 = real(0.0)
            q2 = real(0.0)
            q3 = real(0.0)
            for col in range(4):
                a0 = cofactor(n, 0, col)
                a1 = cofactor(n, 1, col)
                a2 = cofactor(n, 2, col)
                a3 = cofactor(n, 3, col)
                norm2 = a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3
                if norm2 > best:
                    best = norm2
                    q0 = a0
                    q1 = a1
                    q2 = a2
                    q3 = a3
            if wp.sqrt(best) > real(0.5) * real(unique_gap) * bound * bound * bound:
                ok = int(1)
                inv = real(1.0) / wp.sqrt(best)
                w = q0 * inv
                x = q1 * inv
                y = q2 * inv
                z = q3 * inv
                rot = mat3(w * w + x * x - y * y - z * z, real(2.0) * (x * y - w * z), real(2.0) * (x * z + w * y),
                           real(2.0) * (x * y + w * z), w * w - x * x + y * y - z * z, real(2.0) * (y * z - w * x),
                           real(2.0) * (x * z - w * y), real(2.0) * (y * z + w * x), w * w - x * x - y * y + z * z)
        return rot, ok

    @wp.func
    def held(g: int, releasable: wp.array(dtype=i32), released: int):
        # whether group g (>= 0) is held: not released at a stall (fabrik_tree's ``released[g]``)
        out = int(1)
        if released != 0 and releasable[g] != 0:
            out = int(0)
        return out

    @wp.func
    def fitted(g: int, active_members: wp.array(dtype=i32), releasable: wp.array(dtype=i32), released: int):
        # whether g names a held group with two or more active members, which fabrik_tree fits as
        # one body in the forward stage (g -1: no group)
        out = int(0)
        if g >= 0:
            if active_members[g] >= 2:
                out = held(g, releasable, released)
        return out

    @wp.func
    def member_means(p: wp.array3d(dtype=real), i: int, g: int, active: wp.array(dtype=i32),
                     group_start: wp.array(dtype=i32), group_members: wp.array(dtype=i32),
                     group_offsets: wp.array2d(dtype=real)):
        # rigid_groups.member_means for row i: (active members m, means of their rest offsets and
        # of their positions)
        m = int(0)
        ms0 = real(0.0)
        ms1 = real(0.0)
        ms2 = real(0.0)
        md0 = real(0.0)
        md1 = real(0.0)
        md2 = real(0.0)
        for idx in range(group_start[g], group_start[g + 1]):
            k = group_members[idx]
            if active[k] != 0:
                ms0 = ms0 + group_offsets[idx, 0]
                ms1 = ms1 + group_offsets[idx, 1]
                ms2 = ms2 + group_offsets[idx, 2]
                md0 = md0 + p[i, k, 0]
                md1 = md1 + p[i, k, 1]
                md2 = md2 + p[i, k, 2]
                m = m + 1
        rm = real(m)
        return m, ms0 / rm, ms1 / rm, ms2 / rm, md0 / rm, md1 / rm, md2 / rm

    @wp.func
    def fit_group(p: wp.array3d(dtype=real), i: int, centre: int, g: int, group_start: wp.array(dtype=i32),
                  group_members: wp.array(dtype=i32), group_offsets: wp.array2d(dtype=real),
                  rot: wp.array4d(dtype=real)):
        # one group of rigid_groups.fit_groups for row i: rot[i, g] <- kabsch of the rest offsets onto
        # every member's offset from the centre; 0 where kabsch would take the SVD
        h = mat3(real(0.0))
        for idx in range(group_start[g], group_start[g + 1]):
            k = group_members[idx]
            h = add_outer(h, p[i, k, 0] - p[i, centre, 0], p[i, k, 1] - p[i, centre, 1], p[i, k, 2] - p[i, centre, 2],
                          group_offsets[idx, 0], group_offsets[idx, 1], group_offsets[idx, 2])
        r, ok = kabsch(h)
        store_rot(rot, i, g, r)
        return ok

    @wp.func
    def place_group_centre_row(p: wp.array3d(dtype=real), i: int, centre: int, g: int, rot: wp.array4d(dtype=real),
                           active: wp.array(dtype=i32), group_start: wp.array(dtype=i32),
                           group_members: wp.array(dtype=i32), group_offsets: wp.array2d(dtype=real),
                           psum: wp.array3d(dtype=real), pcount: wp.array2d(dtype=i32), anchored: int):
        # rigid_groups.place_group_centre for row i (no weights): the group's turn refined towards its
        # members' positions (and, anchored, the centre's old one), the centre at the centroid of
        # the members' rigid proposals and its other children's
        m, ms0, ms1, ms2, md0, md1, md2 = member_means(p, i, g, active, group_start, group_members, group_offsets)
        rm = real(m)
        a = real(0.0)
        if anchored != 0:
            a = real(1.0)
        f = rm / (rm + a)
        cs0 = f * ms0
        cs1 = f * ms1
        cs2 = f * ms2
        cd0 = f * md0 + a * p[i, centre, 0] / (rm + a)
        cd1 = f * md1 + a * p[i, centre, 1] / (rm + a)
        cd2 = f * md2 + a * p[i, centre, 2] / (rm + a)
        h = mat3(real(0.0))
        for idx in range(group_start[g], group_start[g + 1]):
            k = group_members[idx]
            if active[k] != 0:
                h = add_outer(h, p[i, k, 0] - cd0, p[i, k, 1] - cd1, p[i, k, 2] - cd2, group_offsets[idx, 0] - cs0,
                              group_offsets[idx, 1] - cs1, group_offsets[idx, 2] - cs2)
        h = add_outer(h, p[i, centre, 0] - cd0, p[i, centre, 1] - cd1, p[i, centre, 2] - cd2, -a * cs0, -a * cs1,
                      -a * cs2)
        r = refine_rotation(load_rot(rot, i, g), h)
        store_rot(rot, i, g, r)
        total = real(m + pcount[i, centre])
        a0, a1, a2 = rotate3(r, ms0, ms1, ms2)
        p[i, centre, 0] = (rm * (md0 - a0) + psum[i, centre, 0]) / total
        p[i, centre, 1] = (rm * (md1 - a1) + psum[i, centre, 1]) / total
        p[i, centre, 2] = (rm * (md2 - a2) + psum[i, centre, 2]) / total

    @wp.func
    def place_group_members_row(p: wp.array3d(dtype=real), i: int, centre: int, g: int, rot: wp.array4d(dtype=real),
                            active: wp.array(dtype=i32), group_start: wp.array(dtype=i32),
                            group_members: wp.array(dtype=i32), group_offsets: wp.array2d(dtype=real),
                            carried: wp.array3d(dtype=real)):
        # rigid_groups.place_group_members for row i (no weights): the turn refined towards the active
        # members' forward-stage positions, every member at centre + R o (untargeted members' bone
        # vectors into carried)
        h = mat3(real(0.0))
        m = int(0)
        for idx in range(group_start[g], group_start[g + 1]):
            k = group_members[idx]
            if active[k] != 0:
                h = add_outer(h, p[i, k, 0] - p[i, centre, 0], p[i, k, 1] - p[i, centre, 1],
                              p[i, k, 2] - p[i, centre, 2], group_offsets[idx, 0], group_offsets[idx, 1],
                              group_offsets[idx, 2])
                m = m + 1
        r = load_rot(rot, i, g)
        if m > 0:
            r = refine_rotation(r, h)
            store_rot(rot, i, g, r)
        for idx in range(group_start[g], group_start[g + 1]):
            k = group_members[idx]
            for c in range(3):
                v = r[c, 0] * group_offsets[idx, 0] + r[c, 1] * group_offsets[idx, 1] + r[c, 2] * group_offsets[idx, 2]
                if active[k] != 0:
                    p[i, k, c] = p[i, centre, c] + v
                else:
                    carried[i, k, c] = v

    @wp.func
    def seat_value(rt: mat3, h: mat3, ms0: real, ms1: real, ms2: real, w0: real, w1: real, w2: real, m: real,
                   length: real):
        # rigid_groups.seat_value: tr(R^T H) - M / 2 (|w - R ms| - length)^2
        value = real(0.0)
        for r in range(3):
            for c in range(3):
                value = value + rt[r, c] * h[r, c]
        a0, a1, a2 = rotate3(rt, ms0, ms1, ms2)
        gap = wp.sqrt((w0 - a0) * (w0 - a0) + (w1 - a1) * (w1 - a1) + (w2 - a2) * (w2 - a2)) - length
        return value - real(0.5) * m * gap * gap

    @wp.func
    def seat_group_row(p: wp.array3d(dtype=real), i: int, centre: int, parent: int, length: real, g: int,
                   rot: wp.array4d(dtype=real), active: wp.array(dtype=i32), group_start: wp.array(dtype=i32),
                   group_members: wp.array(dtype=i32), group_offsets: wp.array2d(dtype=real), eps: real):
        # rigid_groups.seat_group for row i (no weights): the centre on its bone's sphere and the
        # group's turn chosen together (Newton steps on F(R), halved where F would drop)
        m, ms0, ms1, ms2, md0, md1, md2 = member_means(p, i, g, active, group_start, group_members, group_offsets)
        if m > 0:
            rm = real(m)
            h = mat3(real(0.0))  # sum_k m_k o_k^T, then H
            for idx in range(group_start[g], group_start[g + 1]):
                k = group_members[idx]
                if active[k] != 0:
                    h = add_outer(h, p[i, k, 0], p[i, k, 1], p[i, k, 2], group_offsets[idx, 0],
                                  group_offsets[idx, 1], group_offsets[idx, 2])
            h = add_outer(h, -(rm * md0), -(rm * md1), -(rm * md2), ms0, ms1, ms2)
            w0 = md0 - p[i, parent, 0]
            w1 = md1 - p[i, parent, 1]
            w2 = md2 - p[i, parent, 2]
            rt = load_rot(rot, i, g)
            now = seat_value(rt, h, ms0, ms1, ms2, w0, w1, w2, rm, length)
            for _ in range(seat_steps):
                gx, gy, gz, tr, k00, k01, k02, k11, k12, k22 = fit_gradient(rt, h)
                a0, a1, a2 = rotate3(rt, ms0, ms1, ms2)
                v0 = w0 - a0
                v1 = w1 - a1
                v2 = w2 - a2
                rr = wp.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
                aa = a0 * a0 + a1 * a1 + a2 * a2
                scale = wp.abs(tr) + rm * aa
                if rr > eps:
                    b0 = v1 * a2 - v2 * a1
                    b1 = v2 * a0 - v0 * a2
                    b2 = v0 * a1 - v1 * a0
                    f = rm * (rr - length) / rr
                    gx = gx - f * b0
                    gy = gy - f * b1
                    gz = gz - f * b2
                    cb = rm / (rr * rr)
                    k00 = k00 + cb * b0 * b0
                    k01 = k01 + cb * b0 * b1
                    k02 = k02 + cb * b0 * b2
                    k11 = k11 + cb * b1 * b1
                    k12 = k12 + cb * b1 * b2
                    k22 = k22 + cb * b2 * b2
                    cb = f / (rr * rr)
                    diag = aa + v0 * a0 + v1 * a1 + v2 * a2
                    e00 = k00 + f * (diag - a0 * a0 - v0 * a0) - cb * b0 * b0
                    e01 = k01 - f * (a0 * a1 + real(0.5) * (a0 * v1 + v0 * a1)) - cb * b0 * b1
                    e02 = k02 - f * (a0 * a2 + real(0.5) * (a0 * v2 + v0 * a2)) - cb * b0 * b2
                    e11 = k11 + f * (diag - a1 * a1 - v1 * a1) - cb * b1 * b1
                    e12 = k12 - f * (a1 * a2 + real(0.5) * (a1 * v2 + v1 * a2)) - cb * b1 * b2
                    e22 = k22 + f * (diag - a2 * a2 - v2 * a2) - cb * b2 * b2
                    if definite(e00, e01, e11, det3(e00, e01, e02, e11, e12, e22), scale) != 0:
                        k00 = e00
                        k01 = e01
                        k02 = e02
                        k11 = e11
                        k12 = e12
                        k22 = e22
                wx, wy, wz = newton_turn(k00, k01, k02, k11, k12, k22, gx, gy, gz, scale)
                # F is not concave everywhere: halve a step that would lower it
                trial = rt
                turned = real(0.0)
                taken = int(0)  # 1: a step raised F, or none was made (turned 0)
                for _ in range(seat_halvings):
                    trial, turned = turn_rotation(rt, wx, wy, wz)
                    if turned == real(0.0):
                        taken = int(1)
                        break
                    value = seat_value(trial, h, ms0, ms1, ms2, w0, w1, w2, rm, length)
                    if value >= now:
                        now = value
                        taken = int(1)
                        break
                    wx = wx * real(0.5)
                    wy = wy * real(0.5)
                    wz = wz * real(0.5)
                if taken == 0:
                    break  # no step along w raises F
                rt = trial
                if turned < real(seat_stop):
                    break
            store_rot(rot, i, g, rt)
            a0, a1, a2 = rotate3(rt, ms0, ms1, ms2)
            # the centre where the members' fit puts it, pulled onto the sphere
            x = p[i, centre, 0]
            y = p[i, centre, 1]
            z = p[i, centre, 2]
            p[i, centre, 0] = md0 - a0
            p[i, centre, 1] = md1 - a1
            p[i, centre, 2] = md2 - a2
            place_on_line(p, i, centre, parent, length, (x - p[i, parent, 0]) / length,
                          (y - p[i, parent, 1]) / length, (z - p[i, parent, 2]) / length, eps)

    # --- limb swing: fabrik.kernels.tree.swing_limbs without frames

    @wp.func
    def rotation_between(a0: real, a1: real, a2: real, b0: real, b1: real, b2: real):
        # fabrik.kernels.frames.rotation_between: the smallest rotation taking unit a onto unit b
        # (a half turn about a perpendicular when they are opposite)
        c = a0 * b0 + a1 * b1 + a2 * b2
        r = mat3(real(0.0))
        if real(1.0) + c < real(1e-12):
            e0 = real(0.0)
            e1 = real(1.0)
            if wp.abs(a0) < real(0.9):
                e0 = real(1.0)
                e1 = real(0.0)
            e2 = real(0.0)
            p0 = a1 * e2 - a2 * e1
            p1 = a2 * e0 - a0 * e2
            p2 = a0 * e1 - a1 * e0
            nn = wp.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
            u = vec3(p0 / nn, p1 / nn, p2 / nn)
            for a in range(3):
                for b in range(3):
                    r[a, b] = real(2.0) * u[a] * u[b]
                    if a == b:
                        r[a, b] = r[a, b] - real(1.0)
        else:
            v0 = a1 * b2 - a2 * b1
            v1 = a2 * b0 - a0 * b2
            v2 = a0 * b1 - a1 * b0
            k = real(1.0) / (real(1.0) + c)
            r = mat3(real(1.0) - k * (v1 * v1 + v2 * v2), -v2 + k * v0 * v1, v1 + k * v0 * v2,
                     v2 + k * v0 * v1, real(1.0) - k * (v0 * v0 + v2 * v2), -v0 + k * v1 * v2,
                     -v1 + k * v0 * v2, v0 + k * v1 * v2, real(1.0) - k * (v0 * v0 + v1 * v1))
        return r

    @wp.func
    def swing_limbs(p: wp.array3d(dtype=real), i: int, limb_tops: wp.array(dtype=i32), parents: wp.array(dtype=i32),
                    order: wp.array(dtype=i32), subtree_end: wp.array(dtype=i32), position: wp.array(dtype=i32),
                    slot: wp.array(dtype=i32), targets: wp.array3d(dtype=real), eps: real):
        # tree.swing_limbs for row i (no frames): each limb (limb_span: order[start:stop] about its
        # pivot) turned so that its targeted joints' centroid points at their targets' centroid
        for a in range(limb_tops.shape[0]):
            entry = limb_tops[a]
            pivot = int(0)
            start = int(0)
            stop = int(0)
            if entry >= 0:
                pivot = parents[entry]
                start = position[entry]
                stop = subtree_end[entry]
            else:
                pivot = -entry - 1
                start = position[pivot] + 1
                stop = subtree_end[pivot]
            cx = real(0.0)
            cy = real(0.0)
            cz = real(0.0)
            tx = real(0.0)
            ty = real(0.0)
            tz = real(0.0)
            m = int(0)
            for b in range(start, stop):
                j = order[b]
                s = slot[j]
                if s >= 0:
                    cx = cx + p[i, j, 0]
                    cy = cy + p[i, j, 1]
                    cz = cz + p[i, j, 2]
                    tx = tx + targets[i, s, 0]
                    ty = ty + targets[i, s, 1]
                    tz = tz + targets[i, s, 2]
                    m = m + 1
            if m > 0:
                rm = real(m)
                cx = cx / rm - p[i, pivot, 0]
                cy = cy / rm - p[i, pivot, 1]
                cz = cz / rm - p[i, pivot, 2]
                tx = tx / rm - p[i, pivot, 0]
                ty = ty / rm - p[i, pivot, 1]
                tz = tz / rm - p[i, pivot, 2]
                nc = wp.sqrt(cx * cx + cy * cy + cz * cz)
                nt = wp.sqrt(tx * tx + ty * ty + tz * tz)
                if not (nc <= eps or nt <= eps):
                    r = rotation_between(cx / nc, cy / nc, cz / nc, tx / nt, ty / nt, tz / nt)
                    for b in range(start, stop):  # vec.rotate_span
                        j = order[b]
                        x = p[i, j, 0] - p[i, pivot, 0]
                        y = p[i, j, 1] - p[i, pivot, 1]
                        z = p[i, j, 2] - p[i, pivot, 2]
                        for c in range(3):
                            p[i, j, c] = p[i, pivot, c] + r[c, 0] * x + r[c, 1] * y + r[c, 2] * z

    @wp.func
    def stuck_on_line_row(p: wp.array3d(dtype=real), targets: wp.array3d(dtype=real), errors: wp.array2d(dtype=real),
                      target_idx: wp.array(dtype=i32), parents: wp.array(dtype=i32), lengths: wp.array(dtype=real),
                      slot: wp.array(dtype=i32), i: int, tol: real, stol: real, eps: real, scale: real):
        # fabrik.kernels.singularity.nudge_stuck_paths's test for row i, as 1 or 0: is some unreached
        # path short of its target and on the line to it (where fabrik_tree moves its goal across)?
        k = target_idx.shape[0]
        stuck = int(0)
        for t in range(k):
            e = target_idx[t]
            if e != 0 and errors[i, t] > tol and stuck == 0:
                base = parents[e]  # path_base
                while base > 0 and slot[base] < 0:
                    base = parents[base]
                ptotal = real(0.0)  # path_reach
                longest = real(0.0)
                jj = e
                while jj != base:
                    ptotal = ptotal + lengths[jj]
                    longest = wp.max(longest, lengths[jj])
                    jj = parents[jj]
                inner = wp.max(real(0.0), real(2.0) * longest - ptotal)
                ox = p[i, base, 0]
                oy = p[i, base, 1]
                oz = p[i, base, 2]
                tx = targets[i, t, 0] - ox
                ty = targets[i, t, 1] - oy
                tz = targets[i, t, 2] - oz
                dist = wp.sqrt(tx * tx + ty * ty + tz * tz)
                unavoidable = real(0.0)
                if dist > ptotal:
                    unavoidable = dist - ptotal
                elif dist < inner - tol:
                    unavoidable = inner - dist
                if not (errors[i, t] <= unavoidable + stol):
                    near = real(0.0)
                    if dist <= ptotal:
                        near = real(1e-6) * ptotal  # NEAR_LINE
                    # path_on_line
                    ux = tx
                    uy = ty
                    uz = tz
                    best = dist
                    jj = e
                    while jj != base:
                        x = p[i, jj, 0] - ox
                        y = p[i, jj, 1] - oy
                        z = p[i, jj, 2] - oz
                        r = wp.sqrt(x * x + y * y + z * z)
                        if r > best:
                            best = r
                            ux = x
                            uy = y
                            uz = z
                        jj = parents[jj]
                    if best <= eps:
                        stuck = int(1)
                    else:
                        ux = ux / best
                        uy = uy / best
                        uz = uz / best
                        lim = wp.max(near, real(1e-9) * scale)
                        lim = lim * lim
                        on = int(1)
                        along = tx * ux + ty * uy + tz * uz  # off_line2
                        x = tx - along * ux
                        y = ty - along * uy
                        z = tz - along * uz
                        if x * x + y * y + z * z > lim:
                            on = int(0)
                        jj = e
                        while jj != base:
                            x = p[i, jj, 0] - ox
                            y = p[i, jj, 1] - oy
                            z = p[i, jj, 2] - oz
                            along = x * ux + y * uy + z * uz
                            x = x - along * ux
                            y = y - along * uy
                            z = z - along * uz
                            if x * x + y * y + z * z > lim:
                                on = int(0)
                            jj = parents[jj]
                        stuck = on
        return stuck

    @wp.kernel(enable_backward=False, module="unique")
    def fabrik_tree_rows(targets: wp.array3d(dtype=real), starts: wp.array3d(dtype=real), start_step: int,
                         roots: wp.array2d(dtype=real), root_step: int, parents: wp.array(dtype=i32),
                         lengths: wp.array(dtype=real), rest_dirs: wp.array2d(dtype=real),
                         reach: wp.array(dtype=real), target_idx: wp.array(dtype=i32), slot: wp.array(dtype=i32),
                         active: wp.array(dtype=i32), active_list: wp.array(dtype=i32),
                         group_of: wp.array(dtype=i32), group_start: wp.array(dtype=i32),
                         group_members: wp.array(dtype=i32), group_offsets: wp.array2d(dtype=real),
                         in_group: wp.array(dtype=i32), releasable: wp.array(dtype=i32),
                         active_members: wp.array(dtype=i32), group_centre: wp.array(dtype=i32),
                         limb_tops: wp.array(dtype=i32), order: wp.array(dtype=i32),
                         subtree_end: wp.array(dtype=i32), position: wp.array(dtype=i32), tol: real,
                         max_iter: int, scale: real, eps: real, stol: real, back_at_cap: int,
                         best_p: wp.array3d(dtype=real), psum: wp.array3d(dtype=real),
                         pcount: wp.array2d(dtype=i32), snapshot: wp.array3d(dtype=real),
                         carried: wp.array3d(dtype=real), before: wp.array3d(dtype=real),
                         best_errors: wp.array2d(dtype=real), rot: wp.array4d(dtype=real),
                         p: wp.array3d(dtype=real), errors: wp.array2d(dtype=real), out_it: wp.array(dtype=i32),
                         out_err: wp.array(dtype=real), out_code: wp.array(dtype=wp.int8),
                         out_reached: wp.array(dtype=wp.bool), back_count: wp.array(dtype=i32),
                         back: wp.array(dtype=i32)):
        # root_step -1: no root given, each start's root (or the root joint's target) is fixed
        i = wp.tid()
        n = parents.shape[0]
        k = target_idx.shape[0]
        n_active = active_list.shape[0]
        n_groups = group_start.shape[0] - 1
        si = i * start_step
        for j in range(n):
            for c in range(3):
                p[i, j, c] = starts[si, j, c]
        code = int(-2)
        # tree_setup: the fixed root, a bad explicit root (handed back), unreachable targets
        rx = starts[si, 0, 0]
        ry = starts[si, 0, 1]
        rz = starts[si, 0, 2]
        if root_step >= 0:
            rx = roots[i * root_step, 0]
            ry = roots[i * root_step, 1]
            rz = roots[i * root_step, 2]
        s0 = slot[0]
        if s0 >= 0:
            if root_step < 0:
                rx = targets[i, s0, 0]
                ry = targets[i, s0, 1]
                rz = targets[i, s0, 2]
            else:
                x = targets[i, s0, 0] - rx
                y = targets[i, s0, 1] - ry
                z = targets[i, s0, 2] - rz
                if wp.sqrt(x * x + y * y + z * z) > real(1e-12) * scale:
                    code = int(-1)  # BAD_ROOT: the CPU path raises the error
        unreachable = int(0)
        for t in range(k):
            x = targets[i, t, 0] - rx
            y = targets[i, t, 1] - ry
            z = targets[i, t, 2] - rz
            if wp.sqrt(x * x + y * y + z * z) > reach[target_idx[t]] * (real(1.0) + real(1e-12)) + real(1e-300):
                unreachable = int(1)
        if max_iter == 0:
            code = int(-1)  # rebuild_lengths of an unsolved start: the CPU path
        # move_to_root
        sx = rx - p[i, 0, 0]
        sy = ry - p[i, 0, 1]
        sz = rz - p[i, 0, 2]
        for j in range(n):
            p[i, j, 0] = p[i, j, 0] + sx
            p[i, j, 1] = p[i, j, 1] + sy
            p[i, j, 2] = p[i, j, 2] + sz
        swing_limbs(p, i, limb_tops, parents, order, subtree_end, position, slot, targets, eps)
        # untargeted subtrees: their bone vectors (bone_at_length)
        for j in range(1, n):
            if active[j] == 0:
                q = parents[j]
                x = p[i, j, 0] - p[i, q, 0]
                y = p[i, j, 1] - p[i, q, 1]
                z = p[i, j, 2] - p[i, q, 2]
                r = wp.sqrt(x * x + y * y + z * z)
                if r > eps:
                    sc = lengths[j] / r
                    carried[i, j, 0] = sc * x
                    carried[i, j, 1] = sc * y
                    carried[i, j, 2] = sc * z
                else:
                    carried[i, j, 0] = lengths[j] * rest_dirs[j, 0]
                    carried[i, j, 1] = lengths[j] * rest_dirs[j, 1]
                    carried[i, j, 2] = lengths[j] * rest_dirs[j, 2]
        err = effector_errors(p, targets, target_idx, errors, i)
        it = int(0)
        if code == -2 and err <= tol and p[i, 0, 0] == rx and p[i, 0, 1] == ry and p[i, 0, 2] == rz:
            hold = int(1)  # lengths_hold
            for j in range(1, n):
                q = parents[j]
                x = p[i, j, 0] - p[i, q, 0]
                y = p[i, j, 1] - p[i, q, 1]
                z = p[i, j, 2] - p[i, q, 2]
                if wp.abs(wp.sqrt(x * x + y * y + z * z) - lengths[j]) > real(1e-9) * scale:
                    hold = int(0)
            if hold != 0:
                code = int(0)
        if code == -2:
            for g in range(n_groups):  # fit_groups
                if fit_group(p, i, group_centre[g], g, group_start, group_members, group_offsets, rot) == 0:
                    code = int(-1)  # kabsch's SVD fallback: the CPU path
        released = int(0)  # the releasable groups let go at a confirmed stall (fabrik_tree's ``released``)
        can_release = int(0)
        for g in range(n_groups):
            if releasable[g] != 0:
                can_release = int(1)
        best_err = err
        for j in range(n):
            for c in range(3):
                best_p[i, j, c] = p[i, j, c]
        for t in range(k):
            best_errors[i, t] = errors[i, t]
        progress_ref = err
        since = int(0)
        check_pose = int(0)
        use_best = int(0)
        prev_err = err
        drop = real(0.0)
        last_drop = real(0.0)  # (known from the second iteration on; older_drop from the third)
        older_drop = real(0.0)
        while code == -2 and it < max_iter:
            # remember_pose
            for t in range(k):
                for c in range(3):
                    before[i, t, c] = p[i, target_idx[t], c]
            if check_pose != 0:
                for j in range(n):
                    for c in range(3):
                        snapshot[i, j, c] = p[i, j, c]
            prev_err = err
            older_drop = last_drop
            last_drop = drop
            # forward stage: from the effectors inwards, sub-bases at the centroid of their proposals
            for a in range(n_active):
                j = active_list[a]
                pcount[i, j] = 0
                psum[i, j, 0] = real(0.0)
                psum[i, j, 1] = real(0.0)
                psum[i, j, 2] = real(0.0)
            for m in range(n_active - 1):
                j = active_list[n_active - 1 - m]  # active_list[0] is the root
                s = slot[j]
                if s >= 0:
                    p[i, j, 0] = targets[i, s, 0]
                    p[i, j, 1] = targets[i, s, 1]
                    p[i, j, 2] = targets[i, s, 2]
                elif fitted(group_of[j], active_members, releasable, released) != 0:
                    place_group_centre_row(p, i, j, group_of[j], rot, active, group_start, group_members, group_offsets,
                                       psum, pcount, 1 - releasable[group_of[j]])
                elif pcount[i, j] > 0:
                    w = real(1.0) / real(pcount[i, j])
                    p[i, j, 0] = psum[i, j, 0] * w
                    p[i, j, 1] = psum[i, j, 1] * w
                    p[i, j, 2] = psum[i, j, 2] * w
                if fitted(in_group[j], active_members, releasable, released) != 0:
                    continue  # a held member proposes through its group's fit at the centre
                q = parents[j]
                x = p[i, j, 0] - p[i, q, 0]
                y = p[i, j, 1] - p[i, q, 1]
                z = p[i, j, 2] - p[i, q, 2]
                r = wp.sqrt(x * x + y * y + z * z)
                if r > eps:
                    s2 = lengths[j] / r
                    x = s2 * x
                    y = s2 * y
                    z = s2 * z
                else:
                    x = lengths[j] * rest_dirs[j, 0]
                    y = lengths[j] * rest_dirs[j, 1]
                    z = lengths[j] * rest_dirs[j, 2]
                psum[i, q, 0] = psum[i, q, 0] + (p[i, j, 0] - x)
                psum[i, q, 1] = psum[i, q, 1] + (p[i, j, 1] - y)
                psum[i, q, 2] = psum[i, q, 2] + (p[i, j, 2] - z)
                pcount[i, q] = pcount[i, q] + 1
            # backward stage: the root back on its base, then outwards along every branch
            p[i, 0, 0] = rx
            p[i, 0, 1] = ry
            p[i, 0, 2] = rz
            g = group_of[0]
            if g >= 0:
                if held(g, releasable, released) != 0:
                    place_group_members_row(p, i, 0, g, rot, active, group_start, group_members, group_offsets, carried)
            for j in range(1, n):
                q = parents[j]
                if active[j] != 0:
                    place_on_line(p, i, j, q, lengths[j], rest_dirs[j, 0], rest_dirs[j, 1], rest_dirs[j, 2], eps)
                else:
                    p[i, j, 0] = p[i, q, 0] + carried[i, j, 0]
                    p[i, j, 1] = p[i, q, 1] + carried[i, j, 1]
                    p[i, j, 2] = p[i, q, 2] + carried[i, j, 2]
                g = group_of[j]
                if g >= 0:
                    if held(g, releasable, released) != 0:
                        # a centre that is itself a held member of its parent's group (nested) was
                        # placed by that group: only its own group's turn is fitted
                        nested = fitted(in_group[j], active_members, releasable, released)
                        if releasable[g] == 0 and active[j] != 0 and nested == 0:
                            if lengths[j] > eps:
                                seat_group_row(p, i, j, q, lengths[j], g, rot, active, group_start, group_members,
                                           group_offsets, eps)
                        place_group_members_row(p, i, j, g, rot, active, group_start, group_members, group_offsets,
                                            carried)
            it = it + 1
            err = effector_errors(p, targets, target_idx, errors, i)
            if err <= tol:
                code = int(0)
            else:
                drop = prev_err - err
                if err < best_err:
                    best_err = err
                    for j in range(n):
                        for c in range(3):
                            best_p[i, j, c] = p[i, j, c]
                    for t in range(k):
                        best_errors[i, t] = errors[i, t]
                if err < (real(1.0) - real(0.01)) * progress_ref:
                    progress_ref = err
                    since = int(0)
                else:
                    since = since + 1
                    if since >= 50:
                        on_course = still_converging(err, prev_err, last_drop, older_drop, it, tol)
                        if on_course == 0:
                            use_best = int(1)
                            code = int(2)
                            if unreachable != 0:
                                code = int(1)
                let_go = int(0)
                if code == -2:
                    if check_pose != 0:
                        check_pose = int(0)
                        moved = real(0.0)  # max_joint_move, squared
                        for j in range(n):
                            x = p[i, j, 0] - snapshot[i, j, 0]
                            y = p[i, j, 1] - snapshot[i, j, 1]
                            z = p[i, j, 2] - snapshot[i, j, 2]
                            d = x * x + y * y + z * z
                            if d > moved:
                                moved = d
                        if wp.sqrt(moved) < stol:
                            if can_release != 0:
                                # the releasable groups let go, for the iteration after this one
                                can_release = int(0)
                                released = int(1)
                                let_go = int(1)
                            else:
                                # a confirmed stall: a path stuck on the line to its target is bent on the CPU
                                if stuck_on_line_row(p, targets, errors, target_idx, parents, lengths, slot, i, tol, stol,
                                                 eps, scale) != 0:
                                    code = int(-1)  # the target moved across the line: on the CPU
                                elif unreachable != 0 or still_converging(err, prev_err, last_drop, older_drop, it,
                                                                          tol) == 0:
                                    use_best = int(1)
                                    code = int(2)
                                    if unreachable != 0:
                                        code = int(1)
                    if code == -2 and let_go == 0:
                        moved = real(0.0)  # effectors_stalled
                        for t in range(k):
                            e = target_idx[t]
                            x = p[i, e, 0] - before[i, t, 0]
                            y = p[i, e, 1] - before[i, t, 1]
                            z = p[i, e, 2] - before[i, t, 2]
                            d = x * x + y * y + z * z
                            if d > moved:
                                moved = d
                        if moved < stol * stol and err > (real(1.0) - real(0.01)) * prev_err:
                            check_pose = int(1)
        if code == -2:
            code = int(3)
            if best_err < err:
                use_best = int(1)
            if back_at_cap != 0:
                code = int(-1)  # a cap beyond one slice: the CPU path solves it, in slices as fabrik.solve does
        if use_best != 0 and code >= 0:
            err = best_err
            for j in range(n):
                for c in range(3):
                    p[i, j, c] = best_p[i, j, c]
            for t in range(k):
                errors[i, t] = best_errors[i, t]
        out_it[i] = it
        out_err[i] = err
        out_code[i] = wp.int8(code)
        out_reached[i] = code == 0
        if code == -1:
            back[wp.atomic_add(back_count, 0, 1)] = i

    @wp.kernel(enable_backward=False, module="unique")
    def scatter_rows(rows: wp.array(dtype=i32), src: wp.array2d(dtype=real), dst: wp.array2d(dtype=real)):
        r, c = wp.tid()
        dst[rows[r], c] = src[r, c]

    @wp.kernel(enable_backward=False, module="unique")
    def put_column(src: wp.array2d(dtype=real), t: int, dst: wp.array3d(dtype=real)):
        # a mapping's (N, 3) goals of one joint into column t of the stacked (N, k, 3) targets
        r, c = wp.tid()
        dst[r, t, c] = src[r, c]

    return wp, SimpleNamespace(real=real, dtype=np.float64 if precision == "float64" else np.float32,
                               fabrik_tree_rows=fabrik_tree_rows, scatter_rows=scatter_rows, put_column=put_column)


def tree_scalars(lengths: np.ndarray, tol: float) -> tuple[float, float, float]:
    """(scale, eps, stall tolerance) of a tree with bone ``lengths`` (n,), as ``tree_setup``,
    ``fabrik_tree`` and ``stall_tol`` compute them."""
    total = 0.0
    for length in lengths:
        total += float(length)
    scale = total if total > 0.0 else 1.0
    return scale, TINY * scale, max(tol, STALL_FLOOR * scale)


def tree_tables(parents: np.ndarray, target_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(slot (n,), active (n,), active_list) int32 for targets on joints ``target_idx``, as
    ``tree_setup`` builds them (the same for every row: indices are checked before)."""
    n = parents.shape[0]
    slot = np.full(n, -1, dtype=np.int32)
    active = np.zeros(n, dtype=np.int32)
    for t, j in enumerate(target_idx.tolist()):
        slot[j] = t
    for i in range(n - 1, 0, -1):
        if slot[i] >= 0:
            active[i] = 1
        if active[i]:
            active[parents[i]] = 1
    active[0] = 1
    return slot, active, np.flatnonzero(active).astype(np.int32)


def held_tables(groups, limbs: np.ndarray, tree, active: np.ndarray) -> list[np.ndarray]:
    """The kernel's group and limb inputs in its argument order (group_of ... position): the
    ``Groups`` record ``groups`` of a ``rigid_sub_bases`` value (int32 tables, ``group_offsets``
    (M, 3) float64 in model units; with no group every joint's group_of and in_group -1), the
    count of each group's active members (``active`` (n,) from ``tree_tables``: the same for every
    row, as ``fit_groups`` counts them) and each group's centre; the ``limb_tops`` entries of
    ``swing_limbs`` (empty: none swing) and the tree's depth-first ``order``, ``subtree_end`` and
    ``position`` that ``limb_span`` reads."""
    n = tree.parents.shape[0]
    n_groups = groups.group_start.shape[0] - 1
    if n_groups > 0:
        group_of, in_group = groups.group_of, groups.in_group
    else:
        group_of = in_group = np.full(n, -1)
    members = np.zeros(max(n_groups, 1), dtype=np.int32)
    centre = np.zeros(max(n_groups, 1), dtype=np.int32)
    for g in range(n_groups):
        ids = groups.group_members[groups.group_start[g]:groups.group_start[g + 1]]
        members[g] = int(np.count_nonzero(active[ids]))
        centre[g] = int(np.flatnonzero(group_of == g)[0])
    as32 = [group_of, groups.group_start, groups.group_members]
    rest = [in_group, groups.releasable, members, centre, limbs, tree.order, tree.subtree_end, tree.position]
    return ([np.ascontiguousarray(a, dtype=np.int32) for a in as32]
            + [np.ascontiguousarray(groups.group_offsets, dtype=np.float64).reshape(-1, 3)]
            + [np.ascontiguousarray(a, dtype=np.int32) for a in rest])


def scratch_shapes(count: int, n: int, k: int, n_groups: int = 0) -> list[tuple[tuple, str]]:
    """The per-thread scratch arrays of ``fabrik_tree_rows`` in its argument order, as (shape,
    "real" or "int32"): best_p, psum, pcount, snapshot, carried, before, best_errors, and rot
    (count, max(n_groups, 1), 3, 3), each row's rigid-group turns."""
    return [((count, n, 3), "real"), ((count, n, 3), "real"), ((count, n), "int32"), ((count, n, 3), "real"),
            ((count, n, 3), "real"), ((count, k, 3), "real"), ((count, k), "real"),
            ((count, max(n_groups, 1), 3, 3), "real")]


__all__ = ["kernels", "tree_scalars", "tree_tables", "held_tables", "scratch_shapes"]
