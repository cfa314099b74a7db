"""Is an answer's confidence the probability that it is right? Expected calibration error (ECE) and a
reliability table over the simulator's questions (answered ones only, the abstention rate beside them), plus
a set of unanswerable questions - objects never shown, rooms never entered - that should be abstained on or
answered "not in memory", never confidently.

    python benchmarks/calibration.py [--seeds 500 501 502] [--minutes 10] [--noise none realistic]
                                     [--bins 10] [--png out/calibration.png] [--names dev|heldout]
    python benchmarks/calibration.py --fit directme/data/answer_calibration.json --seeds 100 101 102 103 104 105

``--fit FILE`` answers with raw confidences (calibration "none"), fits one logistic map per kind of question
on the answered questions of all the noises given (directme/answerers/calibration.py) and writes FILE, with
the episodes it saw (answers flagged for want of evidence left out, as the answerer leaves them unmapped);
without it the agent answers with the packaged maps (``--calibration`` to change).
``--names``: the set of never-shown objects and never-entered places to ask about (``dev``, used while
building the parser's place words and matching rules, or ``heldout``, kept apart to measure them).

Streams each episode through the Agent (oracle perception) causally and asks every question at its time,
as benchmarks/answer_digest.py does; the unanswerable questions are asked at a third, two thirds and the end
of each episode. Prints per noise ``ece=.. answered=.. abstained=..`` with the reliability table (confidence
bin, questions, mean confidence, accuracy), then ``unanswerable: n=.. abstained_or_missing=.. max_confidence=..``,
and writes a reliability diagram (matplotlib) to ``--png``.
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from directme import Agent
from directme.answerers.calibration import UNCALIBRATED_FLAGS, fit_calibration
from directme.config import oracle_config
from directme.query.intent import parse_question
from directme.sim import generate_episode
from directme.sim.catalog import ROOM_TYPES
from directme.types import Flag

# objects not in the simulator's catalog and places not among its room types
NAMES = {"dev": (("giraffe", "saxophone", "surfboard", "canoe"), ("garage", "sauna", "attic")),
         "heldout": (("kayak", "trombone", "zebra", "anvil", "hammock"),
                     ("sunroom", "chapel", "sewing room", "wine cellar"))}
DIRECTIONS = ["It is in front of you.", "It is on your left.", "It is behind you.", "It is on your right."]


def unanswerable(x: str, room: str, known: str) -> list[tuple[str, list[str]]]:
    """Questions about an object never shown (``x``) or a room never entered, with options as the simulator
    asks them; ``known`` is an object in memory (the other side of a comparison)."""
    rooms = [f"The {r}." for r in ROOM_TYPES[:4]]
    return [(f"Where is the {x} now?", DIRECTIONS), (f"Can I reach the {x} now?", ["Yes.", "No."]),
            (f"Which is closer to me now, the {x} or the {known}?", [f"The {x}.", f"The {known}."]),
            (f"How far is the {x} from me?", ["1 m", "2 m", "4 m", "8 m"]), (f"Which room is the {x} in?", rooms),
            (f"Is the {x} to the left of the {known}?", ["Yes.", "No."]),
            (f"How many chairs are in the {room}?", ["0", "1", "2", "3"]),
            (f"Which room was I in before I entered the {room}?", rooms)]


def episode_records(seed: int, minutes: float, noise: str, names: str = "dev", calibration: str = "packaged",
                    fit: bool = False) -> tuple[list[tuple[str, float, bool]], int, list]:
    """(kind, confidence, correct) of each answered question, the number abstained on, and the unanswerable
    answers."""
    ep = generate_episode(seed=seed, minutes=minutes)
    cfg = oracle_config(noise, seed)
    cfg = replace(cfg, answerer=replace(cfg.answerer, options={**dict(cfg.answerer.options), "calibration": calibration}))
    agent = Agent(cfg, episode=ep)
    never_shown, never_entered = NAMES[names]
    frames, pending = iter(ep.frames()), None
    pending = next(frames, None)
    n = len(ep.frames_gt)
    probes = [ep.frames_gt[max(int(n * f) - 1, 0)].t_s for f in (1 / 3, 2 / 3, 1.0)]  # at frame times
    asks = sorted([(q.t_s, q) for q in ep.questions] + [(t, None) for t in probes], key=lambda a: a[0])
    answered, n_abstained, hard = [], 0, []
    for k, (t, q) in enumerate(asks):
        while pending is not None and pending.t_s <= t:
            for fp in agent.perception.process(pending):
                agent.observe_perception(fp)
            pending = next(frames, None)
        if q is None:
            labels = sorted({n.label.lower() for n in agent.memory.as_of(t).objects.values() if "/" not in n.label})
            x, room = never_shown[k % len(never_shown)], never_entered[k % len(never_entered)]
            hard += [agent.ask(text, t=t, options=opts) for text, opts in unanswerable(x, room, labels[0])]
            continue
        a = agent.ask(q.text, t=q.t_s, options=q.options)
        if a.abstained:
            n_abstained += 1
        elif fit and UNCALIBRATED_FLAGS & set(a.flags):
            continue  # stated at a fixed confidence for want of evidence: not what the maps are fitted on
        else:
            answered.append((parse_question(q.text, q.options).primitive.value, float(a.confidence),
                             a.letter == q.answer))
    return answered, n_abstained, hard


def reliability(pairs: list[tuple[str, float, bool]], bins: int) -> tuple[float, list[tuple[float, float, int, float, float]]]:
    """ECE and rows (bin low, bin high, n, mean confidence, accuracy) over equal-width confidence bins."""
    conf = np.array([c for _, c, _ in pairs])
    ok = np.array([o for _, _, o in pairs], dtype=float)
    idx = np.minimum((conf * bins).astype(int), bins - 1)
    rows, ece = [], 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            rows.append((b / bins, (b + 1) / bins, int(sel.sum()), float(conf[sel].mean()), float(ok[sel].mean())))
            ece += sel.mean() * abs(conf[sel].mean() - ok[sel].mean())
    return float(ece), rows


def plot(tables: dict[str, list], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 4.5), dpi=100)
    ax.plot([0, 1], [0, 1], color="0.6", ls="--", lw=1, label="perfect calibration")
    for noise, rows in tables.items():
        ax.plot([r[3] for r in rows], [r[4] for r in rows], marker="o", label=f"{noise} (bins with questions)")
    ax.set_xlabel("mean confidence in bin")
    ax.set_ylabel("accuracy in bin")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("reliability of answered simulator questions", fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[500, 501, 502])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--noise", nargs="+", default=["none", "realistic"])
    ap.add_argument("--bins", type=int, default=10)
    ap.add_argument("--png", default="out/calibration.png")
    ap.add_argument("--names", choices=sorted(NAMES), default="dev")
    ap.add_argument("--calibration", default="packaged", help="'packaged', 'none' or a fitted file")
    ap.add_argument("--fit", metavar="FILE", help="fit the maps on these episodes (raw confidences) and write FILE")
    a = ap.parse_args()
    tables, hard, records = {}, [], []
    for noise in a.noise:
        pairs, n_abst = [], 0
        for seed in a.seeds:
            answered, abst, h = episode_records(seed, a.minutes, noise, a.names, "none" if a.fit else a.calibration,
                                              bool(a.fit))
            pairs += answered
            n_abst += abst
            hard += h
        records += pairs
        ece, rows = reliability(pairs, a.bins)
        tables[noise] = rows
        n = len(pairs) + n_abst
        print(f"noise={noise} seeds={' '.join(map(str, a.seeds))} minutes={a.minutes:g} ece={ece:.4f} "
              f"answered={len(pairs)} abstained={n_abst} abstention_rate={n_abst / max(n, 1):.3f} "
              f"accuracy_answered={np.mean([o for _, _, o in pairs]):.3f}")
        print(f"{'confidence':>12} {'n':>5} {'mean_conf':>9} {'accuracy':>8}")
        for lo, hi, k, c, acc in rows:
            print(f"{lo:5.1f}-{hi:<5.1f} {k:5d} {c:9.3f} {acc:8.3f}")
    declined = [h.abstained or Flag.MISSING_OBJECT in h.flags for h in hard]
    confident = [h.confidence for h, d in zip(hard, declined) if not d]
    print(f"unanswerable: n={len(hard)} abstained_or_missing={np.mean(declined):.3f} "
          f"answered={len(confident)} max_confidence_answered={max(confident, default=0.0):.3f} "
          f"max_confidence_all={max((h.confidence for h in hard), default=0.0):.3f}")
    for h, d in zip(hard, declined):
        if not d:
            print(f"  answered: {h.question!r} -> {h.text!r} confidence {h.confidence:.2f}")
    plot(tables, Path(a.png))
    print(f"png={a.png}")
    if a.fit:
        fitted = fit_calibration(records, f"benchmarks/calibration.py --fit: oracle perception, seeds "
                                          f"{' '.join(map(str, a.seeds))}, {a.minutes:g} min, noise {' '.join(a.noise)}")
        Path(a.fit).write_text(fitted.to_json() + "\n", encoding="utf-8")
        for kind, m in fitted.kinds.items():
            print(f"fit kind={kind} answers={m.answers} slope={m.slope:.3f} intercept={m.intercept:.3f}")
        print(f"fit={a.fit}")


if __name__ == "__main__":
    main()
