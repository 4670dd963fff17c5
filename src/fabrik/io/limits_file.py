"""Joint-limit files: JSON in degrees or radians (docs/constraints.md, "Files").

``{"units": "degrees"|"radians", "joints": {key: [constraint, ...]}}``; keys are joint names
(skeletons) or indices written as strings (chains).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fabrik.model.constraints import Cone, Hinge, Twist, _as_tuple

_UNITS = {"degrees": math.pi / 180.0, "radians": 1.0}


def _constraint_to_json(item, scale: float) -> dict:
    if isinstance(item, Cone):
        return {"type": "cone", "up": item.up / scale, "down": item.down / scale,
                "left": item.left / scale, "right": item.right / scale}
    if isinstance(item, Hinge):
        return {"type": "hinge", "axis": list(item.axis), "min": item.min / scale, "max": item.max / scale}
    return {"type": "twist", "min": item.min / scale, "max": item.max / scale}


def save_constraints(path, mapping: Mapping[Any, Iterable], *, units: str = "degrees") -> None:
    """Write ``{joint name or index: constraint(s)}`` to a JSON file (see ``load_constraints``)."""
    if units not in _UNITS:
        raise ValueError(f"units must be 'degrees' or 'radians', got {units!r}")
    scale = _UNITS[units]
    joints = {}
    for key, value in mapping.items():
        items = _as_tuple(value, f"constraints[{key!r}]")
        joints[str(key)] = [_constraint_to_json(item, scale) for item in items]
    Path(path).write_text(json.dumps({"units": units, "joints": joints}, indent=2) + "\n")


def constraints_from_json(data: Any) -> dict[Any, tuple]:
    """Parse the JSON object of ``load_constraints`` (already decoded)."""
    if not isinstance(data, dict):
        raise ValueError("constraints JSON must be an object with 'units' and 'joints'")
    units = data.get("units")
    if units not in _UNITS:
        raise ValueError(f"constraints JSON: 'units' must be \"degrees\" or \"radians\", got {units!r}")
    scale = _UNITS[units]
    joints = data.get("joints")
    if not isinstance(joints, dict):
        raise ValueError("constraints JSON: 'joints' must be an object {joint name or index: [constraints]}")
    extra = set(data) - {"units", "joints"}
    if extra:
        raise ValueError(f"constraints JSON: unknown top-level keys {sorted(extra)}")
    out: dict[Any, tuple] = {}
    for key, entries in joints.items():
        where = f"constraints JSON: joint {key!r}"
        if isinstance(entries, dict):
            entries = [entries]
        if not isinstance(entries, list):
            raise ValueError(f"{where}: expected a list of constraint objects")
        items = []
        for k, entry in enumerate(entries):
            here = f"{where}, entry {k}"
            if not isinstance(entry, dict) or "type" not in entry:
                raise ValueError(f"{here}: expected an object with a 'type' of cone, hinge or twist")
            kind = entry["type"]
            fields = {"cone": ("up", "down", "left", "right"), "hinge": ("axis", "min", "max"),
                      "twist": ("min", "max")}.get(kind)
            if fields is None:
                raise ValueError(f"{here}: unknown type {kind!r} (cone, hinge or twist)")
            missing = [f for f in fields if f not in entry]
            unknown = set(entry) - set(fields) - {"type"}
            if missing or unknown:
                raise ValueError(f"{here}: a {kind} needs exactly the fields {list(fields)}; "
                                 f"missing {missing}, unknown {sorted(unknown)}")
            try:
                vals = {f: (entry[f] if f == "axis" else _json_number(entry[f], f) * scale) for f in fields}
                if kind == "cone":
                    items.append(Cone(**vals))
                elif kind == "hinge":
                    items.append(Hinge(tuple(vals["axis"]) if isinstance(vals["axis"], list) else vals["axis"],
                                       vals["min"], vals["max"]))
                else:
                    items.append(Twist(**vals))
            except ValueError as exc:
                raise ValueError(f"{here}: {exc}") from None
        name = int(key) if key.strip().isdigit() else key
        out[name] = _as_tuple(items, where)
    return out


def _json_number(value, field_name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"'{field_name}' must be a number, got {value!r}")
    return float(value)


def load_constraints(path) -> dict[Any, tuple]:
    """Read a constraints JSON file: ``{"units": "degrees"|"radians", "joints": {key: [..]}}``.

    Keys are joint names (skeletons) or indices written as strings (chains; returned as ints).
    Entries: ``{"type": "cone", "up", "down", "left", "right"}``, ``{"type": "hinge", "axis":
    [x, y, z], "min", "max"}``, ``{"type": "twist", "min", "max"}``; angles in ``units``.
    Raises ValueError naming the joint and entry for malformed content.
    """
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"constraints JSON {str(path)!r} is not valid JSON: {exc}") from None
    return constraints_from_json(data)
