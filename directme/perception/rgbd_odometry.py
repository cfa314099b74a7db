"""RGB-D odometry with open3d (no learned weights): metric depth from the sensor, camera poses
by photometric + geometric alignment of each frame to the current keyframe.

Tracking against a keyframe (not the previous frame) limits drift; a new keyframe is taken
when the camera has moved ``keyframe_trans_m`` / ``keyframe_rot_deg``. Frames must be close
in time (sensor rate, or a few Hz): at 1 fps the motion between frames is too large.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from .._lazy import require
from ..errors import InvalidInputError
from ..geometry import Intrinsics, Pose
from ..types import Frame
from .base import DepthPose


class RGBDOdometry:
    """Multi-scale RGB-D odometry (open3d tensor pipeline) against a keyframe.

    ``downsample`` tracks on every n-th pixel (2: 320x240 for VGA, ~5x faster, same accuracy
    here); output depth and intrinsics stay at the input resolution.
    """

    name = "rgbd_odometry"

    def __init__(self, method: str = "hybrid", max_depth_m: float = 4.0, keyframe_trans_m: float = 0.10,
                 keyframe_rot_deg: float = 10.0, iterations: tuple[int, ...] = (20, 10, 5),
                 max_depth_diff_m: float = 0.07, downsample: int = 2,
                 intrinsics: Optional[Mapping[str, float]] = None):
        self.o3d = require("open3d", "perception", "open3d-cpu")
        odo = self.o3d.t.pipelines.odometry
        methods = {"hybrid": odo.Method.Hybrid, "color": odo.Method.Intensity, "depth": odo.Method.PointToPlane}
        if method not in methods:
            raise InvalidInputError(f"rgbd_odometry method must be one of {sorted(methods)}, got {method!r}")
        if int(downsample) < 1:
            raise InvalidInputError(f"rgbd_odometry downsample must be >= 1, got {downsample}")
        self.method = methods[method]
        self.criteria = [odo.OdometryConvergenceCriteria(int(n)) for n in iterations]
        self.max_depth_m, self.max_depth_diff_m, self.step = max_depth_m, max_depth_diff_m, int(downsample)
        self.kf_trans_m, self.kf_rot_rad = keyframe_trans_m, np.deg2rad(keyframe_rot_deg)
        self.K = dict(intrinsics) if intrinsics else None
        self.failures = 0
        self.reset()

    def reset(self) -> None:
        self._kf: Any = None
        self._T_world_kf = np.eye(4)
        self._T_kf_prev = np.eye(4)
        self._T_velocity = np.eye(4)

    def _rgbd(self, frame: Frame) -> Any:
        g, s = self.o3d.t.geometry, self.step
        depth = np.nan_to_num(np.asarray(frame.depth_m, np.float32)[::s, ::s], nan=0.0)
        depth[depth > self.max_depth_m] = 0.0
        return g.RGBDImage(g.Image(np.ascontiguousarray(frame.rgb[::s, ::s])), g.Image(np.ascontiguousarray(depth)))

    def _intrinsics(self, frame: Frame) -> Intrinsics:
        if frame.intrinsics is not None:
            return frame.intrinsics
        if self.K is None:
            raise InvalidInputError(f"frame {frame.index} ({frame.source}): rgbd_odometry needs intrinsics "
                                    "with the frame or 'intrinsics': {fx, fy, cx, cy} in its config")
        h, w = frame.shape_hw
        return Intrinsics(self.K["fx"], self.K["fy"], self.K["cx"], self.K["cy"], w, h)

    def _track(self, rgbd: Any, K: Intrinsics, guess: np.ndarray) -> tuple[bool, np.ndarray]:
        """T_kf_cur by aligning the current RGB-D image to the keyframe."""
        o3d, s = self.o3d, self.step
        Ks = K.resized(int(np.ceil(K.width / s)), int(np.ceil(K.height / s))) if s > 1 else K
        try:
            res = o3d.t.pipelines.odometry.rgbd_odometry_multi_scale(
                rgbd, self._kf, o3d.core.Tensor(Ks.K), o3d.core.Tensor(guess), 1.0, self.max_depth_m,
                self.criteria, self.method, o3d.t.pipelines.odometry.OdometryLossParams(self.max_depth_diff_m))
        except RuntimeError:
            return False, guess
        T = res.transformation.numpy().astype(np.float64)
        return bool(res.fitness > 0.1 and np.all(np.isfinite(T))), T

    def push(self, frame: Frame) -> list[tuple[Frame, DepthPose]]:
        if frame.depth_m is None:
            raise InvalidInputError(f"frame {frame.index} ({frame.source}): rgbd_odometry needs sensor depth "
                                    "(an RGB-D input); choose 'da3' for RGB-only input")
        K = self._intrinsics(frame)
        rgbd = self._rgbd(frame)
        if self._kf is None:
            self._kf = rgbd
            T_world_cam = self._T_world_kf.copy()
        else:
            guess = self._T_kf_prev @ self._T_velocity  # constant velocity
            ok, T_kf_cur = self._track(rgbd, K, guess)
            if not ok:
                self.failures += 1
                T_kf_cur = guess
            T_kf_cur = _orthonormalise(T_kf_cur)
            self._T_velocity = np.linalg.inv(self._T_kf_prev) @ T_kf_cur
            T_world_cam = self._T_world_kf @ T_kf_cur
            self._T_kf_prev = T_kf_cur
            angle = np.arccos(np.clip((np.trace(T_kf_cur[:3, :3]) - 1) / 2, -1, 1))
            if np.linalg.norm(T_kf_cur[:3, 3]) > self.kf_trans_m or angle > self.kf_rot_rad:
                self._kf, self._T_world_kf, self._T_kf_prev = rgbd, T_world_cam, np.eye(4)
        T = _orthonormalise(T_world_cam)
        return [(frame, DepthPose(np.asarray(frame.depth_m, np.float32), Pose(T), K))]

    def flush(self) -> list[tuple[Frame, DepthPose]]:
        return []


def _orthonormalise(T: np.ndarray) -> np.ndarray:
    u, _, vt = np.linalg.svd(T[:3, :3])
    out = T.copy()
    out[:3, :3] = u @ vt
    return out


def build(cfg: Mapping[str, Any]) -> RGBDOdometry:
    kw = {k: v for k, v in cfg.items() if k != "name"}
    if "iterations" in kw:
        kw["iterations"] = tuple(kw["iterations"])
    return RGBDOdometry(**kw)
