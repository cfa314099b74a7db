"""TeleEgo: questions asked once at ceil(evidence end) with a decision window, then re-asked
every 60 s after a first correct answer to measure memory persistence.

QA file (list): ``index, QA_type (mc_single | mc_multi | binary | open_ended), question,
options ["A. ..", ..], answer {"value": ..}, evidence {"timestep": {"start", "end"}},
category, subcategory``. Times like "D1-09:31:38" are mapped to stream seconds through the
timeline file (``mapping_by_input_label: {video: {start_label, end_label,
merged_offset_start_seconds, merged_offset_end_seconds}}``); plain "HH:MM:SS" and numbers
are stream seconds already.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Mapping, Optional, Sequence, Union

from pydantic import AliasChoices, BeforeValidator, Field

from ..types import OPTION_LETTERS, Answer, TextEnum, describe
from .annotations import (MAX_ANNOTATION_S, BenchEpisode, FreeText, Label, Options, Record, Seconds, Text,
                          check_record, clock_seconds, parse_clock, read_records, record_error)
from .metrics import (accuracy_table, is_abstention, mean, memory_persistence_s, parse_letters, real_time_correct,
                      token_overlap_correct)
from .runner import StreamRunner

NAME = "teleego"


class QaType(TextEnum):
    """TeleEgo's answer formats: multiple choice (one or several letters), true/false, open text."""

    MC_SINGLE = "mc_single"
    MC_MULTI = "mc_multi"
    BINARY = "binary"
    OPEN_ENDED = "open_ended"


QA_TYPES = tuple(q.value for q in QaType)  # ("mc_single", "mc_multi", "binary", "open_ended")
_DAY = re.compile(r"^(?:d|day)\s*(\d+)[\-\s]?(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?$", re.IGNORECASE)


@dataclass(frozen=True)
class TeleEgoItem:
    index: str
    qa_type: QaType
    question: str
    options: tuple[str, ...]
    gold: Any  # letters (mc), bool (binary) or reference text (open-ended)
    t_s: float
    category: str = ""
    subcategory: str = ""


@dataclass(frozen=True)
class Timeline:
    """Day-clock segments of the merged stream: (start_abs_s, end_abs_s, merged_start_s)."""

    segments: tuple[tuple[float, float, float], ...] = field(default_factory=tuple)

    @staticmethod
    def from_file(path: str | Path) -> "Timeline":
        data, source = read_records(path)
        mapping = data.get("mapping_by_input_label") if isinstance(data, Mapping) else None
        if not isinstance(mapping, Mapping) or not mapping:
            raise record_error(source, "top level", "no 'mapping_by_input_label' object",
                               "pass the TeleEgo timeline JSON with --timeline")
        segs = []
        for name, meta in mapping.items():
            rec = check_record(Segment, meta, source, f"segment {name!r:.80}")
            st, en = day_seconds(rec.start_label), day_seconds(rec.end_label)
            if st is None or en is None or en < st:
                raise record_error(source, f"segment {name!r:.80}", "start/end labels are not 'Dk-HH:MM:SS' in order")
            if rec.merged_offset_start_seconds + (en - st) > MAX_ANNOTATION_S:
                raise record_error(source, f"segment {name!r:.80}", "ends beyond a week into the merged stream")
            segs.append((st, en, rec.merged_offset_start_seconds))
        return Timeline(tuple(sorted(segs, key=lambda s: s[2])))

    def to_stream_s(self, label: Any, source: str, where: str) -> float:
        abs_s = day_seconds(label) if isinstance(label, str) else None
        if abs_s is None:
            return parse_clock(label, source=source, where=where)
        if not self.segments:
            raise record_error(source, where, f"time {label!r} is a day-clock label and no timeline file was given",
                               "pass the participant's timeline JSON with --timeline (e.g. timeline_P1.json)")
        for st, en, merged in self.segments:
            if st <= abs_s <= en:
                return merged + (abs_s - st)
        raise record_error(source, where, f"time {label!r} falls in no timeline segment",
                           "check the timeline file matches this QA file")


