"""Hashes of the library's answers, to compare two versions of the code bit for bit.

    PYTHONPATH=src python benchmarks/answer_hashes.py > before.txt    # 1 min (kernels compiled)
    ... change the code ...
    PYTHONPATH=src python benchmarks/answer_hashes.py | diff before.txt -
    PYTHONPATH=src python benchmarks/answer_hashes.py --data    # + every shared data set: 3 min

One line per case: a name and the first 12 hex digits of the SHA-1 of the answers' positions (an
arm: its joint angles). Cases: chain FABRIK, CCD and DLS on a 6-bone chain (50 seeded targets,
reachable and not); chain FABRIK with 0.6 rad cones; the humanoid with default, free (paper's)
and limited sub-bases and with DLS (30 seeded target sets on a wrist, an ankle and the head);
the same through ``solve_batch``; the chain batch; the DHM arm (30 pose targets); every compiled
arm entry point (``arm_entry_cases``); a 40-frame
reconstruction of ``../shared/data/mocap/cmu_131_01.bvh`` (skipped when the data is absent).
``--data`` adds, from ``../shared/data``: 30 frames of cmu_131_02, the first two bandai2 takes,
the first two DeepMimic clips and the first climbing take, each reconstructed plain and with the
humanoid limits, and 20 pose targets on each robot (panda, ur5).
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np

import fabrik
from fabrik.constraints import Cone
from fabrik.mocap import reconstruct_take

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CMU = DATA / "mocap" / "cmu_131_01.bvh"
ROBOTS = (("panda", "panda_hand"), ("ur5", "tool0"))


def digest(*arrays) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:12]


def data_sets(out: dict) -> None:
    """The ``--data`` cases (module docstring), those whose files are present."""
    mocap = DATA / "mocap"
    takes = ([mocap / "cmu_131_02.bvh"] + sorted((mocap / "bandai2").glob("*.bvh"))[:2]
             + sorted((mocap / "deepmimic").glob("*.bvh"))[:2] + sorted((mocap / "climb").glob("*.bvh"))[:1])
    for path in takes:
        if not path.is_file():
            continue
        skeleton, motion = fabrik.load_motion(str(path))
        motion = motion.frames(0, 30)
        plain = reconstruct_take(skeleton, motion)
        limited = reconstruct_take(skeleton, motion, method="fabrik-constrained", constraints="humanoid")
        out[f"{path.name} plain, limited"] = f"{digest(plain.positions)} {digest(limited.positions)}"
    for name, tip in ROBOTS:
        path = DATA / "urdf" / f"{name}.urdf"
        if path.is_file():
            arm = fabrik.load_urdf(str(path), tip=tip)
            positions, frames = fabrik.forward(arm, arm.random_angles(1, 20))
            out[f"{name}.urdf"] = digest(*[fabrik.solve(arm, (positions[k, -1], frames[k, -1])).joint_angles
                                           for k in range(20)])


def arm_entry_cases(out: dict) -> None:
    """Every compiled arm entry point (``fabrik_arm`` with and without obstacles, its Newton finish
    from the start with ``nearest``, ``ccd_arm``, ``dls_arm``, ``srs_solve`` with a position target
    and a pole, ``batch_srs``, ``batch_search``), on a few seeded targets each: an xArm-7-like robot
    (offsets, tight limits), a SCARA arm (a prismatic joint) and the DHM arm. A large time budget
    and few restarts, so that no clock decides an answer."""
    from fabrik import Arm
    from fabrik.obstacles import Sphere

    pi = np.pi
    xarm = Arm.from_dh([(0, .267, 0, 0), (0, 0, -pi / 2, 0), (0, .293, pi / 2, 0), (0, 0, pi / 2, .0525),
                        (0, .3425, pi / 2, .0775), (0, 0, pi / 2, 0), (0, .097, -pi / 2, .076)],
                       convention="modified", limits=[(-2 * pi, 2 * pi), (-2.059, 2.0944), (-2 * pi, 2 * pi),
                                                      (-0.19198, 3.927), (-2 * pi, 2 * pi), (-1.69297, pi),
                                                      (-2 * pi, 2 * pi)])
    scara = Arm.from_dh([(0, .4, 0, .35), (0, 0, pi, .3), (0, 0, 0, 0), (0, .05, 0, 0)], joint_types="RRPR",
                        limits=[(-2.5, 2.5), (-2.5, 2.5), (0.0, 0.3), (-pi, pi)])
    budget = {"time_budget": 60.0, "restarts": 3}
    for name, robot in (("xarm", xarm), ("scara", scara)):
        positions, frames = fabrik.forward(robot, robot.random_angles(7, 6))
        poses = [(positions[k, -1], frames[k, -1]) for k in range(6)]
        points = [positions[k, -1] for k in range(6)]
        for method in ("fabrik", "ccd", "jacobian-dls"):
            out[f"{name} {method}"] = digest(*[fabrik.solve(robot, t, method=method, **budget).joint_angles
                                               for t in poses + points])
        out[f"{name} fabrik nearest"] = digest(*[fabrik.solve(robot, t, nearest=True, **budget).joint_angles
                                                 for t in poses])
        for method in ("fabrik", "ccd", "jacobian-dls"):
            sol = fabrik.solve_batch(robot, (positions[:, -1], frames[:, -1]), method=method, restarts=3)
            out[f"{name} {method} batch"] = digest(sol.joint_angles, sol.iterations, sol.status)
    dhm = fabrik.models.dhm_arm()
    positions, frames = fabrik.forward(dhm, dhm.random_angles(11, 8))
    out["dhm arm points"] = digest(*[fabrik.solve(dhm, positions[k, -1]).joint_angles for k in range(8)])
    rng = np.random.default_rng(11)
    out["dhm arm pole"] = digest(*[fabrik.solve(dhm, (positions[k, -1], frames[k, -1]),
                                                pole=positions[k, 0] + rng.normal(0, 40, 3)).joint_angles
                                   for k in range(8)])
    ball = Sphere(positions[0, 0] + [10.0, -30.0, 0.0], 8.0)
    out["dhm arm obstacles"] = digest(*[fabrik.solve(dhm, positions[k, -1], obstacles=[ball], self_collision=2.0,
                                                     tol=0.01, **budget).joint_angles for k in range(8)])
    for kind, targets in (("poses", (positions[:, -1], frames[:, -1])), ("points", positions[:, -1])):
        sol = fabrik.solve_batch(dhm, targets)
        out[f"dhm arm batch {kind}"] = digest(sol.joint_angles, sol.iterations, sol.status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", action="store_true", help="also every shared data set (../shared/data)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    out = {}
    chain = fabrik.Chain.straight(7)
    targets = rng.uniform(-4, 4, (50, 3))
    for method in ("fabrik", "ccd", "jacobian-dls"):
        out[f"chain {method}"] = digest(*[fabrik.solve(chain, t, method=method).positions for t in targets])
    limited = chain.with_constraints({i: Cone(0.6, 0.6, 0.6, 0.6) for i in range(1, 6)})
    out["chain with cones"] = digest(*[fabrik.solve(limited, t).positions for t in targets])
    body = fabrik.models.humanoid()
    rest = body.rest_positions()
    sets = [{"l_wrist": rest[5] + rng.normal(0, 0.2, 3), "r_ankle": rest[12] + rng.normal(0, 0.1, 3),
             "head": rest[2] + rng.normal(0, 0.05, 3)} for _ in range(30)]
    out["humanoid"] = digest(*[fabrik.solve(body, targets=t).positions for t in sets])
    out["humanoid free sub-bases"] = digest(*[fabrik.solve(body, targets=t, rigid_sub_bases=False).positions
                                              for t in sets])
    with_limits = body.with_constraints(fabrik.constraints.humanoid(body)[0])
    out["humanoid with limits"] = digest(*[fabrik.solve(with_limits, targets=t).positions for t in sets])
    out["humanoid jacobian-dls"] = digest(*[fabrik.solve(body, targets=t, method="jacobian-dls").positions
                                            for t in sets])
    stacked = np.stack([np.stack([t["l_wrist"], t["r_ankle"], t["head"]]) for t in sets])
    out["humanoid batch"] = digest(fabrik.solve_batch(body, stacked, effectors=["l_wrist", "r_ankle", "head"]).positions)
    out["chain batch"] = digest(fabrik.solve_batch(chain, targets).positions)
    arm = fabrik.models.dhm_arm()
    positions, frames = fabrik.forward(arm, arm.random_angles(0, 30))
    out["dhm arm"] = digest(*[fabrik.solve(arm, (positions[k, -1], frames[k, -1])).joint_angles for k in range(30)])
    arm_entry_cases(out)
    if CMU.is_file():
        skeleton, motion = fabrik.load_motion(str(CMU))
        out["cmu_131_01 reconstruction"] = digest(reconstruct_take(skeleton, motion.frames(0, 40)).positions)
    if args.data:
        data_sets(out)
    for name, value in out.items():
        print(f"{name:28s} {value}")


if __name__ == "__main__":
    main()
