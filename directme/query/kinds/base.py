"""What a question kind is (its home: cue rules, roles, option kinds, solver, prototype sentences) and what its
rules read: the question with a way to turn a stretch of its words into the objects it names."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ..parsed import Intent, Primitive, Target
from ..timephrase import TimeRef

CUE_CONFIDENCE = 0.9  # the confidence of a parse one of these kinds' exact cue rules decided


@dataclass(frozen=True)
class Reading:
    """A question as the kind rules read it: as asked, normalised (lower case, one space), its options, the
    objects a stretch of text names (known object names first, in order) and the time clause's reference."""

    question: str
    text: str
    options: tuple[str, ...]
    objects_in: Callable[[str], list[Target]]
    time_ref: TimeRef

    def intent(self, kind: str, primitive: Primitive, targets: Sequence[Target] = (), **fields) -> Intent:
        """The Intent this kind's rules decided (``fields``: further Intent fields)."""
        return Intent(question=self.question, primitive=primitive, targets=tuple(targets), time_ref=self.time_ref,
                      confidence=CUE_CONFIDENCE, how=f"rule:{kind}", **fields)


@dataclass(frozen=True)
class Kind:
    """One question kind: ``read`` applies its cue rules and gives its phrases their roles (None when its cues do
    not match); ``prototypes`` say its meaning in sentences (for the sentence classifier); ``option_kinds`` what
    its options state; ``solver`` the geometric answerer's solver that answers it; ``unit`` of a numeric answer."""

    name: str
    primitive: Primitive
    read: Callable[[Reading], Optional[Intent]]
    prototypes: tuple[str, ...]
    option_kinds: tuple[str, ...]
    solver: str
    unit: Optional[str] = None  # None: not a numeric answer
