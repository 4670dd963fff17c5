"""Robots with prismatic joints, as URDF text, for the tests and benchmarks of ``fabrik.Arm``'s
prismatic joints: a SCARA arm and a Cartesian gantry written here, and two of the real robots of
``../shared/data/urdf`` put on a linear axis (a Panda on a rail, a UR5 on a lift).

Every function returns URDF text, which ``fabrik.load_urdf`` takes as it is (a str starting with
``<``); lengths in metres, prismatic limits in metres, revolute limits in radians.

* ``scara_urdf()``: 4 joints, RRPR: two vertical hinges (0.40 m and 0.30 m links), a vertical
  slide (0 to 0.30 m, downwards), a tool roll; 4 degrees of freedom, so its reachable poses turn
  about the vertical only.
* ``gantry_urdf()``: 6 joints, PPPRRR: slides along x (0 to 2 m), y (0 to 1.5 m) and z (-0.8 to
  0 m), then a wrist of three hinges (z, y, x) with offsets of 0.10 m and 0.08 m.
* ``on_rail(urdf_text, root_link, ...)``: any URDF with a prismatic joint added below its root,
  from a new root link: ``on_rail(panda, "panda_link0")`` is the Panda on a rail along y (-1 to
  1 m), ``on_rail(ur5, "world", axis="0 0 1", lower=0.0, upper=0.6)`` the UR5 on a lift.
"""

from __future__ import annotations

_LIMIT = '<limit lower="{lo}" upper="{hi}" effort="100" velocity="1"/>'


def _joint(name, kind, parent, child, xyz, axis, lo=None, hi=None, rpy="0 0 0") -> str:
    limit = "" if lo is None else _LIMIT.format(lo=lo, hi=hi)
    return (f'  <joint name="{name}" type="{kind}">\n    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
            f'    <origin xyz="{xyz}" rpy="{rpy}"/>\n    <axis xyz="{axis}"/>\n    {limit}\n  </joint>\n')


def _robot(name: str, links: list[str], joints: list[str]) -> str:
    body = "".join(f'  <link name="{link}"/>\n' for link in links) + "".join(joints)
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}</robot>\n'


def scara_urdf() -> str:
    """A SCARA arm (module docstring): base -> tool, joints j1 j2 (hinges), j3 (slide), j4 (roll)."""
    links = ["base", "link1", "link2", "quill", "tool_link", "tool"]
    joints = [_joint("j1", "revolute", "base", "link1", "0 0 0.4", "0 0 1", -2.5, 2.5),
              _joint("j2", "revolute", "link1", "link2", "0.4 0 0", "0 0 1", -2.6, 2.6),
              _joint("j3", "prismatic", "link2", "quill", "0.3 0 0", "0 0 -1", 0.0, 0.3),
              _joint("j4", "revolute", "quill", "tool_link", "0 0 -0.05", "0 0 1", -6.283, 6.283),
              '  <joint name="flange" type="fixed">\n    <parent link="tool_link"/>\n    <child link="tool"/>\n'
              '    <origin xyz="0 0 -0.05" rpy="3.141592653589793 0 0"/>\n  </joint>\n']
    return _robot("scara", links, joints)


def gantry_urdf() -> str:
    """A Cartesian gantry with a 3-hinge wrist (module docstring): base -> tool."""
    links = ["base", "carriage_x", "carriage_y", "quill", "wrist_1", "wrist_2", "wrist_3", "tool"]
    joints = [_joint("x", "prismatic", "base", "carriage_x", "0 0 1.2", "1 0 0", 0.0, 2.0),
              _joint("y", "prismatic", "carriage_x", "carriage_y", "0 0 0", "0 1 0", 0.0, 1.5),
              _joint("z", "prismatic", "carriage_y", "quill", "0 0 0", "0 0 1", -0.8, 0.0),
              _joint("a", "revolute", "quill", "wrist_1", "0 0 -0.1", "0 0 1", -3.0, 3.0),
              _joint("b", "revolute", "wrist_1", "wrist_2", "0 0 -0.08", "0 1 0", -2.0, 2.0),
              _joint("c", "revolute", "wrist_2", "wrist_3", "0 0 -0.08", "1 0 0", -3.0, 3.0),
              '  <joint name="flange" type="fixed">\n    <parent link="wrist_3"/>\n    <child link="tool"/>\n'
              '    <origin xyz="0 0 -0.06" rpy="0 0 0"/>\n  </joint>\n']
    return _robot("gantry", links, joints)


def on_rail(urdf_text: str, root_link: str, *, axis: str = "0 1 0", lower: float = -1.0, upper: float = 1.0,
            name: str = "rail") -> str:
    """``urdf_text`` with a new root link ``<name>_base`` and a prismatic joint ``<name>_joint``
    (``axis``, limits in metres) carrying its old root ``root_link``."""
    addition = f'  <link name="{name}_base"/>\n' + _joint(f"{name}_joint", "prismatic", f"{name}_base", root_link,
                                                            "0 0 0", axis, lower, upper)
    end = urdf_text.rindex("</robot>")
    return urdf_text[:end] + addition + urdf_text[end:]


__all__ = ["scara_urdf", "gantry_urdf", "on_rail"]
