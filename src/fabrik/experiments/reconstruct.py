"""The paper's Table 2 experiment: whole-body reconstruction from a few known joints.

For every frame of a recorded motion, each method gets the recorded positions of the end
effectors and of the root, and must recover the other ("inner") joints; the recorded inner
positions are the ground truth. A method starts each frame from its own previous answer (the
first frame from the recording), as a tracker would.

Definitions (all distances in the file's units, and relative to the skeleton's height,
``Skeleton.height()``: the rest pose's extent along its tallest axis):

* Effectors (default): every leaf of the skeleton; a leaf at zero distance from its parent (a
  zero-length End Site) is replaced by its nearest ancestor at a distinct position, duplicates
  are dropped, and the root never counts as an effector (it is pinned separately).
* Evaluated joints: joints joined by zero-length bones always coincide, so they are grouped and
  each group counts once (its top joint stands for it). Groups that contain the root or an
  effector are known, not estimated, and are left out; the rest are the inner joints whose
  position error is reported (median, mean and 95th percentile over all frames and joints).
* Effector error: mean distance from each effector to its target over frames and effectors.
* Iterations: mean per frame; frames per second: frames solved divided by the wall time of the
  solve loop (Python call overhead included; compilation excluded by a warm-up solve).

Joint limits (``constraints=``, CLI ``--constraints humanoid|FILE.json``): every requested
method that has a constrained variant ``"<method>-constrained"`` (FABRIK:
``fabrik.solvers.skeleton_fabrik_constrained``; CCD and the Jacobian methods, clamped:
``fabrik.solvers.skeleton_methods_constrained``) is also run with the limits, its row right after
the unconstrained one. Each starts from the recording's first-frame joint frames
(``initial_frames``, from its world rotations) and then each frame from its own previous pose and
frames. A constrained row also reports ``max_limit_violation``: the largest amount (radians) by
which any limit is exceeded in any reconstructed frame (``limit_violations``, the same checker for
every method).

Several takes (``pool_reports``, CLI ``fabrik reconstruct A.bvh B.bvh ...``): each take is solved
and reported on its own, then each method's errors are pooled over every evaluated joint in every
frame of every take, as fractions of each take's skeleton height (so takes in different units
pool), with the number of takes where each method had the lowest median.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from fabrik._progress import progress_bar
from fabrik.model.motion import ZERO_BONE, Motion, rotations_from_positions
from fabrik.model.skeleton import Skeleton
from fabrik.solvers import registry
from fabrik.solvers.jacobian import PAPER_DAMPING

#: Methods run by default when they are registered (in this order).
DEFAULT_METHODS = ("fabrik", "ccd", "jacobian-transpose", "jacobian-dls", "jacobian-svd-dls")
#: Default tolerance as a fraction of the skeleton's height.
DEFAULT_REL_TOL = 1e-3
#: Position channels that move a joint by less than this fraction of the body's size count as
#: constant; a written file further than this from the solution gets a note. (1e-5: exporters
#: that compute translations in float32 and print 6 decimals wobble a bone by a micrometre,
#: 1e-6 of a body in metres; 1e-5 of the height is 17 micrometres on an adult.)
OUT_TOL = 1e-5
#: A row reaching its effectors (within tol) in fewer frames than this gets a note, even when
#: its mean effector error is within tol.
MOSTLY_REACHED = 0.9
#: The constrained FABRIK method (added when limits are given).
CONSTRAINED_METHOD = "fabrik-constrained"
#: The methods with a damping option (whose default is in file units), without the suffix.
#: A damping above this fraction of the skeleton's height is called heavy in the table's notes.
HEAVY_DAMPING = 0.1


def _zero_tol(skeleton: Skeleton) -> float:
    return ZERO_BONE * max(skeleton.height(), float(skeleton.bone_lengths.max()), 1e-300)


def default_effectors(skeleton: Skeleton) -> list[int]:
    """Joint indices of the default end effectors (see the module notes), in skeleton order."""
    lengths = skeleton.bone_lengths
    eps = _zero_tol(skeleton)
    chosen = set()
    for leaf in skeleton.leaves:
        j = leaf
        while j != 0 and lengths[j] <= eps:
            j = int(skeleton.parents[j])
        if j != 0:
            chosen.add(j)
    return sorted(chosen)


def coincident_groups(skeleton: Skeleton) -> np.ndarray:
    """(n,) for each joint, the top joint of its group of joints joined by zero-length bones."""
    lengths = skeleton.bone_lengths
    eps = _zero_tol(skeleton)
    top = np.arange(skeleton.n_joints)
    for i in range(1, skeleton.n_joints):
        if lengths[i] <= eps:
            top[i] = top[skeleton.parents[i]]
    return top


def evaluated_joints(skeleton: Skeleton, effectors: Sequence[int]) -> list[int]:
    """The inner joints whose error is reported: one per zero-length group, groups holding the
    root or an effector excluded."""
    top = coincident_groups(skeleton)
    known = {int(top[0])} | {int(top[e]) for e in effectors}
    return sorted({int(t) for t in top} - known)


@dataclass(frozen=True)
class MethodResult:
    """One method's reconstruction of a motion.

    Errors are in the file's units unless named ``_rel`` (fraction of the skeleton height).
    ``positions`` (F, n, 3) is the reconstruction (not written to JSON).
    """

    method: str
    median_error: float
    mean_error: float
    p95_error: float
    median_error_rel: float
    mean_error_rel: float
    p95_error_rel: float
    mean_effector_error: float
    mean_effector_error_rel: float
    max_effector_error: float
    mean_iterations: float
    frames_per_second: float
    reached_fraction: float
    positions: np.ndarray = field(repr=False, compare=False)
    #: largest limit violation (radians) over all frames; None for methods without limits
    max_limit_violation: float | None = None
    #: the method options the run gave (``method_options``), e.g. ``{"damping": 0.02}``
    options: dict = field(default_factory=dict)
    #: (F, m) each evaluated joint's error in each frame (file units; not written to JSON), the
    #: samples behind the median, mean and 95th percentile (``pool_reports`` pools them)
    inner_errors: np.ndarray | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k not in ("positions", "inner_errors")}
        return {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in d.items()}


@dataclass(frozen=True)
class ReconstructionReport:
    """All methods on one motion; ``table()`` prints it, ``to_json()`` gives the JSON payload."""

    skeleton_height: float
    frames: int
    effectors: tuple[str, ...]
    evaluated: tuple[str, ...]
    tol: float
    max_iter: int | None
    results: tuple[MethodResult, ...]
    source: str = ""
    #: joints given a limit, and joints the limit set could not place (``fabrik-constrained``)
    limited: tuple[str, ...] = ()
    unplaced: tuple[str, ...] = ()
    #: the joints FABRIK (and fabrik-constrained) swung limbs about before iterating
    #: (``swing_limbs``), empty when off
    swing_pivots: tuple[str, ...] = ()
    #: the centres of FABRIK's rigid groups (``rigid_sub_bases``), empty when none
    rigid_centres: tuple[str, ...] = ()
    #: how the file was set up for the solvers (``reconstruction_skeleton``), printed under the table
    notes: tuple[str, ...] = ()
    #: with ``out``: the largest distance of a joint in the written file from the written row's
    #: solution (file units; 0 to rounding when BVH rotations can hold the solved poses)
    out_max_error: float | None = None
    #: with ``out``: the method whose poses the file holds
    out_method: str | None = None

    def result(self, method: str) -> MethodResult:
        for r in self.results:
            if r.method == method:
                return r
        raise ValueError(f"no result for method {method!r}; have {[r.method for r in self.results]}")

    def to_json(self) -> dict:
        return {
            "experiment": "table2-reconstruction",
            "source": self.source,
            "skeleton_height": self.skeleton_height,
            "frames": self.frames,
            "effectors": list(self.effectors),
            "evaluated_joints": list(self.evaluated),
            "tol": self.tol,
            "max_iter": self.max_iter,
            "limited_joints": list(self.limited),
            "unplaced_joints": list(self.unplaced),
            "fabrik_swing_pivots": list(self.swing_pivots),
            "fabrik_rigid_centres": list(self.rigid_centres),
            "notes": list(self.notes),
            "out_method": self.out_method,
            "out_max_error": self.out_max_error,
            "out_max_error_rel": None if self.out_max_error is None else self.out_max_error / self.skeleton_height,
            "results": [r.to_dict() for r in self.results],
        }

    def table(self) -> str:
        h = self.skeleton_height
        w = max([20] + [len(r.method) + 2 for r in self.results])
        head = (f"{'method':<{w}}{'median err':>11}{'mean err':>10}{'p95 err':>10}{'median/h':>10}"
                f"{'eff err/h':>11}{'iters':>8}{'frames/s':>10}{'max viol':>10}")
        lines = [f"Reconstruction{(' of ' + self.source) if self.source else ''}: {self.frames} frames, "
                 f"skeleton height {h:.4g}, {len(self.effectors)} effectors + root, "
                 f"{len(self.evaluated)} inner joints evaluated, tol {self.tol:.3g}",
                 head, "-" * len(head)]
        for r in self.results:
            viol = "-" if r.max_limit_violation is None else f"{r.max_limit_violation:.1e}"
            lines.append(f"{r.method:<{w}}{r.median_error:>11.4g}{r.mean_error:>10.4g}{r.p95_error:>10.4g}"
                         f"{r.median_error_rel:>10.3g}{r.mean_effector_error_rel:>11.2g}{r.mean_iterations:>8.1f}"
                         f"{r.frames_per_second:>10.0f}{viol:>10}")
        lines.extend(f"note: {note}" for note in self.notes)
        if self.swing_pivots and any(registry.takes_option(r.method, "skeleton", "swing_limbs") for r in self.results):
            lines.append(f"fabrik rows: each frame starts with the limbs swung towards their targets about "
                         f"{', '.join(self.swing_pivots)}")
        if self.rigid_centres and any(registry.takes_option(r.method, "skeleton", "rigid_sub_bases")
                                      for r in self.results):
            lines.append(f"fabrik: rigid sub-bases at {', '.join(self.rigid_centres)}")
        if self.limited:
            lines.append(f"limits on {len(self.limited)} joints (max viol: radians, over all frames)"
                         + (f"; no limit placed on: {', '.join(self.unplaced)}" if self.unplaced else ""))
        for r in self.results:
            if r.options:
                settings = ", ".join(f"{k}={v}" for k, v in r.options.items())
                lines.append(f"{r.method}: {settings}")
        for r in self.results:
            if r.mean_effector_error > self.tol:
                note = (f"note: {r.method} left its effectors {r.mean_effector_error_rel:.3g} of the height away "
                        f"on average, more than tol ({r.reached_fraction:.0%} of frames reached)")
            elif r.reached_fraction < MOSTLY_REACHED:
                note = (f"note: {r.method} reached its effectors in {r.reached_fraction:.0%} of the frames (within "
                        f"tol on average, {r.max_effector_error / h:.2g} of the height in the worst frame)")
            else:
                continue
            if (registry.takes_option(r.method, "skeleton", "damping") and "damping" not in r.options
                    and PAPER_DAMPING > HEAVY_DAMPING * h):
                note += (f"; its damping ({PAPER_DAMPING}, the paper's value) is in file units, heavy for a "
                         f"skeleton {h:.3g} units tall: set it with method_options (CLI: --option "
                         f"{r.method}:damping=VALUE)")
            lines.append(note)
        if self.out_max_error is not None and self.out_max_error > OUT_TOL * h:
            note = (f"note: the written BVH is up to {self.out_max_error:.4g} units ({self.out_max_error / h:.2g} of "
                    f"the height) from the {self.out_method} row's poses: BVH turns all children of a joint together, "
                    f"and {self.out_method} moved some of them apart (a pelvis or chest with bones to several children)")
            if self.out_method != "fabrik":
                note += "; only the fabrik row holds such joints rigid (--out-method fabrik)"
            elif not self.rigid_centres:
                note += "; --rigid-sub-bases auto (the default) or all holds them rigid"
            else:
                note += ("; fabrik held them rigid, but not where it released a group to reach its targets, or where "
                         "such joints hang from one another (twist bones beside a limb's own bones)")
            lines.append(note)
        return "\n".join(lines)


#: Medians within this fraction of the lowest tie for it (``PooledResult.lowest_median_takes``).
TIE = 1e-6


@dataclass(frozen=True)
class PooledResult:
    """One method over several takes. Errors are fractions of each take's skeleton height, so that
    takes in different units pool; the median, mean and 95th percentile are over every evaluated
    joint in every frame of every take (a long take weighs more than a short one)."""

    method: str
    median_error_rel: float
    mean_error_rel: float
    p95_error_rel: float
    mean_effector_error_rel: float
    mean_iterations: float
    frames_per_second: float
    #: the takes where this method has the lowest median error of the methods pooled (ties, within
    #: ``TIE`` of the lowest, count for each method that shares it: DLS and SVD-DLS agree to rounding)
    lowest_median_takes: int

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class PooledReport:
    """Several takes' reconstructions pooled (``pool_reports``); ``table()`` prints it,
    ``to_json()`` gives the payload's ``"pooled"`` part."""

    sources: tuple[str, ...]
    frames: int
    results: tuple[PooledResult, ...]

    def to_json(self) -> dict:
        return {"takes": len(self.sources), "sources": list(self.sources), "frames": self.frames,
                "results": [r.to_dict() for r in self.results]}

    def table(self) -> str:
        w = max([20] + [len(r.method) + 2 for r in self.results])
        head = (f"{'method':<{w}}{'median/h':>10}{'mean/h':>10}{'p95/h':>10}{'eff err/h':>11}{'iters':>8}"
                f"{'frames/s':>10}{'lowest in':>11}")
        lines = [f"Pooled over {len(self.sources)} takes, {self.frames} frames (errors as fractions of each take's "
                 f"skeleton height)", head, "-" * len(head)]
        for r in self.results:
            lines.append(f"{r.method:<{w}}{r.median_error_rel:>10.4g}{r.mean_error_rel:>10.4g}{r.p95_error_rel:>10.4g}"
                         f"{r.mean_effector_error_rel:>11.2g}{r.mean_iterations:>8.1f}{r.frames_per_second:>10.0f}"
                         f"{f'{r.lowest_median_takes}/{len(self.sources)}':>11}")
        lines.append("lowest in: the takes where the row has the lowest median error (a tie counts for each)")
        return "\n".join(lines)


