"""The ``room_size`` question kind: the floor area, in square metres, of the room the wearer is in ("this
room") or of the room an object is in ("the room with the sofa"). Its prototype sentences are written for this
meaning, never copied from an evaluation set."""
from __future__ import annotations

import re

from ..options import OptionKind as O
from ..parsed import Intent, Primitive
from . import CueRule, KindSpec, Roles, register
from .reading import Reading

ROOM_SIZE = Primitive.declare("room_size")  # the floor area of this room or of X's room

_AREA = r"(?:square (?:met(?:er|re)s?|feet|foot)|m2|m\^2|sq\.? ?m|floor area|area)"
CUE = (r"\b(?:size|area|big|large|how many square)\b.*\b(?:room|space)\b.*" + _AREA + r"|"
       r"\b" + _AREA + r"\b.*\broom\b|\broom\b.*\b" + _AREA + r"\b|"
       r"\b(?:what is the size|how big|how large) (?:is )?(?:of )?this room\b|"
       r"\bhow many square (?:met(?:er|re)s?|feet)\b")
_OBJECT_ROOM = re.compile(r"\broom (?:that has|that holds|holding|containing|with|where|(?:that )?the)\b(?P<rest>.*)")

PROTOTYPES = (
    "How big is this room in square metres?",
    "What is the floor area of the room I am in?",
    "How many square meters is the kitchen with the fridge?",
    "How large is the room the bed is in, in square metres?",
    "What is the area of this space in m2?",
    "Roughly how many square metres does the bedroom cover?",
    "What is the size of this room in square meters?",
    "How many square feet is the living room?",
    "Estimate the floor area of the room with the sofa.",
    "How large is this room?",
    "What's the area of the room where the desk stands, in m2?",
    "How much floor area does the room I'm standing in have?",
)


def read(r: Reading) -> Intent:
    """The object whose room is measured ("the room with the sofa"), or none: the wearer's room."""
    m = _OBJECT_ROOM.search(r.text)
    targets = r.objects_in(re.sub(r"\b(?:square|met(?:er|re)s?|m2|area|floor|size|room)\b", " ", m.group("rest"))) \
        if m else []
    return r.intent(ROOM_SIZE, targets[:1])


SPEC = register(KindSpec(
    "room_size", "the floor area of this room or of X's room, in square metres", PROTOTYPES,
    (CueRule("room_size", CUE, -3.0),), options=frozenset({O.DISTANCE}), roles=Roles.OWN,
    solvers=((ROOM_SIZE, "floor_area"),), needs_target=False, subtask="Room Size", read=read, unit="m2"))
