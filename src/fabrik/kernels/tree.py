"""What every tree kernel shares: the flattened tree, its set-up and the start pose.

A tree arrives flattened in topological order as the record ``tree = Tree(parents, lengths,
rest_dirs, reach, order, subtree_end, position)`` (``fabrik.kernels.records``): ``parents[i] <
i`` (joint 0 the root, parent -1), ``lengths[i]`` the bone from ``parents[i]`` to ``i`` (0 for
the root, 0 allowed elsewhere), ``rest_dirs[i]`` a unit vector along that bone at rest (read only
where two joints coincide), ``reach[i]`` the summed bone lengths from the root to ``i``, and the
depth-first ``order`` with ``subtree_end`` and ``position`` (the joints below ``j`` are
``order[position[j] + 1 : subtree_end[j]]``).

Status codes follow ``fabrik.solvers.result.STATUSES``; negative codes report bad input
(``BAD_INDEX``, ``BAD_ROOT``).
"""

import numpy as np
from numba import njit

from fabrik.kernels.frames import rotation_between
from fabrik.kernels.vec import dist3, dist3v, rotate_span

#: Returned as the status when a target index is out of range or appears twice.
BAD_INDEX = -1


#: Returned when ``root`` was given explicitly and the root joint has a different target.
BAD_ROOT = -2


@njit(cache=True, error_model="numpy")
def tree_setup(parents, lengths, reach, target_idx, targets, root, root_from_target):
    """The checks and set-up every tree kernel starts with.

    Returns (code, scale, slot, active, root3, unreachable): ``code`` 0, ``BAD_INDEX`` (a target
    index out of range or repeated) or ``BAD_ROOT`` (an explicit ``root`` off the root joint's
    own target; then nothing else is meaningful); ``scale`` the summed bone lengths (1 for a
    skeleton without length); ``slot[j]`` the row of joint j's target or -1; ``active[j]`` True
    when j or a joint below it is targeted (the root always is); ``root3`` the fixed root (the
    root joint's own target when it has one and ``root_from_target``); ``unreachable`` whether
    some target lies farther from the root than the bone lengths along its path.
    """
    n = parents.shape[0]
    total = 0.0
    for i in range(n):
        total += lengths[i]
    scale = total if total > 0.0 else 1.0
    slot = np.full(n, -1, dtype=np.int64)
    active = np.zeros(n, dtype=np.bool_)
    root3 = root.copy()
    for t in range(target_idx.shape[0]):
        j = target_idx[t]
        if j < 0 or j >= n or slot[j] >= 0:
            return BAD_INDEX, scale, slot, active, root3, False
        slot[j] = t
    for i in range(n - 1, 0, -1):
        if slot[i] >= 0:
            active[i] = True
        if active[i]:
            active[parents[i]] = True
    active[0] = True
    s = slot[0]
    if s >= 0:
        if root_from_target:
            for c in range(3):
                root3[c] = targets[s, c]
        else:
            if dist3v(targets, s, root) > 1e-12 * scale:
                return BAD_ROOT, scale, slot, active, root3, False
    for t in range(target_idx.shape[0]):
        if dist3v(targets, t, root3) > reach[target_idx[t]] * (1.0 + 1e-12) + 1e-300:
            return 0, scale, slot, active, root3, True
    return 0, scale, slot, active, root3, False


@njit(cache=True, error_model="numpy")
def effector_errors(p, target_idx, targets, errors):
    """Fill ``errors[t] = |p[target_idx[t]] - targets[t]|``; return the largest (0 for none)."""
    worst = 0.0
    for t in range(target_idx.shape[0]):
        e = dist3(p, target_idx[t], targets, t)
        errors[t] = e
        if e > worst:
            worst = e
    return worst


@njit(cache=True, error_model="numpy")
def lengths_hold(p, parents, lengths, scale):
    """True when every bone of the pose ``p`` has its skeleton length (to 1e-9 of ``scale``)."""
    for i in range(1, parents.shape[0]):
        if abs(dist3(p, i, p, parents[i]) - lengths[i]) > 1e-9 * scale:
            return False
    return True


@njit(cache=True, error_model="numpy")
def rebuild_lengths(p, parents, lengths, rest_dirs, eps):
    """Rescale every bone of ``p`` (in place, root outwards) to its exact length, keeping its
    direction (the rest direction where the bone has collapsed to a point)."""
    src = p.copy()
    for i in range(1, parents.shape[0]):
        q = parents[i]
        x, y, z = bone_at_length(src, i, q, lengths[i], rest_dirs, eps)
        p[i, 0] = p[q, 0] + x
        p[i, 1] = p[q, 1] + y
        p[i, 2] = p[q, 2] + z


