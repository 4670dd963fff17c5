"""Pole (bend) targets: ``fabrik.solve(chain, target, pole=...)``, ``poles={joint: xyz}`` on
skeletons and the S-R-S arm's elbow (issue 42, item 1)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik.constraints import Cone, limit_violations

SETTINGS = settings(max_examples=60, deadline=None)


def pole_case(seed, bones):
    """A chain of ``bones`` random bones, a random reachable target (away from the inner and outer
    reach and off the chain's start line) and a random pole off the root-target line."""
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(0.5, 1.5, bones)
    points = np.zeros((bones + 1, 3))
    points[1:, 1] = np.cumsum(lengths)
    chain = fabrik.Chain.from_positions(points)
    total = lengths.sum()
    inner = max(0.0, 2 * lengths.max() - total)
    while True:
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        r = rng.uniform(inner + 0.05 * total, 0.95 * total)
        target = r * d
        pole = rng.normal(0, total, 3)
        off = pole - (pole @ d) * d
        if np.linalg.norm(off) > 0.05 * total and abs(d[1]) < 0.99:
            return chain, target, pole, total


def side_and_plane(p, k, target, pole):
    """(the pole joint's offset from the root-target line along the pole's offset, its distance
    from the plane through root, target and pole)."""
    u = target / np.linalg.norm(target)
    joint = p[k] - (p[k] @ u) * u
    w = pole - (pole @ u) * u
    normal = np.cross(u, w / np.linalg.norm(w))
    return joint @ (w / np.linalg.norm(w)), abs(p[k] @ normal)


@given(st.integers(0, 100_000))
@SETTINGS
def test_two_bone_elbow_in_the_pole_plane_on_its_side(seed):
    chain, target, pole, total = pole_case(seed, 2)
    sol = fabrik.solve(chain, target, pole=pole, tol=1e-10 * total)
    assert sol.status == "reached"
    along, off = side_and_plane(sol.positions, 1, target, pole)
    assert along > 0.0
    assert off <= 1e-6 * total
    assert np.allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), chain.bone_lengths, atol=1e-12)


@given(st.integers(0, 100_000))
@SETTINGS
def test_three_bone_pole_joint_on_the_pole_side(seed):
    chain, target, pole, total = pole_case(seed, 3)
    sol = fabrik.solve(chain, target, pole=pole, tol=1e-6 * total)
    assert sol.status == "reached"
    assert sol.extras["pole_joint"] == 2  # n // 2 of 4 joints
    along, _ = side_and_plane(sol.positions, 2, target, pole)
    assert along > 0.0


def test_pole_joint_can_be_chosen():
    chain = fabrik.Chain.straight(5, 1.0)
    target, pole = np.array([1.0, 2.5, 0.0]), np.array([0.0, 1.0, 3.0])
    sol = fabrik.solve(chain, target, pole=pole, pole_joint=1, tol=1e-8)
    along, _ = side_and_plane(sol.positions, 1, target, pole)
    assert sol.extras["pole_joint"] == 1 and along > 0.0


