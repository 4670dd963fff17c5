"""Models: kinematic chains, skeletons (trees of joints), revolute-joint arms and joint constraints."""

from fabrik.model.arm import Arm
from fabrik.model.chain import Chain
from fabrik.model.skeleton import Skeleton

__all__ = ["Arm", "Chain", "Skeleton"]