@njit(cache=True, inline="always", error_model="numpy")
def bone_at_length(p, i, q, length, rest_dirs, eps):
    """The bone from joint ``q`` to joint ``i`` of pose ``p`` (n, 3) rescaled to ``length``, as
    (x, y, z); along ``rest_dirs[i]`` where the two joints are within ``eps`` of each other."""
    x = p[i, 0] - p[q, 0]
    y = p[i, 1] - p[q, 1]
    z = p[i, 2] - p[q, 2]
    r = np.sqrt(x * x + y * y + z * z)
    if r > eps:
        s = length / r
        return s * x, s * y, s * z
    return length * rest_dirs[i, 0], length * rest_dirs[i, 1], length * rest_dirs[i, 2]


@njit(cache=True, inline="always")
def limb_span(entry, parents, subtree_end, position):
    """The joints a ``limb_tops`` entry swings and its pivot, as (pivot, start, stop): the joints
    are ``order[start:stop]``. An entry t >= 0 is a limb top: t and everything below it turn
    about ``parents[t]``. An entry -(c + 1) turns everything below joint c (c excluded) about c:
    a limb whose pivot also carries twist bones, which must turn with it."""
    if entry >= 0:
        return parents[entry], position[entry], subtree_end[entry]
    centre = -entry - 1
    return centre, position[centre] + 1, subtree_end[centre]


@njit(cache=True, error_model="numpy")
def swing_limbs(p, F, limb_tops, parents, order, subtree_end, position, slot, targets, eps):
    """Turn each limb rigidly about its pivot so that it points at its targets (in place), and
    with it the joint frames ``F`` (n, 3, 3; none when empty).

    For every entry of ``limb_tops`` (ancestors first; see ``limb_span``) the joints of the limb
    turn together about its pivot by the smallest rotation taking the direction from the pivot
    to the centroid of the limb's targeted joints onto the direction to the centroid of their
    targets. Limbs with no target, or with either centroid within ``eps`` of the pivot, stay as
    they are.
    """
    R = np.empty((3, 3))
    for a in range(limb_tops.shape[0]):
        pivot, start, stop = limb_span(limb_tops[a], parents, subtree_end, position)
        cx = cy = cz = tx = ty = tz = 0.0
        m = 0
        for b in range(start, stop):
            i = order[b]
            s = slot[i]
            if s >= 0:
                cx += p[i, 0]
                cy += p[i, 1]
                cz += p[i, 2]
                tx += targets[s, 0]
                ty += targets[s, 1]
                tz += targets[s, 2]
                m += 1
        if m == 0:
            continue
        cx = cx / m - p[pivot, 0]
        cy = cy / m - p[pivot, 1]
        cz = cz / m - p[pivot, 2]
        tx = tx / m - p[pivot, 0]
        ty = ty / m - p[pivot, 1]
        tz = tz / m - p[pivot, 2]
        nc = np.sqrt(cx * cx + cy * cy + cz * cz)
        nt = np.sqrt(tx * tx + ty * ty + tz * tz)
        if nc <= eps or nt <= eps:
            continue
        rotation_between(R, cx / nc, cy / nc, cz / nc, tx / nt, ty / nt, tz / nt)
        rotate_span(p, start, stop, pivot, order, R)
        if F.shape[0] > 0:
            for b in range(start, stop):
                # F[i] <- R @ F[i] column by column, by index (a view F[i] and a slice
                # assignment per joint cost more than the product)
                i = order[b]
                for c in range(3):
                    f0 = F[i, 0, c]
                    f1 = F[i, 1, c]
                    f2 = F[i, 2, c]
                    F[i, 0, c] = R[0, 0] * f0 + R[0, 1] * f1 + R[0, 2] * f2
                    F[i, 1, c] = R[1, 0] * f0 + R[1, 1] * f1 + R[1, 2] * f2
                    F[i, 2, c] = R[2, 0] * f0 + R[2, 1] * f1 + R[2, 2] * f2


@njit(cache=True, error_model="numpy")
def move_to_root(p, root3):
    """Translate the pose ``p`` (n, 3) so that its root sits on ``root3`` (in place): a moved root
    carries the whole pose with it, as every method starts."""
    for c in range(3):
        shift = root3[c] - p[0, c]
        for i in range(p.shape[0]):
            p[i, c] += shift
