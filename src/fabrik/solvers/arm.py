"""The methods for arms of revolute and prismatic joints (``fabrik.Arm``), with joint values in and
out: FABRIK (the DHM pilot study's method on 7-joint human arms; on any other arm FABRIK on the
joints, finished by damped Newton steps, with restarts), CCD and damped least squares.

``fabrik.solve(arm, target, initial=q0)``: ``target`` is the tip's position (xyz, model units)
or its pose, ``(xyz, rotation)`` or a (4, 4) transform (the tip frame in the base frame: for a
DH model the last DH frame; the forms of ``fabrik.model.pose``); ``initial`` the start's joint
values (m,) (radians; model units for prismatic joints; default: 0 clipped into the limits);
``root`` is not used (the base is fixed). The answer's ``joint_angles`` are the model's own
coordinates (``fabrik.forward(arm, sol.joint_angles)`` gives ``sol.positions``), always within
the limits, its ``error`` the tip's distance to the target and ``extras["orientation_error"]``
the angle (radians) between the tip frame and the target rotation
(``fabrik.kernels.arm.angle_between``); ``reached`` means both within ``tol`` and
``orientation_tol``.

``fabrik`` solves an arm of the shape of ``fabrik.models.dhm_arm`` (a spherical shoulder: joints
0-2 meeting at one point; an elbow: joint 3, its axis perpendicular to the upper arm; a spherical
wrist: joints 4-6 meeting at one point) by the study's method (``fabrik.kernels.arm_ik``, one
closed-form pass), and any other arm as ``fabrik-revolute`` does: FABRIK's forward and backward
stages on the arm's joints, each joint turning (or sliding) the rest of the arm in closed form
within its limits, then, once FABRIK is within ``NEWTON_NEAR``, damped Newton steps on the joint
values (``finish``; ``fabrik.kernels.arm_methods``), restarted from random values within the
limits when an attempt stalls (``search``). ``nearest`` prefers the answer closest to
``initial`` (``_seek_near``, ``search``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from fabrik._validation import check_positive, check_tol
from fabrik.kernels._cache_guard import announce_compile
from fabrik.kernels.arm import pose_error
from fabrik.kernels.arm_ik import sp1, srs_angles, srs_pack, srs_solve
from fabrik.kernels.arm_methods import _jacobian as jacobian
from fabrik.kernels.arm_methods import _rotation_vector, ccd_arm, dls_arm, fabrik_arm
from fabrik.kernels.frames import axis_angle_matrix
from fabrik.kernels.records import ArmModel, ArmSettings, ArmTask, Stop
from fabrik.kernels.stopping import MAX_ITERATIONS, NO_PROGRESS_WINDOW, REACHED, STALLED, UNREACHABLE
from fabrik.model._frozen import cached
from fabrik.model.arm import forward
from fabrik.solvers.registry import Solver, add
from fabrik.solvers.result import STATUSES, Solution

#: The study's cap (500 iterations a frame).
ARM_MAX_ITER = 500
#: The iteration cap of FABRIK on arms other than the S-R-S human arm, over all its attempts.
ROBOT_MAX_ITER = 20 * ARM_MAX_ITER


def _check_bool(value, name: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


@dataclass(frozen=True)
class ArmOptions:
    """Options of the arm methods: ``orientation_tol`` (radians >= 0), the largest angle between the
    tip frame and an oriented target's rotation that counts as reached; the restarts (``search``):
    at most ``restarts`` of them when an attempt stalls (0: one attempt), none begun after
    ``time_budget`` seconds, their random values drawn from a generator seeded with ``seed`` (the
    same call makes the same attempts); and ``nearest``: prefer the answer closest to ``initial``
    in joint space (``search``; TRAC-IK's "Distance" mode), for tracking and for robots whose
    posture matters. The S-R-S arm's closed-form FABRIK takes no restarts."""

    orientation_tol: float = 1e-3
    restarts: int = 0
    time_budget: float = 0.05
    seed: int = 0
    nearest: bool = False

    def __post_init__(self):
        object.__setattr__(self, "orientation_tol", check_tol(self.orientation_tol, "orientation_tol"))
        for name in ("restarts", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
            object.__setattr__(self, name, int(value))
        object.__setattr__(self, "time_budget", check_positive(self.time_budget, "time_budget"))
        object.__setattr__(self, "nearest", _check_bool(self.nearest, "nearest"))


@dataclass(frozen=True)
class ArmFabrikOptions(ArmOptions):
    """Options of FABRIK on arms: as ``ArmOptions``, restarting by default; ``finish``: damped
    Newton steps on the joint values finish the solve once FABRIK's error is below
    ``NEWTON_NEAR`` (``fabrik.kernels.arm_methods``; False: FABRIK alone)."""

    restarts: int = 200
    finish: bool = True

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "finish", _check_bool(self.finish, "finish"))


@dataclass(frozen=True)
class ArmDampedOptions(ArmOptions):
    """Options of damped least squares on arms: ``orientation_tol`` as ``ArmOptions``;
    ``damping`` (lambda, as a fraction of the arm's reach, > 0) and ``max_angle_step`` (radians)."""

    damping: float = 0.05
    max_angle_step: float = math.pi / 8

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "damping", check_positive(self.damping, "damping"))
        object.__setattr__(self, "max_angle_step", check_positive(self.max_angle_step, "max_angle_step"))


