"""``fabrik bench batch``: how many chain solves per second ``fabrik.solve_batch`` gives.

On the Table 1 chain (10 joints, 9 bones of 100 units, tol 1e-3; reachable targets uniform in
the ball of 0.9 x reach, ``fabrik_experiments.table1.make_targets``), every target solved from
the rest pose, for batches of 1e3 up to ``max_targets`` targets:

* ``solve loop``: ``fabrik.solve`` called target by target from Python (timed on at most
  ``LOOP_LIMIT`` targets: its rate does not depend on the batch);
* ``baseline``: the plain compiled kernel, ``prange`` over targets each calling the
  single-chain kernel ``fabrik_chain_into`` (``solve_batch(layout="baseline")``), on all threads;
* ``per-thread``: ``prange`` over targets, each solved in place (``layout="per-thread"``);
* ``lockstep 1 thread`` / ``lockstep``: ``solve_batch``'s default, LANES targets in lockstep
  per thread, on one and on all threads;
* ``warp cpu`` (and ``warp cuda`` where a GPU is present): ``backend="warp"``.

Each figure is the best of ``repeats`` runs (solves per second), after a warm-up run that
compiles. Wall-clock rates on a machine other jobs share understate what threads give, so
the baseline and the lockstep layout are also timed on one thread in CPU time of this process
(``time.process_time``, best of ``repeats``, on up to ``CPU_TARGETS`` targets): the per-thread
gain, which load distorts less. The chain-length scan solves reachable targets on straight
chains of 10, 100, 1,000 and 10,000 joints of the same 900-unit reach (``LENGTH_TARGETS``
targets each, one run each) with the solve loop (on at most 1,000 of them), the baseline and the
lockstep layout. Every batch's answers are checked against the baseline's (``identical``).
"""

from __future__ import annotations

import sys

import time

import numpy as np

import fabrik
from fabrik.model.chain import Chain
from fabrik_experiments.table1 import N_JOINTS, SEED, TOL, benchmark_chain, make_targets

#: The solve loop is timed on at most this many targets.
LOOP_LIMIT = 20_000
#: Chain lengths (joints) of the scan, and the targets solved for each.
LENGTHS = (10, 100, 1000, 10000)
LENGTH_TARGETS = {10: 20000, 100: 2000, 1000: 100, 10000: 4}
#: Targets of the one-thread CPU-time comparison.
CPU_TARGETS = 50_000


def _best(fn, repeats, clock=time.perf_counter):
    best = np.inf
    out = None
    for _ in range(repeats):
        start = clock()
        out = fn()
        best = min(best, clock() - start)
    return best, out


#: what Warp's native library prints on stderr when it finds no CUDA driver (a machine without a GPU)
NO_DRIVER_LINE = "Could not find or load the NVIDIA CUDA driver"


def _has_cuda_driver() -> bool:
    import ctypes
    import ctypes.util

    for name in ("libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda"), "nvcuda.dll"):
        if name:
            try:
                ctypes.CDLL(name)
                return True
            except OSError:
                pass
    return False


def _init_warp(wp) -> None:
    """``wp.init()``; on a machine without a CUDA driver, without the warning line Warp's native
    library prints then (it writes to the process's stderr itself, so the line is filtered out of
    what file descriptor 2 received; anything else it printed is passed on)."""
    import os
    import tempfile

    if _has_cuda_driver():
        wp.init()
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            wp.init()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        caught.seek(0)
        text = caught.read().decode(errors="replace")
    for line in text.splitlines():
        if NO_DRIVER_LINE not in line:
            print(line, file=sys.stderr)


def _warp_devices() -> list[str]:
    try:
        import warp as wp
    except ImportError:
        return []
    from fabrik.kernels.batch_warp import quiet_warp

    quiet_warp(wp)
    _init_warp(wp)
    return ["cpu"] + (["cuda"] if wp.is_cuda_available() else [])


def sizes_up_to(max_targets: int) -> list[int]:
    """1e3, 1e4, ... below ``max_targets``, then ``max_targets``."""
    out = [s for s in (1000, 10_000, 100_000, 1_000_000) if s < max_targets]
    return out + [max_targets]


#: The parts of ``fabrik bench batch`` (``--parts``): the chain tables above, and the skeleton,
#: arm, crowd and float32 tables of ``fabrik_experiments.batch_models_bench``.
PARTS = ("chain", "skeleton", "arm", "crowd", "float32")


