"""The numbered example scripts run as they are (they double as documentation)."""

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name", ["01_single_chain.py", "02_skeleton.py", "03_motion_capture.py"])
def test_example_runs(name, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out.bvh"
    args = []
    if name == "03_motion_capture.py":
        from fabrik_experiments.sample_motion import sample_walk
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


def test_readme_code_runs_as_written(tmp_path, monkeypatch):
    """The README's Python block, with a walk of the project's own as its ``walk.bvh``."""
    import re

    import fabrik
    from fabrik_experiments.sample_motion import sample_walk

    text = (EXAMPLES.parent / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "the README has no python block"
    skeleton, motion = sample_walk(n_frames=30)
    monkeypatch.chdir(tmp_path)
    fabrik.save_bvh("walk.bvh", skeleton, motion)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    assert (tmp_path / "copy.bvh").exists()


@pytest.mark.parametrize("page", ["methods.md", "constraints.md", "mocap.md"])
def test_docs_code_runs_as_written(page, tmp_path, monkeypatch):
    """Each docs page's Python blocks, in order, with a walk of the project's own as ``walk.bvh``."""
    import re

    import fabrik
    from fabrik_experiments.sample_motion import sample_walk

    text = (EXAMPLES.parent / "docs" / page).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, f"docs/{page} has no python block"
    skeleton, motion = sample_walk(n_frames=30)
    monkeypatch.chdir(tmp_path)
    fabrik.save_bvh("walk.bvh", skeleton, motion)
    namespace = {"__name__": "docs"}
    for block in blocks:
        exec(compile(block, f"docs/{page}", "exec"), namespace)


def test_fig18_writes_outside_the_docs_by_default():
    import runpy

    example = runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "fig18_constraints.py"),
                             run_name="fig18")
    assert example["output_path"]([]) == Path("fabrik-out") / "constrained_vs_unconstrained.png"
    assert example["output_path"](["x.png"]) == Path("x.png")
    docs = example["output_path"](["--docs"])
    assert docs.parts[-3:] == ("docs", "img", "constrained_vs_unconstrained.png")
