"""Read and write Biovision Hierarchy (BVH) motion capture files.

``load_bvh(path) -> (Skeleton, Motion)`` and ``save_bvh(path, skeleton, motion)``.

What is read:

* The HIERARCHY: one ``ROOT``, nested ``JOINT`` blocks and ``End Site`` blocks, each with an
  ``OFFSET`` and (joints) a ``CHANNELS`` line. Joints are numbered depth first in file order,
  so the root is joint 0 and parents come before children. Every ``End Site`` becomes a joint
  of the skeleton named ``f"{parent}_End"`` (``_End2``, ``_End3``... when that name is taken,
  also when a joint of the file later turns out to have that name: the file's names win);
  ``motion.layout.end_sites`` records which joints they are, so saving writes them back as
  ``End Site`` blocks.
* Channels: any subset of ``Xposition Yposition Zposition Xrotation Yrotation Zrotation`` in any
  order, on any joint (6- or 3-channel roots, position channels on inner joints). Rotation
  channels are Euler angles in degrees, applied in the listed order as intrinsic rotations:
  ``CHANNELS 3 Zrotation Yrotation Xrotation`` means ``R = Rz(z) @ Ry(y) @ Rx(x)`` acting on
  column vectors, i.e. ``scipy.spatial.transform.Rotation.from_euler("ZYX", [z, y, x],
  degrees=True)``. Position channels replace the corresponding component of the joint's OFFSET
  (the usual reading; for the root they give its world position).
* A joint's world transform is ``parent_world @ translate(offset) @ rotate(channels)``.
* MOTION: ``Frames: N`` (N >= 1), ``Frame Time: T`` (seconds, ``FRAME_TIME_RANGE``: 1e-6 to 1e6)
  and N lines of numbers, one value per channel.
* The digits the numbers were printed with: per channel, the finest decimal place and the most
  significant digits of its values (and the same over the OFFSETs), as ``motion.precision``
  (``fabrik.model.motion.PrintedPrecision``): how much rounding the values can carry, by which
  ``fabrik.mocap.prepare_take`` tells fixed bones in position channels from moving ones.
* Text: UTF-8 (a byte-order mark is skipped); a file that is not valid UTF-8 is read as Latin-1,
  the single-byte code page older Windows tools write names in. Files are written as UTF-8.
  Lines end at ``\n``, ``\r\n`` or ``\r`` (a DOS Ctrl-Z after the last one is ignored); tokens
  are separated by spaces and tabs; numbers are plain ASCII decimals (``-1.5``, ``.5``,
  ``2e-05``), so ``1_000``, ``nan``, ``inf`` and other digits are refused, as are values of
  1e75 or more (their squares would overflow). ``HIERARCHY``, ``ROOT``, ``JOINT``, ``End
  Site`` (a name after it is ignored), ``OFFSET``, ``CHANNELS``, the channel names, ``MOTION``,
  ``Frames:`` and ``Frame Time:`` are matched in any case, with blank lines between them
  allowed. A joint name is the rest of its line up to a ``{``; a ``}`` in it is an error.

Anything else raises ``BVHError`` (a ``ValueError``) naming the line number and the problem:
truncated files, missing or extra braces, unknown channel names, wrong channel counts, frame
lines with the wrong number of values, non-numbers, a frame count that does not match.

What is written: the skeleton's hierarchy with its offsets, the motion's ``layout`` channels
(the input's layout for a loaded motion, else ``ChannelLayout.default``: root ``Xposition
Yposition Zposition Zrotation Yrotation Xrotation``, other joints ``Zrotation Yrotation
Xrotation``, leaves as End Sites), and angles with 9 decimals, so that reading the file back
gives the same joint positions to far better than 1e-6 of the skeleton's height.
"""

from __future__ import annotations

import io
import re
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from fabrik._validation import MAX_COORDINATE
from fabrik.io import _bvh_motion
from fabrik.io._bvh_common import BVHError, _number, _whole, printed_digits
from fabrik.io._bvh_motion import NO_DIGITS
from fabrik.model.motion import CHANNEL_NAMES, ChannelLayout, Motion, PrintedPrecision
from fabrik.model.skeleton import Skeleton