def run_batch_bench(max_targets: int = 200_000, *, repeats: int = 3, lengths=LENGTHS, progress=None, parts=PARTS,
                    skeleton_targets: int = 100_000, arm_targets: int = 100_000, crowd=(1000, 600)) -> dict:
    """Run the ``parts`` asked for; returns a JSON-ready dict (``format_tables`` prints it)."""
    import numba

    from fabrik_experiments import batch_models_bench as models_bench

    result = {"experiment": "batch", "threads": numba.get_num_threads(), "repeats": repeats, "parts": list(parts)}
    if "chain" in parts:
        result.update(_run_chain_bench(max_targets, repeats, lengths, progress))
    if "skeleton" in parts:
        result["skeleton"] = models_bench.run_skeleton_bench(skeleton_targets, repeats, progress)
    if "arm" in parts:
        result["arm"] = models_bench.run_arm_bench(arm_targets, repeats, progress)
    if "crowd" in parts:
        result["crowd"] = models_bench.run_crowd_bench(crowd[0], crowd[1], 1, progress)
    if "float32" in parts:
        result["float32"] = models_bench.run_float32_bench(min(max_targets, 100_000), repeats, progress)
    return result


def _run_chain_bench(max_targets: int, repeats: int, lengths, progress) -> dict:
    """The chain tables (module docstring)."""
    import numba

    threads = numba.get_num_threads()
    chain = benchmark_chain()
    all_targets = make_targets(chain, max_targets, seed=SEED)["reachable"]
    warp_devices = _warp_devices()
    runners = [("baseline", dict(layout="baseline")), ("per-thread", dict(layout="per-thread")),
               ("lockstep 1 thread", dict(layout="lockstep", threads=1)), ("lockstep", dict(layout="lockstep"))]
    runners += [(f"warp {d}", dict(backend="warp", device=d)) for d in warp_devices]
    for _, kw in runners:  # compile
        fabrik.solve_batch(chain, all_targets[:64], tol=TOL, **kw)
    fabrik.solve(chain, all_targets[0], tol=TOL)
    rows = []
    sizes = sizes_up_to(max_targets)
    for size in sizes:
        targets = all_targets[:size]
        loop_n = min(size, LOOP_LIMIT)
        seconds, _ = _best(lambda: [fabrik.solve(chain, t, tol=TOL) for t in targets[:loop_n]], 1 if loop_n > 5000
                           else repeats)
        row = {"targets": size, "solve loop": loop_n / seconds}
        reference = None
        for name, kw in runners:
            seconds, result = _best(lambda: fabrik.solve_batch(chain, targets, tol=TOL, **kw), repeats)
            row[name] = size / seconds
            if reference is None:
                reference = result
                row["mean iterations"] = float(result.iterations.mean())
                row["reached"] = float(result.reached.mean())
            elif not (np.allclose(result.positions, reference.positions, rtol=0, atol=1e-9 * chain.total_length)
                      and np.array_equal(result.iterations, reference.iterations)):
                row.setdefault("not identical", []).append(name)
        row["lockstep / baseline"] = row["lockstep"] / row["baseline"]
        rows.append(row)
        if progress is not None:
            progress(f"{size} targets")
    cpu_targets = all_targets[:CPU_TARGETS]
    cpu = {"targets": len(cpu_targets)}
    for name in ("baseline", "lockstep"):
        seconds, _ = _best(lambda: fabrik.solve_batch(chain, cpu_targets, tol=TOL, layout=name, threads=1), repeats,
                           clock=time.process_time)
        cpu[f"{name} ns per solve"] = seconds / len(cpu_targets) * 1e9
    cpu["lockstep / baseline"] = cpu["baseline ns per solve"] / cpu["lockstep ns per solve"]
    scan = []
    for n_joints in lengths:
        long_chain = Chain.straight(n_joints, chain.total_length / (n_joints - 1), dim=3, axis=1)
        count = LENGTH_TARGETS.get(n_joints, 1000)
        targets = make_targets(long_chain, count, seed=SEED)["reachable"]
        fabrik.solve_batch(long_chain, targets[:8], tol=TOL)
        fabrik.solve_batch(long_chain, targets[:8], tol=TOL, layout="baseline")
        loop_n = min(count, 1000)
        s_loop, _ = _best(lambda: [fabrik.solve(long_chain, t, tol=TOL) for t in targets[:loop_n]], 1)
        s_base, base = _best(lambda: fabrik.solve_batch(long_chain, targets, tol=TOL, layout="baseline"), 1)
        s_lock, lock = _best(lambda: fabrik.solve_batch(long_chain, targets, tol=TOL), 1)
        scan.append({"joints": n_joints, "targets": count, "mean iterations": float(lock.iterations.mean()),
                     "reached": float(lock.reached.mean()),
                     "solve loop us": s_loop / loop_n * 1e6, "baseline us": s_base / count * 1e6,
                     "lockstep us": s_lock / count * 1e6,
                     "lockstep ns per joint-iteration": s_lock / lock.iterations.sum() / n_joints * 1e9,
                     "identical": bool(np.array_equal(base.positions, lock.positions)
                                       and np.array_equal(base.iterations, lock.iterations))})
        if progress is not None:
            progress(f"{n_joints} joints")
    return {"experiment": "batch", "chain": f"Table 1 ({N_JOINTS} joints, 9 bones x 100 units)", "tol": TOL,
            "targets": "reachable, uniform in the ball of 0.9 x reach, from the rest pose", "threads": threads,
            "repeats": repeats, "loop_limit": LOOP_LIMIT, "warp_devices": warp_devices, "sizes": rows,
            "cpu_one_thread": cpu, "lengths": scan}


