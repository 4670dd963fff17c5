"""``solve_skeleton_sequence``: a take solved in one compiled loop gives, frame by frame, exactly
what ``solve_skeleton_arrays`` gives when each frame starts from the answer before."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabrik import models
from fabrik.mocap import default_effectors
from fabrik.solvers import STATUSES
from fabrik.solvers.skeleton_fabrik import solve_skeleton_arrays, solve_skeleton_sequence
from fabrik_experiments.sample_motion import sample_walk


def frame_by_frame(skeleton, idx, targets, initial, roots, tol, max_iter, rigid, swing):
    prev = initial
    positions, iterations, errors, statuses = [], [], [], []
    for f in range(targets.shape[0]):
        sol = solve_skeleton_arrays(skeleton, idx, targets[f], prev, None if roots is None else roots[f], tol,
                                    max_iter, rigid, swing)
        prev = sol.positions
        positions.append(prev)
        iterations.append(sol.iterations)
        errors.append(sol.extras["effector_error_array"])
        statuses.append(sol.status)
    return np.array(positions), np.array(iterations), np.array(errors), tuple(statuses)


def assert_same(seq, loop):
    positions, iterations, errors, statuses = loop
    np.testing.assert_array_equal(seq.positions, positions)
    np.testing.assert_array_equal(seq.iterations, iterations)
    np.testing.assert_array_equal(seq.effector_errors, errors)
    assert seq.statuses == statuses


@pytest.fixture(scope="module")
def walk():
    skeleton, motion = sample_walk(n_frames=24)
    truth, _ = motion.world_transforms(skeleton)
    idx = np.array(default_effectors(skeleton), dtype=np.int64)
    return skeleton, np.ascontiguousarray(truth), idx


@pytest.mark.parametrize("rigid, swing", [("auto", True), (False, False), ("limbs", True)])
def test_a_walk_solved_in_one_call_matches_frame_by_frame(walk, rigid, swing):
    skeleton, truth, idx = walk
    targets = np.ascontiguousarray(truth[:, idx])
    roots = np.ascontiguousarray(truth[:, 0])
    tol = 1e-3 * 170.0
    loop = frame_by_frame(skeleton, idx, targets, truth[0], roots, tol, 1000, rigid, swing)
    seq = solve_skeleton_sequence(skeleton, idx, targets, truth[0], roots, tol, 1000, rigid, swing)
    assert_same(seq, loop)
    assert seq.reached.all()
    # in chunks with a progress report: the same answers, every frame reported once
    reports = []
    chunked = solve_skeleton_sequence(skeleton, idx, targets, truth[0], roots, tol, 1000, rigid, swing,
                                      progress=reports.append, chunk=5)
    assert_same(chunked, loop)
    assert reports == [5, 5, 5, 5, 4]


@settings(max_examples=15, deadline=None)
@given(model=st.sampled_from(["y_shape", "hand", "humanoid"]), seed=st.integers(0, 2**31 - 1),
       frames=st.integers(1, 6), fixed_root=st.booleans(), max_iter=st.sampled_from([0, 3, 1000]))
def test_random_target_paths_match_frame_by_frame_and_keep_the_bones(model, seed, frames, fixed_root, max_iter):
    skeleton = getattr(models, model)()
    rng = np.random.default_rng(seed)
    rest = skeleton.rest_positions()
    leaves = np.array(skeleton.leaves, dtype=np.int64)
    idx = rng.permutation(leaves)[: rng.integers(1, leaves.size + 1)]
    scale = float(np.ptp(rest, axis=0).max())
    # targets wander from the rest positions, some frames out of reach
    steps = rng.normal(0.0, 0.15 * scale, (frames, idx.size, 3))
    targets = rest[idx] + np.cumsum(steps, axis=0)
    roots = rest[0] + np.cumsum(rng.normal(0.0, 0.02 * scale, (frames, 3)), axis=0) if fixed_root else None
    tol = 1e-4 * scale
    loop = frame_by_frame(skeleton, idx, targets, rest, roots, tol, max_iter, False, False)
    seq = solve_skeleton_sequence(skeleton, idx, targets, rest, roots, tol, max_iter, False, False)
    assert_same(seq, loop)
    assert np.isfinite(seq.positions).all()
    bones = np.linalg.norm(seq.positions[:, 1:] - seq.positions[:, skeleton.parents[1:]], axis=2)
    rest_bones = np.linalg.norm(rest[1:] - rest[skeleton.parents[1:]], axis=1)
    np.testing.assert_allclose(bones, np.broadcast_to(rest_bones, bones.shape), atol=1e-9 * scale)
    expected_root = roots if roots is not None else np.broadcast_to(rest[0], (frames, 3))
    np.testing.assert_allclose(seq.positions[:, 0], expected_root, atol=1e-12 * scale)
    assert set(seq.statuses) <= set(STATUSES)


def test_bad_sequences_are_rejected_with_what_is_wrong():
    sk = models.y_shape()
    rest = sk.rest_positions()
    good = np.array([[[1.0, 4.0, 0.0]]] * 3)
    with pytest.raises(ValueError, match=r"\(F, k, 3\)"):
        solve_skeleton_sequence(sk, [6], good[0], rest)
    with pytest.raises(ValueError, match="F >= 1"):
        solve_skeleton_sequence(sk, [6], good[:0], rest)
    with pytest.raises(ValueError, match="initial"):
        solve_skeleton_sequence(sk, [6], good, rest[:5])
    with pytest.raises(ValueError, match="roots must have shape \\(3, 3\\)"):
        solve_skeleton_sequence(sk, [6], good, rest, np.zeros((2, 3)))
    bad = good.copy()
    bad[2, 0, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        solve_skeleton_sequence(sk, [6], bad, rest)
    with pytest.raises(ValueError, match="distinct"):
        solve_skeleton_sequence(sk, [6, 6], np.repeat(good, 2, axis=1), rest)
    # a fixed root that disagrees with the root joint's own target in one frame names that frame
    with_root = np.concatenate([np.repeat(rest[None, :1], 3, axis=0), good], axis=1)
    roots = np.repeat(rest[:1], 3, axis=0)
    roots[1, 0] += 1.0
    with pytest.raises(ValueError, match="frame 1: root conflicts"):
        solve_skeleton_sequence(sk, [0, 6], with_root, rest, roots)


def test_the_frame_cost_benchmark_runs(tmp_path, capsys):
    import importlib.util
    from pathlib import Path

    from fabrik import save_bvh

    skeleton, motion = sample_walk(n_frames=6)
    path = tmp_path / "walk.bvh"
    save_bvh(path, skeleton, motion)
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "frame_cost.py"
    spec = importlib.util.spec_from_file_location("frame_cost", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.main(str(path), 4)
    assert set(result) == {"full", "checks", "kernel", "kernel, no iteration", "sequence"}
    assert all(v > 0.0 for v in result.values())
    assert "sequence" in capsys.readouterr().out


def test_named_paths_give_the_array_answers_and_name_the_columns(walk):
    import fabrik

    skeleton, truth, idx = walk
    names = [skeleton.names[j] for j in idx]
    paths = {name: truth[:, j] for name, j in zip(names, idx)}
    tol = 1e-3 * 170.0
    named = fabrik.solve_sequence(skeleton, paths, truth[0], truth[:, 0], tol=tol, rigid_sub_bases="auto",
                                  swing_limbs=True, progress=True)
    arrays = solve_skeleton_sequence(skeleton, idx, np.ascontiguousarray(truth[:, idx]), truth[0], truth[:, 0], tol,
                                     1000, "auto", True)
    np.testing.assert_array_equal(named.positions, arrays.positions)
    np.testing.assert_array_equal(named.effector_errors, arrays.effector_errors)
    assert named.effectors == tuple(names) == arrays.effectors
    # one root for every frame, and the first frame alone as fabrik.solve gives it
    still = fabrik.solve_sequence(skeleton, {n: p[:1] for n, p in paths.items()}, truth[0], truth[0, 0], tol=tol)
    one = fabrik.solve(skeleton, targets={n: p[0] for n, p in paths.items()}, initial=truth[0], root=truth[0, 0],
                       tol=tol)
    np.testing.assert_array_equal(still.positions[0], one.positions)
    assert still.statuses == (one.status,) and still.iterations[0] == one.iterations


def test_bad_named_paths_say_which_joint_and_frame():
    import fabrik

    sk = models.y_shape()
    path = np.tile([[1.0, 4.0, 0.0]], (4, 1))
    with pytest.raises(ValueError, match="unknown joint 'elbow'"):
        fabrik.solve_sequence(sk, {"elbow": path})
    with pytest.raises(ValueError, match=r"targets\['left_tip'\] must have shape \(F, 3\)"):
        fabrik.solve_sequence(sk, {"left_tip": path[0]})
    with pytest.raises(ValueError, match="has 3 frames.*4"):
        fabrik.solve_sequence(sk, {"right_tip": path, "left_tip": path[:3]})
    bad = path.copy()
    bad[2, 1] = np.inf
    with pytest.raises(ValueError, match=r"targets\['left_tip'\] is not finite .* frame 2"):
        fabrik.solve_sequence(sk, {"left_tip": bad})
    with pytest.raises(ValueError, match="non-empty mapping"):
        fabrik.solve_sequence(sk, {})
    with pytest.raises(ValueError, match=r"root must have shape \(3,\) or \(4, 3\)"):
        fabrik.solve_sequence(sk, {"left_tip": path}, root=np.zeros((2, 3)))


def _wrist_path(skeleton, frames=12):
    rest = skeleton.rest_positions()
    return {"l_wrist": rest[skeleton.index("l_wrist")] + np.linspace(0.0, 0.35, frames)[:, None] * [1.0, 1.0, 0.3],
            "head": np.repeat(rest[None, skeleton.index("head")], frames, axis=0)}


@pytest.mark.parametrize("method", ["ccd", "jacobian-dls"])
def test_other_methods_run_frame_by_frame_as_fabrik_solve(method):
    import fabrik

    body = models.humanoid()
    paths = _wrist_path(body)
    take = fabrik.solve_sequence(body, paths, method=method, tol=1e-4)
    assert take.method == method and take.frames is None
    previous = body.rest_positions()
    for f in range(len(take.iterations)):
        sol = fabrik.solve(body, targets={n: p[f] for n, p in paths.items()}, initial=previous, method=method,
                           tol=1e-4)
        np.testing.assert_array_equal(take.positions[f], sol.positions)
        assert take.statuses[f] == sol.status and take.iterations[f] == sol.iterations
        np.testing.assert_array_equal(take.effector_errors[f], [sol.effector_errors[n] for n in take.effectors])
        previous = sol.positions


def test_a_skeleton_with_limits_is_solved_with_them_and_carries_its_frames():
    import fabrik
    from fabrik.constraints import Cone
    from fabrik.model.geometry import limit_violations

    body = models.humanoid()
    limited = body.with_constraints({"l_shoulder": Cone.circular(np.radians(10.0))})
    paths = _wrist_path(body)
    take = fabrik.solve_sequence(limited, paths, swing_limbs=True)
    assert take.method == "fabrik-constrained" and take.frames.shape == (12, body.n_joints, 3, 3)
    assert limit_violations(limited, take.positions, take.frames).max() < 1e-9
    free = fabrik.solve_sequence(body, paths, swing_limbs=True)
    assert limit_violations(limited, free.positions, take.frames).max() > 0.1  # the limit mattered
    # frame by frame: each frame from the positions and joint frames the one before ended with
    previous, frames = body.rest_positions(), None
    for f in range(12):
        options = {} if frames is None else {"initial_frames": frames}
        sol = fabrik.solve(limited, targets={n: p[f] for n, p in paths.items()}, initial=previous, swing_limbs=True,
                           **options)
        np.testing.assert_array_equal(take.positions[f], sol.positions)
        np.testing.assert_array_equal(take.frames[f], sol.extras["frames"])
        previous, frames = sol.positions, sol.extras["frames"]
    ccd = fabrik.solve_sequence(limited, paths, method="ccd")
    assert ccd.method == "ccd-constrained" and limit_violations(limited, ccd.positions, ccd.frames).max() < 1e-9


def test_bad_models_roots_and_options_are_named():
    import fabrik

    body = models.humanoid()
    paths = _wrist_path(body, 3)
    with pytest.raises(ValueError, match="takes a fabrik.Skeleton, got Chain"):
        fabrik.solve_sequence(fabrik.Chain.from_positions(np.eye(3)), paths)
    root = np.zeros((3, 3))
    root[1, 2] = np.nan
    with pytest.raises(ValueError, match="root is not finite .* frame 1"):
        fabrik.solve_sequence(body, paths, root=root)
    with pytest.raises(ValueError, match="root must be a point"):
        fabrik.solve_sequence(body, paths, root="abc")
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        fabrik.solve_sequence(body, paths, method="nope")
    with pytest.raises(ValueError, match="it takes rigid_sub_bases, swing_limbs, turn_search, reach_step, dls_start, dls_damping, initial_frames, root_rotation"):
        fabrik.solve_sequence(body, paths, damping=0.1)
    assert fabrik.solve_sequence(body, paths, max_iter=None).method == "fabrik"
