"""``fabrik.solve``: one entry point for every method and model (``fabrik.solvers.registry``)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from fabrik._lazy import FIRST_USE
from fabrik._validation import MAX_COORDINATE, as_point, as_points, check_max_iter, check_tol
from fabrik.kernels.vec import bounded
from fabrik.model.arm import Arm, check_angles
from fabrik.model.chain import Chain
from fabrik.model.pose import is_transform, split_transform, target_rotation
from fabrik.model.skeleton import Skeleton
from fabrik.solvers._embed import from3d, to3d_point, to3d_points
from fabrik.kernels._cache_guard import announce_compile
from fabrik.solvers import registry
from fabrik.solvers.result import _EMPTY, STATUSES, Solution

DEFAULT_TOL = 1e-3
_F64 = np.dtype(np.float64)


def solve(model, target=None, *, targets=None, method: str = "fabrik", initial=None, root=None,
          tol: float = DEFAULT_TOL, max_iter: int | None = None, **options) -> Solution:
    """Solve inverse kinematics for a chain or a skeleton.

    Args:
        model: a ``fabrik.Chain`` or ``fabrik.Skeleton``.
        target: for a chain, the end effector's goal, shape (d,) in the chain's units; or a pose:
            ``(xyz, rotation)`` or a (4, 4) transform, for an oriented target (needs joint limits
            support, see docs). For an arm, the tip's xyz or pose. A rotation is a scipy
            ``Rotation``, a (3, 3) matrix or ``fabrik.quat_xyzw(q)`` / ``fabrik.quat_wxyz(q)``
            (a raw 4-vector is refused: its order is not known; ``fabrik.model.pose``).
        targets: for a skeleton, ``{joint_name: xyz}`` goals (oriented targets are for chains);
            keys may also be joint indices.
        method: ``"fabrik"`` (default) or a comparison method, by name or as the ``Method`` object
            ``fabrik.method(name)`` gives; ``fabrik.methods()`` lists them.
        initial: (n, d) start pose, root first; default the model's rest pose. Never mutated.
        root: (d,) where the root must be; default ``initial[0]`` (a fixed root). Giving it moves
            the root (the paper's moving-root case).
        tol: absolute tolerance on the effector-to-target distance, in the model's units (>= 0).
            The loop also stops when it makes no progress (the effector moves less than ``tol``
            in an iteration and the error has stopped falling; docs/conventions.md, "Statuses
            and stopping rules", gives the full rule and what each ``status`` means).
        max_iter: iteration cap (>= 0); default depends on the method.
        **options: method-specific parameters (see each method's documentation). Skeleton
            FABRIK takes ``swing_limbs`` and ``rigid_sub_bases`` (tracking a body from frame to
            frame: ``fabrik.solvers.skeleton_fabrik.solve_fabrik_skeleton``); the constrained
            skeleton methods ``initial_frames``, ``root_rotation`` (and ``fabrik-constrained``
            ``swing_limbs``); the Jacobian methods their settings (``damping``, in model units,
            default 1.1 as in the paper: heavy for a model in metres, ``max_error_step``, ...).
            An option the method does not take is a ValueError naming the ones it does.

    Returns:
        A ``Solution``; its ``positions`` never contain NaN.

    Raises:
        ValueError: bad shapes, non-finite numbers, negative ``tol`` or ``max_iter``, unknown
            method or joint names.
    """
    if (type(model) is Chain and type(target) is _NDARRAY and root is None and max_iter is None
            and targets is None and not options and type(tol) is float and 0.0 <= tol < _INF and model._dim == 3
            and not model.constraints and (initial is None or type(initial) is _NDARRAY) and type(method) is str):
        # The hot path of tracking loops: a method whose route on an unconstrained chain is plain
        # chain FABRIK, a 3D chain, arrays given. The compiled entry checks the target and the
        # start pose itself and answers a negative code for any it does not take; the checks below
        # then name the problem (or solve on the checked path).
        fast = _FAST_ROUTES.get(method)
        if fast is None:
            fast = _fast_route(method)
        if fast is not _NO_FAST:
            kernel, cap, turn = fast
            positions = _empty(model._kernel_rest.shape)
            try:
                iterations, error, code = kernel(positions, model._kernel_rest if initial is None else initial,
                                                 model._kernel_lengths, target, _NO_ROOT, tol, cap, turn)
            except TypeError:  # another dtype, a read-only or non-contiguous array: checked below
                code = -1
            if code >= 0:
                return _new_tuple(Solution, (positions, iterations, error, STATUSES[code], "fabrik", None, _EMPTY,
                                             None))
    if type(method) is not str:
        method = registry.name_of(method)
    engine = None
    if options and not _ENGINE_KEYS.isdisjoint(options):
        from fabrik.solvers import extended

        engine = extended.take(options)  # poles, weights, obstacles, self-collision, loops
    if type(tol) is not float or not 0.0 <= tol < math.inf:
        tol = check_tol(tol)
    if max_iter is not None:
        max_iter = check_max_iter(max_iter)
    if type(model) is Chain or isinstance(model, Chain):
        if targets is not None:
            raise ValueError("a chain takes one `target`; `targets` is for skeletons")
        if target is None:
            raise ValueError("target is required for a chain")
        dim = model._dim
        rotation = None
        if type(target) is tuple and len(target) == 2 and np.ndim(target[0]) == 1:
            rotation = _target_rotation(target[1], dim)
            target = target[0]
        elif is_transform(target):
            target, rotation = split_transform(target, dim)
        target = as_point(target, "target", dim)
        if initial is None or (initial is model.rest_positions and dim == 3):
            initial = model._kernel_rest
            default_root = model._kernel_root
        elif (type(initial) is np.ndarray and initial.dtype.char == "d" and initial.shape == model._kernel_rest.shape
              and initial.flags.c_contiguous and initial.flags.writeable and bounded(initial, MAX_COORDINATE)):
            default_root = initial[0]  # a warm start from a previous answer: checked without a copy
        else:
            initial = as_points(initial, "initial", dim=dim)
            if initial.shape[0] != model.n_joints:
                raise ValueError(f"initial must have {model.n_joints} joints to match the chain, got {initial.shape[0]}")
            initial = to3d_points(initial)
            default_root = initial[0]
        root = default_root if root is None else to3d_point(as_point(root, "root", dim))
        key = (method, bool(model.constraints), rotation is not None)
        chosen = _CHAIN_ROUTES.get(key)
        if chosen is None:
            chosen = _CHAIN_ROUTES[key] = registry.route(method, "chain", limited=key[1], oriented=key[2])
            _first_use(chosen.chain)
        solver = chosen.chain
        opts = chosen.options("chain", options) if options else solver.defaults
        cap = solver.max_iter if max_iter is None else max_iter
        if engine is not None:
            from fabrik.solvers import extended

            sol = extended.solve_chain(model, to3d_point(target), rotation, initial, root, tol,
                                       min(cap, solver.max_iter_ceiling), chosen, opts, engine)
            return sol if dim == 3 else sol._replace(positions=from3d(sol.positions, 2))
        if cap > registry.SLICE_ITERATIONS:
            sol = _chain_in_slices(solver, model, to3d_point(target), rotation, initial, root, tol, cap, opts)
            return sol if dim == 3 else sol._replace(positions=from3d(sol.positions, 2))
        if dim == 3:
            return solver.solve(model, target, rotation, initial, root, tol, cap, opts)
        sol = solver.solve(model, to3d_point(target), rotation, initial, root, tol, cap, opts)
        return sol._replace(positions=from3d(sol.positions, 2))
    if isinstance(model, Skeleton):
        if target is not None:
            raise ValueError("a skeleton takes `targets={joint_name: xyz}`, not `target`")
        if not targets:
            raise ValueError("targets is required for a skeleton: {joint_name: xyz, ...}")
        chosen = registry.route(method, "skeleton", limited=bool(model.constraints))
        solver = chosen.skeleton
        if solver not in _CHECKED:
            _first_use(solver)
        opts = chosen.options("skeleton", options)
        cap = solver.max_iter if max_iter is None else max_iter
        if engine is not None:
            from fabrik.solvers import extended

            return extended.solve_skeleton(model, targets, initial, root, tol, min(cap, solver.max_iter_ceiling),
                                           chosen, opts, engine)
        if cap > registry.SLICE_ITERATIONS:
            return _skeleton_in_slices(solver, model, targets, initial, root, tol, cap, opts)
        return solver.solve(model, targets, initial, root, tol, cap, opts)
    if isinstance(model, Arm):
        return _solve_arm(model, target, targets, method, initial, root, tol, max_iter, options, engine)
    raise ValueError(f"model must be a fabrik.Chain, fabrik.Skeleton or fabrik.Arm, got {type(model).__name__}")


def _solve_arm(arm, target, targets, method, initial, root, tol, max_iter, options, engine=None) -> Solution:
    """``solve`` for an ``Arm``: a tip target (xyz or (xyz, rotation)), joint angles in and out."""
    if targets is not None:
        raise ValueError("an arm takes one `target` (the tip's xyz, or (xyz, rotation)); `targets` is for skeletons")
    if target is None:
        raise ValueError("target is required for an arm: the tip's xyz, or (xyz, rotation)")
    if root is not None:
        raise ValueError("an arm's base is fixed; root is not used (express the target in the base frame)")
    rotation = None
    if (type(target) is tuple and len(target) == 2
            and (type(target[0]) is np.ndarray and target[0].ndim == 1 or np.ndim(target[0]) == 1)):
        rotation = _target_rotation(target[1], 3)
        target = target[0]
    elif type(target) is np.ndarray and target.shape == (4, 4) or is_transform(target):
        target, rotation = split_transform(target, 3)
    target = as_point(target, "target", 3)
    if initial is not None:
        initial = check_angles(initial, arm.n_joints)
        if initial.ndim != 1:
            raise ValueError(f"initial must be one pose of joint angles, shape ({arm.n_joints},), got {initial.shape}")
        if not initial.flags.writeable:
            initial = initial.copy()
    chosen = _ARM_ROUTES.get(method)
    if chosen is None:
        chosen = _ARM_ROUTES[method] = registry.route(method, "arm")
    solver = chosen.arm
    if solver not in _CHECKED:
        _first_use(solver)
    opts = chosen.options("arm", options) if options else solver.defaults
    cap = solver.max_iter if max_iter is None else min(max_iter, solver.max_iter_ceiling)
    if engine is not None:
        from fabrik.solvers import extended

        return extended.solve_arm(arm, target, rotation, initial, tol, cap, chosen, opts, engine)
    return solver.solve(arm, target, rotation, initial, tol, cap, opts)


# (The slicing closures live in these helpers rather than in ``solve``: a variable a nested function
# reads becomes a cell, made on every call of the function that holds it, slices or not.)
def _chain_in_slices(solver, model, target, rotation, initial, root, tol, cap, opts) -> Solution:
    return _in_slices(lambda start, rest, o: solver.solve(model, target, rotation, start, root, tol, rest, o), solver,
                      initial, cap, opts)


def _skeleton_in_slices(solver, model, targets, initial, root, tol, cap, opts) -> Solution:
    return _in_slices(lambda start, rest, o: solver.solve(model, targets, start, root, tol, rest, o), solver, initial,
                      cap, opts)


def _in_slices(run, solver, initial, cap: int, opts) -> Solution:
    """A solve of up to ``min(cap, solver.max_iter_ceiling)`` iterations as kernel calls of at
    most ``registry.SLICE_ITERATIONS`` each: ``run(start pose, iterations, options)`` solves one
    slice; the next starts from its positions (and, where the method takes them, its joint frames)
    while the last ended ``max_iterations``. The kernels cannot see Ctrl-C; Python raises a pending
    KeyboardInterrupt as soon as a slice returns, so a long solve stops within one slice. The
    answer counts every slice's iterations."""
    left = min(cap, solver.max_iter_ceiling)
    done = 0
    while True:
        sol = run(initial, min(left, registry.SLICE_ITERATIONS), opts)
        done += sol.iterations
        left -= sol.iterations
        if sol.status != "max_iterations" or left <= 0 or sol.iterations == 0:
            return sol._replace(iterations=done)
        initial = sol.positions
        if getattr(opts, "turn_start", False):  # the turn is the solve's first step, not each slice's
            opts = dataclasses.replace(opts, turn_start=False)
        if "frames" in sol.extras and hasattr(opts, "initial_frames"):
            opts = dataclasses.replace(opts, initial_frames=np.array(sol.extras["frames"]))


_NDARRAY = np.ndarray
_INF = math.inf
#: ``fabrik.solvers.extended.KEYS``: the engine options (poles, weights, obstacles, self-collision,
#: loops), kept here so that a solve without them imports nothing more.
_ENGINE_KEYS = frozenset(("pole", "pole_joint", "poles", "weights", "obstacles", "self_collision", "loops"))
_empty = np.empty
_new_tuple = tuple.__new__
_NO_FAST = object()
_NO_ROOT = np.empty(0)  # the entry's "root stays at initial[0]" (fabrik_chain_entry.NO_ROOT)
#: method name -> (the compiled entry ``fabrik.kernels.fabrik_chain_entry.fabrik_chain_checked``,
#: the method's default cap, its default ``turn_start``) when the method's route on an
#: unconstrained chain is plain chain FABRIK, else ``_NO_FAST``; filled by ``_fast_route``.
_FAST_ROUTES: dict = {}


def _fast_route(method: str):
    """Route ``method`` on an unconstrained chain once (as ``solve`` does, first-compile notice
    included) and, when its solver is plain chain FABRIK, prepare the compiled entry for the hot
    path. An unknown name is ``_NO_FAST`` here (the routed path raises its error). Under
    ``fabrik._lazy.FIRST_USE``: threads making their first solves at once prepare it once."""
    with FIRST_USE:
        fast = _FAST_ROUTES.get(method)
        return _fast_route_locked(method) if fast is None else fast


def _fast_route_locked(method: str):
    key = (method, False, False)
    chosen = _CHAIN_ROUTES.get(key)
    if chosen is None:
        try:
            chosen = registry.route(method, "chain")
        except ValueError:
            return _NO_FAST
        _CHAIN_ROUTES[key] = chosen
        _first_use(chosen.chain)
    fast = _NO_FAST if chosen.chain.fast is None else chosen.chain.fast(chosen.chain)
    _FAST_ROUTES[method] = fast
    return fast


#: The solvers already checked for a first compile in this process.
_CHECKED: set = set()
#: (method name, limited, oriented) -> the chain method ``registry.route`` chose: the hot path of
#: tracking loops looks it up instead of routing again.
_CHAIN_ROUTES: dict = {}
#: method name -> the arm method ``registry.route`` chose (the same, for arms)
_ARM_ROUTES: dict = {}


def _first_use(solver) -> None:
    _CHECKED.add(solver)
    announce_compile(*solver.kernels)


def _target_rotation(rotation, dim: int) -> np.ndarray:
    """An oriented target's rotation as a (3, 3) matrix (``fabrik.model.pose.target_rotation``)."""
    return target_rotation(rotation, dim)


class MethodNames(list):
    """The list ``fabrik.methods(kind)`` returns: method names (a plain list of str in every use)
    that also carries the model ``kind`` they solve, and says so when printed."""

    def __init__(self, kind: str, names):
        super().__init__(names)
        self.kind = kind

    def __repr__(self) -> str:
        others = ", ".join(f"fabrik.methods({k!r})" for k in registry.KINDS if k != self.kind)
        return f"{self.kind} methods: {list.__repr__(self)} (for the other kinds: {others}; every kind: fabrik.methods('all'))"


def methods(kind: str = "chain"):
    """The methods that solve one kind of model, or every method with the kinds it solves.

    ``kind``: ``"chain"`` (the default), ``"skeleton"`` or ``"arm"`` gives the names of the methods
    solving that kind, sorted (a list, which prints as e.g. ``chain methods: [...]``); ``"all"``
    gives ``{name: (kinds it solves, ...)}`` for every method. ``fabrik.method(name)`` says what
    each one takes."""
    if kind == "all":
        return {name: registry.get(name).kinds for name in sorted(registry.loaded())}
    if kind not in registry.KINDS:
        raise ValueError(f"kind must be one of {', '.join(registry.KINDS)} or all, got {kind!r}")
    return MethodNames(kind, registry.names(kind))


def method(name: str) -> registry.Method:
    """The ``Method`` called ``name``: the model kinds it solves (``kinds``), whether it applies joint
    limits (``limits``) and takes oriented chain targets (``oriented``), its option defaults per
    kind (``chain.defaults``, ``skeleton.defaults``) and iteration caps (``.max_iter``)."""
    return registry.get(name)


__all__ = ["solve", "methods", "method", "Solution", "STATUSES", "DEFAULT_TOL"]
