"""FABRIK on robot arms (``fabrik-revolute``, and ``fabrik`` on arms other than the S-R-S human
arm): pose targets on URDF robots judged by yourdfpy, limits, random chains beside CCD, warm
starts, restarts, and ``fabrik bench robot``."""

import importlib.util
import json
import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik import Arm, load_urdf, save_urdf
from fabrik.cli import main

PI = math.pi
HALF_DEGREE = math.radians(0.5)
#: A time budget no test reaches: the restarts, not the machine's speed, decide (tests check answers,
#: never wall-clock time).
BUDGET = 60.0


def xarm7_like() -> Arm:
    """A 7-joint arm with offsets between its axes and tight limits (UFactory xArm 7's modified DH
    table, metres), built here so that these tests need no files."""
    rows = [(0, .267, 0, 0), (0, 0, -PI / 2, 0), (0, .293, PI / 2, 0), (0, 0, PI / 2, .0525),
            (0, .3425, PI / 2, .0775), (0, 0, PI / 2, 0), (0, .097, -PI / 2, .076)]
    limits = [(-2 * PI, 2 * PI), (-2.059, 2.0944), (-2 * PI, 2 * PI), (-0.19198, 3.927), (-2 * PI, 2 * PI),
              (-1.69297, PI), (-2 * PI, 2 * PI)]
    return Arm.from_dh(rows, convention="modified", limits=limits)


def random_arm(rng, m: int, limits: bool) -> Arm:
    """A random revolute chain: random axes, random rotations between joints, offsets of 0.1-1."""
    origins = np.tile(np.eye(4), (m, 1, 1))
    for k in range(m):
        origins[k, :3, :3] = Rotation.random(random_state=int(rng.integers(2**31))).as_matrix()
        if k > 0:
            origins[k, :3, 3] = rng.normal(size=3) * rng.uniform(0.1, 1.0) / math.sqrt(3.0)
    tip = np.eye(4)
    tip[:3, 3] = rng.normal(size=3) * 0.3
    lower = upper = None
    if limits:
        centre, half = rng.uniform(-1.0, 1.0, m), rng.uniform(0.5, 2.5, m)
        lower, upper = centre - half, centre + half
    return Arm([f"j{k}" for k in range(m)], rng.normal(size=(m, 3)), origins, tip, lower, upper)


def pose_errors(arm, q, position, rotation):
    """Tip position error and orientation error (radians, scipy's accurate angle, not arccos of the
    trace) of q, by ``fabrik.forward``."""
    positions, frames = fabrik.forward(arm, q)
    angle = Rotation.from_matrix(frames[-1].T @ rotation).magnitude()
    return float(np.linalg.norm(positions[-1] - position)), float(angle)


# --- URDF robots, judged by yourdfpy --------------------------------------------------------------

@pytest.mark.parametrize("robot, tip", [("panda", "panda_hand"), ("ur5", "tool0")])
def test_urdf_pose_targets_are_reached_as_yourdfpy_sees_them(urdf_dir, robot, tip):
    import yourdfpy

    path = urdf_dir / f"{robot}.urdf"
    arm = load_urdf(path, tip=tip)
    model = yourdfpy.URDF.load(str(path), load_meshes=False)
    rng = np.random.default_rng(20)
    goals = arm.random_angles(rng, 100)
    reached = 0
    for q_goal in goals:
        model.update_cfg(dict(zip(arm.joint_names, q_goal)))
        target = model.get_transform(arm.tip_name, arm.base_name)
        sol = fabrik.solve(arm, (target[:3, 3], target[:3, :3]), tol=1e-3, orientation_tol=HALF_DEGREE,
                           time_budget=BUDGET)
        assert arm.within_limits(sol.joint_angles)
        model.update_cfg(dict(zip(arm.joint_names, sol.joint_angles)))
        got = model.get_transform(arm.tip_name, arm.base_name)
        angle = math.acos(min(1.0, max(-1.0, (np.trace(got[:3, :3].T @ target[:3, :3]) - 1.0) / 2.0)))
        ok = np.linalg.norm(got[:3, 3] - target[:3, 3]) <= 1e-3 and angle <= HALF_DEGREE
        assert ok == sol.reached  # the solver's report agrees with the URDF's transforms
        reached += ok
    assert reached >= 99


