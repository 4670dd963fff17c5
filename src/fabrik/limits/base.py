"""The limit protocol: what every joint-limit type provides, and the registry of the types.

A limit type is one class in its own module of ``fabrik.limits``, a frozen dataclass whose
parameters are checked on construction (angles in radians), measured in the joint's *reference
frame*: +Y the parent bone (the rest direction of the limited bone), +X right, +Z up
(docs/constraints.md, "Frames"). The class owns

* ``pack(row, planar)``: its columns of the joint's packed float64 row, which the kernels read
  (the row: ``fabrik.kernels.limit_layout``; the type's id, columns and projection:
  ``fabrik.kernels.constraints``, the only other place a type appears);
* ``violation(v, twist)``: how far (radians, >= 0) unit directions ``v`` (..., 3) of the bone in
  the reference frame, and its twists (...), lie outside the limit, vectorised; the one measure
  that ``fabrik.constraints.limit_violations`` and every other checker use (``joint_violation``).
  A type writes ``direction_violation``; ``twist_range`` says which twists it holds;
* its JSON form: ``type_name`` (the file's ``"type"``), ``FIELDS``, ``to_json``, ``from_json``
  (``fabrik.io.limits_file`` reads and writes files through them);
* ``drawing()``: what the viewer draws (``Drawing``);
* ``planar_range()``: what it means on a 2D chain (or a ValueError saying it cannot go on one);
* ``sample_direction(rng)``: a random allowed direction (``fabrik.model.constraints.random_pose``).

Defining a subclass with its own ``type_name`` registers it in ``LIMIT_TYPES`` under that name.
A joint takes at most one ``rotational`` limit (one that bounds the bone's direction) and one
that is not (a ``Twist``); ``joint_limits`` checks and orders them.

Angles: twist and hinge angles are read modulo 2 pi, as the kernels' clamp reads them
(``fabrik.kernels.constraints.clamp_angle``): -pi and pi are the same angle, so a range that
touches pi also holds -pi (``twist_excess``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

#: the registered limit types by their JSON ``"type"``, in registration order
LIMIT_TYPES: dict[str, type["Limit"]] = {}

_TWO_PI = 2.0 * math.pi


class Limit(ABC):
    """The base of every limit type (module docstring). Subclasses are frozen dataclasses whose
    fields are the parameters; they set the class attributes below without annotations (so that
    these are not dataclass fields) and write the abstract methods."""

    #: the JSON ``"type"`` (a subclass defining it is registered in ``LIMIT_TYPES``)
    type_name: ClassVar[str]
    #: True for a limit of the bone's direction (at most one per joint), False for a twist limit
    rotational: ClassVar[bool] = True
    #: the JSON fields, in the order files write them
    FIELDS: ClassVar[tuple[str, ...]] = ()
    #: the JSON fields that are angles (in the file's ``"units"``); the others are read by
    #: ``json_field``
    ANGLE_FIELDS: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("type_name")
        if name is not None:
            if name in LIMIT_TYPES:
                raise ValueError(f"a limit type named {name!r} is registered already "
                                 f"({LIMIT_TYPES[name].__qualname__})")
            LIMIT_TYPES[name] = cls

    # --- for the kernels ------------------------------------------------------------------------
    @property
    @abstractmethod
    def columns(self) -> int:
        """How many parameter columns this limit writes after ``COL_PARAMS`` of its packed row
        (on a 2D chain too)."""

    @abstractmethod
    def pack(self, row: np.ndarray, planar: bool = False) -> None:
        """Write this limit into a joint's packed row (``fabrik.kernels.limit_layout``); ``planar``:
        a 2D chain's row (a cone becomes the in-plane hinge of its ``planar_range``)."""

    # --- measuring --------------------------------------------------------------------------------
    @property
    def twist_range(self) -> tuple[float, float] | None:
        """The range (lo, hi) of twists (radians) this limit holds, None when it leaves the twist
        free."""
        return None

    @abstractmethod
    def direction_violation(self, v) -> np.ndarray:
        """How far (radians, >= 0; 0 inside) unit directions ``v`` (..., 3), in the reference frame,
        lie outside this limit. Returns (...) float64."""

    def violation(self, v, twist=None) -> np.ndarray:
        """How far (radians, >= 0; 0 inside) this limit is exceeded by unit directions ``v``
        (..., 3) in the reference frame (``direction_violation``) and, when given, twists ``twist``
        (...) (their excess beyond ``twist_range``, ``twist_excess``). Returns (...) float64."""
        out = self.direction_violation(v)
        bound = self.twist_range
        if twist is not None and bound is not None:
            out = np.maximum(out, twist_excess(twist, *bound))
        return out

    def contains(self, direction, tol: float = 0.0) -> bool:
        """True when the unit ``direction`` (3,), in the reference frame, is within ``tol`` radians
        of the limit's allowed region."""
        d = np.asarray(direction, dtype=np.float64)
        return bool(self.violation(d / np.linalg.norm(d)) <= tol)

    # --- 2D chains, random poses -------------------------------------------------------------
    def planar_range(self) -> tuple[float, float] | None:
        """On a 2D chain (solved in z = 0, +Z out of the plane): the range (lo, hi) of the bone's
        signed angle from +Y about +Z that a rotational limit allows, or None for a limit that
        bounds nothing in the plane. ValueError when the limit cannot act on a 2D chain."""
        raise ValueError(f"a {type(self).__name__} cannot limit a 2D chain (a 2D chain takes Cone, Hinge and "
                         "Twist limits)")

    @property
    def reach(self) -> float:
        """The largest angle (radians) from +Y of an allowed direction (pi when unknown)."""
        return math.pi

    def sample_direction(self, rng) -> np.ndarray:
        """A random allowed direction (3,) in the reference frame: uniform on the spherical cap
        of ``reach`` about +Y, the first of up to 10,000 draws inside the limit (+Y when none
        is)."""
        cos_lo = math.cos(self.reach)
        for _ in range(10000):
            c = rng.uniform(cos_lo, 1.0)
            phi = rng.uniform(-math.pi, math.pi)
            s = math.sqrt(max(0.0, 1.0 - c * c))
            d = np.array([s * math.cos(phi), c, s * math.sin(phi)])
            if self.violation(d) <= 0.0:
                return d
        return np.array([0.0, 1.0, 0.0])

    # --- JSON -----------------------------------------------------------------------------------
    def to_json(self, scale: float) -> dict:
        """The JSON object of this limit, angles divided by ``scale`` (radians per file unit)."""
        out: dict[str, Any] = {"type": self.type_name}
        for name in self.FIELDS:
            value = getattr(self, name)
            out[name] = value / scale if name in self.ANGLE_FIELDS else _plain(value)
        return out

    @classmethod
    def from_json(cls, entry: dict, scale: float) -> "Limit":
        """The limit of a JSON object holding exactly ``FIELDS`` (checked by the caller), angles
        times ``scale``. ``JsonFieldError`` names a field whose value is not of its kind; the
        constructor's ValueError a value out of range."""
        values = {name: json_number(entry[name], name) * scale if name in cls.ANGLE_FIELDS
                  else cls.json_field(name, entry[name]) for name in cls.FIELDS}
        return cls(**values)

    @classmethod
    def json_field(cls, name: str, value):
        """A field that is not an angle, read from its JSON value (``JsonFieldError`` when it is
        not of its kind)."""
        raise JsonFieldError(name, f"{cls.__name__} has no field {name!r}")

    # --- the viewer -------------------------------------------------------------------------------
    @abstractmethod
    def drawing(self) -> "Drawing":
        """What the viewer draws for this limit (``Drawing``)."""


