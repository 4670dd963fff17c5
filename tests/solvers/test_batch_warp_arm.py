"""solve_batch(arm, backend="warp") on the Warp arm kernel (fabrik.kernels.batch_warp_arm), run on
Warp's CPU device: FABRIK on the DHM arm (and S-R-S arms of other proportions), pose and position
targets, reachable and not, shared and per-row starts; every row equals fabrik.solve's (joint values,
positions and frames to 1e-9 of the arm's reach, iterations and statuses exactly); device arrays in,
device arrays out; other methods and arms fall back to the CPU with a warning naming why."""

import warnings

import numpy as np
import pytest

import fabrik
from fabrik import models
from fabrik_experiments.fuzz_arms import random_arm

wp = pytest.importorskip("warp", reason="NVIDIA Warp is not installed (pip install warp-lang, the 'gpu' extra)")

COUNT = 48


@pytest.fixture(scope="module", autouse=True)
def _warp_ready():
    from fabrik.kernels.batch_warp import import_warp

    import_warp()


def pose_case(arm, seed, count=COUNT):
    """(points (count, 3), rotations (count, 3, 3), starts (count, 7)): tip poses of random angles,
    every fifth point pushed out of reach, every fifth (from the second) pulled to the shoulder (the
    base origin), inside the elbow's range (which keeps the wrist off the shoulder), every fifth
    (from the third) a pose of the straight arm with the shoulder's and the wrist's middle joints at
    pi / 2 (singular: the hinge plane of a straight arm, and the first and last axes of the shoulder
    and of the wrist in line, the Euler angles' gimbal lock), and random start angles."""
    angles = arm.random_angles(seed, count)
    angles[2::5, 1] = angles[2::5, 5] = np.pi / 2
    angles[2::5, 3] = 0.0
    positions, frames = fabrik.forward(arm, angles)
    points, rotations = positions[:, -1].copy(), frames[:, -1].copy()
    points[::5] *= 1.7
    points[1::5] *= 0.05
    return points, rotations, arm.random_angles(seed + 100, count)


def on_cpu(values):
    return wp.array(np.ascontiguousarray(values), dtype=wp.float64, device="cpu")


def host(values):
    return values.numpy() if isinstance(values, wp.array) else np.asarray(values)


def assert_rows_match_solve(arm, result, points, rotations=None, starts=None, **options):
    """Row k of ``result`` (host or Warp arrays) equals fabrik.solve on target k from start k (starts
    (7,) shared, (count, 7) per row, or None): joint values, positions and frames within 1e-9 of the
    reach, errors too, iterations and statuses exactly."""
    atol = 1e-9 * arm.reach
    q, positions, frames = host(result.joint_angles), host(result.positions), host(result.frames)
    iterations, status, error = host(result.iterations), host(result.status), host(result.error)
    oerr = None if result.orientation_error is None else host(result.orientation_error)
    assert (oerr is None) == (rotations is None)
    for k in range(len(points)):
        start = None if starts is None else (starts if np.ndim(starts) == 1 else starts[k])
        target = points[k] if rotations is None else (points[k], rotations[k])
        single = fabrik.solve(arm, target, initial=start, **options)
        np.testing.assert_allclose(q[k], single.joint_angles, rtol=0, atol=1e-9, err_msg=f"row {k}")
        np.testing.assert_allclose(positions[k], single.positions, rtol=0, atol=atol, err_msg=f"row {k}")
        np.testing.assert_allclose(frames[k], single.extras["frames"], rtol=0, atol=1e-9, err_msg=f"row {k}")
        assert abs(error[k] - single.error) <= atol, k
        assert iterations[k] == single.iterations, k
        assert fabrik.STATUSES[status[k]] == single.status, k
        if oerr is not None:
            assert abs(oerr[k] - single.extras["orientation_error"]) <= 1e-9, k


@pytest.mark.parametrize("lengths", [None, (25.0, 31.0, 12.0)])
@pytest.mark.parametrize("starts_kind", ["rest", "shared", "per-row"])
def test_pose_targets_match_solve(lengths, starts_kind):
    arm = models.dhm_arm() if lengths is None else models.dhm_arm(*lengths)
    points, rotations, starts = pose_case(arm, 1)
    initial = {"rest": None, "shared": starts[0], "per-row": starts}[starts_kind]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # on the device: no HostFallbackWarning
        result = fabrik.solve_batch(arm, (points, rotations), initial=initial, backend="warp", device="cpu")
    assert isinstance(result.joint_angles, np.ndarray) and result.iterations.dtype == np.int64
    assert {"reached", "unreachable"} <= set(result.statuses())
    assert_rows_match_solve(arm, result, points, rotations, initial)


