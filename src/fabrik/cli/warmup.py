"""Compile the numba kernels now, not on first use: ``python -m fabrik.cli.warmup [--all]``
(``make install`` runs it with ``--all``, so that ``make demo``, ``make test`` and the commands
start warm; without it, only the demo's, ``fabrik reconstruct``'s and ``fabrik render``'s).

Each kernel compiles the first time it is called on this machine and numba caches it on disk
(beside the sources), so later processes load it in a fraction of a second. Each
step calls what the commands call, on a few targets or frames, and says how long it took; a step
whose kernels are cached already takes a few seconds. On the 2-core development machine, with
other jobs running (load average 6), the default steps took 3.2 and 5.6 min, ``--all``'s two more 4.8
and 4.7 min.
"""

from __future__ import annotations

import sys
import tempfile
import time


def _demo() -> None:
    """What ``fabrik demo`` solves: Table 1's FABRIK rows and the sample walk rebuilt by FABRIK,
    CCD and DLS with and without the humanoid limits (BVH written, rotations fitted)."""
    from fabrik_experiments.sample_motion import run_demo_reconstruction
    from fabrik_experiments.table1 import run_table1

    run_table1(("fabrik",), n_targets=4)
    with tempfile.TemporaryDirectory() as tmp:
        run_demo_reconstruction(tmp, methods=["fabrik", "fabrik-constrained", "ccd", "jacobian-dls"], constrained=True)


def _chain_methods() -> None:
    """Every chain method on the Table 1 chain (``fabrik bench chain --methods all``), and the
    constrained chain (``--constrained``)."""
    import fabrik
    from fabrik_experiments.constrained import run_constrained_bench
    from fabrik_experiments.table1 import run_table1

    run_table1(tuple(fabrik.methods("chain")), n_targets=2)
    run_constrained_bench(n_targets=2)


def _takes() -> None:
    """Reading BVH files and rebuilding a take with every skeleton method (``fabrik reconstruct``,
    ``fabrik render take``)."""
    import fabrik
    from fabrik.mocap.reconstruct import reconstruct_take
    from fabrik_experiments.sample_motion import sample_walk

    skeleton, motion = sample_walk(n_frames=4)
    with tempfile.TemporaryDirectory() as tmp:
        fabrik.save_bvh(f"{tmp}/walk.bvh", skeleton, motion)
        skeleton, motion = fabrik.load_bvh(f"{tmp}/walk.bvh")
    for method in fabrik.methods("skeleton"):
        m = fabrik.method(method)
        reconstruct_take(skeleton, motion, method=method, constraints="humanoid" if m.limits else None)


def _batch_and_arms() -> None:
    """``fabrik.solve_batch`` (numba, every layout) and the arm methods on the DHM arm."""
    import numpy as np

    import fabrik
    from fabrik_experiments.table1 import benchmark_chain, make_targets

    chain = benchmark_chain()
    targets = make_targets(chain, 8)["reachable"]
    for layout in ("lockstep", "per-thread", "baseline"):
        fabrik.solve_batch(chain, targets, layout=layout)
    arm = fabrik.models.dhm_arm()
    positions, frames = fabrik.forward(arm, arm.random_angles(0))
    for method in fabrik.methods("arm"):
        fabrik.solve(arm, (positions[-1], frames[-1]), method=method, initial=np.zeros(arm.n_joints))
    # the skeleton and arm batches and a crowd (fabrik.kernels.batch_tree, batch_arm)
    body = fabrik.models.humanoid()
    limited = body.with_constraints(fabrik.constraints.humanoid(body)[0])
    goals = body.rest_positions()[None, body.leaves]
    for skeleton in (body, limited):
        fabrik.solve_batch(skeleton, goals)
        fabrik.solve_sequence(skeleton, {j: goals[:, None, k] for k, j in enumerate(body.leaves)})
    for method in ("fabrik", "ccd"):
        fabrik.solve_batch(arm, (positions[-1:], frames[-1:]), method=method)


#: the default steps (``make install``), then those ``--all`` adds
STEPS = (
    ("fabrik demo's kernels", _demo),
    ("BVH reading and the skeleton methods", _takes),
)
MORE_STEPS = (
    ("the chain methods", _chain_methods),
    ("solve_batch (chains, skeletons, arms, crowds) and the arm methods", _batch_and_arms),
)


def main(argv: list[str] | None = None) -> int:
    import argparse

    from fabrik._progress import stage

    parser = argparse.ArgumentParser(prog="python -m fabrik.cli.warmup", description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="also every chain method, solve_batch and the arms")
    steps = STEPS + (MORE_STEPS if parser.parse_args(argv).all else ())
    start = time.perf_counter()
    print("fabrik: compiling the numba kernels once for this machine (3-6 minutes on a 2-core machine the first "
          "time, 10 or more with --all; cached on disk, later runs load them)", file=sys.stderr, flush=True)
    for k, (what, step) in enumerate(steps, 1):
        with stage(f"[{k}/{len(steps)}] compiling {what}"):
            step()
    print(f"fabrik: kernels compiled and cached in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
