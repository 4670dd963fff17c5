"""The Warp arm kernel (``fabrik.kernels.batch_warp_arm``) against the numba arm batch on the DHM
arm: ``fabrik.solve_batch(fabrik.models.dhm_arm(), targets, backend="warp", device=...)`` beside
``backend="numba"`` on ``--threads`` threads, for N pose targets and N position targets, the tip
poses of ``arm.random_angles(1, N)`` (as ``fabrik bench batch``'s arm table makes them), from the
rest angles; best of ``--repeats`` calls after a warm-up call. The device hands no row back (the
kernel ports every branch of ``srs_finish``; the device path has no host solve to hand rows to).
It also reports whether float64 answers equal numba's (largest difference of joint values and
positions, same iterations and statuses), and float32's accuracy against float64 (largest and
median difference of joint values and of positions, the share of equal statuses).

    PYTHONPATH=src python benchmarks/warp_arm.py [--targets 100000] [--repeats 3] [--threads 2] [--device cpu]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import fabrik
from fabrik import models


def best_of(call, repeats: int):
    """(best wall seconds of ``repeats`` calls after one warm-up call, the last answer)."""
    result = call()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="numba threads (default 2)")
    parser.add_argument("--device", default="cpu", help="Warp device (default cpu)")
    args = parser.parse_args()
    arm = models.dhm_arm()
    positions, frames = fabrik.forward(arm, arm.random_angles(1, args.targets))
    points, rotations = np.ascontiguousarray(positions[:, -1]), np.ascontiguousarray(frames[:, -1])
    print(f"{args.targets:,} DHM-arm targets, Warp device {args.device!r} vs numba on {args.threads} threads, "
          f"best of {args.repeats}")
    for kind, targets in (("pose", (points, rotations)), ("position", points)):
        s_numba, numba = best_of(lambda: fabrik.solve_batch(arm, targets, threads=args.threads), args.repeats)
        s_warp, warp = best_of(lambda: fabrik.solve_batch(arm, targets, backend="warp", device=args.device),
                               args.repeats)
        single = fabrik.solve_batch(arm, targets, backend="warp", device=args.device, precision="float32")
        dq = np.abs(warp.joint_angles - numba.joint_angles).max()
        dp = np.abs(warp.positions - numba.positions).max()
        same = np.array_equal(warp.iterations, numba.iterations) and np.array_equal(warp.status, numba.status)
        q32 = np.abs(single.joint_angles.astype(np.float64) - warp.joint_angles).max(axis=1)
        p32 = np.abs(single.positions.astype(np.float64) - warp.positions).max(axis=(1, 2)) / arm.reach
        print(f"{kind}: Warp {args.targets / s_warp:,.0f} solves/s, numba {args.targets / s_numba:,.0f} solves/s; "
              f"reached {warp.reached.mean():.2%}")
        print(f"  float64 vs numba: joint values {dq:.3g}, positions {dp:.3g}, same iterations and statuses {same}")
        print(f"  float32 vs float64: joint values largest {q32.max():.3g} / median {np.median(q32):.3g} rad "
              f"(rows over 1e-3 rad: {np.mean(q32 > 1e-3):.3%}), positions largest {p32.max():.3g} / median "
              f"{np.median(p32):.3g} of the reach, same status {np.mean(single.status == warp.status):.2%}")


if __name__ == "__main__":
    main()
