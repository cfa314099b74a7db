"""The room outline log: at every frame, where the camera saw the room's walls end, so that a place's floor area
comes from what was seen of the room rather than from where the wearer walked.

Each frame's depth is cut into ``outline.bins`` slices of bearing across the view (about the vertical, from the
camera's forward direction); in each slice the points from ``outline.below_cam_m`` under the camera upwards (the
upper walls, above most furniture; the ceiling lies inside the room) give the slice's far edge: the median of the
points beyond ``1 - outline.band`` of the slice's ``outline.far_quantile`` ground distance (a wall is a mode at the
far end; one noisy pixel is not). The far edge's horizontal offset from the camera is logged (float16, NaN for a
slice with too few points), one row per ego frame, so a view at time t reads the rows of its frames only. What a
slice sees through a door (the next room's wall) is logged too: the area's robust fit (answerers/measure.py)
trims it. Docs: docs/memory.md, "Measurements".
"""
from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Mapping, Optional

import numpy as np

from .._atomic import StateError, column
from .buffers import GrowArray, LockedLazy
from .component import FrameStep, State

if TYPE_CHECKING:
    from .config import MemoryConfig
    from .sections import OutlineConfig


def far_edges(depth_m: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray, up_world: np.ndarray,
              cfg: "OutlineConfig") -> np.ndarray:
    """(bins, 3) horizontal offsets (world, from the camera) of the far edge of each bearing slice of one frame's
    depth (``K``: fx, fy, cx, cy); NaN rows for slices with fewer than ``cfg.min_points`` points."""
    s = cfg.pixel_stride
    d = np.asarray(depth_m[s // 2::s, s // 2::s], dtype=np.float64)
    return far_edges_many(d[None], depth_m.shape[1], np.asarray(K, dtype=np.float64)[None, :4],
                          np.asarray(T_world_cam, dtype=np.float64)[None, :3, :3],
                          np.asarray(up_world, dtype=np.float64)[None], cfg)[0]


def far_edges_many(d: np.ndarray, width: int, K: np.ndarray, R: np.ndarray, up: np.ndarray,
                   cfg: "OutlineConfig") -> np.ndarray:
    """``far_edges`` of F frames at once (one pass of array operations for all): ``d`` (F, h, w) their depths at
    every ``cfg.pixel_stride``-th pixel from ``pixel_stride // 2`` of images ``width`` wide, ``K`` (F, 4) fx, fy,
    cx, cy, ``R`` (F, 3, 3) camera-to-world rotations, ``up`` (F, 3) the vertical; (F, bins, 3)."""
    F, bins, s = len(d), cfg.bins, cfg.pixel_stride
    out = np.full((F * bins, 3), np.nan)
    fwd = R[:, :, 2] - np.sum(R[:, :, 2] * up, axis=1)[:, None] * up  # the view direction along the floor
    norm = np.sqrt(np.sum(fwd * fwd, axis=1))
    level = norm >= 1e-6  # not looking straight up or down
    fwd /= np.where(level, norm, 1.0)[:, None]
    left = np.cross(up, fwd)
    half = np.array([math.atan2(max(k[2], width - k[2]), k[0]) for k in K.tolist()])  # half the view's width
    ok = np.isfinite(d) & (d >= cfg.min_depth_m) & (d <= cfg.max_depth_m) & level[:, None, None]
    z = np.where(ok, d, 0.0)
    f3 = (slice(None), None, None)  # a per-frame value against each frame's (h, w) samples
    x = (np.arange(d.shape[2]) * s + s // 2 - K[f3 + (2,)]) / K[f3 + (0,)] * z
    y = (np.arange(d.shape[1])[:, None] * s + s // 2 - K[f3 + (3,)]) / K[f3 + (1,)] * z
    off = [x * R[f3 + (j, 0)] + y * R[f3 + (j, 1)] + z * R[f3 + (j, 2)] for j in range(3)]  # world, from the camera
    h = off[0] * up[f3 + (0,)] + off[1] * up[f3 + (1,)] + off[2] * up[f3 + (2,)]
    idx = np.flatnonzero(ok & (h >= -cfg.below_cam_m))  # the upper walls
    f = idx // (d.shape[1] * d.shape[2])
    hk = h.ravel()[idx]
    flat = [off[j].ravel()[idx] - hk * up[f, j] for j in range(3)]  # along the floor
    bearing = np.arctan2(flat[0] * left[f, 0] + flat[1] * left[f, 1] + flat[2] * left[f, 2],
                         flat[0] * fwd[f, 0] + flat[1] * fwd[f, 1] + flat[2] * fwd[f, 2])
    b = np.clip(((bearing + half[f]) / (2 * half[f]) * bins).astype(np.int64), 0, bins - 1)
    r = np.sqrt(flat[0] * flat[0] + flat[1] * flat[1] + flat[2] * flat[2])
    slot = f * bins + b
    order = np.argsort(r)  # slot by slot, each by distance: r sorted, then stably by slot (a small-int radix sort),
    small = np.int16 if F * bins <= np.iinfo(np.int16).max else np.int64  # so a frame's order is the one it gets alone
    order = order[np.argsort(slot[order].astype(small), kind="stable")]
    r_sorted = r[order]
    starts = np.searchsorted(slot[order], np.arange(F * bins + 1))
    lo, hi = starts[:-1], starts[1:]
    full = np.flatnonzero(hi - lo >= max(cfg.min_points, 1))
    if not len(full):
        return out.reshape(F, bins, 3)
    lo, hi = lo[full], hi[full]
    far = r_sorted[lo + (cfg.far_quantile * (hi - lo - 1)).astype(np.int64)]
    # each slot's far points: those beyond (1 - band) of its far distance
    beyond = np.full(F * bins, np.inf)
    beyond[full] = (1.0 - cfg.band) * far
    far_pt = r >= beyond[slot]
    first = lo + np.bincount(slot[~far_pt], minlength=F * bins)[full]
    heading = np.stack([np.bincount(slot[far_pt], flat[j][far_pt], F * bins)[full] for j in range(3)], axis=1)
    norm = np.sqrt(np.sum(heading * heading, axis=1))[:, None]  # the far points' summed offsets: their mean bearing
    out[full] = heading / np.maximum(norm, 1e-12) * r_sorted[(first + hi) // 2][:, None]
    return out.reshape(F, bins, 3)


class RoomOutline(LockedLazy):
    """The outline component: per ego frame, the far edge of each bearing slice of its depth (``far_edges``).

    A frame's depth samples wait (``pending``) until its row is read or saved or ``outline.batch_frames`` frames
    wait: their far edges are then found together (``far_edges_many``), most of a frame's cost being the fixed
    cost of each array operation."""

    key = "outline"
    sections = ("outline",)

    def __init__(self, cfg: "OutlineConfig") -> None:
        self.cfg = cfg
        self.edges = GrowArray(np.float16, (cfg.bins, 3))
        # frames not in ``edges`` yet: (depth samples, image width, K, rotation, up), or None (no depth: NaN row)
        self.pending: list[Optional[tuple]] = []
        self._init_lock()  # readers (several at once) may compute the waiting rows

    def __len__(self) -> int:
        return len(self.edges) + len(self.pending)

    def update(self, step: FrameStep) -> None:
        """Log the frame's far edges under its final pose (the ego log's row ``step.frame_pos``)."""
        f = step.fp.frame
        row = None
        if self.cfg.enabled and f.depth_m is not None:
            k, s = f.intrinsics, self.cfg.pixel_stride
            row = (np.array(f.depth_m[s // 2::s, s // 2::s], dtype=np.float64), f.depth_m.shape[1],
                   (k.fx, k.fy, k.cx, k.cy), np.array(f.T_world_cam.matrix[:3, :3], dtype=np.float64),
                   np.array(step.up_world, dtype=np.float64))
        with self._lock:
            self.pending.append(row)
            if len(self.pending) >= self.cfg.batch_frames:
                self._flush()

    def _flush(self) -> None:
        """Append the waiting frames' rows (frames with samples of one shape and width computed together)."""
        rows = np.full((len(self.pending), self.cfg.bins, 3), np.nan)
        groups: dict[tuple, list[int]] = {}
        for i, p in enumerate(self.pending):
            if p is not None:
                groups.setdefault((p[0].shape, p[1]), []).append(i)
        for (_, width), idx in groups.items():
            ps = [self.pending[i] for i in idx]
            rows[idx] = far_edges_many(np.stack([p[0] for p in ps]), width, np.array([p[2] for p in ps]),
                                       np.stack([p[3] for p in ps]), np.stack([p[4] for p in ps]), self.cfg)
        for row in rows.astype(np.float16):
            self.edges.append(row)
        self.pending = []

    def view(self, n: int) -> np.ndarray:
        """(n, bins, 3) offsets of the first ``n`` frames (NaN where nothing was logged)."""
        with self._lock:
            if self.pending and n > len(self.edges):
                self._flush()
        return self.edges.view(n)

    def to_state(self) -> State:
        with self._lock:
            if self.pending:
                self._flush()
        return {"bins": self.cfg.bins}, {"edges": self.edges.to_array()}

    @classmethod
    def from_state(cls, cfg: "MemoryConfig", state: State, loaded: Mapping[str, Any]) -> "RoomOutline":
        """The outline saved by ``to_state`` (one row per ego frame); a save made before it existed (no state)
        gets rows of NaN: its frames' areas come from the walk (answerers/measure.py)."""
        out = cls(cfg.outline)
        n = len(loaded["ego"])
        meta, arrays = state
        if "edges" not in arrays:
            out.edges = GrowArray.from_array(np.full((n, cfg.outline.bins, 3), np.nan, np.float16))
            return out
        bins = meta.get("bins")
        if not isinstance(bins, int) or isinstance(bins, bool) or bins < 1:
            raise StateError("bins", "must be a positive integer")
        column(arrays, "edges", n, (bins, 3))
        if bins != cfg.outline.bins:
            out.cfg = dataclasses.replace(cfg.outline, bins=bins)
        out.edges = GrowArray.from_array(arrays["edges"].astype(np.float16))
        return out
