"""Closed loops for skeleton FABRIK (section 4.2: targets on inner joints, updated as the loop
moves): two effectors holding one rigid object, and an effector attached to another joint of the
same body. Pass them as ``loops=[...]`` to ``fabrik.solve`` (a skeleton) or
``fabrik.solve_sequence``; docs/methods.md, "Closed loops", is the reference::

    import fabrik
    from fabrik.loops import Attach, HeldObject

    body = fabrik.models.humanoid()
    bar = HeldObject({"l_wrist": [0.2, 0, 0], "r_wrist": [-0.2, 0, 0]}, pose=([0, 1.2, 0.4], None))
    sol = fabrik.solve(body, targets={"head": [0, 1.68, 0.05]}, loops=[bar])
    sol.extras["loop_errors"]        # (1,) each loop's closure error, model units

* ``HeldObject(grips, pose=None, position=None)``: a rigid object whose grip points ``grips``
  ``{joint: xyz}`` (in the object's own coordinates) the joints hold. With ``pose`` (``(xyz,
  rotation)``, a (4, 4) transform; rotation None: the identity) the object is placed there; with
  ``position`` only its centre is, and it turns with the hands; with neither it moves freely with
  the body (the hands keep their grip on it, so their spacing stays the object's).
* ``Attach(effector, joint, offset=(0, 0, 0))``: ``effector`` kept at ``joint``'s place plus the
  world offset ``offset`` (a hand on the hip), wherever the joint goes.

The solve (``solve_loops``): in rounds of ``ROUND_ITERATIONS`` FABRIK iterations each, every loop
joint becomes a targeted joint whose target is taken from the pose the last round ended with (a
held object fitted to the hands, rigidly: ``fit_object``; an attachment's joint plus its offset);
the rounds go on until the loop errors and the targets are within ``tol``, three rounds in a row
do not improve on the best by 1%, or ``max_iter`` iterations are spent. Objects that all have a
``pose`` give targets that never move: one solve of up to ``max_iter`` iterations. A loop's closure error is the largest distance of
its joints from where the loop needs them: a held object's grip points (fitted to the final pose)
and an attachment's joint plus offset. ``reached`` needs every target and every loop within
``tol``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from fabrik._validation import MAX_COORDINATE, as_point
from fabrik.model._frozen import frozen
from fabrik.model.geometry import kabsch

#: FABRIK iterations per round, between two updates of the loop targets.
ROUND_ITERATIONS = 8


def _xyz(value, name: str) -> np.ndarray:
    return frozen(as_point(value, name, 3))


@dataclass(frozen=True, eq=False)
class HeldObject:
    """A rigid object held at ``grips`` ``{joint: xyz}`` (object coordinates, two or more joints);
    ``pose`` places it (``(xyz, rotation)`` or (4, 4)), ``position`` places only its centre (it
    turns with the hands), neither: it moves freely with the body (module docstring)."""

    grips: Any
    pose: Any = None
    position: Any = None

    def __post_init__(self):
        if not isinstance(self.grips, Mapping) or len(self.grips) < 2:
            raise ValueError("HeldObject grips must be a mapping {joint: xyz} of two or more joints")
        object.__setattr__(self, "grips", MappingProxyType({key: _xyz(v, f"grips[{key!r}]")
                                                             for key, v in self.grips.items()}))
        if self.pose is not None and self.position is not None:
            raise ValueError("give a HeldObject a pose or a position, not both")
        if self.pose is not None:
            from fabrik.model.pose import is_transform, split_transform, target_rotation

            if is_transform(self.pose):
                xyz, R = split_transform(self.pose, 3)
            elif isinstance(self.pose, tuple) and len(self.pose) == 2:
                xyz, R = self.pose
                R = np.eye(3) if R is None else target_rotation(R, 3)
            else:
                raise ValueError("HeldObject pose must be (xyz, rotation) or a (4, 4) transform")
            object.__setattr__(self, "pose", (_xyz(xyz, "HeldObject pose position"), frozen(R)))
        if self.position is not None:
            object.__setattr__(self, "position", _xyz(self.position, "HeldObject position"))

    def joints(self) -> tuple:
        return tuple(self.grips)


@dataclass(frozen=True, eq=False)
class Attach:
    """``effector`` kept at ``joint``'s place plus the world ``offset`` (3,)."""

    effector: Any
    joint: Any
    offset: Any = (0.0, 0.0, 0.0)

    def __post_init__(self):
        object.__setattr__(self, "offset", _xyz(self.offset, "Attach offset"))

    def joints(self) -> tuple:
        return (self.effector,)


