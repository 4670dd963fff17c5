"""The arm fuzzing run of issue 40.8: random arms (revolute and prismatic joints, limits of every
shape), targets and options, good and bad, through ``fabrik.solve`` with every arm method
(``fabrik_experiments.fuzz_arms`` draws the cases and names the defects).

    PYTHONPATH=src python benchmarks/fuzz_arms.py [--cases 10000] [--seed 40] [--json out.json]

Prints the counts (solved by status, bad input refused, defects by kind) and the first defects;
exit code 1 when there is any.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import numpy as np

from fabrik._progress import progress_bar
from fabrik_experiments.fuzz_arms import arm_case, describe_arm_case, run_arm_case


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=40)
    p.add_argument("--json", help="write the counts as JSON here")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    import fabrik

    rng = np.random.default_rng(args.seed)
    arm = fabrik.models.dhm_arm()
    for method in fabrik.methods("arm"):  # compile outside the timed cases
        fabrik.solve(arm, arm.rest_positions[-1], method=method)
    counts, shown, slowest = Counter(), [], 0.0
    start = time.perf_counter()
    with progress_bar(not args.no_progress, args.cases, "fuzz arms", "case") as bar:
        for k in range(args.cases):
            case = arm_case(rng)
            counts[f"method {case['method']}"] += 1
            counts["bad input" if case["bad"] else "good input"] += 1
            began = time.perf_counter()
            found = run_arm_case(case)
            slowest = max(slowest, time.perf_counter() - began)
            if found:
                counts["defects"] += 1
                for f in found:
                    counts["defect: " + f.split(":")[0][:60]] += 1
                if len(shown) < 10:
                    shown.append(f"case {k}: {found}; {describe_arm_case(case)}")
            if bar is not None:
                bar.update(1)
    elapsed = time.perf_counter() - start
    print(f"{args.cases} random arm cases (seed {args.seed}) in {elapsed:.0f} s; slowest {slowest:.2f} s")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    print(f"  defects: {counts['defects']}")
    for line in shown:
        print("   ", line)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cases": args.cases, "seed": args.seed, "seconds": round(elapsed, 1), "counts": dict(counts),
                       "slowest_seconds": round(slowest, 3)}, fh, indent=1)
    return 1 if counts["defects"] else 0


if __name__ == "__main__":
    sys.exit(main())
