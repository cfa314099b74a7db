"""What a question's picture needs to know about the question: its primitive (path answers get time
ticks and the room order) and, for a perspective question ("suppose I face the backpack"), the objects the
imagined observer faces and stands at. Read from the answer's ``Intent`` (the parse the answer was given for),
never from the question's text, so a picture cannot disagree with its answer."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..query.parsed import Intent, Primitive, Target
from ..query.vocab import label_keys

PATH_PRIMITIVES = (Primitive.MY_TRAJECTORY, Primitive.OBJECT_TRAJECTORY)


@dataclass(frozen=True)
class QuestionView:
    """The parts of a question a picture draws."""

    primitive: str  # a query.intent.Primitive value
    facing_id: Optional[str] = None  # object node the imagined heading points at (perspective questions)
    at_id: Optional[str] = None  # object node the imagined observer is at (None: where the wearer is)

    @property
    def is_path(self) -> bool:
        return self.primitive in PATH_PRIMITIVES


def _node_of(target: Optional[Target], snapshot: Any, prefer: Sequence[str]) -> Optional[str]:
    """The object node a question target names: one the answer used first, else any in memory."""
    if target is None:
        return None
    ids = [nid for nid in prefer if nid in snapshot.objects] + [nid for nid in snapshot.objects if nid not in prefer]
    return next((nid for nid in ids if target.key in label_keys(snapshot.objects[nid].label)), None)


def read_question(intent: Optional[Intent], snapshot: Any, targets: Sequence[str] = ()) -> Optional[QuestionView]:
    """The primitive and imagined viewpoint of an answer's ``intent``, its objects matched to ``snapshot``'s nodes
    (``targets``: the nodes the answer used, preferred when several match); None without a parse."""
    if intent is None:
        return None
    view = intent.viewpoint
    if view is None:
        return QuestionView(str(intent.primitive))
    return QuestionView(str(intent.primitive), _node_of(view.facing, snapshot, targets),
                        _node_of(view.at, snapshot, targets))
