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

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from ..types import OPTION_LETTERS, TextEnum
from .annotations import BenchEpisode, parse_clock, read_records, record_error, require_keys, safe_name
from .metrics import mean, pairwise_order_accuracy, parse_letters, recall_at_k
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
_NUMBER_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                            "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


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


def load(path: str, **_: Any) -> list[BenchEpisode]:
    data, source = read_records(path)
    logs = data.get("logs") if isinstance(data, Mapping) else data
    if not isinstance(logs, list):
        raise record_error(source, "top level", "expected a list of life-logs or {'logs': [...]}")
    episodes = []
    for i, row in enumerate(logs):
        rec = require_keys(row, ["queries"], source, f"log {i}")
        log_id = str(rec.get("log_id", i))
        queries = tuple(_parse_query(q, k, source, f"log {i} ({log_id}) query {k}") for k, q in enumerate(rec["queries"]))
        dur = rec.get("duration_s")
        episodes.append(BenchEpisode(episode_id=safe_name(log_id), video=str(rec.get("video", log_id)), items=queries,
                                     duration_s=float(dur) if dur is not None else None,
                                     meta={"horizon_s": float(dur) if dur is not None else 0.0}))
    return episodes


def _parse_query(q: Any, k: int, source: str, where: str) -> XLeQuery:
    rec = require_keys(q, ["task", "query"], source, where)
    name = str(rec["task"]).strip().lower()
    if name not in TASKS:
        raise record_error(source, where, f"task {rec['task']!r} is not one of {TASKS}")
    task = XLeTask(name)
    qid = str(rec.get("qid", k))
    if task == XLeTask.TEMPORAL_LOCALIZATION:
        spans = rec.get("gt_spans")
        if not isinstance(spans, list) or not spans or not all(isinstance(s, list) and len(s) == 2 for s in spans):
            raise record_error(source, where, "'gt_spans' must be a non-empty list of [start, end]")
        parsed = tuple((parse_clock(a, source=source, where=where), parse_clock(b, source=source, where=where))
                       for a, b in spans)
        if any(b < a for a, b in parsed):
            raise record_error(source, where, "a gt span ends before it starts")
        return XLeQuery(qid, task, str(rec["query"]), gt_spans=parsed)
    if task == XLeTask.COUNTING:
        if not isinstance(rec.get("answer"), int):
            raise record_error(source, where, "counting needs an integer 'answer'")
        return XLeQuery(qid, task, str(rec["query"]), count=int(rec["answer"]))
    if task == XLeTask.SUMMARY_ORDERING:
        events = tuple(str(e) for e in rec.get("events", ()))
        letters = OPTION_LETTERS[: len(events)]
        order = tuple(letters[o] if isinstance(o, int) else str(o).upper() for o in rec.get("answer_order", ()))
        if len(events) < 2 or sorted(order) != sorted(letters):
            raise record_error(source, where, "'answer_order' must list every event once (letters or indices)")
        return XLeQuery(qid, task, str(rec["query"]), events=events, order=order)
    return XLeQuery(qid, task, str(rec["query"]), reference=str(rec.get("reference", "")))


def spans_from_answer(answer: Any, pad_s: float = 1.0) -> list[tuple[float, float]]:
    """Ranked [start, end] spans named in the answer text, else taken from its evidence."""
    text = str(getattr(answer, "text", "") or "")
    spans = []
    for a, b in _SPAN.findall(text):
        s, e = parse_clock(a), parse_clock(b)
        spans.append((min(s, e), max(s, e)))
    if spans:
        return spans
    for ev in getattr(answer, "evidence", ()) or ():
        times = [float(t) for t in (getattr(ev, "times_s", ()) or ())]
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


def score_query(q: XLeQuery, answer: Any, k: int = 5, thr: float = 0.3, judge: Any = None) -> dict:
    text = str(getattr(answer, "text", "") or "")
    rec: dict[str, Any] = {"qid": q.qid, "task": q.task, "query": q.query, "text": text}
    if q.task == XLeTask.TEMPORAL_LOCALIZATION:
        spans = spans_from_answer(answer)
        rec.update(pred_spans=spans, gt_spans=list(q.gt_spans), recall=recall_at_k(spans, q.gt_spans, k, thr))
    elif q.task == XLeTask.COUNTING:
        n = count_from_text(text)
        rec.update(pred=n, answer=q.count, correct=n == q.count, abs_error=abs(n - q.count) if n is not None else None)
    elif q.task == XLeTask.SUMMARY_ORDERING:
        order = parse_letters(getattr(answer, "raw_output", "") or text, OPTION_LETTERS[: len(q.events)])
        rec.update(pred=order, answer=list(q.order), correct=tuple(order) == q.order,
                   pairwise=pairwise_order_accuracy(order, q.order))
    else:
        rec.update(score=judge.score(q.query, q.reference, text) if judge is not None and q.reference else None)
    return rec


def summarize(results: Sequence[Mapping[str, Any]]) -> dict:
    recs = [r for res in results for r in res.get("records", [])]
    by = {t: [r for r in recs if r["task"] == t] for t in XLeTask}
    return {"items": len(recs),
            "temporal_localization": {"n": len(by["temporal_localization"]),
                                      "recall_at_5_tiou_0.3": mean(r["recall"] for r in by["temporal_localization"])},
            "counting": {"n": len(by["counting"]), "accuracy": mean(float(r["correct"]) for r in by["counting"]),
                         "mae": mean(r["abs_error"] for r in by["counting"])},
            "summary_ordering": {"n": len(by["summary_ordering"]),
                                 "exact": mean(float(r["correct"]) for r in by["summary_ordering"]),
                                 "pairwise": mean(r["pairwise"] for r in by["summary_ordering"])},
            "summary": {"n": len(by["summary"]), "judge_score_0_5": mean(r["score"] for r in by["summary"])}}
