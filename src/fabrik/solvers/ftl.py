"""Follow-the-leader (FTL, Brown et al. 2004), a comparison method of section 5 of the FABRIK paper.

``fabrik.solve(chain, target, method="ftl")``. One iteration runs FTL from the target inwards and
from the root outwards, both starting from the current pose, and averages the two results for the
interior joints; the root stays on ``root`` and the effector on the target (see
``fabrik.kernels.ftl`` for the exact update). The averaging changes the bone lengths: the Solution's
``extras["max_length_drift"]`` is ``max_i |length_i - rest_i| / rest_i`` of the returned pose. The
loop stops when no joint moves more than ``tol`` in an iteration: status ``reached`` (the effector
is on the target, ``error`` 0) for a target within reach, ``unreachable`` for one out of reach,
which FTL reaches anyway by *stretching* the chain (unlike every other method here, which points
the chain at it); the cap gives ``max_iterations``. Default cap 1000. No method options.
"""

from __future__ import annotations

from types import MappingProxyType

from fabrik.kernels.ftl import ftl_chain
from fabrik.solvers.registry import Solver, add
from fabrik.solvers.result import STATUSES, Solution


def solve_ftl_chain(chain, target, rotation, initial, root, tol, max_iter, options) -> Solution:
    """FTL with averaging on a single chain (see ``fabrik.solvers.registry`` for the arguments)."""
    positions, iterations, error, code, drift = ftl_chain(initial, chain._kernel_lengths, target, root, tol,
                                                          max_iter)
    return Solution(positions, iterations, error, STATUSES[code], "ftl",
                    extras=MappingProxyType({"max_length_drift": float(drift)}))


add("ftl", "chain", Solver(solve_ftl_chain, kernels=(ftl_chain,)), summary="follow-the-leader with averaging (Brown et al. 2004)")
