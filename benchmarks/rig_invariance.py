"""Invariance sweep (issue 29): ``fabrik reconstruct`` (plain and ``--constraints humanoid``, with
``--out``) on the same motion exported as other rigs would export it
(``fabrik_experiments.rig_variants``), against the original take.

Per variant: the plain and limited medians of the inner-joint error (fractions of the height),
the limited run's reached fraction, and on the written file, read back by the independent reader
bvhio: the largest limit excess (radians) and the largest second/first singular value ratio of a
hinge joint's rotation vectors (0 for a hinge turning about one axis).

    PYTHONPATH=src python benchmarks/rig_invariance.py [--take 1] [--frames ::10] [--variants a,b]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fabrik.io.bvh import load_bvh  # noqa: E402
from fabrik_experiments import rig_variants as rv  # noqa: E402
from fabrik_experiments.reconstruction import reconstruct_file  # noqa: E402

MOCAP = ROOT.parent / "shared" / "data" / "mocap"


def variants(skeleton, motion):
    """name -> (skeleton, motion) of the same motion, and the original."""
    up = np.array([0.0, 1.0, 0.0])
    out = {"original": (skeleton, motion)}
    for label, table in (("mixamo", rv.MIXAMO), ("blender", rv.BLENDER), ("smpl", rv.SMPL), ("unity", rv.UNITY),
                         ("biped", rv.BIPED)):
        out[f"names {label}"] = rv.renamed(skeleton, motion, rv.mirrored_names(table))
    out["z-up"] = rv.rotated(skeleton, motion, rv.Z_UP)
    out["turned 37 deg"] = rv.rotated(skeleton, motion, rv.about_up(37.0, up))
    out["turned 5 deg"] = rv.rotated(skeleton, motion, rv.about_up(5.0, up))
    out["z-up turned 120 deg"] = rv.rotated(skeleton, motion, rv.Z_UP @ rv.about_up(120.0, up))
    out["cm x100"] = rv.rotated(skeleton, motion, np.eye(3), 100.0)
    out["euler orders"] = rv.reordered(skeleton, motion)
    out["position channels"] = rv.position_channels(skeleton, motion, 1e-6)
    out["a-pose rest"] = rv.a_pose(skeleton, motion, arms=40.0, knees=0.0, elbows=0.0)
    out["bent rest"] = rv.a_pose(skeleton, motion, arms=40.0, knees=15.0, elbows=20.0)
    out["dummies"] = rv.with_dummies(skeleton, motion, above=("LeftHip", "RightShoulder", "Chest"),
                                     carriers=("LeftKnee", "RightElbow"), tips=True)
    out["dummy tips"] = rv.with_dummies(skeleton, motion, tips=True)
    out["dummy above"] = rv.with_dummies(skeleton, motion, above=("LeftHip", "RightShoulder", "Chest"), tips=False)
    out["dummy carriers"] = rv.with_dummies(skeleton, motion, carriers=("LeftKnee", "RightElbow"), tips=False)
    s, m = rv.renamed(skeleton, motion, rv.mirrored_names(rv.BLENDER))
    s, m = rv.rotated(s, m, rv.Z_UP @ rv.about_up(-70.0, up), 100.0)
    out["all: blender z-up cm orders pos"] = rv.position_channels(*rv.reordered(s, m), 1e-6)
    return out


def measure(path: Path, frames: str | None, out: Path) -> dict:
    from test_limited_export import bvhio_local_rotations, file_limit_report

    report, skeleton, motion = reconstruct_file(path, methods=["fabrik"], frames=frames, constraints="humanoid",
                                                out=out)
    plain, limited = report.result("fabrik"), report.result("fabrik-constrained")
    local = bvhio_local_rotations(out, list(skeleton.names))
    worst, ratios = file_limit_report(limited.solved_skeleton, local, list(skeleton.names))
    hinges = sorted(ratios)
    return dict(plain=plain.median_error_rel, limited=limited.median_error_rel,
                plain_reached=plain.reached_fraction, reached=limited.reached_fraction,
                violation=limited.max_limit_violation, file_excess=worst,
                hinge_ratio=max(ratios.values()) if ratios else float("nan"), hinges=hinges,
                limited_joints=len(limited.solved_skeleton.constraints), unplaced=len(report.unplaced),
                height=report.skeleton_height, out_miss=report.out_max_error / report.skeleton_height)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--take", default="1")
    ap.add_argument("--frames", default="::10")
    ap.add_argument("--variants", default=None)
    args = ap.parse_args()
    skeleton, motion = load_bvh(MOCAP / f"cmu_131_0{args.take}.bvh")
    table = variants(skeleton, motion)
    wanted = None if args.variants is None else {"original", *args.variants.split(",")}
    print(f"take cmu_131_0{args.take}.bvh --frames {args.frames}")
    print(f"{'variant':34s} {'plain med':>10s} {'lim med':>10s} {'reached':>8s} {'viol':>9s} {'file exc':>9s} "
          f"{'hinge ax':>9s} {'#lim':>4s} {'#unpl':>5s} {'out miss':>9s} hinges")
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, (s, m) in table.items():
            if wanted is not None and name not in wanted:
                continue
            src = Path(tmp) / f"{name.replace(' ', '_').replace(':', '')}.bvh"
            rv.save(src, s, m)
            t0 = time.process_time()
            try:
                r = measure(src, args.frames, Path(tmp) / f"out_{src.name}")
            except Exception as exc:  # a variant that breaks is a finding, reported as a row
                print(f"{name:34s} FAILED: {type(exc).__name__}: {exc}")
                continue
            base = base or r
            print(f"{name:34s} {r['plain']:10.6f} {r['limited']:10.6f} {r['reached']:8.3f} {r['violation']:9.2e} "
                  f"{r['file_excess']:9.2e} {r['hinge_ratio']:9.2e} {r['limited_joints']:4d} {r['unplaced']:5d} "
                  f"{r['out_miss']:9.2e} {','.join(r['hinges'])}  [{time.process_time() - t0:.0f}s]")
            if r is not base:
                print(f"{'':34s} {r['plain'] / base['plain'] - 1:+10.2e} {r['limited'] / base['limited'] - 1:+10.2e}"
                      f" {r['reached'] - base['reached']:+8.3f}  (relative to the original)")


if __name__ == "__main__":
    main()
