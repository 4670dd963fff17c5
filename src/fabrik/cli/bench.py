"""``fabrik bench``: the paper's experiments as benchmarks, printed as tables and written as JSON.

- ``fabrik bench chain [--methods all|a,b] [--targets N] [--json PATH] [--plot DIR]``: Table 1 (a
  10-joint chain, N reachable and N unreachable targets) for each method; ``--plot`` writes the
  Figure 11 and 12 PNGs.
- ``fabrik bench tracking [--methods ...] [--steps N] [--max-iter N] [--json PATH] [--plot DIR]``: a target on a
  sinusoidal path in and out of reach, each step warm-started from the last pose.
- ``fabrik bench arm FILE.bvh|FILE.npz [...] [--side left|right|both] [--joints S,E,W,T] [--methods ...] [--json PATH]
  [--plot DIR]``: the DHM pilot study, a 7-joint arm tracked from the recorded tip pose.
- ``fabrik bench batch [--targets N] [--repeats R] [--lengths 10,100,...] [--parts ...] [--skeleton-targets N]
  [--arm-targets N] [--crowd NxF] [--json PATH] [--plot DIR]``:
  solves per second of ``fabrik.solve_batch`` against ``fabrik.solve`` in a loop and the plain
  one-chain-per-thread compiled kernel, and the cost against chain length; skeleton (the humanoid), arm
  (the DHM arm), crowd and float32 (Warp) tables.
- ``fabrik bench robot URDF [--tip LINK] [--base LINK] [--targets N] [--seed S] [--methods ...]
  [--tol T,...] [--orientation-tol A,...] [--json PATH] [--plot DIR]``: random reachable pose targets on a
  robot arm, each method (and TRAC-IK, ikpy) from the same start, at each tolerance.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fabrik._output import prepare_output
from fabrik.cli._common import check_count, parse_methods, show_progress, write_json
from fabrik.io.formats import FILE_KINDS


def _benchmark_methods() -> list[str]:
    """Chain methods for an unconstrained chain (those that apply joint limits are left out)."""
    from fabrik.solvers import methods, registry

    return [m for m in methods("chain") if not registry.get(m).limits]


def add_parser(sub) -> None:
    from fabrik_experiments.robot_bench import DEFAULT_METHODS as robot_methods

    bench = sub.add_parser("bench", help="run a benchmark (the paper's experiments)")
    kinds = bench.add_subparsers(dest="bench_kind", metavar="KIND")
    chain = kinds.add_parser("chain", help="Table 1: a 10-joint chain, 1000 reachable and 1000 unreachable targets")
    chain.add_argument("--methods", default="fabrik",
                       help="comma-separated method names, or 'all' (default: fabrik)")
    chain.add_argument("--targets", type=int, default=1000, help="targets per set (default 1000)")
    chain.add_argument("--seed", type=int, default=2011, help="random seed for the targets")
    chain.add_argument("--tol", type=float, default=1e-3, help="tolerance in chain units (default 1e-3)")
    chain.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    chain.add_argument("--plot", metavar="DIR", help="write Figure 11 and 12 PNGs into DIR")
    chain.add_argument("--constrained", action="store_true",
                       help="the paper's constrained chain instead (every joint a 60-degree cone): "
                            "constrained FABRIK against constrained CCD on reachable targets")
    chain.set_defaults(func=run_chain)
    tracking = kinds.add_parser("tracking", help="a target on a sinusoidal path in and out of reach, warm-started steps")
    tracking.add_argument("--methods", default="all", help="comma-separated method names, or 'all' (default)")
    tracking.add_argument("--steps", type=int, default=1000, help="simulation steps (default 1000)")
    tracking.add_argument("--tol", type=float, default=1e-3, help="tolerance in chain units (default 1e-3)")
    tracking.add_argument("--max-iter", type=int, default=None,
                          help="iteration cap per step (default: each method's own, 1000 or 10000)")
    tracking.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    tracking.add_argument("--plot", metavar="DIR", help="write the tracking PNG into DIR")
    tracking.set_defaults(func=run_tracking_cmd)
    arm = kinds.add_parser("arm", help="the DHM study: a 7-joint arm tracked from the recorded tip pose of takes "
                                       "(BVH, or joint positions as .npz)")
    arm.add_argument("files", nargs="+", metavar=FILE_KINDS, help="recorded takes, read by suffix (docs/mocap.md)")
    arm.add_argument("--side", choices=("left", "right", "both"), default="both", help="which arm (default both)")
    arm.add_argument("--joints", metavar="SHOULDER,ELBOW,WRIST,TIP",
                     help="the arm's joint names (default: found by name for CMU, Mixamo and Unreal rigs)")
    arm.add_argument("--methods", default="fabrik,ccd,jacobian-dls",
                     help="comma-separated arm methods (default fabrik,ccd,jacobian-dls)")
    arm.add_argument("--frames", metavar="START:STOP[:STEP]", help="a slice of each take's frames")
    arm.add_argument("--elbow-max", type=float, default=150.0,
                     help="the elbow's flexion limit in degrees (default 150, the normal range; the study's own "
                          "is 120)")
    arm.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    arm.add_argument("--plot", metavar="DIR", help="write the study's Figure 4 (recorded and predicted angles) per arm")
    arm.set_defaults(func=run_arm)
    robot = kinds.add_parser("robot", help="random reachable pose targets on a robot arm from URDF, beside TRAC-IK "
                                           "and ikpy")
    robot.add_argument("urdf", metavar="URDF", help="the robot's URDF file")
    robot.add_argument("--tip", metavar="LINK", help="the link the arm ends at (e.g. panda_hand; default: the one end "
                                                     "of the movable joints, as fabrik.load_urdf)")
    robot.add_argument("--base", metavar="LINK", help="the link the arm starts from (default: the root link)")
    robot.add_argument("--targets", type=int, default=1000, help="pose targets (default 1000)")
    robot.add_argument("--seed", type=int, default=0, help="random seed for the targets (default 0)")
    robot.add_argument("--methods", default=",".join(robot_methods),
                       help="comma-separated arm methods, options as name:option=value, and ikpy (default "
                            f"{','.join(robot_methods)})")
    robot.add_argument("--tol", default="0.001,1e-5",
                       help="position tolerances in model units (metres), comma-separated (default 0.001,1e-5)")
    robot.add_argument("--orientation-tol", default="0.5deg,1e-5",
                       help="orientation tolerances in radians, or degrees with 'deg', paired in order with --tol "
                            "(default 0.5deg,1e-5)")
    robot.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    robot.add_argument("--plot", metavar="DIR", help="write the fraction reached against time per solve as a PNG")
    robot.set_defaults(func=run_robot)
    batch = kinds.add_parser("batch", help="solves per second of fabrik.solve_batch against a loop and the plain "
                                           "compiled kernel, and the cost against chain length")
    batch.add_argument("--targets", type=int, default=200_000,
                       help="the largest batch (default 200000; sizes 1e3, 1e4, ... up to it)")
    batch.add_argument("--repeats", type=int, default=3, help="runs per figure, best kept (default 3)")
    batch.add_argument("--lengths", default="10,100,1000,10000",
                       help="comma-separated chain lengths (joints) of the scan (default 10,100,1000,10000)")
    batch.add_argument("--parts", default="chain,skeleton,arm,crowd,float32",
                       help="comma-separated parts to run: chain, skeleton, arm, crowd, float32 (default all)")
    batch.add_argument("--skeleton-targets", type=int, default=100_000,
                       help="the largest skeleton batch (the humanoid, 7 effectors; default 100000)")
    batch.add_argument("--arm-targets", type=int, default=100_000,
                       help="the largest arm batch (the DHM arm, pose targets; default 100000)")
    batch.add_argument("--crowd", default="1000x600",
                       help="the crowd: CHARACTERSxFRAMES humanoids walking at 60 Hz (default 1000x600)")
    batch.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    batch.add_argument("--plot", metavar="DIR", help="write the two PNGs (solves/s, chain length) into DIR")
    batch.set_defaults(func=run_batch)
    bench.set_defaults(func=lambda args: bench.print_help() or 2)


def run_arm(args: argparse.Namespace) -> int:
    """``bench arm``: the DHM pilot study on recorded takes (``fabrik_experiments.arm_study``)."""
    import math

    from fabrik.solvers.api import methods
    from fabrik_experiments.arm_study import plot_angles, run_study

    chosen = parse_methods(args.methods, methods("arm"))
    joints = None if args.joints is None else [j.strip() for j in args.joints.split(",")]
    if not 0.0 < args.elbow_max <= 180.0:
        raise ValueError(f"--elbow-max must be in (0, 180] degrees, got {args.elbow_max}")
    prepare_output(args.json, "--json")
    prepare_output(args.plot, "--plot", folder=True)
    sides = ("left", "right") if args.side == "both" else (args.side,)
    study = run_study(args.files, sides=sides, joints=joints, methods=chosen, frames=args.frames,
                      elbow_max=math.radians(args.elbow_max), progress=show_progress())
    print(study.table())
    if args.json:
        print(f"wrote {write_json(args.json, study.to_json())}")
    if args.plot:
        for take, tracks in zip(study.takes, study.tracks):
            path = Path(args.plot) / f"arm_{Path(take.source).stem}_{take.side}.png"
            plot_angles(take, tracks, path)
            print(f"wrote {path}")
    return 0


def run_robot(args: argparse.Namespace) -> int:
    """``bench robot``: pose targets on a URDF arm (``fabrik_experiments.robot_bench``)."""
    from fabrik_experiments.robot_bench import parse_tolerances, plot_robot_bench, run_robot_bench

    if args.targets < 1:
        raise ValueError(f"--targets must be >= 1, got {args.targets}")
    tolerances = parse_tolerances(args.tol, args.orientation_tol)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods:
        raise ValueError("--methods names no method")
    # each target: a pose (3 + 9 numbers), and per method its time, iterations and whether it reached
    check_count(args.targets, "--targets", 8 * (12 + 3 * len(methods)))
    prepare_output(args.json, "--json")
    prepare_output(args.plot, "--plot", folder=True)
    bench = run_robot_bench(args.urdf, tip=args.tip, base=args.base, n_targets=args.targets, seed=args.seed,
                            methods=list(dict.fromkeys(methods)), tolerances=tolerances, progress=show_progress())
    print(bench.table())
    if args.json:
        print(f"wrote {write_json(args.json, bench.to_json())}")
    if args.plot:
        name = f"robot_{Path(args.urdf).stem}_{bench.arm.tip_name}.png"
        print(f"wrote {plot_robot_bench(bench, Path(args.plot) / name)}")
    return 0


def run_batch(args: argparse.Namespace) -> int:
    """``bench batch``: ``fabrik.solve_batch`` throughput (``fabrik_experiments.batch_bench``)."""
    from fabrik_experiments.batch_bench import format_tables, plot_batch_bench, run_batch_bench

    from fabrik_experiments.batch_bench import PARTS

    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise ValueError(f"--parts must name some of {', '.join(PARTS)}, got {args.parts!r}")
    check_count(args.targets, "--targets", 8 * 6)  # (two sets of targets; solve_batch checks its own)
    check_count(args.skeleton_targets, "--skeleton-targets", 8 * (2 * 13 * 3 + 2 * 7 * 3 + 40))
    check_count(args.arm_targets, "--arm-targets", 8 * 160)
    try:
        characters, frames = (int(v) for v in args.crowd.lower().split("x"))
    except ValueError:
        raise ValueError(f"--crowd must be CHARACTERSxFRAMES (e.g. 1000x600), got {args.crowd!r}") from None
    if frames < 1:
        raise ValueError(f"--crowd frames must be >= 1, got {frames}")
    check_count(characters, "--crowd characters", 1)
    check_count(characters * frames, "--crowd characters x frames", 8 * (13 * 3 * 4 + 13 * 9 * 2 + 40))
    if args.repeats < 1:
        raise ValueError(f"--repeats must be >= 1, got {args.repeats}")
    try:
        lengths = [int(x) for x in args.lengths.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--lengths must be whole numbers separated by commas, got {args.lengths!r}") from None
    if not lengths or min(lengths) < 2:
        raise ValueError(f"--lengths must name chains of at least 2 joints, got {args.lengths!r}")
    prepare_output(args.json, "--json")
    prepare_output(args.plot, "--plot", folder=True)
    progress = (lambda text: print(f"  done: {text}", flush=True)) if show_progress() else None
    result = run_batch_bench(args.targets, repeats=args.repeats, lengths=lengths, progress=progress, parts=parts,
                             skeleton_targets=args.skeleton_targets, arm_targets=args.arm_targets,
                             crowd=(characters, frames))
    print(format_tables(result))
    if args.json:
        print(f"wrote {write_json(args.json, result)}")
    if args.plot:
        for path in plot_batch_bench(result, args.plot):
            print(f"wrote {path}")
    return 0


def run_chain(args: argparse.Namespace) -> int:
    from fabrik_experiments.table1 import convergence_trace, format_table, run_table1

    if args.targets < 1:
        raise ValueError(f"--targets must be >= 1, got {args.targets}")
    if args.constrained:
        return run_constrained_chain(args)
    chosen = parse_methods(args.methods, _benchmark_methods())
    # each target: two sets of points, and per set and method 8 arrays of results (``table1.MethodRun``)
    check_count(args.targets, "--targets", 8 * (6 + 2 * 8 * len(chosen)))
    prepare_output(args.json, "--json")
    prepare_output(args.plot, "--plot", folder=True)
    rows, runs = run_table1(chosen, n_targets=args.targets, seed=args.seed, tol=args.tol, progress=show_progress())
    print(f"Table 1: 10-joint chain (9 bones x 100 units), {args.targets} targets per set, tol={args.tol:g}")
    print(format_table(rows))
    if args.json:
        print(f"wrote {write_json(args.json, {'experiment': 'table1', 'tol': args.tol, 'targets_per_set': args.targets, 'results': rows})}")
    if args.plot:
        from fabrik.viz.bench_plots import plot_error_vs_time, plot_iterations_vs_distance

        traces = {m: convergence_trace(m, tol=args.tol) for m in chosen}
        out = Path(args.plot)
        print(f"wrote {plot_iterations_vs_distance(runs, traces, out / 'fig11_iterations_vs_distance.png')}")
        print(f"wrote {plot_error_vs_time(traces, out / 'fig12_error_vs_time.png')}")
    return 0


def run_tracking_cmd(args: argparse.Namespace) -> int:
    from fabrik_experiments.table1 import benchmark_chain
    from fabrik_experiments.tracking import format_table, run_tracking, target_path

    chosen = parse_methods(args.methods, _benchmark_methods())
    # each step: its target, and per method 5 arrays of results (``tracking.TrackingRun``)
    check_count(args.steps, "--steps", 8 * (3 + 5 * len(chosen)), minimum=2)
    if args.max_iter is not None and args.max_iter < 1:
        raise ValueError(f"--max-iter must be >= 1, got {args.max_iter}")
    prepare_output(args.json, "--json")
    prepare_output(args.plot, "--plot", folder=True)
    rows, runs = run_tracking(chosen, n_steps=args.steps, tol=args.tol, max_iter=args.max_iter,
                              progress=show_progress())
    cap = "" if args.max_iter is None else f", at most {args.max_iter} iterations a step"
    print(f"Tracking: 10-joint chain (reach 900), sinusoidal target path in and out of reach, {args.steps} steps, "
          f"tol={args.tol:g}{cap}; errors are beyond the unavoidable")
    print(format_table(rows, runs))
    if args.json:
        print(f"wrote {write_json(args.json, {'experiment': 'tracking', 'steps': args.steps, 'tol': args.tol, 'max_iter': args.max_iter, 'results': rows})}")
    if args.plot:
        from fabrik.viz.bench_plots import plot_tracking

        reach = benchmark_chain().total_length
        print(f"wrote {plot_tracking(runs, target_path(args.steps, reach), reach, Path(args.plot) / 'tracking.png')}")
    return 0


def run_constrained_chain(args: argparse.Namespace) -> int:
    """``bench chain --constrained``: section 5.3's constrained chain, FABRIK against CCD."""
    from fabrik_experiments.constrained import CONE_DEG, format_rows, run_constrained_bench

    if args.methods not in ("fabrik", "all", "fabrik,ccd", "ccd,fabrik"):
        raise ValueError("--constrained compares constrained FABRIK and CCD; leave --methods out")
    if args.plot:
        raise ValueError("--plot draws Figures 11 and 12 for the unconstrained chain; --constrained prints its "
                         "table (and --json) only")
    check_count(args.targets, "--targets", 8 * (6 + 2 * 4 * 2))  # targets, 4 arrays per method (2 methods)
    prepare_output(args.json, "--json")
    rows = run_constrained_bench(n_targets=args.targets, seed=args.seed, tol=args.tol, progress=show_progress())
    print(f"Constrained chain: 10 joints, 9 bones x 100 units, every joint a {CONE_DEG:g}-degree cone, "
          f"{args.targets} reachable targets within the limits, tol={args.tol:g}")
    print(format_rows(rows))
    if args.json:
        payload = {"experiment": "table1-constrained", "tol": args.tol, "targets": args.targets, "results": rows}
        print(f"wrote {write_json(args.json, payload)}")
    return 0
