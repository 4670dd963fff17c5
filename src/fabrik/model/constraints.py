"""Joint limits on models: frames, the mappings ``with_constraints`` takes, random poses within
the limits. The limit types themselves (``Cone``, ``Hinge``, ``Twist``: parameters, packing,
measure, JSON, drawing) are ``fabrik.limits``, re-exported here.

Conventions (details and figures in docs/constraints.md):

* Every bone carries an orthonormal frame, a 3x3 rotation matrix whose columns are its local axes
  in world coordinates: column 0 is *right* (+X), column 1 the *bone direction* (+Y, from the
  joint to the next joint) and column 2 *up* (+Z); right x bone = up (right-handed).
* A limit attached to joint ``i`` restricts bone ``i`` (the bone leaving joint ``i``) relative to
  its parent frame: the frame of bone ``i - 1``, or for the root joint the chain's fixed *root
  frame* (+Y along the rest direction of bone 0, +Z from ``Chain.up``; see ``root_frame``).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from fabrik.limits import Cone, Hinge, Twist  # noqa: F401  (re-exported)
from fabrik.limits.base import joint_limits, twist_excess  # noqa: F401  (re-exported)
from fabrik.limits.cone import MIN_CONE_ANGLE  # noqa: F401  (re-exported)

#: the non-zero bone lengths of a model with joint limits span at most this many decades
#: (``check_limited_scale``)
MAX_SCALE_DECADES = 6.0


def hinge_angle(axis, parent_direction, direction) -> float:
    """Signed angle (radians) from ``parent_direction`` to ``direction`` about ``axis`` (all (3,))."""
    a = np.asarray(axis, float)
    p = np.asarray(parent_direction, float)
    d = np.asarray(direction, float)
    return math.atan2(float(np.dot(np.cross(p, d), a)), float(np.dot(p, d)))


def swing_twist(parent_frame, frame) -> tuple[float, float]:
    """(swing, twist) radians of ``frame`` relative to ``parent_frame`` (both (3, 3), columns = axes).

    Swing is the angle between the two +Y axes; twist is the rotation about the child's +Y from the
    parent frame carried over by the smallest rotation, in (-pi, pi] (``fabrik.model.geometry.relative_twist``).
    """
    from fabrik.model.geometry import relative_twist  # geometry imports rig, which imports this module

    P = np.asarray(parent_frame, float)
    F = np.asarray(frame, float)
    a, b = P[:, 1], F[:, 1]
    swing = math.atan2(float(np.linalg.norm(np.cross(a, b))), float(np.dot(a, b)))
    return swing, float(relative_twist(P, F))


def transport(frame, direction) -> np.ndarray:
    """``frame`` (3, 3) rotated by the smallest rotation taking its +Y onto the unit ``direction``.

    At exactly opposite directions the rotation is the half turn about the frame's +X.
    """
    F = np.asarray(frame, float)
    a = F[:, 1]
    b = np.asarray(direction, float)
    c = float(np.dot(a, b))
    if 1.0 + c < 1e-8:
        x = F[:, 0]
        G = 2.0 * np.outer(x, x) @ F - F
    else:
        v = np.cross(a, b)
        K = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
        G = (np.eye(3) + K + K @ K / (1.0 + c)) @ F
    return orthonormal_frame(b, G[:, 2])


def orthonormal_frame(direction, up) -> np.ndarray:
    """The frame (3, 3) with +Y = unit ``direction`` and +Z as close to ``up`` as possible."""
    y = np.asarray(direction, float)
    y = y / np.linalg.norm(y)
    z = np.asarray(up, float) - np.dot(up, y) * y
    n = np.linalg.norm(z)
    if n < 1e-9:
        e = np.zeros(3)
        e[int(np.argmin(np.abs(y)))] = 1.0
        z = e - np.dot(e, y) * y
        n = np.linalg.norm(z)
    z = z / n
    x = np.cross(y, z)
    return np.column_stack((x, y, z))


def root_frame(chain) -> np.ndarray:
    """The fixed reference frame (3, 3) that joint 0's limit is measured in.

    +Y is the rest direction of bone 0; +Z is ``chain.up`` made perpendicular to it. Default up:
    +Z for 2D chains (so left/right are the in-plane bends), else +Y, or +Z when bone 0 lies
    within ~8 degrees of the Y axis. (A zero-length bone 0 uses +Y as its direction.)
    """
    rest = chain._kernel_rest
    d = rest[1] - rest[0]
    n = np.linalg.norm(d)
    d = d / n if n > 0 else np.array([0.0, 1.0, 0.0])
    if chain.up is not None:
        up = np.asarray(chain.up, float)
    elif chain.dim == 2:
        up = np.array([0.0, 0.0, 1.0])
    else:
        up = np.array([0.0, 1.0, 0.0])
        if abs(d[1]) > 0.99:
            up = np.array([0.0, 0.0, 1.0])
    return orthonormal_frame(d, up)


def frames_to_rotations(frames):
    """scipy ``Rotation`` (stack) from (n, 3, 3) frames (e.g. ``solution.extras["frames"]``)."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(np.asarray(frames, float))


