"""FABRIK on a single chain (Algorithm 1), the library's default method."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabrik.kernels import fabrik_chain_entry as entry
from fabrik.kernels.fabrik_chain import fabrik_chain_into
from fabrik.kernels.fabrik_chain_entry import fabrik_chain_checked
from fabrik.solvers.registry import Solver, add
from fabrik.solvers.result import STATUSES, Solution, plain_solution


@dataclass(frozen=True)
class FabrikOptions:
    """Options of FABRIK on a chain: ``turn_start`` (default True) first turns a bent start pose
    rigidly about its root, by the smallest rotation that points its effector at the target, when
    the solve will iterate (``fabrik.kernels.fabrik_chain.warm_turn``). A warm start from the answer
    to a nearby target then needs 4.96 iterations where it needed 6.55 (the Table 1 chain tracking
    a path in steps of 1% of its reach, ``benchmarks/warm_start_rate.py``). A straight
    start pose (the rest pose) is never turned, so cold solves are the paper's Algorithm 1;
    ``turn_start=False`` runs Algorithm 1 from any start."""

    turn_start: bool = True

    def __post_init__(self):
        if not isinstance(self.turn_start, (bool, np.bool_)):
            raise ValueError(f"turn_start must be True or False, got {self.turn_start!r}")


DEFAULTS = FabrikOptions()


def solve_fabrik_chain(chain, target, rotation, initial, root, tol, max_iter, options) -> Solution:
    """Unconstrained FABRIK (Algorithm 1), with ``FabrikOptions``.

    One iteration is one forward and one backward stage. A target beyond the chain's total length
    is answered in one pass (the chain stretched straight at it, status ``unreachable``).

    The kernel is ``fabrik.kernels.fabrik_chain_entry.fabrik_chain_checked``, compiled for
    writable C-contiguous float64 arrays only: a read-only array (a target that ``as_point``
    passed through as it was) is copied first. The arguments come checked (``fabrik.solve``).
    """
    kernel = entry.prepare()
    positions = np.empty((initial.shape[0], 3))
    turn = bool(options.turn_start)
    try:
        iterations, error, code = kernel(positions, initial, chain._kernel_lengths, target, root, tol, max_iter, turn)
    except TypeError:
        initial, target, root = (np.array(a, dtype=np.float64, order="C") for a in (initial, target, root))
        iterations, error, code = kernel(positions, initial, chain._kernel_lengths, target, root, tol, max_iter, turn)
    if code < 0:
        # checked by fabrik.solve, but beyond the entry's own bound (a target or root between
        # CHECK_BELOW and MAX_COORDINATE from the origin): the kernel without the checks
        positions = np.array(initial, dtype=np.float64, order="C")
        iterations, error, code = fabrik_chain_into(positions, chain._kernel_lengths, target, root, tol, max_iter, turn)
    return plain_solution(positions, iterations, error, STATUSES[code], "fabrik")


add("fabrik", "chain", Solver(solve_fabrik_chain, DEFAULTS, kernels=(fabrik_chain_checked,)),
    limited="fabrik-constrained", summary="FABRIK (Aristidou & Lasenby 2011): forward and backward reaching on points")
