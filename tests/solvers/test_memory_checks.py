"""Sizes that need more memory than the machine has are refused before any work (issue 40, item
9: solve_batch failed after 19-31 s with numpy's MemoryError), with an ``InsufficientMemoryError``
(a ValueError) naming the size and the memory it needs. The huge inputs are broadcast views,
which take no memory themselves."""

from __future__ import annotations

import numpy as np
import pytest

import fabrik
import fabrik._validation as validation
from fabrik import models
from fabrik._validation import InsufficientMemoryError, available_memory
from fabrik.solvers.batch import batch_bytes


def _huge(point, count: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(point, dtype=np.float64), (count, len(point)))


def test_available_memory_is_read():
    available = available_memory()
    assert available is None or available > 0


def test_a_huge_batch_is_refused_before_any_work():
    chain = fabrik.Chain.straight(10, 100.0)
    with pytest.raises(InsufficientMemoryError, match=r"solve_batch of 1,000,000,000,000 targets on a chain of 10 "
                                                      r"joints needs about [\d,.]+ GiB of memory, and .* is available; "
                                                      r"solve them in pieces of at most [\d,]+ targets") as info:
        fabrik.solve_batch(chain, _huge([300.0, 400.0, 250.0], 10 ** 12))
    assert isinstance(info.value, ValueError)
    assert info.value.needed == batch_bytes(10 ** 12, 10, starts=True) > info.value.available  # (turn_start)


@pytest.mark.parametrize("limited, oriented", [(True, False), (True, True)])
def test_a_huge_constrained_batch_is_refused(limited, oriented):
    chain = fabrik.Chain.straight(10, 100.0).with_constraints({1: fabrik.Cone.circular(1.0)})
    points = _huge([300.0, 400.0, 250.0], 10 ** 12)
    targets = (points, _huge([0.0, 0.0, 0.0, 1.0], 10 ** 12)) if oriented else points
    with pytest.raises(InsufficientMemoryError, match="1,000,000,000,000 targets"):
        fabrik.solve_batch(chain, targets)


def test_the_check_follows_the_memory_available(monkeypatch):
    chain = fabrik.Chain.straight(10, 100.0)
    targets = np.random.default_rng(0).uniform(-500.0, 500.0, (1000, 3))
    need = batch_bytes(1000, 10, starts=True)
    monkeypatch.setattr(validation, "available_memory", lambda: need // 4)
    with pytest.raises(InsufficientMemoryError, match=r"1,000 targets .* pieces of at most 1\d\d targets"):
        fabrik.solve_batch(chain, targets)
    monkeypatch.setattr(validation, "available_memory", lambda: need * 2)
    assert fabrik.solve_batch(chain, targets).positions.shape == (1000, 10, 3)
    monkeypatch.setattr(validation, "available_memory", lambda: None)  # a system that does not say
    assert fabrik.solve_batch(chain, targets).positions.shape == (1000, 10, 3)


def test_a_huge_sequence_is_refused_before_any_work():
    body = models.humanoid()
    rest = body.rest_positions()
    targets = {"l_wrist": _huge(rest[body.index("l_wrist")], 10 ** 12), "head": _huge(rest[body.index("head")], 10 ** 12)}
    with pytest.raises(InsufficientMemoryError, match=r"solve_sequence of 1,000,000,000,000 frames on a skeleton of "
                                                      r"13 joints needs about"):
        fabrik.solve_sequence(body, targets)


def test_huge_models_and_samples_are_refused():
    with pytest.raises(InsufficientMemoryError, match="Chain.straight of 10,000,000,000,000 joints"):
        fabrik.Chain.straight(10 ** 13)
    arm = models.dhm_arm()
    with pytest.raises(InsufficientMemoryError, match="random_angles of 10,000,000,000,000 poses of 7 joints"):
        arm.random_angles(0, 10 ** 13)
    with pytest.raises(ValueError, match="n must be >= 0"):
        arm.random_angles(0, -1)
