"""Saving the memory's components to a directory and loading them back (no pickle).

Each component writes and reads its own state (``to_state`` / ``from_state``); this module only owns
the files. Layout: ``memory.json`` (format version, config and each component's metadata), ``arrays.npz``
(the ego log, the place log and every per-object column concatenated over objects with a length array),
``images.npz`` (keyframe JPEG bytes by frame index). Format 1 (before the ego log kept intrinsics and the
config had sections) is read too.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InvalidInputError
from .config import MemoryConfig
from .drift import DriftCorrector
from .ego_log import EgoLog
from .object_store import ObjectStore
from .places import PlaceClusterer

FORMAT = "directme-memory/2"
READS = ("directme-memory/1", FORMAT)


@dataclass(frozen=True, eq=False)
class MemoryParts:
    """The components that make up a SpatialMemory's state."""

    cfg: MemoryConfig
    objects: ObjectStore
    ego: EgoLog
    drift: DriftCorrector
    places: PlaceClusterer


def save_memory(parts: MemoryParts, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    obj_meta, obj_arrays = parts.objects.to_state()
    ego_meta, ego_arrays = parts.ego.to_state()
    meta = {"format": FORMAT, "config": parts.cfg.to_dict(), **obj_meta, **ego_meta,
            "place_tags": parts.places.place_tag, **parts.drift.to_state()}
    arrays = {**ego_arrays, "frame_place": np.array(parts.places.frame_place, np.int32), **obj_arrays}
    np.savez(directory / "arrays.npz", **arrays)
    np.savez(directory / "images.npz", **parts.objects.image_arrays())
    (directory / "memory.json").write_text(json.dumps(meta))
    return directory


def load_memory(directory: Path) -> MemoryParts:
    path = directory / "memory.json"
    if not path.is_file():
        raise InvalidInputError(f"{directory}: no memory.json; not a directory written by SpatialMemory.save()")
    meta = json.loads(path.read_text())
    if meta.get("format") not in READS:
        raise InvalidInputError(f"{path}: format {meta.get('format')!r}, this version reads {READS}")
    with warnings.catch_warnings():  # format 1 has the flat config keys: nothing for the user to change
        warnings.simplefilter("ignore", DeprecationWarning)
        cfg = MemoryConfig.from_dict(meta["config"])
    with np.load(directory / "arrays.npz") as z:
        arrays = {k: z[k] for k in z.files}
    with np.load(directory / "images.npz") as z:
        images = {int(k): z[k].tobytes() for k in z.files}
    ego = EgoLog.from_state(meta, arrays)
    places = PlaceClusterer(cfg.places.eps_m)
    places.restore(arrays["frame_place"], meta["place_tags"], ego.T.view()[:, :3, 3])
    objects = ObjectStore.from_state(cfg, meta, arrays, images)
    return MemoryParts(cfg, objects, ego, DriftCorrector.from_state(cfg, meta), places)
