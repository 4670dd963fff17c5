"""The Table 2 reconstruction experiment, its CLI, and the demo hook."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from fabrik.constraints import Hinge
from fabrik.io.bvh import load_bvh, save_bvh
from fabrik.mocap import coincident_groups, default_effectors, evaluated_joints, motion_from_positions, parse_frames
from fabrik.model.skeleton import Skeleton
from fabrik.solvers import methods
from fabrik_experiments.reconstruction import reconstruct, reconstruct_file
from fabrik_experiments.sample_motion import run_demo_reconstruction, sample_walk

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mocap"
MOCAP_FILES = sorted(MOCAP.glob("*.bvh")) if MOCAP.is_dir() else []
needs_skeleton_fabrik = pytest.mark.skipif("fabrik" not in methods("skeleton"),
                                           reason="the skeleton FABRIK solver is not registered")
JSON_KEYS = {"method", "median_error", "mean_error", "p95_error", "median_error_rel", "mean_effector_error",
             "mean_iterations", "frames_per_second"}


def cmu_like() -> Skeleton:
    """Root with zero-offset children, a wrist with two branches, a zero-length End Site."""
    names = ["Hips", "LHip", "Knee", "Toe", "Toe_End", "Back", "Chest", "Wrist", "Hand", "Hand_End", "Thumb",
             "Thumb_End", "Head", "Head_End"]
    parents = [-1, 0, 1, 2, 3, 0, 5, 6, 7, 8, 7, 10, 6, 12]
    offsets = [[0, 0, 0], [0, 0, 0], [1, -4, 0], [0, -4, 1], [0, 0, 0.5], [0, 0, 0], [0, 3, 0], [3, 0, 0],
               [0, 0, 0], [1, 0, 0], [0, 0, 0], [0.5, 0.5, 0], [0, 2, 0], [0, 0, 0]]
    return Skeleton.from_parents(names, parents, offsets)


def test_default_effectors_skip_zero_length_end_sites():
    skel = cmu_like()
    names = [skel.names[j] for j in default_effectors(skel)]
    assert names == ["Toe_End", "Hand_End", "Thumb_End", "Head"]  # Head_End has zero length


def test_evaluated_joints_count_each_coincident_group_once():
    skel = cmu_like()
    top = coincident_groups(skel)
    assert top[skel.index("LHip")] == 0 and top[skel.index("Hand")] == skel.index("Wrist")
    inner = [skel.names[j] for j in evaluated_joints(skel, default_effectors(skel))]
    assert inner == ["Knee", "Toe", "Chest", "Wrist"]


def test_parse_frames():
    assert parse_frames(None, 10) == (0, 10, 1)
    assert parse_frames("2:5", 10) == (2, 5, 1)
    assert parse_frames(":-2", 10) == (0, 8, 1)
    assert parse_frames("::4", 10) == (0, 10, 4)
    for bad in ("5", "a:b", "5:2", "0:5:0"):
        with pytest.raises(ValueError, match="--frames"):
            parse_frames(bad, 10)


def test_bad_arguments():
    skel, motion = sample_walk(n_frames=3)
    p = motion.world_positions(skel)
    with pytest.raises(ValueError, match="positions"):
        reconstruct(skel, p[:, :3])
    with pytest.raises(ValueError, match="unknown joint"):
        reconstruct(skel, p, effectors=["Nope"])
    with pytest.raises(ValueError, match="root"):
        reconstruct(skel, p, effectors=["Hips"])
    with pytest.raises(ValueError, match="unknown skeleton method"):
        reconstruct(skel, p, methods=["nope"])


@needs_skeleton_fabrik
def test_sample_walk_reconstruction_report():
    skel, motion = sample_walk(n_frames=30)
    truth = motion.world_positions(skel)
    report = reconstruct(skel, truth, methods=["fabrik"])
    r = report.result("fabrik")
    h = skel.height()
    assert report.frames == 30 and report.skeleton_height == pytest.approx(h)
    assert report.tol == pytest.approx(1e-3 * h)
    assert r.positions.shape == truth.shape
    np.testing.assert_allclose(r.positions[:, 0], truth[:, 0], atol=1e-9)  # the root is pinned
    assert r.mean_effector_error < 1e-3 * h
    assert 0 <= r.median_error <= r.p95_error and r.median_error_rel == pytest.approx(r.median_error / h)
    assert r.mean_iterations >= 0 and r.frames_per_second > 0  # the limb swing alone may reach a frame
    payload = report.to_json()
    assert JSON_KEYS <= set(payload["results"][0])
    json.dumps(payload)
    assert "fabrik" in report.table()


@needs_skeleton_fabrik
def test_perfect_start_frame_has_zero_error():
    """Frame 0 starts from the recording itself, which already meets every target."""
    skel, motion = sample_walk(n_frames=1)
    report = reconstruct(skel, motion.world_positions(skel), methods=["fabrik"])
    assert report.result("fabrik").mean_error < 1e-9 * skel.height()


@needs_skeleton_fabrik
def test_cli_writes_json_and_bvh(tmp_path, capsys):
    from fabrik.cli import main

    skel, motion = sample_walk(n_frames=40)
    src = tmp_path / "walk.bvh"
    save_bvh(src, skel, motion)
    rc = main(["reconstruct", str(src), "--methods", "fabrik", "--frames", "0:20", "--json", str(tmp_path / "r.json"),
               "--out", str(tmp_path / "rec.bvh"), "--max-iter", "50"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "fabrik" in out and "median" in out
    payload = json.loads((tmp_path / "r.json").read_text())
    assert payload["frames"] == 20 and JSON_KEYS <= set(payload["results"][0])
    s2, m2 = load_bvh(tmp_path / "rec.bvh")
    assert s2.names == skel.names and m2.n_frames == 20
    np.testing.assert_allclose(s2.offsets, skel.offsets, atol=1e-9)
    # the file holds the rotations fitted to the FABRIK positions; the effectors (leaves) land
    # where FABRIK put them up to how far FABRIK bent the rigid pelvis / shoulder triangles
    report, _, _ = reconstruct_file(src, methods=["fabrik"], frames="0:20", max_iter=50)
    fitted = motion_from_positions(skel, motion.frames(0, 20), report.result("fabrik").positions)
    assert np.max(np.abs(m2.world_positions(s2) - fitted.world_positions(skel))) < 1e-6 * skel.height()


HINGE_ARM = """HIERARCHY
ROOT base
{
\tOFFSET 0 0 0
\tCHANNELS 0
\tJOINT shoulder
\t{
\t\tOFFSET 0 1 0
\t\tCHANNELS 2 Zrotation Xrotation
\t\tJOINT elbow
\t\t{
\t\t\tOFFSET 0 3 0
\t\t\tCHANNELS 1 Zrotation
\t\t\tJOINT wrist
\t\t\t{
\t\t\t\tOFFSET 0 2.5 0
\t\t\t\tCHANNELS 0
\t\t\t\tEnd Site
\t\t\t\t{
\t\t\t\t\tOFFSET 0 0.5 0
\t\t\t\t}
\t\t\t}
\t\t}
\t}
}
MOTION
"""


@needs_skeleton_fabrik
def test_out_on_hinges_and_fixed_joints_writes_three_rotation_channels(tmp_path, capsys):
    """Solvers turn every joint as a ball joint, so a file with 1- and 2-channel hinges and
    0-channel joints is written back with all three rotation channels on those joints."""
    from fabrik.cli import main

    t = np.linspace(0.0, 1.0, 12)
    rows = np.column_stack([60 * np.sin(3 * t), 20 * t, 90 * t])
    src = tmp_path / "arm.bvh"
    src.write_text(HINGE_ARM + f"Frames: {len(rows)}\nFrame Time: 0.04\n"
                   + "\n".join(" ".join(f"{v:.6f}" for v in r) for r in rows) + "\n")
    rc = main(["reconstruct", str(src), "--methods", "fabrik", "--out", str(tmp_path / "rec.bvh")])
    assert rc == 0, capsys.readouterr().err
    skel, motion = load_bvh(src)
    s2, m2 = load_bvh(tmp_path / "rec.bvh")
    assert s2.names == skel.names
    assert m2.layout.channels[:4] == (("Zrotation", "Yrotation", "Xrotation"), ("Zrotation", "Xrotation", "Yrotation"),
                                      ("Zrotation", "Yrotation", "Xrotation"), ("Zrotation", "Yrotation", "Xrotation"))
    report, _, _ = reconstruct_file(src, methods=["fabrik"])
    fitted = motion_from_positions(skel, motion, report.result("fabrik").positions)
    assert np.max(np.abs(m2.world_positions(s2) - fitted.world_positions(skel))) < 1e-6 * skel.height()


def test_cli_reports_bad_input(tmp_path, capsys):
    from fabrik.cli import main

    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT a\n{\n")
    assert main(["reconstruct", str(bad)]) == 2
    assert "line" in capsys.readouterr().err


@needs_skeleton_fabrik
def test_demo_reconstruction(tmp_path):
    table = run_demo_reconstruction(tmp_path, methods=["fabrik"])
    assert "fabrik" in table
    for name in ("sample_walk.bvh", "sample_walk_fabrik.bvh", "sample_walk_reconstruction.json"):
        assert (tmp_path / name).is_file()


@needs_skeleton_fabrik
@pytest.mark.mocap
@pytest.mark.skipif(not MOCAP_FILES, reason=f"real mocap files not found in {MOCAP}")
def test_mocap_reconstruction_meets_effectors_and_saves_exactly(tmp_path):
    out = tmp_path / "rec.bvh"
    report, skel, _ = reconstruct_file(MOCAP_FILES[0], methods=["fabrik"], frames="0:120", out=out)
    r = report.result("fabrik")
    assert len(report.effectors) == 7 and len(report.evaluated) == 20
    assert r.mean_effector_error < 1e-3 * report.skeleton_height
    # every multi-child joint of the CMU skeleton has zero-length children, so the rotations
    # written reproduce FABRIK's positions exactly
    s2, m2 = load_bvh(out)
    assert np.max(np.abs(m2.world_positions(s2) - r.positions)) < 1e-6 * report.skeleton_height


def test_all_zero_offsets_say_so():
    skel = Skeleton.from_parents(["root", "a", "b"], [-1, 0, 1], np.zeros((3, 3)))
    with pytest.raises(ValueError, match="zero length"):
        reconstruct(skel, np.zeros((2, 3, 3)), methods=["fabrik"])


def scaled_walk(n_frames: int, factor: float):
    """The sample walk with every length times ``factor`` (its cm walk in metres for 0.01)."""
    skel, motion = sample_walk(n_frames=n_frames)
    small = Skeleton.from_parents(skel.names, skel.parents, skel.offsets * factor)
    return small, motion.world_positions(skel) * factor


def test_method_options_reach_the_solver_and_follow_the_units():
    """The DLS damping is in file units: the same walk in metres with the damping scaled by 0.01
    gives the centimetre run's errors scaled by 0.01; the default 1.1 in metres is heavy, and the
    table says so and how to set it."""
    cm, truth_cm = scaled_walk(12, 1.0)
    m, truth_m = scaled_walk(12, 0.01)
    in_cm = reconstruct(cm, truth_cm, methods=["jacobian-dls"]).result("jacobian-dls")
    report = reconstruct(m, truth_m, methods=["jacobian-dls"], method_options={"jacobian-dls": {"damping": 0.011}})
    in_m = report.result("jacobian-dls")
    assert in_m.options == {"damping": 0.011} and report.to_json()["results"][0]["options"] == {"damping": 0.011}
    assert "jacobian-dls: damping=0.011" in report.table()
    assert in_m.median_error == pytest.approx(0.01 * in_cm.median_error, rel=1e-6)
    assert in_m.mean_effector_error == pytest.approx(0.01 * in_cm.mean_effector_error, rel=1e-6)
    assert "note:" not in report.table()
    # too few iterations leave the effectors short: the table notes it, and names the
    # damping only where the default is large against the skeleton (1.1 against 1.73 m, not 173 cm)
    heavy = reconstruct(m, truth_m, methods=["jacobian-dls"], max_iter=1)
    r = heavy.result("jacobian-dls")
    assert r.options == {} and r.mean_effector_error > heavy.tol
    assert "note: jacobian-dls left its effectors" in heavy.table()
    assert "--option jacobian-dls:damping=VALUE" in heavy.table()
    light = reconstruct(cm, truth_cm, methods=["jacobian-dls"], max_iter=0)
    assert light.result("jacobian-dls").mean_effector_error > light.tol
    assert "note: jacobian-dls left its effectors" in light.table() and "damping" not in light.table()


def test_method_options_are_checked():
    skel, motion = sample_walk(n_frames=2)
    p = motion.world_positions(skel)
    with pytest.raises(ValueError, match="'ccd'.*does not solve with"):
        reconstruct(skel, p, methods=["jacobian-dls"], method_options={"ccd": {}})
    with pytest.raises(ValueError, match="'fabrik' for skeletons takes no option 'damping'; it takes rigid_sub_bases, swing_limbs, turn_search, reach_step, dls_start, dls_damping, initial_frames, root_rotation"):
        reconstruct(skel, p, methods=["fabrik"], method_options={"fabrik": {"damping": 1.0}})
    with pytest.raises(ValueError, match="takes no option 'dampin'; it takes"):
        reconstruct(skel, p, methods=["jacobian-dls"], method_options={"jacobian-dls": {"dampin": 1.0}})
    with pytest.raises(ValueError, match="damping"):
        reconstruct(skel, p, methods=["jacobian-dls"], method_options={"jacobian-dls": {"damping": -1.0}})
    with pytest.raises(ValueError, match="'ccd-constrained' for skeletons takes no option"):
        reconstruct(skel, p, methods=["ccd-constrained"], constraints={"LeftLeg": Hinge((1.0, 0.0, 0.0), 0.0, 2.5)},
                    method_options={"ccd-constrained": {"damping": 1.0}})


def test_cli_option(tmp_path, capsys):
    from fabrik.cli import main
    from fabrik.cli._common import parse_method_options

    assert parse_method_options(["jacobian-dls:damping=0.5", "jacobian-transpose:alpha=none",
                                 "jacobian-dls:max_error_step=inf", "fabrik-constrained:turn_search=False",
                                 "fabrik:swing_limbs=true"]) == {
        "jacobian-dls": {"damping": 0.5, "max_error_step": float("inf")}, "jacobian-transpose": {"alpha": None},
        "fabrik-constrained": {"turn_search": False}, "fabrik": {"swing_limbs": True}}
    skel, motion = sample_walk(n_frames=6)
    src = tmp_path / "walk.bvh"
    save_bvh(src, skel, motion)
    rc = main(["reconstruct", str(src), "--methods", "jacobian-dls", "--option", "jacobian-dls:damping=2",
               "--json", str(tmp_path / "r.json")])
    assert rc == 0
    assert "jacobian-dls: damping=2.0" in capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text())["results"][0]["options"] == {"damping": 2.0}
    # a boolean option reaches the method, and the report says what ran
    rc = main(["reconstruct", str(src), "--methods", "fabrik", "--option", "fabrik:swing_limbs=false"])
    out = capsys.readouterr().out
    assert rc == 0 and "fabrik: swing_limbs=False" in out and "limbs swung" not in out
    for bad, words in (("damping=2", "METHOD:NAME=VALUE"), ("jacobian-dls:damping=big", "a number, true, false or none")):
        assert main(["reconstruct", str(src), "--methods", "jacobian-dls", "--option", bad]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err


def _saved_walk(path: Path, n_frames: int):
    """The sample walk of ``n_frames`` frames written to ``path``; returns (skeleton, motion)."""
    skel, motion = sample_walk(n_frames=n_frames)
    save_bvh(path, skel, motion)
    return skel, motion


@needs_skeleton_fabrik
def test_written_file_holds_the_solution_where_bvh_turns_a_pelvis_as_one(tmp_path):
    # the sample walk's Hips and Spine1 carry bones to several children (as Mixamo's do): the
    # default rigid groups keep them rigid, so the written rotations reproduce FABRIK's poses
    src = tmp_path / "walk.bvh"
    _saved_walk(src, 40)
    out = tmp_path / "rec.bvh"
    report, _, _ = reconstruct_file(src, methods=["fabrik"], out=out)
    assert set(report.rigid_centres) >= {"Hips", "Spine1"}
    s2, m2 = load_bvh(out)
    miss = np.max(np.linalg.norm(m2.world_positions(s2) - report.result("fabrik").positions, axis=2))
    assert miss < 1e-6 * report.skeleton_height
    assert report.out_max_error == pytest.approx(miss, abs=1e-9 * report.skeleton_height)
    assert report.to_json()["out_max_error"] is not None
    # with a free pelvis the file cannot hold the poses, and the table says so
    report, _, _ = reconstruct_file(src, methods=["fabrik"], out=out, rigid_sub_bases="limbs")
    assert report.out_max_error > 1e-6 * report.skeleton_height
    assert "the written BVH is up to" in report.table()


def _with_reference_node(text: str, ik_offset=None) -> str:
    """A BVH whose static 'reference' root carries the file's root, which keeps its channels;
    with ``ik_offset`` the reference also carries an Unreal-style IK branch (``ik_root`` at that
    offset, and ``ik_foot`` below it), after the body."""
    head, motion = text.split("MOTION\n")
    body = head.replace("HIERARCHY\n", "", 1)
    body = "\n".join("\t" + line for line in body.splitlines())
    lines = motion.splitlines()
    frames = [("0 0 0 0 0 0 " + row) for row in lines[2:]]
    if ik_offset is not None:
        body += ("\n\tJOINT ik_root\n\t{\n\t\tOFFSET " + " ".join(map(str, ik_offset)) +
                 "\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\tJOINT ik_foot\n\t\t{\n\t\t\tOFFSET 9 2 3"
                 "\n\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\t\tEnd Site\n\t\t\t{\n\t\t\t\tOFFSET 0 0 1"
                 "\n\t\t\t}\n\t\t}\n\t}")
        frames = [row + " 0 0 0 5 0 0" for row in frames]
    return ("HIERARCHY\nROOT reference\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition "
            "Zrotation Yrotation Xrotation\n" + body.replace("ROOT ", "JOINT ", 1) + "\n}\nMOTION\n"
            + "\n".join(lines[:2] + frames) + "\n")


@needs_skeleton_fabrik
def test_a_moving_joint_under_a_static_reference_root_becomes_the_root(tmp_path):
    plain = tmp_path / "walk.bvh"
    skel, motion = _saved_walk(plain, 30)
    ref = tmp_path / "ref.bvh"
    ref.write_text(_with_reference_node(plain.read_text()))
    s_ref, m_ref = load_bvh(ref)
    np.testing.assert_allclose(m_ref.world_positions(s_ref)[:, 1:], motion.world_positions(skel), atol=1e-6)
    a, _, _ = reconstruct_file(plain, methods=["fabrik", "ccd"])
    out = tmp_path / "rec.bvh"
    b, _, _ = reconstruct_file(ref, methods=["fabrik", "ccd"], out=out)
    assert any("'Hips' is the root here" in note for note in b.notes)
    for ra, rb in zip(a.results, b.results):
        assert rb.median_error == pytest.approx(ra.median_error, rel=1e-9, abs=1e-12)
        assert rb.positions.shape[1] == s_ref.n_joints
    assert b.out_max_error < 1e-6 * b.skeleton_height


@needs_skeleton_fabrik
def test_a_moving_pelvis_beside_ik_bones_at_the_root_becomes_the_root(tmp_path):
    """An Unreal-style file: a fixed root carries the moving pelvis and, at its own origin, IK
    bones; the body is rebuilt from the pelvis down and the IK bones keep their recorded motion."""
    plain = tmp_path / "walk.bvh"
    skel, motion = _saved_walk(plain, 30)
    a, _, _ = reconstruct_file(plain, methods=["fabrik", "ccd"])
    ue = tmp_path / "ue.bvh"
    ue.write_text(_with_reference_node(plain.read_text(), ik_offset=(0, 0, 0)))
    out = tmp_path / "rec.bvh"
    b, s_ue, m_ue = reconstruct_file(ue, methods=["fabrik", "ccd"], out=out)
    assert any("'Hips' is the root here" in note and "ik_foot" in note for note in b.notes)
    assert "ik_foot_End" not in b.effectors
    for ra, rb in zip(a.results, b.results):
        assert rb.median_error == pytest.approx(ra.median_error, rel=1e-9, abs=1e-12)
    assert b.out_max_error < 1e-6 * b.skeleton_height
    s_out, m_out = load_bvh(out)
    ik = [s_out.index(name) for name in ("ik_root", "ik_foot", "ik_foot_End")]
    np.testing.assert_allclose(m_out.world_positions(s_out)[:, ik], m_ue.world_positions(s_ue)[:, ik], atol=1e-6)
    # an IK branch hung away from the root's origin could be part of the body: refused
    away = tmp_path / "away.bvh"
    away.write_text(_with_reference_node(plain.read_text(), ik_offset=(0, 5, 0)))
    with pytest.raises(ValueError, match="'Hips' moves relative to its parent 'reference'"):
        reconstruct_file(away, methods=["fabrik"])


def _spine_with_position_channels(path, n_frames, scales, decimals=9):
    """Save a sample walk whose Spine has position channels: its offset times ``scales`` (F,),
    every number printed with ``decimals``."""
    skel, motion = sample_walk(n_frames=n_frames)
    translations = dict(motion.joint_translations)
    spine = skel.index("Spine")
    translations[spine] = skel.offsets[spine] * np.asarray(scales)[:, None]
    layout = motion.layout
    channels = list(layout.channels)
    channels[spine] = ("Xposition", "Yposition", "Zposition") + tuple(channels[spine])
    moving = type(motion)(motion.rotations, motion.root_positions, motion.frame_time,
                          joint_translations=translations, layout=type(layout)(tuple(channels), layout.end_sites))
    save_bvh(path, skel, moving, decimals=decimals)
    return skel


def test_bones_that_change_length_in_position_channels_are_refused(tmp_path):
    path = tmp_path / "stretch.bvh"
    _spine_with_position_channels(path, 5, np.linspace(1.0, 1.5, 5))
    with pytest.raises(ValueError, match="'Spine' moves relative to its parent 'Hips'"):
        reconstruct_file(path, methods=["fabrik"])


@needs_skeleton_fabrik
def test_out_writes_the_first_method_and_any_chosen_method(tmp_path, capsys):
    """--out holds the first named method's poses (here fabrik-constrained's, with the limits the
    user asked for), exactly (the limited solve holds the pelvis and chest rigid), --out-method
    writes any method's, run even when --methods leaves it out, and --out's folder is made before
    the solving."""
    from fabrik.cli import main

    skel, motion = sample_walk(n_frames=12)
    src = tmp_path / "walk.bvh"
    save_bvh(src, skel, motion)
    out = tmp_path / "new" / "deeper" / "lim.bvh"
    report, _, _ = reconstruct_file(src, methods=["fabrik-constrained", "fabrik"], constraints="humanoid", out=out)
    assert report.out_method == "fabrik-constrained" and report.to_json()["out_method"] == "fabrik-constrained"
    s2, m2 = load_bvh(out)
    row = report.result("fabrik-constrained")
    limited = row.positions
    # the rotations of the solver's frames, limits kept: the file is the solve
    assert row.frames is not None and row.solved_skeleton.constraints
    fitted = motion_from_positions(skel, motion, limited, frames=row.frames,
                                   limits=row.solved_skeleton).world_positions(skel)
    assert np.max(np.abs(m2.world_positions(s2) - fitted)) < 1e-6 * skel.height()
    assert report.out_max_error == pytest.approx(np.linalg.norm(fitted - limited, axis=2).max(), abs=1e-6)
    assert report.out_max_error <= 1e-6 * skel.height()
    assert np.max(np.abs(limited - report.result("fabrik").positions)) > 1e-3 * skel.height()  # a different row
    rc = main(["reconstruct", str(src), "--methods", "fabrik", "--out-method", "ccd", "--out", str(tmp_path / "c.bvh")])
    assert rc == 0 and "wrote" in capsys.readouterr().out
    ccd, _, _ = reconstruct_file(src, methods=["ccd"])
    s3, m3 = load_bvh(tmp_path / "c.bvh")
    fitted = motion_from_positions(skel, motion, ccd.result("ccd").positions).world_positions(skel)
    assert np.max(np.abs(m3.world_positions(s3) - fitted)) < 1e-6 * skel.height()
    for argv, message in ((["--out-method", "ccd"], "--out-method needs --out"),
                          (["--methods", ""], "names no method"), (["--effectors", " , "], "names no joint"),
                          (["--out-method", "ccd-constrained", "--out", str(tmp_path / "x.bvh")], "needs constraints")):
        assert main(["reconstruct", str(src), *argv]) == 2
        assert message in capsys.readouterr().err


def test_position_channels_wobbling_at_print_precision_count_as_constant(tmp_path):
    """A bone whose position channels wobble by a few millionths of the body, printed with as few
    decimals as that (3 decimals of a centimetre here), is a fixed bone: the wobble is the file's
    rounding (the same file printed with 9 decimals is a bone changing length: test_bvh_precision)."""
    skel, _ = sample_walk(n_frames=1)
    spine_length = np.linalg.norm(skel.offsets[skel.index("Spine")])
    path = tmp_path / "f32.bvh"
    _spine_with_position_channels(path, 8, 1.0 + 3e-6 * skel.height() / spine_length * np.array([1, -1] * 4),
                                  decimals=3)
    report, _, _ = reconstruct_file(path, methods=["fabrik"], out=tmp_path / "rec.bvh")
    assert report.result("fabrik").mean_effector_error <= report.tol
    assert "written BVH" not in report.table()


def test_rows_that_miss_their_effectors_in_many_frames_get_a_note():
    from fabrik_experiments.reconstruction_report import MethodResult, ReconstructionReport

    def row(method, mean_eff, reached):
        return MethodResult(method, 1.0, 1.0, 2.0, 0.01, 0.01, 0.02, mean_eff, mean_eff / 100, 0.5, 5.0, 1000.0,
                            reached, np.zeros((1, 2, 3)))

    report = ReconstructionReport(100.0, 10, ("a",), ("b",), 0.1, None,
                                  (row("fabrik", 0.05, 0.4), row("ccd", 0.05, 0.95), row("jacobian-dls", 0.2, 0.1)))
    table = report.table()
    assert "note: fabrik reached its effectors in 40% of the frames" in table and "0.005 of the height" in table
    assert "note: ccd" not in table
    assert "note: jacobian-dls left its effectors" in table


def test_a_written_file_off_its_poses_names_the_rows_that_hold_groups_rigid():
    from fabrik_experiments.reconstruction_report import MethodResult, ReconstructionReport

    rows = tuple(MethodResult(m, 1.0, 1.0, 2.0, 0.01, 0.01, 0.02, 0.0, 0.0, 0.0, 5.0, 1000.0, 1.0, np.zeros((1, 2, 3)))
                 for m in ("fabrik", "ccd", "fabrik-constrained"))
    report = ReconstructionReport(100.0, 10, ("a",), ("b",), 0.1, None, rows, out_max_error=1.0)
    table = replace(report, out_method="ccd").table()
    assert "from the ccd row's poses" in table and "the fabrik rows hold such joints rigid" in table
    for method in ("fabrik", "fabrik-constrained"):
        table = replace(report, out_method=method).table()
        assert "the fabrik rows hold" not in table and "--rigid-sub-bases auto" in table
    assert "fabrik held them rigid" in replace(report, out_method="fabrik", rigid_centres=("Hips",)).table()


def test_rigid_sub_bases_take_the_command_line_names():
    from fabrik import models, solve

    body = models.humanoid()
    rest = body.rest_positions()
    targets = {"l_wrist": rest[body.index("l_wrist")] + [0, 0.2, 0.1]}
    for name, value in (("all", True), ("none", False)):
        a = solve(body, targets=targets, rigid_sub_bases=name, swing_limbs=True)
        b = solve(body, targets=targets, rigid_sub_bases=value, swing_limbs=True)
        assert np.array_equal(a.positions, b.positions)


def _scaled_walk(n_frames: int, scale: float):
    """The sample walk in other units: every offset and position times ``scale``."""
    skel, motion = sample_walk(n_frames=n_frames)
    scaled = Skeleton.from_parents(skel.names, skel.parents, np.asarray(skel.offsets) * scale)
    return scaled, motion.world_positions(skel) * scale


@needs_skeleton_fabrik
def test_pool_reports_pools_errors_as_fractions_of_each_height():
    from fabrik_experiments.reconstruction_report import pool_reports

    takes = [_scaled_walk(24, 1.0), _scaled_walk(12, 0.01)]  # centimetres and metres
    reports = [reconstruct(skel, truth, methods=["fabrik", "ccd"], source=f"take{i}")
               for i, (skel, truth) in enumerate(takes)]
    pooled = pool_reports(reports)
    assert pooled.sources == ("take0", "take1") and pooled.frames == 36
    assert [r.method for r in pooled.results] == ["fabrik", "ccd"]
    for row in pooled.results:
        rel = np.concatenate([rep.result(row.method).inner_errors.ravel() / rep.skeleton_height for rep in reports])
        assert rel.size == sum(rep.frames * len(rep.evaluated) for rep in reports)
        assert row.median_error_rel == pytest.approx(np.median(rel))
        assert row.mean_error_rel == pytest.approx(rel.mean())
        assert row.p95_error_rel == pytest.approx(np.percentile(rel, 95))
        seconds = sum(rep.frames / rep.result(row.method).frames_per_second for rep in reports)
        assert row.frames_per_second == pytest.approx(36 / seconds)
        iters = (24 * reports[0].result(row.method).mean_iterations
                 + 12 * reports[1].result(row.method).mean_iterations) / 36
        assert row.mean_iterations == pytest.approx(iters)
    # each take's lowest median is counted once, for whichever method had it
    assert sum(r.lowest_median_takes for r in pooled.results) >= 2
    for rep in reports:
        best = min(rep.results, key=lambda r: r.median_error).method
        assert pooled.results[[r.method for r in pooled.results].index(best)].lowest_median_takes >= 1
    payload = pooled.to_json()
    assert payload["takes"] == 2 and {"median_error_rel", "lowest_median_takes"} <= set(payload["results"][0])
    json.dumps(payload)
    assert "Pooled over 2 takes, 36 frames" in pooled.table()


@needs_skeleton_fabrik
def test_pool_reports_keeps_the_methods_every_take_has():
    from fabrik_experiments.reconstruction_report import pool_reports

    skel, truth = _scaled_walk(6, 1.0)
    both = reconstruct(skel, truth, methods=["fabrik", "ccd"])
    ccd_only = reconstruct(skel, truth, methods=["ccd"])
    assert [r.method for r in pool_reports([both, ccd_only]).results] == ["ccd"]
    fabrik_only = reconstruct(skel, truth, methods=["fabrik"])
    with pytest.raises(ValueError, match="no method in common"):
        pool_reports([ccd_only, fabrik_only])
    with pytest.raises(ValueError, match="at least one"):
        pool_reports([])


@needs_skeleton_fabrik
def test_cli_pools_several_takes_and_skips_a_bad_one(tmp_path, capsys):
    from fabrik.cli import main

    files = []
    for name, n in (("walk_a.bvh", 20), ("walk_b.bvh", 16)):
        skel, motion = sample_walk(n_frames=n)
        save_bvh(tmp_path / name, skel, motion)
        files.append(str(tmp_path / name))
    bad = tmp_path / "broken.bvh"
    bad.write_text("HIERARCHY\nROOT a\n{\n")
    rc = main(["reconstruct", files[0], str(bad), files[1], "--methods", "fabrik,ccd", "--json",
               str(tmp_path / "pooled.json"), "--out", str(tmp_path / "rec")])
    captured = capsys.readouterr()
    assert rc == 1  # a take was skipped
    assert "skipped" in captured.err and "broken.bvh" in captured.err and "line" in captured.err
    assert "Pooled over 2 takes, 36 frames" in captured.out
    payload = json.loads((tmp_path / "pooled.json").read_text())
    assert [t["frames"] for t in payload["takes"]] == [20, 16]
    assert payload["pooled"]["takes"] == 2 and payload["pooled"]["frames"] == 36
    assert [s["source"] for s in payload["skipped"]] == [str(bad)]
    for name in ("walk_a.bvh", "walk_b.bvh"):
        s2, m2 = load_bvh(tmp_path / "rec" / name)
        assert m2.n_frames in (20, 16)


def test_cli_refuses_a_file_out_and_clashing_names_for_several_takes(tmp_path, capsys):
    from fabrik.cli import main

    (tmp_path / "x").mkdir()
    a, b = tmp_path / "walk.bvh", tmp_path / "x" / "walk.bvh"
    assert main(["reconstruct", str(a), str(b), "--out", str(tmp_path / "o.bvh")]) == 2
    assert "give a folder" in capsys.readouterr().err
    assert main(["reconstruct", str(a), str(b), "--out", str(tmp_path / "o")]) == 2
    assert "would both be written" in capsys.readouterr().err
    assert main(["reconstruct", str(tmp_path / "missing1.bvh"), str(tmp_path / "missing2.bvh")]) == 2
    assert "no take could be reconstructed" in capsys.readouterr().err
    # never over the recordings themselves, one take or several
    skel, motion = sample_walk(n_frames=4)
    save_bvh(a, skel, motion)
    before = a.read_text()
    assert main(["reconstruct", str(a), "--out", str(a)]) == 2
    assert "overwrite the recording" in capsys.readouterr().err
    c = tmp_path / "other.bvh"
    assert main(["reconstruct", str(a), str(c), "--out", str(tmp_path)]) == 2
    assert "overwrite the recording" in capsys.readouterr().err
    assert a.read_text() == before
