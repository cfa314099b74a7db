"""`directme demo`: stream a simulator episode through the Agent and print accuracy per UCS-Bench subtask.

Perception is the oracle by default: the simulator's own ground truth (exact depth, camera poses, object
masks and labels, or seeded noise on them with ``--noise realistic``); no model runs, so the table measures
the memory, the question parser and the geometric answerer, not perception. ``--perception truth-fed``
runs the model pipeline itself (DA3 chunks and scale, Grounding DINO post-processing, SAM2 tracks, CLIP
tags) with each network's forward replaced by a stand-in that returns the ground truth in that network's
own output format: it measures whether the perception code carries geometry and identities end to end.
The questions are asked at their timestamps (strictly causal), beside two baselines on the same questions:
"current_frame" (a memory fed only the latest frame) and "chance" (the expected accuracy of a uniform random
choice: the mean of 1 / number of options)."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

DEFAULT_SEED = 0
DEFAULT_MINUTES = 3.0
DEFAULT_OUT = "out/demo.json"
CHANCE = "chance"  # the baseline whose per-question value is the probability of a uniform guess being right
TRUTH_FED_NOTE = ("perception: truth-fed = the model pipeline (depth_pose {depth_pose}, poses {poses}), each "
                  "network's forward replaced by the simulator's ground truth in that network's output format")
ORACLE_NOTE = ("perception: oracle = the simulator's ground truth (depth, poses, object masks and labels{noise}); "
               "no model runs, so this measures memory, question parsing and answering, not perception")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="episode seed (default %(default)s)")
    parser.add_argument("--minutes", type=float, default=DEFAULT_MINUTES, help="episode length (default %(default)s)")
    parser.add_argument("--noise", choices=("none", "realistic"), default="none", help="oracle perception noise preset")
    parser.add_argument("--perception", choices=("oracle", "truth-fed"), default="oracle",
                        help="oracle: the simulator's ground truth handed to the memory; truth-fed: the model "
                             "pipeline with ground-truth stand-ins for its networks (default %(default)s)")
    parser.add_argument("--depth-pose", default="default",
                        help="with --perception truth-fed: the DA3 preset (default: the default pipeline's)")
    parser.add_argument("--poses", choices=("none", "given"), default="none",
                        help="with --perception truth-fed: frames carry camera poses and intrinsics (given) or "
                             "only RGB, as a plain video (none; default)")
    parser.add_argument("--phrasings", choices=("templates", "dev"), default="templates",
                        help="ask the questions in the simulator's templates or in its development phrasings "
                             "(other words and object names, same answers; default %(default)s)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="per-question results JSON (default %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="print only the summary table")


def evaluate_episode(episode: Any, noise: str = "none", seed: int = 0, baselines: bool = True,
                     config: Optional[dict] = None, truth_fed: Optional[dict] = None) -> dict:
    """Run the agent over ``episode`` and score its questions; returns the demo's JSON record. Perception
    is the oracle with ``noise``, or, when ``truth_fed`` is a dict (TruthFedConfig options), the truth-fed
    model pipeline; perception that buffers frames (DA3 chunks) is flushed before each question, as a live
    assistant processes everything seen up to the moment it is asked."""
    from ..agent import Agent
    from ..config import oracle_config, truthfed_config

    cfg = oracle_config(noise, seed, config) if truth_fed is None else truthfed_config(truth_fed, seed, config)
    agent = Agent(cfg, episode=episode)
    questions = sorted(episode.questions, key=lambda q: q.t_s)
    frames = iter(episode.frames())
    pending = next(frames, None)
    last_fp = None
    records = []
    t_start = time.perf_counter()
    for q in questions:
        while pending is not None and pending.t_s <= q.t_s:  # causal: only frames up to the question time
            for fp in agent.perception.process(pending):
                agent.observe_perception(fp)
                last_fp = fp
            pending = next(frames, None)
        for fp in agent.perception.flush():
            agent.observe_perception(fp)
            last_fp = fp
        ans = agent.ask(q.text, t=q.t_s, options=q.options)
        rec = {"qid": q.qid, "time_s": q.t_s, "subtask": q.subtask, "question": q.text, "options": list(q.options),
               "chosen": ans.letter, "correct": q.answer, "confidence": round(ans.confidence, 4),
               "flags": list(ans.flags)}
        if q.qtype == "NUMBER":  # a measurement: scored by mean relative accuracy (bench.metrics)
            rec.update(value=ans.value, gt_value=float(q.meta["answer_value"]), unit=q.meta.get("unit", ""))
        if baselines:
            rec["baselines"] = {"current_frame": _current_frame_letter(cfg, last_fp, q),
                                CHANCE: 1.0 / len(q.options) if q.options else 0.0}
        records.append(rec)
    elapsed = time.perf_counter() - t_start
    out = summarise(records)
    out.update({"seed": seed, "noise": noise, "perception": "oracle" if truth_fed is None else "truth-fed",
                "n_frames": int(episode.n_frames), "duration_s": float(episode.duration_s),
                "wall_s": round(elapsed, 2), "questions": records})
    return out


def _current_frame_letter(cfg, fp, q) -> Optional[str]:
    """Baseline: a fresh memory that saw only the latest frame (<= t)."""
    from ..agent import Agent
    from ..perception.given import GivenPerception

    if fp is None:
        return None
    solo = Agent(cfg, perception=GivenPerception())  # unused: the frame's perception is given pre-computed
    solo.observe_perception(fp)
    return solo.ask(q.text, t=fp.t_s, options=q.options).letter


def _accuracy(records: list[dict], key) -> tuple[float, dict[str, float]]:
    """Mean accuracy overall and per subtask; ``key(record)`` is a letter (right when it is the correct
    one) or a number (the probability of being right, for the chance baseline)."""
    by: dict[str, list[float]] = {}
    for r in records:
        got = key(r)
        by.setdefault(r["subtask"], []).append(float(got) if isinstance(got, float) else float(got == r["correct"]))
    overall = float(np.mean([v for vs in by.values() for v in vs])) if by else 0.0
    return overall, {s: float(np.mean(v)) for s, v in sorted(by.items())}


def _score(r: dict):
    """A record's letter, or for a measurement its mean relative accuracy (a number, as the chance baseline's)."""
    from ..bench.metrics import mean_relative_accuracy

    return mean_relative_accuracy(r["value"], r["gt_value"]) if "gt_value" in r else r["chosen"]


def summarise(records: list[dict]) -> dict:
    overall, per = _accuracy(records, _score)
    out = {"overall": overall, "per_subtask": per, "n_questions": len(records),
           "counts": {s: sum(r["subtask"] == s for r in records) for s in per},
           "correct": {s: sum(float(_score(r)) if "gt_value" in r else r["chosen"] == r["correct"]
                              for r in records if r["subtask"] == s) for s in per}}
    if records and "baselines" in records[0]:
        out["baselines"], out["baselines_per_subtask"] = {}, {}
        for name in records[0]["baselines"]:
            b_overall, b_per = _accuracy(records, lambda r, n=name: r["baselines"][n])
            out["baselines"][name] = b_overall
            out["baselines_per_subtask"][name] = b_per
    return out


def format_table(res: dict) -> str:
    names = list(res.get("baselines", {}))
    head = f"{'subtask':42s} {'n':>4s} {'directme':>9s}" + "".join(f" {n:>14s}" for n in names)
    lines = [head, "-" * len(head)]
    for s, acc in res["per_subtask"].items():
        base = "".join(f" {100 * res['baselines_per_subtask'][n][s]:13.1f}%" for n in names)
        lines.append(f"{s:42s} {res['counts'][s]:4d} {100 * acc:8.1f}%{base}")
    base = "".join(f" {100 * res['baselines'][n]:13.1f}%" for n in names)
    lines.append(f"{'overall':42s} {res['n_questions']:4d} {100 * res['overall']:8.1f}%{base}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..sim import generate_episode

    t0 = time.perf_counter()
    episode = generate_episode(seed=args.seed, minutes=args.minutes, phrasings=args.phrasings)
    if not args.quiet:
        print(f"episode: seed={args.seed}, {args.minutes:g} min, {episode.n_frames} frames, "
              f"{len(episode.questions)} questions (generated in {time.perf_counter() - t0:.1f} s)")
    truth_fed = None
    if args.perception == "truth-fed":
        truth_fed = {"depth_pose": args.depth_pose, "poses": args.poses}
        print(TRUTH_FED_NOTE.format(depth_pose=args.depth_pose, poses=args.poses))
    else:
        print(ORACLE_NOTE.format(noise=", with seeded realistic noise" if args.noise == "realistic" else ", exact"))
    res = evaluate_episode(episode, noise=args.noise, seed=args.seed, truth_fed=truth_fed)
    print(format_table(res))
    print("baselines: current_frame = a memory fed only the latest frame; chance = the expected accuracy of a "
          "uniform random choice (mean of 1 / number of options)")
    label = f"noise={args.noise}" if truth_fed is None else "perception=truth-fed"
    print(f"{label} seed={args.seed}: streamed {res['n_frames']} frames and answered "
          f"{res['n_questions']} questions in {res['wall_s']:.1f} s")
    if args.out:
        path = Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(res, indent=1), encoding="utf-8")
        print(f"wrote {path}")
    return 0
