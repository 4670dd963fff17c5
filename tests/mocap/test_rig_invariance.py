"""The same motion exported as other rigs export it reconstructs the same (issue 29: "judged on
takes and rigs you have not seen"). ``fabrik_experiments.rig_variants`` writes a take with other
joint names, another up axis and heading, centimetres, other Euler orders, position channels on
every joint, another rest pose or extra channel-less joints; the world positions stay those of
the original, so ``fabrik reconstruct``'s errors (fractions of the height), reached fraction and
the limits of the written file must stay those of the original.

``benchmarks/rig_invariance.py`` runs the whole sweep on the CMU takes and prints the table."""

from dataclasses import astuple

import numpy as np
import pytest

from fabrik.io.bvh import load_bvh
from fabrik.mocap import reconstruct_take
from fabrik.model.humanoid_limits import body_axes, classify, humanoid
from fabrik_experiments import rig_variants as rv
from fabrik_experiments.reconstruction import reconstruct_file
from fabrik_experiments.sample_motion import sample_walk
from test_limited_export import AXIS_RATIO, LIMIT_TOL, bvhio_local_rotations, file_limit_report

UP = np.array([0.0, 1.0, 0.0])

# the sample walk's (Mixamo-style) names in other conventions; the left side, mirrored below
SAMPLE_NAMES = {
    "unity": {"Hips": "Hips", "LeftUpLeg": "LeftUpperLeg", "LeftLeg": "LeftLowerLeg", "LeftFoot": "LeftFoot",
              "LeftToeBase": "LeftToes", "Spine": "Spine", "Spine1": "Chest", "Neck": "Neck", "Head": "Head",
              "LeftShoulder": "LeftShoulder", "LeftArm": "LeftUpperArm", "LeftForeArm": "LeftLowerArm",
              "LeftHand": "LeftHand"},
    "blender": {"Hips": "hips", "LeftUpLeg": "thigh.L", "LeftLeg": "shin.L", "LeftFoot": "foot.L",
                "LeftToeBase": "toe.L", "Spine": "spine", "Spine1": "spine.001", "Neck": "neck", "Head": "head",
                "LeftShoulder": "shoulder.L", "LeftArm": "upper_arm.L", "LeftForeArm": "lower_arm.L",
                "LeftHand": "hand.L"},
    "biped": {"Hips": "Bip01 Pelvis", "LeftUpLeg": "Bip01 L Thigh", "LeftLeg": "Bip01 L Calf",
              "LeftFoot": "Bip01 L Foot", "LeftToeBase": "Bip01 L Toe0", "Spine": "Bip01 Spine",
              "Spine1": "Bip01 Spine1", "Neck": "Bip01 Neck", "Head": "Bip01 Head", "LeftShoulder": "Bip01 L Clavicle",
              "LeftArm": "Bip01 L UpperArm", "LeftForeArm": "Bip01 L Forearm", "LeftHand": "Bip01 L Hand"},
    "rigify deform": {"Hips": "DEF-hips", "LeftUpLeg": "DEF-thigh.L", "LeftLeg": "DEF-shin.L",
                      "LeftFoot": "DEF-foot.L", "LeftToeBase": "DEF-toe.L", "Spine": "DEF-spine",
                      "Spine1": "DEF-spine.001", "Neck": "DEF-neck", "Head": "DEF-head",
                      "LeftShoulder": "DEF-shoulder.L", "LeftArm": "DEF-upper_arm.L", "LeftForeArm": "DEF-forearm.L",
                      "LeftHand": "DEF-hand.L"},
    "unreal": {"Hips": "pelvis", "LeftUpLeg": "thigh_l", "LeftLeg": "calf_l", "LeftFoot": "foot_l",
               "LeftToeBase": "ball_l", "Spine": "spine_01", "Spine1": "spine_02", "Neck": "neck_01", "Head": "head",
               "LeftShoulder": "clavicle_l", "LeftArm": "upperarm_l", "LeftForeArm": "lowerarm_l",
               "LeftHand": "hand_l"},
}


