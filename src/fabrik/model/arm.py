"""A serial arm of revolute and prismatic joints (human arms from DH tables, robot arms from URDF),
and its forward kinematics.

Conventions (docs/arms.md): a revolute joint ``k``'s transform is ``origins[k] @ Rot(axes[k], q[k])``,
right-handed, ``q[k]`` in radians; a prismatic joint's is ``origins[k] @ Trans(axes[k] * q[k])``,
``q[k]`` in the model's units. With ``T_{-1} = I`` (the base frame), joint ``k``'s frame is
``F_k = T_{k-1} @ origins[k]`` (where its axis is given, before its own motion) and its moving
frame is ``T_k = F_k @ Rot(axes[k], q[k])`` (or ``F_k @ Trans(axes[k] * q[k])``); the tip frame
is ``F_m = T_{m-1} @ tip``.
``forward(arm, q)`` returns ``positions[k] = F_k[:3, 3]`` and ``frames[k] = F_k[:3, :3]`` for
``k = 0..m``: rows ``0..m-1`` are the joints (location and orientation), row ``m`` is the tip.
For a standard DH table row ``k`` is DH frame ``k``: row 0 the base frame, row ``m`` the last.
Rotation matrices act on column vectors (``v_base = frames[k] @ v_joint``). Lengths are in the
units of the model (metres for URDF, centimetres for ``fabrik.models.dhm_arm``).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from fabrik._validation import MAX_COORDINATE, check_memory, check_positive, check_tol
from fabrik.kernels.arm import forward_arm, forward_arm_batch, pose_error
from fabrik.model._frozen import cached, frozen

#: Largest deviation from a rigid transform accepted in ``origins`` and ``tip`` (|R^T R - I|,
#: |det R - 1| and the last row (0, 0, 0, 1)).
RIGID_TOL = 1e-9
#: Largest magnitude of a finite joint limit (radians for a revolute joint, model units for a
#: prismatic one): a wider span would lose the angle's digits (and ``upper - lower`` overflows
#: near 1e308); a revolute joint without limits takes -inf/inf.
MAX_LIMIT = 1e6
#: The kinds of joint an Arm takes (``Arm.joint_types``).
JOINT_TYPES = ("revolute", "prismatic")


def _check_transforms(value, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as float64 rigid transforms of ``shape`` (..., 4, 4), last row set exactly to
    (0, 0, 0, 1); ValueError naming the first transform that is not rigid."""
    try:
        arr = np.array(value, dtype=np.float64, copy=True, order="C")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of numbers: {exc}") from None
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    flat = arr.reshape(-1, 4, 4)
    for i, t in enumerate(flat):
        where = f"{name}[{i}]" if len(shape) == 3 else name
        if not np.isfinite(t).all():
            raise ValueError(f"{where} contains a non-finite value (NaN or inf)")
        rot = t[:3, :3]
        if (np.abs(rot.T @ rot - np.eye(3)).max() > RIGID_TOL or abs(np.linalg.det(rot) - 1.0) > RIGID_TOL
                or np.abs(t[3] - [0.0, 0.0, 0.0, 1.0]).max() > RIGID_TOL):
            raise ValueError(f"{where} is not a rigid transform: its 3x3 block must be a rotation (orthonormal, "
                             f"det +1) and its last row (0, 0, 0, 1), got\n{t}")
        if np.abs(t[:3, 3]).max() >= MAX_COORDINATE:
            raise ValueError(f"{where} has a translation of size {np.abs(t[:3, 3]).max():g}; coordinates must "
                             f"stay below {MAX_COORDINATE:g}")
        t[3] = (0.0, 0.0, 0.0, 1.0)
    return arr


