"""The streamed BVH reader against the line-by-line reader it replaced, on mutated files.

``reference_parse`` is that reader's ``_parse``, kept here as it was: the whole text split into
lines, every frame line split and converted on its own, scipy's ``Rotation.from_euler`` per joint.
The streamed reader must give the same skeleton and motion bit for bit, or a ``BVHError`` with
the same message and line, for any file: valid, broken, or oddly spaced. Pinned cases below:
counts too long for ``int()`` (a ``BVHError`` now, where the old reader let Python's
``ValueError`` through), numbers at the edges of the scanner's exact conversion, the encoding
decided by a byte among the frames, the scipy fallback of the Euler conversion.
"""

from __future__ import annotations

import itertools
import re
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from fabrik._validation import MAX_COORDINATE
from fabrik.io import _bvh_motion
from fabrik.io._bvh_common import _NUMBER_RE, _WHOLE_RE, BVHError, _number
from fabrik.io.bvh import (_FRAME_TIME_RE, _FRAMES_RE, FRAME_TIME_RANGE, _parse_hierarchy, _recursion_room, _Tokens,
                           load_bvh, loads_bvh)
from fabrik.model.motion import ChannelLayout, Motion
from fabrik.model.skeleton import Skeleton

# --- the reference: the line-by-line reader, as it was -----------------------------------------

_NOT_NUMERIC = re.compile(r"[^0-9eE+\-.\s]")


def _split_lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _whole(token: str, line: int, what: str, path) -> int:
    if not _WHOLE_RE.fullmatch(token):
        raise BVHError(f"{what}: expected a whole number, got {token!r}", line, path)
    return int(token)


def _reference_motion(skeleton: Skeleton, layout: ChannelLayout, values: np.ndarray, frame_time: float) -> Motion:
    F = values.shape[0]
    quats = np.zeros((F, skeleton.n_joints, 4))
    quats[..., 3] = 1.0
    translations = {}
    root = np.repeat(skeleton.offsets[:1], F, axis=0)
    col = 0
    for j, chans in enumerate(layout.channels):
        rot = [(k, c[0]) for k, c in enumerate(chans) if c.endswith("rotation")]
        if rot:
            angles = values[:, [col + k for k, _ in rot]]
            quats[:, j] = Rotation.from_euler("".join(a for _, a in rot), angles, degrees=True).as_quat()
        pos = [(k, "XYZ".index(c[0])) for k, c in enumerate(chans) if c.endswith("position")]
        if pos:
            t = np.repeat(skeleton.offsets[j:j + 1], F, axis=0)
            for k, axis in pos:
                t[:, axis] = values[:, col + k]
            if j == 0:
                root = t
            else:
                translations[j] = t
        col += len(chans)
    return Motion(quats, root, frame_time, translations, layout)


def reference_parse(text: str, path) -> tuple[Skeleton, Motion]:
    """The line-by-line reader's ``_parse`` (the hierarchy parser is shared and unchanged)."""
    lines = _split_lines(text.removeprefix("\ufeff").rstrip("\x1a"))
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
    with _recursion_room(hier_stop - first):
        names, parents, offsets, channels, end_sites, _ = _parse_hierarchy(tokens)
    if motion_line is None:
        raise BVHError("missing MOTION section (truncated file?)", len(lines), path)
    layout = ChannelLayout(tuple(channels), frozenset(end_sites))
    try:
        skeleton = Skeleton.from_parents(names, parents, np.array(offsets, dtype=np.float64))
    except ValueError as exc:
        raise BVHError(f"the hierarchy: {exc}", first + 1, path) from None
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
    if not FRAME_TIME_RANGE[0] <= frame_time <= FRAME_TIME_RANGE[1]:  # the range came after the streamed reader
        raise BVHError(f"Frame Time must be from {FRAME_TIME_RANGE[0]:g} to {FRAME_TIME_RANGE[1]:g} seconds, "
                       f"got {m.group(1)}", i + 1, path)
    i += 1
    if n_frames > len(lines) - i:
        found = sum(1 for line in lines[i:] if line.strip())
        raise BVHError(f"'Frames: {n_frames}' declared but only {found} frame lines found (truncated file?)",
                       len(lines), path)
    n_chan = layout.n_channels
    values = np.empty((n_frames, n_chan))
    f = n_frames if n_chan == 0 else 0
    for ln in range(i, len(lines)):
        parts = lines[ln].split()
        if not parts:
            continue
        if f >= n_frames:
            raise BVHError(f"more frame lines than 'Frames: {n_frames}' declares", ln + 1, path)
        if len(parts) != n_chan:
            raise BVHError(f"frame {f + 1} has {len(parts)} values, the hierarchy declares {n_chan} channels",
                           ln + 1, path)
        if _NOT_NUMERIC.search(lines[ln]):
            for k, t in enumerate(parts):
                _number(t, ln + 1, f"frame {f + 1}, value {k + 1}", path)
        try:
            row = np.array(parts, dtype=np.float64)
        except ValueError:
            bad = next((k, t) for k, t in enumerate(parts) if not _NUMBER_RE.fullmatch(t))
            raise BVHError(f"frame {f + 1}, value {bad[0] + 1}: expected a number, got {bad[1]!r}", ln + 1,
                           path) from None
        if not (np.abs(row) < MAX_COORDINATE).all():
            k = int(np.flatnonzero(~(np.abs(row) < MAX_COORDINATE))[0])
            raise BVHError(f"frame {f + 1}, value {k + 1}: expected a finite number below {MAX_COORDINATE:g}, got "
                           f"{parts[k]!r}", ln + 1, path)
        values[f] = row
        f += 1
    if f < n_frames:
        raise BVHError(f"'Frames: {n_frames}' declared but only {f} frame lines found (truncated file?)",
                       len(lines), path)
    return skeleton, _reference_motion(skeleton, layout, values, frame_time)


