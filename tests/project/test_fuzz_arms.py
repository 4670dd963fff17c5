"""The arm and URDF fuzzing of issue 40.8 as tests: hypothesis draws the seeds of a few cases
(the same on every run: tests/conftest.py) that ``fabrik_experiments.fuzz_arms`` builds and
judges; ``benchmarks/fuzz_arms.py`` and ``benchmarks/fuzz_urdf.py`` run 10,000 each. What the
runs found is pinned below."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fabrik
from fabrik_experiments.fuzz_arms import (arm_case, describe_arm_case, mutate, run_arm_case, run_urdf_case,
                                          urdf_case, urdf_sources)
from tests.conftest import URDF_DIR

FUZZ = settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
SOURCES = urdf_sources(URDF_DIR if URDF_DIR.is_dir() else None)


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_random_arm_cases_have_no_defect(seed):
    case = arm_case(np.random.default_rng(seed))
    found = run_arm_case(case, timed=False)
    assert not found, f"{found}; {describe_arm_case(case)}"


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_urdf_cases_have_no_defect(seed):
    rng = np.random.default_rng(seed)
    case = urdf_case(SOURCES, rng)
    found = run_urdf_case(case, rng, timed=False)
    assert not found, f"{found}; {case['source']} {case['mutations']}"


def test_mutations_change_the_text():
    rng = np.random.default_rng(1)
    text = SOURCES[0][1]
    assert sum(mutate(text, rng)[0] != text for _ in range(50)) >= 45


# --- what the fuzzing runs found ------------------------------------------------------------------

def test_a_mutated_text_that_is_no_file_name_is_a_urdf_error():
    """A URDF text whose '<' was flipped became a 'file name' too long for the file system: OSError."""
    with pytest.raises(fabrik.URDFError, match="URDF file not found"):
        fabrik.load_urdf("\n?xml version='1.0'?>" + "<robot/>" * 1000)


def test_a_nearest_answer_turned_by_whole_turns_stays_reached_at_tolerance_zero():
    """``nearest`` folds revolute angles by 2 pi onto the start; the folded angles' forward pose
    differs by rounding, which a tolerance of 0 can see: the fold is kept only when still reached."""
    origins = np.tile(np.eye(4), (2, 1, 1))
    origins[1, 0, 3] = 1.0
    tip = np.eye(4)
    tip[0, 3] = 1.0
    arm = fabrik.Arm(["a", "b"], [[0, 0, 1.0], [0, 0, 1.0]], origins, tip, [-9.0, -9.0], [9.0, 9.0])
    target = fabrik.forward(arm, [0.7, 1.1]).positions[-1]
    for method in fabrik.methods("arm"):
        sol = fabrik.solve(arm, target, method=method, initial=[7.0, -5.9], nearest=True, tol=0.0, restarts=20,
                           time_budget=60.0)
        err = float(np.linalg.norm(fabrik.forward(arm, sol.joint_angles).positions[-1] - target))
        assert err == sol.error and (not sol.reached or err == 0.0), method
