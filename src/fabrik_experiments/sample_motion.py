"""A procedural walk on a small CMU-like humanoid, for demos and tests that need no data files.

``sample_walk()`` returns ``(skeleton, motion)``: a 26-joint humanoid (centimetres, +Y up,
walking along +Z, its left side on +X) walking two 1-second gait cycles at 60 frames per second
(120 frames). Leaves are ``<parent>_End`` End Sites so that the motion saves as BVH and reads
back with the same joint names. ``run_demo_reconstruction(out_dir)`` reconstructs the walk from
its end effectors with the skeleton methods and returns the printed table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from fabrik.model.motion import ChannelLayout, Motion
from fabrik.model.skeleton import Skeleton

#: (name, parent name, offset from the parent in cm). Rest pose: standing, arms hanging down.
HUMANOID = (
    ("Hips", None, (0.0, 94.0, 0.0)),
    ("LeftUpLeg", "Hips", (9.0, -3.0, 0.0)),
    ("LeftLeg", "LeftUpLeg", (0.0, -43.0, 0.0)),
    ("LeftFoot", "LeftLeg", (0.0, -42.0, 0.0)),
    ("LeftToeBase", "LeftFoot", (0.0, -6.0, 13.0)),
    ("LeftToeBase_End", "LeftToeBase", (0.0, 0.0, 6.0)),
    ("RightUpLeg", "Hips", (-9.0, -3.0, 0.0)),
    ("RightLeg", "RightUpLeg", (0.0, -43.0, 0.0)),
    ("RightFoot", "RightLeg", (0.0, -42.0, 0.0)),
    ("RightToeBase", "RightFoot", (0.0, -6.0, 13.0)),
    ("RightToeBase_End", "RightToeBase", (0.0, 0.0, 6.0)),
    ("Spine", "Hips", (0.0, 10.0, 0.0)),
    ("Spine1", "Spine", (0.0, 20.0, -1.0)),
    ("Neck", "Spine1", (0.0, 22.0, 0.0)),
    ("Head", "Neck", (0.0, 9.0, 1.0)),
    ("Head_End", "Head", (0.0, 18.0, 0.0)),
    ("LeftShoulder", "Spine1", (3.0, 18.0, 0.0)),
    ("LeftArm", "LeftShoulder", (15.0, 0.0, 0.0)),
    ("LeftForeArm", "LeftArm", (0.0, -28.0, 0.0)),
    ("LeftHand", "LeftForeArm", (0.0, -25.0, 0.0)),
    ("LeftHand_End", "LeftHand", (0.0, -18.0, 0.0)),
    ("RightShoulder", "Spine1", (-3.0, 18.0, 0.0)),
    ("RightArm", "RightShoulder", (-15.0, 0.0, 0.0)),
    ("RightForeArm", "RightArm", (0.0, -28.0, 0.0)),
    ("RightHand", "RightForeArm", (0.0, -25.0, 0.0)),
    ("RightHand_End", "RightHand", (0.0, -18.0, 0.0)),
)


#: Fingers of one hand, Mixamo-style names without the side: (name, lateral offset in cm from the
#: hand's middle towards the thumb side, offset along the hand, forward offset, phalanx lengths).
FINGERS = (
    ("Thumb", 2.2, -2.0, 1.8, (3.8, 3.0, 2.4)),
    ("Index", 2.4, -9.0, 0.3, (4.2, 2.4, 1.9)),
    ("Middle", 0.6, -9.4, 0.0, (4.6, 2.8, 2.0)),
    ("Ring", -1.2, -9.0, 0.0, (4.3, 2.6, 1.9)),
    ("Pinky", -2.8, -8.2, 0.0, (3.4, 2.0, 1.7)),
)


def _finger_rows() -> list[tuple]:
    """Rows of ``HUMANOID``'s form for five three-phalanx fingers on each hand, tips as End Sites."""
    rows = []
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        for finger, lateral, along, forward, phalanges in FINGERS:
            parent = f"{side}Hand"
            # the thumb side of a hanging hand is forward (+Z); fingers spread along X
            offset = (sign * lateral * 0.4, along, forward + (1.5 if finger == "Thumb" else 0.0))
            if finger != "Thumb":
                offset = (sign * lateral, along, forward)
            for k, length in enumerate(phalanges, start=1):
                name = f"{side}Hand{finger}{k}"
                rows.append((name, parent, offset))
                parent, offset = name, (0.0, -length, 0.0)
            rows.append((f"{parent}_End", parent, offset))
    return rows


def humanoid_skeleton(fingers: bool = False) -> Skeleton:
    """The 26-joint humanoid of ``HUMANOID`` (about 173 cm tall); with ``fingers`` each hand carries
    five three-phalanx fingers (``FINGERS``, 66 joints) instead of its ``_End`` site."""
    rows = list(HUMANOID)
    if fingers:  # in place of each hand's End Site, so that joints stay in BVH (depth-first) order
        extra = _finger_rows()
        rows = []
        for row in HUMANOID:
            if row[0].endswith("Hand_End"):
                side = row[0][:-len("Hand_End")]
                rows += [r for r in extra if r[0].startswith(f"{side}Hand")]
            else:
                rows.append(row)
    names = [n for n, _, _ in rows]
    parents = [-1 if p is None else names.index(p) for _, p, _ in rows]
    return Skeleton.from_parents(names, parents, [o for _, _, o in rows])


