"""BVH reading: malformed files get a BVHError naming the line and what is wrong."""

from __future__ import annotations

import numpy as np
import pytest

from bvh_samples import small_bvh
from fabrik.io.bvh import BVHError, load_bvh, loads_bvh, save_bvh
from fabrik.model.motion import ChannelLayout, Motion
from fabrik.model.skeleton import Skeleton


def _line_of(text: str, needle: str) -> int:
    return next(i + 1 for i, line in enumerate(text.splitlines()) if needle in line)


def _raises_at(text, line, *words):
    with pytest.raises(BVHError) as info:
        loads_bvh(text)
    assert info.value.line == line, str(info.value)
    assert f"line {line}" in str(info.value)
    for w in words:
        assert w in str(info.value), str(info.value)
    return info.value


def test_bvherror_is_valueerror():
    assert issubclass(BVHError, ValueError)


def test_truncated_in_frames():
    text = small_bvh()
    cut = "\n".join(text.splitlines()[:-2]) + "\n"  # two frame lines missing
    _raises_at(cut, len(cut.splitlines()), "Frames: 4", "only 2", "truncated")


def test_truncated_mid_line():
    text = small_bvh()
    cut = text[: text.rstrip().rfind(" ")]  # last frame line loses its last value
    _raises_at(cut, len(cut.splitlines()), "frame 4", "values")


def test_truncated_in_hierarchy():
    text = small_bvh()
    cut = "\n".join(text.splitlines()[:12])
    err = _raises_at(cut, 12, "missing '}'")
    assert "Arm" in str(err)


def test_wrong_value_count_on_a_frame_line():
    lines = small_bvh().splitlines()
    lines[-2] += " 1.0"
    text = "\n".join(lines)
    _raises_at(text, len(lines) - 1, "frame 3", "declares")


def test_non_number_in_frame():
    lines = small_bvh().splitlines()
    vals = lines[-3].split()
    vals[4] = "1.2.3"
    lines[-3] = " ".join(vals)
    _raises_at("\n".join(lines), len(lines) - 2, "value 5", "'1.2.3'")


def test_nan_in_frame_is_rejected():
    lines = small_bvh().splitlines()
    vals = lines[-1].split()
    vals[0] = "nan"
    lines[-1] = " ".join(vals)
    _raises_at("\n".join(lines), len(lines), "finite")


def test_non_number_in_offset():
    text = small_bvh().replace("OFFSET 1.5 0.0 0.2", "OFFSET 1.5 abc 0.2")
    _raises_at(text, _line_of(text, "abc"), "OFFSET", "'abc'")


def test_unknown_channel_name():
    text = small_bvh().replace("CHANNELS 3 Yrotation Xrotation Zrotation", "CHANNELS 3 Yrotation Wrotation Zrotation")
    _raises_at(text, _line_of(text, "Wrotation"), "unknown channel", "Wrotation")


def test_channel_count_disagrees_with_names():
    text = small_bvh().replace("CHANNELS 3 Yrotation Xrotation Zrotation", "CHANNELS 4 Yrotation Xrotation Zrotation")
    _raises_at(text, _line_of(text, "CHANNELS 4"), "declares 4")
    text = small_bvh().replace("CHANNELS 3 Yrotation Xrotation Zrotation", "CHANNELS 2 Yrotation Xrotation Zrotation")
    _raises_at(text, _line_of(text, "CHANNELS 2"), "declares 2", "more")


def test_missing_open_brace():
    text = small_bvh().replace("JOINT Leg\n\t{\n", "JOINT Leg\n")
    _raises_at(text, _line_of(text, "JOINT Leg") + 1, "expected '{'")


def test_extra_close_brace():
    lines = small_bvh().splitlines()
    k = _line_of("\n".join(lines), "MOTION") - 1
    lines.insert(k, "}")
    _raises_at("\n".join(lines), k + 1, "extra")


