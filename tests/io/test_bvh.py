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

import fabrik
from fabrik.io.bvh import load_bvh, loads_bvh, save_bvh
from fabrik.model.motion import ChannelLayout, Motion
from fabrik.model.skeleton import Skeleton
from fabrik_experiments.sample_motion import sample_walk

from bvh_samples import small_bvh

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mocap"
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


def test_save_bvh_into_a_missing_folder(tmp_path):
    from fabrik_experiments.sample_motion import sample_walk

    skeleton, motion = sample_walk()
    missing = tmp_path / "not_here"
    with pytest.raises(FileNotFoundError, match="the folder .*not_here.* does not exist"):
        fabrik.save_bvh(missing / "walk.bvh", skeleton, motion)
    assert not missing.exists()
    fabrik.save_bvh(tmp_path / "walk.bvh", skeleton, motion)
    assert (tmp_path / "walk.bvh").exists()
