"""How much of a take's reconstruction error is drift: each method's pooled median inner-joint
error (fraction of the height) when every frame starts from the method's own answer for the
frame before (tracking, as ``fabrik reconstruct`` runs), and when it starts from the recorded
frame before (no drift can build up).

    .venv/bin/python benchmarks/tracking_drift.py ../shared/data/mocap/climb/climb_0.bvh   # 10 s

Runs on the take's body (``fabrik.mocap.prepare_take``) with its default effectors and root,
``tol`` 1e-3 of the height, the reconstruction's settings (``reach_step`` for FABRIK).
"""

from __future__ import annotations

import sys

import numpy as np

import fabrik
from fabrik.mocap import default_effectors, evaluated_joints, prepare_take

METHODS = {"fabrik": {"reach_step": True}, "jacobian-dls": {}}


def main(path: str) -> None:
    skeleton, motion = fabrik.load_motion(path)
    take = prepare_take(skeleton, motion)
    body, truth = take.body, take.body_positions
    eff = default_effectors(body)
    inner = evaluated_joints(body, eff)
    height = body.height()
    names = [body.names[j] for j in eff]
    print(f"{path}: {truth.shape[0]} frames, {len(eff)} effectors, {len(inner)} evaluated joints")
    print(f"{'method':<14}{'tracking':>10}{'from recorded':>15}")
    for method, options in METHODS.items():
        paths = {name: truth[:, j] for name, j in zip(names, eff)}
        tracked = fabrik.solve_sequence(body, paths, initial=truth[0], root=truth[:, 0], method=method,
                                        tol=1e-3 * height, **options).positions
        fresh = np.empty_like(truth)
        fresh[0] = tracked[0]
        for f in range(1, truth.shape[0]):
            fresh[f] = fabrik.solve(body, targets=dict(zip(names, truth[f, eff])), initial=truth[f - 1],
                                    root=truth[f, 0], method=method, tol=1e-3 * height, **options).positions
        errors = [np.median(np.linalg.norm(p[:, inner] - truth[:, inner], axis=2)) / height for p in (tracked, fresh)]
        print(f"{method:<14}{errors[0]:>10.5f}{errors[1]:>15.5f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/mocap/climb/climb_0.bvh")
