"""Joint-limit files (issue 40, item 2): every field checked for its type and range before use,
errors as ``LimitsFileError`` (a ValueError) naming the joint, the entry and the field, also from
the command line; a limit of a type the file does not hold is refused when saving."""

from __future__ import annotations

import json
import math

import pytest

import fabrik.model.constraints as constraint_types
from fabrik.cli import main
from fabrik.constraints import Cone, Hinge, Twist, load_constraints, save_constraints
from fabrik.io.bvh import save_bvh
from fabrik.io.limits_file import LimitsFileError, constraints_from_json
from fabrik_experiments.sample_motion import sample_walk

ELBOW = {"axis": [1, 0, 0], "min": 0, "max": 120}


def _file(tmp_path, data) -> str:
    path = tmp_path / "limits.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


@pytest.mark.parametrize("kind", [[1, 2], {"a": 1}, None, 3, True])
def test_a_type_that_is_not_a_name_is_a_limits_file_error(tmp_path, kind):
    """The issue's reproducer: a list or object "type" raised TypeError: unhashable type."""
    path = _file(tmp_path, {"units": "degrees", "joints": {"l_elbow": [{"type": kind, **ELBOW}]}})
    with pytest.raises(LimitsFileError, match=r"joint 'l_elbow', entry 0, field 'type': unknown type") as info:
        load_constraints(path)
    assert (info.value.joint, info.value.entry, info.value.field) == ("l_elbow", 0, "type")
    assert isinstance(info.value, ValueError)


def test_the_command_line_reports_a_bad_limit_file_in_one_line(tmp_path, capsys):
    skeleton, motion = sample_walk(n_frames=3)
    take = tmp_path / "walk.bvh"
    save_bvh(take, skeleton, motion)
    bad = _file(tmp_path, {"units": "degrees", "joints": {"l_elbow": [{"type": [1, 2], **ELBOW}]}})
    assert main(["reconstruct", str(take), "--methods", "fabrik-constrained", "--constraints", bad]) == 2
    err = capsys.readouterr().err  # (may also hold the first-compile notice)
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if "error" in line] == [
        "fabrik reconstruct: error: constraints JSON, joint 'l_elbow', entry 0, field 'type': unknown type [1, 2] "
        "(cone, hinge, twist or polygon)"]


@pytest.mark.parametrize("joints, field, says", [
    ({"j": [{"type": "hinge", "axis": [1, 0], "min": 0, "max": 1}]}, "axis", "list of 3 numbers"),
    ({"j": [{"type": "hinge", "axis": "x", "min": 0, "max": 1}]}, "axis", "list of 3 numbers"),
    ({"j": [{"type": "hinge", "axis": [1, "0", 0], "min": 0, "max": 1}]}, "axis", "must be a number"),
    ({"j": [{"type": "hinge", "axis": [0, 1, 0], "min": 0, "max": 1}]}, "axis", "perpendicular"),
    ({"j": [{"type": "hinge", "axis": [1, 0, 0], "min": [0], "max": 1}]}, "min", "must be a number"),
    ({"j": [{"type": "hinge", "axis": [1, 0, 0], "min": True, "max": 1}]}, "min", "must be a number"),
    ({"j": [{"type": "hinge", "axis": [1, 0, 0], "min": 0, "max": 200}]}, "max", r"file's 200 degrees"),
    ({"j": [{"type": "twist", "min": 5, "max": 1}]}, "min", "min must be <="),
    ({"j": [{"type": "cone", "up": 0, "down": 10, "left": 10, "right": 10}]}, "up", "Cone.up"),
    ({"j": [{"type": "cone", "up": 10**400, "down": 10, "left": 10, "right": 10}]}, "up", "within float64"),
])
def test_every_field_is_checked_and_named(tmp_path, joints, field, says):
    with pytest.raises(LimitsFileError, match=f"joint 'j', entry 0, field '{field}': .*{says}") as info:
        load_constraints(_file(tmp_path, {"units": "degrees", "joints": joints}))
    assert info.value.field == field


