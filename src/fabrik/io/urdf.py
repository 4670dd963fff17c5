"""URDF robot descriptions: read one serial arm out of a URDF tree, and write an ``Arm`` as URDF.

``load_urdf(path, tip=..., base=None)`` parses the file with yourdfpy (imported on first use) and
follows the joints from ``base`` (default: the root link) down to ``tip``:

* ``revolute`` and ``continuous`` joints become the Arm's joints, with their ``<axis>``
  (normalised; the URDF default is +x) and ``<limit>`` (continuous: unlimited). The joint values
  are the URDF's own: radians from the file's zero pose.
* ``fixed`` joints are folded into the neighbouring transforms (the next joint's origin, or the
  tip transform after the last joint).
* ``prismatic``, ``planar`` and ``floating`` joints on the path are refused (an ``Arm`` has
  revolute joints only), as are mimic joints on it; joints off the path (fingers, sensors) are
  ignored.

Lengths are the file's (metres). Meshes are never loaded. Every problem (a missing or malformed
file, an unknown link, no path from base to tip, an unsupported joint on the path) raises
``URDFError``, a ``ValueError`` that names it.

``save_urdf(path, arm, name=...)`` writes any ``Arm`` as a URDF of empty links: the base link,
one link per joint (``<joint name>_link``, the joint's moving frame) and the tip link, joined by
the Arm's joints and a fixed joint to the tip. Origins are written as ``xyz`` and ``rpy`` at full
precision (rpy by a decomposition that stays exact at pitch = +-pi/2, where many DH frames sit),
so reading the file back gives the same forward kinematics to rounding.
"""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from fabrik.model.arm import Arm


class URDFError(ValueError):
    """A URDF file that cannot be read as an arm, or an Arm that URDF cannot express."""


def _yourdfpy():
    try:
        import yourdfpy
    except ImportError:  # pragma: no cover - a declared dependency
        raise ImportError("load_urdf needs yourdfpy: pip install 'yourdfpy>=0.0.56'") from None
    return yourdfpy


def _read_robot(path: Path):
    """The yourdfpy ``Robot`` of ``path``; URDFError for a missing, unreadable or malformed file."""
    if not path.is_file():
        raise URDFError(f"URDF file not found: {path}")
    data = path.read_bytes()
    try:  # yourdfpy falls back to a forgiving parser on broken XML; refuse it first
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise URDFError(f"{path} is not well-formed XML: {exc}") from None
    if root.tag.rsplit("}", 1)[-1] != "robot":
        raise URDFError(f"{path} is not a URDF file: its root element is <{root.tag}>, not <robot>")
    try:
        model = _yourdfpy().URDF.load(io.BytesIO(data), build_scene_graph=False, load_meshes=False,
                                      build_collision_scene_graph=False, load_collision_meshes=False)
    except Exception as exc:  # yourdfpy raises AttributeError, KeyError, ... on incomplete elements
        raise URDFError(f"yourdfpy could not read {path}: {type(exc).__name__}: {exc}") from None
    return model.robot


def _path_joints(robot, base: str | None, tip: str, where: Path) -> tuple[str, list]:
    """``(base, joints from base to tip)`` of the tree; URDFError naming what is wrong."""
    links = [link.name for link in robot.links]
    parent_joint = {}
    for joint in robot.joints:
        if joint.child in parent_joint:
            raise URDFError(f"{where}: link {joint.child!r} is the child of two joints, "
                            f"{parent_joint[joint.child].name!r} and {joint.name!r}; a URDF must be a tree")
        parent_joint[joint.child] = joint
    for name, value in (("tip", tip), ("base", base)):
        if value is not None and value not in links:
            raise URDFError(f"unknown link {value!r} for {name} in {where}; links are: {', '.join(links)}")
    if base is None:
        roots = [name for name in links if name not in parent_joint]
        if len(roots) != 1:
            raise URDFError(f"{where} has {len(roots)} root links ({', '.join(roots) or 'none'}); pass base=")
        base = roots[0]
    if tip == base:
        raise URDFError(f"tip and base are the same link, {tip!r}: an arm needs joints between them")
    joints, link = [], tip
    while link != base:
        joint = parent_joint.get(link)
        if joint is None or len(joints) > len(links):
            above = [j.parent for j in joints]
            raise URDFError(f"no path from base {base!r} to tip {tip!r} in {where}: {tip!r} is not below {base!r} "
                            f"(its ancestors: {', '.join(above) or 'none'})")
        joints.append(joint)
        link = joint.parent
    return base, joints[::-1]


