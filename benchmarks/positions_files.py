"""Every shared take as a joint-positions ``.npz`` (``fabrik.io.positions``): read back, and
reconstructed as its BVH is.

    .venv/bin/python benchmarks/positions_files.py [--frames 240] [--json PATH]

For each take in ``../shared/data/mocap`` (its first ``--frames`` frames), FABRIK's reconstruction
(``fabrik.mocap.reconstruct_take``, the defaults of ``fabrik reconstruct``) of the BVH against
that of an ``.npz`` of the same take, as the largest distance of a joint in any frame, over the
BVH skeleton's height:

* ``saved``: the archive ``fabrik.save_motion`` writes (positions, parents, names, offsets,
  frame_time): the skeleton read is the BVH's;
* ``bare``: positions (``Motion.world_positions``), parents, names and fps only, as a pose
  estimator writes them: the rest pose is the first frame. ``bare tol`` with the BVH's tolerance
  (``--tol``: 1e-3 of the height of the BVH's rest pose), ``bare tol all`` also with
  ``rigid_sub_bases=True`` (every group a BVH rotation turns as one, no groups through
  zero-length joints), ``bare`` with the defaults (the tolerance 1e-3 of the rest pose's height,
  here the first frame's);
* ``f32``: the bare archive in float32 is read (the fitted motion within the data's precision of
  the positions), and ``stretch``: with one bone grown 1% over the take (the longest inside the
  body) it is refused.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

import fabrik
from fabrik.io.positions import PositionsError
from fabrik.mocap import prepare_take, reconstruct_take

ROOT = Path(__file__).resolve().parents[1]
MOCAP = ROOT.parent / "shared" / "data" / "mocap"


def _grown(skeleton, positions: np.ndarray, top: int, stretch: float) -> tuple[np.ndarray, str]:
    """``positions`` with the longest bone inside the body (below ``top``) grown by ``stretch`` over
    the frames (the joints below it carried along); returns them and the joint's name."""
    inside = [j for j in range(top + 1, skeleton.n_joints)]
    j = max(inside, key=lambda k: skeleton.bone_lengths[k])
    below = np.zeros(skeleton.n_joints, dtype=bool)
    below[j] = True
    for k in range(j + 1, skeleton.n_joints):
        below[k] |= below[skeleton.parents[k]]
    grow = np.linspace(0.0, stretch, positions.shape[0])[:, None]
    out = positions.copy()
    out[:, below] += ((positions[:, j] - positions[:, skeleton.parents[j]]) * grow)[:, None]
    return out, skeleton.names[j]


def main(frames: int = 240, json_path: Path | None = None) -> dict:
    takes = sorted(MOCAP.rglob("*.bvh"))
    if not takes:
        raise SystemExit(f"no takes in {MOCAP}")
    columns = ("saved", "bare tol", "bare tol all", "bare", "f32", "stretch")
    print(f"{'take':<48}{'joints':>7}" + "".join(f"{c:>14}" for c in columns))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        saved, bare = Path(tmp) / "saved.npz", Path(tmp) / "bare.npz"
        for take in takes:
            skeleton, motion = fabrik.load_bvh(take)
            motion = motion.frames(0, min(frames, motion.n_frames))
            positions = motion.world_positions(skeleton)
            height = skeleton.height()
            fabrik.save_motion(saved, skeleton, motion)
            fields = dict(parents=skeleton.parents, names=np.array(skeleton.names), fps=1.0 / motion.frame_time)
            np.savez(bare, positions=positions, **fields)
            recorded = reconstruct_take(skeleton, motion)
            truth, tol = recorded.positions, recorded.tol

            def apart(other) -> float:
                return float(np.linalg.norm(other.positions - truth, axis=2).max() / height)

            row = {"joints": skeleton.n_joints, "saved": apart(reconstruct_take(*fabrik.load_motion(saved)))}
            read = fabrik.load_motion(bare)
            row["bare tol"] = apart(reconstruct_take(*read, tol=tol))
            all_bvh = reconstruct_take(skeleton, motion, tol=tol, rigid_sub_bases=True).positions
            all_npz = reconstruct_take(*read, tol=tol, rigid_sub_bases=True).positions
            row["bare tol all"] = float(np.linalg.norm(all_npz - all_bvh, axis=2).max() / height)
            row["bare"] = apart(reconstruct_take(*read))
            np.savez(bare, positions=positions.astype(np.float32), **fields)
            f32, f32_motion = fabrik.load_motion(bare)
            row["f32"] = float(np.linalg.norm(f32_motion.world_positions(f32) - positions, axis=2).max() / height)
            grown, name = _grown(skeleton, positions, int(prepare_take(skeleton, motion).joints[0]), 0.01)
            np.savez(bare, positions=grown, **fields)
            try:
                fabrik.load_motion(bare)
                row["stretch"] = f"read ({name})"
            except PositionsError:
                row["stretch"] = "refused"
            rows[take.name] = row
            print(f"{take.name:<48}{row['joints']:>7}" + "".join(
                f"{row[c]:>14.2g}" if isinstance(row[c], float) else f"{row[c]:>14}" for c in columns))
    summary = {c: max(r[c] for r in rows.values()) for c in columns[:-1]}
    summary["refused"] = sum(r["stretch"] == "refused" for r in rows.values())
    print(f"{'largest':<55}" + "".join(f"{summary[c]:>14.2g}" for c in columns[:-1])
          + f"{summary['refused']:>9}/{len(rows)}")
    result = {"frames": frames, "takes": rows, "largest": summary}
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=240)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    main(args.frames, args.json)