@dataclass(frozen=True)
class Drawing:
    """What the viewer draws for a limit, at unit size: a triangle mesh (``vertices`` (k, 3)
    float32, ``faces`` (m, 3) uint32) or line segments (``segments`` (k, 2, 3) float32), in the
    limit's reference frame (``frame`` "reference", +Y the parent bone) or in the joint's own
    bone frame (``frame`` "bone", for a twist's arc about the bone)."""

    frame: str = "reference"
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None
    segments: np.ndarray | None = None


def fan(ring: np.ndarray, closed: bool) -> Drawing:
    """A mesh fanning from the apex (origin) through the points ``ring`` (k, 3), closed back to the
    first point or not."""
    k = ring.shape[0]
    vertices = np.vstack([np.zeros(3), ring]).astype(np.float32)
    last = k if closed else k - 1
    faces = np.array([[0, 1 + j, 1 + (j + 1) % k] for j in range(last)], dtype=np.uint32)
    return Drawing(vertices=vertices, faces=faces)


# --- shared measures --------------------------------------------------------------------------------
def wrap_angle(a):
    """Angles ``a`` wrapped into [-pi, pi] (unchanged when already there), vectorised."""
    a = np.asarray(a, dtype=np.float64)
    return np.where(np.abs(a) <= math.pi, a, np.mod(a + math.pi, _TWO_PI) - math.pi)


def twist_excess(twist, lo: float, hi: float):
    """How far (radians, >= 0) the angle ``twist`` (a number or an array) lies outside [lo, hi],
    read modulo 2 pi as the kernels' clamp reads it: an angle is inside when it, or it plus or
    minus 2 pi, lies in [lo, hi] (so -pi is inside ``Twist(pi, pi)``), else its distance around the
    circle to the nearer end. A range of 2 pi or more holds every angle."""
    t = np.asarray(twist, dtype=np.float64)
    if hi - lo >= _TWO_PI:
        out = np.zeros_like(t)
    else:
        inside = ((lo <= t) & (t <= hi)) | (np.mod(t - lo, _TWO_PI) <= hi - lo)
        out = np.where(inside, 0.0, np.minimum(np.abs(wrap_angle(t - lo)), np.abs(wrap_angle(t - hi))))
    return float(out) if out.ndim == 0 else out


