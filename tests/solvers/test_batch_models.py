"""fabrik.solve_batch on skeletons and arms, and fabrik.solve_sequence on crowds: every answer is
fabrik.solve's (solve_sequence's), bit for bit, over random models with and without limits,
unreachable targets included; the Warp device path (Warp's CPU device) and bad input."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik import models
from fabrik.constraints import humanoid as human_limits
from fabrik_experiments.crowd_motion import EFFECTORS, OPTIONS, crowd_walk, random_poses
from fabrik_experiments.fuzz_arms import random_arm
from test_skeleton_constraints import random_limits, random_tree


def assert_skeleton_rows(skeleton, result, names, targets, *, initial=None, root=None, frames=None, **options):
    """Row k of ``result`` equals ``fabrik.solve`` on row k (positions, iterations, status, errors
    and, with frames, the joint frames), bit for bit."""
    assert result.positions.shape == (len(targets), skeleton.n_joints, 3)
    assert result.effectors == tuple(names)
    for k in range(len(targets)):
        start = None if initial is None else (initial if np.ndim(initial) == 2 else initial[k])
        base = None if root is None else (root if np.ndim(root) == 1 else root[k])
        extra = {} if frames is None else {"initial_frames": frames if np.ndim(frames) == 3 else frames[k]}
        single = fabrik.solve(skeleton, targets=dict(zip(names, targets[k])), initial=start, root=base, **options,
                              **extra)
        np.testing.assert_array_equal(result.positions[k], single.positions, err_msg=f"row {k}")
        assert result.iterations[k] == single.iterations, k
        assert result.statuses()[k] == single.status, k
        assert result.error[k] == single.error, k
        np.testing.assert_array_equal(result.effector_errors[k], single.extras["effector_error_array"])
        if "frames" in single.extras:
            np.testing.assert_array_equal(result.frames[k], single.extras["frames"])
        else:
            assert result.frames is None


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 9), st.integers(0, 2 ** 31 - 1), st.booleans())
def test_random_skeletons_match_solve(n, seed, limited):
    """Random trees (zero-length bones included), with and without random limits, random options,
    targets within and far beyond reach, shared or per-solve starts and roots."""
    rng = np.random.default_rng(seed)
    skeleton = random_tree(rng, n)
    if limited:
        skeleton = skeleton.with_constraints(random_limits(rng, skeleton))
    joints = [j for j in range(n) if rng.random() < 0.5] or [skeleton.leaves[0]]
    names = [skeleton.names[j] for j in joints]
    rest = skeleton.rest_positions()
    reach = skeleton.height() + 1.0
    count = 6
    targets = rest[joints][None] + rng.normal(size=(count, len(joints), 3)) * reach * rng.choice([0.2, 0.7, 3.0])
    if 0 in joints:
        targets[:, joints.index(0)] = rest[0]  # a root target, met by the default root
    options = {"rigid_sub_bases": [False, True, "limbs", "auto"][int(rng.integers(4))],
               "swing_limbs": bool(rng.random() < 0.5), "max_iter": int(rng.integers(0, 80))}
    initial = None
    if rng.random() < 0.5:
        posed = fabrik.solve_batch(skeleton, targets[::-1], effectors=names, max_iter=5)
        initial = posed.positions
    root = None
    if 0 not in joints and rng.random() < 0.5:
        root = rest[0] + rng.normal(size=(count, 3)) * 0.1 * reach
    result = fabrik.solve_batch(skeleton, targets, effectors=names, initial=initial, root=root, **options)
    assert_skeleton_rows(skeleton, result, names, targets, initial=initial, root=root, **options)
    assert result.method == ("fabrik-constrained" if skeleton.constraints else "fabrik")


@pytest.fixture(scope="module")
def walkers():
    skeleton, poses, roots = crowd_walk(6, 12, seed=3)
    idx = [skeleton.index(e) for e in EFFECTORS]
    return skeleton, poses, roots, np.ascontiguousarray(poses[:, :, idx])


def test_humanoid_tracking_and_cold_targets_match_solve(walkers):
    skeleton, poses, roots, targets = walkers
    rows = targets[:, 5]
    starts = poses[:, 4]
    result = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, initial=starts, root=roots[:, 5], **OPTIONS)
    assert_skeleton_rows(skeleton, result, EFFECTORS, rows, initial=starts, root=roots[:, 5], **OPTIONS)
    assert result.reached.all()
    cold = random_poses(skeleton, 12, seed=4)[:, [skeleton.index(e) for e in EFFECTORS]]
    cold[::4] *= 3.0  # out of reach
    result = fabrik.solve_batch(skeleton, cold, effectors=EFFECTORS)  # the default options: "auto" groups
    assert_skeleton_rows(skeleton, result, EFFECTORS, cold)
    assert "unreachable" in result.statuses()
    mapping = fabrik.solve_batch(skeleton, {e: cold[:, k] for k, e in enumerate(EFFECTORS)})
    np.testing.assert_array_equal(mapping.positions, result.positions)
    leaves = fabrik.solve_batch(skeleton, cold[:, :5])  # effectors default to the leaves
    assert leaves.effectors == tuple(skeleton.names[j] for j in skeleton.leaves)


def test_limited_humanoid_frames_turn_search_and_held_root_match_solve(walkers):
    skeleton, poses, roots, targets = walkers
    limited = skeleton.with_constraints(human_limits(skeleton)[0])
    rows, starts = targets[:, 3], poses[:, 2]
    first = fabrik.solve_batch(limited, rows, effectors=EFFECTORS, initial=starts, **OPTIONS)  # frames derived
    assert_skeleton_rows(limited, first, EFFECTORS, rows, initial=starts, **OPTIONS)
    again = fabrik.solve_batch(limited, targets[:, 4], effectors=EFFECTORS, initial=first.positions,
                               initial_frames=first.frames, **OPTIONS)
    assert_skeleton_rows(limited, again, EFFECTORS, targets[:, 4], initial=first.positions, frames=first.frames,
                         **OPTIONS)
    far = rows * 1.5
    searched = fabrik.solve_batch(limited, far, effectors=EFFECTORS, turn_search=True, max_iter=30)
    assert_skeleton_rows(limited, searched, EFFECTORS, far, turn_search=True, max_iter=30)
    held = fabrik.solve_batch(limited, rows, effectors=EFFECTORS, root_rotation=np.eye(3), max_iter=40)
    assert_skeleton_rows(limited, held, EFFECTORS, rows, root_rotation=np.eye(3), max_iter=40)
    free = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, method="fabrik-constrained", root_rotation="free",
                              max_iter=40)
    assert_skeleton_rows(skeleton, free, EFFECTORS, rows, method="fabrik-constrained", root_rotation="free",
                         max_iter=40)


def test_skeleton_batch_threads_and_progress_give_the_same_answers(walkers):
    skeleton, poses, _, targets = walkers
    rows = np.ascontiguousarray(targets.reshape(-1, len(EFFECTORS), 3))
    one = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, threads=1, **OPTIONS)
    many = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, progress=True, **OPTIONS)
    np.testing.assert_array_equal(one.positions, many.positions)
    np.testing.assert_array_equal(one.iterations, many.iterations)


@pytest.mark.parametrize("call, words", [
    (lambda s, t: fabrik.solve_batch(s, t[:, :2], effectors=EFFECTORS), r"targets must have shape \(N, 7, 3\)"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS[:6] + ("nose",)), "unknown joint 'nose'"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS[:6] + ("head",)), "each joint once"),
    (lambda s, t: fabrik.solve_batch(s, np.where(np.arange(5)[:, None, None] == 3, np.nan, t), effectors=EFFECTORS),
     "not finite .* in row 3"),
    (lambda s, t: fabrik.solve_batch(s, {"head": t[:, 0], "l_wrist": t[:3, 1]}), "has 3 rows"),
    (lambda s, t: fabrik.solve_batch(s, {"head": t[:, 0]}, effectors=["head"]), "names its own"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS, initial=np.zeros((5, 12, 3))), "initial must have"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS, root=np.zeros((4, 3))), "root must have"),
    (lambda s, t: fabrik.solve_batch(s, {"pelvis": t[:, 0] + 1.0}, root=np.zeros(3)), "row 0: root .* conflicts"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS, method="ccd"), "methods fabrik, fabrik-constrained"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS, layout="lockstep"), "layout='lockstep' is for chains"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS, damping=1.0), "takes no option 'damping'"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS, method="fabrik-constrained",
                                     initial_frames=np.zeros((13, 3, 3))), "rotation matrices"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS, backend="warp", precision="float32",
                                     reach_step=True), "precision='float32' is for chains"),
    (lambda s, t: fabrik.solve_batch(s, t, effectors=EFFECTORS, threads=0), "threads must be"),
])
def test_skeleton_batch_bad_input(walkers, call, words):
    skeleton, _, _, targets = walkers
    with pytest.raises(ValueError, match=words):
        call(skeleton, targets[:5, 0].copy())


def test_chain_refuses_effectors_and_unknown_models():
    chain = fabrik.Chain.straight(3, 1.0)
    with pytest.raises(ValueError, match="a chain has one effector"):
        fabrik.solve_batch(chain, np.zeros((2, 3)), effectors=[2])
    with pytest.raises(ValueError, match="fabrik.Chain, fabrik.Skeleton or fabrik.Arm"):
        fabrik.solve_batch("chain", np.zeros((2, 3)))


def assert_arm_rows(arm, result, singles):
    for k, single in enumerate(singles):
        np.testing.assert_array_equal(result.joint_angles[k], single.joint_angles, err_msg=f"row {k}")
        np.testing.assert_array_equal(result.positions[k], single.positions)
        np.testing.assert_array_equal(result.frames[k], single.extras["frames"])
        assert result.iterations[k] == single.iterations, k
        assert result.statuses()[k] == single.status, k
        assert result.error[k] == single.error, k
        if "orientation_error" in single.extras:
            assert result.orientation_error[k] == single.extras["orientation_error"]


@pytest.mark.parametrize("lengths", [None, (25.0, 31.0, 12.0), (40.0, 20.0, 5.0)])
def test_srs_arm_batches_match_solve(lengths):
    """The DHM arm (and S-R-S arms of other proportions): pose targets as (points, matrices), as
    transforms and as a scipy Rotation, position targets, per-target starts, unreachable targets."""
    from scipy.spatial.transform import Rotation

    arm = models.dhm_arm() if lengths is None else models.dhm_arm(*lengths)
    q = arm.random_angles(7, 40)
    positions, frames = fabrik.forward(arm, q)
    points, rotations = positions[:, -1].copy(), frames[:, -1].copy()
    points[::5] *= 2.5  # out of reach
    starts = arm.random_angles(8, 40)
    result = fabrik.solve_batch(arm, (points, rotations), initial=starts)
    assert_arm_rows(arm, result, [fabrik.solve(arm, (points[k], rotations[k]), initial=starts[k]) for k in range(40)])
    assert {"reached", "unreachable"} <= set(result.statuses())
    transforms = np.tile(np.eye(4), (40, 1, 1))
    transforms[:, :3, :3], transforms[:, :3, 3] = rotations, points
    as_transforms = fabrik.solve_batch(arm, transforms, initial=starts)
    np.testing.assert_array_equal(as_transforms.joint_angles, result.joint_angles)
    as_rotation = fabrik.solve_batch(arm, (points, Rotation.from_matrix(rotations)))
    assert_arm_rows(arm, as_rotation, [fabrik.solve(arm, (points[k], Rotation.from_matrix(rotations[k]).as_matrix()))
                                       for k in range(40)])
    position = fabrik.solve_batch(arm, points)
    assert_arm_rows(arm, position, [fabrik.solve(arm, points[k]) for k in range(40)])
    assert position.orientation_error is None


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.sampled_from(["fabrik", "fabrik-revolute", "ccd", "jacobian-dls"]))
def test_random_arms_match_solve(seed, method):
    """Random arms (revolute and prismatic joints, limits, zero-length links): the compiled search
    (restarts included) answers as fabrik.solve's search does when its time budget does not end it."""
    rng = np.random.default_rng(seed)
    arm = random_arm(rng)
    q = arm.random_angles(rng, 5)
    positions, frames = fabrik.forward(arm, q)
    points, rotations = positions[:, -1].copy(), frames[:, -1].copy()
    points[4] += (arm.reach + 1.0) * 3.0  # out of reach
    options = {"restarts": 3} if method in ("fabrik", "fabrik-revolute") else {}
    oriented = bool(rng.random() < 0.5)
    targets = (points, rotations) if oriented else points
    result = fabrik.solve_batch(arm, targets, method=method, max_iter=300, **options)
    singles = [fabrik.solve(arm, (points[k], rotations[k]) if oriented else points[k], method=method, max_iter=300,
                            time_budget=1e9, **options) for k in range(5)]
    assert_arm_rows(arm, result, singles)


