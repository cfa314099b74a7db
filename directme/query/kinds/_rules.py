"""The cue rules of the kinds the parser has long known, as written in query/cues.py (in their order there, which
is their priority; the fallbacks of ``_TAIL`` after them)."""
from __future__ import annotations

from .. import cues
from . import CueRule

# rules tried after the ordered list of query/cues.py (cue_kind's fallbacks), in this order
_TAIL = (("quantity_change", "count_change", cues._COUNT_CHANGE_RE.pattern), ("count", "count", cues._COUNT_RE.pattern),
         ("place", "place", cues._PLACE_RE.pattern), ("category_recall", "recall", cues._RECALL_RE.pattern),
         ("relative_position", "where_relative_to",
          f"^(?=.*(?:{cues._WHERE_RE.pattern}))(?=.*(?:{cues._RELATIVE_TO_RE.pattern}))"),
         ("ego_direction", "where", cues._WHERE_RE.pattern))


def cues_of(kind: str) -> tuple[CueRule, ...]:
    """The cue rules of query/cues.py voting for ``kind``, with their priorities."""
    listed = [CueRule(name, pattern, float(i), cues._UNLESS.get(name, ""))
              for i, (k, name, pattern) in enumerate(cues._CUES) if k == kind]
    tail = [CueRule(name, pattern, 100.0 + i) for i, (k, name, pattern) in enumerate(_TAIL) if k == kind]
    return tuple(listed + tail)
