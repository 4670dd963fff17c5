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
paper's benchmark chain (10 joints, 9 bones of 100 units, tol 1e-3; see ``TUNED`` and
docs/comparison.md for the search and its numbers), with lengths stored as multiples of the mean
bone length: transpose ``max_error_step`` 1 bone, ``max_angle_step`` pi/8; DLS and SVD-DLS
``damping`` 2 bones, ``max_error_step`` 1.5 bones, ``max_angle_step`` pi/4; SDLS
``max_error_step`` 0.2 bone, ``gamma_max`` pi/2. Options given explicitly override them.
"""

from __future__ import annotations

import math

from fabrik._validation import check_positive
from fabrik.kernels.jacobian import DLS, SDLS, SVD_DLS, TRANSPOSE, jacobian_chain
from fabrik.solvers.registry import register
from fabrik.solvers.result import STATUSES, Solution

DEFAULT_MAX_ITER = 10000
PAPER_DAMPING = 1.1
#: Buss & Kim's target clamp for unit bones, as a fraction of the mean bone length.
ERROR_CLAMP_FRACTION = 0.4

class PerBone(float):
    """A length default given as a multiple of the chain's mean bone length."""

    def __repr__(self) -> str:
        return f"{float(self):g} x mean bone length"


_MODES = {"jacobian-transpose": TRANSPOSE, "jacobian-dls": DLS, "jacobian-svd-dls": SVD_DLS, "sdls": SDLS}

#: Paper (Buss & Kim) defaults per method. ``max_error_step`` None: 0.4 x mean bone length;
#: ``math.inf``: no clamping.
PAPER = {
    "jacobian-transpose": {"max_error_step": None, "max_angle_step": math.pi / 6, "alpha": None},
    "jacobian-dls": {"damping": PAPER_DAMPING, "max_error_step": None, "max_angle_step": math.pi / 4},
    "jacobian-svd-dls": {"damping": PAPER_DAMPING, "max_error_step": None, "max_angle_step": math.pi / 4},
    "sdls": {"max_error_step": None, "max_angle_step": math.pi / 4},
}

#: Settings tuned for the paper's benchmark chain (9 bones of 100 units, tol 1e-3) by a grid search
#: (40 reachable + 40 unreachable targets drawn with seed 7, not the benchmark's seed; cap 3000
#: iterations): the setting with the fewest mean iterations (reachable + unreachable) among those
#: that solved every target of both sets (unreachable: excess error <= tol). Grids: damping
#: {50, 80, 110, 150, 200, 250, 300, 400}, max_error_step {20, 40, 70, 100, 150, 200, inf},
#: max_angle_step {pi/8, pi/6, pi/4, pi/2}. SVD-DLS computes the same step as DLS, so it takes
#: DLS's settings. Found for 100-unit bones (damping 200, max_error_step 150, ...), the lengths are
#: stored as multiples of the chain's mean bone length (``PerBone``) so they carry to other chains.
#: Numbers in docs/comparison.md.
TUNED = {
    "jacobian-transpose": {"max_error_step": PerBone(1.0), "max_angle_step": math.pi / 8, "alpha": None},
    "jacobian-dls": {"damping": PerBone(2.0), "max_error_step": PerBone(1.5), "max_angle_step": math.pi / 4},
    "jacobian-svd-dls": {"damping": PerBone(2.0), "max_error_step": PerBone(1.5), "max_angle_step": math.pi / 4},
    "sdls": {"max_error_step": PerBone(0.2), "max_angle_step": math.pi / 2},
}


def _settings(base: str, defaults: dict, options: dict, chain) -> tuple[float, float, float, float]:
    allowed = set(defaults)
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"method {base!r} got unknown options {unknown}; it takes {sorted(allowed)}")
    merged = {**defaults, **options}
    lengths = chain.bone_lengths
    mean = float(lengths.mean()) if lengths.size else 0.0
    mean = mean if mean > 0 else 1.0
    for key, value in merged.items():
        if isinstance(value, PerBone):
            merged[key] = float(value) * mean
    damping = check_positive(merged["damping"], "damping") if "damping" in merged else 0.0
    step = merged["max_error_step"]
    if step is None:
        step = ERROR_CLAMP_FRACTION * mean
    elif step != math.inf:
        step = check_positive(step, "max_error_step")
    angle = check_positive(merged["max_angle_step"], "max_angle_step")
    alpha = merged.get("alpha")
    alpha = 0.0 if alpha is None else check_positive(alpha, "alpha")
    return damping, float(step), angle, alpha


def _make(name: str, base: str, defaults: dict):
    mode = _MODES[base]

    def method(chain, target, initial, root, tol, max_iter, **options) -> Solution:
        damping, step, angle, alpha = _settings(name, defaults, options, chain)
        positions, iterations, error, code = jacobian_chain(
            initial, chain._kernel_lengths, target, root, tol,
            DEFAULT_MAX_ITER if max_iter is None else max_iter, mode, damping, step, angle, alpha)
        return Solution(positions, iterations, error, STATUSES[code], name)

    method.__name__ = "solve_" + name.replace("-", "_")
    method.__qualname__ = method.__name__
    opts = ", ".join(f"{k}={v!r}" for k, v in defaults.items())
    method.__doc__ = (f"The {name!r} chain method (see the module docstring for the model, stopping "
                      f"rules and options). Defaults: {opts}; max_iter default {DEFAULT_MAX_ITER}.")
    return register(name)(method)


for _base in _MODES:
    _make(_base, _base, PAPER[_base])
    _make(_base + "-tuned", _base, TUNED[_base])
