"""The Franka Panda from URDF reaching four pose targets with ``fabrik.solve``.

Each panel draws the target frame (a triad: x red, y green, z blue, thin), the rest pose the
solve starts from (grey), and the answer: the rows of ``fabrik.forward(panda, sol.joint_angles)``
joined by bones, each joint's axis as a short arrow, and the tip frame (``panda_hand``) as a
thick triad on the target's. The targets are the tip poses of random joint values within the
limits (seed 7), as in ``fabrik bench robot``. Run from the repository root:

    .venv/bin/python examples/fig_robot_panda.py [panda.urdf] [output.png]

Defaults: ../shared/data/urdf/panda.urdf, writing fabrik-out/robot_panda.png (under the current
folder; ignored by git; ``make figures`` writes the documentation's, docs/img/robot_panda.png);
prints each solve.
"""

import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import fabrik  # noqa: E402

AXIS = 0.08  # m, drawn length of a joint axis
TRIAD = 0.12  # m, the target's and the tip's frames
COLOURS = ("red", "green", "blue")


def draw_pose(ax, panda, q, colour, width, axes_too):
    positions, frames = fabrik.forward(panda, q)
    ax.plot(*positions.T, "-", color=colour, lw=width, alpha=0.85, solid_capstyle="round")
    ax.plot(positions[:, 0], positions[:, 1], np.zeros(len(positions)), color=colour, lw=width / 2, alpha=0.3)
    ax.scatter(*positions[:-1].T, color=colour, s=12, depthshade=False)
    if axes_too:
        for k in range(panda.n_joints):
            axis = frames[k] @ panda.axes[k]
            ax.quiver(*positions[k], *(AXIS * axis), color="tab:purple", lw=1.2, arrow_length_ratio=0.25)
    return positions, frames


def main(urdf: Path, out: Path) -> None:
    panda = fabrik.load_urdf(urdf, tip="panda_hand")
    rest = np.clip(np.zeros(panda.n_joints), panda.lower, panda.upper)
    goals = panda.random_angles(np.random.default_rng(7), 4)
    targets, target_frames = fabrik.forward(panda, goals)
    fig = plt.figure(figsize=(11, 11))
    for i in range(4):
        p, r = targets[i, -1], target_frames[i, -1]
        sol = fabrik.solve(panda, (p, r), tol=1e-3, orientation_tol=math.radians(0.5))
        angle = math.degrees(sol.extras["orientation_error"])
        line = (f"target {i + 1}: {sol.status} in {sol.extras['attempts']} attempt(s), {sol.iterations} iterations, "
                f"{1e3 * sol.error:.3f} mm, {angle:.3f} deg; within limits: {panda.within_limits(sol.joint_angles)}")
        print(line)
        ax = fig.add_subplot(2, 2, i + 1, projection="3d")
        draw_pose(ax, panda, rest, "0.75", 2.0, False)
        positions, frames = draw_pose(ax, panda, sol.joint_angles, "0.2", 3.5, True)
        for e in range(3):
            ax.quiver(*p, *(TRIAD * r[:, e]), color=COLOURS[e], lw=0.8, alpha=0.6, arrow_length_ratio=0.15)
            ax.quiver(*positions[-1], *(0.6 * TRIAD * frames[-1][:, e]), color=COLOURS[e], lw=2.5,
                      arrow_length_ratio=0.2)
        ax.plot([-0.6, 0.6], [0, 0], [0, 0], color="0.85", lw=0.8)
        ax.plot([0, 0], [-0.6, 0.6], [0, 0], color="0.85", lw=0.8)
        ax.set_xlim(-0.6, 0.6)
        ax.set_ylim(-0.6, 0.6)
        ax.set_zlim(0.0, 1.2)
        ax.set_box_aspect((1, 1, 1), zoom=0.95)
        ax.set_proj_type("ortho")
        ax.view_init(elev=20, azim=-55)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.set_zlabel("z (m)")
        ax.set_title(f"target {i + 1}: {sol.status}, {sol.extras['attempts']} attempt(s), {sol.iterations} iterations\n"
                     f"{1e3 * sol.error:.2f} mm, {angle:.2f} deg", fontsize=9)
    fig.suptitle("fabrik.solve(panda, (xyz, rotation)) from the rest pose (grey): the answer (dark; shadows on the "
                 "floor), its joint axes (purple),\nthe target frame (thin triad) and the panda_hand frame on it "
                 "(thick triad)", fontsize=10)
    fig.subplots_adjust(left=0.0, right=0.97, bottom=0.02, top=0.91, wspace=0.02, hspace=0.12)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "data" / "urdf" / "panda.urdf",
         Path(sys.argv[2]) if len(sys.argv) > 2 else Path("fabrik-out") / "robot_panda.png")