def _check_name(value, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty str, got {value!r}")
    return value


def _check_limit(value, name: str, m: int, default: float) -> np.ndarray:
    if value is None:
        return np.full(m, default)
    try:
        arr = np.array(value, dtype=np.float64).reshape(-1) if not isinstance(value, (str, bytes)) else None
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != (m,):
        raise ValueError(f"{name} must be {m} numbers, one per joint (radians for revolute joints, model units "
                         f"for prismatic ones; -inf/inf where unlimited), got {value!r}")
    if np.isnan(arr).any():
        raise ValueError(f"{name}[{int(np.flatnonzero(np.isnan(arr))[0])}] is NaN; use -inf/inf for no limit")
    big = np.flatnonzero(np.isfinite(arr) & (np.abs(arr) > MAX_LIMIT))
    if big.size:
        raise ValueError(f"{name}[{int(big[0])}] is {float(arr[big[0]])!r}: finite limits must lie within "
                         f"+-{MAX_LIMIT:g}; use -inf/inf for no limit")
    return arr


def _check_types(value, m: int) -> tuple[str, ...]:
    """``joint_types`` as a tuple of m names from ``JOINT_TYPES`` (None: all revolute)."""
    if value is None:
        return ("revolute",) * m
    if isinstance(value, (str, bytes)):
        raise ValueError(f"joint_types must be a sequence of {m} names from {list(JOINT_TYPES)}, got {value!r}")
    try:
        types = tuple(value)
    except TypeError:
        raise ValueError(f"joint_types must be a sequence of {m} names from {list(JOINT_TYPES)}, got "
                         f"{value!r}") from None
    if len(types) != m:
        raise ValueError(f"joint_types must name {m} joints, got {len(types)}: {value!r}")
    for i, t in enumerate(types):
        if t not in JOINT_TYPES:
            raise ValueError(f"joint_types[{i}] must be one of {list(JOINT_TYPES)}, got {t!r}")
    return types


class Pose(NamedTuple):
    """What ``forward`` returns; unpacks as ``positions, frames``.

    positions: (m + 1, 3) float64, or (N, m + 1, 3) for a batch of N poses: the joints' locations
        (row k < m: joint k), then the tip (row m), in the base frame, in the model's units.
    frames: (m + 1, 3, 3) float64, or (N, m + 1, 3, 3): the joints' frames before their own
        rotation (the frame each axis is given in), then the tip frame; columns are the frame's
        x, y, z axes in the base frame.
    """

    positions: np.ndarray
    frames: np.ndarray


@dataclass(frozen=True, eq=False)
class Arm:
    """An immutable serial chain of ``m`` revolute and prismatic joints from a base frame to a tip
    frame.

    Attributes:
        joint_names: tuple of m distinct str.
        axes: (m, 3) float64, read-only. Unit axis of each joint in its own joint frame (normalised
            on construction; a zero axis is refused): the axis a revolute joint turns about, the
            direction a prismatic joint slides along.
        origins: (m, 4, 4) float64, read-only. Rigid transform from the previous joint's moving
            frame (the base frame for joint 0) to this joint's frame at q = 0.
        tip: (4, 4) float64, read-only. Rigid transform from the last joint's moving frame to the tip.
        lower, upper: (m,) float64, read-only: limits of q, radians for a revolute joint, model
            units for a prismatic one; -inf/inf where unlimited (None: unlimited). Finite limits
            lie within +-``MAX_LIMIT``; a prismatic joint needs both.
        base_name, tip_name: names of the base and tip frames (URDF link names).
        joint_types: tuple of m names, ``"revolute"`` or ``"prismatic"`` (None: all revolute).

    A revolute joint ``k``'s transform is ``origins[k] @ Rot(axes[k], q[k])`` (right-handed,
    radians), a prismatic one's ``origins[k] @ Trans(axes[k] * q[k])`` (model units).
    ``fabrik.forward(arm, q)`` gives the joint and tip frames; see the module docstring and
    docs/arms.md for the layout, which is what a position-based solver reads: ``rest_positions``,
    ``bone_lengths`` and ``spherical_groups()``.
    """

    joint_names: tuple[str, ...]
    axes: np.ndarray
    origins: np.ndarray
    tip: np.ndarray
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    base_name: str = "base"
    tip_name: str = "tip"
    joint_types: tuple[str, ...] | None = None

    def __post_init__(self):
        if isinstance(self.joint_names, (str, bytes)):
            raise ValueError(f"joint_names must be a sequence of str, got {self.joint_names!r}")
        try:
            names = tuple(self.joint_names)
        except TypeError:
            raise ValueError(f"joint_names must be a sequence of str, got {self.joint_names!r}") from None
        m = len(names)
        if m == 0:
            raise ValueError("an Arm needs at least one joint; joint_names is empty")
        for i, n in enumerate(names):
            _check_name(n, f"joint_names[{i}]")
        if len(set(names)) != m:
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"joint_names must be distinct; repeated: {dup}")
        try:
            axes = np.array(self.axes, dtype=np.float64, copy=True, order="C")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"axes must be an array of numbers: {exc}") from None
        if axes.shape != (m, 3):
            raise ValueError(f"axes must have shape ({m}, 3) for {m} joints, got {axes.shape}")
        norms = np.linalg.norm(axes, axis=1)
        bad = np.flatnonzero(~np.isfinite(norms) | (norms < 1e-12))
        if bad.size:
            raise ValueError(f"axes[{bad[0]}] (joint {names[bad[0]]!r}) must be a finite, non-zero 3-vector, "
                             f"got {axes[bad[0]]}")
        axes /= norms[:, None]
        origins = _check_transforms(self.origins, "origins", (m, 4, 4))
        tip = _check_transforms(self.tip, "tip", (4, 4))
        lower = _check_limit(self.lower, "lower", m, -math.inf)
        upper = _check_limit(self.upper, "upper", m, math.inf)
        wrong = np.flatnonzero((lower > upper) | (lower == math.inf) | (upper == -math.inf))
        if wrong.size:
            j = int(wrong[0])
            raise ValueError(f"joint {j} ({names[j]!r}) has lower {float(lower[j])!r} > upper {float(upper[j])!r}")
        types = _check_types(self.joint_types, m)
        slides = np.array([t == "prismatic" for t in types], dtype=np.bool_)
        open_slide = np.flatnonzero(slides & ~(np.isfinite(lower) & np.isfinite(upper)))
        if open_slide.size:
            j = int(open_slide[0])
            raise ValueError(f"prismatic joint {j} ({names[j]!r}) needs finite lower and upper limits (model units), "
                             f"got {float(lower[j])!r}, {float(upper[j])!r}")
        object.__setattr__(self, "joint_types", types)
        object.__setattr__(self, "joint_names", names)
        _check_name(self.base_name, "base_name")
        _check_name(self.tip_name, "tip_name")
        for field_name, value in (("axes", axes), ("origins", origins), ("tip", tip), ("lower", lower),
                                  ("upper", upper)):
            object.__setattr__(self, field_name, frozen(value))
        object.__setattr__(self, "_prismatic", frozen(slides, np.bool_))
        # Writable private copies for the kernels (numba compiles read-only arrays as another type).
        object.__setattr__(self, "_kernel", (np.array(axes), np.array(origins), np.array(tip), np.array(slides)))
        object.__setattr__(self, "_kernel_lower", np.array(lower))
        object.__setattr__(self, "_kernel_upper", np.array(upper))
        # The distance between rows k and k + 1 of forward() is the length of the translation of
        # origins[k + 1] (tip for the last row) when joint k is revolute, whatever q is; a
        # prismatic joint k adds axes[k] * q[k] to it, longest at one end of its range.
        offsets = np.concatenate([origins[1:, :3, 3], tip[None, :3, 3]])
        lengths = np.linalg.norm(offsets, axis=1)
        for k in np.flatnonzero(slides):
            lengths[k] = max(np.linalg.norm(offsets[k] + axes[k] * lower[k]),
                             np.linalg.norm(offsets[k] + axes[k] * upper[k]))
        object.__setattr__(self, "_bone_lengths", frozen(lengths))
        object.__setattr__(self, "_reach", float(self._bone_lengths.sum()))
        if not math.isfinite(self._reach) or self._reach >= MAX_COORDINATE:
            raise ValueError(f"the arm reaches {self._reach:g}: coordinates must stay below {MAX_COORDINATE:g}")
        rest = np.empty((m + 1, 3))
        t = np.eye(4)
        for k in range(m):
            t = t @ origins[k]
            rest[k] = t[:3, 3]
        rest[m] = (t @ tip)[:3, 3]
        object.__setattr__(self, "_rest_positions", frozen(rest))

    @classmethod
    def from_dh(cls, rows, *, convention: str = "standard", limits=None, names=None, base_name: str = "base",
                tip_name: str = "tip", joint_types=None) -> "Arm":
        """An Arm from a Denavit-Hartenberg table of revolute and prismatic joints.

        Args:
            rows: m rows ``(theta_offset, d, alpha, a)``: angles in radians, lengths in any unit;
                a revolute joint i's DH angle is ``theta_i = theta_offset_i + q_i``, a prismatic
                joint's DH offset ``d_i + q_i`` (its angle ``theta_offset_i`` fixed).
            convention: ``"standard"``: ``A_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``, or
                ``"modified"`` (Craig): ``A_i = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``,
                where row i's ``alpha`` and ``a`` are Craig's ``alpha_{i-1}``, ``a_{i-1}`` (the
                link before joint i).
            limits: None (every joint unlimited) or m entries, each ``(lower, upper)`` of q
                (radians, or lengths for a prismatic joint; -inf/inf for an open side) or None for
                an unlimited joint. Prismatic joints need finite limits.
            names: m joint names (default ``joint_1`` .. ``joint_m``, counting as DH tables do).
            joint_types: None (all revolute), m names ``"revolute"``/``"prismatic"``, or a string
                of m letters ``R``/``P`` (``"RRPR"``: a SCARA arm).

        Every axis is +z of its joint frame (a prismatic joint slides along it). Standard:
        ``forward`` row k is DH frame k (row 0
        the base, row m the last frame). Modified: row k is Craig's frame k + 1 before its
        rotation, and row m (the tip) is frame m after it, at the same place.
        """
        from fabrik.model.dh import dh_transforms

        origins, tip = dh_transforms(rows, convention)
        m = origins.shape[0]
        if names is None:
            names = [f"joint_{i + 1}" for i in range(m)]
        elif isinstance(names, (str, bytes)) or len(names) != m:
            raise ValueError(f"names must be {m} joint names, one per DH row, got {names!r}")
        if isinstance(joint_types, str):
            letters = joint_types.upper()
            if len(letters) != m or set(letters) - set("RP"):
                raise ValueError(f"joint_types as a string must be {m} letters R (revolute) or P (prismatic), got "
                                 f"{joint_types!r}")
            joint_types = tuple("revolute" if c == "R" else "prismatic" for c in letters)
        lower, upper = np.full(m, -math.inf), np.full(m, math.inf)
        if limits is not None:
            if isinstance(limits, (str, bytes)) or len(limits) != m:
                raise ValueError(f"limits must be {m} (lower, upper) pairs in radians or None, got {limits!r}")
            for i, pair in enumerate(limits):
                if pair is None:
                    continue
                try:
                    lo, hi = (float(v) for v in pair)
                except (TypeError, ValueError):
                    raise ValueError(f"limits[{i}] must be a (lower, upper) pair or None, got {pair!r}") from None
                lower[i], upper[i] = lo, hi
        return cls(tuple(names), np.tile([0.0, 0.0, 1.0], (m, 1)), origins, tip, lower, upper, base_name, tip_name,
                   joint_types)

    @property
    def n_joints(self) -> int:
        """m, the number of joints."""
        return len(self.joint_names)

    @property
    def prismatic(self) -> np.ndarray:
        """(m,) bool, read-only: which joints are prismatic (q in model units; the others revolute,
        q in radians)."""
        return self._prismatic

    @property
    def rest_positions(self) -> np.ndarray:
        """(m + 1, 3) read-only: ``forward(arm, zeros).positions``, the joints then the tip."""
        return self._rest_positions

    @property
    def bone_lengths(self) -> np.ndarray:
        """(m,) read-only: ``|positions[k + 1] - positions[k]|`` for k = 0..m-1 (the last one joint
        to tip). The same for every q after a revolute joint k, which turns about an axis through its
        own location (0 between joints that share a location, see ``spherical_groups``); after a
        prismatic joint k the distance changes with q[k], and this is its longest within the limits."""
        return self._bone_lengths

    @property
    def reach(self) -> float:
        """Sum of the bone lengths: no pose within the limits puts the tip further than this from
        joint 0."""
        return self._reach

    def spherical_groups(self, tol: float | None = None) -> tuple[tuple[int, ...], ...]:
        """Runs of two or more consecutive revolute joints at one location (bones of length <=
        ``tol``; default 1e-9 of the reach), as tuples of joint indices. Their axes meet at that
        point for every q, so together they act as one 2- or 3-DoF spherical joint (a shoulder, a
        wrist): a position-based solver places the group once and turns its axes together.
        """
        tol = 1e-9 * self.reach if tol is None else check_tol(tol)
        groups, run = [], [0]
        slides = self._prismatic
        for k in range(1, self.n_joints):
            if self._bone_lengths[k - 1] <= tol and not slides[k - 1] and not slides[k]:
                run.append(k)
            else:
                if len(run) > 1:
                    groups.append(tuple(run))
                run = [k]
        if len(run) > 1:
            groups.append(tuple(run))
        return tuple(groups)

    def within_limits(self, q, tol: float = 0.0):
        """Whether ``lower - tol <= q <= upper + tol`` for every joint: a bool for q (m,), a (N,)
        bool array for q (N, m). ``tol`` in radians for revolute joints and model units for
        prismatic ones."""
        q = check_angles(q, self.n_joints)
        tol = check_tol(tol)
        ok = ((q >= self.lower - tol) & (q <= self.upper + tol)).all(axis=-1)
        return bool(ok) if q.ndim == 1 else ok

    def clip(self, q) -> np.ndarray:
        """A new array: ``q`` (m,) or (N, m) clipped into [lower, upper] joint by joint."""
        return np.clip(check_angles(q, self.n_joints), self.lower, self.upper)

    def random_angles(self, rng=None, n: int | None = None) -> np.ndarray:
        """Joint values drawn uniformly within the limits: (m,), or (n, m) when ``n`` is given
        (radians, model units for prismatic joints).

        ``rng`` is a ``numpy.random.Generator`` or a seed. An unlimited joint draws from
        [-pi, pi]; a joint limited on one side only draws from a full turn from its finite limit.
        """
        rng = np.random.default_rng(rng)
        low, span = self.random_ranges()
        if n is not None:
            try:
                n = operator.index(n)
            except TypeError:
                raise ValueError(f"n must be a whole number of poses, got {n!r}") from None
            if n < 0:
                raise ValueError(f"n must be >= 0, got {n}")
            check_memory(3 * 8 * n * self.n_joints, f"random_angles of {n:,} poses of {self.n_joints} joints")
        size = (self.n_joints,) if n is None else (n, self.n_joints)
        return np.minimum(low + span * rng.random(size), low + span)

    def random_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, span), each (m,): ``random_angles`` draws ``low + span * uniform[0, 1)``."""
        def build():
            lo = np.where(np.isfinite(self.lower), self.lower,
                          np.where(np.isfinite(self.upper), self.upper - 2 * math.pi, -math.pi))
            hi = np.where(np.isfinite(self.upper), self.upper, lo + 2 * math.pi)
            return frozen(lo), frozen(hi - lo)
        return cached(self, "random_ranges", build)

    def mirrored(self, normal) -> "Arm":
        """The mirror image of this arm across the plane through the base origin with the given
        ``normal`` (a 3-vector in the base frame).

        With ``S = I - 2 n n^T``, the mirror's pose at any q is this arm's pose at the same q
        reflected: ``positions @ S`` (and ``frames`` ``S @ F @ S``, which stay right-handed).
        Its origins are ``S @ origins @ S`` (and tip), its revolute axes ``-S @ axes`` (a
        reflection reverses the sense of rotation), its prismatic axes ``S @ axes`` (a slide is
        reflected as it is), and its limits are unchanged: a joint flexes the mirror as far as
        it flexes this arm.
        """
        try:
            n = np.asarray(normal, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            n = np.full(1, np.nan)
        if n.shape != (3,) or not np.isfinite(n).all() or np.linalg.norm(n) == 0:
            raise ValueError(f"normal must be a finite, non-zero 3-vector, got {normal!r}")
        n = n / np.linalg.norm(n)
        s = np.eye(4)
        s[:3, :3] -= 2.0 * np.outer(n, n)
        sign = np.where(self._prismatic, 1.0, -1.0)[:, None]
        return Arm(self.joint_names, sign * (self.axes @ s[:3, :3].T), s @ self.origins @ s, s @ self.tip @ s,
                   self.lower, self.upper, self.base_name, self.tip_name, self.joint_types)

    def scaled(self, factor: float) -> "Arm":
        """A copy with every length multiplied by ``factor`` > 0 (e.g. 0.01 from centimetres to
        the metres URDF expects), the limits of prismatic joints included; angles, axes and the
        limits of revolute joints are unchanged."""
        factor = check_positive(factor, "factor")
        origins, tip = np.array(self.origins), np.array(self.tip)
        origins[:, :3, 3] *= factor
        tip[:3, 3] *= factor
        lower, upper = (np.where(self._prismatic, limit * factor, limit) for limit in (self.lower, self.upper))
        return Arm(self.joint_names, self.axes, origins, tip, lower, upper, self.base_name, self.tip_name,
                   self.joint_types)

    def __repr__(self) -> str:
        slides = int(self._prismatic.sum())
        kinds = f", prismatic={slides}" if slides else ""
        return (f"Arm(n_joints={self.n_joints}{kinds}, joints={list(self.joint_names)}, reach={self.reach:g}, "
                f"base={self.base_name!r}, tip={self.tip_name!r})")




def check_angles(q, m: int) -> np.ndarray:
    """``q`` as C-contiguous float64 joint values (radians; model units for prismatic joints) of
    shape (m,) or (N, m); ValueError unless they are finite real numbers of that shape. A float64
    array of shape (m,) is used as it is (not copied; nothing writes to it)."""
    if type(q) is np.ndarray and q.dtype.char == "d" and q.shape == (m,) and q.strides == (8,):
        arr = q
        if math.isfinite(math.hypot(*arr.tolist())):
            return arr
    else:
        try:
            raw = np.asarray(q)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"q must be joint values (real numbers: radians, model units for prismatic joints): "
                             f"{exc}") from None
        if raw.dtype.kind not in "iuf":
            raise ValueError(f"q must be joint values (real numbers: radians, model units for prismatic joints), "
                             f"got {raw.dtype} values: {q!r}")
        if raw.ndim not in (1, 2) or raw.shape[-1] != m:
            raise ValueError(f"q must have shape ({m},) or (N, {m}) for an arm of {m} joints, got shape "
                             f"{raw.shape}")
        arr = np.ascontiguousarray(raw, dtype=np.float64)
    if not np.isfinite(arr).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"q contains a non-finite angle (NaN or inf) at index {bad}")
    return arr


def forward(model: Arm, q) -> Pose:
    """Forward kinematics of an ``Arm``: ``positions, frames = fabrik.forward(arm, q)``.

    Args:
        model: a ``fabrik.Arm``.
        q: (m,) joint values (radians for revolute joints, model units for prismatic ones), or
            (N, m) for N poses at once (one compiled loop).

    Returns:
        ``Pose(positions, frames)``: positions (m + 1, 3) and frames (m + 1, 3, 3) (with a
        leading N for a batch), new arrays in the base frame. Row k < m is joint k's frame before
        its own motion (``T_{k-1} @ origins[k]``: its location, and the frame its axis is given
        in); row m is the tip frame. For a standard DH table row k is DH frame k.
    """
    if not isinstance(model, Arm):
        raise ValueError(f"model must be a fabrik.Arm, got {type(model).__name__}")
    m = model.n_joints
    q = check_angles(q, m)
    if not q.flags.writeable:
        q = q.copy()
    axes, origins, tip, slides = model._kernel
    if q.ndim == 1:
        positions, frames = np.empty((m + 1, 3)), np.empty((m + 1, 3, 3))
        forward_arm(axes, origins, tip, slides, q, positions, frames)
    else:
        positions, frames = np.empty((q.shape[0], m + 1, 3)), np.empty((q.shape[0], m + 1, 3, 3))
        forward_arm_batch(axes, origins, tip, slides, q, positions, frames)
    return Pose(positions, frames)


def tip_errors(model: Arm, q, position, rotation=None) -> tuple[float, float]:
    """(position error, orientation error) of joint values q (m,) for a tip target: the distance
    (model units) from ``forward(model, q)``'s tip to ``position`` (3,), and the angle (radians)
    between its tip frame and ``rotation`` (3, 3), 0.0 when None; the angle as the arm solvers
    measure it (``fabrik.kernels.arm.angle_between``: accurate near 0, where ``arccos`` of the
    trace is not)."""
    positions, frames = forward(model, q)
    oriented = rotation is not None
    goal = np.ascontiguousarray(rotation, dtype=np.float64) if oriented else np.eye(3)
    err, angle = pose_error(positions, frames, np.ascontiguousarray(position, dtype=np.float64), goal, oriented)
    return float(err), float(angle)


__all__ = ["Arm", "Pose", "forward", "tip_errors", "check_angles", "RIGID_TOL", "MAX_LIMIT", "JOINT_TYPES"]
