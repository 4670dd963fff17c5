"""CCD and the Jacobian methods on a tree of joints with several end effectors (section 5.2,
Table 2), with or without joint limits: one iteration driver, compiled.

Inputs are the records of ``fabrik.kernels.fabrik_tree`` (``Tree``, ``TreeLimits``, ``TreeTask``);
a solve given frames follows them and keeps every pose within the limits, one given none ((0, 3,
3) and ``fabrik.model.rig.NO_LIMITS``) turns the bones freely.

Degrees of freedom: every bone turns about its parent joint as a ball joint, independently of its
siblings, carrying everything below it (at a sub-base each child bone has its own ball joint: the
same freedom FABRIK's point model has). The root's position is fixed at ``root`` (the whole pose
moves there first); with limits its orientation is held at ``initial_frames[0]``. Joints move
only by rotations, so bone lengths stay as they are.

* CCD (``method`` ``CCD``), effector by effector as games do: one iteration visits the effectors
  in the order of ``target_idx``; for each one not yet within ``tol`` it makes one sweep: every
  bone on the path from the effector up to the root, or up to the nearest targeted (pinned)
  ancestor, innermost last, turns about its parent joint so that the effector points at its
  target. A sweep for one effector moves others that hang below the same bones.
* Jacobian methods (``TRANSPOSE``, ``DLS``, ``SVD_DLS``; Buss & Kim 2005), every effector stacked
  into one system: 3 rows per effector, 3 columns per bone on a path to a target (a ball joint in
  world axes at its parent q; the block of effector e is ``w x (p_e - p_q)``); the step is
  ``stacked_step``'s, and every bone turns by the accumulated world rotation.

With limits (``fabrik.kernels.tree_limits``) a CCD turn is restricted by the turned bone's limit
(in ``ccd_sweeps``; zero-length bones, having no direction, are skipped) and the joints are
re-seated on their frames after each iteration; a Jacobian step turns frames and the tree is then
clamped from the root outwards (``clamp_tree``; no columns for zero-length bones, untargeted bones
move rigidly with their parent). So every pose satisfies every limit.

Set-up and stopping: the start pose moves with the root and is rebuilt with exact lengths (with
limits: clamped into them, ``clamp_tree``); the stopping rules are those of
``fabrik.kernels.stopping`` (the stall confirmed by ``pose_check``), and a solve with nothing to
turn (no bone on a path to a target; with limits, no non-zero one) stops before its first
iteration. Without limits a stalled path lying straight on the line to its target is first folded
(``fabrik.kernels.singularity``; a fold would break limits), and every answer is rebuilt with
exact lengths at the end. With limits the best pose seen is kept, and after
``NO_PROGRESS_WINDOW`` iterations without a ``PROGRESS_FRACTION`` improvement of the best error
the solve stops on it (limits clamped against a step can make a method cycle).
"""

import numpy as np
from numba import njit

from fabrik.kernels.frames import axis_angle_matrix, reorthonormalise, rotate_frame, rotation_between, transport
from fabrik.kernels.jacobian import clamp_max_abs, restrict_frame
from fabrik.kernels.singularity import MAX_ESCAPES, fold_stuck_paths
from fabrik.kernels.stopping import (MAX_ITERATIONS, NO_PROGRESS_WINDOW, PROGRESS_FRACTION, REACHED, STALLED,
                                      UNREACHABLE, max_effector_move, pose_check, remember_pose, stall_tol)
from fabrik.kernels.tree import effector_errors, move_to_root, rebuild_lengths, tree_setup
from fabrik.kernels.tree_limits import row_limits
from fabrik.kernels.vec import TINY, rotate_subtree

#: ``method`` codes of ``tree_method``: the Jacobian methods' (as the chain kernel's) and CCD.
TRANSPOSE, DLS, SVD_DLS, CCD = 0, 1, 2, 3


@njit(cache=True, error_model="numpy")
def clamped_error_vector(p, target_idx, targets, max_error_step, e_vec):
    """e_vec (3k,) <- each effector's error ``target - p[effector]``, clamped per effector to a
    length of at most ``max_error_step`` (Buss and Kim's clamping)."""
    for t in range(target_idx.shape[0]):
        j = target_idx[t]
        x = targets[t, 0] - p[j, 0]
        y = targets[t, 1] - p[j, 1]
        z = targets[t, 2] - p[j, 2]
        r = np.sqrt(x * x + y * y + z * z)
        s = max_error_step / r if r > max_error_step else 1.0
        e_vec[3 * t] = s * x
        e_vec[3 * t + 1] = s * y
        e_vec[3 * t + 2] = s * z


