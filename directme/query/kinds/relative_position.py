"""The ``relative_position`` question kind: X relative to Y, what is on / under / left of / between Y, an imagined viewpoint.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

import re
from dataclasses import replace

from .. import cues
from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import CueRule, KindSpec, Roles, kind_of_primitive, register
from ._rules import FALLBACK, cues_of
from .reading import Roled

_WHICH = re.compile(r"^(?:so |and |ok |okay |now )?(?:what|which)\b")
_SIDE = re.compile(r"\b(?:side|direction|way)\b")

_CUES = cues_of("relative_position", CueRule(
    "where_relative_to", f"^(?=.*(?:{cues._WHERE_RE.pattern}))(?=.*(?:{cues._RELATIVE_TO_RE.pattern}))", FALLBACK + 4))

PROTOTYPES = (
    "What is on the table?",
    "What is under the bed?",
    "What is to the left of the fridge?",
    "What is to the right of the television?",
    "What is behind the sofa?",
    "What is in front of the bookcase?",
    "What is between the desk and the window?",
    "What is hanging on the wall above the couch?",
    "What is next to the microwave?",
    "What is sitting on top of the cabinet?",
    "What is inside the drawer?",
    "What is lying on the floor near the bed?",
    "What is the white object on the shelf?",
    "What is the small thing next to the keyboard?",
    "Which object is directly above the sink?",
    "Is the cup on the table?",
    "Is the lamp to the left of the bed?",
    "Is there a pillow on the armchair?",
    "Is anything placed under the desk?",
    "Where is the vase relative to the television?",
    "Is the chair in front of the desk or behind it?",
    "On which side of the sofa is the plant?",
    "What is opposite the fireplace?",
    "What is across from the dining table?",
    "What is located in the corner of the room?",
    "What is mounted on the wall next to the door?",
    "If I sit on the bed facing the window, where is the wardrobe?",
    "If I stand at the sink and face the stove, which side is the fridge on?",
    "If I turn to face the door, where will the lamp be?",
    "Imagine you are sitting at the desk, what would be on your left?",
    "Suppose I face the window, which side is the couch on?",
    "Facing the TV, where would the bookshelf be?",
    "From the doorway, is the bed on the left or the right?",
    "Which object sits between the two armchairs?",
    "What is stacked below the printer?",
    "What is opposite the sofa?",
    "What is across the room from the bed?",
    "Is the lamp across from the armchair?",
    "What stands directly across from the door?",
)

def within(q: Roled) -> Roled:
    """Where X is for an imagined viewpoint (or what is around it), where X is relative to Y, what is around Y
    ("what is the black object behind the laptop": which object), or, nothing but X named, where X is for me."""
    targets, refs, view = q.targets, q.references, q.viewpoint
    if view is not None and (view.at or view.facing):
        return replace(q, primitive=P.FACING if targets else P.OBJECTS_AROUND)
    if refs and targets and _WHICH.match(q.text) and not _SIDE.search(q.text):
        return replace(q, primitive=P.OBJECTS_AROUND)
    if refs and targets:
        return replace(q, primitive=P.RELATIVE_POSITION)
    if refs:
        return replace(q, primitive=P.OBJECTS_AROUND)
    if len(targets) >= 2:
        return replace(q, primitive=P.RELATIVE_POSITION, targets=targets[:-1], references=targets[-1:])
    if len(targets) == 1 and not q.relation:  # "which quadrant around me is the bed in", "the whiteboard?"
        return replace(q, primitive=P.EGO_DIRECTION, kind=kind_of_primitive(P.EGO_DIRECTION) or q.kind)
    return q


SPEC = register(KindSpec(
    "relative_position", "X relative to Y, what is on / under / left of / between Y, an imagined viewpoint",
    PROTOTYPES, _CUES,
    options=frozenset({O.DIRECTION, O.CLOCK, O.OBJECT, O.YES, O.NO}), roles=Roles.RELATION,
    solvers=((P.RELATIVE_POSITION, "relative"), (P.FACING, "facing"), (P.OBJECTS_AROUND, "objects_around", False)),
    needs_target=True, subtask="Relative Position & Orientation Memory", within=within))
