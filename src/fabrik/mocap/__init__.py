"""Motion capture: rebuild a recorded take from a few known joints and write it back as BVH.

Quick use::

    import fabrik
    from fabrik.mocap import reconstruct_take, save_take

    skeleton, motion = fabrik.load_bvh("walk.bvh")
    rec = reconstruct_take(skeleton, motion)                 # FABRIK from the leaves and the root
    rec.positions                                            # (frames, joints, 3), file units
    save_take("walk_fabrik.bvh", skeleton, motion, rec)      # -> largest distance from rec.positions
    limited = reconstruct_take(skeleton, motion, constraints="humanoid")   # with joint limits

``prepare_take`` sets a take up for the solvers (bones from position channels, a moving
reference node above the hips as the root), ``default_effectors`` / ``evaluated_joints`` say
which joints are followed and which are estimated, ``resolve_constraints`` reads limits and
``take_limits`` places them on a take,
``reconstruct_take`` / ``reconstruct_positions`` solve with one method through
``fabrik.solve_sequence``, and ``motion_from_positions`` / ``save_take`` turn positions back into
rotations (a constrained reconstruction: its joint frames, every limit kept in the file;
``motion_from_frames`` does that for any constrained solve of a skeleton). Conventions:
docs/conventions.md ("Indexing", BVH); usage: docs/mocap.md. The paper's comparison of every
method on a take (the ``fabrik reconstruct`` command) is built on these.
"""

from fabrik.mocap.export import motion_from_positions, save_take
from fabrik.mocap.frames_export import motion_from_frames
from fabrik.mocap.reconstruct import DEFAULT_REL_TOL, Reconstruction, reconstruct_positions, reconstruct_take
from fabrik.mocap.takes import (Take, coincident_groups, default_effectors, evaluated_joints, parse_frames,
                                prepare_take, resolve_constraints, take_limits)

__all__ = ["Take", "prepare_take", "default_effectors", "coincident_groups", "evaluated_joints", "parse_frames",
           "resolve_constraints", "take_limits", "Reconstruction", "reconstruct_take", "reconstruct_positions", "DEFAULT_REL_TOL",
           "motion_from_positions", "save_take", "motion_from_frames"]