class ArmShape:
    """What the arm FABRIK reads of an ``Arm`` beyond its arrays (cached per arm): the wrist centre
    in tip coordinates, the range of shoulder-wrist distances the elbow's limits allow, the reach."""

    def __init__(self, arm):
        m = arm.n_joints
        groups = arm.spherical_groups()
        if m != 7 or groups != ((0, 1, 2), (4, 5, 6)) or arm.prismatic.any():
            raise ValueError(f"the DHM study's FABRIK takes arms of 7 joints with a spherical shoulder (joints 0-2 at "
                             f"one point), an elbow and a spherical wrist (joints 4-6 at one point), as "
                             f"fabrik.models.dhm_arm(); this arm has {m} joints and spherical groups {groups}")
        axes, origins, tip, _ = arm._kernel
        up = origins[3][:3, 3]
        elbow_axis = origins[3][:3, :3] @ axes[3]
        if abs(float(up @ elbow_axis)) > 1e-9 * float(np.linalg.norm(up)):
            raise ValueError("the DHM study's FABRIK needs the elbow's axis perpendicular to the upper arm (the "
                             "hinge-plane rule)")
        q0 = np.zeros(m)
        positions, frames = forward(arm, q0)
        tip_rot, tip_pos = frames[m], positions[m]
        self.wrist_in_tip = np.ascontiguousarray(tip_rot.T @ (positions[4] - tip_pos))
        # the shoulder-wrist distance depends on the elbow angle alone: its extremes over the range
        # are at the range's ends, the straight arm (l1 + l2) and the folded one (|l1 - l2|)
        lo = max(float(arm.lower[3]), -math.pi)
        hi = min(float(arm.upper[3]), math.pi)
        qs = np.zeros((2, m))
        qs[:, 3] = (lo, hi)
        ends, _ = forward(arm, qs)
        gaps = [float(g) for g in np.linalg.norm(ends[:, 4] - ends[:, 0], axis=1)]
        l1 = float(np.linalg.norm(positions[3] - positions[0]))
        l2 = float(np.linalg.norm(positions[4] - positions[3]))
        straight = float(sp1(axes[3], origins[4][:3, 3], origins[3][:3, :3].T @ up))
        for angle, gap in ((straight, l1 + l2), (straight + math.pi, abs(l1 - l2))):
            turns = math.ceil((lo - angle) / (2.0 * math.pi))
            if angle + 2.0 * math.pi * turns <= hi:
                gaps.append(gap)
        self.gaps = np.array([min(gaps) * (1.0 - 1e-12), max(gaps) * (1.0 + 1e-12)])
        self.reach = float(arm.reach)
        #: the arm as ``srs_solve`` reads it
        self.pack = srs_pack(axes, origins, tip, arm._kernel_lower, arm._kernel_upper, self.wrist_in_tip, self.gaps,
                             self.reach)
        self.rest = arm_shape_rest(arm)


