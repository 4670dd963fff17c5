"""Random reachable pose targets on a robot arm read from URDF, solved by each method from the same
start, at one or more tolerances: ``fabrik bench robot``.

* The arm: ``fabrik.load_urdf(path, tip=..., base=...)``.
* The targets: N joint vectors drawn uniformly within the limits (``Arm.random_angles``, seeded;
  an unlimited joint in [-pi, pi]), each put through ``fabrik.forward``: the tip's position and
  rotation. Every target is therefore reachable within the limits.
* The tolerances: pairs (position ``tol`` in model units, ``orientation_tol`` in radians), by
  default ``DEFAULT_TOLERANCES``: 1 mm and 0.5 degrees, and 1e-5 and 1e-5 (TRAC-IK's own
  ``epsilon``). Every method solves every target at every pair.
* Every solve starts from the rest angles (0, clipped into the limits), the same for every method.
* A solve counts as reached when its joint values, put through ``fabrik.forward``, bring the tip
  within the position tolerance of the target and its frame within the orientation tolerance
  (``fabrik.model.arm.tip_errors``): judged the same way for every method, never by a method's
  own report, and only for answers within the limits.
* Reported per method and tolerance: the fraction reached, the median and 90th percentile wall
  time of one solve call (``time.perf_counter`` around the call), mean iterations (over all of a
  solve's attempts; the other libraries do not report them), and the largest limit violation
  (radians, or model units for a prismatic joint) over all answers.
* The library's methods and TRAC-IK take turns target by target and tolerance by tolerance, in
  one process, so that a slower spell of the machine falls on all of them; ikpy (tens of
  milliseconds of Python a solve) has a pass of its own.
* TRAC-IK (optional: ``pip install 'fabrik[bench]'``, the ``pytracik`` bindings):
  ``pytracik.TRAC_IK(base, tip, urdf, timeout, epsilon, SolveType.Speed)`` on the same file and
  links, its joint limits set from the Arm's (``set_joint_limits``: pytracik reads limits from a
  joint's ``safety_controller`` when there is one, which leaves the Panda's at zero), ``epsilon``
  the smaller tolerance over sqrt(3) (TRAC-IK bounds each of the 6 twist components by it, so
  their Euclidean norms stay within the tolerance), its default 5 ms timeout, and the target's
  quaternion from its matrix; a failed call answers the start. Its "Speed" mode runs two threads
  (KDL's Newton and an SQP), so on a machine with few cores other work slows it more than a
  single-threaded solver. Options: ``trac-ik:timeout=0.05``, ``trac-ik:mode=Distance``.
* ikpy (optional, the ``bench`` extra): ``ikpy.chain.Chain.from_urdf_file`` on the same file and
  path of joints (``fabrik.io.urdf.urdf_path``), its active links the Arm's joints,
  ``inverse_kinematics(position, rotation, orientation_mode="all", initial_position=...)`` from
  the same start with its defaults (no tolerance to set: one solve per target, judged at every
  tolerance); its joint vector is read into the Arm's q by joint name.

Without pytracik or ikpy their rows are left out with a note. A method may be given options as
``name:option=value`` (e.g. ``fabrik:restarts=0``, one attempt; ``jacobian-dls:restarts=200``,
DLS restarted as FABRIK is by default); the row's ``label`` says so.
"""

from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

#: The default tolerance pairs (position in model units, orientation in radians): 1 mm and 0.5
#: degrees, and TRAC-IK's own 1e-5 in both.
DEFAULT_TOLERANCES = ((1e-3, math.radians(0.5)), (1e-5, 1e-5))
#: The rows of ``fabrik bench robot``: FABRIK (restarting, Newton finish), FABRIK with one attempt,
#: CCD, DLS, DLS restarting as FABRIK does, TRAC-IK (its default 5 ms timeout, and FABRIK's 50 ms
#: time budget), ikpy.
DEFAULT_METHODS = ("fabrik", "fabrik:restarts=0", "ccd", "jacobian-dls", "jacobian-dls:restarts=200", "trac-ik",
                   "trac-ik:timeout=0.05", "ikpy")
#: The other libraries a row can name.
PEERS = ("trac-ik", "ikpy")
#: TRAC-IK's default timeout (seconds), as its README and pytracik set it.
TRACIK_TIMEOUT = 0.005


@dataclass(frozen=True)
class RobotTargets:
    """N pose targets of an arm: ``q`` (N, m) the joint values they come from, ``positions``
    (N, 3) and ``rotations`` (N, 3, 3) the tip poses, ``start`` (m,) the start of every solve."""

    q: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray
    start: np.ndarray

    @property
    def n(self) -> int:
        return int(self.q.shape[0])


