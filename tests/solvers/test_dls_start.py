"""``dls_start``: skeleton FABRIK started by one damped least-squares step (``fabrik-dls-start``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik import models
from fabrik.constraints import limit_violations
from fabrik.mocap import default_effectors, evaluated_joints, prepare_take
from fabrik.solvers.skeleton_fabrik import DLS_START_DAMPING, TrackingOptions, dls_start_damping

from tests.solvers.test_skeleton_constraints import random_limits, random_tree

MOCAP = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mocap"
CLIMB = MOCAP / "climb" / "climb_0.bvh"


def _bones(skeleton, positions):
    parents = np.asarray(skeleton.parents)
    return np.linalg.norm(positions[..., 1:, :] - positions[..., parents[1:], :], axis=-1)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(3, 12), st.booleans())
def test_bones_root_and_limits_hold_and_nothing_is_nan(seed, n, limited):
    rng = np.random.default_rng(seed)
    skeleton = random_tree(rng, n)
    if limited:
        skeleton = skeleton.with_constraints(random_limits(rng, skeleton, 0.6))
    rest = skeleton.rest_positions()
    leaves = list(skeleton.leaves)
    size = max(skeleton.height(), 1e-3)
    targets = {skeleton.names[j]: rest[j] + rng.normal(scale=0.5 * size, size=3) for j in leaves}
    sol = fabrik.solve(skeleton, targets=targets, tol=1e-6 * size, max_iter=200, dls_start=True)
    assert np.isfinite(sol.positions).all()
    np.testing.assert_allclose(sol.positions[0], rest[0], atol=1e-9 * size)
    np.testing.assert_allclose(_bones(skeleton, sol.positions), _bones(skeleton, rest), atol=1e-9 * size)
    if skeleton.constraints:
        assert limit_violations(skeleton, sol.positions, sol.extras["frames"]).max() < 1e-9


def test_the_step_is_taken_and_counts_no_iteration():
    body = models.humanoid()
    rest = body.rest_positions()
    names = [body.names[j] for j in default_effectors(body)]
    rng = np.random.default_rng(3)
    targets = {name: rest[body.index(name)] + rng.normal(scale=0.05 * body.height(), size=3) for name in names}
    plain = fabrik.solve(body, targets=targets, max_iter=0)
    stepped = fabrik.solve(body, targets=targets, max_iter=0, dls_start=True)
    assert plain.iterations == stepped.iterations == 0
    assert stepped.error < 0.8 * plain.error  # one DLS step towards the targets, before any iteration
    named = fabrik.solve(body, targets=targets, max_iter=0, method="fabrik-dls-start")
    np.testing.assert_array_equal(named.positions, stepped.positions)


def test_damping_defaults_to_the_height_and_is_checked():
    body = models.humanoid()
    assert dls_start_damping(body, TrackingOptions()) == 0.0
    assert dls_start_damping(body, TrackingOptions(dls_start=True)) == pytest.approx(DLS_START_DAMPING * body.height())
    assert dls_start_damping(body, TrackingOptions(dls_start=True, dls_damping=0.3)) == 0.3
    for bad in (0.0, -1.0, float("nan"), "x"):
        with pytest.raises(ValueError, match="dls_damping"):
            TrackingOptions(dls_start=True, dls_damping=bad)
    with pytest.raises(ValueError, match="dls_start"):
        TrackingOptions(dls_start=1)


def test_take_batch_and_crowd_give_the_single_solves_answers():
    body = models.humanoid()
    rest = body.rest_positions()
    eff = default_effectors(body)
    names = [body.names[j] for j in eff]
    rng = np.random.default_rng(11)
    frames = 12
    drift = np.cumsum(rng.normal(scale=0.03 * body.height(), size=(frames, len(eff), 3)), axis=0)
    paths = {name: rest[j] + drift[:, t] for t, (name, j) in enumerate(zip(names, eff))}
    for limited in (False, True):
        model = body.with_constraints(fabrik.constraints.humanoid(body)[0]) if limited else body
        seq = fabrik.solve_sequence(model, paths, initial=rest, dls_start=True)
        prev, prev_frames = rest, None
        for f in range(frames):
            one = fabrik.solve(model, targets={k: v[f] for k, v in paths.items()}, initial=prev, dls_start=True,
                               **({"initial_frames": prev_frames} if limited and prev_frames is not None else {}))
            np.testing.assert_array_equal(seq.positions[f], one.positions)
            prev, prev_frames = one.positions, one.extras.get("frames")
        goals = np.stack([v for v in paths.values()], axis=1)
        batch = fabrik.solve_batch(model, goals, effectors=names, initial=rest, dls_start=True)
        for i in range(0, frames, 5):
            single = fabrik.solve(model, targets=dict(zip(names, goals[i])), initial=rest, dls_start=True)
            np.testing.assert_array_equal(batch.positions[i], single.positions)
        crowd = fabrik.solve_sequence(model, {k: np.stack([v, v]) for k, v in paths.items()}, initial=rest,
                                      dls_start=True)
        np.testing.assert_array_equal(crowd.positions[1], seq.positions)


@pytest.mark.skipif(not CLIMB.is_file(), reason=f"the climbing take is not in {CLIMB.parent} (../shared/data)")
def test_the_climbing_take_is_followed_as_closely_as_dls_follows_it():
    skeleton, motion = fabrik.load_bvh(CLIMB)
    take = prepare_take(skeleton, motion)
    body, truth = take.body, take.body_positions
    eff = default_effectors(body)
    inner = evaluated_joints(body, eff)
    paths = {body.names[j]: truth[:, j] for j in eff}
    height = body.height()

    def median(method, **options):
        seq = fabrik.solve_sequence(body, paths, initial=truth[0], root=truth[:, 0], method=method,
                                    tol=1e-3 * height, **options)
        return np.median(np.linalg.norm(seq.positions[:, inner] - truth[:, inner], axis=2)) / height

    plain, stepped, dls = median("fabrik"), median("fabrik-dls-start"), median("jacobian-dls")
    # FABRIK alone drifts in the directions 13 effectors leave free; the DLS step carries the body along
    assert stepped < 0.6 * plain
    assert stepped < 1.2 * dls
