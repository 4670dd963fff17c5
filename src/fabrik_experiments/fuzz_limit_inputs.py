"""Random input to the joint-limit API for the limit fuzzing run's ``--surface inputs``
(``benchmarks/fuzz_limits.py``; ``tests/project/test_fuzz.py`` draws a few through hypothesis): limit
files, the limit types themselves and ``limit_violations``. (``fabrik_experiments.fuzz_limits``
draws the solves of limited models; this module reuses its random limits and models.)

A case is one of:

* ``file``: a random mapping of limits (``fuzz_limits.random_limits``) under joint names or
  indices, written by ``save_constraints`` in degrees or radians and read back by
  ``load_constraints``; two times in three the file is spoiled first: a field, the type, the
  units or a key replaced by junk (lists, objects, text, booleans, NaN, infinities, huge or
  out-of-range numbers), fields dropped or added, entries duplicated, the text cut or its bytes
  changed. One case in ten saves a spoiled mapping instead (junk keys and values).
* ``type``: ``Cone``, ``Cone.circular``, ``Hinge``, ``Twist`` or ``Polygon`` built from random
  arguments (within their ranges three times in four, else junk or edges: 0, +-pi,
  ``MIN_CONE_ANGLE``, NaN, infinities, 1e308; a polygon's vertices a valid polygon's three times
  in four, else one of them junk, too few or too many, one on +Y, or two swapped).
* ``violations``: ``fabrik.constraints.limit_violations`` on a random limited chain or tree
  (``fuzz_limits``) with random poses and frames, stacked along leading axes, or spoiled ones
  (shapes, NaN, huge coordinates, frames that are not rotations, text).

``run_input_case`` says what is wrong with the outcome: an exception other than a ``ValueError``
(``LimitsFileError`` for files); a file that loads without being what was saved (angles to 1e-12
relative: degrees do not round trip every last bit); a spoiled file whose limits break their own
rules; a limit object outside its documented ranges; violations that are not finite and >= 0,
of the wrong shape, or that differ between a stacked call and a call per pose.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import numpy as np

from fabrik.constraints import Cone, Hinge, LimitsFileError, Polygon, Twist, limit_violations, load_constraints, \
    save_constraints
from fabrik.limits.polygon import MAX_VERTICES, MIN_TURN
from fabrik.model.constraints import MIN_CONE_ANGLE
from fabrik_experiments.fuzz_limits import random_chain_case, random_limits, random_polygon, random_tree_case

#: the junk a spoiled value is drawn from
JUNK = [None, True, False, "", "cone", "12", [], [1, 2], [1, 0, 0, 0], {}, {"a": 1}, math.nan, math.inf, -math.inf,
        1e308, -1e308, 10 ** 400, -5, 0, 400, -400, 5e-324, 180, -180, 3.1415926535897936, 0.57]

_FOLDER = None


def _folder() -> Path:
    global _FOLDER
    if _FOLDER is None:
        _FOLDER = tempfile.TemporaryDirectory(prefix="fuzz-limits-")
    return Path(_FOLDER.name)


def _junk(rng):
    return JUNK[int(rng.integers(0, len(JUNK)))]


def _random_mapping(rng) -> dict:
    """{joint name or index: [limits]}, 1-5 joints."""
    out = {}
    for _ in range(int(rng.integers(1, 6))):
        key = int(rng.integers(0, 20)) if rng.random() < 0.5 else f"j{int(rng.integers(0, 20))}"
        items = random_limits(rng)
        if items:
            out[key] = items
    return out


def _spoil(rng, data: dict) -> dict | list | str:
    """The decoded JSON of a limit file, spoiled one way."""
    kind = int(rng.integers(0, 9))
    joints = data["joints"]
    entries = [(key, k) for key, value in joints.items() for k in range(len(value))]
    if kind == 0:
        data["units"] = _junk(rng)
    elif kind == 1 and entries:
        key, k = entries[int(rng.integers(0, len(entries)))]
        entry = joints[key][k]
        field = list(entry)[int(rng.integers(0, len(entry)))]
        entry[field] = _junk(rng)
    elif kind == 2 and entries:
        key, k = entries[int(rng.integers(0, len(entries)))]
        entry = joints[key][k]
        del entry[list(entry)[int(rng.integers(0, len(entry)))]]
    elif kind == 3 and entries:
        key, k = entries[int(rng.integers(0, len(entries)))]
        joints[key][k][["extra", "type", "axis", "min", "vertices"][int(rng.integers(0, 5))]] = _junk(rng)
    elif kind == 4 and entries:
        key, k = entries[int(rng.integers(0, len(entries)))]
        joints[key].append(dict(joints[key][k]))  # two of a kind on one joint
    elif kind == 5:
        joints[["-1", " 3", "3", "", "1.5", "\u0663", "\u00b2"][int(rng.integers(0, 7))]] = [] if rng.random() < 0.5 \
            else _junk(rng)
    elif kind == 6 and joints:
        key = list(joints)[int(rng.integers(0, len(joints)))]
        joints[key] = _junk(rng)
    elif kind == 7:
        data[["extra", "Units", ""][int(rng.integers(0, 3))]] = _junk(rng)
    else:
        return [data, _junk(rng)][int(rng.integers(0, 2))] if rng.random() < 0.3 else {"joints": joints}
    return data


def random_file_case(rng) -> dict:
    """{"kind": "file", "mapping", "units", "text" (what the file holds), "spoiled"}, or
    {"kind": "file", "save": mapping, "units"} for a save of a spoiled mapping."""
    units = ["degrees", "radians"][int(rng.integers(0, 2))]
    mapping = _random_mapping(rng)
    if rng.random() < 0.1:
        junk_keys = [True, -1, 1.5, (1, 2), None, "x", 3]
        spoiled = {junk_keys[int(rng.integers(0, len(junk_keys)))]: _junk(rng) if rng.random() < 0.5 else
                   random_limits(rng) for _ in range(int(rng.integers(1, 4)))}
        return {"kind": "file", "save": {**mapping, **spoiled}, "units": units if rng.random() < 0.8 else _junk(rng)}
    path = _folder() / "limits.json"
    save_constraints(path, mapping, units=units)
    text = path.read_text()
    spoiled = rng.random() < 2 / 3
    if spoiled:
        if rng.random() < 0.2:  # the text itself
            cut = int(rng.integers(0, len(text)))
            text = [text[:cut], text[:cut] + "\x00" + text[cut:], text.replace(":", "=", 1),
                    text.replace("[", "[" * 3000, 1), text.replace('"', "'")][int(rng.integers(0, 5))]
        else:
            text = json.dumps(_spoil(rng, json.loads(text)))
    return {"kind": "file", "mapping": mapping, "units": units, "text": text, "spoiled": spoiled}


def _angles(item) -> list[float]:
    return [getattr(item, f) for f in ("up", "down", "left", "right", "min", "max") if hasattr(item, f)] + \
        list(getattr(item, "axis", ())) + list(np.ravel(getattr(item, "vertices", ())))


def _same(a: dict, b: dict) -> bool:
    if set(a) != set(b):
        return False
    for key in a:
        x, y = sorted(a[key], key=lambda c: isinstance(c, Twist)), list(b[key])
        if len(x) != len(y) or any(type(p) is not type(q) or not np.allclose(_angles(p), _angles(q), rtol=1e-12,
                                                                               atol=1e-15) for p, q in zip(x, y)):
            return False
    return True


def limit_ok(item) -> str:
    """'' when a limit object keeps its documented ranges, else what it breaks."""
    if isinstance(item, Cone):
        bad = [f for f in ("up", "down", "left", "right")
               if not MIN_CONE_ANGLE <= getattr(item, f) <= math.pi - MIN_CONE_ANGLE]
        return f"Cone {bad} out of range" if bad else ""
    if isinstance(item, Hinge):
        axis = np.asarray(item.axis)
        if axis.shape != (3,) or not np.isfinite(axis).all() or abs(np.linalg.norm(axis) - 1.0) > 1e-12 or axis[1]:
            return f"Hinge axis {item.axis}"
    if isinstance(item, (Hinge, Twist)):
        if not (-math.pi <= item.min <= item.max <= math.pi):
            return f"{type(item).__name__} range [{item.min}, {item.max}]"
        return ""
    if isinstance(item, Polygon):
        V = np.asarray(item.vertices, dtype=np.float64)
        if V.ndim != 2 or V.shape[1] != 3 or not 3 <= len(V) <= MAX_VERTICES or not np.isfinite(V).all():
            return f"Polygon of vertices {V.shape}"
        if np.abs(np.linalg.norm(V, axis=1) - 1.0).max() > 1e-12:
            return "Polygon vertices not unit"
        polar = np.arctan2(np.hypot(V[:, 0], V[:, 2]), V[:, 1])
        if polar.min() < MIN_CONE_ANGLE or polar.max() > math.pi - MIN_CONE_ANGLE:
            return f"Polygon vertex {polar.min()}..{polar.max()} rad from +Y"
        azimuth = np.arctan2(V[:, 2], V[:, 0])
        turns = np.mod(np.roll(azimuth, -1) - azimuth + math.pi, 2.0 * math.pi) - math.pi
        if turns.min() < MIN_TURN or turns.max() > math.pi - MIN_TURN or abs(turns.sum() - 2.0 * math.pi) > 1e-6:
            return f"Polygon turns {turns.min()}..{turns.max()} rad, {turns.sum()} in all"
        return ""
    return f"not a limit: {item!r}"


def random_type_case(rng) -> dict:
    """{"kind": "type", "make": which constructor, "args": its arguments}."""
    edges = [0.0, -0.0, MIN_CONE_ANGLE, MIN_CONE_ANGLE * (1 - 1e-16), math.pi, -math.pi, math.pi - MIN_CONE_ANGLE,
             math.nextafter(math.pi, 4), 1e-300, math.nan, math.inf, 1e308, np.float32(1.0), np.int64(1)]

    make = ["cone", "circular", "hinge", "twist", "polygon"][int(rng.integers(0, 5))]
    lo, hi = (MIN_CONE_ANGLE, math.pi - MIN_CONE_ANGLE) if make in ("cone", "circular") else (-math.pi, math.pi)

    def number():  # within the range three times in four, else an edge or junk
        pick = rng.random()
        if pick < 0.75:
            return float(rng.uniform(lo, hi))
        if pick < 0.9:
            return edges[int(rng.integers(0, len(edges)))]
        return _junk(rng)

    if make == "cone":
        args = [number() for _ in range(4)]
    elif make == "circular":
        args = [number()]
    elif make == "hinge":
        t = rng.uniform(0, 2 * math.pi)
        axes = [(math.cos(t), 0.0, math.sin(t)), (0, 1, 0), (0, 0, 0), (1e-300, 0, 0), (1e308, 0, 1e308),
                (1, 1e-7, 0), (1, 2e-6, 0), [1, 0], "x", None, (math.nan, 0, 1), np.array([[0, 0, 1.0]])]
        args = [axes[int(rng.integers(0, len(axes)))] if rng.random() < 0.6 else number(), number(), number()]
    elif make == "polygon":
        vertices = [list(v) for v in random_polygon(rng).vertices]
        pick = int(rng.integers(0, 12))
        j = int(rng.integers(0, len(vertices)))
        if pick == 8:
            vertices[j] = _junk(rng)
        elif pick == 9:
            vertices = vertices[:2] if rng.random() < 0.5 else vertices * (MAX_VERTICES // len(vertices) + 1)
        elif pick == 10:
            vertices[j] = [0.0, 1.0, 0.0] if rng.random() < 0.5 else [0.0, -1.0, 1e-9]
        elif pick == 11:
            vertices[j], vertices[j - 1] = vertices[j - 1], vertices[j]
        args = [vertices]
    else:
        args = [number(), number()]
    return {"kind": "type", "make": make, "args": args}


def random_violation_case(rng) -> dict:
    """{"kind": "violations", "model", "positions", "frames", "spoiled"}."""
    from scipy.spatial.transform import Rotation

    base = random_chain_case(rng) if rng.random() < 0.6 else random_tree_case(rng)
    model = base["model"]
    n = model.n_joints
    dim = model.dim if hasattr(model, "dim") else 3
    lead = [(), (int(rng.integers(1, 4)),), (2, int(rng.integers(1, 3)))][int(rng.integers(0, 3))]
    count = int(np.prod(lead)) if lead else 1
    reach = max(base["reach"], 1e-300)
    positions = rng.standard_normal(lead + (n, dim)) * reach
    frames = Rotation.random(count * n, random_state=int(rng.integers(0, 2**31))).as_matrix().reshape(lead + (n, 3, 3))
    spoiled = rng.random() < 0.3
    if spoiled:
        kind = int(rng.integers(0, 8))
        if kind == 0:
            positions = positions[..., :-1, :]
        elif kind == 1:
            frames = frames * 1.5
        elif kind == 2:
            positions = positions.copy()
            positions.flat[int(rng.integers(0, positions.size))] = [math.nan, math.inf, 1e300][int(rng.integers(0, 3))]
        elif kind == 3:
            frames = frames.copy()
            frames.flat[int(rng.integers(0, frames.size))] = math.nan
        elif kind == 4:
            frames = -frames
        elif kind == 5:
            positions = positions.astype(str)
        elif kind == 6:
            frames = frames[..., :2, :]
        else:
            positions = positions[None] if lead else positions.reshape(-1)
    return {"kind": "violations", "model": model, "positions": positions, "frames": frames, "spoiled": spoiled}


def random_input_case(rng) -> dict:
    """A ``file`` (half the cases), ``type`` or ``violations`` case."""
    pick = rng.random()
    if pick < 0.5:
        return random_file_case(rng)
    return random_type_case(rng) if pick < 0.75 else random_violation_case(rng)


def run_input_case(case: dict) -> tuple[list[str], bool]:
    """Run one case: (what is wrong, in words, empty when nothing; whether the input was refused
    with the ValueError it should be)."""
    kind = case["kind"]
    try:
        if kind == "file":
            return _run_file(case)
        if kind == "type":
            make = {"cone": Cone, "circular": Cone.circular, "hinge": Hinge, "twist": Twist,
                    "polygon": Polygon}[case["make"]]
            problem = limit_ok(make(*case["args"]))
            return ([f"{case['make']}{tuple(case['args'])}: {problem}"[:300]] if problem else []), False
        out = limit_violations(case["model"], case["positions"], case["frames"])
    except LimitsFileError:
        return [], True
    except ValueError as exc:
        if kind == "file":
            return [f"a ValueError other than LimitsFileError: {type(exc).__name__}: {exc}"[:300]], True
        return [], True
    except Exception as exc:  # noqa: BLE001 - anything else is a finding
        return [f"{kind}: {type(exc).__name__}: {exc}"[:300]], False
    return _check_violations(case, out), False


def _run_file(case: dict) -> tuple[list[str], bool]:
    path = _folder() / "case.json"
    if "save" in case:
        path.unlink(missing_ok=True)
        save_constraints(path, case["save"], units=case["units"])  # a refusal raises LimitsFileError
        back = load_constraints(path)
        expected = {int(k) if isinstance(k, (int, np.integer)) else k: v for k, v in case["save"].items()}
        return ([] if _same(expected, back) else [f"saved and loaded back differently: {back}"[:300]]), False
    path.write_text(case["text"], encoding="utf-8", errors="surrogatepass")
    back = load_constraints(path)
    if not case["spoiled"]:
        return ([] if _same(case["mapping"], back) else [f"did not round trip: {back}"[:300]]), False
    found = []
    for key, items in back.items():
        for item in items:
            problem = limit_ok(item)
            if problem:
                found.append(f"joint {key!r}: {problem}")
    return found, False


def _check_violations(case: dict, out) -> list[str]:
    positions = np.asarray(case["positions"], dtype=np.float64)
    n = case["model"].n_joints
    if out.shape != positions.shape[:-1] or out.shape[-1:] != (n,):
        return [f"violations of shape {out.shape} for positions {positions.shape}"]
    if not np.isfinite(out).all() or (out < 0).any():
        return [f"violations not finite and >= 0: {out.min()}, {out.max()}"]
    if out.ndim > 1:
        frames = np.asarray(case["frames"], dtype=np.float64)
        each = np.array([limit_violations(case["model"], p, f) for p, f in
                         zip(positions.reshape(-1, *positions.shape[-2:]), frames.reshape(-1, n, 3, 3))])
        if not np.array_equal(each.reshape(out.shape), out):
            return ["stacked poses measured differently from one pose at a time"]
    return []


def describe_input(case: dict) -> str:
    """A short description of a case, for failure reports."""
    if case["kind"] == "file":
        return f"file case: {case.get('text', case.get('save'))!r}"[:400]
    if case["kind"] == "type":
        return f"{case['make']}{tuple(case['args'])}"[:400]
    return (f"violations on a {type(case['model']).__name__} of {case['model'].n_joints} joints, positions "
            f"{np.shape(case['positions'])}, frames {np.shape(case['frames'])}")
