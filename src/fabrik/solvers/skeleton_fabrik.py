"""FABRIK for skeletons with several end effectors (sections 4.1 and 4.2 of the paper).

Use it through ``fabrik.solve(skeleton, targets={"LeftHand": xyz, ...})`` (method ``"fabrik"``,
the default) or, in a tight loop over frames, through :func:`solve_skeleton_arrays`, which takes
arrays and skips the per-call dictionary work.

What the solver does (details in ``fabrik.kernels.fabrik_skeleton``):

* every targeted joint is an end effector; targets may sit on inner joints (section 4.2), which
  are then pinned during the forward stage, and the part of the tree beyond them is solved from
  there outwards in the backward stage;
* a joint where several targeted branches meet is a sub-base: the forward stage puts it at the
  centroid of the positions its branches propose (section 4.1), nested sub-bases in turn, down to
  the root; the backward stage runs from the root out along every targeted branch;
* branches with no target below them (e.g. fingers beyond a targeted wrist) keep their bone
  vectors: they are carried along rigidly by translation with the joint they hang from;
* the root is fixed at ``root`` (default ``initial[0]``, or the root joint's own target when it
  has one), and the start pose is first moved with it, as every method of the library starts
  (CCD and the Jacobian methods too); bone lengths are kept exactly, zero-length bones (common in BVH files) included.

The tree is flattened to arrays once per skeleton (cached on the skeleton object) and the whole
iteration loop runs inside one compiled kernel call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, NamedTuple

import numpy as np

from fabrik._validation import MAX_COORDINATE, as_point, as_points, check_max_iter, check_tol
from fabrik.kernels.fabrik_tree import fabrik_tree, fabrik_tree_frames
from fabrik.kernels.tree import BAD_INDEX, BAD_ROOT
from fabrik.kernels.vec import all_finite3
from fabrik.solvers.registry import DEFAULT_MAX_ITER, Solver, add
from fabrik.solvers.result import STATUSES, SequenceSolution, Solution

_DEFAULT_TOL = 1e-3


class SkeletonArrays(NamedTuple):
    """A skeleton flattened for the kernels (all arrays C-contiguous and writable, never written).

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
        group_of, group_start, group_members, group_offsets, in_group: the rigid groups
            (``rigid_groups``) of ``rigid_sub_bases=True``.
        limb_groups: the same five arrays for ``rigid_sub_bases="limbs"`` (``limb_groups``).
        auto_groups: the same for ``rigid_sub_bases="auto"`` (``auto_groups``).
        limb_tops: (m,) int64 the limbs (``limb_tops``): top joints, or -(pivot + 1) where all
            below the pivot swings; ancestors first.
        held_limb_tops: the limbs swung when the ``rigid_sub_bases=True`` groups are held rigid
            (``held_limb_tops``): a top inside such a group moved down its branch, past the
            group (swinging a neck about the chest would bend the chest's group).
        kernel_groups: ``rigid_sub_bases`` value -> the six group arrays the kernel gets
            (``kernel_groups``).
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
    group_of: np.ndarray
    group_start: np.ndarray
    group_members: np.ndarray
    group_offsets: np.ndarray
    in_group: np.ndarray
    limb_tops: np.ndarray
    limb_groups: tuple
    auto_groups: tuple
    held_limb_tops: np.ndarray
    kernel_groups: dict


#: What the kernel gets for a solve without limits: no limit tables, no frames.
NO_LIMITS = (np.zeros((0, 3, 3)), np.zeros((0, 13)), np.zeros((0, 2)), np.zeros((0, 7)), np.zeros(1, dtype=np.int64),
             np.zeros(0, dtype=np.int64))
NO_FRAMES = np.zeros((0, 3, 3))


def kernel_groups_off(arrays) -> tuple:
    """The group tuple of a solve without rigid groups."""
    return arrays.kernel_groups[False]


def tree_args(arrays) -> tuple:
    """The tree tuple every tree kernel takes (``fabrik.kernels.tree``)."""
    return (arrays.parents, arrays.lengths, arrays.rest_dirs, arrays.reach, arrays.order, arrays.subtree_end,
            arrays.position)


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
    ``fabrik.kernels.fabrik_skeleton``).

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


#: What the kernel gets when limbs do not swing.
_NO_LIMBS = np.zeros(0, dtype=np.int64)


