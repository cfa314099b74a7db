"""The ``distance_compare`` question kind: which of two objects is closer / farther (from me or from a named object).

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

import re
from dataclasses import replace

from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import KindSpec, Roles, register
from ._rules import cues_of
from .reading import Roled

_LESS_FAR = re.compile(r"\b(?:less|least) far\b")  # "which is less far away": closer
_FARTHER = re.compile(r"\b(farther|further|farthest|furthest|far|more distant|most distant|(?:greater|larger|bigger|"
                      r"longer) distance|(?:longest|longer|more of a|bigger) (?:walk|trip|stroll|way to go)|takes? "
                      r"(?:me |us )?(?:longer|more time|the longest|the most time)|(?:reach|get to|arrive at|come to|"
                      r"walk to) last)\b")

PROTOTYPES = (
    "Which is closer to me, the chair or the table?",
    "Which one is farther away, the lamp or the clock?",
    "Is the sink closer than the bathtub?",
    "Which of the two is nearer to me: the laptop or the monitor?",
    "Which object is closest to the window?",
    "Which is closer to the door, the sofa or the bookshelf?",
    "Is the bed farther from the window than the desk?",
    "Out of the kettle and the toaster, which is nearer?",
    "What is the nearest object to me right now?",
    "Which item is farthest from the fridge?",
    "Is the plant nearer to the couch or to the television?",
    "Which chair is closest to the exit?",
    "Of the mug and the bottle, which one is further from me?",
    "Am I nearer to the kitchen table or to the counter?",
    "Which is more distant from me now, the bin or the cupboard?",
    "Which of the two is the shorter walk from me, the stove or the sink?",
    "Is the telly nearer to me than the couch, or the other way round?",
    "Which one would I have to walk further to reach, the desk or the bed?",
    "Whichever is closer, the mug or the kettle?",
    "Which is less far from me, the chair or the bin?",
    "Which of the two is nearer to where I am standing, the dresser or the radiator?",
    "I am trying to decide which is closer to me at the moment: the piano or the fan.",
    "Of the heater and the rug, which one lies farther from my position?",
    "Which would I reach first if I set off now, the bench or the mirror?",
    "Is the guitar or the ironing board the one that is further from me right now?",
    "Comparing the wardrobe with the door, which is a longer walk from me?",
    "Please tell me which of the dresser and the fan is closer to me.",
    "I can spot the scale and the heater; which one is nearer to me?",
    "Whether the ottoman or the piano is closer to where I stand, can you tell?",
)

def within(q: Roled) -> Roled:
    """The comparison asked: "farther" where its words say so, else "closer"."""
    if q.primitive != P.DISTANCE_COMPARE:
        return q
    return replace(q, comparison="farther" if _FARTHER.search(_LESS_FAR.sub("", q.text)) else "closer")


SPEC = register(KindSpec(
    "distance_compare", "which of two objects is closer / farther (from me or from a named object)", PROTOTYPES, cues_of("distance_compare"),
    options=frozenset({O.YES, O.NO, O.OBJECT}), roles=Roles.COMPARED,
    solvers=((P.DISTANCE_COMPARE, "distance"),),
    needs_target=True, subtask="Distance Comparison", within=within))
