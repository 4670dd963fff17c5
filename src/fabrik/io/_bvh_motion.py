"""Streaming a BVH file: its lines, the MOTION block's frame lines -> channel values -> rotations.

Shapes and conventions:

* The file is read as bytes in blocks of about ``BLOCK_BYTES`` (1 MiB), each ending at a line
  break; nothing holds the whole text. Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (the same bytes
  in UTF-8 and Latin-1, so lines are split before decoding); trailing DOS end-of-file marks
  (Ctrl-Z) after the last line are dropped. Line numbers are 1-based over the whole file.
* Text is decoded per line: ASCII as ASCII, any other line with the file's encoding, which is
  UTF-8 when the whole file is valid UTF-8 and Latin-1 otherwise (``LineDecoder`` finds out with
  one extra pass over the file, only when a non-ASCII line is met).
* ``read_frames`` returns the channel values, shape ``(F, C)`` float64: row f is frame line f,
  column c the file's c-th channel (``ChannelLayout`` order); positions in the file's units,
  angles in degrees.
* ``motion_arrays`` turns them into ``Motion``'s arrays: local rotations ``(F, n, 4)`` float64,
  quaternions ``(x, y, z, w)`` (Euler channels applied in the listed order as intrinsic
  rotations), root positions ``(F, 3)`` and ``{joint: (F, 3)}`` translations of inner joints.

Results are bit for bit those of the line-by-line reader this replaced (``float()`` per token,
``scipy.spatial.transform.Rotation.from_euler``): a compiled scanner (``_scan_rows``) reads each
frame line that holds only ASCII blanks and numbers, converting a number exactly when its
digits and exponent allow (Clinger's fast path, correctly rounded) and leaving any other to
``float()``. Any line it does not take (a stray character, a wrong value count, one frame line
too many, a value of 1e75 or more) goes to ``_frame_values``, the line-by-line reader's own
check, which raises its ``BVHError`` or reads the line (other whitespace, such as a form feed
or NEL, is valid). The Euler conversion (``_euler_quats``) repeats scipy's operations in
scipy's order, and is used only after it reproduced scipy on a probe of angles.

The compiled functions are cached by numba (``cache=True``); each calls nothing outside this
file, so numba's check of this file's modification time keeps the cache in step.
"""

from __future__ import annotations

import codecs
import io
import itertools
import math
import re
from typing import BinaryIO, Iterator

import numpy as np
from numba import njit
from scipy.spatial.transform import Rotation

from fabrik._validation import MAX_COORDINATE
from fabrik.io._bvh_common import _NUMBER_RE, BVHError, _number, printed_digits

#: Bytes read at a time. Large enough that the per-block Python work is noise, small enough
#: that the block and its decoded lines stay a few MiB.
BLOCK_BYTES = 1 << 20
#: Numbers per call of the scanner that it leaves to ``float()`` (at least a frame line's worth).
SLOW_CAPACITY = 4096

#: Line breaks: these only (``str.splitlines`` also splits at form feeds, NEL and others, which
#: would shift every line number after them and break names).
_LINE_BREAK = re.compile(rb"\r\n?|\n")
#: Characters a frame line of numbers can hold; a line with any other has each token checked.
_NOT_NUMERIC = re.compile(r"[^0-9eE+\-.\s]")


# --- lines --------------------------------------------------------------------------------

def _blocks(stream: BinaryIO, start: int) -> Iterator[bytes]:
    """Blocks of whole lines from byte ``start`` of ``stream`` to its end. Each block ends with a
    line break (never between the ``\\r`` and ``\\n`` of one), except the last one of the file,
    which loses its trailing Ctrl-Z marks (a DOS end-of-file mark)."""
    stream.seek(start)
    rest = b""
    while data := stream.read(BLOCK_BYTES):
        buf = rest + data if rest else data
        # the last break that is surely complete: a final '\r' may be the start of '\r\n'
        cut = max(buf.rfind(b"\n"), buf.rfind(b"\r", 0, len(buf) - 1)) + 1
        if cut:
            yield buf[:cut]
        rest = buf[cut:]
    rest = rest.rstrip(b"\x1a")
    if rest:
        yield rest


