"""Random calls of ``fabrik.solve_batch`` for its fuzzing run: ``benchmarks/fuzz_batch.py`` runs
many, ``tests/project/test_fuzz.py`` draws a few through hypothesis.

A case is drawn from a ``numpy.random.Generator``: a chain of 1-10 bones (3D, or 2D one time in
eight; bone lengths and zero-length bones as ``fuzz_limits.random_lengths`` draws them; joint
limits one time in three, ``fuzz_limits.random_limits``), 1-24 targets (inside and beyond the
reach, at the root, on the straight chain's line, all the same), and each argument of
``solve_batch`` either well formed or, one time in ten, malformed: NaN, infinite, huge or complex
numbers, wrong shapes, ragged lists, text, booleans; read-only, non-contiguous and broadcast
arrays (well formed); oriented targets with bad rotations; out-of-range ``tol``, ``max_iter``, ``threads``;
unknown methods, layouts, backends, devices and options.

``run_case`` calls ``solve_batch`` and says what is wrong with the outcome (``failures``): an
exception other than a ``ValueError``, NaN, a shape other than the documented one, bone lengths
off by more than 1e-9 of the reach (plus 1e-12 of the largest coordinate), a root not where it was put, a status that does not match the
error, an error that is not the effector's distance from its target, limits exceeded by more
than 1e-6 rad (limited chains are drawn at the origin, as the limits need, and the check is left out
where a start or root far away took the answer beyond ``ENVELOPE``), or an answer that differs from ``fabrik.solve`` on the same target (bit for bit:
positions, iterations, status; checked on up to three targets of each batch).
"""

from __future__ import annotations

import math

import numpy as np

import fabrik
from fabrik.constraints import limit_violations
from fabrik.model.chain import Chain
from fabrik.model.constraints import MAX_SCALE_DECADES
from fabrik_experiments.fuzz_limits import LENGTH_TOL, LIMIT_TOL, random_lengths, random_limits

#: the odds that each argument of a case is malformed
MALFORMED = 0.1
#: targets of a batch whose answers are compared with ``fabrik.solve``'s
COMPARED = 3
#: bone lengths are checked to ``LENGTH_TOL`` of the reach plus this much of the largest coordinate
ROUNDING = 1e-12
#: limits are checked on answers whose coordinates are within this many times the chain's shortest
#: non-zero bone (``within_limits_envelope``): the 6 decades the limits support
#: (``MAX_SCALE_DECADES``, docs/constraints.md, "Edge cases", "Scale")
ENVELOPE = 10.0 ** MAX_SCALE_DECADES


def _directions(rng, n: int, dim: int) -> np.ndarray:
    d = rng.standard_normal((n, dim))
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def random_chain(rng) -> Chain:
    """A random chain: 1-10 bones, 2D one time in eight, limits one time in three."""
    dim = 2 if rng.random() < 1 / 8 else 3
    n_bones = int(rng.integers(1, 11))
    lengths = random_lengths(rng, n_bones)
    if rng.random() < 0.3:  # a straight chain, the singular start of section 5.4
        steps = np.tile(_directions(rng, 1, dim), (n_bones, 1)) * lengths[:, None]
    else:
        steps = _directions(rng, n_bones, dim) * lengths[:, None]
    limited = rng.random() < 1 / 3
    # far from the origin one time in five, but not with limits: their directions are read to the
    # rounding of the coordinates, and the supported 6 decades of bone lengths leave no room for
    # more (docs/constraints.md, "Edge cases", "Scale")
    far = not limited and rng.random() < 0.2
    origin = np.zeros(dim) if limited else rng.standard_normal(dim) * lengths.max() * (
        10.0 ** rng.integers(0, 4) if far else 1.0)
    chain = Chain.from_positions(np.vstack([np.zeros(dim), np.cumsum(steps, axis=0)]) + origin)
    if limited:
        limits = {i: random_limits(rng, planar=dim == 2) for i in range(n_bones)}
        chain = chain.with_constraints({i: v for i, v in limits.items() if v})
    return chain


