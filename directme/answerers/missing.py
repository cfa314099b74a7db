"""Questions about objects memory does not hold: "Which is closer, the sofa or the fridge?" with no fridge
seen is answered "not in memory" (flag ``missing_object``), never by picking among the options left."""
from __future__ import annotations

from typing import Optional

from ..query.parsed import Primitive
from ..query.types import QueryContext
from ..types import Flag
from .changes import change_kind
from .prediction import Prediction, PredictionKind

# Kinds of question about named objects: every object named (asked, reference, viewpoint) must be in memory.
# Counts and recall are not among them: for those, an object not in memory is the answer (0, "no").
NEEDS_ALL_NAMED = frozenset({Primitive.EGO_DIRECTION, Primitive.FACING, Primitive.RELATIVE_POSITION,
                             Primitive.DISTANCE_COMPARE, Primitive.REACHABILITY, Primitive.DISTANCE,
                             Primitive.OBJECTS_AROUND, Primitive.OBJECT_TRAJECTORY, Primitive.OBJECT_LOCATION})


def missing_objects(ctx: QueryContext) -> Optional[Prediction]:
    """No answer, saying which named objects are not in memory as of the asked time (flags ``missing_object``
    and ``no_evidence``); None when the question needs no named object or memory holds every one."""
    intent = ctx.intent
    needs_all = intent.primitive in NEEDS_ALL_NAMED or (
        intent.primitive == Primitive.CHANGES and change_kind(intent) is None)  # "is the X still there?"
    if not needs_all or not intent.targets:
        return None
    matches = ctx.facts.matches
    held = [i < len(matches) and bool(matches[i]) for i in range(len(intent.targets))]
    absent = list(dict.fromkeys(t.text or t.key for t, ok in zip(intent.targets, held) if not ok))
    if not absent:
        return None
    found = list(dict.fromkeys(t.text or t.key for t, ok in zip(intent.targets, held) if ok))
    names = " or ".join(f"'{name}'" for name in absent)
    known = f" (in memory: {', '.join(found)})" if found else ""
    return Prediction(PredictionKind.NONE, f"No {names} in memory as of {ctx.t_s:.0f} s{known}, so no answer.",
                      0.0, flags=(Flag.MISSING_OBJECT, Flag.NO_EVIDENCE))
