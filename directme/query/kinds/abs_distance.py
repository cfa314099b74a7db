"""The ``abs_distance`` question kind: the distance between two objects measured between their closest points
(the centre-to-centre distance stays the ``distance`` kind's, which it refines: ``Intent.closest_points``):
"Measuring from the closest point of each object, what is the direct distance between the bed and the sofa (in
meters)?". Where a category has several instances, the closest pair counts. Its prototype sentences are written
for this meaning, never copied from an evaluation set."""
from __future__ import annotations

import re
from typing import Optional

from ..options import OptionKind as O
from ..parsed import Intent, Primitive as P
from . import CueRule, KindSpec, Roles, register
from .reading import Reading

CUE = (r"^(?=.*(?:\b(?:closest|nearest) (?:points?|parts?|edges?)\b|\bat their (?:closest|nearest)\b|"
       r"\bdirect distance\b))(?=.*\b(?:distance|far|apart|separate|gap|met(?:er|re)s?)\b)")
_CUE = re.compile(CUE)
_FRAME = re.compile(r"\b(?:how many|how far|separates?|apart|measuring|measured|"
                    r"from the (?:closest|nearest) points? of each object|each object|"
                    r"(?:closest|nearest) points?|met(?:er|re)s?|distance|direct|gap)\b")

PROTOTYPES = (
    "How far apart are the table and the sofa at their closest points?",
    "What is the direct distance between the bed and the desk, from their nearest points?",
    "How many metres separate the lamp from the chair at their closest?",
    "What is the gap between the nearest edges of the fridge and the counter?",
)


def read(r: Reading) -> Optional[Intent]:
    """The two objects (the second the reference) once the distance's frame words are dropped (None without
    words of closest points: a distance between centres)."""
    if not _CUE.search(r.text):
        return None
    targets = r.objects_in(_FRAME.sub(" ", r.text))[:2]
    return r.intent(P.DISTANCE, targets, references=tuple(targets[1:2]),
                    reference_text=targets[1].text if len(targets) > 1 else "", closest_points=True)


SPEC = register(KindSpec(
    "abs_distance", "the distance between the closest points of X and Y", PROTOTYPES,
    (CueRule("abs_distance", CUE, -2.0),), options=frozenset({O.DISTANCE}), roles=Roles.OWN,
    solvers=((P.DISTANCE, "closest_distance"),), needs_target=True, subtask="Absolute Distance", read=read,
    refines="distance", unit="m"))
