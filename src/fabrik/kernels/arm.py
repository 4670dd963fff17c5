"""Forward kinematics of a serial chain of revolute joints (``fabrik.Arm``), compiled.

Layout (the arrays of ``Arm``; see its docstring and docs/arms.md):

* ``axes`` (m, 3): unit axis of joint ``k`` in its own joint frame;
* ``origins`` (m, 4, 4): rigid transform from joint ``k - 1``'s moving frame (the base frame for
  ``k = 0``) to joint ``k``'s frame at zero angle;
* ``tip`` (4, 4): rigid transform from the last joint's moving frame to the tip frame.

With ``T_{-1} = I``, joint ``k``'s frame is ``F_k = T_{k-1} @ origins[k]`` and its moving frame
``T_k = F_k @ Rot(axes[k], q[k])`` (right-handed, radians); the tip frame is
``F_m = T_{m-1} @ tip``. The kernels write ``positions[k] = F_k[:3, 3]`` and
``frames[k] = F_k[:3, :3]`` for ``k = 0..m``. Only the rotation and translation blocks of the 4x4
inputs are read (their last row is (0, 0, 0, 1) by construction).
"""

import numpy as np
from numba import njit

from fabrik.kernels.frames import mm_to
from fabrik.kernels.vec import dist3v


@njit(cache=True, inline="always")
def _axis_rotation(axis, angle, out):
    """``out`` (3, 3) = the rotation by ``angle`` radians about the unit ``axis`` (Rodrigues)."""
    x, y, z = axis[0], axis[1], axis[2]
    c = np.cos(angle)
    s = np.sin(angle)
    t = 1.0 - c
    out[0, 0], out[0, 1], out[0, 2] = c + t * x * x, t * x * y - s * z, t * x * z + s * y
    out[1, 0], out[1, 1], out[1, 2] = t * x * y + s * z, c + t * y * y, t * y * z - s * x
    out[2, 0], out[2, 1], out[2, 2] = t * x * z - s * y, t * y * z + s * x, c + t * z * z


@njit(cache=True, inline="always")
def _place(rot, trans, offset, frame_out, position_out):
    """``frame_out, position_out`` = the rotation and translation of ``[rot | trans] @ offset``."""
    mm_to(rot, offset, frame_out)
    for i in range(3):
        position_out[i] = rot[i, 0] * offset[0, 3] + rot[i, 1] * offset[1, 3] + rot[i, 2] * offset[2, 3] + trans[i]


@njit(cache=True)
def _forward_into(axes, origins, tip, q, positions, frames, rot, turn, trans):
    """One pose: fill ``positions`` (m + 1, 3) and ``frames`` (m + 1, 3, 3); ``rot``, ``turn``
    (3, 3) and ``trans`` (3,) are scratch arrays."""
    m = axes.shape[0]
    for i in range(3):
        for j in range(3):
            rot[i, j] = 1.0 if i == j else 0.0
        trans[i] = 0.0
    for k in range(m):
        _place(rot, trans, origins[k], frames[k], positions[k])
        # the moving frame: F_k @ Rot(axis, q) (its origin stays at positions[k])
        _axis_rotation(axes[k], q[k], turn)
        mm_to(frames[k], turn, rot)
        for i in range(3):
            trans[i] = positions[k, i]
    _place(rot, trans, tip, frames[m], positions[m])


@njit(cache=True)
def forward_arm(axes, origins, tip, q, positions, frames):
    """Joint and tip frames of one pose ``q`` (m,): writes ``positions`` (m + 1, 3) and
    ``frames`` (m + 1, 3, 3)."""
    _forward_into(axes, origins, tip, q, positions, frames, np.empty((3, 3)), np.empty((3, 3)), np.empty(3))


@njit(cache=True)
def forward_arm_batch(axes, origins, tip, qs, positions, frames):
    """``forward_arm`` for each row of ``qs`` (N, m): writes ``positions`` (N, m + 1, 3) and
    ``frames`` (N, m + 1, 3, 3)."""
    rot, turn, trans = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    for n in range(qs.shape[0]):
        _forward_into(axes, origins, tip, qs[n], positions[n], frames[n], rot, turn, trans)


@njit(cache=True)
def pose_error(positions, frames, target_p, target_R, oriented):
    """(position error, orientation error (radians; 0 unless ``oriented``)) of a forward pose: the
    tip's distance to ``target_p`` (3,) and the angle of ``frames[m].T @ target_R``."""
    m = positions.shape[0] - 1
    err = dist3v(positions, m, target_p)
    if not oriented:
        return err, 0.0
    F = frames[m]
    tr = 0.0
    for i in range(3):
        tr += F[0, i] * target_R[0, i] + F[1, i] * target_R[1, i] + F[2, i] * target_R[2, i]
    return err, np.arccos(min(1.0, max(-1.0, 0.5 * (tr - 1.0))))
