"""Triangulation IK (Muller-Cajar & Mukundan 2007) on a single chain, compiled.

One pass from the root outwards. At joint ``i`` let ``a`` be the length of bone ``i``, ``c`` the
distance from the joint to the target and ``[r, R]`` the range of distances the rest of the chain
(bones ``i+1 ..``) can span (``R`` their total length, ``r = max(0, 2 * longest - R)``). The bone
is turned, in the plane of its current direction and the target direction, so that the next joint
lands at distance ``c'`` from the target, where by the cosine rule
``cos(delta) = (a^2 + c^2 - c'^2) / (2 a c)`` is the angle between the bone and the target
direction. The original method's choice is ``c' = R`` (the rest of the chain then lies straight,
which is why Triangulation leaves the joints near the effector in a line); when the bone cannot
get that far (``R > c + a``, target too close) it points straight away (``c' = c + a``), and when it
cannot get that close (``R < |c - a|``) straight at the target (``c' = |c - a|``). By induction
``c'`` stays within ``[r, R]`` whenever the target is reachable, so every reachable target is
reached in one pass; an unreachable one leaves the chain straight, pointing at it.

As in the original (which works on joint angles), turning joint ``i`` rotates the whole sub-chain
beyond it rigidly (Rodrigues), so a pass costs O(n^2) like a CCD sweep and the "current" direction
of the next bone is the one it was carried to. Arrays are (n, 3); 2D chains (z = 0) stay planar:
every new direction is a combination of the target direction and the current bone direction (or
an in-plane perpendicular) and every rotation axis is +-z.
"""

import numpy as np
from numba import njit

from fabrik.kernels.ccd import half_turn, rotate_tail, start_pose, unit_or
from fabrik.kernels.vec import TINY, any_perpendicular, chain_scale, dist3v

from fabrik.kernels.stopping import REACHED, STALLED, UNREACHABLE


@njit(cache=True, error_model="numpy")
def triangle_area(x, y, z):
    """Area of the triangle with sides x, y, z (Kahan's stable Heron formula; 0 if degenerate)."""
    if x < y:
        x, y = y, x
    if y < z:
        y, z = z, y
    if x < y:
        x, y = y, x
    f = (x + (y + z)) * (z - (x - y)) * (z + (x - y)) * (x + (y - z))
    return 0.25 * np.sqrt(f) if f > 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def triangulation_chain(initial, bone_lengths, target, root, tol):
    """Solve one chain by Triangulation; arguments as the fields of ``fabrik.kernels.rotation_chain``'s
    ``jacobian_chain`` records (the start pose's bone directions are the starting joint angles). Returns
    (positions, iterations, error, status_code); iterations is 1 (0 when the start is within ``tol``)."""
    p = start_pose(initial, bone_lengths, root, target)
    nb = last = p.shape[0] - 1
    total, scale = chain_scale(bone_lengths)
    eps = TINY * scale
    dist = dist3v(p, 0, target)
    err = dist3v(p, last, target)
    if err <= tol:
        return p, 0, err, REACHED
    # suffix sums and maxima of the bone lengths: reach of bones i .. n-2
    # one allocation for all the scratch space (each small array costs about as much as a joint)
    work = np.empty(2 * (nb + 1) + 15)
    outer = work[0:nb + 1]
    longest = work[nb + 1:2 * nb + 2]
    outer[nb] = longest[nb] = 0.0
    for i in range(nb - 1, -1, -1):
        outer[i] = outer[i + 1] + bone_lengths[i]
        longest[i] = max(longest[i + 1], bone_lengths[i])
    u = work[2 * nb + 2:2 * nb + 5]
    cur = work[2 * nb + 5:2 * nb + 8]
    w = work[2 * nb + 8:2 * nb + 11]
    new_dir = work[2 * nb + 11:2 * nb + 14]
    axis = work[2 * nb + 14:2 * nb + 17]
    for i in range(nb):
        a = bone_lengths[i]
        if a <= 0.0:
            continue  # nothing to turn: joint i+1 sits on joint i
        c = dist3v(p, i, target)
        # the bone's current direction (the sub-chain beyond joint i has been carried rigidly by
        # the rotations of the joints before it)
        if not unit_or(p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2], cur, cur, 0.5 * a):
            continue  # cannot happen for a rigid pose; keep the pose rather than divide by zero
        if c <= eps:
            continue  # joint i on the target: every direction gives c' = a; keep the current one
        for k in range(3):
            u[k] = (target[k] - p[i, k]) / c
        c_next = min(c + a, max(abs(c - a), outer[i + 1]))  # R clamped into [|c - a|, c + a]
        # cosine rule, written to stay accurate for nearly flat triangles: the cosine from
        # a^2 + (c - c')(c + c'), the sine from the triangle's area (Kahan's form of Heron's rule)
        cos_d = (a * a + (c - c_next) * (c + c_next)) / (2.0 * a * c)
        sin_d = 2.0 * triangle_area(a, c, c_next) / (a * c)
        norm = np.sqrt(cos_d * cos_d + sin_d * sin_d)
        if norm > 0.0:
            cos_d /= norm
            sin_d /= norm
        else:
            cos_d = 1.0
        along = cur[0] * u[0] + cur[1] * u[1] + cur[2] * u[2]
        if not unit_or(cur[0] - along * u[0], cur[1] - along * u[1], cur[2] - along * u[2], w, w, 1e-9):
            w[:] = any_perpendicular(u)
        # re-orthogonalise w against u (w can come from a nearly parallel pair) and renormalise
        wu = w[0] * u[0] + w[1] * u[1] + w[2] * u[2]
        if not unit_or(w[0] - wu * u[0], w[1] - wu * u[1], w[2] - wu * u[2], w, w, 0.5):
            w[:] = any_perpendicular(u)
        unit_or(cos_d * u[0] + sin_d * w[0], cos_d * u[1] + sin_d * w[1], cos_d * u[2] + sin_d * w[2],
                new_dir, u, 0.5)
        # rotate the sub-chain beyond joint i (rigidly, about joint i) taking cur onto new_dir
        cx = cur[1] * new_dir[2] - cur[2] * new_dir[1]
        cy = cur[2] * new_dir[0] - cur[0] * new_dir[2]
        cz = cur[0] * new_dir[1] - cur[1] * new_dir[0]
        sn = np.sqrt(cx * cx + cy * cy + cz * cz)
        cs = cur[0] * new_dir[0] + cur[1] * new_dir[1] + cur[2] * new_dir[2]
        scale_cs = np.sqrt(cs * cs + sn * sn)
        if sn > 1e-15:
            axis[0], axis[1], axis[2] = cx / sn, cy / sn, cz / sn
            cs /= scale_cs
            sn /= scale_cs
        elif cs < 0.0:
            cs, sn = half_turn(axis, cur)
        else:
            continue
        rotate_tail(p, i, i + 1, axis, cs, sn)
    err = dist3v(p, last, target)
    if err <= tol:
        return p, 1, err, REACHED
    inner = 2.0 * longest[0] - total
    if dist > total or dist < inner - tol:
        return p, 1, err, UNREACHABLE
    return p, 1, err, STALLED