_FRAMES_RE = re.compile(r"^\s*Frames\s*:\s*(\S+)\s*$", re.IGNORECASE)
_FRAME_TIME_RE = re.compile(r"^\s*Frame\s+Time\s*:\s*(\S+)\s*$", re.IGNORECASE)
#: Token separators of the HIERARCHY: ASCII blanks only, so that a byte such as 0x85 (an ellipsis
#: in cp1252, read as Latin-1 NEL) stays part of the joint name it is in.
_BLANKS = re.compile(r"[ \t\x0b\x0c]+")
#: The hierarchy's keywords in upper case -> as this reader compares them ("joint", "End site"
#: and "end SITE" are read as other readers read them).
_KEYWORDS = {"OFFSET": "OFFSET", "CHANNELS": "CHANNELS", "JOINT": "JOINT", "END": "End", "ROOT": "ROOT"}
#: The Frame Time read and written, in seconds: a frame rate of a millionth to a million frames a
#: second, so that rates, durations and playback timers taken from it stay finite numbers.
FRAME_TIME_RANGE = (1e-6, 1e6)
#: Channel names in lower case -> their spelling in ``CHANNEL_NAMES``.
_CHANNELS_ANY_CASE = {c.lower(): c for c in CHANNEL_NAMES}


class _Tokens:
    """Whitespace tokens of the HIERARCHY part, each with its 1-based line number."""

    def __init__(self, lines: list[str], start: int, stop: int, path):
        self.items: list[tuple[str, int]] = []
        for ln in range(start, stop):
            for tok in _BLANKS.split(lines[ln].strip(" \t\x0b\x0c")):
                # split braces glued to words ("Hips{" or "}}") into their own tokens
                for part in re.split(r"([{}])", tok):
                    if part:
                        self.items.append((part, ln + 1))
        self.pos = 0
        self.path = path
        # where the HIERARCHY section stops: the MOTION line, or the end of the file
        self.ends_at_motion = stop < len(lines)
        self.last_line = stop + 1 if self.ends_at_motion else max(stop, 1)
        self.end_what = "MOTION" if self.ends_at_motion else "the end of the file (truncated?)"

    def peek(self) -> tuple[str, int] | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def next(self, expecting: str) -> tuple[str, int]:
        if self.pos >= len(self.items):
            raise BVHError(f"reached {self.end_what} while expecting {expecting}", self.last_line, self.path)
        item = self.items[self.pos]
        self.pos += 1
        return item

    def expect(self, word: str) -> int:
        tok, ln = self.next(repr(word))
        if tok != word:
            raise BVHError(f"expected {word!r}, got {tok!r}", ln, self.path)
        return ln

    def rest_of_line(self, line: int, expecting: str) -> str:
        """The tokens left on ``line`` (up to a '{'), joined by spaces: a joint name."""
        parts = []
        while self.pos < len(self.items) and self.items[self.pos][1] == line and self.items[self.pos][0] != "{":
            parts.append(self.items[self.pos][0])
            self.pos += 1
        if not parts:
            raise BVHError(f"missing {expecting}", line, self.path)
        if "}" in parts:
            raise BVHError(f"unexpected '}}' in the {expecting} ({' '.join(parts)!r})", line, self.path)
        return " ".join(parts)