def day_seconds(label: Any) -> Optional[float]:
    """Absolute seconds of a "D1-09:31:38" label from day 1 00:00 (None if not that form, or out of range)."""
    if not isinstance(label, str) or len(label) > 40:
        return None
    m = _DAY.match(label.strip().replace("：", ":").replace("—", "-").replace("–", "-"))
    if not m:
        return None
    day, h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4) or 0)
    if day < 1 or h > 23 or mi > 59 or s >= 60:
        return None
    return float((day - 1) * 86400 + h * 3600 + mi * 60 + s)


def _time(v: Any) -> Any:
    """A day-clock label ("D1-09:31:38", kept as text for the timeline) or stream seconds (a float)."""
    if isinstance(v, str) and day_seconds(v) is not None:
        return v
    return clock_seconds(v)


Time = Annotated[Union[float, str], BeforeValidator(_time)]


class Segment(Record):
    """One video of the timeline file: its day-clock span and its start in the merged stream."""

    start_label: Text
    end_label: Text
    merged_offset_start_seconds: Seconds = 0.0


class Timestep(Record):
    end: Time = Field(validation_alias=AliasChoices("end", "End", "to"))


class Evidence(Record):
    timestep: Timestep


class TeleEgoRecord(Record):
    """One QA item (module docstring); ``answer`` is {"value": ..} or the value itself."""

    QA_type: Text
    question: Text
    answer: Any
    evidence: Evidence
    options: Options = ()
    index: Optional[Label] = None
    category: FreeText = ""
    subcategory: FreeText = ""


def load(path: str, timeline: Optional[str] = None, video: Optional[str] = None, **_: Any) -> list[BenchEpisode]:
    """One episode per QA file (a TeleEgo participant stream)."""
    data, source = read_records(path)
    if not isinstance(data, list):
        raise record_error(source, "top level", "expected a list of QA items")
    tl = Timeline.from_file(timeline) if timeline else Timeline()
    items = tuple(sorted((_parse_item(row, i, source, tl) for i, row in enumerate(data)), key=lambda it: it.t_s))
    stem = Path(path).stem
    return [BenchEpisode(episode_id=stem, video=video or stem, items=items,
                         meta={"horizon_s": items[-1].t_s if items else 0.0})]


def _parse_item(row: Any, i: int, source: str, tl: Timeline) -> TeleEgoItem:
    index = row.get("index", i) if isinstance(row, Mapping) else i
    where = f"record {i} (index {str(index)[:60]})"
    rec = check_record(TeleEgoRecord, row, source, where)
    index = rec.index if rec.index is not None else str(i)
    name = rec.QA_type.strip().lower().replace("-", "_")
    name = QaType.OPEN_ENDED.value if name in ("open", "openended") else name
    if name not in QA_TYPES:
        raise record_error(source, where, f"QA_type {rec.QA_type!r:.80} is not one of {QA_TYPES}")
    qa_type = QaType(name)
    value = rec.answer.get("value") if isinstance(rec.answer, Mapping) else rec.answer
    if not (value is None or isinstance(value, (str, bool, int, float)) or
            (isinstance(value, list) and all(isinstance(v, (str, bool, int, float)) for v in value))):
        raise record_error(source, where, f"answer {describe(value)} must be text, true/false or a list of letters")
    options = rec.options
    if qa_type in (QaType.MC_SINGLE, QaType.MC_MULTI):
        allowed = OPTION_LETTERS[:len(options)]
        gold: Any = tuple(sorted(parse_letters(",".join(map(str, value)) if isinstance(value, list) else str(value),
                                               allowed)))
        if not options or not gold:
            raise record_error(source, where, f"{qa_type} needs options and answer letters, got {describe(value)}")
    elif qa_type == QaType.BINARY:
        gold = _to_bool(value[0] if isinstance(value, list) and value else value)
        if gold is None:
            raise record_error(source, where, f"binary answer {describe(value)} is not true/false")
    else:
        gold = str(value[0]) if isinstance(value, list) and value else str(value or "")
    end = rec.evidence.timestep.end
    t = end if isinstance(end, float) else tl.to_stream_s(end, source, where)
    return TeleEgoItem(index=index, qa_type=qa_type, question=rec.question, options=options, gold=gold,
                       t_s=float(math.ceil(t)), category=rec.category, subcategory=rec.subcategory)


