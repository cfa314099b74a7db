"""SpatialMemory: the causal streaming spatial memory (update with frames, view as of any time t)."""
from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Iterable, Optional, Union

import numpy as np

from ..geometry import Pose, default_up_world
from ..types import FramePerception
from .association import Match, co_observed, match_frame
from .config import MemoryConfig
from .drift import DriftCorrector
from .ego_log import EgoLog
from .events import LazyChanges
from .graph import ObjectTable, build_graph
from .ingest import apply_match, fold_stand_ins, lift_instances, link_carried, merge, settle_gone, validate
from .object_store import ObjectStore
from .objects import ObjectRecord
from .persist import MemoryParts, load_memory, save_memory
from .places import PlaceClusterer
from .presence import update_seen, views_without
from .relocalize import with_pose
from .snapshot import EgoTrack, KeyframeRef, LazyGraph, MemorySnapshot
from .views import KnownRecords, LazyObjects, ViewLog

class SpatialMemory:
    """World-frame metric-semantic map + time-versioned scene graph, built one frame at a time.

    ``as_of(t)`` shows exactly what was known from frames with timestamp <= t; later frames never
    change it (every state change is logged with its time, nothing is rewritten).
    """

    def __init__(self, config: Optional[MemoryConfig] = None) -> None:
        self.cfg = config or MemoryConfig()
        self.objects = ObjectStore(self.cfg)
        self.ego = EgoLog(None if self.cfg.up_world is None else np.asarray(self.cfg.up_world, dtype=np.float64))
        self.drift = DriftCorrector(self.cfg)
        self.places = PlaceClusterer(self.cfg.places.eps_m)
        self._cache: dict = {}
        # readers (as_of) may run in several threads at once: they fill the cache under this lock
        self._cache_lock = threading.RLock()

    def __getstate__(self) -> dict:  # copy / pickle: without the lock and the cache (rebuilt on demand)
        return {k: v for k, v in self.__dict__.items() if k not in ("_cache", "_cache_lock")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._cache, self._cache_lock = {}, threading.RLock()

    @property
    def latest_t_s(self) -> Optional[float]:
        return self.ego.latest_t_s

    @property
    def up_world(self) -> Optional[np.ndarray]:
        """The world's up direction (None before the first frame unless configured)."""
        return self.ego.up_world

    @property
    def T_mem_input(self) -> np.ndarray:
        """The drift correction: input world frame -> memory world frame (drift.py)."""
        return self.drift.T_mem_input

    # ------------------------------------------------------------------ update
    def update(self, fp: FramePerception) -> dict[int, str]:
        """Add one frame's perception; returns track id -> node id of the instances used.

        Invalid input raises InvalidInputError before anything changes."""
        self.check(fp)
        objects, ego, drift = self.objects, self.ego, self.drift
        T_input = fp.frame.T_world_cam.matrix
        C_before = drift.T_mem_input.copy()
        scan_cam = None
        if self.cfg.heading.enabled or self.cfg.scan.enabled:
            hint = ego.up_world if ego.up_world is not None else default_up_world(Pose(drift.T_mem_input @ T_input))
            up = drift.vertical(fp, T_input, hint)
            if up is not None and self.cfg.heading.enabled:
                drift.correct_heading(fp, T_input, up)
            if up is not None and self.cfg.scan.enabled:
                scan_cam = drift.register_scan(fp, T_input, up)
        if not drift.identity:
            fp = with_pose(fp, Pose(drift.T_mem_input @ T_input))
        obs = lift_instances(fp, objects, ego.up_world)
        if self.cfg.relocalisation.enabled and obs and drift.add_landmarks(obs, fp.t_s, fp.scene_tag, objects, ego):
            up = drift.vertical_est.up if drift.vertical_est.up is not None else \
                ego.up_world if ego.up_world is not None else default_up_world(fp.frame.T_world_cam)
            if drift.relocalise(fp.t_s, (drift.T_mem_input @ T_input)[:3, 3], up, objects):
                fp = with_pose(fp, Pose(drift.T_mem_input @ T_input))
                obs = lift_instances(fp, objects, ego.up_world)
        f, t = fp.frame, fp.t_s
        T = f.T_world_cam.matrix
        if ego.up_world is None:
            ego.up_world = default_up_world(Pose(T.astype(np.float32).astype(np.float64)))
        if scan_cam is not None:
            drift.map_scan(scan_cam, T, t)
        # walked distance from the input poses (a relocalisation jump is not a step)
        step = float(np.linalg.norm((C_before @ T_input)[:3, 3] - ego.T[len(ego) - 1][:3, 3])) if len(ego) else 0.0
        drift.frame_done(t)
        frame_pos = ego.append(t, T, f.index, fp.scene_tag, f.intrinsics, step)
        self.places.add(ego.T[frame_pos][:3, 3].astype(np.float64), fp.scene_tag)
        a = self.cfg.association
        search = max(a.reentry_radius_m, a.max_reentry_m, a.search_min_m)
        matches = match_frame(obs, t, self.cfg, [objects.tracked(o.inst.track_id) for o in obs],
                              [objects.nearby(o.centre_w, search) for o in obs],
                              lambda rec: ego.walked_between(rec.obs_frame[-1]))
        assigned = {m.obs.inst.track_id: apply_match(m, fp, frame_pos, objects) for m in matches}
        self._merge_duplicates(matches, t)
        for m in matches:  # a new object confirmed just now may be one the wearer carried here
            rec = objects.tracked(m.obs.inst.track_id)
            if rec is not None and rec.obs_t[-1] == t:
                link_carried(rec, objects, t, ego.nearest_since)
        seen: dict[int, float] = {}  # surviving record index -> best score of its sightings this frame
        for m in matches:
            rec = objects.tracked(m.obs.inst.track_id)
            if rec is not None and (not m.far or not rec.pending):  # a far view that confirmed a move: seen there
                seen[rec.index] = max(seen.get(rec.index, 0.0), float(m.obs.inst.score))
        update_seen(seen, objects, t)
        seen_here = [(m.obs.label_id, m.obs.centre_w, objects.tracked(m.obs.inst.track_id).index) for m in matches]
        stand_ins: list[tuple[ObjectRecord, int]] = []
        settle_gone(views_without(fp, seen, objects, seen_here, lambda rec: ego.walked_between(rec.obs_frame[-1]),
                                  stand_ins, lambda rec: ego.nearest_since(rec.obs_frame[-1], rec.position),
                                  lambda rec: drift.since_seen(rec.last_seen_s, t)),
                    objects, t)
        fold_stand_ins(stand_ins, objects, t)
        with self._cache_lock:
            self._cache.clear()
        return {tid: objects.tracked(tid).node_id for tid in assigned}

    def check(self, fp: FramePerception, after_t_s: Optional[float] = None,
              embedding_dim: Optional[int] = None) -> Optional[int]:
        """Raise InvalidInputError if ``update(fp)`` would refuse ``fp`` (nothing is changed). ``after_t_s`` and
        ``embedding_dim``: the latest time and embedding length when frames checked before ``fp`` are counted
        in (all-or-nothing for several frames); returns the embedding length after ``fp``."""
        latest = after_t_s if after_t_s is not None else self.latest_t_s
        dim = embedding_dim
        if dim is None and isinstance(fp, FramePerception) and any(i.embedding is not None for i in fp.instances):
            dim = self.objects.embedding_dim()
        return validate(fp, latest if latest is not None else -math.inf, self.cfg, dim)

    def update_many(self, frames: Iterable[FramePerception]) -> int:
        n = 0
        for fp in frames:
            self.update(fp)
            n += 1
        return n

    def _merge_duplicates(self, matches: list[Match], t: float) -> None:
        """One instance covering a second node (never seen beside the first): the two are one object."""
        for m in matches:
            for other in m.also:
                keep = self.objects.survivor(m.record)
                other = self.objects.survivor(other)
                if keep is other or co_observed(keep, other):
                    continue
                first, second = (keep, other) if keep.index < other.index else (other, keep)
                merge(first, second, self.objects, t)

    # ------------------------------------------------------------------ views
    def _ego_at(self, n: int) -> EgoTrack:
        key = ("ego", n)
        if key not in self._cache:
            self._cache[key] = self.ego.track(n)
        return self._cache[key]

    def _known_at(self, n: int) -> KnownRecords:
        """The objects known after the first ``n`` ego frames. Every change is logged with a frame's time, so all
        t in [t_n-1, t_n) see the same objects: cached by ``n``."""
        key = ("known", n)
        if key not in self._cache:
            objects = self.objects
            t_n = float(self.ego.t[n - 1]) if n else -math.inf
            known = objects.timeline.known_at(t_n, objects.merged_t[: objects.n_records])
            self._cache[key] = KnownRecords(objects.records, known)
        return self._cache[key]

    def _table_at(self, n: int) -> ObjectTable:
        """The graph table of the objects known after the first ``n`` ego frames (cached by ``n``)."""
        key = ("table", n)
        if key not in self._cache:
            objects = self.objects
            t_n = float(self.ego.t[n - 1]) if n else -math.inf
            rows = objects.timeline.rows_at(t_n, n, objects.merged_t[: objects.n_records])
            pc = self.cfg.places
            self._cache[key] = ObjectTable(rows, objects.labels, self.places.place_of_frame, pc.edge_knn,
                                           pc.edge_distance_m, pc.max_near_edges)
        return self._cache[key]

    def as_of(self, t_s: float, node_ids: Optional[Iterable[str]] = None) -> MemorySnapshot:
        """The memory as it was at ``t_s`` (see ``_as_of``). Safe to call from several threads at once,
        but not while ``update`` runs: ``directme.Agent`` makes sure of that (docs/faq.md, Threads)."""
        with self._cache_lock:
            return self._as_of(t_s, node_ids)

    def _as_of(self, t_s: float, node_ids: Optional[Iterable[str]] = None) -> MemorySnapshot:
        """The memory as it was at ``t_s``. With ``node_ids`` the graph holds only those objects, their
        neighbours, their places, the wearer's place and the ego node (a cheap subgraph for one question);
        ``objects`` always lists every object known at t_s, each built on access; the graph is built on first
        access (docs/memory.md, Query cost)."""
        t_s = float(t_s)
        wanted = None if node_ids is None else tuple(sorted(set(node_ids)))
        key = ("snap", t_s, wanted)
        if key in self._cache:
            return self._cache[key]
        if len(self._cache) > 256:  # views of many different times: keep the cache bounded
            self._cache.clear()
        n = self.ego.n_frames_at(t_s)
        recs = self._known_at(n)
        ego = self._ego_at(n)
        views = ViewLog(ego, self.ego.K.view(n), self.cfg.gone)
        objects = LazyObjects(recs, t_s, self.objects.labels, self.places.place_of_frame, views)
        places = self._places_at(n)
        current_place = self.places.place_of_frame(n - 1)

        def graph():
            with self._cache_lock:
                return build_graph(self._table_at(n), places, ego, current_place, wanted)

        up = self.up_world if self.up_world is not None else np.array([0.0, 0.0, 1.0])
        labels = self.objects.labels
        changes = LazyChanges(recs, t_s, lambda rec: labels[rec.state_at(t_s).label_id], views.last_view_before)
        snap = MemorySnapshot(t_s, objects, places, ego, LazyGraph(graph), up.copy(), changes)
        self._cache[key] = snap
        return snap

    def _places_at(self, n: int) -> dict:
        key = ("places", n)
        if key not in self._cache:
            self._cache[key] = self.places.places_at(n, self.ego.T.view(n)[:, :3, 3], self.ego.t.view(n))
        return self._cache[key]

    def keyframe_image(self, ref_or_frame_index: Union[KeyframeRef, int]) -> Optional[np.ndarray]:
        """The stored (downsampled) RGB image of a keyframe, or None if it was not kept."""
        idx = ref_or_frame_index.frame_index if isinstance(ref_or_frame_index, KeyframeRef) else int(ref_or_frame_index)
        return self.objects.images.get(idx)

    # ------------------------------------------------------------------ persistence
    def save(self, directory: Union[str, Path]) -> Path:
        """Write the memory to ``directory`` (persist.py: each component writes its own state). Crash-safe:
        written beside it and renamed into place, so an earlier save there stays whole until the new one is
        complete; refuses a non-empty directory that is not a directme save (docs/faq.md)."""
        return save_memory(MemoryParts(self.cfg, self.objects, self.ego, self.drift, self.places), directory)

    @staticmethod
    def load(directory: Union[str, Path]) -> "SpatialMemory":
        """A memory written by ``save``; a damaged, incomplete or inconsistent save raises InvalidSaveError
        naming the file."""
        parts = load_memory(directory)
        mem = SpatialMemory(parts.cfg)
        mem.objects, mem.ego, mem.drift, mem.places = parts.objects, parts.ego, parts.drift, parts.places
        return mem
