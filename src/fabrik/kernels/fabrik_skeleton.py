"""FABRIK on a tree of joints with several end effectors (sections 4.1 and 4.2), compiled.

The tree arrives flattened (see ``fabrik.solvers.skeleton_fabrik.skeleton_arrays``): joints in
topological order (``parents[i] < i``, joint 0 the root with parent -1), ``lengths[i]`` the bone
from ``parents[i]`` to joint ``i`` (0 for the root, 0 allowed elsewhere), ``rest_dirs[i]`` a unit
vector along that bone at rest (used only where two joints coincide and a direction is
undefined), ``reach[i]`` the summed bone lengths from the root to joint ``i``.

One iteration (the whole loop runs inside ``fabrik_skeleton``):

* Joints are *active* when they are targeted or have a targeted joint below them; the others
  form *untargeted subtrees* (e.g. fingers beyond a targeted wrist).
* Forward stage, joints visited from the last to the first (children before parents): a targeted
  joint is pinned on its target (this is how targets on inner joints work, section 4.2: the
  joint acts as an end effector for everything above it, and proposals from below are
  ignored); any other active joint is placed at the *centroid* of the positions proposed by its
  active children (a single child gives plain FABRIK; several make it a sub-base, section 4.1).
  Each active joint then proposes a position for its parent: on the line from the joint through
  the parent's previous position, at the bone's length.
* Backward stage, joints visited from the root outwards: the root is put back on ``root``; every
  active joint is placed on the line from its (new) parent towards its forward-stage position,
  at the bone's length; a joint of an untargeted subtree keeps its bone *vector* (world
  direction and length), i.e. untargeted subtrees are carried along rigidly by translation.

A path lying straight on the line to its target (the singularity of section 5.4) is bent by
nudging that target sideways for one iteration when the solve stalls (``fabrik.kernels.singularity``).

Bone lengths are therefore exact after every iteration (zero-length bones included), and no
division is made by a distance below ``TINY * scale``. Status codes follow
``fabrik.solvers.result.STATUSES``; negative codes report bad input (see ``BAD_INDEX``).
"""

import numpy as np
from numba import njit

from fabrik.kernels.stopping import (
    MAX_ITERATIONS,
    REACHED,
    STALLED,
    UNREACHABLE,
    effectors_stalled,
    max_joint_move,
    remember_pose,
    still_converging,
)
from fabrik.kernels.frames import rotation_between
from fabrik.kernels.rotation_fit import (cross_covariance, definite, det3, fit_gradient, kabsch, newton_turn,
                                        refine_rotation, turn_rotation)
from fabrik.kernels.singularity import MAX_ESCAPES, nudge_stuck_paths
from fabrik.kernels.vec import TINY, place_on_line, rotate_span, rotate_subtree

#: Newton steps per rigid-group fit and stage (warm-started from the previous fit).
RIGID_FIT_STEPS = 2

#: Newton steps of ``seat_group`` per backward stage at most, and the turn (radians) below which
#: they stop.
SEAT_STEPS = 16
SEAT_STOP = 1e-9
#: Halvings of a ``seat_group`` step that would not raise its objective, at most.
SEAT_HALVINGS = 6

#: Returned as the status when a target index is out of range or appears twice.
BAD_INDEX = -1
#: Returned when ``root`` was given explicitly and the root joint has a different target.
BAD_ROOT = -2


@njit(cache=True, error_model="numpy")
def mark_targets(parents, target_idx):
    """Map joints to target slots and find the active joints.

    Returns (slot, active, ok): ``slot[j]`` is the row of joint j's target or -1; ``active[j]`` is
    True when j or a joint below it is targeted (the root always is); ``ok`` is False when an
    index is out of range or repeated.
    """
    n = parents.shape[0]
    slot = np.full(n, -1, dtype=np.int64)
    active = np.zeros(n, dtype=np.bool_)
    for t in range(target_idx.shape[0]):
        j = target_idx[t]
        if j < 0 or j >= n or slot[j] >= 0:
            return slot, active, False
        slot[j] = t
    for i in range(n - 1, 0, -1):
        if slot[i] >= 0:
            active[i] = True
        if active[i]:
            active[parents[i]] = True
    active[0] = True
    return slot, active, True


