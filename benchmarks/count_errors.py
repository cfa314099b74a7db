"""Why Quantity Change answers are wrong: for each wrong count, what each counted object and node was.

    python benchmarks/count_errors.py [--seeds 0 1 2 3 4 5] [--minutes 10] [--noise realistic]

Streams each simulator episode through oracle perception into an Agent and asks its Quantity Change
questions at their times, as ``benchmarks/agent_accuracy.py`` does. Each node stands for the ground-truth
object most of its (and its merged nodes') detections came from (``sim.scoring.association_score``). For a
wrong answer, each object the question counts (present at the question, of the asked class, in the asked
room if one is named) that no counted node stands for is one of:

- ``never_reported``: the detector never reported it (no memory can count it);
- ``unmatched``: reported, but no node stands for it (its reports went into other objects' nodes);
- ``believed_gone``: its node's presence probability is below one half (views read it as gone);
- ``other_room``: its node is present but placed in another room;
- ``other_class``: its node is present but counted as another class.

and each counted node present with probability at least one half that stands for none of them is one of:

- ``false_detection``: no ground-truth object behind it;
- ``duplicate``: a second node of an object already counted;
- ``removed``: it stands for an object that is no longer in the scene (removed, or being carried);
- ``moved_elsewhere``: it stands for an object of the class that is now in another room;
- ``other_class_extra``: it stands for an object of another class;

and ``spread`` when neither kind is found: the counted nodes present with probability at least one half are exactly
the counted objects, and the less likely nodes (a false detection seen once, a half-believed removal) moved
the most likely count off the truth.

Every question, right or wrong, is also sorted by the moment it is asked at (what the stream can hold then):

- ``put_down_unreported``: an object of the asked class was put down by the wearer at most ``PUT_DOWN_S`` before
  the question and the detector has not reported it since: nothing in the stream shows its new place (the
  simulator does not show what the wearer carries, and asks as soon as the object is in view at its new place);
- ``removal_first_view``: the simulator first counts the removal of an object of the asked class as seen (its
  place in view, unoccluded: ``sim.generate.visibility``) in the question's frame or the one before: one view
  must read it gone, through the pose drift between that view and the place remembered;
- ``other``: neither.

The counted nodes are the answer's evidence (``Answer.evidence``: every node the count used). Prints one line
per seed, then ``by_time=`` (share right per quarter of the episode), ``over=`` / ``under=`` (wrong answers
above / below the truth), one ``cause=count`` line per cause, one ``moment_<kind>=right/questions`` line per
moment, and last ``quantity_change=<share right>``.
"""
from __future__ import annotations

import argparse
import math
from collections import Counter, defaultdict
from typing import Optional

import numpy as np

from directme.agent import Agent
from directme.config import oracle_config
from directme.query.options import parse_option
from directme.query.vocab import Vocabulary
from directme.sim import generate_episode
from directme.sim.generate import visibility
from directme.sim.scoring import association_score, gt_object

SUBTASK = "Quantity Change Tracking"
MISSING = ("never_reported", "unmatched", "believed_gone", "other_room", "other_class")
EXTRA = ("false_detection", "duplicate", "removed", "moved_elsewhere", "other_class_extra", "spread")
MOMENTS = ("put_down_unreported", "removal_first_view", "other")
PUT_DOWN_S = 5.0  # a put-down this recent, not reported since, leaves the question without its new place
_VOCAB = Vocabulary(include_objects365=False)  # counts are parsed before any label is looked up


def _option_number(option: str) -> Optional[int]:
    """The number a count option says ("Two." or "2"; None for another kind of option), read by the agent's parser."""
    return parse_option(option, _VOCAB).number


def _room(ep, position_w) -> str:
    return ep.layout.room_at(float(position_w[0]), float(position_w[1])).room_type


def removal_seen_s(ep) -> dict[int, float]:
    """Object id -> the first frame time at which the simulator counts its removal as seen."""
    poses = [f.T_world_cam for f in ep.frames_gt]
    times = np.array([f.t_s for f in ep.frames_gt])
    return visibility(ep.source, poses, times, ep.intrinsics, ep.objects)[1]


def moment(ep, label: str, t_s: float, reported_s: dict[int, list[float]], removals_s: dict[int, float]) -> str:
    """The kind of moment (``MOMENTS``) a question on ``label`` asked at ``t_s`` comes at."""
    frame_s = 1.0 / ep.fps
    if any(e.kind == "putdown" and e.label == label and t_s - PUT_DOWN_S <= e.t_s <= t_s
           and not any(e.t_s <= r <= t_s for r in reported_s.get(e.object_id, ())) for e in ep.events):
        return "put_down_unreported"
    if any(o.label == label and t_s - frame_s - 1e-6 <= removals_s.get(o.object_id, -math.inf) <= t_s
           for o in ep.objects):
        return "removal_first_view"
    return "other"


