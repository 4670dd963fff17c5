"""What skeleton FABRIK (``fabrik.kernels.fabrik_tree``) adds with effector weights, pole targets,
obstacles and self-collision (its ``ext`` argument; ``fabrik.solvers.extended`` builds it):

``ext = (target_weights (k,), pole_rows (P, 9) int64, pole_points (P, 3), pole_members (M,) int64,
obstacles (K, 17), margin, self_radius, pairs (n, n) bool)``.

* Weights: each active joint's branch weight is the weight of its target, or for an untargeted
  joint the largest weight below it (``branch_weights``); a sub-base goes to the weighted mean of
  its branches' proposals, and a held rigid group's centre weighs its members' rigid proposals
  the same way (``fabrik.kernels.rigid_groups.place_group_centre``). With every weight 1 this is
  the unweighted centroid.
* Poles: ``fabrik.kernels.poles`` after each backward stage (with limits, the limited backward
  stage again afterwards).
* Obstacles: in the forward stage (without limits) each joint's proposal for its parent is turned
  to the nearest direction whose bone clears the obstacles (``free_direction``); after each
  backward stage ``repair`` walks the bones from the root outwards and turns each one that enters
  an obstacle, or comes within twice ``self_radius`` of a bone that is not its neighbour
  (``pairs[i, j]``: bones i and j, by child joint, are checked against each other), to the
  nearest clear direction, rigidly with everything below it (a member of a held rigid group: the
  whole group about its centre; with limits, each candidate first placed by the bone's limit).
"""

import numpy as np
from numba import njit

from fabrik.kernels.frames import rotation_between
from fabrik.kernels.vec import turn_joint
from fabrik.kernels.obstacles import (PER_RING, REFINE_STEPS, RINGS, basis, between, bone_clearance,
                                      ring_angle, ring_direction, segment_segment)
from fabrik.kernels.tree_limits import _tr, own_limit


@njit(cache=True, error_model="numpy")
def branch_weights(parents, slot, active, target_weights):
    """(n,) the weight of each joint's branch: its target's weight where it has one, else the
    largest branch weight among its children (0 for joints with no target below)."""
    n = parents.shape[0]
    bw = np.zeros(n)
    for i in range(n - 1, -1, -1):
        if slot[i] >= 0:
            bw[i] = target_weights[slot[i]]
        if i > 0 and active[i] and bw[i] > bw[parents[i]] and slot[parents[i]] < 0:
            bw[parents[i]] = bw[i]
    return bw


@njit(cache=True, inline="always", error_model="numpy")
def in_span(position, subtree_end, top, j):
    """True when joint j is ``top`` or below it."""
    return position[top] <= position[j] < subtree_end[top]


@njit(cache=True, error_model="numpy")
def _fill_caps(p, parents, lengths, pairs, i, position, subtree_end, group_tops, n_tops, radius, caps):
    """The capsules (rows of ``caps``) of the bones bone ``i`` is checked against for
    self-collision that do not move with it (the joints at or below ``group_tops[:n_tops]`` turn
    with it); returns their number."""
    m = 0
    if radius <= 0.0:
        return 0
    for j in range(1, parents.shape[0]):
        if not pairs[i, j] or lengths[j] <= 0.0:
            continue
        moves = False
        for t in range(n_tops):
            if in_span(position, subtree_end, group_tops[t], j):
                moves = True
        if moves:
            continue
        q = parents[j]
        caps[m, 0], caps[m, 1], caps[m, 2] = p[q, 0], p[q, 1], p[q, 2]
        caps[m, 3], caps[m, 4], caps[m, 5] = p[j, 0], p[j, 1], p[j, 2]
        caps[m, 6] = radius
        m += 1
    return m