def limb_arrays(arrays: "SkeletonArrays", swing_limbs: bool, rigid_sub_bases=False):
    """The limb arrays the kernels get: (limb tops or none, order, subtree_end, position). With
    ``rigid_sub_bases`` True or ``"auto"`` a limb whose top belongs to a BVH-rigid group swings
    about a joint past the group, if any (``held_limb_tops``)."""
    if not isinstance(swing_limbs, (bool, np.bool_)):
        raise ValueError(f"swing_limbs must be True or False, got {swing_limbs!r}")
    rigid_sub_bases = rigid_mode(rigid_sub_bases)
    tops = _NO_LIMBS
    if swing_limbs:
        tops = arrays.held_limb_tops if rigid_sub_bases is True or rigid_sub_bases == "auto" else arrays.limb_tops
    return (tops, arrays.order, arrays.subtree_end, arrays.position)


#: The values ``rigid_sub_bases`` takes ("all" and "none", as on the command line, stand for
#: True and False).
RIGID_MODES = (False, True, "limbs", "auto", "all", "none")


def rigid_mode(rigid_sub_bases):
    """``rigid_sub_bases`` with the command line's names "all" and "none" as True and False."""
    if isinstance(rigid_sub_bases, str):
        return {"all": True, "none": False}.get(rigid_sub_bases, rigid_sub_bases)
    return rigid_sub_bases


def rigid_group_arrays(arrays: "SkeletonArrays", rigid_sub_bases):
    """The group arrays the kernel gets for a ``rigid_sub_bases`` value (``RIGID_MODES``): the five
    of ``rigid_groups`` and which groups may be released (bool, one per group), built once per
    skeleton (``kernel_groups``)."""
    mode = rigid_mode(rigid_sub_bases)
    groups = arrays.kernel_groups.get(mode) if isinstance(mode, (bool, str)) else None
    if groups is None:
        raise ValueError(f"rigid_sub_bases must be one of {RIGID_MODES}, got {rigid_sub_bases!r}")
    return groups


def kernel_groups(true_groups: tuple, limbs: tuple, auto: tuple) -> dict:
    """``{rigid_sub_bases value: the six arrays rigid_group_arrays returns}``. Releasable: every
    group of ``"limbs"``; of ``"auto"`` those a BVH rotation does not hold rigid (members hung
    from the centre through zero-length joints only, as a CMU hand's); none of ``True``."""
    def flags(groups, value):
        return np.full(max(groups[1].shape[0] - 1, 1), value, dtype=np.bool_)

    releasable = flags(auto, True)
    if auto[1].shape[0] > 1 and true_groups[1].shape[0] > 1:
        for centre in np.flatnonzero(true_groups[0] >= 0):
            if auto[0][centre] >= 0:
                releasable[auto[0][centre]] = False  # a joint whose bones a BVH rotation turns together
    return {False: (*_NO_GROUPS, flags(_NO_GROUPS, False)), True: (*true_groups, flags(true_groups, False)),
            "limbs": (*limbs, flags(limbs, True)), "auto": (*auto, releasable)}


_CACHE_ATTR = "_fabrik_skeleton_arrays"


def skeleton_arrays(skeleton) -> SkeletonArrays:
    """The flattened arrays of ``skeleton``, built on first use and cached on the object.

    The skeleton is immutable, so the cache never goes stale (``dataclasses.replace`` makes a new
    object without it).
    """
    cached = getattr(skeleton, _CACHE_ATTR, None)
    if cached is not None:
        return cached
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
    arrays = SkeletonArrays(parents, lengths, rest_dirs, reach, order, subtree_end, position, rest,
                            {name: i for i, name in enumerate(skeleton.names)}, *groups,
                            tops, limbs, auto, held, kernel_groups(groups, limbs, auto))
    object.__setattr__(skeleton, _CACHE_ATTR, arrays)
    return arrays


