"""Joint positions over time as a NumPy ``.npz`` archive: what pose estimators and retargeting
tools write, read into a skeleton and a motion whose rotations are fitted to the positions.

``load_positions(path) -> (Skeleton, Motion)`` and ``save_positions(path, skeleton, motion)``;
``skeleton_and_motion(positions, parents, names, frame_time, offsets=None)`` does the reading's
work on arrays already in memory. ``fabrik.load_motion`` and ``fabrik.save_motion`` choose these
for the suffix ``.npz`` (``fabrik.io.formats``).

The archive (``np.savez(path, positions=..., parents=..., names=..., fps=...)``):

* ``positions`` (F, n, 3), real numbers (float or int): every joint's world position in every
  frame, F >= 1, n >= 2, in the data's units (they stay the units of everything read from it);
* ``parents`` (n,) whole numbers: each joint's parent index, -1 for the one root. Joints in any
  order; when a parent comes after its child they are reordered: each joint as early as the
  file's order allows once its parent is placed (the file's order where it is topological);
* ``names`` (n,) strings, unique (``np.array(names, dtype=str)``; fabrik loads no pickled
  objects);
* ``fps`` (frames per second) or ``frame_time`` (seconds per frame), one number; both may be
  given when they agree (to 1e-3). Required: a take's rate decides its playback and the file
  gives no other way to know it. ``FRAME_TIME_RANGE`` (1e-6 to 1e6 seconds), as for BVH;
* ``offsets`` (n, 3), optional: the rest pose as ``Skeleton.offsets`` (each joint's rest offset
  from its parent; the root's: its rest position). ``save_positions`` writes it. Without it the
  rest pose is the first frame (offsets: the first frame's bone vectors);
* anything else (a ``units`` note, confidences) is ignored: units follow the data.

What is read: a skeleton with those names, parents and rest offsets, and a ``Motion`` whose
rotations are ``fabrik.rotations_from_positions`` of the positions (frame 0 from the rest pose,
each later frame from the one before, so that a bone's roll, which positions do not show,
carries over by the smallest turn). The motion's forward kinematics reproduces the positions to
within the data's precision, which is checked. Positions define a skeleton's motion only when
the distances a skeleton keeps stay fixed, to within the data's precision
(``distance_tolerance``): every bone's length (and its rest offset's, when given), and the
distances between a joint's children at a distance (one rotation turns them together). A bone
within that precision of zero length in every frame is a zero-length bone (offset 0; CMU's
pelvis and collar joints).

Malformed archives raise ``PositionsError`` (a ``ValueError``) naming the file and the problem:
not an archive, a key missing, shapes, non-numbers, NaN or inf, parents that do not form one
tree, names repeated, a frame rate missing or outside the range, a bone changing length or a
joint's children moving apart beyond the data's precision (naming the joint, the range and the
threshold).
"""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np

from fabrik._validation import MAX_COORDINATE
from fabrik.io.rounding import FLOAT32_ROUNDING, PRINT_MARGIN
from fabrik.model.motion import Motion, rotations_from_positions
from fabrik.model.skeleton import Skeleton

#: The keys ``load_positions`` reads; the others are ignored.
KEYS = ("positions", "parents", "names", "fps", "frame_time", "offsets")
#: ``fps`` and ``frame_time`` given together must agree to this fraction.
RATE_AGREEMENT = 1e-3


class PositionsError(ValueError):
    """A joint-positions archive that cannot be read as a skeleton's motion; the message names the
    file and the problem."""

    def __init__(self, message: str, path: str | None = None):
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


def distance_tolerance(dtype, extent: float) -> tuple[float, float]:
    """How much rounding the positions carry, and how far a distance between two joints may spread
    over the frames and still be one fixed distance.

    A coordinate is within ``c`` of its value: half a unit in the last place of ``dtype`` at the
    take's largest coordinate ``extent``, and no finer than float32's (``FLOAT32_ROUNDING`` x
    extent: the tools that write positions compute in single precision); 0.5 for whole numbers.
    The distance between two such points is then within ``e = 2 sqrt(3) c``, and its values over
    the frames may differ by ``2e``; ``PRINT_MARGIN`` (4) times that is allowed, as
    ``fabrik.mocap.prepare_take`` allows for BVH position channels.

    Returns ``(c, PRINT_MARGIN * 2 * e)``."""
    dtype = np.dtype(dtype)
    relative = float(np.finfo(dtype).eps) / 2.0 if dtype.kind == "f" else 0.0
    c = max(relative, FLOAT32_ROUNDING) * float(extent)
    if dtype.kind in "iu":
        c = max(c, 0.5)
    return c, PRINT_MARGIN * 2.0 * 2.0 * np.sqrt(3.0) * c


