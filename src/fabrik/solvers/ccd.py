"""Cyclic coordinate descent (CCD), a comparison method of section 5 of the FABRIK paper.

``fabrik.solve(chain, target, method="ccd")``. One iteration is one sweep from the joint before
the end effector inwards to the root; at each joint the sub-chain beyond it is rotated rigidly so
that the end effector points at the target (Wang & Chen 1991). Works on 2D and 3D chains (2D stay
planar); bone lengths are kept exactly (rotations of positions by Rodrigues' formula).

Stopping rules are FABRIK's: ``reached`` when the effector is within ``tol`` of the target; when an
iteration moves the effector less than ``tol`` and the error fell by less than 1 %, ``unreachable``
if the target is out of reach (the chain then points at it) else ``stalled``; the cap gives
``max_iterations``. A chain stuck on the line to its target is folded out of that singularity
(``fabrik.kernels.singularity``). The start pose is ``initial``'s bone directions hung from
``root`` with the chain's exact bone lengths. No method options; default cap 1000 sweeps.

``"ccd-constrained"`` (this module too; ``method="ccd"`` routes a constrained chain or an
oriented target there): one iteration is one sweep over all joints, effector end first; each
joint's rotation is restricted by its limit before it is applied (``fabrik.kernels.ccd``).
Options, conventions and Solution extras are those of ``fabrik.solvers.chain_limits``.
"""

from __future__ import annotations

from fabrik.kernels.records import ChainTask, LimitedTask, Stop
from fabrik.kernels.rotation_chain import ccd_chain, ccd_constrained
from fabrik.solvers.chain_limits import IDENTITY, LimitOptions, build_solution, kernel_limits
from fabrik.solvers.registry import Solver, add
from fabrik.solvers.result import STATUSES, Solution


def solve_ccd_chain(chain, target, rotation, initial, root, tol, max_iter, options) -> Solution:
    """CCD on a single chain (see ``fabrik.solvers.registry`` for the arguments)."""
    positions, iterations, error, code = ccd_chain(ChainTask(initial, target, root), chain._kernel_lengths,
                                                   Stop(tol, 0.0, max_iter))
    return Solution(positions, iterations, error, STATUSES[code], "ccd")


add("ccd", "chain", Solver(solve_ccd_chain, kernels=(ccd_chain,)), limited="ccd-constrained",
    summary="cyclic coordinate descent (Wang & Chen 1991)")


def solve_ccd_constrained(chain, target, rotation, initial, root, tol, max_iter, options):
    """Constrained CCD (see ``fabrik.solvers.registry`` for the arguments); limits hold in the result."""
    limits = kernel_limits(chain)
    oriented = rotation is not None
    result = ccd_constrained(LimitedTask(initial, target, root, rotation if oriented else IDENTITY, oriented),
                             chain._kernel_lengths, limits, Stop(tol, options.orientation_tol, max_iter))
    return build_solution("ccd-constrained", chain, result, limits.root_frame, oriented)


add("ccd-constrained", "chain", Solver(solve_ccd_constrained, LimitOptions(), kernels=(ccd_constrained,)), limits=True, oriented=True,
    frames=True, summary="CCD with each turn restricted by the limits")