@njit(cache=True, error_model="numpy")
def resolve_root(root, root_from_target, slot, targets, scale):
    """The fixed root position: the root joint's own target when it has one (and ``root`` was not
    given explicitly). Returns (root3, ok); ok is False when an explicit ``root`` conflicts with
    the root joint's target."""
    r = root.copy()
    if slot[0] >= 0:
        s = slot[0]
        if root_from_target:
            for c in range(3):
                r[c] = targets[s, c]
        else:
            d = 0.0
            for c in range(3):
                d += (targets[s, c] - root[c]) ** 2
            if np.sqrt(d) > 1e-12 * scale:
                return r, False
    return r, True


@njit(cache=True, error_model="numpy")
def tree_setup(parents, lengths, reach, target_idx, targets, root, root_from_target):
    """The checks and set-up every tree kernel starts with.

    Returns (code, scale, slot, active, root3, unreachable): ``code`` 0, or ``BAD_INDEX`` /
    ``BAD_ROOT`` (then nothing else is meaningful); ``scale`` the summed bone lengths (1 for a
    skeleton without length); ``slot`` / ``active`` from ``mark_targets``; ``root3`` the fixed
    root (``resolve_root``); ``unreachable`` whether some target is beyond its path's reach.
    """
    total = 0.0
    for i in range(parents.shape[0]):
        total += lengths[i]
    scale = total if total > 0.0 else 1.0
    slot, active, ok = mark_targets(parents, target_idx)
    if not ok:
        return BAD_INDEX, scale, slot, active, root.copy(), False
    root3, ok = resolve_root(root, root_from_target, slot, targets, scale)
    if not ok:
        return BAD_ROOT, scale, slot, active, root3, False
    return 0, scale, slot, active, root3, any_unreachable(target_idx, targets, root3, reach)


@njit(cache=True, error_model="numpy")
def effector_errors(p, target_idx, targets, errors):
    """Fill ``errors[t] = |p[target_idx[t]] - targets[t]|``; return the largest (0 for none)."""
    worst = 0.0
    for t in range(target_idx.shape[0]):
        j = target_idx[t]
        x = p[j, 0] - targets[t, 0]
        y = p[j, 1] - targets[t, 1]
        z = p[j, 2] - targets[t, 2]
        e = np.sqrt(x * x + y * y + z * z)
        errors[t] = e
        if e > worst:
            worst = e
    return worst


@njit(cache=True, error_model="numpy")
def lengths_hold(p, parents, lengths, scale):
    """True when every bone of the pose ``p`` has its skeleton length (to 1e-9 of ``scale``)."""
    for i in range(1, parents.shape[0]):
        q = parents[i]
        x = p[i, 0] - p[q, 0]
        y = p[i, 1] - p[q, 1]
        z = p[i, 2] - p[q, 2]
        if abs(np.sqrt(x * x + y * y + z * z) - lengths[i]) > 1e-9 * scale:
            return False
    return True


@njit(cache=True, error_model="numpy")
def any_unreachable(target_idx, targets, root, reach):
    """True when some target lies farther from the root than the bone lengths along its path."""
    for t in range(target_idx.shape[0]):
        d = 0.0
        for c in range(3):
            d += (targets[t, c] - root[c]) ** 2
        if np.sqrt(d) > reach[target_idx[t]] * (1.0 + 1e-12) + 1e-300:
            return True
    return False