_EYE3 = np.eye(3)


def as_rotation_matrix(value, name: str = "target_rotation") -> np.ndarray:
    """A (3, 3) float64 rotation matrix from a scipy Rotation, an (x, y, z, w) quaternion or a matrix."""
    if type(value) is np.ndarray and value.shape == (3, 3) and value.dtype.char == "d":
        # the common case, cheaply: a float64 matrix that is a rotation to rounding
        (a, b, c), (d, e, f), (g, h, i) = value.tolist()
        det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
        off = max(abs(a * a + b * b + c * c - 1.0), abs(d * d + e * e + f * f - 1.0), abs(g * g + h * h + i * i - 1.0),
                  abs(a * d + b * e + c * f), abs(a * g + b * h + c * i), abs(d * g + e * h + f * i))
        if off <= 1e-12 and det > 0.0:
            return np.array(value, order="C")
    from scipy.spatial.transform import Rotation

    if isinstance(value, Rotation):
        if not value.single:
            raise ValueError(f"{name} must be a single rotation, got a stack of {len(value)}")
        return np.ascontiguousarray(value.as_matrix(), dtype=np.float64)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a scipy Rotation, a (4,) quaternion (x, y, z, w) or a (3, 3) "
                         f"matrix, got {type(value).__name__}") from None
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains a non-finite value")
    if arr.shape == (4,):
        if np.linalg.norm(arr) < 1e-12:
            raise ValueError(f"{name}: the quaternion must be non-zero")
        return np.ascontiguousarray(Rotation.from_quat(arr).as_matrix())
    if arr.shape == (3, 3):
        off = float(np.abs(arr @ arr.T - _EYE3).max())
        det = float(arr[0, 0] * (arr[1, 1] * arr[2, 2] - arr[1, 2] * arr[2, 1])
                    - arr[0, 1] * (arr[1, 0] * arr[2, 2] - arr[1, 2] * arr[2, 0])
                    + arr[0, 2] * (arr[1, 0] * arr[2, 1] - arr[1, 1] * arr[2, 0]))
        if off > 1e-6 or det < 0:
            raise ValueError(f"{name}: the (3, 3) matrix must be a rotation (orthonormal, det +1)")
        if off <= 1e-12:
            return np.array(arr, dtype=np.float64, order="C")
        from fabrik.model.geometry import orthonormalise  # imported here: as in swing_twist

        return np.ascontiguousarray(orthonormalise(arr))
    raise ValueError(f"{name} must be a scipy Rotation, a (4,) quaternion (x, y, z, w) or a (3, 3) matrix, "
                     f"got shape {arr.shape}")


# --- normalising mappings ----------------------------------------------------------------------
#: a joint's limits checked and ordered (``fabrik.limits.base.joint_limits``)
_as_tuple = joint_limits


