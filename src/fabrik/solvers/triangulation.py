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
from fabrik.solvers.registry import register
from fabrik.solvers.result import STATUSES, Solution


@register("triangulation")
def solve_triangulation_chain(chain, target, initial, root, tol, max_iter, **options) -> Solution:
    """Triangulation on a single chain (arrays arrive 3D). No options (ValueError)."""
    if options:
        raise ValueError(f"method 'triangulation' takes no options, got {sorted(options)}")
    if max_iter == 0:
        positions, iterations, error, code = start_pose_result(initial, chain._kernel_lengths, root, target, tol)
        return Solution(positions, iterations, error, STATUSES[code], "triangulation")
    positions, iterations, error, code = triangulation_chain(initial, chain._kernel_lengths, target, root, tol)
    return Solution(positions, iterations, error, STATUSES[code], "triangulation")
