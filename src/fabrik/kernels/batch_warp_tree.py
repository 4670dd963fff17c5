"""``solve_batch(skeleton, ..., backend="warp")``: the paper's multi-end-effector FABRIK on a tree
(sections 4.1-4.2) as an NVIDIA Warp kernel, one thread per row of targets, on a GPU or the CPU.

What a thread runs is ``fabrik.kernels.fabrik_tree.fabrik_tree`` for the *plain configuration*,
operation for operation: no joint limits (no frames), no rigid groups (``rigid_sub_bases=False``:
sub-bases free, at the centroid of their children's proposals), no limb swing
(``swing_limbs=False``) and no engine options (weights, poles, obstacles). ``solve_batch`` sends a
batch here when those are its kernel inputs (``fabrik.solvers.batch_skeleton.device_blocker``:
method ``"fabrik"`` on a skeleton without limits, no rigid groups, no limbs to swing; any
``rigid_sub_bases`` value that makes no group on that skeleton counts). That is, per row:

* the set-up of ``tree_setup`` (the fixed root, taken from the root joint's target when it has one
  and no ``root`` was given; whether some target lies beyond its path's reach), the start pose
  moved onto the root (``move_to_root``), the bone vectors of the untargeted subtrees
  (``bone_at_length``), and the check that the start already meets every target (0 iterations);
* the iterations: the forward stage from the effectors inwards (targeted joints pinned on their
  targets, sub-bases at the centroid of their children's proposals, each active joint proposing
  its parent at the bone's length), the backward stage from the root outwards (``place_on_line``;
  untargeted subtrees carried by translation), the errors (``effector_errors``), the best pose
  seen, and the stopping rules: reached, the iteration cap (the best pose when it beats the last),
  and the no-progress window (``NO_PROGRESS_WINDOW`` iterations without a ``PROGRESS_FRACTION``
  gain and off course, ``still_converging``: the best pose, ``unreachable`` or ``stalled``); the
  stall test (``effectors_stalled``, then the whole pose compared with the iteration before,
  ``max_joint_move``) and what follows a confirmed stall when no path needs bending: the stop with
  the best pose (``unreachable`` when a target lies beyond its path's reach, ``stalled`` when the
  error is off course), or going on (still on course).

Handed back to the CPU (the thread stops, flags its row, and the numba skeleton batch,
``fabrik.kernels.batch_tree``, solves that row from its start):

* a confirmed stall with some unreached path short of its target and on the line to it: there
  ``fabrik_tree`` moves that path's goal across the line for an iteration
  (``fabrik.kernels.singularity.nudge_stuck_paths``; the thread only runs the test);
* ``max_iter`` 0 (the start pose made rigid, ``rebuild_lengths``), an iteration cap beyond one
  slice (``fabrik.solvers.registry.SLICE_ITERATIONS``: the CPU runs it in slices as ``fabrik.solve``
  does), and an explicit ``root`` off the root joint's own target (the CPU raises the ValueError).

So every answer is ``fabrik.solve``'s (``rigid_sub_bases=False, swing_limbs=False``): bit for bit
where the device rounds as the CPU does, to rounding where it does not (a GPU may fuse a multiply
and an add); tests/solvers/test_batch_warp_tree.py checks 1e-9 of the skeleton's size, iterations
and statuses on Warp's CPU device. A thread that hands its row back appends its index to ``back``
(counted by ``back_count``), so only those rows cross to the host. Every thread works in rows of
scratch arrays the caller allocates (``scratch_shapes``); the kernels are built on first use per
precision (``PRECISIONS`` of ``fabrik.kernels.batch_warp``).
"""

