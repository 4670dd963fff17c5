"""Does plain FABRIK's effector error ever rise from one iteration to the next on a chain?

Limited FABRIK keeps the best pose it has seen and stops after a window without progress, because
limits can make it cycle (``fabrik.kernels.fabrik_chain``). Plain FABRIK does neither: this run
checks that its best pose is its last. On ``--chains`` random chains (2-12 joints, bone lengths
0.2-2.0) plus the Table 1 chain, ``--targets`` random reachable targets each, from the straight
rest pose and from a random bent start, it runs 1, 2, ..., ``--iterations`` iterations (tol 0,
``turn_start=False``) and counts the solves whose error rose by more than 1e-12 of the reach
between two iterations.

    PYTHONPATH=src python benchmarks/plain_monotone.py [--chains 20] [--targets 50] [--iterations 24]
"""

from __future__ import annotations

import argparse

import numpy as np

import fabrik
from fabrik_experiments.table1 import benchmark_chain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=20)
    parser.add_argument("--targets", type=int, default=50)
    parser.add_argument("--iterations", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    chains = [benchmark_chain()]
    for _ in range(args.chains):
        lengths = rng.uniform(0.2, 2.0, size=int(rng.integers(1, 12)))
        chains.append(fabrik.Chain.from_positions(np.vstack([np.zeros(3), np.outer(np.cumsum(lengths), [0, 1, 0])])))
    counts = {"rest": [0, 0], "bent": [0, 0]}
    for chain in chains:
        reach, lengths = chain.total_length, np.asarray(chain.bone_lengths)
        for _ in range(args.targets):
            direction = rng.normal(size=3)
            target = direction / np.linalg.norm(direction) * rng.uniform(0.05, 1.0) * reach
            bones = rng.normal(size=(len(lengths), 3))
            bones *= (lengths / np.linalg.norm(bones, axis=1))[:, None]
            for name, start in (("rest", None), ("bent", np.vstack([np.zeros(3), np.cumsum(bones, axis=0)]))):
                errors = [fabrik.solve(chain, target, initial=start, tol=0.0, max_iter=k, turn_start=False).error
                          for k in range(1, args.iterations + 1)]
                counts[name][0] += 1
                counts[name][1] += bool((np.diff(errors) > 1e-12 * reach).any())
    for name, (solves, rose) in counts.items():
        print(f"{name} starts: {solves} solves, {rose} with an error that rose between two iterations")


if __name__ == "__main__":
    main()