def robot_targets(arm, n: int, seed: int) -> RobotTargets:
    """``n`` random reachable pose targets of ``arm`` (module docstring), seeded."""
    import fabrik

    q = arm.random_angles(np.random.default_rng(seed), n)
    positions, frames = fabrik.forward(arm, q)
    start = np.clip(np.zeros(arm.n_joints), arm.lower, arm.upper)
    return RobotTargets(q, positions[:, -1].copy(), frames[:, -1].copy(), start)


def limit_violation(arm, q) -> float:
    """The largest amount by which q (m,) lies outside the limits (0 within them)."""
    return float(np.max(np.maximum(np.maximum(arm.lower - q, q - arm.upper), 0.0)))


@dataclass
class RobotRow:
    """One method's results at one tolerance (``to_json`` gives the JSON row)."""

    label: str
    method: str
    options: dict
    tol: float
    orientation_tol: float
    targets: int
    reached: int
    median_us: float
    p90_us: float
    mean_iterations: float | None
    max_violation: float
    times_us: np.ndarray = field(repr=False)
    reached_mask: np.ndarray = field(repr=False)
    note: str = ""

    @property
    def success_rate(self) -> float:
        return self.reached / self.targets if self.targets else 0.0

    def to_json(self) -> dict:
        return {"method": self.method, "label": self.label, "options": self.options, "tol": self.tol,
                "orientation_tol": self.orientation_tol, "targets": self.targets, "reached": self.reached,
                "success_rate": self.success_rate, "median_us": self.median_us, "p90_us": self.p90_us,
                "mean_iterations": self.mean_iterations, "max_violation": self.max_violation, "note": self.note}


def parse_method_spec(spec: str, available: Sequence[str]) -> tuple[str, dict]:
    """``"fabrik:restarts=0:seed=3"`` -> ``("fabrik", {"restarts": 0, "seed": 3})``; the name is
    checked against ``available`` (ValueError listing them); values are numbers, ``true`` /
    ``false``, or else words (``trac-ik:mode=Distance``)."""
    name, *parts = [p.strip() for p in spec.split(":")]
    if name not in available:
        raise ValueError(f"unknown method {name!r}; methods are: {', '.join(available)} (options as "
                         "name:option=value, e.g. fabrik:restarts=0)")
    options = {}
    for part in parts:
        key, eq, text = part.partition("=")
        key, text = key.strip(), text.strip()
        if not (eq and key and text):
            raise ValueError(f"method options look like {name}:option=value, got {spec!r}")
        options[key] = _value(text)
    return name, options


def _value(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_tolerances(tol: str, orientation_tol: str) -> tuple[tuple[float, float], ...]:
    """Tolerance pairs from the command line: ``tol`` model units and ``orientation_tol`` radians
    (``0.5deg``: degrees), comma-separated and paired in order (a single value pairs with each
    of the other's). ValueError naming a bad value."""
    tols = [_number(t, "--tol") for t in tol.split(",") if t.strip()]
    angles = [_angle(t) for t in orientation_tol.split(",") if t.strip()]
    if not tols or not angles:
        raise ValueError("--tol and --orientation-tol need at least one value each")
    if len(tols) != len(angles) and 1 not in (len(tols), len(angles)):
        raise ValueError(f"--tol has {len(tols)} values and --orientation-tol {len(angles)}: give as many of "
                         "each (they pair in order), or one of either")
    n = max(len(tols), len(angles))
    return tuple(zip(tols * n if len(tols) == 1 else tols, angles * n if len(angles) == 1 else angles))


def _number(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name} values must be numbers, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} values must be finite and >= 0, got {text!r}")
    return value


def _angle(text: str) -> float:
    text = text.strip()
    if text.lower().endswith("deg"):
        return math.radians(_number(text[:-3], "--orientation-tol"))
    return _number(text, "--orientation-tol")


def _label(method: str, options: dict) -> str:
    return method if not options else f"{method} ({', '.join(f'{k}={v}' for k, v in options.items())})"


def method_solver(arm, method: str, options: dict | None = None):
    """``solve(position, rotation, start, tol, orientation_tol) -> (q, iterations)`` by
    ``fabrik.solve`` with ``method`` and ``options`` (compiled on the first call)."""
    import fabrik

    options = dict(options or {})

    def solve(position, rotation, start, tol, orientation_tol):
        sol = fabrik.solve(arm, (position, rotation), initial=start, method=method, tol=tol,
                           orientation_tol=orientation_tol, **options)
        return sol.joint_angles, sol.iterations

    return solve


