"""Jacobian-based comparison methods of section 5 of the FABRIK paper (after Buss & Kim 2005).

Methods (``fabrik.solve(chain, target, method=NAME, **options)``):

- ``"jacobian-transpose"``: ``dtheta = alpha J^T e``.
- ``"jacobian-dls"``: damped least squares, ``dtheta = J^T (J J^T + damping^2 I)^-1 e``.
- ``"jacobian-svd-dls"``: the same DLS step computed through the SVD of ``J``:
  ``dtheta = sum_i s_i / (s_i^2 + damping^2) (u_i . e) v_i``.
- ``"sdls"``: selectively damped least squares (Buss & Kim 2005): each singular direction's
  response is clamped to an angle that shrinks with how far a unit of that response moves the
  effector, then the whole step is clamped to ``max_angle_step`` (their ``gamma_max``).

Every joint but the effector is a 3-DoF ball joint (rotations about the world x, y, z axes through
the joint; Jacobian column ``w x (p_effector - p_joint)``). A step is applied as rigid rotations of
the sub-chains (Rodrigues), so bone lengths stay exact; 2D chains keep only the z rotations and
stay planar. Stopping rules are FABRIK's (``reached`` / ``unreachable`` or ``stalled`` on no
progress / ``max_iterations``); default cap 10000 iterations. A chain stuck on the line to its
target is folded, as in CCD (``fabrik.kernels.singularity``).

Options (all keyword, passed through ``solve``; anything else raises ValueError):

- ``damping`` (DLS, SVD-DLS; model units, > 0): lambda. Default 1.1, the value the paper used.
  Note lambda has the units of the Jacobian entries (lengths), so 1.1 is light damping for the
  paper's 100-unit bones.
- ``max_error_step`` (all; model units, > 0, ``math.inf`` for none): the error vector ``e`` fed to
  each step is clamped to this length (Buss & Kim's target clamping). Default (None): 0.4 x the mean bone
  length, Buss & Kim's 0.4 for their unit-scale bones.
- ``max_angle_step`` (all; radians, > 0): no joint angle changes by more than this in a step.
  Defaults (Buss & Kim): transpose pi/6, DLS and SVD-DLS pi/4, SDLS ``gamma_max`` = pi/4.
- ``alpha`` (transpose only; > 0 or None): fixed gain; None (default) is the Buss-Kim adaptive
  ``alpha = <e, J J^T e> / <J J^T e, J J^T e>``.

Tuned variants ``"<name>-tuned"`` are the same methods with defaults found by a grid search on the
paper's benchmark chain (10 joints, 9 bones of 100 units, tol 1e-3; see ``TUNED``, docs/methods.md
and, for their numbers, docs/results.md), with lengths stored as multiples of the mean
bone length: transpose ``max_error_step`` 1 bone, ``max_angle_step`` pi/8; DLS and SVD-DLS
``damping`` 2 bones, ``max_error_step`` 1.5 bones, ``max_angle_step`` pi/4; SDLS
``max_error_step`` 0.2 bone, ``gamma_max`` pi/2. Options given explicitly override them.

``"<name>-constrained"`` (this module too, for every Jacobian chain method and its ``-tuned``
variant; ``method="jacobian-dls"`` routes a chain with limits there): each iteration is the
unconstrained method's step (same model, options and defaults), after which every joint is
clamped into its limits, root to effector (``fabrik.kernels.jacobian``): "clamping after each
step", the usual way to give a Jacobian method joint limits, so every pose satisfies every limit
with exact bone lengths. Limit conventions and Solution extras are those of
``fabrik.solvers.chain_limits``; oriented targets are refused (ValueError): use ``"fabrik"``
or ``"ccd"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabrik._validation import check_positive
from fabrik.kernels.jacobian import DLS, SDLS, SVD_DLS, TRANSPOSE
from fabrik.kernels.records import ChainTask, RotationMethod, Stop
from fabrik.kernels.rotation_chain import jacobian_chain, jacobian_constrained
from fabrik.solvers.chain_limits import build_solution, kernel_limits
from fabrik.solvers.registry import JACOBIAN_MAX_ITER, Solver, add
from fabrik.solvers.result import STATUSES, Solution


PAPER_DAMPING = 1.1
#: Buss & Kim's target clamp for unit bones, as a fraction of the mean bone length.
ERROR_CLAMP_FRACTION = 0.4


class PerBone(float):
    """A length default given as a multiple of the model's mean (non-zero) bone length."""

    def __repr__(self) -> str:
        return f"{float(self):g} x mean bone length"


