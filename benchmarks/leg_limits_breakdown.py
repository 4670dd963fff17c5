"""Where FABRIK with ``humanoid`` limits loses against plain FABRIK, limb by limb, on motion-capture takes.

    PYTHONPATH=src .venv/bin/python benchmarks/leg_limits_breakdown.py ../shared/data/mocap/cmu_131_0{1,2,3}.bvh

Runs ``fabrik reconstruct``'s plain and ``--constraints humanoid`` FABRIK rows (``reconstruct_take``
with its defaults) on each take and prints, per take:

- each evaluated joint's median position error (fraction of the skeleton height), plain and limited;
- for every hinge ``humanoid`` places (knees, elbows): the angle between its axis and the recording's
  own bend axis (thigh x shin), both in the hinge's reference frame (``H_c = F[j] Q[c]``, the
  recording's frames from its BVH rotations), and in world terms the angle between the limited
  solve's hinge axis and the recording's bend axis; the median bend of the recording and of both
  solves;
- the twist of the bone leaving each hip and shoulder about itself against its reference (what the
  hip's cone leaves free), recording against the limited solve (5th/50th/95th percentiles, degrees);
- leg shape: hip-to-ankle distance (fraction of the height) and foot pitch (ankle -> toe bone,
  degrees below the horizontal of the rig's rest up), medians;
- the knees' swivel about the hip-ankle line against the recording's, plain and limited;
- the knees' errors again when the ankles are given as extra effectors (is the knee wrong because
  the ankle is, or on its own?).

Then, pooled over the takes as the CLI pools them: the ratio of the limited to the plain median
inner-joint error, and that ratio if the limited legs (knee, ankle, toe joints) had plain's errors,
or half their own: how far fixing the legs alone can move the pooled median.
"""

from __future__ import annotations

import math
import sys

import numpy as np

import fabrik
from fabrik.mocap.reconstruct import reconstruct_take
from fabrik.mocap.takes import effector_indices, evaluated_joints, prepare_take
from fabrik.model.constraints import Hinge
from fabrik.model.geometry import frames_from_world_rotations, relative_twist, rest_up
from fabrik.model.humanoid_limits import classify
from fabrik.model.rig import rig

LEG_PARTS = ("knee", "ankle", "toe")


def _first_child(skeleton, j: int, lengths) -> int | None:
    for c in skeleton.children(j):
        if lengths[c] > 0:
            return c
    return None


def _top(skeleton, j: int, positions: np.ndarray) -> int:
    """The joint above j through zero-length bones (the start of the bone arriving at j)."""
    top = int(skeleton.parents[j])
    while top > 0 and np.allclose(positions[0, top], positions[0, j]):
        top = int(skeleton.parents[top])
    return top


def _bend(pos, top, j, c):
    """(bend degrees (F,), unit bend axis (F, 3)) at joint j between bone top->j and j->c."""
    a, b = pos[:, j] - pos[:, top], pos[:, c] - pos[:, j]
    n = np.cross(a, b)
    s = np.linalg.norm(n, axis=1)
    return np.degrees(np.arctan2(s, (a * b).sum(1))), n / np.maximum(s, 1e-12)[:, None]


def _deg(u, v):
    return np.degrees(np.arccos(np.clip(np.abs((u * v).sum(-1)), 0.0, 1.0)))


def _swivel(X, truth, hip, knee, ankle):
    """(F,) degrees: the turn about the hip -> ankle line from the recording's knee to X's knee."""
    axis = X[:, ankle] - X[:, hip]
    axis /= np.linalg.norm(axis, axis=1)[:, None]
    k = X[:, knee] - X[:, hip]
    r = truth[:, knee] - truth[:, hip]
    k -= (k * axis).sum(1)[:, None] * axis
    r -= (r * axis).sum(1)[:, None] * axis
    return np.degrees(np.arctan2((np.cross(r, k) * axis).sum(1), (r * k).sum(1)))


