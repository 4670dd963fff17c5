"""The paper's Table 1 experiment: one 10-joint chain, many reachable and unreachable targets.

The chain has 9 bones of 100 units, straight along +Y from a fixed root at the origin. Reachable
targets are uniform in the ball of radius 0.9 x reach around the root; unreachable ones are at
1.2 to 2 x reach in uniform random directions. Every method solves every target from the rest pose,
one call to ``fabrik.solve`` per target, timed from Python (so the times include the call overhead
a user pays). A solve that took under ``REPEAT_BELOW_US`` is timed ``REPEATS`` times and the
fastest kept, so that a busy machine disturbs the short solves less (long solves are timed once).

``convergence_trace`` gives the error after k iterations and the time of such a solve for one
target, the data of the paper's Figures 11 and 12.
"""

from __future__ import annotations

import time
from typing import Iterable, NamedTuple, Sequence

import numpy as np

from fabrik.model.chain import Chain
from fabrik.solvers import solve

N_JOINTS = 10
BONE_LENGTH = 100.0
N_TARGETS = 1000
SEED = 2011
TOL = 1e-3
REPEATS = 3
REPEAT_BELOW_US = 2000.0
#: The paper's Figure 11/12 example: target 600 units from the effector of the 900-unit chain.
EXAMPLE_TARGET = np.array([0.0, 900.0, 0.0]) + 600.0 * np.array([0.8, -0.55, 0.24]) / np.linalg.norm([0.8, -0.55, 0.24])


class MethodRun(NamedTuple):
    """Per-target results of one method on one target set (arrays of shape (n_targets,))."""

    method: str
    targets: str  # "reachable" | "unreachable"
    iterations: np.ndarray
    times_us: np.ndarray
    errors: np.ndarray
    initial_distances: np.ndarray  # effector-to-target distance before solving
    success: np.ndarray  # bool
    length_drift: np.ndarray  # relative max |bone length - rest| per solve
    excess_errors: np.ndarray  # error beyond the unavoidable max(0, |target - root| - reach)


def benchmark_chain(n_joints: int = N_JOINTS, bone_length: float = BONE_LENGTH) -> Chain:
    """The Table 1 chain: ``n_joints`` joints, straight along +Y from the origin."""
    return Chain.straight(n_joints, bone_length, dim=3, axis=1)


def _directions(rng: np.random.Generator, n: int) -> np.ndarray:
    d = rng.normal(size=(n, 3))
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def make_targets(chain: Chain, n_targets: int = N_TARGETS, seed: int = SEED) -> dict[str, np.ndarray]:
    """Reachable (uniform in the ball of 0.9 x reach) and unreachable (1.2-2 x reach) targets.

    Returns ``{"reachable": (n, 3), "unreachable": (n, 3)}`` around the chain's root.
    """
    rng = np.random.default_rng(seed)
    reach = chain.total_length
    root = chain.rest_positions[0]
    radius_in = 0.9 * reach * rng.uniform(0.0, 1.0, n_targets) ** (1.0 / 3.0)
    radius_out = reach * rng.uniform(1.2, 2.0, n_targets)
    return {
        "reachable": root + _directions(rng, n_targets) * radius_in[:, None],
        "unreachable": root + _directions(rng, n_targets) * radius_out[:, None],
    }


def run_method(chain: Chain, targets: np.ndarray, method: str, target_set: str, *, tol: float = TOL,
               progress=None, **options) -> MethodRun:
    """Solve every target with ``method`` from the rest pose and record per-target results."""
    n = targets.shape[0]
    rest = chain.rest_positions
    root = rest[0]
    iterations = np.zeros(n, dtype=np.int64)
    times_us = np.zeros(n)
    errors = np.zeros(n)
    success = np.zeros(n, dtype=bool)
    drift = np.zeros(n)
    excess = np.zeros(n)
    solve(chain, targets[0], method=method, tol=tol, **options)  # compile outside the timing
    clock = time.perf_counter_ns
    for i in range(n):
        target = targets[i]
        start = clock()
        sol = solve(chain, target, method=method, tol=tol, **options)
        times_us[i] = (clock() - start) * 1e-3
        if times_us[i] < REPEAT_BELOW_US:
            for _ in range(REPEATS - 1):
                start = clock()
                solve(chain, target, method=method, tol=tol, **options)
                times_us[i] = min(times_us[i], (clock() - start) * 1e-3)
        iterations[i] = sol.iterations
        errors[i] = sol.error
        lengths = np.linalg.norm(np.diff(sol.positions, axis=0), axis=1)
        drift[i] = np.max(np.abs(lengths - chain.bone_lengths) / chain.bone_lengths)
        excess[i] = max(0.0, sol.error - max(0.0, float(np.linalg.norm(target - root)) - chain.total_length))
        if target_set == "reachable":
            success[i] = sol.error <= tol
        else:
            # as close as a chain can get: stretched straight at the target
            best = np.linalg.norm(target - root) - chain.total_length
            success[i] = sol.error <= best + tol and drift[i] < 1e-6
        if progress is not None:
            progress.update(1)
    initial = np.linalg.norm(targets - rest[-1], axis=1)
    return MethodRun(method, target_set, iterations, times_us, errors, initial, success, drift, excess)


