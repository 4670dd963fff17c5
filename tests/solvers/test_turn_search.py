"""``turn_search`` of constrained skeleton FABRIK: a tracked frame that ends short of its targets
is solved again from its start pose turned about the root's up axis, so a body whose pelvis turns
(which its targets barely show) is still followed under its limits; and the whole-take path of
``fabrik-constrained`` gives the frame-by-frame answers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik import models
from fabrik.constraints import humanoid
from fabrik.mocap import default_effectors
from fabrik.model.geometry import limit_violations, rest_up
from fabrik.solvers.skeleton_fabrik import TrackingOptions, solve_skeleton_arrays
from fabrik.solvers.turn_search import TURN_SEARCH_DEGREES


def _turning_body(degrees: float, frames: int):
    """The built-in humanoid with the default human limits, and the paths of its effectors as the
    whole rest pose turns in place about +Y by ``degrees`` over ``frames`` frames."""
    body = models.humanoid()
    limits, _ = humanoid(body)
    limited = body.with_constraints(limits)
    rest = body.rest_positions()
    angles = np.radians(degrees) * np.arange(frames) / max(frames - 1, 1)
    c, s = np.cos(angles), np.sin(angles)
    turns = np.zeros((frames, 3, 3))
    turns[:, 0, 0], turns[:, 0, 2], turns[:, 1, 1], turns[:, 2, 0], turns[:, 2, 2] = c, s, 1.0, -s, c
    poses = np.einsum("fij,nj->fni", turns, rest - rest[0]) + rest[0]
    paths = {body.names[j]: poses[:, j] for j in default_effectors(body)}
    return body, limited, paths


def test_the_rest_up_axis_is_the_body_s():
    assert np.allclose(rest_up(models.humanoid()), [0.0, 1.0, 0.0])
    # a body lying along +Z at rest: up is found from its names, not assumed
    body = models.humanoid()
    turn = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # +Y -> +Z
    lying = fabrik.Skeleton(body.names, body.parents, body.offsets @ turn.T)
    assert np.allclose(rest_up(lying), [0.0, 0.0, 1.0])


def test_a_body_turning_in_place_is_followed_with_the_search_and_lost_without():
    body, limited, paths = _turning_body(150.0, 40)
    rest = body.rest_positions()
    held = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True)
    searched = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True, turn_search=True)
    assert not held.reached.all()  # the held pelvis cannot follow: the case the search is for
    assert searched.reached.all()
    assert limit_violations(limited, searched.positions, searched.frames).max() < 1e-9
    lengths = np.linalg.norm(searched.positions[:, 1:] - searched.positions[:, body.parents[1:]], axis=-1)
    np.testing.assert_allclose(lengths, np.broadcast_to(body.bone_lengths[1:], lengths.shape), atol=1e-9)


def test_the_search_runs_only_after_a_frame_ends_short():
    body, limited, paths = _turning_body(20.0, 6)  # a small turn: every frame is reached as it is
    rest = body.rest_positions()
    # the pelvis held (no rigid root group turning it): the case the search is for
    held = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True, rigid_sub_bases=False)
    searched = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True, rigid_sub_bases=False,
                                     turn_search=True)
    assert held.reached.all()
    np.testing.assert_array_equal(held.positions, searched.positions)
    np.testing.assert_array_equal(held.iterations, searched.iterations)


@pytest.mark.parametrize("turn_search", [False, True])
def test_the_whole_take_path_gives_the_frame_by_frame_answers(turn_search):
    body, limited, paths = _turning_body(150.0, 30)
    rest = body.rest_positions()
    take = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True, turn_search=turn_search)
    idx = np.array([body.index(n) for n in paths], dtype=np.int64)
    targets = np.stack(list(paths.values()), axis=1)
    up = rest_up(body) if turn_search else None
    previous, frames = rest, None
    for f in range(targets.shape[0]):
        sol = solve_skeleton_arrays(limited, idx, targets[f], previous, None, fabrik.DEFAULT_TOL, 1000,
                                    swing_limbs=True, initial_frames=frames, turn_up=up)
        np.testing.assert_array_equal(take.positions[f], sol.positions)
        np.testing.assert_array_equal(take.frames[f], sol.extras["frames"])
        assert take.iterations[f] == sol.iterations and take.statuses[f] == sol.status
        previous, frames = sol.positions, sol.extras["frames"]


def test_runs_cut_for_a_progress_bar_give_the_same_answers():
    # a compiled run stops after a frame that ends short, and with a progress bar also every 1% of
    # the take (here every frame): the retries and the take go on from the same answers either way
    body, limited, paths = _turning_body(150.0, 30)
    rest = body.rest_positions()
    whole = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True, turn_search=True)
    cut = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True, turn_search=True, progress=True)
    held = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True)
    assert (whole.iterations != held.iterations).any()  # some frame was retried
    np.testing.assert_array_equal(whole.positions, cut.positions)
    np.testing.assert_array_equal(whole.frames, cut.frames)
    np.testing.assert_array_equal(whole.iterations, cut.iterations)
    np.testing.assert_array_equal(whole.status_codes, cut.status_codes)


@settings(max_examples=10, deadline=None)
@given(degrees=st.floats(-180.0, 180.0), frames=st.integers(2, 12), seed=st.integers(0, 2**31 - 1))
def test_searched_answers_keep_the_limits_and_bones_and_never_lose_to_the_unturned_start(degrees, frames, seed):
    body, limited, paths = _turning_body(degrees, frames)
    rng = np.random.default_rng(seed)
    paths = {n: p + rng.normal(0.0, 0.02, p.shape) for n, p in paths.items()}  # metres
    rest = body.rest_positions()
    take = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True, turn_search=True)
    assert limit_violations(limited, take.positions, take.frames).max() < 1e-9
    lengths = np.linalg.norm(take.positions[:, 1:] - take.positions[:, body.parents[1:]], axis=-1)
    np.testing.assert_allclose(lengths, np.broadcast_to(body.bone_lengths[1:], lengths.shape), atol=1e-9)
    # each frame's answer is at least as close as the unturned start's own answer from the same start
    idx = np.array([body.index(n) for n in paths], dtype=np.int64)
    targets = np.stack(list(paths.values()), axis=1)
    previous, prev_frames = rest, None
    for f in range(frames):
        plain = solve_skeleton_arrays(limited, idx, targets[f], previous, None, fabrik.DEFAULT_TOL, 1000,
                                      swing_limbs=True, initial_frames=prev_frames)
        assert take.effector_errors[f].max() <= max(plain.error, fabrik.DEFAULT_TOL) + 1e-12
        previous, prev_frames = take.positions[f], take.frames[f]


def test_bad_turn_search_values_are_named():
    with pytest.raises(ValueError, match="turn_search must be True or False"):
        TrackingOptions(turn_search="yes")
    body, limited, paths = _turning_body(10.0, 2)
    # without limits the search has nothing to do: the answers are those without it
    plain = fabrik.solve_sequence(body, paths)
    np.testing.assert_array_equal(fabrik.solve_sequence(body, paths, turn_search=True).positions, plain.positions)
    assert TURN_SEARCH_DEGREES == tuple(sorted(TURN_SEARCH_DEGREES, key=lambda d: (abs(d), -d)))


MOCAP = __import__("pathlib").Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mocap"


@pytest.mark.skipif(not (MOCAP / "cmu_131_01.bvh").is_file(), reason=f"motion-capture files not found in {MOCAP}")
def test_the_cmu_turn_is_tracked_under_the_humanoid_limits():
    # cmu_131_01 frames 300-400: the actor turns about 97 degrees; with the pelvis held from the
    # first frame, frames 328-372 stalled short of the head and the left hand
    from fabrik.mocap import reconstruct_take

    skeleton, motion = fabrik.load_bvh(MOCAP / "cmu_131_01.bvh")
    rec = reconstruct_take(skeleton, motion.frames(0, 400, 1), method="fabrik", constraints="humanoid")
    assert rec.method == "fabrik-constrained"
    assert rec.solution.reached.mean() >= 0.99
    assert limit_violations(rec.body, rec.solution.positions, rec.frames).max() < 1e-9


@pytest.mark.skipif(not (MOCAP / "cmu_131_01.bvh").is_file(), reason=f"motion-capture files not found in {MOCAP}")
def test_the_frames_a_held_pelvis_missed_are_reachable_within_the_limits():
    # the recorded pose of cmu_131_01's frames 328-378 (where tracking with the pelvis held from
    # the first frame stalled) is made legal by the solver's first backward stage and reaches
    # every target: the misses were the tracker's, not the limits'
    from fabrik.mocap import prepare_take, resolve_constraints
    from fabrik.model.geometry import frames_from_world_rotations

    skeleton, motion = fabrik.load_bvh(MOCAP / "cmu_131_01.bvh")
    take = prepare_take(skeleton, motion.frames(328, 379, 1))
    body = take.body
    limits, _ = resolve_constraints(body, "humanoid", pose=take.body_positions[0])
    limited = body.with_constraints(limits)
    positions = take.body_positions
    frames = frames_from_world_rotations(body, take.rotations[:, take.joints])
    idx = np.array(default_effectors(body), dtype=np.int64)
    tol = 1e-3 * body.height()
    for f in range(positions.shape[0]):
        sol = solve_skeleton_arrays(limited, idx, positions[f, idx], positions[f], positions[f, 0], tol, 1000,
                                    swing_limbs=False, initial_frames=frames[f], root_rotation=frames[f, 0])
        assert sol.status == "reached", f
        assert limit_violations(limited, sol.positions, sol.extras["frames"]).max() < 1e-9


def test_a_held_root_rotation_is_never_turned():
    body, limited, paths = _turning_body(150.0, 20)
    rest = body.rest_positions()
    held = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True, root_rotation=np.eye(3))
    searched = fabrik.solve_sequence(limited, paths, initial=rest, swing_limbs=True, root_rotation=np.eye(3),
                                     turn_search=True)
    np.testing.assert_array_equal(held.positions, searched.positions)
    np.testing.assert_array_equal(searched.frames[:, 0], np.broadcast_to(np.eye(3), (20, 3, 3)))
