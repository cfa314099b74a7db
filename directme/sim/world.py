"""Furnishing the apartment: furniture along walls, small things on surfaces and floors,
pictures on walls; free-spot search for put-downs and additions; each room's walkable
inner rectangle (kept free of furniture, so straight walks inside it never collide)."""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from .catalog import CATALOG, ROOM_CONTENTS, ObjectKind
from .episode import Layout, Room
from .layout import CORNER_RESERVE_M, DOOR_CLEAR_MARGIN_M

WALL_GAP_M = 0.02  # furniture stands this far from its wall
WALK_CLEARANCE_M = 0.35  # walkable area starts this far in front of the deepest furniture
HANG_Z_M = 1.45  # centre height of pictures / mirrors / clocks


@dataclass
class SimObject:
    """An object while the episode is being built (mutable); frozen into ObjectGT afterwards."""

    object_id: int
    kind: ObjectKind
    extent_m: np.ndarray  # world-axis box size (x, y, z)
    center_w: Optional[np.ndarray]
    room_id: int
    support_id: Optional[int] = None
    colour_rgb: tuple[int, int, int] = (128, 128, 128)
    history: list = field(default_factory=list)  # [(t_s, centre or None)]
    present: list = field(default_factory=list)  # [[t_start, t_end]]

    @property
    def label(self) -> str:
        return self.kind.label


def label_colour(label: str, rng: np.random.Generator) -> tuple[int, int, int]:
    """Base colour per label (stable across episodes) with a small per-instance jitter."""
    base = np.random.default_rng(zlib.crc32(label.encode())).integers(40, 230, size=3)
    return tuple(int(c) for c in np.clip(base + rng.integers(-20, 21, size=3), 0, 255))


