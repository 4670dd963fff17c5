"""Progress of long runs (benchmarks, reconstructions, takes, renders, compiling, installing).

On a terminal a count shows as a tqdm bar. Anywhere else (a pipe, a log file, CI) it shows as a
line on stderr every ``INTERVAL`` seconds, written by a thread, so that a step that blocks (the
first call of a numba kernel compiles it) still says that it is running. ``stage`` does the same
for a step with nothing to count.

Run as a script (the Makefile does, before the package is installed; this file needs only the
standard library then), ``python src/fabrik/_progress.py "WHAT" "ABOUT" -- COMMAND ...`` runs the
command as a ``stage``.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

#: seconds between progress lines when stderr is not a terminal
INTERVAL = 5.0


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


class _Lines:
    """tqdm's ``update``, ``n`` and ``set_postfix_str``, shown as a line every ``INTERVAL`` s."""

    def __init__(self, total: int, desc: str, unit: str):
        self.total, self.desc, self.unit, self.n, self.postfix = total, desc, unit, 0, ""
        self.start = time.perf_counter()
        self._done = threading.Event()
        self._spoke = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text

    def _line(self) -> str:
        elapsed = time.perf_counter() - self.start
        text = f"{self.desc}: {self.n:,}/{self.total:,} {self.unit}s"
        if self.postfix:
            text += f" ({self.postfix})"
        text += f", {_seconds(elapsed)}"
        if 0 < self.n < self.total:
            text += f", about {_seconds(elapsed * (self.total - self.n) / self.n)} left"
        return text

    def _run(self) -> None:
        while not self._done.wait(INTERVAL):
            self._spoke = True
            _say(self._line())

    def close(self) -> None:
        self._done.set()
        self._thread.join()
        if self._spoke:
            _say(f"{self.desc}: {self.n:,} {self.unit}s in {_seconds(time.perf_counter() - self.start)}")


@contextmanager
def progress_bar(enabled: bool, total: int, desc: str, unit: str):
    """A bar over ``total`` units, closed on leaving the block, when ``enabled``; else None.

    On a terminal a tqdm bar (imported only then) that leaves no line behind (``leave=False``),
    so the tables printed after it stay clean; elsewhere a line every ``INTERVAL`` seconds, and one
    when it ends (only for runs longer than ``INTERVAL``).
    """
    if not enabled:
        yield None
        return
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=total, desc=desc, unit=unit, leave=False)
    else:
        bar = _Lines(total, desc, unit)
    try:
        yield bar
    finally:
        bar.close()


@contextmanager
def stage(what: str, about: str | None = None, last_output=None):
    """Say on stderr that ``what`` is running (and ``about`` how long it takes), every
    ``INTERVAL`` seconds while it does, and how long it took when it ends (or that it stopped,
    when the block raises). ``last_output``, a function giving the ``time.monotonic()`` of the
    block's own last line, keeps the beat quiet while the block speaks for itself: it then speaks
    after 1.5 ``INTERVAL`` of silence, so that a block's own lines every ``INTERVAL`` come first."""
    start = time.monotonic()
    _say(f"{what}" + (f" ({about})" if about else "") + "...")
    done = threading.Event()

    def beat() -> None:
        while not done.wait(INTERVAL / 5):
            now = time.monotonic()
            quiet_since = max(beat.last, last_output() if last_output else start)
            if now - quiet_since >= (1.5 if last_output else 1.0) * INTERVAL:
                beat.last = now
                _say(f"  ... {what}: {_seconds(now - start)}")

    beat.last = start
    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    except BaseException:
        _say(f"{what}: stopped after {_seconds(time.monotonic() - start)}")
        raise
    finally:
        done.set()
        thread.join()
    _say(f"{what}: done in {_seconds(time.monotonic() - start)}")


def _main(argv: list[str]) -> int:
    """``WHAT ABOUT -- COMMAND ...``: run the command as a stage, passing its output on (stdout
    and stderr, merged, line by line); the beat speaks only when the command has been silent for
    ``INTERVAL`` seconds. Returns the command's exit code."""
    import subprocess

    if "--" not in argv or argv.index("--") != 2 or len(argv) < 4:
        _say('usage: python src/fabrik/_progress.py "WHAT" "ABOUT" -- COMMAND ...')
        return 2
    last = [time.monotonic()]
    with stage(argv[0], argv[1] or None, last_output=lambda: last[0]):
        child = subprocess.Popen(argv[3:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 errors="replace")
        for line in child.stdout:
            last[0] = time.monotonic()
            sys.stdout.write(line)
            sys.stdout.flush()
        code = child.wait()
        if code:
            raise SystemExit(code)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
