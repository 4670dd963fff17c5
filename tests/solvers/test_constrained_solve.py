"""Constrained FABRIK and CCD on chains: limits always hold, reachable targets are reached."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.constraints import Cone, Hinge, Twist
from fabrik.model.constraints import random_pose

DEG = math.pi / 180
METHODS = ("fabrik", "ccd")


# --- an independent checker -------------------------------------------------------------------
def twist_of(parent, frame):
    """Twist (radians) of ``frame`` about its +Y relative to ``parent``, via scipy's rotations."""
    rel = parent.T @ frame
    y = rel[:, 1]
    axis = np.cross([0.0, 1.0, 0.0], y)
    s = np.linalg.norm(axis)
    swing = Rotation.from_rotvec(axis / s * math.atan2(s, y[1])) if s > 1e-12 else Rotation.identity()
    return (swing.inv() * Rotation.from_matrix(rel)).as_rotvec()[1]


def cone_limit(cone, x, z):
    """The boundary's polar angle at the azimuth of (x, z): the quadrant's elliptical cone
    ``cot^2(limit) = cos^2(phi) cot^2(a_x) + sin^2(phi) cot^2(a_z)``, signs kept for angles > 90."""
    phi = math.atan2(z, x)
    a_x = cone.right if x >= 0 else cone.left
    a_z = cone.up if z >= 0 else cone.down
    k = math.cos(phi) ** 2 * math.copysign(math.tan(a_x) ** -2, math.cos(a_x)) + \
        math.sin(phi) ** 2 * math.copysign(math.tan(a_z) ** -2, math.cos(a_z))
    return math.atan2(1.0, math.copysign(math.sqrt(abs(k)), k))


def limit_violations(chain, sol):
    """Largest violation (radians) of any limit, measured from positions and the reported frames."""
    frames = np.asarray(sol.extras["frames"])
    root = np.asarray(sol.extras["root_frame"])
    pos = np.zeros((chain.n_joints, 3))
    pos[:, :chain.dim] = sol.positions
    worst = 0.0
    for i in range(chain.n_joints - 1):
        d = pos[i + 1] - pos[i]
        if np.linalg.norm(d) > 1e-9:  # frames follow their bones
            assert np.allclose(frames[i][:, 1], d / np.linalg.norm(d), atol=1e-9)
        assert np.allclose(frames[i].T @ frames[i], np.eye(3), atol=1e-9) and np.linalg.det(frames[i]) > 0
    for i, items in chain.constraints.items():
        parent = root if i == 0 else frames[i - 1]
        local = parent.T @ frames[i][:, 1]
        for c in items:
            if isinstance(c, Cone) and chain.dim == 3:
                polar = math.acos(float(np.clip(local[1], -1, 1)))
                worst = max(worst, polar - cone_limit(c, local[0], local[2]))
            elif isinstance(c, Cone):  # 2D: the in-plane angle towards left (+) / right (-)
                theta = math.atan2(-local[0], local[1])
                worst = max(worst, theta - c.left, -c.right - theta)
            elif isinstance(c, Hinge):
                a = np.array(c.axis)
                worst = max(worst, abs(math.asin(float(np.clip(local @ a, -1, 1)))))
                theta = math.atan2(np.cross([0, 1, 0], local) @ a, local[1])
                worst = max(worst, theta - c.max, c.min - theta)
                if not any(isinstance(t, Twist) for t in items):
                    worst = max(worst, abs(twist_of(parent, frames[i])))
            else:
                tw = twist_of(parent, frames[i])
                worst = max(worst, tw - c.max, c.min - tw)
    return worst


def check_solution(chain, sol):
    assert np.isfinite(sol.positions).all()
    lengths = np.linalg.norm(np.diff(sol.positions, axis=0), axis=1)
    assert np.allclose(lengths, chain.bone_lengths, rtol=1e-9, atol=1e-9)
    assert limit_violations(chain, sol) <= 1e-6


# --- strategies ----------------------------------------------------------------------------------
@st.composite
def limited_chains(draw, dim=3, kinds=("cone", "hinge", "twist", "cone+twist", "free")):
    n = draw(st.integers(2, 7))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    points = np.cumsum(rng.uniform(0.3, 1.5, size=(n, 1)) * rng.normal(size=(n, dim)), axis=0)
    chain = fabrik.Chain.from_positions(points)
    limits = {}
    for i in range(n - 1):
        kind = kinds[rng.integers(len(kinds))]
        twist = Twist(*sorted(rng.uniform(-3, 3, 2))) if dim == 3 else Twist(-1.0, 1.0)
        if kind == "cone":
            limits[i] = Cone(*rng.uniform(5 * DEG, 175 * DEG, 4))
        elif kind == "cone+twist":
            limits[i] = (Cone(*rng.uniform(5 * DEG, 175 * DEG, 4)), twist)
        elif kind == "hinge":
            phi = rng.uniform(0, 2 * math.pi) if dim == 3 else 0.5 * math.pi
            lo, hi = sorted(rng.uniform(-3, 3, 2))
            limits[i] = Hinge((math.cos(phi), 0.0, math.sin(phi)), lo, hi)
        elif kind == "twist":
            limits[i] = twist
    return chain.with_constraints(limits), rng


