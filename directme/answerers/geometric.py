"""The built-in answerer: no model weights, answers from memory geometry.

For each primitive it computes what memory says (an ego azimuth, a room, a count, a yes/no
probability, which object is closer), then scores every option by how well its meaning fits;
scores are normalised to sum to 1. Missing evidence gives uniform scores and low confidence."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ..geometry import azimuth_deg, clock_hour, ground_distance_m
from ..memory.snapshot import ObjectNode
from ..query.ego import direction_text, ego_frame_at, object_place, place_votes, position_at
from ..query.intent import HERE, Primitive, Target, TimeKind
from ..query.options import OptionKind, OptionMeaning
from ..query.retrieval import Match, match_target
from ..query.timeref import place_event_index, place_runs, subject_place
from ..query.vocab import canonical, counted
from ..query.types import QueryContext
from ..types import OPTION_LETTERS, Answer, Flag, TextEnum

_EPS = 1e-4
_PATH_WORDS = re.compile(r"\b(path|route|trajectory|way|where have i been|which (rooms|places) did i)\b")
_ROOM_WORDS = re.compile(r"\b(room|rooms|place|places|area|areas)\b")


class PredictionKind(TextEnum):
    """The form of what memory says."""

    AZIMUTH = "azimuth"  # an ego direction
    PLACES = "places"  # a probability per room
    PATH = "path"  # the wearer's path in metres and turns
    COUNT = "count"
    YES = "yes"  # a yes/no probability
    TARGETS = "targets"  # a score per asked object
    NONE = "none"  # no evidence


@dataclass
class Prediction:
    """What memory says, in one of several forms, with a confidence in [0, 1]."""

    kind: PredictionKind
    text: str = ""
    confidence: float = 1.0
    azimuth_deg: float = 0.0
    places: dict = field(default_factory=dict)  # tag -> probability
    count: int = 0
    p_yes: float = 0.5
    target_scores: dict = field(default_factory=dict)  # target key -> score
    flags: tuple = ()


def _none(reason: str, flag: Flag = Flag.NO_EVIDENCE) -> Prediction:
    return Prediction(PredictionKind.NONE, text=reason, confidence=0.0, flags=(flag,))


def _angle_diff(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def _best_node(ctx: QueryContext, i: int) -> Optional[ObjectNode]:
    matches: tuple[tuple[Match, ...], ...] = ctx.facts.matches
    if i >= len(matches) or not matches[i]:
        return None
    top = max(m.score for m in matches[i])
    nodes = [ctx.snapshot.objects[m.node_id] for m in matches[i] if m.score >= top - 1e-9]
    return max(nodes, key=lambda n: (n.present, n.n_obs, n.last_seen_s))


def _target_nodes(ctx: QueryContext, i: int) -> list[ObjectNode]:
    matches = ctx.facts.matches
    return [ctx.snapshot.objects[m.node_id] for m in matches[i]] if i < len(matches) else []


class GeometricAnswerer:
    """Answers the eight UCS-Bench subtasks from the rendered memory (see module docstring)."""

    name = "geometric"

    def __init__(self, direction_sigma_deg: float = 18.0, clock_sigma_deg: float = 12.0,
                 distance_scale_m: float = 0.1, reach_scale_m: float = 0.05, count_min_obs: int = 1,
                 duplicate_radius_m: float = 0.4, gone_after_views: int = 4) -> None:
        self.direction_sigma_deg = direction_sigma_deg
        self.clock_sigma_deg = clock_sigma_deg
        self.distance_scale_m = distance_scale_m
        self.reach_scale_m = reach_scale_m
        self.count_min_obs = count_min_obs
        self.duplicate_radius_m = duplicate_radius_m
        self.gone_after_views = gone_after_views

    # ------------------------------------------------------------------ solvers per primitive
    def predict(self, ctx: QueryContext) -> Prediction:
        intent = ctx.intent
        opts: Sequence[OptionMeaning] = ctx.facts.options
        if not intent.understood:
            return _none("question not understood", Flag.NOT_UNDERSTOOD)
        kinds = {o.kind for o in opts}
        prim = intent.primitive
        if prim in (Primitive.OBJECT_TRAJECTORY, Primitive.OBJECT_LOCATION) or (
                kinds == {OptionKind.PLACE} and intent.targets and prim not in (Primitive.MY_TRAJECTORY, Primitive.COUNT)):
            return self._object_room(ctx)  # uses the placement history, not the event time
        if prim == Primitive.MY_TRAJECTORY and not place_runs(ctx.snapshot):  # no scene tags: from the poses alone
            return self._metric_path(ctx)
        if not ctx.facts.time.ok:
            return _none(ctx.facts.time.detail)
        P = Primitive
        solver = {P.EGO_DIRECTION: self._ego_direction, P.FACING: self._facing, P.RELATIVE_POSITION: self._relative,
                  P.DISTANCE_COMPARE: self._distance, P.REACHABILITY: self._reach, P.COUNT: self._count,
                  P.COUNT_CHANGE: self._count, P.CATEGORY_RECALL: self._recall, P.MY_TRAJECTORY: self._my_room}[prim]
        return solver(ctx)

    def _ego_direction(self, ctx: QueryContext) -> Prediction:
        node = _best_node(ctx, 0)
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        if node is None or frame is None:
            return _none(f"no '{ctx.intent.targets[0].text if ctx.intent.targets else '?'}' in memory")
        p_e = frame.to_ego(position_at(node, ctx.facts.time.t_eval))
        az = azimuth_deg(p_e)
        conf = 1.0 if node.present else 0.6
        return Prediction(PredictionKind.AZIMUTH, f"The {node.label} is {direction_text(az)} ({clock_hour(az)} o'clock), "
                                     f"{ground_distance_m(p_e):.1f} m away.", conf, azimuth_deg=az)

    def _facing(self, ctx: QueryContext) -> Prediction:
        obj, ref = _best_node(ctx, 0), _best_node(ctx, len(ctx.intent.targets) - 1)
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        if obj is None or ref is None or frame is None or obj is ref:
            return _none("the object or the reference is not in memory")
        t = ctx.facts.time.t_eval
        to_ref, to_obj = frame.to_ego(position_at(ref, t)), frame.to_ego(position_at(obj, t))
        az = azimuth_deg(to_obj) - azimuth_deg(to_ref)
        return Prediction(PredictionKind.AZIMUTH, f"Facing the {ref.label}, the {obj.label} is {direction_text(az)}.",
                          azimuth_deg=az)

    def _relative(self, ctx: QueryContext) -> Prediction:
        a, b = _best_node(ctx, 0), _best_node(ctx, 1)
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        if a is None or b is None or frame is None:
            return _none("an object of the question is not in memory")
        t = ctx.facts.time.t_eval
        d = frame.T_world_ego.R.T @ (position_at(a, t) - position_at(b, t))
        az = azimuth_deg(d)
        return Prediction(PredictionKind.AZIMUTH, f"From your view, the {a.label} is {direction_text(az)} of the {b.label}.",
                          azimuth_deg=az)

    def _distances(self, ctx: QueryContext) -> dict[str, float]:
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        out = {}
        for i, target in enumerate(ctx.intent.targets):
            node = _best_node(ctx, i)
            if node is not None and frame is not None:
                out[target.key] = ground_distance_m(frame.to_ego(position_at(node, ctx.facts.time.t_eval)))
        return out

    def _distance(self, ctx: QueryContext) -> Prediction:
        dist = self._distances(ctx)
        keys = [t.key for t in ctx.intent.targets]
        if len(keys) < 2 or not dist:
            return _none("the objects to compare are not in memory")
        sign = 1.0 if ctx.intent.comparison == "farther" else -1.0
        known = {k: sign * d / self.distance_scale_m for k, d in dist.items()}
        floor = min(known.values()) - 50.0
        logits = np.array([known.get(k, floor) for k in keys])
        p = np.exp(logits - logits.max())
        p /= p.sum()
        best = keys[int(np.argmax(p))]
        text = ", ".join(f"{k}: {d:.1f} m" for k, d in dist.items())
        conf = 1.0 if len(dist) == len(keys) else 0.4
        pred = Prediction(PredictionKind.TARGETS, f"The {best} is {ctx.intent.comparison} ({text}).", conf,
                          target_scores=dict(zip(keys, p)))
        pred.p_yes = float(p[0])  # "Is the A closer than the B?"
        return pred

    def _reach(self, ctx: QueryContext) -> Prediction:
        dist = self._distances(ctx)
        if not dist:
            return _none("the object is not in memory")
        d = next(iter(dist.values()))
        reach = float(ctx.facts.reach_m)
        p = float(1.0 / (1.0 + np.exp(-(reach - d) / self.reach_scale_m)))
        verdict = "within" if p >= 0.5 else "out of"
        return Prediction(PredictionKind.YES, f"It is {d:.1f} m away, {verdict} reach ({reach:.1f} m).", p_yes=p)

    def _count(self, ctx: QueryContext) -> Prediction:
        if not ctx.intent.targets:
            return _none("no object to count", Flag.NO_TARGET)
        target = ctx.intent.targets[0]
        place = target.place or (ctx.intent.places[0] if ctx.intent.places else None)
        nodes = [n for n in _target_nodes(ctx, 0) if n.present and n.n_obs >= self.count_min_obs
                 and n.missed_views < self.gone_after_views]
        nodes = _distinct(nodes, self.duplicate_radius_m)
        if place:
            nodes = [n for n in nodes if canonical(object_place(ctx.snapshot, n, -1) or "") == canonical(place)]
        where = f" in the {place}" if place else ""
        known = bool(ctx.snapshot.objects)  # no object at all in memory (no detector?): a count of 0 is a guess
        return Prediction(PredictionKind.COUNT, f"{counted(len(nodes), target.text)}{where}.", 1.0 if known else 0.2,
                          count=len(nodes), flags=() if known else (Flag.NO_EVIDENCE,))

    def _recall(self, ctx: QueryContext) -> Prediction:
        place = ctx.intent.places[0] if ctx.intent.places else None
        scores = {}
        for o in ctx.facts.options:
            for tgt in o.objects:
                nodes = [ctx.snapshot.objects[m.node_id] for m in match_target(Target(tgt.key, tgt.text), ctx.snapshot)
                         if m.how in ("label", "vote", "head")]
                weights = [1.0] * len(nodes)
                if place:  # soft: the share of the room evidence pointing at the asked room
                    weights = [max(_share(place_votes(ctx.snapshot, n, i), place)
                                   for i in range(len(n.position_history) or 1)) for n in nodes]
                scores[tgt.key] = float(sum(n.n_obs * _vote_share(n, n.label) * w for n, w in zip(nodes, weights)))
        if not scores:
            return _none("no object options to recall")
        seen = [k for k, s in scores.items() if s > 0]
        return Prediction(PredictionKind.TARGETS, "Seen: " + (", ".join(seen) or "none of these") + ".",
                          1.0 if len(seen) == 1 else 0.5,
                          target_scores={k: 1.0 - np.exp(-s / 6.0) for k, s in scores.items()})

    def _my_room(self, ctx: QueryContext) -> Prediction:
        ref, snap = ctx.intent.time_ref, ctx.snapshot
        runs = place_runs(snap)
        subject = subject_place(ref.subject, runs)  # "before this one": the current place, before filtering
        option_places = {canonical(o.place) for o in ctx.facts.options if o.place}
        if option_places:  # rooms the question counts: pass-through places (a corridor) are skipped
            runs = _merge_runs([r for r in runs if canonical(r[2]) in option_places | {canonical(subject)}])
        if not runs:
            return _none("none of the rooms in the options is in memory")
        if ref.kind == TimeKind.EVENT and ref.event == "enter":
            i = place_event_index(runs[1:], subject, "enter", ref.which)  # index into runs[1:]
            tag = None if i is None else runs[i][2]  # the run before the entry
        elif ref.kind == TimeKind.EVENT and ref.event == "leave":
            i = place_event_index(runs, subject, "leave", ref.which)
            tag = None if i is None else runs[i + 1][2]
        else:
            t = ctx.facts.time.t_eval
            tag = next((r[2] for r in reversed(runs) if r[0] <= t), runs[0][2])
        path = ("... -> " if len(runs) > 8 else "") + " -> ".join(r[2] for r in runs[-8:])
        if tag is not None and ref.kind == TimeKind.NOW and _PATH_WORDS.search(ctx.question.lower()):
            walked = ctx.facts.metric_path
            how_far = f"; you walked {walked.walked_m:.1f} m in {walked.t_to - walked.t_from:.0f} s" if walked else ""
            return Prediction(PredictionKind.PLACES, f"Your path: {path} (now in the {tag}){how_far}.",
                              places={canonical(tag): 1.0})
        if tag is None and ref.subject == HERE:
            return Prediction(PredictionKind.PLACES, f"No earlier room: you have been in the {subject} since the start "
                                        f"(your path: {path}).", 0.3, places={canonical(subject): 1.0})
        if tag is None:
            return _none(f"event '{ref.text}' not in memory")
        return Prediction(PredictionKind.PLACES, f"The {tag} (your path: {path}).", places={canonical(tag): 1.0})

    def _metric_path(self, ctx: QueryContext) -> Prediction:
        """The path as distances and turns (from the asked time, or the whole stream); asked about rooms,
        it says that memory has no room names (low confidence)."""
        path = ctx.facts.metric_path
        if path is None:
            return _none("no camera pose in memory")
        if _ROOM_WORDS.search(ctx.question.lower()):
            return Prediction(PredictionKind.PATH, "No room names in memory (no scene tags). " + path.describe(), 0.3,
                              flags=(Flag.NO_PLACES,))
        return Prediction(PredictionKind.PATH, path.describe())

    def _object_room(self, ctx: QueryContext) -> Prediction:
        node = _best_node(ctx, 0)
        if node is None:
            return _none("the object is not in memory")
        n_place = max(1, len(node.position_history))
        before = ctx.intent.time_ref.relation == "before" and ctx.intent.time_ref.kind == TimeKind.EVENT
        if before and n_place < 2:  # no move seen: it was (and is) where memory has it
            tag = object_place(ctx.snapshot, node, 0) or ""
            return Prediction(PredictionKind.PLACES, f"No move of the {node.label} was seen; it is in the {tag}.", 0.5,
                              places={canonical(tag): 1.0})
        idx = (0 if ctx.intent.time_ref.which == "first" else n_place - 2) if before else n_place - 1
        tag = object_place(ctx.snapshot, node, idx) or ""
        return Prediction(PredictionKind.PLACES, f"The {node.label} was in the {tag}." if before else
                          f"The {node.label} is in the {tag}.", places={canonical(tag): 1.0})

    # ------------------------------------------------------------------ option scoring
    def score_options(self, pred: Prediction, opts: Sequence[OptionMeaning], targets: Sequence) -> np.ndarray:
        raw = np.zeros(len(opts))
        for i, o in enumerate(opts):
            if pred.kind == PredictionKind.AZIMUTH and o.azimuth_deg is not None:
                sigma = self.clock_sigma_deg if o.kind == OptionKind.CLOCK else self.direction_sigma_deg
                raw[i] = np.exp(-0.5 * (_angle_diff(o.azimuth_deg, pred.azimuth_deg) / sigma) ** 2)
            elif pred.kind == PredictionKind.PLACES and o.place:
                raw[i] = pred.places.get(canonical(o.place), 0.0)
            elif pred.kind == PredictionKind.COUNT and o.number is not None:
                raw[i] = np.exp(-2.0 * abs(o.number - pred.count))
            elif pred.kind in (PredictionKind.YES, PredictionKind.TARGETS) and o.kind in (OptionKind.YES, OptionKind.NO):
                raw[i] = pred.p_yes if o.kind == OptionKind.YES else 1.0 - pred.p_yes
            elif pred.kind == PredictionKind.TARGETS and o.objects:
                raw[i] = max(pred.target_scores.get(_option_key(t, targets), 0.0) for t in o.objects)
        return raw

    def answer(self, ctx: QueryContext) -> Answer:
        t0 = time.perf_counter()
        pred = self.predict(ctx)
        opts = ctx.facts.options
        flags = list(pred.flags)
        letter, scores, conf = None, None, pred.confidence
        if opts:
            raw = self.score_options(pred, opts, ctx.intent.targets) if pred.kind != PredictionKind.NONE else np.zeros(len(opts))
            if raw.max(initial=0.0) < 1e-3:
                if pred.kind != PredictionKind.NONE:
                    flags.append(Flag.OPTIONS_MISMATCH)
                raw = np.ones(len(opts))
                conf = 0.0
            p = (raw + _EPS) / (raw + _EPS).sum()
            letters = OPTION_LETTERS[:len(opts)]
            scores = {letters[i]: float(p[i]) for i in range(len(opts))}
            letter = letters[int(np.argmax(p))]
            conf = float(min(conf, p.max())) if conf > 0 else 0.0
        text = pred.text if letter is None else f"{letter}. {ctx.options[OPTION_LETTERS.index(letter)]} ({pred.text})"
        return Answer(question=ctx.question, t_s=ctx.t_s, text=text, letter=letter, confidence=conf,
                      option_scores=scores, evidence=ctx.evidence, subgraph_text=ctx.subgraph_text,
                      answerer=self.name, flags=tuple(dict.fromkeys(flags + list(ctx.intent.flags))),
                      latency_s=time.perf_counter() - t0)

    def answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]:
        return [self.answer(c) for c in ctxs]


def _share(votes: dict, place: str) -> float:
    total = sum(votes.values())
    return float(sum(w for t, w in votes.items() if canonical(t) == canonical(place)) / total) if total > 0 else 0.0


def _vote_share(node: ObjectNode, label: str) -> float:
    total = sum(node.label_votes.values())
    return float(node.label_votes.get(label, 0.0) / total) if total > 0 else 1.0


def _distinct(nodes: list, radius_m: float) -> list:
    """Same-class nodes closer than ``radius_m`` count once (duplicates from noisy association)."""
    kept: list = []
    for n in sorted(nodes, key=lambda n: -n.n_obs):
        if all(np.linalg.norm(np.asarray(n.position_w) - np.asarray(k.position_w)) >= radius_m for k in kept):
            kept.append(n)
    return kept


def _merge_runs(runs: list) -> list:
    """Merge consecutive runs of the same place (after pass-through places were dropped)."""
    out: list = []
    for start, end, tag in runs:
        if out and out[-1][2] == tag:
            out[-1] = (out[-1][0], end, tag)
        else:
            out.append((start, end, tag))
    return out


def _option_key(option_target, targets) -> str:
    """Map an option's object to the question target it names (by key, else head noun)."""
    keys = [t.key for t in targets]
    if option_target.key in keys or not keys:
        return option_target.key
    head = option_target.key.split()[-1]
    return next((k for k in keys if k.split()[-1] == head), option_target.key)


def build(options=None) -> GeometricAnswerer:
    """Factory used by the answerer registry (``options`` are GeometricAnswerer keyword arguments)."""
    return GeometricAnswerer(**dict(options or {}))