def pool_reports(reports: Sequence[ReconstructionReport]) -> PooledReport:
    """Pool the reports of several takes, one row per method that every report holds (in the
    first report's order). Errors are divided by each take's skeleton height before pooling;
    mean iterations are over all frames, frames per second is all frames over all the solving
    time, and the effector error is the mean over every effector in every frame."""
    if not reports:
        raise ValueError("pool_reports needs at least one report")
    held = [{r.method for r in rep.results} for rep in reports[1:]]
    shared = [r.method for r in reports[0].results if all(r.method in methods for methods in held)]
    if not shared:
        raise ValueError("the reports have no method in common: "
                         + "; ".join(f"{rep.source or '?'}: {', '.join(r.method for r in rep.results)}"
                                     for rep in reports))
    for rep in reports:
        for m in shared:
            if rep.result(m).inner_errors is None:
                raise ValueError(f"{rep.source or 'a report'}: the {m} row has no per-joint errors to pool "
                                 "(made by reconstruct())")
    lowest = [min(rep.result(m).median_error for m in shared) for rep in reports]
    frames = sum(rep.frames for rep in reports)
    samples = [rep.frames * len(rep.effectors) for rep in reports]  # effector errors behind each mean
    rows = []
    for m in shared:
        rel = np.concatenate([rep.result(m).inner_errors.ravel() / rep.skeleton_height for rep in reports])
        seconds = sum(rep.frames / rep.result(m).frames_per_second for rep in reports)
        eff = sum(n * rep.result(m).mean_effector_error_rel for n, rep in zip(samples, reports)) / sum(samples)
        iters = sum(rep.frames * rep.result(m).mean_iterations for rep in reports) / frames
        rows.append(PooledResult(m, float(np.median(rel)), float(rel.mean()), float(np.percentile(rel, 95)),
                                 float(eff), float(iters), frames / seconds if seconds > 0 else float("inf"),
                                 sum(rep.result(m).median_error <= low * (1 + TIE) for rep, low in zip(reports, lowest))))
    return PooledReport(tuple(rep.source for rep in reports), frames, tuple(rows))


