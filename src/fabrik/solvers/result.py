"""The result record every solver returns."""

from __future__ import annotations

import collections.abc
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

import numpy as np

#: Why a solve stopped. ``reached``: the end effector(s) within ``tol`` of the target(s);
#: ``unreachable``: the target is out of the model's reach and the model is as close as it can
#: get (a chain stretched straight at it, or folded towards a target inside its inner reach;
#: for an unconstrained chain, within ``tol`` of that closest distance); ``stalled``: the
#: effector stopped making progress (it moved less than ``tol`` in one iteration and the error
#: stopped falling) without reaching the target, or short of the closest an out-of-reach target
#: allows; ``max_iterations``: the iteration cap came first. Solves with obstacles
#: (``fabrik.obstacles``) also end ``obstructed``: a target lies inside an obstacle (the answer is
#: the closest pose found that keeps every bone out of them), or ``blocked``: a target within reach
#: was not reached and a bone of the answer rests against an obstacle (it could not be reached
#: around them).
STATUSES = ("reached", "unreachable", "stalled", "max_iterations", "obstructed", "blocked")

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Solution(NamedTuple):
    """The outcome of one IK solve (an immutable record).

    Attributes:
        positions: (n, d) float64 joint positions, root first; a new array, never the input.
        iterations: iterations used (for FABRIK, one forward and one backward stage each).
        error: distance from the end effector to its target, in the model's units; for several
            targets, the largest of ``effector_errors``.
        status: one of ``STATUSES``.
        method: the name of the method that produced it.
        effector_errors: for skeletons, joint name -> distance to its target; else None.
        extras: method-specific read-only information, e.g. ``max_length_drift`` (FTL) or
            joint frames and active limits (constrained solves).
        joint_angles: for an ``Arm``, the solved pose in the model's own coordinates: (m,) joint
            angles in radians (``fabrik.forward(arm, joint_angles)`` gives ``positions``); else None.
    """

    positions: np.ndarray
    iterations: int
    error: float
    status: str
    method: str = "fabrik"
    effector_errors: Mapping[str, float] | None = None
    extras: Mapping[str, Any] = _EMPTY
    joint_angles: np.ndarray | None = None

    @property
    def reached(self) -> bool:
        """True when every target was reached within tolerance."""
        return self.status == "reached"

    def __repr__(self) -> str:
        return (f"Solution(method={self.method!r}, status={self.status!r}, iterations={self.iterations}, "
                f"error={self.error:.3g}, positions=<{self.positions.shape[0]}x{self.positions.shape[1]}>)")


_new_tuple = tuple.__new__


def plain_solution(positions, iterations: int, error: float, status: str, method: str) -> Solution:
    """``Solution(positions, iterations, error, status, method)`` without the NamedTuple's argument
    handling (half its cost): the hot path of single-chain solves."""
    return _new_tuple(Solution, (positions, iterations, error, status, method, None, _EMPTY, None))


