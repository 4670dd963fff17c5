"""What one ``fabrik.solve`` call costs beyond its kernel, cold and warm-started (tracking).

On the Table 1 chain (10 joints, 9 bones of 100 units, tol 1e-3), a target moving along a smooth
path in steps of about 1% of the reach:

* ``cold``: ``fabrik.solve(chain, target)``, every solve from the rest pose;
* ``warm``: ``fabrik.solve(chain, target, initial=previous.positions)``, tracking;
* ``kernel cold`` / ``kernel warm``: the compiled kernel called directly with the same inputs.

Each number is the best of 7 passes over the path (microseconds per solve), so that another
process on the machine costs as little as possible.

    python benchmarks/call_overhead.py [--steps N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import fabrik
from fabrik.kernels.fabrik_chain import fabrik_chain
from fabrik_experiments.table1 import benchmark_chain


def best_of(fn, passes: int = 7) -> float:
    best = np.inf
    for _ in range(passes):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000)
    args = parser.parse_args()
    chain = benchmark_chain()
    reach = chain.total_length
    t = np.linspace(0.0, 2.0 * np.pi, args.steps)
    path = np.ascontiguousarray(np.stack([0.6 * reach * np.cos(t), 0.5 * reach * np.sin(2 * t),
                                          0.3 * reach * np.sin(t)], axis=1))
    warm_starts = [chain.rest_positions]
    for target in path[:-1]:
        warm_starts.append(fabrik.solve(chain, target, initial=warm_starts[-1]).positions)
    lengths, root, rest = chain._kernel_lengths, chain._kernel_root, chain._kernel_rest

    def cold():
        for target in path:
            fabrik.solve(chain, target)

    def warm():
        previous = chain.rest_positions
        for target in path:
            previous = fabrik.solve(chain, target, initial=previous).positions

    def kernel_cold():
        for target in path:
            fabrik_chain(rest, lengths, target, root, 1e-3, 1000)

    def kernel_warm():
        for target, start in zip(path, warm_starts):
            fabrik_chain(start if start is not chain.rest_positions else rest, lengths, target, root, 1e-3, 1000)

    iterations = {"cold": np.mean([fabrik.solve(chain, p).iterations for p in path[:2000]]),
                  "warm": np.mean([fabrik.solve(chain, p, initial=s).iterations for p, s in
                                   zip(path[:2000], warm_starts[:2000])])}
    rows = [(name, best_of(fn) / args.steps * 1e6) for name, fn in
            (("cold", cold), ("warm", warm), ("kernel cold", kernel_cold), ("kernel warm", kernel_warm))]
    print(f"Table 1 chain, {args.steps} steps of a smooth target path; microseconds per solve, best of 7")
    for name, us in rows:
        extra = f"  ({iterations[name]:.1f} iterations)" if name in iterations else ""
        print(f"  {name:<12}{us:8.2f}{extra}")
    table = dict(rows)
    print(f"  solve / kernel: cold {table['cold'] / table['kernel cold']:.2f}x, "
          f"warm {table['warm'] / table['kernel warm']:.2f}x")


if __name__ == "__main__":
    main()