def _solve_loop(method: str, skeleton: Skeleton, truth: np.ndarray, eff: np.ndarray, tol: float,
                max_iter: int | None, progress: bool, desc: str, initial_frames=None, rigid_sub_bases: bool | str = "auto",
                swing_limbs: bool = True, options: Mapping | None = None):
    """Run one method over every frame (``fabrik.solve_sequence``); returns (positions (F, n, 3),
    iterations (F,), reached (F,), seconds, frames (F, n, 3, 3) or None). The tracking settings
    (``rigid_sub_bases``, ``swing_limbs``) and the first frame's joint frames (``initial_frames``
    (n, 3, 3), default derived from the first pose) go to the methods that take them; ``options``
    (the method's own) override them."""
    from fabrik.solvers.sequence import solve_sequence

    given = {}
    for name, value in (("rigid_sub_bases", rigid_sub_bases), ("swing_limbs", swing_limbs)):
        if registry.takes_option(method, "skeleton", name):
            given[name] = value
    if registry.takes_option(method, "skeleton", "initial_frames"):
        from fabrik.solvers.skeleton_fabrik_constrained import frames_from_pose

        given["initial_frames"] = np.ascontiguousarray(initial_frames if initial_frames is not None
                                                       else frames_from_pose(skeleton, truth[0]), dtype=np.float64)
    given.update(options or {})
    targets = {j: np.ascontiguousarray(truth[:, j]) for j in eff.tolist()}
    first = np.ascontiguousarray(truth[0])
    roots = np.ascontiguousarray(truth[:, 0])

    def run(stop, show=False):
        return solve_sequence(skeleton, {j: path[:stop] for j, path in targets.items()}, first, roots[:stop],
                              method=method, tol=tol, max_iter=max_iter, progress=show, **given)

    run(1)  # warm-up: compile outside the timed run
    t0 = time.perf_counter()
    result = run(truth.shape[0], progress)
    seconds = time.perf_counter() - t0
    return result.positions, result.iterations, result.reached, seconds, result.frames


