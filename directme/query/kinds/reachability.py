"""The ``reachability`` question kind: whether I can reach X from where I stand.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import KindSpec, PhraseRules, Roles, register
from ._rules import cues_of

PROTOTYPES = (
    "Can I reach the light switch from here?",
    "Is the cup within arm's reach?",
    "Can I grab the remote without getting up?",
    "Could I touch the wall without moving?",
    "Is the bottle close enough for me to pick up?",
    "Can I get the book without taking a step?",
    "Is the lamp within my reach right now?",
    "Would I be able to touch the plant from where I am standing?",
    "Can I reach out and take the phone?",
    "Is the kettle reachable from my position?",
    "Can my hand reach the door handle from here?",
    "Is the glass near enough to grab?",
    "Can I get my hand on the remote without standing up?",
    "Is the mug close enough to touch?",
    "Could I put my hand on the jar from where I am standing right now?",
    "Is the candle near enough that I could grab it without walking?",
    "Without moving from this spot, can I get hold of the scissors?",
)

SPEC = register(KindSpec(
    "reachability", "whether I can reach X from where I stand", PROTOTYPES, cues_of("reachability"),
    options=frozenset({O.YES, O.NO}), roles=Roles.OBJECT,
    phrases=PhraseRules(rooms_scope=True, asking_sentence=True),
    solvers=((P.REACHABILITY, "reach"),),
    needs_target=True, subtask="Reachability Judgment"))
