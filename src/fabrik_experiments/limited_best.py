"""Limited chains with targets their limits keep out of reach: how close FABRIK ends to the best pose.

Issue 28, item 4. Case ``seed`` (``random_case``) is a chain of 2-6 joints (2D for even seeds, 3D
for odd ones) with bones of 0.5-1.5 units from the origin along +Y, every joint but the effector
limited by a cone (2D: an in-plane range; 3D: an irregular cone of 10-120 degrees a side) or a
hinge (-120..0 to 0..120 degrees; 3D: about the parent frame's +X, +Z or an axis between), and a
target drawn around the root (up to 1.5 times the reach) until the best pose the limits allow is
more than ``MIN_GAP`` (2%) of the reach away from it.

The best pose is searched for by many starts (``reference_best``): the compiled limited CCD and
FABRIK-alone kernels (``fabrik.kernels.rotation_chain.ccd_constrained``, ``fabrik_constrained_search``: FABRIK
without the CCD polish that ``fabrik.solve`` adds) from the rest pose and from ``STARTS`` random
poses within the limits (``fabrik.model.constraints.random_pose``), tol 1e-9, 2000 iterations;
the smallest error is the reference. ``fabrik.solve(chain, target)`` is then called as a user
would (rest pose, default tol and cap) and its error compared: within 10% of the reference, or
within 1e-3 of the reach above it, counts as near.
"""

from __future__ import annotations

import math

import numpy as np

from fabrik.constraints import Cone, Hinge
from fabrik.model.chain import Chain

MIN_GAP = 0.02
STARTS = 48
REF_TOL = 1e-9
REF_MAX_ITER = 2000
RATIO = 1.10
ABS_FRACTION = 1e-3


def random_chain(rng: np.random.Generator, dim: int) -> Chain:
    """A chain of 2-6 joints along +Y with a cone or a hinge at every joint but the effector."""
    n = int(rng.integers(2, 7))
    lengths = rng.uniform(0.5, 1.5, n - 1)
    points = np.zeros((n, dim))
    points[1:, 1] = np.cumsum(lengths)
    limits = {}
    for i in range(n - 1):
        lo, hi = -math.radians(rng.uniform(0, 120)), math.radians(rng.uniform(0, 120))
        if rng.random() < 0.5:
            limits[i] = Cone(*np.radians(rng.uniform(10, 120, 4)))
        else:
            if dim == 2:
                axis = (0.0, 0.0, 1.0)
            else:
                phi = rng.choice([0.0, math.pi / 2, rng.uniform(0, math.pi)])
                axis = (math.cos(phi), 0.0, math.sin(phi))
            limits[i] = Hinge(axis, lo, hi)
    return Chain.from_positions(points).with_constraints(limits)


def kernel_args(chain: Chain, target, initial=None) -> tuple:
    """The arguments the limited chain kernels take before their ``Stop``, for ``chain``, a
    position target and a start pose (default the rest pose): (``LimitedTask``, bone lengths,
    ``ChainLimits``)."""
    from fabrik.kernels.records import LimitedTask
    from fabrik.solvers.chain_limits import IDENTITY as _IDENTITY, kernel_limits

    t = np.zeros(3)
    t[:chain.dim] = target
    start = chain._kernel_rest if initial is None else initial
    return LimitedTask(start, t, chain._kernel_root, _IDENTITY, False), chain._kernel_lengths, kernel_limits(chain)


def reference_best(chain: Chain, target, rng: np.random.Generator, starts: int = STARTS) -> float:
    """The smallest effector error found by limited CCD and FABRIK alone from the rest pose and
    ``starts`` random poses within the limits."""
    from fabrik.kernels.fabrik_constrained import fabrik_constrained_search
    from fabrik.kernels.records import Stop
    from fabrik.kernels.rotation_chain import ccd_constrained
    from fabrik.model.constraints import random_pose

    stop = Stop(REF_TOL, 1e-3, REF_MAX_ITER)
    best = math.inf
    poses = [chain._kernel_rest] + [np.ascontiguousarray(random_pose(chain, rng)[0]) for _ in range(starts)]
    for p in poses:
        args = kernel_args(chain, target, p)
        for kernel in (ccd_constrained, fabrik_constrained_search):
            err = kernel(*args, stop)[4]
            best = min(best, float(err))
    return best


def random_case(seed: int, starts: int = STARTS) -> tuple[Chain, np.ndarray, float]:
    """(chain, target, reference best error) of case ``seed`` (module doc)."""
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, 2 if seed % 2 == 0 else 3)
    reach = float(chain.bone_lengths.sum())
    for _ in range(100):
        v = rng.normal(size=chain.dim)
        v /= np.linalg.norm(v)
        target = chain._kernel_root[:chain.dim] + v * reach * rng.uniform(0.2, 1.5)
        best = reference_best(chain, target, rng, starts)
        if best > MIN_GAP * reach:
            return chain, target, best
    raise RuntimeError(f"case {seed}: no target out of reach under the limits in 100 draws")


def is_near(error: float, best: float, reach: float) -> bool:
    """Within ``RATIO`` of the best, or within ``ABS_FRACTION`` of the reach above it."""
    return error <= RATIO * best or error - best <= ABS_FRACTION * reach
