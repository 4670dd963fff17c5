"""The DHM arm (fabrik.models.dhm_arm, Table 1 of Lamb et al.) and its frames, in two poses.

Each panel draws the rows of ``fabrik.forward``: the shoulder (joints 0-2, one location), the
elbow (3), the wrist (4-6) and the fingertip (the tip, row 7), the bones between them, each
joint's axis (+z of its frame) as an arrow from its location, and the tip frame as a triad
(x red, y green, z blue). Left: the zero pose, a straight arm along +x0. Right: a reaching pose
with the elbow flexed 90 degrees.
Run from the repository root:

    .venv/bin/python examples/fig_dhm_arm.py [output.png]

Writes fabrik-out/dhm_arm.png (under the current folder; ignored by git) by default, or the file
given (``make figures`` writes the documentation's, docs/img/dhm_arm.png), and prints the joint
positions (cm).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import fabrik  # noqa: E402

POSES = {
    "q = 0: the straight arm along +x0": np.zeros(7),
    "q = (-40, 30, -20, 90, 0, 20, 0) degrees: elbow flexed 90": np.radians([-40.0, 30.0, -20.0, 90.0, 0.0, 20.0,
                                                                               0.0]),
}
AXIS = 12.0  # cm, drawn length of a joint axis
TRIAD = 8.0  # cm, the tip frame's axes
JOINT_COLOURS = ("tab:red", "tab:orange", "tab:olive", "tab:purple", "tab:blue", "tab:cyan", "tab:green")


def draw(ax, arm, q, title):
    """The bones between the rows of forward(arm, q), each joint's axis (+z of its frame) as an
    arrow from its location, and the tip frame as a triad (x red, y green, z blue)."""
    positions, frames = fabrik.forward(arm, q)
    ax.plot(*positions.T, "-", color="0.25", lw=4, alpha=0.6, zorder=1)
    ax.scatter(*positions.T, color="black", s=30, depthshade=False)
    for k in range(arm.n_joints):
        axis = frames[k][:, 2]
        ax.quiver(*positions[k], *(AXIS * axis), color=JOINT_COLOURS[k], lw=2.2, arrow_length_ratio=0.18)
        ax.text(*(positions[k] + 1.08 * AXIS * axis), f"{k} {arm.joint_names[k]}", color=JOINT_COLOURS[k],
                fontsize=8)
    for axis, colour in enumerate(("red", "green", "blue")):
        ax.quiver(*positions[-1], *(TRIAD * frames[-1][:, axis]), color=colour, lw=1.2, arrow_length_ratio=0.2)
    ax.text(*(positions[-1] + [2.0, 2.0, -5.0]), f"{arm.n_joints} tip ({arm.tip_name})", fontsize=8)
    low = np.minimum(positions.min(axis=0), -AXIS) - 4.0
    high = np.maximum(positions.max(axis=0), AXIS) + 4.0
    centre, half = (low + high) / 2, (high - low).max() / 2
    floor = centre[2] - half  # the arm's shadow and drop lines, for depth
    ax.plot(positions[:, 0], positions[:, 1], np.full(len(positions), floor), color="0.7", lw=3)
    for p in positions[[0, 3, 4, -1]]:
        ax.plot([p[0], p[0]], [p[1], p[1]], [floor, p[2]], ":", color="0.6", lw=1)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x0 (cm)")
    ax.set_ylabel("y0 (cm)")
    ax.set_zlabel("z0 (cm)")
    ax.set_proj_type("ortho")
    ax.view_init(elev=24, azim=-62)
    ax.set_title(title, fontsize=10)
    return positions


def main(out: Path) -> None:
    arm = fabrik.models.dhm_arm()
    print(arm)
    print("bone lengths (cm):", arm.bone_lengths, " spherical groups:", arm.spherical_groups())
    fig = plt.figure(figsize=(13, 6))
    for i, (title, q) in enumerate(POSES.items()):
        ax = fig.add_subplot(1, 2, i + 1, projection="3d")
        positions = draw(ax, arm, q, title)
        print(title)
        for name, p in zip(list(arm.joint_names) + [arm.tip_name], positions):
            print(f"  {name:<16} {p[0]:8.2f} {p[1]:8.2f} {p[2]:8.2f}")
    fig.suptitle("fabrik.models.dhm_arm(): Table 1 of Lamb et al., stature 175 cm (Winter's segment lengths); "
                 "arrows: joint axes; triad: tip frame (x red, y green, z blue)", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("fabrik-out") / "dhm_arm.png")
