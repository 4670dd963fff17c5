"""Joint limits as geometry in the parent bone's frame (docs/constraints.md): the irregular cone's
surface from its four angles, a hinge's plane with its range, a twist's arc.

Every shape is built once, in the frame of the limit (+Y the parent bone, +X right, +Z up) and
with unit size; the scene places and scales it at each joint after each solve. Cone angles of
90 degrees or more are drawn at 85 degrees (a cone that wide is a half-space or more: the surface
would be unbounded).
"""

from __future__ import annotations

import math

import numpy as np

from fabrik.model.constraints import Cone, Hinge, Twist

_WIDEST = math.radians(85.0)


def cone_boundary(cone: Cone, samples: int = 48) -> np.ndarray:
    """(samples, 3) unit directions on the cone's edge: in the plane y = 1 an ellipse quadrant per
    pair of neighbouring angles (right/+X, up/+Z, left/-X, down/-Z), as in the paper's Fig. 5."""
    out = np.empty((samples, 3))
    for k in range(samples):
        phi = 2.0 * math.pi * k / samples
        c, s = math.cos(phi), math.sin(phi)
        ax = min(cone.right if c >= 0 else cone.left, _WIDEST)
        az = min(cone.up if s >= 0 else cone.down, _WIDEST)
        v = np.array([math.tan(ax) * c, 1.0, math.tan(az) * s])
        out[k] = v / np.linalg.norm(v)
    return out


def cone_mesh(cone: Cone, samples: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """The cone's surface as a fan from the apex (origin): vertices (samples + 1, 3), faces."""
    ring = cone_boundary(cone, samples)
    vertices = np.vstack([np.zeros(3), ring]).astype(np.float32)
    faces = np.array([[0, 1 + k, 1 + (k + 1) % samples] for k in range(samples)], dtype=np.uint32)
    return vertices, faces


def _rotate(v: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    axis = axis / np.linalg.norm(axis)
    return (v * math.cos(angle) + np.cross(axis, v) * math.sin(angle) + axis * (axis @ v) * (1 - math.cos(angle)))


def hinge_mesh(hinge: Hinge, samples: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """The hinge's allowed sector: a fan in the plane normal to its axis, from ``min`` to ``max``
    about the axis starting at the parent bone (+Y)."""
    axis = np.array(hinge.axis)
    angles = np.linspace(hinge.min, hinge.max, samples)
    ring = np.array([_rotate(np.array([0.0, 1.0, 0.0]), axis, a) for a in angles])
    vertices = np.vstack([np.zeros(3), ring]).astype(np.float32)
    faces = np.array([[0, 1 + k, 2 + k] for k in range(samples - 1)], dtype=np.uint32)
    return vertices, faces


def twist_arc(twist: Twist, samples: int = 24, radius: float = 0.35) -> np.ndarray:
    """(samples - 1, 2, 3) segments of the twist range: an arc about the bone (+Y) at unit height
    from ``min`` to ``max``, starting from +Z (the frame's up)."""
    angles = np.linspace(twist.min, twist.max, samples)
    pts = np.array([[radius * math.sin(a), 1.0, radius * math.cos(a)] for a in angles])
    return np.stack([pts[:-1], pts[1:]], axis=1).astype(np.float32)
