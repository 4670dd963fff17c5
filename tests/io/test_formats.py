"""Motion files by suffix (``fabrik.load_motion``, ``fabrik.save_motion``, ``fabrik.io.formats``)
and joint positions over time as ``.npz`` (``fabrik.io.positions``): the round trip, every
malformed archive refused with its own error, and a CMU take read from positions reconstructed
as its BVH is by ``fabrik reconstruct``, ``fabrik view take``, ``fabrik render take`` and
``fabrik bench arm``."""

import io
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.io.formats import UnknownFormatError, load_motion, save_motion
from fabrik.io.positions import PositionsError, distance_tolerance, skeleton_and_motion
from fabrik.mocap import prepare_take, reconstruct_take, save_take


def small_take(n_frames: int = 12, seed: int = 0):
    """A 7-joint body (a pelvis with two legs and a spine, zero-length hip joints as CMU's) in a
    random smooth motion: ``(skeleton, motion)``."""
    names = ("hips", "l_hipjoint", "l_knee", "l_foot", "r_hipjoint", "r_knee", "chest")
    parents = [-1, 0, 1, 2, 0, 4, 0]
    offsets = np.array([[0, 90, 0], [0, 0, 0], [10, -45, 1], [0, -42, 3], [0, 0, 0], [-10, -45, 1], [0, 30, -2.0]])
    skeleton = fabrik.Skeleton.from_parents(names, parents, offsets)
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n_frames)[:, None]
    rotvec = rng.normal(0.0, 0.4, (1, 7, 3)) + np.sin(6.0 * t)[..., None] * rng.normal(0.0, 0.3, (1, 7, 3))
    quats = Rotation.from_rotvec(rotvec.reshape(-1, 3)).as_quat().reshape(n_frames, 7, 4)
    root = np.array([0.0, 90.0, 0.0]) + t * [0.0, 0.0, 120.0]
    return skeleton, fabrik.Motion(quats, root, 1.0 / 60.0)


def write_npz(path, **arrays):
    with open(path, "wb") as stream:
        np.savez(stream, **arrays)
    return path


def positions_archive(skeleton, motion, **extra):
    """The arrays of a pose estimator's archive for ``motion``: positions, parents, names, fps."""
    return dict(positions=motion.world_positions(skeleton), parents=np.asarray(skeleton.parents),
                names=np.array(skeleton.names), fps=1.0 / motion.frame_time, **extra)


# --- the registry --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["take.bvh", "TAKE.BVH", "take.npz", "Take.NPZ"])
def test_the_suffix_picks_the_format_in_any_case(tmp_path, name):
    skeleton, motion = small_take()
    path = tmp_path / name
    save_motion(path, skeleton, motion)
    assert [p.name for p in tmp_path.iterdir()] == [name]  # np.savez added no second ".npz"
    assert path.read_bytes().startswith(b"PK" if name.lower().endswith(".npz") else b"HIERARCHY")
    back, again = load_motion(path)
    assert np.allclose(again.world_positions(back), motion.world_positions(skeleton), atol=1e-6)
    assert fabrik.load_motion is load_motion and fabrik.save_motion is save_motion
    assert {"load_motion", "save_motion", "UnknownFormatError", "PositionsError"} <= set(fabrik.__all__)


@pytest.mark.parametrize("name", ["take.c3d", "take", "take.bvh.gz", "take.npz.txt"])
def test_an_unknown_suffix_is_refused_naming_the_known_ones(tmp_path, name):
    skeleton, motion = small_take()
    for call in (lambda: load_motion(tmp_path / name), lambda: save_motion(tmp_path / name, skeleton, motion)):
        with pytest.raises(UnknownFormatError, match=r"motion files are \.bvh \(BVH\), \.npz \(joint positions\)"):
            call()
    assert issubclass(UnknownFormatError, ValueError)
    assert not list(tmp_path.iterdir())


