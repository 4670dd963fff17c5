"""The polygonal swing limit (``fabrik.limits.Polygon``, issue 39 item 1): its measure and the
projection kernel against a brute-force reference (the polygon's boundary and interior sampled
densely on the sphere), its checks, its file form, and every constrained method keeping it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik.constraints import Cone, LimitsFileError, Polygon, Twist, limit_violations, load_constraints, \
    save_constraints
from fabrik.kernels.constraints import limit_direction, nearest_in_polygon
from fabrik.kernels.limit_layout import pack_limits
from fabrik.limits import LIMIT_TYPES
from fabrik.model.constraints import random_pose

#: the spacing (radians) of the brute force's samples along the boundary
STEP = 2e-4


def random_polygon(rng, k=None) -> Polygon:
    """A random polygon star-shaped about +Y: 3-9 vertices at random azimuth steps (each under
    pi - 0.05) and random angles from +Y (0.1 to 2.4 rad: some behind the joint), so convex and
    non-convex ones alike."""
    k = int(rng.integers(3, 10)) if k is None else k
    while True:
        gaps = rng.uniform(0.05, 1.0, k)
        gaps *= 2.0 * math.pi / gaps.sum()
        if gaps.max() < math.pi - 0.05 and gaps.min() > 0.01:
            break
    phi = rng.uniform(-math.pi, math.pi) + np.concatenate([[0.0], np.cumsum(gaps[:-1])])
    theta = rng.uniform(0.1, 2.4, k)
    return Polygon(np.stack([np.sin(theta) * np.cos(phi), np.cos(theta), np.sin(theta) * np.sin(phi)], axis=1))


def slerp(a, b, f):
    """Points (m, 3) on the great-circle arc from unit a to unit b at fractions f (m,)."""
    angle = math.atan2(float(np.linalg.norm(np.cross(a, b))), float(a @ b))
    return (np.sin((1.0 - f) * angle)[:, None] * a + np.sin(f * angle)[:, None] * b) / math.sin(angle)


def brute_boundary(polygon: Polygon, step: float = STEP) -> np.ndarray:
    """The polygon's boundary sampled every ``step`` rad or less along each edge's arc."""
    V = np.array(polygon.vertices)
    out = []
    for a, b in zip(V, np.roll(V, -1, axis=0)):
        m = max(2, int(math.ceil(math.acos(np.clip(a @ b, -1, 1)) / step)) + 1)
        out.append(slerp(a, b, np.linspace(0.0, 1.0, m)))
    return np.vstack(out)


def brute_region(polygon: Polygon, boundary: np.ndarray, rings: int = 40) -> np.ndarray:
    """The polygon's interior sampled too: points on the arcs from +Y to every 50th boundary point
    (the polygon is star-shaped about +Y, so those arcs fill it)."""
    y = np.array([0.0, 1.0, 0.0])
    f = np.linspace(0.0, 1.0, rings)
    return np.vstack([boundary] + [slerp(y, q, f) for q in boundary[::50]])


def winding_inside(boundary: np.ndarray, d: np.ndarray) -> bool:
    """Whether d is inside the closed curve ``boundary`` on the sphere, by the winding number of its
    stereographic image from -Y (always outside the polygon) around d's image: an independent
    test (a point-in-polygon test in the plane), not the lune test of the code under test."""
    P = boundary[:, [0, 2]] / (1.0 + boundary[:, 1:2])
    q = d[[0, 2]] / (1.0 + d[1])
    r = P - q
    a = np.arctan2(r[:, 1], r[:, 0])
    turn = np.mod(np.diff(np.append(a, a[0])) + math.pi, 2.0 * math.pi) - math.pi
    return abs(turn.sum()) > math.pi


def angle_between(a, b) -> np.ndarray:
    return np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), np.sum(a * b, axis=-1))


def kernel_nearest(polygon: Polygon, d: np.ndarray, reverse: bool = False, G=None) -> tuple[np.ndarray, int]:
    row = pack_limits({0: (polygon,)}, 1)[0]
    out = d.astype(np.float64).copy()
    active = limit_direction(row, np.eye(3) if G is None else G, out, reverse)
    return out, active


def directions(rng, m: int) -> np.ndarray:
    v = rng.normal(size=(m, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("seed", range(12))
def test_measure_and_projection_against_the_brute_force(seed):
    """On random polygons and random directions: the measure is 0 inside (inside as the winding
    test says) and outside the angle to the nearest sampled point of the boundary, the nearest of
    the polygon; the kernel's projection is inside, no farther than any sampled point of the
    polygon (boundary and interior), and at the measured angle."""
    rng = np.random.default_rng(seed)
    polygon = random_polygon(rng)
    boundary = brute_boundary(polygon)
    region = brute_region(polygon, boundary)
    D = directions(rng, 150)
    measured = polygon.violation(D)
    to_boundary = angle_between(D[:, None, :], boundary[None, :, :]).min(axis=1)
    outside = measured > 0.0
    assert outside.any() and (~outside).any()
    assert np.all(np.abs(measured - to_boundary)[outside] <= STEP), np.abs(measured - to_boundary)[outside].max()
    for d, m, edge in zip(D, measured, to_boundary):
        if edge > 1e-3:  # away from the boundary the two inside tests must agree
            assert (m == 0.0) == winding_inside(boundary, d)
        p, active = kernel_nearest(polygon, d)
        assert abs(np.linalg.norm(p) - 1.0) < 1e-14
        assert polygon.violation(p) < 1e-12
        got = float(angle_between(d, p))
        if m == 0.0:
            assert np.array_equal(p, d) and active == (edge <= 1e-9)
        else:
            assert active == 1
            # the nearest point: no sampled point of the polygon is nearer, and the measure is its angle
            assert got <= angle_between(d[None, :], region).min() + 1e-12
            assert got == pytest.approx(m, abs=1e-12)
            # and idempotent: a projected direction stays where it is
            again, _ = kernel_nearest(polygon, p)
            assert np.allclose(again, p, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(3, 12))
def test_projection_is_the_nearest_point_property(seed, k):
    """Property: for any star-shaped polygon and direction, the projection lies inside and is at
    least as near as the nearest of 4,000 points sampled on the boundary."""
    rng = np.random.default_rng(seed)
    polygon = random_polygon(rng, k)
    boundary = brute_boundary(polygon, step=5e-3)
    d = directions(rng, 1)[0]
    p, _ = kernel_nearest(polygon, d)
    assert polygon.violation(p) < 1e-12
    if polygon.violation(d) > 0.0:
        assert float(angle_between(d, p)) <= angle_between(d[None, :], boundary).min() + 1e-12


def test_reverse_reads_the_point_reflection_through_the_bone():
    """The forward stage reads a child's limit reversed: the region reflected by (x, y, z) ->
    (-x, y, -z), in any reference frame G."""
    rng = np.random.default_rng(5)
    polygon = random_polygon(rng)
    G = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    G *= np.sign(np.linalg.det(G))
    flip = np.diag([-1.0, 1.0, -1.0])
    for d in directions(rng, 50):
        got, _ = kernel_nearest(polygon, d, reverse=True, G=G)
        want, _ = kernel_nearest(polygon, flip @ (G.T @ d))
        assert np.allclose(got, G @ (flip @ want), atol=1e-12)


def test_the_reach_is_the_farthest_point_from_the_bone():
    rng = np.random.default_rng(2)
    for _ in range(10):
        polygon = random_polygon(rng)
        boundary = brute_boundary(polygon, step=1e-4)
        assert polygon.reach == pytest.approx(float(np.arccos(boundary[:, 1].min())), abs=1e-7)
        for _ in range(5):
            assert polygon.violation(polygon.sample_direction(rng)) == 0.0


def test_a_regular_polygon_lies_inside_its_circumscribed_cone():
    polygon = Polygon.regular(0.6, 6)
    assert polygon.reach == pytest.approx(0.6)
    cone = Cone.circular(0.6)
    D = directions(np.random.default_rng(0), 2000)
    assert np.all(polygon.violation(D) >= cone.violation(D) - 1e-12)
    # the middle of an edge is nearer +Y than the vertices: atan(tan(0.6) cos(pi / 6))
    mid = np.array(polygon.vertices[0]) + np.array(polygon.vertices[1])
    assert math.acos(mid[1] / np.linalg.norm(mid)) == pytest.approx(math.atan(math.tan(0.6) * math.cos(math.pi / 6)))


def test_vertices_are_checked_and_kept_in_one_order():
    square = [(1, 1, 0), (0, 1, 1), (-1, 1, 0), (0, 1, -1)]  # increasing azimuth atan2(z, x)
    a = Polygon(square)
    b = Polygon([square[0], square[3], square[2], square[1]])  # the other way round
    assert a == b and np.allclose(np.linalg.norm(a.vertices, axis=1), 1.0)
    assert np.allclose(a.vertices[1], np.array([0, 1, 1]) / math.sqrt(2))
    assert Polygon(a.vertices) == a  # unit vertices are kept exactly
    for bad, says in [
        ([(1, 1, 0), (0, 1, 1)], "3 to 64"),
        ([(1, 1, 0)] * 65, "3 to 64"),
        (5, "list of directions"),
        ([(1, 1, 0), (0, 1, 1), (0, 0, 0)], r"vertices\[2\] must be non-zero"),
        ([(1, 1, 0), (0, 1, 1), (-1, 1, float("nan"))], r"vertices\[2\] must be 3 finite"),
        ([(1, 1, 0), (0, 1, 1), (1, 2)], r"vertices\[2\] must be 3"),
        ([(1, 1, 0), (0, 1, 1), (0, 1, 0), (0, 1, -1)], r"vertices\[2\] is 0 rad from \+Y"),
        ([(1, 1, 0), (-1, 1, 0.2), (0, 1, 1), (0, 1, -1)], "go round \\+Y once"),
        ([(1, 1, 0), (-1, 1, 0.001), (0, 1, -1)], "turns 3.14"),
        ([(1, 1, 0), (1, 2, 1e-5), (0, 1, 1), (-1, 1, 0), (0, 1, -1)], "between 0.001"),
    ]:
        with pytest.raises(ValueError, match=says):
            Polygon(bad)


def test_a_polygon_goes_through_the_limit_file(tmp_path):
    rng = np.random.default_rng(3)
    mapping = {0: (random_polygon(rng), Twist(-0.4, 0.4)), "j": (Polygon.regular(0.7, 5),)}
    path = tmp_path / "limits.json"
    save_constraints(path, mapping, units="degrees")
    entry = json.loads(path.read_text())["joints"]["j"][0]
    assert entry["type"] == "polygon" and len(entry["vertices"]) == 5
    assert load_constraints(path) == mapping
    assert LIMIT_TYPES["polygon"] is Polygon
    for vertices, says in [("x", "field 'vertices': must be a list of"),
                           ([[1, 1, 0], [0, 1, 1], [1, 0]], "field 'vertices': must be a list of 3 numbers"),
                           ([[1, 1, 0], [0, 1, 1], [-1, 1, 0], [1, 1, 0.1]], "field 'vertices': Polygon.vertices")]:
        path.write_text(json.dumps({"units": "degrees", "joints": {"j": [{"type": "polygon", "vertices": vertices}]}}))
        with pytest.raises(LimitsFileError, match=f"joint 'j', entry 0, {says}"):
            load_constraints(path)


def test_a_2d_chain_takes_no_polygon():
    with pytest.raises(ValueError, match=r"constraints\[0\]: a Polygon cannot limit a 2D chain"):
        fabrik.Chain.straight(3, dim=2).with_constraints({0: Polygon.regular(0.5, 4)})


def test_the_drawing_is_the_boundary():
    polygon = random_polygon(np.random.default_rng(4))
    drawing = polygon.drawing(samples_per_edge=6)
    ring = drawing.vertices[1:].astype(np.float64)
    assert drawing.frame == "reference" and ring.shape == (6 * len(polygon.vertices), 3)
    assert polygon.violation(ring / np.linalg.norm(ring, axis=1, keepdims=True)).max() < 1e-6
    assert drawing.faces.max() == len(ring)


limited_methods = ["fabrik-constrained", "ccd-constrained", "jacobian-dls-constrained"]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), method=st.sampled_from(limited_methods))
def test_chain_methods_never_break_a_polygon(seed, method):
    """Property: every constrained chain method answers with every polygon (and twist) kept, bone
    lengths exact, from a start inside the limits, for reachable and unreachable targets alike."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    limits = {i: (random_polygon(rng), Twist(-0.5, 0.5)) if rng.random() < 0.3 else random_polygon(rng)
              for i in range(n - 1)}
    chain = fabrik.Chain.straight(n).with_constraints(limits)
    start, _ = random_pose(chain, rng)
    target = random_pose(chain, rng)[0][-1] if rng.random() < 0.5 else rng.uniform(-n, n, 3)
    sol = fabrik.solve(chain, target, method=method, initial=start, max_iter=200)
    assert np.isfinite(sol.positions).all()
    assert limit_violations(chain, sol.positions, sol.extras["frames"]).max() < 1e-9
    assert np.allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), chain.bone_lengths, atol=1e-9)


