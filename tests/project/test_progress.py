"""Long runs say what they are doing: progress lines off a terminal, stages with their time, the
Makefile's wrapper around pip, and the install-time compile of the kernels."""

import subprocess
import sys
import time
from pathlib import Path

import fabrik._progress as progress

ROOT = Path(__file__).resolve().parents[2]


def test_counted_progress_prints_lines_off_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(progress, "INTERVAL", 0.05)
    with progress.progress_bar(True, 10, "solving", "frame") as bar:
        for _ in range(10):
            bar.update(1)
            bar.set_postfix_str("fabrik")
            time.sleep(0.03)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 3
    assert all(line.startswith("solving: ") for line in lines)
    assert any("/10 frames (fabrik)" in line and "left" in line for line in lines[:-1])
    assert lines[-1].startswith("solving: 10 frames in ")


def test_a_quick_run_prints_nothing(capsys):
    with progress.progress_bar(True, 3, "quick", "step") as bar:
        bar.update(3)
    with progress.progress_bar(False, 3, "off", "step") as bar:
        assert bar is None
    assert capsys.readouterr().err == ""


def test_a_blocked_step_still_speaks(monkeypatch, capsys):
    """A step that never updates (a kernel compiling on first use) is reported all the same."""
    monkeypatch.setattr(progress, "INTERVAL", 0.05)
    with progress.progress_bar(True, 5, "compiling", "target"):
        time.sleep(0.2)
    assert "compiling: 0/5 targets" in capsys.readouterr().err


def test_stage_says_what_and_how_long(monkeypatch, capsys):
    monkeypatch.setattr(progress, "INTERVAL", 0.05)
    with progress.stage("installing", "about 1 s"):
        time.sleep(0.2)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "installing (about 1 s)..."
    assert any(line.startswith("  ... installing: ") for line in err[1:-1])
    assert err[-1].startswith("installing: done in ")


def test_the_makefile_wrapper_runs_a_command_and_keeps_its_exit_code():
    """``python src/fabrik/_progress.py WHAT ABOUT -- COMMAND``, with the standard library only."""
    script = ROOT / "src" / "fabrik" / "_progress.py"
    ok = subprocess.run([sys.executable, "-I", str(script), "echoing", "", "--", sys.executable, "-c", "print(42)"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout.strip() == "42"
    assert ok.stderr.splitlines()[0] == "echoing..." and "echoing: done in" in ok.stderr
    bad = subprocess.run([sys.executable, "-I", str(script), "failing", "", "--", sys.executable, "-c",
                          "raise SystemExit(3)"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 3 and "failing: stopped after" in bad.stderr


def test_warmup_compiles_each_step_and_says_so(capsys):
    from fabrik.cli import warmup as _warmup

    assert _warmup.main([]) == 0
    err = capsys.readouterr().err
    for k, (what, _) in enumerate(_warmup.STEPS, 1):
        assert f"[{k}/{len(_warmup.STEPS)}] compiling {what}: done in" in err
    assert "kernels compiled and cached in" in err


def test_the_wrapper_beats_only_while_the_command_is_silent(monkeypatch, capsys):
    """Generous margins: a line every 0.05 s against a 1.5 s beat (a loaded machine's delays)."""
    monkeypatch.setattr(progress, "INTERVAL", 1.5)
    talk = "import time\nfor k in range(40):\n    print(k, flush=True); time.sleep(0.05)"
    assert progress._main(["talking", "", "--", sys.executable, "-c", talk]) == 0
    out, err = capsys.readouterr()
    assert out.split() == [str(k) for k in range(40)]
    assert not any(line.startswith("  ... talking") for line in err.splitlines())
    assert progress._main(["silent", "", "--", sys.executable, "-c", "import time; time.sleep(3.5)"]) == 0
    assert any(line.startswith("  ... silent: ") for line in capsys.readouterr().err.splitlines())