def _lines(block: bytes) -> Iterator[tuple[bytes, int]]:
    """The lines of a block (without their breaks), each with the offset just after its break."""
    pos = 0
    for m in _LINE_BREAK.finditer(block):
        yield block[pos:m.start()], m.end()
        pos = m.end()
    if pos < len(block):
        yield block[pos:], len(block)


class LineDecoder:
    """Decodes one line's bytes as the whole file's text would be decoded.

    ``encoding``: ``(codec, errors)`` to use, or None to take UTF-8 when all of ``stream`` is
    valid UTF-8 and Latin-1 otherwise (older Windows tools write names in a single-byte code
    page; Latin-1 keeps every byte a character of its own). That needs the whole file, so it is
    settled on the first non-ASCII line; ASCII reads the same either way.
    """

    def __init__(self, stream: BinaryIO, encoding: tuple[str, str] | None = None):
        self.stream = stream
        self.encoding = encoding

    def __call__(self, line: bytes) -> str:
        if line.isascii():
            return line.decode("ascii")
        if self.encoding is None:
            self.encoding = _file_encoding(self.stream)
        return line.decode(*self.encoding)


def _file_encoding(stream: BinaryIO) -> tuple[str, str]:
    """UTF-8 when all of ``stream`` is valid UTF-8, else Latin-1; read in blocks, position kept."""
    here = stream.tell()
    stream.seek(0)
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        while data := stream.read(BLOCK_BYTES):
            decoder.decode(data)
        decoder.decode(b"", final=True)
        encoding = ("utf-8", "strict")
    except UnicodeDecodeError:
        encoding = ("latin-1", "strict")
    stream.seek(here)
    return encoding


def read_head(stream: BinaryIO, decode: LineDecoder) -> tuple[list[str], int]:
    """The decoded lines up to the ``Frame Time:`` line and the byte offset after it.

    The lines are those the header checks need: up to the first non-blank one when it is not a
    lone ``HIERARCHY``, else up to the line after ``Frames:`` (the first non-blank ones after the
    first ``MOTION`` line), else, when the file ends first, all of them. The first line loses a
    byte-order mark. Returns ``(lines, offset)``; ``offset`` is where the frame lines start."""
    lines: list[str] = []
    state = "first"  # then "motion", "frames", "frame time"
    offset = 0
    for block in _blocks(stream, 0):
        for raw, end in _lines(block):
            text = decode(raw)
            if not lines:
                text = text.removeprefix("\ufeff")
            lines.append(text)
            if state == "first":
                if text.strip():
                    words = text.split()
                    if words[0].upper() != "HIERARCHY" or len(words) > 1:
                        return lines, offset + end
                    state = "motion"
            elif state == "motion":
                if text.strip().upper() == "MOTION":
                    state = "frames"
            elif text.strip():
                if state == "frame time":
                    return lines, offset + end
                state = "frame time"
        offset += len(block)
    return lines, offset


# --- frame lines -> channel values --------------------------------------------------------

#: Exact doubles 1e0 .. 1e22 (5**22 < 2**53), for Clinger's fast path.
_POW10 = np.array([10.0 ** k for k in range(23)])

_DONE, _PROBLEM, _SLOW_FULL = 0, 1, 2
#: ``places`` of a column none of whose numbers has a non-zero digit.
NO_DIGITS = np.iinfo(np.int64).min


