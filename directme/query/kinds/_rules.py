"""The cue rules of the kinds the parser has long known, as written in query/cues.py (in their order there, which
is their priority), and the priority of the broad fallbacks tried after them (each in its kind's module)."""
from __future__ import annotations

from .. import cues
from . import CueRule

FALLBACK = 100.0  # the priority of the first fallback rule, tried after every rule of query/cues.py


def cues_of(kind: str, *fallbacks: CueRule) -> tuple[CueRule, ...]:
    """The cue rules of query/cues.py voting for ``kind``, with their priorities, then the kind's ``fallbacks``."""
    return tuple(CueRule(name, pattern, float(i), cues._UNLESS.get(name, ""))
                 for i, (k, name, pattern) in enumerate(cues._CUES) if k == kind) + fallbacks
