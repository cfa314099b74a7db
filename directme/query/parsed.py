"""The parsed question (query/intent.py makes it): the asked primitive with its confidence, the target
objects, a reference and relation, an imagined viewpoint and the time reference; the contract between
the parser and everything that answers."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Optional

from ..errors import InvalidInputError
from ..types import Flag, TextEnum
from .timephrase import HERE, TimeKind, TimeRef  # noqa: F401 (HERE, TimeKind: the time reference's, for readers)

if TYPE_CHECKING:
    from .calibrate import Votes


class Primitive(TextEnum):
    """What a question asks of memory."""

    EGO_DIRECTION = "ego_direction"  # where is X relative to me now
    FACING = "facing"  # where is X if I face Y
    RELATIVE_POSITION = "relative_position"  # where is X relative to Y, in my orientation
    DISTANCE_COMPARE = "distance_compare"  # which is closer / farther
    REACHABILITY = "reachability"  # can I reach X
    COUNT = "count"  # how many X
    COUNT_CHANGE = "count_change"  # how did the number of X change
    CATEGORY_RECALL = "category_recall"  # which of these did I see
    MY_TRAJECTORY = "my_trajectory"  # where did I go
    OBJECT_TRAJECTORY = "object_trajectory"  # where was / did X go
    OBJECT_LOCATION = "object_location"  # which room is X in
    DISTANCE = "distance"  # how far is X from me, or from a named reference
    OBJECTS_AROUND = "objects_around"  # what is left of / on / under / between a reference
    CURRENT_PLACE = "current_place"  # where am I, what room is this
    CHANGES = "changes"  # what did I move, what is new / missing (in P), is X still there
    OBJECT_SIZE = "object_size"  # the longest dimension of X (query/kinds/object_size.py)
    ROOM_SIZE = "room_size"  # the floor area of this room or of X's room (query/kinds/room_size.py)
    APPEARANCE_ORDER = "appearance_order"  # the order X, Y, ... were first seen (query/kinds/appearance_order.py)
    ROUTE_PLAN = "route_plan"  # the turns of a route between objects (query/kinds/route_plan.py)
    OPEN = "open"  # understood as needing a visual language model (attributes, states, activities, ...)
    UNKNOWN = "unknown"  # not understood


PRIMITIVES = tuple(p.value for p in Primitive)


class ChangeAsked(TextEnum):
    """Which change a ``CHANGES`` question asks about."""

    MOVED = "moved"  # "what did I move"
    REMOVED = "removed"  # "what is missing"
    APPEARED = "appeared"  # "what is new" (the reading when no other change is named)
    STILL_THERE = "still_there"  # "is the cup still there": one object's presence


class SequenceEnd(TextEnum):
    """Which end of the order things were seen in a question asks for ("what did I see first / last")."""

    FIRST = "first"
    LAST = "last"


@dataclass(frozen=True)
class Target:
    """An object the question is about: its canonical key, the words used, colour and place."""

    key: str
    text: str
    colour: Optional[str] = None
    place: Optional[str] = None


@dataclass(frozen=True)
class Viewpoint:
    """An imagined viewpoint ("if I sit on the couch facing the TV"): the clause as written, the object
    the observer is at (None: where the wearer is) and the object they face (None: not said)."""

    text: str
    at: Optional[Target] = None
    facing: Optional[Target] = None


# The kind of question (the intent labels' names, query/prototypes.py) each primitive answers.
KIND_OF_PRIMITIVE = {
    Primitive.EGO_DIRECTION: "ego_direction", Primitive.FACING: "relative_position",
    Primitive.RELATIVE_POSITION: "relative_position", Primitive.OBJECTS_AROUND: "relative_position",
    Primitive.DISTANCE: "distance", Primitive.DISTANCE_COMPARE: "distance_compare",
    Primitive.REACHABILITY: "reachability", Primitive.COUNT: "count", Primitive.COUNT_CHANGE: "quantity_change",
    Primitive.CATEGORY_RECALL: "category_recall", Primitive.MY_TRAJECTORY: "my_trajectory",
    Primitive.OBJECT_TRAJECTORY: "object_trajectory", Primitive.OBJECT_LOCATION: "place",
    Primitive.CURRENT_PLACE: "place", Primitive.CHANGES: "object_trajectory", Primitive.OPEN: "open",
    Primitive.UNKNOWN: "open", Primitive.OBJECT_SIZE: "object_size", Primitive.ROOM_SIZE: "room_size",
    Primitive.APPEARANCE_ORDER: "appearance_order", Primitive.ROUTE_PLAN: "route_plan",
}
MIN_PARSE_CONFIDENCE = 0.5  # below this the geometric answerer abstains (answerer option min_parse_confidence)


@dataclass(frozen=True)
class ParserConfig:
    """How far the question parser trusts each kind of evidence (config ``query.parser``; query/intent.py,
    optionkinds.py, classify.py). Calibrated on the project's own prototypes and probe phrasings
    (docs/agent.md); the cue rules' own confidences stay beside their patterns (query/cues.py)."""

    min_confidence: float = MIN_PARSE_CONFIDENCE  # below it a parse is flagged not_understood
    options_only: float = 0.45  # the confidence of a kind read from the options alone (below min: an MLLM's)
    unsure_meaning: float = 0.3  # meaning probability from which options that fit its kind make it answerable
    meaning_and_options: float = 0.55  # the confidence of that agreeing pair (just above min_confidence)
    classifier_sure: float = 0.5  # the written question's kind probability that decides without the masked view
    classifier_masked_sure: float = 0.8  # the masked view's probability needed to decide instead
    classifier_top_k: int = 3  # prototypes per kind whose mean cosine is the kind's score

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "classifier_top_k":
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise InvalidInputError(f"query.parser.{f.name} must be an integer >= 1, got {v!r:.40}")
            elif isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= 1:
                raise InvalidInputError(f"query.parser.{f.name} must be a number in [0, 1], got {v!r:.40}")


