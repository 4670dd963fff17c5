"""Random reachable pose targets on a robot arm read from URDF, solved by each method from the same
start: ``fabrik bench robot``.

* The arm: ``fabrik.load_urdf(path, tip=..., base=...)``.
* The targets: N joint vectors drawn uniformly within the limits (``Arm.random_angles``, seeded;
  an unlimited joint in [-pi, pi]), each put through ``fabrik.forward``: the tip's position and
  rotation. Every target is therefore reachable within the limits.
* Every solve starts from the rest angles (0, clipped into the limits), the same for every
  method, with ``tol`` = ``POSITION_TOL`` (model units: metres for URDF) and ``orientation_tol``
  = ``ORIENTATION_TOL_DEG``.
* A solve counts as reached when its joint values, put through ``fabrik.forward``, bring the tip
  within ``POSITION_TOL`` of the target position and ``ORIENTATION_TOL_DEG`` of its rotation:
  judged the same way for every method, never by a method's own report.
* Reported per method: the fraction reached, the median and 90th percentile wall time of one
  solve call (``time.perf_counter`` around ``fabrik.solve``, or around ikpy's
  ``inverse_kinematics``; the library's methods take turns target by target, ikpy runs after
  them), mean iterations (over all
  of a solve's attempts; ikpy does not report them), and the largest limit violation (radians)
  over all answers.
* ikpy (optional: ``pip install 'fabrik[bench]'``): ``ikpy.chain.Chain.from_urdf_file`` on the
  same file and the same path of joints (``fabrik.io.urdf.urdf_path``), its active links the
  Arm's joints, ``inverse_kinematics(position, rotation, orientation_mode="all",
  initial_position=...)`` from the same start with its defaults; its joint vector is read into
  the Arm's q by joint name. Without ikpy its row is left out with a note.

A method may be given options as ``name:option=value`` (e.g. ``fabrik:restarts=0``, one attempt;
``jacobian-dls:restarts=200``, DLS restarted as FABRIK is by default); the row's ``label`` says so.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

#: A reached target: the tip within this distance (model units: metres for URDF) ...
POSITION_TOL = 1e-3
#: ... and this angle (degrees) of the target.
ORIENTATION_TOL_DEG = 0.5
#: The rows of ``fabrik bench robot``: FABRIK (restarting), FABRIK with one attempt, CCD, DLS, DLS
#: restarting as FABRIK does, ikpy.
DEFAULT_METHODS = ("fabrik", "fabrik:restarts=0", "ccd", "jacobian-dls", "jacobian-dls:restarts=200", "ikpy")


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


def pose_errors(arm, q, position, rotation) -> tuple[float, float]:
    """(tip position error in model units, orientation error in degrees) of joint values q (m,)
    for a target, by ``fabrik.forward``."""
    import fabrik

    positions, frames = fabrik.forward(arm, q)
    c = (float(np.trace(frames[-1].T @ rotation)) - 1.0) / 2.0
    return float(np.linalg.norm(positions[-1] - position)), math.degrees(math.acos(min(1.0, max(-1.0, c))))


def limit_violation(arm, q) -> float:
    """The largest amount (radians) by which q (m,) lies outside the limits (0 within them)."""
    return float(np.max(np.maximum(np.maximum(arm.lower - q, q - arm.upper), 0.0)))


@dataclass
class RobotRow:
    """One method's results (``to_json`` gives the JSON row)."""

    label: str
    method: str
    options: dict
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
        return {"method": self.method, "label": self.label, "options": self.options, "targets": self.targets,
                "reached": self.reached, "success_rate": self.success_rate, "median_us": self.median_us,
                "p90_us": self.p90_us, "mean_iterations": self.mean_iterations, "max_violation": self.max_violation,
                "note": self.note}


def _row(label, method, options, times, reached, iterations, violation, note="") -> RobotRow:
    times_us = np.asarray(times) * 1e6
    mask = np.asarray(reached, dtype=bool)
    return RobotRow(label, method, dict(options), int(mask.size), int(mask.sum()), float(np.median(times_us)),
                    float(np.percentile(times_us, 90)),
                    None if iterations is None else float(np.mean(iterations)), float(violation), times_us, mask, note)


