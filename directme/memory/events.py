"""Change events: what happened to each object, read from its append-only logs as of a time t.

Events are not stored beside the logs they come from (one truth, no second copy to keep in step): each
is derived from the record's observations, state rows and presence belief with time <= t, so the events
known at t are exactly those a memory built from the frames up to t would report (causal by
construction). Kinds:
- ``appeared``: first sighting; the interval runs from the last frame that had its place in view before
  (the place was empty then, or not yet looked at: -inf) to the first sighting;
- ``moved``: a new placement (picked up, carried and put down elsewhere); the interval runs from the last
  sighting at the old place to the first at the new one;
- ``removed``: its presence belief fell below ``gone.present_p``; from its last sighting to the first
  evidence of absence; its confidence is one minus the lowest presence probability until it was seen again
  (or until t);
- ``returned``: present again after having been found gone;
- ``picked_up`` / ``put_down``: a carry began (seen close to the camera and moving with it) / ended (seen at
  rest away from the camera; the put-down place is a new placement, so a ``moved`` event comes with it).
"""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from typing import Callable, Iterator, Mapping, Optional, Sequence

import numpy as np

from .objects import ObjectRecord
from .snapshot import ChangeEvent, EventKind


def record_events(rec: ObjectRecord, t_s: float, label: str,
                  last_view_before: Callable[[np.ndarray, float], float]) -> list[ChangeEvent]:
    """The events of one object known at ``t_s``."""
    k_obs = bisect_right(rec.obs_t, t_s)
    if k_obs == 0:
        return []
    obs_t = rec.obs_t[:k_obs]
    rows = rec.states[: bisect_right(rec.state_t, t_s)]
    if not rows:
        return []
    out: list[ChangeEvent] = []
    p_now = rec.presence_at(t_s)
    first_t = obs_t[0]
    first_pos = rows[0].position_w
    out.append(ChangeEvent(EventKind.APPEARED, rec.node_id, label, last_view_before(np.asarray(first_pos), first_t),
                           first_t, _first_present(rows, first_t), None, first_pos, p_now,
                           f"first seen at {first_t:.1f} s ({k_obs} sightings by {t_s:.1f} s)"))
    last_pos: dict[int, tuple[float, float, float]] = {}
    seen_placement = 0
    present = rows[0].present
    for row in rows:
        if row.placement > seen_placement and row.placement < len(rec.placements_s):
            start = rec.placements_s[row.placement]
            at_new = k_obs - bisect_left(obs_t, start)
            out.append(ChangeEvent(EventKind.MOVED, rec.node_id, label, _last_before(obs_t, start), start, row.t_s,
                                   last_pos.get(seen_placement, first_pos), row.position_w,
                                   min(1.0, at_new / 3.0),
                                   f"seen {at_new} times at the new place since {start:.1f} s"))
            seen_placement = row.placement
        last_pos[row.placement] = row.position_w
        if row.present != present:
            if row.present:
                out.append(ChangeEvent(EventKind.RETURNED, rec.node_id, label, _last_before(obs_t, row.t_s),
                                       row.t_s, row.t_s, None, row.position_w, p_now, f"seen again at {row.t_s:.1f} s"))
            elif not math.isnan(row.gone_since_s):
                back = next((r.t_s for r in rows if r.t_s > row.t_s and r.present), t_s)
                out.append(ChangeEvent(EventKind.REMOVED, rec.node_id, label, _last_before(obs_t, row.gone_since_s),
                                       row.gone_since_s, row.t_s, row.position_w, None, 1.0 - _least_presence(rec, row.t_s, back),
                                       f"its place seen without it from {row.gone_since_s:.1f} s"))
            present = row.present
    carry = rec.carry_t[: bisect_right(rec.carry_t, t_s)]
    for k, tc in enumerate(carry):
        before = _last_before(obs_t, tc)
        if k % 2 == 0:  # from where it rested at the sighting before (None: first seen in the wearer's hands)
            rested = rec.state_at(before).position_w if before > -math.inf else None
            out.append(ChangeEvent(EventKind.PICKED_UP, rec.node_id, label, before, tc, tc, rested, None, 1.0,
                                   f"seen moving with the camera at {tc:.1f} s"))
        else:
            out.append(ChangeEvent(EventKind.PUT_DOWN, rec.node_id, label, before, tc, tc, None,
                                   rec.state_at(tc).position_w, 1.0, f"seen at rest away from the camera at {tc:.1f} s"))
    return out


def _least_presence(rec: ObjectRecord, t0: float, t1: float) -> float:
    """The lowest presence probability the belief log holds in [t0, t1) (how surely it was found gone)."""
    lo, hi = bisect_left(rec.pres_t, t0), bisect_left(rec.pres_t, t1)
    least = min(rec.pres_l[lo:hi], default=math.nan) if hi > lo else math.nan
    return rec.presence_at(t0) if math.isnan(least) else 1.0 / (1.0 + math.exp(-float(least)))


def _first_present(rows, first_t: float) -> float:
    return next((r.t_s for r in rows if r.present), first_t)


def _last_before(obs_t: Sequence[float], t: float) -> float:
    k = bisect_left(obs_t, t)
    return obs_t[k - 1] if k > 0 else -math.inf


class LazyChanges(Sequence[ChangeEvent]):
    """All objects' change events known at t, ordered by when they happened; built on first access."""

    def __init__(self, records: Mapping[str, ObjectRecord], t_s: float, labels: Callable[[ObjectRecord], str],
                 last_view_before: Callable[[np.ndarray, float], float]) -> None:
        self._args = (records, t_s, labels, last_view_before)
        self._events: Optional[tuple[ChangeEvent, ...]] = None

    def _all(self) -> tuple[ChangeEvent, ...]:
        if self._events is None:
            records, t_s, labels, view = self._args
            evs = [e for rec in records.values() for e in record_events(rec, t_s, labels(rec), view)]
            self._events = tuple(sorted(evs, key=lambda e: (e.before_s, e.node_id, e.kind.value)))
        return self._events

    def __getitem__(self, i):  # type: ignore[override]
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[ChangeEvent]:
        return iter(self._all())

    def of(self, node_id: str) -> tuple[ChangeEvent, ...]:
        return tuple(e for e in self._all() if e.node_id == node_id)