@njit(cache=True, error_model="numpy")
def fabrik_skeleton(parents, lengths, rest_dirs, reach, target_idx, targets, initial, root, root_from_target,
                    tol, max_iter, group_of, group_start, group_members, group_offsets, in_group, releasable,
                    released, limb_tops, order,
                    subtree_end, position):
    """Solve a skeleton for several targets. Returns (positions (n, 3), iterations, errors (k,), status).

    parents (n,) int64, lengths (n,), rest_dirs (n, 3), reach (n,): the flattened tree (module
    docstring). target_idx (k,) int64 distinct joint indices; targets (k, 3) their goals.
    initial (n, 3) the start pose (copied, never written). root (3,) the fixed root position;
    when ``root_from_target`` is True and the root joint is targeted, its target is used
    instead. tol >= 0 and max_iter >= 0 as in the chain kernel.

    The start pose is first moved rigidly so that its root sits on the fixed root (as the
    rotation-based methods start), then, when ``limb_tops`` (int64, ancestors before
    descendants; entries as in ``limb_span``) is not empty, each limb is swung about its pivot
    towards its targets (``swing_limbs``; ``order``, ``subtree_end``, ``position`` as in ``SkeletonArrays``).

    Rigid groups (``rigid_sub_bases``; none when ``group_start`` has a single entry, and then
    ``group_of`` is not read): ``group_of[j]`` is the group whose centre is joint j, or -1; group
    g's members are ``group_members[group_start[g]:group_start[g + 1]]``, children of the centre
    or joined to it through zero-length joints, with rest offsets ``group_offsets`` from it;
    ``in_group[j]`` the group whose member j is or which j lies inside (a zero-length joint
    between centre and member), else -1. ``releasable`` (bool, one per group): the groups so marked
    are a prior rather than a rule; when the solve stalls short of its targets with them, they
    are released and the iterations go on with those sub-bases free (a palm that is nearly, not
    exactly, rigid); the others stay rigid. ``released`` (bool, one per group, or one when there
    are none) is written: which groups this solve released. Members move as one rigid body about their
    centre: in the forward stage the centre goes to the centroid of all its proposals, each
    targeted member proposing ``member - R o`` (their mean is the best-fit placement of the group)
    and its other children proposing as usual; in the backward stage every member is put at
    ``centre + R o``, R the rotation that best maps the rest offsets onto the members'
    forward-stage positions (refined from the previous R by Newton steps). A held (not
    releasable) group whose centre hangs on a bone is first seated on that bone's sphere
    together with its turn (``seat_group``), so that the centre and R best place the members.

    Stops with ``REACHED`` when every effector is within ``tol`` of its target; with
    ``UNREACHABLE``/``STALLED`` on no progress, as the chain kernel: no effector moved by ``tol``
    in an iteration, the largest error fell by less than ``PROGRESS_FRACTION`` of itself, and in
    the next iteration no joint at all moves by ``tol`` (``UNREACHABLE`` when some target is
    beyond the reach of its path from the root); with ``MAX_ITERATIONS`` at the cap. A negative
    status (``BAD_INDEX``, ``BAD_ROOT``) means bad input and nothing was solved.
    """
    n = parents.shape[0]
    k = target_idx.shape[0]
    p = initial.copy()
    errors = np.zeros(k)
    code, scale, slot, active, root3, unreachable = tree_setup(parents, lengths, reach, target_idx, targets, root,
                                                               root_from_target)
    if code != 0:
        return p, 0, errors, code
    eps = TINY * scale
    # Start where the root is: a moved root carries the whole pose with it instead of dragging
    # the bones next to it around (which swings short pelvis and collar bones every frame).
    for c in range(3):
        shift = root3[c] - p[0, c]
        for i in range(n):
            p[i, c] += shift
    if limb_tops.shape[0] > 0:
        swing_limbs(p, limb_tops, parents, order, subtree_end, position, slot, targets, eps)

    if max_iter == 0 and not lengths_hold(p, parents, lengths, scale):
        rebuild_lengths(p, parents, lengths, rest_dirs, eps)  # no iteration: the start pose made rigid
    err = effector_errors(p, target_idx, targets, errors)
    if (err <= tol and p[0, 0] == root3[0] and p[0, 1] == root3[1] and p[0, 2] == root3[2]
            and lengths_hold(p, parents, lengths, scale)):
        return p, 0, errors, REACHED

    # Bone vectors of untargeted subtrees: their start direction at the skeleton's length.
    carried = np.zeros((n, 3))
    for i in range(1, n):
        if not active[i]:
            carried[i, 0], carried[i, 1], carried[i, 2] = bone_at_length(p, i, parents[i], lengths[i], rest_dirs, eps)

    n_groups = group_start.shape[0] - 1
    rot = np.zeros((max(n_groups, 1), 3, 3))
    active_members = np.zeros(max(n_groups, 1), dtype=np.int64)
    released[:] = False
    can_release = False
    for g in range(n_groups):
        can_release = can_release or releasable[g]
    src = np.empty((max(group_members.shape[0], 1), 3))
    fit_scratch = np.empty((2, 3, 3))  # scratch of the group fits
    dst = np.empty((max(group_members.shape[0], 1), 3))
    for g in range(n_groups):
        m = 0
        centre = group_members[group_start[g]]
        while group_of[centre] != g:
            centre = parents[centre]
        for idx in range(group_start[g], group_start[g + 1]):
            member = group_members[idx]
            for c in range(3):
                src[m, c] = group_offsets[idx, c]
                dst[m, c] = p[member, c] - p[centre, c]
            if active[member]:
                active_members[g] += 1
            m += 1
        rot[g] = kabsch(cross_covariance(src, dst, m, fit_scratch[0]))

    active_list = np.empty(n, dtype=np.int64)
    n_active = 0
    for i in range(n):
        if active[i]:
            active_list[n_active] = i
            n_active += 1
    proposal_sum = np.zeros((n, 3))
    proposal_count = np.zeros(n, dtype=np.int64)
    before = np.empty((k, 3))
    snapshot = np.empty((n, 3))
    check_pose = False
    goal = targets.copy()
    nudged = False
    nudges = 0
    drop = last_drop = np.inf  # how much the last iterations lowered the largest error: none yet
    it = 0
    while it < max_iter:
        remember_pose(p, target_idx, before, snapshot, check_pose)
        prev_err = err
        older_drop = last_drop
        last_drop = drop
        # forward stage: from the effectors inwards, sub-bases at the centroid of their proposals
        for a in range(n_active):
            i = active_list[a]
            proposal_count[i] = 0
            proposal_sum[i, 0] = 0.0
            proposal_sum[i, 1] = 0.0
            proposal_sum[i, 2] = 0.0
        for a in range(n_active - 1, 0, -1):  # active_list[0] is the root
            i = active_list[a]
            s = slot[i]
            g = group_of[i] if n_groups > 0 else -1
            if s >= 0:
                p[i, 0] = goal[s, 0]
                p[i, 1] = goal[s, 1]
                p[i, 2] = goal[s, 2]
            elif g >= 0 and active_members[g] >= 2 and not released[g]:
                place_group_centre(p, i, g, rot, active, group_start, group_members, group_offsets, src, dst,
                                   proposal_sum, proposal_count, fit_scratch[0])
            elif proposal_count[i] > 0:
                w = 1.0 / proposal_count[i]
                p[i, 0] = proposal_sum[i, 0] * w
                p[i, 1] = proposal_sum[i, 1] * w
                p[i, 2] = proposal_sum[i, 2] * w
            q = parents[i]
            if n_groups > 0 and in_group[i] >= 0 and active_members[in_group[i]] >= 2 and not released[in_group[i]]:
                continue  # a rigid member proposes through its group's fit at the centre
            x = p[q, 0] - p[i, 0]
            y = p[q, 1] - p[i, 1]
            z = p[q, 2] - p[i, 2]
            r = np.sqrt(x * x + y * y + z * z)
            if r > eps:
                lam = lengths[i] / r
                proposal_sum[q, 0] += p[i, 0] + lam * x
                proposal_sum[q, 1] += p[i, 1] + lam * y
                proposal_sum[q, 2] += p[i, 2] + lam * z
            else:
                proposal_sum[q, 0] += p[i, 0] - lengths[i] * rest_dirs[i, 0]
                proposal_sum[q, 1] += p[i, 1] - lengths[i] * rest_dirs[i, 1]
                proposal_sum[q, 2] += p[i, 2] - lengths[i] * rest_dirs[i, 2]
            proposal_count[q] += 1
        # backward stage: root back on its base, then outwards along every branch
        p[0, 0] = root3[0]
        p[0, 1] = root3[1]
        p[0, 2] = root3[2]
        if n_groups > 0 and group_of[0] >= 0 and not released[group_of[0]]:
            place_group_members(p, 0, group_of[0], rot, active, group_start, group_members, group_offsets, carried,
                                src, dst, fit_scratch[0])
        for i in range(1, n):
            q = parents[i]
            if active[i]:
                place_on_line(p, i, q, lengths[i], rest_dirs[i, 0], rest_dirs[i, 1], rest_dirs[i, 2], eps)
            else:
                p[i, 0] = p[q, 0] + carried[i, 0]
                p[i, 1] = p[q, 1] + carried[i, 1]
                p[i, 2] = p[q, 2] + carried[i, 2]
            if n_groups > 0 and group_of[i] >= 0 and not released[group_of[i]]:
                # a centre that is itself a held member of its parent's group (a thigh carrying its
                # knee and a twist joint, on a pelvis held rigid) was placed by that group: only
                # its own group's turn is fitted, or the parent group would bend
                nested = in_group[i] >= 0 and active_members[in_group[i]] >= 2 and not released[in_group[i]]
                if not releasable[group_of[i]] and active[i] and lengths[i] > eps and not nested:
                    seat_group(p, i, q, lengths[i], group_of[i], rot, active, group_start, group_members,
                               group_offsets, eps, fit_scratch)
                place_group_members(p, i, group_of[i], rot, active, group_start, group_members, group_offsets,
                                    carried, src, dst, fit_scratch[0])
        it += 1
        err = effector_errors(p, target_idx, targets, errors)
        if err <= tol:
            return p, it, errors, REACHED
        drop = prev_err - err
        if nudged:
            nudged = False
            goal[:, :] = targets
        if check_pose:
            check_pose = False
            if max_joint_move(p, snapshot) < tol:
                if can_release:
                    can_release = False
                    for g in range(n_groups):
                        released[g] = releasable[g]
                    continue
                # a straight path on the line to its target (section 5.4) never bends by itself
                if nudges < MAX_ESCAPES and nudge_stuck_paths(p, parents, lengths, slot, target_idx, targets, goal,
                                                              errors, tol, scale):
                    nudged = True
                    nudges += 1
                    continue
                if unreachable:
                    return p, it, errors, UNREACHABLE
                # slow is not stuck (docs/conventions.md): targets within their paths' reach whose
                # largest error is still on course to tol keep the solve going
                if not still_converging(err, prev_err, last_drop, older_drop, tol):
                    return p, it, errors, STALLED
        if effectors_stalled(p, before, target_idx, tol, err, prev_err):
            check_pose = True
    return p, it, errors, MAX_ITERATIONS


