"""Follow-the-leader (FTL, Brown, Latombe & Montgomery 2004) on a single chain, compiled.

FTL was made for ropes: the grabbed node (here the end effector) is moved to the target and each
following node is pulled along the line towards its new leader, at its rest distance (the same
step as FABRIK's forward stage). A rope fixed at its other end (the root) is handled by running
FTL from each constrained end and averaging: one iteration computes, from the current pose ``p``,

- ``q``: FTL from the target inwards (``q[n-1] = target``, ``q[i]`` on the line from ``q[i+1]``
  through ``p[i]`` at the rest length of bone ``i``), and
- ``r``: FTL from the root outwards (``r[0] = root``, ``r[i+1]`` on the line from ``r[i]`` through
  ``p[i+1]`` at the rest length),

and the new pose is ``p[0] = root``, ``p[n-1] = target`` and ``p[i] = (q[i] + r[i]) / 2`` for the
interior joints. The averaging is what changes the bone lengths (section 5.1 of the FABRIK
paper): the result is not rigid, and an unreachable target is reached by stretching the chain.
The loop stops when no joint moved more than ``tol`` in an iteration. Every step is an affine
combination of points, so 2D chains stay planar.
"""

import numpy as np
from numba import njit

from fabrik.kernels.ccd import start_pose
from fabrik.kernels.vec import TINY, chain_scale, dist3, dist3v, fallback_direction, inner_reach, reach_sweep

from fabrik.kernels.stopping import MAX_ITERATIONS, REACHED, UNREACHABLE


@njit(cache=True, error_model="numpy")
def length_drift(p, bone_lengths):
    """max over bones of |length - rest| / rest (bones of zero rest length: / mean bone length)."""
    total, scale = chain_scale(bone_lengths)
    nb = bone_lengths.shape[0]
    mean = scale / nb if nb > 0 else 1.0
    worst = 0.0
    for i in range(nb):
        rest = bone_lengths[i]
        d = abs(dist3(p, i + 1, p, i) - rest) / (rest if rest > 0.0 else mean)
        worst = max(worst, d)
    return worst


@njit(cache=True, error_model="numpy")
def ftl_chain(initial, bone_lengths, target, root, tol, max_iter):
    """Solve one chain by FTL with averaging; arguments as the fields of ``fabrik.kernels.rotation_chain``'s
    ``jacobian_chain`` records (``tol`` is also the settle threshold on joint movement). Returns (positions,
    iterations, error, status, drift): ``error`` is 0 once an iteration has run (the effector is
    pinned to the target), ``drift`` the ``length_drift`` of the returned pose."""
    p = start_pose(initial, bone_lengths, root, target)
    n = p.shape[0]
    last = n - 1
    total, scale = chain_scale(bone_lengths)
    dist = dist3v(p, 0, target)
    # within tol of the reach counts as reachable: a target at full reach is often a rounding
    # error beyond it, and reported unreachable with error 0 it read as a contradiction
    out_of_reach = dist > total + tol or dist < inner_reach(bone_lengths, total) - tol
    err = dist3v(p, last, target)
    if err <= tol:
        return p, 0, err, REACHED, length_drift(p, bone_lengths)
    # direction used where two joints coincide: from the target back towards the root
    fx, fy, fz, _ = fallback_direction(root, target, TINY * scale)
    q = np.empty((n, 3))
    r = np.empty((n, 3))
    it = 0
    while it < max_iter:
        q[:, :] = p
        r[:, :] = p
        # the two FTL passes: FABRIK's forward and backward stages, each from the same pose
        reach_sweep(q, last - 1, last, -1, target[0], target[1], target[2], bone_lengths, fx, fy, fz, TINY * scale)
        reach_sweep(r, 1, last, 1, root[0], root[1], root[2], bone_lengths, fx, fy, fz, TINY * scale)
        q[0] = r[0] = root  # the ends stay pinned (x = (x + x) / 2 exactly)
        q[last] = r[last] = target
        moved2 = 0.0
        for i in range(n):
            nx = 0.5 * (q[i, 0] + r[i, 0])
            ny = 0.5 * (q[i, 1] + r[i, 1])
            nz = 0.5 * (q[i, 2] + r[i, 2])
            dx = nx - p[i, 0]
            dy = ny - p[i, 1]
            dz = nz - p[i, 2]
            moved2 = max(moved2, dx * dx + dy * dy + dz * dz)
            p[i, 0] = nx
            p[i, 1] = ny
            p[i, 2] = nz
        it += 1
        err = dist3v(p, last, target)
        if moved2 < tol * tol:
            code = REACHED if (err <= tol and not out_of_reach) else UNREACHABLE
            return p, it, err, code, length_drift(p, bone_lengths)
    return p, it, err, MAX_ITERATIONS, length_drift(p, bone_lengths)
