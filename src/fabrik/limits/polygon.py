"""``Polygon``: a swing limit bounded by a spherical polygon of directions (FinalIK's polygonal
rotation limit)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fabrik.kernels.limit_layout import COL_TYPE
from fabrik.limits.base import Drawing, JsonFieldError, Limit, fan, json_vector, unit_vector
from fabrik.limits.cone import MIN_CONE_ANGLE

#: the most vertices a polygon takes (its packed row holds 1 + 3 k columns)
MAX_VERTICES = 64
#: the least angle (radians) between neighbouring vertices about +Y (their azimuths), and the
#: least by which that turn stays below pi: an edge nearly along a meridian, or one whose great
#: circle nearly passes through +Y, has an ill-conditioned plane
MIN_TURN = 1e-3
_Y = np.array([0.0, 1.0, 0.0])


@dataclass(frozen=True)
class Polygon(Limit):
    """A swing limit whose boundary is a spherical polygon of directions (FinalIK's polygonal
    limit): the bone may point anywhere inside it.

    ``vertices``: k (3 <= k <= ``MAX_VERTICES``) directions in the reference frame (+Y the parent
    bone), joined by great-circle arcs. They go round +Y once, in either direction, each vertex
    within [``MIN_CONE_ANGLE``, pi - ``MIN_CONE_ANGLE``] rad of +Y and each step turning by between
    ``MIN_TURN`` and pi - ``MIN_TURN`` about +Y, so the polygon is star-shaped about +Y (every
    great-circle arc from +Y to a point inside stays inside; convex or not, and it may reach
    behind the joint). Stored as unit vectors (a vertex within rounding of unit length is kept as
    given, so a saved file reads back equal), in order of increasing azimuth ``atan2(z, x)``
    (turning from +X, right, towards +Z, up): a polygon given the other way round is reversed,
    its first vertex kept first. A direction outside is moved to the nearest point of the
    boundary (by angle). The twist is free; a 2D chain takes no polygon.
    """

    vertices: tuple

    type_name = "polygon"
    FIELDS = ("vertices",)

    def __post_init__(self):
        try:
            items = list(self.vertices)
        except TypeError:
            raise ValueError(f"Polygon.vertices must be a list of directions (x, y, z), got "
                             f"{self.vertices!r:.80}") from None
        if not 3 <= len(items) <= MAX_VERTICES:
            raise ValueError(f"Polygon.vertices must hold 3 to {MAX_VERTICES} directions, got {len(items)}")
        rows = []
        for j, item in enumerate(items):
            v = unit_vector(item, "Polygon", f"vertices[{j}]")
            given = np.array(item, dtype=np.float64).reshape(-1)
            if abs(float(np.linalg.norm(given)) - 1.0) <= 4e-16:
                v = given  # unit already (to rounding): kept, so that writing and reading give it back
            polar = math.atan2(math.hypot(v[0], v[2]), v[1])
            if not MIN_CONE_ANGLE <= polar <= math.pi - MIN_CONE_ANGLE:
                raise ValueError(f"Polygon.vertices[{j}] is {polar:.6g} rad from +Y: each vertex must lie within "
                                 f"[{MIN_CONE_ANGLE:g}, pi - {MIN_CONE_ANGLE:g}] rad of the parent bone (+Y)")
            rows.append(v)
        V = np.array(rows)
        turns = _turns(V)
        if np.all(turns < 0.0):
            V = np.vstack([V[:1], V[:0:-1]])  # the other way round: reversed, the first vertex first
            turns = _turns(V)
        total = float(turns.sum())
        if not (np.all(turns > 0.0) and abs(total - 2.0 * math.pi) < 1e-6):
            raise ValueError("Polygon.vertices must go round +Y once, in one direction (each step turning the "
                             "same way about +Y): the polygon must be star-shaped about the parent bone, got "
                             f"turns of {np.round(turns, 4).tolist()} rad")
        j = int(np.argmin(np.minimum(turns, math.pi - turns)))
        if not MIN_TURN <= turns[j] <= math.pi - MIN_TURN:
            raise ValueError(f"Polygon.vertices: the step from vertex {j} to the next turns {turns[j]:.6g} rad about "
                             f"+Y; each step must turn between {MIN_TURN:g} and pi - {MIN_TURN:g} rad (an edge "
                             "along a meridian, or one whose great circle passes near +Y, is not taken)")
        object.__setattr__(self, "vertices", tuple(tuple(float(x) for x in v) for v in V))

    @classmethod
    def regular(cls, angle: float, k: int, start: float = 0.0) -> "Polygon":
        """A regular polygon of ``k`` vertices ``angle`` rad from +Y, the first at azimuth ``start``
        (radians, from +X towards +Z)."""
        phi = start + 2.0 * math.pi * np.arange(k) / k
        s, c = math.sin(angle), math.cos(angle)
        return cls(tuple((s * math.cos(p), c, s * math.sin(p)) for p in phi))

    @classmethod
    def json_field(cls, name: str, value):
        if name != "vertices":
            raise JsonFieldError(name, f"Polygon has no field {name!r}")
        if not isinstance(value, list):
            raise JsonFieldError(name, f"must be a list of [x, y, z] directions, got {value!r:.80}")
        return tuple(json_vector(v, name) for v in value)

    # --- geometry -----------------------------------------------------------------------------
    def _edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(A, B, N) (k, 3): each edge's start and end vertex, and the unit normal of its great
        circle on +Y's side (B x A normalised)."""
        A = np.array(self.vertices)
        B = np.roll(A, -1, axis=0)
        N = np.cross(B, A)
        return A, B, N / np.linalg.norm(N, axis=1, keepdims=True)

    @property
    def reach(self) -> float:
        """The largest angle from +Y of a direction inside: at a vertex, or where an edge's arc
        passes lowest (its great circle's lowest point, where it lies on the arc)."""
        A, B, N = self._edges()
        lowest = np.minimum(A[:, 1], B[:, 1])
        W = np.cross(-N, A)  # the arc's tangent at A, towards B
        length = np.arctan2(np.linalg.norm(np.cross(A, B), axis=1), np.einsum("ki,ki->k", A, B))
        t = np.mod(np.arctan2(W[:, 1], A[:, 1]) + math.pi, 2.0 * math.pi)
        amplitude = np.hypot(A[:, 1], W[:, 1])
        lowest = np.where(t <= length, np.minimum(lowest, -amplitude), lowest)
        return float(np.arccos(np.clip(lowest.min(), -1.0, 1.0)))

    def direction_violation(self, v) -> np.ndarray:
        """The angle (radians, >= 0) from unit directions ``v`` (..., 3) to the polygon: 0 inside,
        else the angle to the nearest point of its boundary, the nearest over the edges' arcs (the
        foot of the perpendicular on the edge's great circle where it falls on the arc, else the
        nearer end)."""
        v = np.asarray(v, dtype=np.float64)
        A, B, N = self._edges()
        d = v[..., None, :]  # (..., 1, 3) against the k edges
        # in the edge's lune (azimuth between its ends') and on +Y's side of its great circle
        lune = (A[:, 0] * d[..., 2] - A[:, 2] * d[..., 0] >= 0.0) & (d[..., 0] * B[:, 2] - d[..., 2] * B[:, 0] >= 0.0)
        s = np.sum(d * N, axis=-1)
        inside = np.any(lune & (s >= 0.0), axis=-1)
        t = d - s[..., None] * N  # the foot on the great circle, unnormalised
        tn = np.linalg.norm(t, axis=-1)
        p = t / np.where(tn > 0.0, tn, 1.0)[..., None]
        # on the arc: turned from A towards p and from p towards B about the arc's axis -N
        on_arc = (tn > 0.0) & (np.sum(np.cross(A, p) * -N, axis=-1) >= 0.0) \
            & (np.sum(np.cross(p, B) * -N, axis=-1) >= 0.0)
        to_a = np.arctan2(np.linalg.norm(np.cross(d, A), axis=-1), np.sum(d * A, axis=-1))
        to_b = np.arctan2(np.linalg.norm(np.cross(d, B), axis=-1), np.sum(d * B, axis=-1))
        angle = np.where(on_arc, np.arctan2(np.abs(s), tn), np.minimum(to_a, to_b))
        return np.where(inside, 0.0, angle.min(axis=-1))

    # --- for the kernels ------------------------------------------------------------------------
    @property
    def columns(self) -> int:
        return 1 + 3 * len(self.vertices)

    def pack(self, row: np.ndarray, planar: bool = False) -> None:
        """Write the polygon into a packed row: its type, its vertex count k at ``COL_POLYGON`` and
        its k unit vertices after it (``fabrik.kernels.constraints``)."""
        from fabrik.kernels.constraints import COL_POLYGON, TYPE_POLYGON

        k = len(self.vertices)
        row[COL_TYPE] = TYPE_POLYGON
        row[COL_POLYGON] = k
        row[COL_POLYGON + 1:COL_POLYGON + 1 + 3 * k] = np.ravel(self.vertices)

    # --- the viewer -------------------------------------------------------------------------------
    def boundary(self, samples_per_edge: int = 8) -> np.ndarray:
        """(k * samples_per_edge, 3) unit directions along the edges' arcs, from each vertex on."""
        A, B, _ = self._edges()
        out = []
        for a, b in zip(A, B):
            angle = math.atan2(float(np.linalg.norm(np.cross(a, b))), float(a @ b))
            for f in np.arange(samples_per_edge) / samples_per_edge:
                out.append((math.sin((1.0 - f) * angle) * a + math.sin(f * angle) * b) / math.sin(angle))
        return np.array(out)

    def drawing(self, samples_per_edge: int = 8) -> Drawing:
        """The polygon's surface as a fan from the apex (origin) through ``boundary``."""
        return fan(self.boundary(samples_per_edge), closed=True)


def _turns(V: np.ndarray) -> np.ndarray:
    """(k,) the turn (radians, in [-pi, pi)) about +Y from each vertex of ``V`` (k, 3) to the next,
    by their azimuths ``atan2(z, x)``."""
    azimuth = np.arctan2(V[:, 2], V[:, 0])
    return np.mod(np.roll(azimuth, -1) - azimuth + math.pi, 2.0 * math.pi) - math.pi


__all__ = ["Polygon", "MAX_VERTICES", "MIN_TURN"]
