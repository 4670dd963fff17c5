"""The DHM pilot study (Lamb et al.) on recorded motion: a 7-joint arm tracked from its tip's pose.

For each take and arm:

* The arm's joints are found by name (``ARM_NAMES``, or ``joints=(shoulder, elbow, wrist, tip)``):
  the shoulder, elbow and wrist joints, and a tip carried rigidly by the hand (a knuckle, or the
  hand's End Site). The hand's frame is the world rotation of the tip's parent joint.
* The study's set-up, the shoulder fixed: every frame is expressed in the *torso frame*, the world
  rotation of the shoulder joint's parent (a collar or clavicle), with the shoulder at the origin.
* The arm model is ``fabrik.models.dhm_arm`` with the take's own segment lengths (upper arm
  shoulder-elbow, forearm elbow-wrist, hand wrist-tip) and the elbow's 0-120 degree hinge, its DH
  base frame fixed in the torso frame (the elbow's limit: ``ELBOW_MAX``): base x pointing down (the arm hangs along it at zero
  angles), base z outward from the body (the elbow's axis at zero), base y = z x x, from the
  skeleton's rest pose (up: the tallest axis; outward: the shoulder's side of the root).
* The recorded DH angles of a frame are the model's angles that put its elbow and wrist centre on
  the recorded ones and its tip frame on the recorded hand's (``fabrik.solvers.arm.arm_angles``;
  the tip frame is the hand frame turned by a constant rotation so that its z axis runs from the
  wrist to the tip, as the DH model's does), the branch nearest the previous frame's.
* The tracking: from the recorded angles of the first frame, each method solves every frame for
  the recorded tip pose, started from its own previous answer; tol the study's 1 mm, scaled to the
  file's units by taking the subject as 1.70 m tall, orientation_tol 1e-3 rad, 500 iterations.

A take read from joint positions (an ``.npz``, ``fabrik.load_motion``) has rotations fitted to
its positions (``fabrik.rotations_from_positions``): the roll of the hand about its bone to the
tip and of the torso joint about its bone, which positions do not hold, are carried from frame
to frame by the smallest turn, and its rest pose is the archive's ``offsets``, else its first
frame; its recorded angles are measured in those frames.

Reported per method, pooled over takes and arms: per-joint RMSE (degrees) of the predicted
angles against the recorded ones (frames after the first; differences wrapped into (-180,
180]), their mean, the mean tip position error and the mean elbow position error (mm, at the
1.70 m stature), the fraction of frames reached, mean iterations and frames per second of the
solve loop. The elbow's place on its circle about the shoulder-wrist line (the arm's one
redundant degree of freedom, the swivel) is not given by the tip's pose: each method keeps it by
its own rule, and the shoulder's and wrist's angles follow it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

#: (shoulder, elbow, wrist) names per rig style, "{side}" the side's word; the first triple whose
#: joints exist and hang from one another is used.
ARM_NAMES = (
    ("{Side}Arm", "{Side}ForeArm", "{Side}Hand"),  # Mixamo and many exporters
    ("{Side}Shoulder", "{Side}Elbow", "{Side}Wrist"),  # CMU (3ds Max conversion)
    ("{Side}UpperArm", "{Side}LowerArm", "{Side}Hand"),
    ("{s}humerus", "{s}radius", "{s}wrist"),  # CMU ASF conversion
    ("upperarm_{s}", "lowerarm_{s}", "hand_{s}"),  # Unreal
)
#: Knuckles and finger joints preferred as the tip (carried by the hand), in order.
TIP_NAMES = ("{Side}HandMiddle1", "{S}Fingers", "{s}fingers", "{Side}HandIndex1", "middle_01_{s}", "index_01_{s}")
SIDES = {"left": ("Left", "l", "L"), "right": ("Right", "r", "R")}
STATURE_MM = 1700.0
STUDY_TOL_MM = 1.0
STUDY_MAX_ITER = 500
#: The elbow's flexion limit of the study's runs on recordings (radians): the normal range of
#: motion, 0-150 degrees (AAOS 1965). The study's own 0-120 degrees leaves the right elbow of the
#: CMU subject 131 out of reach in 23%, 60% and 15% of the frames of 131_01, 02 and 03 (it flexes
#: to 138 degrees); ``elbow_max`` sets it.
ELBOW_MAX = math.radians(150.0)
#: Table 2 of the study: per-joint RMSE (degrees), mean over trials.
PAPER_RMSE = (0.99, 1.38, 2.42, 0.33, 2.00, 2.20, 2.34)


def _strip(name: str) -> str:
    return name.split(":")[-1]


def arm_joints(skeleton, side: str, joints: Sequence[str] | None = None) -> tuple[int, int, int, int]:
    """(shoulder, elbow, wrist, tip) joint indices of one arm; ValueError naming what is missing."""
    names = {_strip(n): i for i, n in enumerate(skeleton.names)}
    if joints is not None:
        if len(joints) != 4:
            raise ValueError(f"joints must name SHOULDER,ELBOW,WRIST,TIP (4 joints), got {list(joints)}")
        missing = [j for j in joints if _strip(j) not in names]
        if missing:
            raise ValueError(f"unknown joint(s) {', '.join(missing)}; joints are: {', '.join(skeleton.names)}")
        return tuple(names[_strip(j)] for j in joints)
    word, s, S = SIDES[side]
    fill = {"Side": word, "side": word.lower(), "s": s, "S": S}
    parents = skeleton.parents
    for triple in ARM_NAMES:
        idx = [names.get(t.format(**fill)) for t in triple]
        if None in idx or not (_below(parents, idx[1], idx[0]) and _below(parents, idx[2], idx[1])):
            continue
        below = [j for j in range(skeleton.n_joints) if _below(parents, j, idx[2]) and j != idx[2]]
        tip = next((names[t.format(**fill)] for t in TIP_NAMES if names.get(t.format(**fill)) in below), None)
        if tip is None:
            ends = [j for j in below if j not in parents and skeleton.bone_lengths[j] > 0]
            tip = ends[0] if ends else None
        if tip is None:
            raise ValueError(f"the {side} hand {skeleton.names[idx[2]]!r} carries no joint to use as the tip; give "
                             "joints=SHOULDER,ELBOW,WRIST,TIP")
        return idx[0], idx[1], idx[2], tip
    tried = "; ".join(", ".join(t.format(**fill) for t in triple) for triple in ARM_NAMES)
    raise ValueError(f"no {side} arm found: none of the joint sets [{tried}] is in the skeleton; give "
                     f"joints=SHOULDER,ELBOW,WRIST,TIP (CLI: --joints)")


def _below(parents, j, ancestor) -> bool:
    while j is not None and j >= 0:
        if j == ancestor:
            return True
        j = parents[j]
    return False


def _frame(direction) -> np.ndarray:
    """A rotation whose z column is the unit ``direction`` and x the least-aligned world axis made
    perpendicular to it (a fixed choice: the recorded roll angle is measured from it)."""
    z = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    ref = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = ref - (ref @ z) * z
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


@dataclass
class ArmTake:
    """One arm of one take, in its DH base frame: positions (F, 4, 3) of shoulder (0), elbow,
    wrist and tip; the tip frames (F, 3, 3); the arm model and the recorded angles (F, 7)."""

    source: str
    side: str
    arm: object
    positions: np.ndarray
    tip_frames: np.ndarray
    recorded: np.ndarray
    tol: float
    fit_error: float  # largest distance of the recorded angles' tip from the recorded tip (model units)


def arm_take(skeleton, motion, side: str, joints=None, source: str = "", elbow_max: float = ELBOW_MAX) -> ArmTake:
    """The study's set-up for one arm of a take (module docstring); ``elbow_max`` (radians) the
    elbow's flexion limit."""
    from fabrik import models
    from fabrik.model.arm import forward
    from fabrik.solvers.arm import arm_angles, arm_shape

    sh, el, wr, tp = arm_joints(skeleton, side, joints)
    torso_joint = skeleton.parents[sh]
    hand_joint = skeleton.parents[tp]
    world, rotations = motion.world_transforms(skeleton)
    rest = skeleton.rest_positions()
    lengths = [float(np.linalg.norm(rest[b] - rest[a])) for a, b in ((sh, el), (el, wr), (wr, tp))]
    if min(lengths) <= 0.0:
        raise ValueError(f"the {side} arm has a zero-length segment (shoulder-elbow, elbow-wrist, wrist-tip: "
                         f"{lengths})")
    up_axis = int(np.argmax(np.ptp(rest, axis=0)))
    up = np.zeros(3)
    up[up_axis] = 1.0 if (rest[:, up_axis].max() - rest[0, up_axis]) >= (rest[0, up_axis] - rest[:, up_axis].min()) \
        else -1.0
    out = rest[sh] - rest[0]
    out -= (out @ up) * up
    if np.linalg.norm(out) <= 1e-9 * max(lengths):
        raise ValueError(f"the {side} shoulder lies on the body's vertical line at rest; cannot tell outward")
    z = out / np.linalg.norm(out)
    x = -up
    base = np.column_stack([x, np.cross(z, x), z])  # the DH base frame in torso coordinates
    torso = rotations[:, torso_joint] if torso_joint >= 0 else np.broadcast_to(np.eye(3), rotations[:, 0].shape)
    to_base = np.einsum("ji,fkj->fik", base, torso)  # base^T torso^T: world vectors into base coordinates
    pts = np.stack([world[:, j] - world[:, sh] for j in (sh, el, wr, tp)], axis=1)
    positions = np.einsum("fij,fkj->fki", to_base, pts)
    arm = models.dhm_arm(*lengths, side=side, elbow_max=elbow_max)
    # the tip frame: the hand frame turned by a constant rotation so that the wrist-to-tip direction
    # lies where the model's tip frame has it (its z for the right arm, -z for the mirrored left)
    hand_offset = rest[tp] - rest[wr]  # at rest the hand frame is the world's
    in_tip = -arm_shape(arm).wrist_in_tip
    hand_to_tip = _frame(hand_offset) @ _frame(in_tip).T  # tip coordinates -> hand coordinates
    tip_frames = to_base @ rotations[:, hand_joint] @ hand_to_tip
    recorded = np.empty((positions.shape[0], 7))
    previous = None
    for f in range(positions.shape[0]):
        previous = recorded[f] = arm_angles(arm, positions[f, 1], positions[f, 2], tip_frames[f], previous)
    fit, _ = forward(arm, recorded)
    fit_error = float(np.linalg.norm(fit[:, -1] - positions[:, 3], axis=1).max())
    tol = STUDY_TOL_MM * skeleton.height() / STATURE_MM
    return ArmTake(source, side, arm, positions, tip_frames, recorded, tol, fit_error)


