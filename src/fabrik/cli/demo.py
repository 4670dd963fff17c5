"""``fabrik demo``: the main job. Runs the paper's experiments at a glance and writes pictures."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


def add_parser(sub) -> None:
    demo = sub.add_parser("demo", help="run the Table 1 experiment and the other demos; write pictures")
    demo.add_argument("--out", default="fabrik-out", help="folder for pictures and JSON (default fabrik-out)")
    demo.add_argument("--targets", type=int, default=1000, help="targets per set for Table 1 (default 1000)")
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from fabrik import solve
    from fabrik._output import prepare_output
    from fabrik.cli._common import check_count, show_progress, write_json
    from fabrik_experiments.table1 import TABLE_LEGEND, benchmark_chain, format_table, make_targets, run_table1
    from fabrik.viz.chains import plot_chain_solutions

    check_count(args.targets, "--targets", 8 * (6 + 2 * 8))  # two sets of points, 8 result arrays a set
    out = Path(args.out)
    prepare_output(out, "--out", folder=True)
    start = time.perf_counter()

    print("== Table 1 (Aristidou & Lasenby 2011): 10-joint chain, 9 bones x 100 units, tol 1e-3 ==", flush=True)
    rows, _ = run_table1(("fabrik",), n_targets=args.targets, progress=show_progress())
    print(format_table(rows))
    print(TABLE_LEGEND)
    print(f"JSON: {write_json(out / 'table1.json', {'experiment': 'table1', 'results': rows})}")

    chain = benchmark_chain()
    targets = make_targets(chain, 3, seed=7)
    far = targets["unreachable"][0]
    far = far / np.linalg.norm(far) * 1.15 * chain.total_length
    picks = [targets["reachable"][0], targets["reachable"][1], np.array([0.0, 0.0, 0.0]), far]
    solutions = [solve(chain, t) for t in picks]
    png = plot_chain_solutions(chain.rest_positions, solutions, picks, out / "chains.png",
                               title="FABRIK on the Table 1 chain: three reachable targets (one at the root) and one beyond reach")
    print(f"picture: {png}")

    from fabrik_experiments.sample_motion import run_demo_reconstruction

    print("\n== Table 2 style reconstruction: a procedural walk rebuilt from its end effectors, "
          "without and with joint limits ==", flush=True)
    print(run_demo_reconstruction(out, methods=["fabrik", "fabrik-constrained", "ccd", "jacobian-dls"],
                                  constrained=True, progress=show_progress()))
    print(f"BVH files and JSON: {out}/sample_walk*.bvh, {out}/sample_walk_reconstruction.json")
    print(f"fabrik demo: done in {time.perf_counter() - start:.1f} s")
    return 0
