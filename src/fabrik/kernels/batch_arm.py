"""Many arm solves at once (``fabrik.solve_batch`` on a ``fabrik.Arm``), compiled and
multi-threaded: ``prange`` over targets, each calling the kernel ``fabrik.solve`` calls.

* ``batch_srs``: the DHM study's closed-form FABRIK on a 7-joint S-R-S arm
  (``fabrik.kernels.arm_ik.srs_solve``), one call per target.
* ``batch_search``: FABRIK on any other arm (``fabrik_arm``, finished by Newton steps), CCD
  (``ccd_arm``) or damped least squares (``dls_arm``), with the restarts of
  ``fabrik.solvers.arm.search`` written out: attempts from the start, then from ``starts[0]``,
  ``starts[1]``, ... (the values ``search`` draws from its seeded generator, the same for every
  target, drawn once by the caller) until one reaches the target, the target is out of reach,
  the restarts or the iterations run out. ``search`` also stops beginning attempts after its time
  budget; a compiled batch has no clock, so here every restart runs (``fabrik.solvers.batch_arm``
  says so).

Outputs one row per target: joint values (N, m), ``forward_arm`` positions (N, m + 1, 3) and
frames (N, m + 1, 3, 3), iterations, position error, orientation error (radians; 0 for a
position target) and status (``fabrik.solvers.result.STATUSES``).
"""

import numpy as np
from numba import njit, prange

from fabrik.kernels.arm import rotation_defect, transform_defect
from fabrik.kernels.arm_ik import srs_solve
from fabrik.kernels.arm_methods import CCD, DLS, FABRIK, ccd_arm, dls_arm, fabrik_arm
from fabrik.kernels.stopping import MAX_ITERATIONS, REACHED, STALLED, UNREACHABLE


@njit(cache=True, error_model="numpy", parallel=True)
def batch_srs(pack, targets, rotations, oriented, starts, tol, otol, max_iter, out_q, out_p, out_frames, out_it,
              out_err, out_oerr, out_code):
    """``srs_solve`` for every target (N, 3); rotations (1 or N, 3, 3) (read when ``oriented``),
    starts (1 or N, 7)."""
    count = targets.shape[0]
    rs = 0 if rotations.shape[0] == 1 else 1
    ss = 0 if starts.shape[0] == 1 else 1
    for i in prange(count):
        it, err, oerr, code = srs_solve(pack, targets[i], rotations[i * rs], oriented, starts[i * ss], tol, otol,
                                        max_iter, out_q[i], out_p[i], out_frames[i])
        out_it[i] = it
        out_err[i] = err
        out_oerr[i] = oerr
        out_code[i] = code


@njit(cache=True, error_model="numpy")
def _attempt(method, axes, origins, tip, slides, lower, upper, target, rotation, oriented, q0, tol, otol, cap, scale,
             window, length, marker, near, damping, max_angle_step):
    """One attempt of ``method`` as ``fabrik.solvers.arm`` calls it: ``fabrik_arm`` with its scale
    ``length``, markers at ``marker`` and Newton finish below ``near``; ``ccd_arm``; or ``dls_arm``
    with its damping (model units) and largest step."""
    if method == FABRIK:
        return fabrik_arm(axes, origins, tip, slides, lower, upper, target, rotation, oriented, q0, tol, otol, cap,
                          length, marker, window, near)
    if method == CCD:
        return ccd_arm(axes, origins, tip, slides, lower, upper, target, rotation, oriented, q0, tol, otol, cap,
                       scale, window)
    return dls_arm(axes, origins, tip, slides, lower, upper, target, rotation, oriented, q0, tol, otol, cap, scale,
                   damping, max_angle_step, window)


@njit(cache=True, error_model="numpy", parallel=True)
def batch_search(method, axes, origins, tip, slides, lower, upper, targets, rotations, oriented, starts, restarts,
                 tol, otol, max_iter, scale, windows, length, marker, near, damping, max_angle_step, out_q, out_p, out_frames,
                 out_it, out_err, out_oerr, out_code):
    """``fabrik.solvers.arm.search`` for every target (N, 3) without its time budget (module
    docstring): ``method`` one of ``FABRIK``, ``CCD``, ``DLS``; rotations (1 or N, 3, 3); starts
    (1 or N, m) the first attempt's values; restarts (R, m) the later attempts'; ``scale`` the
    arm's reach (the score's weight of a radian, CCD's and DLS's scale); windows (the restart
    window, the last attempt's window); ``length``, ``marker``, ``near``: FABRIK's scale (the reach,
    or 1 for an arm of no length), its markers' distance from the tip and its Newton threshold;
    ``damping``, ``max_angle_step``: DLS's."""
    count = targets.shape[0]
    rs = 0 if rotations.shape[0] == 1 else 1
    ss = 0 if starts.shape[0] == 1 else 1
    n_restarts = restarts.shape[0]
    for i in prange(count):
        start = starts[i * ss]
        total = 0
        attempts = 0
        best_score = np.inf
        best_code = -1
        while True:
            more = attempts < n_restarts
            q, positions, frames, it, err, oerr, code, _ = _attempt(
                method, axes, origins, tip, slides, lower, upper, targets[i], rotations[i * rs], oriented, start, tol,
                otol, max_iter - total, scale, windows[0] if more else windows[1], length, marker, near, damping,
                max_angle_step)
            attempts += 1
            total += it
            score = err + scale * oerr
            if code == REACHED or score < best_score:
                best_score = score
                best_code = code
                out_q[i] = q
                out_p[i] = positions
                out_frames[i] = frames
                out_err[i] = err
                out_oerr[i] = oerr
            if code == REACHED or code == UNREACHABLE or not more or total >= max_iter:
                break
            start = restarts[attempts - 1]
        if best_code != REACHED and best_code != UNREACHABLE:
            best_code = MAX_ITERATIONS if total >= max_iter else STALLED
        out_it[i] = total
        out_code[i] = best_code


@njit(cache=True)
def rotation_defects(mats):
    """``fabrik.kernels.arm.rotation_defect`` of every (3, 3) matrix of ``mats`` (N, 3, 3): (N,)."""
    out = np.empty(mats.shape[0])
    for i in range(mats.shape[0]):
        out[i] = rotation_defect(mats[i])
    return out


@njit(cache=True)
def transform_defects(transforms):
    """``fabrik.kernels.arm.transform_defect`` of every (4, 4) matrix of ``transforms`` (N, 4, 4): (N,)."""
    out = np.empty(transforms.shape[0])
    for i in range(transforms.shape[0]):
        out[i] = transform_defect(transforms[i])
    return out
