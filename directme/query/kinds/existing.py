"""The kinds the parser has long known, registered from where their parts still live: prototype sentences
in query/prototypes.py, cue rules in query/cues.py (in their order there), role assignment in
query/intent.py. Each moves to its own module under query/kinds/ as it is taken apart."""
from __future__ import annotations

from .. import cues
from ..options import OptionKind as O
from ..parsed import Primitive as P
from ..prototypes import PROTOTYPES
from . import CueRule, KindSpec, Roles, register

# rules tried after the ordered list of query/cues.py (cue_kind's fallbacks), in this order
_TAIL = (("quantity_change", "count_change", cues._COUNT_CHANGE_RE.pattern), ("count", "count", cues._COUNT_RE.pattern),
         ("place", "place", cues._PLACE_RE.pattern), ("category_recall", "recall", cues._RECALL_RE.pattern),
         ("relative_position", "where_relative_to",
          f"^(?=.*(?:{cues._WHERE_RE.pattern}))(?=.*(?:{cues._RELATIVE_TO_RE.pattern}))"),
         ("ego_direction", "where", cues._WHERE_RE.pattern))


def _cues(kind: str) -> tuple[CueRule, ...]:
    listed = [CueRule(name, pattern, float(i), cues._UNLESS.get(name, ""))
              for i, (k, name, pattern) in enumerate(cues._CUES) if k == kind]
    tail = [CueRule(name, pattern, 100.0 + i) for i, (k, name, pattern) in enumerate(_TAIL) if k == kind]
    return tuple(listed + tail)


def _spec(name: str, meaning: str, roles: Roles, solvers: tuple, options: frozenset = frozenset(),
          subtask: str = "", needs_target: bool = True) -> KindSpec:
    return register(KindSpec(name, meaning, PROTOTYPES[name], _cues(name), frozenset(options), roles, solvers,
                             needs_target, subtask=subtask))


_spec("ego_direction", "where X is relative to me now (side, direction, clock hour), or where I left X", Roles.OBJECT,
      ((P.EGO_DIRECTION, "ego_direction"),), {O.DIRECTION, O.CLOCK}, "Ego-centric Position")
_spec("distance", "how far X is from me or from a named object", Roles.DISTANCE, ((P.DISTANCE, "metres"),),
      {O.DISTANCE})
_spec("distance_compare", "which of two objects is closer / farther (from me or from a named object)",
      Roles.DISTANCE, ((P.DISTANCE_COMPARE, "distance"),), {O.YES, O.NO, O.OBJECT}, "Distance Comparison")
_spec("reachability", "whether I can reach X from where I stand", Roles.OBJECT, ((P.REACHABILITY, "reach"),),
      {O.YES, O.NO}, "Reachability Judgment")
_spec("relative_position", "X relative to Y, what is on / under / left of / between Y, an imagined viewpoint",
      Roles.RELATION, ((P.RELATIVE_POSITION, "relative"), (P.FACING, "facing"), (P.OBJECTS_AROUND, "objects_around")),
      {O.DIRECTION, O.CLOCK, O.OBJECT, O.YES, O.NO}, "Relative Position & Orientation Memory")
_spec("object_trajectory", "whether / where X was moved; what was moved, is new or missing", Roles.OBJECT,
      ((P.OBJECT_TRAJECTORY, "object_room"), (P.CHANGES, "changes")), {O.PLACE, O.OBJECT, O.YES, O.NO},
      "Object Trajectory")
_spec("my_trajectory", "my own route, rooms visited, distance walked", Roles.ROUTE, ((P.MY_TRAJECTORY, "my_room"),),
      {O.PLACE, O.DISTANCE}, "My Trajectory", needs_target=False)
_spec("quantity_change", "whether the number of X changed", Roles.OBJECT, ((P.COUNT_CHANGE, "count"),), {O.COUNT},
      "Quantity Change Tracking")
_spec("count", "how many X there are", Roles.OBJECT, ((P.COUNT, "count"),), {O.COUNT}, "Quantity Change Tracking")
_spec("category_recall", "whether I saw X, what objects were in a place", Roles.CORE,
      ((P.CATEGORY_RECALL, "recall"),), {O.OBJECT, O.YES, O.NO}, "Object Category Recall", needs_target=False)
_spec("place", "which room X is in, where I am", Roles.PLACE,
      ((P.OBJECT_LOCATION, "object_room"), (P.CURRENT_PLACE, "current_room")), {O.PLACE}, needs_target=False)
register(KindSpec("open", "anything memory geometry cannot answer (attributes, states, functions, text, activities)",
                  PROTOTYPES["open"], _cues("open"), roles=Roles.CORE, solvers=((P.OPEN, ""),), needs_target=False,
                  geometric=False))
