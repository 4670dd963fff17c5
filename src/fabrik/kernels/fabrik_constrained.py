"""FABRIK with joint limits on a single chain (section 4.3 of the paper), compiled: the entries
``fabrik.solve`` and the limited benchmarks call. FABRIK itself is ``fabrik_chain_run`` of
``fabrik.kernels.fabrik_chain`` (the one chain driver, whose module docstring describes the limited
stages and rules); ``fabrik_constrained_polished`` adds a search for a closer pose when FABRIK
ends short of the target.
"""

import numpy as np
from numba import njit

from fabrik.kernels.fabrik_chain import fabrik_chain_run
from fabrik.kernels.frames import frames_along
from fabrik.kernels.records import LimitedTask, Stop
from fabrik.kernels.rotation_chain import ccd_constrained_from
from fabrik.kernels.stopping import MAX_ITERATIONS, REACHED

#: Starts from pseudo-random poses (``restart_pose``) after FABRIK and its CCD polish from the
#: given start ended short of the target (see ``fabrik_constrained_polished``).
RESTARTS = 2


@njit(cache=True, error_model="numpy")
def fabrik_constrained(task, lengths, limits, stop):
    """Solve one constrained chain: ``fabrik_constrained_polished`` without its last two values."""
    p, frames, active, it, err, oerr, code, _, _ = fabrik_constrained_polished(task, lengths, limits, stop)
    return p, frames, active, it, err, oerr, code


@njit(cache=True, inline="always")
def _with_cap(stop, max_iter):
    """``stop`` with the iteration cap ``max_iter`` (what is left of the solve's)."""
    return Stop(stop.tol, stop.orientation_tol, max_iter)


@njit(cache=True, error_model="numpy")
def _fabrik_then_ccd(task, lengths, limits, stop):
    """FABRIK from ``task.initial``, then limited CCD sweeps from its best pose when it ended short
    (within what is left of ``stop.max_iter``); the better pose. Returns the 7 values and the sweeps."""
    max_iter = stop.max_iter
    p, frames, active, it, err, oerr, code = fabrik_constrained_search(task, lengths, limits, stop)
    if code == REACHED or it >= max_iter:
        return p, frames, active, it, err, oerr, code, 0
    q, qf, qa, sweeps, qerr, qoerr, qcode = ccd_constrained_from(p.copy(), frames.copy(), task, lengths, limits,
                                                                 _with_cap(stop, max_iter - it))
    weight = lengths[p.shape[0] - 2] if task.oriented else 0.0
    if qerr + weight * qoerr < err + weight * oerr:
        if qcode == MAX_ITERATIONS and code != MAX_ITERATIONS:
            qcode = code
        return q, qf, qa, it + sweeps, qerr, qoerr, qcode, sweeps
    return p, frames, active, it + sweeps, err, oerr, code, sweeps


@njit(cache=True, error_model="numpy")
def restart_pose(p, lengths, root, planar, k):
    """Start pose ``k`` (>= 1) of the restarts: every bone in a direction drawn from a fixed
    pseudo-random sequence seeded by ``k`` (the same poses every call; in the z = 0 plane for a
    2D chain), joined up from ``root``. Limits are applied by the solve's first backward stage."""
    state = np.uint64(0x9E3779B97F4A7C15) * np.uint64(k) + np.uint64(0x632BE59BD9B4E019)
    for k2 in range(3):
        p[0, k2] = root[k2]
    for i in range(lengths.shape[0]):
        r = 0.0
        v = np.zeros(3)
        while r < 1e-3:
            for c in range(3):
                # splitmix64
                state += np.uint64(0x9E3779B97F4A7C15)
                z = state
                z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                z = z ^ (z >> np.uint64(31))
                v[c] = 2.0 * (float(z >> np.uint64(11)) / 9007199254740992.0) - 1.0
            if planar:
                v[2] = 0.0
            r = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
            if r > 1.0:
                r = 0.0  # inside the unit ball only, so that directions are uniform
        for c in range(3):
            p[i + 1, c] = p[i, c] + lengths[i] * v[c] / r


