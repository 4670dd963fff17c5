"""Motion: joint rotations over time on a ``Skeleton``, forward kinematics, and the way back.

Conventions:

* A ``Motion`` holds, per frame, each joint's *local* rotation (relative to its parent's frame)
  as a unit quaternion in scipy order ``(x, y, z, w)``, shape (F, n, 4), and the root joint's
  world position, shape (F, 3). Non-root joints sit at their ``Skeleton.offsets`` in the
  parent's frame unless ``joint_translations`` gives them a per-frame local translation (BVH
  position channels on non-root joints *replace* the OFFSET, as in most readers).
* Forward kinematics (column vectors)::

      world_rot[0] = local_rot[0]
      world_pos[0] = root_positions
      world_rot[i] = world_rot[parent] @ local_rot[i]
      world_pos[i] = world_pos[parent] + world_rot[parent] @ translation[i]

  i.e. a child's world transform is ``parent_world @ translate(offset) @ rotate(local)``, the
  BVH convention. Units of positions follow the skeleton's offsets.
* ``rotations_from_positions`` goes the other way: joint positions (F, n, 3) -> a ``Motion``
  whose forward kinematics reproduces them (exactly when the positions keep the skeleton's bone
  lengths and each joint's children are a rotated copy of its rest children).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

import numpy as np
from numba import njit
from scipy.spatial.transform import Rotation

from fabrik.kernels.frames import axis_angle_matrix, rotation_between
from fabrik.model._frozen import frozen
from fabrik.model.skeleton import Skeleton

#: Channel names allowed in a ``ChannelLayout`` (the BVH spellings).
POSITION_CHANNELS = ("Xposition", "Yposition", "Zposition")
ROTATION_CHANNELS = ("Xrotation", "Yrotation", "Zrotation")
CHANNEL_NAMES = POSITION_CHANNELS + ROTATION_CHANNELS

#: Channels written for a motion that has no layout: ZYX Euler angles, root also XYZ position.
DEFAULT_ROOT_CHANNELS = ("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation")
DEFAULT_JOINT_CHANNELS = ("Zrotation", "Yrotation", "Xrotation")

#: Bones shorter than this fraction of the skeleton's size count as zero-length.
ZERO_BONE = 1e-9


@dataclass(frozen=True)
class ChannelLayout:
    """How a motion is laid out in a BVH file (kept so that saving reproduces the input).

    Attributes:
        channels: per joint, the channel names in file order (e.g. ``("Zrotation", "Yrotation",
            "Xrotation")``); ``()`` for end sites and joints without channels.
        end_sites: indices of the joints that are BVH ``End Site`` blocks (leaves, no channels).
    """

    channels: tuple[tuple[str, ...], ...]
    end_sites: frozenset[int] = frozenset()

    def __post_init__(self):
        for i, chans in enumerate(self.channels):
            if len(set(chans)) != len(chans):
                raise ValueError(f"channels of joint {i} repeat a name: {chans}")
            for c in chans:
                if c not in CHANNEL_NAMES:
                    raise ValueError(f"unknown channel {c!r} for joint {i}; channels are {', '.join(CHANNEL_NAMES)}")
            if i in self.end_sites and chans:
                raise ValueError(f"joint {i} is an end site and cannot have channels")

    @property
    def n_channels(self) -> int:
        """Values per frame line."""
        return sum(len(c) for c in self.channels)

    @classmethod
    def default(cls, skeleton: Skeleton) -> "ChannelLayout":
        """ZYX rotation channels on every joint, XYZ position on the root, leaves as end sites."""
        leaves = frozenset(i for i in skeleton.leaves if i != 0)
        chans = tuple(() if i in leaves else (DEFAULT_ROOT_CHANNELS if i == 0 else DEFAULT_JOINT_CHANNELS)
                      for i in range(skeleton.n_joints))
        return cls(chans, leaves)

    def with_all_rotations(self) -> "ChannelLayout":
        """This layout with three rotation channels on every joint that is not an end site.

        A joint's own channels keep their order and the missing rotation axes follow (in Z, Y, X
        order). For writing poses from solvers that turn every joint as a ball joint into a file
        whose hinges have one or two rotation channels, or whose fixed joints have none.
        """
        out = []
        for i, chans in enumerate(self.channels):
            if i in self.end_sites:
                out.append(chans)
                continue
            have = {c[0] for c in chans if c.endswith("rotation")}
            out.append(tuple(chans) + tuple(f"{a}rotation" for a in "ZYX" if a not in have))
        return ChannelLayout(tuple(out), self.end_sites)

    def check_for(self, skeleton: Skeleton) -> None:
        """ValueError unless this layout fits ``skeleton`` (one entry per joint, end sites leaves)."""
        if len(self.channels) != skeleton.n_joints:
            raise ValueError(f"layout has {len(self.channels)} joints, skeleton has {skeleton.n_joints}")
        leaves = set(skeleton.leaves)
        for i in self.end_sites:
            if i not in leaves or i == 0:
                raise ValueError(f"end site {i} ({skeleton.names[i]!r}) must be a non-root leaf of the skeleton")


@dataclass(frozen=True, eq=False)
class PrintedPrecision:
    """How finely a BVH file printed its numbers, and so how much rounding its values can carry
    (``fabrik.load_bvh`` records it as ``Motion.precision``).

    A number's last printed digit is worth ``10**-place``, and it shows ``significant`` digits
    from its first non-zero one (``fabrik.io._bvh_common.printed_digits``: ``0.0955832`` has place
    7 and 6 digits, ``15.735700`` place 6 and 8 digits). A writer prints a fixed number of decimals
    (``%.6f``: one place for every value) or of significant digits (``%g``: the place follows the
    value's size), and may drop trailing zeros; a value ``v`` of a column whose numbers show at
    most ``place`` and ``significant`` is therefore within ``rounding(v, place, significant)`` =
    ``0.5 * max(10**-place, 10**(floor(log10|v|) - significant + 1))`` of what was printed from,
    the coarser of the two readings.

    Attributes:
        places, significant: (C,) int64, per channel of the layout (file order): the finest place
            and the most significant digits among its numbers with a non-zero digit (a printed
            ``0`` tells nothing of the digits kept); a channel with no such number has the
            ``coordinate_`` ones.
        coordinate_place, coordinate_significant: the same over every position channel (world
            coordinates for the root), else over the OFFSETs when no position channel has a
            non-zero digit.
        offset_place, offset_significant: the same over the hierarchy's OFFSET values.
    """

    places: np.ndarray
    significant: np.ndarray
    coordinate_place: int
    coordinate_significant: int
    offset_place: int
    offset_significant: int

    def __post_init__(self):
        places = frozen(self.places, np.int64)
        significant = frozen(self.significant, np.int64)
        if places.ndim != 1 or places.shape != significant.shape:
            raise ValueError(f"places and significant must be (C,) arrays of one shape, got {places.shape} and "
                             f"{significant.shape}")
        object.__setattr__(self, "places", places)
        object.__setattr__(self, "significant", significant)

    @staticmethod
    def rounding(values, place, significant) -> np.ndarray:
        """How far each of ``values`` may be from what was printed from: half the worth of its last
        digit, read as the coarser of ``place`` decimals and ``significant`` digits (class notes).
        ``place`` and ``significant`` broadcast against ``values``."""
        v = np.abs(np.asarray(values, dtype=np.float64))
        with np.errstate(divide="ignore"):
            size = np.floor(np.log10(v))  # -inf for 0: only the place counts
        worth = np.maximum(-np.asarray(place, dtype=np.float64), size - np.asarray(significant) + 1)
        return 0.5 * 10.0 ** np.clip(worth, -400.0, 300.0)


@dataclass(frozen=True, eq=False)
class Motion:
    """Joint rotations over F frames for a skeleton of n joints (immutable).

    Attributes:
        rotations: (F, n, 4) float64, read-only: local joint rotations, unit quaternions in
            scipy order (x, y, z, w). Normalised on construction.
        root_positions: (F, 3) float64, read-only: the root joint's world position per frame.
        frame_time: seconds per frame (> 0).
        joint_translations: joint index (non-root) -> (F, 3) local translation replacing that
            joint's skeleton offset (BVH position channels on non-root joints).
        layout: the BVH channel layout the motion came with (or should be saved with); None for
            the default (see ``ChannelLayout.default``).
        precision: for a motion read from a BVH file, the digits its numbers were printed with
            (``PrintedPrecision``, one entry per channel of ``layout``); None for one made in
            memory. ``fabrik.mocap.prepare_take`` judges fixed bones by it.
    """

    rotations: np.ndarray
    root_positions: np.ndarray
    frame_time: float = 1.0 / 30.0
    joint_translations: Mapping[int, np.ndarray] = field(default_factory=dict)
    layout: ChannelLayout | None = None
    precision: PrintedPrecision | None = None

    def __post_init__(self):
        # this copy becomes the field (read-only at the end): a long take's rotations are hundreds
        # of MB, so no second copy, and the norms go a block of frames at a time rather than
        # through temporaries the size of the whole array (the same values either way)
        rot = np.array(self.rotations, dtype=np.float64, copy=True, order="C")
        if rot.ndim != 3 or rot.shape[2] != 4 or rot.shape[0] < 1:
            raise ValueError(f"rotations must have shape (F, n, 4) with F >= 1, got {rot.shape}")
        if not np.isfinite(rot).all():
            raise ValueError("rotations contain a non-finite value (NaN or inf)")
        for start in range(0, rot.shape[0], 4096):
            block = rot[start:start + 4096]
            norms = np.linalg.norm(block, axis=2, keepdims=True)
            if (norms < 1e-12).any():
                f, j = np.argwhere(norms[..., 0] < 1e-12)[0]
                raise ValueError(f"rotations[{start + f}, {j}] is a zero quaternion")
            block /= norms
        F = rot.shape[0]
        root = np.asarray(self.root_positions, dtype=np.float64)
        if root.shape != (F, 3):
            raise ValueError(f"root_positions must have shape ({F}, 3) to match rotations, got {root.shape}")
        if not np.isfinite(root).all():
            raise ValueError("root_positions contain a non-finite value (NaN or inf)")
        try:
            ft = float(self.frame_time)
        except (TypeError, ValueError):
            raise ValueError(f"frame_time must be a number, got {self.frame_time!r}") from None
        if not np.isfinite(ft) or ft <= 0:
            raise ValueError(f"frame_time must be finite and > 0, got {self.frame_time!r}")
        n = rot.shape[1]
        trans = {}
        for k, v in dict(self.joint_translations).items():
            k = int(k)
            if not 0 < k < n:
                raise ValueError(f"joint_translations key {k} must be a non-root joint index in 1..{n - 1}")
            v = np.asarray(v, dtype=np.float64)
            if v.shape != (F, 3) or not np.isfinite(v).all():
                raise ValueError(f"joint_translations[{k}] must be finite with shape ({F}, 3), got {v.shape}")
            trans[k] = frozen(v)
        if self.layout is not None:
            if not isinstance(self.layout, ChannelLayout):
                raise ValueError(f"layout must be a ChannelLayout or None, got {type(self.layout).__name__}")
            if len(self.layout.channels) != n:
                raise ValueError(f"layout has {len(self.layout.channels)} joints, rotations have {n}")
        if self.precision is not None:
            if not isinstance(self.precision, PrintedPrecision):
                raise ValueError(f"precision must be a PrintedPrecision or None, got {type(self.precision).__name__}")
            if self.layout is None or self.precision.places.shape[0] != self.layout.n_channels:
                raise ValueError("precision needs the layout whose channels it describes "
                                 f"({self.precision.places.shape[0]} channels)")
        rot.setflags(write=False)
        object.__setattr__(self, "rotations", rot)
        object.__setattr__(self, "root_positions", frozen(root))
        object.__setattr__(self, "frame_time", ft)
        object.__setattr__(self, "joint_translations", MappingProxyType(trans))

    # --- construction ---------------------------------------------------------------------
    @classmethod
    def rest(cls, skeleton: Skeleton, n_frames: int = 1, frame_time: float = 1.0 / 30.0) -> "Motion":
        """``n_frames`` frames of the rest pose (identity rotations, root at ``offsets[0]``)."""
        rot = np.zeros((n_frames, skeleton.n_joints, 4))
        rot[..., 3] = 1.0
        return cls(rot, np.repeat(skeleton.offsets[:1], n_frames, axis=0), frame_time)

    @classmethod
    def from_matrices(cls, matrices, root_positions, frame_time: float = 1.0 / 30.0, **kw) -> "Motion":
        """Build from local rotation matrices (F, n, 3, 3)."""
        m = np.asarray(matrices, dtype=np.float64)
        if m.ndim != 4 or m.shape[2:] != (3, 3):
            raise ValueError(f"matrices must have shape (F, n, 3, 3), got {m.shape}")
        q = Rotation.from_matrix(m.reshape(-1, 3, 3)).as_quat().reshape(m.shape[0], m.shape[1], 4)
        return cls(q, root_positions, frame_time, **kw)

    # --- queries --------------------------------------------------------------------------
    @property
    def n_frames(self) -> int:
        return self.rotations.shape[0]

    @property
    def n_joints(self) -> int:
        return self.rotations.shape[1]

    def _check(self, skeleton: Skeleton) -> None:
        if not isinstance(skeleton, Skeleton):
            raise ValueError(f"skeleton must be a fabrik.Skeleton, got {type(skeleton).__name__}")
        if skeleton.n_joints != self.n_joints:
            raise ValueError(f"motion has {self.n_joints} joints but the skeleton has {skeleton.n_joints}")

    def rotation_matrices(self) -> np.ndarray:
        """(F, n, 3, 3) local rotation matrices."""
        F, n = self.rotations.shape[:2]
        return Rotation.from_quat(self.rotations.reshape(-1, 4)).as_matrix().reshape(F, n, 3, 3)

    def local_translations(self, skeleton: Skeleton) -> np.ndarray:
        """(F, n, 3) each joint's translation in its parent's frame (root: world position)."""
        self._check(skeleton)
        t = np.broadcast_to(skeleton.offsets, (self.n_frames, self.n_joints, 3)).copy()
        t[:, 0] = self.root_positions
        for k, v in self.joint_translations.items():
            t[:, k] = v
        return t

    def world_transforms(self, skeleton: Skeleton) -> tuple[np.ndarray, np.ndarray]:
        """Forward kinematics: world positions (F, n, 3) and world rotation matrices (F, n, 3, 3)."""
        self._check(skeleton)
        local = self.rotation_matrices()
        trans = self.local_translations(skeleton)
        world_r = np.empty_like(local)
        world_p = np.empty_like(trans)
        world_r[:, 0] = local[:, 0]
        world_p[:, 0] = trans[:, 0]
        parents = skeleton.parents
        for i in range(1, self.n_joints):
            p = parents[i]
            world_r[:, i] = world_r[:, p] @ local[:, i]
            world_p[:, i] = world_p[:, p] + np.einsum("fij,fj->fi", world_r[:, p], trans[:, i])
        return world_p, world_r

    def world_positions(self, skeleton: Skeleton) -> np.ndarray:
        """(F, n, 3) joint world positions by forward kinematics, in the skeleton's units."""
        return self.world_transforms(skeleton)[0]

    def frames(self, start: int | None = None, stop: int | None = None, step: int | None = None) -> "Motion":
        """The motion restricted to ``range(F)[start:stop:step]`` (at least one frame)."""
        sl = slice(start, stop, step)
        idx = range(self.n_frames)[sl]
        if len(idx) == 0:
            raise ValueError(f"frame range {start}:{stop} selects no frames of {self.n_frames}")
        return replace(self, rotations=self.rotations[sl], root_positions=self.root_positions[sl],
                       frame_time=self.frame_time * (step or 1),
                       joint_translations={k: v[sl] for k, v in self.joint_translations.items()})

    def __repr__(self) -> str:
        return f"Motion(n_frames={self.n_frames}, n_joints={self.n_joints}, frame_time={self.frame_time:.6g})"


# --- positions -> rotations -----------------------------------------------------------------

def _effective_children(skeleton: Skeleton, zero_tol: float):
    """For each joint, the descendants that fix its orientation: its children at a distance, or,
    when it has none, the nearest descendants at a distance, looking through zero-length bones.

    Returns (starts (n+1,), paths flat int64 array, path_starts (m+1,), targets (m,)): joint j's
    effective children are entries ``starts[j]:starts[j+1]``; entry k's path (child first,
    target last) is ``paths[path_starts[k]:path_starts[k+1]]``.
    """
    n = skeleton.n_joints
    children = [[] for _ in range(n)]
    for i in range(1, n):
        children[int(skeleton.parents[i])].append(i)
    lengths = np.linalg.norm(skeleton.offsets, axis=1)
    starts, paths, path_starts, targets = [0], [], [0], []
    for j in range(n):
        direct = [c for c in children[j] if lengths[c] > zero_tol]
        # a joint with bones of its own is turned by them alone: its zero-length children have
        # rotations of their own, which then take what hangs from them (looking through them as
        # well would bend the joint's own bones off their solved places)
        stack = [[c] for c in reversed(direct or children[j])]
        while stack:
            path = stack.pop()
            last = path[-1]
            if lengths[last] > zero_tol:
                paths.extend(path)
                path_starts.append(len(paths))
                targets.append(last)
            else:
                for c in reversed(children[last]):
                    stack.append(path + [c])
        starts.append(len(targets))
    return (np.array(starts, np.int64), np.array(paths, np.int64), np.array(path_starts, np.int64),
            np.array(targets, np.int64))


@njit(cache=True, error_model="numpy")
def _swing(a, b):
    """The smallest rotation (3, 3) turning direction ``a`` onto ``b``; identity if either is ~0."""
    out = np.eye(3)
    na = np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    nb = np.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2])
    if na >= 1e-300 and nb >= 1e-300:
        rotation_between(out, a[0] / na, a[1] / na, a[2] / na, b[0] / nb, b[1] / nb, b[2] / nb)
    return out


