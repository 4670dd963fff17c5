"""Robots with prismatic joints (``fabrik_experiments.prismatic_robots``): forward kinematics
against yourdfpy, and random reachable pose targets solved by the arm methods at two tolerances.

    PYTHONPATH=src python benchmarks/prismatic_robots.py [--targets 200] [--urdf-dir ../shared/data/urdf]

Robots: the SCARA arm (RRPR), the gantry (PPPRRR), the Panda on a rail (a prismatic joint under
``panda_link0``, from ``../shared/data/urdf/panda.urdf`` when present) and the UR5 on a lift.
Per robot: the largest difference between ``fabrik.forward`` and yourdfpy's tip transform over
200 random values within the limits; then ``--targets`` targets from random values, every solve
from the rest values (0 clipped into the limits), reached = within 1 mm and 0.5 degrees, and
within 1e-5 m and 1e-5 rad, by ``fabrik.forward`` (``tip_errors``) and within the limits.
"""

from __future__ import annotations

import argparse
import io
import math
import time
from pathlib import Path

import numpy as np

import fabrik
from fabrik.model.arm import tip_errors
from fabrik_experiments.prismatic_robots import gantry_urdf, on_rail, scara_urdf

METHODS = (("fabrik", {}), ("fabrik", {"restarts": 0}), ("ccd", {}), ("jacobian-dls", {"restarts": 200}))


def main(argv=None) -> int:
    import yourdfpy

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--targets", type=int, default=200)
    p.add_argument("--urdf-dir", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data" / "urdf"))
    args = p.parse_args(argv)
    robots = [("SCARA", scara_urdf(), "tool"), ("gantry", gantry_urdf(), "tool")]
    urdf = Path(args.urdf_dir)
    if (urdf / "panda.urdf").is_file():
        robots.append(("Panda on a rail", on_rail((urdf / "panda.urdf").read_text(), "panda_link0"), "panda_hand"))
        robots.append(("UR5 on a lift", on_rail((urdf / "ur5.urdf").read_text(), "world", axis="0 0 1", lower=0.0,
                                                upper=0.6, name="lift"), "tool0"))
    for name, text, tip in robots:
        arm = fabrik.load_urdf(text, tip=tip)
        model = yourdfpy.URDF.load(io.BytesIO(text.encode()), load_meshes=False, build_collision_scene_graph=False,
                                   load_collision_meshes=False)
        qs = arm.random_angles(np.random.default_rng(0), 200)
        positions, frames = fabrik.forward(arm, qs)
        worst = 0.0
        for q, pos, fr in zip(qs, positions, frames):
            model.update_cfg(dict(zip(arm.joint_names, q)))
            t = model.get_transform(arm.tip_name, arm.base_name)
            worst = max(worst, float(np.abs(t[:3, 3] - pos[-1]).max()), float(np.abs(t[:3, :3] - fr[-1]).max()))
        print(f"{name}: {arm!r}, types {''.join('P' if s else 'R' for s in arm.prismatic)}; forward against yourdfpy: "
              f"largest difference {worst:.2g} over 200 poses")
        qs = arm.random_angles(np.random.default_rng(1), args.targets)
        positions, frames = fabrik.forward(arm, qs)
        start = arm.clip(np.zeros(arm.n_joints))
        for method, options in METHODS:
            fabrik.solve(arm, (positions[0, -1], frames[0, -1]), method=method, **options)
        for tol, otol in ((1e-3, math.radians(0.5)), (1e-5, 1e-5)):
            rows = {}
            for k in range(args.targets):
                p_k, r_k = positions[k, -1], frames[k, -1]
                for method, options in METHODS:
                    began = time.perf_counter()
                    sol = fabrik.solve(arm, (p_k, r_k), method=method, initial=start, tol=tol, orientation_tol=otol,
                                       **options)
                    seconds = time.perf_counter() - began
                    err, angle = tip_errors(arm, sol.joint_angles, p_k, r_k)
                    ok = err <= tol and angle <= otol and arm.within_limits(sol.joint_angles)
                    label = method if not options else f"{method} ({', '.join(f'{a}={b}' for a, b in options.items())})"
                    rows.setdefault(label, []).append((ok, seconds))
            print(f"  tolerance {tol:g} m and {otol:.3g} rad")
            for label, got in rows.items():
                t = np.array([s for _, s in got]) * 1e6
                rate = np.mean([o for o, _ in got])
                print(f"    {label:<30}{rate:>8.1%}{np.median(t):>9.0f} us{np.percentile(t, 90):>8.0f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