@njit(cache=True, error_model="numpy")
def _rotated_clearance(p, parents, lengths, obs, caps, m, radius, q, tops, n_tops, R, order, position, subtree_end):
    """The smallest clearance of the bones into the joints ``tops[:n_tops]`` after a turn R about
    ``p[q]`` (the bones below them turn with them and are checked in their own turn)."""
    best = np.inf
    for t in range(n_tops):
        j = tops[t]
        if lengths[j] <= 0.0:
            continue
        x, y, z = p[j, 0] - p[q, 0], p[j, 1] - p[q, 1], p[j, 2] - p[q, 2]
        ex = p[q, 0] + R[0, 0] * x + R[0, 1] * y + R[0, 2] * z
        ey = p[q, 1] + R[1, 0] * x + R[1, 1] * y + R[1, 2] * z
        ez = p[q, 2] + R[2, 0] * x + R[2, 1] * y + R[2, 2] * z
        best = min(best, bone_clearance(obs, caps, m, p[q, 0], p[q, 1], p[q, 2], ex, ey, ez, radius))
    return best


@njit(cache=True, error_model="numpy")
def _turn_tops(p, F, q, tops, n_tops, R, order, position, subtree_end, T):
    """Turn every joint at or below ``tops[:n_tops]`` by R about ``p[q]``, with their frames (none
    when ``F`` is empty); T (3, 3) scratch."""
    for t in range(n_tops):
        top = tops[t]
        for b in range(position[top], subtree_end[top]):
            turn_joint(p, F, order[b], q, R)


@njit(cache=True, error_model="numpy")
def _candidate(p, F, i, q, L, x, y, z, lim, saved, R):
    """Point bone i along the unit (x, y, z), through its limit when ``lim`` is given (then
    ``F[i]`` holds the limited frame, from ``saved`` (3, 3), the frame before): the direction it
    ends along, and R (3, 3) the turn taking the bone's current direction there (with limits the
    whole frame's turn)."""
    if lim is None:
        d0, d1, d2 = (p[i, 0] - p[q, 0]) / L, (p[i, 1] - p[q, 1]) / L, (p[i, 2] - p[q, 2]) / L
        rotation_between(R, d0, d1, d2, x, y, z)
        return x, y, z
    Q, rows, circ, hcs, P3, RS, dS = lim
    F[i] = saved
    _tr(F, i, F, i, x, y, z)
    own_limit(F, q, i, Q, rows, circ, hcs, P3, RS, dS)
    # R = F[i] saved^T
    for a in range(3):
        for b in range(3):
            R[a, b] = F[i, a, 0] * saved[b, 0] + F[i, a, 1] * saved[b, 1] + F[i, a, 2] * saved[b, 2]
    return F[i, 0, 1], F[i, 1, 1], F[i, 2, 1]


