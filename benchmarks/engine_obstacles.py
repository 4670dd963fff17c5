"""Obstacles (issue 42, item 3): random scenes of chains and of the humanoid with 1-20 obstacles.

    PYTHONPATH=src python benchmarks/engine_obstacles.py --cases 10000 --json fabrik-out/engine_obstacles.json

Chains: 3-10 bones of random lengths in [0.5, 1.5] from the origin; 1-20 obstacles (spheres,
capsules, turned boxes, half spaces; sizes 0.05-0.25 of the reach) around the chain, none within
0.02 of the reach of the root. Two kinds of target, half the scenes each:

* witnessed: a random pose of the chain (bone directions drawn at random) and obstacles drawn
  until none touches it; the target is that pose's effector, so some pose reaches it around the
  obstacles;
* random: a target drawn in the reach ball (between 0.1 and 1.0 of the reach from the root);
  whether it can be reached around the obstacles is decided by the sampling reference: up to 16
  starts (random collision-free poses), from each up to 100 sweeps of CCD whose every turn is
  halved (up to 6 times) until the chain it moves keeps clear, stopping at the first start that
  reaches the target. Targets inside an obstacle count as not reachable.

The humanoid (``models.humanoid``, 1.75 m): a random pose (both wrists, the head and both ankles
moved from rest by N(0, 0.15 m) per axis and solved there), obstacles drawn until none touches
it (none within 0.1 m of the pelvis); its five effectors' places are the targets, solved from the
rest pose.

Each scene is solved by ``fabrik.solve(..., obstacles=...)`` at tol 1e-3 of the reach (height)
and without the obstacles. Reported: the deepest penetration of a bone over all scenes (as a
fraction of the reach); the fraction of witnessed targets reached; for random targets, how many
the reference reached, how many FABRIK reached, and the ones each reached that the other did
not; statuses; median and 90th percentile solve times with and without obstacles.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import numpy as np
from numba import njit
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.kernels.obstacles import segment_clearance
from fabrik.obstacles import Box, Capsule, HalfSpace, Sphere, pack, penetration, signed_distance


def random_obstacle(rng, centre, spread, size, avoid, clear):
    kind = rng.integers(4)
    c = centre + rng.uniform(-spread, spread, 3)
    r = rng.uniform(0.2, 1.0) * size
    if kind == 0:
        return Sphere(c, r)
    if kind == 1:
        return Capsule(c, c + rng.normal(0, size, 3), 0.5 * r)
    if kind == 2:
        return Box(c, rng.uniform(0.2, 1.0, 3) * size, Rotation.random(random_state=rng))
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    return HalfSpace(avoid - (clear + rng.uniform(0.5, 1.5) * spread) * n, n)


def obstacles_clear_of(rng, count, centre, spread, size, pose, parents, avoid, clear):
    """``count`` obstacles none of which touches the pose (``penetration`` 0 with a margin) or comes
    within ``clear`` of ``avoid``; at most 200 draws per obstacle."""
    out = []
    for _ in range(200 * count):
        if len(out) == count:
            break
        ob = random_obstacle(rng, centre, spread, size, avoid, clear)
        if signed_distance([ob], avoid) <= clear:
            continue
        if pose is not None and penetration([ob], pose, parents, radius=1e-3 * size) > 0.0:
            continue
        out.append(ob)
    return out


@njit(cache=False)
def _chain_clear(obs, p, first):
    for i in range(max(first, 1), p.shape[0]):
        if segment_clearance(obs, p[i - 1, 0], p[i - 1, 1], p[i - 1, 2], p[i, 0], p[i, 1], p[i, 2], 0.0) < 0.0:
            return False
    return True


@njit(cache=False)
def reference(obs, lengths, target, tol, starts, sweeps, seed):
    """The sampling reference (module docstring): True when some start's collision-checked CCD
    reaches ``target`` within ``tol``."""
    np.random.seed(seed)
    n = lengths.shape[0] + 1
    p = np.zeros((n, 3))
    trial = np.zeros((n, 3))
    for s in range(starts):
        found = False
        for _ in range(100):
            for i in range(1, n):
                d = np.random.normal(0.0, 1.0, 3)
                d /= np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
                p[i] = p[i - 1] + lengths[i - 1] * d
            if _chain_clear(obs, p, 1):
                found = True
                break
        if not found:
            continue
        for _ in range(sweeps):
            for j in range(n - 2, -1, -1):
                a = p[n - 1] - p[j]
                b = target - p[j]
                na = np.sqrt(a @ a)
                nb = np.sqrt(b @ b)
                if na < 1e-12 or nb < 1e-12:
                    continue
                a /= na
                b /= nb
                axis = np.cross(a, b)
                sn = np.sqrt(axis @ axis)
                cs = a @ b
                if sn < 1e-14:
                    continue
                axis /= sn
                angle = np.arctan2(sn, cs)
                for _half in range(7):
                    c, si = np.cos(angle), np.sin(angle)
                    for i in range(j + 1, n):
                        v = p[i] - p[j]
                        trial[i] = p[j] + v * c + np.cross(axis, v) * si + axis * (axis @ v) * (1.0 - c)
                    for i in range(j + 1):
                        trial[i] = p[i]
                    if _chain_clear(obs, trial, j + 1):
                        p[:] = trial
                        break
                    angle *= 0.5
            e = p[n - 1] - target
            if np.sqrt(e @ e) <= tol:
                return True
    return False


def chain_scene(rng, witnessed: bool):
    bones = int(rng.integers(3, 11))
    lengths = rng.uniform(0.5, 1.5, bones)
    reach = float(lengths.sum())
    points = np.zeros((bones + 1, 3))
    points[1:, 1] = np.cumsum(lengths)
    chain = fabrik.Chain.from_positions(points)
    count = int(rng.integers(1, 21))
    if witnessed:
        pose = np.zeros((bones + 1, 3))
        for i in range(bones):
            d = rng.normal(size=3)
            pose[i + 1] = pose[i] + lengths[i] * d / np.linalg.norm(d)
        centre = pose.mean(axis=0)
        obstacles = obstacles_clear_of(rng, count, centre, 0.6 * reach, 0.25 * reach, pose, None, np.zeros(3),
                                       0.02 * reach)
        target = pose[-1]
    else:
        obstacles = obstacles_clear_of(rng, count, np.zeros(3), 0.6 * reach, 0.25 * reach, None, None, np.zeros(3),
                                       0.02 * reach)
        d = rng.normal(size=3)
        target = rng.uniform(0.1, 1.0) * reach * d / np.linalg.norm(d)
    return chain, obstacles, target, reach


BODY = fabrik.models.humanoid()
REST = BODY.rest_positions()
EFFECTORS = ("head", "l_wrist", "r_wrist", "l_ankle", "r_ankle")


def body_scene(rng):
    targets = {name: REST[BODY.index(name)] + rng.normal(0, 0.15, 3) for name in EFFECTORS}
    pose = fabrik.solve(BODY, targets=targets).positions
    count = int(rng.integers(1, 21))
    obstacles = obstacles_clear_of(rng, count, pose.mean(axis=0), 0.8, 0.2, pose, BODY.parents, REST[0], 0.1)
    return obstacles, {name: pose[BODY.index(name)] for name in EFFECTORS}


def timed(function):
    t0 = time.perf_counter()
    out = function()
    return out, time.perf_counter() - t0


def run_chains(cases: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    deepest = 0.0
    stats = {"witnessed": Counter(), "random": Counter()}
    with_t, without_t = [], []
    reference_seconds = 0.0
    for k in range(cases):
        witnessed = k % 2 == 0
        chain, obstacles, target, reach = chain_scene(rng, witnessed)
        tol = 1e-3 * reach
        sol, t = timed(lambda: fabrik.solve(chain, target, obstacles=obstacles, tol=tol))
        with_t.append(t)
        free, t = timed(lambda: fabrik.solve(chain, target, tol=tol))
        without_t.append(t)
        deepest = max(deepest, penetration(obstacles, sol.positions) / reach)
        kind = "witnessed" if witnessed else "random"
        stats[kind]["scenes"] += 1
        stats[kind][f"status {sol.status}"] += 1
        stats[kind]["fabrik reached"] += sol.reached
        if not witnessed:
            inside = bool(signed_distance(obstacles, target) < 0.0)
            if inside:
                ref = False
            else:
                ref, t = timed(lambda: reference(pack(obstacles), np.asarray(chain.bone_lengths), target, tol, 16, 100,
                                                 k))
                reference_seconds += t
            stats[kind]["reference reached"] += ref
            stats[kind]["fabrik only"] += sol.reached and not ref
            stats[kind]["reference only"] += ref and not sol.reached
    return {"scenes": cases, "deepest_penetration_over_reach": deepest,
            **{kind: dict(c) for kind, c in stats.items()}, "times_us": _times(with_t, without_t),
            "reference_seconds": reference_seconds}


def run_bodies(cases: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    deepest = 0.0
    stats = Counter()
    with_t, without_t = [], []
    height = 1.75
    for _ in range(cases):
        obstacles, targets = body_scene(rng)
        sol, t = timed(lambda: fabrik.solve(BODY, targets=targets, obstacles=obstacles, tol=1e-3 * height))
        with_t.append(t)
        _, t = timed(lambda: fabrik.solve(BODY, targets=targets, tol=1e-3 * height))
        without_t.append(t)
        deepest = max(deepest, penetration(obstacles, sol.positions, BODY.parents) / height)
        stats["scenes"] += 1
        stats[f"status {sol.status}"] += 1
        stats["fabrik reached"] += sol.reached
    return {"scenes": cases, "deepest_penetration_over_height": deepest, **dict(stats),
            "times_us": _times(with_t, without_t)}


def _times(with_t, without_t) -> dict:
    w, wo = np.array(with_t) * 1e6, np.array(without_t) * 1e6
    return {"with_median": float(np.median(w)), "with_p90": float(np.percentile(w, 90)),
            "without_median": float(np.median(wo)), "without_p90": float(np.percentile(wo, 90))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10000, help="scenes of each model")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    # first solves compile: not timed
    fabrik.solve(fabrik.Chain.straight(3), [1.0, 1.0, 0.0], obstacles=[Sphere([5, 5, 5], 1.0)])
    fabrik.solve(BODY, targets={"head": REST[2]}, obstacles=[Sphere([5, 5, 5], 1.0)])
    reference(pack([Sphere([5, 5, 5], 1.0)]), np.ones(2), np.array([1.0, 1.0, 0.0]), 1e-3, 1, 1, 0)
    out = {"chains": run_chains(args.cases, args.seed), "humanoid": run_bodies(args.cases, args.seed + 1)}
    for key, value in out.items():
        print(key, json.dumps(value, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