def test_a_bare_npy_is_refused_saying_what_an_npz_holds(tmp_path):
    skeleton, motion = small_take()
    np.save(tmp_path / "take.npy", motion.world_positions(skeleton))
    for call in (lambda: load_motion(tmp_path / "take.npy"),
                 lambda: save_motion(tmp_path / "out.npy", skeleton, motion)):
        with pytest.raises(PositionsError, match=r"one array, the positions alone.*parents=parents \(n,\), "
                                                 r"names=names \(n,\), fps=fps"):
            call()
    assert not (tmp_path / "out.npy").exists()


def test_writer_options_are_checked_by_format(tmp_path):
    skeleton, motion = small_take()
    with pytest.raises(ValueError, match="the joint positions writer .* takes no option decimals; its options: units"):
        save_motion(tmp_path / "a.npz", skeleton, motion, decimals=3)
    with pytest.raises(ValueError, match="the BVH writer .* takes no option units; its options: layout, decimals"):
        save_motion(tmp_path / "a.bvh", skeleton, motion, units="cm")
    save_motion(tmp_path / "a.npz", skeleton, motion, units="cm")
    save_motion(tmp_path / "a.bvh", skeleton, motion, decimals=4)
    with np.load(tmp_path / "a.npz") as archive:
        assert str(archive["units"]) == "cm"
    first_frame = (tmp_path / "a.bvh").read_text().split("Frame Time:")[1].splitlines()[1].split()
    assert max(len(v.partition(".")[2]) for v in first_frame) == 4  # decimals=4 reached save_bvh
    with pytest.raises(FileNotFoundError, match="the folder .* does not exist"):
        save_motion(tmp_path / "missing" / "a.npz", skeleton, motion)


# --- round trips ---------------------------------------------------------------------------------
@st.composite
def trees_in_motion(draw):
    """A random skeleton (zero-length bones among them) in a random motion of a few frames."""
    n = draw(st.integers(2, 8))
    parents = [-1] + [draw(st.integers(0, i - 1)) for i in range(1, n)]
    coordinate = st.floats(-2.0, 2.0, allow_nan=False)
    offsets = np.array([[draw(coordinate) for _ in range(3)] for _ in range(n)])
    for j in range(1, n):
        if draw(st.integers(0, 4)) == 0 or np.linalg.norm(offsets[j]) < 1e-3:
            offsets[j] = 0.0
    frames = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    quats = Rotation.random(frames * n, random_state=seed).as_quat().reshape(frames, n, 4)
    skeleton = fabrik.Skeleton.from_parents([f"j{k}" for k in range(n)], parents, offsets)
    frame_time = draw(st.sampled_from([1 / 24, 1 / 120]))
    return skeleton, fabrik.Motion(quats, rng.uniform(-3.0, 3.0, (frames, 3)), frame_time)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees_in_motion())
def test_npz_round_trip_keeps_the_skeleton_and_the_positions(tmp_path_factory, take):
    skeleton, motion = take
    path = tmp_path_factory.mktemp("rt") / "take.npz"
    save_motion(path, skeleton, motion)
    back, again = load_motion(path)
    assert back.names == skeleton.names
    assert np.array_equal(back.parents, skeleton.parents) and np.array_equal(back.offsets, skeleton.offsets)
    assert again.frame_time == motion.frame_time and again.n_frames == motion.n_frames
    size = max(float(np.abs(motion.world_positions(skeleton)).max()), 1.0)
    assert np.abs(again.world_positions(back) - motion.world_positions(skeleton)).max() <= 1e-9 * size
    # written again, the positions stay (the fitted rotations may roll a bone, which moves nothing)
    save_motion(path, back, again)
    third = load_motion(path)
    assert np.abs(third[1].world_positions(third[0]) - motion.world_positions(skeleton)).max() <= 1e-9 * size


