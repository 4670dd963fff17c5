"""Chain FABRIK with a pole target and obstacles, plain or with joint limits, compiled.

``fabrik_chain_run`` (``fabrik.kernels.fabrik_chain``) stays the driver of every solve without
these options, so that none of its results changes; this driver runs the same stages with the
options added (``fabrik.solvers.extended`` calls it):

* forward stage: the effector on the target (a target inside an obstacle: on the nearest point
  ``margin`` outside it, ``push_out``), then inwards. Without limits each joint goes on the line
  to its old place at its bone's length, turned to the nearest direction whose bone clears every
  obstacle (``fabrik.kernels.obstacles.free_direction``): the joints projected out as they are
  placed. With limits the limited forward stage runs, then each bone that enters an obstacle is
  turned off it with the chain before it (a rigid turn about the joint after it);
* backward stage: the root on its base, then outwards; without limits each joint placed as in
  the forward stage (``free_direction`` from the joint before it; where every direction is
  blocked the bone folds back along the one before it, which is clear when it is no longer);
  with limits the limited backward stage, then ``_repair_limited``: the first bone in an obstacle
  turned, with the chain after it, to the nearest direction its limit allows that is clear, and
  the limited backward stage run again, until none is (``REPAIR_ROUNDS``);
* the pole step (``fabrik.kernels.poles``): after the backward stage, the turns that put the pole
  joint on the pole's side; with obstacles each the largest part of its turn that keeps the
  bones clear; with limits followed by the limited backward stage, so that every limit holds.

Every pose an iteration ends with is kept if it is the best so far among those whose bones clear
the obstacles by ``margin``; the answer is the best such pose (the last one when none was).
Stops: reached (``tol``, and ``orientation_tol`` for an oriented target); no progress (the
effector moved less than ``tol`` and the error fell by less than 1%: a straight chain short of a
reachable target is bent first, as ``fabrik_chain_run`` does, at most ``MAX_ESCAPES`` times); no
1% improvement of the best error in ``NO_PROGRESS_WINDOW`` iterations; the cap. A stop short of
the target is ``OBSTRUCTED`` when the target lies inside an obstacle, ``BLOCKED`` when it lies
within the chain's reach and a bone of the answer touches an obstacle (within ``CONTACT`` of the
chain's length), else ``UNREACHABLE`` beyond the reach or ``STALLED``.
"""

import numpy as np
from numba import njit

from fabrik.kernels.fabrik_chain import NO_PROGRESS_WINDOW, backward_stage, bend_chain, forward_stage, nudge_goal
from fabrik.kernels.frames import orientation_error, rotation_between
from fabrik.kernels.obstacles import (between, basis, chain_bones_clear, free_direction, push_out, ring_angle,
                                      ring_direction, segment_clearance, smallest_clearance, PER_RING, REFINE_STEPS,
                                      RINGS)
from fabrik.kernels.constraints import limit_direction
from fabrik.kernels.poles import apply_poles, apply_poles_clear
from fabrik.kernels.singularity import MAX_ESCAPES
from fabrik.kernels.stopping import (BLOCKED, MAX_ITERATIONS, OBSTRUCTED, PROGRESS_FRACTION, REACHED, STALLED,
                                      UNREACHABLE, effector_stalled, stall_tol)
from fabrik.kernels.vec import TINY, chain_scale, dist3v, fallback_direction, turn_joint

#: A stop short of a reachable target counts as ``BLOCKED`` when a bone of the answer lies within
#: this fraction of the chain's length of an obstacle.
CONTACT = 1e-3
#: Rounds of ``_repair_limited`` per stage at most.
REPAIR_ROUNDS = 8
_NO_CAPS = np.zeros((0, 7))


@njit(cache=True, error_model="numpy")
def collision_sweep(p, forward, lengths, fx, fy, fz, eps, obs, margin, planar, d):
    """One stage of plain FABRIK with obstacles, in place: ``forward`` places joints n-2 .. 0 from
    the joint after each, else joints 1 .. n-1 from the joint before each (the first joint, the
    effector or the root, already set). Each goes on the line to its old place at its bone's
    length, turned by ``free_direction``; where no direction is free a backward stage folds the
    bone back along the one before it. ``d`` (3,) is scratch. Returns True when every bone it
    placed clears the obstacles by ``margin``."""
    n = p.shape[0]
    clear = True
    for m in range(n - 1):
        i = n - 2 - m if forward else m + 1
        a = i + 1 if forward else i - 1
        L = lengths[i] if forward else lengths[i - 1]
        x, y, z = p[i, 0] - p[a, 0], p[i, 1] - p[a, 1], p[i, 2] - p[a, 2]
        r = np.sqrt(x * x + y * y + z * z)
        if r <= eps:
            x, y, z, r = fx, fy, fz, 1.0
        d[0], d[1], d[2] = x / r, y / r, z / r
        if L > 0.0 and obs.shape[0] > 0 and not free_direction(obs, _NO_CAPS, 0, p[a], d, L, 0.0, margin, planar):
            ok = False
            if not forward and i >= 2:
                # fold back along the bone before: clear where that bone was, up to its length
                b = i - 2
                x, y, z = p[b, 0] - p[a, 0], p[b, 1] - p[a, 1], p[b, 2] - p[a, 2]
                r = np.sqrt(x * x + y * y + z * z)
                if r > eps:
                    ex, ey, ez = p[a, 0] + L * x / r, p[a, 1] + L * y / r, p[a, 2] + L * z / r
                    if segment_clearance(obs, p[a, 0], p[a, 1], p[a, 2], ex, ey, ez, 0.0) >= margin:
                        d[0], d[1], d[2] = x / r, y / r, z / r
                        ok = True
            clear = clear and ok
        for c in range(3):
            p[i, c] = p[a, c] + L * d[c]
    return clear


