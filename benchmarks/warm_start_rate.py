"""Why warm-started tracking on the Table 1 chain takes about as many iterations as cold solves.

Along ``call_overhead.py``'s tracking path (steps of ``--step`` of the reach), for every
``--every``-th target it runs FABRIK with ``tol=0`` for 0, 1, ..., ``--iterations`` iterations,
from the rest pose (cold) and from the previous target's answer (warm, tracking), and prints the
median effector error after each iteration and the median ratio of successive errors (FABRIK's
linear rate once it has settled). A warm start begins far closer to the target, but the poses
tracking drifts into converge more slowly per iteration than the poses a cold solve from the
straight rest pose passes through, which takes most of the head start back at ``tol = 1e-3``.

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
    starts, prev = [], chain.rest_positions
    for target in path:
        starts.append(prev)
        prev = fabrik.solve(chain, target, initial=prev).positions
    picked = range(100, args.steps, args.every)
    errors = {"cold": [], "warm": []}
    for i in picked:
        errors["cold"].append([fabrik.solve(chain, path[i], tol=0.0, max_iter=k).error
                               for k in range(args.iterations + 1)])
        errors["warm"].append([fabrik.solve(chain, path[i], initial=starts[i], tol=0.0, max_iter=k).error
                               for k in range(args.iterations + 1)])
    print(f"Table 1 chain, {len(errors['cold'])} targets of a tracking path in steps of {args.step:g} of the reach; "
          "median effector error after k iterations (tol 0), and median ratio of successive errors")
    print("| start | " + " | ".join(f"k={k}" for k in range(args.iterations + 1)) + " | rate, k=2..5 |")
    print("| --- |" + " ---: |" * (args.iterations + 2))
    for name, rows in errors.items():
        e = np.asarray(rows)
        rate = float(np.median(e[:, 3:6] / e[:, 2:5]))
        print(f"| {name} | " + " | ".join(f"{v:.3g}" for v in np.median(e, axis=0)) + f" | {rate:.3f} |")


if __name__ == "__main__":
    main()