#: Children (nearly) on one line fix a joint's turn about that line only through the parts of
#: them off it; those parts are used when they exceed this fraction of the children's lengths
#: (products of the two, summed), rounding being far below.
OFF_LINE = 1e-10


@njit(cache=True, error_model="numpy")
def _twist_to_fit(s, a, d, m, ib):
    """The turn (3, 3) about the solved line ``d[ib]`` that, after the swing ``s``, best maps
    the first ``m`` rest child vectors ``a`` onto the solved ones ``d`` (children nearly on one
    line: the least-squares fit of their small parts off the line); identity when those parts are
    rounding."""
    out = np.eye(3)
    nu = np.sqrt(d[ib, 0] ** 2 + d[ib, 1] ** 2 + d[ib, 2] ** 2)
    if nu < 1e-300:
        return out
    u = d[ib] / nu
    sin_sum = 0.0
    cos_sum = 0.0
    size = 0.0
    for k in range(m):
        sa = s @ a[k]
        pa = sa - u * (u[0] * sa[0] + u[1] * sa[1] + u[2] * sa[2])
        pd = d[k] - u * (u[0] * d[k, 0] + u[1] * d[k, 1] + u[2] * d[k, 2])
        cos_sum += pa[0] * pd[0] + pa[1] * pd[1] + pa[2] * pd[2]
        sin_sum += (u[0] * (pa[1] * pd[2] - pa[2] * pd[1]) + u[1] * (pa[2] * pd[0] - pa[0] * pd[2])
                    + u[2] * (pa[0] * pd[1] - pa[1] * pd[0]))
        size += np.sqrt(sa[0] ** 2 + sa[1] ** 2 + sa[2] ** 2) * np.sqrt(d[k, 0] ** 2 + d[k, 1] ** 2 + d[k, 2] ** 2)
    if np.sqrt(sin_sum * sin_sum + cos_sum * cos_sum) <= OFF_LINE * OFF_LINE * size:
        return out
    axis_angle_matrix(out, u[0], u[1], u[2], np.arctan2(sin_sum, cos_sum))
    return out


