"""Warm-started tracking on the Table 1 chain: iterations and convergence, with and without ``turn_start``.

Along ``call_overhead.py``'s tracking path (steps of ``--step`` of the reach) it tracks the path
three ways: cold (every solve from the rest pose), warm (from the previous answer) with FABRIK's
default ``turn_start`` (the start pose first turned rigidly about the root to point its effector
at the target), and warm with ``turn_start=False`` (Algorithm 1 from the previous answer). It
prints each way's mean iterations per solve at tol 1e-3, and, for every ``--every``-th target,
the median effector error after k = 1..``--iterations`` iterations (tol 0) and the median ratio of
successive errors. Without the turn, the poses tracking drifts into converge more slowly per
iteration than a cold solve from the straight rest pose, which takes the head start back.

    PYTHONPATH=src python benchmarks/warm_start_rate.py [--steps 3000] [--step 0.01] [--every 97]
"""

from __future__ import annotations

import argparse

import numpy as np

import fabrik
from call_overhead import tracking_path
from fabrik_experiments.table1 import benchmark_chain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="targets along the path (default 3000)")
    parser.add_argument("--step", type=float, default=0.01, help="step between targets, fraction of the reach")
    parser.add_argument("--every", type=int, default=97, help="sample every this many targets after the 100th")
    parser.add_argument("--iterations", type=int, default=8, help="iterations to follow (default 8)")
    args = parser.parse_args()
    chain = benchmark_chain()
    path = tracking_path(chain.total_length, args.steps, args.step)
    picked = range(100, args.steps, args.every)
    ways = {"cold": None, "warm, turn_start=False": False, "warm (turn_start)": True}
    print(f"Table 1 chain, {args.steps} targets in steps of {args.step:g} of the reach; mean iterations per solve "
          f"(tol 1e-3), and over {len(picked)} of them the median effector error after k iterations (tol 0) and the "
          "median ratio of successive errors")
    ks = range(1, args.iterations + 1)
    print("| start | iterations | " + " | ".join(f"k={k}" for k in ks) + " | rate, k=2..5 |")
    print("| --- | ---: |" + " ---: |" * (args.iterations + 1))
    for name, turn in ways.items():
        starts, iterations, prev = [], [], chain.rest_positions
        for target in path:
            starts.append(None if turn is None else prev)
            sol = fabrik.solve(chain, target, initial=starts[-1], turn_start=bool(turn))
            iterations.append(sol.iterations)
            prev = sol.positions
        e = np.asarray([[fabrik.solve(chain, path[i], initial=starts[i], tol=0.0, max_iter=k,
                                      turn_start=bool(turn)).error for k in ks] for i in picked])
        rate = float(np.median(e[:, 2:5] / e[:, 1:4]))
        print(f"| {name} | {np.mean(iterations):.2f} | " + " | ".join(f"{v:.3g}" for v in np.median(e, axis=0))
              + f" | {rate:.3f} |")


if __name__ == "__main__":
    main()
