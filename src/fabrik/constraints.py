"""Joint limits for FABRIK (section 4.3 of the paper): the public facade.

Use::

    import math, fabrik
    from fabrik.constraints import Cone, Hinge, Twist
    chain = fabrik.Chain.straight(5).with_constraints({
        0: Cone.circular(math.radians(60)),
        1: [Hinge((1, 0, 0), 0.0, 2.1), Twist(-0.1, 0.1)],
        2: (Cone(0.5, 0.3, 0.4, 0.4), Twist(-0.5, 0.5)),
    })
    sol = fabrik.solve(chain, [1.0, 2.0, 0.5])          # routed to "fabrik-constrained"
    sol.extras["active_constraints"], sol.extras["frames"]

A limit on joint i restricts bone i (joint i -> i + 1) relative to bone i - 1 (joint 0: relative
to the chain's fixed root frame). Angles are radians; conventions in docs/constraints.md.
"""

from __future__ import annotations

from fabrik.model.humanoid_limits import humanoid
from fabrik.solvers.skeleton_fabrik_constrained import (
    frames_from_pose,
    frames_from_world_rotations,
    limit_violations,
    rest_frames,
)
from fabrik.model.constraints import (
    Cone,
    Hinge,
    Twist,
    as_rotation_matrix,
    cone_violation,
    constraints_from_json,
    frames_to_rotations,
    hinge_angle,
    load_constraints,
    normalise_chain_constraints,
    normalise_skeleton_constraints,
    random_pose,
    root_frame,
    save_constraints,
    swing_twist,
)


__all__ = [
    "Cone", "Hinge", "Twist", "load_constraints", "save_constraints", "constraints_from_json", "humanoid",
    "limit_violations", "frames_from_pose", "frames_from_world_rotations", "rest_frames",
    "normalise_chain_constraints", "normalise_skeleton_constraints", "cone_violation", "hinge_angle",
    "swing_twist", "frames_to_rotations", "as_rotation_matrix", "root_frame", "random_pose",
]
