"""Questions on change, answered from the memory's change events (memory/events.py) as known at the
asked time: "what did I move", "what is new in the kitchen", "what was taken away", "is the cup still
there". Which change is asked and the place (if any) come from the intent."""
from __future__ import annotations

import math
from typing import Optional

from ..memory.snapshot import ChangeEvent, EventKind, ObjectNode
from ..query.ego import object_place
from ..query.parsed import ChangeAsked, Intent, Target
from ..query.retrieval import match_target
from ..query.timeref import place_runs
from ..query.types import QueryContext
from ..query.vocab import canonical

_EVENT_OF_CHANGE = {ChangeAsked.MOVED: EventKind.MOVED, ChangeAsked.REMOVED: EventKind.REMOVED,
                    ChangeAsked.APPEARED: EventKind.APPEARED}


def change_kind(intent: Intent) -> Optional[EventKind]:
    """The change events a question on change asks about (None: whether one object is still there); an intent
    built without ``change`` asks what is new, as the parser reads a question naming no other change."""
    return _EVENT_OF_CHANGE.get(intent.change or ChangeAsked.APPEARED)


def since_s(ctx: QueryContext, place: Optional[str]) -> float:
    """What counts as new: since the wearer was last in the asked place before this visit (or since the
    start of the stream when there is no earlier visit)."""
    runs = place_runs(ctx.snapshot, ctx.facts.rooms) if ctx.snapshot is not None else []
    if place:
        key = canonical(place)
        earlier = [r for r in runs[:-1] if canonical(r[2]) == key]
        if earlier:
            return earlier[-1][1]
    return -math.inf


def events_of(ctx: QueryContext, kind: EventKind, place: Optional[str]) -> list[tuple[ChangeEvent, ObjectNode]]:
    """Events of ``kind`` known at the asked time (appearances: after ``since_s``; first sightings at the
    stream's start are not changes), in the asked place if any."""
    snap = ctx.snapshot
    t0 = since_s(ctx, place)
    out = []
    for e in snap.changes:
        if e.kind != kind or e.node_id not in snap.objects:
            continue
        if kind == EventKind.APPEARED and (e.after_s < t0 or math.isinf(e.after_s)):
            continue  # first seen on the first look at its place: not known to be new
        node = snap.objects[e.node_id]
        if place and canonical(object_place(snap, node, -1, ctx.facts.rooms) or "") != canonical(place):
            continue
        out.append((e, node))
    return out


def option_scores(ctx: QueryContext, events: list[tuple[ChangeEvent, ObjectNode]]) -> dict[str, float]:
    """Per object option: the largest confidence of an event of one of its nodes (0: none)."""
    scores: dict[str, float] = {}
    by_node = {}
    for e, _ in events:
        by_node[e.node_id] = max(by_node.get(e.node_id, 0.0), e.confidence)
    for o in ctx.facts.options:
        for tgt in o.objects:
            nodes = [m.node_id for m in match_target(Target(tgt.key, tgt.text), ctx.snapshot)
                     if m.how in ("label", "vote", "head")]
            scores[tgt.key] = max([by_node.get(n, 0.0) for n in nodes] or [0.0])
    return scores


def describe(events: list[tuple[ChangeEvent, ObjectNode]], kind: EventKind) -> str:
    if not events:
        return f"No object {kind.value} that memory knows of."
    parts = [f"the {node.label} ({kind.value} between {max(e.after_s, 0.0):.0f} s and {e.before_s:.0f} s)"
             for e, node in events[-5:]]
    return "Changes: " + "; ".join(parts) + "."
