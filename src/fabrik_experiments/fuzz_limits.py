"""Random limited chains and trees for the limit fuzzing run (issue 31): ``benchmarks/fuzz_limits.py``
runs many, ``tests/project/test_fuzz.py`` draws a few through hypothesis.

A case is drawn from a ``numpy.random.Generator``: a chain of 1-8 bones (3D, or 2D one time in
eight) or a tree of 3-10 joints, bone lengths log-uniform over up to ``SCALE_DECADES`` decades
around a random unit (1e-3 to 1e3), about one bone in seven of zero length (never all), and on
each joint with a bone a random choice of none, a ``Cone``, a ``Hinge``, a ``Twist``, a
``Polygon`` (3D only), or a cone, hinge or polygon with a twist. Angles are drawn from the edges
as often as from the inside: cones of the narrowest and widest supported angle
(``MIN_CONE_ANGLE``), hinge ranges reaching +-pi, twist ranges touching or spanning +-pi
(``Twist(pi, pi)``, ``Twist(-pi, pi)``, ``Twist(-pi, -pi + 0.1)``), polygons of 3 to 8 vertices
or of 64, with vertices near +Y and near -Y and steps about +Y near ``MIN_TURN`` and near
pi - ``MIN_TURN`` (``random_polygon``).
Targets: half the time a pose the limits allow (chains: ``random_pose``), else a point within
1.5 times the reach.

``run_case`` solves a case with one constrained method and measures what the issue asks for:
the largest limit violation (radians, ``fabrik.constraints.limit_violations``: measured in NumPy
from the solution's frames, independent of the kernels; twist ranges are read modulo 2 pi, so
``Twist(pi, pi)`` is the half turn either way), the largest bone-length change relative to the reach, NaN, and the wall time.
"""

from __future__ import annotations

import math
import time

import numpy as np

from fabrik.constraints import Cone, Hinge, Polygon, Twist, limit_violations
from fabrik.limits.polygon import MAX_VERTICES, MIN_TURN
from fabrik.model.chain import Chain
from fabrik.model.constraints import MIN_CONE_ANGLE, random_pose
from fabrik.model.skeleton import Skeleton
from fabrik.solvers import methods, registry, solve

#: bone lengths of a case span at most this many decades: the whole supported range
#: (``fabrik.model.constraints.MAX_SCALE_DECADES``)
SCALE_DECADES = 6.0
#: a solve taking longer than this (seconds) counts as a failure
MAX_SECONDS = 2.0
#: tolerances the issue sets: limits to 1e-6 rad, bone lengths to 1e-9 of the reach
LIMIT_TOL = 1e-6
LENGTH_TOL = 1e-9


def chain_methods() -> list[str]:
    """Every registered chain method with joint limits."""
    return [m for m in methods("chain") if registry.get(m).limits]


def skeleton_methods() -> list[str]:
    """Every registered skeleton method with joint limits."""
    return [m for m in methods("skeleton") if registry.get(m).limits]


def _edge_or_uniform(rng, edges, lo, hi) -> float:
    return float(rng.choice(edges)) if rng.random() < 0.5 else float(rng.uniform(lo, hi))


def random_limits(rng, planar: bool = False) -> list:
    """A random list of limits for one joint (module notes); ``planar``: ones a 2D chain takes."""
    pi = math.pi
    kind = int(rng.integers(0, 8))
    items = []
    if kind in (6, 7) and not planar:
        items.append(random_polygon(rng))
    if kind in (1, 4):
        edges = [MIN_CONE_ANGLE, 0.05, pi / 2, pi - MIN_CONE_ANGLE, pi - 0.05]
        items.append(Cone(*[_edge_or_uniform(rng, edges, MIN_CONE_ANGLE, pi - MIN_CONE_ANGLE) for _ in range(4)]))
    if kind in (2, 5):
        if planar:
            axis = (0.0, 0.0, 1.0 if rng.random() < 0.5 else -1.0)
        else:
            t = rng.uniform(0, 2 * pi)
            axis = (math.cos(t), 0.0, math.sin(t))
        a, b = sorted(_edge_or_uniform(rng, [-pi, 0.0, pi], -pi, pi) for _ in range(2))
        items.append(Hinge(axis, a, b))
    if kind in (3, 4, 5, 7):
        choices = [(pi, pi), (-pi, pi), (-pi, -pi), (-pi, -pi + 0.1), (pi - 0.1, pi), (0.0, 0.0)]
        if rng.random() < 0.5:
            lo, hi = choices[int(rng.integers(0, len(choices)))]
        else:
            lo, hi = sorted(rng.uniform(-pi, pi, 2))
        if planar and not lo <= 0.0 <= hi:
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        items.append(Twist(lo, hi))
    return items


