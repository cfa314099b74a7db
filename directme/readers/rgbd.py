"""RGB-D folders: 7-Scenes layout and TUM RGB-D layout, with depth, intrinsics and (GT) poses."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterator, Optional, Union

import numpy as np

from ..errors import InvalidInputError
from ..geometry import Intrinsics
from ..types import Frame, check_depth_units
from .images import read_depth_png, read_rgb
from .poses import Trajectory, read_matrix_pose, read_tum_trajectory
from .resample import count_kept, resample

PathLike = Union[str, Path]
TUM_FR1 = Intrinsics(517.3, 516.5, 318.6, 255.3, 640, 480)
# 7-Scenes' documented Kinect intrinsics: the dataset ships no intrinsics file, so a 7-Scenes folder without
# camera-intrinsics.txt uses these, with a logged warning, for 640x480 images only (anything else is an error)
SEVEN_SCENES_KINECT = Intrinsics(585.0, 585.0, 320.0, 240.0, 640, 480)
SEVEN_SCENES_FPS = 30.0  # frame rate assumed for 7-Scenes folders (no timestamps in the layout): the Kinect's
log = logging.getLogger(__name__)


def read_intrinsics_txt(path: PathLike, width: int, height: int) -> Intrinsics:
    """A 3x3 K matrix in a text file (7-Scenes tsdf-fusion `camera-intrinsics.txt`)."""
    try:
        k = np.loadtxt(path)
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{path}: cannot read a 3x3 intrinsics matrix ({exc})") from exc
    return Intrinsics.from_K(k, width, height)


def check_registered(depth_m: np.ndarray, rgb: np.ndarray, depth_path: Path, color_path: Path) -> np.ndarray:
    """``depth_m`` when it is pixel-aligned with ``rgb`` (same size); else an error naming both files."""
    if depth_m.shape != rgb.shape[:2]:
        raise InvalidInputError(
            f"depth image {depth_path} is {depth_m.shape[1]}x{depth_m.shape[0]} px but its colour image "
            f"{color_path} is {rgb.shape[1]}x{rgb.shape[0]} px: depth must be registered to the colour camera "
            "at the same resolution; register it, or resize it with nearest-neighbour sampling")
    return depth_m


class SevenScenesReader:
    """`frame-NNNNNN.color.jpg` / `.depth.png` (uint16 mm) / `.pose.txt` (camera-to-world 4x4).

    No timestamps in the layout: frame i is at ``i / source_fps`` s; without ``source_fps`` the Kinect's
    30 Hz (``SEVEN_SCENES_FPS``) is assumed, and a warning says so.
    Depth 65535 (7-Scenes' invalid marker) and 0 become 0 (invalid).
    """

    def __init__(self, folder: PathLike, fps: Optional[float] = 1.0, source_fps: Optional[float] = None,
                 with_poses: bool = True, with_depth: bool = True, depth_scale: float = 1000.0,
                 intrinsics: Optional[Intrinsics] = None, max_frames: Optional[int] = None):
        self.folder = Path(folder)
        self.colors = sorted(self.folder.glob("frame-*.color.*"))
        if not self.colors:
            raise InvalidInputError(f"{self.folder}: no frame-NNNNNN.color.* files (7-Scenes layout)")
        if max_frames is not None:
            self.colors = self.colors[:max_frames]
        if source_fps is None:
            source_fps = SEVEN_SCENES_FPS
            log.warning("%s: the 7-Scenes layout has no timestamps; frame i is taken at i / %g s (the Kinect's %g Hz); "
                        "give `directme run --source-fps HZ` (source_fps= to SevenScenesReader / open_reader) if it "
                        "was recorded at another rate",
                        self.folder, source_fps, source_fps)
        if not source_fps > 0:
            raise InvalidInputError(f"source_fps must be > 0 frames per second, got {source_fps!r}")
        self.fps, self.source_fps = fps, float(source_fps)
        self.with_poses, self.with_depth, self.depth_scale = with_poses, with_depth, depth_scale
        self._intrinsics = intrinsics
        self.intrinsics_source = "given" if intrinsics is not None else ""

    def estimated_frames(self) -> int:
        """Frames this reader yields (frame i at i / source_fps, resampled to fps)."""
        return count_kept(np.arange(len(self.colors)) / self.source_fps, self.fps)

    def intrinsics(self, width: int, height: int) -> Intrinsics:
        """The ``intrinsics`` given, else ``camera-intrinsics.txt`` in the folder, else (640x480 images only)
        7-Scenes' documented Kinect values, logged as a warning and recorded in ``intrinsics_source``."""
        if self._intrinsics is None:
            k_file = self.folder / "camera-intrinsics.txt"
            if k_file.exists():
                self._intrinsics, self.intrinsics_source = read_intrinsics_txt(k_file, width, height), str(k_file)
            elif (width, height) == (SEVEN_SCENES_KINECT.width, SEVEN_SCENES_KINECT.height):
                self._intrinsics = SEVEN_SCENES_KINECT
                self.intrinsics_source = "default: 7-Scenes Kinect (fx=fy=585, cx=320, cy=240)"
                log.warning("%s has no camera-intrinsics.txt: using 7-Scenes' Kinect intrinsics fx=fy=585 cx=320 "
                            "cy=240 (640x480); add the file (3x3 K) or pass intrinsics= if this is another camera",
                            self.folder)
            else:
                raise InvalidInputError(
                    f"{self.folder}: no camera-intrinsics.txt, and the images are {width}x{height}, not the 7-Scenes "
                    "Kinect's 640x480: write the 3x3 K matrix (pixels) to camera-intrinsics.txt, or pass intrinsics=")
        return self._intrinsics

    def __iter__(self) -> Iterator[Frame]:
        stamped = ((i / self.source_fps, (i, p)) for i, p in enumerate(self.colors))
        for t_s, (i, color) in resample(stamped, self.fps):
            stem = color.name.split(".")[0]
            fix = f"re-extract it from the dataset, or delete {color.name} to drop the frame"
            rgb = read_rgb(color, fix)
            depth = None
            if self.with_depth:
                depth_path = self.folder / f"{stem}.depth.png"
                depth = check_registered(read_depth_png(depth_path, self.depth_scale, fix), rgb, depth_path, color)
                depth[depth >= 65.535 * 1000.0 / self.depth_scale] = 0.0
                check_depth_units(depth, f"depth image {depth_path} (depth_scale={self.depth_scale:g} units per metre)")
            pose = read_matrix_pose(self.folder / f"{stem}.pose.txt") if self.with_poses else None
            yield Frame(t_s=t_s, rgb=rgb, depth_m=depth, T_world_cam=pose,
                        intrinsics=self.intrinsics(rgb.shape[1], rgb.shape[0]), index=i, source=str(color))


def _read_tum_list(path: Path) -> list[tuple[float, str]]:
    if not path.exists():
        raise InvalidInputError(f"{path} missing: a TUM RGB-D folder needs rgb.txt and depth.txt")
    from ..validation import read_text

    out = []
    for n, line in enumerate(read_text(path, "TUM list").splitlines(), start=1):
        if line.strip() and not line.startswith("#"):
            parts = line.split()
            try:
                t = float(parts[0])
            except ValueError:
                t = float("nan")
            if len(parts) < 2 or not np.isfinite(t):
                raise InvalidInputError(f"{path}: line {n}: expected 'timestamp filename', got {line[:80]!r}")
            out.append((t, parts[1]))
    return out


class TumRGBDReader:
    """TUM RGB-D layout: rgb.txt / depth.txt (timestamp filename), depth PNG scale 5000,
    optional groundtruth.txt (TUM trajectory). Depth and GT are matched by nearest timestamp.
    Output timestamps are relative to the first RGB frame (``meta['t_abs_s']`` keeps the original)."""

    def __init__(self, folder: PathLike, fps: Optional[float] = 1.0, intrinsics: Intrinsics = TUM_FR1,
                 with_poses: bool = True, max_dt_s: float = 0.02):
        self.folder = Path(folder)
        self.rgb = _read_tum_list(self.folder / "rgb.txt")
        self.depth = _read_tum_list(self.folder / "depth.txt")
        if not self.rgb:
            raise InvalidInputError(f"{self.folder}/rgb.txt lists no frames")
        self.depth_t = np.array([t for t, _ in self.depth])
        gt = self.folder / "groundtruth.txt"
        self.gt: Optional[Trajectory] = read_tum_trajectory(gt) if with_poses and gt.exists() else None
        self.fps, self.K, self.max_dt_s = fps, intrinsics, max_dt_s

    def estimated_frames(self) -> int:
        """Frames this reader yields: the rgb.txt timestamps resampled to fps."""
        return count_kept([t - self.rgb[0][0] for t, _ in self.rgb], self.fps)

    def __iter__(self) -> Iterator[Frame]:
        t0 = self.rgb[0][0]
        stamped = ((t - t0, (i, t, name)) for i, (t, name) in enumerate(self.rgb))
        for t_s, (i, t_abs, name) in resample(stamped, self.fps):
            j = int(np.argmin(np.abs(self.depth_t - t_abs))) if len(self.depth_t) else -1
            if j < 0 or abs(self.depth_t[j] - t_abs) > self.max_dt_s:
                raise InvalidInputError(f"{self.folder}: no depth image within {self.max_dt_s}s of rgb {name}")
            fix = "re-extract it from the dataset, or drop the frame: delete its lines in rgb.txt and depth.txt"
            rgb = read_rgb(self.folder / name, fix)
            depth_path = self.folder / self.depth[j][1]
            depth = check_registered(read_depth_png(depth_path, 5000.0, fix), rgb, depth_path, self.folder / name)
            check_depth_units(depth, f"depth image {depth_path} (TUM scale 5000 units per metre)")
            pose = self.gt.nearest(t_abs, self.max_dt_s) if self.gt is not None else None
            K = self.K if self.K.shape_hw == rgb.shape[:2] else self.K.resized(rgb.shape[1], rgb.shape[0])
            yield Frame(t_s=t_s, rgb=rgb, depth_m=depth, T_world_cam=pose, intrinsics=K, index=i,
                        source=str(self.folder / name), meta={"t_abs_s": t_abs})