def reconstruct(skeleton: Skeleton, positions, *, effectors: Sequence[str | int] | None = None,
                methods: Sequence[str] | None = None, tol: float | None = None, max_iter: int | None = None,
                progress: bool = False, source: str = "", constraints=None, initial_frames=None,
                unplaced: Sequence[str] = (), rigid_sub_bases: bool | str = "auto",
                swing_limbs: bool = True, method_options: Mapping[str, Mapping] | None = None) -> ReconstructionReport:
    """Reconstruct every frame of ``positions`` from its effectors and root, with each method.

    Args:
        skeleton: the skeleton (n joints) the positions belong to.
        positions: (F, n, 3) recorded joint positions (e.g. ``motion.world_positions(skeleton)``).
        effectors: joint names or indices used as targets; default ``default_effectors``.
        methods: skeleton method names (``fabrik.methods("skeleton")``); default
            ``DEFAULT_METHODS`` that are registered.
        tol: solver tolerance in the data's units; default ``DEFAULT_REL_TOL`` x height.
        max_iter: iteration cap per frame; default each method's own.
        progress: show a tqdm bar on stderr per method.
        source: label for the table (e.g. the file name).
        rigid_sub_bases: which sub-bases unconstrained FABRIK keeps rigid (their children turn
            as one body; see ``fabrik.model.rig.rigid_groups``): ``"auto"``
            (default) the two below together, released when a frame stalls with them, so that
            the poses stay BVH poses; ``"limbs"`` those inside limbs, such as a hand carrying
            fingers and thumb (the only ones on the CMU skeleton); True every joint's children
            at a distance, as under a BVH joint's rotation (a Mixamo pelvis or chest; coupled
            groups, a chest carrying the neck and both arms, make FABRIK converge in several
            times the iterations); False none, the paper's sub-bases.
        swing_limbs: start every FABRIK frame (constrained too) by swinging each limb (leg, arm,
            head) rigidly about its hip or shoulder joint towards its targets (default True; see
            ``fabrik.model.rig.limb_tops``). False: plain warm start.
        constraints: joint limits ``{joint name: constraint(s)}`` (e.g. from
            ``fabrik.model.humanoid_limits.humanoid``); unless ``methods`` already names a
            constrained method, adds ``"<m>-constrained"`` right after every method ``m`` that
            has one (``"fabrik-constrained"`` last when ``"fabrik"`` is not listed), solved on
            ``skeleton.with_constraints(constraints)``. Listing constrained methods without
            limits uses the skeleton's own.
        initial_frames: (n, 3, 3) joint frames of the first frame for the constrained method
            (``frames_from_world_rotations``); default derived from ``positions[0]``.
        unplaced: joints the limit set could not place (reported only).
        method_options: ``{method: {option: value}}``, each method's own options (those its
            ``fabrik.solve`` takes), e.g. ``{"jacobian-dls": {"damping": 0.02}}``; the damping
            of the DLS methods is in file units (default 1.1, the paper's value), so it is
            light on a skeleton hundreds of units tall and heavy on one 2 units tall. The FABRIK
            rows take ``rigid_sub_bases`` and ``swing_limbs`` instead.

    Returns:
        A ``ReconstructionReport``.
    """
    from fabrik.solvers import methods as available_methods

    if not isinstance(skeleton, Skeleton):
        raise ValueError(f"skeleton must be a fabrik.Skeleton, got {type(skeleton).__name__}")
    truth = np.array(positions, dtype=np.float64, order="C")
    n = skeleton.n_joints
    if truth.ndim != 3 or truth.shape[1:] != (n, 3) or truth.shape[0] < 1:
        raise ValueError(f"positions must have shape (F, {n}, 3), got {truth.shape}")
    if not np.isfinite(truth).all():
        raise ValueError("positions contain a non-finite value (NaN or inf)")
    height = skeleton.height()
    if effectors is None:
        eff = default_effectors(skeleton)
    else:
        eff = []
        for e in effectors:
            j = skeleton.index(e) if isinstance(e, str) else int(e)
            if not 0 <= j < n:
                raise ValueError(f"effector index {j} out of range 0..{n - 1}")
            if j == 0:
                raise ValueError(f"the root {skeleton.names[0]!r} is always pinned; do not list it as an effector")
            if j in eff:
                raise ValueError(f"effector {skeleton.names[j]!r} is listed twice")
            eff.append(j)
    if not eff and not skeleton.bone_lengths.any():
        raise ValueError("every bone of the skeleton has zero length (all OFFSETs are 0; bones that exist only in "
                         "position channels cannot be solved for), so there is nothing to reconstruct")
    if not eff:
        raise ValueError("no effectors: give at least one joint other than the root")
    eff_arr = np.array(eff, dtype=np.int64)
    inner = evaluated_joints(skeleton, eff)
    if not inner:
        raise ValueError("every joint is an effector, the root or coincides with one: nothing to reconstruct")
    import fabrik.solvers  # noqa: F401  (registers every method, the constrained ones included)

    have = available_methods("skeleton")
    if methods is None:
        methods = [m for m in DEFAULT_METHODS if m in have]
    else:
        methods = list(methods)
        unknown = [m for m in methods if m not in have]
        if unknown:
            raise ValueError(f"unknown skeleton method(s) {', '.join(unknown)}; methods are: {', '.join(have)}")
    limited_skeleton = skeleton
    if constraints is not None:
        limited_skeleton = skeleton.with_constraints(constraints)
        if not any(registry.get(m).limits for m in methods):
            expanded = []
            for m in methods:
                expanded.append(m)
                variant = registry.limited_variant(m, "skeleton")
                if variant is not None and variant != m:
                    expanded.append(variant)
            if CONSTRAINED_METHOD not in expanded:
                expanded.append(CONSTRAINED_METHOD)
            methods = expanded
    else:
        needy = [m for m in methods if registry.get(m).limits]
        if needy and not skeleton.constraints:
            raise ValueError(f"method(s) {', '.join(needy)} need joint limits: give constraints "
                             "(CLI: --constraints humanoid or FILE.json)")
    method_options = {str(m): dict(o) for m, o in (method_options or {}).items()}
    stray = [m for m in method_options if m not in methods]
    if stray:
        raise ValueError(f"options given for {', '.join(map(repr, stray))}, which this run does not solve with; "
                         f"methods: {', '.join(methods)}")
    for m, given in method_options.items():
        registry.get(m).options("skeleton", given)  # an option the method does not take: named here
    if initial_frames is not None:
        initial_frames = np.asarray(initial_frames, dtype=np.float64)
        if initial_frames.shape != (n, 3, 3) or not np.isfinite(initial_frames).all():
            raise ValueError(f"initial_frames must be finite with shape ({n}, 3, 3), got {initial_frames.shape}")
    if tol is None:
        tol = DEFAULT_REL_TOL * height
    tol = float(tol)
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be finite and >= 0, got {tol}")

    results = []
    F = truth.shape[0]
    for m in methods:
        model = limited_skeleton if registry.get(m).limits else skeleton
        options = method_options.get(m, {})
        out, iters, reached, seconds, frames = _solve_loop(m, model, truth, eff_arr, tol, max_iter, progress, m,
                                                           initial_frames, rigid_sub_bases, swing_limbs, options)
        violation = None
        if frames is not None:
            from fabrik.solvers.skeleton_fabrik_constrained import limit_violations

            violation = float(limit_violations(model, out, frames).max())
        frame_errors = np.linalg.norm(out[:, inner] - truth[:, inner], axis=2)
        err = frame_errors.ravel()
        eff_err = np.linalg.norm(out[:, eff_arr] - truth[:, eff_arr], axis=2)
        med, mean, p95 = float(np.median(err)), float(err.mean()), float(np.percentile(err, 95))
        results.append(MethodResult(
            method=m, median_error=med, mean_error=mean, p95_error=p95, median_error_rel=med / height,
            mean_error_rel=mean / height, p95_error_rel=p95 / height, mean_effector_error=float(eff_err.mean()),
            mean_effector_error_rel=float(eff_err.mean()) / height, max_effector_error=float(eff_err.max()),
            mean_iterations=float(iters.mean()), frames_per_second=F / seconds if seconds > 0 else float("inf"),
            reached_fraction=float(reached.mean()), positions=out, max_limit_violation=violation, options=options,
            inner_errors=frame_errors))
    pivots, centres = (), ()
    swinging = [m for m in methods if registry.takes_option(m, "skeleton", "swing_limbs")]
    grouping = [m for m in methods if registry.takes_option(m, "skeleton", "rigid_sub_bases")]
    if swinging:
        from fabrik.model.rig import limb_pivot, rig

        arrays = rig(skeleton)
        if swing_limbs:
            tops = arrays.limbs(True, rigid_sub_bases if grouping else False)
            pivots = tuple(dict.fromkeys(skeleton.names[limb_pivot(skeleton.parents, t)] for t in tops))
        if grouping:
            group_of = arrays.groups(rigid_sub_bases)[0]
            centres = tuple(skeleton.names[c] for c in np.flatnonzero(group_of >= 0))
    limited = tuple(limited_skeleton.names[j] for j in sorted(limited_skeleton.constraints)) \
        if any(registry.get(m).limits for m in methods) else ()
    return ReconstructionReport(height, F, tuple(skeleton.names[j] for j in eff),
                                tuple(skeleton.names[j] for j in inner), tol, max_iter, tuple(results), source,
                                limited, tuple(unplaced) if limited else (), pivots, centres)


