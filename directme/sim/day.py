"""A wearer's day through a world that keeps growing: homes, offices and shops, each an apartment-style
layout furnished like the episodes' (layout.py, world.py), laid out side by side in one world frame.
The wearer visits a new place or returns to an earlier one (whose objects stayed where they were left),
walks there as in an episode (wearer.Scenario), then travels (a gap without frames) to the next place.

Streamed: ``DayStream`` is an iterable of ``DayFrame``; only the current visit's scene and its
low-resolution id/depth images are held, never the day. No RGB is rendered: the oracle
(oracle.OraclePerception, with its noise presets) reads instance ids and z-depth from a ray cast at
``DayConfig.width x height`` (128 x 96 by default), and the frame carries a flat grey image. Deterministic
for a seed: every visit draws from generators seeded by (seed, visit)."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Iterator, Optional, Union

import numpy as np

from ..errors import InvalidInputError
from ..geometry import Intrinsics
from ..types import Frame, FramePerception, Question
from .catalog import ADDABLE, CATALOG, CORRIDOR
from .episode import Episode, FrameGT, Layout
from .generate import DEFAULT_HFOV_DEG, _objects_gt, camera_pose
from .layout import make_layout
from .oracle import FALSE_POSITIVE_ID_BASE, SWITCHED_ID_BASE, NoisePreset, OraclePerception, get_preset
from .scene import SceneSource
from .wearer import Scenario
from .world import World

PLACE_KINDS = {  # place kind -> the room types its rooms are drawn from (None: a home, as in the episodes)
    "home": None,
    "office": ("office", "office", "office", "kitchen", "bathroom"),
    "shop": ("living room", "bedroom", "dining room", "kitchen"),
}
DAY_SUBTASKS = ("Reachability Judgment", "Distance Comparison", "Ego-centric Position",
                "Relative Position & Orientation Memory")  # questions about where things are around the wearer now
OBJECT_ID_STRIDE = 10_000  # object ids of place p: p * OBJECT_ID_STRIDE + its own id (1..)
PRESET_PIXELS = 320 * 240  # the frame size the oracle's presets were tuned for
DAY_FP_ID_BASE = 10 ** 12  # false-positive track ids of the day: this + global frame index * 16 + j


@dataclass(frozen=True)
class DayConfig:
    """The shape of a day. Durations in minutes of stream time."""

    hours: float = 16.0  # stream length
    fps: float = 1.0  # frames per second of stream time
    width: int = 128  # resolution of the id/depth ray cast the oracle reads
    height: int = 96
    hfov_deg: float = DEFAULT_HFOV_DEG
    new_visit_min: tuple[float, float] = (5.0, 9.0)  # time spent at a place seen for the first time
    return_visit_min: tuple[float, float] = (4.0, 8.0)  # time spent at a place seen before
    return_prob: float = 0.25  # chance that the next visit returns to an earlier place (once there are 2)
    travel_s: tuple[float, float] = (30.0, 120.0)  # gap without frames between two visits
    clutter: int = 40  # extra small things (ADDABLE) put on each place's surfaces when it is built
    place_spacing_m: float = 40.0  # places sit on a grid of this pitch
    revisit_first: int = 2  # the first visits of the last hour return to places 0, 1, ... (late-day questions)
    places_per_row: int = 12

    def __post_init__(self) -> None:
        if not (self.hours > 0 and math.isfinite(self.hours)) or not self.fps > 0:
            raise InvalidInputError(f"need hours > 0 and fps > 0, got {self.hours} h at {self.fps} fps")
        if self.width < 16 or self.height < 16:
            raise InvalidInputError(f"need width, height >= 16, got {self.width}x{self.height}")


@dataclass(frozen=True, eq=False)
class DayFrame:
    """One frame of the day: the oracle's perception (world frame, global ids) and where the wearer is."""

    perception: FramePerception
    place: int  # index of the place (in order of first visit)
    place_kind: str
    visit: int  # index of the visit
    room: str  # room type the wearer stands in
    questions: tuple[Question, ...] = ()  # on a visit's first frame: its questions (DayStream.question_hours)


@dataclass
class Place:
    index: int
    kind: str
    world: World
    eye_m: float


def _shift_layout(layout: Layout, dx: float, dy: float) -> Layout:
    rooms = tuple(dataclasses.replace(r, x0=r.x0 + dx, x1=r.x1 + dx, y0=r.y0 + dy, y1=r.y1 + dy) for r in layout.rooms)
    doors = tuple(dataclasses.replace(d, center_xy=(d.center_xy[0] + dx, d.center_xy[1] + dy)) for d in layout.doors)
    return Layout(rooms, doors, layout.walls_w + np.array([dx, dy, 0.0]), layout.ceiling_m)