@njit(cache=True, error_model="numpy")
def fill_stacked_jacobian(p, parents, col, target_idx, jac):
    """jac (3k, n_cols) <- the stacked Jacobian of ball joints, one per bone: the block of effector
    t and bone b (the bone into joint b, turning about its parent a) is -[p_e - p_a]_x, for every
    bone b on the effector's path to the root whose column ``col[b]`` is >= 0 (others have none)."""
    jac[:, :] = 0.0
    for t in range(target_idx.shape[0]):
        e = target_idx[t]
        b = e
        while b > 0:
            a = parents[b]
            c0 = col[b]
            if c0 >= 0:
                rx = p[e, 0] - p[a, 0]
                ry = p[e, 1] - p[a, 1]
                rz = p[e, 2] - p[a, 2]
                r0 = 3 * t
                jac[r0, c0 + 1] = rz
                jac[r0, c0 + 2] = -ry
                jac[r0 + 1, c0] = -rz
                jac[r0 + 1, c0 + 2] = rx
                jac[r0 + 2, c0] = ry
                jac[r0 + 2, c0 + 1] = -rx
            b = a


@njit(cache=True, error_model="numpy")
def svd_factors(jac):
    """The thin SVD (u, s, vt) of ``jac``. Where singular values repeat (or vanish) LAPACK may return
    any orthonormal basis of their subspaces, so the bits of a step depend on the platform; the
    tests replace this function by one that turns those bases (tests/solvers/test_singularity.py)."""
    return np.linalg.svd(jac, full_matrices=False)


@njit(cache=True, error_model="numpy")
def stacked_step(jac, e_vec, method, alpha, damp2, max_angle_step, dw):
    """One Jacobian step for a stacked system, written into ``dw`` (n_cols,).

    jac (n_rows, n_cols), e_vec (n_rows,): the stacked Jacobian and (clamped) error. ``method``
    TRANSPOSE: ``alpha J^T e`` (``alpha`` <= 0: Buss and Kim's adaptive alpha); DLS:
    ``J^T (J J^T + damp2 I)^-1 e``; SVD_DLS: the same through the SVD of J. The largest
    component is then clamped to ``max_angle_step`` (radians), scaling the whole step.
    """
    n_rows = jac.shape[0]
    n_cols = jac.shape[1]
    if method == TRANSPOSE:
        g = jac.T @ e_vec
        jg = jac @ g
        num = 0.0
        den = 0.0
        for r in range(n_rows):
            num += e_vec[r] * jg[r]
            den += jg[r] * jg[r]
        gain = alpha
        if alpha <= 0.0:
            gain = num / den if den > 1e-300 else 0.0
        dw[:] = gain * g
    elif method == DLS:
        m = jac @ jac.T
        # damping plus 1e-13 of the mean diagonal: on a model of bones of 1e8 units, J J^T is
        # ~1e16 and a damping of 1.1 vanishes in its rounding, leaving a rank-deficient system
        # singular (np.linalg.solve raised); the floor is invisible to a model of ordinary size
        ridge = damp2 + 1e-13 * np.trace(m) / max(n_rows, 1)
        for r in range(n_rows):
            m[r, r] += ridge
        dw[:] = jac.T @ np.linalg.solve(m, e_vec)
    else:
        u, sv, vt = svd_factors(jac)
        dw[:] = 0.0
        for q in range(sv.shape[0]):
            ue = 0.0
            for r in range(n_rows):
                ue += u[r, q] * e_vec[r]
            w = sv[q] / (sv[q] * sv[q] + damp2) if sv[q] * sv[q] + damp2 > 1e-300 else 0.0
            for c in range(n_cols):
                dw[c] += w * ue * vt[q, c]
    clamp_max_abs(dw, max_angle_step)