@njit(cache=True, error_model="numpy")
def fabrik_skeleton_frames(parents, lengths, rest_dirs, reach, target_idx, targets, initial, roots, root_from_target,
                           tol, max_iter, group_of, group_start, group_members, group_offsets, in_group, releasable,
                           limb_tops, order, subtree_end, position, out, iterations, errors, codes):
    """``fabrik_skeleton`` over a run of frames, each started from the answer of the frame before.

    targets (F, k, 3): frame f's goals, row t for joint ``target_idx[t]``; roots (F, 3): frame
    f's fixed root (with ``root_from_target`` as in ``fabrik_skeleton``, for every frame);
    initial (n, 3): the start of frame 0 (never written). The other inputs are
    ``fabrik_skeleton``'s. Frame f's answer goes to ``out[f]`` (n, 3), its iterations to
    ``iterations[f]``, its effectors' errors to ``errors[f]`` (k,) and its status to ``codes[f]``.

    Returns the number of frames solved: F, or the index of the first frame whose status is
    negative (bad input, ``codes[f]`` says which), where the run stops. One call for a whole take
    saves the per-frame cost of checking inputs and building results in Python, about as much
    again as a warm-started frame's iterations on a CMU walk.
    """
    released = np.zeros_like(releasable)
    prev = initial
    for f in range(targets.shape[0]):
        p, it, err, code = fabrik_skeleton(parents, lengths, rest_dirs, reach, target_idx, targets[f], prev, roots[f],
                                           root_from_target, tol, max_iter, group_of, group_start, group_members,
                                           group_offsets, in_group, releasable, released, limb_tops, order,
                                           subtree_end, position)
        codes[f] = code
        if code < 0:
            return f
        out[f] = p
        iterations[f] = it
        errors[f] = err
        prev = p
    return targets.shape[0]


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
def swing_limbs(p, limb_tops, parents, order, subtree_end, position, slot, targets, eps):
    """Turn each limb rigidly about its pivot so that it points at its targets (in place).

    For every entry of ``limb_tops`` (ancestors first; see ``limb_span``) the joints of the limb
    turn together about its pivot by ``limb_rotation``. Limbs with no target, or with either
    centroid within ``eps`` of the pivot, stay as they are.
    """
    R = np.empty((3, 3))
    for a in range(limb_tops.shape[0]):
        pivot, start, stop = limb_span(limb_tops[a], parents, subtree_end, position)
        if limb_rotation(R, p, start, stop, pivot, order, slot, targets, eps):
            rotate_span(p, start, stop, pivot, order, R)


