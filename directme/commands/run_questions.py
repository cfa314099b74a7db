"""Questions for `directme run`: --ask/--at pairs and question files (JSON / YAML lists, UCS-Bench
files, or text lines 'SECONDS QUESTION'), with times in seconds or HH:MM:SS."""
from __future__ import annotations

import argparse
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

from ..errors import InvalidInputError
from ..types import MAX_STREAM_S, check_options


def parse_time(text: Any) -> float:
    """Seconds from a number or 'HH:MM:SS' / 'MM:SS' (minutes may exceed 59), in [0, MAX_STREAM_S]."""
    s = str(text).strip()
    try:
        if ":" in s:
            parts = [float(x) for x in s.split(":")]
            t = 0.0
            for x in parts:
                t = t * 60.0 + x
        else:
            t = float(s)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"not a time: {text!r:.60} (use seconds or HH:MM:SS)") from None
    if not 0 <= t <= MAX_STREAM_S:  # NaN fails too
        raise argparse.ArgumentTypeError(f"not a time: {text!r:.60} (seconds from the stream start, 0 to "
                                         f"{MAX_STREAM_S:g})")
    return t


@dataclass(frozen=True)
class Ask:
    text: str
    t_s: Optional[float]  # None = at the end of the stream
    options: tuple[str, ...] = ()
    answer: Optional[str] = None  # the correct letter when known (simulator episodes, benchmark files)


def _record_to_ask(rec: Any, where: str) -> Ask:
    if not isinstance(rec, dict):
        raise InvalidInputError(f"{where}: each question must be a mapping, got {type(rec).__name__}")
    text = rec.get("question") or rec.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError(f"{where}: a question needs a 'question' (or 'text') string field: {rec!r:.200}")
    t = next((rec[k] for k in ("t_s", "t", "at", "timestamp_s", "question_timestamps", "time") if k in rec), None)
    opts = rec.get("options") or ()
    if isinstance(opts, dict):
        opts = [opts[k] for k in sorted(opts, key=str)]
    if not isinstance(opts, (list, tuple)):
        raise InvalidInputError(f"{where}: 'options' must be a list (or a mapping of letters), got {opts!r:.80}")
    opts = check_options(tuple(str(o) if isinstance(o, (int, float)) and not isinstance(o, bool) else o
                               for o in opts), f"{where} options")
    try:
        t_s = None if t is None else parse_time(t)
    except argparse.ArgumentTypeError as exc:
        raise InvalidInputError(f"{where}: {exc}") from None
    return Ask(text, t_s, opts, rec.get("answer_label") or rec.get("answer_letter"))


def read_questions(path: str) -> list[Ask]:
    """Questions from a JSON / YAML list (or {"questions": [...]}) or text lines 'SECONDS QUESTION'."""
    from ..validation import load_json, load_yaml, read_text

    p = Path(path)
    text = read_text(p, "questions file", 64 << 20)  # UTF-8, named otherwise
    if p.suffix.lower() in (".json", ".yaml", ".yml"):
        data = load_json(text, str(p)) if p.suffix.lower() == ".json" else load_yaml(text, str(p))
        data = data.get("questions", data) if isinstance(data, dict) else data
        if not isinstance(data, list):
            raise InvalidInputError(f"{p}: expected a list of questions")
        return [_record_to_ask(r, f"{p} item {i}") for i, r in enumerate(data)]
    asks = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([0-9:.]+)\s+(.+)$", line)
        if not m:
            raise InvalidInputError(f"{p} line {n}: expected 'SECONDS QUESTION', got {line!r}")
        asks.append(Ask(m.group(2), parse_time(m.group(1))))
    return asks


def collect_questions(args: argparse.Namespace, default: Iterable[Ask]) -> list[Ask]:
    if len(args.at) > len(args.ask):
        raise InvalidInputError(f"{len(args.at)} --at for {len(args.ask)} --ask: give each --at after its --ask")
    asks = [Ask(q, t) for q, t in itertools.zip_longest(args.ask, args.at[:len(args.ask)])]
    if args.questions:
        asks += read_questions(args.questions)
    if not asks:
        asks = list(default)
    return sorted(asks, key=lambda a: float("inf") if a.t_s is None else a.t_s)
