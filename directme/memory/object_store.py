"""The object table: every remembered object's record, the label vocabulary, tracker-id bindings, the
memory-wide state timeline, keyframe images, and the live columns used to search objects by place."""
from __future__ import annotations

import math
from array import array
from typing import Any, Mapping, Optional

import numpy as np

from .._atomic import StateError, column
from ..geometry import row_norms
from . import ingest
from .buffers import canonical_nans
from .component import FrameStep, State
from .config import MemoryConfig
from .keyframes import ImageStore
from .map import VoxelSet, trimmed_box
from .objects import KeyframeEntry, ObjectRecord
from .snapshot import KeyframeRef
from .grid_index import GridIndex
from .timeline import Timeline

IMAGE = "image/"  # the arrays of the keyframe images (JPEG bytes) are named IMAGE + their frame index


class ObjectStore:
    """The object table component: owns the objects' state. A frame updates it in ``update`` (ingest.py, presence.py);
    what changes an object's place, shape, presence or merges goes through the command methods here
    (``reshape``, ``place_anew``, ``transform``, ``follow``, ``set_presence``, ``merge``), which keep the live
    columns in sync with the records."""

    key = "objects"
    sections = ("association", "map", "keyframes", "gone")

    def __init__(self, cfg: MemoryConfig) -> None:
        self.cfg = cfg
        self.records: list[ObjectRecord] = []
        self.labels: list[str] = []
        self._label_ids: dict[str, int] = {}
        self._fixed: dict[int, bool] = {}  # label id -> one of memory.gone.fixed_labels
        self.track_map: dict[int, int] = {}  # tracker id -> record index it was last bound to
        self.timeline = Timeline()
        self.images = ImageStore(cfg.keyframes.image_max_side, cfg.keyframes.jpeg_quality,
                                 int(cfg.keyframes.pending_mb * 2**20))
        # live columns (one row per record), mirrored from the records by sync/retire
        self.live_pos = np.zeros((16, 3))
        self.live_size = np.zeros(16)
        self.live_present = np.zeros(16, dtype=bool)
        self.live_alive = np.zeros(16, dtype=bool)
        self.live_belief = np.zeros(16)  # presence log-odds (memory/presence.py)
        self.merged_t = np.full(16, math.inf)  # time each record was merged into another (inf: never)
        self.grid = GridIndex()  # record centres on the ground, for nearby()

    @property
    def n_records(self) -> int:
        return len(self.records)

    def embedding_dim(self) -> Optional[int]:
        """Length of the objects' embeddings (None while no object has one); every object's has this length."""
        dim = getattr(self, "_embedding_dim", None)
        if dim is None:  # found once (never cached as None: the next object may bring the first)
            dim = self._embedding_dim = next((len(r.embedding) for r in self.records if r.embedding is not None), None)
        return dim

    def label_id(self, label: str) -> int:
        i = self._label_ids.get(label)
        if i is None:
            i = self._label_ids[label] = len(self.labels)
            self.labels.append(label)
        return i

    def is_fixed(self, label_id: int) -> bool:
        """Is this label one of ``gone.fixed_labels`` (a part of "A/B" or its last words equal to an entry)?"""
        hit = self._fixed.get(label_id)
        if hit is None:
            fixed = self.cfg.gone.fixed_labels
            words = [" ".join(part.lower().replace("_", " ").split()) for part in self.labels[label_id].split("/")]
            hit = self._fixed[label_id] = any(w == f or w.endswith(" " + f) for w in words for f in fixed)
        return hit

    def new_record(self) -> ObjectRecord:
        rec = ObjectRecord(len(self.records))
        self.records.append(rec)
        if rec.index >= len(self.live_pos):
            n = 2 * len(self.live_pos)
            self.live_pos = np.resize(self.live_pos, (n, 3))
            self.live_size = np.resize(self.live_size, n)
            self.live_present = np.resize(self.live_present, n)
            self.live_alive = np.resize(self.live_alive, n)
            self.live_belief = np.resize(self.live_belief, n)
            self.merged_t = np.resize(self.merged_t, n)
        self.live_present[rec.index] = self.live_alive[rec.index] = False
        self.live_belief[rec.index] = 0.0
        self.merged_t[rec.index] = math.inf
        rec.log = self.timeline
        return rec

    def update(self, step: FrameStep) -> None:
        """This frame's instances matched to the objects, applied, merged; presence updated (ingest.py)."""
        ingest.ingest_frame(self, step)

    # ------------------------------------------------------------------ commands (they keep the columns in sync)
    def reshape(self, rec: ObjectRecord, t_s: float, **changes) -> None:
        """Recompute position and extent from the voxels (and the label from the votes), with ``changes``."""
        centre, extent = trimmed_box(rec.voxels.pts, self.cfg.map.position_trim)
        rec.set_state(t_s, position_w=centre, extent_m=extent, label_id=rec.label_id_from_votes(), **changes)
        self._sync(rec)

    def place_anew(self, rec: ObjectRecord, voxels: VoxelSet, start_s: float, t_s: float) -> None:
        """A new placement of ``rec`` from ``start_s`` on, made of ``voxels`` (known at ``t_s``)."""
        rec.voxels = voxels
        rec.placements_s.append(start_s)
        self.reshape(rec, t_s, placement=len(rec.placements_s) - 1)

    def transform(self, rec: ObjectRecord, D: np.ndarray, t_s: float) -> None:
        """Move ``rec``'s points by the rigid transform ``D`` (a pose correction of the frames it was mapped in)."""
        rec.voxels = rec.voxels.transformed(D, self.cfg.map.voxel_m)
        self.reshape(rec, t_s)

    def follow(self, rec: ObjectRecord, t_s: float, position_w: np.ndarray) -> None:
        """``rec`` is at ``position_w`` now (carried by the wearer: its points are not updated)."""
        rec.set_state(t_s, position_w=position_w, label_id=rec.label_id_from_votes())
        self._sync(rec)

    def set_presence(self, rec: ObjectRecord, t_s: float, logodds: float) -> bool:
        """Log the belief; update the reported state when presence flips. Returns whether it became gone."""
        rec.set_belief(t_s, logodds)
        self.live_belief[rec.index] = logodds
        present = 1.0 / (1.0 + math.exp(-logodds)) >= self.cfg.gone.present_p
        if present == rec.state.present:
            return False
        if present:
            rec.set_state(t_s, present=True, gone_since_s=math.nan)
        else:
            was = any(s.present for s in rec.states if s.t_s < t_s)  # present before: gone; else never confirmed
            since = rec.first_miss_s if rec.first_miss_s < math.inf else t_s
            rec.set_state(t_s, present=False, gone_since_s=since if was else math.nan)
        self._sync(rec)
        return not present

    def merge(self, keep: ObjectRecord, gone: ObjectRecord, t_s: float, with_voxels: bool = True,
              with_tracks: bool = True) -> None:
        """Fold ``gone`` into ``keep`` from ``t_s`` on (both histories stay readable before); ``with_voxels`` False
        when ``gone``'s points were misplaced (its place was seen empty); ``with_tracks`` False when ``gone``'s
        tracker ids may be another object's (they are unbound, not passed to ``keep``)."""
        gone.merged_into = (t_s, keep)
        keep.merges.append((t_s, gone))
        if with_voxels:
            keep.voxels.add(gone.voxels, self.cfg.map.max_voxels_per_object)
        for k, w in gone.votes.items():
            keep.votes[k] = keep.votes.get(k, 0.0) + w
        if len(gone.sizes):  # its views count from the merge on (the extent before it stays as it was)
            keep.sizes.add(t_s, *gone.sizes.kept(), self.cfg.map)
        for kf in gone.live_keyframes():
            kf.removed_s = t_s
            self.images.release(kf.ref.frame_index)
        if not math.isnan(gone.belief) and not gone.belief <= keep.belief:  # the stronger belief of the two
            self.set_presence(keep, t_s, gone.belief)
        keep.set_state(t_s, n_obs_offset=keep.state.n_obs_offset + gone.n_obs_live(),
                       first_seen_s=min(keep.state.first_seen_s, gone.state.first_seen_s))
        for tid, idx in list(self.track_map.items()):
            if idx == gone.index:
                if with_tracks:
                    self.track_map[tid] = keep.index
                else:
                    del self.track_map[tid]
        self._retire(gone)
        self.reshape(keep, t_s)

    def _sync(self, rec: ObjectRecord) -> None:
        """Mirror a record's reported state into the live columns used for search and gone checks."""
        i = rec.index
        self.live_pos[i] = rec.position
        self.live_size[i] = float(np.max(rec.extent))
        self.grid.place(i, self.live_pos[i], self.live_size[i])
        self.live_present[i] = rec.state.present and rec.merged_into is None
        self.live_alive[i] = rec.merged_into is None
        self.live_belief[i] = rec.belief if rec.pres_l else 0.0
        self.merged_t[i] = math.inf if rec.merged_into is None else rec.merged_into[0]

    def _retire(self, rec: ObjectRecord) -> None:
        self.live_present[rec.index] = False
        self.live_alive[rec.index] = False
        self.merged_t[rec.index] = math.inf if rec.merged_into is None else rec.merged_into[0]

    def nearby(self, p_w: np.ndarray, radius_m: float) -> list[ObjectRecord]:
        """Live (not merged) records whose centre is within ``radius_m`` + half their size of ``p_w``, in record
        order; only the records of the grid cells within reach are measured."""
        cand = self.grid.candidates(p_w, radius_m)
        d = row_norms(self.live_pos[cand] - p_w)
        hit = cand[self.live_alive[cand] & (d <= radius_m + 0.5 * self.live_size[cand])]
        return [self.records[i] for i in hit.tolist()]

    def nearby_each(self, points_w: np.ndarray, radius_m: float) -> list[list[int]]:
        """The indices of ``nearby(p, radius_m)`` for each row ``p`` of ``points_w`` (N, 3), from one grid search
        around them all (it reaches their spread farther)."""
        if not len(points_w):
            return []
        mid = np.add.reduce(points_w, axis=0) / len(points_w)
        cand = self.grid.candidates(mid, radius_m + float(np.max(row_norms(points_w - mid))) + 1e-6)
        cand = cand[self.live_alive[cand]]
        pos, reach = self.live_pos[cand], radius_m + 0.5 * self.live_size[cand]
        return [cand[row_norms(pos - p) <= reach].tolist() for p in points_w]

    def tracked(self, track_id: int) -> Optional[ObjectRecord]:
        """The live record a tracker id is bound to (following merges), or None."""
        i = self.track_map.get(track_id)
        return None if i is None else self.survivor(self.records[i])

    @staticmethod
    def survivor(rec: ObjectRecord) -> ObjectRecord:
        while rec.merged_into is not None:
            rec = rec.merged_into[1]
        return rec

    # ------------------------------------------------------------------ persistence
    def to_state(self) -> State:
        """(JSON-able metadata, named arrays) of the whole table; its keyframe images are the arrays
        ``image/<frame index>`` (JPEG bytes)."""
        meta = {
            "labels": self.labels, "track_map": [[int(k), int(v)] for k, v in self.track_map.items()],
            "image_refs": [[int(k), int(v)] for k, v in self.images.refs.items()],
            "objects": [{
                "keyframes": [_kf_json(k) for k in r.keyframes],
                "merges": [[t, o.index] for t, o in r.merges],
                "merged_into": None if r.merged_into is None else [r.merged_into[0], r.merged_into[1].index],
                "first_miss_s": None if r.first_miss_s == math.inf else r.first_miss_s,
                "moving": r.moving,
                "carry_ref": None if r.carry_ref is None else [r.carry_ref[0], *map(float, r.carry_ref[1]),
                                                               *map(float, r.carry_ref[2])],
            } for r in self.records],
        }
        arrays: dict[str, np.ndarray] = {}
        cols = [r.columns() for r in self.records]
        for name in (cols[0] if cols else ObjectRecord(0).columns()):
            parts = [c[name] for c in cols]
            arrays[f"obj/{name}/len"] = np.array([len(p) for p in parts], np.int64)
            if parts:
                arrays[f"obj/{name}/data"] = np.concatenate(parts)
        arrays.update({f"{IMAGE}{k}": np.frombuffer(v, np.uint8) for k, v in self.images.images.items()})
        return meta, canonical_nans(arrays)

    @classmethod
    def from_state(cls, cfg: MemoryConfig, state: State, loaded: Mapping[str, Any]) -> "ObjectStore":
        """The table saved by ``to_state``, checked (ids in range, logs in time order; with the ego log loaded
        before it, each observation at the time of the ego frame it names)."""
        meta, arrays = state
        images = {int(k[len(IMAGE):]): v.tobytes() for k, v in arrays.items() if k.startswith(IMAGE)}
        ego_t = loaded["ego"].t.view() if "ego" in loaded else None
        labels, objs = meta.get("labels"), meta.get("objects")
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels) or \
                len(set(labels)) != len(labels):
            raise StateError("labels", "must be a list of distinct strings")
        if not isinstance(objs, list) or not all(isinstance(om, dict) for om in objs):
            raise StateError("objects", "must be a list of objects")
        store = cls(cfg)
        for lab in labels:
            store.label_id(lab)
        names = sorted({k.split("/")[1] for k in arrays if k.startswith("obj/")})
        sizes = ("size_t", "size_v", "size_clear", "size_est")  # the measured extent (memory/extent.py) ...
        # belief, carry and the measured extent are newer than some saves (size_key, size_tried, size_px newer still)
        optional = ("embedding", "pres_t", "pres_l", "carry_t", "size_key", "size_tried", "size_px", *sizes)
        missing = [n for n in ObjectRecord(0).columns() if n not in names and n not in optional]
        if any(n in names for n in sizes):
            missing += [n for n in sizes if n not in names]
        if missing:
            raise StateError(f"obj/{missing[0]}/len", "missing")
        split = {}
        for name in names:
            lens = column(arrays, f"obj/{name}/len", len(objs), kind="i", lo=0)
            data = arrays.get(f"obj/{name}/data")
            rows = 0 if data is None else len(data) if getattr(data, "ndim", 0) else -1
            if rows != int(lens.sum()):
                raise StateError(f"obj/{name}/data",
                                 f"has {rows} rows, but obj/{name}/len adds up to {int(lens.sum())}")
            split[name] = np.split(data, np.cumsum(lens)[:-1]) if data is not None else []
        _check_columns(arrays, len(objs), len(labels), ego_t)
        for i, om in enumerate(objs):
            rec = store.new_record()
            rec.restore_columns({name: split[name][i] for name in names})
            rec.keyframes = [_kf_from(v) for v in om["keyframes"]]
            if "pres_t" not in names:
                rec.pres_t, rec.pres_l = array("d", rec.state_t), array("f", [cfg.gone.max_logodds if s.present
                                                                            else cfg.gone.min_logodds for s in rec.states])
            rec.first_miss_s = math.inf if om["first_miss_s"] is None else float(om["first_miss_s"])
            rec.moving = bool(om.get("moving", False))
            ref = om.get("carry_ref")
            if ref is not None:
                if not isinstance(ref, list) or len(ref) != 7 or not all(isinstance(v, (int, float)) for v in ref):
                    raise StateError("objects", f"object {i}'s carry_ref must be [t, 3 camera-frame, 3 world numbers]")
                rec.carry_ref = (float(ref[0]), np.asarray(ref[1:4], np.float64), np.asarray(ref[4:7], np.float64))
        n = len(objs)
        for rec, om in zip(store.records, objs):
            into = om["merged_into"]
            if any(not 0 <= int(j) < n or int(j) == rec.index for _, j in om["merges"]) or \
                    (into is not None and not 0 <= int(into[1]) < n):
                raise StateError("objects", f"object {rec.index}'s merges name objects outside 0..{n - 1}")
            rec.merges = [(float(t), store.records[j]) for t, j in om["merges"]]
            if into is not None:
                rec.merged_into = (float(into[0]), store.records[into[1]])
            store._sync(rec)
            if rec.merged_into is not None:
                store._retire(rec)
        store.timeline.rebuild(store.records)
        store.track_map = {int(k): int(v) for k, v in meta["track_map"]}
        if any(not 0 <= v < n for v in store.track_map.values()):
            raise StateError("track_map", f"binds tracker ids to objects outside 0..{n - 1}")
        store.images.images = dict(images)
        store.images.refs = {int(k): int(v) for k, v in meta["image_refs"]}
        return store


