"""Pose files: TUM trajectories, 7-Scenes/ScanNet per-frame 4x4 matrices, Aria MPS trajectory CSV.

Every parser returns camera(or device)-to-world poses ``T_world_x`` with timestamps in
seconds where the format has them. Quaternions are Hamilton (x, y, z, w) as written.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from ..errors import InvalidInputError
from ..geometry import Pose

PathLike = Union[str, Path]


def quat_xyzw_to_R(q: Sequence[float]) -> np.ndarray:
    """Rotation matrix of a quaternion given as (x, y, z, w); normalised first."""
    x, y, z, w = (float(v) for v in q)
    n = np.sqrt(x * x + y * y + z * z + w * w)
    if not np.isfinite(n) or n < 1e-9:
        raise InvalidInputError(f"quaternion {tuple(q)} has zero or non-finite norm")
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


@dataclass(frozen=True, eq=False)
class Trajectory:
    """Timestamped poses T_world_x (sorted by time)."""

    t_s: np.ndarray
    poses: tuple[Pose, ...]
    source: str = ""
    up_world: Optional[tuple[float, float, float]] = None  # unit vector against gravity, when the file gives it

    def __post_init__(self) -> None:
        t = np.asarray(self.t_s, dtype=np.float64)
        if t.ndim != 1 or len(t) != len(self.poses):
            raise InvalidInputError(f"{self.source}: {len(t)} timestamps for {len(self.poses)} poses")
        if len(t) > 1 and np.any(np.diff(t) < 0):
            raise InvalidInputError(f"{self.source}: timestamps are not sorted")
        object.__setattr__(self, "t_s", t)

    def __len__(self) -> int:
        return len(self.poses)

    def nearest(self, t_s: float, max_gap_s: float = 0.05) -> Pose:
        """Pose with the nearest timestamp; raises when none is within ``max_gap_s``."""
        if not len(self.poses):
            raise InvalidInputError(f"{self.source}: empty trajectory")
        i = int(np.clip(np.searchsorted(self.t_s, t_s), 1, len(self.t_s) - 1)) if len(self.t_s) > 1 else 0
        if i > 0 and abs(self.t_s[i - 1] - t_s) <= abs(self.t_s[i] - t_s):
            i -= 1
        if abs(self.t_s[i] - t_s) > max_gap_s:
            raise InvalidInputError(
                f"{self.source}: no pose within {max_gap_s}s of t={t_s:.6f}s (nearest {self.t_s[i]:.6f}s); "
                "check that the trajectory and the frames use the same clock")
        return self.poses[i]

    def positions(self) -> np.ndarray:
        return np.array([p.t for p in self.poses]).reshape(-1, 3)


def _pose_from_tq(t: Sequence[float], q_xyzw: Sequence[float], where: str) -> Pose:
    try:
        return Pose.from_Rt(quat_xyzw_to_R(q_xyzw), np.asarray(t, dtype=np.float64))
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc}") from exc


def read_tum_trajectory(path: PathLike) -> Trajectory:
    """TUM format: one ``timestamp tx ty tz qx qy qz qw`` line per pose; '#' comments."""
    path = Path(path)
    ts, poses = [], []
    for n, line in enumerate(_read_text(path).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        vals = line.replace(",", " ").split()
        if len(vals) != 8:
            raise InvalidInputError(f"{path}:{n}: expected 'timestamp tx ty tz qx qy qz qw', got {line!r}")
        try:
            v = [float(x) for x in vals]
        except ValueError as exc:
            raise InvalidInputError(f"{path}:{n}: non-numeric value in {line!r}") from exc
        ts.append(v[0])
        poses.append(_pose_from_tq(v[1:4], v[4:8], f"{path}:{n}"))
    return Trajectory(np.array(ts), tuple(poses), str(path))


def read_matrix_pose(path: PathLike) -> Pose:
    """A 4x4 (or 3x4) camera-to-world matrix in a text file (7-Scenes, ScanNet)."""
    path = Path(path)
    try:
        m = np.loadtxt(path, dtype=np.float64)
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{path}: cannot read a 4x4 pose matrix ({exc})") from exc
    if m.shape == (16,):
        m = m.reshape(4, 4)
    if not np.all(np.isfinite(m)):
        raise InvalidInputError(f"{path}: pose has non-finite values (ScanNet marks lost tracking with -inf); "
                                "skip this frame or use another pose source")
    try:
        return Pose(m)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{path}: {exc}") from exc


def read_matrix_poses(paths: Sequence[PathLike]) -> list[Pose]:
    return [read_matrix_pose(p) for p in paths]


_MPS_COLS = ("tracking_timestamp_us", "tx_world_device", "ty_world_device", "tz_world_device",
             "qx_world_device", "qy_world_device", "qz_world_device", "qw_world_device")


def read_aria_mps_trajectory(path: PathLike) -> Trajectory:
    """Aria MPS closed-loop trajectory CSV (and ADT aria_trajectory.csv): T_world_device,
    timestamps = device tracking time in seconds; ``up_world`` from the gravity columns when present."""
    path = Path(path)
    rows = list(csv.DictReader(_read_text(path).splitlines()))
    if not rows:
        raise InvalidInputError(f"{path}: empty trajectory CSV")
    missing = [c for c in _MPS_COLS if c not in rows[0]]
    if missing:
        raise InvalidInputError(f"{path}: not an Aria MPS trajectory CSV, missing columns {missing}")
    ts, poses = [], []
    for n, row in enumerate(rows, 2):
        try:
            v = [float(row[c]) for c in _MPS_COLS]
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"{path}:{n}: non-numeric pose value") from exc
        ts.append(v[0] * 1e-6)
        poses.append(_pose_from_tq(v[1:4], v[4:8], f"{path}:{n}"))
    order = np.argsort(ts, kind="stable")
    return Trajectory(np.asarray(ts)[order], tuple(poses[i] for i in order), str(path), _up_from_gravity(rows))


_GRAVITY_COLS = ("gravity_x_world", "gravity_y_world", "gravity_z_world")


def _up_from_gravity(rows: list[dict[str, str]]) -> Optional[tuple[float, float, float]]:
    """Minus the mean gravity direction in the world frame (MPS and ADT write it per pose), or None."""
    if any(c not in rows[0] for c in _GRAVITY_COLS):
        return None
    try:
        g = np.array([[float(r[c]) for c in _GRAVITY_COLS] for r in rows]).mean(axis=0)
    except (TypeError, ValueError):
        return None
    n = float(np.linalg.norm(g))
    if not np.isfinite(n) or n < 1e-6:
        return None
    return tuple(float(v) + 0.0 for v in -g / n)  # + 0.0: no negative zeros


def read_trajectory(path: PathLike) -> Trajectory:
    """Read a TUM or Aria MPS trajectory by looking at the file's first line."""
    path = Path(path)
    head = _read_text(path).lstrip()[:200]
    if "tracking_timestamp_us" in head.splitlines()[0] if head else False:
        return read_aria_mps_trajectory(path)
    return read_tum_trajectory(path)


def _read_text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError as exc:
        raise InvalidInputError(f"pose file {path} does not exist; check the path") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"pose file {path} cannot be read as text ({exc})") from exc