@njit(cache=True, error_model="numpy")
def _orthonormalise(m):
    """The rotation nearest a nearly orthonormal (3, 3) matrix (two Newton steps of the polar
    decomposition), so that rounding does not accumulate frame after frame."""
    for _ in range(2):
        m = 1.5 * m - 0.5 * (m @ (m.T @ m))
    return m


@njit(cache=True, error_model="numpy")
def _solve_local_rotations(parents, offsets, positions, reference, propagate, starts, paths, path_starts,
                           targets):
    """Local rotation matrices (F, n, 3, 3) reproducing ``positions`` (F, n, 3).

    ``reference`` (R, n, 3, 3) with R == 1 or R == F gives the twist to keep; with ``propagate``
    frame f > 0 uses frame f - 1's answer as its reference instead.
    """
    F = positions.shape[0]
    n = positions.shape[1]
    out = np.empty((F, n, 3, 3))
    world = np.empty((n, 3, 3))
    at = np.empty((n, 3))  # where the rotations found so far put each joint
    a = np.empty((n, 3))
    d = np.empty((n, 3))
    for f in range(F):
        if propagate and f > 0:
            ref = out[f - 1]
        elif reference.shape[0] == 1:
            ref = reference[0]
        else:
            ref = reference[f]
        for j in range(n):
            p = parents[j]
            if p >= 0:
                wp_ref = world[p] @ ref[j]
                at[j] = at[p] + world[p] @ offsets[j]
            else:
                wp_ref = ref[j].copy()
                at[j] = positions[f, j]
            m = starts[j + 1] - starts[j]
            if m == 0:
                out[f, j] = _orthonormalise(ref[j].copy())
                world[j] = wp_ref
                continue
            best = -1.0
            ib = 0
            for k in range(m):
                e = starts[j] + k
                s0 = path_starts[e]
                s1 = path_starts[e + 1]
                v = offsets[paths[s1 - 1]].copy()
                for q in range(s1 - 2, s0 - 1, -1):
                    v = offsets[paths[q]] + ref[paths[q]] @ v
                a[k] = wp_ref @ v
                t = targets[e]
                # aimed from where the joint is, not where it was solved: when a parent cannot
                # hold its solved pose (children it turns together, bent apart), the miss shrinks
                # down the chain instead of carrying on to the ends
                for c in range(3):
                    d[k, c] = positions[f, t, c] - at[j, c]
                na = np.sqrt(a[k, 0] ** 2 + a[k, 1] ** 2 + a[k, 2] ** 2)
                nd = np.sqrt(d[k, 0] ** 2 + d[k, 1] ** 2 + d[k, 2] ** 2)
                if na * nd > best:
                    best = na * nd
                    ib = k
            s = np.eye(3)
            done = False
            if m >= 2:
                b = np.zeros((3, 3))
                for k in range(m):
                    for r in range(3):
                        for c in range(3):
                            b[r, c] += d[k, r] * a[k, c]
                u, sv, vt = np.linalg.svd(b)
                if sv[1] > 1e-9 * sv[0]:
                    det = np.linalg.det(u @ vt)
                    dm = np.eye(3)
                    if det < 0:
                        dm[2, 2] = -1.0
                    s = u @ dm @ vt
                    done = True
            if not done:
                s = _swing(a[ib], d[ib])
                if m >= 2:
                    s = _twist_to_fit(s, a, d, m, ib) @ s
            wj = s @ wp_ref
            if p >= 0:
                out[f, j] = _orthonormalise(world[p].T @ wj)
                world[j] = world[p] @ out[f, j]
            else:
                out[f, j] = _orthonormalise(wj)
                world[j] = out[f, j]
    return out


