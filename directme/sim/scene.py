"""The renderable scene over time: object boxes are piecewise constant between scene changes,
so one snapshot per change is kept and each frame looks its snapshot up (cheap for 10 h streams)."""
from __future__ import annotations

import copy
from typing import Optional, Sequence

import numpy as np

from ..geometry import Intrinsics
from .episode import FrameGT, Layout, ObjectGT, RenderedFrame
from .render import BoxRenderer


class SceneSource:
    """Renders frame ``index`` of an episode from its layout, object histories and camera poses."""

    def __init__(self, layout: Layout, objects: Sequence[ObjectGT], intrinsics: Intrinsics, seed: int,
                 frames_gt: Optional[Sequence[FrameGT]] = None):
        self.renderer = BoxRenderer(layout, intrinsics, seed)
        self.seed = seed
        self.frames_gt = frames_gt
        times = sorted({t for o in objects for t, _ in o.positions_w if t > 0})
        self.change_times = np.asarray(times, dtype=np.float64)
        self.snapshots = [self._snapshot(objects, t) for t in [0.0] + times]

    def with_intrinsics(self, intrinsics: Intrinsics) -> "SceneSource":
        """The same scene rendered by a camera with other intrinsics (e.g. a low-resolution pass)."""
        other = copy.copy(self)
        other.renderer = BoxRenderer(self.renderer.layout, intrinsics, self.seed)
        return other

    @staticmethod
    def _snapshot(objects: Sequence[ObjectGT], t_s: float):
        ids, lo, hi, rgb = [], [], [], []
        for o in objects:
            c = o.position_at(t_s)
            if c is None:
                continue
            half = np.asarray(o.size_m) / 2
            ids.append(o.object_id)
            lo.append(c - half)
            hi.append(c + half)
            rgb.append(o.colour_rgb)
        return (np.asarray(lo, np.float64).reshape(-1, 3), np.asarray(hi, np.float64).reshape(-1, 3),
                np.asarray(ids, np.int64), np.asarray(rgb, np.float32).reshape(-1, 3))

    def boxes_at(self, t_s: float):
        """(lo, hi, ids, rgb) of the objects in the scene at ``t_s``."""
        return self.snapshots[int(np.searchsorted(self.change_times, t_s, side="right"))]

    def render_pose(self, T_world_cam, t_s: float, index: int = 0, with_rgb: bool = True) -> RenderedFrame:
        lo, hi, ids, rgb = self.boxes_at(t_s)
        return self.renderer.render(T_world_cam, lo, hi, ids, rgb, frame_index=index, with_rgb=with_rgb)

    def render(self, index: int) -> RenderedFrame:
        gt = self.frames_gt[index]
        return self.render_pose(gt.T_world_cam, gt.t_s, index)
