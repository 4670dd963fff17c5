"""The records and text of the reconstruction experiment (``fabrik_experiments.reconstruction``):
one method's row (``MethodResult``), one take's table (``ReconstructionReport``), and several
takes pooled (``pool_reports`` -> ``PooledReport``).

Errors are in the file's units unless named ``_rel`` (fraction of the skeleton's height,
``Skeleton.height()``); the definitions of each number are in ``fabrik_experiments.reconstruction``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from fabrik.mocap.takes import CONSTANT_TRANSLATION
from fabrik.solvers import registry
from fabrik.solvers.jacobian import PAPER_DAMPING

#: A written file further than this fraction of the body's size from the solution gets a note
#: (the tolerance of ``fabrik.mocap.prepare_take`` for constant position channels).
OUT_TOL = CONSTANT_TRANSLATION
#: A row reaching its effectors (within tol) in fewer frames than this gets a note, even when
#: its mean effector error is within tol.
MOSTLY_REACHED = 0.9

#: A bone direction past its limit by more than this (radians) counts as a break of the limit
#: (``MethodResult.limit_break_fraction``).
LIMIT_BREAK = math.radians(1.0)
#: A damping above this fraction of the skeleton's height is called heavy in the table's notes
#: (the default damping of the methods that take one is in file units).
HEAVY_DAMPING = 0.1


@dataclass(frozen=True)
class MethodResult:
    """One method's reconstruction of a motion.

    Errors are in the file's units unless named ``_rel`` (fraction of the skeleton height).
    ``positions`` (F, n, 3) is the reconstruction (not written to JSON).
    """

    method: str
    median_error: float
    mean_error: float
    p95_error: float
    median_error_rel: float
    mean_error_rel: float
    p95_error_rel: float
    mean_effector_error: float
    mean_effector_error_rel: float
    max_effector_error: float
    mean_iterations: float
    frames_per_second: float
    reached_fraction: float
    positions: np.ndarray = field(repr=False, compare=False)
    #: largest limit violation (radians) over all frames; None for methods without limits
    max_limit_violation: float | None = None
    #: the method options the run gave (``method_options``), e.g. ``{"damping": 0.02}``
    options: dict = field(default_factory=dict)
    #: (F, m) each evaluated joint's error in each frame (file units; not written to JSON), the
    #: samples behind the median, mean and 95th percentile (``pool_reports`` pools them)
    inner_errors: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: (F, m, 3, 3) the solved joints' frames for a method with limits (not written to JSON), and
    #: the skeleton it solved with its limits: what ``--out`` keeps in the file
    frames: np.ndarray | None = field(default=None, repr=False, compare=False)
    solved_skeleton: object = field(default=None, repr=False, compare=False)
    #: for a row solved without limits when the run has limits: the fraction of frames whose poses
    #: break one (a bone direction beyond its limit by more than ``LIMIT_BREAK`` radians, twist
    #: aside: positions do not show it); None otherwise
    limit_break_fraction: float | None = None

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__
             if k not in ("positions", "inner_errors", "frames", "solved_skeleton")}
        return {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in d.items()}


@dataclass(frozen=True)
class ReconstructionReport:
    """All methods on one motion; ``table()`` prints it, ``to_json()`` gives the JSON payload."""

    skeleton_height: float
    frames: int
    effectors: tuple[str, ...]
    evaluated: tuple[str, ...]
    tol: float
    max_iter: int | None
    results: tuple[MethodResult, ...]
    source: str = ""
    #: joints given a limit, and joints the limit set could not place (``fabrik-constrained``)
    limited: tuple[str, ...] = ()
    unplaced: tuple[str, ...] = ()
    #: the joints FABRIK (and fabrik-constrained) swung limbs about before iterating
    #: (``swing_limbs``), empty when off
    swing_pivots: tuple[str, ...] = ()
    #: the centres of FABRIK's rigid groups (``rigid_sub_bases``), empty when none
    rigid_centres: tuple[str, ...] = ()
    #: how the file was set up for the solvers (``fabrik.mocap.prepare_take``), printed under the table
    notes: tuple[str, ...] = ()
    #: with ``out``: the largest distance of a joint in the written file from the written row's
    #: solution (file units; 0 to rounding when BVH rotations can hold the solved poses)
    out_max_error: float | None = None
    #: with ``out``: the method whose poses the file holds
    out_method: str | None = None

    def result(self, method: str) -> MethodResult:
        for r in self.results:
            if r.method == method:
                return r
        raise ValueError(f"no result for method {method!r}; have {[r.method for r in self.results]}")

    def to_json(self) -> dict:
        return {
            "experiment": "table2-reconstruction",
            "source": self.source,
            "skeleton_height": self.skeleton_height,
            "frames": self.frames,
            "effectors": list(self.effectors),
            "evaluated_joints": list(self.evaluated),
            "tol": self.tol,
            "max_iter": self.max_iter,
            "limited_joints": list(self.limited),
            "unplaced_joints": list(self.unplaced),
            "fabrik_swing_pivots": list(self.swing_pivots),
            "fabrik_rigid_centres": list(self.rigid_centres),
            "notes": list(self.notes),
            "out_method": self.out_method,
            "out_max_error": self.out_max_error,
            "out_max_error_rel": None if self.out_max_error is None else self.out_max_error / self.skeleton_height,
            "results": [r.to_dict() for r in self.results],
        }

    def table(self) -> str:
        h = self.skeleton_height
        w = max([20] + [len(r.method) + 2 for r in self.results])
        head = (f"{'method':<{w}}{'median err':>11}{'mean err':>10}{'p95 err':>10}{'median/h':>10}"
                f"{'eff err/h':>11}{'iters':>8}{'frames/s':>10}{'max viol':>10}{'breaks':>8}")
        lines = [f"Reconstruction{(' of ' + self.source) if self.source else ''}: {self.frames} frames, "
                 f"skeleton height {h:.4g}, {len(self.effectors)} effectors + root, "
                 f"{len(self.evaluated)} inner joints evaluated, tol {self.tol:.3g}",
                 head, "-" * len(head)]
        for r in self.results:
            viol = "-" if r.max_limit_violation is None else f"{r.max_limit_violation:.1e}"
            breaks = "-" if r.limit_break_fraction is None else f"{r.limit_break_fraction:.0%}"
            lines.append(f"{r.method:<{w}}{r.median_error:>11.4g}{r.mean_error:>10.4g}{r.p95_error:>10.4g}"
                         f"{r.median_error_rel:>10.3g}{r.mean_effector_error_rel:>11.2g}{r.mean_iterations:>8.1f}"
                         f"{r.frames_per_second:>10.0f}{viol:>10}{breaks:>8}")
        lines.extend(f"note: {note}" for note in self.notes)
        if self.swing_pivots and any(registry.takes_option(r.method, "skeleton", "swing_limbs")
                                     and r.options.get("swing_limbs", True) for r in self.results):
            lines.append(f"fabrik rows: each frame starts with the limbs swung towards their targets about "
                         f"{', '.join(self.swing_pivots)}")
        if self.rigid_centres and any(registry.takes_option(r.method, "skeleton", "rigid_sub_bases")
                                      and r.options.get("rigid_sub_bases", True) not in (False, "none")
                                      for r in self.results):
            lines.append(f"fabrik: rigid sub-bases at {', '.join(self.rigid_centres)}")
        if self.limited:
            lines.append(f"limits on {len(self.limited)} joints (max viol: radians, over all frames; breaks: the frames "
                         f"where a row without limits bends a bone past one by over {math.degrees(LIMIT_BREAK):g} "
                         "degree)" + (f"; no limit placed on: {', '.join(self.unplaced)}" if self.unplaced else ""))
        for r in self.results:
            if r.options:
                settings = ", ".join(f"{k}={v}" for k, v in r.options.items())
                lines.append(f"{r.method}: {settings}")
        for r in self.results:
            if r.mean_effector_error > self.tol:
                note = (f"note: {r.method} left its effectors {r.mean_effector_error_rel:.3g} of the height away "
                        f"on average, more than tol ({r.reached_fraction:.0%} of frames reached)")
            elif r.reached_fraction < MOSTLY_REACHED:
                note = (f"note: {r.method} reached its effectors in {r.reached_fraction:.0%} of the frames (within "
                        f"tol on average, {r.max_effector_error / h:.2g} of the height in the worst frame)")
            else:
                continue
            if (registry.takes_option(r.method, "skeleton", "damping") and "damping" not in r.options
                    and PAPER_DAMPING > HEAVY_DAMPING * h):
                note += (f"; its damping ({PAPER_DAMPING}, the paper's value) is in file units, heavy for a "
                         f"skeleton {h:.3g} units tall: set it with method_options (CLI: --option "
                         f"{r.method}:damping=VALUE)")
            lines.append(note)
        if self.out_max_error is not None and self.out_max_error > OUT_TOL * h:
            note = (f"note: the written BVH is up to {self.out_max_error:.4g} units ({self.out_max_error / h:.2g} of "
                    f"the height) from the {self.out_method} row's poses: BVH turns all children of a joint together, "
                    f"and {self.out_method} moved some of them apart (a pelvis or chest with bones to several children)")
            if not registry.takes_option(self.out_method, "skeleton", "rigid_sub_bases"):
                note += "; the fabrik rows hold such joints rigid (--out-method fabrik or fabrik-constrained)"
            elif not self.rigid_centres:
                note += "; --rigid-sub-bases auto (the default) or all holds them rigid"
            else:
                note += ("; fabrik held them rigid, but not where it released a group to reach its targets, or where "
                         "such joints hang from one another (twist bones beside a limb's own bones)")
            lines.append(note)
        return "\n".join(lines)


#: Medians within this fraction of the lowest tie for it (``PooledResult.lowest_median_takes``).
TIE = 1e-6


@dataclass(frozen=True)
class PooledResult:
    """One method over several takes. Errors are fractions of each take's skeleton height, so that
    takes in different units pool; the median, mean and 95th percentile are over every evaluated
    joint in every frame of every take (a long take weighs more than a short one)."""

    method: str
    median_error_rel: float
    mean_error_rel: float
    p95_error_rel: float
    mean_effector_error_rel: float
    mean_iterations: float
    frames_per_second: float
    #: the takes where this method has the lowest median error of the methods pooled (ties, within
    #: ``TIE`` of the lowest, count for each method that shares it: DLS and SVD-DLS agree to rounding)
    lowest_median_takes: int
    #: the fraction of all frames whose effectors were all reached (within tol)
    reached_fraction: float = float("nan")
    #: ``MethodResult.limit_break_fraction`` over all frames (None when no take has it)
    limit_break_fraction: float | None = None

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class PooledReport:
    """Several takes' reconstructions pooled (``pool_reports``); ``table()`` prints it,
    ``to_json()`` gives the payload's ``"pooled"`` part."""

    sources: tuple[str, ...]
    frames: int
    results: tuple[PooledResult, ...]

    def to_json(self) -> dict:
        return {"takes": len(self.sources), "sources": list(self.sources), "frames": self.frames,
                "results": [r.to_dict() for r in self.results]}

    def table(self) -> str:
        w = max([20] + [len(r.method) + 2 for r in self.results])
        head = (f"{'method':<{w}}{'median/h':>10}{'mean/h':>10}{'p95/h':>10}{'eff err/h':>11}{'iters':>8}"
                f"{'frames/s':>10}{'reached':>9}{'breaks':>8}{'lowest in':>11}")
        lines = [f"Pooled over {len(self.sources)} takes, {self.frames} frames (errors as fractions of each take's "
                 f"skeleton height)", head, "-" * len(head)]
        for r in self.results:
            breaks = "-" if r.limit_break_fraction is None else f"{r.limit_break_fraction:.0%}"
            lines.append(f"{r.method:<{w}}{r.median_error_rel:>10.4g}{r.mean_error_rel:>10.4g}{r.p95_error_rel:>10.4g}"
                         f"{r.mean_effector_error_rel:>11.2g}{r.mean_iterations:>8.1f}{r.frames_per_second:>10.0f}"
                         f"{r.reached_fraction:>9.1%}{breaks:>8}{f'{r.lowest_median_takes}/{len(self.sources)}':>11}")
        lines.append("reached: frames with every effector within tol; breaks: frames where a row without limits bends "
                     "a bone past one; lowest in: the takes where the row has the lowest median error (a tie counts "
                     "for each)")
        return "\n".join(lines)


