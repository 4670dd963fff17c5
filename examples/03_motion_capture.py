"""Motion capture: read a BVH file, rebuild its inner joints from the end effectors, write BVH.

Run from the repository root:
    .venv/bin/python examples/03_motion_capture.py [FILE.bvh] [OUT.bvh]
Without arguments it uses the first real take in ../shared/data/mocap/ if present, else the
project's procedural sample walk.
"""

import sys
from pathlib import Path

import fabrik
from fabrik.mocap import motion_from_positions
from fabrik_experiments.reconstruction import reconstruct
from fabrik_experiments.sample_motion import sample_walk


def main() -> None:
    args = sys.argv[1:]
    default = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mocap" / "cmu_131_01.bvh"
    if args:
        skeleton, motion = fabrik.load_bvh(args[0])
    elif default.exists():
        skeleton, motion = fabrik.load_bvh(default)
        motion = motion.frames(0, 240)
    else:
        skeleton, motion = sample_walk()
    print(skeleton, f"{motion.n_frames} frames")
    positions = motion.world_positions(skeleton)  # (frames, joints, 3) in file units
    report = reconstruct(skeleton, positions, methods=["fabrik", "ccd", "jacobian-dls"])
    print(report.table())
    out = Path(args[1]) if len(args) > 1 else Path("fabrik-out") / "reconstruction.bvh"
    out.parent.mkdir(parents=True, exist_ok=True)
    fabrik.save_bvh(out, skeleton, motion_from_positions(skeleton, motion, report.result("fabrik").positions))
    print("wrote", out)


if __name__ == "__main__":
    main()
