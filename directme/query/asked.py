"""What a question asks within its primitive, read once from its words by the parser: which change ("what did
I move", "what is new", "is the cup still there"), which end of the order things were seen in ("what did I see
last"), whether a place question asks for a floor, and whether a route question asks for the path, in rooms, or
whether the wearer is back where they started, and whether a comparison of distances to a named object measures
between closest points. Answerers and pictures read these ``Intent`` fields, never the
question's text, so an answer and its picture always agree with the parse.

The rules match the question lower-cased as written (not ``normalise_question``'s text): the answers given
before these fields existed read the same words."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from .parsed import ChangeAsked, Intent, Primitive, SequenceEnd

_STILL = re.compile(r"\bstill\b|\b(?:is|are) (?:the |my )?.+ (?:there|here) (?:any ?more|now)\b")
_MOVED = re.compile(r"\b(?:mov(?:e|ed|ing)|pick(?:ed)? up|carr(?:y|ied)|relocat\w*|put (?:down|away|back))\b")
_GONE = re.compile(r"\b(?:removed|missing|gone|taken(?: away)?|disappeared|no longer)\b")
_FIRST = re.compile(r"\b(?:first|earliest)\b")
_LAST = re.compile(r"\b(?:last|latest|most recent(?:ly)?)\b")
_FLOOR = re.compile(r"\b(?:which|what) (?:floor|storey|story|level)\b|\bon (?:which|what) (?:floor|storey|level)\b")
_PATH = re.compile(r"\b(path|route|trajectory|way|where have i been|which (rooms|places) did i)\b")
_BACK = re.compile(r"\bback (?:to |at |near )?(?:where|the (?:place|spot) where) (?:i|we) (?:started|began|was)\b")
_ROOMS = re.compile(r"\b(room|rooms|place|places|area|areas)\b")
_CLOSEST_POINTS = re.compile(r"\b(?:closest|nearest) points?\b")


def change_asked(question: str) -> ChangeAsked:
    """The change a question on change asks about (new, when it names no other)."""
    q = question.lower()
    if _STILL.search(q):
        return ChangeAsked.STILL_THERE
    if _MOVED.search(q):
        return ChangeAsked.MOVED
    if _GONE.search(q):
        return ChangeAsked.REMOVED
    return ChangeAsked.APPEARED


def sequence_end(question: str) -> Optional[SequenceEnd]:
    """Which end of the order of sightings a question asks for ("what did I see last?"); a question naming
    both is read as "last" (None: neither, the order itself)."""
    q = question.lower()
    if _LAST.search(q):
        return SequenceEnd.LAST
    return SequenceEnd.FIRST if _FIRST.search(q) else None


def with_asked(intent: Intent) -> Intent:
    """``intent`` with the fields its primitive has set from its question's words (see module docstring)."""
    q, p = intent.question.lower(), intent.primitive
    if p == Primitive.CHANGES:
        return replace(intent, change=change_asked(q))
    if p == Primitive.CATEGORY_RECALL:  # (a kind module reading its own roles sets its fields, query/kinds)
        return replace(intent, sequence_end=sequence_end(q))
    if p in (Primitive.OBJECT_LOCATION, Primitive.CURRENT_PLACE):
        return replace(intent, floor_asked=bool(_FLOOR.search(q)))
    if p == Primitive.DISTANCE_COMPARE and intent.references:  # "measuring from the closest point of each object"
        return replace(intent, closest_points=bool(_CLOSEST_POINTS.search(q)))
    if p == Primitive.MY_TRAJECTORY:
        return replace(intent, back_at_start=bool(_BACK.search(q)), path_asked=bool(_PATH.search(q)),
                       rooms_asked=bool(_ROOMS.search(q)))
    return intent
