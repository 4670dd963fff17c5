"""Obstacles that no bone may pass through: ``Sphere``, ``Capsule``, ``Box`` and ``HalfSpace``.

Pass them as ``obstacles=[...]`` to ``fabrik.solve`` (chains, skeletons, arms) and
``fabrik.solve_sequence``; docs/methods.md, "Obstacles", is the reference::

    import fabrik
    from fabrik.obstacles import Box, Capsule, HalfSpace, Sphere

    chain = fabrik.Chain.straight(6, 1.0)
    sol = fabrik.solve(chain, [2.0, 3.0, 0.0], obstacles=[Sphere([1.0, 2.5, 0.0], 0.6)])
    fabrik.obstacles.penetration([Sphere([1.0, 2.5, 0.0], 0.6)], sol.positions)   # 0.0

Each obstacle is a closed convex solid in the model's units; a bone (the segment between a joint
and its parent) must not enter its interior. ``HalfSpace(point, normal)`` is the solid on the
side ``normal`` points away from: ``HalfSpace((0, 0, 0), (0, 1, 0))`` is a floor at y = 0 that
keeps everything at y >= 0. ``Box(center, half_extents, rotation)``: ``rotation`` (3, 3) holds
the box's axes as columns in world coordinates (a scipy ``Rotation`` is also taken; None: the
world axes). The types are small frozen dataclasses with read-only float64 arrays.

``pack`` turns a list of them into the (k, ``ROW``) table the kernels read
(``fabrik.kernels.obstacles``); ``signed_distance`` and ``penetration`` measure points and poses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from fabrik._validation import MAX_COORDINATE
from fabrik.model._frozen import frozen

#: Type codes of a packed row (``fabrik.kernels.obstacles``).
SPHERE, CAPSULE, BOX, HALF_SPACE = 1, 2, 3, 4
#: Columns of a packed row: type, radius, point a (3), point b or half extents or normal (3), the
#: box's rotation (9, row-major).
ROW = 17


def _point(value, name: str) -> np.ndarray:
    try:
        p = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be 3 numbers, got {value!r}") from None
    if p.shape != (3,):
        raise ValueError(f"{name} must be a 3-vector (x, y, z), got shape {p.shape}")
    if not (np.abs(p) < MAX_COORDINATE).all():
        raise ValueError(f"{name} must be finite and below {MAX_COORDINATE:g} in size, got {p.tolist()}")
    return frozen(p)


def _positive(value, name: str) -> float:
    try:
        r = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not (0.0 < r < MAX_COORDINATE):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return r


@dataclass(frozen=True, eq=False)
class Sphere:
    """A ball: ``center`` (3,), ``radius`` > 0, in the model's units."""

    center: Any
    radius: float

    def __post_init__(self):
        object.__setattr__(self, "center", _point(self.center, "Sphere center"))
        object.__setattr__(self, "radius", _positive(self.radius, "Sphere radius"))

    def row(self) -> np.ndarray:
        out = np.zeros(ROW)
        out[0], out[1], out[2:5] = SPHERE, self.radius, self.center
        return out


@dataclass(frozen=True, eq=False)
class Capsule:
    """The points within ``radius`` of the segment from ``a`` to ``b`` (each (3,)); ``a == b`` is a
    sphere."""

    a: Any
    b: Any
    radius: float

    def __post_init__(self):
        object.__setattr__(self, "a", _point(self.a, "Capsule a"))
        object.__setattr__(self, "b", _point(self.b, "Capsule b"))
        object.__setattr__(self, "radius", _positive(self.radius, "Capsule radius"))

    def row(self) -> np.ndarray:
        out = np.zeros(ROW)
        out[0], out[1], out[2:5], out[5:8] = CAPSULE, self.radius, self.a, self.b
        return out


@dataclass(frozen=True, eq=False)
class Box:
    """An oriented box: ``center`` (3,), ``half_extents`` (3,) > 0 along its own axes, and
    ``rotation`` (3, 3) whose columns are those axes in world coordinates (a scipy ``Rotation`` or
    a matrix; None: the world axes)."""

    center: Any
    half_extents: Any
    rotation: Any = None

    def __post_init__(self):
        object.__setattr__(self, "center", _point(self.center, "Box center"))
        h = _point(self.half_extents, "Box half_extents")
        if not (h > 0.0).all():
            raise ValueError(f"Box half_extents must be positive, got {h.tolist()}")
        object.__setattr__(self, "half_extents", h)
        if self.rotation is None:
            R = np.eye(3)
        else:
            from fabrik.model.constraints import as_rotation_matrix

            R = as_rotation_matrix(self.rotation, "Box rotation")
        object.__setattr__(self, "rotation", frozen(R))

    def row(self) -> np.ndarray:
        out = np.zeros(ROW)
        out[0], out[2:5], out[5:8], out[8:17] = BOX, self.center, self.half_extents, self.rotation.reshape(-1)
        return out


