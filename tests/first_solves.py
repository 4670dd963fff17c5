"""Threads making their first solves at once, in a fresh interpreter (tests/project/test_threads.py runs it).

    python tests/first_solves.py [THREADS] [--batch-only]

Imports ``fabrik`` (numpy and the model types only), builds nothing else, then starts THREADS
threads (default 8) at one barrier; each makes every solve of ``cases()`` in turn: every method of
``fabrik.methods(kind)`` on a chain, a chain with limits, a skeleton, a skeleton with limits and an
arm, ``solve_batch`` in every layout, with a bent start and with limits, and ``solve_sequence``
(its whole-take and frame-by-frame paths, with and without limits). So the lazy imports,
the method registry, the compiled entry of ``fabrik.solve`` and each solver's first-compile check
are all first met by several threads at once. Afterwards one thread makes the same solves alone;
every thread's answer (positions, angles, iterations, status, bit for bit) or error (type and
message) must equal it. Prints ``OK`` and exits 0, or prints what differed and exits 1.
"""

from __future__ import annotations

import sys
import threading
import traceback

import numpy as np

import fabrik  # numpy and the model types only: the solvers load in the threads


def cases(batch_only: bool = False) -> list:
    """[(name, function making one solve)], the same list in every thread."""
    from fabrik import models
    from fabrik.constraints import Cone, humanoid

    chain = fabrik.Chain.straight(10, 100.0)
    limited = chain.with_constraints({i: Cone.circular(0.6) for i in range(9)})
    target = np.array([300.0, 400.0, 250.0])
    body = models.humanoid()
    rest = body.rest_positions()
    targets = {"l_wrist": rest[body.index("l_wrist")] + [0.1, 0.3, 0.2], "head": rest[body.index("head")] + [0.05, 0, 0]}
    limited_body = body.with_constraints(humanoid(body)[0])
    arm = models.dhm_arm()
    tip = fabrik.forward(arm, arm.random_angles(0))[0][-1]
    points = np.random.default_rng(0).uniform(-600.0, 600.0, (64, 3))
    bent = fabrik.solve(chain, target).positions if not batch_only else None
    out = []
    if not batch_only:
        for m in fabrik.methods("chain"):
            out.append((f"chain {m}", lambda m=m: fabrik.solve(chain, target, method=m)))
            out.append((f"limited chain {m}", lambda m=m: fabrik.solve(limited, target, method=m)))
        for m in fabrik.methods("skeleton"):
            out.append((f"skeleton {m}", lambda m=m: fabrik.solve(body, targets=targets, method=m)))
            out.append((f"limited skeleton {m}", lambda m=m: fabrik.solve(limited_body, targets=targets, method=m)))
        for m in fabrik.methods("arm"):
            out.append((f"arm {m}", lambda m=m: fabrik.solve(arm, tip, method=m)))
        out.append(("batch from a bent start", lambda: fabrik.solve_batch(chain, points, initial=bent)))
        paths = {name: point + np.linspace(0.0, 0.1, 4)[:, None] for name, point in targets.items()}
        for m in ("fabrik", "ccd"):  # a whole-take path and the frame-by-frame one, with and without limits
            out.append((f"sequence {m}", lambda m=m: fabrik.solve_sequence(body, paths, method=m)))
            out.append((f"limited sequence {m}", lambda m=m: fabrik.solve_sequence(limited_body, paths, method=m)))
    for layout in ("lockstep", "per-thread", "baseline"):
        out.append((f"batch {layout}", lambda layout=layout: fabrik.solve_batch(chain, points, layout=layout)))
    out.append(("limited batch", lambda: fabrik.solve_batch(limited, points)))
    return out


def outcome(run) -> tuple:
    """What one solve gave, comparable bit for bit: its arrays' bytes and status, or its error."""
    try:
        sol = run()
    except Exception as exc:  # noqa: BLE001 - an error is an outcome, compared with the lone thread's
        return ("raised", type(exc).__name__, str(exc))
    if isinstance(sol, fabrik.BatchSolution):
        return (sol.positions.tobytes(), sol.iterations.tobytes(), sol.error.tobytes(), sol.status.tobytes())
    if isinstance(sol, fabrik.SequenceSolution):
        return (sol.positions.tobytes(), sol.iterations.tobytes(), sol.effector_errors.tobytes(), sol.status_codes.tobytes())
    angles = b"" if sol.joint_angles is None else sol.joint_angles.tobytes()
    return (sol.positions.tobytes(), angles, sol.iterations, float(sol.error), sol.status)


def main(argv: list[str]) -> int:
    batch_only = "--batch-only" in argv
    numbers = [a for a in argv if not a.startswith("--")]
    threads = int(numbers[0]) if numbers else 8
    barrier = threading.Barrier(threads)
    results: list[dict] = [{} for _ in range(threads)]

    def work(k: int) -> None:
        barrier.wait()
        try:
            for name, run in cases(batch_only):
                results[k][name] = outcome(run)
        except Exception:  # noqa: BLE001 - building the cases failed: reported below
            results[k]["<cases>"] = ("raised", "setup", traceback.format_exc())

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    alone = {name: outcome(run) for name, run in cases(batch_only)}
    bad = []
    for k, got in enumerate(results):
        for name in sorted(set(got) | set(alone)):
            if got.get(name) != alone.get(name):
                g, a = got.get(name), alone.get(name)
                bad.append(f"thread {k}, {name}: {g if g is None or g[0] == 'raised' else 'answered'}; alone: "
                           f"{a if a is None or a[0] == 'raised' else 'answered'}")
    print(f"{len(alone)} solves in each of {threads} threads")
    print("\n".join(bad[:40]) if bad else "OK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
