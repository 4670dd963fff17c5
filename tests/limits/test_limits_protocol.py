"""The limit protocol (issue 39, item 1): every limit type is one class of ``fabrik.limits`` with its
packing, its measure, its JSON form and its drawing; every checker uses the one measure."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.constraints import Cone, Hinge, Polygon, Twist, limit_violations
from fabrik.io.limits_file import constraints_from_json
from fabrik.kernels.constraints import limit_direction
from fabrik.kernels.limit_layout import pack_limits
from fabrik.limits import LIMIT_TYPES, Limit
from fabrik.limits.base import joint_violation, twist_excess
from fabrik.mocap.frames_export import child_violation, project_child
from fabrik.model.constraints import random_pose, root_frame
from fabrik.model.geometry import relative_twist, twist_about_y


def _examples():
    """One limit of each registered type."""
    return {"cone": Cone(0.5, 0.3, 0.9, 0.4), "hinge": Hinge((1, 0, 1), -0.4, 2.0), "twist": Twist(-0.6, 0.2),
            "polygon": Polygon([(1, 1, 0), (0.2, 1, 0.3), (0, 1, 1), (-1, 2, 0), (0.1, 1, -1.5)])}


def test_every_registered_type_is_a_limit_with_its_example():
    examples = _examples()
    for name, cls in LIMIT_TYPES.items():
        assert issubclass(cls, Limit) and cls.type_name == name
        assert type(examples[name]) is cls


def test_a_second_type_of_the_same_name_is_refused():
    with pytest.raises(ValueError, match="'cone' is registered already"):
        class Other(Limit):  # noqa: F841
            type_name = "cone"


@pytest.mark.parametrize("name", sorted(_examples()))
@pytest.mark.parametrize("units, scale", [("degrees", math.pi / 180), ("radians", 1.0)])
def test_json_form_round_trips(name, units, scale):
    item = _examples()[name]
    data = item.to_json(scale)
    assert data["type"] == name and set(data) == {"type", *item.FIELDS}
    back = constraints_from_json({"units": units, "joints": {"j": [data]}})["j"][0]
    assert type(back) is type(item)
    for field in item.FIELDS:
        assert np.allclose(getattr(back, field), getattr(item, field), atol=1e-12)


def test_the_seam_is_read_the_same_by_every_checker():
    """-pi and pi are one angle: a twist of -pi is inside Twist(pi - 0.1, pi) for every checker (the
    BVH writer's ``child_violation`` read the range as a straight interval: 2 pi - 0.1 outside),
    as for the kernels' clamp, which moves -pi onto pi, the same angle."""
    items = (Cone.circular(1.0), Twist(math.pi - 0.1, math.pi))
    y = np.array([0.0, 1.0, 0.0])
    for twist in (math.pi, -math.pi):
        assert twist_excess(twist, math.pi - 0.1, math.pi) == 0.0
        assert float(joint_violation(items, y, np.array(twist))) == 0.0
    M = np.array([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]])  # a half turn about +Y
    assert abs(twist_about_y(M)) == pytest.approx(math.pi)
    assert float(child_violation(items, M)) == 0.0
    assert float(child_violation((Twist(-math.pi, -math.pi + 0.1),), M)) == 0.0
    assert float(twist_excess(-math.pi + 0.15, math.pi - 0.1, math.pi)) == pytest.approx(0.15)
    # a hinge reaching pi takes -pi too; 0.2 beyond -pi is 0.2 outside, around the circle
    hinge = Hinge((1, 0, 0), math.pi - 0.3, math.pi)
    theta = -math.pi + 0.2
    v = np.array([0.0, math.cos(theta), math.sin(theta)])
    assert hinge.angle(v) == pytest.approx(theta)
    assert float(hinge.direction_violation(v)) == pytest.approx(0.2)
    assert float(hinge.direction_violation(np.array([0.0, -1.0, 0.0]))) == pytest.approx(0.0, abs=1e-15)


limit_sets = st.sampled_from([
    (Cone(0.5, 0.3, 0.9, 0.4),), (Cone.circular(0.7), Twist(-0.5, 0.3)), (Hinge((1, 0, 0), -0.2, 2.2),),
    (Cone.circular(1.9),), (Hinge((1, 0, 0), math.pi - 0.3, math.pi),), (Polygon.regular(0.6, 5),),
    (Polygon([(1, 1, 0), (0.2, 1, 0.3), (0, 1, 1), (-1, 2, 0), (0.1, 1, -1.5)]), Twist(-0.2, 0.9)),
    (Hinge((0, 0, 1), -1.0, 0.5), Twist(-0.3, 0.3)), (Twist(-1.0, 1.0),), (Cone(2.0, 1.2, 1.7, 0.4),),
])


