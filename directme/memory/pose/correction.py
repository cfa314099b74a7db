"""A pose correction - a turn about the vertical through a pivot, then a shift - and a frame re-posed by one."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...geometry import Pose, rotation_about_axis
from ...types import FramePerception


@dataclass(frozen=True)
class Correction:
    """Rotation ``yaw_rad`` about ``up`` through ``pivot_w`` followed by ``shift_w`` (memory frame); what a pose
    stage returns. ``moves_recent``: the objects of the last frames moved with it (relocalisation), so the
    corrections those frames were lifted with count as changed by it too."""

    yaw_rad: float
    pivot_w: np.ndarray
    shift_w: np.ndarray
    up: np.ndarray
    moves_recent: bool = False

    def matrix(self) -> np.ndarray:
        R = rotation_about_axis(self.up, self.yaw_rad)
        M = np.eye(4)
        M[:3, :3] = R
        M[:3, 3] = self.pivot_w - R @ self.pivot_w + self.shift_w
        return M

    def apply(self, p_w: np.ndarray) -> np.ndarray:
        if self.yaw_rad == 0.0:
            return p_w + self.shift_w
        M = self.matrix()
        return p_w @ M[:3, :3].T + M[:3, 3]


def with_pose(fp: FramePerception, T_world_cam: Pose) -> FramePerception:
    """``fp`` with the frame's pose replaced (arrays shared, already validated)."""
    return _shallow(fp, frame=_shallow(fp.frame, T_world_cam=T_world_cam))


def _shallow(obj, **fields):
    """``copy.copy(obj)`` of a frozen dataclass instance (its ``__dict__`` copied, as copy.copy does for these)
    with ``fields`` replaced, without copy's generic protocol or the class's checks."""
    out = object.__new__(type(obj))
    out.__dict__.update(obj.__dict__, **fields)
    return out