def load_urdf(path, *, tip: str, base: str | None = None) -> Arm:
    """The serial arm of a URDF file from link ``base`` (default: the root link) to link ``tip``.

    Args:
        path: the ``.urdf`` file.
        tip: the link the arm ends at (its frame is the Arm's tip frame), e.g. ``"panda_hand"``.
        base: the link the arm starts from (the Arm's base frame); default the tree's root.

    Returns:
        An ``Arm`` whose joints are the revolute and continuous joints on the path, named as in
        the file, with ``base_name`` and ``tip_name`` the two links. ``fabrik.forward(arm, q)``
        gives, for the file's joint values q (radians), each joint's frame and the tip frame in
        the base link's frame, in the file's units (metres).

    Raises:
        URDFError: the file is missing or malformed, a link is unknown (the message lists the
            links), there is no path from base to tip, a joint on it is prismatic, planar,
            floating or a mimic joint, or a revolute joint lacks its ``<limit>``.
    """
    where = Path(path)
    robot = _read_robot(where)
    if not isinstance(tip, str):
        raise URDFError(f"tip must be a link name (str), got {tip!r}")
    base, joints = _path_joints(robot, base, tip, where)
    names, axes, origins, lower, upper = [], [], [], [], []
    pending = np.eye(4)  # fixed joints met since the last revolute joint
    for joint in joints:
        origin = np.eye(4) if joint.origin is None else np.asarray(joint.origin, dtype=np.float64)
        if joint.type == "fixed":
            pending = pending @ origin
            continue
        if joint.type not in ("revolute", "continuous"):
            raise URDFError(f"joint {joint.name!r} on the path from {base!r} to {tip!r} is {joint.type!r}; an Arm "
                            "takes revolute, continuous and fixed joints only")
        if joint.mimic is not None:
            raise URDFError(f"joint {joint.name!r} on the path mimics {joint.mimic.joint!r}; coupled joints are not "
                            "supported")
        axis = np.asarray(joint.axis, dtype=np.float64)
        if not np.isfinite(axis).all() or np.linalg.norm(axis) < 1e-12:
            raise URDFError(f"joint {joint.name!r} has a zero or non-finite <axis> {axis}")
        if joint.type == "continuous":
            lo, hi = -math.inf, math.inf
        elif joint.limit is None:
            raise URDFError(f"revolute joint {joint.name!r} has no <limit> (URDF requires one; a joint without "
                            "limits is type=\"continuous\")")
        else:  # the URDF spec's defaults for absent lower/upper are 0
            lo = 0.0 if joint.limit.lower is None else float(joint.limit.lower)
            hi = 0.0 if joint.limit.upper is None else float(joint.limit.upper)
        names.append(joint.name)
        axes.append(axis / np.linalg.norm(axis))
        origins.append(pending @ origin)
        lower.append(lo)
        upper.append(hi)
        pending = np.eye(4)
    if not names:
        raise URDFError(f"no revolute or continuous joint between {base!r} and {tip!r} in {where}")
    try:
        return Arm(tuple(names), np.array(axes), np.array(origins), pending, np.array(lower), np.array(upper),
                   base, tip)
    except ValueError as exc:
        raise URDFError(f"{where}: {exc}") from None


def urdf_path(path, *, tip: str, base: str | None = None) -> tuple[str, tuple[tuple[str, str, str], ...]]:
    """The path ``load_urdf`` follows, for tools that read the file themselves (e.g. ikpy):
    ``(base link, ((joint name, joint type, child link), ...))`` from ``base`` (default: the root
    link) down to ``tip``, fixed joints included. URDFError as ``load_urdf``."""
    where = Path(path)
    robot = _read_robot(where)
    if not isinstance(tip, str):
        raise URDFError(f"tip must be a link name (str), got {tip!r}")
    base, joints = _path_joints(robot, base, tip, where)
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


def _numbers(values) -> str:
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
        ET.SubElement(joint, "origin", xyz=_numbers(transform[:3, 3]), rpy=_numbers(rpy_from_matrix(transform[:3, :3])))
        if kind != "fixed":
            ET.SubElement(joint, "axis", xyz=_numbers(arm.axes[k]))
        if kind == "revolute":  # effort and velocity are required by the spec; the Arm has no dynamics
            ET.SubElement(joint, "limit", lower=repr(float(lo)), upper=repr(float(hi)), effort="0", velocity="0")
    ET.indent(robot)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def save_urdf(path, arm: Arm, *, name: str = "arm") -> None:
    """Write ``arm`` to ``path`` as a URDF robot called ``name``.

    Links: ``arm.base_name``, ``<joint>_link`` for each joint (its moving frame; a suffix keeps
    names distinct) and ``arm.tip_name``. Joints: the Arm's, ``revolute`` with their limits
    (effort and velocity 0: no dynamics) or ``continuous`` when unlimited, then a fixed joint
    ``<tip_name>_joint`` carrying ``arm.tip``. ``load_urdf(path, tip=arm.tip_name)`` reads it
    back with the same forward kinematics. A joint limited on one side only cannot be written
    (URDFError).
    """
    text = urdf_string(arm, name=name)
    Path(path).write_text(text, encoding="utf-8")


__all__ = ["URDFError", "load_urdf", "save_urdf", "urdf_string", "urdf_path", "rpy_from_matrix"]
