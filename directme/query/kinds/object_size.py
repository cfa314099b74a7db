"""The ``object_size`` question kind: the longest dimension of an object (its observed extent), in centimetres.

"What is the length of the longest dimension (length, width, or height) of the backpack, measured in
centimeters?", "How big is the sofa? Give its longest dimension in cm." Its prototype sentences are written for
this meaning, never copied from an evaluation set (the sentence classifier compares questions with them)."""
from __future__ import annotations

import re

from ..options import OptionKind as O
from ..parsed import Intent, Primitive
from . import CueRule, KindSpec, Roles, register
from .reading import Reading

OBJECT_SIZE = Primitive.declare("object_size")  # the longest dimension of X

CUE = (r"\b(?:longest|largest|biggest|greatest) (?:dimension|side|edge|extent)\b|"
       r"\bhow (?:long|big|large|tall|wide) is the [\w' -]+? (?:at|along) (?:its|it is) longest\b|"
       r"\bat (?:its|it is) longest\b")
# the words that frame a size, not name the object ("side" of "side table" stays: only "longest side" goes)
_FRAME = re.compile(r"\((?:length|width|height)[^)]*\)|\b(?:longest|largest|biggest|greatest) (?:dimension|side|edge|"
                    r"extent)s?\b|\b(?:length|width|height|dimension|extent|size)s?\b|"
                    r"\b(?:centimet(?:er|re)s?|cm|measured|longest|largest|biggest|greatest|give|tell|me|how many|"
                    r"long|big|large|tall|wide|roughly|about|approximately)\b|'s\b")

PROTOTYPES = (
    "How long is the longest side of the table?",
    "What is the biggest dimension of the bed in centimetres?",
    "How large is the lamp along its longest edge?",
    "What size is the cabinet at its longest?",
    "How many centimetres long is the desk at its longest?",
    "What is the greatest extent of the wardrobe, in cm?",
    "What is the largest dimension of the sofa, in centimeters?",
    "How tall is the bookshelf at its longest?",
    "Tell me the longest side of the rug in cm.",
    "How wide is the bench along its longest edge?",
    "Roughly how long is the piano along its longest side?",
    "What is the biggest side of the refrigerator, measured in centimetres?",
)


def read(r: Reading) -> Intent:
    """The object whose size is asked: the first the words name once the size's frame words are dropped."""
    return r.intent(OBJECT_SIZE, r.objects_in(_FRAME.sub(" ", r.text))[:1])


SPEC = register(KindSpec(
    "object_size", "the longest dimension of X, in centimetres", PROTOTYPES, (CueRule("object_size", CUE, -4.0),),
    options=frozenset({O.DISTANCE}), roles=Roles.OWN, solvers=((OBJECT_SIZE, "longest_side"),), needs_target=True,
    subtask="Object Size", read=read, unit="cm"))
