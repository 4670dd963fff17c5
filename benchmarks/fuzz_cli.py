"""The command-line fuzzing run of issue 40: random ``fabrik`` command lines, well formed and
degenerate, run in this process through ``fabrik.cli.main``; a defect is anything that reaches
the user but a result or a one-line error: a traceback, an exception out of ``main``, an error
message over several lines (``fabrik_experiments.fuzz_cli`` draws the cases and says what counts).

    PYTHONPATH=src MPLBACKEND=Agg python benchmarks/fuzz_cli.py [--cases 10000] [--seed 40] [--json out.json]

Prints the counts (per subcommand, per exit code) and the first defects; exit code 1 when there
is any. Uses ../shared/data/urdf/panda.urdf for ``bench robot`` when it is there.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

from fabrik._progress import progress_bar
from fabrik_experiments.fuzz_cli import Workspace, random_argv, run_argv

URDF_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "urdf"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=40)
    p.add_argument("--json", help="write the counts as JSON here")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--slow", type=float, default=20.0, help="report cases that take longer than this (seconds)")
    args = p.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
    warnings.simplefilter("default")  # a warning reaches the user as it would from the command line
    rng = np.random.default_rng(args.seed)
    ws = Workspace(URDF_DIR if URDF_DIR.is_dir() else None)
    counts = Counter()
    shown, slow = [], []
    start = time.perf_counter()
    try:
        with progress_bar(not args.no_progress, args.cases, "fuzz cli", "case") as bar:
            for k in range(args.cases):
                line = random_argv(rng, ws)
                t0 = time.perf_counter()
                found, code, _ = run_argv(line, ws.root)
                seconds = time.perf_counter() - t0
                command = " ".join(line[:2]) if line[:1] == ["bench"] else (line[0] if line else "(none)")
                counts[f"{command}: exit {code}"] += 1
                if seconds > args.slow and len(slow) < 10:
                    slow.append(f"case {k} took {seconds:.0f} s: {line!r}"[:400])
                if found:
                    counts["defects"] += 1
                    if len(shown) < 15:
                        shown.append(f"case {k}: {'; '.join(found)}; argv {line!r}"[:600])
                if bar is not None:
                    bar.update(1)
    finally:
        ws.close()
    elapsed = time.perf_counter() - start
    print(f"{args.cases} command lines (seed {args.seed}) in {elapsed:.0f} s")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    print(f"  defects: {counts['defects']}")
    for line in shown + slow:
        print("   ", line)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cases": args.cases, "seed": args.seed, "seconds": round(elapsed, 1), "counts": dict(counts)},
                      fh, indent=1)
    return 1 if counts["defects"] else 0


if __name__ == "__main__":
    sys.exit(main())