@contextmanager
def _quiet_stdio():
    """File descriptors 1 and 2 sent to /dev/null (pytracik's C++ writes warnings there)."""
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def tracik_solver(path, arm, tolerances, options: dict | None = None):
    """``solve(position, rotation, start, tol, orientation_tol) -> (q, None)`` by TRAC-IK (module
    docstring), one ``pytracik.TRAC_IK`` per tolerance pair; ImportError without pytracik,
    ValueError for an unknown option."""
    import pytracik
    from scipy.spatial.transform import Rotation

    options = dict(options or {})
    timeout = float(options.pop("timeout", TRACIK_TIMEOUT))
    mode = str(options.pop("mode", "Speed"))
    if options:
        raise ValueError(f"trac-ik takes the options timeout (seconds) and mode (Speed, Distance, Manip1, Manip2), "
                         f"got {sorted(options)}")
    if mode not in ("Speed", "Distance", "Manip1", "Manip2"):
        raise ValueError(f"trac-ik:mode must be Speed, Distance, Manip1 or Manip2, got {mode!r}")
    text = Path(path).read_text(encoding="utf-8") if not str(path).lstrip().startswith("<") else str(path)
    big = float(np.finfo(np.float32).max)  # TRAC-IK's "no limit"
    lower = [max(float(v), -big) for v in arm.lower]
    upper = [min(float(v), big) for v in arm.upper]
    solvers = {}
    with _quiet_stdio():
        for tol, otol in tolerances:
            s = pytracik.TRAC_IK(arm.base_name, arm.tip_name, text, timeout, min(tol, otol) / math.sqrt(3.0),
                                 getattr(pytracik.SolveType, mode))
            pytracik.set_joint_limits(s, lower, upper)
            solvers[(tol, otol)] = s
    if pytracik.get_num_joints(next(iter(solvers.values()))) != arm.n_joints:
        raise ValueError(f"TRAC-IK found {pytracik.get_num_joints(next(iter(solvers.values())))} joints from "
                         f"{arm.base_name!r} to {arm.tip_name!r}, the Arm {arm.n_joints}")
    ik = pytracik.ik

    def solve(position, rotation, start, tol, orientation_tol):
        x, y, z, w = Rotation.from_matrix(rotation).as_quat().tolist()
        out = ik(solvers[(tol, orientation_tol)], start, float(position[0]), float(position[1]), float(position[2]),
                 x, y, z, w)
        return (np.array(out[1:], dtype=np.float64) if out[0] > 0 else start.copy()), None

    note = (f"pytracik {_version('pytracik')}, TRAC-IK {mode} mode, timeout {timeout * 1e3:g} ms, epsilon = "
            "min(tol, orientation_tol) / sqrt(3) per twist component, limits set from the URDF; reports no "
            "iterations")
    return solve, note


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:  # pragma: no cover
        return "?"


def ikpy_chain(path, arm):
    """An ikpy chain of the Arm's joints from ``path``: the same path of URDF joints
    (``fabrik.io.urdf.urdf_path``), a fixed zero link at the end (ikpy's last link is never
    active), active links exactly the Arm's joints. Returns (chain, index of each Arm joint in
    ikpy's joint vector). ImportError without ikpy."""
    import warnings

    from ikpy.chain import Chain
    from ikpy.link import URDFLink

    from fabrik.io.urdf import urdf_path

    base, joints = urdf_path(path, tip=arm.tip_name, base=arm.base_name)
    elements = [base]
    for name, _, child in joints:
        elements += [name, child]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ikpy warns about the mask and fixed links it is given
        full = Chain.from_urdf_file(str(path), base_elements=elements)
        links = list(full.links[:1 + len(joints)])  # ikpy follows the tree past the tip: cut there
        links.append(URDFLink(name="fabrik_tip", origin_translation=[0.0, 0.0, 0.0],
                              origin_orientation=[0.0, 0.0, 0.0], rotation=None, joint_type="fixed"))
        names = [link.name for link in links]
        mask = [name in arm.joint_names for name in names]
        chain = Chain(links, active_links_mask=mask, name=f"{base}-{arm.tip_name}")
    index = np.array([names.index(name) for name in arm.joint_names])
    return chain, index


