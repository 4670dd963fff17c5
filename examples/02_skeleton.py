"""Several end effectors: the paper's humanoid and hand, with targets on leaves and inner joints.

Run from the repository root:  .venv/bin/python examples/02_skeleton.py
"""

import numpy as np

import fabrik
from fabrik import models


def main() -> None:
    body = models.humanoid()
    rest = body.rest_positions()
    print(body, "joints:", ", ".join(body.names))

    # Move both wrists forward and up; the head and the feet stay where they are.
    targets = {name: rest[body.index(name)] for name in ("head", "l_ankle", "r_ankle")}
    targets["l_wrist"] = rest[body.index("l_wrist")] + [0.0, 0.35, 0.30]
    targets["r_wrist"] = rest[body.index("r_wrist")] + [0.0, 0.20, 0.35]
    sol = fabrik.solve(body, targets=targets, tol=1e-4)  # metres: 0.1 mm
    print(sol)
    for name, err in sol.effector_errors.items():
        print(f"  {name:<8} error {err:.2e}")

    # A target on an inner joint (section 4.2): pin the left elbow where it is and reach further
    # with the right hand; the left arm keeps its elbow while the body adjusts.
    targets["l_elbow"] = sol.positions[body.index("l_elbow")]
    targets["r_wrist"] = targets["r_wrist"] + [0.0, 0.05, 0.05]
    pinned = fabrik.solve(body, targets=targets, initial=sol.positions, tol=1e-4)
    print("with an inner target:", pinned)

    hand = models.hand()
    tips = {name: hand.rest_positions()[hand.index(name)] * 0.97 for name in hand.names if name.endswith("_tip")}
    print("hand:", fabrik.solve(hand, targets=tips, tol=1e-6))
    print("rest-pose bone lengths kept:",
          bool(np.allclose(np.linalg.norm(pinned.positions[1:] - pinned.positions[body.parents[1:]], axis=1),
                           body.bone_lengths[1:])))


if __name__ == "__main__":
    main()
