"""The ``count`` question kind: how many X there are.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from .. import cues
from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import CueRule, KindSpec, PhraseRules, Roles, register
from ._rules import FALLBACK, cues_of

_CUES = cues_of("count", CueRule("count", cues._COUNT_RE.pattern, FALLBACK + 1))

PROTOTYPES = (
    "How many chairs are there?",
    "How many cups are on the table?",
    "How many windows does this room have?",
    "How many pictures are hanging on the wall?",
    "Count the bottles in the kitchen.",
    "What is the number of lamps in the living room?",
    "How many pillows are on the bed?",
    "How many people are in the room?",
    "How many plants can you see?",
    "Tell me how many books are on the shelf.",
    "How many doors are there in the hallway?",
    "How many stools are at the counter?",
    "What is the total number of chairs here?",
    "Please count the plates for me.",
    "How many candles are there at the moment?",
    "What's the count of towels right now?",
    "How many jars can be seen around here currently?",
    "Do you know how many cushions there are in total at present?",
    "How many mugs have I got in here right now?",
)

SPEC = register(KindSpec(
    "count", "how many X there are", PROTOTYPES, _CUES,
    options=frozenset({O.COUNT}), roles=Roles.OBJECT,
    phrases=PhraseRules(rooms_scope=True),
    solvers=((P.COUNT, "count"),),
    needs_target=True, subtask="Quantity Change Tracking"))