@njit(cache=True, error_model="numpy")
def repair(p, F, parents, lengths, order, position, subtree_end, obs, margin, radius, pairs, groups, held, lim,
           scratch):
    """Turn every bone that enters an obstacle or a non-neighbouring bone (module docstring) to
    the nearest clear direction, root outwards, in place (frames ``F`` with them; none when
    empty). ``groups`` the kernels' ``Groups``, ``held`` (G,) bool the groups held rigid now;
    ``lim`` None, or (Q, rows, circ, hcs, P3, R, d) to keep each turned bone within its limit.
    ``scratch`` = (caps (n, 7), tops (n,) int64, R (3, 3), T (3, 3), saved (3, 3)). Returns True
    when every bone ends clear by ``margin``."""
    group_of, group_start, group_members, group_offsets, in_group, _ = groups
    caps, tops, R, T, saved = scratch
    n = parents.shape[0]
    clean = True
    for b in range(1, n):
        i = order[b]
        q = parents[i]
        L = lengths[i]
        if L <= 0.0:
            continue
        # what turns with bone i: its subtree, or a held group's every member subtree
        n_tops = 1
        tops[0] = i
        g = in_group[i] if group_start.shape[0] > 1 else -1  # (no groups: one-value arrays)
        if g >= 0 and held[g]:
            n_tops = 0
            for idx in range(group_start[g], group_start[g + 1]):
                tops[n_tops] = group_members[idx]
                n_tops += 1
        m = _fill_caps(p, parents, lengths, pairs, i, position, subtree_end, tops, n_tops, radius, caps)
        R[:, :] = 0.0
        R[0, 0] = R[1, 1] = R[2, 2] = 1.0
        if _rotated_clearance(p, parents, lengths, obs, caps, m, radius, q, tops, n_tops, R, order, position,
                              subtree_end) >= margin:
            continue
        d0, d1, d2 = (p[i, 0] - p[q, 0]) / L, (p[i, 1] - p[q, 1]) / L, (p[i, 2] - p[q, 2]) / L
        if F.shape[0] > 0:
            saved[:, :] = F[i]
        e = basis(d0, d1, d2, False)
        found = False
        bx = by = bz = 0.0
        for j in range(1, RINGS + 1):
            angle = ring_angle(j)
            best = -np.inf
            for k in range(PER_RING):
                x, y, z = ring_direction(d0, d1, d2, e, angle, k, PER_RING, j)
                _candidate(p, F, i, q, L, x, y, z, lim, saved, R)
                c = _rotated_clearance(p, parents, lengths, obs, caps, m, radius, q, tops, n_tops, R, order, position,
                                       subtree_end)
                if c >= margin and c > best:
                    best, bx, by, bz = c, x, y, z
            if best > -np.inf:
                lo, hi = 0.0, 1.0
                for _ in range(REFINE_STEPS):
                    mid = 0.5 * (lo + hi)
                    x, y, z = between(d0, d1, d2, bx, by, bz, mid)
                    _candidate(p, F, i, q, L, x, y, z, lim, saved, R)
                    if _rotated_clearance(p, parents, lengths, obs, caps, m, radius, q, tops, n_tops, R, order,
                                          position, subtree_end) >= margin:
                        hi = mid
                    else:
                        lo = mid
                x, y, z = between(d0, d1, d2, bx, by, bz, hi)
                _candidate(p, F, i, q, L, x, y, z, lim, saved, R)
                found = True
                break
        if F.shape[0] > 0:
            F[i] = saved  # turned below with the rest
        if not found:
            clean = False
            continue
        _turn_tops(p, F, q, tops, n_tops, R, order, position, subtree_end, T)
    return clean


@njit(cache=True, error_model="numpy")
def refresh_untargeted(p, F, parents, lengths, active, carried, local):
    """After a repair or a pole turn: the untargeted bones' carried vectors (without frames,
    ``carried`` (n, 3)) or frames relative to their parents' (with frames, ``local`` (n, 3, 3))
    taken from the pose as it now is, so that the next backward stage carries them as they are."""
    for i in range(1, parents.shape[0]):
        if active[i]:
            continue
        q = parents[i]
        if carried.shape[0] > 0:
            for c in range(3):
                carried[i, c] = p[i, c] - p[q, c]
        elif local.shape[0] > 0 and lengths[i] > 0.0:
            for r in range(3):
                for c in range(3):
                    local[i, r, c] = F[q, 0, r] * F[i, 0, c] + F[q, 1, r] * F[i, 1, c] + F[q, 2, r] * F[i, 2, c]


@njit(cache=True, error_model="numpy")
def pair_distances(p, parents, out):
    """out (n, n) <- the distance between bone i and bone j of the pose ``p`` (bones by child
    joint; the root's row and column: inf)."""
    n = p.shape[0]
    for i in range(n):
        for j in range(n):
            qi, qj = parents[i], parents[j]
            if qi < 0 or qj < 0:
                out[i, j] = np.inf
                continue
            out[i, j] = segment_segment(p[qi, 0], p[qi, 1], p[qi, 2], p[i, 0], p[i, 1], p[i, 2],
                                        p[qj, 0], p[qj, 1], p[qj, 2], p[j, 0], p[j, 1], p[j, 2])


@njit(cache=True, error_model="numpy")
def weighted_error(errors, weights):
    """sqrt(sum w e^2 / sum w): the error a weighted solve's stopping rules and best pose follow
    (the weighted sub-base centroid is a fixed point where sum w e^2 stops falling)."""
    num = 0.0
    den = 0.0
    for t in range(errors.shape[0]):
        num += weights[t] * errors[t] * errors[t]
        den += weights[t]
    return np.sqrt(num / den)
