"""The ``category_recall`` question kind: whether I saw X, what objects were in a place.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from .. import cues
from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import CueRule, KindSpec, PhraseRules, Roles, register
from ._rules import FALLBACK, cues_of

_CUES = cues_of("category_recall", CueRule("recall", cues._RECALL_RE.pattern, FALLBACK + 3))

PROTOTYPES = (
    "Did I see a microwave?",
    "Have I seen any umbrellas?",
    "Was there a mirror in the bathroom?",
    "What objects were in the office?",
    "What did I see in the kitchen?",
    "Which of these things did I come across?",
    "Are there any plants in this room?",
    "Is there a printer in the office?",
    "Are there towels in the bathroom?",
    "What furniture was in the bedroom?",
    "Did I pass a fire extinguisher?",
    "Which of the following objects appeared so far?",
    "What things are in the other room?",
    "Have I come across a ladder anywhere?",
    "Is there a clock somewhere in the house?",
    "Were there any chairs in the dining room?",
    "Which one of these has turned up anywhere so far?",
    "Out of these options, which did I run into while I was in the garage?",
)

SPEC = register(KindSpec(
    "category_recall", "whether I saw X, what objects were in a place", PROTOTYPES, _CUES,
    options=frozenset({O.OBJECT, O.YES, O.NO}), roles=Roles.CORE,
    phrases=PhraseRules(rooms_scope=True),
    solvers=((P.CATEGORY_RECALL, "recall"),),
    needs_target=False, subtask="Object Category Recall"))
