"""Core data types passed between stages (frozen dataclasses, units and frames in names)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping, Optional

import numpy as np

from .errors import InvalidInputError
from .geometry import Intrinsics, Pose, check_depth

OPTION_LETTERS = "ABCDEFGHIJ"


class TextEnum(str, Enum):
    """Base of the closed sets of names (``class PoseSource(TextEnum)``): a member is its string value
    (equal, same hash, JSON), and prints as it (``str``/``format``: "given", not "PoseSource.GIVEN")."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


class Flag(TextEnum):
    """Special cases an ``Answer`` is marked with."""

    NO_EVIDENCE = "no_evidence"  # memory holds nothing to answer from: scores uniform, confidence low
    UNPARSED = "unparsed"  # an MLLM reply with no recognisable answer
    NOT_UNDERSTOOD = "not_understood"  # the question was not understood
    NO_TARGET = "no_target"  # the question names no object memory could look for
    EMPTY_MEMORY = "empty_memory"  # nothing observed yet
    BEFORE_FIRST_FRAME = "before_first_frame"  # asked before the first observed frame
    OPTIONS_MISMATCH = "options_mismatch"  # the options did not fit what memory says
    NO_PLACES = "no_places"  # a place answer without scene tags
    SILENT = "silent"  # streaming: not answering yet
    NO_PROBS = "no_probs"  # the MLLM backend gave no probabilities: confidence is nominal
    BACKEND_ERROR = "backend_error"  # server down, too slow or malformed reply: no answer, confidence 0
    MLLM_FAILED = "mllm_failed"  # the policy's MLLM failed: the geometric answer stands


@dataclass(frozen=True)
class Evidence:
    """One memory item an answer used: a node id, the times it was seen, keyframe times."""

    node_id: str
    label: str = ""
    times_s: tuple[float, ...] = ()
    keyframe_times_s: tuple[float, ...] = ()
    detail: str = ""


@dataclass(frozen=True)
class Answer:
    """An answer at time ``t_s``. ``letter`` for multiple choice, ``text`` always.

    ``option_scores`` maps letters to probabilities that sum to 1 when options were given; ``flags``
    (``Flag`` values) mark special cases."""

    question: str
    t_s: float
    text: str
    letter: Optional[str] = None
    confidence: float = 0.0
    option_scores: Optional[Mapping[str, float]] = None
    evidence: tuple[Evidence, ...] = ()  # the memory items the answer used
    subgraph_text: str = ""
    answerer: str = ""
    flags: tuple[str, ...] = ()
    raw_output: str = ""
    latency_s: float = 0.0

    @property
    def entropy(self) -> Optional[float]:
        if not self.option_scores:
            return None
        p = np.asarray([v for v in self.option_scores.values() if v > 0], dtype=np.float64)
        return float(-(p * np.log(p)).sum())


def check_timestamp(t_s: float, what: str = "timestamp") -> float:
    t = float(t_s)
    if not math.isfinite(t) or t < 0:
        raise InvalidInputError(f"{what} must be a finite number of seconds >= 0, got {t_s!r}")
    return t


