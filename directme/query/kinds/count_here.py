"""Counts scoped to the room the wearer is in: "How many chair(s) are in this room?" (the benchmark's
"{category}(s)" read as the category)."""
from __future__ import annotations

import re
from typing import Optional

from ..parsed import Intent, Primitive
from ..timephrase import HERE
from .base import Kind, Reading

_HERE = r"(?:this room|the room (?:i am|i'm|we are|we're)(?: standing| currently)? in|the room around me)"
# "how many <things> are / can I find ... in this room" (not "how many people can sit in this room": a capacity)
_CUE = re.compile(r"^how many [\w' ()-]+? (?:are|is|are there|is there|can (?:i|you|we) (?:find|see|count)|"
                  r"can be found|do (?:i|you|we) (?:see|have)|exist)\b.*\b" + _HERE + r"|"
                  r"^(?:count|what(?: is|'s) the (?:number|count) of|tell me how many)\b.*\b" + _HERE +
                  r"|^(?:in|inside) " + _HERE + r",? how many\b|"
                  r"\bhow many [\w' ()-]+? (?:does|do) this room (?:have|contain)\b|"
                  r"\bhow many [\w' ()-]+? this room (?:has|contains)\b")
_FRAME = re.compile(r"\b(?:count(?: of)?|number of|the number|tell me|please|are there|is there|are|is|"
                    r"can i find|there|in|inside|does|do|has|have|contains?|what's|what is)\b|" + _HERE)


def _read(r: Reading) -> Optional[Intent]:
    if not _CUE.search(r.text):
        return None
    targets = r.objects_in(_FRAME.sub(" ", r.text.replace("(s)", "")))
    return r.intent("count_here", Primitive.COUNT, targets[:1], places=(HERE,))


KIND = Kind(
    name="count_here", primitive=Primitive.COUNT, read=_read, option_kinds=("count", "number"), solver="count",
    unit="",
    prototypes=("How many chairs are in this room?", "Count the cups in the room I'm in.",
                "How many lamps does this room have?"))
