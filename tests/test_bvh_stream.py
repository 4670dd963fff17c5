"""BVH counts (``CHANNELS``, ``Frames:``) of any length: a count too long for Python's ``int()``
is a ``BVHError`` naming the file and the line, not the interpreter's ``ValueError``."""

from __future__ import annotations

import pytest

from fabrik.io.bvh import BVHError, load_bvh, loads_bvh

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
    a, b = loads_bvh(padded), loads_bvh(SMALL)
    assert a[0].names == b[0].names and a[1].layout == b[1].layout and a[1].n_frames == b[1].n_frames == 2
