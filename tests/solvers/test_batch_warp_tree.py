"""solve_batch(skeleton, backend="warp") on the Warp skeleton kernel (fabrik.kernels.batch_warp_tree),
run on Warp's CPU device: every row equals fabrik.solve(skeleton) with the same options (the plain
configuration rigid_sub_bases=False, swing_limbs=False, and the defaults: held rigid groups and limb
swing) to 1e-9 of the skeleton's size, with its iterations and status; rows the kernel hands back
(stalls on a line, caps beyond a slice, max_iter 0) are solved by the numba batch; device arrays
in, device arrays out; joint limits and reach_step fall back to the CPU with a warning naming them."""

import warnings

import numpy as np
import pytest

import fabrik
from fabrik import models
from fabrik_experiments.batch_models_bench import warp_handed_rows
from fabrik_experiments.crowd_motion import EFFECTORS, crowd_walk, random_poses
from test_skeleton_constraints import random_limits, random_tree

wp = pytest.importorskip("warp", reason="NVIDIA Warp is not installed (pip install warp-lang, the 'gpu' extra)")

PLAIN = {"rigid_sub_bases": False, "swing_limbs": False}
#: fabrik.solve's defaults, spelled out.
DEFAULTS = {"rigid_sub_bases": "auto", "swing_limbs": True}


@pytest.fixture(scope="module", autouse=True)
def _warp_ready():
    from fabrik.kernels.batch_warp import import_warp

    import_warp()


@pytest.fixture
def handed():
    """The row counts the Warp path handed back to the numba batch, call by call."""
    rows, undo = warp_handed_rows()
    yield rows
    undo()


def assert_rows_match(skeleton, result, names, targets, *, initial=None, root=None, atol_scale=1e-9, **options):
    """Row k of ``result`` (host or Warp arrays) equals fabrik.solve on row k (``PLAIN`` unless
    ``options`` say otherwise): positions and effector errors within ``atol_scale`` of the
    skeleton's size, iterations and status exactly."""
    host = [a.numpy() if isinstance(a, wp.array) else np.asarray(a) for a in
            (result.positions, result.iterations, result.error, result.status, result.reached, result.effector_errors)]
    positions, iterations, error, status, reached, effector_errors = host
    scale = max(1.0, float(np.sum(np.linalg.norm(np.diff(skeleton.rest_positions(), axis=0), axis=1))))
    atol = atol_scale * scale
    assert result.effectors == tuple(names)
    for k in range(len(targets)):
        start = None if initial is None else (initial if np.ndim(initial) == 2 else initial[k])
        base = None if root is None else (root if np.ndim(root) == 1 else root[k])
        single = fabrik.solve(skeleton, targets=dict(zip(names, targets[k])), initial=start, root=base,
                              **{**PLAIN, **options})
        np.testing.assert_allclose(positions[k], single.positions, rtol=0, atol=atol, err_msg=f"row {k}")
        assert iterations[k] == single.iterations, k
        assert fabrik.STATUSES[status[k]] == single.status, k
        assert reached[k] == (single.status == "reached"), k
        assert abs(error[k] - single.error) <= atol, k
        np.testing.assert_allclose(effector_errors[k], single.extras["effector_error_array"], rtol=0, atol=atol)