LOOP_TYPES = (HeldObject, Attach)


def check_loops(skeleton, loops) -> list:
    """``loops`` as a list of ``HeldObject`` / ``Attach`` with joint names checked; ValueError
    naming the problem (an unknown joint, a joint in two loops, an attachment to itself)."""
    if isinstance(loops, LOOP_TYPES):
        loops = [loops]
    if isinstance(loops, (str, bytes, Mapping)) or not hasattr(loops, "__iter__"):
        raise ValueError("loops must be a list of fabrik.loops.HeldObject and Attach")
    out, seen = [], set()
    for k, loop in enumerate(loops):
        if not isinstance(loop, LOOP_TYPES):
            raise ValueError(f"loops[{k}] must be a fabrik.loops.HeldObject or Attach, got {type(loop).__name__}")
        names = [_name(skeleton, j, f"loops[{k}]") for j in loop.joints()]
        if isinstance(loop, Attach):
            other = _name(skeleton, loop.joint, f"loops[{k}]")
            if other == names[0]:
                raise ValueError(f"loops[{k}]: a joint cannot be attached to itself ({other})")
        for name in names:
            if name in seen:
                raise ValueError(f"loops[{k}]: joint {name} is in two loops")
            seen.add(name)
        out.append(loop)
    if not out:
        raise ValueError("loops is empty")
    return out


def _name(skeleton, joint, where: str) -> str:
    if isinstance(joint, str):
        if joint not in skeleton.names:
            raise ValueError(f"{where}: unknown joint {joint!r}; joints are: {', '.join(skeleton.names)}")
        return joint
    if isinstance(joint, (int, np.integer)) and not isinstance(joint, bool) and 0 <= joint < skeleton.n_joints:
        return skeleton.names[int(joint)]
    raise ValueError(f"{where}: unknown joint {joint!r}; joints are: {', '.join(skeleton.names)}")


