"""Scoring the memory's object association against simulator ground truth (tests and benchmarks).

Oracle track ids encode the ground-truth object (false positives and identity switches included), so
every node can be traced back to the objects whose observations it absorbed."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, NamedTuple, Optional, Union

from ..memory import MemoryConfig, SpatialMemory
from .oracle import FALSE_POSITIVE_ID_BASE, SWITCHED_ID_BASE, NoisePreset, OraclePerception


def gt_object(track_id: int) -> Optional[int]:
    """GT object id behind an oracle track id (None for false positives)."""
    if track_id >= SWITCHED_ID_BASE:
        return (track_id - SWITCHED_ID_BASE) // 1000
    return None if track_id >= FALSE_POSITIVE_ID_BASE else track_id


class AssociationScore(NamedTuple):
    n_gt: int  # ground-truth objects observed
    duplicates: int  # extra nodes for one GT object
    merges: int  # nodes that absorbed a second GT object
    node_gt: dict  # node id -> GT object id it stands for

    @property
    def error_rate(self) -> float:
        return (self.duplicates + self.merges) / max(self.n_gt, 1)


def stream_episode(episode: Any, noise: Union[str, NoisePreset], seed: int = 0,
                   **memory_config) -> tuple[SpatialMemory, dict]:
    """Feed an episode through oracle perception into a memory; returns it and node -> Counter(GT id).
    ``memory_config``: MemoryConfig fields named ``section__field`` (e.g. ``relocalisation__enabled=False``)."""
    oracle = OraclePerception(episode, noise=noise, seed=seed)
    mem = SpatialMemory(MemoryConfig().replace(up_world=tuple(episode.up_world), **memory_config))
    votes: dict[str, Counter] = defaultdict(Counter)
    for frame in episode.frames():
        for tid, nid in mem.update(oracle.perceive(frame)).items():
            votes[nid][gt_object(tid)] += 1
    return mem, votes


def association_score(mem: SpatialMemory, votes: dict) -> AssociationScore:
    """Duplicates and wrong merges of the memory's nodes at its latest time."""
    snap = mem.as_of(mem.latest_t_s)
    node_gt, merges = {}, 0
    for nid in snap.objects:
        c = Counter({g: n for g, n in votes[nid].items() if g is not None})
        for rec in mem.objects.records:  # observations of nodes merged into this one count for it
            if rec.merged_into is not None and mem.objects.survivor(rec).node_id == nid:
                c.update({g: n for g, n in votes[rec.node_id].items() if g is not None})
        if not c:
            continue
        (g, _), *rest = c.most_common()
        node_gt[nid] = g
        merges += bool(rest and rest[0][1] >= max(3, 0.2 * sum(c.values())))
    per_gt = Counter(node_gt.values())
    seen = {g for c in votes.values() for g in c if g is not None}
    return AssociationScore(len(seen), sum(n - 1 for n in per_gt.values()), merges, node_gt)
