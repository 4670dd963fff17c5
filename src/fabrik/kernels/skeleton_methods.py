"""Comparison methods for skeletons with several end effectors: CCD and Jacobian methods, compiled.

The flattened tree is the one described in ``fabrik.kernels.tree`` (plus the
depth-first ``order`` / ``subtree_end`` / ``position`` arrays, see
``fabrik.model.rig.Rig``). Both methods move joints only by rotating
parts of the tree about a joint, so bone lengths stay as they are; every pose is in addition
rebuilt once at the start and once at the end with each bone rescaled to its exact length, which
removes rounding drift (zero-length bones stay zero).

Degrees of freedom: every bone turns about its parent joint as a ball joint (3 degrees of
freedom), independently of its siblings, carrying everything below it. At a chain joint this is
the usual ball joint; at a sub-base it gives each child bone its own ball joint (hips and lower
spine hanging from the pelvis, clavicles and neck from the chest), the same freedom FABRIK's
point model has. The root's position is fixed at ``root`` (the whole pose is translated there
first). Status codes and the stopping rules are those of ``fabrik_skeleton``.
"""

import numpy as np
from numba import njit

from fabrik.kernels.stopping import MAX_ITERATIONS, REACHED, STALLED, UNREACHABLE, pose_check, remember_pose, stall_tol
from fabrik.kernels.tree import effector_errors, rebuild_lengths, tree_setup
from fabrik.kernels.frames import axis_angle_matrix, rotation_between
from fabrik.kernels.singularity import MAX_ESCAPES, fold_stuck_paths
from fabrik.kernels.vec import TINY, rotate_subtree