@njit(cache=True, error_model="numpy")
def step_rotations(world, dw, col, parents, rot):
    """world[i] <- the world rotation a Jacobian step ``dw`` gives bone i: its parent's times its
    own column's rotation vector (axis times angle); the root's is the identity. rot (3, 3) is
    scratch."""
    world[0] = np.eye(3)
    for i in range(1, parents.shape[0]):
        q = parents[i]
        c0 = col[i]
        if c0 >= 0:
            angle = np.sqrt(dw[c0] * dw[c0] + dw[c0 + 1] * dw[c0 + 1] + dw[c0 + 2] * dw[c0 + 2])
            if angle >= 1e-300:
                axis_angle_matrix(rot, dw[c0] / angle, dw[c0 + 1] / angle, dw[c0 + 2] / angle, angle)
            else:
                for r in range(3):
                    for c in range(3):
                        rot[r, c] = 1.0 if r == c else 0.0
            rotate_frame(world[i], rot, world[q])  # world[q] @ rot
        else:
            world[i] = world[q]


@njit(cache=True, error_model="numpy")
def clamp_tree(p, F, desired, follow, parents, lengths, Q, limits, root3, row_active, H, D, G, d):
    """Place the tree from ``root3`` outwards (parents come before children). A non-zero bone i
    with ``follow[i]`` takes the world frame ``desired[i]``; otherwise ``desired[i]`` is its frame
    relative to its parent's (kept rigid). Either is then restricted by row ``parents[i]`` against
    ``F[parents[i]] Q[i]``. Zero-length bones copy their parent's place and frame. ``F[0]`` is
    left as it is. Writes p, F[1:], row_active."""
    n = parents.shape[0]
    for k in range(3):
        p[0, k] = root3[k]
    row_active[:] = 0
    for i in range(1, n):
        q = parents[i]
        if lengths[i] == 0.0:
            for k in range(3):
                p[i, k] = p[q, k]
            F[i, :, :] = F[q]
            continue
        if follow[i]:
            D[:, :] = desired[i]
        else:
            rotate_frame(D, desired[i], F[q])  # F[q] @ desired[i]
        if row_limits(limits, q):
            rotate_frame(H, Q[i], F[q])  # the reference frame F[q] @ Q[i]
            if restrict_frame(F[i], D, H, limits[q], d, G):
                row_active[q] = 1
        else:
            F[i, :, :] = D
        # an untargeted bone's frame is a product of its parent's and its own every iteration:
        # without this its rounding drift reaches the bone's length (1e-8 in 300 iterations)
        reorthonormalise(F[i])
        for k in range(3):
            p[i, k] = p[q, k] + lengths[i] * F[i, k, 1]


@njit(cache=True, error_model="numpy")
def ccd_sweeps(p, F, parents, lengths, order, subtree_end, position, Q, limits, slot, target_idx, targets, tol, eps,
               limited, row_active, R, W, H, G, D, tmp, d):
    """One CCD iteration (module docstring): a sweep per effector not yet within ``tol``, every
    turn restricted by its limit when ``limited`` (which also turns the frames F, and then re-seats
    the joints on them). R, W, H, G, D, tmp (3, 3) and d (3,) are scratch."""
    for t in range(target_idx.shape[0]):
        e = target_idx[t]
        if e == 0:
            continue
        child = e
        j = parents[e]
        while j >= 0:
            d2 = 0.0
            for c in range(3):
                d2 += (p[e, c] - targets[t, c]) ** 2
            if d2 <= tol * tol:
                break
            if not limited or lengths[child] > 0.0:
                ax = p[e, 0] - p[j, 0]
                ay = p[e, 1] - p[j, 1]
                az = p[e, 2] - p[j, 2]
                bx = targets[t, 0] - p[j, 0]
                by = targets[t, 1] - p[j, 1]
                bz = targets[t, 2] - p[j, 2]
                na = np.sqrt(ax * ax + ay * ay + az * az)
                nb = np.sqrt(bx * bx + by * by + bz * bz)
                if na > eps and nb > eps:
                    rotation_between(R, ax / na, ay / na, az / na, bx / nb, by / nb, bz / nb)
                    if limited:
                        # W <- the turn taking the bone's frame to R F[child] restricted by row j
                        # against its reference F[j] Q[child]; the frames of the bone and of
                        # everything below it turn by W, so every limit holds after the turn
                        rotate_frame(D, F[child], R)
                        if row_limits(limits, j):
                            rotate_frame(H, Q[child], F[j])  # F[j] @ Q[child]
                            if restrict_frame(D, D, H, limits[j], d, G):
                                row_active[j] = 1
                        for r in range(3):  # W = D F[child]^T
                            for c in range(3):
                                W[r, c] = D[r, 0] * F[child, c, 0] + D[r, 1] * F[child, c, 1] + D[r, 2] * F[child, c, 2]
                        for m in range(position[child], subtree_end[child]):
                            i = order[m]
                            if i == child:
                                F[i, :, :] = D
                            else:
                                rotate_frame(tmp, F[i], W)
                                F[i, :, :] = tmp
                        rotate_subtree(p, child, j, order, subtree_end, position, W)
                    else:
                        rotate_subtree(p, child, j, order, subtree_end, position, R)
            if slot[j] >= 0:
                break
            child = j
            j = parents[j]
    if limited:  # every joint re-seated on its parent and its (re-orthonormalised) frame: no drift
        for i in range(1, parents.shape[0]):
            q = parents[i]
            if lengths[i] > 0.0:
                reorthonormalise(F[i])
            else:
                F[i, :, :] = F[q]
            for c in range(3):
                p[i, c] = p[q, c] + lengths[i] * F[i, c, 1]


