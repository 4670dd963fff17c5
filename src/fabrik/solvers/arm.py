"""FABRIK on revolute-joint arms (``fabrik.Arm``): the method of the DHM pilot study (Lamb et al.)
for 7-joint human arms, with joint angles in and out.

``fabrik.solve(arm, target, initial=q0)``: ``target`` is the tip's position (xyz, model units)
or its pose ``(xyz, rotation)`` (the tip frame in the base frame: for a DH model the last DH
frame; a scipy Rotation, an (x, y, z, w) quaternion or a 3x3 matrix); ``initial`` the start's
joint angles (m,) in radians (default: the rest angles, 0, clipped into the limits); ``root`` is
not used (the base is fixed). The answer's ``joint_angles`` are the model's own coordinates
(``fabrik.forward(arm, sol.joint_angles)`` gives ``sol.positions``), its ``error`` the tip's
distance to the target and ``extras["orientation_error"]`` the angle (radians) between the tip
frame and the target rotation; ``reached`` means both within ``tol`` and ``orientation_tol``.

The arm must have a spherical shoulder (joints 0-2 meeting at one point), an elbow (joint 3, its
axis perpendicular to the upper arm) and a spherical wrist (joints 4-6 meeting at one point): the
shape of ``fabrik.models.dhm_arm``. The steps are in ``fabrik.kernels.arm_ik``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from fabrik._validation import check_positive, check_tol
from fabrik.kernels.arm_ik import sp1, srs_angles, srs_solve
from fabrik.kernels.arm_methods import ccd_arm, dls_arm
from fabrik.model._frozen import cached
from fabrik.model.arm import forward
from fabrik.solvers.registry import Solver, add
from fabrik.solvers.result import STATUSES, Solution

#: The study's cap (500 iterations a frame).
ARM_MAX_ITER = 500


@dataclass(frozen=True)
class ArmOptions:
    """Options of the arm methods: ``orientation_tol`` (radians >= 0), the largest angle between the
    tip frame and an oriented target's rotation that counts as reached."""

    orientation_tol: float = 1e-3

    def __post_init__(self):
        object.__setattr__(self, "orientation_tol", check_tol(self.orientation_tol, "orientation_tol"))


class ArmShape:
    """What the arm FABRIK reads of an ``Arm`` beyond its arrays (cached per arm): the wrist centre
    in tip coordinates, the range of shoulder-wrist distances the elbow's limits allow, the reach."""

    def __init__(self, arm):
        m = arm.n_joints
        groups = arm.spherical_groups()
        if m != 7 or groups != ((0, 1, 2), (4, 5, 6)):
            raise ValueError(f"method 'fabrik' solves arms of 7 joints with a spherical shoulder (joints 0-2 at one "
                             f"point), an elbow and a spherical wrist (joints 4-6 at one point), as "
                             f"fabrik.models.dhm_arm(); this arm has {m} joints and spherical groups {groups}; use "
                             f"method 'jacobian-dls' or 'ccd'")
        axes, origins, tip = arm._kernel
        up = origins[3][:3, 3]
        elbow_axis = origins[3][:3, :3] @ axes[3]
        if abs(float(up @ elbow_axis)) > 1e-9 * float(np.linalg.norm(up)):
            raise ValueError("method 'fabrik' needs the elbow's axis perpendicular to the upper arm (the hinge-plane "
                             "rule); use method 'jacobian-dls' or 'ccd'")
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


def arm_shape(arm) -> ArmShape:
    return cached(arm, "arm_shape", lambda: ArmShape(arm))


