"""Target tracking (section 5.1 of the FABRIK paper): a target on a sinusoidal path that moves in
and out of reach of the Table 1 chain, solved step by step, each step warm-started from the last.

The chain is ``fabrik_experiments.table1.benchmark_chain()`` (10 joints, 9 bones of 100 units,
root at the origin, reach 900). Step ``k`` of ``n_steps`` puts the target at distance
``reach * (0.7 + 0.4 sin(2 pi * 4 k / n_steps))`` from the root (0.3 to 1.1 x reach: in and out of
reach four times) in the direction ``(cos a, sin a, 0.3 sin 3a)`` normalised, ``a = 2 pi * 2 k / n``
(two turns about the root). With 1000 steps the target moves about 10 to 25 units a step.

Per method: the tracking error of a step is ``error - max(0, |target - root| - reach)``, the
effector's distance to the target beyond what the chain can possibly do (0 for a perfect tracker
in and out of reach); ``max_joint_step`` is the largest distance any joint moved in one step (a
measure of jumps / discontinuities), counted from step 1 (step 0 is the first solve from
the rest pose, the same large move for every method); ``max_joint_step_within_reach`` is the same
over the steps whose targets stay inside 0.95 x reach (see ``WITHIN_REACH``). FTL reaches unreachable targets by stretching, so its error is
0 there; its bone-length drift is reported separately.
"""

from __future__ import annotations

import time
from typing import NamedTuple, Sequence

import numpy as np

from fabrik._progress import progress_bar
from fabrik_experiments.table1 import benchmark_chain
from fabrik.solvers import solve

N_STEPS = 1000
TOL = 1e-3
DEFAULT_METHODS = ("fabrik", "ccd", "jacobian-dls", "jacobian-svd-dls")
#: Steps whose targets (this one and the previous one) lie inside this fraction of the reach count
#: for ``max_joint_step_within_reach``. Near full extension even the exact solution moves fast: a
#: chain of length L spanning c bows out by about sqrt(3 L (L - c) / 8) (about 39 units for
#: c = 0.995 L here), all of which it must give up when the target passes out of reach.
WITHIN_REACH = 0.95


class TrackingRun(NamedTuple):
    """Per-step results of one method (arrays of shape (n_steps,))."""

    method: str
    errors: np.ndarray  # tracking error (beyond the unavoidable), model units
    iterations: np.ndarray
    times_us: np.ndarray
    joint_steps: np.ndarray  # largest joint displacement from the previous step's pose
    length_drift: np.ndarray  # relative max |bone length - rest|
    within_reach: np.ndarray  # bool: this step's and the previous step's targets inside WITHIN_REACH x reach


def target_path(n_steps: int = N_STEPS, reach: float = 900.0) -> np.ndarray:
    """The (n_steps, 3) sinusoidal target path around the origin (see the module docstring)."""
    k = np.arange(n_steps)
    a = 2.0 * np.pi * 2.0 * k / n_steps
    radius = reach * (0.7 + 0.4 * np.sin(2.0 * np.pi * 4.0 * k / n_steps))
    d = np.column_stack([np.cos(a), np.sin(a), 0.3 * np.sin(3.0 * a)])
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return d * radius[:, None]


def track(method: str, path: np.ndarray | None = None, *, tol: float = TOL, max_iter: int | None = None,
          progress=None) -> TrackingRun:
    """Track ``path`` with ``method``, each step starting from the previous step's pose.

    ``max_iter``: the iteration cap of every step (None: each method's default, 1000 for FABRIK,
    CCD and FTL, 10000 for the Jacobian methods); a small cap is a real-time budget per frame.
    """
    chain = benchmark_chain()
    path = target_path(reach=chain.total_length) if path is None else path
    root = chain.rest_positions[0]
    reach = chain.total_length
    n = path.shape[0]
    errors = np.zeros(n)
    iterations = np.zeros(n, dtype=np.int64)
    times_us = np.zeros(n)
    joint_steps = np.zeros(n)
    drift = np.zeros(n)
    solve(chain, path[0], method=method, tol=tol, max_iter=max_iter)  # compile outside the timing
    pose = chain.rest_positions.copy()
    radius = np.linalg.norm(path - root, axis=1)
    inside = radius < WITHIN_REACH * reach
    within = inside & np.concatenate([[False], inside[:-1]])
    clock = time.perf_counter_ns
    for k in range(n):
        target = path[k]
        start = clock()
        sol = solve(chain, target, method=method, initial=pose, tol=tol, max_iter=max_iter)
        times_us[k] = (clock() - start) * 1e-3
        best = max(0.0, float(np.linalg.norm(target - root)) - reach)
        errors[k] = max(0.0, sol.error - best)
        iterations[k] = sol.iterations
        joint_steps[k] = float(np.max(np.linalg.norm(sol.positions - pose, axis=1)))
        lengths = np.linalg.norm(np.diff(sol.positions, axis=0), axis=1)
        drift[k] = float(np.max(np.abs(lengths - chain.bone_lengths) / chain.bone_lengths))
        pose = sol.positions
        if progress is not None:
            progress.update(1)
    return TrackingRun(method, errors, iterations, times_us, joint_steps, drift, within)


def summarise(run: TrackingRun) -> dict:
    """The JSON row of one method."""
    return {
        "method": run.method,
        "mean_error": float(run.errors.mean()),
        "max_error": float(run.errors.max()),
        "mean_iterations": float(run.iterations.mean()),
        "median_us": float(np.median(run.times_us)),
        "max_joint_step": float(run.joint_steps[1:].max()) if run.joint_steps.size > 1 else 0.0,
        "max_joint_step_within_reach": float(run.joint_steps[run.within_reach].max()) if run.within_reach.any() else 0.0,
    }


def run_tracking(methods: Sequence[str] = DEFAULT_METHODS, *, n_steps: int = N_STEPS, tol: float = TOL,
                 max_iter: int | None = None, progress: bool = False) -> tuple[list[dict], list[TrackingRun]]:
    """Track the same path with every method. Returns the summary rows and the per-step runs."""
    path = target_path(n_steps, benchmark_chain().total_length)
    runs = []
    with progress_bar(progress, len(methods) * n_steps, "tracking", "step") as bar:
        for method in methods:
            if bar is not None:
                bar.set_postfix_str(method)
            runs.append(track(method, path, tol=tol, max_iter=max_iter, progress=bar))
    return [summarise(r) for r in runs], runs


def format_table(rows: Sequence[dict], runs: Sequence[TrackingRun] | None = None) -> str:
    """A plain-text table of the tracking results (errors in model units, times in microseconds)."""
    header = (f"{'method':<24} {'mean error':>11} {'max error':>10} {'mean iter':>10} {'median us':>10} "
              f"{'max joint step':>15} {'(within 0.95)':>14} {'len drift':>10}")
    lines = [header, "-" * len(header)]
    drift = {r.method: float(r.length_drift.max()) for r in runs} if runs else {}
    for r in rows:
        d = drift.get(r["method"])
        lines.append(f"{r['method']:<24} {r['mean_error']:>11.3g} {r['max_error']:>10.3g} {r['mean_iterations']:>10.2f} "
                     f"{r['median_us']:>10.1f} {r['max_joint_step']:>15.2f} {r['max_joint_step_within_reach']:>14.2f} "
                     f"{('-' if d is None else f'{d:.2g}'):>10}")
    return "\n".join(lines)
