"""The ``place`` question kind: which room X is in, where I am.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from dataclasses import replace

from .. import cues
from ..options import OptionKind as O
from ..parsed import Primitive as P
from ..timephrase import TimeKind
from . import CueRule, KindSpec, PhraseRules, Roles, register
from ._rules import FALLBACK, cues_of
from .reading import Roled

_CUES = cues_of("place", CueRule("place", cues._PLACE_RE.pattern, FALLBACK + 2))

PROTOTYPES = (
    "Which room is the printer in?",
    "What room is the bicycle in?",
    "In which room did I see the piano?",
    "Where am I right now?",
    "What room am I in?",
    "What kind of room is this?",
    "What type of place is this?",
    "Which floor is the gym on?",
    "On what floor is the bedroom?",
    "Is the washing machine in the kitchen or the bathroom?",
    "Which room has the bookshelf?",
    "What is this location?",
    "In what part of the house is the treadmill?",
    "Which room would I end up in if I went through the left door?",
    "Which building did we just walk into?",
    "Which floor am I on?",
    "On which storey is the laundry?",
    "Which part of the house is the piano in?",
)

def within(q: Roled) -> Roled:
    """No object named: where I am now, or where I was at the time asked ("3 minutes ago, which room was I in?")."""
    if q.targets:
        return q
    return replace(q, primitive=P.CURRENT_PLACE if q.time_ref.kind == TimeKind.NOW else P.MY_TRAJECTORY)


SPEC = register(KindSpec(
    "place", "which room X is in, where I am", PROTOTYPES, _CUES,
    options=frozenset({O.PLACE}), roles=Roles.PLACE,
    phrases=PhraseRules(rooms_scope=True, since_first_move=True),
    solvers=((P.OBJECT_LOCATION, "object_room", True), (P.CURRENT_PLACE, "current_room", False)),
    needs_target=False, subtask="", within=within))