def random_polygon(rng) -> Polygon:
    """A random polygon star-shaped about +Y: 3-8 vertices (one time in ten ``MAX_VERTICES``), each
    step about +Y and each angle from +Y drawn from the edges as often as from the inside (a step
    of 1.01 ``MIN_TURN`` or pi - 1.01 ``MIN_TURN``, an angle of 1.001 ``MIN_CONE_ANGLE``, pi / 2 or
    pi - 1.001 ``MIN_CONE_ANGLE``), going round +Y either way."""
    k = MAX_VERTICES if rng.random() < 0.1 else int(rng.integers(3, 9))
    lo, hi = 1.01 * MIN_TURN, math.pi - 1.01 * MIN_TURN
    while True:
        turns = rng.uniform(0.05, 1.0, k)
        if rng.random() < 0.5:  # one step at an edge, the others sharing the rest of the turn
            j = int(rng.integers(0, k))
            edge = lo if rng.random() < 0.5 else hi
            rest = np.delete(turns, j)
            turns = np.insert(rest * (2.0 * math.pi - edge) / rest.sum(), j, edge)
        else:
            turns *= 2.0 * math.pi / turns.sum()
        if turns.min() >= lo and turns.max() <= hi:
            break
    phi = rng.uniform(-math.pi, math.pi) + np.concatenate([[0.0], np.cumsum(turns[:-1])])
    edges = [1.001 * MIN_CONE_ANGLE, math.pi / 2, math.pi - 1.001 * MIN_CONE_ANGLE]
    theta = np.array([_edge_or_uniform(rng, edges, 1.001 * MIN_CONE_ANGLE, math.pi - 1.001 * MIN_CONE_ANGLE)
                      for _ in range(k)])
    vertices = np.stack([np.sin(theta) * np.cos(phi), np.cos(theta), np.sin(theta) * np.sin(phi)], axis=1)
    return Polygon(vertices if rng.random() < 0.5 else vertices[::-1])


def random_lengths(rng, n_bones: int) -> np.ndarray:
    """(n_bones,) lengths: log-uniform over up to ``SCALE_DECADES`` decades around a random unit,
    about one in seven zero (never all)."""
    unit = 10.0 ** rng.uniform(-3, 3)
    decades = SCALE_DECADES if rng.random() < 0.25 else rng.uniform(0, SCALE_DECADES)
    lengths = unit * 10.0 ** rng.uniform(0, decades, n_bones)
    if n_bones >= 2 and decades == SCALE_DECADES:  # the two ends of the range, exactly
        lengths[:2] = unit, unit * 10.0 ** decades * (1 - 1e-6)  # within it after rounding
    zero = rng.random(n_bones) < 1 / 7
    if zero.all():
        zero[int(rng.integers(0, n_bones))] = False
    lengths[zero] = 0.0
    return lengths


def _directions(rng, n: int, dim: int) -> np.ndarray:
    d = rng.standard_normal((n, dim))
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def random_chain_case(rng) -> dict:
    """{"kind": "chain", "model": Chain, "target": (d,)}"""
    dim = 2 if rng.random() < 1 / 8 else 3
    n_bones = int(rng.integers(1, 9))
    lengths = random_lengths(rng, n_bones)
    steps = _directions(rng, n_bones, dim) * lengths[:, None]
    points = np.vstack([np.zeros(dim), np.cumsum(steps, axis=0)]) + rng.standard_normal(dim) * lengths.max()
    chain = Chain.from_positions(points)
    limits = {i: random_limits(rng, planar=dim == 2) for i in range(n_bones)}
    chain = chain.with_constraints({i: v for i, v in limits.items() if v})
    reach = float(lengths.sum())
    if rng.random() < 0.5:
        target = random_pose(chain, rng)[0][-1][:dim]
    else:
        target = points[0] + _directions(rng, 1, dim)[0] * rng.uniform(0, 1.5) * reach
    return {"kind": "chain", "model": chain, "target": np.asarray(target, dtype=np.float64), "reach": reach}


