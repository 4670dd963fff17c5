"""Crowds: ``fabrik.solve_sequence`` over N characters at once, each a take of F frames, every
frame warm-started from the same character's frame before (docs/batch.md, "Crowds").

Character c's answer is ``fabrik.solve_sequence``'s for its own take, bit for bit: skeleton
FABRIK (with or without limits) runs every character's take in one compiled call, ``prange`` over
characters (``fabrik.kernels.batch_tree.crowd_tree``, the single take's kernel per character);
with ``reach_step``, or limits and ``turn_search``, a character whose take has a frame that ends
short is solved again by the single take's path (its retries run in Python); other methods solve
the characters one after another through the single take's path.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from fabrik._progress import progress_bar
from fabrik._validation import MAX_COORDINATE, check_max_iter, check_memory, check_tol, real_numbers
from fabrik.kernels.records import TakeOut, TreeTake
from fabrik.kernels.stopping import REACHED
from fabrik.model.geometry import frames_from_pose, rest_up
from fabrik.model.rig import NO_FRAMES, rig
from fabrik.solvers import registry
from fabrik.solvers.result import SequenceSolution

#: The fewest characters per compiled call when a progress bar is shown (the bar moves after each).
PROGRESS_CHARACTERS = 16


def is_crowd(targets) -> bool:
    """Whether ``solve_sequence``'s ``targets`` are a crowd's: a mapping whose first path has
    three axes (N characters, F frames, 3)."""
    if not isinstance(targets, Mapping) or len(targets) == 0:
        return False
    try:
        return np.ndim(next(iter(targets.values()))) == 3
    except ValueError:
        return False


def crowd_paths(targets) -> np.ndarray:
    """The crowd's paths stacked as (N, F, k, 3), each checked (naming the joint, the character and
    the frame)."""
    paths = []
    for key, value in targets.items():
        path = real_numbers(value, f"targets[{key!r}]")
        if path.ndim != 3 or path.shape[2] != 3 or path.shape[0] < 1 or path.shape[1] < 1:
            raise ValueError(f"targets[{key!r}] must have shape (N, F, 3) (characters, frames, xyz) with N, F >= 1 "
                             f"like the first path, got {path.shape}")
        if paths and path.shape[:2] != paths[0].shape[:2]:
            raise ValueError(f"targets[{key!r}] has {path.shape[0]} characters x {path.shape[1]} frames, the targets "
                             f"before it {paths[0].shape[0]} x {paths[0].shape[1]}; every path needs the same")
        _check_cells(path, f"targets[{key!r}]")
        paths.append(path)
    return np.ascontiguousarray(np.stack(paths, axis=2), dtype=np.float64)


def _check_cells(points: np.ndarray, name: str) -> None:
    """ValueError naming ``name``, the character and the frame of the first point (N, F, 3) with a
    NaN, an inf or a coordinate too large to square."""
    bad = np.argwhere(~(np.abs(points) < MAX_COORDINATE).all(axis=-1))
    if bad.size:
        c, f = (int(v) for v in bad[0][:2])
        what = "not finite (NaN or inf)" if not np.isfinite(points[c, f]).all() else "too large"
        raise ValueError(f"{name} is {what} for character {c} in frame {f}; coordinates must be finite and below "
                         f"{MAX_COORDINATE:g}")


def crowd_bytes(characters: int, frames: int, n: int, k: int, *, joint_frames: bool = False) -> int:
    """About how many bytes a crowd's ``solve_sequence`` allocates (``sequence_bytes`` of all its
    characters' frames)."""
    from fabrik.solvers.sequence import sequence_bytes

    return sequence_bytes(characters * frames, n, k, joint_frames=joint_frames)