def format_tables(result: dict) -> str:
    """The tables of ``run_batch_bench``'s result as text."""
    from fabrik_experiments.batch_models_bench import format_model_tables

    models = format_model_tables(result)
    if "sizes" not in result:
        return models.lstrip("\n")
    return _format_chain_tables(result) + ("\n" + models if models else "")


def _format_chain_tables(result: dict) -> str:
    rows = result["sizes"]
    names = [k for k in rows[0] if k not in ("targets", "mean iterations", "reached", "lockstep / baseline",
                                              "not identical")]
    lines = [f"Solves per second, {result['chain']}, tol {result['tol']:g}, {result['targets']}; "
             f"{result['threads']} threads, best of {result['repeats']}", "",
             "| targets | " + " | ".join(names) + " | lockstep / baseline | mean iterations |",
             "| ---: | " + " | ".join("---:" for _ in names) + " | ---: | ---: |"]
    for row in rows:
        lines.append(f"| {row['targets']:,} | " + " | ".join(f"{row[n]:,.0f}" for n in names)
                     + f" | {row['lockstep / baseline']:.2f}x | {row['mean iterations']:.2f} |")
        if row.get("not identical"):
            lines.append(f"  NOT IDENTICAL to the baseline: {', '.join(row['not identical'])}")
    cpu = result.get("cpu_one_thread")
    if cpu:
        lines += ["", f"One thread, CPU time, {cpu['targets']:,} targets: baseline {cpu['baseline ns per solve']:,.0f} "
                  f"ns per solve, lockstep {cpu['lockstep ns per solve']:,.0f} ns: "
                  f"{cpu['lockstep / baseline']:.2f}x"]
    lines += ["", "Cost against chain length (same 900-unit reach; microseconds per solve)", "",
              "| joints | targets | mean iterations | reached | solve loop | baseline | lockstep | "
              "lockstep ns per joint-iteration | identical |",
              "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for row in result["lengths"]:
        lines.append(f"| {row['joints']:,} | {row['targets']:,} | {row['mean iterations']:.1f} | "
                     f"{100 * row['reached']:.1f}% | {row['solve loop us']:,.1f} | {row['baseline us']:,.1f} | "
                     f"{row['lockstep us']:,.1f} | {row['lockstep ns per joint-iteration']:.2f} | "
                     f"{'yes' if row['identical'] else 'NO'} |")
    return "\n".join(lines)


def plot_batch_bench(result: dict, out_dir) -> list:
    """Two PNGs in ``out_dir``: solves per second against batch size, and time per solve against
    chain length (the chain part; none without it). Returns their paths."""
    from pathlib import Path

    from fabrik.viz._figures import pyplot, save

    if "sizes" not in result:
        return []
    plt = pyplot()
    out_dir = Path(out_dir)
    rows = result["sizes"]
    names = [k for k in rows[0] if k not in ("targets", "mean iterations", "reached", "lockstep / baseline",
                                              "not identical")]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    sizes = [r["targets"] for r in rows]
    for name in names:
        ax.plot(sizes, [r[name] for r in rows], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("targets per batch")
    ax.set_ylabel("solves per second")
    ax.set_title(f"Table 1 chain, tol {result['tol']:g}, {result['threads']} threads")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths = [save(fig, out_dir / "batch_solves_per_second.png")]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    scan = result["lengths"]
    joints = [r["joints"] for r in scan]
    for key, label in (("solve loop us", "solve loop"), ("baseline us", "baseline"), ("lockstep us", "lockstep")):
        ax.plot(joints, [r[key] for r in scan], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("joints")
    ax.set_ylabel("microseconds per solve")
    ax.set_title("Cost against chain length (reach 900 units)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(save(fig, out_dir / "batch_chain_length.png"))
    return paths
