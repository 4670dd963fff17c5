"""``fabrik reconstruct FILE.bvh|FILE.npz``: the paper's Table 2 experiment on a motion-capture
file (BVH, or joint positions over time as ``.npz``: ``fabrik.load_motion``).

Every frame is solved from the recorded positions of the end effectors and the root; the table
reports how far each method's inner joints land from the recorded ones (see
``fabrik_experiments.reconstruction`` for the exact definitions). ``--constraints humanoid`` (or
a constraints JSON file) gives joint limits to the methods that apply them
(``fabrik-constrained``, ``ccd-constrained``, ``jacobian-dls-constrained``, ...; the default
methods then include ``fabrik-constrained``), each reported with the largest limit violation it
shows in any frame (radians). The rows are exactly the methods named; ``--out`` writes the
first one's poses (or ``--out-method``'s).

Given several files (``fabrik reconstruct takes/*.bvh``), each take gets its own table and then a
pooled one (``fabrik_experiments.reconstruction_report.pool_reports``); ``--out`` is then a
folder that receives one file per take, named and written as its input, and a take that cannot
be read or solved is skipped with its reason (the exit code is then 1). ``--workers N`` runs the takes on a local Dask cluster of
N processes, ``--scheduler ADDRESS`` on an existing one (docs/batch.md): the same tables but
for the timings, a progress bar over takes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fabrik._output import prepare_output
from fabrik.cli._common import parse_method_options, parse_methods, show_progress, write_json
from fabrik.io.formats import FILE_KINDS, SUFFIXES, motion_format


def add_parser(sub) -> None:
    p = sub.add_parser("reconstruct", help="Table 2: reconstruct a recorded motion from its end effectors",
                       description="Reconstruct every frame of a motion file (BVH, or joint positions over time as "
                                   ".npz: positions, parents, names, fps) from the recorded positions of its "
                                   "end effectors and root, with each IK method, and report the inner-joint "
                                   "errors (Table 2 of the paper). Several files: a table per take, then the "
                                   "errors pooled over all of them.")
    p.add_argument("files", nargs="+", metavar=FILE_KINDS,
                   help="motion capture file(s), read by suffix (docs/mocap.md); with several, each is reported "
                        "and then all are pooled")
    p.add_argument("--effectors", metavar="NAMES",
                   help="comma-separated joint names used as targets (default: every leaf; zero-length End "
                        "Sites stand for their parent)")
    p.add_argument("--methods", metavar="NAMES",
                   help="comma-separated skeleton methods, or 'all' (default: fabrik,fabrik-dls-start,ccd,jacobian-transpose,"
                        "jacobian-dls,jacobian-svd-dls where available, and fabrik-constrained after fabrik with "
                        "--constraints); exactly these rows are run")
    p.add_argument("--frames", metavar="START:STOP[:STEP]",
                   help="frame range, Python slice style (e.g. 0:500, or ::40 for 3 Hz from 120 Hz; a range that "
                        "starts with '-' needs '=', as in --frames=-100:)")
    p.add_argument("--out", metavar="OUT.bvh|OUT.npz",
                   help="write a reconstruction (the first method's; see --out-method) with the input's skeleton, "
                        "as BVH or joint positions by the suffix; with several files, a folder that gets one file "
                        "per take, named and written as its input")
    p.add_argument("--out-method", metavar="NAME",
                   help="the method whose reconstruction --out writes (default the first of --methods); run even "
                        "when --methods leaves it out")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON (with several files: every "
                                                  "take's results and the pooled ones)")
    p.add_argument("--tol", type=float, default=None,
                   help="solver tolerance in file units (default: 1e-3 x skeleton height)")
    p.add_argument("--max-iter", type=int, default=None, help="iteration cap per frame (default: each method's)")
    p.add_argument("--constraints", metavar="humanoid|FILE.json",
                   help="joint limits: 'humanoid' (a default human set placed by joint names, moved onto the "
                        "take's first frame where the rig's rest pose breaks them) or a constraints JSON file, for "
                        "the methods that apply limits (fabrik-constrained, ccd-constrained, "
                        "jacobian-dls-constrained, ...), each reported with its largest limit violation (radians)")
    p.add_argument("--rigid-sub-bases", choices=("auto", "limbs", "all", "none"), default="auto",
                   help="which sub-bases FABRIK keeps rigid: 'auto' (default) 'all' and 'limbs' together, released "
                        "in frames that stall with them; 'limbs' those inside limbs, such as a hand carrying fingers "
                        "and thumb; 'all' every joint's children at a distance, as under a BVH joint rotation "
                        "(slower to converge where groups are coupled); 'none' the paper's sub-bases (the written "
                        "BVH may then differ from the solved poses)")
    p.add_argument("--no-limb-swing", action="store_true",
                   help="start FABRIK's frames from the previous pose as it is, without first swinging each limb "
                        "about its hip or shoulder joint towards its targets")
    p.add_argument("--option", action="append", metavar="METHOD:NAME=VALUE",
                   help="a method's own option, repeatable, e.g. jacobian-dls:damping=0.02 (the DLS damping is "
                        "in file units, default 1.1 as in the paper) or fabrik-constrained:turn_search=false; values "
                        "are numbers, true, false or none (see each method's docstring for its options)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="run the takes on a local Dask cluster of N worker processes (needs dask[distributed], "
                        "the 'cluster' extra); same tables as the serial run but for the timings")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the takes on an existing Dask cluster, e.g. tcp://host:8786 (instead of --workers)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from fabrik.solvers import methods, registry
    from fabrik_experiments.reconstruction import default_methods, reconstruct_file

    available = methods("skeleton")
    if args.methods is not None:
        chosen = parse_methods(args.methods, available)
        if args.methods == "all" and args.constraints is None:
            chosen = [m for m in chosen if not registry.get(m).limits]  # they need --constraints
    else:
        chosen = default_methods(args.constraints is not None)
    if not chosen:
        raise ValueError(f"--methods names no method; methods are: {', '.join(available)}, or all")
    if args.constraints is not None and not any(registry.get(m).limits for m in chosen):
        raise ValueError(f"--constraints gives joint limits, but none of --methods ({', '.join(chosen)}) applies them: "
                         "add fabrik-constrained (or another '-constrained' method)")
    effectors = None
    if args.effectors is not None:
        effectors = [e.strip() for e in args.effectors.split(",") if e.strip()]
        if not effectors:
            raise ValueError("--effectors names no joint; give comma-separated joint names, or leave it out for "
                             "every leaf")
    if args.out_method is not None:
        if args.out is None:
            raise ValueError("--out-method needs --out")
        parse_methods(args.out_method, available)
    if args.out is not None:
        _say_if_unwritable(args.out_method or chosen[0], args.rigid_sub_bases)
    if args.max_iter is not None and args.max_iter < 0:
        raise ValueError(f"--max-iter must be >= 0, got {args.max_iter}")
    several = len(args.files) > 1
    if args.out is not None and not several:
        motion_format(args.out)  # a suffix no format has is refused before any solving
    outs = _out_paths(args.files, args.out) if several else [args.out]
    _refuse_overwriting_inputs(args.files, outs)
    prepare_output(args.json, "--json")
    prepare_output(args.out, "--out", folder=several)
    needy = [m for m in chosen if registry.get(m).limits]
    if args.constraints is None and needy:
        raise ValueError(f"method(s) {', '.join(needy)} need --constraints humanoid or --constraints FILE.json")
    options = parse_method_options(args.option)
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    if args.workers is not None and args.scheduler is not None:
        raise ValueError("give --workers (a local Dask cluster) or --scheduler (an existing one), not both")
    if args.workers is not None or args.scheduler is not None:
        return _run_on_cluster(args, outs, dict(effectors=effectors, methods=chosen, frames=args.frames,
                                                tol=args.tol, max_iter=args.max_iter, constraints=args.constraints,
                                                rigid_sub_bases=args.rigid_sub_bases,
                                                swing_limbs=not args.no_limb_swing, method_options=options,
                                                out_method=args.out_method))

    def one(path, out):
        return reconstruct_file(path, effectors=effectors, methods=chosen, frames=args.frames, tol=args.tol,
                                max_iter=args.max_iter, out=out, progress=show_progress(),
                                constraints=args.constraints, rigid_sub_bases=args.rigid_sub_bases,
                                swing_limbs=not args.no_limb_swing, method_options=options,
                                out_method=args.out_method)[0]

    if not several:  # one take: its errors are the command's
        return _report(args, [(args.files[0], args.out, one(args.files[0], args.out), None)], {})

    def serial():
        for path, out in zip(args.files, outs):
            try:
                yield path, out, one(path, out), None
            except (ValueError, OSError) as exc:  # one bad take does not lose the others
                yield path, out, None, str(exc)

    return _report(args, serial(), {})


def _run_on_cluster(args, outs, kwargs) -> int:
    """The takes on Dask (``fabrik_experiments.reconstruction.reconstruct_takes``), reported as the
    serial run reports them; a take that fails is skipped with its reason (exit code 1)."""
    from fabrik_experiments.reconstruction import reconstruct_takes

    results = reconstruct_takes(args.files, outs=outs, workers=args.workers, scheduler=args.scheduler,
                                progress=show_progress(), **kwargs)
    outcomes = [(path, out, report, reason) for path, out, (report, reason) in zip(args.files, outs, results)]
    return _report(args, outcomes, {"workers": args.workers, "scheduler": args.scheduler})


def _report(args, outcomes, extra_json: dict) -> int:
    """Print each take's table as its outcome ``(path, out, report or None, reason)`` arrives, then,
    for several takes, the pooled table and the skipped takes; write ``--json`` (with
    ``extra_json`` for several takes). Returns the exit code: 1 when a take was skipped."""
    from fabrik_experiments.reconstruction_report import pool_reports

    reports, skipped = [], []
    for path, out, report, reason in outcomes:
        if report is None:
            skipped.append({"source": str(path), "error": reason})
            print(f"fabrik reconstruct: skipped {path}: {reason}", file=sys.stderr)
            continue
        reports.append(report)
        print(report.table())
        if out:
            print(f"wrote {out} ({report.out_method} reconstruction)")
        if len(args.files) > 1:
            print()
    if not reports:
        raise ValueError("no take could be reconstructed: "
                         + "; ".join(f"{s['source']}: {s['error']}" for s in skipped))
    if len(args.files) == 1:
        if args.json:
            print(f"wrote {write_json(args.json, reports[0].to_json())}")
        return 0
    pooled = pool_reports(reports)
    print(pooled.table())
    if skipped:
        print(f"skipped {len(skipped)} of {len(args.files)} takes: {', '.join(s['source'] for s in skipped)}")
    if args.json:
        payload = {"experiment": "table2-reconstruction", "takes": [r.to_json() for r in reports],
                   "pooled": pooled.to_json(), "skipped": skipped, **extra_json}
        print(f"wrote {write_json(args.json, payload)}")
    return 1 if skipped else 0


def _say_if_unwritable(method: str, rigid_sub_bases: str) -> None:
    """Before solving, say when ``method``'s poses may not be joint rotations: FABRIK with
    sub-bases that BVH holds rigid left free (``--rigid-sub-bases none`` or ``limbs``) may move a
    pelvis's or chest's children apart, which one BVH rotation per joint cannot hold."""
    from fabrik.solvers import registry

    if rigid_sub_bases in ("none", "limbs") and registry.takes_option(method, "skeleton", "rigid_sub_bases"):
        print(f"fabrik reconstruct: note: with --rigid-sub-bases {rigid_sub_bases}, {method} may move the children of "
              "a joint apart (a pelvis carrying thighs and spine), which BVH rotations cannot hold: the written file "
              "can differ from the solved poses there (the report says by how much)", file=sys.stderr)


def _out_paths(files: list[str], out: str | None) -> list[str | None]:
    """With several files, ``--out`` is a folder: take ``a/walk.bvh`` is written to ``OUT/walk.bvh``
    (``a/run.npz`` to ``OUT/run.npz``). Refuses an ``--out`` that names a motion file (``.bvh``,
    ``.npz``), and two takes that would share a name."""
    if out is None:
        return [None] * len(files)
    if Path(out).suffix.lower() in (*SUFFIXES, ".npy"):
        raise ValueError(f"--out {out!r} names a file, but {len(files)} files are reconstructed: give a folder, "
                         "which gets one file per take, named as its input")
    names: dict[str, str] = {}
    for f in files:
        name = Path(f).name
        if name in names:
            raise ValueError(f"--out: {names[name]!r} and {f!r} would both be written to {name!r} in {out!r}")
        names[name] = f
    return [str(Path(out) / Path(f).name) for f in files]


def _refuse_overwriting_inputs(files: list[str], outs: list[str | None]) -> None:
    """A reconstruction written over a recording would destroy the ground truth: refuse it."""
    inputs = {Path(f).resolve(): f for f in files}
    for out in outs:
        if out is not None and Path(out).resolve() in inputs:
            raise ValueError(f"--out {out!r} is the input {inputs[Path(out).resolve()]!r}; writing the reconstruction "
                             "there would overwrite the recording: choose another path")