@pytest.mark.parametrize("text, says", [
    ('{"units": "degrees", "joints": {"j": [{"type": "twist", "min": NaN, "max": 1}]}}', "field 'min': must be finite"),
    ('{"units": "degrees", "joints": {"j": [{"type": "twist", "min": -Infinity, "max": 1}]}}', "must be finite"),
    ('{"units": ["degrees"], "joints": {}}', "'units' must be"),
    ('{"units": {}, "joints": {}}', "'units' must be"),
    ('{"units": "degrees", "joints": {"1": [], " 1": []}}', "joint ' 1': the same joint as '1'"),
    ('{"units": "degrees", "joints": {"j": "cone"}}', "joint 'j': expected a list"),
    ('{"units": "degrees", "joints": {"j": [7]}}', "joint 'j', entry 0: expected an object"),
    ('{"units": "degrees", "joints": {"j": [{"min": 1}]}}', "joint 'j', entry 0: has no 'type'"),
    ('{"units": "degrees", "joints": {"j": [{"type": "twist", "min": 0, "max": 1}, '
     '{"type": "twist", "min": 0, "max": 1}]}}', "joint 'j': at most one Twist"),
    ("[" * 100000 + "]" * 100000, "nests too deeply|not valid JSON"),
    ('{"units": "degrees", "joints": {"j": [{"type": "twist", "min": 1' + "0" * 5000 + ', "max": 1}]}}',
     "not valid JSON"),
])
def test_malformed_files_are_limits_file_errors(tmp_path, text, says):
    with pytest.raises(LimitsFileError, match=says):
        load_constraints(_file(tmp_path, text))


def test_a_file_that_is_not_text_is_a_limits_file_error(tmp_path):
    path = tmp_path / "limits.json"
    path.write_bytes(b"\xff\xfe\x00\xd8garbage")
    with pytest.raises(LimitsFileError, match="not valid JSON"):
        load_constraints(path)


def test_decoded_json_with_keys_that_are_not_joints():
    with pytest.raises(LimitsFileError, match="a joint is a name or an index"):
        constraints_from_json({"units": "radians", "joints": {(1, 2): []}})
    with pytest.raises(LimitsFileError, match="must be an object"):
        constraints_from_json([1])


def test_saving_a_limit_of_an_unknown_type_is_an_error(tmp_path):
    """It used to be written as a "twist". A limit class that is not a registered type (here a
    subclass of Cone, which does not name a type of its own) has no JSON form of its own."""

    class Ellipse(Cone):
        pass

    path = tmp_path / "out.json"
    with pytest.raises(LimitsFileError, match="joint 3: cannot write a limit of type Ellipse"):
        save_constraints(path, {3: Ellipse.circular(1.0)})
    assert not path.exists()


@pytest.mark.parametrize("mapping, units, says", [
    ({0: object()}, "degrees", "expected a Cone, Hinge, Twist or Polygon"),
    ({True: Cone.circular(1.0)}, "degrees", "a joint is a name"),
    ({-1: Cone.circular(1.0)}, "degrees", "a joint is a name"),
    ({0: Cone.circular(1.0), "0": Twist(0, 1)}, "degrees", "given twice"),
    ({0: Cone.circular(1.0)}, ["degrees"], "units must be"),
])
def test_save_checks_what_it_writes(tmp_path, mapping, units, says):
    path = tmp_path / "out.json"
    with pytest.raises(LimitsFileError, match=says):
        save_constraints(path, mapping, units=units)
    assert not path.exists()


@pytest.mark.parametrize("units", ["degrees", "radians"])
def test_limits_at_the_ends_of_their_ranges_round_trip(tmp_path, units):
    edge = constraint_types.MIN_CONE_ANGLE
    mapping = {0: (Cone(edge, math.pi - edge, edge, math.pi - edge), Twist(-math.pi, math.pi)),
               1: (Hinge((0, 0, 1), -math.pi, math.pi), Twist(math.pi, math.pi))}
    path = tmp_path / "edges.json"
    save_constraints(path, mapping, units=units)
    assert load_constraints(path) == mapping
