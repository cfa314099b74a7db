"""What a question asks within its primitive is decided by the parser (query/asked.py) and carried on the
Intent; answerers and pictures read those fields, never the question's text (pyproject.toml's
``intent-not-text`` import contract)."""
from __future__ import annotations

import pytest

from directme.query.intent import parse_question
from directme.query.parsed import ChangeAsked, Intent, Primitive, SequenceEnd


def _parse(q: str) -> Intent:
    return parse_question(q, use_model=False)


@pytest.mark.parametrize("question, change", [
    ("What did I move?", ChangeAsked.MOVED), ("What is missing from the kitchen?", ChangeAsked.REMOVED),
    ("Is the cup still there?", ChangeAsked.STILL_THERE), ("What is new in the kitchen?", ChangeAsked.APPEARED)])
def test_the_change_asked(question, change):
    intent = _parse(question)
    assert intent.primitive == Primitive.CHANGES and intent.change == change


@pytest.mark.parametrize("question, end", [("What did I see last?", SequenceEnd.LAST),
                                           ("What did I see first?", SequenceEnd.FIRST),
                                           ("Which objects did I see?", None)])
def test_the_end_of_the_order_seen(question, end):
    intent = _parse(question)
    assert intent.primitive == Primitive.CATEGORY_RECALL and intent.sequence_end == end


def test_floors_and_routes():
    assert _parse("Which floor is the sofa on?").floor_asked and _parse("What floor am I on?").floor_asked
    assert not _parse("Which room is the sofa in?").floor_asked
    back = _parse("Am I back where I started?")
    assert back.primitive == Primitive.MY_TRAJECTORY and back.back_at_start and not back.path_asked
    rooms = _parse("Which rooms did I go through?")
    assert rooms.primitive == Primitive.MY_TRAJECTORY and rooms.path_asked and rooms.rooms_asked
    assert not rooms.back_at_start


def test_a_field_is_set_only_where_its_primitive_has_the_choice():
    intent = _parse("Where is the cup I saw first?")  # "first", but no order of sightings is asked
    assert intent.primitive == Primitive.EGO_DIRECTION
    assert (intent.change, intent.sequence_end, intent.floor_asked, intent.back_at_start, intent.path_asked,
            intent.rooms_asked) == (None, None, False, False, False, False)


def test_enum_fields_take_their_names():
    intent = Intent("q", "changes", change="moved", sequence_end="last")
    assert intent.change is ChangeAsked.MOVED and intent.sequence_end is SequenceEnd.LAST
    with pytest.raises(ValueError):
        Intent("q", "changes", change="stolen")