def target_arrays(skeleton, targets, arrays: SkeletonArrays | None = None) -> tuple[np.ndarray, np.ndarray, list]:
    """Convert ``{joint: xyz}`` to (indices (k,) int64, positions (k, 3) float64, names).

    Keys are joint names (or integer joint indices); values finite 3-vectors. Raises ValueError
    for an empty mapping, an unknown joint (listing the joints), or a bad value (naming the
    joint).
    """
    if arrays is None:
        arrays = skeleton_arrays(skeleton)
    if not isinstance(targets, Mapping):
        raise ValueError(f"targets must be a mapping {{joint_name: xyz}}, got {type(targets).__name__}")
    if len(targets) == 0:
        raise ValueError("targets is empty; give at least one {joint_name: xyz}")
    index_of = arrays.index_of
    n = arrays.parents.shape[0]
    indices = np.empty(len(targets), dtype=np.int64)
    names = []
    for m, key in enumerate(targets):
        j = index_of.get(key) if isinstance(key, str) else None
        if j is None:
            if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < n:
                j = int(key)
            else:
                raise ValueError(f"targets: unknown joint {key!r}; joints are: {', '.join(skeleton.names)}")
        indices[m] = j
        names.append(skeleton.names[j])
    if len(set(names)) != len(names):
        raise ValueError("targets: the same joint is given twice (by name and by index)")
    try:
        positions = np.array(list(targets.values()), dtype=np.float64)
        good = positions.shape == (len(targets), 3) and bool(np.abs(positions).max() < MAX_COORDINATE)
    except (TypeError, ValueError):
        good = False
    if not good:
        for key, value in targets.items():
            if isinstance(value, tuple) and len(value) == 2 and np.ndim(value[0]) == 1:
                raise ValueError(f"targets[{key!r}]: oriented targets (xyz, rotation) are supported on chains only; "
                                 f"give a skeleton's targets as xyz positions")
            try:
                as_point(value, f"targets[{key!r}]", 3)
            except ValueError as exc:
                raise ValueError(f"{exc} (each target must be a finite xyz 3-vector)") from None
        raise ValueError("targets: each value must be a finite xyz 3-vector")
    return indices, positions, names


def prepare(skeleton, targets, initial, root):
    """Check and arrange the inputs shared by every skeleton method.

    Returns (arrays, target indices (k,), target positions (k, 3), joint names of the targets,
    initial (n, 3), root (3,), root_from_target). ``root_from_target`` is True when ``root`` was
    not given, so that a target on the root joint fixes the root. Raises ValueError on bad input
    (and when an explicit ``root`` disagrees with a target on the root joint).
    """
    arrays = skeleton_arrays(skeleton)
    indices, positions, names = target_arrays(skeleton, targets, arrays)
    n = arrays.parents.shape[0]
    if initial is None:
        initial = arrays.rest
    else:
        initial = as_points(initial, "initial", dim=3)
        if initial.shape[0] != n:
            raise ValueError(f"initial must have shape ({n}, 3) to match the skeleton, got {initial.shape}")
    root_from_target = root is None
    if root is None:
        root = initial[0].copy()
    else:
        root = as_point(root, "root", 3).copy()
        hit = np.flatnonzero(indices == 0)
        if hit.size and not np.allclose(positions[hit[0]], root, rtol=0.0, atol=1e-12 * max(1.0, float(arrays.reach.max()))):
            raise ValueError(f"root {root.tolist()} conflicts with the target on the root joint "
                             f"{skeleton.names[0]!r} {positions[hit[0]].tolist()}; give one of them")
    return arrays, indices, positions, names, initial, root, root_from_target


def raise_kernel_error(code: int, skeleton, indices) -> None:
    """Turn a kernel's negative status into a ValueError."""
    if code == BAD_INDEX:
        raise ValueError(f"target_indices must be distinct joint indices in [0, {skeleton.n_joints}), "
                         f"got {np.asarray(indices).tolist()}")
    if code == BAD_ROOT:
        raise ValueError("root conflicts with the target on the root joint; give one of them")
    raise ValueError(f"solver failed with code {code}")


def _writable(value, dtype) -> np.ndarray:
    """``value`` as a C-contiguous, writable array of ``dtype`` (copied only when needed: numba
    compiles read-only arrays as a separate type)."""
    arr = np.ascontiguousarray(value, dtype=dtype)
    return arr if arr.flags.writeable else arr.copy()