def parse_frames(text: str | None, n_frames: int) -> tuple[int, int, int]:
    """``"START:STOP[:STEP]"`` (Python slice syntax; parts may be empty or negative) -> (start,
    stop, step) for ``n_frames`` frames. ValueError when malformed or when no frame is selected."""
    if text is None:
        return 0, n_frames, 1
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise ValueError(f"--frames must look like START:STOP or START:STOP:STEP, got {text!r}")
    try:
        vals = [int(x) if x.strip() else None for x in parts]
    except ValueError:
        raise ValueError(f"--frames must be whole numbers START:STOP[:STEP], got {text!r}") from None
    step = vals[2] if len(vals) == 3 and vals[2] is not None else 1
    if step < 1:
        raise ValueError(f"--frames step must be >= 1, got {step}")
    start, stop, step = slice(vals[0], vals[1], step).indices(n_frames)
    if len(range(start, stop, step)) == 0:
        raise ValueError(f"--frames {text!r} selects no frames of {n_frames}")
    return start, stop, step


def _subtree(parents: np.ndarray, tops) -> np.ndarray:
    """(n,) bool: the joints ``tops`` (an index or several) and every joint below them (one sweep,
    since ``parents[i] < i``)."""
    inside = np.zeros(parents.shape[0], dtype=bool)
    inside[tops] = True
    for k in range(1, parents.shape[0]):
        inside[k] |= inside[parents[k]]
    return inside


