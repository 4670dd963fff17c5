"""Effector weights (issue 42, item 2): random pairs of conflicting targets on ``models.y_shape``,
per weight ratio, and weight 0 against the effector removed on the humanoid.

    PYTHONPATH=src python benchmarks/engine_weights.py --cases 1000 --json fabrik-out/engine_weights.json

A conflicting pair: a fork place s drawn within 2.5 of the root (the trunk, three 1-unit bones,
reaches it slack), a random direction u and a shortfall D in [0.1, 2]; the targets lie on the
line through s along u, ``3 + r_left`` and ``3 + r_right`` from s (each branch is three 1-unit
bones), ``r_left = D w_right / (w_left + w_right)`` and ``r_right = D w_left / (...)``: the
residuals at which the weighted centroid balances (``w_left r_left = w_right r_right``). Solved
with ``weights={"left_tip": ratio, "right_tip": 1}``, the paper's free sub-bases
(``rigid_sub_bases=False, swing_limbs=False``) and ``tol=1e-9``; reported per ratio: the largest
relative error of ``r_left / r_right`` against ``1 / ratio``, and how many are within 1e-3. The
same with the default rigid sub-bases (the fork held with its branches' first bones).

Weight 0: random targets on both wrists and the head of ``models.humanoid``; the solve with
``weights={"r_wrist": 0}`` against the solve without the r_wrist target: positions, iterations
and status equal bit for bit.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

import fabrik

RATIOS = (1.0, 2.0, 4.0, 10.0)


def conflict(rng, w_left, w_right):
    s = rng.normal(size=3)
    s *= rng.uniform(0.3, 2.5) / np.linalg.norm(s)
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    D = rng.uniform(0.1, 2.0)
    r_left, r_right = D * w_right / (w_left + w_right), D * w_left / (w_left + w_right)
    return {"left_tip": s + (3.0 + r_left) * u, "right_tip": s - (3.0 + r_right) * u}


def ratios(cases: int, seed: int, paper: bool) -> dict:
    y = fabrik.models.y_shape()
    rng = np.random.default_rng(seed)
    out = {}
    options = {"rigid_sub_bases": False, "swing_limbs": False} if paper else {}
    for ratio in RATIOS:
        worst, within = 0.0, 0
        for _ in range(cases):
            sol = fabrik.solve(y, targets=conflict(rng, ratio, 1.0), weights={"left_tip": ratio, "right_tip": 1.0},
                               tol=1e-9, **options)
            e = sol.effector_errors
            rel = abs(e["left_tip"] / e["right_tip"] * ratio - 1.0)
            worst = max(worst, rel)
            within += rel <= 1e-3
        out[str(ratio)] = {"cases": cases, "within_1e-3": within, "largest_relative_error": worst}
    return out


def weight_zero(cases: int, seed: int) -> dict:
    body = fabrik.models.humanoid()
    rest = body.rest_positions()
    rng = np.random.default_rng(seed)
    equal = 0
    for _ in range(cases):
        targets = {"l_wrist": rest[5] + rng.normal(0, 0.3, 3), "r_wrist": rest[8] + rng.normal(0, 0.3, 3),
                   "head": rest[2] + rng.normal(0, 0.05, 3)}
        off = fabrik.solve(body, targets=targets, weights={"r_wrist": 0.0})
        without = fabrik.solve(body, targets={k: v for k, v in targets.items() if k != "r_wrist"})
        equal += (np.array_equal(off.positions, without.positions) and off.iterations == without.iterations
                  and off.status == without.status)
    return {"cases": cases, "bit_identical": equal}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    out = {"paper_sub_bases": ratios(args.cases, args.seed, True),
           "rigid_sub_bases": ratios(args.cases, args.seed + 1, False),
           "weight_zero": weight_zero(args.cases, args.seed + 2)}
    for key, value in out.items():
        print(key, value)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
