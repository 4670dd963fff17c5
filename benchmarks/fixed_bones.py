"""How far fixed bones stay within, and stretching bones beyond, the tolerance ``prepare_take``
draws from a file's printed digits (issue 45).

    .venv/bin/python benchmarks/fixed_bones.py [--frames 240] [--stretch 0.01] [--json PATH]

Every take in ``../shared/data/mocap`` (its first ``--frames`` frames) is written as Blender
writes a take (``fabrik_experiments.blender_style``: position channels on every joint, from the
world positions rounded to the printed precision) in each printing: 6, 7 and 9 significant
digits, 6 decimals (Blender's ``%.6f``), and 6 decimals and 9 digits from float32 world
positions. For each, ``fixed``: the largest ratio, over the joints inside the body, of how far
a joint's channel values spread over the frames to the spread allowed (under 1: every bone is
read as fixed); ``stretched``: the same file with every bone grown by ``--stretch`` over the take,
the smallest such ratio among the stretched bones (over 1: every one of them is refused on its
own). The joint of the bandai2 takes that carries the body (``Hips``, moving under a still
``joint_Root``) is left out: it is the body's root, not a bone.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from fabrik.io.bvh import load_bvh
from fabrik.mocap.takes import _fixed_bone_tolerances, prepare_take
from fabrik_experiments.blender_style import write_blender_style

ROOT = Path(__file__).resolve().parents[1]
MOCAP = ROOT.parent / "shared" / "data" / "mocap"
PRINTINGS = {"6 digits": (6, False, False), "7 digits": (7, False, False), "9 digits": (9, False, False),
             "6 decimals": (6, True, False), "6 decimals f32": (6, True, True), "9 digits f32": (9, False, True)}


def spread_ratios(path: Path) -> tuple[np.ndarray, list[int]]:
    """(n,) each joint's largest spread over the frames as a fraction of its tolerance, and the
    joints inside the body other than its root (``prepare_take``'s body)."""
    skeleton, motion = load_bvh(path)
    local = motion.local_translations(skeleton)
    tol = _fixed_bone_tolerances(skeleton, motion, motion.world_positions(skeleton))
    ratio = ((local.max(axis=0) - local.min(axis=0)) / np.maximum(tol.span, 1e-300)).max(axis=1)
    try:
        joints = prepare_take(skeleton, motion).joints[1:].tolist()
    except ValueError:  # a stretched take: its body is the file's skeleton, as in the original
        joints = list(range(1, skeleton.n_joints))
    return ratio, joints


def main(frames: int = 240, stretch: float = 0.01, json_path: Path | None = None) -> dict:
    takes = sorted(MOCAP.rglob("*.bvh"))
    if not takes:
        raise SystemExit(f"no takes in {MOCAP}")
    rows = {}
    print(f"{'take: fixed / stretched ratio':<35}" + "".join(f"{k:>16}" for k in PRINTINGS))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "take.bvh"
        for take in takes:
            skeleton, motion = load_bvh(take)
            motion = motion.frames(0, frames)
            body = prepare_take(skeleton, motion).joints[1:]
            bones = [skeleton.names[j] for j in body if skeleton.bone_lengths[j] > 0
                     and j not in motion.layout.end_sites]
            row = {}
            for label, (digits, fixed, f32) in PRINTINGS.items():
                ratio, _ = spread_ratios(write_blender_style(out, skeleton, motion, digits=digits, fixed=fixed,
                                                             float32=f32))
                grown, _ = spread_ratios(write_blender_style(out, skeleton, motion, digits=digits, fixed=fixed,
                                                             float32=f32, stretch={b: stretch for b in bones}))
                weakest = min(bones, key=lambda b: grown[skeleton.index(b)])
                row[label] = {"fixed": float(ratio[body].max()), "stretched": float(grown[skeleton.index(weakest)]),
                              "weakest": weakest}
            rows[take.name] = row
            cells = "".join(f"{r['fixed']:>9.2f} /{r['stretched']:>5.1f}" for r in row.values())
            print(f"{take.name[:34]:<35}{cells}", flush=True)
    worst_fixed = max(r["fixed"] for row in rows.values() for r in row.values())
    weakest = min(((r["stretched"], name, label, r["weakest"]) for name, row in rows.items()
                   for label, r in row.items()))
    print(f"largest fixed ratio {worst_fixed:.2f}; smallest stretched ratio {weakest[0]:.2f} ({weakest[1]}, "
          f"{weakest[2]}, {weakest[3]}); {len(rows)} takes, {frames} frames each, stretch {stretch:g}")
    report = {"frames": frames, "stretch": stretch, "takes": rows, "largest_fixed_ratio": worst_fixed,
              "smallest_stretched_ratio": weakest[0]}
    if json_path is not None:
        Path(json_path).write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=240, help="frames of each take (default 240)")
    parser.add_argument("--stretch", type=float, default=0.01, help="how much every bone grows (default 0.01)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    main(args.frames, args.stretch, args.json)