class World:
    """Rooms + objects of one episode, with the placement helpers the scenario needs."""

    def __init__(self, layout: Layout, rng: np.random.Generator, size_jitter: float = 0.0,
                 size_rng: Optional[np.random.Generator] = None):
        """``size_jitter``: each object's box is its class size scaled by a factor drawn uniformly from
        [1 - jitter, 1 + jitter] on ``size_rng`` (its own stream: 0 leaves every episode as without it)."""
        self.layout, self.rng = layout, rng
        self.size_jitter, self.size_rng = size_jitter, size_rng
        self.objects: list[SimObject] = []
        self._floor_free: dict[tuple[int, str], list[list[float]]] = {}
        self._hang_free: dict[tuple[int, str], list[list[float]]] = {}
        for room in layout.rooms:
            for side in ("S", "N", "W", "E"):
                self._floor_free[(room.room_id, side)] = self._wall_intervals(room, side, corners=side in "WE")
                self._hang_free[(room.room_id, side)] = self._wall_intervals(room, side, corners=False)
        self.inner: dict[int, tuple[float, float, float, float]] = {}

    # ------------------------------------------------------------ wall intervals
    def _wall_intervals(self, room: Room, side: str, corners: bool) -> list[list[float]]:
        a, b = (room.x0, room.x1) if side in "SN" else (room.y0, room.y1)
        if corners:
            a, b = a + CORNER_RESERVE_M, b - CORNER_RESERVE_M
        free = [[a, b]]
        line = {"S": room.y0, "N": room.y1, "W": room.x0, "E": room.x1}[side]
        for d in self.layout.doors:
            along_x = d.wall_axis == "x"
            if along_x != (side in "SN") or room.room_id not in (d.room_a, d.room_b):
                continue
            dc, dl = (d.center_xy[0], d.center_xy[1]) if along_x else (d.center_xy[1], d.center_xy[0])
            if abs(dl - line) < 0.2:
                half = d.width_m / 2 + DOOR_CLEAR_MARGIN_M
                free = _subtract(free, dc - half, dc + half)
        return free

    def _box_on_wall(self, room: Room, side: str, s: float, size: tuple, z: float) -> tuple[np.ndarray, np.ndarray]:
        length, depth, height = size
        if side in "SN":
            y = room.y0 + depth / 2 + WALL_GAP_M if side == "S" else room.y1 - depth / 2 - WALL_GAP_M
            return np.array([s, y, z]), np.array([length, depth, height])
        x = room.x0 + depth / 2 + WALL_GAP_M if side == "W" else room.x1 - depth / 2 - WALL_GAP_M
        return np.array([x, s, z]), np.array([depth, length, height])

    def _take_wall_slot(self, table: dict, room: Room, length: float) -> Optional[tuple[str, float]]:
        options = [(side, iv) for side in ("S", "N", "W", "E") for iv in table[(room.room_id, side)]
                   if iv[1] - iv[0] >= length + 0.1]
        if not options:
            return None
        side, iv = options[int(self.rng.integers(len(options)))]
        s = float(self.rng.uniform(iv[0] + length / 2 + 0.05, iv[1] - length / 2 - 0.05))
        half = length / 2 + 0.05
        table[(room.room_id, side)] = _subtract(table[(room.room_id, side)], s - half, s + half)
        return side, s

    # ------------------------------------------------------------ placement
    def add_object(self, label: str, room_id: int, t_s: float = 0.0, on_support: bool = False) -> Optional[SimObject]:
        """Place a new ``label`` object in the room (None if there is no room for it). ``on_support``: a surface
        object's own support does not count as in its way (the episodes' furnishing leaves it False)."""
        kind, room = CATALOG[label], self.layout.room(room_id)
        if self.size_jitter > 0 and self.size_rng is not None:  # an instance's own size around its class size
            scale = float(self.size_rng.uniform(1.0 - self.size_jitter, 1.0 + self.size_jitter))
            kind = replace(kind, size_m=tuple(round(v * scale, 4) for v in kind.size_m))
        support = None
        if kind.placement in ("wall", "floor"):
            slot = self._take_wall_slot(self._floor_free, room, kind.size_m[0])
            if slot is None:
                return None
            center, extent = self._box_on_wall(room, slot[0], slot[1], kind.size_m, kind.size_m[2] / 2)
            if kind.size_m[2] > HANG_Z_M - 0.5:
                key = (room.room_id, slot[0])
                self._hang_free[key] = _subtract(self._hang_free[key], slot[1] - kind.size_m[0] / 2,
                                                 slot[1] + kind.size_m[0] / 2)
        elif kind.placement == "hang":
            slot = self._take_wall_slot(self._hang_free, room, kind.size_m[0])
            if slot is None:
                return None
            center, extent = self._box_on_wall(room, slot[0], slot[1], kind.size_m, HANG_Z_M)
        else:
            spot = self.free_surface_spot(room_id, kind, on_support=on_support)
            if spot is None:
                return None
            center, extent, support = spot
        obj = SimObject(len(self.objects) + 1, kind, extent, center, room_id, support, label_colour(label, self.rng))
        obj.history.append((t_s, tuple(center)))
        obj.present.append([t_s, float("inf")])
        self.objects.append(obj)
        return obj

    def free_surface_spot(self, room_id: int, kind: ObjectKind, tries: int = 40,
                          on_support: bool = False) -> Optional[tuple[np.ndarray, np.ndarray, Optional[int]]]:
        """A free spot for a small object on a surface of the room (floor objects: by a wall); ``on_support``:
        see add_object."""
        if kind.placement == "floor":
            return self._free_floor_spot(room_id, kind)
        supports = [o for o in self.objects if o.room_id == room_id and o.kind.surface and o.center_w is not None]
        if not supports:
            return None
        extent = np.array(kind.size_m if self.rng.random() < 0.5 else (kind.size_m[1], kind.size_m[0], kind.size_m[2]))
        for _ in range(tries):
            sup = supports[int(self.rng.integers(len(supports)))]
            half = sup.extent_m[:2] / 2 - extent[:2] / 2 - 0.03
            if np.any(half <= 0):
                continue
            xy = sup.center_w[:2] + self.rng.uniform(-half, half)
            z = sup.center_w[2] + sup.extent_m[2] / 2 + extent[2] / 2
            center = np.array([xy[0], xy[1], z])
            if not self._overlaps(center, extent, gap=0.04, skip=sup if on_support else None):
                return center, extent, sup.object_id
        return None

    def _free_floor_spot(self, room_id: int, kind: ObjectKind) -> Optional[tuple[np.ndarray, np.ndarray, None]]:
        room = self.layout.room(room_id)
        for _ in range(40):
            side = "SNWE"[int(self.rng.integers(4))]
            ivs = [iv for iv in self._wall_intervals(room, side, corners=side in "WE")
                   if iv[1] - iv[0] > kind.size_m[0] + 0.2]
            if not ivs:
                continue
            iv = ivs[int(self.rng.integers(len(ivs)))]
            s = float(self.rng.uniform(iv[0] + kind.size_m[0] / 2 + 0.1, iv[1] - kind.size_m[0] / 2 - 0.1))
            center, extent = self._box_on_wall(room, side, s, kind.size_m, kind.size_m[2] / 2)
            if not self._overlaps(center, extent, gap=0.05):
                return center, extent, None
        return None

    def _overlaps(self, center: np.ndarray, extent: np.ndarray, gap: float, skip: Optional[SimObject] = None) -> bool:
        for o in self.objects:
            if o.center_w is None or o is skip:
                continue
            if np.all(np.abs(o.center_w - center) < (o.extent_m + extent) / 2 + gap):
                return True
        return False

    def furnish(self) -> None:
        """Fill every room from ROOM_CONTENTS (furniture first), then compute walkable areas."""
        for room in self.layout.rooms:
            contents = ROOM_CONTENTS[room.room_type]
            order = sorted(contents, key=lambda c: CATALOG[c[0]].placement != "wall")
            for label, lo, hi in order:
                for _ in range(int(self.rng.integers(lo, hi + 1))):
                    self.add_object(label, room.room_id)
        for room in self.layout.rooms:
            deepest = max([o.kind.size_m[1] for o in self.objects
                           if o.room_id == room.room_id and o.kind.placement in ("wall", "floor")], default=0.2)
            band = max(deepest + WALL_GAP_M + WALK_CLEARANCE_M, 0.6)
            band = min(band, (min(room.x1 - room.x0, room.y1 - room.y0) - 0.3) / 2)
            self.inner[room.room_id] = (room.x0 + band, room.y0 + band, room.x1 - band, room.y1 - band)

    def blocked(self, x: float, y: float, radius: float = 0.25) -> bool:
        """Whether a wearer of ``radius`` at (x, y) would stand in a floor-standing object."""
        for o in self.objects:
            if o.center_w is None or o.kind.placement == "hang":
                continue
            if o.support_id is None and np.all(np.abs(o.center_w[:2] - (x, y)) < o.extent_m[:2] / 2 + radius):
                return True
        return False


def _subtract(intervals: list[list[float]], a: float, b: float) -> list[list[float]]:
    out = []
    for lo, hi in intervals:
        if b <= lo or a >= hi:
            out.append([lo, hi])
            continue
        if a > lo:
            out.append([lo, a])
        if b < hi:
            out.append([b, hi])
    return out