@dataclass
class ArmTrack:
    """One method tracking one arm take: predicted angles (F, 7), tip errors (F,), iterations
    (F,), reached (F,) and the seconds of the solve loop."""

    method: str
    angles: np.ndarray
    tip_errors: np.ndarray
    iterations: np.ndarray
    reached: np.ndarray
    seconds: float
    elbow_errors: np.ndarray = None  # (F,) distance of the predicted elbow from the recorded one


def track(take: ArmTake, method: str, max_iter: int = STUDY_MAX_ITER) -> ArmTrack:
    """Track the recorded tip poses of ``take`` with ``method`` from the first frame's angles."""
    import fabrik

    frames = take.positions.shape[0]
    angles = np.empty((frames, 7))
    errors = np.zeros(frames)
    iterations = np.zeros(frames, dtype=np.int64)
    reached = np.ones(frames, dtype=bool)
    angles[0] = take.recorded[0]
    q = angles[0]
    targets = np.ascontiguousarray(take.positions[:, 3])
    rotations = np.ascontiguousarray(take.tip_frames)
    fabrik.solve(take.arm, (targets[0], rotations[0]), initial=q, method=method, tol=take.tol)  # compile outside
    start = time.perf_counter()
    for f in range(1, frames):
        sol = fabrik.solve(take.arm, (targets[f], rotations[f]), initial=q, method=method, tol=take.tol,
                           max_iter=max_iter)
        q = angles[f] = sol.joint_angles
        errors[f] = sol.error
        iterations[f] = sol.iterations
        reached[f] = sol.reached
    seconds = time.perf_counter() - start
    elbows = fabrik.forward(take.arm, angles).positions[:, 3]
    return ArmTrack(method, angles, errors, iterations, reached, seconds,
                    np.linalg.norm(elbows - take.positions[:, 1], axis=1))