@njit(cache=True, error_model="numpy")
def limb_rotation(R, p, start, stop, pivot, order, slot, targets, eps):
    """R <- the smallest rotation taking the direction from ``p[pivot]`` to the centroid of the
    targeted joints among ``order[start:stop]`` onto the direction to the centroid of their
    targets. False (R untouched) when there is no such joint or either centroid is within ``eps``."""
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
        return False
    cx = cx / m - p[pivot, 0]
    cy = cy / m - p[pivot, 1]
    cz = cz / m - p[pivot, 2]
    tx = tx / m - p[pivot, 0]
    ty = ty / m - p[pivot, 1]
    tz = tz / m - p[pivot, 2]
    nc = np.sqrt(cx * cx + cy * cy + cz * cz)
    nt = np.sqrt(tx * tx + ty * ty + tz * tz)
    if nc <= eps or nt <= eps:
        return False
    rotation_between(R, cx / nc, cy / nc, cz / nc, tx / nt, ty / nt, tz / nt)
    return True


@njit(cache=True, error_model="numpy")
def place_group_centre(p, centre, g, rot, active, group_start, group_members, group_offsets, src, dst,
                       proposal_sum, proposal_count, h):
    """Forward stage at a rigid group's centre: fit the group to its targeted members' positions
    (``rot[g]`` refined) and put the centre at the centroid of the members' rigid proposals
    (``member - R o``) and the proposals of the centre's other children. ``h``: 3 x 3 scratch."""
    m = 0
    ms0 = ms1 = ms2 = 0.0  # the offsets' mean
    md0 = md1 = md2 = 0.0  # the members' mean
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        if active[k]:
            for c in range(3):
                src[m, c] = group_offsets[idx, c]
                dst[m, c] = p[k, c]
            ms0 += src[m, 0]
            ms1 += src[m, 1]
            ms2 += src[m, 2]
            md0 += dst[m, 0]
            md1 += dst[m, 1]
            md2 += dst[m, 2]
            m += 1
    ms0 /= m
    ms1 /= m
    ms2 /= m
    md0 /= m
    md1 /= m
    md2 /= m
    for k in range(m):
        src[k, 0] -= ms0
        src[k, 1] -= ms1
        src[k, 2] -= ms2
        dst[k, 0] -= md0
        dst[k, 1] -= md1
        dst[k, 2] -= md2
    refine_rotation(rot[g], cross_covariance(src, dst, m, h), RIGID_FIT_STEPS)
    r = rot[g]
    total = m + proposal_count[centre]
    a0, a1, a2 = rotate3(r, ms0, ms1, ms2)
    p[centre, 0] = (m * (md0 - a0) + proposal_sum[centre, 0]) / total
    p[centre, 1] = (m * (md1 - a1) + proposal_sum[centre, 1]) / total
    p[centre, 2] = (m * (md2 - a2) + proposal_sum[centre, 2]) / total