def _length(value, name: str, none_ok: bool = True):
    """A length option as given: None (where allowed), ``math.inf`` (no clamp), a ``PerBone``
    or a finite number > 0."""
    if (value is None and none_ok) or value == math.inf or isinstance(value, PerBone):
        return value
    return check_positive(value, name)


@dataclass(frozen=True)
class TransposeOptions:
    """Options of the Jacobian transpose: ``max_error_step`` (model units, or ``math.inf``; None:
    ``ERROR_CLAMP_FRACTION`` x the mean bone length), ``max_angle_step`` (radians), ``alpha``
    (fixed gain > 0, or None for Buss & Kim's adaptive gain)."""

    max_error_step: float | None = None
    max_angle_step: float = math.pi / 6
    alpha: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "max_error_step", _length(self.max_error_step, "max_error_step"))
        object.__setattr__(self, "max_angle_step", check_positive(self.max_angle_step, "max_angle_step"))
        if self.alpha is not None:
            object.__setattr__(self, "alpha", check_positive(self.alpha, "alpha"))


@dataclass(frozen=True)
class DampedOptions:
    """Options of damped least squares (DLS, SVD-DLS): ``damping`` (lambda, model units > 0),
    ``max_error_step`` and ``max_angle_step`` as for ``TransposeOptions``."""

    damping: float = PAPER_DAMPING
    max_error_step: float | None = None
    max_angle_step: float = math.pi / 4

    def __post_init__(self):
        object.__setattr__(self, "damping", _length(self.damping, "damping", none_ok=False))
        object.__setattr__(self, "max_error_step", _length(self.max_error_step, "max_error_step"))
        object.__setattr__(self, "max_angle_step", check_positive(self.max_angle_step, "max_angle_step"))


@dataclass(frozen=True)
class SDLSOptions:
    """Options of selectively damped least squares: ``max_error_step`` as for
    ``TransposeOptions``, ``max_angle_step`` Buss & Kim's gamma_max (radians)."""

    max_error_step: float | None = None
    max_angle_step: float = math.pi / 4

    def __post_init__(self):
        object.__setattr__(self, "max_error_step", _length(self.max_error_step, "max_error_step"))
        object.__setattr__(self, "max_angle_step", check_positive(self.max_angle_step, "max_angle_step"))


#: Kernel mode and paper (Buss & Kim) defaults per method.
MODES = {"jacobian-transpose": TRANSPOSE, "jacobian-dls": DLS, "jacobian-svd-dls": SVD_DLS, "sdls": SDLS}
PAPER = {"jacobian-transpose": TransposeOptions(), "jacobian-dls": DampedOptions(),
         "jacobian-svd-dls": DampedOptions(), "sdls": SDLSOptions()}

#: Settings tuned for the paper's benchmark chain (9 bones of 100 units, tol 1e-3) by a grid search
#: (40 reachable + 40 unreachable targets drawn with seed 7, not the benchmark's seed; cap 3000
#: iterations): the setting with the fewest mean iterations (reachable + unreachable) among those
#: that solved every target of both sets (unreachable: excess error <= tol). Grids: damping
#: {50, 80, 110, 150, 200, 250, 300, 400}, max_error_step {20, 40, 70, 100, 150, 200, inf},
#: max_angle_step {pi/8, pi/6, pi/4, pi/2}. SVD-DLS computes the same step as DLS, so it takes
#: DLS's settings. Found for 100-unit bones (damping 200, max_error_step 150, ...), the lengths are
#: stored as multiples of the chain's mean bone length (``PerBone``) so they carry to other chains.
TUNED = {
    "jacobian-transpose": TransposeOptions(max_error_step=PerBone(1.0), max_angle_step=math.pi / 8),
    "jacobian-dls": DampedOptions(damping=PerBone(2.0), max_error_step=PerBone(1.5)),
    "jacobian-svd-dls": DampedOptions(damping=PerBone(2.0), max_error_step=PerBone(1.5)),
    "sdls": SDLSOptions(max_error_step=PerBone(0.2), max_angle_step=math.pi / 2),
}


