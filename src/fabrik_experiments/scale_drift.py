"""Bone-length drift of the unconstrained chain methods when bones span many decades.

The cases behind ``benchmarks/scale_drift.py`` and docs/conventions.md ("Scale"): random 3D chains
of 2-6 bones with lengths log-uniform over a span of decades, one target at 0.6 of the reach.
"""

from __future__ import annotations

import numpy as np

import fabrik

METHODS = ("fabrik", "ccd", "jacobian-dls", "jacobian-svd-dls", "jacobian-transpose", "sdls", "triangulation")


def random_chain(rng: np.random.Generator, decades: float) -> tuple[fabrik.Chain, np.ndarray]:
    bones = int(rng.integers(2, 7))
    lengths = 10.0 ** rng.uniform(-decades / 2, decades / 2, bones)
    directions = rng.normal(size=(bones, 3))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    positions = np.vstack([np.zeros(3), np.cumsum(directions * lengths[:, None], axis=0)])
    target = rng.normal(size=3)
    target *= 0.6 * lengths.sum() / np.linalg.norm(target)
    return fabrik.Chain.from_positions(positions), target


def run(spans: list[float], chains: int, seed: int = 0) -> list[dict]:
    rows = []
    for decades in spans:
        rng = np.random.default_rng([seed, int(decades * 100)])
        worst = dict.fromkeys(METHODS, 0.0)
        for _ in range(chains):
            chain, target = random_chain(rng, decades)
            for method in METHODS:
                sol = fabrik.solve(chain, target, method=method, max_iter=300)
                lengths = np.linalg.norm(np.diff(sol.positions, axis=0), axis=1)
                # a bone below the rounding of its coordinates may come out of from_positions as 0
                kept = chain.bone_lengths > 0
                drift = float(np.max(np.abs(lengths - chain.bone_lengths)[kept] / chain.bone_lengths[kept]))
                worst[method] = max(worst[method], drift)
        rows.append({"decades": decades, "chains": chains, "max_relative_drift": worst})
    return rows
