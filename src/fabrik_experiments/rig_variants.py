"""The same recorded motion exported as other rigs would export it (issue 29: "build for rigs in
general"): renamed joints, another up axis or heading, other units, other Euler orders, position
channels on every joint, another rest pose, extra zero-length and channel-less joints.

Each transform takes and returns ``(skeleton, motion)`` (``fabrik.load_bvh``'s pair) and keeps
the world positions of every joint of the input, up to the global rotation and scale it states:

* ``renamed(skeleton, motion, names)``: joint names replaced (End Sites named after their
  parent, as ``load_bvh`` names them); ``MIXAMO``, ``BLENDER``, ``SMPL``, ``UNITY`` and
  ``BIPED`` map the CMU names to those conventions.
* ``rotated(skeleton, motion, rotation, scale)``: every position turned by ``rotation`` (3, 3)
  and scaled by ``scale``; rotations conjugated (``G L G^T``), so world rotations become
  ``G W G^T``. ``Z_UP`` turns a Y-up take Z-up; ``about_up(angle, up)`` turns it about the
  vertical.
* ``reordered(skeleton, motion, orders)``: rotation channels listed in other Euler orders (the
  same rotations, re-expressed when written).
* ``position_channels(skeleton, motion, wobble)``: ``Xposition Yposition Zposition`` on every
  joint with channels, holding the OFFSETs plus a wobble of ``wobble`` x the height (float32
  exporters print bones that vary by about 1e-6 of their length).
* ``rest_bent(skeleton, motion, bends)``: another rest pose: ``bends`` ``{joint: (3, 3)}`` turns
  the rest offsets of everything below that joint about it (an A-pose: the arms turned down at
  the shoulders; a bent knee), and the frame rotations compensate (``L' = M_p L M_j^T`` with
  ``M_j`` the product of the bends at ``j`` and above it), so world positions are unchanged.
* ``with_dummies(skeleton, motion, above, carriers, tips)``: zero-length joints with no
  channels inserted above ``above`` joints, channel-less joints that carry the bone to the
  ``carriers`` joints (which are then at zero distance from them), and every End Site made a
  channel-less ``tips`` joint with a zero-length End Site below it.

``save(path, skeleton, motion)`` writes a pair with its layout (``fabrik.save_bvh``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation

from fabrik.io.bvh import save_bvh
from fabrik.model.motion import ChannelLayout, Motion
from fabrik.model.skeleton import Skeleton

#: CMU (131) joint names -> Mixamo's (its clavicle is ``Shoulder``, its shoulder ``Arm``).
MIXAMO = {
    "Hips": "mixamorig:Hips", "LHipJoint": "mixamorig:LeftHipJoint", "LeftHip": "mixamorig:LeftUpLeg",
    "LeftKnee": "mixamorig:LeftLeg", "LeftAnkle": "mixamorig:LeftFoot", "LeftToe": "mixamorig:LeftToeBase",
    "lowerback": "mixamorig:Spine", "Chest": "mixamorig:Spine1", "Chest2": "mixamorig:Spine2",
    "lowerneck": "mixamorig:Neck", "Neck": "mixamorig:Neck1", "Head": "mixamorig:Head",
    "LeftCollar": "mixamorig:LeftShoulder", "LeftShoulder": "mixamorig:LeftArm",
    "LeftElbow": "mixamorig:LeftForeArm", "LeftWrist": "mixamorig:LeftHand", "lhand": "mixamorig:LeftHandPalm",
    "LFingers": "mixamorig:LeftHandIndex1", "LThumb": "mixamorig:LeftHandThumb1",
}
#: Blender Rigify metarig names (its clavicle is ``shoulder.L``, its shoulder ``upper_arm.L``).
BLENDER = {
    "Hips": "hips", "LHipJoint": "pelvis.L", "LeftHip": "thigh.L", "LeftKnee": "shin.L", "LeftAnkle": "foot.L",
    "LeftToe": "toe.L", "lowerback": "spine", "Chest": "spine.001", "Chest2": "spine.002",
    "lowerneck": "neck", "Neck": "neck.001", "Head": "head", "LeftCollar": "shoulder.L",
    "LeftShoulder": "upper_arm.L", "LeftElbow": "forearm.L", "LeftWrist": "hand.L", "lhand": "palm.L",
    "LFingers": "f_index.01.L", "LThumb": "thumb.01.L",
}
#: SMPL-style names (``L_Collar``, ``L_Shoulder``; its foot joint is the ball of the foot).
SMPL = {
    "Hips": "Pelvis", "LHipJoint": "L_HipJoint", "LeftHip": "L_Thigh", "LeftKnee": "L_Knee", "LeftAnkle": "L_Ankle",
    "LeftToe": "L_Foot", "lowerback": "Spine1", "Chest": "Spine2", "Chest2": "Spine3", "lowerneck": "Neck",
    "Neck": "Neck2", "Head": "Head", "LeftCollar": "L_Collar", "LeftShoulder": "L_Shoulder", "LeftElbow": "L_Elbow",
    "LeftWrist": "L_Wrist", "lhand": "L_Hand", "LFingers": "L_Index1", "LThumb": "L_Thumb1",
}
#: Unity humanoid names (its clavicle is ``LeftShoulder``, its shoulder ``LeftUpperArm``).
UNITY = {
    "Hips": "Hips", "LHipJoint": "LeftHipJoint", "LeftHip": "LeftUpperLeg", "LeftKnee": "LeftLowerLeg",
    "LeftAnkle": "LeftFoot", "LeftToe": "LeftToes", "lowerback": "Spine", "Chest": "Chest", "Chest2": "UpperChest",
    "lowerneck": "Neck", "Neck": "Neck1", "Head": "Head", "LeftCollar": "LeftShoulder",
    "LeftShoulder": "LeftUpperArm", "LeftElbow": "LeftLowerArm", "LeftWrist": "LeftHand", "lhand": "LeftPalm",
    "LFingers": "LeftIndexProximal", "LThumb": "LeftThumbProximal",
}
#: 3ds Max Biped names (a ``Bip01`` prefix word, the side as a word of its own; written with ``_``
#: for spaces, as FBX-to-BVH converters do).
BIPED = {
    "Hips": "Bip01_Pelvis", "LHipJoint": "Bip01_L_HipJoint", "LeftHip": "Bip01_L_Thigh", "LeftKnee": "Bip01_L_Calf",
    "LeftAnkle": "Bip01_L_Foot", "LeftToe": "Bip01_L_Toe0", "lowerback": "Bip01_Spine", "Chest": "Bip01_Spine1",
    "Chest2": "Bip01_Spine2", "lowerneck": "Bip01_Neck", "Neck": "Bip01_Neck1", "Head": "Bip01_Head",
    "LeftCollar": "Bip01_L_Clavicle", "LeftShoulder": "Bip01_L_UpperArm", "LeftElbow": "Bip01_L_Forearm",
    "LeftWrist": "Bip01_L_Hand", "lhand": "Bip01_L_Palm", "LFingers": "Bip01_L_Finger1", "LThumb": "Bip01_L_Finger0",
}


def mirrored_names(mapping: dict[str, str]) -> dict[str, str]:
    """``mapping`` (left-side CMU names) with the right side added by swapping L/Left for R/Right."""
    swaps = [("LeftHip", "RightHip"), ("LeftKnee", "RightKnee"), ("LeftAnkle", "RightAnkle"), ("LeftToe", "RightToe"),
             ("LeftCollar", "RightCollar"), ("LeftShoulder", "RightShoulder"), ("LeftElbow", "RightElbow"),
             ("LeftWrist", "RightWrist"), ("LHipJoint", "RHipJoint"), ("lhand", "rhand"), ("LFingers", "RFingers"),
             ("LThumb", "RThumb")]
    out = dict(mapping)
    for left, right in swaps:
        if left in mapping:
            name = mapping[left]
            for a, b in (("Left", "Right"), (".L", ".R"), ("L_", "R_"), ("_L_", "_R_")):
                if a in name:
                    name = name.replace(a, b)
                    break
            out[right] = name
    return out


def _end_names(names: list[str], parents, end_sites) -> list[str]:
    """Names with each End Site renamed ``f"{parent}_End"`` (as ``load_bvh`` reads them back)."""
    out = list(names)
    for j in sorted(end_sites):
        out[j] = f"{out[parents[j]]}_End"
    return out


def renamed(skeleton: Skeleton, motion: Motion, names: dict[str, str]) -> tuple[Skeleton, Motion]:
    """Joints renamed by ``names`` (others keep theirs); End Sites named after their parent."""
    layout = motion.layout or ChannelLayout.default(skeleton)
    new = _end_names([names.get(n, n) for n in skeleton.names], skeleton.parents, layout.end_sites)
    return Skeleton(tuple(new), skeleton.parents, skeleton.offsets), motion


#: Y-up to Z-up: +Y goes to +Z, +Z to -Y (a right-handed turn of 90 degrees about X).
Z_UP = Rotation.from_euler("x", 90, degrees=True).as_matrix()


def about_up(degrees: float, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """(3, 3) a turn by ``degrees`` about the vertical ``up``."""
    return Rotation.from_rotvec(np.asarray(up, dtype=float) * math.radians(degrees)).as_matrix()


def rotated(skeleton: Skeleton, motion: Motion, rotation=np.eye(3), scale: float = 1.0) -> tuple[Skeleton, Motion]:
    """Every position turned by ``rotation`` and scaled by ``scale``; local rotations conjugated."""
    G = np.asarray(rotation, dtype=float)
    g = Rotation.from_matrix(G)
    F, n = motion.rotations.shape[:2]
    L = Rotation.from_quat(motion.rotations.reshape(-1, 4))
    L2 = (g * L * g.inv()).as_quat().reshape(F, n, 4)
    offsets = scale * skeleton.offsets @ G.T
    trans = {j: scale * t @ G.T for j, t in motion.joint_translations.items()}
    out = Motion(L2, scale * motion.root_positions @ G.T, motion.frame_time, trans, motion.layout)
    return Skeleton(skeleton.names, skeleton.parents, offsets), out


def reordered(skeleton: Skeleton, motion: Motion, orders=("XYZ", "YZX", "ZXY")) -> tuple[Skeleton, Motion]:
    """Rotation channels written in other Euler orders: joint k (of those with 3 rotation
    channels) gets ``orders[k % len(orders)]``; position channels keep their place."""
    layout = motion.layout or ChannelLayout.default(skeleton)
    chans, k = [], 0
    for c in layout.channels:
        rot = [x for x in c if x.endswith("rotation")]
        if len(rot) == 3:
            order = orders[k % len(orders)]
            k += 1
            c = tuple(x for x in c if x.endswith("position")) + tuple(f"{a}rotation" for a in order)
        chans.append(tuple(c))
    return skeleton, _with(motion, layout=ChannelLayout(tuple(chans), layout.end_sites))


def _with(motion: Motion, **changes) -> Motion:
    fields = dict(rotations=motion.rotations, root_positions=motion.root_positions, frame_time=motion.frame_time,
                  joint_translations=dict(motion.joint_translations), layout=motion.layout)
    fields.update(changes)
    return Motion(**fields)


def position_channels(skeleton: Skeleton, motion: Motion, wobble: float = 1e-6, seed: int = 0
                      ) -> tuple[Skeleton, Motion]:
    """Position channels on every joint with channels (Blender style), holding the OFFSETs plus a
    random wobble of up to ``wobble`` x the skeleton's height on each coordinate."""
    layout = motion.layout or ChannelLayout.default(skeleton)
    rng = np.random.default_rng(seed)
    h = skeleton.height()
    F = motion.n_frames
    chans, trans = [], dict(motion.joint_translations)
    for j, c in enumerate(layout.channels):
        if j in layout.end_sites:
            chans.append(c)
            continue
        rot = tuple(x for x in c if x.endswith("rotation"))
        chans.append(("Xposition", "Yposition", "Zposition") + rot)
        if j and j not in trans:
            trans[j] = skeleton.offsets[j] + rng.uniform(-wobble * h, wobble * h, (F, 3))
    return skeleton, _with(motion, joint_translations=trans, layout=ChannelLayout(tuple(chans), layout.end_sites))


