"""Room size: the floor area, in square metres, of the room the wearer is in ("this room") or of the room an
object is in ("the room with the sofa")."""
from __future__ import annotations

import re
from typing import Optional

from ..parsed import Intent, Primitive
from .base import Kind, Reading

_AREA = r"(?:square (?:met(?:er|re)s?|feet|foot)|m2|m\^2|sq\.? ?m|floor area|area)"
_CUE = re.compile(r"\b(?:size|area|big|large|how many square)\b.*\b(?:room|space)\b.*" + _AREA + r"|"
                  r"\b" + _AREA + r"\b.*\broom\b|\broom\b.*\b" + _AREA + r"\b|"
                  r"\b(?:what is the size|how big|how large) (?:is )?(?:of )?this room\b|"
                  r"\bhow many square (?:met(?:er|re)s?|feet)\b")
_OBJECT_ROOM = re.compile(r"\broom (?:that has|that holds|holding|containing|with|where|(?:that )?the)\b(?P<rest>.*)")


def _read(r: Reading) -> Optional[Intent]:
    if not _CUE.search(r.text):
        return None
    m = _OBJECT_ROOM.search(r.text)
    targets = r.objects_in(re.sub(r"\b(?:square|met(?:er|re)s?|m2|area|floor|size|room)\b", " ", m.group("rest"))) \
        if m else []
    return r.intent("room_size", Primitive.ROOM_SIZE, targets[:1])


KIND = Kind(
    name="room_size", primitive=Primitive.ROOM_SIZE, read=_read, option_kinds=("number",), solver="room_size",
    unit="m2",
    prototypes=("How big is this room in square metres?", "What is the floor area of the room I am in?",
                "How many square meters is the kitchen with the fridge?",
                "How large is the room the bed is in, in square metres?"))
