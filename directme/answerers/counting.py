"""Counts with uncertainty: each remembered object of the asked class contributes its presence
probability (memory/presence.py) times the probability that it is of the asked class; the count is then
a sum of independent Bernoulli variables, whose distribution (Poisson-binomial) gives the expected count
and the most likely one. Nodes of one class closer than a radius are one physical object seen twice
(noisy association): they count once, with the larger probability.

The class probability is a posterior over the labels the detector gave the object, not their share of
the votes: each sighting names the true class far more often than any one other class, so four votes
"basket" against one "trash can" make a basket almost surely (the share would say 0.8), and one vote
"backpack" among twenty "chair" makes a chair. Each unit of (score-weighted) vote adds
``label_vote_logodds`` to its label's log-odds against every other label the object was given.

An object the wearer takes along is out of view while carried (held low, or a camera that does not show the
hands): memory sees it reached at its old place, then, maybe, once at the new place, with the wearer at hand's
reach again - too few sightings for memory to fold the new node into the old one (memory/ingest.py
``link_carried`` waits for a confirmed node). A count asked in that moment counts both. :func:`put_down_links`
reads the pattern from the snapshot: a node seen once, first seen within hand's reach of the wearer, and the
one (or several) confirmed node(s) of its label that the wearer came within hand's reach of after their last
sighting, not long before, elsewhere. Such an old node counts only with the chance that the new one is not
it (the new node's probability, shared among the candidates): the pair is one object, most likely at its new
place."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from ..geometry import ground_distances_m
from ..memory import ObjectNode
from ..memory.snapshot import EgoTrack
from ..validation import check_section


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


@dataclass(frozen=True)
class PutDownLink:
    """How a node seen once right by the wearer is read as an object the wearer carried there (counting.py)."""

    hand_reach_m: float = 1.2  # the wearer reached an object / put one down: ground distance at most this
    window_s: float = 60.0  # the new node was first seen at most this long after the old one's last sighting (0: off)
    min_move_m: float = 1.5  # ... at least this far from it along the ground (nearer: association's call)

    def __post_init__(self) -> None:
        check_section(self, "put_down", positive=("hand_reach_m",), non_negative=("window_s", "min_move_m"))


def put_down_links(nodes: Sequence[tuple[ObjectNode, float]], ego: EgoTrack, up_world: np.ndarray,
                   cfg: PutDownLink = PutDownLink()) -> dict[str, tuple[float, str]]:
    """For the (node, probability) pairs of one class: node id -> (chance that the object was carried away to a
    node seen once since, id of that node), for the old nodes of the pattern in the module docstring (none when
    ``cfg.window_s`` <= 0: off)."""
    out: dict[str, tuple[float, str]] = {}
    if len(ego) == 0 or cfg.window_s <= 0:
        return out
    for new, p_new in nodes:
        t_new = new.first_seen_s
        if new.n_obs != 1 or p_new <= 0.0 or \
                ego.nearest_approach_m(new.position_w, t_new, t_new, up_world) > cfg.hand_reach_m:
            continue
        old = [n for n, p in nodes if n is not new and n.n_obs > 1 and n.label == new.label and p > 0.0
               and 0.0 < t_new - n.last_seen_s <= cfg.window_s
               and not np.any(np.asarray(n.obs_times_s) == t_new)  # never seen in one frame
               and ground_distances_m(np.asarray(n.position_w)[None], new.position_w, up_world)[0] > cfg.min_move_m
               and ego.nearest_approach_m(n.position_w, n.last_seen_s, t_new, up_world) <= cfg.hand_reach_m]
        for n in old:
            share = p_new / len(old)
            prev = out.get(n.node_id, (0.0, ""))
            if share > prev[0]:
                out[n.node_id] = (share, new.node_id)
    return out


def count_of_probabilities(scored_nodes: Sequence[tuple[ObjectNode, float]], duplicate_radius_m: float,
                           min_p: float = 0.02, carried: Optional[Mapping[str, tuple[float, str]]] = None
                           ) -> tuple[CountBelief, list[tuple[ObjectNode, float]]]:
    """The count's distribution over (node, probability that it is a present object of the asked class) pairs,
    one term per node at least ``min_p`` likely and not within ``duplicate_radius_m`` of a likelier one, and those
    nodes with their probability, largest first.

    ``carried`` (from :func:`put_down_links`: old node id -> (chance it was carried away, new node id)): an old
    node counts only with the chance that it was not; when its new node counts too, the two are one object at
    one of two places (not two independent ones): one term with their probabilities added."""
    carried = carried or {}
    scored = []
    for n, p in scored_nodes:
        p *= 1.0 - carried.get(n.node_id, (0.0, ""))[0]
        if p >= min_p:
            scored.append((n, p))
    kept: list[tuple[ObjectNode, float]] = []
    for n, p in sorted(scored, key=lambda np_: (-np_[1], -np_[0].n_obs)):
        if all(np.linalg.norm(np.asarray(n.position_w) - np.asarray(k.position_w)) >= duplicate_radius_m
               for k, _ in kept):
            kept.append((n, p))
    terms = {n.node_id: p for n, p in kept}
    for n, _ in kept:
        new = carried.get(n.node_id, (0.0, ""))[1]
        if new in terms and n.node_id in terms:
            terms[new] = min(1.0, terms[new] + terms.pop(n.node_id))
    return poisson_binomial(list(terms.values())), kept


def class_probabilities(nodes: Sequence[ObjectNode], asked: Optional[Callable[[str], bool]] = None,
                        label_vote_logodds: float = 3.0) -> list[tuple[ObjectNode, float]]:
    """Each node with its presence probability times the probability that it is of a label ``asked`` accepts
    (the node's own label when not given)."""
    out = []
    for n in nodes:
        p_label = 1.0  # matched by its name alone (no vote names the asked class, nor its own label): in full
        for is_asked in ((asked,) if asked else ()) + ((lambda lab, own=n.label: lab == own),):
            if any(is_asked(lab) for lab in n.label_votes):
                p_label = label_probability(n.label_votes, is_asked, label_vote_logodds)
                break
        out.append((n, float(n.presence_p) * p_label))
    return out