def test_without_offsets_the_rest_pose_is_the_first_frame(tmp_path):
    skeleton, motion = small_take()
    positions = motion.world_positions(skeleton)
    read, fitted = load_motion(write_npz(tmp_path / "t.npz", **positions_archive(skeleton, motion)))
    assert np.allclose(read.rest_positions(), positions[0], atol=1e-12)
    assert np.array_equal(read.bone_lengths == 0.0, skeleton.bone_lengths == 0.0)  # the zero-length hip joints
    assert np.allclose(fitted.rotations[0], [0, 0, 0, 1], atol=1e-12)  # frame 0 is the rest pose itself
    assert np.abs(fitted.world_positions(read) - positions).max() < 1e-9
    assert fitted.frame_time == pytest.approx(1 / 60)


def test_joints_out_of_topological_order_are_reordered(tmp_path):
    skeleton, motion = small_take()
    positions = motion.world_positions(skeleton)
    order = np.array([3, 6, 2, 0, 5, 1, 4])  # the root fourth, feet before knees
    where = np.argsort(order)
    parents = np.array([where[skeleton.parents[j]] if skeleton.parents[j] >= 0 else -1 for j in order])
    read, fitted = load_motion(write_npz(tmp_path / "t.npz", positions=positions[:, order], parents=parents,
                                         names=np.array(skeleton.names)[order], frame_time=motion.frame_time))
    # each joint as early as the file's order allows once its parent is placed
    assert read.names == ("hips", "chest", "l_hipjoint", "l_knee", "l_foot", "r_hipjoint", "r_knee")
    assert all(0 <= read.parents[j] < j for j in range(1, read.n_joints))
    got = fitted.world_positions(read)
    for k, name in enumerate(read.names):
        assert np.abs(got[:, k] - positions[:, skeleton.index(name)]).max() < 1e-9


def test_float32_positions_are_read_to_their_precision_and_a_stretch_beyond_it_refused(tmp_path):
    skeleton, motion = small_take(40)
    positions = motion.world_positions(skeleton)
    single = positions.astype(np.float32)
    _, allowed = distance_tolerance(np.float32, float(np.abs(single).max()))
    read, fitted = load_motion(write_npz(tmp_path / "t.npz", **dict(positions_archive(skeleton, motion),
                                                                    positions=single)))
    assert np.abs(fitted.world_positions(read) - single).max() <= allowed

    def grown(total):  # the shin grows by ``total`` over the take, the foot carried along
        p = positions.copy()
        knee, foot = skeleton.index("l_knee"), skeleton.index("l_foot")
        bone = p[:, foot] - p[:, knee]
        p[:, foot] += bone / np.linalg.norm(bone, axis=1, keepdims=True) * np.linspace(0.0, total, len(p))[:, None]
        return p

    arrays = positions_archive(skeleton, motion)
    load_motion(write_npz(tmp_path / "t.npz", **dict(arrays, positions=grown(0.25 * allowed))))
    with pytest.raises(PositionsError, match=r"the bone from 'l_knee' to 'l_foot' changes length: .* \(frames 0 and "
                                             r"39\) over the frames, by more than the .* the data's precision allows"):
        load_motion(write_npz(tmp_path / "t.npz", **dict(arrays, positions=grown(4 * allowed))))


def test_a_reference_node_above_the_body_carries_it_as_prepare_take_reads_it(tmp_path):
    """A still ``ground`` root whose one child, the hips, walks away (a game rig's root, bandai2's
    joint_Root): the bone above the whole body changes length; the body is read below it."""
    skeleton, motion = small_take()
    body = motion.world_positions(skeleton)
    positions = np.concatenate([np.zeros((len(body), 1, 3)), body], axis=1)
    parents = np.concatenate([[-1], np.asarray(skeleton.parents) + 1])
    parents[1] = 0
    names = np.array(("ground", *skeleton.names))
    read, fitted = load_motion(write_npz(tmp_path / "t.npz", positions=positions, parents=parents, names=names, fps=60))
    assert np.abs(fitted.world_positions(read) - positions).max() < 1e-9
    take = prepare_take(read, fitted)
    assert take.body.names == skeleton.names and "'hips' is the root here" in take.notes[0]
    # a bone that changes length with nothing below it carries no body
    two = positions[:, :2] * np.linspace(1.0, 1.1, len(positions))[:, None, None]
    with pytest.raises(PositionsError, match="the bone from 'ground' to 'hips' changes length"):
        load_motion(write_npz(tmp_path / "t.npz", positions=two, parents=[-1, 0], names=names[:2], fps=60))
    # a bone that changes length inside the body is refused, naming it
    positions[:, 3] *= np.linspace(1.0, 1.02, len(positions))[:, None]
    with pytest.raises(PositionsError, match="the bone from 'l_knee' to 'l_foot' changes length.*except above the "
                                             "whole body"):
        load_motion(write_npz(tmp_path / "t.npz", positions=positions, parents=parents, names=names, fps=60))


