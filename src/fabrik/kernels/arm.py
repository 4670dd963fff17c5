"""Forward kinematics of a serial chain of revolute and prismatic joints (``fabrik.Arm``), compiled.

Layout (the arrays of ``Arm``; see its docstring and docs/arms.md):

* ``axes`` (m, 3): unit axis of joint ``k`` in its own joint frame;
* ``slides`` (m,) bool: joint ``k`` is prismatic (it moves along its axis by ``q[k]`` model
  units) rather than revolute (it turns about its axis by ``q[k]`` radians);
* ``origins`` (m, 4, 4): rigid transform from joint ``k - 1``'s moving frame (the base frame for
  ``k = 0``) to joint ``k``'s frame at zero angle;
* ``tip`` (4, 4): rigid transform from the last joint's moving frame to the tip frame.

With ``T_{-1} = I``, joint ``k``'s frame is ``F_k = T_{k-1} @ origins[k]`` and its moving frame
``T_k = F_k @ Rot(axes[k], q[k])`` (revolute: right-handed, radians) or
``T_k = F_k @ Trans(axes[k] * q[k])`` (prismatic: model units); the tip frame is
``F_m = T_{m-1} @ tip``. The kernels write ``positions[k] = F_k[:3, 3]`` and
``frames[k] = F_k[:3, :3]`` for ``k = 0..m``. Only the rotation and translation blocks of the 4x4
inputs are read (their last row is (0, 0, 0, 1) by construction).
"""

import numpy as np
from numba import njit

from fabrik.kernels.frames import axis_angle_matrix, mm_to
from fabrik.kernels.vec import dist3v


@njit(cache=True, inline="always")
def _place(rot, trans, offset, frame_out, position_out):
    """``frame_out, position_out`` = the rotation and translation of ``[rot | trans] @ offset``."""
    mm_to(rot, offset, frame_out)
    for i in range(3):
        position_out[i] = rot[i, 0] * offset[0, 3] + rot[i, 1] * offset[1, 3] + rot[i, 2] * offset[2, 3] + trans[i]


@njit(cache=True)
def _forward_into(axes, origins, tip, slides, q, positions, frames, rot, turn, trans):
    """One pose: fill ``positions`` (m + 1, 3) and ``frames`` (m + 1, 3, 3); ``rot``, ``turn``
    (3, 3) and ``trans`` (3,) are scratch arrays."""
    m = axes.shape[0]
    for i in range(3):
        for j in range(3):
            rot[i, j] = 1.0 if i == j else 0.0
        trans[i] = 0.0
    for k in range(m):
        _place(rot, trans, origins[k], frames[k], positions[k])
        if slides[k]:
            # the moving frame: F_k @ Trans(axis * q), F_k's rotation carried on
            F = frames[k]
            a0, a1, a2 = axes[k, 0] * q[k], axes[k, 1] * q[k], axes[k, 2] * q[k]
            for i in range(3):
                trans[i] = positions[k, i] + F[i, 0] * a0 + F[i, 1] * a1 + F[i, 2] * a2
                for j in range(3):
                    rot[i, j] = F[i, j]
        else:
            # the moving frame: F_k @ Rot(axis, q) (its origin stays at positions[k])
            axis_angle_matrix(turn, axes[k, 0], axes[k, 1], axes[k, 2], q[k])
            mm_to(frames[k], turn, rot)
            for i in range(3):
                trans[i] = positions[k, i]
    _place(rot, trans, tip, frames[m], positions[m])


@njit(cache=True)
def forward_arm(axes, origins, tip, slides, q, positions, frames):
    """Joint and tip frames of one pose ``q`` (m,): writes ``positions`` (m + 1, 3) and
    ``frames`` (m + 1, 3, 3)."""
    _forward_into(axes, origins, tip, slides, q, positions, frames, np.empty((3, 3)), np.empty((3, 3)),
                  np.empty(3))


