"""The DHM study on recorded motion (``fabrik bench arm``): set-up, recorded angles, tracking."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

import fabrik
from fabrik_experiments.arm_study import arm_joints, arm_take, run_study, track
from fabrik_experiments.sample_motion import sample_walk

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mocap"


@pytest.fixture(scope="module")
def walk():
    return sample_walk(n_frames=60)


def test_arm_joints_are_found_by_name_and_refused_clearly(walk):
    skeleton, _ = walk
    assert [skeleton.names[j] for j in arm_joints(skeleton, "left")] == ["LeftArm", "LeftForeArm", "LeftHand",
                                                                          "LeftHand_End"]
    legs = fabrik.Skeleton.from_positions(["hips", "knee", "foot"], [-1, 0, 1], [[0, 1, 0], [0, 0.5, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match="no left arm found.*LeftArm, LeftForeArm, LeftHand"):
        arm_joints(legs, "left")
    with pytest.raises(ValueError, match="unknown joint"):
        arm_joints(skeleton, "left", ["LeftArm", "LeftForeArm", "Nope", "LeftHand_End"])


@pytest.mark.parametrize("side", ["left", "right"])
def test_recorded_angles_reproduce_the_recording(walk, side):
    skeleton, motion = walk
    take = arm_take(skeleton, motion, side)
    positions, frames = fabrik.forward(take.arm, take.recorded)
    scale = take.arm.reach
    np.testing.assert_allclose(positions[:, 3], take.positions[:, 1], atol=1e-9 * scale)  # elbows
    np.testing.assert_allclose(positions[:, 4], take.positions[:, 2], atol=1e-9 * scale)  # wrists
    np.testing.assert_allclose(positions[:, 7], take.positions[:, 3], atol=1e-9 * scale)  # tips
    np.testing.assert_allclose(frames[:, 7], take.tip_frames, atol=1e-9)
    assert take.fit_error <= 1e-9 * scale
    # the shoulder is fixed at the base origin in the study's set-up
    np.testing.assert_allclose(take.positions[:, 0], 0.0, atol=1e-12)


def test_tracking_reaches_every_frame_and_starts_on_the_recording(walk):
    skeleton, motion = walk
    take = arm_take(skeleton, motion, "right")
    for method in ("fabrik", "jacobian-dls"):
        tr = track(take, method)
        assert tr.reached.all(), method
        np.testing.assert_allclose(tr.angles[0], take.recorded[0])
        assert (tr.tip_errors <= take.tol).all()
        assert take.arm.within_limits(tr.angles).all()


def test_bench_arm_command_writes_the_table_json_and_figures(tmp_path, walk, capsys):
    from fabrik.cli import main

    skeleton, motion = walk
    path = tmp_path / "walk.bvh"
    fabrik.save_bvh(path, skeleton, motion)
    out = tmp_path / "arm.json"
    assert main(["bench", "arm", str(path), "--methods", "fabrik,ccd", "--json", str(out), "--plot",
                 str(tmp_path / "img")]) == 0
    text = capsys.readouterr().out
    assert "study (Tab. 2)" in text and "fabrik" in text
    data = json.loads(out.read_text())
    rows = {r["method"]: r for r in data["results"]}
    assert set(rows) == {"fabrik", "ccd"}
    for key in ("per_joint_rmse_deg", "mean_rmse_deg", "mean_ee_error", "reached_fraction", "mean_iterations",
                "frames_per_second"):
        assert key in rows["fabrik"]
    assert len(rows["fabrik"]["per_joint_rmse_deg"]) == 7
    assert rows["fabrik"]["reached_fraction"] == 1.0
    assert len(list((tmp_path / "img").glob("arm_walk_*.png"))) == 2
    legs = tmp_path / "legs.bvh"
    legs.write_text(LEGS_ONLY)
    with pytest.raises(ValueError, match="no arm could be set up.*legs.bvh"):
        run_study([str(legs)])


def test_bench_arm_on_one_frame_says_it_needs_two(tmp_path, walk, capsys):
    """A take (or a --frames range) of one frame has no frame to track after the starting one: the
    command says so in one line (it divided by zero), and a longer take beside it is studied."""
    from fabrik.cli import main

    skeleton, motion = walk
    one, two = tmp_path / "one.bvh", tmp_path / "two.bvh"
    fabrik.save_bvh(one, skeleton, motion.frames(0, 1))
    fabrik.save_bvh(two, skeleton, motion.frames(0, 2))
    for argv in ([str(one)], [str(two), "--frames", "0:1"]):
        assert main(["bench", "arm", *argv, "--methods", "fabrik"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1
        assert "no arm could be set up" in err and "1 frame; the study tracks the frames after the first" in err
    study = run_study([str(one), str(two)], sides=("left",), methods=("fabrik",))
    assert [t.source for t in study.takes] == ["two.bvh"] and study.skipped[0].startswith("one.bvh: 1 frame")
    assert study.rows[0].reached_fraction == 1.0 and study.rows[0].mean_iterations >= 0


LEGS_ONLY = """HIERARCHY
ROOT hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT knee
  {
    OFFSET 0 -1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.0333
0 0 0 0 0 0 0 0 0
0 0 0 0 0 0 0 0 0
"""


@pytest.mark.mocap
@pytest.mark.skipif(not MOCAP.is_dir(), reason="needs the real CMU takes in ../shared/data/mocap")
def test_cmu_takes_both_arms_reached_and_fast():
    study = run_study([MOCAP / "cmu_131_02.bvh"], frames="0:300")
    rows = {r.method: r for r in study.rows}
    assert rows["fabrik"].reached_fraction >= 0.995
    assert len(study.takes) == 2
    assert math.isfinite(rows["fabrik"].mean_rmse_deg)


def test_nearly_straight_elbow_keeps_its_roll():
    """An arm whose elbow straightens to 3 degrees and bends again, tracked from its tip poses: the
    elbow point then hardly depends on the swivel, and FABRIK must not let the upper arm's roll
    wander (it did, by tens of degrees, the wrist turning back, while the elbow stayed within a
    few millimetres)."""
    arm = fabrik.models.dhm_arm(side="right")
    t = np.linspace(0.0, 2.0 * np.pi, 240)
    q = np.zeros((t.size, 7))
    q[:, 0] = 0.3 + 0.4 * np.sin(t)
    q[:, 1] = 0.5 + 0.3 * np.sin(2 * t)
    q[:, 2] = -0.2 + 0.3 * np.cos(t)
    q[:, 3] = np.radians(3.0) + np.radians(57.0) * (0.5 + 0.5 * np.cos(2 * t))
    q[:, 4] = 0.3 * np.sin(t)
    q[:, 5] = 0.2 * np.cos(t)
    q[:, 6] = 0.1 * np.sin(3 * t)
    q = np.clip(q, arm.lower, arm.upper)
    positions, frames = fabrik.forward(arm, q)
    angles = np.empty_like(q)
    angles[0] = q[0]
    for f in range(1, t.size):
        sol = fabrik.solve(arm, (positions[f, -1], frames[f, -1]), initial=angles[f - 1], tol=1e-3)
        assert sol.reached
        angles[f] = sol.joint_angles
    # the swivel is free (a pose target fixes six of seven angles), so the recorded roll is not
    # the answer; but the roll must move as smoothly as the recording (it jumped by 15 degrees a
    # frame against the recording's 1.5, 66 degrees RMSE on the upper arm's roll)
    step = np.abs(np.diff(angles, axis=0)).max()
    assert step <= 2.0 * np.abs(np.diff(q, axis=0)).max()
    rmse = np.degrees(np.sqrt(np.mean((angles - q) ** 2, axis=0)))
    assert rmse.max() < 30.0, rmse
