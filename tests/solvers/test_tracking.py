"""The tracking experiment and the ``fabrik bench tracking`` / ``bench chain --plot`` commands."""

import json

import numpy as np

from fabrik.cli import main
from fabrik_experiments.tracking import run_tracking, target_path

KEYS = {"method", "mean_error", "max_error", "mean_iterations", "median_us", "max_joint_step",
        "max_joint_step_within_reach"}


def test_target_path_moves_in_and_out_of_reach():
    path = target_path(1000, 900.0)
    r = np.linalg.norm(path, axis=1)
    assert path.shape == (1000, 3)
    assert r.min() < 0.5 * 900.0 and r.max() > 900.0
    assert (r > 900.0).mean() > 0.1
    # small steps: a smooth path
    assert np.linalg.norm(np.diff(path, axis=0), axis=1).max() < 50.0


def test_tracking_rows_and_fabrik_tracks():
    rows, runs = run_tracking(["fabrik", "ccd", "triangulation"], n_steps=60)
    assert [r["method"] for r in rows] == ["fabrik", "ccd", "triangulation"]
    for row, run in zip(rows, runs):
        assert set(row) == KEYS
        assert all(np.isfinite(v) for k, v in row.items() if k != "method")
        assert run.errors.shape == (60,)
        assert 0.0 < row["max_joint_step"] < 900.0
        assert row["max_joint_step_within_reach"] <= row["max_joint_step"]
        assert row["mean_iterations"] >= 1.0
    # triangulation reaches every reachable target and points at the others: no excess error
    assert rows[2]["max_error"] <= 1e-6
    assert rows[0]["mean_error"] < 0.1


def test_bench_tracking_cli_writes_json(tmp_path, capsys):
    out = tmp_path / "tracking.json"
    assert main(["bench", "tracking", "--methods", "fabrik,jacobian-dls-tuned", "--steps", "30", "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert [r["method"] for r in payload["results"]] == ["fabrik", "jacobian-dls-tuned"]
    assert all(set(r) == KEYS for r in payload["results"])
    assert "max joint step" in capsys.readouterr().out


def test_bench_chain_all_methods_with_plots(tmp_path):
    out = tmp_path / "t1.json"
    assert main(["bench", "chain", "--methods", "fabrik,ccd,ftl,triangulation", "--targets", "5",
                 "--json", str(out), "--plot", str(tmp_path / "img")]) == 0
    rows = json.loads(out.read_text())["results"]
    assert {(r["method"], r["targets"]) for r in rows} == {(m, s) for m in ("fabrik", "ccd", "ftl", "triangulation")
                                                          for s in ("reachable", "unreachable")}
    assert all("max_length_drift" in r for r in rows)
    ftl_drift = max(r["max_length_drift"] for r in rows if r["method"] == "ftl")
    assert ftl_drift > 0.1  # stretched onto unreachable targets
    for name in ("fig11_iterations_vs_distance.png", "fig12_error_vs_time.png"):
        assert (tmp_path / "img" / name).stat().st_size > 10_000


def test_tracking_iteration_cap_is_applied_per_step(tmp_path, capsys):
    # a one-iteration budget per step: no step may run more, and the cap shows in the JSON and header
    out = tmp_path / "capped.json"
    assert main(["bench", "tracking", "--methods", "fabrik,ccd", "--steps", "40", "--max-iter", "1",
                 "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert payload["max_iter"] == 1
    assert all(r["mean_iterations"] <= 1.0 for r in payload["results"])
    assert "at most 1 iterations a step" in capsys.readouterr().out
    uncapped, _ = run_tracking(["ccd"], n_steps=40)
    assert uncapped[0]["mean_iterations"] > 1.0


def test_tracking_rejects_bad_cap(capsys):
    assert main(["bench", "tracking", "--methods", "fabrik", "--steps", "10", "--max-iter", "0"]) != 0
    assert "--max-iter" in capsys.readouterr().err
