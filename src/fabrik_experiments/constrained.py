"""The paper's constrained chain experiment (section 5, Fig. 18): FABRIK vs CCD with joint limits.

The chain is Table 1's: 10 joints, 9 bones of 100 units straight along +Y from a fixed root at
the origin. Every joint but the effector is a ball-and-socket joint restricted to a circular cone
of ``CONE_DEG`` (60) degrees (the paper's Fig. 18 "restricting the allowed bending of each joint
angle to a maximum value"; it does not give the value), joint 0 measured from +Y. Targets are the
effector positions of random poses within the limits (``fabrik.model.constraints.random_pose``),
so each is reachable without violating a limit. Every method solves every target from the rest
pose. Two timings per solve: through ``fabrik.solve`` (what a user pays, Python overhead included)
and of the compiled kernel alone; the fastest of ``REPEATS`` runs each.

``run_constrained_bench`` returns rows in the Table 1 format ({"method", "targets",
"mean_iterations", "median_us", "p90_us", "success_rate", "mean_error", ...}) plus
``kernel_median_us`` and ``max_violation_rad`` (the largest limit violation over all solutions).
"""

from __future__ import annotations

import math
import time
from typing import Sequence

import numpy as np

from fabrik._progress import progress_bar
from fabrik.constraints import Cone
from fabrik.model.chain import Chain
from fabrik.model.constraints import random_pose
from fabrik.solvers import solve

N_JOINTS = 10
BONE_LENGTH = 100.0
CONE_DEG = 60.0
N_TARGETS = 1000
SEED = 2011
TOL = 1e-3
MAX_ITER = 1000
REPEATS = 3
METHODS = ("fabrik", "ccd")


def constrained_chain(n_joints: int = N_JOINTS, bone_length: float = BONE_LENGTH, cone_deg: float = CONE_DEG) -> Chain:
    """The benchmark chain: straight along +Y, every joint a circular cone of ``cone_deg`` degrees."""
    cone = Cone.circular(math.radians(cone_deg))
    chain = Chain.straight(n_joints, bone_length, dim=3, axis=1)
    return chain.with_constraints({i: cone for i in range(n_joints - 1)})


def reachable_targets(chain: Chain, n_targets: int = N_TARGETS, seed: int = SEED) -> np.ndarray:
    """(n_targets, 3) effector positions of random poses within the chain's limits."""
    rng = np.random.default_rng(seed)
    return np.array([random_pose(chain, rng)[0][-1] for _ in range(n_targets)])


def max_violation(chain: Chain, sol) -> float:
    """Largest limit violation (radians) of a solution's bone directions, each limit's own measure
    (``direction_violation``), measured from its frames."""
    frames = sol.extras["frames"]
    parent = sol.extras["root_frame"]
    worst = 0.0
    for i in range(chain.n_joints - 1):
        d = parent.T @ frames[i][:, 1]
        d /= np.linalg.norm(d)
        for c in chain.constraints.get(i, ()):
            worst = max(worst, float(c.direction_violation(d)))
        parent = frames[i]
    return worst


def _kernel_call(method: str, chain: Chain, target: np.ndarray, tol: float):
    from fabrik.kernels.records import LimitedTask, Stop
    from fabrik.solvers import registry
    from fabrik.solvers.chain_limits import IDENTITY as _IDENTITY, kernel_limits

    # the bare kernel of the method that solves a limited chain for ``method`` (they share one signature)
    kernel = registry.route(method, "chain", limited=True).chain.kernels[0]
    args = (LimitedTask(chain._kernel_rest, target, chain._kernel_root, _IDENTITY, False), chain._kernel_lengths,
            kernel_limits(chain), Stop(tol, 1e-3, MAX_ITER))
    return lambda: kernel(*args)


def _best_time_us(fn, repeats: int) -> float:
    clock = time.perf_counter_ns
    best = math.inf
    for _ in range(repeats):
        start = clock()
        fn()
        best = min(best, (clock() - start) * 1e-3)
    return best


def run_constrained_bench(methods: Sequence[str] = METHODS, *, n_targets: int = N_TARGETS, seed: int = SEED,
                          tol: float = TOL, cone_deg: float = CONE_DEG, repeats: int = REPEATS,
                          progress: bool = False) -> list[dict]:
    """Constrained FABRIK vs constrained CCD on reachable targets; one summary row per method.

    ``methods`` are base names ("fabrik", "ccd"); rows name them "<method>-constrained".
    """
    chain = constrained_chain(cone_deg=cone_deg)
    targets = reachable_targets(chain, n_targets, seed)
    rows = []
    with progress_bar(progress, len(methods) * n_targets, "constrained chain", "solve") as bar:
        for method in methods:
            solve(chain, targets[0], method=method, tol=tol, max_iter=MAX_ITER)  # compile outside the timing
            iterations = np.zeros(n_targets)
            times = np.zeros(n_targets)
            kernel_times = np.zeros(n_targets)
            errors = np.zeros(n_targets)
            violation = 0.0
            for i, target in enumerate(targets):
                sol = solve(chain, target, method=method, tol=tol, max_iter=MAX_ITER)
                times[i] = _best_time_us(lambda: solve(chain, target, method=method, tol=tol, max_iter=MAX_ITER),
                                         repeats)
                kernel_times[i] = _best_time_us(_kernel_call(method, chain, target, tol), repeats)
                iterations[i] = sol.iterations
                errors[i] = sol.error
                violation = max(violation, max_violation(chain, sol))
                if bar is not None:
                    bar.update(1)
            rows.append({
                "method": f"{method}-constrained",
                "targets": "reachable",
                "mean_iterations": float(iterations.mean()),
                "median_us": float(np.median(times)),
                "p90_us": float(np.percentile(times, 90)),
                "kernel_median_us": float(np.median(kernel_times)),
                "success_rate": float(np.mean(errors <= tol)),
                "mean_error": float(errors.mean()),
                "max_violation_rad": float(violation),
                "cone_deg": float(cone_deg),
                "n_targets": int(n_targets),
            })
    return rows


def format_rows(rows: Sequence[dict]) -> str:
    """A plain-text table of ``run_constrained_bench`` rows (times in microseconds)."""
    header = (f"{'method':<20} {'mean iter':>10} {'median us':>10} {'p90 us':>10} {'kernel us':>10} "
              f"{'success':>8} {'mean error':>11} {'max viol (rad)':>15}")
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(f"{r['method']:<20} {r['mean_iterations']:>10.2f} {r['median_us']:>10.1f} {r['p90_us']:>10.1f} "
                     f"{r['kernel_median_us']:>10.1f} {100 * r['success_rate']:>7.1f}% {r['mean_error']:>11.3g} "
                     f"{r['max_violation_rad']:>15.2g}")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(format_rows(run_constrained_bench(progress=True)))
