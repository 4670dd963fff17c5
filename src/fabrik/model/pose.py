"""Pose targets: the forms ``fabrik.solve`` takes for an end effector's position with a rotation.

A pose target is either

* ``(xyz, rotation)``: the point (d,) and a rotation: a scipy ``Rotation``, a (3, 3) rotation
  matrix (acting on column vectors), or a quaternion made explicit by ``quat_xyzw(q)`` (scipy's
  order, ``(x, y, z, w)``) or ``quat_wxyz(q)`` (``(w, x, y, z)``, the order of Eigen, ROS
  messages' printouts, MuJoCo and many robot tools), which return its matrix; or
* a (4, 4) homogeneous transform ``[[R, xyz], [0, 0, 0, 1]]``.

A raw 4-vector is refused: a quaternion does not say its order, and both are common (a wrong
guess is a valid rotation, silently wrong). For a 2D chain the rotation turns about z and the
transform's z translation is 0.
"""

from __future__ import annotations

import numpy as np

from fabrik.kernels.arm import quat_matrix, rotation_defect, transform_defect
from fabrik.model.arm import RIGID_TOL
from fabrik.model.constraints import as_rotation_matrix

#: What a raw 4-vector given as a rotation is told.
QUATERNION_ORDER = ("a quaternion must say its order: fabrik.quat_xyzw(q) for (x, y, z, w) (scipy's order) or "
                    "fabrik.quat_wxyz(q) for (w, x, y, z) (Eigen's, MuJoCo's); a raw 4-vector is refused")


