"""A default set of human joint limits, placed on a skeleton by its joint names.

``humanoid(skeleton) -> (constraints, unplaced)``: ``constraints`` maps joint names to tuples of
``Cone``/``Hinge`` limits ready for ``skeleton.with_constraints``; ``unplaced`` lists the joints
that could carry a limit (they have a bone of non-zero length leaving them) but matched no rule.

Conventions are those of ``fabrik.solvers.skeleton_fabrik``: a limit on joint j
restricts the bones leaving j, about their rest directions, relative to the bone arriving at j.
So the limit for a body part goes on the joint where that part's bone *starts*: the knee hinge on
the joint at the knee (CMU ``LeftKnee``, Mixamo ``LeftLeg``), which bends the shin against the
thigh. Where a named joint's bones are all zero-length (CMU ``Hips``, ``LeftWrist``) the limit
moves down to the zero-length children that hold the real bones (``LHipJoint``, ``lhand``)
unless those match a rule of their own (``LThumb`` is a finger, not the wrist).

Recognised names (case-insensitive; a ``prefix:`` such as ``mixamorig:`` or a leading
``mixamorig`` is ignored; the side is ``Left``/``Right``/``L``/``R`` at the start or end, fused
or separated by ``_``, ``.``, ``-`` or a space, or a word of its own after a prefix word, as
3ds Max Biped's ``Bip01 L Thigh``; prefix words are also dropped, as in ``Bip01 Head`` or
Rigify's ``DEF-upper_arm.L``; trailing digits are ignored):

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
shoulder joint, unless another shoulder joint lies below it before the elbow (Unity's
``LeftShoulder`` above ``LeftUpperArm``, Blender's ``shoulder.L`` above ``upper_arm.L``): then it
is the clavicle. Biped's ``Finger0`` (``Finger01``, ...) is the thumb.

Cones are circular (they mean the same in any frame). Hinges need their axis, computed from the
rest pose: *up* is the direction from the root to the neck/head (else +Y), *left* from the
right-side hips (else shoulders, else any joints) to the left-side ones (else +X), *forward* =
left x up (right-handed). A knee
bends its shin backwards: axis = shin x backward; an elbow bends its forearm forwards: axis =
forearm x forward; each made a unit vector perpendicular to the bone and expressed in the bone's
reference frame. Where that is undefined (a limb along the forward axis at rest) the hinge falls
back to a circular cone of its largest angle. Angles allow about 6 degrees of over-extension
past the rest pose. The numbers are generic adult ranges of motion, not fitted to a person.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

import numpy as np

from fabrik.model.constraints import Cone, Hinge
from fabrik.model.geometry import kabsch

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
    # a side word between other words: 3ds Max Biped "Bip01 L Thigh", "Bip01_R_Forearm"; the
    # words after it name the part, the ones before it are a prefix
    for k in range(1, len(low) - 1):
        if low[k] in _SIDE_WORDS:
            out.append((_SIDE_WORDS[low[k]], "".join(low[k + 1:])))
    # a side word last after prefix words: Rigify's deform bones "DEF-upper_arm.L", "ORG-thigh.R"
    if len(low) > 2 and low[-1] in _SIDE_WORDS:
        for k in range(1, len(low) - 1):
            out.append((_SIDE_WORDS[low[-1]], "".join(low[k:-1])))
    joined = "".join(low)
    for word, side in (("left", "l"), ("right", "r")):
        if joined.startswith(word) and len(joined) > len(word):
            out.append((side, joined[len(word):]))
        if joined.endswith(word) and len(joined) > len(word):
            out.append((side, joined[:-len(word)]))
    out.append((None, joined))
    # without a side, the words after a prefix word ("Bip01 Head", "DEF-neck")
    for k in range(1, len(low)):
        out.append((None, "".join(low[k:])))
    # fused one-letter side, tried last: CMU "LHipJoint", "lhand", "RThumb" (not "lowerback")
    if len(joined) > 1 and joined[0] in "lr":
        out.append((joined[0], joined[1:]))
    return out


def _part_of(rest: str, mixamo: bool) -> str | None:
    if re.fullmatch(r"finger0\d*", rest):
        return "thumb"  # 3ds Max Biped: Finger0 is the thumb, Finger1 to Finger4 the others
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
    or None). The root named like a pelvis/hips counts as ``pelvis``. A joint named as a
    shoulder with another shoulder joint below it (Unity's ``LeftShoulder`` above
    ``LeftUpperArm``, Blender's ``shoulder.L`` above ``upper_arm.L``) is the collar."""
    names = skeleton.names
    mixamo = any(("upleg" in k or "forearm" in k) for k in (re.sub(r"[^a-z]", "", _strip(n).lower()) for n in names))
    out: dict[int, tuple[str, str | None]] = {}
    for idx, name in enumerate(names):
        if idx == 0:
            for _side, rest in _split_side(name):
                if rest in ("hips", "hip", "pelvis", "root", "hipsroot"):
                    out[0] = ("pelvis", None)
                    break
            continue
        for side, rest in _split_side(name):
            part = _part_of(rest, mixamo)
            if part is None:
                continue
            out[idx] = (part, side)
            break
    # a shoulder above another shoulder (before an elbow) is the collar bone's joint
    parents = skeleton.parents
    for idx in range(skeleton.n_joints - 1, 0, -1):
        if out.get(idx, ("",))[0] != "shoulder":
            continue
        j = int(parents[idx])
        while j > 0 and out.get(j, ("",))[0] not in ("elbow", "wrist", "spine", "neck", "head", "pelvis"):
            if out.get(j, ("",))[0] == "shoulder":
                out[j] = ("collar", out[j][1])
            j = int(parents[j])
    return out