@contextmanager
def _recursion_room(levels: int):
    """Let the recursive hierarchy reader and writer go ``levels`` blocks deep (a chain of a
    thousand joints is one block inside the other). Since Python 3.11 pure-Python calls do not
    use the C stack, so a higher limit is safe."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 4 * levels + 1000))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _parse_hierarchy(tokens: _Tokens):
    names: list[str] = []
    parents: list[int] = []
    offsets: list[tuple[float, float, float]] = []
    channels: list[tuple[str, ...]] = []
    end_sites: set[int] = set()
    lines: list[int] = []

    offset_digits = [NO_DIGITS, 0]  # the finest place and most significant digits of the OFFSET values
    index_of: dict[str, int] = {}  # names -> index, so that huge hierarchies read in linear time
    next_end: dict[str, int] = {}  # End Site name stem -> the next number to try
    path = tokens.path

    def end_name(base: str, avoid: str = "") -> str:
        """``base`` (``f"{parent}_End"``), else the first free ``base2``, ``base3``..."""
        if base not in index_of and base != avoid:
            return base
        k = next_end.get(base, 2)
        while f"{base}{k}" in index_of or f"{base}{k}" == avoid:
            k += 1
        next_end[base] = k + 1
        return f"{base}{k}"

    tok, ln = tokens.next("'ROOT'")
    if tok.upper() != "ROOT":
        raise BVHError(f"expected 'ROOT' after HIERARCHY, got {tok!r}", ln, path)

    def block(parent: int, kind: str, line: int):
        """Parse '{ ... }' for a joint (kind 'joint') or an end site (kind 'end')."""
        index = len(names)
        if kind == "end":
            name = end_name(f"{names[parent]}_End")
        else:
            name = tokens.rest_of_line(line, "joint name after ROOT/JOINT")
            taken = index_of.get(name)
            if taken is not None and taken in end_sites:
                # the file's own joint names win over the names this reader makes up for End Sites
                renamed = end_name(f"{names[parents[taken]]}_End", avoid=name)
                names[taken] = renamed
                del index_of[name]
                index_of[renamed] = taken
            if name in index_of:
                raise BVHError(f"joint name {name!r} is used twice (first at line {lines[index_of[name]]})",
                               line, path)
        index_of[name] = index
        names.append(name)
        parents.append(parent)
        offsets.append(None)
        channels.append(())
        lines.append(line)
        if kind == "end":
            end_sites.add(index)
        tok, ln = tokens.next(f"'{{' opening {name!r}")
        if tok != "{":
            raise BVHError(f"expected '{{' after {'End Site' if kind == 'end' else name!r}, got {tok!r}", ln, path)
        open_line = ln
        seen_channels = False
        while True:
            item = tokens.peek()
            if item is None:
                raise BVHError(f"missing '}}' closing {name!r} (opened at line {open_line}) before {tokens.end_what}",
                               tokens.last_line, path)
            tok, ln = tokens.next("a block entry")
            if tok == "}":
                break
            tok = _KEYWORDS.get(tok.upper(), tok)  # keywords in any case, as other readers take them
            if tok == "OFFSET":
                if offsets[index] is not None:
                    raise BVHError(f"second OFFSET for {name!r}", ln, path)
                vals = []
                for c in range(3):
                    t, l2 = tokens.next(f"OFFSET value {c + 1} of 3")
                    if l2 != ln:
                        raise BVHError(f"OFFSET of {name!r} needs 3 numbers on its line, got {c}", ln, path)
                    vals.append(_number(t, ln, f"OFFSET value {c + 1} of {name!r}", path))
                    if not abs(vals[-1]) < MAX_COORDINATE:
                        raise BVHError(f"OFFSET value {c + 1} of {name!r} is {t}; coordinates must stay below "
                                       f"{MAX_COORDINATE:g}", ln, path)
                    printed = printed_digits(t)
                    if printed is not None:
                        offset_digits[0] = max(offset_digits[0], printed[0])
                        offset_digits[1] = max(offset_digits[1], printed[1])
                offsets[index] = tuple(vals)
            elif tok == "CHANNELS":
                if kind == "end":
                    raise BVHError("an End Site cannot have CHANNELS", ln, path)
                if seen_channels:
                    raise BVHError(f"second CHANNELS line for {name!r}", ln, path)
                seen_channels = True
                t, _ = tokens.next("the channel count")
                count = _whole(t, ln, f"CHANNELS of {name!r}", path, "a channel count")
                if not 0 <= count <= 6:
                    raise BVHError(f"CHANNELS of {name!r}: count must be 0..6, got {count}", ln, path)
                chans = []
                for c in range(count):
                    t, l2 = tokens.next(f"channel name {c + 1} of {count}")
                    t = _CHANNELS_ANY_CASE.get(t.lower(), t)
                    if t not in CHANNEL_NAMES:
                        if t in ("JOINT", "End", "}", "OFFSET", "CHANNELS", "{") or l2 != ln:
                            raise BVHError(f"CHANNELS of {name!r} declares {count} channels but lists {c}", ln, path)
                        raise BVHError(f"unknown channel name {t!r} (known: {', '.join(CHANNEL_NAMES)})", l2, path)
                    if t in chans:
                        raise BVHError(f"channel {t!r} listed twice for {name!r}", l2, path)
                    chans.append(t)
                nxt = tokens.peek()
                if nxt is not None and nxt[1] == ln and nxt[0].lower() in _CHANNELS_ANY_CASE:
                    raise BVHError(f"CHANNELS of {name!r} declares {count} channels but lists more", ln, path)
                channels[index] = tuple(chans)
            elif tok == "JOINT":
                if kind == "end":
                    raise BVHError("an End Site cannot have child joints", ln, path)
                block(index, "joint", ln)
            elif tok == "End":
                if kind == "end":
                    raise BVHError("an End Site cannot contain another End Site", ln, path)
                t, l2 = tokens.next("'Site'")
                if t.upper() != "SITE":
                    raise BVHError(f"expected 'End Site', got 'End {t}'", l2, path)
                nxt = tokens.peek()
                if nxt is not None and nxt[1] == l2 and nxt[0] != "{":
                    tokens.rest_of_line(l2, "End Site name")  # a name some exporters add; End Sites get ours
                block(index, "end", ln)
            elif tok == "ROOT":
                raise BVHError("a second ROOT inside a joint (missing '}'?)", ln, path)
            else:
                raise BVHError(f"unexpected {tok!r} in {name!r} (expected OFFSET, CHANNELS, JOINT, End Site or '}}')",
                               ln, path)
        if offsets[index] is None:
            raise BVHError(f"{name!r} has no OFFSET", line, path)

    block(-1, "joint", ln)
    extra = tokens.peek()
    if extra is not None:
        if extra[0].upper() == "ROOT":
            raise BVHError("files with more than one ROOT are not supported", extra[1], path)
        raise BVHError(f"unexpected {extra[0]!r} after the root's closing '}}' (an extra '}}'?)", extra[1], path)
    if len(names) < 2:
        raise BVHError("the hierarchy needs at least 2 joints (a root and a child or End Site)", lines[0], path)
    return names, parents, offsets, channels, end_sites, tuple(offset_digits)


def _channel_columns(layout: ChannelLayout) -> list[int]:
    cols, c = [], 0
    for chans in layout.channels:
        cols.append(c)
        c += len(chans)
    return cols


def load_bvh(path) -> tuple[Skeleton, Motion]:
    """Read a BVH file.

    The file is streamed: its frame lines are read in blocks by a compiled scanner, so a long
    take costs little more memory than its channel values (F x C floats) and rotations
    (F x n quaternions); ``benchmarks/bvh_load.py`` measures the speed and the peak.

    Args:
        path: file path (str or Path).

    Returns:
        ``(skeleton, motion)``: the skeleton has one joint per ROOT/JOINT/End Site (End Sites named
        ``f"{parent}_End"``), offsets in the file's units; the motion has the per-frame local
        rotations, the root's world positions, ``frame_time`` from the file, translations of
        non-root joints with position channels, and the file's ``ChannelLayout``.

    Raises:
        BVHError: malformed file (message names the line and the problem).
        FileNotFoundError: no such file.
    """
    path = Path(path)
    with path.open("rb") as stream:
        return _read(stream, str(path), None)


def loads_bvh(text: str) -> tuple[Skeleton, Motion]:
    """Parse BVH text (as ``load_bvh``, for a string)."""
    # the same reader over the text's UTF-8 bytes, decoded back exactly (lone surrogates too)
    return _read(io.BytesIO(text.encode("utf-8", "surrogatepass")), None, ("utf-8", "surrogatepass"))


def _read(stream, path, encoding) -> tuple[Skeleton, Motion]:
    """``(skeleton, motion)`` from a seekable binary ``stream``; ``encoding`` as
    ``_bvh_motion.LineDecoder`` takes it (None: UTF-8, or Latin-1 for a file that is not)."""
    decode = _bvh_motion.LineDecoder(stream, encoding)
    lines, data_start = _bvh_motion.read_head(stream, decode)
    skeleton, layout, n_frames, frame_time, offset_digits = _parse_head(lines, path)
    values, places, digits = _bvh_motion.read_frames(stream, data_start, len(lines) + 1, n_frames,
                                                     layout.n_channels, decode, path)
    rotations, root, translations = _bvh_motion.motion_arrays(layout, skeleton.offsets, values)
    del values  # gone before Motion copies the rotations: the peak memory of a long take
    precision = _precision(layout, places, digits, offset_digits)
    return skeleton, Motion(rotations, root, frame_time, translations, layout, precision)


def _precision(layout: ChannelLayout, places: np.ndarray, digits: np.ndarray, offset_digits) -> PrintedPrecision:
    """The ``PrintedPrecision`` of a file from its columns' and OFFSETs' printed digits (``NO_DIGITS``
    and 0 where no number had a non-zero digit)."""
    position = np.array([c.endswith("position") for chans in layout.channels for c in chans], dtype=bool)
    shown = digits > 0
    pool = position & shown
    if pool.any():
        coordinate = int(places[pool].max()), int(digits[pool].max())
    else:
        coordinate = (offset_digits[0], offset_digits[1]) if offset_digits[1] > 0 else (0, 0)
    offsets = (offset_digits[0], offset_digits[1]) if offset_digits[1] > 0 else coordinate
    return PrintedPrecision(np.where(shown, places, coordinate[0]), np.where(shown, digits, coordinate[1]),
                            *coordinate, *offsets)


def _parse_head(lines: list[str], path) -> tuple[Skeleton, ChannelLayout, int, float, tuple[int, int]]:
    """The hierarchy and the MOTION header from the file's first lines (``read_head``'s, which
    end with the ``Frame Time:`` line unless the file ends first).

    Returns ``(skeleton, layout, n_frames, frame_time, offset_digits)``, the last the finest
    place and most significant digits of the OFFSET values (``NO_DIGITS`` and 0 when none has a
    non-zero digit); the frame lines follow ``lines``."""
    first = next((i for i, l in enumerate(lines) if l.strip()), None)
    if first is None:
        raise BVHError("empty file", 1, path)
    if lines[first].split()[0].upper() != "HIERARCHY":
        raise BVHError(f"expected 'HIERARCHY' at the start, got {lines[first].split()[0]!r}", first + 1, path)
    if len(lines[first].split()) > 1:
        raise BVHError("unexpected text after 'HIERARCHY'", first + 1, path)
    motion_line = next((i for i in range(first + 1, len(lines)) if lines[i].strip().upper() == "MOTION"), None)
    hier_stop = motion_line if motion_line is not None else len(lines)
    tokens = _Tokens(lines, first + 1, hier_stop, path)
    with _recursion_room(hier_stop - first):  # one level per nested block; a line holds at most a few
        names, parents, offsets, channels, end_sites, offset_digits = _parse_hierarchy(tokens)
    if motion_line is None:
        raise BVHError("missing MOTION section (truncated file?)", len(lines), path)
    layout = ChannelLayout(tuple(channels), frozenset(end_sites))
    try:
        skeleton = Skeleton.from_parents(names, parents, np.array(offsets, dtype=np.float64))
    except ValueError as exc:
        raise BVHError(f"the hierarchy: {exc}", first + 1, path) from None

    # MOTION header
    i = motion_line + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise BVHError("missing 'Frames:' line after MOTION (truncated file?)", len(lines), path)
    m = _FRAMES_RE.match(lines[i])
    if not m:
        raise BVHError(f"expected 'Frames: <count>', got {lines[i].strip()!r}", i + 1, path)
    n_frames = _whole(m.group(1), i + 1, "Frames", path)
    if n_frames < 1:
        raise BVHError(f"Frames must be at least 1, got {n_frames}", i + 1, path)
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise BVHError("missing 'Frame Time:' line (truncated file?)", len(lines), path)
    m = _FRAME_TIME_RE.match(lines[i])
    if not m:
        raise BVHError(f"expected 'Frame Time: <seconds>', got {lines[i].strip()!r}", i + 1, path)
    frame_time = _number(m.group(1), i + 1, "Frame Time", path)
    if frame_time <= 0:
        raise BVHError(f"Frame Time must be > 0, got {m.group(1)}", i + 1, path)
    if not FRAME_TIME_RANGE[0] <= frame_time <= FRAME_TIME_RANGE[1]:
        raise BVHError(f"Frame Time must be from {FRAME_TIME_RANGE[0]:g} to {FRAME_TIME_RANGE[1]:g} seconds, "
                       f"got {m.group(1)}", i + 1, path)
    if i + 1 != len(lines):
        raise RuntimeError(f"BVH reader: the header ends at line {i + 1}, its lines at {len(lines)}")
    return skeleton, layout, n_frames, frame_time, offset_digits


def _motion_from_values(skeleton: Skeleton, layout: ChannelLayout, values: np.ndarray, frame_time: float) -> Motion:
    rotations, root, translations = _bvh_motion.motion_arrays(layout, skeleton.offsets, values)
    return Motion(rotations, root, frame_time, translations, layout)


def _fmt(x: float, decimals: int) -> str:
    s = f"{x:.{decimals}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    if s in ("-0", ""):
        s = "0"
    return s


def motion_channel_values(skeleton: Skeleton, motion: Motion, layout: ChannelLayout) -> np.ndarray:
    """(F, layout.n_channels) channel values (angles in degrees) of ``motion`` in ``layout``."""
    F = motion.n_frames
    values = np.zeros((F, layout.n_channels))
    cols = _channel_columns(layout)
    trans = motion.local_translations(skeleton)
    for j, chans in enumerate(layout.channels):
        rot = [(k, c[0]) for k, c in enumerate(chans) if c.endswith("rotation")]
        if rot:
            seq = "".join(a for _, a in rot)
            r = Rotation.from_quat(motion.rotations[:, j])
            if len(rot) == 3:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # gimbal lock: angles still exact
                    angles = r.as_euler(seq, degrees=True)
            else:
                angles = _partial_euler(r, seq, skeleton.names[j])
            for m, (k, _) in enumerate(rot):
                values[:, cols[j] + k] = angles[:, m]
        for k, c in enumerate(chans):
            if c.endswith("position"):
                values[:, cols[j] + k] = trans[:, j, "XYZ".index(c[0])]
    return values


def _partial_euler(r: Rotation, seq: str, name: str) -> np.ndarray:
    """Angles for a layout with fewer than 3 rotation channels (only exact for such rotations)."""
    axes = {"X": 0, "Y": 1, "Z": 2}
    if len(seq) == 1:
        rv = r.as_rotvec()
        return rv[:, [axes[seq]]] * (180.0 / np.pi)
    third = next(a for a in "XYZ" if a not in seq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ang = r.as_euler(seq + third, degrees=True)
    # scipy keeps the middle angle within +-90 degrees, so a rotation about the two axes whose
    # second angle is beyond 90 comes back with the third angle at +-180; (a, b, c) and
    # (a + 180, 180 - b, c - 180) are the same rotation, and the second has c = 0
    flip = np.abs(ang[:, 2]) > 90.0
    ang[flip, 0] += 180.0
    ang[flip, 1] = 180.0 - ang[flip, 1]
    return (ang[:, :2] + 180.0) % 360.0 - 180.0


def save_bvh(path, skeleton: Skeleton, motion: Motion, *, layout: ChannelLayout | None = None,
             decimals: int = 9) -> None:
    """Write ``motion`` on ``skeleton`` as a BVH file.

    Args:
        path: output file; its folder must exist (FileNotFoundError naming it otherwise).
        skeleton: the hierarchy and offsets written to the file.
        motion: the frames; its ``layout`` is used unless ``layout`` is given, else
            ``ChannelLayout.default(skeleton)`` (ZYX Euler angles; root XYZ position; leaves
            written as End Sites, whose names then read back as ``f"{parent}_End"``).
        layout: channel layout to write instead of the motion's.
        decimals: decimals written for offsets, positions and angles (degrees).

    Joints are written depth first (children in index order), which is also the order
    ``load_bvh`` numbers them in; a skeleton built in another topological order reads back with
    its joints in depth-first order.

    A joint whose layout lists fewer than 3 rotation channels (or whose position channels do not
    cover its translation) can only carry motions of that form; ValueError if the motion does
    not fit, as the file would not reproduce it. End Sites and joints without rotation channels
    must keep the identity rotation unless they are leaves (a leaf's rotation moves nothing).
    """
    if not isinstance(skeleton, Skeleton):
        raise ValueError(f"skeleton must be a fabrik.Skeleton, got {type(skeleton).__name__}")
    if not isinstance(motion, Motion):
        raise ValueError(f"motion must be a fabrik Motion, got {type(motion).__name__}")
    folder = Path(path).parent
    if not folder.is_dir():
        kind = "is a file, not a folder" if folder.exists() else "does not exist"
        raise FileNotFoundError(f"save_bvh: cannot write {str(path)!r}: the folder {str(folder)!r} {kind} "
                                "(save_bvh creates no folders; make it first)")
    if motion.n_joints != skeleton.n_joints:
        raise ValueError(f"motion has {motion.n_joints} joints but the skeleton has {skeleton.n_joints}")
    if layout is not None and not isinstance(layout, ChannelLayout):
        raise ValueError(f"layout must be a fabrik.model.motion.ChannelLayout (e.g. a loaded motion's "
                         f"motion.layout) or None, got {type(layout).__name__}")
    if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)) or not 0 <= decimals <= 17:
        raise ValueError(f"decimals must be a whole number from 0 to 17, got {decimals!r}")
    if not FRAME_TIME_RANGE[0] <= motion.frame_time <= FRAME_TIME_RANGE[1]:
        raise ValueError(f"the motion's frame_time {motion.frame_time:g} cannot be written: a BVH Frame Time must be "
                         f"from {FRAME_TIME_RANGE[0]:g} to {FRAME_TIME_RANGE[1]:g} seconds")
    layout = layout or motion.layout or ChannelLayout.default(skeleton)
    layout.check_for(skeleton)
    for j, name in enumerate(skeleton.names):
        # the reader takes a name as the blank-separated words after JOINT, joined by one space
        if j not in layout.end_sites and (not name or "{" in name or "}" in name
                                          or name != " ".join(_BLANKS.split(name.strip(" \t\x0b\x0c")))
                                          or "\n" in name or "\r" in name):
            raise ValueError(f"joint name {name!r} cannot be written to BVH (it would read back differently): "
                             "names must be non-empty, without braces, line breaks, tabs, or leading, "
                             "trailing or repeated spaces")
    values = motion_channel_values(skeleton, motion, layout)
    _check_representable(skeleton, motion, layout, values)

    children = [[] for _ in range(skeleton.n_joints)]
    for i in range(1, skeleton.n_joints):
        children[int(skeleton.parents[i])].append(i)
    out: list[str] = ["HIERARCHY"]

    def write(j: int, depth: int):
        ind = "\t" * depth
        off = " ".join(_fmt(v, decimals) for v in skeleton.offsets[j])
        if j in layout.end_sites:
            out.extend([f"{ind}End Site", f"{ind}{{", f"{ind}\tOFFSET {off}", f"{ind}}}"])
            return
        out.append(f"{ind}{'ROOT' if j == 0 else 'JOINT'} {skeleton.names[j]}")
        out.append(f"{ind}{{")
        out.append(f"{ind}\tOFFSET {off}")
        chans = layout.channels[j]
        out.append(f"{ind}\tCHANNELS {len(chans)}" + "".join(f" {c}" for c in chans))
        for c in children[j]:
            write(c, depth + 1)
        out.append(f"{ind}}}")

    with _recursion_room(skeleton.n_joints):
        write(0, 0)
    # the frame lines list the channels in the order the hierarchy above names the joints (depth
    # first), which differs from index order for a skeleton built in another topological order
    written = [j for j in _depth_first(children) if j not in layout.end_sites]
    cols = _channel_columns(layout)
    values = values[:, [cols[j] + k for j in written for k in range(len(layout.channels[j]))]]
    out.append("MOTION")
    out.append(f"Frames: {motion.n_frames}")
    out.append(f"Frame Time: {motion.frame_time:.9g}")
    for row in values:
        out.append(" ".join(_fmt(v, decimals) for v in row))
    Path(path).write_text("\n".join(out) + "\n", encoding="utf-8")


def _depth_first(children: list[list[int]]) -> list[int]:
    """Joint indices depth first from the root, children in index order (the order of ``write``)."""
    order, stack = [], [0]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(children[j]))
    return order


def _check_representable(skeleton: Skeleton, motion: Motion, layout: ChannelLayout, values: np.ndarray) -> None:
    """ValueError when the layout cannot carry the motion (the file would not reproduce it)."""
    back = _motion_from_values(skeleton, layout, values, motion.frame_time)
    leaves = set(skeleton.leaves)
    tol = 1e-9
    for j in range(skeleton.n_joints):
        if j in leaves and j != 0:
            continue
        d = np.abs(np.sum(back.rotations[:, j] * motion.rotations[:, j], axis=1))
        if (d < 1 - tol).any():
            f = int(np.argmax(d < 1 - tol))
            raise ValueError(f"the channels {layout.channels[j]} of joint {skeleton.names[j]!r} cannot express its "
                             f"rotation at frame {f}; use 3 rotation channels")
    t0 = back.local_translations(skeleton)
    t1 = motion.local_translations(skeleton)
    scale = max(skeleton.height(), 1e-300)
    bad = np.abs(t0 - t1).max(axis=(0, 2)) > 1e-9 * scale
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(f"joint {skeleton.names[j]!r} moves away from its offset but has no position channels "
                         f"in the layout {layout.channels[j]}")


__all__ = ["BVHError", "load_bvh", "loads_bvh", "save_bvh", "motion_channel_values"]
