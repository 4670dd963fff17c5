"""The limit fuzzing harness of issue 31 as tests: random limited chains and trees in the supported
range (bone lengths within 6 decades, zero-length bones, cones from 0.01 rad to pi - 0.01, hinge
and twist ranges touching +-pi) solved by every constrained method: no limit exceeded by more than
1e-6 rad, bone lengths kept to 1e-9 of the reach, no NaN, no solve over 2 s. Hypothesis draws the
cases' seeds (the same ones every CI run: tests/conftest.py), ``fabrik_experiments.fuzz_limits``
builds and measures them; ``benchmarks/fuzz_limits.py`` runs 10,000. The same for
``fabrik.solve_batch`` (``fabrik_experiments.fuzz_batch``, ``benchmarks/fuzz_batch.py``). The
cases the fuzzing runs found are pinned below, as are mutated BVH numbers.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fabrik
from fabrik.constraints import Cone, Hinge, Twist, limit_violations
from fabrik.io.bvh import BVHError, loads_bvh
from fabrik.model.constraints import MAX_SCALE_DECADES, MIN_CONE_ANGLE, twist_excess
from fabrik_experiments.fuzz_limits import (LENGTH_TOL, LIMIT_TOL, chain_methods, describe,
                                            failures, random_chain_case, random_tree_case, run_case,
                                            skeleton_methods, warm_up)

CHAIN_METHODS = chain_methods()
SKELETON_METHODS = skeleton_methods()
# The same seeds on every run, here as in CI: the wider search is benchmarks/fuzz_limits.py (10,000
# cases); what it found is pinned below
FUZZ = settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Compile every constrained kernel before any solve is timed (a first call compiles, 10-60 s)."""
    warm_up(CHAIN_METHODS, SKELETON_METHODS)


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_random_limited_chains_hold_their_limits_with_every_method(seed):
    case = random_chain_case(np.random.default_rng(seed))
    for method in CHAIN_METHODS:
        found = failures(run_case(case, method), timed=False)
        assert not found, f"{method}: {found}; {describe(case)}"


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_random_limited_trees_hold_their_limits_with_every_method(seed):
    case = random_tree_case(np.random.default_rng(seed))
    for method in SKELETON_METHODS:
        found = failures(run_case(case, method), timed=False)
        assert not found, f"{method}: {found}; {describe(case)}"


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_random_batches_answer_as_solve_or_refuse_with_a_value_error(seed):
    """benchmarks/fuzz_batch.py's cases (well formed and malformed solve_batch calls): a
    ValueError, or every checked answer correct and fabrik.solve's."""
    from fabrik_experiments.fuzz_batch import describe as describe_batch
    from fabrik_experiments.fuzz_batch import random_case as random_batch_case
    from fabrik_experiments.fuzz_batch import run_case as run_batch_case

    case = random_batch_case(np.random.default_rng(seed))
    found, _, _ = run_batch_case(case)
    assert not found, f"{found}; {describe_batch(case)}"


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_random_limit_inputs_are_taken_or_refused_with_a_value_error(seed):
    """benchmarks/fuzz_limits.py --surface inputs: limit files (whole or spoiled), limit types
    from random arguments, limit_violations on random and spoiled poses."""
    from fabrik_experiments.fuzz_limit_inputs import describe_input, random_input_case, run_input_case

    rng = np.random.default_rng(seed)
    for _ in range(10):
        case = random_input_case(rng)
        found, _ = run_input_case(case)
        assert not found, f"{found}; {describe_input(case)}"


_CLI_WORKSPACE = []


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_command_lines_answer_or_fail_in_one_line(seed):
    """benchmarks/fuzz_cli.py's cases: fabrik command lines, well formed and degenerate; no
    traceback, no exception out of main, no error message over several lines."""
    from fabrik_experiments.fuzz_cli import Workspace, random_argv, run_argv

    os.environ.setdefault("MPLBACKEND", "Agg")  # (matplotlib's own backend choice, without a display)
    if not _CLI_WORKSPACE:
        _CLI_WORKSPACE.append(Workspace())
    ws = _CLI_WORKSPACE[0]
    argv = random_argv(np.random.default_rng(seed), ws)
    found, _, _ = run_argv(argv, ws.root)
    assert not found, f"{found}; argv {argv!r}"


