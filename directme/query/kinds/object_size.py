"""Object size: the longest dimension of an object (its observed extent), in centimetres.

"What is the length of the longest dimension (length, width, or height) of the backpack, measured in
centimeters?", "How big is the sofa? Give its longest dimension in cm.\""""
from __future__ import annotations

import re
from typing import Optional

from ..parsed import Intent, Primitive
from .base import Kind, Reading

_CUE = re.compile(r"\b(?:longest|largest|biggest|greatest) (?:dimension|side|edge|extent)\b|"
                  r"\bhow (?:long|big|large|tall|wide) is the [\w' -]+? (?:at|along) (?:its|it is) longest\b|"
                  r"\b(?:longest|largest) (?:dimension|side|edge)\b|\bat (?:its|it is) longest\b")
_FRAME = re.compile(r"\((?:length|width|height)[^)]*\)|\b(?:longest|largest|biggest|greatest) (?:dimension|side|edge|extent)s?\b|"
                    r"\b(?:length|width|height|dimension|extent|size)s?\b|"
                    r"\b(?:centimet(?:er|re)s?|cm|measured|longest|largest|biggest|greatest|give|tell|me|how many|"
                    r"long|big|large|tall|wide|roughly|about|approximately)\b|'s\b")


def _read(r: Reading) -> Optional[Intent]:
    if not _CUE.search(r.text):
        return None
    targets = r.objects_in(_FRAME.sub(" ", r.text))
    return r.intent("object_size", Primitive.OBJECT_SIZE, targets[:1])


KIND = Kind(
    name="object_size", primitive=Primitive.OBJECT_SIZE, read=_read, option_kinds=("number",),
    solver="object_size", unit="cm",
    prototypes=("How long is the longest side of the table?",
                "What is the biggest dimension of the bed in centimetres?",
                "How large is the lamp along its longest edge?", "What size is the cabinet at its longest?"))
