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
from typing import Any, Mapping, Optional, Sequence

from ..types import OPTION_LETTERS, Question
from .annotations import BenchEpisode, iter_files, parse_clock, read_records, record_error, require_keys
from .metrics import accuracy_table, relation_terms
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


def _parse_row(row: Any, i: int, source: str, jsonl: bool) -> list[Question]:
    where = f"line {i + 1}" if jsonl else f"record {i}"
    rec = require_keys(row, ["question"], source, where)
    qid = str(rec.get("qid", rec.get("id", f"{rec.get('video_uid', 'video')}_{i}")))
    where = f"{where} (qid {qid})"
    video_uid = str(rec.get("video_uid", rec.get("video_id", "video")))
    options, answer_label = _options_and_label(rec, source, where)
    times = _timestamps(rec, source, where)
    labels = answer_label if isinstance(answer_label, list) else [answer_label] * len(times)
    if len(labels) != len(times):
        raise record_error(source, where, f"{len(times)} timestamps but {len(labels)} answer labels")
    out = []
    for k, (t, label) in enumerate(zip(times, labels)):
        if options and label is not None and label not in OPTION_LETTERS[: len(options)]:
            raise record_error(source, where, f"answer {label!r} is not one of the option letters "
                                              f"{OPTION_LETTERS[: len(options)]}")
        out.append(Question(
            qid=qid if len(times) == 1 else f"{qid}#{k}", t_s=t, text=str(rec["question"]), options=options,
            answer=label, subtask=str(rec.get("subcategory", "")),
            category=str(rec.get("category", rec.get("dimension", ""))), qtype=str(rec.get("qtype", "")),
            meta={"video_uid": video_uid, "reference": rec.get("answer", rec.get("reference_answer")),
                  "source": source}))
    return out


def _timestamps(rec: Mapping[str, Any], source: str, where: str) -> list[float]:
    for key in ("timestamp_s", "query_timestamp", "question_timestamps", "question_timestamp", "timestamp"):
        if key in rec:
            raw = rec[key]
            values = raw if isinstance(raw, list) else [raw]
            if not values:
                raise record_error(source, where, f"{key!r} is an empty list")
            return [parse_clock(v, source=source, where=where) for v in values]
    raise record_error(source, where, "no timestamp",
                       "give 'question_timestamps' (\"HH:MM:SS\") or 'query_timestamp' (seconds)")


def _options_and_label(rec: Mapping[str, Any], source: str, where: str) -> tuple[tuple[str, ...], Any]:
    raw = rec.get("options", {})
    if raw is None:
        raw = {}
    if isinstance(raw, Mapping):
        keys = [str(k).strip().upper() for k in raw]
        expected = list(OPTION_LETTERS[: len(keys)])
        if sorted(keys) != expected:
            raise record_error(source, where, f"option keys {keys} must be consecutive letters {expected}")
        options = tuple(str(raw[k]) for k in sorted(raw, key=lambda k: str(k).strip().upper()))
    elif isinstance(raw, list):
        options = tuple(str(o) for o in raw)
    else:
        raise record_error(source, where, f"'options' must be an object of letters or a list, got {type(raw).__name__}")
    if "answer_idx" in rec:
        idx = rec["answer_idx"]
        if not isinstance(idx, int) or not 0 <= idx < len(options):
            raise record_error(source, where, f"answer_idx {idx!r} is outside the {len(options)} options")
        return options, OPTION_LETTERS[idx]
    label = rec.get("answer_label")
    if isinstance(label, str):
        label = label.strip().upper() or None
    return options, label


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


def score_question(q: Question, answer: Any, latency_s: float, judge: Any = None) -> dict:
    """One prediction record: the letter (multiple choice) or text, and whether it is right."""
    letter = getattr(answer, "letter", None)
    text = str(getattr(answer, "text", "") or "")
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
    return {"qid": q.qid, "t_s": q.t_s, "question": q.text, "options": list(q.options),
            "answer_label": q.answer, "reference": reference, "pred_letter": letter, "pred_text": text,
            "correct": correct, "scored_by": scored_by, "category": q.category, "subcategory": q.subtask,
            "qtype": q.qtype, "latency_s": latency_s, "flags": list(getattr(answer, "flags", ()) or ())}


def summarize(results: Sequence[Mapping[str, Any]]) -> dict:
    records = [r for res in results for r in res.get("records", [])]
    return accuracy_table(records, GROUP_KEYS)