def test_command_lines_the_fuzzing_run_found(tmp_path):
    """benchmarks/fuzz_cli.py found these reaching the user as tracebacks: MemoryError for huge
    counts, ZeroDivisionError for a one-frame arm study, IndexError for a one-frame crowd."""
    from fabrik.cli import main
    from fabrik.io.bvh import save_bvh
    from fabrik_experiments.sample_motion import sample_walk

    for argv in (["bench", "chain", "--targets", "1000000000000000"], ["bench", "tracking", "--steps", str(10 ** 15),
                 "--methods", "fabrik"], ["bench", "batch", "--targets", str(10 ** 15), "--lengths", "5"],
                 ["demo", "--targets", str(10 ** 15)], ["demo", "--targets", "0"]):
        assert main(argv) == 2, argv
    skeleton, motion = sample_walk(n_frames=4)
    take = tmp_path / "walk.bvh"
    save_bvh(take, skeleton, motion)
    assert main(["bench", "arm", str(take), "--frames", "1:2"]) == 2
    assert main(["bench", "batch", "--parts", "crowd", "--crowd", "2x1", "--repeats", "1"]) == 0


# --- pinned edges ---------------------------------------------------------------------------------

def _check_chain(chain, target):
    for method in CHAIN_METHODS:
        result = run_case({"kind": "chain", "model": chain, "target": np.asarray(target, float),
                           "reach": float(chain.bone_lengths.sum())}, method)
        assert not failures(result), (method, failures(result))


@pytest.mark.parametrize("lo, hi", [(math.pi, math.pi), (-math.pi, math.pi), (-math.pi, -math.pi),
                                    (math.pi - 0.1, math.pi), (-math.pi, -math.pi + 0.1)])
def test_twist_ranges_touching_or_spanning_pi_hold(lo, hi):
    chain = fabrik.Chain.straight(5).with_constraints({i: [Cone.circular(1.0), Twist(lo, hi)] for i in range(4)})
    _check_chain(chain, [1.5, 2.5, 1.0])
    _check_chain(chain, [0.5, -1.0, 0.3])


def test_twist_ranges_are_read_modulo_two_pi():
    assert twist_excess(-math.pi, math.pi, math.pi) == 0.0
    assert twist_excess(math.pi, -math.pi, -math.pi) == 0.0
    assert twist_excess(-math.pi, math.pi - 0.1, math.pi) == 0.0  # -pi is pi
    assert twist_excess(-math.pi + 0.05, math.pi - 0.1, math.pi) == pytest.approx(0.05)  # past pi: outside
    assert twist_excess(0.3, -math.pi, math.pi) == 0.0
    assert twist_excess(0.5, 0.0, 0.2) == pytest.approx(0.3)
    assert twist_excess(-3.0, 2.9, 3.0) == pytest.approx(2 * math.pi - 6.0)  # the nearer end, across pi


@pytest.mark.parametrize("angle", [1e-300, 5e-324, 1e-6, 0.009, math.pi - 1e-300, math.pi - 1e-6])
def test_degenerate_cone_angles_are_refused_naming_the_range(angle):
    with pytest.raises(ValueError, match=r"Cone\.up must be in|Cone\.up must be in \(0"):
        Cone(angle, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="Cone"):
        Cone.circular(angle)


def test_the_narrowest_and_widest_cones_hold():
    for angle in (MIN_CONE_ANGLE, math.pi - MIN_CONE_ANGLE):
        chain = fabrik.Chain.straight(4).with_constraints({i: Cone.circular(angle) for i in range(3)})
        _check_chain(chain, [1.0, 1.0, 1.0])
    mixed = fabrik.Chain.straight(4).with_constraints(
        {i: Cone(MIN_CONE_ANGLE, math.pi - MIN_CONE_ANGLE, MIN_CONE_ANGLE, math.pi - MIN_CONE_ANGLE) for i in range(3)})
    _check_chain(mixed, [1.0, -1.0, 1.0])


