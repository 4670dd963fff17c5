"""Pole targets (issue 42, item 1): random reachable two-bone and three-bone targets with a random
pole, and a pole moving round a two-bone limb.

    PYTHONPATH=src python benchmarks/engine_poles.py --cases 10000 --json fabrik-out/engine_poles.json

For each case: a chain of 2 (or 3) bones of random lengths in [0.5, 1.5], a target at a random
direction and distance between 0.05 of the reach beyond the inner reach and 0.95 of the reach,
a pole drawn around the root (N(0, reach) per axis) at least 0.05 of the reach off the
root-target line; ``fabrik.solve(chain, target, pole=pole, tol=1e-10 * reach)``. Counted: solves
reached; the pole joint (``n // 2``) on the pole's side of the root-target line (its offset from
that line has a positive component along the pole's); for two bones, its distance from the plane
through root, target and pole (largest, as a fraction of the reach). Tracking: the pole goes
round the root-target line in 240 steps (``--turns`` times), each solve started from the last
answer; a flip is a step in which the elbow's angle about the line changes by more than twice
the pole's step.

``--ablation`` also runs a NumPy FABRIK whose pole step is only the turn between the pole joint's
neighbours (without the turn between the chain's ends), on 500 three-bone cases: how often it
leaves the pole joint on the wrong side (why the kernel makes both turns).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

import fabrik


def case(rng, bones):
    lengths = rng.uniform(0.5, 1.5, bones)
    points = np.zeros((bones + 1, 3))
    points[1:, 1] = np.cumsum(lengths)
    total = float(lengths.sum())
    inner = max(0.0, 2 * float(lengths.max()) - total)
    while True:
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        target = rng.uniform(inner + 0.05 * total, 0.95 * total) * d
        pole = rng.normal(0, total, 3)
        if np.linalg.norm(pole - (pole @ d) * d) > 0.05 * total:
            return fabrik.Chain.from_positions(points), target, pole, total


def side_plane(p, k, target, pole):
    u = target / np.linalg.norm(target)
    joint = p[k] - (p[k] @ u) * u
    w = pole - (pole @ u) * u
    w /= np.linalg.norm(w)
    return float(joint @ w), float(abs(p[k] @ np.cross(u, w)))


def run_cases(cases: int, bones: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    reached = right_side = 0
    worst_plane = 0.0
    worst_iterations = 0
    t0 = time.perf_counter()
    for _ in range(cases):
        chain, target, pole, total = case(rng, bones)
        sol = fabrik.solve(chain, target, pole=pole, tol=1e-10 * total)
        reached += sol.reached
        along, off = side_plane(sol.positions, chain.n_joints // 2, target, pole)
        right_side += along > 0.0
        if bones == 2:
            worst_plane = max(worst_plane, off / total)
        worst_iterations = max(worst_iterations, sol.iterations)
    return {"bones": bones, "cases": cases, "reached": reached, "pole_side": right_side,
            "largest_plane_distance_over_reach": worst_plane if bones == 2 else None,
            "most_iterations": worst_iterations, "seconds": time.perf_counter() - t0}


def run_tracking(turns: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    flips = steps = 0
    for _ in range(turns):
        chain, target, _, total = case(rng, 2)
        u = target / np.linalg.norm(target)
        e1 = np.cross(u, [0.0, 0.0, 1.0] if abs(u[2]) < 0.9 else [1.0, 0.0, 0.0])
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(u, e1)
        previous, last = None, None
        radius = rng.uniform(0.2, 2.0) * total
        for t in np.linspace(0.0, 2 * math.pi, 241):
            pole = rng.uniform(0.0, 1.0) * target + radius * (math.cos(t) * e1 + math.sin(t) * e2)
            sol = fabrik.solve(chain, target, pole=pole, initial=previous, tol=1e-10 * total)
            previous = sol.positions
            elbow = sol.positions[1] - (sol.positions[1] @ u) * u
            angle = math.atan2(elbow @ e2, elbow @ e1)
            if last is not None:
                steps += 1
                flips += abs(math.remainder(angle - last, 2 * math.pi)) > 2 * (2 * math.pi / 240)
            last = angle
    return {"turns": turns, "steps": steps, "flips": flips}


def ablation(cases: int, seed: int) -> dict:
    """NumPy FABRIK on three bones with only the neighbours' turn as the pole step."""
    rng = np.random.default_rng(seed)
    wrong = 0
    for _ in range(cases):
        chain, target, pole, total = case(rng, 3)
        L = np.asarray(chain.bone_lengths)
        p = np.array(chain.rest_positions)
        k = 2
        for _ in range(2000):
            p[-1] = target
            for i in range(2, -1, -1):
                d = p[i] - p[i + 1]
                p[i] = p[i + 1] + L[i] * d / np.linalg.norm(d)
            p[0] = 0.0
            for i in range(1, 4):
                d = p[i] - p[i - 1]
                p[i] = p[i - 1] + L[i - 1] * d / np.linalg.norm(d)
            a, b = p[k - 1], p[k + 1]
            u = (b - a) / np.linalg.norm(b - a)
            vk = p[k] - a - ((p[k] - a) @ u) * u
            vp = pole - a - ((pole - a) @ u) * u
            if np.linalg.norm(vk) > 1e-12 and np.linalg.norm(vp) > 1e-12:
                p[k] = a + ((p[k] - a) @ u) * u + np.linalg.norm(vk) * vp / np.linalg.norm(vp)
            if np.linalg.norm(p[-1] - target) < 1e-9 * total:
                break
        wrong += side_plane(p, k, target, pole)[0] <= 0.0
    return {"cases": cases, "wrong_side_with_the_neighbours_turn_only": wrong}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10000)
    parser.add_argument("--turns", type=int, default=100, help="tracking: poles going round a limb")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--ablation", action="store_true")
    parser.add_argument("--json", help="write the counts here")
    args = parser.parse_args(argv)
    out = {"two_bones": run_cases(args.cases, 2, args.seed), "three_bones": run_cases(args.cases, 3, args.seed + 1),
           "tracking": run_tracking(args.turns, args.seed + 2)}
    if args.ablation:
        out["ablation"] = ablation(500, args.seed + 3)
    for key, value in out.items():
        print(key, value)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
