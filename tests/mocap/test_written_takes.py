"""The file ``fabrik reconstruct --out`` writes is the solve: on takes of every shared set, plain and
limited, the BVH read back by an independent reader (bvhio) holds the reconstruction's poses, so
its effectors sit where the solve put them and its inner-joint error is the one reported."""

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from fabrik.mocap import prepare_take
from fabrik_experiments.reconstruction import reconstruct_file

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "mocap"
TAKES = [("cmu_131_01.bvh", "0:400:8"), ("bandai2/dataset-2_walk_normal_001.bvh", "::3"),
         ("bandai2/dataset-2_raise-up-both-hands_youthful_001.bvh", None), ("deepmimic/cartwheel.bvh", "::2"),
         ("deepmimic/getup_facedown.bvh", "::2"), ("climb/climb_0.bvh", "0:1200:24")]

pytestmark = [pytest.mark.mocap,
              pytest.mark.skipif(not MOCAP.is_dir(), reason="needs ../shared/data/mocap (the shared takes)")]


def bvhio_positions(path, skeleton, motion) -> np.ndarray:
    """(F, n, 3) world positions of every joint of ``skeleton`` in the BVH at ``path``, read by
    bvhio: its world positions of the joints it lists, and each End Site (which it does not list)
    at its parent's position plus its offset turned by the parent's world rotation, composed from
    bvhio's local rotations."""
    bvhio = pytest.importorskip("bvhio", reason="independent PyPI reader bvhio not installed")
    local = {}
    stack = [bvhio.readAsBvh(str(path)).Root]
    while stack:
        joint = stack.pop()
        stack.extend(joint.Children)
        q = np.array([[k.Rotation.x, k.Rotation.y, k.Rotation.z, k.Rotation.w] for k in joint.Keyframes], float)
        local[skeleton.index(joint.Name)] = Rotation.from_quat(q).as_matrix()
    world = np.empty((motion.n_frames, skeleton.n_joints, 3, 3))
    for j in range(skeleton.n_joints):
        above = np.eye(3) if j == 0 else world[:, int(skeleton.parents[j])]
        world[:, j] = above @ local[j] if j in local else above
    root = bvhio.readAsHierarchy(str(path))
    layout = root.layout()
    out = np.full((motion.n_frames, skeleton.n_joints, 3), np.nan)
    for f in range(motion.n_frames):
        root.loadPose(f)
        for joint, _, _ in layout:
            out[f, skeleton.index(joint.Name)] = np.array(joint.PositionWorld)
    for j in range(skeleton.n_joints):
        if j not in local:
            parent = int(skeleton.parents[j])
            out[:, j] = out[:, parent] + world[:, parent] @ skeleton.offsets[j]
    return out


@pytest.mark.parametrize("take,frames", TAKES)
@pytest.mark.parametrize("method", ["fabrik", "fabrik-constrained"])
def test_the_written_file_is_the_solve(take, frames, method, tmp_path):
    path = MOCAP / take
    out = tmp_path / "rebuilt.bvh"
    constraints = "humanoid" if method.endswith("-constrained") else None
    report, skeleton, motion = reconstruct_file(path, methods=[method], frames=frames, constraints=constraints,
                                                out=out)
    assert "the written BVH is up to" not in report.table()
    row = report.result(method)
    h = report.skeleton_height
    written = bvhio_positions(out, skeleton, motion)
    # bvhio computes in float32 and the file holds 9 decimals: the solve to 1e-6 of the body
    assert np.abs(written - row.positions).max() <= 1e-5 * h
    take_ = prepare_take(skeleton, motion)
    truth = take_.positions
    body = take_.body
    eff = [int(take_.joints[body.index(name)]) for name in report.effectors]
    within = (np.linalg.norm(written[:, eff] - truth[:, eff], axis=2) <= 2 * report.tol).all(axis=1).mean()
    assert within >= min(0.99, row.reached_fraction)
    inner = [int(take_.joints[body.index(name)]) for name in report.evaluated]
    median = np.median(np.linalg.norm(written[:, inner] - truth[:, inner], axis=2))
    assert median == pytest.approx(row.median_error, rel=1e-4)