def test_missing_close_brace_before_motion():
    lines = small_bvh().splitlines()
    k = _line_of("\n".join(lines), "MOTION") - 1
    del lines[k - 1]  # the root's closing brace
    text = "\n".join(lines)
    _raises_at(text, _line_of(text, "MOTION"), "missing '}'", "'Pelvis'", "before MOTION")


def test_frames_count_mismatch_extra_lines():
    lines = small_bvh().splitlines()
    lines.append(lines[-1])
    _raises_at("\n".join(lines), len(lines), "more frame lines", "Frames: 4")


def test_missing_motion_and_bad_headers():
    text = small_bvh()
    head = text[: text.index("MOTION")]
    _raises_at(head, len(head.splitlines()), "missing MOTION")
    _raises_at(text.replace("Frames: 4", "Frames: four"), _line_of(text, "Frames:"), "Frames")
    _raises_at(text.replace("Frame Time: 0.0333333", "Frame Time: -1"), _line_of(text, "Frame Time"), "> 0")
    _raises_at("HIERARCHX\n" + text[10:], 1, "HIERARCHY")


def test_duplicate_joint_name():
    text = small_bvh().replace("JOINT Leg", "JOINT Arm")
    second = [i + 1 for i, line in enumerate(text.splitlines()) if "JOINT Arm" in line][1]
    _raises_at(text, second, "used twice")


def test_error_names_file(tmp_path):
    p = tmp_path / "bad.bvh"
    p.write_text("HIERARCHY\nROOT a\n{\n")
    with pytest.raises(BVHError, match=r"bad\.bvh: line \d+"):
        load_bvh(p)


def test_save_rejects_motion_its_layout_cannot_carry(tmp_path):
    skel, motion = loads_bvh(small_bvh(root_channels="Zrotation Yrotation Xrotation"))
    moved = Motion(motion.rotations, motion.root_positions + 1.0, motion.frame_time, layout=motion.layout)
    with pytest.raises(ValueError, match="no position channels"):
        save_bvh(tmp_path / "x.bvh", skel, moved)


@pytest.mark.parametrize("token", ["1_000", "\u0661", "0x10", "1,5"])
def test_python_only_number_forms_are_not_numbers(token):
    lines = small_bvh().splitlines()
    vals = lines[-1].split()
    vals[2] = token
    lines[-1] = " ".join(vals)
    _raises_at("\n".join(lines), len(lines), "value 3", "expected a number", repr(token))
    text = small_bvh().replace("OFFSET 1.5 0.0 0.2", f"OFFSET 1.5 {token} 0.2")
    _raises_at(text, _line_of(text, "OFFSET 1.5"), "OFFSET", repr(token))


@pytest.mark.parametrize("token", ["1_0", "\u0661"])
def test_counts_must_be_ascii_whole_numbers(token):
    text = small_bvh()
    frames = text.replace("Frames: 4", f"Frames: {token}")
    _raises_at(frames, _line_of(frames, "Frames:"), "Frames", "whole number")
    chans = text.replace("CHANNELS 3 Yrotation", f"CHANNELS {token} Yrotation")
    _raises_at(chans, _line_of(chans, f"CHANNELS {token}"), "channel count")


def test_only_line_breaks_split_lines():
    # a form feed or NEL inside a line neither splits it nor shifts the line numbers after it
    text = small_bvh().replace("JOINT Arm", "JOINT Arm\x85x").replace("OFFSET 0 -1 0", "OFFSET 0 -1 0\x0c")
    skel, _ = loads_bvh(text)
    assert "Arm\x85x" in skel.names
    lines = text.split("\n")
    vals = lines[-2].split()
    vals[0] = "bad"
    lines[-2] = " ".join(vals)
    _raises_at("\n".join(lines), len(lines) - 1, "'bad'")


