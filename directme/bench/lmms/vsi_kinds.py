"""VSI-Bench's questions about a simulator episode, in the benchmark's own templates, with the ground truth
from the simulator: the documents of the ``directme_sim_vsibench`` lmms-eval task (simtask.py).

A kind is one generator registered under VSI-Bench's ``question_type`` (the name lmms-eval's scoring,
``lmms_eval.tasks.vsibench.utils``, dispatches on): ``@vsi_kind("object_size_estimation")`` on a function
``(scene, rng, limit) -> [VsiItem]`` adds that kind to every task built afterwards; nothing else changes.
Registered here: object_counting, object_abs_distance, object_rel_distance and the three
object_rel_direction levels; object_size_estimation, room_size_estimation, obj_appearance_order and
route_planning from the simulator's measurement questions (sim/question_gen_spatial.py) at the episode's last
frame, in VSI-Bench's templates (the first of sim/questions.py SPATIAL_TEMPLATES): an object's own box (episodes
generated with ``size_jitter`` vary sizes per instance), the floor area of the wearer's room at the end, the
first-appearance order of four categories, the turns of a route between objects of one room.

Like VSI-Bench (static scans), questions are about the scene at the end of the video and only about objects
that stay where they are for the whole episode and were seen; a name ("the bed") is used only when the
scene holds one object of that name. Answers near a decision boundary are skipped (margins below).
"This room" of a counting question (VSI-Bench: the scanned scene) is the room the wearer is in at the end:
every object of the counted name is in that room (none elsewhere in the house).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ...sim import question_gen_spatial as spatial
from ...sim import questions as sim_questions
from ...sim.catalog import spoken
from ...sim.episode import Episode, ObjectGT
from ...sim.qstate import Observations

# VSI-Bench's templates (its question generation; lmms-eval adds the options lines and the answer format)
COUNT_TEMPLATE = "How many {category}(s) are in this room?"
ABS_DISTANCE_TEMPLATE = ("Measuring from the closest point of each object, what is the direct distance between "
                         "the {object1} and the {object2} (in meters)?")
REL_DISTANCE_TEMPLATE = ("Measuring from the closest point of each object, which of these objects ({choices}) is "
                         "the closest to the {category}?\nIf there are multiple instances of an object category, "
                         "measure to the closest.")
_STANDING = "If I am standing by the {positioning_object} and facing the {orienting_object}, "
_CENTRE = "\nAssume \"standing by\" means I am positioned at the center of the {positioning_object}."
REL_DIRECTION_TEMPLATES = {
    "object_rel_direction_easy": (_STANDING + "is the {querying_object} to the left or the right of the "
                                  "{orienting_object}?" + _CENTRE, ("left", "right")),
    "object_rel_direction_medium": (_STANDING + "is the {querying_object} to my left, right, or back?" + _CENTRE +
                                    "\nAn object is to my back if I would have to turn at least 135 degrees in "
                                    "order to face it.", ("left", "right", "back")),
    "object_rel_direction_hard": (_STANDING + "is the {querying_object} to my front-left, front-right, back-left, "
                                  "or back-right?" + _CENTRE + "\nThe directions refer to the quadrants of a "
                                  "Cartesian plane (if I am standing at the origin and facing along the positive "
                                  "y-axis).", ("front-left", "front-right", "back-left", "back-right")),
}
LETTERS = "ABCDEFGH"

DIRECTION_MARGIN_DEG = 10.0  # skip a direction question within this of a sector boundary
DIRECTION_MIN_M = 1.0  # the orienting and querying objects are at least this far from the standing point
REL_DISTANCE_MARGIN_M = 0.3  # skip when the closest two choices are within this of each other
REL_DISTANCE_CHOICES = 4  # choices offered (fewer when the scene has fewer eligible names)
ABS_DISTANCE_MIN_M = 0.3  # no absolute-distance question about objects closer than this
COUNT_MIN = 1  # counting questions about names with at least this many objects in the room


@dataclass(frozen=True)
class VsiItem:
    """One question: VSI-Bench's ``question_type``, text, options ("A. left") and ground truth (a letter, or a
    number as text)."""

    question_type: str
    question: str
    ground_truth: str
    options: tuple[str, ...] = ()


class Scene:
    """The episode at its end: static objects that were seen, by spoken name."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.t_s = episode.frames_gt[-1].t_s
        self.end_room = episode.frames_gt[-1].room_id  # "this room" of a counting question
        self.obs = obs = Observations(episode)
        by_name: dict[str, list[ObjectGT]] = defaultdict(list)
        for o in episode.objects:
            by_name[spoken(o.label)].append(o)
        # a name is usable when every object of it stays put, is in the scene throughout, and was seen
        self.names: dict[str, list[ObjectGT]] = {
            n: objs for n, objs in by_name.items()
            if all(len(o.positions_w) == 1 and o.positions_w[0][1] is not None and o.present == ((0.0, math.inf),)
                   and obs.seen[o.object_id] for o in objs)}

    def room_id(self, obj: ObjectGT) -> Optional[int]:
        c = obj.positions_w[0][1]
        room = self.episode.layout.room_at(c[0], c[1])
        return None if room is None else room.room_id

    def unique(self) -> list[str]:
        return sorted(n for n, objs in self.names.items() if len(objs) == 1)

    def centre(self, name: str) -> np.ndarray:
        return np.asarray(self.names[name][0].positions_w[0][1], dtype=np.float64)

    def distance_m(self, a: str, b: str) -> float:
        """Closest-point distance between the nearest objects of two names (axis-aligned boxes, 3-D)."""
        return min(box_distance_m(oa, ob) for oa in self.names[a] for ob in self.names[b])


