"""Joint-limit files: JSON in degrees or radians (docs/constraints.md, "Files").

``{"units": "degrees"|"radians", "joints": {key: [constraint, ...]}}``; keys are joint names
(skeletons) or indices written as strings (chains).

Every value is checked for its type and range before it is used; a file that cannot be read
raises ``LimitsFileError`` (a ``ValueError``) naming the joint, the entry and the field. Each
limit type's object is its own (``fabrik.limits``: ``type_name``, ``FIELDS``, ``to_json``,
``from_json``); this module reads and writes the file around them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from fabrik.limits import LIMIT_TYPES, Limit, joint_limits
from fabrik.limits.base import JsonFieldError

_UNITS = {"degrees": math.pi / 180.0, "radians": 1.0}
#: each limit type's fields, in the order the file writes them
FIELDS = {name: cls.FIELDS for name, cls in LIMIT_TYPES.items()}


class LimitsFileError(ValueError):
    """A joint-limit file (or its decoded JSON) that cannot be read, or a mapping that cannot be
    written. ``joint``, ``entry`` (the limit's place in the joint's list) and ``field`` name where
    the problem is (None where it is not in one)."""

    def __init__(self, message: str, *, joint=None, entry: int | None = None, field: str | None = None):
        super().__init__(message)
        self.joint, self.entry, self.field = joint, entry, field


def _where(joint=None, entry=None, field=None) -> str:
    parts = ["constraints JSON"]
    if joint is not None:
        parts.append(f"joint {_show(joint)}")
    if entry is not None:
        parts.append(f"entry {entry}")
    if field is not None:
        parts.append(f"field {_show(field)}")
    return ", ".join(parts)


def _fail(message: str, joint=None, entry=None, field=None):
    raise LimitsFileError(f"{_where(joint, entry, field)}: {message}", joint=joint, entry=entry, field=field)


def _show(value) -> str:
    """``repr(value)``, cut to 80 characters (a file may hold anything)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _type_list() -> str:
    """'cone, hinge or twist': the limit types a file holds."""
    names = list(LIMIT_TYPES)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _constraint_to_json(item, scale: float, joint) -> dict:
    if not isinstance(item, Limit) or LIMIT_TYPES.get(getattr(item, "type_name", None)) is not type(item):
        _fail(f"cannot write a limit of type {type(item).__name__} (a file holds "
              f"{', '.join(cls.__name__ for cls in LIMIT_TYPES.values())}), got {_show(item)}", joint)
    return item.to_json(scale)


def save_constraints(path, mapping: Mapping[Any, Iterable], *, units: str = "degrees") -> None:
    """Write ``{joint name or index: constraint(s)}`` to a JSON file (see ``load_constraints``).

    Keys: joint names (str) or indices (whole numbers >= 0); values: a limit (``Cone``, ``Hinge``,
    ``Twist``, ...: ``fabrik.limits.LIMIT_TYPES``) or a list of them. Raises
    ``LimitsFileError`` for another key, value or ``units``
    (nothing is written), OSError when the file cannot be written."""
    if not isinstance(units, str) or units not in _UNITS:
        raise LimitsFileError(f"units must be 'degrees' or 'radians', got {_show(units)}", field="units")
    if not isinstance(mapping, Mapping):
        raise LimitsFileError(f"constraints must be a mapping {{joint name or index: constraint(s)}}, got "
                              f"{type(mapping).__name__}")
    scale = _UNITS[units]
    joints = {}
    for key, value in mapping.items():
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, (str, int, np.integer)) or (
                not isinstance(key, str) and key < 0):
            _fail(f"a joint is a name (str) or an index (a whole number >= 0), got {_show(key)}", key)
        name = str(int(key)) if not isinstance(key, str) else key
        if name in joints:
            _fail("given twice (as a name and as an index, or twice over)", key)
        try:
            items = joint_limits(value, f"joint {key!r}")
        except ValueError as exc:  # not limits, or two of a kind
            raise LimitsFileError(str(exc), joint=key) from None
        joints[name] = [_constraint_to_json(item, scale, key) for item in items]
    Path(path).write_text(json.dumps({"units": units, "joints": joints}, indent=2) + "\n")


#: a limit's own message names its field first (``Cone.up must be ...``, ``Hinge.min must be <= ...``)
_NAMED_FIELD = re.compile(r"^(\w+)\.(\w+)")


