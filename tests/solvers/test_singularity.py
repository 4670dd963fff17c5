"""Section 5.4's straight-chain singularity: every method leaves it, whatever basis an SVD returns.

Where singular values repeat or vanish (a straight path on the line to its target makes the
Jacobian rank-deficient), an SVD may return any orthonormal basis of their subspaces; which one,
and with which rounding, depends on the LAPACK build and the CPU. The tests below run the SVD
methods with the kernel's factorisation replaced by one that turns those bases by random
rotations and flips signs, so a rule that only works for one platform's bits fails here on every
machine. (The kernels run as Python for this, ``py_func``, with the factorisation swapped.)
"""

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import fabrik
import fabrik.kernels.jacobian as chain_kernels
import fabrik.kernels.rotation_chain as chain_driver
import fabrik.kernels.tree_methods as tree_kernels
import fabrik.solvers.jacobian as chain_solvers
import fabrik.solvers.skeleton_methods as tree_solvers
from fabrik import Chain, Skeleton
from fabrik.constraints import Cone

TREE_METHODS = ("fabrik", "ccd", "jacobian-transpose", "jacobian-dls", "jacobian-svd-dls")
CHAIN_METHODS = ("fabrik", "ccd", "jacobian-transpose", "jacobian-dls", "jacobian-svd-dls", "sdls")

#: Turns applied to the test poses: the straight path along other directions than an axis.
TURNS = [Rotation.identity(), Rotation.from_rotvec([0.3, -0.2, 0.9]), Rotation.from_euler("xyz", [40, 25, -70],
                                                                                         degrees=True)]


def turned_bases(seed: int, factor):
    """A replacement for an SVD function ``factor`` (returning u, s, vt) that turns the basis of
    every group of equal singular values (to 1e-9 of the largest) by a random orthogonal matrix:
    a different, equally valid SVD."""
    rng = np.random.default_rng(seed)

    def turned(jac):
        u, s, vt = factor(jac)
        u = np.array(u)
        vt = np.array(vt)
        k = s.shape[0]
        top = float(s.max()) if k else 0.0
        start = 0
        while start < k:
            stop = start + 1
            while stop < k and abs(s[stop] - s[start]) <= 1e-9 * top:
                stop += 1
            q, _ = np.linalg.qr(rng.normal(size=(stop - start, stop - start)))
            q *= rng.choice([-1.0, 1.0], size=stop - start)
            u[:, start:stop] = u[:, start:stop] @ q
            vt[start:stop] = q.T @ vt[start:stop]
            start = stop
        return u, s, vt

    return turned


@pytest.fixture
def turned_svd(monkeypatch):
    """Run the SVD methods as Python with their SVD's bases turned (seeded)."""
    def apply(seed):
        monkeypatch.setattr(tree_kernels, "svd_factors", turned_bases(seed, tree_kernels.svd_factors))
        monkeypatch.setattr(tree_kernels, "stacked_step", tree_kernels.stacked_step.py_func)
        monkeypatch.setattr(tree_solvers, "tree_method", tree_kernels.tree_method.py_func)
        monkeypatch.setattr(chain_kernels, "svd3", turned_bases(seed, chain_kernels.svd3))
        monkeypatch.setattr(chain_driver, "jacobian_step", chain_kernels.jacobian_step.py_func)
        monkeypatch.setattr(chain_driver, "rotation_chain", chain_driver.rotation_chain.py_func)
        monkeypatch.setattr(chain_solvers, "jacobian_chain", chain_driver.jacobian_chain.py_func)
    return apply


def branch_skeleton(turn):
    """A straight branch root-a-b-c (unit bones) and a bent one root-d-e, turned by ``turn``."""
    rest = turn.apply(np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0], [1, 0.5, 0], [2, 1, 0.0]]))
    return Skeleton.from_positions(["root", "a", "b", "c", "d", "e"], [-1, 0, 1, 2, 0, 4], rest)


def solve_branch(method, turn, c_target):
    sk = branch_skeleton(turn)
    targets = {"c": turn.apply(c_target), "e": turn.apply([1.5, 1.5, 0.0])}
    # FABRIK as the paper has it (free sub-bases, no limb swing): the rule of section 5.4 is its
    paper = {"rigid_sub_bases": False, "swing_limbs": False} if method == "fabrik" else {}
    return sk, fabrik.solve(sk, targets=targets, tol=1e-4, method=method, **paper)


