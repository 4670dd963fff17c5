"""Solving a whole take: ``fabrik.solve_sequence``, every frame started from the answer of the
frame before (the way animation and motion-capture cleanup use IK).

A method with a whole-take path (``Method.sequence``: FABRIK on a skeleton without limits, one
compiled loop) runs the take in it; every other method goes frame by frame, on checked arrays
where the method offers that (``Method.frame``) and otherwise through ``fabrik.solve``, with the
same answers a hand-written loop would give. Methods whose solutions carry joint frames (the
constrained ones) start each frame from the frames the frame before ended with, so that twists
stay continuous.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from fabrik._progress import progress_bar
from fabrik._validation import MAX_COORDINATE, as_points, check_memory, real_numbers
from fabrik.kernels._cache_guard import announce_compile
from fabrik.solvers import registry
from fabrik.solvers.api import DEFAULT_TOL, solve
from fabrik.solvers.result import STATUSES, SequenceSolution
from fabrik.model.rig import rig, rigid_mode
from fabrik.solvers.skeleton_inputs import target_arrays


def solve_sequence(skeleton, targets, initial=None, root=None, *, method: str = "fabrik", tol=DEFAULT_TOL,
                   max_iter: int | None = None, rigid_sub_bases: bool | str | None = None,
                   swing_limbs: bool | None = None, progress: bool = False, **options) -> SequenceSolution:
    """Solve a take: frame f's targets from ``targets``, started from frame f - 1's answer.

    Args:
        skeleton: a ``fabrik.Skeleton`` (with or without joint limits).
        targets: ``{joint_name: path}``, each path an (F, 3) array of the joint's goal in every
            frame (the same F for all; names or integer joint indices as keys), in the
            skeleton's units. A crowd: each path (N, F, 3), N characters' takes solved at once,
            each character's frames warm-started from its own (``fabrik.solvers.crowd``).
        initial: (n, 3) the start pose of the first frame; default the rest pose. Never written.
            A crowd: (n, 3) for every character or (N, n, 3) one per character.
        root: the fixed root, (3,) for every frame or (F, 3) per frame; default the root joint's
            target where it has one, else ``initial[0]``. A crowd: (3,) or (N, F, 3).
        method: any skeleton method, by name or ``Method`` (``fabrik.methods("skeleton")``); with joint
            limits its ``-constrained`` variant, as ``fabrik.solve`` chooses.
        tol, max_iter: as for ``fabrik.solve`` (every frame; ``max_iter`` None is the method's
            default cap).
        rigid_sub_bases, swing_limbs: FABRIK's tracking options (``fabrik.solve(skeleton, ...)``);
            ``swing_limbs`` is also taken by ``fabrik-constrained``. None (default): the method's
            own defaults (FABRIK's ``"auto"`` and True, as for ``fabrik.solve``); a value other
            than None/False/"none" for a method that does not take the option is a ValueError.
        progress: show a progress bar (tqdm) over the frames.
        **options: the method's own options (e.g. ``damping`` for ``jacobian-dls``; for a
            constrained method ``initial_frames`` for the first frame and ``root_rotation``), and
            FABRIK's engine options (``poles``, ``weights``, ``obstacles``, ``self_collision``,
            ``loops``: ``fabrik.solve``), the same in every frame (such a take is solved frame by
            frame through ``fabrik.solve``).

    Returns:
        ``SequenceSolution``: positions (F, n, 3), iterations (F,), effector_errors (F, k) with
        columns in the order of ``targets`` (names in ``effectors``), status_codes (F,), the
        method that ran, and for a constrained method the joint frames (F, n, 3, 3). A crowd's
        arrays have a leading axis of N characters: positions (N, F, n, 3), and so on; character
        c's rows are ``solve_sequence`` of its own take, bit for bit.

    Raises:
        ValueError: a model that is not a skeleton, an unknown joint (listing the joints) or
            method, a path of the wrong shape or with a NaN or inf (naming the joint and the
            frame), paths of different lengths, a bad ``initial`` or ``root`` (naming the frame),
            an option the method does not take, or a frame the method refuses (naming the frame).
    """
    from fabrik.model.skeleton import Skeleton

    if not isinstance(skeleton, Skeleton):
        raise ValueError(f"solve_sequence takes a fabrik.Skeleton, got {type(skeleton).__name__}; for a chain, call "
                         "fabrik.solve once a frame with initial=<the previous solution's positions>")
    method = registry.name_of(method)
    from fabrik.solvers.crowd import is_crowd, solve_crowd

    if is_crowd(targets):
        chosen = registry.route(method, "skeleton", limited=bool(skeleton.constraints))
        _tracking_options(chosen, rigid_sub_bases, swing_limbs, options)
        return solve_crowd(skeleton, targets, initial, root, method=chosen.name, tol=tol, max_iter=max_iter,
                           options=options, progress=progress)
    _check_sequence_memory(skeleton, targets)
    paths = _paths(targets)
    frames = paths.shape[0]
    arrays = rig(skeleton)
    indices, _, _ = target_arrays(skeleton, dict(zip(targets, paths[0])), arrays)
    n = arrays.parents.shape[0]
    initial = arrays.rest if initial is None else as_points(initial, "initial", dim=3)
    if initial.shape[0] != n:
        raise ValueError(f"initial must have shape ({n}, 3) to match the skeleton, got {initial.shape}")
    roots = None if root is None else _roots(root, frames)
    chosen = registry.route(method, "skeleton", limited=bool(skeleton.constraints))
    _tracking_options(chosen, rigid_sub_bases, swing_limbs, options)
    announce_compile(*chosen.skeleton.kernels)
    if chosen.sequence is not None and _ENGINE.isdisjoint(options):
        opts = chosen.options("skeleton", options)
        cap = chosen.skeleton.max_iter if max_iter is None else max_iter
        with progress_bar(progress, frames, chosen.name, "frame") as bar:
            return chosen.sequence(skeleton, indices, paths, initial, roots, tol, cap, opts,
                                   None if bar is None else bar.update)
    return _frame_by_frame(skeleton, chosen.name, indices, paths, initial, roots, tol, max_iter, progress, options)


def _tracking_options(chosen, rigid_sub_bases, swing_limbs, options: dict) -> None:
    """Put ``rigid_sub_bases`` and ``swing_limbs`` into ``options`` where given explicitly and the
    method takes them (an "on" value also where it does not, so that the method's error names the
    option)."""
    for name, value, on in (("rigid_sub_bases", rigid_sub_bases, rigid_mode(rigid_sub_bases)),
                            ("swing_limbs", swing_limbs, swing_limbs)):
        if value is not None and (on or registry.takes_option(chosen.name, "skeleton", name)):
            options[name] = value


def sequence_bytes(frames: int, n: int, k: int, *, joint_frames: bool = False) -> int:
    """About how many bytes ``solve_sequence`` allocates for ``frames`` frames of a skeleton of
    ``n`` joints with ``k`` targeted joints: its answer (positions, iterations, errors, statuses;
    ``joint_frames``: the frames of a constrained method) and its working copies (the paths
    stacked, a root per frame)."""
    return frames * 8 * (3 * n + (9 * n if joint_frames else 0) + k + 2 + 3 * k + 3)


def _check_sequence_memory(skeleton, targets) -> None:
    """``InsufficientMemoryError`` before any work for more frames than the memory available
    holds; the frame count is read from the first path's shape (an array's without a copy)."""
    if not isinstance(targets, Mapping) or len(targets) == 0:
        return  # (``_paths`` names the problem)
    try:
        shape = np.shape(next(iter(targets.values())))
    except ValueError:
        return
    if len(shape) != 2:
        return
    need = sequence_bytes(int(shape[0]), skeleton.n_joints, len(targets), joint_frames=bool(skeleton.constraints))
    per_frame = max(1, need // max(int(shape[0]), 1))
    check_memory(need, f"solve_sequence of {int(shape[0]):,} frames on a skeleton of {skeleton.n_joints} joints",
                 lambda available: f"solve it in pieces of at most {max(1, available // (2 * per_frame)):,} frames, "
                                   "each started from the last one's pose (half the memory available)")


def _paths(targets) -> np.ndarray:
    """The targets' paths stacked as (F, k, 3), each checked (naming the joint and the frame)."""
    if not isinstance(targets, Mapping) or len(targets) == 0:
        raise ValueError("targets must be a non-empty mapping {joint_name: (F, 3) path}")
    paths = []
    for key, value in targets.items():
        path = real_numbers(value, f"targets[{key!r}]")
        if path.ndim != 2 or path.shape[1] != 3 or path.shape[0] < 1:
            raise ValueError(f"targets[{key!r}] must have shape (F, 3) with F >= 1, got {path.shape}")
        if path.shape[0] != (paths[0].shape[0] if paths else path.shape[0]):
            raise ValueError(f"targets[{key!r}] has {path.shape[0]} frames, the targets before it "
                             f"{paths[0].shape[0]}; every path needs the same number")
        _check_frames(path, f"targets[{key!r}]")
        paths.append(path)
    return np.ascontiguousarray(np.stack(paths, axis=1))