@njit(cache=True, error_model="numpy")
def _limited_direction(obs, P, d, L, row, H, planar, margin, out):
    """The nearest direction to the unit ``d`` that the limit ``row`` (against frame H) allows and
    whose bone from P (length L) clears the obstacles by ``margin``, into ``out``: candidates in
    rings about d, each moved into the limit first (``limit_direction``). True when found."""
    e = basis(d[0], d[1], d[2], planar)
    per = 2 if planar else PER_RING
    for j in range(1, RINGS + 1):
        angle = ring_angle(j)
        best = -np.inf
        for k in range(per):
            out[0], out[1], out[2] = ring_direction(d[0], d[1], d[2], e, angle, k, per, j)
            limit_direction(row, H, out, False)
            c = segment_clearance(obs, P[0], P[1], P[2], P[0] + L * out[0], P[1] + L * out[1], P[2] + L * out[2], 0.0)
            if c >= margin and c > best:
                best = c
                bx, by, bz = out[0], out[1], out[2]
        if best > -np.inf:
            lo, hi = 0.0, 1.0
            for _ in range(REFINE_STEPS):
                mid = 0.5 * (lo + hi)
                out[0], out[1], out[2] = between(d[0], d[1], d[2], bx, by, bz, mid)
                limit_direction(row, H, out, False)
                c = segment_clearance(obs, P[0], P[1], P[2], P[0] + L * out[0], P[1] + L * out[1],
                                      P[2] + L * out[2], 0.0)
                if c >= margin:
                    hi = mid
                else:
                    lo = mid
            out[0], out[1], out[2] = between(d[0], d[1], d[2], bx, by, bz, hi)
            limit_direction(row, H, out, False)
            return True
    return False


@njit(cache=True, error_model="numpy")
def _turn_tail(p, first, pivot, R):
    """Turn joints first .. n-1 of ``p`` by R about joint ``pivot``."""
    for j in range(first, p.shape[0]):
        x, y, z = p[j, 0] - p[pivot, 0], p[j, 1] - p[pivot, 1], p[j, 2] - p[pivot, 2]
        for c in range(3):
            p[j, c] = p[pivot, c] + R[c, 0] * x + R[c, 1] * y + R[c, 2] * z


@njit(cache=True, error_model="numpy")
def _turn_head(p, F, last, pivot, R):
    """Turn joints 0 .. last of ``p`` and their frames by R about joint ``pivot``."""
    for j in range(last + 1):
        turn_joint(p, F, j, pivot, R)


@njit(cache=True, error_model="numpy")
def _repair_forward(p, F, lengths, obs, margin, planar, d):
    """After a limited forward stage: each bone from the effector inwards that enters an obstacle
    turned, with the chain before it, about the joint after it to the nearest clear direction."""
    n = p.shape[0]
    R = np.empty((3, 3))
    for i in range(n - 2, -1, -1):
        L = lengths[i]
        if L <= 0.0:
            continue
        a = i + 1
        d[0], d[1], d[2] = (p[i, 0] - p[a, 0]) / L, (p[i, 1] - p[a, 1]) / L, (p[i, 2] - p[a, 2]) / L
        x, y, z = d[0], d[1], d[2]
        if free_direction(obs, _NO_CAPS, 0, p[a], d, L, 0.0, margin, planar) and (
                d[0] != x or d[1] != y or d[2] != z):
            rotation_between(R, x, y, z, d[0], d[1], d[2])
            _turn_head(p, F, i, a, R)


