"""Question + memory snapshot -> QueryContext: parse, resolve time, retrieve, render, pick keyframes.

The typed facts handed to answerers are ``types.Facts``; everything about an object, including its
observation times and the views that missed it, comes from the snapshot's ``ObjectNode``."""
from __future__ import annotations

from typing import Optional, Sequence

from ..memory.snapshot import MemorySnapshot
from .ego import ROOMS, RoomConfig, render_subgraph
from .embed import CachedEmbedder
from .intent import Primitive, parse_question
from .keyframes import ImageLoader, load_keyframes
from .options import parse_options
from .parsed import ParserConfig
from .path import metric_path
from .retrieval import retrieve
from .timeref import resolve_time
from .types import Evidence, Facts, QueryContext
from .vocab import Vocabulary


def node_evidence(snapshot: MemorySnapshot, node_id: str, detail: str) -> Evidence:
    """One remembered object as an answer's evidence: its label, first and last sighting, keyframe times up to the
    snapshot's time, and ``detail`` (how the answer used it)."""
    node = snapshot.objects[node_id]
    return Evidence(node_id=node_id, label=node.label, times_s=(node.first_seen_s, node.last_seen_s),
                    keyframe_times_s=tuple(r.t_s for r in node.keyframes if r.t_s <= snapshot.t_s), detail=detail)


def build_context(question: str, options: Sequence[str], snapshot: MemorySnapshot, vocab: Vocabulary,
                  embedder: Optional[CachedEmbedder] = None, reach_m: float = 1.0, max_keyframes: int = 4,
                  just_now_s: float = 10.0, image_loader: Optional[ImageLoader] = None,
                  parser: Optional[ParserConfig] = None, rooms: RoomConfig = ROOMS) -> QueryContext:
    place_tags = sorted({tag for tag in snapshot.ego.scene_tags if tag} | {p.tag for p in snapshot.places.values()})
    vocab.add_labels({n.label for n in snapshot.objects.values()})  # each label once (10,000 objects, a few labels)
    intent = parse_question(question, options, vocab, embedder, settings=parser)
    matches = retrieve(intent, snapshot, embedder)
    nodes = [snapshot.objects[m.node_id] for m in (matches[0] if matches else [])]
    when = resolve_time(intent.time_ref, snapshot, nodes, just_now_s, rooms)
    node_ids = list(dict.fromkeys(m.node_id for ms in matches for m in ms[:3]))
    path_from = when.t_event if intent.primitive == Primitive.MY_TRAJECTORY and when.t_event is not None else None
    text = render_subgraph(snapshot, node_ids, when.t_eval, reach_m, path_from_s=path_from, rooms=rooms)
    path = None
    if intent.primitive == Primitive.MY_TRAJECTORY:
        path = metric_path(snapshot, t_from=when.t_eval if when.t_eval < snapshot.t_s else -float("inf"))
    if path is not None and "Your path:" not in text:  # no scene tags: the path in metres and turns
        text += "\nYour path (from camera poses; no room names): " + path.describe()
    if when.t_eval != snapshot.t_s or when.detail:
        text += f"\nQuestion time: {snapshot.t_s:.1f} s; evaluated at {when.t_eval:.1f} s ({when.detail or 'now'})."
    evidence = tuple(node_evidence(snapshot, nid, "matched " + ", ".join(f"{m.how} {m.score:.2f}" for ms in matches
                                                                         for m in ms if m.node_id == nid))
                     for nid in node_ids)
    keyframes = load_keyframes(snapshot, node_ids, snapshot.t_s, image_loader, max_keyframes)
    facts = Facts(matches=tuple(tuple(ms) for ms in matches), time=when,
                  options=tuple(parse_options(options, vocab, place_tags)), reach_m=float(reach_m), rooms=rooms,
                  place_tags=tuple(place_tags), metric_path=path)
    return QueryContext(question=question, t_s=snapshot.t_s, options=tuple(options), intent=intent,
                        snapshot=snapshot, subgraph_text=text, facts=facts, keyframes=keyframes, evidence=evidence)