@njit(cache=True, error_model="numpy")
def fabrik_constrained_polished(task, lengths, limits, stop):
    """FABRIK (``fabrik_constrained_search``) and, when it ends short of the target, a search for
    a closer pose within what is left of ``stop.max_iter``; the closest pose found is returned.
    Arguments as ``fabrik_constrained_search``.

    Where the limits keep the target out of reach FABRIK's stages, which place each bone by the
    limits of its neighbours alone, can settle (or cycle) far from the closest pose the limits
    allow. Then, in turn, each while the target is not reached: limited CCD sweeps
    (``fabrik.kernels.ccd``, which turn the whole rest of the chain about each joint
    towards the target) from FABRIK's best pose; limited CCD from the start pose; and ``RESTARTS``
    runs of FABRIK followed by CCD sweeps from pseudo-random poses (``restart_pose``). Measured
    in ``benchmarks/limited_best.py`` (500 random limited chains with targets out of reach under
    their limits; final error within 10%, or 1e-3 of the reach, of a multi-start search's best):
    FABRIK alone 85.2% of the cases, with the sweeps from its best pose 94.2%, all of the above
    97.8% (worst case 1.62 times the best, against 8.70 alone; constrained CCD alone 84.6%).

    Returns the 7 values of ``fabrik_constrained``, the CCD sweeps run (counted in the
    iterations) and the restarts run (0, 0 when FABRIK reached the target).
    """
    initial, max_iter = task.initial, stop.max_iter
    n = initial.shape[0]
    p, frames, active, it, err, oerr, code, sweeps = _fabrik_then_ccd(task, lengths, limits, stop)
    restarts = 0
    if code == REACHED or it >= max_iter or n < 2:
        return p, frames, active, it, err, oerr, code, sweeps, restarts
    weight = lengths[n - 2] if task.oriented else 0.0
    # limited CCD from the start pose
    q = initial.copy()
    qf = np.empty((n, 3, 3))
    frames_along(qf, q, limits.root_frame)
    q, qf, qa, k, qerr, qoerr, qcode = ccd_constrained_from(q, qf, task, lengths, limits,
                                                            _with_cap(stop, max_iter - it))
    it += k
    sweeps += k
    if qerr + weight * qoerr < err + weight * oerr:
        p, frames, active, err, oerr = q, qf, qa, qerr, qoerr
        code = qcode if qcode != MAX_ITERATIONS else code
    start = np.empty((n, 3))
    while restarts < RESTARTS and code != REACHED and it < max_iter:
        restarts += 1
        restart_pose(start, lengths, task.root, limits.planar, restarts)
        q, qf, qa, k, qerr, qoerr, qcode, ks = _fabrik_then_ccd(
            LimitedTask(start, task.target, task.root, task.target_rot, task.oriented), lengths, limits,
            _with_cap(stop, max_iter - it))
        it += k
        sweeps += ks
        if qerr + weight * qoerr < err + weight * oerr:
            p, frames, active, err, oerr = q, qf, qa, qerr, qoerr
            code = qcode if qcode != MAX_ITERATIONS else code
    return p, frames, active, it, err, oerr, code, sweeps, restarts


@njit(cache=True, error_model="numpy")
def fabrik_constrained_search(task, lengths, limits, stop):
    """Solve one constrained chain by FABRIK alone (``fabrik_chain_run`` with limits).

    Args (``fabrik.kernels.records``): task a ``LimitedTask`` (its initial pose copied, never
    written; its target rotation read when oriented); lengths (n-1,); limits a ``ChainLimits``
    (planar: the chain lies in z = 0, a 2D chain whose frames are kept exactly in the plane); stop
    a ``Stop``. Returns (positions (n, 3), frames (n, 3, 3), active (n,) int64, iterations, error,
    orientation_error, status_code); the pose satisfies the limits (a backward stage's, also
    applied to the start pose before iterating).
    """
    p = task.initial.copy()
    n = p.shape[0]
    frames = np.empty((n, 3, 3))
    frames_along(frames, p, limits.root_frame)
    active = np.zeros(n, dtype=np.int64)
    it, err, oerr, code = fabrik_chain_run(p, lengths, task.target, task.root, stop.tol, stop.max_iter,
                                           (frames, active, limits.table, limits.root_frame, task.target_rot,
                                            task.oriented, limits.planar, stop.orientation_tol), False)
    return p, frames, active, it, err, oerr, code
