"""The stopping rules every iterative kernel shares.

Status codes index ``fabrik.solvers.result.STATUSES``. The no-progress stop (docs/conventions.md)
starts with ``effector_stalled``: the effector moved less than ``tol`` in an iteration and the
error fell by less than ``PROGRESS_FRACTION`` of itself; kernels may confirm it further (FABRIK
then checks that no joint moves by ``tol`` in the next iteration) and may bend a chain out of a
singularity. An unconstrained chain whose target is known to be reachable (and FABRIK on a
skeleton whose targets all lie within their paths' reach) stops only when its error is not on
course to reach ``tol`` either (``still_converging``; a chain's error must also have stopped
falling, ``confirm_stall``): slow is not stuck.
"""

import numpy as np
from numba import njit

REACHED, UNREACHABLE, STALLED, MAX_ITERATIONS = 0, 1, 2, 3
#: The statuses of solves with obstacles (``fabrik.obstacles``): a target inside an obstacle, and a
#: target within reach that the solve stopped short of with a bone against an obstacle.
OBSTRUCTED, BLOCKED = 4, 5

#: Movements below this fraction of the model's size count as none in the no-progress tests,
#: whatever ``tol`` is: below it they are rounding (a tol of 1e-12 on a chain of 1e12-unit bones
#: never saw its effector stop moving, and a damped least squares solve ran for ever).
STALL_FLOOR = 1e-12


@njit(cache=True, inline="always", error_model="numpy")
def stall_tol(tol, scale):
    """The distance the no-progress tests use: ``tol``, or ``STALL_FLOOR`` of the model's ``scale``
    when that is larger."""
    return max(tol, STALL_FLOOR * scale)


@njit(cache=True, inline="always", error_model="numpy")
def stretched_to_rounding(err, dist, total):
    """True when a chain of total length ``total`` is as close as it can come, to rounding
    (``STALL_FLOOR`` of the distance), to a target ``dist`` from its root beyond its reach: far
    out a method's steps swing the chain by rounding without changing the error at all."""
    return dist > total and err - (dist - total) <= STALL_FLOOR * dist


#: Fraction of the error an iteration must remove to count as progress. FABRIK converges
#: linearly, so near a reachable target the effector's steps shrink below ``tol`` a few
#: iterations before the error does; requiring the error to stall too avoids stopping early.
PROGRESS_FRACTION = 0.01


@njit(cache=True, inline="always", error_model="numpy")
def unavoidable_error(dist, total, inner, tol):
    """The closest a chain of total length ``total`` and inner reach ``inner`` (its root-to-
    effector distance lies in [inner, total]) can bring its effector to a target ``dist`` from its
    root: ``dist - total`` beyond the reach, ``inner - dist`` more than ``tol`` inside the inner
    reach, else 0."""
    if dist > total:
        return dist - total
    if dist < inner - tol:
        return inner - dist
    return 0.0


@njit(cache=True, inline="always", error_model="numpy")
def still_converging(err, prev_err, last_drop, older_drop, tol):
    """True when a slow error is still on course to reach ``tol`` (for a reachable target).

    This iteration lowered the error from ``prev_err`` to ``err``; ``last_drop`` and
    ``older_drop`` are how much the two iterations before lowered it (``inf`` where there was
    none: kernels keep the last two drops, and start, or restart after a bend, with ``inf``).
    On course means
      - the falls are not shrinking geometrically: this drop is no smaller than the last, or
        the ratio of successive drops is rising (a two-bone chain swinging round to a target
        near its root gains a little more each iteration, for hundreds of iterations; a chain
        at the edge of its reach converges sublinearly, its ratios creeping up towards 1);
      - or the falls, continued as a geometric series, would bring it to ``tol`` or below.
    After a single iteration (no trend yet) a falling error counts as on course.
    A stuck solve (the straight-chain singularity) lowers the error by nothing, or
    geometrically towards a limit above ``tol``; an error that stopped falling at rounding level
    is not on course. Unreachable targets get no such patience: their error approaches its
    limit sublinearly too, as the chain approaches the fold or the stretch.
    """
    drop = prev_err - err
    if drop <= 1e-12 * prev_err:
        return False
    if last_drop == np.inf:
        return True  # no trend yet after one falling iteration: judged on the next
    ratio = drop / last_drop if last_drop > 0.0 else np.inf
    last_ratio = last_drop / older_drop if older_drop > 0.0 else np.inf
    if ratio >= 1.0 or ratio > last_ratio:
        return True
    return err - drop * ratio / (1.0 - ratio) <= tol


#: Iterations without the largest error falling by ``PROGRESS_FRACTION`` of its best value (and
#: off course, ``still_converging``) after which a solve stops with the best pose it has seen:
#: limits can make FABRIK cycle between poses (3 of 1102 frames of cmu_131_03 otherwise ran to
#: the cap).
NO_PROGRESS_WINDOW = 50

