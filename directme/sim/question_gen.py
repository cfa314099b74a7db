"""Ground-truth questions for the eight UCS-Bench subtasks, from the episode's ground truth at the
question time, only about what the wearer has seen, skipping answers near a decision boundary,
and re-asking the same question later once its answer has changed (templates: questions.py)."""
from __future__ import annotations

import bisect
import math
import zlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..errors import InvalidInputError
from ..geometry import clock_hour, direction_word, DIRECTIONS_8
from ..types import OPTION_LETTERS, Question
from .catalog import CATALOG, CORRIDOR, ROOM_TYPES, spoken
from .episode import Episode, ObjectGT
from .qstate import Observations, article, minutes_text, sector_margin_deg
from . import questions as Q

MIN_QUESTION_T_S = 10.0
REPEAT_MIN_GAP_S = 5.0
MAX_PAIRS_PER_FRAME = 24


@dataclass
class Cand:
    """A question candidate at frame ``k``: ``key`` identifies the question (same key = same question)."""

    key: tuple
    fmt: dict
    answer: str  # answer value (direction word, room type, count, label, "yes"/"no", "a"/"b")
    object_ids: tuple = ()
    gt: dict = field(default_factory=dict)
    options: list = field(default_factory=list)  # answer values offered (answer first)


# ------------------------------------------------------------------ per-kind candidates

def _direction_ok(obs: Observations, obj: ObjectGT, az: float, dist: float, width: float, margin: float) -> bool:
    return (dist >= Q.DIRECTION_MIN_DISTANCE_M and obj.half_extent_xy_m / dist <= Q.DIRECTION_MAX_EXTENT_RATIO
            and sector_margin_deg(az, width) >= margin)


def _known_unique(obs: Observations, k: int) -> list[tuple[ObjectGT, np.ndarray]]:
    out = []
    for o in obs.seen_objects(k):
        c = obs.known_position(o, k)
        if c is not None and obs.unique_label(o, k):
            out.append((o, c))
    return out


def _direction_cands(obs, k, rng, known, kind: str) -> list[Cand]:
    fps = obs.ep.fps
    out = []
    for o, c in known:
        ls = obs.last_seen(o.object_id, k)
        recent = ls >= k - Q.RECENT_S * fps
        if kind in ("ego_direction", "ego_clock") and not recent:
            continue
        if kind == "memory_direction" and ls > k - Q.MEMORY_MIN_UNSEEN_S * fps:
            continue
        az, d = obs.relation(k, c)
        gt = {"azimuth_deg": az, "distance_m": d}
        if kind == "ego_clock":
            if _direction_ok(obs, o, az, d, 30.0, Q.CLOCK_MARGIN_DEG):
                out.append(Cand((kind, o.object_id), {"obj": spoken(o.label)}, str(clock_hour(az)), (o.object_id,), gt))
        elif _direction_ok(obs, o, az, d, 45.0, Q.AZIMUTH_MARGIN_DEG):
            out.append(Cand((kind, o.object_id), {"obj": spoken(o.label)}, direction_word(az), (o.object_id,), gt))
    return out


def _pairs(known, rng, limit=MAX_PAIRS_PER_FRAME):
    pairs = [(a, b) for a in known for b in known if a[0].object_id != b[0].object_id and a[0].label != b[0].label]
    if len(pairs) > limit:
        pairs = [pairs[i] for i in rng.choice(len(pairs), limit, replace=False)]
    return pairs


def _facing_cands(obs, k, rng, known) -> list[Cand]:
    out = []
    cam = obs.cam_xy(k)
    for (x, cx), (r, cr) in _pairs(known, rng):
        fwd = cr[:2] - cam
        d_ref = float(np.linalg.norm(fwd))
        if d_ref < Q.DIRECTION_MIN_DISTANCE_M or r.half_extent_xy_m / d_ref > Q.DIRECTION_MAX_EXTENT_RATIO:
            continue
        fwd /= d_ref
        v = cx[:2] - cam
        az = math.degrees(math.atan2(fwd[0] * v[1] - fwd[1] * v[0], float(fwd @ v)))
        d = float(np.linalg.norm(v))
        if _direction_ok(obs, x, az, d, 45.0, Q.AZIMUTH_MARGIN_DEG):
            fmt = {"obj": spoken(x.label), "ref": spoken(r.label)}
            ids = (x.object_id, r.object_id)
            out.append(Cand(("memory_facing", *ids), fmt, direction_word(az), ids,
                            {"azimuth_deg": az, "distance_m": d}))
    return out


