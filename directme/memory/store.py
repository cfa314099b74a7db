"""SpatialMemory: the causal streaming spatial memory (update with frames, view as of any time t)."""
from __future__ import annotations

import dataclasses
import math
import threading
from pathlib import Path
from typing import Iterable, Optional, Union

import numpy as np

from ..types import FramePerception
from .component import FrameStep, MemoryComponent
from .config import MemoryConfig
from .ego_log import EgoLog
from .events import LazyChanges
from .graph import ObjectTable, build_graph
from .ingest import lift_instances, validate
from .object_store import ObjectStore
from .persist import load_memory, save_memory
from .outline import RoomOutline
from .places import PlaceClusterer
from .pose import PoseCorrector
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
        self.ego = EgoLog()
        self.pose = PoseCorrector(self.cfg)
        self.places = PlaceClusterer(self.cfg.places.eps_m)
        self.outline = RoomOutline(self.cfg.outline)
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
        """The world's up direction as known now (pose/vertical.py; None before the first frame unless configured)."""
        t = self.latest_t_s
        return self.pose.vertical.as_of(-math.inf if t is None else t)

    @property
    def T_mem_input(self) -> np.ndarray:
        """The drift correction: input world frame -> memory world frame (pose/corrector.py)."""
        return self.pose.T_mem_input

    @property
    def components(self) -> tuple[MemoryComponent, ...]:
        """The components in the order ``update`` walks them: the pose correction (its stages in their order,
        pose/corrector.py), then the ego log, the places, the room outline and the object table (component.py)."""
        return (self.pose, self.ego, self.places, self.outline, self.objects)

    def parts(self) -> dict[str, MemoryComponent]:
        """Every component that owns state, by key, in the order a save loads them: the pose stages before the
        corrector that holds them, the ego log before what reads its positions and times."""
        stages = {s.key: s for s in self.pose.stages}
        return {**stages, "pose": self.pose, "ego": self.ego, "places": self.places,
                "outline": self.outline, "objects": self.objects}

    # ------------------------------------------------------------------ update
    def update(self, fp: FramePerception) -> dict[int, str]:
        """Add one frame's perception; returns track id -> node id of the instances used.

        Invalid input raises InvalidInputError before anything changes."""
        self.check(fp)
        step = FrameStep(fp, self.objects, self.ego, self.pose, lift=self._lift)
        for component in self.components:
            component.update(step)
        with self._cache_lock:
            self._cache.clear()
        return {tid: self.objects.tracked(tid).node_id for tid in step.matched_track_ids}

    def _lift(self, fp: FramePerception, up_world: np.ndarray) -> list:
        return lift_instances(fp, self.objects, up_world)

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

    # ------------------------------------------------------------------ views
    def _ego_at(self, n: int) -> EgoTrack:
        key = ("ego", n)
        if key not in self._cache:
            self._cache[key] = dataclasses.replace(self.ego.track(n), far_edges_m=self.outline.view(n))
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

        up = self.pose.vertical.as_of(t_s)
        up = np.array([0.0, 0.0, 1.0]) if up is None else up
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
        return save_memory(self.cfg, self.parts(), directory)

    @staticmethod
    def load(directory: Union[str, Path]) -> "SpatialMemory":
        """A memory written by ``save``; a damaged, incomplete or inconsistent save raises InvalidSaveError
        naming the file."""
        cfg, parts = load_memory(directory)
        mem = SpatialMemory(cfg)
        mem.objects, mem.ego, mem.pose, mem.places = parts["objects"], parts["ego"], parts["pose"], parts["places"]
        mem.outline = parts["outline"]
        return mem
