"""A skeleton: a tree of named joints held as arrays (parent indices and rest offsets).

Conventions (see docs/conventions.md): joints are stored in topological order, so
``parents[i] < i`` for every joint but the root, which is joint 0 with ``parents[0] == -1``.
``offsets[i]`` is joint i's rest position relative to its parent (for BVH files, the OFFSET line;
the root's offset is its rest position). Units follow the data; the space is 3D, right-handed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np

from fabrik._validation import MAX_COORDINATE
from fabrik.model._frozen import freeze_fields


def _as_parents(value) -> np.ndarray:
    """Parent indices as int64; ValueError unless every entry is a whole number."""
    try:
        arr = np.asarray(value)
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64)
        arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is None or not np.isfinite(arr).all() or (arr != np.round(arr)).any():
        raise ValueError(f"parents must be whole numbers (-1 for the root), got {value!r}")
    return arr.astype(np.int64)


@dataclass(frozen=True, eq=False)
class Skeleton:
    """An immutable tree of named joints.

    Attributes:
        names: joint names, unique, in topological order.
        parents: (n,) int64, read-only; ``parents[0] == -1`` and ``0 <= parents[i] < i`` otherwise.
        offsets: (n, 3) float64, read-only; rest offset of each joint from its parent.
        constraints: joint index -> tuple of joint limits (see ``fabrik.constraints``).
        limit_reference: None, or (n, 3, 3) float64, read-only: the local rotation of each joint
            that its limits are measured from (docs/constraints.md, "Reference rotations");
            None measures every limit from the rest pose (identity), as does the identity row.
    """

    names: tuple[str, ...]
    parents: np.ndarray
    offsets: np.ndarray
    constraints: Mapping[int, tuple[Any, ...]] = field(default_factory=dict)
    limit_reference: np.ndarray | None = None

    def __post_init__(self):
        n = len(self.names)
        parents = _as_parents(self.parents)
        try:
            offsets = np.asarray(self.offsets, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"offsets must be an (n, 3) array of numbers, got {self.offsets!r}") from None
        if n < 2:
            raise ValueError(f"a skeleton needs at least 2 joints, got {n}")
        if len(set(self.names)) != n:
            seen, dup = set(), None
            for name in self.names:
                if name in seen:
                    dup = name
                    break
                seen.add(name)
            raise ValueError(f"joint names must be unique; {dup!r} appears more than once")
        if parents.shape != (n,):
            raise ValueError(f"parents must have shape ({n},), got {parents.shape}")
        if offsets.shape != (n, 3):
            raise ValueError(f"offsets must have shape ({n}, 3), got {offsets.shape}")
        if not np.isfinite(offsets).all():
            raise ValueError("offsets contain a non-finite value (NaN or inf)")
        roots = [int(i) for i in np.flatnonzero(parents < 0)]
        if len(roots) > 1:
            listed = ", ".join(f"joint {i} ({self.names[i]!r})" for i in roots)
            raise ValueError(f"a skeleton has one root, joint 0 with parent -1; this one has {len(roots)} roots: "
                             f"{listed} (give all but one of them a parent)")
        if parents[0] != -1:
            raise ValueError("joint 0 must be the root, with parent -1")
        for i in range(1, n):
            if not 0 <= parents[i] < i:
                raise ValueError(
                    f"joints must be in topological order: joint {i} ({self.names[i]!r}) has parent {int(parents[i])}")
        # the sum of all offsets bounds every rest position's distance from the root
        reach = float(np.abs(offsets).sum())
        if not reach < MAX_COORDINATE:
            raise ValueError(f"offsets add up to {reach:g}; coordinates must stay below {MAX_COORDINATE:g} "
                             "(squared distances would overflow)")
        freeze_fields(self, (("parents", parents, np.int64), ("offsets", offsets, np.float64)))
        if self.constraints:  # checked here too, so that Skeleton(...) built directly is held to the same rules
            from fabrik.model.constraints import normalise_skeleton_constraints

            object.__setattr__(self, "constraints", normalise_skeleton_constraints(self, self.constraints))
        elif not isinstance(self.constraints, Mapping):
            raise ValueError(f"constraints must be a mapping {{joint name: constraint(s)}}, got "
                             f"{type(self.constraints).__name__}")
        if self.limit_reference is not None:
            from fabrik.model.constraints import reference_rotations

            object.__setattr__(self, "limit_reference", reference_rotations(self, self.limit_reference))

    @classmethod
    def from_parents(cls, names: Sequence[str], parents: Sequence[int], offsets) -> "Skeleton":
        """Build a skeleton from names, parent indices (-1 for the root) and rest offsets (n, 3)."""
        return cls(tuple(str(n) for n in names), parents, offsets)

    @classmethod
    def from_positions(cls, names: Sequence[str], parents: Sequence[int], positions) -> "Skeleton":
        """Build a skeleton from joint rest positions (n, 3) in world coordinates."""
        try:
            positions = np.asarray(positions, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"positions must be an (n, 3) array of numbers, got {positions!r}") from None
        if positions.ndim != 2 or positions.shape[1] != 3 or positions.shape[0] != len(names):
            raise ValueError(f"positions must have shape ({len(names)}, 3), got {positions.shape}")
        parents = cls.from_parents(names, parents, np.zeros((len(names), 3))).parents  # checked before use
        offsets = positions.copy()
        offsets[1:] -= positions[np.clip(parents[1:], 0, None)]
        return cls.from_parents(names, parents, offsets)

    # --- structure -------------------------------------------------------------------------
    @property
    def n_joints(self) -> int:
        return len(self.names)

    @property
    def dim(self) -> int:
        return 3

    def index(self, name: str) -> int:
        """The index of the joint called ``name``; ValueError listing the joints if unknown."""
        try:
            return self.names.index(name)
        except ValueError:
            raise ValueError(f"unknown joint {name!r}; joints are: {', '.join(self.names)}") from None

    def children(self, joint: int) -> list[int]:
        """Indices of the joints whose parent is ``joint``."""
        return [int(i) for i in np.flatnonzero(self.parents == joint)]

    @property
    def leaves(self) -> list[int]:
        """Indices of joints with no children (the default end effectors)."""
        has_child = np.zeros(self.n_joints, dtype=bool)
        has_child[self.parents[1:]] = True
        return [int(i) for i in np.flatnonzero(~has_child)]

    @property
    def sub_bases(self) -> list[int]:
        """Indices of joints with two or more children (section 4.1 of the paper)."""
        counts = np.bincount(self.parents[1:], minlength=self.n_joints)
        return [int(i) for i in np.flatnonzero(counts >= 2)]

    @property
    def chains(self) -> list[list[int]]:
        """The chains between sub-bases (section 4.1 of the paper), as lists of joint indices.

        Each chain starts at the root or at a sub-base and follows one of its children down to the
        next sub-base or to a leaf (both ends included), so consecutive chains share their
        sub-base. In depth-first order of their first bone.
        """
        n = self.n_joints
        kids: list[list[int]] = [[] for _ in range(n)]
        for i in range(1, n):
            kids[self.parents[i]].append(i)
        out: list[list[int]] = []
        stack = [0]
        while stack:
            start = stack.pop()
            for child in reversed(kids[start]):
                chain = [start, child]
                while len(kids[chain[-1]]) == 1:
                    chain.append(kids[chain[-1]][0])
                out.append(chain)
                if len(kids[chain[-1]]) >= 2:
                    stack.append(chain[-1])
        out.sort(key=lambda c: c[1])
        return out

    @property
    def bone_lengths(self) -> np.ndarray:
        """(n,) length of the bone from each joint's parent to it (0 for the root)."""
        lengths = np.linalg.norm(self.offsets, axis=1)
        lengths[0] = 0.0
        return lengths

    def rest_positions(self) -> np.ndarray:
        """(n, 3) world positions of the joints in the rest pose (offsets summed down the tree)."""
        positions = np.array(self.offsets, dtype=np.float64)
        for i in range(1, self.n_joints):
            positions[i] += positions[self.parents[i]]
        return positions

    def height(self, positions=None) -> float:
        """The extent of the skeleton along its tallest axis (rest pose unless positions given)."""
        p = self.rest_positions() if positions is None else np.asarray(positions)
        return float(np.max(p.max(axis=0) - p.min(axis=0)))

    def with_constraints(self, constraints: Mapping[str, Any], reference=None) -> "Skeleton":
        """A copy with joint limits attached (joint name -> constraint or list of them).

        ``reference``: the local rotation each joint's limits are measured from, as a mapping
        {joint name: rotation} (a 3 x 3 matrix, an (x, y, z, w) quaternion or a scipy Rotation;
        joints left out keep the identity) or an (n, 3, 3) array; None (default) keeps this
        skeleton's own (``limit_reference``), which is the rest pose unless set.
        """
        from fabrik.model.constraints import normalise_skeleton_constraints

        limits = normalise_skeleton_constraints(self, constraints)
        return replace(self, constraints=limits,
                       limit_reference=self.limit_reference if reference is None else reference)

    def __repr__(self) -> str:
        return f"Skeleton(n_joints={self.n_joints}, root={self.names[0]!r}, leaves={len(self.leaves)})"