@njit(cache=True)
def forward_arm_batch(axes, origins, tip, slides, qs, positions, frames):
    """``forward_arm`` for each row of ``qs`` (N, m): writes ``positions`` (N, m + 1, 3) and
    ``frames`` (N, m + 1, 3, 3)."""
    rot, turn, trans = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    for n in range(qs.shape[0]):
        _forward_into(axes, origins, tip, slides, qs[n], positions[n], frames[n], rot, turn, trans)


@njit(cache=True, inline="always")
def _rel(F, G, i, j):
    """Entry (i, j) of ``F.T @ G``."""
    return F[0, i] * G[0, j] + F[1, i] * G[1, j] + F[2, i] * G[2, j]


@njit(cache=True, inline="always")
def angle_between(F, G):
    """The angle (radians, in [0, pi]) of the rotation ``R = F.T @ G`` between the frames F and G
    (3, 3): ``atan2(|v| / 2, (tr R - 1) / 2)`` with v the axial vector of ``R - R^T``
    (``2 sin(angle) axis``). Accurate for small angles as for large ones: ``arccos`` of the
    trace part alone loses half the digits near 0 (it reads 0 for any angle below about 1e-8)."""
    v0 = _rel(F, G, 2, 1) - _rel(F, G, 1, 2)
    v1 = _rel(F, G, 0, 2) - _rel(F, G, 2, 0)
    v2 = _rel(F, G, 1, 0) - _rel(F, G, 0, 1)
    trace = _rel(F, G, 0, 0) + _rel(F, G, 1, 1) + _rel(F, G, 2, 2)
    return np.arctan2(0.5 * np.sqrt(v0 * v0 + v1 * v1 + v2 * v2), 0.5 * (trace - 1.0))


@njit(cache=True)
def pose_error(positions, frames, target_p, target_R, oriented):
    """(position error, orientation error (radians; 0 unless ``oriented``)) of a forward pose: the
    tip's distance to ``target_p`` (3,) and the angle between ``frames[m]`` and ``target_R``
    (``angle_between``)."""
    m = positions.shape[0] - 1
    err = dist3v(positions, m, target_p)
    if not oriented:
        return err, 0.0
    return err, angle_between(frames[m], target_R)


@njit(cache=True)
def rotation_defect(R):
    """How far the (3, 3) matrix R is from a rotation: the largest of ``|R R^T - I|``'s entries
    (rows' norms and dot products) and ``|det R - 1|``; inf when R holds a NaN or inf."""
    a, b, c = R[0, 0], R[0, 1], R[0, 2]
    d, e, f = R[1, 0], R[1, 1], R[1, 2]
    g, h, i = R[2, 0], R[2, 1], R[2, 2]
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    off = max(abs(a * a + b * b + c * c - 1.0), abs(d * d + e * e + f * f - 1.0), abs(g * g + h * h + i * i - 1.0),
              abs(a * d + b * e + c * f), abs(a * g + b * h + c * i), abs(d * g + e * h + f * i), abs(det - 1.0))
    return off if off == off else np.inf


@njit(cache=True)
def transform_defect(T):
    """How far the (4, 4) matrix T is from a rigid transform: ``rotation_defect`` of its 3 x 3 block,
    the largest deviation of its last row from (0, 0, 0, 1); inf when T holds a NaN or inf."""
    off = max(abs(T[3, 0]), abs(T[3, 1]), abs(T[3, 2]), abs(T[3, 3] - 1.0))
    for i in range(3):
        if not np.isfinite(T[i, 3]):
            return np.inf
    return max(rotation_defect(T[:3, :3]), off if off == off else np.inf)


@njit(cache=True)
def quat_matrix(x, y, z, w, out):
    """``out`` (3, 3) = the rotation matrix of the quaternion (x, y, z, w) (w the scalar part),
    normalised first; returns its norm (``out`` is not written when it is 0 or not finite)."""
    n = np.sqrt(x * x + y * y + z * z + w * w)
    if not (n > 0.0 and n < np.inf):
        return n
    x, y, z, w = x / n, y / n, z / n, w / n
    out[0, 0], out[0, 1], out[0, 2] = 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)
    out[1, 0], out[1, 1], out[1, 2] = 2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)
    out[2, 0], out[2, 1], out[2, 2] = 2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)
    return n
