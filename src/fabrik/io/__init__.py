"""File formats: BVH motion capture (``load_bvh``, ``save_bvh``) and URDF arms (``load_urdf``,
``save_urdf``; yourdfpy is imported on first use)."""

from fabrik._lazy import lazy_attributes

__getattr__, __dir__ = lazy_attributes(globals(), {
    "BVHError": "fabrik.io.bvh", "load_bvh": "fabrik.io.bvh", "loads_bvh": "fabrik.io.bvh", "save_bvh": "fabrik.io.bvh",
    "URDFError": "fabrik.io.urdf", "load_urdf": "fabrik.io.urdf", "save_urdf": "fabrik.io.urdf",
})

__all__ = ["BVHError", "load_bvh", "loads_bvh", "save_bvh", "URDFError", "load_urdf", "save_urdf"]