def solve_crowd(skeleton, targets, initial, root, *, method, tol, max_iter, options, progress) -> SequenceSolution:
    """``solve_sequence`` for a crowd (``fabrik.solvers.sequence.solve_sequence`` documents the
    arguments; ``options`` holds the method's, ``rigid_sub_bases`` and ``swing_limbs`` included)."""
    from fabrik.kernels._cache_guard import announce_compile
    from fabrik.kernels.batch_tree import crowd_tree
    from fabrik.solvers.batch_skeleton import check_frame_rows, per_solve
    from fabrik.solvers.skeleton_fabrik import (_kernel_inputs, _root_option, _stop, dls_start_damping,
                                                raise_kernel_error, retries_short, solve_skeleton_sequence,
                                                target_arrays)

    shape = np.shape(next(iter(targets.values())))
    n = skeleton.n_joints
    limited = bool(skeleton.constraints)
    if len(shape) == 3:
        need = crowd_bytes(int(shape[0]), int(shape[1]), n, len(targets), joint_frames=limited)
        per = max(1, need // max(int(shape[0]), 1))
        check_memory(need, f"solve_sequence of {int(shape[0]):,} characters x {int(shape[1]):,} frames on a skeleton "
                           f"of {n} joints",
                     lambda available: f"solve it in groups of at most {max(1, available // (2 * per)):,} characters "
                                       "(half the memory available)")
    paths = crowd_paths(targets)
    count, frames, k, _ = paths.shape
    arrays = rig(skeleton)
    idx, _, names = target_arrays(skeleton, dict(zip(targets, paths[0, 0])), arrays)
    initials = arrays.rest[None] if initial is None else per_solve(initial, "initial", (n, 3), count)
    roots = None
    if root is not None:
        roots = real_numbers(root, "root")
        if roots.shape == (3,):
            roots = np.broadcast_to(roots, (1, frames, 3))
        if roots.shape[1:] != (frames, 3) or roots.shape[0] not in (1, count):
            raise ValueError(f"root must have shape (3,) for every character and frame or ({count}, {frames}, 3), one "
                             f"per character and frame; got {np.shape(root)}")
        roots = np.ascontiguousarray(roots, dtype=np.float64)
        _check_cells(roots, "root")
    chosen = registry.route(method, "skeleton", limited=limited)
    if chosen.sequence is None:
        return _one_by_one(skeleton, chosen.name, names, paths, initials, roots, tol, max_iter, options, progress)
    with_frames = chosen.frames
    opts = chosen.options("skeleton", options)
    tol = check_tol(tol)
    cap = check_max_iter(chosen.skeleton.max_iter if max_iter is None else max_iter)
    root_matrix, free_root = _root_option(opts.root_rotation) if with_frames else (None, False)
    damping = dls_start_damping(skeleton, opts)
    groups, limits, kernel_options = _kernel_inputs(arrays, with_frames, opts.rigid_sub_bases, opts.swing_limbs,
                                                    root_matrix, free_root, damping)
    if not with_frames:
        frames_in = NO_FRAMES[None]
    elif opts.initial_frames is not None:
        frames_in = check_frame_rows(per_solve(opts.initial_frames, "initial_frames", (n, 3, 3), count), n).copy()
    else:
        frames_in = np.stack([frames_from_pose(skeleton, p) for p in initials])
    if with_frames and root_matrix is not None:
        frames_in[:, 0] = root_matrix
    root_from_target = roots is None
    rts = np.ascontiguousarray(np.repeat(initials[:, None, 0], frames, axis=1)) if roots is None else roots
    # a character whose frame ends short is handed to the single take's path, which retries it
    turn = retries_short(opts, with_frames, root_matrix)
    out = np.empty((count, frames, n, 3))
    out_frames = np.empty((count, frames, n if with_frames else 0, 3, 3))
    iterations = np.zeros((count, frames), np.int64)
    errors = np.zeros((count, frames, k))
    codes = np.zeros((count, frames), np.int64)
    done = np.zeros(count, np.int64)
    stop = _stop(tol, cap)
    announce_compile(crowd_tree)
    from fabrik.solvers.batch import _parallel

    step = count if not progress else max(PROGRESS_CHARACTERS, -(-count // 50))
    with progress_bar(progress, count * frames, chosen.name, "frame") as bar:
        for s in range(0, count, step):
            rows = slice(s, min(count, s + step))
            take = TreeTake(idx, paths[rows], _rows(initials, rows), _rows(frames_in, rows), _rows(rts, rows),
                            root_from_target)
            done[rows] = _parallel(None, crowd_tree, (arrays.tree, groups, limits, take, stop, kernel_options, turn,
                                                      TakeOut(out[rows], out_frames[rows], iterations[rows],
                                                              errors[rows], codes[rows])))
            if bar is not None:
                bar.update((rows.stop - rows.start) * frames)
    for c in np.flatnonzero(done < frames).tolist():
        f = int(done[c])
        if f < frames and codes[c, f] < 0:  # bad input in frame f (nothing written for it)
            try:
                raise_kernel_error(int(codes[c, f]), skeleton, idx, f)
            except ValueError as exc:
                raise ValueError(f"character {c}, {exc}") from None
        # reach_step or turn_search: a frame ended short; the single take's path retries it and goes on
        take = solve_skeleton_sequence(skeleton, idx, paths[c], initials[0 if initials.shape[0] == 1 else c],
                                       None if roots is None else roots[0 if roots.shape[0] == 1 else c], tol, cap,
                                       opts.rigid_sub_bases, opts.swing_limbs,
                                       initial_frames=frames_in[0 if frames_in.shape[0] == 1 else c]
                                       if with_frames else None,
                                       root_rotation=opts.root_rotation, turn_search=opts.turn_search,
                                       reach_step=opts.reach_step, dls_start=damping, with_frames=with_frames)
        out[c], out_frames[c], iterations[c], errors[c], codes[c] = (take.positions, take.frames, take.iterations,
                                                                     take.effector_errors, take.status_codes)
    return SequenceSolution(out, iterations, errors, codes, chosen.name, tuple(names),
                            out_frames if with_frames else None)


def _rows(values: np.ndarray, rows: slice) -> np.ndarray:
    return values if values.shape[0] == 1 else values[rows]


def _one_by_one(skeleton, method, names, paths, initials, roots, tol, max_iter, options, progress):
    """A method without a whole-take kernel: each character's take through ``solve_sequence``."""
    from fabrik.solvers.sequence import solve_sequence

    takes = []
    with progress_bar(progress, paths.shape[0], method, "character") as bar:
        for c in range(paths.shape[0]):
            takes.append(solve_sequence(skeleton, {name: paths[c, :, t] for t, name in enumerate(names)},
                                        initials[0 if initials.shape[0] == 1 else c],
                                        None if roots is None else roots[0 if roots.shape[0] == 1 else c],
                                        method=method, tol=tol, max_iter=max_iter, **options))
            if bar is not None:
                bar.update(1)
    frames = None if takes[0].frames is None else np.stack([t.frames for t in takes])
    return SequenceSolution(np.stack([t.positions for t in takes]), np.stack([t.iterations for t in takes]),
                            np.stack([t.effector_errors for t in takes]), np.stack([t.status_codes for t in takes]),
                            takes[0].method, takes[0].effectors, frames)


__all__ = ["solve_crowd", "is_crowd", "crowd_bytes"]