@dataclass(frozen=True)
class TrackingOptions:
    """Options of skeleton FABRIK.

    ``rigid_sub_bases``: False: the paper's sub-bases, every bone leaving a joint moves on its
    own. True: a joint's children at a distance move as one rigid body about it, as they do
    under a BVH joint's rotation (see ``rigid_groups``); the sub-base still goes to the centroid
    of its branches' (now rigid) proposals. ``"limbs"``: only the sub-bases inside limbs are
    rigid (a hand's palm carrying the fingers and thumb, a foot with several toes; see
    ``limb_groups``), their members found through zero-length joints; these groups are a prior,
    released when the solve stalls short of its targets with them. ``"auto"``: both kinds
    (``auto_groups``); only the groups that BVH does not hold rigid are released. ``"all"`` and
    ``"none"`` stand for True and False.

    ``swing_limbs``: True to first swing every limb (leg, arm, head; see ``limb_tops``) rigidly
    about its hip or shoulder joint so that it points at its targets, then iterate: a warm start
    for tracking, limbs keeping their shape from the previous frame.
    """

    rigid_sub_bases: bool | str = False
    swing_limbs: bool = False

    def __post_init__(self):
        mode = rigid_mode(self.rigid_sub_bases)
        if not isinstance(mode, (bool, str)) or mode not in (False, True, "limbs", "auto"):
            raise ValueError(f"rigid_sub_bases must be one of {RIGID_MODES}, got {self.rigid_sub_bases!r}")
        if not isinstance(self.swing_limbs, (bool, np.bool_)):
            raise ValueError(f"swing_limbs must be True or False, got {self.swing_limbs!r}")


def solve_fabrik_skeleton(skeleton, targets, initial, root, tol, max_iter, options) -> Solution:
    """Multi-end-effector FABRIK (sections 4.1, 4.2); arguments as ``fabrik.solvers.registry``
    says, options ``TrackingOptions``.

    ``targets``: ``{joint_name: xyz}``; any joint may be targeted, leaves or inner joints, the
    root included (its target then fixes the root). ``initial``: (n, 3) start pose (default the
    rest pose); ``root``: (3,) fixed root (default the root joint's target if it has one, else
    ``initial[0]``).

    Returns a ``Solution`` with ``effector_errors`` {joint name: distance}; ``extras
    ["released_groups"]`` names the centres of the rigid groups the solve released (a tuple, empty
    when none), and ``extras["effector_error_array"]`` holds the errors as a (k,) array in target
    order.
    """
    arrays, indices, positions, _, initial, root, root_from_target = prepare(skeleton, targets, initial, root)
    return _solve(skeleton, arrays, indices, positions, initial, root, root_from_target, float(tol), int(max_iter),
                  options.rigid_sub_bases, options.swing_limbs)


def _sequence(skeleton, indices, paths, initial, roots, tol, max_iter, options, progress) -> SequenceSolution:
    """A whole take in one compiled loop (``Method.sequence``, see ``solve_skeleton_sequence``)."""
    return solve_skeleton_sequence(skeleton, indices, paths, initial, roots, tol, max_iter, options.rigid_sub_bases,
                                   options.swing_limbs, progress)


add("fabrik", "skeleton", Solver(solve_fabrik_skeleton, TrackingOptions()), sequence=_sequence)


def _solve(skeleton, arrays: "SkeletonArrays", idx, pos, initial, root, root_from_target: bool, tol: float,
           max_iter: int, rigid_sub_bases, swing_limbs: bool) -> Solution:
    """One kernel call on checked inputs, and its ``Solution`` (errors by joint name, and as an
    array in ``extras["effector_error_array"]``; the released groups' centres)."""
    groups = rigid_group_arrays(arrays, rigid_sub_bases)
    released = np.zeros_like(groups[-1])
    out, _, _, iterations, errors, code = fabrik_tree(
        tree_args(arrays), groups, NO_LIMITS, (idx, pos, initial, NO_FRAMES, root, root_from_target), tol, max_iter,
        True, limb_arrays(arrays, swing_limbs, rigid_sub_bases)[0], released)
    if code < 0:
        raise_kernel_error(code, skeleton, idx)
    names = skeleton.names
    err = errors.tolist()
    return Solution(out, iterations, max(err), STATUSES[code], "fabrik",
                    {names[j]: e for j, e in zip(idx.tolist(), err)},
                    {"effector_error_array": errors, "released_groups": released_centres(skeleton, groups[0], released)})


def released_centres(skeleton, group_of, released) -> tuple[str, ...]:
    """Names of the centre joints of the rigid groups a solve released (``group_of`` (n,), -1 or
    the group whose centre the joint is; ``released``, one bool per group, from the kernel)."""
    if not released.any():
        return ()
    return tuple(skeleton.names[j] for j in np.flatnonzero(group_of >= 0) if released[group_of[j]])


