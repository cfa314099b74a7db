"""Perception of an Aria recording with no model weights: what the recording itself carries.

- camera poses: the frame's ``T_world_cam`` (an ADT ground-truth or MPS closed-loop trajectory, read by
  `directme.readers.aria`); a frame without one is an error (there is nothing else to place it);
- depth: the frame's ``depth_m`` (ADT ground truth); a frame without depth gets an all-invalid depth
  map (0 = no measurement) and ``pose_only=True``, which the memory accepts for a frame without
  instances: it records the wearer's path and nothing else;
- objects: ``frame.meta["instances"]`` (ADT ground-truth instance masks with their categories);
- scene tag: ``frame.meta["scene_tag"]`` when given, else the room whose cue objects are most often
  in view (``AriaGtConfig.room_cues``, e.g. a cooktop and a refrigerator -> kitchen); none without objects.

Answerable without weights: path questions (how far have I walked, what path did I take) from the
poses; with ADT ground truth also place questions (where am I, which room was I in) and object ones.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..errors import InvalidInputError
from ..types import Frame, FramePerception, InstanceObservation
from ..validation import check_section, parse_options

ROOM_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("kitchen", ("refrigerator", "cooktop", "oven", "microwave", "dishrack", "frying pan", "tea kettle", "toaster",
                 "blender", "coffee maker", "food processor", "spice rack", "cutting board", "pot", "sink")),
    ("dining room", ("dining table", "dining chair")),
    ("living room", ("couch", "sofa", "armchair", "coffee table", "television", "tv stand")),
    ("bedroom", ("bed", "bed frame", "mattress", "dressing table", "wardrobe")),
    ("bathroom", ("toilet", "bathtub", "shower", "towel")),
    ("office", ("desk", "computer keyboard", "computer mouse", "laptop computer", "monitor", "mouse pad")),
)


@dataclass(frozen=True)
class AriaGtConfig:
    """Options of the 'aria_gt' perception backend."""

    room_cues: tuple[tuple[str, tuple[str, ...]], ...] = ROOM_CUES  # room -> object categories that name it
    min_room_votes: int = 2  # cue objects in view needed to name the room (fewer: no tag for the frame)

    def __post_init__(self) -> None:
        check_section(self, "perception.options", at_least_one=("min_room_votes",))

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> "AriaGtConfig":
        """From the backend's options (``room_cues`` also as a mapping room -> categories), strictly typed."""
        opts = dict(options) if isinstance(options, Mapping) else options
        if isinstance(opts, dict) and "room_cues" in opts:
            cues = opts["room_cues"]
            pairs = cues.items() if isinstance(cues, Mapping) else cues
            opts["room_cues"] = tuple((str(room), tuple(str(c) for c in cats)) for room, cats in pairs)
        return parse_options(cls, opts, "options of perception backend 'aria_gt'", "perception.options")


def room_from_objects(labels: Sequence[str], cfg: AriaGtConfig) -> tuple[Optional[str], float]:
    """The room named by the most cue objects among ``labels`` (and its share of the cue votes), or None."""
    votes: Counter = Counter()
    for room, cats in cfg.room_cues:
        votes[room] = sum(1 for label in labels if label.lower() in cats)
    if not votes:
        return None, 0.0
    room, n = votes.most_common(1)[0]
    if n < cfg.min_room_votes:
        return None, 0.0
    return room, n / sum(votes.values())


class AriaGtPerception:
    """FramePerception from a recording's own poses, ground-truth depth and instances; no model."""

    name = "aria_gt"

    def __init__(self, config: AriaGtConfig = AriaGtConfig()):
        self.config = config

    def process(self, frame: Frame) -> list[FramePerception]:
        where = f"frame {frame.index} ({frame.source})"
        if frame.T_world_cam is None or frame.intrinsics is None:
            raise InvalidInputError(
                f"{where}: perception 'aria_gt' takes the camera pose from the recording, and this frame has none; "
                "put an MPS closed-loop trajectory (mps/slam/closed_loop_trajectory.csv) or an ADT "
                "aria_trajectory.csv beside the .vrs, or pass --trajectory")
        if frame.depth_m is None:  # poses only: the wearer's path, no surface (0 = invalid), declared as such
            frame = dataclasses.replace(frame, depth_m=np.zeros(frame.shape_hw, np.float32), pose_only=True)
        instances: tuple[InstanceObservation, ...] = tuple(frame.meta.get("instances", ()))
        tag, score = frame.meta.get("scene_tag"), 1.0
        if tag is None:
            tag, score = room_from_objects([i.label for i in instances], self.config)
        try:
            return [FramePerception(frame, instances, tag, score if tag is not None else 1.0)]
        except InvalidInputError as exc:
            raise InvalidInputError(f"{where}: perception 'aria_gt': {exc}") from exc

    def flush(self) -> list[FramePerception]:
        return []

    def reset(self) -> None:
        pass


def answerable(has_depth: bool, has_objects: bool) -> str:
    """Which question kinds the 'aria_gt' backend can answer for a recording with these inputs."""
    if has_depth and has_objects:
        return ("path (how far have I walked, what path did I take), place (where am I, which room was I in: rooms "
                "named from the ground-truth objects in view) and object questions (where is the X)")
    if has_depth:
        return "path questions (how far have I walked, what path did I take); no objects, no room names"
    return ("path questions (how far have I walked, what path did I take); no depth: no objects and no room names "
            "(a depth model and a detector need weights: docs/backends.md)")


def describe_run(reader: Any) -> str:
    """The line `directme run` prints for an Aria input: what the recording supplies and what can be asked."""
    gt = getattr(reader, "gt", None)
    has_objects = gt is not None and gt.segmentation is not None
    return (f"aria (no model weights): {reader.describe()}\n"
            f"answers: {answerable(gt is not None, has_objects)}")


def require_poses(reader: Any, name: str) -> None:
    """Without weights an Aria recording is only usable with its device poses: refuse it early, saying how."""
    if getattr(reader, "trajectory", None) is None:
        raise InvalidInputError(
            f"{name}: the Aria recording has no device trajectory beside it, and without model weights the poses "
            "can only come from one: run Project Aria MPS and put mps/slam/closed_loop_trajectory.csv next to "
            "the .vrs (or pass --trajectory CSV; ADT sequences ship aria_trajectory.csv), or give a depth and pose "
            "model: --config perception-da3-gdino-sam2 (weights on disk; docs/backends.md)")


def build(options: Optional[Mapping[str, Any]] = None) -> AriaGtPerception:
    return AriaGtPerception(AriaGtConfig.from_options(options or {}))
