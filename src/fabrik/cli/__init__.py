"""The ``fabrik`` command line.

Each subcommand lives in its own module exposing ``add_parser(subparsers)``, which registers the
subcommand and sets ``func`` (called with the parsed arguments, returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

_SUBCOMMAND_MODULES = (
    "fabrik.cli.demo",
    "fabrik.cli.bench",
    "fabrik.cli.reconstruct",
    "fabrik.cli.view",
    "fabrik.cli.render",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fabrik", description="FABRIK inverse kinematics: solvers, benchmarks, motion capture.")
    from fabrik import __version__

    parser.add_argument("--version", action="version", version=f"fabrik {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    if hasattr(sys.stdout, "reconfigure"):  # tables reach a pipe or log as they are printed, between progress lines
        sys.stdout.reconfigure(line_buffering=True)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from threadpoolctl import threadpool_limits

    try:
        # The solvers' matrices are small (a Jacobian of a few hundred columns at most), where a
        # multithreaded BLAS only waits for its threads: with the other core of a 2-core machine
        # busy, DLS on an 81-joint take ran at 1,078 frames/s, 1,718 with one BLAS thread.
        with threadpool_limits(limits=1, user_api="blas"):
            return int(args.func(args) or 0)
    except (ValueError, OSError) as exc:  # OSError: missing file, a directory, no permission
        print(f"fabrik {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
