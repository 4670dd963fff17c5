"""Bodies whose hands carry finger effectors (issue 29, hands): the procedural walk with five
three-phalanx fingers per hand that curl while walking (``sample_walk(fingers=True)``), every
fingertip, both toes and the head as effectors."""

import numpy as np
import pytest

import fabrik
from fabrik.mocap import prepare_take, reconstruct_take
from fabrik.mocap.takes import evaluated_joints
from fabrik_experiments.sample_motion import sample_walk


@pytest.fixture(scope="module")
def finger_walk():
    return sample_walk(n_frames=60, fingers=True)


def _median_rel_error(skeleton, motion, method, constraints=None):
    take = prepare_take(skeleton, motion)
    rec = reconstruct_take(skeleton, motion, method=method, constraints=constraints)
    body = take.body
    inner = take.joints[evaluated_joints(body, [body.index(e) for e in rec.effectors])]
    truth = take.whole(take.body_positions)
    err = np.linalg.norm(rec.positions[:, inner] - truth[:, inner], axis=2)
    return float(np.median(err)) / body.height(), rec


def test_finger_rig_has_every_fingertip_as_effector(finger_walk):
    skeleton, motion = finger_walk
    take = prepare_take(skeleton, motion)
    rec = reconstruct_take(skeleton, motion, method="fabrik")
    tips = [e for e in rec.effectors if "Hand" in e]
    assert len(tips) == 10 and all(t.endswith("3_End") for t in tips)
    assert rec.solution.reached.all()
    assert take.body.n_joints == skeleton.n_joints


@pytest.mark.parametrize("constraints", [None, "humanoid"])
def test_fabrik_on_finger_rigs_within_1_5_of_dls(finger_walk, constraints):
    skeleton, motion = finger_walk
    fab, rec = _median_rel_error(skeleton, motion, "fabrik", constraints)
    dls, _ = _median_rel_error(skeleton, motion, "jacobian-dls", constraints)
    assert rec.solution.reached.mean() >= 0.99
    assert fab <= 1.5 * dls, (fab, dls)


def test_finger_walk_round_trips_as_bvh(tmp_path, finger_walk):
    skeleton, motion = finger_walk
    path = tmp_path / "fingers.bvh"
    fabrik.save_bvh(path, skeleton, motion)
    skeleton2, motion2 = fabrik.load_bvh(path)
    assert skeleton2.names == skeleton.names
    np.testing.assert_allclose(motion2.world_positions(skeleton2), motion.world_positions(skeleton), atol=1e-3)