def joint_violation(items, v, twist=None) -> np.ndarray:
    """How far (radians, >= 0) one joint's limits ``items`` are exceeded by unit bone directions
    ``v`` (..., 3) in the joint's reference frame and the bone's twists ``twist`` (...) relative to
    it (None: the directions alone). A joint with a twist limit measures its twist by it alone
    (a hinge's own zero twist gives way to it, as in the packed row). Returns (...)."""
    v = np.asarray(v, dtype=np.float64)
    out = np.zeros(v.shape[:-1])
    has_twist_limit = any(not item.rotational for item in items)
    for item in items:
        given = None if (twist is None or (item.rotational and has_twist_limit)) else twist
        out = np.maximum(out, item.violation(v, given))
    return out


def joint_limits(value, where: str) -> tuple:
    """A joint's limits from one limit or an iterable of them, checked (at most one rotational
    limit and one twist limit) and ordered rotational first (so that a twist limit packed after a
    hinge replaces the hinge's zero twist). ValueError naming ``where`` otherwise."""
    names = _type_names()
    items = (value,) if isinstance(value, Limit) else value
    try:
        items = tuple(items)
    except TypeError:
        raise ValueError(f"{where}: expected a {names} (or a list of them), got {value!r:.200}") from None
    rotational = 0
    twists = 0
    for item in items:
        if not isinstance(item, Limit):
            raise ValueError(f"{where}: expected {names} objects, got {item!r:.200}")
        if item.rotational:
            rotational += 1
        else:
            twists += 1
    if rotational > 1:
        raise ValueError(f"{where}: at most one rotational limit ({_type_names(rotational=True)}) per joint, "
                         f"got {rotational}")
    if twists > 1:
        raise ValueError(f"{where}: at most one Twist per joint, got {twists}")
    return tuple(sorted(items, key=lambda item: not item.rotational))


def _type_names(rotational: bool | None = None) -> str:
    """'Cone, Hinge or Twist': the registered classes' names (the rotational ones only, or not)."""
    names = [cls.__name__ for cls in LIMIT_TYPES.values() if rotational is None or cls.rotational == rotational]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


# --- checking parameters ---------------------------------------------------------------------------
def check_angle(value, owner: str, field_name: str, lo: float, hi: float, *, open_lo=False, open_hi=False) -> float:
    """``value`` as a float within [lo, hi] (an open end with ``open_lo``/``open_hi``) radians, else a
    ValueError naming ``owner.field_name``."""
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):  # (OverflowError: an int beyond float64)
        raise ValueError(f"{owner}.{field_name} must be a number (radians), got {value!r:.80}") from None
    if not math.isfinite(v):
        raise ValueError(f"{owner}.{field_name} must be finite, got {value!r}")
    if v < lo or v > hi or (open_lo and v == lo) or (open_hi and v == hi):
        lb = "(" if open_lo else "["
        rb = ")" if open_hi else "]"
        raise ValueError(f"{owner}.{field_name} must be in {lb}{lo:g}, {hi:g}{rb} radians, got {v!r}")
    return v


def unit_vector(value, owner: str, field_name: str) -> np.ndarray:
    """``value`` (3 finite numbers, not all 0) scaled to unit length as a (3,) float64 array, else a
    ValueError naming ``owner.field_name``."""
    try:
        vec = np.array(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{owner}.{field_name} must be 3 numbers, got {value!r:.80}") from None
    if vec.shape != (3,) or not np.isfinite(vec).all():
        raise ValueError(f"{owner}.{field_name} must be 3 finite numbers, got {value!r:.80}")
    if np.abs(vec).max() > 0.0:
        vec = vec / np.abs(vec).max()  # so that the norm cannot overflow
    norm = float(np.linalg.norm(vec))
    if norm == 0.0:
        raise ValueError(f"{owner}.{field_name} must be non-zero")
    return vec / norm


# --- JSON values ----------------------------------------------------------------------------------
class JsonFieldError(ValueError):
    """A JSON field whose value is not of its kind; ``field`` names it."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def json_number(value, field: str) -> float:
    """A finite float from a JSON number (not a bool), else ``JsonFieldError``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise JsonFieldError(field, f"must be a number, got {_show(value)}")
    try:
        v = float(value)
    except OverflowError:  # an integer beyond float64
        raise JsonFieldError(field, f"must be a number within float64, got {_show(value)}") from None
    if not math.isfinite(v):
        raise JsonFieldError(field, f"must be finite, got {_show(value)}")
    return v


def json_vector(value, field: str) -> tuple[float, float, float]:
    """Three numbers from a JSON list ``[x, y, z]``, else ``JsonFieldError``."""
    if not isinstance(value, list) or len(value) != 3:
        raise JsonFieldError(field, f"must be a list of 3 numbers [x, y, z], got {_show(value)}")
    return tuple(json_number(v, field) for v in value)


def _show(value) -> str:
    """``repr(value)``, cut to 80 characters (a file may hold anything)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _plain(value):
    """Tuples (nested) as lists, for JSON."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


__all__ = ["Limit", "LIMIT_TYPES", "Drawing", "fan", "joint_violation", "joint_limits", "twist_excess", "wrap_angle",
           "check_angle", "unit_vector", "JsonFieldError", "json_number", "json_vector"]
