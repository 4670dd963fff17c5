"""The most that running chains side by side can gain on this CPU: FABRIK's forward stage alone.

Each joint step of a FABRIK stage costs one division and one square root, and in one chain every
step waits for the one before (``a`` is the joint just placed). Run K chains at once and the steps
no longer wait on each other; what is left is the throughput of the divide/square-root unit. This
script times the bare stage loop (no stopping rules, no bookkeeping; the Table 1 chain's 10 joints
of 100 units, random poses and targets) for one chain and for K chains held in registers (code
generated per K, so nothing lives in arrays between steps), in CPU time of this process, best of
``--repeats``. The ratio single / K-lane is the ceiling for any lockstep layout of
``fabrik.solve_batch`` against the one-chain-per-thread kernel on this CPU.

    PYTHONPATH=src python benchmarks/lane_ceiling.py [--lanes 2,4,8,16] [--iterations 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit


@njit(error_model="numpy")
def stages_single(P, T, L, iterations):
    last = P.shape[0] - 1
    for _ in range(iterations):
        a0 = T[0]
        a1 = T[1]
        a2 = T[2]
        P[last, 0] = a0
        P[last, 1] = a1
        P[last, 2] = a2
        for j in range(last - 1, -1, -1):
            x = P[j, 0] - a0
            y = P[j, 1] - a1
            z = P[j, 2] - a2
            r2 = x * x + y * y + z * z
            s = L[j] / r2
            rt = np.sqrt(r2)
            a0 += s * x * rt
            a1 += s * y * rt
            a2 += s * z * rt
            P[j, 0] = a0
            P[j, 1] = a1
            P[j, 2] = a2
    return P


def stages_lanes(lanes: int):
    """The same loop for ``lanes`` chains, each lane's placed joint in its own local variables."""
    lines = ["def stages(P, T, L, iterations):", "    last = P.shape[0] - 1", "    for _ in range(iterations):"]
    for k in range(lanes):
        lines.append(f"        a{k}x = T[0, {k}]; a{k}y = T[1, {k}]; a{k}z = T[2, {k}]")
        lines.append(f"        P[last, 0, {k}] = a{k}x; P[last, 1, {k}] = a{k}y; P[last, 2, {k}] = a{k}z")
    lines += ["        for j in range(last - 1, -1, -1):", "            length = L[j]"]
    for k in range(lanes):
        lines += [f"            x = P[j, 0, {k}] - a{k}x; y = P[j, 1, {k}] - a{k}y; z = P[j, 2, {k}] - a{k}z",
                  "            r2 = x * x + y * y + z * z; s = length / r2; rt = np.sqrt(r2)",
                  f"            a{k}x += s * x * rt; a{k}y += s * y * rt; a{k}z += s * z * rt",
                  f"            P[j, 0, {k}] = a{k}x; P[j, 1, {k}] = a{k}y; P[j, 2, {k}] = a{k}z"]
    lines.append("    return P")
    namespace = {"np": np}
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from integers only
    return njit(error_model="numpy")(namespace["stages"])


def best_time(function, P, T, L, iterations, repeats) -> float:
    function(P.copy(), T, L, 2)  # compile
    best = np.inf
    for _ in range(repeats):
        work = P.copy()
        start = time.process_time()
        function(work, T, L, iterations)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", default="2,4,8,16")
    parser.add_argument("--iterations", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    joints = 10
    L = np.full(joints - 1, 100.0)
    steps = args.iterations * (joints - 1)
    single = best_time(stages_single, rng.normal(size=(joints, 3)) * 100, rng.normal(size=3) * 300, L,
                       args.iterations, args.repeats) / steps
    print("lanes | ns per chain and joint step | gain over one chain")
    print(f"1 | {single * 1e9:.2f} | 1.00x")
    for lanes in (int(k) for k in args.lanes.split(",")):
        per = best_time(stages_lanes(lanes), rng.normal(size=(joints, 3, lanes)) * 100,
                        rng.normal(size=(3, lanes)) * 300, L, args.iterations, args.repeats) / steps / lanes
        print(f"{lanes} | {per * 1e9:.2f} | {single / per:.2f}x")


if __name__ == "__main__":
    main()
