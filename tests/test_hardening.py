"""Cases found by fuzzing, pinned: every solve ends whatever tol and max_iter are."""

import numpy as np
import pytest

import fabrik
from fabrik.constraints import Cone

HUGE = np.array([[0, 0, 0], [1e12, 0, 0], [2e12, 0, 0], [3e12, 0, 0.0]])
FAR = [3.4e22, 1.3e22, -1.1e22]


@pytest.mark.parametrize("method", ["fabrik", "ccd", "jacobian-transpose", "jacobian-dls", "jacobian-svd-dls", "sdls",
                                    "ftl", "triangulation"])
@pytest.mark.parametrize("limited", [False, True])
def test_a_tol_below_rounding_and_no_cap_still_end(method, limited):
    # tol 1e-12 on bones of 1e12: every step moves the effector by more than tol through rounding
    # alone, and max_iter 1e30 is no cap; a damped least squares solve once swung the chain for ever
    chain = fabrik.Chain.from_positions(HUGE)
    if limited:
        if method in ("ftl", "triangulation"):
            pytest.skip("no joint limits for this method")
        chain = chain.with_constraints({1: Cone.circular(1.0)})
    sol = fabrik.solve(chain, FAR, method=method, tol=1e-12, max_iter=10**30)
    assert sol.status == "unreachable", sol
    assert sol.iterations < 10_000
    assert np.isfinite(sol.positions).all()