def _distance_cands(obs, k, rng, known) -> list[Cand]:
    out = []
    for (a, ca), (b, cb) in _pairs(known, rng):
        if a.object_id > b.object_id:
            continue
        (_, da), (_, db) = obs.relation(k, ca), obs.relation(k, cb)
        if abs(da - db) < Q.DISTANCE_MARGIN_M + a.half_extent_xy_m + b.half_extent_xy_m:
            continue
        kind = "distance_closer" if (a.object_id + b.object_id) % 2 else "distance_farther"
        closer_is_a = da < db
        ans = "a" if closer_is_a == (kind == "distance_closer") else "b"
        out.append(Cand((kind, a.object_id, b.object_id), {"a": spoken(a.label), "b": spoken(b.label)}, ans,
                        (a.object_id, b.object_id), {"distance_a_m": da, "distance_b_m": db}))
    return out


def _reach_cands(obs, k, rng, known) -> list[Cand]:
    out = []
    for o, c in known:
        _, d = obs.relation(k, c)
        if abs(d - Q.REACH_RADIUS_M) < Q.REACH_MARGIN_M + o.half_extent_xy_m:
            continue
        out.append(Cand(("reach", o.object_id), {"obj": spoken(o.label)}, "yes" if d <= Q.REACH_RADIUS_M else "no",
                        (o.object_id,), {"distance_m": d}))
    return out


def _recall_cands(obs, k, rng, known) -> list[Cand]:
    t = obs.t_of(k)
    seen_in: dict[str, set] = {}
    been_in: dict[str, set] = {}
    for f, room, label in obs.seen_in_room[:bisect.bisect_right(obs.seen_in_room_frames, k)]:
        seen_in.setdefault(room, set()).add(label)
    for tp, room, label in obs.placements[:bisect.bisect_right(obs.placement_times, t)]:
        been_in.setdefault(room, set()).add(label)
    out = []
    glimpsed = {o.label for o in obs.ep.objects if obs.glimpsed_by(o.object_id, k)}
    visited = {v[0] for v in obs.visits(k)}
    pool = sorted(CATALOG)
    for room, labels in seen_in.items():
        if room is None or room == CORRIDOR or room not in visited:
            continue
        distract = [lb for lb in pool if lb not in been_in.get(room, set()) and lb not in seen_in[room]]
        if len(distract) >= Q.N_OPTIONS - 1 and labels:
            ans = sorted(labels)[int(rng.integers(len(labels)))]
            opts = [ans] + list(rng.choice(distract, Q.N_OPTIONS - 1, replace=False))
            out.append(Cand(("recall_room", room), {"room": room}, ans, (), {"room": room}, opts))
    later = [lb for lb in pool if lb not in glimpsed]
    seen_any = sorted({o.label for o in obs.seen_objects(k)})
    if seen_any and len(later) >= Q.N_OPTIONS - 1:
        ans = seen_any[int(rng.integers(len(seen_any)))]
        wrong = list(rng.choice(later, Q.N_OPTIONS - 1, replace=False))
        out.append(Cand(("recall_any",), {}, ans, (), {}, [ans] + wrong))
    return out


def _count_cands(obs, k, rng, known) -> list[Cand]:
    """Counts of classes whose every instance is accounted for at t: in the scene and seen since it
    last moved (so none is carried or unseen), or removed and seen gone (or never seen at all)."""
    t = obs.t_of(k)
    by_label: dict[str, list[ObjectGT]] = {}
    for o in obs.ep.objects:
        if o.present[0][0] <= t:
            by_label.setdefault(o.label, []).append(o)
    visited = sorted({v[0] for v in obs.visits(k)})
    out = []
    for label, objs in by_label.items():
        if not any(obs.last_seen(o.object_id, k) >= 0 for o in objs):
            continue
        state_known = True
        for o in objs:
            if any(a <= t < b for a, b in o.present):
                state_known &= obs.known_position(o, k) is not None
            elif obs.glimpsed_by(o.object_id, k):
                state_known &= obs.removal_seen.get(o.object_id, math.inf) <= t
        if not state_known:
            continue
        present = [o for o in objs if o.present_at(t)]
        names = {"objs": spoken(label, plural=True)}
        ids = tuple(o.object_id for o in present)
        out.append(Cand(("count_all", label), names, str(len(present)), ids, {"label": label}))
        for room in visited:
            was_here = any(obs.object_room(o, tp) == room for o in objs for tp, c in o.positions_w if tp <= t and c)
            if was_here:
                n = sum(1 for o in present if obs.object_room(o, t) == room)
                out.append(Cand(("count_room", label, room), {**names, "room": room}, str(n), ids,
                                {"label": label, "room": room}))
    return out


