"""The commands in the docs leave the project's tracked files alone, and run as written.

- Every command the README and docs/*.md show (``sh`` blocks, ``$ `` lines of output listings,
  inline code that starts like a command) is read for the files it writes (``--json``, ``--out``,
  ``--plot``, ``>``): none may be a tracked file or a folder holding tracked ones. ``make bench``
  and its siblings are the maintainers' way to rewrite the committed results.
- Every line of the ``sh`` blocks runs for real, from the root of a copy of the project's tracked
  files (a git repository of its own, ``../shared`` beside it), with the project's ``.venv``:
  it must exit 0 and leave the copy's tracked files unchanged. Each ``sh`` line ends with a
  comment saying how long it takes on a 2-core machine (``# 10 s``, ``# 2 min``); ``make test``
  runs those of ``QUICK`` seconds or less, ``make docs-commands`` (``FABRIK_DOC_COMMANDS=all``)
  every one. Lines that are not commands of this project to run here (``make``, activating the
  venv) are read, not run.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: seconds: the sh lines that make test runs
QUICK = 30
OUTPUT_OPTIONS = ("--json", "--out", "--plot")
COMMAND_START = re.compile(r"^(\$ )?(PYTHONPATH=\S+ )?(fabrik |python |\.venv/bin/(python|fabrik) |make )")
NOT_RUN = re.compile(r"^(make |\. |source )")


def _tracked() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no tracked files to protect")
    return [p for p in out.stdout.split("\0") if p]


def sh_lines(page: Path) -> list[tuple[str, str]]:
    """(command, comment) for each line of the page's ```sh blocks (continuation lines joined)."""
    out = []
    for block in re.findall(r"^```sh\n(.*?)^```", page.read_text(), flags=re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            command, _, comment = line.partition(" #")
            if command.strip():
                out.append((command.strip(), comment.strip()))
    return out


def all_commands(page: Path) -> list[str]:
    """Every command shown on the page: sh lines, ``$ `` lines, and inline code or block lines
    that start like a command of this project."""
    text = page.read_text()
    found = [c for c, _ in sh_lines(page)]
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M):
        found += [line.strip() for line in block.splitlines() if COMMAND_START.match(line.strip())]
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    spans = [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]  # a span may wrap
    found += [span for span in spans if COMMAND_START.match(span)]
    return [c.removeprefix("$ ") for c in found]


def outputs(command: str) -> list[str]:
    """The paths a command writes, as given: the values of OUTPUT_OPTIONS and of ``>``.
    Placeholders (``PATH``, ``DIR``, ``OUT.gif|OUT.mp4``, ``[...]``) are left out."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:  # an unbalanced quote in a synopsis
        words = command.split()
    paths = []
    for k, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in OUTPUT_OPTIONS and eq:
            paths.append(value)
        elif word in (*OUTPUT_OPTIONS, ">", ">>") and k + 1 < len(words):
            paths.append(words[k + 1])
    return [p for p in paths if not re.search(r"[|\[\]]|\.\.\.", p) and not Path(p).stem.isupper()]


def test_the_parser_reads_what_a_command_writes():
    assert outputs("fabrik bench robot x.urdf --tip t --json benchmarks/results/robot_panda.json --plot docs/img") \
        == ["benchmarks/results/robot_panda.json", "docs/img"]
    assert outputs("fabrik render take F.bvh --out=walk.gif > log.txt # --json no.json") == ["walk.gif", "log.txt"]
    assert outputs("fabrik bench chain [--json PATH] [--plot DIR]") == []
    assert outputs("fabrik render take FILE.bvh --out walk.gif|walk.mp4") == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_doc_command_writes_a_tracked_file(page):
    tracked = _tracked()
    folders = {str(Path(p).parent) for p in tracked}
    folders |= {str(parent) for p in tracked for parent in Path(p).parents}
    bad = []
    for command in all_commands(page):
        for path in outputs(command):
            try:
                rel = str((ROOT / path).resolve().relative_to(ROOT))
            except ValueError:
                continue  # outside the project
            if rel in tracked or rel in folders:
                bad.append(f"{command!r} writes {path}")
    assert not bad, f"{page.name}: commands that would overwrite tracked files " \
                    "(write to fabrik-out/ instead; make bench rewrites the committed results):\n" + "\n".join(bad)


def _seconds(comment: str) -> float:
    m = re.search(r"(\d+(?:\.\d+)?)\s*(s|min)\b", comment)
    if not m:
        return float("inf")
    return float(m.group(1)) * (60 if m.group(2) == "min" else 1)


RUNNABLE = [(page, command, comment) for page in PAGES for command, comment in sh_lines(page)
            if not NOT_RUN.match(command)]


def test_every_sh_line_says_how_long_it_takes():
    missing = [f"{page.name}: {command}" for page, command, comment in RUNNABLE if _seconds(comment) == float("inf")]
    assert not missing, "sh lines without a '# N s' or '# N min' comment:\n" + "\n".join(missing)


@pytest.fixture(scope="module")
def project_copy(tmp_path_factory):
    """A copy of the tracked files as a git repository of its own, with ``../shared`` and the
    project's .venv linked in (neither is tracked)."""
    tracked = _tracked()
    base = tmp_path_factory.mktemp("docs")
    copy = base / ROOT.name
    for rel in tracked:
        src = ROOT / rel
        if src.is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, copy / rel)
    if (ROOT.parent / "shared").is_dir():
        (base / "shared").symlink_to(ROOT.parent / "shared")
    (copy / ".venv").symlink_to(Path(sys.executable).resolve().parents[1] if not (ROOT / ".venv").is_dir()
                                else ROOT / ".venv")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=copy, check=True)
    subprocess.run([*git, "add", "-A"], cwd=copy, check=True)
    subprocess.run([*git, "commit", "-qm", "copy"], cwd=copy, check=True)
    return copy


@pytest.mark.parametrize("page, command, comment", RUNNABLE,
                         ids=[f"{p.name}:{c[:60]}" for p, c, _ in RUNNABLE])
def test_sh_line_runs_and_changes_no_tracked_file(page, command, comment, project_copy):
    if _seconds(comment) > QUICK and os.environ.get("FABRIK_DOC_COMMANDS") != "all":
        pytest.skip(f"takes {comment.strip()}: make docs-commands runs it")
    if "../shared" in command and not (ROOT.parent / "shared").is_dir():
        pytest.skip("needs ../shared/data beside the project")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    run = subprocess.run(["bash", "-c", command], cwd=project_copy, env=env, capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=3600)
    assert run.returncode == 0, f"{page.name}: {command}\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=project_copy,
                             capture_output=True, text=True, check=True).stdout
    assert not changed, f"{page.name}: {command} changed tracked files:\n{changed}"
