"""Every solve ends whatever tol and max_iter are (cases found by fuzzing, pinned): a tol below
rounding with no cap, each method's max_iter ceiling, long solves run in slices and stopped
between them."""

import numpy as np
import pytest

import fabrik
from fabrik.constraints import Cone

HUGE = np.array([[0, 0, 0], [1e12, 0, 0], [2e12, 0, 0], [3e12, 0, 0.0]])
FAR = [3.4e22, 1.3e22, -1.1e22]


@pytest.mark.parametrize("method", ["fabrik", "ccd", "jacobian-transpose", "jacobian-dls", "jacobian-svd-dls", "sdls",
                                    "ftl", "triangulation"])
@pytest.mark.parametrize("limited", [False, True])
def test_a_tol_below_rounding_and_no_cap_still_end(method, limited):
    # tol 1e-12 on bones of 1e12: every step moves the effector by more than tol through rounding
    # alone, and max_iter 1e30 is no cap; a damped least squares solve once swung the chain for ever
    chain = fabrik.Chain.from_positions(HUGE)
    if limited:
        if method in ("ftl", "triangulation"):
            pytest.skip("no joint limits for this method")
        chain = chain.with_constraints({1: Cone.circular(1.0)})
    sol = fabrik.solve(chain, FAR, method=method, tol=1e-12, max_iter=10**30)
    assert sol.status == "unreachable", sol
    assert sol.iterations < 10_000
    assert np.isfinite(sol.positions).all()


# --- max_iter ceilings and interruptible long solves ------------------------------------------------

def test_every_method_reports_its_max_iter_ceiling():
    from fabrik.solvers.registry import MAX_ITER_CEILING_FACTOR

    assert fabrik.method("fabrik").chain.max_iter_ceiling == 1_000_000
    assert fabrik.method("jacobian-dls").chain.max_iter_ceiling == 10_000_000
    for kind in ("chain", "skeleton", "arm"):
        for name in fabrik.methods(kind):
            solver = getattr(fabrik.method(name), kind)
            assert solver.max_iter_ceiling == MAX_ITER_CEILING_FACTOR * solver.max_iter


@pytest.mark.parametrize("limited", [False, True])
def test_a_solve_over_the_slice_size_gives_the_whole_answer(monkeypatch, limited):
    """Slices of 2 iterations, each warm-started from the last, reach the target of a solve that
    needs more, and the answer counts every slice's iterations."""
    from fabrik.solvers import registry

    chain = fabrik.Chain.straight(6)
    if limited:
        chain = chain.with_constraints({i: Cone.circular(1.2) for i in range(5)})
    target = [2.0, 3.0, 1.0]
    whole = fabrik.solve(chain, target, tol=1e-6)
    assert whole.status == "reached" and whole.iterations > 2
    monkeypatch.setattr(registry, "SLICE_ITERATIONS", 2)
    sliced = fabrik.solve(chain, target, tol=1e-6, max_iter=10**30)
    assert sliced.status == "reached" and sliced.error <= 1e-6 and sliced.iterations > 2
    capped = fabrik.solve(chain, target, tol=1e-6, max_iter=3)
    assert capped.status == "max_iterations" and capped.iterations == 3
    skel = fabrik.models.humanoid()
    if limited:
        skel = skel.with_constraints(fabrik.constraints.humanoid(skel)[0])
    goal = {"l_wrist": skel.rest_positions()[skel.index("l_wrist")] + [0.1, 0.3, 0.2]}
    monkeypatch.setattr(registry, "SLICE_ITERATIONS", 10**6)
    whole = fabrik.solve(skel, targets=goal, tol=1e-9)
    monkeypatch.setattr(registry, "SLICE_ITERATIONS", 1)
    sol = fabrik.solve(skel, targets=goal, tol=1e-9, max_iter=10**30)
    assert sol.status == whole.status and sol.iterations >= whole.iterations
    assert sol.error <= max(whole.error, 1e-9)


def test_ctrl_c_stops_a_long_solve_between_slices(monkeypatch):
    """A KeyboardInterrupt arriving while a kernel runs is raised when that slice returns: a
    solve that would run a million slices stops within a fraction of a second."""
    import _thread
    import signal
    import threading

    from fabrik.solvers import api, registry

    monkeypatch.setattr(registry, "SLICE_ITERATIONS", 1)  # a million slices: many seconds
    chain = fabrik.Chain.straight(10)
    solver = fabrik.method("fabrik").chain
    calls = []

    def run(start, rest, opts):  # a real kernel call, never done
        calls.append(rest)
        sol = solver.solve(chain, np.array([3.0, 4.0, 1.0]), None, start, start[0], 1e-3, rest, opts)
        return sol._replace(status="max_iterations", iterations=rest)  # as if it used the whole slice

    # Python's own Ctrl-C handler, whatever an earlier test or library (a Dask cluster) left: with
    # SIGINT ignored or at its default, interrupt_main does nothing
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    # compiled before the clock starts (a first call compiles for seconds on a fresh machine)
    solver.solve(chain, np.array([3.0, 4.0, 1.0]), None, chain._kernel_rest, chain._kernel_rest[0], 1e-3, 1,
                 solver.defaults)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            api._in_slices(run, solver, chain._kernel_rest, 10**30, solver.defaults)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, handler)
    # stopped between slices, long before the million the cap allows
    assert 1 <= len(calls) < solver.max_iter_ceiling