def _trajectory_cands(obs, k, rng, known) -> list[Cand]:
    out = []
    visits = obs.visits(k)
    last_idx = {room: j for j, (room, _, _) in enumerate(visits)}
    for room, j in last_idx.items():
        if j >= 1:
            out.append(Cand(("my_prev_room", room), {"room": room}, visits[j - 1][0], (), {"room": room}))
        nexts = [i for i, v in enumerate(visits[:-1]) if v[0] == room]
        if nexts and visits[-1][0] != room:
            out.append(Cand(("my_next_room", room), {"room": room}, visits[nexts[-1] + 1][0], (), {"room": room}))
    fps = obs.ep.fps
    for n in (1, 2, 3, 5):
        k0 = k - int(round(n * 60 * fps))
        m = int(round(Q.ROOM_TIME_MARGIN_S * fps))
        if k0 - m < 0:
            continue
        window = {obs.room_type_at(i) for i in range(k0 - m, min(k0 + m, k) + 1)}
        if len(window) == 1 and CORRIDOR not in window:
            out.append(Cand(("my_room_ago", n), {"ago": minutes_text(n), "ago_cap": minutes_text(n).capitalize()},
                            window.pop()))
    return out


def _object_move_cands(obs, k, rng, known) -> list[Cand]:
    t = obs.t_of(k)
    out = []
    for o, c in known:
        picks = [e for e in obs.ep.events if e.object_id == o.object_id and e.kind == "pickup" and e.t_s <= t]
        if not picks or not o.movable:
            continue
        t_p = picks[-1].t_s
        k_p = obs.ep.frame_index_at(t_p - 1e-3)
        before = obs.known_position(o, k_p) if k_p >= 0 else None
        if before is None or obs.object_room(o, t_p - 1e-3) is None:
            continue
        fmt = {"obj": spoken(o.label)}
        n = len(picks)  # one question per move: "where did I put X" after its 1st and after its 5th move differ
        out.append(Cand(("obj_prev_room", o.object_id, n), fmt, obs.object_room(o, t_p - 1e-3), (o.object_id,)))
        out.append(Cand(("obj_now_room", o.object_id, n), fmt, obs.object_room(o, t), (o.object_id,)))
    return out


SUBTASK_GENERATORS: dict[str, tuple[Callable, ...]] = {
    "My Trajectory": (_trajectory_cands,),
    "Object Trajectory": (_object_move_cands,),
    "Ego-centric Position": (lambda *a: _direction_cands(*a, "ego_direction") + _direction_cands(*a, "ego_clock"),),
    "Relative Position & Orientation Memory": (lambda *a: _direction_cands(*a, "memory_direction"), _facing_cands),
    "Distance Comparison": (_distance_cands,),
    "Reachability Judgment": (_reach_cands,),
    "Object Category Recall": (_recall_cands,),
    "Quantity Change Tracking": (_count_cands,),
}


# ------------------------------------------------------------------ options and assembly

_ROOM_KINDS = ("my_prev_room", "my_next_room", "my_room_ago", "obj_prev_room", "obj_now_room")
_DIRECTION_KINDS = ("ego_direction", "memory_direction", "memory_facing")


