"""Joint limits (section 4.3 of the paper): the limit types, their files and how far a pose
exceeds them.

``Cone`` (a ball-and-socket joint bounded by the paper's irregular cone: four angles),
``Hinge`` (one axis with a range) and ``Twist`` (the roll about the bone), attached with
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

from fabrik.io.limits_file import LimitsFileError, load_constraints, save_constraints
from fabrik.model.chain import Chain
from fabrik.model.constraints import Cone, Hinge, Twist
from fabrik.model.humanoid_limits import humanoid
from fabrik.model.skeleton import Skeleton
from fabrik.solvers.fabrik_constrained import chain_limit_violations
from fabrik.solvers.skeleton_fabrik_constrained import limit_violations as skeleton_limit_violations


def limit_violations(model, positions, frames) -> np.ndarray:
    """How far (radians) each joint's limits are exceeded by a pose of a chain or a skeleton;
    (..., n), 0 where every limit holds.

    ``positions`` (..., n, d) and ``frames`` (..., n, 3, 3), a constrained solve's ``positions``
    and ``extras["frames"]``, may carry leading axes (e.g. the frames of a motion). Chains:
    ``fabrik.solvers.fabrik_constrained.chain_limit_violations``; skeletons:
    ``fabrik.solvers.skeleton_fabrik_constrained.limit_violations`` (the same measure: a cone's
    excess, a hinge's angle out of its plane and range, a twist's excess, and a frame's +Y off
    its bone). Pure NumPy, independent of the solvers' kernels.
    """
    if isinstance(model, Chain):
        return chain_limit_violations(model, positions, frames)
    if isinstance(model, Skeleton):
        return skeleton_limit_violations(model, positions, frames)
    raise ValueError(f"limit_violations measures a fabrik.Chain or a fabrik.Skeleton, got {type(model).__name__}")


__all__ = ["Cone", "Hinge", "Twist", "humanoid", "load_constraints", "save_constraints", "LimitsFileError",
           "limit_violations"]
