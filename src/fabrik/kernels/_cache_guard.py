"""Keep numba's on-disk cache in step with the kernels' sources.

numba (``@njit(cache=True)``) checks a cached function against the modification time of *its own*
source file only. A kernel compiled together with a helper from another file (``inline="always"``
helpers, or any njit callee: numba links callees into the caller's machine code) therefore keeps
loading the old helper after that other file changes, silently. This bit during development: a
constrained kernel kept an old cone projection and broke 90-degree limits until its cache was
deleted.

``clear_stale_caches`` hashes every source file whose functions numba caches and deletes the
package's cache files (``*.nbi``, ``*.nbc`` in their ``__pycache__`` folders) when the hash differs
from the one recorded at the last clear. It runs once when ``fabrik.kernels`` is imported and costs
a few milliseconds. Where the folders cannot be written (a read-only install, whose sources do not
change) it does nothing; numba then caches elsewhere.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: where the hash of the sources is recorded, relative to the package root
STAMP = Path("kernels") / "__pycache__" / "numba-sources.sha256"


def cached_sources(package_root: Path) -> list[Path]:
    """The package's source files with numba-cached functions (any that says ``cache=True``)."""
    return sorted(path for path in package_root.rglob("*.py")
                  if "__pycache__" not in path.parts and "cache=True" in path.read_text(encoding="utf-8"))


def clear_stale_caches(package_root: Path | None = None) -> bool:
    """Delete the numba cache files under ``package_root`` (default: the installed ``fabrik``) when
    the cached sources changed since the last call. Returns True when caches were cleared."""
    root = Path(__file__).resolve().parent.parent if package_root is None else Path(package_root)
    sources = cached_sources(root)
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    stamp = root / STAMP
    try:
        if stamp.read_text() == digest.hexdigest():
            return False
    except OSError:
        pass
    try:
        for folder in sorted({path.parent / "__pycache__" for path in sources}):
            for cached in [*folder.glob("*.nbi"), *folder.glob("*.nbc")]:
                cached.unlink(missing_ok=True)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        return False  # read-only: nothing of ours to keep in step
    return True


_announced = False
#: kernels already looked at (a solver that picks its kernel per model checks it on every call)
_checked: set = set()


def announce_compile(*kernels) -> None:
    """Say once per process, on stderr, that the kernels are compiling, when one of the numba
    dispatchers ``kernels`` has neither a compiled version in memory nor one cached on disk: the
    first solve on a new machine can take up to a minute, and should not look like a hang.
    Under ``fabrik._lazy.FIRST_USE`` (threads starting at once print it once)."""
    if _announced:
        return
    from fabrik._lazy import FIRST_USE

    with FIRST_USE:
        _announce(kernels)


def _announce(kernels) -> None:
    global _announced
    import os
    import sys

    if _announced:
        return
    for kernel in kernels:
        if kernel in _checked:
            continue
        _checked.add(kernel)
        cache = getattr(kernel, "_cache", None)
        index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
        if not getattr(kernel, "overloads", True) and (index is None or not os.path.exists(index)):
            _announced = True
            print("fabrik: compiling the numba kernels for this machine (first use only, up to a minute; cached "
                  "afterwards)", file=sys.stderr, flush=True)
            return
