"""What the kinds that read their own phrases' roles (``Roles.OWN``, ``KindSpec.read``) are given: the question
with a way to turn a stretch of its words into the objects it names. The parser decides the kind first (the cue
rules in their one order, then the sentence classifier) and sets the parse's confidence, votes and flags."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ..parsed import Intent, Primitive, Target, Viewpoint
from ..timephrase import TimeRef


@dataclass(frozen=True)
class Reading:
    """A question as a kind module reads it: as asked, normalised (lower case, one space), its options, the
    objects a stretch of text names (known object names first, in order) and the time clause's reference."""

    question: str
    text: str
    options: tuple[str, ...]
    objects_in: Callable[[str], list[Target]]
    time_ref: TimeRef

    def intent(self, primitive: Primitive, targets: Sequence[Target] = (), **fields) -> Intent:
        """The Intent of the phrases' roles this kind read (``fields``: further Intent fields)."""
        return Intent(question=self.question, primitive=primitive, targets=tuple(targets), time_ref=self.time_ref,
                      **fields)


@dataclass(frozen=True)
class Roled:
    """A question whose phrases the parser gave their roles (a kind that does not read them itself), as a kind's
    ``KindSpec.within`` reads it to choose among its primitives: it returns it with the primitive, objects and
    comparison it chose, and ``kind`` changed where the question is another kind's (its primitive's)."""

    text: str  # normalised (lower case, contractions spelled out)
    kind: str
    primitive: Primitive  # the kind's first
    targets: tuple[Target, ...]
    references: tuple[Target, ...]
    viewpoint: Optional[Viewpoint]
    relation: str
    time_ref: TimeRef
    comparison: str = ""  # "closer" | "farther" (a distance comparison)
