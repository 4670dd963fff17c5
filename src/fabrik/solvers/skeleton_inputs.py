"""The input checks every skeleton method shares: targets as arrays, the start pose and the
root, and the kernels' error codes as ``ValueError``."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from fabrik._validation import MAX_COORDINATE, as_point, as_points, real_numbers
from fabrik.kernels.tree import BAD_INDEX, BAD_ROOT
from fabrik.kernels.vec import all_finite3
from fabrik.model.rig import Rig, rig


def target_arrays(skeleton, targets, arrays: Rig | None = None) -> tuple[np.ndarray, np.ndarray, list]:
    """Convert ``{joint: xyz}`` to (indices (k,) int64, positions (k, 3) float64, names).

    Keys are joint names (or integer joint indices); values finite 3-vectors. Raises ValueError
    for an empty mapping, an unknown joint (listing the joints), or a bad value (naming the
    joint).
    """
    if arrays is None:
        arrays = rig(skeleton)
    if not isinstance(targets, Mapping):
        raise ValueError(f"targets must be a mapping {{joint_name: xyz}}, got {type(targets).__name__}")
    if len(targets) == 0:
        raise ValueError("targets is empty; give at least one {joint_name: xyz}")
    index_of = arrays.index_of
    n = arrays.parents.shape[0]
    indices = np.empty(len(targets), dtype=np.int64)
    names = []
    for m, key in enumerate(targets):
        j = index_of.get(key) if isinstance(key, str) else None
        if j is None:
            if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < n:
                j = int(key)
            else:
                raise ValueError(f"targets: unknown joint {key!r}; joints are: {', '.join(skeleton.names)}")
        indices[m] = j
        names.append(skeleton.names[j])
    if len(set(names)) != len(names):
        raise ValueError("targets: the same joint is given twice (by name and by index)")
    try:
        positions = np.array(real_numbers(list(targets.values()), "targets"), dtype=np.float64)
        good = positions.shape == (len(targets), 3) and bool(np.abs(positions).max() < MAX_COORDINATE)
    except (TypeError, ValueError):
        good = False
    if not good:
        for key, value in targets.items():
            if isinstance(value, tuple) and len(value) == 2 and np.ndim(value[0]) == 1:
                raise ValueError(f"targets[{key!r}]: oriented targets (xyz, rotation) are supported on chains only; "
                                 f"give a skeleton's targets as xyz positions")
            try:
                as_point(value, f"targets[{key!r}]", 3)
            except ValueError as exc:
                raise ValueError(f"{exc} (each target must be a finite xyz 3-vector)") from None
        raise ValueError("targets: each value must be a finite xyz 3-vector")
    return indices, positions, names


def prepare(skeleton, targets, initial, root):
    """Check and arrange the inputs shared by every skeleton method.

    Returns (arrays, target indices (k,), target positions (k, 3), joint names of the targets,
    initial (n, 3), root (3,), root_from_target). ``root_from_target`` is True when ``root`` was
    not given, so that a target on the root joint fixes the root. Raises ValueError on bad input
    (and when an explicit ``root`` disagrees with a target on the root joint).
    """
    arrays = rig(skeleton)
    indices, positions, names = target_arrays(skeleton, targets, arrays)
    n = arrays.parents.shape[0]
    if initial is None:
        initial = arrays.rest
    else:
        initial = as_points(initial, "initial", dim=3)
        if initial.shape[0] != n:
            raise ValueError(f"initial must have shape ({n}, 3) to match the skeleton, got {initial.shape}")
    root_from_target = root is None
    if root is None:
        root = initial[0].copy()
    else:
        root = as_point(root, "root", 3).copy()
        hit = np.flatnonzero(indices == 0)
        if hit.size and not np.allclose(positions[hit[0]], root, rtol=0.0, atol=1e-12 * max(1.0, float(arrays.reach.max()))):
            raise ValueError(f"root {root.tolist()} conflicts with the target on the root joint "
                             f"{skeleton.names[0]!r} {positions[hit[0]].tolist()}; give one of them")
    return arrays, indices, positions, names, initial, root, root_from_target


def raise_kernel_error(code: int, skeleton, indices, frame: int | None = None) -> None:
    """Turn a kernel's negative status into a ValueError (naming ``frame`` of a take when given)."""
    where = "" if frame is None else f"frame {frame}: "
    if code == BAD_INDEX:
        raise ValueError(f"{where}target_indices must be distinct joint indices in [0, {skeleton.n_joints}), "
                         f"got {np.asarray(indices).tolist()}")
    if code == BAD_ROOT:
        raise ValueError(f"{where}root conflicts with the target on the root joint; give one of them")
    raise ValueError(f"{where}solver failed with code {code}")


def _writable(value, dtype, name: str = "input") -> np.ndarray:
    """``value`` as a C-contiguous, writable array of ``dtype`` (copied only when needed: numba
    compiles read-only arrays as a separate type); float64 inputs must be real numbers
    (``real_numbers``, naming ``name``)."""
    if dtype is np.float64 and not (type(value) is np.ndarray and value.dtype.char == "d"):
        value = real_numbers(value, name)
    arr = np.ascontiguousarray(value, dtype=dtype)
    return arr if arr.flags.writeable else arr.copy()


def array_inputs(n: int, target_indices, target_positions, initial, root):
    """The light checks of the per-frame array interfaces (``solve_skeleton_arrays`` and the
    constrained ones) for a skeleton of n joints. Returns (indices (k,) int64, targets (k, 3),
    initial (n, 3), root (3,), root_from_target), all writable and C-contiguous; ``root`` None
    gives ``initial[0]`` with ``root_from_target`` True. ValueError names a wrong shape or a
    non-finite value."""
    idx = _writable(target_indices, np.int64)
    pos = _writable(target_positions, np.float64, "target_positions")
    p0 = _writable(initial, np.float64, "initial")
    k = idx.shape[0] if idx.ndim == 1 else -1
    if k < 1 or pos.shape != (k, 3):
        raise ValueError(f"target_indices must have shape (k,) with k >= 1 and target_positions (k, 3); "
                         f"got {idx.shape} and {pos.shape}")
    if p0.shape != (n, 3):
        raise ValueError(f"initial must have shape ({n}, 3) to match the skeleton, got {p0.shape}")
    if root is None:
        root_from_target = True
        r = p0[0].copy()
    else:
        root_from_target = False
        r = _writable(root, np.float64, "root")
        if r.shape != (3,):
            raise ValueError(f"root must have shape (3,), got {r.shape}")
    if not all_finite3(pos, p0, r):
        raise ValueError("target_positions, initial and root must be finite (found NaN or inf)")
    return idx, pos, p0, r, root_from_target


__all__ = ["target_arrays", "prepare", "raise_kernel_error", "array_inputs"]