def arm_shape(arm) -> ArmShape:
    return cached(arm, "arm_shape", lambda: ArmShape(arm))


def arm_model(arm) -> ArmModel:
    """The arm as the arm kernels read it (``fabrik.kernels.records.ArmModel``; cached per arm)."""
    return cached(arm, "arm_model", lambda: ArmModel(*arm._kernel, arm._kernel_lower, arm._kernel_upper))


def arm_angles(arm, elbow, wrist, tip_rotation, previous=None) -> np.ndarray:
    """The joint angles (m,) of a 7-joint S-R-S arm (``ArmShape``) that put its elbow at ``elbow``
    (3,), its wrist centre at ``wrist`` (3,) and its tip frame at ``tip_rotation`` (3, 3), all in
    the base frame, nearest ``previous`` (m,) (default the rest angles): how a recorded arm pose
    becomes joint angles. The elbow and wrist must lie at the upper arm's and forearm's lengths
    from the shoulder and the elbow; an elbow outside its range is clipped into it."""
    arm_shape(arm)
    axes, origins, tip, _ = arm._kernel
    start = _start(arm, None if previous is None else np.ascontiguousarray(previous, dtype=np.float64))
    return srs_angles(axes, origins, tip, arm._kernel_lower, arm._kernel_upper,
                      np.ascontiguousarray(elbow, dtype=np.float64), np.ascontiguousarray(wrist, dtype=np.float64),
                      np.ascontiguousarray(tip_rotation, dtype=np.float64), start, float(arm.reach))


def srs_shape(arm) -> ArmShape | None:
    """The arm's ``ArmShape`` when it has the shape of ``fabrik.models.dhm_arm``, else None (cached)."""
    return cached(arm, "srs_shape", lambda: _srs_build(arm)) or None


def _srs_build(arm):
    try:
        return ArmShape(arm)
    except ValueError:
        return False  # cached() rebuilds on None


#: Whether ``solve_fabrik_arm`` has looked for ``srs_solve``'s compiled code (``announce_compile``).
_srs_announced = False


def solve_fabrik_arm(arm, target, rotation, initial, tol, max_iter, options) -> Solution:
    """FABRIK on an arm: the DHM study's method on a 7-joint S-R-S arm (module docstring), FABRIK on
    the joints finished by damped Newton steps, with restarts, on any other
    (``solve_revolute_arm``); ``initial`` (m,) checked values."""
    global _srs_announced
    shape = arm.__dict__.get("_fabrik_srs_shape")  # srs_shape's cache, read without a call: the hot path
    if shape is None:
        shape = srs_shape(arm) or False
    if shape is False:
        return solve_revolute_arm(arm, target, rotation, initial, tol, max_iter, options, "fabrik")
    if not _srs_announced:
        announce_compile(srs_solve)
        _srs_announced = True
    oriented = rotation is not None
    q, positions, frames = np.empty(7), np.empty((8, 3)), np.empty((8, 3, 3))
    task = ArmTask(target, rotation if oriented else _IDENTITY, oriented, shape.rest if initial is None else initial)
    it, err, oerr, code = srs_solve(shape.pack, task, Stop(tol, options.orientation_tol, max_iter), q, positions,
                                    frames)
    # the Solution built as plain_solution builds one (the kernel returns Python int and float)
    extras = MappingProxyType({"frames": frames, "orientation_error": oerr} if oriented else {"frames": frames})
    return _new_tuple(Solution, (positions, it, err, STATUSES[code], "fabrik", None, extras, q))