def normalise_chain_constraints(chain, mapping: Mapping[Any, Any]) -> dict[int, tuple]:
    """Check ``{joint index: constraint or list}`` for ``chain``; return ``{index: tuple}``.

    Index i limits bone i (joint i -> i+1), so 0 <= i <= n_joints - 2; the end effector has no bone
    and takes no limit. Empty lists are dropped. Raises ValueError naming the bad entry.
    """
    if not isinstance(mapping, Mapping):
        raise ValueError(f"constraints must be a mapping {{joint index: constraint(s)}}, got {type(mapping).__name__}")
    out: dict[int, tuple] = {}
    seen: dict[int, Any] = {}
    last = chain.n_joints - 1
    for key, value in mapping.items():
        original = key
        if isinstance(key, str) and key.strip().lstrip("-").isdigit():
            key = int(key)
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
            raise ValueError(f"constraints: a chain's joints are named by index, got key {key!r}")
        idx = int(key)
        if idx < 0 or idx > last:
            raise ValueError(f"constraints: joint index {idx} is out of range 0..{last}")
        if idx in seen:
            raise ValueError(f"constraints: joint {idx} is given twice (as {seen[idx]!r} and {original!r})")
        seen[idx] = original
        if idx == last:
            raise ValueError(f"constraints: joint {idx} is the end effector; it has no bone to limit "
                             f"(limit joint i to constrain bone i, 0 <= i <= {last - 1})")
        items = _as_tuple(value, f"constraints[{idx}]")
        if chain.dim == 2:
            _check_planar(items, f"constraints[{idx}]")
        if items:
            out[idx] = items
    if out:
        check_limited_scale(chain.bone_lengths, lambda i: f"bone {i} (joint {i} -> {i + 1})")
    return out


def check_limited_scale(lengths, name_of) -> None:
    """ValueError unless the non-zero ``lengths`` of a model with joint limits span at most
    ``MAX_SCALE_DECADES`` decades (``name_of(i)`` names bone i in the message).

    A bone's direction is read from its end points, whose rounding is about 1e-16 of the model's
    size, so a short bone beside a long one turns by its rounding
    alone; the fuzzing run (benchmarks/fuzz_limits.py) found limits missed by up to 1.7 rad and
    singular Jacobians at 9 decades, none at 6. Zero-length bones are allowed."""
    lengths = np.asarray(lengths, dtype=np.float64)
    nonzero = np.flatnonzero(lengths > 0.0)
    if nonzero.size < 2:
        return
    longest = nonzero[np.argmax(lengths[nonzero])]
    shortest = nonzero[np.argmin(lengths[nonzero])]
    if lengths[shortest] < lengths[longest] * 10.0 ** -MAX_SCALE_DECADES:
        raise ValueError(
            f"joint limits need bone lengths within {MAX_SCALE_DECADES:g} decades of each other: {name_of(shortest)} "
            f"is {lengths[shortest]:.3g} long and {name_of(longest)} {lengths[longest]:.3g} "
            f"({math.log10(lengths[longest] / lengths[shortest]):.1f} decades); make the short bone zero-length or "
            "longer (docs/constraints.md, 'Edge cases')")


def _check_planar(items, where: str) -> None:
    """2D chains stay in their plane: every limit must have a meaning there (``planar_range``:
    hinges about the out-of-plane axis, twists that allow 0, ...); ValueError naming ``where``."""
    for item in items:
        try:
            item.planar_range()
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None


def reference_rotations(skeleton, value) -> np.ndarray:
    """A skeleton's ``limit_reference`` from ``value``: an (n, 3, 3) array of rotations, or a
    mapping {joint name or index: rotation} (``as_rotation_matrix``; other joints identity).
    Returned read-only (n, 3, 3) float64. ValueError for an unknown joint, a bad rotation, a
    wrong shape, or a reference on the root (the root's limits are measured against the root
    orientation a solve holds)."""
    from fabrik.model._frozen import frozen

    n = skeleton.n_joints
    if isinstance(value, Mapping):
        out = np.tile(_EYE3, (n, 1, 1))
        for key, rotation in value.items():
            j = skeleton.index(key) if isinstance(key, str) else int(key)
            if not 0 <= j < n:
                raise ValueError(f"reference: joint index {j} out of range 0..{n - 1}")
            out[j] = as_rotation_matrix(rotation, f"reference[{skeleton.names[j]!r}]")
    else:
        try:
            out = np.array(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"reference must be a mapping {{joint: rotation}} or an ({n}, 3, 3) array, got "
                             f"{type(value).__name__}") from None
        if out.shape != (n, 3, 3):
            raise ValueError(f"reference must have shape ({n}, 3, 3), one rotation per joint, got {out.shape}")
        for j in range(n):
            out[j] = as_rotation_matrix(out[j], f"reference[{skeleton.names[j]!r}]")
    if np.abs(out[0] - _EYE3).max() > 1e-12:
        raise ValueError(f"reference: the root {skeleton.names[0]!r} cannot have one (its limits are measured "
                         "against the root orientation a solve holds)")
    return frozen(out)


