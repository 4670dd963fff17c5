"""BVH fuzzing: real files mutated, read, and the take made of them checked.

A case is a seed file (the first frames of a real take, or a small hand-made one) with one to
three mutations drawn from ``MUTATIONS``: truncations, lines deleted, doubled or swapped, numbers
replaced by non-numbers, non-finite, huge, tiny or over-long ones, channel counts and names
changed, braces dropped or added, joint names duplicated, keywords changed, the frame count and
Frame Time changed, line endings, a byte-order mark, stray bytes, deep nesting. ``run_case``
reads the bytes with ``fabrik.load_bvh`` and, when they read, checks the motion, prepares the
take (``prepare_take``, as ``fabrik reconstruct`` does) and writes it back (``save_bvh``) and reads
that. Outcomes:

* ``"read"``: the file read, every array of the skeleton, the motion, its world positions and the
  take is finite, and the file ``save_bvh`` wrote reads back to the same world positions (within
  1e-6 of the largest coordinate and 1e-9 per joint, the 9 decimals written);
  ``"bvh error"`` / ``"refused"``: a ``BVHError`` from the reader, a ``ValueError`` from
  ``prepare_take`` (a bone moving in its position channels) or ``save_bvh``, each with a
  message;
* defects: ``"crash"`` (any other exception, or a ``ValueError`` with an empty message),
  ``"nan"`` (a NaN or inf in what was read or computed from it), ``"hang"`` (over ``TIME_LIMIT``
  seconds), ``"round trip"`` (the written file reads back elsewhere), ``"blocks"`` (read in
  blocks of ``block`` bytes instead of a MiB, a third of the cases, the file reads otherwise:
  another error, or other bits).

``benchmarks/fuzz_bvh.py`` runs 10,000 cases; ``tests/io/test_fuzz_bvh.py`` runs a few hundred and
keeps every reproducer it found.
"""

from __future__ import annotations

import re
import signal
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
MOCAP = ROOT.parent / "shared" / "data" / "mocap"
#: Frames kept of each seed take: enough for the frame lines to be many, few enough that a case
#: takes milliseconds.
SEED_FRAMES = 6
#: A case that takes longer than this (seconds) is a hang.
TIME_LIMIT = 20.0
DEFECTS = ("crash", "nan", "hang", "round trip", "blocks")