#: Iterations without progress that end an attempt while restarts remain (the last attempt gets
#: the full ``NO_PROGRESS_WINDOW``): a stalled attempt on a robot arm is caught at a limit or at a
#: pose it cannot leave, and a fresh start is cheaper than waiting. An attempt that keeps making
#: progress is never cut short.
RESTART_WINDOW = 20
#: The orientation markers' distance from the tip, as a fraction of the reach.
MARKER = 0.15
#: FABRIK's error (position over the reach plus orientation in radians) below which damped Newton
#: steps finish an attempt (``fabrik.kernels.arm_methods.newton_finish``).
NEWTON_NEAR = 0.3
#: With ``nearest``: the reached answers the search gathers (from ``initial`` and random starts)
#: before it answers with the one closest to ``initial``, unless Newton steps from ``initial``
#: reach the target by themselves.
NEAREST_CANDIDATES = 8


def solve_revolute_arm(arm, target, rotation, initial, tol, max_iter, options, method="fabrik-revolute",
                       col=None, usable=None) -> Solution:
    """FABRIK on any arm (``fabrik.kernels.arm_methods``), finished by Newton steps, restarted while
    it stalls; with ``nearest``, Newton steps from ``initial`` first (``_seek_near``). ``col``:
    obstacles and self-collision for the kernel (``fabrik.solvers.extended.solve_arm``) and
    ``usable(q)`` whether a start keeps clear of them (``search``), or None."""
    announce_compile(fabrik_arm)
    length = arm.reach or 1.0  # an arm whose joints and tip all sit at one point turns the tip frame only
    near = NEWTON_NEAR if options.finish else 0.0

    if col is None:
        def run(model, task, stop, window, first):
            return fabrik_arm(model, task, stop, ArmSettings(length, window, MARKER * length, near))
    else:
        def run(model, task, stop, window, first):
            return fabrik_arm(model, task, stop, ArmSettings(length, window, MARKER * length, near), col)

    local = None
    if options.nearest and col is None:
        def local(q0):
            return _seek_near(arm, target, rotation, q0, tol, options.orientation_tol, length)

    return _restarted(arm, method, target, rotation, initial, tol, max_iter, options, run, local, usable)


#: With ``nearest``: the pieces of the path of poses ``_seek_near`` follows from the start's pose
#: to the target when Newton steps from the start do not reach it at once.
NEAREST_PIECES = 8


def _seek_near(arm, target, rotation, q0, tol, otol, length):
    """The answer on the start's own branch, or None: damped Newton steps from ``q0`` (each the least
    joint motion that serves the target to first order, none longer than ``NEAREST_MAX_STEP``:
    ``fabrik.kernels.arm_methods.newton_finish``); when they do not reach the target, the same
    steps with the limits' barrier (a joint nearing a limit weighed down, so that a redundant arm
    turns the others); then these along a path of poses from q0's tip pose to the target in
    ``NEAREST_PIECES`` equal pieces (the position along the line, the rotation along its
    geodesic), each from the last piece's answer: a continuation, which follows the start's
    branch through a larger change of pose. A kernel result tuple (as ``fabrik_arm``'s, with
    iterations 0) reached at ``tol``, ``otol``, or None."""
    model = arm_model(arm)
    oriented = rotation is not None
    goal = rotation if oriented else _IDENTITY
    stop = Stop(tol, otol, 0)  # Newton steps only: no FABRIK iteration

    def newton(p, r, q, barrier=False):
        return fabrik_arm(model, ArmTask(p, r, oriented, q), stop,
                          ArmSettings(length, NO_PROGRESS_WINDOW, MARKER * length, math.inf, barrier))

    for barrier in (False, True):
        result = newton(target, goal, q0, barrier)
        if int(result[6]) == REACHED:
            return _nearest_branch(arm, result, q0, newton, target, goal, oriented)
    positions, frames = forward(arm, q0)
    p0, r0 = positions[-1], frames[-1]
    turn = rotation_vector(r0, goal) if oriented else np.zeros(3)
    angle = float(np.linalg.norm(turn))
    axis = turn / angle if angle > 0.0 else np.array([0.0, 0.0, 1.0])
    q, step = q0, np.empty((3, 3))
    for i in range(1, NEAREST_PIECES + 1):
        t = i / NEAREST_PIECES
        axis_angle_matrix(step, axis[0], axis[1], axis[2], t * angle)
        result = newton(p0 + t * (target - p0), step @ r0 if oriented else goal, q, True)
        if int(result[6]) != REACHED:
            return None
        q = result[0]
    return result