def _kind(dtype) -> str:
    return {"c": "complex numbers", "b": "booleans", "O": "Python objects", "U": "text", "S": "bytes",
            "V": "records", "M": "dates", "m": "time spans"}.get(np.dtype(dtype).kind, str(dtype))


def _numbers(value, name: str, path) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        raise PositionsError(f"{name} must hold real numbers (float or int), got {_kind(arr.dtype)}", path)
    return arr


def _frame_time(fps, frame_time, path) -> float:
    """Seconds per frame from ``fps`` and/or ``frame_time`` (None where absent)."""
    from fabrik.io.bvh import FRAME_TIME_RANGE

    def scalar(value, name):
        arr = _numbers(value, name, path)
        if arr.size != 1:
            raise PositionsError(f"{name} must be one number, got an array of shape {arr.shape}", path)
        x = float(arr.reshape(-1)[0])
        if not np.isfinite(x) or x <= 0:
            raise PositionsError(f"{name} must be a finite number > 0, got {x!r}", path)
        return x

    if fps is None and frame_time is None:
        raise PositionsError("no frame rate: add fps (frames per second) or frame_time (seconds per frame), "
                             "e.g. np.savez(path, ..., fps=30)", path)
    seconds = None if frame_time is None else scalar(frame_time, "frame_time")
    if fps is not None:
        rate = scalar(fps, "fps")
        if seconds is not None and abs(seconds * rate - 1.0) > RATE_AGREEMENT:
            raise PositionsError(f"fps {rate:g} and frame_time {seconds:g} disagree (1 / fps is {1.0 / rate:g} s); "
                                 "give one of them", path)
        if seconds is None:
            seconds = 1.0 / rate
    low, high = FRAME_TIME_RANGE
    if not low <= seconds <= high:
        raise PositionsError(f"the frame time must be from {low:g} to {high:g} seconds (fps {1 / high:g} to "
                             f"{1 / low:g}), got {seconds:g} s", path)
    return seconds


def _names(value, n: int, path) -> tuple[str, ...]:
    arr = np.asarray(value)
    if arr.shape != (n,):
        raise PositionsError(f"names must have shape ({n},), one per joint of positions, got {arr.shape}", path)
    if arr.dtype.kind == "S":
        try:
            return tuple(b.decode("utf-8") for b in arr.tolist())
        except UnicodeDecodeError as exc:
            raise PositionsError(f"names: bytes that are not UTF-8 ({exc})", path) from None
    if arr.dtype.kind != "U":
        raise PositionsError(f"names must be strings (np.array(names, dtype=str)), got {_kind(arr.dtype)}", path)
    names = tuple(str(s) for s in arr.tolist())
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            raise PositionsError(f"names[{first[name]}] and names[{i}] are both {name!r}; joint names must be unique",
                                 path)
        first[name] = i
    return names