SMALL = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
    JOINT Head
    {
      OFFSET 0 8 1
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 3 0
      }
    }
  }
  JOINT Leg
  {
    OFFSET 2 -9 0
    CHANNELS 2 Xrotation Zrotation
    End Site
    {
      OFFSET 0 -8 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.0333333
0 90 0 0 0 0 0 10 0 5 -5 0 10 20 30 45 -45
1.5 90.5 -0.25 10 0 0 0.000001 10 -0.000001 5 -5 0 10 20 30 45 -45
3 91 -0.5 20 0 0 0 10 0 5 -5 0 10 20 30 45 -45
"""

#: Tokens a number is replaced with.
BAD_NUMBERS = ["nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e308", "-1e308", "1e75", "9.99e74",
               "1e-308", "5e-324", "1e-400", "0", "-0", "0.0", "1e-7", "1000001", "1_000", "0x10", "1,5", "1.2.3",
               "e5", ".", "-", "+", "--1", "1e", "1e+", "9" * 80, "9" * 4400, "0." + "0" * 400 + "1", "\u0661",
               "\uff11\uff12", "", "abc", "{", "}", "MOTION", "Frames:", "3.4028235e38", "1.7976931348623157e308",
               "123456789012345678901234567890", "-9007199254740993", "2.2250738585072014e-308"]
#: Bytes inserted at random.
STRAY = [b"\x00", b"\x1a", b"\r", b"\n", b"\r\n", b"\t", b"\x0c", b"\x85", b"\xc3\xa9", b"\xff", b"\xef\xbb\xbf",
         b"{", b"}", b" ", b"\xe2\x80\xa8", b"#", b"\\", b"\x7f"]
CHANNEL_NAMES = ["Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"]
_NUMBER = re.compile(rb"(?<![A-Za-z_])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def seed_files() -> list[tuple[str, bytes]]:
    """``(name, bytes)`` of the seeds: the first ``SEED_FRAMES`` frames of every take in
    ``../shared/data/mocap`` (when there), and ``SMALL``."""
    seeds = [("small", SMALL.encode())]
    for path in sorted(MOCAP.rglob("*.bvh")) if MOCAP.is_dir() else []:
        raw = path.read_bytes()
        m = re.search(rb"^\s*Frames:\s*(\d+)\s*$", raw, re.M)
        if m is None:
            continue
        lines = raw[m.end():].splitlines(keepends=True)
        head = raw[:m.start()] + b"Frames: %d" % min(SEED_FRAMES, int(m.group(1)))
        seeds.append((path.name, head + b"".join(lines[:SEED_FRAMES + 2])))
    return seeds


# --- mutations: each takes (rng, bytes) and returns bytes ------------------------------------------

def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _pick(rng, items):
    return items[int(rng.integers(len(items)))]


def truncate(rng, data):
    return data[:int(rng.integers(len(data) + 1))]


def delete_line(rng, data):
    lines = _lines(data)
    del lines[int(rng.integers(len(lines)))]
    return b"\n".join(lines)


def double_line(rng, data):
    lines = _lines(data)
    k = int(rng.integers(len(lines)))
    lines.insert(k, lines[k])
    return b"\n".join(lines)


def swap_lines(rng, data):
    lines = _lines(data)
    a, b = rng.integers(len(lines), size=2)
    lines[a], lines[b] = lines[b], lines[a]
    return b"\n".join(lines)


def replace_number(rng, data):
    spots = [m.span() for m in _NUMBER.finditer(data)]
    if not spots:
        return data
    start, end = _pick(rng, spots)
    return data[:start] + _pick(rng, BAD_NUMBERS).encode() + data[end:]


def scale_number(rng, data):
    """A number of the file times a large or tiny factor (values near the limits, stretched bones)."""
    spots = [m.span() for m in _NUMBER.finditer(data)]
    if not spots:
        return data
    start, end = _pick(rng, spots)
    try:
        with np.errstate(over="ignore"):  # inf is one of the numbers it may write
            value = float(data[start:end]) * float(10.0 ** rng.integers(-320, 320)) * (1.01 if rng.random() < 0.5 else 1)
    except (ValueError, OverflowError):
        return data
    return data[:start] + repr(value).encode() + data[end:]


def valid_number(rng, data):
    """A number of the file replaced by a valid one of any size and printing (a huge offset or root
    position, a tiny angle, a subnormal, 17 digits, an exponent form)."""
    spots = [m.span() for m in _NUMBER.finditer(data)]
    if not spots:
        return data
    start, end = _pick(rng, spots)
    value = float(rng.normal() * 10.0 ** rng.uniform(-320, 74.9))
    text = _pick(rng, [repr(value), f"{value:.6g}", f"{value:.6f}", f"{value:e}", f"{value:.17g}", f"{value:.0f}"])
    return data[:start] + text.encode() + data[end:]


def change_channels(rng, data):
    """A CHANNELS line with another count, names dropped, added, repeated or unknown."""
    lines = _lines(data)
    spots = [k for k, line in enumerate(lines) if b"CHANNELS" in line.upper()]
    if not spots:
        return data
    k = _pick(rng, spots)
    indent = lines[k][:len(lines[k]) - len(lines[k].lstrip())]
    words = lines[k].split()[2:]
    choice = int(rng.integers(6))
    if choice == 0:
        count = _pick(rng, ["-1", "7", "0", "99999999999999999999", "3.0", "x", str(len(words) + 1)])
        return b"\n".join(lines[:k] + [indent + b"CHANNELS " + count.encode() + b" " + b" ".join(words)] + lines[k + 1:])
    if choice == 1 and words:
        del words[int(rng.integers(len(words)))]
    elif choice == 2:
        words.append(_pick(rng, CHANNEL_NAMES).encode())
    elif choice == 3 and words:
        words.append(_pick(rng, words))
    elif choice == 4:
        words.insert(int(rng.integers(len(words) + 1)), _pick(rng, [b"Wrotation", b"xposition", b"rotation", b"X"]))
    else:
        rng.shuffle(words)
    count = str(len(words)).encode() if rng.random() < 0.7 else lines[k].split()[1]
    return b"\n".join(lines[:k] + [indent + b"CHANNELS " + count + b" " + b" ".join(words)] + lines[k + 1:])


def brace(rng, data):
    spots = [k for k, c in enumerate(data) if c in b"{}"]
    if not spots or rng.random() < 0.3:
        k = int(rng.integers(len(data) + 1))
        return data[:k] + _pick(rng, [b"{", b"}", b"\n}\n", b"\n{\n"]) + data[k:]
    k = _pick(rng, spots)
    return data[:k] + data[k + 1:]


def duplicate_name(rng, data):
    names = re.findall(rb"(?:ROOT|JOINT)[ \t]+([^\r\n{]+)", data)
    if len(names) < 2:
        return data
    a, b = _pick(rng, names), _pick(rng, names)
    return data.replace(b"JOINT " + b, b"JOINT " + a, 1)


def keyword(rng, data):
    words = [b"HIERARCHY", b"ROOT", b"JOINT", b"End Site", b"OFFSET", b"CHANNELS", b"MOTION", b"Frames:", b"Frame Time:",
             b"{", b"}"]
    old = _pick(rng, words)
    spots = [m.start() for m in re.finditer(re.escape(old), data)]
    if not spots:
        return data
    k = _pick(rng, spots)
    new = _pick(rng, words + [old.lower(), old.upper(), b"", b"End", b"Site", b"ROOT X {"])
    return data[:k] + new + data[k + len(old):]


def frame_count(rng, data):
    value = _pick(rng, ["0", "-1", "1", "2", "1000000000000", "99999999999999999999", "3.5", "", "x"])
    return re.sub(rb"Frames:[^\r\n]*", b"Frames: " + value.encode(), data, count=1)


def frame_time(rng, data):
    value = _pick(rng, ["0", "-0.01", "nan", "inf", "1e308", "1e-308", "5e-324", "1e-6", "1e6", "1e-7", "2e6", "",
                        "0.0083333 0.1", "1e400", "abc"])
    return re.sub(rb"Frame Time:[^\r\n]*", b"Frame Time: " + value.encode(), data, count=1)


def line_endings(rng, data):
    choice = int(rng.integers(4))
    if choice == 0:
        return data.replace(b"\n", b"\r\n")
    if choice == 1:
        return data.replace(b"\n", b"\r")
    if choice == 2:
        return b"\xef\xbb\xbf" + data
    return data + b"\x1a" * int(rng.integers(1, 4))


def stray_bytes(rng, data):
    k = int(rng.integers(len(data) + 1))
    return data[:k] + _pick(rng, STRAY) + data[k:]


def flip_byte(rng, data):
    if not data:
        return data
    k = int(rng.integers(len(data)))
    return data[:k] + bytes([int(rng.integers(256))]) + data[k + 1:]


def frame_values(rng, data):
    """A frame line with a value too many or too few, or one made of the bad numbers."""
    lines = _lines(data)
    at = next((k for k, line in enumerate(lines) if line.strip().startswith(b"Frame Time")), None)
    if at is None or at + 1 >= len(lines):
        return data
    k = int(rng.integers(at + 1, len(lines)))
    words = lines[k].split()
    choice = int(rng.integers(3))
    if choice == 0:
        words.append(b"0")
    elif choice == 1 and words:
        words.pop()
    elif words:
        words[int(rng.integers(len(words)))] = _pick(rng, BAD_NUMBERS).encode()
    lines[k] = b" ".join(words)
    return b"\n".join(lines)


def deep_chain(rng, data):
    """A seed replaced by a chain of several hundred to a few thousand nested joints."""
    n = int(rng.integers(200, 3000))
    head = ["HIERARCHY", "ROOT J0", "{", "OFFSET 0 0 0", "CHANNELS 6 Xposition Yposition Zposition Zrotation "
            "Xrotation Yrotation"]
    for k in range(1, n):
        head += [f"JOINT J{k}", "{", "OFFSET 0 1 0", "CHANNELS 1 Zrotation"]
    head += ["End Site", "{", "OFFSET 0 1 0", "}"] + ["}"] * n
    row = " ".join(["0"] * (6 + n - 1))
    return "\n".join(head + ["MOTION", "Frames: 2", "Frame Time: 0.01", row, row]).encode() + b"\n"


MUTATIONS = {f.__name__: f for f in (truncate, delete_line, double_line, swap_lines, replace_number, scale_number,
                                      valid_number, change_channels, brace, duplicate_name, keyword, frame_count,
                                      frame_time, line_endings, stray_bytes, flip_byte, frame_values, deep_chain)}
#: How often each mutation is drawn: the ones that keep a file readable more often (what reads is
#: checked further), deep chains (slow to read) rarely.
WEIGHTS = {**{name: 1.0 for name in MUTATIONS}, "valid_number": 4.0, "scale_number": 2.0, "line_endings": 2.0,
           "deep_chain": 0.2}


def mutate(rng, seeds) -> tuple[str, list[str], bytes]:
    """A case: ``(seed name, mutation names, bytes)``, one to three mutations of a seed (one in
    half the cases, two in a third, three in the rest)."""
    name, data = seeds[int(rng.integers(len(seeds)))]
    names = list(MUTATIONS)
    p = np.array([WEIGHTS[n] for n in names])
    applied = list(rng.choice(names, size=int(rng.choice([1, 2, 3], p=[0.5, 0.33, 0.17])), p=p / p.sum()))
    for m in applied:
        data = MUTATIONS[m](rng, data)
    return name, applied, data


# --- running a case -----------------------------------------------------------------------------------

class _Hang(Exception):
    pass


@contextmanager
def _time_limit(seconds: float):
    """Raise ``_Hang`` in the main thread after ``seconds`` (SIGALRM; no limit where it is absent)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def ring(signum, frame):
        raise _Hang()

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _finite(skeleton, motion, take) -> str | None:
    """What is not finite among what was read and computed from it, or None."""
    arrays = {"offsets": skeleton.offsets, "rotations": motion.rotations, "root positions": motion.root_positions,
              "world positions": motion.world_positions(skeleton), "take positions": take.positions,
              "take rotations": take.rotations, "body offsets": take.body.offsets}
    arrays.update({f"translations of joint {j}": t for j, t in motion.joint_translations.items()})
    for what, a in arrays.items():
        if not np.isfinite(a).all():
            return what
    if not np.isfinite(motion.frame_time) or not motion.frame_time > 0:
        return "frame time"
    return None


def _read(path: Path, block: int | None):
    """What ``load_bvh`` makes of ``path`` read ``block`` bytes at a time (None: as it is): every
    bit of the skeleton and motion, or its BVHError's message."""
    from fabrik.io import _bvh_motion
    from fabrik.io.bvh import BVHError, load_bvh

    saved = _bvh_motion.BLOCK_BYTES
    _bvh_motion.BLOCK_BYTES = block or saved
    try:
        skeleton, motion = load_bvh(path)
    except BVHError as exc:
        return "error", str(exc)
    finally:
        _bvh_motion.BLOCK_BYTES = saved
    return ("ok", skeleton.names, skeleton.parents.tobytes(), skeleton.offsets.tobytes(), motion.rotations.tobytes(),
            motion.root_positions.tobytes(), motion.frame_time, motion.layout,
            {j: t.tobytes() for j, t in motion.joint_translations.items()}, motion.precision.places.tobytes(),
            motion.precision.significant.tobytes())


def run_case(data: bytes, folder: Path, block: int | None = None) -> tuple[str, str]:
    """``(outcome, detail)`` of reading ``data`` (module notes), also in blocks of ``block``
    bytes when given; the file is written in ``folder``."""
    from fabrik.io.bvh import BVHError, load_bvh, save_bvh
    from fabrik.mocap import prepare_take

    path = Path(folder) / "case.bvh"
    path.write_bytes(data)
    start = time.perf_counter()
    try:
        with _time_limit(TIME_LIMIT):
            if block is not None and _read(path, block) != _read(path, None):
                return "blocks", f"read {block} bytes at a time, the file reads otherwise"
            try:
                skeleton, motion = load_bvh(path)
            except BVHError as exc:
                return ("bvh error", str(exc)) if str(exc) else ("crash", "a BVHError without a message")
            try:
                take = prepare_take(skeleton, motion)
            except ValueError as exc:
                return ("refused", str(exc)) if str(exc) else ("crash", "a ValueError without a message")
            bad = _finite(skeleton, motion, take)
            if bad is None:
                copy = Path(folder) / "written.bvh"
                try:
                    save_bvh(copy, skeleton, motion)
                except ValueError as exc:
                    return ("refused", f"save_bvh: {exc}") if str(exc) else ("crash", "save_bvh: no message")
                before = motion.world_positions(skeleton)
                after = load_bvh(copy)[1].world_positions(skeleton)
                off = float(np.abs(after - before).max())
                if not off <= 1e-6 * float(np.abs(before).max()) + 1e-9 * skeleton.n_joints:
                    return "round trip", f"the written file is {off:.3g} from the read one"
    except _Hang:
        return "hang", f"over {TIME_LIMIT:g} s"
    except RecursionError as exc:
        return "crash", f"RecursionError: {exc}"
    except Exception as exc:  # noqa: BLE001 - any other exception is the finding
        return "crash", f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    if seconds > TIME_LIMIT:  # compiled code is not interrupted: a slow case that finished
        return "hang", f"{seconds:.1f} s"
    if bad is not None:
        return "nan", f"{bad} not finite"
    return "read", f"{motion.n_frames} frames, {skeleton.n_joints} joints, {seconds:.3f} s"


def fuzz(cases: int, seed: int, *, progress: bool = False, keep: Path | None = None) -> dict:
    """Run ``cases`` cases from ``seed``; returns the counts per outcome and per mutation, and the
    defects (``{"case", "seed file", "mutations", "outcome", "detail", "file"}``; with ``keep`` the
    defect's bytes are written there)."""
    from fabrik._progress import progress_bar

    rng = np.random.default_rng(seed)
    seeds = seed_files()
    counts: dict[str, int] = {}
    per_mutation: dict[str, dict[str, int]] = {m: {} for m in MUTATIONS}
    defects = []
    with tempfile.TemporaryDirectory() as tmp, progress_bar(progress, cases, "fuzz bvh", "case") as bar:
        for k in range(cases):
            name, applied, data = mutate(rng, seeds)
            block = int(rng.integers(1, 300)) if rng.random() < 1 / 3 else None
            outcome, detail = run_case(data, Path(tmp), block)
            counts[outcome] = counts.get(outcome, 0) + 1
            for m in set(applied):
                per_mutation[m][outcome] = per_mutation[m].get(outcome, 0) + 1
            if outcome in DEFECTS:
                entry = {"case": k, "seed file": name, "mutations": applied, "block": block, "outcome": outcome,
                         "detail": detail[:500]}
                if keep is not None:
                    keep.mkdir(parents=True, exist_ok=True)
                    entry["file"] = str(keep / f"defect_{k}.bvh")
                    Path(entry["file"]).write_bytes(data)
                defects.append(entry)
            if bar is not None:
                bar.update(1)
    return {"cases": cases, "seed": seed, "seeds": [n for n, _ in seeds], "counts": counts,
            "per_mutation": per_mutation, "defects": defects}


__all__ = ["fuzz", "mutate", "run_case", "seed_files", "MUTATIONS", "DEFECTS", "SMALL"]
