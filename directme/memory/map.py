"""Metric map primitives: lifting instance masks to world points and bounded per-object voxel sets."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..geometry import Intrinsics, Pose, columns, mask_pixels, median
from .sections import MapConfig

_BITS = 21
_OFF = 1 << (_BITS - 1)
_MASK = (1 << _BITS) - 1
_PACK = np.array([1 << (2 * _BITS), 1 << _BITS, 1], dtype=np.int64)


def voxel_keys(points_w: np.ndarray, voxel_m: float) -> np.ndarray:
    """Pack the integer voxel coordinates of (N, 3) points into int64 keys (+-52 km at 5 cm)."""
    ijk = np.floor(points_w / voxel_m).astype(np.int64)
    ijk += _OFF
    np.minimum(np.maximum(ijk, 0, out=ijk), _MASK, out=ijk)  # np.clip, without its wrapper's cost
    return ijk @ _PACK  # the three fields do not overlap: the sum of the shifted values is their bitwise or


def coarse_keys(keys: np.ndarray, factor: int = 2) -> np.ndarray:
    """Keys of the voxels ``factor`` times larger that contain the given voxels (sorted, unique)."""
    i = ((keys >> (2 * _BITS)) & _MASK) // factor
    j = ((keys >> _BITS) & _MASK) // factor
    k = (keys & _MASK) // factor
    return sorted_unique((i << (2 * _BITS)) | (j << _BITS) | k)


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` of a 1-D array without NaN (sorted, each value once), by a sort and a comparison of
    neighbours: numpy's own costs several times more on the few hundred keys of an object."""
    s = np.sort(a)
    keep = np.empty(len(s), dtype=bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def frac_in(keys: np.ndarray, sorted_ref: np.ndarray) -> float:
    """Fraction of ``keys`` present in the sorted unique array ``sorted_ref``."""
    if len(keys) == 0 or len(sorted_ref) == 0:
        return 0.0
    i = np.searchsorted(sorted_ref, keys)
    i[i == len(sorted_ref)] = 0
    return int(np.count_nonzero(sorted_ref[i] == keys)) / len(keys)  # np.mean's value (an exact count over n)


@dataclass
class FrameLift:
    """One frame's strided pixel grid, ready to lift (each instance's pixels are lifted when it asks for them)."""

    depth: np.ndarray  # (h, w) strided depth, NaN where invalid
    valid: np.ndarray  # (h, w) bool
    stride: int
    ray_x: np.ndarray  # (w,) (u - cx) / fx of the strided columns: camera x per metre of depth
    ray_y: np.ndarray  # (h,) (v - cy) / fy of the strided rows
    T_world_cam: Pose
    eye_w: np.ndarray  # camera centre
    full: tuple  # (depth_m, intrinsics, T_world_cam, max_depth_m) for small masks at full resolution
    cfg: MapConfig  # the settings (``map.pixel_stride``, ``map.max_depth_m``, the inlier and back-side ones)

    @staticmethod
    def compute(depth_m: np.ndarray, K: Intrinsics, T_world_cam: Pose, cfg: MapConfig) -> "FrameLift":
        stride, max_depth_m = cfg.pixel_stride, cfg.max_depth_m
        d = depth_m[::stride, ::stride].astype(np.float64)
        valid = np.isfinite(d) & (d > 0) & (d <= max_depth_m)
        vs = np.arange(0, depth_m.shape[0], stride, dtype=np.float64)
        us = np.arange(0, depth_m.shape[1], stride, dtype=np.float64)
        return FrameLift(np.where(valid, d, np.nan), valid, stride, (us - K.cx) / K.fx, (vs - K.cy) / K.fy,
                         T_world_cam, T_world_cam.t.copy(), (depth_m, K, T_world_cam, max_depth_m), cfg)

    def points_at(self, rows: np.ndarray, cols: np.ndarray, z: np.ndarray) -> np.ndarray:
        """World points of the strided pixels at ``rows``, ``cols`` with depth ``z``."""
        cam = np.empty((len(z), 3))
        np.multiply(self.ray_x[cols], z, out=cam[:, 0])
        np.multiply(self.ray_y[rows], z, out=cam[:, 1])
        cam[:, 2] = z
        return cam @ self.T_world_cam.R.T + self.T_world_cam.t

    def dense_points(self, mask: np.ndarray) -> np.ndarray:
        """All valid pixels of a (small) mask, lifted at full resolution."""
        depth, K, T, max_d = self.full
        vs, us = mask_pixels(mask)
        z = depth[vs, us].astype(np.float64)
        ok = np.isfinite(z) & (z > 0) & (z <= max_d)
        vs, us, z = vs[ok], us[ok], z[ok]
        if len(z) >= self.cfg.inlier_min_px:
            keep = _inliers(z, self.cfg)
            vs, us, z = vs[keep], us[keep], z[keep]
        cam = columns((us - K.cx) / K.fx * z, (vs - K.cy) / K.fy * z, z)
        return cam @ T.R.T + T.t

    def instance_points(self, mask: np.ndarray, up_w: Optional[np.ndarray] = None) -> np.ndarray:
        """The instance's lifted points plus, with ``up_w``, a guess of its hidden back side.

        Seen face-on, an object's points are a flat shell and their centre is too near. When the shell is
        flat (depth along the horizontal view direction < ``map.back_flat_ratio`` of its width) and there is
        ample free space behind it (the ``map.back_ring_quantile`` of the depth in a ring around its
        silhouette is ``map.back_free_widths`` widths farther), the object is assumed as deep as it is wide:
        a picture on a wall stays flat, a free-standing plant gets its back.
        """
        c = self.cfg
        m = mask[:: self.stride, :: self.stride]
        rows, cols = np.nonzero(m & self.valid)  # row-major, as boolean indexing reads them
        if len(rows) < c.dense_below_px and self.stride > 1:
            return self.dense_points(mask)
        z = self.depth[rows, cols]
        keep = _inliers(z, c)
        rows, cols, z = rows[keep], cols[keep], z[keep]
        pts = self.points_at(rows, cols, z)
        if up_w is None or not len(pts):  # no valid depth under the mask: nothing to lift
            return pts
        view = np.add.reduce(pts, axis=0) / len(pts) - self.eye_w  # pts.mean(axis=0), without its overhead
        fwd = view - (view @ up_w) * up_w
        n = math.sqrt(fwd.dot(fwd))  # np.linalg.norm of a vector, as it computes it
        if n < 1e-6:
            return pts
        fwd /= n
        across = np.array([up_w[1] * fwd[2] - up_w[2] * fwd[1], up_w[2] * fwd[0] - up_w[0] * fwd[2],
                           up_w[0] * fwd[1] - up_w[1] * fwd[0]])  # up x forward
        a, f = pts @ across, pts @ fwd
        width, depth = float(a.max() - a.min()), float(f.max() - f.min())  # np.ptp
        if depth > c.back_flat_ratio * width or width < c.back_min_width_m:
            return pts
        grown = m.copy()
        for sh in range(1, c.back_ring_px + 1):
            grown[sh:] |= m[:-sh]
            grown[:-sh] |= m[sh:]
            grown[:, sh:] |= m[:, :-sh]
            grown[:, :-sh] |= m[:, sh:]
        ring = self.depth[grown & ~m & self.valid]
        if len(ring) < c.back_min_ring_px:
            return pts
        gap = float(np.percentile(ring, 100 * c.back_ring_quantile)) - median(z)
        if gap < c.back_free_widths * width:
            return pts
        return np.concatenate([pts, pts + (width - depth) * fwd])


def _inliers(z: np.ndarray, cfg: MapConfig) -> np.ndarray:
    """Depths near the median (``map.inlier_sigmas`` robust sigmas, at least ``map.inlier_min_rel`` of the
    depth): drops background pixels a loose mask picked up and wild depth noise, keeps the object's own depth
    range. (1.4826 x the median absolute deviation is the standard deviation of normal noise.)"""
    med = median(z)
    mad = median(np.abs(z - med))
    return np.abs(z - med) <= max(cfg.inlier_sigmas * 1.4826 * mad, cfg.inlier_min_rel * med)


def trimmed_box(points: np.ndarray, trim: float) -> tuple[np.ndarray, np.ndarray]:
    """(centre, size) of the box spanned by the [trim, 1 - trim] quantiles of each axis, in float64 (float32
    points are ranked as they are and only the two quantiles widened: the values of widening them all first)."""
    n = len(points)
    k = int(trim * (n - 1))
    if k == 0:
        lo, hi = points.min(axis=0), points.max(axis=0)
    else:
        part = np.partition(points, [k, n - 1 - k], axis=0)
        lo, hi = part[k], part[n - 1 - k]
    lo, hi = lo.astype(np.float64, copy=False), hi.astype(np.float64, copy=False)
    return (lo + hi) / 2.0, hi - lo


class VoxelSet:
    """An object's points as a capped set of voxels: sorted keys, one point per voxel (the first point
    that fell in it) and how many observations hit it (the best supported are kept)."""

    __slots__ = ("keys", "pts", "counts", "_coarse")

    def __init__(self, keys: Optional[np.ndarray] = None, pts: Optional[np.ndarray] = None,
                 counts: Optional[np.ndarray] = None) -> None:
        self.keys = np.empty(0, np.int64) if keys is None else keys
        self.pts = np.empty((0, 3), np.float32) if pts is None else pts
        self.counts = np.empty(0, np.int32) if counts is None else counts
        self._coarse: Optional[np.ndarray] = None

    def __len__(self) -> int:
        return len(self.keys)

    @staticmethod
    def from_points(points_w: np.ndarray, voxel_m: float) -> "VoxelSet":
        keys = voxel_keys(points_w, voxel_m)
        order = keys.argsort(kind="stable")  # np.unique(keys, return_index=True), as it computes it
        sk = keys[order]
        new = np.empty(len(sk), dtype=bool)
        new[:1] = True
        np.not_equal(sk[1:], sk[:-1], out=new[1:])
        first = order[new]
        return VoxelSet(sk[new], points_w[first].astype(np.float32), np.ones(len(first), np.int32))

    def add(self, other: "VoxelSet", cap: int) -> bool:
        """Union with ``other`` (capped at ``cap`` voxels); returns whether the set of voxels changed."""
        if len(self.keys) == 0:
            self.keys, self.pts, self.counts = other.keys, other.pts, other.counts.copy()
            self._trim(cap)
            self._coarse = None
            return True
        i = self.keys.searchsorted(other.keys)
        i[i == len(self.keys)] = 0
        found = self.keys[i] == other.keys
        self.counts[i[found]] += other.counts[found]
        if found.all():
            return False
        keys = np.concatenate([self.keys, other.keys[~found]])
        order = keys.argsort(kind="stable")
        self.keys = keys[order]
        self.pts = np.concatenate([self.pts, other.pts[~found]])[order]
        self.counts = np.concatenate([self.counts, other.counts[~found]])[order]
        self._trim(cap)
        self._coarse = None
        return True

    def transformed(self, M: np.ndarray, voxel_m: float) -> "VoxelSet":
        """The points moved by the 4x4 rigid ``M``, re-voxelised (hit counts of merged voxels add up)."""
        pts = self.points() @ M[:3, :3].T + M[:3, 3]
        keys = voxel_keys(pts, voxel_m)
        uk, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        counts = np.zeros(len(uk), np.int32)
        np.add.at(counts, inv.ravel(), self.counts)
        return VoxelSet(uk, pts[first].astype(np.float32), counts)

    def remove(self, idx: np.ndarray) -> None:
        """Drop the voxels at positions ``idx``."""
        keep = np.ones(len(self.keys), bool)
        keep[idx] = False
        self.keys, self.pts, self.counts = self.keys[keep], self.pts[keep], self.counts[keep]
        self._coarse = None

    def _trim(self, cap: int) -> None:
        if len(self.keys) > cap:
            keep = np.sort(np.argsort(-self.counts, kind="stable")[:cap])
            self.keys, self.pts, self.counts = self.keys[keep], self.pts[keep], self.counts[keep]

    def points(self) -> np.ndarray:
        return self.pts.astype(np.float64)

    def coarse(self) -> np.ndarray:
        if self._coarse is None:
            self._coarse = coarse_keys(self.keys)
        return self._coarse

    def overlap(self, other_coarse: np.ndarray) -> float:
        """Fraction of ``other``'s coarse voxels that this set also occupies."""
        return frac_in(other_coarse, self.coarse())