@dataclass(frozen=True, eq=False)
class HalfSpace:
    """The solid ``{x: (x - point) . normal < 0}``: everything behind the plane through ``point``
    with the unit ``normal`` (normalised here) pointing to the free side."""

    point: Any
    normal: Any

    def __post_init__(self):
        object.__setattr__(self, "point", _point(self.point, "HalfSpace point"))
        n = np.array(_point(self.normal, "HalfSpace normal"))
        length = float(np.linalg.norm(n))
        if not length > 0.0:
            raise ValueError("HalfSpace normal must be a non-zero vector")
        object.__setattr__(self, "normal", frozen(n / length))

    def row(self) -> np.ndarray:
        out = np.zeros(ROW)
        out[0], out[2:5], out[5:8] = HALF_SPACE, self.point, self.normal
        return out


TYPES = (Sphere, Capsule, Box, HalfSpace)

#: An empty obstacle table (no obstacles).
NONE = np.zeros((0, ROW))


def pack(obstacles: Iterable | None) -> np.ndarray:
    """The (k, ``ROW``) float64 table of ``obstacles`` (a list or tuple of ``Sphere``,
    ``Capsule``, ``Box``, ``HalfSpace``; None or empty: (0, ``ROW``)). ValueError naming the entry
    that is not one of them."""
    if obstacles is None:
        return NONE.copy()
    if isinstance(obstacles, TYPES):
        obstacles = [obstacles]
    if isinstance(obstacles, (str, bytes, dict)) or not hasattr(obstacles, "__iter__"):
        raise ValueError(f"obstacles must be a list of fabrik.obstacles.Sphere, Capsule, Box or HalfSpace, got "
                         f"{type(obstacles).__name__}")
    rows = []
    for k, item in enumerate(obstacles):
        if not isinstance(item, TYPES):
            raise ValueError(f"obstacles[{k}] must be a fabrik.obstacles.Sphere, Capsule, Box or HalfSpace, got "
                             f"{type(item).__name__}")
        rows.append(item.row())
    return np.ascontiguousarray(np.array(rows, dtype=np.float64).reshape(len(rows), ROW))


def signed_distance(obstacles, points) -> np.ndarray:
    """The signed distance (..., ) of each point (..., 3) to the nearest obstacle's surface:
    negative inside one, +inf without obstacles."""
    from fabrik.kernels.obstacles import points_clearance

    table = obstacles if isinstance(obstacles, np.ndarray) else pack(obstacles)
    p = np.asarray(points, dtype=np.float64)
    flat = np.ascontiguousarray(p.reshape(-1, 3))
    out = np.empty(flat.shape[0])
    points_clearance(table, flat, out)
    return out.reshape(p.shape[:-1])


def penetration(obstacles, positions, parents=None, radius: float = 0.0) -> float:
    """How deep (model units, >= 0) the deepest bone of a pose enters an obstacle: 0 when none does.

    ``positions`` (n, d) (2D poses are taken in z = 0); ``parents`` (n,) the parent of each joint
    (-1 for the root; default a chain, joint i - 1); ``radius``: bones as capsules of this radius.
    A pose with one joint is measured as a point. An arm's ``Solution.positions`` is a chain of its
    joints and tip."""
    from fabrik.kernels.obstacles import pose_penetration

    table = obstacles if isinstance(obstacles, np.ndarray) else pack(obstacles)
    p = np.asarray(positions, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] not in (2, 3):
        raise ValueError(f"positions must have shape (n, 2) or (n, 3), got {p.shape}")
    if p.shape[1] == 2:
        p = np.column_stack([p, np.zeros(len(p))])
    par = np.arange(-1, len(p) - 1) if parents is None else np.asarray(parents, dtype=np.int64)
    if par.shape != (len(p),):
        raise ValueError(f"parents must have shape ({len(p)},), got {par.shape}")
    return float(pose_penetration(table, np.ascontiguousarray(p), np.ascontiguousarray(par), float(radius)))


__all__ = ["Sphere", "Capsule", "Box", "HalfSpace", "pack", "signed_distance", "penetration", "ROW", "NONE"]
