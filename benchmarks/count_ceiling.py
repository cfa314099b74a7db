"""How many Quantity Change questions can any memory answer, given what the (noisy oracle) detector reported?

    python benchmarks/count_ceiling.py [--seeds 0 1 2 3 4 5] [--minutes 10] [--noise realistic]

A count question needs every object it counts (present at the question, of the asked class, in the asked
room if one is named) to have been reported by the detector with its own label since it was last placed.
Per question, each such object is:
- ``never``: never reported with its own label since it was placed (the detector missed it in every
  frame it showed, or gave it another class): no memory can count it; the answer is right only by luck;
- ``weak``: reported exactly once, with a score no higher than the preset's false positives reach: one
  such report is no better evidence than a false positive's, so a memory can only guess.

Prints one line per seed and, last, ``ceiling=`` (share of questions with no ``never`` object) and
``ceiling_without_weak=`` (with neither). The memory's accuracy on the same episodes
(``benchmarks/agent_accuracy.py``) is bounded by the first and, except by luck, by the second.
"""
from __future__ import annotations

import argparse
from typing import Union

from directme.sim import generate_episode
from directme.sim.oracle import NoisePreset, OraclePerception, get_preset
from directme.sim.scoring import gt_object

SUBTASK = "Quantity Change Tracking"


def classify(ep, noise: Union[str, NoisePreset], seed: int) -> list[str]:
    """One of "ok", "weak", "never" per Quantity Change question of the episode (question order by time)."""
    oracle = OraclePerception(ep, noise=noise, seed=seed)
    fp_max = get_preset(noise).false_positive_score_range[1]
    reports: dict[int, list[tuple[float, str, float]]] = {}  # GT object -> (t, label, score) of its reports
    frames = iter(ep.frames())
    frame = next(frames, None)
    out = []
    for q in sorted((q for q in ep.questions if q.subtask == SUBTASK), key=lambda q: q.t_s):
        while frame is not None and frame.t_s <= q.t_s:
            for inst in oracle.perceive(frame).instances:
                g = gt_object(inst.track_id)
                if g is not None:
                    reports.setdefault(g, []).append((frame.t_s, inst.label, float(inst.score)))
            frame = next(frames, None)
        gt = dict(q.meta.get("gt") or {})
        verdict = "ok"
        for o in ep.objects:
            if o.label != gt.get("label") or not o.present_at(q.t_s):
                continue
            if gt.get("room"):
                c = o.position_at(q.t_s)
                room = ep.layout.room_at(c[0], c[1]) if c is not None else None
                if room is None or room.room_type != gt["room"]:
                    continue
            placed = max(t for t, c in o.positions_w if t <= q.t_s)
            own = [s for t, lab, s in reports.get(o.object_id, []) if t >= placed and lab == o.label]
            if not own:
                verdict = "never"
                break
            if len(own) == 1 and own[0] <= fp_max:
                verdict = "weak"
        out.append(verdict)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--noise", default="realistic")
    args = ap.parse_args()
    n = never = weak = 0
    for seed in args.seeds:
        v = classify(generate_episode(seed=seed, minutes=args.minutes), args.noise, seed)
        n, never, weak = n + len(v), never + v.count("never"), weak + v.count("weak")
        print(f"seed={seed} minutes={args.minutes:g} noise={args.noise} questions={len(v)} "
              f"never_reported={v.count('never')} weak={v.count('weak')}", flush=True)
    print(f"questions={n} never_reported={never} weak={weak}")
    print(f"ceiling={1 - never / max(n, 1):.3f}")
    print(f"ceiling_without_weak={1 - (never + weak) / max(n, 1):.3f}")


if __name__ == "__main__":
    main()