def assert_rigid(skeleton, p):
    assert np.isfinite(p).all()
    bones = np.linalg.norm(p[1:] - p[np.asarray(skeleton.parents[1:])], axis=1)
    np.testing.assert_allclose(bones, skeleton.bone_lengths[1:], atol=1e-9)
    np.testing.assert_allclose(p[0], 0.0, atol=1e-12)


# the straight branch's target on its line: in front of its tip (inside its reach) and behind the root
ON_LINE = ([0.0, 1.5, 0.0], [0.0, -1.5, 0.0])


@pytest.mark.parametrize("method", TREE_METHODS)
@pytest.mark.parametrize("turn", range(len(TURNS)))
@pytest.mark.parametrize("c_target", ON_LINE)
def test_straight_branch_on_its_targets_line_is_bent(method, turn, c_target):
    sk, sol = solve_branch(method, TURNS[turn], c_target)
    assert sol.reached, sol
    assert_rigid(sk, sol.positions)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("turn", range(len(TURNS)))
def test_svd_dls_on_a_tree_leaves_the_line_whatever_the_svd_basis(turned_svd, seed, turn):
    turned_svd(seed)
    sk, sol = solve_branch("jacobian-svd-dls", TURNS[turn], ON_LINE[0])
    assert sol.reached, sol
    assert_rigid(sk, sol.positions)


def straight_chain(turn, n=6):
    rest = turn.apply(np.outer(np.arange(n), [0.0, 1.0, 0.0]))
    return Chain.from_positions(rest)


@pytest.mark.parametrize("method", CHAIN_METHODS)
@pytest.mark.parametrize("turn", range(len(TURNS)))
@pytest.mark.parametrize("along", (2.5, -2.0))
def test_straight_chain_on_its_targets_line_is_bent(method, turn, along):
    chain = straight_chain(TURNS[turn])
    sol = fabrik.solve(chain, TURNS[turn].apply([0.0, along, 0.0]), tol=1e-4, method=method)
    assert sol.reached, sol
    np.testing.assert_allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), 1.0, atol=1e-9)


@pytest.mark.parametrize("method", ("jacobian-svd-dls", "sdls"))
@pytest.mark.parametrize("seed", range(4))
def test_svd_chain_methods_leave_the_line_whatever_the_svd_basis(turned_svd, method, seed):
    turned_svd(seed)
    turn = TURNS[seed % len(TURNS)]
    sol = fabrik.solve(straight_chain(turn), turn.apply([0.0, 2.5, 0.0]), tol=1e-4, method=method)
    assert sol.reached, sol


def test_turned_bases_are_an_svd():
    # the replacement factorisation is a valid SVD with its groups turned
    jac = np.zeros((6, 9))
    jac[0, 2] = jac[2, 0] = 3.0
    jac[3, 5] = jac[5, 4] = 3.0
    u0, s0, vt0 = np.linalg.svd(jac, full_matrices=False)
    u, s, vt = turned_bases(1, lambda j: np.linalg.svd(j, full_matrices=False))(jac)
    np.testing.assert_allclose(u @ np.diag(s) @ vt, jac, atol=1e-12)
    np.testing.assert_allclose(u.T @ u, np.eye(6), atol=1e-12)
    assert np.abs(u - u0).max() > 0.1  # actually turned


# --- issue 28, item 5: CCD with an oriented target on a straight chain ----------------------------------

@pytest.mark.parametrize("n, height", [(5, 2.5), (4, 1.5), (8, 4.0)])
def test_ccd_oriented_target_on_a_straight_chain(n, height):
    """The aim point (the target less the last bone along the target's +Y) lies on the straight
    chain's line: the singularity rule folds the chain instead of stalling (at 0.5 for n = 5)."""
    chain = fabrik.Chain.straight(n)
    rot = Rotation.from_euler("x", 90, degrees=True)
    target = [0.0, height, 1.0]
    sol = fabrik.solve(chain, (target, rot), method="ccd")
    assert sol.method == "ccd-constrained"
    assert sol.status == "reached", (sol.status, sol.error, sol.iterations)
    assert sol.error <= 1e-3 and sol.extras["orientation_error"] <= 1e-3
    np.testing.assert_allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), 1.0, atol=1e-9)


def test_ccd_limited_chain_off_the_line_is_not_folded():
    """A stall away from the line is left as it is (no fold, the same answer as before)."""
    chain = fabrik.Chain.straight(5, dim=2).with_constraints({i: Cone.circular(math.radians(30)) for i in range(4)})
    sol = fabrik.solve(chain, [-2.0, 2.0], method="ccd")
    assert sol.status == "stalled"
    assert sol.error == pytest.approx(0.5176, abs=1e-4)
