"""The URDF fuzzing run of issue 40.8: real robot files (and the prismatic robots of
``fabrik_experiments.prismatic_robots``) mutated one to three times, read by ``fabrik.load_urdf``;
an arm that loads is put through ``fabrik.forward`` and solved (``fabrik_experiments.fuzz_arms``
draws the mutations and names the defects).

    PYTHONPATH=src python benchmarks/fuzz_urdf.py [--cases 10000] [--seed 40] [--urdf-dir ../shared/data/urdf]
                                                  [--json out.json]

Prints the counts (loaded, refused with URDFError, defects by kind) and the first defects; exit
code 1 when there is any.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from fabrik._progress import progress_bar
from fabrik_experiments.fuzz_arms import run_urdf_case, urdf_case, urdf_sources


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=40)
    p.add_argument("--urdf-dir", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data" / "urdf"))
    p.add_argument("--json", help="write the counts as JSON here")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    import fabrik
    from fabrik.io.urdf import URDFError

    sources = urdf_sources(args.urdf_dir)
    rng = np.random.default_rng(args.seed)
    arm = fabrik.load_urdf(sources[0][1])
    fabrik.solve(arm, fabrik.forward(arm, np.zeros(arm.n_joints)).positions[-1])  # compile outside the timed cases
    counts, shown = Counter(), []
    start = time.perf_counter()
    with progress_bar(not args.no_progress, args.cases, "fuzz urdf", "case") as bar:
        for k in range(args.cases):
            case = urdf_case(sources, rng)
            try:
                fabrik.load_urdf(case["text"], tip=case["tip"])
                counts["loaded"] += 1
            except URDFError:
                counts["refused (URDFError)"] += 1
            except Exception:  # noqa: BLE001 - counted as a defect below
                pass
            found = run_urdf_case(case, rng)
            if found:
                counts["defects"] += 1
                for f in found:
                    counts["defect: " + f.split(":")[0][:60]] += 1
                if len(shown) < 10:
                    shown.append(f"case {k} ({case['source']}, {case['mutations']}, tip {case['tip']}): {found}")
            if bar is not None:
                bar.update(1)
    elapsed = time.perf_counter() - start
    print(f"{args.cases} mutated URDF cases (seed {args.seed}; sources: {', '.join(s[0] for s in sources)}) in "
          f"{elapsed:.0f} s")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    print(f"  defects: {counts['defects']}")
    for line in shown:
        print("   ", line)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cases": args.cases, "seed": args.seed, "seconds": round(elapsed, 1), "counts": dict(counts),
                       "sources": [s[0] for s in sources]}, fh, indent=1)
    return 1 if counts["defects"] else 0


if __name__ == "__main__":
    sys.exit(main())