@pytest.mark.parametrize("starts_kind", ["rest", "shared", "per-row"])
def test_position_targets_match_solve(starts_kind):
    arm = models.dhm_arm()
    points, _, starts = pose_case(arm, 2)
    initial = {"rest": None, "shared": starts[0], "per-row": starts}[starts_kind]
    result = fabrik.solve_batch(arm, points, initial=initial, backend="warp", device="cpu")
    assert result.orientation_error is None
    assert {"reached", "unreachable", "stalled"} <= set(result.statuses())
    assert_rows_match_solve(arm, result, points, None, initial)


@pytest.mark.parametrize("max_iter", [0, 1, 3])
def test_iteration_caps_and_tolerances_match_solve(max_iter):
    """Position targets run FABRIK iterations on the device: small caps end them (max_iterations),
    and a loose tolerance and orientation tolerance change which rows count as reached."""
    arm = models.dhm_arm()
    points, rotations, starts = pose_case(arm, 3, 24)
    result = fabrik.solve_batch(arm, points, initial=starts, max_iter=max_iter, backend="warp", device="cpu")
    assert_rows_match_solve(arm, result, points, None, starts, max_iter=max_iter)
    if max_iter == 3:
        assert "max_iterations" in set(result.statuses())
    loose = fabrik.solve_batch(arm, (points, rotations), initial=starts, tol=0.5, orientation_tol=0.05,
                               max_iter=max_iter, backend="warp", device="cpu")
    assert_rows_match_solve(arm, loose, points, rotations, starts, tol=0.5, orientation_tol=0.05, max_iter=max_iter)


def test_warp_arrays_in_warp_arrays_out():
    """Points, rotations, transforms and starts as Warp arrays stay on their device; the answers are
    Warp arrays there, equal to the host batch's."""
    arm = models.dhm_arm()
    points, rotations, starts = pose_case(arm, 4)
    reference = fabrik.solve_batch(arm, (points, rotations), initial=starts)
    transforms = np.tile(np.eye(4), (COUNT, 1, 1))
    transforms[:, :3, :3], transforms[:, :3, 3] = rotations, points
    for targets in [(on_cpu(points), on_cpu(rotations)), on_cpu(transforms), (on_cpu(points), rotations)]:
        result = fabrik.solve_batch(arm, targets, initial=on_cpu(starts), backend="warp")
        for name in ("joint_angles", "positions", "frames", "iterations", "error", "orientation_error", "status",
                     "reached"):
            value = getattr(result, name)
            assert isinstance(value, wp.array) and str(value.device) == "cpu", name
            np.testing.assert_allclose(value.numpy(), getattr(reference, name), rtol=0, atol=1e-9 * arm.reach,
                                       err_msg=name)
    position = fabrik.solve_batch(arm, on_cpu(points), initial=on_cpu(starts[0]), backend="warp")
    assert isinstance(position.joint_angles, wp.array) and position.orientation_error is None
    assert_rows_match_solve(arm, position, points, None, starts[0])
    host_targets = fabrik.solve_batch(arm, points, initial=on_cpu(starts), backend="warp", device="cpu")
    assert isinstance(host_targets.joint_angles, np.ndarray)  # host targets: host answers
    assert_rows_match_solve(arm, host_targets, points, None, starts)


