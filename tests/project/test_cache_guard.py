"""The numba cache guard: cache files go when a cached source changes, and only then."""

from pathlib import Path

from fabrik.kernels._cache_guard import STAMP, clear_stale_caches


def make_package(root: Path) -> Path:
    (root / "kernels" / "__pycache__").mkdir(parents=True)
    (root / "model" / "__pycache__").mkdir(parents=True)
    (root / "kernels" / "vec.py").write_text("x = 1  # @njit(cache=True)\n")
    (root / "model" / "motion.py").write_text("y = 2  # @njit(cache=True)\n")
    return root


def cache_files(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*.nb[ic]"))


def test_caches_are_cleared_when_a_source_changes_and_kept_otherwise(tmp_path):
    root = make_package(tmp_path / "fabrik")
    (root / "kernels" / "__pycache__" / "vec.f-1.py311.nbi").write_text("")
    (root / "model" / "__pycache__" / "motion.g-2.py311.1.nbc").write_text("")
    assert clear_stale_caches(root)  # no record yet: cleared, and the hash recorded
    assert cache_files(root) == [] and (root / STAMP).exists()

    (root / "kernels" / "__pycache__" / "vec.f-1.py311.nbi").write_text("")
    assert not clear_stale_caches(root)  # sources unchanged: the new cache stays
    assert cache_files(root) == ["vec.f-1.py311.nbi"]

    (root / "kernels" / "vec.py").write_text("x = 3  # @njit(cache=True)\n")  # a helper other kernels inline
    assert clear_stale_caches(root)
    assert cache_files(root) == []

    (root / "model" / "__pycache__" / "motion.g-2.py311.1.nbc").write_text("")
    (root / "model" / "motion.py").write_text("y = 4  # @njit(cache=True)\n")
    assert clear_stale_caches(root)
    assert cache_files(root) == []


def test_the_installed_package_is_in_step():
    import fabrik.kernels  # noqa: F401  (runs the guard)

    assert not clear_stale_caches()