class BodyAxes(NamedTuple):
    """The body's axes in the rest pose's coordinates (unit vectors, right-handed or not: a
    mirrored rig's ``forward`` is ``-(left x up)``), and what each came from."""

    up: np.ndarray
    left: np.ndarray
    forward: np.ndarray
    sources: dict


def _unit(v: np.ndarray) -> np.ndarray | None:
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-12 else None


def _size(positions: np.ndarray) -> float:
    return max(float(np.ptp(positions, axis=0).max()), 1e-300)


def _up_left(skeleton, parts, p: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None, dict]:
    """(up, left, sources) from positions ``p`` (n, 3): up from the root towards the neck and
    head (else the spine, else away from the ankles), left from the right-side hips (else
    shoulders, else every sided joint) to the left-side ones, made perpendicular to up."""
    sources = {}
    up = None
    for group, label in ((("head", "neck"), "root to neck/head"), (("spine",), "root to spine"),
                         (("ankle", "knee"), "ankles to root")):
        idx = [i for i, (part, _) in parts.items() if part in group]
        if not idx:
            continue
        d = p[idx].mean(axis=0) - p[0]
        if group[0] == "ankle":
            d = -d
        up = _unit(d)
        if up is not None and float(np.linalg.norm(d)) > 1e-3 * _size(p):
            sources["up"] = label
            break
        up = None
    if up is not None:
        up = _snap(up)  # before left is made perpendicular to it, so that left stays horizontal
    left = None
    # the hips first: a captured rest pose's shoulders are often less symmetric than its hips
    # (CMU 131's lean 0.7 degrees off its hips' axis)
    for group, label in ((("hip", "pelvis", "knee"), "right to left hips"),
                         (("collar", "shoulder"), "right to left shoulders"), (None, "right-side to left-side joints")):
        lefts = [i for i, (part, side) in parts.items() if side == "l" and (group is None or part in group)]
        rights = [i for i, (part, side) in parts.items() if side == "r" and (group is None or part in group)]
        if not lefts or not rights:
            continue
        d = p[lefts].mean(axis=0) - p[rights].mean(axis=0)
        if up is not None:
            d = d - np.dot(d, up) * up
        if float(np.linalg.norm(d)) > 1e-3 * _size(p):
            left = d / np.linalg.norm(d)
            sources["left"] = label
            break
    return up, left, sources


