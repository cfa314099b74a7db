"""The registry of question kinds: one ``KindSpec`` per kind, saying everything the project knows about it
(what it means, its prototype sentences, its exact cue rules, the options it accepts, how the question's
phrases get their roles, and which geometric solver answers each of its primitives).

A kind is what must be computed to answer (each kind's module says its meaning). The kinds of this
registry are the vocabulary shared by the parser (query/), the answerers and the simulator; add one with
:func:`register` from its own module (``query/kinds/<kind>.py``, found by its file): it declares any primitive
of its own (``Primitive.declare``) and names the answerer's solver of each primitive it yields, which the parser
writes on the Intent (``Intent.kind``, ``Intent.solver``; answerers/geometric.py's table holds the solvers). A
kind whose phrases need roles of their own (the items of a list, the stops of a route) reads them in its module
(``KindSpec.read``, ``Roles.OWN``); a kind that ``refines`` another asks the same primitives with more said (a
count in the wearer's room, a distance between closest points) and its Intent fields say how.

Cue rules are tried in ascending ``priority`` across every kind (the first that matches decides; most of the
``open`` kind's rules come first, so "what colour is the cup on my left" stays open)."""
from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, NamedTuple, Optional, Union

from ...errors import InvalidInputError
from ...types import TextEnum
from ..cues import KindGuess
from ..options import OptionKind
from ..parsed import KIND_AND_SOLVER, Primitive

if TYPE_CHECKING:
    from ..parsed import Intent
    from .reading import Reading, Roled


class Roles(TextEnum):
    """How a kind gives the noun phrases of its question their roles (query/intent.py)."""

    CORE = "core"  # the first phrase and those coordinated with it are asked ("the cup or the plate")
    OBJECT = "object"  # as CORE, rooms dropped: an object is asked ("I came from the hall; where is the stove")
    RELATION = "relation"  # asked before the relation word, the landmark after it, an imagined viewpoint apart
    DISTANCE = "distance"  # the object and the reference after "to" / "from" (or the second of two named)
    COMPARED = "compared"  # compared alternatives ("the A or the B") and the reference after "to" / "from"
    PLACE = "place"  # an object whose room is asked, or none (where am I)
    ROUTE = "route"  # rooms and times of the wearer's own route
    OWN = "own"  # the kind's module reads them (``KindSpec.read``: list items, route stops, frame words dropped)


@dataclass(frozen=True)
class PhraseRules:
    """How the parser (query/intent.py) gives the phrases of a kind's question their roles beyond its ``Roles``
    (for the kinds that do not read them themselves)."""

    rooms_scope: bool = False  # a phrase naming a room scopes the question, it is no asked object
    asking_sentence: bool = False  # of several sentences, the asking one names the object ("I put my bag down; where
    # is the cup now?")
    clock_frame: bool = False  # "on / by / using / of the clock": the answer's frame, no object
    present: bool = False  # the time asked is the asking sentence's present ("where is it now")
    since_first_move: bool = False  # "originally", "at the start": before the object's first move


@dataclass(frozen=True)
class CueRule:
    """An exact pattern whose reading is not in doubt, matched on the normalised question
    (query/cues.py ``normalise_question``); ``priority``: its place in the one ordered list of rules."""

    name: str
    pattern: str
    priority: float
    unless: str = ""  # a pattern that vetoes the rule where it matches too

    def __post_init__(self) -> None:
        for p in (self.pattern, self.unless):
            try:
                re.compile(p)
            except re.error as e:
                raise InvalidInputError(f"cue rule {self.name!r}: bad pattern ({e})") from e

    def search(self, text: str) -> bool:
        return _compiled(self.pattern).search(text) is not None and not (
            self.unless and _compiled(self.unless).search(text))


_PATTERNS: dict[str, re.Pattern] = {}


def _compiled(pattern: str) -> re.Pattern:
    hit = _PATTERNS.get(pattern)
    if hit is None:
        hit = _PATTERNS[pattern] = re.compile(pattern)
    return hit


