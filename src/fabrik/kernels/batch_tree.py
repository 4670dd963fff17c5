"""Many skeleton FABRIK solves at once, compiled and multi-threaded: ``fabrik.solve_batch`` on a
``fabrik.Skeleton`` (``batch_tree``: N independent solves) and ``fabrik.solve_sequence`` on a
crowd (``crowd_tree``: N characters, each a take of F frames warm-started frame by frame).

Both run ``prange`` over their rows and call the kernels ``fabrik.solve`` and
``fabrik.solve_sequence`` call (``fabrik.kernels.fabrik_tree.fabrik_tree`` and
``fabrik_tree_frames``) with the arguments those build, so every answer is the single call's, bit
for bit (tests/solvers/test_batch_models.py). What a batch saves is the per-call work in Python (checks,
dictionaries, the ``Solution``), paid once for the batch.

Inputs shared by every row have a leading axis of 1, per-row inputs one of N (the row step is 0
or 1, as in ``fabrik.kernels.batch``). Status codes as ``fabrik.solvers.result.STATUSES``;
negative codes (``fabrik.kernels.tree.BAD_INDEX``, ``BAD_ROOT``) mean bad input, nothing solved.
"""

import numpy as np
from numba import njit, prange

from fabrik.kernels.fabrik_tree import fabrik_tree, fabrik_tree_frames
from fabrik.kernels.tree_limits import frames_from_pose


@njit(cache=True, error_model="numpy", parallel=True)
def batch_tree(tree, groups, limits, target_idx, targets, initials, initial_frames, roots, root_from_target, tol,
               max_iter, root_fixed, limb_tops, derive_frames, frame_rig, root_matrix, out_p, out_frames, out_active,
               out_it, out_err, out_code):
    """``fabrik_tree`` for every row i of ``targets`` (N, k, 3), ``prange`` over rows.

    initials (1 or N, n, 3) start poses; initial_frames (1 or N, n, 3, 3) their frames, or (1, 0,
    3, 3) for a solve without frames, or, with ``derive_frames``, unused: each row's frames are then
    ``frames_from_pose`` of its start (``frame_rig`` = (parents, lengths, Q, own_start, own_list) of
    the skeleton's rig), as ``fabrik.solve`` derives them; a ``root_matrix`` (3, 3) (or (0, 3)
    for none) replaces frame 0 of every start. roots (1 or N, 3). Outputs: positions (N, n, 3);
    with frames, frames (N, n, 3, 3) and the rows on a limit (N, n) (else (N, 0, 3, 3), (N, 0));
    iterations, effector errors (N, k), status codes.
    """
    count = targets.shape[0]
    n = tree[0].shape[0]
    ss = 0 if initials.shape[0] == 1 else 1
    fs = 0 if initial_frames.shape[0] == 1 else 1
    rs = 0 if roots.shape[0] == 1 else 1
    with_frames = out_frames.shape[1] > 0
    parents, lengths, Q, own_start, own_list = frame_rig
    for i in prange(count):
        start = initials[i * ss]
        if derive_frames:
            frames = np.empty((n, 3, 3))
            frames_from_pose(start, parents, lengths, Q, own_start, own_list, frames)
        elif root_matrix.shape[0] == 3:
            frames = initial_frames[i * fs].copy()
        else:
            frames = initial_frames[i * fs]  # (fabrik_tree copies its start frames)
        if root_matrix.shape[0] == 3:
            frames[0] = root_matrix
        released = np.zeros_like(groups[5])
        p, F, active, it, errors, code = fabrik_tree(tree, groups, limits, (target_idx, targets[i], start, frames,
                                                                            roots[i * rs], root_from_target),
                                                     tol, max_iter, root_fixed, limb_tops, released)
        out_code[i] = code
        if code < 0:
            continue
        out_p[i] = p
        if with_frames:
            out_frames[i] = F
            out_active[i] = active
        out_it[i] = it
        out_err[i] = errors


@njit(cache=True, error_model="numpy", parallel=True)
def crowd_tree(tree, groups, limits, target_idx, targets, initials, initial_frames, roots, root_from_target, tol,
               max_iter, root_fixed, limb_tops, stop_short, out, out_frames, iterations, errors, codes, done):
    """``fabrik_tree_frames`` for every character c of ``targets`` (N, F, k, 3), ``prange`` over
    characters: character c's take from its start ``initials[c]`` (1 or N, n, 3) and
    ``initial_frames[c]`` (1 or N, n, 3, 3; (1, 0, 3, 3) without frames), its roots ``roots[c]``
    (1 or N, F, 3). Outputs per character as ``fabrik_tree_frames``'s: out (N, F, n, 3),
    out_frames (N, F, n, 3, 3) (or (N, F, 0, 3, 3)), iterations (N, F), errors (N, F, k), codes
    (N, F); ``done[c]`` the frames written (``fabrik_tree_frames``' return: F, the first frame with
    bad input, or with ``stop_short`` one past the first frame that ended short)."""
    count = targets.shape[0]
    ss = 0 if initials.shape[0] == 1 else 1
    fs = 0 if initial_frames.shape[0] == 1 else 1
    rs = 0 if roots.shape[0] == 1 else 1
    for c in prange(count):
        done[c] = fabrik_tree_frames(tree, groups, limits, target_idx, targets[c], initials[c * ss],
                                     initial_frames[c * fs], roots[c * rs], root_from_target, tol, max_iter,
                                     root_fixed, limb_tops, out[c], out_frames[c], iterations[c], errors[c], codes[c],
                                     stop_short)
