"""The named records the compiled entry points take, instead of long positional argument lists.

Each record is a ``collections.namedtuple``: numba compiles attribute access on it (``stop.tol``)
and caches the kernels that take it, and a kernel can still unpack it by position. The solvers
build the records; the kernels read them. Arrays inside a record follow the kernels' rule
(C-contiguous float64 unless said otherwise); output records hold arrays the kernel writes into.

Grouped by the models they serve; every record's fields are listed with their shapes and units in
the comment above it.

A record crosses the Python boundary more slowly than the same arrays passed loose (about a
microsecond more per record with numba 0.68), so the entry points called once per solve take few.
"""

from collections import namedtuple

import numpy as np

# --- shared -------------------------------------------------------------------------------------

#: When an iterative solve stops: ``tol`` (units of the model) on the effector's distance to its
#: target, ``orientation_tol`` (radians) on an oriented target's angle, ``max_iter`` (int) the
#: iteration cap. Status codes are ``fabrik.kernels.stopping``'s.
Stop = namedtuple("Stop", "tol orientation_tol max_iter")

# --- chains -------------------------------------------------------------------------------------
# A chain kernel takes (task, lengths[, limits], stop[, method]): ``lengths`` (n-1,) the bone
# lengths, the chain's one fixed array, stays a plain argument. The batch kernels unpack their
# records before calling their prange loops: numba miscompiles arrays reached through a record in
# a ``parallel=True`` function (``fabrik.kernels.batch``).

#: One plain chain solve: ``initial`` (n, 3) the start pose, root first (the kernels copy it and
#: never write it); ``target`` (3,) the effector's goal; ``root`` (3,) where joint 0 is held. Model
#: units; 2D chains in z = 0.
ChainTask = namedtuple("ChainTask", "initial target root")

#: One solve of a chain with limits: ``ChainTask``'s fields, then ``target_rot`` (3, 3) the wanted
#: world frame of the last bone (columns right, bone, up), read only when ``oriented`` (bool).
LimitedTask = namedtuple("LimitedTask", "initial target root target_rot oriented")

#: A chain's joint limits: ``table`` (n, w) the packed limit rows (``fabrik.kernels.limit_layout``;
#: (0, w): none); ``root_frame`` (3, 3) the fixed frame joint 0's limit is measured in; ``planar``
#: (bool) a 2D chain in z = 0, whose frames are kept in that plane. Built (and cached) per chain by
#: ``fabrik.solvers.chain_limits.kernel_limits``.
ChainLimits = namedtuple("ChainLimits", "table root_frame planar")

#: A rotation-based chain method (``fabrik.kernels.rotation_chain``): ``mode`` (int) ``CCD`` (-1)
#: or a Jacobian mode 0..3 (``fabrik.kernels.jacobian``: transpose, DLS, SVD-DLS, SDLS); then the
#: Jacobian step's settings, which CCD does not read: ``damping`` (model units; DLS, SVD-DLS),
#: ``max_error_step`` (model units, ``inf``: no clamp of the error fed to the step),
#: ``max_angle_step`` (radians; SDLS's gamma_max), ``alpha`` (the transpose's fixed gain; <= 0:
#: adaptive).
RotationMethod = namedtuple("RotationMethod", "mode damping max_error_step max_angle_step alpha")

#: Many plain chain solves (``fabrik.kernels.batch``): ``initials`` (1 or N, n, 3) start poses,
#: one shared or one per target; ``targets`` (N, 3); ``roots`` (1 or N, 3). Model units.
ChainBatch = namedtuple("ChainBatch", "initials targets roots")

#: Many solves of a chain with limits: ``ChainBatch``'s fields, then ``rotations`` (1 or N, 3, 3)
#: the targets' last-bone frames, read only when ``oriented`` (bool).
LimitedBatch = namedtuple("LimitedBatch", "initials targets roots rotations oriented")

#: What a plain chain batch writes, row i for target i: ``positions`` (N, n, 3) float64,
#: ``iterations`` (N,) int64, ``errors`` (N,) float64 (model units), ``codes`` (N,) int64 status
#: codes.
ChainBatchOut = namedtuple("ChainBatchOut", "positions iterations errors codes")

#: What a batch of a chain with limits writes: ``ChainBatchOut``'s fields, then ``frames``
#: (N, n, 3, 3) float64 the bones' frames and ``orientation_errors`` (N,) float64 radians.
LimitedBatchOut = namedtuple("LimitedBatchOut", "positions iterations errors codes frames orientation_errors")

#: A chain's pole targets as ``fabrik.kernels.poles`` takes them: ``rows`` (k, 9) int64,
#: ``points`` (k, 3) float64 model units, ``members`` (m,) int64 (none: zero rows).
ChainPoles = namedtuple("ChainPoles", "rows points members")

#: A chain's obstacles (``fabrik.kernels.obstacles``): ``table`` (k, w) float64 packed obstacle
#: rows (none: zero rows); ``margin`` (model units) the clearance a bone must keep; ``planar``
#: (bool) a 2D chain in z = 0, whose bones are turned off obstacles within that plane.
ChainObstacles = namedtuple("ChainObstacles", "table margin planar")



