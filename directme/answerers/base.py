"""The answerer interface: a question plus retrieved ego-frame context in, an Answer out.

``QueryContext`` and its parts are owned by the query stage (directme/query/types.py) and ``Answer`` by
directme/types.py; they are re-exported here for answerer authors."""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from ..query.types import Evidence, Keyframe, QueryContext
from ..types import Answer, Flag

__all__ = ["Answer", "Answerer", "Evidence", "Flag", "Keyframe", "QueryContext"]


@runtime_checkable
class Answerer(Protocol):
    """Turns a QueryContext into an Answer."""

    name: str

    def answer(self, ctx: QueryContext) -> Answer: ...

    def answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]: ...
