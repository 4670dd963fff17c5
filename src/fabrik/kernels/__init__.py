"""Compiled (numba) kernels. Private: they trust their input, which the solvers check first.

Every kernel works on C-contiguous float64 arrays and never mutates its inputs.
"""

from fabrik.kernels._cache_guard import clear_stale_caches

clear_stale_caches()
