"""The built-in answerer: no model weights, answers from memory geometry.

For each primitive it computes what memory says (an ego azimuth, a room, a count, a yes/no
probability, which object is closer, a distance in metres, the objects around a reference), then
scores every option by how well its meaning fits; scores are normalised to sum to 1. Missing
evidence gives uniform scores and low confidence.

It abstains (letter None, confidence 0, flag "abstained") on questions it should not answer: kind
``open`` (attributes, states, activities: an MLLM's job), a parse confidence below
``min_parse_confidence``, no object named where one is needed, or an object it names (asked, reference or
viewpoint object) that is not in memory as of the asked time: that answer says so (flag "missing_object")
and never picks among the options left."""
from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from ..geometry import azimuth_deg, clock_hour, ground_distance_m
from ..memory.snapshot import ObjectNode
from ..query.context import node_evidence
from ..query.ego import current_place, direction_text, ego_frame_at, object_place, position_at
from ..errors import InvalidInputError
from ..query.options import OptionKind, OptionMeaning
from ..query.parsed import HERE, Primitive, Target
from ..query.timeref import place_runs
from ..query.vocab import canonical, counted, label_keys
from ..query.types import QueryContext
from ..types import OPTION_LETTERS, Answer, Flag
from .changes import change_kind, describe, events_of, option_scores
from .counting import class_probabilities, count_of_probabilities, put_down_links
from .prediction import Prediction, PredictionKind
from .prediction import best_node as _best_node
from .prediction import known_place as _known_place
from .prediction import nearest_option, score_options
from .prediction import no_answer as _none
from .prediction import target_nodes as _target_nodes
from .around import objects_around
from .calibration import UNCALIBRATED_FLAGS, load_calibration
from .places import back_at_start, current_room, metric_path, my_room, object_room
from .missing import missing_objects
from .coverage import view_coverage
from .recall import recall
from .geometric_config import GeometricConfig
from . import measure