def test_arm_batch_bad_input():
    arm = models.dhm_arm()
    robot = random_arm(np.random.default_rng(4))
    with pytest.raises(ValueError, match="root is not used"):
        fabrik.solve_batch(arm, np.zeros((2, 3)), root=np.zeros(3))
    with pytest.raises(ValueError, match="does not take time_budget"):
        fabrik.solve_batch(robot, np.zeros((2, 3)), time_budget=1.0)
    with pytest.raises(ValueError, match="does not take nearest"):
        fabrik.solve_batch(robot, np.zeros((2, 3)), nearest=True)
    with pytest.raises(ValueError, match="quaternion must say its order"):
        fabrik.solve_batch(arm, (np.zeros((2, 3)), np.zeros((2, 4))))
    with pytest.raises(ValueError, match=r"rotations\[1\]"):
        fabrik.solve_batch(arm, (np.zeros((2, 3)), np.stack([np.eye(3), np.ones((3, 3))])))
    with pytest.raises(ValueError, match="one rotation matrix per target"):
        fabrik.solve_batch(arm, (np.zeros((2, 3)), np.eye(3)[None]))
    with pytest.raises(ValueError, match=r"targets\[1\]"):
        fabrik.solve_batch(arm, np.stack([np.eye(4), np.zeros((4, 4))]))
    with pytest.raises(ValueError, match="initial must have shape"):
        fabrik.solve_batch(arm, np.zeros((3, 3)), initial=np.zeros((2, 7)))
    with pytest.raises(ValueError, match="not finite"):
        fabrik.solve_batch(arm, np.array([[0.0, 1.0, 2.0], [np.inf, 0.0, 0.0]]))
    with pytest.raises(ValueError, match="unknown method 'jacobian-transpose' for a arm"):
        fabrik.solve_batch(arm, np.zeros((2, 3)), method="jacobian-transpose")