@dataclass
class StudyRow:
    """One method's pooled results (module docstring)."""

    method: str
    per_joint_rmse_deg: tuple
    mean_rmse_deg: float
    mean_ee_error: float
    mean_ee_error_mm: float
    mean_elbow_error_mm: float
    reached_fraction: float
    mean_iterations: float
    frames_per_second: float

    def to_json(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def pool(takes: Sequence[ArmTake], tracks: Sequence[Sequence[ArmTrack]]) -> list[StudyRow]:
    """One row per method over every take and arm (``tracks[i]`` the methods' tracks of ``takes[i]``),
    over the frames after each take's first; ValueError when no take has one."""
    if not any(take.positions.shape[0] > 1 for take in takes):
        raise ValueError("no frame to pool: every take has a single frame (the study measures the frames after "
                         "the first)")
    rows = []
    for k, method in enumerate(t.method for t in tracks[0]):
        sq, n, ee, ee_mm, elbow_mm, hit, its, frames, seconds = np.zeros(7), 0, 0.0, 0.0, 0.0, 0, 0, 0, 0.0
        for take, per_method in zip(takes, tracks):
            tr = per_method[k]
            diff = np.degrees(np.angle(np.exp(1j * (tr.angles[1:] - take.recorded[1:]))))
            sq += (diff ** 2).sum(axis=0)
            n += diff.shape[0]
            ee += tr.tip_errors[1:].sum()
            ee_mm += tr.tip_errors[1:].sum() * STUDY_TOL_MM / take.tol  # tol is 1 mm in file units
            elbow_mm += tr.elbow_errors[1:].sum() * STUDY_TOL_MM / take.tol
            hit += int(tr.reached[1:].sum())
            its += int(tr.iterations[1:].sum())
            frames += diff.shape[0]
            seconds += tr.seconds
        rmse = np.sqrt(sq / max(n, 1))
        rows.append(StudyRow(method, tuple(round(float(v), 4) for v in rmse), float(rmse.mean()), ee / frames,
                             ee_mm / frames, elbow_mm / frames, hit / frames, its / frames,
                             frames / seconds if seconds > 0 else math.inf))
    return rows


@dataclass
class Study:
    """The study over several takes and arms."""

    takes: list = field(default_factory=list)
    tracks: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    skipped: list = field(default_factory=list)

    def table(self) -> str:
        head = f"{'method':<14}" + "".join(f"{'q' + str(j + 1):>7}" for j in range(7)) + \
            f"{'mean':>7}{'ee mm':>9}{'elbow mm':>9}{'reached':>9}{'iters':>7}{'frames/s':>10}"
        lines = [f"DHM arm study: {len(self.takes)} arm takes, {sum(t.positions.shape[0] for t in self.takes)} "
                 "frames; per-joint RMSE in degrees against the recorded angles", head, "-" * len(head)]
        lines.append(f"{'study (Tab. 2)':<14}" + "".join(f"{v:>7.2f}" for v in PAPER_RMSE)
                     + f"{np.mean(PAPER_RMSE):>7.2f}{0.007:>9.3f}{'-':>9}{'100%':>9}{24:>7}{'-':>10}")
        for r in self.rows:
            lines.append(f"{r.method:<14}" + "".join(f"{v:>7.2f}" for v in r.per_joint_rmse_deg)
                         + f"{r.mean_rmse_deg:>7.2f}{r.mean_ee_error_mm:>9.3g}{r.mean_elbow_error_mm:>9.1f}"
                         f"{r.reached_fraction:>9.1%}"
                         f"{r.mean_iterations:>7.1f}{r.frames_per_second:>10.0f}")
        fits = max((t.fit_error for t in self.takes), default=0.0)
        lines.append(f"recorded angles reproduce the recorded tips to {fits:.2g} units (largest over frames)")
        lines.extend(f"skipped {s}" for s in self.skipped)
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"experiment": "dhm-arm-study", "takes": [{"source": t.source, "side": t.side,
                                                          "frames": int(t.positions.shape[0]), "tol": t.tol,
                                                          "fit_error": t.fit_error} for t in self.takes],
                "paper_rmse_deg": list(PAPER_RMSE), "results": [r.to_json() for r in self.rows],
                "skipped": self.skipped}


