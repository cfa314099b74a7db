"""Point-set alignment (Umeyama) for chunk stitching and trajectory evaluation (numpy only)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..errors import InvalidInputError


def umeyama(src: np.ndarray, dst: np.ndarray, with_scale: bool = True,
            weights: Optional[np.ndarray] = None) -> tuple[float, np.ndarray, np.ndarray]:
    """Least-squares s, R, t with dst ~ s * R @ src + t for (N, 3) point sets (Umeyama 1991)."""
    a, b = np.asarray(src, np.float64).reshape(-1, 3), np.asarray(dst, np.float64).reshape(-1, 3)
    if a.shape != b.shape or len(a) < 3:
        raise InvalidInputError(f"umeyama needs two (N>=3, 3) point sets of equal size, got {a.shape} {b.shape}")
    w = np.ones(len(a)) if weights is None else np.asarray(weights, np.float64).reshape(-1)
    w = w / w.sum()
    mu_a, mu_b = w @ a, w @ b
    da, db = a - mu_a, b - mu_b
    cov = (db * w[:, None]).T @ da
    u, d, vt = np.linalg.svd(cov)
    s_fix = np.eye(3)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        s_fix[2, 2] = -1
    R = u @ s_fix @ vt
    var_a = float(w @ np.sum(da * da, axis=1))
    scale = float(np.trace(np.diag(d) @ s_fix) / var_a) if with_scale and var_a > 1e-12 else 1.0
    t = mu_b - scale * R @ mu_a
    return scale, R, t


def sim3_matrix(scale: float, R: np.ndarray, t: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = scale * R
    m[:3, 3] = t
    return m


def ate_rmse(est_positions: np.ndarray, gt_positions: np.ndarray, with_scale: bool = False) -> float:
    """Absolute trajectory error (RMSE, metres) after rigid (or similarity) alignment of est to gt."""
    s, R, t = umeyama(est_positions, gt_positions, with_scale=with_scale)
    aligned = s * np.asarray(est_positions) @ R.T + t
    return float(np.sqrt(np.mean(np.sum((aligned - gt_positions) ** 2, axis=1))))
