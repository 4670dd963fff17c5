"""Ready-made skeletons from the paper's multiple-end-effector examples (section 5.2).

* :func:`y_shape` - the 'Y-shaped' multibody of Fig. 15(a): 10 joints, 2 end effectors.
* :func:`hand` - the unconstrained hand of Fig. 15(b): 26 joints, 5 end effectors (finger tips).
* :func:`humanoid` - the tracked humanoid of Figs. 16/17: 13 joints, 5 end effectors (head,
  hands, feet).

All are ``fabrik.Skeleton`` objects in their rest pose, right-handed with +Y up. The hand and the
humanoid are in metres with adult human proportions; the Y shape is in units of its bone length.
Each function documents its joint names; ``skeleton.leaves`` gives the end effectors.
"""

from __future__ import annotations

import math

import numpy as np

from fabrik._validation import check_positive
from fabrik.model.skeleton import Skeleton


def y_shape(bone_length: float = 1.0, branch_angle: float = math.radians(30.0)) -> Skeleton:
    """The 'Y-shaped' multibody of section 5.2 / Fig. 15(a): 10 joints, 2 end effectors.

    A trunk of 3 bones straight up (+Y) from the root to a fork (the sub-base), then two branches
    of 3 bones each, leaning ``branch_angle`` radians (default 30 degrees) either side of
    vertical in the z = 0 plane; the left branch (-X) curls slightly inwards to avoid a perfectly
    straight chain.

    Joints (in order): ``root``, ``trunk1``, ``trunk2``, ``fork``, ``left1``, ``left2``,
    ``left_tip``, ``right1``, ``right2``, ``right_tip``. End effectors: ``left_tip``,
    ``right_tip``. Units: every bone is ``bone_length`` long (default 1).
    """
    bone_length = check_positive(bone_length, "bone_length")
    if isinstance(branch_angle, (str, bytes, bool)) or not (0.0 < branch_angle < math.pi / 2):
        raise ValueError(f"branch_angle must be in (0, pi/2) radians, got {branch_angle!r}")
    names = ["root", "trunk1", "trunk2", "fork", "left1", "left2", "left_tip", "right1", "right2", "right_tip"]
    parents = [-1, 0, 1, 2, 3, 4, 5, 3, 7, 8]
    offsets = np.zeros((10, 3))
    offsets[1:4, 1] = bone_length
    bend = math.radians(5.0)
    for first, side in ((4, -1.0), (7, 1.0)):
        for b in range(3):
            angle = branch_angle - b * bend  # each bone turns 5 degrees back towards vertical
            offsets[first + b] = bone_length * np.array([side * math.sin(angle), math.cos(angle), 0.0])
    return Skeleton.from_parents(names, parents, offsets)


#: Finger names of :func:`hand`, thumb first.
FINGERS = ("thumb", "index", "middle", "ring", "little")


