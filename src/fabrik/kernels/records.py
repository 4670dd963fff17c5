"""The named records the compiled entry points take, instead of long positional argument lists.

Each record is a ``collections.namedtuple``: numba compiles attribute access on it (``stop.tol``)
and caches the kernels that take it, and a kernel can still unpack it by position. The solvers
build the records; the kernels read them. Arrays inside a record follow the kernels' rule
(C-contiguous float64 unless said otherwise); output records hold arrays the kernel writes into.

Grouped by the models they serve; every record's fields are listed with their shapes and units in
the comment above it.
"""

from collections import namedtuple

# --- shared -------------------------------------------------------------------------------------

#: When an iterative solve stops: ``tol`` (units of the model) on the effector's distance to its
#: target, ``orientation_tol`` (radians) on an oriented target's angle, ``max_iter`` (int) the
#: iteration cap. Status codes are ``fabrik.kernels.stopping``'s.
Stop = namedtuple("Stop", "tol orientation_tol max_iter")

# --- chains -------------------------------------------------------------------------------------



# --- arms ---------------------------------------------------------------------------------------



# --- trees (skeletons) --------------------------------------------------------------------------

# A skeleton of n joints (root 0, parents before children) in ``fabrik.model.rig``'s flat form; the
# skeleton FABRIK kernels (``fabrik.kernels.fabrik_tree``, ``batch_tree``) and the other tree methods
# (``fabrik.kernels.tree_methods``) take these, read-only unless said otherwise.

#: The tree (``fabrik.model.rig.Rig.tree``): ``parents`` (n,) int64, -1 for the root; ``lengths``
#: (n,) bone lengths from the parent (model units; 0 for the root); ``rest_dirs`` (n, 3) unit rest
#: directions of the bones (+Y for the root and zero-length bones); ``reach`` (n,) summed bone
#: lengths from the root; ``order`` (n,) int64 depth-first pre-order, root first; ``subtree_end``
#: and ``position`` (n,) int64: the joints below j are ``order[position[j] + 1:subtree_end[j]]``.
Tree = namedtuple("Tree", "parents lengths rest_dirs reach order subtree_end position")

#: The G rigid groups a solve holds (``fabrik.model.rig.kernel_groups``; ``fabrik.kernels.
#: rigid_groups``): ``group_of`` (n,) int64, the group centred on each joint or -1; group g's m_g
#: members are ``group_members[group_start[g]:group_start[g + 1]]`` (``group_start`` (G + 1,) int64,
#: ``group_members`` (m,) int64) with rest offsets from the centre ``group_offsets`` (m, 3) (model
#: units); ``in_group`` (n,) int64, the group a joint belongs to or -1; ``releasable`` (max(G, 1),)
#: bool, the groups a stalled solve may let go. No groups: (1,) -1, (1,) 0, (0,), (0, 3), (1,) -1.
Groups = namedtuple("Groups", "group_of group_start group_members group_offsets in_group releasable")

#: The joint limits a solve with frames keeps (``fabrik.model.rig.limit_tables``; empty tables,
#: ``NO_LIMITS``, without frames): ``Q`` (n, 3, 3) what each bone's limit is measured from;
#: ``rows`` (n, w) the packed limits (``fabrik.kernels.limit_layout``), row j for the bones leaving
#: j; ``circ`` (n, 2) (cos, sin) of a circular cone's half-angle, (2, 0) where row j is not one;
#: ``hcs`` (n, 7) a hinge held at twist 0 (1, cos lo, sin lo, cos hi, sin hi, lo, hi; radians),
#: zeros elsewhere; ``own_start`` (n + 1,) and ``own_list`` int64, CSR lists of the bones whose
#: reference frame is joint i's; ``R0`` (n, 3, 3) the rest frames.
TreeLimits = namedtuple("TreeLimits", "Q rows circ hcs own_start own_list R0")

#: One solve: ``target_idx`` (k,) int64 the targeted joints; ``targets`` (k, 3) their goals (model
#: units), row t for joint ``target_idx[t]``; ``initial`` (n, 3) the start pose; ``initial_frames``
#: (n, 3, 3) its joint frames, or (0, 3, 3) for a solve without frames (``NO_FRAMES``); ``root``
#: (3,) the fixed root; ``root_from_target`` (bool) whether ``root`` came from a target on the root
#: joint rather than the caller. ``batch_tree`` takes one with a leading row axis: targets
#: (N, k, 3), initial (1 or N, n, 3), initial_frames (1 or N, n, 3, 3) or (1, 0, 3, 3), root (1 or
#: N, 3) (1: shared by every row).
TreeTask = namedtuple("TreeTask", "target_idx targets initial initial_frames root root_from_target")

#: A take of F frames, each started from the answer before (``fabrik_tree_frames``): as
#: ``TreeTask``, with ``targets`` (F, k, 3), ``roots`` (F, 3) one per frame, and ``initial``,
#: ``initial_frames`` the start of frame 0. ``crowd_tree`` takes one with a leading character
#: axis: targets (N, F, k, 3), initial (1 or N, n, 3), initial_frames (1 or N, n, 3, 3) or
#: (1, 0, 3, 3), roots (1 or N, F, 3).
TreeTake = namedtuple("TreeTake", "target_idx targets initial initial_frames roots root_from_target")

#: How skeleton FABRIK runs (``fabrik.solvers.skeleton_fabrik._kernel_inputs``): ``root_fixed``
#: (bool) with frames, hold the root frame at ``initial_frames[0]`` instead of refitting it every
#: iteration; ``limb_tops`` (m,) int64 the limbs swung towards their targets first, ancestors first
#: (``fabrik.kernels.tree.limb_span``; (0,) none). The stopping rule is a ``Stop`` (its
#: ``orientation_tol`` unused: tree targets are points).
TreeOptions = namedtuple("TreeOptions", "root_fixed limb_tops")

#: Where a batch's start frames come from (``batch_tree``): ``derive`` (bool) each row's frames
#: ``frames_from_pose`` of its start pose, from ``parents`` (n,) int64, ``lengths`` (n,), ``Q``
#: (n, 3, 3) (``Rig.Q``, the rest turn of each bone) and ``own_start``, ``own_list`` (as in
#: ``TreeLimits``), instead of the task's ``initial_frames``; ``root_matrix`` (3, 3) a root
#: rotation replacing every start's frame 0, or (0, 3) for none.
StartFrames = namedtuple("StartFrames", "derive root_matrix parents lengths Q own_start own_list")

#: What a take writes, frame f in row f (``fabrik_tree_frames``): ``positions`` (F, n, 3),
#: ``frames`` (F, n, 3, 3) (with frames; else (0, 3, 3) or (F, 0, 3, 3), never written),
#: ``iterations`` (F,) int64, ``errors`` (F, k) the effectors' distances to their targets (model
#: units), ``codes`` (F,) int64 statuses (``fabrik.solvers.result.STATUSES``; negative: bad input).
#: ``crowd_tree`` writes one with a leading character axis (N, F, ...).
TakeOut = namedtuple("TakeOut", "positions frames iterations errors codes")

#: What a batch of N solves writes, row i for solve i (``batch_tree``): ``positions`` (N, n, 3);
#: with frames ``frames`` (N, n, 3, 3) and ``active`` (N, n) int64 (1 where a joint's limit is on its
#: boundary), else (N, 0, 3, 3) and (N, 0); ``iterations`` (N,) int64; ``errors`` (N, k) (model
#: units); ``codes`` (N,) int64 statuses as in ``TakeOut``.
BatchOut = namedtuple("BatchOut", "positions frames active iterations errors codes")