def ikpy_solver(path, arm):
    """``solve(position, rotation, start, tol, orientation_tol) -> (q, None)`` by ikpy (module
    docstring; the tolerances are not used); ImportError without ikpy."""
    import warnings

    chain, index = ikpy_chain(path, arm)

    def solve(position, rotation, start, tol=None, orientation_tol=None):
        initial = np.zeros(len(chain.links))
        initial[index] = start
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a start on a bound is moved inside by ikpy, with a warning
            full = chain.inverse_kinematics(position, rotation, orientation_mode="all", initial_position=initial)
        return np.asarray(full, dtype=np.float64)[index], None

    return solve


def ikpy_note() -> str:
    return f"ikpy {_version('ikpy')}, scipy least_squares, defaults (no tolerance to set); reports no iterations"


def _tol_text(tol: float, otol: float) -> str:
    degrees = math.degrees(otol)
    angle = f"{degrees:g} deg" if abs(degrees - round(degrees, 3)) < 1e-12 and degrees >= 0.01 else f"{otol:g} rad"
    return f"{tol:g} and {angle}"


@dataclass
class RobotBench:
    """The bench's results: ``rows`` (one per method and tolerance), ``notes`` (rows left out, and
    why)."""

    source: str
    arm: object
    n_targets: int
    seed: int
    tolerances: tuple = DEFAULT_TOLERANCES
    rows: list[RobotRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def table(self) -> str:
        arm = self.arm
        lines = [f"{Path(self.source).name if not str(self.source).lstrip().startswith('<') else 'URDF text'}: "
                 f"{arm.base_name} -> {arm.tip_name}, {arm.n_joints} joints, reach {arm.reach:.3g}; {self.n_targets} "
                 f"random reachable pose targets (seed {self.seed}), every solve from the rest angles; reached = "
                 "within both tolerances, judged by fabrik.forward"]
        for tol, otol in self.tolerances:
            lines.append(f"-- tolerance {_tol_text(tol, otol)}")
            lines.append(f"{'method':<30}{'reached':>9}{'median us':>11}{'p90 us':>10}{'mean iters':>12}"
                         f"{'max violation':>15}")
            for r in self.rows:
                if (r.tol, r.orientation_tol) != (tol, otol):
                    continue
                its = "-" if r.mean_iterations is None else f"{r.mean_iterations:.1f}"
                lines.append(f"{r.label:<30}{r.success_rate:>9.1%}{r.median_us:>11.0f}{r.p90_us:>10.0f}{its:>12}"
                             f"{r.max_violation:>15.2g}")
        lines.extend(f"note: {note}" for note in self.notes)
        lines.extend(f"note: {label}: {note}" for label, note in dict((r.label, r.note) for r in self.rows if r.note)
                     .items())
        return "\n".join(lines)

    def to_json(self) -> dict:
        arm = self.arm
        return {"experiment": "robot-pose-targets", "urdf": str(self.source), "base": arm.base_name,
                "tip": arm.tip_name, "joints": list(arm.joint_names),
                "joint_types": list(arm.joint_types), "targets": self.n_targets, "seed": self.seed,
                "start": "rest angles (0 clipped into the limits)",
                "tolerances": [{"tol": t, "orientation_tol": o} for t, o in self.tolerances],
                "max_violation_units": "radians (model units for prismatic joints)",
                "results": [r.to_json() for r in self.rows], "notes": self.notes}


def run_robot_bench(path, *, tip: str | None = None, base: str | None = None, n_targets: int = 1000, seed: int = 0,
                    methods: Sequence[str] = DEFAULT_METHODS, tolerances=DEFAULT_TOLERANCES,
                    progress: bool = False) -> RobotBench:
    """The bench on the URDF ``path`` (module docstring); ``methods`` as ``DEFAULT_METHODS``,
    ``tolerances`` pairs (position in model units, orientation in radians)."""
    import fabrik
    from fabrik._progress import progress_bar
    from fabrik.model.arm import tip_errors

    if n_targets < 1:
        raise ValueError(f"the number of targets must be >= 1, got {n_targets}")
    tolerances = tuple((float(t), float(o)) for t, o in tolerances)
    if not tolerances:
        raise ValueError("tolerances names no (tol, orientation_tol) pair")
    specs = [parse_method_spec(m, [*fabrik.methods("arm"), *PEERS]) for m in methods]
    arm = fabrik.load_urdf(path, tip=tip, base=base)
    targets = robot_targets(arm, n_targets, seed)
    bench = RobotBench(str(path), arm, n_targets, seed, tolerances)
    runs = []  # (label, method, options, solve, note)
    for name, options in specs:
        if name == "trac-ik":
            try:
                solve, note = tracik_solver(path, arm, tolerances, options)
            except ImportError:
                note = ("pytracik (TRAC-IK) is not installed (pip install 'fabrik[bench]', or make install): its "
                        "rows are left out")
                if note not in bench.notes:
                    bench.notes.append(note)
                continue
            runs.append((_label(name, options), name, options, solve, note))
        elif name == "ikpy":
            if options:
                raise ValueError("ikpy takes no options here")
            try:
                runs.append(("ikpy", "ikpy", {}, ikpy_solver(path, arm), ikpy_note()))
            except ImportError:
                bench.notes.append("ikpy is not installed (pip install 'fabrik[bench]', or make install): its row is "
                                   "left out")
        else:
            runs.append((_label(name, options), name, options, method_solver(arm, name, options), ""))
    for run in runs:  # compile, and load what is loaded on first use, outside the timing
        for tol, otol in tolerances:
            run[3](targets.positions[0], targets.rotations[0], targets.start, tol, otol)
    nt = len(tolerances)
    times = np.zeros((len(runs), nt, n_targets))
    reached = np.zeros((len(runs), nt, n_targets), dtype=bool)
    iterations = np.full((len(runs), nt, n_targets), np.nan)
    violation = np.zeros((len(runs), nt))
    # ikpy (no tolerance of its own: one solve judged at each) has a pass of its own after the rest
    ours = [i for i, run in enumerate(runs) if run[1] != "ikpy"]
    passes = [p for p in (ours, [i for i in range(len(runs)) if i not in ours]) if p]
    perf = time.perf_counter
    with progress_bar(progress, n_targets * len(passes), "robot bench", "target") as bar:
        for chosen in passes:
            for k in range(n_targets):
                position, rotation = targets.positions[k], targets.rotations[k]
                for j, (tol, otol) in enumerate(tolerances):
                    for i in chosen:
                        if runs[i][1] == "ikpy" and j > 0:  # the same answer: judged again below
                            times[i, j, k], q, its = times[i, 0, k], answer, None
                        else:
                            began = perf()
                            q, its = runs[i][3](position, rotation, targets.start, tol, otol)
                            times[i, j, k] = perf() - began
                            answer = q
                        err, angle = tip_errors(arm, q, position, rotation)
                        outside = limit_violation(arm, q)
                        reached[i, j, k] = err <= tol and angle <= otol and outside == 0.0
                        iterations[i, j, k] = np.nan if its is None else its
                        violation[i, j] = max(violation[i, j], outside)
                if bar is not None:
                    bar.update(1)
    for j, (tol, otol) in enumerate(tolerances):
        for i, (label, name, options, _, note) in enumerate(runs):
            its = None if np.isnan(iterations[i, j]).all() else iterations[i, j]
            times_us = times[i, j] * 1e6
            bench.rows.append(RobotRow(label, name, dict(options), tol, otol, n_targets, int(reached[i, j].sum()),
                                       float(np.median(times_us)), float(np.percentile(times_us, 90)),
                                       None if its is None else float(np.mean(its)), float(violation[i, j]), times_us,
                                       reached[i, j].copy(), note))
    return bench


def plot_robot_bench(bench: RobotBench, path) -> Path:
    """The fraction of targets reached within a time per solve, one curve per method (log time),
    one panel per tolerance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nt = len(bench.tolerances)
    fig, axes = plt.subplots(1, nt, figsize=(7.0 * nt, 4.5), squeeze=False)
    for ax, (tol, otol) in zip(axes[0], bench.tolerances):
        for r in bench.rows:
            if (r.tol, r.orientation_tol) != (tol, otol):
                continue
            times = np.sort(np.where(r.reached_mask, r.times_us, np.inf))
            fraction = np.arange(1, times.size + 1) / times.size
            finite = np.isfinite(times)
            ax.step(times[finite], fraction[finite], where="post", label=f"{r.label} ({r.success_rate:.1%})")
        ax.set_xscale("log")
        ax.set_xlabel("time per solve (us)")
        ax.set_ylabel("fraction of targets reached")
        ax.set_ylim(0.0, 1.0)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
        ax.set_title(f"{bench.arm.tip_name}: {bench.n_targets} pose targets, {_tol_text(tol, otol)}", fontsize=10)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["run_robot_bench", "method_solver", "tracik_solver", "ikpy_solver", "ikpy_chain", "robot_targets",
           "limit_violation", "parse_method_spec", "parse_tolerances", "plot_robot_bench", "RobotBench", "RobotRow",
           "RobotTargets", "DEFAULT_METHODS", "DEFAULT_TOLERANCES", "TRACIK_TIMEOUT"]
