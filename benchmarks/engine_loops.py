"""Closed loops (issue 42, item 4): the humanoid holding a bar in both hands at random poses
within reach.

    PYTHONPATH=src python benchmarks/engine_loops.py --cases 1000 --json fabrik-out/engine_loops.json

A pose within reach, by construction: a witness pose of the body (each wrist's target moved from
rest by N(0, 0.2 m) per axis, head and feet at rest, solved from rest; whatever pose that solve
ends in), the bar (two grips 2h apart) placed through the witness's two wrists (its centre
between them, its axis along them, a random roll about that axis; h the half-distance of the
wrists), and the feet planted where the witness has them. So the witness itself holds the bar
with its feet in place. Then from the rest pose: ``fabrik.solve(body, targets={feet},
loops=[HeldObject(grips, pose=...)], tol=1e-3 m)``; held when the loop error is within tol.
Also: the bar's centre given and its rotation free (``position=``), and the bar free (neither)
with the head moved by N(0, 5 cm) from the witness's. Each with the paper's free sub-bases
(``rigid_sub_bases=False``) and with the default ``"auto"`` (which holds the humanoid's spine and
thighs as one rigid body, so the torso cannot bend towards the bar).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.loops import HeldObject

BODY = fabrik.models.humanoid()
REST = BODY.rest_positions()
FIXED = {"head": REST[2], "l_ankle": REST[10], "r_ankle": REST[12]}


def witness(rng):
    """A pose of the body with its wrists moved at random, and the bar (centre, rotation, half
    length) through its wrists."""
    while True:
        targets = {**FIXED, "l_wrist": REST[5] + rng.normal(0, 0.2, 3), "r_wrist": REST[8] + rng.normal(0, 0.2, 3)}
        pose = fabrik.solve(BODY, targets=targets).positions
        left, right = pose[5], pose[8]
        half = 0.5 * np.linalg.norm(left - right)
        if half > 0.05:
            break
    axis = (left - right) / (2 * half)
    R = Rotation.from_rotvec(rng.uniform(-np.pi, np.pi) * axis).as_matrix() @ \
        Rotation.align_vectors([axis], [[1.0, 0.0, 0.0]])[0].as_matrix()
    return pose, 0.5 * (left + right), R, half


def run(cases: int, seed: int, tol: float) -> dict:
    rng = np.random.default_rng(seed)
    keys = [(kind, sub_bases) for sub_bases in ("free", "auto") for kind in ("pose", "position", "free_bar")]
    out = {f"{kind} {sub_bases}": {"cases": cases, "held": 0, "largest_loop_error": 0.0, "median_ms": 0.0}
           for kind, sub_bases in keys}
    times = {key: [] for key in out}
    for _ in range(cases):
        pose, centre, R, half = witness(rng)
        feet = {"l_ankle": pose[10], "r_ankle": pose[12]}
        head = {"head": pose[2] + rng.normal(0, 0.05, 3)}
        grips = {"l_wrist": [half, 0.0, 0.0], "r_wrist": [-half, 0.0, 0.0]}
        for kind, sub_bases in keys:
            loop, targets = {"pose": (HeldObject(grips, pose=(centre, R)), feet),
                             "position": (HeldObject(grips, position=centre), feet),
                             "free_bar": (HeldObject(grips), {**feet, **head})}[kind]
            key = f"{kind} {sub_bases}"
            t0 = time.perf_counter()
            sol = fabrik.solve(BODY, targets=targets, loops=[loop], tol=tol,
                               rigid_sub_bases=False if sub_bases == "free" else "auto")
            times[key].append(time.perf_counter() - t0)
            err = float(sol.extras["loop_errors"].max())
            out[key]["held"] += err <= tol
            out[key]["largest_loop_error"] = max(out[key]["largest_loop_error"], err)
    for key in out:
        out[key]["median_ms"] = 1e3 * float(np.median(times[key]))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    out = run(args.cases, args.seed, args.tol)
    for key, value in out.items():
        print(key, value)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
