"""The named records the compiled entry points take, instead of long positional argument lists.

Each record is a ``collections.namedtuple``: numba compiles attribute access on it (``stop.tol``)
and caches the kernels that take it, and a kernel can still unpack it by position. The solvers
build the records; the kernels read them. Arrays inside a record follow the kernels' rule
(C-contiguous float64 unless said otherwise); output records hold arrays the kernel writes into.

Grouped by the models they serve; every record's fields are listed with their shapes and units in
the comment above it.

Numba types every argument of every call from Python; a tuple goes through its Python-level typing
field by field, which costs about a microsecond a record. ``_typeof_record`` (registered for every
record class below) keeps the type it found for each combination of field kinds (array dtype,
dimensions, layout, writeability, alignment; scalar type) and hands it back on the next call, which
saves about a third of that; a record holding anything else is typed by numba as usual.
"""

from collections import namedtuple

import numpy as np
from numba.core.typing.typeof import _typeof_tuple, typeof_impl

# --- shared -------------------------------------------------------------------------------------

#: When an iterative solve stops: ``tol`` (units of the model) on the effector's distance to its
#: target, ``orientation_tol`` (radians) on an oriented target's angle, ``max_iter`` (int) the
#: iteration cap. Status codes are ``fabrik.kernels.stopping``'s.
Stop = namedtuple("Stop", "tol orientation_tol max_iter")

# --- chains -------------------------------------------------------------------------------------



# --- arms ---------------------------------------------------------------------------------------



# --- trees (skeletons) --------------------------------------------------------------------------


# --- fast typing of the records at the Python boundary ------------------------------------------

_SCALAR_KINDS = (float, bool, np.float64, np.int64, np.bool_, type(None))
_KNOWN_TYPES: dict = {}


def _field_kind(value):
    """What decides a field's numba type, or None when its type must be worked out in full."""
    kind = type(value)
    if kind is np.ndarray:
        flags = value.flags
        return value.dtype.num, value.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable, flags.aligned
    if kind is int:
        return int, -2**63 <= value < 2**63  # (numba types larger ints unsigned)
    if kind in _SCALAR_KINDS:
        return kind
    return None


def _typeof_record(value, context):
    """numba's type of a record (``_typeof_tuple``'s), remembered per combination of field kinds."""
    key = [type(value), context.purpose]
    for field in value:
        kind = _field_kind(field)
        if kind is None:
            return _typeof_tuple(value, context)
        key.append(kind)
    key = tuple(key)
    found = _KNOWN_TYPES.get(key)
    if found is None:
        found = _KNOWN_TYPES[key] = _typeof_tuple(value, context)
    return found


for _record in [v for v in list(globals().values()) if isinstance(v, type) and issubclass(v, tuple)
                and hasattr(v, "_fields")]:
    typeof_impl.register(_record)(_typeof_record)
