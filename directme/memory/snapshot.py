"""Read-only view of the spatial memory as it was at time t (the contract the query layer uses).

Everything in a ``MemorySnapshot`` is derived only from observations with timestamp <= ``t_s``.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from ..geometry import Pose, nearest_ground_distance_m
from ..types import TextEnum


@dataclass(frozen=True)
class KeyframeRef:
    """A stored frame that shows an object: stream time, frame index, and the object's pixel box."""

    t_s: float
    frame_index: int
    box_xyxy: Optional[tuple[float, float, float, float]] = None
    visibility: float = 0.0  # fraction / quality score used when choosing keyframes


@dataclass(frozen=True, eq=False)
class ObjectNode:
    """One physical object as remembered at the snapshot time (world frame, metres, seconds)."""

    node_id: str
    label: str
    label_votes: Mapping[str, float]
    position_w: np.ndarray  # canonical (pooled) position of the object's current placement
    first_seen_s: float
    last_seen_s: float
    n_obs: int
    position_history: tuple[tuple[float, np.ndarray], ...] = ()  # (time the placement was first seen, position)
    keyframes: tuple[KeyframeRef, ...] = ()
    extent_m: Optional[np.ndarray] = None  # axis-aligned size of its points (3,)
    present: bool = True  # its presence belief (memory/presence.py) is at least memory.gone.present_p
    gone_since_s: Optional[float] = None
    place_id: Optional[str] = None
    attributes: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"color": "red"}
    obs_times_s: np.ndarray = field(default_factory=lambda: np.zeros(0))  # times of its observations <= snapshot t
    presence_p: float = 1.0  # probability that it is at its place, from sightings and views without it
    carried: bool = False  # with the wearer: seen close to the camera and moving with it (memory/ingest.py carry)
    measured_extent_m: Optional[np.ndarray] = None  # its size measured over its clear views (memory/extent.py) (3,)
    label_first_seen_s: Mapping[str, float] = field(default_factory=dict)  # per label: its first sighting (merges kept)


def record_index(node_id: object) -> int:
    """The record index an object's node id ``"o<index>"`` names (-1 for anything else, e.g. "o01" or a place)."""
    digits = node_id[1:] if isinstance(node_id, str) and node_id[:1] == "o" else ""
    if not (digits.isascii() and digits.isdigit()) or (len(digits) > 1 and digits[0] == "0"):
        return -1
    return int(digits)


@dataclass(frozen=True, eq=False)
class PlaceNode:
    """A cluster of the wearer's positions with one scene tag (e.g. a kitchen)."""

    place_id: str
    tag: str
    center_w: np.ndarray
    spread_m: float
    times_s: tuple[float, ...] = ()  # start time of each visit
    visits_s: tuple[tuple[float, float], ...] = ()  # (first, last) frame time of each visit
    n_frames: int = 0  # ego frames assigned to this place


@dataclass(frozen=True, eq=False)
class EgoTrack:
    """The wearer's camera poses and scene tags up to the snapshot time."""

    times_s: np.ndarray  # (N,)
    T_world_cam: np.ndarray  # (N, 4, 4)
    scene_tags: tuple[Optional[str], ...] = ()
    frame_indices: tuple[int, ...] = ()
    K: Optional[np.ndarray] = None  # (N, 6) fx, fy, cx, cy, width, height of each frame's camera (zeros: unknown)
    far_edges_m: Optional[np.ndarray] = None  # (N, bins, 3): where each frame saw the walls end (memory/outline.py)

    def __len__(self) -> int:
        return int(len(self.times_s))

    def pose_at(self, t_s: float) -> Optional[Pose]:
        """Latest pose with time <= t_s (never one from the future)."""
        if len(self.times_s) == 0:
            return None
        i = int(np.searchsorted(self.times_s, t_s, side="right")) - 1
        return None if i < 0 else Pose(self.T_world_cam[i])

    def nearest_approach_m(self, point_w: np.ndarray, t0_s: float, t1_s: float, up_world: Optional[np.ndarray]) -> float:
        """The wearer's nearest distance along the ground to ``point_w`` over the frames from the one at (or last
        before) ``t0_s`` to the last one at or before ``t1_s`` (inf for none); the live log's twin is
        ``EgoLog.nearest_since``."""
        i0 = max(int(np.searchsorted(self.times_s, t0_s, side="right")) - 1, 0)
        i1 = int(np.searchsorted(self.times_s, t1_s, side="right"))
        return nearest_ground_distance_m(self.T_world_cam[i0:max(i0, i1), :3, 3], point_w, up_world)


class EventKind(TextEnum):
    """What changed."""

    APPEARED = "appeared"
    MOVED = "moved"
    REMOVED = "removed"
    RETURNED = "returned"
    PICKED_UP = "picked_up"  # seen moving with the camera: carried by the wearer
    PUT_DOWN = "put_down"  # a carry ended: seen at rest, away from the camera


@dataclass(frozen=True)
class ChangeEvent:
    """One change of one object, in the world frame (metres, seconds)."""

    kind: EventKind
    node_id: str
    label: str
    after_s: float  # the change happened after this time (-inf: unknown) ...
    before_s: float  # ... and by this time (the first observation that shows it)
    known_s: float  # when memory concluded it (<= the snapshot time)
    position_from_w: Optional[tuple[float, float, float]]  # where it was (None for an appearance)
    position_to_w: Optional[tuple[float, float, float]]  # where it is after (None for a removal)
    confidence: float  # presence probability after an appearance / return; after a removal, one minus the
    # lowest presence probability until it was seen again;
    # for a move, the share of the new placement's sightings among those since the move began
    evidence: str  # the observations it rests on, in words


class LazyGraph:
    """A graph not built yet: ``MemorySnapshot.graph`` calls ``build`` on first access and keeps the result (the
    query layer never reads the graph, so a question does not pay for it)."""

    __slots__ = ("build", "lock")

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build, self.lock = build, threading.Lock()


class _GraphField:
    """The ``graph`` field: stores a graph or a ``LazyGraph``; reading it builds a lazy one once (thread-safe)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = "_" + name

    def __get__(self, obj: Any, owner: type = None) -> Any:
        if obj is None:
            raise AttributeError(self._slot)  # no default: the field is required
        value = obj.__dict__[self._slot]
        if isinstance(value, LazyGraph):
            with value.lock:  # one build per snapshot; other threads wait for it
                if obj.__dict__[self._slot] is value:
                    obj.__dict__[self._slot] = value.build()
            value = obj.__dict__[self._slot]
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self._slot] = value


@dataclass(frozen=True, eq=False)
class MemorySnapshot:
    """The memory as of ``t_s``: objects, places, the ego track and the scene graph."""

    t_s: float
    objects: Mapping[str, ObjectNode]
    places: Mapping[str, PlaceNode]
    ego: EgoTrack
    graph: Any = _GraphField()  # networkx.Graph, node kinds "object" / "place" / "ego" (a LazyGraph: built on access)
    up_world: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    changes: Sequence[ChangeEvent] = ()  # change events known at t_s, in the order they happened (memory/events.py)

    @property
    def current_pose(self) -> Optional[Pose]:
        return self.ego.pose_at(self.t_s)
