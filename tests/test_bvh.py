"""BVH reading and writing: round trips, Euler orders, malformed files, independent readers."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from fabrik.io.bvh import BVHError, load_bvh, loads_bvh, save_bvh
from fabrik.model.motion import ChannelLayout, Motion
from fabrik.model.skeleton import Skeleton
from fabrik_experiments.sample_motion import sample_walk

MOCAP = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "mocap"
MOCAP_FILES = sorted(MOCAP.glob("*.bvh")) if MOCAP.is_dir() else []
needs_mocap = pytest.mark.skipif(not MOCAP_FILES, reason=f"real mocap files not found in {MOCAP} "
                                                          "(they live outside the project, ../shared/data/mocap)")


# --- an independent reference reader ----------------------------------------------------------
# Deliberately a different code path from fabrik.io.bvh: regular expressions over the whole
# text, a recursive walk, per-frame scipy Euler conversion and explicit 4x4 transforms.

def reference_positions(text: str) -> tuple[list[str], np.ndarray]:
    """Joint names (End Sites as '<parent>/end') and world positions (F, n, 3)."""
    head, motion = re.split(r"^\s*MOTION\s*$", text, maxsplit=1, flags=re.M)
    toks = re.findall(r"\{|\}|[^\s{}]+", head)
    joints = []  # (name, parent, offset, channels)
    stack, i = [], 0
    while i < len(toks):
        t = toks[i]
        if t in ("ROOT", "JOINT"):
            joints.append([toks[i + 1], stack[-1] if stack else -1, None, []])
            i += 2
        elif t == "End":
            joints.append([joints[stack[-1]][0] + "/end", stack[-1], None, []])
            i += 2
        elif t == "{":
            stack.append(len(joints) - 1)
            i += 1
        elif t == "}":
            stack.pop()
            i += 1
        elif t == "OFFSET":
            joints[stack[-1]][2] = np.array([float(x) for x in toks[i + 1:i + 4]])
            i += 4
        elif t == "CHANNELS":
            k = int(toks[i + 1])
            joints[stack[-1]][3] = toks[i + 2:i + 2 + k]
            i += 2 + k
        else:
            i += 1
    rows = [list(map(float, line.split())) for line in motion.strip().splitlines()[2:] if line.strip()]
    data = np.array(rows).reshape(len(rows), -1)
    n_frames = data.shape[0]
    out = np.zeros((n_frames, len(joints), 3))
    world = []
    col = 0
    for j, (name, parent, offset, chans) in enumerate(joints):
        local = np.tile(np.eye(4), (n_frames, 1, 1))
        local[:, :3, 3] = offset
        rot_axes, rot_cols = "", []
        for c in chans:
            if c.endswith("position"):
                local[:, "XYZ".index(c[0]), 3] = data[:, col]
            else:
                rot_axes += c[0]
                rot_cols.append(col)
            col += 1
        if rot_axes:
            local[:, :3, :3] = Rotation.from_euler(rot_axes.upper(), data[:, rot_cols], degrees=True).as_matrix()
        m = local if parent < 0 else world[parent] @ local
        world.append(m)
        out[:, j] = m[:, :3, 3]
    return [j[0] for j in joints], out


def _positions_close(a, b, height):
    return float(np.max(np.abs(a - b))) <= 1e-6 * height


# --- hand-made files ------------------------------------------------------------------------

def small_bvh(orders=("ZXY", "YZX"), frames=None, root_channels="Xposition Yposition Zposition Zrotation Xrotation Yrotation",
              extra_position=True) -> str:
    """A 6-joint file: root, a joint with a zero OFFSET, a joint with position channels, End Sites."""
    a, b = orders
    cha = " ".join(f"{c}rotation" for c in a)
    chb = " ".join(f"{c}rotation" for c in b)
    pos = "Xposition Yposition Zposition " if extra_position else ""
    nb = 6 if extra_position else 3
    n_root = len(root_channels.split())
    text = f"""HIERARCHY
