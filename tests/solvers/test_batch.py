"""fabrik.solve_batch: every answer is fabrik.solve's, in every layout and backend; bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import fabrik
from fabrik import Chain, Cone
from fabrik.solvers import batch as batch_mod
from fabrik_experiments.table1 import benchmark_chain, make_targets

LAYOUTS = batch_mod.LAYOUTS


def assert_same_as_solve(chain, targets, result, *, initial=None, root=None, tol=1e-3, max_iter=None, rtol=0.0):
    """Target k of ``result`` equals ``fabrik.solve`` on target k (bit for bit when rtol is 0)."""
    assert result.positions.shape == (len(targets), chain.n_joints, chain.dim)
    for k, target in enumerate(targets):
        start = None if initial is None else (initial if np.ndim(initial) == 2 else initial[k])
        base = None if root is None else (root if np.ndim(root) == 1 else root[k])
        single = fabrik.solve(chain, target, initial=start, root=base, tol=tol, max_iter=max_iter)
        scale = chain.total_length
        np.testing.assert_allclose(result.positions[k], single.positions, rtol=rtol, atol=rtol * scale,
                                   err_msg=f"target {k}")
        assert result.iterations[k] == single.iterations, k
        np.testing.assert_allclose(result.error[k], single.error, rtol=rtol, atol=rtol * scale)
        assert result.status_names[result.status[k]] == single.status, k
        assert result.reached[k] == single.reached


@pytest.fixture(scope="module")
def table1():
    chain = benchmark_chain()
    return chain, make_targets(chain, 400, seed=7)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", ["reachable", "unreachable"])
def test_table1_targets_match_solve(table1, layout, kind):
    chain, targets = table1
    result = fabrik.solve_batch(chain, targets[kind], layout=layout)
    assert_same_as_solve(chain, targets[kind], result)
    expected = 0 if kind == "reachable" else 1
    assert (result.status == expected).all()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_per_target_initial_and_root_match_solve(layout):
    """Random start poses (folded ones stall and are bent: the hand-back path), one per target,
    and moved roots."""
    rng = np.random.default_rng(3)
    chain = Chain.straight(6, 1.0, dim=3, axis=1)
    count = 150
    initial = np.empty((count, 6, 3))
    for k in range(count):
        d = rng.normal(size=(5, 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        if k % 5 == 0:
            d[:] = [0.0, 1.0, 0.0]  # straight: targets on its line stall first
        initial[k] = np.vstack([np.zeros(3), np.cumsum(d, axis=0)])
    targets = rng.normal(size=(count, 3)) * 3.0
    targets[::5] = [0.0, 2.5, 0.0]  # on the straight chain's line, inside its reach
    roots = rng.normal(size=(count, 3)) * 0.2
    result = fabrik.solve_batch(chain, targets, initial=initial, root=roots, layout=layout)
    assert_same_as_solve(chain, targets, result, initial=initial, root=roots)
    assert set(result.status_names[s] for s in result.status) >= {"reached", "unreachable"}


@pytest.mark.parametrize("max_iter", [0, 1, 3])
def test_small_caps_match_solve(table1, max_iter):
    chain, targets = table1
    result = fabrik.solve_batch(chain, targets["reachable"][:100], max_iter=max_iter)
    assert_same_as_solve(chain, targets["reachable"][:100], result, max_iter=max_iter)
    if max_iter == 1:
        assert (result.status == 3).any()


def test_2d_chain_and_shared_initial():
    chain = Chain.from_positions(np.array([[0.0, 0.0], [1.0, 0.0], [1.5, 0.5], [2.0, 0.0]]))
    rng = np.random.default_rng(1)
    targets = rng.uniform(-3, 3, size=(80, 2))
    start = np.array([[0.0, 0.0], [0.0, 1.0], [0.5, 1.5], [0.5, 2.2]])
    start[3] = start[2] + (start[3] - start[2]) / np.linalg.norm(start[3] - start[2]) * chain.bone_lengths[2]
    result = fabrik.solve_batch(chain, targets, initial=start, tol=1e-6)
    assert result.positions.shape == (80, 4, 2)
    assert_same_as_solve(chain, targets, result, initial=start, tol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), arrays(np.float64, (12, 3), elements=st.floats(-4, 4, allow_nan=False)),
       st.floats(0.05, 2.0), st.sampled_from([0.0, 1e-6, 1e-3]))
def test_property_any_chain_any_target(n_joints, targets, bone, tol):
    """For any straight chain, targets and tol, the lockstep batch answers as single solves do."""
    chain = Chain.straight(n_joints, bone, dim=3, axis=0)
    result = fabrik.solve_batch(chain, targets, tol=tol, max_iter=300)
    assert_same_as_solve(chain, targets, result, tol=tol, max_iter=300)


@pytest.mark.parametrize("count", [1, 3, 5, 7, 100])
def test_lanes_left_idle_match(table1, count):
    """Batches that leave some of the LANES lanes without a target (a chunk's remainder; fewer
    targets than lanes run per-thread) answer as the baseline does."""
    chain, targets = table1
    mixed = np.vstack([targets["reachable"][:90], targets["unreachable"][:10]])[:count]
    result = fabrik.solve_batch(chain, mixed, threads=1)
    reference = fabrik.solve_batch(chain, mixed, layout="baseline")
    np.testing.assert_array_equal(result.positions, reference.positions)
    np.testing.assert_array_equal(result.iterations, reference.iterations)
    np.testing.assert_array_equal(result.status, reference.status)


def test_inputs_never_written_and_threads(table1):
    chain, targets = table1
    t = targets["reachable"][:50].copy()
    before = t.copy()
    one = fabrik.solve_batch(chain, t, threads=1)
    many = fabrik.solve_batch(chain, t)
    np.testing.assert_array_equal(t, before)
    np.testing.assert_array_equal(one.positions, many.positions)


def test_progress_in_pieces(table1, monkeypatch):
    chain, targets = table1
    monkeypatch.setattr(batch_mod, "PROGRESS_PIECE", 64)
    pieces = fabrik.solve_batch(chain, targets["reachable"], progress=True)
    whole = fabrik.solve_batch(chain, targets["reachable"])
    np.testing.assert_array_equal(pieces.positions, whole.positions)
    np.testing.assert_array_equal(pieces.iterations, whole.iterations)


def test_result_record(table1):
    chain, targets = table1
    result = fabrik.solve_batch(chain, np.vstack([targets["reachable"][:3], targets["unreachable"][:2]]))
    assert len(result) == 5
    assert list(result.statuses()) == ["reached"] * 3 + ["unreachable"] * 2
    assert result.status_names == fabrik.STATUSES
    assert "reached 3" in repr(result) and "unreachable 2" in repr(result)
    with pytest.raises(AttributeError):
        result.positions = None


@pytest.mark.parametrize("call, message", [
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), method="ccd"), "supports methods fabrik, fabrik-constrained"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), method="nope"), "unknown method"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), method=3), "method must be a method name"),
    (lambda c: fabrik.solve_batch(c, (np.zeros((3, 3)), np.tile(np.eye(3), (2, 1, 1)))), "one rotation per target"),
    (lambda c: fabrik.solve_batch(c, (np.zeros((2, 3)), [np.eye(3), np.ones((3, 3))])), "rotation"),
    (lambda c: fabrik.solve_batch(c.with_constraints({1: Cone(0.5, 0.5, 0.5, 0.5)}), np.zeros((3, 3)),
                                  backend="warp"), "fabrik-constrained runs on backend 'numba'"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 2))), "targets must have shape"),
    (lambda c: fabrik.solve_batch(c, np.zeros(3)), "targets must have shape"),
    (lambda c: fabrik.solve_batch(c, np.zeros((0, 3))), "targets is empty"),
    (lambda c: fabrik.solve_batch(c, [[0.0, np.nan, 0.0]]), "targets contains a non-finite"),
    (lambda c: fabrik.solve_batch(c, [[0.0, 1j, 0.0]]), "targets must be real numbers"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), initial=np.zeros((2, 3, 3))), "initial must have shape"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), initial=np.zeros((4, 2))), "initial must have shape"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), root=np.zeros((2, 3))), "root must have shape"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), tol=-1.0), "tol must be"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), max_iter=-2), "max_iter must be"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), backend="cuda"), "backend must be one of"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), layout="soa"), "layout must be one of"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), layout=["lockstep"]), "layout must be one of"),
    # issue 40: Warp ignored the layout silently
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), backend="warp", layout="per-thread"),
     "layout='per-thread' is for backend 'numba'"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), backend="warp", layout="lockstep"), "is for backend 'numba'"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), threads=0), "threads must be"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), device="cpu"), "device is a Warp option"),
    (lambda c: fabrik.solve_batch(c, np.zeros((3, 3)), damping=1.0), "takes no option 'damping'; it takes turn_start"),
    (lambda c: fabrik.solve_batch(c.with_constraints({1: Cone(0.5, 0.5, 0.5, 0.5)}), np.zeros((3, 3)),
                                  damping=1.0), "orientation_tol"),
    (lambda c: fabrik.solve_batch("chain", np.zeros((3, 3))), "solves a fabrik.Chain"),
])
def test_bad_input(call, message):
    chain = Chain.straight(4, 1.0)
    with pytest.raises(ValueError, match=message):
        call(chain)


@pytest.mark.parametrize("kind", ["reachable", "unreachable"])
def test_warp_cpu_matches_numba(table1, kind):
    pytest.importorskip("warp", reason="NVIDIA Warp is not installed (pip install warp-lang, the 'gpu' extra)")
    chain, targets = table1
    cpu = fabrik.solve_batch(chain, targets[kind])
    warp = fabrik.solve_batch(chain, targets[kind], backend="warp", device="cpu")
    np.testing.assert_allclose(warp.positions, cpu.positions, rtol=1e-9, atol=1e-9 * chain.total_length)
    np.testing.assert_allclose(warp.error, cpu.error, rtol=1e-9, atol=1e-9 * chain.total_length)
    np.testing.assert_array_equal(warp.iterations, cpu.iterations)
    np.testing.assert_array_equal(warp.status, cpu.status)


def test_warp_cpu_hand_back_matches_solve():
    """Per-target starts with stalls and bends (handed back to the CPU kernel), moved roots, 2D."""
    pytest.importorskip("warp", reason="NVIDIA Warp is not installed (pip install warp-lang, the 'gpu' extra)")
    rng = np.random.default_rng(5)
    chain = Chain.straight(5, 1.0, dim=3, axis=1)
    count = 60
    initial = np.tile(chain.rest_positions, (count, 1, 1))
    targets = rng.normal(size=(count, 3)) * 2.5
    targets[::4] = [0.0, 3.0, 0.0]  # on the straight chain's line: stall, bend
    roots = rng.normal(size=(count, 3)) * 0.1
    result = fabrik.solve_batch(chain, targets, initial=initial, root=roots, backend="warp", device="cpu")
    assert_same_as_solve(chain, targets, result, initial=initial, root=roots, rtol=1e-9)
    with pytest.raises(ValueError, match="device"):
        fabrik.solve_batch(chain, targets, backend="warp", device="no-such-device")


def test_constrained_chain_matches_solve():
    """A chain with limits goes to fabrik-constrained, as in fabrik.solve: positions, frames,
    iterations, errors and statuses equal target by target."""
    deg = np.pi / 180
    chain = Chain.straight(6, 1.0).with_constraints({i: Cone(*(np.array([30, 50, 40, 60]) * deg)) for i in range(1, 5)})
    rng = np.random.default_rng(11)
    targets = rng.normal(size=(60, 3)) * 3.0
    result = fabrik.solve_batch(chain, targets, threads=1)
    assert result.method == "fabrik-constrained" and result.orientation_error is None
    for k, target in enumerate(targets):
        single = fabrik.solve(chain, target)
        np.testing.assert_array_equal(result.positions[k], single.positions)
        np.testing.assert_array_equal(result.frames[k], single.extras["frames"])
        assert result.iterations[k] == single.iterations and result.error[k] == single.error
        assert result.statuses()[k] == single.status


def test_oriented_targets_match_solve():
    from scipy.spatial.transform import Rotation

    deg = np.pi / 180
    chain = Chain.straight(5, 1.0).with_constraints({i: Cone(*(np.array([60, 60, 60, 60]) * deg)) for i in range(1, 4)})
    rng = np.random.default_rng(12)
    points = rng.normal(size=(30, 3)) * 2.0
    rotations = Rotation.random(30, random_state=12)
    result = fabrik.solve_batch(chain, (points, rotations), orientation_tol=1e-2)
    quats = fabrik.quat_xyzw(rotations.as_quat())  # (30, 3, 3): the quaternions' matrices, their order said
    by_quat = fabrik.solve_batch(chain, (points, quats), orientation_tol=1e-2)
    for k in range(30):
        single = fabrik.solve(chain, (points[k], rotations[k]), orientation_tol=1e-2)
        np.testing.assert_array_equal(result.positions[k], single.positions)
        assert result.orientation_error[k] == single.extras["orientation_error"]
        assert result.iterations[k] == single.iterations and result.statuses()[k] == single.status
        # a quaternion's matrix may differ from Rotation.as_matrix() by rounding: compared with its own solve
        single = fabrik.solve(chain, (points[k], quats[k]), orientation_tol=1e-2)
        np.testing.assert_array_equal(by_quat.positions[k], single.positions)


def test_bench_batch_cli(tmp_path):
    import json

    from fabrik.cli import main

    path = tmp_path / "batch.json"
    # the chain tables (the skeleton, arm, crowd and float32 parts: test_batch_models.py)
    assert main(["bench", "batch", "--targets", "300", "--repeats", "1", "--lengths", "3,6", "--parts", "chain",
                 "--json", str(path), "--plot", str(tmp_path)]) == 0
    result = json.loads(path.read_text())
    assert [row["targets"] for row in result["sizes"]] == [300]
    row = result["sizes"][0]
    assert "not identical" not in row and row["reached"] == 1.0
    assert all(row[name] > 0 for name in ("solve loop", "baseline", "per-thread", "lockstep", "lockstep 1 thread"))
    assert [r["joints"] for r in result["lengths"]] == [3, 6] and all(r["identical"] for r in result["lengths"])
    assert (tmp_path / "batch_solves_per_second.png").is_file() and (tmp_path / "batch_chain_length.png").is_file()
    assert main(["bench", "batch", "--targets", "0"]) == 2
    assert main(["bench", "batch", "--lengths", "1,x"]) == 2


def test_caps_beyond_one_slice_are_clamped_and_sliced_as_solve_does():
    """Found by benchmarks/fuzz_batch.py: max_iter=10**30 ran a limited batch for 2**62
    iterations (solve_batch did not clamp to the method's ceiling), and caps beyond
    SLICE_ITERATIONS gave other answers than fabrik.solve, which runs its kernel in slices."""
    from fabrik.constraints import Hinge, Twist

    chain = Chain.from_positions(np.array([
        [-0.23437353996507287, -0.5773489935412224, -1.5642935372454174],
        [-0.2119383716001486, -0.6029136551417824, -1.5490910016201613],
        [-0.18400551188561654, -0.6347428839009641, -1.5301631162565124],
        [0.6869536004476431, -1.627192533154985, -0.9399831488938103]])).with_constraints({
            0: (Cone(2.9861009029439485, 1.5707963267948966, 3.0915926535897933, 0.01),
                Twist(1.7005451129661866, 2.2593037412953247)),
            1: (Hinge((0.9732270238376736, 0.0, -0.22984594856569582), -2.9665170341489993, np.pi), Twist(0.0, 0.0)),
            2: (Hinge((0.8413958140319762, 0.0, -0.5404193595065486), 1.7563464382511835, np.pi),
                Twist(-3.106729220503512, -1.387371810544123))})
    targets = np.array([[-1.2318830613076999, 0.43239565788033274, -2.4345989581935292],
                        [1.4273080516022723, -1.9473657396084818, -1.882564473187785]])
    root = np.array([0.6580065029363926, 0.8790309302542227, 0.03099627453750342])
    for max_iter in (10 ** 5, 10 ** 30):
        result = fabrik.solve_batch(chain, targets, root=root, tol=1.5650316635937997e-12, max_iter=max_iter)
        for k, target in enumerate(targets):
            single = fabrik.solve(chain, target, root=root, tol=1.5650316635937997e-12, max_iter=max_iter)
            np.testing.assert_array_equal(result.positions[k], single.positions)
            assert result.iterations[k] == single.iterations <= fabrik.method("fabrik-constrained").chain.max_iter_ceiling
            assert result.statuses()[k] == single.status


@pytest.mark.parametrize("layout", LAYOUTS)
def test_plain_caps_beyond_one_slice_match_solve(layout):
    """An unconstrained batch continues a target that ended a slice max_iterations from its pose,
    as fabrik.solve's slices do: targets near a two-bone arm's own root converge sublinearly
    (docs/conventions.md, "Known limits"), past one slice of 10,000 iterations."""
    chain = Chain.from_positions(np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0.0]]))
    targets = np.array([[0.0006, 0.0008, 0.001], [0.006, 0.008, 0.001], [0.06, 0.08, 0.001], [1.0, 1.0, 0.0]])
    result = fabrik.solve_batch(chain, targets, tol=1e-9, max_iter=25_000, layout=layout)
    assert (result.iterations > 10_000).sum() >= 2  # more than one slice
    assert_same_as_solve(chain, targets, result, tol=1e-9, max_iter=25_000)
