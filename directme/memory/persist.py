"""Saving a SpatialMemory to a directory and loading it back (no pickle).

Layout: ``memory.json`` (format version, config, vocabularies, track bindings, per-object metadata:
keyframes, merges, miss counters), ``arrays.npz`` (ego track, place log, and every per-object column
concatenated over objects with a length array), ``images.npz`` (keyframe JPEG bytes by frame index).
"""
from __future__ import annotations

import json
import math
from array import array
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InvalidInputError
from .buffers import GrowArray
from .config import MemoryConfig
from .heading import HeadingTracker
from .objects import KeyframeEntry, ObjectRecord
from .relocalize import pair_from_json, pair_to_json
from .snapshot import KeyframeRef

if TYPE_CHECKING:
    from .store import SpatialMemory

FORMAT = "directme-memory/1"


def _kf_json(k: KeyframeEntry) -> list:
    r = k.ref
    return [r.t_s, r.frame_index, None if r.box_xyxy is None else list(r.box_xyxy), r.visibility,
            list(k.view_dir), k.added_s, None if k.removed_s == math.inf else k.removed_s]


def _kf_from(v: list) -> KeyframeEntry:
    box = None if v[2] is None else tuple(v[2])
    return KeyframeEntry(KeyframeRef(v[0], v[1], box, v[3]), tuple(v[4]), v[5], math.inf if v[6] is None else v[6])


def save_memory(mem: "SpatialMemory", directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    recs = mem.records
    meta = {
        "format": FORMAT, "config": mem.cfg.to_dict(), "labels": mem.labels, "tags": mem.tags,
        "place_tags": mem.places.place_tag,
        "up_world": None if mem.up_world is None else [float(v) for v in mem.up_world],
        "track_map": [[int(k), int(v)] for k, v in mem.track_map.items()],
        "T_mem_input": mem.T_mem_input.tolist(), "relocalisations": [[t, list(v), yaw] for t, v, yaw in mem.relocalisations],
        "reloc_pairs": [pair_to_json(p) for p in mem.reloc.pairs],
        "reloc_used": [[int(r), float(t)] for r, t in mem.reloc.used.items()],
        "reloc_aligned": [[int(r), bool(a)] for r, a in mem.reloc.aligned.items()],
        "heading": mem.heading.to_json(), "heading_corrections": [list(c) for c in mem.heading_corrections],
        "image_refs": [[int(k), int(v)] for k, v in mem.images.refs.items()],
        "objects": [{
            "keyframes": [_kf_json(k) for k in r.keyframes],
            "merges": [[t, o.index] for t, o in r.merges],
            "merged_into": None if r.merged_into is None else [r.merged_into[0], r.merged_into[1].index],
            "misses": r.misses, "first_miss_s": None if r.first_miss_s == math.inf else r.first_miss_s,
            "moving": r.moving,
        } for r in recs],
    }
    arrays = {"ego_t": mem.ego_t.to_array(), "ego_T": mem.ego_T.to_array(), "ego_frame": mem.ego_frame.to_array(),
              "ego_tag": mem.ego_tag.to_array(), "frame_place": np.array(mem.places.frame_place, np.int32),
              "ego_path": np.array(mem.ego_path, np.float64)}
    cols = [r.columns() for r in recs]
    for name in (cols[0] if cols else ObjectRecord(0).columns()):
        parts = [c[name] for c in cols]
        arrays[f"obj/{name}/len"] = np.array([len(p) for p in parts], np.int64)
        if parts:
            arrays[f"obj/{name}/data"] = np.concatenate(parts)
    np.savez(directory / "arrays.npz", **arrays)
    np.savez(directory / "images.npz", **{str(k): np.frombuffer(v, np.uint8) for k, v in mem.images.images.items()})
    (directory / "memory.json").write_text(json.dumps(meta))
    return directory


def load_memory(directory: Path) -> "SpatialMemory":
    from .store import SpatialMemory

    path = directory / "memory.json"
    if not path.is_file():
        raise InvalidInputError(f"{directory}: no memory.json; not a directory written by SpatialMemory.save()")
    meta = json.loads(path.read_text())
    if meta.get("format") != FORMAT:
        raise InvalidInputError(f"{path}: format {meta.get('format')!r}, this version reads {FORMAT!r}")
    mem = SpatialMemory(MemoryConfig.from_dict(meta["config"]))
    for lab in meta["labels"]:
        mem.label_id(lab)
    mem.tags = list(meta["tags"])
    mem.up_world = None if meta["up_world"] is None else np.asarray(meta["up_world"], dtype=np.float64)
    with np.load(directory / "arrays.npz") as z:
        a = {k: z[k] for k in z.files}
    for name in ("ego_t", "ego_T", "ego_frame", "ego_tag"):
        setattr(mem, name, GrowArray.from_array(a[name]))
    mem.ego_path = array("d", a["ego_path"].tolist())
    mem.places.restore(a["frame_place"], meta["place_tags"], mem.ego_T.view()[:, :3, 3])
    names = sorted({k.split("/")[1] for k in a if k.startswith("obj/")})
    split = {}
    for name in names:
        lens = a[f"obj/{name}/len"]
        data = a.get(f"obj/{name}/data")
        split[name] = np.split(data, np.cumsum(lens)[:-1]) if data is not None else []
    for i, om in enumerate(meta["objects"]):
        rec = mem.new_record()
        rec.restore_columns({name: split[name][i] for name in names})
        rec.keyframes = [_kf_from(v) for v in om["keyframes"]]
        rec.misses = int(om["misses"])
        rec.first_miss_s = math.inf if om["first_miss_s"] is None else float(om["first_miss_s"])
        rec.moving = bool(om.get("moving", False))
    for rec, om in zip(mem.records, meta["objects"]):
        rec.merges = [(float(t), mem.records[j]) for t, j in om["merges"]]
        if om["merged_into"] is not None:
            rec.merged_into = (float(om["merged_into"][0]), mem.records[om["merged_into"][1]])
        mem.sync(rec)
        if rec.merged_into is not None:
            mem.retire(rec)
    mem.timeline.rebuild(mem.records)
    mem.track_map = {int(k): int(v) for k, v in meta["track_map"]}
    mem.T_mem_input = np.asarray(meta.get("T_mem_input", np.eye(4)), dtype=np.float64)
    mem.relocalisations = [(float(t), tuple(float(x) for x in v), float(yaw))
                           for t, v, yaw in meta.get("relocalisations", [])]
    mem.reloc.pairs = [pair_from_json(p) for p in meta.get("reloc_pairs", [])]
    mem.reloc.used = {int(r): float(t) for r, t in meta.get("reloc_used", [])}
    mem.reloc.aligned = {int(r): bool(a) for r, a in meta.get("reloc_aligned", [])}
    mem.heading = HeadingTracker.from_json(meta.get("heading", {}))
    mem.heading_corrections = [(float(t), float(y)) for t, y in meta.get("heading_corrections", [])]
    with np.load(directory / "images.npz") as z:
        mem.images.images = {int(k): z[k].tobytes() for k in z.files}
    mem.images.refs = {int(k): int(v) for k, v in meta["image_refs"]}
    return mem
