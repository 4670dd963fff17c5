"""URDF robot descriptions: read one serial arm out of a URDF tree, and write an ``Arm`` as URDF.

``load_urdf(path, tip=None, base=None)`` reads the file (or XML text) with the standard library's
XML parser, checks every value it uses, and follows the joints from ``base`` (default: the root
link) down to ``tip`` (default: the one link where the tree's movable joints end):

* ``revolute``, ``continuous`` and ``prismatic`` joints become the Arm's joints, with their
  ``<axis>`` (normalised; the URDF default is +x) and ``<limit>`` (continuous: unlimited). The
  joint values are the URDF's own: radians (metres for prismatic joints) from the file's zero pose.
* ``fixed`` joints are folded into the neighbouring transforms (the next joint's origin, or the
  tip transform after the last joint).
* ``planar`` and ``floating`` joints on the path are refused, as are mimic joints on it; joints
  off the path (fingers, sensors) are ignored.
* Only the elements URDF defines at the top of ``<robot>`` are read (``<link>`` and ``<joint>``;
  ``<transmission>``, ``<gazebo>`` and the like are skipped): a ``<link>`` needs a unique name, a
  ``<joint>`` a unique name, a URDF type, one ``<parent>`` and one ``<child>`` naming links, at
  most one ``<origin>``, ``<axis>``, ``<limit>`` and ``<mimic>``; ``xyz`` and ``rpy`` are exactly
  three numbers, limits numbers within +-``MAX_LIMIT`` with lower <= upper, axes non-zero.

Lengths are the file's (metres). Meshes are never loaded. Every problem (a missing or malformed
file, a value of the wrong type or out of range, an unknown link, no path from base to tip, an
unsupported joint on the path) raises ``URDFError``, a ``ValueError`` that names the element.

``save_urdf(path, arm, name=...)`` writes any ``Arm`` as a URDF of empty links: the base link,
one link per joint (``<joint name>_link``, the joint's moving frame) and the tip link, joined by
the Arm's joints (revolute, continuous or prismatic) and a fixed joint to the tip. Origins are
written as ``xyz`` and ``rpy`` at full precision (rpy by a decomposition that stays exact at
pitch = +-pi/2, where many DH frames sit), so reading the file back gives the same forward
kinematics to rounding.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from fabrik._validation import MAX_COORDINATE
from fabrik.model.arm import MAX_LIMIT, Arm


class URDFError(ValueError):
    """A URDF file that cannot be read as an arm, or an Arm that URDF cannot express."""


#: The joint types of URDF; ``load_urdf`` takes the first four (``MOVABLE`` and fixed).
JOINT_KINDS = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
#: The joints that become the Arm's joints.
MOVABLE = ("revolute", "continuous", "prismatic")
#: A number as URDF writes it (xs:double without NaN and INF): digits, a point, an exponent.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class _Joint:
    """One ``<joint>`` as read and checked: name, type, parent and child link names, origin (4, 4),
    axis (3,) unit, limits (lower, upper) or None, mimic (the mimicked joint's name) or None."""

    __slots__ = ("name", "type", "parent", "child", "origin", "axis", "limits", "mimic")


class _Robot:
    """The links (names, in file order) and joints (``_Joint``) of a URDF file, and where it came
    from (for messages)."""

    def __init__(self, where: str, links: list[str], joints: list[_Joint]):
        self.where, self.links, self.joints = where, links, joints


def _source(path) -> tuple[bytes, str]:
    """(the XML, a name for messages) of ``path``: a file, or XML text (a str starting with '<')."""
    if isinstance(path, str) and path.lstrip().startswith("<"):
        return path.encode("utf-8"), "the URDF text"
    if isinstance(path, (bytes, bytearray)) and bytes(path).lstrip().startswith(b"<"):
        return bytes(path), "the URDF text"
    try:
        where = Path(path)
    except TypeError:
        raise URDFError(f"a URDF is a file path or XML text (a str starting with '<'), got "
                        f"{type(path).__name__}") from None
    try:
        found = where.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        found = False
    if not found:
        shown = str(path) if len(str(path)) <= 200 else str(path)[:200] + "..."
        raise URDFError(f"URDF file not found: {shown!r} (a URDF is a file path, or XML text starting with '<')")
    try:
        return where.read_bytes(), str(where)
    except OSError as exc:
        raise URDFError(f"cannot read the URDF file {where}: {exc}") from None


def _numbers(text, count: int, what: str) -> list[float]:
    """``count`` finite numbers from a whitespace-separated attribute; URDFError naming ``what``."""
    parts = str(text).split()
    if len(parts) != count or not all(_NUMBER.fullmatch(p) for p in parts):
        raise URDFError(f"{what} must be {count} numbers, got {text!r}")
    values = [float(p) for p in parts]
    if not all(map(math.isfinite, values)):
        raise URDFError(f"{what} is out of range (a number overflows a float): {text!r}")
    return values


def _number(element, attribute: str, what: str, default: float | None = None) -> float | None:
    text = element.get(attribute)
    if text is None:
        return default
    return _numbers(text, 1, f"{what} {attribute}")[0]


def _single(element, tag: str, what: str):
    """The one child ``<tag>`` of ``element`` (None when absent); URDFError when there are two."""
    found = element.findall(tag)
    if len(found) > 1:
        raise URDFError(f"{what} has {len(found)} <{tag}> elements; URDF allows one")
    return found[0] if found else None


def _rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's ``rpy``: ``Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes x, y, z)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _origin(joint, what: str) -> np.ndarray:
    """The joint's ``<origin>`` as a 4x4 transform (identity when absent)."""
    t = np.eye(4)
    origin = _single(joint, "origin", what)
    if origin is None:
        return t
    xyz = _numbers(origin.get("xyz", "0 0 0"), 3, f"{what} <origin> xyz")
    rpy = _numbers(origin.get("rpy", "0 0 0"), 3, f"{what} <origin> rpy")
    if max(map(abs, xyz)) >= MAX_COORDINATE:
        raise URDFError(f"{what} <origin> xyz {xyz} is out of range: coordinates must stay below {MAX_COORDINATE:g}")
    if max(map(abs, rpy)) > MAX_LIMIT:
        raise URDFError(f"{what} <origin> rpy {rpy} is out of range: angles must lie within +-{MAX_LIMIT:g} rad")
    t[:3, :3] = _rpy_matrix(*rpy)
    t[:3, 3] = xyz
    return t


def _link_name(joint, tag: str, what: str, links: set[str]) -> str:
    element = _single(joint, tag, what)
    name = None if element is None else element.get("link")
    if not name:
        raise URDFError(f"{what} needs a <{tag} link=\"...\"/>")
    if name not in links:
        raise URDFError(f"{what}: its {tag} link {name!r} is not a <link> of the file")
    return name


def _read_joint(element, index: int, links: set[str]) -> _Joint:
    joint = _Joint()
    name = element.get("name")
    if not name:
        raise URDFError(f"<joint> number {index + 1} has no name")
    what = f"<joint name={name!r}>"
    kind = element.get("type")
    if kind is None:
        raise URDFError(f"{what} has no type; URDF joint types are {', '.join(JOINT_KINDS)}")
    if kind not in JOINT_KINDS:
        raise URDFError(f"{what} has type {kind!r}; URDF joint types are {', '.join(JOINT_KINDS)}")
    joint.name, joint.type = name, kind
    joint.parent = _link_name(element, "parent", what, links)
    joint.child = _link_name(element, "child", what, links)
    if joint.parent == joint.child:
        raise URDFError(f"{what} joins link {joint.parent!r} to itself")
    joint.origin = _origin(element, what)
    axis = _single(element, "axis", what)
    xyz = np.array(_numbers("1 0 0" if axis is None else axis.get("xyz", "1 0 0"), 3, f"{what} <axis> xyz"))
    big = float(np.abs(xyz).max())
    if big == 0.0:
        raise URDFError(f"{what} has a zero <axis> xyz {xyz.tolist()}")
    xyz /= big  # first: the norm of a huge axis would overflow
    joint.axis = xyz / np.linalg.norm(xyz)
    limit = _single(element, "limit", what)
    joint.limits = None
    if limit is not None:
        lo = _number(limit, "lower", f"{what} <limit>", 0.0)  # the URDF spec's defaults
        hi = _number(limit, "upper", f"{what} <limit>", 0.0)
        for label, value in (("lower", lo), ("upper", hi)):
            if abs(value) > MAX_LIMIT:
                raise URDFError(f"{what} <limit> {label}={value!r} is out of range: limits must lie within "
                                f"+-{MAX_LIMIT:g} (radians, or metres for a prismatic joint)")
        if lo > hi:
            raise URDFError(f"{what} <limit> has lower {lo!r} > upper {hi!r}")
        joint.limits = (lo, hi)
    if kind in ("revolute", "prismatic") and joint.limits is None:
        extra = "; a joint without limits is type=\"continuous\"" if kind == "revolute" else ""
        raise URDFError(f"{kind} joint {name!r} has no <limit> (URDF requires one{extra})")
    mimic = _single(element, "mimic", what)
    joint.mimic = None if mimic is None else (mimic.get("joint") or "?")
    return joint


def _read_robot(path) -> _Robot:
    """The links and joints of a URDF (a file or XML text), every value the Arm uses checked for its
    type and range; URDFError naming the element otherwise."""
    data, where = _source(path)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise URDFError(f"{where} is not well-formed XML: {exc}") from None
    except RecursionError:  # pragma: no cover - expat builds the tree without recursion
        raise URDFError(f"{where} nests its elements too deeply") from None
    if root.tag.rsplit("}", 1)[-1] != "robot":
        raise URDFError(f"{where} is not a URDF file: its root element is <{root.tag}>, not <robot>")
    links: list[str] = []
    seen: set[str] = set()
    for i, element in enumerate(root.findall("link")):
        name = element.get("name")
        if not name:
            raise URDFError(f"{where}: <link> number {i + 1} has no name")
        if name in seen:
            raise URDFError(f"{where}: two <link name={name!r}> elements; link names must be unique")
        seen.add(name)
        links.append(name)
    joints: list[_Joint] = []
    names: set[str] = set()
    for i, element in enumerate(root.findall("joint")):
        try:
            joint = _read_joint(element, i, seen)
        except URDFError as exc:
            raise URDFError(f"{where}: {exc}") from None
        if joint.name in names:
            raise URDFError(f"{where}: two <joint name={joint.name!r}> elements; joint names must be unique")
        names.add(joint.name)
        joints.append(joint)
    if not links:
        raise URDFError(f"{where} has no <link>")
    return _Robot(where, links, joints)


def _tree(robot: _Robot) -> tuple[dict, dict]:
    """(child link -> its joint, link -> the joints below it); URDFError when a link has two parents."""
    parent_joint, below = {}, {name: [] for name in robot.links}
    for joint in robot.joints:
        if joint.child in parent_joint:
            raise URDFError(f"{robot.where}: link {joint.child!r} is the child of two joints, "
                            f"{parent_joint[joint.child].name!r} and {joint.name!r}; a URDF must be a tree")
        parent_joint[joint.child] = joint
        below[joint.parent].append(joint)
    return parent_joint, below


def _root(robot: _Robot, parent_joint: dict) -> str:
    roots = [name for name in robot.links if name not in parent_joint]
    if len(roots) != 1:
        raise URDFError(f"{robot.where} has {len(roots)} root links ({', '.join(roots) or 'none: a cycle'}); "
                        "a URDF is a tree with one root; pass base=")
    return roots[0]


def _default_tip(robot: _Robot, base: str, below: dict) -> str:
    """The only end of the tree's movable joints below ``base`` (module docstring); URDFError naming
    the ends when there are several or none."""
    ends, stack, seen = [], [(base, False)], set()
    while stack:  # depth first, without recursion (a file may nest its links deeply)
        link, moved = stack.pop()
        if link in seen:
            continue
        seen.add(link)
        movable = _movable_below(link, below)
        if not movable and moved:
            ends.append(link)
        stack.extend((j.child, True) for j in movable)
    if len(ends) != 1:
        found = ", ".join(repr(e) for e in ends) or "none"
        raise URDFError(f"{robot.where}: the movable joints below {base!r} end at {len(ends)} links ({found}); "
                        "pass tip= to choose one")
    tip = ends[0]
    while len(below[tip]) == 1 and below[tip][0].type == "fixed":  # a single fixed frame on the end
        tip = below[tip][0].child
    return tip


def _movable_below(link: str, below: dict) -> list:
    """The movable joints below ``link`` and below the links fixed to it (fixed joints followed
    down: one rigid body)."""
    out, stack = [], [link]
    while stack:
        for joint in below[stack.pop()]:
            if joint.type == "fixed":
                stack.append(joint.child)
            else:
                out.append(joint)
    return out


def _path_joints(robot: _Robot, base: str | None, tip: str | None) -> tuple[str, str, list]:
    """``(base, tip, joints from base to tip)`` of the tree; URDFError naming what is wrong."""
    parent_joint, below = _tree(robot)
    for name, value in (("tip", tip), ("base", base)):
        if value is not None and not isinstance(value, str):
            raise URDFError(f"{name} must be a link name (str), got {value!r}")
        if value is not None and value not in below:
            raise URDFError(f"unknown link {value!r} for {name} in {robot.where}; links are: {', '.join(robot.links)}")
    if base is None:
        base = _root(robot, parent_joint)
    if tip is None:
        tip = _default_tip(robot, base, below)
    if tip == base:
        raise URDFError(f"tip and base are the same link, {tip!r}: an arm needs joints between them")
    joints, link = [], tip
    while link != base:
        joint = parent_joint.get(link)
        if joint is None or len(joints) > len(robot.links):
            above = [j.parent for j in joints]
            raise URDFError(f"no path from base {base!r} to tip {tip!r} in {robot.where}: {tip!r} is not below "
                            f"{base!r} (its ancestors: {', '.join(above) or 'none'})")
        joints.append(joint)
        link = joint.parent
    return base, tip, joints[::-1]


def load_urdf(path, *, tip: str | None = None, base: str | None = None) -> Arm:
    """The serial arm of a URDF from link ``base`` (default: the root link) to link ``tip``.

    Args:
        path: the ``.urdf`` file, or the URDF's XML text (a str starting with ``<``).
        tip: the link the arm ends at (its frame is the Arm's tip frame), e.g. ``"panda_hand"``.
            Default: the one link where the movable joints below ``base`` end (links fixed to
            it count as part of it; the tip then follows a single fixed joint from it, as a
            flange frame); URDFError naming the ends when there are several (the Panda's two
            fingers) or none.
        base: the link the arm starts from (the Arm's base frame); default the tree's root.

    Returns:
        An ``Arm`` whose joints are the revolute, continuous and prismatic joints on the path,
        named as in the file, with ``base_name`` and ``tip_name`` the two links.
        ``fabrik.forward(arm, q)`` gives, for the file's joint values q (radians; metres for
        prismatic joints), each joint's frame and the tip frame in the base link's frame, in the
        file's units (metres).

    Raises:
        URDFError: the file is missing or malformed; a value the arm uses is of the wrong type or
            out of range (a number that is not one, an ``xyz`` of other than 3 numbers, limits
            beyond +-``MAX_LIMIT`` or ``lower > upper``, a zero axis, two ``<origin>`` in a joint,
            two links or joints of one name; the message names the element); a link is unknown
            (the message lists the links); there is no path from base to tip; a joint on it is
            planar, floating or a mimic joint; a revolute or prismatic joint lacks its ``<limit>``.
    """
    robot = _read_robot(path)
    base, tip, joints = _path_joints(robot, base, tip)
    names, types, axes, origins, lower, upper = [], [], [], [], [], []
    pending = np.eye(4)  # fixed joints met since the last movable joint
    for joint in joints:
        if joint.type == "fixed":
            pending = pending @ joint.origin
            continue
        if joint.type not in MOVABLE:
            raise URDFError(f"joint {joint.name!r} on the path from {base!r} to {tip!r} is {joint.type!r}; an Arm "
                            "takes revolute, continuous, prismatic and fixed joints only")
        if joint.mimic is not None:
            raise URDFError(f"joint {joint.name!r} on the path mimics {joint.mimic!r}; coupled joints are not "
                            "supported")
        lo, hi = (-math.inf, math.inf) if joint.type == "continuous" else joint.limits
        names.append(joint.name)
        types.append("prismatic" if joint.type == "prismatic" else "revolute")
        axes.append(joint.axis)
        origins.append(pending @ joint.origin)
        lower.append(lo)
        upper.append(hi)
        pending = np.eye(4)
    if not names:
        raise URDFError(f"no revolute, continuous or prismatic joint between {base!r} and {tip!r} in {robot.where}")
    try:
        return Arm(tuple(names), np.array(axes), np.array(origins), pending, np.array(lower), np.array(upper),
                   base, tip, tuple(types))
    except ValueError as exc:
        raise URDFError(f"{robot.where}: {exc}") from None


def urdf_path(path, *, tip: str | None = None, base: str | None = None) -> tuple[str, tuple[tuple[str, str, str], ...]]:
    """The path ``load_urdf`` follows, for tools that read the file themselves (e.g. ikpy):
    ``(base link, ((joint name, joint type, child link), ...))`` from ``base`` (default: the root
    link) down to ``tip`` (default as ``load_urdf``), fixed joints included. URDFError as
    ``load_urdf``."""
    robot = _read_robot(path)
    base, tip, joints = _path_joints(robot, base, tip)
    return base, tuple((j.name, j.type, j.child) for j in joints)


def rpy_from_matrix(rot) -> tuple[float, float, float]:
    """URDF ``rpy`` (radians) of a rotation matrix: ``rot = Rz(yaw) Ry(pitch) Rx(roll)``.

    Yaw is read first, then pitch and roll from ``Rz(-yaw) @ rot = Ry(pitch) Rx(roll)``, whose
    entries used are all of order one, so the angles give back ``rot`` to rounding even at
    pitch = +-pi/2 (where yaw and roll are not unique and any yaw serves)."""
    r = np.asarray(rot, dtype=np.float64)
    yaw = math.atan2(r[1, 0], r[0, 0])
    c, s = math.cos(yaw), math.sin(yaw)
    row0 = c * r[0] + s * r[1]
    row1 = -s * r[0] + c * r[1]
    pitch = math.atan2(-r[2, 0], row0[0])
    roll = math.atan2(-row1[2], row1[1])
    return roll, pitch, yaw


def _text(values) -> str:
    return " ".join(repr(float(v) + 0.0) for v in values)  # + 0.0: no "-0.0"


def _unique(name: str, used: set[str]) -> str:
    candidate, i = name, 1
    while candidate in used:
        candidate, i = f"{name}_{i}", i + 1
    used.add(candidate)
    return candidate


def urdf_string(arm: Arm, *, name: str = "arm") -> str:
    """The URDF text ``save_urdf`` writes for ``arm`` (see the module docstring)."""
    if not isinstance(arm, Arm):
        raise ValueError(f"arm must be a fabrik.Arm, got {type(arm).__name__}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    robot = ET.Element("robot", name=name)
    robot.append(ET.Comment(" written by fabrik.save_urdf: a kinematic chain, no geometry or dynamics "))
    used_links = {arm.base_name, arm.tip_name}
    links = [arm.base_name] + [_unique(f"{j}_link", used_links) for j in arm.joint_names] + [arm.tip_name]
    if arm.base_name == arm.tip_name:
        raise URDFError(f"base_name and tip_name are both {arm.base_name!r}; URDF link names must differ")
    for link in links:
        ET.SubElement(robot, "link", name=link)
    transforms = list(arm.origins) + [arm.tip]
    tip_joint = _unique(f"{arm.tip_name}_joint", set(arm.joint_names))
    for k, transform in enumerate(transforms):
        lo, hi = (arm.lower[k], arm.upper[k]) if k < arm.n_joints else (0.0, 0.0)
        if k == arm.n_joints:
            kind = "fixed"
        elif arm.prismatic[k]:
            kind = "prismatic"
        elif math.isinf(lo) and math.isinf(hi):
            kind = "continuous"
        elif math.isinf(lo) or math.isinf(hi):
            raise URDFError(f"joint {arm.joint_names[k]!r} is limited on one side only (lower={lo}, upper={hi}); "
                            "URDF needs both limits or none")
        else:
            kind = "revolute"
        joint = ET.SubElement(robot, "joint", name=arm.joint_names[k] if k < arm.n_joints else tip_joint, type=kind)
        ET.SubElement(joint, "parent", link=links[k])
        ET.SubElement(joint, "child", link=links[k + 1])
        ET.SubElement(joint, "origin", xyz=_text(transform[:3, 3]), rpy=_text(rpy_from_matrix(transform[:3, :3])))
        if kind != "fixed":
            ET.SubElement(joint, "axis", xyz=_text(arm.axes[k]))
        if kind in ("revolute", "prismatic"):  # effort and velocity are required by the spec; no dynamics here
            ET.SubElement(joint, "limit", lower=repr(float(lo)), upper=repr(float(hi)), effort="0", velocity="0")
    ET.indent(robot)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def save_urdf(path, arm: Arm, *, name: str = "arm") -> None:
    """Write ``arm`` to ``path`` as a URDF robot called ``name``.

    Links: ``arm.base_name``, ``<joint>_link`` for each joint (its moving frame; a suffix keeps
    names distinct) and ``arm.tip_name``. Joints: the Arm's, ``revolute`` with their limits
    (effort and velocity 0: no dynamics) or ``continuous`` when unlimited, ``prismatic`` with
    their limits (metres), then a fixed joint
    ``<tip_name>_joint`` carrying ``arm.tip``. ``load_urdf(path, tip=arm.tip_name)`` reads it
    back with the same forward kinematics. A joint limited on one side only cannot be written
    (URDFError).
    """
    text = urdf_string(arm, name=name)
    Path(path).write_text(text, encoding="utf-8")


__all__ = ["URDFError", "load_urdf", "save_urdf", "urdf_string", "urdf_path", "rpy_from_matrix"]