@njit(cache=True, nogil=True)
def _scan_rows(buf, pos, n_chan, out, row, n_frames, store, slow, places, figures):  # pragma: no cover - compiled
    """Read frame lines of ``buf`` (uint8, whole lines) from offset ``pos`` into ``out``.

    A line is taken when it is blank (ASCII blanks only) or holds exactly ``n_chan`` numbers of
    ``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)`` separated by spaces, tabs, vertical tabs
    or form feeds, while ``row < n_frames``. Its values go to ``out[row]`` (``out[0]`` when
    ``store`` is False: checking only). A number whose significant digits (at most 18) make an
    integer m <= 2**53 and whose decimal exponent e is within +-22 is ``m * 10**e`` or
    ``m / 10**-e``, one correctly rounded operation on exact operands, so ``float()``'s value;
    any other number is left to the caller in ``slow``: ``(start, end, row, column, line start,
    line index)`` per number (line index counted from this call's first line). Each number with a
    non-zero digit raises ``places[k]`` and ``figures[k]`` of its column k to its own printed
    place and significant digits if they are finer (``_bvh_common.printed_digits``).

    Returns ``(pos, row, lines, n_slow, stop)``: ``stop`` is ``_DONE`` at the end of ``buf``;
    ``_PROBLEM`` when the line starting at ``pos`` is not taken; ``_SLOW_FULL`` when ``slow``
    is full before the line at ``pos``. ``lines`` counts the lines read before ``pos``.
    """
    n = buf.shape[0]
    lines = 0
    n_slow = 0
    while pos < n:
        start = pos
        slow_at_start = n_slow
        k = 0
        bad = False
        while pos < n:
            c = buf[pos]
            if c == 10 or c == 13:
                break
            if c == 32 or c == 9 or c == 11 or c == 12:
                pos += 1
                continue
            if k == n_chan or row >= n_frames:
                bad = True
                break
            token = pos
            negative = False
            if c == 43 or c == 45:
                negative = c == 45
                pos += 1
            mantissa = 0
            significant = 0
            digits = 0
            decimals = 0
            dot = False
            while pos < n:
                c = int(buf[pos])  # an int, not a uint8 that wraps (numba types it int64 either way)
                if 48 <= c <= 57:
                    digits += 1
                    if dot:
                        decimals += 1
                    if significant > 0 or c != 48:
                        if significant < 18:
                            mantissa = mantissa * 10 + (c - 48)
                        significant += 1
                    pos += 1
                elif c == 46 and not dot:
                    dot = True
                    pos += 1
                else:
                    break
            if digits == 0:
                bad = True
                break
            exponent = 0
            if pos < n and (buf[pos] == 101 or buf[pos] == 69):
                pos += 1
                exp_negative = False
                if pos < n and (buf[pos] == 43 or buf[pos] == 45):
                    exp_negative = buf[pos] == 45
                    pos += 1
                exp_digits = 0
                while pos < n and 48 <= buf[pos] <= 57:
                    if exponent < 100000:  # beyond, the number is float()'s (inf or 0)
                        exponent = exponent * 10 + (int(buf[pos]) - 48)
                    exp_digits += 1
                    pos += 1
                if exp_digits == 0:
                    bad = True
                    break
                if exp_negative:
                    exponent = -exponent
            if pos < n:
                c = buf[pos]
                if not (c == 32 or c == 9 or c == 11 or c == 12 or c == 10 or c == 13):
                    bad = True
                    break
            at = row if store else 0
            e10 = exponent - decimals
            if significant > 0:
                if -e10 > places[k]:
                    places[k] = -e10
                if significant > figures[k]:
                    figures[k] = significant
            if significant == 0:
                out[at, k] = -0.0 if negative else 0.0
            elif significant <= 18 and mantissa <= 9007199254740992 and -22 <= e10 <= 22:
                value = float(mantissa)
                value = value * _POW10[e10] if e10 >= 0 else value / _POW10[-e10]
                out[at, k] = -value if negative else value
            else:
                if n_slow == slow.shape[0]:
                    return start, row, lines, slow_at_start, _SLOW_FULL
                slow[n_slow, 0] = token
                slow[n_slow, 1] = pos
                slow[n_slow, 2] = row
                slow[n_slow, 3] = k
                slow[n_slow, 4] = start
                slow[n_slow, 5] = lines
                n_slow += 1
            k += 1
        if bad or (k != 0 and k != n_chan):
            return start, row, lines, slow_at_start, _PROBLEM
        if k != 0:
            row += 1
        if pos < n:
            pos += 2 if buf[pos] == 13 and pos + 1 < n and buf[pos + 1] == 10 else 1
            lines += 1
        elif pos > start:  # the file's last line, without a break
            lines += 1
    return pos, row, lines, n_slow, _DONE


