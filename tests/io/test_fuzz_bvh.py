"""The BVH fuzzing run as tests (``fabrik_experiments.fuzz_bvh``; ``benchmarks/fuzz_bvh.py`` runs
10,000 cases): mutated real takes read with a ``BVHError``, are refused by ``prepare_take`` with
a ``ValueError``, or read into finite arrays that ``save_bvh`` writes back to the same poses, the
same whatever the size of the blocks the file is read in; never another exception, a NaN or a
hang. Its runs found no such case (the Frame Time range and one-frame takes were found by
running every command on edge files: test_bvh_malformed, test_arm_study)."""

from __future__ import annotations

import numpy as np
import pytest

from fabrik_experiments.fuzz_bvh import DEFECTS, MUTATIONS, SMALL, fuzz, mutate, run_case, seed_files


def test_a_few_hundred_fuzz_cases_have_no_defect():
    report = fuzz(150, seed=4545)
    assert report["defects"] == []
    counts = report["counts"]
    assert counts.get("read", 0) > 15 and counts.get("bvh error", 0) > 60, counts
    assert sum(counts.values()) == 150


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_mutation_of_the_small_seed_is_read_or_refused_with_a_message(name, tmp_path):
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(2 if name == "deep_chain" else 15):  # a deep chain takes a second
        data = MUTATIONS[name](rng, SMALL.encode())
        outcome, detail = run_case(data, tmp_path, block=int(rng.integers(1, 40)))
        assert outcome not in DEFECTS, (name, data[:300], detail)
        assert detail


def test_the_seeds_read_as_they_are(tmp_path):
    for name, data in seed_files():
        assert run_case(data, tmp_path)[0] == "read", name


def test_cases_are_drawn_the_same_from_a_seed():
    seeds = seed_files()
    a = [mutate(np.random.default_rng(7), seeds) for _ in range(3)]
    b = [mutate(np.random.default_rng(7), seeds) for _ in range(3)]
    assert a == b
