"""Comparison methods with joint limits on skeletons: CCD and the Jacobian methods, clamped.

Registered skeleton methods: ``"ccd-constrained"``, ``"jacobian-transpose-constrained"``,
``"jacobian-dls-constrained"`` and ``"jacobian-svd-dls-constrained"``;
``fabrik.solve(skeleton.with_constraints({...}), targets=..., method="ccd")`` routes here. They are
the unconstrained methods of ``fabrik.solvers.skeleton_methods`` with the limits applied as far as
each method allows (``fabrik.kernels.tree_methods``, the same kernel with frames): CCD restricts every bone it
turns to its limit before applying the turn; the Jacobian methods take their usual step and then
clamp every joint into its limits, from the root outwards. Every returned pose (and every pose in
between) satisfies every limit, with exact bone lengths.

Limits, frames and the root follow ``fabrik.solvers.skeleton_fabrik`` exactly (the
same ``limit_violations`` checks every method): a limit on joint j restricts the bones leaving j,
in the reference frame ``F[j] R0[j]^T R0[c]``; frames come from ``initial_frames`` (or from the
initial pose, ``frames_from_pose``); the root's orientation is held at ``initial_frames[0]`` or
``root_rotation``.

Options: ``initial_frames`` (n, 3, 3), ``root_rotation`` (a rotation; ``"free"`` is not supported
here), and for the Jacobian methods the options of the unconstrained ones (``damping``,
``max_error_step``, ``max_angle_step``, ``alpha`` for the transpose). Default caps: CCD 1000,
Jacobian 10000 iterations. Solution extras: ``frames`` (n, 3, 3), ``active_constraints`` (names of
the joints whose limit is on its boundary), ``effector_error_array`` (k,).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabrik.kernels.tree_limits import refresh_active
from fabrik.kernels.tree_methods import CCD, tree_method
from fabrik.model.constraints import as_rotation_matrix
from fabrik.solvers.jacobian import DampedOptions, TransposeOptions
from fabrik.solvers.registry import JACOBIAN_MAX_ITER, Solver, add
from fabrik.solvers.result import Solution
from fabrik.model.rig import rig
from fabrik.solvers.skeleton_fabrik import _writable, array_inputs, prepare, raise_kernel_error
from fabrik.model.pose_frames import frames_from_pose
from fabrik.solvers.skeleton_fabrik import FrameOptions, constrained_skeleton_solution
from fabrik.solvers.skeleton_methods import CODES, NO_SETTINGS, kernel_settings


@dataclass(frozen=True, eq=False)
class TransposeFrameOptions(TransposeOptions, FrameOptions):
    """The transpose's options (``TransposeOptions``) and ``FrameOptions``."""


@dataclass(frozen=True, eq=False)
class DampedFrameOptions(DampedOptions, FrameOptions):
    """The damped methods' options (``DampedOptions``) and ``FrameOptions``."""


def _frames(skeleton, initial, frames, root_rotation) -> np.ndarray:
    """Checked (n, 3, 3) start frames (a fresh writable array), root orientation applied."""
    n = skeleton.n_joints
    if frames is None:
        F = frames_from_pose(skeleton, initial)
    else:
        F = np.array(frames, dtype=np.float64, order="C")
        if F.shape != (n, 3, 3):
            raise ValueError(f"initial_frames must have shape ({n}, 3, 3), got {F.shape}")
        if not np.isfinite(F).all():
            raise ValueError("initial_frames contain a non-finite value")
        if np.abs(np.einsum("nji,njk->nik", F, F) - np.eye(3)).max() > 1e-6 or (np.linalg.det(F) < 0).any():
            raise ValueError("initial_frames must be rotation matrices (orthonormal, det +1)")
    if root_rotation is not None:
        if isinstance(root_rotation, str):
            raise ValueError(f"root_rotation must be a rotation or None for these methods, got {root_rotation!r} "
                             "('free' is supported by fabrik-constrained only)")
        F[0] = as_rotation_matrix(root_rotation, "root_rotation")
    return F


def _run(name, code, skeleton, idx, pos, p0, frames, root, root_from_target, tol, max_iter, options) -> Solution:
    arrays = rig(skeleton)
    settings_ = NO_SETTINGS if code == CCD else kernel_settings(options, arrays.lengths)
    out, F, row_active, iterations, errors, status = tree_method(
        arrays.tree, arrays.limits, (idx, pos, p0, frames, root, root_from_target), float(tol), int(max_iter), code,
        settings_)
    if status < 0:
        raise_kernel_error(status, skeleton, idx)
    refresh_active(F, arrays.parents, arrays.lengths, arrays.limit_Q, arrays.limit_rows, row_active)
    return constrained_skeleton_solution(skeleton, name, out, F, row_active, iterations, errors, status, idx)


def _make(name, code):
    def solve_constrained(skeleton, targets, initial, root, tol, max_iter, options) -> Solution:
        arrays, indices, positions, names, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
        initial = _writable(initial, np.float64)
        frames = _frames(skeleton, initial, options.initial_frames, options.root_rotation)
        return _run(name, code, skeleton, indices, positions, initial, frames, _writable(root, np.float64),
                    root_from_target, tol, max_iter, options)

    def frame_solver(skeleton, indices, tol, max_iter, options):
        """One frame of a take on arrays (light per-frame checks)."""
        first = options.initial_frames

        def one(targets, previous, root, frames):
            idx, pos, p0, r, root_from_target = array_inputs(skeleton.n_joints, indices, targets, previous, root)
            F = _frames(skeleton, p0, first if frames is None else frames, options.root_rotation)
            return _run(name, code, skeleton, idx, pos, p0, F, r, root_from_target, tol, max_iter, options)
        return one

    solve_constrained.__name__ = "solve_" + name.replace("-", "_") + "_skeleton"
    solve_constrained.__qualname__ = solve_constrained.__name__
    solve_constrained.__doc__ = (f"Skeleton method {name!r} (module docstring); arguments as "
                                 "``fabrik.solvers.registry`` says.")
    return solve_constrained, frame_solver


_ccd, _ccd_frames = _make("ccd-constrained", CCD)
add("ccd-constrained", "skeleton", Solver(_ccd, FrameOptions(), kernels=(tree_method,)), frame=_ccd_frames, limits=True,
    frames=True)
for _base, _code in CODES.items():
    _fn, _frames_fn = _make(_base + "-constrained", _code)
    _defaults = TransposeFrameOptions() if _base == "jacobian-transpose" else DampedFrameOptions()
    add(_base + "-constrained", "skeleton", Solver(_fn, _defaults, JACOBIAN_MAX_ITER, (tree_method,)), frame=_frames_fn,
        limits=True, frames=True)
    add(_base, limited=_base + "-constrained")
add("ccd", limited="ccd-constrained")

__all__ = ["TransposeFrameOptions", "DampedFrameOptions"]
