"""The full passes that the day-scale indexes replace (every object, every log entry, every place measured):
what the indexes must give (tests/test_memory_day_index.py) and what they cost
(benchmarks/day_index_ab.py). Not used by the memory itself."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .object_store import ObjectStore
    from .timeline import Timeline


def nearby_full_pass(objs: "ObjectStore", p_w: np.ndarray, radius_m: float) -> list[int]:
    """Record indices ObjectStore.nearby returns, from every record's distance."""
    n = objs.n_records
    d = np.linalg.norm(objs.live_pos[:n] - p_w, axis=1)
    return np.flatnonzero(objs.live_alive[:n] & (d <= radius_m + 0.5 * objs.live_size[:n])).tolist()


def rows_full_pass(line: "Timeline", t_s: float, n_frames: int,
                   merged_t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(record indices, their state rows, their last observed frames) of Timeline.rows_at, from every entry
    of both logs up to t."""
    n_rec = len(merged_t)
    k = int(np.searchsorted(line.st_t.view(), t_s, side="right"))
    last = np.full(n_rec, -1, np.int64)
    np.maximum.at(last, line.st_rec.view(k), np.arange(k))
    idx = np.flatnonzero((last >= 0) & (merged_t > t_s))
    k_obs = int(np.searchsorted(line.obs_frame.view(), n_frames, side="left"))
    last_frame = np.full(n_rec, -1, np.int64)
    np.maximum.at(last_frame, line.obs_rec.view(k_obs), line.obs_frame.view(k_obs))
    return idx, last[idx], last_frame[idx]


def place_full_pass(sums: list, counts: list, tags: list[str], position_w: np.ndarray, tag: str,
                    eps_m: float) -> int:
    """The place PlaceClusterer.add picks (-1: a new one), from every place of the tag (ties: the later)."""
    best, best_d = -1, eps_m
    for i, t in enumerate(tags):
        if t == tag:
            d = float(np.linalg.norm(sums[i] / counts[i] - position_w))
            if d <= best_d:
                best, best_d = i, d
    return best