def take_breakdown(path: str) -> dict:
    skeleton, motion = fabrik.load_bvh(path)
    take = prepare_take(skeleton, motion)
    body, truth = take.body, take.body_positions
    height = body.height()
    effectors = effector_indices(body, None)
    inner = evaluated_joints(body, effectors)
    plain = reconstruct_take(skeleton, motion)
    limited = reconstruct_take(skeleton, motion, constraints="humanoid")
    P = {"plain": plain.positions[:, take.joints], "limited": limited.positions[:, take.joints]}
    errors = {k: np.linalg.norm(v[:, inner] - truth[:, inner], axis=2) / height for k, v in P.items()}
    names = [body.names[j] for j in inner]
    print(f"\n{path}: {truth.shape[0]} frames, effectors {', '.join(limited.effectors)}; reached: limited "
          f"{100 * limited.solution.reached.mean():.1f}%")
    print(f"{'joint':<16}{'plain':>9}{'limited':>9}   (median error / height)")
    for k, name in enumerate(names):
        print(f"{name:<16}{np.median(errors['plain'][:, k]):>9.4f}{np.median(errors['limited'][:, k]):>9.4f}")

    lb = limited.body
    tables = rig(lb)
    R0, lengths = tables.rest_frames, lb.bone_lengths
    F_truth = frames_from_world_rotations(body, take.rotations[:, take.joints])
    F_lim = limited.frames
    parts = classify(body)
    print("\nhinges: axis vs the recording's bend axis (degrees, frames bent > 10 deg), median bend (degrees)")
    for j, items in lb.constraints.items():
        hinge = next((it for it in items if isinstance(it, Hinge)), None)
        c = _first_child(lb, j, lengths)
        if hinge is None or c is None:
            continue
        axis = np.asarray(hinge.axis)
        top = _top(body, j, truth)
        bend_t, n_t = _bend(truth, top, j, c)
        ok = bend_t > 10.0
        ref_t = F_truth[:, j] @ R0[j].T @ R0[c]
        local_t = np.einsum("fji,fj->fi", ref_t, n_t)
        world_lim = (F_lim[:, j] @ R0[j].T @ R0[c]) @ axis
        bends = {k: np.median(_bend(v, top, j, c)[0]) for k, v in P.items()}
        print(f"  {body.names[j]:<12} humanoid axis vs recording's, in H_c: {np.median(_deg(local_t[ok], axis)):5.1f}; "
              f"limited solve's axis vs recording's bend axis (world): {np.median(_deg(world_lim[ok], n_t[ok])):5.1f}; "
              f"bend: recording {np.median(bend_t):5.1f}, plain {bends['plain']:5.1f}, limited {bends['limited']:5.1f}")
    print("twist of the bone leaving each hip/shoulder against its reference (degrees, 5/50/95th percentiles)")
    for j, (part, _side) in sorted(parts.items()):
        if part not in ("hip", "shoulder"):
            continue
        c = _first_child(body, j, lengths)
        if c is None:
            continue
        cells = []
        for label, F in (("recording", F_truth), ("limited", F_lim)):
            twist = np.degrees(relative_twist(F[:, j] @ R0[j].T @ R0[c], F[:, c]))
            cells.append(f"{label} {np.round(np.percentile(twist, [5, 50, 95])).astype(int).tolist()}")
        print(f"  {body.names[j]:<14} " + ", ".join(cells))
    up = rest_up(body)
    print("legs: hip-ankle distance / height and foot pitch (degrees below horizontal), medians")
    for j, (part, _side) in sorted(parts.items()):
        if part != "ankle":
            continue
        knee = _top(body, j, truth)
        hip = _top(body, knee, truth)
        toe = _first_child(body, j, lengths)
        if toe is None:
            continue
        cells = []
        for label, X in (("recording", truth), ("plain", P["plain"]), ("limited", P["limited"])):
            dist = np.linalg.norm(X[:, j] - X[:, hip], axis=1) / height
            foot = X[:, toe] - X[:, j]
            pitch = np.degrees(np.arcsin(np.clip(-(foot @ up) / np.linalg.norm(foot, axis=1), -1, 1)))
            cells.append(f"{label} {np.median(dist):.3f} / {np.median(pitch):5.1f}")
        print(f"  {body.names[j]:<12} " + ", ".join(cells))
    print("knee swivel about the hip-ankle line against the recording's (degrees, median of |error|; the targets "
          "do not see it)")
    for j, (part, _side) in sorted(parts.items()):
        c = _first_child(body, j, lengths)
        if part != "knee" or c is None:
            continue
        hip = _top(body, j, truth)
        cells = [f"{label} {np.median(np.abs(_swivel(X, truth, hip, j, c))):5.1f}" for label, X in P.items()]
        print(f"  {body.names[j]:<12} " + ", ".join(cells))
    ankles = [body.names[j] for j, (part, _) in parts.items() if part == "ankle" and j not in effectors]
    knees = [j for j, (part, _) in parts.items() if part == "knee"]
    with_ankles = {}
    if ankles:
        names_eff = list(limited.effectors) + ankles
        for label, cons in (("plain", None), ("limited", "humanoid")):
            r = reconstruct_take(skeleton, motion, constraints=cons, effectors=names_eff)
            X = r.positions[:, take.joints]
            with_ankles[label] = np.linalg.norm(X[:, knees] - truth[:, knees], axis=2) / height
        print(f"knees with the ankles as extra effectors: " + ", ".join(
            f"{body.names[j]} plain {np.median(with_ankles['plain'][:, k]):.4f} limited "
            f"{np.median(with_ankles['limited'][:, k]):.4f}" for k, j in enumerate(knees)))
    legs = [k for k, j in enumerate(inner) if parts.get(j, ("", None))[0] in LEG_PARTS]
    return {"errors": errors, "legs": legs}


def main(paths: list[str]) -> None:
    takes = [take_breakdown(p) for p in paths]
    plain = np.concatenate([t["errors"]["plain"].ravel() for t in takes])
    limited = np.concatenate([t["errors"]["limited"].ravel() for t in takes])
    base = float(np.median(plain))
    print(f"\npooled over {len(takes)} take(s): median error / height plain {base:.5f}, limited "
          f"{np.median(limited):.5f}, ratio {np.median(limited) / base:.3f}")
    for label, how in (("plain's errors", "plain"), ("half their own errors", "half")):
        mixed = []
        for t in takes:
            e = t["errors"]["limited"].copy()
            e[:, t["legs"]] = t["errors"]["plain"][:, t["legs"]] if how == "plain" else 0.5 * e[:, t["legs"]]
            mixed.append(e.ravel())
        print(f"ratio if the limited legs (knee, ankle, toe joints) had {label}: "
              f"{np.median(np.concatenate(mixed)) / base:.3f}")


if __name__ == "__main__":
    if len(sys.argv) < 2 or not math.isfinite(len(sys.argv)):
        sys.exit(__doc__)
    main(sys.argv[1:])
