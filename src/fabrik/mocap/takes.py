"""A loaded BVH take made ready for solving: which skeleton the solvers get, which joints are
targets, which are left to estimate, and which limits apply.

Conventions (docs/conventions.md): joints are numbered as in the file (``fabrik.load_bvh``: depth
first, root 0, End Sites as ``<parent>_End`` joints); positions are in the file's units; F is
the number of frames, n the file's joints, m the joints the solvers get (``Take.joints``).

* ``prepare_take(skeleton, motion)`` -> ``Take``: the recorded world positions and rotations,
  and the skeleton the solvers get. BVH position channels on joints other than the root replace
  their OFFSETs, so the bones the solvers keep are the recorded translations (fixed while they
  vary by no more than the digits the file printed them with allow); a joint that moves in its
  position channels above the whole body (a reference node above the hips) becomes the solvers'
  root. See ``prepare_take`` for the rules.
* Effectors (``default_effectors``): every leaf; a leaf at zero distance from its parent (a
  zero-length End Site) is replaced by its nearest ancestor at a distinct position, duplicates
  are dropped, and the root never counts (it is pinned separately).
* Coincident groups (``coincident_groups``) and evaluated joints (``evaluated_joints``): joints
  joined by zero-length bones always coincide, so they form one group, its top joint standing
  for it. Groups holding the root or an effector are known; the others are the inner joints a
  reconstruction estimates.
* Limits (``resolve_constraints``): ``"humanoid"``, a constraints JSON file or a mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from fabrik.io.rounding import FLOAT32_ROUNDING, PRINT_MARGIN
from fabrik.model.motion import ZERO_BONE, Motion
from fabrik.model.skeleton import Skeleton
from fabrik.model.constraints import Twist

_FREE_TWIST = Twist(-np.pi, np.pi)

#: Position channels of a motion made in memory (no printed digits to judge by) that move a joint
#: by less than this fraction of the body's size count as constant (1e-5 of the height is 17
#: micrometres on an adult).
CONSTANT_TRANSLATION = 1e-5


def _zero_tol(skeleton: Skeleton) -> float:
    return ZERO_BONE * max(skeleton.height(), float(skeleton.bone_lengths.max()), 1e-300)


def _check_skeleton(skeleton) -> None:
    if not isinstance(skeleton, Skeleton):
        raise ValueError(f"skeleton must be a fabrik.Skeleton, got {type(skeleton).__name__}")


def default_effectors(skeleton: Skeleton) -> list[int]:
    """Joint indices of the default end effectors, in skeleton order: every leaf, a zero-length
    leaf replaced by its nearest ancestor at a distinct position, never the root (module notes)."""
    _check_skeleton(skeleton)
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
    """(n,) int: for each joint, the top joint of its group of joints joined by zero-length bones
    (a joint on a bone of length above ``ZERO_BONE`` x the skeleton's size is its own top)."""
    _check_skeleton(skeleton)
    lengths = skeleton.bone_lengths
    eps = _zero_tol(skeleton)
    top = np.arange(skeleton.n_joints)
    for i in range(1, skeleton.n_joints):
        if lengths[i] <= eps:
            top[i] = top[skeleton.parents[i]]
    return top


def evaluated_joints(skeleton: Skeleton, effectors: Sequence[int]) -> list[int]:
    """The inner joints a reconstruction estimates, sorted: one per coincident group (its top
    joint), the groups holding the root or one of ``effectors`` (joint indices) left out.
    ValueError for an index out of range."""
    top = coincident_groups(skeleton)
    bad = [int(e) for e in effectors if not 0 <= int(e) < skeleton.n_joints]
    if bad:
        raise ValueError(f"effector index {bad[0]} out of range 0..{skeleton.n_joints - 1}")
    known = {int(top[0])} | {int(top[e]) for e in effectors}
    return sorted({int(t) for t in top} - known)


def effector_indices(skeleton: Skeleton, effectors: Sequence[str | int] | None = None) -> list[int]:
    """The joint indices of ``effectors`` (names or indices, in the order given), or
    ``default_effectors(skeleton)`` when None.

    ValueError for an unknown name (listing the joints), an index out of range, the root (it is
    always pinned), a joint listed twice, or no effector at all (naming why: a skeleton whose
    bones all have zero length has nothing to solve)."""
    _check_skeleton(skeleton)
    n = skeleton.n_joints
    if effectors is None:
        eff = default_effectors(skeleton)
    else:
        if isinstance(effectors, (str, bytes)):
            raise ValueError(f"effectors must be a list of joint names or indices, got the string {effectors!r}")
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
    return eff


def check_positions(skeleton: Skeleton, positions) -> np.ndarray:
    """``positions`` as a C-contiguous float64 (F, n, 3) array (a copy), F >= 1, n the skeleton's
    joints; ValueError naming the shape it got, or a NaN or inf."""
    _check_skeleton(skeleton)
    truth = np.array(positions, dtype=np.float64, order="C")
    n = skeleton.n_joints
    if truth.ndim != 3 or truth.shape[1:] != (n, 3) or truth.shape[0] < 1:
        raise ValueError(f"positions must have shape (F, {n}, 3), got {truth.shape}")
    if not np.isfinite(truth).all():
        raise ValueError("positions contain a non-finite value (NaN or inf)")
    return truth


def parse_frames(text: str | None, n_frames: int) -> tuple[int, int, int]:
    """A frame range in the CLI's ``--frames`` syntax, ``"START:STOP[:STEP]"`` (Python slice
    syntax; parts may be empty or negative) -> (start, stop, step) for ``n_frames`` frames, ready
    for ``Motion.frames``; None is every frame. ValueError when malformed or when no frame is
    selected."""
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


@dataclass(frozen=True, eq=False)
class Take:
    """A recorded take prepared for solving (``prepare_take``). Arrays are read-only.

    Attributes:
        skeleton: the file's skeleton, n joints.
        motion: the file's motion, F frames.
        positions: (F, n, 3) recorded world positions of every joint (file units), with the
            body's fixed bones in place of position channels that only wobble about them.
        rotations: (F, n, 3, 3) recorded world rotation matrices of every joint
            (``Motion.world_transforms``; they act on column vectors).
        body: the skeleton the solvers get, m joints: the file's joint ``joints[0]`` and every
            joint below it, its offsets the recorded translations (the file's OFFSETs where the
            position channels agree with them; ``prepare_take``).
        joints: (m,) int64 the file's indices of ``body``'s joints, in order (its root first);
            ``arange(n)`` when the solvers get every joint.
        notes: how the file was set up for the solvers (empty when nothing changed).
    """

    skeleton: Skeleton
    motion: Motion
    positions: np.ndarray
    rotations: np.ndarray
    body: Skeleton
    joints: np.ndarray
    notes: tuple[str, ...] = ()

    @property
    def n_frames(self) -> int:
        """F, the number of frames."""
        return int(self.positions.shape[0])

    @property
    def body_positions(self) -> np.ndarray:
        """(F, m, 3) recorded positions of ``body``'s joints (a C-contiguous copy)."""
        return np.ascontiguousarray(self.positions[:, self.joints])

    def initial_frames(self) -> np.ndarray:
        """(m, 3, 3) the first frame's joint frames of ``body`` from the recorded world rotations
        (``frames_from_world_rotations``): where a method with joint limits starts its twists."""
        from fabrik.model.geometry import frames_from_world_rotations

        return frames_from_world_rotations(self.body, self.rotations[0, self.joints])

    def whole(self, body_positions) -> np.ndarray:
        """(F, n, 3) every joint of the file: ``body_positions`` (F, m, 3) for ``body``'s joints,
        the recorded positions for the joints outside it."""
        p = np.asarray(body_positions, dtype=np.float64)
        if p.shape != (self.n_frames, len(self.joints), 3):
            raise ValueError(f"body positions must have shape ({self.n_frames}, {len(self.joints)}, 3), got {p.shape}")
        full = np.array(self.positions)
        full[:, self.joints] = p
        return full


def _subtree(parents: np.ndarray, tops) -> np.ndarray:
    """(n,) bool: the joints ``tops`` (an index or several) and every joint below them (one sweep,
    since ``parents[i] < i``)."""
    inside = np.zeros(parents.shape[0], dtype=bool)
    inside[tops] = True
    for k in range(1, parents.shape[0]):
        inside[k] |= inside[parents[k]]
    return inside


def _body_root(parents: np.ndarray, moving: Sequence[int], apart: np.ndarray, carriers: Sequence[int]) -> int:
    """The joint the body hangs from when joints ``moving`` change their translations, or -1.

    It is one of ``carriers`` (moving joints that can carry a body: their translations turn, not
    only change length) whose ancestors carry no other branch except ones starting at the
    ancestor itself (``apart[k]`` False: zero OFFSET, as an Unreal root's ``ik_foot_root``), with
    every other moving joint on that chain or on such a branch; the candidate with the most joints
    below it. ``apart`` (n,) bool: the joint's translation from its parent is not zero."""
    n = parents.shape[0]
    best, best_size = -1, 0
    for top in carriers:
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


@dataclass(frozen=True)
class _Tolerances:
    """How far a joint's translation may stray and still be a fixed bone (``_fixed_bone_tolerances``).

    ``span`` (n, 3): the most its values on each axis may span over the frames; ``off`` (n, 3): the
    most they may differ from the OFFSET (from zero: whether the bone has a length); ``source``:
    what sets them, in a few words; from a file, ``own`` (n, 3) the rounding of each joint's
    values on each axis and ``coordinate`` that of the take's largest coordinate, ``extent``."""

    span: np.ndarray
    off: np.ndarray
    source: str
    own: np.ndarray | None = None
    coordinate: float = 0.0
    extent: float = 0.0

    def reason(self, j: int, axis: int) -> str:
        """``span[j, axis]`` and where it comes from, for a message ("more than the ...")."""
        if self.own is None:
            return f"{self.span[j, axis]:.2g} allowed for a motion not read from a file ({self.source})"
        return (f"{self.span[j, axis]:.2g} the file's printed digits allow ({PRINT_MARGIN:g} x 2 x ("
                f"{self.own[j, axis]:.2g}, the rounding of its values, + 2 sqrt(3) x {self.coordinate:.2g}, that of "
                f"coordinates up to {self.extent:.3g}))")


def _fixed_bone_tolerances(skeleton: Skeleton, motion: Motion, positions: np.ndarray) -> _Tolerances:
    """The tolerances of a fixed bone, per joint and axis, from the digits the file was printed
    with (``motion.precision``), or for a motion made in memory ``CONSTANT_TRANSLATION`` of the
    body's size on every axis (``positions`` (F, n, 3): the recorded ones).

    From a file: a value v of a position channel is within r(v) of what was printed from
    (``PrintedPrecision.rounding``: half its last digit's worth, fixed decimals or significant
    digits). That came from world coordinates, up to W the take's largest, rounded by c: the
    rounding of W at the position channels' digits, and no less than float32's
    ``FLOAT32_ROUNDING`` x W; a translation, the difference of two such points turned into the
    parent's frame, is then within e = r + 2 sqrt(3) c on each axis. Two frames may differ by 2e,
    the translation and its OFFSET by e and the OFFSET's own e; ``PRINT_MARGIN`` times both."""
    n = skeleton.n_joints
    precision = motion.precision
    if precision is None or motion.layout is None:
        size = skeleton.height(positions[0])
        tol = CONSTANT_TRANSLATION * (size if size > 0 else max(float(np.abs(positions[0]).max()), 1.0))
        full = np.full((n, 3), tol)
        return _Tolerances(full, full, f"{CONSTANT_TRANSLATION:g} of the body's size (a motion not read from a file)")
    rounding = precision.rounding
    extent = float(np.abs(positions).max())
    coordinate = max(float(rounding(extent, precision.coordinate_place, precision.coordinate_significant)),
                     FLOAT32_ROUNDING * extent)
    carried = 2.0 * np.sqrt(3.0) * coordinate
    own = np.zeros((n, 3))  # r per joint and axis, 0 where the OFFSET stands (it never changes)
    has_channel = np.zeros((n, 3), dtype=bool)
    col = 0
    for j, chans in enumerate(motion.layout.channels):
        values = motion.root_positions if j == 0 else motion.joint_translations.get(j)
        for c in chans:
            if c.endswith("position") and values is not None:
                axis = "XYZ".index(c[0])
                own[j, axis] = float(rounding(values[:, axis], precision.places[col], precision.significant[col]).max())
                has_channel[j, axis] = True
            col += 1
    error = np.where(has_channel, own + carried, 0.0)
    offset_error = rounding(skeleton.offsets, precision.offset_place, precision.offset_significant) + carried
    return _Tolerances(PRINT_MARGIN * 2.0 * error, PRINT_MARGIN * (error + offset_error),
                       "the rounding of the digits the file was printed with", own, coordinate, extent)


def _solving_skeleton(skeleton: Skeleton, motion: Motion, positions: np.ndarray):
    """(body, joints, notes) for ``prepare_take``; ``positions`` (F, n, 3) the recorded ones."""
    local = motion.local_translations(skeleton)
    tol = _fixed_bone_tolerances(skeleton, motion, positions)
    span = local.max(axis=0) - local.min(axis=0)  # (n, 3)
    over = span / np.where(tol.span > 0, tol.span, np.inf)
    over[0] = 0.0
    moving = [int(j) for j in np.flatnonzero((span > tol.span).any(axis=1)) if j > 0]
    parents = skeleton.parents
    top = 0
    if moving:
        # a joint that carries a body (a hips moving under a reference node) moves it about: its
        # translation turns; one whose translation keeps its direction only changes its bone's length
        carriers = []
        for j in moving:
            mean = local[:, j].mean(axis=0)
            norm = float(np.linalg.norm(mean))
            if norm > 0:
                along = local[:, j] @ (mean / norm)
                aside = np.linalg.norm(local[:, j] - along[:, None] * (mean / norm), axis=1).max()
            if norm == 0 or aside > np.linalg.norm(tol.span[j]):
                carriers.append(j)
        top = _body_root(parents, moving, (np.abs(local[0]) > tol.off).any(axis=1), carriers)
        if top < 0:
            j = max(moving)  # the deepest: nothing below it moves
            axis = int(np.argmax(np.where(span[j] > tol.span[j], over[j], -1.0)))
            lengths = np.linalg.norm(local[:, j], axis=1)
            raise ValueError(
                f"joint {skeleton.names[j]!r} moves relative to its parent {skeleton.names[parents[j]]!r} in its "
                f"position channels (bone length {lengths.min():.6g} to {lengths.max():.6g} over the frames; its "
                f"{'XYZ'[axis]} translation spans {span[j, axis]:.3g}, more than the {tol.reason(j, axis)}); "
                "reconstruction keeps bone lengths fixed and can only follow a moving root, or moving joints above "
                "the whole body (a reference node above the hips)")
    # the body: ``top`` and every joint below it; the others (the joints above it and their other
    # branches, such as an Unreal rig's IK bones) keep their recorded motion
    inside = _subtree(parents, top)
    joints = np.flatnonzero(inside).astype(np.int64)
    # translations within the tolerances are fixed bones: the file's OFFSET where every frame
    # agrees with it (an exporter's rounding about the OFFSET, a zero-length bone printed as a few
    # units of the last decimal), else the same value in every frame, else their mean direction at
    # their mean length over the frames
    at_offset = (np.abs(local[:, joints] - skeleton.offsets[joints]).max(axis=0) <= tol.off[joints]).all(axis=1)
    offsets = np.array(local[0, joints])
    steady = (local[:, joints] == local[:1, joints]).all(axis=(0, 2))
    averaged = ~at_offset & ~steady
    averaged[0] = False
    for k in np.flatnonzero(averaged):
        mean = local[:, joints[k]].mean(axis=0)
        norm = float(np.linalg.norm(mean))
        length = float(np.linalg.norm(local[:, joints[k]], axis=1).mean())
        offsets[k] = mean * (length / norm) if norm > 0 else mean
    offsets[at_offset] = skeleton.offsets[joints[at_offset]]
    offsets[0] = skeleton.offsets[0] if top == 0 else positions[0, top]
    notes = []
    if top:
        outside = [skeleton.names[j] for j in np.flatnonzero(~inside)]
        notes.append(f"{skeleton.names[top]!r} is the root here: it moves in its position channels, so the "
                     f"{len(outside)} joint(s) outside the body it carries ({', '.join(outside[:5])}"
                     f"{', ...' if len(outside) > 5 else ''}) keep their recorded motion")
    varying = [k for k in range(1, len(joints)) if not steady[k]]
    if varying:
        k_most = max(varying, key=lambda k: float(span[joints[k]].max()))
        mean_names = [skeleton.names[joints[k]] for k in np.flatnonzero(averaged)]
        notes.append(f"the position channels of {len(varying)} joint(s) vary over the frames, by up to "
                     f"{span[joints[k_most]].max():.2g} ({skeleton.names[joints[k_most]]}), within "
                     f"{tol.source}: read as fixed bones, "
                     + (f"each at its mean length over the frames for {len(mean_names)} "
                        f"({', '.join(mean_names[:5])}{', ...' if len(mean_names) > 5 else ''}), at the OFFSET for "
                        f"the others" if mean_names else "each at its OFFSET"))
    if top == 0 and np.array_equal(offsets, skeleton.offsets):
        return skeleton, joints, tuple(notes)
    changed = [skeleton.names[j] for j, same in zip(joints[1:], at_offset[1:]) if not same]
    if changed:
        notes.append(f"bones from the position channels, not the OFFSETs, of {len(changed)} joint(s) "
                     f"({', '.join(changed[:5])}{', ...' if len(changed) > 5 else ''})")
    renumber = np.cumsum(inside) - 1
    sub_parents = np.concatenate([[-1], renumber[parents[joints[1:]]]])
    sub = Skeleton(tuple(skeleton.names[j] for j in joints), sub_parents, offsets)
    return sub, joints, tuple(notes)


def _steady_translations(motion: Motion, body: Skeleton, joints: np.ndarray) -> dict[int, np.ndarray]:
    """``{file joint: (F, 3) its body bone}`` for the joints inside the body (its root excepted)
    whose position channels differ from the fixed bone ``_solving_skeleton`` gave them (by at most
    ``CONSTANT_TRANSLATION`` of the body's size: an exporter's rounding)."""
    out = {}
    for k in range(1, len(joints)):
        j = int(joints[k])
        t = motion.joint_translations.get(j)
        if t is not None and not (t == body.offsets[k]).all():
            out[j] = np.broadcast_to(body.offsets[k], t.shape)
    return out


def prepare_take(skeleton: Skeleton, motion: Motion) -> Take:
    """A recorded take made ready for solving: its world positions and rotations, and the
    skeleton the solvers get.

    BVH position channels on joints other than the root replace their OFFSETs, so the bones the
    solvers must keep are the recorded translations, not the OFFSETs:

    * translations that vary over the frames by no more than the digits the file printed them
      with allow (``_fixed_bone_tolerances``: ``PRINT_MARGIN`` times the rounding of the values
      and of the file's coordinates, no finer than float32's; for a motion made in memory,
      ``CONSTANT_TRANSLATION`` of the body's size) are fixed bones: 6-channel joints written by
      many exporters, such as Blender, hold a bone's translation rounded to the printed digits.
      The bone is the file's OFFSET when every frame agrees with it to that precision (so the
      recorded offsets' directions and lengths are kept, and a zero-length bone stays zero),
      else the translations' mean direction at their mean length over the frames (``notes``
      says which); the take's recorded positions are computed with these fixed bones, so that a
      take exported with such channels gives the same targets and ground truth as one exported
      without them;
    * translations that change beyond that change bone lengths, which no fixed-length solver can
      follow. When such joints lie above the whole body, on the chain from the root whose joints
      carry no other branch except ones starting at the joint itself (a static ``reference``
      node above ``Hips`` that carries the walk in its own position channels, as MotionBuilder
      writes; an Unreal ``pelvis`` moving under a ``root`` that also carries ``ik_foot_root`` and
      ``ik_hand_root`` at its origin), the deepest of them whose translation turns (one that
      only changes its length is a stretching bone, not a body's root) becomes the solvers'
      root, and the joints outside the body it carries (above it, or on those branches) keep
      their recorded motion.

    Args:
        skeleton: the file's skeleton (n joints), e.g. from ``fabrik.load_bvh``.
        motion: its motion (F frames; ``motion.frames(...)`` for a part of it).

    Returns:
        A ``Take``; ``take.body is skeleton`` and ``take.joints`` is ``arange(n)`` when the
        OFFSETs already describe the motion.

    Raises:
        ValueError: ``skeleton`` is not a ``fabrik.Skeleton``, ``motion`` not a ``fabrik.Motion``
            or not of that skeleton, or a joint inside the body moves in its position channels
            (naming the joint, the range of its bone length, the axis that spread most and the
            threshold).
    """
    _check_skeleton(skeleton)
    if not isinstance(motion, Motion):
        raise ValueError(f"motion must be a fabrik.Motion, got {type(motion).__name__}")
    positions, rotations = motion.world_transforms(skeleton)
    body, joints, notes = _solving_skeleton(skeleton, motion, positions)
    steady = _steady_translations(motion, body, joints)
    if steady:
        # the body's fixed bones in place of their channels' rounding wobble, so that the
        # recorded poses are poses of the skeleton being solved
        fixed = Motion(motion.rotations, motion.root_positions, motion.frame_time,
                       {**motion.joint_translations, **steady}, motion.layout)
        positions = fixed.world_positions(skeleton)
    for a in (positions, rotations, joints):
        a.flags.writeable = False
    return Take(skeleton, motion, positions, rotations, body, joints, notes)


#: A limit that a take's first frame breaks by more than this (radians) is moved onto that
#: frame (``fit_limits_to_pose``).
POSE_SLACK = 1e-6

#: Below this bend (radians) a hinge's plane is ill-defined by the pose, and is left alone.
POSE_MIN_BEND = np.radians(15.0)


def fit_limits_to_pose(skeleton: Skeleton, world_rotations) -> tuple[dict, dict]:
    """The limits of ``skeleton`` moved onto a recorded pose wherever the pose breaks them.

    A generic limit is written about the rest pose. Where a rig's rest pose is no neutral human
    pose (a rig that rests with every bone along one axis and reaches its T-pose through constant
    joint rotations, or an elbow whose axis the rig tilts), a limit that the take's own first
    frame breaks is misplaced, not the motion. So:

    * a joint whose cones or twist ranges the pose breaks measures them from the pose's local
      rotation instead of the rest pose (a reference rotation, ``Skeleton.limit_reference``);
    * a hinge whose plane or range the pose breaks (its twist aside) turns its axis about its
      zero direction so that the pose's child lies in the plane (where the child bends by at
      least ``POSE_MIN_BEND``; less shows no plane) or reverses it, whichever puts the child
      inside the range; its zero direction and range stay.

    Args:
        skeleton: the skeleton, limits attached (``constraints``, and the ``limit_reference``
            they are measured from).
        world_rotations: (n, 3, 3) world rotation matrices of the pose (``Take.rotations[0]``
            for the body's joints).

    Returns:
        (limits, reference): ``{joint name: limits}`` for every limited joint (the moved hinges
        included) and ``{joint name: 3 x 3 rotation}`` for the joints measured from the pose, ready
        for ``skeleton.with_constraints(limits, reference=reference)``.
    """
    from fabrik.mocap.frames_export import child_violation
    from fabrik.model.constraints import Hinge
    from fabrik.model.rig import rig

    W = np.asarray(world_rotations, dtype=np.float64)
    if W.shape != (skeleton.n_joints, 3, 3) or not np.isfinite(W).all():
        raise ValueError(f"world_rotations must be finite with shape ({skeleton.n_joints}, 3, 3), got {W.shape}")
    arrays = rig(skeleton)
    R0, parents, lengths = arrays.rest_frames, arrays.parents, arrays.lengths
    limits = {skeleton.names[j]: tuple(items) for j, items in skeleton.constraints.items()}
    reference = {}
    for j, items in skeleton.constraints.items():
        own = [c for c in skeleton.children(j) if lengths[c] > 0.0]
        if j == 0 or not own:
            continue
        L = W[parents[j]].T @ W[j]
        A = np.eye(3) if skeleton.limit_reference is None else skeleton.limit_reference[j]
        moved = []
        for item in items:
            if isinstance(item, Hinge):
                # the direction only: a hinge's twist is the bone's roll, which positions never show
                M = R0[own[0]].T @ A.T @ L @ R0[own[0]]
                if float(child_violation((Hinge(item.axis, item.min, item.max), _FREE_TWIST), M)) > POSE_SLACK:
                    item = _hinge_onto(item, M[:, 1])
            moved.append(item)
        limits[skeleton.names[j]] = tuple(moved)
        others = tuple(item for item in moved if not isinstance(item, Hinge))
        if others and max(float(child_violation(others, R0[c].T @ A.T @ L @ R0[c])) for c in own) > POSE_SLACK:
            reference[skeleton.names[j]] = L
    return limits, reference


def _hinge_onto(hinge, v: np.ndarray):
    """``hinge`` with its axis turned about its zero direction (+Y of its reference) or reversed
    so that the unit direction ``v`` (in that reference) lies in its plane, inside its range where
    one of the two choices puts it (else the nearest); where ``v`` bends less than
    ``POSE_MIN_BEND`` from +Y only the axis's sign may change."""
    from fabrik.model.constraints import Hinge

    if np.arctan2(np.hypot(v[0], v[2]), v[1]) >= POSE_MIN_BEND:
        # the axes perpendicular to +Y and to v
        n = np.cross(v, [0.0, 1.0, 0.0])
        n /= np.linalg.norm(n)
    else:
        n = np.asarray(hinge.axis, dtype=np.float64)  # too straight to show a plane: its side only
    best, best_cost = hinge, np.inf
    for axis in (n, -n):
        theta = float(np.arctan2(np.cross([0.0, 1.0, 0.0], v) @ axis, v[1]))
        excess = max(0.0, hinge.min - theta, theta - hinge.max)
        turn = float(np.arccos(np.clip(axis @ np.asarray(hinge.axis, dtype=np.float64), -1.0, 1.0)))
        cost = excess + 1e-3 * turn
        if cost < best_cost:
            best, best_cost = Hinge(tuple(axis), hinge.min, hinge.max), cost
    return best


def take_limits(take: Take, spec) -> tuple[dict, dict, list[str]]:
    """The limits a recorded take is solved with: ``resolve_constraints(take.body, spec)`` (with
    the first frame to tell which way the body faces), then moved onto the first frame where it
    breaks them (``fit_limits_to_pose``).

    Returns (limits, reference, unplaced) for ``take.body.with_constraints(limits,
    reference=reference)``; ``unplaced`` as ``resolve_constraints`` says."""
    limits, unplaced = resolve_constraints(take.body, spec, pose=take.body_positions[0])
    limited = take.body.with_constraints(limits)
    moved, reference = fit_limits_to_pose(limited, take.rotations[0][take.joints])
    return moved, reference, unplaced


def resolve_constraints(skeleton: Skeleton, spec, *, pose=None) -> tuple[dict, list[str]]:
    """Joint limits for ``skeleton`` from ``spec``.

    Args:
        skeleton: the skeleton the limits go on (for a take, ``Take.body``).
        spec: ``"humanoid"`` (the default human set placed by joint names,
            ``fabrik.constraints.humanoid``, its hinges along the rig's own body axes), a path to a constraints JSON file
            (``fabrik.constraints.load_constraints``; angles in the units the file names), or a
            mapping ``{joint name: constraint or constraints}`` (radians, docs/constraints.md).
        pose: (n, 3) positions of a take's first frame, for ``"humanoid"``: looked at where the
            rest pose cannot tell which way the body faces (``fabrik.model.humanoid_limits.body_axes``).

    Returns:
        (constraints, unplaced): ``{joint name: constraint(s)}`` for
        ``skeleton.with_constraints``, and the joints with a bone leaving them that ``"humanoid"``
        could not place a limit on (empty for a file or a mapping).

    Raises:
        ValueError: a missing or malformed file, a spec of another type, unknown joints.
    """
    from fabrik.io.limits_file import load_constraints
    from fabrik.model.humanoid_limits import humanoid

    if isinstance(spec, str) and spec == "humanoid":
        return humanoid(skeleton, pose=pose)
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


__all__ = ["Take", "prepare_take", "take_limits", "fit_limits_to_pose", "default_effectors", "coincident_groups",
           "evaluated_joints", "effector_indices", "check_positions", "parse_frames", "resolve_constraints",
           "CONSTANT_TRANSLATION"]
