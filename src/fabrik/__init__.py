"""fabrik: inverse kinematics with FABRIK (Aristidou & Lasenby 2011).

Quick use::

    import numpy as np, fabrik
    chain = fabrik.Chain.from_positions(np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0]]))
    sol = fabrik.solve(chain, [1.0, 1.0, 0.0])
    sol.positions, sol.status

Revolute-joint arms (DH tables, URDF) and their forward kinematics::

    arm = fabrik.models.dhm_arm()            # or fabrik.load_urdf("panda.urdf", tip="panda_hand")
    positions, frames = fabrik.forward(arm, arm.random_angles(0))

Conventions are in docs/conventions.md (arms: docs/arms.md): units follow the data, right-handed
axes, angles in radians in the API, joint 0 is the root.
"""

from fabrik._lazy import lazy_attributes
from fabrik.model.chain import Chain
from fabrik.limits import Cone, Hinge, Twist
from fabrik.model.skeleton import Skeleton

__version__ = "0.1.0"

# numba, scipy and the solvers load on first use (``fabrik._lazy``): importing the package stays cheap
__getattr__, __dir__ = lazy_attributes(globals(), {
    "solve": "fabrik.solvers.api", "methods": "fabrik.solvers.api", "method": "fabrik.solvers.api",
    "DEFAULT_TOL": "fabrik.solvers.api", "Solution": "fabrik.solvers.result", "STATUSES": "fabrik.solvers.result",
    "SequenceSolution": "fabrik.solvers.result", "solve_sequence": "fabrik.solvers.sequence",
    "solve_batch": "fabrik.solvers.batch", "BatchSolution": "fabrik.solvers.batch",
    "BVHError": "fabrik.io.bvh", "load_bvh": "fabrik.io.bvh", "save_bvh": "fabrik.io.bvh",
    "load_motion": "fabrik.io.formats", "save_motion": "fabrik.io.formats",
    "UnknownFormatError": "fabrik.io.formats", "PositionsError": "fabrik.io.positions",
    "Arm": "fabrik.model.arm", "forward": "fabrik.model.arm",
    "quat_xyzw": "fabrik.model.pose", "quat_wxyz": "fabrik.model.pose",
    "URDFError": "fabrik.io.urdf", "load_urdf": "fabrik.io.urdf", "save_urdf": "fabrik.io.urdf",
    "Motion": "fabrik.model.motion", "rotations_from_positions": "fabrik.model.motion",
    "view": "fabrik.viz.viewer",
    "constraints": "", "models": "", "mocap": "", "obstacles": "", "loops": "",
})

__all__ = ["Chain", "Skeleton", "Solution", "SequenceSolution", "STATUSES", "DEFAULT_TOL", "solve", "solve_sequence",
           "solve_batch", "BatchSolution",
           "methods", "method", "load_bvh", "save_bvh", "load_motion", "save_motion", "UnknownFormatError",
           "PositionsError", "Arm", "forward", "quat_xyzw", "quat_wxyz", "load_urdf", "save_urdf", "URDFError",
           "BVHError", "Motion", "view", "rotations_from_positions", "Cone", "Hinge", "Twist", "constraints", "models",
           "obstacles", "loops",
           "__version__"]
