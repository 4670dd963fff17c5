"""Targets for the skeleton and crowd rows of ``fabrik bench batch`` (and their tests): random poses
and procedural walks of ``fabrik.models.humanoid()``, made by turning bones, so that every target
set is one the skeleton can reach exactly.

A pose is built bone by bone: bone i (parent -> i) points along ``B[i] @ offsets[i]`` with
``B[i] = B[parent(i)] @ L[i]``, ``L[i]`` the bone's own turn (``B[root] = L[root]``). Bones are
turned independently, so the legs of ``models.humanoid``, whose hips are folded into the pelvis,
swing on their own: that skeleton is solved with ``rigid_sub_bases=False`` here (the paper's free
sub-base children), since ``"auto"`` holds the thighs and the spine as one rigid body with the
pelvis and no leg could swing.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from fabrik import models

#: The 7 targeted joints of the humanoid rows: head, wrists, ankles and knees (feet and hands
#: placed, the knees' direction given, as a game places a character's limbs).
EFFECTORS = ("head", "l_wrist", "r_wrist", "l_ankle", "r_ankle", "l_knee", "r_knee")
#: The humanoid rows' tracking options (module docstring).
OPTIONS = {"rigid_sub_bases": False}


def posed(skeleton, turns: np.ndarray, roots: np.ndarray | None = None) -> np.ndarray:
    """Joint positions (..., n, 3) of ``skeleton`` with every bone turned by ``turns`` (..., n, 3,
    3) (module docstring); the root at ``roots`` (..., 3) (default its rest position)."""
    parents = np.asarray(skeleton.parents)
    offsets = np.asarray(skeleton.offsets, dtype=np.float64)
    n = parents.shape[0]
    B = np.empty(turns.shape)
    P = np.empty(turns.shape[:-2] + (3,))
    B[..., 0, :, :] = turns[..., 0, :, :]
    P[..., 0, :] = offsets[0] if roots is None else roots
    for i in range(1, n):
        q = parents[i]
        B[..., i, :, :] = B[..., q, :, :] @ turns[..., i, :, :]
        P[..., i, :] = P[..., q, :] + B[..., i, :, :] @ offsets[i]
    return P


def random_poses(skeleton, count: int, seed: int = 0, amplitude: float = 0.3) -> np.ndarray:
    """(count, n, 3) poses: every bone but the root's turned by a random rotation vector with
    independent normal components of ``amplitude`` radians, the root at rest."""
    n = skeleton.n_joints
    rng = np.random.default_rng(seed)
    vectors = rng.normal(scale=amplitude, size=(count, n, 3))
    vectors[:, 0] = 0.0
    turns = Rotation.from_rotvec(vectors.reshape(-1, 3)).as_matrix().reshape(count, n, 3, 3)
    return posed(skeleton, turns)


def _about(axis: str, degrees: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) about the x, y or z axis by ``degrees`` (...)."""
    a = np.radians(degrees)
    c, s = np.cos(a), np.sin(a)
    out = np.zeros(a.shape + (3, 3))
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    k = 3 - i - j
    out[..., k, k] = 1.0
    out[..., i, i] = c
    out[..., j, j] = c
    out[..., i, j] = -s
    out[..., j, i] = s
    return out


def crowd_walk(characters: int, frames: int, fps: float = 60.0, seed: int = 0, skeleton=None):
    """Procedural walks of ``characters`` humanoids (``models.humanoid()``) over ``frames`` frames
    at ``fps``: each character with its own heading, speed (1.0-1.6 m/s), gait cycle (0.9-1.2 s),
    phase and start position on a 100 m square. Returns (skeleton, poses (N, F, n, 3), roots
    (N, F, 3)); the targets of ``EFFECTORS`` are ``poses[..., skeleton.index(name), :]``."""
    skeleton = models.humanoid() if skeleton is None else skeleton
    rng = np.random.default_rng(seed)
    n = skeleton.n_joints
    index = skeleton.index
    t = np.arange(frames) / fps
    heading = rng.uniform(0.0, 360.0, characters)
    speed = rng.uniform(1.0, 1.6, characters)
    cycle = rng.uniform(0.9, 1.2, characters)
    phase = rng.uniform(0.0, 2.0 * np.pi, characters)
    ph = 2.0 * np.pi * t[None] / cycle[:, None] + phase[:, None]  # (N, F)
    angles = np.zeros((characters, frames, n, 3))  # degrees about x, y, z, per bone
    for side, sign, shift in (("l", 1.0, 0.0), ("r", -1.0, np.pi)):
        s = np.sin(ph + shift)
        swing = np.maximum(0.0, np.sin(ph + shift + 0.6))
        angles[:, :, index(f"{side}_knee"), 0] = -25.0 * s  # the thigh swings forward (+Z)
        angles[:, :, index(f"{side}_ankle"), 0] = 8.0 + 50.0 * swing ** 2  # the knee bends
        angles[:, :, index(f"{side}_elbow"), 0] = 18.0 * s  # the upper arm swings against the leg
        angles[:, :, index(f"{side}_elbow"), 2] = sign * 8.0
        angles[:, :, index(f"{side}_wrist"), 0] = -20.0 - 12.0 * np.maximum(0.0, -s)
    angles[:, :, index("neck"), 0] = 3.0 + 1.5 * np.cos(2.0 * ph)
    angles[:, :, index("neck"), 1] = -4.0 * np.sin(ph)
    angles[:, :, index("head"), 1] = 3.0 * np.sin(ph)
    angles[:, :, 0, 1] = heading[:, None] + 5.0 * np.sin(ph)  # the body's heading, swaying
    turns = _about("y", angles[..., 1]) @ _about("x", angles[..., 0]) @ _about("z", angles[..., 2])
    rad = np.radians(heading)
    forward = np.stack([np.sin(rad), np.zeros(characters), np.cos(rad)], axis=1)  # +Z turned by the heading
    start = np.stack([rng.uniform(-50.0, 50.0, characters), np.zeros(characters), rng.uniform(-50.0, 50.0, characters)],
                     axis=1)
    roots = start[:, None] + forward[:, None] * (speed[:, None] * t[None])[..., None]
    roots[..., 1] = skeleton.offsets[0][1] + 0.02 * np.cos(2.0 * ph)
    return skeleton, posed(skeleton, turns, roots), roots


__all__ = ["EFFECTORS", "OPTIONS", "posed", "random_poses", "crowd_walk"]
