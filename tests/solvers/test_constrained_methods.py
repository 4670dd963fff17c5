"""CCD and the Jacobian methods with joint limits (clamped): limits always hold, lengths are kept,
no NaN, easy targets are approached, and ``fabrik.solve`` routes constrained models to them."""

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_constrained_solve import check_solution, limited_chains
from test_skeleton_constraints import check_pose, random_limits, random_pose_within, random_tree

import fabrik
import fabrik.solvers as solvers
from fabrik.constraints import Cone, Hinge, Twist
from fabrik.model.constraints import random_pose
from fabrik.models import humanoid, y_shape

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mocap"
CHAIN_METHODS = ("jacobian-transpose", "jacobian-dls", "jacobian-svd-dls", "sdls")
SKELETON_METHODS = ("ccd", "jacobian-transpose", "jacobian-dls", "jacobian-svd-dls")


# --- chains ------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(case=limited_chains(), method=st.sampled_from(CHAIN_METHODS), kind=st.sampled_from(["posed", "random"]))
def test_chain_limits_hold_after_every_solve(case, method, kind):
    chain, rng = case
    target = random_pose(chain, rng)[0][-1] if kind == "posed" else rng.normal(size=3) * chain.total_length * 0.8
    sol = fabrik.solve(chain, target, method=f"{method}-constrained", max_iter=int(rng.integers(0, 200)))
    assert sol.method == f"{method}-constrained"
    check_solution(chain, sol)  # finite, lengths kept, every limit within 1e-6 rad (independent checker)
    assert sol.status in fabrik.STATUSES
    assert all(0 <= i < chain.n_joints - 1 for i in sol.extras["active_constraints"])


@settings(max_examples=20, deadline=None)
@given(case=limited_chains(dim=2, kinds=("cone", "hinge", "free")), method=st.sampled_from(CHAIN_METHODS))
def test_planar_chains_stay_planar(case, method):
    chain, rng = case
    target = random_pose(chain, rng)[0][-1][:2]
    sol = fabrik.solve(chain, target, method=f"{method}-constrained", max_iter=200)
    assert sol.positions.shape == (chain.n_joints, 2)
    check_solution(chain, sol)


def test_chain_easy_targets_are_approached():
    """Targets made by posing each chain within its limits: the error falls for every method
    (and most targets are reached; measured with this seed: dls 0.9, svd-dls 0.9, sdls 0.925,
    transpose 0.825 of 40)."""
    DEG = math.pi / 180
    for method in CHAIN_METHODS:
        rng = np.random.default_rng(3)
        reached = 0
        for _ in range(20):
            n = int(rng.integers(3, 7))
            chain = fabrik.Chain.from_positions(np.cumsum(rng.normal(size=(n, 3)), axis=0))
            chain = chain.with_constraints({i: Cone(*rng.uniform(20 * DEG, 120 * DEG, 4)) for i in range(n - 1)})
            target = random_pose(chain, rng)[0][-1]
            start = fabrik.solve(chain, target, method=method, max_iter=0)
            sol = fabrik.solve(chain, target, method=method, max_iter=1000)
            check_solution(chain, sol)
            assert sol.error <= start.error
            reached += sol.reached
        assert reached >= 14, (method, reached)


def test_chain_without_limits_matches_the_unconstrained_method():
    chain = fabrik.Chain.straight(5)
    target = np.array([1.5, 2.0, 0.7])
    for method in CHAIN_METHODS:
        free = fabrik.solve(chain, target, method=method)
        clamped = fabrik.solve(chain, target, method=f"{method}-constrained")
        assert clamped.iterations == free.iterations
        np.testing.assert_allclose(clamped.positions, free.positions, atol=1e-9)


