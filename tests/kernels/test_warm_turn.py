"""FABRIK's ``turn_start``: a bent start pose is turned rigidly about its root towards the target."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik.kernels.fabrik_chain import TURN_BENT, start_bent, turn_to_target
from fabrik_experiments.table1 import benchmark_chain

SETTINGS = settings(max_examples=100, deadline=None)


def bent_pose(rng, n, planar=False):
    """A random pose of n joints with unit bones, bent by up to 60 degrees per joint."""
    directions = [np.array([1.0, 0.0, 0.0])]
    for _ in range(n - 2):
        turn = rng.normal(size=3)
        if planar:
            turn[:2] = 0.0
        turn *= rng.uniform(0.3, 1.0) / np.linalg.norm(turn)
        d = directions[-1] + np.cross(turn, directions[-1])
        directions.append(d / np.linalg.norm(d))
    return np.vstack([np.zeros(3), np.cumsum(directions, axis=0)])


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 12), planar=st.booleans())
def test_the_turn_is_rigid_about_the_root_and_points_the_effector_at_the_target(seed, n, planar):
    rng = np.random.default_rng(seed)
    p = bent_pose(rng, n, planar)
    if planar:
        p[:, 2] = 0.0
    total = float(n - 1)
    target = rng.normal(size=3) * total
    if planar:
        target[2] = 0.0
    root = p[0].copy()
    before = p.copy()
    turned = turn_to_target(p, root, target, total)
    assert np.array_equal(p[0], before[0])
    # every distance between joints is kept: a rigid turn
    dist = lambda q: np.linalg.norm(q[:, None] - q[None], axis=2)  # noqa: E731
    np.testing.assert_allclose(dist(p), dist(before), atol=1e-12 * total)
    if planar:
        assert np.all(p[:, 2] == 0.0)
    if turned:
        u = (p[-1] - p[0]) / np.linalg.norm(p[-1] - p[0])
        v = (target - root) / np.linalg.norm(target - root)
        assert np.linalg.norm(u - v) < 1e-12
    else:
        assert np.array_equal(p, before)


def test_a_straight_start_is_not_turned_so_cold_solves_are_algorithm_1():
    chain = benchmark_chain()
    assert not start_bent(chain._kernel_rest, chain.total_length)
    for target in ([300.0, 200.0, 100.0], [-500.0, 10.0, 0.0], [0.0, 0.0, 700.0]):
        a = fabrik.solve(chain, target)
        b = fabrik.solve(chain, target, turn_start=False)
        assert a.positions.tobytes() == b.positions.tobytes() and a.iterations == b.iterations
    # a pose bent by less than TURN_BENT of the chain's length is left alone too
    nearly = chain.rest_positions.copy()
    nearly[4, 1] += 0.5 * TURN_BENT * chain.total_length
    assert not start_bent(np.ascontiguousarray(nearly), chain.total_length)


def test_a_start_already_within_tol_is_returned_as_it_is():
    chain = fabrik.Chain.straight(6, 1.0)
    start = fabrik.solve(chain, [2.0, 3.0, 1.0], tol=1e-9).positions
    sol = fabrik.solve(chain, [2.0, 3.0, 1.0 + 1e-4], initial=start, tol=1e-3)
    assert sol.iterations == 0 and np.array_equal(sol.positions, start)


def test_warm_started_tracking_takes_fewer_iterations_with_the_turn():
    """The Table 1 chain tracking a closed curve in steps of 1% of its reach (the path of
    ``benchmarks/call_overhead.py``): measured 4.96 iterations per solve with the turn against 6.55
    without, over 3,000 targets (``benchmarks/warm_start_rate.py``)."""
    chain = benchmark_chain()
    reach = chain.total_length
    t = np.linspace(0.0, 4.0 * np.pi, 600, endpoint=False)
    radius = reach * (0.5 + 0.2 * np.sin(3.0 * t))
    path = np.stack([radius * np.cos(t), radius * np.sin(t), 0.25 * reach * np.sin(2.0 * t)], axis=1)
    mean_iterations = {}
    for turn in (True, False):
        previous, iterations = chain.rest_positions, []
        for target in path:
            sol = fabrik.solve(chain, target, initial=previous, turn_start=turn)
            assert sol.status == "reached"
            iterations.append(sol.iterations)
            previous = sol.positions
        mean_iterations[turn] = np.mean(iterations[10:])
    assert mean_iterations[True] < 0.85 * mean_iterations[False], mean_iterations


def test_turn_start_must_be_a_bool():
    import pytest

    with pytest.raises(ValueError, match="turn_start must be True or False"):
        fabrik.solve(fabrik.Chain.straight(3), [1.0, 1.0, 0.0], turn_start="yes")
