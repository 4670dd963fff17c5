"""CCD and Jacobian methods with joint limits on skeletons (several end effectors), compiled.

The tree and limit tables are those of ``fabrik.kernels.tree_limits`` (parents,
lengths, rest_dirs, reach; ``Q[c] = R0[parent(c)]^T R0[c]``; packed ``limits`` rows, row j for
the bones leaving joint j) plus the depth-first arrays of ``fabrik.kernels.skeleton_methods``.
Frames follow the skeleton convention of ``fabrik.solvers.skeleton_fabrik_constrained``: ``F[i]``
is the frame of the bone arriving at joint i (+Y along it), a zero-length bone's frame is its
parent's, ``F[0]`` is the root orientation (held fixed), and bone c is limited by row
``parent(c)`` in its reference frame ``H_c = F[parent(c)] Q[c]``.

* CCD (``ccd_skeleton_constrained``): as the unconstrained skeleton CCD, effector by effector, each
  sweep turning the bones on the effector's path (up to the root or the nearest targeted
  ancestor) about their parent joints to point the effector at its target; each turned bone's
  frame is restricted by its limit (direction projected into the allowed region against its
  reference frame, twist clamped) and the rotation actually applied to the bone and everything
  below it is the one taking its old frame to the restricted frame. The turn keeps every other
  bone's pose relative to its parent, so every limit holds after every turn. Zero-length bones
  have no direction and no turn of their own (their frame is their parent's), so they are
  skipped.
* Jacobian (``jacobian_skeleton_constrained``): the stacked system of the unconstrained skeleton
  Jacobian methods (3 rows per effector, 3 world-axis columns per non-zero bone on a path to a
  target), the same step (transpose, DLS, SVD-DLS; error and angle clamps), which turns every
  bone's frame; then the tree is *clamped* from the root outwards: every targeted bone's turned
  frame is restricted by its limit against its parent's clamped frame and its child joint placed
  at the bone's length along it, and untargeted bones keep their frame relative to their parent
  (they move rigidly with it, as in constrained FABRIK).

Both keep bone lengths exactly, never return NaN, and stop by the skeleton rules of
``fabrik.kernels.fabrik_tree`` (reached / no progress -> stalled or unreachable / cap), plus
the no-progress window of constrained skeleton FABRIK: after ``NO_PROGRESS_WINDOW`` iterations in
which the largest effector error never fell by ``PROGRESS_FRACTION`` below the best seen, the
solve stops with the best pose seen (limits clamped against a step can make a method cycle).
"""

import numpy as np
from numba import njit

from fabrik.kernels.constraints import COL_TWIST_FLAG, COL_TYPE
from fabrik.kernels.tree import effector_errors, tree_setup
from fabrik.kernels.frames import reorthonormalise, rotate_frame, rotation_between, transport
from fabrik.kernels.jacobian import restrict_frame
from fabrik.kernels.skeleton_methods import (DLS, SVD_DLS, TRANSPOSE, clamped_error_vector, fill_stacked_jacobian,
                                             rotation_vector_matrix, stacked_step)
from fabrik.kernels.stopping import (
    MAX_ITERATIONS,
    NO_PROGRESS_WINDOW,
    PROGRESS_FRACTION,
    REACHED,
    STALLED,
    UNREACHABLE,
    pose_check,
    remember_pose,
    stall_tol,
)
from fabrik.kernels.vec import TINY



