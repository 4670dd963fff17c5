"""The compiled entry of a plain chain FABRIK solve (``fabrik.solve``), with its input checks.

``fabrik_chain_checked`` solves as ``fabrik.kernels.fabrik_chain.fabrik_chain_into`` does (the
same bits) after checks that cost a few comparisons here rather than Python calls: the target's
shape (3,) and coordinates (finite, each below ``CHECK_BELOW``), the start pose's shape (n, 3) and
coordinates (finite, below ``MAX_COORDINATE``: ``fabrik._validation.check_coordinates``' rule) and
a given root's as the target's. It writes the answer into an array the caller allocates (``p``):
numba boxes a returned array by unpickling its dtype on every call, which cost more than the
checks. An input it does not take is left to Python: nothing is solved and the status code is
negative (``CHECK_TARGET``, ``CHECK_INITIAL``, ``CHECK_ROOT``); ``fabrik.solve`` then raises the
error naming the problem, or solves on the checked path (a coordinate between ``CHECK_BELOW`` and
``MAX_COORDINATE``).

``prepare`` compiles the entry for ``SIGNATURE`` only and switches its compiling off, so that
other argument types (another dtype, a read-only or non-contiguous array) raise numba's TypeError
instead of compiling a new version: the dtype, layout and writeability check, for free.
"""

import numpy as np
from numba import njit

from fabrik._validation import MAX_COORDINATE
from fabrik.kernels.fabrik_chain import fabrik_chain_into

#: Status codes below 0: an input the entry did not take (nothing solved).
CHECK_TARGET = -1
CHECK_INITIAL = -2
CHECK_ROOT = -3

#: A target or root taken by the entry has every coordinate below this in size, so that its
#: distance from the origin is below ``MAX_COORDINATE`` (``fabrik._validation.as_point``'s rule)
#: whatever the rounding; a point beyond it is checked by Python.
CHECK_BELOW = MAX_COORDINATE / 2.0

#: The one signature the entry is compiled for: (p, initial, bone_lengths, target, root, tol, max_iter, turn).
SIGNATURE = "Tuple((int64, float64, int64))(float64[:, ::1], float64[:, ::1], float64[::1], float64[::1], " \
            "float64[::1], float64, int64, boolean)"

#: ``root`` of shape (0,): the root stays where the start pose has it, ``initial[0]``.
NO_ROOT = np.empty(0)


@njit(cache=True, error_model="numpy")
def _point_ok(v):
    return v.shape[0] == 3 and abs(v[0]) < CHECK_BELOW and abs(v[1]) < CHECK_BELOW and abs(v[2]) < CHECK_BELOW


@njit(cache=True, error_model="numpy")
def fabrik_chain_checked(p, initial, bone_lengths, target, root, tol, max_iter, turn):
    """Solve one chain into ``p``. Returns (iterations, error, status_code).

    p: (n, 3) output (written whole); initial: (n, 3) start pose (never written); bone_lengths:
    (n - 1,); target: (3,); root: (3,), or ``NO_ROOT`` (shape (0,)) for ``initial[0]``; tol >= 0;
    max_iter >= 0 (both checked by the caller); turn: ``fabrik_chain_run``'s. A negative status code names an input it did not
    take (module docstring); then nothing is solved and ``p`` is not written.
    """
    n = bone_lengths.shape[0] + 1
    if not _point_ok(target):
        return 0, 0.0, CHECK_TARGET
    if initial.shape[0] != n or initial.shape[1] != 3 or p.shape[0] != n or p.shape[1] != 3:
        return 0, 0.0, CHECK_INITIAL
    for i in range(n):
        for k in range(3):
            if not abs(initial[i, k]) < MAX_COORDINATE:  # (a NaN fails too)
                return 0, 0.0, CHECK_INITIAL
    if root.shape[0] == 0:
        start_root = initial[0]
    elif _point_ok(root):
        start_root = root
    else:
        return 0, 0.0, CHECK_ROOT
    p[:, :] = initial
    return fabrik_chain_into(p, bone_lengths, target, start_root, tol, max_iter, turn)


_prepared = False


def prepare():
    """Compile (or load from numba's cache) ``fabrik_chain_checked`` for ``SIGNATURE`` and switch
    its compiling off (the module docstring says why). Once per process, under
    ``fabrik._lazy.FIRST_USE``: a second thread asking while the first compiles would otherwise
    find compiling switched off; returns the kernel."""
    global _prepared
    if not _prepared:
        from fabrik._lazy import FIRST_USE
        from fabrik.kernels._cache_guard import announce_compile

        with FIRST_USE:
            if not _prepared:
                announce_compile(fabrik_chain_checked)
                fabrik_chain_checked.compile(SIGNATURE)
                fabrik_chain_checked.disable_compile()
                _prepared = True
    return fabrik_chain_checked