def _mirror(mapping):
    out = dict(mapping)
    for k, v in mapping.items():
        if k.startswith("Left"):
            for a, b in (("Left", "Right"), (".L", ".R"), (" L ", " R "), ("_l", "_r")):
                if a in v:
                    out["Right" + k[4:]] = v.replace(a, b)
                    break
    return out


def _limits_by_index(skeleton):
    limits, unplaced = humanoid(skeleton)
    return {skeleton.index(name): items for name, items in limits.items()}, unplaced


@pytest.mark.parametrize("convention", sorted(SAMPLE_NAMES))
def test_other_naming_conventions_get_the_same_limits(convention):
    """Unity's ``LeftShoulder`` above ``LeftUpperArm`` and Blender's ``shoulder.L`` above
    ``upper_arm.L`` are collar bones (as Mixamo's ``LeftShoulder`` above ``LeftArm``); Biped's
    ``Bip01 L Thigh`` has its side as a word after a prefix word. Every joint gets the limit it
    gets under the Mixamo names, hinge axes included."""
    skeleton, motion = sample_walk(n_frames=2)
    mapping = _mirror(SAMPLE_NAMES[convention])
    other, _ = rv.renamed(skeleton, motion, mapping)
    assert other.names != skeleton.names
    want, want_unplaced = _limits_by_index(skeleton)
    got, got_unplaced = _limits_by_index(other)
    assert sorted(got) == sorted(want), (convention, [other.names[j] for j in sorted(set(got) ^ set(want))])
    for j, items in want.items():
        assert [type(x) for x in got[j]] == [type(x) for x in items], other.names[j]
        for a, b in zip(got[j], items):
            np.testing.assert_allclose(np.hstack(astuple(a)), np.hstack(astuple(b)), atol=1e-12, err_msg=other.names[j])
    assert len(got_unplaced) == len(want_unplaced)
    assert body_axes(other).sources == body_axes(skeleton).sources


def test_name_rules_for_prefix_words_collars_and_biped_thumbs():
    skeleton, motion = sample_walk(n_frames=2)
    names = {"LeftHand": "Bip01_L_Hand", "RightHand": "Bip01_R_Hand", "LeftShoulder": "LeftShoulder",
             "LeftArm": "LeftUpperArm", "Head": "DEF-head", "Hips": "Bip01_Pelvis"}
    other, _ = rv.renamed(skeleton, motion, names)
    parts = classify(other)
    assert parts[0] == ("pelvis", None)
    assert parts[other.index("Bip01_L_Hand")] == ("wrist", "l")
    assert parts[other.index("LeftShoulder")] == ("collar", "l")  # a shoulder above a shoulder
    assert parts[other.index("LeftUpperArm")] == ("shoulder", "l")
    assert parts[other.index("RightShoulder")] == ("collar", "r")  # Mixamo's, as before
    assert parts[other.index("DEF-head")][0] == "head"
    thumbs = ["Bip01 L Finger0", "Bip01 L Finger01", "Bip01 R Finger0"]
    fingers = ["Bip01 L Finger1", "Bip01 L Finger12", "LeftHandIndex1"]
    from fabrik.model.humanoid_limits import _part_of, _split_side

    def part(name):
        return next((p for _, rest in _split_side(name) if (p := _part_of(rest, False)) is not None), None)

    assert [part(n) for n in thumbs] == ["thumb"] * 3
    assert [part(n) for n in fingers] == ["finger"] * 3


def _same_up_to(a, b, G, scale):
    """max |a - (b G)/scale| between positions (F, n, 3) a and b of a take turned by G and scaled."""
    return float(np.abs(a - (b @ G) / scale).max())