@settings(max_examples=40, deadline=None)
@given(items=limit_sets, seed=st.integers(0, 2**32 - 1))
def test_the_chain_checker_is_the_limits_own_measure(items, seed):
    """``limit_violations`` on a chain is, joint by joint, ``joint_violation`` of the bone's direction
    and twist in its parent's frame, with the frame's +Y on the bone (0 here)."""
    chain = fabrik.Chain.straight(4).with_constraints({0: items, 1: items, 2: items})
    rng = np.random.default_rng(seed)
    positions, frames = random_pose(fabrik.Chain.straight(4), rng)  # any pose, limits or not
    got = limit_violations(chain, positions, frames)
    parent = root_frame(chain)
    for i in range(3):
        v = parent.T @ frames[i][:, 1]
        want = joint_violation(items, v, relative_twist(parent, frames[i]))
        assert got[i] == pytest.approx(float(want), abs=1e-9)
        parent = frames[i]
    assert got[3] == 0.0


@settings(max_examples=40, deadline=None)
@given(items=limit_sets, seed=st.integers(0, 2**32 - 1))
def test_the_bvh_writers_check_and_projection_use_the_same_limits(items, seed):
    """``child_violation`` is ``joint_violation`` of a local rotation's +Y and twist, and
    ``project_child`` moves every rotation inside (to rounding), keeping those inside unchanged,
    its +Y where the projection kernel puts a bone and its twist clamped to the joint's range."""
    M = Rotation.random(64, random_state=seed % (2**32)).as_matrix()
    got = child_violation(items, M)
    assert np.array_equal(got, joint_violation(items, M[:, :, 1], twist_about_y(M)))
    P = project_child(items, M)
    assert np.abs(np.einsum("fji,fjk->fik", P, P) - np.eye(3)).max() < 1e-12
    assert child_violation(items, P).max() < 1e-9
    inside = got <= 0.0
    assert np.array_equal(P[inside], M[inside])
    # the +Y goes where the solvers' projection puts a bone (the kernel's, also for the outside
    # rotations only), the twist is clamped to the joint's range
    row = pack_limits({0: items}, 1)[0]
    for k in np.flatnonzero(~inside):
        d = M[k, :, 1].copy()
        limit_direction(row, np.eye(3), d, False)
        assert np.allclose(P[k, :, 1], d, atol=1e-12)
        bound = next((c.twist_range for c in reversed(items) if c.twist_range is not None), None)
        if bound is not None:
            assert bound[0] - 1e-12 <= twist_about_y(P[k]) <= bound[1] + 1e-12
    rotational = next((c for c in items if c.rotational), None)
    if rotational is None or (isinstance(rotational, Cone) and len(set(rotational.signed_cot2())) > 1):
        return  # (the irregular cone's projection is the nearest point in the paper's plane, not by angle)
    # a hinge's or a circular cone's projection is the nearest allowed direction: no allowed
    # direction of a dense sample is nearer
    moved = np.einsum("fi,fi->f", P[:, :, 1], M[:, :, 1])
    samples = np.array([rotational.sample_direction(np.random.default_rng(k)) for k in range(400)])
    best = (M[:, :, 1] @ samples.T).max(axis=1)
    assert (moved >= best - 1e-9).all()


def test_2d_chains_refuse_what_has_no_meaning_in_their_plane():
    chain = fabrik.Chain.straight(3, dim=2)
    with pytest.raises(ValueError, match=r"constraints\[0\]: a 2D chain's Hinge.axis must be"):
        chain.with_constraints({0: Hinge((1, 0, 0), 0, 1)})
    with pytest.raises(ValueError, match=r"constraints\[1\]: a 2D chain's Twist range must include 0"):
        chain.with_constraints({1: Twist(0.1, 0.2)})
    assert Cone(0.3, 0.3, 0.5, 0.2).planar_range() == (-0.2, 0.5)
    assert Hinge((0, 0, -1), -0.1, 0.4).planar_range() == (-0.4, 0.1)
