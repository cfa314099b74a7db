"""The ``distance`` question kind: how far X is from me or from a named object.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import KindSpec, Roles, register
from ._rules import cues_of

PROTOTYPES = (
    "How far away is the door?",
    "How far is the couch from me?",
    "How many metres is it to the window?",
    "What is the distance between me and the desk?",
    "How far is the table from the fridge?",
    "What is the distance from the bed to the wardrobe?",
    "How far apart are the two chairs?",
    "How many steps away is the sink?",
    "How close am I to the stove right now?",
    "How far do I have to walk to get to the printer?",
    "Roughly how many meters separate the lamp and the sofa?",
    "Is the shelf more than two metres away from me?",
    "How near is the television to the bookcase?",
    "What's the distance to the bathroom door?",
    "How far away from me is the trash can at the moment?",
    "About how many metres away is the fridge?",
    "How long a walk is it from here to the sofa?",
    "What distance is there between the bed and the door?",
)

SPEC = register(KindSpec(
    "distance", "how far X is from me or from a named object", PROTOTYPES, cues_of("distance"),
    options=frozenset({O.DISTANCE}), roles=Roles.DISTANCE,
    solvers=((P.DISTANCE, "metres"),),
    needs_target=True, subtask=""))
