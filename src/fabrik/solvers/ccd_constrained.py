"""CCD with joint limits and oriented targets on a single chain (the paper's constrained comparison).

Registered as ``"ccd-constrained"``: ``fabrik.solve(chain, target, method="ccd")`` routes here for
a constrained chain or an oriented target. One iteration is one sweep over all joints, effector
end first; each joint's rotation is restricted by its limit before it is applied (see
``fabrik.kernels.ccd_constrained``). Options, conventions and Solution extras are those of
``fabrik.solvers.fabrik_constrained``.
"""

from __future__ import annotations

from fabrik.kernels.ccd_constrained import ccd_constrained
from fabrik.solvers.fabrik_constrained import build_solution, parse_options, prepare
from fabrik.solvers.registry import register

DEFAULT_MAX_ITER = 1000


@register("ccd-constrained")
def solve_ccd_constrained(chain, target, initial, root, tol, max_iter, **options):
    """Constrained CCD. Arrays arrive 3D (see ``fabrik.solvers.registry``); limits hold in the result."""
    rotation, oriented, otol = parse_options("ccd-constrained", options, chain)
    limits, frame = prepare(chain)
    result = ccd_constrained(initial, chain._kernel_lengths, target, root, limits, frame, rotation, oriented,
                             chain.dim == 2, tol, otol, DEFAULT_MAX_ITER if max_iter is None else max_iter)
    return build_solution("ccd-constrained", chain, result, frame, oriented)