def pool_reports(reports: Sequence[ReconstructionReport]) -> PooledReport:
    """Pool the reports of several takes, one row per method that every report holds (in the
    first report's order). Errors are divided by each take's skeleton height before pooling;
    mean iterations are over all frames, frames per second is all frames over all the solving
    time, and the effector error is the mean over every effector in every frame."""
    if not reports:
        raise ValueError("pool_reports needs at least one report")
    held = [{r.method for r in rep.results} for rep in reports[1:]]
    shared = [r.method for r in reports[0].results if all(r.method in methods for methods in held)]
    if not shared:
        raise ValueError("the reports have no method in common: "
                         + "; ".join(f"{rep.source or '?'}: {', '.join(r.method for r in rep.results)}"
                                     for rep in reports))
    for rep in reports:
        for m in shared:
            if rep.result(m).inner_errors is None:
                raise ValueError(f"{rep.source or 'a report'}: the {m} row has no per-joint errors to pool "
                                 "(made by reconstruct())")
    lowest = [min(rep.result(m).median_error for m in shared) for rep in reports]
    frames = sum(rep.frames for rep in reports)
    samples = [rep.frames * len(rep.effectors) for rep in reports]  # effector errors behind each mean
    rows = []
    for m in shared:
        rel = np.concatenate([rep.result(m).inner_errors.ravel() / rep.skeleton_height for rep in reports])
        seconds = sum(rep.frames / rep.result(m).frames_per_second for rep in reports)
        eff = sum(n * rep.result(m).mean_effector_error_rel for n, rep in zip(samples, reports)) / sum(samples)
        iters = sum(rep.frames * rep.result(m).mean_iterations for rep in reports) / frames
        reached = sum(rep.frames * rep.result(m).reached_fraction for rep in reports) / frames
        broken = [(rep.frames, rep.result(m).limit_break_fraction) for rep in reports
                  if rep.result(m).limit_break_fraction is not None]
        breaks = sum(f * b for f, b in broken) / sum(f for f, _ in broken) if broken else None
        rows.append(PooledResult(m, float(np.median(rel)), float(rel.mean()), float(np.percentile(rel, 95)),
                                 float(eff), float(iters), frames / seconds if seconds > 0 else float("inf"),
                                 sum(rep.result(m).median_error <= low * (1 + TIE) for rep, low in zip(reports, lowest)),
                                 float(reached), breaks))
    return PooledReport(tuple(rep.source for rep in reports), frames, tuple(rows))


__all__ = ["MethodResult", "ReconstructionReport", "PooledResult", "PooledReport", "pool_reports", "OUT_TOL",
           "MOSTLY_REACHED", "HEAVY_DAMPING", "TIE", "LIMIT_BREAK"]
