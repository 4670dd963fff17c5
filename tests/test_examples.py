"""The numbered example scripts run as they are (they double as documentation)."""

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("name", ["01_single_chain.py", "02_skeleton.py", "03_motion_capture.py"])
def test_example_runs(name, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out.bvh"
    args = []
    if name == "03_motion_capture.py":
        from fabrik.experiments.sample_motion import sample_walk
        import fabrik

        skeleton, motion = sample_walk()
        src = tmp_path / "walk.bvh"
        fabrik.save_bvh(src, skeleton, motion)
        args = [str(src), str(out)]
    monkeypatch.setattr(sys, "argv", [name, *args])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    text = capsys.readouterr().out
    assert "Solution" in text or "Reconstruction" in text
    assert "nan" not in text.lower()
    if args:
        assert out.exists()