def _body_root(parents: np.ndarray, moving: Sequence[int], apart: np.ndarray) -> int:
    """The joint the body hangs from when joints ``moving`` change their translations, or -1.

    It is a moving joint whose ancestors carry no other branch except ones starting at the
    ancestor itself (``apart[k]`` False: zero OFFSET, as an Unreal root's ``ik_foot_root``), with
    every other moving joint on that chain or on such a branch; the candidate with the most joints
    below it. ``apart`` (n,) bool: the joint's translation from its parent is not zero."""
    n = parents.shape[0]
    best, best_size = -1, 0
    for top in moving:
        chain = []
        a = int(parents[top])
        while a >= 0:
            chain.append(a)
            a = int(parents[a])
        sides = [k for k in range(1, n) if int(parents[k]) in chain and k != top and k not in chain]
        if any(apart[k] for k in sides):
            continue
        carried = _subtree(parents, sides)
        outside = [j for j in moving if j != top and j not in chain and not carried[j]]
        size = int(_subtree(parents, top).sum()) - 1  # the joints below it
        if not outside and size >= best_size:
            best, best_size = int(top), size
    return best


def reconstruction_skeleton(skeleton: Skeleton, motion: Motion) -> tuple[Skeleton, np.ndarray, tuple[str, ...]]:
    """The skeleton the solvers get for a recorded motion, the joints it covers, and notes.

    BVH position channels on joints other than the root replace their OFFSETs, so the bones the
    solvers must keep are the recorded translations, not the OFFSETs:

    * translations that stay constant (within ``OUT_TOL`` of the body's size; 6-channel joints
      written by many exporters) become the skeleton's offsets;
    * translations that change over the frames change bone lengths, which no fixed-length solver
      can follow. When such joints lie above the whole body, on the chain from the root whose
      joints carry no other branch except ones starting at the joint itself (a static
      ``reference`` node above ``Hips`` that carries the walk in its own position channels, as
      MotionBuilder writes; an Unreal ``pelvis`` moving under a ``root`` that also carries
      ``ik_foot_root`` and ``ik_hand_root`` at its origin), the deepest of them becomes the root
      of the reconstruction, and the joints outside the body it carries (above it, or on those
      branches) keep their recorded motion; anywhere else (a moving joint inside the body),
      ValueError naming the joint.

    Returns (skeleton, joints, notes): ``joints`` (m,) the indices of ``skeleton``'s joints the
    returned skeleton has, in order (its root first), and notes for the report; the input
    skeleton itself with ``arange(n)`` when its offsets already describe the motion.
    """
    local = motion.local_translations(skeleton)
    first = motion.world_positions(skeleton)[0]
    size = skeleton.height(first)
    tol = OUT_TOL * (size if size > 0 else max(float(np.abs(local).max()), 1.0))
    change = np.abs(local[:, 1:] - local[:1, 1:]).max(axis=(0, 2))
    moving = [j + 1 for j in np.flatnonzero(change > tol)]
    parents = skeleton.parents
    top = 0
    if moving:
        top = _body_root(parents, moving, np.linalg.norm(local[0], axis=1) > tol)
        if top < 0:
            j = max(moving)  # the deepest: nothing below it moves
            lengths = np.linalg.norm(local[:, j], axis=1)
            raise ValueError(
                f"joint {skeleton.names[j]!r} moves relative to its parent {skeleton.names[parents[j]]!r} in its "
                f"position channels (bone length {lengths.min():.6g} to {lengths.max():.6g} over the frames); "
                "reconstruction keeps bone lengths fixed and can only follow a moving root, or moving joints "
                "above the whole body (a reference node above the hips)")
    # the body: ``top`` and every joint below it; the others (the joints above it and their other
    # branches, such as an Unreal rig's IK bones) keep their recorded motion
    inside = _subtree(parents, top)
    joints = np.flatnonzero(inside).astype(np.int64)
    offsets = local[0, joints].copy()
    offsets[0] = skeleton.offsets[0] if top == 0 else first[top]
    notes = []
    if top:
        outside = [skeleton.names[j] for j in np.flatnonzero(~inside)]
        notes.append(f"{skeleton.names[top]!r} is the root here: it moves in its position channels, so the "
                     f"{len(outside)} joint(s) outside the body it carries ({', '.join(outside[:5])}"
                     f"{', ...' if len(outside) > 5 else ''}) keep their recorded motion")
    if top == 0 and np.array_equal(offsets, skeleton.offsets):
        return skeleton, joints, ()
    changed = [skeleton.names[j] for j in joints[1:] if not np.allclose(local[0, j], skeleton.offsets[j],
                                                                         rtol=0.0, atol=tol)]
    if changed:
        notes.append(f"bones from the position channels, not the OFFSETs, of {len(changed)} joint(s) "
                     f"({', '.join(changed[:5])}{', ...' if len(changed) > 5 else ''})")
    renumber = np.cumsum(inside) - 1
    sub_parents = np.concatenate([[-1], renumber[parents[joints[1:]]]])
    sub = Skeleton(tuple(skeleton.names[j] for j in joints), sub_parents, offsets)
    return sub, joints, tuple(notes)


