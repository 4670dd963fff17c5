"""Pose targets wherever a pose is taken (issue 41.4): (4, 4) transforms and quaternions of a stated
order for chains (oriented targets, ``fabrik.solve_batch``), the same answers as (xyz, matrix)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.constraints import Cone, Twist


@pytest.fixture(scope="module")
def chain():
    return fabrik.Chain.straight(5).with_constraints({1: Twist(-2.5, 2.5), 2: Cone.circular(1.7)})


def test_a_transform_target_solves_a_chain_as_its_parts_do(chain):
    rot = Rotation.from_euler("xyz", [0.3, -0.2, 0.9])
    transform = np.eye(4)
    transform[:3, :3], transform[:3, 3] = rot.as_matrix(), [1.0, 2.0, 1.0]
    by_parts = fabrik.solve(chain, ([1.0, 2.0, 1.0], rot.as_matrix()))
    for target in (transform, transform.tolist()):
        sol = fabrik.solve(chain, target)
        np.testing.assert_array_equal(sol.positions, by_parts.positions)
        assert sol.extras["orientation_error"] == by_parts.extras["orientation_error"]


def test_a_chain_target_quaternion_must_say_its_order(chain):
    q = Rotation.from_euler("z", 0.4).as_quat()
    with pytest.raises(ValueError, match=r"quat_xyzw\(q\) for \(x, y, z, w\).*quat_wxyz\(q\) for \(w, x, y, z\)"):
        fabrik.solve(chain, ([0.0, 2.0, 1.0], q))
    a = fabrik.solve(chain, ([0.0, 2.0, 1.0], fabrik.quat_xyzw(q)))
    b = fabrik.solve(chain, ([0.0, 2.0, 1.0], fabrik.quat_wxyz(np.r_[q[3], q[:3]])))
    np.testing.assert_array_equal(a.positions, b.positions)


def test_a_planar_chain_takes_a_transform_in_its_plane():
    chain = fabrik.Chain.from_positions(np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]))
    limited = chain.with_constraints({1: Cone.circular(1.5)})
    transform = np.eye(4)
    transform[:3, :3] = Rotation.from_euler("z", 0.5).as_matrix()
    transform[:2, 3] = [1.5, 1.5]
    sol = fabrik.solve(limited, transform)
    assert sol.positions.shape == (4, 2)
    transform[2, 3] = 0.5
    with pytest.raises(ValueError, match="a 2D chain's target lies in the z = 0 plane"):
        fabrik.solve(limited, transform)
