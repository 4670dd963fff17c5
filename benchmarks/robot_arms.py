"""FABRIK, CCD and DLS on robot arms without URDF files here, and on random revolute chains.

1. Arms built from DH tables (after the makers' published tables, not their URDF files; lengths
   in metres): UFactory xArm 7 (modified DH), Kinova Gen3 7-DoF, KUKA LBR iiwa 7 R800, UR10,
   Puma 560. N random reachable pose targets each (from random joint values within the
   limits), every solve from the rest angles (0 clipped into the limits), reached = within
   ``--tol`` (default 1 mm) and ``--orientation-tol`` (default 0.5 degrees) by ``fabrik.forward``.
2. Random revolute chains: 3-8 joints, random axes, random rotations between joint frames,
   offsets of 0.1-1 between joints, with and without random limits (ranges of 1-5 radians);
   one position target per chain from random joint values, the solve from other random joint
   values, reached = within 1e-3 of the reach.

    python benchmarks/robot_arms.py [--targets N] [--chains N] [--tol 1e-3] [--orientation-tol 0.5deg]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.model.arm import tip_errors

PI = math.pi
DEG = math.radians

#: (name, DH rows (theta_offset, d, alpha, a), convention, limits)
DH_ARMS = (
    ("xArm 7", [(0, .267, 0, 0), (0, 0, -PI / 2, 0), (0, .293, PI / 2, 0), (0, 0, PI / 2, .0525),
                (0, .3425, PI / 2, .0775), (0, 0, PI / 2, 0), (0, .097, -PI / 2, .076)], "modified",
     [(-2 * PI, 2 * PI), (-2.059, 2.0944), (-2 * PI, 2 * PI), (-0.19198, 3.927), (-2 * PI, 2 * PI), (-1.69297, PI),
      (-2 * PI, 2 * PI)]),
    ("Kinova Gen3", [(0, -.2848, PI / 2, 0), (PI, -.0118, PI / 2, 0), (PI, -.4208, PI / 2, 0),
                     (PI, -.0128, PI / 2, 0), (PI, -.3143, PI / 2, 0), (PI, 0, PI / 2, 0), (PI, -.1674, PI, 0)],
     "standard", [None, (-2.41, 2.41), None, (-2.66, 2.66), None, (-2.23, 2.23), None]),
    ("KUKA iiwa 7", [(0, .34, -PI / 2, 0), (0, 0, PI / 2, 0), (0, .4, PI / 2, 0), (0, 0, -PI / 2, 0),
                     (0, .4, -PI / 2, 0), (0, 0, PI / 2, 0), (0, .126, 0, 0)], "standard",
     [(-DEG(170), DEG(170)), (-DEG(120), DEG(120))] * 3 + [(-DEG(175), DEG(175))]),
    ("UR10", [(0, .1273, PI / 2, 0), (0, 0, 0, -.612), (0, 0, 0, -.5723), (0, .163941, PI / 2, 0),
              (0, .1157, -PI / 2, 0), (0, .0922, 0, 0)], "standard", [(-2 * PI, 2 * PI)] * 6),
    ("Puma 560", [(0, 0, PI / 2, 0), (0, 0, 0, .4318), (0, .15005, -PI / 2, .0203), (0, .4318, PI / 2, 0),
                  (0, 0, -PI / 2, 0), (0, 0, 0, 0)], "standard",
     [(-DEG(160), DEG(160)), (-DEG(225), DEG(45)), (-DEG(45), DEG(225)), (-DEG(110), DEG(170)),
      (-DEG(100), DEG(100)), (-DEG(266), DEG(266))]),
)
METHODS = (("fabrik", {}), ("fabrik", {"restarts": 0}), ("ccd", {}), ("jacobian-dls", {}),
           ("jacobian-dls", {"restarts": 200}))


def label(method, options):
    return method if not options else f"{method} ({', '.join(f'{k}={v}' for k, v in options.items())})"


def random_chain(rng, m: int, limits: bool) -> fabrik.Arm:
    origins = np.tile(np.eye(4), (m, 1, 1))
    for k in range(m):
        origins[k, :3, :3] = Rotation.random(random_state=int(rng.integers(2**31))).as_matrix()
        if k > 0:
            origins[k, :3, 3] = rng.normal(size=3) * rng.uniform(0.1, 1.0) / math.sqrt(3.0)
    tip = np.eye(4)
    tip[:3, 3] = rng.normal(size=3) * 0.3
    lower = upper = None
    if limits:
        centre, half = rng.uniform(-1.0, 1.0, m), rng.uniform(0.5, 2.5, m)
        lower, upper = centre - half, centre + half
    return fabrik.Arm([f"j{k}" for k in range(m)], rng.normal(size=(m, 3)), origins, tip, lower, upper)


def tally(rows, key, sol, reached, seconds):
    row = rows.setdefault(key, {"reached": 0, "n": 0, "times": []})
    row["reached"] += bool(reached)
    row["n"] += 1
    row["times"].append(seconds)
    return row


def print_rows(title, rows):
    print(title)
    print(f"{'method':<30}{'reached':>9}{'median us':>11}{'p90 us':>10}")
    for key, row in rows.items():
        t = np.array(row["times"]) * 1e6
        print(f"{key:<30}{row['reached'] / row['n']:>9.1%}{np.median(t):>11.0f}{np.percentile(t, 90):>10.0f}")


def dh_arms(n: int, tol: float = 1e-3, otol: float = DEG(0.5)) -> None:
    for name, rows, convention, limits in DH_ARMS:
        arm = fabrik.Arm.from_dh(rows, convention=convention, limits=limits)
        q = arm.random_angles(np.random.default_rng(1), n)
        positions, frames = fabrik.forward(arm, q)
        start = np.clip(np.zeros(arm.n_joints), arm.lower, arm.upper)
        results = {}
        for method, options in METHODS:
            fabrik.solve(arm, (positions[0, -1], frames[0, -1]), method=method, **options)
        for k in range(n):
            p, r = positions[k, -1], frames[k, -1]
            for method, options in METHODS:
                began = time.perf_counter()
                sol = fabrik.solve(arm, (p, r), method=method, initial=start, tol=tol, orientation_tol=otol, **options)
                seconds = time.perf_counter() - began
                err, angle = tip_errors(arm, sol.joint_angles, p, r)
                ok = err <= tol and angle <= otol and arm.within_limits(sol.joint_angles)
                tally(results, label(method, options), sol, ok, seconds)
        print_rows(f"{name} ({arm.n_joints} joints, reach {arm.reach:.3g} m): {n} pose targets from the rest angles, "
                   f"tol {tol:g} m and {otol:g} rad", results)
        print()


def random_chains(n: int) -> None:
    for limits in (False, True):
        rng = np.random.default_rng(2011 + limits)
        results = {}
        for _ in range(n):
            arm = random_chain(rng, int(rng.integers(3, 9)), limits)
            q_goal, q_start = arm.random_angles(rng, 2)
            target = fabrik.forward(arm, q_goal).positions[-1]
            for method, options in METHODS:
                began = time.perf_counter()
                sol = fabrik.solve(arm, target, method=method, initial=q_start, tol=1e-3 * arm.reach, **options)
                seconds = time.perf_counter() - began
                err = np.linalg.norm(fabrik.forward(arm, sol.joint_angles).positions[-1] - target)
                ok = err <= 1e-3 * arm.reach and arm.within_limits(sol.joint_angles)
                tally(results, label(method, options), sol, ok, seconds)
        print_rows(f"random revolute chains (3-8 joints{', random limits' if limits else ''}): {n} chains, one "
                   "position target each, from random angles", results)
        print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=1000, help="pose targets per DH arm")
    parser.add_argument("--chains", type=int, default=1000, help="random chains, with and without limits")
    parser.add_argument("--tol", type=float, default=1e-3, help="position tolerance of the DH arms (metres)")
    parser.add_argument("--orientation-tol", default="0.5deg",
                        help="orientation tolerance of the DH arms, radians or degrees with 'deg'")
    args = parser.parse_args()
    otol = args.orientation_tol
    otol = DEG(float(otol[:-3])) if otol.endswith("deg") else float(otol)
    dh_arms(args.targets, args.tol, otol)
    if args.chains:
        random_chains(args.chains)


if __name__ == "__main__":
    main()
