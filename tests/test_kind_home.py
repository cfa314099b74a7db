"""A question kind has one home: its module in query/kinds. The parser, the answerers and the pictures take what
they need of a kind from the registry and the Intent (kind, primitive, solver), so a kind is added without
touching them: shown by a throw-away kind written to a temporary file, and by the kinds of the project that
declare their own primitives, whose names no other file of query/, answerers/ or viz/ writes by hand."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from snapshot_builders import snapshot
from test_agent_geometric import OBJECTS, TRACK

import directme.query.kinds as kinds
from directme.answerers.geometric import GeometricAnswerer
from directme.query import prototypes  # noqa: F401 (the classifier's examples, fixed before the throw-away kind)
from directme.query.context import build_context
from directme.query.intent import parse_question
from directme.query.kinds import REGISTRY, kind_modules
from directme.query.parsed import Primitive
from directme.query.vocab import Vocabulary

PACKAGE = Path(__file__).resolve().parents[1] / "directme"

TALLY = '''
from directme.query.kinds import CueRule, KindSpec, PhraseRules, Roles, register
from directme.query.options import OptionKind
from directme.query.parsed import Primitive

TALLY = Primitive.declare("tally")
SPEC = register(KindSpec(
    "tally", "how many X there are, asked for as a tally", ("Tally up the chairs.",),
    (CueRule("tally", r"^(?:please )?tally\\b", -10.0),), options=frozenset({OptionKind.COUNT}),
    roles=Roles.OBJECT, phrases=PhraseRules(rooms_scope=True), solvers=((TALLY, "count"),)))
'''


@pytest.fixture
def throwaway_kind(tmp_path, monkeypatch):
    """The ``tally`` kind, registered from a module written to ``tmp_path``; the registry restored after."""
    monkeypatch.setattr(kinds, "REGISTRY", dict(kinds.REGISTRY))
    monkeypatch.setattr(kinds, "_ORDERED", [])
    monkeypatch.setattr(Primitive, "_declared", dict(Primitive._declared))
    path = tmp_path / "tally.py"
    path.write_text(TALLY, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("tally_kind", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_kind_from_its_own_file_parses_and_is_answered(throwaway_kind):
    it = parse_question("Tally up the apples.", use_model=False)
    assert (it.kind, it.primitive, it.solver, it.how) == ("tally", throwaway_kind.TALLY, "count", "rule:tally")
    assert [t.key for t in it.targets] == ["apple"] and it.answerable()
    options = ["One.", "Two.", "Three.", "Four.", "Zero."]
    snap = snapshot(40.0, OBJECTS, TRACK)
    asked = build_context("Tally up the apples.", options, snap, Vocabulary(), None)
    tally = GeometricAnswerer().answer(asked)
    count = GeometricAnswerer().answer(build_context("How many apples are there?", options, snap, Vocabulary(), None))
    assert asked.intent.kind == "tally" and tally.letter == count.letter == "B" and tally.text == count.text
    assert not re.search(r"\btally\b", (PACKAGE / "answerers" / "geometric.py").read_text())


def test_the_throwaway_kind_leaves_the_registry_as_it_was():
    assert "tally" not in REGISTRY and "tally" not in Primitive._declared


def test_every_solver_a_kind_names_is_the_geometric_answerers():
    answerer = GeometricAnswerer()
    for spec in REGISTRY.values():
        for s in spec.solvers:
            assert (not s.solver) == (not spec.geometric), (spec.name, s)
            if s.solver:
                assert callable(answerer.solver(s.solver)), (spec.name, s)


def test_every_module_of_the_kinds_package_is_a_registered_kind():
    files = {p.stem for p in (PACKAGE / "query" / "kinds").glob("*.py") if not p.stem.startswith("_")} - {"reading"}
    assert set(kind_modules()) == files
    assert {REGISTRY[k].name for k in REGISTRY} == {_kind_in(m) for m in files}


def _kind_in(module: str) -> str:
    return re.search(r'register\(KindSpec\(\s*"(\w+)"', (PACKAGE / "query" / "kinds" / f"{module}.py").read_text())[1]


def _declared_in(path: Path) -> set[str]:
    return set(re.findall(r'Primitive\.declare\("(\w+)"\)', path.read_text()))


SHARED = _declared_in(PACKAGE / "query" / "parsed.py")  # the primitives answerers, pictures or the parser name
CODE = [p for d in ("query", "answerers", "viz") for p in (PACKAGE / d).rglob("*.py")]


def _named_in(path: Path, words: set[str]) -> bool:
    alternatives = "|".join(sorted(words))
    return re.search(rf"""["']({alternatives})["']|\b(?:Primitive|P)\.({alternatives.upper()})\b""",
                     path.read_text()) is not None


def test_parsed_declares_only_the_primitives_named_outside_the_kind_modules():
    kind_files = set((PACKAGE / "query" / "kinds").glob("*.py"))
    for name in SHARED:
        users = [p for p in CODE if p not in kind_files and p.name != "parsed.py" and
                 re.search(rf"\b(?:Primitive|P)\.{name.upper()}\b", p.read_text())]
        assert users, f"Primitive.{name.upper()} is named by no answerer, picture or parser rule: declare it in its kind"


OWN = sorted(k for k, spec in REGISTRY.items() if not {str(p) for p in spec.primitives} & SHARED or spec.refines)


def test_the_kinds_with_a_home_of_their_own_are_the_new_ones():
    assert {"object_size", "room_size", "appearance_order", "route_plan", "abs_distance", "count_here",
            "quantity_change"} <= set(OWN)


@pytest.mark.parametrize("kind", OWN)
def test_a_kind_with_its_own_primitives_is_named_only_in_its_module(kind):
    """Its name and the primitives it declares appear in no other file of query/, answerers/ or viz/ (but the
    registry's list of the order the kinds register in, query/kinds/__init__.py)."""
    path = PACKAGE / "query" / "kinds" / f"{next(m for m in kind_modules() if _kind_in(m) == kind)}.py"
    words = {kind} | _declared_in(path)
    elsewhere = [str(p.relative_to(PACKAGE)) for p in CODE if p != path and p.name != "__init__.py" and
                 _named_in(p, words)]
    assert elsewhere == [], f"{kind} is named by hand in {elsewhere}"


def test_an_intent_built_by_hand_takes_its_primitives_kind_and_solver():
    from directme.query.parsed import Intent

    assert (Intent("Which room am I in?", Primitive.CURRENT_PLACE).kind,
            Intent("Which room am I in?", Primitive.CURRENT_PLACE).solver) == ("place", "current_room")
    assert Intent("What colour is it?", Primitive.UNKNOWN).kind == "open"
    it = Intent("How far apart?", Primitive.DISTANCE, kind="distance", solver="closest_distance")
    assert it.solver == "closest_distance"  # a parse's own (a refining kind's) solver stays


def test_the_simulator_asks_each_kind_under_the_subtask_and_unit_its_module_names():
    """The simulator keeps its own generator kinds ("room_size_of" asks ``room_size``); the subtask and unit of
    each, as the kind's module names them, are the ones its questions carry."""
    from test_measurement_kinds import FMT

    from directme.sim import questions as Q

    for generated, sentences in Q.SPATIAL_TEMPLATES.items():
        for text in sentences:
            spec = REGISTRY[parse_question(text.format(**FMT), use_model=False).votes.kind]
            assert (spec.subtask, spec.unit) == (Q.SPATIAL_SUBTASK[generated], Q.SPATIAL_UNIT.get(generated)), text