def fit_object(loop: HeldObject, held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centre (3,), rotation (3, 3)) of the object for the joints' positions ``held`` (g, 3), in
    the order of ``loop.grips``: its ``pose``; with ``position``, the rotation about that centre
    that best maps the grips onto the joints; else the best rigid placement (Kabsch)."""
    if loop.pose is not None:
        return loop.pose
    grips = np.array([np.asarray(g) for g in loop.grips.values()])
    if loop.position is not None:
        centre = np.asarray(loop.position)
        a, b = grips, held - centre
    else:
        a = grips - grips.mean(axis=0)
        b = held - held.mean(axis=0)
    # the grips onto the joints, as the transpose of the joints' fit onto the grips: an SVD of a^T b
    # (the SVD of its transpose would round differently)
    R = kabsch(a, b).T
    if loop.position is None:
        centre = held.mean(axis=0) - R @ grips.mean(axis=0)
    return centre, R


def loop_goals(skeleton, loops: list, positions: np.ndarray) -> tuple[dict, list]:
    """({joint name: where the loop needs it}, objects: each held object's (centre, rotation))
    for the pose ``positions``."""
    goals, objects = {}, []
    for loop in loops:
        if isinstance(loop, HeldObject):
            names = [_name(skeleton, j, "loops") for j in loop.grips]
            held = positions[[skeleton.index(n) for n in names]]
            centre, R = fit_object(loop, held)
            objects.append((centre, R))
            for name, g in zip(names, loop.grips.values()):
                goals[name] = centre + R @ np.asarray(g)
        else:
            name = _name(skeleton, loop.effector, "loops")
            goals[name] = positions[skeleton.index(_name(skeleton, loop.joint, "loops"))] + np.asarray(loop.offset)
            objects.append(None)
    return goals, objects


def loop_errors(skeleton, loops: list, positions: np.ndarray) -> np.ndarray:
    """(L,) each loop's closure error for the pose ``positions``: the largest distance of its
    joints from where the loop needs them (``loop_goals``)."""
    goals, _ = loop_goals(skeleton, loops, positions)
    out = []
    for loop in loops:
        names = [_name(skeleton, j, "loops") for j in loop.joints()]
        out.append(max(float(np.linalg.norm(positions[skeleton.index(n)] - goals[n])) for n in names))
    return np.array(out)


def solve_loops(skeleton, targets, initial, root, tol, max_iter, chosen, opts, ext) -> "Solution":
    """Skeleton FABRIK with closed loops (module docstring); the other engine options of ``ext``
    (weights, poles, obstacles, self_collision) hold in every round. ``extras["loop_errors"]``
    (L,) and ``extras["objects"]`` (each held object's (centre, rotation); None for an
    attachment) describe the answer."""
    from fabrik.solvers import extended
    from fabrik.solvers.result import Solution

    loops = check_loops(skeleton, ext["loops"])
    inner = {key: value for key, value in ext.items() if key != "loops"}
    targets = dict(targets) if targets else {}
    for key in targets:
        name = _name(skeleton, key, "targets")
        if any(name in [_name(skeleton, j, "loops") for j in loop.joints()] for loop in loops):
            raise ValueError(f"targets[{key!r}]: the joint is held by a loop; its target comes from the loop")
    pose = np.array(skeleton.rest_positions() if initial is None else initial, dtype=np.float64)
    # objects placed where they are: the loop targets never move, and one solve holds them
    fixed = all(isinstance(loop, HeldObject) and loop.pose is not None for loop in loops)
    total = 0
    best = None
    rounds = 0
    while True:
        goals, _ = loop_goals(skeleton, loops, pose)
        merged = {**targets, **goals}
        cap = max(max_iter - total, 0) if fixed else min(ROUND_ITERATIONS, max(max_iter - total, 0))
        if inner:
            sol = extended.solve_skeleton(skeleton, merged, pose, root, tol, cap, chosen, opts, inner)
        else:
            sol = chosen.skeleton.solve(skeleton, merged, pose, root, tol, cap, opts)
        total += sol.iterations
        rounds += 1
        pose = sol.positions
        errors = loop_errors(skeleton, loops, pose)
        target_err = max([sol.effector_errors[_name(skeleton, k, "targets")] for k in targets] or [0.0])
        score = max(float(errors.max()), target_err)
        done = score <= tol
        if best is None or score < (1.0 - 0.01) * best[0]:
            best = (score, sol, errors, rounds)
        elif not done:
            if rounds - best[3] >= 3:  # three rounds without a 1% improvement
                break
        if done:
            best = (score, sol, errors, rounds)
            break
        if total >= max_iter or fixed:
            break
        if chosen.frames and "frames" in sol.extras:  # twists carried from round to round
            opts = dataclasses.replace(opts, initial_frames=np.array(sol.extras["frames"]))
    score, sol, errors, _ = best
    _, objects = loop_goals(skeleton, loops, sol.positions)
    if score <= tol:
        status = "reached"
    elif sol.status in ("obstructed", "blocked", "unreachable"):
        status = sol.status
    else:
        status = "max_iterations" if total >= max_iter else "stalled"
    errors_by_name = {name: e for name, e in sol.effector_errors.items()}
    extras = dict(sol.extras)
    extras["loop_errors"] = errors
    extras["objects"] = tuple(objects)
    extras["rounds"] = rounds
    return Solution(sol.positions, total, float(max(score, 0.0)), status, sol.method, errors_by_name,
                    MappingProxyType(extras))


__all__ = ["HeldObject", "Attach", "fit_object", "loop_errors", "loop_goals", "check_loops", "solve_loops",
           "ROUND_ITERATIONS"]
