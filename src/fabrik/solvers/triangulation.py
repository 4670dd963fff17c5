"""Triangulation (Muller-Cajar & Mukundan 2007), a comparison method of section 5 of the paper.

``fabrik.solve(chain, target, method="triangulation")``. One pass from the root outwards; each bone
is turned by the cosine rule so that the rest of the chain, laid straight, ends on the target (see
``fabrik.kernels.triangulation`` for the rule and the too-close / too-far cases). Every reachable
target is reached in that one pass (``iterations`` 1; 0 when the start pose is already within
``tol``); an unreachable one leaves the chain straight, pointing at it (status ``unreachable``).
Bone lengths are exact; 2D chains stay planar. ``max_iter`` is ignored except that 0 returns the
start pose. No method options.
"""

from __future__ import annotations

from fabrik.kernels.ccd import start_pose_result
from fabrik.kernels.triangulation import triangulation_chain
from fabrik.solvers.registry import Solver, add
from fabrik.solvers.result import STATUSES, Solution


def solve_triangulation_chain(chain, target, rotation, initial, root, tol, max_iter, options) -> Solution:
    """Triangulation on a single chain (see ``fabrik.solvers.registry`` for the arguments)."""
    if max_iter == 0:
        positions, iterations, error, code = start_pose_result(initial, chain._kernel_lengths, root, target, tol)
        return Solution(positions, iterations, error, STATUSES[code], "triangulation")
    positions, iterations, error, code = triangulation_chain(initial, chain._kernel_lengths, target, root, tol)
    return Solution(positions, iterations, error, STATUSES[code], "triangulation")


add("triangulation", "chain", Solver(solve_triangulation_chain, kernels=(triangulation_chain,)),
    summary="triangulation by the cosine rule (Muller-Cajar & Mukundan 2007)")
