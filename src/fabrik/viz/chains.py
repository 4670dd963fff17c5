"""Pictures of solved chains with their targets."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from fabrik.viz._figures import pyplot, save


def cube_limits(points: np.ndarray, margin: float = 0.05) -> list[tuple[float, float]]:
    """(low, high) per column of ``points`` (m, k): one common span for every axis, the largest
    extent plus ``margin`` of it each side, centred on each axis's midpoint (equal scales)."""
    lo = points.min(axis=0)
    hi = points.max(axis=0)
    half = 0.5 * float((hi - lo).max()) * (1.0 + 2.0 * margin)
    if half <= 0.0:
        half = 1.0
    mid = 0.5 * (lo + hi)
    return [(float(m - half), float(m + half)) for m in mid]


def plot_chain_solutions(rest: np.ndarray, solutions: Sequence, targets: Sequence[np.ndarray], path: str | Path,
                         *, title: str = "FABRIK solves") -> Path:
    """Draw a chain's rest pose and several solved poses with their targets; write a PNG.

    Args:
        rest: (n, 3) rest pose of the chain.
        solutions: ``Solution`` records (positions (n, 3)).
        targets: the (3,) target of each solution.
        path: where to write the PNG (folders are created).
    Returns the path written. The 3D panel has equal scales on its three axes.
    """
    plt = pyplot()
    fig = plt.figure(figsize=(11, 5.5))
    colours = plt.get_cmap("tab10")
    ax3 = fig.add_subplot(1, 2, 1, projection="3d")
    ax2 = fig.add_subplot(1, 2, 2)
    for ax, cols in ((ax3, (0, 2, 1)), (ax2, (0, 1))):
        draw = (lambda p, **kw: ax.plot(*(p[:, c] for c in cols), **kw))
        draw(rest, color="0.6", ls="--", marker="o", ms=3, label="rest pose")
        for k, (sol, target) in enumerate(zip(solutions, targets)):
            c = colours(k % 10)
            draw(sol.positions, color=c, marker="o", ms=3, lw=2,
                 label=f"{sol.status}, {sol.iterations} it, err {sol.error:.1e}")
            t = np.asarray(target)[list(cols)]
            ax.scatter(*t, color=c, marker="*", s=140, edgecolor="k", zorder=5)
        ax.scatter(*(rest[0, list(cols)]), color="k", s=50, zorder=6)
    # equal scales on the three axes, so that equal bones look equal
    points = np.vstack([rest] + [np.asarray(s.positions) for s in solutions]
                       + [np.asarray(t, dtype=float).reshape(1, -1) for t in targets])[:, [0, 2, 1]]
    for setter, (lo, hi) in zip((ax3.set_xlim, ax3.set_ylim, ax3.set_zlim), cube_limits(points)):
        setter(lo, hi)
    ax3.set_box_aspect((1.0, 1.0, 1.0))
    ax3.set_xlabel("x")
    ax3.set_ylabel("z")
    ax3.set_zlabel("y (up)")
    ax3.set_title("3D view")
    ax2.set_xlabel("x")
    ax2.set_ylabel("y")
    ax2.set_aspect("equal")
    ax2.set_title("front view (x, y); stars are targets")
    ax2.legend(fontsize=7, loc="lower left")
    fig.suptitle(title)
    return save(fig, path)
