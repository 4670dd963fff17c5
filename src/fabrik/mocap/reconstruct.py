"""Reconstructing a take from a few known joints: every frame solved from the recorded positions
of its end effectors and root, started from the answer of the frame before (the first frame from
the recording), as a tracker or a motion-capture clean-up would.

``reconstruct_take(skeleton, motion, ...)`` does it for a loaded BVH take (``prepare_take`` sets
the take up, ``resolve_constraints`` adds limits) and returns every joint of the file;
``reconstruct_positions(skeleton, positions, ...)`` for recorded positions of a skeleton. Both
solve with one method through ``fabrik.solve_sequence``; the method decides what it takes
(``fabrik.solvers.registry``): FABRIK's tracking settings ``rigid_sub_bases`` and
``swing_limbs``, a method with joint limits its first frame's joint frames.

Units are the data's; the default tolerance is ``DEFAULT_REL_TOL`` of the skeleton's height
(``Skeleton.height()``: the rest pose's extent along its tallest axis).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from fabrik.mocap.takes import Take, check_positions, effector_indices, prepare_take, take_limits
from fabrik.model.motion import Motion
from fabrik.model.skeleton import Skeleton
from fabrik.solvers import registry
from fabrik.solvers.result import SequenceSolution

#: The default tolerance as a fraction of the skeleton's height.
DEFAULT_REL_TOL = 1e-3


@dataclass(frozen=True, eq=False)
class Reconstruction:
    """One method's reconstruction of a take.

    Attributes:
        positions: (F, n, 3) float64 every joint in every frame, in the data's units: the solved
            joints (``joints``), and the recorded positions of any joint outside them.
        joints: (m,) int64 the indices of the solved joints (``Take.joints``; ``arange(n)`` from
            ``reconstruct_positions``).
        solution: the ``fabrik.SequenceSolution`` on those m joints: its ``method`` (the one that
            ran), ``iterations`` (F,), ``statuses``, ``reached`` (F,) bool, ``effector_errors``
            (F, k) and, for a method with joint limits, ``frames`` (F, m, 3, 3).
        effectors: the names of the k joints that followed their recorded paths.
        tol: the tolerance the solve used (data units).
        seconds: wall time of the solve (``fabrik.solve_sequence``; on the first call in a
            process it includes compiling the method's kernels).
        notes: how the take was set up for the solvers (``Take.notes``).
        unplaced: joints the ``"humanoid"`` limits could not place a limit on.
        body: the skeleton that was solved (``Take.body``), with the limits the solve kept;
            ``fabrik.mocap.save_take`` writes a constrained reconstruction keeping them.
    """

    positions: np.ndarray
    joints: np.ndarray
    solution: SequenceSolution
    effectors: tuple[str, ...]
    tol: float
    seconds: float
    notes: tuple[str, ...] = ()
    unplaced: tuple[str, ...] = ()
    body: Skeleton | None = None

    @property
    def method(self) -> str:
        """The method that solved the take."""
        return self.solution.method

    @property
    def frames(self) -> np.ndarray | None:
        """(F, m, 3, 3) joint frames of the solved joints for a method with joint limits, else None."""
        return self.solution.frames

    def __repr__(self) -> str:
        f, n = self.positions.shape[:2]
        return (f"Reconstruction(method={self.method!r}, frames={f}, joints={n}, solved={len(self.joints)}, "
                f"reached={int(self.solution.reached.sum())}/{f})")


def _check_tol(tol, skeleton: Skeleton) -> float:
    tol = DEFAULT_REL_TOL * skeleton.height() if tol is None else float(tol)
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be finite and >= 0, got {tol}")
    return tol


def _solve(skeleton: Skeleton, truth: np.ndarray, eff: list[int], method: str, tol: float, max_iter, rigid_sub_bases,
           swing_limbs: bool, progress: bool, options: dict) -> tuple[SequenceSolution, float]:
    """``fabrik.solve_sequence`` over every frame of ``truth`` (F, n, 3): the joints ``eff`` follow
    their recorded paths, the root its own; started from ``truth[0]``. The tracking settings and
    the first frame's joint frames go to the method that takes them; ``options`` override them.
    Returns (solution, seconds)."""
    from fabrik.solvers.sequence import solve_sequence

    chosen = registry.route(method, "skeleton", limited=bool(skeleton.constraints)).name
    given = {}
    for name, value in (("rigid_sub_bases", rigid_sub_bases), ("swing_limbs", swing_limbs), ("turn_search", True),
                        ("reach_step", True)):
        if registry.takes_option(chosen, "skeleton", name):
            given[name] = value
    if registry.takes_option(chosen, "skeleton", "initial_frames") and options.get("initial_frames") is None:
        from fabrik.model.geometry import frames_from_pose

        options = {**options, "initial_frames": frames_from_pose(skeleton, truth[0])}
    if options.get("initial_frames") is not None:
        options = {**options, "initial_frames": np.ascontiguousarray(options["initial_frames"], dtype=np.float64)}
    given.update(options)
    targets = {j: np.ascontiguousarray(truth[:, j]) for j in eff}
    t0 = time.perf_counter()
    solution = solve_sequence(skeleton, targets, np.ascontiguousarray(truth[0]), np.ascontiguousarray(truth[:, 0]),
                              method=method, tol=tol, max_iter=max_iter, progress=progress, **given)
    return solution, time.perf_counter() - t0


def reconstruct_positions(skeleton: Skeleton, positions, *, effectors: Sequence[str | int] | None = None,
                          method: str = "fabrik", tol: float | None = None, max_iter: int | None = None,
                          rigid_sub_bases: bool | str = "auto", swing_limbs: bool = True, progress: bool = False,
                          **options) -> Reconstruction:
    """Reconstruct every frame of recorded ``positions`` from its effectors and root, with one method.

    Frame f is solved for the recorded positions of the effectors and the root in frame f,
    started from the answer of frame f - 1 (frame 0 from the recording itself).

    Args:
        skeleton: the skeleton (n joints) the positions belong to, with joint limits attached
            (``Skeleton.with_constraints``) to solve with them.
        positions: (F, n, 3) recorded world positions (e.g. ``motion.world_positions(skeleton)``;
            for a BVH file with position channels use ``reconstruct_take``).
        effectors: joint names or indices that follow their recorded paths; default
            ``default_effectors(skeleton)`` (the leaves, zero-length End Sites standing for
            their parent).
        method: a skeleton method (``fabrik.methods("skeleton")``); on a skeleton with limits,
            the method that applies them in its stead (as ``fabrik.solve`` chooses).
        tol: tolerance in the data's units; default ``DEFAULT_REL_TOL`` x ``skeleton.height()``.
        max_iter: iteration cap per frame; default the method's own.
        rigid_sub_bases, swing_limbs: FABRIK's tracking settings (``fabrik.solve``; default
            ``"auto"`` and True, as ``fabrik reconstruct`` uses them), given to the method only
            if it takes them.
        progress: show a progress bar over the frames (tqdm, on stderr).
        **options: the method's own options, e.g. ``damping`` (data units) for ``jacobian-dls``,
            ``initial_frames`` (n, 3, 3) for a method with limits (default: zero twist from
            ``positions[0]``).

    Returns:
        A ``Reconstruction`` (``joints`` is ``arange(n)``).

    Raises:
        ValueError: a bad skeleton, positions of the wrong shape or not finite, unknown or
            repeated effectors, the root as an effector, no effector, an unknown method, a bad
            ``tol``, or an option the method does not take.
    """
    truth = check_positions(skeleton, positions)
    eff = effector_indices(skeleton, effectors)
    tol = _check_tol(tol, skeleton)
    _check_method(method)
    solution, seconds = _solve(skeleton, truth, eff, method, tol, max_iter, rigid_sub_bases, swing_limbs, progress,
                               options)
    return Reconstruction(solution.positions, np.arange(skeleton.n_joints), solution,
                          tuple(skeleton.names[j] for j in eff), tol, seconds, body=skeleton)


def _check_method(method) -> None:
    """ValueError naming the skeleton methods unless ``method`` is one."""
    from fabrik.solvers import methods

    have = methods("skeleton")
    if not isinstance(method, str) or method not in have:
        raise ValueError(f"unknown skeleton method {method!r}; methods are: {', '.join(have)}")


def reconstruct_take(skeleton: Skeleton, motion: Motion, *, effectors: Sequence[str | int] | None = None,
                     method: str = "fabrik", constraints=None, tol: float | None = None, max_iter: int | None = None,
                     rigid_sub_bases: bool | str = "auto", swing_limbs: bool = True, progress: bool = False,
                     **options) -> Reconstruction:
    """Reconstruct a recorded take from its effectors and root, with one method.

    The take is set up as ``prepare_take`` describes (bones from constant position channels; a
    joint moving above the whole body becomes the solvers' root, and the joints outside the
    body keep their recorded motion), then solved as ``reconstruct_positions`` describes.

    Args:
        skeleton, motion: a loaded take (``fabrik.load_bvh``), n joints and F frames.
        effectors: joint names or indices (of the file's skeleton) that follow their recorded
            paths; default ``default_effectors`` of the solvers' skeleton (``Take.body``).
        method: a skeleton method (``fabrik.methods("skeleton")``). With ``constraints`` a
            method without limits hands the take to its variant with them (``fabrik`` to
            ``fabrik-constrained``); a method with limits needs ``constraints``.
        constraints: joint limits, ``"humanoid"``, a constraints JSON file or a mapping
            (``resolve_constraints``); the method then starts from the recording's first-frame
            joint frames (``Take.initial_frames``) unless ``initial_frames`` is given.
        tol: tolerance in file units; default ``DEFAULT_REL_TOL`` x the solvers' skeleton height.
        max_iter, rigid_sub_bases, swing_limbs, progress, **options: as for
            ``reconstruct_positions``.

    Returns:
        A ``Reconstruction`` with ``positions`` (F, n, 3) for every joint of the file;
        ``fabrik.mocap.save_take`` writes it as BVH.

    Raises:
        ValueError: as ``prepare_take``, ``resolve_constraints`` and ``reconstruct_positions``;
            a method with limits without ``constraints``; an effector outside the solved joints.
    """
    take = prepare_take(skeleton, motion)
    body = take.body
    _check_method(method)
    if constraints is None and registry.get(method).limits and not body.constraints:
        raise ValueError(f"method {method!r} applies joint limits and the take has none: give constraints "
                         "('humanoid', a constraints JSON file or a mapping)")
    unplaced: tuple[str, ...] = ()
    if constraints is not None:
        limits, reference, missed = take_limits(take, constraints)
        body = body.with_constraints(limits, reference=reference)
        unplaced = tuple(missed)
        if registry.takes_option(registry.route(method, "skeleton", limited=True).name, "skeleton", "initial_frames"):
            options.setdefault("initial_frames", take.initial_frames())
    names = None if effectors is None else _body_effectors(take, effectors)
    rec = reconstruct_positions(body, take.body_positions, effectors=names, method=method, tol=tol,
                                max_iter=max_iter, rigid_sub_bases=rigid_sub_bases, swing_limbs=swing_limbs,
                                progress=progress, **options)
    return Reconstruction(take.whole(rec.positions), take.joints, rec.solution, rec.effectors, rec.tol, rec.seconds,
                          take.notes, unplaced, body)


def _body_effectors(take: Take, effectors) -> list[str]:
    """``effectors`` (names or indices of the file's skeleton) as names of ``take.body``'s joints."""
    if isinstance(effectors, (str, bytes)):
        raise ValueError(f"effectors must be a list of joint names or indices, got the string {effectors!r}")
    file, inside = take.skeleton, set(take.body.names)
    names = []
    for e in effectors:
        if isinstance(e, str):
            file.index(e)  # an unknown name: ValueError listing the joints
            name = e
        else:
            j = int(e)
            if not 0 <= j < file.n_joints:
                raise ValueError(f"effector index {j} out of range 0..{file.n_joints - 1}")
            name = file.names[j]
        if name not in inside:
            raise ValueError(f"effector {name!r} is outside the solved body (its root here is {take.body.names[0]!r}: "
                             f"{take.notes[0] if take.notes else ''}); it keeps its recorded motion")
        names.append(name)
    return names


__all__ = ["Reconstruction", "reconstruct_take", "reconstruct_positions", "DEFAULT_REL_TOL"]
