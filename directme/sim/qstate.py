"""What the wearer could know at time t (for question generation): which objects were seen
when, whether an object's current place was observed, room visits, and ego-frame geometry."""
from __future__ import annotations

import bisect
from typing import Optional

import numpy as np

from ..geometry import EgoFrame, azimuth_deg, ground_distance_m
from .catalog import CORRIDOR
from .episode import Episode, ObjectGT, UP_WORLD
from .questions import SEEN_MIN_PIXEL_FRACTION

VIS_PIXELS = 4  # a pixel of the half-resolution visibility pass covers 4 image pixels


class Observations:
    """Indexes an episode's ground truth by what was observed up to each frame."""

    def __init__(self, ep: Episode, removal_seen: Optional[dict[int, float]] = None):
        self.ep = ep
        self.removal_seen = removal_seen or {}
        n_px = ep.intrinsics.width * ep.intrinsics.height / VIS_PIXELS
        min_px = SEEN_MIN_PIXEL_FRACTION * n_px
        self.seen: dict[int, list[int]] = {o.object_id: [] for o in ep.objects}  # frames with enough pixels
        self.glimpsed_first: dict[int, int] = {}  # first frame with any pixel
        for g in ep.frames_gt:
            for oid, px in zip(g.visible_ids, g.visible_pixels):
                self.glimpsed_first.setdefault(oid, g.index)
                if px >= min_px:
                    self.seen[oid].append(g.index)
        self.rooms = np.array([g.room_id for g in ep.frames_gt])
        # (frame, room, label) whenever an object was seen from inside the room it is in, by frame
        self.seen_in_room = sorted(
            (f, room, o.label) for o in ep.objects for f in self.seen[o.object_id]
            for room in [self.object_room(o, self.t_of(f))] if room == self.room_type_at(f))
        self.seen_in_room_frames = [s[0] for s in self.seen_in_room]
        # (t_s, room, label) of every placement (initial, put-down, addition), by time
        self.placements = sorted((t, ep.layout.room_at(c[0], c[1]).room_type, o.label)
                                 for o in ep.objects for t, c in o.positions_w if c is not None)
        self.placement_times = [p[0] for p in self.placements]
        self._inv: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._visits = self._all_visits()

    # ------------------------------------------------------------ objects
    def last_seen(self, oid: int, k: int) -> int:
        """Last frame <= k where the object was seen (-1 if none)."""
        frames = self.seen[oid]
        i = bisect.bisect_right(frames, k)
        return frames[i - 1] if i else -1

    def glimpsed_by(self, oid: int, k: int) -> bool:
        return self.glimpsed_first.get(oid, 1 << 60) <= k

    def t_of(self, k: int) -> float:
        return self.ep.frames_gt[k].t_s

    def last_change_t(self, obj: ObjectGT, t_s: float) -> float:
        return max([t for t, _ in obj.positions_w if t <= t_s], default=0.0)

    def known_position(self, obj: ObjectGT, k: int) -> Optional[np.ndarray]:
        """The object's centre at frame k if it is in the scene and was seen since it last moved."""
        t = self.t_of(k)
        c = obj.position_at(t)
        if c is None:
            return None
        ls = self.last_seen(obj.object_id, k)
        return c if ls >= 0 and self.t_of(ls) >= self.last_change_t(obj, t) else None

    def seen_objects(self, k: int) -> list[ObjectGT]:
        return [o for o in self.ep.objects if self.last_seen(o.object_id, k) >= 0]

    def unique_label(self, obj: ObjectGT, k: int) -> bool:
        """Whether "the <label>" is unambiguous at frame k: the only one seen so far and the only one present."""
        t = self.t_of(k)
        same = [o for o in self.ep.objects if o.label == obj.label]
        seen = [o for o in same if self.glimpsed_by(o.object_id, k)]
        present = [o for o in same if any(a <= t < b for a, b in o.present)]
        return len(seen) == 1 and seen[0] is obj and len(present) <= 1

    def object_room(self, obj: ObjectGT, t_s: float) -> Optional[str]:
        c = obj.position_at(t_s)
        if c is None:
            return None
        room = self.ep.layout.room_at(c[0], c[1])
        return None if room is None else room.room_type

    # ------------------------------------------------------------ ego geometry
    def relation(self, k: int, center_w: np.ndarray) -> tuple[float, float]:
        """(azimuth in degrees, ground distance in metres) of a world point in the ego frame at k."""
        if k not in self._inv:
            T = EgoFrame.from_camera(self.ep.frames_gt[k].T_world_cam, UP_WORLD).T_world_ego
            self._inv[k] = (T.R, T.t)
        R, t = self._inv[k]
        p = R.T @ (np.asarray(center_w, dtype=np.float64) - t)
        return azimuth_deg(p), ground_distance_m(p)

    def cam_xy(self, k: int) -> np.ndarray:
        return self.ep.frames_gt[k].T_world_cam.t[:2]

    # ------------------------------------------------------------ wearer's rooms
    def _all_visits(self) -> list[tuple[str, int, int]]:
        out: list[tuple[str, int, int]] = []
        for i, rid in enumerate(self.rooms):
            rt = self.ep.layout.room(int(rid)).room_type
            if rt == CORRIDOR:
                continue
            if out and out[-1][0] == rt:
                out[-1] = (rt, out[-1][1], i)
            else:
                out.append((rt, i, i))
        return out

    def visits(self, k: int) -> list[tuple[str, int, int]]:
        """Room visits up to frame k (corridor skipped): [(room type, first frame, last frame)]."""
        out = [v for v in self._visits if v[1] <= k]
        if out and out[-1][2] > k:
            out[-1] = (out[-1][0], out[-1][1], k)
        return out

    def room_type_at(self, k: int) -> str:
        return self.ep.layout.room(int(self.rooms[k])).room_type


def sector_margin_deg(azimuth: float, width_deg: float) -> float:
    """Distance in degrees from ``azimuth`` to the nearest boundary of sectors of ``width_deg``
    centred on 0 (8 directions: 45, clock hours: 30)."""
    m = (azimuth - width_deg / 2) % width_deg
    return min(m, width_deg - m)


def minutes_text(n: int) -> str:
    return "1 minute" if n == 1 else f"{n} minutes"


def article(name: str) -> str:
    return "An" if name[:1].lower() in "aeiou" else "A"