def test_lenient_headers_blank_lines_lowercase_motion_and_ctrl_z():
    text = small_bvh()
    loose = text.replace("MOTION\n", "motion\n\n").replace("Frames: 4\n", "Frames: 4\n\n") + "\x1a"
    a, b = loads_bvh(text), loads_bvh(loose)
    np.testing.assert_array_equal(a[1].world_positions(a[0]), b[1].world_positions(b[0]))


def test_save_refuses_names_that_would_read_back_differently(tmp_path):
    skel, motion = loads_bvh(small_bvh())
    for bad in ["", " Arm", "Arm ", "a  b", "a\tb", "a{b}", "a\nb"]:
        names = list(skel.names)
        names[skel.index("Arm")] = bad
        renamed = Skeleton(tuple(names), skel.parents, skel.offsets)
        with pytest.raises(ValueError, match="cannot be written to BVH"):
            save_bvh(tmp_path / "x.bvh", renamed, motion)
    names = list(skel.names)
    names[skel.index("Arm")] = "left arm:1"
    renamed = Skeleton(tuple(names), skel.parents, skel.offsets)
    save_bvh(tmp_path / "ok.bvh", renamed, motion)
    assert "left arm:1" in load_bvh(tmp_path / "ok.bvh")[0].names


def test_a_layout_without_channels_reads_back(tmp_path):
    skel = Skeleton(("A", "A_End"), [-1, 0], [[0, 0, 0], [0, 1, 0]])
    layout = ChannelLayout(((), ()), frozenset({1}))
    motion = Motion(np.tile([0, 0, 0, 1.0], (2, 2, 1)), np.zeros((2, 3)), 0.1, layout=layout)
    save_bvh(tmp_path / "still.bvh", skel, motion)
    back_skel, back = load_bvh(tmp_path / "still.bvh")
    assert back.n_frames == 2 and back_skel.names == ("A", "A_End")


def test_keywords_in_any_case_end_site_names_and_fast_wide_hierarchies():
    """What other readers take: lower-case keywords and channel names, ``End site`` spelt any way
    and with a name after it; a hierarchy of thousands of End Sites reads in linear time."""
    text = ("hierarchy\nroot Hips\n{\n offset 0 0 0\n channels 6 xposition yposition zposition zrotation xrotation "
            "yrotation\n joint Spine\n {\n  Offset 0 1 0\n  CHANNELS 3 ZROTATION Xrotation yrotation\n"
            "  END SITE Head\n  {\n   OFFSET 0 1 0\n  }\n }\n End site\n {\n  OFFSET 1 0 0\n }\n}\n"
            "MOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0 0 0 0 90 0 0\n")
    skeleton, motion = loads_bvh(text)
    assert skeleton.names == ("Hips", "Spine", "Spine_End", "Hips_End")
    assert motion.layout.channels[1] == ("Zrotation", "Xrotation", "Yrotation")
    np.testing.assert_allclose(motion.world_positions(skeleton)[0, 2], [-1.0, 1.0, 0.0], atol=1e-12)
    many = "".join(" End Site\n {\n  OFFSET %d 1 0\n }\n" % k for k in range(3000))
    wide, _ = loads_bvh("HIERARCHY\nROOT R\n{\n OFFSET 0 0 0\n CHANNELS 0\n" + many + "}\nMOTION\nFrames: 1\n"
                        "Frame Time: 1\n\n")
    assert wide.n_joints == 3001 and wide.names[-1] == "R_End3000"


@pytest.mark.parametrize("text, message", [
    ("ROOT Sp}ine\n{\n OFFSET 0 0 0\n CHANNELS 0\n End Site\n {\n  OFFSET 0 1 0\n }\n}\n", r"line 2: unexpected '}'"),
    ("ROOT R\n{\n OFFSET 0 0 0\n CHANNELS 0\n End Site\n {\n  OFFSET 0 1e200 0\n }\n}\n",
     r"line 8: OFFSET value 2 .* below 1e\+75"),
    ("ROOT R\n{\n OFFSET 0 0 0\n CHANNELS 0\n End Site\n {\n  OFFSET 0 1 0\n }\n}\n", r"declared but only"),
])
def test_names_with_braces_huge_offsets_and_impossible_frame_counts_are_named(text, message):
    with pytest.raises(BVHError, match=message):
        loads_bvh("HIERARCHY\n" + text + "MOTION\nFrames: 1000000000000\nFrame Time: 0.1\n")


