"""Match intent targets to object nodes of a memory snapshot: by label key (synonyms, plurals,
"a/b" Objects365 names), then head noun, then meaning (embedding similarity)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..memory.snapshot import MemorySnapshot, ObjectNode
from .embed import CachedEmbedder
from .intent import Intent, Target
from .vocab import canonical, category_keys, label_keys

SEMANTIC_MIN = 0.5  # all-MiniLM cosine: sofa/couch 0.86, trash can/garbage bin 0.60, photos/picture frame 0.58
STRING_MIN = 0.75


@dataclass(frozen=True)
class Match:
    node_id: str
    label: str
    score: float  # 0..1, 1 = same label key
    how: str  # "label" | "vote" | "head" | "embedding"


def node_keys(node: ObjectNode) -> set[str]:
    keys = label_keys(node.label)
    for label, weight in node.label_votes.items():
        if weight > 0:
            keys |= label_keys(label)
    return keys


def _attribute_ok(target: Target, node: ObjectNode, place_tag: Optional[str]) -> bool:
    colour = node.attributes.get("color") or node.attributes.get("colour")
    if target.colour and colour and canonical(str(colour)) != target.colour:
        return False
    if target.place and place_tag and canonical(place_tag) != target.place:
        return False
    return True


def match_target(target: Target, snapshot: MemorySnapshot, embedder: Optional[CachedEmbedder] = None,
                 place_of=None) -> list[Match]:
    """Nodes matching one target, best first. ``place_of(node) -> tag`` filters by place words."""
    nodes = list(snapshot.objects.values())
    if not nodes:
        return []
    ok = [n for n in nodes if _attribute_ok(target, n, place_of(n) if (place_of and target.place) else None)]
    if not ok and target.place:  # a place word that matches nothing should not hide the object
        ok = [n for n in nodes if _attribute_ok(Target(target.key, target.text, target.colour), n, None)]
    exact = [Match(n.node_id, n.label, 1.0, "label") for n in ok if target.key in label_keys(n.label)]
    if exact:
        return exact
    votes = [Match(n.node_id, n.label, 0.9, "vote") for n in ok if target.key in node_keys(n)]
    if votes:
        return votes
    # a bare noun matches a longer label ending in it ("stove" -> Gas stove); "dining table" never
    # matches "coffee table"
    head = target.key if target.key and len(target.key.split()) == 1 else ""
    heads = [Match(n.node_id, n.label, 0.8, "head") for n in ok
             if head and any(k.split()[-1] == head for k in label_keys(n.label))]
    if heads:
        return heads
    if embedder is None or embedder.name == "none":
        return []
    # a phrase naming a detector category of its own ("surfboard") is not another category by meaning
    # ("Blackboard/Whiteboard"): categories are distinct by definition, only free text is matched by meaning
    categories = category_keys()
    if target.key in categories:
        ok = [n for n in ok if not (label_keys(n.label) & categories)]
    labels = sorted({n.label for n in ok})
    if not labels:
        return []
    sims = dict(zip(labels, embedder.similarity(target.text or target.key, labels)))
    threshold = SEMANTIC_MIN if embedder.name == "minilm" else STRING_MIN
    best = max(sims.values(), default=0.0)
    if best < threshold:
        return []
    keep = {lab for lab, s in sims.items() if s >= max(threshold, best - 0.05)}
    out = [Match(n.node_id, n.label, float(sims[n.label]), "embedding") for n in ok if n.label in keep]
    return sorted(out, key=lambda m: -m.score)


def retrieve(intent: Intent, snapshot: MemorySnapshot, embedder: Optional[CachedEmbedder] = None,
             place_of=None) -> list[list[Match]]:
    """One list of matches per intent target (same order as ``intent.targets``)."""
    return [match_target(t, snapshot, embedder, place_of) for t in intent.targets]


def nodes_in_places(snapshot: MemorySnapshot, places: Sequence[str], place_of) -> list[ObjectNode]:
    """Objects whose place is one of ``places`` (all objects when ``places`` is empty)."""
    if not places:
        return list(snapshot.objects.values())
    wanted = {canonical(p) for p in places}
    return [n for n in snapshot.objects.values() if canonical(place_of(n) or "") in wanted]
