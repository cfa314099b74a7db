"""The built-in answerer: no model weights, answers from memory geometry.

For each primitive it computes what memory says (an ego azimuth, a room, a count, a yes/no
probability, which object is closer, a distance in metres, the objects around a reference), then
scores every option by how well its meaning fits; scores are normalised to sum to 1. Missing
evidence gives uniform scores and low confidence.

It abstains (letter None, confidence 0, flag "abstained") on questions it should not answer: kind
``open`` (attributes, states, activities: an MLLM's job), a parse confidence below
``min_parse_confidence``, or no object named where one is needed."""
from __future__ import annotations

import re
import time
from typing import Optional, Sequence

import numpy as np

from ..geometry import azimuth_deg, clock_hour, ground_distance_m
from ..memory.snapshot import EventKind, ObjectNode
from ..query.ego import current_place, direction_text, ego_frame_at, object_place, place_votes, position_at
from ..query.intent import HERE, MIN_PARSE_CONFIDENCE, Primitive, Target, TimeKind
from ..query.options import OptionKind, OptionMeaning
from ..query.retrieval import match_target
from ..query.timeref import place_event_index, place_runs, subject_place
from ..query.vocab import canonical, counted, label_keys
from ..query.types import QueryContext
from ..types import OPTION_LETTERS, Answer, Flag
from .changes import change_kind, describe, events_of, option_scores
from .counting import count_belief
from .prediction import Prediction, PredictionKind
from .prediction import angle_diff as _angle_diff
from .prediction import best_node as _best_node
from .prediction import known_place as _known_place
from .prediction import no_answer as _none
from .prediction import target_nodes as _target_nodes

_EPS = 1e-4
_PATH_WORDS = re.compile(r"\b(path|route|trajectory|way|where have i been|which (rooms|places) did i)\b")
_ROOM_WORDS = re.compile(r"\b(room|rooms|place|places|area|areas)\b")
_FLOOR_WORDS = re.compile(r"\b(?:which|what) (?:floor|storey|story|level)\b|\bon (?:which|what) (?:floor|storey|level)\b")


def _open_side_deg(ctx: QueryContext, R: np.ndarray, p_ref: np.ndarray, t: float,
                   radius_m: float = 3.0) -> Optional[float]:
    """Azimuth (ego-aligned axes ``R``) from the reference to where the wearer stood within ``radius_m`` of it
    up to ``t``: the open side a piece of furniture faces, so "opposite" lies that way (None: never near it)."""
    ego = ctx.snapshot.ego
    pos = ego.T_world_cam[ego.times_s <= t][:, :3, 3].astype(np.float64)
    d = (pos - p_ref) @ R.T
    d = d[np.hypot(d[:, 0], d[:, 1]) <= radius_m]
    if not len(d):
        return None
    return azimuth_deg(d.mean(axis=0))