class Solves(NamedTuple):
    """A primitive a kind yields, the name of the answerer's solver for it, and whether it needs a named object
    (without one the parse is flagged no_target and the geometric answerer abstains)."""

    primitive: Primitive
    solver: str
    needs_target: bool = True


@dataclass(frozen=True)
class KindSpec:
    """Everything about one question kind, in one place."""

    name: str  # the kind's label (the intent labels' ``kind``), e.g. "ego_direction"
    meaning: str  # one line: what the question asks
    prototypes: tuple[str, ...]  # sentences written for the kind's meaning (the sentence classifier's examples)
    cues: tuple[CueRule, ...] = ()  # exact rules voting for the kind
    options: frozenset[OptionKind] = frozenset()  # the option kinds its multiple-choice questions have
    roles: Roles = Roles.CORE
    phrases: PhraseRules = PhraseRules()  # the finer rules of its phrases' roles
    # each primitive the kind yields with its solver (a (primitive, solver) pair takes the kind's ``needs_target``)
    solvers: tuple[Union[Solves, tuple[Primitive, str]], ...] = ()
    needs_target: bool = True  # without a named object the geometric answerer cannot answer it
    geometric: bool = True  # False: answered by a visual language model (the ``open`` kind)
    subtask: str = ""  # the simulator's subtask that asks it ("" when the simulator does not)
    # Roles.OWN: the Intent of its phrases' roles (None: its words are absent, the kind it refines reads them)
    read: Optional[Callable[["Reading"], Optional["Intent"]]] = None
    # once the parser gave its phrases their roles: the primitive among its own (or the kind, when the question is
    # another kind's), the objects' roles and the comparison asked (None: its first primitive, the roles as given)
    within: Optional[Callable[["Roled"], "Roled"]] = None
    refines: str = ""  # the kind whose primitives it shares (its Intent fields tell the solver what more is asked)
    unit: Optional[str] = None  # of a numeric answer ("cm", "m", "m2"; "" a count); None: not numeric

    def __post_init__(self) -> None:
        object.__setattr__(self, "solvers", tuple(
            Solves(Primitive(s[0]), *s[1:]) if len(s) == 3 else Solves(Primitive(s[0]), s[1], self.needs_target)
            for s in self.solvers))
        if not re.fullmatch(r"[a-z][a-z_]*", self.name):
            raise InvalidInputError(f"kind name must be lower_snake_case, got {self.name!r:.40}")
        if self.geometric and not self.solvers:
            raise InvalidInputError(f"kind {self.name!r}: a geometric kind names the solver of each primitive")
        if len(set(self.prototypes)) < len(self.prototypes):
            raise InvalidInputError(f"kind {self.name!r}: repeated prototype sentence")
        if (self.roles == Roles.OWN) != (self.read is not None):
            raise InvalidInputError(f"kind {self.name!r}: a kind reads its own roles (Roles.OWN) exactly when it has read")

    @property
    def primitives(self) -> tuple[Primitive, ...]:
        return tuple(s.primitive for s in self.solvers)

    def solves(self, primitive: Primitive) -> Optional[Solves]:
        """How the kind answers ``primitive`` (None: not one of its primitives)."""
        return next((s for s in self.solvers if s.primitive == primitive), None)


REGISTRY: dict[str, KindSpec] = {}


def register(spec: KindSpec) -> KindSpec:
    """Add a kind (its name must be new; its primitives must be no other kind's but the one it refines)."""
    if spec.name in REGISTRY:
        raise InvalidInputError(f"kind {spec.name!r} is already registered")
    if spec.refines and spec.refines not in REGISTRY:
        raise InvalidInputError(f"kind {spec.name!r} refines {spec.refines!r}, which is not registered (yet)")
    taken = {p: k.name for k in REGISTRY.values() for p in k.primitives if k.name != spec.refines and not k.refines}
    clash = [f"{p} ({taken[p]})" for p in spec.primitives if p in taken]
    if clash:
        raise InvalidInputError(f"kind {spec.name!r}: primitives already answered by other kinds: {', '.join(clash)}")
    REGISTRY[spec.name] = spec
    _ORDERED.clear()
    return spec