def _roots(root, frames: int) -> np.ndarray:
    """``root`` as (F, 3): one point for every frame or one per frame, finite."""
    try:
        roots = np.asarray(root, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"root must be a point (3,) or one point per frame ({frames}, 3) of numbers, "
                         f"got {root!r}") from None
    if roots.shape == (3,):
        roots = np.repeat(roots[None], frames, axis=0)
    elif roots.shape != (frames, 3):
        raise ValueError(f"root must have shape (3,) or ({frames}, 3), one per frame, got {roots.shape}")
    _check_frames(roots, "root")
    return np.ascontiguousarray(roots)


def _check_frames(points: np.ndarray, name: str) -> None:
    """Raise a ValueError naming ``name`` and the first frame (row of the (F, 3) ``points``)
    with a NaN, an inf or a coordinate too large to square."""
    bad = np.flatnonzero(~(np.abs(points) < MAX_COORDINATE).all(axis=1))
    if bad.size:
        row = points[bad[0]]
        if not np.isfinite(row).all():
            raise ValueError(f"{name} is not finite (NaN or inf) in frame {int(bad[0])}")
        raise ValueError(f"{name} has a coordinate of {np.abs(row).max():g} in frame {int(bad[0])}; coordinates "
                         f"must stay below {MAX_COORDINATE:g}")


