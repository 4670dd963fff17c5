"""1,000 random reachable pose targets on the DHM arm: success and time per ``fabrik.solve``.

Targets come from random angles within the limits (``Arm.random_angles``); every solve starts
from the rest angles; a target counts as reached when the answer's joint angles, put through the
DH product (``fabrik.forward``), bring the tip within 1e-3 of the reach and 0.5 degrees.

    python benchmarks/arm_targets.py [--targets N] [--methods fabrik,ccd,jacobian-dls]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import fabrik


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--methods", default="fabrik,ccd,jacobian-dls")
    args = parser.parse_args()
    arm = fabrik.models.dhm_arm()
    qs = arm.random_angles(np.random.default_rng(2026), args.targets)
    positions, frames = fabrik.forward(arm, qs)
    print(f"DHM arm, {args.targets} random reachable pose targets, solves from the rest angles")
    print(f"{'method':<14}{'reached':>10}{'median us':>11}{'p90 us':>9}{'mean iters':>12}")
    for method in args.methods.split(","):
        fabrik.solve(arm, (positions[0, -1], frames[0, -1]), method=method)  # compile outside the timing
        ok, times, iterations = 0, [], []
        for k in range(args.targets):
            start = time.perf_counter()
            sol = fabrik.solve(arm, (positions[k, -1], frames[k, -1]), method=method, tol=1e-3 * arm.reach)
            times.append(time.perf_counter() - start)
            iterations.append(sol.iterations)
            p, f = fabrik.forward(arm, sol.joint_angles)
            angle = math.degrees(math.acos(min(1.0, max(-1.0, (np.trace(f[-1].T @ frames[k, -1]) - 1.0) / 2.0))))
            ok += np.linalg.norm(p[-1] - positions[k, -1]) <= 1e-3 * arm.reach and angle <= 0.5
        t = np.array(times) * 1e6
        print(f"{method:<14}{ok:>6} / {args.targets:<4}{np.median(t):>8.1f}{np.percentile(t, 90):>9.1f}"
              f"{np.mean(iterations):>12.1f}")


if __name__ == "__main__":
    main()
