"""One remembered object: its live association state plus append-only logs to view it at any past t.

Logs (all append-only, so a view at time t never changes after later frames):
- observations: time, frame index, label id and score of every instance matched to the object;
- states: a row whenever the reported state changes (position, extent, label, placement,
  presence, observation offset from merges, first-seen time);
- keyframes: (added, removed) intervals of KeyframeRefs;
- merges: other objects folded into this one, with the time of the merge;
- presence: the presence belief (log-odds) after each piece of evidence (memory/presence.py).
"""
from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, fields
from typing import Optional

import numpy as np

from .extent import ExtentLog
from .map import VoxelSet
from .snapshot import KeyframeRef

INF = math.inf


@dataclass(frozen=True)
class State:
    """The reported state of an object from time ``t_s`` on (until the next state row)."""

    t_s: float
    position_w: tuple[float, float, float]
    extent_m: tuple[float, float, float]
    label_id: int
    placement: int
    present: bool
    gone_since_s: float  # NaN when present
    n_obs_offset: int  # observations inherited from merged objects
    first_seen_s: float


@dataclass
class KeyframeEntry:
    ref: KeyframeRef
    view_dir: tuple[float, float, float]  # unit vector from the object to the camera
    added_s: float
    removed_s: float = INF


class ObjectRecord:
    """Live state (voxels, track binding, pending move, misses) and history of one object."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.node_id = f"o{index}"
        self.obs_t = array("d")  # compact columns; array.array bisects fast and grows amortised
        self.obs_frame = array("i")  # ego frame position (not the stream's frame index)
        self.obs_label = array("i")
        self.obs_score = array("f")
        self.states: list[State] = []
        self.state_t: list[float] = []
        self.placements_s: list[float] = []  # start time of each placement
        self.keyframes: list[KeyframeEntry] = []
        self.merges: list[tuple[float, "ObjectRecord"]] = []
        self.merged_into: Optional[tuple[float, "ObjectRecord"]] = None
        self.log = None  # memory-wide Timeline mirroring state rows and observations (or None)
        # live (association) state
        self.voxels = VoxelSet()
        self.votes: dict[int, float] = {}
        self.embedding: Optional[np.ndarray] = None
        self.pending: list[tuple[float, np.ndarray]] = []  # far observations of a possible move
        self.pending_voxels = VoxelSet()
        self.pres_t = array("d")  # presence belief log: time of each piece of evidence ...
        self.pres_l = array("f")  # ... and the log-odds after it
        self.first_miss_s = INF  # first evidence of absence since the last sighting
        self.moving = False  # in a carry: a placement started by carving (ingest.carve), and every observation since carved
        self.carry_t = array("d")  # carried by the wearer from carry_t[0] to carry_t[1], from carry_t[2] ... (ingest.carry)
        self.carry_ref: Optional[tuple[float, np.ndarray, np.ndarray]] = None  # last sighting: (t, camera-frame, world centre)
        self.stood_in_for: dict[int, int] = {}  # record index -> frames where it was seen in its label here, this not
        self.sizes = ExtentLog()  # its kept views' sizes and the measured extent after each change (memory/extent.py)
        self.colour: Optional[np.ndarray] = None  # RGB histogram of its mask pixels over its sightings (memory/appearance.py)

    # ------------------------------------------------------------------ live state
    @property
    def state(self) -> State:
        return self.states[-1]

    @property
    def position(self) -> np.ndarray:
        return np.asarray(self.states[-1].position_w, dtype=np.float64)

    @property
    def extent(self) -> np.ndarray:
        return np.asarray(self.states[-1].extent_m, dtype=np.float64)

    @property
    def first_obs_s(self) -> float:
        return self.obs_t[0]

    @property
    def last_seen_s(self) -> float:
        return self.obs_t[-1]

    def n_obs_live(self) -> int:
        return len(self.obs_t) + self.state.n_obs_offset

    def label_id_from_votes(self) -> int:
        if len(self.votes) == 1:  # the usual case: one label
            return next(iter(self.votes))
        return max(self.votes.items(), key=lambda kv: (kv[1], -kv[0]))[0]

    def add_observation(self, t_s: float, frame_index: int, label_id: int, score: float) -> None:
        self.obs_t.append(t_s)
        self.obs_frame.append(frame_index)
        self.obs_label.append(label_id)
        self.obs_score.append(score)
        self.votes[label_id] = self.votes.get(label_id, 0.0) + self.obs_score[-1]
        if self.log is not None:
            self.log.on_observation(self.index, frame_index)

    def set_state(self, t_s: float, **changes) -> None:
        """Append a state row if anything reported changed (float32 precision, as stored)."""
        if self.states:
            base = self.states[-1].__dict__ | {"t_s": t_s}
        else:
            base = {"t_s": t_s, "position_w": (0.0, 0.0, 0.0), "extent_m": (0.0, 0.0, 0.0), "label_id": 0,
                    "placement": 0, "present": False, "gone_since_s": math.nan, "n_obs_offset": 0,
                    "first_seen_s": t_s}
        for k in ("position_w", "extent_m"):
            if k in changes:
                changes[k] = tuple(np.asarray(changes[k], dtype=np.float32).tolist())  # float32 values as floats
        new = State(**(base | changes))
        if self.states and _same(new, self.states[-1]):
            return
        replaced = bool(self.state_t) and self.state_t[-1] == t_s
        if replaced:
            self.states[-1] = new  # several changes within one frame: one row
        else:
            self.states.append(new)
            self.state_t.append(t_s)
        if self.log is not None:
            self.log.on_state(self.index, new, replaced)

    @property
    def belief(self) -> float:
        """The presence log-odds now (NaN before any evidence)."""
        return float(self.pres_l[-1]) if self.pres_l else math.nan

    def set_belief(self, t_s: float, logodds: float) -> None:
        """Log the belief after this frame's evidence (one entry per frame)."""
        if self.pres_t and self.pres_t[-1] == t_s:
            self.pres_l[-1] = logodds
        else:
            self.pres_t.append(t_s)
            self.pres_l.append(logodds)

    @property
    def carried(self) -> bool:
        """Carried by the wearer now (seen close to the camera and moving with it)."""
        return len(self.carry_t) % 2 == 1

    def carried_at(self, t_s: float) -> bool:
        return bisect_right(self.carry_t, t_s) % 2 == 1

    def presence_at(self, t_s: float) -> float:
        """Probability that the object was at its place, as believed at ``t_s`` (0 before any evidence)."""
        k = bisect_right(self.pres_t, t_s)
        return 0.0 if k == 0 else 1.0 / (1.0 + math.exp(-float(self.pres_l[k - 1])))

    def live_keyframes(self) -> list[KeyframeEntry]:
        return [k for k in self.keyframes if k.removed_s == INF]

    # ------------------------------------------------------------------ history (as of t)
    def exists_at(self, t_s: float) -> bool:
        if not self.obs_t or self.obs_t[0] > t_s:
            return False
        return self.merged_into is None or self.merged_into[0] > t_s

    def state_at(self, t_s: float) -> State:
        return self.states[bisect_right(self.state_t, t_s) - 1]

    def n_obs_at(self, t_s: float) -> int:
        return bisect_right(self.obs_t, t_s) + self.state_at(t_s).n_obs_offset

    def last_seen_at(self, t_s: float) -> tuple[float, int]:
        """(time, frame index) of the last observation <= t_s, own or inherited from merges."""
        k = bisect_right(self.obs_t, t_s)
        best = (self.obs_t[k - 1], self.obs_frame[k - 1]) if k else (-INF, -1)
        for tm, other in self.merges:
            if tm <= t_s:
                best = max(best, other.last_seen_at(tm))
        return best

    def votes_at(self, t_s: float, labels: list[str]) -> dict[str, float]:
        k = bisect_right(self.obs_t, t_s)
        acc = np.bincount(np.array(self.obs_label[:k], np.int64), weights=np.array(self.obs_score[:k], np.float64),
                          minlength=len(labels))
        votes = {labels[i]: float(w) for i, w in enumerate(acc) if w > 0}
        for tm, other in self.merges:
            if tm <= t_s:
                for name, w in other.votes_at(tm, labels).items():
                    votes[name] = votes.get(name, 0.0) + w
        return votes

    def label_first_seen_at(self, t_s: float, labels: list[str]) -> dict[str, float]:
        """Per label: the time of its first observation <= t_s, own or of an object merged in by then (up to that
        merge) - a label's first sighting survives merges, and a merged object's other labels do not date it."""
        k = bisect_right(self.obs_t, t_s)
        first: dict[int, float] = {}
        for t, i in zip(self.obs_t[:k], self.obs_label[:k]):  # obs_t ascends: the first of each label stays
            first.setdefault(i, t)
        out = {labels[i]: t for i, t in first.items()}
        for tm, other in self.merges:
            if tm <= t_s:
                for name, f in other.label_first_seen_at(tm, labels).items():
                    out[name] = min(out.get(name, INF), f)
        return out

    def keyframes_at(self, t_s: float) -> tuple[KeyframeRef, ...]:
        return tuple(k.ref for k in self.keyframes if k.added_s <= t_s < k.removed_s)

    def history_at(self, t_s: float) -> tuple[tuple[float, np.ndarray], ...]:
        """(start time, position) of each placement up to t_s; a placement's position as of t_s."""
        last: dict[int, tuple[float, ...]] = {}
        for st in self.states[: bisect_right(self.state_t, t_s)]:
            last[st.placement] = st.position_w
        return tuple((self.placements_s[p], np.asarray(pos, dtype=np.float64)) for p, pos in sorted(last.items()))

    def placement_origin(self) -> np.ndarray:
        """Position of the current placement when it began."""
        p = self.state.placement
        i = bisect_left(self.state_t, self.placements_s[p])
        while self.states[i].placement != p:
            i += 1
        return np.asarray(self.states[i].position_w, dtype=np.float64)

    # ------------------------------------------------------------------ persistence
    def columns(self) -> dict[str, np.ndarray]:
        st = self.states
        return {
            "obs_t": np.array(self.obs_t, np.float64), "obs_frame": np.array(self.obs_frame, np.int32),
            "obs_label": np.array(self.obs_label, np.int32), "obs_score": np.array(self.obs_score, np.float32),
            "st_t": np.array(self.state_t, np.float64),
            "st_pos": np.array([s.position_w for s in st], np.float64).reshape(-1, 3),
            "st_ext": np.array([s.extent_m for s in st], np.float64).reshape(-1, 3),
            "st_int": np.array([(s.label_id, s.placement, s.present, s.n_obs_offset) for s in st],
                               np.int64).reshape(-1, 4),
            "st_gone": np.array([s.gone_since_s for s in st], np.float64),
            "st_first": np.array([s.first_seen_s for s in st], np.float64),
            "vox_keys": self.voxels.keys, "vox_pts": self.voxels.pts, "vox_counts": self.voxels.counts,
            "pend_keys": self.pending_voxels.keys, "pend_pts": self.pending_voxels.pts,
            "pend_counts": self.pending_voxels.counts,
            "pend_t": np.array([p[0] for p in self.pending], np.float64),
            "pend_c": np.array([p[1] for p in self.pending], np.float64).reshape(-1, 3),
            "placements": np.array(self.placements_s, np.float64),
            "votes_id": np.array(list(self.votes), np.int64),
            "votes_w": np.array(list(self.votes.values()), np.float64),
            "embedding": np.zeros(0, np.float32) if self.embedding is None else self.embedding.astype(np.float32),
            "pres_t": np.array(self.pres_t, np.float64), "pres_l": np.array(self.pres_l, np.float32),
            "carry_t": np.array(self.carry_t, np.float64),
            "stood_id": np.array(list(self.stood_in_for), np.int64),
            "stood_n": np.array(list(self.stood_in_for.values()), np.int64),
            "colour": np.zeros(0, np.float32) if self.colour is None else self.colour.astype(np.float32),
            **self.sizes.columns(),
        }

    def restore_columns(self, c: dict[str, np.ndarray]) -> None:
        for name, code, dtype in (("obs_t", "d", np.float64), ("obs_frame", "i", np.int32),
                                  ("obs_label", "i", np.int32), ("obs_score", "f", np.float32),
                                  ("pres_t", "d", np.float64), ("pres_l", "f", np.float32),
                                  ("carry_t", "d", np.float64)):
            if name not in c:  # a save from before the presence belief (rebuilt from the states) or carriage
                continue
            col = array(code)
            col.frombytes(np.ascontiguousarray(c[name], dtype=dtype).tobytes())
            setattr(self, name, col)
        self.state_t = [float(t) for t in c["st_t"]]
        self.states = [
            State(float(t), tuple(map(float, p)), tuple(map(float, e)), int(i[0]), int(i[1]), bool(i[2]),
                  float(g), int(i[3]), float(f))
            for t, p, e, i, g, f in zip(c["st_t"], c["st_pos"], c["st_ext"], c["st_int"], c["st_gone"],
                                        c["st_first"])]
        self.voxels = VoxelSet(c["vox_keys"], c["vox_pts"].astype(np.float32), c["vox_counts"].astype(np.int32))
        self.pending_voxels = VoxelSet(c["pend_keys"], c["pend_pts"].astype(np.float32),
                                       c["pend_counts"].astype(np.int32))
        self.pending = [(float(t), np.asarray(p)) for t, p in zip(c["pend_t"], c["pend_c"])]
        self.placements_s = [float(t) for t in c["placements"]]
        self.embedding = c["embedding"] if len(c["embedding"]) else None
        self.votes = {int(i): float(w) for i, w in zip(c["votes_id"], c["votes_w"])}
        if "stood_id" in c:  # saves from before the stand-in count have none
            self.stood_in_for = {int(i): int(n) for i, n in zip(c["stood_id"], c["stood_n"])}
        self.colour = c["colour"].astype(np.float32) if "colour" in c and len(c["colour"]) else None  # older saves: none
        self.sizes = ExtentLog.from_columns(c)


_SAME_FIELDS = tuple(f.name for f in fields(State) if f.name not in ("t_s", "gone_since_s"))


def _same(a: State, b: State) -> bool:
    """The two rows report the same state (times aside; NaN gone times alike): their fields' dict comparison
    (identity, then ==), field by field."""
    for k in _SAME_FIELDS:
        x, y = getattr(a, k), getattr(b, k)
        if x is not y and not x == y:
            return False
    ga, gb = a.gone_since_s, b.gone_since_s
    return ga == gb or (math.isnan(ga) and math.isnan(gb))
