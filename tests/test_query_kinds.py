"""The registry of question kinds (query/kinds): one spec per kind, one vocabulary across the parser."""
import pytest

from directme.errors import InvalidInputError
from directme.query.classify import normalise_question
from directme.query.kinds import (REGISTRY, CueRule, KindSpec, Roles, cue_kind, cue_rules, kind_names, kind_of_primitive,
                                  register)
from directme.query.parsed import Primitive
from directme.query.prototypes import KINDS, PROTOTYPES


def test_registry_names_every_kind_and_primitive_once():
    assert set(KINDS) == {k for k in kind_names() if not REGISTRY[k].refines} and kind_names()[-1] == "open"
    owned = [p for k in REGISTRY.values() if not k.refines for p in k.primitives]
    assert len(owned) == len(set(owned)) and set(owned) == set(Primitive.declared()) - {Primitive.UNKNOWN}
    for kind in REGISTRY.values():
        assert all(kind_of_primitive(p) == (kind.refines or kind.name) for p in kind.primitives)


@pytest.mark.parametrize("question, kind", [
    ("What colour is the mug?", "open"), ("How far is the door from me?", "distance"),
    ("Which is closer, the cup or the bin?", "distance_compare"), ("How many chairs are there?", "count"),
    ("Which room is the kettle in?", "place"), ("Where is the sofa relative to the tv?", "relative_position"),
    ("Where is the sofa?", "ego_direction"), ("Can I reach the lamp without moving?", "reachability"),
    ("What time is it?", "open"),
    # vetoes: a side of me, not a comparison; a clock hour, not the time of day
    ("What side of my body is the cup closest to?", "ego_direction"),
    ("If I imagine a clock with 12 straight ahead, what time is the cup at?", None),  # meaning decides
])
def test_registry_cue_rules_decide_in_one_order(question, kind):
    guess = cue_kind(normalise_question(question))
    if kind is None:
        assert guess is None, guess
        return
    assert guess is not None and guess.kind == kind, guess
    rule = next(r for k, r in cue_rules() if f"rule:{r.name}" == guess.how)
    assert rule in REGISTRY[kind].cues


def test_the_classifier_and_the_roles_read_the_registry():
    from directme.query.classify import GEOMETRIC_KINDS, KindClassifier
    from directme.query.embed import CachedEmbedder

    clf = KindClassifier(CachedEmbedder("none"))
    assert clf.kinds == KINDS and clf.prototypes == {k: PROTOTYPES[k] for k in KINDS}
    assert set(GEOMETRIC_KINDS) == set(kind_names()) - {"open"}
    assert set(REGISTRY["count_here"].prototypes) <= set(PROTOTYPES["count"])  # a refining kind's meaning is its kind's
    object_kinds = {k for k, s in REGISTRY.items() if s.roles == Roles.OBJECT}
    assert object_kinds == {"ego_direction", "reachability", "count", "quantity_change", "object_trajectory"}


def test_register_refuses_a_second_home():
    spec = REGISTRY["count"]
    with pytest.raises(InvalidInputError, match="already registered"):
        register(spec)
    with pytest.raises(InvalidInputError, match="already answered"):
        register(KindSpec("tally", "how many", ("How many?",), solvers=((Primitive.COUNT, "count"),)))
    with pytest.raises(InvalidInputError, match="bad pattern"):
        CueRule("broken", "(", 1.0)


def test_options_fit_the_kinds_that_accept_them():
    from directme.query.intent import default_vocabulary
    from directme.query.optionkinds import _option_kinds

    v = default_vocabulary()
    assert _option_kinds(["1", "two"], v) == {"count", "quantity_change", "count_here"}
    assert _option_kinds(["On your left.", "At 3 o'clock."], v) == {"ego_direction", "relative_position"}
    assert _option_kinds(["kitchen -> hall", "hall then bedroom"], v) == {"my_trajectory"}
    assert _option_kinds(["The kitchen.", "In the office."], v) == {"my_trajectory", "object_trajectory", "place"}
    assert _option_kinds(["The sofa.", "The lamp."], v) == frozenset()