@njit(cache=True, error_model="numpy")
def place_group_members(p, centre, g, rot, active, group_start, group_members, group_offsets, carried, src, dst, h):
    """Backward stage at a rigid group's centre (already placed): turn the group towards its
    targeted members' forward-stage positions and put every member at ``centre + R o``
    (untargeted members through their carried bone vectors). ``h``: 3 x 3 scratch."""
    m = 0
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        if active[k]:
            for c in range(3):
                src[m, c] = group_offsets[idx, c]
                dst[m, c] = p[k, c] - p[centre, c]
            m += 1
    if m > 0:
        refine_rotation(rot[g], cross_covariance(src, dst, m, h), RIGID_FIT_STEPS)
    r = rot[g]
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        for c in range(3):
            v = r[c, 0] * group_offsets[idx, 0] + r[c, 1] * group_offsets[idx, 1] + r[c, 2] * group_offsets[idx, 2]
            if active[k]:
                p[k, c] = p[centre, c] + v
            else:
                carried[k, c] = v


@njit(cache=True, inline="always", error_model="numpy")
def rotate3(rt, x, y, z):
    """The 3 x 3 matrix ``rt`` times the vector (x, y, z), as three floats."""
    return (rt[0, 0] * x + rt[0, 1] * y + rt[0, 2] * z, rt[1, 0] * x + rt[1, 1] * y + rt[1, 2] * z,
            rt[2, 0] * x + rt[2, 1] * y + rt[2, 2] * z)


