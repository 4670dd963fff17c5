"""Comparison methods for skeletons with several end effectors (section 5.2, Table 2).

Registered skeleton methods (use ``fabrik.solve(skeleton, targets=..., method=name)``):

* ``"ccd"``: CCD effector by effector, as games do: per iteration, for each effector in turn, one
  CCD sweep along its path to the root (or to the nearest targeted ancestor, which stays pinned).
* ``"jacobian-transpose"``, ``"jacobian-dls"``, ``"jacobian-svd-dls"``: every effector stacked
  into one system (3 rows per effector, 3 columns per bone on a path to a target; ball joints in
  world axes; the root's position fixed), with Buss & Kim's clamping of
  each effector's error (``max_error_step``) and of the joint-angle step (``max_angle_step``);
  options as the chain methods of ``fabrik.solvers.jacobian``.

Every bone turns about its parent joint as a ball joint, independently of its siblings (at a
sub-base each child bone has its own ball joint: the same freedom as FABRIK's point model, e.g.
hips and spine hanging separately from the pelvis). All keep bone lengths exactly (joints move by
rotations applied to bones, and every returned pose is rebuilt with exact lengths), never return
NaN and stop by the same rules as skeleton FABRIK (``reached`` / ``unreachable`` / ``stalled`` /
``max_iterations``). One compiled kernel runs them all, with and without limits
(``fabrik.kernels.tree_methods.tree_method``). Inputs are those of
``fabrik.solvers.skeleton_fabrik.solve_fabrik_skeleton``. Untargeted subtrees turn rigidly with
the joints they hang from (FABRIK translates them instead; rotation-based methods have no other
natural choice).

With joint limits (this module too: ``"ccd-constrained"``, ``"jacobian-transpose-constrained"``,
``"jacobian-dls-constrained"``, ``"jacobian-svd-dls-constrained"``; ``method="ccd"`` routes a
skeleton with limits there) the same kernel follows joint frames: CCD restricts every bone it
turns to its limit before applying the turn; the Jacobian methods take their usual step and then
clamp every joint into its limits, root outwards. Limits, frames and the root follow
``fabrik.solvers.skeleton_fabrik`` (a limit on joint j restricts the bones leaving j in
``F[j] R0[j]^T A[j] R0[c]``; frames from ``initial_frames`` or ``frames_from_pose``; the root's
orientation held at ``initial_frames[0]`` or ``root_rotation``, ``"free"`` not supported here).
Options: ``initial_frames``, ``root_rotation`` and the Jacobian options. Extras: ``frames``,
``active_constraints``, ``effector_error_array``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fabrik.kernels.records import TreeTask
from fabrik.kernels.tree_limits import refresh_active
from fabrik.kernels.tree_methods import CCD, DLS, SVD_DLS, TRANSPOSE, tree_method
from fabrik.model.constraints import as_rotation_matrix
from fabrik.model.geometry import frames_from_pose
from fabrik.model.rig import NO_FRAMES, NO_LIMITS, rig
from fabrik.solvers.jacobian import PAPER, DampedOptions, TransposeOptions, mean_bone_length, settings
from fabrik.solvers.registry import JACOBIAN_MAX_ITER, Solver, add
from fabrik.solvers.result import STATUSES, Solution
from fabrik.solvers.skeleton_fabrik import FrameOptions, constrained_skeleton_solution
from fabrik.solvers.skeleton_inputs import _writable, array_inputs, prepare, raise_kernel_error


CODES = {"jacobian-transpose": TRANSPOSE, "jacobian-dls": DLS, "jacobian-svd-dls": SVD_DLS}

#: The ``settings`` tuple of ``tree_method`` for CCD, which reads none.
NO_SETTINGS = (0.0, 0.0, 0.0, 0.0)


def _run(method, skeleton, targets, initial, root, tol, max_iter, options) -> Solution:
    """Check the inputs, run ``tree_method`` without limits, and build the ``Solution``."""
    arrays, indices, positions, names, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
    code = CODES.get(method, CCD)
    settings_ = NO_SETTINGS if code == CCD else kernel_settings(options, arrays.lengths)
    task = TreeTask(indices, positions, _writable(initial, np.float64), NO_FRAMES, root, root_from_target)
    out, _, _, iterations, errors, status = tree_method(arrays.tree, NO_LIMITS, task, float(tol), int(max_iter), code,
                                                        settings_)
    return _solution(method, names, out, iterations, errors, status, skeleton, indices)


def _solution(method, names, out, iterations, errors, code, skeleton, indices):
    if code < 0:
        raise_kernel_error(code, skeleton, indices)
    err = errors.tolist()
    return Solution(out, iterations, max(err), STATUSES[code], method, dict(zip(names, err)))


def solve_ccd_skeleton(skeleton, targets, initial, root, tol, max_iter, options) -> Solution:
    """CCD for several end effectors (no options); arguments as ``fabrik.solvers.registry`` says.
    One iteration is one sweep per effector not yet within ``tol``."""
    return _run("ccd", skeleton, targets, initial, root, tol, max_iter, options)


def skeleton_settings(options, lengths) -> tuple[float, float, float, float]:
    """The kernel's Jacobian settings for a skeleton: as for chains (``settings``), over the mean
    non-zero bone (zero-length BVH bones left out); no error clamp when every bone is zero."""
    mean = mean_bone_length(lengths)
    damping, step, angle, alpha = settings(options, mean)
    if mean == 0.0 and options.max_error_step is None:
        step = math.inf
    return damping, step, angle, alpha


def kernel_settings(options, lengths) -> tuple[float, float, float, float]:
    """``skeleton_settings`` as the ``settings`` tuple of ``tree_method``: (damping,
    max_angle_step, max_error_step, alpha), floats."""
    damping, step, angle, alpha = skeleton_settings(options, lengths)
    return float(damping), float(angle), float(step), float(alpha)


def _jacobian(method):
    def solve_jacobian_skeleton(skeleton, targets, initial, root, tol, max_iter, options) -> Solution:
        return _run(method, skeleton, targets, initial, root, tol, max_iter, options)

    solve_jacobian_skeleton.__name__ = "solve_" + method.replace("-", "_") + "_skeleton"
    solve_jacobian_skeleton.__qualname__ = solve_jacobian_skeleton.__name__
    solve_jacobian_skeleton.__doc__ = (f"Method {method!r} for skeletons (module docstring); options as for chains "
                                       "(``fabrik.solvers.jacobian``), lengths over the mean non-zero bone.")
    return solve_jacobian_skeleton


add("ccd", "skeleton", Solver(solve_ccd_skeleton, kernels=(tree_method,)))
for _method in CODES:
    add(_method, "skeleton", Solver(_jacobian(_method), PAPER[_method], JACOBIAN_MAX_ITER, (tree_method,)))


@dataclass(frozen=True, eq=False)
class TransposeFrameOptions(TransposeOptions, FrameOptions):
    """The transpose's options (``TransposeOptions``) and ``FrameOptions``."""


