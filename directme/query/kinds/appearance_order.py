"""First-appearance order of named objects or categories: "What will be the first-time appearance order of the
following categories in the video: chair, lamp, sofa, bed?" (options list orders), or "Which did I see first, the
backpack or the whiteboard?"."""
from __future__ import annotations

import re
from typing import Optional

from ..parsed import Intent, Primitive, Target
from .base import Kind, Reading

_CUE = re.compile(r"\b(?:appearance order|order of (?:first )?appearance|first[- ]time appearance|"
                  r"by first appearance)\b|"
                  r"\border\b.*\bfirst (?:appear\w*|saw|seen|see|show\w* up|came into view)\b|"
                  r"\b(?:by|rank these by) (?:when|the time) (?:i|each) first\b|\bsort these by when i first\b")
_WHICH_FIRST = re.compile(r"^which (?:one |of these |of them )?(?:did|have) (?:i|we) (?:see|seen|spot|spotted|notice|"
                          r"noticed) first\b|^which (?:came|appeared|showed up) first\b")
_SPLIT = re.compile(r",|\bor\b|\band\b|\bthen\b")


def items(r: Reading, text: str) -> list[Target]:
    """The objects a list names, in order (one per comma / "or" / "and" separated item)."""
    out = []
    for part in _SPLIT.split(text):
        found = r.objects_in("the " + part)
        if found:
            out.append(found[0])
    return out


def _read(r: Reading) -> Optional[Intent]:
    if _CUE.search(r.text):
        listed = r.text.rsplit(":", 1)[1] if ":" in r.text else r.text
    elif _WHICH_FIRST.search(r.text):
        listed = _WHICH_FIRST.sub(" ", r.text)
    else:
        return None
    targets = items(r, re.sub(r"[?.]", " ", listed))
    sequences = tuple(tuple(t.key for t in items(r, o)) for o in r.options)
    return r.intent("appearance_order", Primitive.APPEARANCE_ORDER, targets, sequences=sequences)


KIND = Kind(
    name="appearance_order", primitive=Primitive.APPEARANCE_ORDER, read=_read, option_kinds=("sequence", "object"),
    solver="appearance_order",
    prototypes=("In which order did I first see the cup, the lamp and the chair?",
                "Which did I see first, the sofa or the bed?",
                "Order these by when they first appeared: table, plant, TV."))