class GeometricAnswerer:
    """Answers the eight UCS-Bench subtasks from the rendered memory (see module docstring)."""

    name = "geometric"

    def __init__(self, config: Optional[GeometricConfig] = None) -> None:
        self.config = GeometricConfig() if config is None else config
        if not isinstance(self.config, GeometricConfig):
            raise InvalidInputError(f"GeometricAnswerer takes a GeometricConfig, got {type(self.config).__name__}")
        self.calibration = load_calibration(self.config.calibration)  # confidence -> P(right), per kind

    @property
    def min_parse_confidence(self) -> float:
        """The parse confidence below which it abstains."""
        return self.config.min_parse_confidence

    # ------------------------------------------------------------------ solvers per primitive
    def predict(self, ctx: QueryContext) -> Prediction:
        intent = ctx.intent
        opts: Sequence[OptionMeaning] = ctx.facts.options
        if not intent.understood:
            return _none("question not understood", Flag.NOT_UNDERSTOOD)
        kinds = {o.kind for o in opts}
        prim = intent.primitive
        missing = missing_objects(ctx)
        if missing is not None:
            return missing
        if prim in (Primitive.OBJECT_LOCATION, Primitive.CURRENT_PLACE) and intent.floor_asked:
            return _none("memory knows rooms, not floors")
        if intent.solver == "object_room" or (kinds == {OptionKind.PLACE} and intent.targets
                                               and prim not in (Primitive.MY_TRAJECTORY, Primitive.COUNT)):
            return self.solver("object_room")(ctx)  # uses the placement history, not the event time
        if prim == Primitive.MY_TRAJECTORY and intent.back_at_start:
            return back_at_start(ctx, self.config.places)
        if prim == Primitive.MY_TRAJECTORY and intent.walked:  # "how far have I walked (since ...)"
            path = ctx.facts.metric_path
            return Prediction(PredictionKind.DISTANCE, path.describe(), metres=path.walked_m) if path else \
                _none("no camera pose in memory")
        if prim == Primitive.MY_TRAJECTORY and not place_runs(ctx.snapshot, ctx.facts.rooms):
            # no scene tags: from the poses alone
            return metric_path(ctx, self.config.confidence)
        if not ctx.facts.time.ok:
            return _none(ctx.facts.time.detail)
        if prim in (Primitive.OPEN, Primitive.UNKNOWN):
            return _none("the question needs a visual language model", Flag.ABSTAINED)
        return self.solver(intent.solver)(ctx)

    def solver(self, name: str) -> Callable[[QueryContext], Prediction]:
        """The solver a question kind names (``Intent.solver``, from its module in query/kinds)."""
        cfg = self.config.measure
        solvers: dict[str, Callable[[QueryContext], Prediction]] = {
            "ego_direction": self._ego_direction, "facing": self._facing, "relative": self._relative,
            "distance": self._distance, "reach": self._reach, "count": self._count, "recall": self._recall,
            "my_room": self._my_room, "metres": self._metres, "objects_around": self._objects_around,
            "current_room": current_room, "changes": self._changes,
            "object_room": lambda c: object_room(c, self.config.places, self.config.confidence, self.config.metric),
            # the measurement kinds (measure.py): sizes, room areas, first-appearance orders, routes, closest points
            "longest_side": lambda c: measure.object_size(c, cfg), "floor_area": lambda c: measure.room_size(c, cfg),
            "first_seen_order": lambda c: measure.appearance_order(c, cfg),
            "route_turns": lambda c: measure.route_plan(c, cfg),
            "closest_distance": lambda c: measure.closest_distance(c, cfg)}
        if name not in solvers:
            raise InvalidInputError(f"no geometric solver {name!r:.40}; known: {', '.join(solvers)}")
        return solvers[name]

    def _node(self, ctx: QueryContext, i: int) -> Optional[ObjectNode]:
        """The node target ``i`` means (prediction.best_node: the nearest instance, doubtful ones counted farther)."""
        m = self.config.metric
        return _best_node(ctx, i, m.nearest_min_obs, m.doubt_m)

    def _ego_direction(self, ctx: QueryContext) -> Prediction:
        node = self._node(ctx, 0)
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        if node is None or frame is None:
            return _none(f"no '{ctx.intent.targets[0].text if ctx.intent.targets else '?'}' in memory")
        p_e = frame.to_ego(position_at(node, ctx.facts.time.t_eval))
        az = azimuth_deg(p_e)
        conf = 1.0 if node.present else self.config.confidence.gone_object
        text = (f"The {node.label} is {direction_text(az)} ({clock_hour(az)} o'clock), "
                f"{ground_distance_m(p_e):.1f} m away.")
        return Prediction(PredictionKind.AZIMUTH, text, conf, azimuth_deg=az)

    def _facing(self, ctx: QueryContext) -> Prediction:
        """Where the object is for someone facing the reference: from where the wearer stands, or from an
        imagined place ("if I sit on the couch facing the TV")."""
        intent, t = ctx.intent, ctx.facts.time.t_eval
        view = intent.viewpoint
        face_i = intent.index_of(view.facing) if view is not None else len(intent.targets) - 1
        at_i = intent.index_of(view.at) if view is not None else None
        if face_i is None:
            return _none("the imagined viewpoint does not say which way it faces")
        obj, ref = self._node(ctx, 0), self._node(ctx, face_i)
        at = self._node(ctx, at_i) if at_i is not None else None
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
        a, b = self._node(ctx, 0), self._node(ctx, 1)
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        if a is None or b is None or frame is None:
            return _none("an object of the question is not in memory")
        t = ctx.facts.time.t_eval
        d = frame.T_world_ego.R.T @ (position_at(a, t) - position_at(b, t))
        az = azimuth_deg(d)
        return Prediction(PredictionKind.AZIMUTH,
                          f"From your view, the {a.label} is {direction_text(az)} of the {b.label}.", azimuth_deg=az)

    def _origin(self, ctx: QueryContext) -> tuple[Optional[np.ndarray], str]:
        """Where distances are measured from, in the ego frame at t: the named reference ("closer to the
        window") or the wearer (None when the reference is not in memory)."""
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        if frame is None:
            return None, ""
        if not ctx.intent.references:
            return np.zeros(3), "you"
        ref = self._node(ctx, ctx.intent.index_of(ctx.intent.references[0]))
        if ref is None:
            return None, ""
        return frame.to_ego(position_at(ref, ctx.facts.time.t_eval)), f"the {ref.label}"

    def _distances(self, ctx: QueryContext) -> dict[str, float]:
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        origin, _ = self._origin(ctx)
        out = {}
        for target in ctx.intent.asked:
            node = self._node(ctx, ctx.intent.index_of(target))
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
        return Prediction(PredictionKind.DISTANCE, f"The {key} is {d:.1f} m from {from_what}.", metres=d, value=d,
                          unit="m")

    def _distance(self, ctx: QueryContext) -> Prediction:
        dist = measure.closest_distances(ctx, self.config.measure) if ctx.intent.closest_points \
            else self._distances(ctx)
        keys = [t.key for t in ctx.intent.asked]
        if len(keys) < 2:
            return self._extreme(ctx)  # "which object is closest to the window?"
        if not dist:
            return _none("the objects to compare are not in memory")
        sign = 1.0 if ctx.intent.comparison == "farther" else -1.0
        known = {k: sign * d / self.config.metric.compare_scale_m for k, d in dist.items()}
        floor = min(known.values()) - self.config.metric.unseen_logit_gap
        logits = np.array([known.get(k, floor) for k in keys])
        p = np.exp(logits - logits.max())
        p /= p.sum()
        best = keys[int(np.argmax(p))]
        text = ", ".join(f"{k}: {d:.1f} m" for k, d in dist.items())
        conf = 1.0 if len(dist) == len(keys) else self.config.confidence.partial_compare
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
        p = float(0.5 + 0.5 * np.tanh((reach - d) / (2.0 * self.config.metric.reach_scale_m)))  # logistic, no overflow
        verdict = "within" if p >= 0.5 else "out of"
        return Prediction(PredictionKind.YES, f"It is {d:.1f} m away, {verdict} reach ({reach:.1f} m).", p_yes=p)

    def _count(self, ctx: QueryContext) -> Prediction:
        if not ctx.intent.targets:
            return _none("no object to count", Flag.NO_TARGET)
        target = ctx.intent.targets[0]
        place = target.place or (ctx.intent.places[0] if ctx.intent.places else None)
        counting, coverage = self.config.counting, self.config.coverage
        place = _known_place(current_place(ctx.snapshot, ctx.facts.time.t_eval)) if place == HERE else place
        seen = view_coverage(ctx.snapshot, coverage.view_hfov_deg, place)
        if place and seen.n_frames == 0:  # a room never entered (or no room names): nothing to count from
            return _none(f"no frame of the {place} in memory as of {ctx.t_s:.0f} s, so nothing to count there")
        # things only like the asked class in meaning (a nightstand for "desks") are not of it: an embedding match
        # counts only when it is as close as a synonym the vocabulary lacks
        nodes = [n for n in _target_nodes(ctx, 0, counting.min_similarity) if n.n_obs >= counting.min_obs]
        scored = class_probabilities(nodes, lambda label: target.key in label_keys(label),
                                     counting.label_vote_logodds)
        # the put-down links over every candidate: the old place may lie outside the asked room
        links = put_down_links(scored, ctx.snapshot.ego, ctx.snapshot.up_world, self.config.put_down)
        if place:
            scored = [(n, p) for n, p in scored
                      if canonical(object_place(ctx.snapshot, n, -1, ctx.facts.rooms) or "") == canonical(place)]
        belief, kept = count_of_probabilities(scored, counting.duplicate_radius_m, counting.min_p, carried=links)
        k = belief.most_likely
        where = f" in the {place}" if place else ""
        known = bool(ctx.snapshot.objects)  # no object at all in memory (no detector?): a count of 0 is a guess
        sure = belief.p(k) >= counting.sure_p
        text = f"{counted(k, target.text)}{where}" + (
            "." if sure else f" (expected {belief.expected:.1f}, P={belief.p(k):.2f}).")
        conf = belief.p(k) if known else self.config.confidence.no_objects_count
        if k == 0:  # none seen is only as sure as the share of the surroundings looked at
            conf *= seen.absence_confidence(coverage.absent_prior)
            text = f"{text[:-1]} ({seen.describe()})."
        counted_nodes = tuple(node_evidence(ctx.snapshot, n.node_id, f"counted with probability {p:.2f}" + (
            f" (maybe carried to {links[n.node_id][1]})" if n.node_id in links else "")) for n, p in kept)
        return Prediction(PredictionKind.COUNT, text, conf, count=k, count_pmf=belief.pmf, value=float(k),
                          flags=() if known else (Flag.NO_EVIDENCE,), evidence=counted_nodes)

    def _recall(self, ctx: QueryContext) -> Prediction:
        coverage = self.config.coverage
        seen = view_coverage(ctx.snapshot, coverage.view_hfov_deg, ctx.intent.places[0] if ctx.intent.places else None)
        return recall(ctx, coverage.absent_prior, seen, self.config.recall)

    def _my_room(self, ctx: QueryContext) -> Prediction:
        return my_room(ctx, self.config.confidence)

    def _changes(self, ctx: QueryContext) -> Prediction:
        """What changed (memory/events.py, as known at the asked time): the moved / new / missing objects,
        scored per object option; or, with one object named, whether it is still where memory saw it."""
        kind = change_kind(ctx.intent)
        place = ctx.intent.places[0] if ctx.intent.places else None
        if kind is None:  # "is the cup still there": its presence belief
            node = self._node(ctx, 0)
            if node is None:
                return _none("the object is not in memory")
            p = float(node.presence_p)
            where = _known_place(object_place(ctx.snapshot, node, -1, ctx.facts.rooms))
            verdict = "still there" if p >= 0.5 else "no longer there"
            return Prediction(PredictionKind.YES, f"The {node.label} is {verdict} (P={p:.2f}, last seen at "
                              f"{node.last_seen_s:.0f} s{' in the ' + where if where else ''}).", p_yes=p)
        events = events_of(ctx, kind, place)
        scores = option_scores(ctx, events)
        text = describe(events, kind)
        conf = self.config.confidence
        p_yes = conf.found_p_yes if events else conf.missed_p_yes
        if scores:
            hit = [k for k, v in scores.items() if v > 0]
            return Prediction(PredictionKind.TARGETS, text, 1.0 if len(hit) == 1 else conf.several_found,
                              target_scores=scores, p_yes=p_yes)
        return Prediction(PredictionKind.YES, text, 1.0 if events else conf.no_change, p_yes=p_yes)

    def _objects_around(self, ctx: QueryContext) -> Prediction:
        return objects_around(ctx, self.config.relations, self.config.confidence, self.config.metric)

    def _extreme(self, ctx: QueryContext) -> Prediction:
        """"What is the nearest object to me?", "Which chair is farthest from the door?": the closest (or
        farthest) object in memory, among those matching the asked one when one is named."""
        frame = ego_frame_at(ctx.snapshot, ctx.facts.time.t_eval)
        origin, from_what = self._origin(ctx)
        if frame is None or origin is None:
            return _none("the reference is not in memory")
        t = ctx.facts.time.t_eval
        refs = {id(self._node(ctx, ctx.intent.index_of(r))) for r in ctx.intent.references}
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
        scale_m = max(self.config.metric.compare_scale_m, self.config.metric.extreme_scale_min_m)
        for nid, d in dist.items():
            for key in label_keys(ctx.snapshot.objects[nid].label):
                p = float(np.exp(sign * (d - dist[best]) / scale_m))
                scores[key] = max(scores.get(key, 0.0), p)
        word = "farthest" if sign > 0 else "closest"
        return Prediction(PredictionKind.TARGETS, f"The {node.label} is {word} to {from_what} ({dist[best]:.1f} m).",
                          target_scores=scores)

    # ------------------------------------------------------------------ option scoring
    def score_options(self, pred: Prediction, opts: Sequence[OptionMeaning], targets: Sequence[Target]) -> np.ndarray:
        return score_options(pred, opts, targets, self.config.scoring)

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
            raw = self.score_options(pred, opts, ctx.intent.targets) if pred.kind != PredictionKind.NONE else \
                np.zeros(len(opts))
            if raw.max(initial=0.0) < self.config.scoring.mismatch_below:
                conf = 0.0
                if pred.kind != PredictionKind.NONE:
                    flags.append(Flag.OPTIONS_MISMATCH)
                    raw = nearest_option(pred, opts, self.config.scoring)
            if raw.max(initial=0.0) <= 0.0:  # nothing to go on: no letter (never a silent "A")
                pred = Prediction(PredictionKind.NONE, pred.text, flags=pred.flags)
                raw = np.ones(len(opts))
            floor = self.config.scoring.score_floor
            p = (raw + floor) / (raw + floor).sum()
            letters = OPTION_LETTERS[:len(opts)]
            scores = {letters[i]: float(p[i]) for i in range(len(opts))}
            letter = letters[int(np.argmax(p))]
            conf = float(min(conf, p.max())) if conf > 0 else 0.0
            if pred.kind == PredictionKind.NONE:  # no evidence: uniform scores and no letter, not a silent "A"
                letter = None
        if pred.kind == PredictionKind.NONE:  # no answer, with options or without
            flags.append(Flag.ABSTAINED)
        elif (letter is not None or not opts) and not UNCALIBRATED_FLAGS & {*flags, *ctx.intent.flags}:
            conf = self.calibration(ctx.intent.primitive.value, conf)
        text = pred.text if letter is None else f"{letter}. {ctx.options[OPTION_LETTERS.index(letter)]} ({pred.text})"
        return Answer(question=ctx.question, t_s=ctx.t_s, text=text, letter=letter, confidence=conf,
                      option_scores=scores, evidence=pred.evidence or ctx.evidence, subgraph_text=ctx.subgraph_text,
                      answerer=self.name, flags=tuple(dict.fromkeys(flags + list(ctx.intent.flags))),
                      latency_s=time.perf_counter() - t0,
                      value=None if pred.kind == PredictionKind.NONE else pred.value, unit=pred.unit)

    def answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]:
        return [self.answer(c) for c in ctxs]


def build(options: Optional[Mapping[str, Any]] = None) -> GeometricAnswerer:
    """Factory used by the answerer registry: ``options`` is GeometricConfig as a mapping of sections (see
    geometric_config.py); an unknown key, a value of the wrong type or out of range is an InvalidInputError
    naming it (``answerer.options.counting.min_obs: expected an integer, got 1.5``)."""
    return GeometricAnswerer(GeometricConfig.from_options({} if options is None else options))
