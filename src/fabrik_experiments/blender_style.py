"""A take written as Blender's BVH exporter writes one: position channels on every joint.

``write_blender_style(path, skeleton, motion, digits=6)`` writes ``motion`` with ``Xposition
Yposition Zposition`` before every joint's rotation channels (a joint without rotation channels
gets ``Zrotation Xrotation Yrotation``), End Sites kept. The position channels come from the
take's world positions as an exporter gets them: the world positions (forward kinematics, in
float64, or in float32 with ``float32=True`` as Blender computes) are rounded to the printed
precision, and each joint's channels are its rounded position less its parent's, turned into the
parent's frame. Every number (OFFSETs, channels, angles) is printed with ``digits`` significant
digits (``%.{digits}g``) or, with ``fixed=True``, ``digits`` decimals (``%.{digits}f``, Blender's
own ``%.6f``). So a joint's channels vary over the frames by the rounding of the coordinates, and
``stretch={joint name: fraction}`` makes a joint's bone grow by that fraction over the take
(linearly from its first frame to its last), as a bone that truly changes length does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fabrik.model.motion import ChannelLayout, Motion
from fabrik.model.skeleton import Skeleton

POSITIONS = ("Xposition", "Yposition", "Zposition")


def _rounded(values: np.ndarray, digits: int, fixed: bool) -> np.ndarray:
    """``values`` as printed and read back: ``digits`` decimals, or ``digits`` significant digits."""
    if fixed:
        return np.round(values, digits)
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore"):
        exp10 = np.where(v != 0, np.floor(np.log10(np.abs(v), where=v != 0, out=np.zeros_like(v))), 0)
    scale = 10.0 ** (digits - 1 - exp10)
    return np.round(v * scale) / scale


def _world(skeleton: Skeleton, motion: Motion, dtype) -> tuple[np.ndarray, np.ndarray]:
    """Forward kinematics with every product in ``dtype``: positions (F, n, 3), rotations (F, n, 3, 3)."""
    local = motion.rotation_matrices().astype(dtype)
    trans = motion.local_translations(skeleton).astype(dtype)
    rot = np.empty_like(local)
    pos = np.empty_like(trans)
    rot[:, 0], pos[:, 0] = local[:, 0], trans[:, 0]
    for i in range(1, skeleton.n_joints):
        p = skeleton.parents[i]
        rot[:, i] = rot[:, p] @ local[:, i]
        pos[:, i] = pos[:, p] + np.einsum("fij,fj->fi", rot[:, p], trans[:, i])
    return pos, rot


def write_blender_style(path, skeleton: Skeleton, motion: Motion, *, digits: int = 6, fixed: bool = False,
                        float32: bool = False, stretch: dict[str, float] | None = None) -> Path:
    """Write the take (module notes); returns ``path``."""
    from fabrik.io.bvh import motion_channel_values

    layout = motion.layout or ChannelLayout.default(skeleton)
    unknown = [name for name in stretch or {} if name not in skeleton.names]
    if unknown:
        raise ValueError(f"stretch names unknown joint(s) {', '.join(unknown)}")
    dtype = np.float32 if float32 else np.float64
    pos, rot = _world(skeleton, motion, dtype)
    pos = _rounded(pos.astype(np.float64), digits, fixed).astype(dtype)
    F = motion.n_frames
    channels, translations = [], {}
    for j in range(skeleton.n_joints):
        if j in layout.end_sites:
            channels.append(())
            continue
        rotations = tuple(c for c in layout.channels[j] if c.endswith("rotation")) or ("Zrotation", "Xrotation",
                                                                                         "Yrotation")
        channels.append(POSITIONS + rotations)
        if j:
            p = skeleton.parents[j]
            t = np.einsum("fji,fj->fi", rot[:, p], pos[:, j] - pos[:, p]).astype(np.float64)
            grow = (stretch or {}).get(skeleton.names[j])
            if grow:
                t *= 1.0 + grow * np.linspace(0.0, 1.0, F)[:, None]
            translations[j] = t
    written = ChannelLayout(tuple(channels), layout.end_sites)
    take = Motion(motion.rotations, pos[:, 0].astype(np.float64), motion.frame_time, translations, written)
    values = motion_channel_values(skeleton, take, written)
    fmt = f"{{:.{digits}f}}" if fixed else f"{{:.{digits}g}}"
    children = [[] for _ in range(skeleton.n_joints)]
    for i in range(1, skeleton.n_joints):
        children[int(skeleton.parents[i])].append(i)
    out = ["HIERARCHY"]
    order = []

    def block(j: int, depth: int) -> None:
        ind = "\t" * depth
        offset = " ".join(fmt.format(v) for v in skeleton.offsets[j])
        if j in written.end_sites:
            out.extend([f"{ind}End Site", f"{ind}{{", f"{ind}\tOFFSET {offset}", f"{ind}}}"])
            return
        order.append(j)
        out.extend([f"{ind}{'ROOT' if j == 0 else 'JOINT'} {skeleton.names[j]}", f"{ind}{{",
                    f"{ind}\tOFFSET {offset}", f"{ind}\tCHANNELS 6 {' '.join(written.channels[j])}"])
        for c in children[j]:
            block(c, depth + 1)
        out.append(f"{ind}}}")

    block(0, 0)
    starts = np.cumsum([0] + [len(c) for c in written.channels])
    columns = [starts[j] + k for j in order for k in range(6)]
    out.extend(["MOTION", f"Frames: {F}", f"Frame Time: {motion.frame_time:.9g}"])
    out.extend(" ".join(fmt.format(v) for v in row) for row in values[:, columns])
    path = Path(path)
    path.write_text("\n".join(out) + "\n")
    return path


__all__ = ["write_blender_style"]
