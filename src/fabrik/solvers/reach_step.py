"""The reach step of skeleton FABRIK (``TrackingOptions.reach_step``): a solve that ends short of
its targets is tried again from a start whose held trunk groups are turned so that every
effector's limb can reach its target.

A held group (``rigid_sub_bases``: a pelvis with its thighs and spine, a chest with its neck and
collars) is placed each iteration by a least-squares fit to its members' proposals. Tracking a
take, the turns the targets leave free (the pelvis about the vertical, the chest about the spine)
drift from frame to frame, and the fit can settle where one limb's target lies beyond that limb's
reach from the group although other turns of the groups reach every target: a fixed point, which
more iterations do not leave (DeepMimic's run: half of its frames).

The step turns the **trunk groups** (the held group at the root, and each held group whose centre
hangs from a trunk group's member through at most ``TRUNK_FREE_JOINTS`` joints of one child each) about their
centres, each carrying its whole subtree, to bring each effector within reach of its **limb**:
the path from its nearest joint that belongs to a trunk group down to the effector, whose reach
is the sum of the path's bone lengths (and whose shortest reach, ``2 max - sum``, bounds it from
below). The rotation vectors come from damped Gauss-Newton on the reach excesses, every step
re-linearised at the turned pose, so bone lengths are kept exactly; with limits each turned
joint's frame turns with it, so every joint the turn carries keeps its place in its parent's
frame (the limits the turn can break are those of the groups' centres, which the solve then
restores). The solve then runs again from the turned pose. The answer that reaches, else the one with the lower largest error, is
kept; ``iterations`` counts both attempts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabrik.kernels.stopping import REACHED
from fabrik.model.geometry import axis_angle_matrices

#: Joints (each with one child) allowed between a trunk group's member and the centre of a held
#: group that hangs from it (a spine joint between the pelvis group and the chest group), for that
#: group to join the trunk; an arm (a shoulder, elbow and wrist to a held palm) stays a limb.
TRUNK_FREE_JOINTS = 1

#: Gauss-Newton steps of one reach step at most; the damping of each step (relative to the
#: largest diagonal entry of J^T J); the excess (fraction of ``tol``) at which it stops; and the
#: fraction by which a step must lower the summed squared excess for another to follow (a target
#: no turn brings within reach leaves a floor the steps only creep towards).
STEP_ITERATIONS, STEP_DAMPING, STEP_STOP, STEP_PROGRESS = 30, 1e-6, 1e-3, 1e-2


@dataclass(frozen=True, eq=False)
class TrunkLayout:
    """The arrays of a reach step for one skeleton, group layout and set of effectors.

    Attributes:
        centres: (g,) int64 the trunk groups' centres, parents before children.
        subtrees: g arrays of the joints each centre's rotation carries (its subtree, less itself).
        carried: (g, k) bool: effector t's limb top turns with group g.
        tops: (k,) int64 each effector's limb top (a trunk group's centre or member, or the effector).
        reach, shortest: (k,) each limb's longest and shortest reach (model units).
    """

    centres: np.ndarray
    subtrees: tuple
    carried: np.ndarray
    tops: np.ndarray
    reach: np.ndarray
    shortest: np.ndarray


def trunk_layout(parents: np.ndarray, lengths: np.ndarray, groups, effectors: np.ndarray) -> TrunkLayout | None:
    """The ``TrunkLayout`` of a skeleton (``parents`` (n,), parents before children; ``lengths``
    (n,) each joint's bone from its parent) for the held (not releasable) groups of a ``Groups``
    record and the targeted joints ``effectors`` (k,); None when there is no trunk group (then the
    step has nothing to turn)."""
    n = parents.shape[0]
    children = np.bincount(parents[1:], minlength=n) if n > 1 else np.zeros(n, dtype=np.int64)
    members = {}
    for c in np.flatnonzero(groups.group_of >= 0).tolist():
        g = int(groups.group_of[c])
        if not groups.releasable[g]:
            members[c] = groups.group_members[groups.group_start[g]:groups.group_start[g + 1]].tolist()
    rigid: set[int] = set()
    centres = []
    for c in sorted(members):
        joint, free, joins = c, 0, c == 0
        while not joins and parents[joint] >= 0 and free <= TRUNK_FREE_JOINTS:
            joint = int(parents[joint])
            if joint in rigid:
                joins = True
            elif children[joint] != 1:
                break
            free += 1
        if joins:
            centres.append(c)
            rigid.add(c)
            rigid.update(members[c])
    if not centres:
        return None
    inside = np.zeros((len(centres), n), dtype=bool)
    for g, c in enumerate(centres):
        inside[g, c] = True
        for j in range(c + 1, n):
            inside[g, j] = inside[g, parents[j]]
        inside[g, c] = False
    tops, reach, shortest = [], [], []
    for e in np.asarray(effectors).tolist():
        bones, joint = [], e
        while joint not in rigid and parents[joint] >= 0:
            bones.append(lengths[joint])
            joint = int(parents[joint])
        tops.append(joint)
        reach.append(sum(bones))
        shortest.append(max(0.0, 2.0 * max(bones, default=0.0) - reach[-1]))
    tops = np.array(tops, dtype=np.int64)
    return TrunkLayout(np.array(centres, dtype=np.int64), tuple(np.flatnonzero(row) for row in inside),
                       inside[:, tops], tops, np.array(reach), np.array(shortest))


def turn_trunk(layout: TrunkLayout, positions: np.ndarray, frames: np.ndarray, targets: np.ndarray,
               tol: float) -> tuple[np.ndarray, np.ndarray] | None:
    """``positions`` (n, 3) and joint ``frames`` (n, 3, 3, or (0, 3, 3) without limits) with the
    trunk groups turned so that each target ``targets`` (k, 3) lies within its limb's reach
    (module docstring); new arrays, bone lengths kept, each joint's frame turned with its
    position. None when every target already lies within reach (to ``STEP_STOP`` x ``tol``), so
    nothing would turn."""
    pose = np.array(positions, dtype=np.float64)
    stop = STEP_STOP * tol
    g = layout.centres.shape[0]
    excess, direction, top = _excess(layout, pose, targets)
    if excess.max() <= stop:
        return None
    frames = np.array(frames, dtype=np.float64)
    for _ in range(STEP_ITERATIONS):
        cost = excess @ excess
        # the top moves by w x (top - centre) under a small turn w of a group that carries it, so
        # d(excess)/dw = (top - centre) x direction
        J = np.zeros((excess.shape[0], 3 * g))
        for k in range(g):
            J[:, 3 * k:3 * k + 3] = np.where(layout.carried[k][:, None],
                                             np.cross(top - pose[layout.centres[k]], direction), 0.0)
        JtJ = J.T @ J
        damping = STEP_DAMPING * max(float(JtJ.diagonal().max()), 1e-300)
        step = np.linalg.solve(JtJ + damping * np.eye(3 * g), -J.T @ excess)
        scale = 1.0
        while scale > 1e-4:
            rotations = _rotations(scale * step)
            trial = _turned(layout, pose, rotations)
            trial_excess, trial_direction, trial_top = _excess(layout, trial, targets)
            if trial_excess @ trial_excess < cost:
                break
            scale *= 0.5
        else:
            break
        pose, excess, direction, top = trial, trial_excess, trial_direction, trial_top
        if frames.shape[0]:
            frames = _turned_frames(layout, frames, rotations)
        if excess.max() <= stop or excess @ excess > (1.0 - STEP_PROGRESS) * cost:
            break
    return pose, frames


def _excess(layout: TrunkLayout, pose: np.ndarray, targets: np.ndarray):
    """(excess (k,), direction (k, 3), tops (k, 3)): how far each target lies beyond its limb's
    reach from the limb top (or inside its shortest reach), the unit vector along which moving the
    top grows that excess (zero for a target within reach), and the tops' positions."""
    top = pose[layout.tops]
    offset = top - targets
    distance = np.linalg.norm(offset, axis=1)
    unit = offset / np.maximum(distance, 1e-300)[:, None]
    far = np.maximum(0.0, distance - layout.reach)
    near = np.maximum(0.0, layout.shortest - distance)
    sign = np.where(far > 0, 1.0, np.where(near > 0, -1.0, 0.0))
    return far + near, unit * sign[:, None], top


def _rotations(turns: np.ndarray) -> np.ndarray:
    """(g, 3, 3) rotation matrices of the rotation vectors ``turns`` (3 g,), three per group."""
    vectors = turns.reshape(-1, 3)
    angles = np.linalg.norm(vectors, axis=1)
    return axis_angle_matrices(vectors / np.maximum(angles, 1e-300)[:, None], angles)


def _turned(layout: TrunkLayout, pose: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """``pose`` (n, 3) with trunk group k's subtree turned by ``rotations[k]`` (g, 3, 3) about its
    centre, parents' groups first (a child group turns about its moved centre); a new array."""
    out = pose.copy()
    for k, c in enumerate(layout.centres.tolist()):
        joints = layout.subtrees[k]
        out[joints] = (out[joints] - out[c]) @ rotations[k].T + out[c]
    return out


def _turned_frames(layout: TrunkLayout, frames: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """Joint frames (n, 3, 3), world axes as columns, turned as ``_turned`` turns their joints: every
    joint a group carries and its centre turn by the group's rotation (the centre's frame holds
    the group's shape), parents' groups first; a new array."""
    out = frames.copy()
    for k, c in enumerate(layout.centres.tolist()):
        joints = np.append(layout.subtrees[k], c)
        out[joints] = rotations[k] @ out[joints]
    return out


def retry_short(attempt, first, layout: TrunkLayout | None, targets: np.ndarray, tol: float):
    """The reach step on a solve's answer: ``first`` the kernel's 6-tuple (positions, frames,
    active, iterations, errors, code) of the first attempt, ``attempt(p, F)`` the same solve from
    start positions ``p`` and frames ``F`` (``(0, 3, 3)`` without limits). Returns ``first`` when
    it reached, when there is no trunk or when every target already lies within reach; else the
    retry's answer if it reached or has the lower largest error, else ``first``; either with the
    iterations of both attempts."""
    if first[5] == REACHED or layout is None:
        return first
    start = turn_trunk(layout, first[0], first[1], targets, tol)
    if start is None:
        return first
    second = attempt(*start)
    better = second[5] == REACHED or (second[5] >= 0 and second[4].max() < first[4].max())
    chosen = second if better else first
    return (*chosen[:3], first[3] + second[3], *chosen[4:])
