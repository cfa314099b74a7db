"""The ``place`` question kind: which room X is in, where I am.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import KindSpec, Roles, register
from ._rules import cues_of

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

SPEC = register(KindSpec(
    "place", "which room X is in, where I am", PROTOTYPES, cues_of("place"),
    options=frozenset({O.PLACE}), roles=Roles.PLACE,
    solvers=((P.OBJECT_LOCATION, "object_room", True), (P.CURRENT_PLACE, "current_room", False)),
    needs_target=False, subtask=""))