def random_tree_case(rng) -> dict:
    """{"kind": "tree", "model": Skeleton, "targets": {name: (3,)}}"""
    n = int(rng.integers(3, 11))
    parents = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)])
    lengths = random_lengths(rng, n - 1)
    offsets = np.vstack([np.zeros(3), _directions(rng, n - 1, 3) * lengths[:, None]])
    names = tuple(f"j{i}" for i in range(n))
    skel = Skeleton.from_parents(names, parents, offsets)
    leaves = set(skel.leaves)
    limits = {}
    for j in range(n):
        if j in leaves:
            continue
        items = random_limits(rng)
        if items:
            limits[names[j]] = items
    skel = skel.with_constraints(limits)
    rest = skel.rest_positions()
    reach = float(lengths.sum())
    effectors = [j for j in sorted(leaves) if j != 0]
    chosen = [j for j in effectors if rng.random() < 0.7] or effectors[:1]
    targets = {names[j]: rest[j] + _directions(rng, 1, 3)[0] * rng.uniform(0, 0.5) * reach for j in chosen}
    return {"kind": "tree", "model": skel, "targets": targets, "reach": reach}


def random_case(rng) -> dict:
    """A chain (two times in three) or a tree."""
    return random_chain_case(rng) if rng.random() < 2 / 3 else random_tree_case(rng)


def warm_up(chain_methods_: list[str], skeleton_methods_: list[str]) -> None:
    """Compile (or load) every method's kernels before anything is timed: a first call pays the
    numba compilation, 10-60 s, which is not the solve's time."""
    chain = Chain.straight(3).with_constraints({0: [Cone.circular(0.5), Twist(-1.0, 1.0)],
                                                1: Hinge((1.0, 0.0, 0.0), -1.0, 1.0)})
    flat = Chain.straight(3, dim=2).with_constraints({0: Cone.circular(0.5)})
    skel = Skeleton.from_parents(("a", "b", "c", "d"), [-1, 0, 1, 1], [[0, 0, 0], [0, 1, 0], [0, 1, 0], [1, 0, 0]])
    skel = skel.with_constraints({"a": Cone.circular(0.5), "b": [Hinge((1.0, 0.0, 0.0), -1.0, 1.0), Twist(-1, 1)]})
    for m in chain_methods_:
        solve(chain, [1.0, 1.0, 0.5], method=m)
        solve(flat, [1.0, 1.0], method=m)
    for m in skeleton_methods_:
        solve(skel, targets={"c": [0.3, 1.8, 0.2], "d": [0.8, 0.9, 0.1]}, method=m)


def run_case(case: dict, method: str, *, max_iter: int | None = None) -> dict:
    """Solve ``case`` with ``method``; {"violation", "length_drift" (relative to the reach),
    "nan", "seconds", "status", "iterations"}."""
    model = case["model"]
    start = time.perf_counter()
    if case["kind"] == "chain":
        sol = solve(model, case["target"], method=method, max_iter=max_iter)
    else:
        sol = solve(model, targets=case["targets"], method=method, max_iter=max_iter)
    seconds = time.perf_counter() - start
    pos = sol.positions
    nan = not np.isfinite(pos).all()
    reach = max(case["reach"], 1e-300)
    if case["kind"] == "chain":
        lengths = np.linalg.norm(np.diff(pos, axis=0), axis=1)
        drift = float(np.abs(lengths - model.bone_lengths).max()) / reach
    else:
        parents = model.parents
        lengths = np.linalg.norm(pos[1:] - pos[parents[1:]], axis=1)
        drift = float(np.abs(lengths - model.bone_lengths[1:]).max()) / reach
    violation = math.inf if nan else float(limit_violations(model, pos, sol.extras["frames"]).max())
    return {"violation": violation, "length_drift": drift, "nan": nan,
            "seconds": seconds, "status": sol.status, "iterations": int(sol.iterations)}


def failures(result: dict, timed: bool = True) -> list[str]:
    """What a ``run_case`` result breaks, in words (empty when it passes); ``timed``: a case over
    ``MAX_SECONDS`` counts (the benchmark runs; tests leave wall clocks out)."""
    out = []
    if result["nan"]:
        out.append("NaN")
    if not result["violation"] <= LIMIT_TOL:
        out.append(f"limit exceeded by {result['violation']:.3g} rad")
    if not result["length_drift"] <= LENGTH_TOL:
        out.append(f"bone length off by {result['length_drift']:.3g} of the reach")
    if timed and not result["seconds"] <= MAX_SECONDS:
        out.append(f"took {result['seconds']:.2f} s")
    return out


def describe(case: dict) -> str:
    """A short description of a case, for failure reports."""
    model = case["model"]
    lengths = model.bone_lengths if case["kind"] == "chain" else model.bone_lengths[1:]
    limits = {k: [repr(c) for c in v] for k, v in model.constraints.items()}
    return f"{case['kind']} of {len(lengths)} bones, lengths {np.array2string(lengths, precision=3)}, limits {limits}"
