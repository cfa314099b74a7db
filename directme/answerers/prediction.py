"""What an answerer computes from memory before it meets the options: a Prediction in one of several
forms, and the small helpers the solvers share (the best node for a target, a no-evidence result)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..memory.snapshot import ObjectNode
from ..query.retrieval import Match
from ..query.types import QueryContext
from ..types import Flag, TextEnum

_NO_ROOM = ("unknown", "none")  # place tags that name no room


class PredictionKind(TextEnum):
    """The form of what memory says."""

    AZIMUTH = "azimuth"  # an ego direction
    PLACES = "places"  # a probability per room
    PATH = "path"  # the wearer's path in metres and turns
    COUNT = "count"
    YES = "yes"  # a yes/no probability
    TARGETS = "targets"  # a score per asked object
    DISTANCE = "distance"  # metres
    NONE = "none"  # no evidence


@dataclass
class Prediction:
    """What memory says, in one of several forms, with a confidence in [0, 1]."""

    kind: PredictionKind
    text: str = ""
    confidence: float = 1.0
    azimuth_deg: float = 0.0
    places: dict[str, float] = field(default_factory=dict)  # tag -> probability
    count: int = 0
    p_yes: float = 0.5
    target_scores: dict[str, float] = field(default_factory=dict)  # target key -> score
    metres: float = 0.0
    count_pmf: tuple[float, ...] = ()  # P(count = k) per k, when the count is uncertain
    flags: tuple[Flag, ...] = ()


def no_answer(reason: str, flag: Flag = Flag.NO_EVIDENCE) -> Prediction:
    return Prediction(PredictionKind.NONE, text=reason, confidence=0.0, flags=(flag,))


def known_place(tag: Optional[str]) -> Optional[str]:
    """A place tag that names a room, else None (memory tags untagged places "unknown")."""
    return tag if tag and tag.strip().lower() not in _NO_ROOM else None


def angle_diff(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def best_node(ctx: QueryContext, i: int) -> Optional[ObjectNode]:
    matches: tuple[tuple[Match, ...], ...] = ctx.facts.matches
    if i >= len(matches) or not matches[i]:
        return None
    top = max(m.score for m in matches[i])
    nodes = [ctx.snapshot.objects[m.node_id] for m in matches[i] if m.score >= top - 1e-9]
    return max(nodes, key=lambda n: (n.present, n.n_obs, n.last_seen_s))


def target_nodes(ctx: QueryContext, i: int, min_meaning_score: float = 0.0) -> list[ObjectNode]:
    """The nodes matched to target ``i``; those matched by meaning alone (embedding) only at a score of at
    least ``min_meaning_score``."""
    matches = ctx.facts.matches
    return [ctx.snapshot.objects[m.node_id] for m in matches[i]
            if m.how != "embedding" or m.score >= min_meaning_score] if i < len(matches) else []
