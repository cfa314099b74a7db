"""Recall answers: which of the offered objects were seen, whether a named object was seen ("did I see a
cup?"), and the objects seen in the order first seen ("what did I see first?", "... last?")."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..memory.snapshot import ObjectNode
from ..query.ego import object_place, place_votes
from ..query.parsed import SequenceEnd, Target
from ..query.retrieval import match_target
from ..query.types import QueryContext
from ..query.vocab import canonical, label_keys
from ..types import Flag
from .coverage import ViewCoverage
from .geometric_config import RecallConfig
from .prediction import Prediction, PredictionKind
from .prediction import no_answer as _none

_SHOWN = 8  # objects listed in the text of a "what did I see" answer


def recall(ctx: QueryContext, absent_prior: float, seen: ViewCoverage, cfg: RecallConfig) -> Prediction:
    """Which of the offered objects were seen (a score each); without object options, yes / no for the named
    object (not in memory: "no", as sure as the share of the surroundings looked at, ``seen``, allows - see
    coverage.py -, flag ``missing_object``); with none named, the objects seen in the order first seen."""
    place = ctx.intent.places[0] if ctx.intent.places else None
    offered = [Target(tgt.key, tgt.text) for o in ctx.facts.options for tgt in o.objects]
    named = offered or list(ctx.intent.targets)
    if not named:
        return seen_order(ctx, place)
    scores = {}
    for tgt in named:
        nodes = [ctx.snapshot.objects[m.node_id] for m in match_target(Target(tgt.key, tgt.text), ctx.snapshot)
                 if m.how in ("label", "vote", "head")]
        weights = [1.0] * len(nodes)
        if place:  # soft: the share of the room evidence pointing at the asked room
            weights = [max(_share(place_votes(ctx.snapshot, n, i, ctx.facts.rooms), place)
                           for i in range(len(n.position_history) or 1)) for n in nodes]
        scores[tgt.key] = float(sum(n.n_obs * _vote_share(n, n.label) * w for n, w in zip(nodes, weights)))
    target_scores = {k: 1.0 - np.exp(-s / cfg.sightings_scale) for k, s in scores.items()}
    if not offered:  # "did I see a cup?"
        key = named[0].key
        if scores[key] <= 0:
            where = f" in the {place}" if place else ""
            return Prediction(PredictionKind.YES, f"No '{named[0].text or key}'{where} in memory as of {ctx.t_s:.0f} s "
                              f"({seen.describe()}).", seen.absence_confidence(absent_prior), p_yes=0.0,
                              flags=(Flag.MISSING_OBJECT,))
        return Prediction(PredictionKind.YES, f"Seen: {key}.", p_yes=target_scores[key])
    seen = [k for k, s in scores.items() if s > 0]
    # several offered objects seen: as sure as the best one's share of the evidence
    total = sum(target_scores.values())
    share = max(target_scores.values()) / total if total > 0 else 0.0
    return Prediction(PredictionKind.TARGETS, "Seen: " + (", ".join(seen) or "none of these") + ".",
                      1.0 if len(seen) == 1 else share, target_scores=target_scores)


def seen_order(ctx: QueryContext, place: Optional[str]) -> Prediction:
    """The objects in memory (in the asked place) in the order first seen; "last" asks for the latest seen."""
    nodes = [n for n in ctx.snapshot.objects.values()
             if not place or canonical(object_place(ctx.snapshot, n, -1, ctx.facts.rooms) or "") == canonical(place)]
    if not nodes:
        return _none("no object in memory" + (f" in the {place}" if place else ""))
    nodes.sort(key=lambda n: n.first_seen_s)
    end = ctx.intent.sequence_end
    if end == SequenceEnd.LAST:
        last = max(nodes, key=lambda n: n.last_seen_s)
        return Prediction(PredictionKind.TARGETS, f"Last seen: the {last.label} (at {last.last_seen_s:.0f} s).",
                          target_scores={k: 1.0 for k in label_keys(last.label)})
    shown = ", ".join(f"{n.label} ({n.first_seen_s:.0f} s)" for n in nodes[:_SHOWN]) + (
        " ..." if len(nodes) > _SHOWN else "")
    lead = f"First seen: the {nodes[0].label}; in order: " if end == SequenceEnd.FIRST else \
        f"Seen{' in the ' + place if place else ''}, in the order first seen: "
    return Prediction(PredictionKind.TARGETS, lead + shown + ".",
                      target_scores={k: 1.0 for k in label_keys(nodes[0].label)})


def _share(votes: dict[str, float], place: str) -> float:
    total = sum(votes.values())
    return float(sum(w for t, w in votes.items() if canonical(t) == canonical(place)) / total) if total > 0 else 0.0


def _vote_share(node: ObjectNode, label: str) -> float:
    total = sum(node.label_votes.values())
    return float(node.label_votes.get(label, 0.0) / total) if total > 0 else 1.0
