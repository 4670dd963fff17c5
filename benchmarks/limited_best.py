"""How close limited FABRIK ends to the best pose when the limits keep the target out of reach.

500 random small limited chains (2D and 3D, 2-6 joints, cones and hinges; seeds 0..499, the
cases of ``fabrik_experiments.limited_best``), each with a target the limits keep out of reach.
The best pose is the best of a multi-start search (limited CCD and FABRIK alone from the rest pose
and 48 random poses within the limits). Compared with it:

* ``fabrik``: ``fabrik.solve(chain, target)``, what a user gets (FABRIK, then limited CCD sweeps
  from its best pose when it ends short, ``Solution.extras["polish_sweeps"]``);
* ``fabrik alone``: the FABRIK kernel without the polish (``fabrik_constrained_search``);
* ``ccd``: ``fabrik.solve(chain, target, method="ccd")``.

"near" means a final error within 10% of the best, or within 1e-3 of the chain's reach above it.

    PYTHONPATH=src python benchmarks/limited_best.py [--cases 500] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

import fabrik
from fabrik._progress import progress_bar
from fabrik.kernels.fabrik_constrained import fabrik_constrained_search
from fabrik.kernels.records import Stop
from fabrik_experiments.limited_best import is_near, kernel_args, random_case

COLUMNS = ("fabrik", "fabrik alone", "ccd")


def run(cases: int, progress: bool = True) -> list[dict]:
    rows = []
    with progress_bar(progress, cases, "limited chains", "case") as bar:
        for seed in range(cases):
            chain, target, best = random_case(seed)
            reach = float(chain.bone_lengths.sum())
            sol = fabrik.solve(chain, target)
            ccd = fabrik.solve(chain, target, method="ccd")
            alone = float(fabrik_constrained_search(*kernel_args(chain, target),
                                                    Stop(fabrik.DEFAULT_TOL, 1e-3, 1000))[4])
            rows.append({"seed": seed, "dim": chain.dim, "joints": chain.n_joints, "reach": reach,
                         "target": [float(x) for x in target], "best": best,
                         "fabrik": float(sol.error), "fabrik_iterations": sol.iterations,
                         "polish_sweeps": sol.extras["polish_sweeps"], "fabrik alone": alone,
                         "ccd": float(ccd.error)})
            if bar is not None:
                bar.update(1)
    return rows


def summary(rows: list[dict]) -> dict:
    out = {}
    groups = {"all": rows}
    for dim in (2, 3):
        groups[f"{dim}D"] = [r for r in rows if r["dim"] == dim]
    for joints in range(2, 7):
        groups[f"{joints} joints"] = [r for r in rows if r["joints"] == joints]
    for name, group in groups.items():
        if not group:
            continue
        entry = {"cases": len(group)}
        for col in COLUMNS:
            near = [is_near(r[col], r["best"], r["reach"]) for r in group]
            ratio = [r[col] / r["best"] for r in group]
            entry[col] = {"near_rate": float(np.mean(near)), "median_ratio": float(np.median(ratio)),
                          "worst_ratio": float(np.max(ratio))}
        out[name] = entry
    return out


def format_table(summ: dict) -> str:
    head = f"{'cases':<10} {'n':>4}" + "".join(f" {c + ' near':>18} {'median x':>9} {'worst x':>8}" for c in COLUMNS)
    lines = [head, "-" * len(head)]
    for name, e in summ.items():
        line = f"{name:<10} {e['cases']:>4}"
        for c in COLUMNS:
            line += f" {100 * e[c]['near_rate']:>17.1f}% {e[c]['median_ratio']:>9.3f} {e[c]['worst_ratio']:>8.2f}"
        lines.append(line)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--json", metavar="PATH", help="also write the cases and the summary as JSON")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()
    from fabrik.cli._common import prepare_output

    try:  # the commands' rule: refused now, not after the run; a missing last folder is made
        prepare_output(args.json, "--json")
    except ValueError as exc:
        parser.error(str(exc))
    rows = run(args.cases, not args.no_progress)
    summ = summary(rows)
    print(format_table(summ))
    print("near: final error within 10% of the best of the multi-start search, or within 1e-3 of the reach;"
          " x: final error / best")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summ, "cases": rows}, f, indent=1,
                      default=lambda v: None if isinstance(v, float) and math.isnan(v) else v)


if __name__ == "__main__":
    main()
