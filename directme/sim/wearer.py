"""The wearer's day: walks between rooms through doors (1.0-1.4 m/s, straight lines inside the
furniture-free inner rectangles), looks around, visits objects, picks things up and puts them
down elsewhere; meanwhile, out of the wearer's sight, objects are added and removed.

Carried objects are not rendered (held out of view): their position is None from pick-up to
put-down, where they reappear. The result is a list of pose keys (t, x, y, yaw, pitch),
linearly interpolated at frame times, and the event log."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .catalog import ADDABLE, CATALOG, CORRIDOR
from .episode import SimEvent
from .layout import room_path
from .world import SimObject, World

WALK_SPEED_MPS = (1.0, 1.4)
TURN_SPEED_DPS = (90.0, 150.0)  # head/body turn speed while walking or looking around
WALK_PITCH_DEG = (-18.0, -8.0)  # slight pitch down while walking
REACH_STAND_M = (0.45, 0.7)  # ground distance to an object the wearer visits or picks up
CHANGE_PROB = 0.5  # after each activity: chance of an off-screen add or remove


class Scenario:
    """Simulates the wearer and the scene changes until ``duration_s`` seconds, from ``start_t_s`` (a visit
    of a day that began earlier starts there)."""

    def __init__(self, world: World, rng: np.random.Generator, duration_s: float, eye_height_m: float,
                 start_t_s: float = 0.0):
        self.world, self.rng, self.duration_s, self.eye_m = world, rng, duration_s, eye_height_m
        self.events: list[SimEvent] = []
        rooms = [r for r in world.layout.rooms if r.room_type != CORRIDOR]
        self.room_id = rooms[int(rng.integers(len(rooms)))].room_id
        x, y = self._random_inner_point(self.room_id)
        self.keys: list[tuple[float, float, float, float, float]] = [(float(start_t_s), x, y, float(rng.uniform(-math.pi, math.pi)),
                                                                       -12.0)]

    # ------------------------------------------------------------ state helpers
    @property
    def t(self) -> float:
        return self.keys[-1][0]

    @property
    def xy(self) -> tuple[float, float]:
        return self.keys[-1][1], self.keys[-1][2]

    def _key(self, dt: float, x: float, y: float, yaw: float, pitch: float) -> None:
        self.keys.append((self.t + max(dt, 0.05), x, y, yaw, pitch))

    def _random_inner_point(self, room_id: int) -> tuple[float, float]:
        x0, y0, x1, y1 = self.world.inner[room_id]
        return float(self.rng.uniform(x0, x1)), float(self.rng.uniform(y0, y1))

    def _clamp_inner(self, room_id: int, x: float, y: float) -> tuple[float, float]:
        x0, y0, x1, y1 = self.world.inner[room_id]
        return min(max(x, x0), x1), min(max(y, y0), y1)

    # ------------------------------------------------------------ motion primitives
    def turn_to(self, yaw_target: float, pitch: Optional[float] = None) -> None:
        _, x, y, yaw, p = self.keys[-1]
        d = (yaw_target - yaw + math.pi) % (2 * math.pi) - math.pi
        speed = math.radians(self.rng.uniform(*TURN_SPEED_DPS))
        self._key(abs(d) / speed, x, y, yaw + d, p if pitch is None else pitch)

    def walk_to(self, x: float, y: float, speed: float) -> None:
        x0, y0 = self.xy
        dist = math.hypot(x - x0, y - y0)
        if dist < 0.05:
            return
        self.turn_to(math.atan2(y - y0, x - x0), float(self.rng.uniform(*WALK_PITCH_DEG)))
        _, _, _, yaw, pitch = self.keys[-1]
        self._key(dist / speed, x, y, yaw, pitch)

    def wait(self, seconds: float) -> None:
        _, x, y, yaw, pitch = self.keys[-1]
        self._key(seconds, x, y, yaw + math.radians(self.rng.normal(0, 3)), pitch)

    def look_around(self) -> None:
        """A few head/body turns of 40-180 degrees with short pauses."""
        for _ in range(int(self.rng.integers(1, 4))):
            yaw = self.keys[-1][3] + math.radians(self.rng.choice([-1, 1]) * self.rng.uniform(40, 180))
            self.turn_to(yaw, float(self.rng.uniform(-25, -5)))
            self.wait(float(self.rng.uniform(0.5, 2.0)))

    def face(self, point_w: np.ndarray) -> None:
        x, y = self.xy
        horiz = math.hypot(point_w[0] - x, point_w[1] - y)
        pitch = math.degrees(math.atan2(point_w[2] - self.eye_m, max(horiz, 0.1)))
        self.turn_to(math.atan2(point_w[1] - y, point_w[0] - x), float(np.clip(pitch, -60, 10)))

    def go_to_room(self, room_id: int, target: Optional[tuple[float, float]] = None) -> None:
        """Walk to ``target`` (default: a random walkable point) in ``room_id`` through doors."""
        speed = float(self.rng.uniform(*WALK_SPEED_MPS))
        self.walk_to(*self._clamp_inner(self.room_id, *self.xy), speed)
        for nxt, door in room_path(self.world.layout, self.room_id, room_id):
            self.walk_to(*self._clamp_inner(self.room_id, *door.center_xy), speed)
            self.walk_to(*door.center_xy, speed)
            self.walk_to(*self._clamp_inner(nxt, *door.center_xy), speed)
            self.room_id = nxt
        self.walk_to(*(target or self._random_inner_point(room_id)), speed)

    def approach(self, obj: SimObject) -> None:
        """Walk up to ``obj`` (ground distance REACH_STAND_M, or as close as furniture allows) and look at it."""
        c = obj.center_w
        self.go_to_room(obj.room_id, self._clamp_inner(obj.room_id, c[0], c[1]))
        x, y = self.xy
        goal = float(self.rng.uniform(*REACH_STAND_M))
        for _ in range(60):
            d = math.hypot(c[0] - x, c[1] - y)
            if d <= goal:
                break
            nx, ny = x + 0.05 * (c[0] - x) / d, y + 0.05 * (c[1] - y) / d
            if self.world.blocked(nx, ny, radius=0.22):
                break
            x, y = nx, ny
        self.walk_to(x, y, float(self.rng.uniform(*WALK_SPEED_MPS)))
        self.face(c)
        self.wait(float(self.rng.uniform(1.0, 2.5)))

    def leave_object(self) -> None:
        self.walk_to(*self._clamp_inner(self.room_id, *self.xy), float(self.rng.uniform(*WALK_SPEED_MPS)))

    # ------------------------------------------------------------ activities
    def _event(self, kind: str, obj: SimObject, t_s: float) -> None:
        pos = None if obj.center_w is None else tuple(float(v) for v in obj.center_w)
        room = self.world.layout.room(obj.room_id).room_type
        self.events.append(SimEvent(t_s, kind, obj.object_id, obj.label, room, pos))

    def _present_objects(self, movable: bool) -> list[SimObject]:
        return [o for o in self.world.objects if o.center_w is not None and (o.kind.movable or not movable)]

    def pick_and_place(self) -> None:
        movables = self._present_objects(movable=True)
        if not movables:
            return
        labels = [o.label for o in self.world.objects]
        unique = [o for o in movables if labels.count(o.label) == 1]  # "the <label>" questions need these
        pool = unique if unique and self.rng.random() < 0.7 else movables
        obj = pool[int(self.rng.integers(len(pool)))]
        self.approach(obj)
        self._event("pickup", obj, self.t)
        obj.center_w = None
        obj.history.append((self.t, None))
        self.leave_object()
        rooms = [r.room_id for r in self.world.layout.rooms if r.room_type != CORRIDOR]
        dest = rooms[int(self.rng.integers(len(rooms)))] if self.rng.random() < 0.7 else obj.room_id
        spot = self.world.free_surface_spot(dest, obj.kind) or self.world.free_surface_spot(obj.room_id, obj.kind)
        if spot is None:  # nowhere to put it: put it back where it was
            spot = (np.asarray(obj.history[-2][1]), obj.extent_m, obj.support_id)
            dest = obj.room_id
        target = SimObject(-1, obj.kind, spot[1], spot[0], dest)
        self.approach(target)
        obj.center_w, obj.extent_m, obj.support_id, obj.room_id = spot[0], spot[1], spot[2], dest
        obj.history.append((self.t, tuple(float(v) for v in spot[0])))
        self._event("putdown", obj, self.t)
        self.wait(float(self.rng.uniform(1.5, 3.0)))
        self.leave_object()

    def offscreen_change(self) -> None:
        """Add or remove an object in a room the wearer is not in."""
        others = [r.room_id for r in self.world.layout.rooms if r.room_id != self.room_id]
        room_id = others[int(self.rng.integers(len(others)))]
        t = self.t + 0.01
        candidates = [o for o in self._present_objects(movable=True) if o.room_id == room_id]
        if candidates and self.rng.random() < 0.5:
            obj = candidates[int(self.rng.integers(len(candidates)))]
            self._event("remove", obj, t)
            obj.center_w = None
            obj.history.append((t, None))
            obj.present[-1][1] = t
            return
        label = ADDABLE[int(self.rng.integers(len(ADDABLE)))]
        if CATALOG[label].placement == "surface" and not any(
                o.kind.surface and o.room_id == room_id for o in self.world.objects):
            return
        obj = self.world.add_object(label, room_id, t_s=t)
        if obj is not None:
            self._event("add", obj, t)

    def run(self) -> None:
        while self.t < self.duration_s:
            r = self.rng.random()
            if r < 0.3:
                rooms = [rm.room_id for rm in self.world.layout.rooms if rm.room_id != self.room_id]
                self.go_to_room(rooms[int(self.rng.integers(len(rooms)))])
                self.look_around()
            elif r < 0.5:
                here = [o for o in self._present_objects(movable=False) if o.room_id == self.room_id
                        and o.kind.placement != "hang"]
                if here:
                    self.approach(here[int(self.rng.integers(len(here)))])
                    self.leave_object()
            elif r < 0.85:
                self.pick_and_place()
            else:
                self.walk_to(*self._random_inner_point(self.room_id), float(self.rng.uniform(*WALK_SPEED_MPS)))
                self.look_around()
            if self.rng.random() < CHANGE_PROB:
                self.offscreen_change()

    def poses_at(self, times_s: np.ndarray) -> np.ndarray:
        """(N, 4) [x, y, yaw_rad, pitch_deg] linearly interpolated at ``times_s``."""
        k = np.asarray(self.keys)
        return np.stack([np.interp(times_s, k[:, 0], k[:, i]) for i in (1, 2, 3, 4)], axis=1)