def test_a_limit_after_a_zero_length_bone_is_measured_in_that_bones_frame():
    """A zero-length bone's frame stands for its direction, within its own joint's limits; the next
    joint's limits are measured in that frame, so two cones in a row add up (0.2 + 0.3 rad)."""
    pts = np.array([[0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 2, 0.0]])
    chain = fabrik.Chain.from_positions(pts).with_constraints(
        {0: [Cone.circular(0.2), Twist(-0.1, 0.1)], 1: Cone.circular(0.3)})
    for method in CHAIN_METHODS:
        sol = fabrik.solve(chain, [1.5, 0.8, 0.3], method=method)
        frames, root = sol.extras["frames"], sol.extras["root_frame"]
        assert limit_violations(chain, sol.positions, frames).max() <= 1e-6, method
        bone = sol.positions[2] - sol.positions[1]
        angle = math.acos(bone @ root[:, 1] / np.linalg.norm(bone))
        assert angle <= 0.5 + 1e-6, method
        if method == "ccd-constrained":
            assert angle == pytest.approx(0.5, abs=1e-6)  # both cones used to the full


def test_limits_on_bones_spanning_more_than_the_supported_decades_are_refused():
    pts = np.array([[0, 0, 0], [1e-11, 0, 0], [1e-11, 1e11, 0.0]])
    chain = fabrik.Chain.from_positions(pts)
    with pytest.raises(ValueError, match=r"within 6 decades.*bone 0 \(joint 0 -> 1\) is 1e-11 long"):
        chain.with_constraints({1: Cone.circular(1.0)})
    fabrik.solve(chain, [1.0, 2.0, 3.0])  # without limits it still solves
    ok = fabrik.Chain.from_positions(np.array([[0, 0, 0], [1.0, 0, 0], [1.0, 0.999e6, 0.0]]))
    ok.with_constraints({1: Cone.circular(1.0)})  # within the range
    skel = fabrik.Skeleton.from_parents(("a", "b", "c"), [-1, 0, 1], [[0, 0, 0], [0, 1e-4, 0], [0, 1e4, 0]])
    with pytest.raises(ValueError, match=f"within {MAX_SCALE_DECADES:g} decades.*'b'"):
        skel.with_constraints({"b": Hinge((1, 0, 0), 0.0, 1.0)})


def test_the_issue_cases_at_the_edges_solve_within_limits():
    """The clusters the fuzzing run of issue 31 reported: a zero-length parent bone, Twist(pi, pi),
    and (now refused) cones of 1e-300 and bones 1e-11 beside 1e11."""
    pts = np.array([[0, 0, 0], [0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 2, 0.0]])
    chain = fabrik.Chain.from_positions(pts).with_constraints(
        {0: Twist(math.pi, math.pi), 1: [Hinge((1, 0, 0), -math.pi, math.pi), Twist(-math.pi, math.pi)],
         2: [Cone(0.5, MIN_CONE_ANGLE, 1.0, math.pi - MIN_CONE_ANGLE), Twist(math.pi - 0.1, math.pi)]})
    _check_chain(chain, [0.5, 1.5, 1.0])
    _check_chain(chain, [-2.0, 0.5, 1.0])


# --- mutated BVH numbers --------------------------------------------------------------------------

SMALL = "\n".join(["HIERARCHY", "ROOT Hips", "{", " OFFSET 0 0 0",
                   " CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation", " JOINT Spine", " {",
                   "  OFFSET 0 1 0", "  CHANNELS 3 Zrotation Xrotation Yrotation", "  End Site", "  {",
                   "   OFFSET 0 1 0", "  }", " }", "}", "MOTION", "Frames: 2", "Frame Time: 0.01",
                   "1 2 3 10 20 30 -5 15 95", "4 5 6 -40 50 -60 0.5 -0.25 180"]) + "\n"
_NUMBERS = [(m.start(), m.end()) for m in re.finditer(r"(?<![A-Za-z])[-+]?\d+(?:\.\d+)?", SMALL)]
BAD_NUMBERS = ["9" * 4301, "1" + "0" * 5000, "-" + "7" * 4301, "1e999", "-1e400", "nan", "inf", "-Infinity", "1_000",
               "0x10", "１２", "٣", "1e", "--1", "1.2.3", "+-3", "1e75", "9" * 76, "0." + "9" * 4400]


