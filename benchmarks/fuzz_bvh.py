"""The BVH fuzzing run: real takes mutated (truncations, channel counts, non-numbers, NaN, inf and
huge numbers, braces, duplicate names, keywords, frame counts and times, line endings, stray
bytes, deep nesting), each read by ``fabrik.load_bvh`` and prepared by ``prepare_take``
(``fabrik_experiments.fuzz_bvh`` draws, runs and classifies the cases).

    .venv/bin/python benchmarks/fuzz_bvh.py [--cases 10000] [--seed 45] [--keep DIR] [--json PATH]

A defect is an exception other than a ``BVHError`` or ``ValueError`` with a message, a NaN or
inf in what was read or computed from it, a case over 20 s, or a file that save_bvh writes and
that reads back elsewhere. Prints the counts per outcome and
per mutation and every defect (``--keep`` writes each defect's file there); exit code 1 when
there is one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from fabrik_experiments.fuzz_bvh import DEFECTS, fuzz


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=45)
    p.add_argument("--keep", type=Path, help="write each defect's file into this folder")
    p.add_argument("--json", type=Path, help="also write the counts and defects as JSON here")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    start = time.perf_counter()
    report = fuzz(args.cases, args.seed, progress=not args.no_progress and sys.stderr.isatty(), keep=args.keep)
    report["seconds"] = time.perf_counter() - start
    counts = report["counts"]
    print(f"{report['cases']} cases from {len(report['seeds'])} seed files (seed {args.seed}), "
          f"{report['seconds']:.0f} s")
    for outcome in ("read", "bvh error", "refused", *DEFECTS):
        print(f"  {outcome:<10} {counts.get(outcome, 0):>7}")
    print(f"{'mutation':<16}" + "".join(f"{o:>11}" for o in ("read", "bvh error", "refused", *DEFECTS)))
    for name, per in report["per_mutation"].items():
        print(f"{name:<16}" + "".join(f"{per.get(o, 0):>11}" for o in ("read", "bvh error", "refused", *DEFECTS)))
    for d in report["defects"]:
        print(f"defect: case {d['case']} ({d['seed file']}; {', '.join(d['mutations'])}): {d['outcome']}: "
              f"{d['detail']}" + (f" -> {d['file']}" if "file" in d else ""))
    print(f"defects: {len(report['defects'])}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 1 if report["defects"] else 0


if __name__ == "__main__":
    sys.exit(main())