def test_chain_routing_options_and_errors():
    chain = fabrik.Chain.straight(4).with_constraints({1: Cone.circular(0.5), 2: Hinge((1.0, 0.0, 0.0), 0.0, 2.0)})
    for method in CHAIN_METHODS + ("jacobian-dls-tuned",):
        sol = fabrik.solve(chain, [1.0, 2.0, 0.5], method=method)
        assert sol.method == f"{method}-constrained"
        assert set(sol.extras) >= {"frames", "root_frame", "active_constraints"}
    sol = fabrik.solve(chain, [1.0, 2.0, 0.5], method="jacobian-dls", damping=0.5, max_angle_step=0.1)
    check_solution(chain, sol)
    with pytest.raises(ValueError, match="takes no option"):
        fabrik.solve(chain, [1.0, 2.0, 0.5], method="jacobian-dls", alpha=1.0)
    with pytest.raises(ValueError, match="oriented"):
        fabrik.solve(chain, ([1.0, 2.0, 0.5], np.eye(3)), method="jacobian-dls")


# --- skeletons ---------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.integers(3, 9), st.integers(0, 2**31 - 1), st.sampled_from(SKELETON_METHODS))
def test_skeleton_limits_hold_after_every_solve(n, seed, method):
    rng = np.random.default_rng(seed)
    skel = random_tree(rng, n)
    skel = skel.with_constraints(random_limits(rng, skel))
    leaves = skel.leaves
    chosen = [j for j in leaves if rng.random() < 0.8] or leaves[:1]
    rest = skel.rest_positions()
    reach = skel.height() + 1.0
    targets = {skel.names[j]: rest[j] + rng.normal(size=3) * reach * 0.7 for j in chosen}
    sol = solvers.solve(skel, targets=targets, method=f"{method}-constrained", max_iter=int(rng.integers(0, 60)))
    assert sol.method == f"{method}-constrained" and sol.status in solvers.STATUSES
    check_pose(skel, sol)  # lengths, frames, no NaN, both limit checkers within 1e-6 rad


def test_skeleton_easy_targets_are_approached():
    rng = np.random.default_rng(11)
    cases = []
    for make in (y_shape, humanoid):
        base = make()
        for _ in range(4):
            limits = {}
            for j in range(base.n_joints):
                if j not in base.leaves and rng.random() < 0.7:
                    limits[base.names[j]] = (Cone.circular(rng.uniform(0.6, 1.6)),) if rng.random() < 0.7 else \
                        (Hinge((1.0, 0.0, 0.0), -0.2, rng.uniform(0.8, 2.2)),)
            skel = base.with_constraints(limits)
            goal, _ = random_pose_within(skel, rng)
            cases.append((skel, {skel.names[j]: goal[j] for j in skel.leaves}))
    for method in SKELETON_METHODS:
        for skel, targets in cases:
            start = solvers.solve(skel, targets=targets, method=method, max_iter=0)
            sol = solvers.solve(skel, targets=targets, method=method, max_iter=300, tol=1e-3 * skel.height())
            assert sol.method == f"{method}-constrained"
            check_pose(skel, sol)
            assert sol.error < start.error, (method, sol.error, start.error)


@pytest.mark.parametrize("method", SKELETON_METHODS)
def test_untargeted_bones_keep_their_length_over_many_iterations(method):
    # the right branch carries no target: its frames are products of its parents' every
    # iteration, whose rounding reached 1e-8 of the bone lengths in 300 iterations
    base = y_shape()
    skel = base.with_constraints({
        "root": Cone(1.365, 1.448, 1.517, 0.103), "trunk1": Twist(-2.245, -1.345),
        "fork": Cone.circular(0.266),
        "left1": [Hinge((0.99963, 0.0, -0.02721), -3.016, 1.328), Twist(-2.173, 2.634)],
        "right1": [Cone(1.368, 0.160, 1.084, 2.688), Twist(-1.258, 1.173)]})
    targets = {"trunk2": [0.0065, 1.96, -0.2457], "trunk1": [0.19, 0.85, -0.07], "left1": [-0.53, 3.31, 0.2],
               "fork": [0.83, 2.12, 0.27]}
    sol = solvers.solve(skel, targets=targets, method=method, tol=0.0, max_iter=300)
    p = sol.positions
    drift = np.abs(np.linalg.norm(p[1:] - p[base.parents[1:]], axis=1) - base.bone_lengths[1:])
    assert drift.max() < 1e-12, (base.names[1 + drift.argmax()], drift.max())
    frames = np.asarray(sol.extras["frames"])
    np.testing.assert_allclose(np.einsum("nji,njk->nik", frames, frames), np.broadcast_to(np.eye(3), frames.shape),
                               atol=1e-12)


