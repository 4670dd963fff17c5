"""``Hinge``: a one-degree-of-freedom limit (the paper's Fig. 7; an elbow or a knee)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fabrik.kernels.limit_layout import COL_TWIST, COL_TWIST_FLAG, COL_TYPE
from fabrik.limits.base import Drawing, JsonFieldError, Limit, check_angle, fan, json_vector, twist_excess, unit_vector

_Y = np.array([0.0, 1.0, 0.0])


def pack_hinge(row: np.ndarray, axis, lo: float, hi: float) -> None:
    """Write a hinge about ``axis`` (3,) with range [lo, hi] into a packed row: its type, axis and
    range (``fabrik.kernels.constraints.COL_AXIS``, ``COL_HINGE``); the twist columns are left as
    they are."""
    from fabrik.kernels.constraints import COL_AXIS, COL_HINGE, TYPE_HINGE

    row[COL_TYPE] = TYPE_HINGE
    row[COL_AXIS:COL_AXIS + 3] = axis
    row[COL_HINGE:COL_HINGE + 2] = (lo, hi)


@dataclass(frozen=True)
class Hinge(Limit):
    """A one-degree-of-freedom hinge (the paper's Fig. 7; an elbow or a knee).

    Attributes: ``axis``: unit 3-tuple in the reference frame, perpendicular to the parent bone
    direction +Y; ``min``, ``max``: the allowed signed angle (radians, in [-pi, pi], min <= max)
    from the parent bone direction to the bone, right-handed about ``axis`` (read modulo 2 pi: a
    range touching pi also holds -pi). The bone stays in the plane normal to the axis. The axis
    given may have any length: it is normalised on construction (``Hinge((5, 0, 0), 0, 1).axis``
    is ``(1.0, 0.0, 0.0)``); a zero or non-finite axis, or one off the plane perpendicular to +Y
    by more than 1e-6, is refused. A hinge is one degree of freedom: without a ``Twist`` on the
    joint its twist is held at 0. An elbow: ``Hinge((1, 0, 0), 0, 2.1)``.
    """

    axis: tuple[float, float, float]
    min: float
    max: float

    type_name = "hinge"
    FIELDS = ("axis", "min", "max")
    ANGLE_FIELDS = frozenset({"min", "max"})

    def __post_init__(self):
        axis = unit_vector(self.axis, "Hinge", "axis")
        if abs(axis[1]) > 1e-6:
            raise ValueError("Hinge.axis must be perpendicular to the parent bone direction (+Y of the parent "
                             f"frame, i.e. its y component must be 0), got {self.axis!r}")
        axis[1] = 0.0
        axis /= np.linalg.norm(axis)
        object.__setattr__(self, "axis", tuple(float(a) for a in axis))
        lo = check_angle(self.min, "Hinge", "min", -math.pi, math.pi)
        hi = check_angle(self.max, "Hinge", "max", -math.pi, math.pi)
        if lo > hi:
            raise ValueError(f"Hinge.min must be <= Hinge.max, got min={lo!r}, max={hi!r}")
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)

    @classmethod
    def json_field(cls, name: str, value):
        if name == "axis":
            return json_vector(value, name)
        raise JsonFieldError(name, f"Hinge has no field {name!r}")

    # --- for the kernels ------------------------------------------------------------------------
    @property
    def columns(self) -> int:
        return 5

    def pack(self, row: np.ndarray, planar: bool = False) -> None:
        """Write the hinge into a packed row (``pack_hinge``; the same on a 2D chain, whose hinge
        turns about (0, 0, +-1)); without a ``Twist`` on the joint the twist is held at 0."""
        pack_hinge(row, self.axis, self.min, self.max)
        if row[COL_TWIST_FLAG] == 0:
            row[COL_TWIST_FLAG] = 1.0
            row[COL_TWIST:COL_TWIST + 2] = 0.0

    def planar_range(self) -> tuple[float, float]:
        if abs(abs(self.axis[2]) - 1.0) > 1e-9:
            raise ValueError(f"a 2D chain's Hinge.axis must be (0, 0, +-1) (out of the plane), got {self.axis}")
        return (self.min, self.max) if self.axis[2] > 0 else (-self.max, -self.min)

    def sample_direction(self, rng) -> np.ndarray:
        """A direction at an angle drawn uniformly from the range, in the hinge's plane."""
        theta = rng.uniform(self.min, self.max)
        a = np.array(self.axis)
        return math.cos(theta) * _Y + math.sin(theta) * np.cross(a, _Y)

    # --- measuring --------------------------------------------------------------------------------
    def angle(self, v) -> np.ndarray:
        """The signed angle (radians, in [-pi, pi]) of directions ``v`` (..., 3) from +Y, right-handed
        about the axis, in the hinge's plane (of their projection onto it)."""
        v = np.asarray(v, dtype=np.float64)
        return np.arctan2(np.cross(_Y, v) @ np.asarray(self.axis), v[..., 1])

    @property
    def twist_range(self) -> tuple[float, float]:
        """(0, 0): a hinge holds its twist at 0 (unless a ``Twist`` on the joint replaces it)."""
        return (0.0, 0.0)

    def direction_violation(self, v) -> np.ndarray:
        """The larger of the angle of unit directions ``v`` (..., 3) out of the hinge's plane and
        the excess of their in-plane angle (``angle``) beyond [min, max] (modulo 2 pi:
        ``twist_excess``)."""
        v = np.asarray(v, dtype=np.float64)
        off_plane = np.arcsin(np.minimum(1.0, np.abs(v @ np.asarray(self.axis))))
        return np.maximum(off_plane, twist_excess(self.angle(v), self.min, self.max))

    # --- the viewer -------------------------------------------------------------------------------
    def drawing(self, samples: int = 32) -> Drawing:
        """The allowed sector: a fan in the plane normal to the axis, from ``min`` to ``max`` about
        the axis starting at the parent bone (+Y)."""
        a = np.array(self.axis)
        angles = np.linspace(self.min, self.max, samples)
        ring = np.cos(angles)[:, None] * _Y + np.sin(angles)[:, None] * np.cross(a, _Y)
        return fan(ring, closed=False)


__all__ = ["Hinge", "pack_hinge"]