@settings(max_examples=60, deadline=None)
@given(where=st.integers(0, len(_NUMBERS) - 1), bad=st.sampled_from(BAD_NUMBERS))
def test_every_bad_number_is_a_bvherror_naming_its_line(where, bad):
    """Any number of the file (a count, an offset, the frame count or time, a channel value)
    replaced by an over-long, non-finite or malformed one reads, or fails with a BVHError naming
    the line of that number; never another exception."""
    start, end = _NUMBERS[where]
    text = SMALL[:start] + bad + SMALL[end:]
    line = SMALL[:start].count("\n") + 1
    try:
        loads_bvh(text)
    except BVHError as exc:
        assert exc.line == line, (bad, line, str(exc))


def test_a_planar_chain_folded_by_a_half_turn_is_not_mirrored():
    """Found by the fuzzing run (seed 31, case 4791): on a 2D chain a hinge at pi on a zero-length
    bone turned the frame by a half turn about +X, flipping +Z, and CCD then mirrored the rest of
    the chain within its plane, breaking the next hinge by 1.04 rad."""
    pts = np.array([[48.35236042, -12.64791217], [47.9851152, -13.31068828], [-81.77676106, 0.38270551],
                    [-81.77676106, 0.38270551], [-82.24841572, 0.71732351], [-82.24841572, 0.71732351]])
    chain = fabrik.Chain.from_positions(pts).with_constraints({
        0: Twist(0.0, math.pi),
        1: [Hinge((0, 0, 1), -2.9176481968727486, 0.0), Twist(-math.pi, 0.0)],
        2: Hinge((0, 0, 1), math.pi, math.pi),
        3: Hinge((0, 0, -1), 2.4970060181290616, 2.6230388415154477),
        4: [Hinge((0, 0, -1), -math.pi, -2.6995201806170517), Twist(-math.pi, 0.0)]})
    _check_chain(chain, [168.80039244, 40.4555612])