def test_the_panda_figure_script_runs(urdf_dir, tmp_path, monkeypatch, capsys):
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "examples" / "fig_robot_panda.py"
    out = tmp_path / "panda.png"
    monkeypatch.setattr(sys, "argv", [script.name, str(urdf_dir / "panda.urdf"), str(out)])
    runpy.run_path(str(script), run_name="__main__")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.count("reached in") == 4


def test_fabrik_on_the_human_urdf_arm(urdf_dir):
    arm = load_urdf(urdf_dir / "human.urdf", tip="right_hand", base="middle_thorax")
    positions, frames = fabrik.forward(arm, arm.random_angles(np.random.default_rng(4), 30))
    for p, r in zip(positions[:, -1], frames[:, -1]):
        sol = fabrik.solve(arm, (p, r), tol=1e-3, orientation_tol=HALF_DEGREE, time_budget=BUDGET)
        assert sol.reached and arm.within_limits(sol.joint_angles)


# --- limits, answers, statuses --------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(["pose", "position", "anywhere"]))
def test_limits_are_never_violated(seed, kind):
    arm = xarm7_like()
    rng = np.random.default_rng(seed)
    q_goal = arm.random_angles(rng)
    start = rng.uniform(arm.lower - 1.0, arm.upper + 1.0)  # a start outside the limits is clipped
    positions, frames = fabrik.forward(arm, q_goal)
    if kind == "pose":
        target = (positions[-1], frames[-1])
    elif kind == "position":
        target = positions[-1]
    else:  # a point anywhere, often out of reach
        target = rng.normal(size=3) * arm.reach
    sol = fabrik.solve(arm, target, initial=start, tol=1e-3, orientation_tol=HALF_DEGREE, time_budget=BUDGET)
    assert arm.within_limits(sol.joint_angles)
    assert np.isfinite(sol.joint_angles).all()
    again, again_frames = fabrik.forward(arm, sol.joint_angles)
    np.testing.assert_allclose(again, sol.positions, rtol=0, atol=1e-12 * arm.reach)
    np.testing.assert_allclose(again_frames, sol.extras["frames"], rtol=0, atol=1e-12)
    if kind != "anywhere":
        assert sol.reached, sol
    assert sol.status in fabrik.STATUSES


def test_reached_means_within_both_tolerances():
    arm = xarm7_like()
    positions, frames = fabrik.forward(arm, arm.random_angles(np.random.default_rng(1), 40))
    for p, r in zip(positions[:, -1], frames[:, -1]):
        sol = fabrik.solve(arm, (p, Rotation.from_matrix(r)), tol=1e-4, orientation_tol=1e-3, time_budget=BUDGET)
        err, angle = pose_errors(arm, sol.joint_angles, p, r)
        assert sol.reached and err <= 1e-4 and angle <= 1e-3
        assert sol.error == pytest.approx(err, abs=1e-12) and sol.extras["orientation_error"] == pytest.approx(angle)


def test_out_of_reach_is_said_at_once_and_restarts_are_counted():
    arm = xarm7_like()
    far = fabrik.solve(arm, [3.0 * arm.reach, 0.0, 0.0])
    assert far.status == "unreachable" and far.extras["attempts"] == 1
    # an orientation the arm cannot take at that place: every attempt stalls, the restarts run out
    p = fabrik.forward(arm, np.zeros(7)).positions[-1]
    stuck = fabrik.solve(arm, (p, Rotation.from_euler("x", 180, degrees=True)), restarts=2, max_iter=10**6)
    assert stuck.status in ("stalled", "reached")
    assert stuck.extras["attempts"] <= 3
    one = fabrik.solve(arm, (p, np.eye(3)), restarts=0)
    assert one.extras["attempts"] == 1
    capped = fabrik.solve(arm, (p + 0.01, np.eye(3)), max_iter=1, restarts=0)
    assert capped.iterations <= 1 and capped.status in ("reached", "max_iterations")


def test_the_same_call_makes_the_same_attempts():
    arm = xarm7_like()
    positions, frames = fabrik.forward(arm, arm.random_angles(np.random.default_rng(8), 10))
    for p, r in zip(positions[:, -1], frames[:, -1]):
        a = fabrik.solve(arm, (p, r), time_budget=60.0)
        b = fabrik.solve(arm, (p, r), time_budget=60.0)
        assert a.extras["attempts"] == b.extras["attempts"]
        np.testing.assert_array_equal(a.joint_angles, b.joint_angles)


