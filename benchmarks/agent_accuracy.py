"""The agent issue's accuracy targets, measured: simulator episodes through the Agent with oracle
perception (noise ``none`` and ``realistic``), pooled over seeds, beside the demo's baselines.

    python benchmarks/agent_accuracy.py [--seeds 0 1 2] [--minutes 3] [--phrasings templates|dev|heldout]

Prints a per-subtask table, then ``overall_realistic=<acc>`` and, last, ``overall_none=<acc>``.
``--phrasings`` asks the same questions in other words (sim/questions.py): ``dev`` phrasings are for
development; ``heldout`` phrasings are reserved for this benchmark and only read in aggregate.
"""
from __future__ import annotations

import argparse

from directme.commands.demo import evaluate_episode, summarise
from directme.sim import generate_episode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--phrasings", default="templates", choices=("templates", "dev", "heldout"),
                    help="the words the simulator asks its questions in (default %(default)s)")
    a = ap.parse_args()
    runs = {"none": [], "realistic": []}
    for seed in a.seeds:
        ep = generate_episode(seed=seed, minutes=a.minutes, phrasings=a.phrasings)
        for noise in runs:
            r = evaluate_episode(ep, noise, seed, baselines=noise == "none")
            runs[noise].extend(r["questions"])
            print(f"seed={seed} noise={noise} phrasings={a.phrasings} overall={r['overall']:.3f} "
                  f"questions={r['n_questions']} abstained={sum('abstained' in q['flags'] for q in r['questions'])}",
                  flush=True)
    res = {n: summarise(q) for n, q in runs.items()}
    base = res["none"]["baselines_per_subtask"]
    print(f"{'subtask':40s} {'n':>4s} {'none':>7s} {'realist':>7s} {'cur_frm':>7s} {'random':>7s}")
    for s, acc in res["none"]["per_subtask"].items():
        print(f"{s:40s} {res['none']['counts'][s]:4d} {acc:7.3f} {res['realistic']['per_subtask'][s]:7.3f} "
              f"{base['current_frame'][s]:7.3f} {base['random'][s]:7.3f}")
    for name, acc in res["none"]["baselines"].items():
        print(f"baseline_{name}={acc:.3f}")
    print(f"overall_realistic={res['realistic']['overall']:.3f}")
    print(f"overall_none={res['none']['overall']:.3f}")


if __name__ == "__main__":
    main()
