"""The ``count_here`` question kind: how many X are in the room the wearer is in ("How many chair(s) are in this
room?", the benchmark's "{category}(s)" read as the category). It refines ``count``: the Intent's place is the
wearer's room (``HERE``). Its prototype sentences are written for this meaning, never copied from an
evaluation set."""
from __future__ import annotations

import re
from typing import Optional

from ..options import OptionKind as O
from ..parsed import Intent, Primitive as P
from ..timephrase import HERE
from . import CueRule, KindSpec, Roles, register
from .reading import Reading

_HERE = r"(?:this room|the room (?:i am|i'm|we are|we're)(?: standing| currently)? in|the room around me)"
# "how many <things> are / can I find ... in this room" (not "how many people can sit in this room": a capacity)
CUE = (r"^how many [\w' ()-]+? (?:are|is|are there|is there|can (?:i|you|we) (?:find|see|count)|can be found|"
       r"do (?:i|you|we) (?:see|have)|exist)\b.*\b" + _HERE + r"|"
       r"^(?:count|what(?: is|'s) the (?:number|count) of|tell me how many)\b.*\b" + _HERE +
       r"|^(?:in|inside) " + _HERE + r",? how many\b|"
       r"\bhow many [\w' ()-]+? (?:does|do) this room (?:have|contain)\b|"
       r"\bhow many [\w' ()-]+? this room (?:has|contains)\b")
_HERE_RE = re.compile(r"\b" + _HERE + r"\b")
_FRAME = re.compile(r"\b(?:count(?: of)?|number of|the number|tell me|please|are there|is there|are|is|"
                    r"can i find|there|in|inside|does|do|has|have|contains?|what's|what is)\b|" + _HERE)

PROTOTYPES = (
    "How many chairs are in this room?",
    "Count the stools in the room I am in.",
    "How many lamps does this room have?",
    "In this room, how many pillows are there?",
)


def read(r: Reading) -> Optional[Intent]:
    """The counted object, scoped to the wearer's room (None without words for it: a plain count)."""
    if not _HERE_RE.search(r.text):
        return None
    targets = r.objects_in(_FRAME.sub(" ", r.text.replace("(s)", "")))
    return r.intent(P.COUNT, targets[:1], places=(HERE,))


SPEC = register(KindSpec(
    "count_here", "how many X are in the room I am in", PROTOTYPES, (CueRule("count_here", CUE, -1.0),),
    options=frozenset({O.COUNT}), roles=Roles.OWN, solvers=((P.COUNT, "count"),), needs_target=True,
    subtask="Object Count", read=read, refines="count", unit=""))
