"""``fabrik reconstruct FILE.bvh``: the paper's Table 2 experiment on a motion-capture file.

Every frame is solved from the recorded positions of the end effectors and the root; the table
reports how far each method's inner joints land from the recorded ones (see
``fabrik.experiments.reconstruct`` for the exact definitions). ``--constraints humanoid`` (or a
constraints JSON file) adds, after each requested method that has one, its variant with joint
limits (``fabrik-constrained``, ``ccd-constrained``, ``jacobian-dls-constrained``, ...), each with
the largest limit violation it shows in any frame (radians).
"""

from __future__ import annotations

import argparse

from fabrik.cli._common import parse_method_options, parse_methods, prepare_output, show_progress, write_json


def add_parser(sub) -> None:
    p = sub.add_parser("reconstruct", help="Table 2: reconstruct a BVH motion from its end effectors",
                       description="Reconstruct every frame of a BVH file from the recorded positions of its "
                                   "end effectors and root, with each IK method, and report the inner-joint "
                                   "errors (Table 2 of the paper).")
    p.add_argument("file", metavar="FILE.bvh", help="motion capture file")
    p.add_argument("--effectors", metavar="NAMES",
                   help="comma-separated joint names used as targets (default: every leaf; zero-length End "
                        "Sites stand for their parent)")
    p.add_argument("--methods", metavar="NAMES",
                   help="comma-separated skeleton methods, or 'all' (default: fabrik,ccd,jacobian-transpose,"
                        "jacobian-dls,jacobian-svd-dls where available)")
    p.add_argument("--frames", metavar="START:STOP[:STEP]",
                   help="frame range, Python slice style (e.g. 0:500, or ::40 for 3 Hz from 120 Hz; a range that "
                        "starts with '-' needs '=', as in --frames=-100:)")
    p.add_argument("--out", metavar="OUT.bvh", help="write a reconstruction as BVH with the input's hierarchy "
                                                    "(FABRIK's, or fabrik-constrained's with --constraints; see "
                                                    "--out-method)")
    p.add_argument("--out-method", metavar="NAME",
                   help="the method whose reconstruction --out writes (default fabrik, or fabrik-constrained with "
                        "--constraints); run even when --methods leaves it out")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--tol", type=float, default=None,
                   help="solver tolerance in file units (default: 1e-3 x skeleton height)")
    p.add_argument("--max-iter", type=int, default=None, help="iteration cap per frame (default: each method's)")
    p.add_argument("--constraints", metavar="humanoid|FILE.json",
                   help="joint limits: 'humanoid' (a default human set placed by joint names) or a constraints "
                        "JSON file; adds the constrained variant of every requested method that has one "
                        "(fabrik-constrained, ccd-constrained, jacobian-dls-constrained, ...) and reports each "
                        "one's largest limit violation (radians)")
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
                        "in file units, default 1.1 as in the paper; see each method's docstring for its options)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from fabrik.experiments.reconstruct import DEFAULT_METHODS, SUFFIX, reconstruct_file
    from fabrik.solvers import methods

    available = methods("skeleton")
    if args.methods is not None:
        chosen = parse_methods(args.methods, available)
        if args.methods == "all":
            # constrained variants are added by --constraints, next to their methods
            chosen = [m for m in chosen if not m.endswith(SUFFIX)]
    else:
        chosen = [m for m in DEFAULT_METHODS if m in available]
    if not chosen:
        raise ValueError(f"--methods names no method; methods are: {', '.join(available)}, or all")
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
    if args.max_iter is not None and args.max_iter < 0:
        raise ValueError(f"--max-iter must be >= 0, got {args.max_iter}")
    prepare_output(args.json, "--json")
    prepare_output(args.out, "--out")
    needy = [m for m in chosen if m.endswith(SUFFIX)]
    if args.constraints is None and needy:
        raise ValueError(f"method(s) {', '.join(needy)} need --constraints humanoid or --constraints FILE.json")
    report, _, _ = reconstruct_file(args.file, effectors=effectors, methods=chosen, frames=args.frames, tol=args.tol,
                                    max_iter=args.max_iter, out=args.out, progress=show_progress(),
                                    constraints=args.constraints, rigid_sub_bases=args.rigid_sub_bases,
                                    swing_limbs=not args.no_limb_swing,
                                    method_options=parse_method_options(args.option), out_method=args.out_method)
    print(report.table())
    if args.out:
        print(f"wrote {args.out} ({report.out_method} reconstruction)")
    if args.json:
        print(f"wrote {write_json(args.json, report.to_json())}")
    return 0
