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

Both take the targets as an ``ArmTasks`` and the stopping rule as a ``Stop``, and write one row
per target into an ``ArmAnswers`` (``fabrik.kernels.records``): joint values (N, m),
``forward_arm`` positions (N, m + 1, 3) and frames (N, m + 1, 3, 3), iterations, position error,
orientation error (radians; 0 for a position target) and status
(``fabrik.solvers.result.STATUSES``).
"""

import numpy as np
from numba import njit, prange

from fabrik.kernels.arm import rotation_defect, transform_defect
from fabrik.kernels.arm_ik import START_SIZE, srs_finish, srs_start
from fabrik.kernels.arm_methods import CCD, DLS, FABRIK, ccd_arm, dls_arm, fabrik_arm
from fabrik.kernels.records import ArmSettings, ArmTask, Stop
from fabrik.kernels.stopping import MAX_ITERATIONS, REACHED, STALLED, UNREACHABLE


# Numba drops the writes a parallel loop makes to arrays it takes from a tuple argument (numba
# issue 5872): each batch loop hands its target to a function of its own, which writes the answer.


@njit(cache=True, error_model="numpy")
def batch_srs(pack, tasks, stop, out):
    """``srs_solve`` on the arm ``pack`` for every target of ``tasks`` (``ArmTasks``: targets (N,
    3), rotations (1 or N, 3, 3) read when ``oriented``, starts (1 or N, 7)), stopping by ``stop``
    (``Stop``), into ``out`` (``ArmAnswers``). A start shared by every target is read once
    (``srs_start``: the same values each solve would compute, so the answers are ``srs_solve``'s)."""
    shared = np.empty(START_SIZE)
    if tasks.starts.shape[0] == 1:
        srs_start(pack, tasks.starts[0], tasks.oriented, np.empty((8, 3)), np.empty((8, 3, 3)), shared)
    _srs_rows(pack, tasks, stop, out, shared)


@njit(cache=True, error_model="numpy", parallel=True)
def _srs_rows(pack, tasks, stop, out, shared):
    """``batch_srs``'s loop over the targets; ``shared`` its start when ``tasks.starts`` has one row."""
    count = tasks.targets.shape[0]
    for i in prange(count):
        _srs_target(pack, tasks, stop, out, i, shared)


@njit(cache=True, error_model="numpy")
def _srs_target(pack, tasks, stop, out, i, shared):
    """``batch_srs`` for target i: row i of ``out``."""
    rotations, starts = tasks.rotations, tasks.starts
    task = ArmTask(tasks.targets[i], rotations[i] if rotations.shape[0] > 1 else rotations[0], tasks.oriented,
                   starts[i] if starts.shape[0] > 1 else starts[0])
    q, positions, frames = out.q[i], out.positions[i], out.frames[i]
    start = shared
    if starts.shape[0] > 1:
        start = np.empty(START_SIZE)
        srs_start(pack, task.start, task.oriented, positions, frames, start)
    it, err, oerr, code = srs_finish(pack, start, task, stop, q, positions, frames)
    out.iterations[i] = it
    out.error[i] = err
    out.orientation_error[i] = oerr
    out.status[i] = code


@njit(cache=True, error_model="numpy")
def _attempt(method, model, task, stop, settings):
    """One attempt of ``method`` as ``fabrik.solvers.arm`` calls it: ``fabrik_arm``, ``ccd_arm`` or
    ``dls_arm``, each reading its own fields of ``settings``."""
    if method == FABRIK:
        return fabrik_arm(model, task, stop, settings)
    if method == CCD:
        return ccd_arm(model, task, stop, settings)
    return dls_arm(model, task, stop, settings)


@njit(cache=True, error_model="numpy", parallel=True)
def batch_search(method, model, tasks, stop, settings, search, out):
    """``fabrik.solvers.arm.search`` for every target of ``tasks`` without its time budget (module
    docstring): ``method`` one of ``FABRIK``, ``CCD``, ``DLS``, on the arm ``model``
    (``ArmModel``); ``tasks`` (``ArmTasks``: targets (N, 3), rotations (1 or N, 3, 3), starts (1 or
    N, m) the first attempt's values); ``stop`` (``Stop``: its ``max_iter`` the iterations of all
    a target's attempts together); ``settings`` (``ArmSettings``) the method's, its ``window`` the
    last attempt's; ``search`` (``ArmSearch``) the later attempts' starts (R, m), the window of an
    attempt while restarts remain and the reach weighing a radian in the score that keeps the
    best attempt. Writes ``out`` (``ArmAnswers``)."""
    count = tasks.targets.shape[0]
    for i in prange(count):
        _search_target(method, model, tasks, stop, settings, search, out, i)


@njit(cache=True, error_model="numpy")
def _search_target(method, model, tasks, stop, settings, search, out, i):
    """``batch_search`` for target i: row i of ``out``."""
    rotations, starts, restarts = tasks.rotations, tasks.starts, search.starts
    target, rotation = tasks.targets[i], rotations[i] if rotations.shape[0] > 1 else rotations[0]
    max_iter = stop.max_iter
    # an attempt while restarts remain gives up sooner
    restarting = ArmSettings(settings.scale, search.window, settings.marker, settings.near, settings.barrier,
                             settings.damping, settings.max_angle_step)
    n_restarts = restarts.shape[0]
    start = starts[i] if starts.shape[0] > 1 else starts[0]
    total = 0
    attempts = 0
    best_score = np.inf
    best_code = -1
    while True:
        more = attempts < n_restarts
        q, positions, frames, it, err, oerr, code, _ = _attempt(
            method, model, ArmTask(target, rotation, tasks.oriented, start),
            Stop(stop.tol, stop.orientation_tol, max_iter - total), restarting if more else settings)
        attempts += 1
        total += it
        score = err + search.reach * oerr
        if code == REACHED or score < best_score:
            best_score = score
            best_code = code
            out.q[i] = q
            out.positions[i] = positions
            out.frames[i] = frames
            out.error[i] = err
            out.orientation_error[i] = oerr
        if code == REACHED or code == UNREACHABLE or not more or total >= max_iter:
            break
        start = restarts[attempts - 1]
    if best_code != REACHED and best_code != UNREACHABLE:
        best_code = MAX_ITERATIONS if total >= max_iter else STALLED
    out.iterations[i] = total
    out.status[i] = best_code


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
