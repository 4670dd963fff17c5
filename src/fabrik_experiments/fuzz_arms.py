"""Fuzzing the arm code (issue 40.8): mutated URDF files through ``fabrik.load_urdf``, and random
arms, targets and options (good and bad) through ``fabrik.solve``. ``benchmarks/fuzz_urdf.py``
and ``benchmarks/fuzz_arms.py`` run many cases; ``tests/project/test_fuzz_arms.py`` draws a few.

A **defect** is any of: an exception other than the one expected (``fabrik.URDFError`` for a
URDF that cannot be read, ``ValueError`` for bad solve input; any exception for good input); a
bad input accepted; a NaN or inf in an answer; an answer outside the joint limits (by any
amount: answers are clipped onto the limits exactly); ``reached`` while the answer's own errors,
measured again by ``fabrik.forward`` (``fabrik.model.arm.tip_errors``), exceed ``tol`` or
``orientation_tol``; the reported errors differing from those; a case taking over ``MAX_SECONDS``.

URDF cases (``urdf_case``): one of the real robots (``../shared/data/urdf``) or the prismatic
robots of ``fabrik_experiments.prismatic_robots``, with one to three mutations: a number replaced
by an edge value (1e308, -1e308, 1e400, nan, inf, 0, -0, 1e-320, a word, two numbers, nothing),
a number list lengthened or shortened, an element deleted or duplicated, an attribute deleted, a
joint type changed (to another URDF type or a bogus one), a parent and child swapped, a link
reference renamed, the text cut short, a few characters flipped, or elements nested thousands
deep. The case loads the text with the default tip (or a random link), and a loaded arm is put
through ``forward`` at random values and solved for a reachable pose from random values.

Arm cases (``arm_case``): a random arm of 1-8 joints (revolute and prismatic, random axes and
offsets over up to 4 decades, zero-length bones, limits none, one-sided, narrow, wide or beyond a
turn), a method of ``fabrik.methods("arm")``, a target (a reachable pose, a position, a point out
of reach, a (4, 4) transform, a quaternion through ``fabrik.quat_wxyz``), options (tol and
orientation_tol down to 0, restarts, time_budget, nearest, finish, max_iter 0 to 10^5), and one
time in four something bad (NaN, inf, a raw quaternion, a wrong shape, a negative or non-numeric
option, an unknown option, initial of the wrong size), which must raise ``ValueError``.
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

#: A case taking longer than this (seconds) is a defect (a hang).
MAX_SECONDS = 5.0
#: Edge values a mutated number may take.
EDGE_NUMBERS = ("1e308", "-1e308", "1e400", "nan", "inf", "-inf", "0", "-0", "1e-320", "abc", "1 2", "", "0x10",
                "1_000", "+.5e-3", "3.14159")
#: The real robots fuzzed (``../shared/data/urdf``), when present, with the tip link of their arm.
REAL_ROBOTS = (("panda.urdf", "panda_hand"), ("ur5.urdf", "tool0"), ("human.urdf", "right_hand"))


def urdf_sources(urdf_dir=None) -> list[tuple[str, str, str]]:
    """(name, URDF text, tip link) of the robots mutated: the real ones found in ``urdf_dir`` and
    the prismatic robots written here (a SCARA arm, a gantry, the Panda on a rail)."""
    from fabrik_experiments.prismatic_robots import gantry_urdf, on_rail, scara_urdf

    sources = [("scara", scara_urdf(), "tool"), ("gantry", gantry_urdf(), "tool")]
    if urdf_dir is not None:
        for name, tip in REAL_ROBOTS:
            path = Path(urdf_dir) / name
            if path.is_file():
                sources.append((name, path.read_text(encoding="utf-8"), tip))
        panda = Path(urdf_dir) / "panda.urdf"
        if panda.is_file():
            sources.append(("panda on a rail", on_rail(panda.read_text(encoding="utf-8"), "panda_link0"), "panda_hand"))
    return sources


_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?")
_ELEMENT = re.compile(r"<(link|joint|origin|axis|limit|parent|child|mimic)\b[^>]*?(?:/>|>.*?</\1>)", re.S)
_ATTRIBUTE = re.compile(r'\s(xyz|rpy|lower|upper|name|link|type)="[^"]*"')
_LIST = re.compile(r'(xyz|rpy)="([^"]*)"')
_TYPE = re.compile(r'type="(revolute|continuous|prismatic|fixed)"')
_PARENT_CHILD = re.compile(r'<parent link="([^"]*)"\s*/>(\s*)<child link="([^"]*)"\s*/>')
_LINK_REF = re.compile(r'(<(?:parent|child) link=")([^"]*)(")')


def mutate(text: str, rng) -> tuple[str, str]:
    """(the mutated text, what was done) after one random mutation (module docstring)."""
    kind = int(rng.integers(11))
    if kind == 0:
        spots = list(_NUMBER.finditer(text))
        if spots:
            m = spots[int(rng.integers(len(spots)))]
            value = str(rng.choice(EDGE_NUMBERS))
            return text[:m.start()] + value + text[m.end():], f"number {m.group()!r} -> {value!r}"
    elif kind == 1:
        spots = list(_LIST.finditer(text))
        if spots:
            m = spots[int(rng.integers(len(spots)))]
            parts = m.group(2).split()
            parts = parts + ["0"] * int(rng.integers(1, 3)) if rng.random() < 0.5 else parts[:int(rng.integers(0, 3))]
            return (text[:m.start()] + f'{m.group(1)}="{" ".join(parts)}"' + text[m.end():],
                    f"{m.group(1)} list -> {len(parts)} numbers")
    elif kind in (2, 3):
        spots = list(_ELEMENT.finditer(text))
        if spots:
            m = spots[int(rng.integers(len(spots)))]
            if kind == 2:
                return text[:m.start()] + text[m.end():], f"<{m.group(1)}> deleted"
            return text[:m.end()] + m.group() + text[m.end():], f"<{m.group(1)}> duplicated"
    elif kind == 4:
        spots = list(_ATTRIBUTE.finditer(text))
        if spots:
            m = spots[int(rng.integers(len(spots)))]
            return text[:m.start()] + text[m.end():], f"attribute {m.group(1)} deleted"
    elif kind == 5:
        spots = list(_TYPE.finditer(text))
        if spots:
            m = spots[int(rng.integers(len(spots)))]
            new = str(rng.choice(["revolute", "continuous", "prismatic", "fixed", "floating", "planar", "hinge", ""]))
            return text[:m.start()] + f'type="{new}"' + text[m.end():], f"type {m.group(1)} -> {new!r}"
    elif kind == 6:
        spots = list(_PARENT_CHILD.finditer(text))
        if spots:
            m = spots[int(rng.integers(len(spots)))]
            swapped = f'<parent link="{m.group(3)}"/>{m.group(2)}<child link="{m.group(1)}"/>'
            return text[:m.start()] + swapped + text[m.end():], f"parent and child swapped ({m.group(1)})"
    elif kind == 7:
        spots = list(_LINK_REF.finditer(text))
        if spots:
            m = spots[int(rng.integers(len(spots)))]
            new = str(rng.choice(["nowhere", "", m.group(2) + "_x"]))
            return text[:m.start()] + m.group(1) + new + m.group(3) + text[m.end():], f"link {m.group(2)!r} -> {new!r}"
    elif kind == 8:
        cut = int(rng.integers(len(text)))
        return text[:cut], f"cut at {cut} of {len(text)}"
    elif kind == 9:
        chars = list(text)
        for _ in range(int(rng.integers(1, 6))):
            i = int(rng.integers(len(chars)))
            chars[i] = str(rng.choice(list("<>/\"= x0.-e\n&;")))
        return "".join(chars), "characters flipped"
    depth = int(rng.integers(1000, 20000))
    spots = [m.end() for m in re.finditer(r"<link\b[^>]*[^/]>", text)]
    if spots:
        at = spots[int(rng.integers(len(spots)))]
        return text[:at] + "<x>" * depth + "</x>" * depth + text[at:], f"{depth} nested elements"
    return text, "unchanged"


def urdf_case(sources, rng) -> dict:
    """A mutated URDF case: {"source", "text", "mutations", "tip"}: the source's arm tip half the
    time, else the default (None) or a random link."""
    name, text, tip = sources[int(rng.integers(len(sources)))]
    done = []
    for _ in range(int(rng.integers(1, 4))):
        text, what = mutate(text, rng)
        done.append(what)
    links = re.findall(r'<link name="([^"]*)"', text)
    draw = rng.random()
    if draw >= 0.5:
        tip = None if not links or draw < 0.75 else str(rng.choice(links))
    return {"source": name, "text": text, "mutations": done, "tip": tip}


def _check_answer(arm, sol, target, rotation, tol, otol) -> list[str]:
    """The defects of one arm answer (module docstring)."""
    from fabrik.model.arm import tip_errors

    found = []
    q = sol.joint_angles
    if not (np.isfinite(q).all() and np.isfinite(sol.positions).all() and math.isfinite(sol.error)):
        return ["NaN or inf in the answer"]
    if not arm.within_limits(q):
        found.append(f"answer outside the limits by {float(np.max(np.maximum(arm.lower - q, q - arm.upper))):.3g}")
    err, angle = tip_errors(arm, q, target, rotation)
    if abs(err - sol.error) > 1e-9 * max(1.0, arm.reach) or (
            rotation is not None and abs(angle - sol.extras["orientation_error"]) > 1e-12):
        found.append(f"reported errors {sol.error!r}, {sol.extras.get('orientation_error')!r} but measured "
                     f"{err!r}, {angle!r}")
    if sol.reached and (err > tol or (rotation is not None and angle > otol)):
        found.append(f"reached with errors {err:.3g} (tol {tol:g}) and {angle:.3g} (orientation_tol {otol:g})")
    return found


def run_urdf_case(case, rng, timed: bool = True) -> list[str]:
    """The defects of a URDF case (module docstring); [] when none."""
    import fabrik
    from fabrik.io.urdf import URDFError

    began = time.perf_counter()
    try:
        arm = fabrik.load_urdf(case["text"], tip=case["tip"])
    except URDFError:
        return _timed([], began, timed)
    except Exception as exc:  # noqa: BLE001 - the finding
        return _timed([f"load_urdf raised {type(exc).__name__}: {exc}"], began, timed)
    try:
        q = arm.random_angles(rng, 3)
        positions, frames = fabrik.forward(arm, q)
        if not (np.isfinite(positions).all() and np.isfinite(frames).all()):
            return _timed(["forward gave NaN or inf"], began, timed)
        target, rotation = positions[0, -1], frames[0, -1]
        tol = 1e-6 * max(arm.reach, 1e-3)
        sol = fabrik.solve(arm, (target, rotation), initial=q[1], tol=tol, orientation_tol=1e-6, time_budget=0.05)
        found = _check_answer(arm, sol, target, rotation, tol, 1e-6)
    except Exception as exc:  # noqa: BLE001
        found = [f"a loaded arm raised {type(exc).__name__}: {exc}"]
    return _timed(found, began, timed)


def _timed(found, began, timed: bool = True) -> list[str]:
    """``found``, and a case over ``MAX_SECONDS`` as a defect when ``timed`` (the benchmark runs;
    tests leave wall clocks out: a first use may spend that long compiling)."""
    seconds = time.perf_counter() - began
    return found + ([f"took {seconds:.1f} s"] if timed and seconds > MAX_SECONDS else [])


def random_arm(rng):
    """A random ``fabrik.Arm`` (module docstring)."""
    import fabrik

    m = int(rng.integers(1, 9))
    unit = 10.0 ** rng.uniform(-2, 2)
    origins = np.tile(np.eye(4), (m, 1, 1))
    types = []
    lower, upper = np.full(m, -np.inf), np.full(m, np.inf)
    for k in range(m):
        origins[k, :3, :3] = Rotation.random(random_state=int(rng.integers(2**31))).as_matrix()
        if k > 0 and rng.random() > 0.15:  # about one bone in seven of zero length
            origins[k, :3, 3] = rng.normal(size=3) * unit * 10.0 ** rng.uniform(-1, 1)
        prismatic = rng.random() < 0.25
        types.append("prismatic" if prismatic else "revolute")
        shape = int(rng.integers(5))
        if prismatic:
            lo = rng.uniform(-1, 0.5) * unit
            lower[k], upper[k] = lo, lo + (rng.uniform(0, 2) * unit if shape else 0.0)
        elif shape == 1:
            c = rng.uniform(-3, 3)
            lower[k], upper[k] = c - rng.uniform(0, 0.3), c + rng.uniform(0, 0.3)
        elif shape == 2:
            lower[k], upper[k] = -rng.uniform(3, 12), rng.uniform(3, 12)  # beyond a turn
        elif shape == 3:
            if rng.random() < 0.5:
                lower[k] = rng.uniform(-3, 0)
            else:
                upper[k] = rng.uniform(0, 3)
        elif shape == 4:
            lower[k], upper[k] = sorted(rng.uniform(-np.pi, np.pi, 2))
    tip = np.eye(4)
    tip[:3, 3] = rng.normal(size=3) * unit * rng.uniform(0, 1)
    axes = rng.normal(size=(m, 3))
    return fabrik.Arm([f"j{k}" for k in range(m)], axes, origins, tip, lower, upper, joint_types=types)


#: Bad inputs ``arm_case`` may put in (each must raise ValueError).
BAD_INPUTS = ("nan target", "inf target", "raw quaternion", "target shape", "negative tol", "nan orientation_tol",
              "string restarts", "negative restarts", "zero time_budget", "unknown option", "initial size",
              "nan initial", "bad transform", "non-bool nearest", "target rotation shape", "bad quaternion")


def arm_case(rng) -> dict:
    """A random arm case (module docstring): {"arm", "method", "target", "rotation" (3, 3) or None,
    "call" (the target as passed), "kwargs", "bad" (the bad input's name or None)}."""
    import fabrik

    arm = random_arm(rng)
    method = str(rng.choice(fabrik.methods("arm")))
    q_goal, q_start = arm.random_angles(rng, 2)
    positions, frames = fabrik.forward(arm, q_goal)
    target, rotation = positions[-1].copy(), frames[-1].copy()
    form = int(rng.integers(6))
    if form == 0:
        call = (target, rotation)
    elif form == 1:
        rotation, call = None, target
    elif form == 2:
        target = rng.normal(size=3) * arm.reach * 3.0
        rotation, call = None, target  # often out of reach
    elif form == 3:
        transform = np.eye(4)
        transform[:3, :3], transform[:3, 3] = rotation, target
        call = transform
    elif form == 4:
        xyzw = Rotation.from_matrix(rotation).as_quat()
        rotation = fabrik.quat_wxyz(np.r_[xyzw[3], xyzw[:3]])
        call = (target, rotation)
    else:
        call = (target, Rotation.from_matrix(rotation))
    tol = float(rng.choice([0.0, 1e-9, 1e-6, 1e-3, 1e-1])) * arm.reach
    kwargs = {"method": method, "tol": tol, "initial": q_start if rng.random() < 0.8 else None,
              "orientation_tol": float(rng.choice([0.0, 1e-9, 1e-6, 1e-3, 0.1])),
              "max_iter": int(rng.choice([0, 1, 10, 1000, 100_000])), "time_budget": float(rng.choice([1e-3, 0.02]))}
    if rng.random() < 0.5:
        kwargs["restarts"] = int(rng.integers(0, 50))
    if rng.random() < 0.3:
        kwargs["nearest"] = bool(rng.random() < 0.5)
    if method in ("fabrik", "fabrik-revolute") and rng.random() < 0.3:
        kwargs["finish"] = bool(rng.random() < 0.5)
    bad = None
    if rng.random() < 0.25:
        bad = str(rng.choice(BAD_INPUTS))
        call, kwargs = _spoil(bad, call, target, rotation, kwargs, arm, rng)
    return {"arm": arm, "method": method, "target": target, "rotation": rotation, "call": call, "kwargs": kwargs,
            "bad": bad}


def _spoil(bad, call, target, rotation, kwargs, arm, rng):
    kwargs = dict(kwargs)
    r = np.eye(3) if rotation is None else rotation
    if bad == "nan target":
        call = (np.array([np.nan, 0.0, 0.0]), r)
    elif bad == "inf target":
        call = np.array([0.0, np.inf, 0.0])
    elif bad == "raw quaternion":
        call = (target, Rotation.from_matrix(r).as_quat())
    elif bad == "target shape":
        call = np.zeros(int(rng.choice([2, 4, 5])))
    elif bad == "negative tol":
        kwargs["tol"] = -1e-3
    elif bad == "nan orientation_tol":
        kwargs["orientation_tol"] = float("nan")
    elif bad == "string restarts":
        kwargs["restarts"] = "3"
    elif bad == "negative restarts":
        kwargs["restarts"] = -1
    elif bad == "zero time_budget":
        kwargs["time_budget"] = 0.0
    elif bad == "unknown option":
        kwargs["bogus"] = 1
    elif bad == "initial size":
        kwargs["initial"] = np.zeros(arm.n_joints + 1)
    elif bad == "nan initial":
        kwargs["initial"] = np.full(arm.n_joints, np.nan)
    elif bad == "bad transform":
        t = np.eye(4)
        t[3, 0] = 0.5
        call = t
    elif bad == "non-bool nearest":
        kwargs["nearest"] = "yes"
    elif bad == "target rotation shape":
        call = (target, np.eye(2))
    else:  # bad quaternion
        call = (target, np.zeros(4))
    return call, kwargs


def run_arm_case(case, timed: bool = True) -> list[str]:
    """The defects of an arm case (module docstring); [] when none."""
    import fabrik

    began = time.perf_counter()
    try:
        sol = fabrik.solve(case["arm"], case["call"], **case["kwargs"])
    except ValueError as exc:
        return _timed([] if case["bad"] else [f"ValueError for good input: {exc}"], began, timed)
    except Exception as exc:  # noqa: BLE001 - the finding
        return _timed([f"{type(exc).__name__}: {exc}"], began, timed)
    if case["bad"]:
        return _timed([f"bad input accepted ({case['bad']})"], began, timed)
    kwargs = case["kwargs"]
    found = _check_answer(case["arm"], sol, case["target"], case["rotation"], kwargs["tol"], kwargs["orientation_tol"])
    return _timed(found, began, timed)


def describe_arm_case(case) -> str:
    arm = case["arm"]
    kwargs = {k: v for k, v in case["kwargs"].items() if k != "initial"}
    return (f"{arm!r} types={arm.joint_types} lower={arm.lower.tolist()} upper={arm.upper.tolist()} "
            f"target={case['target'].tolist()} oriented={case['rotation'] is not None} {kwargs} bad={case['bad']}")


__all__ = ["urdf_sources", "urdf_case", "mutate", "run_urdf_case", "random_arm", "arm_case", "run_arm_case",
           "describe_arm_case", "MAX_SECONDS", "BAD_INPUTS"]
