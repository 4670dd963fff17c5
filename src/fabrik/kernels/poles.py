"""Pole (bend) targets for FABRIK, compiled: the turn that swings a bending joint to the pole's side.

A pole arrives as a row of ``rows`` (P, 9) int64 and its point in ``points`` (P, 3):
``(k, a1, b1, s1, e1, a, b, s2, e2)``: ``k`` the pole joint; first the joints ``members[s1:e1]``
(the part of the path between the fixed joints ``a1`` and ``b1`` around ``k``: for a chain the
root and the effector) turn rigidly about the line through ``a1`` and ``b1`` so that ``k`` lies in
the half-plane bounded by that line towards the pole; then the joints ``members[s2:e2]`` (the part
between ``k``'s neighbours ``a`` and ``b``: ``k`` itself, with any joint at its place and what hangs
from them off the path) turn about the line through ``a`` and ``b`` the same way. Both turns keep
every bone length, and keep ``a1``, ``b1``, ``a``, ``b`` where they are; for a two-bone limb they
are one turn, which leaves the bending joint in the plane through the root, the effector and the
pole, on the pole's side. (The first turn alone does not decide where a joint between the ends
other than ``k`` bends; the second alone left the pole joint of 3-bone chains on the wrong side of
the root-target line in 85 to 120 of 500 random solves; both together in none:
``benchmarks/engine_poles.py``.)

``fabrik.solvers.extended`` builds the rows (``pole_rows``); the drivers call ``apply_poles``
after each backward stage, with a ``fraction`` of the turn below 1 where obstacles block it.
"""

import numpy as np
from numba import njit

from fabrik.kernels.frames import axis_angle_matrix
from fabrik.kernels.obstacles import segment_clearance
from fabrik.kernels.vec import turn_joint


@njit(cache=True, error_model="numpy")
def pole_angle(p, a, b, k, pole, eps):
    """(angle, ux, uy, uz, ok): the turn about the unit axis u from joint ``a`` to joint ``b`` that
    brings joint ``k``'s offset from that line onto the pole's; ok False (no turn) when the line is
    shorter than ``eps`` or joint k or the pole lies within ``eps`` of it."""
    ux, uy, uz = p[b, 0] - p[a, 0], p[b, 1] - p[a, 1], p[b, 2] - p[a, 2]
    r = np.sqrt(ux * ux + uy * uy + uz * uz)
    if r <= eps:
        return 0.0, 0.0, 0.0, 0.0, False
    ux, uy, uz = ux / r, uy / r, uz / r
    kx, ky, kz = p[k, 0] - p[a, 0], p[k, 1] - p[a, 1], p[k, 2] - p[a, 2]
    s = kx * ux + ky * uy + kz * uz
    kx, ky, kz = kx - s * ux, ky - s * uy, kz - s * uz
    wx, wy, wz = pole[0] - p[a, 0], pole[1] - p[a, 1], pole[2] - p[a, 2]
    s = wx * ux + wy * uy + wz * uz
    wx, wy, wz = wx - s * ux, wy - s * uy, wz - s * uz
    rk = np.sqrt(kx * kx + ky * ky + kz * kz)
    rw = np.sqrt(wx * wx + wy * wy + wz * wz)
    if rk <= eps or rw <= eps:
        return 0.0, ux, uy, uz, False
    c = kx * wx + ky * wy + kz * wz
    sn = (ky * wz - kz * wy) * ux + (kz * wx - kx * wz) * uy + (kx * wy - ky * wx) * uz
    return np.arctan2(sn, c), ux, uy, uz, True


@njit(cache=True, error_model="numpy")
def turn_members(p, F, members, start, stop, a, R):
    """Turn the joints ``members[start:stop]`` of ``p`` (n, 3) by R (3, 3) about ``p[a]``, and their
    frames ``F`` (n, 3, 3; none when empty) with them, in place."""
    for m in range(start, stop):
        turn_joint(p, F, members[m], a, R)


