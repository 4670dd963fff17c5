"""Denavit-Hartenberg tables as ``Arm`` transforms (used by ``Arm.from_dh``).

A row is ``(theta_offset, d, alpha, a)`` for one revolute joint, angles in radians, lengths in
any unit; the joint angle is ``theta = theta_offset + q``.

* ``"standard"`` (Denavit-Hartenberg as in Spong et al.): ``A_i = Rz(theta_i) Tz(d_i) Tx(a_i)
  Rx(alpha_i)`` takes DH frame ``i - 1`` to frame ``i``; joint ``i`` turns about ``z_{i-1}``.
* ``"modified"`` (Craig): ``A_i = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``; joint ``i``
  turns about ``z_i``. Row ``i`` holds ``(theta_offset_i, d_i, alpha_{i-1}, a_{i-1})``: its
  ``alpha`` and ``a`` are Craig's twist and length of the link *before* joint ``i``.

Since ``Rz(theta_offset + q) = Rz(q) Rz(theta_offset)`` and ``Rz(q)`` commutes with ``Tz(d)``,
each ``A_i`` splits into the joint's rotation about z and a fixed part, which become the Arm's
``origins`` and ``tip`` (every axis is +z of its joint frame). Cosines and sines of the offsets
within 1e-15 of zero are taken as zero, so right angles give exact frames.
"""

from __future__ import annotations

import math

import numpy as np

#: The DH conventions ``Arm.from_dh`` understands.
CONVENTIONS = ("standard", "modified")


def check_dh_rows(rows) -> np.ndarray:
    """``rows`` as an (m, 4) float64 array of ``(theta_offset, d, alpha, a)``; ValueError naming the
    first bad row (wrong length, not numbers, NaN or infinite)."""
    if isinstance(rows, (str, bytes)):
        raise ValueError(f"rows must be a sequence of (theta_offset, d, alpha, a) rows, got {rows!r}")
    try:
        rows = list(rows)
    except TypeError:
        raise ValueError(f"rows must be a sequence of (theta_offset, d, alpha, a) rows, got {rows!r}") from None
    if not rows:
        raise ValueError("rows is empty: a DH table needs at least one joint")
    table = np.empty((len(rows), 4))
    for i, row in enumerate(rows):
        items = None if isinstance(row, (str, bytes)) else _items(row)
        try:
            values = None if items is None or any(isinstance(v, (str, bytes)) for v in items) else \
                [float(v) for v in items]
        except (TypeError, ValueError):
            values = None
        if values is None:
            raise ValueError(f"DH rows[{i}] must be 4 numbers (theta_offset, d, alpha, a), got {row!r}")
        if len(values) != 4:
            raise ValueError(f"DH rows[{i}] has {len(values)} values; each row is (theta_offset, d, alpha, a), "
                             f"got {row!r}")
        if not all(map(math.isfinite, values)):
            raise ValueError(f"DH rows[{i}] contains a non-finite value (NaN or inf): {values}")
        table[i] = values
    return table


def _items(row) -> list | None:
    """The entries of one row as a list, or None when it is not a sequence."""
    try:
        return list(row)
    except TypeError:
        return None


def _cos_sin(angle: float) -> tuple[float, float]:
    """cos and sin, with values within 1e-15 of 0 made 0 (cos(pi/2) is 6.1e-17 in floating point;
    DH tables are full of right angles, and their frames should come out exact)."""
    c, s = math.cos(angle), math.sin(angle)
    return (0.0 if abs(c) < 1e-15 else c), (0.0 if abs(s) < 1e-15 else s)


def _standard(theta: float, d: float, alpha: float, a: float) -> np.ndarray:
    """Rz(theta) Tz(d) Tx(a) Rx(alpha)."""
    (ct, st), (ca, sa) = _cos_sin(theta), _cos_sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct],
                     [st, ct * ca, -ct * sa, a * st],
                     [0.0, sa, ca, d],
                     [0.0, 0.0, 0.0, 1.0]])


def _modified(theta: float, d: float, alpha: float, a: float) -> np.ndarray:
    """Rx(alpha) Tx(a) Rz(theta) Tz(d)."""
    (ct, st), (ca, sa) = _cos_sin(theta), _cos_sin(alpha)
    return np.array([[ct, -st, 0.0, a],
                     [st * ca, ct * ca, -sa, -d * sa],
                     [st * sa, ct * sa, ca, d * ca],
                     [0.0, 0.0, 0.0, 1.0]])


def dh_transforms(rows, convention: str = "standard") -> tuple[np.ndarray, np.ndarray]:
    """``(origins (m, 4, 4), tip (4, 4))`` of the Arm of a DH table; every joint axis is +z.

    Standard: ``origins[0] = I`` (joint 0 turns about the base z), ``origins[k] =`` the fixed
    part of row ``k - 1``, ``tip =`` the fixed part of the last row, so the Arm's joint frame ``k``
    is DH frame ``k`` and its tip frame is DH frame ``m``. Modified: ``origins[k] =`` the fixed part
    of row ``k`` (joint ``k``'s frame is Craig's frame ``k + 1``, counting joints from 1) and
    ``tip = I`` (the last joint's moving frame).
    """
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown DH convention {convention!r}; use one of {list(CONVENTIONS)}")
    table = check_dh_rows(rows)
    m = table.shape[0]
    origins = np.empty((m, 4, 4))
    if convention == "standard":
        fixed = [_standard(*row) for row in table]
        origins[0] = np.eye(4)
        for k in range(1, m):
            origins[k] = fixed[k - 1]
        return origins, fixed[-1]
    for k in range(m):
        origins[k] = _modified(*table[k])
    return origins, np.eye(4)