@njit(cache=True, error_model="numpy")
def progress_check(p, F, best_p, best_F, target_idx, targets, errors, err, prev_err, best_err, since_best, moved,
                   check_pose, snapshot, tol, unreachable, scale):
    """The stopping rules after one iteration of a constrained comparison method.

    Reached within ``tol``; the best pose so far is kept, and after ``NO_PROGRESS_WINDOW``
    iterations without a ``PROGRESS_FRACTION`` improvement of the best error the solve stops on
    it (stalled or unreachable); the two-step pose check of the unconstrained kernels otherwise.
    Returns (status code, or -1 to go on; err; best_err; since_best; check_pose).
    """
    if err <= tol:
        return REACHED, err, best_err, since_best, check_pose
    if err < (1.0 - PROGRESS_FRACTION) * best_err:
        best_err = err
        best_p[:, :] = p
        best_F[:, :, :] = F
        since_best = 0
    else:
        since_best += 1
        if since_best >= NO_PROGRESS_WINDOW:
            if err > best_err:
                p[:, :] = best_p
                F[:, :, :] = best_F
                err = effector_errors(p, target_idx, targets, errors)
            return (UNREACHABLE if unreachable else STALLED), err, best_err, since_best, check_pose
    stalled, check_pose = pose_check(p, snapshot, moved, err, prev_err, stall_tol(tol, scale), check_pose)
    if stalled:
        return (UNREACHABLE if unreachable else STALLED), err, best_err, since_best, check_pose
    return -1, err, best_err, since_best, check_pose

__all__ = ["ccd_skeleton_constrained", "jacobian_skeleton_constrained", "clamp_tree", "TRANSPOSE", "DLS", "SVD_DLS"]


@njit(cache=True, error_model="numpy")
def _reference(H, F, q, Q, c):
    """H <- F[q] @ Q[c] (the reference frame of bone c)."""
    for r in range(3):
        for k in range(3):
            H[r, k] = F[q, r, 0] * Q[c, 0, k] + F[q, r, 1] * Q[c, 1, k] + F[q, r, 2] * Q[c, 2, k]


@njit(cache=True, error_model="numpy")
def _limited(limits, j):
    return limits[j, COL_TYPE] != 0.0 or limits[j, COL_TWIST_FLAG] != 0.0


@njit(cache=True, error_model="numpy")
def refresh_active(F, parents, lengths, Q, limits, row_active):
    """row_active[j] <- 1 when a bone limited by row j lies on its limit's boundary in frames F."""
    n = parents.shape[0]
    H = np.empty((3, 3))
    D = np.empty((3, 3))
    G = np.empty((3, 3))
    d = np.empty(3)
    for j in range(n):
        row_active[j] = 0
    for i in range(1, n):
        q = parents[i]
        if lengths[i] > 0.0 and _limited(limits, q):
            _reference(H, F, q, Q, i)
            if restrict_frame(D, F[i], H, limits[q], d, G):
                row_active[q] = 1


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
    for j in range(n):
        row_active[j] = 0
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
            for r in range(3):
                for k in range(3):
                    D[r, k] = F[q, r, 0] * desired[i, 0, k] + F[q, r, 1] * desired[i, 1, k] + F[q, r, 2] * desired[i, 2, k]
        if _limited(limits, q):
            _reference(H, F, q, Q, i)
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
def _start(initial, frames, root3, parents, lengths, Q, limits, row_active):
    """(p, F): the start pose hung from root3, each frame carried onto its bone's direction in
    ``initial`` (its own +Y where the bone has collapsed), then clamped into the limits."""
    n = parents.shape[0]
    p = np.empty((n, 3))
    F = frames.copy()
    desired = np.empty((n, 3, 3))
    follow = np.ones(n, dtype=np.bool_)
    H = np.empty((3, 3))
    D = np.empty((3, 3))
    G = np.empty((3, 3))
    d = np.empty(3)
    for i in range(1, n):
        q = parents[i]
        x = initial[i, 0] - initial[q, 0]
        y = initial[i, 1] - initial[q, 1]
        z = initial[i, 2] - initial[q, 2]
        r = np.sqrt(x * x + y * y + z * z)
        if r > TINY * (1.0 + lengths[i]) and lengths[i] > 0.0:
            transport(desired[i], frames[i], x / r, y / r, z / r)
        else:
            desired[i, :, :] = frames[i]
    clamp_tree(p, F, desired, follow, parents, lengths, Q, limits, root3, row_active, H, D, G, d)
    return p, F


@njit(cache=True, error_model="numpy")
def _moved(p, before, target_idx):
    moved = 0.0
    for t in range(target_idx.shape[0]):
        j = target_idx[t]
        m = 0.0
        for c in range(3):
            m += (p[j, c] - before[t, c]) ** 2
        if m > moved:
            moved = m
    return np.sqrt(moved)


