"""The most that solving skeletons side by side (a lockstep layout, as ``fabrik.kernels.batch`` runs
chains) could gain for the humanoid of ``fabrik bench batch``: its bare FABRIK iteration.

The skeleton batch (``fabrik.kernels.batch_tree``) is ``prange`` over ``fabrik_tree`` calls, the
single-solve kernel itself; a lockstep layout would run several solves' iterations interleaved,
so that the CPU overlaps their square roots and divides. This script times the bare iteration of
``fabrik.models.humanoid()`` with the 7 targeted joints of the benchmark (head, wrists, ankles,
knees; ``rigid_sub_bases=False``: every joint is on a targeted path, sub-bases at the centroid of
their children's proposals): the forward stage (targets pinned, ``bone_at_length`` proposals,
centroids) and the backward stage (``place_on_line`` from the root), nothing else (no stopping
rules, no best-pose copy, no error measure), for one solve and for K solves held in lanes (code
generated per K, each lane's values in its own locals within a joint step), in CPU time of this
process, best of ``--repeats``. It then times ``fabrik.solve_batch`` on one thread on the
benchmark's two target sets (``fabrik_experiments.batch_models_bench.skeleton_sets``) with the
full cap and with ``max_iter=0`` (the per-solve set-up), and reports what the whole solve would
gain (a) if all of its iterations sped up by the best lane factor and its set-up did not, and (b)
if only the bare iteration's share did: upper bounds for a lockstep tree layout, from measured
parts.

    PYTHONPATH=src python benchmarks/tree_lane_ceiling.py [--lanes 2,4,8] [--iterations 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

import fabrik
from fabrik import models
from fabrik_experiments.crowd_motion import EFFECTORS, OPTIONS


def topology():
    """(parents, lengths, active joints root first, slot of each joint's target or -1)."""
    body = models.humanoid()
    parents = np.asarray(body.parents, dtype=np.int64)
    lengths = body.bone_lengths
    slot = np.full(body.n_joints, -1, dtype=np.int64)
    for t, name in enumerate(EFFECTORS):
        slot[body.index(name)] = t
    return parents, lengths, np.arange(body.n_joints, dtype=np.int64), slot


@njit(error_model="numpy")
def iterations_single(P, T, parents, lengths, order, slot, iterations):
    n = P.shape[0]
    S = np.zeros((n, 3))
    C = np.zeros(n)
    root0, root1, root2 = P[0, 0], P[0, 1], P[0, 2]
    for _ in range(iterations):
        for a in range(n):
            S[a, 0] = 0.0
            S[a, 1] = 0.0
            S[a, 2] = 0.0
            C[a] = 0.0
        for a in range(n - 1, 0, -1):
            i = order[a]
            s = slot[i]
            if s >= 0:
                P[i, 0] = T[s, 0]
                P[i, 1] = T[s, 1]
                P[i, 2] = T[s, 2]
            elif C[i] > 0.0:
                w = 1.0 / C[i]
                P[i, 0] = S[i, 0] * w
                P[i, 1] = S[i, 1] * w
                P[i, 2] = S[i, 2] * w
            q = parents[i]
            x = P[i, 0] - P[q, 0]
            y = P[i, 1] - P[q, 1]
            z = P[i, 2] - P[q, 2]
            r = np.sqrt(x * x + y * y + z * z)
            f = lengths[i] / r
            S[q, 0] += P[i, 0] - f * x
            S[q, 1] += P[i, 1] - f * y
            S[q, 2] += P[i, 2] - f * z
            C[q] += 1.0
        P[0, 0], P[0, 1], P[0, 2] = root0, root1, root2
        for a in range(1, n):
            i = order[a]
            q = parents[i]
            x = P[i, 0] - P[q, 0]
            y = P[i, 1] - P[q, 1]
            z = P[i, 2] - P[q, 2]
            r = np.sqrt(x * x + y * y + z * z)
            lam = lengths[i] / r
            P[i, 0] = P[q, 0] + lam * x
            P[i, 1] = P[q, 1] + lam * y
            P[i, 2] = P[q, 2] + lam * z
    return P


def iterations_lanes(lanes: int):
    """The same iteration for ``lanes`` solves: P (n, 3, lanes), T (k, 3, lanes)."""
    L = range(lanes)
    lines = ["def run(P, T, parents, lengths, order, slot, iterations):", "    n = P.shape[0]",
             f"    S = np.zeros((n, 3, {lanes}))", "    C = np.zeros(n)",
             *[f"    r{k}0, r{k}1, r{k}2 = P[0, 0, {k}], P[0, 1, {k}], P[0, 2, {k}]" for k in L],
             "    for _ in range(iterations):", "        S[:] = 0.0", "        C[:] = 0.0",
             "        for a in range(n - 1, 0, -1):", "            i = order[a]", "            s = slot[i]",
             "            q = parents[i]", "            length = lengths[i]", "            if s >= 0:"]
    lines += [f"                P[i, 0, {k}] = T[s, 0, {k}]; P[i, 1, {k}] = T[s, 1, {k}]; P[i, 2, {k}] = T[s, 2, {k}]"
              for k in L]
    lines += ["            elif C[i] > 0.0:", "                w = 1.0 / C[i]"]
    lines += [f"                P[i, 0, {k}] = S[i, 0, {k}] * w; P[i, 1, {k}] = S[i, 1, {k}] * w; "
              f"P[i, 2, {k}] = S[i, 2, {k}] * w" for k in L]
    for k in L:
        lines += [f"            x{k} = P[i, 0, {k}] - P[q, 0, {k}]; y{k} = P[i, 1, {k}] - P[q, 1, {k}]; "
                  f"z{k} = P[i, 2, {k}] - P[q, 2, {k}]",
                  f"            f{k} = length / np.sqrt(x{k} * x{k} + y{k} * y{k} + z{k} * z{k})"]
    for k in L:
        lines += [f"            S[q, 0, {k}] += P[i, 0, {k}] - f{k} * x{k}; S[q, 1, {k}] += P[i, 1, {k}] - f{k} * y{k}; "
                  f"S[q, 2, {k}] += P[i, 2, {k}] - f{k} * z{k}"]
    lines += ["            C[q] += 1.0"]
    lines += [f"        P[0, 0, {k}] = r{k}0; P[0, 1, {k}] = r{k}1; P[0, 2, {k}] = r{k}2" for k in L]
    lines += ["        for a in range(1, n):", "            i = order[a]", "            q = parents[i]",
              "            length = lengths[i]"]
    for k in L:
        lines += [f"            x{k} = P[i, 0, {k}] - P[q, 0, {k}]; y{k} = P[i, 1, {k}] - P[q, 1, {k}]; "
                  f"z{k} = P[i, 2, {k}] - P[q, 2, {k}]",
                  f"            l{k} = length / np.sqrt(x{k} * x{k} + y{k} * y{k} + z{k} * z{k})"]
    for k in L:
        lines += [f"            P[i, 0, {k}] = P[q, 0, {k}] + l{k} * x{k}; P[i, 1, {k}] = P[q, 1, {k}] + l{k} * y{k}; "
                  f"P[i, 2, {k}] = P[q, 2, {k}] + l{k} * z{k}"]
    lines.append("    return P")
    namespace = {"np": np}
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from integers only
    return njit(error_model="numpy")(namespace["run"])


def best_time(function, args, iterations, repeats) -> float:
    function(args[0].copy(), *args[1:], 2)  # compile
    best = np.inf
    for _ in range(repeats):
        work = args[0].copy()
        start = time.process_time()
        function(work, *args[1:], iterations)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", default="2,4,8")
    parser.add_argument("--iterations", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--targets", type=int, default=20_000, help="solves of the solve_batch timing")
    args = parser.parse_args()
    from fabrik_experiments.batch_models_bench import skeleton_sets

    parents, lengths, order, slot = topology()
    rest = models.humanoid().rest_positions()
    rng = np.random.default_rng(0)
    k = len(EFFECTORS)
    targets = rest[[models.humanoid().index(e) for e in EFFECTORS]]
    single = best_time(iterations_single, (rest + rng.normal(size=rest.shape) * 0.05,
                                           targets + rng.normal(size=(k, 3)) * 0.05, parents, lengths, order, slot),
                       args.iterations, args.repeats) / args.iterations
    print("Bare iteration of the humanoid (7 targeted joints), CPU time, best of", args.repeats)
    print("lanes | ns per solve-iteration | gain over one solve")
    print(f"1 | {single * 1e9:.1f} | 1.00x")
    best_gain = 1.0
    for lanes in (int(v) for v in args.lanes.split(",")):
        P = rest[:, :, None] + rng.normal(size=rest.shape + (lanes,)) * 0.05
        T = targets[:, :, None] + rng.normal(size=(k, 3, lanes)) * 0.05
        per = best_time(iterations_lanes(lanes), (P, T, parents, lengths, order, slot), args.iterations,
                        args.repeats) / args.iterations / lanes
        best_gain = max(best_gain, single / per)
        print(f"{lanes} | {per * 1e9:.1f} | {single / per:.2f}x")
    body = models.humanoid()
    print()
    print("solve_batch on one thread, CPU time per solve. Bounds on a lockstep layout's gain: (a) every "
          f"iteration {best_gain:.2f}x faster (the best lane factor), the set-up not; (b) only the bare "
          "iteration's share of each iteration that much faster (the stopping rules, the best pose and the errors "
          "as they are)")
    print("set | mean iterations | solve us | set-up us (max_iter=0) | us per iteration | bound (a) | bound (b)")
    for name, (goal, start, root) in skeleton_sets(args.targets).items():
        def timed(**kw):
            fabrik.solve_batch(body, goal[:64], effectors=EFFECTORS, initial=start[:64], root=root[:64], threads=1,
                               **OPTIONS, **kw)
            best, out = np.inf, None
            for _ in range(args.repeats):
                t0 = time.process_time()
                out = fabrik.solve_batch(body, goal, effectors=EFFECTORS, initial=start, root=root, threads=1,
                                         **OPTIONS, **kw)
                best = min(best, time.process_time() - t0)
            return best / goal.shape[0] * 1e6, out
        full, result = timed()
        setup, _ = timed(max_iter=0)
        its = float(result.iterations.mean())
        per_it = (full - setup) / its
        bound = full / (setup + (full - setup) / best_gain)
        saved = its * single * 1e6 * (1.0 - 1.0 / best_gain)  # us: the bare iterations' time the lanes save
        print(f"{name} | {its:.1f} | {full:.2f} | {setup:.2f} | {per_it:.3f} | {bound:.2f}x | "
              f"{full / (full - saved):.2f}x")


if __name__ == "__main__":
    main()
