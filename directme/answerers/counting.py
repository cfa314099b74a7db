"""Counts with uncertainty: each remembered object of the asked class contributes its presence
probability (memory/presence.py) times the probability that it is of the asked class; the count is then
a sum of independent Bernoulli variables, whose distribution (Poisson-binomial) gives the expected count
and the most likely one. Nodes of one class closer than a radius are one physical object seen twice
(noisy association): they count once, with the larger probability.

The class probability is a posterior over the labels the detector gave the object, not their share of
the votes: each sighting names the true class far more often than any one other class, so four votes
"basket" against one "trash can" make a basket almost surely (the share would say 0.8), and one vote
"backpack" among twenty "chair" makes a chair. Each unit of (score-weighted) vote adds
``label_vote_logodds`` to its label's log-odds against every other label the object was given."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from ..memory import ObjectNode


@dataclass(frozen=True)
class CountBelief:
    """The distribution of a count: ``pmf[k]`` = P(count = k)."""

    pmf: tuple[float, ...]

    @property
    def expected(self) -> float:
        return float(np.dot(np.arange(len(self.pmf)), self.pmf))

    @property
    def most_likely(self) -> int:
        return int(np.argmax(self.pmf))

    def p(self, k: int) -> float:
        return self.pmf[k] if 0 <= k < len(self.pmf) else 0.0


def poisson_binomial(ps: Sequence[float]) -> CountBelief:
    """Distribution of the number of successes of independent trials with chances ``ps``."""
    pmf = np.ones(1)
    for p in ps:
        p = min(max(float(p), 0.0), 1.0)
        pmf = np.append(pmf * (1.0 - p), 0.0) + np.append(0.0, pmf * p)
    return CountBelief(tuple(float(v) for v in pmf))


def label_probability(votes: Mapping[str, float], asked: Callable[[str], bool], logodds_per_vote: float) -> float:
    """Posterior probability that an object with these label ``votes`` is of a label for which ``asked``
    holds (a uniform prior over the labels voted for; 1.0 when nothing was voted)."""
    labels = [(lab, float(w)) for lab, w in votes.items() if w > 0]
    if not labels:
        return 1.0
    top = max(w for _, w in labels)
    weights = [(asked(lab), math.exp(logodds_per_vote * (w - top))) for lab, w in labels]
    return sum(x for ok, x in weights if ok) / sum(x for _, x in weights)


def count_belief(nodes: Sequence[ObjectNode], duplicate_radius_m: float, min_p: float = 0.02,
                 asked: Optional[Callable[[str], bool]] = None,
                 label_vote_logodds: float = 3.0) -> tuple[CountBelief, list[tuple[ObjectNode, float]]]:
    """The count's distribution over ``nodes`` (already matched to the asked class and place: each counts
    with its presence probability times the probability that it is of a label ``asked`` accepts, the
    node's own label when not given) and the nodes that contribute with their probability, largest first."""
    scored = []
    for n in nodes:
        p_label = 1.0  # matched by its name alone (no vote names the asked class, nor its own label): in full
        for is_asked in ((asked,) if asked else ()) + ((lambda lab, own=n.label: lab == own),):
            if any(is_asked(lab) for lab in n.label_votes):
                p_label = label_probability(n.label_votes, is_asked, label_vote_logodds)
                break
        p = float(n.presence_p) * p_label
        if p >= min_p:
            scored.append((n, p))
    kept: list[tuple[ObjectNode, float]] = []
    for n, p in sorted(scored, key=lambda np_: (-np_[1], -np_[0].n_obs)):
        if all(np.linalg.norm(np.asarray(n.position_w) - np.asarray(k.position_w)) >= duplicate_radius_m for k, _ in kept):
            kept.append((n, p))
    return poisson_binomial([p for _, p in kept]), kept
