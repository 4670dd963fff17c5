"""How fast ``load_bvh`` reads a long take, and how much memory it takes to do it.

    .venv/bin/python benchmarks/bvh_load.py [--frames 100000] [--repeat 3] [--json PATH]
                                            [--source FILE.bvh] [--src LABEL=SRC_DIR ...]

Writes a take of ``--frames`` frames to a temporary file: the hierarchy of ``--source`` (default
``../shared/data/mocap/cmu_131_01.bvh``, 38 joints, 96 channels) with its frame lines repeated,
or, when that file is absent, a made-up 38-joint hierarchy (31 joints with channels, 7 End Sites)
with values printed as CMU prints them (``%.4f``). 100,000 frames make about 72 MB.

Each ``--src LABEL=DIR`` is a ``src`` folder of a checkout of this package (default: the one
this script belongs to); its ``fabrik.io.bvh.load_bvh`` is measured in fresh subprocesses,
after one untimed load of a 10-frame take of the same hierarchy (numba's compile or cache load,
imports):

- ``load s``: wall time of ``load_bvh`` on the long take, best and median of ``--repeat`` runs,
  each in its own process; ``MB/s`` is the file size over the best time; ``cpu s``: the
  process's CPU time during the best-CPU load (``time.process_time``), which other jobs sharing
  the machine slow less than the wall time, and ``cpu MB/s`` the size over it;
- ``tracemalloc peak``: the largest total of Python and NumPy allocations during the load
  (``tracemalloc``; NumPy reports its array buffers to it), in a run of its own, as tracing
  slows allocation-heavy code;
- ``maxrss delta``: how far the process's peak resident memory (``ru_maxrss``) rose during the
  load, from the timed runs (largest of them): everything the process touched, allocator and
  page-cache effects included.

Both memory figures are also given as multiples of the file size. To measure the reader of
another commit, unpack its sources (``git archive <commit> src | tar -x -C DIR``) and pass
``--src old=DIR/src``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = ROOT.parent / "shared" / "data" / "mocap" / "cmu_131_01.bvh"

#: Runs in the subprocess: warm up on the short take, then load the long one once.
_PROBE = r"""
import json, resource, sys, time, tracemalloc
from fabrik.io.bvh import load_bvh
short, long_, mode = sys.argv[1:4]
t0 = time.perf_counter()
load_bvh(short)
warm = time.perf_counter() - t0
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode == "trace":
    tracemalloc.start()
t0, c0 = time.perf_counter(), time.process_time()
skeleton, motion = load_bvh(long_)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = tracemalloc.get_traced_memory()[1] if mode == "trace" else None
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "warm_up_seconds": warm, "tracemalloc_peak": peak,
                  "maxrss_delta": (after - before) * 1024, "frames": motion.n_frames,
                  "joints": skeleton.n_joints, "channels": motion.layout.n_channels}))
