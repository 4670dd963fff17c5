"""The hot path of ``fabrik.solve`` on a chain (arrays given, plain FABRIK on a 3D chain): the same
answers, bit for bit, and the same errors as the checked path, and its compiled entry
(``fabrik.kernels.fabrik_chain_entry``) takes nothing it was not compiled for."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import fabrik
from fabrik import Chain
from fabrik.kernels import fabrik_chain_entry as entry
from fabrik.kernels.fabrik_chain import fabrik_chain_into
from fabrik.solvers import api

SETTINGS = settings(max_examples=60, deadline=None)


def same_solution(a, b):
    assert a.positions.tobytes() == b.positions.tobytes()
    assert (a.iterations, a.error, a.status, a.method) == (b.iterations, b.error, b.status, b.method)
    assert (a.effector_errors, dict(a.extras), a.joint_angles) == (b.effector_errors, dict(b.extras), b.joint_angles)


@st.composite
def chain_target_start(draw):
    n = draw(st.integers(2, 12))
    steps = draw(arrays(np.float64, (n - 1, 3), elements=st.floats(-3, 3, allow_nan=False)))
    steps[np.linalg.norm(steps, axis=1) < 1e-3] = [0.0, 1.0, 0.0]
    chain = Chain.from_positions(np.vstack([np.zeros(3), np.cumsum(steps, axis=0)]))
    target = draw(arrays(np.float64, 3, elements=st.floats(-40, 40, allow_nan=False)))
    start = draw(arrays(np.float64, (n, 3), elements=st.floats(-40, 40, allow_nan=False)))
    return chain, target, start


@SETTINGS
@given(chain_target_start(), st.sampled_from([1e-3, 1e-6, 0.0]))
def test_the_hot_path_answers_as_the_checked_path_and_the_old_kernel(case, tol):
    chain, target, start = case
    for initial in (None, start):
        fast = fabrik.solve(chain, target, initial=initial, tol=tol)
        # a list target (and a list start) takes the checked path
        checked = fabrik.solve(chain, target.tolist(), initial=None if initial is None else initial.tolist(), tol=tol)
        same_solution(fast, checked)
        first = chain._kernel_rest if initial is None else initial
        positions = first.copy()
        iterations, error, code = fabrik_chain_into(positions, chain._kernel_lengths, target, first[0].copy(), tol,
                                                    1000, True)
        assert fast.positions.tobytes() == positions.tobytes()
        assert (fast.iterations, fast.error, fast.status) == (iterations, error, fabrik.STATUSES[code])


def test_a_warm_start_is_neither_returned_nor_written_to():
    chain = Chain.straight(6, 1.0)
    start = fabrik.solve(chain, np.array([1.0, 2.0, 1.0])).positions
    before = start.copy()
    sol = fabrik.solve(chain, np.array([1.5, 2.0, 1.0]), initial=start)
    assert sol.positions is not start and not np.shares_memory(sol.positions, start)
    assert np.array_equal(start, before)
    again = fabrik.solve(chain, np.array([1.5, 2.0, 1.0]), initial=start)
    assert again.positions is not sol.positions and np.array_equal(again.positions, sol.positions)


@pytest.mark.parametrize("target, message", [
    (np.array([np.nan, 0.0, 0.0]), r"target contains a non-finite value \(NaN or inf\)"),
    (np.array([0.0, -np.inf, 0.0]), r"target contains a non-finite value \(NaN or inf\)"),
    (np.array([2e75, 0.0, 0.0]), "target is 2e.75 from the origin; coordinates must stay below 1e.75"),
    (np.array([1.0, 0.0]), r"target must have shape \(3,\) to match the model, got shape \(2,\)"),
    (np.zeros(4), r"target must have shape \(3,\) to match the model, got shape \(4,\)"),
    (np.zeros((1, 3)), r"target must have shape \(3,\) to match the model, got shape \(1, 3\)"),
    (np.array([1 + 1j, 0, 0]), "target must be real numbers"),
    (np.array([True, False, True]), "target must be real numbers"),
])
def test_bad_target_arrays_are_named_as_on_the_checked_path(target, message):
    chain = Chain.straight(4, 1.0)
    with pytest.raises(ValueError, match=message):
        fabrik.solve(chain, target)
    with pytest.raises(ValueError, match=message):
        fabrik.solve(chain, target, initial=chain._kernel_rest.copy())


@pytest.mark.parametrize("initial, message", [
    (np.zeros((3, 3)), "initial must have 4 joints to match the chain, got 3"),
    (np.zeros((5, 3)), "initial must have 4 joints to match the chain, got 5"),
    (np.zeros((4, 2)), "initial must be 3D to match the model, got 2D points"),
    (np.zeros(12), r"initial must have shape \(n, 2\) or \(n, 3\), got shape \(12,\)"),
    (np.array([[0, 0, 0], [0, 1, 0], [0, np.nan, 0], [0, 3, 0.0]]), r"initial contains a non-finite value .* at index \(2, 1\)"),
    (np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, np.inf]]), r"initial contains a non-finite value .* at index \(3, 2\)"),
    (np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [1e75, 3, 0]]), "initial has a coordinate of size 1e.75"),
])
def test_bad_start_arrays_are_named_as_on_the_checked_path(initial, message):
    chain = Chain.straight(4, 1.0)
    with pytest.raises(ValueError, match=message):
        fabrik.solve(chain, np.array([1.0, 1.0, 0.0]), initial=initial)


@pytest.mark.parametrize("make", [
    lambda a: a.astype(np.float32), lambda a: a.astype(np.int64), lambda a: np.asfortranarray(a),
    lambda a: np.repeat(a, 2, axis=-1)[..., ::2], "read-only",
])
def test_other_array_kinds_are_solved_as_float64_copies(make):
    chain = Chain.straight(5, 1.0)
    target = np.array([1.0, 2.0, 1.0])
    start = fabrik.solve(chain, np.array([0.0, 3.0, 1.0])).positions.round()
    expected = fabrik.solve(chain, target.tolist(), initial=start.tolist())
    if make == "read-only":
        t, s = target.copy(), start.copy()
        t.flags.writeable = s.flags.writeable = False
    else:
        t, s = make(target), make(start)
    same_solution(fabrik.solve(chain, t, initial=s), expected)
    same_solution(fabrik.solve(chain, t, initial=s, root=np.zeros(3)), expected)  # the checked path
    assert len(entry.fabrik_chain_checked.signatures) == 1


def test_between_the_entry_s_bound_and_the_coordinate_limit_the_checked_path_solves():
    chain = Chain.straight(4, 1.0)
    target = np.array([0.6e75, 0.0, 0.0])  # beyond entry.CHECK_BELOW, within MAX_COORDINATE of the origin
    assert abs(target[0]) >= entry.CHECK_BELOW
    for root in (None, np.zeros(3)):
        sol = fabrik.solve(chain, target, root=root)
        assert sol.status == "unreachable" and np.isfinite(sol.positions).all()
        np.testing.assert_allclose(sol.positions[-1], [3.0, 0.0, 0.0], atol=1e-12)
    sol = fabrik.solve(chain, np.array([1.0, 1.0, 0.0]), root=np.array([0.0, 0.6e75, 0.0]))
    assert sol.status == "unreachable" and np.array_equal(sol.positions[0], [0.0, 0.6e75, 0.0])


def test_the_entry_is_compiled_for_one_signature_and_refuses_others():
    fabrik.solve(Chain.straight(3, 1.0), np.array([1.0, 1.0, 0.0]))
    kernel = entry.prepare()
    assert len(kernel.signatures) == 1
    p, rest, lengths = np.empty((3, 3)), Chain.straight(3, 1.0)._kernel_rest, np.ones(2)
    with pytest.raises(TypeError):
        kernel(p, rest, lengths, np.array([1, 1, 0]), entry.NO_ROOT, 1e-3, 10, True)
    assert len(kernel.signatures) == 1
    # inputs it does not take come back as negative codes, nothing solved
    p[:] = 7.0
    assert kernel(p, rest, lengths, np.array([np.nan, 0, 0.0]), entry.NO_ROOT, 1e-3, 10, True)[2] == entry.CHECK_TARGET
    assert kernel(p, rest[:2], lengths, np.zeros(3), entry.NO_ROOT, 1e-3, 10, True)[2] == entry.CHECK_INITIAL
    assert kernel(p, rest, lengths, np.zeros(3), np.array([0.0, np.inf, 0.0]), 1e-3, 10, True)[2] == entry.CHECK_ROOT
    assert (p == 7.0).all()
    # a root given is the root used
    it, err, code = kernel(p, rest, lengths, np.array([1.0, 1.0, 0.0]), np.array([0.5, 0.0, 0.0]), 1e-9, 100, True)
    assert code == 0 and np.array_equal(p[0], [0.5, 0.0, 0.0])


def test_the_hot_path_is_plain_fabrik_only():
    chain = Chain.straight(4, 1.0)
    target = np.array([1.0, 1.0, 1.0])
    fabrik.solve(chain, target)
    assert api._FAST_ROUTES["fabrik"][0] is entry.fabrik_chain_checked
    # every other case takes the routed path and its own method
    assert fabrik.solve(chain, target, method="ccd").method == "ccd"
    assert api._FAST_ROUTES["ccd"] is api._NO_FAST
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        fabrik.solve(chain, target, method="nope")
    limited = chain.with_constraints({1: fabrik.Hinge((0, 0, 1), -1.0, 1.0)})
    assert fabrik.solve(limited, target).method == "fabrik-constrained"
    two = Chain.straight(4, 1.0, dim=2)
    assert fabrik.solve(two, np.array([1.0, 1.0])).positions.shape == (4, 2)
