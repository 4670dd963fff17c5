"""The way out of the straight-chain singularity (section 5.4 of the paper), one rule for every method.

A *path* is the run of bones an effector's target acts on alone: from the effector up to its
nearest targeted ancestor (or the root), which is its *base*; a chain's path is the whole chain.
When the path lies straight on the line to its target, no method's own step bends it: FABRIK's
pulls all lie along the line, and so does the gradient of every rotation (CCD's turns and the
Jacobian's columns vanish there). Near the line they are proportional to the distance from it,
so a path a little off the line (by rounding: an SVD of the singular Jacobian returns one of
many equally valid bases, each with its own rounding) escapes only as fast as that distance
grows, which can be slower than the no-progress rule allows.

The rule, applied by every kernel after it declared a stall:

* the path is *short* of its target when its effector is farther from the target than the
  closest the path can come (``fabrik.kernels.stopping.unavoidable_error``, from the path's
  total length and inner reach) plus ``tol``;
* a short path is *on the line* (``path_on_line``) when every joint of it and the target lie
  within ``NEAR_LINE`` times the path's length of the line from the base towards the farthest
  of them, for a target within the path's reach; beyond the reach (a path stretched at its
  target lies on that line where it should) only within rounding (1e-9 of the scale);
* then the path is bent, at most ``MAX_ESCAPES`` times a solve: the rotation-based methods fold
  it (``fold_path``: by ``BEND_ANGLE`` at its middle joint and back by twice that at the next,
  so the path itself is bent), FABRIK moves the target sideways by a tenth of the shortest bone
  for one iteration (``nudge_stuck_paths``; the paper's "repositioning the target during the first
  backward stage"). The direction across the line is ``across``'s.
"""

import numpy as np
from numba import njit

from fabrik.kernels.frames import axis_angle_matrix
from fabrik.kernels.stopping import stall_tol, unavoidable_error
from fabrik.kernels.vec import TINY, any_perpendicular, off_line2, rotate_subtree

#: Angle (radians) of a fold: the path turns by it at its middle joint and back by twice that.
BEND_ANGLE = 0.1

#: A short path counts as lying on the line to its target when every joint and the target are
#: within this fraction of the path's length of that line. Exactly on the line no method's step
#: bends the path; near it, the steps grow with the distance from it, and rounding (an SVD's
#: choice of basis above all) leaves a path that started on the line some 1e-8 of its length off
#: it by the time the solve stalls. Paths farther off are left to the methods: folding straight
#: legs 0.3 degrees from the line whenever the Jacobian transpose stalled on motion capture
#: changed its medians for no gain.
NEAR_LINE = 1e-6

#: Escapes per solve at most.
MAX_ESCAPES = 3

#: Direction components smaller than this (relative to the largest) count as zero in ``across``.
SNAP = 1e-6


@njit(cache=True, error_model="numpy")
def path_reach(parents, lengths, e, base):
    """(total, inner, shortest) of the path from joint ``base`` down to joint ``e``: its summed
    bone lengths, its inner reach (the longest bone less the others, at least 0) and its shortest
    non-zero bone (``total`` when there is none)."""
    total = 0.0
    longest = 0.0
    shortest = np.inf
    j = e
    while j != base:
        length = lengths[j]
        total += length
        longest = max(longest, length)
        if 0.0 < length < shortest:
            shortest = length
        j = parents[j]
    if shortest == np.inf:
        shortest = total
    return total, max(0.0, 2.0 * longest - total), shortest


@njit(cache=True, error_model="numpy")
def path_base(parents, slot, e):
    """The base of effector ``e``'s path: its nearest ancestor with a target (``slot[j] >= 0``),
    or the root."""
    base = parents[e]
    while base > 0 and slot[base] < 0:
        base = parents[base]
    return base


@njit(cache=True, error_model="numpy")
def path_on_line(p, parents, e, base, tx, ty, tz, near, scale, u):
    """Whether the joints of the path from ``base`` to ``e`` in pose ``p`` (n, 3) and the target
    (tx, ty, tz) all lie within ``max(near, 1e-9 * scale)`` of one line through ``p[base]``.

    The line runs from the base towards the farthest of the path's joints and the target; its unit
    direction is written to ``u`` (3,). True also when every point is within ``TINY * scale`` of the
    base (then ``u`` is +x)."""
    ox, oy, oz = p[base, 0], p[base, 1], p[base, 2]
    ux, uy, uz = tx - ox, ty - oy, tz - oz
    best = np.sqrt(ux * ux + uy * uy + uz * uz)
    j = e
    while j != base:
        x, y, z = p[j, 0] - ox, p[j, 1] - oy, p[j, 2] - oz
        r = np.sqrt(x * x + y * y + z * z)
        if r > best:
            best, ux, uy, uz = r, x, y, z
        j = parents[j]
    if best <= TINY * scale:
        u[0], u[1], u[2] = 1.0, 0.0, 0.0
        return True
    u[0], u[1], u[2] = ux / best, uy / best, uz / best
    eps2 = max(near, 1e-9 * scale) ** 2
    if off_line2(tx - ox, ty - oy, tz - oz, u[0], u[1], u[2]) > eps2:
        return False
    j = e
    while j != base:
        if off_line2(p[j, 0] - ox, p[j, 1] - oy, p[j, 2] - oz, u[0], u[1], u[2]) > eps2:
            return False
        j = parents[j]
    return True