def _points(rng, chain: Chain, count: int) -> np.ndarray:
    """(count, d) targets: inside and beyond the reach, at the root, on the chain's line, equal."""
    dim, reach = chain.dim, max(float(chain.bone_lengths.sum()), 1e-300)
    root = chain.rest_positions[0]
    kind = int(rng.integers(0, 6))
    if kind == 0:  # inside the reach
        return root + _directions(rng, count, dim) * rng.uniform(0, 1, (count, 1)) * reach
    if kind == 1:  # beyond it, up to a million times
        return root + _directions(rng, count, dim) * reach * 10.0 ** rng.uniform(0, 6, (count, 1))
    if kind == 2:  # at the root, or at exactly the reach
        return root + _directions(rng, count, dim) * rng.choice([0.0, reach], (count, 1))
    if kind == 3:  # on the line of the rest pose's end, in front and behind
        rest = chain.rest_positions
        line = rest[-1] - rest[0]
        return rest[0] + line * rng.uniform(-2.0, 2.0, (count, 1))
    if kind == 4:  # all the same
        return np.tile(root + _directions(rng, 1, dim) * rng.uniform(0, 1.5) * reach, (count, 1))
    return root + rng.uniform(-1.5, 1.5, (count, dim)) * reach


def _rotations(rng, count: int):
    """Oriented targets' rotations: quaternions, matrices or a scipy Rotation of ``count``."""
    from scipy.spatial.transform import Rotation

    rot = Rotation.random(count, random_state=int(rng.integers(0, 2**31)))
    return [rot.as_quat(), rot.as_matrix(), rot][int(rng.integers(0, 3))]


def _malformed_array(rng, good: np.ndarray):
    """``good`` spoiled one way: a bad number, shape, type, or an array NumPy flags oddly."""
    a = np.array(good, dtype=np.float64, copy=True)
    kind = int(rng.integers(0, 16))
    if kind == 0 and a.size:
        a.flat[int(rng.integers(0, a.size))] = np.nan
        return a
    if kind == 1 and a.size:
        a.flat[int(rng.integers(0, a.size))] = [np.inf, -np.inf][int(rng.integers(0, 2))]
        return a
    if kind == 2 and a.size:
        a.flat[int(rng.integers(0, a.size))] = [1e80, -1e300, 1e75, 7e74][int(rng.integers(0, 4))]
        return a
    if kind == 3:
        return a[..., :-1] if a.shape and a.shape[-1] > 1 else a[..., None]
    if kind == 4:
        return np.concatenate([a, a[..., :1]], axis=-1) if a.ndim else np.array([a, a])
    if kind == 5:
        return a[:0]
    if kind == 6:
        return a.astype(complex) + 1j
    if kind == 7:
        return a > 0
    if kind == 8:
        return a.astype(str)
    if kind == 9:
        return [list(r) for r in a.reshape(len(a), -1)][:-1] + [[1.0]] if a.ndim >= 2 and len(a) > 1 else None
    if kind == 10:
        return a.reshape(-1)
    if kind == 11:
        return a[None]
    if kind == 12:
        return float(a.flat[0]) if a.size else 0.0
    if kind == 13:
        return a.astype(object)
    if kind == 14:
        return "targets"
    return {"x": a}


def _odd_layout(rng, a: np.ndarray) -> np.ndarray:
    """``a`` with the same values as a read-only, non-contiguous, Fortran-ordered, float32, int
    or broadcast array (all valid input)."""
    kind = int(rng.integers(0, 6))
    if kind == 0:
        out = a.copy()
        out.setflags(write=False)
        return out
    if kind == 1:
        wide = np.repeat(a, 2, axis=-1)
        return wide[..., ::2]
    if kind == 2:
        return np.asfortranarray(a)
    if kind == 3:
        return a.astype(np.float32).astype(np.float64) if rng.random() < 0.5 else a.astype(np.float32)
    if kind == 4:
        return np.round(a).astype(np.int64)
    return np.broadcast_to(a[:1], a.shape) if a.ndim >= 2 and len(a) else a


def _number(rng, good, junk: list):
    return good if rng.random() >= MALFORMED else junk[int(rng.integers(0, len(junk)))]


