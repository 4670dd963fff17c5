"""The Skeleton type: structure queries and input checks."""

import numpy as np
import pytest

import fabrik
from fabrik import Skeleton, models


def test_chains_between_sub_bases_cover_every_bone_once():
    for sk in (models.y_shape(), models.hand(), models.humanoid()):
        chains = sk.chains
        bones = [(c[i], c[i + 1]) for c in chains for i in range(len(c) - 1)]
        assert sorted(b for _, b in bones) == list(range(1, sk.n_joints))  # every bone exactly once
        assert all(sk.parents[b] == a for a, b in bones)
        ends = {0, *sk.sub_bases, *sk.leaves}
        for c in chains:
            assert c[0] in ends and c[-1] in ends
            assert not set(c[1:-1]) & ends  # no sub-base or leaf inside a chain


def test_y_shape_chains():
    y = models.y_shape()
    names = [[y.names[j] for j in c] for c in y.chains]
    assert names == [["root", "trunk1", "trunk2", "fork"], ["fork", "left1", "left2", "left_tip"],
                     ["fork", "right1", "right2", "right_tip"]]
    assert [y.names[j] for j in y.sub_bases] == ["fork"]


@pytest.mark.parametrize("names, parents, offsets, message", [
    (["a"], [-1], np.zeros((1, 3)), "at least 2 joints"),
    (["a", "a"], [-1, 0], np.zeros((2, 3)), "'a' appears more than once"),
    (["a", "b"], [0, 0], np.zeros((2, 3)), "joint 0 must be the root"),
    (["a", "b", "c"], [-1, 2, 0], np.zeros((3, 3)), "topological order"),
    (["a", "b"], [-1, 0], np.zeros((2, 2)), "offsets must have shape"),
    (["a", "b"], [-1, 0], [[0, 0, 0], [np.nan, 0, 0]], "non-finite"),
])
def test_bad_skeletons(names, parents, offsets, message):
    with pytest.raises(ValueError, match=message):
        Skeleton.from_parents(names, parents, offsets)


def test_unknown_joint_lists_the_joints():
    sk = models.y_shape()
    with pytest.raises(ValueError, match="unknown joint 'nose'; joints are: root, trunk1"):
        sk.index("nose")


@pytest.mark.parametrize("make, words", [
    (lambda: Skeleton.from_positions(["a", "b"], [-1, 7], np.zeros((2, 3))), "parent 7"),
    (lambda: Skeleton.from_parents(["a", "b"], [-1, 0.5], np.zeros((2, 3))), "whole numbers"),
    (lambda: Skeleton.from_parents(["a", "b"], ["x", 0], np.zeros((2, 3))), "whole numbers"),
    (lambda: Skeleton.from_parents(["a", "b"], [-1, 0], "xy"), "offsets"),
    # limits passed to the constructor are checked as with_constraints checks them
    (lambda: Skeleton(("a", "b", "c"), [-1, 0, 1], np.eye(3), constraints={7: "x"}), "out of range"),
    (lambda: Skeleton(("a", "b", "c"), [-1, 0, 1], np.eye(3), constraints={"b": "x"}), "Cone, Hinge, Twist or Polygon"),
    (lambda: Skeleton(("a", "b", "c"), [-1, 0, 1], np.eye(3), constraints={"c": ()}), "leaf"),
    (lambda: Skeleton(("a", "b", "c"), [-1, 0, 1], np.eye(3), constraints=[1]), "mapping"),
])
def test_bad_parents_and_offsets_are_named(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_integral_float_parents_become_int64():
    skel = Skeleton(("a", "b", "c"), np.array([-1, 0, 1.0]), np.zeros((3, 3)) + [0, 1, 0])
    assert skel.parents.dtype == np.int64 and not skel.parents.flags.writeable


def test_two_roots_are_named():
    with pytest.raises(ValueError, match=r"2 roots: joint 0 \('a'\), joint 1 \('b'\)"):
        fabrik.Skeleton.from_parents(["a", "b", "c"], [-1, -1, 0], np.ones((3, 3)))
