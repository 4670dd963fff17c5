"""``Twist``: an orientational limit (Algorithm 2), the bone's roll about itself."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fabrik.kernels.limit_layout import COL_TWIST, COL_TWIST_FLAG
from fabrik.limits.base import Drawing, Limit, check_angle

#: the radius (at unit height along the bone) of the drawn twist arc
_ARC_RADIUS = 0.35


@dataclass(frozen=True)
class Twist(Limit):
    """An orientational limit (Algorithm 2): the bone's twist about itself in [min, max] radians.

    The twist is measured against the reference frame carried onto the bone by the smallest
    rotation (swing-twist decomposition); both bounds in [-pi, pi], min <= max. Twists are angles,
    read modulo 2 pi: ``Twist(-pi, pi)`` leaves the twist free, ``Twist(pi, pi)`` and
    ``Twist(-pi, -pi)`` both hold it at the half turn, and a range touching pi also holds -pi, the
    same angle (``twist_excess``). It goes with a rotational limit or alone; on a 2D chain (no
    twist) its range must hold 0.
    """

    min: float
    max: float

    type_name = "twist"
    rotational = False
    FIELDS = ("min", "max")
    ANGLE_FIELDS = frozenset(FIELDS)

    def __post_init__(self):
        lo = check_angle(self.min, "Twist", "min", -math.pi, math.pi)
        hi = check_angle(self.max, "Twist", "max", -math.pi, math.pi)
        if lo > hi:
            raise ValueError(f"Twist.min must be <= Twist.max, got min={lo!r}, max={hi!r}")
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)

    @property
    def columns(self) -> int:
        return 0

    def pack(self, row: np.ndarray, planar: bool = False) -> None:
        """Write the twist range into a packed row (``COL_TWIST_FLAG``, ``COL_TWIST``), replacing a
        hinge's zero twist."""
        row[COL_TWIST_FLAG] = 1.0
        row[COL_TWIST:COL_TWIST + 2] = (self.min, self.max)

    def planar_range(self) -> None:
        """None (a 2D chain has no twist); ValueError unless the range holds 0."""
        if not self.min <= 0.0 <= self.max:
            raise ValueError(f"a 2D chain's Twist range must include 0, got [{self.min}, {self.max}]")
        return None

    @property
    def twist_range(self) -> tuple[float, float]:
        return (self.min, self.max)

    def direction_violation(self, v) -> np.ndarray:
        """0 (of the shape of ``v`` (..., 3) less its last axis): the direction is free."""
        return np.zeros(np.shape(v)[:-1])

    def drawing(self, samples: int = 24) -> Drawing:
        """The range as an arc about the bone (+Y of the joint's own frame) at unit height, from
        ``min`` to ``max`` starting from +Z (the frame's up): (samples - 1) segments."""
        angles = np.linspace(self.min, self.max, samples)
        pts = np.stack([_ARC_RADIUS * np.sin(angles), np.ones(samples), _ARC_RADIUS * np.cos(angles)], axis=1)
        return Drawing(frame="bone", segments=np.stack([pts[:-1], pts[1:]], axis=1).astype(np.float32))


__all__ = ["Twist"]