def rotations_from_positions(skeleton: Skeleton, positions, reference_rotations=None, *, propagate: bool = True,
                             frame_time: float = 1.0 / 30.0, layout: ChannelLayout | None = None) -> Motion:
    """Joint rotations whose forward kinematics reproduces the given joint positions.

    For each joint (root first) the rotation is the one that best maps its rest child bones onto
    the solved child bones: with one child, the smallest swing turning the bone's reference
    direction onto the solved direction (the twist about the bone is kept from the reference);
    with several (non-collinear) children, the least-squares rotation (Kabsch / Wahba, unit
    weights, i.e. it minimises the summed squared child position error). Zero-length bones are
    looked through: a joint whose only children sit on it (a zero OFFSET, common in CMU files)
    is oriented by their own children, and the coincident children then only absorb what is
    left; a joint with children at a distance as well is oriented by those alone. Leaves and end
    sites keep their reference rotation.

    Args:
        skeleton: the skeleton (n joints) whose offsets define the rest bones.
        positions: (F, n, 3) or (n, 3) world joint positions in the skeleton's units.
        reference_rotations: the twist source: None for the rest pose (identity local
            rotations); (n, 4) quaternions (x, y, z, w) for one reference pose; (F, n, 4) for one
            per frame; or a ``Motion``.
        propagate: when True (default), frame f > 0 uses frame f - 1's answer as reference, so
            twists follow the motion smoothly (the reference then only seeds frame 0).
        frame_time: seconds per frame of the result (ignored when ``reference_rotations`` is a
            Motion, whose frame time and layout are used).
        layout: channel layout to attach to the result (for saving as BVH).

    Returns:
        A ``Motion`` with ``root_positions = positions[:, 0]`` and no per-joint translations
        (joints sit at their skeleton offsets). Its ``world_positions(skeleton)`` equals
        ``positions`` to rounding when every bone keeps its rest length and every multi-child
        joint's children are a rotated copy of the rest configuration; otherwise each joint's
        rotation is the best fit described above.
    """
    if not isinstance(skeleton, Skeleton):
        raise ValueError(f"skeleton must be a fabrik.Skeleton, got {type(skeleton).__name__}")
    n = skeleton.n_joints
    pos = np.array(positions, dtype=np.float64, order="C")
    if pos.ndim == 2:
        pos = pos[None]
    if pos.ndim != 3 or pos.shape[1:] != (n, 3) or pos.shape[0] < 1:
        raise ValueError(f"positions must have shape (F, {n}, 3) or ({n}, 3), got {np.shape(positions)}")
    if not np.isfinite(pos).all():
        raise ValueError("positions contain a non-finite value (NaN or inf)")
    F = pos.shape[0]
    if isinstance(reference_rotations, Motion):
        frame_time = reference_rotations.frame_time
        if layout is None:
            layout = reference_rotations.layout
        reference_rotations = reference_rotations.rotations
    if reference_rotations is None:
        ref = np.broadcast_to(np.eye(3), (1, n, 3, 3)).copy()
    else:
        q = np.asarray(reference_rotations, dtype=np.float64)
        if q.ndim == 2:
            q = q[None]
        if q.ndim != 3 or q.shape[1:] != (n, 4) or q.shape[0] not in (1, F):
            raise ValueError(f"reference_rotations must have shape ({n}, 4) or ({F}, {n}, 4), got {q.shape}")
        if not np.isfinite(q).all() or (np.linalg.norm(q, axis=2) < 1e-12).any():
            raise ValueError("reference_rotations must be finite non-zero quaternions")
        ref = Rotation.from_quat(q.reshape(-1, 4)).as_matrix().reshape(q.shape[0], n, 3, 3)
    scale = max(skeleton.height(), float(np.max(skeleton.bone_lengths)), 1e-300)
    eff = _effective_children(skeleton, ZERO_BONE * scale)
    local = _solve_local_rotations(np.ascontiguousarray(skeleton.parents), np.ascontiguousarray(skeleton.offsets),
                                   pos, np.ascontiguousarray(ref), bool(propagate), *eff)
    if layout is not None:
        layout.check_for(skeleton)
    return Motion.from_matrices(local, pos[:, 0], frame_time, layout=layout)


__all__ = ["Motion", "ChannelLayout", "PrintedPrecision", "rotations_from_positions", "CHANNEL_NAMES",
           "POSITION_CHANNELS", "ROTATION_CHANNELS"]