def _frame_values(line: str, ln: int, f: int, n_frames: int, n_chan: int, path) -> np.ndarray | None:
    """One frame line, checked as the line-by-line reader checks it: its ``n_chan`` values, None
    for a blank line, or the ``BVHError`` for line ``ln`` (1-based), frame ``f`` (0-based)."""
    parts = line.split()
    if not parts:
        return None
    if f >= n_frames:
        raise BVHError(f"more frame lines than 'Frames: {n_frames}' declares", ln, path)
    if len(parts) != n_chan:
        raise BVHError(f"frame {f + 1} has {len(parts)} values, the hierarchy declares {n_chan} channels", ln, path)
    if _NOT_NUMERIC.search(line):
        for k, t in enumerate(parts):
            _number(t, ln, f"frame {f + 1}, value {k + 1}", path)
    try:
        row = np.array(parts, dtype=np.float64)
    except ValueError:
        bad = next((k, t) for k, t in enumerate(parts) if not _NUMBER_RE.fullmatch(t))
        raise BVHError(f"frame {f + 1}, value {bad[0] + 1}: expected a number, got {bad[1]!r}", ln, path) from None
    if not (np.abs(row) < MAX_COORDINATE).all():
        k = int(np.flatnonzero(~(np.abs(row) < MAX_COORDINATE))[0])
        raise BVHError(f"frame {f + 1}, value {k + 1}: expected a finite number below {MAX_COORDINATE:g}, got "
                       f"{parts[k]!r}", ln, path)
    return row


def _truncated(n_frames: int, found: int, last_line: int, path) -> BVHError:
    return BVHError(f"'Frames: {n_frames}' declared but only {found} frame lines found (truncated file?)",
                    last_line, path)


