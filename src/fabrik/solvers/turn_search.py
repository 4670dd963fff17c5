"""The turn search of skeleton FABRIK with limits (``TrackingOptions.turn_search``): a solve that
ends short of its targets is tried again from starts turned about the root's up axis.

A held pelvis (the root orientation is not refitted during a solve) falls behind a body that
turns, which a walk's targets barely show, until the narrow limits above it block the head and
hands; the search turns it. The root's frame and the root's branches (the subtrees of its
children) that hold an effector left further than ``tol`` turn as one about the vertical through
the root by each of ``TURN_SEARCH_DEGREES``; the branches that reached start where they were. The
reaching answer that moves the joints least from the start wins, else the lowest largest error.
"""

from __future__ import annotations

import math

import numpy as np

from fabrik.kernels.frames import axis_angle_matrix
from fabrik.kernels.stopping import REACHED


#: The turns (degrees) of the whole start pose about the root's up axis that ``turn_search``
#: tries, in this order, after a solve that ended short of its targets.
TURN_SEARCH_DEGREES = (15.0, -15.0, 30.0, -30.0, 60.0, -60.0, 90.0, -90.0)

#: The iteration cap of each turned attempt (the solve's own cap where that is lower).
TURN_SEARCH_MAX_ITER = 1000


def branches(parents: np.ndarray) -> np.ndarray:
    """(n,) int64: for each joint, the child of the root whose subtree holds it (-1 for the root)."""
    out = np.full(parents.shape[0], -1, dtype=np.int64)
    for j in range(1, parents.shape[0]):
        out[j] = j if parents[j] == 0 else out[parents[j]]
    return out


def turn_rotations(up: np.ndarray) -> list[np.ndarray]:
    """The rotations of ``TURN_SEARCH_DEGREES`` about the unit ``up``, in that order."""
    out = []
    for degrees in TURN_SEARCH_DEGREES:
        R = np.empty((3, 3))
        axis_angle_matrix(R, float(up[0]), float(up[1]), float(up[2]), math.radians(degrees))
        out.append(R)
    return out


def search_turns(attempt, first, p0, F0, up, parents, idx, tol, rotations=None, branch=None):
    """The best answer of ``attempt(p, F)`` (the kernel's 6-tuple) over turned starts: the root's
    frame and the root's branches holding an effector the unturned answer ``first`` left short
    (further than ``tol``), turned as one about ``up`` through the root ``p0[0]`` by each
    of ``TURN_SEARCH_DEGREES``; the other branches (the limbs that reached) start where they were.
    The reaching answer that moves the joints least from ``p0`` wins (tracking continuity); with
    none, the lowest largest error. Iterations are summed over every attempt. ``rotations``
    (``turn_rotations(up)``) and ``branch`` (``branches(parents)``) may be given computed once
    for a whole take."""
    if rotations is None:
        rotations = turn_rotations(up)
    if branch is None:
        branch = branches(parents)
    short = {int(branch[j]) for j, e in zip(idx.tolist(), first[4].tolist()) if e > tol}
    turned = np.array([b in short for b in branch.tolist()]) if short else np.ones(branch.shape[0], dtype=bool)
    turned[0] = True
    best, best_key = first, (1, float(first[4].max()) if first[4].size else 0.0)
    total = first[3]
    for R in rotations:
        p = p0.copy()
        F = F0.copy()
        p[turned] = (p0[turned] - p0[0]) @ R.T + p0[0]
        F[turned] = np.einsum("ij,njk->nik", R, F0[turned])
        answer = attempt(p, F, TURN_SEARCH_MAX_ITER)
        total += answer[3]
        if answer[5] == REACHED:
            key = (0, float(((answer[0] - p0) ** 2).sum()))
        else:
            key = (1, float(answer[4].max()) if answer[4].size else 0.0)
        if key < best_key:
            best, best_key = answer, key
    return best[:3] + (total,) + best[4:]


__all__ = ["TURN_SEARCH_DEGREES", "TURN_SEARCH_MAX_ITER", "search_turns", "turn_rotations", "branches"]