def census(ep, noise: str, seed: int) -> list[dict]:
    """Per Quantity Change question of ``ep`` (by time): its time, truth, the count said (None: no letter),
    whether it is right, the moment it is asked at (``MOMENTS``), and Counter of causes (empty when right)."""
    removals_s = removal_seen_s(ep)
    reported_s: dict[int, list[float]] = defaultdict(list)  # GT object id -> times the detector reported it
    agent = Agent(oracle_config(noise, seed), episode=ep)
    mem = agent.memory
    votes: dict[str, Counter] = defaultdict(Counter)  # node id -> GT object id -> detections
    frames = iter(ep.frames())
    frame = next(frames, None)
    rows = []
    for q in sorted((q for q in ep.questions if q.subtask == SUBTASK), key=lambda q: q.t_s):
        while frame is not None and frame.t_s <= q.t_s:
            for fp in agent.perception.process(frame):
                agent.observe_perception(fp)
                for inst in fp.instances:
                    g = gt_object(inst.track_id)
                    if g is not None:
                        reported_s[g].append(fp.t_s)
                    rec = mem.objects.tracked(inst.track_id)
                    if rec is not None and rec.obs_t and rec.obs_t[-1] == fp.t_s:  # matched in this frame
                        votes[rec.node_id][g] += 1
            frame = next(frames, None)
        answer = agent.ask(q.text, t=q.t_s, options=q.options)
        truth = int(q.meta["answer_value"])
        said = None if answer.letter is None else _option_number(q.options[ord(answer.letter) - ord("A")])
        label, room = q.meta["gt"]["label"], q.meta["gt"].get("room")
        row = {"t_s": q.t_s, "truth": truth, "said": said, "right": answer.letter == q.answer, "causes": Counter(),
               "moment": moment(ep, label, q.t_s, reported_s, removals_s)}
        rows.append(row)
        if row["right"]:
            continue
        snap = mem.as_of(q.t_s)
        node_gt = association_score(mem, votes).node_gt
        counted = [e.node_id for e in answer.evidence if e.detail.startswith("counted")
                   and e.node_id in snap.objects and snap.objects[e.node_id].presence_p >= 0.5]
        wanted = {o.object_id: o for o in ep.objects if o.label == label and o.present_at(q.t_s)
                  and (room is None or _room(ep, o.position_at(q.t_s)) == room)}
        covered: set[int] = set()
        for nid in counted:
            g = node_gt.get(nid)
            if g in wanted and g not in covered:
                covered.add(g)
            elif g in wanted:
                row["causes"]["duplicate"] += 1
            elif g is None:
                row["causes"]["false_detection"] += 1
            else:
                o = ep.object(g)
                row["causes"]["other_class_extra" if o.label != label else
                              "removed" if not o.present_at(q.t_s) else "moved_elsewhere"] += 1
        reported = {g for c in votes.values() for g in c}
        for g in set(wanted) - covered:
            nodes = [snap.objects[n] for n, gg in node_gt.items() if gg == g and n in snap.objects]
            if g not in reported:
                row["causes"]["never_reported"] += 1
            elif not nodes:
                row["causes"]["unmatched"] += 1
            elif not any(n.presence_p >= 0.5 for n in nodes):
                row["causes"]["believed_gone"] += 1
            elif not any(n.label == label for n in nodes):
                row["causes"]["other_class"] += 1
            else:
                row["causes"]["other_room"] += 1
        if not row["causes"]:
            row["causes"]["spread"] = 1
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--noise", default="realistic")
    args = ap.parse_args()
    every: list[dict] = []
    for seed in args.seeds:
        ep = generate_episode(seed=seed, minutes=args.minutes)
        rows = census(ep, args.noise, seed)
        every += [dict(r, t_frac=r["t_s"] / max(ep.duration_s, 1e-9)) for r in rows]
        causes = sum((r["causes"] for r in rows), Counter())
        print(f"seed={seed} questions={len(rows)} right={sum(r['right'] for r in rows)} "
              + " ".join(f"{k}={causes[k]}" for k in MISSING + EXTRA if causes[k]), flush=True)
    quarters = defaultdict(list)
    for r in every:
        quarters[min(int(r["t_frac"] * 4), 3)].append(r["right"])
    print("by_time=" + ",".join(f"{sum(quarters[k]) / len(quarters[k]):.3f}" if quarters[k] else "-" for k in range(4)))
    wrong = [r for r in every if not r["right"] and r["said"] is not None]
    print(f"over={sum(r['said'] > r['truth'] for r in wrong)}")
    print(f"under={sum(r['said'] < r['truth'] for r in wrong)}")
    causes = sum((r["causes"] for r in every), Counter())
    for k in MISSING + EXTRA:
        print(f"{k}={causes[k]}")
    for k in MOMENTS:
        rows_k = [r for r in every if r["moment"] == k]
        print(f"moment_{k}={sum(r['right'] for r in rows_k)}/{len(rows_k)}")
    print(f"quantity_change={sum(r['right'] for r in every) / max(len(every), 1):.3f}")


if __name__ == "__main__":
    main()
