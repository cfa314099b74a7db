"""Ablation of the answerers on simulator questions: geometric vs MLLM vs the combined policy
(fallback and hint modes), same episode, same oracle perception, same questions.

    python benchmarks/ablation_answerers.py                      # tiny random Qwen3-VL (plumbing only)
    python benchmarks/ablation_answerers.py --model /models/Qwen3-VL-8B-Instruct
    python benchmarks/ablation_answerers.py --openai-base-url http://127.0.0.1:8000/v1 --openai-model Qwen/Qwen3-VL-8B-Instruct

Prints ``name=value`` lines. With the default tiny random model the MLLM's accuracy is chance
level by construction: it measures the plumbing and the policy's routing, not a real model.
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np


def variants(mllm: str, mllm_options: dict, threshold: float) -> dict[str, dict]:
    policy = {"mllm": mllm, "mllm_options": mllm_options, "threshold": threshold}
    return {"geometric": {"name": "geometric"},
            "mllm": {"name": mllm, "options": mllm_options},
            "policy_fallback": {"name": "policy", "options": {**policy, "mode": "fallback"}},
            "policy_hint": {"name": "policy", "options": {**policy, "mode": "hint"}}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--minutes", type=float, default=1.0, help="episode length (default %(default)s)")
    ap.add_argument("--model", default="", help="local VL checkpoint directory or cached HF repo id")
    ap.add_argument("--family", default="qwen3_vl", choices=("qwen2_5_vl", "qwen3_vl"),
                    help="tiny random family built when neither --model nor --openai-base-url is given")
    ap.add_argument("--openai-base-url", default="", help="use an OpenAI-compatible server instead")
    ap.add_argument("--openai-model", default="")
    ap.add_argument("--threshold", type=float, default=0.6, help="policy: geometric confidence threshold")
    args = ap.parse_args()

    from directme.answerers.policy import UNTRUSTED_FLAGS
    from directme.commands.demo import evaluate_episode
    from directme.sim import generate_episode

    tmp = None
    if args.openai_base_url:
        mllm, opts, what = "openai", {"base_url": args.openai_base_url, "model": args.openai_model}, "openai"
    elif args.model:
        mllm, opts, what = "transformers", {"model": args.model}, "weights"
    else:
        from directme.answerers.tiny import build_tiny_vl

        tmp = tempfile.TemporaryDirectory(prefix="directme-ablation-")
        mllm, opts, what = "transformers", {"model": str(build_tiny_vl(args.family, tmp.name))}, "tiny_random"
    print(f"mllm_backend={mllm}")
    print(f"mllm_weights={what}")
    if what == "tiny_random":
        print("note=the MLLM is a tiny RANDOM model: its accuracy is chance level and meaningless; "
              "this run checks plumbing and policy routing only. Pass --model or --openai-base-url for real numbers.")
    episode = generate_episode(seed=args.seed, minutes=args.minutes)
    print(f"episode_seed={args.seed}")
    print(f"n_questions={len(episode.questions)}")
    untrusted = set(UNTRUSTED_FLAGS)
    for name, answerer in variants(mllm, opts, args.threshold).items():
        t0 = time.perf_counter()
        res = evaluate_episode(episode, seed=args.seed, baselines=False,
                               config={"query": {"embedder": "string"}, "answerer": answerer})
        wall = time.perf_counter() - t0
        print(f"accuracy_{name}={res['overall']:.4f}")
        if name == "geometric":  # the fallback policy sends exactly these questions to the MLLM
            routed = [r["chosen"] is None or r["confidence"] < args.threshold or bool(set(r["flags"]) & untrusted)
                      for r in res["questions"]]
            print(f"mllm_share_policy_fallback={float(np.mean(routed)) if routed else 0.0:.4f}")
        print(f"wall_s_{name}={wall:.2f}")
        for subtask, acc in res["per_subtask"].items():
            key = subtask.lower().replace(" & ", "_").replace(" ", "_").replace("-", "_")
            print(f"accuracy_{name}.{key}={acc:.4f}")
        conf = [r["confidence"] for r in res["questions"]]
        print(f"mean_confidence_{name}={float(np.mean(conf)) if conf else 0.0:.4f}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
