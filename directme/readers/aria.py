"""Project Aria VRS recordings (projectaria-tools): RGB camera rectified to a pinhole image.

Aria's RGB camera is a Fisheye624 lens; frames are rectified to a linear (pinhole)
camera of ``out_size`` px so the rest of directme can use plain intrinsics. With an MPS
(or ADT) trajectory CSV, ``T_world_cam = T_world_device(t) @ T_device_camera``. With ADT ground truth
(``gt_depth`` = depth_images.vrs, optionally ``gt_segmentation`` + ``gt_instances``) frames carry GT
``depth_m`` and ``meta["instances"]``, and only RGB frames that have GT are read (before resampling).
`from_folder` finds all of these beside the recording (aria_folder.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Optional, Union

import numpy as np

from .._lazy import require
from ..errors import InvalidInputError
from ..geometry import Intrinsics, Pose
from ..types import Frame
from .adt import AdtGroundTruth, AdtGroundTruthConfig
from .aria_folder import AriaRecording, find_aria_recording, open_vrs
from .poses import Trajectory, read_aria_mps_trajectory
from .resample import RateSampler, count_kept

PathLike = Union[str, Path]


class AriaRectifier:
    """Rectify images of one Aria camera (fisheye) to a linear camera with the same pose."""

    def __init__(self, device_calib: Any, label: str = "camera-rgb", out_size: int = 512):
        calibration = require("projectaria_tools.core.calibration", "perception", "projectaria-tools")
        src = device_calib.get_camera_calib(label)
        if src is None:
            raise InvalidInputError(f"the recording has no calibration for camera '{label}'")
        w = int(src.get_image_size()[0])
        f = float(src.get_focal_lengths()[0]) * out_size / w
        self._cal = calibration
        self.src = src
        self.dst = calibration.get_linear_camera_calibration(out_size, out_size, f, label,
                                                             src.get_transform_device_camera())
        self.intrinsics = Intrinsics(f, f, (out_size - 1) / 2, (out_size - 1) / 2, out_size, out_size)
        self.T_device_cam = Pose(src.get_transform_device_camera().to_matrix())

    def image(self, img: np.ndarray) -> np.ndarray:
        return self._cal.distort_by_calibration(img, self.dst, self.src)

    def depth(self, depth: np.ndarray) -> np.ndarray:
        return self._cal.distort_depth_by_calibration(depth, self.dst, self.src)

    def labels(self, labels: np.ndarray) -> np.ndarray:
        return self._cal.distort_label_by_calibration(labels, self.dst, self.src)


class AriaVrsReader:
    """Frames of an Aria VRS recording's RGB stream at ``fps``; ``t_s`` from the first frame,
    ``meta['t_device_s']`` the device capture time (the clock of MPS trajectories)."""

    def __init__(self, path: PathLike, fps: Optional[float] = 1.0, trajectory: Optional[PathLike] = None,
                 out_size: int = 512, label: str = "camera-rgb", max_pose_gap_s: float = 0.05,
                 gt_depth: Optional[PathLike] = None, gt_segmentation: Optional[PathLike] = None,
                 gt_instances: Optional[PathLike] = None, gt_config: AdtGroundTruthConfig = AdtGroundTruthConfig()):
        self.path = Path(path)
        self.provider = open_vrs(self.path)
        self.stream_id = self.provider.get_stream_id_from_label(label)
        if self.stream_id is None:
            raise InvalidInputError(f"{self.path} has no '{label}' stream")
        self.rectifier = AriaRectifier(self.provider.get_device_calibration(), label, out_size)
        self.trajectory: Optional[Trajectory] = (read_aria_mps_trajectory(trajectory)
                                                 if trajectory is not None else None)
        self.up_world = self.trajectory.up_world if self.trajectory is not None else None
        self.fps, self.max_pose_gap_s = fps, max_pose_gap_s
        self.gt: Optional[AdtGroundTruth] = None
        if gt_depth is not None:
            size = tuple(int(v) for v in self.rectifier.src.get_image_size())
            self.gt = AdtGroundTruth(gt_depth, self.rectifier, size, gt_segmentation, gt_instances, gt_config)
        self.recording: Optional[AriaRecording] = None

    @classmethod
    def from_folder(cls, path: PathLike, fps: Optional[float] = 1.0, trajectory: Optional[PathLike] = None,
                    **kwargs: Any) -> "AriaVrsReader":
        """The recording in ``path`` (folder or .vrs) with the poses and ADT ground truth found beside it."""
        rec = find_aria_recording(path, trajectory)
        reader = cls(rec.vrs, fps=fps, trajectory=rec.trajectory, gt_depth=rec.gt_depth,
                     gt_segmentation=rec.gt_segmentation, gt_instances=rec.gt_instances, **kwargs)
        reader.recording = rec
        return reader

    def describe(self) -> str:
        """One line: where poses, depth and objects come from."""
        if self.recording is not None:
            return self.recording.describe()
        return (f"poses: {'trajectory file' if self.trajectory is not None else 'none'}; "
                f"depth: {'ADT ground truth' if self.gt is not None else 'none'}")

    def _times_ns(self) -> np.ndarray:
        from projectaria_tools.core.sensor_data import TimeDomain

        return np.asarray(self.provider.get_timestamps_ns(self.stream_id, TimeDomain.DEVICE_TIME), np.int64)

    def _with_gt(self, t_ns: int) -> bool:
        return self.gt is None or self.gt.covers(t_ns * 1e-9)

    def estimated_frames(self) -> int:
        """Frames this reader yields: the RGB stream's capture times (read from the index, no
        image decoding) resampled to fps; without them, its frame count at the nominal rate."""
        try:
            t_ns = self._times_ns()
        except (ImportError, AttributeError, RuntimeError):
            t_ns = np.zeros(0, np.int64)
        if self.gt is not None:  # only frames with ground truth are read
            t_ns = np.array([t for t in t_ns.tolist() if self._with_gt(t)], np.int64)
        if len(t_ns) or self.gt is not None:
            return count_kept((t_ns - t_ns[0]) * 1e-9, self.fps) if len(t_ns) else 0
        n, rate = self.provider.get_num_data(self.stream_id), float(self.provider.get_nominal_rate_hz(self.stream_id))
        return count_kept(np.arange(n) / rate, self.fps) if rate > 0 else n

    def __iter__(self) -> Iterator[Frame]:
        sampler = RateSampler(self.fps)
        t0_ns: Optional[int] = None
        times = self._times_ns() if self.gt is not None else None
        for i in range(self.provider.get_num_data(self.stream_id)):
            if times is not None and not self._with_gt(int(times[i])):  # outside the GT: not a frame here
                continue
            data, record = self.provider.get_image_data_by_index(self.stream_id, i)
            t_ns = int(record.capture_timestamp_ns)
            t0_ns = t_ns if t0_ns is None else t0_ns
            t_s = (t_ns - t0_ns) * 1e-9
            if not sampler.keep(t_s, f"{self.path} frame {i}"):
                continue
            img = data.to_numpy_array()
            if img.ndim == 2:
                img = np.repeat(img[:, :, None], 3, axis=2)
            pose = None
            if self.trajectory is not None:
                pose = self.trajectory.nearest(t_ns * 1e-9, self.max_pose_gap_s) @ self.rectifier.T_device_cam
            meta: dict[str, Any] = {"t_device_s": t_ns * 1e-9}
            depth = None
            if self.gt is not None:
                depth = self.gt.depth_m(t_ns * 1e-9)
                meta["instances"] = self.gt.instances(t_ns * 1e-9)
            yield Frame(t_s=t_s, rgb=np.ascontiguousarray(self.rectifier.image(img)), depth_m=depth,
                        T_world_cam=pose, intrinsics=self.rectifier.intrinsics, index=i, source=f"{self.path}#{i}",
                        meta=meta)
