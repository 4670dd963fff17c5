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
``root`` with the chain's exact bone lengths. No method options.
"""

from __future__ import annotations

from fabrik.kernels.ccd import ccd_chain
from fabrik.solvers.registry import register
from fabrik.solvers.result import STATUSES, Solution

DEFAULT_MAX_ITER = 1000


@register("ccd")
def solve_ccd_chain(chain, target, initial, root, tol, max_iter, **options) -> Solution:
    """CCD on a single chain (arrays arrive 3D, see ``fabrik.solvers.registry``).

    Args: as every chain method; ``max_iter`` defaults to 1000 sweeps. No options (ValueError).
    """
    if options:
        raise ValueError(f"method 'ccd' takes no options, got {sorted(options)}")
    positions, iterations, error, code = ccd_chain(
        initial, chain._kernel_lengths, target, root, tol, DEFAULT_MAX_ITER if max_iter is None else max_iter)
    return Solution(positions, iterations, error, STATUSES[code], "ccd")
