"""FABRIK on a tree of joints with several end effectors (sections 4.1-4.3), with or without joint
limits: one iteration driver, compiled.

Inputs are the named records of ``fabrik.kernels.records`` (their fields listed there), built
by ``fabrik.model.rig`` and the solvers: the model (``Tree``, ``Groups`` (``fabrik.kernels.
rigid_groups``; the empty set when off), ``TreeLimits`` (``fabrik.kernels.tree_limits``)); the
solve's ``TreeTask`` (targets, start pose and frames, root); its ``Stop`` (``tol``, ``max_iter``)
and ``TreeOptions`` (``root_fixed``, ``limb_tops``, ``start_step``). A solve given frames follows
them and places joints under the limits; one given no frames ((0, 3, 3) and empty limit tables)
places them on lines, as the paper's FABRIK.

One iteration:

* Joints are *active* when they are targeted or have a targeted joint below them; the others
  form *untargeted subtrees* (e.g. fingers beyond a targeted wrist).
* Forward stage, active joints from the last to the first (children before parents): a targeted
  joint is pinned on its target (targets on inner joints, section 4.2); the centre of a held
  rigid group goes where the group's fit puts it; any other active joint goes to the *centroid*
  of the positions its active children propose (one child: plain FABRIK; several: a sub-base,
  section 4.1). Then the joint's bone is placed and the joint proposes its parent's position at
  the bone's length behind it: along the line through the parent's old position, or, with
  limits, along its frame restricted by the limits (the limited placement of
  ``fabrik.kernels.tree_limits``, written out in the loop).
* Backward stage, from the root outwards: the root back on ``root``; every active joint on the
  line from its new parent towards its forward-stage position (with limits: ``backward_stage``,
  which projects every bone into its limit); untargeted subtrees carried along (by translation
  without limits; with their frames relative to the parent with them); rigid groups placed.

Set-up and stopping are the same with and without limits: the start pose may first take one
damped least-squares step (``start_step``, ``fabrik.kernels.tree_methods``); it moves with the
root; limbs may be swung towards their targets (``limb_tops``); the stopping rules are those of
``fabrik.kernels.stopping`` (a stall confirmed when no joint moved by ``tol`` in the next
iteration), except that a stall first releases releasable groups and bends paths stuck on the line
to their targets (``fabrik.kernels.singularity``); after ``NO_PROGRESS_WINDOW`` iterations without
a ``PROGRESS_FRACTION`` improvement, off course, a solve stops (limits can make FABRIK cycle); the
best pose seen is returned when a solve stops short. Bone lengths are exact after every iteration.
"""

import numpy as np
from numba import njit

from fabrik.kernels.rigid_groups import (fit_groups, group_ends, place_group_centre, place_group_members,
                                         seat_group)
from fabrik.kernels.singularity import MAX_ESCAPES, nudge_stuck_paths
from fabrik.kernels.stopping import (MAX_ITERATIONS, NO_PROGRESS_WINDOW, PROGRESS_FRACTION, REACHED, STALLED,
                                      UNREACHABLE, effectors_stalled, max_joint_move, remember_pose, stall_tol,
                                      still_converging)
from fabrik.kernels.tree import (bone_at_length, effector_errors, lengths_hold, move_to_root, rebuild_lengths,
                                 swing_limbs, tree_setup)
from fabrik.kernels.constraints import COL_TWIST_FLAG, COL_TYPE, TYPE_HINGE
from fabrik.kernels.tree_limits import (_circular_reverse, _cone_inside, _hinge_reverse, _reverse_general, _tr,
                                        _unit_between, align_hinge_twist, backward_stage, fit_root_frame, own_limit,
                                        row_limits)
from fabrik.kernels.vec import TINY, place_on_line
from fabrik.kernels.obstacles import free_direction, push_out
from fabrik.kernels.records import TreeTask
from fabrik.kernels.poles import apply_poles, apply_poles_clear
from fabrik.kernels.tree_extras import branch_weights, refresh_untargeted, repair, weighted_error
from fabrik.kernels.tree_methods import DLS, tree_method


