"""FABRIK on a single chain (Algorithm 1), the library's default method."""

from __future__ import annotations

import numpy as np

from fabrik.kernels import fabrik_chain_entry as entry
from fabrik.kernels.fabrik_chain import fabrik_chain
from fabrik.kernels.fabrik_chain_entry import fabrik_chain_checked
from fabrik.solvers.registry import Solver, add
from fabrik.solvers.result import STATUSES, Solution, plain_solution


def solve_fabrik_chain(chain, target, rotation, initial, root, tol, max_iter, options) -> Solution:
    """Unconstrained FABRIK (Algorithm 1); no options (see ``fabrik.solvers.registry``).

    One iteration is one forward and one backward stage. A target beyond the chain's total length
    is answered in one pass (the chain stretched straight at it, status ``unreachable``).

    The kernel is ``fabrik.kernels.fabrik_chain_entry.fabrik_chain_checked``, compiled for
    writable C-contiguous float64 arrays only: a read-only array (a target that ``as_point``
    passed through as it was) is copied first. The arguments come checked (``fabrik.solve``).
    """
    kernel = entry.prepare()
    positions = np.empty((initial.shape[0], 3))
    try:
        iterations, error, code = kernel(positions, initial, chain._kernel_lengths, target, root, tol, max_iter)
    except TypeError:
        initial, target, root = (np.array(a, dtype=np.float64, order="C") for a in (initial, target, root))
        iterations, error, code = kernel(positions, initial, chain._kernel_lengths, target, root, tol, max_iter)
    if code < 0:
        # checked by fabrik.solve, but beyond the entry's own bound (a target or root between
        # CHECK_BELOW and MAX_COORDINATE from the origin): the kernel without the checks
        positions, iterations, error, code = fabrik_chain(initial, chain._kernel_lengths, target, root, tol, max_iter)
    return plain_solution(positions, iterations, error, STATUSES[code], "fabrik")


add("fabrik", "chain", Solver(solve_fabrik_chain, kernels=(fabrik_chain_checked,)), limited="fabrik-constrained",
    summary="FABRIK (Aristidou & Lasenby 2011): forward and backward reaching on points")