def test_a_moving_pole_never_flips_the_elbow():
    chain = fabrik.Chain.straight(3, 1.0)
    target = np.array([0.4, 1.2, 0.3])
    u = target / np.linalg.norm(target)
    e1 = np.cross(u, [0.0, 0.0, 1.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(u, e1)
    previous = None
    angles = []
    for t in np.linspace(0.0, 2 * math.pi, 241):
        pole = 0.6 * target + 2.0 * (math.cos(t) * e1 + math.sin(t) * e2)
        sol = fabrik.solve(chain, target, pole=pole, initial=previous, tol=1e-9)
        previous = sol.positions
        elbow = sol.positions[1] - (sol.positions[1] @ u) * u
        angles.append(math.atan2(elbow @ e2, elbow @ e1))
        assert side_and_plane(sol.positions, 1, target, pole)[0] > 0.0
    steps = np.abs(np.angle(np.exp(1j * np.diff(angles))))
    assert steps.max() < 2 * (2 * math.pi / 240)  # it follows the pole; a flip would be pi


def test_pole_with_limits_keeps_the_limits():
    chain = fabrik.Chain.straight(4, 1.0).with_constraints({i: Cone.circular(math.radians(50)) for i in range(3)})
    sol = fabrik.solve(chain, [1.0, 2.0, 0.5], pole=[0.0, 1.0, 3.0])
    assert sol.method == "fabrik-constrained"
    assert limit_violations(chain, sol.positions, sol.extras["frames"]).max() <= 1e-9


def test_planar_chain_with_a_pole_flips_to_its_side():
    chain = fabrik.Chain.straight(3, 1.0, dim=2)
    for side in (1.0, -1.0):
        sol = fabrik.solve(chain, [1.0, 1.0], pole=[side * 3.0, 0.0], tol=1e-9)
        assert sol.positions.shape == (3, 2)
        # the elbow on the pole's side of the line y = x
        assert np.sign(sol.positions[1, 0] - sol.positions[1, 1]) == side


@pytest.mark.parametrize("kwargs, match", [
    ({"pole": [1.0, 0.0]}, "shape"), ({"pole": [1, 0, 0], "pole_joint": 0}, "pole_joint"),
    ({"pole_joint": 1}, "needs a pole"), ({"poles": {"x": [0, 0, 0]}}, "skeletons"),
    ({"pole": [0, 0, np.inf]}, "finite|non-finite"),
])
def test_bad_pole_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fabrik.solve(fabrik.Chain.straight(4), [1.0, 1.0, 0.0], **kwargs)


BODY = fabrik.models.humanoid()
REST = BODY.rest_positions()


@given(st.integers(0, 100_000), st.sampled_from(["auto", False]))
@settings(max_examples=20, deadline=None)
def test_skeleton_elbow_follows_its_pole(seed, rigid):
    rng = np.random.default_rng(seed)
    target = REST[5] + rng.normal(0, 0.12, 3) + [0.05, 0.15, 0.2]
    pole = REST[4] + rng.normal(0, 0.5, 3)
    sol = fabrik.solve(BODY, targets={"l_wrist": target}, poles={"l_elbow": pole}, rigid_sub_bases=rigid,
                       tol=1e-5)
    p = sol.positions
    shoulder, elbow, wrist = p[3], p[4], p[5]
    u = (wrist - shoulder) / np.linalg.norm(wrist - shoulder)
    e = (elbow - shoulder) - ((elbow - shoulder) @ u) * u
    w = (pole - shoulder) - ((pole - shoulder) @ u) * u
    if np.linalg.norm(w) > 1e-3 and np.linalg.norm(e) > 1e-3:
        assert e @ w > 0.0
        normal = np.cross(u, w / np.linalg.norm(w))
        assert abs((elbow - shoulder) @ normal) <= 1e-9
    lengths = np.linalg.norm(p[1:] - p[np.asarray(BODY.parents[1:])], axis=1)
    assert np.allclose(lengths, np.linalg.norm(REST[1:] - REST[np.asarray(BODY.parents[1:])], axis=1), atol=1e-9)


def test_skeleton_pole_errors():
    with pytest.raises(ValueError, match="root"):
        fabrik.solve(BODY, targets={"l_wrist": REST[5]}, poles={"pelvis": [0, 0, 1]})
    with pytest.raises(ValueError, match="no target below"):
        fabrik.solve(BODY, targets={"l_wrist": REST[5]}, poles={"r_elbow": [0, 0, 1]})
    with pytest.raises(ValueError, match="branches"):
        fabrik.solve(BODY, targets={"l_wrist": REST[5], "head": REST[2]}, poles={"neck": [0, 0, 1]})
    with pytest.raises(ValueError, match="chains and arms"):
        fabrik.solve(BODY, targets={"l_wrist": REST[5]}, pole=[0, 0, 1])


def test_arm_elbow_goes_to_the_pole_side():
    arm = fabrik.models.dhm_arm()
    rng = np.random.default_rng(3)
    for k in range(20):
        positions, frames = fabrik.forward(arm, arm.random_angles(k))
        shoulder, wrist = positions[0], positions[4]
        u = (wrist - shoulder) / np.linalg.norm(wrist - shoulder)
        pole = shoulder + rng.normal(0, 40, 3)
        sol = fabrik.solve(arm, (positions[-1], frames[-1]), pole=pole)
        e = sol.positions[3] - shoulder
        e -= (e @ u) * u
        w = pole - shoulder
        w -= (w @ u) * u
        if sol.reached:  # (the shoulder's limits may keep the elbow off the pole's side)
            assert e @ w > 0.0
            assert sol.extras["pole_joint"] == 3
