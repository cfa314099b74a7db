"""The parsed question (query/intent.py makes it): the asked primitive with its confidence, the target
objects, a reference and relation, an imagined viewpoint and the time reference; the contract between
the parser and everything that answers."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Callable, ClassVar, Optional

from ..errors import InvalidInputError
from ..types import Flag, TextEnum
from .timephrase import HERE, TimeKind, TimeRef  # noqa: F401 (HERE, TimeKind: the time reference's, for readers)

if TYPE_CHECKING:
    from .calibrate import Votes


class Primitive(str):
    """What a question asks of memory: one name of an open set. The primitives the answerers, the pictures or the
    parser name in their code are declared below; a kind module declares the others its questions yield
    (query/kinds/<kind>.py), so a new kind needs no line here. A primitive is its string value (equal, same hash,
    JSON; ``str`` and ``format`` give the name); ``Primitive(name)`` is the declared one (unknown: an error)."""

    __slots__ = ()
    _declared: ClassVar[dict[str, "Primitive"]] = {}

    def __new__(cls, value: str) -> "Primitive":
        hit = cls._declared.get(str(value))
        if hit is None:
            raise InvalidInputError(f"unknown primitive {value!r:.40}; declared: {', '.join(cls._declared)}")
        return hit

    @classmethod
    def declare(cls, name: str) -> "Primitive":
        """The primitive called ``name`` (lower_snake_case), declared where it is first named; the same name
        declared again is the same primitive (which kind answers it, query/kinds' registry keeps unique)."""
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z_]*", name):
            raise InvalidInputError(f"a primitive's name is lower_snake_case, got {name!r:.40}")
        if name not in cls._declared:
            cls._declared[name] = str.__new__(cls, name)
        return cls._declared[name]

    @classmethod
    def declared(cls) -> tuple["Primitive", ...]:
        """Every primitive declared so far, in declaration order."""
        return tuple(cls._declared.values())

    @property
    def value(self) -> str:
        return str.__str__(self)

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)

    def __repr__(self) -> str:
        return f"Primitive({str.__str__(self)!r})"

    def __reduce__(self) -> tuple:
        return Primitive, (str.__str__(self),)

    # the primitives named in code outside the kind modules (answerers, pictures, the parser's own rules)
    EGO_DIRECTION: ClassVar["Primitive"]
    FACING: ClassVar["Primitive"]
    RELATIVE_POSITION: ClassVar["Primitive"]
    DISTANCE_COMPARE: ClassVar["Primitive"]
    REACHABILITY: ClassVar["Primitive"]
    COUNT: ClassVar["Primitive"]
    CATEGORY_RECALL: ClassVar["Primitive"]
    MY_TRAJECTORY: ClassVar["Primitive"]
    OBJECT_TRAJECTORY: ClassVar["Primitive"]
    OBJECT_LOCATION: ClassVar["Primitive"]
    DISTANCE: ClassVar["Primitive"]
    OBJECTS_AROUND: ClassVar["Primitive"]
    CURRENT_PLACE: ClassVar["Primitive"]
    CHANGES: ClassVar["Primitive"]
    OPEN: ClassVar["Primitive"]
    UNKNOWN: ClassVar["Primitive"]


Primitive.EGO_DIRECTION = Primitive.declare("ego_direction")  # where is X relative to me now
Primitive.FACING = Primitive.declare("facing")  # where is X if I face Y
Primitive.RELATIVE_POSITION = Primitive.declare("relative_position")  # where is X relative to Y, in my orientation
Primitive.DISTANCE_COMPARE = Primitive.declare("distance_compare")  # which is closer / farther
Primitive.REACHABILITY = Primitive.declare("reachability")  # can I reach X
Primitive.COUNT = Primitive.declare("count")  # how many X
Primitive.CATEGORY_RECALL = Primitive.declare("category_recall")  # which of these did I see
Primitive.MY_TRAJECTORY = Primitive.declare("my_trajectory")  # where did I go
Primitive.OBJECT_TRAJECTORY = Primitive.declare("object_trajectory")  # where was / did X go
Primitive.OBJECT_LOCATION = Primitive.declare("object_location")  # which room is X in
Primitive.DISTANCE = Primitive.declare("distance")  # how far is X from me, or from a named reference
Primitive.OBJECTS_AROUND = Primitive.declare("objects_around")  # what is left of / on / under / between a reference
Primitive.CURRENT_PLACE = Primitive.declare("current_place")  # where am I, what room is this
Primitive.CHANGES = Primitive.declare("changes")  # what did I move, what is new / missing (in P), is X still there
Primitive.OPEN = Primitive.declare("open")  # understood as needing a visual language model (attributes, states, ...)
Primitive.UNKNOWN = Primitive.declare("unknown")  # not understood




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

# the kind and solver of a primitive, installed by query/kinds when its registry loads (this module cannot import
# it): an Intent built without them (by hand, in a test) takes its primitive's
KIND_AND_SOLVER: list[Callable[[Primitive], tuple[str, str]]] = []


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
    # CATEGORY_RECALL, appearance_order: "seen first / last" (None: the order itself)
    sequence_end: Optional[SequenceEnd] = None
    floor_asked: bool = False  # OBJECT_LOCATION, CURRENT_PLACE: "which floor" (memory knows rooms, not floors)
    back_at_start: bool = False  # MY_TRAJECTORY: "am I back where I started?" (a yes / no on the path)
    path_asked: bool = False  # MY_TRAJECTORY: the path walked ("which rooms did I go through"), not one room
    rooms_asked: bool = False  # MY_TRAJECTORY: asked in rooms or places (without room names memory says so)
    closest_points: bool = False  # a distance between objects' closest points, not their centres
    sequences: tuple[tuple[str, ...], ...] = ()  # per option, the items it lists in order (target keys, turns)
    # set by the parser from the kind registry (query/kinds): the question kind ("ego_direction", ..., "open") whose
    # primitive this is, and the answerer's solver the kind module names for it ("" for open questions); an Intent
    # built without them takes its primitive's (KIND_AND_SOLVER)
    kind: str = ""
    solver: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "primitive", Primitive(self.primitive))
        if not self.kind and KIND_AND_SOLVER:
            kind, solver = KIND_AND_SOLVER[0](self.primitive)
            object.__setattr__(self, "kind", kind)
            object.__setattr__(self, "solver", self.solver or solver)
        if self.change is not None:
            object.__setattr__(self, "change", ChangeAsked(self.change))
        if self.sequence_end is not None:
            object.__setattr__(self, "sequence_end", SequenceEnd(self.sequence_end))

    @property
    def understood(self) -> bool:
        return self.primitive != Primitive.UNKNOWN

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