@pytest.mark.parametrize("n, seed", [(3, 1), (5, 2), (7, 3), (9, 4), (12, 5), (16, 6)])
def test_random_skeletons_match_solve(n, seed, handed):
    """Random trees (zero-length bones included), several effectors (inner joints and the root
    too), targets within and far beyond reach, shared or per-row starts and roots."""
    rng = np.random.default_rng(seed)
    skeleton = random_tree(rng, n)
    joints = [j for j in range(n) if rng.random() < 0.5] or [skeleton.leaves[0]]
    names = [skeleton.names[j] for j in joints]
    rest = skeleton.rest_positions()
    reach = skeleton.height() + 1.0
    count = 24
    spread = np.where(np.arange(count) % 3 == 0, 3.0, np.where(np.arange(count) % 3 == 1, 0.7, 0.2))
    targets = rest[joints][None] + rng.normal(size=(count, len(joints), 3)) * reach * spread[:, None, None]
    if 0 in joints:
        targets[:, joints.index(0)] = rest[0]  # a root target, met by the default root
    initial = None
    if seed % 2:
        initial = fabrik.solve_batch(skeleton, targets[::-1], effectors=names, max_iter=5, **PLAIN).positions
    elif seed % 3 == 0:
        initial = fabrik.solve_batch(skeleton, targets[:1], effectors=names, max_iter=3, **PLAIN).positions[0]
    root = None
    if 0 not in joints:
        root = rest[0] + rng.normal(size=(count, 3) if seed % 2 else 3) * 0.1 * reach
    result = fabrik.solve_batch(skeleton, targets, effectors=names, initial=initial, root=root, backend="warp",
                                device="cpu", **PLAIN)
    assert isinstance(result.positions, np.ndarray) and result.iterations.dtype == np.int64
    assert_rows_match(skeleton, result, names, targets, initial=initial, root=root)
    assert sum(handed) < count  # the device solved rows itself


@pytest.fixture(scope="module")
def walkers():
    skeleton, poses, roots = crowd_walk(4, 12, seed=3)
    idx = [skeleton.index(e) for e in EFFECTORS]
    return skeleton, poses, roots, np.ascontiguousarray(poses[:, :, idx])


def test_humanoid_device_arrays_in_and_out(walkers, handed):
    """Warp arrays (CPU device) in, Warp arrays out: tracking rows (per-row starts and roots) and
    cold rows, a third out of reach (shared rest start); inner joints (knees) targeted."""
    skeleton, poses, roots, targets = walkers
    rows, starts, base = targets[:, 5], poses[:, 4], roots[:, 5]
    on = {name: wp.array(v, dtype=wp.float64, device="cpu") for name, v in
          (("t", rows), ("i", starts), ("r", base))}
    result = fabrik.solve_batch(skeleton, on["t"], effectors=EFFECTORS, initial=on["i"], root=on["r"],
                                backend="warp", **PLAIN)
    assert isinstance(result.positions, wp.array) and str(result.positions.device) == "cpu"
    assert isinstance(result.effector_errors, wp.array)
    assert_rows_match(skeleton, result, EFFECTORS, rows, initial=starts, root=base)
    assert result.reached.numpy().all() and handed == []
    cold = random_poses(skeleton, 30, seed=4)[:, [skeleton.index(e) for e in EFFECTORS]]
    cold[::3] *= 3.0  # out of reach
    result = fabrik.solve_batch(skeleton, wp.array(cold, dtype=wp.float64, device="cpu"), effectors=EFFECTORS,
                                backend="warp", **PLAIN)
    assert_rows_match(skeleton, result, EFFECTORS, cold)
    assert "unreachable" in result.statuses()
    as_map = fabrik.solve_batch(skeleton, {e: wp.array(np.ascontiguousarray(cold[:, k]), dtype=wp.float64,
                                                       device="cpu") for k, e in enumerate(EFFECTORS)},
                                backend="warp", **PLAIN)
    np.testing.assert_array_equal(as_map.positions.numpy(), result.positions.numpy())


def test_humanoid_default_leaves_and_slices(handed):
    """The default effectors (the leaves); a cap beyond one slice and max_iter 0 are handed back."""
    skeleton = models.humanoid()
    poses = random_poses(skeleton, 12, seed=9)
    leaves = poses[:, list(skeleton.leaves)]
    result = fabrik.solve_batch(skeleton, leaves, backend="warp", device="cpu", **PLAIN)
    assert result.effectors == tuple(skeleton.names[j] for j in skeleton.leaves)
    assert_rows_match(skeleton, result, result.effectors, leaves)
    handed.clear()
    zero = fabrik.solve_batch(skeleton, leaves, backend="warp", device="cpu", max_iter=0, **PLAIN)
    assert_rows_match(skeleton, zero, zero.effectors, leaves, max_iter=0)
    assert handed == [12]
    from fabrik.solvers.registry import SLICE_ITERATIONS

    far = leaves * 3.0
    long = fabrik.solve_batch(skeleton, far[:3], backend="warp", device="cpu", max_iter=SLICE_ITERATIONS + 5, **PLAIN)
    assert_rows_match(skeleton, long, long.effectors, far[:3], max_iter=SLICE_ITERATIONS + 5)