@njit(cache=True, error_model="numpy")
def ccd_skeleton_constrained(parents, lengths, rest_dirs, reach, order, subtree_end, position, Q, limits, target_idx,
                             targets, initial, initial_frames, root, root_from_target, tol, max_iter):
    """Constrained CCD for several effectors (module docstring).

    Args: the flattened tree, depth-first arrays, ``Q`` (n, 3, 3) and ``limits`` (n, 13);
    target_idx (k,), targets (k, 3); initial (n, 3) and initial_frames (n, 3, 3) (never written;
    ``initial_frames[0]`` is the held root orientation); root (3,), root_from_target; tol, max_iter.

    Returns (positions, frames (n, 3, 3), row_active (n,) int64, iterations, errors (k,), status).
    """
    n = parents.shape[0]
    k = target_idx.shape[0]
    errors = np.zeros(k)
    row_active = np.zeros(n, dtype=np.int64)
    code, scale, slot, active, root3, unreachable = tree_setup(parents, lengths, reach, target_idx, targets, root,
                                                               root_from_target)
    if code != 0:
        return initial.copy(), initial_frames.copy(), row_active, 0, errors, code
    eps = TINY * scale
    p, F = _start(initial, initial_frames, root3, parents, lengths, Q, limits, row_active)
    err = effector_errors(p, target_idx, targets, errors)
    if err <= tol:
        return p, F, row_active, 0, errors, REACHED
    R = np.empty((3, 3))
    W = np.empty((3, 3))
    H = np.empty((3, 3))
    G = np.empty((3, 3))
    D = np.empty((3, 3))
    tmp = np.empty((3, 3))
    d = np.empty(3)
    before = np.empty((k, 3))
    snapshot = np.empty((n, 3))
    best_p = p.copy()
    best_F = F.copy()
    best_err = err
    since_best = 0
    check_pose = False
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
                if lengths[child] > 0.0:
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
                        rotate_frame(D, F[child], R)
                        if _limited(limits, j):
                            _reference(H, F, j, Q, child)
                            if restrict_frame(D, D, H, limits[j], d, G):
                                row_active[j] = 1
                        # W = D F[child]^T turns the bone and its subtree about joint j
                        for r in range(3):
                            for c in range(3):
                                W[r, c] = D[r, 0] * F[child, c, 0] + D[r, 1] * F[child, c, 1] + D[r, 2] * F[child, c, 2]
                        for m in range(position[child], subtree_end[child]):
                            i = order[m]
                            x = p[i, 0] - p[j, 0]
                            y = p[i, 1] - p[j, 1]
                            z = p[i, 2] - p[j, 2]
                            p[i, 0] = p[j, 0] + W[0, 0] * x + W[0, 1] * y + W[0, 2] * z
                            p[i, 1] = p[j, 1] + W[1, 0] * x + W[1, 1] * y + W[1, 2] * z
                            p[i, 2] = p[j, 2] + W[2, 0] * x + W[2, 1] * y + W[2, 2] * z
                            if i == child:
                                F[i, :, :] = D
                            else:
                                rotate_frame(tmp, F[i], W)
                                F[i, :, :] = tmp
                if slot[j] >= 0:
                    break
                child = j
                j = parents[j]
        it += 1
        # re-seat every joint on its (re-orthonormalised) frame: no rounding drift in lengths
        for i in range(1, n):
            q = parents[i]
            if lengths[i] > 0.0:
                reorthonormalise(F[i])
            else:
                F[i, :, :] = F[q]
            for c in range(3):
                p[i, c] = p[q, c] + lengths[i] * F[i, c, 1]
        err = effector_errors(p, target_idx, targets, errors)
        moved = _moved(p, before, target_idx)
        code, err, best_err, since_best, check_pose = progress_check(
            p, F, best_p, best_F, target_idx, targets, errors, err, prev_err, best_err, since_best, moved,
            check_pose, snapshot, tol, unreachable, scale)
        if code >= 0:
            return p, F, row_active, it, errors, code
    return p, F, row_active, it, errors, MAX_ITERATIONS