def test_fabrik_reaches_targets_within_polygons():
    """Targets made by poses inside the polygons are reachable; FABRIK reaches most of them."""
    rng = np.random.default_rng(11)
    chain = fabrik.Chain.straight(6).with_constraints({i: Polygon.regular(0.5, 5, start=0.3 * i) for i in range(5)})
    reached = 0
    for _ in range(40):
        target = random_pose(chain, rng)[0][-1]
        sol = fabrik.solve(chain, target, tol=1e-6)
        assert limit_violations(chain, sol.positions, sol.extras["frames"]).max() < 1e-9
        reached += sol.status == "reached"
    assert reached >= 36


@pytest.mark.parametrize("method", ["fabrik-constrained", "ccd-constrained"])
def test_skeleton_methods_keep_a_polygon(method):
    body = fabrik.models.humanoid()
    limits = {"l_shoulder": Polygon([(0.8, 1, 0.2), (0.1, 1, 0.9), (-0.6, 1, 0.1), (0.0, 1, -0.5)]),
              "r_shoulder": (Polygon.regular(0.8, 7), Twist(-0.3, 0.3)), "l_knee": Cone.circular(0.9)}
    limited = body.with_constraints(limits)
    rest = body.rest_positions()
    rng = np.random.default_rng(0)
    for _ in range(5):
        targets = {"l_wrist": rest[body.index("l_wrist")] + rng.uniform(-0.5, 0.5, 3),
                   "r_wrist": rest[body.index("r_wrist")] + rng.uniform(-0.5, 0.5, 3)}
        sol = fabrik.solve(limited, targets=targets, method=method)
        assert limit_violations(limited, sol.positions, sol.extras["frames"]).max() < 1e-9