def test_device_rotations_are_read_as_the_host_reads_them():
    """A matrix that is a rotation only to 1e-9 is replaced by the nearest rotation, as on the host
    (only that row crosses); one that is no rotation is refused naming its row; the caller's array
    is never written; non-finite targets are refused."""
    arm = models.dhm_arm()
    points, rotations, _ = pose_case(arm, 5, 12)
    near = rotations.copy()
    near[7] *= 1.0 + 1e-9
    device_near = on_cpu(near)
    result = fabrik.solve_batch(arm, (on_cpu(points), device_near), backend="warp")
    reference = fabrik.solve_batch(arm, (points, near))
    np.testing.assert_allclose(result.joint_angles.numpy(), reference.joint_angles, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(device_near.numpy(), near)
    transforms = np.tile(np.eye(4), (12, 1, 1))
    transforms[:, :3, :3], transforms[:, :3, 3] = near, points
    as_transforms = fabrik.solve_batch(arm, on_cpu(transforms), backend="warp")
    np.testing.assert_allclose(as_transforms.joint_angles.numpy(), reference.joint_angles, rtol=0, atol=1e-9)
    bad = rotations.copy()
    bad[3] *= 2.0
    with pytest.raises(ValueError, match=r"rotations\[3\]"):
        fabrik.solve_batch(arm, (on_cpu(points), on_cpu(bad)), backend="warp")
    transforms[5, 3, 0] = 1.0
    with pytest.raises(ValueError, match=r"targets\[5\]"):
        fabrik.solve_batch(arm, on_cpu(transforms), backend="warp")
    points[4, 1] = np.nan
    with pytest.raises(ValueError, match="targets contains a non-finite value"):
        fabrik.solve_batch(arm, on_cpu(points), backend="warp")
    with pytest.raises(ValueError, match=r"initial must have shape \(7,\) or \(12, 7\)"):
        fabrik.solve_batch(arm, on_cpu(np.zeros((12, 3))), initial=on_cpu(np.zeros((3, 7))), backend="warp")
    with pytest.raises(ValueError, match="root is not used"):
        fabrik.solve_batch(arm, on_cpu(np.zeros((12, 3))), root=np.zeros(3), backend="warp")


def test_float32_answers_near_float64():
    """precision="float32" runs the same kernels in single precision: nearly every status as
    float64's, the tips of targets both reach within 1e-3 of the reach, the typical joint value
    within 1e-5 radians (near a straight elbow or a gimbal lock single precision may pick
    another of the equivalent angle sets: docs/batch.md gives the measured differences)."""
    arm = models.dhm_arm()
    points, rotations, starts = pose_case(arm, 6, 400)
    for targets in ((points, rotations), points):
        exact = fabrik.solve_batch(arm, targets, initial=starts, backend="warp", device="cpu")
        single = fabrik.solve_batch(arm, targets, initial=starts, backend="warp", device="cpu", precision="float32")
        assert single.joint_angles.dtype == np.float32 and single.positions.dtype == np.float32
        assert (single.status == exact.status).mean() > 0.95
        both = exact.reached & single.reached
        assert np.median(np.abs(single.joint_angles[both] - exact.joint_angles[both])) < 1e-5
        assert np.abs(single.positions[both][:, -1] - exact.positions[both][:, -1]).max() < 1e-3 * arm.reach


@pytest.mark.parametrize("method", ["fabrik-revolute", "ccd", "jacobian-dls"])
def test_other_methods_fall_back_to_the_cpu_and_say_which(method):
    from fabrik.solvers.batch_device import HostFallbackWarning

    arm = models.dhm_arm()
    points, rotations, _ = pose_case(arm, 7, 4)
    reference = fabrik.solve_batch(arm, (points, rotations), method=method, max_iter=50)
    with pytest.warns(HostFallbackWarning, match=f"Warp arm kernel runs FABRIK on an arm .* uses method '{method}'"):
        result = fabrik.solve_batch(arm, (on_cpu(points), on_cpu(rotations)), method=method, max_iter=50,
                                    backend="warp")
    assert isinstance(result.joint_angles, wp.array)
    np.testing.assert_array_equal(result.joint_angles.numpy(), reference.joint_angles)
    with pytest.raises(ValueError, match="precision='float32' is for arms on the Warp arm kernel"):
        fabrik.solve_batch(arm, points, method=method, backend="warp", precision="float32")


def test_other_arms_fall_back_to_the_cpu_and_say_why():
    from fabrik.solvers.batch_device import HostFallbackWarning

    robot = random_arm(np.random.default_rng(4))
    points = fabrik.forward(robot, robot.random_angles(1, 3))[0][:, -1].copy()
    with pytest.warns(HostFallbackWarning, match="this arm is not a 7-joint S-R-S arm"):
        result = fabrik.solve_batch(robot, points, backend="warp", max_iter=50)
    np.testing.assert_array_equal(result.joint_angles, fabrik.solve_batch(robot, points, max_iter=50).joint_angles)
