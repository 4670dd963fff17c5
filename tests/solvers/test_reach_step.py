"""``reach_step`` of skeleton FABRIK without limits: a solve whose held trunk groups settle where a
limb cannot reach its target is solved again from the groups turned to bring every target within
reach; the whole-take, batch and crowd paths give the single solve's answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik import models
from fabrik.mocap import default_effectors
from fabrik.model.geometry import frames_from_pose
from fabrik.model.rig import rig
from fabrik.solvers.reach_step import trunk_layout, turn_trunk
from fabrik.solvers.skeleton_fabrik import TrackingOptions, solve_skeleton_arrays

MOCAP = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mocap"
RUN = MOCAP / "deepmimic" / "run.bvh"


def _body_and_layout():
    body = models.humanoid()
    arrays = rig(body)
    effectors = np.array(default_effectors(body))
    return body, arrays, effectors, trunk_layout(arrays.parents, arrays.lengths, arrays.groups("auto"), effectors)


def test_the_humanoid_trunk_is_its_pelvis_and_neck_groups():
    body, _, effectors, layout = _body_and_layout()
    assert [body.names[c] for c in layout.centres] == ["pelvis", "neck"]
    # each limb reaches from the trunk joint it hangs from
    rest = body.rest_positions()
    # the pelvis group holds the thighs (knees) and the neck, the neck group the head and shoulders
    assert [body.names[t] for t in layout.tops] == ["head", "l_shoulder", "r_shoulder", "l_knee", "r_knee"]
    for t, e in enumerate(effectors.tolist()):
        path, j = 0.0, e
        while j != layout.tops[t]:
            path += np.linalg.norm(rest[j] - rest[body.parents[j]])
            j = body.parents[j]
        assert layout.reach[t] == pytest.approx(path)


def test_no_trunk_without_held_groups():
    body = models.humanoid()
    arrays = rig(body)
    assert trunk_layout(arrays.parents, arrays.lengths, arrays.groups(False), np.array(default_effectors(body))) is None


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.floats(0.2, 1.5))
def test_the_turn_keeps_bones_and_root_and_never_takes_targets_further_out_of_reach(seed, spread):
    body, arrays, effectors, layout = _body_and_layout()
    rng = np.random.default_rng(seed)
    rest = body.rest_positions()
    targets = rest[effectors] + rng.normal(scale=spread, size=(effectors.size, 3))
    frames = frames_from_pose(body, rest)
    answer = turn_trunk(layout, rest, frames, targets, tol=1e-3)
    if answer is None:  # every target already within reach: nothing to turn
        return
    turned, turned_frames = answer
    assert np.isfinite(turned).all()
    # each carried joint keeps its place in its parent's frame (the frames turn with the joints)
    carried = np.unique(np.concatenate(layout.subtrees))
    parents = body.parents[carried]
    local = np.einsum("nji,nj->ni", frames[parents], rest[carried] - rest[parents])
    turned_local = np.einsum("nji,nj->ni", turned_frames[parents], turned[carried] - turned[parents])
    np.testing.assert_allclose(turned_local, local, atol=1e-9)
    np.testing.assert_allclose(np.einsum("nji,njk->nik", turned_frames, turned_frames),
                               np.broadcast_to(np.eye(3), frames.shape), atol=1e-12)
    assert turn_trunk(layout, rest, np.zeros((0, 3, 3)), targets, tol=1e-3)[1].shape == (0, 3, 3)
    np.testing.assert_allclose(turned[0], rest[0], atol=1e-12)
    lengths = np.linalg.norm(turned[1:] - turned[body.parents[1:]], axis=1)
    np.testing.assert_allclose(lengths, np.linalg.norm(rest[1:] - rest[body.parents[1:]], axis=1), atol=1e-9)

    def squared_excess(pose):  # what the step lowers
        d = np.linalg.norm(pose[layout.tops] - targets, axis=1)
        return ((np.maximum(0, d - layout.reach) + np.maximum(0, layout.shortest - d)) ** 2).sum()
    assert squared_excess(turned) <= squared_excess(rest)


def test_option_is_checked():
    with pytest.raises(ValueError, match="reach_step"):
        TrackingOptions(reach_step="yes")


@pytest.mark.skipif(not RUN.is_file(), reason=f"DeepMimic clips not found in {RUN.parent} (../shared/data)")
def test_deepmimic_run_is_followed_with_the_step_and_lost_without():
    from fabrik.mocap import reconstruct_take

    skeleton, motion = fabrik.load_bvh(RUN)
    plain = reconstruct_take(skeleton, motion, method="fabrik", reach_step=False)
    stepped = reconstruct_take(skeleton, motion, method="fabrik")  # reach_step on, as fabrik reconstruct runs
    assert plain.solution.reached.mean() < 0.7  # the held trunk's fixed point: the case the step is for
    assert stepped.solution.reached.mean() >= 0.99
    positions = stepped.solution.positions
    parents = np.asarray(stepped.body.parents)
    lengths = np.linalg.norm(positions[:, 1:] - positions[:, parents[1:]], axis=-1)
    rest = stepped.body.rest_positions()
    np.testing.assert_allclose(lengths, np.broadcast_to(np.linalg.norm(rest[1:] - rest[parents[1:]], axis=1),
                                                        lengths.shape), atol=1e-9)


@pytest.mark.skipif(not RUN.is_file(), reason=f"DeepMimic clips not found in {RUN.parent} (../shared/data)")
def test_take_batch_and_crowd_give_the_single_solves_answers():
    from fabrik.mocap import prepare_take

    skeleton, motion = fabrik.load_bvh(RUN)
    take = prepare_take(skeleton, motion.frames(0, 24, 1))
    body, truth = take.body, take.body_positions
    eff = np.array(default_effectors(body))
    tol = 1e-3 * body.height()
    paths = {body.names[j]: truth[:, j] for j in eff.tolist()}
    seq = fabrik.solve_sequence(body, paths, initial=truth[0], root=truth[:, 0], tol=tol, reach_step=True)
    prev, short = truth[0], 0
    for f in range(truth.shape[0]):
        one = solve_skeleton_arrays(body, eff, truth[f, eff], prev, truth[f, 0], tol, reach_step=True)
        first = solve_skeleton_arrays(body, eff, truth[f, eff], prev, truth[f, 0], tol)
        short += first.status != "reached"
        np.testing.assert_array_equal(seq.positions[f], one.positions)
        assert seq.iterations[f] == one.iterations
        prev = one.positions
    assert short > 0  # the step ran in this stretch
    assert seq.reached.all()
    # a batch of these frames, each from the answer without the step of the frame before (where
    # some end short), and a crowd of two copies of the take
    starts = fabrik.solve_sequence(body, paths, initial=truth[0], root=truth[:, 0], tol=tol).positions[:-1]
    goals = truth[1:][:, eff]
    batch = fabrik.solve_batch(body, goals, effectors=[body.names[j] for j in eff], initial=starts,
                               root=truth[1:, 0], tol=tol, reach_step=True)
    unstepped = fabrik.solve_batch(body, goals, effectors=[body.names[j] for j in eff], initial=starts,
                                   root=truth[1:, 0], tol=tol)
    assert not unstepped.reached.all() and batch.reached.sum() > unstepped.reached.sum()
    for i in range(goals.shape[0]):
        single = fabrik.solve(body, targets=dict(zip(paths, goals[i])), initial=starts[i], root=truth[i + 1, 0],
                              tol=tol, reach_step=True)
        np.testing.assert_array_equal(batch.positions[i], single.positions)
    crowd = fabrik.solve_sequence(body, {k: np.stack([v, v]) for k, v in paths.items()},
                                  initial=truth[0], root=np.stack([truth[:, 0]] * 2), tol=tol, reach_step=True)
    np.testing.assert_array_equal(crowd.positions[1], seq.positions)


@pytest.mark.skipif(not RUN.is_file(), reason=f"DeepMimic clips not found in {RUN.parent} (../shared/data)")
def test_with_limits_the_step_turns_frames_too_and_breaks_no_limit():
    from fabrik.constraints import limit_violations
    from fabrik.mocap import prepare_take, reconstruct_take

    skeleton, motion = fabrik.load_bvh(RUN)
    runs = {step: reconstruct_take(skeleton, motion, method="fabrik-constrained", constraints="humanoid",
                                   turn_search=False, reach_step=step) for step in (False, True)}
    assert runs[False].solution.reached.mean() < 0.7
    assert runs[True].solution.reached.mean() >= 0.99
    body, solution = runs[True].body, runs[True].solution
    assert limit_violations(body, solution.positions, solution.frames).max() < 1e-9
    # batch rows that end short are retried by fabrik.solve: the same answers
    truth = prepare_take(skeleton, motion).body_positions
    eff = default_effectors(body)
    names = [body.names[j] for j in eff]
    goals, roots = truth[1:][:, eff], truth[1:, 0]
    starts, frames = runs[False].solution.positions[:-1], runs[False].solution.frames[:-1]
    tol = runs[True].tol
    batch = fabrik.solve_batch(body, goals, effectors=names, initial=starts, root=roots, tol=tol,
                               initial_frames=frames, reach_step=True)
    unstepped = fabrik.solve_batch(body, goals, effectors=names, initial=starts, root=roots, tol=tol,
                                   initial_frames=frames)
    assert batch.reached.sum() > unstepped.reached.sum()
    for i in range(0, goals.shape[0], 4):
        single = fabrik.solve(body, targets=dict(zip(names, goals[i])), initial=starts[i], root=roots[i], tol=tol,
                              initial_frames=frames[i], reach_step=True)
        np.testing.assert_array_equal(batch.positions[i], single.positions)
        assert batch.status_names[batch.status[i]] == single.status