def rest_bent(skeleton: Skeleton, motion: Motion, bends: dict[str, np.ndarray]) -> tuple[Skeleton, Motion]:
    """Another rest pose with the same world motion (module notes). ``bends``: joint name -> (3, 3)."""
    n = skeleton.n_joints
    M = np.empty((n, 3, 3))
    for j in range(n):
        here = np.asarray(bends.get(skeleton.names[j], np.eye(3)), dtype=float)
        M[j] = here if j == 0 else M[skeleton.parents[j]] @ here
    offsets = skeleton.offsets.copy()
    for c in range(1, n):
        offsets[c] = M[skeleton.parents[c]] @ skeleton.offsets[c]
    trans = {j: t @ M[skeleton.parents[j]].T for j, t in motion.joint_translations.items()}
    L = motion.rotation_matrices()
    P = np.concatenate([[np.eye(3)], M[skeleton.parents[1:]]])
    L2 = np.einsum("jab,fjbc,jdc->fjad", P, L, M)
    rot = Rotation.from_matrix(L2.reshape(-1, 3, 3)).as_quat().reshape(motion.rotations.shape)
    return Skeleton(skeleton.names, skeleton.parents, offsets), _with(motion, rotations=rot, joint_translations=trans)


def a_pose(skeleton: Skeleton, motion: Motion, arms: float = 40.0, knees: float = 15.0, elbows: float = 20.0
           ) -> tuple[Skeleton, Motion]:
    """``rest_bent`` for a CMU-named Y-up take facing +Z: arms turned ``arms`` degrees out at the
    shoulders about the forward axis (90 makes arms hanging at rest a T-pose); knees bent
    ``knees`` degrees (shins back) and elbows ``elbows`` (forearms forward), each in its limb's
    own bending plane: about ``bone x backward`` (``bone x forward``), the bone the one leaving
    the joint, so that the rest bend is one a hinge at that joint can make."""
    z = np.array([0.0, 0.0, 1.0])
    rest = skeleton.rest_positions()

    def turn(axis, deg):
        return Rotation.from_rotvec(axis / np.linalg.norm(axis) * math.radians(deg)).as_matrix()

    def bone(name):
        j = skeleton.index(name)
        child = skeleton.children(j)[0]
        return rest[child] - rest[j]

    bends = {}
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        if f"{side}Shoulder" in skeleton.names and arms:
            bends[f"{side}Shoulder"] = turn(z, sign * arms)
        if f"{side}Knee" in skeleton.names and knees:
            bends[f"{side}Knee"] = turn(np.cross(bone(f"{side}Knee"), -z), knees)
        if f"{side}Elbow" in skeleton.names and elbows:
            bends[f"{side}Elbow"] = turn(np.cross(bone(f"{side}Elbow"), z), elbows)
    return rest_bent(skeleton, motion, bends)


