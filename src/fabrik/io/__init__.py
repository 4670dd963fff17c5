"""File formats: BVH motion capture (``load_bvh``, ``save_bvh``) and URDF arms (``load_urdf``,
``save_urdf``; yourdfpy is imported on first use)."""

from fabrik.io.bvh import BVHError, load_bvh, loads_bvh, save_bvh
from fabrik.io.urdf import URDFError, load_urdf, save_urdf

__all__ = ["BVHError", "load_bvh", "loads_bvh", "save_bvh", "URDFError", "load_urdf", "save_urdf"]
