"""2D <-> 3D: kernels work in 3D; 2D models are embedded in the z = 0 plane and cut back."""

import numpy as np


def to3d_points(points: np.ndarray) -> np.ndarray:
    """(n, 2) or (n, 3) -> C-contiguous (n, 3) float64 (z = 0 for 2D)."""
    if points.shape[1] == 3:
        return points
    out = np.zeros((points.shape[0], 3))
    out[:, :2] = points
    return out


def to3d_point(point: np.ndarray) -> np.ndarray:
    """(2,) or (3,) -> (3,) float64."""
    if point.shape[0] == 3:
        return point
    return np.array((point[0], point[1], 0.0))


def from3d(points: np.ndarray, dim: int) -> np.ndarray:
    """Cut (n, 3) kernel output back to the model's dimension."""
    return points if dim == 3 else np.ascontiguousarray(points[:, :2])