# --- arms ---------------------------------------------------------------------------------------

#: An arm's kinematics (``fabrik.Arm``, m joints; the layout of ``fabrik.kernels.arm``): ``axes``
#: (m, 3) float64, each joint's unit axis in its own frame; ``origins`` (m, 4, 4) float64, joint k's
#: frame in joint k - 1's moving frame (the base frame for k = 0) at q = 0; ``tip`` (4, 4) float64,
#: the tip frame in the last joint's moving frame; ``slides`` (m,) bool, joint k prismatic;
#: ``lower``, ``upper`` (m,) float64, the joint values' limits (radians; model units for a
#: prismatic joint; -inf / inf where open).
ArmModel = namedtuple("ArmModel", "axes origins tip slides lower upper")

#: One arm solve's task: ``target`` (3,) float64, the tip's goal position (model units);
#: ``rotation`` (3, 3) float64, the tip frame's goal (columns the frame's axes in the base frame),
#: read only when ``oriented`` (bool; False: a position target); ``start`` (m,) float64, the joint
#: values the solve starts from (radians; model units for a prismatic joint; never written).
ArmTask = namedtuple("ArmTask", "target rotation oriented start")

#: A batch of arm tasks, one row per target: ``targets`` (N, 3) float64; ``rotations`` (1 or N, 3,
#: 3) float64, read when ``oriented`` (bool, for the whole batch); ``starts`` (1 or N, m) float64
#: (one row: the same start for every target). Each row as ``ArmTask``'s field of that name.
ArmTasks = namedtuple("ArmTasks", "targets rotations oriented starts")

#: The settings of one attempt of FABRIK, CCD or damped least squares on an arm
#: (``fabrik.kernels.arm_methods.arm_run``): ``scale`` (float, model units), the length a radian of
#: orientation error counts as (the arm's reach); ``window`` (int), the iterations without progress
#: that end the attempt; FABRIK's ``marker`` (float, model units), the distance of the orientation
#: markers from the tip, ``near`` (float), the error (position over ``scale`` plus orientation in
#: radians) below which Newton steps finish the solve (0: never; inf: from the start) and
#: ``barrier`` (bool), the joint limits' barrier in those steps from the start; DLS's ``damping``
#: (float, model units) and ``max_angle_step`` (float, radians). A method ignores the others' fields
#: (0 by default).
ArmSettings = namedtuple("ArmSettings", "scale window marker near barrier damping max_angle_step",
                         defaults=(0.0, 0.0, False, 0.0, 0.0))

#: The restarts of a compiled search (``fabrik.kernels.batch_arm.batch_search``, as
#: ``fabrik.solvers.arm.search``): ``starts`` (R, m) float64, the later attempts' start values, in
#: order; ``window`` (int), the no-progress window of an attempt while restarts remain (the last
#: attempt has ``ArmSettings.window``); ``reach`` (float, model units), the weight of a radian in
#: the score (position error + reach x orientation error) that picks the best attempt.
ArmSearch = namedtuple("ArmSearch", "starts window reach")

#: What a batch arm kernel writes, one row per target: ``q`` (N, m) float64 joint values;
#: ``positions`` (N, m + 1, 3) and ``frames`` (N, m + 1, 3, 3) float64, their
#: ``fabrik.kernels.arm.forward_arm`` pose; ``iterations`` (N,) int64; ``error`` (N,) float64, the
#: tip's distance to its target (model units); ``orientation_error`` (N,) float64, radians (0 for a
#: position target); ``status`` (N,) int64, ``fabrik.kernels.stopping``'s codes.
ArmAnswers = namedtuple("ArmAnswers", "q positions frames iterations error orientation_error status")

#: Scratch arrays of the damped least squares and Newton steps (``fabrik.kernels.arm_methods``),
#: allocated once per attempt, rows 6 for a pose target, else 3: ``J`` (rows, m) the Jacobian,
#: ``e`` (rows,) the residual, ``G`` (rows, rows) its normal matrix's factor, ``y`` (rows,),
#: ``dq`` (m,) the step, ``weights`` (m,) the joints' weights in it; ``trial`` (m,),
#: ``trial_positions`` (m + 1, 3) and ``trial_frames`` (m + 1, 3, 3): a step's pose before it is kept.
ArmScratch = namedtuple("ArmScratch", "J e G y dq weights trial trial_positions trial_frames")



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
#: (``fabrik.kernels.tree.limb_span``; (0,) none); ``start_step`` (4,) float64 the settings of
#: one damped least-squares step taken from the start pose before anything else, in the order
#: ``tree_method`` reads them (damping (model units), max_angle_step (radians), max_error_step
#: (model units), alpha (unused)); a damping of 0 takes no step (``NO_START_STEP``). (An array,
#: not a tuple: numba's parallel loops take no tuple of floats inside a record.) The stopping rule
#: is a ``Stop`` (its ``orientation_tol`` unused: tree targets are points).
TreeOptions = namedtuple("TreeOptions", "root_fixed limb_tops start_step")
NO_START_STEP = np.zeros(4)

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
