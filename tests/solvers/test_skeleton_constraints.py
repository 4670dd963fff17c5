"""Multi-effector FABRIK with joint limits on skeletons: limits always hold, lengths are kept,
no NaN, reachable targets inside the limits are reached, the reconstruction CLI reports no
violation."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import fabrik
import fabrik.solvers as solvers
from fabrik.constraints import Cone, Hinge, Twist
from fabrik.model.motion import Motion
from fabrik.model.rig import rig
from fabrik.model.skeleton import Skeleton
from fabrik.models import hand, humanoid, y_shape
from fabrik.model.geometry import frames_from_pose, frames_from_world_rotations, limit_violations
from fabrik.solvers.skeleton_fabrik import solve_skeleton_arrays


def solve_fabrik_skeleton_constrained(skeleton, targets, **options):
    return fabrik.solve(skeleton, targets=targets, method="fabrik-constrained", **options)

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mocap"
DEG = math.pi / 180
TOL_RAD = 1e-6


# --- an independent reading of the documented conventions ----------------------------------------
def ref_rest_frames(skel):
    """R0 from the documented rule: +Y along the rest offset, +Z towards world +Z (world +Y when the
    bone is within 25 degrees of the Z axis); root identity; zero-length bones copy the parent."""
    n = skel.n_joints
    out = np.zeros((n, 3, 3))
    out[0] = np.eye(3)
    for i in range(1, n):
        off = np.asarray(skel.offsets[i], float)
        L = np.linalg.norm(off)
        if L == 0:
            out[i] = out[skel.parents[i]]
            continue
        y = off / L
        up = np.array([0.0, 1.0, 0.0]) if abs(y[2]) > math.cos(25 * DEG) else np.array([0.0, 0.0, 1.0])
        z = up - np.dot(up, y) * y
        z /= np.linalg.norm(z)
        out[i] = np.column_stack((np.cross(y, z), y, z))
    return out


def twist_of(reference, frame):
    """Twist (radians) of ``frame`` about its +Y relative to ``reference``, via scipy."""
    rel = reference.T @ frame
    y = rel[:, 1]
    axis = np.cross([0.0, 1.0, 0.0], y)
    s = np.linalg.norm(axis)
    swing = Rotation.from_rotvec(axis / s * math.atan2(s, y[1])) if s > 1e-12 else Rotation.identity()
    return (swing.inv() * Rotation.from_matrix(rel)).as_rotvec()[1]


def cone_boundary(cone, x, z):
    """Polar angle of the cone's boundary at the azimuth of (x, z) (quadrant's elliptical cone)."""
    phi = math.atan2(z, x)
    a_x = cone.right if x >= 0 else cone.left
    a_z = cone.up if z >= 0 else cone.down
    k = (math.cos(phi) ** 2 * math.copysign(math.tan(a_x) ** -2, math.cos(a_x))
         + math.sin(phi) ** 2 * math.copysign(math.tan(a_z) ** -2, math.cos(a_z)))
    return math.atan2(1.0, math.copysign(math.sqrt(abs(k)), k))


def worst_violation(skel, positions, frames):
    """Largest limit excess (radians) of a pose, computed from the documented rules only."""
    R0 = ref_rest_frames(skel)
    worst = 0.0
    for c in range(1, skel.n_joints):
        j = int(skel.parents[c])
        u = positions[c] - positions[j]
        if np.linalg.norm(skel.offsets[c]) == 0 or j not in skel.constraints:
            continue
        u = u / np.linalg.norm(u)
        H = frames[j] @ R0[j].T @ R0[c]
        x, y, z = H.T @ u
        twist = twist_of(H, frames[c])
        items = skel.constraints[j]
        for item in items:
            if isinstance(item, Cone):
                polar = math.atan2(math.hypot(x, z), y)
                if math.hypot(x, z) > 1e-12:
                    worst = max(worst, polar - cone_boundary(item, x, z))
            elif isinstance(item, Hinge):
                a = np.array(item.axis)
                v = np.array([x, y, z])
                worst = max(worst, math.asin(min(1.0, abs(v @ a))))
                theta = math.atan2(np.cross([0, 1, 0], v) @ a, y)
                worst = max(worst, item.min - theta, theta - item.max)
                if not any(isinstance(t, Twist) for t in items):
                    worst = max(worst, abs(twist))
            else:
                worst = max(worst, item.min - twist, twist - item.max)
    return worst


def check_pose(skel, sol):
    p = sol.positions
    F = np.asarray(sol.extras["frames"])
    assert np.isfinite(p).all() and np.isfinite(F).all()
    lengths = np.linalg.norm(p[1:] - p[skel.parents[1:]], axis=1)
    np.testing.assert_allclose(lengths, skel.bone_lengths[1:], rtol=0, atol=1e-9 * max(1.0, skel.height()))
    np.testing.assert_allclose(np.einsum("nji,njk->nik", F, F), np.broadcast_to(np.eye(3), F.shape), atol=1e-9)
    assert (np.linalg.det(F) > 0).all()
    for c in range(1, skel.n_joints):
        q = skel.parents[c]
        if skel.bone_lengths[c] > 0:
            assert np.allclose(F[c][:, 1], (p[c] - p[q]) / skel.bone_lengths[c], atol=1e-9)
        else:
            assert np.allclose(F[c], F[q], atol=1e-12)
    assert worst_violation(skel, p, F) <= TOL_RAD
    assert limit_violations(skel, p, F).max() <= TOL_RAD


# --- random trees and limits ---------------------------------------------------------------------
def random_tree(rng, n):
    parents = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
    offsets = rng.normal(size=(n, 3))
    offsets[0] = 0.0
    zero = rng.random(n) < 0.15
    zero[0] = False
    offsets[zero] = 0.0
    names = [f"j{i}" for i in range(n)]
    return Skeleton.from_parents(names, parents, offsets)


def random_limit(rng):
    kind = rng.integers(0, 5)
    if kind == 0:
        return (Cone.circular(rng.uniform(0.2, 2.6)),)
    if kind == 1:
        return (Cone(*rng.uniform(0.2, 2.0, size=4)),)
    if kind == 2:
        ang = rng.uniform(0, 2 * math.pi)
        lo = rng.uniform(-2.0, 0.0)
        return (Hinge((math.cos(ang), 0.0, math.sin(ang)), lo, lo + rng.uniform(0.2, 2.5)),)
    if kind == 3:
        lo = rng.uniform(-1.5, 0.0)
        return (Cone.circular(rng.uniform(0.3, 1.5)), Twist(lo, lo + rng.uniform(0.1, 1.5)))
    lo = rng.uniform(-1.0, 0.0)
    return (Hinge((1.0, 0.0, 0.0), lo, lo + 1.5), Twist(-0.3, 0.4))


def random_limits(rng, skel, p=0.7):
    leaves = set(skel.leaves)
    return {skel.names[j]: random_limit(rng) for j in range(skel.n_joints) if j not in leaves and rng.random() < p}


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 9), st.integers(0, 2**31 - 1))
def test_random_trees_limits_hold(n, seed):
    rng = np.random.default_rng(seed)
    skel = random_tree(rng, n)
    skel = skel.with_constraints(random_limits(rng, skel))
    leaves = skel.leaves
    chosen = [j for j in leaves if rng.random() < 0.8] or leaves[:1]
    rest = skel.rest_positions()
    reach = skel.height() + 1.0
    targets = {skel.names[j]: rest[j] + rng.normal(size=3) * reach * 0.7 for j in chosen}
    sol = solve_fabrik_skeleton_constrained(skel, targets, max_iter=int(rng.integers(0, 60)))
    assert sol.status in solvers.STATUSES
    check_pose(skel, sol)


def test_paper_models_random_limits_hold():
    rng = np.random.default_rng(5)
    for make in (y_shape, hand, humanoid):
        base = make()
        for _ in range(6):
            skel = base.with_constraints(random_limits(rng, base))
            rest = skel.rest_positions()
            targets = {skel.names[j]: rest[j] + rng.normal(size=3) * 0.3 * skel.height() for j in skel.leaves}
            sol = solve_fabrik_skeleton_constrained(skel, targets, max_iter=100)
            check_pose(skel, sol)


# --- reachable targets -------------------------------------------------------------------------
def sample_direction(items, rng):
    """A parent-frame direction inside the rotational limit of ``items`` (rejection sampling)."""
    rot = next((c for c in items if not isinstance(c, Twist)), None)
    if isinstance(rot, Hinge):
        theta = rng.uniform(rot.min, rot.max)
        a = np.array(rot.axis)
        y = np.array([0.0, 1.0, 0.0])
        return math.cos(theta) * y + math.sin(theta) * np.cross(a, y)
    for _ in range(100000):
        v = rng.normal(size=3)
        v /= np.linalg.norm(v)
        if rot is None:
            return v
        polar = math.atan2(math.hypot(v[0], v[2]), v[1])
        if polar <= cone_boundary(rot, v[0], v[2]) - 1e-3:
            return v
    raise AssertionError("no direction found")


def random_pose_within(skel, rng):
    """(positions, frames) of a random pose satisfying every limit, root at rest, root frame identity."""
    R0 = ref_rest_frames(skel)
    n = skel.n_joints
    p = np.zeros((n, 3))
    F = np.zeros((n, 3, 3))
    p[0] = skel.offsets[0]
    F[0] = np.eye(3)
    for c in range(1, n):
        j = skel.parents[c]
        L = np.linalg.norm(skel.offsets[c])
        if L == 0:
            p[c], F[c] = p[j], F[j]
            continue
        H = F[j] @ R0[j].T @ R0[c]
        items = skel.constraints.get(j, ())
        v = sample_direction(items, rng)
        twist = next((t for t in items if isinstance(t, Twist)), None)
        psi = rng.uniform(twist.min, twist.max) if twist else (0.0 if any(isinstance(t, Hinge) for t in items)
                                                              else rng.uniform(-math.pi, math.pi))
        axis = np.cross([0.0, 1.0, 0.0], v)
        s = np.linalg.norm(axis)
        swing = Rotation.from_rotvec(axis / s * math.atan2(s, v[1])) if s > 1e-12 else Rotation.identity()
        local = (swing * Rotation.from_rotvec([0.0, psi, 0.0])).as_matrix()
        F[c] = H @ local
        p[c] = p[j] + L * F[c][:, 1]
    return p, F


def test_reachable_targets_inside_limits_are_reached():
    rng = np.random.default_rng(11)
    reached = total = 0
    for make in (y_shape, humanoid, hand):
        base = make()
        for _ in range(8):
            limits = {}
            for j in range(base.n_joints):
                if j not in base.leaves and rng.random() < 0.7:
                    limits[base.names[j]] = (Cone.circular(rng.uniform(0.6, 1.6)),) if rng.random() < 0.7 else \
                        (Hinge((1.0, 0.0, 0.0), -0.2, rng.uniform(0.8, 2.2)),)
            skel = base.with_constraints(limits)
            goal, goal_frames = random_pose_within(skel, rng)
            assert worst_violation(skel, goal, goal_frames) <= 1e-9  # the generator is right
            targets = {skel.names[j]: goal[j] for j in skel.leaves}
            tol = 1e-3 * skel.height()
            # the goals move a joint's children apart (each within its own limit): the paper's sub-bases
            sol = solve_fabrik_skeleton_constrained(skel, targets, tol=tol, max_iter=2000, rigid_sub_bases=False)
            check_pose(skel, sol)
            total += 1
            reached += sol.status == "reached"
            if sol.status == "reached":
                assert sol.error <= tol
    assert reached >= 0.8 * total, f"reached {reached} of {total}"


# --- frames and conventions ------------------------------------------------------------------------
def test_rest_frames_follow_the_documented_rule_and_bvh_frames():
    skel = humanoid()
    np.testing.assert_allclose(rig(skel).rest_frames, ref_rest_frames(skel), atol=1e-12)
    rot = Rotation.random(skel.n_joints * 3, random_state=3).as_quat().reshape(3, skel.n_joints, 4)
    motion = Motion(rot, np.zeros((3, 3)))
    P, W = motion.world_transforms(skel)
    F = frames_from_world_rotations(skel, W)
    for f in range(3):
        for c in range(1, skel.n_joints):
            j = skel.parents[c]
            if skel.bone_lengths[c] > 0:
                u = (P[f, c] - P[f, j]) / skel.bone_lengths[c]
                assert np.allclose(F[f, c][:, 1], u, atol=1e-9)
    # the limit on joint j bounds j's local rotation, seen in the child's rest frame
    R0 = rig(skel).rest_frames
    L = motion.rotation_matrices()
    for c in range(1, skel.n_joints):
        j = skel.parents[c]
        if skel.bone_lengths[c] > 0 and skel.bone_lengths[j] > 0:
            H = F[1, j] @ R0[j].T @ R0[c]
            np.testing.assert_allclose(H.T @ F[1, c], R0[c].T @ L[1, j] @ R0[c], atol=1e-9)
    # the rest pose: identity root, frames = rest frames
    np.testing.assert_allclose(frames_from_pose(skel, skel.rest_positions()), R0, atol=1e-12)


def test_zero_length_bones_give_no_nan_and_share_frames():
    names = ["root", "z1", "a", "z2", "b", "tip", "z3", "c"]
    parents = [-1, 0, 1, 2, 3, 4, 0, 6]
    offsets = np.array([[0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 1, 0], [0.2, 1, 0], [0, 0, 0], [1, 0, 0]],
                       float)
    skel = Skeleton.from_parents(names, parents, offsets).with_constraints(
        {"z1": Cone.circular(0.2), "a": Cone.circular(0.5), "z2": [Hinge((1, 0, 0), 0.0, 1.5)],
         "b": Cone.circular(0.4), "z3": Cone.circular(0.1)})
    for target in ([0.0, 0.0, 0.0], [2.0, 1.0, 0.5], [0.0, -3.0, 0.0], [0.0, 3.2, 0.0]):
        sol = solve_fabrik_skeleton_constrained(skel, {"tip": target, "c": [0.9, 0.2, 0.0]}, max_iter=50)
        check_pose(skel, sol)


def test_extras_options_and_errors():
    skel = y_shape().with_constraints({"fork": Cone.circular(0.3), "left1": Hinge((1, 0, 0), -0.5, 0.5)})
    targets = {"left_tip": [-3.0, 3.0, 0.0], "right_tip": [2.0, 4.0, 1.0]}
    sol = solve_fabrik_skeleton_constrained(skel, targets)
    assert sol.method == "fabrik-constrained"
    assert sol.extras["frames"].shape == (skel.n_joints, 3, 3)
    assert set(sol.extras["active_constraints"]) <= {"fork", "left1"}
    assert "fork" in sol.extras["active_constraints"]  # the left target pulls far outside 0.3 rad
    check_pose(skel, sol)
    # a held root rotation, a free root, explicit frames
    turned = Rotation.from_euler("z", 0.4)
    for rr in (turned, turned.as_quat(), "free"):
        check_pose(skel, solve_fabrik_skeleton_constrained(skel, targets, root_rotation=rr, max_iter=30))
    sol2 = solve_fabrik_skeleton_constrained(skel, targets, root_rotation=turned)
    np.testing.assert_allclose(sol2.extras["frames"][0], turned.as_matrix(), atol=1e-12)
    frames = frames_from_pose(skel, skel.rest_positions())
    sol3 = solve_fabrik_skeleton_constrained(skel, targets, initial_frames=frames)
    np.testing.assert_allclose(sol3.positions, sol.positions, atol=1e-12)
    arr = solve_skeleton_arrays(skel, [6, 9], np.array(list(targets.values())), skel.rest_positions(), tol=1e-3,
                                initial_frames=frames)
    np.testing.assert_allclose(arr.positions, sol.positions, atol=1e-12)
    with pytest.raises(ValueError, match="; it takes "):
        solve_fabrik_skeleton_constrained(skel, targets, bogus=1)
    with pytest.raises(ValueError, match="initial_frames"):
        solve_fabrik_skeleton_constrained(skel, targets, initial_frames=np.zeros((skel.n_joints, 3, 3)))
    with pytest.raises(ValueError, match="root_rotation"):
        solve_fabrik_skeleton_constrained(skel, targets, root_rotation="sideways")
    with pytest.raises(ValueError, match="unknown joint"):
        solve_fabrik_skeleton_constrained(skel, {"nope": [0, 0, 0]})


def test_registered_and_solve_uses_it():
    assert "fabrik-constrained" in solvers.methods("skeleton")
    skel = y_shape().with_constraints({"fork": Cone.circular(0.3)})
    targets = {"left_tip": [-3.0, 3.0, 0.0]}
    sol = solvers.solve(skel, targets=targets, method="fabrik-constrained")
    check_pose(skel, sol)


def test_solve_routes_constrained_skeletons():
    skel = y_shape().with_constraints({"fork": Cone.circular(0.3)})
    sol = solvers.solve(skel, targets={"left_tip": [-3.0, 3.0, 0.0]})
    assert sol.method == "fabrik-constrained"
    check_pose(skel, sol)


# --- the reconstruction experiment on real data ------------------------------------------------------
needs_mocap = pytest.mark.skipif(not (MOCAP / "cmu_131_01.bvh").is_file(),
                                 reason=f"motion-capture files not found in {MOCAP}")


@needs_mocap
def test_reconstruct_cli_with_humanoid_and_json_limits(tmp_path, capsys):
    from fabrik.cli import main
    from fabrik.io.bvh import load_bvh
    from fabrik.io.limits_file import save_constraints
    from fabrik.model.humanoid_limits import humanoid as humanoid_limits

    src = MOCAP / "cmu_131_01.bvh"
    out = tmp_path / "r.json"
    assert main(["reconstruct", str(src), "--methods", "fabrik,fabrik-constrained", "--frames", "0:40",
                 "--constraints", "humanoid", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "fabrik-constrained" in text and "no limit placed on: LThumb, RThumb" in text
    data = json.loads(out.read_text())
    rows = {r["method"]: r for r in data["results"]}
    assert list(rows) == ["fabrik", "fabrik-constrained"]
    assert rows["fabrik"]["max_limit_violation"] is None
    assert 0.0 <= rows["fabrik-constrained"]["max_limit_violation"] <= TOL_RAD
    assert "LeftKnee" in data["limited_joints"] and data["unplaced_joints"] == ["LThumb", "RThumb"]
    skel, _ = load_bvh(src)
    limits, _ = humanoid_limits(skel)
    limits = {k: v for k, v in limits.items() if k in ("LeftKnee", "RightKnee", "LHipJoint", "RHipJoint")}
    path = tmp_path / "limits.json"
    save_constraints(path, limits)
    assert main(["reconstruct", str(src), "--methods", "fabrik,fabrik-constrained", "--frames", "0:20",
                 "--constraints", str(path), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["limited_joints"] == ["LHipJoint", "LeftKnee", "RHipJoint", "RightKnee"]
    assert data["results"][1]["max_limit_violation"] <= TOL_RAD
    assert main(["reconstruct", str(src), "--constraints", str(tmp_path / "missing.json")]) == 2
    assert main(["reconstruct", str(src), "--methods", "fabrik-constrained", "--frames", "0:5"]) == 2


def test_skeleton_solution_exposes_local_rotations_swing_and_twist():
    """extras: each joint's rotation relative to its parent's frame, as quaternions, and its
    swing/twist angles, for every constrained skeleton method."""
    from scipy.spatial.transform import Rotation

    from fabrik import models
    from fabrik.constraints import Cone

    body = models.humanoid()
    limited = body.with_constraints({"l_shoulder": Cone.circular(1.2), "r_shoulder": Cone.circular(1.2)})
    rest = body.rest_positions()
    targets = {"l_wrist": rest[body.index("l_wrist")] + [0.0, 0.2, 0.2], "head": rest[body.index("head")]}
    for method in ("fabrik", "ccd", "jacobian-dls"):
        sol = fabrik.solve(limited, targets=targets, method=method)
        frames = sol.extras["frames"]
        local = sol.extras["local_rotations"]
        assert local.shape == (body.n_joints, 4)
        for j in range(1, body.n_joints):
            expected = frames[body.parents[j]].T @ frames[j]
            np.testing.assert_allclose(Rotation.from_quat(local[j]).as_matrix(), expected, atol=1e-9)
            swing = np.arccos(np.clip(frames[body.parents[j]][:, 1] @ frames[j][:, 1], -1, 1))
            assert sol.extras["swing_angles"][j] == pytest.approx(swing, abs=1e-7)
        assert np.all(np.abs(sol.extras["twist_angles"]) <= np.pi + 1e-12)