def _limit(entry_value, joint, entry, scale: float, units: str):
    """One limit from its JSON object, every field checked."""
    if not isinstance(entry_value, dict):
        _fail(f"expected an object with a 'type' of {_type_list()}, got {_show(entry_value)}", joint, entry)
    if "type" not in entry_value:
        _fail(f"has no 'type' ({_type_list()})", joint, entry)
    kind = entry_value["type"]
    if not isinstance(kind, str) or kind not in LIMIT_TYPES:
        _fail(f"unknown type {_show(kind)} ({_type_list()})", joint, entry, "type")
    cls = LIMIT_TYPES[kind]
    fields = cls.FIELDS
    missing = [f for f in fields if f not in entry_value]
    unknown = sorted(set(entry_value) - set(fields) - {"type"}, key=str)
    if missing or unknown:
        _fail(f"a {kind} needs exactly the fields {list(fields)}; missing {missing}, unknown {unknown}", joint, entry)
    try:
        return cls.from_json(entry_value, scale)
    except JsonFieldError as exc:  # a value that is not of its kind
        _fail(str(exc), joint, entry, exc.field)
    except ValueError as exc:  # a range the limit itself checks (angles, an axis along the bone, min > max)
        named = _NAMED_FIELD.match(str(exc))
        field = named.group(2) if named and named.group(1) == cls.__name__ and named.group(2) in fields else None
        given = f" (the file's {_show(entry_value[field])} {units})" if field in cls.ANGLE_FIELDS else ""
        _fail(f"{exc}{given}", joint, entry, field)


def _joint_key(key, seen: dict):
    """A file key: an index (a string of digits) for chains, else a joint name."""
    if not isinstance(key, str):
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)) or key < 0:
            _fail(f"a joint is a name or an index written as a string, got {_show(key)}", key)
        name = int(key)
    else:
        text = key.strip()
        name = int(text) if text.isascii() and text.isdigit() else key
    if name in seen:
        _fail(f"the same joint as {_show(seen[name])}, given twice", key)
    seen[name] = key
    return name


def constraints_from_json(data: Any) -> dict[Any, tuple]:
    """Parse the JSON object of ``load_constraints`` (already decoded); ``LimitsFileError`` when
    it is malformed."""
    if not isinstance(data, dict):
        raise LimitsFileError("constraints JSON must be an object with 'units' and 'joints', got "
                              f"{type(data).__name__}")
    extra = sorted(set(data) - {"units", "joints"}, key=str)
    if extra:
        raise LimitsFileError(f"constraints JSON: unknown top-level keys {_show(extra)} (it takes 'units' and "
                              "'joints')")
    units = data.get("units")
    if not isinstance(units, str) or units not in _UNITS:
        raise LimitsFileError(f"constraints JSON: 'units' must be \"degrees\" or \"radians\", got {_show(units)}",
                              field="units")
    scale = _UNITS[units]
    joints = data.get("joints")
    if not isinstance(joints, dict):
        raise LimitsFileError("constraints JSON: 'joints' must be an object {joint name or index: [constraints]}, "
                              f"got {_show(joints)}", field="joints")
    out: dict[Any, tuple] = {}
    seen: dict = {}
    for key, entries in joints.items():
        name = _joint_key(key, seen)
        if isinstance(entries, dict):
            entries = [entries]
        if not isinstance(entries, list):
            _fail(f"expected a list of constraint objects, got {_show(entries)}", key)
        items = [_limit(entry, key, k, scale, units) for k, entry in enumerate(entries)]
        try:
            out[name] = joint_limits(items, _where(key))
        except ValueError as exc:  # two rotational limits, or two twists
            raise LimitsFileError(str(exc), joint=key) from None
    return out


def load_constraints(path) -> dict[Any, tuple]:
    """Read a constraints JSON file: ``{"units": "degrees"|"radians", "joints": {key: [..]}}``.

    Keys are joint names (skeletons) or indices written as strings (chains; returned as ints).
    Entries: one object per limit, ``{"type": name, field: value, ...}`` with exactly the type's
    ``FIELDS`` (``fabrik.limits.LIMIT_TYPES``): ``{"type": "cone", "up", "down", "left",
    "right"}``, ``{"type": "hinge", "axis": [x, y, z], "min", "max"}``, ``{"type": "twist",
    "min", "max"}``; angles in ``units``.
    Raises ``LimitsFileError`` (a ValueError) naming the joint, the entry and the field for
    malformed content, OSError when the file cannot be read.
    """
    try:
        data = json.loads(Path(path).read_bytes())
    except ValueError as exc:  # (JSONDecodeError, UnicodeDecodeError, an integer of over 4300 digits)
        raise LimitsFileError(f"constraints JSON {str(path)!r} is not valid JSON: {exc}") from None
    except RecursionError:
        raise LimitsFileError(f"constraints JSON {str(path)!r} nests too deeply") from None
    return constraints_from_json(data)


__all__ = ["load_constraints", "save_constraints", "constraints_from_json", "LimitsFileError", "FIELDS"]