#: With ``nearest``: below this smallest singular value of the (normalised) Jacobian at the answer,
#: branches of the inverse kinematics lie close together, and ``_nearest_branch`` looks for a nearer one.
NEAR_SINGULAR = 0.05
#: ... from this many starts about ``initial``, ``NEAR_SINGULAR`` radians from it.
BRANCH_PROBES = 6


def _nearest_branch(arm, result, q0, newton, target, goal, oriented):
    """``result`` (reached by Newton steps from q0), or a nearer answer: near a singular pose two
    branches of the inverse kinematics come close, and Newton's steps may land on the one farther
    from q0; Newton steps from ``BRANCH_PROBES`` starts about q0 then find the others, and the
    nearest reached answer is kept."""
    positions, frames = result[1], result[2]
    J = np.empty((6 if oriented else 3, arm.n_joints))
    axes, _, _, slides = arm._kernel
    jacobian(axes, slides, positions, frames, oriented, 1.0, arm.reach or 1.0, J)
    if np.linalg.svd(J, compute_uv=False)[-1] >= NEAR_SINGULAR:
        return result
    unit = _distance_units(arm)
    best, best_distance = result, joint_distance(result[0], q0, unit)
    rng = np.random.default_rng(0)
    for _ in range(BRANCH_PROBES):
        probe = arm.clip(q0 + NEAR_SINGULAR * unit * rng.choice((-1.0, 1.0), arm.n_joints))
        other = newton(target, goal, probe)
        if int(other[6]) == REACHED:
            d = joint_distance(other[0], q0, unit)
            if d < best_distance:
                best, best_distance = other, d
    return best


def solve_ccd_arm(arm, target, rotation, initial, tol, max_iter, options) -> Solution:
    """CCD on any revolute arm (``fabrik.kernels.arm_methods``)."""
    reach = float(arm.reach)
    return _restarted(arm, "ccd", target, rotation, initial, tol, max_iter, options,
                      lambda model, task, stop, window, first: ccd_arm(model, task, stop, ArmSettings(reach, window)))


def solve_dls_arm(arm, target, rotation, initial, tol, max_iter, options) -> Solution:
    """Damped least squares on any revolute arm (``fabrik.kernels.arm_methods``)."""
    reach = float(arm.reach)
    damping = options.damping * reach

    def run(model, task, stop, window, first):
        return dls_arm(model, task, stop, ArmSettings(reach, window, damping=damping,
                                                      max_angle_step=options.max_angle_step))

    return _restarted(arm, "jacobian-dls", target, rotation, initial, tol, max_iter, options, run)


def _restarted(arm, method, target, rotation, initial, tol, max_iter, options, kernel, local=None,
               usable=None) -> Solution:
    """An arm kernel run by ``search``: ``kernel(model, task, stop, window, first)`` runs one
    attempt (``ArmModel``, ``ArmTask`` from the attempt's start, ``Stop`` with the attempt's
    iteration cap; its settings bound but for the no-progress ``window``; ``first``: the attempt
    from ``initial``). ``local(q0)``: with ``nearest``, an answer on the start's own branch (a
    kernel result, reached) or None, tried first."""
    model = arm_model(arm)
    oriented = rotation is not None
    goal_R = rotation if oriented else _IDENTITY
    otol = options.orientation_tol

    def attempt(q0, cap, window, first):
        return kernel(model, ArmTask(target, goal_R, oriented, q0), Stop(tol, otol, cap), window, first)

    def evaluate(q):
        """(positions, frames, error, orientation error, reached) of joint values q."""
        positions, frames = forward(arm, q)
        err, oerr = pose_error(positions, frames, target, goal_R, oriented)
        return positions, frames, err, oerr, err <= tol and oerr <= options.orientation_tol

    start = _start(arm, initial)
    found = None if local is None else local(start)
    if found is not None:
        result, iterations, attempts = found, 0, 1
    else:
        result, iterations, attempts = search(arm, attempt, start, max_iter, options, evaluate, usable)
        attempts += local is not None
    sol = arm_solution(method, result[0], result[1], result[2], iterations, result[4], result[5], result[6], oriented)
    extras = {**sol.extras, "attempts": attempts}
    if method != "ccd" and method != "jacobian-dls":
        extras["newton_steps"] = int(result[7])
    return sol._replace(extras=MappingProxyType(extras))


