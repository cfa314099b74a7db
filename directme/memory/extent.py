"""The measured extent of an object: its size from each clear view, combined over views (docs/memory.md,
"Measurements").

The voxel box (``ObjectStore.reshape``) serves association: it keeps every point, so stray ones - depth noise
along the view ray, a mask's band of background, points of other placements shifted by pose drift - make it
long. A size is measured per view instead, from points that noise touches less: each pixel of the mask's
silhouette and of a strided grid inside it takes the mean depth of the mask's core (the mask eroded by
``map.measure_erode_px``: its boundary band may show the background) in a ``map.measure_window_px`` window around
it - depth noise that is independent from pixel to pixel shrinks by about the window's side, a smooth surface
keeps its depth, and the silhouette keeps its place in the image. Views whose mask touches the image border
(a cut-off object) count only when no other view is clear. The extent is the weighted ``map.measure_quantile`` of
the views' sizes per world axis, a view weighing by the object's size in pixels (``ExtentLog.weights``): it grows
as views show more of the object, the many small views past an occluder do not outvote the few whole ones, and a
few views spoiled by a wrong association do not move it. A view is measured only when it can add something
(``measure``): each object keeps a bounded set of views spread over kinds of view (direction and distance), so the
cost per frame does not grow with the time an object is seen."""
from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from typing import Optional

import numpy as np

from ..geometry import Intrinsics, Pose, mask_box
from .map import _inliers, trimmed_box
from .sections import MapConfig


def erode(mask: np.ndarray, px: int) -> np.ndarray:
    """``mask`` eroded by ``px`` pixels (4-neighbourhood, the image outside counts as outside)."""
    m = mask
    for _ in range(px):
        p = np.zeros((m.shape[0] + 2, m.shape[1] + 2), bool)
        p[1:-1, 1:-1] = m
        m = m & p[:-2, 1:-1] & p[2:, 1:-1] & p[1:-1, :-2] & p[1:-1, 2:]
    return m.copy() if m is mask else m


def _window_mean(values: np.ndarray, valid: np.ndarray, k: int, vs: np.ndarray, us: np.ndarray) -> np.ndarray:
    """(n, 2): sum and count of the valid values in the k x k window around each pixel (vs, us), from one
    integral image of both, read at these pixels only."""
    r, (h, w) = k // 2, values.shape
    y0, y1 = np.maximum(vs - r, 0), np.minimum(vs + r + 1, h)
    x0, x1 = np.maximum(us - r, 0), np.minimum(us + r + 1, w)
    s = np.zeros((2, h + 1, w + 1), np.float32)  # sums of under 1e5 depths: float32 keeps 0.1 mm
    s[0, 1:, 1:] = np.where(valid, values, 0.0)
    s[1, 1:, 1:] = valid
    np.cumsum(s, 1, out=s)
    np.cumsum(s, 2, out=s)
    return (s[:, y1, x1] - s[:, y0, x1] - s[:, y1, x0] + s[:, y0, x0]).T


def mask_bounds(mask: np.ndarray, border_px: int) -> Optional[tuple[int, int, int, int, bool]]:
    """(first row, last row, first column, last column, clear) of the mask (``geometry.mask_box``), None when
    empty; ``clear``: it keeps ``border_px`` off the image border (not cut off)."""
    box = mask_box(mask)
    if box is None:
        return None
    h, w = mask.shape
    c0, r0, c1, r1 = box[0], box[1], box[2] - 1, box[3] - 1
    return r0, r1, c0, c1, r0 >= border_px and c0 >= border_px and r1 < h - border_px and c1 < w - border_px


def view_key(centre_w: np.ndarray, camera_w: np.ndarray, cfg: MapConfig) -> int:
    """The kind of view the camera at ``camera_w`` has of an object at ``centre_w``: its direction (each world
    component of the unit vector beyond +-``map.measure_dir_split``: 26 directions) and its distance band
    (bands ``map.measure_band_ratio`` wide)."""
    d = [float(c) - float(o) for c, o in zip(camera_w, centre_w)]
    dist = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    if dist <= 1e-6:
        return 0
    lim = cfg.measure_dir_split * dist
    code = sum(((x > lim) - (x < -lim)) * m for x, m in zip(d, (1, 3, 9)))
    band = min(max(math.floor(math.log(dist) / math.log(cfg.measure_band_ratio)) + 4, 0), 8)
    return code + 13 + 27 * band


