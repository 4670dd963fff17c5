"""FABRIK on a single chain (Algorithm 1), the library's default method."""

from __future__ import annotations

from fabrik.kernels.fabrik_chain import fabrik_chain
from fabrik.solvers.registry import Solver, add
from fabrik.solvers.result import STATUSES, Solution, plain_solution


def solve_fabrik_chain(chain, target, rotation, initial, root, tol, max_iter, options) -> Solution:
    """Unconstrained FABRIK (Algorithm 1); no options (see ``fabrik.solvers.registry``).

    One iteration is one forward and one backward stage. A target beyond the chain's total length
    is answered in one pass (the chain stretched straight at it, status ``unreachable``).
    """
    positions, iterations, error, code = fabrik_chain(initial, chain._kernel_lengths, target, root, tol, max_iter)
    return plain_solution(positions, iterations, error, STATUSES[code], "fabrik")


add("fabrik", "chain", Solver(solve_fabrik_chain, kernels=(fabrik_chain,)), limited="fabrik-constrained",
    summary="FABRIK (Aristidou & Lasenby 2011): forward and backward reaching on points")