def normalise_skeleton_constraints(skeleton, mapping: Mapping[Any, Any]) -> dict[int, tuple]:
    """Check ``{joint name or index: constraint(s)}`` for ``skeleton``; return ``{index: tuple}``.

    A limit on joint j restricts the bone(s) leaving j (to its children) relative to the bone
    arriving at j; joints without children (leaves) take no limit.
    """
    if not isinstance(mapping, Mapping):
        raise ValueError(f"constraints must be a mapping {{joint name: constraint(s)}}, got {type(mapping).__name__}")
    out: dict[int, tuple] = {}
    n = skeleton.n_joints
    leaves = set(skeleton.leaves)
    for key, value in mapping.items():
        if isinstance(key, str):
            idx = int(key) if key.strip().isdigit() and key not in skeleton.names else skeleton.index(key)
        elif isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            idx = int(key)
            if not 0 <= idx < n:
                raise ValueError(f"constraints: joint index {idx} is out of range 0..{n - 1}")
        else:
            raise ValueError(f"constraints: keys must be joint names or indices, got {key!r}")
        if idx in leaves:
            raise ValueError(f"constraints: joint {skeleton.names[idx]!r} is a leaf; it has no bone to limit")
        if idx in out:
            raise ValueError(f"constraints: joint {skeleton.names[idx]!r} is given twice")
        items = _as_tuple(value, f"constraints[{skeleton.names[idx]!r}]")
        if items:
            out[idx] = items
    if out:
        check_limited_scale(skeleton.bone_lengths, lambda i: f"the bone of {skeleton.names[i]!r}")
    return out


# --- random poses within the limits ---------------------------------------------------------------
def _sample_local_direction(items, rng) -> np.ndarray:
    rotational = next((c for c in items if c.rotational), None)
    if rotational is not None:
        return rotational.sample_direction(rng)
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_pose(chain, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """A random pose of ``chain`` satisfying all its limits: (positions (n, 3), frames (n, 3, 3)).

    Bone directions are drawn from each joint's allowed region (``sample_direction`` of its
    rotational limit; unconstrained joints: any direction; 2D chains: in-plane angles within
    ``planar_range``), twists uniformly from the twist range (the held twist of a hinge without
    one; 0 on 2D chains). The root stays at its rest
    position. Useful to make targets that are known to be reachable within the limits.
    """
    from fabrik.model.chain import Chain

    if not isinstance(chain, Chain):
        raise ValueError(f"random_pose takes a fabrik.Chain, got {type(chain).__name__}")
    rng = np.random.default_rng(rng)
    n = chain.n_joints
    lengths = chain.bone_lengths
    positions = np.zeros((n, 3))
    positions[0] = chain._kernel_rest[0]
    frames = np.zeros((n, 3, 3))
    parent = root_frame(chain)
    for i in range(n - 1):
        items = chain.constraints.get(i, ())
        if chain.dim == 2:
            rotational = next((c for c in items if c.rotational), None)
            lo, hi = rotational.planar_range() if rotational is not None else (-math.pi, math.pi)
            theta = rng.uniform(lo, hi)
            local = np.array([-math.sin(theta), math.cos(theta), 0.0])
            psi = 0.0
        else:
            local = _sample_local_direction(items, rng)
            twist = next((c for c in items if not c.rotational), None)
            held = next((c.twist_range for c in items if c.rotational and c.twist_range is not None), None)
            if twist is not None:
                psi = rng.uniform(*twist.twist_range)
            elif held is not None:  # a hinge's twist is held at 0
                psi = held[0]
            else:
                psi = rng.uniform(-math.pi, math.pi)
        d = parent @ local
        d /= np.linalg.norm(d)
        carried = transport(parent, d)
        c, s = math.cos(psi), math.sin(psi)
        frame = carried.copy()
        frame[:, 0] = c * carried[:, 0] - s * carried[:, 2]
        frame[:, 2] = c * carried[:, 2] + s * carried[:, 0]
        frames[i] = frame
        positions[i + 1] = positions[i] + lengths[i] * d
        parent = frame
    frames[n - 1] = frames[n - 2]
    return positions, frames
