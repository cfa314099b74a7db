"""The files of an Aria recording folder that directme reads, found by their standard names.

- the recording: ``video.vrs`` (ADT), ``recording.vrs`` (AEA), or the folder's only other ``.vrs``;
- device poses: ADT's ground-truth ``aria_trajectory.csv`` first (the frame of ADT's GT depth), else an
  MPS closed-loop trajectory (``mps/slam/``, ``mps/trajectory/``, ``slam/`` or the folder itself:
  ``closed_loop_trajectory.csv``). MPS open-loop trajectories drift and are not used;
- ADT ground truth: ``depth_images.vrs``, ``segmentations.vrs`` with ``instances.json``.

`open_vrs` opens one of these VRS files with projectaria-tools.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from .._lazy import require
from ..errors import InvalidInputError
from ..types import TextEnum

PathLike = Union[str, Path]

RECORDING_NAMES = ("video.vrs", "recording.vrs")
ADT_TRAJECTORY = "aria_trajectory.csv"
MPS_TRAJECTORIES = ("mps/slam/closed_loop_trajectory.csv", "mps/trajectory/closed_loop_trajectory.csv",
                    "slam/closed_loop_trajectory.csv", "closed_loop_trajectory.csv")
ADT_GT_FILES = ("depth_images.vrs", "segmentations.vrs")


class PoseSourceKind(TextEnum):
    """Where an Aria recording's camera poses come from."""

    ADT = "ADT ground-truth trajectory"
    MPS = "MPS closed-loop trajectory"
    FILE = "trajectory file"
    NONE = "none"


@dataclass(frozen=True)
class AriaRecording:
    """Paths of one Aria recording and of what lies beside it (None = absent)."""

    vrs: Path
    trajectory: Optional[Path] = None
    trajectory_kind: PoseSourceKind = PoseSourceKind.NONE
    gt_depth: Optional[Path] = None  # ADT depth_images.vrs
    gt_segmentation: Optional[Path] = None  # ADT segmentations.vrs (needs gt_instances)
    gt_instances: Optional[Path] = None  # ADT instances.json

    def describe(self) -> str:
        """One line: what the frames will carry."""
        parts = [f"poses: {self.trajectory_kind.value} ({self.trajectory.name})" if self.trajectory
                 else "poses: none (no MPS or ADT trajectory beside the recording)"]
        parts.append(f"depth: ADT ground truth ({self.gt_depth.name})" if self.gt_depth else "depth: none")
        if self.gt_segmentation is not None:
            parts.append(f"objects: ADT ground-truth instances ({self.gt_segmentation.name})")
        return "; ".join(parts)


def find_aria_recording(path: PathLike, trajectory: Optional[PathLike] = None) -> AriaRecording:
    """The recording in ``path`` (a folder, or a .vrs file whose folder is searched for the rest);
    ``trajectory`` overrides the pose file found."""
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    vrs = p if p.is_file() else _recording_in(p)
    if trajectory is not None:
        traj = Path(trajectory)
        kind = PoseSourceKind.ADT if traj.name == ADT_TRAJECTORY else PoseSourceKind.FILE
    elif (folder / ADT_TRAJECTORY).is_file():
        traj, kind = folder / ADT_TRAJECTORY, PoseSourceKind.ADT
    else:
        traj = next((folder / n for n in MPS_TRAJECTORIES if (folder / n).is_file()), None)
        kind = PoseSourceKind.MPS if traj is not None else PoseSourceKind.NONE
    depth, seg = (folder / n if (folder / n).is_file() else None for n in ADT_GT_FILES)
    instances = folder / "instances.json" if (folder / "instances.json").is_file() else None
    if kind != PoseSourceKind.ADT:  # ADT GT depth and masks belong with ADT's own poses (its world frame)
        depth = seg = None
    return AriaRecording(vrs, traj, kind, depth, seg if instances is not None else None, instances)


def is_aria_folder(path: PathLike) -> bool:
    p = Path(path)
    return p.is_dir() and any((p / n).is_file() for n in RECORDING_NAMES)


def _recording_in(folder: Path) -> Path:
    for name in RECORDING_NAMES:
        if (folder / name).is_file():
            return folder / name
    others = sorted(f for f in folder.glob("*.vrs") if f.name not in ADT_GT_FILES)
    if len(others) != 1:
        raise InvalidInputError(f"{folder}: expected one Aria recording ({' or '.join(RECORDING_NAMES)}), found "
                                f"{[f.name for f in others] or 'none'}")
    return others[0]


def open_vrs(path: PathLike) -> Any:
    """A projectaria-tools data provider for a VRS file (the recording, or an ADT ground-truth file)."""
    data_provider = require("projectaria_tools.core.data_provider", "perception", "projectaria-tools")
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"Aria recording {path} does not exist")
    provider = data_provider.create_vrs_data_provider(str(path))
    if provider is None:
        raise InvalidInputError(f"{path} cannot be opened as an Aria VRS recording; is the file complete?")
    return provider