#: Found by the fuzzing run (seed 31; case number, method, rest positions, constraints, target): the
#: constrained Jacobian methods carried their frames' rounding from step to step, and after 10,000
#: steps on chains spanning five to seven decades of bone length a frame was 1.2-1.5e-6 rad off
#: its own bone (``fabrik.kernels.jacobian.turned_frames`` now re-orthonormalises them)
JACOBIAN_DRIFT_CASES = [
    (3771, 'jacobian-svd-dls-tuned-constrained',
     [[-164623.26632303259, 51052.740216184706, 337165.99520670593], [-164623.40719613343, 51052.47197964026, 337166.11539325945], [-57854.22418956195, 282231.68057136354, 133703.1345808649], [-56659.37492633336, 282464.7378730534, 136515.0922937569], [-56696.768412858335, 282462.77139924956, 136532.9410320729], [-56717.925618136826, 282437.21566779877, 136530.00135872493]],
     {0: [Twist(min=-3.025082050148356, max=1.5650895071942124)], 1: [Cone(up=3.1315926535897933, down=0.01, left=3.1315926535897933, right=1.4128518462646138)], 3: [Hinge(axis=(-0.08407403374510469, 0.0, -0.9964595108933564), min=0.0, max=3.141592653589793)], 4: [Hinge(axis=(0.9451870081244128, 0.0, 0.32652950811958964), min=-1.189417577701926, max=3.141592653589793)]},
     [-65480.0467734525, 179765.13978128796, 23424.23087319982]),
    (4271, 'jacobian-dls-tuned-constrained',
     [[303010.355934653, 404769.8314597492, -378198.1586739612], [303010.39450648136, 404770.1035191819, -378198.07947055664], [568488.5975122615, 351563.97171592584, -286178.690857638], [568500.4502537213, 351548.6216139324, -286191.76117882575], [568512.2595120192, 351506.5282719828, -286241.7583748611]],
     {0: [Hinge(axis=(0.6861190738805651, 0.0, 0.7274892552177493), min=-1.3333802053624018, max=-0.9432499192652339), Twist(min=3.141592653589793, max=3.141592653589793)], 1: [Twist(min=-3.141592653589793, max=-3.041592653589793)], 2: [Hinge(axis=(0.7486218956399654, 0.0, 0.6629971774965749), min=-0.1542472067463425, max=2.312239896565483), Twist(min=-3.141592653589793, max=3.141592653589793)]},
     [195951.96332147578, 673303.9707800404, -369878.83021149546]),
    (5575, 'jacobian-svd-dls-tuned-constrained',
     [[1402521.2974431315, 3467199.0332741397, -442035.2637173574], [1402524.7293443829, 3467206.2459011036, -442033.0323181839], [1405213.7032823071, 3467077.277228844, -439635.19718517485], [1405204.9728193714, 3467087.107467902, -439648.04753451986], [2892284.3390090326, 4602623.656837291, 356529.01529398304]],
     {0: [Hinge(axis=(0.4728576575472645, 0.0, 0.8811388288453267), min=-3.141592653589793, max=0.42576404426620007), Twist(min=-3.141592653589793, max=-3.041592653589793)], 1: [Hinge(axis=(-0.28930783722407466, 0.0, -0.9572361126288166), min=0.0, max=1.6098866999556254), Twist(min=-3.141592653589793, max=3.141592653589793)], 2: [Hinge(axis=(0.0011982461512803587, 0.0, -0.9999992821028229), min=-1.8117028057381344, max=-1.0832059567790369)], 3: [Twist(min=-3.141592653589793, max=3.141592653589793)]},
     [1546197.2509626225, 1496947.9476797513, 28510.457318582514]),
    (6489, 'jacobian-svd-dls-tuned-constrained',
     [[-949202.6385813047, -25797169.817805678, -6777283.286330518], [-4739467.420422088, -30962350.618585713, -22448932.670917787], [-4740034.854479841, -30962428.161250085, -22450135.89022002], [-4753553.554434284, -30959906.530957777, -22478827.204057127]],
     {2: [Cone(up=1.7779793942584081, down=2.2602592823319987, left=0.3381711504822473, right=1.5707963267948966), Twist(min=3.041592653589793, max=3.141592653589793)]},
     [-13089876.3886473, -21760072.65926697, -17862236.562403444]),
    (9631, 'jacobian-transpose-tuned-constrained',
     [[-9943104.357620673, -5672558.590225623, -2603529.5272378917], [-9943097.045085067, -5672559.021722812, -2603527.1827690196], [-12379935.92368601, -6930530.873975621, 4582229.972600501], [-12379935.92368601, -6930530.873975621, 4582229.972600501]],
     {0: [Cone(up=1.3230559925857517, down=2.424298882100006, left=0.26107268848472, right=2.14884966393155), Twist(min=-1.7522222275915424, max=-0.34697897726170845)], 1: [Cone(up=1.5707963267948966, down=2.9887972097563362, left=3.1315926535897933, right=2.232300098701325), Twist(min=-0.7113828027701361, max=-0.6537249872794133)], 2: [Cone(up=3.1315926535897933, down=1.5707963267948966, left=2.3130754151134645, right=0.05), Twist(min=-3.141592653589793, max=-3.141592653589793)]},
     [-18852105.637185603, -4066674.8156163227, -5554556.714876803]),
]


@pytest.mark.parametrize("case", JACOBIAN_DRIFT_CASES, ids=[str(c[0]) for c in JACOBIAN_DRIFT_CASES])
def test_constrained_jacobian_frames_do_not_drift_off_their_bones(case):
    _, method, points, limits, target = case
    chain = fabrik.Chain.from_positions(points).with_constraints(limits)
    sol = fabrik.solve(chain, target, method=method)
    violation = limit_violations(chain, sol.positions, sol.extras["frames"]).max()
    assert violation <= LIMIT_TOL, violation
    frames = sol.extras["frames"]
    np.testing.assert_allclose(frames @ frames.transpose(0, 2, 1), np.broadcast_to(np.eye(3), frames.shape),
                               atol=1e-12)
    lengths = np.linalg.norm(np.diff(sol.positions, axis=0), axis=1)
    assert np.abs(lengths - chain.bone_lengths).max() <= LENGTH_TOL * chain.total_length


