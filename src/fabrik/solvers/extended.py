"""FABRIK's engine options: pole targets, effector weights, obstacles, self-collision and closed
loops, taken by ``fabrik.solve`` (and ``fabrik.solve_sequence``) as keywords beside the method's
own options; docs/methods.md ("Pole targets", "Effector weights", "Obstacles", "Closed loops") is
the reference.

* ``pole=xyz`` (chains and arms; ``pole_joint=k``, default the middle joint ``n // 2`` of a chain)
  and ``poles={joint: xyz}`` (skeletons): ``fabrik.kernels.poles``.
* ``weights={joint: w}`` (skeletons; w >= 0, default 1): the sub-base centroids are weighted means
  (``fabrik.kernels.tree_extras``; where they differ the stopping rules and the best pose follow the
  weighted error ``sqrt(sum w e^2 / sum w)``); a target of weight 0 is left out of the solve, as if it were
  not given (its distance is still reported in ``effector_errors``; ``error`` and ``status``
  count the others).
* ``obstacles=[Sphere, Capsule, Box, HalfSpace, ...]`` (``fabrik.obstacles``; chains, skeletons,
  arms) and ``self_collision=r`` (skeletons and arms: bones as capsules of radius r kept apart).
* ``loops=[...]`` (skeletons; ``fabrik.loops``).

These are FABRIK's options: ``method="fabrik"`` (or its limited variant ``fabrik-constrained``;
on arms ``fabrik`` and ``fabrik-revolute``); another method asked for with them is a ValueError.
Solves without any of them never come here, so none of their results changes.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Mapping

import numpy as np

from fabrik._validation import MAX_COORDINATE, as_point
from fabrik.model._frozen import cached
from fabrik.solvers.result import STATUSES, Solution

#: The keywords ``fabrik.solve`` takes for these options.
KEYS = frozenset(("pole", "pole_joint", "poles", "weights", "obstacles", "self_collision", "loops"))
#: Bones keep this fraction of the model's size (a chain's length, a skeleton's summed bones, an
#: arm's reach) clear of every obstacle, so that rounding never puts one inside.
MARGIN = 1e-9
#: A stop short of a target within reach is ``blocked`` when a bone of the answer lies within this
#: fraction of the model's size of an obstacle (``fabrik.kernels.fabrik_chain_options.CONTACT``).
CONTACT = 1e-3
#: The kinds of model each option is for.
FOR = {"pole": ("chain", "arm"), "pole_joint": ("chain", "arm"), "poles": ("skeleton",),
       "weights": ("skeleton",), "obstacles": ("chain", "skeleton", "arm"),
       "self_collision": ("skeleton", "arm"), "loops": ("skeleton",)}
_KIND_OPTIONS = {kind: ", ".join(k for k, kinds in FOR.items() if kind in kinds) for kind in ("chain", "skeleton", "arm")}


def take(options: dict) -> dict | None:
    """The engine options popped from ``options`` (a solve's keyword options, changed in place),
    or None when there are none (a value of None counts as not given)."""
    found = {key: options.pop(key) for key in list(options) if key in KEYS}
    found = {k: v for k, v in found.items() if v is not None}
    return found or None


def check_kind(ext: dict, kind: str) -> None:
    """ValueError for an option ``kind`` models do not take, naming those they do."""
    for key in ext:
        if kind not in FOR[key]:
            raise ValueError(f"{key} is an option for {' and '.join(k + 's' for k in FOR[key])}; a {kind} takes "
                             f"{_KIND_OPTIONS[kind]}")


def check_method(name: str, allowed: tuple, kind: str, ext: dict) -> None:
    if name not in allowed:
        raise ValueError(f"{', '.join(sorted(ext))}: options of FABRIK (method {' or '.join(map(repr, allowed))} on a "
                         f"{kind}); method {name!r} does not take them")


def obstacle_table(value) -> np.ndarray:
    from fabrik.obstacles import pack

    return pack(value)


def check_root_clear(obs: np.ndarray, root: np.ndarray, margin: float, what: str = "the root") -> None:
    """ValueError when ``root`` (3,) lies inside (or within ``margin`` of) an obstacle: no bone can
    leave it."""
    if obs.shape[0] == 0:
        return
    from fabrik.kernels.obstacles import sdf

    for k in range(obs.shape[0]):
        if sdf(obs[k], float(root[0]), float(root[1]), float(root[2])) < margin:
            raise ValueError(f"{what} {np.asarray(root).tolist()} lies inside obstacles[{k}]; move the obstacle or "
                             f"the model")


def _radius(value, name: str = "self_collision") -> float:
    try:
        r = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a bone radius (a number > 0) or None, got {value!r}") from None
    if not (0.0 < r < MAX_COORDINATE) or isinstance(value, bool):
        raise ValueError(f"{name} must be a bone radius (a number > 0) or None, got {value!r}")
    return r


_NO_POLES = (np.zeros((0, 9), dtype=np.int64), np.zeros((0, 3)), np.zeros(0, dtype=np.int64))


def chain_poles(n: int, pole, pole_joint, dim: int):
    """(rows (P, 9), points (P, 3), members) of ``fabrik.kernels.poles`` for a chain of ``n``
    joints: pole joint ``pole_joint`` (default ``n // 2``), the swivel between the root and the
    effector, the turn between its neighbours."""
    if pole is None:
        if pole_joint is not None:
            raise ValueError("pole_joint needs a pole: pole=xyz")
        return _NO_POLES
    point = np.zeros(3)
    point[:dim] = as_point(pole, "pole", dim)
    if n < 3:
        raise ValueError(f"a pole needs a chain of at least 3 joints (a joint between two others), this one has {n}")
    k = n // 2 if pole_joint is None else pole_joint
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n - 2:
        raise ValueError(f"pole_joint must be a joint index between 1 and {n - 2} (not the root or the effector), "
                         f"got {pole_joint!r}")
    k = int(k)
    members = np.concatenate([np.arange(1, n - 1), [k]]).astype(np.int64)
    rows = np.array([[k, 0, n - 1, 0, n - 2, k - 1, k + 1, n - 2, n - 1]], dtype=np.int64)
    return rows, point[None, :].copy(), members


def solve_chain(chain, target, rotation, initial, root, tol, max_iter, chosen, opts, ext) -> Solution:
    """FABRIK on a chain with a pole and obstacles (``fabrik.kernels.fabrik_chain_options``): 3D
    arrays in (2D chains embedded in z = 0, as ``fabrik.solve`` gives them), the 3D answer out."""
    from fabrik.kernels.fabrik_chain_options import fabrik_chain_options
    from fabrik.kernels.frames import frames_along
    from fabrik.kernels.records import ChainObstacles, ChainPoles, Stop

    check_kind(ext, "chain")
    check_method(chosen.name, ("fabrik", "fabrik-constrained"), "chain", ext)
    n, dim = chain.n_joints, chain.dim
    rows, points, members = chain_poles(n, ext.get("pole"), ext.get("pole_joint"), dim)
    obs = obstacle_table(ext.get("obstacles"))
    if dim == 2 and obs.shape[0]:
        obs = _planar_check(obs)
    size = float(chain.total_length) or 1.0
    margin = MARGIN * size
    check_root_clear(obs, root, margin)
    p = np.array(initial, dtype=np.float64, order="C")
    lengths = chain._kernel_lengths
    target = np.ascontiguousarray(target, dtype=np.float64)
    root = np.ascontiguousarray(root, dtype=np.float64)
    extras = {}
    if rows.shape[0]:
        extras["pole_joint"] = int(rows[0, 0])
    poles, obstacles = ChainPoles(rows, points, members), ChainObstacles(obs, margin, dim == 2)
    if not chosen.limits:
        it, err, _, clearance, code = fabrik_chain_options(p, lengths, target, root, Stop(tol, 0.0, max_iter), None,
                                                           poles, obstacles)
        if obs.shape[0]:
            extras["clearance"] = float(clearance)
        return Solution(p, int(it), float(err), STATUSES[code], "fabrik", None, MappingProxyType(extras))
    from fabrik.solvers.chain_limits import build_solution, prepare

    limits, frame = prepare(chain)
    frames = np.empty((n, 3, 3))
    frames_along(frames, p, frame)
    active = np.zeros(n, dtype=np.int64)
    oriented = rotation is not None
    lim = (frames, active, limits, frame, rotation if oriented else np.eye(3), oriented, dim == 2,
           float(opts.orientation_tol))
    it, err, oerr, clearance, code = fabrik_chain_options(p, lengths, target, root,
                                                          Stop(tol, float(opts.orientation_tol), max_iter), lim, poles,
                                                          obstacles)
    if obs.shape[0]:
        extras["clearance"] = float(clearance)
    return build_solution("fabrik-constrained", chain, (p, frames, active, it, err, oerr, code), frame, oriented,
                          extras)


def _planar_check(obs: np.ndarray) -> np.ndarray:
    """Obstacles of a 2D chain: any solid, cut by the z = 0 plane the chain moves in."""
    return obs


# --- skeletons --------------------------------------------------------------------------------

def target_weights(skeleton, targets: Mapping, weights) -> np.ndarray:
    """(k,) the weight of each target of ``targets`` (in its order): ``weights[joint]`` (by name or
    index), 1 where not given. ValueError for a weight that is not a finite number >= 0, a joint
    of ``weights`` without a target, or every weight 0."""
    k = len(targets)
    w = np.ones(k)
    if weights is None:
        return w
    if not isinstance(weights, Mapping):
        raise ValueError(f"weights must be a mapping {{joint: weight}}, got {type(weights).__name__}")
    where = {}
    for m, key in enumerate(targets):
        where[skeleton.index(key) if isinstance(key, str) else int(key)] = m
    for key, value in weights.items():
        try:
            j = skeleton.index(key) if isinstance(key, str) else int(key)
        except (ValueError, TypeError):
            raise ValueError(f"weights: unknown joint {key!r}; joints are: {', '.join(skeleton.names)}") from None
        if j not in where:
            raise ValueError(f"weights[{key!r}]: the joint has no target; weights are for targeted joints "
                             f"({', '.join(skeleton.names[i] for i in where)})")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"weights[{key!r}] must be a number >= 0, got {value!r}") from None
        if isinstance(value, bool) or not (0.0 <= v < MAX_COORDINATE):
            raise ValueError(f"weights[{key!r}] must be a finite number >= 0, got {value!r}")
        w[where[j]] = v
    if not (w > 0.0).any():
        raise ValueError("weights: every target has weight 0; give at least one a positive weight")
    return w


def skeleton_poles(skeleton, arrays, poles, target_idx: np.ndarray, groups: tuple):
    """(rows, points, members) of ``fabrik.kernels.poles`` for ``poles`` ``{joint: xyz}``.

    For pole joint k: its neighbours are the nearest joint above it at a distance (a, through
    zero-length bones) and the first joint at a distance on the path down to its targets (b); the
    part between them (k, the joints at its place, and what hangs from them off the path) turns
    about a-b. The swivel before it turns the path between the nearest fixed joints around (a1
    above: the root, a targeted joint, a joint with several children or a member of a rigid group;
    b1 below: a targeted joint or a joint where the path to the targets branches) about a1-b1.
    ValueError for the root, a joint with no target below it, or one where the path branches."""
    if poles is None:
        return _NO_POLES
    if not isinstance(poles, Mapping) or not poles:
        raise ValueError("poles must be a mapping {joint: xyz} with at least one pole")
    parents, lengths = arrays.parents, arrays.lengths
    order, subtree_end, position = arrays.order, arrays.subtree_end, arrays.position
    n = parents.shape[0]
    children = [[] for _ in range(n)]
    for j in range(1, n):
        children[parents[j]].append(j)
    targeted = np.zeros(n, dtype=bool)
    targeted[target_idx] = True
    active = targeted.copy()
    for j in range(n - 1, 0, -1):
        if active[j]:
            active[parents[j]] = True
    in_group = groups[4] if groups[4].shape[0] == n else np.full(n, -1)  # (no groups: a one-value array)

    def below(j):
        return set(order[position[j]:subtree_end[j]].tolist())

    rows, points, members = [], [], []
    for key, value in poles.items():
        try:
            k = skeleton.index(key) if isinstance(key, str) else int(key)
        except (ValueError, TypeError):
            raise ValueError(f"poles: unknown joint {key!r}; joints are: {', '.join(skeleton.names)}") from None
        if not 0 <= k < n:
            raise ValueError(f"poles: unknown joint {key!r}; joints are: {', '.join(skeleton.names)}")
        name = skeleton.names[k]
        point = as_point(value, f"poles[{key!r}]", 3)
        top = k
        while top > 0 and lengths[top] == 0.0:
            top = parents[top]
        if top == 0:
            raise ValueError(f"poles[{name!r}]: the root (or a joint at its place) cannot bend towards a pole")
        a = parents[top]
        c = k
        while True:
            kids = [ch for ch in children[c] if active[ch]]
            if len(kids) != 1:
                why = "no target below it" if not kids else "the path to its targets branches there"
                raise ValueError(f"poles[{name!r}]: a pole joint needs one path down to a target; {name} has {why}")
            c = kids[0]
            if lengths[c] > 0.0:
                break
        b = c
        a1 = a
        while a1 > 0 and not targeted[a1] and len(children[a1]) == 1 and in_group[a1] < 0:
            a1 = parents[a1]
        b1 = b
        while not targeted[b1]:
            kids = [ch for ch in children[b1] if active[ch]]
            if len(kids) != 1:
                break
            b1 = kids[0]
        # the child of a1 on the path to k
        step = top
        while parents[step] != a1:
            step = parents[step]
        swivel = sorted(below(step) - below(b1))
        local = sorted(below(top) - below(b))
        start = sum(len(m) for m in members)
        members.append(swivel)
        members.append(local)
        rows.append([k, a1, b1, start, start + len(swivel), a, b, start + len(swivel),
                     start + len(swivel) + len(local)])
        points.append(point)
    flat = np.array([j for m in members for j in m], dtype=np.int64)
    return np.array(rows, dtype=np.int64), np.array(points, dtype=np.float64).reshape(-1, 3), flat


def self_pairs(skeleton, parents: np.ndarray, lengths: np.ndarray, rest: np.ndarray, radius: float) -> np.ndarray:
    """(n, n) bool: the bones (by child joint) kept ``2 radius`` apart: both of non-zero length,
    sharing no joint (joints joined by zero-length bones count as one), and at least ``2 radius``
    apart at rest (bones that touch at rest, such as neighbouring fingers, are not checked).
    Cached per skeleton and radius."""
    def build():
        from fabrik.kernels.tree_extras import pair_distances

        n = parents.shape[0]
        cls = np.arange(n)
        for j in range(1, n):
            if lengths[j] == 0.0:
                cls[j] = cls[parents[j]]
        ends = np.stack([np.where(parents >= 0, cls[np.maximum(parents, 0)], -1), cls], axis=1)
        share = (ends[:, None, 0] == ends[None, :, 0]) | (ends[:, None, 0] == ends[None, :, 1]) | \
                (ends[:, None, 1] == ends[None, :, 0]) | (ends[:, None, 1] == ends[None, :, 1])
        bone = (parents >= 0) & (lengths > 0.0)
        dist = np.empty((n, n))
        pair_distances(np.ascontiguousarray(rest), np.ascontiguousarray(parents), dist)
        pairs = bone[:, None] & bone[None, :] & ~share & (dist >= 2.0 * radius)
        np.fill_diagonal(pairs, False)
        return np.ascontiguousarray(pairs)

    return cached(skeleton, f"self_pairs_{radius!r}", build)


_NO_PAIRS = np.zeros((0, 0), dtype=np.bool_)


def skeleton_ext(skeleton, targets: Mapping, ext: dict, rigid_sub_bases):
    """(the targets kept (weight > 0), the kernel's ``ext`` tuple, weights (k,), obstacle table,
    margin) for a skeleton solve with ``ext``'s options."""
    from fabrik.model.rig import rig
    from fabrik.solvers.skeleton_fabrik import target_arrays

    arrays = rig(skeleton)
    weights = target_weights(skeleton, targets, ext.get("weights"))
    kept = {key: value for (key, value), w in zip(targets.items(), weights) if w > 0.0}
    idx, _, _ = target_arrays(skeleton, kept, arrays)
    rows, points, members = skeleton_poles(skeleton, arrays, ext.get("poles"), idx,
                                           arrays.groups(rigid_sub_bases))
    obs = obstacle_table(ext.get("obstacles"))
    size = float(arrays.lengths.sum()) or 1.0
    margin = MARGIN * size
    radius = 0.0
    pairs = _NO_PAIRS
    if ext.get("self_collision") is not None:
        radius = _radius(ext["self_collision"])
        pairs = self_pairs(skeleton, arrays.parents, arrays.lengths, arrays.rest, radius)
    tuple_ = (np.ascontiguousarray(weights[weights > 0.0]), rows, points, members, obs, margin, radius, pairs)
    return kept, tuple_, weights, obs, margin


def solve_skeleton(skeleton, targets, initial, root, tol, max_iter, chosen, opts, ext) -> Solution:
    """Skeleton FABRIK with ``ext``'s options (module docstring); ``chosen`` the routed method."""
    from fabrik.solvers.skeleton_fabrik import prepare

    check_kind(ext, "skeleton")
    check_method(chosen.name, ("fabrik", "fabrik-constrained"), "skeleton", ext)
    if "loops" in ext:
        from fabrik.loops import solve_loops

        return solve_loops(skeleton, targets, initial, root, tol, max_iter, chosen, opts, ext)
    arrays, idx, pos, names, initial, root_, _ = prepare(skeleton, targets, initial, root)
    kept, tuple_, weights, obs, margin = skeleton_ext(skeleton, targets, ext, opts.rigid_sub_bases)
    check_root_clear(obs, pos[list(idx).index(0)] if root is None and 0 in idx else root_, margin)
    sol = chosen.skeleton.solve(skeleton, kept, initial, root, tol, max_iter, opts, ext=tuple_)
    return finish_skeleton(skeleton, sol, names, pos, weights, obs, margin, tuple_)


def finish_skeleton(skeleton, sol: Solution, names, pos, weights, obs, margin, tuple_) -> Solution:
    """The answer of a skeleton solve with the options: every target's distance in
    ``effector_errors`` (those of weight 0 too), ``error`` the largest of the weighted ones, the
    status ``obstructed`` or ``blocked`` where obstacles stopped it, and the extras ``weights``,
    ``clearance`` (the smallest bone's from the obstacles) and ``self_clearance``."""
    from fabrik.kernels.obstacles import smallest_clearance

    p = sol.positions
    errors = dict(sol.effector_errors)
    for name, target, w in zip(names, pos, weights):
        if w == 0.0:
            errors[name] = float(np.linalg.norm(p[skeleton.index(name)] - target))
    extras = dict(sol.extras)
    status = sol.status
    parents = np.asarray(skeleton.parents, dtype=np.int64)
    if (weights != 1.0).any():
        extras["weights"] = {name: float(w) for name, w in zip(names, weights)}
    if obs.shape[0]:
        clearance = float(smallest_clearance(obs, p, parents))
        extras["clearance"] = clearance
        if status != "reached":
            from fabrik.kernels.obstacles import point_clearance

            size = margin / MARGIN
            if any(point_clearance(obs, *t) < 0.0 for t, w in zip(pos, weights) if w > 0.0):
                status = "obstructed"
            elif status == "stalled" and clearance < CONTACT * size + margin:
                status = "blocked"
    radius = tuple_[6]
    if radius > 0.0:
        extras["self_clearance"] = self_clearance(p, parents, tuple_[7], radius)
    ordered = {name: errors[name] for name in names}
    if "effector_error_array" in extras:
        extras["effector_error_array"] = np.array(list(ordered.values()))
    from fabrik.solvers.result import ConstrainedExtras

    if isinstance(sol.extras, ConstrainedExtras):
        stored = {key: sol.extras[key] for key in sol.extras._data}
        stored.update({k: v for k, v in extras.items() if k not in ConstrainedExtras._DERIVED})
        new_extras = ConstrainedExtras(stored, parents=np.asarray(skeleton.parents))
    else:
        new_extras = MappingProxyType(extras)
    return sol._replace(effector_errors=ordered, status=status, extras=new_extras)


def self_clearance(p: np.ndarray, parents: np.ndarray, pairs: np.ndarray, radius: float) -> float:
    """The smallest distance between two bones kept apart (``pairs``), less ``2 radius``: negative
    when two of them overlap (inf when none are checked)."""
    from fabrik.kernels.tree_extras import pair_distances

    if not pairs.any():
        return math.inf
    dist = np.empty((p.shape[0], p.shape[0]))
    pair_distances(np.ascontiguousarray(p, dtype=np.float64), np.ascontiguousarray(parents), dist)
    return float(dist[pairs].min() - 2.0 * radius)


# --- arms ---------------------------------------------------------------------------------------

def arm_pairs(arm, radius: float) -> np.ndarray:
    """(m, m) bool: the links (link i joins joint i to joint i + 1, the last the tip) kept
    ``2 radius`` apart: as ``self_pairs`` on the chain of the arm's joints and tip at its rest
    angles (links of zero length joined to their neighbours; links within ``2 radius`` at rest
    not checked)."""
    from fabrik.model.arm import forward
    from fabrik.solvers.arm import arm_shape_rest

    def build():
        positions, _ = forward(arm, arm_shape_rest(arm))
        m = arm.n_joints
        parents = np.arange(-1, m, dtype=np.int64)
        lengths = np.concatenate([[0.0], np.linalg.norm(np.diff(positions, axis=0), axis=1)])
        lengths[lengths <= 1e-12 * max(float(arm.reach), 1e-300)] = 0.0
        chain = self_pairs(_Holder(), parents, lengths, np.ascontiguousarray(positions), radius)
        return np.ascontiguousarray(chain[1:, 1:])

    return cached(arm, f"arm_pairs_{radius!r}", build)


class _Holder:
    """A throwaway object for ``self_pairs``' cache (the arm caches the result itself)."""


def solve_arm(arm, target, rotation, initial, tol, max_iter, chosen, opts, ext) -> Solution:
    """FABRIK on an arm with a pole (the S-R-S arm), obstacles or self-collision (module
    docstring); ``target`` (3,), ``rotation`` (3, 3) or None, ``initial`` (m,) or None."""
    from fabrik.kernels.arm_methods import arm_links_clear
    from fabrik.model.arm import forward
    from fabrik.solvers.arm import solve_revolute_arm, srs_shape

    check_kind(ext, "arm")
    check_method(chosen.name, ("fabrik", "fabrik-revolute"), "arm", ext)
    pole = ext.get("pole")
    if pole is None and ext.get("pole_joint") is not None:
        raise ValueError("pole_joint needs a pole: pole=xyz")
    obs = obstacle_table(ext.get("obstacles"))
    radius = 0.0 if ext.get("self_collision") is None else _radius(ext["self_collision"])
    if pole is not None:
        if obs.shape[0] or radius > 0.0:
            raise ValueError("on an arm a pole does not combine with obstacles or self_collision (the pole is "
                             "placed by the S-R-S arm's closed form, which does not see obstacles)")
        return _srs_with_pole(arm, target, rotation, initial, tol, max_iter, chosen, opts, pole, ext.get("pole_joint"))
    size = float(arm.reach) or 1.0
    margin = MARGIN * size
    positions, _ = forward(arm, np.zeros(arm.n_joints).clip(arm.lower, arm.upper))
    check_root_clear(obs, positions[0], margin, "the arm's base")
    pairs = arm_pairs(arm, radius) if radius > 0.0 else np.zeros((arm.n_joints, arm.n_joints), dtype=np.bool_)
    col = (obs, pairs, radius, margin)

    def usable(q):
        p, _ = forward(arm, q)
        return bool(arm_links_clear(np.ascontiguousarray(p), 0, col))

    sol = solve_revolute_arm(arm, target, rotation, initial, tol, max_iter, opts, chosen.name, col, usable)
    extras = dict(sol.extras)
    status = sol.status
    from fabrik.kernels.obstacles import point_clearance, smallest_clearance

    parents = np.arange(-1, arm.n_joints, dtype=np.int64)
    if obs.shape[0]:
        clearance = float(smallest_clearance(obs, np.ascontiguousarray(sol.positions), parents))
        extras["clearance"] = clearance
        if status != "reached":
            if point_clearance(obs, *target) < 0.0:
                status = "obstructed"
            elif status == "stalled" and clearance < CONTACT * size + margin:
                status = "blocked"
    if radius > 0.0:
        chain_pairs = np.zeros((arm.n_joints + 1, arm.n_joints + 1), dtype=bool)
        chain_pairs[1:, 1:] = pairs
        extras["self_clearance"] = self_clearance(sol.positions, parents, chain_pairs, radius)
    return sol._replace(status=status, extras=MappingProxyType(extras))


def _srs_with_pole(arm, target, rotation, initial, tol, max_iter, chosen, opts, pole, pole_joint) -> Solution:
    """The S-R-S arm's closed-form FABRIK (``fabrik.kernels.arm_ik.srs_solve``) with the elbow on
    the pole's side."""
    from fabrik.kernels.arm_ik import srs_solve
    from fabrik.kernels.records import ArmTask, Stop
    from fabrik.solvers.arm import arm_shape_rest, srs_shape

    shape = srs_shape(arm)
    if shape is None or chosen.name != "fabrik":
        raise ValueError("a pole on an arm needs method 'fabrik' on an S-R-S arm (a spherical shoulder, an elbow, a "
                         "spherical wrist: fabrik.models.dhm_arm), whose elbow it places")
    if pole_joint is not None and pole_joint != 3:
        raise ValueError(f"on the S-R-S arm the pole joint is the elbow, joint 3; got pole_joint={pole_joint!r}")
    point = np.ascontiguousarray(as_point(pole, "pole", 3), dtype=np.float64)
    oriented = rotation is not None
    q, positions, frames = np.empty(7), np.empty((8, 3)), np.empty((8, 3, 3))
    task = ArmTask(np.ascontiguousarray(target, dtype=np.float64), rotation if oriented else np.eye(3), oriented,
                   arm_shape_rest(arm) if initial is None else initial)
    it, err, oerr, code = srs_solve(shape.pack, task, Stop(tol, opts.orientation_tol, max_iter), q, positions, frames,
                                    point)
    extras = {"frames": frames, "pole_joint": 3}
    if oriented:
        extras["orientation_error"] = float(oerr)
    return Solution(positions, int(it), float(err), STATUSES[code], "fabrik", None, MappingProxyType(extras), q)
