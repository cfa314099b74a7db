"""Question kinds with one home each (a module per kind: its cue rules, roles, option kinds, solver and prototype
sentences) and the registry the question parser consults before its general rules (query/intent.py)."""
from __future__ import annotations

from typing import Optional

from ..parsed import Intent
from . import abs_distance, appearance_order, count_here, object_size, room_size, route_plan
from .base import Kind, Reading

KINDS: tuple[Kind, ...] = (route_plan.KIND, appearance_order.KIND, object_size.KIND, room_size.KIND,
                           abs_distance.KIND, count_here.KIND)  # the first whose cues match decides


def read(reading: Reading) -> Optional[Intent]:
    """The Intent of the first registered kind whose cue rules match, or None (the general rules decide)."""
    for kind in KINDS:
        intent = kind.read(reading)
        if intent is not None:
            return intent
    return None


def kind_named(name: str) -> Kind:
    return next(k for k in KINDS if k.name == name)


__all__ = ["KINDS", "Kind", "Reading", "kind_named", "read"]
