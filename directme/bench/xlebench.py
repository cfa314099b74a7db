"""X-LeBench: ingest a whole life-log once (23 min to 16 h), then answer from memory:
temporal localisation (ranked spans, recall@5 at tIoU 0.3), action counting, summary
ordering, and free summaries (judged when a judge is configured).

X-LeBench publishes no machine-readable QA schema, so directme reads this one (JSON list,
or ``{"logs": [...]}``)::

  {"log_id": "p01_day1", "video": "p01_day1.mp4", "duration_s": 5400,
   "queries": [
     {"qid": "q1", "task": "temporal_localization", "query": "When did I wash the dishes?",
      "gt_spans": [["00:12:00", "00:14:30"]]},
     {"qid": "q2", "task": "counting", "query": "How many times did I open the fridge?", "answer": 3},
     {"qid": "q3", "task": "summary_ordering", "query": "Put these in the order they happened.",
      "events": ["cooking", "eating", "washing up"], "answer_order": ["A", "B", "C"]},
     {"qid": "q4", "task": "summary", "query": "Summarise my morning.", "reference": "..."}]}

Spans come from the answer text ("00:12:00-00:14:30", "720-870 s") or, failing that, from
the answer's evidence times (ranked in the order given).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Mapping, Optional, Sequence

from pydantic import BeforeValidator

from ..types import OPTION_LETTERS, Answer, TextEnum
from .annotations import (BenchEpisode, FreeText, Label, Record, Seconds, Text, check_record, clock_seconds,
                          option_text, read_records, record_error, safe_name)
from .metrics import is_abstention, mean, pairwise_order_accuracy, parse_letters, recall_at_k
from .runner import StreamRunner

NAME = "xlebench"


class XLeTask(TextEnum):
    """The X-LeBench query kinds this adapter scores."""

    TEMPORAL_LOCALIZATION = "temporal_localization"
    COUNTING = "counting"
    SUMMARY_ORDERING = "summary_ordering"
    SUMMARY = "summary"


TASKS = tuple(t.value for t in XLeTask)  # ("temporal_localization", "counting", "summary_ordering", "summary")
_T = r"(\d+(?::\d{1,2}){0,2}(?:\.\d+)?)"
_SPAN = re.compile(_T + r"\s*(?:-|–|to)\s*" + _T)
_NUMBER_WORDS = {w: i for i, w in enumerate(("zero one two three four five six seven eight nine ten eleven twelve "
                                             "thirteen fourteen fifteen sixteen seventeen eighteen nineteen "
                                             "twenty").split())}


@dataclass(frozen=True)
class XLeQuery:
    qid: str
    task: XLeTask
    query: str
    gt_spans: tuple[tuple[float, float], ...] = ()
    count: Optional[int] = None
    events: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    reference: str = ""


def _event(v: Any) -> str:
    return option_text(v)


def _span(v: Any) -> tuple[float, float]:
    if not isinstance(v, list) or len(v) != 2:
        raise ValueError("a span must be [start, end]")
    return (clock_seconds(v[0]), clock_seconds(v[1]))


def _order_item(v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ValueError("expected an event letter or index")
    return v


class XLeQueryRecord(Record):
    task: Text
    query: Text
    qid: Optional[Label] = None
    gt_spans: Optional[list[Annotated[tuple[float, float], BeforeValidator(_span)]]] = None
    answer: Any = None
    events: Optional[list[Annotated[str, BeforeValidator(_event)]]] = None
    answer_order: Optional[list[Annotated[Any, BeforeValidator(_order_item)]]] = None
    reference: FreeText = ""


class XLeLog(Record):
    queries: list[Any]
    log_id: Optional[Label] = None
    video: Optional[Text] = None
    duration_s: Optional[Seconds] = None


def load(path: str, **_: Any) -> list[BenchEpisode]:
    data, source = read_records(path)
    logs = data.get("logs") if isinstance(data, Mapping) else data
    if not isinstance(logs, list):
        raise record_error(source, "top level", "expected a list of life-logs or {'logs': [...]}")
    episodes = []
    for i, row in enumerate(logs):
        rec = check_record(XLeLog, row, source, f"log {i}")
        log_id = rec.log_id if rec.log_id is not None else str(i)
        dur = rec.duration_s
        queries = tuple(_parse_query(q, k, source, f"log {i} ({log_id[:60]}) query {k}", dur)
                        for k, q in enumerate(rec.queries))
        episodes.append(BenchEpisode(episode_id=safe_name(log_id), video=rec.video or log_id, items=queries,
                                     duration_s=dur, meta={"horizon_s": dur if dur is not None else 0.0}))
    return episodes


def _parse_query(q: Any, k: int, source: str, where: str, duration_s: Optional[float] = None) -> XLeQuery:
    rec = check_record(XLeQueryRecord, q, source, where)
    name = rec.task.strip().lower()
    if name not in TASKS:
        raise record_error(source, where, f"task {rec.task!r:.80} is not one of {TASKS}")
    task = XLeTask(name)
    qid = rec.qid if rec.qid is not None else str(k)
    if task == XLeTask.TEMPORAL_LOCALIZATION:
        spans = tuple(rec.gt_spans or ())
        if not spans:
            raise record_error(source, where, "'gt_spans' must be a non-empty list of [start, end]")
        if any(b < a for a, b in spans):
            raise record_error(source, where, "a gt span ends before it starts")
        if duration_s is not None and any(b > duration_s + 1.0 for _, b in spans):
            raise record_error(source, where, f"a gt span ends after the log's duration_s ({duration_s:g} s)")
        return XLeQuery(qid, task, rec.query, gt_spans=spans)
    if task == XLeTask.COUNTING:
        if isinstance(rec.answer, bool) or not isinstance(rec.answer, int) or not 0 <= rec.answer < 2 ** 31:
            raise record_error(source, where, "counting needs an integer 'answer' >= 0")
        return XLeQuery(qid, task, rec.query, count=int(rec.answer))
    if task == XLeTask.SUMMARY_ORDERING:
        events = tuple(rec.events or ())
        letters = OPTION_LETTERS[: len(events)]
        raw = rec.answer_order or []
        if len(events) > len(OPTION_LETTERS) or any(isinstance(o, int) and not 0 <= o < len(letters) for o in raw):
            raise record_error(source, where, f"'answer_order' indices must be in 0..{len(letters) - 1} "
                                              f"(at most {len(OPTION_LETTERS)} events)")
        order = tuple(letters[o] if isinstance(o, int) else o.strip().upper() for o in raw)
        if len(events) < 2 or sorted(order) != sorted(letters):
            raise record_error(source, where, "'answer_order' must list every event once (letters or indices)")
        return XLeQuery(qid, task, rec.query, events=events, order=order)
    return XLeQuery(qid, task, rec.query, reference=rec.reference)


def spans_from_answer(answer: Answer, pad_s: float = 1.0) -> list[tuple[float, float]]:
    """Ranked [start, end] spans named in the answer text, else taken from its evidence."""
    text = answer.text
    spans = []
    for a, b in _SPAN.findall(text):
        try:
            s, e = clock_seconds(a, math.inf), clock_seconds(b, math.inf)
        except ValueError:  # "99:99" or an absurd number in a model's reply is not a span
            continue
        spans.append((min(s, e), max(s, e)))
    if spans:
        return spans
    for ev in answer.evidence:
        times = [float(t) for t in ev.times_s]
        if times:
            spans.append((min(times) - (pad_s if len(times) == 1 else 0.0),
                          max(times) + (pad_s if len(times) == 1 else 0.0)))
    return spans


def count_from_text(text: str) -> Optional[int]:
    s = (text or "").lower()
    m = re.search(r"\b(\d+)\b", s)
    if m:
        return int(m.group(1))
    for word in re.findall(r"[a-z]+", s):
        if word in _NUMBER_WORDS:
            return _NUMBER_WORDS[word]
    return None


def run_episode(runner: StreamRunner, episode: BenchEpisode, opts: Mapping[str, Any]) -> list[dict]:
    """Stream the whole log, then ask every query at the end, from memory."""
    k = int(opts.get("recall_k", 5))
    thr = float(opts.get("tiou", 0.3))
    judge = opts.get("judge")
    records: list[dict] = []

    def ask_all(r: StreamRunner, _t: float) -> None:
        t_end = r.t_observed if r.t_observed is not None else 0.0
        for q in episode.items:
            options = q.events if q.task == XLeTask.SUMMARY_ORDERING else None
            asked = r.ask(q.query, t_end, options)
            records.append(score_query(q, asked.answer, k, thr, judge) | {"t_s": t_end, "latency_s": asked.latency_s})

    runner.schedule(float("inf"), ask_all)
    runner.run()
    return records


def score_query(q: XLeQuery, answer: Answer, k: int = 5, thr: float = 0.3, judge: Any = None) -> dict:
    """One record; an abstention (``Answer.abstained``) predicts nothing - no span, count or order read from
    its text ("No 'fridge' in memory as of 12 s") - and a summary's is scored 0 by a judge, never judged."""
    abstained = is_abstention(answer)
    text = answer.text
    rec: dict[str, Any] = {"qid": q.qid, "task": q.task, "query": q.query, "text": text, "abstained": abstained,
                           "judged": False}
    if abstained:
        text = ""
    if q.task == XLeTask.TEMPORAL_LOCALIZATION:
        spans = [] if abstained else spans_from_answer(answer)
        rec.update(pred_spans=spans, gt_spans=list(q.gt_spans), recall=recall_at_k(spans, q.gt_spans, k, thr))
    elif q.task == XLeTask.COUNTING:
        n = count_from_text(text)
        rec.update(pred=n, answer=q.count, correct=n == q.count, abs_error=abs(n - q.count) if n is not None else None)
    elif q.task == XLeTask.SUMMARY_ORDERING:
        order = [] if abstained else parse_letters(answer.raw_output or text, OPTION_LETTERS[: len(q.events)])
        rec.update(pred=order, answer=list(q.order), correct=tuple(order) == q.order,
                   pairwise=pairwise_order_accuracy(order, q.order))
    else:
        judged = judge is not None and bool(q.reference) and not abstained
        rec.update(score=judge.score(q.query, q.reference, text) if judged else
                   0.0 if judge is not None and q.reference else None, judged=judged)
    return rec


def summarize(results: Sequence[Mapping[str, Any]]) -> dict:
    recs = [r for res in results for r in res.get("records", [])]
    by = {t: [r for r in recs if r["task"] == t] for t in XLeTask}
    return {"items": len(recs), "abstained": sum(bool(r.get("abstained")) for r in recs),
            "judged": sum(bool(r.get("judged")) for r in recs),
            "temporal_localization": {"n": len(by["temporal_localization"]),
                                      "recall_at_5_tiou_0.3": mean(r["recall"] for r in by["temporal_localization"])},
            "counting": {"n": len(by["counting"]), "accuracy": mean(float(r["correct"]) for r in by["counting"]),
                         "mae": mean(r["abs_error"] for r in by["counting"])},
            "summary_ordering": {"n": len(by["summary_ordering"]),
                                 "exact": mean(float(r["correct"]) for r in by["summary_ordering"]),
                                 "pairwise": mean(r["pairwise"] for r in by["summary_ordering"])},
            "summary": {"n": len(by["summary"]), "judge_score_0_5": mean(r["score"] for r in by["summary"])}}
