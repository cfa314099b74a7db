"""Scale of DA3's chunks: numpy-only pieces of putting each chunk's depth and poses in metres.

A multi-view DA3 chunk comes in its own frame and its own unknown scale. Two kinds of numbers
tie it to the stream: the overlap with the previous chunk (``overlap_depth_ratio``: precise, but a
chain of them drifts and never knows metres) and metric evidence from the chunk itself (the camera
centres' spread against given poses, ``centre_spread_scale``; a metric model's depth on keyframes,
``depth_ratio``; or 1 for a chunk DA3 already gives in metres). ``ScaleKeeper`` blends the two per
chunk (log-space, ``gain`` = weight of the evidence), so the chained scale cannot drift away from
metres and consecutive chunks stay consistent on their overlap.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..errors import BackendError, InvalidInputError
from .alignment import sim3_matrix, umeyama


def depth_ratio(num: list[np.ndarray], den: list[np.ndarray],
                valid: Optional[list[np.ndarray]] = None) -> Optional[float]:
    """Median per-pixel ratio num / den over pixels where both are positive (and ``valid``); None if none."""
    ratios = []
    for i, (a, b) in enumerate(zip(num, den)):
        m = (a > 0) & (b > 0) & np.isfinite(a) & np.isfinite(b)
        if valid is not None:
            m &= valid[i]
        ratios.append(a[m] / b[m])
    r = np.concatenate(ratios) if ratios else np.zeros(0)
    return float(np.median(r)) if len(r) else None


def overlap_depth_ratio(depth_prev: list[np.ndarray], depth_new: list[np.ndarray]) -> float:
    """Median per-pixel ratio previous / new depth on the overlap frames (the new chunk's scale)."""
    r = depth_ratio(depth_prev, depth_new)
    if r is None:
        raise BackendError("da3: no valid depth on the chunk overlap; cannot align the chunk scale")
    return r


def centre_spread_scale(c_pred: np.ndarray, c_given: np.ndarray, min_baseline_m: float) -> Optional[float]:
    """Scale s with c_given ~ s R c_pred + t from the RMS spreads of the camera centres (rotation-
    free, works from 2 frames); None when the given centres span less than ``min_baseline_m``."""
    cg, cp = np.asarray(c_given, np.float64).reshape(-1, 3), np.asarray(c_pred, np.float64).reshape(-1, 3)
    baseline = np.linalg.norm(cg[:, None] - cg[None], axis=-1).max() if len(cg) >= 2 else 0.0
    spread_p = float(np.sqrt(((cp - cp.mean(0)) ** 2).sum()))
    if baseline < min_baseline_m or spread_p <= 1e-9:
        return None
    return float(np.sqrt(((cg - cg.mean(0)) ** 2).sum()) / spread_p)


def per_frame_scale(relative: np.ndarray, given_m: np.ndarray, min_pixels: int = 50) -> float:
    """Scale taking one image's relative depth to the given metric depth: median ratio over pixels where
    both are positive (robust to holes and outliers of the sensor depth)."""
    r = depth_ratio([given_m], [relative])
    n = int(((given_m > 0) & (relative > 0)).sum())
    if r is None or n < min_pixels:
        raise InvalidInputError(f"da3mono-large: only {n} pixels with given depth (need {min_pixels}) to scale "
                                "the relative depth of a frame to metres")
    return r


class ScaleKeeper:
    """Per-chunk scale (chunk units -> stream units), reconciled across chunks.

    ``next(chained, evidence)``: ``chained`` is the scale that continues the previous chunk (None for
    the first), ``evidence`` the chunk's own chunk-units-to-metres factor (None when it has none).
    With both, log s = log chained + gain * (log evidence - log chained). Without any evidence yet the
    stream is in ``provisional`` units (``metric`` False); the first evidence is adopted whole."""

    def __init__(self, gain: float = 0.5, provisional: float = 1.0):
        if not 0.0 <= gain <= 1.0:
            raise InvalidInputError(f"da3 scale_gain must be in [0, 1], got {gain}")
        self.gain, self.provisional = gain, provisional
        self.metric = False

    def next(self, chained: Optional[float], evidence: Optional[float]) -> float:
        if evidence is not None and not (evidence > 0 and math.isfinite(evidence)):
            evidence = None
        if evidence is None:
            return self.provisional if chained is None else chained
        if chained is None or not self.metric:
            self.metric = True
            return evidence
        return float(math.exp(math.log(chained) + self.gain * (math.log(evidence) - math.log(chained))))


def fit_chunk_to_world(T_world_prev: list[np.ndarray], T_chunk_new: list[np.ndarray],
                       depth_prev: list[np.ndarray], depth_new: list[np.ndarray],
                       scale: Optional[float] = None) -> np.ndarray:
    """Sim(3) S (4x4, scale in the rotation block) with T_world_cam ~ S @ T_chunk_cam on the overlap;
    its scale is ``scale`` when given, else the overlap depth ratio."""
    s = overlap_depth_ratio(depth_prev, depth_new) if scale is None else scale
    M = sum(a[:3, :3] @ b[:3, :3].T for a, b in zip(T_world_prev, T_chunk_new))
    u, _, vt = np.linalg.svd(M)
    R = u @ np.diag([1, 1, np.linalg.det(u @ vt)]) @ vt
    c_prev = np.array([a[:3, 3] for a in T_world_prev])
    c_new = np.array([b[:3, 3] for b in T_chunk_new])
    spread = np.linalg.svd(c_new - c_new.mean(0), compute_uv=False) if len(c_new) >= 3 else np.zeros(3)
    if len(c_new) >= 3 and spread[1] > 1e-2 * max(spread[0], 1e-9) and spread[0] > 1e-3:
        s_u, R_u, _ = umeyama(c_new, c_prev, with_scale=True)
        if 0.5 < s_u / s < 2.0:  # centres agree with the depth scale: use their rotation
            R = R_u
    t = (c_prev - s * c_new @ R.T).mean(axis=0)
    return sim3_matrix(s, R, t)


def first_chunk_to_world(T_chunk_first: np.ndarray, scale: float) -> np.ndarray:
    """Sim(3) putting the first chunk's first camera at the world origin, lengths times ``scale``."""
    S = np.diag([scale, scale, scale, 1.0])
    return S @ np.linalg.inv(T_chunk_first)


def apply_sim3(S: np.ndarray, T_chunk_cam: np.ndarray) -> tuple[np.ndarray, float]:
    """Rigid pose S o T (scale moved out of the rotation) and the scale to apply to depth."""
    s = float(np.cbrt(np.linalg.det(S[:3, :3])))
    out = np.eye(4)
    out[:3, :3] = (S[:3, :3] / s) @ T_chunk_cam[:3, :3]
    out[:3, 3] = S[:3, :3] @ T_chunk_cam[:3, 3] + S[:3, 3]
    return out, s