@dataclass(frozen=True, eq=False)
class Frame:
    """One image of the stream, with whatever geometry the source provides.

    ``rgb`` is (H, W, 3) uint8; ``depth_m`` (H, W) float metres (0 or NaN = invalid);
    ``T_world_cam`` the camera-to-world pose; ``intrinsics`` for this image size.
    """

    t_s: float
    rgb: np.ndarray
    depth_m: Optional[np.ndarray] = None
    T_world_cam: Optional[Pose] = None
    intrinsics: Optional[Intrinsics] = None
    index: int = -1
    source: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "t_s", check_timestamp(self.t_s, f"frame {self.index} t_s"))
        rgb = np.asarray(self.rgb)
        if rgb.ndim != 3 or rgb.shape[2] != 3:
            raise InvalidInputError(f"frame {self.index} ({self.source}): rgb must be (H, W, 3), got {rgb.shape}")
        if rgb.dtype != np.uint8:
            raise InvalidInputError(f"frame {self.index} ({self.source}): rgb must be uint8, got {rgb.dtype}")
        object.__setattr__(self, "rgb", rgb)
        if self.intrinsics is not None and self.intrinsics.shape_hw != rgb.shape[:2]:
            raise InvalidInputError(
                f"frame {self.index} ({self.source}): intrinsics are for {self.intrinsics.shape_hw} (H, W) "
                f"but the image is {rgb.shape[:2]}; use Intrinsics.resized()")
        if self.depth_m is not None:
            d = np.asarray(self.depth_m, dtype=np.float32)
            if d.shape != rgb.shape[:2]:
                raise InvalidInputError(
                    f"frame {self.index} ({self.source}): depth shape {d.shape} != image shape {rgb.shape[:2]}")
            if self.intrinsics is not None:
                check_depth(d, self.intrinsics)
            object.__setattr__(self, "depth_m", d)
        if self.T_world_cam is not None and not isinstance(self.T_world_cam, Pose):
            object.__setattr__(self, "T_world_cam", Pose(self.T_world_cam))

    @property
    def shape_hw(self) -> tuple[int, int]:
        return (int(self.rgb.shape[0]), int(self.rgb.shape[1]))


@dataclass(frozen=True, eq=False)
class InstanceObservation:
    """One object instance seen in one frame: a tracker id, its label, score and pixel mask."""

    track_id: int
    label: str
    score: float
    mask: np.ndarray
    embedding: Optional[np.ndarray] = None
    box_xyxy: Optional[tuple[float, float, float, float]] = None

    def __post_init__(self) -> None:
        m = np.asarray(self.mask)
        if m.ndim != 2:
            raise InvalidInputError(f"instance {self.track_id} ({self.label}): mask must be 2-D, got {m.shape}")
        object.__setattr__(self, "mask", m.astype(bool, copy=False))
        if not (0.0 <= float(self.score) <= 1.0) or not math.isfinite(float(self.score)):
            raise InvalidInputError(f"instance {self.track_id} ({self.label}): score must be in [0, 1], got {self.score}")


@dataclass(frozen=True, eq=False)
class FramePerception:
    """Everything perception produced for one frame: the frame with metric depth, pose and
    intrinsics filled in, the instances seen, and a scene tag (room / place type)."""

    frame: Frame
    instances: tuple[InstanceObservation, ...] = ()
    scene_tag: Optional[str] = None
    scene_tag_score: float = 1.0

    @property
    def t_s(self) -> float:
        return self.frame.t_s

    def validate(self) -> None:
        """Raise InvalidInputError if this cannot be lifted into a world-frame map."""
        f = self.frame
        where = f"frame {f.index} at t={f.t_s:.3f}s ({f.source or 'stream'})"
        if f.depth_m is None:
            raise InvalidInputError(f"{where}: no depth; configure a depth backend or give depth_m")
        if f.T_world_cam is None:
            raise InvalidInputError(f"{where}: no camera pose; configure a pose backend or give T_world_cam")
        if f.intrinsics is None:
            raise InvalidInputError(f"{where}: no intrinsics; give them with the frame or configure a backend")
        for inst in self.instances:
            if inst.mask.shape != f.shape_hw:
                raise InvalidInputError(
                    f"{where}: mask of instance {inst.track_id} ({inst.label}) is {inst.mask.shape}, "
                    f"image is {f.shape_hw}")


@dataclass(frozen=True)
class Question:
    """A question asked at stream time ``t_s`` with optional options (letter order A, B, ...)."""

    qid: str
    t_s: float
    text: str
    options: tuple[str, ...] = ()
    answer: Optional[str] = None  # correct letter, or free-text reference for open-ended
    subtask: str = ""
    category: str = ""
    qtype: str = ""  # COUNT | BINARY | OTHER (UCS-Bench) or benchmark specific
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "t_s", check_timestamp(self.t_s, f"question {self.qid} t_s"))
        object.__setattr__(self, "options", tuple(self.options))
        if len(self.options) > len(OPTION_LETTERS):
            raise InvalidInputError(f"question {self.qid}: at most {len(OPTION_LETTERS)} options")

    @property
    def letters(self) -> str:
        return OPTION_LETTERS[: len(self.options)]