@njit(cache=True, error_model="numpy")
def fabrik_tree(tree, groups, limits, task, stop, options, released, ext=None):
    """Solve a tree for several targets (module docstring).

    ``tree``, ``groups``, ``limits``, ``task`` (a ``TreeTask``) and ``options`` (a ``TreeOptions``)
    as ``fabrik.kernels.records`` says; ``stop``: a ``Stop`` whose ``tol`` >= 0 and ``max_iter``
    >= 0 act as in the chain kernel (``orientation_tol`` unused); ``released`` (bool, one per
    group) is written: which groups this solve released.

    Returns (positions (n, 3), frames (n, 3, 3) (empty without limits), row_active (n,) int64 (1
    where a limit of that joint is on its boundary), iterations, errors (k,), status). A negative
    status (``BAD_INDEX``, ``BAD_ROOT``) means bad input and nothing was solved.

    ``ext``: None, or effector weights, poles, obstacles and self-collision as
    ``fabrik.kernels.tree_extras`` describes them; without it (every solve that uses none of
    them) the code that reads it is left out when the kernel is compiled.
    """
    parents, lengths, rest_dirs, reach, order, subtree_end, position = tree
    group_of, group_start, group_members, group_offsets, in_group, releasable = groups
    Q, rows, circ, hcs, own_start, own_list, R0 = limits
    target_idx, targets, initial, initial_frames, root, root_from_target = task
    tol, max_iter = stop.tol, stop.max_iter
    root_fixed, limb_tops, start_step = options
    limited = initial_frames.shape[0] > 0  # frames followed: the limited placement step
    n = parents.shape[0]
    k = target_idx.shape[0]
    p = initial.copy()
    F = initial_frames.copy()
    errors = np.zeros(k)
    row_active = np.zeros(n, dtype=np.int64)
    code, scale, slot, active, root3, unreachable = tree_setup(parents, lengths, reach, target_idx, targets, root,
                                                               root_from_target)
    if code != 0:
        return p, F, row_active, 0, errors, code
    if start_step[0] > 0.0:
        # one damped least-squares step first (``jacobian-dls``'s first iteration): it turns every
        # bone on a path to a target by the least joint-angle change, so inner joints move with
        # the body where the targets leave them free, which FABRIK's point moves do not do
        stepped = tree_method(tree, limits, task, tol, 1, DLS,
                              (start_step[0], start_step[1], start_step[2], start_step[3]))
        if stepped[5] >= 0:
            p[:, :] = stepped[0]
            F[:, :, :] = stepped[1]
    eps = TINY * scale
    clean = True  # (with obstacles or self-collision: the pose clears them)
    posed = True  # (with poles: the pose has been through a pole step)
    if ext is not None:
        target_weights, pole_rows, pole_points, pole_members, obs, margin, self_radius, pairs = ext
        posed = pole_rows.shape[0] == 0
        bw = branch_weights(parents, slot, active, target_weights)
        weight_sum = np.zeros(n)
        collide = obs.shape[0] > 0 or self_radius > 0.0
        pushed = targets.copy()  # targets inside obstacles: aimed at the nearest point outside
        if obs.shape[0] > 0:
            for t in range(k):
                push_out(obs, pushed[t], 2.0 * margin)
        no_caps = np.zeros((0, 7))
        dvec = np.empty(3)
        held_now = np.zeros(max(group_start.shape[0] - 1, 1), dtype=np.bool_)
        scratch = (np.zeros((n, 7)), np.zeros(n, dtype=np.int64), np.empty((3, 3)), np.empty((3, 3)),
                   np.empty((3, 3)))
    move_to_root(p, root3)
    if limb_tops.shape[0] > 0:
        swing_limbs(p, F, limb_tops, parents, order, subtree_end, position, slot, targets, eps)

    P3 = np.empty((1, 3, 3))
    G = np.empty((3, 3))
    R = np.empty((3, 3))
    T = np.empty((3, 3))
    d = np.empty(3)
    h = np.empty(3)
    # untargeted subtrees: frames relative to the parent's (limits) or bone vectors (none)
    local = np.zeros((n if limited else 0, 3, 3))
    carried = np.zeros((0 if limited else n, 3))
    n_groups = group_start.shape[0] - 1
    released[:] = False
    if ext is not None:
        if collide and limited:
            released[:] = True  # with frames, groups are not held while bones are kept off obstacles
    if limited:
        # rigid groups with frames: each group's turn, centre and first member, the rest frames
        rot, active_members, src, dst = fit_groups(p, parents, group_of, group_start, group_members, group_offsets,
                                                   active)
        ends = group_ends(group_of, group_start, group_members)
        for g in range(n_groups):
            c = ends[g, 0]
            if row_limits(rows, c) and circ[c, 0] > 1.0:
                released[g] = True  # only a circular cone (or no limit) is kept on a held group's turn
        held = ((group_of, group_start, group_members, group_offsets, in_group, releasable), rot, active_members,
                released, ends, R0, not root_fixed,
                (src, dst, np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))))
        # the start pose made legal: one backward stage with every bone following its own direction
        backward_stage(p, F, parents, lengths, Q, rows, circ, hcs, own_start, own_list, np.ones(n, dtype=np.bool_),
                       local, root3, row_active, P3, R, d, held)
        for i in range(1, n):
            if not active[i] and lengths[i] > 0.0:
                q = parents[i]
                for r in range(3):
                    for c in range(3):
                        local[i, r, c] = F[q, 0, r] * F[i, 0, c] + F[q, 1, r] * F[i, 1, c] + F[q, 2, r] * F[i, 2, c]
    else:
        if max_iter == 0 and not lengths_hold(p, parents, lengths, scale):
            rebuild_lengths(p, parents, lengths, rest_dirs, eps)  # no iteration: the start pose made rigid
        for i in range(1, n):
            if not active[i]:
                carried[i, 0], carried[i, 1], carried[i, 2] = bone_at_length(p, i, parents[i], lengths[i], rest_dirs,
                                                                             eps)
    if ext is not None:
        if collide:
            # the start pose placed clear of the obstacles (no group held yet)
            if limited:
                clean = repair(p, F, parents, lengths, order, position, subtree_end, obs, margin, self_radius, pairs,
                               groups, held_now, (Q, rows, circ, hcs, P3, R, d), scratch)
            else:
                clean = repair(p, F, parents, lengths, order, position, subtree_end, obs, margin, self_radius, pairs,
                               groups, held_now, None, scratch)
            refresh_untargeted(p, F, parents, lengths, active, carried, local)
    err = effector_errors(p, target_idx, targets, errors)
    if ext is not None:
        weighted = False
        for t in range(k):
            weighted = weighted or target_weights[t] != target_weights[0]
    if err <= tol and (ext is None or clean and posed) and (limited or (p[0, 0] == root3[0] and p[0, 1] == root3[1] and p[0, 2] == root3[2]
                                   and lengths_hold(p, parents, lengths, scale))):
        return p, F, row_active, 0, errors, REACHED

    if not limited:
        rot, active_members, src, dst = fit_groups(p, parents, group_of, group_start, group_members, group_offsets,
                                                   active)
    fit_scratch = np.empty((2, 3, 3))
    can_release = False
    for g in range(n_groups):
        can_release = can_release or releasable[g]

    active_list = np.flatnonzero(active)
    n_active = active_list.shape[0]
    proposal_sum = np.zeros((n, 3))
    proposal_count = np.zeros(n, dtype=np.int64)
    before = np.empty((k, 3))
    snapshot = np.empty((n, 3))
    check_pose = False
    goal = targets.copy()
    if ext is not None:
        goal[:, :] = pushed
    nudged = False
    nudges = 0
    drop = last_drop = np.inf  # how much the last iterations lowered the largest error: none yet
    if ext is not None:
        if weighted:
            err = weighted_error(errors, target_weights)
    best_err = err
    if ext is not None and not clean:
        best_err = np.inf  # (never an answer: the first clear pose replaces it)
    best_p = p.copy()
    best_F = F.copy()
    best_active = row_active.copy()
    best_errors = errors.copy()
    progress_ref = err
    since_progress = 0
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
            if ext is not None:
                weight_sum[i] = 0.0
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
                if ext is None:
                    place_group_centre(p, i, g, rot, active, group_start, group_members, group_offsets, src, dst,
                                       proposal_sum, proposal_count, fit_scratch[0], not releasable[g])
                else:
                    place_group_centre(p, i, g, rot, active, group_start, group_members, group_offsets, src, dst,
                                       proposal_sum, weight_sum, fit_scratch[0], not releasable[g], bw)
            elif proposal_count[i] > 0:
                w = 1.0 / proposal_count[i]
                if ext is not None:
                    w = 1.0 / weight_sum[i]  # the weighted centroid
                p[i, 0] = proposal_sum[i, 0] * w
                p[i, 1] = proposal_sum[i, 1] * w
                p[i, 2] = proposal_sum[i, 2] * w
            q = parents[i]
            length = lengths[i]
            if n_groups > 0 and in_group[i] >= 0 and active_members[in_group[i]] >= 2 and not released[in_group[i]]:
                continue  # a rigid member proposes through its group's fit at the centre
            if limited and length > 0.0:
                # the limited placement (tree_limits module docstring), written out here: the old
                # frame carried onto the proposed direction (q's old position -> i) is the
                # candidate F[i] ...
                r = _unit_between(d, p, q, i, F[i, 0, 1], F[i, 1, 1], F[i, 2, 1])
                if r <= eps:
                    d[0] = F[i, 0, 1]
                    d[1] = F[i, 1, 1]
                    d[2] = F[i, 2, 1]
                _tr(F, i, F, i, d[0], d[1], d[2])
                # ... turned to hold a hinge child in its plane, then back by every limited child's
                # limit read reversed ...
                aligned = False
                for m in range(own_start[i], own_start[i + 1]):
                    c = own_list[m]
                    pc = parents[c]
                    if not active[c] or (rows[pc, COL_TYPE] == 0.0 and rows[pc, COL_TWIST_FLAG] == 0.0):
                        continue
                    if not aligned and rows[pc, COL_TYPE] == TYPE_HINGE:
                        align_hinge_twist(F, i, Q, c, rows, pc, F[c, 0, 1], F[c, 1, 1], F[c, 2, 1])
                        aligned = True
                    if circ[pc, 0] <= 1.0:
                        _circular_reverse(F, i, c, Q, circ[pc, 0], circ[pc, 1])
                    elif hcs[pc, 0] != 0.0:
                        _hinge_reverse(F, i, c, Q, rows, hcs, pc)
                    elif not _cone_inside(rows, pc, F, i, Q, c, F[c, 0, 1], F[c, 1, 1], F[c, 2, 1]):
                        _reverse_general(F, i, c, Q, rows, pc, P3, G, R, h, T)
                # ... and last restricted by its own limit against its reference F[q] Q[i]
                own_limit(F, q, i, Q, rows, circ, hcs, P3, R, d)
                if ext is None:
                    for c in range(3):
                        proposal_sum[q, c] += p[i, c] - length * F[i, c, 1]
                else:
                    for c in range(3):
                        proposal_sum[q, c] += bw[i] * (p[i, c] - length * F[i, c, 1])
            elif limited:
                if ext is None:
                    for c in range(3):
                        proposal_sum[q, c] += p[i, c]
                else:
                    for c in range(3):
                        proposal_sum[q, c] += bw[i] * p[i, c]
            else:
                x, y, z = bone_at_length(p, i, q, length, rest_dirs, eps)
                if ext is None:
                    proposal_sum[q, 0] += p[i, 0] - x
                    proposal_sum[q, 1] += p[i, 1] - y
                    proposal_sum[q, 2] += p[i, 2] - z
                else:
                    if obs.shape[0] > 0 and length > 0.0:
                        # the proposal turned so that its bone clears the obstacles
                        dvec[0], dvec[1], dvec[2] = -x / length, -y / length, -z / length
                        free_direction(obs, no_caps, 0, p[i], dvec, length, 0.0, margin, False)
                        x, y, z = -length * dvec[0], -length * dvec[1], -length * dvec[2]
                    proposal_sum[q, 0] += bw[i] * (p[i, 0] - x)
                    proposal_sum[q, 1] += bw[i] * (p[i, 1] - y)
                    proposal_sum[q, 2] += bw[i] * (p[i, 2] - z)
            proposal_count[q] += 1
            if ext is not None:
                weight_sum[q] += bw[i]
        # backward stage: root back on its base, then outwards along every branch
        if limited:
            if not root_fixed and not (n_groups > 0 and group_of[0] >= 0 and not released[group_of[0]]):
                fit_root_frame(F[0], p, root3, own_start, own_list, active, Q, T, R, d)
            backward_stage(p, F, parents, lengths, Q, rows, circ, hcs, own_start, own_list, active, local, root3,
                           row_active, P3, R, d, held)
        else:
            p[0, 0] = root3[0]
            p[0, 1] = root3[1]
            p[0, 2] = root3[2]
            if n_groups > 0 and group_of[0] >= 0 and not released[group_of[0]]:
                if ext is None:
                    place_group_members(p, 0, group_of[0], rot, active, group_start, group_members, group_offsets,
                                        carried, src, dst, fit_scratch[0])
                else:
                    place_group_members(p, 0, group_of[0], rot, active, group_start, group_members, group_offsets,
                                        carried, src, dst, fit_scratch[0], bw)
            for i in range(1, n):
                q = parents[i]
                if active[i]:
                    place_on_line(p, i, q, lengths[i], rest_dirs[i, 0], rest_dirs[i, 1], rest_dirs[i, 2], eps)
                else:
                    p[i, 0] = p[q, 0] + carried[i, 0]
                    p[i, 1] = p[q, 1] + carried[i, 1]
                    p[i, 2] = p[q, 2] + carried[i, 2]
                if n_groups > 0 and group_of[i] >= 0 and not released[group_of[i]]:
                    # a centre that is itself a held member of its parent's group (a thigh carrying
                    # its knee and a twist joint, on a pelvis held rigid) was placed by that group:
                    # only its own group's turn is fitted, or the parent group would bend
                    nested = in_group[i] >= 0 and active_members[in_group[i]] >= 2 and not released[in_group[i]]
                    if ext is None:
                        if not releasable[group_of[i]] and active[i] and lengths[i] > eps and not nested:
                            seat_group(p, i, q, lengths[i], group_of[i], rot, active, group_start, group_members,
                                       group_offsets, eps, fit_scratch)
                        place_group_members(p, i, group_of[i], rot, active, group_start, group_members, group_offsets,
                                            carried, src, dst, fit_scratch[0])
                    else:
                        if not releasable[group_of[i]] and active[i] and lengths[i] > eps and not nested:
                            seat_group(p, i, q, lengths[i], group_of[i], rot, active, group_start, group_members,
                                       group_offsets, eps, fit_scratch, bw)
                        place_group_members(p, i, group_of[i], rot, active, group_start, group_members, group_offsets,
                                            carried, src, dst, fit_scratch[0], bw)
        if ext is not None:
            if pole_rows.shape[0] > 0:
                if collide and clean and not limited:
                    apply_poles_clear(p, F, pole_rows, pole_points, pole_members, eps, parents, obs, margin)
                else:
                    apply_poles(p, F, pole_rows, pole_points, pole_members, eps)
                if limited:  # every limit held again
                    backward_stage(p, F, parents, lengths, Q, rows, circ, hcs, own_start, own_list, active, local,
                                   root3, row_active, P3, R, d, held)
            if collide:
                for g in range(n_groups):
                    held_now[g] = not limited and active_members[g] >= 2 and not released[g]
                if limited:
                    clean = repair(p, F, parents, lengths, order, position, subtree_end, obs, margin, self_radius,
                                   pairs, groups, held_now, (Q, rows, circ, hcs, P3, R, d), scratch)
                else:
                    clean = repair(p, F, parents, lengths, order, position, subtree_end, obs, margin, self_radius,
                                   pairs, groups, held_now, None, scratch)
            if collide or pole_rows.shape[0] > 0:
                refresh_untargeted(p, F, parents, lengths, active, carried, local)
        it += 1
        err = effector_errors(p, target_idx, targets, errors)
        if err <= tol and (ext is None or clean):
            return p, F, row_active, it, errors, REACHED
        if ext is not None:
            if weighted:  # the stopping rules and the best pose follow the weighted error
                err = weighted_error(errors, target_weights)
        drop = prev_err - err
        if err < best_err and (ext is None or clean):  # kept by loops (numba's slice assignment of 3D arrays costs microseconds)
            best_err = err
            for i in range(n):
                best_p[i, 0] = p[i, 0]
                best_p[i, 1] = p[i, 1]
                best_p[i, 2] = p[i, 2]
                best_active[i] = row_active[i]
            for i in range(F.shape[0]):
                for r in range(3):
                    best_F[i, r, 0] = F[i, r, 0]
                    best_F[i, r, 1] = F[i, r, 1]
                    best_F[i, r, 2] = F[i, r, 2]
            for t in range(k):
                best_errors[t] = errors[t]
        if err < (1.0 - PROGRESS_FRACTION) * progress_ref:
            progress_ref = err
            since_progress = 0
        else:
            since_progress += 1
            if (since_progress >= NO_PROGRESS_WINDOW and not nudged
                    and not still_converging(err, prev_err, last_drop, older_drop, tol)):
                # a cycle (limits can make FABRIK alternate between poses): the best pose seen
                return best_p, best_F, best_active, it, best_errors, (UNREACHABLE if unreachable else STALLED)
        if nudged:
            nudged = False
            if ext is None:
                goal[:, :] = targets
            else:
                goal[:, :] = pushed
        if check_pose:
            check_pose = False
            if max_joint_move(p, snapshot) < stall_tol(tol, scale):
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
                # slow is not stuck (docs/conventions.md): targets within their paths' reach whose
                # largest error is still on course to tol keep the solve going
                if unreachable or not still_converging(err, prev_err, last_drop, older_drop, tol):
                    return best_p, best_F, best_active, it, best_errors, (UNREACHABLE if unreachable else STALLED)
        if effectors_stalled(p, before, target_idx, stall_tol(tol, scale), err, prev_err):
            check_pose = True
    if best_err < err or (ext is not None and not clean and best_err < np.inf):
        return best_p, best_F, best_active, it, best_errors, MAX_ITERATIONS
    return p, F, row_active, it, errors, MAX_ITERATIONS


