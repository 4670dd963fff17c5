"""The comparison methods of section 5: CCD, the Jacobian family, FTL and Triangulation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik import Chain, solve
from fabrik.kernels.ccd import rotate_tail_vec
from fabrik.kernels.jacobian import fill_jacobian

SETTINGS = settings(max_examples=60, deadline=None)

JACOBIAN = ["jacobian-transpose", "jacobian-dls", "jacobian-svd-dls", "sdls"]
JACOBIAN_ALL = JACOBIAN + [m + "-tuned" for m in JACOBIAN]
RIGID = ["ccd", "triangulation"] + JACOBIAN_ALL
ALL = RIGID + ["ftl"]


def lengths_of(positions):
    return np.linalg.norm(np.diff(positions, axis=0), axis=1)


def bent_chain(dim, bone=1.0, n=7):
    """A gently bent chain of n joints (unit-scale bones, the scale Buss & Kim's settings are for)."""
    angles = np.linspace(0.0, 0.6, n - 1)
    steps = np.zeros((n - 1, dim))
    steps[:, 0] = np.sin(angles) * bone
    steps[:, 1] = np.cos(angles) * bone
    if dim == 3:
        steps[:, 2] = 0.1 * bone * np.sin(3 * angles)
    return Chain.from_positions(np.vstack([np.zeros(dim), np.cumsum(steps, axis=0)]))


def test_all_methods_registered():
    assert set(ALL) <= set(fabrik.methods())


@pytest.mark.parametrize("method", ALL)
@pytest.mark.parametrize("dim", [2, 3])
def test_reaches_easy_targets(method, dim):
    chain = bent_chain(dim)
    targets = [[2.0, 3.0, 0.5], [-3.0, 2.0, -1.0], [1.0, -2.5, 1.5], [4.0, 1.0, 0.0]]
    for t in targets:
        target = np.array(t[:dim])
        sol = solve(chain, target, method=method, tol=1e-3)
        assert sol.status == "reached", (method, t, sol)
        assert sol.error <= 1e-3
        assert np.linalg.norm(sol.positions[-1] - target) <= 1e-3 + 1e-12
        assert sol.positions.shape == (chain.n_joints, dim)
        np.testing.assert_array_equal(sol.positions[0], chain.rest_positions[0])
        if method != "ftl":
            np.testing.assert_allclose(lengths_of(sol.positions), chain.bone_lengths, rtol=1e-9)


@pytest.mark.parametrize("method", ALL)
def test_planar_chain_stays_planar(method):
    # a 3D chain lying in z = 0 with a target in z = 0 takes exactly the path a 2D chain takes
    # (2D chains are embedded in z = 0); z must stay exactly 0
    chain = bent_chain(2)
    chain3 = Chain.from_positions(np.column_stack([chain.rest_positions, np.zeros(chain.n_joints)]))
    for target in ([2.0, -3.0, 0.0], [-9.0, 1.0, 0.0], [0.0, 0.5, 0.0]):
        sol = solve(chain3, target, method=method)
        assert np.all(sol.positions[:, 2] == 0.0), (method, target)


@pytest.mark.parametrize("planar", [False, True])
def test_jacobian_matches_finite_differences(planar):
    rng = np.random.default_rng(3)
    p = np.cumsum(rng.normal(size=(6, 3)), axis=0)
    if planar:
        p[:, 2] = 0.0
    jac = np.zeros((3, 15))
    fill_jacobian(p, planar, jac)
    h = 1e-6
    for j in range(5):
        for axis in range(3):
            if planar and axis < 2:
                np.testing.assert_array_equal(jac[:, 3 * j + axis], 0.0)
                continue
            w = np.zeros(3)
            w[axis] = h
            plus = p.copy()
            rotate_tail_vec(plus, j, j + 1, w[0], w[1], w[2])
            minus = p.copy()
            rotate_tail_vec(minus, j, j + 1, -w[0], -w[1], -w[2])
            fd = (plus[-1] - minus[-1]) / (2 * h)
            np.testing.assert_allclose(jac[:, 3 * j + axis], fd, rtol=1e-6, atol=1e-6)


def test_ftl_reports_length_drift():
    chain = bent_chain(3)
    sol = solve(chain, [2.0, 3.0, 0.5], method="ftl")
    drift = sol.extras["max_length_drift"]
    measured = np.max(np.abs(lengths_of(sol.positions) - chain.bone_lengths) / chain.bone_lengths)
    assert drift == pytest.approx(measured, rel=1e-9, abs=1e-15)
    # unreachable: FTL stretches the chain onto the target
    far = solve(chain, [20.0, 0.0, 0.0], method="ftl")
    assert far.status == "unreachable"
    assert far.error <= 1e-9
    assert far.extras["max_length_drift"] > 0.5
    assert lengths_of(far.positions).sum() >= 20.0 - 1e-9


@pytest.mark.parametrize("far", [1e20, 1e67])
def test_ftl_length_drift_is_measured_at_far_targets(far):
    # the fuzzing run's case: a target 1e67 away; the report must equal the pose's own drift
    chain = bent_chain(3)
    sol = solve(chain, [far, far / 10, 0.0], method="ftl")
    measured = np.max(np.abs(lengths_of(sol.positions) - chain.bone_lengths) / chain.bone_lengths)
    assert np.isfinite(sol.positions).all()
    assert sol.extras["max_length_drift"] == pytest.approx(measured, rel=1e-9)


def test_ftl_target_at_full_reach_is_reached():
    # a target at full reach sits a rounding error beyond it in about one direction in ten;
    # FTL pins the effector on it, so "unreachable" with error 0 contradicted itself
    chain = Chain.straight(5, 0.7)
    directions = np.random.default_rng(0).normal(size=(60, 3))
    for d in directions / np.linalg.norm(directions, axis=1, keepdims=True):
        sol = solve(chain, d * chain.total_length, method="ftl")
        assert sol.status == "reached", (d, sol)


@st.composite
def chain_and_reachable_target(draw):
    dim = draw(st.sampled_from([2, 3]))
    n = draw(st.integers(2, 9))
    lengths = np.array(draw(st.lists(st.floats(0.05, 3.0), min_size=n - 1, max_size=n - 1)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dirs = rng.normal(size=(n - 1, dim))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    root = rng.uniform(-2, 2, size=dim)
    chain = Chain.from_positions(np.vstack([root, root + np.cumsum(dirs * lengths[:, None], axis=0)]))
    inner, outer = chain.inner_reach, chain.total_length
    frac = draw(st.floats(0.0, 1.0))
    radius = inner + frac * (outer - inner)
    u = rng.normal(size=dim)
    u /= np.linalg.norm(u)
    return chain, root + radius * u


@SETTINGS
@given(chain_and_reachable_target())
def test_triangulation_reaches_every_reachable_target_in_one_pass(case):
    chain, target = case
    sol = solve(chain, target, method="triangulation", tol=1e-9 * chain.total_length)
    assert sol.status == "reached", sol
    assert sol.iterations <= 1
    np.testing.assert_allclose(lengths_of(sol.positions), chain.bone_lengths, rtol=1e-9, atol=1e-12)
    assert np.isfinite(sol.positions).all()


@pytest.mark.parametrize("method", RIGID)
@pytest.mark.parametrize("target", [[8.0, 1.0, 0.5], [0.0, -12.0, 0.0], [-3.0, 9.0, -4.0]])
def test_unreachable_target_leaves_chain_pointing_at_it(method, target):
    chain = bent_chain(3)
    target = np.array(target)
    sol = solve(chain, target, method=method, tol=1e-4)
    excess = sol.error - (np.linalg.norm(target - sol.positions[0]) - chain.total_length)
    # "unreachable" only as close as the chain can come; a solve that stops further off (CCD
    # straightens sublinearly) says it stalled
    assert sol.status == ("unreachable" if excess <= 1e-4 else "stalled"), (sol, excess)
    p = sol.positions
    aim = (target - p[0]) / np.linalg.norm(target - p[0])
    # every joint on the ray from the root towards the target, i.e. the chain straight at it
    for q in p[1:]:
        off = (q - p[0]) - np.dot(q - p[0], aim) * aim
        assert np.linalg.norm(off) <= 1e-2 * chain.total_length, (method, q)
    assert sol.error == pytest.approx(np.linalg.norm(target - p[0]) - chain.total_length, abs=1e-2)
    np.testing.assert_allclose(lengths_of(p), chain.bone_lengths, rtol=1e-9)


@pytest.mark.parametrize("method", ["fabrik", *RIGID])
@pytest.mark.parametrize("lengths, target, best", [
    ([2.0, 1.0], [0.0, 0.0, 0.0], 1.0),          # on the root: the inner reach is 1
    ([2.0, 1.0], [0.0, 0.5, 0.0], 0.5),          # on the line, ahead
    ([2.0, 1.0], [0.0, -0.5, 0.0], 0.5),         # on the line, behind: the chain must swing round
    ([2.0, 1.0], [1e-3, -0.5, 0.0], 0.5),        # a hair off that line
    ([3.0, 1.0, 1.0], [0.0, 0.2, 0.0], 0.8),
])
def test_targets_inside_the_inner_reach_on_a_straight_chain(method, lengths, target, best):
    """A straight chain pointing along the line of a target it cannot fold onto: every method
    either comes as close as the chain can (``unreachable``), says it stopped short
    (``stalled``) or ran to its cap, never "unreachable" further off; FABRIK, CCD and
    Triangulation bend out of the line and get there."""
    chain = Chain.from_positions(np.vstack([[0.0, 0.0, 0.0], np.cumsum([[0.0, b, 0.0] for b in lengths], axis=0)]))
    sol = solve(chain, target, method=method, tol=1e-4)
    assert sol.status != "reached"
    if sol.status == "unreachable":
        assert sol.error <= best + 1e-4, sol
    elif sol.status == "stalled":
        assert sol.error > best + 1e-4, sol
    if method in ("fabrik", "ccd", "triangulation"):
        assert sol.status == "unreachable" and sol.error == pytest.approx(best, abs=1e-4), sol
    np.testing.assert_allclose(lengths_of(sol.positions), lengths, rtol=1e-9)


DEGENERATE = [
    ("zero-length bones", [[0, 0, 0], [0, 1, 0], [0, 1, 0], [0, 2, 0], [0, 2, 0], [1, 2, 0]], [0.5, 1.5, 0.3]),
    ("target at root", [[0, 0, 0], [0, 1, 0], [0.5, 1.8, 0], [1.2, 2.2, 0.3]], [0.0, 0.0, 0.0]),
    ("straight, target on the line", [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], [0.0, 1.5, 0.0]),
    ("straight, target behind", [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], [0.0, -1.5, 0.0]),
    # a hair off the line: the Jacobian methods' first steps are too small to count as progress
    ("straight, target a hair off the line", [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], [1e-3, 1.5, 0.0]),
    ("straight, unreachable behind", [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], [0.0, -7.0, 0.0]),
    ("all joints at one point", [[0, 0, 0], [0, 0, 0], [0, 0, 0]], [1.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("method", ALL)
@pytest.mark.parametrize("name,points,target", DEGENERATE, ids=[d[0] for d in DEGENERATE])
def test_degenerate_cases_never_nan(method, name, points, target):
    chain = Chain.from_positions(points)
    sol = solve(chain, target, method=method, max_iter=200)
    assert np.isfinite(sol.positions).all() and math.isfinite(sol.error)
    assert sol.status in fabrik.STATUSES
    if method != "ftl":
        np.testing.assert_allclose(lengths_of(sol.positions), chain.bone_lengths, rtol=1e-9, atol=1e-9)
    if name.startswith("straight, target") and method != "ftl":
        # the collinear singularity is left (bend) and the target reached
        assert sol.status == "reached", sol


@pytest.mark.parametrize("method", ALL)
def test_inputs_not_mutated_and_moved_root(method):
    chain = bent_chain(3)
    initial = chain.rest_positions.copy()
    initial.setflags(write=True)
    before = initial.copy()
    root = np.array([0.5, -0.5, 0.25])
    sol = solve(chain, [2.5, 2.5, 0.5], method=method, initial=initial, root=root)
    np.testing.assert_array_equal(initial, before)
    np.testing.assert_array_equal(sol.positions[0], root)
    assert sol.reached


@pytest.mark.parametrize("method", ALL)
def test_unknown_option_is_an_error(method):
    with pytest.raises(ValueError, match="option"):
        solve(bent_chain(3), [1.0, 2.0, 0.0], method=method, not_an_option=1)


def test_jacobian_options_are_checked_and_used():
    chain = bent_chain(3)
    with pytest.raises(ValueError, match="damping"):
        solve(chain, [1.0, 2.0, 0.0], method="jacobian-dls", damping=-1.0)
    with pytest.raises(ValueError, match="alpha"):
        solve(chain, [1.0, 2.0, 0.0], method="jacobian-dls", alpha=0.1)
    light = solve(chain, [2.0, 3.0, 0.5], method="jacobian-dls", damping=0.01)
    heavy = solve(chain, [2.0, 3.0, 0.5], method="jacobian-dls", damping=5.0)
    assert light.reached and heavy.reached
    assert heavy.iterations > light.iterations
    fixed = solve(chain, [2.0, 3.0, 0.5], method="jacobian-transpose", alpha=0.01)
    assert fixed.reached


def test_argument_types_are_named():
    chain = fabrik.Chain.straight(3)
    with pytest.raises(ValueError, match="method must be a method name"):
        fabrik.solve(chain, [0, 1, 1], method=["fabrik"])
    with pytest.raises(ValueError, match="tol must be a number"):
        fabrik.solve(chain, [0, 1, 1], tol="1e-3")
    with pytest.raises(ValueError, match="kind must be"):
        fabrik.methods("tree")


def test_coordinates_too_large_to_square_are_refused():
    chain = fabrik.Chain.straight(4)
    with pytest.raises(ValueError, match="coordinates must stay below"):
        fabrik.solve(chain, [1e308, 1e308, 1e308])
    with pytest.raises(ValueError, match="coordinates must stay below"):
        fabrik.Chain.straight(4, 1e80)


def test_unconstrained_methods_keep_bone_lengths_over_six_decades():
    # docs/conventions.md, "Scale": drift grows like 1e-16 x reach / bone; at 6 decades every
    # unconstrained chain method keeps each bone to about 1e-9 of its length
    from fabrik_experiments.scale_drift import run
    (row,) = run([6.0], chains=6)
    assert max(row["max_relative_drift"].values()) < 1e-8