def test_children_that_move_apart_are_refused_naming_them(tmp_path):
    """A pelvis whose thigh and spine bones hang from it directly, the angle between them changing
    (a pose estimator's skeleton): one rotation cannot turn them."""
    names = ("pelvis", "thigh", "spine")
    frames = 10
    angle = np.linspace(0.0, 0.5, frames)
    positions = np.zeros((frames, 3, 3))
    positions[:, 1] = np.stack([np.zeros(frames), -np.cos(angle), np.sin(angle)], axis=1) * 40
    positions[:, 2] = [0.0, 30.0, 0.0]
    with pytest.raises(PositionsError, match="the children 'thigh' and 'spine' of 'pelvis' move apart: their distance "
                                             "is 67.869 to 70 over the frames \\(70 at rest\\).* each of them needs a joint of its own"):
        load_motion(write_npz(tmp_path / "t.npz", positions=positions, parents=[-1, 0, 0], names=np.array(names), fps=30))


# --- malformed archives --------------------------------------------------------------------------
def _good():
    skeleton, motion = small_take(6)
    return positions_archive(skeleton, motion)


def _with(**changes):
    arrays = _good()
    for key, value in changes.items():
        if value is None:
            arrays.pop(key)
        else:
            arrays[key] = value(arrays) if callable(value) else value
    return arrays


def _nan(a):
    p = a["positions"].copy()
    p[2, 1, 0] = np.nan
    return p


