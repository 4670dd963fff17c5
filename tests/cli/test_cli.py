"""The command line: subcommands run, write what they say, and report bad input clearly."""

import json
from pathlib import Path

import pytest

import fabrik
from fabrik.cli import main


def test_bench_chain_writes_table_and_json(tmp_path, capsys):
    path = tmp_path / "out" / "t1.json"
    assert main(["bench", "chain", "--targets", "50", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "mean iter" in out and "fabrik" in out
    data = json.loads(path.read_text())
    rows = {(r["method"], r["targets"]): r for r in data["results"]}
    reachable = rows[("fabrik", "reachable")]
    for key in ("mean_iterations", "median_us", "p90_us", "success_rate", "mean_error"):
        assert key in reachable
    assert reachable["success_rate"] == 1.0
    assert rows[("fabrik", "unreachable")]["mean_iterations"] == 1.0


def test_demo_writes_picture(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--targets", "30"]) == 0
    out = capsys.readouterr().out
    assert "Table 1" in out
    png = tmp_path / "chains.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unknown_method_is_a_clear_error(capsys):
    assert main(["bench", "chain", "--methods", "bogus", "--targets", "5"]) == 2
    assert "unknown method(s) bogus" in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "fabrik" in capsys.readouterr().out


def test_bench_chain_constrained(tmp_path, capsys):
    path = tmp_path / "c.json"
    assert main(["bench", "chain", "--constrained", "--targets", "20", "--json", str(path)]) == 0
    rows = {r["method"]: r for r in json.loads(path.read_text())["results"]}
    assert set(rows) == {"fabrik-constrained", "ccd-constrained"}
    assert rows["fabrik-constrained"]["max_violation_rad"] <= 1e-6
    assert "cone" in capsys.readouterr().out
    # no figures for it: said, not silently skipped
    assert main(["bench", "chain", "--constrained", "--targets", "2", "--plot", str(tmp_path / "figs")]) == 2
    assert "--plot draws Figures 11 and 12 for the unconstrained chain" in capsys.readouterr().err


def test_a_directory_instead_of_a_file_is_a_clear_error(tmp_path, capsys):
    assert main(["reconstruct", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "fabrik reconstruct: error:" in err and "Traceback" not in err


def test_python_dash_m_fabrik_runs_the_cli():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "fabrik", "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "fabrik" in (out.stdout + out.stderr)


def test_unwritable_outputs_fail_before_any_solving(tmp_path, capsys, monkeypatch):
    """A --json or --out that cannot be written is refused at once, naming the option (it used to
    fail only after the whole run)."""
    import fabrik_experiments.reconstruction as rec
    import fabrik_experiments.table1 as table1

    def never(*args, **kwargs):
        raise AssertionError("solved before checking its outputs")

    monkeypatch.setattr(table1, "run_table1", never)
    monkeypatch.setattr(rec, "reconstruct_file", never)
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    cases = [
        (["bench", "chain", "--json", str(a_file / "t.json")], "--json"),
        (["bench", "chain", "--json", str(tmp_path)], "is a folder"),
        (["bench", "chain", "--plot", str(a_file)], "--plot"),
        (["reconstruct", "walk.bvh", "--json", str(a_file / "r.json")], "--json"),
        (["reconstruct", "walk.bvh", "--out", str(a_file / "r.bvh")], "--out"),
    ]
    for argv, words in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (argv, err)


def test_a_method_named_twice_runs_once(tmp_path, capsys):
    path = tmp_path / "t.json"
    assert main(["bench", "chain", "--targets", "3", "--methods", "fabrik, ccd,fabrik", "--json", str(path)]) == 0
    methods = [r["method"] for r in json.loads(path.read_text())["results"]]
    assert methods.count("fabrik") == 2 and methods.count("ccd") == 2  # reachable and unreachable rows


def test_bench_batch_prints_no_cuda_warning_without_a_gpu(tmp_path):
    """Warp's native library warns on stderr that it found no CUDA driver; on a machine without a
    GPU that is the expected case, and `fabrik bench batch` keeps it off the screen (issue 41)."""
    import subprocess
    import sys

    pytest.importorskip("warp", reason="warp-lang is not installed (the test extra)")
    from fabrik_experiments.batch_bench import _has_cuda_driver

    if _has_cuda_driver():
        pytest.skip("this machine has a CUDA driver: Warp prints no such warning")
    run = subprocess.run([sys.executable, "-m", "fabrik", "bench", "batch", "--targets", "1000", "--repeats", "1",
                          "--parts", "chain,float32",
                          "--lengths", "10", "--json", str(tmp_path / "b.json")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "warp cpu" in run.stdout
    assert "CUDA" not in run.stderr, run.stderr


def test_cli_option_message(tmp_path, capsys):
    from fabrik.cli import main
    from fabrik_experiments.sample_motion import sample_walk

    skeleton, motion = sample_walk()
    src = tmp_path / "walk.bvh"
    fabrik.save_bvh(src, skeleton, motion)
    assert main(["reconstruct", str(src), "--frames", "0:2", "--option", "fabrik:bogus=1"]) == 2
    err = capsys.readouterr().err
    assert "method 'fabrik' for skeletons takes no option 'bogus'; it takes rigid_sub_bases, swing_limbs, turn_search, reach_step, dls_start, dls_damping, initial_frames, root_rotation" in err


def test_cli_out_creates_only_the_last_folder_level(tmp_path):
    from fabrik._output import prepare_output

    prepare_output(tmp_path / "new" / "rec.bvh", "--out")
    assert (tmp_path / "new").is_dir()
    with pytest.raises(ValueError, match=r"the folder '.*deep' does not exist"):
        prepare_output(tmp_path / "deep" / "er" / "rec.bvh", "--out")
    assert not (tmp_path / "deep").exists()
    with pytest.raises(ValueError, match=r"--out '/nonexistent/dir/x.bvh': the folder '/nonexistent' does not exist"):
        prepare_output("/nonexistent/dir/x.bvh", "--out")
    assert not Path("/nonexistent").exists()
    prepare_output(tmp_path / "figs", "--plot", folder=True)
    assert (tmp_path / "figs").is_dir()
    with pytest.raises(ValueError, match="does not exist"):
        prepare_output(tmp_path / "a" / "b", "--plot", folder=True)


def test_cli_out_refuses_a_missing_parent(tmp_path, capsys):
    from fabrik.cli import main

    assert main(["bench", "chain", "--targets", "2", "--json", str(tmp_path / "x" / "y" / "t.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_demo_table_legend_explains_the_headers():
    from fabrik_experiments.table1 import TABLE_LEGEND, format_table

    header = format_table([]).splitlines()[0]
    for column in ("mean iter", "median us", "p90 us", "us/iter", "iter/s", "success", "mean error", "excess err",
                   "len drift"):
        assert column in header and f"{column}:" in TABLE_LEGEND.replace("median us, p90 us:", "median us: p90 us:")


def test_library_and_cli_defaults_agree():
    from fabrik.cli import reconstruct as cli
    from fabrik.solvers.skeleton_fabrik import DEFAULT_RIGID_SUB_BASES, DEFAULT_SWING_LIMBS, TrackingOptions
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cli.add_parser(sub)
    args = parser.parse_args(["reconstruct", "x.bvh"])
    assert args.rigid_sub_bases == DEFAULT_RIGID_SUB_BASES == TrackingOptions().rigid_sub_bases
    assert (not args.no_limb_swing) == DEFAULT_SWING_LIMBS == TrackingOptions().swing_limbs
    assert vars(fabrik.method("fabrik").skeleton.defaults) == vars(TrackingOptions())