def _option_text(kind: str, value: str, style: int, fmt: dict) -> str:
    if kind in _DIRECTION_KINDS:
        return Q.DIRECTION_OPTIONS[value][style % 2]
    if kind == "ego_clock":
        return Q.CLOCK_OPTIONS[style % len(Q.CLOCK_OPTIONS)].format(h=value)
    if kind in _ROOM_KINDS:
        return Q.ROOM_OPTIONS[style % len(Q.ROOM_OPTIONS)].format(room=value)
    if kind in ("count_all", "count_room"):
        n = int(value)
        return Q.COUNT_OPTIONS[style % len(Q.COUNT_OPTIONS)].format(word=Q.COUNT_WORDS[n], n=n)
    if kind in ("recall_room", "recall_any"):
        name = spoken(value)
        return Q.RECALL_OPTIONS[0].format(article=article(name), obj=name)
    if kind == "reach":
        return Q.YES_NO_OPTIONS[style % len(Q.YES_NO_OPTIONS)][0 if value == "yes" else 1]
    return Q.OBJECT_OPTIONS[0].format(obj=fmt[value])  # distance: "a" / "b"


def _option_values(kind: str, cand: Cand, ep: Episode,
                   rng: np.random.Generator) -> Optional[tuple[list[str], bool]]:
    """Answer values offered, and whether they are shuffled (multiple choice) or fixed (binary); None for a count
    beyond the words of the options (a cluttered place of the day; episodes stay below)."""
    n_d = Q.N_OPTIONS - 1
    ans = cand.answer
    if kind == "reach":
        return ["yes", "no"], False
    if kind.startswith("distance"):
        return ["a", "b"], False
    if cand.options:
        return list(cand.options), True
    if kind in _DIRECTION_KINDS:
        others = [w for w in DIRECTIONS_8 if w != ans]
    elif kind == "ego_clock":
        others = [str(h) for h in range(1, 13) if str(h) != ans]
    elif kind in _ROOM_KINDS:
        skip = (ans, CORRIDOR, cand.fmt.get("room"))
        here = [r.room_type for r in ep.layout.rooms if r.room_type not in skip]
        rest = [r for r in ROOM_TYPES if r not in skip and r not in here]
        others = list(rng.permutation(here)) + list(rng.permutation(rest))
        return [ans] + others[:n_d], True
    else:  # counts: five consecutive numbers containing the answer
        n = int(ans)
        if n >= len(Q.COUNT_WORDS):
            return None
        start = min(max(0, n - int(rng.integers(0, Q.N_OPTIONS))), len(Q.COUNT_WORDS) - Q.N_OPTIONS)
        return [str(v) for v in range(start, start + Q.N_OPTIONS)], True
    return [ans] + list(rng.choice(others, n_d, replace=False)), True


def _pick(groups: dict, rng: np.random.Generator, min_gap_k: int) -> dict[str, list[list]]:
    """Per kind: asks to make, each [(k, cand)] of 1 or 2 items (a question and its re-ask with a changed answer)."""
    by_kind: dict[str, list[list]] = {}
    for key in [list(groups)[i] for i in rng.permutation(len(groups))]:
        occ = groups[key]
        pair = None
        for i in rng.permutation(len(occ))[:30]:  # a random first ask that has a later changed answer
            k, c = occ[i]
            j = next((j for j in range(i + 1, len(occ)) if occ[j][0] - k >= min_gap_k
                      and occ[j][1].answer != c.answer), None)
            if j is not None:
                pair = [occ[i], occ[j]]
                break
        if pair:
            by_kind.setdefault(key[0], []).insert(0, pair)
        else:
            by_kind.setdefault(key[0], []).append([occ[int(rng.integers(len(occ)))]])
    for kind, asks in by_kind.items():  # reachability: alternate yes / no among single asks
        if kind == "reach":
            paired = [a for a in asks if len(a) == 2]
            yes = [a for a in asks if len(a) == 1 and a[0][1].answer == "yes"]
            no = [a for a in asks if len(a) == 1 and a[0][1].answer == "no"]
            by_kind[kind] = paired + [x for pair in zip(yes, no) for x in pair] + yes[len(no):] + no[len(yes):]
    return by_kind