class SequenceSolution(NamedTuple):
    """The outcome of solving a run of F frames, each started from the frame before (an immutable
    record of arrays; ``fabrik.solvers.skeleton_fabrik.solve_skeleton_sequence``).

    A crowd's (``solve_sequence`` of N characters) has a leading axis of N on every array.

    Attributes:
        positions: (F, n, 3) float64 joint positions per frame, root first.
        iterations: (F,) int64 iterations per frame.
        effector_errors: (F, k) float64 distance of each targeted joint to its target per frame,
            in the model's units, columns in the order the targets were given.
        status_codes: (F,) int64 index of each frame's status in ``STATUSES``.
        method: the name of the method that produced it.
        effectors: the names of the targeted joints, in the order of ``effector_errors``' columns.
        frames: (F, n, 3, 3) float64 joint frames per frame for the constrained methods (the
            ``extras["frames"]`` of each frame's ``Solution``), else None.
    """

    positions: np.ndarray
    iterations: np.ndarray
    effector_errors: np.ndarray
    status_codes: np.ndarray
    method: str = "fabrik"
    effectors: tuple[str, ...] = ()
    frames: np.ndarray | None = None

    @property
    def statuses(self) -> tuple:
        """Each frame's status, one of ``STATUSES`` (a crowd's: one tuple per character)."""
        if self.status_codes.ndim == 2:
            return tuple(tuple(STATUSES[c] for c in row) for row in self.status_codes.tolist())
        return tuple(STATUSES[c] for c in self.status_codes.tolist())

    @property
    def reached(self) -> np.ndarray:
        """(F,) bool: every target of the frame reached within tolerance."""
        return self.status_codes == STATUSES.index("reached")

    def __repr__(self) -> str:
        if self.positions.ndim == 4:  # a crowd
            c, f, n = self.positions.shape[:3]
            return (f"SequenceSolution(method={self.method!r}, characters={c}, frames={f}, joints={n}, "
                    f"reached={int(self.reached.sum())}/{c * f}, mean_iterations={float(self.iterations.mean()):.3g})")
        f, n = self.positions.shape[:2]
        return (f"SequenceSolution(method={self.method!r}, frames={f}, joints={n}, "
                f"reached={int(self.reached.sum())}/{f}, mean_iterations={float(self.iterations.mean()):.3g})")


class ConstrainedExtras(collections.abc.Mapping):
    """The read-only ``Solution.extras`` of a constrained solve.

    ``frames``, ``root_frame``, ``active_constraints`` (and ``orientation_error``) are stored;
    ``local_rotations``, ``swing_angles`` and ``twist_angles`` are computed on first access, so a
    solve does not pay for them unless they are read.

    For a chain (``parents`` None) frame i belongs to bone i and is relative to frame i - 1 (frame
    0 to ``root_frame``; the effector has no bone and gets the identity). For a skeleton
    (``parents`` the (n,) parent indices) frame i belongs to the bone arriving at joint i and is
    relative to its parent's frame; the root's frame is relative to the world axes. A 2D chain
    (``planar``) has no twist: its frames keep +Z on the plane's normal, and its twist angles are
    0 (a bone folded exactly back would otherwise read as a half turn of twist).
    """

    _DERIVED = ("local_rotations", "swing_angles", "twist_angles")

    def __init__(self, stored: dict, parents=None, planar: bool = False):
        self._data = dict(stored)
        self._parents = parents
        self._planar = planar

    def _derive(self) -> None:
        from scipy.spatial.transform import Rotation

        from fabrik.model.geometry import relative_twist

        frames = self._data["frames"]
        n = frames.shape[0]
        parents = np.empty_like(frames)
        if self._parents is None:
            parents[0] = self._data["root_frame"]
            parents[1:] = frames[:-1]
            with_bone = slice(0, n - 1)
        else:
            parents[0] = np.eye(3)
            parents[1:] = frames[self._parents[1:]]
            with_bone = slice(0, n)
        local = np.einsum("nji,njk->nik", parents, frames)
        if self._parents is None:
            local[-1] = np.eye(3)
        swing = np.arctan2(np.hypot(local[:, 0, 1], local[:, 2, 1]), local[:, 1, 1])
        twist = np.zeros(n)
        if not self._planar:
            twist[with_bone] = relative_twist(parents[with_bone], frames[with_bone])
        for name, value in (("local_rotations", Rotation.from_matrix(local).as_quat()), ("swing_angles", swing),
                            ("twist_angles", twist)):
            value.setflags(write=False)
            self._data[name] = value

    def __getitem__(self, key):
        if key in self._DERIVED and key not in self._data:
            self._derive()
        return self._data[key]

    def __iter__(self):
        keys = list(self._data)
        keys += [k for k in self._DERIVED if k not in self._data]
        return iter(keys)

    def __len__(self):
        return len(set(self._data) | set(self._DERIVED))

    def __repr__(self):
        return f"ConstrainedExtras({sorted(self)})"
