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
"""

from __future__ import annotations

import math

import numpy as np

from fabrik.kernels.tree_methods import CCD, DLS, SVD_DLS, TRANSPOSE, tree_method
from fabrik.model.rig import NO_FRAMES, NO_LIMITS
from fabrik.solvers.jacobian import PAPER, mean_bone_length, settings
from fabrik.solvers.registry import JACOBIAN_MAX_ITER, Solver, add
from fabrik.solvers.result import STATUSES, Solution
from fabrik.solvers.skeleton_fabrik import _writable, prepare, raise_kernel_error

CODES = {"jacobian-transpose": TRANSPOSE, "jacobian-dls": DLS, "jacobian-svd-dls": SVD_DLS}

#: The ``settings`` tuple of ``tree_method`` for CCD, which reads none.
NO_SETTINGS = (0.0, 0.0, 0.0, 0.0)


def _run(method, skeleton, targets, initial, root, tol, max_iter, options) -> Solution:
    """Check the inputs, run ``tree_method`` without limits, and build the ``Solution``."""
    arrays, indices, positions, names, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
    code = CODES.get(method, CCD)
    settings_ = NO_SETTINGS if code == CCD else kernel_settings(options, arrays.lengths)
    task = (indices, positions, _writable(initial, np.float64), NO_FRAMES, root, root_from_target)
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

__all__ = ["solve_ccd_skeleton", "skeleton_settings", "kernel_settings", "CODES", "NO_SETTINGS"]
