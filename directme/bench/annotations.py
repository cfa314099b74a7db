"""Shared pieces of the benchmark loaders: clock parsing, JSON/JSONL reading, record errors,
and the episode container every benchmark module produces."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

from ..errors import InvalidInputError

_CLOCK = re.compile(r"^\s*(\d+)(?::(\d{1,2}))?(?::(\d{1,2}(?:\.\d+)?))?\s*$")


@dataclass(frozen=True)
class BenchEpisode:
    """One video (or life-log, or sim episode) with the items asked on it.

    ``video`` is the benchmark's own reference (relative path, uid or file name) resolved
    against ``--videos``; ``items`` are benchmark-specific frozen records; ``duration_s``
    is known from annotations when they give it (else None: the video decides).
    """

    episode_id: str
    video: str
    items: tuple[Any, ...]
    duration_s: Optional[float] = None
    meta: Mapping[str, Any] = field(default_factory=dict)


def record_error(source: str, where: str, problem: str, fix: str = "") -> InvalidInputError:
    """An InvalidInputError naming the file and the record (index / id) that is wrong."""
    msg = f"{source}: {where}: {problem}"
    return InvalidInputError(msg + (f"; {fix}" if fix else ""))


def parse_clock(value: Any, *, source: str = "annotations", where: str = "record") -> float:
    """Seconds from "HH:MM:SS", "MM:SS" (minutes may exceed 59), "SS" or a number.

    "75:30" is 4530 s (PhoStream writes minutes above 59); "01:02:03" is 3723 s.
    """
    if isinstance(value, bool) or value is None:
        raise record_error(source, where, f"timestamp {value!r} is not a time", 'use "HH:MM:SS", "MM:SS" or seconds')
    if isinstance(value, (int, float)):
        t = float(value)
    else:
        m = _CLOCK.match(str(value))
        if not m:
            raise record_error(source, where, f"timestamp {value!r} is not a time",
                               'use "HH:MM:SS", "MM:SS" or seconds')
        parts = [p for p in m.groups() if p is not None]
        if len(parts) == 3:
            h, mi, s = int(parts[0]), int(parts[1]), float(parts[2])
            if mi > 59 or s >= 60:
                raise record_error(source, where, f"timestamp {value!r} has minutes/seconds out of range")
            t = h * 3600 + mi * 60 + s
        elif len(parts) == 2:
            mi, s = int(parts[0]), float(parts[1])
            if s >= 60:
                raise record_error(source, where, f"timestamp {value!r} has seconds >= 60")
            t = mi * 60 + s
        else:
            t = float(parts[0])
    if not math.isfinite(t) or t < 0:
        raise record_error(source, where, f"timestamp {value!r} must be >= 0")
    return t


def read_records(path: str | Path) -> tuple[Any, str]:
    """Parse a .json or .jsonl file. Returns (object or list of JSONL rows, source name).

    A broken JSONL line is reported with its line number.
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"annotation file not found: {p}; pass --annotations PATH to an existing file")
    text = p.read_text(encoding="utf-8-sig")
    if not text.strip():
        raise InvalidInputError(f"{p}: the file is empty")
    if p.suffix.lower() == ".jsonl":
        rows = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise record_error(str(p), f"line {n}", f"not valid JSON ({exc.msg})",
                                   "the file may be truncated; regenerate it") from None
        return rows, str(p)
    try:
        return json.loads(text), str(p)
    except json.JSONDecodeError as exc:
        raise record_error(str(p), f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg})",
                           "the file may be truncated or partial; regenerate it") from None


def require_keys(record: Any, keys: Sequence[str], source: str, where: str) -> Mapping[str, Any]:
    """Check ``record`` is an object holding ``keys``; name the missing ones otherwise."""
    if not isinstance(record, Mapping):
        raise record_error(source, where, f"expected a JSON object, got {type(record).__name__}")
    missing = [k for k in keys if k not in record]
    if missing:
        raise record_error(source, where, f"missing field(s) {', '.join(repr(k) for k in missing)}",
                           f"present: {', '.join(sorted(map(str, record))) or 'none'}")
    return record


def iter_files(path: str | Path, suffixes: Sequence[str] = (".json", ".jsonl")) -> Iterator[Path]:
    """The file itself, or every annotation file under a folder (sorted, recursive)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in suffixes)
        if not files:
            raise InvalidInputError(f"{p}: no {'/'.join(suffixes)} annotation files in this folder")
        yield from files
    else:
        yield p


def safe_name(text: str) -> str:
    """A file-name-safe version of an episode id (used for per-episode result files)."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("_")
    return out or "episode"
