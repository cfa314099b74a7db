"""Building the read-only view of one object (and the lazy mapping of all of them) at time t."""
from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Optional, Sequence

import numpy as np

from .config import GoneConfig
from .objects import ObjectRecord
from .snapshot import EgoTrack, ObjectNode, record_index


@dataclass(frozen=True, eq=False)
class ViewLog:
    """The wearer's views up to the snapshot time (poses, intrinsics) and the presence settings: when a
    place was in view (the intervals of change events)."""

    ego: EgoTrack
    K: np.ndarray  # (N, 6) fx, fy, cx, cy, width, height per ego frame (zeros: unknown)
    gone: GoneConfig

    def in_view(self, position_w: np.ndarray, start: int, stop: int) -> np.ndarray:
        """Per ego frame in [start, stop): was ``position_w`` in view - in front of the camera within
        the detector's range and at least ``gone.margin_px`` inside that frame's image (unknown intrinsics:
        never)? Occlusion is not known here (the frames' depth is not kept)."""
        ego = self.ego
        T = ego.T_world_cam[start:stop]
        p_cam = np.einsum("nji,nj->ni", T[:, :3, :3], np.asarray(position_w) - T[:, :3, 3])
        z = p_cam[:, 2]
        K = self.K[start:stop]
        near, far = self.gone.detect_range_m
        m = float(self.gone.margin_px)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = K[:, 0] * p_cam[:, 0] / z + K[:, 2]
            v = K[:, 1] * p_cam[:, 1] / z + K[:, 3]
            return (K[:, 0] > 0) & (z > near) & (z < far) & (u >= m) & (u < K[:, 4] - m) & (v >= m) & (v < K[:, 5] - m)

    def last_view_before(self, position_w: np.ndarray, t_s: float) -> float:
        """Time of the last ego frame before ``t_s`` that had ``position_w`` in view (-inf: none)."""
        stop = int(np.searchsorted(self.ego.times_s, t_s, side="left"))
        hit = np.flatnonzero(self.in_view(position_w, 0, stop))
        return float(self.ego.times_s[hit[-1]]) if len(hit) else -math.inf


def object_node(rec: ObjectRecord, t_s: float, labels: list[str],
                place_of: Callable[[int], Optional[str]], views: ViewLog) -> ObjectNode:
    """The object exactly as known at ``t_s`` (only observations with time <= t_s)."""
    st = rec.state_at(t_s)
    last_t, _ = rec.last_seen_at(t_s)
    last_frame = rec.obs_frame[bisect_right(rec.obs_t, t_s) - 1]  # place: where it was last seen itself
    history = rec.history_at(t_s)
    position_w = np.asarray(st.position_w, dtype=np.float64)
    return ObjectNode(
        node_id=rec.node_id,
        label=labels[st.label_id],
        label_votes=rec.votes_at(t_s, labels),
        label_first_seen_s=rec.label_first_seen_at(t_s, labels),
        position_w=position_w,
        first_seen_s=st.first_seen_s,
        last_seen_s=last_t,
        n_obs=rec.n_obs_at(t_s),
        position_history=history,
        keyframes=rec.keyframes_at(t_s),
        extent_m=np.asarray(st.extent_m, dtype=np.float64),
        measured_extent_m=rec.sizes.at(t_s),
        present=st.present,
        gone_since_s=None if math.isnan(st.gone_since_s) else st.gone_since_s,
        place_id=place_of(last_frame),
        attributes={"n_placements": len(history), "moved": len(history) > 1},
        obs_times_s=np.asarray(rec.obs_t[: bisect_right(rec.obs_t, t_s)], dtype=np.float64),
        presence_p=rec.presence_at(t_s),
        carried=rec.carried_at(t_s),
    )


class KnownRecords(Mapping[str, ObjectRecord]):
    """node id -> record of the objects known at one time, over the record list and their indices (ascending):
    made from the index array with one vectorised step, never a dict of every object."""

    def __init__(self, records: Sequence[ObjectRecord], index: np.ndarray) -> None:
        self._records, self.index = records, index
        self._known = np.zeros(int(index[-1]) + 1 if len(index) else 0, bool)
        self._known[index] = True

    def position(self, node_id: object) -> int:
        """The record index of ``node_id`` if that object is known here, else -1."""
        i = record_index(node_id)
        return i if 0 <= i < len(self._known) and self._known[i] else -1

    def __getitem__(self, node_id: str) -> ObjectRecord:
        i = self.position(node_id)
        if i < 0:
            raise KeyError(node_id)
        return self._records[i]

    def __iter__(self) -> Iterator[str]:
        return (f"o{i}" for i in self.index.tolist())

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, node_id: object) -> bool:
        return self.position(node_id) >= 0


class LazyObjects(Mapping[str, ObjectNode]):
    """node id -> ObjectNode, each built on first access (a snapshot of 10,000 objects stays cheap)."""

    def __init__(self, records: Mapping[str, ObjectRecord], t_s: float, labels: list[str],
                 place_of: Callable[[int], Optional[str]], views: ViewLog) -> None:
        self._records, self._t, self._labels, self._place_of, self._views = records, t_s, labels, place_of, views
        self._built: dict[str, ObjectNode] = {}

    def __getitem__(self, node_id: str) -> ObjectNode:
        node = self._built.get(node_id)
        if node is None:  # two threads may build one node at once: both get the one kept first
            node = object_node(self._records[node_id], self._t, self._labels, self._place_of, self._views)
            node = self._built.setdefault(node_id, node)
        return node

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._records
