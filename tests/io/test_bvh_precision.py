"""Fixed bones judged by the digits a BVH file was printed with (issue 45).

Position channels on every joint (Blender's exports) hold each bone's translation rounded to the
file's digits, so they vary over the frames by that rounding; ``load_bvh`` records the digits
(``Motion.precision``) and ``prepare_take`` takes a joint's channels for a fixed bone while they
vary by no more than ``PRINT_MARGIN`` times what the digits allow, and refuses a bone that
stretches, naming the joint, its range and the threshold. The takes here are written by
``fabrik_experiments.blender_style`` from a CMU take (and from the sample walk, which needs no
data): world positions rounded to 6, 7 or 9 significant digits or 6 decimals, each joint's
channels its rounded position less its parent's in the parent's frame.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik.io import _bvh_motion
from fabrik.io._bvh_common import printed_digits
from fabrik.io.bvh import _parse_head, load_bvh, loads_bvh, save_bvh
from fabrik.mocap import prepare_take, reconstruct_take
from fabrik.io.rounding import PRINT_MARGIN
from fabrik.model.motion import PrintedPrecision
from fabrik_experiments.blender_style import write_blender_style
from fabrik_experiments.sample_motion import sample_walk

from bvh_samples import small_bvh

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mocap"
CMU = MOCAP / "cmu_131_01.bvh"
BANDAI = sorted((MOCAP / "bandai2").glob("*.bvh")) if (MOCAP / "bandai2").is_dir() else []
needs_cmu = pytest.mark.skipif(not CMU.is_file(), reason=f"the CMU take {CMU} is not there")
#: Blender-style printings: (digits, fixed decimals instead of significant digits, float32 world positions)
PRINTINGS = [(6, False, False), (7, False, False), (9, False, False), (6, True, False), (6, True, True),
             (9, False, True)]


@pytest.fixture(scope="module")
def cmu():
    if not CMU.is_file():
        pytest.skip(f"the CMU take {CMU} is not there")
    skeleton, motion = load_bvh(CMU)
    return skeleton, motion.frames(0, 240)


@pytest.fixture(scope="module")
def walk():
    return sample_walk(n_frames=40)


# --- the digits of a printed number -------------------------------------------------------------

@pytest.mark.parametrize("token, expected", [
    ("0.0955832", (7, 6)), ("123.456", (3, 6)), ("15.735700", (6, 8)), ("-1.5e-05", (6, 2)), ("1.5e3", (-2, 2)),
    ("1E+05", (-5, 1)), ("100", (0, 3)), ("5.", (0, 1)), ("+.5", (1, 1)), ("0.000001", (6, 1)), ("0", None),
    ("-0.000000", None), ("0e5", None), ("1e-0000007", (7, 1)),
    ("1e" + "9" * 30, (-999999, 1)),  # the exponent as the scanner counts it: it stops growing past 100000
])
def test_printed_digits_are_the_place_of_the_last_digit_and_the_significant_ones(token, expected):
    assert printed_digits(token) == expected


@pytest.mark.parametrize("value, place, significant, expected", [
    (123.456, 3, 6, 5e-4),         # 6 significant digits: the last one is worth 1e-3
    (0.0955832, 7, 6, 5e-8),
    (0.5, 7, 6, 5e-7),              # "%g" dropped the zeros of 0.500000: its digits are the column's
    (0.095583, 6, 9, 5e-7),         # "%.6f": 6 decimals, whatever the size
    (543.347, 6, 9, 5e-7),
    (0.0, 6, 9, 5e-7),
    (-1234.5, 1, 5, 0.05),
])
def test_rounding_is_half_the_coarser_of_the_decimals_and_the_significant_digits(value, place, significant,
                                                                                   expected):
    assert PrintedPrecision.rounding(value, place, significant) == pytest.approx(expected, rel=1e-12)


_HEAD = ("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
         "Yrotation\n JOINT Arm\n {\n  OFFSET 0.25 1.5 -0.125\n  CHANNELS 3 Xposition Yposition Zposition\n  End "
         "Site\n  {\n   OFFSET 0 1 0\n  }\n }\n}\nMOTION\n")

numbers = st.one_of(
    st.builds(lambda v, d: f"{v:.{d}f}", st.floats(-1e4, 1e4), st.integers(0, 9)),
    st.builds(lambda v, d: f"{v:.{d}g}", st.floats(-1e6, 1e6), st.integers(1, 12)),
    st.builds(lambda v, d: f"{v:.{d}e}", st.floats(-1e30, 1e30), st.integers(0, 20)),
    st.floats(-1e70, 1e70).map(repr),
    st.sampled_from(["0", "-0", "0.000000", "5.", "+.5", "1" * 25, "0." + "0" * 30 + "17", "1e-400", "12345e-3"]),
)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(numbers, min_size=9, max_size=9), min_size=1, max_size=5),
       careful=st.lists(st.booleans(), min_size=5, max_size=5))
def test_the_compiled_scanner_counts_digits_as_printed_digits(rows, careful):
    """Per column, the finest place and the most significant digits among the numbers with a
    non-zero digit, whether a line is read by the compiled scanner (numbers it converts, numbers
    it leaves to float()) or by the careful check (a line holding a form feed or a NEL)."""
    lines = [" ".join(r) + (" \x0c" if c else "") for r, c in zip(rows, careful)]
    raw = (_HEAD + f"Frames: {len(rows)}\nFrame Time: 0.01\n" + "\n".join(lines) + "\n").encode()
    stream = io.BytesIO(raw)
    decode = _bvh_motion.LineDecoder(stream)
    head, start = _bvh_motion.read_head(stream, decode)
    _, layout, n_frames, _, _ = _parse_head(head, None)
    _, places, digits = _bvh_motion.read_frames(stream, start, len(head) + 1, n_frames, 9, decode, None)
    for k in range(9):
        shown = [printed_digits(r[k]) for r in rows if printed_digits(r[k]) is not None]
        assert places[k] == max((p for p, _ in shown), default=_bvh_motion.NO_DIGITS)
        assert digits[k] == max((d for _, d in shown), default=0)


def test_a_loaded_motion_carries_its_digits_per_channel_and_for_the_offsets():
    text = small_bvh(frames=np.zeros((1, 18)))
    text = text[:text.rindex("Frame Time")] + "Frame Time: 0.0333333\n0.5 1.25 -2 10 20 30 0 0 0 1.500000 0 0.2" + \
        " 0 0 0 0 0 0\n"
    _, motion = loads_bvh(text)
    p = motion.precision
    # columns: the root's 6, Zero's 3 rotations, Arm's 3 positions and 3 rotations, Leg's 3 rotations;
    # the columns of zeros take the position channels' digits (6 places and 7 digits: 1.500000)
    assert p.places.tolist() == [1, 2, 0, 0, 0, 0, 6, 6, 6, 6, 6, 1, 6, 6, 6, 6, 6, 6]
    assert p.significant.tolist() == [1, 3, 1, 2, 2, 2, 7, 7, 7, 7, 7, 1, 7, 7, 7, 7, 7, 7]
    assert (p.coordinate_place, p.coordinate_significant) == (6, 7)
    assert (p.offset_place, p.offset_significant) == (2, 2)  # -0.25 and 1.0 among small_bvh's OFFSETs
    assert motion.frames(0, 1).precision is p


# --- Blender-style exports ------------------------------------------------------------------------

@needs_cmu
@pytest.mark.parametrize("digits, fixed, float32", PRINTINGS)
def test_a_blender_export_of_a_cmu_take_reads_as_fixed_bones(cmu, tmp_path, digits, fixed, float32):
    skeleton, motion = cmu
    path = write_blender_style(tmp_path / "b.bvh", skeleton, motion, digits=digits, fixed=fixed, float32=float32)
    s, m = load_bvh(path)
    assert all(len(c) == 6 for j, c in enumerate(m.layout.channels) if j not in m.layout.end_sites)
    assert m.joint_translations  # the channels vary: the bones are not printed the same in every frame
    take = prepare_take(s, m)
    assert take.body is s and (take.joints == np.arange(s.n_joints)).all()
    assert any("vary over the frames" in note and "each at its OFFSET" in note for note in take.notes)
    # the bones the solvers keep are the OFFSETs, within the file's rounding of the recorded translations
    lengths = np.linalg.norm(m.local_translations(s)[:, 1:], axis=2)
    assert 0 < np.abs(lengths - s.bone_lengths[1:]).max() <= 1e-4 * s.height()


@needs_cmu
@pytest.mark.parametrize("joint", ["LeftKnee", "Chest", "RightElbow", "LeftHip"])
@pytest.mark.parametrize("digits, fixed", [(6, False), (7, False), (9, False), (6, True)])
def test_a_bone_stretching_by_one_percent_is_refused_naming_it(cmu, tmp_path, joint, digits, fixed):
    skeleton, motion = cmu
    path = write_blender_style(tmp_path / "s.bvh", skeleton, motion, digits=digits, fixed=fixed,
                               stretch={joint: 0.01})
    parent = skeleton.names[skeleton.parents[skeleton.index(joint)]]
    with pytest.raises(ValueError, match=rf"joint '{joint}' moves relative to its parent '{parent}' in its position "
                                         r"channels \(bone length [\d.]+ to [\d.]+ over the frames; its [XYZ] "
                                         r"translation spans [\d.e-]+, more than the [\d.e-]+ the file's printed "
                                         r"digits allow"):
        prepare_take(*load_bvh(path))


@needs_cmu
def test_fabrik_reconstruct_takes_a_six_digit_blender_export_and_says_how(cmu, tmp_path, capsys):
    from fabrik.cli import main

    skeleton, motion = cmu
    path = write_blender_style(tmp_path / "blender.bvh", skeleton, motion.frames(0, 60), digits=6)
    assert main(["reconstruct", str(path), "--methods", "fabrik"]) == 0
    out = capsys.readouterr().out
    assert "note: the position channels of 20 joint(s) vary over the frames" in out
    stretched = write_blender_style(tmp_path / "stretched.bvh", skeleton, motion.frames(0, 60), digits=6,
                                    stretch={"RightKnee": 0.01})
    assert main(["reconstruct", str(stretched), "--methods", "fabrik"]) == 2
    assert "joint 'RightKnee' moves relative to its parent 'RightHip'" in capsys.readouterr().err


@pytest.mark.parametrize("digits, fixed, float32", PRINTINGS)
def test_a_blender_export_of_the_sample_walk_reconstructs_as_the_walk(walk, tmp_path, digits, fixed, float32):
    skeleton, motion = walk
    path = write_blender_style(tmp_path / "w.bvh", skeleton, motion, digits=digits, fixed=fixed, float32=float32)
    s, m = load_bvh(path)
    rec = reconstruct_take(s, m)
    assert rec.body is s and rec.solution.reached.all()
    with pytest.raises(ValueError, match="joint 'LeftForeArm' moves relative to its parent 'LeftArm'"):
        prepare_take(*load_bvh(write_blender_style(tmp_path / "s.bvh", skeleton, motion, digits=digits, fixed=fixed,
                                                   float32=float32, stretch={"LeftForeArm": 0.01})))


def test_channels_varying_by_their_rounding_away_from_the_offset_take_their_mean_length(walk, tmp_path):
    """A joint whose OFFSET is not its channels' translation (a bone the animation moved once)
    gets their mean direction at their mean length over the frames, and the take says so."""
    skeleton, motion = walk
    path = write_blender_style(tmp_path / "w.bvh", skeleton, motion, digits=6)
    fore = skeleton.index("LeftForeArm")
    old = "OFFSET " + " ".join(f"{v:.6g}" for v in skeleton.offsets[fore])
    new = "OFFSET " + " ".join(f"{v:.6g}" for v in skeleton.offsets[fore] * 0.8)
    text = path.read_text()
    at = text.index(old, text.index("JOINT LeftForeArm"))
    path.write_text(text[:at] + new + text[at + len(old):])
    s, m = load_bvh(path)
    take = prepare_take(s, m)
    t = m.joint_translations[fore]
    assert np.ptp(t, axis=0).max() > 0  # the channels vary
    bone = take.body.offsets[fore]
    assert np.linalg.norm(bone) == pytest.approx(np.linalg.norm(t, axis=1).mean(), rel=1e-12)
    direction = t.mean(axis=0) / np.linalg.norm(t.mean(axis=0))
    np.testing.assert_allclose(bone / np.linalg.norm(bone), direction, atol=1e-15)
    others = np.delete(np.arange(s.n_joints), [0, fore])
    np.testing.assert_array_equal(take.body.offsets[others], s.offsets[others])
    assert any("each at its mean length over the frames for 1 (LeftForeArm)" in note for note in take.notes)
    assert any("not the OFFSETs, of 1 joint(s) (LeftForeArm)" in note for note in take.notes)


def test_a_wobble_above_the_printed_digits_is_a_bone_changing_length(walk, tmp_path):
    """3e-6 of the body printed with 9 decimals is a thousand times the file's rounding (the same
    wobble printed with 3 decimals is a fixed bone: test_reconstruct)."""
    skeleton, motion = walk
    spine = skeleton.index("Spine")
    scale = 1.0 + 3e-6 * skeleton.height() / np.linalg.norm(skeleton.offsets[spine]) * (-1.0) ** np.arange(40)
    translations = dict(motion.joint_translations)
    translations[spine] = skeleton.offsets[spine] * scale[:, None]
    channels = list(motion.layout.channels)
    channels[spine] = ("Xposition", "Yposition", "Zposition") + channels[spine]
    wobbly = fabrik.Motion(motion.rotations, motion.root_positions, motion.frame_time, translations,
                           type(motion.layout)(tuple(channels), motion.layout.end_sites))
    assert prepare_take(skeleton, wobbly).body.offsets[spine] == pytest.approx(skeleton.offsets[spine])  # in memory
    save_bvh(tmp_path / "w9.bvh", skeleton, wobbly, decimals=9)
    with pytest.raises(ValueError, match="joint 'Spine' moves .* the file's printed digits allow"):
        prepare_take(*load_bvh(tmp_path / "w9.bvh"))
    save_bvh(tmp_path / "w3.bvh", skeleton, wobbly, decimals=3)
    assert prepare_take(*load_bvh(tmp_path / "w3.bvh")).body.bone_lengths[spine] > 0


@pytest.mark.skipif(not BANDAI, reason="the bandai2 takes are not there")
def test_bandai2_channels_are_the_files_offsets():
    """Position channels on every joint equal to the OFFSETs to the files' digits: the body is the
    file's skeleton below the moving Hips, its bones the OFFSETs bit for bit."""
    for path in BANDAI:
        s, m = load_bvh(path)
        take = prepare_take(s, m)
        assert take.joints.tolist() == list(range(1, s.n_joints))
        np.testing.assert_array_equal(take.body.offsets[1:], s.offsets[2:])
        assert len(take.notes) == 1 and "'Hips' is the root here" in take.notes[0]


def test_the_margin_and_the_message_of_a_motion_made_in_memory(walk):
    skeleton, motion = walk
    spine = skeleton.index("Spine")
    translations = dict(motion.joint_translations)
    translations[spine] = skeleton.offsets[spine] * np.linspace(1.0, 1.01, 40)[:, None]
    channels = list(motion.layout.channels)
    channels[spine] = ("Xposition", "Yposition", "Zposition") + channels[spine]
    moving = fabrik.Motion(motion.rotations, motion.root_positions, motion.frame_time, translations,
                           type(motion.layout)(tuple(channels), motion.layout.end_sites))
    assert moving.precision is None and PRINT_MARGIN >= 2
    with pytest.raises(ValueError, match="allowed for a motion not read from a file"):
        prepare_take(skeleton, moving)