def sample_walk(n_frames: int = 120, fps: float = 60.0, cycle_seconds: float = 1.0,
                speed: float = 130.0, fingers: bool = False) -> tuple[Skeleton, Motion]:
    """A smooth procedural walk: ``(skeleton, motion)``.

    Args:
        n_frames: frames (default 120: 2 s at 60 fps).
        fps: frames per second.
        cycle_seconds: duration of one gait cycle (two steps).
        speed: forward speed in cm/s along +Z.
        fingers: hands with five fingers each (``humanoid_skeleton(fingers=True)``) that curl and
            open out of step with each other while walking.

    Rotations are built from ZYX Euler angles (degrees, BVH convention) per joint; the motion's
    layout is ``ChannelLayout.default`` (ZYX channels, End Site leaves).
    """
    skeleton = humanoid_skeleton(fingers)
    n = skeleton.n_joints
    t = np.arange(n_frames) / fps
    ph = 2.0 * np.pi * t / cycle_seconds
    s = np.sin(ph)
    angles = np.zeros((n_frames, n, 3))  # (Z, Y, X) degrees per joint

    def set_(name, z=0.0, y=0.0, x=0.0):
        j = skeleton.index(name)
        angles[:, j, 0] = z
        angles[:, j, 1] = y
        angles[:, j, 2] = x

    # Hip flexion is a negative X rotation (the leg swings towards +Z); knees bend with a
    # positive X rotation, elbows with a negative one.
    for side, sign, phase in (("Left", 1.0, 0.0), ("Right", -1.0, np.pi)):
        sp, cp = np.sin(ph + phase), np.cos(ph + phase)
        swing = np.maximum(0.0, np.sin(ph + phase + 0.6))
        set_(f"{side}UpLeg", z=sign * 3.0 * (1 + cp) / 2, y=sign * 4.0 * sp, x=-25.0 * sp)
        set_(f"{side}Leg", x=8.0 + 50.0 * swing ** 2)
        set_(f"{side}Foot", x=-8.0 * np.cos(ph + phase + 0.4))
        set_(f"{side}ToeBase", x=12.0 * np.maximum(0.0, -sp) ** 2)
        set_(f"{side}Shoulder", z=sign * 2.0 * cp)
        set_(f"{side}Arm", z=sign * 8.0, x=18.0 * sp)
        set_(f"{side}ForeArm", x=-20.0 - 12.0 * np.maximum(0.0, -sp))
        set_(f"{side}Hand", z=sign * 5.0, x=-5.0 * sp)
    set_("Hips", z=3.0 * s, y=5.0 * s, x=2.0 + 1.5 * np.cos(2 * ph))
    set_("Spine", y=-4.0 * s, x=1.0 * np.cos(2 * ph))
    set_("Spine1", z=-2.0 * s, y=-3.0 * s, x=2.0)
    set_("Neck", y=3.0 * s, x=-2.0)
    set_("Head", y=3.0 * s, x=-1.5 * np.cos(2 * ph))
    if fingers:
        for side, sign in (("Left", 1.0), ("Right", -1.0)):
            for f, (finger, *_rest) in enumerate(FINGERS):
                curl = 0.5 - 0.5 * np.cos(ph * 0.5 + 0.7 * f + (0.0 if sign > 0 else 1.3))
                if finger == "Thumb":
                    set_(f"{side}Hand{finger}1", z=sign * (10.0 + 15.0 * curl), x=-10.0 * curl)
                    set_(f"{side}Hand{finger}2", x=-25.0 * curl)
                    set_(f"{side}Hand{finger}3", x=-20.0 * curl)
                else:
                    set_(f"{side}Hand{finger}1", z=sign * (f - 2.5) * 3.0 * (1.0 - curl), x=-(10.0 + 55.0 * curl))
                    set_(f"{side}Hand{finger}2", x=-(5.0 + 70.0 * curl))
                    set_(f"{side}Hand{finger}3", x=-(5.0 + 40.0 * curl))
    for j in skeleton.leaves:
        angles[:, j] = 0.0

    quats = Rotation.from_euler("ZYX", angles.reshape(-1, 3), degrees=True).as_quat().reshape(n_frames, n, 4)
    root = np.empty((n_frames, 3))
    root[:, 0] = 2.0 * s
    root[:, 1] = skeleton.offsets[0, 1] + 2.0 + 1.5 * np.cos(2 * ph)
    root[:, 2] = speed * t
    return skeleton, Motion(quats, root, 1.0 / fps, layout=ChannelLayout.default(skeleton))


def run_demo_reconstruction(out_dir, methods=None, progress: bool = False, constrained: bool = False) -> str:
    """Reconstruct the sample walk from its end effectors (hands, feet, head) and root.

    With ``constrained``, the methods that apply limits (``fabrik-constrained``, added after
    ``fabrik`` when ``methods`` is None) get the default human joint limits
    (``fabrik.constraints.humanoid``).

    Writes ``out_dir/sample_walk.bvh`` (the walk), ``out_dir/sample_walk_fabrik.bvh`` (FABRIK's
    reconstruction, as rotations) and ``out_dir/sample_walk_reconstruction.json``; returns the
    table as a string.
    """
    import json

    from fabrik.io.bvh import save_bvh
    from fabrik.mocap.export import motion_from_positions
    from fabrik_experiments.reconstruction import reconstruct

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    skeleton, motion = sample_walk()
    save_bvh(out / "sample_walk.bvh", skeleton, motion)
    truth = motion.world_positions(skeleton)
    limits = None
    if constrained:
        from fabrik.model.humanoid_limits import humanoid

        limits, _ = humanoid(skeleton)
    report = reconstruct(skeleton, truth, methods=methods, progress=progress, source="sample walk",
                         constraints=limits)
    if "fabrik" in [r.method for r in report.results]:
        rec = motion_from_positions(skeleton, motion, report.result("fabrik").positions)
        save_bvh(out / "sample_walk_fabrik.bvh", skeleton, rec)
    (out / "sample_walk_reconstruction.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return report.table()


__all__ = ["HUMANOID", "humanoid_skeleton", "sample_walk", "run_demo_reconstruction"]
