"""Jacobian comparison methods with joint limits on a single chain: the step, then clamping.

Registered as ``"<name>-constrained"`` for every Jacobian chain method of
``fabrik.solvers.jacobian`` (``jacobian-transpose``, ``jacobian-dls``, ``jacobian-svd-dls``,
``sdls`` and their ``-tuned`` variants): ``fabrik.solve(chain, target, method="jacobian-dls")``
routes a chain with limits here. Each iteration is the unconstrained method's step (same model,
same options and defaults: ``damping``, ``max_error_step``, ``max_angle_step``, ``alpha``), after
which every joint is clamped into its limits, root to effector (see
``fabrik.kernels.jacobian_constrained``): "clamping after each step", the usual way to give a
Jacobian method joint limits. So every returned pose (and every pose in between) satisfies every
limit, with exact bone lengths.

Limit conventions and Solution extras (``frames``, ``root_frame``, ``active_constraints``,
``local_rotations``, ``swing_angles``, ``twist_angles``) are those of
``fabrik.solvers.fabrik_constrained``. Oriented targets are not supported (ValueError): use
``"fabrik"`` or ``"ccd"``. Stopping rules and the default cap (10000 iterations) are those of the
unconstrained methods.
"""

from __future__ import annotations

from fabrik.kernels.jacobian_constrained import jacobian_constrained
from fabrik.solvers.fabrik_constrained import build_solution, prepare
from fabrik.solvers.jacobian import _MODES, DEFAULT_MAX_ITER, PAPER, TUNED, _settings
from fabrik.solvers.registry import register

SUFFIX = "-constrained"


def _make(name: str, base: str, defaults: dict):
    mode = _MODES[base]

    def method(chain, target, initial, root, tol, max_iter, **options):
        if "target_rotation" in options:
            raise ValueError(f"method {name!r} does not support oriented targets; use 'fabrik' or 'ccd'")
        damping, step, angle, alpha = _settings(name, defaults, options, chain)
        limits, frame = prepare(chain)
        result = jacobian_constrained(initial, chain._kernel_lengths, target, root, limits, frame, chain.dim == 2,
                                      tol, DEFAULT_MAX_ITER if max_iter is None else max_iter, mode, damping, step,
                                      angle, alpha)
        return build_solution(name, chain, result, frame, False)

    method.__name__ = "solve_" + name.replace("-", "_")
    method.__qualname__ = method.__name__
    opts = ", ".join(f"{k}={v!r}" for k, v in defaults.items())
    method.__doc__ = (f"The {name!r} chain method: the {name[:-len(SUFFIX)]!r} step, then every joint clamped "
                      f"into its limits (module docstring). Defaults: {opts}; max_iter default {DEFAULT_MAX_ITER}.")
    return register(name)(method)


for _base in _MODES:
    _make(_base + SUFFIX, _base, PAPER[_base])
    _make(_base + "-tuned" + SUFFIX, _base, TUNED[_base])

__all__ = ["SUFFIX"]
