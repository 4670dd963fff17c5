"""The skeleton, arm, crowd and float32 parts of ``fabrik bench batch`` (docs/batch.md).

* ``run_skeleton_bench``: ``fabrik.models.humanoid()`` with 7 targeted joints
  (``crowd_motion.EFFECTORS``: head, wrists, ankles, knees; ``rigid_sub_bases=False``, see
  ``crowd_motion``), two target sets: ``tracking`` (each solve warm-started from the solver's
  answer for a walking character's frame, its targets that character's effectors one frame
  (1/60 s) later, the root moved with it: a game's or a retargeting job's batch) and ``cold`` (random poses, every bone
  turned by 0.3 rad per axis, solved from the rest pose: a data-generation job). For batches of
  1e3 up to ``max_targets``: ``fabrik.solve`` in a Python loop (on at most ``LOOP_LIMIT``
  targets), ``prange`` over the single-solve kernel (``prange_tree`` below: each target one
  ``fabrik_tree`` call, the kernel ``fabrik.solve`` calls), and ``solve_batch``; then, on one
  thread in CPU time, ``prange``, ``solve_batch`` and ``solve_batch`` with ``max_iter=0`` (the
  per-solve set-up alone: what no arrangement of the iterations can remove), and the same
  skeleton with human joint limits (``fabrik.constraints.humanoid``) on targets the limits allow
  (``skeleton_sets``).
* ``run_arm_bench``: ``fabrik.models.dhm_arm()``, random reachable pose targets (``random_angles``
  through ``fabrik.forward``) from the rest angles: the loop and ``solve_batch``, and one thread in
  CPU time; position targets at the largest size.
* ``run_crowd_bench``: ``characters`` humanoids walking for ``frames`` frames at 60 Hz
  (``crowd_motion.crowd_walk``): the whole crowd in one ``fabrik.solve_sequence`` call, a game's
  loop of one ``solve_batch`` per frame (all characters, each from its last answer; on all
  threads and on one: each call starts numba's threads and waits for the last of them), and
  ``fabrik.solve`` in a loop (on ``CROWD_LOOP`` characters x frames); the real-time factor is the
  take's duration over the time taken.
* ``run_float32_bench``: the Table 1 chain on Warp's CPU device (and CUDA where present), float64
  and float32 kernels on device arrays, the float32 answers against the float64 ones.

Every batch's answers are compared with ``fabrik.solve``'s on the targets the loop solved
(``identical``: positions, iterations and statuses bit for bit).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit, prange

import fabrik
from fabrik import models
from fabrik.kernels.fabrik_tree import fabrik_tree
from fabrik.kernels.records import TreeTask
from fabrik_experiments.crowd_motion import EFFECTORS, OPTIONS, crowd_walk, random_poses

#: ``fabrik.solve`` loops are timed on at most this many targets (their rate does not depend on N).
LOOP_LIMIT = 2000
#: Targets of the one-thread CPU-time comparisons.
CPU_TARGETS = 20_000
#: The solve loop of the crowd part: characters x frames.
CROWD_LOOP = (20, 60)
FPS = 60.0


def _best(fn, repeats, clock=time.perf_counter):
    best, out = math.inf, None
    for _ in range(repeats):
        start = clock()
        out = fn()
        best = min(best, clock() - start)
    return best, out


def _sizes(max_targets: int) -> list[int]:
    out = [s for s in (1000, 10_000, 100_000, 1_000_000) if s < max_targets]
    return out + [max_targets]


@njit(cache=True, parallel=True, error_model="numpy")
def prange_tree(tree, groups, limits, task, stop, options, out_p, out_it, out_code):
    """The plain parallel kernel the skeleton rows compare against: ``prange`` over targets, each
    one ``fabrik_tree`` call. ``task`` a ``TreeTask`` with targets, starts and roots one per target
    (N, ...), and no frames ((0, 3, 3), shared)."""
    target_idx, targets, starts, no_frames, roots, _ = task
    for i in prange(targets.shape[0]):
        released = np.zeros_like(groups.releasable)
        p, _, _, it, _, code = fabrik_tree(tree, groups, limits, TreeTask(target_idx, targets[i], starts[i], no_frames,
                                                                          roots[i], False), stop, options, released)
        out_p[i] = p
        out_it[i] = it
        out_code[i] = code


def skeleton_sets(count: int, seed: int = 0, skeleton=None) -> dict:
    """``{"tracking": (targets (N, 7, 3), starts (N, n, 3), roots (N, 3)), "cold": ...}`` for the
    humanoid (module docstring), or for ``skeleton`` (the humanoid with limits): then every target
    is the effectors of a pose the limits allow, the limited solver's own answer (tracking: the
    crowd solved with the limits, each start its answer to a frame, the targets its answer's
    effectors one frame later; cold: its answers to the random targets, solved from the rest
    pose)."""
    body = models.humanoid()
    skeleton = body if skeleton is None else skeleton
    idx = [body.index(e) for e in EFFECTORS]
    per = 100
    _, poses, roots = crowd_walk(math.ceil(count / per), per + 1, FPS, seed, body)
    # each start the solver's own answer to the frame before (as a game's last frame), from a crowd solve
    answers = fabrik.solve_sequence(skeleton, {e: poses[:, :, j] for e, j in zip(EFFECTORS, idx)},
                                    initial=poses[:, 0], root=roots, **OPTIONS).positions
    goals = poses if skeleton is body else answers
    starts = answers[:, :-1].reshape(-1, body.n_joints, 3)[:count]
    tracking = (np.ascontiguousarray(goals[:, 1:, idx].reshape(-1, len(idx), 3)[:count]), np.ascontiguousarray(starts),
                np.ascontiguousarray(roots[:, 1:].reshape(-1, 3)[:count]))
    cold_goals = random_poses(body, count, seed)[:, idx]
    rest = body.rest_positions()
    starts, rests = np.repeat(rest[None], count, axis=0), np.repeat(rest[None, 0], count, axis=0)
    if skeleton is not body:
        cold_goals = fabrik.solve_batch(skeleton, cold_goals, effectors=EFFECTORS, initial=starts, root=rests,
                                        **OPTIONS).positions[:, idx]
    cold = (np.ascontiguousarray(cold_goals), starts, rests)
    return {"tracking": tracking, "cold": cold}


def _loop(skeleton, targets, starts, roots, count):
    out = []
    for k in range(count):
        out.append(fabrik.solve(skeleton, targets=dict(zip(EFFECTORS, targets[k])), initial=starts[k], root=roots[k],
                                **OPTIONS))
    return out


def _same(batch, singles) -> bool:
    return all(np.array_equal(batch.positions[k], s.positions) and batch.iterations[k] == s.iterations
               and batch.status_names[batch.status[k]] == s.status for k, s in enumerate(singles))


def run_skeleton_bench(max_targets: int = 100_000, repeats: int = 3, progress=None) -> dict:
    """The skeleton rows (module docstring); a JSON-ready dict."""
    from fabrik.constraints import humanoid
    from fabrik.model.rig import NO_FRAMES, rig
    from fabrik.solvers.skeleton_fabrik import _kernel_inputs, _stop

    skeleton = models.humanoid()
    limited = skeleton.with_constraints(humanoid(skeleton)[0])
    arrays = rig(skeleton)
    idx = np.array([skeleton.index(e) for e in EFFECTORS], dtype=np.int64)
    groups, limits, kernel_options = _kernel_inputs(arrays, False, OPTIONS["rigid_sub_bases"], True, None, False)
    sets = skeleton_sets(max_targets)
    limited_sets = skeleton_sets(max_targets, skeleton=limited)
    out = {"skeleton": "fabrik.models.humanoid() (13 joints)", "effectors": list(EFFECTORS), "options": OPTIONS,
           "tol": fabrik.DEFAULT_TOL, "sets": {}}

    def batch(s, t, st, r, **kw):
        return fabrik.solve_batch(s, t, effectors=EFFECTORS, initial=st, root=r, **OPTIONS, **kw)

    def prange_run(t, st, r):
        count = t.shape[0]
        p, it, code = np.empty((count, skeleton.n_joints, 3)), np.empty(count, np.int64), np.empty(count, np.int64)
        prange_tree(arrays.tree, groups, limits, TreeTask(idx, t, st, NO_FRAMES, r, False),
                    _stop(fabrik.DEFAULT_TOL, 1000), kernel_options, p, it, code)
        return p, it, code

    for name, (targets, starts, roots) in sets.items():
        batch(skeleton, targets[:64], starts[:64], roots[:64])  # compile
        prange_run(targets[:64], starts[:64], roots[:64])
        loop_n = min(LOOP_LIMIT, max_targets)
        seconds, singles = _best(lambda: _loop(skeleton, targets, starts, roots, loop_n), 1)
        loop_rate = loop_n / seconds
        rows = []
        for size in _sizes(max_targets):
            t, st, r = targets[:size], starts[:size], roots[:size]
            s_prange, (p_p, p_it, _) = _best(lambda: prange_run(t, st, r), repeats)
            s_batch, result = _best(lambda: batch(skeleton, t, st, r), repeats)
            rows.append({"targets": size, "solve loop": loop_rate, "prange": size / s_prange, "batch": size / s_batch,
                         "batch / loop": (size / s_batch) / loop_rate,
                         "batch / prange": s_prange / s_batch, "mean iterations": float(result.iterations.mean()),
                         "reached": float(result.reached.mean()),
                         "identical": bool(_same(result, singles[:size]) and np.array_equal(p_p, result.positions)
                                           and np.array_equal(p_it, result.iterations))})
        cpu_n = min(CPU_TARGETS, max_targets)
        t, st, r = targets[:cpu_n], starts[:cpu_n], roots[:cpu_n]
        cpu = {"targets": cpu_n}
        cpu["loop us"], _ = _best(lambda: _loop(skeleton, t, st, r, min(loop_n, 500)), 1, time.process_time)
        cpu["loop us"] *= 1e6 / min(loop_n, 500)
        for key, fn in (("prange us", lambda: _with_threads(1, prange_run, t, st, r)),
                        ("batch us", lambda: batch(skeleton, t, st, r, threads=1)),
                        ("set-up us", lambda: batch(skeleton, t, st, r, threads=1, max_iter=0))):
            seconds, _ = _best(fn, repeats, time.process_time)
            cpu[key] = seconds / cpu_n * 1e6
        # limits: targets the limits allow (skeleton_sets)
        lim_n = min(LOOP_LIMIT // 4, max_targets)
        legal, lim_starts, lim_roots = limited_sets[name]
        s_loop, lim_singles = _best(lambda: _loop(limited, legal, lim_starts, lim_roots, lim_n), 1)
        s_lim, lim = _best(lambda: batch(limited, legal, lim_starts, lim_roots), 1)
        limited_row = {"targets": max_targets, "solve loop": lim_n / s_loop, "batch": max_targets / s_lim,
                       "batch / loop": (max_targets / s_lim) / (lim_n / s_loop),
                       "mean iterations": float(lim.iterations.mean()), "reached": float(lim.reached.mean()),
                       "identical": _same(lim, lim_singles)}
        out["sets"][name] = {"sizes": rows, "cpu_one_thread": cpu, "limited": limited_row}
        if progress is not None:
            progress(f"skeleton, {name}")
    return out


def _with_threads(threads, fn, *args):
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return fn(*args)
    finally:
        numba.set_num_threads(before)


def run_arm_bench(max_targets: int = 100_000, repeats: int = 3, progress=None) -> dict:
    """The arm rows (module docstring); a JSON-ready dict."""
    arm = models.dhm_arm()
    q = arm.random_angles(1, max_targets)
    positions, frames = fabrik.forward(arm, q)
    points, rotations = np.ascontiguousarray(positions[:, -1]), np.ascontiguousarray(frames[:, -1])
    fabrik.solve_batch(arm, (points[:64], rotations[:64]))
    fabrik.solve_batch(arm, points[:64])
    loop_n = min(5 * LOOP_LIMIT, max_targets)
    rows = []
    for kind in ("pose", "position"):
        def targets(size):
            return (points[:size], rotations[:size]) if kind == "pose" else points[:size]

        def loop(count):
            if kind == "pose":
                return [fabrik.solve(arm, (points[k], rotations[k])) for k in range(count)]
            return [fabrik.solve(arm, points[k]) for k in range(count)]

        seconds, singles = _best(lambda: loop(loop_n), 1)
        loop_rate = loop_n / seconds
        cpu_loop, _ = _best(lambda: loop(min(loop_n, 2000)), 1, time.process_time)
        for size in (_sizes(max_targets) if kind == "pose" else [max_targets]):
            s_batch, result = _best(lambda: fabrik.solve_batch(arm, targets(size)), repeats)
            same = all(np.array_equal(result.joint_angles[k], s.joint_angles) and result.iterations[k] == s.iterations
                       and result.status_names[result.status[k]] == s.status for k, s in enumerate(singles[:size]))
            rows.append({"targets": size, "kind": kind, "solve loop": loop_rate, "batch": size / s_batch,
                         "batch / loop": (size / s_batch) / loop_rate, "reached": float(result.reached.mean()),
                         "identical": bool(same)})
        cpu_n = min(CPU_TARGETS * 5, max_targets)
        s_cpu, _ = _best(lambda: fabrik.solve_batch(arm, targets(cpu_n), threads=1), repeats, time.process_time)
        rows[-1]["cpu loop us"] = cpu_loop / min(loop_n, 2000) * 1e6
        rows[-1]["cpu batch us"] = s_cpu / cpu_n * 1e6
        if progress is not None:
            progress(f"arm, {kind} targets")
    return {"arm": "fabrik.models.dhm_arm() (7 joints, cm)", "targets": "random reachable (random_angles)",
            "tol": fabrik.DEFAULT_TOL, "rows": rows}


def run_crowd_bench(characters: int = 1000, frames: int = 600, repeats: int = 1, progress=None) -> dict:
    """The crowd rows (module docstring); a JSON-ready dict."""
    skeleton, poses, roots = crowd_walk(characters, frames, FPS)
    idx = [skeleton.index(e) for e in EFFECTORS]
    paths = {e: poses[:, :, j] for e, j in zip(EFFECTORS, idx)}
    targets = np.ascontiguousarray(poses[:, :, idx])
    small = {e: v[:4, :3] for e, v in paths.items()}
    fabrik.solve_sequence(skeleton, small, initial=poses[:4, 0], root=roots[:4, :3], **OPTIONS)
    second = min(1, frames - 1)  # (a one-frame crowd warms up on its only frame)
    fabrik.solve_batch(skeleton, targets[:4, second], effectors=EFFECTORS, initial=poses[:4, 0],
                       root=roots[:4, second], **OPTIONS)
    duration = frames / FPS
    seconds, crowd = _best(lambda: fabrik.solve_sequence(skeleton, paths, initial=poses[:, 0], root=roots, **OPTIONS),
                           repeats)
    cpu, _ = _best(lambda: fabrik.solve_sequence(skeleton, paths, initial=poses[:, 0], root=roots, **OPTIONS), 1,
                   time.process_time)

    def game_loop():
        previous = poses[:, 0]
        last = None
        for f in range(frames):
            last = fabrik.solve_batch(skeleton, targets[:, f], effectors=EFFECTORS, initial=previous,
                                      root=roots[:, f], **OPTIONS)
            previous = last.positions
        return last

    s_game, last = _best(game_loop, repeats)
    s_game1, _ = _best(lambda: _with_threads(1, game_loop), repeats)
    lc, lf = min(CROWD_LOOP[0], characters), min(CROWD_LOOP[1], frames)

    def loop():
        for c in range(lc):
            previous = poses[c, 0]
            for f in range(lf):
                previous = fabrik.solve(skeleton, targets=dict(zip(EFFECTORS, targets[c, f])), initial=previous,
                                        root=roots[c, f], **OPTIONS).positions
        return previous

    s_loop, _ = _best(loop, 1)
    solves = characters * frames
    if progress is not None:
        progress("crowd")
    return {"characters": characters, "frames": frames, "fps": FPS, "effectors": list(EFFECTORS), "options": OPTIONS,
            "crowd seconds": seconds, "crowd cpu seconds": cpu, "crowd frames per second": solves / seconds,
            "crowd real-time factor": duration / seconds, "mean iterations": float(crowd.iterations.mean()),
            "reached": float(crowd.reached.mean()),
            "game loop seconds": s_game, "game loop ms per frame": s_game / frames * 1e3,
            "game loop real-time factor": duration / s_game, "game loop 1 thread seconds": s_game1,
            "game loop identical": bool(np.array_equal(last.positions, crowd.positions[:, -1])),
            "solve loop per second": lc * lf / s_loop, "crowd / solve loop": (solves / seconds) / (lc * lf / s_loop)}


def run_float32_bench(count: int = 100_000, repeats: int = 3, progress=None) -> dict | None:
    """float32 against float64 on Warp's devices, device arrays in and out (module docstring);
    None without Warp."""
    try:
        import warp as wp
    except ImportError:
        return None
    from fabrik.kernels.batch_warp import import_warp
    from fabrik_experiments.table1 import TOL, benchmark_chain, make_targets

    import_warp()
    chain = benchmark_chain()
    targets = make_targets(chain, count, seed=7)["reachable"]
    reach = chain.total_length
    devices = ["cpu"] + (["cuda"] if wp.is_cuda_available() else [])
    rows = []
    for device in devices:
        w64 = wp.array(targets, dtype=wp.float64, device=device)
        w32 = wp.array(targets.astype(np.float32), dtype=wp.float32, device=device)
        for w, precision in ((w64, "float64"), (w32, "float32")):
            fabrik.solve_batch(chain, w[:min(64, count)], tol=TOL, backend="warp", precision=precision)  # compiles
        s64, r64 = _best(lambda: _synced(wp, fabrik.solve_batch(chain, w64, tol=TOL, backend="warp")), repeats)
        s32, r32 = _best(lambda: _synced(wp, fabrik.solve_batch(chain, w32, tol=TOL, backend="warp",
                                                                 precision="float32")), repeats)
        p64, p32 = r64.positions.numpy(), r32.positions.numpy().astype(np.float64)
        bones32 = np.linalg.norm(np.diff(p32, axis=1), axis=2)
        err32 = np.linalg.norm(p32[:, -1] - targets, axis=1)
        rows.append({"device": device, "targets": count, "float64 per second": count / s64,
                     "float32 per second": count / s32,
                     "largest position difference / reach": float(np.abs(p32 - p64).max() / reach),
                     "largest bone length error / bone": float(np.abs(bones32 - chain.bone_lengths).max()
                                                               / chain.bone_lengths.min()),
                     "largest effector error (units)": float(err32.max()), "tol": TOL,
                     "same status": float((r32.status.numpy() == r64.status.numpy()).mean()),
                     "same iterations": float((r32.iterations.numpy() == r64.iterations.numpy()).mean()),
                     "mean iterations float64": float(r64.iterations.numpy().mean()),
                     "mean iterations float32": float(r32.iterations.numpy().mean())})
        if progress is not None:
            progress(f"float32, warp {device}")
    return {"chain": "Table 1 (10 joints, 9 bones x 100 units)", "targets": "reachable", "rows": rows}


def _synced(wp, result):
    wp.synchronize()
    return result


def format_model_tables(result: dict) -> str:
    """The tables of the skeleton, arm, crowd and float32 parts present in ``result``."""
    lines = []
    skel = result.get("skeleton")
    if skel:
        for name, part in skel["sets"].items():
            lines += ["", f"Skeleton batch, {skel['skeleton']}, {len(skel['effectors'])} effectors "
                      f"({', '.join(skel['effectors'])}), {name} targets, solves per second", "",
                      "| targets | solve loop | prange | batch | batch / loop | batch / prange | mean iterations | "
                      "reached | identical |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
            for r in part["sizes"]:
                lines.append(f"| {r['targets']:,} | {r['solve loop']:,.0f} | {r['prange']:,.0f} | {r['batch']:,.0f} | "
                             f"{r['batch / loop']:.1f}x | {r['batch / prange']:.2f}x | {r['mean iterations']:.1f} | "
                             f"{100 * r['reached']:.1f}% | {'yes' if r['identical'] else 'NO'} |")
            c = part["cpu_one_thread"]
            lines.append(f"One thread, CPU time per solve ({c['targets']:,} targets): loop {c['loop us']:.1f} us, "
                         f"prange {c['prange us']:.2f} us, batch {c['batch us']:.2f} us, of which set-up "
                         f"(max_iter=0) {c['set-up us']:.2f} us")
            lim = part["limited"]
            lines.append(f"With human joint limits ({lim['targets']:,} targets): loop {lim['solve loop']:,.0f}/s, "
                         f"batch {lim['batch']:,.0f}/s ({lim['batch / loop']:.1f}x), {lim['mean iterations']:.1f} "
                         f"iterations, {100 * lim['reached']:.1f}% reached, identical "
                         f"{'yes' if lim['identical'] else 'NO'}")
    arm = result.get("arm")
    if arm:
        lines += ["", f"Arm batch, {arm['arm']}, {arm['targets']} targets, solves per second", "",
                  "| targets | kind | solve loop | batch | batch / loop | reached | identical |",
                  "| ---: | --- | ---: | ---: | ---: | ---: | --- |"]
        for r in arm["rows"]:
            lines.append(f"| {r['targets']:,} | {r['kind']} | {r['solve loop']:,.0f} | {r['batch']:,.0f} | "
                         f"{r['batch / loop']:.1f}x | {100 * r['reached']:.2f}% | {'yes' if r['identical'] else 'NO'} |")
        for r in arm["rows"]:
            if "cpu batch us" in r:
                lines.append(f"One thread, CPU time per solve, {r['kind']} targets: loop {r['cpu loop us']:.1f} us, "
                             f"batch {r['cpu batch us']:.2f} us ({r['cpu loop us'] / r['cpu batch us']:.1f}x)")
    crowd = result.get("crowd")
    if crowd:
        lines += ["", f"Crowd: {crowd['characters']:,} humanoids x {crowd['frames']} frames at {crowd['fps']:g} Hz "
                  f"({crowd['frames'] / crowd['fps']:g} s), {len(crowd['effectors'])} effectors", "",
                  "| how | seconds | frames per second | real-time factor |", "| --- | ---: | ---: | ---: |",
                  f"| solve_sequence, the whole crowd | {crowd['crowd seconds']:.2f} | "
                  f"{crowd['crowd frames per second']:,.0f} | {crowd['crowd real-time factor']:.2f}x |",
                  f"| solve_batch once a frame (game loop) | {crowd['game loop seconds']:.2f} | "
                  f"{crowd['characters'] * crowd['frames'] / crowd['game loop seconds']:,.0f} | "
                  f"{crowd['game loop real-time factor']:.2f}x |",
                  f"| solve_batch once a frame, 1 thread | {crowd['game loop 1 thread seconds']:.2f} | "
                  f"{crowd['characters'] * crowd['frames'] / crowd['game loop 1 thread seconds']:,.0f} | "
                  f"{crowd['frames'] / crowd['fps'] / crowd['game loop 1 thread seconds']:.2f}x |",
                  f"| fabrik.solve in a loop | | {crowd['solve loop per second']:,.0f} | |",
                  f"Mean iterations {crowd['mean iterations']:.2f}, {100 * crowd['reached']:.1f}% reached; CPU time of "
                  f"the whole crowd {crowd['crowd cpu seconds']:.2f} s; game loop {crowd['game loop ms per frame']:.2f} "
                  f"ms per frame, identical to the crowd's answers: {'yes' if crowd['game loop identical'] else 'NO'}"]
    f32 = result.get("float32")
    if f32:
        lines += ["", f"Warp, device arrays in and out, {f32['chain']}, float64 against float32", "",
                  "| device | targets | float64 /s | float32 /s | position diff / reach | bone error / bone | "
                  "effector error | same status | same iterations |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in f32["rows"]:
            lines.append(f"| {r['device']} | {r['targets']:,} | {r['float64 per second']:,.0f} | "
                         f"{r['float32 per second']:,.0f} | {r['largest position difference / reach']:.2e} | "
                         f"{r['largest bone length error / bone']:.2e} | {r['largest effector error (units)']:.2e} | "
                         f"{100 * r['same status']:.2f}% | {100 * r['same iterations']:.2f}% |")
    return "\n".join(lines)


def warp_handed_rows():
    """(a list that collects the row counts the Warp path hands back, a function that undoes the
    spy): wraps ``fabrik.solvers.batch_device.solve_skeleton_on_device``'s ``host_solve``."""
    import fabrik.solvers.batch_device as device

    rows: list[int] = []
    inner = device.solve_skeleton_on_device

    def spy(*args, host_solve, **kwargs):
        def counted(targets, *rest):
            rows.append(len(targets))
            return host_solve(targets, *rest)

        return inner(*args, host_solve=counted, **kwargs)

    device.solve_skeleton_on_device = spy
    return rows, lambda: setattr(device, "solve_skeleton_on_device", inner)