def test_warm_starts_track_a_path_without_restarts():
    arm = xarm7_like()
    rng = np.random.default_rng(3)
    # the joints that turn +-2 pi stay within +-pi here: near the ends of such a range an answer
    # may take another turn of a joint's angle (test_a_range_wider_than_a_turn_...)
    a, b = np.clip(arm.random_angles(rng, 2), -PI, PI)
    path = np.array([a + (b - a) * s for s in np.linspace(0.0, 0.3, 60)])
    positions, frames = fabrik.forward(arm, path)
    q = path[0]
    for k in range(path.shape[0]):
        sol = fabrik.solve(arm, (positions[k, -1], frames[k, -1]), initial=q, tol=1e-4, time_budget=BUDGET)
        assert sol.reached and sol.extras["attempts"] == 1
        assert np.abs(sol.joint_angles - q).max() < 0.3  # the previous answer's branch is kept
        q = sol.joint_angles


@pytest.mark.parametrize("method", ["fabrik", "ccd"])
def test_a_range_wider_than_a_turn_gives_the_turn_of_an_angle_inside_it(method):
    origins = np.tile(np.eye(4), (2, 1, 1))
    origins[1, 0, 3] = 1.0
    tip = np.eye(4)
    tip[0, 3] = 1.0
    arm = Arm(["a", "b"], [[0, 0, 1.0], [0, 0, 1.0]], origins, tip, [-2 * PI, -1.0], [2 * PI, 1.0])
    target = fabrik.forward(arm, [0.5, 0.3]).positions[-1]
    # from just below 2 pi the target's angle 2 pi + 0.5 lies beyond the range: 0.5 is taken
    options = {"restarts": 0} if method == "fabrik" else {}
    sol = fabrik.solve(arm, target, initial=[2 * PI - 0.1, 0.0], method=method, tol=1e-6, **options)
    assert sol.reached and sol.joint_angles[0] == pytest.approx(0.5, abs=1e-4)


def test_the_s_r_s_human_arm_keeps_the_study_method():
    arm = fabrik.models.dhm_arm()
    p, r = (x[-1] for x in fabrik.forward(arm, arm.random_angles(5)))
    study = fabrik.solve(arm, (p, r), tol=1e-3 * arm.reach)
    assert study.iterations == 1 and "attempts" not in study.extras  # the closed-form pass
    general = fabrik.solve(arm, (p, r), method="fabrik-revolute", tol=1e-3 * arm.reach, time_budget=BUDGET)
    assert general.reached and general.method == "fabrik-revolute" and general.extras["attempts"] >= 1


# --- random revolute chains beside CCD ------------------------------------------------------------

@pytest.mark.parametrize("limits", [False, True])
def test_random_chains_fabrik_reaches_at_least_what_ccd_reaches(limits):
    rng = np.random.default_rng(2021 + limits)
    counts = {"fabrik": 0, "ccd": 0}
    for _ in range(80):
        arm = random_arm(rng, int(rng.integers(3, 9)), limits)
        q_goal, q_start = arm.random_angles(rng, 2)
        target = fabrik.forward(arm, q_goal).positions[-1]
        for method in counts:
            sol = fabrik.solve(arm, target, initial=q_start, method=method, tol=1e-3 * arm.reach, time_budget=BUDGET)
            assert arm.within_limits(sol.joint_angles)
            counts[method] += sol.reached
    assert counts["fabrik"] >= counts["ccd"], counts
    assert counts["fabrik"] >= 78, counts


# --- fabrik bench robot ---------------------------------------------------------------------------

def test_bench_robot_writes_the_table_and_json(tmp_path, capsys):
    path = tmp_path / "xarm.urdf"
    save_urdf(path, xarm7_like(), name="xarm7_like")
    out = tmp_path / "out" / "robot.json"
    assert main(["bench", "robot", str(path), "--tip", "tip", "--targets", "15", "--json", str(out),
                 "--methods", "fabrik,fabrik:restarts=0,ccd,jacobian-dls,trac-ik,ikpy", "--plot", str(tmp_path / "img"),
                 "--tol", "1e-3,1e-6", "--orientation-tol", "0.5deg,1e-6"]) == 0
    text = capsys.readouterr().out
    assert "fabrik (restarts=0)" in text and "median us" in text
    assert "-- tolerance 0.001 and 0.5 deg" in text and "-- tolerance 1e-06 and 1e-06 rad" in text
    data = json.loads(out.read_text())
    assert data["tolerances"] == [{"tol": 1e-3, "orientation_tol": math.radians(0.5)},
                                  {"tol": 1e-6, "orientation_tol": 1e-6}]
    rows = {(r["label"], r["tol"]): r for r in data["results"]}
    for row in rows.values():
        for key in ("method", "success_rate", "median_us", "p90_us", "mean_iterations", "max_violation",
                    "orientation_tol"):
            assert key in row
        assert row["max_violation"] == 0.0
    assert rows[("fabrik", 1e-3)]["success_rate"] == 1.0 and rows[("fabrik", 1e-6)]["success_rate"] == 1.0
    assert rows[("fabrik (restarts=0)", 1e-3)]["options"] == {"restarts": 0}
    assert list((tmp_path / "img").glob("robot_xarm_tip.png"))
    if importlib.util.find_spec("pytracik") is not None:
        assert rows[("trac-ik", 1e-6)]["mean_iterations"] is None and rows[("trac-ik", 1e-6)]["note"]
    if importlib.util.find_spec("ikpy") is not None:
        assert rows[("ikpy", 1e-3)]["method"] == "ikpy" and rows[("ikpy", 1e-3)]["mean_iterations"] is None