def reference_load(raw: bytes, path: str) -> tuple[Skeleton, Motion]:
    """The reference over a file's bytes, decoded as the old ``load_bvh`` decoded them."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return reference_parse(text, path)


def outcome(read, *args):
    """What a reader makes of a file: every bit of the skeleton and motion, or its BVHError."""
    try:
        skeleton, motion = read(*args)
    except BVHError as exc:
        return "error", str(exc), exc.line
    return ("ok", skeleton.names, skeleton.parents.tobytes(), skeleton.offsets.tobytes(), motion.rotations.tobytes(),
            motion.root_positions.tobytes(), motion.frame_time, motion.layout,
            {j: t.tobytes() for j, t in motion.joint_translations.items()})


# --- mutated files ------------------------------------------------------------------------------

#: Tokens a mutation puts in place of a number: non-numbers, non-finite and huge values, forms
#: Python's float() takes but BVH does not, numbers only float() converts exactly (too many
#: digits, far exponents, subnormals), stray characters.
GARBAGE = ["nan", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e75", "-1e75", "9.99e74", "1e-400", "1_000",
           "\u0661", "0x10", "1,5", "1.2.3", "e5", ".", "-", "+", "+.5", "5.", "-0", "1e", "1e+", "--1", "\u00e9",
           "\x00", "\x1a", "1" * 400, "0" * 500 + "1", "1" * 30 + "e-10", "4.9e-324", "2.2250738585072014e-308",
           "9007199254740993", "9007199254740992", "123456789012345678", "1e22", "1e23", "1e-22", "1e-23",
           "0.1e-320", "{", "}", "MOTION", "Frames:"]
#: Values at and beyond the reader's limit of 1e75, in the forms the scanner and float() share.
HUGE = ["1e400", "-1e400", "1e75", "-1e75", "9.99e74", "-9.999999999999999e74", "1" * 76, "1" * 75, "1" * 400,
        "0.1e76", "100000000000000000000000000000000000000000000000000000000000000000000000000.5"]
#: What a mutation puts between numbers or on a line of its own: ASCII blanks the scanner takes,
#: and whitespace only Python's str.split() knows (for which lines go to the careful check).
SPACES = ["\t", "\x0b", "\x0c", "\x1c", "\x1f", "\xa0", "\x85", "\u3000", "\u2028", "  "]

number_text = st.one_of(
    st.floats(-1e4, 1e4, allow_nan=False).map(lambda v: f"{v:.4f}"),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: abs(v) < 1e74).map(repr),
    st.integers(-10**20, 10**20).map(str),
    st.sampled_from(["0", "-0", "+.5", "5.", "-0.0e5", "1E+05", "2e-05", "0.000000000000000000000000001"]),
)


@st.composite
def base_lines(draw) -> list[str]:
    """A valid small file, as lines: a root with 6 channels, a 3- and a 2-channel joint (11
    channels), End Sites; or the same hierarchy without channels. Names ASCII or not."""
    channels = draw(st.integers(0, 4)) > 0
    root = draw(st.sampled_from(["Hips", "Hips", "Hips", "H\u00efps"]))
    orders = draw(st.lists(st.permutations("XYZ"), min_size=2, max_size=2))
    c0 = "CHANNELS 6 Xposition Yposition Zposition " + " ".join(f"{a}rotation" for a in orders[0])
    c1 = "CHANNELS 3 " + " ".join(f"{a}rotation" for a in orders[1])
    c2 = "CHANNELS 2 Zrotation Xrotation"
    if not channels:
        c0 = c1 = c2 = "CHANNELS 0"
    lines = ["HIERARCHY", f"ROOT {root}", "{", "  OFFSET 0.5 1 -0.25", f"  {c0}", "  JOINT Spine", "  {",
             "    OFFSET 0 1.5 0", f"    {c1}", "    JOINT Neck", "    {", "      OFFSET 0 0.5 0.1", f"      {c2}",
             "      End Site", "      {", "        OFFSET 0 0.3 0", "      }", "    }", "  }", "  End Site", "  {",
             "    OFFSET 1 0 0", "  }", "}", "MOTION"]
    n = draw(st.integers(1, 4))
    lines += [f"Frames: {n}", "Frame Time: 0.0083333"]
    width = 11 if channels else 0
    for _ in range(n):
        lines.append(" ".join(draw(st.lists(number_text, min_size=width, max_size=width))))
    return lines


def _motion_at(lines: list[str]) -> int:
    return next((i for i, line in enumerate(lines) if line.strip() == "MOTION"), len(lines) - 1)


def _pick_line(data, lines: list[str]) -> int:
    """A line index: mostly a frame line, else one of the MOTION header, else any."""
    motion = _motion_at(lines)
    where = data.draw(st.sampled_from(["frames"] * 8 + ["header", "any"]))
    if where == "frames" and motion + 3 < len(lines):
        return data.draw(st.integers(motion + 3, len(lines) - 1))
    if where == "header":
        return data.draw(st.integers(min(motion, len(lines) - 1), min(motion + 2, len(lines) - 1)))
    return data.draw(st.integers(0, len(lines) - 1))


def _retoken(data, lines, edit):
    lines = list(lines)
    i = _pick_line(data, lines)
    tokens = lines[i].split(" ")
    k = data.draw(st.integers(0, len(tokens) - 1))
    lines[i] = " ".join(edit(tokens, k))
    return lines


def replace_token(data, lines):
    new = data.draw(st.one_of(st.sampled_from(GARBAGE), st.sampled_from(HUGE), number_text))
    return _retoken(data, lines, lambda t, k: t[:k] + [new] + t[k + 1:])


def delete_token(data, lines):
    return _retoken(data, lines, lambda t, k: t[:k] + t[k + 1:])


def double_token(data, lines):
    return _retoken(data, lines, lambda t, k: t[:k + 1] + t[k:])


def odd_separator(data, lines):
    lines = list(lines)
    i = _pick_line(data, lines)
    if " " in lines[i]:
        k = data.draw(st.sampled_from([m.start() for m in re.finditer(" ", lines[i])]))
        lines[i] = lines[i][:k] + data.draw(st.sampled_from(SPACES)) + lines[i][k + 1:]
    return lines


def delete_line(data, lines):
    i = _pick_line(data, lines)
    return lines[:i] + lines[i + 1:]


def double_line(data, lines):
    i = _pick_line(data, lines)
    return lines[:i + 1] + lines[i:]


def insert_line(data, lines):
    i = _pick_line(data, lines)
    new = data.draw(st.one_of(st.just(""), st.sampled_from(SPACES), st.sampled_from(GARBAGE)))
    return lines[:i] + [new] + lines[i:]


def cut_line(data, lines):
    lines = list(lines)
    i = _pick_line(data, lines)
    lines[i] = lines[i][:data.draw(st.integers(0, len(lines[i])))]
    return lines


def frame_count(data, lines):
    count = data.draw(st.one_of(st.integers(-2, 12).map(str), st.integers(2, 400).map(lambda k: "9" * k),
                                st.sampled_from(["+4", "04", "0" * 500 + "3", "four", "", "1e3", "\u0663"])))
    return [f"Frames: {count}" if line.startswith("Frames:") else line for line in lines]


def _encode(text: str, encoding: str) -> bytes:
    try:
        return text.encode(encoding)
    except UnicodeEncodeError:  # a character Latin-1 has not
        return text.encode("utf-8")


#: Replacing a number and odd blanks, the edits with the most to tell apart, come up more often.
MUTATIONS = [replace_token] * 6 + [odd_separator] * 3 + [delete_token, double_token, delete_line, double_line,
                                                         insert_line, cut_line, frame_count]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streamed_reader_matches_the_reference_on_mutated_files(data, tmp_path_factory):
    lines = data.draw(base_lines())
    for mutation in data.draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=4)):
        lines = mutation(data, lines)
    ending = data.draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    if ending == "mixed":
        text = "".join(line + data.draw(st.sampled_from(["\n", "\r\n", "\r"])) for line in lines)
    else:
        text = ending.join(lines) + data.draw(st.sampled_from([ending, ""]))
    if data.draw(st.integers(0, 5)) == 0:  # a file cut short, mostly in its MOTION block
        motion = text.find("MOTION") if data.draw(st.integers(0, 4)) else 0
        text = text[:data.draw(st.integers(max(motion, 0), len(text)))]
    text = data.draw(st.sampled_from(["", "\ufeff"])) + text + data.draw(st.sampled_from(["", "\x1a", "\x1a\x1a"]))

    block = data.draw(st.sampled_from([1, 2, 5, 64, 1 << 20]))
    capacity = data.draw(st.sampled_from([1, 4096]))
    with mock.patch.object(_bvh_motion, "BLOCK_BYTES", block), mock.patch.object(_bvh_motion, "SLOW_CAPACITY",
                                                                                 capacity):
        assert outcome(loads_bvh, text) == outcome(reference_parse, text, None)

        raw = _encode(text, data.draw(st.sampled_from(["utf-8", "latin-1"])))
        if data.draw(st.integers(0, 5)) == 0:  # a byte that is not UTF-8: the whole file reads as Latin-1
            at = data.draw(st.integers(0, len(raw)))
            raw = raw[:at] + data.draw(st.sampled_from([b"\xa0", b"\xff", b"\x85"])) + raw[at:]
        path = tmp_path_factory.mktemp("mutated") / "take.bvh"
        path.write_bytes(raw)
        assert outcome(load_bvh, path) == outcome(reference_load, raw, str(path))


# --- pinned cases -------------------------------------------------------------------------------

SMALL = "\n".join(["HIERARCHY", "ROOT Hips", "{", " OFFSET 0 0 0",
                   " CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation", " JOINT Spine", " {",
                   "  OFFSET 0 1 0", "  CHANNELS 3 Zrotation Xrotation Yrotation", "  End Site", "  {",
                   "   OFFSET 0 1 0", "  }", " }", "}", "MOTION", "Frames: 2", "Frame Time: 0.01",
                   "1 2 3 10 20 30 -5 15 95", "4 5 6 -40 50 -60 0.5 -0.25 180"]) + "\n"


def _line_of(text: str, needle: str) -> int:
    return next(i + 1 for i, line in enumerate(text.splitlines()) if needle in line)


@pytest.mark.parametrize("digits", [4301, 5000, 20000])
def test_over_long_channel_count_is_a_bvherror_naming_file_and_line(digits, tmp_path):
    text = SMALL.replace("CHANNELS 3 Z", f"CHANNELS {'7' * digits} Z")
    path = tmp_path / "long.bvh"
    path.write_text(text)
    with pytest.raises(BVHError) as info:
        load_bvh(path)
    assert info.value.line == _line_of(text, "CHANNELS 777") and info.value.path == str(path)
    assert f"{path}: line {info.value.line}: CHANNELS of 'Spine': expected a channel count, got a number of " \
           f"{digits} digits" in str(info.value)


@pytest.mark.parametrize("digits", [4301, 5000, 20000])
def test_over_long_frame_count_is_a_bvherror_naming_file_and_line(digits, tmp_path):
    for count in ("9" * digits, "-" + "9" * digits):
        text = SMALL.replace("Frames: 2", f"Frames: {count}")
        path = tmp_path / "long.bvh"
        path.write_text(text)
        with pytest.raises(BVHError) as info:
            load_bvh(path)
        assert info.value.line == _line_of(text, "Frames:") and info.value.path == str(path)
        assert f"Frames: expected a whole number, got a number of {digits} digits" in str(info.value)
        with pytest.raises(BVHError, match=f"line {info.value.line}: Frames"):
            loads_bvh(text)


def test_counts_padded_with_thousands_of_zeros_read_as_their_value():
    padded = SMALL.replace("Frames: 2", "Frames: " + "0" * 5000 + "2")
    padded = padded.replace("CHANNELS 3 Z", "CHANNELS +" + "0" * 5000 + "3 Z")
    assert outcome(loads_bvh, padded) == outcome(loads_bvh, SMALL)


def test_a_frame_count_of_4300_digits_is_the_truncation_error_it_was():
    text = SMALL.replace("Frames: 2", "Frames: " + "9" * 4300)
    got = outcome(loads_bvh, text)
    assert got == outcome(reference_parse, text, None) and "declared but only 2 frame lines" in got[1]


@pytest.mark.parametrize("token", ["9007199254740992", "9007199254740993", "123456789012345678", "1234567890123456789",
                                   "1e22", "1e23", "1.5e-22", "1.5e-23", "4.9e-324", "2.4703282292062327e-324",
                                   "1e-400", "-0", "-0.000", "0e999999999999", "179.99999999999999999999999",
                                   "0.1", "0.30000000000000004", "-.5e+0001", "000000000000000000000000012.5",
                                   "9.999999999999999e74", "1e75", "1e400"])
def test_numbers_at_the_edges_of_the_fast_conversion(token):
    text = SMALL.replace("-0.25 180", f"-0.25 {token}")
    assert outcome(loads_bvh, text) == outcome(reference_parse, text, None)


def test_an_invalid_utf8_byte_among_the_frames_makes_names_latin1(tmp_path):
    # the whole file decides the encoding: a lone 0xA0 (a no-break space in Latin-1) between two
    # values turns the UTF-8 name below into two Latin-1 characters, as the old reader did
    raw = SMALL.replace("JOINT Spine", "JOINT \u00c9pine").encode("utf-8").replace(b"4 5 6", b"4\xa05 6")
    path = tmp_path / "mixed.bvh"
    path.write_bytes(raw)
    got = outcome(load_bvh, path)
    assert got == outcome(reference_load, raw, str(path)) and "\u00c3\u0089pine" in got[1]


def test_scipy_path_gives_the_same_bits():
    with mock.patch.object(_bvh_motion, "_euler_matches_scipy", False):
        slow = outcome(loads_bvh, SMALL)
    assert slow == outcome(loads_bvh, SMALL) == outcome(reference_parse, SMALL, None)


@pytest.mark.parametrize("order", ["".join(p) for k in (1, 2, 3) for p in itertools.permutations("XYZ", k)])
def test_compiled_euler_conversion_is_scipys_bit_for_bit(order):
    rng = np.random.default_rng(len(order) * 100 + ord(order[0]))
    angles = np.concatenate([rng.uniform(-720, 720, (20000, 3)), np.round(rng.uniform(-180, 180, (20000, 3)), 4),
                             rng.normal(size=(2000, 3)) * 10.0 ** rng.integers(-300, 70, (2000, 3))])
    got = np.empty((len(angles), 1, 4))
    _bvh_motion._euler_quats(angles, np.array([[0, 1, 2]]), np.array([["XYZ".index(a) for a in order.ljust(3, "X")]]),
                             np.array([len(order)]), got)
    want = Rotation.from_euler(order, angles[:, :len(order)], degrees=True).as_quat()
    assert got[:, 0].tobytes() == want.tobytes()


def test_block_edges_inside_crlf_and_long_lines():
    text = SMALL.replace("\n", "\r\n")
    for block in range(1, 40):
        with mock.patch.object(_bvh_motion, "BLOCK_BYTES", block):
            assert outcome(loads_bvh, text) == outcome(reference_parse, text, None)


def test_many_numbers_left_to_float_in_one_block():
    # 17-digit values go to float() one by one; a small buffer for them fills and is emptied
    # many times within one block
    rows = np.random.default_rng(3).normal(size=(60, 9)) * 100
    text = SMALL.split("Frames:")[0] + "Frames: 60\nFrame Time: 0.01\n" + "\n".join(
        " ".join(repr(float(v)) for v in row) for row in rows) + "\n"
    for capacity in (1, 20, 4096):
        with mock.patch.object(_bvh_motion, "SLOW_CAPACITY", capacity):
            assert outcome(loads_bvh, text) == outcome(reference_parse, text, None)
    bad = text.replace(repr(float(rows[41, 4])), "1e75")
    got = outcome(loads_bvh, bad)
    line = _line_of(text, "Frame Time") + 42
    assert got == outcome(reference_parse, bad, None) and f"line {line}: frame 42, value 5: expected a finite" in got[1]