@settings(max_examples=60, deadline=None)
@given(case=limited_chains(), method=st.sampled_from(METHODS), kind=st.sampled_from(["posed", "random"]))
def test_limits_hold_after_every_solve(case, method, kind):
    chain, rng = case
    if kind == "posed":
        target = random_pose(chain, rng)[0][-1]
    else:
        target = rng.normal(size=3) * chain.total_length * 0.8
    # an unconstrained chain is routed to plain FABRIK/CCD, so name the constrained method there
    sol = fabrik.solve(chain, target, method=method if chain.constraints else f"{method}-constrained", max_iter=200)
    assert sol.method == f"{method}-constrained"
    check_solution(chain, sol)
    assert sol.status in fabrik.STATUSES
    assert sol.reached == (sol.error <= 1e-3)
    assert sol.extras["local_rotations"].shape == (chain.n_joints, 4)
    assert sol.extras["swing_angles"].shape == sol.extras["twist_angles"].shape == (chain.n_joints,)
    assert all(0 <= i < chain.n_joints - 1 for i in sol.extras["active_constraints"])


@pytest.mark.parametrize("method", METHODS)
def test_a_planar_bone_folded_back_has_no_twist(method):
    # a 2D chain's frames keep +Z on the plane's normal; a bone folded exactly back onto its
    # parent used to read as a half turn of twist (pi, outside this Twist limit)
    chain = fabrik.Chain.straight(3, dim=2).with_constraints({1: Twist(-0.5, 0.5)})
    sol = fabrik.solve(chain, [0.0, 0.0], method=f"{method}-constrained")
    assert sol.extras["swing_angles"][1] == pytest.approx(math.pi)
    np.testing.assert_array_equal(sol.extras["twist_angles"], 0.0)


@settings(max_examples=30, deadline=None)
@given(case=limited_chains(dim=2, kinds=("cone", "hinge", "free")), method=st.sampled_from(METHODS))
def test_planar_chains_stay_planar(case, method):
    chain, rng = case
    target = random_pose(chain, rng)[0][-1][:2]
    sol = fabrik.solve(chain, target, method=method if chain.constraints else f"{method}-constrained", max_iter=200)
    assert sol.positions.shape == (chain.n_joints, 2)
    check_solution(chain, sol)
    frames = np.asarray(sol.extras["frames"])
    assert np.allclose(frames[:, 2, 1], 0.0, atol=1e-9)  # bones in the plane
    # +Z stays the plane's normal, so the limits mean the same in world terms: left = about +z
    assert np.allclose(frames[:, :, 2], [0.0, 0.0, 1.0], atol=1e-9)


def reach_rate(method, kinds, n_chains=40, seed=3):
    rng = np.random.default_rng(seed)
    reached = 0
    for _ in range(n_chains):
        n = int(rng.integers(3, 8))
        chain = fabrik.Chain.from_positions(np.cumsum(rng.normal(size=(n, 3)), axis=0))
        limits = {}
        for i in range(n - 1):
            kind = kinds[rng.integers(len(kinds))]
            if kind == "cone":
                limits[i] = Cone(*rng.uniform(10 * DEG, 120 * DEG, 4))
            elif kind == "cone+twist":
                limits[i] = (Cone(*rng.uniform(10 * DEG, 120 * DEG, 4)), Twist(*sorted(rng.uniform(-2, 2, 2))))
        chain = chain.with_constraints(limits)
        target = random_pose(chain, rng)[0][-1]
        sol = fabrik.solve(chain, target, method=method, max_iter=1000)
        check_solution(chain, sol)
        reached += sol.reached
    return reached / n_chains


@pytest.mark.parametrize("method", METHODS)
def test_reachable_targets_within_limits_are_reached(method):
    # targets made by posing each chain randomly within its limits. Measured with this seed:
    # fabrik 0.975, ccd 0.875 (seeds 4 and 5: fabrik 0.925/0.925, ccd 0.95/0.975); limits can trap
    # either method in a local minimum, so the bound is a rate, not every target
    assert reach_rate(method, ("cone", "cone+twist")) >= 0.85


