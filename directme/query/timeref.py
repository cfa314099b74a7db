"""Turn an intent's time reference into stream times, using only the memory observed up to t:
"now", "just now", "2 minutes ago", "when I first entered the kitchen", "before I moved the cup"."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ..memory.snapshot import MemorySnapshot, ObjectNode
from .ego import ROOMS, RoomConfig, place_sequence
from .intent import HERE, TimeKind, TimeRef
from .vocab import canonical


@dataclass(frozen=True)
class ResolvedTime:
    """``t_eval``: when to evaluate the asked relation; ``t_event``: the event's time (if any);
    ``ok`` False when the event is not found in memory (the answer must then be low-confidence)."""

    t_eval: float
    t_event: Optional[float] = None
    ok: bool = True
    detail: str = ""


def place_runs(snapshot: MemorySnapshot, rooms: RoomConfig = ROOMS) -> list[tuple[float, float, str]]:
    """(start, end, tag) runs of the wearer's places up to the snapshot time; runs shorter than
    ``rooms.flicker_frames`` frames (scene-tag flicker) are dropped, except the current one."""
    seq = place_sequence(snapshot, min_frames=rooms.flicker_frames)
    ends = [s for s, _ in seq[1:]] + [snapshot.t_s]
    return [(s, e, tag) for (s, tag), e in zip(seq, ends)]


def subject_place(subject: str, runs: Sequence[tuple[float, float, str]]) -> str:
    """The place an event names: HERE ("before this one") is the wearer's current (last) run."""
    return (runs[-1][2] if runs else "") if subject == HERE else subject


def place_event_index(runs: Sequence[tuple[float, float, str]], place: str, event: str, which: str) -> Optional[int]:
    """Index of the run entered ("enter") or left ("leave") for ``place`` (first/last occurrence).
    A "leave" needs a following run; the wearer's first run counts as entered only after a change."""
    key = canonical(place)
    idx = [i for i, r in enumerate(runs) if canonical(r[2]) == key]
    if event == "leave":
        idx = [i for i in idx if i + 1 < len(runs)]
    if not idx:
        return None
    return idx[0] if which == "first" else idx[-1]


def placement_change_times(node: ObjectNode) -> list[float]:
    """Times at which a new placement of the object was first seen (moves), oldest first."""
    return [float(t) for t, _ in node.position_history[1:]]


def resolve_time(ref: TimeRef, snapshot: MemorySnapshot, nodes: Sequence[ObjectNode] = (),
                 just_now_s: float = 10.0, rooms: RoomConfig = ROOMS) -> ResolvedTime:
    t = snapshot.t_s
    t0 = float(snapshot.ego.times_s[0]) if len(snapshot.ego) else t
    if ref.kind == TimeKind.NOW:
        return ResolvedTime(t)
    if ref.kind == TimeKind.JUST_NOW:
        return ResolvedTime(max(t0, t - just_now_s), detail=f"{just_now_s:.0f} s before now")
    if ref.kind == TimeKind.AGO:
        ok = t - ref.seconds >= t0
        return ResolvedTime(max(t0, t - ref.seconds), ok=ok, detail=f"{ref.seconds:.0f} s ago")
    if ref.kind == TimeKind.ABSOLUTE:
        return ResolvedTime(min(ref.seconds, t), ok=ref.seconds <= t, detail=f"t={ref.seconds:.0f} s")
    if ref.kind == TimeKind.START:
        return ResolvedTime(t0, detail="start of the stream")
    if ref.kind != TimeKind.EVENT:
        return ResolvedTime(t, ok=False, detail=f"unknown time reference {ref.kind!r}")
    t_event = _event_time(ref, snapshot, nodes, rooms)
    if t_event is None:
        return ResolvedTime(t, ok=False, detail=f"event '{ref.text}' not found in memory")
    t_eval = {"before": t_event - 1.0, "after": t}.get(ref.relation, t_event)
    return ResolvedTime(float(np.clip(t_eval, t0, t)), t_event, True, f"event '{ref.text}' at {t_event:.0f} s")


def _event_time(ref: TimeRef, snapshot: MemorySnapshot, nodes: Sequence[ObjectNode],
                rooms: RoomConfig = ROOMS) -> Optional[float]:
    if ref.event in ("enter", "leave"):
        runs = place_runs(snapshot, rooms)
        i = place_event_index(runs, subject_place(ref.subject, runs), ref.event, ref.which)
        if i is None:
            return None
        return runs[i][0] if ref.event == "enter" else runs[i][1]
    if not nodes:
        return None
    node = max(nodes, key=lambda n: n.n_obs)
    if ref.event in ("pick", "put"):
        moves = placement_change_times(node)
        if moves:
            return moves[0] if ref.which == "first" else moves[-1]
        return None
    return node.first_seen_s if ref.which == "first" else node.last_seen_s