@njit(cache=True, error_model="numpy")
def pole_turn(p, F, members, start, stop, a, b, k, pole, fraction, eps, R):
    """One turn of a pole step (module docstring): ``members[start:stop]`` about the line a-b by
    ``fraction`` of the angle that puts joint k on the pole's side. Returns the angle turned."""
    angle, ux, uy, uz, ok = pole_angle(p, a, b, k, pole, eps)
    if not ok or angle == 0.0:
        return 0.0
    axis_angle_matrix(R, ux, uy, uz, fraction * angle)
    turn_members(p, F, members, start, stop, a, R)
    return fraction * angle


@njit(cache=True, error_model="numpy")
def apply_poles(p, F, rows, points, members, eps):
    """Every pole's two turns (module docstring), in order, in place; frames ``F`` turn with their
    joints (none when empty). Returns the largest angle turned (radians)."""
    R = np.empty((3, 3))
    worst = 0.0
    for r in range(rows.shape[0]):
        k, a1, b1, s1, e1, a, b, s2, e2 = rows[r]
        worst = max(worst, abs(pole_turn(p, F, members, s1, e1, a1, b1, k, points[r], 1.0, eps, R)))
        worst = max(worst, abs(pole_turn(p, F, members, s2, e2, a, b, k, points[r], 1.0, eps, R)))
    return worst


#: Halvings of a pole turn that would carry a bone into an obstacle.
CLEAR_STEPS = 12


@njit(cache=True, error_model="numpy")
def _members_clear(p, members, start, stop, b, parents, obs, margin):
    """True when the bones into the joints ``members[start:stop]`` and into ``b`` clear the
    obstacles by ``margin``."""
    for m in range(start, stop + 1):
        j = members[m] if m < stop else b
        q = parents[j]
        if q >= 0 and segment_clearance(obs, p[q, 0], p[q, 1], p[q, 2], p[j, 0], p[j, 1], p[j, 2], 0.0) < margin:
            return False
    return True


@njit(cache=True, inline="always", error_model="numpy")
def _restore(p, F, saved, saved_F, members, s, e):
    for m in range(s, e):
        j = members[m]
        p[j] = saved[j]
        if F.shape[0] > 0:
            F[j] = saved_F[j]


@njit(cache=True, error_model="numpy")
def apply_poles_clear(p, F, rows, points, members, eps, parents, obs, margin):
    """``apply_poles`` keeping the bones off the obstacles: each turn is the largest fraction of
    its angle (1, else found by ``CLEAR_STEPS`` halvings) after which the bones it moves clear the
    obstacles by ``margin`` (none when the pose before it was not clear). Returns the largest
    angle turned."""
    R = np.empty((3, 3))
    saved = p.copy()
    saved_F = F.copy()
    worst = 0.0
    for r in range(rows.shape[0]):
        for step in range(2):
            k = rows[r, 0]
            a, b, s, e = (rows[r, 1], rows[r, 2], rows[r, 3], rows[r, 4]) if step == 0 else \
                (rows[r, 5], rows[r, 6], rows[r, 7], rows[r, 8])
            angle, ux, uy, uz, ok = pole_angle(p, a, b, k, points[r], eps)
            if not ok or angle == 0.0:
                continue
            for m in range(s, e):
                j = members[m]
                saved[j] = p[j]
                if F.shape[0] > 0:
                    saved_F[j] = F[j]
            axis_angle_matrix(R, ux, uy, uz, angle)
            turn_members(p, F, members, s, e, a, R)
            if _members_clear(p, members, s, e, b, parents, obs, margin):
                worst = max(worst, abs(angle))
                continue
            lo, hi = 0.0, 1.0
            for _ in range(CLEAR_STEPS):
                _restore(p, F, saved, saved_F, members, s, e)
                mid = 0.5 * (lo + hi)
                axis_angle_matrix(R, ux, uy, uz, mid * angle)
                turn_members(p, F, members, s, e, a, R)
                if _members_clear(p, members, s, e, b, parents, obs, margin):
                    lo = mid
                else:
                    hi = mid
            _restore(p, F, saved, saved_F, members, s, e)
            fraction = lo
            if lo > 0.0:
                axis_angle_matrix(R, ux, uy, uz, lo * angle)
                turn_members(p, F, members, s, e, a, R)
            worst = max(worst, abs(fraction * angle))
    return worst
