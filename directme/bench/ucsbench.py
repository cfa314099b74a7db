"""UCS-Bench: user-centric spatial questions asked at timestamps along an egocentric stream.

Schemas read (both seen in the wild, plus the demo results file):
- per-video JSON list: ``qid, video_uid, question, question_timestamps ("HH:MM:SS", or a list
  of them), options {"A": ..} (empty = open-ended), answer_label, answer, category,
  subcategory, qtype``;
- JSONL: ``video_uid, query_timestamp (seconds or clock), question, options [..],
  answer_idx`` (+ optional ``qid, category/dimension, subcategory, qtype``);
- ``{"results": [...]}`` with ``timestamp_s`` (the DirectMe demo output).
Every question is asked at its own time and answered independently (never cached by text).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Annotated, Any, Mapping, Optional, Sequence

from pydantic import AliasChoices, BeforeValidator, Field

from ..errors import InvalidInputError
from ..types import OPTION_LETTERS, Answer, Question
from .annotations import (BenchEpisode, FreeText, Index, Label, Record, Text, check_record, clock_seconds, iter_files,
                          option_texts, read_records, record_error)
from .metrics import accuracy_table, is_abstention, relation_terms
from .runner import StreamRunner

NAME = "ucsbench"
GROUP_KEYS = ("category", "subcategory", "qtype")


def load(path: str, **_: Any) -> list[BenchEpisode]:
    """Episodes (one per video_uid, questions in time order) from a file or folder."""
    by_video: dict[str, list[Question]] = defaultdict(list)
    for file in iter_files(path):
        data, source = read_records(file)
        rows = data.get("results") if isinstance(data, Mapping) and "results" in data else data
        if isinstance(data, Mapping) and "results" not in data:
            rows = [data]
        if not isinstance(rows, list):
            raise record_error(source, "top level", "expected a list of questions, a JSONL file or {'results': [...]}")
        jsonl = source.lower().endswith(".jsonl")
        for i, row in enumerate(rows):
            for q in _parse_row(row, i, source, jsonl):
                by_video[q.meta["video_uid"]].append(q)
    episodes = []
    for vid, qs in by_video.items():
        qs.sort(key=lambda q: q.t_s)
        episodes.append(BenchEpisode(episode_id=vid, video=vid, items=tuple(qs),
                                     meta={"horizon_s": qs[-1].t_s if qs else 0.0}))
    return episodes


def _times(v: Any) -> tuple[float, ...]:
    values = v if isinstance(v, list) else [v]
    if not values:
        raise ValueError("expected a time or a non-empty list of times")
    return tuple(clock_seconds(x) for x in values)


def _ucs_options(v: Any) -> tuple[str, ...]:
    """``{"A": .., "B": ..}`` (consecutive letters, any order) or a list; null/{} = open-ended."""
    if isinstance(v, Mapping):
        keys = {}
        for k, text in v.items():
            key = str(k).strip().upper()
            if key in keys:
                raise ValueError(f"option letter {key!r} given twice")
            keys[key] = text
        expected = list(OPTION_LETTERS[: len(keys)])
        if sorted(keys) != expected:
            raise ValueError(f"option keys {list(v)!r:.80} must be consecutive letters {expected}")
        v = [keys[k] for k in expected]
    return option_texts(v)


def _label_or_labels(v: Any) -> Any:
    """The answer letter (or one per timestamp): strings or null."""
    if v is None or isinstance(v, str):
        return v.strip().upper() or None if isinstance(v, str) else None
    if isinstance(v, list) and all(x is None or isinstance(x, str) for x in v):
        return [x.strip().upper() or None if isinstance(x, str) else None for x in v]
    raise ValueError("expected a letter, null or a list of them")


Times = Annotated[tuple[float, ...], BeforeValidator(_times)]
_TIME_KEYS = ("timestamp_s", "query_timestamp", "question_timestamps", "question_timestamp", "timestamp")


class UcsRow(Record):
    """One UCS-Bench question in any of the three schemas (module docstring)."""

    question: Text
    qid: Optional[Label] = Field(None, validation_alias=AliasChoices("qid", "id"))
    video_uid: Optional[Label] = Field(None, validation_alias=AliasChoices("video_uid", "video_id"))
    options: Annotated[tuple[str, ...], BeforeValidator(_ucs_options)] = ()
    answer_idx: Optional[Index] = None
    answer_label: Annotated[Any, BeforeValidator(_label_or_labels)] = None
    answer: Any = Field(None, validation_alias=AliasChoices("answer", "reference_answer"))
    category: FreeText = Field("", validation_alias=AliasChoices("category", "dimension"))
    subcategory: FreeText = ""
    qtype: FreeText = ""
    timestamp_s: Optional[Times] = None
    query_timestamp: Optional[Times] = None
    question_timestamps: Optional[Times] = None
    question_timestamp: Optional[Times] = None
    timestamp: Optional[Times] = None


def _parse_row(row: Any, i: int, source: str, jsonl: bool) -> list[Question]:
    where = f"line {i + 1}" if jsonl else f"record {i}"
    if isinstance(row, Mapping) and isinstance(row.get("qid", row.get("id")), (str, int)):
        where = f"{where} (qid {str(row.get('qid', row.get('id')))[:60]})"
    rec = check_record(UcsRow, row, source, where)
    qid = rec.qid if rec.qid is not None else f"{rec.video_uid or 'video'}_{i}"
    video_uid = rec.video_uid or "video"
    options = rec.options
    times = next((getattr(rec, k) for k in _TIME_KEYS if getattr(rec, k) is not None), None)
    if times is None:
        raise record_error(source, where, "no timestamp",
                           "give 'question_timestamps' (\"HH:MM:SS\") or 'query_timestamp' (seconds)")
    if rec.answer_idx is not None:
        if not rec.answer_idx < len(options):
            raise record_error(source, where, f"answer_idx {rec.answer_idx} is outside the {len(options)} options")
        answer_label: Any = OPTION_LETTERS[rec.answer_idx]
    else:
        answer_label = rec.answer_label
    labels = answer_label if isinstance(answer_label, list) else [answer_label] * len(times)
    if len(labels) != len(times):
        raise record_error(source, where, f"{len(times)} timestamps but {len(labels)} answer labels")
    reference = rec.answer
    if reference is not None and not isinstance(reference, (str, int, float)):
        reference = None if not isinstance(reference, (list, dict)) else reference
    out = []
    for k, (t, label) in enumerate(zip(times, labels)):
        if options and label is not None and label not in OPTION_LETTERS[: len(options)]:
            raise record_error(source, where, f"answer {label!r} is not one of the option letters "
                                              f"{OPTION_LETTERS[: len(options)]}")
        try:
            out.append(Question(
                qid=qid if len(times) == 1 else f"{qid}#{k}", t_s=t, text=rec.question, options=options,
                answer=label, subtask=rec.subcategory, category=rec.category, qtype=rec.qtype,
                meta={"video_uid": video_uid, "reference": reference, "source": source}))
        except InvalidInputError as exc:
            raise record_error(source, where, str(exc)) from None
    return out


# --- protocol -----------------------------------------------------------------------------


def run_episode(runner: StreamRunner, episode: BenchEpisode, opts: Mapping[str, Any]) -> list[dict]:
    """Ask every question at its timestamp; returns one record per question."""
    records: list[dict] = []
    judge = opts.get("judge")

    def make_probe(q: Question):
        def probe(r: StreamRunner, t: float) -> None:
            asked = r.ask(q.text, t, q.options)
            records.append(score_question(q, asked.answer, asked.latency_s, judge))
        return probe

    for q in episode.items:
        runner.schedule(q.t_s, make_probe(q))
    runner.run()
    return records


def score_question(q: Question, answer: Answer, latency_s: float, judge: Any = None) -> dict:
    """One prediction record: the letter (multiple choice) or text, and whether it is right."""
    letter, text = answer.letter, answer.text
    abstained = is_abstention(answer)
    reference = q.meta.get("reference")
    correct: Optional[bool]
    if q.options:
        correct, scored_by = (letter == q.answer) if q.answer else None, "letter"
    elif judge is not None and reference:
        correct, scored_by = judge.score(q.text, str(reference), text) >= 3.0, "judge"
    else:
        ref_terms = relation_terms(str(reference or ""))
        correct = (relation_terms(text) == ref_terms) if ref_terms else None
        scored_by = "relation_terms" if ref_terms else "none"
    if abstained and correct is not None:
        correct = False  # an abstention is a wrong answer, whatever its text says
    return {"qid": q.qid, "t_s": q.t_s, "question": q.text, "options": list(q.options),
            "answer_label": q.answer, "reference": reference, "pred_letter": letter, "pred_text": text,
            "correct": correct, "scored_by": scored_by, "category": q.category, "subcategory": q.subtask,
            "qtype": q.qtype, "latency_s": latency_s, "flags": list(answer.flags),
            "abstained": abstained}


def summarize(results: Sequence[Mapping[str, Any]]) -> dict:
    records = [r for res in results for r in res.get("records", [])]
    return accuracy_table(records, GROUP_KEYS)
