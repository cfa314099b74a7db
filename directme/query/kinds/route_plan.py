"""Route planning: the turn at each step of a route between named objects, as the benchmark asks it: "You are a
robot beginning at the bed facing the tv. You want to navigate to the toilet. You will perform the following
actions (Note: for each [please fill in], choose either 'turn back,' 'turn left,' or 'turn right.'): 1. Go forward
until the tv 2. [please fill in] 3. Go forward until the toilet. You have reached the final destination."
Targets, in route order: the start, each object gone forward to, the destination when no step names it."""
from __future__ import annotations

import re
from typing import Optional

from ..parsed import Intent, Primitive
from .base import Kind, Reading

_CUE = re.compile(r"\[please fill in\]|\bgo forward until\b|\bfill in the turns\b|"
                  r"\bturns? of (?:the|this) route\b")
_START = re.compile(r"\b(?:beginning|begin|start|starting|stand|standing) at the (?P<obj>.+?),? "
                    r"(?:facing|looking (?:at|towards?)) the (?P<facing>.+?)(?:[.,]|\band\b)")
_END = re.compile(r"\b(?:navigate|walk|get|go) to the (?P<obj>.+?)[.,]|\b(?:heading for|reach) the (?P<obj2>.+?)[.,]")
_FORWARD = re.compile(r"\bgo forward until (?:you reach )?the (?P<obj>.+?)(?=\.|,|$| \d+\.| \[)")
_TURN = re.compile(r"\bturn (left|right|back|around)\b")


def _read(r: Reading) -> Optional[Intent]:
    if not _CUE.search(r.text):
        return None
    start, end = _START.search(r.text), _END.search(r.text)
    names = ([start.group("obj")] if start else []) + [m.group("obj") for m in _FORWARD.finditer(r.text)]
    if start and not _FORWARD.search(r.text):
        names.append(start.group("facing"))
    if end and (end.group("obj") or end.group("obj2")) != (names[-1] if names else None):
        names.append(end.group("obj") or end.group("obj2"))
    targets = [t[0] for t in (r.objects_in("the " + n) for n in names) if t]
    sequences = tuple(tuple("back" if w == "around" else w for w in _TURN.findall(o.lower())) for o in r.options)
    return r.intent("route_plan", Primitive.ROUTE_PLAN, targets, sequences=sequences)


KIND = Kind(
    name="route_plan", primitive=Primitive.ROUTE_PLAN, read=_read, option_kinds=("sequence",), solver="route_plan",
    prototypes=("Starting at the bed facing the desk, go forward until the desk, [please fill in], go forward until "
                "the door: which turn?",
                "You begin at the sofa facing the TV and walk to the fridge: fill in the turns of the route."))
