"""The ``appearance_order`` question kind: the order named objects or categories were first seen: "What will be
the first-time appearance order of the following categories in the video: chair, lamp, sofa, bed?" (options list
orders), or "Which did I see first, the backpack or the whiteboard?". Its prototype sentences are written for
this meaning, never copied from an evaluation set."""
from __future__ import annotations

import re
from dataclasses import replace

from ..options import OptionKind as O
from ..asked import sequence_end
from ..parsed import Intent, Primitive, Target, TimeKind, TimeRef
from . import CueRule, KindSpec, Roles, register
from .reading import Reading

APPEARANCE_ORDER = Primitive.declare("appearance_order")  # the order X, Y, ... were first seen

CUE = (r"\b(?:appearance order|order of (?:first )?appearance|first[- ]time appearance|by first appearance)\b|"
       r"\border\b.*\bfirst (?:appear\w*|saw|seen|see|show\w* up|came into view)\b|"
       r"\b(?:by|rank these by) (?:when|the time) (?:i|each) first\b|\bsort these by when i first\b")
WHICH_FIRST = (r"^which (?:one |of these |of them )?(?:did|have) (?:i|we) (?:see|seen|spot|spotted|notice|noticed) "
               r"first\b|^which (?:came|appeared|showed up) first\b")
_WHICH_FIRST = re.compile(WHICH_FIRST)
_SPLIT = re.compile(r",|\bor\b|\band\b|\bthen\b")

PROTOTYPES = (
    "In which order did I first see the cup, the lamp and the chair?",
    "Which did I see first, the sofa or the bed?",
    "Order these by when they first appeared: table, plant, TV.",
    "In what order did the kettle, the toaster and the fridge first appear?",
    "Sort these by when I first saw them: mirror, towel, sink.",
    "What is the order of first appearance of the chair, the printer and the plant?",
    "Which came first, the fridge or the oven?",
    "Rank these by the time each first came into view: rug, stool, clock.",
    "Which of these did I see first, the mug or the kettle?",
    "What is the first-time appearance order of the sofa, the TV and the lamp?",
    "In what order did the door, the window and the shelf first show up?",
)


def items(r: Reading, text: str) -> list[Target]:
    """The objects a list names, in order (one per comma / "or" / "and" separated item)."""
    out = []
    for part in _SPLIT.split(text):
        found = r.objects_in("the " + part)
        if found:
            out.append(found[0])
    return out


def read(r: Reading) -> Intent:
    """The listed objects in the question's order (after its colon, else after "which did I see first"); per
    option, the order it lists (``Intent.sequences``); "which did I see first / last" (``Intent.sequence_end``).
    A clause about seeing them is no time reference (``sighting_clause``): the question is asked now."""
    if ":" in r.text:
        listed = r.text.rsplit(":", 1)[1]
    else:
        listed = _WHICH_FIRST.sub(" ", r.text)
    targets = items(r, re.sub(r"[?.]", " ", listed))
    sequences = tuple(tuple(t.key for t in items(r, o)) for o in r.options)
    intent = r.intent(APPEARANCE_ORDER, targets, sequences=sequences, sequence_end=sequence_end(r.question))
    return replace(intent, time_ref=TimeRef()) if sighting_clause(r.time_ref) else intent


def sighting_clause(ref: TimeRef) -> bool:
    """Whether the question's time clause is about seeing the listed objects ("sort these by when I first saw
    them"): the sightings the kind orders, not a time to answer at."""
    return ref.kind == TimeKind.EVENT and ref.event == "see"


SPEC = register(KindSpec(
    "appearance_order", "the order X, Y, ... were first seen", PROTOTYPES,
    (CueRule("appearance_order", CUE, -5.0), CueRule("appearance_order_which", WHICH_FIRST, -4.5)),
    options=frozenset({O.OBJECT}), roles=Roles.OWN, solvers=((APPEARANCE_ORDER, "first_seen_order"),),
    needs_target=True,
    subtask="Appearance Order", read=read))
