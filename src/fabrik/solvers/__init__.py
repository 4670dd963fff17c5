"""Solvers: FABRIK and the comparison methods of section 5, behind one ``solve`` entry point."""

from __future__ import annotations

import importlib
import math

import numpy as np

from fabrik._validation import as_point, as_points, check_max_iter, check_tol
from fabrik.model.chain import Chain
from fabrik.solvers._embed import from3d, to3d_point, to3d_points
from fabrik.solvers.registry import CHAIN_METHODS, SKELETON_METHODS, lookup
from fabrik.solvers.result import STATUSES, Solution

# Method modules register themselves on import. A module that is not there yet is skipped, so
# the table lists exactly what is implemented.
_METHOD_MODULES = (
    "fabrik.solvers.fabrik",
    "fabrik.solvers.ccd",
    "fabrik.solvers.jacobian",
    "fabrik.solvers.ftl",
    "fabrik.solvers.triangulation",
    "fabrik.solvers.fabrik_constrained",
    "fabrik.solvers.ccd_constrained",
    "fabrik.solvers.skeleton_fabrik",
    "fabrik.solvers.skeleton_fabrik_constrained",
    "fabrik.solvers.skeleton_methods",
    "fabrik.solvers.jacobian_constrained",
    "fabrik.solvers.skeleton_methods_constrained",
)
for _name in _METHOD_MODULES:
    try:
        importlib.import_module(_name)
    except ModuleNotFoundError as exc:
        if exc.name != _name:
            raise

DEFAULT_TOL = 1e-3


def solve(model, target=None, *, targets=None, method: str = "fabrik", initial=None, root=None,
          tol: float = DEFAULT_TOL, max_iter: int | None = None, **options) -> Solution:
    """Solve inverse kinematics for a chain or a skeleton.

    Args:
        model: a ``fabrik.Chain`` or ``fabrik.Skeleton``.
        target: for a chain, the end effector's goal, shape (d,) in the chain's units; or a pair
            ``(xyz, rotation)`` for an oriented target (needs joint limits support, see docs).
        targets: for a skeleton, ``{joint_name: xyz}`` goals (oriented targets are for chains);
            keys may also be joint indices.
        method: ``"fabrik"`` (default) or a comparison method; ``fabrik.methods()`` lists them.
        initial: (n, d) start pose, root first; default the model's rest pose. Never mutated.
        root: (d,) where the root must be; default ``initial[0]`` (a fixed root). Giving it moves
            the root (the paper's moving-root case).
        tol: absolute tolerance on the effector-to-target distance, in the model's units (>= 0).
            The loop also stops when it makes no progress (the effector moves less than ``tol``
            in an iteration and the error has stopped falling; docs/conventions.md, "Solves",
            gives the full rule and what each ``status`` means).
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
    if not isinstance(method, str):
        raise ValueError(f"method must be a method name (a str; fabrik.methods() lists them), got {method!r}")
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
        if type(target) is tuple and len(target) == 2 and np.ndim(target[0]) == 1:
            if target[1] is None:
                raise ValueError("an oriented target (xyz, rotation) needs a rotation, got None; pass the point alone "
                                 "for a position target")
            options["target_rotation"] = target[1]
            target = target[0]
        target = as_point(target, "target", dim)
        if initial is None:
            initial = model._kernel_rest
            default_root = model._kernel_root
        else:
            initial = as_points(initial, "initial", dim=dim)
            if initial.shape[0] != model.n_joints:
                raise ValueError(f"initial must have {model.n_joints} joints to match the chain, got {initial.shape[0]}")
            initial = to3d_points(initial)
            default_root = initial[0]
        root = default_root if root is None else to3d_point(as_point(root, "root", dim))
        if model.constraints or "target_rotation" in options:
            method = _constrained_variant(method, "chain")
        fn = CHAIN_METHODS.get(method) or lookup(method, "chain")
        if dim == 3:
            return fn(model, target, initial, root, tol, max_iter, **options)
        sol = fn(model, to3d_point(target), initial, root, tol, max_iter, **options)
        return sol._replace(positions=from3d(sol.positions, 2))
    from fabrik.model.skeleton import Skeleton

    if isinstance(model, Skeleton):
        if target is not None:
            raise ValueError("a skeleton takes `targets={joint_name: xyz}`, not `target`")
        if not targets:
            raise ValueError("targets is required for a skeleton: {joint_name: xyz, ...}")
        if model.constraints:
            method = _constrained_variant(method, "skeleton")
        return lookup(method, "skeleton")(model, targets, initial, root, tol, max_iter, **options)
    raise ValueError(f"model must be a fabrik.Chain or fabrik.Skeleton, got {type(model).__name__}")


def _constrained_variant(method: str, kind: str) -> str:
    """Models with joint limits (or oriented targets) are solved by ``<method>-constrained``."""
    table = CHAIN_METHODS if kind == "chain" else SKELETON_METHODS
    if method.endswith("-constrained") and method in table:
        return method
    name = f"{method}-constrained"
    if name in table:
        return name
    have = ", ".join(m for m in sorted(table) if m.endswith("-constrained"))
    raise ValueError(f"method {method!r} does not support joint limits or oriented targets on a {kind}; "
                     f"methods that do: {have}")


def methods(kind: str = "chain") -> list[str]:
    """Names of the available methods for ``"chain"`` or ``"skeleton"`` models."""
    if kind not in ("chain", "skeleton"):
        raise ValueError(f"kind must be 'chain' or 'skeleton', got {kind!r}")
    return sorted(CHAIN_METHODS if kind == "chain" else SKELETON_METHODS)


__all__ = ["solve", "methods", "Solution", "STATUSES", "DEFAULT_TOL"]
