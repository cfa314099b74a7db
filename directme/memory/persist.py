"""Saving the memory's components to a directory and loading them back (no pickle).

Each component writes and reads its own state (``to_state`` / ``from_state``, which also check it); this
module only owns the files. Layout: ``memory.json`` (format version, config and each component's metadata),
``arrays.npz`` (the ego log, the place log and every per-object column concatenated over objects with a
length array), ``images.npz`` (keyframe JPEG bytes by frame index) and ``manifest.json`` (size and sha256
of each). How a save reaches the disk - a temporary sibling directory renamed into place, the manifest,
the recovery rule after a crash - is directme/_atomic.py's. Formats 1 and 2 (written before manifests;
format 1 also before the ego log kept intrinsics and the config had sections) are read without checksums.
"""
from __future__ import annotations

import json
import math
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import numpy as np

from .._atomic import MANIFEST, RESTORE, StateError, read_json, resolve, save_dir, verify
from ..errors import InvalidInputError, InvalidSaveError
from .config import MemoryConfig
from .drift import DriftCorrector
from .ego_log import EgoLog
from .object_store import ObjectStore
from .places import PlaceClusterer

FORMAT = "directme-memory/3"
UNSEALED = ("directme-memory/1", "directme-memory/2")  # written before manifests: loaded without checksums
READS = (*UNSEALED, FORMAT)
KIND = "memory"
FILES = ("memory.json", "arrays.npz", "images.npz")
MAX_INFLATE = 1000  # a compressed array member may expand at most this much (np.savez stores them uncompressed)


@dataclass(frozen=True, eq=False)
class MemoryParts:
    """The components that make up a SpatialMemory's state."""

    cfg: MemoryConfig
    objects: ObjectStore
    ego: EgoLog
    drift: DriftCorrector
    places: PlaceClusterer


def save_memory(parts: MemoryParts, directory: Union[str, Path]) -> Path:
    """Write the memory to ``directory`` crash-safely (directme/_atomic.py): a new, empty or earlier-save
    directory; the previous save stays whole until the new one is complete."""
    obj_meta, obj_arrays = parts.objects.to_state()
    ego_meta, ego_arrays = parts.ego.to_state()
    meta = {"format": FORMAT, "config": parts.cfg.to_dict(), **obj_meta, **ego_meta,
            "place_tags": parts.places.place_tag, **parts.drift.to_state()}
    arrays = {**ego_arrays, "frame_place": np.array(parts.places.frame_place, np.int32), **obj_arrays,
              **parts.drift.to_arrays()}
    images = parts.objects.image_arrays()

    def write(d: Path) -> None:
        with open(d / "arrays.npz", "xb") as f:
            np.savez(f, **arrays)
        with open(d / "images.npz", "xb") as f:
            np.savez(f, **images)
        (d / "memory.json").write_text(json.dumps(meta), encoding="utf-8")

    return save_dir(directory, KIND, write, legacy=FILES)


def load_memory(directory: Union[str, Path]) -> MemoryParts:
    """Load a memory saved by ``save_memory``: checksums (manifest.json), then the state's consistency;
    any problem raises InvalidSaveError naming the file."""
    d = resolve(directory)
    path = d / "memory.json"
    sealed = (d / MANIFEST).exists() or (d / MANIFEST).is_symlink()
    if not sealed and not path.is_file():
        if not d.is_dir():
            raise InvalidInputError(f"{d}: no such directory; give a directory written by SpatialMemory.save()")
        raise InvalidInputError(f"{d}: no memory.json; not a directory written by SpatialMemory.save()")
    if sealed:
        verify(d, KIND, FILES)
    meta = read_json(path, "memory's metadata")
    fmt = meta.get("format")
    if fmt not in READS:
        raise InvalidSaveError(f"{path}: format {fmt!r}, this version reads {READS}: load it with the directme "
                               "version that wrote it, or save it again from its source")
    if not sealed and fmt not in UNSEALED:
        raise InvalidSaveError(f"{d / MANIFEST}: missing, but {path} says format {fmt!r}, which is always saved with "
                               f"one (the save is incomplete or was copied in part); {RESTORE}")
    try:
        with warnings.catch_warnings():  # format 1 has the flat config keys: nothing for the user to change
            warnings.simplefilter("ignore", DeprecationWarning)
            cfg = MemoryConfig.from_dict(meta.get("config"))
    except (InvalidInputError, TypeError, ValueError, KeyError, AttributeError) as e:
        raise InvalidSaveError(f"{path}: its 'config' is not a valid MemoryConfig ({e}); {RESTORE}") from None
    arrays = _read_npz(d / "arrays.npz")
    images_raw = _read_npz(d / "images.npz")
    try:
        images = {int(k): v.tobytes() for k, v in images_raw.items()}
        ego = EgoLog.from_state(meta, arrays)
        places = PlaceClusterer(cfg.places.eps_m)
        places.restore(arrays.get("frame_place"), meta.get("place_tags"), ego.T.view()[:, :3, 3])
        objects = ObjectStore.from_state(cfg, meta, arrays, images, ego.t.view())
        drift = DriftCorrector.from_state(cfg, meta, arrays)
    except StateError as e:
        where = d / ("arrays.npz" if e.key in arrays else "memory.json")
        raise InvalidSaveError(f"{where}: '{e.key}' {e.problem} - the save is inconsistent (edited or damaged); "
                               f"{RESTORE}") from None
    except InvalidSaveError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise InvalidSaveError(f"{path} and {d / 'arrays.npz'}: the saved state is malformed ({type(e).__name__}: "
                               f"{e}); {RESTORE}") from None
    return MemoryParts(cfg, objects, ego, drift, places)


def _read_npz(path: Path) -> dict[str, Any]:
    """Every array of a save's .npz file (no pickle), each member's header checked against its real size
    before anything is allocated; damage raises InvalidSaveError naming the file."""
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                _check_member(path, zf, info)
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except InvalidSaveError:
        raise
    except FileNotFoundError:
        raise InvalidSaveError(f"{path}: missing; the save is incomplete - {RESTORE}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError, KeyError, NotImplementedError) as e:
        raise InvalidSaveError(f"{path}: not a readable .npz archive ({type(e).__name__}: {e}; damaged or cut "
                               f"short); {RESTORE}") from None


def _check_member(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """One .npy member: a plain (not object) array whose header's shape and dtype account for exactly the bytes
    the member holds - a header declaring a terabyte over 64 bytes is damage, not an allocation to try."""
    def bad(problem: str) -> InvalidSaveError:
        return InvalidSaveError(f"{path}: array {info.filename[:80]!r} {problem} (damaged or edited); {RESTORE}")

    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or (
            info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > MAX_INFLATE * info.compress_size + 4096):
        raise bad(f"is stored with compression {info.compress_type} of {info.compress_size} bytes into "
                  f"{info.file_size}, not as numpy writes arrays")
    fmt = np.lib.format
    with zf.open(info) as f:
        version = fmt.read_magic(f)
        if version not in ((1, 0), (2, 0)):
            raise bad(f"has .npy format version {version}, not 1.0 or 2.0")
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, _, dtype = read(f)
        header = f.tell()
    if dtype.hasobject or any(n < 0 for n in shape):
        raise bad(f"declares shape {shape} of {dtype}, not a plain array")
    need = math.prod(shape) * dtype.itemsize
    if need != info.file_size - header:
        raise bad(f"declares shape {shape} of {dtype} ({need} bytes) but holds {info.file_size - header} bytes")