@njit(cache=True, inline="always", error_model="numpy")
def seat_value(rt, h, ms0, ms1, ms2, w0, w1, w2, m, length):
    """``seat_group``'s F(R) = tr(R^T H) - M / 2 (|w - R ms| - length)^2."""
    value = 0.0
    for r in range(3):
        for c in range(3):
            value += rt[r, c] * h[r, c]
    a0, a1, a2 = rotate3(rt, ms0, ms1, ms2)
    gap = np.sqrt((w0 - a0) ** 2 + (w1 - a1) ** 2 + (w2 - a2) ** 2) - length
    return value - 0.5 * m * gap * gap


@njit(cache=True, error_model="numpy")
def seat_group(p, centre, parent, length, g, rot, active, group_start, group_members, group_offsets, eps, scratch):
    """Backward stage at a held group's centre (already on its bone's sphere about
    ``p[parent]``, ``length`` > ``eps`` from it): choose the centre on that sphere and the group's
    turn R together, so that the targeted members come as close as they can to their
    forward-stage positions m_k (rest offsets o_k from the centre).

    With M members, ms and md the means of the o_k and the m_k, and the centre at
    ``parent + length * d`` (d a unit vector), sum_k |centre + R o_k - m_k|^2 is, up to a constant,
    ``-2 tr(R^T H) + M |length d - v|^2`` with H = sum_k (m_k - md)(o_k - ms)^T and
    v = md - parent - R ms. The best d is v / |v|, which leaves
    ``F(R) = tr(R^T H) - M / 2 (|v| - length)^2`` to maximise over R alone: Newton steps on R's
    rotation vector from the last R (with F's exact Hessian where that is negative definite,
    else with the second term's Gauss-Newton part; a step that would lower F halved, at most
    ``SEAT_HALVINGS`` times; at most ``SEAT_STEPS`` steps, until one turns R by less than
    ``SEAT_STOP`` rad), then the centre goes to ``parent + length * v / |v|``.

    The plain backward stage (the centre on the line towards its forward-stage position, then the
    group turned about it) left a chest on a nearly straight spine to creep: each backward stage
    took back about 90 % of the chest's forward move, and a Mixamo-style take needed 65
    iterations a frame with 18 of 60 frames stalled short of their targets. Alternating the two
    halves of the problem (the best turn for the centre, the best centre for the turn) fixed
    that, but converged linearly: up to 32 rounds a stage, half the time of a frame.
    ``scratch``: (2, 3, 3)."""
    h = scratch[0]
    trial = scratch[1]
    m = 0
    ms0 = ms1 = ms2 = 0.0
    md0 = md1 = md2 = 0.0
    h[:, :] = 0.0  # sum_k m_k o_k^T, then H
    for idx in range(group_start[g], group_start[g + 1]):
        k = group_members[idx]
        if active[k]:
            o0 = group_offsets[idx, 0]
            o1 = group_offsets[idx, 1]
            o2 = group_offsets[idx, 2]
            ms0 += o0
            ms1 += o1
            ms2 += o2
            md0 += p[k, 0]
            md1 += p[k, 1]
            md2 += p[k, 2]
            for r in range(3):
                h[r, 0] += p[k, r] * o0
                h[r, 1] += p[k, r] * o1
                h[r, 2] += p[k, r] * o2
            m += 1
    if m == 0:
        return
    ms0 /= m
    ms1 /= m
    ms2 /= m
    md0 /= m
    md1 /= m
    md2 /= m
    for r in range(3):
        mdr = md0 if r == 0 else (md1 if r == 1 else md2)
        h[r, 0] -= m * mdr * ms0
        h[r, 1] -= m * mdr * ms1
        h[r, 2] -= m * mdr * ms2
    w0 = md0 - p[parent, 0]
    w1 = md1 - p[parent, 1]
    w2 = md2 - p[parent, 2]
    rt = rot[g]
    now = seat_value(rt, h, ms0, ms1, ms2, w0, w1, w2, m, length)
    for _ in range(SEAT_STEPS):
        gx, gy, gz, tr, k00, k01, k02, k11, k12, k22 = fit_gradient(rt, h)
        # a = R ms and v = md - parent - a
        a0, a1, a2 = rotate3(rt, ms0, ms1, ms2)
        v0 = w0 - a0
        v1 = w1 - a1
        v2 = w2 - a2
        rr = np.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        aa = a0 * a0 + a1 * a1 + a2 * a2
        scale = abs(tr) + m * aa
        if rr > eps:
            # |v| changes by b . w / |v| for the turn w, b = v x a, to first order (r^2 grows by
            # 2 b . w + w^T Q w, Q = (|a|^2 + v . a) I - a a^T - (a v^T + v a^T) / 2): the gradient
            # of M / 2 (|v| - length)^2 and its Hessian, M b b^T / |v|^2 plus f (Q - b b^T / |v|^2)
            # with f = M (|v| - length) / |v|. Where the whole is not positive definite (members
            # whose offsets are centred near the centre, |a| small, leave a turn nearly free)
            # the second part is dropped (Gauss-Newton).
            b0 = v1 * a2 - v2 * a1
            b1 = v2 * a0 - v0 * a2
            b2 = v0 * a1 - v1 * a0
            f = m * (rr - length) / rr
            gx -= f * b0
            gy -= f * b1
            gz -= f * b2
            cb = m / (rr * rr)
            k00 += cb * b0 * b0
            k01 += cb * b0 * b1
            k02 += cb * b0 * b2
            k11 += cb * b1 * b1
            k12 += cb * b1 * b2
            k22 += cb * b2 * b2
            cb = f / (rr * rr)
            diag = aa + v0 * a0 + v1 * a1 + v2 * a2
            e00 = k00 + f * (diag - a0 * a0 - v0 * a0) - cb * b0 * b0
            e01 = k01 - f * (a0 * a1 + 0.5 * (a0 * v1 + v0 * a1)) - cb * b0 * b1
            e02 = k02 - f * (a0 * a2 + 0.5 * (a0 * v2 + v0 * a2)) - cb * b0 * b2
            e11 = k11 + f * (diag - a1 * a1 - v1 * a1) - cb * b1 * b1
            e12 = k12 - f * (a1 * a2 + 0.5 * (a1 * v2 + v1 * a2)) - cb * b1 * b2
            e22 = k22 + f * (diag - a2 * a2 - v2 * a2) - cb * b2 * b2
            if definite(e00, e01, e11, det3(e00, e01, e02, e11, e12, e22), scale):
                k00, k01, k02, k11, k12, k22 = e00, e01, e02, e11, e12, e22
        wx, wy, wz = newton_turn(k00, k01, k02, k11, k12, k22, gx, gy, gz, scale)
        # F is not concave everywhere: halve a step that would lower it
        turned = 0.0
        for _ in range(SEAT_HALVINGS):
            trial[:, :] = rt
            turned = turn_rotation(trial, wx, wy, wz)
            if turned == 0.0:
                break
            value = seat_value(trial, h, ms0, ms1, ms2, w0, w1, w2, m, length)
            if value >= now:
                now = value
                break
            wx *= 0.5
            wy *= 0.5
            wz *= 0.5
        else:
            break  # no step along w raises F: R is as good as this turn gets
        rt[:, :] = trial
        if turned < SEAT_STOP:
            break
    a0, a1, a2 = rotate3(rt, ms0, ms1, ms2)
    # the centre where the members' fit puts it, pulled onto the sphere (where it meets the
    # parent, the centre's current direction is kept)
    x = p[centre, 0]
    y = p[centre, 1]
    z = p[centre, 2]
    p[centre, 0] = md0 - a0
    p[centre, 1] = md1 - a1
    p[centre, 2] = md2 - a2
    place_on_line(p, centre, parent, length, (x - p[parent, 0]) / length, (y - p[parent, 1]) / length,
                  (z - p[parent, 2]) / length, eps)
