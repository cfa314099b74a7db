"""Counts with uncertainty: each remembered object of the asked class contributes its presence
probability (memory/presence.py) times its label's share of the votes; the count is then a sum of
independent Bernoulli variables, whose distribution (Poisson-binomial) gives the expected count and the
most likely one. Nodes of one class closer than a radius are one physical object seen twice (noisy
association): they count once, with the larger probability."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

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


def count_belief(nodes: Sequence[ObjectNode], duplicate_radius_m: float,
                 min_p: float = 0.02) -> tuple[CountBelief, list[tuple[ObjectNode, float]]]:
    """The count's distribution over ``nodes`` (already matched to the asked class and place: each counts
    with its presence probability times the vote share of its label) and the nodes that contribute with
    their probability, largest first."""
    scored = []
    for n in nodes:
        total = sum(n.label_votes.values())
        share = float(n.label_votes.get(n.label, 0.0) / total) if total > 0 and n.label in n.label_votes else 1.0
        p = float(n.presence_p) * share
        if p >= min_p:
            scored.append((n, p))
    kept: list[tuple[ObjectNode, float]] = []
    for n, p in sorted(scored, key=lambda np_: (-np_[1], -np_[0].n_obs)):
        if all(np.linalg.norm(np.asarray(n.position_w) - np.asarray(k.position_w)) >= duplicate_radius_m for k, _ in kept):
            kept.append((n, p))
    return poisson_binomial([p for _, p in kept]), kept
