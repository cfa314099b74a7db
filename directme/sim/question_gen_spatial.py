"""Ground-truth questions of the measurement kinds (sim/questions.py SPATIAL_TEMPLATES): an object's longest
dimension, a room's floor area, the first-appearance order of categories, the turns of a route between objects,
the distance between two objects' closest points and the count of a category in the wearer's room.

Every answer comes from the simulator's own geometry (object boxes, room rectangles, the first frame showing an
object, the route's turns), only about what the wearer has seen by the question time. Drawn on their own random
stream, after the other questions, so that asking them changes none of the others."""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..types import OPTION_LETTERS, Question
from .catalog import CORRIDOR, spoken
from .episode import Episode, ObjectGT
from .qstate import Observations
from . import questions as Q

MIN_T_S = 30.0  # no measurement question before this time
STEP_S = 5.0  # candidate question times are this far apart


@dataclass
class SpatialCand:
    """A question candidate: ``key`` identifies it (asked once), ``value`` the numeric answer or ``options`` (the
    right one first) for multiple choice."""

    key: tuple
    fmt: dict
    value: Optional[float] = None
    options: list = field(default_factory=list)
    object_ids: tuple = ()


def box_distance_m(ca: np.ndarray, sa: np.ndarray, cb: np.ndarray, sb: np.ndarray) -> float:
    """Distance between the closest points of two axis-aligned boxes (centre, size); 0 when they touch."""
    gap = np.maximum(np.abs(np.asarray(ca) - np.asarray(cb)) - (np.asarray(sa) + np.asarray(sb)) / 2, 0.0)
    return float(np.linalg.norm(gap))


def turn_of(prev_xy: np.ndarray, here_xy: np.ndarray, next_xy: np.ndarray) -> tuple[str, float]:
    """The turn at ``here`` from the heading prev -> here to here -> next: (turn word, signed angle in degrees,
    + to the left); "turn back" beyond 135 deg, "" (straight on) within 45 deg."""
    a, b = np.asarray(here_xy) - prev_xy, np.asarray(next_xy) - here_xy
    ang = math.degrees(math.atan2(a[0] * b[1] - a[1] * b[0], float(a @ b)))
    if abs(ang) > 135.0:
        return "turn back", ang
    if abs(ang) < 45.0:
        return "", ang
    return ("turn left" if ang > 0 else "turn right"), ang


def _turn_clear(ang: float) -> bool:
    m = Q.TURN_MARGIN_DEG
    return 45.0 + m <= abs(ang) <= 135.0 - m or abs(ang) >= 135.0 + m


def measurable(obs: Observations, k: int) -> list[tuple[ObjectGT, np.ndarray]]:
    """Objects with one instance seen and present, at a place seen since it last moved, in enough frames."""
    out = []
    for o in obs.seen_objects(k):
        c = obs.known_position(o, k)
        n_seen = sum(1 for f in obs.seen[o.object_id] if f <= k)
        if c is not None and obs.unique_label(o, k) and n_seen >= Q.SPATIAL_MIN_SEEN_FRAMES:
            out.append((o, c))
    return out


def _room_of(obs: Observations, c: np.ndarray):
    return obs.ep.layout.room_at(float(c[0]), float(c[1]))


def _object_size(obs, k, rng, known) -> list[SpatialCand]:
    return [SpatialCand(("object_size", o.object_id), {"obj": spoken(o.label), "objs": spoken(o.label, True)},
                        100.0 * max(o.size_m), object_ids=(o.object_id,)) for o, _ in known]


def _stay_s(obs: Observations, k: int, room_id: int) -> float:
    return float(np.sum(obs.rooms[:k + 1] == room_id)) / obs.ep.fps


