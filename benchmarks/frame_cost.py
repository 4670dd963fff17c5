"""What one frame of ``fabrik reconstruct``'s FABRIK row costs, split into Python and kernel time.

    .venv/bin/python benchmarks/frame_cost.py ../shared/data/mocap/cmu_131_01.bvh [FRAMES]

Solves the first FRAMES frames (default 300) once, as ``fabrik reconstruct`` does (default
effectors and tolerance, limbs swung, rigid hands, each frame from the previous answer), keeps each
frame's inputs, then times, over those same inputs (fastest of 7 repeats of 3 passes, so that the
shared machine's slow moments drop out):

- ``full``: ``solve_skeleton_arrays``, the per-frame call of the reconstruction loop;
- ``checks``: its input checks alone (``array_inputs``);
- ``kernel``: the compiled ``fabrik_tree`` alone;
- ``kernel, no iteration``: the kernel with ``max_iter=0`` (call, set-up, limb swing, rigid-hand
  fits);
- ``sequence``: ``solve_skeleton_sequence``, all the frames in one compiled loop, as
  ``fabrik reconstruct`` runs the FABRIK row (the same answers, frame by frame).

Prints microseconds per frame (the FABRIK row's frames per second are in ``docs/results.md``).
Run it with ``PYTHONPATH=<other checkout>/src`` to time another version
of the package on the same machine.
"""

from __future__ import annotations

import sys
import timeit

import numpy as np

import fabrik
from fabrik.kernels.fabrik_tree import fabrik_tree
from fabrik.kernels.records import NO_START_STEP, Stop, TreeOptions, TreeTask
from fabrik.mocap import DEFAULT_REL_TOL, default_effectors
from fabrik.model.rig import NO_FRAMES, NO_LIMITS, rig
from fabrik.solvers.skeleton_fabrik import solve_skeleton_arrays, solve_skeleton_sequence
from fabrik.solvers.skeleton_inputs import array_inputs


def main(path: str, n_frames: int = 300) -> dict:
    skeleton, motion = fabrik.load_bvh(path)
    truth = motion.world_positions(skeleton)
    n_frames = min(n_frames, truth.shape[0])
    effectors = np.array(default_effectors(skeleton), dtype=np.int64)
    tol = DEFAULT_REL_TOL * skeleton.height()
    targets = [np.ascontiguousarray(truth[f, effectors]) for f in range(n_frames)]
    roots = [truth[f, 0].copy() for f in range(n_frames)]
    starts = []
    pose = np.ascontiguousarray(truth[0])
    for f in range(n_frames):
        starts.append(pose)
        pose = solve_skeleton_arrays(skeleton, effectors, targets[f], pose, roots[f], tol, 1000, "auto", True).positions
    arrays = rig(skeleton)
    groups = arrays.groups("auto")
    released = np.zeros_like(groups.releasable)
    options = TreeOptions(True, arrays.limbs(True, "auto"), NO_START_STEP)
    tree = arrays.tree
    all_targets = np.ascontiguousarray(targets)
    all_roots = np.ascontiguousarray(roots)

    def full():
        for f in range(n_frames):
            solve_skeleton_arrays(skeleton, effectors, targets[f], starts[f], roots[f], tol, 1000, "auto", True)

    def checks():
        for f in range(n_frames):
            array_inputs(arrays.parents.shape[0], effectors, targets[f], starts[f], roots[f])

    def kernel(max_iter):
        stop = Stop(tol, 0.0, max_iter)

        def run():
            for f in range(n_frames):
                task = TreeTask(effectors, targets[f], starts[f], NO_FRAMES, roots[f], False)
                fabrik_tree(tree, groups, NO_LIMITS, task, stop, options, released)
        return run

    def sequence():
        solve_skeleton_sequence(skeleton, effectors, all_targets, starts[0], all_roots, tol, 1000, "auto", True)

    print(f"{path}: {n_frames} frames, {skeleton.n_joints} joints, {len(effectors)} targets; us per frame "
          f"(fastest of 7 x 3 passes)")
    result = {}
    for name, fn in (("full", full), ("checks", checks), ("kernel", kernel(1000)), ("kernel, no iteration", kernel(0)),
                     ("sequence", sequence)):
        fn()
        best = min(timeit.repeat(fn, number=3, repeat=7)) / (3 * n_frames) * 1e6
        result[name] = best
        print(f"  {name:<22}{best:8.1f}")
    return result


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
