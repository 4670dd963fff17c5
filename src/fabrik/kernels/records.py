"""The named records the compiled entry points take, instead of long positional argument lists.

Each record is a ``collections.namedtuple``: numba compiles attribute access on it (``stop.tol``)
and caches the kernels that take it, and a kernel can still unpack it by position. The solvers
build the records; the kernels read them. Arrays inside a record follow the kernels' rule
(C-contiguous float64 unless said otherwise); output records hold arrays the kernel writes into.

Grouped by the models they serve; every record's fields are listed with their shapes and units in
the comment above it.

Numba types every argument of every call from Python; a tuple goes through its Python-level typing
field by field, which costs about a microsecond a record. ``_typeof_record`` (registered for every
record class below) keeps the type it found for each combination of field kinds (array dtype,
dimensions, layout, writeability, alignment; scalar type) and hands it back on the next call, which
saves about a third of that; a record holding anything else is typed by numba as usual.
"""

from collections import namedtuple

import numpy as np
from numba.core.typing.typeof import _typeof_tuple, typeof_impl

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


# --- fast typing of the records at the Python boundary ------------------------------------------

_SCALAR_KINDS = frozenset((float, bool, np.float64, np.int64, np.bool_, type(None)))
_KNOWN_TYPES: dict = {}
_NDARRAY = np.ndarray


def _typeof_record(value, context):
    """numba's type of a record (``_typeof_tuple``'s), remembered per combination of field kinds:
    an array's dtype, dimensions and flags (layout, writeability, alignment), a scalar's type, an
    int's sign range (numba types ints beyond int64 unsigned); a record holding anything else is
    typed in full every time."""
    key = [type(value), context.purpose]
    for field in value:
        kind = type(field)
        if kind is _NDARRAY:
            key.append((field.dtype.num, field.ndim, field.flags.num))
        elif kind is int:
            key.append(-2**63 <= field < 2**63)
        elif kind in _SCALAR_KINDS:
            key.append(kind)
        else:
            return _typeof_tuple(value, context)
    key = tuple(key)
    found = _KNOWN_TYPES.get(key)
    if found is None:
        found = _KNOWN_TYPES[key] = _typeof_tuple(value, context)
    return found


for _record in [v for v in list(globals().values()) if isinstance(v, type) and issubclass(v, tuple)
                and hasattr(v, "_fields")]:
    typeof_impl.register(_record)(_typeof_record)
