"""Shared fixtures: the real motion-capture and URDF folders (skip cleanly when absent)."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run and machine, so that `make test` on a fresh
# clone gives the same verdict as CI and a red run always points at a change, never at a newly
# drawn example. `make explore` (FABRIK_EXPLORE=1) draws new random examples to hunt for bugs.
settings.register_profile("fixed", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile("explore" if os.environ.get("FABRIK_EXPLORE") else "fixed")

MOCAP_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mocap"
URDF_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "urdf"


@pytest.fixture(scope="session")
def mocap_files():
    """The real CMU BVH files in ../shared/data/mocap, or skip with the reason."""
    files = sorted(MOCAP_DIR.glob("*.bvh")) if MOCAP_DIR.is_dir() else []
    if not files:
        pytest.skip(f"real motion-capture files not found in {MOCAP_DIR} (they live beside the project, "
                    "in ../shared/data/mocap; a fresh clone alone does not have them)")
    return files


@pytest.fixture(scope="session")
def urdf_dir():
    """The robot models in ../shared/data/urdf (panda.urdf, ur5.urdf, human.urdf), or skip with the reason."""
    if not (URDF_DIR / "panda.urdf").is_file():
        pytest.skip(f"robot models not found in {URDF_DIR} (they live beside the project, in ../shared/data/urdf; "
                    "a fresh clone alone does not have them)")
    return URDF_DIR