def random_case(rng) -> dict:
    """{"chain", "args": (targets,), "kwargs": {...}}: one ``solve_batch`` call (module notes)."""
    chain = random_chain(rng)
    n, dim = chain.n_joints, chain.dim
    count = int(rng.integers(1, 25))
    points = _points(rng, chain, count)
    reach = float(chain.bone_lengths.sum())
    kwargs: dict = {}
    oriented = rng.random() < 0.15
    targets = points
    if rng.random() < 0.2:
        targets = _odd_layout(rng, points)
    if rng.random() < MALFORMED:
        targets = _malformed_array(rng, points)
    if oriented:
        rotations = _rotations(rng, count)
        if rng.random() < MALFORMED:
            r = np.asarray(rotations.as_quat() if hasattr(rotations, "as_quat") else rotations, dtype=np.float64)
            bad = int(rng.integers(0, 4))
            rotations = [r * 0.0, r[:-1] if len(r) > 1 else r[:0], r * np.nan, r + 0.5][bad]
        targets = (targets, rotations)
    if rng.random() < 0.4:
        pose = fabrik.solve(chain, points[0]).positions  # a bent start the limits allow
        start = np.stack([pose] * count) if rng.random() < 0.4 else pose
        if rng.random() < 0.2:
            start = _odd_layout(rng, start)
        kwargs["initial"] = start if rng.random() >= MALFORMED else _malformed_array(rng, start)
    if rng.random() < 0.3:  # (with limits within the longest bone of the origin: ``random_chain``)
        spread = float(chain.bone_lengths.max()) if chain.constraints else reach
        base = chain.rest_positions[0] + rng.standard_normal((count, dim) if rng.random() < 0.4 else dim) * spread
        kwargs["root"] = base if rng.random() >= MALFORMED else _malformed_array(rng, base)
    if rng.random() < 0.5:
        kwargs["tol"] = _number(rng, float(10.0 ** rng.uniform(-12, 0) * max(reach, 1e-300)),
                                [-1.0, np.nan, np.inf, "0.1", True, None, [1e-3], 1e308, -0.0])
    if rng.random() < 0.4:
        kwargs["max_iter"] = _number(rng, int(rng.choice([0, 1, 2, 5, 50, 1000, 10**30])),
                                     [-1, 1.5, True, "10", None, np.int64(-5), 2**70, np.nan])
    if rng.random() < 0.2:
        kwargs["method"] = _number(rng, ["fabrik", "fabrik-constrained"][int(rng.integers(0, 2))],
                                   ["ccd", "FABRIK", "", None, ["fabrik"], 3])
    if rng.random() < (0.05 if chain.constraints else 0.3):  # (a limited chain takes none)
        kwargs["layout"] = _number(rng, ["lockstep", "per-thread", "baseline"][int(rng.integers(0, 3))],
                                   ["soa", "", None, ["lockstep"], 1])
    if rng.random() < 0.1:
        kwargs["backend"] = _number(rng, "numba", ["warp", "cuda", None, ["numba"], 0])
    if rng.random() < 0.2:
        kwargs["threads"] = _number(rng, int(rng.integers(1, 3)), [0, -1, 10**6, True, 1.0, "2", [1]])
    if rng.random() < 0.02:
        kwargs["device"] = ["cpu", "cuda", None, 0][int(rng.integers(0, 4))]
    if rng.random() < 0.1:
        kwargs[["turn_start", "orientation_tol", "damping", "bogus"][int(rng.integers(0, 4))]] = \
            [True, False, 0.01, -1.0, np.nan, "x"][int(rng.integers(0, 6))]
    return {"chain": chain, "targets": targets, "points": points, "kwargs": kwargs, "reach": reach}


def _single(chain, target, rotation, initial, root, kwargs):
    """``fabrik.solve`` on one target with the batch's arguments."""
    opts = {k: v for k, v in kwargs.items() if k not in ("initial", "root", "layout", "backend", "threads", "device")}
    goal = target if rotation is None else (target, rotation)
    return fabrik.solve(chain, goal, initial=initial, root=root, **opts)


def run_case(case: dict) -> tuple[list[str], bool, object]:
    """Call ``solve_batch`` on ``case``: (the defects found, in words, empty when none; whether it
    answered; its answer or None). A ValueError is a refusal, not a defect."""
    chain, kwargs = case["chain"], case["kwargs"]
    try:
        out = fabrik.solve_batch(chain, case["targets"], **kwargs)
    except ValueError:
        return [], False, None
    except Exception as exc:  # noqa: BLE001 - anything else is a finding
        return [f"crashed: {type(exc).__name__}: {exc}"[:300]], False, None
    return _check(case, out), True, out