@pytest.mark.parametrize("degrees", [5.0, 37.0])
def test_a_walk_turned_about_the_vertical_and_scaled_solves_the_same(degrees):
    """Limits are placed across the rig's own body (left is not snapped to a file axis), so a
    take turned by a few degrees gets the same answers, with limits and without."""
    skeleton, motion = sample_walk(n_frames=30)
    G = rv.about_up(degrees, UP)
    turned = rv.rotated(skeleton, motion, G, 100.0)
    h = skeleton.height()
    for method, limits in (("fabrik", None), ("fabrik-constrained", "humanoid")):
        a = reconstruct_take(skeleton, motion, method=method, constraints=limits)
        b = reconstruct_take(*turned, method=method, constraints=limits)
        assert _same_up_to(a.positions, b.positions, G, 100.0) < 1e-6 * h, (method, degrees)
        np.testing.assert_array_equal(a.solution.reached, b.solution.reached)


def test_position_channels_that_wobble_give_the_take_without_them(tmp_path):
    """Blender-style position channels on every joint, wobbling by 1e-6 of the height about the
    OFFSETs: the take's recorded poses are those of the fixed bones, so the solves match the take
    without the channels, and the written file holds the solved bones."""
    skeleton, motion = sample_walk(n_frames=30)
    wobbly = rv.position_channels(skeleton, motion, 1e-6)
    h = skeleton.height()
    a = reconstruct_take(skeleton, motion, method="fabrik")
    b = reconstruct_take(*wobbly, method="fabrik")
    assert np.abs(a.positions - b.positions).max() < 1e-9 * h
    from fabrik.mocap import save_take

    miss = save_take(tmp_path / "w.bvh", *wobbly, b)
    assert miss < 1e-9 * h
    s2, m2 = load_bvh(tmp_path / "w.bvh")
    bones = np.linalg.norm(m2.local_translations(s2)[:, 1:], axis=2)
    np.testing.assert_allclose(bones, np.broadcast_to(skeleton.bone_lengths[1:], bones.shape), atol=1e-9 * h)


# --- the CMU takes: every variant through reconstruct_file, the written file read by bvhio ----

#: the CMU joints that get hinges (knees and elbows)
CMU_HINGES = ("LeftKnee", "RightKnee", "LeftElbow", "RightElbow")


def _cmu_variants(skeleton, motion):
    mix, unity, biped = (rv.mirrored_names(t) for t in (rv.MIXAMO, rv.UNITY, rv.BIPED))
    s, m = rv.renamed(skeleton, motion, rv.mirrored_names(rv.BLENDER))
    s, m = rv.rotated(s, m, rv.Z_UP @ rv.about_up(-70.0, UP), 100.0)
    return {
        "mixamo names": (rv.renamed(skeleton, motion, mix), 1e-9, mix),
        "unity names": (rv.renamed(skeleton, motion, unity), 1e-9, unity),
        "biped names": (rv.renamed(skeleton, motion, biped), 1e-9, biped),
        "z-up, turned 5 deg, cm": (rv.rotated(skeleton, motion, rv.Z_UP @ rv.about_up(5.0, UP), 100.0), 1e-6, {}),
        "euler orders": (rv.reordered(skeleton, motion), 1e-9, {}),
        "position channels": (rv.position_channels(skeleton, motion, 1e-6), 1e-6, {}),
        "end sites as tip joints": (rv.with_dummies(skeleton, motion, tips=True), 1e-9, {}),
        "blender, z-up, cm, orders, positions": (rv.position_channels(*rv.reordered(s, m), 1e-6), 1e-6,
                                                 rv.mirrored_names(rv.BLENDER)),
    }


def _run(tmp_path, name, skeleton, motion):
    src = tmp_path / f"{name}.bvh"
    rv.save(src, skeleton, motion)
    out = tmp_path / f"{name}_out.bvh"
    report, s, _ = reconstruct_file(src, methods=["fabrik-constrained", "fabrik"], constraints="humanoid", out=out)
    plain, limited = report.result("fabrik"), report.result("fabrik-constrained")
    local = bvhio_local_rotations(out, list(s.names))
    worst, ratios = file_limit_report(limited.solved_skeleton, local, list(s.names))
    return plain, limited, worst, ratios


@pytest.fixture(scope="module")
def cmu_slice(mocap_files):
    path = next((p for p in mocap_files if p.name == "cmu_131_01.bvh"), mocap_files[0])
    skeleton, motion = load_bvh(path)
    return skeleton, motion.frames(0, 240, 8)