@pytest.mark.parametrize("method", SKELETON_METHODS)
def test_a_solve_with_nothing_to_turn_stops_before_its_first_iteration(method):
    """One rule for CCD and the Jacobian methods, with and without limits: when no bone lies on a
    path to a target (only the root targeted; with limits, only zero-length bones on the paths)
    the solve stops at once, 'unreachable' here (the targets are off the fixed root), 0 iterations."""
    skel = fabrik.Skeleton.from_parents(["root", "dot", "a", "b"], [-1, 0, 0, 2],
                                        [[0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 1, 0]])
    limited = skel.with_constraints({"a": Cone.circular(0.5)})
    # a root target 1e-13 off the explicit root (within the 1e-12 agreement asked of them), tol 0
    for model, name in ((skel, method), (limited, f"{method}-constrained")):
        sol = solvers.solve(model, targets={"root": [1e-13, 0.0, 0.0]}, root=[0.0, 0.0, 0.0], tol=0.0,
                            method=name)
        assert (sol.method, sol.status, sol.iterations) == (name, "unreachable", 0)
        np.testing.assert_allclose(sol.positions, skel.rest_positions(), rtol=0, atol=1e-12)
    # with limits a zero-length bone has no direction to turn: the path root -> dot cannot move
    sol = solvers.solve(limited, targets={"dot": [1.0, 0.0, 0.0]}, method=f"{method}-constrained", max_iter=50)
    assert (sol.status, sol.iterations) == ("unreachable", 0)
    np.testing.assert_allclose(sol.positions, skel.rest_positions(), rtol=0, atol=1e-12)


def test_skeleton_frames_options_and_errors():
    base = y_shape()
    skel = base.with_constraints({base.names[1]: Cone.circular(0.4)})
    targets = {base.names[j]: base.rest_positions()[j] + 0.3 for j in base.leaves}
    from fabrik.model.geometry import frames_from_pose

    frames = frames_from_pose(skel, skel.rest_positions())
    for method in SKELETON_METHODS:
        sol = solvers.solve(skel, targets=targets, method=method, initial_frames=frames, max_iter=50)
        check_pose(skel, sol)
        again = solvers.solve(skel, targets=targets, method=method, initial=sol.positions,
                              initial_frames=sol.extras["frames"], max_iter=50)
        check_pose(skel, again)
        with pytest.raises(ValueError, match="initial_frames"):
            solvers.solve(skel, targets=targets, method=method, initial_frames=np.zeros((2, 3, 3)))
        with pytest.raises(ValueError, match="free"):
            solvers.solve(skel, targets=targets, method=method, root_rotation="free")
    with pytest.raises(ValueError, match="; it takes "):
        solvers.solve(skel, targets=targets, method="ccd", damping=1.0)


needs_mocap = pytest.mark.skipif(not (MOCAP / "cmu_131_01.bvh").is_file(),
                                 reason=f"motion-capture files not found in {MOCAP}")


@needs_mocap
def test_reconstruct_runs_exactly_the_named_methods():
    from fabrik_experiments.reconstruction import reconstruct_file

    named = ["fabrik", "fabrik-constrained", "ccd", "ccd-constrained", "jacobian-dls", "jacobian-dls-constrained"]
    report, _, _ = reconstruct_file(MOCAP / "cmu_131_01.bvh", frames="0:30", constraints="humanoid", methods=named)
    assert [r.method for r in report.results] == named
    with pytest.raises(ValueError, match="none of the methods .* applies them: add fabrik-constrained"):
        reconstruct_file(MOCAP / "cmu_131_01.bvh", frames="0:3", constraints="humanoid", methods=["fabrik", "ccd"])
    for r in report.results:
        if r.method.endswith("-constrained"):
            assert 0.0 <= r.max_limit_violation <= 1e-6
        else:
            assert r.max_limit_violation is None
