"""Input checks at the API boundary.

Every public function converts its array arguments through these helpers, which return clean,
C-contiguous float64 arrays or raise ``ValueError`` naming the argument and the problem. Kernels
never see unchecked input.
"""

from __future__ import annotations

import math

import numpy as np


#: Coordinates (in any unit) must stay below this size: the kernels multiply up to four lengths
#: together (the rotation-based methods' cross products of squared distances), and 1e77 to the
#: fourth overflows to infinity (CCD returned NaN on a chain of 1e80-unit bones).
MAX_COORDINATE = 1e75


def real_numbers(value, name: str) -> np.ndarray:
    """``value`` as a float64 array, refusing complex, boolean, object and string values with a
    ValueError naming ``name`` (NumPy would drop an imaginary part with only a warning, and read
    True as 1)."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of numbers: {exc}") from None
    if raw.dtype.kind not in "iuf":
        kind = {"c": "complex", "b": "boolean", "O": "object (not numbers)", "U": "text", "S": "text"}.get(
            raw.dtype.kind, str(raw.dtype))
        raise ValueError(f"{name} must be real numbers (int or float), got {kind} values")
    return raw.astype(np.float64, copy=False)


def as_points(value, name: str, *, dim: int | None = None, min_count: int = 1) -> np.ndarray:
    """Return ``value`` as a fresh C-contiguous float64 array of shape (n, d), d in {2, 3}.

    Raises ValueError when the shape is wrong, there are fewer than ``min_count`` points, the
    dimension differs from ``dim`` (when given) or any coordinate is NaN or infinite.
    """
    arr = np.array(real_numbers(value, name), dtype=np.float64, copy=True, order="C")
    if arr.ndim != 2 or arr.shape[1] not in (2, 3):
        raise ValueError(f"{name} must have shape (n, 2) or (n, 3), got shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} must be {dim}D to match the model, got {arr.shape[1]}D points")
    if arr.shape[0] < min_count:
        raise ValueError(f"{name} needs at least {min_count} points, got {arr.shape[0]}")
    return check_coordinates(arr, name)


def check_coordinates(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` itself when every value is finite and below ``MAX_COORDINATE`` in size; else a
    ValueError naming ``name`` and the first bad index or the largest coordinate."""
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains a non-finite value (NaN or inf) at index {tuple(int(i) for i in bad)}")
    if arr.size and np.abs(arr).max() >= MAX_COORDINATE:
        raise ValueError(f"{name} has a coordinate of size {np.abs(arr).max():g}; coordinates must stay below "
                         f"{MAX_COORDINATE:g} (squared distances would overflow)")
    return arr




def as_point(value, name: str, dim: int) -> np.ndarray:
    """Return ``value`` as a C-contiguous float64 vector of shape (dim,), finite.

    A float64 ndarray of the right shape is returned as it is (not copied: solvers never write
    to their inputs), which keeps the single-solve hot path cheap.
    """
    if type(value) is np.ndarray and value.dtype.char == "d" and value.shape == (dim,) and value.strides == (8,):
        arr = value
    else:
        if isinstance(value, (list, tuple)) and any(v is None for v in value):
            raise ValueError(f"{name} contains None: {list(value)!r}")
        arr = np.ascontiguousarray(real_numbers(value, name))
        if arr.shape != (dim,):
            raise ValueError(f"{name} must have shape ({dim},) to match the model, got shape {arr.shape}")
    coords = arr.tolist()
    # one C call catches NaN (comparison false), inf and coordinates too large to square
    if not math.hypot(*coords) < MAX_COORDINATE:
        if not all(map(math.isfinite, coords)):
            if isinstance(value, (list, tuple)) and any(v is None for v in value):
                raise ValueError(f"{name} contains None: {list(value)!r}")
            raise ValueError(f"{name} contains a non-finite value (NaN or inf): {coords}")
        raise ValueError(f"{name} is {math.hypot(*coords):g} from the origin; coordinates must stay below "
                         f"{MAX_COORDINATE:g} (squared distances would overflow)")
    return arr


def check_tol(tol, name: str = "tol") -> float:
    """A finite, non-negative tolerance, as float."""
    if type(tol) is float and 0.0 <= tol < math.inf:
        return tol
    if isinstance(tol, (str, bytes, bool)):
        raise ValueError(f"{name} must be a number, got {tol!r}")
    try:
        value = float(tol)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {tol!r}") from None
    if not np.isfinite(value) or value < 0.0:
        raise ValueError(f"{name} must be finite and >= 0, got {tol!r}")
    return value


def check_max_iter(max_iter, name: str = "max_iter") -> int:
    """A non-negative whole number of iterations, as int."""
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {max_iter!r}")
    if max_iter < 0:
        raise ValueError(f"{name} must be >= 0, got {max_iter}")
    # the kernels count in int64; no solve runs 2**62 iterations, so a larger cap means "no cap"
    return min(int(max_iter), MAX_ITER_CAP)


#: The largest iteration cap the kernels are given (larger ones are clamped to it).
MAX_ITER_CAP = 2 ** 62


def check_positive(value, name: str) -> float:
    """A finite number > 0, as float."""
    if isinstance(value, (str, bytes, bool)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


class InsufficientMemoryError(ValueError):
    """A call whose sizes need more memory than the machine has available, refused before any
    work (``check_memory``): ``needed`` and ``available`` are in bytes."""

    def __init__(self, message: str, needed: int, available: int):
        super().__init__(message)
        self.needed, self.available = needed, available


def available_memory() -> int | None:
    """Bytes this process may still allocate, or None where the system does not say: the
    system's available memory (Linux: ``MemAvailable`` of /proc/meminfo; elsewhere the free
    physical pages of ``os.sysconf``), and no more than a cgroup v2 memory limit leaves
    (``memory.max`` less ``memory.current``)."""
    import os

    found = []
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, OSError, ValueError):
            pass
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as fh:
            limit = fh.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current", encoding="ascii") as fh:
                found.append(max(0, int(limit) - int(fh.read().strip())))
    except (OSError, ValueError):
        pass
    found = [f for f in found if f > 0]
    return min(found) if found else None


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2 ** 30:,.1f} GiB" if nbytes >= 2 ** 28 else f"{nbytes / 2 ** 20:,.1f} MiB"


def check_memory(nbytes: float, what: str, advice=None) -> None:
    """Raise ``InsufficientMemoryError`` naming ``what`` (the call and its sizes, e.g. "solve_batch
    of 1,000,000,000 targets on a chain of 10 joints") when it needs ``nbytes``, more than the
    memory available (``available_memory``); nothing where the system does not say. ``advice``:
    what to do instead, a function of the bytes available giving the words appended."""
    available = available_memory()
    if available is not None and nbytes > available:
        tail = f"; {advice(available)}" if advice is not None else ""
        raise InsufficientMemoryError(f"{what} needs about {_gib(nbytes)} of memory, and {_gib(available)} is "
                                      f"available{tail}", int(nbytes), available)
