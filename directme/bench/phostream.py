"""PhoStream: open-ended questions on a 1 s update stream; forward items must wait.

File: list of ``{video_path, verified_responses: [{user_query, timestamp_question "MM:SS"
(minutes may exceed 59), time_type instant|backward|forward, response, capability,
timestamp_proactive (forward only)}]}``.

Protocol: the question is issued at t_q; the model is polled once per second (it may answer
"silent", i.e. an Answer flagged "silent" or with empty text). Its first non-silent answer is
classified against the due window [t_a, t_a + 2 s] (t_a = t_q, or t_p for forward items;
for forward items an answer at t_q itself is ignored, as in the official scorer): Early,
On time, Late (up to ``late_grace_s`` after the window, then polling stops) or No Response.
On-time answers are scored by the LLM judge (0-5 x 20) when one is configured; without a judge no score is
given. An abstention (``Answer.abstained``: "not in memory", "not understood") is No Response, never On time.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Mapping, Optional, Sequence

from ..types import Answer, Flag, TextEnum
from .annotations import (BenchEpisode, FreeText, Record, Seconds, Text, check_record, read_records, record_error,
                          safe_name)
from .metrics import NO_RESPONSE, ON_TIME, classify_response, is_abstention, mean, response_rates
from .runner import StreamRunner

NAME = "phostream"


class TimeType(TextEnum):
    """When a PhoStream item's answer is due: at the question (instant: about now; backward: about the
    past) or later, once the evidence appears (forward, also written "future" / "proactive")."""

    INSTANT = "instant"
    BACKWARD = "backward"
    FORWARD = "forward"


TIME_TYPES = tuple(t.value for t in TimeType)  # ("instant", "backward", "forward")


@dataclass(frozen=True)
class PhoItem:
    qid: str
    question: str
    reference: str
    time_type: TimeType
    t_q_s: float
    t_answer_s: float  # when the answer is due: t_q, or t_p for forward items
    capability: str = ""


class PhoResponse(Record):
    user_query: Text
    timestamp_question: Seconds
    time_type: Text
    response: FreeText
    capability: FreeText = ""
    timestamp_proactive: Optional[Seconds] = None


class PhoVideo(Record):
    video_path: Text
    verified_responses: list[Any]


def load(path: str, **_: Any) -> list[BenchEpisode]:
    data, source = read_records(path)
    if not isinstance(data, list):
        raise record_error(source, "top level", "expected a list of videos with 'verified_responses'")
    episodes = []
    for v, row in enumerate(data):
        rec = check_record(PhoVideo, row, source, f"video {v}")
        vpath = rec.video_path
        items = tuple(_parse_item(q, v, k, vpath, source) for k, q in enumerate(rec.verified_responses))
        episode_id = f"{v:04d}_" + safe_name("_".join(PurePosixPath(vpath).parts[-2:]))[:80]
        episodes.append(BenchEpisode(episode_id=episode_id, video=vpath, items=items,
                                     meta={"horizon_s": max((i.t_answer_s for i in items), default=0.0) + 2.0}))
    return episodes


def _parse_item(q: Any, v: int, k: int, vpath: str, source: str) -> PhoItem:
    where = f"video {v} ({vpath[:80]}) response {k}"
    rec = check_record(PhoResponse, q, source, where)
    name = rec.time_type.strip().lower()
    name = TimeType.FORWARD.value if name in ("future", "proactive") else name
    if name not in TIME_TYPES:
        raise record_error(source, where, f"time_type {rec.time_type!r:.80} is not one of {TIME_TYPES}")
    time_type = TimeType(name)
    t_q = rec.timestamp_question
    t_a = t_q
    if time_type == TimeType.FORWARD:
        if rec.timestamp_proactive is None:
            raise record_error(source, where, "forward item without 'timestamp_proactive'")
        t_a = rec.timestamp_proactive
        if t_a < t_q:
            raise record_error(source, where, f"timestamp_proactive ({t_a:g} s) is before the question ({t_q:g} s)")
    return PhoItem(qid=f"{v}:{k}", question=rec.user_query, reference=rec.response,
                   time_type=time_type, t_q_s=t_q, t_answer_s=t_a, capability=rec.capability)


def _is_silent(answer: Answer) -> bool:
    return Flag.SILENT in answer.flags or answer.text.strip().lower() in ("", "silent")


def run_episode(runner: StreamRunner, episode: BenchEpisode, opts: Mapping[str, Any]) -> list[dict]:
    window = float(opts.get("response_window_s", 2.0))
    grace = float(opts.get("late_grace_s", 10.0))
    step = float(opts.get("poll_interval_s", 1.0))
    judge = opts.get("judge")
    records: list[dict] = []

    def finish(item: PhoItem, t_resp: Optional[float], text: str, n_polls: int, abstained: bool = False) -> None:
        # no answer ("not understood", "not in memory") is no response, never on time; without a judge no item
        # has a score (the summary's score stays empty), with one only on-time answers are judged
        timing = NO_RESPONSE if abstained else classify_response(item.t_answer_s, t_resp, window)
        judged = timing == ON_TIME and judge is not None
        score = None if judge is None else 20.0 * judge.score(item.question, item.reference, text) if judged else 0.0
        records.append({"qid": item.qid, "time_type": item.time_type, "capability": item.capability,
                        "t_q_s": item.t_q_s, "t_answer_s": item.t_answer_s, "t_response_s": t_resp,
                        "response": text, "reference": item.reference, "timing": timing, "score": score,
                        "polls": n_polls, "abstained": abstained, "judged": judged})

    def poll(item: PhoItem, n: int):
        def probe(r: StreamRunner, t: float) -> None:
            answer = r.ask(item.question, t).answer
            ignored = item.time_type == TimeType.FORWARD and t <= item.t_q_s
            if not _is_silent(answer) and not ignored:
                finish(item, t, str(answer.text), n + 1, is_abstention(answer))
            elif t + step <= item.t_answer_s + window + grace:
                r.schedule(t + step, poll(item, n + 1))
            else:
                finish(item, None, "", n + 1)
        return probe

    for item in episode.items:
        runner.schedule(item.t_q_s, poll(item, 0))
    runner.run()
    return records


def summarize(results: Sequence[Mapping[str, Any]]) -> dict:
    recs = [r for res in results for r in res.get("records", [])]
    out: dict[str, Any] = {"items": len(recs), "rates": response_rates(r["timing"] for r in recs),
                           "score": _score(recs),
                           "judged": sum(bool(r.get("judged")) for r in recs),
                           "abstained": sum(bool(r.get("abstained")) for r in recs)}
    for tt in TimeType:
        sub = [r for r in recs if r["time_type"] == tt]
        out[tt] = {"items": len(sub), "rates": response_rates(r["timing"] for r in sub),
                   "score": _score(sub)}
    return out


def _score(recs: Sequence[Mapping[str, Any]]) -> Optional[float]:
    """Mean 0-100 score, or None when items were not scored (no judge configured)."""
    if any(r["score"] is None for r in recs):
        return None
    return mean(r["score"] for r in recs)