def test_routing_and_extras():
    chain = fabrik.Chain.straight(4).with_constraints({1: Cone.circular(40 * DEG)})
    sol = fabrik.solve(chain, [1.0, 2.0, 0.5])
    assert sol.method == "fabrik-constrained"
    assert fabrik.solve(chain, [1.0, 2.0, 0.5], method="ccd").method == "ccd-constrained"
    ex = sol.extras
    assert ex["frames"].shape == (4, 3, 3) and ex["root_frame"].shape == (3, 3)
    # local rotations compose back to the frames
    parents = np.concatenate([ex["root_frame"][None], ex["frames"][:-1]])
    rebuilt = parents @ Rotation.from_quat(ex["local_rotations"]).as_matrix()
    assert np.allclose(rebuilt[:-1], ex["frames"][:-1], atol=1e-9)
    assert ex["swing_angles"][1] <= 40 * DEG + 1e-9
    with pytest.raises(TypeError):
        ex["frames"] = None  # read-only mapping
    with pytest.raises(ValueError, match="orientation_tol"):
        fabrik.solve(chain, [1.0, 2.0, 0.5], orientation_tol=-1)
    with pytest.raises(ValueError, match="takes no option 'bogus'; it takes orientation_tol"):
        fabrik.solve(chain, [1.0, 2.0, 0.5], bogus=1)