#: ``method`` codes of ``jacobian_skeleton``.
TRANSPOSE, DLS, SVD_DLS = 0, 1, 2


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
        s = 1.0
        if r > max_error_step:
            s = max_error_step / r
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
    tests replace this function by one that turns those bases (tests/test_singularity.py)."""
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
        for c in range(n_cols):
            dw[c] = gain * g[c]
    elif method == DLS:
        m = jac @ jac.T
        # damping plus 1e-13 of the mean diagonal: on a model of bones of 1e8 units, J J^T is
        # ~1e16 and a damping of 1.1 vanishes in its rounding, leaving a rank-deficient system
        # singular (np.linalg.solve raised); the floor is invisible to a model of ordinary size
        trace = 0.0
        for r in range(n_rows):
            trace += m[r, r]
        ridge = damp2 + 1e-13 * trace / max(n_rows, 1)
        for r in range(n_rows):
            m[r, r] += ridge
        f = np.linalg.solve(m, e_vec)
        d = jac.T @ f
        for c in range(n_cols):
            dw[c] = d[c]
    else:
        u, sv, vt = svd_factors(jac)
        for c in range(n_cols):
            dw[c] = 0.0
        for q in range(sv.shape[0]):
            ue = 0.0
            for r in range(n_rows):
                ue += u[r, q] * e_vec[r]
            w = sv[q] / (sv[q] * sv[q] + damp2) if sv[q] * sv[q] + damp2 > 1e-300 else 0.0
            for c in range(n_cols):
                dw[c] += w * ue * vt[q, c]
    biggest = 0.0
    for c in range(n_cols):
        if abs(dw[c]) > biggest:
            biggest = abs(dw[c])
    if biggest > max_angle_step:
        s = max_angle_step / biggest
        for c in range(n_cols):
            dw[c] *= s


@njit(cache=True, error_model="numpy")
def start_pose(initial, root3, parents, lengths, rest_dirs, eps):
    """``initial`` translated so that the root sits on ``root3``, bones at their exact lengths."""
    p = initial.copy()
    n = p.shape[0]
    for c in range(3):
        shift = root3[c] - initial[0, c]
        for i in range(n):
            p[i, c] += shift
    rebuild_lengths(p, parents, lengths, rest_dirs, eps)
    return p


@njit(cache=True, error_model="numpy")
def rotation_vector_matrix(w0, w1, w2):
    """The rotation matrix of the rotation vector (w0, w1, w2) (axis times angle, radians)."""
    m = np.eye(3)
    angle = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    if angle >= 1e-300:
        axis_angle_matrix(m, w0 / angle, w1 / angle, w2 / angle, angle)
    return m


@njit(cache=True, error_model="numpy")
def _moved_and_errors(p, before, target_idx, targets, errors):
    err = effector_errors(p, target_idx, targets, errors)
    moved = 0.0
    for t in range(target_idx.shape[0]):
        j = target_idx[t]
        m = 0.0
        for c in range(3):
            m += (p[j, c] - before[t, c]) ** 2
        if m > moved:
            moved = m
    return err, np.sqrt(moved)


@njit(cache=True, error_model="numpy")
def ccd_skeleton(parents, lengths, rest_dirs, reach, order, subtree_end, position, target_idx, targets, initial,
                 root, root_from_target, tol, max_iter):
    """CCD for several end effectors, effector by effector as games do.

    One iteration visits the effectors in the order of ``target_idx``; for each one not yet within
    ``tol`` it makes one CCD sweep: for every bone on the path from the effector up to the root,
    or up to the nearest targeted (pinned) ancestor, innermost last, it turns that bone (with
    everything below it) about its parent joint so that the effector points at its target. A
    sweep for one effector moves others that hang below the same bones, as in game engines. A
    stalled straight path on the line to its target is folded (``fabrik.kernels.singularity``).

    Arguments as ``fabrik_skeleton`` plus the depth-first arrays. Returns (positions, iterations,
    errors (k,), status).
    """
    n = parents.shape[0]
    k = target_idx.shape[0]
    errors = np.zeros(k)
    code, scale, slot, active, root3, unreachable = tree_setup(parents, lengths, reach, target_idx, targets, root,
                                                               root_from_target)
    if code != 0:
        return initial.copy(), 0, errors, code
    eps = TINY * scale
    p = start_pose(initial, root3, parents, lengths, rest_dirs, eps)
    err = effector_errors(p, target_idx, targets, errors)
    if err <= tol:
        return p, 0, errors, REACHED
    a = np.empty(3)
    b = np.empty(3)
    rot = np.empty((3, 3))
    before = np.empty((k, 3))
    snapshot = np.empty((n, 3))
    check_pose = False
    bends = 0
    it = 0
    while it < max_iter:
        remember_pose(p, target_idx, before, snapshot, check_pose)
        prev_err = err
        for t in range(k):
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
                for c in range(3):
                    a[c] = p[e, c] - p[j, c]
                    b[c] = targets[t, c] - p[j, c]
                na = np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
                nb = np.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2])
                if na > eps and nb > eps:
                    rotation_between(rot, a[0] / na, a[1] / na, a[2] / na, b[0] / nb, b[1] / nb, b[2] / nb)
                    rotate_subtree(p, child, j, order, subtree_end, position, rot)
                if slot[j] >= 0:
                    break
                child = j
                j = parents[j]
        it += 1
        err, moved = _moved_and_errors(p, before, target_idx, targets, errors)
        if err <= tol:
            break
        stalled, check_pose = pose_check(p, snapshot, moved, err, prev_err, stall_tol(tol, scale), check_pose)
        if stalled and bends < MAX_ESCAPES and fold_stuck_paths(p, parents, lengths, slot, order, subtree_end,
                                                                position, target_idx, targets, errors, tol, scale):
            bends += 1
            err = effector_errors(p, target_idx, targets, errors)
            continue
        if stalled:
            rebuild_lengths(p, parents, lengths, rest_dirs, eps)
            err = effector_errors(p, target_idx, targets, errors)
            return p, it, errors, (UNREACHABLE if unreachable else STALLED)
    rebuild_lengths(p, parents, lengths, rest_dirs, eps)
    err = effector_errors(p, target_idx, targets, errors)
    return p, it, errors, (REACHED if err <= tol else MAX_ITERATIONS)


@njit(cache=True, error_model="numpy")
def jacobian_skeleton(parents, lengths, rest_dirs, reach, order, subtree_end, position, target_idx, targets, initial,
                      root, root_from_target, tol, max_iter, method, damping, max_angle_step, max_error_step, alpha):
    """Jacobian IK for several end effectors stacked into one system (Buss & Kim 2005).

    Rows: 3 per effector (its position); columns: 3 per bone on a path from the root to a target,
    labelled by the bone's child joint c (a ball joint at its parent q: rotation about the world
    x, y, z axes through q, turning c's bone and everything below it). Entry block (effector e,
    bone c) is d p_e / d w_c = w_c x (p_e - p_q), zero unless c is e or an ancestor of e. Each
    iteration:

    * the error vector stacks ``target - effector`` per effector, each clamped to length
      ``max_error_step`` (Buss & Kim's target clamping);
    * ``method`` TRANSPOSE: ``dw = alpha J^T e`` with ``alpha`` > 0 fixed or, for ``alpha`` <= 0,
      Buss & Kim's adaptive ``alpha = <e, J J^T e> / |J J^T e|^2``;
      DLS: ``dw = J^T (J J^T + damping^2 I)^-1 e``; SVD_DLS: the same damped least squares
      computed from the SVD, ``dw = sum_i s_i / (s_i^2 + damping^2) v_i (u_i . e)``;
    * ``dw`` is scaled down so that no component exceeds ``max_angle_step`` radians;
    * the rotations are applied to the bones (deepest joint first, in world axes), so every bone
      keeps its length.

    A stalled straight path on the line to its target is folded (``fabrik.kernels.singularity``),
    as in ``ccd_skeleton``. Arguments as ``ccd_skeleton`` plus the method's
    settings. Returns (positions, iterations, errors (k,), status) as ``fabrik_skeleton``.
    """
    n = parents.shape[0]
    k = target_idx.shape[0]
    errors = np.zeros(k)
    code, scale, slot, active, root3, unreachable = tree_setup(parents, lengths, reach, target_idx, targets, root,
                                                               root_from_target)
    if code != 0:
        return initial.copy(), 0, errors, code
    eps = TINY * scale
    p = start_pose(initial, root3, parents, lengths, rest_dirs, eps)
    err = effector_errors(p, target_idx, targets, errors)
    if err <= tol:
        return p, 0, errors, REACHED

    # one ball joint per bone on a path to a target (the bone's child joint is active)
    col = np.full(n, -1, dtype=np.int64)
    n_cols = 0
    for i in range(1, n):
        if active[i]:
            col[i] = n_cols
            n_cols += 3
    n_rows = 3 * k
    jac = np.zeros((n_rows, max(n_cols, 1)))
    e_vec = np.zeros(n_rows)
    dw = np.zeros(max(n_cols, 1))
    world = np.zeros((n, 3, 3))
    src = np.empty((n, 3))
    before = np.empty((k, 3))
    snapshot = np.empty((n, 3))
    check_pose = False
    bends = 0
    damp2 = damping * damping
    it = 0
    while it < max_iter:
        remember_pose(p, target_idx, before, snapshot, check_pose)
        prev_err = err
        clamped_error_vector(p, target_idx, targets, max_error_step, e_vec)
        fill_stacked_jacobian(p, parents, col, target_idx, jac)
        if n_cols == 0:
            it += 1
            break
        stacked_step(jac, e_vec, method, alpha, damp2, max_angle_step, dw)
        # apply: world[i] = the rotation of bone i (deepest first, in world axes)
        for i in range(n):
            for c in range(3):
                src[i, c] = p[i, c]
        world[0] = np.eye(3)
        for i in range(1, n):
            q = parents[i]
            if col[i] >= 0:
                rot = rotation_vector_matrix(dw[col[i]], dw[col[i] + 1], dw[col[i] + 2])
                for r in range(3):
                    for c in range(3):
                        world[i, r, c] = (world[q, r, 0] * rot[0, c] + world[q, r, 1] * rot[1, c]
                                          + world[q, r, 2] * rot[2, c])
            else:
                world[i] = world[q]
            x = src[i, 0] - src[q, 0]
            y = src[i, 1] - src[q, 1]
            z = src[i, 2] - src[q, 2]
            w = world[i]
            for c in range(3):
                p[i, c] = p[q, c] + w[c, 0] * x + w[c, 1] * y + w[c, 2] * z
        it += 1
        err, moved = _moved_and_errors(p, before, target_idx, targets, errors)
        if err <= tol:
            break
        stalled, check_pose = pose_check(p, snapshot, moved, err, prev_err, stall_tol(tol, scale), check_pose)
        if stalled and bends < MAX_ESCAPES and fold_stuck_paths(p, parents, lengths, slot, order, subtree_end,
                                                                position, target_idx, targets, errors, tol, scale):
            bends += 1
            err = effector_errors(p, target_idx, targets, errors)
            continue
        if stalled:
            rebuild_lengths(p, parents, lengths, rest_dirs, eps)
            err = effector_errors(p, target_idx, targets, errors)
            return p, it, errors, (UNREACHABLE if unreachable else STALLED)
    rebuild_lengths(p, parents, lengths, rest_dirs, eps)
    err = effector_errors(p, target_idx, targets, errors)
    if err <= tol:
        return p, it, errors, REACHED
    if it < max_iter:  # nothing to rotate (only the root is targeted)
        return p, it, errors, (UNREACHABLE if unreachable else STALLED)
    return p, it, errors, MAX_ITERATIONS