def crowd_targets(walkers, characters=None, frames=None):
    skeleton, poses, roots, targets = walkers
    c = slice(None, characters)
    f = slice(None, frames)
    return {e: poses[c, f, skeleton.index(e)] for e in EFFECTORS}, poses[c, 0], roots[c, f]


def assert_crowd(skeleton, crowd, paths, initial, roots, **options):
    count = next(iter(paths.values())).shape[0]
    assert crowd.positions.shape[:2] == (count, next(iter(paths.values())).shape[1])
    for c in range(count):
        one = fabrik.solve_sequence(skeleton, {e: v[c] for e, v in paths.items()},
                                    initial if np.ndim(initial) == 2 else initial[c],
                                    None if roots is None else (roots if np.ndim(roots) == 1 else roots[c]), **options)
        np.testing.assert_array_equal(crowd.positions[c], one.positions, err_msg=f"character {c}")
        np.testing.assert_array_equal(crowd.iterations[c], one.iterations)
        np.testing.assert_array_equal(crowd.effector_errors[c], one.effector_errors)
        np.testing.assert_array_equal(crowd.status_codes[c], one.status_codes)
        assert crowd.statuses[c] == one.statuses
        if one.frames is not None:
            np.testing.assert_array_equal(crowd.frames[c], one.frames)
    assert crowd.effectors == tuple(paths)