def _parents(value, names: tuple[str, ...], path) -> np.ndarray:
    """The parent indices, checked to form one tree rooted at the one -1."""
    n = len(names)
    arr = np.asarray(value)
    if arr.shape != (n,):
        raise PositionsError(f"parents must have shape ({n},), one per joint of positions, got {arr.shape}", path)
    arr = _numbers(arr, "parents", path)
    if arr.dtype.kind == "f" and not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
        raise PositionsError("parents must be whole numbers (joint indices, -1 for the root)", path)
    parents = arr.astype(np.int64)
    bad = np.flatnonzero((parents < -1) | (parents >= n))
    if bad.size:
        i = int(bad[0])
        raise PositionsError(f"parents[{i}] ({names[i]!r}) is {int(parents[i])}: a parent is a joint index from 0 to "
                             f"{n - 1}, or -1 for the root", path)
    roots = np.flatnonzero(parents == -1)
    if roots.size != 1:
        listed = ", ".join(f"{int(i)} ({names[i]!r})" for i in roots[:5])
        raise PositionsError(f"parents must name one root (-1); it names {roots.size}"
                             + (f": joints {listed}" if roots.size else ""), path)
    depth_known = np.zeros(n, dtype=bool)
    depth_known[roots[0]] = True
    for start in range(n):  # every joint must reach the root: no cycle
        seen, j = [], start
        while not depth_known[j]:
            if j in seen:
                loop = seen[seen.index(j):] + [j]
                raise PositionsError("parents is not a tree: the joints "
                                     + " -> ".join(f"{k} ({names[k]!r})" for k in loop)
                                     + " are each other's ancestors", path)
            seen.append(j)
            j = int(parents[j])
        depth_known[seen] = True
    return parents


def _topological_order(parents: np.ndarray) -> np.ndarray:
    """The joints in the order nearest the given one where every parent comes before its children:
    the root, then repeatedly the lowest index whose parent is placed (the identity where the
    given order already is such an order with the root first)."""
    n = parents.shape[0]
    children: list[list[int]] = [[] for _ in range(n)]
    for j in range(n):
        if parents[j] >= 0:
            children[int(parents[j])].append(j)
    ready = [int(np.flatnonzero(parents == -1)[0])]
    order = []
    while ready:
        j = heapq.heappop(ready)
        order.append(j)
        for c in children[j]:
            heapq.heappush(ready, c)
    return np.array(order, dtype=np.int64)


def skeleton_and_motion(positions, parents, names, frame_time: float, offsets=None, *,
                        path: str | None = None) -> tuple[Skeleton, Motion]:
    """A skeleton and a motion from joint positions over time (module docstring).

    Args:
        positions: (F, n, 3) world joint positions, real numbers; their dtype sets the precision
            the distances are checked to (``distance_tolerance``).
        parents: (n,) parent indices, -1 for the root; any order (reordered as the module says).
        names: (n,) unique joint names.
        frame_time: seconds per frame.
        offsets: None (the rest pose is the first frame) or (n, 3) rest offsets from the parents.
        path: named in the errors.

    Returns:
        ``(skeleton, motion)``: joints in topological order, the motion's rotations fitted
        (``fabrik.rotations_from_positions``, frame 0 from the rest pose), its root positions the
        root's.

    Raises:
        PositionsError: what the module docstring lists.
    """
    raw = _numbers(positions, "positions", path)
    if raw.ndim != 3 or raw.shape[2] != 3 or raw.shape[0] < 1 or raw.shape[1] < 2:
        raise PositionsError(f"positions must have shape (F, n, 3) with F >= 1 frames and n >= 2 joints, got "
                             f"{raw.shape}", path)
    F, n = raw.shape[:2]
    pos = raw.astype(np.float64)
    bad = ~np.isfinite(pos)
    if bad.any():
        f, j, _ = np.argwhere(bad)[0]
        raise PositionsError(f"positions[{f}, {j}] is {pos[f, j].tolist()}: NaN or inf (a joint the tracker lost?); "
                             "every position must be a finite number", path)
    extent = float(np.abs(pos).max())
    if not extent < MAX_COORDINATE:
        raise PositionsError(f"positions reach {extent:g}; coordinates must stay below {MAX_COORDINATE:g}", path)
    names = _names(names, n, path)
    parents = _parents(parents, names, path)
    try:
        frame_time = float(frame_time)
    except (TypeError, ValueError):
        raise PositionsError(f"frame_time must be a number, got {frame_time!r}", path) from None
    frame_time = _frame_time(None, frame_time, path)
    rest = None
    if offsets is not None:
        rest = _numbers(offsets, "offsets", path).astype(np.float64)
        if rest.shape != (n, 3):
            raise PositionsError(f"offsets must have shape ({n}, 3), one per joint of positions, got {rest.shape}",
                                 path)
        if not np.isfinite(rest).all():
            j = int(np.argwhere(~np.isfinite(rest))[0, 0])
            raise PositionsError(f"offsets[{j}] ({names[j]!r}) is not finite", path)
    order = _topological_order(parents)
    if not np.array_equal(order, np.arange(n)):
        where = np.empty(n, dtype=np.int64)
        where[order] = np.arange(n)
        pos = pos[:, order]
        names = tuple(names[j] for j in order)
        parents = np.where(parents[order] >= 0, where[np.maximum(parents[order], 0)], -1)
        rest = None if rest is None else rest[order]
    _, allowed = distance_tolerance(raw.dtype, extent)
    rest, top = _rest_offsets(pos, parents, names, rest, allowed, path)
    try:
        skeleton = Skeleton(names, parents, rest)
    except ValueError as exc:
        raise PositionsError(f"the skeleton: {exc}", path) from None
    _check_children(pos, skeleton, allowed, path)
    motion = _fit(skeleton, pos, top, frame_time)
    miss = np.linalg.norm(motion.world_positions(skeleton) - pos, axis=2)
    if miss.max() > allowed:
        f, j = np.unravel_index(int(np.argmax(miss)), miss.shape)
        raise PositionsError(f"joint rotations cannot hold the positions: the fitted motion puts {names[j]!r} "
                             f"{miss[f, j]:.3g} from its position in frame {f}, more than the {allowed:.3g} the data's "
                             "precision allows", path)
    return skeleton, motion


