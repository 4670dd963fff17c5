"""File formats: motion files by suffix (``load_motion``, ``save_motion``: BVH, and joint
positions as ``.npz``), BVH motion capture (``load_bvh``, ``save_bvh``), joint positions
(``load_positions``, ``save_positions``) and URDF arms (``load_urdf``, ``save_urdf``; yourdfpy is
imported on first use)."""

from fabrik._lazy import lazy_attributes

__getattr__, __dir__ = lazy_attributes(globals(), {
    "BVHError": "fabrik.io.bvh", "load_bvh": "fabrik.io.bvh", "loads_bvh": "fabrik.io.bvh", "save_bvh": "fabrik.io.bvh",
    "load_motion": "fabrik.io.formats", "save_motion": "fabrik.io.formats", "UnknownFormatError": "fabrik.io.formats",
    "PositionsError": "fabrik.io.positions", "load_positions": "fabrik.io.positions",
    "save_positions": "fabrik.io.positions",
    "URDFError": "fabrik.io.urdf", "load_urdf": "fabrik.io.urdf", "save_urdf": "fabrik.io.urdf",
})

__all__ = ["BVHError", "load_bvh", "loads_bvh", "save_bvh", "load_motion", "save_motion", "UnknownFormatError",
           "PositionsError", "load_positions", "save_positions", "URDFError", "load_urdf", "save_urdf"]
