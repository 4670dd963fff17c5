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

A hash says only whether answers changed. To tell rounding from a changed answer, store the raw
arrays and compare them case by case:

    PYTHONPATH=src python benchmarks/answer_hashes.py --save /tmp/before.npz
    ... change the code ...
    PYTHONPATH=src python benchmarks/answer_hashes.py --save /tmp/after.npz --compare /tmp/before.npz

``--compare`` prints, per case: identical, or the largest absolute difference of its
floating-point arrays divided by the case's scale (the largest magnitude of its first array, the
positions: the model's size; for an arm its joint angles, about pi) and how many integer-valued
entries (iterations, statuses) changed. ``compare(load(a), b)`` compares two stored files.
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


# the arrays hashed since the last case was stored (``Answers`` files them under the case's name)
_hashed: list[np.ndarray] = []


def digest(*arrays) -> str:
    h = hashlib.sha1()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(a.tobytes())
        _hashed.append(a.copy())
    return h.hexdigest()[:12]


class Answers(dict):
    """Case name -> hash, keeping each case's raw arrays (every array hashed since the previous
    case) in ``arrays`` for ``--save``."""

    def __init__(self):
        super().__init__()
        self.arrays: dict[str, list[np.ndarray]] = {}

    def __setitem__(self, name, value):
        super().__setitem__(name, value)
        self.arrays[name] = list(_hashed)
        _hashed.clear()


def save(answers: Answers, path: str) -> None:
    """Write every case's arrays to ``path`` (.npz), keys "<case>|<index>"."""
    np.savez_compressed(path, **{f"{name}|{k}": a for name, arrays in answers.arrays.items()
                                 for k, a in enumerate(arrays)})


def load(path: str) -> dict[str, list[np.ndarray]]:
    """The arrays ``save`` wrote to ``path``: case name -> its arrays in order."""
    stored: dict[str, list] = {}
    with np.load(path) as f:
        for key in f.files:
            name, k = key.rsplit("|", 1)
            stored.setdefault(name, []).append((int(k), f[key]))
    return {name: [a for _, a in sorted(pairs, key=lambda t: t[0])] for name, pairs in stored.items()}


def compare(arrays: dict[str, list[np.ndarray]], path: str) -> None:
    """Print, per case, how ``arrays`` (case name -> arrays, as ``Answers.arrays``) differ from
    those stored in ``path`` (module docstring)."""
    stored = load(path)
    print(f"\n{'case':40s} comparison with {path}")
    counts = {"identical": 0, "differ": 0}
    for name, new in arrays.items():
        if name not in stored:
            print(f"{name:40s} not stored")
            continue
        old = stored[name]
        if len(old) != len(new) or any(a.shape != b.shape for a, b in zip(old, new)):
            print(f"{name:40s} different shapes")
            counts["differ"] += 1
            continue
        if all(np.array_equal(a, b) for a, b in zip(old, new)):
            counts["identical"] += 1
            print(f"{name:40s} identical")
            continue
        counts["differ"] += 1
        # every case hashes its positions (an arm: its joint angles) first: their size is the scale
        scale = max(float(np.abs(old[0]).max()), 1e-300)
        worst = 0.0
        changed = 0
        for a, b in zip(old, new):
            if a.dtype.kind != "f":  # statuses and codes: entries changed
                changed += int(np.count_nonzero(a != b))
                continue
            # iterations are stored beside errors in float arrays: an integer-valued entry that
            # changed by 1 or more is an iteration count, not rounding
            whole = (a == np.round(a)) & (b == np.round(b)) & (np.abs(a - b) >= 1)
            changed += int(np.count_nonzero(whole))
            d = np.abs(a - b)[~whole]
            if d.size:
                worst = max(worst, float(np.nanmax(d)))
        print(f"{name:40s} max |diff| / scale {worst / scale:.1e} (scale {scale:.3g})"
              + (f", {changed} integer entries changed" if changed else ""))
    print(f"{counts['identical']} cases identical, {counts['differ']} differ")


