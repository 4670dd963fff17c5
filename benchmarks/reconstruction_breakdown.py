"""Where FABRIK's and DLS's reconstruction errors differ, joint by joint, on one motion-capture take.

    .venv/bin/python benchmarks/reconstruction_breakdown.py ../shared/data/mocap/cmu_131_03.bvh

Runs ``fabrik reconstruct``'s default (unconstrained) FABRIK and DLS rows and prints:

- each evaluated joint's median position error for both methods (file units);
- the median inner-joint error FABRIK would have if DLS's positions replaced its own on a few
  joints (the hands, then the hands and elbows), i.e. how much of the gap those joints carry;
- for skeletons with CMU-style arm names (``LeftElbow``, ``LeftWrist``, ``LFingers`` ...), the
  median bend at the elbow, wrist and finger joint (degrees, the angle between the bone arriving
  at the joint and the bone leaving it) in the recording and in each reconstruction.

The per-take medians it starts from are those of ``docs/results.md`` ("Whole bodies from motion capture").
"""

from __future__ import annotations

import sys

import numpy as np

import fabrik
from fabrik_experiments.reconstruction import reconstruct

METHODS = ("fabrik", "jacobian-dls")


def bend_degrees(positions: np.ndarray, a: int, b: int, c: int) -> np.ndarray:
    """(frames,) angle between bone a->b and bone b->c, in degrees."""
    u = positions[:, b] - positions[:, a]
    v = positions[:, c] - positions[:, b]
    cos = (u * v).sum(axis=1) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def main(path: str) -> None:
    skeleton, motion = fabrik.load_bvh(path)
    truth = motion.world_positions(skeleton)
    report = reconstruct(skeleton, truth, methods=list(METHODS))
    print(report.table())
    names = list(report.evaluated)
    inner = [skeleton.index(n) for n in names]
    errors = {r.method: np.linalg.norm(r.positions[:, inner] - truth[:, inner], axis=2) for r in report.results}
    print(f"\n{'joint':<16}" + "".join(f"{m:>14}" for m in METHODS))
    for k, name in enumerate(names):
        print(f"{name:<16}" + "".join(f"{np.median(errors[m][:, k]):>14.3f}" for m in METHODS))

    hands = [n for n in names if any(key in n.lower() for key in ("wrist", "hand", "finger"))]
    elbows = [n for n in names if any(key in n.lower() for key in ("elbow", "forearm"))]
    print(f"\nmedian inner-joint error: fabrik {np.median(errors['fabrik']):.3f}, "
          f"jacobian-dls {np.median(errors['jacobian-dls']):.3f}")
    for label, swap in (("hands", hands), ("hands and elbows", hands + elbows)):
        mixed = errors["fabrik"].copy()
        for name in swap:
            mixed[:, names.index(name)] = errors["jacobian-dls"][:, names.index(name)]
        print(f"fabrik with DLS's {label} ({', '.join(swap)}): {np.median(mixed):.3f}")

    joint_names = set(skeleton.names)
    sides = [("L", "Left"), ("R", "Right")]
    needed = {f"{side}{part}" for _, side in sides for part in ("Shoulder", "Elbow", "Wrist")}
    needed |= {f"{s}Fingers" for s, _ in sides} | {f"{s}Fingers_End" for s, _ in sides}
    if not needed <= joint_names:
        return
    print("\nmedian bend (degrees): elbow, wrist, finger joint")
    for label, positions in [("recording", truth)] + [(r.method, r.positions) for r in report.results]:
        cells = []
        for s, side in sides:
            idx = skeleton.index
            elbow = bend_degrees(positions, idx(side + "Shoulder"), idx(side + "Elbow"), idx(side + "Wrist"))
            wrist = bend_degrees(positions, idx(side + "Elbow"), idx(side + "Wrist"), idx(s + "Fingers"))
            finger = bend_degrees(positions, idx(side + "Wrist"), idx(s + "Fingers"), idx(s + "Fingers_End"))
            cells.append(f"{side}: {np.median(elbow):5.1f} {np.median(wrist):5.1f} {np.median(finger):5.1f}")
        print(f"{label:<14} " + "   ".join(cells))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
