"""Episode data: the apartment layout, per-object and per-frame ground truth, the event log and
the questions. Frames are rendered (or read from disk) lazily, one at a time."""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional, Union

import numpy as np

from ..errors import InvalidInputError
from ..geometry import Intrinsics, Pose
from ..types import Frame, Question
from .oracle import NoisePreset, OraclePerception

UP_WORLD = np.array([0.0, 0.0, 1.0])  # world frame: z up (gravity), metres


@dataclass(frozen=True)
class Room:
    """A rectangular room: floor rectangle [x0, x1] x [y0, y1] in world metres."""

    room_id: int
    room_type: str
    x0: float
    y0: float
    x1: float
    y1: float

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        return self.x0 - margin <= x <= self.x1 + margin and self.y0 - margin <= y <= self.y1 + margin

    @property
    def center_xy(self) -> tuple[float, float]:
        return (0.5 * (self.x0 + self.x1), 0.5 * (self.y0 + self.y1))


@dataclass(frozen=True)
class Door:
    """A gap in a wall between two rooms: its centre, width and the wall axis ('x' or 'y')."""

    room_a: int
    room_b: int
    center_xy: tuple[float, float]
    width_m: float
    wall_axis: str  # "x": the wall runs along x (door crossed along y), "y": runs along y


@dataclass(frozen=True, eq=False)
class Layout:
    """Rooms, doors and wall boxes (N, 2, 3) as [min corner, max corner] in world metres."""

    rooms: tuple[Room, ...]
    doors: tuple[Door, ...]
    walls_w: np.ndarray
    ceiling_m: float = 2.6

    def room_at(self, x: float, y: float) -> Optional[Room]:
        for room in self.rooms:
            if room.contains(x, y):
                return room
        for room in self.rooms:  # inside a wall/doorway: nearest room
            if room.contains(x, y, margin=0.15):
                return room
        return None

    def room(self, room_id: int) -> Room:
        return self.rooms[room_id]


@dataclass(frozen=True, eq=False)
class ObjectGT:
    """Ground truth of one object. ``object_id`` (>= 1) is its value in instance-id images.

    ``positions_w``: [(t_s, centre (3,) or None)] sorted by time, each valid from t_s until the next
    entry; None = not in the scene (not yet added, carried by the wearer, or removed).
    ``present``: [(t_start, t_end)] intervals where it is in the scene (t_end = inf: till the end).
    """

    object_id: int
    label: str
    size_m: tuple[float, float, float]
    positions_w: tuple[tuple[float, Optional[tuple[float, float, float]]], ...]
    colour_rgb: tuple[int, int, int] = (128, 128, 128)
    movable: bool = False
    present: tuple[tuple[float, float], ...] = ((0.0, math.inf),)

    def position_at(self, t_s: float) -> Optional[np.ndarray]:
        times = [p[0] for p in self.positions_w]
        i = bisect.bisect_right(times, t_s) - 1
        if i < 0 or self.positions_w[i][1] is None:
            return None
        return np.asarray(self.positions_w[i][1], dtype=np.float64)

    def present_at(self, t_s: float) -> bool:
        return self.position_at(t_s) is not None

    @property
    def half_extent_xy_m(self) -> float:
        return 0.5 * max(self.size_m[0], self.size_m[1])


@dataclass(frozen=True)
class SimEvent:
    """Something that changed the scene: kind in pickup | putdown | add | remove."""

    t_s: float
    kind: str
    object_id: int
    label: str
    room: str
    position_w: Optional[tuple[float, float, float]] = None


@dataclass(frozen=True, eq=False)
class FrameGT:
    """Ground truth of one frame (the images themselves are rendered lazily)."""

    index: int
    t_s: float
    T_world_cam: Pose
    room_id: int
    room: str  # scene tag = room type
    visible_ids: tuple[int, ...] = ()  # objects showing >= 1 pixel in the half-resolution visibility pass
    visible_pixels: tuple[int, ...] = ()  # their pixel counts there (same order); "seen" applies a threshold


@dataclass(frozen=True, eq=False)
class RenderedFrame:
    """Images of one frame: RGB uint8 (H, W, 3), z-depth in metres (H, W), instance ids (H, W; 0 = none)."""

    rgb: np.ndarray
    depth_m: np.ndarray
    instance_ids: np.ndarray


@dataclass(frozen=True, eq=False)
class Episode:
    """A synthetic egocentric episode with exact ground truth.

    ``frames()`` yields ``directme.types.Frame`` with depth, pose and intrinsics filled and
    ``meta = {"instance_ids": (H, W) int32, "room": str, "visible_ids": tuple}``.
    """

    video_uid: str
    seed: int
    fps: float
    intrinsics: Intrinsics
    layout: Layout
    objects: tuple[ObjectGT, ...]
    frames_gt: tuple[FrameGT, ...]
    events: tuple[SimEvent, ...]
    questions: tuple[Question, ...]
    source: Any = field(default=None, repr=False)  # renders / reads frame images by index
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_frames(self) -> int:
        return len(self.frames_gt)

    @property
    def duration_s(self) -> float:
        return self.n_frames / self.fps

    @property
    def up_world(self) -> np.ndarray:
        return UP_WORLD.copy()

    def object(self, object_id: int) -> ObjectGT:
        obj = self.objects[object_id - 1]
        if obj.object_id != object_id:
            raise InvalidInputError(f"episode {self.video_uid}: object ids must be 1..N in order")
        return obj

    def frame_index_at(self, t_s: float) -> int:
        """Index of the last frame with time <= t_s (-1 before the first)."""
        return min(int(math.floor(t_s * self.fps + 1e-6)), self.n_frames - 1)

    def render(self, index: int) -> RenderedFrame:
        if not 0 <= index < self.n_frames:
            raise InvalidInputError(f"episode {self.video_uid}: frame {index} out of range 0..{self.n_frames - 1}")
        return self.source.render(index)

    def frame(self, index: int) -> Frame:
        gt = self.frames_gt[index]
        img = self.render(index)
        return Frame(t_s=gt.t_s, rgb=img.rgb, depth_m=img.depth_m, T_world_cam=gt.T_world_cam,
                     intrinsics=self.intrinsics, index=index, source=self.video_uid,
                     meta={"instance_ids": img.instance_ids, "room": gt.room, "visible_ids": gt.visible_ids})

    def frames(self, start: int = 0, stop: Optional[int] = None) -> Iterator[Frame]:
        """Frames start..stop-1, rendered one at a time (nothing is kept in memory)."""
        for i in range(start, self.n_frames if stop is None else min(stop, self.n_frames)):
            yield self.frame(i)

    def oracle_perception(self, noise: Union[str, NoisePreset] = "none", seed: int = 0) -> OraclePerception:
        """This episode's ground truth replayed as perception, with seeded ``noise`` (a preset name or a
        NoisePreset): what the agent's 'oracle' backend asks for (directme.perception.OracleEpisode)."""
        return OraclePerception(self, noise=noise, seed=seed)

    def truthfed_perception(self, options: Optional[Mapping[str, Any]] = None, seed: int = 0) -> Any:
        """The model pipeline on this episode, each network's forward replaced by a stand-in returning the
        ground truth in that network's format (``directme.sim.truthfed``; options: ``TruthFedConfig``)."""
        from .truthfed.perception import TruthFedConfig, TruthFedPerception

        return TruthFedPerception(self, TruthFedConfig.from_options(options, seed=seed))

    def questions_by_subtask(self) -> dict[str, list[Question]]:
        out: dict[str, list[Question]] = {}
        for q in self.questions:
            out.setdefault(q.subtask, []).append(q)
        return out
