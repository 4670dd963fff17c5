"""Comparison methods with joint limits on skeletons: CCD and the Jacobian methods, clamped.

Registered skeleton methods: ``"ccd-constrained"``, ``"jacobian-transpose-constrained"``,
``"jacobian-dls-constrained"`` and ``"jacobian-svd-dls-constrained"``;
``fabrik.solve(skeleton.with_constraints({...}), targets=..., method="ccd")`` routes here. They are
the unconstrained methods of ``fabrik.solvers.skeleton_methods`` with the limits applied as far as
each method allows (``fabrik.kernels.skeleton_methods_constrained``): CCD restricts every bone it
turns to its limit before applying the turn; the Jacobian methods take their usual step and then
clamp every joint into its limits, from the root outwards. Every returned pose (and every pose in
between) satisfies every limit, with exact bone lengths.

Limits, frames and the root follow ``fabrik.solvers.skeleton_fabrik_constrained`` exactly (the
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

import numpy as np

from fabrik.kernels.skeleton_methods_constrained import (DLS, SVD_DLS, TRANSPOSE, ccd_skeleton_constrained,
                                                         jacobian_skeleton_constrained, refresh_active)
from fabrik.model.constraints import as_rotation_matrix
from fabrik.solvers.registry import register
from fabrik.solvers.result import Solution
from fabrik.solvers.skeleton_fabrik import (_writable, array_inputs, check_options, prepare, raise_kernel_error,
                                           skeleton_arrays)
from fabrik.solvers.skeleton_fabrik_constrained import constrained_arrays, constrained_skeleton_solution, frames_from_pose
from fabrik.solvers.skeleton_methods import (DEFAULT_MAX_ITER, DEFAULT_MAX_ITER_JACOBIAN, _jacobian_settings,
                                             jacobian_options)

SUFFIX = "-constrained"
_CODES = {"jacobian-transpose": TRANSPOSE, "jacobian-dls": DLS, "jacobian-svd-dls": SVD_DLS}
METHODS = ("ccd-constrained",) + tuple(m + SUFFIX for m in _CODES)
_FRAME_OPTIONS = ("initial_frames", "root_rotation")


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


def _run(method, skeleton, idx, pos, p0, frames, root, root_from_target, tol, max_iter, settings=None) -> Solution:
    arrays = skeleton_arrays(skeleton)
    tables = constrained_arrays(skeleton)
    if method == "ccd-constrained":
        out, F, row_active, iterations, errors, code = ccd_skeleton_constrained(
            arrays.parents, arrays.lengths, arrays.rest_dirs, arrays.reach, arrays.order, arrays.subtree_end,
            arrays.position, tables.Q, tables.limits, idx, pos, p0, frames, root, root_from_target, float(tol),
            DEFAULT_MAX_ITER if max_iter is None else int(max_iter))
    else:
        damping, angle, step, alpha = settings
        out, F, row_active, iterations, errors, code = jacobian_skeleton_constrained(
            arrays.parents, arrays.lengths, arrays.rest_dirs, arrays.reach, tables.Q, tables.limits, idx, pos, p0,
            frames, root, root_from_target, float(tol),
            DEFAULT_MAX_ITER_JACOBIAN if max_iter is None else int(max_iter), _CODES[method[:-len(SUFFIX)]],
            damping, angle, step, alpha)
    if code < 0:
        raise_kernel_error(code, skeleton, idx)
    refresh_active(F, arrays.parents, arrays.lengths, tables.Q, tables.limits, row_active)
    return constrained_skeleton_solution(skeleton, method, out, F, row_active, iterations, errors, code, idx)


def _settings(method, options, arrays):
    """The Jacobian settings (damping, angle, step, alpha) from the non-frame options."""
    if method == "ccd-constrained":
        return None
    rest = {k: v for k, v in options.items() if k not in _FRAME_OPTIONS}
    return _jacobian_settings(method[:-len(SUFFIX)], rest, arrays)


def _allowed(method):
    """The options ``method`` takes: the frame options and, for the Jacobian methods, their settings."""
    return _FRAME_OPTIONS + (() if method == "ccd-constrained" else jacobian_options(method))


def _make(method):
    def solve_constrained(skeleton, targets, initial=None, root=None, tol=1e-3, max_iter=None, **options):
        check_options(method, options, _allowed(method))
        arrays, indices, positions, names, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
        settings = _settings(method, options, arrays)
        initial = _writable(initial, np.float64)
        frames = _frames(skeleton, initial, options.get("initial_frames"), options.get("root_rotation"))
        return _run(method, skeleton, indices, positions, initial, frames, _writable(root, np.float64),
                    root_from_target, tol, max_iter, settings)

    solve_constrained.__name__ = "solve_" + method.replace("-", "_") + "_skeleton"
    solve_constrained.__qualname__ = solve_constrained.__name__
    solve_constrained.__doc__ = (f"Skeleton method {method!r} (module docstring); arguments as "
                                 "``solve_fabrik_skeleton_constrained``, options as the unconstrained method plus "
                                 "``initial_frames`` and ``root_rotation``.")
    return register(method, "skeleton")(solve_constrained)


for _m in METHODS:
    _make(_m)


def solve_constrained_arrays(method, skeleton, target_indices, target_positions, initial, initial_frames=None,
                             root=None, tol=1e-3, max_iter=None, **options) -> Solution:
    """A constrained comparison method on arrays, for per-frame loops (light checks only).

    Args as ``fabrik.solvers.skeleton_fabrik_constrained.solve_skeleton_constrained_arrays``
    (``root_rotation`` is a rotation or None), plus the method's options.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    check_options(method, options, _allowed(method))
    arrays = skeleton_arrays(skeleton)
    idx, pos, p0, r, root_from_target = array_inputs(arrays.parents.shape[0], target_indices, target_positions,
                                                     initial, root)
    root_rotation = options.pop("root_rotation", None)
    settings = _settings(method, options, arrays)
    frames = _frames(skeleton, p0, initial_frames, root_rotation)
    return _run(method, skeleton, idx, pos, p0, frames, r, root_from_target, tol, max_iter, settings)


__all__ = ["solve_constrained_arrays", "METHODS", "SUFFIX"]