def frame_solver(skeleton, method: str, indices: np.ndarray, tol, max_iter, options: Mapping):
    """One frame of a take: a function ``(targets (k, 3), previous (n, 3), root (3,) or None,
    frames (n, 3, 3) or None) -> Solution`` solving ``skeleton`` with ``method`` for the joints
    ``indices``, from the previous frame's positions (and, for a method whose solutions carry
    joint frames, its frames; None on the first frame: the ``initial_frames`` option or frames
    derived from the pose). The method's own array path (``Method.frame``) where it has one,
    else ``fabrik.solve``. The method name and its options are checked before any frame."""
    chosen = registry.route(method, "skeleton", limited=bool(skeleton.constraints))
    engine = {key: value for key, value in options.items() if key in _ENGINE}
    opts = chosen.options("skeleton", {key: value for key, value in options.items() if key not in _ENGINE})
    cap = chosen.skeleton.max_iter if max_iter is None else max_iter
    if chosen.frame is not None and not engine:
        return chosen.frame(skeleton, indices, tol, cap, opts)
    names = [skeleton.names[j] for j in indices.tolist()]
    carry = bool(engine) and chosen.frames  # the engine options' path: fabrik.solve, frames carried

    def one(targets, previous, root, frames):
        more = options if not carry or frames is None else {**options, "initial_frames": frames}
        return solve(skeleton, targets=dict(zip(names, targets)), initial=previous, root=root, method=chosen.name,
                     tol=tol, max_iter=max_iter, **more)
    return one


def _frame_by_frame(skeleton, method: str, indices: np.ndarray, paths: np.ndarray, initial: np.ndarray,
                    roots: np.ndarray | None, tol, max_iter, progress: bool, options: Mapping,
                    desc: str | None = None) -> SequenceSolution:
    """``solve_sequence`` one frame at a time (``frame_solver``); a constrained method starts each
    frame from the joint frames the frame before ended with. ``desc``: the progress bar's label
    (default the method)."""
    frames, k, _ = paths.shape
    one = frame_solver(skeleton, method, indices, tol, max_iter, options)
    names = [skeleton.names[j] for j in indices.tolist()]
    carries_frames = registry.get(method).frames
    positions = np.empty((frames, skeleton.n_joints, 3))
    joint_frames = np.empty((frames, skeleton.n_joints, 3, 3)) if carries_frames else None
    iterations = np.zeros(frames, dtype=np.int64)
    errors = np.zeros((frames, k))
    codes = np.zeros(frames, dtype=np.int64)
    previous, previous_frames = initial, None
    step = max(1, frames // 100)
    with progress_bar(progress, frames, desc or method, "frame") as bar:
        for f in range(frames):
            try:
                sol = one(paths[f], previous, None if roots is None else roots[f], previous_frames)
            except ValueError as exc:
                if f == 0:  # the first frame's own input: as fabrik.solve words it
                    raise
                raise ValueError(f"frame {f}: {exc}") from None
            previous = positions[f] = sol.positions
            iterations[f] = sol.iterations
            errors[f] = [sol.effector_errors[name] for name in names]
            codes[f] = STATUSES.index(sol.status)
            if carries_frames:
                previous_frames = joint_frames[f] = sol.extras["frames"]
            if bar is not None and ((f + 1) % step == 0 or f + 1 == frames):
                bar.update((f + 1) - bar.n)
    return SequenceSolution(positions, iterations, errors, codes, method, tuple(names), joint_frames)


#: ``fabrik.solvers.extended.KEYS``: options that send every frame through ``fabrik.solve``.
_ENGINE = frozenset(("pole", "pole_joint", "poles", "weights", "obstacles", "self_collision", "loops"))

__all__ = ["solve_sequence", "frame_solver"]