def view_extent(mask: np.ndarray, depth_m: np.ndarray, K: Intrinsics, T_world_cam: Pose, cfg: MapConfig,
                bounds: Optional[tuple[int, int, int, int, bool]] = None) -> Optional[tuple[np.ndarray, bool, int]]:
    """(world-axis size (3,), clear, pixel count) of the object one view shows, or None when too little of it has
    depth; ``clear``: its mask keeps ``map.measure_border_px`` off the image border (not cut off); the pixel
    count: its mask's (the view's weight, ``ExtentLog.weights``); ``bounds``: the mask's (``mask_bounds``), when
    known."""
    bounds = bounds or mask_bounds(mask, cfg.measure_border_px)
    if bounds is None:
        return None
    (h, w), (r0, r1, c0, c1, clear) = mask.shape, bounds
    e, k = cfg.measure_erode_px, cfg.measure_window_px
    y0, y1, x0, x1 = max(r0 - 1, 0), min(r1 + 2, h), max(c0 - 1, 0), min(c1 + 2, w)
    sil = mask[y0:y1, x0:x1]
    d = depth_m[y0:y1, x0:x1]
    valid = sil & (d > 0) & (d <= cfg.max_depth_m)  # NaN and inf compare False
    inner = erode(sil, 1)
    core = valid & erode(inner, e - 1) if e > 0 else valid
    valid = core if core.any() else valid  # a mask too thin to erode keeps its own depths
    pick = sil & ~inner  # the silhouette, and a strided grid inside it, at the depth of the core near them
    pick[:: cfg.pixel_stride, :: cfg.pixel_stride] |= sil[:: cfg.pixel_stride, :: cfg.pixel_stride]
    vs, us = np.nonzero(pick)
    sn = _window_mean(d, valid, k, vs, us)
    ok = sn[:, 1] > 0
    if np.count_nonzero(ok) < cfg.min_points:
        return None
    vs, us, z = vs[ok], us[ok], sn[ok, 0] / sn[ok, 1]
    if len(z) >= cfg.inlier_min_px:
        keep = _inliers(z, cfg)
        vs, us, z = vs[keep], us[keep], z[keep]
    cam = np.stack([(us + x0 - K.cx) / K.fx * z, (vs + y0 - K.cy) / K.fy * z, z], axis=1)
    pts = cam @ T_world_cam.R.T + T_world_cam.t
    return trimmed_box(pts, cfg.measure_trim)[1], bool(clear), int(np.count_nonzero(sil))


def _quantile(views: list[tuple[float, float, float]], weights: list[float], q: float) -> list[float]:
    """Per axis, the weighted ``q`` quantile of the views' sizes: the smallest size whose view and the smaller ones
    hold at least ``q`` of the weight."""
    total, out = sum(weights), []
    for axis in zip(*views):
        acc = 0.0
        for value, w in sorted(zip(axis, weights)):
            acc += w
            if acc >= q * total:
                break
        out.append(value)
    return out


