"""What an answerer computes from memory before it meets the options: a Prediction in one of several
forms, the small helpers the solvers share (the best node for a target, a no-evidence result), and how
well each option of a question fits a prediction."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ..geometry import ground_distance_m
from ..memory.snapshot import ObjectNode
from ..query.ego import ego_frame_at, position_at
from ..query.options import OptionKind, OptionMeaning
from ..query.parsed import Target
from ..query.retrieval import Match
from ..query.types import Evidence, QueryContext
from ..query.vocab import canonical
from ..types import Flag, TextEnum
from .geometric_config import MetricConfig, ScoringConfig

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
    NUMBER = "number"  # a measurement: ``value`` in ``unit`` (a size in cm, an area in m2)
    SEQUENCE = "sequence"  # a fit per option, computed by the solver (orders, routes: options listing items)
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
    # the memory items it rests on, when narrower than the context's (a count: those counted)
    evidence: tuple[Evidence, ...] = ()
    value: Optional[float] = None  # a numeric answer (Answer.value), in ``unit``
    unit: str = ""
    option_fit: tuple[float, ...] = ()  # SEQUENCE: how well each option fits (not normalised)


def no_answer(reason: str, flag: Flag = Flag.NO_EVIDENCE) -> Prediction:
    return Prediction(PredictionKind.NONE, text=reason, confidence=0.0, flags=(flag,))


def known_place(tag: Optional[str]) -> Optional[str]:
    """A place tag that names a room, else None (memory tags untagged places "unknown")."""
    return tag if tag and tag.strip().lower() not in _NO_ROOM else None


def angle_diff(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def best_node(ctx: QueryContext, i: int, nearest_min_obs: int,
              doubt_m: float = MetricConfig.doubt_m) -> Optional[ObjectNode]:
    """The node meant by target ``i``: of the best label matches, the one nearest the wearer at the asked time, each
    doubt about an instance (believed gone; seen fewer than ``nearest_min_obs`` times) counting as ``doubt_m``
    metres farther. "The sink" is the one of the home the wearer is in, even when memory believes it gone and
    another home's sink present; within a home, a present, well-seen instance is meant. Without the wearer's
    pose: the present, most seen, latest seen one."""
    matches: tuple[tuple[Match, ...], ...] = ctx.facts.matches
    if i >= len(matches) or not matches[i]:
        return None
    top = max(m.score for m in matches[i])
    nodes = [ctx.snapshot.objects[m.node_id] for m in matches[i] if m.score >= top - 1e-9]
    t = ctx.facts.time.t_eval
    frame = ego_frame_at(ctx.snapshot, t) if len(nodes) > 1 else None
    if frame is None:
        return max(nodes, key=lambda n: (n.present, n.n_obs, n.last_seen_s))

    def cost_m(n: ObjectNode) -> float:
        doubts = (not n.present) + (n.n_obs < nearest_min_obs)
        return ground_distance_m(frame.to_ego(position_at(n, t))) + doubt_m * doubts

    return min(nodes, key=cost_m)


def target_nodes(ctx: QueryContext, i: int, min_meaning_score: float = 0.0) -> list[ObjectNode]:
    """The nodes matched to target ``i``; those matched by meaning alone (embedding) only at a score of at
    least ``min_meaning_score``."""
    matches = ctx.facts.matches
    return [ctx.snapshot.objects[m.node_id] for m in matches[i]
            if m.how != "embedding" or m.score >= min_meaning_score] if i < len(matches) else []


def score_options(pred: Prediction, opts: Sequence[OptionMeaning], targets: Sequence[Target],
                  cfg: ScoringConfig) -> np.ndarray:
    """How well each option fits what memory says (not normalised; 0: does not fit at all). Azimuths fit by a
    Gaussian of the angle (``cfg.clock_sigma_deg`` for clock options, ``cfg.direction_sigma_deg`` for the
    others), distances by one of the distance's scale, counts by their probability."""
    raw = np.zeros(len(opts))
    for i, o in enumerate(opts):
        if pred.kind == PredictionKind.AZIMUTH and o.azimuth_deg is not None:
            sigma = cfg.clock_sigma_deg if o.kind == OptionKind.CLOCK else cfg.direction_sigma_deg
            raw[i] = np.exp(-0.5 * (angle_diff(o.azimuth_deg, pred.azimuth_deg) / sigma) ** 2)
        elif pred.kind == PredictionKind.PLACES and o.place:
            raw[i] = pred.places.get(canonical(o.place), 0.0)
        elif pred.kind == PredictionKind.COUNT and o.number is not None:
            k = int(round(o.number))
            near = np.exp(-cfg.count_off_decay * abs(o.number - pred.count))  # off the distribution: the nearest wins
            raw[i] = (pred.count_pmf[k] if 0 <= k < len(pred.count_pmf) else 0.0) + cfg.count_off_weight * near \
                if pred.count_pmf else near
        elif pred.kind == PredictionKind.SEQUENCE and i < len(pred.option_fit):
            raw[i] = pred.option_fit[i]
        elif pred.kind == PredictionKind.NUMBER and pred.value and _option_value(o, pred.unit) is not None:
            raw[i] = _number_fit(_option_value(o, pred.unit), pred.value, cfg.number_sigma_frac)
        elif pred.kind == PredictionKind.DISTANCE and o.metres is not None:
            sigma_m = max(cfg.metres_sigma_min_m, cfg.metres_sigma_frac * pred.metres)
            raw[i] = np.exp(-0.5 * ((o.metres - pred.metres) / sigma_m) ** 2)
        elif pred.kind in (PredictionKind.YES, PredictionKind.TARGETS) and o.kind in (OptionKind.YES, OptionKind.NO):
            raw[i] = pred.p_yes if o.kind == OptionKind.YES else 1.0 - pred.p_yes
        elif pred.kind == PredictionKind.TARGETS and o.objects:
            raw[i] = max(pred.target_scores.get(_option_key(t, targets), 0.0) for t in o.objects)
    return raw