ROOT Pelvis
{{
\tOFFSET 0.5 1.0 -0.25
\tCHANNELS {n_root} {root_channels}
\tJOINT Zero
\t{{
\t\tOFFSET 0 0 0
\t\tCHANNELS 3 {cha}
\t\tJOINT Arm
\t\t{{
\t\t\tOFFSET 1.5 0.0 0.2
\t\t\tCHANNELS {nb} {pos}{chb}
\t\t\tEnd Site
\t\t\t{{
\t\t\t\tOFFSET 0.0 2.0 0.0
\t\t\t}}
\t\t}}
\t}}
\tJOINT Leg
\t{{
\t\tOFFSET 0 -1 0
\t\tCHANNELS 3 Yrotation Xrotation Zrotation
\t\tEnd Site
\t\t{{
\t\t\tOFFSET 0 -2 0.5
\t\t}}
\t}}
}}
MOTION
"""
    rng = np.random.default_rng(7)
    n = n_root + 3 + nb + 3
    rows = rng.uniform(-170, 170, size=(4, n)) if frames is None else np.asarray(frames)
    text += f"Frames: {len(rows)}\nFrame Time: 0.0333333\n"
    text += "\n".join(" ".join(f"{v:.4f}" for v in r) for r in rows) + "\n"
    return text


def test_small_file_structure():
    skel, motion = loads_bvh(small_bvh())
    assert skel.names == ("Pelvis", "Zero", "Arm", "Arm_End", "Leg", "Leg_End")
    assert skel.parents.tolist() == [-1, 0, 1, 2, 0, 4]
    assert motion.layout.end_sites == frozenset({3, 5})
    assert motion.layout.channels[2][:3] == ("Xposition", "Yposition", "Zposition")
    assert motion.n_frames == 4 and motion.frame_time == pytest.approx(0.0333333)
    assert 2 in motion.joint_translations and 1 not in motion.joint_translations
    np.testing.assert_allclose(skel.offsets[3], [0, 2, 0])


@pytest.mark.parametrize("order", ["".join(p) for p in itertools.permutations("XYZ")])
def test_euler_orders_match_scipy_and_round_trip(order, tmp_path):
    text = small_bvh(orders=(order, order[::-1]))
    skel, motion = loads_bvh(text)
    rows = np.array([list(map(float, line.split())) for line in text.strip().splitlines()[-4:]])
    # joint "Zero" (index 1): its 3 channels follow the root's 6
    expect = Rotation.from_euler(order, rows[:, 6:9], degrees=True)
    got = Rotation.from_quat(motion.rotations[:, 1])
    assert np.allclose((expect.inv() * got).magnitude(), 0.0, atol=1e-12)
    names, ref = reference_positions(text)
    h = skel.height()
    assert _positions_close(motion.world_positions(skel), ref, h)
    save_bvh(tmp_path / "o.bvh", skel, motion)
    out_text = (tmp_path / "o.bvh").read_text()
    assert f"CHANNELS 3 {' '.join(c + 'rotation' for c in order)}" in out_text  # layout kept
    skel2, motion2 = load_bvh(tmp_path / "o.bvh")
    assert skel2.names == skel.names
    assert _positions_close(motion2.world_positions(skel2), ref, h)
    assert _positions_close(reference_positions(out_text)[1], ref, h)


def test_three_channel_root_and_no_position_channels(tmp_path):
    text = small_bvh(root_channels="Zrotation Yrotation Xrotation", extra_position=False)
    skel, motion = loads_bvh(text)
    np.testing.assert_allclose(motion.root_positions, np.repeat([[0.5, 1.0, -0.25]], 4, axis=0))
    ref = reference_positions(text)[1]
    assert _positions_close(motion.world_positions(skel), ref, skel.height())
    save_bvh(tmp_path / "o.bvh", skel, motion)
    s2, m2 = load_bvh(tmp_path / "o.bvh")
    assert m2.layout == motion.layout
    assert _positions_close(m2.world_positions(s2), ref, skel.height())


def test_zero_bones_and_glued_braces():
    text = small_bvh().replace("\t{\n\t\tOFFSET 0 0 0", "{ OFFSET 0 0 0")
    skel, motion = loads_bvh(text)
    assert skel.bone_lengths[1] == 0.0
    assert _positions_close(motion.world_positions(skel), reference_positions(small_bvh())[1], skel.height())


def test_byte_order_mark_is_skipped(tmp_path):
    text = small_bvh()
    (tmp_path / "bom.bvh").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    skel, motion = load_bvh(tmp_path / "bom.bvh")
    assert skel.names[0] == "Pelvis"
    assert _positions_close(motion.world_positions(skel), reference_positions(text)[1], skel.height())


def test_a_chain_deeper_than_the_recursion_limit_reads_and_writes(tmp_path):
    import sys

    depth = sys.getrecursionlimit() + 200
    lines = ["HIERARCHY", "ROOT j0", "{", "OFFSET 0 0 0", "CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation"]
    for k in range(1, depth):
        lines += [f"JOINT j{k}", "{", "OFFSET 0 1 0", "CHANNELS 1 Zrotation"]
    lines += ["}"] * depth
    lines += ["MOTION", "Frames: 1", "Frame Time: 0.04", " ".join(["0"] * 6 + ["0.01"] * (depth - 1))]
    skel, motion = loads_bvh("\n".join(lines))
    assert skel.n_joints == depth
    save_bvh(tmp_path / "deep.bvh", skel, motion)
    s2, m2 = load_bvh(tmp_path / "deep.bvh")
    np.testing.assert_allclose(m2.world_positions(s2), motion.world_positions(skel), atol=1e-9)


def test_huge_frame_count_is_a_clear_error_not_an_allocation():
    text = small_bvh().replace("Frames: 4", "Frames: 10000000000000")
    _raises_at(text, len(text.splitlines()), "10000000000000", "only 4 frame lines")


def test_latin1_names_are_read_as_written(tmp_path):
    text = small_bvh().replace("JOINT Leg", "JOINT \u00c9paule").replace("JOINT Arm", "JOINT \u00c8paule")
    (tmp_path / "latin1.bvh").write_bytes(text.encode("latin-1"))
    skel, _ = load_bvh(tmp_path / "latin1.bvh")
    assert "\u00c9paule" in skel.names and "\u00c8paule" in skel.names


def test_joint_named_like_an_end_site_keeps_its_name(tmp_path):
    # the End Site under Arm would be "Arm_End"; a later joint of the file has that name
    text = small_bvh().replace("JOINT Leg", "JOINT Arm_End")
    skel, motion = loads_bvh(text)
    assert skel.names == ("Pelvis", "Zero", "Arm", "Arm_End2", "Arm_End", "Arm_End_End")
    assert motion.layout.end_sites == frozenset({3, 5})
    save_bvh(tmp_path / "o.bvh", skel, motion)
    s2, m2 = load_bvh(tmp_path / "o.bvh")
    assert s2.names == skel.names
    assert _positions_close(m2.world_positions(s2), motion.world_positions(skel), skel.height())


@pytest.mark.parametrize("pair", ["ZY", "XZ", "YX", "ZX"])
def test_two_rotation_channels_round_trip_beyond_90_degrees(pair, tmp_path):
    # robot-style joints with two rotation channels; angles over 90 degrees on the second axis
    # are outside the range scipy returns for the middle Euler angle
    chans = " ".join(f"{c}rotation" for c in pair)
    text = small_bvh().replace("CHANNELS 3 Yrotation Xrotation Zrotation", f"CHANNELS 2 {chans}")
    n = 6 + 3 + 6 + 2
    rows = np.random.default_rng(3).uniform(-175, 175, size=(6, n))
    rows[:, -1] = [100, -100, 135, -170, 95, 170]
    text = text.split("Frames:")[0] + "Frames: 6\nFrame Time: 0.01\n" + "\n".join(
        " ".join(f"{v:.6f}" for v in r) for r in rows) + "\n"
    skel, motion = loads_bvh(text)
    assert _positions_close(motion.world_positions(skel), reference_positions(text)[1], skel.height())
    save_bvh(tmp_path / "o.bvh", skel, motion)
    s2, m2 = load_bvh(tmp_path / "o.bvh")
    assert m2.layout == motion.layout
    assert _positions_close(m2.world_positions(s2), motion.world_positions(skel), skel.height())


def test_new_motion_saves_with_default_zyx_layout(tmp_path):
    skel = Skeleton.from_parents(["a", "b", "c", "d"], [-1, 0, 1, 1], [[0, 0, 0], [0, 1, 0], [1, 1, 0], [-1, 0.5, 0]])
    rng = np.random.default_rng(3)
    motion = Motion(Rotation.random(5 * 4, random_state=rng).as_quat().reshape(5, 4, 4), rng.normal(size=(5, 3)))
    save_bvh(tmp_path / "n.bvh", skel, motion)
    text = (tmp_path / "n.bvh").read_text()
    assert "CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation" in text
    assert "CHANNELS 3 Zrotation Yrotation Xrotation" in text
    assert text.count("End Site") == 2  # leaves c and d
    s2, m2 = load_bvh(tmp_path / "n.bvh")
    assert s2.names == ("a", "b", "b_End", "b_End2")
    assert _positions_close(m2.world_positions(s2), motion.world_positions(skel), 2.0)


def test_sample_walk_round_trip(tmp_path):
    skel, motion = sample_walk()
    save_bvh(tmp_path / "walk.bvh", skel, motion)
    s2, m2 = load_bvh(tmp_path / "walk.bvh")
    assert s2.names == skel.names
    np.testing.assert_allclose(s2.offsets, skel.offsets)
    h = skel.height()
    p = motion.world_positions(skel)
    assert _positions_close(m2.world_positions(s2), p, h)
    assert _positions_close(reference_positions((tmp_path / "walk.bvh").read_text())[1], p, h)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 9), frames=st.integers(1, 4),
       order=st.sampled_from(["".join(p) for p in itertools.permutations("XYZ")]))
def test_random_motion_round_trip(tmp_path_factory, seed, n, frames, order):
    rng = np.random.default_rng(seed)
    parents, path = [-1], [0]  # depth-first pre-order: each joint hangs from the path to the last one
    for i in range(1, n):
        path = path[: int(rng.integers(1, len(path) + 1))]
        parents.append(path[-1])
        path.append(i)
    offsets = rng.normal(size=(n, 3)) * (rng.random((n, 1)) > 0.2)  # some zero-length bones
    skel = Skeleton.from_parents([f"j{i}" for i in range(n)], parents, offsets)
    chans = tuple(() if (i in skel.leaves and i) else
                  (("Xposition", "Yposition", "Zposition") if i == 0 else ()) + tuple(c + "rotation" for c in order)
                  for i in range(n))
    layout = ChannelLayout(chans, frozenset(i for i in skel.leaves if i))
    quat = Rotation.random(frames * n, random_state=rng).as_quat().reshape(frames, n, 4)
    motion = Motion(quat, rng.normal(size=(frames, 3)) * 5, layout=layout)
    path = tmp_path_factory.mktemp("rt") / "r.bvh"
    save_bvh(path, skel, motion)
    s2, m2 = load_bvh(path)
    inner = [i for i in range(n) if i not in layout.end_sites]  # End Sites are renamed <parent>_End
    assert [s2.names[i] for i in inner] == [skel.names[i] for i in inner]
    h = max(skel.height(), 1e-3)
    p = motion.world_positions(skel)
    assert _positions_close(m2.world_positions(s2), p, h)


# --- real files -----------------------------------------------------------------------------

@needs_mocap
@pytest.mark.mocap
@pytest.mark.parametrize("path", MOCAP_FILES, ids=lambda p: p.name)
def test_mocap_read_write_read(path, tmp_path):
    skel, motion = load_bvh(path)
    assert skel.n_joints == 38 and len(motion.layout.end_sites) == 7
    assert motion.frame_time == pytest.approx(1 / 120, rel=1e-3)
    p = motion.world_positions(skel)
    h = skel.height()
    names, ref = reference_positions(path.read_text())
    assert _positions_close(p, ref, h)
    save_bvh(tmp_path / "o.bvh", skel, motion)
    s2, m2 = load_bvh(tmp_path / "o.bvh")
    assert s2.names == skel.names and m2.layout == motion.layout
    np.testing.assert_allclose(s2.offsets, skel.offsets, atol=1e-12)
    assert _positions_close(m2.world_positions(s2), p, h)


@needs_mocap
@pytest.mark.mocap
def test_mocap_against_bvhio(tmp_path):
    bvhio = pytest.importorskip("bvhio", reason="independent PyPI reader bvhio not installed")
    path = MOCAP_FILES[0]
    skel, motion = load_bvh(path)
    save_bvh(tmp_path / "o.bvh", skel, motion.frames(0, 100))
    p = motion.world_positions(skel)
    h = skel.height()
    for file in (path, tmp_path / "o.bvh"):
        root = bvhio.readAsHierarchy(str(file))
        layout = root.layout()
        assert len(layout) == skel.n_joints - len(motion.layout.end_sites)
        for f in (0, 50, 99):
            root.loadPose(f)
            for joint, _, _ in layout:
                # bvhio computes in float32: agreement to ~1e-6 of the positions' size
                assert np.max(np.abs(np.array(joint.PositionWorld) - p[f, skel.index(joint.Name)])) <= 1e-6 * h


def test_sample_walk_against_bvhio(tmp_path):
    bvhio = pytest.importorskip("bvhio", reason="independent PyPI reader bvhio not installed")
    skel, motion = sample_walk()
    save_bvh(tmp_path / "walk.bvh", skel, motion)
    p = motion.world_positions(skel)
    root = bvhio.readAsHierarchy(str(tmp_path / "walk.bvh"))
    for f in (0, 37, motion.n_frames - 1):
        root.loadPose(f)
        for joint, _, _ in root.layout():
            got = np.array(joint.PositionWorld)
            assert np.max(np.abs(got - p[f, skel.index(joint.Name)])) <= 1e-6 * skel.height()


# --- malformed files ------------------------------------------------------------------------

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
