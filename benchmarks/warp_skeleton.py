"""The Warp skeleton kernel (``fabrik.kernels.batch_warp_tree``) against the numba skeleton batch on
the humanoid: the table of docs/batch.md, "Skeletons on Warp".

Rows: ``fabrik_experiments.crowd_motion.random_poses(fabrik.models.humanoid(), N, seed=1)``, the
leaves' positions as targets (every set reachable by the free skeleton), and the same with every
4th row's targets scaled 2x (out of reach). Per configuration (the defaults
``rigid_sub_bases="auto", swing_limbs=True``, and the plain ``False, False``) and row set: solves
per second of ``solve_batch(backend="warp", device=DEVICE)`` and of the numba batch on
``--threads`` threads (best of ``--repeats`` calls after a warm-up call), how many rows the Warp
kernel handed back to the CPU, the float64 answers against numba's (largest position difference
over the skeleton's size, the summed bone lengths; whether iterations and statuses are the same),
and the float32 kernel's largest and median position difference (same scale) and share of equal
statuses.

    PYTHONPATH=src python benchmarks/warp_skeleton.py [--rows 20000] [--repeats 3] [--threads 2] [--device cpu]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import fabrik
from fabrik_experiments.batch_models_bench import warp_handed_rows
from fabrik_experiments.crowd_motion import random_poses

CONFIGURATIONS = {"defaults": {}, "plain": {"rigid_sub_bases": False, "swing_limbs": False}}


def best_rate(call, count: int, repeats: int) -> float:
    """Solves per second of ``call()`` solving ``count`` rows: best of ``repeats`` after one warm-up."""
    call()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    skeleton = fabrik.models.humanoid()
    size = float(np.sum(skeleton.bone_lengths))
    leaves = np.ascontiguousarray(random_poses(skeleton, args.rows, seed=1)[:, list(skeleton.leaves)])
    far = leaves.copy()
    far[::4] *= 2.0
    print("| configuration | rows | Warp solves/s | numba solves/s | handed back | float64 vs numba "
          "| float32 largest / median difference | float32 same status |")
    print("|---|---|---|---|---|---|---|---|")
    warnings.simplefilter("error")  # a fallback to the CPU would not be the kernel's time
    for name, options in CONFIGURATIONS.items():
        for label, targets in (("all reachable", leaves), ("every 4th target scaled 2x", far)):
            numba = fabrik.solve_batch(skeleton, targets, threads=args.threads, **options)
            rows, undo = warp_handed_rows()
            warp = fabrik.solve_batch(skeleton, targets, backend="warp", device=args.device, **options)
            undo()
            single = fabrik.solve_batch(skeleton, targets, backend="warp", device=args.device, precision="float32",
                                        **options)
            rate_warp = best_rate(lambda: fabrik.solve_batch(skeleton, targets, backend="warp", device=args.device,
                                                             **options), args.rows, args.repeats)
            rate_numba = best_rate(lambda: fabrik.solve_batch(skeleton, targets, threads=args.threads, **options),
                                   args.rows, args.repeats)
            diff = float(np.abs(warp.positions - numba.positions).max()) / size
            same = (np.array_equal(warp.iterations, numba.iterations) and np.array_equal(warp.status, numba.status))
            d32 = np.abs(single.positions.astype(np.float64) - numba.positions).max(axis=(1, 2)) / size
            reached = int(numba.reached.sum())
            print(f"| {name} | {label} ({reached:,} reached) | {rate_warp:,.0f} | {rate_numba:,.0f} | {sum(rows)} "
                  f"| {diff:.1e}, {'same' if same else 'different'} iterations and statuses "
                  f"| {d32.max():.1e} / {np.median(d32):.1e} | {100 * (single.status == numba.status).mean():.1f}% |")


if __name__ == "__main__":
    main()