#: Found by the same run: a fold out of the straight-chain singularity turned a zero-length bone's
#: parent and not the bone itself, and CCD sweeps (constrained FABRIK polishes with them) never turn
#: a zero-length bone back: its limit was broken by up to 0.26 rad
#: (``fabrik.kernels.rotation_chain.fold_on_line`` now turns it with its parent). Constrained FABRIK
#: on 3197 broke a zero-length bone's cone by 0.289 rad another way; it holds since the merge of the
#: shared tree and chain drivers
ZERO_BONE_FOLD_CASES = [
    (1666, 'ccd-constrained',
     [[312031784.486057, 229016154.10127962, -383031262.8627716], [312031653.921516, 229016638.38061845, -383031411.38195765], [675408120.4926956, -113336416.04984987, -226881136.2723268], [675408120.4926956, -113336416.04984987, -226881136.2723268]],
     {0: [Cone(up=1.7638845030072416, down=3.0915926535897933, left=3.0915926535897933, right=0.8198901079450992), Twist(min=-1.8886224072512032, max=-1.0343709706857918)], 2: [Cone(up=0.944702584402395, down=0.05, left=0.5015628526117352, right=0.01), Twist(min=-2.593929045960729, max=-0.33634642038922946)]},
     [734957260.5605768, 536793262.16261405, -376846236.5890229]),
    (3197, 'fabrik-constrained',
     [[-257913082.64936826, 423080574.58583075, 79849176.65875913], [-257913197.32365227, 423080968.75696576, 79849090.34031907], [-45721052.70538697, 729084297.3198189, -113303835.92303453], [-47766927.434556365, 729184936.5429213, -114489927.70165236], [-47766927.434556365, 729184936.5429213, -114489927.70165236]],
     {1: [Cone(up=1.5707963267948966, down=1.5707963267948966, left=0.25937871666132967, right=1.5707963267948966), Twist(min=-2.242818635893168, max=-1.588303834803909)], 3: [Cone(up=3.0495738461649124, down=0.05, left=0.01, right=1.3655322504620506), Twist(min=-1.9779580112227226, max=-0.6972474319691351)]},
     [23128091.408103615, 315409584.63734996, 146547509.32899645]),
    (5283, 'ccd-constrained',
     [[717815072.0011013, -990626742.3085568, 1175151371.1724813], [717815603.712561, -990626218.8350552, 1175151120.2401292], [1282302576.0127892, -1161391335.0576818, 653709731.032726], [1282302576.0127892, -1161391335.0576818, 653709731.032726]],
     {0: [Cone(up=2.2970924720704247, down=1.6148767411715739, left=3.1185840996350027, right=3.0915926535897933), Twist(min=-1.2952431912304756, max=2.649151976368352)], 2: [Hinge(axis=(0.9826321594184472, 0.0, 0.18556411096071249), min=0.885353456641794, max=2.5850102225241782)]},
     [842214535.5711241, -533830072.03079754, 1160870394.8681316]),
    (8269, 'ccd-constrained',
     [[-429526748.61739165, 266475761.126348, -1995327067.0039866], [-429527472.6580521, 266475961.79928324, -1995326796.0719166], [-1149197112.8180437, 604961469.6982242, -1921770112.393145], [-1149197112.8180437, 604961469.6982242, -1921770112.393145]],
     {0: [Cone(up=3.092843307362473, down=3.1315926535897933, left=0.2336572341892248, right=3.1315926535897933), Twist(min=-3.141592653589793, max=3.141592653589793)], 1: [Hinge(axis=(0.5335510037153187, 0.0, -0.8457678915839594), min=0.0, max=1.7936224148545152)], 2: [Hinge(axis=(-0.5975505583575805, 0.0, -0.8018312354894538), min=0.0, max=1.8103515737651668), Twist(min=-2.7847176407329286, max=1.6361773740775574)]},
     [-277534991.2375541, 337427984.54946077, -2072911566.226765]),
]


@pytest.mark.parametrize("case", ZERO_BONE_FOLD_CASES, ids=["1666", "3197", "5283", "8269"])
def test_a_fold_keeps_zero_length_bones_within_their_limits(case):
    _, method, points, limits, target = case
    chain = fabrik.Chain.from_positions(points).with_constraints(limits)
    sol = fabrik.solve(chain, target, method=method)
    violation = limit_violations(chain, sol.positions, sol.extras["frames"]).max()
    assert violation <= LIMIT_TOL, violation
