"""The ``quantity_change`` question kind: whether the number of X changed.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from .. import cues
from ..options import OptionKind as O
from ..parsed import Primitive
from . import CueRule, KindSpec, PhraseRules, Roles, register
from ._rules import FALLBACK, cues_of

COUNT_CHANGE = Primitive.declare("count_change")  # how did the number of X change

_CUES = cues_of("quantity_change", CueRule("count_change", cues._COUNT_CHANGE_RE.pattern, FALLBACK))

PROTOTYPES = (
    "How many cups are left now compared to before?",
    "Did the number of chairs change?",
    "Are there fewer apples than earlier?",
    "Has the number of books on the shelf increased?",
    "How many bottles were removed?",
    "Are there more plates now than at the start?",
    "How many pillows are still on the sofa?",
    "Did anybody take away one of the boxes?",
    "How many glasses have been added since I came in?",
    "Is the number of towels the same as before?",
)

SPEC = register(KindSpec(
    "quantity_change", "whether the number of X changed", PROTOTYPES, _CUES,
    options=frozenset({O.COUNT}), roles=Roles.OBJECT,
    phrases=PhraseRules(rooms_scope=True),
    solvers=((COUNT_CHANGE, "count"),),
    needs_target=True, subtask="Quantity Change Tracking"))
