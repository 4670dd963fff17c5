"""The methods behind ``fabrik.solve``: each one a ``Method`` object, found by name and routed by
what it can do, never by the spelling of its name.

A ``Method`` carries, per model kind it solves (``"chain"``, ``"skeleton"``, ``"arm"``), a ``Solver``: the
function, its options (a frozen dataclass instance holding the defaults) and its default
iteration cap. It also says whether it applies joint limits (``limits``), takes oriented chain
targets (``oriented``), which method takes over for it on a model with limits or an oriented
target (``limited``), whether its solutions carry joint frames (``frames``) and, for a variant
with tuned defaults, the method it tunes (``tuned_from``). Optional slots
hold faster paths a method may offer: ``sequence`` (a whole take in one call) and ``frame``
(one frame of a take on checked arrays), and a chain ``Solver``'s ``fast``: the compiled entry
``fabrik.solve`` calls directly for a plain 3D chain and NumPy arrays (its hot path), skipping
the checks that entry makes itself. ``fabrik.solve``, ``solve_batch`` and ``solve_sequence`` take a
registered ``Method`` (``fabrik.method(name)``) wherever they take its name (``name_of``).

Solver functions receive checked, C-contiguous float64 arrays, 3D (2D chains are embedded in
z = 0 by ``solve``, which cuts the result back), and the parsed options; they never write to
their inputs:

* chain: ``solve(chain, target (3,), rotation (3, 3) or None, initial (n, 3), root (3,), tol,
  max_iter, options) -> Solution``;
* skeleton: ``solve(skeleton, targets {joint: (3,)}, initial (n, 3) or None, root (3,) or None,
  tol, max_iter, options) -> Solution`` (the skeleton solvers check their own inputs);
* arm: ``solve(arm, target (3,), rotation (3, 3) or None, initial (m,) joint angles or None, tol,
  max_iter, options) -> Solution`` (with ``joint_angles``).

Each method module registers itself on import with ``add``; the registry imports them all the
first time it is asked for a method (``loaded``).
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, replace
from typing import Any, Callable

from fabrik._lazy import FIRST_USE

KINDS = ("chain", "skeleton", "arm")

#: The library's own method, the default everywhere.
DEFAULT_METHOD = "fabrik"

#: The iteration cap of most methods (one iteration: one FABRIK forward and backward stage, one
#: CCD sweep, one Jacobian step).
DEFAULT_MAX_ITER = 1000
#: The cap of the Jacobian methods, which take many small steps.
JACOBIAN_MAX_ITER = 10000
#: A method's ceiling on ``max_iter`` is this many times its default cap (``Solver.max_iter_ceiling``).
MAX_ITER_CEILING_FACTOR = 1000
#: A chain or skeleton solve asked for more iterations than this runs its kernel in slices of this
#: many, each warm-started from the last; a pending KeyboardInterrupt (Ctrl-C) is raised between
#: slices. No default cap reaches it, so the usual solve is one kernel call.
SLICE_ITERATIONS = 10000


@dataclass(frozen=True)
class NoOptions:
    """The options of a method that takes none."""


@dataclass(frozen=True, eq=False)
class Solver:
    """One method on one kind of model: ``solve`` (see the module docstring), its option defaults
    (a frozen dataclass instance), its default iteration cap and the compiled kernels it calls
    (``kernels``: for the first-compile notice, ``fabrik.kernels._cache_guard.announce_compile``)."""

    solve: Callable
    defaults: Any = NoOptions()
    max_iter: int = DEFAULT_MAX_ITER
    kernels: tuple = ()
    #: chains only: ``fast(solver) -> (entry, cap, turn_start)``, the compiled entry with
    #: ``fabrik.kernels.fabrik_chain_entry.fabrik_chain_checked``'s arguments that answers a plain
    #: 3D chain's solve with this solver's defaults (None: no hot path)
    fast: Callable | None = None

    @property
    def max_iter_ceiling(self) -> int:
        """The most iterations one solve runs, whatever ``max_iter`` asks for:
        ``MAX_ITER_CEILING_FACTOR`` times the default cap (1,000,000 for FABRIK and CCD,
        10,000,000 for the Jacobian methods). Larger ``max_iter`` values are clamped to it."""
        return MAX_ITER_CEILING_FACTOR * self.max_iter


@dataclass(frozen=True)
class Method:
    """A solver method (see the module docstring)."""

    name: str
    summary: str = ""
    chain: Solver | None = None
    skeleton: Solver | None = None
    arm: Solver | None = None
    limits: bool = False
    oriented: bool = False
    limited: str | None = None
    frames: bool = False
    tuned_from: str | None = None
    sequence: Callable | None = None
    frame: Callable | None = None

    @property
    def kinds(self) -> tuple[str, ...]:
        """The model kinds this method solves."""
        return tuple(k for k in KINDS if getattr(self, k) is not None)

    def solver(self, kind: str) -> Solver:
        solver = getattr(self, kind, None) if kind in KINDS else None
        if solver is None:
            raise ValueError(f"method {self.name!r} does not solve a {kind}; it solves {' and '.join(self.kinds)}s; "
                             f"methods for a {kind}: {', '.join(names(kind))}")
        return solver

    def options(self, kind: str, given: dict):
        """The options dataclass for ``kind`` with ``given`` (keyword values) over the defaults;
        ValueError for an option the method does not take (naming the ones it does) or a bad value."""
        defaults = self.solver(kind).defaults
        if not given:
            return defaults
        allowed = [f.name for f in dataclasses.fields(defaults) if f.init and not f.name.startswith("_")]
        unknown = sorted(set(given) - set(allowed), key=str)
        if unknown:
            names_ = ", ".join(repr(u) for u in unknown)
            takes = f"it takes {', '.join(allowed)}" if allowed else "it takes no options"
            raise ValueError(f"method {self.name!r} for {kind}s takes no option{'s' if len(unknown) > 1 else ''} "
                             f"{names_}; {takes}")
        return replace(defaults, **given)


METHODS: dict[str, Method] = {}

#: The modules that register methods, imported on the first lookup.
METHOD_MODULES = (
    "fabrik.solvers.fabrik", "fabrik.solvers.ccd", "fabrik.solvers.jacobian", "fabrik.solvers.ftl",
    "fabrik.solvers.triangulation", "fabrik.solvers.skeleton_fabrik",
    "fabrik.solvers.skeleton_methods", "fabrik.solvers.arm",
)
_loaded = False


def loaded() -> dict[str, Method]:
    """``METHODS`` with every method module imported (once, under ``fabrik._lazy.FIRST_USE``: a
    thread asking while another imports waits for every method)."""
    global _loaded
    if not _loaded:
        with FIRST_USE:
            if not _loaded:
                for module in METHOD_MODULES:
                    importlib.import_module(module)
                _loaded = True
    return METHODS


def add(name: str, kind: str | None = None, solver: Solver | None = None, **fields) -> Method:
    """Register (or extend) method ``name``: its ``Solver`` for ``kind`` and any ``Method`` fields."""
    method = METHODS.get(name) or Method(name)
    if kind is not None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        fields[kind] = solver
    method = replace(method, **fields)
    METHODS[name] = method
    return method


def names(kind: str) -> list[str]:
    """The names of the methods solving ``kind``, sorted."""
    return sorted(name for name, m in loaded().items() if getattr(m, kind) is not None)


def get(name) -> Method:
    """The method called ``name``; ValueError listing the methods when there is none."""
    try:
        return loaded()[name]
    except (KeyError, TypeError):  # TypeError: an unhashable name such as a list
        raise ValueError(f"unknown method {name!r}; methods are: {', '.join(sorted(METHODS))}") from None


def name_of(method, where: str = "method") -> str:
    """The name of ``method``: a name, or a registered ``Method`` (``fabrik.method(name)``);
    ValueError for anything else, naming what was given."""
    if isinstance(method, str):
        return method
    if isinstance(method, Method):
        if loaded().get(method.name) is not method:
            raise ValueError(f"{where}: the Method {method.name!r} is not the registered one; register it with "
                             f"fabrik.solvers.registry.add, or pass a name (fabrik.methods() lists them)")
        return method.name
    raise ValueError(f"{where} must be a method name (a str; fabrik.methods() lists them) or a Method "
                     f"(fabrik.method(name)), got {method!r}")


def route(name, kind: str, *, limited: bool = False, oriented: bool = False) -> Method:
    """The method that solves a ``kind`` model when ``name`` is asked for: the method itself, or
    the one it hands limited models and oriented targets to (``Method.limited``). ValueError when
    the name is unknown for the kind or nothing can take the limits or the orientation."""
    method = loaded().get(name) if isinstance(name, str) else None
    if method is None or getattr(method, kind) is None:
        raise ValueError(f"unknown method {name!r} for a {kind}; methods are: {', '.join(names(kind))}")
    if (limited and not method.limits) or (oriented and not method.oriented):
        taker = METHODS.get(method.limited) if method.limited else None
        if (taker is None or getattr(taker, kind) is None or (limited and not taker.limits)
                or (oriented and not taker.oriented)):
            need = "oriented targets" if oriented and not limited else "joint limits or oriented targets"
            able = [m for m in names(kind) if METHODS[m].limits and (METHODS[m].oriented or not oriented)]
            raise ValueError(f"method {name!r} does not support {need} on a {kind}; methods that do: "
                             f"{', '.join(able)}")
        method = taker
    return method


def limited_variant(name: str, kind: str) -> str | None:
    """The method that solves ``kind`` models with joint limits for ``name``: ``name`` itself when it
    applies limits, else its ``limited`` method (None when there is none for ``kind``)."""
    method = get(name)
    if method.limits:
        return name
    taker = METHODS.get(method.limited) if method.limited else None
    return taker.name if taker is not None and getattr(taker, kind) is not None else None


def unlimited_variant(name: str) -> str:
    """The method that hands limited models to ``name`` (``name`` itself when there is none)."""
    for other in loaded().values():
        if other.limited == name:
            return other.name
    return name


def takes_option(name: str, kind: str, option: str) -> bool:
    """Whether method ``name`` takes ``option`` on ``kind`` models."""
    solver = getattr(get(name), kind, None)
    return solver is not None and option in {f.name for f in dataclasses.fields(solver.defaults)}


def max_iter_or_default(method: Method, kind: str, max_iter: int | None) -> int:
    """``max_iter``, or the method's default cap for ``kind`` when it is None."""
    return method.solver(kind).max_iter if max_iter is None else max_iter


__all__ = ["Method", "Solver", "NoOptions", "METHODS", "add", "get", "names", "route", "max_iter_or_default",
           "MAX_ITER_CEILING_FACTOR", "SLICE_ITERATIONS",
           "DEFAULT_MAX_ITER", "JACOBIAN_MAX_ITER", "KINDS", "limited_variant", "unlimited_variant", "takes_option"]