def reconstruction_motion(skeleton: Skeleton, motion: Motion, positions, *, setup=None) -> Motion:
    """A motion (rotations) for reconstructed ``positions`` (F, n, 3) of ``motion``'s frames:
    twist seeded from the recording's first frame, then carried frame to frame; the recording's
    channel layout, position channels and frame time are kept, except that joints with fewer
    than three rotation channels (hinges, fixed joints) get all three
    (``ChannelLayout.with_all_rotations``): the solvers turn every joint as a ball joint. Joints
    above the reconstruction's root (``reconstruction_skeleton``) keep their recorded rotations.

    The result reproduces ``positions`` exactly where the skeleton can: position-based solvers
    such as FABRIK treat every bone as a free ball joint, so they may bend a joint's rigid set of
    children (a pelvis with both hips on one joint, shoulders on one chest joint); such a joint
    gets the least-squares rotation instead, and each joint below it is aimed at its solved
    children from where that puts it (``rigid_sub_bases=True`` prevents the bending). Skeletons
    whose multi-child joints have zero-length children (the CMU files) are reproduced exactly.

    ``setup``: what ``reconstruction_skeleton(skeleton, motion)`` returned, when the caller has it
    (``reconstruct_file``), with the world rotations of ``motion.world_transforms(skeleton)``
    appended, so that neither is computed again: ``(solved, joints, notes, world_rotations)``."""
    from scipy.spatial.transform import Rotation

    positions = np.asarray(positions, dtype=np.float64)
    if setup is None:
        solved, joints, _ = reconstruction_skeleton(skeleton, motion)
        world_rotations = motion.world_transforms(skeleton)[1] if joints[0] else None
    else:
        solved, joints, _, world_rotations = setup
    top = int(joints[0])
    reference = motion.rotations[0, joints].copy()
    if top:
        reference[0] = Rotation.from_matrix(world_rotations[0, top]).as_quat()
    part = rotations_from_positions(solved, positions[:, joints], reference, propagate=True)
    rotations = motion.rotations.copy()
    rotations[:, joints] = part.rotations
    if top:
        above = world_rotations[:, skeleton.parents[top]]
        local = np.einsum("fji,fjk->fik", above, part.rotation_matrices()[:, 0])
        rotations[:, top] = Rotation.from_matrix(local).as_quat()
    root_positions = motion.root_positions if top else positions[:, 0]
    return Motion(rotations, root_positions, motion.frame_time, joint_translations=dict(motion.joint_translations),
                  layout=motion.layout.with_all_rotations())