def run_study(paths: Sequence[str | Path], *, sides=("left", "right"), joints=None,
              methods=("fabrik", "ccd", "jacobian-dls"), frames: str | None = None, elbow_max: float = ELBOW_MAX,
              progress: bool = False) -> Study:
    """The study over the takes ``paths`` and ``sides`` (module docstring)."""
    import fabrik
    from fabrik.mocap import parse_frames

    study = Study()
    for path in paths:
        skeleton, motion = fabrik.load_motion(path)
        start, stop, step = parse_frames(frames, motion.n_frames)
        motion = motion.frames(start, stop, step)
        if motion.n_frames < 2:
            # the first frame is where tracking starts (the recorded angles); the study measures the others
            study.skipped.append(f"{Path(path).name}: {motion.n_frames} frame; the study tracks the frames after the "
                                 "first, so a take needs at least 2")
            continue
        for side in sides:
            try:
                take = arm_take(skeleton, motion, side, joints, Path(path).name, elbow_max)
            except ValueError as exc:
                study.skipped.append(f"{Path(path).name} ({side}): {exc}")
                continue
            study.takes.append(take)
            study.tracks.append([track(take, m) for m in methods])
    if not study.takes:
        raise ValueError("no arm could be set up: " + "; ".join(study.skipped))
    study.rows = pool(study.takes, study.tracks)
    return study


def plot_angles(take: ArmTake, tracks: Sequence[ArmTrack], path) -> None:
    """The study's Figure 4: recorded (dashed) and predicted (solid) angles of one arm take."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(7, 1, figsize=(8, 12), sharex=True)
    t = np.arange(take.recorded.shape[0])
    for j, ax in enumerate(axes):
        ax.plot(t, np.degrees(np.unwrap(take.recorded[:, j])), "k--", lw=1.0, label="recorded")
        for tr in tracks:
            ax.plot(t, np.degrees(np.unwrap(tr.angles[:, j])), lw=0.8, label=tr.method)
        ax.set_ylabel(f"q{j + 1} (deg)")
    axes[0].legend(loc="upper right", fontsize=7, ncol=4)
    axes[-1].set_xlabel("frame")
    fig.suptitle(f"{take.source}, {take.side} arm: recorded and predicted DH angles")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


__all__ = ["run_study", "arm_take", "arm_joints", "track", "pool", "plot_angles", "Study", "ArmTake", "ArmTrack",
           "StudyRow", "PAPER_RMSE", "ARM_NAMES"]
