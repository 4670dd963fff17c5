"""The batch fuzzing run of issue 40: random ``fabrik.solve_batch`` calls, well formed and
malformed, counting outcomes that are neither a correct answer nor a ``ValueError``
(``fabrik_experiments.fuzz_batch`` draws the cases and says what a correct answer is).

    PYTHONPATH=src python benchmarks/fuzz_batch.py [--cases 10000] [--seed 40] [--json out.json]

Prints the counts (answered, refused, defects by kind) and the first defects; exit code 1 when
there is any.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import numpy as np

from fabrik._progress import progress_bar
from fabrik_experiments.fuzz_batch import describe, random_case, run_case, within_limits_envelope


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=40)
    p.add_argument("--json", help="write the counts as JSON here")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    counts = Counter()
    shown = []
    start = time.perf_counter()
    with progress_bar(not args.no_progress, args.cases, "fuzz batch", "case") as bar:
        for k in range(args.cases):
            case = random_case(rng)
            found, answered, out = run_case(case)
            counts["answered" if answered else "refused (ValueError)"] += 1
            if out is not None and out.frames is not None and not within_limits_envelope(case["chain"], out.positions):
                counts["limits not checked (answer beyond ENVELOPE x the shortest bone)"] += 1
            counts["limited chains"] += int(bool(case["chain"].constraints))
            counts["2D chains"] += int(case["chain"].dim == 2)
            if found:
                counts["defects"] += 1
                for f in found:
                    counts[f"defect: {f.split(':')[0].split(' (')[0]}"] += 1
                if len(shown) < 10:
                    shown.append(f"case {k}: {'; '.join(found)}; {describe(case)}")
            if bar is not None:
                bar.update(1)
    elapsed = time.perf_counter() - start
    print(f"{args.cases} solve_batch calls (seed {args.seed}) in {elapsed:.0f} s")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    print(f"  defects: {counts['defects']}")
    for line in shown:
        print("   ", line)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cases": args.cases, "seed": args.seed, "seconds": round(elapsed, 1), "counts": dict(counts)},
                      fh, indent=1)
    return 1 if counts["defects"] else 0


if __name__ == "__main__":
    sys.exit(main())
