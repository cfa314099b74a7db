"""Distance between two objects measured between their closest points (the centre-to-centre distance stays the
"distance" kind's): "Measuring from the closest point of each object, what is the direct distance between the bed
and the sofa (in meters)?". Where a category has several instances, the closest pair counts."""
from __future__ import annotations

import re
from typing import Optional

from ..parsed import Intent, Primitive
from .base import Kind, Reading

_CUE = re.compile(r"\b(?:closest|nearest) (?:points?|parts?|edges?)\b|\bat their (?:closest|nearest)\b|"
                  r"\bdirect distance\b")
_FRAME = re.compile(r"\b(?:how many|how far|separates?|apart|measuring|measured|"
                    r"from the (?:closest|nearest) points? of each object|each object|"
                    r"(?:closest|nearest) points?|met(?:er|re)s?|distance|direct|gap)\b")


def _read(r: Reading) -> Optional[Intent]:
    if not _CUE.search(r.text) or not re.search(r"\b(?:distance|far|apart|separate|gap|met(?:er|re)s?)\b", r.text):
        return None
    targets = r.objects_in(_FRAME.sub(" ", r.text))[:2]
    return r.intent("abs_distance", Primitive.DISTANCE, targets, references=tuple(targets[1:2]),
                    reference_text=targets[1].text if len(targets) > 1 else "", closest_points=True)


KIND = Kind(
    name="abs_distance", primitive=Primitive.DISTANCE, read=_read, option_kinds=("distance", "number"),
    solver="closest_distance", unit="m",
    prototypes=("How far apart are the table and the sofa at their closest points?",
                "What is the direct distance between the bed and the desk, from their nearest points?",
                "How many metres separate the lamp from the chair at their closest?"))
