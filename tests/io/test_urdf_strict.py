"""The URDF reader checks what it uses (issue 40.8): values of the wrong type or out of range,
repeated elements and names raise ``URDFError`` naming the element; ``load_urdf`` takes XML
text and defaults ``tip`` to the one end of the movable joints (issue 41.4)."""

import math
import re

import numpy as np
import pytest

import fabrik
from fabrik import URDFError, load_urdf
from fabrik.constraints import Hinge


def robot(joints: str, links=None) -> str:
    """A URDF of the joints' links (or ``links``) and the joints."""
    if links is None:
        links = list(dict.fromkeys(re.findall(r'link="([^"]*)"', joints)))
    return '<robot name="r">' + "".join(f'<link name="{n}"/>' for n in links) + joints + "</robot>"


def joint(name="j", kind="revolute", parent="a", child="b", body='<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>'
          '<limit lower="-1" upper="1" effort="1" velocity="1"/>'):
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{body}</joint>'


def test_a_good_file_loads_from_text():
    arm = load_urdf(robot(joint() + joint("k", "prismatic", "b", "c")))
    assert arm.joint_names == ("j", "k") and arm.joint_types == ("revolute", "prismatic") and arm.tip_name == "c"
    assert load_urdf("\n  " + robot(joint())).n_joints == 1  # leading white space


@pytest.mark.parametrize("body, words", [
    ('<origin xyz="1 0 0 0"/><limit lower="-1" upper="1"/>', r"<origin> xyz must be 3 numbers, got '1 0 0 0'"),
    ('<origin xyz="1 0"/><limit lower="-1" upper="1"/>', r"<origin> xyz must be 3 numbers"),
    ('<origin rpy="0 0 nan"/><limit lower="-1" upper="1"/>', r"<origin> rpy must be 3 numbers"),
    ('<origin xyz="1e400 0 0"/><limit lower="-1" upper="1"/>', r"out of range \(a number overflows"),
    ('<origin xyz="0 0 0"/><origin xyz="1 0 0"/><limit lower="-1" upper="1"/>', r"has 2 <origin> elements"),
    ('<axis xyz="0 0 0"/><limit lower="-1" upper="1"/>', r"has a zero <axis>"),
    ('<axis xyz="1 x 0"/><limit lower="-1" upper="1"/>', r"<axis> xyz must be 3 numbers"),
    ('<limit lower="-1e308" upper="1e308"/>', r"<limit> lower=-1e\+308 is out of range"),
    ('<limit lower="-inf" upper="1"/>', r"<limit> lower must be 1 numbers"),
    ('<limit lower="1" upper="-1"/>', r"<limit> has lower 1.0 > upper -1.0"),
    ('<limit lower="-1" upper="1"/><limit lower="-2" upper="2"/>', r"has 2 <limit> elements"),
    ('', r"revolute joint 'j' has no <limit>"),
])
def test_bad_values_name_the_element(body, words):
    with pytest.raises(URDFError, match=r"<joint name='j'>.*" + words if "no <limit>" not in words else words):
        load_urdf(robot(joint(body=body)))


def test_repeated_names_and_bad_structure_are_refused():
    with pytest.raises(URDFError, match=r"two <link name='a'> elements"):
        load_urdf(robot(joint(), links=("a", "b", "a")))
    with pytest.raises(URDFError, match=r"two <joint name='j'> elements"):
        load_urdf(robot(joint() + joint(parent="b", child="c")))
    with pytest.raises(URDFError, match=r"<joint name='j'>: its child link 'z' is not a <link>"):
        load_urdf(robot(joint(child="z"), links=("a", "b")))
    with pytest.raises(URDFError, match=r"<joint name='j'> has 2 <parent> elements"):
        load_urdf(robot(joint(body='<parent link="c"/><limit lower="-1" upper="1"/>')))
    with pytest.raises(URDFError, match=r"<joint name='j'> has type 'hinge'; URDF joint types are"):
        load_urdf(robot(joint(kind="hinge")))
    with pytest.raises(URDFError, match=r"<joint name='j'> has no type"):
        load_urdf(robot('<joint name="j"><parent link="a"/><child link="b"/></joint>'))
    with pytest.raises(URDFError, match=r"joins link 'a' to itself"):
        load_urdf(robot(joint(child="a")))
    with pytest.raises(URDFError, match="not well-formed XML"):
        load_urdf("<robot><link name='a'></robot>")
    with pytest.raises(URDFError, match="URDF file not found: 'missing.urdf'"):
        load_urdf("missing.urdf")
    with pytest.raises(URDFError, match=r"URDF file not found: '\?xml.*\.\.\.' \(a URDF is a file path, or XML text"):
        load_urdf("?xml" + "x" * 5000)  # not a file name (too long for one), not XML: refused as a path


def test_deep_nesting_is_read_without_recursion():
    depth = 50_000
    text = robot(joint(), links=("b",)).replace('<robot name="r">', f'<robot name="r"><link name="a">{"<x>" * depth}'
                                                                   f'{"</x>" * depth}</link>')
    assert load_urdf(text).n_joints == 1  # the nested elements are not URDF's: skipped
    with pytest.raises(URDFError, match="has no name"):
        load_urdf('<robot name="r">' + "<link>" * depth + "</link>" * depth + "</robot>")


def test_huge_limits_never_reach_the_arm():
    with pytest.raises(ValueError, match=r"lower\[0\] is -1e\+308: finite limits must lie within"):
        fabrik.Arm(["j"], [[0, 0, 1]], [np.eye(4)], np.eye(4), [-1e308], [1e308])
    arm = fabrik.Arm(["j"], [[0, 0, 1]], [np.eye(4)], np.eye(4), [-1e6], [1e6])
    assert np.isfinite(arm.random_angles(0, 100)).all() and np.ptp(arm.random_angles(0, 100)) > 1e5


def test_tip_defaults_to_the_one_end_of_the_movable_joints(urdf_dir):
    ur5 = load_urdf(urdf_dir / "ur5.urdf")  # ee_link and tool0 are both fixed to wrist_3_link: its end
    assert ur5.tip_name == "wrist_3_link" and ur5.n_joints == 6
    with pytest.raises(URDFError, match=r"end at 2 links \('panda_(left|right)finger', 'panda_(left|right)finger'\)"
                                        r"; pass tip="):
        load_urdf(urdf_dir / "panda.urdf")
    # a single fixed frame after the last joint is the tip
    chain = load_urdf(robot(joint() + joint("f", "fixed", "b", "c", '<origin xyz="0 0 0.2"/>')))
    assert chain.tip_name == "c" and chain.reach == pytest.approx(0.2)
    with pytest.raises(URDFError, match=r"end at 0 links \(none\)"):
        load_urdf(robot(joint("f", "fixed", body="")))


def test_a_hinge_axis_is_normalised():
    """Issue 40.8's ``Hinge((5, 0, 0), 0, 1)``: any non-zero axis perpendicular to +Y is taken as its
    unit direction (documented), a zero axis refused."""
    assert Hinge((5, 0, 0), 0, 1).axis == (1.0, 0.0, 0.0)
    assert Hinge((3, 0, 4), 0, 1).axis == pytest.approx((0.6, 0.0, 0.8))
    with pytest.raises(ValueError, match="non-zero"):
        Hinge((0, 0, 0), 0, 1)
    assert math.isclose(math.hypot(*Hinge((1e300, 0, 1e300), -1, 1).axis), 1.0)
