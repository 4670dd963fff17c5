"""CCD with joint limits and oriented targets on a single chain (the paper's constrained comparison).

Registered as ``"ccd-constrained"``: ``fabrik.solve(chain, target, method="ccd")`` routes here for
a constrained chain or an oriented target. One iteration is one sweep over all joints, effector
end first; each joint's rotation is restricted by its limit before it is applied (see
``fabrik.kernels.ccd``). Options, conventions and Solution extras are those of
``fabrik.solvers.fabrik_constrained``.
"""

from __future__ import annotations

from fabrik.kernels.rotation_chain import ccd_constrained
from fabrik.solvers.fabrik_constrained import _IDENTITY, LimitOptions, build_solution, prepare
from fabrik.solvers.registry import Solver, add


def solve_ccd_constrained(chain, target, rotation, initial, root, tol, max_iter, options):
    """Constrained CCD (see ``fabrik.solvers.registry`` for the arguments); limits hold in the result."""
    limits, frame = prepare(chain)
    oriented = rotation is not None
    result = ccd_constrained(initial, chain._kernel_lengths, target, root, limits, frame,
                             rotation if oriented else _IDENTITY, oriented, chain.dim == 2, tol,
                             options.orientation_tol, max_iter)
    return build_solution("ccd-constrained", chain, result, frame, oriented)


add("ccd-constrained", "chain", Solver(solve_ccd_constrained, LimitOptions(), kernels=(ccd_constrained,)), limits=True, oriented=True,
    frames=True, summary="CCD with each turn restricted by the limits")