@njit(cache=True, error_model="numpy")
def fabrik_tree_frames(tree, groups, limits, take, stop, options, stop_short, out):
    """``fabrik_tree`` over a run of frames, each started from the answer (and, with limits, the
    frames) of the frame before.

    ``take`` a ``TreeTake``: targets (F, k, 3), frame f's goals, row t for joint ``target_idx[t]``;
    roots (F, 3), frame f's fixed root; initial (n, 3) and initial_frames (n, 3, 3) (or (0, 3, 3)
    without limits), the start of frame 0 (never written). ``tree``, ``groups``, ``limits``,
    ``stop`` and ``options`` as for ``fabrik_tree``, the same for every frame. ``out`` a
    ``TakeOut``: frame f's answer goes to ``out.positions[f]`` (n, 3) and, with limits,
    ``out.frames[f]`` (n, 3, 3); its iterations to ``out.iterations[f]``, its effectors' errors to
    ``out.errors[f]`` (k,) and its status to ``out.codes[f]``.

    ``stop_short``: also stop after the first frame that ends short of its targets (a status
    other than ``REACHED``), so that the caller can retry it (``turn_search``) before the frames
    after it are solved from its answer.

    Returns the number of frames written: F; the index f of the first frame whose status is
    negative (bad input, ``out.codes[f]`` says which; nothing written for it); or, with
    ``stop_short``, f + 1 for the first frame f that ended short (written). One call for a whole
    take saves the per-frame cost of checking inputs and building results in Python.
    """
    target_idx, targets, initial, initial_frames, roots, root_from_target = take
    released = np.zeros_like(groups.releasable)
    prev = initial
    prev_frames = initial_frames
    for f in range(targets.shape[0]):
        task = TreeTask(target_idx, targets[f], prev, prev_frames, roots[f], root_from_target)
        p, frames, _, it, err, code = fabrik_tree(tree, groups, limits, task, stop, options, released)
        out.codes[f] = code
        if code < 0:
            return f
        out.positions[f] = p
        if frames.shape[0] > 0:
            out.frames[f] = frames
        out.iterations[f] = it
        out.errors[f] = err
        prev = p
        prev_frames = frames
        if stop_short and code != REACHED:
            return f + 1
    return targets.shape[0]
