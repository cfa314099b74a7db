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

from ..types import OPTION_LETTERS
from .annotations import BenchEpisode, iter_files, parse_clock, read_records, record_error, require_keys
from .metrics import accuracy_table, mean, option_confidence, slope
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


def load_queryset(path: str | Path, episode_id: Optional[str] = None) -> BenchEpisode:
    data, source = read_records(path)
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    rec = require_keys(data, ["samples"], source, "top level")
    if not isinstance(rec["samples"], list):
        raise record_error(source, "top level", "'samples' must be a list")
    samples = tuple(sorted((_parse_sample(s, i, source) for i, s in enumerate(rec["samples"])),
                           key=lambda s: (s.t_eval, s.idx)))
    uid = str(rec.get("video_uid") or rec.get("uid") or Path(path).stem)
    return BenchEpisode(episode_id=episode_id or Path(path).stem, video=uid, items=samples,
                        meta={"task": str(rec.get("task_name") or rec.get("task") or ""), "source": source,
                              "horizon_s": samples[-1].t_eval if samples else 0.0,
                              "params": rec.get("params") or {}})


def _parse_sample(s: Any, i: int, source: str) -> EgoSATSample:
    rec = require_keys(s, ["idx"], source, f"sample {i}")
    where = f"sample {i} (idx {rec['idx']})"
    if "t_eval" not in rec:
        raise record_error(source, where, "missing 't_eval' (query time in seconds)")
    mcq = rec.get("mcq") or {}
    prompt = str(rec.get("prompt", ""))
    options = tuple(str(o) for o in mcq.get("options", ())) or tuple(o for _, o in _OPTION_LINE.findall(prompt))
    if len(options) != 4:
        raise record_error(source, where, f"expected 4 options (mcq.options or A-D lines in the prompt), got {len(options)}")
    answer = mcq.get("answer")
    if answer is None and isinstance(mcq.get("answer_idx"), int):
        answer = OPTION_LETTERS[mcq["answer_idx"]]
    if answer is not None and str(answer).upper() not in LETTERS:
        raise record_error(source, where, f"answer {answer!r} is not one of A-D")
    first_option = _OPTION_LINE.search(prompt)
    question = str(rec.get("question") or (prompt[: first_option.start()] if first_option else prompt).strip() or prompt)
    step = rec.get("step_idx")
    return EgoSATSample(idx=int(rec["idx"]), t_eval=parse_clock(rec["t_eval"], source=source, where=where),
                        question=question, options=options, answer=str(answer).upper() if answer else None,
                        prompt=prompt, step_idx=int(step) if step is not None else None,
                        state=str(rec.get("state", "")), t_eval_rel=rec.get("t_eval_rel"))


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


def score_sample(s: EgoSATSample, answer: Any, latency_s: float, task: str = "") -> dict:
    letter = getattr(answer, "letter", None)
    conf, ent, probs = option_confidence(getattr(answer, "option_scores", None), LETTERS)
    return {"idx": s.idx, "t_eval": s.t_eval, "task": task, "step_idx": s.step_idx, "state": s.state,
            "answer": s.answer, "pred": letter, "correct": (letter == s.answer) if s.answer else None,
            "p_cond": probs or None, "confidence": conf, "entropy": ent, "latency_s": latency_s,
            "text": str(getattr(answer, "text", "") or ""), "question": s.question, "prompt": s.prompt,
            "t_eval_rel": s.t_eval_rel, "flags": list(getattr(answer, "flags", ()) or ())}


def summarize(results: Sequence[Mapping[str, Any]]) -> dict:
    recs = [r for res in results for r in res.get("records", [])]
    stepped = [r for r in recs if r["step_idx"] is not None and r["confidence"] is not None]
    xs = [r["step_idx"] for r in stepped] if stepped else [r["t_eval"] for r in recs if r["confidence"] is not None]
    ys = [r["confidence"] for r in (stepped or [r for r in recs if r["confidence"] is not None])]
    out = accuracy_table(recs, ("task", "step_idx", "state"))
    out.update({"mean_confidence": mean(r["confidence"] for r in recs), "mean_entropy": mean(r["entropy"] for r in recs),
                "confidence_slope": slope(xs, ys), "confidence_slope_over": "step_idx" if stepped else "t_eval"})
    return out
