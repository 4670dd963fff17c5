"""Models: kinematic chains, skeletons (trees of joints) and joint constraints."""

from fabrik.model.chain import Chain
from fabrik.model.skeleton import Skeleton

__all__ = ["Chain", "Skeleton"]