def _quat_matrices(q, order: str) -> np.ndarray:
    """(..., 3, 3) rotation matrices of quaternions (..., 4) in ``order``; ValueError naming the problem."""
    try:
        arr = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"quat_{order}: q must be 4 numbers (or N x 4), got {q!r}") from None
    if arr.shape[-1:] != (4,) or arr.ndim > 2:
        raise ValueError(f"quat_{order}: q must have shape (4,) or (N, 4), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"quat_{order}: q contains a non-finite value")
    if order == "wxyz":
        arr = arr[..., [1, 2, 3, 0]]
    big = np.abs(arr).max(axis=-1, keepdims=True)
    if (big == 0.0).any():
        raise ValueError(f"quat_{order}: a zero quaternion is not a rotation")
    arr = arr / big  # first: the norm of a huge quaternion would overflow
    flat = np.ascontiguousarray(arr.reshape(-1, 4))
    out = np.empty((flat.shape[0], 3, 3))
    for k, (x, y, z, w) in enumerate(flat.tolist()):
        quat_matrix(x, y, z, w, out[k])
    return out.reshape(arr.shape[:-1] + (3, 3))


def quat_xyzw(q) -> np.ndarray:
    """The rotation matrix (3, 3) of a quaternion given as ``(x, y, z, w)`` (scipy's order; ``w``
    the scalar part), or (N, 3, 3) for (N, 4); normalised first (a zero quaternion is refused).
    Pass the result wherever a rotation is taken: ``fabrik.solve(arm, (xyz, fabrik.quat_xyzw(q)))``."""
    if type(q) is np.ndarray and q.shape == (4,) or type(q) in (list, tuple) and len(q) == 4:
        try:
            x, y, z, w = (float(v) for v in q)
        except (TypeError, ValueError):
            return _quat_matrices(q, "xyzw")  # says what is wrong
        out = np.empty((3, 3))
        if 1e-150 < quat_matrix(x, y, z, w, out) < 1e150:
            return out
    return _quat_matrices(q, "xyzw")


def quat_wxyz(q) -> np.ndarray:
    """The rotation matrix (3, 3) of a quaternion given as ``(w, x, y, z)`` (``w`` the scalar part,
    first), or (N, 3, 3) for (N, 4); as ``quat_xyzw`` otherwise."""
    if type(q) is np.ndarray and q.shape == (4,) or type(q) in (list, tuple) and len(q) == 4:
        try:
            w, x, y, z = (float(v) for v in q)
        except (TypeError, ValueError):
            return _quat_matrices(q, "wxyz")
        out = np.empty((3, 3))
        if 1e-150 < quat_matrix(x, y, z, w, out) < 1e150:
            return out
    return _quat_matrices(q, "wxyz")


def target_rotation(rotation, dim: int = 3, name: str = "target rotation") -> np.ndarray:
    """An oriented target's rotation as a (3, 3) float64 matrix: a scipy ``Rotation``, a (3, 3)
    rotation matrix (within 1e-6 of one: the nearest rotation is taken), or
    ``quat_xyzw``/``quat_wxyz``'s; ValueError for None, a raw 4-vector (``QUATERNION_ORDER``) or a
    non-rotation; a 2D chain's must turn about z only."""
    if type(rotation) is np.ndarray and rotation.shape == (3, 3) and rotation.dtype.char == "d" \
            and rotation_defect(rotation) <= 1e-12:
        matrix = rotation.copy()  # the common case, checked in one compiled call
    elif rotation is None:
        raise ValueError("an oriented target (xyz, rotation) needs a rotation, got None; pass the point alone "
                         "for a position target")
    elif type(rotation) is _Rotation or isinstance(rotation, _scipy_rotation()):
        if not rotation.single:
            raise ValueError(f"{name} must be a single rotation, got a stack of {len(rotation)}")
        matrix = rotation.as_matrix()  # a rotation to rounding: made from a unit quaternion
    elif np.shape(rotation) == (4,):
        raise ValueError(f"{name}: {QUATERNION_ORDER}")
    else:
        matrix = as_rotation_matrix(rotation, name)
    if dim == 2 and abs(matrix[2, 2] - 1.0) > 1e-9:  # a half turn about x or y has -1
        raise ValueError(f"{name}: a 2D chain's target rotation must turn about the z axis only")
    return matrix


def _scipy_rotation():
    global _Rotation
    from scipy.spatial.transform import Rotation

    _Rotation = Rotation
    return Rotation


#: scipy's Rotation, once ``target_rotation`` has met one (scipy is imported on first use)
_Rotation = None


def is_transform(target) -> bool:
    """Whether ``target`` is given as a (4, 4) homogeneous transform (an array, or a list of four
    rows; checked by ``split_transform``)."""
    if type(target) is np.ndarray:
        return target.shape == (4, 4)
    return type(target) is list and len(target) == 4 and np.shape(target) == (4, 4)


def split_transform(target, dim: int = 3, name: str = "target") -> tuple[np.ndarray, np.ndarray]:
    """(point (dim,), rotation (3, 3)) of a (4, 4) transform; ValueError unless it is finite with a
    rotation block and last row (0, 0, 0, 1) (to ``RIGID_TOL``); a 2D chain's has z = 0."""
    if dim == 3 and type(target) is np.ndarray and target.dtype.char == "d" and target.shape == (4, 4) \
            and transform_defect(target) <= 1e-12:
        return target[:3, 3].copy(), np.ascontiguousarray(target[:3, :3])  # the common case, one compiled check
    try:
        t = np.asarray(target, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} as a (4, 4) transform must be numbers") from None
    if not np.isfinite(t).all():
        raise ValueError(f"{name}: the (4, 4) transform contains a non-finite value")
    if np.abs(t[3] - (0.0, 0.0, 0.0, 1.0)).max() > RIGID_TOL:
        raise ValueError(f"{name}: a (4, 4) transform's last row must be (0, 0, 0, 1), got {t[3].tolist()}")
    rotation = target_rotation(np.ascontiguousarray(t[:3, :3]), dim, f"{name}'s rotation block")
    if dim == 2:
        if t[2, 3] != 0.0:
            raise ValueError(f"{name}: a 2D chain's target lies in the z = 0 plane; the transform has "
                             f"z = {float(t[2, 3])!r}")
        return np.ascontiguousarray(t[:2, 3]), rotation
    return np.ascontiguousarray(t[:3, 3]), rotation


def target_rotations(rotations, count: int, dim: int = 3, name: str = "rotations") -> np.ndarray:
    """The rotations of ``count`` oriented targets as (count, 3, 3) float64 matrices, each what
    ``target_rotation`` gives for it (bit for bit): ``rotations`` (count, 3, 3) matrices (e.g.
    ``quat_xyzw(q)`` of (count, 4) quaternions) or a scipy ``Rotation`` holding ``count``.
    Matrices that are rotations to 1e-12 are taken as they are, in one compiled pass; the others
    go through ``target_rotation`` one by one (the nearest rotation, or a ValueError naming the
    row). A raw (count, 4) array is refused (``QUATERNION_ORDER``)."""
    from fabrik.kernels.batch_arm import rotation_defects

    if type(rotations) is _Rotation or isinstance(rotations, _scipy_rotation()):
        if rotations.single or len(rotations) != count:
            got = "a single rotation" if rotations.single else f"{len(rotations)}"
            raise ValueError(f"{name}: one rotation per target is needed, {count}; got {got}")
        mats = rotations.as_matrix()
    else:
        from fabrik._validation import real_numbers

        mats = real_numbers(rotations, name)
        if mats.shape[-1:] == (4,) and mats.ndim == 2:
            raise ValueError(f"{name}: {QUATERNION_ORDER}")
        if mats.shape != (count, 3, 3):
            raise ValueError(f"{name} must have shape ({count}, 3, 3), one rotation matrix per target, got "
                             f"{mats.shape}")
    out = np.array(mats, dtype=np.float64, order="C", copy=True)
    for row in np.flatnonzero(~(rotation_defects(out) <= 1e-12)).tolist():
        out[row] = target_rotation(out[row], dim, f"{name}[{row}]")
    if dim == 2:
        bad = np.flatnonzero(np.abs(out[:, 2, 2] - 1.0) > 1e-9)
        if bad.size:
            raise ValueError(f"{name}[{int(bad[0])}]: a 2D chain's target rotation must turn about the z axis only")
    return out


def split_transforms(transforms, name: str = "targets") -> tuple[np.ndarray, np.ndarray]:
    """(points (N, 3), rotations (N, 3, 3)) of N (4, 4) transforms, each what ``split_transform``
    gives for it (bit for bit; transforms rigid to 1e-12 in one compiled pass, the others one by
    one, a ValueError naming the row)."""
    from fabrik._validation import real_numbers
    from fabrik.kernels.batch_arm import transform_defects

    t = np.ascontiguousarray(real_numbers(transforms, name), dtype=np.float64)
    if t.ndim != 3 or t.shape[1:] != (4, 4):
        raise ValueError(f"{name} as transforms must have shape (N, 4, 4), got {t.shape}")
    points = np.ascontiguousarray(t[:, :3, 3])
    mats = np.ascontiguousarray(t[:, :3, :3])
    for row in np.flatnonzero(~(transform_defects(t) <= 1e-12)).tolist():
        points[row], mats[row] = split_transform(t[row], 3, f"{name}[{row}]")
    return points, mats


__all__ = ["quat_xyzw", "quat_wxyz", "target_rotation", "split_transform", "is_transform", "QUATERNION_ORDER",
           "target_rotations", "split_transforms"]