@njit(cache=True, error_model="numpy")
def _repair_limited(p, frames, lengths, limits, root, root_frame, active, G, d, planar, align, eps, obs, margin,
                    out):
    """After a limited backward stage: the first bone that enters an obstacle turned, with the
    chain after it, to the nearest clear direction its limit allows, and the limited backward stage
    run again (which re-places every bone within its limits), up to ``REPAIR_ROUNDS`` times.
    Returns True when every bone ends clear by ``margin``."""
    n = p.shape[0]
    R = np.empty((3, 3))
    for _ in range(REPAIR_ROUNDS):
        bad = -1
        for i in range(n - 1):
            if lengths[i] > 0.0 and segment_clearance(obs, p[i, 0], p[i, 1], p[i, 2], p[i + 1, 0], p[i + 1, 1],
                                                      p[i + 1, 2], 0.0) < margin:
                bad = i
                break
        if bad < 0:
            return True
        L = lengths[bad]
        for c in range(3):
            d[c] = (p[bad + 1, c] - p[bad, c]) / L
        if not _limited_direction(obs, p[bad], d, L, limits[bad], root_frame if bad == 0 else frames[bad - 1],
                                  planar, margin, out):
            return False
        rotation_between(R, d[0], d[1], d[2], out[0], out[1], out[2])
        _turn_tail(p, bad + 1, bad, R)
        backward_stage(p, frames, lengths, limits, root, root_frame, active, G, d, planar, align, eps)
    return chain_bones_clear(obs, p, 0, n, margin)


