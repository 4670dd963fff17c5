"""Whole bodies with finger effectors: the procedural walk with five three-phalanx fingers per hand
(``fabrik_experiments.sample_motion.sample_walk(fingers=True)``) rebuilt from every fingertip,
both toes and the head, per method with and without the humanoid limits; median inner-joint
error as a fraction of the body's height, per joint with ``--joints``.

    python benchmarks/finger_rig.py [--frames N] [--methods fabrik,jacobian-dls,ccd] [--joints]
"""

from __future__ import annotations

import argparse

import numpy as np

from fabrik.mocap import prepare_take, reconstruct_take
from fabrik.mocap.takes import evaluated_joints
from fabrik_experiments.sample_motion import sample_walk


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=240)
    ap.add_argument("--methods", default="fabrik,jacobian-dls,ccd")
    ap.add_argument("--joints", action="store_true", help="print the median error per joint")
    args = ap.parse_args(argv)
    skeleton, motion = sample_walk(n_frames=args.frames, fingers=True)
    take = prepare_take(skeleton, motion)
    body, truth = take.body, take.whole(take.body_positions)
    rows = {}
    for constraints in (None, "humanoid"):
        for method in args.methods.split(","):
            rec = reconstruct_take(skeleton, motion, method=method, constraints=constraints)
            inner = evaluated_joints(body, [body.index(e) for e in rec.effectors])
            err = np.linalg.norm(rec.positions[:, take.joints[inner]] - truth[:, take.joints[inner]], axis=2)
            rows[(rec.method, constraints or "-")] = (err / body.height(), rec, inner)
    print(f"finger walk: {args.frames} frames, {body.n_joints} joints, {len(rec.effectors)} effectors "
          f"(10 fingertips, 2 toes, head), height {body.height():.1f} cm")
    print(f"{'method':26s} {'limits':9s} {'median/h':>9s} {'p95/h':>8s} {'reached':>8s} {'iters':>6s}")
    for (method, limits), (err, rec, _) in rows.items():
        print(f"{method:26s} {limits:9s} {np.median(err):9.5f} {np.percentile(err, 95):8.5f} "
              f"{rec.solution.reached.mean():8.1%} {rec.solution.iterations.mean():6.2f}")
    if args.joints:
        keys = list(rows)
        print(f"{'joint':22s} " + " ".join(f"{m[:14]:>14s}" for m, _ in keys))
        inner = rows[keys[0]][2]
        for a, j in enumerate(inner):
            print(f"{body.names[j]:22s} " + " ".join(f"{np.median(rows[k][0][:, a]):14.4f}" for k in keys))


if __name__ == "__main__":
    main()
