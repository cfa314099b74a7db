"""Crash-safe save directories: written beside the destination, sealed with a manifest, renamed into place.

The one place that owns how a save reaches the disk; ``SpatialMemory.save`` (memory/persist.py) and
``Agent.save`` give it a function that writes their files into a fresh directory. Imports nothing from
directme but the errors (bottom layer, pyproject.toml).

Writing ``DIR`` (``save_dir``):

1. ``write(tmp)`` fills a fresh sibling ``.DIR.directme-new-<pid>-<random>``;
2. ``seal``: every file is fsynced and listed with its size and sha256 in ``manifest.json``, written last
   and fsynced (a sub-directory with its own manifest, an agent's ``memory/``, is listed by that manifest
   alone: it pins the files it lists); the directories are fsynced;
3. an existing ``DIR`` is renamed to ``.DIR.directme-old`` (a stale one is removed first), the new
   directory is renamed to ``DIR`` (the commit), the parent directory is fsynced and the old save removed.

Recovery rule (``resolve``, used by every load): ``DIR`` itself whenever it exists - it only ever appears
by the rename of a complete, sealed directory, so it is the newest whole save; when it does not exist but
``.DIR.directme-old`` does, the process stopped between the two renames and the previous save is read
from there (a warning names it). A ``.directme-new-*`` directory is never read: it was not committed.
The next save to ``DIR`` removes what was left over. One writer at a time per destination: two processes
saving to the same directory at once are not supported.

A disk error while saving (full, file too large, read-only, I/O error) raises ``SaveFailedError`` naming the
destination and the cause; the previous save there is left as it was (the new one is removed).

Loading (``verify``): the manifest's own sha256 (``manifest_sha256``, over its other fields; saves from
before it have none), then every file it lists must be a regular file (no symbolic link on the way) with the
recorded size and sha256; a problem raises ``InvalidSaveError`` naming the file, the problem and what to
do. JSON files are read with bounded nesting and integer size (``read_json``). Saves written before
manifests existed have none; their loaders say whether that is allowed.
"""
from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np

from .errors import DirectmeError, InvalidInputError, InvalidSaveError, SaveFailedError

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "directme-manifest/1"
SELF_SHA = "manifest_sha256"  # the manifest's checksum of its other fields
MAX_JSON_DEPTH = 64  # a save's JSON files nest a few levels; deeper is damage (and would exhaust the stack)
MAX_INT_DIGITS = 40  # a save's integers fit in 64 bits; longer is damage (Python refuses > 4300 digits raw)
MAX_NAME_CHARS = 255  # a file name listed in a manifest (one path component)
_NEW, _OLD = ".directme-new-", ".directme-old"
_CHUNK = 1 << 20

log = logging.getLogger("directme.save")

RESTORE = ("restore the directory from a copy, or save it again from its source (directme does not repair "
           "saves; docs/faq.md, Saved agents and memories)")


