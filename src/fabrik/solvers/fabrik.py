"""FABRIK on a single chain (Algorithm 1), the library's default method."""

from __future__ import annotations

from fabrik.kernels.fabrik_chain import fabrik_chain
from fabrik.solvers.registry import register
from fabrik.solvers.result import STATUSES, Solution

DEFAULT_MAX_ITER = 1000


@register("fabrik")
def solve_fabrik_chain(chain, target, initial, root, tol, max_iter, **options) -> Solution:
    """Unconstrained FABRIK (Algorithm 1). No method options. Arrays arrive 3D (see registry).

    One iteration is one forward and one backward stage. A target beyond the chain's total length
    is answered in one pass (the chain stretched straight at it, status ``unreachable``).
    """
    if options:
        raise ValueError(f"method 'fabrik' takes no options, got {sorted(options)}")
    positions, iterations, error, code = fabrik_chain(
        initial, chain._kernel_lengths, target, root, tol, DEFAULT_MAX_ITER if max_iter is None else max_iter)
    return Solution(positions, iterations, error, STATUSES[code], "fabrik")