def _forward_cue(skeleton, parts, p: np.ndarray, lengths: np.ndarray, up: np.ndarray,
                 left: np.ndarray) -> tuple[float, str | None]:
    """(signed strength, source) of the evidence in positions ``p`` that the body faces
    ``left x up`` (positive) or away from it: the feet (ankle to toe bones point forward), else
    the knees (bent forward), else the elbows (bent backward). 0 when the pose shows none."""
    side = np.cross(left, up)

    def first_child_end(j):
        c = _first_bone(skeleton, j, lengths)
        return None if c is None else c

    cues = []
    feet = [i for i, (part, _) in parts.items() if part in ("ankle", "toe")]
    if feet:
        total, count = 0.0, 0.0
        for j in feet:
            c = first_child_end(j)
            if c is None:
                continue
            d = p[c] - p[j]
            total += float(np.dot(d, side))
            count += float(np.linalg.norm(d))
        if count > 0:
            cues.append((total / count, "the feet"))
    for part, sign, label in (("knee", 1.0, "the knee bend"), ("elbow", -1.0, "the elbow bend")):
        total, count = 0.0, 0.0
        for j in [i for i, (q, _) in parts.items() if q == part]:
            c = first_child_end(j)
            top = int(skeleton.parents[j])
            while top > 0 and float(np.linalg.norm(p[top] - p[j])) <= 1e-9 * _size(p):
                top = int(skeleton.parents[top])
            if c is None or top < 0:
                continue
            d = p[j] - 0.5 * (p[top] + p[c])
            total += sign * float(np.dot(d, side))
            count += float(np.linalg.norm(p[c] - p[top]))
        if count > 0:
            cues.append((total / count, label))
    for strength, label in cues:
        if abs(strength) >= FORWARD_CUE:
            return strength, label
    return 0.0, None


#: The least forward evidence (a foot's forward reach per unit of its length, a knee's or
#: elbow's bend per unit of the limb's span) that tells which way a pose faces.
FORWARD_CUE = 0.02


def _torso_rotation(parts, rest: np.ndarray, pose: np.ndarray) -> np.ndarray:
    """The least-squares rotation of the torso (root, spine, neck, head, hips, shoulders) from
    ``rest`` to ``pose``, for carrying axes found in a pose back to the rest pose."""
    torso = [0] + [i for i, (part, _) in parts.items()
                   if part in ("pelvis", "spine", "neck", "head", "hip", "collar", "shoulder")]
    return kabsch(pose[torso] - pose[torso].mean(axis=0), rest[torso] - rest[torso].mean(axis=0))


#: An up axis within this angle of a coordinate axis is taken to be that axis: rigs stand along
#: their file's vertical, and a spine leaning back by a few degrees at rest (the procedural walk's
#: rig: 0.5 degrees) should not tilt every hinge axis with it. Left (from the hips and shoulders)
#: is not snapped, so that a rig turned about the vertical by any angle gets the same limits.
SNAP_ANGLE = math.radians(10.0)


def _snap(v: np.ndarray) -> np.ndarray:
    k = int(np.argmax(np.abs(v)))
    if abs(v[k]) >= math.cos(SNAP_ANGLE):
        out = np.zeros(3)
        out[k] = math.copysign(1.0, v[k])
        return out
    return v