class GeometricAnswerer:
    """Answers the eight UCS-Bench subtasks from the rendered memory (see module docstring)."""

    name = "geometric"

    def __init__(self, direction_sigma_deg: float = 18.0, clock_sigma_deg: float = 12.0,
                 distance_scale_m: float = 0.1, reach_scale_m: float = 0.05, count_min_obs: int = 1,
                 duplicate_radius_m: float = 0.4, count_sure_p: float = 0.95,
                 min_parse_confidence: float = MIN_PARSE_CONFIDENCE, near_m: float = 1.2,
                 side_range_m: float = 2.5, put_back_p: float = 0.9, label_vote_logodds: float = 3.0,
                 count_min_similarity: float = 0.8) -> None:
        self.direction_sigma_deg = direction_sigma_deg
        self.clock_sigma_deg = clock_sigma_deg
        self.distance_scale_m = distance_scale_m
        self.reach_scale_m = reach_scale_m
        self.count_min_obs = count_min_obs
        self.duplicate_radius_m = duplicate_radius_m
        self.count_sure_p = count_sure_p  # a count this likely is said plainly; below, with its expectation
        self.min_parse_confidence = min_parse_confidence  # below it the answerer abstains
        self.near_m = near_m  # "next to", "near", "by": ground distance to the reference
        self.side_range_m = side_range_m  # "left of", "behind": how far from the reference
        self.put_back_p = put_back_p  # a placement found gone this surely, then seen again: taken and put back
        self.label_vote_logodds = label_vote_logodds  # counts: log-odds one unit of label vote adds to its label
        self.count_min_similarity = count_min_similarity  # counts: a label matched by meaning alone must be this close

    # ------------------------------------------------------------------ solvers per primitive
    def predict(self, ctx: QueryContext) -> Prediction:
        intent = ctx.intent
        opts: Sequence[OptionMeaning] = ctx.facts.options
        if not intent.understood:
            return _none("question not understood", Flag.NOT_UNDERSTOOD)
        kinds = {o.kind for o in opts}
        prim = intent.primitive
        if prim in (Primitive.OBJECT_LOCATION, Primitive.CURRENT_PLACE) and _FLOOR_WORDS.search(ctx.question.lower()):
            return _none("memory knows rooms, not floors")
        if prim in (Primitive.OBJECT_TRAJECTORY, Primitive.OBJECT_LOCATION) or (
                kinds == {OptionKind.PLACE} and intent.targets and prim not in (Primitive.MY_TRAJECTORY, Primitive.COUNT)):
            return self._object_room(ctx)  # uses the placement history, not the event time
        if prim == Primitive.MY_TRAJECTORY and intent.walked:  # "how far have I walked (since ...)"
            path = ctx.facts.metric_path
            return Prediction(PredictionKind.DISTANCE, path.describe(), metres=path.walked_m) if path else \
                _none("no camera pose in memory")
        if prim == Primitive.MY_TRAJECTORY and not place_runs(ctx.snapshot):  # no scene tags: from the poses alone
            return self._metric_path(ctx)
        if not ctx.facts.time.ok:
            return _none(ctx.facts.time.detail)
        P = Primitive
        if prim in (P.OPEN, P.UNKNOWN):
            return _none("the question needs a visual language model", Flag.ABSTAINED)
        solver = {P.EGO_DIRECTION: self._ego_direction, P.FACING: self._facing, P.RELATIVE_POSITION: self._relative,
                  P.DISTANCE_COMPARE: self._distance, P.REACHABILITY: self._reach, P.COUNT: self._count,
                  P.COUNT_CHANGE: self._count, P.CATEGORY_RECALL: self._recall, P.MY_TRAJECTORY: self._my_room,
                  P.DISTANCE: self._metres, P.OBJECTS_AROUND: self._objects_around,
                  P.CURRENT_PLACE: self._current_place, P.CHANGES: self._changes}[prim]
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
        """Where the object is for someone facing the reference: from where the wearer stands, or from an
        imagined place ("if I sit on the couch facing the TV")."""
        intent, t = ctx.intent, ctx.facts.time.t_eval
        view = intent.viewpoint
        face_i = intent.index_of(view.facing) if view is not None else len(intent.targets) - 1
        at_i = intent.index_of(view.at) if view is not None else None
        if face_i is None:
            return _none("the imagined viewpoint does not say which way it faces")
        obj, ref = _best_node(ctx, 0), _best_node(ctx, face_i)
        at = _best_node(ctx, at_i) if at_i is not None else None
        frame = ego_frame_at(ctx.snapshot, t)
        if obj is None or ref is None or frame is None or obj is ref or (at_i is not None and at is None):
            return _none("the object or the reference is not in memory")
        to_ref, to_obj = frame.to_ego(position_at(ref, t)), frame.to_ego(position_at(obj, t))
        where = ""
        if at is not None:  # the imagined observer's place, not the wearer's
            origin = frame.to_ego(position_at(at, t))
            to_ref, to_obj = to_ref - origin, to_obj - origin
            where = f"From the {at.label}, f"
        az = azimuth_deg(to_obj) - azimuth_deg(to_ref)
        text = f"{where or 'F'}acing the {ref.label}, the {obj.label} is {direction_text(az)}."
        return Prediction(PredictionKind.AZIMUTH, text, azimuth_deg=az)

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

    def _origin(self, ctx: QueryContext) -> tuple[Optional[np.ndarray], str]:
        """Where distances are measured from, in the ego frame at t: the named reference ("closer to the
        window") or the wearer (None when the reference is not in memory)."""
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        if frame is None:
            return None, ""
        if not ctx.intent.references:
            return np.zeros(3), "you"
        ref = _best_node(ctx, ctx.intent.index_of(ctx.intent.references[0]))
        if ref is None:
            return None, ""
        return frame.to_ego(position_at(ref, ctx.facts.time.t_eval)), f"the {ref.label}"

    def _distances(self, ctx: QueryContext) -> dict[str, float]:
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        origin, _ = self._origin(ctx)
        out = {}
        for target in ctx.intent.asked:
            node = _best_node(ctx, ctx.intent.index_of(target))
            if node is not None and frame is not None and origin is not None:
                p = frame.to_ego(position_at(node, ctx.facts.time.t_eval))
                out[target.key] = ground_distance_m(p - origin)
        return out

    def _metres(self, ctx: QueryContext) -> Prediction:
        """How far the asked object is from the wearer, or from the named reference."""
        dist = self._distances(ctx)
        origin, from_what = self._origin(ctx)
        if not dist or origin is None:
            return _none("the object or the reference is not in memory")
        key, d = next(iter(dist.items()))
        return Prediction(PredictionKind.DISTANCE, f"The {key} is {d:.1f} m from {from_what}.", metres=d)

    def _distance(self, ctx: QueryContext) -> Prediction:
        dist = self._distances(ctx)
        keys = [t.key for t in ctx.intent.asked]
        if len(keys) < 2:
            return self._extreme(ctx)  # "which object is closest to the window?"
        if not dist:
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
        # things only like the asked class in meaning (a nightstand for "desks") are not of it: an embedding match
        # counts only when it is as close as a synonym the vocabulary lacks
        nodes = [n for n in _target_nodes(ctx, 0, self.count_min_similarity) if n.n_obs >= self.count_min_obs]
        if place:
            nodes = [n for n in nodes if canonical(object_place(ctx.snapshot, n, -1) or "") == canonical(place)]
        belief, _ = count_belief(nodes, self.duplicate_radius_m, asked=lambda label: target.key in label_keys(label),
                                 label_vote_logodds=self.label_vote_logodds)
        k = belief.most_likely
        where = f" in the {place}" if place else ""
        known = bool(ctx.snapshot.objects)  # no object at all in memory (no detector?): a count of 0 is a guess
        sure = belief.p(k) >= self.count_sure_p
        text = f"{counted(k, target.text)}{where}" + ("." if sure else f" (expected {belief.expected:.1f}, P={belief.p(k):.2f}).")
        return Prediction(PredictionKind.COUNT, text, belief.p(k) if known else 0.2, count=k,
                          count_pmf=belief.pmf, flags=() if known else (Flag.NO_EVIDENCE,))

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

    def _changes(self, ctx: QueryContext) -> Prediction:
        """What changed (memory/events.py, as known at the asked time): the moved / new / missing objects,
        scored per object option; or, with one object named, whether it is still where memory saw it."""
        kind = change_kind(ctx.question)
        place = ctx.intent.places[0] if ctx.intent.places else None
        if kind is None:  # "is the cup still there": its presence belief
            node = _best_node(ctx, 0)
            if node is None:
                return _none("the object is not in memory")
            p = float(node.presence_p)
            where = _known_place(object_place(ctx.snapshot, node, -1))
            verdict = "still there" if p >= 0.5 else "no longer there"
            return Prediction(PredictionKind.YES, f"The {node.label} is {verdict} (P={p:.2f}, last seen at "
                              f"{node.last_seen_s:.0f} s{' in the ' + where if where else ''}).", p_yes=p)
        events = events_of(ctx, kind, place)
        scores = option_scores(ctx, events)
        text = describe(events, kind)
        if scores:
            hit = [k for k, v in scores.items() if v > 0]
            return Prediction(PredictionKind.TARGETS, text, 1.0 if len(hit) == 1 else 0.5, target_scores=scores,
                              p_yes=0.9 if events else 0.1)
        return Prediction(PredictionKind.YES, text, 1.0 if events else 0.6, p_yes=0.9 if events else 0.1)

    def _extreme(self, ctx: QueryContext) -> Prediction:
        """"What is the nearest object to me?", "Which chair is farthest from the door?": the closest (or
        farthest) object in memory, among those matching the asked one when one is named."""
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        origin, from_what = self._origin(ctx)
        if frame is None or origin is None:
            return _none("the reference is not in memory")
        t = ctx.facts.time.t_eval
        refs = {id(_best_node(ctx, ctx.intent.index_of(r))) for r in ctx.intent.references}
        pool = _target_nodes(ctx, ctx.intent.index_of(ctx.intent.asked[0])) if ctx.intent.asked else \
            [n for n in ctx.snapshot.objects.values() if n.present]
        dist = {n.node_id: ground_distance_m(frame.to_ego(position_at(n, t)) - origin) for n in pool
                if id(n) not in refs}
        if not dist:
            return _none("no object to compare in memory")
        sign = 1.0 if ctx.intent.comparison == "farther" else -1.0
        best = max(dist, key=lambda nid: sign * dist[nid])
        node = ctx.snapshot.objects[best]
        scores: dict[str, float] = {}
        for nid, d in dist.items():
            for key in label_keys(ctx.snapshot.objects[nid].label):
                p = float(np.exp(sign * (d - dist[best]) / max(self.distance_scale_m, 0.3)))
                scores[key] = max(scores.get(key, 0.0), p)
        word = "farthest" if sign > 0 else "closest"
        return Prediction(PredictionKind.TARGETS, f"The {node.label} is {word} to {from_what} ({dist[best]:.1f} m).",
                          target_scores=scores)

    def _objects_around(self, ctx: QueryContext) -> Prediction:
        """"What is to the left of / on / under / next to / between the Y?": the objects in memory in that
        relation to the reference, in the wearer's orientation at t (left = the wearer's left)."""
        intent, t = ctx.intent, ctx.facts.time.t_eval
        frame = ego_frame_at(ctx.snapshot, t)
        refs = [_best_node(ctx, intent.index_of(r)) for r in intent.references]
        if frame is None or not refs or any(r is None for r in refs):
            return _none("the reference object is not in memory")
        rel = intent.relation or "near"
        if rel == "between" and len(refs) < 2:
            return _none(f"'{rel}' needs a second object")
        R = frame.T_world_ego.R.T  # world -> ego-aligned axes (x forward, y left, z up)
        p_ref = [np.asarray(position_at(r, t), dtype=np.float64) for r in refs]
        az_open = _open_side_deg(ctx, R, p_ref[0], t) if rel == "opposite" else None
        if rel == "opposite" and az_open is None:
            return _none("'opposite' needs the wearer to have walked near the reference (its open side)")
        ref_room = _known_place(object_place(ctx.snapshot, refs[0])) if rel == "opposite" else None
        half = float(np.max(np.asarray(refs[0].extent_m)[:2]) / 2) if refs[0].extent_m is not None else 0.3
        found: dict[str, tuple[float, ObjectNode]] = {}
        for n in ctx.snapshot.objects.values():
            if not n.present or any(n is r for r in refs):
                continue
            d = R @ (np.asarray(position_at(n, t), dtype=np.float64) - p_ref[0])
            ground = float(np.hypot(d[0], d[1]))
            az = azimuth_deg(d)
            if rel == "between":
                ab = R @ (p_ref[1] - p_ref[0])
                length = float(np.hypot(ab[0], ab[1])) or 1e-6
                s = float((d[0] * ab[0] + d[1] * ab[1]) / length ** 2)
                off = abs(float(d[0] * ab[1] - d[1] * ab[0])) / length
                ok, score = 0.1 < s < 0.9 and off <= max(0.5, 0.25 * length), off
            elif rel in ("left", "right", "front", "behind"):
                centre = {"left": 90.0, "right": -90.0, "front": 180.0, "behind": 0.0}[rel]
                ok, score = ground <= self.side_range_m and _angle_diff(az, centre) <= 45.0 and ground > half, ground
            elif rel in ("on", "above", "under"):
                up = d[2] > 0.02 if rel != "under" else d[2] < -0.02
                ok, score = ground <= max(0.35, half + 0.1) and up and abs(d[2]) <= 1.5, ground + abs(d[2])
            elif rel in ("in", "at"):
                ok, score = ground <= max(0.3, half) and abs(d[2]) <= 0.6, ground
            elif rel == "opposite":  # across the room: beyond the open floor in front of the reference
                off = _angle_diff(az, az_open)
                room = _known_place(object_place(ctx.snapshot, n)) if ref_room else None
                ok, score = ground >= max(1.5, 2 * half) and off <= 35.0 and room in (None, ref_room), off
            else:  # near, next to, beside, by, around, against
                ok, score = ground <= self.near_m, ground
            if ok and (n.label not in found or score < found[n.label][0]):
                found[n.label] = (score, n)
        ranked = sorted(found.values(), key=lambda x: x[0])
        scores: dict[str, float] = {}
        for rank, (_, n) in enumerate(ranked):
            for key in label_keys(n.label):
                scores[key] = max(scores.get(key, 0.0), 1.0 / (1.0 + 0.3 * rank))
        what = f"{rel} the " + " and the ".join(r.label for r in refs)
        names = ", ".join(n.label for _, n in ranked[:6])
        pred = Prediction(PredictionKind.TARGETS, f"Objects {what} (from where you stand): {names}." if ranked else
                          f"Memory has no object {what}.", 1.0 if ranked else 0.5, target_scores=scores)
        asked = [a.key for a in intent.asked]
        pred.p_yes = (0.9 if any(k in scores for k in asked) else 0.1) if asked else (0.9 if ranked else 0.1)
        return pred

    def _current_place(self, ctx: QueryContext) -> Prediction:
        tag = _known_place(current_place(ctx.snapshot, ctx.facts.time.t_eval))
        if not tag:
            return _none("the place you are in is not known: memory has no room names (no scene tags)",
                         Flag.NO_PLACES)
        return Prediction(PredictionKind.PLACES, f"You are in the {tag}.", places={canonical(tag): 1.0})

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
            tag = _known_place(object_place(ctx.snapshot, node, 0))
            if not tag:
                return _none(f"the room of the {node.label} is not known (no scene tags)", Flag.NO_PLACES)
            return Prediction(PredictionKind.PLACES, f"No move of the {node.label} was seen; it is in the {tag}.", 0.5,
                              places={canonical(tag): 1.0})
        if not before:
            idx = n_place - 1
        elif ctx.intent.time_ref.which == "first":
            idx = 0
        else:  # the placement before the current one, unless it was taken from the current one and put back
            idx = n_place - 1 if _put_back(ctx, node, self.put_back_p) else n_place - 2
        tag = _known_place(object_place(ctx.snapshot, node, idx))
        if not tag:
            return _none(f"the room of the {node.label} is not known (no scene tags)", Flag.NO_PLACES)
        return Prediction(PredictionKind.PLACES, f"The {node.label} was in the {tag}." if before else
                          f"The {node.label} is in the {tag}.", places=_room_scores(ctx, node, idx, tag))

    # ------------------------------------------------------------------ option scoring
    def score_options(self, pred: Prediction, opts: Sequence[OptionMeaning],
                      targets: Sequence[Target]) -> np.ndarray:
        raw = np.zeros(len(opts))
        for i, o in enumerate(opts):
            if pred.kind == PredictionKind.AZIMUTH and o.azimuth_deg is not None:
                sigma = self.clock_sigma_deg if o.kind == OptionKind.CLOCK else self.direction_sigma_deg
                raw[i] = np.exp(-0.5 * (_angle_diff(o.azimuth_deg, pred.azimuth_deg) / sigma) ** 2)
            elif pred.kind == PredictionKind.PLACES and o.place:
                raw[i] = pred.places.get(canonical(o.place), 0.0)
            elif pred.kind == PredictionKind.COUNT and o.number is not None:
                k = int(round(o.number))
                near = np.exp(-2.0 * abs(o.number - pred.count))  # an option off the distribution: the nearest wins
                raw[i] = (pred.count_pmf[k] if 0 <= k < len(pred.count_pmf) else 0.0) + 1e-3 * near \
                    if pred.count_pmf else near
            elif pred.kind == PredictionKind.DISTANCE and o.metres is not None:
                raw[i] = np.exp(-0.5 * ((o.metres - pred.metres) / max(0.3, 0.25 * pred.metres)) ** 2)
            elif pred.kind in (PredictionKind.YES, PredictionKind.TARGETS) and o.kind in (OptionKind.YES, OptionKind.NO):
                raw[i] = pred.p_yes if o.kind == OptionKind.YES else 1.0 - pred.p_yes
            elif pred.kind == PredictionKind.TARGETS and o.objects:
                raw[i] = max(pred.target_scores.get(_option_key(t, targets), 0.0) for t in o.objects)
        return raw

    def abstain(self, ctx: QueryContext, t0: Optional[float] = None) -> Answer:
        """No answer: letter None, no option scores, confidence 0, flag "abstained" (never a silent guess)."""
        intent = ctx.intent
        if intent is None or intent.primitive == Primitive.UNKNOWN:
            why = "the question was not understood"
        elif intent.primitive == Primitive.OPEN:
            why = f"the question needs a visual language model (parse confidence {intent.confidence:.2f})"
        elif Flag.NO_TARGET in intent.flags:
            why = "the question names no object memory could look for"
        else:
            why = (f"the question was not understood well enough (read as {intent.kind}, confidence "
                   f"{intent.confidence:.2f} < {self.min_parse_confidence:.2f})")
        flags: list[Flag] = [Flag.ABSTAINED] + list(intent.flags if intent is not None else ())
        if intent is not None and intent.primitive != Primitive.OPEN and Flag.NOT_UNDERSTOOD not in flags:
            flags.append(Flag.NOT_UNDERSTOOD)
        return Answer(question=ctx.question, t_s=ctx.t_s, text=f"No answer from memory geometry: {why}.", letter=None,
                      confidence=0.0, option_scores=None, evidence=ctx.evidence, subgraph_text=ctx.subgraph_text,
                      answerer=self.name, flags=tuple(dict.fromkeys(flags)),
                      latency_s=time.perf_counter() - t0 if t0 is not None else 0.0)

    def answer(self, ctx: QueryContext) -> Answer:
        t0 = time.perf_counter()
        if ctx.intent is None or not ctx.intent.answerable(self.min_parse_confidence):
            return self.abstain(ctx, t0)
        pred = self.predict(ctx)
        opts = ctx.facts.options
        flags: list[Flag] = list(pred.flags)
        letter, scores, conf = None, None, pred.confidence
        if opts:
            raw = self.score_options(pred, opts, ctx.intent.targets) if pred.kind != PredictionKind.NONE else np.zeros(len(opts))
            if raw.max(initial=0.0) < 1e-3:
                conf = 0.0
                if pred.kind != PredictionKind.NONE:
                    flags.append(Flag.OPTIONS_MISMATCH)
                    raw = _nearest_option(pred, opts)
            if raw.max(initial=0.0) <= 0.0:  # nothing to go on: no letter (never a silent "A")
                pred = Prediction(PredictionKind.NONE, pred.text, flags=pred.flags)
                raw = np.ones(len(opts))
            p = (raw + _EPS) / (raw + _EPS).sum()
            letters = OPTION_LETTERS[:len(opts)]
            scores = {letters[i]: float(p[i]) for i in range(len(opts))}
            letter = letters[int(np.argmax(p))]
            conf = float(min(conf, p.max())) if conf > 0 else 0.0
            if pred.kind == PredictionKind.NONE:  # no evidence: uniform scores and no letter, not a silent "A"
                letter = None
                flags.append(Flag.ABSTAINED)
        text = pred.text if letter is None else f"{letter}. {ctx.options[OPTION_LETTERS.index(letter)]} ({pred.text})"
        return Answer(question=ctx.question, t_s=ctx.t_s, text=text, letter=letter, confidence=conf,
                      option_scores=scores, evidence=ctx.evidence, subgraph_text=ctx.subgraph_text,
                      answerer=self.name, flags=tuple(dict.fromkeys(flags + list(ctx.intent.flags))),
                      latency_s=time.perf_counter() - t0)

    def answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]:
        return [self.answer(c) for c in ctxs]


