"""Tracking a smooth path of poses with ``nearest=True`` (issue 43, item 4): how far the answers
jump between consecutive poses, and whether a jump was avoidable.

    PYTHONPATH=src python benchmarks/arm_tracking.py [--paths 10] [--poses 1000] [--urdf-dir ../shared/data/urdf]

Per robot (the Panda and the UR5 from ``../shared/data/urdf`` when present, the UFactory xArm 7 and
the UR10 from their DH tables, the SCARA arm of ``fabrik_experiments.prismatic_robots``) and path:
joint values on a smooth random curve within the limits (each joint a sum of three slow sinusoids
about the middle of its range, ``--poses`` samples), their tip poses the targets, solved in turn
from the last answer (the first from the path's own first values) with ``nearest=True`` at 1e-5
and 1e-5 rad. A jump is an answer more than 0.1 rad (or 0.1 of the reach for a slide) from the
last in some joint. For each jump an independent continuation checks whether a continuous
solution existed: the pose moved from the last answer's to the target in 40 steps, each by
``jacobian-dls`` with damping 1e-3 of the reach and steps of at most 0.02 rad; the jump was
avoidable when that ends within 0.1 of the last answer. Printed per robot: paths, poses, misses,
jumps, avoidable jumps, the largest avoidable jump, the median time per solve.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

import fabrik

PI = math.pi
XARM7 = ([(0, .267, 0, 0), (0, 0, -PI / 2, 0), (0, .293, PI / 2, 0), (0, 0, PI / 2, .0525),
          (0, .3425, PI / 2, .0775), (0, 0, PI / 2, 0), (0, .097, -PI / 2, .076)], "modified",
         [(-2 * PI, 2 * PI), (-2.059, 2.0944), (-2 * PI, 2 * PI), (-0.19198, 3.927), (-2 * PI, 2 * PI),
          (-1.69297, PI), (-2 * PI, 2 * PI)])
UR10 = ([(0, .1273, PI / 2, 0), (0, 0, 0, -.612), (0, 0, 0, -.5723), (0, .163941, PI / 2, 0),
         (0, .1157, -PI / 2, 0), (0, .0922, 0, 0)], "standard", [(-2 * PI, 2 * PI)] * 6)


def smooth_path(arm, n, rng):
    low, span = arm.random_ranges()
    t = np.linspace(0.0, 1.0, n)[:, None]
    m = arm.n_joints
    freq, phase, amp = rng.uniform(0.5, 2.0, (3, m)), rng.uniform(0, 2 * PI, (3, m)), rng.uniform(0.2, 1.0, (3, m))
    wave = sum(amp[i] * np.sin(2 * PI * freq[i] * t + phase[i]) for i in range(3)) / amp.sum(axis=0)
    return low + span / 2 + 0.45 * span * wave


def continuation(arm, prev, p, r, steps=40):
    """The independent check (module docstring): the answer it ends at, or None."""
    p0, f0 = fabrik.forward(arm, prev)
    p0, r0 = p0[-1], f0[-1]
    slerp = Slerp([0, 1], Rotation.from_matrix([r0, r]))
    q = prev.copy()
    for t in np.linspace(0.0, 1.0, steps + 1)[1:]:
        sol = fabrik.solve(arm, (p0 + (p - p0) * t, slerp([t]).as_matrix()[0]), initial=q, method="jacobian-dls",
                           damping=1e-3, max_angle_step=0.02, tol=1e-6, orientation_tol=1e-6)
        if not sol.reached:
            return None
        q = sol.joint_angles
    return q


def track(arm, paths, poses):
    unit = np.where(arm.prismatic, arm.reach, 1.0)
    out = {"paths": paths, "poses": paths * poses, "misses": 0, "jumps": 0, "avoidable": 0, "worst avoidable": 0.0,
           "largest jump": 0.0, "times": []}
    for seed in range(paths):
        path = smooth_path(arm, poses, np.random.default_rng(seed))
        positions, frames = fabrik.forward(arm, path)
        q = path[0]
        for k in range(poses):
            p, r = positions[k, -1], frames[k, -1]
            began = time.perf_counter()
            sol = fabrik.solve(arm, (p, r), initial=q, tol=1e-5, orientation_tol=1e-5, nearest=True)
            out["times"].append(time.perf_counter() - began)
            out["misses"] += not sol.reached
            jump = float(np.max(np.abs(sol.joint_angles - q) / unit))
            out["largest jump"] = max(out["largest jump"], jump)
            if jump > 0.1:
                out["jumps"] += 1
                other = continuation(arm, q, p, r)
                if other is not None and np.max(np.abs(other - q) / unit) <= 0.1:
                    out["avoidable"] += 1
                    out["worst avoidable"] = max(out["worst avoidable"], jump)
            q = sol.joint_angles
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=10)
    parser.add_argument("--poses", type=int, default=1000)
    parser.add_argument("--urdf-dir",
                        default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data" / "urdf"))
    args = parser.parse_args(argv)
    from fabrik_experiments.prismatic_robots import scara_urdf

    robots = []
    urdf = Path(args.urdf_dir)
    if (urdf / "panda.urdf").is_file():
        robots += [("Panda", fabrik.load_urdf(urdf / "panda.urdf", tip="panda_hand")),
                   ("UR5", fabrik.load_urdf(urdf / "ur5.urdf", tip="tool0"))]
    robots += [("xArm 7 (DH)", fabrik.Arm.from_dh(XARM7[0], convention=XARM7[1], limits=XARM7[2])),
               ("UR10 (DH)", fabrik.Arm.from_dh(UR10[0], convention=UR10[1], limits=UR10[2])),
               ("SCARA", fabrik.load_urdf(scara_urdf(), tip="tool"))]
    print(f"nearest=True, tol 1e-5 and 1e-5 rad, {args.paths} smooth paths of {args.poses} poses per robot; a jump "
          "is over 0.1 rad in a joint between consecutive answers")
    print(f"{'robot':<14}{'poses':>7}{'misses':>8}{'jumps':>7}{'avoidable':>11}{'largest':>9}{'median us':>11}")
    for name, arm in robots:
        fabrik.solve(arm, fabrik.forward(arm, arm.clip(np.zeros(arm.n_joints))).positions[-1], nearest=True)
        r = track(arm, args.paths, args.poses)
        print(f"{name:<14}{r['poses']:>7}{r['misses']:>8}{r['jumps']:>7}{r['avoidable']:>11}{r['largest jump']:>9.3f}"
              f"{np.median(r['times']) * 1e6:>11.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
