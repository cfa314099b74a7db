"""Shared pieces of the benchmark loaders: clock parsing, JSON/JSONL reading, record errors, the strict
record schemas' field types, and the episode container every benchmark module produces.

Every loader reads with a strict schema (pydantic models over each record, ``check_record``): text fields
are non-empty strings (a ``null`` question is refused, never read as "None"), indices are integers (not
``true``), timestamps are finite seconds within ``MAX_ANNOTATION_S`` (and within the video when its
duration is known), options are a list of strings (or of numbers written as options). Files are UTF-8
(another encoding is named), JSON nested deeper than ``directme.validation.MAX_DEPTH`` is refused before
any parser recurses, and an error names the file, the record and the field."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Iterator, Mapping, Optional, Sequence, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from ..errors import InvalidInputError
from ..types import MAX_TEXT_CHARS, OPTION_LETTERS, describe
from ..validation import load_json, read_text, validation_message

_CLOCK = re.compile(r"^\s*(\d{1,12})(?::(\d{1,2}))?(?::(\d{1,2}(?:\.\d{1,9})?))?\s*$")
MAX_ANNOTATION_S = 7 * 86400.0  # a question asked later than a week into a stream is a format or unit mistake
MAX_ANNOTATION_BYTES = 1 << 30
M = TypeVar("M", bound=BaseModel)


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


def parse_clock(value: Any, *, source: str = "annotations", where: str = "record",
                max_s: float = MAX_ANNOTATION_S) -> float:
    """Seconds from "HH:MM:SS", "MM:SS" (minutes may exceed 59), "SS" or a number, in [0, max_s].

    "75:30" is 4530 s (PhoStream writes minutes above 59); "01:02:03" is 3723 s.
    """
    try:
        return clock_seconds(value, max_s)
    except ValueError as exc:
        raise record_error(source, where, str(exc), 'use "HH:MM:SS", "MM:SS" or seconds') from None


def clock_seconds(value: Any, max_s: float = MAX_ANNOTATION_S) -> float:
    """``parse_clock`` without the file and record in the message (ValueError); the schemas' time fields."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"timestamp {describe(value)} is not a time")
    if isinstance(value, (int, float)):
        try:
            t = float(value)
        except OverflowError:
            t = math.inf
    else:
        m = _CLOCK.match(value)
        if not m:
            raise ValueError(f"timestamp {describe(value)} is not a time")
        parts = [p for p in m.groups() if p is not None]
        if len(parts) == 3:
            h, mi, sec = int(parts[0]), int(parts[1]), float(parts[2])
            if mi > 59 or sec >= 60:
                raise ValueError(f"timestamp {describe(value)} has minutes/seconds out of range")
            t = h * 3600 + mi * 60 + sec
        elif len(parts) == 2:
            mi, sec = int(parts[0]), float(parts[1])
            if sec >= 60:
                raise ValueError(f"timestamp {describe(value)} has seconds >= 60")
            t = mi * 60 + sec
        else:
            t = float(parts[0])
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"timestamp {describe(value)} must be a finite number of seconds >= 0")
    if t > max_s:
        raise ValueError(f"timestamp {describe(value)} ({t:.6g} s) is beyond {max_s:.6g} s (a week): a unit or "
                         "format mistake (milliseconds? a Unix time?)")
    return t


def read_records(path: str | Path) -> tuple[Any, str]:
    """Parse a .json or .jsonl file (UTF-8). Returns (object or list of JSONL rows, source name).

    A broken JSONL line is reported with its line number; another encoding, over-deep nesting and numbers
    too large for a float are refused naming the file."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"annotation file not found: {p}; pass --annotations PATH to an existing file")
    text = read_text(p, "annotation file", MAX_ANNOTATION_BYTES)
    if not text.strip():
        raise InvalidInputError(f"{p}: the file is empty")
    if p.suffix.lower() == ".jsonl":
        rows = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(load_json(line, f"{p}: line {n}"))
            except InvalidInputError as exc:
                raise InvalidInputError(f"{exc}; the file may be truncated; regenerate it") from None
        return rows, str(p)
    return load_json(text, str(p)), str(p)


def check_record(model: type[M], record: Any, source: str, where: str) -> M:
    """``record`` validated by the strict schema ``model``, or an error naming the file, record and field."""
    if not isinstance(record, Mapping):
        raise record_error(source, where, f"expected a JSON object, got {type(record).__name__} {describe(record)}")
    try:
        return model.model_validate(record)
    except ValidationError as exc:
        raise record_error(source, where, "field " + validation_message(exc, "")) from None


# --- field types of the record schemas (strict: a wrong type is an error naming the field) -------------------


def _text(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError("expected a string")
    if not v.strip():
        raise ValueError("expected a non-empty string")
    if len(v) > MAX_TEXT_CHARS:
        raise ValueError(f"text of {len(v)} characters (at most {MAX_TEXT_CHARS})")
    return v


def _label(v: Any) -> str:
    """A name or id: a string or an integer, as a string."""
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise ValueError("expected a string or an integer")
    text = str(v) if isinstance(v, str) or abs(v) < 10 ** 18 else ""
    if not text.strip() or len(text) > MAX_TEXT_CHARS:
        raise ValueError("expected a name of 1 to 10000 characters or an integer below 10**18")
    return text


def option_text(v: Any) -> str:
    """An option: a string, or a number written as the option's text."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ValueError("an option must be a string")
    text = v if isinstance(v, str) else (str(v) if not isinstance(v, int) or abs(v) < 10 ** 18 else "")
    if not text or len(text) > MAX_TEXT_CHARS:
        raise ValueError("an option must be a string of 1 to 10000 characters (or a number below 10**18)")
    return text


def option_texts(v: Any) -> tuple[str, ...]:
    """A list of options (``option_text`` each; None: none), at most one per option letter."""
    if v is None:
        return ()
    if not isinstance(v, list):
        raise ValueError("options must be a list of strings")
    if len(v) > len(OPTION_LETTERS):
        raise ValueError(f"at most {len(OPTION_LETTERS)} options, got {len(v)}")
    return tuple(option_text(o) for o in v)


def _seconds(v: Any) -> float:
    return clock_seconds(v)


def _number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError("expected a number")
    try:
        f = float(v)
    except OverflowError:
        f = math.inf
    if not math.isfinite(f) or abs(f) > 1e12:
        raise ValueError("expected a finite number (|x| <= 1e12)")
    return f


def _index(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2 ** 31:
        raise ValueError("expected an integer >= 0 (not true/false, not a string)")
    return v


def _free_text(v: Any) -> str:
    """An optional text field (reference answers, categories): a string, a number or null ("")."""
    if v is None:
        return ""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ValueError("expected a string")
    return v if isinstance(v, str) else _label(v) if isinstance(v, int) else repr(v)


Text = Annotated[str, BeforeValidator(_text)]
Label = Annotated[str, BeforeValidator(_label)]
FreeText = Annotated[str, BeforeValidator(_free_text)]
OptionText = Annotated[str, BeforeValidator(option_text)]
Options = Annotated[tuple[str, ...], BeforeValidator(option_texts)]
Seconds = Annotated[float, BeforeValidator(_seconds)]
Index = Annotated[int, BeforeValidator(_index)]
Number = Annotated[float, BeforeValidator(_number)]


class Record(BaseModel):
    """Base of the record schemas: fields not in the schema are ignored (files carry more than we read)."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True, populate_by_name=True)


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