def test_crowds_match_solve_sequence(walkers):
    skeleton = walkers[0]
    paths, initial, roots = crowd_targets(walkers)
    crowd = fabrik.solve_sequence(skeleton, paths, initial=initial, root=roots, **OPTIONS)
    assert_crowd(skeleton, crowd, paths, initial, roots, **OPTIONS)
    assert "characters=6, frames=12" in repr(crowd)
    shared = fabrik.solve_sequence(skeleton, paths, root=roots[0, 0])  # the rest pose, one root, "auto" groups
    assert_crowd(skeleton, shared, paths, skeleton.rest_positions(), roots[0, 0])
    limited = skeleton.with_constraints(human_limits(skeleton)[0])
    crowd = fabrik.solve_sequence(limited, paths, initial=initial, root=roots, **OPTIONS)
    assert_crowd(limited, crowd, paths, initial, roots, **OPTIONS)
    paths, initial, roots = crowd_targets(walkers, 3, 5)
    far = {e: v * 1.3 for e, v in paths.items()}
    searched = fabrik.solve_sequence(limited, far, initial=initial, turn_search=True, max_iter=20, **OPTIONS)
    assert_crowd(limited, searched, far, initial, None, turn_search=True, max_iter=20, **OPTIONS)
    other = fabrik.solve_sequence(skeleton, paths, initial=initial, root=roots, method="ccd", max_iter=20)
    assert_crowd(skeleton, other, paths, initial, roots, method="ccd", max_iter=20)


