"""Small hand-made BVH texts shared by the BVH tests."""

import numpy as np


def small_bvh(orders=("ZXY", "YZX"), frames=None, root_channels="Xposition Yposition Zposition Zrotation Xrotation Yrotation",
              extra_position=True) -> str:
    """A 6-joint file: root, a joint with a zero OFFSET, a joint with position channels, End Sites."""
    a, b = orders
    cha = " ".join(f"{c}rotation" for c in a)
    chb = " ".join(f"{c}rotation" for c in b)
    pos = "Xposition Yposition Zposition " if extra_position else ""
    nb = 6 if extra_position else 3
    n_root = len(root_channels.split())
    text = f"""HIERARCHY
ROOT Pelvis
{{
\tOFFSET 0.5 1.0 -0.25
\tCHANNELS {n_root} {root_channels}
\tJOINT Zero
\t{{
\t\tOFFSET 0 0 0
\t\tCHANNELS 3 {cha}
\t\tJOINT Arm
\t\t{{
\t\t\tOFFSET 1.5 0.0 0.2
\t\t\tCHANNELS {nb} {pos}{chb}
\t\t\tEnd Site
\t\t\t{{
\t\t\t\tOFFSET 0.0 2.0 0.0
\t\t\t}}
\t\t}}
\t}}
\tJOINT Leg
\t{{
\t\tOFFSET 0 -1 0
\t\tCHANNELS 3 Yrotation Xrotation Zrotation
\t\tEnd Site
\t\t{{
\t\t\tOFFSET 0 -2 0.5
\t\t}}
\t}}
}}
MOTION
"""
    rng = np.random.default_rng(7)
    n = n_root + 3 + nb + 3
    rows = rng.uniform(-170, 170, size=(4, n)) if frames is None else np.asarray(frames)
    text += f"Frames: {len(rows)}\nFrame Time: 0.0333333\n"
    text += "\n".join(" ".join(f"{v:.4f}" for v in r) for r in rows) + "\n"
    return text
