"""The paper's Table 2 experiment: whole-body reconstruction from a few known joints.

For every frame of a recorded motion, each method gets the recorded positions of the end
effectors and of the root, and must recover the other ("inner") joints; the recorded inner
positions are the ground truth. A method starts each frame from its own previous answer (the
first frame from the recording), as a tracker would.

Definitions (all distances in the file's units, and relative to the skeleton's height,
``Skeleton.height()``: the rest pose's extent along its tallest axis):

* Effectors (default): every leaf of the skeleton; a leaf at zero distance from its parent (a
  zero-length End Site) is replaced by its nearest ancestor at a distinct position, duplicates
  are dropped, and the root never counts as an effector (it is pinned separately;
  ``fabrik.mocap.default_effectors``).
* Evaluated joints: joints joined by zero-length bones always coincide, so they are grouped and
  each group counts once (its top joint stands for it). Groups that contain the root or an
  effector are known, not estimated, and are left out; the rest are the inner joints whose
  position error is reported (median, mean and 95th percentile over all frames and joints;
  ``fabrik.mocap.evaluated_joints``).
* Effector error: mean distance from each effector to its target over frames and effectors.
* Iterations: mean per frame; frames per second: frames solved divided by the wall time of the
  solve loop (``fabrik.solve_sequence``; Python call overhead included; compilation excluded by
  a warm-up solve).

Each row is one method's ``fabrik.mocap.reconstruct_positions``; a file is set up for the
solvers by ``fabrik.mocap.prepare_take`` and written back by ``fabrik.mocap.save_take``. The
records, the tables and the pooling are in ``fabrik_experiments.reconstruction_report``.

Joint limits (``constraints=``, CLI ``--constraints humanoid|FILE.json``, placed on a take by
``fabrik.mocap.take_limits``) go to the methods that apply them, the ``"-constrained"`` ones
(FABRIK: ``fabrik.solvers.skeleton_fabrik``; CCD and the Jacobian methods, clamped:
``fabrik.solvers.skeleton_methods``); the rows are exactly the methods named (the default methods
gain ``"fabrik-constrained"`` when limits are given). Each limited row starts from the
recording's first-frame joint frames (``initial_frames``, from its world rotations) and then each
frame from its own previous pose and frames, and reports ``max_limit_violation``: the largest
amount (radians) by which any limit is exceeded in any reconstructed frame (``limit_violations``,
the same checker for every method); each row without limits reports ``limit_break_fraction``.

Several takes (``reconstruction_report.pool_reports``, CLI ``fabrik reconstruct A.bvh B.npz ...``): each take is solved
and reported on its own, then each method's errors are pooled over every evaluated joint in every
frame of every take, as fractions of each take's skeleton height (so takes in different units
pool), with the number of takes where each method had the lowest median.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from fabrik.mocap.export import save_take
from fabrik.mocap.reconstruct import DEFAULT_REL_TOL, reconstruct_positions
from fabrik.mocap.takes import (check_positions, effector_indices, evaluated_joints, parse_frames, prepare_take,
                                take_limits)
from fabrik.model.skeleton import Skeleton
from fabrik.solvers import registry
from fabrik_experiments.reconstruction_report import MethodResult, ReconstructionReport

#: Methods run by default when they are registered (in this order).
DEFAULT_METHODS = ("fabrik", "fabrik-dls-start", "ccd", "jacobian-transpose", "jacobian-dls", "jacobian-svd-dls")
#: The constrained FABRIK method (in the default methods when limits are given).
CONSTRAINED_METHOD = "fabrik-constrained"


def default_methods(limited: bool) -> list[str]:
    """The methods a run solves with when none are named: ``DEFAULT_METHODS`` that are registered,
    with ``CONSTRAINED_METHOD`` right after ``fabrik`` when limits are given."""
    from fabrik.solvers import methods as available_methods

    have = available_methods("skeleton")
    chosen = [m for m in DEFAULT_METHODS if m in have]
    if limited:
        chosen.insert(chosen.index("fabrik") + 1 if "fabrik" in chosen else len(chosen), CONSTRAINED_METHOD)
    return chosen


def _method_result(m: str, model: Skeleton, truth: np.ndarray, eff: list[int], inner: list[int], height: float,
                   tol: float, max_iter: int | None, progress: bool, initial_frames, rigid_sub_bases: bool | str,
                   swing_limbs: bool, options: Mapping, limited_model: Skeleton | None = None,
                   recorded_frames=None) -> MethodResult:
    """Method ``m``'s row: every frame of ``truth`` solved on ``model`` (``reconstruct_positions``,
    after a one-frame warm-up so that compilation stays out of the timing) and measured."""
    extra = dict(options)  # the method's own options win over the run's settings
    rigid_sub_bases = extra.pop("rigid_sub_bases", rigid_sub_bases)
    swing_limbs = extra.pop("swing_limbs", swing_limbs)
    if initial_frames is not None and registry.takes_option(m, "skeleton", "initial_frames"):
        extra.setdefault("initial_frames", initial_frames)

    def run(poses, show=False):
        return reconstruct_positions(model, poses, effectors=eff, method=m, tol=tol, max_iter=max_iter,
                                     rigid_sub_bases=rigid_sub_bases, swing_limbs=swing_limbs, progress=show, **extra)

    run(truth[:1])  # warm-up: compile outside the timed run
    rec = run(truth, progress)
    out, F = rec.positions, truth.shape[0]
    violation = breaks = None
    if rec.frames is not None:
        from fabrik.model.geometry import limit_violations

        violation = float(limit_violations(model, out, rec.frames).max())
    elif limited_model is not None and limited_model.constraints:
        recorded = initial_frames if recorded_frames is None else recorded_frames
        if recorded is None:
            from fabrik.model.geometry import frames_from_pose

            recorded = frames_from_pose(limited_model, truth[0])
        breaks = limit_break_fraction(limited_model, out, truth, recorded)
    frame_errors = np.linalg.norm(out[:, inner] - truth[:, inner], axis=2)
    err = frame_errors.ravel()
    eff_err = np.linalg.norm(out[:, eff] - truth[:, eff], axis=2)
    med, mean, p95 = float(np.median(err)), float(err.mean()), float(np.percentile(err, 95))
    return MethodResult(
        method=m, median_error=med, mean_error=mean, p95_error=p95, median_error_rel=med / height,
        mean_error_rel=mean / height, p95_error_rel=p95 / height, mean_effector_error=float(eff_err.mean()),
        mean_effector_error_rel=float(eff_err.mean()) / height, max_effector_error=float(eff_err.max()),
        mean_iterations=float(rec.solution.iterations.mean()),
        frames_per_second=F / rec.seconds if rec.seconds > 0 else float("inf"),
        reached_fraction=float(rec.solution.reached.mean()), positions=out, max_limit_violation=violation,
        options=dict(options), inner_errors=frame_errors, frames=rec.frames,
        solved_skeleton=model if rec.frames is not None else None, limit_break_fraction=breaks)


def limit_break_fraction(limited: Skeleton, positions: np.ndarray, truth: np.ndarray, recorded_frames) -> float:
    """The fraction of frames of ``positions`` (F, n, 3) whose bones leave the limits of
    ``limited`` by more than ``LIMIT_BREAK``: a knee bent backwards or sideways, an elbow
    overextended, a spine folded past its range.

    Positions hold no twist, and a bone's roll decides where its hinge child may bend, so each
    solved bone takes the performer's own roll: its recorded frame (``recorded_frames`` (F, n, 3,
    3), ``frames_from_world_rotations`` of the recording; or carried from frame to frame when
    only the first frame's (n, 3, 3) are known) turned by the smallest rotation from the recorded
    bone (``truth`` (F, n, 3)) onto the solved one. Bone directions only
    (``limit_violations(directions_only=True)``)."""
    from fabrik.model.geometry import carry_frames, limit_violations, turned_frames
    from fabrik_experiments.reconstruction_report import LIMIT_BREAK

    recorded = np.asarray(recorded_frames, dtype=np.float64)
    if recorded.ndim == 3:
        recorded = carry_frames(limited, truth, recorded)
    frames = turned_frames(limited, recorded, truth, positions)
    v = limit_violations(limited, positions, frames, directions_only=True)
    return float((v.max(axis=1) > LIMIT_BREAK).mean())


def reconstruct(skeleton: Skeleton, positions, *, effectors: Sequence[str | int] | None = None,
                methods: Sequence[str] | None = None, tol: float | None = None, max_iter: int | None = None,
                progress: bool = False, source: str = "", constraints=None, initial_frames=None,
                unplaced: Sequence[str] = (), reference=None, recorded_frames=None,
                rigid_sub_bases: bool | str = "auto",
                swing_limbs: bool = True, method_options: Mapping[str, Mapping] | None = None) -> ReconstructionReport:
    """Reconstruct every frame of ``positions`` from its effectors and root, with each method.

    Args:
        skeleton: the skeleton (n joints) the positions belong to.
        positions: (F, n, 3) recorded joint positions (e.g. ``motion.world_positions(skeleton)``).
        effectors: joint names or indices used as targets; default
            ``fabrik.mocap.default_effectors``.
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
            ``fabrik.model.humanoid_limits.humanoid``) for the methods that apply limits (the
            ``-constrained`` ones), solved on ``skeleton.with_constraints(constraints)``; the other
            methods solve without them. ``methods`` None then also runs ``CONSTRAINED_METHOD``
            (``default_methods``); named methods of which none applies limits are refused.
            Listing constrained methods without limits uses the skeleton's own.
        initial_frames: (n, 3, 3) joint frames of the first frame for the constrained method
            (``fabrik.mocap.Take.initial_frames``); default derived from ``positions[0]``.
        unplaced: joints the limit set could not place (reported only).
        reference: the limits' reference rotations (``Skeleton.with_constraints``; a take's
            ``fabrik.mocap.take_limits``), or None: the rest pose.
        recorded_frames: (F, n, 3, 3) the recording's joint frames (``frames_from_world_rotations``
            of its world rotations), giving each bone's roll to ``limit_break_fraction``; default
            carried from ``initial_frames``.
        method_options: ``{method: {option: value}}``, each method's own options (those its
            ``fabrik.solve`` takes), e.g. ``{"jacobian-dls": {"damping": 0.02}}``; the damping
            of the DLS methods is in file units (default 1.1, the paper's value), so it is
            light on a skeleton hundreds of units tall and heavy on one 2 units tall. The FABRIK
            rows take ``rigid_sub_bases`` and ``swing_limbs`` instead.

    Returns:
        A ``ReconstructionReport``.
    """
    from fabrik.solvers import methods as available_methods

    truth = check_positions(skeleton, positions)
    n = skeleton.n_joints
    height = skeleton.height()
    eff = effector_indices(skeleton, effectors)
    inner = evaluated_joints(skeleton, eff)
    if not inner:
        raise ValueError("every joint is an effector, the root or coincides with one: nothing to reconstruct")
    import fabrik.solvers  # noqa: F401  (registers every method, the constrained ones included)

    have = available_methods("skeleton")
    if methods is None:
        methods = default_methods(constraints is not None)
    else:
        methods = list(methods)
        unknown = [m for m in methods if m not in have]
        if unknown:
            raise ValueError(f"unknown skeleton method(s) {', '.join(unknown)}; methods are: {', '.join(have)}")
    limited_skeleton = skeleton
    if constraints is not None:
        limited_skeleton = skeleton.with_constraints(constraints, reference=reference)
        if not any(registry.get(m).limits for m in methods):
            raise ValueError(f"joint limits were given, but none of the methods ({', '.join(methods)}) applies them: "
                             f"add {CONSTRAINED_METHOD} (or another '-constrained' method)")
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
        results.append(_method_result(m, model, truth, eff, inner, height, tol, max_iter, progress, initial_frames,
                                      rigid_sub_bases, swing_limbs, method_options.get(m, {}),
                                      limited_skeleton if constraints is not None else None, recorded_frames))
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


def reconstruct_file(path, *, effectors=None, methods=None, frames: str | None = None, tol=None, max_iter=None,
                     out: str | Path | None = None, progress: bool = False, constraints=None,
                     rigid_sub_bases: bool | str = "auto", swing_limbs: bool = True,
                     method_options: Mapping[str, Mapping] | None = None, out_method: str | None = None):
    """Load a motion file (``fabrik.load_motion``: ``.bvh``, or ``.npz`` joint positions), run
    ``reconstruct`` on the chosen frames, optionally write one method's reconstruction (``out``,
    in the format its suffix names: ``.bvh`` with the input's hierarchy, offsets and channel
    layout, or ``.npz``; the suffix is checked before any solving).

    The file is set up for the solvers by ``fabrik.mocap.prepare_take`` (its notes go to the
    report) and ``out`` written by ``fabrik.mocap.save_take``.

    ``constraints``: ``"humanoid"``, a constraints JSON path or a mapping
    (``fabrik.mocap.take_limits``) for the methods that apply limits, started from the first chosen
    frame's recorded joint frames.

    ``out_method``: whose poses ``out`` holds; default the first of ``methods`` (of the default
    methods when None). It is run even when ``methods`` leaves it out. ``out``'s folder is made
    before any solving.

    Returns (report, skeleton, motion of the chosen frames).
    """
    from fabrik.io.formats import load_motion, motion_format

    if out is not None:
        motion_format(out)
        chosen = list(methods) if methods is not None else default_methods(constraints is not None)
        out_method = out_method or chosen[0]
        if registry.get(out_method).limits and constraints is None:
            raise ValueError(f"out_method {out_method!r} needs constraints (--constraints)")
        if out_method not in chosen:
            methods = [*chosen, out_method]
        Path(out).parent.mkdir(parents=True, exist_ok=True)
    skeleton, motion = load_motion(path)
    start, stop, step = parse_frames(frames, motion.n_frames)
    motion = motion.frames(start, stop, step)
    take = prepare_take(skeleton, motion)
    solved, joints = take.body, take.joints
    limits, reference, unplaced, initial_frames, recorded = None, None, [], None, None
    if constraints is not None:
        limits, reference, unplaced = take_limits(take, constraints)
        initial_frames = take.initial_frames()
        from fabrik.model.geometry import frames_from_world_rotations

        recorded = frames_from_world_rotations(solved, take.rotations[:, joints])
    report = reconstruct(solved, take.body_positions, effectors=effectors, methods=methods, tol=tol,
                         max_iter=max_iter, progress=progress, source=Path(path).name, constraints=limits,
                         reference=reference, recorded_frames=recorded,
                         initial_frames=initial_frames, unplaced=unplaced, rigid_sub_bases=rigid_sub_bases,
                         swing_limbs=swing_limbs, method_options=method_options)
    if len(joints) < skeleton.n_joints:
        # every row as poses of the whole file: the joints outside the body as recorded
        report = replace(report, results=tuple(replace(r, positions=take.whole(r.positions)) for r in report.results))
    report = replace(report, notes=take.notes)
    if out is not None:
        chosen = report.result(out_method)
        miss = save_take(out, skeleton, motion, chosen.positions, take=take, frames=chosen.frames,
                         limits=chosen.solved_skeleton)
        report = replace(report, out_max_error=miss, out_method=out_method)
    return report, skeleton, motion


def _take_or_reason(path, out, kwargs):
    """One take for ``reconstruct_takes``: (report, None), or (None, reason) when the file cannot be
    read or solved (the errors the serial command skips a take for)."""
    try:
        report, _, _ = reconstruct_file(path, out=out, **kwargs)
    except (ValueError, OSError) as exc:
        return None, str(exc)
    return report, None


def reconstruct_takes(paths: Sequence, *, outs: Sequence | None = None, workers: int | None = None,
                      scheduler: str | None = None, progress: bool = False, **kwargs):
    """``reconstruct_file`` on every take of ``paths``, serially or on a Dask cluster.

    ``workers`` N starts a local Dask cluster (``dask.distributed.LocalCluster``) of N one-thread
    worker processes; ``scheduler`` is the address of an existing cluster's scheduler
    (``tcp://host:8786``) to use instead; neither runs the takes here, one after another. Each take
    is solved exactly as the serial run solves it (the same function, on its own), so the reports
    are the same but for their timings. ``outs`` (one path or None per take) are passed on;
    ``kwargs`` go to ``reconstruct_file`` (not ``progress``: the bar here counts takes).

    Returns a list, in the order of ``paths``, of (report, None) or (None, reason) for a take that
    could not be read or solved; on a cluster also one whose worker failed (the reason names it).
    Raises ValueError for ``workers`` below 1, or both ``workers`` and ``scheduler``.
    """
    from fabrik._progress import progress_bar

    paths = [str(p) for p in paths]
    outs = [None] * len(paths) if outs is None else list(outs)
    if workers is not None and scheduler is not None:
        raise ValueError("give workers (a local cluster) or scheduler (an existing one), not both")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    results: list = [None] * len(paths)
    with progress_bar(progress, len(paths), "takes", "take") as bar:
        if workers is None and scheduler is None:
            for k, (path, out) in enumerate(zip(paths, outs)):
                results[k] = _take_or_reason(path, out, kwargs)
                if bar is not None:
                    bar.update(1)
            return results
        try:
            from dask.distributed import Client, LocalCluster, as_completed
        except ImportError:  # pragma: no cover - depends on the environment
            raise ValueError("running takes on Dask needs dask.distributed: pip install 'dask[distributed]' "
                             "(the 'cluster' extra)") from None
        cluster = None
        if scheduler is None:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        else:
            try:
                client = Client(scheduler, timeout=30)
            except OSError as exc:
                raise ValueError(f"scheduler: cannot connect to {scheduler!r}: {exc}") from None
        try:
            futures = {client.submit(_take_or_reason, path, out, kwargs, pure=False): k
                       for k, (path, out) in enumerate(zip(paths, outs))}
            for future in as_completed(futures):
                k = futures[future]
                try:
                    results[k] = future.result()
                except Exception as exc:  # a worker that died or a solver error: this take alone is lost
                    results[k] = (None, f"{type(exc).__name__} on the cluster: {exc}")
                if bar is not None:
                    bar.update(1)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    return results


__all__ = ["reconstruct", "reconstruct_file", "default_methods", "reconstruct_takes", "DEFAULT_METHODS", "CONSTRAINED_METHOD", "DEFAULT_REL_TOL"]
