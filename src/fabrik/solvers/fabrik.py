"""FABRIK on a single chain: Algorithm 1 (``fabrik``, the library's default method) and, on a chain
with joint limits or an oriented target, FABRIK with limits (``fabrik-constrained``, section 4.3).

``fabrik.solve`` routes a chain with constraints (``Chain.with_constraints``) or a target with a
rotation (``target=(xyz, rotation)``) to the limited solve. There the joint before the effector
is placed at ``target - L_last * R[:, 1]`` in every forward stage of an oriented target; its
options are ``fabrik.solvers.chain_limits.LimitOptions`` (``orientation_tol``), its extras those
``chain_limits`` lists, and besides them ``polish_sweeps`` and ``restarts``: when FABRIK ends
short of the target it searches on, within ``max_iter`` (``fabrik.kernels.fabrik_constrained``,
``fabrik_constrained_polished``): limited CCD sweeps (CCD's step, not FABRIK's) from the best pose
FABRIK saw and from the start pose, then ``restarts`` runs of FABRIK and CCD sweeps from fixed
pseudo-random poses; ``polish_sweeps`` counts the CCD sweeps. All are counted in
``iterations``; the answer is the closest pose found. Both 0 when FABRIK reached the target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabrik.kernels import fabrik_chain_entry as entry
from fabrik.kernels.fabrik_chain import fabrik_chain_into
from fabrik.kernels.fabrik_chain_entry import fabrik_chain_checked
from fabrik.kernels.fabrik_constrained import fabrik_constrained, fabrik_constrained_polished
from fabrik.kernels.records import LimitedTask, Stop
from fabrik.solvers.chain_limits import IDENTITY, LimitOptions, build_solution, kernel_limits
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


def fast_entry(solver: Solver) -> tuple:
    """``Solver.fast`` of plain chain FABRIK: the checked compiled entry, the cap and ``turn_start``
    of ``solver``'s defaults (``fabrik.solve``'s hot path)."""
    return entry.prepare(), solver.max_iter, bool(solver.defaults.turn_start)


add("fabrik", "chain", Solver(solve_fabrik_chain, DEFAULTS, kernels=(fabrik_chain_checked,), fast=fast_entry),
    limited="fabrik-constrained", summary="FABRIK (Aristidou & Lasenby 2011): forward and backward reaching on points")


def solve_fabrik_constrained(chain, target, rotation, initial, root, tol, max_iter, options) -> Solution:
    """Constrained FABRIK: joint limits applied at every step of both stages (module docstring).

    Arguments as ``fabrik.solvers.registry`` says. The returned pose always satisfies every
    limit (each iteration ends with a backward stage that enforces them). Status ``unreachable``
    when the target is farther than the chain's length and it stopped progressing, ``stalled``
    when it stopped short otherwise (the limits may make a target within reach unreachable).
    A solve that ends short of the target searches on with limited CCD sweeps and restarts
    (``extras["polish_sweeps"]``, ``extras["restarts"]``), so that a target the limits keep out
    of reach ends near the closest pose they allow.
    """
    limits = kernel_limits(chain)
    oriented = rotation is not None
    *result, sweeps, restarts = fabrik_constrained_polished(
        LimitedTask(initial, target, root, rotation if oriented else IDENTITY, oriented), chain._kernel_lengths,
        limits, Stop(tol, options.orientation_tol, max_iter))
    return build_solution("fabrik-constrained", chain, result, limits.root_frame, oriented,
                          {"polish_sweeps": int(sweeps), "restarts": int(restarts)})


add("fabrik-constrained", "chain", Solver(solve_fabrik_constrained, LimitOptions(), kernels=(fabrik_constrained,)), limits=True, oriented=True,
    frames=True, summary="FABRIK with joint limits and oriented targets (section 4.3)")