def nearest_option(pred: Prediction, opts: Sequence[OptionMeaning], cfg: ScoringConfig = ScoringConfig()) -> np.ndarray:
    """When no option is what memory says (0 objects among "One" .. "Five"; 3.4 m among 1, 2, 5, 8, 9 m): the
    option nearest to it on the same scale (answered at confidence 0, flagged options_mismatch); zeros when
    the options have no scale in common with the prediction (a room not offered)."""
    raw = np.zeros(len(opts))
    for i, o in enumerate(opts):
        if pred.kind == PredictionKind.COUNT and o.number is not None:
            raw[i] = np.exp(-abs(o.number - pred.count))
        elif pred.kind == PredictionKind.SEQUENCE and i < len(pred.option_fit):
            raw[i] = pred.option_fit[i]
        elif pred.kind == PredictionKind.NUMBER and pred.value and _option_value(o, pred.unit) is not None:
            raw[i] = _number_fit(_option_value(o, pred.unit), pred.value, cfg.number_sigma_frac)
        elif pred.kind == PredictionKind.DISTANCE and o.metres is not None:
            raw[i] = np.exp(-abs(np.log(max(o.metres, 0.05) / max(pred.metres, 0.05))))
        elif pred.kind == PredictionKind.AZIMUTH and o.azimuth_deg is not None:
            raw[i] = 1.0 + np.cos(np.radians(angle_diff(o.azimuth_deg, pred.azimuth_deg)))
    return raw


def _number_fit(option: float, value: float, sigma_frac: float) -> float:
    """A numeric option's fit: a Gaussian of its difference from memory's value, ``sigma_frac`` x value wide."""
    return float(np.exp(-0.5 * ((option - value) / (sigma_frac * value)) ** 2))


def _option_value(o: OptionMeaning, unit: str) -> Optional[float]:
    """A numeric option in ``unit``: "150 cm" for a size in cm, "20" for square metres."""
    if o.metres is not None:
        return o.metres * (100.0 if unit == "cm" else 1.0)
    return float(o.number) if o.number is not None else None


def _option_key(option_target: Target, targets: Sequence[Target]) -> str:
    """Map an option's object to the question target it names (by key, else head noun)."""
    keys = [t.key for t in targets]
    if option_target.key in keys or not keys:
        return option_target.key
    head = option_target.key.split()[-1]
    return next((k for k in keys if k.split()[-1] == head), option_target.key)