def test_save_bvh_of_a_skeleton_not_in_depth_first_order(tmp_path):
    """The frame lines follow the hierarchy's depth-first order, whatever order the skeleton's
    joints are in (index order 'a', 'b', 'a2', 'b2' wrote b's channels under a2)."""
    from scipy.spatial.transform import Rotation

    from fabrik.model.motion import ChannelLayout, Motion
    from fabrik.model.skeleton import Skeleton

    names = ["root", "a", "b", "a2", "b2", "a2_End", "b2_End"]
    skeleton = Skeleton.from_parents(names, [-1, 0, 0, 1, 2, 3, 4],
                                     [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 1, 0]])
    quats = Rotation.random(3 * 7, random_state=1).as_quat().reshape(3, 7, 4)
    motion = Motion(quats, np.arange(9.0).reshape(3, 3), 1 / 30, layout=ChannelLayout.default(skeleton))
    save_bvh(tmp_path / "t.bvh", skeleton, motion)
    skeleton2, motion2 = load_bvh(tmp_path / "t.bvh")
    assert skeleton2.names == ("root", "a", "a2", "a2_End", "b", "b2", "b2_End")
    want, got = motion.world_positions(skeleton), motion2.world_positions(skeleton2)
    for name in names:
        np.testing.assert_allclose(got[:, skeleton2.index(name)], want[:, skeleton.index(name)], atol=1e-9)


def test_huge_frame_count_is_a_clear_error_not_an_allocation():
    text = small_bvh().replace("Frames: 4", "Frames: 10000000000000")
    _raises_at(text, len(text.splitlines()), "10000000000000", "only 4 frame lines")


# --- Frame Time ----------------------------------------------------------------------------------

@pytest.mark.parametrize("frame_time, problem", [
    ("1e308", " must be from 1e-06 to 1e\\+06 seconds, got 1e308"),
    ("1e-308", " must be from 1e-06 to 1e\\+06 seconds, got 1e-308"), ("5e-324", " must be from .*, got 5e-324"),
    ("1e-7", " must be from .*, got 1e-7"), ("1000001", " must be from .*, got 1000001"),
    ("0", " must be > 0, got 0"), ("-0.0333", " must be > 0, got -0.0333"), ("nan", ": expected a finite number"),
    ("inf", ": expected a finite number"), ("1e400", ": expected a finite number"),
])
def test_a_frame_time_out_of_range_is_a_bvherror_naming_it(frame_time, problem):
    text = small_bvh().replace("Frame Time: 0.0333333", f"Frame Time: {frame_time}")
    assert f"Frame Time: {frame_time}" in text
    with pytest.raises(BVHError, match=f"line \\d+: Frame Time{problem}"):
        loads_bvh(text)


def test_the_frame_time_range_is_read_and_written_at_its_ends(tmp_path):
    for frame_time in ("1e-6", "1e6", "0.0333333"):
        skeleton, motion = loads_bvh(small_bvh().replace("Frame Time: 0.0333333", f"Frame Time: {frame_time}"))
        assert motion.frame_time == float(frame_time)
        save_bvh(tmp_path / "t.bvh", skeleton, motion)
        assert load_bvh(tmp_path / "t.bvh")[1].frame_time == float(frame_time)
    with pytest.raises(ValueError, match="frame_time 1e-07 cannot be written"):
        save_bvh(tmp_path / "t.bvh", skeleton, Motion(motion.rotations, motion.root_positions, 1e-7,
                                                      motion.joint_translations, motion.layout))
