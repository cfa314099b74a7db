"""Render memory in the wearer's ego frame at time t: direction word, clock hour, metric
distance, reachability, place, last-seen time and movement history of each object.

Pure functions of a ``MemorySnapshot`` (no I/O), so they are tested with hand-built snapshots."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence
from weakref import WeakKeyDictionary

import numpy as np

from ..geometry import EgoFrame, azimuth_deg, clock_hour, direction_word, ground_distance_m, ground_distances_m
from ..memory.snapshot import MemorySnapshot, ObjectNode
from ..validation import check_section

DEFAULT_REACH_M = 1.0


@dataclass(frozen=True)
class RoomConfig:
    """How rooms are read from the wearer's scene tags (config section ``query.rooms``): an object's room, the
    wearer's path through rooms and the times of entering and leaving one (one flicker rule for all three)."""

    flicker_frames: int = 2  # a run of one scene tag shorter than this many frames between others (not the current run) is flicker
    walked_near_weight: float = 0.1  # an object seen from several rooms: the wearer's nearest walk to it in one counts this share of a sighting from as near (a wall may stand between)
    same_place_m: float = 0.5  # consecutive placements of an object this close together are one place: their sightings vote for its room together
    sighting_offset_m: float = 0.3  # a sighting from d metres (ground) votes for its room with 1 / (this + d) ** sighting_power
    sighting_power: float = 4.0  # (see sighting_offset_m: steep, so the nearest sightings decide)
    nearest_frames: int = 3  # a node without sighting times: the tags of the wearer's this many nearest positions vote ...
    nearest_vote: float = 1.5  # ... with this weight, each keyframe's tag with keyframe_vote ...
    keyframe_vote: float = 1.0  # (see nearest_vote)
    put_down_vote: float = 3.0  # ... and the tag where a moved object was put down with this

    def __post_init__(self) -> None:
        check_section(self, "query.rooms", at_least_one=("flicker_frames", "nearest_frames"),
                      positive=("sighting_offset_m",),
                      non_negative=("walked_near_weight", "same_place_m", "sighting_power", "nearest_vote",
                                    "keyframe_vote", "put_down_vote"))


ROOMS = RoomConfig()  # the defaults, for callers without an agent's config


@dataclass(frozen=True, eq=False)
class EgoRelation:
    """Where one object is relative to the wearer at ``t_s``."""

    node_id: str
    label: str
    t_s: float
    position_ego: np.ndarray  # (3,) x forward, y left, z up, metres
    azimuth_deg: float
    direction: str  # one of geometry.DIRECTIONS_8
    clock: int  # 1..12, 12 = straight ahead
    distance_m: float  # on the ground plane
    reachable: bool
    place: Optional[str]
    last_seen_s: float
    present: bool
    moves: tuple[tuple[float, str], ...] = ()  # (time, place tag) of each placement, oldest first
    carried: bool = False  # with the wearer (seen moving with the camera)

    def describe(self) -> str:
        reach = "within reach" if self.reachable else "out of reach"
        where = f", in the {self.place}" if self.place else ""
        gone = " (carried by you)" if self.carried else "" if self.present else " (no longer there when last checked)"
        moved = ""
        if len(self.moves) > 1:
            moved = "; moved: " + " -> ".join(f"{p or '?'} ({t:.0f} s)" for t, p in self.moves)
        return (f"{self.label} [{self.node_id}]: {self.direction}, {self.clock} o'clock, {self.distance_m:.1f} m, "
                f"{reach}{where}; last seen {self.last_seen_s:.0f} s ({self.t_s - self.last_seen_s:.0f} s ago)"
                f"{gone}{moved}")


def ego_frame_at(snapshot: MemorySnapshot, t_s: Optional[float] = None) -> Optional[EgoFrame]:
    """The wearer's ego frame at ``t_s`` (default: the snapshot time), or None without poses."""
    pose = snapshot.ego.pose_at(snapshot.t_s if t_s is None else t_s)
    if pose is None:
        return None
    return EgoFrame.from_camera(pose, snapshot.up_world)


def direction_text(azimuth: float) -> str:
    """'in front of you', 'behind you' or 'to your <direction word>' for an ego azimuth in degrees."""
    word = direction_word(azimuth)
    return {"front": "in front of you", "behind": "behind you"}.get(word, f"to your {word}")


def position_at(node: ObjectNode, t_s: float) -> np.ndarray:
    """World position of ``node`` at ``t_s``: its placement seen last at or before t_s (else the
    earliest known placement, for objects first seen later)."""
    history = [(t, p) for t, p in node.position_history if t <= t_s]
    if history:
        last_p = history[-1][1]
        if len(history) == len(node.position_history):
            return np.asarray(node.position_w, dtype=np.float64)
        return np.asarray(last_p, dtype=np.float64)
    if node.position_history:
        return np.asarray(node.position_history[0][1], dtype=np.float64)
    return np.asarray(node.position_w, dtype=np.float64)