def box_distance_m(a: ObjectGT, b: ObjectGT) -> float:
    ca, cb = np.asarray(a.positions_w[0][1]), np.asarray(b.positions_w[0][1])
    gap = np.abs(ca - cb) - 0.5 * (np.asarray(a.size_m) + np.asarray(b.size_m))
    return float(np.linalg.norm(np.maximum(gap, 0.0)))


KINDS: dict[str, Callable[[Scene, np.random.Generator, int], list[VsiItem]]] = {}


def vsi_kind(question_type: str) -> Callable:
    """Register a generator under VSI-Bench's ``question_type`` (see the module docstring)."""
    def register(fn: Callable[[Scene, np.random.Generator, int], list[VsiItem]]) -> Callable:
        KINDS[question_type] = fn
        return fn
    return register


def _pick(rng: np.random.Generator, items: list, limit: int) -> list:
    if len(items) <= limit:
        return items
    return [items[i] for i in sorted(rng.choice(len(items), limit, replace=False))]


def _mc(question_type: str, text: str, values: list[str], answer: str, rng: np.random.Generator) -> VsiItem:
    order = [values[i] for i in rng.permutation(len(values))]
    options = tuple(f"{LETTERS[i]}. {v}" for i, v in enumerate(order))
    return VsiItem(question_type, text, LETTERS[order.index(answer)], options)


@vsi_kind("object_counting")
def counting(scene: Scene, rng: np.random.Generator, limit: int) -> list[VsiItem]:
    counts = {n: len(objs) for n, objs in sorted(scene.names.items())
              if (len(objs) == sum(scene.room_id(o) == scene.end_room for o in objs)) and len(objs) >= COUNT_MIN}
    return [VsiItem("object_counting", COUNT_TEMPLATE.format(category=n), str(counts[n]))
            for n in _pick(rng, list(counts), limit)]


@vsi_kind("object_abs_distance")
def abs_distance(scene: Scene, rng: np.random.Generator, limit: int) -> list[VsiItem]:
    u = scene.unique()
    pairs = [(a, b) for i, a in enumerate(u) for b in u[i + 1:] if scene.distance_m(a, b) >= ABS_DISTANCE_MIN_M]
    out = []
    for a, b in _pick(rng, pairs, limit):
        first, second = (a, b) if rng.random() < 0.5 else (b, a)
        out.append(VsiItem("object_abs_distance", ABS_DISTANCE_TEMPLATE.format(object1=first, object2=second),
                           f"{scene.distance_m(a, b):.1f}"))
    return out


@vsi_kind("object_rel_distance")
def rel_distance(scene: Scene, rng: np.random.Generator, limit: int) -> list[VsiItem]:
    out = []
    for target in _pick(rng, scene.unique(), 4 * limit):
        others = [n for n in scene.names if n != target]
        if len(others) < 2:
            continue
        choices = [others[i] for i in rng.choice(len(others), min(REL_DISTANCE_CHOICES, len(others)), replace=False)]
        d = sorted((scene.distance_m(target, c), c) for c in choices)
        if d[1][0] - d[0][0] < REL_DISTANCE_MARGIN_M:
            continue
        text = REL_DISTANCE_TEMPLATE.format(choices=", ".join(choices), category=target)
        options = tuple(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices))
        out.append(VsiItem("object_rel_distance", text, LETTERS[choices.index(d[0][1])], options))
        if len(out) == limit:
            break
    return out