class StateError(InvalidSaveError):
    """A saved component's state breaks an invariant; ``key`` is the field (its file is told by the loader)."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


def column(arrays: dict, key: str, rows: Optional[int] = None, tail: tuple = (), kind: str = "f",
           lo: Optional[float] = None, hi: Optional[float] = None, finite: bool = False,
           increasing: bool = False) -> Any:
    """``arrays[key]`` after checking what a loader relies on: numbers of ``kind`` ('f': any number, 'i':
    integers), shape ``(rows, *tail)``, finite, ``lo <= v < hi``, non-decreasing; else StateError."""
    if arrays.get(key) is None:
        raise StateError(key, "missing")
    a = arrays[key]
    kinds = "iub" if kind == "i" else "fiub"
    if getattr(a, "dtype", None) is None or a.dtype.kind not in kinds:
        want = "integers" if kind == "i" else "numbers"
        raise StateError(key, f"holds {getattr(a, 'dtype', type(a).__name__)}, not {want}")
    if a.ndim != 1 + len(tail) or tuple(a.shape[1:]) != tuple(tail) or (rows is not None and len(a) != rows):
        want = f"({rows if rows is not None else 'n'}{''.join(f', {t}' for t in tail)})"
        raise StateError(key, f"has shape {a.shape}, expected {want}")
    if a.size:
        if finite and a.dtype.kind == "f" and not np.isfinite(a).all():
            raise StateError(key, "holds NaN or infinite values")
        if lo is not None and a.min() < lo or hi is not None and a.max() >= hi:
            raise StateError(key, f"holds values outside [{lo}, {hi}) (min {a.min()}, max {a.max()})")
        if increasing and len(a) > 1:
            d = a[1:] < a[:-1]
            if d.any():
                i = int(d.argmax()) + 1
                raise StateError(key, f"decreases at row {i} ({a[i - 1]} then {a[i]}); it must never decrease")
    return a


# ------------------------------------------------------------------ where a save goes

def save_path(directory: Any) -> Path:
    """``directory`` as a Path, refusing what cannot name a save directory of its own."""
    if not isinstance(directory, (str, os.PathLike)):
        raise InvalidInputError(f"a save directory must be a path (str or pathlib.Path), got "
                                f"{type(directory).__name__}")
    raw = os.fspath(directory)
    if isinstance(raw, bytes):
        raw = os.fsdecode(raw)
    if not raw.strip():
        raise InvalidInputError("the save directory is an empty path; give a directory of its own, e.g. 'run/agent' "
                                "(an empty path would mean the working directory)")
    p = Path(raw)
    if p.name in ("", ".", ".."):
        raise InvalidInputError(f"cannot save into {raw!r}: give a directory of its own, e.g. "
                                f"'{Path(raw) / 'agent'}' (a save replaces the whole directory)")
    return p


def check_destination(directory: Any, kind: str, legacy: Sequence[str] = ()) -> Path:
    """Refuse a destination a save of ``kind`` must not replace: an empty path, a symbolic link, a file, a
    non-empty directory that is not a directme save of that kind, or one that holds files besides the save.
    ``legacy``: the names in a save written before manifests, the first one always there (such a directory
    counts as a save of ``kind``). Returns the Path."""
    p = save_path(directory)
    if p.is_symlink():
        raise InvalidInputError(f"cannot save into {p}: it is a symbolic link (to {os.readlink(p)}); give the real "
                                "directory (a save replaces the directory by renaming, which would replace the link)")
    for parent in (p.parent, *p.parent.parents):
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise InvalidInputError(f"cannot save into {p}: {parent} is a file, not a directory")
            break
    if not p.exists():
        return p
    if not p.is_dir():
        raise InvalidInputError(f"cannot save into {p}: it is a file; give a directory (new, empty, or an earlier "
                                "save)")
    entries = sorted(os.listdir(p))
    if not entries:
        return p
    found, names = _saved(p, kind, legacy)
    if found is None:
        shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
        raise InvalidInputError(f"cannot save into {p}: it is not empty and is not a directme save (it holds {shown}); "
                                "give a new or empty directory - a save replaces the whole directory")
    if found != kind:
        article = "an" if kind[0] in "aeiou" else "a"
        raise InvalidInputError(f"cannot save {article} {kind} into {p}: it holds a saved {found}, which the save "
                                "would replace; give another directory")
    foreign = [e for e in entries if e not in names]
    if foreign:
        raise InvalidInputError(f"cannot save into {p}: besides an earlier save it holds {', '.join(foreign[:5])}, "
                                "which a save would delete; move them out or give another directory")
    return p


def _saved(p: Path, kind: str, legacy: Sequence[str]) -> tuple[Optional[str], set[str]]:
    """(the kind of save in ``p`` or None, the top-level names that belong to it); ``legacy`` as in
    check_destination."""
    m = p / MANIFEST
    if m.is_file() and not m.is_symlink():
        try:
            data = read_json(m, "manifest")
            if str(data.get("format", "")).startswith("directme-manifest/") and isinstance(data.get("files"), dict):
                return str(data.get("kind")), {MANIFEST, *(str(k).split("/")[0] for k in data["files"])}
        except (InvalidSaveError, TypeError, AttributeError):
            pass  # a damaged manifest: still a save when the files are a save's
        if legacy and (p / legacy[0]).exists():
            return kind, {MANIFEST, *legacy}
    if legacy and (p / legacy[0]).exists():
        return kind, set(legacy)
    return None, set()


# ------------------------------------------------------------------ writing

def save_dir(directory: Any, kind: str, write: Callable[[Path], None], legacy: Sequence[str] = ()) -> Path:
    """Write a save of ``kind`` to ``directory`` crash-safely (module docstring); ``write(tmp)`` writes the
    files into the fresh directory ``tmp``. Returns ``directory`` as a Path."""
    dest = check_destination(directory, kind, legacy)
    had = dest.exists()
    try:
        return _save_dir(dest, kind, write)
    except SaveFailedError as e:  # a sub-directory's save (an agent's memory/): told for this one
        raise _failed(dest, kind, had, e.errno, getattr(e, "cause", "")) from None
    except OSError as e:
        raise _failed(dest, kind, had, e.errno, e.strerror or str(e)) from None


def _failed(dest: Path, kind: str, had: bool, code: Optional[int], why: str) -> SaveFailedError:
    """The error of a save to ``dest`` that the disk refused (the new save was removed, the old one kept)."""
    hint = {errno.ENOSPC: "free some space", errno.EDQUOT: "free some space (disk quota)",
            errno.EFBIG: "a file grew past the size limit (ulimit -f, or the filesystem's)",
            errno.EROFS: "the filesystem is mounted read-only", errno.EACCES: "check the directory's permissions",
            errno.EIO: "the disk reports I/O errors"}.get(code or 0, "")
    before = (f"the previous save in {dest} is intact (nothing of it was replaced)" if had and dest.exists() else
              f"nothing was written to {dest}")
    err = SaveFailedError(f"cannot save the {kind} to {dest}: {why}{f' - {hint}' if hint else ''}; {before}. "
                          "Save it again once the cause is fixed, or to another disk")
    err.errno, err.cause = code, why  # (no strerror: str(err) stays the message above)
    return err


def _save_dir(dest: Path, kind: str, write: Callable[[Path], None]) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}{_NEW}{os.getpid()}-{os.urandom(4).hex()}"
    old = _aside(dest)
    tmp.mkdir()
    try:
        write(tmp)
        seal(tmp, kind)
        if dest.exists():
            if old.exists() or old.is_symlink():
                _remove(old)  # DIR exists, so this is a leftover of an earlier save: DIR is newer
            os.rename(dest, old)
        try:
            os.rename(tmp, dest)  # the commit
        except BaseException:
            if old.is_dir() and not dest.exists():
                os.rename(old, dest)
            raise
    except BaseException:
        try:
            _remove(tmp)
        except OSError as e:  # e.g. the disk failing: the error that stopped the save is the one to tell
            log.warning("could not remove the unfinished save %s (%s)", tmp, e)
        raise
    try:  # the new save is in place: what follows is tidying
        _fsync_dir(dest.parent)
        _remove(old)  # not fsynced: should the removal be lost in a power cut, DIR is still the newer save
        _remove_leftovers(dest)
    except OSError as e:
        log.warning("%s is saved, but tidying after it failed (%s): %s may remain, and a power cut now could "
                    "bring the previous save back", dest, e, old)
    return dest


def seal(directory: Path, kind: str) -> dict[str, Any]:
    """fsync every file under ``directory`` and write its ``manifest.json`` (sizes, sha256), then fsync the
    directories. A sub-directory holding a manifest is listed by that manifest only (it was sealed)."""
    files: dict[str, dict[str, Any]] = {}
    dirs = [directory]
    for rel, path in _walk(directory, dirs):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        files[rel] = {"size": path.stat().st_size, "sha256": _sha256(path)}
    manifest = {"format": MANIFEST_FORMAT, "kind": kind, "files": files}
    manifest[SELF_SHA] = manifest_digest(manifest)
    with open(directory / MANIFEST, "x", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    for d in reversed(dirs):
        _fsync_dir(d)
    return manifest


def manifest_digest(manifest: dict[str, Any]) -> str:
    """sha256 of a manifest's fields but its own checksum (sorted, compact JSON): damage to the manifest
    itself is caught, as damage to the files it lists is."""
    rest = {k: v for k, v in manifest.items() if k != SELF_SHA}
    return hashlib.sha256(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _walk(root: Path, dirs: list[Path], prefix: str = ""):
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        rel = f"{prefix}{entry.name}"
        if entry.is_symlink():
            raise InvalidInputError(f"{entry.path}: a save must not contain symbolic links")
        if entry.is_dir():
            sub = Path(entry.path)
            if (sub / MANIFEST).is_file():
                yield f"{rel}/{MANIFEST}", sub / MANIFEST
            else:
                dirs.append(sub)
                yield from _walk(sub, dirs, f"{rel}/")
        elif entry.name != MANIFEST or prefix:
            yield rel, Path(entry.path)


def _aside(dest: Path) -> Path:
    return dest.parent / f".{dest.name}{_OLD}"


def _remove(p: Path) -> None:
    """Remove a directory tree (or file, or link) without following symbolic links; missing is fine."""
    try:
        if p.is_symlink() or not p.is_dir():
            p.unlink()
        else:
            shutil.rmtree(p)
    except FileNotFoundError:
        pass


def _remove_leftovers(dest: Path) -> None:
    """Temporary directories of interrupted saves to ``dest`` (their process is gone)."""
    prefix = f".{dest.name}{_NEW}"
    for entry in os.scandir(dest.parent):
        if not entry.name.startswith(prefix):
            continue
        pid = entry.name[len(prefix):].split("-")[0]
        if pid.isdigit() and (int(pid) == os.getpid() or _alive(int(pid))):
            continue  # perhaps a save under way (another thread or process)
        _remove(Path(entry.path))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _fsync_dir(d: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):  # Windows: directories cannot be opened for fsync
        return
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as e:  # some filesystems refuse fsync on directories
        if e.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


# ------------------------------------------------------------------ reading

def resolve(directory: Union[str, os.PathLike]) -> Path:
    """The directory to load for ``directory`` (the recovery rule of the module docstring)."""
    p = Path(directory)
    if p.exists() or p.is_symlink():
        return p
    old = _aside(p)
    if old.is_dir() and not old.is_symlink():
        log.warning("%s does not exist, but %s does: a save to %s was interrupted between its two renames; "
                    "loading the previous save from there (the next save to %s removes it)", p, old, p, p)
        return old
    return p


def verify(directory: Path, kind: str, expect: Iterable[str]) -> dict[str, Any]:
    """Check ``directory``'s manifest: its format and kind, that it lists ``expect``, and every listed file
    (regular file, size, sha256). Returns the manifest; raises InvalidSaveError naming the file."""
    m = directory / MANIFEST
    _regular(directory, MANIFEST, "the save's manifest")
    data = read_json(m, "manifest")
    fmt = data.get("format")
    if fmt != MANIFEST_FORMAT:
        raise InvalidSaveError(f"{m}: format {fmt!r}, this version of directme reads {MANIFEST_FORMAT!r}: load it with "
                               "the directme version that wrote it, or save it again from its source")
    if data.get("kind") != kind:
        raise InvalidSaveError(f"{m}: this is a saved {data.get('kind')!r}, not a saved {kind!r}; give the "
                               f"directory of a saved {kind} (e.g. an agent's memory is its memory/ sub-directory)")
    if SELF_SHA in data and data[SELF_SHA] != manifest_digest(data):
        raise InvalidSaveError(f"{m}: its contents do not match its own sha256 ('{SELF_SHA}'; damaged or edited after "
                               f"the save); {RESTORE}")
    files = data.get("files")
    if not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
        raise InvalidSaveError(f"{m}: 'files' is not a mapping of file -> size and sha256 (damaged); {RESTORE}")
    missing = [e for e in expect if e not in files]
    if missing:
        raise InvalidSaveError(f"{m}: does not list {', '.join(missing)} (edited or damaged); {RESTORE}")
    for rel, rec in files.items():
        _check_name(m, rel)
        if isinstance(rec.get("size"), bool) or not isinstance(rec.get("size"), int) or rec["size"] < 0:
            raise InvalidSaveError(f"{m}: the size of {rel!r} is {str(rec.get('size'))[:40]!r}, not a number of bytes "
                                   f"(damaged); {RESTORE}")
        path = _regular(directory, rel, "listed in manifest.json")
        size = path.stat().st_size
        if size != rec.get("size"):
            raise InvalidSaveError(f"{path}: {size} bytes, but manifest.json records {rec.get('size')} (truncated "
                                   f"or replaced, e.g. by an interrupted copy); {RESTORE}")
        if _sha256(path) != rec.get("sha256"):
            raise InvalidSaveError(f"{path}: contents do not match the sha256 in manifest.json (damaged or edited "
                                   f"after the save); {RESTORE}")
    return data


def _check_name(manifest: Path, rel: str) -> None:
    """A path a manifest lists: relative, inside the save, of printable names of at most MAX_NAME_CHARS."""
    parts = rel.split("/")
    shown = repr(rel[:80]) + ("..." if len(rel) > 80 else "")
    if not rel or rel.startswith("/") or any(x in ("", ".", "..") for x in parts):
        raise InvalidSaveError(f"{manifest}: lists {shown}, which is not a path inside the save (edited); {RESTORE}")
    if any(len(x) > MAX_NAME_CHARS for x in parts) or any(ord(c) < 32 or c in "\\\x7f" for c in rel):
        raise InvalidSaveError(f"{manifest}: lists {shown}, which is not a file name a save holds (control "
                               f"characters, a backslash or a name over {MAX_NAME_CHARS} characters: damaged or "
                               f"edited); {RESTORE}")


def _regular(directory: Path, rel: str, what: str) -> Path:
    """``directory/rel`` after checking that it is a regular file reached without symbolic links."""
    path = directory
    for i, part in enumerate(rel.split("/")):
        path = path / part
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            raise InvalidSaveError(f"{path}: missing ({what}); the save is incomplete - {RESTORE}") from None
        except OSError as e:
            raise InvalidSaveError(f"{path}: cannot be read ({e.strerror}); check its permissions") from None
        if stat.S_ISLNK(st.st_mode):
            raise InvalidSaveError(f"{path}: a symbolic link (to {os.readlink(path)}); directme does not follow links "
                                   f"out of a save - put the real file or directory there, or {RESTORE}")
        last = i == len(rel.split("/")) - 1
        if (not last and not stat.S_ISDIR(st.st_mode)) or (last and not stat.S_ISREG(st.st_mode)):
            raise InvalidSaveError(f"{path}: not a {'regular file' if last else 'directory'} ({what}); {RESTORE}")
    return path


def read_json(path: Path, what: str) -> dict[str, Any]:
    """A JSON object from a save's file; damage raises InvalidSaveError naming the file."""
    try:
        text = path.read_bytes().decode("utf-8")
        _check_depth(text, path)
        data = json.loads(text, parse_int=lambda digits: _bounded_int(digits, path))
    except InvalidSaveError:
        raise
    except FileNotFoundError:
        raise InvalidSaveError(f"{path}: missing (the {what}); the save is incomplete - {RESTORE}") from None
    except UnicodeDecodeError as e:
        raise InvalidSaveError(f"{path}: not UTF-8 text at byte {e.start} (damaged); {RESTORE}") from None
    except json.JSONDecodeError as e:
        raise InvalidSaveError(f"{path}: not valid JSON at line {e.lineno} column {e.colno} ({e.msg}; damaged or "
                               f"cut short); {RESTORE}") from None
    except OSError as e:
        raise InvalidSaveError(f"{path}: cannot be read ({e.strerror}); check its permissions") from None
    except (RecursionError, ValueError) as e:  # cannot happen after the checks; a clear error all the same
        raise InvalidSaveError(f"{path}: not readable JSON ({type(e).__name__}; damaged); {RESTORE}") from None
    if not isinstance(data, dict):
        raise InvalidSaveError(f"{path}: holds a JSON {type(data).__name__}, not the {what}'s object (edited); "
                               f"{RESTORE}")
    return data


def _check_depth(text: str, path: Path) -> None:
    """Refuse JSON nested deeper than MAX_JSON_DEPTH (brackets inside strings are not counted)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return
    code = np.frombuffer(_STRINGS.sub('""', text).encode("utf-8"), np.uint8)
    step = (code == ord("[")).astype(np.int32) + (code == ord("{")) - (code == ord("]")) - (code == ord("}"))
    depth = int(np.cumsum(step).max(initial=0))
    if depth > MAX_JSON_DEPTH:
        raise InvalidSaveError(f"{path}: JSON nested {depth} levels deep (a save's files nest at most "
                               f"{MAX_JSON_DEPTH}: damaged or edited); {RESTORE}")


def _bounded_int(digits: str, path: Path) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise InvalidSaveError(f"{path}: an integer of {len(digits)} digits (a save's integers have at most "
                               f"{MAX_INT_DIGITS}: damaged or edited); {RESTORE}")
    return int(digits)


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
