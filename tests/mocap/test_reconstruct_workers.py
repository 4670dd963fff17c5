"""fabrik reconstruct --workers: the takes on a local Dask cluster give the serial run's tables."""

import json

import pytest

from fabrik.cli import main
from fabrik.io.bvh import save_bvh
from fabrik_experiments.reconstruction import reconstruct_takes
from fabrik_experiments.sample_motion import sample_walk

pytest.importorskip("dask.distributed", reason="dask[distributed] is not installed (the 'cluster' extra)")

#: Timings differ from run to run; everything else must not.
TIMINGS = {"frames_per_second"}


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


@pytest.fixture(scope="module")
def takes(tmp_path_factory):
    """Three short procedural walks of different speeds and lengths, and a file that is not BVH."""
    folder = tmp_path_factory.mktemp("takes")
    paths = []
    for k, (frames, speed) in enumerate([(12, 130.0), (9, 90.0), (15, 160.0)]):
        skeleton, motion = sample_walk(n_frames=frames, speed=speed)
        path = folder / f"walk{k}.bvh"
        save_bvh(path, skeleton, motion)
        paths.append(str(path))
    bad = folder / "broken.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n")
    return paths, str(bad)


def test_workers_give_the_serial_tables(takes, tmp_path):
    paths, bad = takes
    files = [paths[0], bad, paths[1], paths[2]]
    serial, cluster = tmp_path / "serial.json", tmp_path / "cluster.json"
    args = ["reconstruct", *files, "--methods", "fabrik,ccd"]
    assert main([*args, "--json", str(serial)]) == 1  # the broken take is skipped: exit code 1
    assert main([*args, "--workers", "2", "--json", str(cluster)]) == 1
    a, b = json.loads(serial.read_text()), json.loads(cluster.read_text())
    assert without_timings(a["pooled"]) == without_timings(b["pooled"])
    assert without_timings(a["takes"]) == without_timings(b["takes"])
    assert [t["source"] for t in b["takes"]] == ["walk0.bvh", "walk1.bvh", "walk2.bvh"]
    assert len(b["skipped"]) == 1 and b["skipped"][0]["source"] == bad
    assert b["skipped"][0]["error"] == a["skipped"][0]["error"] and b["skipped"][0]["error"]


def test_reconstruct_takes_in_order_with_reasons(takes):
    paths, bad = takes
    results = reconstruct_takes([bad, paths[1]], workers=1, methods=["fabrik"])
    assert results[0][0] is None and results[0][1]
    assert results[1][1] is None and results[1][0].source == "walk1.bvh"
    serial = reconstruct_takes([bad, paths[1]], methods=["fabrik"])
    assert serial[0][1] == results[0][1]
    assert serial[1][0].result("fabrik").median_error == results[1][0].result("fabrik").median_error


@pytest.mark.parametrize("kwargs, message", [
    (dict(workers=0), "workers must be"),
    (dict(workers=2, scheduler="tcp://localhost:1"), "not both"),
])
def test_bad_cluster_arguments(takes, kwargs, message):
    with pytest.raises(ValueError, match=message):
        reconstruct_takes(takes[0][:1], **kwargs)


def test_cli_refuses_bad_workers(takes):
    assert main(["reconstruct", takes[0][0], "--workers", "0"]) == 2
