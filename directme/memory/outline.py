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
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from .._atomic import StateError, column
from .buffers import GrowArray
from .component import FrameStep, State

if TYPE_CHECKING:
    from .config import MemoryConfig
    from .sections import OutlineConfig


def far_edges(depth_m: np.ndarray, K: np.ndarray, T_world_cam: np.ndarray, up_world: np.ndarray,
              cfg: "OutlineConfig") -> np.ndarray:
    """(bins, 3) horizontal offsets (world, from the camera) of the far edge of each bearing slice of one frame's
    depth (``K``: fx, fy, cx, cy); NaN rows for slices with fewer than ``cfg.min_points`` points."""
    out = np.full((cfg.bins, 3), np.nan)
    s = cfg.pixel_stride
    d = np.asarray(depth_m[s // 2::s, s // 2::s], dtype=np.float64)
    v, u = np.mgrid[s // 2:depth_m.shape[0]:s, s // 2:depth_m.shape[1]:s]
    ok = np.isfinite(d) & (d >= cfg.min_depth_m) & (d <= cfg.max_depth_m)
    fx, fy, cx, cy = (float(k) for k in K[:4])
    z = d[ok]
    R = np.asarray(T_world_cam, dtype=np.float64)[:3, :3]
    off_w = np.stack([(u[ok] - cx) / fx * z, (v[ok] - cy) / fy * z, z], axis=1) @ R.T
    up = np.asarray(up_world, dtype=np.float64)
    h = off_w @ up
    keep = h >= -cfg.below_cam_m
    flat = off_w[keep] - np.outer(h[keep], up)
    fwd = R[:, 2] - np.dot(R[:, 2], up) * up
    if not len(flat) or np.linalg.norm(fwd) < 1e-6:  # nothing high enough, or looking straight up or down
        return out
    fwd /= np.linalg.norm(fwd)
    left = np.cross(up, fwd)
    half = math.atan2(max(cx, depth_m.shape[1] - cx), fx)
    bearing = np.arctan2(flat @ left, flat @ fwd)
    b = np.clip(((bearing + half) / (2 * half) * cfg.bins).astype(np.int64), 0, cfg.bins - 1)
    r = np.linalg.norm(flat, axis=1)
    order = np.lexsort((r, b))
    b, r, flat = b[order], r[order], flat[order]
    starts = np.searchsorted(b, np.arange(cfg.bins + 1))
    lo, hi = starts[:-1], starts[1:]
    full = np.flatnonzero(hi - lo >= max(cfg.min_points, 1))
    if not len(full):
        return out
    lo, hi = lo[full], hi[full]
    far = r[lo + (cfg.far_quantile * (hi - lo - 1)).astype(np.int64)]
    key = b * (2.0 * cfg.max_depth_m) + r  # slices one after another, each sorted by distance
    first = np.searchsorted(key, full * (2.0 * cfg.max_depth_m) + (1.0 - cfg.band) * far)
    csum = np.concatenate([np.zeros((1, 3)), np.cumsum(flat, axis=0)])
    heading = csum[hi] - csum[first]  # the far points' summed offsets: their mean bearing
    norm = np.linalg.norm(heading, axis=1, keepdims=True)
    out[full] = heading / np.maximum(norm, 1e-12) * r[(first + hi) // 2][:, None]
    return out


class RoomOutline:
    """The outline component: per ego frame, the far edge of each bearing slice of its depth (``far_edges``)."""

    key = "outline"
    sections = ("outline",)

    def __init__(self, cfg: "OutlineConfig") -> None:
        self.cfg = cfg
        self.edges = GrowArray(np.float16, (cfg.bins, 3))

    def __len__(self) -> int:
        return len(self.edges)

    def update(self, step: FrameStep) -> None:
        """Log the frame's far edges under its final pose (the ego log's row ``step.frame_pos``)."""
        f = step.fp.frame
        k = f.intrinsics
        row = far_edges(f.depth_m, np.array([k.fx, k.fy, k.cx, k.cy]), f.T_world_cam.matrix, step.up_world, self.cfg) \
            if self.cfg.enabled and f.depth_m is not None else np.full((self.cfg.bins, 3), np.nan)
        self.edges.append(row.astype(np.float16))

    def view(self, n: int) -> np.ndarray:
        """(n, bins, 3) offsets of the first ``n`` frames (NaN where nothing was logged)."""
        return self.edges.view(n)

    def to_state(self) -> State:
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