class DayStream:
    """Iterable of a day's ``DayFrame`` (see the module docstring); each iteration replays the same day."""

    def __init__(self, seed: int = 0, config: Optional[DayConfig] = None,
                 noise: Union[str, NoisePreset] = "none", question_hours: tuple[tuple[float, float], ...] = (),
                 questions_per_minute: float = 16.0):
        """``question_hours``: visits that start inside one of these (start, end) hour windows carry the
        simulator's questions of the kinds in DAY_SUBTASKS (``DayFrame.questions``)."""
        self.seed, self.config = int(seed), config or DayConfig()
        self.question_hours, self.questions_per_minute = tuple(question_hours), float(questions_per_minute)
        c = self.config
        self.noise = _scaled_preset(get_preset(noise), c.width * c.height)
        self.intrinsics = Intrinsics.from_fov(c.width, c.height, c.hfov_deg)
        self._grey = np.full((c.height, c.width, 3), 128, np.uint8)
        self._grey.flags.writeable = False

    @property
    def n_frames(self) -> int:
        """Frames of the whole day (visits only; travel has none) - known only by walking the schedule."""
        return sum(n for *_, n in self.schedule())

    def schedule(self) -> Iterator[tuple[int, int, bool, float, int]]:
        """(visit, place, is_new, start_s, frames) of each visit, in order (cheap: no scene is built)."""
        c = self.config
        rng = np.random.default_rng([self.seed, 0])
        t, n_places, visit, end_s = 0.0, 0, 0, c.hours * 3600.0
        first_late: Optional[int] = None  # the first visit of the last hour
        while t < end_s:
            back = n_places >= 2 and rng.random() < c.return_prob
            place = int(rng.integers(n_places - 1)) if back else n_places  # never the place just left
            if t >= end_s - 3600.0 and first_late is None:
                first_late = visit
            late = -1 if first_late is None else visit - first_late
            if 0 <= late < min(c.revisit_first, n_places - 1):
                back, place = True, late
            minutes = rng.uniform(*(c.return_visit_min if back else c.new_visit_min))
            frames = max(1, min(int(round(minutes * 60 * c.fps)), int(math.ceil((end_s - t) * c.fps))))
            yield visit, place, not back, t, frames
            n_places += 0 if back else 1
            t += frames / c.fps + float(rng.uniform(*c.travel_s))
            visit += 1

    def _build_place(self, index: int) -> Place:
        c = self.config
        rng = np.random.default_rng([self.seed, 1, index])
        kind = list(PLACE_KINDS)[0 if index == 0 else int(rng.integers(len(PLACE_KINDS)))]
        layout = make_layout(rng, PLACE_KINDS[kind])
        row, col = divmod(index, c.places_per_row)
        world = World(_shift_layout(layout, col * c.place_spacing_m, row * c.place_spacing_m), rng)
        world.furnish()
        rooms = [r.room_id for r in world.layout.rooms if r.room_type != CORRIDOR]
        for _ in range(c.clutter):
            label = ADDABLE[int(rng.integers(len(ADDABLE)))]
            if CATALOG[label].placement != "wall":
                world.add_object(label, rooms[int(rng.integers(len(rooms)))], on_support=True)
        return Place(index, kind, world, float(rng.uniform(1.55, 1.65)))

    def __iter__(self) -> Iterator[DayFrame]:
        places: list[Place] = []
        done = 0  # frames yielded before this visit
        for visit, p, is_new, t0, n in self.schedule():
            if is_new:
                places.append(self._build_place(p))
            yield from self._visit(places[p], visit, t0, n, done)
            done += n

    def _visit(self, place: Place, visit: int, t0: float, n: int, done: int) -> Iterator[DayFrame]:
        """The frames of one visit: the wearer's scenario, then per frame an id/depth ray cast and the oracle."""
        c, K = self.config, self.intrinsics
        rng = np.random.default_rng([self.seed, 2, visit])
        times = t0 + np.arange(n) / c.fps
        scenario = Scenario(place.world, rng, float(times[-1]) + 1.0 / c.fps, place.eye_m, start_t_s=t0)
        scenario.run()
        xyyp = scenario.poses_at(times)
        jitter = rng.normal(0, 1.0, size=(n, 2))  # head jitter, degrees
        poses = [camera_pose(x, y, place.eye_m, yaw + math.radians(j[0]), pitch + j[1])
                 for (x, y, yaw, pitch), j in zip(xyyp, jitter)]
        objects = _objects_gt(place.world)
        source = SceneSource(place.world.layout, objects, K, self.seed + place.index)
        images, frames_gt = [], []
        for i, (pose, t) in enumerate(zip(poses, times)):
            img = source.render_pose(pose, float(t), i, with_rgb=False)
            counts = np.bincount(img.instance_ids.ravel())
            vis = np.nonzero(counts[1:])[0] + 1
            room = place.world.layout.room_at(xyyp[i, 0], xyyp[i, 1])
            frames_gt.append(FrameGT(i, float(t), pose, room.room_id, room.room_type,
                                     tuple(int(v) for v in vis), tuple(int(counts[v]) for v in vis)))
            images.append((img.instance_ids, img.depth_m))
        uid = f"day_seed{self.seed}_visit{visit}"
        ep = Episode(uid, self.seed, c.fps, K, place.world.layout, objects, tuple(frames_gt), (), (), source)
        asked = self._questions(ep, scenario.events, visit, place.index, t0) \
            if any(a * 3600 <= t0 < b * 3600 for a, b in self.question_hours) else ()
        oracle = OraclePerception(ep, self.noise, seed=self.seed * 100_003 + visit)
        base = place.index * OBJECT_ID_STRIDE
        for i, (ids, depth) in enumerate(images):
            images[i] = None  # the visit's images are let go as they are used
            gt = frames_gt[i]
            fp = oracle.perceive(Frame(gt.t_s, self._grey, depth, gt.T_world_cam, K, index=i, source=uid,
                                       meta={"instance_ids": ids}))
            g = done + i
            insts = tuple(dataclasses.replace(o, track_id=_global_track(o.track_id, base, g)) for o in fp.instances)
            frame = dataclasses.replace(fp.frame, index=g, source=f"day_seed{self.seed}")
            yield DayFrame(FramePerception(frame, insts, fp.scene_tag, fp.scene_tag_score), place.index, place.kind,
                           visit, gt.room, asked if i == 0 else ())

    def _questions(self, ep: Episode, events, visit: int, place: int, t0: float) -> tuple[Question, ...]:
        """The simulator's questions on the visit seen alone (times from its start, as in an episode), of the
        kinds whose answer the place the wearer is in decides, put back at the day's times."""
        from .question_gen import generate_questions

        def shift(t: float) -> float:
            return t - t0

        objects = tuple(dataclasses.replace(o, positions_w=tuple((shift(t), c) for t, c in o.positions_w),
                                            present=tuple((shift(a), shift(b)) for a, b in o.present))
                        for o in ep.objects)
        frames = tuple(dataclasses.replace(g, t_s=shift(g.t_s)) for g in ep.frames_gt)
        evs = tuple(dataclasses.replace(e, t_s=shift(e.t_s)) for e in sorted(events, key=lambda e: e.t_s))
        local = dataclasses.replace(ep, objects=objects, frames_gt=frames, events=evs)
        qs = generate_questions(local, np.random.default_rng([self.seed, 3, visit]), self.questions_per_minute)
        return tuple(dataclasses.replace(q, qid=f"{ep.video_uid}_{q.qid}", t_s=q.t_s + t0,
                                         meta={**q.meta, "visit": visit, "place": place})
                     for q in qs if q.subtask in DAY_SUBTASKS)


