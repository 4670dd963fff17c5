"""``fabrik bench``: the paper's experiments as benchmarks, printed as tables and written as JSON."""

from __future__ import annotations

import argparse

from fabrik.cli._common import parse_methods, show_progress, write_json


def add_parser(sub) -> None:
    bench = sub.add_parser("bench", help="run a benchmark (the paper's experiments)")
    kinds = bench.add_subparsers(dest="bench_kind", metavar="KIND")
    chain = kinds.add_parser("chain", help="Table 1: a 10-joint chain, 1000 reachable and 1000 unreachable targets")
    chain.add_argument("--methods", default="fabrik",
                       help="comma-separated method names, or 'all' (default: fabrik)")
    chain.add_argument("--targets", type=int, default=1000, help="targets per set (default 1000)")
    chain.add_argument("--seed", type=int, default=2011, help="random seed for the targets")
    chain.add_argument("--tol", type=float, default=1e-3, help="tolerance in chain units (default 1e-3)")
    chain.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    chain.set_defaults(func=run_chain)
    bench.set_defaults(func=lambda args: bench.print_help() or 2)


def run_chain(args: argparse.Namespace) -> int:
    from fabrik.experiments.table1 import format_table, run_table1
    from fabrik.solvers import methods

    if args.targets < 1:
        raise ValueError(f"--targets must be >= 1, got {args.targets}")
    chosen = parse_methods(args.methods, methods("chain"))
    rows, _ = run_table1(chosen, n_targets=args.targets, seed=args.seed, tol=args.tol, progress=show_progress())
    print(f"Table 1: 10-joint chain (9 bones x 100 units), {args.targets} targets per set, tol={args.tol:g}")
    print(format_table(rows))
    if args.json:
        print(f"wrote {write_json(args.json, {'experiment': 'table1', 'tol': args.tol, 'targets_per_set': args.targets, 'results': rows})}")
    return 0
