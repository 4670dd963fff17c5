"""FABRIK's stages one by one, for display only (the paper's Algorithm 1 and Fig. 2).

The solvers run compiled kernels that do not stop between stages; to show a solve pass by pass
this module re-runs plain FABRIK on an unconstrained chain in Python and keeps every stage's pose.
It is never used to answer a solve: ``fabrik.solve`` does that, and ``tests/viz/test_viewer.py``
checks that the last pose here agrees with it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Stage(NamedTuple):
    """One pose of a solve: ``kind`` is ``"start"``, ``"turn"`` (the start pose turned towards the
    target, ``turn_start``), ``"forward"`` or ``"backward"``; ``iteration`` counts from 1 (0 for
    the start and the turn); ``positions`` (n, d); ``error`` the effector's distance to the target
    after the stage."""

    kind: str
    iteration: int
    positions: np.ndarray
    error: float


def _reach(p: np.ndarray, order, lengths: np.ndarray) -> None:
    """Place each joint of ``order[1:]`` on the line from the one before it to its old position,
    at that bone's length (one stage of Algorithm 1). A joint that sits on the one before it
    takes the direction of the bone placed before it (+Y for the first)."""
    last = np.zeros(p.shape[1])
    last[1] = 1.0
    for a, b, length in order:
        d = p[b] - p[a]
        norm = float(np.linalg.norm(d))
        if norm == 0.0:
            d, norm = last, 1.0
        last = d / norm
        p[b] = p[a] + last * length


def _turn(p: np.ndarray, root: np.ndarray, target: np.ndarray, lengths: np.ndarray, tol: float,
          max_iter: int) -> bool:
    """``fabrik.solve``'s ``turn_start`` on ``p`` (n, d), in place: the compiled ``warm_turn`` on the
    pose embedded in 3D. Returns whether it turned."""
    from fabrik.kernels.fabrik_chain import warm_turn

    d = p.shape[1]
    p3 = np.zeros((p.shape[0], 3))
    p3[:, :d] = p
    root3, target3 = np.zeros(3), np.zeros(3)
    root3[:d], target3[:d] = root, target
    dist = float(np.linalg.norm(target3 - root3))
    if not warm_turn(p3, root3, target3, float(tol), int(max_iter), float(lengths.sum()), dist):
        return False
    p[:] = p3[:, :d]
    return True


def fabrik_stages(bone_lengths, initial, target, *, root=None, tol: float = 1e-3, max_iter: int = 10,
                  turn_start: bool = True) -> list[Stage]:
    """Every stage of plain FABRIK from ``initial`` (n, d) towards ``target`` (d,), at most
    ``max_iter`` iterations: the start; with ``turn_start`` (``fabrik.solve``'s default) the start
    turned about the root towards the target where ``fabrik.solve`` turns it (a ``turn`` stage,
    ``fabrik.kernels.fabrik_chain.warm_turn``); then a ``forward`` stage (end effector set on the
    target, towards the root) and a ``backward`` stage (root set back on ``root``, default
    ``initial[0]``, towards the effector) per iteration. A target beyond the chain's reach gets the
    paper's single stretched pose (one ``backward`` stage). Stops when the effector is within
    ``tol``."""
    p = np.array(initial, dtype=np.float64)
    lengths = np.asarray(bone_lengths, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    n = p.shape[0]
    if lengths.shape != (n - 1,):
        raise ValueError(f"bone_lengths must have {n - 1} entries for {n} joints, got {lengths.shape}")
    base = p[0].copy() if root is None else np.asarray(root, dtype=np.float64).copy()
    if turn_start and _turn(p, base, target, lengths, tol, max_iter):
        p[0] = base
        stages = [Stage("start", 0, np.array(initial, dtype=np.float64), float(np.linalg.norm(initial[-1] - target))),
                  Stage("turn", 0, p.copy(), float(np.linalg.norm(p[-1] - target)))]
    else:
        p[0] = base
        stages = [Stage("start", 0, p.copy(), float(np.linalg.norm(p[-1] - target)))]
    if float(np.linalg.norm(target - base)) > float(lengths.sum()):
        for i in range(n - 1):
            d = target - p[i]
            p[i + 1] = p[i] + d * (lengths[i] / float(np.linalg.norm(d)))
        stages.append(Stage("backward", 1, p.copy(), float(np.linalg.norm(p[-1] - target))))
        return stages
    forward = [(i + 1, i, lengths[i]) for i in range(n - 2, -1, -1)]
    backward = [(i, i + 1, lengths[i]) for i in range(n - 1)]
    for it in range(1, max_iter + 1):
        if float(np.linalg.norm(p[-1] - target)) <= tol:
            break
        p[-1] = target
        _reach(p, forward, lengths)
        stages.append(Stage("forward", it, p.copy(), float(np.linalg.norm(p[0] - base))))
        p[0] = base
        _reach(p, backward, lengths)
        stages.append(Stage("backward", it, p.copy(), float(np.linalg.norm(p[-1] - target))))
    return stages


def follow_the_head(bone_lengths, positions, head) -> np.ndarray:
    """The Kine snake's move (section 5.1): the head (last joint) put on ``head`` and every joint
    behind it drawn along the line to its old place, as in FABRIK's forward stage; the root goes
    where the body pulls it. Returns the new (n, d) positions."""
    p = np.array(positions, dtype=np.float64)
    lengths = np.asarray(bone_lengths, dtype=np.float64)
    p[-1] = np.asarray(head, dtype=np.float64)
    _reach(p, [(i + 1, i, lengths[i]) for i in range(p.shape[0] - 2, -1, -1)], lengths)
    return p


def sub_base_estimates(skeleton, positions, targets: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """For each sub-base of ``skeleton`` (a joint with two or more children), where each of its
    branches would put it in one forward stage from ``positions`` towards ``targets``
    ({joint index: (3,)}; untargeted leaves keep their place): (k, 3), one row per branch. Their
    mean is the centroid the paper's multi-effector FABRIK moves the sub-base to (section 4.1)."""
    p = np.array(positions, dtype=np.float64)
    parents = np.asarray(skeleton.parents)
    lengths = skeleton.bone_lengths
    n = p.shape[0]
    children = [[] for _ in range(n)]
    for j in range(1, n):
        children[parents[j]].append(j)
    est = {}
    # leaves first (reverse topological order): each joint placed from its children's estimates
    placed = p.copy()
    for j in range(n - 1, -1, -1):
        if not children[j]:
            if j in targets:
                placed[j] = targets[j]
            continue
        guesses = []
        for c in children[j]:
            d = p[j] - placed[c]
            norm = float(np.linalg.norm(d))
            guesses.append(placed[c] + (d * (lengths[c] / norm) if norm > 0 else 0.0))
        guesses = np.array(guesses)
        if len(children[j]) >= 2:
            est[j] = guesses
        placed[j] = guesses.mean(axis=0)
    return est
