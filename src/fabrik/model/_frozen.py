"""Read-only arrays for the immutable model types (``Chain``, ``Skeleton``, ``Motion``)."""

from __future__ import annotations

import numpy as np


def frozen(arr, dtype=np.float64) -> np.ndarray:
    """A read-only C-contiguous copy of ``arr`` as ``dtype``. Always a copy: the caller's own
    array keeps its flags and stays theirs to change."""
    out = np.array(arr, dtype=dtype, copy=True, order="C")
    out.setflags(write=False)
    return out


def freeze_fields(obj, fields) -> None:
    """Store each checked value of ``fields`` (``(name, value, dtype)``, ...) on the frozen
    dataclass ``obj`` as ``frozen(value, dtype)``, unless the field already holds a read-only
    C-contiguous array of that dtype (a model built from another model's arrays shares them)."""
    for name, value, dtype in fields:
        given = getattr(obj, name)
        if not (isinstance(given, np.ndarray) and given.dtype == dtype and given.flags.c_contiguous
                and not given.flags.writeable):
            object.__setattr__(obj, name, frozen(value, dtype))


def cached(obj, key: str, build):
    """``build()``, computed once per immutable model object and kept on it (under
    ``_fabrik_<key>``): the one way the library caches what it derives from a model (the prepared
    skeleton, a chain's limit tables). ``dataclasses.replace`` makes a new object without it."""
    attr = "_fabrik_" + key
    hit = obj.__dict__.get(attr)
    if hit is None:
        hit = build()
        object.__setattr__(obj, attr, hit)
    return hit