@dataclass(frozen=True, eq=False)
class DampedFrameOptions(DampedOptions, FrameOptions):
    """The damped methods' options (``DampedOptions``) and ``FrameOptions``."""


def _start_frames(skeleton, initial, frames, root_rotation) -> np.ndarray:
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


def _run_limited(name, code, skeleton, idx, pos, p0, frames, root, root_from_target, tol, max_iter, options) -> Solution:
    arrays = rig(skeleton)
    settings_ = NO_SETTINGS if code == CCD else kernel_settings(options, arrays.lengths)
    task = TreeTask(idx, pos, p0, frames, root, root_from_target)
    out, F, row_active, iterations, errors, status = tree_method(arrays.tree, arrays.limits, task, float(tol),
                                                                 int(max_iter), code, settings_)
    if status < 0:
        raise_kernel_error(status, skeleton, idx)
    refresh_active(F, arrays.parents, arrays.lengths, arrays.limit_Q, arrays.limit_rows, row_active)
    return constrained_skeleton_solution(skeleton, name, out, F, row_active, iterations, errors, status, idx)


def _make_limited(name, code):
    def solve_constrained(skeleton, targets, initial, root, tol, max_iter, options) -> Solution:
        arrays, indices, positions, names, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
        initial = _writable(initial, np.float64)
        frames = _start_frames(skeleton, initial, options.initial_frames, options.root_rotation)
        return _run_limited(name, code, skeleton, indices, positions, initial, frames, _writable(root, np.float64),
                    root_from_target, tol, max_iter, options)

    def frame_solver(skeleton, indices, tol, max_iter, options):
        """One frame of a take on arrays (light per-frame checks)."""
        first = options.initial_frames

        def one(targets, previous, root, frames):
            idx, pos, p0, r, root_from_target = array_inputs(skeleton.n_joints, indices, targets, previous, root)
            F = _start_frames(skeleton, p0, first if frames is None else frames, options.root_rotation)
            return _run_limited(name, code, skeleton, idx, pos, p0, F, r, root_from_target, tol, max_iter, options)
        return one

    solve_constrained.__name__ = "solve_" + name.replace("-", "_") + "_skeleton"
    solve_constrained.__qualname__ = solve_constrained.__name__
    solve_constrained.__doc__ = (f"Skeleton method {name!r} (module docstring); arguments as "
                                 "``fabrik.solvers.registry`` says.")
    return solve_constrained, frame_solver


_ccd, _ccd_frames = _make_limited("ccd-constrained", CCD)
add("ccd-constrained", "skeleton", Solver(_ccd, FrameOptions(), kernels=(tree_method,)), frame=_ccd_frames, limits=True,
    frames=True)
for _base, _code in CODES.items():
    _fn, _frames_fn = _make_limited(_base + "-constrained", _code)
    _defaults = TransposeFrameOptions() if _base == "jacobian-transpose" else DampedFrameOptions()
    add(_base + "-constrained", "skeleton", Solver(_fn, _defaults, JACOBIAN_MAX_ITER, (tree_method,)), frame=_frames_fn,
        limits=True, frames=True)
    add(_base, limited=_base + "-constrained")
add("ccd", limited="ccd-constrained")

__all__ = ["solve_ccd_skeleton", "skeleton_settings", "kernel_settings", "CODES", "NO_SETTINGS", "TransposeFrameOptions", "DampedFrameOptions"]