def _fit(skeleton: Skeleton, pos: np.ndarray, top: int, frame_time: float) -> Motion:
    """The motion of ``skeleton`` through ``pos``: rotations fitted to the body (joint ``top`` and
    every joint below it, ``top`` 0 for the whole skeleton), and for the joints above it (a chain of
    reference nodes, ``top`` > 0) identity rotations and their recorded translations."""
    if top == 0:
        return rotations_from_positions(skeleton, pos, None, propagate=True, frame_time=frame_time)
    # joints 0..top are the chain and top..n-1 the body (``_reference_chain``), in that order
    body = Skeleton(skeleton.names[top:], np.concatenate([[-1], skeleton.parents[top + 1:] - top]),
                    np.concatenate([pos[0, top:top + 1], skeleton.offsets[top + 1:]]))
    part = rotations_from_positions(body, pos[:, top:], None, propagate=True, frame_time=frame_time)
    rotations = np.zeros((pos.shape[0], skeleton.n_joints, 4))
    rotations[..., 3] = 1.0
    rotations[:, top:] = part.rotations
    translations = {j: pos[:, j] - pos[:, j - 1] for j in range(1, top + 1)}
    return Motion(rotations, pos[:, 0], frame_time, translations)


def _reference_chain(parents: np.ndarray) -> list[int]:
    """The joints from the root down while each has exactly one child: the reference nodes above a
    body (a MotionBuilder ``reference``, a game rig's ``root`` on the ground), the first joint
    with several children or none last."""
    counts = np.bincount(parents[1:], minlength=parents.shape[0])
    chain = [0]
    while counts[chain[-1]] == 1:
        chain.append(int(np.flatnonzero(parents == chain[-1])[0]))
    return chain