def parse_method_spec(spec: str, available: Sequence[str]) -> tuple[str, dict]:
    """``"fabrik:restarts=0:seed=3"`` -> ``("fabrik", {"restarts": 0, "seed": 3})``; the name is
    checked against ``available`` (ValueError listing them), values are numbers."""
    name, *parts = [p.strip() for p in spec.split(":")]
    if name not in available:
        raise ValueError(f"unknown method {name!r}; methods are: {', '.join(available)} (options as "
                         "name:option=value, e.g. fabrik:restarts=0)")
    options = {}
    for part in parts:
        key, eq, text = part.partition("=")
        if not (eq and key.strip() and text.strip()):
            raise ValueError(f"method options look like {name}:option=value, got {spec!r}")
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"{spec!r}: the value of {key.strip()} must be a number, got {text!r}") from None
        options[key.strip()] = value
    return name, options


def _label(method: str, options: dict) -> str:
    return method if not options else f"{method} ({', '.join(f'{k}={v}' for k, v in options.items())})"


def method_solver(arm, method: str, options: dict | None = None):
    """``solve(position, rotation, start) -> (q, iterations)`` by ``fabrik.solve`` with ``method``
    and ``options``, at the bench's tolerances (compiled on the first call)."""
    import fabrik

    kwargs = dict(method=method, tol=POSITION_TOL, orientation_tol=math.radians(ORIENTATION_TOL_DEG), **(options or {}))

    def solve(position, rotation, start):
        sol = fabrik.solve(arm, (position, rotation), initial=start, **kwargs)
        return sol.joint_angles, sol.iterations

    return solve


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
    """``solve(position, rotation, start) -> (q, None)`` by ikpy (module docstring); ImportError
    without ikpy."""
    import warnings

    chain, index = ikpy_chain(path, arm)

    def solve(position, rotation, start):
        initial = np.zeros(len(chain.links))
        initial[index] = start
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a start on a bound is moved inside by ikpy, with a warning
            full = chain.inverse_kinematics(position, rotation, orientation_mode="all", initial_position=initial)
        return np.asarray(full, dtype=np.float64)[index], None

    return solve


def ikpy_note() -> str:
    import ikpy

    return f"ikpy {getattr(ikpy, '__version__', '?')}, scipy least_squares, defaults; reports no iterations"


