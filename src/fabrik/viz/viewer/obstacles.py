"""Obstacles drawn in a viser scene (``fabrik.obstacles``), the demo sets ``fabrik view ...
--obstacles demo`` places, and the pole and held-object markers the scenes share."""

from __future__ import annotations

import numpy as np

from fabrik.viz.viewer.server import matrix_to_wxyz

#: the obstacles' colour (grey, half transparent) and the pole's (violet)
OBSTACLE = (150, 150, 165)
POLE = (150, 60, 210)
HELD = (200, 120, 40)


def capsule_mesh(a, b, radius: float, sides: int = 16, rings: int = 6):
    """(vertices (v, 3) float32, faces (f, 3) uint32) of the capsule of ``radius`` about a-b: a
    cylinder closed by two half spheres."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    axis = b - a
    length = float(np.linalg.norm(axis))
    u = axis / length if length > 0 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(u, [1.0, 0.0, 0.0] if abs(u[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(u, e1)
    verts = []
    # rings from the bottom pole to the top pole: half sphere at a, then at b
    lats = np.concatenate([np.linspace(-np.pi / 2, 0.0, rings + 1), np.linspace(0.0, np.pi / 2, rings + 1)])
    for k, lat in enumerate(lats):
        centre = a if k <= rings else b
        for s in range(sides):
            phi = 2 * np.pi * s / sides
            d = np.cos(lat) * (np.cos(phi) * e1 + np.sin(phi) * e2) + np.sin(lat) * u
            verts.append(centre + radius * d)
    verts = np.array(verts)
    faces = []
    for k in range(len(lats) - 1):
        for s in range(sides):
            i0, i1 = k * sides + s, k * sides + (s + 1) % sides
            j0, j1 = i0 + sides, i1 + sides
            faces += [(i0, j0, i1), (i1, j0, j1)]
    return verts.astype(np.float32), np.array(faces, dtype=np.uint32)


def draw_obstacles(scene, name: str, obstacles, size: float) -> list:
    """Add ``obstacles`` (``fabrik.obstacles`` types) to ``scene`` under ``name``; a half space as a
    square of side ``4 size`` on its plane. Returns the handles."""
    from fabrik.obstacles import Box, Capsule, HalfSpace, Sphere

    handles = []
    for k, ob in enumerate(obstacles or ()):
        node = f"{name}/obstacles/{k}"
        if isinstance(ob, Sphere):
            h = scene.add_icosphere(node, radius=ob.radius, color=OBSTACLE, opacity=0.6, position=tuple(ob.center))
        elif isinstance(ob, Box):
            h = scene.add_box(node, color=OBSTACLE, dimensions=tuple(2 * ob.half_extents), opacity=0.6,
                              wxyz=tuple(matrix_to_wxyz(ob.rotation)), position=tuple(ob.center))
        elif isinstance(ob, Capsule):
            v, f = capsule_mesh(ob.a, ob.b, ob.radius)
            h = scene.add_mesh_simple(node, v, f, color=OBSTACLE, opacity=0.6)
        elif isinstance(ob, HalfSpace):
            n = np.asarray(ob.normal)
            # a thin box on the plane (its +Y the normal), just behind it
            from scipy.spatial.transform import Rotation

            R = Rotation.align_vectors([n], [[0.0, 1.0, 0.0]])[0].as_matrix()
            h = scene.add_box(node, color=OBSTACLE, dimensions=(4 * size, 0.01 * size, 4 * size), opacity=0.4,
                              wxyz=tuple(matrix_to_wxyz(R)), position=tuple(np.asarray(ob.point) - 0.005 * size * n))
        else:  # pragma: no cover - fabrik.obstacles.pack refuses anything else first
            continue
        handles.append(h)
    return handles


def demo_obstacles(kind: str, model=None) -> list:
    """The obstacles of ``--obstacles demo``: for a chain (``kind`` "chain", the model its
    ``fabrik.Chain``) a ball and a box beside its rest line; for a skeleton a ball in front of the
    chest and a floor under the feet."""
    from fabrik.obstacles import Box, HalfSpace, Sphere

    if kind == "chain":
        reach = float(model.total_length) or 1.0
        root = np.zeros(3)
        root[: model.dim] = model.rest_positions[0]
        return [Sphere(root + [0.35 * reach, 0.55 * reach, 0.0], 0.12 * reach),
                Box(root + [-0.3 * reach, 0.4 * reach, 0.0], [0.08 * reach, 0.08 * reach, 0.08 * reach])]
    rest = model.rest_positions()
    low = float(rest[:, 1].min())
    height = float(np.ptp(rest[:, 1])) or 1.0
    centre = rest.mean(axis=0)
    return [Sphere(centre + [0.0, 0.15 * height, 0.3 * height], 0.06 * height),
            HalfSpace([0.0, low - 0.01 * height, 0.0], [0.0, 1.0, 0.0])]