class ExtentLog:
    """One object's kept views and the extent measured after each change (the extent at a time reads only views
    up to it). At most ``map.measure_max_views`` views are kept, spread over kinds of view (``view_key``): a new
    one is measured only when it could join them (``wants``), so the cost stays bounded however long the object
    is seen."""

    __slots__ = ("t", "est", "views", "clear", "keys", "px", "tried_s")

    def __init__(self) -> None:
        self.t = array("d")  # time of each change of the kept views (a merged object's views: the merge)
        self.est = array("f")  # the measured extent after each change, 3 per change
        self.views: list[tuple[float, float, float]] = []  # world-axis size of each kept view, oldest first
        self.clear: list[bool] = []  # the view was clear of the image border
        self.keys: list[int] = []  # its kind of view (view_key; -1: unknown, from an older save)
        self.px: list[int] = []  # its mask's pixel count (0: unknown, from an older save)
        self.tried_s = -math.inf  # when a view was last measured (also one with too little depth; saved)

    def __len__(self) -> int:
        return len(self.t)

    def wants(self, key: int, clear: bool, cfg: MapConfig) -> bool:
        """Whether a view of kind ``key`` could join the kept views: room is left, it is the first clear one, or
        its kind has fewer than the most frequent kind less one (a cut-off view never joins clear ones)."""
        if self.clear and any(self.clear) and not clear:
            return False
        if len(self.views) < cfg.measure_max_views or (clear and not all(self.clear)):
            return True
        n = self.keys.count(key)
        return n + 1 < max(self.keys.count(k) for k in set(self.keys))

    def _join(self, size: np.ndarray, clear: bool, key: int, px: int, cfg: MapConfig) -> bool:
        if not self.wants(key, clear, cfg):
            return False
        if clear and not all(self.clear):  # cut-off views count only while no view is clear
            self.views, self.clear, self.keys, self.px = [], [], [], []
        while len(self.views) >= cfg.measure_max_views:  # the oldest view of the most frequent kind makes room
            counts = {k: self.keys.count(k) for k in self.keys}
            i = self.keys.index(max(counts, key=counts.__getitem__))
            del self.views[i], self.clear[i], self.keys[i], self.px[i]
        self.views.append(tuple(float(x) for x in size))
        self.clear.append(bool(clear))
        self.keys.append(int(key))
        self.px.append(int(px))
        return True

    def weights(self, cfg: MapConfig) -> list[float]:
        """Each kept view's weight in the extent: its mask's pixel count to the ``map.measure_px_power`` (0.5:
        the object's size in pixels, to which a mask's boundary error of a pixel or two is the smaller share);
        all alike while a view's count is unknown (kept from an older save)."""
        if not all(self.px):
            return [1.0] * len(self.px)
        return [float(n) ** cfg.measure_px_power for n in self.px]

    def add(self, t_s: float, sizes: np.ndarray, clear: np.ndarray, keys: np.ndarray, px: np.ndarray,
            cfg: MapConfig) -> None:
        """Views at ``t_s``: (n, 3) sizes, their clear flags, kinds and mask pixel counts; those that join change
        the extent."""
        joined = [self._join(s, bool(c), int(k), int(n), cfg) for s, c, k, n in
                  zip(np.asarray(sizes, np.float64).reshape(-1, 3), np.ravel(clear), np.ravel(keys), np.ravel(px))]
        if any(joined):
            self.t.append(t_s)
            self.est.extend(_quantile(self.views, self.weights(cfg), cfg.measure_quantile))

    def at(self, t_s: float) -> Optional[np.ndarray]:
        """The measured extent (3,) from the views up to ``t_s`` (None before any)."""
        k = bisect_right(self.t, t_s)
        return None if k == 0 else np.asarray(self.est[3 * k - 3: 3 * k], dtype=np.float64)

    def kept(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The kept views: (n, 3) sizes, clear flags, kinds, mask pixel counts."""
        return (np.asarray(self.views, np.float64).reshape(-1, 3), np.asarray(self.clear, bool),
                np.asarray(self.keys, np.int64), np.asarray(self.px, np.int64))

    def columns(self) -> dict[str, np.ndarray]:
        return {"size_t": np.array(self.t, np.float64), "size_est": np.array(self.est, np.float32).reshape(-1, 3),
                "size_v": np.asarray(self.views, np.float64).reshape(-1, 3),  # as held: appending after a load matches
                "size_clear": np.asarray(self.clear, np.int8), "size_key": np.asarray(self.keys, np.int16),
                "size_px": np.asarray(self.px, np.int32),
                "size_tried": np.array([self.tried_s] if math.isfinite(self.tried_s) else [], np.float64)}

    @staticmethod
    def from_columns(c: dict[str, np.ndarray]) -> "ExtentLog":
        """Saves from before the measured extent have none; those from before the kept views keep every view
        (without a kind), and the clear ones only where any is; those from before the pixel counts keep their
        views without one (they weigh alike)."""
        log = ExtentLog()
        if "size_t" in c:
            log.t = array("d", np.asarray(c["size_t"], np.float64).tolist())
            log.est = array("f", np.asarray(c["size_est"], np.float32).ravel().tolist())
            clear = np.asarray(c["size_clear"], bool)
            keys = np.asarray(c["size_key"], np.int64) if "size_key" in c else np.full(len(clear), -1)
            px = np.asarray(c["size_px"], np.int64) if "size_px" in c else np.zeros(len(clear), np.int64)
            keep = clear if clear.any() else np.ones(len(clear), bool)
            log.views = [tuple(map(float, v)) for v in np.asarray(c["size_v"], np.float64).reshape(-1, 3)[keep]]
            log.clear, log.keys, log.px = clear[keep].tolist(), keys[keep].tolist(), px[keep].tolist()
            tried = np.asarray(c.get("size_tried", ()), np.float64)  # saves from before it: the last change
            log.tried_s = float(tried[0]) if len(tried) else log.t[-1] if len(log.t) else -math.inf
        return log


def measure(log: ExtentLog, t_s: float, mask: np.ndarray, depth_m: np.ndarray, K: Intrinsics, T_world_cam: Pose,
            centre_w: np.ndarray, cfg: MapConfig) -> None:
    """This view's size added to ``log`` when it can add something: ``map.measure_interval_s`` after its last
    change for a new kind of view, ``map.measure_repeat_s`` for a kind it holds, and only a view that would join
    the kept views (``ExtentLog.wants``)."""
    if t_s - log.tried_s < cfg.measure_interval_s:
        return
    key = view_key(centre_w, T_world_cam.t, cfg)
    if t_s - log.tried_s < cfg.measure_repeat_s and key in log.keys:
        return
    bounds = mask_bounds(mask, cfg.measure_border_px)
    if bounds is None or not log.wants(key, bounds[4], cfg):
        return
    log.tried_s = t_s
    got = view_extent(mask, depth_m, K, T_world_cam, cfg, bounds)
    if got is not None:
        log.add(t_s, got[0][None], np.array([got[1]]), np.array([key]), np.array([got[2]]), cfg)
