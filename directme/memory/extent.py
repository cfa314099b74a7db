"""The measured extent of an object: its size from each clear view, combined over views (docs/memory.md,
"Measurements").

The voxel box (``ObjectStore.reshape``) serves association: it keeps every point, so stray ones - depth noise
along the view ray, a mask's band of background, points of other placements shifted by pose drift - make it
long. A size is measured per view instead, from points that noise touches less: each pixel of the mask's
silhouette and of a strided grid inside it takes the mean depth of the mask's core (the mask eroded by
``map.measure_erode_px``: its boundary band may show the background) in a ``map.measure_window_px`` window around
it - depth noise that is independent from pixel to pixel shrinks by about the window's side, a smooth surface
keeps its depth, and the silhouette keeps its place in the image. Views whose mask touches the image border
(a cut-off object) count only when no other view is clear. The extent is the ``map.measure_quantile`` of the views' sizes per world axis: it grows as views show
more of the object, and a few views spoiled by a wrong association or an occluder do not move it."""
from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Optional

import numpy as np

from ..geometry import Intrinsics, Pose
from .map import _inliers, trimmed_box
from .sections import MapConfig


def erode(mask: np.ndarray, px: int) -> np.ndarray:
    """``mask`` eroded by ``px`` pixels (4-neighbourhood, the image outside counts as outside)."""
    m = mask.copy()
    for _ in range(px):
        inner = m.copy()
        inner[1:] &= m[:-1]
        inner[:-1] &= m[1:]
        inner[:, 1:] &= m[:, :-1]
        inner[:, :-1] &= m[:, 1:]
        inner[0], inner[-1], inner[:, 0], inner[:, -1] = False, False, False, False
        m = inner
    return m


def _box_mean(values: np.ndarray, valid: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(sum, count) of the valid values in the k x k window around each pixel (integral images)."""
    r = k // 2

    def window_sum(a: np.ndarray) -> np.ndarray:
        s = np.zeros((a.shape[0] + 1, a.shape[1] + 1))
        s[1:, 1:] = a.cumsum(0).cumsum(1)
        h, w = a.shape
        y0, y1 = np.clip(np.arange(h) - r, 0, h), np.clip(np.arange(h) + r + 1, 0, h)
        x0, x1 = np.clip(np.arange(w) - r, 0, w), np.clip(np.arange(w) + r + 1, 0, w)
        return s[y1][:, x1] - s[y0][:, x1] - s[y1][:, x0] + s[y0][:, x0]

    return window_sum(np.where(valid, values, 0.0)), window_sum(valid.astype(np.float64))


def view_extent(mask: np.ndarray, depth_m: np.ndarray, K: Intrinsics, T_world_cam: Pose,
                cfg: MapConfig) -> Optional[tuple[np.ndarray, bool]]:
    """(world-axis size (3,), clear) of the object one view shows, or None when too little of it has depth;
    ``clear``: its mask keeps ``map.measure_border_px`` off the image border (not cut off)."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if not len(rows):
        return None
    h, w = mask.shape
    b = cfg.measure_border_px
    clear = rows[0] >= b and cols[0] >= b and rows[-1] < h - b and cols[-1] < w - b
    e, k = cfg.measure_erode_px, cfg.measure_window_px
    y0, y1, x0, x1 = max(rows[0] - 1, 0), min(rows[-1] + 2, h), max(cols[0] - 1, 0), min(cols[-1] + 2, w)
    sil = mask[y0:y1, x0:x1]
    d = depth_m[y0:y1, x0:x1].astype(np.float64)
    valid = sil & np.isfinite(d) & (d > 0) & (d <= cfg.max_depth_m)
    core = valid & erode(sil, e)
    valid = core if core.any() else valid  # a mask too thin to erode keeps its own depths
    s, n = _box_mean(d, valid, k)
    edge = sil & ~erode(sil, 1)  # the silhouette, and a strided grid inside it, at the depth of the core near them
    grid = np.zeros_like(sil)
    grid[:: cfg.pixel_stride, :: cfg.pixel_stride] = True
    pick = (edge | (grid & sil)) & (n > 0)
    vs, us = np.nonzero(pick)
    if len(vs) < cfg.min_points:
        return None
    z = s[vs, us] / n[vs, us]
    if len(z) >= cfg.inlier_min_px:
        keep = _inliers(z, cfg)
        vs, us, z = vs[keep], us[keep], z[keep]
    cam = np.stack([(us + x0 - K.cx) / K.fx * z, (vs + y0 - K.cy) / K.fy * z, z], axis=1)
    pts = cam @ T_world_cam.R.T + T_world_cam.t
    return trimmed_box(pts, cfg.measure_trim)[1], bool(clear)


class ExtentLog:
    """One object's views' sizes and the extent measured after each (append-only: the extent at a time reads
    only views up to it)."""

    __slots__ = ("t", "views", "clear", "est")

    def __init__(self) -> None:
        self.t = array("d")  # time of each view (a merged object's views: the time of the merge)
        self.views = array("f")  # world-axis size of each view, 3 per view
        self.clear = array("b")  # the view was clear of the image border
        self.est = array("f")  # the measured extent after each view, 3 per view

    def __len__(self) -> int:
        return len(self.t)

    def add(self, t_s: float, sizes: np.ndarray, clear: np.ndarray, quantile: float) -> None:
        """Views at ``t_s``: (n, 3) sizes and their clear flags; the extent is measured anew after them."""
        for size, c in zip(np.asarray(sizes, np.float32).reshape(-1, 3), np.asarray(clear, bool).ravel()):
            self.t.append(t_s)
            self.views.extend(size.tolist())
            self.clear.append(int(c))
        v = np.frombuffer(self.views, np.float32).reshape(-1, 3).astype(np.float64)
        c = np.frombuffer(self.clear, np.int8).astype(bool)
        est = np.quantile(v[c] if c.any() else v, quantile, axis=0)
        for _ in range(len(self.t) - len(self.est) // 3):
            self.est.extend(est.astype(np.float32).tolist())

    def at(self, t_s: float) -> Optional[np.ndarray]:
        """The measured extent (3,) from the views up to ``t_s`` (None before any)."""
        k = bisect_right(self.t, t_s)
        return None if k == 0 else np.asarray(self.est[3 * k - 3: 3 * k], dtype=np.float64)

    def all_views(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.frombuffer(self.views, np.float32).reshape(-1, 3).copy(),
                np.frombuffer(self.clear, np.int8).astype(bool))

    def columns(self) -> dict[str, np.ndarray]:
        return {"size_t": np.array(self.t, np.float64),
                "size_v": np.array(self.views, np.float32).reshape(-1, 3),
                "size_clear": np.array(self.clear, np.int8),
                "size_est": np.array(self.est, np.float32).reshape(-1, 3)}

    @staticmethod
    def from_columns(c: dict[str, np.ndarray]) -> "ExtentLog":
        log = ExtentLog()
        if "size_t" in c:  # saves from before the measured extent have none
            log.t = array("d", np.asarray(c["size_t"], np.float64).tolist())
            log.views = array("f", np.asarray(c["size_v"], np.float32).ravel().tolist())
            log.clear = array("b", np.asarray(c["size_clear"], np.int8).tolist())
            log.est = array("f", np.asarray(c["size_est"], np.float32).ravel().tolist())
        return log
