"""Building the read-only view of one object (and the lazy mapping of all of them) at time t."""
from __future__ import annotations

import math
from bisect import bisect_right
from typing import Callable, Iterator, Mapping, Optional

import numpy as np

from .objects import ObjectRecord
from .snapshot import ObjectNode


def object_node(rec: ObjectRecord, t_s: float, labels: list[str],
                place_of: Callable[[int], Optional[str]]) -> ObjectNode:
    """The object exactly as known at ``t_s`` (only observations with time <= t_s)."""
    st = rec.state_at(t_s)
    last_t, _ = rec.last_seen_at(t_s)
    last_frame = rec.obs_frame[bisect_right(rec.obs_t, t_s) - 1]  # place: where it was last seen itself
    history = rec.history_at(t_s)
    return ObjectNode(
        node_id=rec.node_id,
        label=labels[st.label_id],
        label_votes=rec.votes_at(t_s, labels),
        position_w=np.asarray(st.position_w, dtype=np.float64),
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
    )


class LazyObjects(Mapping[str, ObjectNode]):
    """node id -> ObjectNode, each built on first access (a snapshot of 2,000 objects stays cheap)."""

    def __init__(self, records: Mapping[str, ObjectRecord], t_s: float, labels: list[str],
                 place_of: Callable[[int], Optional[str]]) -> None:
        self._records, self._t, self._labels, self._place_of = records, t_s, labels, place_of
        self._built: dict[str, ObjectNode] = {}

    def __getitem__(self, node_id: str) -> ObjectNode:
        node = self._built.get(node_id)
        if node is None:
            node = object_node(self._records[node_id], self._t, self._labels, self._place_of)
            self._built[node_id] = node
        return node

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._records