def search(arm, attempt, start, max_iter, options, evaluate=None, usable=None):
    """Attempts of an arm kernel from ``start``, then from random values within the limits, until
    one reaches the target, the target is out of reach, ``options.restarts`` restarts are spent,
    ``options.time_budget`` seconds have passed (no attempt begins after it) or ``max_iter``
    iterations in all. ``attempt(q0, cap, window, first)`` runs one (a kernel's result tuple, as
    ``ccd_arm``, with the Newton steps it kept last). Returns (the best attempt's result with its
    status for the whole search, iterations in all, attempts).

    With ``options.nearest`` a reached attempt does not end the search unless it is the first and
    ran no iteration (``start`` itself is an answer); otherwise the search gathers up to
    ``NEAREST_CANDIDATES`` reached answers within the same restarts and time budget and answers
    with the one closest to ``start`` (``joint_distance``), each revolute joint taken to the turn
    of its angle (a multiple of 2 pi away: the same pose) nearest its start within its limits
    when ``evaluate(q)`` (positions, frames, errors and whether reached) finds it still reached
    (the turned angles' rounding can matter at a tolerance of 0). (FABRIK first looks for the
    answer on the start's own branch: ``_seek_near``.)

    ``usable(q)`` (obstacles, self-collision): whether a start keeps the arm clear; a start that
    does not is replaced by random values that do (up to ``USABLE_DRAWS`` draws; ValueError when
    none of them does)."""
    deadline = time.perf_counter() + options.time_budget
    best = None
    best_score = math.inf
    total = 0
    attempts = 0
    rng = None
    reach = float(arm.reach)
    nearest = options.nearest
    candidates = []
    q_start = start
    if usable is not None and not usable(start):
        start = _usable_start(arm, np.random.default_rng(options.seed), usable)
    while True:
        more = attempts < options.restarts
        result = attempt(start, max_iter - total, RESTART_WINDOW if more else NO_PROGRESS_WINDOW, attempts == 0)
        attempts += 1
        total += int(result[3])
        code = int(result[6])
        score = float(result[4]) + reach * float(result[5])
        if code == REACHED or score < best_score:
            best, best_score = result, score
        if code == REACHED and nearest:
            if attempts == 1 and int(result[3]) == 0:
                break  # the start itself
            candidates.append(result)
            code = REACHED if len(candidates) >= NEAREST_CANDIDATES else STALLED
        if code in (REACHED, UNREACHABLE) or not more or total >= max_iter or time.perf_counter() >= deadline:
            break
        if rng is None:
            rng = np.random.default_rng(options.seed)
            low, span = arm.random_ranges()
        start = low + span * rng.random(low.shape[0])  # as arm.random_angles(rng), without its checks
        if usable is not None and not usable(start):
            start = _usable_start(arm, rng, usable)
    if candidates:
        unit = _distance_units(arm)
        turned = [_nearest_turns(arm, r[0], q_start) for r in candidates]
        k = min(range(len(candidates)), key=lambda i: joint_distance(turned[i], q_start, unit))
        best = candidates[k]
        if evaluate is not None and not np.array_equal(turned[k], best[0]):
            positions, frames, err, oerr, reached = evaluate(turned[k])
            if reached:
                best = (turned[k], positions, frames, best[3], err, oerr) + tuple(best[6:])
    elif int(best[6]) != REACHED and int(best[6]) != UNREACHABLE:
        best = best[:6] + ((MAX_ITERATIONS if total >= max_iter else STALLED),) + best[7:]
    return best, total, attempts


