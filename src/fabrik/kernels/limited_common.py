"""What the limited chain kernels share (``fabrik.kernels.fabrik_constrained``,
``fabrik.kernels.ccd_constrained``): status codes and the progress fraction of the no-progress test (those of
``fabrik.kernels.stopping``),
and the orientation error of a frame against a target frame."""

import numpy as np
from numba import njit

from fabrik.kernels.stopping import MAX_ITERATIONS, PROGRESS_FRACTION, REACHED, STALLED, UNREACHABLE

__all__ = ["MAX_ITERATIONS", "PROGRESS_FRACTION", "REACHED", "STALLED", "UNREACHABLE", "orientation_error"]


@njit(cache=True, error_model="numpy")
def orientation_error(F, T):
    """Rotation angle (radians) between two frames (3, 3), accurate near 0."""
    s = 0.0
    for r in range(3):
        for c in range(3):
            e = F[r, c] - T[r, c]
            s += e * e
    x = np.sqrt(s) / (2.0 * np.sqrt(2.0))
    if x > 1.0:
        x = 1.0
    return 2.0 * np.arcsin(x)