@njit(cache=True, error_model="numpy")
def fabrik_chain_options(p, lengths, target, root, stop, lim, poles, obstacles):
    """Solve one chain in place (module docstring): ``p`` (n, 3) the start pose on entry and the
    answer on return; ``lengths`` (n-1,), ``target`` and ``root`` (3,); ``stop`` a ``Stop`` (its
    ``tol`` and ``max_iter``: the orientation tolerance is ``lim``'s); ``lim`` None (plain) or
    ``fabrik_chain_run``'s limited tuple (frames, active, limits, root_frame, target_rot, oriented,
    planar, orientation_tol), whose frames and active flags are the answer's on return; ``poles``
    a ``ChainPoles`` (none: zero rows); ``obstacles`` a ``ChainObstacles`` (none: zero rows).
    Returns (iterations, error, orientation error, smallest bone clearance of the answer (inf
    without obstacles), status code)."""
    tol, max_iter = stop.tol, stop.max_iter
    pole_rows, pole_points, pole_members = poles.rows, poles.points, poles.members
    obs, margin, planar = obstacles.table, obstacles.margin, obstacles.planar
    n = p.shape[0]
    last = n - 1
    total, scale = chain_scale(lengths)
    eps = TINY * scale
    fx, fy, fz, dist = fallback_direction(root, target, eps)
    parents = np.arange(-1, n - 1)
    has_obs = obs.shape[0] > 0
    d = np.empty(3)
    out = np.empty(3)
    goal = target.copy()
    obstructed = False
    if has_obs:
        obstructed = not push_out(obs, goal, 0.0) or (goal[0] != target[0] or goal[1] != target[1]
                                                     or goal[2] != target[2])
        if obstructed:
            push_out(obs, goal, 2.0 * margin)
    oerr = 0.0
    otol = np.inf
    orient_weight = 0.0
    if lim is None:
        F = np.zeros((0, 3, 3))
        # the start pose rooted and, with obstacles, placed clear by one backward stage
        for c in range(3):
            shift = root[c] - p[0, c]
            for i in range(n):
                p[i, c] += shift
        clean = True
        if has_obs:
            clean = collision_sweep(p, False, lengths, fx, fy, fz, eps, obs, margin, planar, d)
    else:
        frames, active, limits, root_frame, target_rot, oriented, lplanar, otol = lim
        F = frames
        G = np.empty((3, 3))
        align = not (oriented or lplanar)
        backward_stage(p, frames, lengths, limits, root, root_frame, active, G, d, lplanar, align, eps)
        clean = True
        if has_obs:
            clean = _repair_limited(p, frames, lengths, limits, root, root_frame, active, G, d, lplanar, align, eps,
                                    obs, margin, out)
        if oriented:
            oerr = orientation_error(frames[last - 1], target_rot)
            orient_weight = lengths[last - 1]
    err = dist3v(p, last, target)
    if clean and err <= tol and oerr <= otol and pole_rows.shape[0] == 0:  # (a pole: one iteration at least)
        return 0, err, oerr, smallest_clearance(obs, p, parents), REACHED
    score = err + orient_weight * oerr
    best_p = p.copy()
    best_F = F.copy()
    best_active = np.zeros(n, dtype=np.int64) if lim is None else lim[1].copy()
    best_err, best_oerr = err, oerr
    best_score = score if clean else np.inf
    progress_ref = score
    since = 0
    escapes = 0
    nudged = False
    aim = goal.copy()
    it = 0
    while it < max_iter:
        px, py, pz = p[last, 0], p[last, 1], p[last, 2]
        prev_err, prev_oerr = err, oerr
        if lim is None:
            for c in range(3):
                p[last, c] = aim[c]
            if has_obs:
                collision_sweep(p, True, lengths, fx, fy, fz, eps, obs, margin, planar, d)
            else:
                _plain_sweep(p, True, lengths, fx, fy, fz, eps)
            for c in range(3):
                p[0, c] = root[c]
            if has_obs:
                clean = collision_sweep(p, False, lengths, fx, fy, fz, eps, obs, margin, planar, d)
            else:
                _plain_sweep(p, False, lengths, fx, fy, fz, eps)
            if pole_rows.shape[0] > 0:
                if has_obs:
                    if clean:
                        apply_poles_clear(p, F, pole_rows, pole_points, pole_members, eps, parents, obs, margin)
                else:
                    apply_poles(p, F, pole_rows, pole_points, pole_members, eps)
        else:
            frames, active, limits, root_frame, target_rot, oriented, lplanar, otol = lim
            forward_stage(p, frames, lengths, limits, aim, target_rot, oriented, G, d, root_frame, lplanar, eps)
            if has_obs:
                _repair_forward(p, frames, lengths, obs, margin, lplanar, d)
            backward_stage(p, frames, lengths, limits, root, root_frame, active, G, d, lplanar, align, eps)
            if pole_rows.shape[0] > 0:
                apply_poles(p, frames, pole_rows, pole_points, pole_members, eps)
                backward_stage(p, frames, lengths, limits, root, root_frame, active, G, d, lplanar, align, eps)
            if has_obs:
                clean = _repair_limited(p, frames, lengths, limits, root, root_frame, active, G, d, lplanar, align,
                                        eps, obs, margin, out)
            if oriented:
                oerr = orientation_error(frames[last - 1], target_rot)
        if nudged:
            nudged = False
            for c in range(3):
                aim[c] = goal[c]
        it += 1
        err = dist3v(p, last, target)
        score = err + orient_weight * oerr
        if clean and score < best_score:
            best_score = score
            best_err, best_oerr = err, oerr
            best_p[:, :] = p
            if lim is not None:
                best_F[:, :, :] = lim[0]
                best_active[:] = lim[1]
        if clean and err <= tol and oerr <= otol:
            return it, err, oerr, smallest_clearance(obs, p, parents), REACHED
        if score < (1.0 - PROGRESS_FRACTION) * progress_ref:
            progress_ref = score
            since = 0
        else:
            since += 1
            if since >= NO_PROGRESS_WINDOW:
                break
        if not (effector_stalled(p, last, px, py, pz, stall_tol(tol, scale), err, prev_err)
                and (oerr <= otol or oerr > (1.0 - PROGRESS_FRACTION) * prev_oerr)):
            continue
        if dist <= total and not obstructed and escapes < MAX_ESCAPES:
            # short of a target within reach: bend the chain (plain) or aim one forward stage
            # sideways (limits), as the drivers without options do
            escapes += 1
            if lim is None:
                bend_chain(p, target, lengths, scale, fx, fy, fz, escapes > 1)
            else:
                nudge_goal(aim, p, lengths, total)
                nudged = True
            continue
        break
    if best_score < np.inf:
        p[:, :] = best_p
        err, oerr = best_err, best_oerr
        clean = True
        if lim is not None:
            lim[0][:, :, :] = best_F
            lim[1][:] = best_active
    clearance = smallest_clearance(obs, p, parents)
    if clean and err <= tol and oerr <= otol:
        return it, err, oerr, clearance, REACHED
    if it >= max_iter:
        code = MAX_ITERATIONS
    elif obstructed:
        code = OBSTRUCTED
    elif has_obs and dist <= total and clearance < CONTACT * total + margin:
        code = BLOCKED
    elif dist > total:
        code = UNREACHABLE
    else:
        code = STALLED
    return it, err, oerr, clearance, code


@njit(cache=True, inline="always", error_model="numpy")
def _plain_sweep(p, forward, lengths, fx, fy, fz, eps):
    """One stage of plain FABRIK (``place_on_line`` joint after joint), the first joint already set."""
    n = p.shape[0]
    for m in range(n - 1):
        i = n - 2 - m if forward else m + 1
        a = i + 1 if forward else i - 1
        L = lengths[i] if forward else lengths[i - 1]
        x, y, z = p[i, 0] - p[a, 0], p[i, 1] - p[a, 1], p[i, 2] - p[a, 2]
        r = np.sqrt(x * x + y * y + z * z)
        if r <= eps:
            x, y, z, r = fx, fy, fz, 1.0
        s = L / r
        p[i, 0] = p[a, 0] + s * x
        p[i, 1] = p[a, 1] + s * y
        p[i, 2] = p[a, 2] + s * z
