"""A default set of human joint limits, placed on a skeleton by its joint names.

``humanoid(skeleton) -> (constraints, unplaced)``: ``constraints`` maps joint names to tuples of
``Cone``/``Hinge`` limits ready for ``skeleton.with_constraints``; ``unplaced`` lists the joints
that could carry a limit (they have a bone of non-zero length leaving them) but matched no rule.

Conventions are those of ``fabrik.solvers.skeleton_fabrik_constrained``: a limit on joint j
restricts the bones leaving j, about their rest directions, relative to the bone arriving at j.
So the limit for a body part goes on the joint where that part's bone *starts*: the knee hinge on
the joint at the knee (CMU ``LeftKnee``, Mixamo ``LeftLeg``), which bends the shin against the
thigh. Where a named joint's bones are all zero-length (CMU ``Hips``, ``LeftWrist``) the limit
moves down to the zero-length children that hold the real bones (``LHipJoint``, ``lhand``)
unless those match a rule of their own (``LThumb`` is a finger, not the wrist).

Recognised names (case-insensitive; a ``prefix:`` such as ``mixamorig:`` or a leading
``mixamorig`` is ignored; the side is ``Left``/``Right``/``L``/``R`` at the start or end, fused
or separated by ``_``, ``.``, ``-`` or a space; trailing digits are ignored):

========== ============================================ =================================
part       names (CMU / Mixamo / other)                 limit (degrees)
========== ============================================ =================================
pelvis     root ``Hips``/``Pelvis``, CMU ``LHipJoint``   Cone 10 (a near-rigid pelvis)
spine      ``lowerback``, ``Spine*``, ``Chest*``,        Cone 40
           ``back``, ``abdomen``, ``torso``, ``waist``
neck       ``Neck*``, ``lowerneck``                      Cone 45
head       ``Head``                                      Cone 45
collar     ``LeftCollar``, ``clavicle``, Mixamo          Cone 20
           ``LeftShoulder``
shoulder   CMU ``LeftShoulder``, Mixamo ``LeftArm``,     Cone 120
           ``upperarm``, ``humerus``
elbow      ``LeftElbow``, ``LeftForeArm``,               Hinge -6 .. 150
           ``lowerarm``, ``radius``
wrist      ``LeftWrist``, ``LeftHand``, ``lhand``         Cone 85
hip        CMU ``LeftHip``, ``LeftUpLeg``, ``thigh``,    Cone 120
           ``upperleg``, ``femur``
knee       ``LeftKnee``, Mixamo ``LeftLeg``, ``calf``,   Hinge -6 .. 150
           ``shin``, ``lowerleg``, ``tibia``
ankle      ``LeftAnkle``, ``LeftFoot``                    Cone 60
toe        ``LeftToe``, ``LeftToeBase``, ``ball``         Cone 60
finger     ``*Finger*``, ``*Index*``, ``*Middle*``, ...    Cone 90
thumb      ``*Thumb*``                                   none (reported as unplaced)
========== ============================================ =================================

Fingers get a 90-degree cone about their rest direction, so that a solver cannot fold a finger
back on itself (without limits, FABRIK's reconstruction of cmu_131_03 bends the left finger joint
by up to 121 degrees where the recording holds it at 7). Thumbs stay free: their rest direction differs from rig
to rig (on the CMU takes the recorded right thumb lies up to 147 degrees from its rest
direction), and the thumb's base joint moves widely.

Mixamo's scheme (recognised by an ``UpLeg`` or ``ForeArm`` joint) names the clavicle joint
``Shoulder``, the shoulder joint ``Arm`` and the knee ``Leg``; elsewhere ``Shoulder`` is the
shoulder joint.

Cones are circular (they mean the same in any frame). Hinges need their axis, computed from the
rest pose: *up* is the direction from the root to the neck/head (else +Y), *left* from the
right-side joints to the left-side ones (else +X), *forward* = left x up (right-handed). A knee
bends its shin backwards: axis = shin x backward; an elbow bends its forearm forwards: axis =
forearm x forward; each made a unit vector perpendicular to the bone and expressed in the bone's
reference frame. Where that is undefined (a limb along the forward axis at rest) the hinge falls
back to a circular cone of its largest angle. Angles allow about 6 degrees of over-extension
past the rest pose. The numbers are generic adult ranges of motion, not fitted to a person.
"""

from __future__ import annotations

import math
import re

import numpy as np

from fabrik.model.constraints import Cone, Hinge

DEG = math.pi / 180.0

