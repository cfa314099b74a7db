"""The ``object_trajectory`` question kind: whether / where X was moved; what was moved, is new or missing.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import KindSpec, PhraseRules, Roles, register
from ._rules import cues_of

PROTOTYPES = (
    "Where was the cup before I moved it?",
    "Which room did I carry the laptop to?",
    "Has the chair been moved?",
    "Where did the backpack go?",
    "Did anyone move the vase?",
    "Where was the book originally?",
    "Which room was the bottle in before I picked it up?",
    "Where did I take the towel after picking it up?",
    "Did the keys change place since this morning?",
    "Where has the basket been moved to?",
    "Was the plant moved from the living room?",
    "From where did I take the plate?",
    "Where did the box end up after I moved it?",
    "Is the lamp still where it was at the start?",
    "Which room did I pick the keys up from?",
    "Which room did I put the laptop down in?",
    "Where did I set the basket down after carrying it?",
    "Where have I taken the lamp?",
    "What room had the vase been in before I moved it?",
    "Tell me the room where I left the towel.",
    "Which room did I bring the chair into?",
    "Where did the box originally sit before I carried it away?",
)

SPEC = register(KindSpec(
    "object_trajectory", "whether / where X was moved; what was moved, is new or missing", PROTOTYPES, cues_of("object_trajectory"),
    options=frozenset({O.PLACE, O.OBJECT, O.YES, O.NO}), roles=Roles.OBJECT,
    phrases=PhraseRules(rooms_scope=True, asking_sentence=True, since_first_move=True),
    solvers=((P.OBJECT_TRAJECTORY, "object_room"), (P.CHANGES, "changes", False)),
    needs_target=True, subtask="Object Trajectory"))