@dataclass
class RobotBench:
    """The bench's results: ``rows`` (one per method), ``notes`` (rows left out, and why)."""

    source: str
    arm: object
    n_targets: int
    seed: int
    rows: list[RobotRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def table(self) -> str:
        arm = self.arm
        lines = [f"{Path(self.source).name}: {arm.base_name} -> {arm.tip_name}, {arm.n_joints} joints, reach "
                 f"{arm.reach:.3g}; {self.n_targets} random reachable pose targets (seed {self.seed}), every solve "
                 f"from the rest angles; reached = within {POSITION_TOL:g} (model units) and "
                 f"{ORIENTATION_TOL_DEG:g} degrees, judged by fabrik.forward",
                 f"{'method':<30}{'reached':>9}{'median us':>11}{'p90 us':>10}{'mean iters':>12}{'max violation':>15}"]
        for r in self.rows:
            its = "-" if r.mean_iterations is None else f"{r.mean_iterations:.1f}"
            lines.append(f"{r.label:<30}{r.success_rate:>9.1%}{r.median_us:>11.0f}{r.p90_us:>10.0f}{its:>12}"
                         f"{r.max_violation:>15.2g}")
        lines.extend(f"note: {note}" for note in self.notes)
        lines.extend(f"note: {r.label}: {r.note}" for r in self.rows if r.note)
        return "\n".join(lines)

    def to_json(self) -> dict:
        arm = self.arm
        return {"experiment": "robot-pose-targets", "urdf": str(self.source), "base": arm.base_name,
                "tip": arm.tip_name, "joints": list(arm.joint_names), "targets": self.n_targets, "seed": self.seed,
                "start": "rest angles (0 clipped into the limits)", "position_tol": POSITION_TOL,
                "orientation_tol_deg": ORIENTATION_TOL_DEG, "max_violation_units": "radians",
                "results": [r.to_json() for r in self.rows], "notes": self.notes}


def run_robot_bench(path, *, tip: str, base: str | None = None, n_targets: int = 1000, seed: int = 0,
                    methods: Sequence[str] = DEFAULT_METHODS, progress: bool = False) -> RobotBench:
    """The bench on the URDF ``path`` (module docstring); ``methods`` as ``DEFAULT_METHODS``. The
    library's methods take turns target by target, so that a slower spell of the machine falls on
    all of them."""
    import fabrik
    from fabrik._progress import progress_bar

    if n_targets < 1:
        raise ValueError(f"the number of targets must be >= 1, got {n_targets}")
    specs = [parse_method_spec(m, [*fabrik.methods("arm"), "ikpy"]) for m in methods]
    arm = fabrik.load_urdf(path, tip=tip, base=base)
    targets = robot_targets(arm, n_targets, seed)
    bench = RobotBench(str(path), arm, n_targets, seed)
    runs = []  # (label, method, options, solve, note)
    for name, options in specs:
        if name != "ikpy":
            runs.append((_label(name, options), name, options, method_solver(arm, name, options), ""))
            continue
        if options:
            raise ValueError("ikpy takes no options here")
        try:
            runs.append(("ikpy", "ikpy", {}, ikpy_solver(path, arm), ikpy_note()))
        except ImportError:
            bench.notes.append("ikpy is not installed (pip install 'fabrik[bench]', or make install): its row is "
                               "left out")
    for run in runs:  # compile, and load what is loaded on first use, outside the timing
        run[3](targets.positions[0], targets.rotations[0], targets.start)
    times = np.zeros((len(runs), n_targets))
    reached = np.zeros((len(runs), n_targets), dtype=bool)
    iterations = np.zeros((len(runs), n_targets))
    violation = np.zeros(len(runs))
    # the library's methods take turns target by target; ikpy (tens of milliseconds of Python a
    # solve, which leave the caches cold for whatever runs next) has a pass of its own
    ours = [i for i, run in enumerate(runs) if run[1] != "ikpy"]
    passes = [p for p in (ours, [i for i in range(len(runs)) if i not in ours]) if p]
    with progress_bar(progress, n_targets * len(passes), "robot bench", "target") as bar:
        for chosen in passes:
            for k in range(n_targets):
                position, rotation = targets.positions[k], targets.rotations[k]
                for i in chosen:
                    began = time.perf_counter()
                    q, its = runs[i][3](position, rotation, targets.start)
                    times[i, k] = time.perf_counter() - began
                    err, angle = pose_errors(arm, q, position, rotation)
                    reached[i, k] = err <= POSITION_TOL and angle <= ORIENTATION_TOL_DEG
                    iterations[i, k] = np.nan if its is None else its
                    violation[i] = max(violation[i], limit_violation(arm, q))
                if bar is not None:
                    bar.update(1)
    for i, (label, name, options, _, note) in enumerate(runs):
        its = None if np.isnan(iterations[i]).all() else iterations[i]
        bench.rows.append(_row(label, name, options, times[i], reached[i], its, violation[i], note))
    return bench


def plot_robot_bench(bench: RobotBench, path) -> Path:
    """The fraction of targets reached within a time per solve, one curve per method (log time)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for r in bench.rows:
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
    ax.set_title(f"{Path(bench.source).name} ({bench.arm.tip_name}): {bench.n_targets} pose targets, "
                 f"{POSITION_TOL:g} and {ORIENTATION_TOL_DEG:g} deg", fontsize=10)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["run_robot_bench", "method_solver", "ikpy_solver", "ikpy_chain", "robot_targets", "pose_errors",
           "limit_violation", "parse_method_spec", "plot_robot_bench", "RobotBench", "RobotRow", "RobotTargets",
           "DEFAULT_METHODS", "POSITION_TOL", "ORIENTATION_TOL_DEG"]
