"""Joint limits: rotational (``Cone``, ``Hinge``) and orientational (``Twist``) constraints.

Conventions (details and figures in docs/constraints.md):

* Every bone carries an orthonormal frame, a 3x3 rotation matrix whose columns are its local axes
  in world coordinates: column 0 is *right* (+X), column 1 the *bone direction* (+Y, from the
  joint to the next joint) and column 2 *up* (+Z); right x bone = up (right-handed).
* A limit attached to joint ``i`` restricts bone ``i`` (the bone leaving joint ``i``) relative to
  its parent frame: the frame of bone ``i - 1``, or for the root joint the chain's fixed *root
  frame* (+Y along the rest direction of bone 0, +Z from ``Chain.up``; see ``root_frame``).
* ``Cone(up, down, left, right)``: four half-angles in (0, pi), radians, measured from the parent
  bone direction towards the parent frame's +Z, -Z, -X and +X axes. Equal angles give a circular
  cone; otherwise each quadrant is bounded by a quarter of an elliptical cone (the paper's
  irregular cone, Fig. 4). Angles over pi/2 are allowed (Fig. 6). Precisely, a direction with
  coordinates (x, y, z) in the parent frame is allowed when
  ``y|y| >= s_x x^2 + s_z z^2`` with ``s = cot(angle) |cot(angle)|`` for the quadrant's angles.
* ``Hinge(axis, min, max)``: the bone stays in the plane normal to ``axis`` (a unit 3-vector in
  the parent frame, perpendicular to the parent bone's +Y) and its signed angle from the parent
  bone direction, right-handed about ``axis``, lies in [min, max]. An elbow: Hinge((1,0,0), 0, 2.1).
  A hinge is one degree of freedom: without an explicit ``Twist`` its twist is held at 0.
* ``Twist(min, max)``: the rotation of the bone's frame about its own +Y relative to the parent
  frame carried onto the bone by the smallest rotation (swing-twist decomposition), in [min, max].
  Without a ``Twist`` (and for cones) the twist is free.

The kernels receive the limits packed in one float64 row per joint (``fabrik.model.limit_layout``);
each limit type writes its own columns (``pack``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from fabrik.model.limit_layout import (COL_AXIS, COL_CONE, COL_HINGE, COL_TWIST, COL_TWIST_FLAG, COL_TYPE, TYPE_CONE,
                                        TYPE_HINGE)

#: |cot(angle)|^2 below this is treated as exactly 0 (an angle within ~1e-7 rad of pi/2)
_FLAT = 1e-14
#: the narrowest cone angle taken (radians, 0.57 degrees), and pi minus it the widest: cot(1e-300)^2
#: overflows, and the fuzzing run of issue 31 (benchmarks/fuzz_limits.py) found cones missed by up
#: to 5e-3 rad with quadrants of 1e-6 beside pi - 1e-6 rad and by up to 7e-5 rad at 1e-3, none
#: at 0.01 (docs/constraints.md, "Edge cases")
MIN_CONE_ANGLE = 1e-2
#: the non-zero bone lengths of a model with joint limits span at most this many decades
#: (``check_limited_scale``)
MAX_SCALE_DECADES = 6.0


def _angle(value, owner: str, field_name: str, lo: float, hi: float, *, open_lo=False, open_hi=False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):  # (OverflowError: an int beyond float64)
        raise ValueError(f"{owner}.{field_name} must be a number (radians), got {value!r:.80}") from None
    if not math.isfinite(v):
        raise ValueError(f"{owner}.{field_name} must be finite, got {value!r}")
    if v < lo or v > hi or (open_lo and v == lo) or (open_hi and v == hi):
        lb = "(" if open_lo else "["
        rb = ")" if open_hi else "]"
        raise ValueError(f"{owner}.{field_name} must be in {lb}{lo:g}, {hi:g}{rb} radians, got {v!r}")
    return v


@dataclass(frozen=True)
class Cone:
    """A ball-and-socket limit: the irregular cone of the paper (section 4.3, Figs. 3-6).

    Attributes (radians, each in [``MIN_CONE_ANGLE``, pi - ``MIN_CONE_ANGLE``], 0.01 from 0 and
    pi): ``up``, ``down``, ``left``, ``right``: the largest angle between the parent bone
    direction (+Y of the parent frame) and the bone, towards the parent frame's +Z, -Z, -X and +X
    axes respectively.
    """

    up: float
    down: float
    left: float
    right: float

    def __post_init__(self):
        for name in ("up", "down", "left", "right"):
            v = _angle(getattr(self, name), "Cone", name, 0.0, math.pi, open_lo=True, open_hi=True)
            if not MIN_CONE_ANGLE <= v <= math.pi - MIN_CONE_ANGLE:
                raise ValueError(f"Cone.{name} must be in [{MIN_CONE_ANGLE:g}, pi - {MIN_CONE_ANGLE:g}] radians, got "
                                 f"{v!r}: a narrower cone cannot be told from a fixed bone in float64 (use a Hinge "
                                 "with min == max to hold a bone at one angle)")
            object.__setattr__(self, name, v)

    @classmethod
    def circular(cls, angle: float) -> "Cone":
        """A circular cone of half-angle ``angle`` (radians)."""
        return cls(angle, angle, angle, angle)

    def signed_cot2(self) -> tuple[float, float, float, float]:
        """(s_right, s_left, s_up, s_down) with s = cot(a)|cot(a)| (0 within ~1e-7 rad of pi/2)."""
        out = []
        for a in (self.right, self.left, self.up, self.down):
            c = math.cos(a) / math.sin(a)
            s = c * abs(c)
            out.append(0.0 if abs(s) < _FLAT else s)
        return tuple(out)

    def contains(self, direction, tol: float = 0.0) -> bool:
        """True when the direction (3,), in the parent frame, is inside the cone (angle slack ``tol``)."""
        return bool(cone_violation(self, direction) <= tol)

    def pack(self, row: np.ndarray, planar: bool = False) -> None:
        """Write this limit into a packed row (``fabrik.model.limit_layout``). A 2D chain's cone
        (``planar``, frames with +Z out of the plane) is the in-plane hinge Hinge((0, 0, 1), -right,
        left): its up and down angles bound out-of-plane motion, which a planar chain does not have."""
        if planar:
            row[COL_TYPE] = TYPE_HINGE
            row[COL_AXIS:COL_AXIS + 3] = (0.0, 0.0, 1.0)
            row[COL_HINGE:COL_HINGE + 2] = (-self.right, self.left)
        else:
            row[COL_TYPE] = TYPE_CONE
            row[COL_CONE:COL_CONE + 4] = self.signed_cot2()


@dataclass(frozen=True)
class Hinge:
    """A one-degree-of-freedom hinge (the paper's Fig. 7; an elbow or a knee).

    Attributes: ``axis``: unit 3-tuple in the parent frame, perpendicular to the parent bone
    direction +Y; ``min``, ``max``: the allowed signed angle (radians, in [-pi, pi], min <= max)
    from the parent bone direction to the bone, right-handed about ``axis``. The axis given may
    have any length: it is normalised on construction (``Hinge((5, 0, 0), 0, 1).axis`` is
    ``(1.0, 0.0, 0.0)``); a zero or non-finite axis, or one off the plane perpendicular to +Y by
    more than 1e-6, is refused.
    """

    axis: tuple[float, float, float]
    min: float
    max: float

    def __post_init__(self):
        try:
            axis = np.array(self.axis, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"Hinge.axis must be 3 numbers, got {self.axis!r:.80}") from None
        if axis.shape != (3,) or not np.isfinite(axis).all():
            raise ValueError(f"Hinge.axis must be 3 finite numbers, got {self.axis!r}")
        if np.abs(axis).max() > 0.0:
            axis = axis / np.abs(axis).max()  # so that the norm cannot overflow
        norm = float(np.linalg.norm(axis))
        if norm == 0.0:
            raise ValueError("Hinge.axis must be non-zero")
        axis = axis / norm
        if abs(axis[1]) > 1e-6:
            raise ValueError("Hinge.axis must be perpendicular to the parent bone direction (+Y of the parent "
                             f"frame, i.e. its y component must be 0), got {self.axis!r}")
        axis[1] = 0.0
        axis /= np.linalg.norm(axis)
        object.__setattr__(self, "axis", tuple(float(a) for a in axis))
        lo = _angle(self.min, "Hinge", "min", -math.pi, math.pi)
        hi = _angle(self.max, "Hinge", "max", -math.pi, math.pi)
        if lo > hi:
            raise ValueError(f"Hinge.min must be <= Hinge.max, got min={lo!r}, max={hi!r}")
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)

    def pack(self, row: np.ndarray, planar: bool = False) -> None:
        """Write this limit into a packed row (``fabrik.model.limit_layout``); without a ``Twist``
        a hinge holds its twist at 0."""
        row[COL_TYPE] = TYPE_HINGE
        row[COL_AXIS:COL_AXIS + 3] = self.axis
        row[COL_HINGE:COL_HINGE + 2] = (self.min, self.max)
        if row[COL_TWIST_FLAG] == 0:
            row[COL_TWIST_FLAG] = 1.0
            row[COL_TWIST:COL_TWIST + 2] = 0.0


@dataclass(frozen=True)
class Twist:
    """An orientational limit (Algorithm 2): the bone's twist about itself in [min, max] radians.

    The twist is measured against the parent frame carried onto the bone by the smallest rotation;
    both bounds in [-pi, pi], min <= max. Twists are angles, read modulo 2 pi: ``Twist(-pi, pi)``
    leaves the twist free, ``Twist(pi, pi)`` and ``Twist(-pi, -pi)`` both hold it at the half turn,
    and a range touching pi also holds -pi, the same angle (``twist_excess``).
    """

    min: float
    max: float

    def __post_init__(self):
        lo = _angle(self.min, "Twist", "min", -math.pi, math.pi)
        hi = _angle(self.max, "Twist", "max", -math.pi, math.pi)
        if lo > hi:
            raise ValueError(f"Twist.min must be <= Twist.max, got min={lo!r}, max={hi!r}")
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)

    def pack(self, row: np.ndarray, planar: bool = False) -> None:
        """Write this limit into a packed row (``fabrik.model.limit_layout``)."""
        row[COL_TWIST_FLAG] = 1.0
        row[COL_TWIST:COL_TWIST + 2] = (self.min, self.max)


CONSTRAINT_TYPES = (Cone, Hinge, Twist)


# --- measuring (pure numpy; used by tests and reports, independent of the kernels) --------------
def twist_excess(twist, lo: float, hi: float):
    """How far (radians, >= 0) the angle ``twist`` (a number or an array) lies outside [lo, hi],
    read modulo 2 pi (so -pi is inside ``Twist(pi, pi)``); 0 inside. A range of 2 pi or more
    holds every angle."""
    width = hi - lo
    if width >= 2.0 * math.pi:
        return np.zeros_like(np.asarray(twist, dtype=np.float64)) + 0.0
    t = np.mod(np.asarray(twist, dtype=np.float64) - lo, 2.0 * math.pi)
    out = np.where(t <= width, 0.0, np.minimum(t - width, 2.0 * math.pi - t))
    return float(out) if out.ndim == 0 else out


def cone_violation(cone: Cone, direction) -> float:
    """How far (radians) a direction (3,) in the parent frame is outside ``cone``; <= 0 inside.

    For the direction's azimuth the boundary polar angle is found from the cone's quadric and the
    difference of polar angles is returned (exact on the boundary, a lower bound off it).
    """
    d = np.asarray(direction, dtype=np.float64)
    d = d / np.linalg.norm(d)
    x, y, z = d
    s_r, s_l, s_u, s_d = cone.signed_cot2()
    sx = s_r if x >= 0 else s_l
    sz = s_u if z >= 0 else s_d
    rho2 = x * x + z * z
    polar = math.atan2(math.sqrt(rho2), y)
    if rho2 == 0.0:
        return polar - 0.0 if y > 0 else math.pi - max(cone.up, cone.down, cone.left, cone.right)
    s = (sx * x * x + sz * z * z) / rho2  # = cot(limit)|cot(limit)| at this azimuth
    limit = math.atan2(1.0, math.copysign(math.sqrt(abs(s)), s))
    return polar - limit


def hinge_angle(axis, parent_direction, direction) -> float:
    """Signed angle (radians) from ``parent_direction`` to ``direction`` about ``axis`` (all (3,))."""
    a = np.asarray(axis, float)
    p = np.asarray(parent_direction, float)
    d = np.asarray(direction, float)
    return math.atan2(float(np.dot(np.cross(p, d), a)), float(np.dot(p, d)))


def swing_twist(parent_frame, frame) -> tuple[float, float]:
    """(swing, twist) radians of ``frame`` relative to ``parent_frame`` (both (3, 3), columns = axes).

    Swing is the angle between the two +Y axes; twist is the rotation about the child's +Y from the
    parent frame carried over by the smallest rotation, in (-pi, pi].
    """
    P = np.asarray(parent_frame, float)
    F = np.asarray(frame, float)
    a, b = P[:, 1], F[:, 1]
    c = float(np.dot(a, b))
    swing = math.atan2(float(np.linalg.norm(np.cross(a, b))), c)
    G = transport(P, b)
    twist = math.atan2(float(np.dot(F[:, 2], G[:, 0])), float(np.dot(F[:, 2], G[:, 2])))
    return swing, twist


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
        u, _, vt = np.linalg.svd(arr)  # the nearest rotation
        return np.ascontiguousarray(u @ vt)
    raise ValueError(f"{name} must be a scipy Rotation, a (4,) quaternion (x, y, z, w) or a (3, 3) matrix, "
                     f"got shape {arr.shape}")


# --- normalising mappings ----------------------------------------------------------------------
def _as_tuple(value, where: str) -> tuple:
    items = (value,) if isinstance(value, CONSTRAINT_TYPES) else value
    try:
        items = tuple(items)
    except TypeError:
        raise ValueError(f"{where}: expected a Cone, Hinge or Twist (or a list of them), got {value!r}") from None
    rotational = 0
    twists = 0
    for item in items:
        if not isinstance(item, CONSTRAINT_TYPES):
            raise ValueError(f"{where}: expected Cone, Hinge or Twist objects, got {item!r}")
        if isinstance(item, Twist):
            twists += 1
        else:
            rotational += 1
    if rotational > 1:
        raise ValueError(f"{where}: at most one rotational limit (Cone or Hinge) per joint, got {rotational}")
    if twists > 1:
        raise ValueError(f"{where}: at most one Twist per joint, got {twists}")
    # canonical order: rotational limit first, then twist
    return tuple(sorted(items, key=lambda c: isinstance(c, Twist)))


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
    """2D chains stay in their plane: hinges about the out-of-plane axis, twists that allow 0."""
    for item in items:
        if isinstance(item, Hinge) and abs(abs(item.axis[2]) - 1.0) > 1e-9:
            raise ValueError(f"{where}: a 2D chain's Hinge.axis must be (0, 0, +-1) (out of the plane), "
                             f"got {item.axis}")
        if isinstance(item, Twist) and not item.min <= 0.0 <= item.max:
            raise ValueError(f"{where}: a 2D chain's Twist range must include 0, got [{item.min}, {item.max}]")


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
    rotational = next((c for c in items if not isinstance(c, Twist)), None)
    if isinstance(rotational, Hinge):
        theta = rng.uniform(rotational.min, rotational.max)
        a = np.array(rotational.axis)
        y = np.array([0.0, 1.0, 0.0])
        return math.cos(theta) * y + math.sin(theta) * np.cross(a, y)
    if isinstance(rotational, Cone):
        widest = max(rotational.up, rotational.down, rotational.left, rotational.right)
        cos_lo = math.cos(widest)
        for _ in range(10000):
            # uniform on the spherical cap of the widest angle, then keep the ones inside
            c = rng.uniform(cos_lo, 1.0)
            phi = rng.uniform(-math.pi, math.pi)
            s = math.sqrt(max(0.0, 1.0 - c * c))
            d = np.array([s * math.cos(phi), c, s * math.sin(phi)])
            if cone_violation(rotational, d) <= 0.0:
                return d
        return np.array([0.0, 1.0, 0.0])
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_pose(chain, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """A random pose of ``chain`` satisfying all its limits: (positions (n, 3), frames (n, 3, 3)).

    Bone directions are drawn uniformly from each joint's allowed region (unconstrained joints:
    any direction; 2D chains: in-plane angles within the in-plane limits), twists uniformly from
    the twist range (0 for a hinge without one, and for 2D chains). The root stays at its rest
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
            cone = next((c for c in items if isinstance(c, Cone)), None)
            hinge = next((c for c in items if isinstance(c, Hinge)), None)
            if cone is not None:
                lo, hi = -cone.right, cone.left
            elif hinge is not None:
                lo, hi = (hinge.min, hinge.max) if hinge.axis[2] > 0 else (-hinge.max, -hinge.min)
            else:
                lo, hi = -math.pi, math.pi
            theta = rng.uniform(lo, hi)
            local = np.array([-math.sin(theta), math.cos(theta), 0.0])
            psi = 0.0
        else:
            local = _sample_local_direction(items, rng)
            twist = next((c for c in items if isinstance(c, Twist)), None)
            if twist is not None:
                psi = rng.uniform(twist.min, twist.max)
            elif any(isinstance(c, Hinge) for c in items):
                psi = 0.0
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
