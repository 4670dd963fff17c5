"""Methods as objects (issue 39, item 2): ``fabrik.method(name)`` is taken wherever a name is, and
the plain chain's hot path is a slot of the method (``Solver.fast``)."""

import dataclasses

import numpy as np
import pytest

import fabrik
from fabrik.solvers import registry


def test_a_method_object_solves_as_its_name():
    chain = fabrik.Chain.straight(5)
    target = np.array([1.5, 2.0, 0.5])
    for name in ("fabrik", "ccd", "jacobian-dls", "fabrik-constrained"):
        by_name = fabrik.solve(chain, target, method=name)
        by_object = fabrik.solve(chain, target, method=fabrik.method(name))
        assert by_object.method == by_name.method
        assert np.array_equal(by_object.positions, by_name.positions)
    body = fabrik.models.humanoid()
    targets = {"l_wrist": body.rest_positions()[5] + [0.1, 0.2, 0.1]}
    assert np.array_equal(fabrik.solve(body, targets=targets, method=fabrik.method("ccd")).positions,
                          fabrik.solve(body, targets=targets, method="ccd").positions)
    batch = fabrik.solve_batch(chain, np.tile(target, (4, 1)), method=fabrik.method("fabrik"))
    assert np.array_equal(batch.positions[0], fabrik.solve(chain, target).positions)
    take = {"l_wrist": np.tile(targets["l_wrist"], (3, 1))}
    assert np.array_equal(fabrik.solve_sequence(body, take, method=fabrik.method("fabrik")).positions,
                          fabrik.solve_sequence(body, take, method="fabrik").positions)


def test_an_unregistered_or_odd_method_is_refused_by_name():
    chain = fabrik.Chain.straight(3)
    copy = dataclasses.replace(fabrik.method("ccd"), summary="my ccd")
    with pytest.raises(ValueError, match="not the registered one"):
        fabrik.solve(chain, [1.0, 1.0, 0.0], method=copy)
    for bad in (3, None, ["fabrik"]):
        with pytest.raises(ValueError, match="method must be a method name"):
            fabrik.solve(chain, [1.0, 1.0, 0.0], method=bad)


def test_the_hot_path_is_a_slot_of_the_method():
    # only plain chain FABRIK offers one; the answer through it is the checked path's
    with_fast = [name for name in fabrik.methods("chain") if fabrik.method(name).chain.fast is not None]
    assert with_fast == ["fabrik"]
    chain = fabrik.Chain.straight(6)
    target = np.array([2.0, 3.0, 1.0])
    fast = fabrik.solve(chain, target)
    checked = fabrik.solve(chain, target.tolist())  # a list: not the hot path
    assert np.array_equal(fast.positions, checked.positions) and fast.iterations == checked.iterations
    assert registry.get("fabrik").chain.fast(registry.get("fabrik").chain)[1] == fabrik.method("fabrik").chain.max_iter


def test_unknown_option_message():
    with pytest.raises(ValueError, match=r"^method 'fabrik' for chains takes no option 'bogus'; it takes turn_start$"):
        fabrik.solve(fabrik.Chain.straight(3), [0.5, 1.0, 0.0], bogus=1)
    sk = fabrik.models.humanoid()
    with pytest.raises(ValueError, match=r"takes no options 'a', 'b'; it takes rigid_sub_bases, swing_limbs, "
                                         r"turn_search, reach_step, dls_start, dls_damping, initial_frames, root_rotation$"):
        fabrik.solve(sk, targets={"head": [0.0, 1.8, 0.0]}, a=1, b=2)


def test_methods_say_which_kinds():
    chain = fabrik.methods()
    assert "chain methods" in repr(chain) and "fabrik.methods('skeleton')" in repr(chain)
    assert chain == fabrik.methods("chain") and "triangulation" in chain
    every = fabrik.methods("all")
    assert every["triangulation"] == ("chain",)
    assert set(every["fabrik"]) == {"chain", "skeleton", "arm"}
    assert "triangulation" not in fabrik.methods("skeleton")
    with pytest.raises(ValueError, match="kind must be one of chain, skeleton, arm or all"):
        fabrik.methods("tree")