def _check(case: dict, out) -> list[str]:
    chain, kwargs = case["chain"], case["kwargs"]
    found = []
    targets = case["targets"]
    rotations = None
    if isinstance(targets, tuple):
        targets, rotations = targets
        if hasattr(rotations, "as_matrix"):
            rotations = rotations.as_matrix()
    targets = np.asarray(targets, dtype=np.float64)
    count, n, dim = len(targets), chain.n_joints, chain.dim
    reach = max(case["reach"], 1e-300)
    p = out.positions
    if p.shape != (count, n, dim) or out.iterations.shape != (count,) or out.error.shape != (count,) \
            or out.status.shape != (count,):
        return [f"shapes: positions {p.shape}, iterations {out.iterations.shape}, error {out.error.shape} for "
                f"{count} targets of {n} joints in {dim}D"]
    if not (np.isfinite(p).all() and np.isfinite(out.error).all()):
        return ["NaN or inf in the answer"]
    if (out.iterations < 0).any() or not np.isin(out.status, (0, 1, 2, 3)).all() \
            or not np.array_equal(out.reached, out.status == 0):
        found.append("iterations, statuses or reached out of step")
    lengths = np.linalg.norm(np.diff(p, axis=1), axis=2)
    # bone lengths are kept to the rounding of the coordinates (docs/conventions.md, "Scale"): a
    # root or start given far away (up to MAX_COORDINATE) takes the chain there
    allowed = LENGTH_TOL * reach + ROUNDING * float(np.abs(p).max())
    drift = float(np.abs(lengths - chain.bone_lengths).max()) if n > 1 else 0.0
    if not drift <= allowed:
        found.append(f"bone length off by {drift / reach:.3g} of the reach")
    effector_error = np.linalg.norm(p[:, -1] - targets, axis=1)
    if not np.all(np.abs(effector_error - out.error) <= 1e-9 * (reach + np.abs(targets).max(axis=1))):
        found.append(f"error is not the effector's distance (off by {np.abs(effector_error - out.error).max():.3g})")
    tol = kwargs.get("tol", fabrik.DEFAULT_TOL)
    if (out.error[out.status == 0] > tol).any():
        found.append("reached beyond tol")
    if kwargs.get("root") is not None:
        root = np.broadcast_to(np.asarray(kwargs["root"], dtype=np.float64), (count, dim))
        if not np.array_equal(p[:, 0], root):
            found.append(f"root not where it was put (off by {np.abs(p[:, 0] - root).max():.3g})")
    if out.frames is not None and within_limits_envelope(chain, p):
        worst = float(limit_violations(chain, p, out.frames).max())
        if not worst <= LIMIT_TOL:
            found.append(f"limit exceeded by {worst:.3g} rad")
    initial = kwargs.get("initial")
    root_arg = kwargs.get("root")
    for k in range(min(count, COMPARED)):
        start = None if initial is None else _row(initial, k, 3)
        base = None if root_arg is None else _row(root_arg, k, 2)
        rot = None if rotations is None else rotations[k]
        try:
            one = _single(chain, targets[k], rot, start, base, kwargs)
        except ValueError as exc:
            found.append(f"target {k}: fabrik.solve refuses what solve_batch solved: {exc}"[:300])
            continue
        if not (np.array_equal(one.positions, p[k]) and one.iterations == out.iterations[k]
                and one.status == out.statuses()[k]):
            found.append(f"target {k}: not fabrik.solve's answer ({one.status}, {one.iterations} iterations against "
                         f"{out.statuses()[k]}, {out.iterations[k]}; positions off by "
                         f"{np.abs(one.positions - p[k]).max():.3g})")
    return found


def within_limits_envelope(chain, positions) -> bool:
    """Whether ``positions`` lie where a limited chain's bone directions can be read: coordinates
    within ``ENVELOPE`` times its shortest non-zero bone (a start or root put farther, up to
    ``MAX_COORDINATE``, is taken, and its limits are then met only to the rounding of its
    directions; docs/constraints.md, "Edge cases", "Scale")."""
    lengths = chain.bone_lengths[chain.bone_lengths > 0.0]
    return lengths.size == 0 or float(np.abs(positions).max()) <= ENVELOPE * float(lengths.min())


def _row(value, k: int, ndim: int):
    """Target k's part of a per-target argument of ``ndim`` dimensions (one row for all when it
    has one row), or the argument itself when it is shared."""
    arr = np.asarray(value)
    if arr.ndim != ndim:
        return value
    return arr[k if len(arr) > 1 else 0]


def describe(case: dict) -> str:
    """A short description of a case, for failure reports."""
    chain = case["chain"]
    kw = {k: (f"array{np.shape(v)}" if isinstance(v, np.ndarray) else v) for k, v in case["kwargs"].items()}
    t = case["targets"]

    def kind(v) -> str:
        return f"{type(v).__name__}{v.shape if isinstance(v, np.ndarray) else ''}"

    shape = f"({kind(t[0])}, rotations {kind(t[1])})" if isinstance(t, tuple) else kind(t)
    return (f"{chain.dim}D chain, lengths {np.array2string(chain.bone_lengths, precision=3)}, limits "
            f"{ {k: [repr(c) for c in v] for k, v in chain.constraints.items()} }, targets {shape}, {kw}")


__all__ = ["random_case", "run_case", "describe", "random_chain", "within_limits_envelope", "MALFORMED", "ENVELOPE"]
