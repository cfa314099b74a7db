"""Depth and pose given by the input: sensor depth (RGB-D), device poses (Aria MPS, ARKit,
7-Scenes/ScanNet per-frame matrices, TUM trajectories) - no model involved.

``GivenDepthPose`` is the pipeline's 'given' depth_pose stage; ``GivenPerception`` is the whole
perception of the agent's 'given' backend (frames that already carry everything)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np

from ..errors import InvalidInputError
from ..geometry import Intrinsics, Pose
from ..readers.poses import Trajectory, read_trajectory
from ..types import Frame, FramePerception
from .base import DepthPose


class GivenDepthPose:
    """Passes the frame's own ``depth_m`` / ``T_world_cam`` / ``intrinsics`` through.

    ``trajectory``: a TUM or Aria MPS file giving T_world_x by time; looked up at
    ``frame.meta[time_key]`` (e.g. 't_device_s' for Aria, 't_abs_s' for TUM) or ``t_s``.
    ``T_x_cam`` (4x4) maps the camera into the trajectory's body frame (identity by default).
    ``intrinsics``: used when frames carry none (fx, fy, cx, cy of the input resolution).
    ``relative_to_first``: re-express poses so the first camera is the world origin.
    """

    name = "given"

    def __init__(self, trajectory: Union[str, Path, Trajectory, None] = None, time_key: str = "t_s",
                 T_x_cam: Optional[np.ndarray] = None, intrinsics: Optional[Mapping[str, float]] = None,
                 relative_to_first: bool = False, max_pose_gap_s: float = 0.05, depth_scale: float = 1.0):
        self.trajectory = read_trajectory(trajectory) if isinstance(trajectory, (str, Path)) else trajectory
        self.time_key, self.max_pose_gap_s = time_key, max_pose_gap_s
        self.T_x_cam = Pose(np.eye(4) if T_x_cam is None else np.asarray(T_x_cam, dtype=np.float64))
        self.K = dict(intrinsics) if intrinsics else None
        self.relative_to_first, self.depth_scale = relative_to_first, depth_scale
        self._T_first_world: Optional[Pose] = None

    def pose(self, frame: Frame) -> Pose:
        """T_world_cam of ``frame``: from the trajectory file when one is set, else the frame's own."""
        if self.trajectory is not None:
            t = float(frame.meta.get(self.time_key, frame.t_s)) if self.time_key != "t_s" else frame.t_s
            return self.trajectory.nearest(t, self.max_pose_gap_s) @ self.T_x_cam
        if frame.T_world_cam is None:
            raise InvalidInputError(
                f"frame {frame.index} ({frame.source}): depth_pose 'given' needs a pose with each frame or a "
                "'trajectory' file; otherwise choose 'rgbd_odometry' (RGB-D) or a multi-view 'da3' preset")
        return frame.T_world_cam

    def _intrinsics(self, frame: Frame) -> Intrinsics:
        if frame.intrinsics is not None:
            return frame.intrinsics
        if self.K is None:
            raise InvalidInputError(f"frame {frame.index} ({frame.source}): no intrinsics; give "
                                    "'intrinsics': {fx, fy, cx, cy} in the depth_pose config")
        h, w = frame.shape_hw
        return Intrinsics(self.K["fx"], self.K["fy"], self.K["cx"], self.K["cy"], w, h)

    def estimate(self, frame: Frame) -> DepthPose:
        if frame.depth_m is None:
            raise InvalidInputError(
                f"frame {frame.index} ({frame.source}): depth_pose 'given' needs depth with each frame; "
                "choose 'da3' for RGB-only input")
        T = self.pose(frame)
        if self.relative_to_first:
            if self._T_first_world is None:
                self._T_first_world = T.inverse()
            T = self._T_first_world @ T
        return DepthPose(depth_m=np.asarray(frame.depth_m, np.float32) * self.depth_scale, T_world_cam=T,
                         intrinsics=self._intrinsics(frame))

    def push(self, frame: Frame) -> list[tuple[Frame, DepthPose]]:
        return [(frame, self.estimate(frame))]

    def flush(self) -> list[tuple[Frame, DepthPose]]:
        return []

    def reset(self) -> None:
        self._T_first_world = None


class GivenPerception:
    """Perception for frames that already carry depth, pose and intrinsics; instances and the
    scene tag come in ``frame.meta["instances"]`` / ``frame.meta["scene_tag"]`` (may be absent)."""

    name = "given"

    def process(self, frame: Frame) -> list[FramePerception]:
        try:  # FramePerception checks the instances and the tag; say where they came from
            return [FramePerception(frame, frame.meta.get("instances", ()), frame.meta.get("scene_tag"))]
        except InvalidInputError as exc:
            raise InvalidInputError(f"frame.meta['instances'] / meta['scene_tag'] of a 'given' frame: {exc}") from exc

    def flush(self) -> list[FramePerception]:
        return []

    def reset(self) -> None:
        pass


def build(cfg: Mapping[str, Any]) -> GivenDepthPose:
    return GivenDepthPose(**{k: v for k, v in cfg.items() if k != "name"})
