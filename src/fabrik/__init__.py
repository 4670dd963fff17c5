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

from fabrik.model.chain import Chain
from fabrik.model.skeleton import Skeleton
from fabrik.solvers import DEFAULT_TOL, STATUSES, Solution, methods, solve
from fabrik.solvers.result import SequenceSolution
from fabrik.solvers.sequence import solve_sequence
from fabrik.io.bvh import BVHError, load_bvh, save_bvh
from fabrik.model.arm import Arm, forward
from fabrik.io.urdf import URDFError, load_urdf, save_urdf
from fabrik.model.motion import Motion, rotations_from_positions
from fabrik.model.constraints import Cone, Hinge, Twist
from fabrik import constraints, models

__version__ = "0.1.0"

__all__ = ["Chain", "Skeleton", "Solution", "SequenceSolution", "STATUSES", "DEFAULT_TOL", "solve", "solve_sequence",
           "methods", "load_bvh", "save_bvh", "Arm", "forward", "load_urdf", "save_urdf", "URDFError",
           "BVHError", "Motion", "rotations_from_positions", "Cone", "Hinge", "Twist", "constraints", "models",
           "__version__"]
