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
hips and spine hanging separately from the pelvis). All keep bone lengths exactly (joints move by rotations applied to bones, and every returned pose
is rebuilt with exact lengths), never return NaN and stop by the same rules as skeleton FABRIK
(``reached`` / ``unreachable`` / ``stalled`` / ``max_iterations``). Inputs are those of
``fabrik.solvers.skeleton_fabrik.solve_fabrik_skeleton``. Untargeted subtrees turn rigidly with
the joints they hang from (FABRIK translates them instead; rotation-based methods have no other
natural choice).
"""

from __future__ import annotations

import math


from fabrik._validation import check_positive
from fabrik.kernels.skeleton_methods import DLS, SVD_DLS, TRANSPOSE, ccd_skeleton, jacobian_skeleton
from fabrik.solvers.registry import register
from fabrik.solvers.result import STATUSES, Solution
from fabrik.solvers.skeleton_fabrik import check_options, prepare, raise_kernel_error

DEFAULT_MAX_ITER = 1000  # CCD
DEFAULT_MAX_ITER_JACOBIAN = 10000
#: Jacobian defaults, after Buss & Kim (2005) and the chain methods (``fabrik.solvers.jacobian``):
#: damping lambda in model units; the largest joint-angle change per step (radians); the
#: transpose gain (None: adaptive).
DEFAULT_DAMPING = 1.1
MAX_ANGLE_STEP = {"jacobian-transpose": math.pi / 6, "jacobian-dls": math.pi / 4, "jacobian-svd-dls": math.pi / 4}
#: Default ``max_error_step``: this fraction of the mean non-zero bone length (Buss & Kim's 0.4
#: for unit bones; zero-length BVH bones are left out of the mean).
ERROR_CLAMP_FRACTION = 0.4
_CODES = {"jacobian-transpose": TRANSPOSE, "jacobian-dls": DLS, "jacobian-svd-dls": SVD_DLS}
_TOL = 1e-3


def _solution(method, names, out, iterations, errors, code, skeleton, indices):
    if code < 0:
        raise_kernel_error(code, skeleton, indices)
    err = errors.tolist()
    return Solution(out, iterations, max(err), STATUSES[code], method, dict(zip(names, err)))


@register("ccd", "skeleton")
def solve_ccd_skeleton(skeleton, targets, initial=None, root=None, tol=_TOL, max_iter=None, **options) -> Solution:
    """CCD for several end effectors (no options); arguments as ``solve_fabrik_skeleton``.

    One iteration is one sweep per effector not yet within ``tol``; default cap 1000.
    """
    check_options("ccd", options)
    arrays, indices, positions, names, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
    out, iterations, errors, code = ccd_skeleton(
        arrays.parents, arrays.lengths, arrays.rest_dirs, arrays.reach, arrays.order, arrays.subtree_end,
        arrays.position, indices, positions, initial, root, root_from_target, float(tol),
        DEFAULT_MAX_ITER if max_iter is None else int(max_iter))
    return _solution("ccd", names, out, iterations, errors, code, skeleton, indices)


def jacobian_options(method: str) -> tuple[str, ...]:
    """The option names a skeleton Jacobian method takes (``"jacobian-transpose"``,
    ``"jacobian-dls"``, ``"jacobian-svd-dls"``; a ``-constrained`` suffix is ignored)."""
    return ("max_error_step", "max_angle_step") + (("alpha",) if method.startswith("jacobian-transpose")
                                                   else ("damping",))


def _jacobian_settings(method, options, arrays):
    allowed = jacobian_options(method)
    check_options(method, options, allowed)
    damping = check_positive(options.get("damping", DEFAULT_DAMPING), "damping") if "damping" in allowed else 0.0
    angle = check_positive(options.get("max_angle_step", MAX_ANGLE_STEP[method]), "max_angle_step")
    step = options.get("max_error_step")
    if step is None:
        bones = arrays.lengths[arrays.lengths > 0]
        step = ERROR_CLAMP_FRACTION * float(bones.mean()) if bones.size else math.inf
    elif step != math.inf:
        step = check_positive(step, "max_error_step")
    alpha = options.get("alpha")
    alpha = 0.0 if alpha is None else check_positive(alpha, "alpha")
    return damping, angle, float(step), alpha


def _jacobian(method):
    def solve_jacobian_skeleton(skeleton, targets, initial=None, root=None, tol=_TOL, max_iter=None,
                                **options) -> Solution:
        arrays, indices, positions, names, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
        damping, angle, step, alpha = _jacobian_settings(method, options, arrays)
        out, iterations, errors, code = jacobian_skeleton(
            arrays.parents, arrays.lengths, arrays.rest_dirs, arrays.reach, arrays.order, arrays.subtree_end,
            arrays.position, indices, positions, initial, root, root_from_target, float(tol), DEFAULT_MAX_ITER_JACOBIAN if max_iter is None else int(max_iter),
            _CODES[method], damping, angle, step, alpha)
        return _solution(method, names, out, iterations, errors, code, skeleton, indices)

    solve_jacobian_skeleton.__name__ = "solve_" + method.replace("-", "_") + "_skeleton"
    solve_jacobian_skeleton.__qualname__ = solve_jacobian_skeleton.__name__
    damping_doc = ("" if method == "jacobian-transpose" else
                   f"\n        damping: lambda of the damped least squares, model units, > 0 (default {DEFAULT_DAMPING}).")
    alpha_doc = ("\n        alpha: fixed gain > 0, or None (default) for Buss & Kim's adaptive gain."
                 if method == "jacobian-transpose" else "")
    solve_jacobian_skeleton.__doc__ = f"""Method ``{method!r}`` for skeletons; arguments as ``solve_fabrik_skeleton``.

    Options:{damping_doc}{alpha_doc}
        max_angle_step: largest change of any joint-angle component per iteration, radians
            (default {MAX_ANGLE_STEP[method]:.4f}).
        max_error_step: each effector's error vector is clamped to this length per iteration
            (model units, ``math.inf`` for none; default {ERROR_CLAMP_FRACTION} x the mean
            non-zero bone length).

    Default cap {DEFAULT_MAX_ITER_JACOBIAN} iterations.
    """
    return register(method, "skeleton")(solve_jacobian_skeleton)


solve_jacobian_transpose_skeleton = _jacobian("jacobian-transpose")
solve_jacobian_dls_skeleton = _jacobian("jacobian-dls")
solve_jacobian_svd_dls_skeleton = _jacobian("jacobian-svd-dls")

__all__ = ["solve_ccd_skeleton", "solve_jacobian_transpose_skeleton", "solve_jacobian_dls_skeleton",
           "solve_jacobian_svd_dls_skeleton", "DEFAULT_DAMPING", "MAX_ANGLE_STEP"]