def test_float32_is_close_to_float64(walkers):
    skeleton, poses, roots, targets = walkers
    rows = np.ascontiguousarray(targets[:, 6])
    reference = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, initial=poses[:, 5], **PLAIN)
    result = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, initial=poses[:, 5], backend="warp",
                                device="cpu", precision="float32", **PLAIN)
    assert result.positions.dtype == np.float32
    np.testing.assert_allclose(result.positions, reference.positions, atol=1e-4 * skeleton.height())
    assert (result.status == reference.status).mean() > 0.9
    on = wp.array(rows.astype(np.float32), dtype=wp.float32, device="cpu")
    device = fabrik.solve_batch(skeleton, on, effectors=EFFECTORS, backend="warp", precision="float32", **PLAIN)
    assert device.positions.dtype is wp.float32
    with pytest.raises(ValueError, match="must hold float64 values"):
        fabrik.solve_batch(skeleton, on, effectors=EFFECTORS, backend="warp", **PLAIN)


def test_limits_and_reach_step_fall_back_and_say_which_option(walkers):
    from fabrik.solvers.batch_device import HostFallbackWarning

    skeleton, poses, _, targets = walkers
    rows = targets[:, 2].copy()
    reference = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, reach_step=True)
    with pytest.warns(HostFallbackWarning, match=r"this batch uses reach_step=True; method 'fabrik' on a skeleton "
                                                 r"without joint limits, without reach_step or dls_start, runs on "
                                                 r"the device"):
        result = fabrik.solve_batch(skeleton, wp.array(rows, dtype=wp.float64, device="cpu"), effectors=EFFECTORS,
                                    backend="warp", reach_step=True)
    np.testing.assert_array_equal(result.positions.numpy(), reference.positions)
    from fabrik.constraints import humanoid as human_limits

    limited = skeleton.with_constraints(human_limits(skeleton)[0])
    with pytest.warns(HostFallbackWarning, match="uses joint limits"):
        fabrik.solve_batch(limited, rows, effectors=EFFECTORS, backend="warp", max_iter=5, **PLAIN)
    with pytest.warns(HostFallbackWarning, match="uses joint limits"):
        fabrik.solve_batch(limited, rows, effectors=EFFECTORS, backend="warp", max_iter=5)
    with pytest.raises(ValueError, match="this skeleton batch uses joint limits"):
        fabrik.solve_batch(limited, rows, effectors=EFFECTORS, backend="warp", precision="float32", **PLAIN)
    with pytest.raises(ValueError, match="this skeleton batch uses reach_step=True"):
        fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, backend="warp", precision="float32", reach_step=True)
    with pytest.warns(HostFallbackWarning, match="this batch uses dls_start=True"):
        stepped = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, backend="warp", dls_start=True)
    np.testing.assert_array_equal(stepped.positions, fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS,
                                                                        dls_start=True).positions)
    rng = np.random.default_rng(0)
    tree = random_tree(rng, 5)
    tree = tree.with_constraints(random_limits(rng, tree))
    with pytest.warns(HostFallbackWarning, match="joint limits"):
        fabrik.solve_batch(tree, tree.rest_positions()[list(tree.leaves)][None], backend="warp", **PLAIN)