def _rest_offsets(pos: np.ndarray, parents: np.ndarray, names, rest, allowed: float, path):
    """``(offsets, top)``: the rest offsets (``rest`` where given, else the first frame's bone vectors,
    zero where a bone stays within ``allowed / 2`` of zero length), and the body's top joint.

    A bone whose length spreads over the frames (or differs from its rest offset's) by more than
    ``allowed`` is refused, except on the chain of single children from the root
    (``_reference_chain``): those are reference nodes carrying the body in their translations, as
    ``fabrik.mocap.prepare_take`` reads them from BVH position channels, and the body's top is the
    deepest such joint (0 where no bone moves)."""
    n = pos.shape[1]
    vectors = pos[:, 1:] - pos[:, parents[1:]]
    lengths = np.linalg.norm(vectors, axis=2)  # (F, n - 1)
    low, high = lengths.min(axis=0), lengths.max(axis=0)
    reference = None if rest is None else np.linalg.norm(rest[1:], axis=1)
    spread = high - low if reference is None else np.maximum(high - reference, reference - low)
    moving = np.flatnonzero(spread > allowed) + 1
    carriers = [j for j in _reference_chain(parents) if (parents == j).any()]  # a body hangs below them
    inside = [int(j) for j in moving if j not in carriers]
    if inside:
        k = max(inside, key=lambda j: spread[j - 1]) - 1
        j = k + 1
        against = ("over the frames" if reference is None
                   else f"against its rest offset's {reference[k]:.6g} (offsets)")
        raise PositionsError(
            f"the bone from {names[parents[j]]!r} to {names[j]!r} changes length: {low[k]:.6g} to {high[k]:.6g} "
            f"(frames {int(np.argmin(lengths[:, k]))} and {int(np.argmax(lengths[:, k]))}) {against}, by more than "
            f"the {allowed:.3g} the data's precision allows; a skeleton keeps its bones' lengths, except above the "
            "whole body (reference nodes from the root down, one child each); positions straight from a pose "
            "estimator need a skeleton fitted to them first", path)
    top = int(moving.max()) if moving.size else 0
    if rest is not None:
        return rest, top
    offsets = np.empty((n, 3))
    offsets[0] = pos[0, 0]
    offsets[1:] = vectors[0]
    offsets[1:][high <= allowed / 2] = 0.0
    return offsets, top


def _check_children(pos: np.ndarray, skeleton: Skeleton, allowed: float, path) -> None:
    """PositionsError where two children at a distance of one joint move apart (their distance
    spreads over the frames, or differs from the rest pose's, by more than ``allowed``): one
    rotation turns a joint's children together."""
    lengths = skeleton.bone_lengths
    rest = skeleton.rest_positions()
    names = skeleton.names
    for j in range(skeleton.n_joints):
        kids = [c for c in skeleton.children(j) if lengths[c] > 0.0]
        for a in range(len(kids)):
            for b in range(a + 1, len(kids)):
                ka, kb = kids[a], kids[b]
                d = np.linalg.norm(pos[:, ka] - pos[:, kb], axis=1)
                at_rest = float(np.linalg.norm(rest[ka] - rest[kb]))
                spread = max(float(d.max()) - at_rest, at_rest - float(d.min()))
                if spread > allowed:
                    raise PositionsError(
                        f"the children {names[ka]!r} and {names[kb]!r} of {names[j]!r} move apart: their distance is "
                        f"{d.min():.6g} to {d.max():.6g} over the frames ({at_rest:.6g} at rest), more than the "
                        f"{allowed:.3g} the data's precision allows; one joint rotation turns a joint's children "
                        f"together, so each of them needs a joint of its own at {names[j]!r}'s place (a zero-length "
                        "bone, as CMU's LHipJoint and RHipJoint under Hips)", path)


def _read_member(archive, key: str, path):
    try:
        return archive[key]
    except ValueError as exc:
        if "pickle" in str(exc).lower() or "object" in str(exc).lower():
            raise PositionsError(f"{key!r} holds Python objects, which fabrik does not load (they could run code): "
                                 f"store {'names as np.array(names, dtype=str)' if key == 'names' else 'numbers'}",
                                 path) from None
        raise PositionsError(f"cannot read {key!r}: {exc}", path) from None
    except Exception as exc:  # a damaged zip member: bad CRC, truncated data, a header numpy cannot take
        raise PositionsError(f"cannot read {key!r} ({type(exc).__name__}: {exc}); the archive is damaged", path) \
            from None


