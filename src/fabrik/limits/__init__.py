"""Joint limits, one type per module: ``Cone``, ``Hinge``, ``Twist``, ``Polygon``.

Every type follows the protocol of ``fabrik.limits.base.Limit``: its parameters, its packing for
the kernels, a vectorised violation measure, its JSON form and what the viewer draws. The
projection kernel (``fabrik.kernels.constraints``) is the only other place a type appears.
``LIMIT_TYPES`` maps each JSON ``"type"`` to its class; ``joint_violation`` is the one measure
every checker uses (``fabrik.constraints.limit_violations``, the BVH writer's projection).
Conventions: docs/constraints.md.
"""

from fabrik.limits.base import LIMIT_TYPES, Drawing, Limit, joint_limits, joint_violation, twist_excess
from fabrik.limits.cone import MIN_CONE_ANGLE, Cone
from fabrik.limits.hinge import Hinge
from fabrik.limits.twist import Twist
from fabrik.limits.polygon import Polygon

#: the limit types' names, exported by ``fabrik.constraints`` too
TYPE_NAMES = [cls.__name__ for cls in LIMIT_TYPES.values()]

__all__ = [*TYPE_NAMES, "Limit"]