def hand() -> Skeleton:
    """The hand multibody of section 5.2 / Fig. 15(b): 26 joints, 5 end effectors, in metres.

    The wrist is the root (at the origin) and the sub-base of five chains of five joints each.
    The hand points along +Y with the palm facing -Z and the thumb on the +X side; fingers are
    slightly flexed (towards -Z) and fanned. Segment lengths are those of an adult hand
    (about 0.19 m from the wrist to the middle finger's tip).

    Joints: ``wrist``, then for each finger in ``FINGERS`` order five joints. Fingers
    (``index``, ``middle``, ``ring``, ``little``): ``<f>_carpal`` (base of the metacarpal, in
    the palm), ``<f>_mcp`` (knuckle), ``<f>_pip``, ``<f>_dip``, ``<f>_tip``. Thumb:
    ``thumb_carpal``, ``thumb_cmc``, ``thumb_mcp``, ``thumb_ip``, ``thumb_tip``.
    End effectors: the five ``*_tip`` joints.
    """
    names = ["wrist"]
    parents = [-1]
    positions = [np.zeros(3)]
    # finger: (base of the metacarpal in the palm, fan angle about Z (radians, + towards +X),
    #          bone lengths metacarpal, proximal, middle, distal)
    specs = {
        "index": ((0.020, 0.025, 0.0), math.radians(6.0), (0.068, 0.040, 0.024, 0.020)),
        "middle": ((0.004, 0.027, 0.0), math.radians(0.0), (0.065, 0.045, 0.028, 0.021)),
        "ring": ((-0.012, 0.025, 0.0), math.radians(-6.0), (0.058, 0.042, 0.027, 0.021)),
        "little": ((-0.026, 0.021, 0.0), math.radians(-12.0), (0.053, 0.033, 0.019, 0.019)),
    }
    for finger in FINGERS:
        first = len(names)
        if finger == "thumb":
            joint_names = ["thumb_carpal", "thumb_cmc", "thumb_mcp", "thumb_ip", "thumb_tip"]
            base = np.array([0.016, 0.012, -0.004])
            fan = math.radians(40.0)
            bones = (0.022, 0.046, 0.032, 0.025)
            flex = math.radians(8.0)
        else:
            joint_names = [f"{finger}_{part}" for part in ("carpal", "mcp", "pip", "dip", "tip")]
            base_xyz, fan, bones = specs[finger]
            base = np.array(base_xyz)
            flex = math.radians(10.0)
        names.extend(joint_names)
        parents.append(0)
        positions.append(base)
        point = base
        for b, length in enumerate(bones):
            bend = flex * b  # metacarpal straight, each phalanx a little more flexed
            direction = np.array([math.sin(fan) * math.cos(bend), math.cos(fan) * math.cos(bend), -math.sin(bend)])
            point = point + length * direction
            parents.append(first + b)
            positions.append(point)
    return Skeleton.from_positions(names, parents, np.array(positions))


def humanoid() -> Skeleton:
    """The humanoid of section 5.2 / Figs. 16-17: 13 joints, 5 end effectors, in metres.

    A 1.75 m adult standing with arms hanging, +Y up, facing +Z, its left side at +X. The pelvis
    is the root (0.95 m above the floor); the spine is one bone up to the neck, which is the
    sub-base of the head and both arms; the legs hang from the pelvis (the hip joints are folded
    into it, which is how the count stays at 13). Elbows and knees are slightly bent so no limb
    starts perfectly straight.

    Joints (in order): ``pelvis``, ``neck``, ``head``, ``l_shoulder``, ``l_elbow``, ``l_wrist``,
    ``r_shoulder``, ``r_elbow``, ``r_wrist``, ``l_knee``, ``l_ankle``, ``r_knee``, ``r_ankle``.
    End effectors: ``head``, ``l_wrist``, ``r_wrist``, ``l_ankle``, ``r_ankle``.
    """
    names = ["pelvis", "neck", "head",
             "l_shoulder", "l_elbow", "l_wrist", "r_shoulder", "r_elbow", "r_wrist",
             "l_knee", "l_ankle", "r_knee", "r_ankle"]
    parents = [-1, 0, 1, 1, 3, 4, 1, 6, 7, 0, 9, 0, 11]
    offsets = np.array([
        [0.0, 0.95, 0.0],      # pelvis: its rest position
        [0.0, 0.50, -0.02],    # neck: spine, pelvis to the base of the neck
        [0.0, 0.23, 0.03],     # head: neck to the centre of the head
        [0.19, -0.02, 0.0],    # l_shoulder: clavicle
        [0.03, -0.29, -0.03],  # l_elbow: upper arm
        [0.01, -0.25, 0.05],   # l_wrist: forearm
        [-0.19, -0.02, 0.0],   # r_shoulder
        [-0.03, -0.29, -0.03],  # r_elbow
        [-0.01, -0.25, 0.05],  # r_wrist
        [0.10, -0.46, 0.03],   # l_knee: thigh from the pelvis centre
        [0.0, -0.42, -0.04],   # l_ankle: shank
        [-0.10, -0.46, 0.03],  # r_knee
        [0.0, -0.42, -0.04],   # r_ankle
    ])
    return Skeleton.from_parents(names, parents, offsets)


__all__ = ["y_shape", "hand", "humanoid", "FINGERS"]
