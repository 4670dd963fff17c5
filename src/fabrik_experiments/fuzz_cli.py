"""Random ``fabrik`` command lines for the command-line fuzzing run (issue 40):
``benchmarks/fuzz_cli.py`` runs many in one process (``fabrik.cli.main(argv)``), ``tests/project/test_fuzz.py``
draws a few through hypothesis.

A case is one command line: a subcommand (``bench chain|tracking|arm|robot|batch``, ``demo``,
``reconstruct``, ``view``, ``render``, or none) with a random subset of its options, each value
drawn well formed or, one time in three, degenerate: numbers at and beyond their ranges (0,
negatives, NaN, infinities, 10**15 and 2**63 counts, text where a number goes), unknown names,
empty and odd strings, paths that are missing, folders, files standing where a folder is needed,
NUL bytes, over-long names, and files that are malformed (BVH, limit JSON and URDF: empty, binary,
truncated, wrong numbers). Well-formed runs are kept small (a few targets, steps, frames), so that
a case takes a fraction of a second.

``run_argv`` runs a command line with stdout and stderr captured and says what reached the user
that should not: an exception out of ``main`` (a traceback), "Traceback" in what was printed, an
exit code that is not a whole number, an error message over several lines. A refusal (an
argparse usage error, or ``fabrik COMMAND: error: ...`` and a non-zero exit code) is not a defect.

Left out: ``reconstruct --workers N`` with N >= 1 and ``--scheduler`` (they start or reach a Dask
cluster); large values of options that only cost time (``--repeats``, ``--iterations``,
``--max-iter``), which are the user's to spend; ``view`` serves its scene and returns at once
(``Viewer.wait`` is replaced for the run). Two cases in five are clean (every value well formed)
so that whole runs are covered too.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path

import numpy as np

#: the odds that an option's value is degenerate
DEGENERATE = 1 / 3

_BAD_INTS = ["0", "-1", "-1000000000", "1000000000000000", "9223372036854775808", "1e3", "x", "", "nan", "1.5"]
_BAD_FLOATS = ["nan", "inf", "-inf", "-1", "0", "1e308", "1e-320", "x", "", "1,5"]
_ODD_TEXT = ["", " ", ",", ",,", "\u00e9\u00e8", "a" * 300, "-", "--", "all,all", "x:y=z", "\t", "%s", "{}"]
SKELETON_METHODS = ["fabrik", "ccd", "jacobian-dls", "fabrik-constrained", "ccd-constrained"]
CHAIN_METHODS = ["fabrik", "ccd", "ftl", "triangulation", "jacobian-dls", "sdls"]
ARM_METHODS = ["fabrik", "ccd", "jacobian-dls", "fabrik-revolute"]
BATCH_PARTS = ["chain", "skeleton", "arm", "crowd", "float32"]


class Workspace:
    """A temporary folder holding the input files the cases name (good and malformed) and
    receiving their outputs. ``paths[kind]`` lists the files of a kind: ``bvh``, ``limits``,
    ``urdf``; ``outputs`` the output paths (good and bad)."""

    def __init__(self, urdf_dir: Path | None = None):
        from fabrik.constraints import Cone, save_constraints
        from fabrik.io.bvh import save_bvh
        from fabrik_experiments.sample_motion import sample_walk

        self._tmp = tempfile.TemporaryDirectory(prefix="fuzz-cli-")
        root = Path(self._tmp.name)
        self.root = root
        skeleton, motion = sample_walk(n_frames=4)
        walk = root / "walk.bvh"
        save_bvh(walk, skeleton, motion)
        text = walk.read_text()
        names = list(skeleton.names)
        bvh = {"walk.bvh": None, "empty.bvh": "", "binary.bvh": b"\x00\xff\xfe" * 50,
               "cut.bvh": text[: len(text) // 2], "header.bvh": text.split("MOTION")[0],
               "nan.bvh": text.replace("0.0", "nan", 3), "huge.bvh": text.replace("Frames: 4", "Frames: 1000000000000"),
               "negative.bvh": text.replace("Frames: 4", "Frames: -4"), "time.bvh": text.replace("Frame Time:",
                                                                                                "Frame Time: -1 #"),
               "big.bvh": text.replace("0.0", "1e300", 5), "words.bvh": text.replace("HIERARCHY", "HIERARCH", 1)}
        limits = {"limits.json": None, "empty.json": "", "list.json": "[]", "typelist.json":
                  '{"units": "degrees", "joints": {"%s": [{"type": [1, 2], "min": 0, "max": 1}]}}' % names[2],
                  "units.json": '{"units": ["degrees"], "joints": {}}', "nan.json":
                  '{"units": "degrees", "joints": {"%s": [{"type": "twist", "min": NaN, "max": 1}]}}' % names[2],
                  "unknown.json": '{"units": "degrees", "joints": {"no_such_joint": [{"type": "twist", "min": 0, '
                                  '"max": 1}]}}', "chain.json": '{"units": "degrees", "joints": {"1": [{"type": '
                                                                '"cone", "up": 30, "down": 30, "left": 30, "right": 30}]}}'}
        urdf = {"bad.urdf": "<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
                            "<child link='b'/></joint></robot>", "empty.urdf": "", "text.urdf": "not xml at all <",
                "loop.urdf": "<robot name='r'><link name='a'/><link name='b'/><joint name='j1' type='fixed'><parent "
                             "link='a'/><child link='b'/></joint><joint name='j2' type='fixed'><parent link='b'/>"
                             "<child link='a'/></joint></robot>"}
        for name, content in {**bvh, **limits, **urdf}.items():
            if content is None:
                continue
            path = root / name
            path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
        save_constraints(root / "limits.json", {names[2]: Cone.circular(0.5)})
        (root / "folder").mkdir()
        (root / "file.txt").write_text("a file\n")
        common = ["missing.bvh", "folder", "file.txt/x.bvh", "a\x00b", "x" * 300, "/dev/null", ""]
        self.paths = {"bvh": [str(root / n) for n in bvh] + common,
                      "limits": [str(root / n) for n in limits] + ["humanoid", "Humanoid"] + common,
                      "urdf": [str(root / n) for n in urdf] + common}
        if urdf_dir is not None and (Path(urdf_dir) / "panda.urdf").is_file():
            self.paths["urdf"].insert(0, str(Path(urdf_dir) / "panda.urdf"))
        self.good = {"bvh": str(walk), "limits": str(root / "limits.json"), "names": names}
        self.outputs = [str(root / "out" / "o.json"), str(root / "o.json"), str(root / "folder"),
                        str(root / "file.txt" / "o.json"), str(root / "no" / "such" / "o.json"), "a\x00b", "",
                        str(root / ("x" * 300)), str(root / "o.bvh"), str(root / "walk.bvh")]

    def close(self) -> None:
        self._tmp.cleanup()


def _pick(rng, items):
    return items[int(rng.integers(0, len(items)))]


#: whether the case being drawn is a clean one (every value well formed; ``random_argv``)
_clean = False


def _bad(rng) -> bool:
    """Whether to draw a degenerate value: never in a clean case, else one time in three."""
    return not _clean and rng.random() < DEGENERATE


def _count(rng, good_max: int) -> str:
    return _pick(rng, _BAD_INTS) if _bad(rng) else str(int(rng.integers(1, good_max + 1)))


def _crowd(rng) -> str:
    """A ``--crowd CHARACTERSxFRAMES`` value: a few characters and frames, or a degenerate one."""
    if _bad(rng):
        return _pick(rng, ["0x5", "3x0", "x", "3x", "x3", "-1x2", "2.5x3", "1e9x1e9", "3*4", ""])
    return f"{int(rng.integers(1, 4))}x{int(rng.integers(1, 6))}"


def _float(rng, lo: float, hi: float) -> str:
    return _pick(rng, _BAD_FLOATS) if _bad(rng) else repr(float(rng.uniform(lo, hi)))


def _names(rng, good: list[str]) -> str:
    if _bad(rng):
        return _pick(rng, _ODD_TEXT + ["bogus", "fabrik,bogus", "FABRIK", "all"])
    return ",".join(rng.choice(good, size=int(rng.integers(1, 3)), replace=False))


def _frames(rng) -> str:
    if _bad(rng):
        return _pick(rng, ["", ":", "::", "a:b", "5:1", "0:0", "-1:", "0:4:0", "0:4:-1", "1e3:", "99999999999999999999:",
                           "0:10**9", "0:2:3:4", "1"])
    return f"{int(rng.integers(0, 2))}:{int(rng.integers(2, 5))}"


def _file(rng, ws: Workspace, kind: str) -> str:
    return _pick(rng, ws.paths[kind]) if _bad(rng) else (ws.good[kind] if kind in ws.good else ws.paths[kind][0])


def _out(rng, ws: Workspace, suffix: str) -> str:
    good = str(ws.root / "out" / f"o{suffix}")
    return _pick(rng, ws.outputs) if _bad(rng) else good


def _options(rng, table: dict, always=(), dirty=()) -> list[str]:
    """A random subset of ``table`` ({option: value maker or None for a flag}), with ``always``;
    ``dirty``: options whose values are all degenerate, left out of clean cases."""
    argv = []
    for option, make in table.items():
        if (option in always or rng.random() < 0.35) and not (_clean and option in dirty):
            argv += [option] if make is None else [option, make()]
    return argv


def random_argv(rng, ws: Workspace) -> list[str]:
    """One command line (module notes): two in five clean (every value well formed), the others
    with each value degenerate one time in three."""
    global _clean
    _clean = rng.random() < 0.4
    pick = rng.random()
    if pick < 0.04:  # no subcommand, or junk
        return [str(a) for a in rng.choice(["--version", "-h", "bench", "nothing", "--", "", "-x", "demo --bogus"],
                                           size=int(rng.integers(0, 3)))]
    if pick < 0.16:
        table = {"--methods": lambda: _names(rng, CHAIN_METHODS), "--targets": lambda: _count(rng, 3),
                 "--seed": lambda: _pick(rng, ["-1", "x", str(2 ** 70)]) if _bad(rng) else
                 str(int(rng.integers(0, 100))), "--tol": lambda: _float(rng, 1e-4, 1.0),
                 "--json": lambda: _out(rng, ws, ".json"), "--plot": lambda: _out(rng, ws, ""),
                 "--constrained": None}
        return ["bench", "chain", *_options(rng, table, always=("--targets",))]
    if pick < 0.26:
        table = {"--methods": lambda: _names(rng, CHAIN_METHODS), "--steps": lambda: _count(rng, 4),
                 "--tol": lambda: _float(rng, 1e-4, 1.0), "--max-iter": lambda: _pick(rng, ["0", "-1", "x", "1.5"])
                 if _bad(rng) else str(int(rng.integers(1, 50))),
                 "--json": lambda: _out(rng, ws, ".json"), "--plot": lambda: _out(rng, ws, "")}
        return ["bench", "tracking", *_options(rng, table, always=("--steps", "--methods"))]
    if pick < 0.36:
        table = {"--side": lambda: _pick(rng, ["left", "right", "both", "up"]),
                 "--joints": lambda: _names(rng, ws.good["names"]) if rng.random() < 0.5 else
                 ",".join(ws.good["names"][1:5]), "--methods": lambda: _names(rng, ARM_METHODS),
                 "--frames": lambda: _frames(rng), "--elbow-max": lambda: _float(rng, 10.0, 180.0),
                 "--json": lambda: _out(rng, ws, ".json"), "--plot": lambda: _out(rng, ws, "")}
        files = [_file(rng, ws, "bvh") for _ in range(int(rng.integers(0, 3)))]
        return ["bench", "arm", *files, *_options(rng, table, always=("--frames",))]
    if pick < 0.42:
        table = {"--tip": lambda: _pick(rng, ["panda_hand", "panda_link7", "tool0", "", "nope", "a"]),
                 "--base": lambda: _pick(rng, ["panda_link0", "panda_hand", "", "nope"]),
                 "--targets": lambda: _count(rng, 2), "--seed": lambda: _count(rng, 50),
                 "--methods": lambda: _names(rng, ARM_METHODS), "--json": lambda: _out(rng, ws, ".json"),
                 "--plot": lambda: _out(rng, ws, "")}
        return ["bench", "robot", _file(rng, ws, "urdf"), *_options(rng, table, always=("--targets", "--tip"))]
    if pick < 0.50:
        table = {"--targets": lambda: _count(rng, 40), "--repeats": lambda: _pick(rng, ["0", "-1", "x", ""])
                 if _bad(rng) else "1",
                 "--lengths": lambda: _pick(rng, ["", "1", "0,5", "-3", "x", "3,,4", "10000000000", "2.5"])
                 if _bad(rng) else ",".join(str(int(v)) for v in rng.integers(2, 12, 2)),
                 "--parts": lambda: _names(rng, BATCH_PARTS), "--skeleton-targets": lambda: _count(rng, 20),
                 "--arm-targets": lambda: _count(rng, 20), "--crowd": lambda: _crowd(rng),
                 "--json": lambda: _out(rng, ws, ".json"), "--plot": lambda: _out(rng, ws, "")}
        # the model parts' sizes always small: their defaults (100,000 targets, 1,000 x 600 frames) take minutes
        return ["bench", "batch", *_options(rng, table, always=("--targets", "--repeats", "--lengths",
                                                                "--skeleton-targets", "--arm-targets", "--crowd"))]
    if pick < 0.53:
        table = {"--out": lambda: _out(rng, ws, ""), "--targets": lambda: _count(rng, 2)}
        argv = ["demo", *_options(rng, table, always=("--targets",))]
        if not _clean or rng.random() < 0.7:  # a whole demo takes seconds: most cases break it early
            argv += ["--targets", _pick(rng, _BAD_INTS)]
        return argv
    if pick < 0.78:
        table = {"--effectors": lambda: _names(rng, ws.good["names"]), "--methods": lambda: _names(rng,
                                                                                                 SKELETON_METHODS),
                 "--frames": lambda: _frames(rng), "--out": lambda: _out(rng, ws, ".bvh"),
                 "--out-method": lambda: _names(rng, SKELETON_METHODS[:3]), "--json": lambda: _out(rng, ws, ".json"),
                 "--tol": lambda: _float(rng, 1e-4, 0.1), "--max-iter": lambda: _pick(rng, ["-1", "x", "0"])
                 if _bad(rng) else str(int(rng.integers(1, 30))),
                 "--constraints": lambda: _file(rng, ws, "limits"),
                 "--rigid-sub-bases": lambda: _pick(rng, ["auto", "limbs", "all", "none", "some"]),
                 "--no-limb-swing": None, "--option": lambda: _pick(rng, ["jacobian-dls:damping=0.5",
                                                                          "fabrik:swing_limbs=false", "fabrik:bogus=1",
                                                                          "x", "a:b", ":=", "ccd:max_iter=nan",
                                                                          "jacobian-dls:damping=-1", "fabrik:x=inf"]),
                 "--workers": lambda: _pick(rng, ["0", "-1", "x", ""])}
        files = [_file(rng, ws, "bvh") for _ in range(int(rng.integers(1, 3)))]
        argv = ["reconstruct", *files, *_options(rng, table, always=("--frames",), dirty=("--workers", "--option",
                                                                                            "--out-method"))]
        if "--workers" in argv and rng.random() < 0.3:
            argv += ["--scheduler", "tcp://127.0.0.1:1"]  # refused with --workers before any connection
        return argv
    if pick < 0.90:
        scene = _pick(rng, ["chain", "constraints", "skeleton", "arm", "take"] + ([] if _clean else ["other"]))
        table = {"--host": lambda: _pick(rng, ["127.0.0.1", "::1", "", "999.1.1.1", "0.0.0.0x", "localhost"]),
                 "--port": lambda: _pick(rng, ["0", "-1", "65536", "x", "70000"]),
                 "--method": lambda: _names(rng, CHAIN_METHODS + ["bogus"]), "--tol": lambda: _float(rng, 1e-4, 1.0),
                 "--joints": lambda: _count(rng, 6), "--dim": lambda: _pick(rng, ["2", "3", "4", "x"]),
                 "--snake": None, "--constraints": lambda: _file(rng, ws, "limits"),
                 "--model": lambda: _pick(rng, ["humanoid", "hand", "y_shape", "robot"]),
                 "--urdf": lambda: _file(rng, ws, "urdf"), "--tip": lambda: _pick(rng, ["panda_hand", "nope", ""]),
                 "--limits": None, "--frames": lambda: _frames(rng)}
        files = [_file(rng, ws, "bvh")] if scene == "take" or rng.random() < 0.2 else []
        argv = ["view", scene, *files, *_options(rng, table, dirty=("--port", "--host", "--dim"))]
        if not _clean or rng.random() < 0.7:  # a served scene takes a second: most cases break early
            argv += ["--port", _pick(rng, ["0", "-1", "65536", "x"])]
        else:
            argv += ["--port", str(_free_port())]
        return argv
    what = _pick(rng, ["take", "passes"] + ([] if _clean else ["other"]))
    table = {"--out": lambda: _out(rng, ws, _pick(rng, [".gif", ".mp4", ".png", ""])),
             "--method": lambda: _names(rng, SKELETON_METHODS), "--limits": None, "--frames": lambda: _frames(rng),
             "--fps": lambda: _float(rng, 1.0, 30.0), "--joints": lambda: _count(rng, 5),
             "--target": lambda: _pick(rng, ["1,2", "1,2,3", "x", "", "1,2,3,4", "nan,0,0", "1e400,0,0"]),
             "--iterations": lambda: _pick(rng, ["0", "-1", "x"]) if _bad(rng) else "1"}
    files = [_file(rng, ws, "bvh")] if what == "take" or (not _clean and rng.random() < 0.3) else []
    argv = ["render", what, *files, *_options(rng, table, always=("--out", "--iterations"), dirty=("--target",))]
    if not _clean or rng.random() < 0.5:  # an animation takes a second or more: most cases break it early
        argv += ["--fps", _pick(rng, ["0", "-1", "nan"])]
    return argv


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def quick_viewer():
    """``fabrik view`` serving its scene and returning at once (``Viewer.wait`` stops it)."""
    try:
        from fabrik.viz.viewer.server import Viewer
    except ImportError:  # pragma: no cover - the 'view' extra is not installed
        yield
        return
    wait = Viewer.wait
    Viewer.wait = Viewer.stop
    try:
        yield
    finally:
        Viewer.wait = wait


def run_argv(argv: list[str], cwd: Path) -> tuple[list[str], int | None, str]:
    """Run ``fabrik.cli.main(argv)`` in ``cwd`` with stdout and stderr captured: (what reached
    the user that should not, in words; the exit code, None when an exception escaped; stderr)."""
    from fabrik.cli import main

    out, err = io.StringIO(), io.StringIO()
    found = []
    code = None
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), quick_viewer():
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: usage errors (2), --help and --version (0)
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            except BaseException as exc:  # noqa: BLE001 - this is what a user would see as a traceback
                found.append(f"traceback: {type(exc).__name__}: {exc}"[:300])
    finally:
        os.chdir(here)
    text = err.getvalue()
    if "Traceback (most recent call last)" in text or "Traceback (most recent call last)" in out.getvalue():
        found.append("a traceback was printed")
    if code is not None and not isinstance(code, int):
        found.append(f"exit code {code!r}")
    errors = [line for line in text.splitlines() if line.startswith("fabrik ") and ": error: " in line]
    if code not in (None, 0) and errors:
        tail = text[text.index(errors[-1]):].rstrip("\n")
        if "\n" in tail and not tail.split("\n", 1)[1].startswith(("fabrik ", "usage:")):
            found.append("the error message runs over several lines")
    return found, code, text


__all__ = ["Workspace", "random_argv", "run_argv", "DEGENERATE"]
