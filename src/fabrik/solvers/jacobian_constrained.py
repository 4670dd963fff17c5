"""Jacobian comparison methods with joint limits on a single chain: the step, then clamping.

Registered as ``"<name>-constrained"`` for every Jacobian chain method of
``fabrik.solvers.jacobian`` (``jacobian-transpose``, ``jacobian-dls``, ``jacobian-svd-dls``,
``sdls`` and their ``-tuned`` variants): ``fabrik.solve(chain, target, method="jacobian-dls")``
routes a chain with limits here. Each iteration is the unconstrained method's step (same model,
same options and defaults: ``damping``, ``max_error_step``, ``max_angle_step``, ``alpha``), after
which every joint is clamped into its limits, root to effector (see
``fabrik.kernels.jacobian``): "clamping after each step", the usual way to give a
Jacobian method joint limits. So every returned pose (and every pose in between) satisfies every
limit, with exact bone lengths.

Limit conventions and Solution extras (``frames``, ``root_frame``, ``active_constraints``,
``local_rotations``, ``swing_angles``, ``twist_angles``) are those of
``fabrik.solvers.fabrik_constrained``. Oriented targets are not supported (ValueError): use
``"fabrik"`` or ``"ccd"``. Stopping rules and the default cap (10000 iterations) are those of the
unconstrained methods.
"""

from __future__ import annotations

from fabrik.kernels.rotation_chain import jacobian_constrained
from fabrik.solvers.fabrik_constrained import build_solution, prepare
from fabrik.solvers.jacobian import MODES, PAPER, TUNED, settings
from fabrik.solvers.registry import JACOBIAN_MAX_ITER, Solver, add


def _make(name: str, mode: int):
    def solve_jacobian_constrained(chain, target, rotation, initial, root, tol, max_iter, options):
        damping, step, angle, alpha = settings(options, float(chain.bone_lengths.mean()) if chain.bone_lengths.size
                                               else 0.0)
        limits, frame = prepare(chain)
        result = jacobian_constrained(initial, chain._kernel_lengths, target, root, limits, frame, chain.dim == 2,
                                      tol, max_iter, mode, damping, step, angle, alpha)
        return build_solution(name, chain, result, frame, False)

    solve_jacobian_constrained.__name__ = "solve_" + name.replace("-", "_")
    solve_jacobian_constrained.__qualname__ = solve_jacobian_constrained.__name__
    solve_jacobian_constrained.__doc__ = f"The {name!r} chain method: the step, then the clamp (module docstring)."
    return solve_jacobian_constrained


for _base, _mode in MODES.items():
    for _name, _defaults in ((_base, PAPER[_base]), (_base + "-tuned", TUNED[_base])):
        add(_name + "-constrained", "chain", Solver(_make(_name + "-constrained", _mode), _defaults, JACOBIAN_MAX_ITER,
                                                             (jacobian_constrained,)),
            limits=True, frames=True, summary="the Jacobian step, then every joint clamped into its limits")
