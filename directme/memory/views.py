"""Building the read-only view of one object (and the lazy mapping of all of them) at time t."""
from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Optional

import numpy as np

from .config import GoneConfig
from .objects import ObjectRecord
from .snapshot import EgoTrack, ObjectNode


@dataclass(frozen=True, eq=False)
class ViewLog:
    """The wearer's views up to the snapshot time (poses, scene tags, intrinsics) and the gone settings:
    counts the views that should have shown an object after it was last seen."""

    ego: EgoTrack
    K: np.ndarray  # (N, 6) fx, fy, cx, cy, width, height per ego frame (zeros: unknown)
    gone: GoneConfig

    def missed_views(self, position_w: np.ndarray, last_seen_s: float) -> int:
        """Frames after ``last_seen_s`` in which the wearer was in the object's room (its scene tag when last
        seen) and its centre lay well inside the view: within ``gone.view_half_fov_deg`` of the optical
        axis and ``gone.margin_px`` inside the real image, at a depth in ``gone.view_range_m``. A few such
        frames mean it is gone even where memory missed the absence (the empty place only glimpsed)."""
        ego = self.ego
        start = int(np.searchsorted(ego.times_s, last_seen_s, side="right"))
        if start >= len(ego):
            return 0
        i_seen = start - 1
        room = ego.scene_tags[i_seen] if 0 <= i_seen < len(ego.scene_tags) else None
        T = ego.T_world_cam[start:]
        p_cam = np.einsum("nji,nj->ni", T[:, :3, :3], np.asarray(position_w) - T[:, :3, 3])
        z = p_cam[:, 2]
        K = self.K[start:]
        known = K[:, 0] > 0
        margin = float(self.gone.margin_px)
        half_x = np.where(known, (np.minimum(K[:, 2], K[:, 4] - K[:, 2]) - margin) / np.where(known, K[:, 0], 1), np.inf)
        half_y = np.where(known, (np.minimum(K[:, 3], K[:, 5] - K[:, 3]) - margin) / np.where(known, K[:, 1], 1), np.inf)
        tan_x = np.minimum(np.tan(np.deg2rad(self.gone.view_half_fov_deg[0])), half_x)
        tan_y = np.minimum(np.tan(np.deg2rad(self.gone.view_half_fov_deg[1])), half_y)
        near, far = self.gone.view_range_m
        with np.errstate(divide="ignore", invalid="ignore"):
            inside = (z > near) & (z < far) & (np.abs(p_cam[:, 0] / z) < tan_x) & (np.abs(p_cam[:, 1] / z) < tan_y)
        same_room = np.array([tag == room for tag in ego.scene_tags[start:]], dtype=bool)
        return int(np.sum(inside & same_room))


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
        position_w=position_w,
        first_seen_s=st.first_seen_s,
        last_seen_s=last_t,
        n_obs=rec.n_obs_at(t_s),
        position_history=history,
        keyframes=rec.keyframes_at(t_s),
        extent_m=np.asarray(st.extent_m, dtype=np.float64),
        present=st.present,
        gone_since_s=None if math.isnan(st.gone_since_s) else st.gone_since_s,
        place_id=place_of(last_frame),
        attributes={"n_placements": len(history), "moved": len(history) > 1},
        obs_times_s=np.asarray(rec.obs_t[: bisect_right(rec.obs_t, t_s)], dtype=np.float64),
        missed_views=views.missed_views(position_w, last_t),
    )


class LazyObjects(Mapping[str, ObjectNode]):
    """node id -> ObjectNode, each built on first access (a snapshot of 2,000 objects stays cheap)."""

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