DEFAULT_PARSER = ParserConfig()


@dataclass(frozen=True)
class Intent:
    """A parsed question. ``targets`` are all objects memory must find, in order: the asked objects,
    then the references, then the viewpoint's objects; ``asked`` are the first ones alone."""

    question: str
    primitive: Primitive
    targets: tuple[Target, ...] = ()
    time_ref: TimeRef = field(default_factory=TimeRef)
    places: tuple[str, ...] = ()  # place words scoping the question ("in the kitchen")
    comparison: str = ""  # "closer" | "farther" for distance comparison
    binary: bool = False  # yes/no question
    flags: tuple[Flag, ...] = ()
    confidence: float = 1.0  # how sure the parse is: the calibrated probability that it is right
    relation: str = ""  # left | right | front | behind | on | above | under | near | between | opposite | in | at
    references: tuple[Target, ...] = ()  # the landmark(s) of the relation (two for "between")
    reference_text: str = ""  # the reference as written ("sofa and the chair")
    viewpoint: Optional[Viewpoint] = None
    how: str = ""  # what decided the kind: "rule:<name>", "embedding", "options", "none"
    walked: bool = False  # my_trajectory asked as a distance: "how far have I walked (since ...)"
    votes: Optional["Votes"] = None  # what voted for the kind (query/calibrate.py maps them to ``confidence``)
    # what the question asks within its primitive (query/asked.py reads it; answerers and pictures read only these)
    change: Optional[ChangeAsked] = None  # CHANGES: the change asked (None for other primitives)
    # CATEGORY_RECALL, APPEARANCE_ORDER: "seen first / last" (None: the order itself)
    sequence_end: Optional[SequenceEnd] = None
    floor_asked: bool = False  # OBJECT_LOCATION, CURRENT_PLACE: "which floor" (memory knows rooms, not floors)
    back_at_start: bool = False  # MY_TRAJECTORY: "am I back where I started?" (a yes / no on the path)
    path_asked: bool = False  # MY_TRAJECTORY: the path walked ("which rooms did I go through"), not one room
    rooms_asked: bool = False  # MY_TRAJECTORY: asked in rooms or places (without room names memory says so)
    closest_points: bool = False  # a distance between objects' closest points, not their centres
    sequences: tuple[tuple[str, ...], ...] = ()  # per option, the items it lists in order (target keys, turns)

    def __post_init__(self) -> None:
        object.__setattr__(self, "primitive", Primitive(self.primitive))
        if self.change is not None:
            object.__setattr__(self, "change", ChangeAsked(self.change))
        if self.sequence_end is not None:
            object.__setattr__(self, "sequence_end", SequenceEnd(self.sequence_end))

    @property
    def understood(self) -> bool:
        return self.primitive != Primitive.UNKNOWN

    @property
    def kind(self) -> str:
        """The question kind (ego_direction, distance, ..., open) this intent's primitive answers."""
        return KIND_OF_PRIMITIVE[self.primitive]

    @property
    def asked(self) -> tuple[Target, ...]:
        """The objects asked about (targets without references and viewpoint objects)."""
        extra = set(self.references)
        if self.viewpoint is not None:
            extra |= {t for t in (self.viewpoint.at, self.viewpoint.facing) if t is not None}
        return tuple(t for t in self.targets if t not in extra)

    def index_of(self, target: Optional[Target]) -> Optional[int]:
        """Position of ``target`` in ``targets`` (the index of its matches in ``Facts.matches``)."""
        return None if target is None or target not in self.targets else self.targets.index(target)

    def answerable(self, min_confidence: float = MIN_PARSE_CONFIDENCE) -> bool:
        """Whether memory geometry should answer: a geometric kind, parsed with enough confidence and
        naming the objects it needs. Otherwise the question goes to an MLLM (or is abstained on)."""
        return self.primitive not in (Primitive.OPEN, Primitive.UNKNOWN) and self.confidence >= min_confidence \
            and Flag.NO_TARGET not in self.flags