def settings(options, mean_bone: float) -> tuple[float, float, float, float]:
    """The kernel's (damping, max_error_step, max_angle_step, alpha) (``RotationMethod``'s fields
    after its mode) from a Jacobian options record, ``PerBone`` lengths and the default error
    clamp scaled by ``mean_bone`` (the mean non-zero bone length; 1 when there is none); alpha 0
    means adaptive."""
    mean = mean_bone if mean_bone > 0 else 1.0

    def length(value):
        return float(value) * mean if isinstance(value, PerBone) else value

    damping = float(length(getattr(options, "damping", 0.0)))
    step = length(options.max_error_step)
    step = ERROR_CLAMP_FRACTION * mean if step is None else float(step)
    alpha = getattr(options, "alpha", None)
    return damping, step, float(options.max_angle_step), 0.0 if alpha is None else float(alpha)


def _rotation_method(mode: int, options, chain) -> RotationMethod:
    """The kernels' ``RotationMethod`` for a chain: ``mode`` and ``settings`` at the chain's mean
    bone length."""
    lengths = chain.bone_lengths
    return RotationMethod(mode, *settings(options, float(lengths.mean()) if lengths.size else 0.0))


def mean_bone_length(lengths) -> float:
    """The mean of the non-zero ``lengths`` (0 when there is none)."""
    bones = lengths[lengths > 0]
    return float(bones.mean()) if bones.size else 0.0


def _make(name: str, mode: int):
    def solve_jacobian_chain(chain, target, rotation, initial, root, tol, max_iter, options) -> Solution:
        method = _rotation_method(mode, options, chain)
        positions, iterations, error, code = jacobian_chain(ChainTask(initial, target, root), chain._kernel_lengths,
                                                            Stop(tol, 0.0, max_iter), method)
        return Solution(positions, iterations, error, STATUSES[code], name)

    solve_jacobian_chain.__name__ = "solve_" + name.replace("-", "_")
    solve_jacobian_chain.__qualname__ = solve_jacobian_chain.__name__
    solve_jacobian_chain.__doc__ = f"The {name!r} chain method (module docstring)."
    return solve_jacobian_chain


for _base, _mode in MODES.items():
    add(_base, "chain", Solver(_make(_base, _mode), PAPER[_base], JACOBIAN_MAX_ITER, (jacobian_chain,)), limited=_base + "-constrained",
        summary="Jacobian method (Buss & Kim 2005), paper defaults")
    add(_base + "-tuned", "chain", Solver(_make(_base + "-tuned", _mode), TUNED[_base], JACOBIAN_MAX_ITER, (jacobian_chain,)),
        limited=_base + "-tuned-constrained", tuned_from=_base, summary="the same, defaults tuned on the Table 1 chain")


def _make_limited(name: str, mode: int):
    def solve_jacobian_constrained(chain, target, rotation, initial, root, tol, max_iter, options):
        method = _rotation_method(mode, options, chain)
        limits = kernel_limits(chain)
        result = jacobian_constrained(ChainTask(initial, target, root), chain._kernel_lengths, limits,
                                      Stop(tol, 0.0, max_iter), method)
        return build_solution(name, chain, result, limits.root_frame, False)

    solve_jacobian_constrained.__name__ = "solve_" + name.replace("-", "_")
    solve_jacobian_constrained.__qualname__ = solve_jacobian_constrained.__name__
    solve_jacobian_constrained.__doc__ = f"The {name!r} chain method: the step, then the clamp (module docstring)."
    return solve_jacobian_constrained


for _base, _mode in MODES.items():
    for _name, _defaults in ((_base, PAPER[_base]), (_base + "-tuned", TUNED[_base])):
        add(_name + "-constrained", "chain", Solver(_make_limited(_name + "-constrained", _mode), _defaults, JACOBIAN_MAX_ITER,
                                                             (jacobian_constrained,)),
            limits=True, frames=True, summary="the Jacobian step, then every joint clamped into its limits")

__all__ = ["TransposeOptions", "DampedOptions", "SDLSOptions", "PerBone", "PAPER", "TUNED", "MODES", "settings", "mean_bone_length", "PAPER_DAMPING", "ERROR_CLAMP_FRACTION"]
