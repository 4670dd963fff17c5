"""Joint limits (section 4.3 of the paper): the limit types, their files and how far a pose
exceeds them.

The limit types of ``fabrik.limits`` (``Cone``, a ball-and-socket joint bounded by the paper's
irregular cone: four angles; ``Hinge``, one axis with a range; ``Twist``, the roll about the
bone; and the others there, with ``Limit`` their base), attached with
``Chain.with_constraints`` or ``Skeleton.with_constraints``; ``humanoid(skeleton)`` places
human ranges on a skeleton by its joint names; ``load_constraints`` / ``save_constraints`` read
and write them as JSON (``LimitsFileError`` for a malformed file); ``limit_violations`` measures a
pose against them.

On a chain a limit on joint i restricts bone i (joint i -> i + 1) relative to bone i - 1 (joint
0: relative to the chain's fixed root frame); on a skeleton it restricts the bones leaving joint
i relative to the bone arriving at it. Angles are radians; conventions in docs/constraints.md.
"""

from __future__ import annotations

import numpy as np

from fabrik._validation import check_coordinates, real_numbers
from fabrik.io.limits_file import LimitsFileError, load_constraints, save_constraints
from fabrik.model.chain import Chain
from fabrik.limits import *  # noqa: F401,F403  (the limit types and Limit: fabrik.limits.__all__)
from fabrik.limits import __all__ as _limit_names
from fabrik.model.humanoid_limits import humanoid
from fabrik.model.skeleton import Skeleton
from fabrik.solvers.chain_limits import chain_limit_violations
from fabrik.model.geometry import limit_violations as skeleton_limit_violations


def limit_violations(model, positions, frames, directions_only: bool = False) -> np.ndarray:
    """How far (radians) each joint's limits are exceeded by a pose of a chain or a skeleton;
    (..., n), 0 where every limit holds.

    ``positions`` (..., n, d) and ``frames`` (..., n, 3, 3), a constrained solve's ``positions``
    and ``extras["frames"]``, may carry leading axes (e.g. the frames of a motion). Chains:
    ``fabrik.solvers.chain_limits.chain_limit_violations``; skeletons:
    ``fabrik.model.geometry.limit_violations``: the same measure, each limit's own
    (``fabrik.limits.base.joint_violation``: a cone's excess, a hinge's angle out of its plane
    and range, a twist's excess, ...), and a frame's +Y off its bone;
    ``directions_only``: the bones' directions alone, twists left out). Pure NumPy, independent
    of the solvers' kernels.

    Raises:
        ValueError: another model, shapes that do not match it, coordinates that are not finite
            or not below ``MAX_COORDINATE``, frames that are not rotations (orthonormal, right
            handed, to ``FRAME_TOL``).
    """
    if not isinstance(model, (Chain, Skeleton)):
        raise ValueError(f"limit_violations measures a fabrik.Chain or a fabrik.Skeleton, got {type(model).__name__}")
    positions = check_coordinates(real_numbers(positions, "positions"), "positions")
    frames = real_numbers(frames, "frames")
    if frames.ndim < 2 or frames.shape[-2:] != (3, 3):
        raise ValueError(f"frames must have shape (..., n, 3, 3), got {frames.shape}")
    if not np.isfinite(frames).all():
        raise ValueError("frames must be finite (a NaN or an infinity was given)")
    off = np.abs(np.einsum("...ji,...jk->...ik", frames, frames) - np.eye(3)).max(initial=0.0)
    if off > FRAME_TOL or (frames.size and np.linalg.det(frames).min() < 0.0):
        raise ValueError(f"frames must be rotation matrices (orthonormal columns, right handed, to {FRAME_TOL:g}); "
                         f"the largest entry of F^T F - I is {off:.3g}")
    if isinstance(model, Chain):
        return chain_limit_violations(model, positions, frames, directions_only)
    return skeleton_limit_violations(model, positions, frames, directions_only)


#: how far from orthonormal (largest entry of F^T F - I) a frame given to ``limit_violations`` may be
FRAME_TOL = 1e-6


__all__ = [*_limit_names, "humanoid", "load_constraints", "save_constraints", "LimitsFileError", "limit_violations"]