def test_bench_robot_without_the_peer_libraries_says_so(tmp_path, capsys, monkeypatch):
    path = tmp_path / "xarm.urdf"
    save_urdf(path, xarm7_like())
    for module in ("ikpy", "ikpy.chain", "pytracik"):
        monkeypatch.setitem(sys.modules, module, None)  # importing it fails
    out = tmp_path / "robot.json"
    assert main(["bench", "robot", str(path), "--tip", "tip", "--targets", "3", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "ikpy is not installed" in text and "pytracik (TRAC-IK) is not installed" in text
    data = json.loads(out.read_text())
    assert not {"ikpy", "trac-ik"} & {r["method"] for r in data["results"]} and len(data["notes"]) == 2
    assert {r["tol"] for r in data["results"]} == {1e-3, 1e-5}  # the default tolerances


def test_bench_robot_against_trac_ik_on_the_same_targets(tmp_path):
    pytest.importorskip("pytracik", reason="pytracik (TRAC-IK's bindings, the bench extra) is not installed")
    from fabrik_experiments.robot_bench import robot_targets, tracik_solver

    arm = xarm7_like()
    path = tmp_path / "xarm.urdf"
    save_urdf(path, arm)
    solve, note = tracik_solver(path, arm, [(1e-3, 1e-3)], {"timeout": 0.05})
    targets = robot_targets(arm, 10, 1)
    reached = 0
    for p, r in zip(targets.positions, targets.rotations):
        q, _ = solve(p, r, targets.start, 1e-3, 1e-3)
        err, angle = pose_errors(arm, q, p, r)
        reached += err <= 1e-3 and angle <= 1e-3
    assert reached >= 8 and "timeout 50 ms" in note  # the chain, limits and quaternion order as TRAC-IK reads them


def test_bench_robot_bad_input_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "xarm.urdf"
    save_urdf(path, xarm7_like())
    assert main(["bench", "robot", str(path), "--tip", "nowhere", "--targets", "3"]) == 2
    assert "unknown link 'nowhere'" in capsys.readouterr().err
    assert main(["bench", "robot", str(path), "--tip", "tip", "--methods", "fabrik,bogus"]) == 2
    assert "unknown method 'bogus'" in capsys.readouterr().err
    assert main(["bench", "robot", str(path), "--tip", "tip", "--methods", "fabrik:restarts"]) == 2
    assert "option=value" in capsys.readouterr().err
    assert main(["bench", "robot", str(path), "--tol", "1e-3,1e-4,1e-5", "--orientation-tol", "1deg,2deg"]) == 2
    assert "pair in order" in capsys.readouterr().err
    assert main(["bench", "robot", str(path), "--tol", "-1"]) == 2
    assert "finite and >= 0" in capsys.readouterr().err


def test_ikpy_chain_has_the_arms_kinematics(tmp_path):
    pytest.importorskip("ikpy")
    from fabrik_experiments.robot_bench import ikpy_chain

    arm = xarm7_like()
    path = tmp_path / "xarm.urdf"
    save_urdf(path, arm)
    chain, index = ikpy_chain(path, arm)
    for q in arm.random_angles(np.random.default_rng(0), 5):
        full = np.zeros(len(chain.links))
        full[index] = q
        frame = chain.forward_kinematics(full)
        positions, frames = fabrik.forward(arm, q)
        np.testing.assert_allclose(frame[:3, 3], positions[-1], atol=1e-12)
        np.testing.assert_allclose(frame[:3, :3], frames[-1], atol=1e-12)