def test_device_bad_input(walkers):
    skeleton, _, _, targets = walkers
    rows = targets[:5, 0].copy()
    bad = rows.copy()
    bad[3, 2, 1] = np.nan
    with pytest.raises(ValueError, match="targets contains a non-finite value"):
        fabrik.solve_batch(skeleton, wp.array(bad, dtype=wp.float64, device="cpu"), effectors=EFFECTORS,
                           backend="warp", **PLAIN)
    with pytest.raises(ValueError, match=r"targets must have shape \(N, 7, 3\)"):
        fabrik.solve_batch(skeleton, wp.array(rows[:, :2], dtype=wp.float64, device="cpu"), effectors=EFFECTORS,
                           backend="warp", **PLAIN)
    with pytest.raises(ValueError, match="not finite .* in row 3"):
        fabrik.solve_batch(skeleton, bad, effectors=EFFECTORS, backend="warp", **PLAIN)
    with pytest.raises(ValueError, match="initial must have"):
        fabrik.solve_batch(skeleton, wp.array(rows, dtype=wp.float64, device="cpu"), effectors=EFFECTORS,
                           initial=wp.array(np.zeros((3, skeleton.n_joints, 3)), dtype=wp.float64, device="cpu"),
                           backend="warp", **PLAIN)
    with pytest.raises(ValueError, match="unknown joint 'nose'"):
        fabrik.solve_batch(skeleton, wp.array(rows, dtype=wp.float64, device="cpu"),
                           effectors=EFFECTORS[:6] + ("nose",), backend="warp", **PLAIN)
    with pytest.raises(ValueError, match="row 0: root .* conflicts"):
        fabrik.solve_batch(skeleton, {"pelvis": rows[:, 0] + 1.0}, root=np.zeros(3), backend="warp", **PLAIN)
    with pytest.raises(ValueError, match="root .* conflicts"):
        fabrik.solve_batch(skeleton, {"pelvis": wp.array(rows[:, 0] + 1.0, dtype=wp.float64, device="cpu")},
                           root=np.zeros(3), backend="warp", **PLAIN)


def test_straight_paths_stuck_on_the_line_are_handed_back(handed):
    """A straight chain-like tree with targets on its line (section 5.4: the nudge across the line)
    is handed back to the CPU; a bent target is solved on the device."""
    skeleton = fabrik.Skeleton.from_parents(["a", "b", "c", "d"], [-1, 0, 1, 2],
                                            np.array([[0, 0, 0], [0, 1, 0], [0, 1, 0], [0, 1, 0.0]]))
    targets = np.array([[[0, 1.5, 0]], [[0, 2.5, 0]], [[0.5, 1.0, 0.2]]])
    result = fabrik.solve_batch(skeleton, targets, effectors=["d"], backend="warp", device="cpu", **PLAIN)
    assert_rows_match(skeleton, result, ["d"], targets)
    assert handed == [2] and result.reached.all()


# --- the defaults: held rigid groups (rigid_sub_bases="auto") and limb swing (swing_limbs=True) ---


def test_humanoid_defaults_match_solve(walkers, handed):
    """The humanoid in the library's defaults (a held pelvis and a held chest, the chest a member
    of the pelvis group; its limbs swung first): cold rows from the rest pose (a third out of
    reach), tracking rows (per-row starts and roots, Warp arrays in and out), a shared start."""
    skeleton = models.humanoid()
    cold = random_poses(skeleton, 30, seed=11)[:, list(skeleton.leaves)]
    cold[::3] *= 2.5  # out of reach
    result = fabrik.solve_batch(skeleton, cold, backend="warp", device="cpu")
    assert_rows_match(skeleton, result, result.effectors, cold, **DEFAULTS)
    assert {"reached", "unreachable"} <= set(result.statuses())
    walker, poses, roots, targets = walkers
    rows, starts, base = targets[:, 7], poses[:, 6], roots[:, 7]
    on = {name: wp.array(v, dtype=wp.float64, device="cpu") for name, v in (("t", rows), ("i", starts), ("r", base))}
    tracked = fabrik.solve_batch(walker, on["t"], effectors=EFFECTORS, initial=on["i"], root=on["r"], backend="warp")
    assert isinstance(tracked.positions, wp.array)
    assert_rows_match(walker, tracked, EFFECTORS, rows, initial=starts, root=base, **DEFAULTS)
    shared = fabrik.solve_batch(walker, rows, effectors=EFFECTORS, initial=poses[0, 6], backend="warp", device="cpu")
    assert_rows_match(walker, shared, EFFECTORS, rows, initial=poses[0, 6], **DEFAULTS)
    assert sum(handed) == 0


def _random_rig(seed):
    rng = np.random.default_rng(seed)
    return rng, random_tree(rng, int(rng.integers(4, 18)))


@pytest.mark.parametrize("seed, mode", [(0, "auto"), (3, "auto"), (6, "auto"), (4, True), (7, True), (15, "limbs"),
                                        (25, "limbs")])