def array_inputs(n: int, target_indices, target_positions, initial, root):
    """The light checks of the per-frame array interfaces (``solve_skeleton_arrays`` and the
    constrained ones) for a skeleton of n joints. Returns (indices (k,) int64, targets (k, 3),
    initial (n, 3), root (3,), root_from_target), all writable and C-contiguous; ``root`` None
    gives ``initial[0]`` with ``root_from_target`` True. ValueError names a wrong shape or a
    non-finite value."""
    idx = _writable(target_indices, np.int64)
    pos = _writable(target_positions, np.float64)
    p0 = _writable(initial, np.float64)
    k = idx.shape[0] if idx.ndim == 1 else -1
    if k < 1 or pos.shape != (k, 3):
        raise ValueError(f"target_indices must have shape (k,) with k >= 1 and target_positions (k, 3); "
                         f"got {idx.shape} and {pos.shape}")
    if p0.shape != (n, 3):
        raise ValueError(f"initial must have shape ({n}, 3) to match the skeleton, got {p0.shape}")
    if root is None:
        root_from_target = True
        r = p0[0].copy()
    else:
        root_from_target = False
        r = _writable(root, np.float64)
        if r.shape != (3,):
            raise ValueError(f"root must have shape (3,), got {r.shape}")
    if not all_finite3(pos, p0, r):
        raise ValueError("target_positions, initial and root must be finite (found NaN or inf)")
    return idx, pos, p0, r, root_from_target


def solve_skeleton_arrays(skeleton, target_indices, target_positions, initial, root=None, tol=_DEFAULT_TOL,
                          max_iter=DEFAULT_MAX_ITER, rigid_sub_bases: bool | str = False,
                          swing_limbs: bool = False) -> Solution:
    """Multi-end-effector FABRIK on arrays, for per-frame loops (no dictionaries to build).

    Same algorithm and results as ``fabrik.solve(skeleton, targets=...)``, with light checks only
    (shapes and finiteness), so that a warm-started frame costs a few microseconds of Python.

    Args:
        skeleton: a ``fabrik.Skeleton``.
        target_indices: (k,) distinct joint indices (``skeleton.index(name)``), k >= 1.
        target_positions: (k, 3) finite goals, row t for joint ``target_indices[t]``.
        initial: (n, 3) start pose (e.g. the previous frame's ``positions``). Never written.
        root: (3,) fixed root position, or None: the target of the root joint if index 0 is
            targeted, else ``initial[0]``.
        tol: absolute tolerance (model units) on every effector's error; max_iter: the cap.
        rigid_sub_bases, swing_limbs: as for ``solve_fabrik_skeleton``.

    Returns:
        ``Solution`` as from ``solve``; ``effector_errors`` is keyed by joint name, and
        ``extras["effector_error_array"]`` holds the same errors as a (k,) array in the order of
        ``target_indices``, and ``extras["released_groups"]`` the released groups' centres.

    Raises:
        ValueError: wrong shapes or dtypes that cannot be converted, non-finite values,
            repeated or out-of-range indices, an explicit root that conflicts with a root target.
    """
    arrays = getattr(skeleton, _CACHE_ATTR, None) or skeleton_arrays(skeleton)
    idx, pos, p0, r, root_from_target = array_inputs(arrays.parents.shape[0], target_indices, target_positions,
                                                     initial, root)
    return _solve(skeleton, arrays, idx, pos, p0, r, root_from_target, check_tol(tol), check_max_iter(max_iter),
                  rigid_sub_bases, swing_limbs)