"""


def synthetic_hierarchy() -> bytes:
    """A 38-joint humanoid-like hierarchy: 31 joints (root 6 channels, others 3), 7 End Sites."""
    chains = {"LLeg": ["LHip", "LKnee", "LAnkle", "LToe"], "RLeg": ["RHip", "RKnee", "RAnkle", "RToe"],
              "Spine": ["Spine1", "Spine2", "Spine3", "Neck", "Head"],
              "LArm": ["LClavicle", "LShoulder", "LElbow", "LWrist", "LHand", "LFinger"],
              "RArm": ["RClavicle", "RShoulder", "RElbow", "RWrist", "RHand", "RFinger"],
              "Tail": ["Tail1", "Tail2", "Tail3"], "Extra": ["Extra1", "Extra2"]}
    out = ["HIERARCHY", "ROOT Hips", "{", "\tOFFSET 0 0 0",
           "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation"]
    for chain in chains.values():
        depth = 1
        for name in chain:
            ind = "\t" * depth
            out += [f"{ind}JOINT {name}", f"{ind}{{", f"{ind}\tOFFSET 0 1.5 0.25",
                    f"{ind}\tCHANNELS 3 Zrotation Yrotation Xrotation"]
            depth += 1
        ind = "\t" * depth
        out += [f"{ind}End Site", f"{ind}{{", f"{ind}\tOFFSET 0 1 0", f"{ind}}}"]
        out += ["\t" * d + "}" for d in range(depth - 1, 0, -1)]
    out += ["}", "MOTION"]
    return ("\n".join(out) + "\n").encode()


def write_take(path: Path, source: Path | None, frames: int) -> dict:
    """Write a take of ``frames`` frames to ``path``; returns what it is made of."""
    if source is not None and source.is_file():
        raw = source.read_bytes()
        m = re.search(rb"^[ \t]*MOTION[ \t]*\r?$", raw, re.M | re.I)
        head = raw[:m.end()] + (b"\n" if raw[m.end():m.end() + 1] == b"\n" else b"")
        body = raw[len(head):].splitlines(keepends=True)
        lines = [line for line in body if line.strip()]
        frame_time, rows = lines[1], lines[2:]
        newline = b"\r\n" if head.endswith(b"\r\n") else b"\n"
        origin = str(source)
    else:
        head = synthetic_hierarchy()
        rng = np.random.default_rng(0)
        rows = [(" ".join(f"{v:.4f}" for v in rng.uniform(-90, 90, 96)) + "\n").encode() for _ in range(1000)]
        frame_time, newline, origin = b"Frame Time: .0083333\n", b"\n", "synthetic"
    with open(path, "wb") as f:
        f.write(head + b"Frames: %d" % frames + newline + frame_time)
        for k in range(frames):
            f.write(rows[k % len(rows)])
    return {"hierarchy": origin, "frames": frames, "bytes": path.stat().st_size}


def measure(src: str, short: Path, long_: Path, mode: str) -> dict:
    env = dict(os.environ, PYTHONPATH=src)
    run = subprocess.run([sys.executable, "-c", _PROBE, str(short), str(long_), mode], env=env,
                         capture_output=True, text=True, check=False)
    if run.returncode:
        raise SystemExit(f"{src}: the load failed:\n{run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(frames: int = 100_000, repeat: int = 3, source: Path | None = DEFAULT_SOURCE,
         srcs: dict[str, str] | None = None, json_path: Path | None = None) -> dict:
    srcs = srcs or {"this checkout": str(ROOT / "src")}
    with tempfile.TemporaryDirectory() as tmp:
        short, long_ = Path(tmp) / "short.bvh", Path(tmp) / "long.bvh"
        write_take(short, source, 10)
        take = write_take(long_, source, frames)
        mb = take["bytes"] / 1e6
        results = {}
        for label, src in srcs.items():
            runs = [measure(src, short, long_, "time") for _ in range(repeat)]
            traced = measure(src, short, long_, "trace")
            times = [r["seconds"] for r in runs]
            cpu = min(r["cpu_seconds"] for r in runs)
            rss = max(r["maxrss_delta"] for r in runs)
            results[label] = {
                "src": src, "seconds_best": min(times), "seconds_median": statistics.median(times),
                "mb_per_s": mb / min(times), "cpu_seconds_best": cpu, "cpu_mb_per_s": mb / cpu,
                "warm_up_seconds": runs[0]["warm_up_seconds"],
                "tracemalloc_peak_mb": traced["tracemalloc_peak"] / 1e6,
                "tracemalloc_peak_x_file": traced["tracemalloc_peak"] / take["bytes"],
                "maxrss_delta_mb": rss / 1e6, "maxrss_delta_x_file": rss / take["bytes"],
                "loaded": {k: runs[0][k] for k in ("frames", "joints", "channels")}}
    report = {"take": take, "machine": {"platform": platform.platform(), "processor": platform.processor(),
                                        "cpus": os.cpu_count(), "python": platform.python_version()},
              "results": results}
    print(f"take: {take['frames']} frames, {mb:.1f} MB, hierarchy {take['hierarchy']}")
    print(f"{'reader':<16}{'load s best/med':>18}{'MB/s':>8}{'cpu s':>7}{'cpu MB/s':>9}{'tracemalloc peak':>22}"
          f"{'maxrss delta':>20}")
    for label, r in results.items():
        print(f"{label:<16}{r['seconds_best']:>9.2f} /{r['seconds_median']:>6.2f}{r['mb_per_s']:>8.1f}"
              f"{r['cpu_seconds_best']:>7.2f}{r['cpu_mb_per_s']:>9.1f}"
              f"{r['tracemalloc_peak_mb']:>11.0f} MB ({r['tracemalloc_peak_x_file']:.2f}x)"
              f"{r['maxrss_delta_mb']:>9.0f} MB ({r['maxrss_delta_x_file']:.2f}x)")
    if json_path is not None:
        Path(json_path).write_text(json.dumps(report, indent=2) + "\n")
    return report


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=100_000, help="frames in the take (default 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed loads per reader, each in a fresh process")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                        help="BVH file whose hierarchy and frames are repeated (absent: a synthetic one)")
    parser.add_argument("--src", action="append", default=[], metavar="LABEL=DIR",
                        help="a checkout's src folder to measure (repeatable; default: this checkout)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    srcs = {}
    for item in args.src:
        label, sep, path = item.partition("=")
        if not sep:
            parser.error(f"--src takes LABEL=DIR, got {item!r}")
        srcs[label] = str(Path(path).resolve())
    main(args.frames, args.repeat, args.source, srcs or None, args.json)


if __name__ == "__main__":
    _cli()