def generate_questions(ep: Episode, rng: np.random.Generator, questions_per_minute: float = 16.0,
                       removal_seen: Optional[dict[int, float]] = None, phrasings: str = "templates") -> list[Question]:
    """Questions at integer-second frame times >= MIN_QUESTION_T_S, about 1/8 of them per subtask.
    ``phrasings`` (questions.PHRASING_SETS) only changes the words: the same questions, options, answers and
    times come out of every set."""
    if phrasings not in Q.PHRASING_SETS:
        raise InvalidInputError(f"phrasings must be one of {Q.PHRASING_SETS}, got {phrasings!r}")
    obs = Observations(ep, removal_seen)
    step_s = max(3.0, math.ceil(ep.duration_s / 600))
    ks = sorted({k for k in (ep.frame_index_at(t) for t in np.arange(MIN_QUESTION_T_S, ep.duration_s, step_s))
                 if float(ep.frames_gt[k].t_s).is_integer()})  # questions at whole seconds ("HH:MM:SS")
    groups: dict[str, dict[tuple, list]] = {s: {} for s in Q.SUBTASKS}
    for k in ks:
        known = _known_unique(obs, k)
        for subtask, gens in SUBTASK_GENERATORS.items():
            for gen in gens:
                for c in gen(obs, k, rng, known):
                    groups[subtask].setdefault(c.key, []).append((k, c))
    quota = max(3, int(round(questions_per_minute * ep.duration_s / 60.0 / len(Q.SUBTASKS))))
    made: list[tuple[int, Cand, Optional[int]]] = []  # (k, cand, index of the first ask for re-asks)
    for subtask in Q.SUBTASKS:
        by_kind = _pick(groups[subtask], rng, int(round(REPEAT_MIN_GAP_S * ep.fps)))
        n = 0
        while n < quota and any(by_kind.values()):
            for kind in sorted(by_kind):
                if by_kind[kind] and n < quota:
                    ask = by_kind[kind].pop(0)
                    made.append((ask[0][0], ask[0][1], None))
                    if len(ask) == 2:
                        made.append((ask[1][0], ask[1][1], len(made) - 1))
                    n += len(ask)
    return _assemble(ep, made, rng, phrasings)


def _rephrase(key: tuple, kind: str, fmt: dict, phrasings: str) -> tuple[str, int]:
    """The question in one of the ``phrasings`` set's sentences (the same one for every ask of ``key``), object
    names swapped for a variant half of the time. Its own random stream (from the key), so the episode's
    questions, options and answers are the same in every phrasing set."""
    prng = np.random.default_rng(zlib.crc32(repr((key, phrasings)).encode()))
    sentences = Q.PHRASINGS[phrasings][kind]
    i = int(prng.integers(len(sentences)))
    slots = dict(fmt)
    for slot in Q.NAME_SLOTS:
        variants = Q.NAME_VARIANTS.get(slots.get(slot, ""), ())
        if variants and prng.random() < 0.5:
            slots[slot] = variants[int(prng.integers(len(variants)))]
    return sentences[i].format(**slots), i


def _assemble(ep: Episode, made: list, rng: np.random.Generator, phrasings: str = "templates") -> list[Question]:
    style: dict[tuple, tuple[int, int]] = {}
    order = sorted(range(len(made)), key=lambda i: (made[i][0], i))
    qid_of = {i: f"{ep.video_uid}_q{n:04d}" for n, i in enumerate(order)}
    out = []
    for i in order:
        k, c, first = made[i]
        kind = c.key[0]
        if c.key not in style:
            style[c.key] = (int(rng.integers(len(Q.TEMPLATES[kind]))), int(rng.integers(2)))
        tpl, sty = style[c.key]
        offered = _option_values(kind, c, ep, rng)
        if offered is None:
            continue
        values, shuffle = offered
        if shuffle:
            values = [values[j] for j in rng.permutation(len(values))]
        options = tuple(_option_text(kind, v, sty, c.fmt) for v in values)
        subtask = Q.KIND_SUBTASK[kind]
        letter = OPTION_LETTERS[values.index(c.answer)]
        text = Q.TEMPLATES[kind][tpl].format(**c.fmt)
        extra = {}
        if phrasings != "templates":
            text, j = _rephrase(c.key, kind, c.fmt, phrasings)
            extra = {"phrasings": phrasings, "phrasing": j}
        out.append(Question(
            qid=qid_of[i], t_s=ep.frames_gt[k].t_s, text=text, options=options,
            answer=letter, subtask=subtask, category=Q.SUBTASK_CATEGORY[subtask], qtype=Q.SUBTASK_QTYPE[subtask],
            meta={"kind": kind, "template": tpl, "object_ids": list(c.object_ids), "answer_value": c.answer,
                  "answer_text": options[values.index(c.answer)], "gt": c.gt, "frame_index": k,
                  "repeat_of": None if first is None else qid_of[first], **extra}))
    return out