def solve_skeleton_sequence(skeleton, target_indices, target_positions, initial, roots=None, tol=_DEFAULT_TOL,
                            max_iter=DEFAULT_MAX_ITER, rigid_sub_bases: bool | str = False, swing_limbs: bool = False,
                            progress: Callable[[int], None] | None = None, chunk: int | None = None) -> SequenceSolution:
    """Multi-end-effector FABRIK over F frames of a take, each frame started from the answer of the
    frame before, in one compiled loop.

    Frame by frame the same as calling ``solve_skeleton_arrays`` with the previous frame's
    ``positions`` as ``initial`` (to the last bit), without its per-frame Python cost (input
    checks, result records), which on a CMU walk is about as much as the iterations themselves.

    Args:
        skeleton: a ``fabrik.Skeleton``.
        target_indices: (k,) distinct joint indices (``skeleton.index(name)``), k >= 1.
        target_positions: (F, k, 3) finite goals: frame f, row t for joint ``target_indices[t]``.
        initial: (n, 3) the start pose of frame 0 (e.g. the recording's first frame). Never written.
        roots: (F, 3) the fixed root of every frame, or None: the root joint's target where index 0
            is targeted, else ``initial[0]`` in every frame.
        tol, max_iter, rigid_sub_bases, swing_limbs: as for ``solve_skeleton_arrays`` (every frame).
        progress: called with the number of frames just finished after each run of ``chunk``
            frames (e.g. a tqdm bar's ``update``).
        chunk: frames per compiled call when ``progress`` is given (default: about 1% of F).

    Returns:
        ``SequenceSolution`` (positions (F, n, 3), iterations (F,), effector_errors (F, k) in the
        order of ``target_indices``, status_codes (F,) into ``STATUSES``).

    Raises:
        ValueError: wrong shapes, non-finite values, repeated or out-of-range indices, no frames,
            an explicit root that conflicts with a root target (naming the frame).
    """
    arrays = getattr(skeleton, _CACHE_ATTR, None) or skeleton_arrays(skeleton)
    n = arrays.parents.shape[0]
    idx = _writable(target_indices, np.int64)
    pos = _writable(target_positions, np.float64)
    p0 = _writable(initial, np.float64)
    k = idx.shape[0] if idx.ndim == 1 else -1
    if k < 1 or pos.ndim != 3 or pos.shape[1:] != (k, 3) or pos.shape[0] < 1:
        raise ValueError(f"target_indices must have shape (k,) with k >= 1 and target_positions (F, k, 3) with "
                         f"F >= 1; got {idx.shape} and {pos.shape}")
    frames = pos.shape[0]
    if p0.shape != (n, 3):
        raise ValueError(f"initial must have shape ({n}, 3) to match the skeleton, got {p0.shape}")
    root_from_target = roots is None
    if root_from_target:
        rts = np.repeat(p0[:1], frames, axis=0)
    else:
        rts = _writable(roots, np.float64)
        if rts.shape != (frames, 3):
            raise ValueError(f"roots must have shape ({frames}, 3), one per frame of target_positions, got {rts.shape}")
    if not all_finite3(pos, p0, rts):
        raise ValueError("target_positions, initial and roots must be finite (found NaN or inf)")
    tol = check_tol(tol)
    max_iter = check_max_iter(max_iter)
    groups = rigid_group_arrays(arrays, rigid_sub_bases)
    limbs = limb_arrays(arrays, swing_limbs, rigid_sub_bases)
    out = np.empty((frames, n, 3))
    iterations = np.zeros(frames, dtype=np.int64)
    errors = np.zeros((frames, k))
    codes = np.zeros(frames, dtype=np.int64)
    step = frames if progress is None else max(1, int(chunk) if chunk else frames // 100)
    start = 0
    while start < frames:
        stop = min(frames, start + step)
        first = p0 if start == 0 else out[start - 1]
        done = fabrik_tree_frames(tree_args(arrays), groups, NO_LIMITS, idx, pos[start:stop], first, NO_FRAMES,
                                  rts[start:stop], root_from_target, tol, max_iter, True, limbs[0], out[start:stop],
                                  NO_FRAMES, iterations[start:stop], errors[start:stop], codes[start:stop])
        if done < stop - start:
            try:
                raise_kernel_error(int(codes[start + done]), skeleton, idx)
            except ValueError as exc:
                raise ValueError(f"frame {start + done}: {exc}") from None
        if progress is not None:
            progress(stop - start)
        start = stop
    return SequenceSolution(out, iterations, errors, codes, "fabrik", tuple(skeleton.names[j] for j in idx.tolist()))


__all__ = ["solve_fabrik_skeleton", "TrackingOptions", "solve_skeleton_arrays", "solve_skeleton_sequence", "skeleton_arrays", "SkeletonArrays", "limb_tops", "limb_pivot", "twist_branches", "limb_groups", "auto_groups", "kernel_groups", "rigid_groups", "rigid_group_arrays", "limb_arrays", "array_inputs", "RIGID_MODES",
           "target_arrays"]