def place_of_point(snapshot: MemorySnapshot, point_w: np.ndarray) -> Optional[str]:
    """Tag of the place whose centre is nearest on the ground plane (None without places)."""
    if not snapshot.places:
        return None
    up = _unit(snapshot.up_world)
    best, best_d = None, np.inf
    for place in snapshot.places.values():
        diff = np.asarray(place.center_w, dtype=np.float64) - point_w
        d = float(np.linalg.norm(diff - np.dot(diff, up) * up))
        if d < best_d:
            best, best_d = place.tag, d
    return best


def tag_at(snapshot: MemorySnapshot, t_s: float) -> Optional[str]:
    """The wearer's scene tag at the latest frame <= t_s."""
    ego = snapshot.ego
    i = int(np.searchsorted(ego.times_s, t_s, side="right")) - 1
    return ego.scene_tags[i] if 0 <= i < len(ego.scene_tags) else None


def nearest_ego_tag(snapshot: MemorySnapshot, point_w: np.ndarray, k: int = 3) -> Optional[str]:
    """Majority scene tag of the ``k`` wearer positions nearest to ``point_w`` (ground plane)."""
    ego = snapshot.ego
    tags = np.array([t or "" for t in ego.scene_tags], dtype=object)
    if len(ego) == 0 or len(tags) != len(ego):
        return None
    d = ground_distances_m(ego.T_world_cam[:, :3, 3], point_w, snapshot.up_world)
    d[tags == ""] = np.inf
    order = np.argsort(d)[:k]
    votes: dict[str, int] = {}
    for i in order:
        if np.isfinite(d[i]):
            votes[tags[i]] = votes.get(tags[i], 0) + 1
    return max(votes, key=votes.get) if votes else None


def object_place(snapshot: MemorySnapshot, node: ObjectNode, placement: int = -1,
                 rooms: RoomConfig = ROOMS) -> Optional[str]:
    votes = place_votes(snapshot, node, placement, rooms)
    if not votes:
        if node.place_id and node.place_id in snapshot.places:
            return snapshot.places[node.place_id].tag
        return place_of_point(snapshot, np.asarray(node.position_w))
    return max(sorted(votes), key=votes.get)


def place_votes(snapshot: MemorySnapshot, node: ObjectNode, placement: int = -1,
                rooms: RoomConfig = ROOMS) -> dict[str, float]:
    """Evidence (tag -> weight) for the room of one placement of an object (default: the current one).

    With the object's observation times (``node.obs_times_s``): the settled tag (:func:`settled_tags`) where the
    wearer stood at the observations taken closest to the object (an object is seen from inside its room; through
    a door only from afar) - and, when those observations come from several rooms, also how near the wearer ever
    walked to it in each of them, at ``rooms.walked_near_weight`` of a sighting from as near (an object just inside a
    door, seen as close from the corridor through it as from inside, is in the room the wearer walked past it in;
    a walk past it on the other side of a wall is not a sighting, so it weighs less), over the placements next
    to it in time that are at that place (within ``rooms.same_place_m``: a placement restarted where it was, by a drift
    correction or a moment's carry, is in the same room; an object put back near where it once was may be on the
    other side of a wall).
    Without them (a hand-built node): votes of the tag where a moved object was put down, its keyframes' tags and the
    tags of the wearer positions nearest to it."""
    history = node.position_history or ((node.first_seen_s, node.position_w),)
    placement = placement % len(history)
    start = history[placement][0]
    end = history[placement + 1][0] if placement + 1 < len(history) else np.inf
    points = [np.asarray(node.position_w if j == len(history) - 1 else p, dtype=np.float64)
              for j, (_, p) in enumerate(history)]
    point = points[placement]
    times = np.asarray(node.obs_times_s, dtype=np.float64)
    times = times[times <= snapshot.t_s]
    if len(times) and len(snapshot.ego):
        bounds = [h[0] for h in history] + [np.inf]

        def near(j: int) -> bool:
            return ground_distances_m(points[j][None], point, snapshot.up_world)[0] <= rooms.same_place_m

        lo, hi = placement, placement
        while lo > 0 and near(lo - 1):
            lo -= 1
        while hi + 1 < len(history) and near(hi + 1):
            hi += 1
        same = range(lo, hi + 1)
        keep = np.zeros(len(times), dtype=bool)
        for j in same:
            keep |= (times >= bounds[j] - 1e-6) & (times < bounds[j + 1])
        if keep.any():
            return _observation_votes(snapshot, times[keep], point, rooms)
    votes: dict[str, float] = {}

    def vote(tag: Optional[str], w: float) -> None:
        if tag:
            votes[tag] = votes.get(tag, 0.0) + w

    if placement > 0:
        vote(tag_at(snapshot, start), rooms.put_down_vote)
    for ref in node.keyframes:
        if start <= ref.t_s < end:
            vote(tag_at(snapshot, ref.t_s), rooms.keyframe_vote)
    vote(nearest_ego_tag(snapshot, point, rooms.nearest_frames), rooms.nearest_vote)
    return votes


