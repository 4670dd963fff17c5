"""The limit fuzzing run of issue 31: random limited chains and trees solved by every constrained
method, counting limits exceeded by more than 1e-6 rad, bone lengths off by more than 1e-9 of the
reach, NaN and solves over 2 s (``fabrik_experiments.fuzz_limits`` draws and measures the cases).

    PYTHONPATH=src python benchmarks/fuzz_limits.py [--cases 10000] [--seed 31] [--json out.json]
    PYTHONPATH=src python benchmarks/fuzz_limits.py --surface inputs [--cases 10000] [--seed 40]

Each case is solved by one constrained method, taken in turn (chains: every chain method with
limits; trees: every skeleton method with limits). Prints the counts and the first failures;
exit code 1 when any case fails.

``--surface inputs`` fuzzes the limits' own API instead (issue 40): limit files written and read
back, whole or spoiled; ``Cone``, ``Hinge``, ``Twist`` and ``Polygon`` built from random and junk
arguments; ``limit_violations`` on random and spoiled poses
(``fabrik_experiments.fuzz_limit_inputs``). A
failure there is an exception other than a ``ValueError`` (a ``LimitsFileError`` for files), a
file that does not load back as saved, a limit outside its ranges, or violations that are not
finite, >= 0 and of the right shape.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import numpy as np

from fabrik._progress import progress_bar
from fabrik_experiments.fuzz_limit_inputs import describe_input, random_input_case, run_input_case
from fabrik_experiments.fuzz_limits import (chain_methods, describe, failures, random_case, run_case,
                                            skeleton_methods, warm_up)


#: the first word of a ``failures`` entry -> the count it goes to
_KINDS = {"NaN": "NaN", "limit": "limit exceeded", "bone": "bone length off", "took": "over 2 s"}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--json", help="write the counts as JSON here")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--surface", choices=("solve", "inputs"), default="solve",
                   help="solve: limited models solved (default); inputs: limit files, limit types, limit_violations")
    args = p.parse_args(argv)
    from fabrik.cli._common import prepare_output

    try:  # the commands' rule: refused now, not after the run; a missing last folder is made
        prepare_output(args.json, "--json")
    except ValueError as exc:
        p.error(str(exc))
    if args.surface == "inputs":
        return _inputs(args)
    rng = np.random.default_rng(args.seed)
    methods = {"chain": chain_methods(), "tree": skeleton_methods()}
    warm_up(methods["chain"], methods["tree"])  # compile outside the timed solves
    turn = Counter()
    counts = Counter()
    per_method = Counter()
    worst = {"violation": 0.0, "length_drift": 0.0, "seconds": 0.0}
    shown = []
    start = time.perf_counter()
    with progress_bar(not args.no_progress, args.cases, "fuzz limits", "case") as bar:
        for k in range(args.cases):
            case = random_case(rng)
            kind = case["kind"]
            method = methods[kind][turn[kind] % len(methods[kind])]
            turn[kind] += 1
            counts[kind] += 1
            counts[f"zero-length bones ({kind})"] += int(
                (case["model"].bone_lengths[(0 if kind == "chain" else 1):] == 0).any())
            try:
                result = run_case(case, method)
            except Exception as exc:  # noqa: BLE001 - a crash is a finding, counted and shown
                counts["crashed"] += 1
                per_method[method] += 1
                if len(shown) < 10:
                    shown.append(f"case {k} ({method}): {type(exc).__name__}: {exc}; {describe(case)}")
                continue
            for key in worst:
                worst[key] = max(worst[key], result[key])
            found = failures(result)
            counts[f"status {result['status']}"] += 1
            if found:
                counts["failed"] += 1
                per_method[method] += 1
                for f in found:
                    counts[_KINDS[f.split(" ")[0]]] += 1
                if len(shown) < 10:
                    shown.append(f"case {k} ({method}): {'; '.join(found)}; {describe(case)}")
            if bar is not None:
                bar.update(1)
    elapsed = time.perf_counter() - start
    report = {"cases": args.cases, "seed": args.seed, "seconds": round(elapsed, 1), "counts": dict(counts),
              "failures_per_method": dict(per_method), "worst": worst}
    print(f"{args.cases} cases (seed {args.seed}) in {elapsed:.0f} s: {counts['chain']} chains, {counts['tree']} trees")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    print(f"  largest limit violation {worst['violation']:.3g} rad, largest bone-length change "
          f"{worst['length_drift']:.3g} of the reach, slowest solve {worst['seconds']:.3f} s")
    print(f"  failed: {counts['failed'] + counts['crashed']} ({dict(per_method)})")
    for line in shown:
        print("   ", line)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
    return 1 if counts["failed"] or counts["crashed"] else 0


def _inputs(args) -> int:
    """The ``--surface inputs`` run."""
    rng = np.random.default_rng(args.seed)
    counts = Counter()
    shown = []
    start = time.perf_counter()
    with progress_bar(not args.no_progress, args.cases, "fuzz limit inputs", "case") as bar:
        for k in range(args.cases):
            case = random_input_case(rng)
            found, refused = run_input_case(case)
            counts[f"{case['kind']} cases"] += 1
            counts[f"{case['kind']} cases refused with a ValueError"] += int(refused)
            if found:
                counts["failed"] += 1
                if len(shown) < 10:
                    shown.append(f"case {k}: {'; '.join(found)}; {describe_input(case)}")
            if bar is not None:
                bar.update(1)
    elapsed = time.perf_counter() - start
    print(f"{args.cases} limit-input cases (seed {args.seed}) in {elapsed:.0f} s")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    print(f"  failed: {counts['failed']}")
    for line in shown:
        print("   ", line)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cases": args.cases, "seed": args.seed, "surface": "inputs", "seconds": round(elapsed, 1),
                       "counts": dict(counts)}, fh, indent=1)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