#: (part, limit kind, parameters in degrees)
LIMITS = {
    "pelvis": ("cone", 10.0),
    "spine": ("cone", 40.0),
    "neck": ("cone", 45.0),
    "head": ("cone", 45.0),
    "collar": ("cone", 20.0),
    "shoulder": ("cone", 120.0),
    "elbow": ("hinge", -6.0, 150.0),
    "wrist": ("cone", 85.0),
    "hip": ("cone", 120.0),
    "knee": ("hinge", -6.0, 150.0),
    "ankle": ("cone", 60.0),
    "toe": ("cone", 60.0),
    "finger": ("cone", 90.0),
    "thumb": None,  # recognised (so wrist limits do not spill onto it) but left free
}

# exact part names (after side and digits are removed); Mixamo-specific ones separately
_EXACT = {
    "hipjoint": "pelvis", "pelvis": "pelvis",
    "hip": "hip", "upleg": "hip", "thigh": "hip", "upperleg": "hip", "femur": "hip",
    "knee": "knee", "calf": "knee", "shin": "knee", "lowerleg": "knee", "tibia": "knee",
    "ankle": "ankle", "foot": "ankle",
    "toe": "toe", "toebase": "toe", "ball": "toe", "toes": "toe",
    "collar": "collar", "clavicle": "collar",
    "upperarm": "shoulder", "humerus": "shoulder",
    "elbow": "elbow", "forearm": "elbow", "lowerarm": "elbow", "radius": "elbow",
    "wrist": "wrist", "hand": "wrist",
    "neck": "neck", "lowerneck": "neck", "upperneck": "neck",
    "head": "head",
}
_FINGER_WORDS = ("thumb", "finger", "index", "middle", "ring", "pinky", "little")
_SPINE_WORDS = ("spine", "back", "chest", "abdomen", "torso", "waist")
_SIDE_WORDS = {"left": "l", "right": "r", "l": "l", "r": "r"}


def _strip(name: str) -> str:
    base = name.split(":")[-1]
    base = re.sub(r"^mixamorig[_\W]*", "", base, flags=re.IGNORECASE)
    return base


def _split_side(name: str) -> list[tuple[str | None, str]]:
    """Candidate (side, rest) readings of a joint name, most explicit first."""
    base = _strip(name)
    tokens = [t for t in re.split(r"[_.\-\s]+", base) if t]
    low = [t.lower() for t in tokens]
    out: list[tuple[str | None, str]] = []
    if len(low) > 1 and low[0] in _SIDE_WORDS:
        out.append((_SIDE_WORDS[low[0]], "".join(low[1:])))
    if len(low) > 1 and low[-1] in _SIDE_WORDS:
        out.append((_SIDE_WORDS[low[-1]], "".join(low[:-1])))
    joined = "".join(low)
    for word, side in (("left", "l"), ("right", "r")):
        if joined.startswith(word) and len(joined) > len(word):
            out.append((side, joined[len(word):]))
        if joined.endswith(word) and len(joined) > len(word):
            out.append((side, joined[:-len(word)]))
    out.append((None, joined))
    # fused one-letter side, tried last: CMU "LHipJoint", "lhand", "RThumb" (not "lowerback")
    if len(joined) > 1 and joined[0] in "lr":
        out.append((joined[0], joined[1:]))
    return out


def _part_of(rest: str, mixamo: bool) -> str | None:
    rest = re.sub(r"\d+$", "", rest)
    if not rest:
        return None
    if mixamo:
        if rest == "shoulder":
            return "collar"
        if rest == "arm":
            return "shoulder"
        if rest == "leg":
            return "knee"
    elif rest == "shoulder":
        return "shoulder"
    if rest in _EXACT:
        return _EXACT[rest]
    if "thumb" in rest:
        return "thumb"
    if any(w in rest for w in _FINGER_WORDS):
        return "finger"
    if any(w in rest for w in _SPINE_WORDS):
        return "spine"
    if "neck" in rest:
        return "neck"
    return None


def classify(skeleton) -> dict[int, tuple[str, str | None]]:
    """``{joint index: (part, side)}`` for the joints whose names match a rule (side 'l', 'r'
    or None). The root named like a pelvis/hips counts as ``pelvis``."""
    names = skeleton.names
    mixamo = any(("upleg" in k or "forearm" in k) for k in (re.sub(r"[^a-z]", "", _strip(n).lower()) for n in names))
    out: dict[int, tuple[str, str | None]] = {}
    for idx, name in enumerate(names):
        if idx == 0:
            low = re.sub(r"[^a-z]", "", _strip(name).lower())
            if low in ("hips", "hip", "pelvis", "root", "hipsroot"):
                out[0] = ("pelvis", None)
            continue
        for side, rest in _split_side(name):
            part = _part_of(rest, mixamo)
            if part is None:
                continue
            out[idx] = (part, side)
            break
    return out