def _observation_votes(snapshot: MemorySnapshot, times: np.ndarray, point_w: np.ndarray,
                       rooms: RoomConfig = ROOMS) -> dict[str, float]:
    """Tag voted by the observations of ``point_w``, weighted steeply by closeness (``rooms.sighting_*``); with votes
    for several tags, each of them also gets ``rooms.walked_near_weight`` x that weight of the wearer's nearest position to
    ``point_w`` under it."""
    ego = snapshot.ego
    tags, tag_arr = _settled(snapshot, rooms.flicker_frames)
    idx = np.clip(np.searchsorted(ego.times_s, times, side="right") - 1, 0, len(ego) - 1)
    d = ground_distances_m(ego.T_world_cam[idx, :3, 3], point_w, snapshot.up_world)
    votes: dict[str, float] = {}
    for i, dist in zip(idx.tolist(), d.tolist()):
        tag = tags[i] if i < len(tags) else None
        if tag:
            votes[tag] = votes.get(tag, 0.0) + (rooms.sighting_offset_m + dist) ** -rooms.sighting_power
    if len(votes) > 1:  # seen from several rooms: also where the wearer walked nearest to it in each of them
        walked = ground_distances_m(ego.T_world_cam[:, :3, 3], point_w, snapshot.up_world)
        n = min(len(walked), len(tag_arr))
        for tag in list(votes):
            near = walked[:n][tag_arr[:n] == tag]
            if len(near):
                votes[tag] += rooms.walked_near_weight * (rooms.sighting_offset_m + float(near.min())) ** -rooms.sighting_power
    return votes


_SETTLED: "WeakKeyDictionary[object, dict[int, tuple[tuple[Optional[str], ...], np.ndarray]]]" = WeakKeyDictionary()


def settled_tags(snapshot: MemorySnapshot, rooms: RoomConfig = ROOMS) -> tuple[Optional[str], ...]:
    """The wearer's scene tag at each ego frame, with flicker taken out (:func:`_settle` with
    ``rooms.flicker_frames``, over the whole track; frames without a tag stay without) - the places
    :func:`place_sequence` walks through, frame by frame. A scene classifier that names the wrong room for a
    frame or two must not move the objects seen then into that room. Computed once per snapshot."""
    return _settled(snapshot, rooms.flicker_frames)[0]


def _settled(snapshot: MemorySnapshot, flicker_frames: int) -> tuple[tuple[Optional[str], ...], np.ndarray]:
    """The settled tags of a snapshot's ego frames, as a tuple and as an array (untagged frames: ""), computed
    once per snapshot and flicker length."""
    per_snapshot = _SETTLED.setdefault(snapshot.ego, {})
    cached = per_snapshot.get(flicker_frames)
    if cached is None:
        raw = snapshot.ego.scene_tags
        tagged = [i for i, tag in enumerate(raw) if tag]
        out = list(raw)
        for i, tag in zip(tagged, _settle([raw[i] for i in tagged], flicker_frames)):
            out[i] = tag
        cached = per_snapshot[flicker_frames] = (tuple(out), np.asarray([t or "" for t in out], dtype=object))
    return cached


def _settle(tags: Sequence[str], min_frames: int) -> list[str]:
    """``tags`` (one per frame) with every run of one tag shorter than ``min_frames`` frames, neither the first
    run nor the last (current) one, replaced by the tag of the kept run before it."""
    runs: list[list] = []  # [tag, n frames]
    for tag in tags:
        if runs and runs[-1][0] == tag:
            runs[-1][1] += 1
        else:
            runs.append([tag, 1])
    out: list[str] = []
    last = None
    for i, (tag, n) in enumerate(runs):
        if n >= min_frames or i == 0 or i == len(runs) - 1:
            last = tag
        out.extend([last] * n)
    return out


