"""A fingerprint of everything the agent answers on simulator episodes, for proving that a refactor
changed no behaviour: streams each episode through the Agent (oracle perception) causally, asks every
question at its time and records letter, confidence, option scores, flags, answer text and the
rendered ego-frame subgraph.

    python benchmarks/answer_digest.py [--seeds 0 1 2] [--minutes 3] [--noise none realistic] [--out FILE]

Prints one ``seed=.. noise=.. questions=.. digest=..`` line per episode and, last, ``digest=<sha256>``
over all of them; ``--out`` writes the per-question records (JSON lines) so two runs can be diffed.
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from directme import Agent
from directme.config import oracle_config
from directme.sim import generate_episode


def episode_records(seed: int, minutes: float, noise: str) -> list[dict]:
    ep = generate_episode(seed=seed, minutes=minutes)
    agent = Agent(oracle_config(noise, seed), episode=ep)
    frames = iter(ep.frames())
    pending = next(frames, None)
    out = []
    for q in sorted(ep.questions, key=lambda q: q.t_s):
        while pending is not None and pending.t_s <= q.t_s:
            for fp in agent.perception.process(pending):
                agent.observe_perception(fp)
            pending = next(frames, None)
        a = agent.ask(q.text, t=q.t_s, options=q.options)
        scores = {k: round(float(v), 6) for k, v in (a.option_scores or {}).items()}
        out.append({"seed": seed, "noise": noise, "qid": q.qid, "t_s": q.t_s, "question": q.text,
                    "letter": a.letter, "confidence": round(float(a.confidence), 6), "scores": scores,
                    "flags": [str(f) for f in a.flags], "text": a.text, "subgraph": a.subgraph_text})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--noise", nargs="+", default=["none", "realistic"])
    ap.add_argument("--out", default=None, help="write the per-question records here (JSON lines)")
    a = ap.parse_args()
    total = hashlib.sha256()
    lines = []
    for seed in a.seeds:
        for noise in a.noise:
            recs = episode_records(seed, a.minutes, noise)
            blob = "\n".join(json.dumps(r, sort_keys=True) for r in recs)
            lines.append(blob)
            total.update(blob.encode())
            print(f"seed={seed} noise={noise} minutes={a.minutes:g} questions={len(recs)} "
                  f"digest={hashlib.sha256(blob.encode()).hexdigest()[:16]}", flush=True)
    if a.out:
        Path(a.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"digest={total.hexdigest()}")


if __name__ == "__main__":
    main()
