"""Many skeleton FABRIK solves at once, compiled and multi-threaded: ``fabrik.solve_batch`` on a
``fabrik.Skeleton`` (``batch_tree``: N independent solves) and ``fabrik.solve_sequence`` on a
crowd (``crowd_tree``: N characters, each a take of F frames warm-started frame by frame).

Both run ``prange`` over their rows and call the kernels ``fabrik.solve`` and
``fabrik.solve_sequence`` call (``fabrik.kernels.fabrik_tree.fabrik_tree`` and
``fabrik_tree_frames``) with the arguments those build, so every answer is the single call's, bit
for bit (tests/solvers/test_batch_models.py). What a batch saves is the per-call work in Python (checks,
dictionaries, the ``Solution``), paid once for the batch.

Inputs are the records of ``fabrik.kernels.records`` (``Tree``, ``Groups``, ``TreeLimits``,
``Stop``, ``TreeOptions`` as for the single call; the task with a leading row axis). Inputs shared
by every row have a leading axis of 1, per-row inputs one of N (the row step is 0 or 1, as in
``fabrik.kernels.batch``). Status codes as ``fabrik.solvers.result.STATUSES``; negative codes
(``fabrik.kernels.tree.BAD_INDEX``, ``BAD_ROOT``) mean bad input, nothing solved.

The ``prange`` loops write only into arrays taken from their records by field name before the
loop (``out_code = out.codes``): numba (0.68 and before) drops the writes of a ``prange`` loop into
an array reached through a tuple inside the loop (``out.codes[i] = code``) or unpacked from one
before it (``..., out_code = out``), plain tuples included (numba issues 5872, 7135, 10338).
"""

import numpy as np
from numba import njit, prange

from fabrik.kernels.fabrik_tree import fabrik_tree, fabrik_tree_frames
from fabrik.kernels.records import TakeOut, TreeTake, TreeTask
from fabrik.kernels.tree_limits import frames_from_pose


@njit(cache=True, error_model="numpy", parallel=True)
def batch_tree(tree, groups, limits, task, stop, options, start, out):
    """``fabrik_tree`` for every row i of ``task.targets`` (N, k, 3), ``prange`` over rows.

    ``task`` a ``TreeTask`` with a leading row axis: ``initial`` (1 or N, n, 3) start poses,
    ``initial_frames`` (1 or N, n, 3, 3) their frames, or (1, 0, 3, 3) for a solve without
    frames, ``root`` (1 or N, 3). ``start`` a ``StartFrames``: with ``start.derive`` the task's
    frames are unused and each row's are ``frames_from_pose`` of its start pose, as
    ``fabrik.solve`` derives them; a ``start.root_matrix`` (3, 3) (or (0, 3) for none) replaces
    frame 0 of every start. ``out`` a ``BatchOut`` (N rows; without frames its ``frames`` and
    ``active`` are (N, 0, 3, 3) and (N, 0)).
    """
    target_idx, targets, initials, initial_frames, roots, root_from_target = task
    derive, root_matrix, parents, lengths, Q, own_start, own_list = start
    out_p, out_frames, out_active = out.positions, out.frames, out.active  # (by name: module docstring)
    out_it, out_err, out_code = out.iterations, out.errors, out.codes
    released_like = groups.releasable
    count = targets.shape[0]
    n = tree.parents.shape[0]
    ss = 0 if initials.shape[0] == 1 else 1
    fs = 0 if initial_frames.shape[0] == 1 else 1
    rs = 0 if roots.shape[0] == 1 else 1
    with_frames = out_frames.shape[1] > 0
    for i in prange(count):
        pose = initials[i * ss]
        if derive:
            frames = np.empty((n, 3, 3))
            frames_from_pose(pose, parents, lengths, Q, own_start, own_list, frames)
        elif root_matrix.shape[0] == 3:
            frames = initial_frames[i * fs].copy()
        else:
            frames = initial_frames[i * fs]  # (fabrik_tree copies its start frames)
        if root_matrix.shape[0] == 3:
            frames[0] = root_matrix
        released = np.zeros_like(released_like)
        row = TreeTask(target_idx, targets[i], pose, frames, roots[i * rs], root_from_target)
        p, F, active, it, errors, code = fabrik_tree(tree, groups, limits, row, stop, options, released)
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
def crowd_tree(tree, groups, limits, take, stop, options, stop_short, out):
    """``fabrik_tree_frames`` for every character c of ``take.targets`` (N, F, k, 3), ``prange``
    over characters: character c's take from its start ``take.initial[c]`` (1 or N, n, 3) and
    ``take.initial_frames[c]`` (1 or N, n, 3, 3; (1, 0, 3, 3) without frames), its roots
    ``take.roots[c]`` (1 or N, F, 3). ``out`` a ``TakeOut`` with a leading character axis, written
    per character as ``fabrik_tree_frames`` writes a take's: positions (N, F, n, 3), frames
    (N, F, n, 3, 3) (or (N, F, 0, 3, 3)), iterations (N, F), errors (N, F, k), codes (N, F).

    Returns done (N,) int64, the frames written per character (``fabrik_tree_frames``' return: F,
    the first frame with bad input, or with ``stop_short`` one past the first frame that ended
    short)."""
    target_idx, targets, initials, initial_frames, roots, root_from_target = take
    positions, frames, iterations, errors, codes = out.positions, out.frames, out.iterations, out.errors, out.codes
    count = targets.shape[0]
    ss = 0 if initials.shape[0] == 1 else 1
    fs = 0 if initial_frames.shape[0] == 1 else 1
    rs = 0 if roots.shape[0] == 1 else 1
    done = np.zeros(count, dtype=np.int64)
    for c in prange(count):
        done[c] = fabrik_tree_frames(tree, groups, limits,
                                     TreeTake(target_idx, targets[c], initials[c * ss], initial_frames[c * fs],
                                              roots[c * rs], root_from_target),
                                     stop, options, stop_short,
                                     TakeOut(positions[c], frames[c], iterations[c], errors[c], codes[c]))
    return done