def angle_deg(standing: np.ndarray, facing: np.ndarray, query: np.ndarray) -> float:
    """Angle of ``query`` seen from ``standing`` while facing ``facing``, on the ground plane (world z up):
    0 ahead, +90 left, -90 right, +-180 behind."""
    f, v = (facing - standing)[:2], (query - standing)[:2]
    return float(np.degrees(np.arctan2(f[0] * v[1] - f[1] * v[0], f @ v)))


def direction_answer(question_type: str, theta: float, margin: float = DIRECTION_MARGIN_DEG) -> Optional[str]:
    """The answer for an angle (``angle_deg``), or None when within ``margin`` of a boundary of that level."""
    a = abs(theta)
    side = "left" if theta > 0 else "right"
    if question_type == "object_rel_direction_easy":
        return side if margin <= a <= 180.0 - margin else None
    if question_type == "object_rel_direction_medium":
        if a < margin or abs(a - 135.0) < margin:
            return None
        return "back" if a >= 135.0 else side
    if min(a, abs(a - 90.0), 180.0 - a) < margin:
        return None
    return ("front-" if a < 90.0 else "back-") + side


def _directions(question_type: str, scene: Scene, rng: np.random.Generator, limit: int) -> list[VsiItem]:
    template, values = REL_DIRECTION_TEMPLATES[question_type]
    u = scene.unique()
    triples = [(a, b, c) for a in u for b in u for c in u if len({a, b, c}) == 3]
    out = []
    for i in rng.permutation(len(triples)):
        a, b, c = triples[i]
        pa, pb, pc = scene.centre(a), scene.centre(b), scene.centre(c)
        if min(np.linalg.norm((pb - pa)[:2]), np.linalg.norm((pc - pa)[:2])) < DIRECTION_MIN_M:
            continue
        answer = direction_answer(question_type, angle_deg(pa, pb, pc))
        if answer is None:
            continue
        text = template.format(positioning_object=a, orienting_object=b, querying_object=c)
        out.append(_mc(question_type, text, list(values), answer, rng))
        if len(out) == limit:
            break
    return out


for _qt in REL_DIRECTION_TEMPLATES:
    vsi_kind(_qt)(lambda scene, rng, limit, _qt=_qt: _directions(_qt, scene, rng, limit))


# VSI-Bench's question types the simulator's measurement generators answer -> their kind there
SPATIAL_KINDS = {"object_size_estimation": "object_size", "room_size_estimation": "room_size",
                 "obj_appearance_order": "appearance_order", "route_planning": "route_plan"}
NUMBER_FORMAT = {"object_size": "{:.0f}", "room_size": "{:.1f}"}  # ground truth as VSI-Bench writes it (cm, m2)


def _spatial(question_type: str, scene: Scene, rng: np.random.Generator, limit: int) -> list[VsiItem]:
    """Questions of a measurement kind at the last frame, from the simulator's generator of it."""
    kind = SPATIAL_KINDS[question_type]
    k = len(scene.episode.frames_gt) - 1
    cands = [c for c in spatial.GENERATORS[kind](scene.obs, k, rng, spatial.measurable(scene.obs, k))
             if c.key[0] == kind]  # room sizes: the wearer's room ("this room"), not an object's
    out = []
    for c in _pick(rng, cands, limit):
        text = sim_questions.SPATIAL_TEMPLATES[kind][0].format(**c.fmt)
        if c.value is not None:
            out.append(VsiItem(question_type, text, NUMBER_FORMAT[kind].format(c.value)))
        else:  # the right order or route first
            values = [spatial.option_text(kind, o) for o in c.options]
            out.append(_mc(question_type, text, values, values[0], rng))
    return out


for _qt in SPATIAL_KINDS:
    vsi_kind(_qt)(lambda scene, rng, limit, _qt=_qt: _spatial(_qt, scene, rng, limit))


def episode_items(episode: Episode, kinds: tuple[str, ...], per_kind: int, seed: int) -> list[VsiItem]:
    """Up to ``per_kind`` questions of each kind about ``episode`` (deterministic given ``seed``)."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        from ...errors import InvalidInputError

        raise InvalidInputError(f"unknown VSI-Bench kinds {unknown}; registered: {sorted(KINDS)}")
    scene = Scene(episode)
    out: list[VsiItem] = []
    for j, kind in enumerate(kinds):
        out += KINDS[kind](scene, np.random.default_rng([seed, episode.seed, j]), per_kind)
    return out
