"""A linkage drawn in a viser scene: bones as segments, joints as round points; ``set`` moves it."""

from __future__ import annotations

import numpy as np

from fabrik.viz.viewer.server import BONE, JOINT, bone_segments, to3


class Body:
    """Bones (segments from each joint's parent) and joints of one pose, under scene name ``name``.

    ``size`` is the model's extent: bone thickness and joint size are fractions of it, so a chain of
    100-unit bones and a hand in metres look alike. ``joint_colors`` (n, 3) uint8 may be given per
    update (e.g. per-joint error)."""

    def __init__(self, scene, name: str, positions, parents, size: float, *, color=BONE, joint_color=JOINT,
                 thickness: float = 0.012, point: float = 0.03, visible: bool = True):
        self.parents = np.asarray(parents)
        self.color = np.array(color, dtype=np.uint8)
        self.joint_color = np.array(joint_color, dtype=np.uint8)
        p = to3(positions)
        self.bones = scene.add_line_segments(f"{name}/bones", bone_segments(p, self.parents), self.color,
                                             thickness=thickness * size, visible=visible)
        self.joints = scene.add_point_cloud(f"{name}/joints", p.astype(np.float32), self.joint_color,
                                            point_size=point * size, point_shape="circle", precision="float32",
                                            visible=visible)
        self.positions = p

    def set(self, positions, joint_colors=None) -> None:
        p = to3(positions)
        self.positions = p
        self.bones.points = bone_segments(p, self.parents)
        self.joints.points = p.astype(np.float32)
        if joint_colors is not None:
            self.joints.colors = np.asarray(joint_colors, dtype=np.uint8)

    @property
    def visible(self) -> bool:
        return self.bones.visible

    @visible.setter
    def visible(self, value: bool) -> None:
        self.bones.visible = value
        self.joints.visible = value

    def remove(self) -> None:
        self.bones.remove()
        self.joints.remove()
