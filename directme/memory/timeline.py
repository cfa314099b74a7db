"""Memory-wide, time-ordered copies of the per-object logs, so the objects as of t are found with a
few vectorised operations instead of a Python loop over every object (the query hot path).

Two append-only logs: every object state row (time, object, position, label, presence) and every
observation (object, ego frame position). ``rows_at`` takes, per object, the last entry of each with
time <= t. A state row rewritten within its own frame (several changes in one frame) is rewritten
here too; rows of earlier frames never change, so a view of the past stays valid. ``known_at`` lists the
objects known at t from each object's first row time alone (no pass over the rows). The per-object last
entries are kept every ``CHECKPOINT_EVERY`` entries of each log, so ``rows_at`` reads one kept copy and at
most that many entries, however long the day (not every entry since the start).
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from .buffers import GrowArray
from .objects import ObjectRecord, State

CHECKPOINT_EVERY = 8192  # log entries between two kept per-object maxima (rows_at reads at most this many)


class PrefixLast:
    """Per record, the largest value among the first k entries of an append-only (record, value) log, for
    any k: a copy is kept every ``CHECKPOINT_EVERY`` entries (built when first needed), so a call reads one
    copy and fewer than that many entries. Entries never change once written, so copies stay valid."""

    def __init__(self) -> None:
        self.kept: list[np.ndarray] = []  # kept[j]: maxima over entries [0, (j + 1) * CHECKPOINT_EVERY)

    def at(self, recs: np.ndarray, vals: "np.ndarray | None", k: int, n_rec: int) -> np.ndarray:
        """(n_rec,) int64: per record the largest of ``vals`` (None: the entry's own position) over the first
        ``k`` entries, -1 where it has none."""
        step = CHECKPOINT_EVERY
        while len(self.kept) < k // step:
            a, b = len(self.kept) * step, (len(self.kept) + 1) * step
            prev = self.kept[-1] if self.kept else np.zeros(0, np.int32)
            seg = recs[a:b]
            copy = np.full(max(int(seg.max()) + 1, len(prev)), -1, np.int64)
            copy[: len(prev)] = prev
            np.maximum.at(copy, seg, np.arange(a, b) if vals is None else vals[a:b])
            self.kept.append(copy.astype(np.int32))
        j = k // step
        out = np.full(n_rec, -1, np.int64)
        if j:
            out[: len(self.kept[j - 1])] = self.kept[j - 1]
        np.maximum.at(out, recs[j * step:k], np.arange(j * step, k) if vals is None else vals[j * step:k])
        return out


class Rows(NamedTuple):
    """The objects known at one time, as columns (object index order)."""

    index: np.ndarray  # (n,) record index
    position_w: np.ndarray  # (n, 3)
    label_id: np.ndarray  # (n,)
    present: np.ndarray  # (n,) bool
    last_frame: np.ndarray  # (n,) ego frame position of the object's last own observation


class Timeline:
    def __init__(self) -> None:
        self.st_t = GrowArray(np.float64)
        self.st_rec = GrowArray(np.int32)
        self.st_pos = GrowArray(np.float64, (3,))
        self.st_label = GrowArray(np.int32)
        self.st_present = GrowArray(np.bool_)
        self.obs_rec = GrowArray(np.int32)
        self.obs_frame = GrowArray(np.int32)
        self._last_row: dict[int, int] = {}  # record index -> its latest state row here
        self.first_t = np.full(16, np.inf)  # record index -> time of its first state row (inf: none yet)
        self._st_last, self._obs_last = PrefixLast(), PrefixLast()

    def on_state(self, rec_index: int, st: State, replaced: bool) -> None:
        if replaced:
            i = self._last_row[rec_index]
            self.st_pos.set(i, st.position_w)
            self.st_label.set(i, st.label_id)
            self.st_present.set(i, st.present)
            return
        if rec_index not in self._last_row:
            if rec_index >= len(self.first_t):
                self.first_t = np.concatenate([self.first_t, np.full(max(rec_index + 1, 2 * len(self.first_t))
                                                                     - len(self.first_t), np.inf)])
            self.first_t[rec_index] = st.t_s
        self._last_row[rec_index] = len(self.st_t)
        self.st_t.append(st.t_s)
        self.st_rec.append(rec_index)
        self.st_pos.append(st.position_w)
        self.st_label.append(st.label_id)
        self.st_present.append(st.present)

    def on_observation(self, rec_index: int, frame_pos: int) -> None:
        self.obs_rec.append(rec_index)
        self.obs_frame.append(frame_pos)

    def rows_at(self, t_s: float, n_frames: int, merged_t: np.ndarray) -> Rows:
        """Objects with an observation <= t_s (``n_frames`` ego frames) not merged away by t_s."""
        n_rec = len(merged_t)
        k = int(np.searchsorted(self.st_t.view(), t_s, side="right"))
        last = self._st_last.at(self.st_rec.view(), None, k, n_rec)
        idx = np.flatnonzero((last >= 0) & (merged_t > t_s))
        rows = last[idx]
        k_obs = int(np.searchsorted(self.obs_frame.view(), n_frames, side="left"))
        last_frame = self._obs_last.at(self.obs_rec.view(), self.obs_frame.view(), k_obs, n_rec)
        return Rows(idx, self.st_pos.view()[rows], self.st_label.view()[rows], self.st_present.view()[rows],
                    last_frame[idx])

    def known_at(self, t_s: float, merged_t: np.ndarray) -> np.ndarray:
        """Record indices (ascending) of the objects ``rows_at(t_s, ...)`` lists: a state row <= t_s and not
        merged away by t_s."""
        first = self.first_t[: len(merged_t)]
        return np.flatnonzero((first <= t_s) & (merged_t[: len(first)] > t_s))

    def rebuild(self, records: Sequence[ObjectRecord]) -> None:
        """Refill both logs from the records' own logs (after loading a saved memory)."""
        self.__init__()
        st = sorted(((s.t_s, r.index, j) for r in records for j, s in enumerate(r.states)))
        for _, ri, j in st:
            self.on_state(ri, records[ri].states[j], False)
        obs = sorted((f, r.index) for r in records for f in r.obs_frame)
        for f, ri in obs:
            self.on_observation(ri, f)