def _nearest_option(pred: Prediction, opts: Sequence[OptionMeaning]) -> np.ndarray:
    """When no option is what memory says (0 objects among "One" .. "Five"; 3.4 m among 1, 2, 5, 8, 9 m): the
    option nearest to it on the same scale (answered at confidence 0, flagged options_mismatch); zeros when
    the options have no scale in common with the prediction (a room not offered)."""
    raw = np.zeros(len(opts))
    for i, o in enumerate(opts):
        if pred.kind == PredictionKind.COUNT and o.number is not None:
            raw[i] = np.exp(-abs(o.number - pred.count))
        elif pred.kind == PredictionKind.DISTANCE and o.metres is not None:
            raw[i] = np.exp(-abs(np.log(max(o.metres, 0.05) / max(pred.metres, 0.05))))
        elif pred.kind == PredictionKind.AZIMUTH and o.azimuth_deg is not None:
            raw[i] = 1.0 + np.cos(np.radians(_angle_diff(o.azimuth_deg, pred.azimuth_deg)))
    return raw


def _share(votes: dict[str, float], place: str) -> float:
    total = sum(votes.values())
    return float(sum(w for t, w in votes.items() if canonical(t) == canonical(place)) / total) if total > 0 else 0.0


def _put_back(ctx: QueryContext, node: ObjectNode, sure_p: float) -> bool:
    """Was the object found gone from its current placement (with probability ``sure_p`` at least) and seen
    there again since the placement began (taken and put back about where it was)? Then the latest pickup was
    from that placement, not from the one before. (A brief doubt - a view or two that missed it - is not that;
    nor is gone without a return: a view that missed it by pose drift also does that.)"""
    start = node.position_history[-1][0] if node.position_history else node.first_seen_s
    removed = False
    for e in ctx.snapshot.changes:
        if e.node_id != node.node_id or e.before_s <= start:
            continue
        if e.kind == EventKind.REMOVED:
            removed = e.confidence >= sure_p
        elif e.kind == EventKind.RETURNED and removed:
            return True
    return False


