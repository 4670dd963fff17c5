"""BVH from any exporter (issue 29, item 5): small synthetic takes written the way common
exporters write them, each read with ``load_bvh``, reconstructed (``fabrik reconstruct``'s
``reconstruct_file``) and round-tripped through ``save_bvh``.

Styles: Blender (6 channels on every joint, translations computed in float32 and printed with 6
decimals, so bone lengths wobble by about 1e-6 of themselves), Mixamo (``mixamorig:`` names,
centimetres), Z-up, zero-length bones (twist joints at their parent's place, with and without
position channels), and mixed channel orders (0-3 rotation channels in any order, position
channels in any order). A take whose bones truly stretch is still refused with the joint named.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from fabrik.io.bvh import load_bvh, save_bvh
from fabrik.mocap import prepare_take
from fabrik.model.motion import ChannelLayout, Motion
from fabrik.model.skeleton import Skeleton
from fabrik.solvers import methods
from fabrik_experiments.reconstruction import reconstruct_file
from fabrik_experiments.sample_motion import sample_walk

needs_skeleton_fabrik = pytest.mark.skipif("fabrik" not in methods("skeleton"),
                                           reason="the skeleton FABRIK solver is not registered")

POSITIONS = ("Xposition", "Yposition", "Zposition")
ROTATIONS = ("Xrotation", "Yrotation", "Zrotation")
N_FRAMES = 12


def _walk():
    skel, motion = sample_walk(n_frames=N_FRAMES)
    return skel, motion


def _restyle(skel: Skeleton, motion: Motion, *, names=None, offsets=None, rotations=None, root=None,
             channels=None, translations=None) -> tuple[Skeleton, Motion]:
    """``skel``/``motion`` with any of their parts replaced (end sites kept)."""
    s = Skeleton(tuple(names or skel.names), skel.parents, skel.offsets if offsets is None else offsets)
    layout = ChannelLayout(tuple(channels or motion.layout.channels), motion.layout.end_sites)
    m = Motion(motion.rotations if rotations is None else rotations,
               motion.root_positions if root is None else root, motion.frame_time,
               joint_translations=translations if translations is not None else dict(motion.joint_translations),
               layout=layout)
    return s, m


def blender_style(rng, wobble=1e-6):
    """Every joint has 6 channels (``Xposition Yposition Zposition`` then its rotation order);
    the position channels hold its offset computed in float32 with a relative wobble of about
    ``wobble``, printed with 6 decimals (``save_bvh(decimals=6)``); metres, as Blender writes."""
    skel, motion = _walk()
    skel = Skeleton(skel.names, skel.parents, skel.offsets / 100.0)  # metres
    chans, trans = [], {}
    orders = ["".join(p) for p in itertools.permutations("XYZ")]
    for j in range(skel.n_joints):
        if j in motion.layout.end_sites:
            chans.append(())
            continue
        order = orders[j % 6]
        chans.append(POSITIONS + tuple(f"{a}rotation" for a in order))
        if j:
            noise = 1.0 + wobble * rng.standard_normal((N_FRAMES, 1))
            trans[j] = (skel.offsets[j] * noise).astype(np.float32).astype(np.float64)
    return _restyle(skel, motion, root=motion.root_positions / 100.0, channels=chans, translations=trans)


def mixamo_style():
    """``mixamorig:`` names, centimetres, ``Zrotation Xrotation Yrotation`` everywhere, a 6-channel root."""
    skel, motion = _walk()
    names = [f"mixamorig:{n}" for n in skel.names]
    chans = [c if not c else (POSITIONS if j == 0 else ()) + ("Zrotation", "Xrotation", "Yrotation")
             for j, c in enumerate(motion.layout.channels)]
    return _restyle(skel, motion, names=names, channels=chans)


def z_up_style():
    """The walk turned so that +Z is up (x -> x, y -> z, z -> -y): offsets, root positions and
    rotations all turned (a joint's local rotation is conjugated by the turn)."""
    skel, motion = _walk()
    turn = Rotation.from_euler("x", 90, degrees=True)
    offsets = turn.apply(np.array(skel.offsets))
    root = turn.apply(np.array(motion.root_positions))
    q = np.array(motion.rotations).reshape(-1, 4)
    local = Rotation.from_quat(q)
    conj = (turn * local * turn.inv()).as_quat().reshape(motion.rotations.shape)
    return _restyle(skel, motion, offsets=offsets, rotations=conj, root=root)


def zero_length_style(with_positions: bool):
    """A twist joint at its parent's place below every upper arm and thigh, carrying the limb
    below (zero-length bones with a rotation channel turning that limb about y); with
    ``with_positions`` the twist joints also carry position channels holding a few units of the
    6th decimal, as exporters print a float32 zero after arithmetic."""
    skel, motion = _walk()
    inserts = {skel.index(n) for n in ("LeftArm", "RightArm", "LeftUpLeg", "RightUpLeg")}
    names, parents, offsets, chans, rot_cols, end_sites = [], [], [], [], [], set()
    parent_for = {}  # file joint -> the new joint its children hang from
    for j in range(skel.n_joints):
        p = int(skel.parents[j])
        names.append(skel.names[j])
        parents.append(parent_for[p] if p >= 0 else -1)
        offsets.append(skel.offsets[j])
        chans.append(motion.layout.channels[j])
        rot_cols.append(j)
        parent_for[j] = len(names) - 1
        if j in motion.layout.end_sites:
            end_sites.add(len(names) - 1)
        if j in inserts:
            names.append(skel.names[j] + "Twist")
            parents.append(len(names) - 2)
            offsets.append(np.zeros(3))
            chans.append(("Yrotation",) + (POSITIONS if with_positions else ()))
            rot_cols.append(-1)
            parent_for[j] = len(names) - 1
    n = len(names)
    rotations = np.zeros((N_FRAMES, n, 4))
    rotations[..., 3] = 1.0
    angle = np.linspace(-0.4, 0.5, N_FRAMES)[:, None]
    translations = {}
    for k, src in enumerate(rot_cols):
        if src >= 0:
            rotations[:, k] = motion.rotations[:, src]
        else:
            rotations[:, k] = Rotation.from_euler("y", angle).as_quat()
            if with_positions:
                # a float32 zero after arithmetic: a few units of the 6th decimal either way
                translations[k] = np.where(np.arange(N_FRAMES)[:, None] % 2 == 1, -2e-6, 1e-6) * np.ones(3)
    s = Skeleton(tuple(names), np.array(parents), np.array(offsets))
    m = Motion(rotations, motion.root_positions, motion.frame_time, joint_translations=translations,
               layout=ChannelLayout(tuple(chans), frozenset(end_sites)))
    return s, m


def mixed_orders_style(rng):
    """Every joint a random choice of 0-3 rotation channels in a random order, its motion turned
    about those axes only (no rotation for none), and the root's (and some joints') position
    channels in a random order, inner ones holding their offsets."""
    skel, motion = _walk()
    chans, trans = [], {}
    rotations = np.array(motion.rotations)
    for j in range(skel.n_joints):
        if j in motion.layout.end_sites:
            chans.append(())
            continue
        k = 3 if j == 0 else int(rng.integers(0, 4))
        axes = "".join(rng.permutation(list("XYZ"))[:k])
        angles = Rotation.from_quat(motion.rotations[:, j]).as_euler("XYZ")  # some angles for those axes
        if k == 0:
            rotations[:, j] = [0, 0, 0, 1]
        else:
            rotations[:, j] = Rotation.from_euler(axes, angles[:, :k]).as_quat()
        pos = ()
        if j == 0 or rng.random() < 0.3:
            pos = tuple(rng.permutation(list(POSITIONS)))
            if j:
                trans[j] = np.repeat(skel.offsets[j][None], N_FRAMES, axis=0)
        rot = tuple(f"{a}rotation" for a in axes)
        cut = int(rng.integers(0, len(rot) + 1))
        chans.append(rot[:cut] + pos + rot[cut:])  # position channels before, between or after
    return _restyle(skel, motion, rotations=rotations, channels=chans, translations=trans)


def _styles():
    rng = np.random.default_rng(29)
    return {
        "blender": blender_style(rng),
        "mixamo": mixamo_style(),
        "z-up": z_up_style(),
        "zero-length": zero_length_style(False),
        "zero-length-positions": zero_length_style(True),
        "mixed-orders": mixed_orders_style(rng),
    }


STYLES = _styles()


@pytest.fixture(params=sorted(STYLES))
def written(request, tmp_path):
    """(style name, path of the written file, skeleton, motion written)."""
    skel, motion = STYLES[request.param]
    path = tmp_path / f"{request.param}.bvh"
    save_bvh(path, skel, motion, decimals=6 if request.param == "blender" else 9)
    return request.param, path, skel, motion


def test_every_style_loads_as_written(written):
    style, path, skel, motion = written
    s, m = load_bvh(path)
    assert s.names == skel.names and m.layout.channels == motion.layout.channels
    atol = 1e-5 * skel.height()
    np.testing.assert_allclose(m.world_positions(s), motion.world_positions(skel), atol=atol)


def test_every_style_round_trips_through_save_bvh(written, tmp_path):
    _, path, _, _ = written
    s, m = load_bvh(path)
    again = tmp_path / "again.bvh"
    save_bvh(again, s, m)
    s2, m2 = load_bvh(again)
    assert s2.names == s.names and m2.layout == m.layout
    np.testing.assert_array_equal(s2.offsets, s.offsets)
    np.testing.assert_allclose(m2.world_positions(s2), m.world_positions(s), atol=1e-9 * s.height())


@needs_skeleton_fabrik
def test_every_style_reconstructs(written, tmp_path):
    style, path, skel, _ = written
    out = tmp_path / "rec.bvh"
    report, s, m = reconstruct_file(path, methods=["fabrik"], out=out)
    row = report.result("fabrik")
    assert row.mean_effector_error <= report.tol
    # the recorded poses are reachable exactly: FABRIK's inner joints land near them
    assert row.median_error < 0.05 * report.skeleton_height, (style, row.median_error)
    s_out, m_out = load_bvh(out)
    assert s_out.names == s.names
    miss = np.linalg.norm(m_out.world_positions(s_out) - row.positions, axis=2).max()
    assert miss < 1e-4 * report.skeleton_height, (style, miss)


def test_bones_that_truly_stretch_are_refused_with_the_joint_named(tmp_path):
    skel, motion = blender_style(np.random.default_rng(3))
    fore = skel.index("LeftForeArm")
    trans = dict(motion.joint_translations)
    trans[fore] = skel.offsets[fore] * np.linspace(1.0, 1.02, N_FRAMES)[:, None]  # 2% longer
    s, m = _restyle(skel, motion, translations=trans)
    path = tmp_path / "stretch.bvh"
    save_bvh(path, s, m, decimals=6)
    with pytest.raises(ValueError, match="'LeftForeArm' moves relative to its parent 'LeftArm'"):
        reconstruct_file(path, methods=["fabrik"])
    with pytest.raises(ValueError, match="'LeftForeArm' moves relative to its parent"):
        prepare_take(*load_bvh(path))


def test_constant_position_channels_are_the_files_offsets():
    """Blender's wobbling channels and a zero-length bone's printed zeros give the file's OFFSETs
    back exactly: the body is the file's skeleton, and the twist joints coincide with their parents."""
    skel, motion = STYLES["blender"]
    take = prepare_take(skel, motion)
    assert take.body is skel and len(take.notes) == 1
    assert "vary over the frames" in take.notes[0] and take.notes[0].endswith("each at its OFFSET")
    skel, motion = STYLES["zero-length-positions"]
    take = prepare_take(skel, motion)
    twists = [j for j, name in enumerate(skel.names) if name.endswith("Twist")]
    assert len(twists) == 4 and (take.body.bone_lengths[twists] == 0).all()
    from fabrik.mocap import coincident_groups

    top = coincident_groups(take.body)
    assert all(top[j] == top[skel.parents[j]] for j in twists)


def test_constant_channels_away_from_the_offset_become_the_bone():
    """A joint whose position channels hold a constant translation other than its OFFSET (a
    rig whose animation moved a bone once) gets that translation, and the take says so."""
    skel, motion = STYLES["blender"]
    fore = skel.index("LeftForeArm")
    trans = dict(motion.joint_translations)
    trans[fore] = np.repeat((skel.offsets[fore] * 1.25)[None], N_FRAMES, axis=0)
    s, m = _restyle(skel, motion, translations=trans)
    take = prepare_take(s, m)
    np.testing.assert_allclose(take.body.offsets[fore], skel.offsets[fore] * 1.25)
    np.testing.assert_array_equal(np.delete(take.body.offsets, fore, axis=0), np.delete(skel.offsets, fore, axis=0))
    assert any("LeftForeArm" in note for note in take.notes)


@needs_skeleton_fabrik
@pytest.mark.parametrize("style", ["blender", "z-up", "mixed-orders"])
def test_fabrik_reconstruct_cli_takes_the_style(style, tmp_path, capsys):
    from fabrik.cli import main

    skel, motion = STYLES[style]
    src = tmp_path / f"{style}.bvh"
    save_bvh(src, skel, motion, decimals=6)
    out = tmp_path / "rec.bvh"
    assert main(["reconstruct", str(src), "--methods", "fabrik", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    s2, m2 = load_bvh(out)
    assert s2.names == skel.names and m2.n_frames == N_FRAMES