def _to_bool(x: Any) -> Optional[bool]:
    if isinstance(x, bool):
        return x
    s = str(x).strip().lower()
    if s in {"true", "t", "yes", "y", "1", "是", "对", "正确"}:
        return True
    if s in {"false", "f", "no", "n", "0", "否", "不对", "错误"}:
        return False
    return None


# --- protocol -----------------------------------------------------------------------------


def is_correct(item: TeleEgoItem, answer: Answer, judge: Any = None) -> bool:
    text, letter = answer.text, answer.letter
    if is_abstention(answer):
        return False  # no answer: wrong, whatever its text contains
    if item.qa_type == QaType.MC_SINGLE:
        return letter is not None and (letter,) == item.gold
    if item.qa_type == QaType.MC_MULTI:
        letters = parse_letters(answer.raw_output or text, OPTION_LETTERS[: len(item.options)])
        if not letters and letter:
            letters = [letter]
        return tuple(sorted(letters)) == item.gold
    if item.qa_type == QaType.BINARY:
        pred = {OPTION_LETTERS[0]: True, OPTION_LETTERS[1]: False}.get(letter or "") if letter else _to_bool(text)
        return pred is not None and pred == item.gold
    if judge is not None:
        return judge.score(item.question, item.gold, text) >= 3.0
    return token_overlap_correct(item.gold, text)


def run_episode(runner: StreamRunner, episode: BenchEpisode, opts: Mapping[str, Any]) -> list[dict]:
    """Initial ask at each item's time, recall rounds every ``recall_interval_s`` after a first
    correct answer (stopping at the first failure); one record per item."""
    window = float(opts.get("decision_window_s", 5.0))
    interval = float(opts.get("recall_interval_s", 60.0))
    rounds = int(opts.get("recall_rounds", 10))
    judge = opts.get("judge")
    records: dict[str, dict] = {}

    def ask(item: TeleEgoItem, r: StreamRunner, t: float) -> tuple[bool, float, bool]:
        options = ("True", "False") if item.qa_type == QaType.BINARY else item.options
        asked = r.ask(item.question, t, options or None)
        return is_correct(item, asked.answer, judge), asked.latency_s, is_abstention(asked.answer)

    def recall(item: TeleEgoItem, k: int):
        def probe(r: StreamRunner, t: float) -> None:
            ok, _, _ = ask(item, r, t)
            records[item.index]["recalls"].append(ok)
            if ok and k < rounds:
                r.schedule(item.t_s + (k + 1) * interval, recall(item, k + 1))
        return probe

    def initial(item: TeleEgoItem):
        def probe(r: StreamRunner, t: float) -> None:
            ok, latency, abstained = ask(item, r, t)
            rta = real_time_correct(ok, latency, window)
            records[item.index] = {"index": item.index, "qa_type": item.qa_type, "t_s": t, "category": item.category,
                                   "subcategory": item.subcategory, "correct": ok, "rta_correct": rta,
                                   "latency_s": latency, "abstained": abstained, "recalls": []}
            if rta and item.qa_type != QaType.OPEN_ENDED and rounds > 0:
                r.schedule(t + interval, recall(item, 1))
        return probe

    for item in episode.items:
        runner.schedule(item.t_s, initial(item))
    runner.run(end_s=opts.get("end_s"))
    for rec in records.values():
        mpt, censored = memory_persistence_s(rec["rta_correct"], rec["recalls"], interval, rounds)
        rec.update(mpt_s=mpt, mpt_censored=censored)
    return list(records.values())


def summarize(results: Sequence[Mapping[str, Any]]) -> dict:
    """RTA (closed formats, like the official scorer), open-ended accuracy, MPT in minutes."""
    recs = [r for res in results for r in res.get("records", [])]
    closed = [r for r in recs if r["qa_type"] != QaType.OPEN_ENDED]
    rta = accuracy_table(closed, ("qa_type", "category", "subcategory"), correct_key="rta_correct")
    return {"rta": rta, "open_ended": accuracy_table([r for r in recs if r["qa_type"] == QaType.OPEN_ENDED]),
            "mpt_min": mean(r["mpt_s"] / 60.0 for r in closed),
            "mpt_censored": sum(bool(r["mpt_censored"]) for r in closed), "items": len(recs),
            "mean_latency_s": mean(r["latency_s"] for r in recs)}
