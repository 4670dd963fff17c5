"""File formats: BVH motion capture (``load_bvh``, ``save_bvh``)."""

from fabrik.io.bvh import BVHError, load_bvh, loads_bvh, save_bvh

__all__ = ["BVHError", "load_bvh", "loads_bvh", "save_bvh"]