def test_random_trees_with_held_groups_match_solve(seed, mode, handed):
    """Random trees whose joints with several children make rigid groups (releasable ones with
    "limbs", let go at a stall), limbs swung or not: targets the free tree reaches (the held groups
    often cannot: stalls, releases) and far ones; inner joints targeted; shared and per-row starts
    and roots."""
    from fabrik.model.rig import rig

    rng, skeleton = _random_rig(seed)
    n = skeleton.n_joints
    groups = rig(skeleton).groups(mode)
    assert groups.group_start.shape[0] > 1  # the tree has rigid groups in this mode
    joints = list(skeleton.leaves) if seed % 2 else list(range(1, n))
    names = [skeleton.names[j] for j in joints]
    rest = skeleton.rest_positions()
    reach = skeleton.height() + 1.0
    count = 24
    wild = rest[joints][None] + rng.normal(size=(count, len(joints), 3)) * 0.5 * reach
    targets = np.ascontiguousarray(fabrik.solve_batch(skeleton, wild, effectors=names, **PLAIN).positions[:, joints])
    targets[::4] = rest[joints] + rng.normal(size=(count // 4, len(joints), 3)) * 3.0 * reach  # far
    options = {"rigid_sub_bases": mode, "swing_limbs": seed % 3 != 0}
    initial = root = None
    if seed % 2:
        initial = fabrik.solve_batch(skeleton, targets[::-1], effectors=names, max_iter=4, **PLAIN).positions
        root = rest[0] + rng.normal(size=(count, 3)) * 0.1 * reach
    else:
        initial = fabrik.solve_batch(skeleton, targets[:1], effectors=names, max_iter=3, **PLAIN).positions[0]
    result = fabrik.solve_batch(skeleton, targets, effectors=names, initial=initial, root=root, backend="warp",
                                device="cpu", **options)
    assert_rows_match(skeleton, result, names, targets, initial=initial, root=root, **options)
    assert sum(handed) <= 2  # the device solved (nearly) every row itself


def test_defaults_hand_back_what_the_device_does_not_port(handed):
    """With held groups, max_iter 0 and a cap beyond one slice are handed back as in the plain
    configuration; so is a start whose groups kabsch fits through its SVD fallback."""
    skeleton = models.humanoid()
    leaves = random_poses(skeleton, 6, seed=12)[:, list(skeleton.leaves)]
    zero = fabrik.solve_batch(skeleton, leaves, backend="warp", device="cpu", max_iter=0)
    assert_rows_match(skeleton, zero, zero.effectors, leaves, max_iter=0, **DEFAULTS)
    assert handed == [6]
    handed.clear()
    from fabrik.solvers.registry import SLICE_ITERATIONS

    far = leaves[:2] * 3.0
    long = fabrik.solve_batch(skeleton, far, backend="warp", device="cpu", max_iter=SLICE_ITERATIONS + 5)
    assert_rows_match(skeleton, long, long.effectors, far, max_iter=SLICE_ITERATIONS + 5, **DEFAULTS)
    handed.clear()
    # starts whose joints all sit on one point: every group's fit is of nothing (H = 0, kabsch's
    # SVD fallback), which the device hands back
    starts = np.repeat(skeleton.rest_positions()[None], 4, axis=0)
    starts[1::2] = 0.0
    rows = leaves[:4]
    result = fabrik.solve_batch(skeleton, rows, initial=starts, backend="warp", device="cpu")
    assert_rows_match(skeleton, result, result.effectors, rows, initial=starts, **DEFAULTS)
    assert handed == [2]


def test_float32_defaults_close_to_float64(walkers):
    skeleton, poses, roots, targets = walkers
    rows = np.ascontiguousarray(targets[:, 8])
    reference = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, initial=poses[:, 7])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # on the device: no fallback
        result = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, initial=poses[:, 7], backend="warp",
                                    device="cpu", precision="float32")
    assert result.positions.dtype == np.float32
    np.testing.assert_allclose(result.positions, reference.positions, atol=1e-4 * skeleton.height())
    assert (result.status == reference.status).mean() > 0.9
