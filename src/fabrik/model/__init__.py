"""Models: kinematic chains, skeletons (trees of joints), revolute-joint arms and joint constraints."""

from fabrik._lazy import lazy_attributes
from fabrik.model.chain import Chain
from fabrik.model.skeleton import Skeleton

__getattr__, __dir__ = lazy_attributes(globals(), {"Arm": "fabrik.model.arm"})

__all__ = ["Arm", "Chain", "Skeleton"]