def body_axes(skeleton, pose=None) -> BodyAxes:
    """Up, left and forward of a skeleton's body in its rest pose (module docstring).

    Up runs from the root to the neck and head (else the spine; else from the ankles to the
    root), left from the right hips (else shoulders) to the left ones, both taken from the joint names
    (``classify``); forward is perpendicular to both and points where the feet point (else
    where the knees bend, else opposite to where the elbows bend), so a mirrored rig's forward
    is found, not assumed right-handed. Where the rest pose shows none of these (a rig standing
    with straight limbs and no feet, or a rest pose that is no pose at all), ``pose`` (n, 3), a
    take's first frame, is looked at instead, and its axes are carried back to the rest pose
    by the torso's rotation; failing that, forward = left x up (a right-handed body) and up +Y,
    left +X where there are no names to go by. Up within ``SNAP_ANGLE`` of a coordinate axis
    is taken to be that axis (left is only made perpendicular to it). ``sources`` says which cue gave each axis.
    """
    from fabrik._validation import as_points

    parts = classify(skeleton)
    rest = skeleton.rest_positions()
    lengths = skeleton.bone_lengths
    p = None if pose is None else as_points(pose, "pose", dim=3)
    if p is not None and p.shape != rest.shape:
        raise ValueError(f"pose must have shape {rest.shape} (one position per joint), got {p.shape}")
    if p is not None and not np.isfinite(p).all():
        raise ValueError("pose contains a non-finite value (NaN or inf)")
    up, left, sources = _up_left(skeleton, parts, rest)
    turn = None
    if p is not None and (up is None or left is None):
        turn = _torso_rotation(parts, rest, p)
        up2, left2, src2 = _up_left(skeleton, parts, p)
        if up is None and up2 is not None:
            up, sources["up"] = turn.T @ up2, "first frame: " + src2["up"]
        if left is None and left2 is not None:
            left, sources["left"] = turn.T @ left2, "first frame: " + src2["left"]
    if up is None:
        up, sources["up"] = np.array([0.0, 1.0, 0.0]), "assumed +Y"
    if left is None:
        guess = np.array([1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
        left, sources["left"] = guess, "assumed +X"
    up = _snap(up)
    # left is not snapped: a rig turned about the vertical (a take exported facing 5 degrees off
    # an axis) keeps its hinges across its own body
    left = _unit(left - np.dot(left, up) * up)
    side = np.cross(left, up)
    strength, label = _forward_cue(skeleton, parts, rest, lengths, up, left)
    if label is not None:
        sources["forward"] = label
    elif p is not None:
        turn = _torso_rotation(parts, rest, p) if turn is None else turn
        strength, label = _forward_cue(skeleton, parts, p, lengths, turn @ up, turn @ left)
        if label is not None:
            sources["forward"] = "first frame: " + label
    if label is None:
        strength, sources["forward"] = 1.0, "assumed left x up (a right-handed body)"
    forward = side if strength > 0 else -side
    return BodyAxes(up, left, forward, sources)


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


def humanoid(skeleton, pose=None) -> tuple[dict[str, tuple], list[str]]:
    """Default human joint limits for ``skeleton``, placed by joint names (module docstring).

    Hinge axes come from the skeleton's own body axes (``body_axes``): a knee turns its shin
    about the body's left-right axis made perpendicular to the shin, backwards; an elbow its
    forearm forwards. A hinge whose limb is bent at rest has its range shifted by the rest bend,
    so that the anatomical range (straight = 0) holds whatever pose the rig rests in.

    Args:
        skeleton: a ``fabrik.Skeleton``.
        pose: optional (n, 3) joint positions, e.g. a take's first frame, looked at where the
            rest pose cannot tell which way the body faces (``body_axes``).

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
    axes = body_axes(skeleton, pose)
    forward = axes.forward
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
            axis = axis / np.linalg.norm(axis)
            bend = _rest_bend(skeleton, holder, child, rest, axis)
            local = R0.T @ axis
            local[1] = 0.0
            lo, hi = lo - bend, hi - bend
            placed[holder] = (Hinge(tuple(local / np.linalg.norm(local)), max(lo, -math.pi), min(hi, math.pi)),)
    unplaced = []
    for j in range(skeleton.n_joints):
        if j in placed or j in leaves:
            continue
        if any(lengths[c] > 0 for c in skeleton.children(j)):
            unplaced.append(skeleton.names[j])
    return {skeleton.names[j]: placed[j] for j in sorted(placed)}, unplaced


def _rest_bend(skeleton, holder: int, child: int, rest: np.ndarray, axis: np.ndarray) -> float:
    """The rest pose's flexion (radians) at a hinge: the signed angle, about ``axis``, from the
    bone arriving at ``holder`` (through zero-length bones) to the bone reaching ``child``;
    0 where no bone arrives."""
    top = int(skeleton.parents[holder])
    size = _size(rest)
    while top > 0 and float(np.linalg.norm(rest[top] - rest[holder])) <= 1e-9 * size:
        top = int(skeleton.parents[top])
    if top < 0 or float(np.linalg.norm(rest[holder] - rest[top])) <= 1e-9 * size:
        return 0.0
    a = rest[holder] - rest[top]
    b = rest[child] - rest[int(skeleton.parents[child])]
    a = a - np.dot(a, axis) * axis
    b = b - np.dot(b, axis) * axis
    if np.linalg.norm(a) < 1e-12 or np.linalg.norm(b) < 1e-12:
        return 0.0
    return float(math.atan2(np.dot(np.cross(a, b), axis), np.dot(a, b)))


__all__ = ["humanoid", "classify", "body_axes", "BodyAxes", "LIMITS", "FORWARD_CUE", "SNAP_ANGLE"]
