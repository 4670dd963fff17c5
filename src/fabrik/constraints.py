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

from fabrik.io.limits_file import LimitsFileError, load_constraints, save_constraints
from fabrik.model.constraints import Cone, Hinge, Twist
from fabrik.model.humanoid_limits import humanoid
from fabrik.solvers.skeleton_fabrik_constrained import limit_violations

__all__ = ["Cone", "Hinge", "Twist", "humanoid", "load_constraints", "save_constraints", "LimitsFileError",
           "limit_violations"]