def kind_spec(name: str) -> KindSpec:
    """The registered kind called ``name``."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise InvalidInputError(f"unknown question kind {name!r}; known: {', '.join(REGISTRY)}") from None


def kind_names() -> tuple[str, ...]:
    """Every registered kind, in registration order (``open`` last)."""
    return tuple(sorted(REGISTRY, key=lambda k: (k == "open", list(REGISTRY).index(k))))


def classifier_prototypes() -> dict[str, tuple[str, ...]]:
    """The sentence classifier's examples per kind it tells apart: each kind's prototypes with those of the kinds
    refining it (their meaning is the refined kind's; only their words, which their cue rules read, differ)."""
    out = {k: REGISTRY[k].prototypes for k in kind_names() if not REGISTRY[k].refines}
    for k in kind_names():
        if REGISTRY[k].refines:
            out[REGISTRY[k].refines] = out[REGISTRY[k].refines] + REGISTRY[k].prototypes
    return out


def kind_of_primitive(primitive: Primitive) -> Optional[str]:
    """The kind whose question a primitive answers (None: UNKNOWN); a refining kind's primitives are its
    refined kind's."""
    for spec in REGISTRY.values():
        if primitive in spec.primitives and not spec.refines:
            return spec.name
    return None


def solved(primitive: Primitive, reader: str = "") -> tuple[str, Optional[Solves]]:
    """(the kind, how it is solved) of a parse whose primitive is ``primitive``: the kind is the one whose question
    the primitive answers ("open" for UNKNOWN), the solver the one ``reader`` (the kind that read the question's
    roles, a refining kind's own) names where it yields the primitive, else that kind's."""
    kind = kind_of_primitive(primitive)
    if kind is None:
        return "open", None
    own = REGISTRY[reader].solves(primitive) if reader in REGISTRY else None
    return kind, own or REGISTRY[kind].solves(primitive)


def with_kind(intent: "Intent", reader: str = "") -> "Intent":
    """``intent`` with its kind and the solver named for its primitive (``solved``): what the answerers read."""
    kind, solves = solved(intent.primitive, reader)
    return replace(intent, kind=kind, solver=solves.solver if solves else "")


def _kind_and_solver(primitive: Primitive) -> tuple[str, str]:
    kind, solves = solved(primitive)
    return kind, solves.solver if solves else ""


KIND_AND_SOLVER[:] = [_kind_and_solver]


def needing_target() -> frozenset[Primitive]:
    """The primitives that need a named object (``Solves.needs_target``) in any kind."""
    return frozenset(s.primitive for k in REGISTRY.values() for s in k.solvers if s.needs_target)


def cue_rules() -> tuple[tuple[str, CueRule], ...]:
    """(kind, rule) of every registered cue rule, in the order they are tried."""
    if not _ORDERED:
        _ORDERED.extend(sorted(((k.name, r) for k in REGISTRY.values() for r in k.cues), key=lambda kr: kr[1].priority))
    return tuple(_ORDERED)


_ORDERED: list[tuple[str, CueRule]] = []  # cue_rules' cache (emptied by register)


def cue_kind(text: str) -> Optional[KindGuess]:
    """The kind the first matching cue rule gives ``text`` (normalised with ``normalise_question``), or None."""
    for kind, rule in cue_rules():
        if rule.search(text):
            return KindGuess(kind, 1.0, f"rule:{rule.name}")
    return None


# the order the classifier and the reports list the project's kinds in; any other module of this package (but
# ``reading`` and the private ones) is a kind module too, registered after these in the order of its name
KIND_MODULES = ("ego_direction", "distance", "distance_compare", "reachability", "relative_position",
                "object_trajectory", "my_trajectory", "quantity_change", "count", "category_recall", "place",
                "object_size", "room_size", "appearance_order", "route_plan", "abs_distance", "count_here",
                "open_question")
_NOT_KINDS = frozenset({"reading"})


def kind_modules() -> tuple[str, ...]:
    """The kind modules of this package, in the order they register."""
    found = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_") and
                   m.name not in _NOT_KINDS and m.name not in KIND_MODULES)
    return KIND_MODULES + tuple(found)


for _module in kind_modules():
    importlib.import_module(f"{__name__}.{_module}")