def with_dummies(skeleton: Skeleton, motion: Motion, above=(), carriers=(), tips: bool = True
                 ) -> tuple[Skeleton, Motion]:
    """Extra joints without channels (module notes): ``f"{name}Offset"`` at zero distance above
    each joint of ``above``; ``f"{name}Carrier"`` carrying the bone to each joint of ``carriers``
    (the joint then sits at zero distance from it); with ``tips``, each End Site becomes a joint
    ``f"{parent}Tip"`` with a zero-length End Site."""
    layout = motion.layout or ChannelLayout.default(skeleton)
    n = skeleton.n_joints
    children = [[] for _ in range(n)]
    for i in range(1, n):
        children[skeleton.parents[i]].append(i)
    names, parents, offsets, chans, ends, source = [], [], [], [], set(), []
    translations = {}

    def add(name, parent, offset, channels, src, end=False):
        names.append(name)
        parents.append(parent)
        offsets.append(np.asarray(offset, dtype=float))
        chans.append(tuple(channels))
        source.append(src)
        if end:
            ends.add(len(names) - 1)
        return len(names) - 1

    def walk(j, parent):
        name = skeleton.names[j]
        off = skeleton.offsets[j]
        if j in layout.end_sites and tips:
            tip = add(f"{skeleton.names[skeleton.parents[j]]}Tip", parent, off, (), -1)
            add(f"{skeleton.names[skeleton.parents[j]]}Tip_End", tip, np.zeros(3), (), -1, end=True)
            return
        if name in above:
            parent = add(f"{name}Offset", parent, np.zeros(3), (), -1)
        if name in carriers:
            parent = add(f"{name}Carrier", parent, off, (), -1)
            off = np.zeros(3)
        me = add(name, parent, off, layout.channels[j], j, end=j in layout.end_sites)
        if j in motion.joint_translations:
            translations[me] = j
        for c in children[j]:
            walk(c, me)

    walk(0, -1)
    names = _end_names(names, parents, ends)
    F = motion.n_frames
    rot = np.zeros((F, len(names), 4))
    rot[..., 3] = 1.0
    for k, src in enumerate(source):
        if src >= 0:
            rot[:, k] = motion.rotations[:, src]
    trans = {k: motion.joint_translations[j] for k, j in translations.items()}
    sk = Skeleton(tuple(names), np.array(parents), np.array(offsets))
    out = Motion(rot, motion.root_positions, motion.frame_time, trans, ChannelLayout(tuple(chans), frozenset(ends)))
    return sk, out


def save(path, skeleton: Skeleton, motion: Motion) -> None:
    """Write the pair with its own layout (``fabrik.save_bvh``)."""
    save_bvh(path, skeleton, motion, layout=motion.layout)


__all__ = ["MIXAMO", "BLENDER", "SMPL", "UNITY", "BIPED", "Z_UP", "mirrored_names", "renamed", "about_up", "rotated",
           "reordered", "position_channels", "rest_bent", "a_pose", "with_dummies", "save"]
