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

from fabrik._progress import progress_bar
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
    """The Table 1 chain: ``n_joints`` joints, straight along +Y from the origin
    (``fabrik.models.table1_chain``)."""
    from fabrik.models import table1_chain

    return table1_chain(n_joints, bone_length)


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


def run_methods(chain: Chain, targets: np.ndarray, methods: Sequence[str], target_set: str, *,
                tol: float = TOL, progress=None) -> list[MethodRun]:
    """Solve every target with every method from the rest pose; one ``MethodRun`` per method.

    The methods take turns target by target (all methods solve target 0, then target 1, ...),
    so that a change in the machine's speed during the run (a shared 2-core machine drifts by
    tens of percent over minutes) weighs on every method alike. A solve under
    ``REPEAT_BELOW_US`` is timed ``REPEATS`` times and the fastest kept.
    """
    n = targets.shape[0]
    rest = chain.rest_positions
    root = rest[0]
    k = len(methods)
    iterations = np.zeros((k, n), dtype=np.int64)
    times_us = np.zeros((k, n))
    errors = np.zeros((k, n))
    success = np.zeros((k, n), dtype=bool)
    drift = np.zeros((k, n))
    excess = np.zeros((k, n))
    for method in methods:
        solve(chain, targets[0], method=method, tol=tol)  # compile outside the timing
    clock = time.perf_counter_ns
    for i in range(n):
        target = targets[i]
        unavoidable = max(0.0, float(np.linalg.norm(target - root)) - chain.total_length)
        for m, method in enumerate(methods):
            start = clock()
            sol = solve(chain, target, method=method, tol=tol)
            elapsed = (clock() - start) * 1e-3
            if elapsed < REPEAT_BELOW_US:
                for _ in range(REPEATS - 1):
                    start = clock()
                    solve(chain, target, method=method, tol=tol)
                    elapsed = min(elapsed, (clock() - start) * 1e-3)
            times_us[m, i] = elapsed
            iterations[m, i] = sol.iterations
            errors[m, i] = sol.error
            lengths = np.linalg.norm(np.diff(sol.positions, axis=0), axis=1)
            drift[m, i] = np.max(np.abs(lengths - chain.bone_lengths) / chain.bone_lengths)
            excess[m, i] = max(0.0, sol.error - unavoidable)
            if target_set == "reachable":
                success[m, i] = sol.error <= tol
            else:
                # as close as a chain can get: stretched straight at the target
                success[m, i] = sol.error <= unavoidable + tol and drift[m, i] < 1e-6
            if progress is not None:
                progress.update(1)
    initial = np.linalg.norm(targets - rest[-1], axis=1)
    return [MethodRun(method, target_set, iterations[m], times_us[m], errors[m], initial, success[m], drift[m],
                      excess[m]) for m, method in enumerate(methods)]


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
    with progress_bar(progress, len(methods) * 2 * n_targets, "Table 1", "solve") as bar:
        by_set = {}
        for name, targets in target_sets.items():
            if bar is not None:
                bar.set_postfix_str(name)
            by_set[name] = run_methods(chain, targets, methods, name, tol=tol, progress=bar)
    # rows grouped by method, reachable first
    runs = [by_set[name][m] for m in range(len(methods)) for name in target_sets]
    return [summarise(r) for r in runs], runs


#: What the columns of ``format_table`` mean (printed under the table by ``fabrik demo``).
TABLE_LEGEND = (
    "mean iter: iterations per solve; median us, p90 us: time per fabrik.solve call (microseconds, call "
    "overhead included);\n"
    "us/iter: mean time over mean iterations; iter/s: iterations per second; success: share of targets "
    "within tol (reachable set) or within tol of the closest the chain can come (unreachable set);\n"
    "mean error: mean |effector - target|; excess err: mean error beyond the unavoidable |target - root| - "
    "reach (0 for a reachable target);\n"
    "len drift: the largest relative change of a bone length over all solutions (rounding only)."
)


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