@njit(cache=True, error_model="numpy")
def tree_method(tree, limits, task, tol, max_iter, method, settings):
    """Solve a tree for several targets with CCD or a Jacobian method (module docstring).

    ``tol`` >= 0 and ``max_iter`` >= 0 as in the chain kernels; ``method`` one of ``CCD``,
    ``TRANSPOSE``, ``DLS``, ``SVD_DLS``; ``settings = (damping, max_angle_step, max_error_step,
    alpha)`` (read by the Jacobian methods only).

    Returns what ``fabrik.kernels.fabrik_tree.fabrik_tree`` returns, ``row_active`` 1 where a
    limit of that joint went active during the solve.
    """
    parents, lengths, rest_dirs, reach, order, subtree_end, position = tree
    Q, rows = limits[0], limits[1]
    target_idx, targets, initial, initial_frames, root, root_from_target = task
    damping, max_angle_step, max_error_step, alpha = settings
    limited = initial_frames.shape[0] > 0  # frames followed: the limit step
    n = parents.shape[0]
    k = target_idx.shape[0]
    errors = np.zeros(k)
    row_active = np.zeros(n, dtype=np.int64)
    code, scale, slot, active, root3, unreachable = tree_setup(parents, lengths, reach, target_idx, targets, root,
                                                               root_from_target)
    if code != 0:
        return initial.copy(), initial_frames.copy(), row_active, 0, errors, code
    eps = TINY * scale
    desired = np.empty((n if limited else 0, 3, 3))
    R = np.empty((3, 3))
    W = np.empty((3, 3))
    H = np.empty((3, 3))
    G = np.empty((3, 3))
    D = np.empty((3, 3))
    tmp = np.empty((3, 3))
    d = np.empty(3)
    F = initial_frames.copy()
    if limited:
        # the start pose hung from root3, each frame carried onto its bone's direction in
        # ``initial`` (its own +Y where the bone has collapsed), then clamped into the limits
        p = np.empty((n, 3))
        for i in range(1, n):
            q = parents[i]
            x = initial[i, 0] - initial[q, 0]
            y = initial[i, 1] - initial[q, 1]
            z = initial[i, 2] - initial[q, 2]
            r = np.sqrt(x * x + y * y + z * z)
            if r > TINY * (1.0 + lengths[i]) and lengths[i] > 0.0:
                transport(desired[i], initial_frames[i], x / r, y / r, z / r)
            else:
                desired[i, :, :] = initial_frames[i]
        clamp_tree(p, F, desired, np.ones(n, dtype=np.bool_), parents, lengths, Q, rows, root3, row_active, H, D, G, d)
    else:
        p = initial.copy()
        move_to_root(p, root3)
        rebuild_lengths(p, parents, lengths, rest_dirs, eps)
    err = effector_errors(p, target_idx, targets, errors)
    if err <= tol:
        return p, F, row_active, 0, errors, REACHED

    # the bones that can turn: one ball joint (3 Jacobian columns) per bone on a path to a target
    # (with limits, per non-zero bone: a zero-length one has no frame of its own); targeted paths
    # follow the step
    col = np.full(n, -1, dtype=np.int64)
    follow = np.zeros(n, dtype=np.bool_)
    n_cols = 0
    for i in range(1, n):
        if active[i]:
            follow[i] = True
            if not limited or lengths[i] > 0.0:
                col[i] = n_cols
                n_cols += 3
    width = 1 if method == CCD else max(n_cols, 1)
    jac = np.zeros((3 * k, width))
    e_vec = np.zeros(3 * k)
    dw = np.zeros(width)
    world = np.zeros((n, 3, 3))
    src = np.empty((n, 3))
    before = np.empty((k, 3))
    snapshot = np.empty((n, 3))
    best_p = p.copy()
    best_F = F.copy()
    best_err = err
    since_best = 0
    check_pose = False
    bends = 0
    damp2 = damping * damping
    stop = UNREACHABLE if unreachable else STALLED
    status = MAX_ITERATIONS
    if n_cols == 0 and max_iter > 0:
        status = stop  # nothing to turn (no bone on a path to a target)
    it = 0
    while status == MAX_ITERATIONS and it < max_iter:
        remember_pose(p, target_idx, before, snapshot, check_pose)
        prev_err = err
        if method == CCD:
            ccd_sweeps(p, F, parents, lengths, order, subtree_end, position, Q, rows, slot, target_idx, targets, tol,
                       eps, limited, row_active, R, W, H, G, D, tmp, d)
        else:
            clamped_error_vector(p, target_idx, targets, max_error_step, e_vec)
            fill_stacked_jacobian(p, parents, col, target_idx, jac)
            stacked_step(jac, e_vec, method, alpha, damp2, max_angle_step, dw)
            step_rotations(world, dw, col, parents, R)
            if limited:
                # targeted bones' frames turned by their world rotation; untargeted bones keep
                # their frame relative to their parent
                for i in range(1, n):
                    q = parents[i]
                    if follow[i]:
                        rotate_frame(desired[i], F[i], world[i])
                    else:
                        for r in range(3):
                            for c in range(3):
                                desired[i, r, c] = (F[q, 0, r] * F[i, 0, c] + F[q, 1, r] * F[i, 1, c]
                                                    + F[q, 2, r] * F[i, 2, c])
                clamp_tree(p, F, desired, follow, parents, lengths, Q, rows, root3, row_active, H, D, G, d)
            else:
                src[:, :] = p
                for i in range(1, n):
                    q = parents[i]
                    x = src[i, 0] - src[q, 0]
                    y = src[i, 1] - src[q, 1]
                    z = src[i, 2] - src[q, 2]
                    w = world[i]
                    for c in range(3):
                        p[i, c] = p[q, c] + w[c, 0] * x + w[c, 1] * y + w[c, 2] * z
        it += 1
        err = effector_errors(p, target_idx, targets, errors)
        if err <= tol:
            status = REACHED
            break
        if limited:
            if err < (1.0 - PROGRESS_FRACTION) * best_err:
                best_err = err
                best_p[:, :] = p
                best_F[:, :, :] = F
                since_best = 0
            else:
                since_best += 1
                if since_best >= NO_PROGRESS_WINDOW:  # a cycle: the best pose seen
                    if err > best_err:
                        p[:, :] = best_p
                        F[:, :, :] = best_F
                        err = effector_errors(p, target_idx, targets, errors)
                    status = stop
                    break
        stalled, check_pose = pose_check(p, snapshot, max_effector_move(p, before, target_idx), err, prev_err,
                                         stall_tol(tol, scale), check_pose)
        if stalled and not limited and bends < MAX_ESCAPES and fold_stuck_paths(
                p, parents, lengths, slot, order, subtree_end, position, target_idx, targets, errors, tol, scale):
            bends += 1
            err = effector_errors(p, target_idx, targets, errors)
            continue
        if stalled:
            status = stop
    if not limited:
        # exact lengths: the rotations' rounding removed (a reached solve short of the cap that
        # this takes back beyond tol counts as stopped short)
        rebuild_lengths(p, parents, lengths, rest_dirs, eps)
        err = effector_errors(p, target_idx, targets, errors)
        if status != stop:
            status = REACHED if err <= tol else (stop if it < max_iter else MAX_ITERATIONS)
    return p, F, row_active, it, errors, status


__all__ = ["tree_method", "CCD", "TRANSPOSE", "DLS", "SVD_DLS"]
