"""Figures of the benchmarks (matplotlib with the Agg backend, imported only when a plot is made).

- ``plot_iterations_vs_distance``: the paper's Figure 11 as asked for here: iterations each method
  needed against the initial effector-to-target distance (reachable Table 1 targets), with a
  panel of the error after each iteration for the paper's example (900-unit chain, target 600
  units from the effector).
- ``plot_error_vs_time``: Figure 12: error against solve time for the same example.
- ``plot_tracking``: per-step tracking error and joint displacement of the tracking experiment.

Every function writes one PNG and returns its path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from fabrik.solvers import registry
from fabrik.viz._figures import pyplot, save


_BASE_COLOURS = {"fabrik": "black", "ccd": "tab:blue", "ftl": "tab:orange", "triangulation": "tab:brown",
                 "jacobian-transpose": "tab:purple", "jacobian-dls": "tab:green", "jacobian-svd-dls": "tab:olive",
                 "sdls": "tab:red"}


def _colours(names: Sequence[str]) -> dict[str, str]:
    """One colour per base method (FABRIK black); a tuned variant shares its base's colour."""
    spare = iter(["tab:pink", "tab:cyan", "tab:gray", "gold", "navy", "teal"])
    out = {}
    for name in names:
        base = registry.get(name).tuned_from or name
        if base not in _BASE_COLOURS:
            _BASE_COLOURS[base] = next(spare, "tab:gray")
        out[name] = _BASE_COLOURS[base]
    return out


def _style(name: str) -> dict:
    """Line style: FABRIK thick, tuned variants dashed."""
    if name == registry.DEFAULT_METHOD:
        return {"lw": 2.5, "ls": "-"}
    return {"lw": 1.3, "ls": "--" if registry.get(name).tuned_from else "-"}


def plot_iterations_vs_distance(runs, traces: Mapping[str, dict], path: str | Path) -> Path:
    """Figure 11. ``runs``: Table 1 ``MethodRun``s (reachable ones are used); ``traces``: method ->
    ``{"iterations": [...], "errors": [...]}`` for the example target (see ``convergence_trace``)."""
    plt = pyplot()
    reach = [r for r in runs if r.targets == "reachable"]
    names = [r.method for r in reach]
    colour = _colours(sorted(set(names) | set(traces)))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.5))
    for r in reach:
        d = r.initial_distances
        ax1.scatter(d, np.maximum(r.iterations, 1), s=3, alpha=0.25, color=colour[r.method])
        bins = np.linspace(0.0, d.max(), 13)
        idx = np.digitize(d, bins)
        centres, means = [], []
        for b in range(1, len(bins)):
            sel = idx == b
            if sel.any():
                centres.append(0.5 * (bins[b - 1] + bins[b]))
                means.append(max(1.0, float(r.iterations[sel].mean())))
        ax1.plot(centres, means, marker="o", ms=3, color=colour[r.method], label=r.method, **_style(r.method))
    ax1.set_yscale("log")
    ax1.set_xlabel("initial effector-to-target distance (units; bones are 100)")
    ax1.set_ylabel("iterations to reach the target (dots: targets, lines: bin means)")
    ax1.set_title("Iterations needed vs distance, reachable targets")
    ax1.legend(fontsize=7, ncol=2)
    _draw_traces(ax2, traces, colour, "iterations")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("iterations")
    ax2.set_ylabel("effector-to-target distance (units)")
    ax2.set_title("Example: 900-unit chain, target 600 from the effector\n(FTL not shown: its effector is "
                  "pinned on the target)", fontsize=10)
    ax2.legend(fontsize=7, ncol=2)
    return save(fig, path)


def _draw_traces(ax, traces: Mapping[str, dict], colour: dict[str, str], x_key: str) -> None:
    """One error line per method against ``tr[x_key]`` (iterations or microseconds), the start
    (0 iterations) dropped for the log axis; one-pass methods as markers. FTL is left out: its
    effector is pinned on the target from the first iteration (error 0)."""
    for name, tr in traces.items():
        if name == "ftl":
            continue
        x = np.asarray(tr[x_key])[1:]
        errs = np.maximum(np.asarray(tr["errors"])[1:], 1e-9)
        if x.size <= 2:
            ax.plot(x, errs, "s", ms=7, color=colour[name], label=f"{name} (one pass)")
        else:
            ax.plot(x, errs, color=colour[name], label=name, **_style(name))


def plot_error_vs_time(traces: Mapping[str, dict], path: str | Path) -> Path:
    """Figure 12: error against time (microseconds) for the example target, one line per method."""
    plt = pyplot()
    colour = _colours(sorted(traces))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    _draw_traces(ax, traces, colour, "times_us")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("time of a solve stopped after k iterations (microseconds)")
    ax.set_ylabel("effector-to-target distance (units)")
    ax.set_title("Error vs time, example target (900-unit chain, 600 from the effector; FTL not shown)",
                 fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    return save(fig, path)


def plot_tracking(runs, path_xyz: np.ndarray, reach: float, path: str | Path) -> Path:
    """Tracking: per-step error beyond the unavoidable and largest joint displacement per method."""
    plt = pyplot()
    colour = _colours(sorted(r.method for r in runs))
    fig, (ax0, ax1, ax2) = plt.subplots(3, 1, figsize=(11, 10), sharex=True)
    ax0.plot(np.linalg.norm(path_xyz, axis=1), color="k")
    ax0.axhline(reach, color="r", ls="--", lw=1, label="reach")
    ax0.set_ylabel("target distance from root")
    ax0.legend(fontsize=8)
    for r in runs:
        style = {**_style(r.method), "lw": 1.6 if r.method == registry.DEFAULT_METHOD else 0.8}
        ax1.plot(np.maximum(r.errors, 1e-9), color=colour[r.method], label=r.method, **style)
        ax2.plot(np.arange(1, len(r.joint_steps)), r.joint_steps[1:], color=colour[r.method], label=r.method, **style)
    ax1.set_yscale("log")
    ax1.set_ylabel("error beyond the unavoidable (units)")
    ax1.legend(fontsize=7, ncol=3)
    ax2.set_yscale("log")
    ax2.set_ylabel("largest joint move in the step")
    ax2.set_xlabel("step")
    return save(fig, path)