def _scaled_preset(preset: NoisePreset, pixels: int) -> NoisePreset:
    """The preset's pixel sizes (tuned for 320 x 240 frames) scaled to a ``pixels``-pixel frame, so the
    smallest object reported subtends the same solid angle."""
    area, side = pixels / PRESET_PIXELS, math.sqrt(pixels / PRESET_PIXELS)
    return dataclasses.replace(preset, min_mask_pixels=max(1, int(round(preset.min_mask_pixels * area))),
                               mask_jitter_px=int(round(preset.mask_jitter_px * side)))


def _global_track(track_id: int, base: int, frame_index: int) -> int:
    """A visit's track id as a day-wide one: objects offset by their place, false positives by the day's frame."""
    if track_id >= SWITCHED_ID_BASE:
        oid, n = divmod(track_id - SWITCHED_ID_BASE, 1000)
        return SWITCHED_ID_BASE + (base + oid) * 1000 + n
    if track_id >= FALSE_POSITIVE_ID_BASE:
        return DAY_FP_ID_BASE + frame_index * 16 + (track_id - FALSE_POSITIVE_ID_BASE) % 16
    return base + track_id


__all__ = ["DAY_SUBTASKS", "DayConfig", "DayFrame", "DayStream", "PLACE_KINDS"]
