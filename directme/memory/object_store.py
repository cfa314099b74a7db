"""The object table: every remembered object's record, the label vocabulary, tracker-id bindings, the
memory-wide state timeline, keyframe images, and the live columns used to search objects by place."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from .config import MemoryConfig
from .keyframes import ImageStore
from .objects import KeyframeEntry, ObjectRecord
from .snapshot import KeyframeRef
from .timeline import Timeline


class ObjectStore:
    """Owns the objects' state; ingest.py changes it through these methods and the records themselves."""

    def __init__(self, cfg: MemoryConfig) -> None:
        self.cfg = cfg
        self.records: list[ObjectRecord] = []
        self.labels: list[str] = []
        self._label_ids: dict[str, int] = {}
        self.track_map: dict[int, int] = {}  # tracker id -> record index it was last bound to
        self.timeline = Timeline()
        self.images = ImageStore(cfg.keyframes.image_max_side, cfg.keyframes.jpeg_quality)
        # live columns (one row per record), mirrored from the records by sync/retire
        self.live_pos = np.zeros((16, 3))
        self.live_size = np.zeros(16)
        self.live_present = np.zeros(16, dtype=bool)
        self.live_alive = np.zeros(16, dtype=bool)
        self.merged_t = np.full(16, math.inf)  # time each record was merged into another (inf: never)

    @property
    def n_records(self) -> int:
        return len(self.records)

    def label_id(self, label: str) -> int:
        i = self._label_ids.get(label)
        if i is None:
            i = self._label_ids[label] = len(self.labels)
            self.labels.append(label)
        return i

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
        """Mirror a record's reported state into the live columns used for search and gone checks."""
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
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """(JSON-able metadata, named arrays) of the whole table."""
        meta = {
            "labels": self.labels, "track_map": [[int(k), int(v)] for k, v in self.track_map.items()],
            "image_refs": [[int(k), int(v)] for k, v in self.images.refs.items()],
            "objects": [{
                "keyframes": [_kf_json(k) for k in r.keyframes],
                "merges": [[t, o.index] for t, o in r.merges],
                "merged_into": None if r.merged_into is None else [r.merged_into[0], r.merged_into[1].index],
                "misses": r.misses, "first_miss_s": None if r.first_miss_s == math.inf else r.first_miss_s,
                "moving": r.moving,
            } for r in self.records],
        }
        arrays: dict[str, np.ndarray] = {}
        cols = [r.columns() for r in self.records]
        for name in (cols[0] if cols else ObjectRecord(0).columns()):
            parts = [c[name] for c in cols]
            arrays[f"obj/{name}/len"] = np.array([len(p) for p in parts], np.int64)
            if parts:
                arrays[f"obj/{name}/data"] = np.concatenate(parts)
        return meta, arrays

    def image_arrays(self) -> dict[str, np.ndarray]:
        return {str(k): np.frombuffer(v, np.uint8) for k, v in self.images.images.items()}

    @staticmethod
    def from_state(cfg: MemoryConfig, meta: dict[str, Any], arrays: dict[str, np.ndarray],
                   images: dict[int, bytes]) -> "ObjectStore":
        store = ObjectStore(cfg)
        for lab in meta["labels"]:
            store.label_id(lab)
        names = sorted({k.split("/")[1] for k in arrays if k.startswith("obj/")})
        split = {}
        for name in names:
            lens = arrays[f"obj/{name}/len"]
            data = arrays.get(f"obj/{name}/data")
            split[name] = np.split(data, np.cumsum(lens)[:-1]) if data is not None else []
        for i, om in enumerate(meta["objects"]):
            rec = store.new_record()
            rec.restore_columns({name: split[name][i] for name in names})
            rec.keyframes = [_kf_from(v) for v in om["keyframes"]]
            rec.misses = int(om["misses"])
            rec.first_miss_s = math.inf if om["first_miss_s"] is None else float(om["first_miss_s"])
            rec.moving = bool(om.get("moving", False))
        for rec, om in zip(store.records, meta["objects"]):
            rec.merges = [(float(t), store.records[j]) for t, j in om["merges"]]
            if om["merged_into"] is not None:
                rec.merged_into = (float(om["merged_into"][0]), store.records[om["merged_into"][1]])
            store.sync(rec)
            if rec.merged_into is not None:
                store.retire(rec)
        store.timeline.rebuild(store.records)
        store.track_map = {int(k): int(v) for k, v in meta["track_map"]}
        store.images.images = dict(images)
        store.images.refs = {int(k): int(v) for k, v in meta["image_refs"]}
        return store


def _kf_json(k: KeyframeEntry) -> list:
    r = k.ref
    return [r.t_s, r.frame_index, None if r.box_xyxy is None else list(r.box_xyxy), r.visibility,
            list(k.view_dir), k.added_s, None if k.removed_s == math.inf else k.removed_s]


def _kf_from(v: list) -> KeyframeEntry:
    box = None if v[2] is None else tuple(v[2])
    return KeyframeEntry(KeyframeRef(v[0], v[1], box, v[3]), tuple(v[4]), v[5], math.inf if v[6] is None else v[6])