# (no `from __future__ import annotations`: Warp before 1.2 reads kernel annotations as objects)
import numpy as np

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

    @wp.kernel(enable_backward=False, module="unique")
    def fabrik_tree_rows(targets: wp.array3d(dtype=real), starts: wp.array3d(dtype=real), start_step: int,
                         roots: wp.array2d(dtype=real), root_step: int, parents: wp.array(dtype=i32),
                         lengths: wp.array(dtype=real), rest_dirs: wp.array2d(dtype=real),
                         reach: wp.array(dtype=real), target_idx: wp.array(dtype=i32), slot: wp.array(dtype=i32),
                         active: wp.array(dtype=i32), active_list: wp.array(dtype=i32), tol: real, max_iter: int,
                         scale: real, eps: real, stol: real, back_at_cap: int,
                         best_p: wp.array3d(dtype=real), psum: wp.array3d(dtype=real),
                         pcount: wp.array2d(dtype=i32), snapshot: wp.array3d(dtype=real),
                         carried: wp.array3d(dtype=real), before: wp.array3d(dtype=real),
                         best_errors: wp.array2d(dtype=real),
                         p: wp.array3d(dtype=real), errors: wp.array2d(dtype=real), out_it: wp.array(dtype=i32),
                         out_err: wp.array(dtype=real), out_code: wp.array(dtype=wp.int8),
                         out_reached: wp.array(dtype=wp.bool), back_count: wp.array(dtype=i32),
                         back: wp.array(dtype=i32)):
        # root_step -1: no root given, each start's root (or the root joint's target) is fixed
        i = wp.tid()
        n = parents.shape[0]
        k = target_idx.shape[0]
        n_active = active_list.shape[0]
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
                elif pcount[i, j] > 0:
                    w = real(1.0) / real(pcount[i, j])
                    p[i, j, 0] = psum[i, j, 0] * w
                    p[i, j, 1] = psum[i, j, 1] * w
                    p[i, j, 2] = psum[i, j, 2] * w
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
            for j in range(1, n):
                q = parents[j]
                if active[j] != 0:  # place_on_line
                    x = p[i, j, 0] - p[i, q, 0]
                    y = p[i, j, 1] - p[i, q, 1]
                    z = p[i, j, 2] - p[i, q, 2]
                    r = wp.sqrt(x * x + y * y + z * z)
                    if r <= eps:
                        x = rest_dirs[j, 0]
                        y = rest_dirs[j, 1]
                        z = rest_dirs[j, 2]
                        r = real(1.0)
                    lam = lengths[j] / r
                    p[i, j, 0] = p[i, q, 0] + lam * x
                    p[i, j, 1] = p[i, q, 1] + lam * y
                    p[i, j, 2] = p[i, q, 2] + lam * z
                else:
                    p[i, j, 0] = p[i, q, 0] + carried[i, j, 0]
                    p[i, j, 1] = p[i, q, 1] + carried[i, j, 1]
                    p[i, j, 2] = p[i, q, 2] + carried[i, j, 2]
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
                            # a confirmed stall. nudge_stuck_paths: is some unreached path short of
                            # its target and on the line to it (fabrik.kernels.singularity)?
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
                            if stuck != 0:
                                code = int(-1)  # the target moved across the line: on the CPU
                            elif unreachable != 0 or still_converging(err, prev_err, last_drop, older_drop, it,
                                                                      tol) == 0:
                                use_best = int(1)
                                code = int(2)
                                if unreachable != 0:
                                    code = int(1)
                    if code == -2:
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


def scratch_shapes(count: int, n: int, k: int) -> list[tuple[tuple, str]]:
    """The per-thread scratch arrays of ``fabrik_tree_rows`` in its argument order, as (shape,
    "real" or "int32"): best_p, psum, pcount, snapshot, carried, before, best_errors."""
    return [((count, n, 3), "real"), ((count, n, 3), "real"), ((count, n), "int32"), ((count, n, 3), "real"),
            ((count, n, 3), "real"), ((count, k, 3), "real"), ((count, k), "real")]


__all__ = ["kernels", "tree_scalars", "tree_tables", "scratch_shapes"]
