"""``Cone``: a ball-and-socket limit, the irregular cone of the paper (section 4.3, Figs. 3-6)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fabrik.kernels.limit_layout import COL_TYPE
from fabrik.limits.base import Drawing, Limit, check_angle, fan

#: |cot(angle)|^2 below this is treated as exactly 0 (an angle within ~1e-7 rad of pi/2)
_FLAT = 1e-14
#: the narrowest cone angle taken (radians, 0.57 degrees), and pi minus it the widest: cot(1e-300)^2
#: overflows, and the fuzzing run of issue 31 (benchmarks/fuzz_limits.py) found cones missed by up
#: to 5e-3 rad with quadrants of 1e-6 beside pi - 1e-6 rad and by up to 7e-5 rad at 1e-3, none
#: at 0.01 (docs/constraints.md, "Edge cases")
MIN_CONE_ANGLE = 1e-2
#: the widest quadrant the viewer draws (radians): a cone of 90 degrees or more is a half-space or
#: more, whose surface would be unbounded
_DRAWN_WIDEST = math.radians(85.0)


@dataclass(frozen=True)
class Cone(Limit):
    """A ball-and-socket limit: the irregular cone of the paper (section 4.3, Figs. 3-6).

    Attributes (radians, each in [``MIN_CONE_ANGLE``, pi - ``MIN_CONE_ANGLE``], 0.01 from 0 and
    pi): ``up``, ``down``, ``left``, ``right``: the largest angle between the parent bone
    direction (+Y of the reference frame) and the bone, towards the frame's +Z, -Z, -X and +X
    axes respectively. Equal angles give a circular cone (``Cone.circular``); otherwise each
    quadrant is bounded by a quarter of an elliptical cone. Precisely, a direction (x, y, z) is
    allowed when ``y|y| >= s_x x^2 + s_z z^2`` with ``s = cot(angle)|cot(angle)|`` for the
    quadrant's angles (``signed_cot2``); angles over pi/2 follow from the same rule (Fig. 6).
    The twist is free. On a 2D chain a cone is ``Hinge((0, 0, 1), -right, left)``.
    """

    up: float
    down: float
    left: float
    right: float

    type_name = "cone"
    FIELDS = ("up", "down", "left", "right")
    ANGLE_FIELDS = frozenset(FIELDS)

    def __post_init__(self):
        for name in self.FIELDS:
            v = check_angle(getattr(self, name), "Cone", name, 0.0, math.pi, open_lo=True, open_hi=True)
            if not MIN_CONE_ANGLE <= v <= math.pi - MIN_CONE_ANGLE:
                raise ValueError(f"Cone.{name} must be in [{MIN_CONE_ANGLE:g}, pi - {MIN_CONE_ANGLE:g}] radians, got "
                                 f"{v!r}: a narrower cone cannot be told from a fixed bone in float64 (use a Hinge "
                                 "with min == max to hold a bone at one angle)")
            object.__setattr__(self, name, v)

    @classmethod
    def circular(cls, angle: float) -> "Cone":
        """A circular cone of half-angle ``angle`` (radians)."""
        return cls(angle, angle, angle, angle)

    def signed_cot2(self) -> tuple[float, float, float, float]:
        """(s_right, s_left, s_up, s_down) with s = cot(a)|cot(a)| (0 within ~1e-7 rad of pi/2)."""
        out = []
        for a in (self.right, self.left, self.up, self.down):
            c = math.cos(a) / math.sin(a)
            s = c * abs(c)
            out.append(0.0 if abs(s) < _FLAT else s)
        return tuple(out)

    @property
    def reach(self) -> float:
        return max(self.up, self.down, self.left, self.right)

    # --- for the kernels ------------------------------------------------------------------------
    @property
    def columns(self) -> int:
        return 5  # 4 signed squared cotangents; on a 2D chain the hinge's axis and range

    def pack(self, row: np.ndarray, planar: bool = False) -> None:
        """Write the cone into a packed row: its type and its four signed squared cotangents
        (``fabrik.kernels.constraints.COL_CONE``). A 2D chain's cone (``planar``, frames with +Z
        out of the plane) is the in-plane hinge of ``planar_range``: its up and down angles bound
        out-of-plane motion, which a planar chain does not have."""
        if planar:
            from fabrik.limits.hinge import pack_hinge

            pack_hinge(row, (0.0, 0.0, 1.0), *self.planar_range())
            return
        from fabrik.kernels.constraints import COL_CONE, TYPE_CONE

        row[COL_TYPE] = TYPE_CONE
        row[COL_CONE:COL_CONE + 4] = self.signed_cot2()

    def planar_range(self) -> tuple[float, float]:
        return -self.right, self.left

    # --- measuring --------------------------------------------------------------------------------
    def direction_violation(self, v) -> np.ndarray:
        """How far (radians, >= 0) unit directions ``v`` (..., 3) lie outside the cone: at each
        direction's azimuth about +Y, its polar angle less the boundary's polar angle there (from
        the cone's quadric), the angle along the meridian to the boundary. That is exact for a
        circular cone and on the boundary, and otherwise an upper bound of the angle to the cone
        (its nearest point may lie at another azimuth): a loose one where the boundary runs
        nearly along a meridian, at the seam of neighbouring quadrants of very unequal angles
        (0.01 beside pi - 0.01 rad: a direction 1.2e-10 rad from one inside measured 2.2e-6).
        Straight behind the joint (v = -Y) the excess is pi less the widest angle. (The twist is
        free.)"""
        v = np.asarray(v, dtype=np.float64)
        s_r, s_l, s_u, s_d = self.signed_cot2()
        x, y, z = v[..., 0], v[..., 1], v[..., 2]
        sx = np.where(x >= 0, s_r, s_l)
        sz = np.where(z >= 0, s_u, s_d)
        rho2 = x * x + z * z
        polar = np.arctan2(np.sqrt(rho2), y)
        safe = np.where(rho2 > 0, rho2, 1.0)
        s = (sx * x * x + sz * z * z) / safe  # cot(limit)|cot(limit)| at this azimuth
        limit = np.arctan2(1.0, np.copysign(np.sqrt(np.abs(s)), s))
        on_axis = np.where(y > 0, 0.0, math.pi - self.reach)
        return np.maximum(np.where(rho2 > 0, polar - limit, on_axis), 0.0)

    # --- the viewer -------------------------------------------------------------------------------
    def boundary(self, samples: int = 48) -> np.ndarray:
        """(samples, 3) unit directions on the cone's edge: in the plane y = 1 an ellipse quadrant
        per pair of neighbouring angles (right/+X, up/+Z, left/-X, down/-Z), as in the paper's
        Fig. 5; quadrants of over 85 degrees are drawn at 85."""
        out = np.empty((samples, 3))
        for k in range(samples):
            phi = 2.0 * math.pi * k / samples
            c, s = math.cos(phi), math.sin(phi)
            ax = min(self.right if c >= 0 else self.left, _DRAWN_WIDEST)
            az = min(self.up if s >= 0 else self.down, _DRAWN_WIDEST)
            d = np.array([math.tan(ax) * c, 1.0, math.tan(az) * s])
            out[k] = d / np.linalg.norm(d)
        return out

    def drawing(self, samples: int = 48) -> Drawing:
        """The cone's surface as a fan from the apex (origin) through ``boundary``."""
        return fan(self.boundary(samples), closed=True)


__all__ = ["Cone", "MIN_CONE_ANGLE"]
