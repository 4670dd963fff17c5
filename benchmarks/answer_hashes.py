"""Hashes of the library's answers, to compare two versions of the code bit for bit.

    PYTHONPATH=src python benchmarks/answer_hashes.py > before.txt    # 1 min (kernels compiled)
    ... change the code ...
    PYTHONPATH=src python benchmarks/answer_hashes.py | diff before.txt -
    PYTHONPATH=src python benchmarks/answer_hashes.py --data    # + every shared data set: 3 min

One line per case: a name and the first 12 hex digits of the SHA-1 of the answers' positions (an
arm: its joint angles). Cases: chain FABRIK, CCD and DLS on a 6-bone chain (50 seeded targets,
reachable and not); chain FABRIK with 0.6 rad cones; the humanoid with default, free (paper's)
and limited sub-bases and with DLS (30 seeded target sets on a wrist, an ankle and the head);
the same through ``solve_batch``; the chain batch; the DHM arm (30 pose targets); a 40-frame
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


def tree_entry_cases(out: dict) -> None:
    """Cases through every compiled entry point of skeleton FABRIK (``fabrik_tree``,
    ``fabrik_tree_frames``, ``batch_tree``, ``crowd_tree``): single solves with limits (a free
    root, ``turn_search``) and with the engine options; takes plain and limited with
    ``turn_search``; batches plain and limited (start frames shared, derived per row, given per
    row, a held root rotation); crowds plain and limited. Answers hashed whole (positions, frames,
    iterations, errors, statuses)."""
    from fabrik.obstacles import Sphere

    rng = np.random.default_rng(7)
    body = fabrik.models.humanoid()
    limited = body.with_constraints(fabrik.constraints.humanoid(body)[0])
    rest = body.rest_positions()
    names = ["l_wrist", "r_ankle", "head"]
    joints = [body.index(name) for name in names]
    scale = np.array([0.4, 0.15, 0.08])[:, None]
    goals = rest[joints][None] + rng.normal(0, 1, (8, 3, 3)) * scale  # (8, k, 3): far enough to end short
    sets = [dict(zip(names, g)) for g in goals]

    def whole(sol):
        extras = [sol.extras["frames"]] if "frames" in sol.extras else []
        return [sol.positions, *extras, np.array([sol.iterations]), sol.extras["effector_error_array"],
                np.frombuffer(sol.status.encode(), np.uint8)]

    out["tree free root, turn_search"] = digest(*[a for t in sets for a in whole(
        fabrik.solve(limited, targets=t, root_rotation="free", turn_search=True))])
    out["tree engine options"] = digest(*[a for t in sets for a in whole(
        fabrik.solve(body, targets=t, weights={"head": 0.5}, poles={"l_elbow": [0.5, 1.2, 0.5]},
                     obstacles=[Sphere([0.3, 1.0, 0.3], 0.1)]))])
    out["tree limited obstacles"] = digest(*[a for t in sets[:4] for a in whole(
        fabrik.solve(limited, targets=t, obstacles=[Sphere([0.3, 1.0, 0.3], 0.1)], self_collision=0.02))])

    def take_hash(sol):
        return digest(sol.positions, *([] if sol.frames is None else [sol.frames]), sol.iterations,
                      sol.effector_errors, sol.status_codes)

    walk = np.cumsum(rng.normal(0, 0.03, (2, 12, 3, 3)), axis=1) + rest[joints][None, None]  # (N, F, k, 3)
    paths = {name: walk[0, :, t] for t, name in enumerate(names)}
    out["tree take"] = take_hash(fabrik.solve_sequence(body, paths))
    out["tree take limited"] = take_hash(fabrik.solve_sequence(limited, paths, rigid_sub_bases="limbs"))
    crowd = {name: walk[:, :, t] for t, name in enumerate(names)}
    out["tree crowd"] = take_hash(fabrik.solve_sequence(body, crowd, root=walk[:, :, 0] * 0.0 + rest[0]))
    crowd_limited = fabrik.solve_sequence(limited, crowd)
    out["tree crowd limited"] = take_hash(crowd_limited)
    # targets the limits allow (the limited answers' effectors), two frames pushed out of reach:
    # frames reached and frames short, which turn_search retries
    mixed = crowd_limited.positions[:, :, joints].copy()
    mixed[:, 4, 0] += [0.5, 0.2, 0.0]
    mixed[:, 9, 1] += [0.0, 0.3, 0.3]
    out["tree take limited, turn_search"] = take_hash(fabrik.solve_sequence(
        limited, {name: mixed[0, :, t] for t, name in enumerate(names)}, turn_search=True))
    out["tree crowd limited, turn_search"] = take_hash(fabrik.solve_sequence(
        limited, {name: mixed[:, :, t] for t, name in enumerate(names)}, turn_search=True))
    goals = np.ascontiguousarray(mixed.reshape(-1, 3, 3)[::2])  # (12, k, 3)
    sets = [dict(zip(names, g)) for g in goals]

    def batch_hash(sol):
        return digest(sol.positions, *([] if sol.frames is None else [sol.frames]), sol.iterations,
                      sol.effector_errors, sol.status)

    starts = rest[None] + rng.normal(0, 0.01, (goals.shape[0], body.n_joints, 3))
    out["tree batch starts"] = batch_hash(fabrik.solve_batch(body, goals, effectors=names, initial=starts,
                                                             root=starts[:, 0], rigid_sub_bases=False))
    out["tree batch limited"] = batch_hash(fabrik.solve_batch(limited, goals, effectors=names))
    out["tree batch limited, derived frames"] = batch_hash(fabrik.solve_batch(limited, goals, effectors=names,
                                                                              initial=starts))
    frames = np.stack([fabrik.solve(limited, targets=t).extras["frames"] for t in sets])
    out["tree batch limited, given frames"] = batch_hash(fabrik.solve_batch(limited, goals, effectors=names,
                                                                            initial_frames=frames))
    out["tree batch limited, root rotation"] = batch_hash(fabrik.solve_batch(
        limited, goals, effectors=names, root_rotation=np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])))
    out["tree batch limited, turn_search"] = batch_hash(fabrik.solve_batch(limited, goals, effectors=names,
                                                                           turn_search=True))


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
    tree_entry_cases(out)
    arm = fabrik.models.dhm_arm()
    positions, frames = fabrik.forward(arm, arm.random_angles(0, 30))
    out["dhm arm"] = digest(*[fabrik.solve(arm, (positions[k, -1], frames[k, -1])).joint_angles for k in range(30)])
    if CMU.is_file():
        skeleton, motion = fabrik.load_motion(str(CMU))
        out["cmu_131_01 reconstruction"] = digest(reconstruct_take(skeleton, motion.frames(0, 40)).positions)
    if args.data:
        data_sets(out)
    for name, value in out.items():
        print(f"{name:28s} {value}")


if __name__ == "__main__":
    main()