def _body_axes(skeleton, parts: dict[int, tuple[str, str | None]], rest: np.ndarray):
    """(up, left, forward) unit vectors of the rest pose (module docstring)."""
    root = rest[0]
    top = [i for i, (part, _) in parts.items() if part in ("head", "neck")]
    up = rest[top].mean(axis=0) - root if top else np.array([0.0, 1.0, 0.0])
    if np.linalg.norm(up) < 1e-12:
        up = np.array([0.0, 1.0, 0.0])
    up = up / np.linalg.norm(up)
    lefts = [i for i, (_, side) in parts.items() if side == "l"]
    rights = [i for i, (_, side) in parts.items() if side == "r"]
    left = rest[lefts].mean(axis=0) - rest[rights].mean(axis=0) if lefts and rights else np.array([1.0, 0.0, 0.0])
    left = left - np.dot(left, up) * up
    if np.linalg.norm(left) < 1e-9:
        left = np.array([1.0, 0.0, 0.0]) - up[0] * up
        if np.linalg.norm(left) < 1e-9:
            left = np.array([0.0, 0.0, 1.0]) - up[2] * up
    left = left / np.linalg.norm(left)
    forward = np.cross(left, up)
    return up, left, forward / np.linalg.norm(forward)


def _holders(skeleton, joint: int, parts, lengths) -> list[int]:
    """Where a limit meant for ``joint`` must go: the joint itself if a non-zero bone leaves it,
    else its zero-length children (recursively) that hold bones and match no rule themselves."""
    kids = skeleton.children(joint)
    if any(lengths[c] > 0 for c in kids) or not kids:
        return [joint]
    out = []
    for c in kids:
        if c in parts or not skeleton.children(c):
            continue
        out.extend(_holders(skeleton, c, parts, lengths))
    return out


def _first_bone(skeleton, joint: int, lengths) -> int | None:
    """The first non-zero bone leaving ``joint`` (through zero-length children), as its child index."""
    for c in skeleton.children(joint):
        if lengths[c] > 0:
            return c
    for c in skeleton.children(joint):
        found = _first_bone(skeleton, c, lengths)
        if found is not None:
            return found
    return None


def humanoid(skeleton) -> tuple[dict[str, tuple], list[str]]:
    """Default human joint limits for ``skeleton``, placed by joint names (module docstring).

    Returns:
        (constraints, unplaced): ``{joint name: (Cone or Hinge,)}`` for
        ``skeleton.with_constraints``, and the names of joints with a non-zero bone leaving
        them that got no limit (e.g. fingers, thumbs, or names the rules do not know).
    """
    from fabrik.model.skeleton import Skeleton
    from fabrik.model.rig import rig

    if not isinstance(skeleton, Skeleton):
        raise ValueError(f"humanoid limits are placed by joint names on a fabrik.Skeleton, got {type(skeleton).__name__}")
    tables = rig(skeleton)
    lengths = skeleton.bone_lengths
    rest = skeleton.rest_positions()
    parts = classify(skeleton)
    up, left, forward = _body_axes(skeleton, parts, rest)
    leaves = set(skeleton.leaves)
    placed: dict[int, tuple] = {}
    for joint, (part, _side) in sorted(parts.items()):
        spec = LIMITS[part]
        if spec is None:
            continue
        for holder in _holders(skeleton, joint, parts, lengths):
            if holder in leaves or holder in placed:
                continue
            if spec[0] == "cone":
                placed[holder] = (Cone.circular(spec[1] * DEG),)
                continue
            lo, hi = spec[1] * DEG, spec[2] * DEG
            child = _first_bone(skeleton, holder, lengths)
            if child is None:
                continue
            R0 = tables.rest_frames[child]
            s = R0[:, 1]
            towards = -forward if part == "knee" else forward
            axis = np.cross(s, towards)
            if np.linalg.norm(axis) < 0.2:
                placed[holder] = (Cone.circular(max(abs(lo), abs(hi))),)
                continue
            local = R0.T @ (axis / np.linalg.norm(axis))
            local[1] = 0.0
            placed[holder] = (Hinge(tuple(local / np.linalg.norm(local)), lo, hi),)
    unplaced = []
    for j in range(skeleton.n_joints):
        if j in placed or j in leaves:
            continue
        if any(lengths[c] > 0 for c in skeleton.children(j)):
            unplaced.append(skeleton.names[j])
    return {skeleton.names[j]: placed[j] for j in sorted(placed)}, unplaced


__all__ = ["humanoid", "classify", "LIMITS"]