#: Random starts ``search`` draws at most to find one that keeps the arm clear of obstacles.
USABLE_DRAWS = 1000


def _usable_start(arm, rng, usable) -> np.ndarray:
    low, span = arm.random_ranges()
    for _ in range(USABLE_DRAWS):
        q = low + span * rng.random(low.shape[0])
        if usable(q):
            return q
    raise ValueError(f"no pose of the arm among {USABLE_DRAWS} random ones keeps clear of the obstacles (or of "
                     "itself); check that the base lies outside every obstacle")


def _nearest_turns(arm, q, q_ref) -> np.ndarray:
    """q with each revolute joint's angle moved by whole turns (2 pi: the same pose) to the value
    nearest q_ref's that its limits allow."""
    turns = np.where(arm.prismatic, 0.0, np.round((q - q_ref) / (2.0 * math.pi)))
    moved = q - 2.0 * math.pi * turns
    return np.ascontiguousarray(np.where((moved >= arm.lower) & (moved <= arm.upper), moved, q))


def _distance_units(arm) -> np.ndarray:
    return cached(arm, "distance_units", lambda: np.where(arm.prismatic, float(arm.reach) or 1.0, 1.0))


def joint_distance(q, q_ref, unit) -> float:
    """The distance in joint space ``nearest`` minimises: ``sqrt(sum(((q - q_ref) / unit)^2))``,
    ``unit`` 1 for a revolute joint (radians) and the arm's reach for a prismatic one (a slide of
    the whole reach counts as a radian)."""
    d = (q - q_ref) / unit
    return float(math.sqrt(float(d @ d)))


_IDENTITY = np.eye(3)


def rotation_vector(frame, goal) -> np.ndarray:
    """The rotation vector (3,) (axis times angle, radians, in the base frame) turning ``frame``
    (3, 3) onto ``goal`` (3, 3)."""
    return np.array(_rotation_vector(np.ascontiguousarray(frame), np.ascontiguousarray(goal)))


_new_tuple = tuple.__new__


def arm_solution(method, q, positions, frames, iterations, error, orientation_error, code, oriented) -> Solution:
    """The ``Solution`` of an arm solve: the angles q (m,) and their ``fabrik.forward`` pose."""
    extras = {"frames": frames}
    if oriented:
        extras["orientation_error"] = float(orientation_error)
    return Solution(positions, int(iterations), float(error), STATUSES[code], method, None,
                    MappingProxyType(extras), q)


def _start(arm, initial):
    return arm_shape_rest(arm) if initial is None else initial


def arm_shape_rest(arm) -> np.ndarray:
    """The rest angles (0) clipped into the limits: where a solve starts without ``initial``."""
    return cached(arm, "rest_angles", lambda: np.ascontiguousarray(np.clip(np.zeros(arm.n_joints), arm.lower,
                                                                           arm.upper)))


# the kernel depends on the arm (srs_solve or fabrik_arm): each path announces its own first compile
add("fabrik", "arm", Solver(solve_fabrik_arm, ArmFabrikOptions(), ROBOT_MAX_ITER, ()))
add("fabrik-revolute", "arm", Solver(solve_revolute_arm, ArmFabrikOptions(), ROBOT_MAX_ITER, (fabrik_arm,)),
    summary="FABRIK on the joints of any arm (revolute and prismatic joints, limits, pose targets), finished by "
            "damped Newton steps, with restarts")
add("ccd", "arm", Solver(solve_ccd_arm, ArmOptions(), ARM_MAX_ITER, (ccd_arm,)))
add("jacobian-dls", "arm", Solver(solve_dls_arm, ArmDampedOptions(), 10 * ARM_MAX_ITER, (dls_arm,)))

__all__ = ["solve_fabrik_arm", "solve_revolute_arm", "solve_ccd_arm", "solve_dls_arm", "search", "arm_angles",
           "arm_shape", "srs_shape", "arm_solution", "ArmOptions", "ArmFabrikOptions", "ArmDampedOptions",
           "ARM_MAX_ITER", "ROBOT_MAX_ITER"]
