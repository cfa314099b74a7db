"""The registry of question kinds (query/kinds): one spec per kind, one vocabulary across the parser."""
import pytest

from directme.errors import InvalidInputError
from directme.query.classify import normalise_question
from directme.query.cues import cue_kind
from directme.query.kinds import REGISTRY, CueRule, KindSpec, cue_rules, kind_names, kind_of_primitive, register
from directme.query.parsed import KIND_OF_PRIMITIVE, Primitive
from directme.query.prototypes import KINDS


def test_registry_names_every_kind_and_primitive_once():
    assert set(kind_names()) == set(KINDS) and kind_names()[-1] == "open"
    for primitive, kind in KIND_OF_PRIMITIVE.items():
        if primitive != Primitive.UNKNOWN:
            assert kind_of_primitive(primitive) == kind


def test_registry_cue_rules_decide_as_the_parser_does():
    for q in ("What colour is the mug?", "How far is the door from me?", "Which is closer, the cup or the bin?",
              "How many chairs are there?", "Which room is the kettle in?", "Where is the sofa relative to the tv?",
              "Where is the sofa?", "Can I reach the lamp without moving?"):
        text = normalise_question(q)
        first = next(k for k, r in cue_rules() if r.search(text))
        assert first == cue_kind(text).kind, q


def test_register_refuses_a_second_home():
    spec = REGISTRY["count"]
    with pytest.raises(InvalidInputError, match="already registered"):
        register(spec)
    with pytest.raises(InvalidInputError, match="already answered"):
        register(KindSpec("tally", "how many", ("How many?",), solvers=((Primitive.COUNT, "count"),)))
    with pytest.raises(InvalidInputError, match="bad pattern"):
        CueRule("broken", "(", 1.0)
