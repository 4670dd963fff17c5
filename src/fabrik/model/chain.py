"""A single kinematic chain: joints joined by rigid bones, root first.

Conventions (see docs/conventions.md): joint ``i`` sits at ``positions[i]``; bone ``i`` joins
joint ``i`` to joint ``i + 1`` and has length ``bone_lengths[i]``; joint 0 is the root and the last
joint is the end effector. Units are those of the positions you give.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

from fabrik._validation import as_points, check_memory
from fabrik.model._frozen import freeze_fields, frozen


def _check_up(up, dim: int) -> np.ndarray | None:
    """``up`` as a read-only unit (3,) float64 vector (or None); ValueError unless it is a finite,
    non-zero 3-vector given for a 3D chain."""
    if up is None:
        return None
    try:
        up_vec = np.asarray(up, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        up_vec = np.full(1, np.nan)
    if dim != 3 or up_vec.shape != (3,) or not np.isfinite(up_vec).all() or np.linalg.norm(up_vec) == 0:
        raise ValueError(f"up must be a finite, non-zero 3-vector and is only used by 3D chains, got {up!r}")
    return frozen(up_vec / np.linalg.norm(up_vec))


@dataclass(frozen=True, eq=False)
class Chain:
    """An immutable chain of ``n_joints`` joints in 2D or 3D.

    Attributes:
        rest_positions: (n, d) float64, read-only. The pose the chain was built from, root first.
        bone_lengths: (n - 1,) float64, read-only. ``bone_lengths[i] = |p[i+1] - p[i]|`` (>= 0;
            zero-length bones are allowed, as in real BVH files).
        constraints: joint index -> tuple of constraint objects (see ``fabrik.constraints``);
            empty for an unconstrained chain.
        up: (3,) reference up vector used to build joint frames of a 3D chain, or None.
    """

    rest_positions: np.ndarray
    bone_lengths: np.ndarray
    constraints: Mapping[int, tuple[Any, ...]] = field(default_factory=dict)
    up: np.ndarray | None = None

    def __post_init__(self):
        positions = as_points(self.rest_positions, "rest_positions", min_count=2)
        try:
            lengths = np.asarray(self.bone_lengths, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"bone_lengths must be numbers, got {self.bone_lengths!r}") from None
        if lengths.shape != (positions.shape[0] - 1,):
            raise ValueError(f"bone_lengths must have shape ({positions.shape[0] - 1},) for {positions.shape[0]} "
                             f"joints, got {lengths.shape}")
        if not np.isfinite(lengths).all() or (lengths < 0).any():
            raise ValueError(f"bone_lengths must be finite and >= 0, got {lengths}")
        measured = np.linalg.norm(np.diff(positions, axis=0), axis=1)
        if np.abs(measured - lengths).max() > 1e-9 * max(float(measured.sum()), float(lengths.sum()), 1e-300):
            raise ValueError("bone_lengths disagree with the distances between rest_positions; build the chain with "
                             "Chain.from_positions(points)")
        freeze_fields(self, (("rest_positions", positions, np.float64), ("bone_lengths", lengths, np.float64)))
        # Writable private copies for the kernels: numba compiles read-only arrays as a separate
        # type, so handing kernels these keeps one compiled signature. Kernels never write to them.
        # 2D chains are embedded in z = 0 (kernels are 3D only).
        rest3 = np.zeros((self.rest_positions.shape[0], 3))
        rest3[:, : self.rest_positions.shape[1]] = self.rest_positions
        object.__setattr__(self, "_kernel_rest", rest3)
        object.__setattr__(self, "_kernel_root", rest3[0].copy())
        object.__setattr__(self, "_dim", int(self.rest_positions.shape[1]))
        object.__setattr__(self, "_kernel_lengths", np.array(self.bone_lengths, dtype=np.float64, order="C"))
        object.__setattr__(self, "up", _check_up(self.up, positions.shape[1]))
        if self.constraints:  # checked here too, so that Chain(...) built directly is held to the same rules
            from fabrik.model.constraints import normalise_chain_constraints

            object.__setattr__(self, "constraints", normalise_chain_constraints(self, self.constraints))
        elif not isinstance(self.constraints, Mapping):
            raise ValueError(f"constraints must be a mapping {{joint index: constraint(s)}}, got "
                             f"{type(self.constraints).__name__}")

    @classmethod
    def from_positions(cls, points, *, up=None) -> "Chain":
        """Build a chain from an (n, 2) or (n, 3) array of joint positions, root first (n >= 2).

        The bone lengths are the distances between consecutive points. ``up`` (3D only) is the
        reference up vector for joint frames used by joint limits (see docs/constraints.md for the
        default); 2D chains use +Z (out of the plane) as up.
        """
        positions = as_points(points, "points", min_count=2)
        lengths = np.linalg.norm(np.diff(positions, axis=0), axis=1)
        return cls(frozen(positions), frozen(lengths), {}, up)

    @classmethod
    def straight(cls, n_joints: int, bone_length: float = 1.0, *, dim: int = 3, axis: int = 1) -> "Chain":
        """A straight chain of ``n_joints`` joints from the origin along +axis (default +Y)."""
        try:
            n_joints = operator.index(n_joints)
        except TypeError:
            raise ValueError(f"n_joints must be a whole number, got {n_joints!r}") from None
        if n_joints < 2:
            raise ValueError(f"n_joints must be >= 2, got {n_joints}")
        try:
            length = float(bone_length)
        except (TypeError, ValueError):
            length = math.nan
        if isinstance(bone_length, (str, bytes)) or not 0 < length < math.inf:
            raise ValueError(f"bone_length must be a finite number > 0, got {bone_length!r}")
        if dim not in (2, 3):
            raise ValueError(f"dim must be 2 or 3, got {dim!r}")
        if axis not in range(dim):
            raise ValueError(f"axis must be one of {list(range(dim))} for a {dim}D chain, got {axis!r}")
        # building a chain peaks at 7.3 times its positions' bytes (tracemalloc, a million joints)
        check_memory(8 * n_joints * dim * 8, f"Chain.straight of {n_joints:,} joints")
        points = np.zeros((n_joints, dim))
        points[:, axis] = np.arange(n_joints) * length
        return cls.from_positions(points)

    @classmethod
    def from_dh(cls, rows, *, convention: str = "standard", limits=None, names=None, base_name: str = "base",
                tip_name: str = "tip", joint_types=None):
        """An arm from a Denavit-Hartenberg table (revolute and prismatic joints): returns a
        ``fabrik.Arm`` (not a Chain), exactly ``fabrik.Arm.from_dh(rows, ...)``; see that method
        for the arguments. ``fabrik.forward(arm, q)`` gives its joint positions, and
        ``arm.bone_lengths`` the lengths between them."""
        from fabrik.model.arm import Arm

        return Arm.from_dh(rows, convention=convention, limits=limits, names=names, base_name=base_name,
                           tip_name=tip_name, joint_types=joint_types)

    @property
    def dim(self) -> int:
        """Spatial dimension, 2 or 3."""
        return self._dim

    @property
    def n_joints(self) -> int:
        return int(self.rest_positions.shape[0])

    @property
    def n_bones(self) -> int:
        return int(self.bone_lengths.shape[0])

    @property
    def total_length(self) -> float:
        """Sum of the bone lengths: the outer reach from the root."""
        return float(self.bone_lengths.sum())

    @property
    def inner_reach(self) -> float:
        """The smallest root-to-effector distance the chain can make: max(0, 2 * longest - total)."""
        return max(0.0, 2.0 * float(self.bone_lengths.max()) - self.total_length)

    def with_constraints(self, constraints: Mapping[int, Any]) -> "Chain":
        """A copy of this chain with joint limits attached (joint index -> constraint or list of them)."""
        from fabrik.model.constraints import normalise_chain_constraints

        return replace(self, constraints=normalise_chain_constraints(self, constraints))

    def __repr__(self) -> str:
        return (f"Chain(n_joints={self.n_joints}, dim={self.dim}, total_length={self.total_length:g}, "
                f"constrained_joints={sorted(self.constraints)})")
