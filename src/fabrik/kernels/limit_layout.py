"""The packed limit rows the kernels read: one float64 row per joint.

``pack_limits`` writes a joint's limits into its row, each limit its own columns (``pack`` of each
type in ``fabrik.limits``), so chains and skeletons share the same compiled code. A row holds

* ``COL_TYPE``: the rotational limit's type id (``TYPE_NONE`` for none; the others are defined
  with each type's projection in ``fabrik.kernels.constraints``, the one place that switches on
  them);
* ``COL_TWIST_FLAG``: 1 when the twist is limited, to the range in the two ``COL_TWIST`` columns
  (radians);
* from ``COL_PARAMS`` on, the rotational limit's own parameters (its columns are named beside its
  projection in ``fabrik.kernels.constraints``).

A table is as wide as its widest limit needs (``COL_PARAMS`` plus the largest ``columns`` of its
limits); the kernels read a row's parameters only for the row's own type. Plain NumPy: importing
this loads no numba.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

COL_TYPE = 0
COL_TWIST_FLAG = 1
COL_TWIST = 2  # 2 columns: twist min, max (radians)
COL_PARAMS = 4  # the rotational limit's parameters start here
TYPE_NONE = 0


def pack_limits(constraints: Mapping[int, tuple], n_joints: int, *, planar: bool = False) -> np.ndarray:
    """The kernels' (n_joints, width) float64 table: row j written by each of joint j's limits in
    turn (``item.pack(row, planar)``; rotational limits come first, so a ``Twist`` given with a
    ``Hinge`` replaces the hinge's implicit zero twist); zeros where a joint has no limit.
    ``width`` is ``COL_PARAMS`` plus the most parameter columns any of the limits takes.
    ``planar``: a 2D chain's rows."""
    width = COL_PARAMS + max((item.columns for items in constraints.values() for item in items), default=0)
    table = np.zeros((n_joints, width))
    for idx, items in constraints.items():
        for item in items:
            item.pack(table[idx], planar)
    return table


__all__ = ["pack_limits", "COL_TYPE", "COL_TWIST_FLAG", "COL_TWIST", "COL_PARAMS", "TYPE_NONE"]
