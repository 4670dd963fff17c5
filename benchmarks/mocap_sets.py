"""Issue 38's summary over every shared motion-capture set: plain FABRIK, FABRIK with the humanoid
limits and DLS, per set and per take.

    .venv/bin/python benchmarks/mocap_sets.py [--json PATH] [--methods fabrik,fabrik-constrained,...]

Runs ``fabrik reconstruct``'s experiment (``fabrik_experiments.reconstruction.reconstruct_file``)
with ``--constraints humanoid`` on ``../shared/data/mocap``'s sets (cmu_131_0*, bandai2/,
deepmimic/, climb/climb_0.bvh) and prints, per set: each method's pooled median inner-joint error
(fraction of the height), frames reached, frames per second (solving time) and, for rows
without limits, the frames whose bones break a limit; then the limited/plain ratio of the pooled
medians and its largest value over the set's takes, and each FABRIK row's ratio to DLS; last,
each row's median pooled over every take of every set.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fabrik_experiments.reconstruction import reconstruct_file
from fabrik_experiments.reconstruction_report import pool_reports

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "mocap"
SETS = {"cmu": "cmu_131_0*.bvh", "bandai2": "bandai2/*.bvh", "deepmimic": "deepmimic/*.bvh",
        "climb": "climb/climb_0.bvh"}
#: The rows by default: FABRIK and FABRIK started by a DLS step, each without and with the limits, and DLS.
METHODS = ("fabrik", "fabrik-constrained", "fabrik-dls-start", "fabrik-dls-start-constrained", "jacobian-dls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    methods = args.methods.split(",")
    out = {}
    everything = []
    for name, pattern in SETS.items():
        files = sorted(DATA.glob(pattern))
        if not files:
            print(f"{name}: no files under {DATA}")
            continue
        reports = [reconstruct_file(f, methods=methods, constraints="humanoid")[0] for f in files]
        everything += reports
        pooled = {r.method: r for r in pool_reports(reports).results}
        rows = {}
        print(f"\n== {name}: {len(files)} takes, {sum(r.frames for r in reports)} frames")
        print(f"{'method':<30}{'median/h':>10}{'reached':>9}{'frames/s':>10}{'breaks':>8}")
        for m in methods:
            p = pooled[m]
            breaks = "-" if p.limit_break_fraction is None else f"{p.limit_break_fraction:.1%}"
            print(f"{m:<30}{p.median_error_rel:>10.5f}{p.reached_fraction:>9.1%}{p.frames_per_second:>10.0f}{breaks:>8}")
            rows[m] = p.to_dict()
        summary = {}
        for plain in ("fabrik", "fabrik-dls-start"):
            limited = plain + "-constrained"
            if plain in pooled and limited in pooled:
                key = "limited_over_plain" if plain == "fabrik" else f"{limited}_over_{plain}"
                per_take = [r.result(limited).median_error / r.result(plain).median_error for r in reports]
                summary[key] = pooled[limited].median_error_rel / pooled[plain].median_error_rel
                summary[f"{key}_worst_take"] = max(per_take)
                print(f"{limited} / {plain}: pooled {summary[key]:.3f}, worst take {summary[f'{key}_worst_take']:.3f}")
        if "jacobian-dls" in pooled:
            for m in methods:
                if m.startswith("fabrik"):
                    ratio = pooled[m].median_error_rel / pooled["jacobian-dls"].median_error_rel
                    speed = pooled[m].frames_per_second / pooled["jacobian-dls"].frames_per_second
                    summary[f"{m}_over_dls"] = ratio
                    summary[f"{m}_speed_over_dls"] = speed
                    print(f"{m} / jacobian-dls: median {ratio:.3f}, frames/s {speed:.2f}x")
        out[name] = {"takes": [str(f.name) for f in files], "pooled": rows, "summary": summary}
    if everything:
        pooled = pool_reports(everything).results
        print(f"\n== every set: {len(everything)} takes, {sum(r.frames for r in everything)} frames")
        print(f"{'method':<30}{'median/h':>10}")
        for p in pooled:
            print(f"{p.method:<30}{p.median_error_rel:>10.5f}")
        out["all"] = {"pooled_median_error_rel": {p.method: p.median_error_rel for p in pooled}}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
