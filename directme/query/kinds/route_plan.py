"""The ``route_plan`` question kind: the turn at each step of a route between named objects, as the benchmark
asks it: "You are a robot beginning at the bed facing the tv. You want to navigate to the toilet. You will
perform the following actions (Note: for each [please fill in], choose either 'turn back,' 'turn left,' or 'turn
right.'): 1. Go forward until the tv 2. [please fill in] 3. Go forward until the toilet. You have reached the
final destination." Targets, in route order: the start, each object gone forward to, the destination when no
step names it. Its prototype sentences are written for this meaning, never copied from an evaluation set."""
from __future__ import annotations

import re

from ..parsed import Intent, Primitive
from . import CueRule, KindSpec, Roles, register
from .reading import Reading

ROUTE_PLAN = Primitive.declare("route_plan")  # the turns of a route between objects

CUE = r"\[please fill in\]|\bgo forward until\b|\bfill in the turns\b|\bturns? of (?:the|this) route\b"
_START = re.compile(r"\b(?:beginning|begin|start|starting|stand|standing) at the (?P<obj>.+?),? "
                    r"(?:facing|looking (?:at|towards?)) the (?P<facing>.+?)(?:[.,]|\band\b)")
_END = re.compile(r"\b(?:navigate|walk|get|go) to the (?P<obj>.+?)[.,]|\b(?:heading for|reach) the (?P<obj2>.+?)[.,]")
_FORWARD = re.compile(r"\bgo forward until (?:you reach )?the (?P<obj>.+?)(?=\.|,|$| \d+\.| \[)")
_TURN = re.compile(r"\bturn (left|right|back|around)\b")

PROTOTYPES = (
    "Starting at the bed facing the desk, go forward until the desk, [please fill in], go forward until the door: "
    "which turn?",
    "You begin at the sofa facing the TV and walk to the fridge: fill in the turns of the route.",
    "From the sink, facing the oven, I go forward until the oven, then [please fill in], then go forward until the "
    "table.",
    "Start at the door facing the sofa. Go forward until the sofa. [please fill in] Go forward until the lamp.",
    "Standing at the desk facing the window, what are the turns of this route to the bed?",
    "Beginning at the fridge facing the table, I want to walk to the sink: fill in the turns.",
    "Go forward until the chair, [please fill in], go forward until the shelf: left, right or back?",
    "You start at the bed facing the wardrobe and need to reach the door. Which turns fill the gaps: go forward "
    "until the wardrobe, [please fill in], go forward until the door?",
    "From the couch facing the TV, go forward until the TV, then [please fill in] and go forward until the plant.",
    "Which turn comes after going forward until the stove: [please fill in], then go forward until the counter?",
)


def read(r: Reading) -> Intent:
    """The route's stops in order; per option, the turn words it lists (``Intent.sequences``, "around" = back)."""
    start, end = _START.search(r.text), _END.search(r.text)
    names = ([start.group("obj")] if start else []) + [m.group("obj") for m in _FORWARD.finditer(r.text)]
    if start and not _FORWARD.search(r.text):
        names.append(start.group("facing"))
    if end and (end.group("obj") or end.group("obj2")) != (names[-1] if names else None):
        names.append(end.group("obj") or end.group("obj2"))
    targets = [t[0] for t in (r.objects_in("the " + n) for n in names) if t]
    sequences = tuple(tuple("back" if w == "around" else w for w in _TURN.findall(o.lower())) for o in r.options)
    return r.intent(ROUTE_PLAN, targets, sequences=sequences)


SPEC = register(KindSpec(
    "route_plan", "the turns of a route between named objects", PROTOTYPES, (CueRule("route_plan", CUE, -6.0),),
    roles=Roles.OWN, solvers=((ROUTE_PLAN, "route_turns"),), needs_target=True,
    subtask="Route Plan", read=read))