@njit(cache=True, error_model="numpy")
def jacobian_skeleton_constrained(parents, lengths, rest_dirs, reach, Q, limits, target_idx, targets, initial,
                                  initial_frames, root, root_from_target, tol, max_iter, method, damping,
                                  max_angle_step, max_error_step, alpha):
    """Stacked-Jacobian IK with clamping after every step (module docstring).

    Args as ``ccd_skeleton_constrained`` (without the depth-first arrays) plus ``method``
    (TRANSPOSE, DLS, SVD_DLS), damping, max_angle_step, max_error_step and alpha as
    ``fabrik.kernels.skeleton_methods.jacobian_skeleton``. Returns as ``ccd_skeleton_constrained``.
    """
    n = parents.shape[0]
    k = target_idx.shape[0]
    errors = np.zeros(k)
    row_active = np.zeros(n, dtype=np.int64)
    code, scale, slot, active, root3, unreachable = tree_setup(parents, lengths, reach, target_idx, targets, root,
                                                               root_from_target)
    if code != 0:
        return initial.copy(), initial_frames.copy(), row_active, 0, errors, code
    p, F = _start(initial, initial_frames, root3, parents, lengths, Q, limits, row_active)
    err = effector_errors(p, target_idx, targets, errors)
    if err <= tol:
        return p, F, row_active, 0, errors, REACHED

    # one ball joint per non-zero bone on a path to a target; targeted paths follow the step,
    # everything else keeps its frame relative to its parent
    col = np.full(n, -1, dtype=np.int64)
    follow = np.zeros(n, dtype=np.bool_)
    n_cols = 0
    for i in range(1, n):
        if active[i]:
            follow[i] = True
            if lengths[i] > 0.0:
                col[i] = n_cols
                n_cols += 3
    n_rows = 3 * k
    jac = np.zeros((n_rows, max(n_cols, 1)))
    e_vec = np.zeros(n_rows)
    dw = np.zeros(max(n_cols, 1))
    world = np.zeros((n, 3, 3))
    desired = np.empty((n, 3, 3))
    H = np.empty((3, 3))
    D = np.empty((3, 3))
    G = np.empty((3, 3))
    d = np.empty(3)
    before = np.empty((k, 3))
    snapshot = np.empty((n, 3))
    best_p = p.copy()
    best_F = F.copy()
    best_err = err
    since_best = 0
    check_pose = False
    damp2 = damping * damping
    it = 0
    while it < max_iter:
        if n_cols == 0:
            break
        remember_pose(p, target_idx, before, snapshot, check_pose)
        prev_err = err
        clamped_error_vector(p, target_idx, targets, max_error_step, e_vec)
        fill_stacked_jacobian(p, parents, col, target_idx, jac)
        stacked_step(jac, e_vec, method, alpha, damp2, max_angle_step, dw)
        # desired frames: targeted bones turned by the accumulated world rotation; untargeted
        # bones keep their frame relative to their parent
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
            if follow[i]:
                rotate_frame(desired[i], F[i], world[i])
            else:
                for r in range(3):
                    for c in range(3):
                        desired[i, r, c] = F[q, 0, r] * F[i, 0, c] + F[q, 1, r] * F[i, 1, c] + F[q, 2, r] * F[i, 2, c]
        clamp_tree(p, F, desired, follow, parents, lengths, Q, limits, root3, row_active, H, D, G, d)
        it += 1
        err = effector_errors(p, target_idx, targets, errors)
        moved = _moved(p, before, target_idx)
        code, err, best_err, since_best, check_pose = progress_check(
            p, F, best_p, best_F, target_idx, targets, errors, err, prev_err, best_err, since_best, moved,
            check_pose, snapshot, tol, unreachable, scale)
        if code >= 0:
            return p, F, row_active, it, errors, code
    if err <= tol:
        return p, F, row_active, it, errors, REACHED
    if it < max_iter:  # nothing to rotate
        return p, F, row_active, it, errors, (UNREACHABLE if unreachable else STALLED)
    return p, F, row_active, it, errors, MAX_ITERATIONS