def relate(snapshot: MemorySnapshot, node: ObjectNode, t_s: Optional[float] = None,
           reach_m: float = DEFAULT_REACH_M, frame: Optional[EgoFrame] = None,
           rooms: RoomConfig = ROOMS) -> Optional[EgoRelation]:
    """Ego relation of one object at ``t_s`` (default: snapshot time); None if no pose is known."""
    t = snapshot.t_s if t_s is None else float(t_s)
    frame = frame or ego_frame_at(snapshot, t)
    if frame is None:
        return None
    p_w = position_at(node, t)
    p_e = frame.to_ego(p_w)
    az = azimuth_deg(p_e)
    dist = ground_distance_m(p_e)
    at_now = t >= snapshot.t_s
    moves = tuple((float(tp), object_place(snapshot, node, i, rooms) or "") for i, (tp, _) in
                  enumerate(node.position_history) if tp <= t)
    return EgoRelation(node_id=node.node_id, label=node.label, t_s=t, position_ego=p_e, azimuth_deg=az,
                       direction=direction_word(az), clock=clock_hour(az), distance_m=dist,
                       reachable=bool(dist <= reach_m),
                       place=object_place(snapshot, node, max(0, len(moves) - 1), rooms),
                       last_seen_s=min(node.last_seen_s, t), present=node.present or not at_now, moves=moves,
                       carried=node.carried and at_now)


def relative_direction(snapshot: MemorySnapshot, a: ObjectNode, b: ObjectNode, t_s: Optional[float] = None) -> \
        Optional[tuple[str, float]]:
    """Direction word and ground distance of ``a`` as seen from ``b``, in the wearer's orientation at t."""
    t = snapshot.t_s if t_s is None else float(t_s)
    frame = ego_frame_at(snapshot, t)
    if frame is None:
        return None
    R_ego_world = frame.T_world_ego.R.T
    d_e = R_ego_world @ (position_at(a, t) - position_at(b, t))
    return direction_word(azimuth_deg(d_e)), ground_distance_m(d_e)


def place_sequence(snapshot: MemorySnapshot, t_from: float = -np.inf, t_to: Optional[float] = None,
                   min_frames: int = 1) -> list[tuple[float, str]]:
    """Places the wearer walked through in (t_from, t_to]: (entry time, tag), consecutive repeats merged.
    Runs shorter than ``min_frames`` frames are dropped (scene-tag flicker: :func:`_settle`)."""
    t_to = snapshot.t_s if t_to is None else t_to
    rows = [(float(t), tag) for t, tag in zip(snapshot.ego.times_s, snapshot.ego.scene_tags)
            if t_from <= t <= t_to and tag]
    kept: list[tuple[float, str]] = []
    for (t, _), tag in zip(rows, _settle([tag for _, tag in rows], min_frames)):
        if not kept or kept[-1][1] != tag:
            kept.append((t, tag))
    return kept


def current_place(snapshot: MemorySnapshot, t_s: Optional[float] = None) -> Optional[str]:
    t = snapshot.t_s if t_s is None else t_s
    seq = place_sequence(snapshot, t_to=t)
    if seq:
        return seq[-1][1]
    pose = snapshot.ego.pose_at(t)
    return place_of_point(snapshot, pose.t) if pose is not None else None


def render_subgraph(snapshot: MemorySnapshot, node_ids: Iterable[str], t_s: Optional[float] = None,
                    reach_m: float = DEFAULT_REACH_M, path_from_s: Optional[float] = None,
                    rooms: RoomConfig = ROOMS) -> str:
    """Text of the retrieved subgraph in the ego frame at t (what an MLLM or a human reads)."""
    t = snapshot.t_s if t_s is None else float(t_s)
    lines = [f"Time: {t:.1f} s."]
    frame = ego_frame_at(snapshot, t)
    if frame is None:
        lines.append("No camera pose observed yet: the memory is empty at this time.")
        return "\n".join(lines)
    here = current_place(snapshot, t)
    lines.append(f"You are {'in the ' + here if here else 'at an unknown place'}; directions are relative to "
                 f"where you face now (front = 12 o'clock), arm reach {reach_m:.1f} m.")
    ids = [i for i in node_ids if i in snapshot.objects]
    rels = [relate(snapshot, snapshot.objects[i], t, reach_m, frame, rooms) for i in ids]
    if rels:
        lines.append("Objects:")
        lines.extend(f"- {r.describe()}" for r in rels if r is not None)
    else:
        lines.append("Objects: none of the asked objects is in memory.")
    path = place_sequence(snapshot, t_from=-np.inf if path_from_s is None else path_from_s, t_to=t,
                          min_frames=rooms.flicker_frames)
    if path:
        lines.append("Your path: " + " -> ".join(f"{tag} ({ts:.0f} s)" for ts, tag in path[-8:]))
    if snapshot.places:
        lines.append("Places: " + ", ".join(sorted({p.tag for p in snapshot.places.values()})))
    return "\n".join(lines)


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return v / (np.linalg.norm(v) or 1.0)