def summarise(run: MethodRun) -> dict:
    """The JSON row for one method and target set."""
    mean_it = float(run.iterations.mean())
    mean_us = float(run.times_us.mean())
    us_per_iteration = mean_us / mean_it if mean_it > 0 else float("nan")
    return {
        "method": run.method,
        "targets": run.targets,
        "mean_iterations": mean_it,
        "median_us": float(np.median(run.times_us)),
        "p90_us": float(np.percentile(run.times_us, 90)),
        "mean_us": mean_us,
        "us_per_iteration": us_per_iteration,
        "iterations_per_second": 1e6 / us_per_iteration if mean_it > 0 else None,
        "success_rate": float(run.success.mean()),
        "mean_error": float(run.errors.mean()),
        "mean_excess_error": float(run.excess_errors.mean()),
        "max_length_drift": float(run.length_drift.max()),
    }


def run_table1(methods: Sequence[str] = ("fabrik",), *, n_targets: int = N_TARGETS, seed: int = SEED,
               tol: float = TOL, progress: bool = False) -> tuple[list[dict], list[MethodRun]]:
    """Run every method on the same reachable and unreachable targets.

    Returns the summary rows (see ``summarise``) and the per-target runs (for the figures).
    """
    chain = benchmark_chain()
    target_sets = make_targets(chain, n_targets, seed)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(methods) * 2 * n_targets, desc="Table 1", unit="solve", leave=False)
    runs = []
    try:
        for method in methods:
            for name, targets in target_sets.items():
                if bar is not None:
                    bar.set_postfix_str(f"{method} / {name}")
                runs.append(run_method(chain, targets, method, name, tol=tol, progress=bar))
    finally:
        if bar is not None:
            bar.close()
    return [summarise(r) for r in runs], runs


def format_table(rows: Iterable[dict]) -> str:
    """A plain-text table like the paper's Table 1 (times in microseconds)."""
    header = (f"{'method':<24} {'targets':<12} {'mean iter':>10} {'median us':>10} {'p90 us':>10} "
              f"{'us/iter':>8} {'iter/s':>10} {'success':>8} {'mean error':>11} {'excess err':>10} {'len drift':>10}")
    lines = [header, "-" * len(header)]
    for r in rows:
        ips = r["iterations_per_second"]
        lines.append(
            f"{r['method']:<24} {r['targets']:<12} {r['mean_iterations']:>10.2f} {r['median_us']:>10.1f} "
            f"{r['p90_us']:>10.1f} {r['us_per_iteration']:>8.2f} {(f'{ips:,.0f}' if ips else '-'):>10} "
            f"{100 * r['success_rate']:>7.1f}% {r['mean_error']:>11.3g} {r.get('mean_excess_error', float('nan')):>10.3g} "
            f"{r['max_length_drift']:>10.2g}")
    return "\n".join(lines)


def convergence_trace(method: str, target=None, *, tol: float = TOL, max_points: int = 60, cap: int | None = None,
                      repeats: int = 7, **options) -> dict:
    """Error after k iterations, and the time of a solve capped at k iterations, for one target.

    k runs over a geometric grid from 1 to the iterations the method needs (or ``cap``; default
    the method's own cap). Returns ``{"iterations": [...], "errors": [...], "times_us": [...]}``
    (times: fastest of ``repeats`` timings).
    """
    chain = benchmark_chain()
    target = EXAMPLE_TARGET if target is None else np.asarray(target, dtype=np.float64)
    full = solve(chain, target, method=method, tol=tol, max_iter=cap, **options)
    last = max(1, full.iterations)
    ks = np.unique(np.round(np.geomspace(1, last, max_points)).astype(int))
    out = {"iterations": [0], "errors": [float(np.linalg.norm(chain.rest_positions[-1] - target))], "times_us": [0.0]}
    clock = time.perf_counter_ns
    for k in ks:
        best = np.inf
        for _ in range(repeats):
            start = clock()
            sol = solve(chain, target, method=method, tol=tol, max_iter=int(k), **options)
            best = min(best, (clock() - start) * 1e-3)
        out["iterations"].append(int(sol.iterations))
        out["errors"].append(float(sol.error))
        out["times_us"].append(float(best))
    return out
