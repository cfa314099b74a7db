"""The protocol every part of the memory follows, and the frame they are updated with.

A memory component owns one part of the memory's state: the object table (object_store.py), the ego log
(ego_log.py), the places (places.py), the pose correction and its stages (pose/). Each one

- changes its state only in ``update(step)`` and its own methods (nobody else writes its fields);
- hands its whole state out as ``to_state()`` - JSON-able metadata and named numpy arrays - and is rebuilt
  from it by ``from_state``, which checks it (raising ``directme._atomic.StateError`` naming the key);
- reads its settings from its own section of ``MemoryConfig`` (``sections``: the ones it reads, its own first).

``SpatialMemory.update`` walks its components in a fixed order with one ``FrameStep``; persist.py saves each
component's state under its ``key`` and loads them back in the same order (a component may read the ones
loaded before it, e.g. the places read the ego log's positions).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Optional, Protocol, runtime_checkable

import numpy as np

from ..types import FramePerception

if TYPE_CHECKING:
    from .association import Obs
    from .config import MemoryConfig
    from .ego_log import EgoLog
    from .object_store import ObjectStore
    from .pose.corrector import PoseCorrector

State = tuple[dict[str, Any], dict[str, np.ndarray]]  # (JSON-able metadata, named arrays)


@runtime_checkable
class MemoryComponent(Protocol):
    """One part of the memory's state with its update, its state out and in, and its config sections."""

    key: ClassVar[str]  # its name in ``SpatialMemory.components`` and in a save
    sections: ClassVar[tuple[str, ...]]  # the ``MemoryConfig`` sections it reads, its own first

    def update(self, step: "FrameStep") -> object:
        """Take one frame (a pose stage returns its correction, others None)."""

    def to_state(self) -> State:
        """The whole state: (JSON-able metadata, named arrays); ``from_state`` of it restores it bit for bit."""

    @classmethod
    def from_state(cls, cfg: "MemoryConfig", state: State, loaded: Mapping[str, Any]) -> Any:
        """The component saved as ``state``, checked; ``loaded``: the components loaded before it, by key."""


@dataclass(eq=False)
class FrameStep:
    """One frame on its way through the components (``SpatialMemory.update``): the input, its pose under the
    current correction, what earlier components found for later ones."""

    fp_input: FramePerception  # the frame as given (input world frame)
    objects: "ObjectStore"  # the components a later one reads (the relocaliser: the objects and the ego log)
    ego: "EgoLog"
    pose: "PoseCorrector"
    lift: Callable[[FramePerception, np.ndarray], list]  # instances, vertical -> observations (ingest.py)
    C_before: np.ndarray = field(init=False)  # the correction before this frame
    up: Optional[np.ndarray] = None  # the vertical the pose stages work about (None while being estimated)
    settled_frames: Optional[list] = None  # the frames the vertical was estimated on, when it settled just now
    frame_pos: int = -1  # the frame's position in the ego log (set by the ego log)
    matched_track_ids: list = field(default_factory=list)  # tracker ids of the instances used (set by the objects)
    _fp: Optional[FramePerception] = field(default=None, init=False, repr=False)
    _obs: Optional[list] = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.C_before = self.pose.T_mem_input.copy()

    @property
    def t_s(self) -> float:
        return self.fp_input.t_s

    @property
    def T_input(self) -> np.ndarray:
        """The frame's pose in the input world frame."""
        return self.fp_input.frame.T_world_cam.matrix

    @property
    def T_mem_cam(self) -> np.ndarray:
        """The frame's pose in the memory frame under the current correction."""
        return self.pose.T_mem_input @ self.T_input

    @property
    def up_world(self) -> np.ndarray:
        """The memory's vertical as of this frame (pose/vertical.py; once the vertical stage has taken the frame)."""
        up = self.pose.vertical.as_of(self.t_s)
        if up is None:
            raise RuntimeError("the vertical is asked for before the vertical stage took the frame")
        return up

    @property
    def fp(self) -> FramePerception:
        """The frame with its pose under the current correction (the input's own while there is none)."""
        if self._fp is None:
            self._fp = self.pose.corrected(self.fp_input)
        return self._fp

    def moved(self) -> None:
        """The correction changed: the pose and the observations are recomputed when next asked for."""
        self._fp = None
        self._obs = None

    def observations(self) -> "list[Obs]":
        """This frame's instances lifted to world points under the current correction (lifted once per pose)."""
        if self._obs is None:
            self._obs = self.lift(self.fp, self.up_world)
        return self._obs