def _check_columns(arrays: dict[str, np.ndarray], n: int, n_labels: int, ego_t: Optional[np.ndarray]) -> None:
    """The saved per-object columns (concatenated over the ``n`` objects): what the objects' views rely on,
    checked at once; ``column`` raises StateError naming the key."""
    def col(name: str, like: Optional[str] = None, **kw) -> tuple[np.ndarray, np.ndarray]:
        lens = arrays[f"obj/{name}/len"]
        if like is not None and not np.array_equal(lens, arrays[f"obj/{like}/len"]):
            i = int(np.flatnonzero(lens != arrays[f"obj/{like}/len"])[0])
            raise StateError(f"obj/{name}/len", f"gives object {i} {lens[i]} rows, but obj/{like}/len gives it "
                                                f"{arrays[f'obj/{like}/len'][i]}")
        data = arrays.get(f"obj/{name}/data")
        if data is None:
            return np.zeros((0, *kw.get("tail", ())), np.float64 if kw.get("kind", "f") == "f" else np.int64), lens
        return column(arrays, f"obj/{name}/data", **kw), lens

    def within_objects_increasing(name: str, data: np.ndarray, lens: np.ndarray) -> None:
        drop = data[1:] < data[:-1]
        starts = np.cumsum(lens)[:-1]
        drop[starts[(starts > 0) & (starts < len(data))] - 1] = False  # each object's own log
        if drop.any():
            k = int(np.flatnonzero(drop)[0]) + 1
            i = int(np.searchsorted(np.cumsum(lens), k, side="right"))
            raise StateError(f"obj/{name}/data", f"decreases within object {i}'s log ({data[k - 1]} then {data[k]}); "
                                                 "it must never decrease")

    obs_t, obs_lens = col("obs_t", finite=True)
    frames, _ = col("obs_frame", "obs_t", kind="i", lo=0, hi=None if ego_t is None else len(ego_t))
    col("obs_label", "obs_t", kind="i", lo=0, hi=n_labels)
    col("obs_score", "obs_t")
    st_t, st_lens = col("st_t", finite=True)
    col("st_pos", "st_t", tail=(3,), finite=True)
    col("st_ext", "st_t", tail=(3,), finite=True)
    st_int, _ = col("st_int", "st_t", tail=(4,), kind="i")
    col("st_gone", "st_t")
    col("st_first", "st_t")
    placements, pl_lens = col("placements", finite=True)
    col("votes_id", kind="i", lo=0, hi=n_labels)
    col("votes_w", "votes_id")
    for name, data, lens in (("obs_t", obs_t, obs_lens), ("st_t", st_t, st_lens), ("placements", placements, pl_lens)):
        if n and lens.min() == 0:
            raise StateError(f"obj/{name}/len", f"gives object {int(np.argmin(lens))} no rows; every object has some")
        within_objects_increasing(name, data, lens)
    if "obj/carry_t/len" in arrays:
        within_objects_increasing("carry_t", *col("carry_t", finite=True))
    if "obj/size_t/len" in arrays:
        within_objects_increasing("size_t", *col("size_t", finite=True))
        col("size_est", "size_t", tail=(3,), finite=True, lo=0)
        col("size_v", tail=(3,), finite=True, lo=0)  # the kept views (older saves: every view)
        col("size_clear", "size_v", kind="i", lo=0, hi=2)
        if "obj/size_key/len" in arrays:
            col("size_key", "size_v", kind="i")
        if "obj/size_px/len" in arrays:
            col("size_px", "size_v", kind="i", lo=0)
        if "obj/size_tried/len" in arrays:
            _, tried_lens = col("size_tried", finite=True)
            if len(tried_lens) and tried_lens.max() > 1:
                raise StateError("obj/size_tried/len", f"gives object {int(np.argmax(tried_lens))} several rows; "
                                 "an object has at most one")
    if len(st_int):
        placement_count = np.repeat(pl_lens, st_lens)
        bad = (st_int[:, 0] < 0) | (st_int[:, 0] >= n_labels) | (st_int[:, 1] < 0) | \
            (st_int[:, 1] >= placement_count) | ~np.isin(st_int[:, 2], (0, 1))
        if bad.any():
            i = int(np.searchsorted(np.cumsum(st_lens), int(np.flatnonzero(bad)[0]), side="right"))
            raise StateError("obj/st_int/data", f"gives object {i} a label, placement or presence out of range")
    if ego_t is not None and len(obs_t) and not np.array_equal(ego_t[frames], obs_t):
        k = int(np.flatnonzero(ego_t[frames] != obs_t)[0])
        i = int(np.searchsorted(np.cumsum(obs_lens), k, side="right"))
        raise StateError("obj/obs_t/data", f"holds an observation of object {i} at t={obs_t[k]} s, but the ego frame "
                                           f"it names was at t={ego_t[frames[k]]} s")


def _kf_json(k: KeyframeEntry) -> list:
    r = k.ref
    return [r.t_s, r.frame_index, None if r.box_xyxy is None else list(r.box_xyxy), r.visibility,
            list(k.view_dir), k.added_s, None if k.removed_s == math.inf else k.removed_s]


def _kf_from(v: list) -> KeyframeEntry:
    box = None if v[2] is None else tuple(v[2])
    return KeyframeEntry(KeyframeRef(v[0], v[1], box, v[3]), tuple(v[4]), v[5], math.inf if v[6] is None else v[6])
