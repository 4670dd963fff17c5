"""Frames per second of ``fabrik reconstruct``'s whole-take solves, in CPU time.

    .venv/bin/python benchmarks/sequence_speed.py ../shared/data/mocap/cmu_131_0{1,2,3}.bvh [--repeats N]

Sets each take up as ``fabrik reconstruct --constraints humanoid`` does (``prepare_take``, the
humanoid limits placed on the first frame, the recording's first-frame joint frames), solves one
frame to compile, then times ``fabrik.mocap.reconstruct_positions`` over every frame with
``fabrik-constrained`` (turn_search on, as the command runs it) and with plain ``fabrik``:
``time.process_time``, the fastest of N passes (default 5) per take, so that a shared machine's
busy moments drop out (the command's own frames/s are wall time of one pass). Prints each take's
frames/s and the pooled figure (all frames over the summed fastest times). Run it with
``PYTHONPATH=<other checkout>/src`` to time another version of the package on the same machine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import fabrik
from fabrik.mocap.reconstruct import reconstruct_positions
from fabrik.mocap.takes import prepare_take, resolve_constraints


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    takes = []
    for path in args.files:
        skeleton, motion = fabrik.load_bvh(path)
        take = prepare_take(skeleton, motion)
        limits, _ = resolve_constraints(take.body, "humanoid", pose=take.body_positions[0])
        takes.append((path, take.body, take.body.with_constraints(limits), take.body_positions,
                      take.initial_frames()))

    def solve(row, take, frames=None):
        _, body, limited, positions, initial_frames = take
        positions = positions if frames is None else positions[:frames]
        if row == "fabrik-constrained":
            return reconstruct_positions(limited, positions, method=row, initial_frames=initial_frames)
        return reconstruct_positions(body, positions, method=row)

    for row in ("fabrik-constrained", "fabrik"):
        for take in takes:
            solve(row, take, 1)  # compile (or load the cache) outside the timing
        best = [np.inf] * len(takes)
        for _ in range(args.repeats):
            for t, take in enumerate(takes):
                start = time.process_time()
                solve(row, take)
                best[t] = min(best[t], time.process_time() - start)
        frames = [take[3].shape[0] for take in takes]
        for take, f, seconds in zip(takes, frames, best):
            print(f"{row:20s} {take[0].rsplit('/', 1)[-1]:20s} {f:6d} frames  {f / seconds:9.0f} frames/s")
        print(f"{row:20s} {'pooled':20s} {sum(frames):6d} frames  {sum(frames) / sum(best):9.0f} frames/s")


if __name__ == "__main__":
    main()