def resolve_constraints(skeleton: Skeleton, spec) -> tuple[dict, list[str]]:
    """Joint limits from ``spec``: ``"humanoid"`` (the default human set placed by joint names,
    ``fabrik.model.humanoid_limits.humanoid``), a path to a constraints JSON file
    (``fabrik.model.constraints.load_constraints``), or a mapping. Returns (constraints by joint
    name, unplaced joint names); ValueError for a missing or malformed file or unknown joints."""
    from fabrik.model.constraints import load_constraints
    from fabrik.model.humanoid_limits import humanoid

    if isinstance(spec, str) and spec == "humanoid":
        return humanoid(skeleton)
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        if not path.is_file():
            raise ValueError(f"constraints must be 'humanoid' or a JSON file; {str(spec)!r} is neither")
        mapping = dict(load_constraints(path))
    elif isinstance(spec, dict):
        mapping = dict(spec)
    else:
        raise ValueError(f"constraints must be 'humanoid', a JSON file path or a mapping, got {type(spec).__name__}")
    skeleton.with_constraints(mapping)  # checks joint names and placement
    return mapping, []


def reconstruct_file(path, *, effectors=None, methods=None, frames: str | None = None, tol=None, max_iter=None,
                     out: str | Path | None = None, progress: bool = False, constraints=None,
                     rigid_sub_bases: bool | str = "auto", swing_limbs: bool = True,
                     method_options: Mapping[str, Mapping] | None = None, out_method: str | None = None):
    """Load a BVH file, run ``reconstruct`` on the chosen frames, optionally write one method's
    reconstruction as BVH (``out``, with the input's hierarchy, offsets and channel layout).

    ``constraints``: ``"humanoid"``, a constraints JSON path or a mapping (``resolve_constraints``)
    to add the constrained variant of every method that has one, started from the first chosen
    frame's recorded joint frames.

    ``out_method``: whose poses ``out`` holds; default ``"fabrik-constrained"`` when
    ``constraints`` are given, else ``"fabrik"``. It is run even when ``methods`` leaves it out
    (a constrained variant through its method). ``out``'s folder is made before any solving.

    Returns (report, skeleton, motion of the chosen frames).
    """
    from fabrik.io.bvh import load_bvh, save_bvh

    if out is not None:
        out_method = out_method or (CONSTRAINED_METHOD if constraints is not None else "fabrik")
        if registry.get(out_method).limits and constraints is None:
            raise ValueError(f"out_method {out_method!r} needs constraints (--constraints)")
        Path(out).parent.mkdir(parents=True, exist_ok=True)
    skeleton, motion = load_bvh(path)
    start, stop, step = parse_frames(frames, motion.n_frames)
    motion = motion.frames(start, stop, step)
    truth, world_rotations = motion.world_transforms(skeleton)
    solved, joints, notes = reconstruction_skeleton(skeleton, motion)
    if out is not None and methods is not None:
        base = registry.unlimited_variant(out_method)
        if base not in methods and out_method not in methods and out_method != CONSTRAINED_METHOD:
            methods = [*methods, base]
    limits, unplaced, initial_frames = None, [], None
    if constraints is not None:
        from fabrik.solvers.skeleton_fabrik_constrained import frames_from_world_rotations

        limits, unplaced = resolve_constraints(solved, constraints)
        initial_frames = frames_from_world_rotations(solved, world_rotations[0, joints])
    report = reconstruct(solved, truth[:, joints], effectors=effectors, methods=methods, tol=tol, max_iter=max_iter,
                         progress=progress, source=Path(path).name, constraints=limits,
                         initial_frames=initial_frames, unplaced=unplaced, rigid_sub_bases=rigid_sub_bases,
                         swing_limbs=swing_limbs, method_options=method_options)
    if len(joints) < skeleton.n_joints:
        # every row as poses of the whole file: the joints above the root as recorded
        def whole(result):
            full = truth.copy()
            full[:, joints] = result.positions
            return replace(result, positions=full)

        report = replace(report, results=tuple(whole(r) for r in report.results))
    report = replace(report, notes=notes)
    if out is not None:
        poses = report.result(out_method).positions
        rec = reconstruction_motion(skeleton, motion, poses, setup=(solved, joints, notes, world_rotations))
        save_bvh(out, skeleton, rec)  # 9 decimals: reads back as rec to far below OUT_TOL
        miss = float(np.linalg.norm(rec.world_positions(skeleton) - poses, axis=2).max())
        report = replace(report, out_max_error=miss, out_method=out_method)
    return report, skeleton, motion


__all__ = ["reconstruct", "reconstruct_file", "ReconstructionReport", "MethodResult", "PooledReport", "PooledResult",
           "pool_reports", "default_effectors",
           "evaluated_joints", "coincident_groups", "parse_frames", "reconstruction_motion", "reconstruction_skeleton",
           "resolve_constraints",
           "DEFAULT_METHODS", "CONSTRAINED_METHOD"]