def chain_entry_cases(out: dict) -> None:
    """Cases through every compiled chain entry point (``fabrik.kernels.rotation_chain``,
    ``fabrik_constrained``, ``batch``, ``fabrik_chain_options``), 8 seeded targets each: every
    Jacobian mode with its options; CCD, FABRIK and DLS with limits on a 3D and a 2D chain, with
    and without oriented targets; the chain batch in each layout, with per-target starts and roots,
    and with limits and rotations; poles and obstacles, plain and limited, 3D and 2D. The hashes
    cover positions, iterations and errors (and limited answers' frames)."""
    from scipy.spatial.transform import Rotation

    from fabrik.constraints import Hinge
    from fabrik.obstacles import Box, Sphere

    def solved(sol):
        more = [sol.extras["frames"]] if sol.extras and "frames" in sol.extras else []
        return [sol.positions, np.array([sol.iterations, sol.error])] + more

    def each(model, targets, **kw):
        return digest(*[a for t in targets for a in solved(fabrik.solve(model, t, **kw))])

    rng = np.random.default_rng(39)
    chain = fabrik.Chain.straight(7)
    flat = fabrik.Chain.straight(6, dim=2)
    targets = rng.uniform(-4, 4, (8, 3))
    flat_targets = rng.uniform(-3.5, 3.5, (8, 2))
    rotations = Rotation.random(8, random_state=39).as_matrix()
    for method, opts in (("jacobian-transpose", {}), ("jacobian-transpose", {"alpha": 0.02}),
                         ("jacobian-svd-dls", {"damping": 0.5, "max_error_step": 0.7}),
                         ("sdls", {"max_angle_step": 0.3}), ("jacobian-dls-tuned", {})):
        name = method + "".join(f" {k}={v}" for k, v in opts.items())
        out[f"chain {name}"] = each(chain, targets, method=method, max_iter=400, **opts)
    out["flat chain ccd, dls"] = f"{each(flat, flat_targets, method='ccd')} " \
                                 f"{each(flat, flat_targets, method='jacobian-dls', max_iter=400)}"
    cones = chain.with_constraints({i: Cone(0.6, 0.6, 0.6, 0.6) for i in range(1, 6)})
    hinges = flat.with_constraints({i: Hinge((0, 0, 1), -0.9, 0.7) for i in range(5)})
    for name, model, points in (("cones", cones, targets), ("flat hinges", hinges, flat_targets)):
        out[f"limited {name} fabrik, ccd"] = f"{each(model, points)} {each(model, points, method='ccd')}"
        out[f"limited {name} dls, sdls"] = (f"{each(model, points, method='jacobian-dls', max_iter=400)} "
                                            f"{each(model, points, method='sdls-tuned', max_iter=400)}")
    poses = [(t, r) for t, r in zip(targets, rotations)]
    out["limited oriented fabrik, ccd"] = f"{each(cones, poses)} {each(cones, poses, method='ccd', max_iter=300)}"
    many = rng.uniform(-4, 4, (300, 3))
    starts = np.stack([chain.rest_positions] * 300) + rng.normal(0, 0.05, (300, 7, 3))
    roots = rng.normal(0, 0.2, (300, 3))
    for layout in ("lockstep", "per-thread", "baseline"):
        a = fabrik.solve_batch(chain, many, layout=layout)
        b = fabrik.solve_batch(chain, many, initial=starts, root=roots, layout=layout, max_iter=40)
        out[f"chain batch {layout}"] = digest(a.positions, a.iterations, a.error, a.status, b.positions,
                                              b.iterations, b.error, b.status)
    a = fabrik.solve_batch(cones, many[:40], max_iter=200)
    b = fabrik.solve_batch(cones, (targets, rotations), initial=starts[:8], root=roots[:8])
    c = fabrik.solve_batch(hinges, flat_targets)
    out["limited batch"] = digest(*[x for r in (a, b, c) for x in (r.positions, r.frames, r.iterations, r.error,
                                                                   r.status)], b.orientation_error)
    ball = Sphere([0.5, 2.5, 0.3], 0.6)
    wall = Box([1.5, 1.5, 0.0], [0.1, 2.0, 2.0])
    out["chain pole, obstacles"] = (f"{each(chain, targets, pole=[2.0, 1.0, 1.0])} "
                                    f"{each(chain, targets, obstacles=[ball, wall])} "
                                    f"{each(chain, targets, pole=[-1.0, 2.0, 0.5], obstacles=[ball])}")
    out["limited pole, obstacles"] = (f"{each(cones, targets, pole=[2.0, 1.0, 1.0], max_iter=200)} "
                                      f"{each(cones, targets, obstacles=[ball, wall], max_iter=200)} "
                                      f"{each(cones, poses[:4], obstacles=[ball], max_iter=200)}")
    disc = Sphere([0.3, 2.0, 0.0], 0.5)
    out["flat obstacles"] = (f"{each(flat, flat_targets, obstacles=[disc])} "
                             f"{each(hinges, flat_targets, obstacles=[disc])}")


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
    parser.add_argument("--save", metavar="FILE.npz", help="store every case's raw arrays")
    parser.add_argument("--compare", metavar="FILE.npz", help="compare the raw arrays with those stored by --save")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    out = Answers()
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
    chain_entry_cases(out)
    tree_entry_cases(out)
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
    if args.save:
        save(out, args.save)
    if args.compare:
        compare(out.arrays, args.compare)


if __name__ == "__main__":
    main()
