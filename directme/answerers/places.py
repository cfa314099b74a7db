"""Room and path answers: which room the wearer is in, was in before or after an event ("where did I go
after the kitchen?"), the path walked (as rooms, or as metres and turns without scene tags), and which room
an object is in or was in before it was moved."""
from __future__ import annotations

import numpy as np

from ..memory.snapshot import EventKind, ObjectNode
from ..query.ego import current_place, object_place, place_votes
from ..query.parsed import HERE, TimeKind
from ..query.timeref import place_event_index, place_runs, subject_place
from ..query.types import QueryContext
from ..query.vocab import canonical
from ..types import Flag
from .geometric_config import ConfidenceConfig, MetricConfig, PlacesConfig
from .prediction import Prediction, PredictionKind
from .prediction import best_node as _best_node
from .prediction import known_place as _known_place
from .prediction import no_answer as _none

def my_room(ctx: QueryContext, conf: ConfidenceConfig) -> Prediction:
    """The room of the asked moment (now, before / after entering or leaving a room), or the path as rooms."""
    ref, snap = ctx.intent.time_ref, ctx.snapshot
    runs = place_runs(snap, ctx.facts.rooms)
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
    if tag is not None and ref.kind == TimeKind.NOW and ctx.intent.path_asked:
        walked = ctx.facts.metric_path
        how_far = f"; you walked {walked.walked_m:.1f} m in {walked.t_to - walked.t_from:.0f} s" if walked else ""
        return Prediction(PredictionKind.PLACES, f"Your path: {path} (now in the {tag}){how_far}.",
                          places={canonical(tag): 1.0})
    if tag is None and ref.subject == HERE:
        return Prediction(PredictionKind.PLACES, f"No earlier room: you have been in the {subject} since the start "
                                    f"(your path: {path}).", conf.rooms_unknown, places={canonical(subject): 1.0})
    if tag is None:
        return _none(f"event '{ref.text}' not in memory")
    return Prediction(PredictionKind.PLACES, f"The {tag} (your path: {path}).", places={canonical(tag): 1.0})


def current_room(ctx: QueryContext) -> Prediction:
    """The room the wearer is in at the asked time."""
    tag = _known_place(current_place(ctx.snapshot, ctx.facts.time.t_eval))
    if not tag:
        return _none("the place you are in is not known: memory has no room names (no scene tags)",
                     Flag.NO_PLACES)
    return Prediction(PredictionKind.PLACES, f"You are in the {tag}.", places={canonical(tag): 1.0})


def metric_path(ctx: QueryContext, conf: ConfidenceConfig) -> Prediction:
    """The path as distances and turns (from the asked time, or the whole stream); asked about rooms,
    it says that memory has no room names (low confidence)."""
    path = ctx.facts.metric_path
    if path is None:
        return _none("no camera pose in memory")
    if ctx.intent.rooms_asked:
        return Prediction(PredictionKind.PATH, "No room names in memory (no scene tags). " + path.describe(),
                          conf.rooms_unknown,
                          flags=(Flag.NO_PLACES,))
    return Prediction(PredictionKind.PATH, path.describe())


def back_at_start(ctx: QueryContext, cfg: PlacesConfig) -> Prediction:
    """"Am I back where I started?": yes when the wearer now stands within ``cfg.back_radius_m`` (ground) of where
    the path began (or of where they were at the asked time); ``cfg.back_scale_m`` is the width of that boundary."""
    path = ctx.facts.metric_path
    if path is None:
        return _none("no camera pose in memory")
    p = float(1.0 / (1.0 + np.exp((path.net_m - cfg.back_radius_m) / cfg.back_scale_m)))
    verdict = "back near" if p >= 0.5 else "not back at"
    return Prediction(PredictionKind.YES, f"You are {verdict} where you were at {path.t_from:.0f} s "
                      f"({path.net_m:.1f} m away). {path.describe()}", p_yes=p)


def object_room(ctx: QueryContext, cfg: PlacesConfig, conf: ConfidenceConfig, metric: MetricConfig) -> Prediction:
    """The room the object is in, or was in before its latest move (``cfg.put_back_p``: see :func:`_put_back`;
    which instance the name means: ``metric``, prediction.best_node)."""
    node = _best_node(ctx, 0, metric.nearest_min_obs, metric.doubt_m)
    if node is None:
        return _none("the object is not in memory")
    n_place = max(1, len(node.position_history))
    before = ctx.intent.time_ref.relation == "before" and ctx.intent.time_ref.kind == TimeKind.EVENT
    if before and n_place < 2:  # no move seen: it was (and is) where memory has it
        tag = _known_place(object_place(ctx.snapshot, node, 0, ctx.facts.rooms))
        if not tag:
            return _none(f"the room of the {node.label} is not known (no scene tags)", Flag.NO_PLACES)
        return Prediction(PredictionKind.PLACES, f"No move of the {node.label} was seen; it is in the {tag}.",
                          conf.no_move_seen,
                          places={canonical(tag): 1.0})
    if not before:
        idx = n_place - 1
    elif ctx.intent.time_ref.which == "first":
        idx = 0
    else:  # the placement before the current one, unless it was taken from the current one and put back
        idx = n_place - 1 if _put_back(ctx, node, cfg.put_back_p) else n_place - 2
    tag = _known_place(object_place(ctx.snapshot, node, idx, ctx.facts.rooms))
    if not tag:
        return _none(f"the room of the {node.label} is not known (no scene tags)", Flag.NO_PLACES)
    return Prediction(PredictionKind.PLACES, f"The {node.label} was in the {tag}." if before else
                      f"The {node.label} is in the {tag}.",
                      places=_room_scores(ctx, node, idx, tag, cfg.other_room_weight))


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


def _room_scores(ctx: QueryContext, node: ObjectNode, placement: int, best: str,
                 other_weight: float) -> dict[str, float]:
    """The chosen room first (1.0), then the other rooms memory has evidence for, by their share of the
    evidence times ``other_weight`` (below 1): when the best room is not among the options (a doorway seen from
    the corridor), the next one answers."""
    votes = place_votes(ctx.snapshot, node, placement, ctx.facts.rooms)
    total = sum(votes.values()) or 1.0
    scores = {canonical(tag): other_weight * w / total for tag, w in votes.items()}
    scores[canonical(best)] = 1.0
    return scores


def _merge_runs(runs: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """Merge consecutive runs of the same place (after pass-through places were dropped)."""
    out: list[tuple[float, float, str]] = []
    for start, end, tag in runs:
        if out and out[-1][2] == tag:
            out[-1] = (out[-1][0], end, tag)
        else:
            out.append((start, end, tag))
    return out