@pytest.fixture(scope="module")
def cmu_original(cmu_slice, tmp_path_factory):
    return _run(tmp_path_factory.mktemp("original"), "original", *cmu_slice)


VARIANTS = ["mixamo names", "unity names", "biped names", "z-up, turned 5 deg, cm", "euler orders",
            "position channels", "end sites as tip joints", "blender, z-up, cm, orders, positions"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_cmu_variant_reconstructs_and_writes_as_the_original(variant, cmu_slice, cmu_original, tmp_path):
    skeleton, motion = cmu_slice
    (s, m), rel, names = _cmu_variants(skeleton, motion)[variant]
    plain, limited, worst, ratios = _run(tmp_path, "variant", s, m)
    plain0, limited0, worst0, ratios0 = cmu_original
    assert plain.median_error_rel == pytest.approx(plain0.median_error_rel, rel=rel, abs=1e-12)
    assert limited.median_error_rel == pytest.approx(limited0.median_error_rel, rel=rel, abs=1e-12)
    assert plain.reached_fraction == plain0.reached_fraction
    assert limited.reached_fraction == limited0.reached_fraction
    # the same joints limited, the hinges on the knees and elbows, kept in the written file
    assert len(limited.solved_skeleton.constraints) == len(limited0.solved_skeleton.constraints)
    assert sorted(ratios) == sorted(names.get(n, n) for n in CMU_HINGES)
    assert worst <= LIMIT_TOL and max(ratios.values()) < AXIS_RATIO, (worst, ratios)


def test_cmu_a_pose_rest_changes_only_the_limited_solve_a_little(cmu_slice, cmu_original, tmp_path):
    """A rest pose with the arms 40 degrees out: the plain solve is the original's; the limited
    one differs a little, as its cones are placed about the rest directions; the file keeps them."""
    skeleton, motion = cmu_slice
    plain, limited, worst, ratios = _run(tmp_path, "apose", *rv.a_pose(skeleton, motion, 40.0, 0.0, 0.0))
    plain0, limited0, _, _ = cmu_original
    assert plain.median_error_rel == pytest.approx(plain0.median_error_rel, rel=1e-6)
    assert limited.median_error_rel == pytest.approx(limited0.median_error_rel, rel=0.05)
    assert limited.reached_fraction == limited0.reached_fraction
    assert worst <= LIMIT_TOL and max(ratios.values()) < AXIS_RATIO, (worst, ratios)


def test_cmu_bent_rest_solves_the_same_at_the_same_tolerance(cmu_slice):
    """Knees and elbows bent at rest (in their own bending planes, frame rotations compensating):
    at the same tolerance the plain solve is the original's, and the limited one nearly (module
    ``fabrik.mocap.takes``: hinges the first frame breaks turn about their rest direction). (The
    default tolerance and the reported fractions follow the rest pose's height, which the bend
    changes: 2.2% here.)"""
    skeleton, motion = cmu_slice
    bent = rv.a_pose(skeleton, motion, arms=0.0, knees=15.0, elbows=20.0)
    assert bent[0].height() != pytest.approx(skeleton.height(), rel=1e-3)
    h = skeleton.height()
    a = reconstruct_take(skeleton, motion, method="fabrik", tol=1e-3 * h)
    b = reconstruct_take(*bent, method="fabrik", tol=1e-3 * h)
    assert np.abs(a.positions - b.positions).max() < 1e-9 * h
    # with limits, a hinge the first frame breaks turns its plane about its zero direction, the
    # rest direction (mocap.fit_limits_to_pose): bent off the elbow's true plane, it differs a little
    a = reconstruct_take(skeleton, motion, method="fabrik-constrained", constraints="humanoid", tol=1e-3 * h)
    b = reconstruct_take(*bent, method="fabrik-constrained", constraints="humanoid", tol=1e-3 * h)
    inner = np.linalg.norm(a.positions - b.positions, axis=2)
    assert np.median(inner) < 0.01 * h and a.solution.reached.all() and b.solution.reached.all()

