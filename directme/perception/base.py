"""Stage interfaces of the perception pipeline (one implementation file per backend).

frame -> DepthPoseBackend (metric depth, camera pose, intrinsics)
      -> Detector (open-vocabulary boxes) -> Tracker (persistent instance masks)
      -> SceneTagger (place type) -> FramePerception for the memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from ..geometry import Intrinsics, Pose
from ..types import Frame, FramePerception, InstanceObservation, TextEnum


class PoseSource(TextEnum):
    """Where a depth+pose backend takes camera poses from: its model, the input (frames' poses or a
    trajectory file), or "auto" (given when the first frames carry poses, else the model's)."""

    AUTO = "auto"
    MODEL = "model"
    GIVEN = "given"


@dataclass(frozen=True, eq=False)
class DepthPose:
    """Metric depth (H, W) at the INPUT frame's resolution, camera-to-world pose and intrinsics.
    ``metric`` False: depth and pose translation are up to an unknown scale (no metric evidence yet)."""

    depth_m: np.ndarray
    T_world_cam: Pose
    intrinsics: Intrinsics
    confidence: Optional[np.ndarray] = None
    metric: bool = True


@dataclass(frozen=True, eq=False)
class Detection:
    """An open-vocabulary detection in pixel coordinates of the input frame."""

    box_xyxy: tuple[float, float, float, float]
    label: str
    score: float
    embedding: Optional[np.ndarray] = None


@runtime_checkable
class DepthPoseBackend(Protocol):
    """Streaming depth + pose. ``push`` may buffer (chunked models) and return results for
    earlier frames; ``flush`` returns what is still buffered. Output order = input order."""

    name: str

    def push(self, frame: Frame) -> list[tuple[Frame, DepthPose]]: ...

    def flush(self) -> list[tuple[Frame, DepthPose]]: ...

    def reset(self) -> None: ...


@runtime_checkable
class Detector(Protocol):
    name: str

    def set_vocabulary(self, labels: Sequence[str]) -> None: ...

    def detect(self, rgb: np.ndarray) -> list[Detection]: ...


@runtime_checkable
class Tracker(Protocol):
    """Turns detections (given on some frames only) into persistent per-frame instance masks."""

    name: str

    def update(self, frame: Frame, detections: Optional[Sequence[Detection]]) -> list[InstanceObservation]: ...

    def reset(self) -> None: ...


@runtime_checkable
class SceneTagger(Protocol):
    name: str

    def tag(self, rgb: np.ndarray) -> tuple[str, float]: ...


@runtime_checkable
class Perception(Protocol):
    """Whole perception: frames in (one at a time), FramePerception out (possibly delayed)."""

    name: str

    def process(self, frame: Frame) -> list[FramePerception]: ...

    def flush(self) -> list[FramePerception]: ...

    def reset(self) -> None: ...


@runtime_checkable
class OracleEpisode(Protocol):
    """A recording that replays its own ground truth as a Perception (``directme.sim.Episode``).

    The 'oracle' backend asks the episode for it, so perception never imports the simulator
    (``directme.sim`` sits beside the pipeline; see docs/architecture.md)."""

    def oracle_perception(self, noise: str = "none", seed: int = 0) -> Perception: ...


@runtime_checkable
class TruthFedEpisode(Protocol):
    """A simulator episode that runs the model pipeline with ground-truth stand-ins for its networks
    (``directme.sim.Episode.truthfed_perception``; the 'truth-fed' backend asks the episode for it)."""

    def truthfed_perception(self, options: Optional[Mapping[str, Any]] = None, seed: int = 0) -> Perception: ...