def read_frames(stream: BinaryIO, start: int, first_line: int, n_frames: int, n_chan: int,
                decode: LineDecoder, path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The frame lines from byte ``start`` (line ``first_line``) to the end of ``stream``.

    Returns ``(values, places, digits)``: the values, shape ``(n_frames, n_chan)`` float64, and per
    column the finest place and the most significant digits printed among its numbers with a
    non-zero digit (``_bvh_common.printed_digits``; int64, ``NO_DIGITS`` and 0 for a column
    without one). Raises the ``BVHError`` of the
    first bad line; but, as the line-by-line reader checked the count first, a file with fewer
    lines than ``n_frames`` (blank ones included) is reported as truncated instead, at its last
    line. The values are only stored when the rest of the file can hold ``n_frames`` frame lines
    (2 bytes a value at least), so a huge ``Frames:`` count allocates nothing."""
    from fabrik.kernels._cache_guard import announce_compile

    announce_compile(_scan_rows, _euler_quats)
    size = stream.seek(0, io.SEEK_END)
    room = size - start
    store = n_frames <= room and (n_chan == 0 or n_frames * 2 * n_chan - 1 <= room)
    values = np.empty((n_frames if store else 1, n_chan))
    places = np.full(n_chan, NO_DIGITS, dtype=np.int64)
    digits = np.zeros(n_chan, dtype=np.int64)
    slow = np.empty((max(SLOW_CAPACITY, n_chan), 6), dtype=np.int64)
    f = n_frames if n_chan == 0 else 0  # no channels: the frame lines are blank
    line_no = first_line
    # the scanner's counts as int64s: a file holds fewer lines than 2**62 bytes
    limit = min(n_frames, 1 << 62)

    def check(block: bytes, at: int, ln: int, frame: int) -> tuple[np.ndarray | None, int]:
        """The careful check of the line at offset ``at``: its values and the offset after it."""
        m = _LINE_BREAK.search(block, at)
        text = decode(block[at:m.start() if m else len(block)])
        try:
            row_values = _frame_values(text, ln, frame, n_frames, n_chan, path)
            if row_values is not None:
                for k, token in enumerate(text.split()):
                    printed = printed_digits(token)
                    if printed is not None:
                        places[k] = max(places[k], printed[0])
                        digits[k] = max(digits[k], printed[1])
            return row_values, m.end() if m else len(block)
        except BVHError:
            n_lines = _count_lines(stream, start)
            if n_frames > n_lines:
                found = sum(1 for line in _all_lines(stream, start) if decode(line).strip())
                raise _truncated(n_frames, found, first_line - 1 + n_lines, path) from None
            raise

    for block in _blocks(stream, start):
        buf = np.frombuffer(block, dtype=np.uint8)
        pos = 0
        while pos < len(block):
            row = min(f, limit)
            pos, taken, n_lines, n_slow, stop = _scan_rows(buf, pos, n_chan, values, row, limit, store, slow, places,
                                                           digits)
            for token, end, frame, col, at, line in slow[:n_slow].tolist():
                value = float(block[token:end])
                if not abs(value) < MAX_COORDINATE:
                    check(block, at, line_no + line, frame)
                    raise RuntimeError(f"BVH reader: line {line_no + line} passed a check it should fail")
                if store:
                    values[frame, col] = value
            line_no += n_lines
            f += taken - row
            if stop == _PROBLEM:
                row_values, pos = check(block, pos, line_no, f)
                if row_values is not None:
                    if store:
                        values[f] = row_values
                    f += 1
                line_no += 1
    n_lines = line_no - first_line
    if n_frames > n_lines:
        # every non-blank line was a frame line; without channels there were none
        raise _truncated(n_frames, f if n_chan else 0, line_no - 1, path)
    if f < n_frames:
        raise _truncated(n_frames, f, line_no - 1, path)
    if not store:
        raise RuntimeError("BVH reader: a file too short for its frame count passed its checks")
    return values, places, digits


def _all_lines(stream: BinaryIO, start: int) -> Iterator[bytes]:
    for block in _blocks(stream, start):
        for line, _ in _lines(block):
            yield line


def _count_lines(stream: BinaryIO, start: int) -> int:
    count = 0
    for block in _blocks(stream, start):
        breaks = _LINE_BREAK.findall(block)
        count += len(breaks) + (not block.endswith((b"\n", b"\r")))
    return count


# --- channel values -> rotations ----------------------------------------------------------

@njit(cache=True, nogil=True)
def _euler_quats(values, cols, axes, counts, quats):  # pragma: no cover - compiled
    """``quats[f, j]`` = joint j's intrinsic Euler rotation about ``axes[j, :counts[j]]`` (0, 1, 2
    = X, Y, Z) by ``values[f, cols[j, :counts[j]]]`` degrees (the identity when ``counts[j]`` is
    0), as ``Rotation.from_euler(seq, angles, degrees=True).as_quat()`` computes it: radians as
    ``angle * (pi / 180)``, one elementary quaternion per axis (``cos(a / 2)``, ``sin(a / 2)``),
    composed left to right with scipy's product formula, term by term in its order, zero terms
    included (they decide the sign of zeros). Frame by frame, so ``quats`` is written once, in
    order."""
    rad = math.pi / 180.0
    for f in range(values.shape[0]):
        for j in range(counts.shape[0]):
            if counts[j] == 0:
                quats[f, j, 0] = 0.0
                quats[f, j, 1] = 0.0
                quats[f, j, 2] = 0.0
                quats[f, j, 3] = 1.0
                continue
            half = values[f, cols[j, 0]] * rad / 2.0
            s = math.sin(half)
            p0 = s if axes[j, 0] == 0 else 0.0
            p1 = s if axes[j, 0] == 1 else 0.0
            p2 = s if axes[j, 0] == 2 else 0.0
            p3 = math.cos(half)
            for k in range(1, counts[j]):
                half = values[f, cols[j, k]] * rad / 2.0
                s = math.sin(half)
                q0 = s if axes[j, k] == 0 else 0.0
                q1 = s if axes[j, k] == 1 else 0.0
                q2 = s if axes[j, k] == 2 else 0.0
                q3 = math.cos(half)
                c0 = p1 * q2 - p2 * q1
                c1 = p2 * q0 - p0 * q2
                c2 = p0 * q1 - p1 * q0
                r0 = p3 * q0 + q3 * p0 + c0
                r1 = p3 * q1 + q3 * p1 + c1
                r2 = p3 * q2 + q3 * p2 + c2
                r3 = p3 * q3 - p0 * q0 - p1 * q1 - p2 * q2
                p0, p1, p2, p3 = r0, r1, r2, r3
            quats[f, j, 0] = p0
            quats[f, j, 1] = p1
            quats[f, j, 2] = p2
            quats[f, j, 3] = p3


_euler_matches_scipy: bool | None = None


def _euler_is_exact() -> bool:
    """Whether ``_euler_quats`` gives scipy's bits on a probe of angles (every axis order; zeros
    of both signs, right angles, tiny, huge and random angles). Checked once per process: a
    scipy that changed its formula, or a sine other than the C library's, turns it off."""
    global _euler_matches_scipy
    if _euler_matches_scipy is None:
        rng = np.random.default_rng(20240917)
        special = np.array([0.0, -0.0, 90.0, -90.0, 180.0, -180.0, 270.0, 360.0, 45.0, 1e-300, 5e-324, 1e20, -7e74])
        angles = np.concatenate([special[rng.integers(0, len(special), (100, 3))], rng.uniform(-400, 400, (200, 3)),
                                 rng.normal(size=(50, 3)) * 10.0 ** rng.integers(-20, 20, (50, 3))])
        orders = _probe_orders()
        cols = np.array([[0, 1, 2]] * len(orders))
        axes = np.array([["XYZ".index(a) for a in seq.ljust(3, "X")] for seq in orders])
        got = np.empty((len(angles), len(orders), 4))
        _euler_quats(angles, cols, axes, np.array([len(seq) for seq in orders]), got)
        _euler_matches_scipy = all(
            got[:, j].tobytes() == Rotation.from_euler(seq, angles[:, :len(seq)], degrees=True).as_quat().tobytes()
            for j, seq in enumerate(orders))
    return _euler_matches_scipy


