"""Obstacles (``fabrik.obstacles``) and self-collision: the geometry, and FABRIK on chains, the
humanoid and arms keeping every bone out of them (issue 42, item 3)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik.constraints import Cone, limit_violations
from fabrik.obstacles import Box, Capsule, HalfSpace, Sphere, pack, penetration, signed_distance

SETTINGS = settings(max_examples=25, deadline=None)


def random_obstacles(rng, count, centre, spread, size, avoid, clear):
    """``count`` random obstacles around ``centre`` none of which comes within ``clear`` of the
    point ``avoid``."""
    out = []
    while len(out) < count:
        c = centre + rng.uniform(-spread, spread, 3)
        kind = rng.integers(4)
        r = rng.uniform(0.3, 1.0) * size
        if kind == 0:
            ob = Sphere(c, r)
        elif kind == 1:
            ob = Capsule(c, c + rng.normal(0, size, 3), 0.5 * r)
        elif kind == 2:
            q = rng.normal(size=4)
            from scipy.spatial.transform import Rotation

            ob = Box(c, rng.uniform(0.3, 1.0, 3) * size, Rotation.from_quat(q / np.linalg.norm(q)))
        else:
            n = rng.normal(size=3)
            ob = HalfSpace(avoid - (clear + spread) * n / np.linalg.norm(n), n)
        if signed_distance([ob], avoid) > clear:
            out.append(ob)
    return out


# --- geometry ---------------------------------------------------------------------------------

def brute_segment(ob, a, b, k=4001):
    t = np.linspace(0.0, 1.0, k)[:, None]
    return signed_distance([ob], a + t * (b - a)).min()


@given(st.integers(0, 10_000))
@SETTINGS
def test_segment_clearance_matches_sampling(seed):
    from fabrik.kernels.obstacles import segment_sdf

    rng = np.random.default_rng(seed)
    for ob in random_obstacles(rng, 4, np.zeros(3), 1.0, 1.0, np.full(3, 50.0), 0.0):
        a, b = rng.normal(0, 1.5, 3), rng.normal(0, 1.5, 3)
        exact = segment_sdf(pack([ob])[0], *a, *b)
        sampled = brute_segment(ob, a, b)
        # the sampled minimum is an upper bound, within the sampling step of the exact one
        assert exact <= sampled + 1e-12
        assert sampled - exact <= np.linalg.norm(b - a) / 4000 + 1e-9


def test_signed_distance_of_each_type():
    pts = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    assert np.allclose(signed_distance([Sphere([0, 0, 0], 1.0)], pts), [-1.0, 1.0])
    assert np.allclose(signed_distance([Capsule([0, -1, 0], [0, 1, 0], 0.5)], pts), [-0.5, 1.5])
    assert np.allclose(signed_distance([Box([0, 0, 0], [1, 2, 3])], pts), [-1.0, 1.0])
    assert np.allclose(signed_distance([HalfSpace([0, 0, 0], [0, 1, 0])], [[0, -2, 0], [0, 3, 0]]), [-2.0, 3.0])
    turned = Box([0, 0, 0], [1, 0.1, 0.1], np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]]))  # long axis along y
    assert np.allclose(signed_distance([turned], [[0, 0.9, 0], [0.9, 0, 0]]), [-0.1, 0.8])
    assert signed_distance([], [[1.0, 2.0, 3.0]])[0] == math.inf


@pytest.mark.parametrize("bad, match", [
    (lambda: Sphere([0, 0], 1.0), "3-vector"), (lambda: Sphere([0, 0, 0], -1.0), "positive"),
    (lambda: Sphere([0, 0, np.nan], 1.0), "finite"), (lambda: Box([0, 0, 0], [1, 0, 1]), "positive"),
    (lambda: HalfSpace([0, 0, 0], [0, 0, 0]), "non-zero"), (lambda: Capsule([0, 0, 0], [1, 1, 1], "a"), "positive"),
    (lambda: pack([Sphere([0, 0, 0], 1.0), "wall"]), r"obstacles\[1\]"), (lambda: pack("wall"), "list"),
])
def test_bad_obstacles_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        bad()


# --- chains -----------------------------------------------------------------------------------

def chain_scene(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    chain = fabrik.Chain.straight(n, 1.0)
    reach = n - 1.0
    obstacles = random_obstacles(rng, int(rng.integers(1, 8)), np.array([0.0, 0.5 * reach, 0.0]), 0.6 * reach,
                                 0.25 * reach, np.zeros(3), 0.05 * reach)
    target = rng.normal(size=3)
    target *= rng.uniform(0.1, 1.1) * reach / np.linalg.norm(target)
    return chain, obstacles, target, reach


@given(st.integers(0, 10_000))
@SETTINGS
def test_chain_bones_stay_out_of_obstacles(seed):
    chain, obstacles, target, reach = chain_scene(seed)
    sol = fabrik.solve(chain, target, obstacles=obstacles, tol=1e-3 * reach)
    p = sol.positions
    assert np.isfinite(p).all()
    assert penetration(obstacles, p) <= 1e-6 * reach
    assert np.allclose(np.linalg.norm(np.diff(p, axis=0), axis=1), chain.bone_lengths, atol=1e-9 * reach)
    assert np.array_equal(p[0], chain.rest_positions[0])
    assert sol.status in fabrik.STATUSES
    assert sol.extras["clearance"] >= -1e-12 * reach
    if sol.status == "reached":
        assert sol.error <= 1e-3 * reach
    inside = signed_distance(obstacles, target) < 0
    if inside:
        assert sol.status == "obstructed"


@given(st.integers(0, 10_000))
@SETTINGS
def test_limited_chain_with_obstacles_keeps_limits_and_clearance(seed):
    chain, obstacles, target, reach = chain_scene(seed)
    limited = chain.with_constraints({i: Cone.circular(math.radians(70)) for i in range(chain.n_joints - 1)})
    sol = fabrik.solve(limited, target, obstacles=obstacles, tol=1e-3 * reach, max_iter=300)
    assert sol.method == "fabrik-constrained"
    assert np.isfinite(sol.positions).all()
    assert limit_violations(limited, sol.positions, sol.extras["frames"]).max() <= 1e-6
    if sol.extras["clearance"] >= 0:  # a clear answer was found: it is the answer
        assert penetration(obstacles, sol.positions) <= 1e-6 * reach
    assert np.allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), 1.0, atol=1e-9)


def test_a_chain_goes_around_a_sphere():
    chain = fabrik.Chain.straight(8, 1.0)
    ball = Sphere([0.0, 3.5, 0.0], 1.0)
    target = [0.0, 6.0, 0.8]
    free = fabrik.solve(chain, target)
    assert penetration([ball], free.positions) > 0.1  # the straight answer goes through it
    sol = fabrik.solve(chain, target, obstacles=[ball])
    assert sol.status == "reached" and penetration([ball], sol.positions) == 0.0


def test_target_inside_an_obstacle_is_obstructed():
    chain = fabrik.Chain.straight(5, 1.0)
    ball = Sphere([1.5, 2.5, 0.0], 0.5)
    sol = fabrik.solve(chain, [1.5, 2.5, 0.0], obstacles=[ball])
    assert sol.status == "obstructed"
    assert penetration([ball], sol.positions) == 0.0
    assert sol.error == pytest.approx(0.5, abs=0.05)  # on the surface, as near as it can come


def test_root_inside_an_obstacle_is_refused():
    with pytest.raises(ValueError, match=r"root .* inside obstacles\[0\]"):
        fabrik.solve(fabrik.Chain.straight(3), [1.0, 1.0, 0.0], obstacles=[Sphere([0, 0, 0], 0.1)])


def test_blocked_by_a_wall():
    chain = fabrik.Chain.straight(4, 1.0)
    # a floor right under the root and a wall between the chain and its target
    wall = Box([1.5, 1.5, 0.0], [0.1, 5.0, 5.0])
    sol = fabrik.solve(chain, [2.5, 0.5, 0.0], obstacles=[wall, HalfSpace([0, -0.01, 0], [0, 1, 0])])
    assert sol.status == "blocked"
    assert penetration([wall], sol.positions) == 0.0


def test_planar_chain_stays_planar_with_obstacles():
    chain = fabrik.Chain.straight(6, 1.0, dim=2)
    sol = fabrik.solve(chain, [1.0, 4.0], obstacles=[Sphere([0.2, 2.5, 0.0], 0.6)])
    assert sol.positions.shape == (6, 2)
    assert penetration([Sphere([0.2, 2.5, 0.0], 0.6)], sol.positions) == 0.0


def test_other_methods_refuse_obstacles():
    with pytest.raises(ValueError, match="options of FABRIK"):
        fabrik.solve(fabrik.Chain.straight(4), [1.0, 1.0, 0.0], method="ccd", obstacles=[Sphere([5, 5, 5], 1)])


# --- skeletons --------------------------------------------------------------------------------

BODY = fabrik.models.humanoid()
REST = BODY.rest_positions()
HEIGHT = 1.75


def body_scene(seed):
    rng = np.random.default_rng(seed)
    obstacles = random_obstacles(rng, int(rng.integers(1, 8)), REST.mean(axis=0), 0.7, 0.2, REST[0], 0.15)
    targets = {"l_wrist": REST[5] + rng.normal(0, 0.25, 3), "r_wrist": REST[8] + rng.normal(0, 0.25, 3),
               "head": REST[2] + rng.normal(0, 0.05, 3)}
    return obstacles, targets


@given(st.integers(0, 10_000), st.sampled_from(["auto", False]))
@SETTINGS
def test_humanoid_bones_stay_out_of_obstacles(seed, rigid):
    obstacles, targets = body_scene(seed)
    sol = fabrik.solve(BODY, targets=targets, obstacles=obstacles, rigid_sub_bases=rigid)
    p = sol.positions
    assert np.isfinite(p).all()
    lengths = np.linalg.norm(p[1:] - p[np.asarray(BODY.parents[1:])], axis=1)
    assert np.allclose(lengths, np.linalg.norm(REST[1:] - REST[np.asarray(BODY.parents[1:])], axis=1), atol=1e-9)
    assert np.array_equal(p[0], REST[0])
    if sol.extras["clearance"] >= 0:
        assert penetration(obstacles, p, BODY.parents) <= 1e-6 * HEIGHT
    assert sol.status in fabrik.STATUSES


def test_humanoid_with_limits_and_obstacles():
    from fabrik.constraints import humanoid

    limits, _ = humanoid(BODY)
    body = BODY.with_constraints(limits)
    obstacles = [Sphere(REST[5] + [0.15, 0.15, 0.1], 0.08)]
    target = {"l_wrist": REST[5] + [0.3, 0.3, 0.2]}
    sol = fabrik.solve(body, targets=target, obstacles=obstacles)
    assert limit_violations(body, sol.positions, sol.extras["frames"]).max() <= 1e-6
    assert penetration(obstacles, sol.positions, BODY.parents) <= 1e-6 * HEIGHT


@given(st.integers(0, 10_000))
@settings(max_examples=10, deadline=None)
def test_self_collision_keeps_bones_apart(seed):
    rng = np.random.default_rng(seed)
    # the hands pulled across the body, through the other arm and the legs
    targets = {"l_wrist": REST[8] + rng.normal(0, 0.1, 3) + [0, 0.1, 0.15],
               "r_wrist": REST[5] + rng.normal(0, 0.1, 3) + [0, 0.1, 0.15]}
    radius = 0.03
    sol = fabrik.solve(BODY, targets=targets, self_collision=radius)
    assert np.isfinite(sol.positions).all()
    if sol.extras["self_clearance"] >= -1e-12:
        from fabrik.solvers.extended import self_clearance, self_pairs
        from fabrik.model.rig import rig

        arrays = rig(BODY)
        pairs = self_pairs(BODY, arrays.parents, arrays.lengths, arrays.rest, radius)
        assert self_clearance(sol.positions, arrays.parents, pairs, radius) >= -1e-9


def test_sequence_with_obstacles():
    frames = 12
    path = REST[5] + np.linspace([0, 0, 0], [0.3, 0.4, 0.3], frames)
    ball = Sphere(REST[5] + [0.12, 0.2, 0.25], 0.07)
    seq = fabrik.solve_sequence(BODY, {"l_wrist": path}, obstacles=[ball])
    assert seq.positions.shape == (frames, BODY.n_joints, 3)
    for f in range(frames):
        assert penetration([ball], seq.positions[f], BODY.parents) <= 1e-6 * HEIGHT


# --- arms -------------------------------------------------------------------------------------

@given(st.integers(0, 10_000))
@settings(max_examples=8, deadline=None)
def test_arm_links_stay_out_of_obstacles(seed):
    rng = np.random.default_rng(seed)
    arm = fabrik.models.dhm_arm()
    positions, _ = fabrik.forward(arm, arm.random_angles(int(rng.integers(1000))))
    base = positions[0]
    obstacles = random_obstacles(rng, int(rng.integers(1, 5)), base + [0, -30, 0], 25.0, 6.0, base, 5.0)
    sol = fabrik.solve(arm, positions[-1], obstacles=obstacles, tol=0.01)
    assert np.isfinite(sol.positions).all()
    assert np.all(sol.joint_angles >= arm.lower) and np.all(sol.joint_angles <= arm.upper)
    assert penetration(obstacles, sol.positions) <= 1e-6 * arm.reach
    assert np.allclose(fabrik.forward(arm, sol.joint_angles)[0], sol.positions)


def test_arm_self_collision():
    arm = fabrik.models.dhm_arm()
    positions, _ = fabrik.forward(arm, arm.random_angles(5))
    sol = fabrik.solve(arm, positions[-1], self_collision=2.0)
    assert sol.extras["self_clearance"] >= -1e-9
