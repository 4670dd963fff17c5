"""What both halves of the BVH reader share: ``BVHError`` and the rules for numbers in the text.

The HIERARCHY (``fabrik.io.bvh``) and the MOTION block (``fabrik.io._bvh_motion``) read numbers
the same way: plain ASCII decimals (``-1.5``, ``.5``, ``2e-05``) for values, ASCII digits with an
optional sign for counts. Python's ``float()`` and ``int()`` also take ``1_000``, ``nan``,
``infinity`` and non-ASCII digits, none of which a BVH file means, so every token is matched
against these patterns before it is converted.
"""

from __future__ import annotations

import math
import re
import sys


class BVHError(ValueError):
    """A malformed BVH file; the message names the file, the line number and the problem."""

    def __init__(self, message: str, line: int | None = None, path: str | None = None):
        self.line = line
        self.path = path
        where = f"{path}: " if path else ""
        where += f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{message}")


#: A decimal number as BVH writers print it.
_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
#: Its parts: digits before the point, after it, and the exponent.
_NUMBER_PARTS = re.compile(r"[+-]?(\d*)\.?(\d*)(?:[eE]([+-]?\d+))?", re.ASCII)
_WHOLE_RE = re.compile(r"[+-]?\d+", re.ASCII)


def _whole(token: str, line: int, what: str, path, expected: str = "a whole number") -> int:
    """``token`` as an int, or BVHError naming ``line``: not ASCII digits with an optional sign,
    or more significant digits than Python's ``int()`` converts (``sys.get_int_max_str_digits``,
    4300 by default; leading zeros do not count, as they do not for the value)."""
    if not _WHOLE_RE.fullmatch(token):
        raise BVHError(f"{what}: expected {expected}, got {token!r}", line, path)
    digits = token.lstrip("+-").lstrip("0")
    limit = sys.get_int_max_str_digits()
    if limit and len(digits) > limit:
        raise BVHError(f"{what}: expected {expected}, got a number of {len(digits)} digits "
                       f"({token[:12]}...; at most {limit} are read)", line, path)
    value = int(digits) if digits else 0
    return -value if token.startswith("-") else value


def _number(token: str, line: int, what: str, path) -> float:
    """``token`` as a finite float, or BVHError naming ``line`` and the token."""
    if not _NUMBER_RE.fullmatch(token):
        kind = "a finite number" if _is_float(token) and not math.isfinite(float(token)) else "a number"
        raise BVHError(f"{what}: expected {kind}, got {token!r}", line, path)
    value = float(token)
    if not math.isfinite(value):
        raise BVHError(f"{what}: expected a finite number, got {token!r}", line, path)
    return value


def printed_digits(token: str) -> tuple[int, int] | None:
    """``(place, significant)`` of a number as printed: its last digit is worth ``10**-place`` (the
    digits after the point less the exponent: 6 for ``0.095583`` and ``-1.5e-05``, -2 for
    ``1.5e3``), and it shows ``significant`` digits from its first non-zero one (trailing zeros
    included: 8 for ``15.735700``). None for a number with no non-zero digit (``0``, ``-0.000``),
    whose printing says nothing of the digits kept. ``token`` must match ``_NUMBER_RE``; the
    compiled scanner of the frame lines (``_bvh_motion._scan_rows``) counts the same way."""
    whole, fraction, exponent = _NUMBER_PARTS.fullmatch(token).groups()
    digits = (whole + fraction).lstrip("0")
    if not digits:
        return None
    e = 0
    for d in (exponent or "").lstrip("+-"):
        if e >= 100000:  # as the scanner counts: beyond, the number is 0 or refused
            break
        e = e * 10 + ord(d) - 48
    return len(fraction) - (-e if exponent and exponent.startswith("-") else e), len(digits)


def _is_float(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False