def _probe_orders() -> list[str]:
    """Every sequence of 1 to 3 distinct axes (what BVH rotation channels can list)."""
    return ["".join(p) for k in (1, 2, 3) for p in itertools.permutations("XYZ", k)]


def motion_arrays(layout, offsets: np.ndarray, values: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
    """``Motion``'s arrays from channel values.

    Args:
        layout: the ``ChannelLayout`` of the values' columns.
        offsets: (n, 3) the skeleton's joint offsets; position channels replace their components.
        values: (F, C) channel values, angles in degrees.

    Returns:
        ``(rotations (F, n, 4), root_positions (F, 3), {joint: (F, 3) translation})``;
        joints without rotation channels keep the identity, the root without position channels
        stays at its offset.
    """
    F, n = values.shape[0], len(layout.channels)
    cols = np.zeros((n, 3), dtype=np.int64)
    axes = np.zeros((n, 3), dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    translations = {}
    root = np.repeat(offsets[:1], F, axis=0)
    col = 0
    for j, chans in enumerate(layout.channels):
        rot = [(col + k, "XYZ".index(c[0])) for k, c in enumerate(chans) if c.endswith("rotation")]
        counts[j] = len(rot)
        for k, (c, axis) in enumerate(rot):
            cols[j, k], axes[j, k] = c, axis
        pos = [(col + k, "XYZ".index(c[0])) for k, c in enumerate(chans) if c.endswith("position")]
        if pos:
            t = np.repeat(offsets[j:j + 1], F, axis=0)
            for c, axis in pos:
                t[:, axis] = values[:, c]
            if j == 0:
                root = t
            else:
                translations[j] = t
        col += len(chans)
    quats = np.empty((F, n, 4))
    if _euler_is_exact():
        _euler_quats(values, cols, axes, counts, quats)
    else:
        quats[:] = (0.0, 0.0, 0.0, 1.0)
        for j in np.flatnonzero(counts):
            seq = "".join("XYZ"[a] for a in axes[j, :counts[j]])
            quats[:, j] = Rotation.from_euler(seq, values[:, cols[j, :counts[j]]], degrees=True).as_quat()
    return quats, root, translations