#: A reachable chain target's solve is declared stalled only when its error fell by less than
#: PROBE_GAIN of itself over the last PROBE_ITERATIONS iterations or more (``confirm_stall``).
PROBE_ITERATIONS = 50
PROBE_GAIN = 0.01


@njit(cache=True, inline="always", error_model="numpy")
def confirm_stall(err, prev_err, last_drop, older_drop, tol, it, probe_err, probe_end):
    """Whether a reachable chain target's solve, whose effector has stopped moving, is stuck.

    Not while ``still_converging`` (same first five arguments) says the error is on course; nor
    while the error keeps falling by ``PROBE_GAIN`` of itself every ``PROBE_ITERATIONS``
    iterations: slow progress that does not look geometric (a folded two-bone chain turning round
    to a target near its root loses about 0.4% of its error an iteration, with drops that shrink
    and then grow again) is still progress.

    ``probe_err`` and ``probe_end`` (start with ``inf`` and 0) are the error at, and the iteration
    ending, the current probe. Returns (stalled, probe_err, probe_end): off course, the first call
    starts a probe; during one, not stalled; at its end, stalled when the error ``err`` is above
    ``1 - PROBE_GAIN`` times the error at its start, else a new probe begins at iteration ``it``."""
    if still_converging(err, prev_err, last_drop, older_drop, tol) or it < probe_end:
        return False, probe_err, probe_end
    if err > (1.0 - PROBE_GAIN) * probe_err:
        return True, probe_err, probe_end
    return False, err, it + PROBE_ITERATIONS


@njit(cache=True, inline="always", error_model="numpy")
def effector_stalled(p, last, px, py, pz, tol, err, prev_err):
    """True when joint ``last`` of ``p`` (n, 3) moved less than ``tol`` from (px, py, pz) and the
    error ``err`` fell by less than ``PROGRESS_FRACTION`` of ``prev_err``."""
    mx = p[last, 0] - px
    my = p[last, 1] - py
    mz = p[last, 2] - pz
    return mx * mx + my * my + mz * mz < tol * tol and err > (1.0 - PROGRESS_FRACTION) * prev_err


@njit(cache=True, inline="always", error_model="numpy")
def remember_pose(p, target_idx, before, snapshot, check_pose):
    """The start of a tree kernel's iteration: copy the effectors' positions into ``before``
    (k, 3) for the no-progress test, and the whole pose ``p`` (n, 3) into ``snapshot`` while a
    stall is being confirmed (``check_pose``)."""
    for t in range(target_idx.shape[0]):
        for c in range(3):
            before[t, c] = p[target_idx[t], c]
    if check_pose:
        snapshot[:, :] = p


@njit(cache=True, error_model="numpy")
def max_joint_move(p, q):
    """The largest distance any joint moved between poses ``q`` and ``p``, both (n, 3)."""
    best = 0.0
    for i in range(p.shape[0]):
        x = p[i, 0] - q[i, 0]
        y = p[i, 1] - q[i, 1]
        z = p[i, 2] - q[i, 2]
        d = x * x + y * y + z * z
        if d > best:
            best = d
    return np.sqrt(best)


@njit(cache=True, error_model="numpy")
def max_effector_move(p, before, target_idx):
    """The largest distance any targeted joint of ``p`` (n, 3) moved since ``before`` (k, 3), as
    ``remember_pose`` recorded it: the ``moved`` of ``pose_check``."""
    moved = 0.0
    for t in range(target_idx.shape[0]):
        j = target_idx[t]
        m = 0.0
        for c in range(3):
            m += (p[j, c] - before[t, c]) ** 2
        if m > moved:
            moved = m
    return np.sqrt(moved)


@njit(cache=True, error_model="numpy")
def effectors_stalled(p, before, target_idx, tol, err, prev_err):
    """The first half of the no-progress test: no effector moved by ``tol`` since ``before``
    (k, 3) and the largest error fell by less than ``PROGRESS_FRACTION`` of itself."""
    moved = 0.0
    for t in range(target_idx.shape[0]):
        j = target_idx[t]
        x = p[j, 0] - before[t, 0]
        y = p[j, 1] - before[t, 1]
        z = p[j, 2] - before[t, 2]
        m = x * x + y * y + z * z
        if m > moved:
            moved = m
    return moved < tol * tol and err > (1.0 - PROGRESS_FRACTION) * prev_err


@njit(cache=True, inline="always", error_model="numpy")
def pose_check(p, snapshot, moved, err, prev_err, tol, check_pose):
    """The two-step no-progress test of the tree kernels, after an iteration whose effectors
    moved ``moved`` at most. Returns (stalled, check_pose): stalled when the pose was being
    checked (``check_pose``) and no joint moved by ``tol`` since ``snapshot``; ``check_pose``
    for the next iteration when the effectors moved less than ``tol`` and the error ``err`` fell
    by less than ``PROGRESS_FRACTION`` of ``prev_err``."""
    if check_pose and max_joint_move(p, snapshot) < tol:
        return True, False
    return False, moved < tol and err > (1.0 - PROGRESS_FRACTION) * prev_err