def test_crowd_bad_input(walkers):
    skeleton = walkers[0]
    paths, initial, roots = crowd_targets(walkers, 3, 4)
    bad = dict(paths)
    bad["head"] = paths["head"].copy()
    bad["head"][2, 1, 0] = np.nan
    with pytest.raises(ValueError, match=r"targets\['head'\] is not finite .* character 2 in frame 1"):
        fabrik.solve_sequence(skeleton, bad)
    with pytest.raises(ValueError, match="has 3 characters x 4 frames, the targets before it 2 x 4"):
        fabrik.solve_sequence(skeleton, {**paths, "head": paths["head"][:2]})
    with pytest.raises(ValueError, match=r"root must have shape \(3,\) .* \(3, 4, 3\)"):
        fabrik.solve_sequence(skeleton, paths, root=roots[:, 0])
    with pytest.raises(ValueError, match="initial must have shape"):
        fabrik.solve_sequence(skeleton, paths, initial=initial[:2])


# --- Warp: device arrays (Warp's CPU device) -------------------------------------------------------

def _warp():
    return pytest.importorskip("warp", reason="NVIDIA Warp is not installed (pip install warp-lang, the 'gpu' extra)")


def _bent_chain_case(count=120, seed=3):
    rng = np.random.default_rng(seed)
    chain = fabrik.Chain.straight(6, 1.0, dim=3, axis=1)
    initial = np.empty((count, 6, 3))
    for k in range(count):
        d = rng.normal(size=(5, 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        if k % 5 == 0:
            d[:] = [0.0, 1.0, 0.0]
        initial[k] = np.vstack([np.zeros(3), np.cumsum(d, axis=0)])
    targets = rng.normal(size=(count, 3)) * 3.0
    targets[::5] = [0.0, 2.5, 0.0]
    return chain, targets, initial, rng.normal(size=(count, 3)) * 0.2


def test_warp_device_arrays_in_and_out_match_numba():
    """Warp arrays in, Warp arrays out, no host copy of the answers; bent starts turned on the
    device, stalls and out-of-reach targets handed back: every answer the numba batch's, bit for
    bit on Warp's CPU device."""
    wp = _warp()
    from fabrik.kernels.batch_warp import import_warp

    import_warp()
    chain, targets, initial, roots = _bent_chain_case()
    reference = fabrik.solve_batch(chain, targets, initial=initial, root=roots)
    on = {name: wp.array(v, dtype=wp.float64, device="cpu") for name, v in
          (("t", targets), ("i", initial), ("r", roots))}
    result = fabrik.solve_batch(chain, on["t"], initial=on["i"], root=on["r"], backend="warp")
    assert isinstance(result.positions, wp.array) and str(result.positions.device) == "cpu"
    np.testing.assert_array_equal(result.positions.numpy(), reference.positions)
    np.testing.assert_array_equal(result.iterations.numpy(), reference.iterations)
    np.testing.assert_array_equal(result.error.numpy(), reference.error)
    np.testing.assert_array_equal(result.status.numpy(), reference.status)
    np.testing.assert_array_equal(result.reached.numpy(), reference.reached)
    assert list(result.statuses()) == list(reference.statuses())
    assert "on cpu" in repr(result)
    shared = fabrik.solve_batch(chain, on["t"], initial=initial[1], backend="warp")  # a host start for all
    np.testing.assert_array_equal(shared.positions.numpy(), fabrik.solve_batch(chain, targets,
                                                                               initial=initial[1]).positions)


def test_warp_float32_is_close_to_float64():
    wp = _warp()
    from fabrik.kernels.batch_warp import import_warp

    import_warp()
    chain, targets, initial, roots = _bent_chain_case(seed=5)
    reference = fabrik.solve_batch(chain, targets, initial=initial, root=roots)
    result = fabrik.solve_batch(chain, targets.astype(np.float32), initial=initial, root=roots, backend="warp",
                                precision="float32", device="cpu")
    assert result.positions.dtype == np.float32
    np.testing.assert_allclose(result.positions, reference.positions, atol=1e-4 * chain.total_length)
    assert (result.status == reference.status).mean() > 0.95
    on = wp.array(targets.astype(np.float32), dtype=wp.float32, device="cpu")
    device = fabrik.solve_batch(chain, on, backend="warp", precision="float32")
    assert device.positions.dtype is wp.float32
    with pytest.raises(ValueError, match="must hold float64 values"):
        fabrik.solve_batch(chain, on, backend="warp")


def test_warp_device_bad_input():
    wp = _warp()
    chain, targets, initial, _ = _bent_chain_case(count=10)
    bad = targets.copy()
    bad[4, 2] = np.inf
    from fabrik.kernels.batch_warp import import_warp

    import_warp()
    with pytest.raises(ValueError, match="targets contains a non-finite value"):
        fabrik.solve_batch(chain, wp.array(bad, dtype=wp.float64, device="cpu"), backend="warp")
    with pytest.raises(ValueError, match=r"initial must have shape \(6, 3\) or \(10, 6, 3\)"):
        fabrik.solve_batch(chain, wp.array(targets, dtype=wp.float64, device="cpu"), initial=initial[:3],
                           backend="warp")
    with pytest.raises(ValueError, match="precision must be"):
        fabrik.solve_batch(chain, targets, backend="warp", precision="float16")
    with pytest.raises(ValueError, match="precision='float32' is for chains on backend='warp'"):
        fabrik.solve_batch(chain, targets, precision="float32")


def test_torch_tensors_in_and_out():
    _warp()
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
    chain, targets, initial, roots = _bent_chain_case(count=40, seed=7)
    reference = fabrik.solve_batch(chain, targets, initial=initial, root=roots)
    result = fabrik.solve_batch(chain, torch.from_numpy(targets), initial=torch.from_numpy(initial),
                                root=torch.from_numpy(roots), backend="warp")
    assert isinstance(result.positions, torch.Tensor) and result.reached.dtype == torch.bool
    np.testing.assert_array_equal(result.positions.numpy(), reference.positions)
    np.testing.assert_array_equal(result.status.numpy(), reference.status)


def test_skeletons_and_arms_on_warp_fall_back_to_the_cpu_and_say_so(walkers):
    wp = _warp()
    from fabrik.kernels.batch_warp import import_warp
    from fabrik.solvers.batch_device import HostFallbackWarning

    import_warp()
    skeleton, poses, _, targets = walkers
    rows = targets[:, 2].copy()
    reference = fabrik.solve_batch(skeleton, rows, effectors=EFFECTORS, reach_step=True, **OPTIONS)
    with pytest.warns(HostFallbackWarning, match="without joint limits .*, and this batch uses reach_step=True"):
        result = fabrik.solve_batch(skeleton, wp.array(rows, dtype=wp.float64, device="cpu"), effectors=EFFECTORS,
                                    backend="warp", reach_step=True, **OPTIONS)
    assert isinstance(result.positions, wp.array)
    np.testing.assert_array_equal(result.positions.numpy(), reference.positions)
    arm = models.dhm_arm()
    positions, frames = fabrik.forward(arm, arm.random_angles(1, 6))
    with pytest.warns(HostFallbackWarning, match="Warp arm kernel runs FABRIK on an arm .* uses method 'ccd'"):
        result = fabrik.solve_batch(arm, (positions[:, -1].copy(), frames[:, -1].copy()), backend="warp",
                                    method="ccd")
    assert isinstance(result.joint_angles, np.ndarray)  # host targets: host answers
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fabrik.solve_batch(arm, positions[:, -1].copy())  # numba: no warning


def test_huge_skeleton_batches_are_refused_before_any_work():
    from fabrik._validation import InsufficientMemoryError

    skeleton = models.humanoid()
    targets = np.broadcast_to(np.zeros(3), (10 ** 12, 5, 3))
    with pytest.raises(InsufficientMemoryError, match="solve_batch of 1,000,000,000,000 solves on a skeleton"):
        fabrik.solve_batch(skeleton, targets)
    arm = models.dhm_arm()
    with pytest.raises(InsufficientMemoryError, match="on an arm of 7 joints"):
        fabrik.solve_batch(arm, np.broadcast_to(np.zeros(3), (10 ** 12, 3)))
    paths = {"head": np.broadcast_to(np.zeros(3), (10 ** 6, 10 ** 6, 3))}
    with pytest.raises(InsufficientMemoryError, match="characters x 1,000,000 frames"):
        fabrik.solve_sequence(skeleton, paths)



@pytest.mark.parametrize("argv, words", [
    (["--parts", "chain,legs"], "--parts must name some of chain, skeleton, arm, crowd, float32"),
    (["--crowd", "1000"], "--crowd must be CHARACTERSxFRAMES"),
    (["--crowd", "10x0"], "--crowd frames must be >= 1"),
    (["--skeleton-targets", "0"], "--skeleton-targets must be >= 1"),
])
def test_bench_batch_refuses_bad_options(argv, words, capsys):
    from fabrik.cli import main

    assert main(["bench", "batch", *argv]) == 2
    assert words in capsys.readouterr().err


def test_bench_batch_model_parts_run_small(capsys):
    """The skeleton, arm and crowd parts on small sizes: every batch identical to fabrik.solve's."""
    from fabrik_experiments.batch_bench import format_tables, run_batch_bench

    result = run_batch_bench(parts=("skeleton", "arm", "crowd"), skeleton_targets=300, arm_targets=300, crowd=(4, 30),
                             repeats=1)
    for part in result["skeleton"]["sets"].values():
        assert all(row["identical"] for row in part["sizes"]) and part["limited"]["identical"]
    assert all(row["identical"] for row in result["arm"]["rows"])
    assert result["crowd"]["game loop identical"]
    text = format_tables(result)
    assert "Skeleton batch" in text and "Arm batch" in text and "Crowd: 4 humanoids x 30 frames" in text


def test_jax_arrays_in_and_out_in_float32():
    _warp()
    jnp = pytest.importorskip("jax.numpy", reason="JAX is not installed (pip install jax)")
    chain, targets, initial, roots = _bent_chain_case(count=40, seed=9)
    host = fabrik.solve_batch(chain, targets.astype(np.float32), initial=initial, root=roots, backend="warp",
                              precision="float32", device="cpu")
    result = fabrik.solve_batch(chain, jnp.asarray(targets, dtype=jnp.float32), initial=initial, root=roots,
                                backend="warp", precision="float32")
    assert type(result.positions).__module__.split(".")[0] in ("jax", "jaxlib")
    np.testing.assert_array_equal(np.asarray(result.positions), host.positions)
    np.testing.assert_array_equal(np.asarray(result.status), host.status)