def test_active_constraints_reported():
    # a straight chain asked to fold back must press every joint against its cone
    chain = fabrik.Chain.straight(4).with_constraints({i: Cone.circular(20 * DEG) for i in range(3)})
    sol = fabrik.solve(chain, [0.0, -1.0, 0.5])
    check_solution(chain, sol)
    assert not sol.reached
    assert sol.extras["active_constraints"] == [0, 1, 2]
    assert np.allclose(sol.extras["swing_angles"][:3], 20 * DEG, atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_unreachable_target(method):
    chain = fabrik.Chain.straight(5).with_constraints({i: Cone.circular(30 * DEG) for i in range(4)})
    sol = fabrik.solve(chain, [10.0, 3.0, 0.0], method=method)
    check_solution(chain, sol)
    assert sol.status == "unreachable"


# --- oriented targets ----------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["rotation", "quat", "matrix"])
@pytest.mark.parametrize("method", METHODS)
def test_oriented_target_is_matched(method, form):
    chain = fabrik.Chain.straight(5).with_constraints({1: Twist(-2.5, 2.5), 2: Cone.circular(100 * DEG)})
    rng = np.random.default_rng(11)
    pose, frames = random_pose(chain, rng)
    rot = Rotation.from_matrix(frames[-1])
    value = {"rotation": rot, "quat": fabrik.quat_xyzw(rot.as_quat()), "matrix": rot.as_matrix()}[form]
    sol = fabrik.solve(chain, (pose[-1], value), method=method, max_iter=2000)
    check_solution(chain, sol)
    assert sol.reached, sol
    assert sol.extras["orientation_error"] <= 1e-3
    with pytest.raises(ValueError, match="needs a rotation, got None"):
        fabrik.solve(chain, ([0.0, 1.5, 1.0], None))
    last = sol.positions[-1] - sol.positions[-2]
    assert np.allclose(last / np.linalg.norm(last), rot.as_matrix()[:, 1], atol=2e-3)  # +Y = last bone


def test_oriented_target_on_unconstrained_chain_routes_to_constrained():
    chain = fabrik.Chain.straight(4)
    rot = Rotation.from_euler("x", 90, degrees=True)
    sol = fabrik.solve(chain, ([0.0, 1.5, 1.0], rot))
    assert sol.method == "fabrik-constrained" and sol.reached
    assert sol.extras["orientation_error"] <= 1e-3


def test_an_orientation_the_limits_cannot_meet_stops_on_the_best_pose_it_saw():
    # position and orientation pull this limited planar chain back and forth for ever: it used to
    # run to the cap (1000 iterations) and stop wherever the cycle was
    chain = fabrik.Chain.from_positions(np.array([[0, 0], [0, 1], [0, 2], [0, 3.0]])).with_constraints(
        {0: Cone.circular(0.5), 1: Hinge((0, 0, 1), -0.5, 0.5), 2: Twist(-0.1, 0.1)})
    goal = ([0.5, 2.5], Rotation.from_euler("z", -20, degrees=True))
    sol = fabrik.solve(chain, goal)
    assert sol.status == "stalled" and sol.iterations < 1000
    check_solution(chain, sol)
    weight = chain.bone_lengths[-1]  # the orientation error as a distance at the last bone's tip
    for cap in (5, 20, 60, 150):
        other = fabrik.solve(chain, goal, max_iter=cap)
        assert (sol.error + weight * sol.extras["orientation_error"]
                <= other.error + weight * other.extras["orientation_error"] + 1e-12)


def test_a_position_the_limits_block_stops_on_the_best_pose_instead_of_cycling():
    # the limits make FABRIK alternate between two poses (errors 1.32 and 0.83 on alternate
    # iterations): it used to run to the cap and end 2.20 off, further than its start (2.02)
    chain = fabrik.Chain.straight(3).with_constraints({0: Cone.circular(1.0), 1: Cone.circular(1.0)})
    sol = fabrik.solve(chain, [-0.9, 0.2, 0.2])
    assert sol.status == "stalled" and sol.iterations < 1000
    check_solution(chain, sol)
    for cap in (10, 11, 100, 101):
        assert sol.error <= fabrik.solve(chain, [-0.9, 0.2, 0.2], max_iter=cap).error + 1e-12
    # a capped solve also answers with the best pose it saw, not where the cycle was
    assert fabrik.solve(chain, [-0.9, 0.2, 0.2], max_iter=12).error < 0.84
    # beyond the reach: unreachable, not max_iterations
    beyond = fabrik.Chain.straight(4).with_constraints({i: Cone.circular(0.5) for i in range(3)})
    sol = fabrik.solve(beyond, [1.4, -4.7, -0.7])
    assert sol.status == "unreachable" and sol.iterations < 1000
    check_solution(beyond, sol)


@pytest.mark.parametrize("bad, msg", [(np.ones(3), "shape"), (np.zeros(4), "must say its order"), (np.eye(3) * 2, "rotation"),
                                      ("x", "Rotation"), (Rotation.random(2, random_state=1), "single")])
def test_bad_target_rotation(bad, msg):
    chain = fabrik.Chain.straight(3)
    with pytest.raises(ValueError, match=msg):
        fabrik.solve(chain, (np.array([0.0, 1.0, 1.0]), bad))


@pytest.mark.parametrize("rotvec", [[0.3, 0, 0], [np.pi, 0, 0], [0, np.pi, 0]])
def test_2d_target_rotation_must_turn_about_z(rotvec):
    chain = fabrik.Chain.straight(4, dim=2)
    with pytest.raises(ValueError, match="about the z axis only"):
        fabrik.solve(chain, (np.array([1.0, 2.0]), Rotation.from_rotvec(rotvec)))


# --- the DHM arm of Lamb et al.: ball shoulder, hinge elbow 0-120 degrees, ball wrist ----------
ARM_LIMITS = {
    0: (Cone(100 * DEG, 60 * DEG, 90 * DEG, 90 * DEG), Twist(-80 * DEG, 80 * DEG)),
    1: Hinge((1, 0, 0), 0.0, 120 * DEG),
    2: (Cone(70 * DEG, 70 * DEG, 30 * DEG, 30 * DEG), Twist(-60 * DEG, 60 * DEG)),
}


@pytest.mark.parametrize("oriented", [False, True])
def test_arm_with_hinge_elbow(oriented):
    arm = fabrik.Chain.from_positions([[0, 0, 0], [0, -30, 0], [0, -55, 0], [0, -63, 0]]).with_constraints(ARM_LIMITS)
    rng = np.random.default_rng(4)
    reached = 0
    for _ in range(20):
        pose, frames = random_pose(arm, rng)
        sol = fabrik.solve(arm, (pose[-1], frames[-1]) if oriented else pose[-1], tol=0.1, max_iter=500)
        check_solution(arm, sol)
        elbow = sol.extras["swing_angles"][1]
        assert -1e-9 <= elbow <= 120 * DEG + 1e-9
        reached += sol.reached
    # measured with this seed: 20 of 20 positions; 12 of 20 position-and-orientation targets
    # (oriented targets under tight wrist/elbow limits often stall: see docs/constraints.md)
    assert reached >= (18 if not oriented else 9)


def test_constrained_benchmark_rows():
    from fabrik_experiments.constrained import run_constrained_bench

    rows = run_constrained_bench(n_targets=6, repeats=1)
    assert [r["method"] for r in rows] == ["fabrik-constrained", "ccd-constrained"]
    for r in rows:
        assert r["targets"] == "reachable"
        assert {"mean_iterations", "median_us", "p90_us", "success_rate", "mean_error"} <= set(r)
        assert r["max_violation_rad"] <= 1e-9
        assert 0.0 <= r["success_rate"] <= 1.0 and r["median_us"] > 0


@pytest.mark.parametrize("max_iter", [0, 300])
def test_long_hinge_chain_from_a_folded_start_keeps_lengths_and_frames(max_iter):
    # rounding in the limited directions used to grow joint by joint (bones 5x their length at 80)
    n = 80
    chain = fabrik.Chain.straight(n).with_constraints({i: Hinge((1, 0, 0), -1, 1) for i in range(n - 1)})
    sol = fabrik.solve(chain, [0, 24, 16], initial=np.zeros((n, 3)), max_iter=max_iter)
    np.testing.assert_allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), 1.0, atol=1e-12)
    frames = np.asarray(sol.extras["frames"])
    np.testing.assert_allclose(np.einsum("nji,njk->nik", frames, frames), np.broadcast_to(np.eye(3), frames.shape),
                               atol=1e-12)
