"""EgoSAT: 4-option multiple choice at time t_eval using only the stream prefix, with
per-option probabilities, confidence (max renormalised probability), entropy and the
confidence slope (least-squares slope of confidence over the multi-step index, or over
t_eval when the queryset has no steps).

Input: EgoSAT "effective queryset" JSON files (``{task, video_uid, params, samples: [{idx,
t_eval, prompt, mcq: {options, answer, answer_idx}, step_idx?, state?}]}``), one per clip.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from pydantic import AliasChoices, Field

from ..types import OPTION_LETTERS, Answer
from .annotations import (BenchEpisode, FreeText, Index, Label, Number, Options, Record, Seconds, Text,
                          check_record, iter_files, read_records, record_error)
from .metrics import accuracy_table, is_abstention, mean, option_confidence, slope
from .runner import StreamRunner

NAME = "egosat"
LETTERS = OPTION_LETTERS[:4]  # "ABCD": EgoSAT's four options
_OPTION_LINE = re.compile(rf"^\s*\(?([{LETTERS}])[\).:]\s*(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class EgoSATSample:
    idx: int
    t_eval: float
    question: str
    options: tuple[str, ...]
    answer: Optional[str]
    prompt: str = ""
    step_idx: Optional[int] = None
    state: str = ""
    t_eval_rel: Optional[float] = None


def load(path: str, **_: Any) -> list[BenchEpisode]:
    """One episode per queryset file (a folder is searched recursively; ids are relative paths)."""
    root = Path(path)
    return [load_queryset(f, episode_id=str(f.relative_to(root).with_suffix("")) if root.is_dir() else None)
            for f in iter_files(path, (".json", ".jsonl"))]


class Mcq(Record):
    options: Options = ()
    answer: Optional[Text] = None
    answer_idx: Optional[Index] = None


class Sample(Record):
    idx: Index
    t_eval: Seconds
    prompt: FreeText = ""
    mcq: Optional[Mcq] = None
    question: Optional[Text] = None
    step_idx: Optional[Index] = None
    state: FreeText = ""
    t_eval_rel: Optional[Number] = None


class Queryset(Record):
    samples: list[Any]
    video_uid: Optional[Label] = Field(None, validation_alias=AliasChoices("video_uid", "uid"))
    task_name: FreeText = ""
    task: FreeText = ""
    params: Optional[dict[str, Any]] = None


def load_queryset(path: str | Path, episode_id: Optional[str] = None) -> BenchEpisode:
    data, source = read_records(path)
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    rec = check_record(Queryset, data, source, "top level")
    samples = tuple(sorted((_parse_sample(s, i, source) for i, s in enumerate(rec.samples)),
                           key=lambda s: (s.t_eval, s.idx)))
    uid = rec.video_uid or Path(path).stem
    return BenchEpisode(episode_id=episode_id or Path(path).stem, video=uid, items=samples,
                        meta={"task": rec.task_name or rec.task, "source": source,
                              "horizon_s": samples[-1].t_eval if samples else 0.0,
                              "params": rec.params or {}})


def _parse_sample(s: Any, i: int, source: str) -> EgoSATSample:
    idx = s.get("idx") if isinstance(s, Mapping) else None
    where = f"sample {i}" + (f" (idx {idx})" if isinstance(idx, int) and not isinstance(idx, bool) else "")
    if isinstance(s, Mapping) and "idx" in s and "t_eval" not in s:
        raise record_error(source, where, "missing 't_eval' (query time in seconds)")
    rec = check_record(Sample, s, source, where)
    mcq = rec.mcq or Mcq()
    prompt = rec.prompt
    options = mcq.options or tuple(o for _, o in _OPTION_LINE.findall(prompt))
    if len(options) != 4:
        raise record_error(source, where,
                           f"expected 4 options (mcq.options or A-D lines in the prompt), got {len(options)}")
    answer = mcq.answer
    if answer is None and mcq.answer_idx is not None:
        if mcq.answer_idx >= len(LETTERS):
            raise record_error(source, where, f"mcq.answer_idx {mcq.answer_idx} is not one of 0-3")
        answer = LETTERS[mcq.answer_idx]
    if answer is not None and answer.strip().upper() not in LETTERS:
        raise record_error(source, where, f"answer {answer!r:.40} is not one of A-D")
    first_option = _OPTION_LINE.search(prompt)
    question = rec.question or (prompt[: first_option.start()] if first_option else prompt).strip() or prompt
    if not question.strip():
        raise record_error(source, where, "no question: give 'question' or a 'prompt' with the question text")
    return EgoSATSample(idx=rec.idx, t_eval=rec.t_eval, question=question, options=options,
                        answer=answer.strip().upper() if answer else None, prompt=prompt, step_idx=rec.step_idx,
                        state=rec.state, t_eval_rel=rec.t_eval_rel)


def run_episode(runner: StreamRunner, episode: BenchEpisode, opts: Mapping[str, Any]) -> list[dict]:
    records: list[dict] = []
    task = episode.meta.get("task", "")

    def make_probe(s: EgoSATSample):
        def probe(r: StreamRunner, t: float) -> None:
            asked = r.ask(s.question, t, s.options)
            records.append(score_sample(s, asked.answer, asked.latency_s, task))
        return probe

    for s in episode.items:
        runner.schedule(s.t_eval, make_probe(s))
    runner.run()
    return records


def score_sample(s: EgoSATSample, answer: Answer, latency_s: float, task: str = "") -> dict:
    letter = answer.letter
    conf, ent, probs = option_confidence(answer.option_scores, LETTERS)
    return {"idx": s.idx, "t_eval": s.t_eval, "task": task, "step_idx": s.step_idx, "state": s.state,
            "answer": s.answer, "pred": letter, "correct": (letter == s.answer) if s.answer else None,
            "p_cond": probs or None, "confidence": conf, "entropy": ent, "latency_s": latency_s,
            "text": answer.text, "question": s.question, "prompt": s.prompt,
            "t_eval_rel": s.t_eval_rel, "flags": list(answer.flags),
            "abstained": is_abstention(answer)}


def summarize(results: Sequence[Mapping[str, Any]]) -> dict:
    recs = [r for res in results for r in res.get("records", [])]
    stepped = [r for r in recs if r["step_idx"] is not None and r["confidence"] is not None]
    xs = [r["step_idx"] for r in stepped] if stepped else [r["t_eval"] for r in recs if r["confidence"] is not None]
    ys = [r["confidence"] for r in (stepped or [r for r in recs if r["confidence"] is not None])]
    out = accuracy_table(recs, ("task", "step_idx", "state"))
    out.update({"mean_confidence": mean(r["confidence"] for r in recs),
                "mean_entropy": mean(r["entropy"] for r in recs), "confidence_slope": slope(xs, ys),
                "confidence_slope_over": "step_idx" if stepped else "t_eval"})
    return out