def load_positions(path) -> tuple[Skeleton, Motion]:
    """Read a joint-positions ``.npz`` archive (module docstring) as ``(skeleton, motion)``.

    Raises:
        PositionsError: a malformed archive (module docstring); OSError: a file that cannot be
        opened (missing, a folder, no permission).
    """
    path = Path(path)
    where = str(path)
    with path.open("rb") as stream:
        if not stream.read(1):
            raise PositionsError("the file is empty (a joint-positions .npz archive holds positions, parents, names "
                                 "and fps)", where)
        stream.seek(0)
        try:
            archive = np.load(stream, allow_pickle=False)
        except ValueError as exc:
            if "pickle" in str(exc).lower():
                raise PositionsError("not a NumPy .npz archive (np.savez writes one)", where) from None
            raise PositionsError(f"not a readable NumPy .npz archive: {exc}", where) from None
        except Exception as exc:  # a damaged zip directory, a truncated file
            raise PositionsError(f"not a readable NumPy .npz archive ({type(exc).__name__}: {exc})", where) from None
        if isinstance(archive, np.ndarray):
            raise PositionsError(f"holds one array (shape {archive.shape}: a .npy file), not an .npz archive of named "
                                 "arrays: save positions, parents, names and fps with np.savez", where)
        with archive:
            keys = set(archive.files)
            missing = [k for k in ("positions", "parents", "names") if k not in keys]
            if missing:
                held = ", ".join(sorted(keys)) or "nothing"
                raise PositionsError(f"missing {', '.join(repr(k) for k in missing)}: a joint-positions archive holds "
                                     "positions (F, n, 3), parents (n,), names (n,) and fps or frame_time; this one "
                                     f"holds {held}", where)
            got = {k: _read_member(archive, k, where) for k in KEYS if k in keys}
    frame_time = _frame_time(got.get("fps"), got.get("frame_time"), where)
    return skeleton_and_motion(got["positions"], got["parents"], got["names"], frame_time, got.get("offsets"),
                               path=where)


def save_positions(path, skeleton: Skeleton, motion: Motion, *, units: str | None = None) -> None:
    """Write ``motion`` on ``skeleton`` as a joint-positions ``.npz`` archive: ``positions`` (F, n, 3)
    float64 world positions (``motion.world_positions``), ``parents``, ``names``, ``offsets`` (the
    skeleton's rest pose), ``frame_time`` and, when given, ``units`` (a note; units follow the
    data). ``load_positions`` reads it back as the same skeleton and the same positions; the
    rotations it fits keep the bones' directions, not their roll, which positions do not hold.

    Raises:
        ValueError: a skeleton or motion of the wrong type or size, a frame time outside
        ``FRAME_TIME_RANGE``; FileNotFoundError: the folder does not exist.
    """
    from fabrik.io.bvh import FRAME_TIME_RANGE

    if not isinstance(skeleton, Skeleton):
        raise ValueError(f"skeleton must be a fabrik.Skeleton, got {type(skeleton).__name__}")
    if not isinstance(motion, Motion):
        raise ValueError(f"motion must be a fabrik Motion, got {type(motion).__name__}")
    if motion.n_joints != skeleton.n_joints:
        raise ValueError(f"motion has {motion.n_joints} joints but the skeleton has {skeleton.n_joints}")
    if not FRAME_TIME_RANGE[0] <= motion.frame_time <= FRAME_TIME_RANGE[1]:
        raise ValueError(f"the motion's frame_time {motion.frame_time:g} cannot be written: it must be from "
                         f"{FRAME_TIME_RANGE[0]:g} to {FRAME_TIME_RANGE[1]:g} seconds")
    if units is not None and not isinstance(units, str):
        raise ValueError(f"units must be a string (a note such as 'cm') or None, got {type(units).__name__}")
    names = np.array(skeleton.names, dtype=str)
    for name, kept in zip(skeleton.names, names.tolist()):
        if name != kept:  # NumPy strings drop trailing NUL characters
            raise ValueError(f"joint name {name!r} cannot be stored in an .npz string array (it ends with NUL)")
    folder = Path(path).parent
    if not folder.is_dir():
        kind = "is a file, not a folder" if folder.exists() else "does not exist"
        raise FileNotFoundError(f"save_positions: cannot write {str(path)!r}: the folder {str(folder)!r} {kind} "
                                "(make it first)")
    arrays = dict(positions=motion.world_positions(skeleton), parents=np.asarray(skeleton.parents, dtype=np.int64),
                  names=names, offsets=np.asarray(skeleton.offsets, dtype=np.float64),
                  frame_time=np.float64(motion.frame_time))
    if units is not None:
        arrays["units"] = np.str_(units)
    with open(path, "wb") as stream:  # a file object: np.savez adds no ".npz" to a name such as "walk.NPZ"
        np.savez(stream, **arrays)


__all__ = ["PositionsError", "load_positions", "save_positions", "skeleton_and_motion", "distance_tolerance", "KEYS"]
