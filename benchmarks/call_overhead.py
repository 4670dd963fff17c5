"""What one ``fabrik.solve`` call costs beyond its kernel, cold and warm-started (tracking).

On the Table 1 chain (10 joints, 9 bones of 100 units, tol 1e-3), a target going round a smooth
closed path (an ellipse-like curve within 0.6 of the reach) in steps of ``--step`` of the reach
(default 1%: 9 units; a hand moving 1 m/s filmed at 120 fps steps about 1.5% of an arm's reach),
as many laps as ``--steps`` solves take:

* ``cold``: ``fabrik.solve(chain, target)``, every solve from the rest pose;
* ``warm``: ``fabrik.solve(chain, target, initial=previous.positions)``, tracking: each solve starts
  from the answer to the target before;
* ``kernel cold`` / ``kernel warm``: the compiled kernel ``fabrik.solve`` calls
  (``fabrik.kernels.fabrik_chain_entry.fabrik_chain_checked``) called directly with the same
  inputs, the answer's array allocated as ``solve`` allocates it (``kernel warm`` from the same
  start poses as ``warm``);

Each number is the least CPU time of 7 passes over the path (microseconds per solve), so that
another process on the machine costs as little as possible.

    python benchmarks/call_overhead.py [--steps N] [--step FRACTION]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import fabrik
from fabrik.kernels.fabrik_chain_entry import NO_ROOT, prepare
from fabrik_experiments.table1 import benchmark_chain


def best_of(fn, passes: int = 7) -> float:
    """The least CPU time of this process (``time.process_time``) over ``passes`` runs of ``fn``:
    other processes on a shared machine move it far less than wall-clock time."""
    best = np.inf
    for _ in range(passes):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def curve(t: np.ndarray, reach: float) -> np.ndarray:
    """The closed target path at parameter ``t`` (period 2 pi), (len(t), 3) C-contiguous."""
    return np.ascontiguousarray(np.stack([0.6 * reach * np.cos(t), 0.5 * reach * np.sin(2 * t),
                                          0.3 * reach * np.sin(t)], axis=1))


def tracking_path(reach: float, steps: int, step: float) -> np.ndarray:
    """``steps`` targets along ``curve``, consecutive ones ``step * reach`` apart on average (the
    parameter advances evenly; laps repeat without a repeated point at the seam)."""
    fine = curve(np.linspace(0.0, 2.0 * np.pi, 100001), reach)
    perimeter = float(np.linalg.norm(np.diff(fine, axis=0), axis=1).sum())
    per_lap = max(3, round(perimeter / (step * reach)))
    return curve(2.0 * np.pi * np.arange(steps) / per_lap, reach)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000, help="solves per pass (default 20000)")
    parser.add_argument("--step", type=float, default=0.01,
                        help="distance between consecutive targets as a fraction of the reach (default 0.01)")
    args = parser.parse_args()
    if args.steps < 2 or not 0.0 < args.step < 1.0:
        parser.error("--steps must be >= 2 and --step between 0 and 1")
    chain = benchmark_chain()
    reach = chain.total_length
    path = tracking_path(reach, args.steps, args.step)
    warm_starts = [chain.rest_positions]
    for target in path[:-1]:
        warm_starts.append(fabrik.solve(chain, target, initial=warm_starts[-1]).positions)
    lengths, rest = chain._kernel_lengths, chain._kernel_rest
    kernel_starts = [rest] + warm_starts[1:]

    def cold():
        for target in path:
            fabrik.solve(chain, target)

    def warm():
        previous = chain.rest_positions
        for target in path:
            previous = fabrik.solve(chain, target, initial=previous).positions

    entry = prepare()
    shape = rest.shape

    def kernel_cold():
        for target in path:
            entry(np.empty(shape), rest, lengths, target, NO_ROOT, 1e-3, 1000, True)

    def kernel_warm():
        for target, start in zip(path, kernel_starts):
            entry(np.empty(shape), start, lengths, target, NO_ROOT, 1e-3, 1000, True)

    iterations = {"cold": np.mean([fabrik.solve(chain, p).iterations for p in path]),
                  "warm": np.mean([fabrik.solve(chain, p, initial=s).iterations for p, s in zip(path, warm_starts)])}
    rows = [(name, best_of(fn) / args.steps * 1e6) for name, fn in
            (("cold", cold), ("warm", warm), ("kernel cold", kernel_cold), ("kernel warm", kernel_warm))]
    mean_step = float(np.linalg.norm(np.diff(path, axis=0), axis=1).mean())
    print(f"Table 1 chain, {args.steps} targets {mean_step:.3g} units apart ({100 * mean_step / reach:.3g}% of the "
          f"reach); CPU microseconds per solve, best of 7")
    for name, us in rows:
        extra = f"  ({iterations[name]:.2f} iterations)" if name in iterations else ""
        print(f"  {name:<18}{us:8.2f}{extra}")
    table = dict(rows)
    print(f"  solve / kernel: cold {table['cold'] / table['kernel cold']:.2f}x, "
          f"warm {table['warm'] / table['kernel warm']:.2f}x; warm / cold {table['warm'] / table['cold']:.2f}x")


if __name__ == "__main__":
    main()
