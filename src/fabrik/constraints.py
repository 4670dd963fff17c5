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

import math

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


def humanoid(skeleton) -> dict[str, tuple]:
    """A plausible set of human joint limits for a skeleton, matched by joint name.

    Recognises the usual BVH names case-insensitively (CMU: LeftShoulder, LeftElbow, LeftWrist,
    LeftHip, LeftKnee, LeftAnkle, lowerback, Chest, Chest2, lowerneck, Neck, ...): elbows and knees
    become hinges about the parent frame's +X (0 to 150 degrees, 1 DoF), shoulders and hips cones
    with twist, wrists, ankles and spine/neck joints small cones with twist. Joints that are leaves
    or match nothing get no limit. Returns ``{joint name: (constraint, ...)}`` ready for
    ``skeleton.with_constraints``. The angles are generic, not fitted to a person; they assume the
    skeleton frames of ``fabrik.constraints`` (+Y along the bone); the hinge direction depends on
    how the rest pose faces, so check it on your data.
    """
    deg = math.radians
    leaves = set(skeleton.leaves)
    out: dict[str, tuple] = {}
    for idx, name in enumerate(skeleton.names):
        if idx in leaves or idx == 0:
            continue
        key = name.lower()
        if "elbow" in key or "forearm" in key:
            limits = (Hinge((1.0, 0.0, 0.0), 0.0, deg(150)),)
        elif "knee" in key or key.endswith("leg") and "up" not in key:
            limits = (Hinge((1.0, 0.0, 0.0), -deg(150), 0.0),)
        elif "shoulder" in key or key.endswith("arm"):
            limits = (Cone(deg(100), deg(60), deg(100), deg(100)), Twist(-deg(90), deg(90)))
        elif ("hip" in key and "joint" not in key) or "upleg" in key or "thigh" in key:
            limits = (Cone(deg(100), deg(30), deg(45), deg(60)), Twist(-deg(45), deg(45)))
        elif "wrist" in key or "hand" in key:
            limits = (Cone(deg(70), deg(70), deg(30), deg(30)), Twist(-deg(80), deg(80)))
        elif "ankle" in key or "foot" in key:
            limits = (Cone(deg(40), deg(40), deg(20), deg(20)), Twist(-deg(20), deg(20)))
        elif any(s in key for s in ("back", "spine", "chest", "neck", "head")):
            limits = (Cone(deg(30), deg(30), deg(30), deg(30)), Twist(-deg(30), deg(30)))
        else:
            continue
        out[name] = limits
    return out


__all__ = [
    "Cone", "Hinge", "Twist", "load_constraints", "save_constraints", "constraints_from_json", "humanoid",
    "normalise_chain_constraints", "normalise_skeleton_constraints", "cone_violation", "hinge_angle",
    "swing_twist", "frames_to_rotations", "as_rotation_matrix", "root_frame", "random_pose",
]