@njit(cache=True, error_model="numpy")
def stuck_on_line(p, parents, lengths, e, base, tx, ty, tz, err, tol, scale, u):
    """The rule of the module docstring for one effector: True when the path from ``base`` to
    ``e`` is short of its target (error ``err``) and lies on the line to it; ``u`` (3,) then holds
    the line's direction. Returns (stuck, shortest non-zero bone of the path)."""
    total, inner, shortest = path_reach(parents, lengths, e, base)
    dist = np.sqrt((tx - p[base, 0]) ** 2 + (ty - p[base, 1]) ** 2 + (tz - p[base, 2]) ** 2)
    if err <= unavoidable_error(dist, total, inner, tol) + stall_tol(tol, scale):
        return False, shortest
    near = NEAR_LINE * total if dist <= total else 0.0
    return path_on_line(p, parents, e, base, tx, ty, tz, near, scale, u), shortest


@njit(cache=True, error_model="numpy")
def across(u):
    """A unit vector perpendicular to the unit line direction ``u``, chosen after components of
    ``u`` within ``SNAP`` of zero are set to zero (so that rounding does not choose it; a line in
    the z = 0 plane gets a perpendicular in that plane)."""
    m = max(abs(u[0]), abs(u[1]), abs(u[2]))
    v = np.zeros(3)
    r = 0.0
    for c in range(3):
        if abs(u[c]) > SNAP * m:
            v[c] = u[c]
            r += u[c] * u[c]
    v /= np.sqrt(r)
    return any_perpendicular(v)


@njit(cache=True, error_model="numpy")
def fold_path(p, parents, e, base, u, order, subtree_end, position):
    """The rotation-based methods' escape: fold the path from ``base`` to ``e`` (lying along the
    unit ``u``) by ``BEND_ANGLE`` at its middle joint, about an axis across the line, and back by
    twice that at the next joint, each turn carrying everything below it.

    The middle joint is the first joint of the path's middle bone (a two-bone path folds at its
    base: folded at its elbow, the elbow stays on the line, and CCD, turning the effector at the
    elbow towards a target on that line, can land it on the base, where nothing turns). A path
    only turned at one joint keeps a straight tail, which the damped methods swing back onto the
    line, hence the second turn."""
    steps = 0
    j = e
    while j != base:
        steps += 1
        j = parents[j]
    child = e
    for _ in range(steps - (steps + 1) // 2):
        child = parents[child]
    side = across(u)
    ax = u[1] * side[2] - u[2] * side[1]
    ay = u[2] * side[0] - u[0] * side[2]
    az = u[0] * side[1] - u[1] * side[0]
    rot = np.empty((3, 3))
    axis_angle_matrix(rot, ax, ay, az, BEND_ANGLE)
    rotate_subtree(p, child, parents[child], order, subtree_end, position, rot)
    if child != e:
        inner = e
        while parents[inner] != child:
            inner = parents[inner]
        axis_angle_matrix(rot, ax, ay, az, -2.0 * BEND_ANGLE)
        rotate_subtree(p, inner, child, order, subtree_end, position, rot)


@njit(cache=True, error_model="numpy")
def fold_stuck_chain(p, lengths, target, err, tol, scale):
    """The rule for a whole chain (pose ``p`` (n, 3), bone ``lengths`` (n - 1,)): fold it when it
    is stuck on the line to ``target``. Returns True when it was folded."""
    n = p.shape[0]
    parents = np.arange(-1, n - 1)  # the chain as a tree: joint i hangs from i - 1
    order = np.arange(n)
    subtree_end = np.full(n, n, dtype=np.int64)
    tree_lengths = np.zeros(n)
    tree_lengths[1:] = lengths
    u = np.zeros(3)
    stuck, _ = stuck_on_line(p, parents, tree_lengths, n - 1, 0, target[0], target[1], target[2], err, tol, scale,
                             u)
    if stuck:
        fold_path(p, parents, n - 1, 0, u, order, subtree_end, order)
    return stuck


@njit(cache=True, error_model="numpy")
def fold_stuck_paths(p, parents, lengths, slot, order, subtree_end, position, target_idx, targets, errors, tol, scale,
                     goal=None):
    """The rule for every unreached effector of a tree: fold each path stuck on the line to its
    target (rotation-based methods) or, given ``goal`` (k, 3) (FABRIK), move that path's goal
    across the line by a tenth of its shortest bone (for one iteration; the caller puts it back).
    Returns True if any was folded or moved."""
    u = np.zeros(3)
    changed = False
    for t in range(target_idx.shape[0]):
        e = target_idx[t]
        if e == 0 or errors[t] <= tol:
            continue
        base = path_base(parents, slot, e)
        stuck, shortest = stuck_on_line(p, parents, lengths, e, base, targets[t, 0], targets[t, 1], targets[t, 2],
                                        errors[t], tol, scale, u)
        if not stuck:
            continue
        if goal is None:
            fold_path(p, parents, e, base, u, order, subtree_end, position)
        else:
            side = across(u)
            for c in range(3):
                goal[t, c] = targets[t, c] + 0.1 * shortest * side[c]
        changed = True
    return changed


@njit(cache=True, error_model="numpy")
def nudge_stuck_paths(p, parents, lengths, slot, target_idx, targets, goal, errors, tol, scale):
    """FABRIK's escape for a tree: ``fold_stuck_paths`` with ``goal`` (the tree arrays it folds with unused)."""
    return fold_stuck_paths(p, parents, lengths, slot, parents, parents, parents, target_idx, targets, errors, tol,
                            scale, goal)