def _room_scores(ctx: QueryContext, node: ObjectNode, placement: int, best: str) -> dict[str, float]:
    """The chosen room first (1.0), then the other rooms memory has evidence for, by their share of the
    evidence (below 1): when the best room is not among the options (a doorway seen from the corridor),
    the next one answers."""
    votes = place_votes(ctx.snapshot, node, placement)
    total = sum(votes.values()) or 1.0
    scores = {canonical(tag): 0.5 * w / total for tag, w in votes.items()}
    scores[canonical(best)] = 1.0
    return scores


def _vote_share(node: ObjectNode, label: str) -> float:
    total = sum(node.label_votes.values())
    return float(node.label_votes.get(label, 0.0) / total) if total > 0 else 1.0


def _merge_runs(runs: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """Merge consecutive runs of the same place (after pass-through places were dropped)."""
    out: list[tuple[float, float, str]] = []
    for start, end, tag in runs:
        if out and out[-1][2] == tag:
            out[-1] = (out[-1][0], end, tag)
        else:
            out.append((start, end, tag))
    return out


def _option_key(option_target: Target, targets: Sequence[Target]) -> str:
    """Map an option's object to the question target it names (by key, else head noun)."""
    keys = [t.key for t in targets]
    if option_target.key in keys or not keys:
        return option_target.key
    head = option_target.key.split()[-1]
    return next((k for k in keys if k.split()[-1] == head), option_target.key)


def build(options=None) -> GeometricAnswerer:
    """Factory used by the answerer registry (``options`` are GeometricAnswerer keyword arguments); an unknown
    option or a value of the wrong type (not a finite number; not an integer where the default is one) is an
    InvalidInputError naming it."""
    import inspect
    import math

    from ..errors import InvalidInputError

    opts = dict(options or {})
    params = {k: p.default for k, p in inspect.signature(GeometricAnswerer.__init__).parameters.items() if k != "self"}
    for key, value in opts.items():
        if key not in params:
            raise InvalidInputError(f"unknown geometric answerer options [{key!r}]; known: {sorted(params)}")
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        want_int = isinstance(params[key], int) and not isinstance(params[key], bool)
        if not number or (want_int and not isinstance(value, int)):
            raise InvalidInputError(f"answerer.options.{key}: expected {'an integer' if want_int else 'a number'}, "
                                    f"got {value!r:.40}")
    return GeometricAnswerer(**opts)