def _room_size(obs, k, rng, known) -> list[SpatialCand]:
    out = []
    room = obs.ep.layout.room(int(obs.rooms[k]))
    if room.room_type != CORRIDOR and _stay_s(obs, k, room.room_id) >= Q.ROOM_MIN_STAY_S:
        area = (room.x1 - room.x0) * (room.y1 - room.y0)
        out.append(SpatialCand(("room_size", room.room_id, k // int(60 * obs.ep.fps)), {}, area))
    for o, c in known:
        r = _room_of(obs, c)
        if r is not None and r.room_type != CORRIDOR and r.room_id != room.room_id and \
                _stay_s(obs, k, r.room_id) >= Q.ROOM_MIN_STAY_S:
            out.append(SpatialCand(("room_size_of", o.object_id), {"obj": spoken(o.label)},
                                   (r.x1 - r.x0) * (r.y1 - r.y0), object_ids=(o.object_id,)))
    return out


def _abs_distance(obs, k, rng, known) -> list[SpatialCand]:
    out = []
    for i, (a, ca) in enumerate(known):
        for b, cb in known[i + 1:]:
            if a.label == b.label:
                continue
            d = box_distance_m(ca, a.size_m, cb, b.size_m)
            if d >= Q.SPATIAL_MIN_DISTANCE_M:
                out.append(SpatialCand(("abs_distance", a.object_id, b.object_id),
                                       {"a": spoken(a.label), "b": spoken(b.label)}, d,
                                       object_ids=(a.object_id, b.object_id)))
    return out


def _count_here(obs, k, rng, known) -> list[SpatialCand]:
    """Counts of a class in the wearer's room, for classes whose every instance is accounted for (as in the
    count questions of question_gen.py) and with at least one in the room."""
    t = obs.t_of(k)
    room = obs.ep.layout.room(int(obs.rooms[k]))
    if room.room_type == CORRIDOR:
        return []
    by_label: dict[str, list[ObjectGT]] = {}
    for o in obs.ep.objects:
        if o.present[0][0] <= t:
            by_label.setdefault(o.label, []).append(o)
    out = []
    for label, objs in sorted(by_label.items()):
        known_all = True
        for o in objs:
            if o.present_at(t):
                known_all &= obs.known_position(o, k) is not None
            elif obs.glimpsed_by(o.object_id, k):
                known_all &= obs.removal_seen.get(o.object_id, math.inf) <= t
        here = [o for o in objs if o.present_at(t) and _room_of(obs, o.position_at(t)).room_id == room.room_id]
        if known_all and here:
            out.append(SpatialCand(("count_here", label, room.room_id), {"obj": spoken(label),
                                                                         "objs": spoken(label, True)},
                                   float(len(here)), object_ids=tuple(o.object_id for o in here)))
    return out


def _appearance_order(obs, k, rng, known) -> list[SpatialCand]:
    """Four categories seen by now, first shown (any instance, any pixel) at clearly different times, in order;
    three other orders as the wrong options."""
    first: dict[str, int] = {}  # the first frame showing any instance (a pixel of the visibility pass)
    for o in obs.ep.objects:
        if obs.last_seen(o.object_id, k) >= 0:
            f = obs.glimpsed_first[o.object_id]
            first[o.label] = min(first.get(o.label, f), f)
    labels = sorted(first)
    if len(labels) < 4:
        return []
    out = []
    for _ in range(3):
        pick = [labels[i] for i in rng.choice(len(labels), 4, replace=False)]
        times = sorted(first[lb] / obs.ep.fps for lb in pick)
        if min(np.diff(times)) < Q.APPEARANCE_MARGIN_S:
            continue
        order = sorted(pick, key=lambda lb: first[lb])
        others: list[tuple] = []
        while len(others) < 3:
            perm = tuple(order[i] for i in rng.permutation(4))
            if perm != tuple(order) and perm not in others:
                others.append(perm)
        names = [spoken(lb) for lb in pick]
        out.append(SpatialCand(("appearance_order", *sorted(pick)), {"cats": ", ".join(names)},
                               options=[tuple(order)] + others))
    return out


def _route_plan(obs, k, rng, known) -> list[SpatialCand]:
    """Routes start -> facing -> (waypoint ->) end between objects of one room, each turn clear of a boundary."""
    by_room: dict[int, list[tuple[ObjectGT, np.ndarray]]] = {}
    for o, c in known:
        r = _room_of(obs, c)
        if r is not None and r.room_type != CORRIDOR:
            by_room.setdefault(r.room_id, []).append((o, c))
    out = []
    for room_id, objs in sorted(by_room.items()):
        for _ in range(4):
            n = 4 if len(objs) >= 4 and rng.random() < 0.7 else 3
            if len(objs) < n:
                break
            route = [objs[i] for i in rng.choice(len(objs), n, replace=False)]
            xy = [c[:2] for _, c in route]
            if min(np.linalg.norm(b - a) for a, b in zip(xy, xy[1:])) < 1.0:
                continue
            turns = [turn_of(xy[i - 1], xy[i], xy[i + 1]) for i in range(1, n - 1)]
            if not all(w and _turn_clear(a) for w, a in turns):
                continue
            right = tuple(w for w, _ in turns)
            combos = [c for c in _turn_sequences(n - 2) if c != right]
            others = [combos[i] for i in rng.choice(len(combos), min(3, len(combos)), replace=False)]
            names = [spoken(o.label) for o, _ in route]
            steps, s = [Q.ROUTE_STEP_FORWARD.format(n=1, obj=names[1])], 2
            for name in names[2:]:
                steps += [Q.ROUTE_STEP_FILL.format(n=s), Q.ROUTE_STEP_FORWARD.format(n=s + 1, obj=name)]
                s += 2
            out.append(SpatialCand(("route_plan", *(o.object_id for o, _ in route)),
                                   {"start": names[0], "facing": names[1], "end": names[-1], "route": " ".join(steps)},
                                   options=[right] + [tuple(o) for o in others],
                                   object_ids=tuple(o.object_id for o, _ in route)))
    return out


def _turn_sequences(n: int) -> list[tuple[str, ...]]:
    seqs: list[tuple[str, ...]] = [()]
    for _ in range(n):
        seqs = [s + (t,) for s in seqs for t in Q.TURNS]
    return seqs


GENERATORS: dict[str, Callable] = {
    "object_size": _object_size, "room_size": _room_size, "appearance_order": _appearance_order,
    "route_plan": _route_plan, "abs_distance": _abs_distance, "count_here": _count_here,
}


def option_text(kind: str, value: tuple) -> str:
    """An option's words: an order of categories, or a route's turns."""
    if kind == "appearance_order":
        return ", ".join(spoken(lb) for lb in value)
    return ", ".join(t.title() for t in value)  # routes: "Turn Left, Turn Back"


def generate_spatial_questions(ep: Episode, rng: np.random.Generator, phrasings: str = "templates") -> list[Question]:
    """About ``SPATIAL_QUESTIONS_PER_MINUTE`` questions per kind and minute, each asked once, at whole seconds."""
    obs = Observations(ep)
    ks = sorted({k for k in (ep.frame_index_at(t) for t in np.arange(MIN_T_S, ep.duration_s, STEP_S))
                 if float(ep.frames_gt[k].t_s).is_integer()})
    quota = max(2, int(round(Q.SPATIAL_QUESTIONS_PER_MINUTE * ep.duration_s / 60.0)))
    out: list[Question] = []
    occurrences: dict[str, dict[tuple, list[tuple[int, SpatialCand]]]] = {kind: {} for kind in GENERATORS}
    for k in ks:
        known = measurable(obs, k)
        for kind, gen in GENERATORS.items():
            for c in gen(obs, k, rng, known):
                occurrences[kind].setdefault(c.key, []).append((k, c))
    for kind, by_key in occurrences.items():
        keys = list(by_key)
        for i in rng.permutation(len(keys))[:quota]:
            occ = by_key[keys[int(i)]]  # asked once, at one of the times it can be
            out.append(_question(ep, *occ[int(rng.integers(len(occ)))], rng, phrasings))
    out.sort(key=lambda q: q.t_s)
    return [Question(**{**q.__dict__, "qid": f"{ep.video_uid}_s{n:04d}"}) for n, q in enumerate(out)]


def _question(ep: Episode, k: int, c: SpatialCand, rng: np.random.Generator, phrasings: str) -> Question:
    kind = c.key[0]
    # the sentence from a stream of its own per question: the same questions, options and answers in every set
    sentences = Q.SPATIAL_TEMPLATES[kind] if phrasings == "templates" else Q.SPATIAL_PHRASINGS[phrasings][kind]
    j = int(np.random.default_rng(zlib.crc32(repr((c.key, phrasings)).encode())).integers(len(sentences)))
    text = sentences[j].format(**c.fmt)
    subtask = Q.SPATIAL_SUBTASK[kind]
    meta = {"kind": kind, "template": j, "object_ids": list(c.object_ids), "frame_index": k, "phrasings": phrasings}
    if c.value is not None:
        return Question(qid="_", t_s=ep.frames_gt[k].t_s, text=text, options=(), answer=f"{c.value:.4g}",
                        subtask=subtask, category="Measurement", qtype="NUMBER",
                        meta={**meta, "answer_value": float(c.value), "unit": Q.SPATIAL_UNIT[kind]})
    order = list(rng.permutation(len(c.options)))
    options = tuple(option_text(kind, c.options[i]) for i in order)
    letter = OPTION_LETTERS[order.index(0)]
    return Question(qid="_", t_s=ep.frames_gt[k].t_s, text=text, options=options, answer=letter, subtask=subtask,
                    category="Measurement", qtype="OTHER",
                    meta={**meta, "answer_value": options[order.index(0)], "answer_text": options[order.index(0)]})
