"""The paper's Fig. 18: FABRIK and CCD with and without joint limits, side by side.

A planar 10-joint chain (9 unit bones, straight up +Y from the origin) reaches a target low on
its left. Constrained version: every joint a Cone.circular(35 degrees) (for a 2D chain: at most 35
degrees of bend either way, joint 0 measured from +Y). Run from the repository root:

    .venv/bin/python examples/fig18_constraints.py [output.png] [--docs]

Writes fabrik-out/constrained_vs_unconstrained.png (under the current folder; ignored by git) by
default, or the file given; ``--docs`` writes the documentation's figure,
docs/img/constrained_vs_unconstrained.png. Prints each solve.
"""

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import fabrik  # noqa: E402
from fabrik.constraints import Cone  # noqa: E402

LIMIT_DEG = 35.0
TARGET = np.array([-4.0, 2.5])


def main(out: Path) -> None:
    free = fabrik.Chain.straight(10, 1.0, dim=2)
    limited = free.with_constraints({i: Cone.circular(math.radians(LIMIT_DEG)) for i in range(9)})
    panels = [("(a) FABRIK, unconstrained", free, "fabrik"), ("(b) FABRIK, constrained", limited, "fabrik"),
              ("(c) CCD, unconstrained", free, "ccd"), ("(d) CCD, constrained", limited, "ccd")]
    fig, axes = plt.subplots(1, 4, figsize=(16, 4.6), sharex=True, sharey=True)
    for ax, (title, chain, method) in zip(axes, panels):
        sol = fabrik.solve(chain, TARGET, method=method, max_iter=1000)
        p = sol.positions
        bends = np.degrees(np.abs(np.diff(np.unwrap(np.arctan2(np.diff(p[:, 0]), np.diff(p[:, 1]))))))
        print(f"{title}: {sol.method}, {sol.status}, {sol.iterations} iterations, error {sol.error:.2g}, "
              f"largest bend {bends.max():.1f} deg")
        ax.plot(free.rest_positions[:, 0], free.rest_positions[:, 1], color="0.8", lw=1, ls="--", label="start")
        ax.plot(p[:, 0], p[:, 1], "-", color="tab:blue", lw=2)
        ax.plot(p[:, 0], p[:, 1], "o", color="tab:green", ms=5, label="joints")
        ax.plot(*p[0], "ks", ms=7, label="root")
        ax.plot(*TARGET, "o", color="tab:red", ms=9, mfc="none", mew=2, label="target")
        ax.set_title(f"{title}\n{sol.iterations} iterations, largest bend {bends.max():.0f} deg", fontsize=10)
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="upper right", fontsize=8)
    fig.suptitle(f"Fig. 18: joint limits (every joint bends at most {LIMIT_DEG:.0f} degrees) keep the pose natural")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


DEFAULT_OUT = Path("fabrik-out") / "constrained_vs_unconstrained.png"
DOCS_OUT = Path(__file__).resolve().parents[1] / "docs" / "img" / "constrained_vs_unconstrained.png"


def output_path(argv=None) -> Path:
    """The PNG to write: the path given, the docs figure with ``--docs``, else ``DEFAULT_OUT``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, help=f"PNG to write (default {DEFAULT_OUT})")
    parser.add_argument("--docs", action="store_true", help=f"write the documentation's figure, {DOCS_OUT}")
    args = parser.parse_args(argv)
    if args.docs and args.out is not None:
        parser.error("give an output file or --docs, not both")
    return DOCS_OUT if args.docs else (args.out or DEFAULT_OUT)


if __name__ == "__main__":
    main(output_path())
