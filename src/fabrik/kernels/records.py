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



# --- trees (skeletons) --------------------------------------------------------------------------