MALFORMED = {
    "positions missing": (_with(positions=None), r"missing 'positions': .* this one holds fps, names, parents"),
    "parents and names missing": (_with(parents=None, names=None), r"missing 'parents', 'names'"),
    "no frame rate": (_with(fps=None), r"no frame rate: add fps .* or frame_time"),
    "positions 2-D": (_with(positions=lambda a: a["positions"][0]), r"positions must have shape \(F, n, 3\)"),
    "positions in 2-D space": (_with(positions=lambda a: a["positions"][..., :2]), r"got \(6, 7, 2\)"),
    "no frames": (_with(positions=lambda a: a["positions"][:0]), r"F >= 1 frames .* got \(0, 7, 3\)"),
    "positions NaN": (_with(positions=_nan), r"positions\[2, 1\] is \[nan, .*NaN or inf"),
    "positions text": (_with(positions=np.array([["a"]])), r"positions must hold real numbers .* got text"),
    "positions complex": (_with(positions=lambda a: a["positions"] + 1j), r"got complex numbers"),
    "positions huge": (_with(positions=lambda a: a["positions"] * 1e80), r"coordinates must stay below 1e\+75"),
    "parents short": (_with(parents=np.array([-1, 0, 1])), r"parents must have shape \(7,\)"),
    "two roots": (_with(parents=np.array([-1, 0, 1, 2, -1, 4, 0])), r"one root \(-1\); it names 2: joints 0 \('hips'\), "
                                                                     r"4 \('r_hipjoint'\)"),
    "no root": (_with(parents=np.array([6, 0, 1, 2, 0, 4, 0])), r"one root \(-1\); it names 0$"),
    "a cycle": (_with(parents=np.array([-1, 2, 1, 2, 0, 4, 0])),
                r"not a tree: the joints 1 \('l_hipjoint'\) -> 2 \('l_knee'\) -> 1 \('l_hipjoint'\)"),
    "parent out of range": (_with(parents=np.array([-1, 0, 1, 9, 0, 4, 0])), r"parents\[3\] \('l_foot'\) is 9"),
    "parents not whole": (_with(parents=np.array([-1, 0, 1, 2.5, 0, 4, 0])), r"parents must be whole numbers"),
    "names repeated": (_with(names=np.array(["a", "b", "c", "d", "b", "f", "g"])),
                       r"names\[1\] and names\[4\] are both 'b'; joint names must be unique"),
    "names short": (_with(names=np.array(["a", "b"])), r"names must have shape \(7,\)"),
    "names numbers": (_with(names=np.arange(7)), r"names must be strings .* got int64"),
    "names objects": (_with(names=np.array(list("abcdefg"), dtype=object)), r"'names' holds Python objects.* "
                                                                            r"np.array\(names, dtype=str\)"),
    "fps zero": (_with(fps=0.0), r"fps must be a finite number > 0, got 0.0"),
    "fps NaN": (_with(fps=np.nan), r"fps must be a finite number > 0, got nan"),
    "fps huge": (_with(fps=1e9), r"frame time must be from 1e-06 to 1e\+06 seconds .* got 1e-09 s"),
    "fps tiny": (_with(fps=1e-9), r"got 1e\+09 s"),
    "fps an array": (_with(fps=np.array([30.0, 60.0])), r"fps must be one number, got an array of shape \(2,\)"),
    "fps text": (_with(fps=np.str_("30")), r"fps must hold real numbers .* got text"),
    "rates disagree": (_with(frame_time=1 / 30), r"fps 60 and frame_time 0.0333333 disagree"),
    "offsets shape": (_with(offsets=np.zeros((7, 2))), r"offsets must have shape \(7, 3\)"),
    "offsets NaN": (_with(offsets=np.full((7, 3), np.nan)), r"offsets\[0\] \('hips'\) is not finite"),
    "offsets of other bones": (_with(offsets=np.ones((7, 3))),
                               r"the bone from 'l_hipjoint' to 'l_knee' changes length: 46.1086 to 46.1086 .* "
                               r"against its rest offset's 1.73205 \(offsets\)"),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_a_malformed_archive_says_what_is_wrong(tmp_path, case):
    arrays, message = MALFORMED[case]
    path = write_npz(tmp_path / "bad.npz", **arrays)
    with pytest.raises(PositionsError, match=message) as caught:
        load_motion(path)
    assert str(caught.value).startswith(f"{path}: ") and isinstance(caught.value, ValueError)


@pytest.mark.parametrize("content, message", [
    (b"", r"the file is empty"),
    (b"HIERARCHY\nROOT x\n", r"not a NumPy .npz archive"),
    (b"PK\x03\x04 not really a zip", r"not a readable NumPy .npz archive \(BadZipFile"),
])
def test_a_file_that_is_no_archive_says_so(tmp_path, content, message):
    (tmp_path / "bad.npz").write_bytes(content)
    with pytest.raises(PositionsError, match=message):
        load_motion(tmp_path / "bad.npz")


def test_an_npy_named_npz_and_a_missing_file(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((4, 3, 3)))
    (tmp_path / "x.npy").rename(tmp_path / "x.npz")
    with pytest.raises(PositionsError, match=r"holds one array \(shape \(4, 3, 3\): a .npy file\), not an .npz"):
        load_motion(tmp_path / "x.npz")
    with pytest.raises(FileNotFoundError):
        load_motion(tmp_path / "missing.npz")
    (tmp_path / "folder.npz").mkdir()
    with pytest.raises(IsADirectoryError):
        load_motion(tmp_path / "folder.npz")


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_damaged_archives_raise_positions_error_or_read(data):
    """Cut or overwrite bytes of a good archive (stored or compressed): it reads, or raises
    PositionsError; never another exception."""
    stream = io.BytesIO()
    saver = data.draw(st.sampled_from([np.savez, np.savez_compressed]))
    saver(stream, **_good())
    raw = bytearray(stream.getvalue())
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    else:
        for _ in range(data.draw(st.integers(1, 8))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "d.npz"
        path.write_bytes(bytes(raw))
        try:
            skeleton, motion = load_motion(path)
        except PositionsError:
            return
        assert np.isfinite(motion.world_positions(skeleton)).all()


def test_members_a_zip_cannot_hand_over_are_positions_errors(tmp_path):
    path = write_npz(tmp_path / "t.npz", **_good())
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("positions.npy")
    raw[info.header_offset + 30 + len(info.filename) + 200] ^= 0xFF  # a byte of the positions' data: a bad CRC
    path.write_bytes(bytes(raw))
    with pytest.raises(PositionsError, match=r"cannot read 'positions' \(BadZipFile: Bad CRC-32"):
        load_motion(path)


# --- writing a reconstruction --------------------------------------------------------------------
def test_save_take_writes_an_npz_that_reads_back_as_the_solve(tmp_path):
    skeleton, motion = small_take(30)
    rec = reconstruct_take(skeleton, motion)
    off = save_take(tmp_path / "rec.npz", skeleton, motion, rec)
    assert off < 1e-9 * skeleton.height()
    read, fitted = load_motion(tmp_path / "rec.npz")
    assert np.array_equal(read.offsets, skeleton.offsets)
    assert np.abs(fitted.world_positions(read) - rec.positions).max() < 1e-9 * skeleton.height()
    with pytest.raises(UnknownFormatError):
        save_take(tmp_path / "rec.txt", skeleton, motion, rec)
    # a take read from positions (no channel layout) is written as BVH too
    off = save_take(tmp_path / "rec.bvh", read, fitted, reconstruct_take(read, fitted))
    assert off < 1e-6 * skeleton.height()


# --- a CMU take from positions -------------------------------------------------------------------
CMU_FRAMES = "0:240"


@pytest.fixture(scope="module")
def cmu(mocap_files, tmp_path_factory):
    """cmu_131_01's first 240 frames and two archives of its world positions: ``rest.npz`` with
    the BVH's rest offsets (as a retargeting tool writes its rig's rest pose), ``bare.npz``
    without (as a pose estimator writes): (bvh path, rest npz, bare npz, skeleton, motion)."""
    path = next(p for p in mocap_files if p.name == "cmu_131_01.bvh")
    skeleton, motion = fabrik.load_bvh(path)
    motion = motion.frames(0, 240)
    folder = tmp_path_factory.mktemp("cmu")
    arrays = positions_archive(skeleton, motion)
    rest = write_npz(folder / "rest.npz", offsets=skeleton.offsets, **arrays)
    bare = write_npz(folder / "bare.npz", **arrays)
    return path, rest, bare, skeleton, motion


def _written(path):
    skeleton, motion = load_motion(path)
    return motion.world_positions(skeleton)


@pytest.mark.mocap
def test_fabrik_reconstruct_gives_an_npz_of_a_cmu_take_the_bvh_reconstruction(cmu, tmp_path, capsys):
    """The issue's check: the same reconstruction from the positions as from the BVH, per joint
    within 1e-6 of the height (measured: 1.1e-14, the rounding of forward kinematics)."""
    from fabrik.cli import main

    bvh, rest, bare, skeleton, motion = cmu
    height = skeleton.height()
    runs = {}
    for name, source in (("bvh", bvh), ("npz", rest)):
        out, report = tmp_path / f"{name}_rec.npz", tmp_path / f"{name}.json"
        assert main(["reconstruct", str(source), "--frames", CMU_FRAMES, "--methods", "fabrik,ccd",
                     "--out", str(out), "--json", str(report)]) == 0
        runs[name] = (_written(out), __import__("json").loads(report.read_text()))
    text = capsys.readouterr().out
    assert "Reconstruction of rest.npz: 240 frames, skeleton height 24.27" in text
    apart = np.linalg.norm(runs["bvh"][0] - runs["npz"][0], axis=2).max() / height
    assert apart <= 1e-6, apart
    for row_bvh, row_npz in zip(runs["bvh"][1]["results"], runs["npz"][1]["results"]):
        assert row_bvh["method"] == row_npz["method"]
        assert row_npz["median_error"] == pytest.approx(row_bvh["median_error"], rel=1e-9, abs=1e-6 * height)
    # and from Python: every joint in every frame
    read, fitted = load_motion(rest)
    apart = np.linalg.norm(reconstruct_take(read, fitted).positions - reconstruct_take(skeleton, motion).positions,
                           axis=2).max() / height
    assert apart <= 1e-6, apart


@pytest.mark.mocap
def test_a_bare_positions_file_of_a_cmu_take_reconstructs_as_the_bvh_with_its_tolerance(cmu):
    """Without ``offsets`` the rest pose is the first frame. With the BVH's tolerance and the groups
    a joint rotation holds (``rigid_sub_bases=True``) the solve is the BVH's (measured 2e-14 of the
    height); the default ``"auto"`` also holds each CMU hand (a wrist whose finger and thumb hang
    from zero-length joints the recording turns apart) in its rest shape, which is the first
    frame's here and the T-pose's in the BVH, so there the solves differ (0.05 of the height)."""
    _, _, bare, skeleton, motion = cmu
    read, fitted = load_motion(bare)
    assert np.allclose(read.rest_positions(), motion.world_positions(skeleton)[0], atol=1e-12)
    height = skeleton.height()
    recorded = reconstruct_take(skeleton, motion, rigid_sub_bases=True)
    rec = reconstruct_take(read, fitted, tol=recorded.tol, rigid_sub_bases=True)
    assert np.linalg.norm(rec.positions - recorded.positions, axis=2).max() <= 1e-6 * height
    default = reconstruct_take(read, fitted)
    assert default.tol == pytest.approx(1e-3 * read.height()) and read.height() != pytest.approx(height, rel=1e-3)
    assert default.solution.reached.all()


@pytest.mark.mocap
def test_fabrik_view_take_plays_an_npz(cmu):
    pytest.importorskip("viser", reason="viser is not installed (the 'view' extra)")
    import socket

    from fabrik.cli import build_parser
    from fabrik.cli.view import build_scene_args
    from fabrik.viz.viewer import Viewer

    _, rest, _, skeleton, motion = cmu
    model, kind, options = build_scene_args(build_parser().parse_args(["view", "take", str(rest), "--frames", "0:60"]))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    viewer = Viewer(port=port, verbose=False)
    try:
        scene = viewer.add(model, kind, **options)
        assert scene.recorded.shape == (60, skeleton.n_joints, 3)
        assert np.abs(scene.recorded - motion.world_positions(skeleton)[:60]).max() < 1e-9
        assert np.linalg.norm(scene.positions - reconstruct_take(skeleton, motion.frames(0, 60)).positions,
                              axis=2).max() <= 1e-6 * skeleton.height()
        assert scene.fps == pytest.approx(120.0, rel=1e-4)
    finally:
        viewer.stop()


def test_fabrik_render_take_and_bench_arm_read_an_npz(tmp_path, capsys):
    from fabrik.cli import main
    from fabrik_experiments.sample_motion import sample_walk

    skeleton, motion = sample_walk(n_frames=24)
    save_motion(tmp_path / "walk.npz", skeleton, motion)
    assert main(["render", "take", str(tmp_path / "walk.npz"), "--out", str(tmp_path / "walk.gif"),
                 "--frames", "0:24:6"]) == 0
    assert (tmp_path / "walk.gif").stat().st_size > 0
    assert main(["bench", "arm", str(tmp_path / "walk.npz"), "--side", "left", "--methods", "fabrik"]) == 0
    out = capsys.readouterr().out
    assert "wrote walk.gif" in out.replace(str(tmp_path) + "/", "") and "fabrik" in out
    # the commands name the formats they read
    from fabrik.cli import build_parser

    usage = {name: build_parser()._subparsers._group_actions[0].choices[name].format_usage()
             for name in ("reconstruct", "view", "render")}
    assert all("FILE.bvh|FILE.npz" in text for text in usage.values())
