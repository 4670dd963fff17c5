"""The packed limit rows the kernels read: the one place that says which column holds what.

Every joint gets one float64 row of ``LIMIT_COLUMNS`` (``pack_limits``); each limit type writes
its own columns (``Cone.pack``, ``Hinge.pack``, ``Twist.pack`` in ``fabrik.model.constraints``),
so chains and skeletons share the same compiled code and a new limit type touches its own class
and the projection kernel (``fabrik.kernels.constraints``) only. ``closed_forms`` flags the rows
the tree kernel answers in closed form.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

COL_TYPE = 0  # TYPE_NONE, TYPE_CONE or TYPE_HINGE
COL_CONE = 1  # 4 columns: signed squared cotangents s_right, s_left, s_up, s_down
COL_AXIS = 5  # 3 columns: hinge axis in the parent frame
COL_HINGE = 8  # 2 columns: hinge min, max (radians)
COL_TWIST_FLAG = 10  # 1 when the twist is limited
COL_TWIST = 11  # 2 columns: twist min, max (radians)
LIMIT_COLUMNS = 13
TYPE_NONE, TYPE_CONE, TYPE_HINGE = 0, 1, 2


def pack_limits(constraints: Mapping[int, tuple], n_joints: int, *, planar: bool = False) -> np.ndarray:
    """The kernels' (n_joints, LIMIT_COLUMNS) float64 table: row j written by each of joint j's
    limits in turn (``item.pack(row, planar)``; rotational limits come first, so a ``Twist`` given
    with a ``Hinge`` overrides the hinge's implicit zero twist). ``planar``: a 2D chain's rows."""
    table = np.zeros((n_joints, LIMIT_COLUMNS))
    for idx, items in constraints.items():
        for item in items:
            item.pack(table[idx], planar)
    return table


def closed_forms(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(circ (n, 2), hcs (n, 7)) for packed ``rows``: ``circ[j]`` the (cos, sin) of the half-angle
    where row j is a circular cone without a twist limit, (2, 0) elsewhere; ``hcs[j]`` (1, cos lo,
    sin lo, cos hi, sin hi, lo, hi) where row j is a hinge with its twist held at 0, zeros
    elsewhere."""
    n = rows.shape[0]
    circ = np.zeros((n, 2))
    circ[:, 0] = 2.0
    hcs = np.zeros((n, 7))
    for j in range(n):
        row = rows[j]
        s_vals = row[COL_CONE:COL_CONE + 4]
        if row[COL_TYPE] == TYPE_CONE and row[COL_TWIST_FLAG] == 0.0 and np.all(s_vals == s_vals[0]):
            cot = math.copysign(math.sqrt(abs(s_vals[0])), s_vals[0])
            alpha = math.atan2(1.0, cot)
            circ[j] = (math.cos(alpha), math.sin(alpha))
        if (row[COL_TYPE] == TYPE_HINGE and row[COL_TWIST_FLAG] != 0.0 and row[COL_TWIST] == 0.0
                and row[COL_TWIST + 1] == 0.0):
            lo, hi = row[COL_HINGE], row[COL_HINGE + 1]
            hcs[j] = (1.0, math.cos(lo), math.sin(lo), math.cos(hi), math.sin(hi), lo, hi)
    return circ, hcs


__all__ = ["pack_limits", "closed_forms", "LIMIT_COLUMNS", "COL_TYPE", "COL_CONE", "COL_AXIS", "COL_HINGE",
           "COL_TWIST_FLAG", "COL_TWIST", "TYPE_NONE", "TYPE_CONE", "TYPE_HINGE"]
