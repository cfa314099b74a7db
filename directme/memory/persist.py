"""Saving the memory's components to a directory and loading them back (no pickle).

Each component (component.py) hands out and takes back its own state (``to_state`` / ``from_state``, which
also checks it); this module only owns the files. Layout of format 4: ``memory.json`` (format version,
config, and under ``components`` each component's metadata by its key), ``arrays.npz`` (each component's
arrays, named ``<key>/<name>``), ``images.npz`` (the arrays named ``<key>/image/<frame index>``: keyframe
JPEG bytes) and ``manifest.json`` (size and sha256 of each). How a save reaches the disk - a temporary
sibling directory renamed into place, the manifest, the recovery rule after a crash - is
directme/_atomic.py's. Formats 1-3 kept every component's metadata in one flat dict and the arrays under their
plain names: they are split into the components' states on load (``_split_flat``); formats 1 and 2 (written
before manifests; format 1 also before the ego log kept intrinsics and the config had sections) are read
without checksums.
"""
from __future__ import annotations

import json
import math
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any, Mapping, Union

import numpy as np

from .._atomic import MANIFEST, RESTORE, StateError, read_json, resolve, save_dir, verify
from ..errors import InvalidInputError, InvalidSaveError
from .component import MemoryComponent, State
from .config import MemoryConfig
from .ego_log import EgoLog
from .object_store import IMAGE, ObjectStore
from .outline import RoomOutline
from .places import PlaceClusterer
from .pose import PoseCorrector
from .pose.heading import HeadingTracker
from .pose.relocalize import Relocaliser
from .pose.scan import ScanMatcher
from .pose.vertical import VerticalEstimator

FORMAT = "directme-memory/4"
UNSEALED = ("directme-memory/1", "directme-memory/2")  # written before manifests: loaded without checksums
FLAT = (*UNSEALED, "directme-memory/3")  # one flat metadata dict for all components: split on load
READS = (*FLAT, FORMAT)
KIND = "memory"
FILES = ("memory.json", "arrays.npz", "images.npz")
MAX_INFLATE = 1000  # a compressed array member may expand at most this much (np.savez stores them uncompressed)
# every component of a save, in the order they are loaded (a component may read those before it)
COMPONENTS: dict[str, Any] = {c.key: c for c in (VerticalEstimator, HeadingTracker, ScanMatcher, Relocaliser,
                                                   PoseCorrector, EgoLog, PlaceClusterer, RoomOutline, ObjectStore)}
OPTIONAL = ("outline",)  # components added since format 4 began: a save without one loads it empty


def save_memory(cfg: MemoryConfig, parts: Mapping[str, MemoryComponent], directory: Union[str, Path]) -> Path:
    """Write the components ``parts`` (by key) to ``directory`` crash-safely (directme/_atomic.py): a new, empty
    or earlier-save directory; the previous save stays whole until the new one is complete."""
    if set(parts) != set(COMPONENTS):
        raise InvalidInputError(f"a memory save holds the components {sorted(COMPONENTS)}, got {sorted(parts)}")
    components: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    images: dict[str, np.ndarray] = {}
    for key, part in parts.items():
        meta, own = part.to_state()
        components[key] = meta
        for name, a in own.items():
            (images if name.startswith(IMAGE) else arrays)[f"{key}/{name}"] = a
    meta = {"format": FORMAT, "config": cfg.to_dict(), "components": components}

    def write(d: Path) -> None:
        with open(d / "arrays.npz", "xb") as f:
            np.savez(f, **arrays)
        with open(d / "images.npz", "xb") as f:
            np.savez(f, **images)
        (d / "memory.json").write_text(json.dumps(meta), encoding="utf-8")

    return save_dir(directory, KIND, write, legacy=FILES)


def load_memory(directory: Union[str, Path]) -> tuple[MemoryConfig, dict[str, Any]]:
    """Load a memory saved by ``save_memory``: checksums (manifest.json), then each component's state, checked;
    any problem raises InvalidSaveError naming the file. Returns the config and the components by key."""
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
    images = _read_npz(d / "images.npz")
    loaded: dict[str, Any] = {}
    key, state = "", ({}, {})
    try:
        states = _split_flat(meta, arrays, images) if fmt in FLAT else _split(meta, arrays, images)
        for key, cls in COMPONENTS.items():
            state = states[key]
            loaded[key] = cls.from_state(cfg, state, loaded)
    except StateError as e:
        in_arrays = e.key in state[1] or e.key in arrays
        where = d / ("arrays.npz" if in_arrays else "memory.json")
        name = f"{key}/{e.key}" if fmt == FORMAT and in_arrays else e.key
        raise InvalidSaveError(f"{where}: '{name}' {e.problem} - the save is inconsistent (edited or damaged); "
                               f"{RESTORE}") from None
    except InvalidSaveError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise InvalidSaveError(f"{path} and {d / 'arrays.npz'}: the saved state is malformed ({type(e).__name__}: "
                               f"{e}); {RESTORE}") from None
    return cfg, loaded


def _split(meta: dict[str, Any], arrays: dict[str, np.ndarray], images: dict[str, np.ndarray]) -> dict[str, State]:
    """Each component's state in a format-4 save: its metadata and its arrays (``<key>/`` taken off)."""
    components = meta.get("components")
    if not isinstance(components, dict):
        raise StateError("components", "must be a mapping of each component's state")
    out = {}
    for key in COMPONENTS:
        if key in OPTIONAL and key not in components:
            out[key] = ({}, {})
            continue
        if not isinstance(components.get(key), dict):
            raise StateError("components", f"lacks the state of '{key}'")
        own = {name[len(key) + 1:]: a for name, a in (*arrays.items(), *images.items()) if name.startswith(key + "/")}
        out[key] = (components[key], own)
    return out


def _split_flat(meta: dict[str, Any], arrays: dict[str, np.ndarray], images: dict[str, np.ndarray]) -> dict[str, State]:
    """Each component's state in a save of formats 1-3 (one flat metadata dict; arrays and images under plain
    names, each component's distinct): what each component reads now, from the keys it was saved under then."""
    heading = {**meta.get("heading", {}), "corrections": meta.get("heading_corrections", [])}
    vertical = meta.get("vertical") or {}
    if vertical.get("up") is None and vertical.get("hint") is None:  # the estimator never ran (or predates it):
        up = heading.get("up") if heading.get("up") is not None else meta.get("up_world")  # the vertical used then
        vertical = {"up": up} if up is not None else {}
    return {
        "vertical": (vertical, arrays), "heading": (heading, {}), "scan": (meta.get("scan", {}), arrays),
        "relocalisation": ({"pairs": meta.get("reloc_pairs", []), "used": meta.get("reloc_used", []),
                            "aligned": meta.get("reloc_aligned", []),
                            "corrections": meta.get("relocalisations", [])}, {}),
        "pose": ({"T_mem_input": meta.get("T_mem_input", np.eye(4).tolist()),
                  "recent": meta.get("recent_corrections", [])}, {}),
        "ego": (meta, arrays), "places": ({"tags": meta.get("place_tags")}, arrays), "outline": ({}, {}),
        "objects": (meta, {**arrays, **{IMAGE + k: v for k, v in images.items()}}),
    }


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
