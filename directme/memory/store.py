"""SpatialMemory: the causal streaming spatial memory (update with frames, view as of any time t)."""
from __future__ import annotations

import logging
import math
from array import array
from pathlib import Path
from typing import Iterable, Optional, Union

import numpy as np

from ..geometry import Pose, default_up_world
from ..types import Frame, FramePerception
from .association import co_observed, match_frame
from .buffers import GrowArray
from .config import MemoryConfig
from .graph import ObjectTable, build_graph
from .heading import HeadingTracker
from .ingest import apply_match, check_gone, lift_instances, merge, refresh_shape, validate
from .keyframes import ImageStore
from .objects import ObjectRecord
from .places import PlaceClusterer
from .relocalize import Correction, Relocaliser, with_pose
from .snapshot import EgoTrack, KeyframeRef, MemorySnapshot
from .timeline import Timeline
from .views import LazyObjects

log = logging.getLogger("directme.memory")


class SpatialMemory:
    """World-frame metric-semantic map + time-versioned scene graph, built one frame at a time.

    ``as_of(t)`` shows exactly what was known from frames with timestamp <= t; later frames never
    change it (every state change is logged with its time, nothing is rewritten).
    """

    def __init__(self, config: Optional[MemoryConfig] = None) -> None:
        self.cfg = config or MemoryConfig()
        self.labels: list[str] = []
        self._label_ids: dict[str, int] = {}
        self.tags: list[Optional[str]] = []
        self.ego_t = GrowArray(np.float64)
        self.ego_T = GrowArray(np.float32, (4, 4))
        self.ego_frame = GrowArray(np.int32)  # stream frame index of each ego frame
        self.ego_tag = GrowArray(np.int16)
        self.ego_path = array("d")  # metres walked up to each ego frame (drift allowance)
        self.places = PlaceClusterer(self.cfg.place_eps_m)
        self.records: list[ObjectRecord] = []
        self.track_map: dict[int, int] = {}
        self.images = ImageStore(self.cfg.keyframe_image_max_side, self.cfg.keyframe_jpeg_quality)
        self.up_world: Optional[np.ndarray] = (None if self.cfg.up_world is None
                                               else np.asarray(self.cfg.up_world, dtype=np.float64))
        self.live_pos = np.zeros((16, 3))
        self.live_size = np.zeros(16)
        self.live_present = np.zeros(16, dtype=bool)
        self.live_alive = np.zeros(16, dtype=bool)
        self.merged_t = np.full(16, math.inf)  # time each record was merged into another (inf: never)
        self.timeline = Timeline()
        self.T_mem_input = np.eye(4)  # drift correction: input world frame -> memory world frame (relocalize.py)
        # applied corrections: (time, wearer position change in m, rotation about up in degrees)
        self.relocalisations: list[tuple[float, tuple[float, float, float], float]] = []
        self.reloc = Relocaliser()
        self.heading = HeadingTracker()
        self.heading_corrections: list[tuple[float, float]] = []  # (time, turn about up in degrees) (heading.py)
        self._cache: dict = {}

    # ------------------------------------------------------------------ bookkeeping used by ingest
    @property
    def n_records(self) -> int:
        return len(self.records)

    @property
    def latest_t_s(self) -> Optional[float]:
        return float(self.ego_t[len(self.ego_t) - 1]) if len(self.ego_t) else None

    def label_id(self, label: str) -> int:
        i = self._label_ids.get(label)
        if i is None:
            i = self._label_ids[label] = len(self.labels)
            self.labels.append(label)
        return i

    def frame_index_of(self, frame: Frame) -> int:
        return int(frame.index) if frame.index >= 0 else len(self.ego_t) - 1

    def new_record(self) -> ObjectRecord:
        rec = ObjectRecord(len(self.records))
        self.records.append(rec)
        if rec.index >= len(self.live_pos):
            n = 2 * len(self.live_pos)
            self.live_pos = np.resize(self.live_pos, (n, 3))
            self.live_size = np.resize(self.live_size, n)
            self.live_present = np.resize(self.live_present, n)
            self.live_alive = np.resize(self.live_alive, n)
            self.merged_t = np.resize(self.merged_t, n)
        self.live_present[rec.index] = self.live_alive[rec.index] = False
        self.merged_t[rec.index] = math.inf
        rec.log = self.timeline
        return rec

    def sync(self, rec: ObjectRecord) -> None:
        """Mirror a record's reported state into the live arrays used for search and gone checks."""
        i = rec.index
        self.live_pos[i] = rec.position
        self.live_size[i] = float(np.max(rec.extent))
        self.live_present[i] = rec.state.present and rec.merged_into is None
        self.live_alive[i] = rec.merged_into is None
        self.merged_t[i] = math.inf if rec.merged_into is None else rec.merged_into[0]

    def retire(self, rec: ObjectRecord) -> None:
        self.live_present[rec.index] = False
        self.live_alive[rec.index] = False
        self.merged_t[rec.index] = math.inf if rec.merged_into is None else rec.merged_into[0]

    def nearby(self, p_w: np.ndarray, radius_m: float) -> list[ObjectRecord]:
        """Live (not merged) records whose centre is within ``radius_m`` + half their size of ``p_w``."""
        n = len(self.records)
        d = np.linalg.norm(self.live_pos[:n] - p_w, axis=1)
        hit = np.flatnonzero(self.live_alive[:n] & (d <= radius_m + 0.5 * self.live_size[:n]))
        return [self.records[i] for i in hit.tolist()]

    def _tracked(self, track_id: int) -> Optional[ObjectRecord]:
        i = self.track_map.get(track_id)
        return None if i is None else self._survivor(self.records[i])

    def walked_since(self, rec: ObjectRecord, obs_index: int = -1) -> float:
        """Metres the wearer walked since ``rec`` was last seen (since its observation ``obs_index``)."""
        return self.ego_path[-1] - self.ego_path[rec.obs_frame[obs_index]]

    @staticmethod
    def _survivor(rec: ObjectRecord) -> ObjectRecord:
        while rec.merged_into is not None:
            rec = rec.merged_into[1]
        return rec

    # ------------------------------------------------------------------ update
    def update(self, fp: FramePerception) -> dict[int, str]:
        """Add one frame's perception; returns track id -> node id of the instances used.

        Invalid input raises InvalidInputError before anything changes."""
        validate(fp, self.latest_t_s if self.latest_t_s is not None else -math.inf)
        T_input = fp.frame.T_world_cam.matrix
        C_before = self.T_mem_input.copy()
        if self.cfg.heading_from_structure:
            self._correct_heading(fp, T_input)
        if not np.array_equal(self.T_mem_input, np.eye(4)):
            fp = with_pose(fp, Pose(self.T_mem_input @ T_input))
        obs = lift_instances(fp, self)
        if self.cfg.relocalize and obs and self.reloc.add_frame(obs, fp.t_s, fp.scene_tag, self):
            if self._relocalise(fp, (self.T_mem_input @ T_input)[:3, 3]):
                fp = with_pose(fp, Pose(self.T_mem_input @ T_input))
                obs = lift_instances(fp, self)
        f, t = fp.frame, fp.t_s
        T = f.T_world_cam.matrix.astype(np.float32)
        if self.up_world is None:
            self.up_world = default_up_world(Pose(T.astype(np.float64)))
        self.ego_t.append(t)
        self.ego_T.append(T)
        self.ego_frame.append(f.index if f.index >= 0 else len(self.ego_t) - 1)
        if fp.scene_tag not in self.tags:
            self.tags.append(fp.scene_tag)
        self.ego_tag.append(self.tags.index(fp.scene_tag))
        self.places.add(T[:3, 3].astype(np.float64), fp.scene_tag)
        frame_pos = len(self.ego_t) - 1
        # walked distance from the input poses (a relocalisation jump is not a step)
        step = float(np.linalg.norm((C_before @ T_input)[:3, 3] - self.ego_T[frame_pos - 1][:3, 3])) if frame_pos else 0.0
        self.ego_path.append((self.ego_path[-1] if self.ego_path else 0.0) + step)
        search = max(self.cfg.reentry_radius_m, self.cfg.max_reentry_m, 1.5)
        matches = match_frame(obs, t, self.cfg, [self._tracked(o.inst.track_id) for o in obs],
                              [self.nearby(o.centre_w, search) for o in obs], self.walked_since)
        assigned = {m.obs.inst.track_id: apply_match(m, fp, frame_pos, self) for m in matches}
        seen = {r.index for r in assigned.values()}
        self._merge_duplicates(matches, t)
        check_gone(fp, seen, self)
        self._cache.clear()
        return {tid: self._tracked(tid).node_id for tid in assigned}

    def _correct_heading(self, fp: FramePerception, T_input: np.ndarray) -> None:
        """Turn the drift correction when the scene's structure shows the heading is off (heading.py)."""
        f = fp.frame
        T = self.T_mem_input @ T_input
        up_given = self.cfg.up_world is not None  # else refined from the first frame's floor and table normals
        up = self.up_world if self.up_world is not None else default_up_world(Pose(T))
        yaw = self.heading.observe(f.depth_m, f.intrinsics, T, fp.t_s, up, up_given, self.cfg)
        if yaw is None:
            return
        turn = Correction(yaw, T[:3, 3], np.zeros(3), self.heading.up)  # about the vertical through the wearer
        self.T_mem_input = turn.matrix() @ self.T_mem_input
        self.heading.applied(yaw)
        self.heading_corrections.append((fp.t_s, math.degrees(yaw)))
        log.debug("t=%.3fs: heading corrected by %.2f deg from the scene structure", fp.t_s, math.degrees(yaw))

    def _relocalise(self, fp: FramePerception, pivot_w: np.ndarray) -> bool:
        """Apply the correction the landmark pairs support (relocalize.py); returns whether one was applied."""
        up = self.up_world if self.up_world is not None else default_up_world(fp.frame.T_world_cam)
        found = self.reloc.estimate(self, pivot_w, up)
        if found is None:
            return False
        corr, members = found
        t = fp.t_s
        D = corr.matrix()
        prev_t = self.relocalisations[-1][0] if self.relocalisations else -math.inf
        since = max(prev_t, t - self.cfg.reloc_window_s)
        # objects first seen during the window (after the previous correction) were mapped with the drifted
        # poses: move them, and fold those that duplicate a supporting landmark into it
        dup_of = {n.index: self._survivor(self.records[p.record])
                  for p in members if (n := self._tracked(p.track_id)) is not None}
        for rec in self.records:
            if rec.merged_into is None and rec.obs_t and prev_t < rec.obs_t[0] < t and rec.obs_t[0] >= since:
                rec.voxels = rec.voxels.transformed(D, self.cfg.voxel_m)
                refresh_shape(rec, self, t)
                keep = dup_of.get(rec.index)
                if keep is not None and keep is not rec and not co_observed(keep, rec):
                    merge(keep, rec, self, t)
        self.T_mem_input = D @ self.T_mem_input
        self.reloc.used.update({p.record: t for p in members})
        moved = corr.apply(pivot_w[None])[0] - pivot_w
        self.relocalisations.append((t, tuple(float(v) for v in moved), math.degrees(corr.yaw_rad)))
        log.info("t=%.3fs: relocalised on %d remembered landmarks: moved %s m, turned %.1f deg", t, len(members),
                 np.round(moved, 3), math.degrees(corr.yaw_rad))
        return True

    def update_many(self, frames: Iterable[FramePerception]) -> int:
        n = 0
        for fp in frames:
            self.update(fp)
            n += 1
        return n

    def _merge_duplicates(self, matches: list, t: float) -> None:
        """One instance covering a second node (never seen beside the first): the two are one object."""
        for m in matches:
            for other in m.also:
                keep = self._survivor(m.record)
                other = self._survivor(other)
                if keep is other or co_observed(keep, other):
                    continue
                first, second = (keep, other) if keep.index < other.index else (other, keep)
                merge(first, second, self, t)

    # ------------------------------------------------------------------ views
    def _n_frames_at(self, t_s: float) -> int:
        return int(np.searchsorted(self.ego_t.view(), t_s, side="right"))

    def _ego_at(self, n: int) -> EgoTrack:
        key = ("ego", n)
        if key not in self._cache:
            self._cache[key] = EgoTrack(self.ego_t.view(n), self.ego_T.view(n),
                                        tuple(self.tags[i] for i in self.ego_tag.view(n).tolist()),
                                        tuple(self.ego_frame.view(n).tolist()))
        return self._cache[key]

    def _table_at(self, n: int) -> tuple[dict, ObjectTable]:
        """Objects known after the first ``n`` ego frames and their graph table. Every change is logged
        with a frame's time, so all t in [t_n-1, t_n) see the same objects: cached by ``n``."""
        key = ("table", n)
        if key not in self._cache:
            t_n = float(self.ego_t[n - 1]) if n else -math.inf
            rows = self.timeline.rows_at(t_n, n, self.merged_t[: self.n_records])
            recs = {f"o{i}": self.records[i] for i in rows.index.tolist()}
            self._cache[key] = (recs, ObjectTable(rows, self.labels, self.places.place_of_frame, self.cfg.edge_knn))
        return self._cache[key]

    def as_of(self, t_s: float, node_ids: Optional[Iterable[str]] = None) -> MemorySnapshot:
        """The memory as it was at ``t_s``. With ``node_ids`` the graph holds only those objects, their
        neighbours, the places and the ego node (a cheap subgraph for one question); ``objects`` always
        lists every object known at t_s, built lazily on access."""
        t_s = float(t_s)
        wanted = None if node_ids is None else tuple(sorted(set(node_ids)))
        key = ("snap", t_s, wanted)
        if key in self._cache:
            return self._cache[key]
        if len(self._cache) > 256:  # views of many different times: keep the cache bounded
            self._cache.clear()
        n = self._n_frames_at(t_s)
        recs, table = self._table_at(n)
        objects = LazyObjects(recs, t_s, self.labels, self.places.place_of_frame)
        ego = self._ego_at(n)
        places = self._places_at(n)
        graph = build_graph(table, places, ego, self.places.place_of_frame(n - 1), self.cfg.edge_distance_m, wanted)
        up = self.up_world if self.up_world is not None else np.array([0.0, 0.0, 1.0])
        snap = MemorySnapshot(t_s, objects, places, ego, graph, up.copy())
        self._cache[key] = snap
        return snap

    def _places_at(self, n: int) -> dict:
        key = ("places", n)
        if key not in self._cache:
            self._cache[key] = self.places.places_at(n, self.ego_T.view(n)[:, :3, 3], self.ego_t.view(n))
        return self._cache[key]

    def keyframe_image(self, ref_or_frame_index: Union[KeyframeRef, int]) -> Optional[np.ndarray]:
        """The stored (downsampled) RGB image of a keyframe, or None if it was not kept."""
        idx = ref_or_frame_index.frame_index if isinstance(ref_or_frame_index, KeyframeRef) else int(ref_or_frame_index)
        return self.images.get(idx)

    # ------------------------------------------------------------------ persistence
    def save(self, directory: Union[str, Path]) -> Path:
        from .persist import save_memory

        return save_memory(self, Path(directory))

    @staticmethod
    def load(directory: Union[str, Path]) -> "SpatialMemory":
        from .persist import load_memory

        return load_memory(Path(directory))
