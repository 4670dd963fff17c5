"""The prepared skeleton: everything the tree solvers read, analysed once per skeleton.

``rig(skeleton)`` flattens a ``fabrik.Skeleton`` for the kernels and analyses its rig: the limbs a
tracker swings (``limb_tops``, past twist bones: ``twist_branches``), the rigid groups BVH
rotations hold together (``rigid_groups`` and its variants), the joint frames at rest
(``rest_frames``) and the packed limit tables. The result, a ``Rig``, is cached on the skeleton
(skeletons are immutable; ``fabrik.model._frozen.cached``) and its records go to the kernels as
they are (``fabrik.kernels.records``): ``tree`` (a ``Tree``), ``groups(mode)`` (``Groups``,
``fabrik.kernels.rigid_groups``) and ``limits`` (``TreeLimits``, ``fabrik.kernels.tree_limits``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fabrik.model._frozen import cached
from fabrik.model.constraints import orthonormal_frame
from fabrik.kernels.limit_layout import COL_PARAMS, pack_limits
from fabrik.kernels.records import Groups, Tree, TreeLimits


class Rig(NamedTuple):
    """A skeleton prepared for the kernels (arrays C-contiguous and writable, never written).

    Attributes:
        parents: (n,) int64 parent index, -1 for the root.
        lengths: (n,) float64 bone length from the parent (0 for the root).
        rest_dirs: (n, 3) unit vector along each bone at rest, parent to child; +Y for the root
            and for zero-length bones. Used only where a direction is undefined.
        reach: (n,) summed bone lengths from the root to each joint.
        order: (n,) int64 depth-first pre-order of the joints (root first).
        subtree_end: (n,) int64; the joints below ``j`` (j excluded) are
            ``order[position[j] + 1 : subtree_end[j]]``.
        position: (n,) int64 the place of each joint in ``order``.
        rest: (n, 3) rest pose (world positions).
        index_of: joint name -> index.
        limb_tops: (m,) int64 the limbs (``limb_tops``): top joints, or -(pivot + 1) where all
            below the pivot swings; ancestors first.
        held_limb_tops: the limbs swung when the ``rigid_sub_bases=True`` groups are held rigid
            (``held_limb_tops``).
        kernel_groups: ``rigid_sub_bases`` value -> the ``Groups`` record the kernels get
            (``kernel_groups``).
        rest_frames: (n, 3, 3) the joint frames at rest ``R0`` (``rest_frames``).
        Q: (n, 3, 3) ``R0[parent(c)]^T R0[c]`` (identity for the root and zero-length bones).
        limit_Q: (n, 3, 3) what the limits measure bone c from: ``R0[q]^T A[q] R0[c]``, q =
            parent(c) and A the skeleton's ``limit_reference`` (identity where none: ``Q``).
        own_start, own_list: int64 CSR lists of the non-zero bones whose reference frame is joint
            i's frame (children of i, looking through zero-length children).
        limits: the ``TreeLimits`` record the kernels get with frames (``limit_tables``; solves
            without frames get ``NO_LIMITS``).
        tree: the ``Tree`` record of the first seven arrays, which every tree kernel takes (built
            once here: a record costs a few tenths of a microsecond to build, every call).
    """

    parents: np.ndarray
    lengths: np.ndarray
    rest_dirs: np.ndarray
    reach: np.ndarray
    order: np.ndarray
    subtree_end: np.ndarray
    position: np.ndarray
    rest: np.ndarray
    index_of: dict
    limb_tops: np.ndarray
    held_limb_tops: np.ndarray
    kernel_groups: dict
    rest_frames: np.ndarray
    Q: np.ndarray
    limit_Q: np.ndarray
    own_start: np.ndarray
    own_list: np.ndarray
    limits: TreeLimits
    tree: Tree

    @property
    def limit_rows(self) -> np.ndarray:
        """(n, w) the packed limit rows (``pack_limits``; zeros where a joint has no limit)."""
        return self.limits.rows

    def groups(self, rigid_sub_bases) -> Groups:
        """The ``Groups`` record for a ``rigid_sub_bases`` value (``RIGID_MODES``; ValueError otherwise)."""
        mode = rigid_mode(rigid_sub_bases)
        found = self.kernel_groups.get(mode) if isinstance(mode, (bool, str)) else None
        if found is None:
            raise ValueError(f"rigid_sub_bases must be one of {RIGID_MODES}, got {rigid_sub_bases!r}")
        return found

    def limbs(self, swing_limbs: bool, rigid_sub_bases=False) -> np.ndarray:
        """The limb entries the kernels swing: none without ``swing_limbs``; with ``rigid_sub_bases``
        True or ``"auto"`` a limb whose top belongs to a BVH-rigid group swings about a joint past
        the group, if any (``held_limb_tops``)."""
        if not isinstance(swing_limbs, (bool, np.bool_)):
            raise ValueError(f"swing_limbs must be True or False, got {swing_limbs!r}")
        if not swing_limbs:
            return NO_LIMBS
        mode = rigid_mode(rigid_sub_bases)
        return self.held_limb_tops if mode is True or mode == "auto" else self.limb_tops


#: What the kernels get for a solve without limits: no limit tables, and no frames.
NO_LIMITS = TreeLimits(np.zeros((0, 3, 3)), np.zeros((0, COL_PARAMS)), np.zeros((0, 2)), np.zeros((0, 7)),
                       np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 3, 3)))
NO_FRAMES = np.zeros((0, 3, 3))
#: What the kernels get when limbs do not swing.
NO_LIMBS = np.zeros(0, dtype=np.int64)

#: What the kernel gets when rigid groups are off.
_NO_GROUPS = (np.full(1, -1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64),
              np.zeros((0, 3)), np.full(1, -1, dtype=np.int64))


def child_lists(parents: np.ndarray) -> list[list[int]]:
    """``children[j]``: the joints whose parent is j, in increasing index order (parents (n,),
    ``parents[0]`` ignored)."""
    children: list[list[int]] = [[] for _ in range(parents.shape[0])]
    for i in range(1, parents.shape[0]):
        children[int(parents[i])].append(i)
    return children


def rigid_groups(parents: np.ndarray, lengths: np.ndarray, rest: np.ndarray, centres=None, follow_zero_at=()):
    """The rigid groups of a skeleton: joints with two or more children at a distance.

    In a BVH skeleton a joint's rotation turns all its children together, so children joined to
    it by bones of non-zero length keep their rest shape relative to each other: a pelvis with
    both thighs and the spine hanging from one joint, a chest with the neck and both collarbones.
    Such a joint is the centre of a rigid group whose members are those children.

    ``centres`` None (``rigid_sub_bases=True``): every such joint is a centre, and children on
    zero-length bones are not members: in BVH files they carry rotations of their own (the CMU
    files hang each limb from the pelvis through one), so each moves as a free branch. Given a
    sequence of joints (``rigid_sub_bases="limbs"``: the sub-bases inside limbs, see
    ``limb_groups``), only those are centres, and members are looked for through zero-length
    joints too: a CMU hand hangs its finger and thumb from the wrist through zero-length joints.
    ``follow_zero_at`` (with ``centres`` None): the centres whose members are looked for through
    zero-length joints all the same (``auto_groups``).

    Returns (group_of (n,), group_start (G+1,), group_members (m,), group_offsets (m, 3),
    in_group (n,)): ``group_of[c]`` the group centred on joint c or -1; group g's members
    ``group_members[group_start[g]:group_start[g + 1]]`` with rest offsets from the centre;
    ``in_group[j]`` the group that joint j is a member of, or lies between a centre and its
    members (a zero-length joint), else -1. The empty set when the skeleton has no group.
    """
    n = parents.shape[0]
    eps = 1e-12 * max(float(lengths.sum()), 1e-300)
    children = child_lists(parents)
    candidates = range(n) if centres is None else sorted(int(c) for c in centres)
    follow = set(candidates) if centres is not None else {int(c) for c in follow_zero_at}
    found: list[tuple[int, list[int], list[int]]] = []
    covered: set[int] = set()
    for c in candidates:
        if c in covered:  # a zero-length joint already inside an ancestor's group
            continue
        members: list[int] = []
        between: list[int] = []
        stack = list(children[c])
        while stack:
            j = stack.pop(0)
            if lengths[j] > eps:
                members.append(j)
            elif c in follow:
                between.append(j)
                stack.extend(children[j])
        if len(members) >= 2:
            found.append((c, members, between))
            covered.update(between)
    if not found:
        return _NO_GROUPS
    group_of = np.full(n, -1, dtype=np.int64)
    in_group = np.full(n, -1, dtype=np.int64)
    start = [0]
    flat: list[int] = []
    offsets = []
    for g, (c, members, between) in enumerate(found):
        group_of[c] = g
        for k in members:
            flat.append(k)
            offsets.append(rest[k] - rest[c])
            in_group[k] = g
        for k in between:
            in_group[k] = g
        start.append(len(flat))
    return (group_of, np.array(start, dtype=np.int64), np.array(flat, dtype=np.int64),
            np.ascontiguousarray(offsets, dtype=np.float64), in_group)


def limb_groups(parents: np.ndarray, lengths: np.ndarray, rest: np.ndarray, tops: np.ndarray):
    """``rigid_groups`` centred on the sub-bases inside limbs (below a limb top, see
    ``limb_tops``): a hand whose fingers leave one joint, a foot with several toes. Their
    members are found through zero-length joints. Spine, chest and pelvis stay free."""
    return rigid_groups(parents, lengths, rest, _limb_centres(parents, tops))


def _limb_centres(parents: np.ndarray, tops: np.ndarray) -> list[int]:
    """The joints with children inside limbs (at or below a limb top; below the pivot of an
    entry -(pivot + 1))."""
    n = parents.shape[0]
    inside = np.zeros(n, dtype=bool)
    top_set = {int(t) for t in tops if t >= 0}
    below = {-int(t) - 1 for t in tops if t < 0}
    for j in range(1, n):
        inside[j] = j in top_set or parents[j] in below or inside[parents[j]]
    n_children = np.bincount(parents[1:], minlength=n) if n > 1 else np.zeros(n, dtype=np.int64)
    return [j for j in range(n) if inside[j] and n_children[j] >= 1]


def auto_groups(parents: np.ndarray, lengths: np.ndarray, rest: np.ndarray, tops: np.ndarray):
    """``rigid_groups`` for ``rigid_sub_bases="auto"``: the groups of ``True`` (every joint whose
    children hang from it at a distance, which a BVH rotation turns together: a Mixamo pelvis or
    chest) together with those of ``"limbs"`` (a CMU hand, whose finger and thumb hang from the
    wrist through zero-length joints). Zero-length joints outside limbs keep their own rotation,
    as in BVH (a CMU pelvis stays free)."""
    return rigid_groups(parents, lengths, rest, None, _limb_centres(parents, tops))


#: The largest spread of a limb's leaves, as a fraction of their distance from the pivot.
LIMB_SPREAD = 0.5


#: How far off its sibling bone a twist branch may lie (perpendicular distance, and overshoot
#: past either end), as a fraction of that bone's length.
TWIST_OFF_LINE = 0.05


def twist_branches(parents: np.ndarray, lengths: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """(n,) bool: the joints of *twist branches*, in the rest pose.

    A twist branch leaves a joint b as an unbranched chain ending in a leaf, and every joint of
    it lies on a sibling bone, the segment from b to another child of b (within
    ``TWIST_OFF_LINE`` of that bone's length): the twist bones of Unreal and Rokoko rigs
    (``upperarm_twist_01_l`` halfway down the upper arm, beside ``lowerarm_l``), which only roll
    about the bone they sit on. A chain lying on b itself (all of zero length) is not one.
    """
    n = parents.shape[0]
    children = child_lists(parents)
    twist = np.zeros(n, dtype=bool)
    for b in range(n):
        if len(children[b]) < 2:
            continue
        for k in children[b]:
            chain = [k]
            while len(children[chain[-1]]) == 1:
                chain.append(children[chain[-1]][0])
            if children[chain[-1]]:
                continue  # branches further down: a limb of its own
            offsets = rest[chain] - rest[b]
            if not (np.linalg.norm(offsets, axis=1) > 0.0).any():
                continue
            for sibling in children[b]:
                if sibling == k or lengths[sibling] <= 0.0:
                    continue
                axis = rest[sibling] - rest[b]
                along = offsets @ axis / (lengths[sibling] ** 2)
                off = np.linalg.norm(offsets - along[:, None] * axis, axis=1) / lengths[sibling]
                if (off <= TWIST_OFF_LINE).all() and (along >= -TWIST_OFF_LINE).all() \
                        and (along <= 1.0 + TWIST_OFF_LINE).all():
                    twist[chain] = True
                    break
    return twist


def limb_tops(parents: np.ndarray, lengths: np.ndarray, rest: np.ndarray,
              max_spread: float = LIMB_SPREAD) -> np.ndarray:
    """The limbs a tracker swings (``swing_limbs``), from the tree and the rest pose.

    A *branch* leaves the root or a joint with several children and runs down while each joint
    has one child (a leg from the pelvis to the toe, an arm from the chest to the wrist, a
    finger from the wrist); twist branches (``twist_branches``) do not count as children here,
    so an Unreal arm runs on past the twist bones of its upper arm and forearm. The branch is a
    *limb* when the leaves below it (those of twist branches left out) sit close together
    compared with their distance from the pivot (spread at most ``max_spread`` times that
    distance): a leg, an arm with its hand, a head. A spine carrying both arms and the head is
    not. The limb's *top* is the joint at the far end of the branch's longest bone, and the
    limb (the top and everything below it) swings about the top's parent, the *pivot*: the hip
    or shoulder joint, past any short or zero-length pelvis and collar bones, which thus do not
    swing. Where the pivot lies inside the branch and carries twist branches, the entry is
    -(pivot + 1): everything below the pivot swings, its twist bones too (``limb_span`` in
    ``fabrik.kernels.tree``).

    Returns the entries as an int64 array, ancestors first (ordered by the joint they hang
    from). Empty for a skeleton without branches.
    """
    n = parents.shape[0]
    children = child_lists(parents)
    twist = twist_branches(parents, lengths, rest)
    real = [[c for c in children[j] if not twist[c]] for j in range(n)]
    leaves: list[list[int]] = [[] for _ in range(n)]
    for j in range(n - 1, -1, -1):
        if not children[j]:
            leaves[j] = [j]
        else:
            leaves[j] = [x for c in children[j] for x in leaves[c]]
    entries: set[int] = set()
    for branch_point in range(n):
        if branch_point != 0 and len(real[branch_point]) < 2:
            continue
        for first in real[branch_point]:
            path = [first]
            while len(real[path[-1]]) == 1:
                path.append(real[path[-1]][0])
            longest = max(path, key=lambda j: lengths[j])  # the first of equals
            if lengths[longest] <= 0.0:
                continue
            pivot = int(parents[longest])
            ends = rest[[x for x in leaves[first] if not twist[x]] or leaves[first]]
            reach = float(np.linalg.norm(ends.mean(axis=0) - rest[pivot]))
            spread = float(np.linalg.norm(ends[:, None, :] - ends[None, :, :], axis=2).max())
            if reach > 0.0 and spread <= max_spread * reach:
                if longest != first and len(children[pivot]) > 1:
                    entries.add(-(pivot + 1))
                else:
                    entries.add(longest)
    return _ancestors_first(entries)


def held_limb_tops(parents: np.ndarray, lengths: np.ndarray, tops: np.ndarray, in_group: np.ndarray) -> np.ndarray:
    """The limbs swung while the ``rigid_sub_bases=True`` groups are held rigid.

    Swinging a limb whose top is a member of such a group (a neck on a rigid chest, a finger's
    first bone on a rigid palm) would bend the group, so such a limb swings lower down instead:
    its top moves to the joint at the far end of the longest bone further down its branch that
    lies outside every group (the finger then swings about its knuckle, the head about its neck).
    A limb with no such bone is not swung. Entries that swing everything below their pivot
    (negative, see ``limb_tops``) turn any group there as one body and are kept.
    ``in_group``: (n,) as ``rigid_groups``'s fifth array. Returns int64 entries, ancestors first.
    """
    children = child_lists(parents)
    held: set[int] = set()
    for top in tops.tolist():
        if top < 0 or in_group[top] < 0:
            held.add(top)
            continue
        below = []
        j = top
        while len(children[j]) == 1:
            j = children[j][0]
            below.append(j)
        below = [j for j in below if in_group[j] < 0 and lengths[j] > 0.0]
        if below:
            held.add(max(below, key=lambda j: lengths[j]))  # the first of equals
    return _ancestors_first(held)


def _ancestors_first(entries) -> np.ndarray:
    """``limb_tops`` entries as int64, each after those it hangs below: a top t by t, an entry
    -(c + 1) (everything below c) just after c, since ``parents[i] < i``."""
    return np.array(sorted(entries, key=lambda t: t if t >= 0 else -t - 0.5), dtype=np.int64)


def limb_pivot(parents: np.ndarray, entry: int) -> int:
    """The joint a ``limb_tops`` entry swings about (its parent, or the joint an entry -(c + 1)
    names)."""
    return -entry - 1 if entry < 0 else int(parents[entry])


#: The values ``rigid_sub_bases`` takes ("all" and "none", as on the command line, stand for
#: True and False).
RIGID_MODES = (False, True, "limbs", "auto", "all", "none")


def rigid_mode(rigid_sub_bases):
    """``rigid_sub_bases`` with the command line's names "all" and "none" as True and False."""
    if isinstance(rigid_sub_bases, str):
        return {"all": True, "none": False}.get(rigid_sub_bases, rigid_sub_bases)
    return rigid_sub_bases


def kernel_groups(true_groups: tuple, limbs: tuple, auto: tuple) -> dict:
    """``{rigid_sub_bases value: its Groups record}``: the five arrays of ``rigid_groups`` and which
    groups are releasable: every group of ``"limbs"``; of ``"auto"`` those a BVH rotation does not
    hold rigid (members hung from the centre through zero-length joints only, as a CMU hand's);
    none of ``True``."""
    def flags(groups, value):
        return np.full(max(groups[1].shape[0] - 1, 1), value, dtype=np.bool_)

    releasable = flags(auto, True)
    if auto[1].shape[0] > 1 and true_groups[1].shape[0] > 1:
        for centre in np.flatnonzero(true_groups[0] >= 0):
            if auto[0][centre] >= 0:
                releasable[auto[0][centre]] = False  # a joint whose bones a BVH rotation turns together
    return {False: Groups(*_NO_GROUPS, flags(_NO_GROUPS, False)),
            True: Groups(*true_groups, flags(true_groups, False)),
            "limbs": Groups(*limbs, flags(limbs, True)), "auto": Groups(*auto, releasable)}


#: A bone within this angle (radians) of the world Z axis takes world +Y as its rest up hint.
REST_UP_SWITCH = math.radians(25.0)


def rest_frames(parents: np.ndarray, lengths: np.ndarray, rest_dirs: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rest frames ``R0``: identity for the root; for a non-zero bone +Y along its rest
    offset and +Z towards world +Z, or towards world +Y when the bone lies within
    ``REST_UP_SWITCH`` of the Z axis; a zero-length bone copies its parent's."""
    n = parents.shape[0]
    out = np.empty((n, 3, 3))
    out[0] = np.eye(3)
    cos_switch = math.cos(REST_UP_SWITCH)
    for i in range(1, n):
        if lengths[i] == 0.0:
            out[i] = out[parents[i]]
            continue
        d = rest_dirs[i]
        up = np.array([0.0, 1.0, 0.0]) if abs(d[2]) > cos_switch else np.array([0.0, 0.0, 1.0])
        out[i] = orthonormal_frame(d, up)
    return out


def frame_layout(parents: np.ndarray, lengths: np.ndarray, rest_dirs: np.ndarray):
    """(R0, Q, own_start, own_list) of ``Rig`` from the tree."""
    n = parents.shape[0]
    R0 = rest_frames(parents, lengths, rest_dirs)
    Q = np.empty((n, 3, 3))
    Q[0] = np.eye(3)
    for c in range(1, n):
        Q[c] = np.eye(3) if lengths[c] == 0.0 else R0[parents[c]].T @ R0[c]
    owned: list[list[int]] = [[] for _ in range(n)]
    for c in range(1, n):
        if lengths[c] == 0.0:
            continue
        owner = int(parents[c])
        while owner != 0 and lengths[owner] == 0.0:
            owner = int(parents[owner])
        owned[owner].append(c)
    own_start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        own_start[i + 1] = own_start[i] + len(owned[i])
    own_list = np.array([c for lst in owned for c in lst], dtype=np.int64)
    return np.ascontiguousarray(R0), np.ascontiguousarray(Q), own_start, own_list


def limit_frames(parents: np.ndarray, lengths: np.ndarray, R0: np.ndarray, Q: np.ndarray, reference) -> np.ndarray:
    """``Rig.limit_Q``: ``Q`` where ``reference`` (the skeleton's ``limit_reference``) is None,
    else ``R0[q]^T reference[q] R0[c]`` for every non-zero bone c, q its parent."""
    if reference is None:
        return Q
    out = Q.copy()
    for c in range(1, parents.shape[0]):
        if lengths[c] > 0.0:
            q = int(parents[c])
            out[c] = R0[q].T @ reference[q] @ R0[c]
    return np.ascontiguousarray(out)


def limit_tables(constraints, Q: np.ndarray, own_start: np.ndarray, own_list: np.ndarray,
                 R0: np.ndarray) -> TreeLimits:
    """The kernels' ``TreeLimits(Q, rows, circ, hcs, own_start, own_list, R0)``: ``Q`` what each
    bone's limit is measured from (``Rig.limit_Q``), ``R0`` the rest frames; ``rows`` the packed
    limits (``pack_limits``), row j for the bones leaving j; ``circ`` (n, 2) (cos, sin) of the
    half-angle where row j is a circular cone without a twist limit (a closed form), (2, 0)
    elsewhere; ``hcs`` (n, 7) (1, cos lo, sin lo, cos hi, sin hi, lo, hi) where row j is a hinge
    with its twist held at 0 (a closed form), zeros elsewhere. (A skeleton without constraints gets
    rows of zeros: the frames are still followed when a constrained method solves it.)"""
    n = Q.shape[0]
    rows = np.ascontiguousarray(pack_limits(constraints, n))
    if constraints:
        from fabrik.kernels.constraints import closed_forms  # (numba loads with the first limits)

        circ, hcs = closed_forms(rows)
    else:
        circ, hcs = np.zeros((n, 2)), np.zeros((n, 7))
        circ[:, 0] = 2.0
    return TreeLimits(Q, rows, circ, hcs, own_start, own_list, R0)


def rig(skeleton) -> Rig:
    """The ``Rig`` of ``skeleton``, built on first use and cached on the object (the skeleton is
    immutable, so the cache never goes stale; ``dataclasses.replace`` makes a new object)."""
    return cached(skeleton, "rig", lambda: _build(skeleton))


def _build(skeleton) -> Rig:
    n = skeleton.n_joints
    parents = np.array(skeleton.parents, dtype=np.int64)
    offsets = np.array(skeleton.offsets, dtype=np.float64)
    lengths = np.linalg.norm(offsets, axis=1)
    lengths[0] = 0.0
    rest_dirs = np.zeros((n, 3))
    rest_dirs[:, 1] = 1.0
    nonzero = lengths > 0.0
    nonzero[0] = False
    rest_dirs[nonzero] = offsets[nonzero] / lengths[nonzero, None]
    reach = lengths.copy()
    for i in range(1, n):
        reach[i] += reach[parents[i]]
    children = child_lists(parents)
    order = np.empty(n, dtype=np.int64)
    subtree_end = np.empty(n, dtype=np.int64)
    position = np.empty(n, dtype=np.int64)
    count = 0
    stack = [(0, False)]
    while stack:
        joint, done = stack.pop()
        if done:
            subtree_end[joint] = count
            continue
        order[count] = joint
        position[joint] = count
        count += 1
        stack.append((joint, True))
        for child in reversed(children[joint]):
            stack.append((child, False))
    rest = np.array(skeleton.rest_positions(), dtype=np.float64, order="C")
    tops = limb_tops(parents, lengths, rest)
    groups = rigid_groups(parents, lengths, rest)
    held = tops if groups[4].shape[0] < n else held_limb_tops(parents, lengths, tops, groups[4])
    limbs = limb_groups(parents, lengths, rest, tops)
    auto = auto_groups(parents, lengths, rest, tops)
    R0, Q, own_start, own_list = frame_layout(parents, lengths, rest_dirs)
    limit_Q = limit_frames(parents, lengths, R0, Q, skeleton.limit_reference)
    return Rig(parents, lengths, rest_dirs, reach, order, subtree_end, position, rest,
               {name: i for i, name in enumerate(skeleton.names)}, tops, held, kernel_groups(groups, limbs, auto), R0,
               Q, limit_Q, own_start, own_list, limit_tables(skeleton.constraints, limit_Q, own_start, own_list, R0),
               Tree(parents, lengths, rest_dirs, reach, order, subtree_end, position))


__all__ = ['Rig', 'rig', 'NO_LIMITS', 'NO_FRAMES', 'NO_LIMBS', 'RIGID_MODES', 'rigid_mode', 'child_lists', 'rigid_groups', 'limb_groups', 'auto_groups', 'twist_branches', 'limb_tops', 'held_limb_tops', 'limb_pivot', 'kernel_groups', 'rest_frames', 'frame_layout', 'limit_frames', 'limit_tables', 'LIMB_SPREAD', 'TWIST_OFF_LINE', 'REST_UP_SWITCH']