def arm_angles(arm, elbow, wrist, tip_rotation, previous=None) -> np.ndarray:
    """The joint angles (m,) of a 7-joint S-R-S arm (``ArmShape``) that put its elbow at ``elbow``
    (3,), its wrist centre at ``wrist`` (3,) and its tip frame at ``tip_rotation`` (3, 3), all in
    the base frame, nearest ``previous`` (m,) (default the rest angles): how a recorded arm pose
    becomes joint angles. The elbow and wrist must lie at the upper arm's and forearm's lengths
    from the shoulder and the elbow; an elbow outside its range is clipped into it."""
    arm_shape(arm)
    axes, origins, tip = arm._kernel
    start = _start(arm, None if previous is None else np.ascontiguousarray(previous, dtype=np.float64))
    return srs_angles(axes, origins, tip, arm._kernel_lower, arm._kernel_upper,
                      np.ascontiguousarray(elbow, dtype=np.float64), np.ascontiguousarray(wrist, dtype=np.float64),
                      np.ascontiguousarray(tip_rotation, dtype=np.float64), start, float(arm.reach))


def solve_fabrik_arm(arm, target, rotation, initial, tol, max_iter, options) -> Solution:
    """FABRIK on a 7-joint human-like arm (module docstring); ``initial`` (m,) checked angles."""
    shape = arm_shape(arm)
    axes, origins, tip = arm._kernel
    oriented = rotation is not None
    q, positions, frames, it, err, oerr, code = srs_solve(
        axes, origins, tip, arm._kernel_lower, arm._kernel_upper, shape.wrist_in_tip, shape.gaps, target,
        rotation if oriented else _IDENTITY, oriented, _start(arm, initial), tol, options.orientation_tol, max_iter,
        shape.reach)
    return arm_solution("fabrik", q, positions, frames, it, err, oerr, code, oriented)


_IDENTITY = np.eye(3)


def arm_solution(method, q, positions, frames, iterations, error, orientation_error, code, oriented) -> Solution:
    """The ``Solution`` of an arm solve: the angles q (m,) and their ``fabrik.forward`` pose."""
    extras = {"frames": frames}
    if oriented:
        extras["orientation_error"] = float(orientation_error)
    return Solution(positions, int(iterations), float(error), STATUSES[code], method, None,
                    MappingProxyType(extras), q)


add("fabrik", "arm", Solver(solve_fabrik_arm, ArmOptions(), ARM_MAX_ITER, (srs_solve,)))



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


def _start(arm, initial):
    return arm_shape_rest(arm) if initial is None else initial


def arm_shape_rest(arm) -> np.ndarray:
    """The rest angles (0) clipped into the limits: where a solve starts without ``initial``."""
    return cached(arm, "rest_angles", lambda: np.ascontiguousarray(np.clip(np.zeros(arm.n_joints), arm.lower,
                                                                           arm.upper)))


def solve_ccd_arm(arm, target, rotation, initial, tol, max_iter, options) -> Solution:
    """CCD on any revolute arm (``fabrik.kernels.arm_methods``)."""
    axes, origins, tip = arm._kernel
    oriented = rotation is not None
    result = ccd_arm(axes, origins, tip, arm._kernel_lower, arm._kernel_upper, target,
                     rotation if oriented else _IDENTITY, oriented, _start(arm, initial), tol, options.orientation_tol,
                     max_iter, float(arm.reach))
    return arm_solution("ccd", *result, oriented)


def solve_dls_arm(arm, target, rotation, initial, tol, max_iter, options) -> Solution:
    """Damped least squares on any revolute arm (``fabrik.kernels.arm_methods``)."""
    axes, origins, tip = arm._kernel
    oriented = rotation is not None
    reach = float(arm.reach)
    result = dls_arm(axes, origins, tip, arm._kernel_lower, arm._kernel_upper, target,
                     rotation if oriented else _IDENTITY, oriented, _start(arm, initial), tol, options.orientation_tol,
                     max_iter, reach, options.damping * reach, options.max_angle_step)
    return arm_solution("jacobian-dls", *result, oriented)


add("ccd", "arm", Solver(solve_ccd_arm, ArmOptions(), ARM_MAX_ITER, (ccd_arm,)))
add("jacobian-dls", "arm", Solver(solve_dls_arm, ArmDampedOptions(), 10 * ARM_MAX_ITER, (dls_arm,)))

__all__ = ["solve_fabrik_arm", "arm_angles", "solve_ccd_arm", "solve_dls_arm", "ArmOptions", "ArmDampedOptions", "arm_shape",
           "arm_solution", "ARM_MAX_ITER"]
